//! Processor selection and ring order: exact search and heuristics.

use serde::{Deserialize, Serialize};

use super::cycle::{cycle_weight, improve_cycle, least, members};
use super::shares::{check_sizes, optimal_shares};
use super::MappingError;
use crate::platform::Platform;

/// Largest platform [`Method::Exact`] accepts: it looks at every subset of
/// processors (2^p · p² steps, 2^p · p numbers).
pub const EXACT_MAX: usize = 16;

/// Up to this many processors, [`Method::Local`] starts from every ring the greedy
/// grows and evaluates every move (segment reversal, relocation, addition, removal,
/// swap) by its exact step time.
const SMALL: usize = 24;

/// Above this many processors, [`Method::Local`] tries no swap moves (a swap costs
/// O(q · (p-q) · q) per round).
const SWAP_MAX: usize = 64;

/// How [`map`] chooses the processors and their order.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Method {
    /// Exact: every subset of processors, each ordered by a minimum Hamiltonian
    /// cycle (Held–Karp over all subsets at once), subsets taken in the order of
    /// that bound; when a subset's lightest ring needs a zero share (a processor
    /// whose exchanges alone outlast the step), its other orders are searched
    /// depth-first, pruned by the table's lightest completions. p <= [`EXACT_MAX`].
    /// Checked against brute force over every subset and order.
    Exact,
    /// The slides' greedy heuristic: start from the best pair, insert the processor
    /// and place that give the smallest step time, keep the best ring seen.
    Greedy,
    /// The greedy ring, then local search: 2-opt and Or-opt on the order, and
    /// adding, removing and swapping processors while the step time drops.
    Local,
}

impl Method {
    /// All methods.
    pub const ALL: [Method; 3] = [Method::Exact, Method::Greedy, Method::Local];

    /// The name used in files and on the command line.
    ///
    /// ```
    /// assert_eq!(hetbal::mapping::Method::Local.name(), "local");
    /// ```
    pub fn name(self) -> &'static str {
        match self {
            Method::Exact => "exact",
            Method::Greedy => "greedy",
            Method::Local => "local",
        }
    }

    /// The method with this name, if any.
    ///
    /// ```
    /// use hetbal::mapping::Method;
    /// assert_eq!(Method::from_name("exact"), Some(Method::Exact));
    /// assert_eq!(Method::from_name("best"), None);
    /// ```
    pub fn from_name(name: &str) -> Option<Method> {
        Method::ALL.into_iter().find(|m| m.name() == name)
    }
}

/// What to map and how.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct MapOptions {
    /// Total work per iteration, D_w (units of work; finite, > 0).
    pub work: f64,
    /// Border exchanged with each neighbour, D_c (units of data; finite, >= 0).
    pub border: f64,
    /// Use exactly this many processors; `None`: the number that is best.
    pub processors: Option<usize>,
    /// The search method.
    pub method: Method,
}

impl MapOptions {
    /// Options with any number of processors.
    ///
    /// ```
    /// use hetbal::mapping::{MapOptions, Method};
    /// let o = MapOptions::new(1e6, 10.0, Method::Local);
    /// assert_eq!(o.processors, None);
    /// ```
    pub fn new(work: f64, border: f64, method: Method) -> Self {
        MapOptions {
            work,
            border,
            processors: None,
            method,
        }
    }
}

/// A mapping: the ring, the shares and the step time.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Mapping {
    /// The method that found it.
    pub method: Method,
    /// Processor indices in ring order.
    pub ring: Vec<usize>,
    /// Share of the work of each, in ring order (>= 0, sum 1).
    pub shares: Vec<f64>,
    /// The step time of the ring with these shares.
    pub t_step: f64,
}

/// A mapping as formats.md's "Mapping plan" (what `hetbal map --json` prints):
/// processors by name, and the step time per unit of work. Serialise it with
/// serde.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct MappingPlan<'a> {
    /// The method's name.
    pub method: &'static str,
    /// The processors' names in ring order.
    pub ring: Vec<&'a str>,
    /// Share of the work of each, in ring order.
    pub shares: &'a [f64],
    /// Whole item counts in ring order, when items were split.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub counts: Option<&'a [u64]>,
    /// The step time.
    pub t_step: f64,
    /// The step time over the work `D_w`.
    pub t_step_over_work: f64,
}

impl Mapping {
    /// The mapping plan document of this mapping of `platform`, for the work
    /// `work` (`D_w`) with the whole item `counts` (in ring order) when items
    /// were split ([`super::item_counts`]).
    ///
    /// Complexity: O(ring).
    ///
    /// ```
    /// use hetbal::mapping::{map, MapOptions, Method};
    /// use hetbal::platform::{Platform, Processor};
    /// let p = Platform::from_matrix(vec![Processor::new("A", 1.0), Processor::new("B", 1.0)],
    ///                               vec![vec![0.0, 0.1], vec![0.1, 0.0]]).unwrap();
    /// let m = map(&p, &MapOptions::new(10.0, 0.0, Method::Exact)).unwrap();
    /// let plan = m.document(&p, Some(&[5, 5]), 10.0);
    /// assert_eq!((plan.method, plan.ring.len()), ("exact", 2));
    /// assert_eq!(plan.t_step_over_work, m.t_step / 10.0);
    /// ```
    pub fn document<'a>(
        &'a self,
        platform: &'a Platform,
        counts: Option<&'a [u64]>,
        work: f64,
    ) -> MappingPlan<'a> {
        MappingPlan {
            method: self.method.name(),
            ring: self.ring.iter().map(|&i| platform.name(i)).collect(),
            shares: &self.shares,
            counts,
            t_step: self.t_step,
            t_step_over_work: self.t_step / work,
        }
    }
}

/// The symmetric ring weights `d_ij = c_ij/w_i + c_ji/w_j` (row-major `p × p`, 0 on
/// the diagonal): a ring whose processors all end together has
/// `T_step = (D_w + D_c * sum of d over its edges) / sum_i 1/w_i`.
///
/// Complexity: O(p²).
///
/// ```
/// use hetbal::mapping::ring_weights;
/// use hetbal::platform::{Platform, Processor};
/// let p = Platform::from_matrix(vec![Processor::new("A", 1.0), Processor::new("B", 2.0)],
///                               vec![vec![0.0, 3.0], vec![4.0, 0.0]]).unwrap();
/// assert_eq!(ring_weights(&p), vec![0.0, 5.0, 5.0, 0.0]); // 3/1 + 4/2
/// ```
pub fn ring_weights(platform: &Platform) -> Vec<f64> {
    let p = platform.len();
    let mut d = vec![0.0; p * p];
    for i in 0..p {
        for j in 0..p {
            if i != j {
                d[i * p + j] =
                    platform.cost(i, j) / platform.w(i) + platform.cost(j, i) / platform.w(j);
            }
        }
    }
    d
}

/// Chooses processors, orders them in a ring and shares the work (model.md
/// section 3).
///
/// # Arguments
/// * `platform`: processors and costs (pairs without a route are never used);
/// * `options`: `D_w`, `D_c`, the ring size if fixed, the [`Method`].
///
/// # Returns
/// The [`Mapping`]: ring, shares (from [`optimal_shares`](super::optimal_shares),
/// never negative) and step time. A ring of one processor does no exchange.
///
/// # Errors
/// [`MappingError::InvalidWork`], [`MappingError::InvalidBorder`],
/// [`MappingError::BadProcessorCount`], [`MappingError::TooLargeForExact`]
/// (exact with p > [`EXACT_MAX`]), [`MappingError::NoRing`] (every ring of the size
/// asked crosses a pair without a route), [`MappingError::TimesOverflow`] (the
/// step time of the ring chosen overflows f64).
///
/// # Complexity
/// Exact: O(2^p · p²) time, O(2^p · p) space. Greedy: O(p³). Local: greedy plus
/// rounds of O(p²) (O(p³) with swaps when p <= 64) moves and 2-opt/Or-opt passes.
///
/// # Example
/// ```
/// use hetbal::mapping::{map, MapOptions, Method};
/// use hetbal::platform::{Platform, Processor};
/// //  A (w=1) and B (w=1) talk cheaply; C (w=1) is 100x further from both.
/// let c = vec![vec![0.0, 0.01, 1.0], vec![0.01, 0.0, 1.0], vec![1.0, 1.0, 0.0]];
/// let p = Platform::from_matrix(
///     vec![Processor::new("A", 1.0), Processor::new("B", 1.0), Processor::new("C", 1.0)], c,
/// ).unwrap();
/// for method in [Method::Exact, Method::Greedy, Method::Local] {
///     let m = map(&p, &MapOptions::new(10.0, 5.0, method)).unwrap();
///     assert_eq!(m.ring.len(), 2); // C costs more in exchanges than it saves
///     assert!((m.t_step - (5.0 + 5.0 * 0.02)).abs() < 1e-9);
/// }
/// ```
pub fn map(platform: &Platform, options: &MapOptions) -> Result<Mapping, MappingError> {
    check_sizes(options.work, options.border)?;
    let p = platform.len();
    if let Some(q) = options.processors {
        if q == 0 || q > p {
            return Err(MappingError::BadProcessorCount {
                asked: q,
                available: p,
            });
        }
    }
    let ring = match options.method {
        Method::Exact => exact(platform, options)?,
        Method::Greedy => greedy(platform, options, &ring_weights(platform)).0,
        Method::Local => local(platform, options),
    };
    let shared = ring.map(|r| {
        (
            optimal_shares(platform, &r, options.work, options.border),
            r,
        )
    });
    let step = match shared {
        Some((Ok(step), r)) if step.t_step.is_finite() => (r, step),
        Some((Err(e @ MappingError::TimesOverflow { .. }), _)) => return Err(e),
        _ => {
            return Err(MappingError::NoRing {
                processors: options.processors,
            })
        }
    };
    Ok(Mapping {
        method: options.method,
        ring: step.0,
        shares: step.1.shares,
        t_step: step.1.t_step,
    })
}

/// The step time of a ring with its best shares (`INFINITY` without a route).
fn value(platform: &Platform, ring: &[usize], options: &MapOptions) -> f64 {
    optimal_shares(platform, ring, options.work, options.border)
        .map(|s| s.t_step)
        .unwrap_or(f64::INFINITY)
}

fn size_ok(options: &MapOptions, q: usize) -> bool {
    options.processors.is_none_or(|want| want == q)
}

fn best_single(platform: &Platform, options: &MapOptions) -> Option<(f64, Vec<usize>)> {
    if !size_ok(options, 1) {
        return None;
    }
    (0..platform.len())
        .map(|i| (options.work * platform.w(i), vec![i]))
        .min_by(|a, b| a.0.total_cmp(&b.0))
}

fn exact(platform: &Platform, options: &MapOptions) -> Result<Option<Vec<usize>>, MappingError> {
    let p = platform.len();
    if p > EXACT_MAX {
        return Err(MappingError::TooLargeForExact {
            processors: p,
            max: EXACT_MAX,
        });
    }
    let d = ring_weights(platform);
    let mut best = best_single(platform, options);
    if p < 2 {
        return Ok(best.map(|b| b.1));
    }
    let full = 1usize << p;
    // dp[S * p + j]: lightest path from the lowest node of S through all of S to j.
    let mut dp = vec![f64::INFINITY; full * p];
    let mut inv_w = vec![0.0; full];
    let mut candidates: Vec<(f64, usize)> = Vec::new();
    for s in 1usize..full {
        let low = s.trailing_zeros() as usize;
        inv_w[s] = inv_w[s & (s - 1)] + 1.0 / platform.w(low);
        if s.count_ones() == 1 {
            dp[s * p + low] = 0.0;
            continue;
        }
        let mut cycle = f64::INFINITY;
        for j in members(s & (s - 1)) {
            let prev = s & !(1 << j);
            let m = least(members(prev).map(|k| dp[prev * p + k] + d[k * p + j]));
            dp[s * p + j] = m;
            cycle = cycle.min(m + d[j * p + low]);
        }
        if size_ok(options, s.count_ones() as usize) && cycle.is_finite() {
            let t = (options.work + options.border * cycle) / inv_w[s];
            candidates.push((t, s));
        }
    }
    candidates.sort_by(|a, b| a.0.total_cmp(&b.0));
    for (bound, s) in candidates {
        if best.as_ref().is_some_and(|b| bound >= b.0) {
            break;
        }
        let ring = walk_back(&dp, &d, p, s);
        let v = value(platform, &ring, options);
        if best.as_ref().is_none_or(|b| v < b.0) {
            best = Some((v, ring));
        }
        if v > bound * (1.0 + 1e-12) && s.count_ones() >= 4 {
            // The lightest ring of S needs a zero share somewhere (its step is set by
            // one processor's exchanges): another order of S may do better. Search
            // them all, bounded below by the lightest completions of the table.
            let incumbent = best.as_ref().map_or(f64::INFINITY, |b| b.0);
            let mut search = RingSearch {
                platform,
                d: &d,
                dp: &dp,
                p,
                low: s.trailing_zeros() as usize,
                h: inv_w[s],
                work: options.work,
                border: options.border,
                best: incumbent,
                ring: None,
            };
            search.run(s);
            if let Some(r) = search.ring {
                let v = value(platform, &r, options);
                if v < incumbent {
                    best = Some((v, r));
                }
            }
        }
    }
    Ok(best.map(|b| b.1))
}

/// Depth-first search over the rings of one subset for the smallest
/// `max((D_w + D_c W) / H, D_c max_i comm_i)` (the step time with the best
/// non-negative shares), pruned by the exact lightest completion from the
/// subset table.
struct RingSearch<'a> {
    platform: &'a Platform,
    d: &'a [f64],
    dp: &'a [f64],
    p: usize,
    low: usize,
    h: f64,
    work: f64,
    border: f64,
    best: f64,
    ring: Option<Vec<usize>>,
}

impl RingSearch<'_> {
    fn run(&mut self, s: usize) {
        let low = self.low;
        let rest = s & !(1 << low);
        for k in members(rest) {
            let mut path = vec![low, k];
            self.dfs(&mut path, rest & !(1 << k), self.d[low * self.p + k], 0.0);
        }
    }

    fn dfs(&mut self, path: &mut Vec<usize>, remaining: usize, w_path: f64, max_comm: f64) {
        let (p, low) = (self.p, self.low);
        let c = |i: usize, j: usize| self.platform.cost(i, j);
        let q = path.len();
        let j = path[q - 1];
        if remaining == 0 {
            let comm_j = c(j, path[q - 2]) + c(j, low);
            let comm_low = c(low, j) + c(low, path[1]);
            let w = w_path + self.d[j * p + low];
            let t = ((self.work + self.border * w) / self.h)
                .max(self.border * max_comm.max(comm_j).max(comm_low));
            if t < self.best {
                self.best = t;
                self.ring = Some(path.clone());
            }
            return;
        }
        let rest = self.dp[(remaining | (1 << low) | (1 << j)) * p + j];
        let bound =
            ((self.work + self.border * (w_path + rest)) / self.h).max(self.border * max_comm);
        if bound >= self.best {
            return;
        }
        for k in members(remaining) {
            let comm_j = c(j, path[q - 2]) + c(j, k);
            path.push(k);
            self.dfs(
                path,
                remaining & !(1 << k),
                w_path + self.d[j * p + k],
                max_comm.max(comm_j),
            );
            path.pop();
        }
    }
}

/// The lightest cycle through subset `s` from the subset table.
fn walk_back(dp: &[f64], d: &[f64], p: usize, s: usize) -> Vec<usize> {
    let low = s.trailing_zeros() as usize;
    let mut last = low;
    let mut cycle = f64::INFINITY;
    for j in members(s & !(1 << low)) {
        let v = dp[s * p + j] + d[j * p + low];
        if v < cycle {
            cycle = v;
            last = j;
        }
    }
    let mut order = vec![last];
    let mut cur = s;
    let mut j = last;
    while cur.count_ones() > 1 {
        let prev = cur & !(1 << j);
        let target = dp[cur * p + j];
        let chosen = members(prev)
            .find(|&k| dp[prev * p + k] + d[k * p + j] == target)
            .unwrap_or(low);
        order.push(chosen);
        cur = prev;
        j = chosen;
    }
    order.reverse();
    order
}

/// The slides' greedy: best pair, then best insertions. Returns the best ring of an
/// allowed size and the full growth (the last ring built).
fn greedy(
    platform: &Platform,
    options: &MapOptions,
    d: &[f64],
) -> (Option<Vec<usize>>, Vec<Vec<usize>>) {
    let p = platform.len();
    let mut best = best_single(platform, options);
    let mut history: Vec<Vec<usize>> = Vec::new();
    if p < 2 || options.processors == Some(1) {
        return (best.map(|b| b.1), Vec::new());
    }
    let (work, border) = (options.work, options.border);
    let inv = |i: usize| 1.0 / platform.w(i);
    // Best pair by T of "all end together".
    let mut pair = (f64::INFINITY, 0, 1);
    for i in 0..p {
        for j in i + 1..p {
            let t = (work + border * 2.0 * d[i * p + j]) / (inv(i) + inv(j));
            if t < pair.0 {
                pair = (t, i, j);
            }
        }
    }
    if !pair.0.is_finite() {
        return (best.map(|b| b.1), Vec::new());
    }
    let mut ring = vec![pair.1, pair.2];
    let mut used = vec![false; p];
    used[pair.1] = true;
    used[pair.2] = true;
    let mut weight = 2.0 * d[pair.1 * p + pair.2];
    let mut h = inv(pair.1) + inv(pair.2);
    let target = options.processors.unwrap_or(p);
    let mut best_dw = vec![(f64::INFINITY, 0usize); p];
    loop {
        if size_ok(options, ring.len()) {
            if p <= SMALL {
                history.push(ring.clone());
            }
            let v = value(platform, &ring, options);
            if best.as_ref().is_none_or(|b| v < b.0) {
                best = Some((v, ring.clone()));
            }
        }
        if ring.len() >= target {
            break;
        }
        let q = ring.len();
        // For each unused processor, its cheapest place (d is symmetric, so both
        // rows are read contiguously).
        best_dw.iter_mut().for_each(|x| *x = (f64::INFINITY, 0));
        for e in 0..q {
            let a = ring[e];
            let b = ring[(e + 1) % q];
            let dab = d[a * p + b];
            let (row_a, row_b) = (&d[a * p..(a + 1) * p], &d[b * p..(b + 1) * p]);
            for k in 0..p {
                let dw = row_a[k] + row_b[k] - dab;
                if dw < best_dw[k].0 {
                    best_dw[k] = (dw, e);
                }
            }
        }
        let mut choice = (f64::INFINITY, 0, 0, 0.0);
        for k in (0..p).filter(|&k| !used[k]) {
            let (dw, e) = best_dw[k];
            let t = (work + border * (weight + dw)) / (h + inv(k));
            if t < choice.0 {
                choice = (t, k, e, dw);
            }
        }
        if !choice.0.is_finite() {
            break;
        }
        let (_, k, e, dw) = choice;
        ring.insert(e + 1, k);
        used[k] = true;
        weight += dw;
        h += inv(k);
    }
    if p > SMALL && size_ok(options, ring.len()) {
        history.push(ring);
    }
    (best.map(|b| b.1), history)
}

/// Greedy, then local search on the order and the selection.
fn local(platform: &Platform, options: &MapOptions) -> Option<Vec<usize>> {
    let d = ring_weights(platform);
    let (start, grown) = greedy(platform, options, &d);
    let mut starts: Vec<Vec<usize>> = start.into_iter().collect();
    // Also start from the rings the greedy grew (every allowed size on small
    // platforms, the largest one otherwise).
    for ring in grown {
        if !starts.contains(&ring) {
            starts.push(ring);
        }
    }
    let mut best: Option<(f64, Vec<usize>)> = None;
    for ring in starts {
        let (v, r) = descend(platform, options, &d, ring);
        if best.as_ref().is_none_or(|b| v < b.0) {
            best = Some((v, r));
        }
    }
    best.map(|b| b.1)
}

/// Local search from one ring until no move lowers the step time.
fn descend(
    platform: &Platform,
    options: &MapOptions,
    d: &[f64],
    ring: Vec<usize>,
) -> (f64, Vec<usize>) {
    let p = platform.len();
    let (work, border) = (options.work, options.border);
    let inv = |i: usize| 1.0 / platform.w(i);
    let mut current = value(platform, &ring, options);
    let mut ring = ring;
    if ring.len() >= 4 {
        let better = improve_cycle(d, p, ring.clone()).order;
        let v = value(platform, &better, options);
        if v < current {
            ring = better;
            current = v;
        }
    }
    let free = options.processors.is_none();
    if p <= SMALL {
        while let Some((v, r)) = best_neighbour(platform, options, &ring) {
            if v < current * (1.0 - 1e-12) {
                ring = r;
                current = v;
            } else {
                break;
            }
        }
        return (current, ring);
    }
    loop {
        let q = ring.len();
        let mut used = vec![false; p];
        for &i in &ring {
            used[i] = true;
        }
        let weight = cycle_weight(d, p, &ring);
        let h: f64 = ring.iter().map(|&i| inv(i)).sum();
        // Candidate moves, screened by the "all end together" step time.
        let mut moves: Vec<(f64, Vec<usize>)> = Vec::new();
        let best_insert = |ring: &[usize], k: usize, weight: f64| -> (f64, usize) {
            let q = ring.len();
            if q == 1 {
                return (2.0 * d[ring[0] * p + k], 0);
            }
            let mut best = (f64::INFINITY, 0);
            for e in 0..q {
                let a = ring[e];
                let b = ring[(e + 1) % q];
                let w = weight + d[a * p + k] + d[k * p + b] - d[a * p + b];
                if w < best.0 {
                    best = (w, e);
                }
            }
            best
        };
        if free && q < p {
            let mut add = (f64::INFINITY, 0, 0);
            for k in (0..p).filter(|&k| !used[k]) {
                let (w, e) = best_insert(&ring, k, weight);
                let t = (work + border * w) / (h + inv(k));
                if t < add.0 {
                    add = (t, k, e);
                }
            }
            if add.0.is_finite() {
                let mut r = ring.clone();
                r.insert(add.2 + 1, add.1);
                moves.push((add.0, r));
            }
        }
        if free && q > 1 {
            let mut remove = (f64::INFINITY, 0);
            for e in 0..q {
                let t = if q == 2 {
                    work * platform.w(ring[1 - e])
                } else {
                    let a = ring[(e + q - 1) % q];
                    let k = ring[e];
                    let b = ring[(e + 1) % q];
                    let w = weight - d[a * p + k] - d[k * p + b] + d[a * p + b];
                    (work + border * w) / (h - inv(k))
                };
                if t < remove.0 {
                    remove = (t, e);
                }
            }
            let mut r = ring.clone();
            r.remove(remove.1);
            moves.push((remove.0, r));
        }
        if p <= SWAP_MAX && q < p && q >= 2 {
            let mut swap = (f64::INFINITY, Vec::new());
            for e in 0..q {
                let mut rest = ring.clone();
                let k_out = rest.remove(e);
                let w_rest = cycle_weight(d, p, &rest);
                let h_rest = h - inv(k_out);
                for k in (0..p).filter(|&k| !used[k]) {
                    let (w, at) = best_insert(&rest, k, w_rest);
                    let t = (work + border * w) / (h_rest + inv(k));
                    if t < swap.0 {
                        let mut r = rest.clone();
                        r.insert(at + 1, k);
                        swap = (t, r);
                    }
                }
            }
            if swap.0.is_finite() {
                moves.push(swap);
            }
        }
        moves.sort_by(|a, b| a.0.total_cmp(&b.0));
        let mut moved = false;
        for (_, r) in moves {
            let r = if r.len() >= 4 {
                improve_cycle(d, p, r).order
            } else {
                r
            };
            let v = value(platform, &r, options);
            if v < current * (1.0 - 1e-12) {
                ring = r;
                current = v;
                moved = true;
                break;
            }
        }
        if !moved {
            break;
        }
    }
    (current, ring)
}

/// The best ring one move away (by exact step time): reverse a segment, move a
/// processor elsewhere, add, remove or swap one. O(q²·(p-q)) rings of O(q) each.
fn best_neighbour(
    platform: &Platform,
    options: &MapOptions,
    ring: &[usize],
) -> Option<(f64, Vec<usize>)> {
    let p = platform.len();
    let q = ring.len();
    let free = options.processors.is_none();
    let mut best: Option<(f64, Vec<usize>)> = None;
    let mut consider = |r: Vec<usize>| {
        let v = value(platform, &r, options);
        if best.as_ref().is_none_or(|b| v < b.0) {
            best = Some((v, r));
        }
    };
    let unused: Vec<usize> = (0..p).filter(|i| !ring.contains(i)).collect();
    for i in 0..q {
        for j in i + 1..q {
            let mut r = ring.to_vec();
            r[i..=j].reverse();
            consider(r);
        }
        let mut rest = ring.to_vec();
        let k = rest.remove(i);
        for at in 0..rest.len() {
            if at != i {
                let mut r = rest.clone();
                r.insert(at, k);
                consider(r);
            }
        }
        if free && q > 1 {
            consider(rest.clone());
        }
        for &u in &unused {
            for at in 0..rest.len().max(1) {
                let mut r = rest.clone();
                r.insert(at, u);
                consider(r);
            }
        }
    }
    if free {
        for &u in &unused {
            for at in 0..q {
                let mut r = ring.to_vec();
                r.insert(at, u);
                consider(r);
            }
        }
    }
    best
}
