//! Rings on platforms whose routes share links (slides, "heterogeneous network,
//! general case"): every processor sends its border to both neighbours at once, the
//! flows share the links max-min fairly, and the step time follows.
//!
//! The slides' heuristic (H2) grows a ring from the best pair; to try processor
//! `P_k` between neighbours `P_i`, `P_j` it builds the graph of the bandwidth left
//! by the ring's other exchanges (without those between `P_i` and `P_j`), routes
//! the four new exchanges along widest paths of that graph, and evaluates the
//! ring; the best insertion is kept, then refined with max-min fair sharing. The
//! heuristic blind to sharing (H1) labels every pair with the bandwidth of its
//! best path alone and runs the complete-graph greedy. Both need the platform's
//! [`Network`](crate::platform::Network) to choose routes ([`Routing::Widest`]);
//! without it (SimGrid files, JSON without link ends) they keep the platform's
//! fixed routes ([`Routing::Fixed`]).

use super::shares::{check_ring, check_sizes, check_step, water_fill, Step};
use super::{map, MapOptions, Mapping, MappingError, Method};
use crate::platform::{max_min_rates, max_min_rates_on, Platform, SharingError, SharingPolicy};

/// The routes of a ring's exchanges: for each position `k` of the ring, the links
/// from `ring[k]` to its predecessor and to its successor (empty for a ring of one).
pub type RingRoutes = Vec<(Vec<u32>, Vec<u32>)>;

/// How the shared-link heuristics route the ring's exchanges.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Routing {
    /// The platform's fixed routes (its routing, as SimGrid computes it).
    Fixed,
    /// Routes chosen in the platform's network graph: widest paths (of the idle
    /// network for H1, of the bandwidth left by the other exchanges for H2). The
    /// platform needs a [`Network`](crate::platform::Network).
    Widest,
}

fn sharing_error(platform: &Platform, e: SharingError) -> MappingError {
    match e {
        SharingError::NoRoute { from, to } => MappingError::NoRoute { from, to },
        SharingError::UnknownProcessor { index, .. } => MappingError::UnknownProcessor { index },
        SharingError::UnknownLink { flow, link } => MappingError::BadRoutes {
            reason: format!(
                "flow {flow} names link {link}, the platform has {}",
                platform.links().len()
            ),
        },
    }
}

/// The time per unit of data of every ring exchange when all `2q` of them run at
/// once along the platform's routes, shared max-min fairly ([`max_min_rates`]):
/// `(to predecessor, to successor)` for each position of the ring (zeros for a
/// ring of one).
///
/// # Errors
/// [`MappingError::NoRoute`] (also for a matrix platform, which has no links),
/// [`MappingError::UnknownProcessor`].
///
/// Complexity: that of [`max_min_rates`] on 2q flows.
///
/// ```
/// use hetbal::mapping::shared_ring_costs;
/// use hetbal::platform::{Link, Platform, Processor, Route, SharingPolicy};
/// // Three processors on one bus of 60 B/s: six flows, 10 B/s each.
/// let bus = Link { name: "bus".into(), bandwidth: 60.0, latency: 0.0, sharing: SharingPolicy::Shared };
/// let mut routes = Vec::new();
/// for a in 0..3 { for b in 0..3 { if a != b { routes.push(Route { src: a, dst: b, links: vec![0] }); } } }
/// let p = Platform::from_graph(
///     (0..3).map(|i| Processor::new(format!("P{i}"), 1.0)).collect(), vec![bus], routes, 1.0,
/// ).unwrap();
/// assert_eq!(shared_ring_costs(&p, &[0, 1, 2]).unwrap(), vec![(0.1, 0.1); 3]);
/// ```
pub fn shared_ring_costs(
    platform: &Platform,
    ring: &[usize],
) -> Result<Vec<(f64, f64)>, MappingError> {
    check_ring(platform, ring)?;
    let q = ring.len();
    if q < 2 {
        return Ok(vec![(0.0, 0.0); q]);
    }
    let mut flows = Vec::with_capacity(2 * q);
    for k in 0..q {
        flows.push((ring[k], ring[(k + q - 1) % q]));
        flows.push((ring[k], ring[(k + 1) % q]));
    }
    let rates = max_min_rates(platform, &flows).map_err(|e| sharing_error(platform, e))?;
    let u = platform.unit_bytes();
    Ok((0..q)
        .map(|k| (u / rates[2 * k], u / rates[2 * k + 1]))
        .collect())
}

/// The platform's fixed routes for the exchanges of a ring, as [`RingRoutes`].
///
/// # Errors
/// [`MappingError::NoRoute`] for a pair of neighbours without a route (or a
/// matrix platform), the ring errors of [`t_step`](super::t_step).
///
/// Complexity: O(total route length).
///
/// ```
/// use hetbal::mapping::fixed_routes;
/// use hetbal::platform::generate::random_complete;
/// let p = random_complete(1, 3, (0.01, 0.05), (1e6, 1e8), (0.0, 0.0)).unwrap();
/// let r = fixed_routes(&p, &[0, 1, 2]).unwrap();
/// assert_eq!(r[0].1, p.route(0, 1).unwrap()); // P0's successor is P1
/// ```
pub fn fixed_routes(platform: &Platform, ring: &[usize]) -> Result<RingRoutes, MappingError> {
    check_ring(platform, ring)?;
    let q = ring.len();
    if q < 2 {
        return Ok(Vec::new());
    }
    let route = |a: usize, b: usize| {
        platform
            .route(a, b)
            .map(<[u32]>::to_vec)
            .ok_or_else(|| MappingError::NoRoute {
                from: platform.name(a).to_string(),
                to: platform.name(b).to_string(),
            })
    };
    (0..q)
        .map(|k| {
            Ok((
                route(ring[k], ring[(k + q - 1) % q])?,
                route(ring[k], ring[(k + 1) % q])?,
            ))
        })
        .collect()
}

/// As [`shared_ring_costs`], for exchanges along the given routes.
///
/// # Arguments
/// * `ring`: processor indices in ring order;
/// * `routes`: one `(to predecessor, to successor)` pair of link lists per
///   position (ignored for a ring of one).
///
/// # Errors
/// The ring errors of [`t_step`](super::t_step); [`MappingError::BadRoutes`]
/// when `routes` does not have one entry per position, names a link that does not
/// exist, or (on a platform with a network) is not a path between the two
/// processors.
///
/// Complexity: that of [`max_min_rates`] on 2q flows.
///
/// ```
/// use hetbal::mapping::{shared_ring_costs, shared_ring_costs_on, fixed_routes};
/// use hetbal::platform::generate::{tiers, TiersOptions};
/// let p = tiers(2, &TiersOptions::default()).unwrap();
/// let ring = [0, 5, 9, 13];
/// let on_fixed = shared_ring_costs_on(&p, &ring, &fixed_routes(&p, &ring).unwrap()).unwrap();
/// assert_eq!(on_fixed, shared_ring_costs(&p, &ring).unwrap());
/// ```
pub fn shared_ring_costs_on(
    platform: &Platform,
    ring: &[usize],
    routes: &[(Vec<u32>, Vec<u32>)],
) -> Result<Vec<(f64, f64)>, MappingError> {
    check_ring(platform, ring)?;
    let q = ring.len();
    if q < 2 {
        return Ok(vec![(0.0, 0.0); q]);
    }
    if routes.len() != q {
        return Err(MappingError::BadRoutes {
            reason: format!(
                "{} route pairs for a ring of {q} processors: give one per position",
                routes.len()
            ),
        });
    }
    if let Some(net) = platform.network() {
        for k in 0..q {
            let a = ring[k];
            for (links, b) in [
                (&routes[k].0, ring[(k + q - 1) % q]),
                (&routes[k].1, ring[(k + 1) % q]),
            ] {
                if net.walk(a, links) != Some(b) {
                    return Err(MappingError::BadRoutes {
                        reason: format!(
                            "the route given from {:?} to {:?} is not a path of the network",
                            platform.name(a),
                            platform.name(b)
                        ),
                    });
                }
            }
        }
    }
    let flows: Vec<&[u32]> = routes
        .iter()
        .flat_map(|(a, b)| [a.as_slice(), b.as_slice()])
        .collect();
    let rates =
        max_min_rates_on(platform.links(), &flows).map_err(|e| sharing_error(platform, e))?;
    let u = platform.unit_bytes();
    Ok((0..q)
        .map(|k| (u / rates[2 * k], u / rates[2 * k + 1]))
        .collect())
}

/// The step time of a ring when its exchanges share links: the `2q` border flows
/// (each processor to its predecessor and to its successor) run together along the
/// platform's routes with max-min fair rates ([`max_min_rates`]), which set
/// `c'_{i,j} = unit_bytes / rate`; the shares are then the best non-negative ones
/// for those costs (as [`optimal_shares`](super::optimal_shares)).
///
/// # Errors
/// The argument errors of [`t_step`](super::t_step); [`MappingError::NoRoute`]
/// (also for a matrix platform, which has no links).
///
/// # Complexity
/// That of [`max_min_rates`] on 2q flows, plus O(q log q).
///
/// # Example
/// ```
/// use hetbal::mapping::shared_step;
/// use hetbal::platform::{Link, Platform, Processor, Route, SharingPolicy};
/// // A and B joined by one shared link of 10 B/s: the two flows A->B (to the
/// // successor and to the predecessor, both B) and the two B->A share it: 2.5 B/s each.
/// let l = Link { name: "l".into(), bandwidth: 10.0, latency: 0.0, sharing: SharingPolicy::Shared };
/// let p = Platform::from_graph(
///     vec![Processor::new("A", 1.0), Processor::new("B", 1.0)], vec![l],
///     vec![Route { src: 0, dst: 1, links: vec![0] }, Route { src: 1, dst: 0, links: vec![0] }],
///     1.0).unwrap();
/// let step = shared_step(&p, &[0, 1], 10.0, 1.0).unwrap();
/// // Each sends 1 unit to each side at 0.4 s per unit: 0.8 s, plus 5 s of work.
/// assert!((step.t_step - 5.8).abs() < 1e-12);
/// ```
pub fn shared_step(
    platform: &Platform,
    ring: &[usize],
    work: f64,
    border: f64,
) -> Result<Step, MappingError> {
    check_step(platform, ring, work, border)?;
    let costs = shared_ring_costs(platform, ring)?;
    Ok(step_of(platform, ring, &costs, work, border))
}

/// As [`shared_step`], for exchanges along the given routes (see
/// [`shared_ring_costs_on`]).
///
/// # Errors
/// Those of [`shared_ring_costs_on`]; [`MappingError::InvalidWork`],
/// [`MappingError::InvalidBorder`].
///
/// # Complexity
/// That of [`max_min_rates`] on 2q flows, plus O(q log q).
///
/// # Example
/// ```
/// use hetbal::mapping::{shared_step_on, Routing, map_shared_with};
/// use hetbal::platform::generate::{clusters, ClustersOptions};
/// let p = clusters(1, &ClustersOptions::default()).unwrap().with_unit_bytes(1e6).unwrap();
/// let both = map_shared_with(&p, 1.0, 0.0064, Routing::Widest).unwrap();
/// let again = shared_step_on(&p, &both.aware.ring, &both.aware_routes, 1.0, 0.0064).unwrap();
/// assert!((again.t_step - both.aware.t_step).abs() <= 1e-12 * again.t_step);
/// ```
pub fn shared_step_on(
    platform: &Platform,
    ring: &[usize],
    routes: &[(Vec<u32>, Vec<u32>)],
    work: f64,
    border: f64,
) -> Result<Step, MappingError> {
    check_step(platform, ring, work, border)?;
    let costs = shared_ring_costs_on(platform, ring, routes)?;
    Ok(step_of(platform, ring, &costs, work, border))
}

fn step_of(
    platform: &Platform,
    ring: &[usize],
    costs: &[(f64, f64)],
    work: f64,
    border: f64,
) -> Step {
    let comm: Vec<f64> = costs.iter().map(|(a, b)| a + b).collect();
    let w: Vec<f64> = ring.iter().map(|&i| platform.w(i)).collect();
    water_fill(&w, &comm, work, border)
}

/// The two heuristics of the slides' experiment on a platform with shared links,
/// both evaluated with max-min fair sharing ([`shared_step_on`]):
/// * `blind` ("H1"): every pair of processors is labelled with the bandwidth of
///   its best path alone (the widest path of the idle network, or the fixed
///   route), the complete-graph greedy ([`Method::Greedy`]) builds the ring on
///   those costs, and the ring's exchanges take those paths;
/// * `aware` ("H2"): the greedy of the slides for shared links (see the module
///   documentation): best pair, then insertions routed along widest paths of the
///   bandwidth left, evaluated with the ring's flows, refined with max-min
///   fairness; the best ring of any size is kept (the fastest processor alone
///   included).
#[derive(Clone, Debug, PartialEq)]
pub struct SharedComparison {
    /// Sharing-blind mapping, evaluated with shared links.
    pub blind: Mapping,
    /// The routes of the blind ring's exchanges.
    pub blind_routes: RingRoutes,
    /// Sharing-aware mapping.
    pub aware: Mapping,
    /// The routes of the aware ring's exchanges.
    pub aware_routes: RingRoutes,
    /// How routes were chosen.
    pub routing: Routing,
}

/// Maps a ring on a platform whose routes share links, with the sharing-blind and
/// the sharing-aware heuristics (see [`SharedComparison`]); routes are chosen in
/// the network ([`Routing::Widest`]) when the platform carries one, otherwise the
/// platform's routes are kept ([`Routing::Fixed`]).
///
/// # Errors
/// Those of [`map_shared_with`].
///
/// # Complexity
/// That of [`map_shared_with`].
///
/// # Example
/// ```
/// use hetbal::mapping::map_shared;
/// use hetbal::platform::{Link, Platform, Processor, Route, SharingPolicy};
/// // Three processors on one shared bus of 30 B/s.
/// let bus = Link { name: "bus".into(), bandwidth: 30.0, latency: 0.0, sharing: SharingPolicy::Shared };
/// let mut routes = Vec::new();
/// for a in 0..3 { for b in 0..3 { if a != b { routes.push(Route { src: a, dst: b, links: vec![0] }); } } }
/// let p = Platform::from_graph(
///     (0..3).map(|i| Processor::new(format!("P{i}"), 1.0)).collect(), vec![bus], routes, 1.0,
/// ).unwrap();
/// let both = map_shared(&p, 30.0, 1.0).unwrap();
/// assert!(both.aware.t_step <= both.blind.t_step + 1e-12);
/// ```
pub fn map_shared(
    platform: &Platform,
    work: f64,
    border: f64,
) -> Result<SharedComparison, MappingError> {
    let routing = if platform.network().is_some() {
        Routing::Widest
    } else {
        Routing::Fixed
    };
    map_shared_with(platform, work, border, routing)
}

/// Candidates of each greedy step evaluated exactly (max-min fair rates of every
/// flow) after screening all of them with the slides' evaluation.
const SHORTLIST: usize = 8;

/// Maps a ring on a platform whose routes share links with both heuristics (see
/// [`SharedComparison`]), routing as asked.
///
/// # Arguments
/// * `platform`: a graph platform (with a network for [`Routing::Widest`]);
/// * `work` = D_w, `border` = D_c;
/// * `routing`: keep the fixed routes or choose widest paths.
///
/// # Returns
/// Both mappings and their routes. Rings only join processors with a path; the
/// single fastest processor is a candidate of H2 (it exchanges nothing).
///
/// # Errors
/// [`MappingError::InvalidWork`], [`MappingError::InvalidBorder`],
/// [`MappingError::NoNetwork`] ([`Routing::Widest`] without a network),
/// [`MappingError::NoRoute`] for a matrix platform (no links to share).
///
/// # Complexity
/// For p processors, n nodes and e links: H1 builds p² widest paths
/// (O(p² (n + e) log n)) and runs the greedy (O(p³)); H2 screens
/// O(p³) insertions, each routed by four widest paths and evaluated in O(q), and
/// evaluates the best eight of each step with max-min sharing.
///
/// # Example
/// ```
/// use hetbal::mapping::{map_shared_with, Routing};
/// use hetbal::platform::generate::{clusters, ClustersOptions};
/// let p = clusters(4, &ClustersOptions::default()).unwrap().with_unit_bytes(1e6).unwrap();
/// let fixed = map_shared_with(&p, 1.0, 0.0064, Routing::Fixed).unwrap();
/// let widest = map_shared_with(&p, 1.0, 0.0064, Routing::Widest).unwrap();
/// assert!(fixed.aware.t_step > 0.0 && widest.aware.t_step > 0.0);
/// ```
pub fn map_shared_with(
    platform: &Platform,
    work: f64,
    border: f64,
    routing: Routing,
) -> Result<SharedComparison, MappingError> {
    check_sizes(work, border)?;
    if routing == Routing::Widest && platform.network().is_none() {
        return Err(MappingError::NoNetwork);
    }
    if platform.links().is_empty() {
        // A matrix platform (or a graph without links): nothing to share.
        let (a, b) = (0, 1.min(platform.len() - 1));
        return Err(MappingError::NoRoute {
            from: platform.name(a).to_string(),
            to: platform.name(b).to_string(),
        });
    }
    let engine = Engine::new(platform, work, border, routing);
    // H1: the complete graph of best-path bandwidths, the greedy on it.
    let labelled = engine.labelled_platform();
    let blind_ring = map(&labelled, &MapOptions::new(work, border, Method::Greedy))?.ring;
    let blind_routes = fixed_routes(&labelled, &blind_ring)?;
    let blind_step = shared_step_on(platform, &blind_ring, &blind_routes, work, border)?;
    let blind = Mapping {
        method: Method::Greedy,
        ring: blind_ring,
        shares: blind_step.shares,
        t_step: blind_step.t_step,
    };
    // H2.
    let (ring, edges) = engine.aware();
    let aware_routes = positions(&edges);
    let step = shared_step_on(platform, &ring, &aware_routes, work, border)?;
    Ok(SharedComparison {
        blind,
        blind_routes,
        aware: Mapping {
            method: Method::Greedy,
            ring,
            shares: step.shares,
            t_step: step.t_step,
        },
        aware_routes,
        routing,
    })
}

/// One ring edge `a -> b` (`a = ring[k]`, `b = ring[k + 1]`): the route a to b
/// and the route b to a.
type Edge = (Vec<u32>, Vec<u32>);

/// A ring grown by one insertion: its exact step time, the ring, its edges and
/// their max-min rates.
type Grown = (f64, Vec<usize>, Vec<Edge>, Vec<(f64, f64)>);

/// Edge routes to per-position routes `(to predecessor, to successor)`.
fn positions(edges: &[Edge]) -> RingRoutes {
    let q = edges.len();
    (0..q)
        .map(|k| (edges[(k + q - 1) % q].1.clone(), edges[k].0.clone()))
        .collect()
}

/// Bandwidth in use on every link, and the number of flows on it.
#[derive(Clone)]
struct Usage {
    used: Vec<f64>,
    flows: Vec<u32>,
}

struct Engine<'a> {
    platform: &'a Platform,
    work: f64,
    border: f64,
    routing: Routing,
    bandwidth: Vec<f64>,
    fatpipe: Vec<bool>,
}

impl<'a> Engine<'a> {
    fn new(platform: &'a Platform, work: f64, border: f64, routing: Routing) -> Self {
        Engine {
            platform,
            work,
            border,
            routing,
            bandwidth: platform.links().iter().map(|l| l.bandwidth).collect(),
            fatpipe: platform
                .links()
                .iter()
                .map(|l| l.sharing == SharingPolicy::Fatpipe)
                .collect(),
        }
    }

    /// What a new flow can expect from link `l`: a FATPIPE link's bandwidth; on a
    /// shared link, the bandwidth left, or the fair share it would claim if the
    /// link is (nearly) full, whichever is larger (max-min fairness gives a flow at
    /// least `b / n` on each of its links when n flows cross it).
    fn available(&self, usage: &Usage, l: usize) -> f64 {
        let b = self.bandwidth[l];
        if self.fatpipe[l] {
            b
        } else {
            (b - usage.used[l])
                .max(b / f64::from(usage.flows[l] + 1))
                .max(0.0)
        }
    }

    /// Routes one new flow: the widest path of the available bandwidth (or the
    /// fixed route), and its width.
    fn route(&self, usage: &Usage, a: usize, b: usize) -> Option<(Vec<u32>, f64)> {
        match self.routing {
            Routing::Fixed => {
                let r = self.platform.route(a, b)?;
                let width = r
                    .iter()
                    .map(|&l| self.available(usage, l as usize))
                    .fold(f64::INFINITY, f64::min);
                (width > 0.0).then(|| (r.to_vec(), width))
            }
            Routing::Widest => {
                let net = self.platform.network()?;
                let path = net.widest_path(a, b, |l| self.available(usage, l))?;
                Some((path.links, path.width))
            }
        }
    }

    fn charge(&self, usage: &mut Usage, links: &[u32], rate: f64, sign: f64) {
        for &l in links {
            let l = l as usize;
            if !self.fatpipe[l] {
                if rate.is_finite() {
                    usage.used[l] += sign * rate;
                }
                if sign > 0.0 {
                    usage.flows[l] += 1;
                } else {
                    usage.flows[l] -= 1;
                }
            }
        }
    }

    fn idle(&self) -> Usage {
        Usage {
            used: vec![0.0; self.bandwidth.len()],
            flows: vec![0; self.bandwidth.len()],
        }
    }

    /// H1's complete graph: a platform whose route for every pair is its best path
    /// in the idle network (the fixed route with [`Routing::Fixed`]).
    fn labelled_platform(&self) -> Platform {
        match self.routing {
            Routing::Fixed => self.platform.clone(),
            Routing::Widest => {
                let p = self.platform.len();
                let idle = self.idle();
                let mut routes = Vec::with_capacity(p * p);
                for a in 0..p {
                    for b in (0..p).filter(|&b| b != a) {
                        if let Some((links, _)) = self.route(&idle, a, b) {
                            routes.push(crate::platform::Route {
                                src: a,
                                dst: b,
                                links: links.iter().map(|&l| l as usize).collect(),
                            });
                        }
                    }
                }
                Platform::from_graph(
                    self.platform.processors().to_vec(),
                    self.platform.links().to_vec(),
                    routes,
                    self.platform.unit_bytes(),
                )
                .expect("the same processors and links, routes of existing links")
            }
        }
    }

    /// The exact step time of a ring (max-min fair rates of all its flows) and the
    /// rates of each edge (a to b, b to a).
    fn exact(&self, ring: &[usize], edges: &[Edge]) -> (f64, Vec<(f64, f64)>) {
        let q = ring.len();
        if q < 2 {
            return (self.work * self.platform.w(ring[0]), Vec::new());
        }
        let flows: Vec<&[u32]> = edges
            .iter()
            .flat_map(|(a, b)| [a.as_slice(), b.as_slice()])
            .collect();
        let rates = max_min_rates_on(self.platform.links(), &flows)
            .expect("routes of the platform's links");
        let edge_rates: Vec<(f64, f64)> =
            (0..q).map(|e| (rates[2 * e], rates[2 * e + 1])).collect();
        (self.step(ring, &edge_rates), edge_rates)
    }

    /// The step time of a ring whose edges run at the given rates.
    fn step(&self, ring: &[usize], edge_rates: &[(f64, f64)]) -> f64 {
        let q = ring.len();
        let u = self.platform.unit_bytes();
        let comm: Vec<f64> = (0..q)
            .map(|k| u / edge_rates[(k + q - 1) % q].1 + u / edge_rates[k].0)
            .collect();
        let w: Vec<f64> = ring.iter().map(|&i| self.platform.w(i)).collect();
        water_fill(&w, &comm, self.work, self.border).t_step
    }

    /// Routes the exchanges of a new edge a <-> b on `usage` (charged with their
    /// widths): the edge and the widths.
    fn new_edge(&self, usage: &mut Usage, a: usize, b: usize) -> Option<(Edge, (f64, f64))> {
        let (ab, wab) = self.route(usage, a, b)?;
        self.charge(usage, &ab, wab, 1.0);
        let Some((ba, wba)) = self.route(usage, b, a) else {
            self.charge(usage, &ab, wab, -1.0);
            return None;
        };
        self.charge(usage, &ba, wba, 1.0);
        Some(((ab, ba), (wab, wba)))
    }

    fn uncharge_edge(&self, usage: &mut Usage, edge: &Edge, widths: (f64, f64)) {
        self.charge(usage, &edge.0, widths.0, -1.0);
        self.charge(usage, &edge.1, widths.1, -1.0);
    }

    /// The slides' greedy for shared links: the ring and its edges.
    fn aware(&self) -> (Vec<usize>, Vec<Edge>) {
        let platform = self.platform;
        let p = platform.len();
        let fastest = (0..p)
            .min_by(|&a, &b| platform.w(a).total_cmp(&platform.w(b)))
            .unwrap_or(0);
        let mut best: (f64, Vec<usize>, Vec<Edge>) =
            (self.work * platform.w(fastest), vec![fastest], Vec::new());
        // The best pair: both edges routed on the idle network, evaluated exactly.
        let mut pair: Option<(f64, Vec<usize>, Vec<Edge>)> = None;
        for i in 0..p {
            for j in i + 1..p {
                let mut usage = self.idle();
                let Some((e0, _)) = self.new_edge(&mut usage, i, j) else {
                    continue;
                };
                let Some((e1, _)) = self.new_edge(&mut usage, j, i) else {
                    continue;
                };
                let ring = vec![i, j];
                let edges = vec![e0, e1];
                let (t, _) = self.exact(&ring, &edges);
                if pair.as_ref().is_none_or(|b| t < b.0) {
                    pair = Some((t, ring, edges));
                }
            }
        }
        let Some((t, mut ring, mut edges)) = pair else {
            return (best.1, best.2);
        };
        if t < best.0 {
            best = (t, ring.clone(), edges.clone());
        }
        let (_, mut rates) = self.exact(&ring, &edges);
        let mut used = vec![false; p];
        for &i in &ring {
            used[i] = true;
        }
        while ring.len() < p {
            let q = ring.len();
            // The bandwidth used by the ring's flows at their max-min rates.
            let mut usage = self.idle();
            for (edge, &r) in edges.iter().zip(&rates) {
                self.charge(&mut usage, &edge.0, r.0, 1.0);
                self.charge(&mut usage, &edge.1, r.1, 1.0);
            }
            // Screen every insertion with the slides' evaluation: the other flows
            // keep their rates, the new ones get their widest path's width.
            let mut screened: Vec<(f64, usize, usize, Edge, Edge)> = Vec::new();
            let mut trial_ring = Vec::with_capacity(q + 1);
            let mut trial_rates = Vec::with_capacity(q + 1);
            for e in 0..q {
                let (a, b) = (ring[e], ring[(e + 1) % q]);
                // Without the exchanges between a and b.
                self.uncharge_edge(&mut usage, &edges[e], rates[e]);
                for k in (0..p).filter(|&k| !used[k]) {
                    let Some((ak, wak)) = self.new_edge(&mut usage, a, k) else {
                        continue;
                    };
                    let kb = self.new_edge(&mut usage, k, b);
                    self.uncharge_edge(&mut usage, &ak, wak);
                    let Some((kb, wkb)) = kb else {
                        continue;
                    };
                    self.uncharge_edge(&mut usage, &kb, wkb);
                    trial_ring.clear();
                    trial_ring.extend_from_slice(&ring[..=e]);
                    trial_ring.push(k);
                    trial_ring.extend_from_slice(&ring[e + 1..]);
                    trial_rates.clear();
                    trial_rates.extend_from_slice(&rates[..e]);
                    trial_rates.push(wak);
                    trial_rates.push(wkb);
                    trial_rates.extend_from_slice(&rates[e + 1..]);
                    let t = self.step(&trial_ring, &trial_rates);
                    if t.is_finite() {
                        screened.push((t, e, k, ak, kb));
                    }
                }
                self.charge(&mut usage, &edges[e].0, rates[e].0, 1.0);
                self.charge(&mut usage, &edges[e].1, rates[e].1, 1.0);
            }
            if screened.is_empty() {
                break;
            }
            screened.sort_by(|x, y| x.0.total_cmp(&y.0));
            screened.truncate(SHORTLIST);
            // Refine the best few with max-min fair sharing; keep the best.
            let mut choice: Option<Grown> = None;
            for (_, e, k, ak, kb) in screened {
                let mut r = ring.clone();
                r.insert(e + 1, k);
                let mut ed = edges.clone();
                ed[e] = ak;
                ed.insert(e + 1, kb);
                let (t, new_rates) = self.exact(&r, &ed);
                if choice.as_ref().is_none_or(|c| t < c.0) {
                    choice = Some((t, r, ed, new_rates));
                }
            }
            let Some((t, r, ed, new_rates)) = choice else {
                break;
            };
            for &i in &r {
                used[i] = true;
            }
            ring = r;
            edges = ed;
            rates = new_rates;
            if t < best.0 {
                best = (t, ring.clone(), edges.clone());
            }
        }
        (best.1, best.2)
    }
}
