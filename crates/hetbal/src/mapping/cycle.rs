//! Minimum Hamiltonian cycles on the symmetric weights `d_ij = c_ij/w_i + c_ji/w_j`:
//! exact (Held–Karp) and local improvement (2-opt, Or-opt).

use super::MappingError;

/// Largest number of nodes [`held_karp`] accepts (2^n · n² steps, 2^n · n numbers).
pub const HELD_KARP_MAX: usize = 16;

/// A cycle through some nodes and its weight.
#[derive(Clone, Debug, PartialEq)]
pub struct Cycle {
    /// The nodes in cycle order, starting with the smallest.
    pub order: Vec<usize>,
    /// Sum of the weights of its edges (a cycle of two counts its edge twice, one of
    /// one weighs 0).
    pub weight: f64,
}

/// Weight of a cycle on a dense `n × n` matrix `d` (row-major).
pub fn cycle_weight(d: &[f64], n: usize, order: &[usize]) -> f64 {
    let q = order.len();
    if q < 2 {
        return 0.0;
    }
    (0..q).map(|k| d[order[k] * n + order[(k + 1) % q]]).sum()
}

/// The cycle `order` rotated to start at its smallest node, with its weight.
fn from_smallest(d: &[f64], n: usize, mut order: Vec<usize>) -> Cycle {
    if let Some(pos) = order
        .iter()
        .enumerate()
        .min_by_key(|(_, &v)| v)
        .map(|(p, _)| p)
    {
        order.rotate_left(pos);
    }
    let weight = cycle_weight(d, n, &order);
    Cycle { order, weight }
}

/// The members of a set of nodes given as bits (bit k = node k), smallest first.
pub(crate) fn members(set: usize) -> impl Iterator<Item = usize> {
    let mut rest = set;
    std::iter::from_fn(move || {
        (rest != 0).then(|| {
            let k = rest.trailing_zeros() as usize;
            rest &= rest - 1;
            k
        })
    })
}

/// The least of `values` (`f64::INFINITY` when there is none; NaNs are passed over).
pub(crate) fn least(values: impl Iterator<Item = f64>) -> f64 {
    values.fold(f64::INFINITY, |m, v| if v < m { v } else { m })
}

/// The minimum-weight Hamiltonian cycle through all `n` nodes of a symmetric weight
/// matrix, by the Held–Karp dynamic programme (Bellman 1962; Held & Karp 1962).
///
/// # Arguments
/// * `d`: `n × n` weights, row-major, symmetric (`f64::INFINITY` = no edge);
/// * `n`: number of nodes, 1 to [`HELD_KARP_MAX`].
///
/// # Returns
/// The optimal [`Cycle`], starting at node 0 (weight `f64::INFINITY` when no
/// Hamiltonian cycle avoids infinite edges).
///
/// # Errors
/// [`MappingError::TooLargeForExact`] when `n > HELD_KARP_MAX`,
/// [`MappingError::NoProcessors`] when `n == 0`.
///
/// # Complexity
/// O(2^n · n²) time, O(2^n · n) space.
///
/// # Example
/// ```
/// use hetbal::mapping::held_karp;
/// //  0 ---1--- 1
/// //  |  \   /  |      the square 0-1-2-3 weighs 4,
/// //  1    5    1      its diagonals 5 each
/// //  |  /   \  |
/// //  3 ---1--- 2
/// let d = [0., 1., 5., 1.,
///          1., 0., 1., 5.,
///          5., 1., 0., 1.,
///          1., 5., 1., 0.];
/// let c = held_karp(&d, 4).unwrap();
/// assert_eq!(c.weight, 4.0);
/// assert!(c.order == vec![0, 1, 2, 3] || c.order == vec![0, 3, 2, 1]);
/// ```
pub fn held_karp(d: &[f64], n: usize) -> Result<Cycle, MappingError> {
    if n == 0 {
        return Err(MappingError::NoProcessors);
    }
    if n > HELD_KARP_MAX {
        return Err(MappingError::TooLargeForExact {
            processors: n,
            max: HELD_KARP_MAX,
        });
    }
    if n <= 3 {
        let order: Vec<usize> = (0..n).collect();
        let weight = cycle_weight(d, n, &order);
        return Ok(Cycle { order, weight });
    }
    // Paths from node 0 through the set S (of nodes 1..n, bit k-1 = node k) ending
    // at node j in S.
    let m = n - 1;
    let full = 1usize << m;
    let mut dp = vec![f64::INFINITY; full * m];
    for j in 0..m {
        dp[(1 << j) * m + j] = d[j + 1];
    }
    for s in 1..full {
        if s.count_ones() < 2 {
            continue;
        }
        for j in 0..m {
            if s & (1 << j) == 0 {
                continue;
            }
            let prev = s & !(1 << j);
            let best = least(members(prev).map(|k| dp[prev * m + k] + d[(k + 1) * n + j + 1]));
            dp[s * m + j] = best;
        }
    }
    let s = full - 1;
    let (mut last, mut weight) = (0, f64::INFINITY);
    for j in 0..m {
        let v = dp[s * m + j] + d[(j + 1) * n];
        if v < weight {
            weight = v;
            last = j;
        }
    }
    if !weight.is_finite() {
        let order: Vec<usize> = (0..n).collect();
        return Ok(Cycle {
            weight: cycle_weight(d, n, &order),
            order,
        });
    }
    // Walk back.
    let mut order = vec![0; n];
    let mut s = full - 1;
    let mut j = last;
    for pos in (1..n).rev() {
        order[pos] = j + 1;
        let prev = s & !(1 << j);
        if prev == 0 {
            break;
        }
        let target = dp[s * m + j];
        let chosen = members(prev)
            .find(|&k| dp[prev * m + k] + d[(k + 1) * n + j + 1] == target)
            .unwrap_or(prev.trailing_zeros() as usize);
        s = prev;
        j = chosen;
    }
    let weight = cycle_weight(d, n, &order);
    Ok(Cycle { order, weight })
}

/// Improves a cycle on a symmetric matrix by 2-opt (reverse a segment), Or-opt
/// (move a segment of 1 to 3 nodes elsewhere, either way round) and
/// Lin–Kernighan-style chains of up to three segment reversals
/// ([`lin_kernighan`]) until no move shortens it (first improvement, moves must
/// gain more than 1e-12 relative).
///
/// # Arguments
/// * `d`: `n × n` symmetric weights, row-major; `order`: a cycle over some of the
///   nodes (each at most once).
///
/// # Returns
/// The improved cycle (same nodes), never heavier than the input.
///
/// # Complexity
/// O(q²) per 2-opt or Or-opt pass over a cycle of q nodes, and O(q · q) per
/// Lin–Kernighan pass (O(1) chains per node, each reversal O(q)); the number of
/// passes is not bounded polynomially in theory but is small in practice.
///
/// # Example
/// ```
/// use hetbal::mapping::{improve_cycle, cycle_weight};
/// // The square of `held_karp`'s example, entered crossed: 0-2-1-3.
/// let d = [0., 1., 5., 1.,  1., 0., 1., 5.,  5., 1., 0., 1.,  1., 5., 1., 0.];
/// assert_eq!(cycle_weight(&d, 4, &[0, 2, 1, 3]), 12.0);
/// assert_eq!(improve_cycle(&d, 4, vec![0, 2, 1, 3]).weight, 4.0);
/// ```
pub fn improve_cycle(d: &[f64], n: usize, mut order: Vec<usize>) -> Cycle {
    let q = order.len();
    if q >= 4 {
        let eps = |w: f64| 1e-12 * w.abs().max(f64::MIN_POSITIVE);
        loop {
            let mut improved = false;
            let total = cycle_weight(d, n, &order);
            // 2-opt: edges (a,b)=(k,k+1) and (c,e)=(l,l+1) become (a,c),(b,e).
            'two: for k in 0..q - 1 {
                let a = order[k];
                let b = order[k + 1];
                let dab = d[a * n + b];
                for l in k + 2..q {
                    let c = order[l];
                    let e = order[(l + 1) % q];
                    if e == a {
                        continue;
                    }
                    let delta = d[a * n + c] + d[b * n + e] - dab - d[c * n + e];
                    if delta < -eps(total) {
                        order[k + 1..=l].reverse();
                        improved = true;
                        continue 'two;
                    }
                }
            }
            if !improved {
                improved = or_opt(d, n, &mut order, eps(total));
            }
            if !improved {
                improved = lk_pass(d, n, &mut order, eps(total));
            }
            if !improved {
                break;
            }
        }
    }
    from_smallest(d, n, order)
}

/// Nodes beyond which Or-opt only tries insertions next to the nearest nodes.
const OR_OPT_ALL: usize = 64;
/// Nearest nodes tried by Or-opt on large cycles.
const NEAREST: usize = 12;

/// One pass of Or-opt moves; true when something moved.
fn or_opt(d: &[f64], n: usize, order: &mut Vec<usize>, eps: f64) -> bool {
    let q = order.len();
    // For each node of the cycle (indexed by node), its nearest nodes of the cycle.
    let nearest: Option<Vec<Vec<usize>>> = (q > OR_OPT_ALL).then(|| {
        let mut nn = vec![Vec::new(); n];
        for &a in order.iter() {
            let mut others: Vec<usize> = order.iter().copied().filter(|&b| b != a).collect();
            let k = NEAREST.min(others.len());
            others.select_nth_unstable_by(k - 1, |&x, &y| d[a * n + x].total_cmp(&d[a * n + y]));
            others.truncate(k);
            nn[a] = others;
        }
        nn
    });
    let mut moved = false;
    for len in 1..=3usize.min(q - 2) {
        let mut start = 0;
        while start < q {
            let mut pos = vec![usize::MAX; n];
            for (i, &v) in order.iter().enumerate() {
                pos[v] = i;
            }
            let seg: Vec<usize> = (0..len).map(|t| order[(start + t) % q]).collect();
            let p = order[(start + q - 1) % q];
            let x = order[(start + len) % q];
            let (s0, s1) = (seg[0], seg[len - 1]);
            let removal = d[p * n + s0] + d[s1 * n + x] - d[p * n + x];
            let in_seg = |v: usize| (pos[v] + q - start) % q < len;
            // Candidate edges (u, succ u) of the rest of the cycle.
            let candidates: Vec<usize> = match &nearest {
                None => order.clone(),
                Some(nn) => {
                    let mut c = Vec::with_capacity(4 * NEAREST);
                    for &a in nn[s0].iter().chain(nn[s1].iter()) {
                        c.push(a);
                        c.push(order[(pos[a] + q - 1) % q]);
                    }
                    c
                }
            };
            let mut best: Option<(f64, usize, bool)> = None;
            for &u in &candidates {
                if in_seg(u) || u == p {
                    continue;
                }
                let mut v = order[(pos[u] + 1) % q];
                if in_seg(v) {
                    v = x;
                }
                let forward = d[u * n + s0] + d[s1 * n + v] - d[u * n + v];
                let backward = d[u * n + s1] + d[s0 * n + v] - d[u * n + v];
                let (insert, reversed) = if backward < forward {
                    (backward, true)
                } else {
                    (forward, false)
                };
                let gain = insert - removal;
                if gain < -eps && best.is_none_or(|(g, _, _)| gain < g) {
                    best = Some((gain, u, reversed));
                }
            }
            if let Some((_, u, reversed)) = best {
                let mut rest: Vec<usize> =
                    (0..q - len).map(|r| order[(start + len + r) % q]).collect();
                let at = rest
                    .iter()
                    .position(|&y| y == u)
                    .map_or(rest.len(), |i| i + 1);
                let mut piece = seg;
                if reversed {
                    piece.reverse();
                }
                rest.splice(at..at, piece);
                *order = rest;
                moved = true;
            }
            start += 1;
        }
    }
    moved
}

/// Improves a cycle by Lin–Kernighan-style moves only (Lin & Kernighan 1973, in
/// the form of sequential segment reversals): from every node `t1` and each of
/// its two tour neighbours `t2`, remove edge (t1, t2), add (t2, t3) for one of the
/// nearest nodes `t3` of `t2` while the partial gain stays positive, remove the
/// edge (t4, t3) that keeps a Hamiltonian path (a segment reversal), and close
/// with (t4, t1) if that shortens the cycle; otherwise go on from `t4`, up to
/// three reversals deep (a 3-opt move; 5, then 3, then 1 alternatives tried at
/// each depth). Depth one is 2-opt on nearest neighbours; depths two and three
/// reach the sequential 3-opt moves (including Or-opt's segment moves) that no
/// single 2-opt move improves. Nodes whose surroundings changed are examined
/// again until none improves.
///
/// # Arguments
/// * `d`: `n × n` symmetric weights, row-major; `order`: a cycle over some of the
///   nodes (each at most once).
///
/// # Returns
/// The improved cycle (same nodes, starting at the smallest), never heavier.
///
/// # Complexity
/// O(q² log q) to build the lists of the 10 nearest nodes, then O(q) per
/// examined node and reversal tried (a reversal moves up to q/2 nodes); the
/// number of rounds is small in practice.
///
/// # Example
/// ```
/// use hetbal::mapping::{cycle_weight, held_karp, lin_kernighan};
/// // Eight points on a line, visited in a crossed order.
/// let x = [0.0, 1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0f64];
/// let d: Vec<f64> = (0..64).map(|k| (x[k / 8] - x[k % 8]).abs()).collect();
/// let start = vec![0, 4, 1, 5, 2, 6, 3, 7];
/// let c = lin_kernighan(&d, 8, start.clone());
/// assert!(c.weight < cycle_weight(&d, 8, &start));
/// assert_eq!(c.weight, held_karp(&d, 8).unwrap().weight); // 14: out and back
/// ```
pub fn lin_kernighan(d: &[f64], n: usize, mut order: Vec<usize>) -> Cycle {
    if order.len() >= 4 {
        let eps = 1e-12 * cycle_weight(d, n, &order).abs().max(f64::MIN_POSITIVE);
        while lk_pass(d, n, &mut order, eps) {}
    }
    from_smallest(d, n, order)
}

/// Nearest nodes kept per node by the Lin–Kernighan moves.
const LK_NEIGHBOURS: usize = 10;
/// Alternatives tried at each depth of a Lin–Kernighan chain.
const LK_BREADTH: [usize; 3] = [5, 3, 1];

/// A cycle as an array with positions, seen in one of its two orientations.
struct Tour {
    order: Vec<usize>,
    pos: Vec<usize>,
    forward: bool,
}

impl Tour {
    fn succ(&self, v: usize) -> usize {
        let q = self.order.len();
        let i = self.pos[v];
        self.order[if self.forward {
            (i + 1) % q
        } else {
            (i + q - 1) % q
        }]
    }

    fn pred(&self, v: usize) -> usize {
        let q = self.order.len();
        let i = self.pos[v];
        self.order[if self.forward {
            (i + q - 1) % q
        } else {
            (i + 1) % q
        }]
    }

    /// Reverses the oriented path from `a` to `b`; reverses the rest of the cycle
    /// instead (and turns the orientation round) when that is shorter.
    fn reverse(&mut self, a: usize, b: usize) {
        let q = self.order.len();
        // The path as an array segment [i..=j] (cyclic).
        let (mut i, mut j) = if self.forward {
            (self.pos[a], self.pos[b])
        } else {
            (self.pos[b], self.pos[a])
        };
        let mut len = (j + q - i) % q + 1;
        if 2 * len > q {
            // The complement gives the mirrored cycle: same neighbours once the
            // orientation is turned round.
            let (ci, cj) = ((j + 1) % q, (i + q - 1) % q);
            i = ci;
            j = cj;
            len = q - len;
            self.forward = !self.forward;
        }
        for _ in 0..len / 2 {
            self.order.swap(i, j);
            self.pos[self.order[i]] = i;
            self.pos[self.order[j]] = j;
            i = (i + 1) % q;
            j = (j + q - 1) % q;
        }
    }
}

/// One round of Lin–Kernighan chains from every node; true when the cycle got
/// shorter.
fn lk_pass(d: &[f64], n: usize, order: &mut Vec<usize>, eps: f64) -> bool {
    let q = order.len();
    if q < 5 {
        return false;
    }
    let mut pos = vec![usize::MAX; n];
    for (i, &v) in order.iter().enumerate() {
        pos[v] = i;
    }
    let k = LK_NEIGHBOURS.min(q - 1);
    let mut nearest = vec![Vec::new(); n];
    for &a in order.iter() {
        let mut others: Vec<usize> = order.iter().copied().filter(|&b| b != a).collect();
        others.select_nth_unstable_by(k - 1, |&x, &y| d[a * n + x].total_cmp(&d[a * n + y]));
        others.truncate(k);
        others.sort_by(|&x, &y| d[a * n + x].total_cmp(&d[a * n + y]));
        nearest[a] = others;
    }
    let mut tour = Tour {
        order: std::mem::take(order),
        pos,
        forward: true,
    };
    let mut queue: std::collections::VecDeque<usize> = tour.order.iter().copied().collect();
    let mut queued = vec![false; n];
    for &v in &tour.order {
        queued[v] = true;
    }
    let mut improved = false;
    let mut touched = Vec::new();
    while let Some(t1) = queue.pop_front() {
        queued[t1] = false;
        let mut done = false;
        for _ in 0..2 {
            touched.clear();
            let t2 = tour.succ(t1);
            if lk_chain(
                d,
                n,
                &nearest,
                &mut tour,
                t1,
                t2,
                d[t1 * n + t2],
                0,
                eps,
                &mut touched,
            ) {
                done = true;
                break;
            }
            tour.forward = !tour.forward; // the other neighbour of t1
        }
        if done {
            improved = true;
            touched.push(t1);
            for &v in &touched {
                for u in [v, tour.succ(v), tour.pred(v)] {
                    if !queued[u] {
                        queued[u] = true;
                        queue.push_back(u);
                    }
                }
            }
        }
    }
    *order = tour.order;
    improved
}

/// Extends a chain: edge (t1, t2) is out (t2 = succ t1), `gain` is the weight
/// removed minus the weight added so far. True (and the tour changed) when a
/// closing move shortens the cycle; otherwise the tour is left as it was.
#[allow(clippy::too_many_arguments)]
fn lk_chain(
    d: &[f64],
    n: usize,
    nearest: &[Vec<usize>],
    tour: &mut Tour,
    t1: usize,
    t2: usize,
    gain: f64,
    depth: usize,
    eps: f64,
    touched: &mut Vec<usize>,
) -> bool {
    // Candidates t3 near t2, best by the gain after the reversal.
    let mut tries: Vec<(f64, usize, usize)> = Vec::with_capacity(LK_NEIGHBOURS);
    for &t3 in &nearest[t2] {
        let g1 = gain - d[t2 * n + t3];
        if g1 <= eps {
            break; // the lists are sorted: farther nodes do no better
        }
        if t3 == t1 || t3 == tour.succ(t2) {
            continue;
        }
        let t4 = tour.pred(t3);
        if t4 == t2 {
            continue;
        }
        tries.push((g1 + d[t3 * n + t4], t3, t4));
    }
    tries.sort_by(|a, b| b.0.total_cmp(&a.0));
    tries.truncate(LK_BREADTH[depth]);
    for (g2, t3, t4) in tries {
        // Reverse t2..t4: the cycle now runs t1 -> t4 ... t2 -> t3.
        tour.reverse(t2, t4);
        if g2 - d[t4 * n + t1] > eps {
            touched.extend([t2, t3, t4]);
            return true;
        }
        if depth + 1 < LK_BREADTH.len()
            && lk_chain(d, n, nearest, tour, t1, t4, g2, depth + 1, eps, touched)
        {
            touched.extend([t2, t3, t4]);
            return true;
        }
        tour.reverse(t4, t2);
    }
    false
}
