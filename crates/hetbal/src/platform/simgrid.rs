//! SimGrid platform XML (version 4.1) reader (cargo feature `simgrid`).
//!
//! Reads the text of a platform file (no file access here: the caller reads it)
//! into a [`Platform`]: hosts become processors (`w = flops_per_unit / speed`),
//! links become [`Link`]s (a SPLITDUPLEX link becomes two, `ID_UP` and `ID_DOWN`),
//! and the route between every ordered pair of hosts is computed as SimGrid does.
//!
//! Supported:
//! * `<zone>` (and its old name `<AS>`) with `routing="Full"`, `"Floyd"`,
//!   `"Dijkstra"` or `"DijkstraCache"` (case-insensitive), nested to any depth up to
//!   [`MAX_ZONE_DEPTH`];
//! * `<host id speed [pstate] [core] ...>` (a speed list selects the `pstate`
//!   entry; one process per host, so `core` is not a multiplier), `<router id>`;
//! * `<link id bandwidth [latency] [sharing_policy]>` with `SHARED`, `FATPIPE`,
//!   `SPLITDUPLEX` (and its old name `FULLDUPLEX`);
//! * `<route src dst [symmetrical]>` and `<zoneRoute src dst gw_src gw_dst
//!   [symmetrical]>` (old name `<ASroute>`) with `<link_ctn id [direction]>`; the
//!   reverse of a symmetrical route takes the links in reverse order with the
//!   directions of split-duplex links swapped;
//! * `<cluster id prefix suffix radical speed bw lat [sharing_policy]
//!   [bb_bw bb_lat bb_sharing_policy] [router_id]>` with flat topology: host `i`
//!   reaches host `j` through `ID_link_i` (up), the backbone `ID_backbone` if any,
//!   and `ID_link_j` (down); the cluster's router `PREFIX ID _router SUFFIX`
//!   (or `router_id`) is its gateway;
//! * `<cluster topology="TORUS" topo_parameters="d1,d2,...">` as SimGrid 3.32
//!   builds it: host of rank `r` (the `r`-th radical; `d1·d2·…` hosts) has one link
//!   per dimension `j`, `ID_link_from_r_to_s` to its next neighbour `s` in that
//!   dimension (wrapping round); routes go dimension after dimension, each the
//!   shorter way round (SimGrid's rule, taken from the source), on the link's UP
//!   half going up and on the lower node's DOWN half going down;
//! * `<cluster topology="FAT_TREE" topo_parameters="h;m1,…,mh;w1,…,wh;p1,…,ph">`
//!   as SimGrid 3.32 builds it: `h` levels, `mi` children and `wi` parents per
//!   node at level `i`, `pi` parallel links between them; switches are labelled
//!   and joined as SimGrid does, links are named `link_from_CHILD_PARENT_N` (N
//!   counting the fat-tree links of the whole file), and routes go up by d-mod-k
//!   (on the destination's position) to the nearest common ancestor, then down.
//!   Neither topology has a router: a `<zoneRoute>` uses one of its hosts as
//!   gateway;
//! * ignored, as they do not change a static model: `<config>`, `<prop>`,
//!   `<disk>`, `<trace>`, `<trace_connect>`, `<actor>`/`<process>`, profile files
//!   (`speed_file`, `bandwidth_file`, ...), `coordinates`, loopback attributes.
//!
//! Refused with [`SimgridError::Unsupported`]: other routings (`Cluster`,
//! `Vivaldi`, `Wifi`, `None`), `topology="DRAGONFLY"`, `router_id` and backbones
//! on TORUS and FAT_TREE clusters (SimGrid ignores them), `limiter_link`,
//! `<cabinet>`, `<backbone>`, `<peer>`, `<bypassRoute>`, `<bypassZoneRoute>`,
//! `<include>`, the `WIFI` sharing policy. A pair of hosts with no route (a `Full`
//! zone that lists none, unconnected graphs) gets cost `f64::INFINITY`.
//!
//! Shortest paths in Floyd and Dijkstra zones count the links of each declared
//! route (ties: the route declared first); this matches SimGrid whenever the
//! shortest path is unique.

use std::collections::{BinaryHeap, HashMap};
use std::fmt;

use roxmltree::{Document, Node, ParsingOptions};

use super::units::{self, Quantity};
use super::{Link, Platform, PlatformError, Processor, Route, SharingPolicy};

/// Deepest zone nesting accepted (deeper files are refused, not a stack overflow).
pub const MAX_ZONE_DEPTH: usize = 64;

/// Most hosts accepted: the model keeps one route per ordered pair of hosts.
pub const MAX_HOSTS: usize = 4096;

/// How SimGrid's quantities become the model's units.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SimgridOptions {
    /// Flops in one unit of work: `w = flops_per_unit / speed` (default 1).
    pub flops_per_unit: f64,
    /// Bytes in one unit of data: `c = unit_bytes / bottleneck bandwidth` (default 1).
    pub unit_bytes: f64,
}

impl Default for SimgridOptions {
    fn default() -> Self {
        SimgridOptions {
            flops_per_unit: 1.0,
            unit_bytes: 1.0,
        }
    }
}

/// Why a SimGrid file could not be read. Every variant but `Platform` carries the
/// line (from 1) of the element at fault.
#[derive(Clone, Debug, PartialEq)]
pub enum SimgridError {
    /// The text is not well-formed XML.
    Xml {
        /// Line of the error.
        line: u32,
        /// Column of the error.
        column: u32,
        /// What the XML parser says.
        message: String,
    },
    /// The root is not `<platform version="4.1">` (versions 4, 4.0 and 4.1 are read).
    Version {
        /// Line of the root element.
        line: u32,
        /// What was found instead.
        found: String,
    },
    /// A required attribute is missing.
    MissingAttribute {
        /// Line of the element.
        line: u32,
        /// The element.
        element: String,
        /// The attribute.
        attribute: &'static str,
    },
    /// An attribute has a value that cannot be read or breaks a rule.
    BadValue {
        /// Line of the element.
        line: u32,
        /// The element.
        element: String,
        /// The attribute.
        attribute: String,
        /// The value found.
        value: String,
        /// Why it is wrong.
        reason: String,
    },
    /// An element, attribute or value that SimGrid knows but this reader does not
    /// support, or that is unknown to SimGrid 4.1, or misplaced.
    Unsupported {
        /// Line of the element.
        line: u32,
        /// The element.
        element: String,
        /// What is not supported.
        what: String,
    },
    /// Two hosts/routers, links or zones share an id.
    DuplicateId {
        /// Line of the second declaration.
        line: u32,
        /// `host or router`, `link` or `zone`.
        kind: &'static str,
        /// The id.
        id: String,
        /// Line of the first declaration.
        first_line: u32,
    },
    /// An attribute names a host, router, link or zone that is not declared, or not
    /// where it must be.
    UnknownReference {
        /// Line of the element.
        line: u32,
        /// The element.
        element: String,
        /// The attribute (`src`, `dst`, `gw_src`, `gw_dst`, `id`).
        attribute: &'static str,
        /// The id given.
        id: String,
        /// What was looked for and where.
        expected: String,
    },
    /// The platform read is invalid as a model (e.g. no host at all).
    Platform(PlatformError),
}

impl fmt::Display for SimgridError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        use SimgridError::*;
        match self {
            Xml {
                line,
                column,
                message,
            } => write!(f, "line {line}, column {column}: not well-formed XML: {message}"),
            Version { line, found } => write!(
                f,
                "line {line}: expected <platform version=\"4.1\"> (SimGrid platform version 4), found {found}"
            ),
            MissingAttribute {
                line,
                element,
                attribute,
            } => write!(f, "line {line}: <{element}> lacks the attribute `{attribute}`"),
            BadValue {
                line,
                element,
                attribute,
                value,
                reason,
            } => write!(
                f,
                "line {line}: <{element}> attribute `{attribute}` = {value:?}: {reason}"
            ),
            Unsupported {
                line,
                element,
                what,
            } => write!(f, "line {line}: <{element}>: {what}"),
            DuplicateId {
                line,
                kind,
                id,
                first_line,
            } => write!(
                f,
                "line {line}: {kind} id {id:?} already declared at line {first_line}"
            ),
            UnknownReference {
                line,
                element,
                attribute,
                id,
                expected,
            } => write!(
                f,
                "line {line}: <{element}> attribute `{attribute}` = {id:?}: {expected}"
            ),
            Platform(e) => write!(f, "invalid platform: {e}"),
        }
    }
}

impl std::error::Error for SimgridError {}

type Result<T> = std::result::Result<T, SimgridError>;

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

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
enum NodeRef {
    Point(usize),
    Zone(usize),
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Dir {
    None,
    Up,
    Down,
}

#[derive(Clone, Copy, Debug)]
enum LinkDecl {
    Single(usize),
    Split { up: usize, down: usize },
}

#[derive(Clone, Copy, Debug)]
struct LinkRef {
    decl: LinkDecl,
    dir: Dir,
}

impl LinkRef {
    fn resolve(self) -> usize {
        match (self.decl, self.dir) {
            (LinkDecl::Single(l), _) => l,
            (LinkDecl::Split { up, .. }, Dir::Up | Dir::None) => up,
            (LinkDecl::Split { down, .. }, Dir::Down) => down,
        }
    }
    fn reversed(self) -> LinkRef {
        LinkRef {
            decl: self.decl,
            dir: match self.dir {
                Dir::Up => Dir::Down,
                Dir::Down => Dir::Up,
                Dir::None => Dir::None,
            },
        }
    }
}

#[derive(Clone, Debug)]
struct Hop {
    to: usize, // local node index
    links: Vec<usize>,
    gw_src: usize,
    gw_dst: usize,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Routing {
    Full,
    Floyd,
    Dijkstra,
    Cluster,
}

#[derive(Debug)]
struct Zone {
    id: String,
    parent: Option<usize>,
    routing: Routing,
    /// Local nodes and their index.
    nodes: Vec<NodeRef>,
    node_index: HashMap<NodeRef, usize>,
    /// Declared hops, by source local node.
    hops: Vec<Vec<Hop>>,
    /// Floyd/Dijkstra: for each source, the hop taken to reach each node
    /// (`(previous node, hop index in hops[previous])`).
    paths: Vec<Vec<Option<(usize, usize)>>>,
    /// Cluster zones: backbone link and router netpoint.
    backbone: Option<usize>,
    router: Option<usize>,
    /// Cluster zones: how the hosts are joined.
    topology: Topology,
}

/// The topology of a cluster zone.
#[derive(Debug)]
enum Topology {
    /// Private links to a backbone (or to nothing).
    Flat,
    /// Dimension sizes, and for each rank and dimension the (UP, DOWN) halves of
    /// its link to the next node.
    Torus {
        dims: Vec<usize>,
        links: Vec<Vec<(usize, usize)>>,
    },
    FatTree(FatTree),
}

/// A fat tree as SimGrid builds it (FatTreeZone).
#[derive(Debug)]
struct FatTree {
    levels: usize,
    down: Vec<usize>,
    up: Vec<usize>,
    count: Vec<usize>,
    /// Compute nodes (index = rank) then switches, in SimGrid's order.
    nodes: Vec<FtNode>,
    /// (parent node, child node, UP link, DOWN link).
    links: Vec<(usize, usize, usize, usize)>,
}

#[derive(Debug)]
struct FtNode {
    /// SimGrid's id (rank for compute nodes; 2n-1, 2n-2, ... for switches).
    id: usize,
    level: usize,
    position: usize,
    label: Vec<usize>,
    /// Indices into `links`, by port.
    parents: Vec<Option<usize>>,
    children: Vec<Option<usize>>,
}

impl FatTree {
    fn is_in_sub_tree(&self, root: usize, node: usize) -> bool {
        let (r, n) = (&self.nodes[root], &self.nodes[node]);
        if r.level <= n.level {
            return false;
        }
        (0..n.level).all(|i| r.label[i] == n.label[i])
            && (r.level..self.levels).all(|i| r.label[i] == n.label[i])
    }

    fn are_related(&self, parent: usize, child: usize) -> bool {
        let (p, c) = (&self.nodes[parent], &self.nodes[child]);
        p.level == c.level + 1
            && (0..self.levels).all(|i| p.label[i] == c.label[i] || i + 1 == p.level)
    }

    /// SimGrid's route from rank `src` to rank `dst`; None where SimGrid would
    /// fail (a missing port, or no progress).
    fn route(&self, src: usize, dst: usize, out: &mut Vec<usize>) -> Option<()> {
        if src == dst {
            return Some(());
        }
        let mut cur = src;
        // Up, d-mod-k on the destination's position.
        while !self.is_in_sub_tree(cur, dst) {
            let node = &self.nodes[cur];
            let mut d = self.nodes[dst].position;
            for i in 0..node.level {
                d /= self.up[i] * self.count[i];
            }
            let k = *self.up.get(node.level)? * self.count[node.level];
            d %= k;
            let link = (*node.parents.get(d)?)?;
            let (parent, _, up, _) = self.links[link];
            out.push(up);
            cur = parent;
        }
        // Down; the loop over ports goes on after a step down, as SimGrid's does.
        while cur != dst {
            let before = cur;
            let lvl = self.nodes[cur].level;
            let d = self.nodes[src].position % self.count[lvl - 1];
            let mut i = d * self.down[lvl - 1];
            while i < self.nodes[cur].children.len() {
                let level = self.nodes[cur].level;
                if i % self.down[level - 1] == self.nodes[dst].label[level - 1] {
                    let link = self.nodes[cur].children[i]?;
                    let (_, child, _, down) = self.links[link];
                    out.push(down);
                    cur = child;
                }
                i += 1;
            }
            if cur == before {
                return None;
            }
        }
        Some(())
    }
}

impl Zone {
    fn local(&mut self, node: NodeRef) -> usize {
        if let Some(&i) = self.node_index.get(&node) {
            return i;
        }
        let i = self.nodes.len();
        self.nodes.push(node);
        self.node_index.insert(node, i);
        self.hops.push(Vec::new());
        i
    }
}

#[derive(Debug)]
struct NetPoint {
    zone: usize,
    /// Cluster hosts: private links (up, down).
    private: Option<(usize, usize)>,
    /// Hosts of TORUS and FAT_TREE clusters: the rank.
    rank: Option<usize>,
}

struct Reader<'a, 'input> {
    doc: &'a Document<'input>,
    options: SimgridOptions,
    processors: Vec<Processor>,
    host_points: Vec<usize>,
    points: Vec<NetPoint>,
    point_ids: HashMap<String, (usize, u32)>,
    links: Vec<Link>,
    link_ids: HashMap<String, (LinkDecl, u32)>,
    zones: Vec<Zone>,
    zone_ids: HashMap<String, (usize, u32)>,
    /// Routes found in the first pass, resolved in the second: (zone, element).
    routes: Vec<(usize, Node<'a, 'input>)>,
    /// Fat-tree compute nodes and links made so far (SimGrid numbers both over
    /// the whole platform).
    fat_tree_positions: usize,
    fat_tree_links: usize,
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

fn name_of(node: Node) -> String {
    node.tag_name().name().to_string()
}

impl<'a, 'input> Reader<'a, 'input> {
    fn line(&self, node: Node) -> u32 {
        self.doc.text_pos_at(node.range().start).row
    }

    fn unsupported(&self, node: Node, what: impl Into<String>) -> SimgridError {
        SimgridError::Unsupported {
            line: self.line(node),
            element: name_of(node),
            what: what.into(),
        }
    }

    fn require(&self, node: Node<'a, 'input>, attribute: &'static str) -> Result<&'a str> {
        node.attribute(attribute)
            .ok_or_else(|| SimgridError::MissingAttribute {
                line: self.line(node),
                element: name_of(node),
                attribute,
            })
    }

    fn bad(
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
    fn check_attributes(&self, node: Node, known: &[&str], refused: &[&str]) -> Result<()> {
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
    fn check_children(&self, node: Node, allowed: &[&str]) -> Result<()> {
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

    fn quantity(&self, node: Node, attribute: &str, text: &str, q: Quantity) -> Result<f64> {
        units::parse(text, q).map_err(|e| self.bad(node, attribute, text, e.to_string()))
    }

    fn sharing(
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

    fn new_zone(
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

    fn new_point(
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

    fn new_link(
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

    fn host_speed(&self, node: Node, attribute: &str, text: &str, pstate: usize) -> Result<f64> {
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
        if let Some(c) = node.attribute("core") {
            if !matches!(c.trim().parse::<u32>(), Ok(n) if n >= 1) {
                return Err(self.bad(node, "core", c, "expected a whole number >= 1"));
            }
        }
        let speed = self.host_speed(node, "speed", speed_text, pstate)?;
        let w = self.options.flops_per_unit / speed;
        if !(w.is_finite() && w > 0.0) {
            return Err(self.bad(
                node,
                "speed",
                speed_text,
                "gives a time per unit of work that is not finite and > 0",
            ));
        }
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

    fn radical(&self, node: Node, text: &str) -> Result<Vec<u64>> {
        let mut out = Vec::new();
        for part in text.split(',') {
            let part = part.trim();
            let num = |s: &str| {
                s.trim().parse::<u64>().map_err(|_| {
                    self.bad(
                        node,
                        "radical",
                        text,
                        format!("{s:?} is not a whole number"),
                    )
                })
            };
            let (a, b) = match part.split_once('-') {
                Some((a, b)) => (num(a)?, num(b)?),
                None => {
                    let a = num(part)?;
                    (a, a)
                }
            };
            if a > b {
                return Err(self.bad(node, "radical", text, format!("range {a}-{b} is empty")));
            }
            if b - a >= MAX_HOSTS as u64 || out.len() + (b - a) as usize >= MAX_HOSTS {
                return Err(self.unsupported(node, format!("more than {MAX_HOSTS} hosts")));
            }
            out.extend(a..=b);
        }
        Ok(out)
    }

    fn read_cluster(&mut self, node: Node<'a, 'input>, parent: usize) -> Result<()> {
        self.check_attributes(
            node,
            &[
                "id",
                "prefix",
                "suffix",
                "radical",
                "speed",
                "core",
                "bw",
                "lat",
                "sharing_policy",
                "bb_bw",
                "bb_lat",
                "bb_sharing_policy",
                "topology",
                "topo_parameters",
                "router_id",
                "loopback_bw",
                "loopback_lat",
                "availability_file",
                "state_file",
            ],
            &["limiter_link"],
        )?;
        self.check_children(node, &[])?;
        let id = self.require(node, "id")?;
        let prefix = node.attribute("prefix").unwrap_or("");
        let suffix = node.attribute("suffix").unwrap_or("");
        let radical_text = self.require(node, "radical")?;
        let speed_text = self.require(node, "speed")?;
        let bw_text = self.require(node, "bw")?;
        let lat_text = self.require(node, "lat")?;
        let topology = match node.attribute("topology") {
            None => "FLAT".to_string(),
            Some(t) => match t.to_ascii_uppercase().as_str() {
                "FLAT" => "FLAT".to_string(),
                "TORUS" | "FAT_TREE" => t.to_ascii_uppercase(),
                "DRAGONFLY" => {
                    return Err(self.unsupported(
                        node,
                        format!("attribute `topology` = \"{t}\" is not supported (FLAT, TORUS and FAT_TREE are)"),
                    ))
                }
                _ => {
                    return Err(self.bad(
                        node,
                        "topology",
                        t,
                        "expected FLAT, TORUS, FAT_TREE or DRAGONFLY",
                    ))
                }
            },
        };
        if topology != "FLAT" {
            for attribute in ["router_id", "bb_bw", "bb_lat", "bb_sharing_policy"] {
                if node.attribute(attribute).is_some() {
                    return Err(self.unsupported(
                        node,
                        format!("attribute `{attribute}` with topology {topology}: SimGrid ignores it there (no router, no backbone); remove it"),
                    ));
                }
            }
            if node.attribute("topo_parameters").is_none() {
                return Err(SimgridError::MissingAttribute {
                    line: self.line(node),
                    element: name_of(node),
                    attribute: "topo_parameters",
                });
            }
        }
        if let Some(c) = node.attribute("core") {
            if !matches!(c.trim().parse::<u32>(), Ok(n) if n >= 1) {
                return Err(self.bad(node, "core", c, "expected a whole number >= 1"));
            }
        }
        let radical = self.radical(node, radical_text)?;
        let speed = self.host_speed(node, "speed", speed_text, 0)?;
        let bw = self.quantity(node, "bw", bw_text, Quantity::Bandwidth)?;
        let lat = self.quantity(node, "lat", lat_text, Quantity::Time)?;
        let sharing = self.sharing(
            node,
            "sharing_policy",
            node.attribute("sharing_policy"),
            SharingPolicy::Splitduplex,
        )?;
        let backbone = match (node.attribute("bb_bw"), node.attribute("bb_lat")) {
            (None, None) => None,
            (None, Some(_)) => {
                return Err(SimgridError::MissingAttribute {
                    line: self.line(node),
                    element: name_of(node),
                    attribute: "bb_bw",
                })
            }
            (Some(b), lat) => {
                let bb_bw = self.quantity(node, "bb_bw", b, Quantity::Bandwidth)?;
                let bb_lat = match lat {
                    Some(t) => self.quantity(node, "bb_lat", t, Quantity::Time)?,
                    None => 0.0,
                };
                let bb_sharing = self.sharing(
                    node,
                    "bb_sharing_policy",
                    node.attribute("bb_sharing_policy"),
                    SharingPolicy::Shared,
                )?;
                if bb_sharing == SharingPolicy::Splitduplex {
                    return Err(self.bad(
                        node,
                        "bb_sharing_policy",
                        "SPLITDUPLEX",
                        "a backbone is SHARED or FATPIPE",
                    ));
                }
                match self.new_link(node, &format!("{id}_backbone"), bb_bw, bb_lat, bb_sharing)? {
                    LinkDecl::Single(l) => Some(l),
                    LinkDecl::Split { up, .. } => Some(up),
                }
            }
        };
        let z = self.new_zone(node, id, Some(parent), Routing::Cluster)?;
        self.zones[z].backbone = backbone;
        let w = self.options.flops_per_unit / speed;
        if !(w.is_finite() && w > 0.0) {
            return Err(self.bad(
                node,
                "speed",
                speed_text,
                "gives a time per unit of work that is not finite and > 0",
            ));
        }
        if topology != "FLAT" {
            let text = self.require(node, "topo_parameters")?;
            let hierarchical = Hierarchical {
                node,
                id,
                prefix,
                suffix,
                radical: &radical,
                w,
                bw,
                lat,
                sharing,
                zone: z,
            };
            return if topology == "TORUS" {
                self.torus(&hierarchical, text)
            } else {
                self.fat_tree(&hierarchical, text)
            };
        }
        for n in radical {
            let name = format!("{prefix}{n}{suffix}");
            let k = self.new_point(node, &name, z, Some(Processor::new(name.clone(), w)))?;
            let private = match self.new_link(node, &format!("{id}_link_{n}"), bw, lat, sharing)? {
                LinkDecl::Single(l) => (l, l),
                LinkDecl::Split { up, down } => (up, down),
            };
            self.points[k].private = Some(private);
        }
        let router_name = match node.attribute("router_id") {
            Some(r) => r.to_string(),
            None => format!("{prefix}{id}_router{suffix}"),
        };
        let r = self.new_point(node, &router_name, z, None)?;
        self.zones[z].router = Some(r);
        Ok(())
    }

    /// The hosts of a TORUS or FAT_TREE cluster: ranks `0..count`, named from the
    /// first `count` radicals (SimGrid refuses fewer, ignores the others).
    fn ranked_hosts(&mut self, c: &Hierarchical<'a, 'input, '_>, count: usize) -> Result<()> {
        if c.radical.len() < count {
            return Err(self.bad(
                c.node,
                "radical",
                &format!("{} hosts", c.radical.len()),
                format!("the topology has {count} hosts: give as many radicals"),
            ));
        }
        for (rank, n) in c.radical.iter().take(count).enumerate() {
            let name = format!("{}{n}{}", c.prefix, c.suffix);
            let k = self.new_point(
                c.node,
                &name,
                c.zone,
                Some(Processor::new(name.clone(), c.w)),
            )?;
            self.points[k].rank = Some(rank);
        }
        Ok(())
    }

    fn split_link(&mut self, c: &Hierarchical, name: &str) -> Result<(usize, usize)> {
        Ok(match self.new_link(c.node, name, c.bw, c.lat, c.sharing)? {
            LinkDecl::Single(l) => (l, l),
            LinkDecl::Split { up, down } => (up, down),
        })
    }

    /// Parses a list of whole numbers >= 1 separated by `sep`.
    fn counts(&self, node: Node, text: &str, part: &str, sep: char) -> Result<Vec<usize>> {
        part.split(sep)
            .map(|x| match x.trim().parse::<usize>() {
                Ok(v) if v >= 1 => Ok(v),
                _ => Err(self.bad(
                    node,
                    "topo_parameters",
                    text,
                    format!("{x:?} is not a whole number >= 1"),
                )),
            })
            .collect()
    }

    fn torus(&mut self, c: &Hierarchical<'a, 'input, '_>, text: &str) -> Result<()> {
        let dims = self.counts(c.node, text, text, ',')?;
        let count = dims
            .iter()
            .try_fold(1usize, |a, &d| a.checked_mul(d))
            .filter(|&n| n <= MAX_HOSTS)
            .ok_or_else(|| self.unsupported(c.node, format!("more than {MAX_HOSTS} hosts")))?;
        self.ranked_hosts(c, count)?;
        let mut links = Vec::with_capacity(count);
        for rank in 0..count {
            let mut own = Vec::with_capacity(dims.len());
            let mut product = 1;
            for &d in &dims {
                let next = if (rank / product) % d == d - 1 {
                    rank - (d - 1) * product
                } else {
                    rank + product
                };
                own.push(self.split_link(c, &format!("{}_link_from_{rank}_to_{next}", c.id))?);
                product *= d;
            }
            links.push(own);
        }
        self.zones[c.zone].topology = Topology::Torus { dims, links };
        Ok(())
    }

    fn fat_tree(&mut self, c: &Hierarchical<'a, 'input, '_>, text: &str) -> Result<()> {
        let parts: Vec<&str> = text.split(';').collect();
        if parts.len() != 4 {
            return Err(self.bad(
                c.node,
                "topo_parameters",
                text,
                "a fat tree is \"LEVELS;CHILDREN,...;PARENTS,...;LINKS,...\" (4 parts separated by ';')",
            ));
        }
        let levels = self.counts(c.node, text, parts[0], ',')?;
        let levels = match levels.as_slice() {
            [h] => *h,
            _ => {
                return Err(self.bad(
                    c.node,
                    "topo_parameters",
                    text,
                    "the first part is the number of levels",
                ))
            }
        };
        let down = self.counts(c.node, text, parts[1], ',')?;
        let up = self.counts(c.node, text, parts[2], ',')?;
        let count = self.counts(c.node, text, parts[3], ',')?;
        for (name, v) in [("children", &down), ("parents", &up), ("links", &count)] {
            if v.len() != levels {
                return Err(self.bad(
                    c.node,
                    "topo_parameters",
                    text,
                    format!("{levels} levels but {} {name} counts", v.len()),
                ));
            }
        }
        let too_many = || {
            self.unsupported(
                c.node,
                format!("more than {MAX_HOSTS} hosts or switches per level"),
            )
        };
        let product = |v: &[usize]| {
            v.iter()
                .try_fold(1usize, |a, &d| a.checked_mul(d))
                .filter(|&n| n <= MAX_HOSTS)
        };
        let hosts = product(&down).ok_or_else(too_many)?;
        // Nodes by level, as SimGrid counts them.
        let mut by_level = vec![hosts];
        for i in 0..levels {
            let mut v: Vec<usize> = up[..=i].to_vec();
            v.extend_from_slice(&down[i + 1..]);
            by_level.push(product(&v).ok_or_else(too_many)?);
        }
        self.ranked_hosts(c, hosts)?;
        let mut nodes: Vec<FtNode> = Vec::new();
        for rank in 0..hosts {
            nodes.push(FtNode {
                id: rank,
                level: 0,
                position: self.fat_tree_positions,
                label: vec![0; levels],
                parents: vec![None; up[0] * count[0]],
                children: Vec::new(),
            });
            self.fat_tree_positions += 1;
        }
        let mut id = 2 * hosts;
        for i in 0..levels {
            for j in 0..by_level[i + 1] {
                id -= 1;
                nodes.push(FtNode {
                    id,
                    level: i + 1,
                    position: j,
                    label: vec![0; levels],
                    parents: if i + 1 < levels {
                        vec![None; up[i + 1] * count[i + 1]]
                    } else {
                        Vec::new()
                    },
                    children: vec![None; down[i] * count[i]],
                });
            }
        }
        // Labels: an odometer per level, lowest digit first.
        let mut k = 0;
        for (i, &n) in by_level.iter().enumerate() {
            let max: Vec<usize> = (0..levels)
                .map(|j| if j + 1 > i { down[j] } else { up[j] })
                .collect();
            let mut label = vec![0; levels];
            for _ in 0..n {
                nodes[k].label.clone_from(&label);
                let mut pos = 0;
                while pos < levels {
                    label[pos] += 1;
                    if label[pos] >= max[pos] {
                        label[pos] = 0;
                        pos += 1;
                    } else {
                        break;
                    }
                }
                k += 1;
            }
        }
        let mut tree = FatTree {
            levels,
            down,
            up,
            count,
            nodes,
            links: Vec::new(),
        };
        let start_of = |level: usize| by_level[..level].iter().sum::<usize>();
        let mut k = 0;
        for level in 0..levels {
            for _ in 0..by_level[level] {
                let child = k;
                let first = start_of(level + 1);
                for parent in first..first + by_level[level + 1] {
                    if !tree.are_related(parent, child) {
                        continue;
                    }
                    for j in 0..tree.count[level] {
                        let parent_port = tree.nodes[child].label[level] + j * tree.down[level];
                        let child_port = tree.nodes[parent].label[level] + j * tree.up[level];
                        let name = format!(
                            "link_from_{}_{}_{}",
                            tree.nodes[child].id, tree.nodes[parent].id, self.fat_tree_links
                        );
                        self.fat_tree_links += 1;
                        let (l_up, l_down) = self.split_link(c, &name)?;
                        let link = tree.links.len();
                        tree.links.push((parent, child, l_up, l_down));
                        let bad_port = || {
                            self.bad(
                                c.node,
                                "topo_parameters",
                                text,
                                "the counts do not make a fat tree SimGrid can build (a port is out of range)",
                            )
                        };
                        *tree.nodes[parent]
                            .children
                            .get_mut(parent_port)
                            .ok_or_else(bad_port)? = Some(link);
                        *tree.nodes[child]
                            .parents
                            .get_mut(child_port)
                            .ok_or_else(bad_port)? = Some(link);
                    }
                }
                k += 1;
            }
        }
        self.zones[c.zone].topology = Topology::FatTree(tree);
        Ok(())
    }

    fn link_refs(&self, route: Node) -> Result<Vec<LinkRef>> {
        let mut out = Vec::new();
        for child in route.children().filter(Node::is_element) {
            if child.tag_name().name() != "link_ctn" {
                return Err(self.unsupported(
                    child,
                    format!("not allowed inside <{}> (only <link_ctn>)", name_of(route)),
                ));
            }
            self.check_attributes(child, &["id", "direction"], &[])?;
            self.check_children(child, &[])?;
            let id = self.require(child, "id")?;
            let dir = match child.attribute("direction") {
                None => Dir::None,
                Some(t) => match t.to_ascii_uppercase().as_str() {
                    "UP" => Dir::Up,
                    "DOWN" => Dir::Down,
                    "NONE" => Dir::None,
                    _ => return Err(self.bad(child, "direction", t, "expected UP, DOWN or NONE")),
                },
            };
            let (decl, _) =
                self.link_ids
                    .get(id)
                    .copied()
                    .ok_or_else(|| SimgridError::UnknownReference {
                        line: self.line(child),
                        element: "link_ctn".to_string(),
                        attribute: "id",
                        id: id.to_string(),
                        expected: "no <link> has this id".to_string(),
                    })?;
            if matches!(decl, LinkDecl::Split { .. }) && dir == Dir::None {
                return Err(SimgridError::MissingAttribute {
                    line: self.line(child),
                    element: "link_ctn".to_string(),
                    attribute: "direction",
                });
            }
            out.push(LinkRef { decl, dir });
        }
        Ok(out)
    }

    fn point_in(
        &self,
        node: Node,
        attribute: &'static str,
        id: &str,
        zone: usize,
    ) -> Result<usize> {
        let fail = |expected: String| SimgridError::UnknownReference {
            line: self.line(node),
            element: name_of(node),
            attribute,
            id: id.to_string(),
            expected,
        };
        let &(k, _) = self
            .point_ids
            .get(id)
            .ok_or_else(|| fail("no <host> or <router> has this id".to_string()))?;
        if self.points[k].zone != zone {
            return Err(fail(format!(
                "not a host or router of zone {:?}",
                self.zones[zone].id
            )));
        }
        Ok(k)
    }

    fn is_inside(&self, point: usize, zone: usize) -> bool {
        let mut z = Some(self.points[point].zone);
        while let Some(cur) = z {
            if cur == zone {
                return true;
            }
            z = self.zones[cur].parent;
        }
        false
    }

    fn resolve_routes(&mut self) -> Result<()> {
        let routes = std::mem::take(&mut self.routes);
        for (z, node) in routes {
            let element = node.tag_name().name();
            let symmetrical = match node.attribute("symmetrical") {
                None => true,
                Some(t) => match t.to_ascii_uppercase().as_str() {
                    "YES" | "TRUE" => true,
                    "NO" | "FALSE" => false,
                    _ => return Err(self.bad(node, "symmetrical", t, "expected YES or NO")),
                },
            };
            let refs = self.link_refs(node)?;
            let (from, to, gw_src, gw_dst) = if element == "route" {
                self.check_attributes(node, &["src", "dst", "symmetrical"], &["gw_src", "gw_dst"])?;
                let s = self.point_in(node, "src", self.require(node, "src")?, z)?;
                let d = self.point_in(node, "dst", self.require(node, "dst")?, z)?;
                (NodeRef::Point(s), NodeRef::Point(d), s, d)
            } else {
                self.check_attributes(
                    node,
                    &["src", "dst", "gw_src", "gw_dst", "symmetrical"],
                    &[],
                )?;
                let zone_of = |attribute: &'static str| -> Result<usize> {
                    let id = self.require(node, attribute)?;
                    match self.zone_ids.get(id) {
                        Some(&(child, _)) if self.zones[child].parent == Some(z) => Ok(child),
                        _ => Err(SimgridError::UnknownReference {
                            line: self.line(node),
                            element: name_of(node),
                            attribute,
                            id: id.to_string(),
                            expected: format!(
                                "not a zone directly inside zone {:?}",
                                self.zones[z].id
                            ),
                        }),
                    }
                };
                let s = zone_of("src")?;
                let d = zone_of("dst")?;
                let gateway = |attribute: &'static str, zone: usize| -> Result<usize> {
                    let id = self.require(node, attribute)?;
                    match self.point_ids.get(id) {
                        Some(&(k, _)) if self.is_inside(k, zone) => Ok(k),
                        _ => Err(SimgridError::UnknownReference {
                            line: self.line(node),
                            element: name_of(node),
                            attribute,
                            id: id.to_string(),
                            expected: format!(
                                "not a host or router inside zone {:?}",
                                self.zones[zone].id
                            ),
                        }),
                    }
                };
                let gs = gateway("gw_src", s)?;
                let gd = gateway("gw_dst", d)?;
                (NodeRef::Zone(s), NodeRef::Zone(d), gs, gd)
            };
            if from == to {
                // A loopback route (host to itself): not used by the model.
                continue;
            }
            let zone = &mut self.zones[z];
            let a = zone.local(from);
            let b = zone.local(to);
            zone.hops[a].push(Hop {
                to: b,
                links: refs.iter().map(|r| r.resolve()).collect(),
                gw_src,
                gw_dst,
            });
            if symmetrical {
                zone.hops[b].push(Hop {
                    to: a,
                    links: refs.iter().rev().map(|r| r.reversed().resolve()).collect(),
                    gw_src: gw_dst,
                    gw_dst: gw_src,
                });
            }
        }
        Ok(())
    }

    /// Floyd and Dijkstra zones: a shortest-path tree from every local node
    /// (Dijkstra, weight = number of links of a declared route).
    fn shortest_paths(&mut self) {
        for zone in &mut self.zones {
            if !matches!(zone.routing, Routing::Floyd | Routing::Dijkstra) {
                continue;
            }
            let n = zone.nodes.len();
            zone.paths = (0..n)
                .map(|src| {
                    let mut dist = vec![u64::MAX; n];
                    let mut pred: Vec<Option<(usize, usize)>> = vec![None; n];
                    let mut heap = BinaryHeap::new();
                    dist[src] = 0;
                    heap.push(std::cmp::Reverse((0u64, src)));
                    while let Some(std::cmp::Reverse((d, u))) = heap.pop() {
                        if d > dist[u] {
                            continue;
                        }
                        for (h, hop) in zone.hops[u].iter().enumerate() {
                            let nd = d + hop.links.len() as u64;
                            if nd < dist[hop.to] {
                                dist[hop.to] = nd;
                                pred[hop.to] = Some((u, h));
                                heap.push(std::cmp::Reverse((nd, hop.to)));
                            }
                        }
                    }
                    pred
                })
                .collect();
        }
    }

    /// The hops from local node `a` to local node `b` in zone `z`, or None.
    fn local_hops(&self, z: usize, a: usize, b: usize) -> Option<Vec<&Hop>> {
        let zone = &self.zones[z];
        match zone.routing {
            Routing::Full => zone.hops[a].iter().find(|h| h.to == b).map(|h| vec![h]),
            Routing::Floyd | Routing::Dijkstra => {
                let tree = &zone.paths[a];
                let mut out = Vec::new();
                let mut cur = b;
                while cur != a {
                    let (prev, h) = tree[cur]?;
                    out.push(&zone.hops[prev][h]);
                    cur = prev;
                    if out.len() > zone.nodes.len() {
                        return None;
                    }
                }
                out.reverse();
                Some(out)
            }
            Routing::Cluster => None,
        }
    }

    /// Appends the links from netpoint `a` to netpoint `b`; false when no route.
    fn route(&self, a: usize, b: usize, out: &mut Vec<usize>) -> bool {
        if a == b {
            return true;
        }
        // Ancestors of a, innermost first.
        let mut chain_a = Vec::new();
        let mut z = Some(self.points[a].zone);
        while let Some(cur) = z {
            chain_a.push(cur);
            z = self.zones[cur].parent;
        }
        let mut prev_b: Option<usize> = None;
        let mut z = Some(self.points[b].zone);
        let (common, below_b) = loop {
            let Some(cur) = z else { return false };
            if chain_a.contains(&cur) {
                break (cur, prev_b);
            }
            prev_b = Some(cur);
            z = self.zones[cur].parent;
        };
        let pos = chain_a.iter().position(|&x| x == common).unwrap_or(0);
        let node_a = if pos == 0 {
            NodeRef::Point(a)
        } else {
            NodeRef::Zone(chain_a[pos - 1])
        };
        let node_b = match below_b {
            None => NodeRef::Point(b),
            Some(child) => NodeRef::Zone(child),
        };
        let zone = &self.zones[common];
        if zone.routing == Routing::Cluster {
            return self.cluster_route(common, a, b, out);
        }
        let (Some(&la), Some(&lb)) = (zone.node_index.get(&node_a), zone.node_index.get(&node_b))
        else {
            return false;
        };
        let Some(hops) = self.local_hops(common, la, lb) else {
            return false;
        };
        let mut cur = a;
        for hop in hops {
            if !self.route(cur, hop.gw_src, out) {
                return false;
            }
            out.extend_from_slice(&hop.links);
            cur = hop.gw_dst;
        }
        self.route(cur, b, out)
    }

    fn cluster_route(&self, z: usize, a: usize, b: usize, out: &mut Vec<usize>) -> bool {
        match &self.zones[z].topology {
            Topology::Flat => {}
            Topology::Torus { dims, links } => {
                // Routers have no route in these zones (SimGrid returns none).
                let (Some(src), Some(dst)) = (self.points[a].rank, self.points[b].rank) else {
                    return true;
                };
                torus_route(dims, links, src, dst, out);
                return true;
            }
            Topology::FatTree(tree) => {
                let (Some(src), Some(dst)) = (self.points[a].rank, self.points[b].rank) else {
                    return true;
                };
                return tree.route(src, dst, out).is_some();
            }
        }
        let bb = self.zones[z].backbone;
        if let Some((up, _)) = self.points[a].private {
            out.push(up);
        }
        out.extend(bb);
        if let Some((_, down)) = self.points[b].private {
            out.push(down);
        }
        true
    }

    fn into_platform(self) -> Result<Platform> {
        let h = self.processors.len();
        let mut routes = Vec::new();
        let mut buf = Vec::new();
        for i in 0..h {
            for j in 0..h {
                if i == j {
                    continue;
                }
                buf.clear();
                if self.route(self.host_points[i], self.host_points[j], &mut buf) {
                    routes.push(Route {
                        src: i,
                        dst: j,
                        links: buf.clone(),
                    });
                }
            }
        }
        Platform::from_graph(self.processors, self.links, routes, self.options.unit_bytes)
            .map_err(SimgridError::Platform)
    }
}

/// A TORUS or FAT_TREE cluster being read.
struct Hierarchical<'a, 'input, 'r> {
    node: Node<'a, 'input>,
    id: &'r str,
    prefix: &'r str,
    suffix: &'r str,
    radical: &'r [u64],
    w: f64,
    bw: f64,
    lat: f64,
    sharing: SharingPolicy,
    zone: usize,
}

/// SimGrid's torus route (TorusZone::get_local_route): dimension after
/// dimension; in each, towards the target the way SimGrid's test picks (on the
/// source's coordinates), on the current node's UP half going up and on the next
/// node's DOWN half going down.
fn torus_route(
    dims: &[usize],
    links: &[Vec<(usize, usize)>],
    src: usize,
    dst: usize,
    out: &mut Vec<usize>,
) {
    let mut mine = Vec::with_capacity(dims.len());
    let mut target = Vec::with_capacity(dims.len());
    let mut product = 1;
    for &d in dims {
        mine.push((src / product) % d);
        target.push((dst / product) % d);
        product *= d;
    }
    let mut current = src;
    while current != dst {
        let mut product = 1;
        let mut step = None;
        for (j, &d) in dims.iter().enumerate() {
            let here = (current / product) % d;
            if here != (dst / product) % d {
                let right = (target[j] > mine[j] && target[j] <= mine[j] + d / 2)
                    || (mine[j] > d / 2 && (mine[j] + d / 2) % d >= target[j]);
                step = Some(if right {
                    let next = if here == d - 1 {
                        current + product - product * d
                    } else {
                        current + product
                    };
                    (next, links[current][j].0)
                } else {
                    let next = if here == 0 {
                        current + product * d - product
                    } else {
                        current - product
                    };
                    (next, links[next][j].1)
                });
                break;
            }
            product *= d;
        }
        let Some((next, link)) = step else { return };
        out.push(link);
        current = next;
    }
}
