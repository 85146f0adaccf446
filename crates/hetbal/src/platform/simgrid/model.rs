//! The model the reader builds before the routes: zones and their local nodes,
//! declared hops between them, links as declared (split duplex ones as two
//! halves), netpoints, and the topology of cluster zones.

use std::collections::HashMap;

use super::clusters::FatTree;

/// A node of a zone's routing graph: a netpoint (host or router) or a child zone.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub(super) enum NodeRef {
    Point(usize),
    Zone(usize),
}

/// The `direction` of a `<link_ctn>` (which half of a split-duplex link).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Dir {
    None,
    Up,
    Down,
}

/// A link as declared: one model link, or the two halves of a split-duplex one.
#[derive(Clone, Copy, Debug)]
pub(super) enum LinkDecl {
    Single(usize),
    Split { up: usize, down: usize },
}

/// A `<link_ctn>`: a declared link taken in a direction.
#[derive(Clone, Copy, Debug)]
pub(super) struct LinkRef {
    pub(super) decl: LinkDecl,
    pub(super) dir: Dir,
}

impl LinkRef {
    /// The model link the reference uses.
    pub(super) fn resolve(self) -> usize {
        match (self.decl, self.dir) {
            (LinkDecl::Single(l), _) => l,
            (LinkDecl::Split { up, .. }, Dir::Up | Dir::None) => up,
            (LinkDecl::Split { down, .. }, Dir::Down) => down,
        }
    }
    /// The same link in the other direction (for the reverse of a symmetrical
    /// route).
    pub(super) fn reversed(self) -> LinkRef {
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

/// A declared route between two local nodes of a zone, through gateways.
#[derive(Clone, Debug)]
pub(super) struct Hop {
    pub(super) to: usize, // local node index
    pub(super) links: Vec<usize>,
    pub(super) gw_src: usize,
    pub(super) gw_dst: usize,
}

/// How a zone routes between its local nodes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Routing {
    Full,
    Floyd,
    Dijkstra,
    Cluster,
}

/// A zone (or a cluster, or the virtual zone holding the top-level ones).
#[derive(Debug)]
pub(super) struct Zone {
    pub(super) id: String,
    pub(super) parent: Option<usize>,
    pub(super) routing: Routing,
    /// Local nodes and their index.
    pub(super) nodes: Vec<NodeRef>,
    pub(super) node_index: HashMap<NodeRef, usize>,
    /// Declared hops, by source local node.
    pub(super) hops: Vec<Vec<Hop>>,
    /// Floyd/Dijkstra: for each source, the hop taken to reach each node
    /// (`(previous node, hop index in hops[previous])`).
    pub(super) paths: Vec<Vec<Option<(usize, usize)>>>,
    /// Cluster zones: backbone link and router netpoint.
    pub(super) backbone: Option<usize>,
    pub(super) router: Option<usize>,
    /// Cluster zones: how the hosts are joined.
    pub(super) topology: Topology,
}

/// The topology of a cluster zone.
#[derive(Debug)]
pub(super) enum Topology {
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

impl Zone {
    /// The local index of `node`, added to the zone if new.
    pub(super) fn local(&mut self, node: NodeRef) -> usize {
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

/// A host or a router, in its zone.
#[derive(Debug)]
pub(super) struct NetPoint {
    pub(super) zone: usize,
    /// Cluster hosts: private links (up, down).
    pub(super) private: Option<(usize, usize)>,
    /// Hosts of TORUS and FAT_TREE clusters: the rank.
    pub(super) rank: Option<usize>,
}
