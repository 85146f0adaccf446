//! The JSON platform document of formats.md and its validation.

use std::collections::HashMap;

use serde::{Deserialize, Serialize};

use super::{Link, LinkEnds, Platform, PlatformError, Processor, Route, SharingPolicy};

/// One processor as written in a platform document.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ProcessorSpec {
    /// Unique, non-empty name.
    pub name: String,
    /// Time per unit of work in seconds (finite, > 0).
    pub w: f64,
}

/// One link as written in a platform document.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LinkSpec {
    /// Unique name.
    pub name: String,
    /// Bandwidth in bytes per second (finite, > 0).
    pub bandwidth: f64,
    /// Latency in seconds (finite, >= 0; default 0).
    #[serde(default)]
    pub latency: f64,
    /// `SHARED` (default) or `FATPIPE`. A link of a JSON document already has one
    /// direction per route, so `SPLITDUPLEX` is refused: declare two links.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sharing_policy: Option<SharingPolicy>,
    /// Optional: the two nodes (processor or router names) the link joins, for the
    /// network graph ([`Platform::network`]). Give them for every link or none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ends: Option<[String; 2]>,
    /// With `ends`: true when data only goes from the first end to the second.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub one_way: bool,
}

/// One route as written in a platform document.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RouteSpec {
    /// Source processor name.
    pub src: String,
    /// Destination processor name.
    pub dst: String,
    /// Link names from `src` to `dst`.
    pub links: Vec<String>,
    /// Whether the reverse route (same links, reverse order) exists too; default true.
    #[serde(default = "yes")]
    pub symmetrical: bool,
}

fn yes() -> bool {
    true
}

/// A platform document (formats.md "Platforms"), not yet validated: either a cost
/// matrix `c`, or `links` and `routes`. Turn it into a [`Platform`] with
/// [`Platform::from_spec`].
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PlatformSpec {
    /// The processors.
    pub processors: Vec<ProcessorSpec>,
    /// Cost matrix: `c[i][j]` = time per unit of data from i to j.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub c: Option<Vec<Vec<f64>>>,
    /// Links of the graph form.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub links: Option<Vec<LinkSpec>>,
    /// Routes of the graph form.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub routes: Option<Vec<RouteSpec>>,
    /// Size of one unit of data in bytes (graph form; default 1).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub unit_bytes: Option<f64>,
    /// Names of the routers of the network graph (graph form with link `ends`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub routers: Option<Vec<String>>,
}

impl Platform {
    /// The platform as a document of formats.md: the cost matrix for a matrix
    /// platform; otherwise the graph form, with every route written one way
    /// (`symmetrical: false`) and each half of a split-duplex link as a SHARED link
    /// of its own (which is what it is). [`Platform::from_spec`] reads it back.
    ///
    /// Complexity: O(p² + total route length).
    ///
    /// ```
    /// use hetbal::platform::generate::random_complete;
    /// use hetbal::platform::Platform;
    /// let p = random_complete(1, 4, (0.01, 0.05), (1e6, 1e8), (0.0, 1e-3)).unwrap();
    /// assert_eq!(Platform::from_spec(p.to_spec()).unwrap(), p);
    /// ```
    pub fn to_spec(&self) -> PlatformSpec {
        let processors = self
            .processors
            .iter()
            .map(|p| ProcessorSpec {
                name: p.name.clone(),
                w: p.w,
            })
            .collect();
        let n = self.len();
        if self.has_route.is_empty() {
            let c = (0..n)
                .map(|i| (0..n).map(|j| self.cost(i, j)).collect())
                .collect();
            return PlatformSpec {
                processors,
                c: Some(c),
                links: None,
                routes: None,
                unit_bytes: None,
                routers: None,
            };
        }
        let node_name = |v: usize| match &self.network {
            Some(net) if v >= n => net.routers()[v - n].clone(),
            _ => self.processors[v].name.clone(),
        };
        let links = self
            .links
            .iter()
            .enumerate()
            .map(|(k, l)| LinkSpec {
                name: l.name.clone(),
                bandwidth: l.bandwidth,
                latency: l.latency,
                sharing_policy: Some(match l.sharing {
                    SharingPolicy::Fatpipe => SharingPolicy::Fatpipe,
                    _ => SharingPolicy::Shared,
                }),
                ends: self.network.as_ref().map(|net| {
                    let e = net.ends()[k];
                    [node_name(e.from), node_name(e.to)]
                }),
                one_way: self
                    .network
                    .as_ref()
                    .is_some_and(|net| net.ends()[k].one_way),
            })
            .collect();
        let mut routes = Vec::new();
        for i in 0..n {
            for j in 0..n {
                if let Some(r) = self.route(i, j) {
                    routes.push(RouteSpec {
                        src: self.name(i).to_string(),
                        dst: self.name(j).to_string(),
                        links: r
                            .iter()
                            .map(|&l| self.links[l as usize].name.clone())
                            .collect(),
                        symmetrical: false,
                    });
                }
            }
        }
        PlatformSpec {
            processors,
            c: None,
            links: Some(links),
            routes: Some(routes),
            unit_bytes: Some(self.unit_bytes),
            routers: self.network.as_ref().map(|net| net.routers().to_vec()),
        }
    }

    /// Validates a platform document.
    ///
    /// A symmetrical route also declares the reverse route (links in reverse order)
    /// unless the document gives that one explicitly; pairs left without a route
    /// cost `f64::INFINITY`.
    ///
    /// # Errors
    /// [`PlatformError::NetworkForm`] when the document gives both `c` and a graph,
    /// neither, `links` without `routes` (or the reverse), or `unit_bytes` with a
    /// matrix; every error of [`Platform::from_matrix`] and
    /// [`Platform::from_graph`], with routes and processors named as in the
    /// document; [`PlatformError::InvalidLink`] for a `SPLITDUPLEX` link;
    /// [`PlatformError::InvalidNetwork`] when some links give `ends` and others do
    /// not, `routers` come without `ends`, an end names no processor or router, or
    /// a route is not a path of that network (see [`Platform::with_network`]).
    ///
    /// Complexity: O(p² + links + total route length), with hashing of names.
    ///
    /// ```
    /// use hetbal::platform::{Platform, PlatformSpec, PlatformError};
    /// let doc = r#"{ "processors": [{"name": "A", "w": 1.0}, {"name": "B", "w": 2.0}],
    ///   "links": [{"name": "l1", "bandwidth": 1.25e8, "latency": 5e-5}],
    ///   "routes": [{"src": "A", "dst": "B", "links": ["l1"], "symmetrical": true}],
    ///   "unit_bytes": 1e6 }"#;
    /// let spec: PlatformSpec = serde_json::from_str(doc).unwrap();
    /// let p = Platform::from_spec(spec).unwrap();
    /// assert_eq!(p.cost(1, 0), 1e6 / 1.25e8);
    ///
    /// let bad: PlatformSpec = serde_json::from_str(
    ///     r#"{"processors": [{"name": "A", "w": 1.0}]}"#).unwrap();
    /// assert!(matches!(Platform::from_spec(bad), Err(PlatformError::NetworkForm { .. })));
    /// ```
    pub fn from_spec(spec: PlatformSpec) -> Result<Platform, PlatformError> {
        let processors: Vec<Processor> = spec
            .processors
            .into_iter()
            .map(|p| Processor::new(p.name, p.w))
            .collect();
        match (spec.c, spec.links, spec.routes) {
            (Some(c), None, None) => {
                if spec.routers.is_some() {
                    return Err(PlatformError::NetworkForm {
                        reason: "`routers` belong to the graph form (links with `ends`), not to a cost matrix `c`",
                    });
                }
                if spec.unit_bytes.is_some() {
                    return Err(PlatformError::NetworkForm {
                        reason: "`unit_bytes` belongs to the graph form (links and routes), not to a cost matrix `c`",
                    });
                }
                Platform::from_matrix(processors, c)
            }
            (None, Some(links), Some(routes)) => {
                graph(processors, links, routes, spec.unit_bytes, spec.routers)
            }
            (Some(_), _, _) => Err(PlatformError::NetworkForm {
                reason: "give either a cost matrix `c` or `links` and `routes`, not both",
            }),
            (None, None, None) => Err(PlatformError::NetworkForm {
                reason:
                    "the platform has no network: give a cost matrix `c` or `links` and `routes`",
            }),
            (None, _, _) => Err(PlatformError::NetworkForm {
                reason: "the graph form needs both `links` and `routes`",
            }),
        }
    }
}

fn graph(
    processors: Vec<Processor>,
    links: Vec<LinkSpec>,
    routes: Vec<RouteSpec>,
    unit_bytes: Option<f64>,
    routers: Option<Vec<String>>,
) -> Result<Platform, PlatformError> {
    super::check_processors(&processors)?;
    let proc_index: HashMap<&str, usize> = processors
        .iter()
        .enumerate()
        .map(|(i, p)| (p.name.as_str(), i))
        .collect();
    let link_index: HashMap<&str, usize> = links
        .iter()
        .enumerate()
        .map(|(i, l)| (l.name.as_str(), i))
        .collect();
    let mut declared: HashMap<(usize, usize), usize> = HashMap::new();
    let mut resolved: Vec<(usize, usize, Vec<usize>, bool)> = Vec::with_capacity(routes.len());
    for (k, r) in routes.iter().enumerate() {
        let find = |field: &'static str, name: &str| {
            proc_index
                .get(name)
                .copied()
                .ok_or_else(|| PlatformError::UnknownProcessor {
                    route: k,
                    field,
                    name: name.to_string(),
                })
        };
        let src = find("src", &r.src)?;
        let dst = find("dst", &r.dst)?;
        if src == dst {
            return Err(PlatformError::SelfRoute {
                route: k,
                name: r.src.clone(),
            });
        }
        let ids =
            r.links
                .iter()
                .map(|name| {
                    link_index.get(name.as_str()).copied().ok_or_else(|| {
                        PlatformError::UnknownLink {
                            route: k,
                            name: name.clone(),
                        }
                    })
                })
                .collect::<Result<Vec<_>, _>>()?;
        if declared.insert((src, dst), k).is_some() {
            return Err(PlatformError::DuplicateRoute {
                src: r.src.clone(),
                dst: r.dst.clone(),
            });
        }
        resolved.push((src, dst, ids, r.symmetrical));
    }
    let mut out: Vec<Route> = Vec::with_capacity(resolved.len() * 2);
    for (src, dst, ids, symmetrical) in &resolved {
        out.push(Route {
            src: *src,
            dst: *dst,
            links: ids.clone(),
        });
        if *symmetrical && !declared.contains_key(&(*dst, *src)) {
            declared.insert((*dst, *src), usize::MAX);
            out.push(Route {
                src: *dst,
                dst: *src,
                links: ids.iter().rev().copied().collect(),
            });
        }
    }
    // The network graph, if the links say where they are.
    let with_ends = links.iter().filter(|l| l.ends.is_some()).count();
    let network = if with_ends == 0 {
        if routers.is_some() {
            return Err(PlatformError::InvalidNetwork {
                reason: "`routers` are given but no link has `ends`".to_string(),
            });
        }
        None
    } else {
        if with_ends < links.len() {
            let missing = links
                .iter()
                .find(|l| l.ends.is_none())
                .map(|l| l.name.clone());
            return Err(PlatformError::InvalidNetwork {
                reason: format!(
                    "link {:?} has no `ends` while others do: give them for every link or none",
                    missing.unwrap_or_default()
                ),
            });
        }
        let routers = routers.unwrap_or_default();
        let node: HashMap<&str, usize> = processors
            .iter()
            .map(|p| p.name.as_str())
            .chain(routers.iter().map(String::as_str))
            .enumerate()
            .map(|(i, name)| (name, i))
            .collect();
        let mut ends = Vec::with_capacity(links.len());
        for l in &links {
            let [a, b] = l.ends.as_ref().expect("counted above");
            let find = |name: &str| {
                node.get(name)
                    .copied()
                    .ok_or_else(|| PlatformError::InvalidNetwork {
                        reason: format!(
                            "link {:?}: end {name:?} is neither a processor nor a router",
                            l.name
                        ),
                    })
            };
            let (from, to) = (find(a)?, find(b)?);
            ends.push(LinkEnds {
                from,
                to,
                one_way: l.one_way,
            });
        }
        Some((routers, ends))
    };
    let mut model_links = Vec::with_capacity(links.len());
    for l in links {
        let sharing = l.sharing_policy.unwrap_or(SharingPolicy::Shared);
        if sharing == SharingPolicy::Splitduplex {
            return Err(PlatformError::InvalidLink {
                name: l.name,
                field: "sharing_policy",
                value: "SPLITDUPLEX".to_string(),
                rule: "SPLITDUPLEX is for SimGrid files: in JSON declare one link per direction",
            });
        }
        model_links.push(Link {
            name: l.name,
            bandwidth: l.bandwidth,
            latency: l.latency,
            sharing,
        });
    }
    let platform = Platform::from_graph(processors, model_links, out, unit_bytes.unwrap_or(1.0))?;
    match network {
        None => Ok(platform),
        Some((routers, ends)) => platform.with_network(routers, ends),
    }
}
