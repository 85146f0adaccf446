//! Random heterogeneous platforms: complete networks, and hierarchical WAN/MAN/LAN
//! networks in the spirit of the Tiers generator (Calvert, Doar & Zegura, "Modeling
//! Internet topology", 1997) used in the ring-mapping experiments.

use std::collections::VecDeque;
use std::fmt;

use super::{Link, LinkEnds, Platform, Processor, Route, SharingPolicy};
use crate::random::SplitMix64;

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
/// `bandwidth_range` (bytes/s) and latency uniform in `latency_range`. The
/// platform carries its [`network`](Platform::network) (no routers).
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
    let mut rng = SplitMix64(seed);
    let processors: Vec<Processor> = (0..p)
        .map(|i| Processor::new(format!("P{i}"), rng.range(w_range)))
        .collect();
    let mut links = Vec::new();
    let mut routes = Vec::new();
    let mut ends = Vec::new();
    for a in 0..p {
        for b in a + 1..p {
            let l = links.len();
            ends.push(LinkEnds::both_ways(a, b));
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
    Ok(Platform::from_graph(processors, links, routes, 1.0)
        .and_then(|p| p.with_network(Vec::new(), ends))
        .expect("generated platforms are valid"))
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
/// route back is the same links in reverse order. The platform carries its
/// [`network`](Platform::network): routers `wan{k}`, `man{k}.{m}`,
/// `switch{k}.{m}.{l}`, every link usable both ways.
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
    let mut rng = SplitMix64(seed);
    // Nodes: hosts first (0..hosts), then routers and switches.
    let mut processors = Vec::with_capacity(hosts);
    let mut links: Vec<Link> = Vec::new();
    let mut adjacency: Vec<Vec<(usize, usize)>> = vec![Vec::new(); hosts];
    let mut router_names: Vec<String> = Vec::new();
    let mut node = |adjacency: &mut Vec<Vec<(usize, usize)>>, name: String| {
        router_names.push(name);
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
    let wan: Vec<usize> = (0..o.wan)
        .map(|k| node(&mut adjacency, format!("wan{k}")))
        .collect();
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
            let man = node(&mut adjacency, format!("man{k}.{m}"));
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
                let switch = node(&mut adjacency, format!("switch{k}.{m}.{l}"));
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
    let mut ends = vec![LinkEnds::both_ways(0, 0); links.len()];
    for (a, list) in adjacency.iter().enumerate() {
        for &(b, l) in list {
            if a < b {
                ends[l] = LinkEnds::both_ways(a, b);
            }
        }
    }
    for list in adjacency.iter_mut() {
        list.sort_unstable();
    }
    // Breadth-first search from every host; the route back is the same links in
    // reverse order.
    let mut routes = Vec::with_capacity(hosts * hosts);
    for src in 0..hosts {
        let paths = host_paths(&adjacency, hosts, src);
        for (dst, path) in paths.into_iter().enumerate().skip(src + 1) {
            let Some(path) = path else { continue };
            let back: Vec<usize> = path.iter().rev().copied().collect();
            routes.push(Route {
                src: dst,
                dst: src,
                links: back,
            });
            routes.push(Route {
                src,
                dst,
                links: path,
            });
        }
    }
    Ok(Platform::from_graph(processors, links, routes, 1.0)
        .and_then(|p| p.with_network(router_names, ends))
        .expect("generated platforms are valid"))
}

/// Shortest paths in hops from host `src`: a breadth-first search over
/// `adjacency[u] = [(v, link)]`, neighbours in the order given (which decides
/// ties), never through another host (hosts `0..hosts` are leaves). Returns, for
/// every host, the links from `src` to it (`None` for `src` itself and for hosts
/// not reached). O(nodes + links).
fn host_paths(
    adjacency: &[Vec<(usize, usize)>],
    hosts: usize,
    src: usize,
) -> Vec<Option<Vec<usize>>> {
    let n = adjacency.len();
    let mut parent: Vec<Option<(usize, usize)>> = vec![None; n];
    let mut seen = vec![false; n];
    seen[src] = true;
    let mut queue = VecDeque::from([src]);
    while let Some(u) = queue.pop_front() {
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
    (0..hosts)
        .map(|dst| {
            (dst != src && seen[dst]).then(|| {
                let mut path = Vec::new();
                let mut cur = dst;
                while let Some((u, l)) = parent[cur] {
                    path.push(l);
                    cur = u;
                }
                path.reverse();
                path
            })
        })
        .collect()
}

/// Parameters of [`clusters`]: a few clusters joined by a WAN. The defaults are
/// given with each field (bandwidths in bytes/s; 1.25e8 B/s is 1 Gb/s): gigabit
/// hosts and CPUs as slow as the slides' Lyon machines, so that with a unit of
/// data of 1 MB and a unit of work of 1 Mflop the slides' regime holds (the
/// fastest processor alone at D_c/D_w = 0.64, rings at 0.064 and 0.0064).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ClustersOptions {
    /// Clusters (sites). Default 4.
    pub clusters: usize,
    /// Hosts per cluster, drawn uniformly in this range. Default 3 to 8.
    pub hosts: (usize, usize),
    /// Time per unit of work of the hosts. Default 0.0087 to 0.0451 s (the range
    /// of the slides' Lyon machines, in s per Mflop).
    pub w: (f64, f64),
    /// Each host's own link, one per direction. Default 1.25e8 (1 Gb/s).
    pub host_bandwidth: (f64, f64),
    /// Chance that a cluster's fabric is a hub (one medium SHARED by every flow
    /// entering, leaving or crossing the cluster) rather than a switch (a
    /// FATPIPE backplane that every flow crosses at full speed). Default 0.5.
    pub hub_probability: f64,
    /// Bandwidth of a hub's medium. Default 1.25e7 to 1.25e8 (100 Mb/s to 1 Gb/s).
    pub hub_bandwidth: (f64, f64),
    /// Bandwidth of a switch's backplane. Default 1.25e9 (10 Gb/s).
    pub switch_bandwidth: (f64, f64),
    /// A cluster's uplink to its gateway router, one per direction. Default
    /// 1.25e8 (1 Gb/s).
    pub uplink_bandwidth: (f64, f64),
    /// A WAN link between two gateways (SHARED by both directions). Default
    /// 1.25e7 to 1.25e8 (100 Mb/s to 1 Gb/s).
    pub wan_bandwidth: (f64, f64),
    /// WAN links added to the ring of gateways between random pairs, so that
    /// sites have several paths between them. Default 2.
    pub chords: usize,
}

impl Default for ClustersOptions {
    fn default() -> Self {
        ClustersOptions {
            clusters: 4,
            hosts: (3, 8),
            w: (0.0087, 0.0451),
            host_bandwidth: (1.25e8, 1.25e8),
            hub_probability: 0.5,
            hub_bandwidth: (1.25e7, 1.25e8),
            switch_bandwidth: (1.25e9, 1.25e9),
            uplink_bandwidth: (1.25e8, 1.25e8),
            wan_bandwidth: (1.25e7, 1.25e8),
            chords: 2,
        }
    }
}

/// A cluster of clusters whose links ring exchanges share, with several paths
/// between sites: the kind of platform of the mapping slides' experiment (sites
/// of workstations on hubs and switches, joined by slower links).
///
/// Cluster `c` has a fabric (nodes `in{c}` and `out{c}` joined by one link
/// `fabric{c}` from `in` to `out`: a SHARED hub medium or a FATPIPE switch
/// backplane) and a gateway router `gw{c}`. Host `h` sends on `h{h}_up` (to
/// `in{c}`) and receives on `h{h}_down` (from `out{c}`), so that every flow from,
/// to or within a cluster crosses its fabric once (as SimGrid's flat cluster with
/// a backbone). The cluster reaches its gateway on `up{c}` (from `out{c}`) and is
/// reached on `down{c}` (to `in{c}`). Gateways are joined in a ring, plus
/// `chords` random WAN links; WAN links are SHARED by both directions. The fixed
/// route of every pair is a shortest path in links (ties: the lowest link index
/// first); the platform carries its [`network`](Platform::network), so other
/// routes can be chosen.
///
/// # Errors
/// [`GenerateError::BadCount`] for no cluster, a host range with 0 or upside
/// down, or more than [`MAX_GENERATED`] hosts in all; [`GenerateError::BadRange`]
/// for a bad range or a hub probability outside [0, 1].
///
/// # Complexity
/// O(h · (n + e)) for h hosts, n nodes and e links (a breadth-first search per
/// host).
///
/// # Example
/// ```
/// use hetbal::platform::generate::{clusters, ClustersOptions};
/// let p = clusters(3, &ClustersOptions::default()).unwrap();
/// assert!(p.len() >= 4 * 3 && p.len() <= 4 * 8);
/// // Two hosts of one cluster: up, fabric, down.
/// assert_eq!(p.route(0, 1).unwrap().len(), 3);
/// assert!(p.network().is_some());
/// ```
pub fn clusters(seed: u64, options: &ClustersOptions) -> Result<Platform, GenerateError> {
    let o = options;
    check_count("clusters", o.clusters)?;
    check_count("hosts (low end)", o.hosts.0)?;
    if o.hosts.1 < o.hosts.0 {
        return Err(GenerateError::BadCount {
            parameter: "hosts (high end below the low end)",
            value: o.hosts.1,
        });
    }
    check_count("hosts in all", o.clusters.saturating_mul(o.hosts.1))?;
    check_range("w", o.w)?;
    check_range("host_bandwidth", o.host_bandwidth)?;
    check_range("hub_bandwidth", o.hub_bandwidth)?;
    check_range("switch_bandwidth", o.switch_bandwidth)?;
    check_range("uplink_bandwidth", o.uplink_bandwidth)?;
    check_range("wan_bandwidth", o.wan_bandwidth)?;
    if !(0.0..=1.0).contains(&o.hub_probability) {
        return Err(GenerateError::BadRange {
            parameter: "hub_probability",
            lo: o.hub_probability,
            hi: o.hub_probability,
        });
    }
    let mut rng = SplitMix64(seed);
    let sizes: Vec<usize> = (0..o.clusters)
        .map(|_| o.hosts.0 + rng.below(o.hosts.1 - o.hosts.0 + 1))
        .collect();
    let hosts: usize = sizes.iter().sum();
    let mut processors = Vec::with_capacity(hosts);
    let mut links: Vec<Link> = Vec::new();
    let mut ends: Vec<LinkEnds> = Vec::new();
    let mut routers: Vec<String> = Vec::new();
    let mut router = |name: String| {
        routers.push(name);
        hosts + routers.len() - 1
    };
    let mut add = |links: &mut Vec<Link>,
                   name: String,
                   bandwidth: f64,
                   sharing: SharingPolicy,
                   e: LinkEnds| {
        links.push(Link {
            name,
            bandwidth,
            latency: 0.0,
            sharing,
        });
        ends.push(e);
    };
    let mut gateways = Vec::with_capacity(o.clusters);
    let mut h = 0;
    for (c, &size) in sizes.iter().enumerate() {
        let fabric_in = router(format!("in{c}"));
        let fabric_out = router(format!("out{c}"));
        let gw = router(format!("gw{c}"));
        gateways.push(gw);
        let (bw, sharing) = if rng.unit() < o.hub_probability {
            (rng.range(o.hub_bandwidth), SharingPolicy::Shared)
        } else {
            (rng.range(o.switch_bandwidth), SharingPolicy::Fatpipe)
        };
        add(
            &mut links,
            format!("fabric{c}"),
            bw,
            sharing,
            LinkEnds::one_way(fabric_in, fabric_out),
        );
        let bw = rng.range(o.uplink_bandwidth);
        add(
            &mut links,
            format!("up{c}"),
            bw,
            SharingPolicy::Shared,
            LinkEnds::one_way(fabric_out, gw),
        );
        add(
            &mut links,
            format!("down{c}"),
            bw,
            SharingPolicy::Shared,
            LinkEnds::one_way(gw, fabric_in),
        );
        for _ in 0..size {
            processors.push(Processor::new(format!("h{h}"), rng.range(o.w)));
            let bw = rng.range(o.host_bandwidth);
            add(
                &mut links,
                format!("h{h}_up"),
                bw,
                SharingPolicy::Shared,
                LinkEnds::one_way(h, fabric_in),
            );
            add(
                &mut links,
                format!("h{h}_down"),
                bw,
                SharingPolicy::Shared,
                LinkEnds::one_way(fabric_out, h),
            );
            h += 1;
        }
    }
    let k = o.clusters;
    let mut wan_pairs: Vec<(usize, usize)> = Vec::new();
    if k == 2 {
        wan_pairs.push((0, 1));
    } else if k > 2 {
        wan_pairs.extend((0..k).map(|c| (c, (c + 1) % k)));
    }
    if k > 1 {
        for _ in 0..o.chords {
            let a = rng.below(k);
            let b = (a + 1 + rng.below(k - 1)) % k;
            wan_pairs.push((a.min(b), a.max(b)));
        }
    }
    for (n, &(a, b)) in wan_pairs.iter().enumerate() {
        let bw = rng.range(o.wan_bandwidth);
        add(
            &mut links,
            format!("wan{n}"),
            bw,
            SharingPolicy::Shared,
            LinkEnds::both_ways(gateways[a], gateways[b]),
        );
    }
    let nodes = hosts + routers.len();
    let mut out: Vec<Vec<(usize, usize)>> = vec![Vec::new(); nodes];
    for (l, e) in ends.iter().enumerate() {
        out[e.from].push((e.to, l));
        if !e.one_way {
            out[e.to].push((e.from, l));
        }
    }
    // Breadth-first search from every host over the directed links, through
    // routers only.
    let mut routes = Vec::with_capacity(hosts * hosts);
    for src in 0..hosts {
        for (dst, path) in host_paths(&out, hosts, src).into_iter().enumerate() {
            if let Some(links) = path {
                routes.push(Route { src, dst, links });
            }
        }
    }
    Ok(Platform::from_graph(processors, links, routes, 1.0)
        .and_then(|p| p.with_network(routers, ends))
        .expect("generated platforms are valid"))
}
