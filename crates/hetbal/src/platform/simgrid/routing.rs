//! Routing: the routes declared in zones (`<route>`, `<zoneRoute>`), shortest
//! paths in Floyd and Dijkstra zones, the route between two netpoints through
//! the zone tree, and the finished [`Platform`].

use std::collections::BinaryHeap;

use roxmltree::Node;

use super::clusters::torus_route;
use super::model::{Dir, Hop, LinkDecl, LinkRef, NodeRef, Routing, Topology};
use super::options::{Result, SimgridError};
use super::reader::{name_of, Reader};
use crate::platform::{Platform, Route};

impl<'a, 'input> Reader<'a, 'input> {
    /// [`SimgridError::UnknownReference`]: `attribute` of `node` names `id`, which is
    /// not what it should be (`expected` says why).
    fn unknown_reference(
        &self,
        node: Node,
        attribute: &'static str,
        id: &str,
        expected: String,
    ) -> SimgridError {
        SimgridError::UnknownReference {
            line: self.line(node),
            element: name_of(node),
            attribute,
            id: id.to_string(),
            expected,
        }
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
            let (decl, _) = self.link_ids.get(id).copied().ok_or_else(|| {
                self.unknown_reference(child, "id", id, "no <link> has this id".into())
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
        let fail = |expected: String| self.unknown_reference(node, attribute, id, expected);
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

    pub(super) fn resolve_routes(&mut self) -> Result<()> {
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
                        _ => Err(self.unknown_reference(
                            node,
                            attribute,
                            id,
                            format!("not a zone directly inside zone {:?}", self.zones[z].id),
                        )),
                    }
                };
                let s = zone_of("src")?;
                let d = zone_of("dst")?;
                let gateway = |attribute: &'static str, zone: usize| -> Result<usize> {
                    let id = self.require(node, attribute)?;
                    match self.point_ids.get(id) {
                        Some(&(k, _)) if self.is_inside(k, zone) => Ok(k),
                        _ => Err(self.unknown_reference(
                            node,
                            attribute,
                            id,
                            format!("not a host or router inside zone {:?}", self.zones[zone].id),
                        )),
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
    pub(super) fn shortest_paths(&mut self) {
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

    pub(super) fn into_platform(self) -> Result<Platform> {
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
