//! The XML reader: the entry point [`read_simgrid`], the attribute and value
//! checks, and the elements of a zone (zones, hosts, routers, links). Clusters are
//! read in `clusters`, routes resolved in `routing`.

use std::collections::HashMap;

use roxmltree::{Document, Node, ParsingOptions};

use super::model::{LinkDecl, NetPoint, NodeRef, Routing, Topology, Zone};
use super::options::{Result, SimgridError, SimgridOptions, MAX_HOSTS, MAX_ZONE_DEPTH};
use crate::platform::units::{self, Quantity};
use crate::platform::{Link, Platform, PlatformError, Processor, SharingPolicy};

/// [`SimgridError::DuplicateId`] when `id` (declared at `line`) is already in
/// `ids`, whose values end with the line of the first declaration.
fn new_id<T>(
    ids: &HashMap<String, (T, u32)>,
    id: &str,
    line: u32,
    kind: &'static str,
) -> Result<()> {
    match ids.get(id) {
        Some(&(_, first_line)) => Err(SimgridError::DuplicateId {
            line,
            kind,
            id: id.to_string(),
            first_line,
        }),
        None => Ok(()),
    }
}

/// What the reader has built so far.
pub(super) struct Reader<'a, 'input> {
    pub(super) doc: &'a Document<'input>,
    pub(super) options: SimgridOptions,
    pub(super) processors: Vec<Processor>,
    pub(super) host_points: Vec<usize>,
    pub(super) points: Vec<NetPoint>,
    pub(super) point_ids: HashMap<String, (usize, u32)>,
    pub(super) links: Vec<Link>,
    pub(super) link_ids: HashMap<String, (LinkDecl, u32)>,
    pub(super) zones: Vec<Zone>,
    pub(super) zone_ids: HashMap<String, (usize, u32)>,
    /// Routes found in the first pass, resolved in the second: (zone, element).
    pub(super) routes: Vec<(usize, Node<'a, 'input>)>,
    /// Fat-tree compute nodes and links made so far (SimGrid numbers both over
    /// the whole platform).
    pub(super) fat_tree_positions: usize,
    pub(super) fat_tree_links: usize,
}

/// Reads a SimGrid platform file (version 4.1) given as text.
///
/// # Arguments
/// * `text`: the whole file;
/// * `options`: flops per unit of work and bytes per unit of data.
///
/// # Returns
/// The [`Platform`]: one processor per host in document order, the links (split
/// duplex ones as two), and the route of every ordered pair of hosts.
///
/// # Errors
/// [`SimgridError::Xml`] for malformed XML, [`SimgridError::Version`],
/// [`SimgridError::MissingAttribute`], [`SimgridError::BadValue`] (bad number or
/// unit, bad radical, bad keyword), [`SimgridError::Unsupported`],
/// [`SimgridError::DuplicateId`], [`SimgridError::UnknownReference`],
/// [`SimgridError::Platform`] (no host, or a bad option). Never panics.
///
/// # Complexity
/// O(n) to read n bytes, plus, for h hosts, O(h² · L) to build the routes (L: the
/// longest route) and O(V · E log V) per Floyd/Dijkstra zone of V nodes and E
/// declared routes.
///
/// # Example
/// ```
/// use hetbal::platform::simgrid::{read_simgrid, SimgridError, SimgridOptions};
/// //  a (1Gf) ==[l 125MBps, 50us]== b (500Mf)
/// let xml = r#"<?xml version='1.0'?>
/// <!DOCTYPE platform SYSTEM "https://simgrid.org/simgrid.dtd">
/// <platform version="4.1">
///   <zone id="z" routing="Full">
///     <host id="a" speed="1Gf"/>
///     <host id="b" speed="500Mf"/>
///     <link id="l" bandwidth="125MBps" latency="50us"/>
///     <route src="a" dst="b"><link_ctn id="l"/></route>
///   </zone>
/// </platform>"#;
/// let opts = SimgridOptions { flops_per_unit: 1e9, unit_bytes: 1e6 };
/// let p = read_simgrid(xml, &opts).unwrap();
/// assert_eq!((p.w(0), p.w(1)), (1.0, 2.0));
/// assert_eq!(p.cost(1, 0), 1e6 / 125e6); // symmetrical by default
///
/// let err = read_simgrid(&xml.replace("125MBps", "125MXps"), &opts).unwrap_err();
/// assert!(matches!(err, SimgridError::BadValue { line: 7, .. }));
/// ```
pub fn read_simgrid(text: &str, options: &SimgridOptions) -> Result<Platform> {
    for (name, v) in [
        ("flops_per_unit", options.flops_per_unit),
        ("unit_bytes", options.unit_bytes),
    ] {
        if !(v.is_finite() && v > 0.0) {
            return Err(SimgridError::Platform(PlatformError::NetworkForm {
                reason: if name == "unit_bytes" {
                    "unit_bytes must be finite and > 0"
                } else {
                    "flops_per_unit must be finite and > 0"
                },
            }));
        }
    }
    let doc = Document::parse_with_options(
        text,
        ParsingOptions {
            allow_dtd: true,
            nodes_limit: 4_000_000,
        },
    )
    .map_err(|e| {
        let pos = e.pos();
        SimgridError::Xml {
            line: pos.row,
            column: pos.col,
            message: e.to_string(),
        }
    })?;
    let mut reader = Reader {
        doc: &doc,
        options: *options,
        processors: Vec::new(),
        host_points: Vec::new(),
        points: Vec::new(),
        point_ids: HashMap::new(),
        links: Vec::new(),
        link_ids: HashMap::new(),
        zones: Vec::new(),
        zone_ids: HashMap::new(),
        routes: Vec::new(),
        fat_tree_positions: 0,
        fat_tree_links: 0,
    };
    reader.read_root()?;
    reader.resolve_routes()?;
    reader.shortest_paths();
    reader.into_platform()
}

/// The element's name, for messages.
pub(super) fn name_of(node: Node) -> String {
    node.tag_name().name().to_string()
}

impl<'a, 'input> Reader<'a, 'input> {
    pub(super) fn line(&self, node: Node) -> u32 {
        self.doc.text_pos_at(node.range().start).row
    }

    pub(super) fn unsupported(&self, node: Node, what: impl Into<String>) -> SimgridError {
        SimgridError::Unsupported {
            line: self.line(node),
            element: name_of(node),
            what: what.into(),
        }
    }

    pub(super) fn require(
        &self,
        node: Node<'a, 'input>,
        attribute: &'static str,
    ) -> Result<&'a str> {
        node.attribute(attribute)
            .ok_or_else(|| SimgridError::MissingAttribute {
                line: self.line(node),
                element: name_of(node),
                attribute,
            })
    }

    pub(super) fn bad(
        &self,
        node: Node,
        attribute: &str,
        value: &str,
        reason: impl Into<String>,
    ) -> SimgridError {
        SimgridError::BadValue {
            line: self.line(node),
            element: name_of(node),
            attribute: attribute.to_string(),
            value: value.to_string(),
            reason: reason.into(),
        }
    }

    /// Refuses attributes outside `known`; `refused` lists known but unsupported ones.
    pub(super) fn check_attributes(
        &self,
        node: Node,
        known: &[&str],
        refused: &[&str],
    ) -> Result<()> {
        for a in node.attributes() {
            let name = a.name();
            if refused.contains(&name) {
                return Err(self.unsupported(node, format!("attribute `{name}` is not supported")));
            }
            if !known.contains(&name) {
                return Err(self.unsupported(
                    node,
                    format!("unknown attribute `{name}` (not in SimGrid's platform format 4.1)"),
                ));
            }
        }
        Ok(())
    }

    /// Only `<prop>` (and the listed) children, all ignored.
    pub(super) fn check_children(&self, node: Node, allowed: &[&str]) -> Result<()> {
        for child in node.children().filter(Node::is_element) {
            let n = child.tag_name().name();
            if n != "prop" && !allowed.contains(&n) {
                return Err(
                    self.unsupported(child, format!("not allowed inside <{}>", name_of(node)))
                );
            }
        }
        Ok(())
    }

    pub(super) fn quantity(
        &self,
        node: Node,
        attribute: &str,
        text: &str,
        q: Quantity,
    ) -> Result<f64> {
        units::parse(text, q).map_err(|e| self.bad(node, attribute, text, e.to_string()))
    }

    pub(super) fn sharing(
        &self,
        node: Node,
        attribute: &str,
        text: Option<&str>,
        default: SharingPolicy,
    ) -> Result<SharingPolicy> {
        match text {
            None => Ok(default),
            Some(t) => match t.to_ascii_uppercase().as_str() {
                "SHARED" => Ok(SharingPolicy::Shared),
                "FATPIPE" => Ok(SharingPolicy::Fatpipe),
                "SPLITDUPLEX" | "FULLDUPLEX" => Ok(SharingPolicy::Splitduplex),
                "WIFI" => Err(self.unsupported(node, "sharing policy WIFI is not supported")),
                _ => Err(self.bad(
                    node,
                    attribute,
                    t,
                    "expected SHARED, FATPIPE or SPLITDUPLEX",
                )),
            },
        }
    }

    pub(super) fn new_zone(
        &mut self,
        node: Node,
        id: &str,
        parent: Option<usize>,
        routing: Routing,
    ) -> Result<usize> {
        let line = self.line(node);
        new_id(&self.zone_ids, id, line, "zone")?;
        let z = self.zones.len();
        self.zones.push(Zone {
            id: id.to_string(),
            parent,
            routing,
            nodes: Vec::new(),
            node_index: HashMap::new(),
            hops: Vec::new(),
            paths: Vec::new(),
            backbone: None,
            router: None,
            topology: Topology::Flat,
        });
        self.zone_ids.insert(id.to_string(), (z, line));
        if let Some(p) = parent {
            self.zones[p].local(NodeRef::Zone(z));
        }
        Ok(z)
    }

    pub(super) fn new_point(
        &mut self,
        node: Node,
        id: &str,
        zone: usize,
        host: Option<Processor>,
    ) -> Result<usize> {
        let line = self.line(node);
        new_id(&self.point_ids, id, line, "host or router")?;
        let k = self.points.len();
        if let Some(p) = host {
            if self.processors.len() >= MAX_HOSTS {
                return Err(self.unsupported(node, format!("more than {MAX_HOSTS} hosts")));
            }
            self.processors.push(p);
            self.host_points.push(k);
        }
        self.points.push(NetPoint {
            zone,
            private: None,
            rank: None,
        });
        self.point_ids.insert(id.to_string(), (k, line));
        self.zones[zone].local(NodeRef::Point(k));
        Ok(k)
    }

    pub(super) fn new_link(
        &mut self,
        node: Node,
        id: &str,
        bandwidth: f64,
        latency: f64,
        sharing: SharingPolicy,
    ) -> Result<LinkDecl> {
        let line = self.line(node);
        if bandwidth <= 0.0 {
            return Err(self.bad(node, "bandwidth", &bandwidth.to_string(), "must be > 0"));
        }
        let names: Vec<String> = if sharing == SharingPolicy::Splitduplex {
            vec![format!("{id}_UP"), format!("{id}_DOWN"), id.to_string()]
        } else {
            vec![id.to_string()]
        };
        for n in &names {
            new_id(&self.link_ids, n, line, "link")?;
        }
        let mut push = |name: String| {
            self.links.push(Link {
                name,
                bandwidth,
                latency,
                sharing,
            });
            self.links.len() - 1
        };
        let decl = if sharing == SharingPolicy::Splitduplex {
            let up = push(names[0].clone());
            let down = push(names[1].clone());
            self.link_ids
                .insert(names[0].clone(), (LinkDecl::Single(up), line));
            self.link_ids
                .insert(names[1].clone(), (LinkDecl::Single(down), line));
            LinkDecl::Split { up, down }
        } else {
            LinkDecl::Single(push(names[0].clone()))
        };
        self.link_ids.insert(id.to_string(), (decl, line));
        Ok(decl)
    }

    fn read_root(&mut self) -> Result<()> {
        let root = self.doc.root_element();
        let line = self.line(root);
        if root.tag_name().name() != "platform" {
            return Err(SimgridError::Version {
                line,
                found: format!("root element <{}>", name_of(root)),
            });
        }
        match root.attribute("version") {
            Some("4" | "4.0" | "4.1") => {}
            Some(v) => {
                return Err(SimgridError::Version {
                    line,
                    found: format!("version=\"{v}\" (only version 4.1 is read)"),
                })
            }
            None => {
                return Err(SimgridError::Version {
                    line,
                    found: "no version attribute".to_string(),
                })
            }
        }
        self.check_attributes(root, &["version"], &[])?;
        // A virtual zone holds the top-level zones and clusters.
        let top = self.new_zone(root, "", None, Routing::Full)?;
        self.zone_ids.remove("");
        for child in root.children().filter(Node::is_element) {
            match child.tag_name().name() {
                "config" | "trace" | "trace_connect" | "actor" | "process" => {}
                "zone" | "AS" => self.read_zone(child, top, 1)?,
                "cluster" => self.read_cluster(child, top)?,
                "include" => {
                    return Err(
                        self.unsupported(child, "included files are not supported: give one file")
                    )
                }
                other => {
                    return Err(self.unsupported(
                        child,
                        format!("<{other}> is not allowed directly inside <platform>"),
                    ))
                }
            }
        }
        Ok(())
    }

    fn read_zone(&mut self, node: Node<'a, 'input>, parent: usize, depth: usize) -> Result<()> {
        if depth > MAX_ZONE_DEPTH {
            return Err(
                self.unsupported(node, format!("zones nested deeper than {MAX_ZONE_DEPTH}"))
            );
        }
        self.check_attributes(node, &["id", "routing"], &[])?;
        let id = self.require(node, "id")?;
        let routing_text = self.require(node, "routing")?;
        let routing = match routing_text.to_ascii_lowercase().as_str() {
            "full" => Routing::Full,
            "floyd" => Routing::Floyd,
            "dijkstra" | "dijkstracache" => Routing::Dijkstra,
            "cluster" | "vivaldi" | "wifi" | "none" | "clusterzone" => {
                return Err(self.unsupported(
                    node,
                    format!(
                        "routing=\"{routing_text}\" is not supported (Full, Floyd, Dijkstra are)"
                    ),
                ))
            }
            _ => {
                return Err(self.bad(
                    node,
                    "routing",
                    routing_text,
                    "expected Full, Floyd or Dijkstra",
                ))
            }
        };
        let z = self.new_zone(node, id, Some(parent), routing)?;
        for child in node.children().filter(Node::is_element) {
            match child.tag_name().name() {
                "prop" => {}
                "host" => self.read_host(child, z)?,
                "router" => {
                    self.check_attributes(child, &["id", "coordinates"], &[])?;
                    self.check_children(child, &[])?;
                    let id = self.require(child, "id")?;
                    self.new_point(child, id, z, None)?;
                }
                "link" => self.read_link(child)?,
                "route" | "zoneRoute" | "ASroute" => self.routes.push((z, child)),
                "zone" | "AS" => self.read_zone(child, z, depth + 1)?,
                "cluster" => self.read_cluster(child, z)?,
                "bypassRoute" | "bypassZoneRoute" | "bypassASroute" | "cabinet" | "backbone"
                | "peer" | "storage" | "storage_type" | "mount" | "include" => {
                    return Err(self.unsupported(child, "this element is not supported"))
                }
                "trace" | "trace_connect" => {}
                other => {
                    return Err(
                        self.unsupported(child, format!("<{other}> is not allowed inside <zone>"))
                    )
                }
            }
        }
        Ok(())
    }

    /// An optional `core` attribute: a whole number >= 1 (one process per host, so
    /// not a multiplier of the speed).
    pub(super) fn check_core(&self, node: Node) -> Result<()> {
        if let Some(c) = node.attribute("core") {
            if !matches!(c.trim().parse::<u32>(), Ok(n) if n >= 1) {
                return Err(self.bad(node, "core", c, "expected a whole number >= 1"));
            }
        }
        Ok(())
    }

    /// The time per unit of work of a host computing `speed` flops per second
    /// (`speed_text` as written, for the message): `flops_per_unit / speed`.
    pub(super) fn work_time(&self, node: Node, speed_text: &str, speed: f64) -> Result<f64> {
        let w = self.options.flops_per_unit / speed;
        if !(w.is_finite() && w > 0.0) {
            return Err(self.bad(
                node,
                "speed",
                speed_text,
                "gives a time per unit of work that is not finite and > 0",
            ));
        }
        Ok(w)
    }

    pub(super) fn host_speed(
        &self,
        node: Node,
        attribute: &str,
        text: &str,
        pstate: usize,
    ) -> Result<f64> {
        let speeds: Vec<&str> = text.split(',').collect();
        let chosen = speeds.get(pstate).ok_or_else(|| {
            self.bad(
                node,
                "pstate",
                &pstate.to_string(),
                format!("the speed list has {} entries", speeds.len()),
            )
        })?;
        let speed = self.quantity(node, attribute, chosen, Quantity::Speed)?;
        if speed <= 0.0 {
            return Err(self.bad(node, attribute, text, "the speed must be > 0"));
        }
        Ok(speed)
    }

    fn read_host(&mut self, node: Node<'a, 'input>, zone: usize) -> Result<()> {
        self.check_attributes(
            node,
            &[
                "id",
                "speed",
                "core",
                "pstate",
                "speed_file",
                "availability_file",
                "state_file",
                "coordinates",
            ],
            &[],
        )?;
        self.check_children(node, &["disk"])?;
        let id = self.require(node, "id")?;
        let speed_text = self.require(node, "speed")?;
        let pstate = match node.attribute("pstate") {
            None => 0,
            Some(t) => t
                .trim()
                .parse::<usize>()
                .map_err(|_| self.bad(node, "pstate", t, "expected a whole number >= 0"))?,
        };
        self.check_core(node)?;
        let speed = self.host_speed(node, "speed", speed_text, pstate)?;
        let w = self.work_time(node, speed_text, speed)?;
        self.new_point(node, id, zone, Some(Processor::new(id, w)))?;
        Ok(())
    }

    fn read_link(&mut self, node: Node<'a, 'input>) -> Result<()> {
        self.check_attributes(
            node,
            &[
                "id",
                "bandwidth",
                "latency",
                "sharing_policy",
                "bandwidth_file",
                "latency_file",
                "state_file",
            ],
            &[],
        )?;
        self.check_children(node, &[])?;
        let id = self.require(node, "id")?;
        let bw_text = self.require(node, "bandwidth")?;
        let bandwidth = self.quantity(node, "bandwidth", bw_text, Quantity::Bandwidth)?;
        if bandwidth <= 0.0 {
            return Err(self.bad(node, "bandwidth", bw_text, "must be > 0"));
        }
        let latency = match node.attribute("latency") {
            None => 0.0,
            Some(t) => self.quantity(node, "latency", t, Quantity::Time)?,
        };
        let sharing = self.sharing(
            node,
            "sharing_policy",
            node.attribute("sharing_policy"),
            SharingPolicy::Shared,
        )?;
        self.new_link(node, id, bandwidth, latency, sharing)?;
        Ok(())
    }
}
