//! The network a replay simulates: one SimGrid link per ring edge and direction,
//! its bandwidth and latency taken from the ring instance or from a platform's
//! routes, and the size of one item in bytes.
//!
//! Every link also carries the instance's start-up of its ring edge and direction
//! (`l_succ` or `l_pred`, docs/model.md "Start-ups"): under
//! [`NetworkModel::OnePort`] it is the SimGrid link's latency, so a transfer of `m`
//! items sent as one message takes `l + m * c`, as the plan says; under `CM02` and
//! `LV08` the link keeps the network's latency (the start-up itself for a network
//! built from the instance, the route's latency for one built from a platform).

use std::fmt;

use hetbal::platform::Platform;
use hetbal::ring::{RingInstance, RingKind};
use serde::{Deserialize, Serialize};

use crate::model::NetworkModel;

/// Item sizes above this are refused: bandwidths are computed in f64 and sizes
/// passed to SimGrid as C `long`s; 2^53 keeps both exact.
pub const MAX_ITEM_BYTES: u64 = 1 << 53;

/// Item size used when nothing sets one: one megabyte. On a network built from
/// the instance the size changes nothing (bandwidths are scaled so that an item
/// takes its cost, and latencies do not depend on it).
pub const DEFAULT_ITEM_BYTES: u64 = 1_000_000;

/// One direction of one ring edge, as a SimGrid link.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RingLink {
    /// Sending processor.
    pub from: usize,
    /// Receiving processor.
    pub to: usize,
    /// True for the link to `from`'s successor, false for the one to its
    /// predecessor (bidirectional rings).
    pub to_succ: bool,
    /// Bandwidth in bytes per second (finite, > 0).
    pub bandwidth: f64,
    /// Latency in seconds (finite, >= 0) under `CM02` and `LV08`.
    pub latency: f64,
    /// The instance's start-up of this ring edge and direction in seconds (finite
    /// and >= 0; 0 on a link without one). Under `oneport` it is the link's
    /// latency; over a link with a start-up (above 0) every transfer is one
    /// message. Absent in a serialised network: 0.
    #[serde(default)]
    pub startup: f64,
}

impl RingLink {
    /// Time one item of `item_bytes` bytes takes over this link when it is alone
    /// and latency is ignored.
    pub fn item_time(&self, item_bytes: u64) -> f64 {
        item_bytes as f64 / self.bandwidth
    }

    /// Whether the instance gives this link a start-up: then a transfer over it is
    /// one message (all its items held at its start, all arriving at its end),
    /// otherwise a train of items.
    pub fn has_startup(&self) -> bool {
        self.startup > 0.0
    }

    /// The latency SimGrid gives this link under `model`: the instance's start-up
    /// under [`NetworkModel::OnePort`] (the plan's model), [`RingLink::latency`]
    /// otherwise.
    ///
    /// # Example
    /// ```
    /// use hetbal::ring::RingInstance;
    /// use hetbal_simgrid::{NetworkModel, RingNetwork};
    /// let ring = RingInstance::unidirectional(&[3, 1], &[2, 2], &[2.0, 0.5]).unwrap()
    ///     .with_startups(&[0.25, 0.0], &[0.0, 0.0]).unwrap();
    /// let net = RingNetwork::from_instance(&ring, 1000).unwrap();
    /// assert_eq!(net.links[0].simgrid_latency(NetworkModel::OnePort), 0.25);
    /// assert_eq!(net.links[0].simgrid_latency(NetworkModel::Lv08), 0.25);
    /// assert!(net.links[0].has_startup() && !net.links[1].has_startup());
    /// ```
    pub fn simgrid_latency(&self, model: NetworkModel) -> f64 {
        match model {
            NetworkModel::OnePort => self.startup,
            NetworkModel::Cm02 | NetworkModel::Lv08 => self.latency,
        }
    }
}

/// The links of a ring and the size of an item.
///
/// Links are ordered by sender, the successor's link first: on a unidirectional
/// ring link `i` goes from `i` to `succ(i)`; on a bidirectional ring link `2i`
/// goes to `succ(i)` and link `2i + 1` to `pred(i)`.
///
/// # Example
/// ```
/// use hetbal::ring::RingInstance;
/// use hetbal_simgrid::RingNetwork;
/// let ring = RingInstance::unidirectional(&[3, 1], &[2, 2], &[2.0, 0.5]).unwrap();
/// let net = RingNetwork::from_instance(&ring, 1000).unwrap();
/// assert_eq!(net.links.len(), 2);
/// assert_eq!(net.links[0].bandwidth, 500.0); // 1000 bytes in 2 s
/// assert_eq!(net.links[1].item_time(net.item_bytes), 0.5);
/// ```
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RingNetwork {
    /// Number of processors on the ring.
    pub processors: usize,
    /// The links (see the type's documentation for their order).
    pub links: Vec<RingLink>,
    /// Size of one item in bytes (>= 1).
    pub item_bytes: u64,
}

/// Why a ring network could not be built.
#[derive(Clone, Debug, PartialEq)]
pub enum NetworkError {
    /// The item size is 0 or above [`MAX_ITEM_BYTES`].
    ItemBytes {
        /// The size given or inferred.
        value: f64,
    },
    /// A processor of the ring is not a host of the platform.
    UnknownHost {
        /// Index of the processor.
        processor: usize,
        /// Its name.
        name: String,
    },
    /// The platform has no route for a ring edge, or a route without any link (an
    /// unbounded bandwidth SimGrid cannot take).
    NoRoute {
        /// Source host.
        from: String,
        /// Destination host.
        to: String,
        /// What is missing.
        reason: &'static str,
    },
    /// Item sizes inferred from two ring edges disagree.
    ItemBytesDisagree {
        /// First edge (from, to) and the size it implies.
        first: (String, String, f64),
        /// An edge that implies another size.
        other: (String, String, f64),
    },
    /// A bandwidth is not finite and > 0, or a latency not finite and >= 0.
    BadLink {
        /// Source host.
        from: String,
        /// Destination host.
        to: String,
        /// What is wrong.
        what: String,
    },
}

impl fmt::Display for NetworkError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            NetworkError::ItemBytes { value } => write!(
                f,
                "an item of {value} bytes cannot be simulated: give a whole number of bytes from 1 to {MAX_ITEM_BYTES}"
            ),
            NetworkError::UnknownHost { processor, name } => write!(
                f,
                "processor {processor} ({name}) of the instance is not a host of the platform: ring processors are matched to hosts by name"
            ),
            NetworkError::NoRoute { from, to, reason } => {
                write!(f, "ring edge {from} -> {to}: {reason}")
            }
            NetworkError::ItemBytesDisagree { first, other } => write!(
                f,
                "the instance's costs and the platform's bandwidths imply different item sizes: {:.6e} bytes on {} -> {} but {:.6e} bytes on {} -> {}; give the item size with --item-bytes",
                first.2, first.0, first.1, other.2, other.0, other.1
            ),
            NetworkError::BadLink { from, to, what } => write!(f, "ring edge {from} -> {to}: {what}"),
        }
    }
}

impl std::error::Error for NetworkError {}

/// One ring edge and direction of an instance.
struct Edge {
    from: usize,
    to: usize,
    to_succ: bool,
    /// Cost per item.
    c: f64,
    /// Start-up.
    l: f64,
}

/// The ring edges of an instance, in the order of [`RingNetwork`]'s links.
fn ring_edges(ring: &RingInstance) -> Vec<Edge> {
    let mut edges = Vec::new();
    for i in 0..ring.len() {
        edges.push(Edge {
            from: i,
            to: ring.succ(i),
            to_succ: true,
            c: ring.c_succ()[i],
            l: ring.l_succ()[i],
        });
        if ring.kind() == RingKind::Bidirectional {
            if let Some(c) = ring.c_pred()[i] {
                edges.push(Edge {
                    from: i,
                    to: ring.pred(i),
                    to_succ: false,
                    c,
                    l: ring.l_pred()[i],
                });
            }
        }
    }
    edges
}

fn check_item_bytes(value: f64) -> Result<u64, NetworkError> {
    if value.is_finite() && value >= 1.0 && value <= MAX_ITEM_BYTES as f64 {
        Ok(value as u64)
    } else {
        Err(NetworkError::ItemBytes { value })
    }
}

impl RingNetwork {
    /// The network of a ring instance: each link's bandwidth makes one item of
    /// `item_bytes` bytes take the link's cost (`bandwidth = item_bytes / c`), and
    /// its latency (and start-up) is the instance's start-up of that edge and
    /// direction (`l_succ` or `l_pred`; 0 on rings without start-ups).
    ///
    /// # Errors
    /// [`NetworkError::ItemBytes`] when `item_bytes` is 0 or above
    /// [`MAX_ITEM_BYTES`]; [`NetworkError::BadLink`] when a bandwidth overflows
    /// (a cost below about 1e-300 s).
    pub fn from_instance(ring: &RingInstance, item_bytes: u64) -> Result<Self, NetworkError> {
        let item_bytes = check_item_bytes(item_bytes as f64)?;
        let links = ring_edges(ring)
            .into_iter()
            .map(|Edge { from, to, to_succ, c, l }| {
                let bandwidth = item_bytes as f64 / c;
                if bandwidth.is_finite() && bandwidth > 0.0 {
                    Ok(RingLink {
                        from,
                        to,
                        to_succ,
                        bandwidth,
                        latency: l,
                        startup: l,
                    })
                } else {
                    Err(NetworkError::BadLink {
                        from: ring.name(from).to_string(),
                        to: ring.name(to).to_string(),
                        what: format!(
                            "a cost of {c} s per item of {item_bytes} bytes is a bandwidth of {bandwidth} B/s, which SimGrid cannot take"
                        ),
                    })
                }
            })
            .collect::<Result<_, _>>()?;
        Ok(RingNetwork {
            processors: ring.len(),
            links,
            item_bytes,
        })
    }

    /// The network of a ring placed on a platform: processors are matched to the
    /// platform's hosts by name; the link of a ring edge gets the bottleneck
    /// bandwidth of the platform's route between the two hosts and the sum of its
    /// links' latencies (a cost-matrix platform: `unit_bytes / c`, no latency);
    /// its start-up is the instance's (the latency under `oneport`).
    ///
    /// # Arguments
    /// * `ring` - the instance (names, kind, and costs to infer the item size);
    /// * `platform` - the platform (JSON or SimGrid XML, read by `hetbal`);
    /// * `item_bytes` - the size of an item; `None` infers it from the instance:
    ///   `c * bandwidth` on every ring edge, which must agree to 1e-6 (rounded to
    ///   a whole number of bytes).
    ///
    /// # Errors
    /// [`NetworkError::UnknownHost`], [`NetworkError::NoRoute`],
    /// [`NetworkError::BadLink`], [`NetworkError::ItemBytes`],
    /// [`NetworkError::ItemBytesDisagree`].
    ///
    /// # Example
    /// ```
    /// use hetbal::platform::{Link, Platform, Processor, Route, SharingPolicy};
    /// use hetbal::ring::RingInstance;
    /// use hetbal_simgrid::RingNetwork;
    /// let link = |n: &str| Link { name: n.into(), bandwidth: 1e6, latency: 1e-3,
    ///                             sharing: SharingPolicy::Shared };
    /// let platform = Platform::from_graph(
    ///     vec![Processor::new("A", 1.0), Processor::new("B", 1.0)],
    ///     vec![link("ab"), link("ba")],
    ///     vec![Route { src: 0, dst: 1, links: vec![0] }, Route { src: 1, dst: 0, links: vec![1] }],
    ///     1.0,
    /// ).unwrap();
    /// // Items of 2 MB: 2 s per item at 1 MB/s.
    /// let spec = r#"{"ring": "unidirectional", "processors": [
    ///     {"name": "A", "load": 2, "target": 1, "c_succ": 2.0},
    ///     {"name": "B", "load": 1, "target": 2, "c_succ": 2.0}]}"#;
    /// let ring = RingInstance::from_spec(serde_json::from_str(spec).unwrap()).unwrap();
    /// let net = RingNetwork::from_platform(&ring, &platform, None).unwrap();
    /// assert_eq!(net.item_bytes, 2_000_000);
    /// assert_eq!((net.links[0].bandwidth, net.links[0].latency), (1e6, 1e-3));
    /// ```
    pub fn from_platform(
        ring: &RingInstance,
        platform: &Platform,
        item_bytes: Option<u64>,
    ) -> Result<Self, NetworkError> {
        let hosts = (0..ring.len())
            .map(|i| {
                platform
                    .index_of(ring.name(i))
                    .ok_or_else(|| NetworkError::UnknownHost {
                        processor: i,
                        name: ring.name(i).to_string(),
                    })
            })
            .collect::<Result<Vec<_>, _>>()?;
        let mut links = Vec::new();
        let mut implied: Option<(String, String, f64)> = None;
        for Edge {
            from,
            to,
            to_succ,
            c,
            l,
        } in ring_edges(ring)
        {
            let (a, b) = (hosts[from], hosts[to]);
            let names = || (platform.name(a).to_string(), platform.name(b).to_string());
            let no_route = |reason| {
                let (from, to) = names();
                NetworkError::NoRoute { from, to, reason }
            };
            let (bandwidth, latency) = match platform.route(a, b) {
                Some([]) => {
                    return Err(no_route(
                        "the route has no link: its bandwidth is unbounded",
                    ))
                }
                Some(route) => (
                    route
                        .iter()
                        .map(|&l| platform.links()[l as usize].bandwidth)
                        .fold(f64::INFINITY, f64::min),
                    platform.route_latency(a, b).unwrap_or(0.0),
                ),
                None => {
                    let cost = platform.cost(a, b);
                    if cost.is_infinite() {
                        return Err(no_route("the platform has no route"));
                    }
                    if cost <= 0.0 {
                        return Err(no_route(
                            "the platform gives it no cost: its bandwidth is unbounded",
                        ));
                    }
                    (platform.unit_bytes() / cost, 0.0)
                }
            };
            if !(bandwidth.is_finite() && bandwidth > 0.0 && latency.is_finite() && latency >= 0.0)
            {
                let (from, to) = names();
                return Err(NetworkError::BadLink {
                    from,
                    to,
                    what: format!("bandwidth {bandwidth} B/s and latency {latency} s"),
                });
            }
            let bytes = c * bandwidth;
            match &implied {
                None => {
                    let (f, t) = names();
                    implied = Some((f, t, bytes));
                }
                Some(first) if item_bytes.is_none() => {
                    if (bytes - first.2).abs() > 1e-6 * first.2.abs() {
                        let (f, t) = names();
                        return Err(NetworkError::ItemBytesDisagree {
                            first: first.clone(),
                            other: (f, t, bytes),
                        });
                    }
                }
                Some(_) => {}
            }
            links.push(RingLink {
                from,
                to,
                to_succ,
                bandwidth,
                latency,
                startup: l,
            });
        }
        let item_bytes = match item_bytes {
            Some(b) => check_item_bytes(b as f64)?,
            None => check_item_bytes(implied.map_or(DEFAULT_ITEM_BYTES as f64, |i| i.2.round()))?,
        };
        Ok(RingNetwork {
            processors: ring.len(),
            links,
            item_bytes,
        })
    }

    /// The link from `from` towards its successor (`to_succ`) or predecessor.
    pub fn link(&self, from: usize, to_succ: bool) -> Option<usize> {
        self.links
            .iter()
            .position(|l| l.from == from && l.to_succ == to_succ)
    }

    /// The SimGrid platform (XML, version 4.1) of this network: hosts `p0` ..
    /// `p{n-1}` in one `Full` zone, links `l0` .. as numbered here, and one route
    /// per ordered pair of neighbours: through `routes[k] = (from, to, link)`.
    /// Each link's latency is its latency under `model`
    /// ([`RingLink::simgrid_latency`]).
    ///
    /// SimGrid's `Full` zone keeps an n x n route table (about 20 MB at 1,000
    /// processors, 1 GB at 8,000): see [`crate::replay::MAX_REPLAY_PROCESSORS`].
    /// Graph routings stay linear in memory but recompute (`Dijkstra`) or cache
    /// per source (`DijkstraCache`) shortest paths: slower, or as large.
    pub fn platform_xml(&self, routes: &[(usize, usize, usize)], model: NetworkModel) -> String {
        let mut xml = String::from(
            "<?xml version='1.0'?>\n<!DOCTYPE platform SYSTEM \"https://simgrid.org/simgrid.dtd\">\n<platform version=\"4.1\">\n  <zone id=\"ring\" routing=\"Full\">\n",
        );
        for p in 0..self.processors {
            xml.push_str(&format!("    <host id=\"p{p}\" speed=\"1f\"/>\n"));
        }
        for (k, link) in self.links.iter().enumerate() {
            let latency = link.simgrid_latency(model);
            xml.push_str(&format!(
                "    <link id=\"l{k}\" bandwidth=\"{:e}Bps\" latency=\"{:e}s\"/>\n",
                link.bandwidth, latency
            ));
        }
        for &(from, to, link) in routes {
            xml.push_str(&format!(
                "    <route src=\"p{from}\" dst=\"p{to}\" symmetrical=\"NO\"><link_ctn id=\"l{link}\"/></route>\n"
            ));
        }
        xml.push_str("  </zone>\n</platform>\n");
        xml
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use hetbal::platform::{Link, Processor, Route, SharingPolicy};

    fn ring(names: [&str; 3], c_succ: [f64; 3]) -> RingInstance {
        let spec = serde_json::json!({
            "ring": "unidirectional",
            "processors": (0..3).map(|i| serde_json::json!({
                "name": names[i], "load": 2, "target": 2, "c_succ": c_succ[i]
            })).collect::<Vec<_>>()
        });
        RingInstance::from_spec(serde_json::from_value(spec).unwrap()).unwrap()
    }

    /// A, B, C joined in a cycle A -> B -> C -> A by links of 1, 2 and 4 MB/s
    /// (latency 1, 2 and 3 ms); C -> A goes through two links.
    fn platform() -> Platform {
        let link = |name: &str, bandwidth: f64, latency: f64| Link {
            name: name.into(),
            bandwidth,
            latency,
            sharing: SharingPolicy::Shared,
        };
        Platform::from_graph(
            vec![
                Processor::new("A", 1.0),
                Processor::new("B", 1.0),
                Processor::new("C", 1.0),
            ],
            vec![
                link("ab", 1e6, 1e-3),
                link("bc", 2e6, 2e-3),
                link("ca", 4e6, 3e-3),
                link("slow", 1e6, 0.0),
            ],
            vec![
                Route {
                    src: 0,
                    dst: 1,
                    links: vec![0],
                },
                Route {
                    src: 1,
                    dst: 2,
                    links: vec![1],
                },
                Route {
                    src: 2,
                    dst: 0,
                    links: vec![2, 3],
                },
            ],
            1.0,
        )
        .unwrap()
    }

    #[test]
    fn platform_routes_give_bottleneck_and_total_latency() {
        // Items of 2 MB: 2 s on ab, 1 s on bc, 2 s on ca+slow (bottleneck 1 MB/s).
        let net =
            RingNetwork::from_platform(&ring(["A", "B", "C"], [2.0, 1.0, 2.0]), &platform(), None)
                .unwrap();
        assert_eq!(net.item_bytes, 2_000_000);
        let got: Vec<(f64, f64)> = net.links.iter().map(|l| (l.bandwidth, l.latency)).collect();
        assert_eq!(got, [(1e6, 1e-3), (2e6, 2e-3), (1e6, 3e-3)]);
        // An explicit size wins over the instance's costs.
        let net = RingNetwork::from_platform(
            &ring(["A", "B", "C"], [9.0, 1.0, 2.0]),
            &platform(),
            Some(10),
        )
        .unwrap();
        assert_eq!(net.item_bytes, 10);
    }

    #[test]
    fn start_ups_are_the_oneport_latency() {
        let with = |r: RingInstance| r.with_startups(&[0.5, 0.0, 2.0], &[0.0; 3]).unwrap();
        // From the instance: latency and start-up are the instance's start-up.
        let r = with(
            RingInstance::bidirectional(&[2, 1, 1], &[1, 2, 1], &[1.0; 3], &[2.0; 3]).unwrap(),
        );
        let r = r.with_startups(r.l_succ(), &[0.25, 0.0, 0.125]).unwrap();
        let net = RingNetwork::from_instance(&r, 1000).unwrap();
        let got: Vec<(bool, f64, f64)> = net
            .links
            .iter()
            .map(|l| (l.to_succ, l.latency, l.startup))
            .collect();
        assert_eq!(
            got,
            [
                (true, 0.5, 0.5),
                (false, 0.25, 0.25),
                (true, 0.0, 0.0),
                (false, 0.0, 0.0),
                (true, 2.0, 2.0),
                (false, 0.125, 0.125)
            ]
        );
        let xml = net.platform_xml(&[], NetworkModel::OnePort);
        assert!(
            xml.contains("<link id=\"l5\" bandwidth=\"5e2Bps\" latency=\"1.25e-1s\"/>"),
            "{xml}"
        );
        // From a platform: the route's latency under CM02 and LV08, the
        // instance's start-up under oneport.
        let net = RingNetwork::from_platform(
            &with(ring(["A", "B", "C"], [2.0, 1.0, 2.0])),
            &platform(),
            None,
        )
        .unwrap();
        let got: Vec<[f64; 3]> = net
            .links
            .iter()
            .map(|l| {
                [
                    NetworkModel::OnePort,
                    NetworkModel::Cm02,
                    NetworkModel::Lv08,
                ]
                .map(|m| l.simgrid_latency(m))
            })
            .collect();
        assert_eq!(
            got,
            [[0.5, 1e-3, 1e-3], [0.0, 2e-3, 2e-3], [2.0, 3e-3, 3e-3]]
        );
        assert_eq!(
            net.links
                .iter()
                .map(RingLink::has_startup)
                .collect::<Vec<_>>(),
            [true, false, true]
        );
        // A network serialised without start-ups reads back with none.
        let mut json = serde_json::to_value(&net).unwrap();
        for link in json["links"].as_array_mut().unwrap() {
            link.as_object_mut().unwrap().remove("startup");
        }
        let back: RingNetwork = serde_json::from_value(json).unwrap();
        assert!(back.links.iter().all(|l| l.startup == 0.0));
    }

    #[test]
    fn platform_mismatches_are_named() {
        let p = platform();
        let e = RingNetwork::from_platform(&ring(["A", "B", "D"], [2.0, 1.0, 2.0]), &p, None)
            .unwrap_err();
        assert!(
            matches!(e, NetworkError::UnknownHost { processor: 2, .. }),
            "{e}"
        );
        let e = RingNetwork::from_platform(&ring(["A", "C", "B"], [2.0, 1.0, 2.0]), &p, None)
            .unwrap_err();
        assert!(matches!(e, NetworkError::NoRoute { .. }), "{e}");
        let e = RingNetwork::from_platform(&ring(["A", "B", "C"], [2.0, 2.0, 2.0]), &p, None)
            .unwrap_err();
        assert!(e.to_string().contains("--item-bytes"), "{e}");
        let e = RingNetwork::from_platform(&ring(["A", "B", "C"], [2.0, 1.0, 2.0]), &p, Some(0))
            .unwrap_err();
        assert!(matches!(e, NetworkError::ItemBytes { .. }), "{e}");
    }

    #[test]
    fn instance_links_take_the_costs() {
        let r = RingInstance::bidirectional(
            &[2, 1, 1],
            &[1, 2, 1],
            &[1.0, 0.5, 4.0],
            &[2.0, 3.0, 0.25],
        )
        .unwrap();
        let net = RingNetwork::from_instance(&r, 1000).unwrap();
        let got: Vec<(usize, usize, bool, f64)> = net
            .links
            .iter()
            .map(|l| (l.from, l.to, l.to_succ, l.item_time(net.item_bytes)))
            .collect();
        assert_eq!(
            got,
            [
                (0, 1, true, 1.0),
                (0, 2, false, 2.0),
                (1, 2, true, 0.5),
                (1, 0, false, 3.0),
                (2, 0, true, 4.0),
                (2, 1, false, 0.25)
            ]
        );
        assert_eq!(net.link(1, false), Some(3));
        assert!(RingNetwork::from_instance(&r, 0).is_err());
        let xml = net.platform_xml(&[(0, 1, 0)], NetworkModel::OnePort);
        assert!(xml.contains("<host id=\"p2\" speed=\"1f\"/>"), "{xml}");
        assert!(
            xml.contains("<link id=\"l1\" bandwidth=\"5e2Bps\" latency=\"0e0s\"/>"),
            "{xml}"
        );
        assert!(
            xml.contains(
                "<route src=\"p0\" dst=\"p1\" symmetrical=\"NO\"><link_ctn id=\"l0\"/></route>"
            ),
            "{xml}"
        );
    }
}
