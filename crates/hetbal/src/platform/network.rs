//! The physical network behind a graph platform, when it is known: processors and
//! routers as nodes, links as edges. With it, routes can be chosen (widest paths)
//! instead of taken from the platform's fixed routing, as the mapping slides'
//! heuristics for shared links do.

use std::cmp::Ordering;
use std::collections::BinaryHeap;

/// Where one link sits in the network: its two end nodes. Node `i < p` is
/// processor `i`; node `p + r` is router `r`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct LinkEnds {
    /// One end.
    pub from: usize,
    /// The other end.
    pub to: usize,
    /// True when the link carries data only from `from` to `to` (one direction of
    /// a full-duplex cable); false when flows may cross it either way (and then
    /// share it, whatever their direction).
    pub one_way: bool,
}

impl LinkEnds {
    /// A link usable both ways between nodes `a` and `b`.
    ///
    /// ```
    /// let e = hetbal::platform::LinkEnds::both_ways(0, 3);
    /// assert!(!e.one_way);
    /// ```
    pub fn both_ways(a: usize, b: usize) -> Self {
        LinkEnds {
            from: a,
            to: b,
            one_way: false,
        }
    }

    /// A link carrying data from `a` to `b` only.
    ///
    /// ```
    /// let e = hetbal::platform::LinkEnds::one_way(2, 1);
    /// assert!(e.one_way && e.from == 2);
    /// ```
    pub fn one_way(a: usize, b: usize) -> Self {
        LinkEnds {
            from: a,
            to: b,
            one_way: true,
        }
    }
}

/// A widest path: the links crossed, in order, and the smallest of the values
/// they were given (the path's bottleneck).
#[derive(Clone, Debug, PartialEq)]
pub struct WidestPath {
    /// Indices of the links, from the source to the destination.
    pub links: Vec<u32>,
    /// `min` over the links of the value given for each (`f64::INFINITY` for a
    /// path of no link).
    pub width: f64,
}

/// The network graph of a platform (see [`Platform::with_network`]).
///
/// [`Platform::with_network`]: super::Platform::with_network
#[derive(Clone, Debug, PartialEq)]
pub struct Network {
    pub(crate) processors: usize,
    pub(crate) routers: Vec<String>,
    pub(crate) ends: Vec<LinkEnds>,
    /// For each node, the links leaving it and the node they lead to.
    pub(crate) out: Vec<Vec<(u32, u32)>>,
}

impl Network {
    pub(crate) fn new(processors: usize, routers: Vec<String>, ends: Vec<LinkEnds>) -> Self {
        let n = processors + routers.len();
        let mut out = vec![Vec::new(); n];
        for (l, e) in ends.iter().enumerate() {
            out[e.from].push((l as u32, e.to as u32));
            if !e.one_way {
                out[e.to].push((l as u32, e.from as u32));
            }
        }
        Network {
            processors,
            routers,
            ends,
            out,
        }
    }

    /// Number of nodes: processors and routers.
    ///
    /// ```
    /// use hetbal::platform::generate::random_complete;
    /// let p = random_complete(1, 4, (0.01, 0.05), (1e6, 1e8), (0.0, 0.0)).unwrap();
    /// assert_eq!(p.network().unwrap().nodes(), 4); // no routers
    /// ```
    pub fn nodes(&self) -> usize {
        self.processors + self.routers.len()
    }

    /// The routers' names; router `r` is node `p + r`.
    ///
    /// ```
    /// use hetbal::platform::generate::{tiers, TiersOptions};
    /// let p = tiers(1, &TiersOptions::default()).unwrap();
    /// assert!(p.network().unwrap().routers().len() > 0);
    /// ```
    pub fn routers(&self) -> &[String] {
        &self.routers
    }

    /// The ends of every link, in link order.
    ///
    /// ```
    /// use hetbal::platform::generate::random_complete;
    /// let p = random_complete(1, 3, (0.01, 0.05), (1e6, 1e8), (0.0, 0.0)).unwrap();
    /// let e = p.network().unwrap().ends()[0]; // the link P0-P1
    /// assert_eq!((e.from, e.to), (0, 1));
    /// ```
    pub fn ends(&self) -> &[LinkEnds] {
        &self.ends
    }

    /// Follows `links` from processor `src`: the node reached, or `None` when a
    /// link does not leave the current node (or leaves it the wrong way), or when
    /// the walk passes through another processor (processors do not forward).
    pub(crate) fn walk(&self, src: usize, links: &[u32]) -> Option<usize> {
        let mut at = src;
        for (k, &l) in links.iter().enumerate() {
            if k > 0 && at < self.processors {
                return None;
            }
            let e = self.ends.get(l as usize)?;
            at = if e.from == at {
                e.to
            } else if !e.one_way && e.to == at {
                e.from
            } else {
                return None;
            };
        }
        Some(at)
    }

    /// The widest path from processor `src` to processor `dst`: the path whose
    /// smallest `width(link)` is largest; among those, the one with fewest links,
    /// then the first found by a breadth-first search taking links in index
    /// order. Paths never pass through
    /// another processor (processors do not forward) and follow one-way links in
    /// their direction only. Links whose width is not > 0 are not used.
    ///
    /// # Arguments
    /// * `src`, `dst`: processor indices (`src != dst`);
    /// * `width`: the value of each link (e.g. its bandwidth, or what is left of
    ///   it).
    ///
    /// # Returns
    /// The path, or `None` when no path of positive width joins them.
    ///
    /// # Complexity
    /// O((V + E) log V) for V nodes and E links: Dijkstra's algorithm for the
    /// widest width, then a breadth-first search on the links at least that wide
    /// (ordering paths by width then length directly is not safe for Dijkstra).
    ///
    /// # Example
    /// ```
    /// use hetbal::platform::{Link, LinkEnds, Platform, Processor, Route, SharingPolicy};
    /// //  A --a (10)-- R1 --b (10)-- B      two ways from A to B: through R1 (width 10)
    /// //  A --c (50)-- R2 --d (20)-- B      or through R2 (width 20)
    /// let link = |n: &str, bw: f64| Link { name: n.into(), bandwidth: bw, latency: 0.0,
    ///                                      sharing: SharingPolicy::Shared };
    /// let p = Platform::from_graph(
    ///     vec![Processor::new("A", 1.0), Processor::new("B", 1.0)],
    ///     vec![link("a", 10.0), link("b", 10.0), link("c", 50.0), link("d", 20.0)],
    ///     vec![Route { src: 0, dst: 1, links: vec![0, 1] }], 1.0,
    /// ).unwrap()
    /// .with_network(vec!["R1".into(), "R2".into()], vec![
    ///     LinkEnds::both_ways(0, 2), LinkEnds::both_ways(2, 1),
    ///     LinkEnds::both_ways(0, 3), LinkEnds::both_ways(3, 1)]).unwrap();
    /// let net = p.network().unwrap();
    /// let bw: Vec<f64> = p.links().iter().map(|l| l.bandwidth).collect();
    /// let path = net.widest_path(0, 1, |l| bw[l]).unwrap();
    /// assert_eq!((path.links, path.width), (vec![2, 3], 20.0));
    /// ```
    pub fn widest_path(
        &self,
        src: usize,
        dst: usize,
        width: impl Fn(usize) -> f64,
    ) -> Option<WidestPath> {
        let n = self.nodes();
        if src >= self.processors || dst >= self.processors || src == dst {
            return None;
        }
        // 1. The width of the widest path (Dijkstra on the bottleneck).
        let mut best = vec![0.0f64; n];
        let mut done = vec![false; n];
        let mut heap = BinaryHeap::new();
        best[src] = f64::INFINITY;
        heap.push(Entry {
            width: f64::INFINITY,
            node: src as u32,
        });
        while let Some(Entry { width: w, node }) = heap.pop() {
            let u = node as usize;
            if done[u] {
                continue;
            }
            done[u] = true;
            if u == dst {
                break;
            }
            if u != src && u < self.processors {
                continue; // processors do not forward
            }
            for &(l, v) in &self.out[u] {
                let v = v as usize;
                let lw = width(l as usize);
                // Links of no (or NaN) width are not used.
                if done[v] || lw.partial_cmp(&0.0) != Some(std::cmp::Ordering::Greater) {
                    continue;
                }
                let nw = w.min(lw);
                if nw > best[v] {
                    best[v] = nw;
                    heap.push(Entry {
                        width: nw,
                        node: v as u32,
                    });
                }
            }
        }
        if !done[dst] {
            return None;
        }
        let widest = best[dst];
        // 2. Among the paths of that width, one with fewest links (breadth-first
        // search on the links at least that wide, in link order).
        let mut pred: Vec<Option<(u32, u32)>> = vec![None; n];
        let mut seen = vec![false; n];
        seen[src] = true;
        let mut queue = std::collections::VecDeque::from([src]);
        while let Some(u) = queue.pop_front() {
            if u == dst {
                break;
            }
            if u != src && u < self.processors {
                continue;
            }
            for &(l, v) in &self.out[u] {
                let v = v as usize;
                if !seen[v] && width(l as usize) >= widest {
                    seen[v] = true;
                    pred[v] = Some((l, u as u32));
                    queue.push_back(v);
                }
            }
        }
        let mut links = Vec::new();
        let mut at = dst;
        while at != src {
            let (l, u) = pred[at]?;
            links.push(l);
            at = u as usize;
        }
        links.reverse();
        Some(WidestPath {
            links,
            width: widest,
        })
    }
}

/// A heap entry: wider first, then lower node.
#[derive(Clone, Copy, Debug)]
struct Entry {
    width: f64,
    node: u32,
}

impl PartialEq for Entry {
    fn eq(&self, other: &Self) -> bool {
        self.cmp(other) == Ordering::Equal
    }
}
impl Eq for Entry {}
impl PartialOrd for Entry {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}
impl Ord for Entry {
    fn cmp(&self, other: &Self) -> Ordering {
        self.width
            .total_cmp(&other.width)
            .then(other.node.cmp(&self.node))
    }
}
