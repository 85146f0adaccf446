//! Clusters: flat ones (private links to a backbone), TORUS and FAT_TREE as
//! SimGrid 3.32 builds them, with their routes.

use roxmltree::Node;

use super::model::{LinkDecl, Routing, Topology};
use super::options::{Result, SimgridError, MAX_HOSTS};
use super::reader::{name_of, Reader};
use crate::platform::units::Quantity;
use crate::platform::{Processor, SharingPolicy};

impl<'a, 'input> Reader<'a, 'input> {
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

    pub(super) fn read_cluster(&mut self, node: Node<'a, 'input>, parent: usize) -> Result<()> {
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
        self.check_core(node)?;
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
        let w = self.work_time(node, speed_text, speed)?;
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

/// A fat tree as SimGrid builds it (FatTreeZone).
#[derive(Debug)]
pub(super) struct FatTree {
    pub(super) levels: usize,
    pub(super) down: Vec<usize>,
    pub(super) up: Vec<usize>,
    pub(super) count: Vec<usize>,
    /// Compute nodes (index = rank) then switches, in SimGrid's order.
    pub(super) nodes: Vec<FtNode>,
    /// (parent node, child node, UP link, DOWN link).
    pub(super) links: Vec<(usize, usize, usize, usize)>,
}

#[derive(Debug)]
pub(super) struct FtNode {
    /// SimGrid's id (rank for compute nodes; 2n-1, 2n-2, ... for switches).
    pub(super) id: usize,
    pub(super) level: usize,
    pub(super) position: usize,
    pub(super) label: Vec<usize>,
    /// Indices into `links`, by port.
    pub(super) parents: Vec<Option<usize>>,
    pub(super) children: Vec<Option<usize>>,
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
    pub(super) fn route(&self, src: usize, dst: usize, out: &mut Vec<usize>) -> Option<()> {
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

/// SimGrid's torus route (TorusZone::get_local_route): dimension after
/// dimension; in each, towards the target the way SimGrid's test picks (on the
/// source's coordinates), on the current node's UP half going up and on the next
/// node's DOWN half going down.
pub(super) fn torus_route(
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
