//! The optimal integer distribution in a fixed order: the paper's dynamic programme
//! (Algorithm 1, [`naive_dp`]) and the same optimum computed fast ([`exact`]).
//!
//! Both compute, from the last processor of the order (the root) back to the first,
//! `cost_i(d)`: the least time in which processors `i..p-1` process `d` items when
//! the root starts sending to processor `i` at time 0:
//!
//! ```text
//! cost_{p-1}(d) = Tcomm_{p-1}(d) + Tcomp_{p-1}(d)
//! cost_i(d)     = min_{0 <= e <= d} max( Tcomm_i(e) + Tcomp_i(e), Tcomm_i(e) + cost_{i+1}(d - e) )
//! ```
//!
//! The fast version rests on three facts.
//! 1. `max(m + x, m + y) = m + max(x, y)` (also in floating point: rounding is
//!    monotone), so the term is `Tcomm_i(e) + max(Tcomp_i(e), cost_{i+1}(d - e))`.
//! 2. `Tcomp_i(e)` grows with `e` and `cost_{i+1}(d - e)` shrinks: let `e*(d)` be the
//!    least `e` with `Tcomp_i(e) >= cost_{i+1}(d - e)`. For `e >= e*` the term is
//!    `Tcomm_i(e) + Tcomp_i(e)`, non-decreasing, so `e*` is the only candidate there;
//!    for `e < e*` it is `Tcomm_i(e) + cost_{i+1}(d - e)`.
//! 3. `e*(d) <= e*(d+1) <= e*(d) + 1`, so both `e*` and `u*(d) = d - e*(d)` only move
//!    forward with `d`: with an affine `Tcomm_i(e) = b + a e`, the second branch is
//!    `b + a d + min_{u*(d) < u < d} (cost_{i+1}(u) - a u)`, a sliding-window minimum
//!    (a monotone queue), O(1) amortised per `d`. With a tabulated `Tcomm_i` it is a
//!    (min, +) convolution, scanned with a bound that stops early.

use crate::scatter::{Cost, PlanError, ScatterInstance, StartupRule};

/// The most steps [`naive_dp`] takes (`p (N+1)(N+2)/2` evaluations of the
/// recurrence, about a minute at this limit); beyond it, it returns
/// [`PlanError::TooLarge`].
pub const NAIVE_DP_MAX_STEPS: u128 = 40_000_000_000;

/// The most table cells [`exact`] keeps (`p (N+1)`: 4 bytes of choice each, 1 GB at
/// this limit); beyond it, it returns [`PlanError::TooLarge`].
pub const EXACT_MAX_CELLS: u128 = 250_000_000;

/// An optimal integer distribution in a fixed order, as the dynamic programme
/// found it.
#[derive(Clone, Debug, PartialEq)]
pub struct DpDistribution {
    /// Items per position of the order (root last); they add up to N.
    pub counts: Vec<u64>,
    /// `cost_0(N)`: the optimal makespan as the recurrence adds it up (from the
    /// back). [`crate::scatter::evaluate`] adds the same times from the front and
    /// can differ from it in the last bits.
    pub optimum: f64,
}

/// A cost function ready to be evaluated by index, under a startup rule.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Fun<'a> {
    /// `startup + per_item * x` for x > 0, `at_zero` at 0.
    Affine {
        per_item: f64,
        startup: f64,
        at_zero: f64,
    },
    /// `t(x)`.
    Table(&'a [f64]),
}

impl<'a> Fun<'a> {
    /// The function of `cost` under `rule`.
    pub(crate) fn of(cost: &'a Cost, rule: StartupRule) -> Self {
        match cost {
            Cost::Affine { per_item, startup } => Fun::Affine {
                per_item: *per_item,
                startup: *startup,
                at_zero: match rule {
                    StartupRule::WhenUsed => 0.0,
                    StartupRule::Always => startup + per_item * 0.0,
                },
            },
            Cost::Table(t) => Fun::Table(t),
        }
    }

    /// The value at `x` items: the same f64 as [`Cost::time`].
    #[inline]
    pub(crate) fn at(&self, x: usize) -> f64 {
        match *self {
            Fun::Affine {
                per_item,
                startup,
                at_zero,
            } => {
                if x == 0 {
                    at_zero
                } else {
                    startup + per_item * x as f64
                }
            }
            Fun::Table(t) => t[x],
        }
    }
}

/// The two functions of one processor: communication and computation.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Proc<'a> {
    pub(crate) comm: Fun<'a>,
    pub(crate) comp: Fun<'a>,
}

impl<'a> Proc<'a> {
    /// Processor `i` of `instance`.
    pub(crate) fn of(instance: &'a ScatterInstance, i: usize) -> Self {
        let rule = instance.startup_rule();
        Proc {
            comm: Fun::of(instance.comm(i), rule),
            comp: Fun::of(instance.comp(i), rule),
        }
    }

    /// Time at which it finishes `x` items alone: `Tcomm(x) + Tcomp(x)`.
    #[inline]
    pub(crate) fn alone(&self, x: usize) -> f64 {
        self.comm.at(x) + self.comp.at(x)
    }

    /// The most items it can take and still finish by `t` on its own (the largest x
    /// in `0..=n` with `Tcomm(x) + Tcomp(x) <= t`), `None` if not even 0 items.
    /// Binary search: O(log n).
    pub(crate) fn capacity(&self, n: usize, t: f64) -> Option<usize> {
        if self.alone(0) > t {
            return None;
        }
        let (mut lo, mut hi) = (0usize, n);
        while lo < hi {
            let mid = lo + (hi - lo).div_ceil(2);
            if self.alone(mid) <= t {
                lo = mid;
            } else {
                hi = mid - 1;
            }
        }
        Some(lo)
    }
}

/// `cost(d)` for `d` in `lo..=n` (one stage of the programme): the values held
/// for `lo, lo + 1, …`, infinity beyond them (values above a cut, which are
/// above it for every larger `d` too since `cost` is non-decreasing).
#[derive(Clone, Debug)]
pub(crate) struct Stage {
    /// Smallest `d` held.
    pub(crate) lo: usize,
    /// `cost(lo), cost(lo + 1), …` up to the last value below the cut.
    pub(crate) vals: Vec<f64>,
}

impl Stage {
    /// `cost(d)` for `d >= lo` (infinity beyond the values held).
    #[inline]
    pub(crate) fn at(&self, d: usize) -> f64 {
        self.vals.get(d - self.lo).copied().unwrap_or(f64::INFINITY)
    }
}

/// The last stage: the root alone, `cost(d) = Tcomm(d) + Tcomp(d)` for `d` in
/// `lo..=n`, up to the first value above `cut`.
pub(crate) fn root_stage(root: Proc, n: usize, lo: usize, cut: f64) -> Stage {
    Stage {
        lo,
        vals: (lo..=n)
            .map(|d| root.alone(d))
            .take_while(|&v| v <= cut)
            .collect(),
    }
}

/// Best `e` for one `d` among `e < es` (the branch where the rest of the order is
/// the bottleneck), given the best so far `(best_v, best_e)`; ties go to the
/// smaller `e`. A direct scan, stopped when `Tcomm(e) + cost(u_min)` cannot beat
/// the best.
#[inline]
fn scan_branch(
    proc: Proc,
    c: &Stage,
    d: usize,
    es: usize,
    mut best_v: f64,
    mut best_e: usize,
) -> (f64, usize) {
    // In this branch u = d - e >= d + 1 - es, and cost is non-decreasing; below
    // e_min the rest would get more items than it holds values for.
    let c_min = c.at(d + 1 - es);
    let e_min = (d + 1).saturating_sub(c.lo + c.vals.len());
    for e in e_min..es {
        let me = proc.comm.at(e);
        let bound = me + c_min;
        if bound > best_v || (bound == best_v && best_e < e) {
            break;
        }
        let v = me + c.at(d - e);
        if v < best_v || (v == best_v && e < best_e) {
            best_v = v;
            best_e = e;
        }
    }
    (best_v, best_e)
}

/// The least `e` in `0..=d-c.lo` with `Tcomp(e) >= cost(d - e)`, or `d - c.lo + 1`.
fn crossing(proc: Proc, c: &Stage, d: usize) -> usize {
    let emax = d - c.lo;
    let (mut lo, mut hi) = (0usize, emax + 1);
    while lo < hi {
        let mid = lo + (hi - lo) / 2;
        if proc.comp.at(mid) >= c.at(d - mid) {
            hi = mid;
        } else {
            lo = mid + 1;
        }
    }
    lo
}

/// `cost_i(d)` for a single `d >= c.lo`, and the best `e`. O(d - c.lo) time.
pub(crate) fn single_value(proc: Proc, c: &Stage, d: usize) -> (f64, usize) {
    let emax = d - c.lo;
    // Below e_min the rest would get more items than it holds values for.
    let e_min = (d + 1).saturating_sub(c.lo + c.vals.len());
    let es = crossing(proc, c, d);
    let (best_v, best_e) = if es <= emax {
        (proc.alone(es), es)
    } else {
        (f64::INFINITY, usize::MAX)
    };
    if es == 0 {
        return (best_v, best_e);
    }
    match proc.comm {
        Fun::Affine { .. } => {
            // Every e < es, smallest e first: the first strict minimum wins ties.
            let mut best = (f64::INFINITY, usize::MAX);
            for e in e_min..es {
                let v = proc.comm.at(e) + c.at(d - e);
                if v < best.0 {
                    best = (v, e);
                }
            }
            if best.0 <= best_v {
                best
            } else {
                (best_v, best_e)
            }
        }
        Fun::Table(_) => scan_branch(proc, c, d, es, best_v, best_e),
    }
}

/// One stage of the fast programme: `cost_i(d)` for `d` in `out_lo..=n` from the
/// next stage `c` (`c.lo <= out_lo`), with `e` restricted to `d - e >= c.lo`. The
/// stage stops at the first value above `cut` (every later one is above it too):
/// the values held are exact. Writes the best `e` of every `d` to `choices` when
/// given (`choices[d - out_lo]`; with an infinite cut every `d` is held).
///
/// O(n - out_lo) time plus the table scans when `Tcomm_i` is tabulated.
pub(crate) fn exact_stage(
    proc: Proc,
    c: &Stage,
    n: usize,
    out_lo: usize,
    cut: f64,
    mut choices: Option<&mut [u32]>,
) -> Stage {
    debug_assert!(c.lo <= out_lo);
    let clo = c.lo;
    let mut vals = Vec::with_capacity(n + 1 - out_lo);
    // Monotone queue of u, g(u) = cost(u) - a u increasing from front to back.
    // With an affine Tcomm(e) = b + a e for e > 0, e = 0 lies on that line unless
    // Tcomm(0) differs from b (a startup paid only when used): it is then looked at
    // on its own.
    let (affine, a, zero_apart) = match proc.comm {
        Fun::Affine {
            per_item,
            startup,
            at_zero,
        } => (true, per_item, at_zero != startup),
        Fun::Table(_) => (false, 0.0, false),
    };
    let g = |u: usize| c.at(u) - a * u as f64;
    let mut queue: Vec<usize> = Vec::new();
    let mut head = 0usize;
    let mut next_push = clo;
    let mut es = 0usize;
    for d in out_lo..=n {
        let emax = d - clo;
        while es <= emax && proc.comp.at(es) < c.at(d - es) {
            es += 1;
        }
        let (mut best_v, mut best_e) = if es <= emax {
            (proc.alone(es), es)
        } else {
            (f64::INFINITY, usize::MAX)
        };
        if affine {
            // Window of u = d - e for 1 <= e < es (or 0 <= e < es when e = 0 lies
            // on the line): [d + 1 - es, d - 1] or [d + 1 - es, d].
            let right = if zero_apart {
                d.checked_sub(1)
            } else {
                Some(d)
            };
            if let Some(right) = right {
                while next_push <= right {
                    let gu = g(next_push);
                    while queue.len() > head && g(queue[queue.len() - 1]) >= gu {
                        queue.pop();
                    }
                    queue.push(next_push);
                    next_push += 1;
                }
            }
            if es > 0 {
                let left = d + 1 - es;
                while queue.len() > head && queue[head] < left {
                    head += 1;
                }
                if queue.len() > head && right.is_some_and(|r| queue[head] <= r) {
                    let u = queue[head];
                    let e = d - u;
                    let v = proc.comm.at(e) + c.at(u);
                    if v <= best_v {
                        best_v = v;
                        best_e = e;
                    }
                }
                if zero_apart {
                    // e = 0: Tcomm(0) + max(Tcomp(0), cost(d)) = cost(d) here.
                    let v = proc.comm.at(0) + c.at(d);
                    if v <= best_v {
                        best_v = v;
                        best_e = 0;
                    }
                }
            }
            // Keep the queue from growing without bound when its head moves on.
            if head > 4096 && head * 2 > queue.len() {
                queue.drain(..head);
                head = 0;
            }
        } else if es > 0 {
            (best_v, best_e) = scan_branch(proc, c, d, es, best_v, best_e);
        }
        if best_v > cut {
            break;
        }
        vals.push(best_v);
        if let Some(choices) = choices.as_deref_mut() {
            choices[d - out_lo] = if best_e == usize::MAX {
                0
            } else {
                best_e as u32
            };
        }
    }
    Stage { lo: out_lo, vals }
}

/// Checks the size limits and turns N into an index.
fn size(
    method: &'static str,
    p: usize,
    items: u64,
    work: u128,
    limit: u128,
    what: &'static str,
) -> Result<usize, PlanError> {
    let too_large = || PlanError::TooLarge {
        method,
        what,
        amount: work,
        limit,
        items,
        processors: p,
    };
    if work > limit {
        return Err(too_large());
    }
    usize::try_from(items).map_err(|_| too_large())
}

/// The paper's Algorithm 1: the optimal integer distribution of the instance's N
/// items in `order`, by the dynamic programme over every `d` and every `e`.
///
/// Kept as the reference that [`exact`] is checked against. Among optimal
/// distributions it returns the one with the fewest items at the front of the order
/// (ties go to the smaller `e` at each stage).
///
/// # Arguments
/// * `instance` - the instance (its startup rule applies);
/// * `order` - the sending order: every processor once, the root last.
///
/// # Returns
/// The counts per position of `order` and `cost_0(N)`.
///
/// # Errors
/// [`PlanError::InvalidOrder`] for a bad order; [`PlanError::TooLarge`] beyond
/// [`NAIVE_DP_MAX_STEPS`].
///
/// # Complexity
/// O(p N^2) time, O(p N) space.
///
/// # Example
/// ```
/// use hetbal::scatter::{naive_dp, ScatterInstance};
/// // model.md: N = 3; P0 comm 2 comp 6, P1 comm 4 comp 8, root P2 comp 6 (per item).
/// //   order P1, P0, P2:  P1 gets 1 (4 + 8 = 12), P0 gets 1 (4 + 2 + 6 = 12),
/// //                      the root gets 1 (6 + 6 = 12).
/// let s = ScatterInstance::linear(3, 2, &[2.0, 4.0, 0.0], &[6.0, 8.0, 6.0]).unwrap();
/// let best = naive_dp(&s, &[1, 0, 2]).unwrap();
/// assert_eq!((best.counts, best.optimum), (vec![1, 1, 1], 12.0));
/// assert_eq!(naive_dp(&s, &[0, 1, 2]).unwrap().optimum, 14.0);
/// ```
pub fn naive_dp(instance: &ScatterInstance, order: &[usize]) -> Result<DpDistribution, PlanError> {
    crate::scatter::evaluate::check_order(instance, order)?;
    let p = order.len();
    let items = instance.items();
    let steps = p as u128 * (u128::from(items) + 1) * (u128::from(items) + 2) / 2;
    let n = size("naive-dp", p, items, steps, NAIVE_DP_MAX_STEPS, "steps")?;
    // cost of the last processor alone.
    let last = Proc::of(instance, order[p - 1]);
    let mut cost: Vec<f64> = (0..=n).map(|d| last.alone(d)).collect();
    let mut choices: Vec<Vec<u32>> = Vec::with_capacity(p.saturating_sub(1));
    for k in (0..p - 1).rev() {
        let proc = Proc::of(instance, order[k]);
        let comm: Vec<f64> = (0..=n).map(|e| proc.comm.at(e)).collect();
        let alone: Vec<f64> = (0..=n).map(|e| proc.alone(e)).collect();
        let mut next = vec![0.0; n + 1];
        let mut choice = vec![0u32; n + 1];
        for d in 0..=n {
            let mut best = f64::INFINITY;
            let mut arg = 0usize;
            for e in 0..=d {
                let v = alone[e].max(comm[e] + cost[d - e]);
                if v < best {
                    best = v;
                    arg = e;
                }
            }
            next[d] = best;
            choice[d] = arg as u32;
        }
        cost = next;
        choices.push(choice);
    }
    choices.reverse();
    let mut counts = vec![0u64; p];
    let mut d = n;
    for (k, choice) in choices.iter().enumerate() {
        let e = choice[d] as usize;
        counts[k] = e as u64;
        d -= e;
    }
    counts[p - 1] = d as u64;
    Ok(DpDistribution {
        counts,
        optimum: cost[n],
    })
}

/// The optimal integer distribution of the instance's N items in `order`: the same
/// optimum as [`naive_dp`] (the paper's Algorithm 1), found without trying every
/// split.
///
/// Each stage computes `cost_i(d)` for every `d` from the crossing `e*(d)` (where
/// processor i stops being faster than the rest of the order), which only moves
/// forward with `d`, and a sliding-window minimum for the other branch; the module
/// documentation gives the argument. The first processor of the order is evaluated
/// at `d = N` only.
///
/// Ties between optimal splits go to the smaller count at each stage, as in
/// [`naive_dp`]; with affine communication costs, two splits whose sums differ only
/// in the last bit of an f64 can be told apart differently, so the two may return
/// different optimal counts (the optimum is the same up to that last bit).
///
/// # Arguments
/// * `instance` - the instance (its startup rule applies);
/// * `order` - the sending order: every processor once, the root last.
///
/// # Returns
/// The counts per position of `order` and `cost_0(N)`.
///
/// # Errors
/// [`PlanError::InvalidOrder`] for a bad order; [`PlanError::TooLarge`] beyond
/// [`EXACT_MAX_CELLS`] cells `p (N+1)`.
///
/// # Complexity
/// With affine communication costs: O(p N) time (`N = 817,101`, `p = 16` takes
/// well under a second) and O(p N) space (4 bytes per cell for the choices). With
/// a tabulated communication cost the inner minimisation is a (min, +)
/// convolution: O(N^2) per such processor in the worst case, usually far less.
///
/// # Example
/// ```
/// use hetbal::scatter::{exact, naive_dp, ScatterInstance};
/// let s = ScatterInstance::linear(3, 2, &[2.0, 4.0, 0.0], &[6.0, 8.0, 6.0]).unwrap();
/// assert_eq!(exact(&s, &[1, 0, 2]).unwrap(), naive_dp(&s, &[1, 0, 2]).unwrap());
///
/// // 817,101 items on 16 processors, instantly.
/// let comm: Vec<(f64, f64)> = (0..16).map(|i| (if i == 15 { 0.0 } else { 1e-4 * (i + 1) as f64 }, 0.0)).collect();
/// let comp: Vec<(f64, f64)> = (0..16).map(|i| (5e-3 + 1e-3 * (i % 4) as f64, 0.0)).collect();
/// let big = ScatterInstance::affine(817_101, 15, &comm, &comp, Default::default()).unwrap();
/// let order: Vec<usize> = (0..16).collect();
/// let d = exact(&big, &order).unwrap();
/// assert_eq!(d.counts.iter().sum::<u64>(), 817_101);
/// ```
pub fn exact(instance: &ScatterInstance, order: &[usize]) -> Result<DpDistribution, PlanError> {
    crate::scatter::evaluate::check_order(instance, order)?;
    let p = order.len();
    let items = instance.items();
    let cells = p as u128 * (u128::from(items) + 1);
    let n = size("exact", p, items, cells, EXACT_MAX_CELLS, "table cells")?;
    let last = Proc::of(instance, order[p - 1]);
    if p == 1 {
        return Ok(DpDistribution {
            counts: vec![items],
            optimum: last.alone(n),
        });
    }
    let mut stage = root_stage(last, n, 0, f64::INFINITY);
    // choices[k] for positions 1..p-1 (position 0 is evaluated at d = N only).
    let mut choices: Vec<Vec<u32>> = vec![Vec::new(); p - 1];
    for k in (1..p - 1).rev() {
        let proc = Proc::of(instance, order[k]);
        let mut choice = vec![0u32; n + 1];
        stage = exact_stage(proc, &stage, n, 0, f64::INFINITY, Some(&mut choice));
        choices[k] = choice;
    }
    let (optimum, e0) = single_value(Proc::of(instance, order[0]), &stage, n);
    let mut counts = vec![0u64; p];
    counts[0] = e0 as u64;
    let mut d = n - e0;
    for k in 1..p - 1 {
        let e = choices[k][d] as usize;
        counts[k] = e as u64;
        d -= e;
    }
    counts[p - 1] = d as u64;
    Ok(DpDistribution { counts, optimum })
}
