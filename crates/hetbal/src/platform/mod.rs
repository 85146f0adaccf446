//! Platforms: processors, network links and routes (model.md section 3,
//! formats.md "Platforms").
//!
//! A [`Platform`] holds `p` processors, each with its time per unit of work `w`, and
//! the time per unit of data `c(i, j)` from processor `i` to processor `j`. That cost
//! comes either straight from a matrix ([`Platform::from_matrix`]) or from a network
//! graph ([`Platform::from_graph`]): [`Link`]s with a bandwidth, a latency and a
//! [`SharingPolicy`], and [`Route`]s (ordered link lists) between processors; the
//! cost of a route is set by its bottleneck link: `c = unit_bytes / min bandwidth`.
//! Latency is a per-message term, kept on the links ([`Platform::route_latency`]) but
//! not part of the per-unit cost.
//!
//! Readers:
//! * [`PlatformSpec`]: the JSON document of formats.md (serde), turned into a
//!   platform by [`Platform::from_spec`];
//! * `simgrid` (cargo feature `simgrid`): SimGrid platform XML, version 4.1.
//!
//! [`max_min_rates`] shares link bandwidth among flows that run at once. A graph
//! platform may also carry its [`Network`] (processors and routers joined by the
//! links, [`Platform::with_network`]): then routes other than the fixed ones can be
//! chosen ([`Network::widest_path`]).
//!
//! ```
//! use hetbal::platform::{Platform, Processor};
//! //  A --(0.001)--> B, B --(0.0015)--> A
//! let p = Platform::from_matrix(
//!     vec![Processor::new("A", 0.0206), Processor::new("B", 0.0291)],
//!     vec![vec![0.0, 0.001], vec![0.0015, 0.0]],
//! ).unwrap();
//! assert_eq!(p.cost(0, 1), 0.001);
//! assert_eq!(p.index_of("B"), Some(1));
//! ```

pub mod generate;
mod network;
mod sharing;
#[cfg(feature = "simgrid")]
pub mod simgrid;
mod spec;
#[cfg(feature = "simgrid")]
pub mod units;

pub use network::{LinkEnds, Network, WidestPath};
pub use sharing::{max_min_rates, max_min_rates_on, SharingError};
pub use spec::{LinkSpec, PlatformSpec, ProcessorSpec, RouteSpec};

use std::collections::HashMap;
use std::fmt;

use serde::{Deserialize, Serialize};

/// One processor: a name and its time per unit of work.
#[derive(Clone, Debug, PartialEq)]
pub struct Processor {
    /// Unique name.
    pub name: String,
    /// Time to compute one unit of work, in seconds (finite, > 0).
    pub w: f64,
}

impl Processor {
    /// A processor named `name` computing a unit of work in `w` seconds.
    ///
    /// ```
    /// let p = hetbal::platform::Processor::new("A", 0.5);
    /// assert_eq!((p.name.as_str(), p.w), ("A", 0.5));
    /// ```
    pub fn new(name: impl Into<String>, w: f64) -> Self {
        Processor {
            name: name.into(),
            w,
        }
    }
}

/// How the flows crossing a link share its bandwidth (SimGrid's `sharing_policy`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum SharingPolicy {
    /// The flows share the bandwidth fairly (SimGrid's default).
    Shared,
    /// Every flow gets the whole bandwidth (backbones, loopbacks).
    Fatpipe,
    /// Declared as SPLITDUPLEX: two independent links, one per direction. A platform
    /// holds the two halves (`NAME_UP`, `NAME_DOWN`), each with this policy and
    /// shared fairly among the flows of its direction.
    Splitduplex,
}

impl fmt::Display for SharingPolicy {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            SharingPolicy::Shared => "SHARED",
            SharingPolicy::Fatpipe => "FATPIPE",
            SharingPolicy::Splitduplex => "SPLITDUPLEX",
        })
    }
}

/// One physical link (or one direction of a split-duplex link).
#[derive(Clone, Debug, PartialEq)]
pub struct Link {
    /// Unique name.
    pub name: String,
    /// Bandwidth in bytes per second (finite, > 0).
    pub bandwidth: f64,
    /// Latency in seconds (finite, >= 0).
    pub latency: f64,
    /// How flows share it.
    pub sharing: SharingPolicy,
}

/// A route from one processor to another: the links crossed, in order.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Route {
    /// Index of the source processor.
    pub src: usize,
    /// Index of the destination processor.
    pub dst: usize,
    /// Indices of the links, from `src` to `dst`.
    pub links: Vec<usize>,
}

/// Why a platform is invalid. Each message names the processor, link or route and
/// the rule broken.
#[derive(Clone, Debug, PartialEq)]
pub enum PlatformError {
    /// The platform has no processor.
    NoProcessors,
    /// A processor's name is empty.
    EmptyName {
        /// Index of the processor.
        index: usize,
    },
    /// Two processors, or two links, carry the same name.
    DuplicateName {
        /// `processor` or `link`.
        what: &'static str,
        /// The name.
        name: String,
    },
    /// A processor's time per unit of work is not finite and > 0.
    InvalidWork {
        /// The processor.
        name: String,
        /// The value given.
        value: f64,
    },
    /// The cost matrix is not `p` rows of `p` numbers.
    MatrixShape {
        /// The row that has the wrong length, or `None` when the number of rows is wrong.
        row: Option<usize>,
        /// The length found.
        found: usize,
        /// The length expected (`p`).
        expected: usize,
    },
    /// An off-diagonal cost is not finite and >= 0.
    InvalidCost {
        /// Source processor.
        from: String,
        /// Destination processor.
        to: String,
        /// The value given.
        value: f64,
    },
    /// The document gives both a cost matrix and a graph, or neither.
    NetworkForm {
        /// What is wrong.
        reason: &'static str,
    },
    /// A link field breaks a rule.
    InvalidLink {
        /// The link.
        name: String,
        /// `bandwidth`, `latency` or `sharing_policy`.
        field: &'static str,
        /// The value given, as text.
        value: String,
        /// The rule.
        rule: &'static str,
    },
    /// A route names a processor that does not exist.
    UnknownProcessor {
        /// Index of the route in the document.
        route: usize,
        /// `src` or `dst`.
        field: &'static str,
        /// The name given.
        name: String,
    },
    /// A route names a link that does not exist.
    UnknownLink {
        /// Index of the route in the document (or of the route between two indices).
        route: usize,
        /// The link name or index given.
        name: String,
    },
    /// A route goes from a processor to itself.
    SelfRoute {
        /// Index of the route.
        route: usize,
        /// The processor.
        name: String,
    },
    /// Two routes join the same ordered pair of processors.
    DuplicateRoute {
        /// Source processor.
        src: String,
        /// Destination processor.
        dst: String,
    },
    /// `unit_bytes` is not finite and > 0.
    InvalidUnitBytes {
        /// The value given.
        value: f64,
    },
    /// The network graph does not fit the platform.
    InvalidNetwork {
        /// What is wrong, naming the link, router or route.
        reason: String,
    },
}

impl fmt::Display for PlatformError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        use PlatformError::*;
        match self {
            NoProcessors => f.write_str("the platform has no processor"),
            EmptyName { index } => write!(f, "processor {index}: the name is empty"),
            DuplicateName { what, name } => write!(f, "two {what}s are named {name:?}"),
            InvalidWork { name, value } => write!(
                f,
                "processor {name:?}: time per unit of work w = {value} must be finite and > 0"
            ),
            MatrixShape {
                row: None,
                found,
                expected,
            } => write!(
                f,
                "cost matrix `c`: {found} rows for {expected} processors (one row per processor)"
            ),
            MatrixShape {
                row: Some(r),
                found,
                expected,
            } => write!(
                f,
                "cost matrix `c`: row {r} has {found} numbers, expected {expected} (one per processor)"
            ),
            InvalidCost { from, to, value } => write!(
                f,
                "cost from {from:?} to {to:?} is {value}: it must be finite and >= 0"
            ),
            NetworkForm { reason } => f.write_str(reason),
            InvalidLink {
                name,
                field,
                value,
                rule,
            } => write!(f, "link {name:?}: {field} = {value} {rule}"),
            UnknownProcessor { route, field, name } => {
                write!(f, "route {route}: {field} {name:?} is not a processor")
            }
            UnknownLink { route, name } => {
                write!(f, "route {route}: link {name:?} is not declared")
            }
            SelfRoute { route, name } => {
                write!(f, "route {route}: goes from {name:?} to itself")
            }
            DuplicateRoute { src, dst } => {
                write!(f, "two routes go from {src:?} to {dst:?}")
            }
            InvalidUnitBytes { value } => {
                write!(f, "unit_bytes = {value} must be finite and > 0")
            }
            InvalidNetwork { reason } => write!(f, "network graph: {reason}"),
        }
    }
}

impl std::error::Error for PlatformError {}

/// A validated platform: processors, the time per unit of data between every
/// ordered pair, and (for graph platforms) the links and routes behind it.
///
/// Build it with [`Platform::from_matrix`], [`Platform::from_graph`],
/// [`Platform::from_spec`] or the SimGrid reader. Two platforms are equal when they
/// have the same processors, links, unit size, costs and routes.
#[derive(Clone, Debug)]
pub struct Platform {
    processors: Vec<Processor>,
    /// `p * p` costs, row-major; `f64::INFINITY` where no route exists; 0 on the
    /// diagonal.
    costs: Vec<f64>,
    links: Vec<Link>,
    /// For graph platforms, `p * p` spans into `route_links` (start, end), and whether
    /// the pair has a route.
    route_spans: Vec<(u32, u32)>,
    has_route: Vec<bool>,
    route_links: Vec<u32>,
    unit_bytes: f64,
    /// The network graph, when known.
    network: Option<Network>,
}

impl PartialEq for Platform {
    fn eq(&self, other: &Self) -> bool {
        let n = self.len();
        self.processors == other.processors
            && self.links == other.links
            && self.unit_bytes == other.unit_bytes
            && self.network == other.network
            && self.costs == other.costs
            && (0..n).all(|i| (0..n).all(|j| self.route(i, j) == other.route(i, j)))
    }
}

fn check_processors(processors: &[Processor]) -> Result<(), PlatformError> {
    if processors.is_empty() {
        return Err(PlatformError::NoProcessors);
    }
    let mut seen: HashMap<&str, usize> = HashMap::with_capacity(processors.len());
    for (i, p) in processors.iter().enumerate() {
        if p.name.is_empty() {
            return Err(PlatformError::EmptyName { index: i });
        }
        if !(p.w.is_finite() && p.w > 0.0) {
            return Err(PlatformError::InvalidWork {
                name: p.name.clone(),
                value: p.w,
            });
        }
        if seen.insert(p.name.as_str(), i).is_some() {
            return Err(PlatformError::DuplicateName {
                what: "processor",
                name: p.name.clone(),
            });
        }
    }
    Ok(())
}

impl Platform {
    /// A complete network given by its cost matrix: `c[i][j]` = time per unit of data
    /// from processor `i` to processor `j` (the diagonal is ignored).
    ///
    /// # Errors
    /// [`PlatformError::NoProcessors`], [`PlatformError::EmptyName`],
    /// [`PlatformError::DuplicateName`], [`PlatformError::InvalidWork`],
    /// [`PlatformError::MatrixShape`], [`PlatformError::InvalidCost`] (negative,
    /// infinite or NaN off-diagonal entry).
    ///
    /// Complexity: O(p²).
    ///
    /// ```
    /// use hetbal::platform::{Platform, PlatformError, Processor};
    /// let procs = vec![Processor::new("A", 1.0), Processor::new("B", 2.0)];
    /// let ok = Platform::from_matrix(procs.clone(), vec![vec![0.0, 3.0], vec![4.0, 0.0]]).unwrap();
    /// assert_eq!((ok.len(), ok.cost(1, 0)), (2, 4.0));
    /// let bad = Platform::from_matrix(procs, vec![vec![0.0, -1.0], vec![4.0, 0.0]]);
    /// assert!(matches!(bad, Err(PlatformError::InvalidCost { .. })));
    /// ```
    pub fn from_matrix(
        processors: Vec<Processor>,
        c: Vec<Vec<f64>>,
    ) -> Result<Self, PlatformError> {
        check_processors(&processors)?;
        let p = processors.len();
        if c.len() != p {
            return Err(PlatformError::MatrixShape {
                row: None,
                found: c.len(),
                expected: p,
            });
        }
        let mut costs = vec![0.0; p * p];
        for (i, row) in c.iter().enumerate() {
            if row.len() != p {
                return Err(PlatformError::MatrixShape {
                    row: Some(i),
                    found: row.len(),
                    expected: p,
                });
            }
            for (j, &v) in row.iter().enumerate() {
                if i == j {
                    continue;
                }
                if !(v.is_finite() && v >= 0.0) {
                    return Err(PlatformError::InvalidCost {
                        from: processors[i].name.clone(),
                        to: processors[j].name.clone(),
                        value: v,
                    });
                }
                costs[i * p + j] = v;
            }
        }
        Ok(Platform {
            processors,
            costs,
            links: Vec::new(),
            route_spans: Vec::new(),
            has_route: Vec::new(),
            route_links: Vec::new(),
            unit_bytes: 1.0,
            network: None,
        })
    }

    /// A network graph: links and routes between processors. The time per unit of
    /// data of a route is `unit_bytes / min bandwidth` over its links (0 for a route
    /// without links); pairs without a route cost `f64::INFINITY` (no ring may use
    /// them).
    ///
    /// # Arguments
    /// * `processors`: the processors, indexed from 0 in this order;
    /// * `links`: the links, indexed from 0 in this order;
    /// * `routes`: one route per ordered pair at most (not symmetrised here);
    /// * `unit_bytes`: size in bytes of one unit of data.
    ///
    /// # Errors
    /// The processor errors of [`Platform::from_matrix`],
    /// [`PlatformError::InvalidLink`], [`PlatformError::DuplicateName`] (links),
    /// [`PlatformError::UnknownProcessor`] (index out of range),
    /// [`PlatformError::UnknownLink`], [`PlatformError::SelfRoute`],
    /// [`PlatformError::DuplicateRoute`], [`PlatformError::InvalidUnitBytes`].
    ///
    /// Complexity: O(p² + total route length).
    ///
    /// ```
    /// use hetbal::platform::{Link, Platform, Processor, Route, SharingPolicy};
    /// //  A --l1 (1e6 B/s)-- R --l2 (5e5 B/s)-- B
    /// let link = |n: &str, b: f64| Link { name: n.into(), bandwidth: b, latency: 1e-3,
    ///                                     sharing: SharingPolicy::Shared };
    /// let p = Platform::from_graph(
    ///     vec![Processor::new("A", 1.0), Processor::new("B", 1.0)],
    ///     vec![link("l1", 1e6), link("l2", 5e5)],
    ///     vec![Route { src: 0, dst: 1, links: vec![0, 1] }],
    ///     1000.0,
    /// ).unwrap();
    /// assert_eq!(p.cost(0, 1), 1000.0 / 5e5); // the bottleneck sets the cost
    /// assert_eq!(p.cost(1, 0), f64::INFINITY); // no route back
    /// assert_eq!(p.route_latency(0, 1), Some(2e-3));
    /// ```
    pub fn from_graph(
        processors: Vec<Processor>,
        links: Vec<Link>,
        routes: Vec<Route>,
        unit_bytes: f64,
    ) -> Result<Self, PlatformError> {
        check_processors(&processors)?;
        if !(unit_bytes.is_finite() && unit_bytes > 0.0) {
            return Err(PlatformError::InvalidUnitBytes { value: unit_bytes });
        }
        let mut names: HashMap<&str, ()> = HashMap::with_capacity(links.len());
        for l in &links {
            if !(l.bandwidth.is_finite() && l.bandwidth > 0.0) {
                return Err(PlatformError::InvalidLink {
                    name: l.name.clone(),
                    field: "bandwidth",
                    value: l.bandwidth.to_string(),
                    rule: "must be finite and > 0 (bytes per second)",
                });
            }
            if !(l.latency.is_finite() && l.latency >= 0.0) {
                return Err(PlatformError::InvalidLink {
                    name: l.name.clone(),
                    field: "latency",
                    value: l.latency.to_string(),
                    rule: "must be finite and >= 0 (seconds)",
                });
            }
            if names.insert(l.name.as_str(), ()).is_some() {
                return Err(PlatformError::DuplicateName {
                    what: "link",
                    name: l.name.clone(),
                });
            }
        }
        let p = processors.len();
        let mut costs = vec![f64::INFINITY; p * p];
        for i in 0..p {
            costs[i * p + i] = 0.0;
        }
        let mut route_spans = vec![(0u32, 0u32); p * p];
        let mut has_route = vec![false; p * p];
        let mut route_links: Vec<u32> = Vec::new();
        for (k, r) in routes.iter().enumerate() {
            for (field, idx) in [("src", r.src), ("dst", r.dst)] {
                if idx >= p {
                    return Err(PlatformError::UnknownProcessor {
                        route: k,
                        field,
                        name: format!("#{idx}"),
                    });
                }
            }
            if r.src == r.dst {
                return Err(PlatformError::SelfRoute {
                    route: k,
                    name: processors[r.src].name.clone(),
                });
            }
            let pair = r.src * p + r.dst;
            if has_route[pair] {
                return Err(PlatformError::DuplicateRoute {
                    src: processors[r.src].name.clone(),
                    dst: processors[r.dst].name.clone(),
                });
            }
            let start = route_links.len();
            let mut bottleneck = f64::INFINITY;
            for &l in &r.links {
                let link = links.get(l).ok_or_else(|| PlatformError::UnknownLink {
                    route: k,
                    name: format!("#{l}"),
                })?;
                bottleneck = bottleneck.min(link.bandwidth);
                route_links.push(l as u32);
            }
            has_route[pair] = true;
            route_spans[pair] = (start as u32, route_links.len() as u32);
            costs[pair] = if r.links.is_empty() {
                0.0
            } else {
                unit_bytes / bottleneck
            };
        }
        Ok(Platform {
            processors,
            costs,
            links,
            route_spans,
            has_route,
            route_links,
            unit_bytes,
            network: None,
        })
    }

    /// Number of processors `p`.
    ///
    /// ```
    /// # use hetbal::platform::{Platform, Processor};
    /// let p = Platform::from_matrix(vec![Processor::new("A", 1.0)], vec![vec![0.0]]).unwrap();
    /// assert_eq!(p.len(), 1);
    /// ```
    pub fn len(&self) -> usize {
        self.processors.len()
    }

    /// Always false: a platform has at least one processor.
    ///
    /// ```
    /// # use hetbal::platform::{Platform, Processor};
    /// let p = Platform::from_matrix(vec![Processor::new("A", 1.0)], vec![vec![0.0]]).unwrap();
    /// assert!(!p.is_empty());
    /// ```
    pub fn is_empty(&self) -> bool {
        self.processors.is_empty()
    }

    /// The processors, in index order.
    ///
    /// ```
    /// # use hetbal::platform::{Platform, Processor};
    /// let p = Platform::from_matrix(vec![Processor::new("A", 2.0)], vec![vec![0.0]]).unwrap();
    /// assert_eq!(p.processors()[0].w, 2.0);
    /// ```
    pub fn processors(&self) -> &[Processor] {
        &self.processors
    }

    /// Time per unit of work of processor `i`. Panics if `i >= len()`.
    ///
    /// ```
    /// # use hetbal::platform::{Platform, Processor};
    /// let p = Platform::from_matrix(vec![Processor::new("A", 2.0)], vec![vec![0.0]]).unwrap();
    /// assert_eq!(p.w(0), 2.0);
    /// ```
    pub fn w(&self, i: usize) -> f64 {
        self.processors[i].w
    }

    /// Name of processor `i`. Panics if `i >= len()`.
    ///
    /// ```
    /// # use hetbal::platform::{Platform, Processor};
    /// let p = Platform::from_matrix(vec![Processor::new("A", 2.0)], vec![vec![0.0]]).unwrap();
    /// assert_eq!(p.name(0), "A");
    /// ```
    pub fn name(&self, i: usize) -> &str {
        &self.processors[i].name
    }

    /// Index of the processor named `name`, if any. O(p).
    ///
    /// ```
    /// # use hetbal::platform::{Platform, Processor};
    /// let p = Platform::from_matrix(vec![Processor::new("A", 2.0)], vec![vec![0.0]]).unwrap();
    /// assert_eq!((p.index_of("A"), p.index_of("Z")), (Some(0), None));
    /// ```
    pub fn index_of(&self, name: &str) -> Option<usize> {
        self.processors.iter().position(|p| p.name == name)
    }

    /// Time per unit of data from `i` to `j` (0 when `i == j`, `f64::INFINITY` when
    /// there is no route). Panics if an index is out of range. O(1).
    ///
    /// ```
    /// # use hetbal::platform::{Platform, Processor};
    /// let p = Platform::from_matrix(
    ///     vec![Processor::new("A", 1.0), Processor::new("B", 1.0)],
    ///     vec![vec![9.0, 3.0], vec![4.0, 0.0]]).unwrap();
    /// assert_eq!((p.cost(0, 0), p.cost(0, 1)), (0.0, 3.0));
    /// ```
    pub fn cost(&self, i: usize, j: usize) -> f64 {
        let p = self.len();
        assert!(i < p && j < p, "processor index out of range");
        self.costs[i * p + j]
    }

    /// The links (empty for a matrix platform).
    ///
    /// ```
    /// # use hetbal::platform::{Platform, Processor};
    /// let p = Platform::from_matrix(vec![Processor::new("A", 2.0)], vec![vec![0.0]]).unwrap();
    /// assert!(p.links().is_empty());
    /// ```
    pub fn links(&self) -> &[Link] {
        &self.links
    }

    /// Size of one unit of data in bytes (1 for matrix platforms).
    ///
    /// ```
    /// # use hetbal::platform::{Platform, Processor};
    /// let p = Platform::from_matrix(vec![Processor::new("A", 2.0)], vec![vec![0.0]]).unwrap();
    /// assert_eq!(p.unit_bytes(), 1.0);
    /// ```
    pub fn unit_bytes(&self) -> f64 {
        self.unit_bytes
    }

    /// The same graph platform with another size of a unit of data (bytes): its
    /// route costs are computed again. A matrix platform (no routes) is returned
    /// unchanged.
    ///
    /// # Errors
    /// [`PlatformError::InvalidUnitBytes`] when `unit_bytes` is not finite and > 0.
    ///
    /// # Complexity
    /// O(p^2 + total route length).
    ///
    /// ```
    /// use hetbal::platform::{Link, Platform, Processor, Route, SharingPolicy};
    /// let l = Link { name: "l".into(), bandwidth: 1e6, latency: 0.0, sharing: SharingPolicy::Shared };
    /// let p = Platform::from_graph(
    ///     vec![Processor::new("A", 1.0), Processor::new("B", 1.0)], vec![l],
    ///     vec![Route { src: 0, dst: 1, links: vec![0] }], 1.0).unwrap();
    /// let mb = p.with_unit_bytes(1e6).unwrap();
    /// assert_eq!(mb.cost(0, 1), 1.0); // one megabyte at 1 MB/s
    /// ```
    pub fn with_unit_bytes(&self, unit_bytes: f64) -> Result<Platform, PlatformError> {
        let n = self.len();
        let mut routes = Vec::new();
        for a in 0..n {
            for b in 0..n {
                if let Some(r) = self.route(a, b) {
                    routes.push(Route {
                        src: a,
                        dst: b,
                        links: r.iter().map(|&l| l as usize).collect(),
                    });
                }
            }
        }
        if routes.is_empty() && self.links().is_empty() {
            return Ok(self.clone());
        }
        let mut p = Platform::from_graph(
            self.processors().to_vec(),
            self.links().to_vec(),
            routes,
            unit_bytes,
        )?;
        p.network = self.network.clone();
        Ok(p)
    }

    /// The same graph platform with its network graph: the routers (nodes `p`,
    /// `p + 1`, ... after the processors) and where each link sits
    /// ([`LinkEnds`]). The fixed routes stay the platform's routes; the network
    /// lets the mapping heuristics choose others ([`Network::widest_path`]).
    ///
    /// # Arguments
    /// * `routers`: names of the routers (non-empty, unique, not processor names);
    /// * `ends`: one entry per link, in link order.
    ///
    /// # Errors
    /// [`PlatformError::InvalidNetwork`] when `ends` does not have one entry per
    /// link, an end is not a node, a link joins a node to itself, a router name is
    /// empty or taken, or a fixed route is not a walk of the network from its
    /// source to its destination (following one-way links their way, through
    /// routers only: processors do not forward).
    ///
    /// # Complexity
    /// O(p + links + total route length).
    ///
    /// # Example
    /// ```
    /// use hetbal::platform::{Link, LinkEnds, Platform, Processor, Route, SharingPolicy};
    /// //  A --a-- R --b-- B
    /// let link = |n: &str| Link { name: n.into(), bandwidth: 1e6, latency: 0.0,
    ///                             sharing: SharingPolicy::Shared };
    /// let p = Platform::from_graph(
    ///     vec![Processor::new("A", 1.0), Processor::new("B", 1.0)],
    ///     vec![link("a"), link("b")],
    ///     vec![Route { src: 0, dst: 1, links: vec![0, 1] }, Route { src: 1, dst: 0, links: vec![1, 0] }],
    ///     1.0).unwrap();
    /// let ends = vec![LinkEnds::both_ways(0, 2), LinkEnds::both_ways(2, 1)];
    /// let with = p.clone().with_network(vec!["R".into()], ends.clone()).unwrap();
    /// assert_eq!(with.network().unwrap().routers(), ["R".to_string()]);
    /// // A route that the network cannot carry is refused.
    /// let wrong = vec![LinkEnds::both_ways(0, 2), LinkEnds::both_ways(0, 1)];
    /// assert!(p.with_network(vec!["R".into()], wrong).is_err());
    /// ```
    pub fn with_network(
        mut self,
        routers: Vec<String>,
        ends: Vec<LinkEnds>,
    ) -> Result<Platform, PlatformError> {
        let bad = |reason: String| PlatformError::InvalidNetwork { reason };
        let p = self.len();
        if ends.len() != self.links.len() {
            return Err(bad(format!(
                "{} link ends for {} links: give one per link",
                ends.len(),
                self.links.len()
            )));
        }
        let mut names: HashMap<&str, ()> = self
            .processors
            .iter()
            .map(|x| (x.name.as_str(), ()))
            .collect();
        for r in &routers {
            if r.is_empty() {
                return Err(bad("a router has an empty name".to_string()));
            }
            if names.insert(r.as_str(), ()).is_some() {
                return Err(bad(format!(
                    "router {r:?}: the name is already a processor's or another router's"
                )));
            }
        }
        let n = p + routers.len();
        for (l, e) in ends.iter().enumerate() {
            let name = &self.links[l].name;
            for end in [e.from, e.to] {
                if end >= n {
                    return Err(bad(format!(
                        "link {name:?}: end {end} is not a node (there are {p} processors and {} routers)",
                        routers.len()
                    )));
                }
            }
            if e.from == e.to {
                return Err(bad(format!(
                    "link {name:?} joins node {} to itself",
                    e.from
                )));
            }
        }
        let network = Network::new(p, routers, ends);
        for i in 0..p {
            for j in 0..p {
                if let Some(route) = self.route(i, j) {
                    if network.walk(i, route) != Some(j) {
                        return Err(bad(format!(
                            "the route from {:?} to {:?} is not a path of the network (through routers only)",
                            self.name(i),
                            self.name(j)
                        )));
                    }
                }
            }
        }
        self.network = Some(network);
        Ok(self)
    }

    /// The network graph, if the platform carries one ([`Platform::with_network`];
    /// the generators give one).
    ///
    /// ```
    /// # use hetbal::platform::{Platform, Processor};
    /// let p = Platform::from_matrix(vec![Processor::new("A", 2.0)], vec![vec![0.0]]).unwrap();
    /// assert!(p.network().is_none());
    /// ```
    pub fn network(&self) -> Option<&Network> {
        self.network.as_ref()
    }

    /// The links of the route from `i` to `j` (indices into [`Platform::links`]), or
    /// `None` for a matrix platform or a pair without a route. O(1).
    ///
    /// ```
    /// use hetbal::platform::{Link, Platform, Processor, Route, SharingPolicy};
    /// let l = Link { name: "l".into(), bandwidth: 1.0, latency: 0.0, sharing: SharingPolicy::Fatpipe };
    /// let p = Platform::from_graph(
    ///     vec![Processor::new("A", 1.0), Processor::new("B", 1.0)], vec![l],
    ///     vec![Route { src: 1, dst: 0, links: vec![0] }], 1.0).unwrap();
    /// assert_eq!(p.route(1, 0), Some(&[0u32][..]));
    /// assert_eq!(p.route(0, 1), None);
    /// ```
    pub fn route(&self, i: usize, j: usize) -> Option<&[u32]> {
        let k = i * self.len() + j;
        if self.has_route.get(k).copied().unwrap_or(false) {
            let (s, e) = self.route_spans[k];
            Some(&self.route_links[s as usize..e as usize])
        } else {
            None
        }
    }

    /// Sum of the latencies of the links on the route from `i` to `j`, or `None` when
    /// there is no route (or the platform is a matrix). O(route length).
    ///
    /// ```
    /// use hetbal::platform::{Link, Platform, Processor, Route, SharingPolicy};
    /// let l = Link { name: "l".into(), bandwidth: 1.0, latency: 0.25, sharing: SharingPolicy::Shared };
    /// let p = Platform::from_graph(
    ///     vec![Processor::new("A", 1.0), Processor::new("B", 1.0)], vec![l],
    ///     vec![Route { src: 0, dst: 1, links: vec![0, 0] }], 1.0).unwrap();
    /// assert_eq!(p.route_latency(0, 1), Some(0.5));
    /// ```
    pub fn route_latency(&self, i: usize, j: usize) -> Option<f64> {
        self.route(i, j)
            .map(|r| r.iter().map(|&l| self.links[l as usize].latency).sum())
    }

    /// True when every off-diagonal cost is the same finite number (the "fully
    /// homogeneous network" of the slides), which it returns. O(p²).
    ///
    /// ```
    /// # use hetbal::platform::{Platform, Processor};
    /// let p = Platform::from_matrix(
    ///     vec![Processor::new("A", 1.0), Processor::new("B", 3.0)],
    ///     vec![vec![0.0, 2.0], vec![2.0, 0.0]]).unwrap();
    /// assert_eq!(p.homogeneous_cost(), Some(2.0));
    /// ```
    pub fn homogeneous_cost(&self) -> Option<f64> {
        let p = self.len();
        let mut value = None;
        for i in 0..p {
            for j in 0..p {
                if i == j {
                    continue;
                }
                let c = self.costs[i * p + j];
                match value {
                    None if c.is_finite() => value = Some(c),
                    Some(v) if v == c => {}
                    _ => return None,
                }
            }
        }
        value
    }
}
