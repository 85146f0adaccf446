//! Random heterogeneous platforms: complete networks, and hierarchical WAN/MAN/LAN
//! networks in the spirit of the Tiers generator (Calvert, Doar & Zegura, "Modeling
//! Internet topology", 1997) used in the ring-mapping experiments.

use std::collections::VecDeque;
use std::fmt;

use super::{Link, Platform, Processor, Route, SharingPolicy};
use crate::random::SplitMix;

/// Why a platform could not be generated.
#[derive(Clone, Debug, PartialEq)]
pub enum GenerateError {
    /// A count is 0 (or the product too large).
    BadCount {
        /// The parameter.
        parameter: &'static str,
        /// The value given.
        value: usize,
    },
    /// A range is empty, not finite, or not positive.
    BadRange {
        /// The parameter.
        parameter: &'static str,
        /// Its low end.
        lo: f64,
        /// Its high end.
        hi: f64,
    },
}

impl fmt::Display for GenerateError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            GenerateError::BadCount { parameter, value } => write!(
                f,
                "{parameter} = {value}: must be at least 1 (and at most {MAX_GENERATED} hosts in all)"
            ),
            GenerateError::BadRange { parameter, lo, hi } => write!(
                f,
                "{parameter} = [{lo}, {hi}]: must be finite, > 0, low <= high"
            ),
        }
    }
}

impl std::error::Error for GenerateError {}

/// Most hosts a generator makes (the platform keeps a route per pair).
pub const MAX_GENERATED: usize = 4096;

fn check_range(parameter: &'static str, (lo, hi): (f64, f64)) -> Result<(), GenerateError> {
    if lo.is_finite() && hi.is_finite() && lo > 0.0 && lo <= hi {
        Ok(())
    } else {
        Err(GenerateError::BadRange { parameter, lo, hi })
    }
}

fn check_count(parameter: &'static str, value: usize) -> Result<(), GenerateError> {
    if value == 0 || value > MAX_GENERATED {
        Err(GenerateError::BadCount { parameter, value })
    } else {
        Ok(())
    }
}

/// A complete network: `p` processors with `w` uniform in `w_range`, and one
/// private SHARED link per pair (both directions) with bandwidth uniform in
/// `bandwidth_range` (bytes/s) and latency uniform in `latency_range`.
///
/// # Errors
/// [`GenerateError::BadCount`] (`p` = 0 or above [`MAX_GENERATED`]),
/// [`GenerateError::BadRange`] (latencies may be 0: give `(0.0, 0.0)`).
///
/// Complexity: O(p²).
///
/// ```
/// use hetbal::platform::generate::random_complete;
/// let p = random_complete(7, 5, (0.01, 0.05), (1e6, 1e8), (0.0, 0.0)).unwrap();
/// assert_eq!((p.len(), p.links().len()), (5, 10));
/// assert_eq!(p.cost(1, 3), p.cost(3, 1)); // one link per pair, both ways
/// assert_eq!(p, random_complete(7, 5, (0.01, 0.05), (1e6, 1e8), (0.0, 0.0)).unwrap());
/// ```
pub fn random_complete(
    seed: u64,
    p: usize,
    w_range: (f64, f64),
    bandwidth_range: (f64, f64),
    latency_range: (f64, f64),
) -> Result<Platform, GenerateError> {
    check_count("processors", p)?;
    check_range("w", w_range)?;
    check_range("bandwidth", bandwidth_range)?;
    let latency_ok = latency_range.0.is_finite()
        && latency_range.1.is_finite()
        && latency_range.0 >= 0.0
        && latency_range.0 <= latency_range.1;
    if !latency_ok {
        return Err(GenerateError::BadRange {
            parameter: "latency",
            lo: latency_range.0,
            hi: latency_range.1,
        });
    }
    let mut rng = SplitMix(seed);
    let processors: Vec<Processor> = (0..p)
        .map(|i| Processor::new(format!("P{i}"), rng.range(w_range)))
        .collect();
    let mut links = Vec::new();
    let mut routes = Vec::new();
    for a in 0..p {
        for b in a + 1..p {
            let l = links.len();
            links.push(Link {
                name: format!("P{a}-P{b}"),
                bandwidth: rng.range(bandwidth_range),
                latency: latency_range.0 + (latency_range.1 - latency_range.0) * rng.unit(),
                sharing: SharingPolicy::Shared,
            });
            routes.push(Route {
                src: a,
                dst: b,
                links: vec![l],
            });
            routes.push(Route {
                src: b,
                dst: a,
                links: vec![l],
            });
        }
    }
    Ok(
        Platform::from_graph(processors, links, routes, 1.0)
            .expect("generated platforms are valid"),
    )
}

/// Parameters of [`tiers`]: how many networks of each level and their link
/// bandwidths (bytes/s). The defaults are given with each field.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct TiersOptions {
    /// WAN routers (joined in a ring plus a few random chords). Default 3.
    pub wan: usize,
    /// MAN routers attached to each WAN router. Default 2.
    pub man_per_wan: usize,
    /// LANs (a switch each) attached to each MAN router. Default 2.
    pub lan_per_man: usize,
    /// Hosts on each LAN. Default 3.
    pub hosts_per_lan: usize,
    /// Time per unit of work of the hosts. Default 0.01 to 0.05 s.
    pub w: (f64, f64),
    /// Bandwidth of a WAN link. Default 1 to 10 MB/s.
    pub wan_bandwidth: (f64, f64),
    /// Bandwidth of a MAN link (MAN router to WAN router). Default 10 to 50 MB/s.
    pub man_bandwidth: (f64, f64),
    /// Bandwidth of a LAN uplink (switch to MAN router). Default 50 to 100 MB/s.
    pub lan_bandwidth: (f64, f64),
    /// Bandwidth of a host's own link to its switch. Default 100 to 125 MB/s.
    pub host_bandwidth: (f64, f64),
}

impl Default for TiersOptions {
    fn default() -> Self {
        TiersOptions {
            wan: 3,
            man_per_wan: 2,
            lan_per_man: 2,
            hosts_per_lan: 3,
            w: (0.01, 0.05),
            wan_bandwidth: (1e6, 1e7),
            man_bandwidth: (1e7, 5e7),
            lan_bandwidth: (5e7, 1e8),
            host_bandwidth: (1e8, 1.25e8),
        }
    }
}

/// A hierarchical heterogeneous network: WAN routers in a ring with random chords,
/// MAN routers hanging from them, LAN switches from those, hosts on the LANs. All
/// links are SHARED (so ring exchanges compete for them); the route between two
/// hosts is a shortest path in hops (ties: lowest node numbers first), and the
/// route back is the same links in reverse order.
///
/// # Errors
/// [`GenerateError::BadCount`] for a zero count or more than [`MAX_GENERATED`]
/// hosts, [`GenerateError::BadRange`].
///
/// # Complexity
/// O(h · (h + n)) for h hosts and n nodes (one breadth-first search per host).
///
/// ```
/// use hetbal::platform::generate::{tiers, TiersOptions};
/// let p = tiers(1, &TiersOptions::default()).unwrap();
/// assert_eq!(p.len(), 3 * 2 * 2 * 3);
/// // Hosts of one LAN meet at their switch: host link up, host link down.
/// assert_eq!(p.route(0, 1).unwrap().len(), 2);
/// ```
pub fn tiers(seed: u64, options: &TiersOptions) -> Result<Platform, GenerateError> {
    let o = options;
    check_count("wan", o.wan)?;
    check_count("man_per_wan", o.man_per_wan)?;
    check_count("lan_per_man", o.lan_per_man)?;
    check_count("hosts_per_lan", o.hosts_per_lan)?;
    let hosts = o
        .wan
        .checked_mul(o.man_per_wan)
        .and_then(|x| x.checked_mul(o.lan_per_man))
        .and_then(|x| x.checked_mul(o.hosts_per_lan))
        .unwrap_or(usize::MAX);
    check_count("hosts in all", hosts)?;
    check_range("w", o.w)?;
    check_range("wan_bandwidth", o.wan_bandwidth)?;
    check_range("man_bandwidth", o.man_bandwidth)?;
    check_range("lan_bandwidth", o.lan_bandwidth)?;
    check_range("host_bandwidth", o.host_bandwidth)?;
    let mut rng = SplitMix(seed);
    // Nodes: hosts first (0..hosts), then routers and switches.
    let mut processors = Vec::with_capacity(hosts);
    let mut links: Vec<Link> = Vec::new();
    let mut adjacency: Vec<Vec<(usize, usize)>> = vec![Vec::new(); hosts];
    let node = |adjacency: &mut Vec<Vec<(usize, usize)>>| {
        adjacency.push(Vec::new());
        adjacency.len() - 1
    };
    let connect = |adjacency: &mut Vec<Vec<(usize, usize)>>,
                   links: &mut Vec<Link>,
                   a: usize,
                   b: usize,
                   name: String,
                   bw: f64| {
        let l = links.len();
        links.push(Link {
            name,
            bandwidth: bw,
            latency: 0.0,
            sharing: SharingPolicy::Shared,
        });
        adjacency[a].push((b, l));
        adjacency[b].push((a, l));
    };
    let wan: Vec<usize> = (0..o.wan).map(|_| node(&mut adjacency)).collect();
    for k in 0..o.wan {
        if o.wan > 1 && (k + 1 < o.wan || o.wan > 2) {
            let bw = rng.range(o.wan_bandwidth);
            connect(
                &mut adjacency,
                &mut links,
                wan[k],
                wan[(k + 1) % o.wan],
                format!("wan{k}-wan{}", (k + 1) % o.wan),
                bw,
            );
        }
    }
    // A chord for every four WAN routers.
    for c in 0..o.wan / 4 {
        let (a, b) = (rng.below(o.wan), rng.below(o.wan));
        if a != b {
            let bw = rng.range(o.wan_bandwidth);
            connect(
                &mut adjacency,
                &mut links,
                wan[a],
                wan[b],
                format!("chord{c}"),
                bw,
            );
        }
    }
    let mut h = 0;
    for (k, &wr) in wan.iter().enumerate() {
        for m in 0..o.man_per_wan {
            let man = node(&mut adjacency);
            let bw = rng.range(o.man_bandwidth);
            connect(
                &mut adjacency,
                &mut links,
                man,
                wr,
                format!("man{k}.{m}"),
                bw,
            );
            for l in 0..o.lan_per_man {
                let switch = node(&mut adjacency);
                let bw = rng.range(o.lan_bandwidth);
                connect(
                    &mut adjacency,
                    &mut links,
                    switch,
                    man,
                    format!("lan{k}.{m}.{l}"),
                    bw,
                );
                for _ in 0..o.hosts_per_lan {
                    processors.push(Processor::new(format!("h{h}"), rng.range(o.w)));
                    let bw = rng.range(o.host_bandwidth);
                    connect(&mut adjacency, &mut links, h, switch, format!("h{h}"), bw);
                    h += 1;
                }
            }
        }
    }
    for list in adjacency.iter_mut() {
        list.sort_unstable();
    }
    // Breadth-first search from every host; routes follow the parent links.
    let n = adjacency.len();
    let mut routes = Vec::with_capacity(hosts * hosts);
    for src in 0..hosts {
        let mut parent: Vec<Option<(usize, usize)>> = vec![None; n];
        let mut seen = vec![false; n];
        seen[src] = true;
        let mut queue = VecDeque::from([src]);
        while let Some(u) = queue.pop_front() {
            // Hosts are leaves: never route through one.
            if u < hosts && u != src {
                continue;
            }
            for &(v, l) in &adjacency[u] {
                if !seen[v] {
                    seen[v] = true;
                    parent[v] = Some((u, l));
                    queue.push_back(v);
                }
            }
        }
        for dst in (src + 1..hosts).filter(|&d| seen[d]) {
            let mut path = Vec::new();
            let mut cur = dst;
            while let Some((u, l)) = parent[cur] {
                path.push(l);
                cur = u;
            }
            routes.push(Route {
                src: dst,
                dst: src,
                links: path.clone(),
            });
            path.reverse();
            routes.push(Route {
                src,
                dst,
                links: path,
            });
        }
    }
    Ok(
        Platform::from_graph(processors, links, routes, 1.0)
            .expect("generated platforms are valid"),
    )
}
