//! SimGrid platform XML (version 4.1) reader (cargo feature `simgrid`).
//!
//! Reads the text of a platform file (no file access here: the caller reads it)
//! into a [`Platform`](crate::platform::Platform): hosts become processors (`w = flops_per_unit / speed`),
//! links become [`Link`](crate::platform::Link)s (a SPLITDUPLEX link becomes two, `ID_UP` and `ID_DOWN`),
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

mod clusters;
mod model;
mod options;
mod reader;
mod routing;

pub use options::{SimgridError, SimgridOptions, MAX_HOSTS, MAX_ZONE_DEPTH};
pub use reader::read_simgrid;
