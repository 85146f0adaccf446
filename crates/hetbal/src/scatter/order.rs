//! Sending orders: the file's ([`given_order`]), Theorem 3's ([`bandwidth_order`])
//! and the best one found by search ([`best_order`]).

use crate::scatter::dp::{exact_stage, root_stage, single_value, Proc, Stage};
use crate::scatter::rational::{linear_line, relaxation_value, relaxed_line, Line};
use crate::scatter::{evaluate, linear, lp, Method, PlanError, ScatterInstance, StartupRule};

/// The most processors (root included) for which [`best_order`] tries every order.
pub const EXHAUSTIVE_MAX_PROCESSORS: usize = 8;

/// The work budget of [`best_order`] with the exact methods, in cells of the dynamic
/// programme (one cell = one `cost_i(d)`, 10 to 20 ns): the exhaustive search and
/// the local search stop there (at most a few seconds of work).
pub const SEARCH_MAX_CELLS: u128 = 300_000_000;

/// The work budget of [`best_order`]'s rational evaluations (`lp`, `linear`, and
/// the relaxation that guides and cuts off the exact search), in units of p^2
/// (one evaluation of an order of p processors costs p^2 units): about a second.
pub const SEARCH_MAX_RATIONAL_WORK: u64 = 20_000_000;

/// How many evaluations of O(p^2) fit in the rational budget: at least 50 on up
/// to 1,000 processors, at least 3 beyond (50 evaluations of an `lp` order of
/// 10^4 processors took 56 s).
fn rational_evaluations(p: usize) -> u64 {
    let least = if p <= 1000 { 50 } else { 3 };
    (SEARCH_MAX_RATIONAL_WORK / (p as u64 * p as u64).max(1)).max(least)
}

/// The file's order with the root moved last (the root is always served last).
///
/// Complexity: O(p).
///
/// # Example
/// ```
/// use hetbal::scatter::{given_order, ScatterInstance};
/// let s = ScatterInstance::linear(3, 0, &[0.0, 4.0, 2.0], &[6.0, 8.0, 6.0]).unwrap();
/// assert_eq!(given_order(&s), vec![1, 2, 0]);
/// ```
pub fn given_order(instance: &ScatterInstance) -> Vec<usize> {
    let root = instance.root();
    (0..instance.len())
        .filter(|&i| i != root)
        .chain(std::iter::once(root))
        .collect()
}

/// Theorem 3's order: decreasing bandwidth (increasing time per item sent, see
/// [`crate::scatter::Cost::rate`]), then the root. Ties go to the smaller startup
/// (`t(1)` for tables), then to the file order.
///
/// Optimal for rational shares with linear costs; not always with integer shares
/// or startups (model.md, and [`best_order`]).
///
/// Complexity: O(p log p).
///
/// # Example
/// ```
/// use hetbal::scatter::{bandwidth_order, ScatterInstance};
/// let s = ScatterInstance::linear(3, 2, &[2.0, 1.0, 0.0], &[6.0, 8.0, 6.0]).unwrap();
/// assert_eq!(bandwidth_order(&s), vec![1, 0, 2]);
/// ```
pub fn bandwidth_order(instance: &ScatterInstance) -> Vec<usize> {
    let root = instance.root();
    let mut others: Vec<usize> = (0..instance.len()).filter(|&i| i != root).collect();
    others.sort_by(|&i, &j| {
        let (ci, cj) = (instance.comm(i), instance.comm(j));
        ci.rate()
            .total_cmp(&cj.rate())
            .then(ci.first_item().total_cmp(&cj.first_item()))
            .then(i.cmp(&j))
    });
    others.push(root);
    others
}

/// How [`best_order`] found its order.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SearchKind {
    /// Every order was considered: no order does better.
    Exhaustive,
    /// A local search stopped at an order that no swap of two processors and no
    /// move of one processor improves.
    LocalOptimum,
    /// The search stopped at its work budget ([`SEARCH_MAX_CELLS`] or
    /// [`SEARCH_MAX_RATIONAL_WORK`]) with the best order met so far.
    Budget,
}

/// The order chosen by [`best_order`] and how it was found.
#[derive(Clone, Debug, PartialEq)]
pub struct OrderSearch {
    /// The order, root last.
    pub order: Vec<usize>,
    /// Its makespan as the method computes it (for the exact methods: `cost_0(N)`
    /// of the dynamic programme).
    pub value: f64,
    /// The value of [`bandwidth_order`] the search started from; `value` is never
    /// above it.
    pub bandwidth_value: f64,
    /// How the order was found.
    pub kind: SearchKind,
    /// Orders whose value was computed (or cut off as no better than the best).
    pub orders_evaluated: u64,
    /// Cells of the dynamic programme computed (0 for the rational methods).
    pub cells: u128,
}

/// The exact methods' search: orders valued by the fast dynamic programme, with
/// every value above the best known cut off early.
struct Searcher<'a> {
    procs: Vec<Proc<'a>>,
    root: usize,
    n: usize,
    /// Per processor, the most items it can take and finish by `caps_at`.
    caps: Vec<Option<usize>>,
    caps_at: f64,
    cells: u128,
    evaluated: u64,
    budget: u128,
    items: u64,
    /// Per processor, the relaxation of [`crate::scatter::lower_bound`].
    relaxed: Vec<Line>,
    /// Per processor, its linear minorant (Theorem 3 applies to it).
    linear: Vec<Line>,
    /// Stages of `cache_order` at `cache_cut`, by position (see `fill_cache`).
    cache: Vec<Option<Stage>>,
    cache_order: Vec<usize>,
    cache_cut: f64,
}

/// Cells of work of a stage: the values it holds, and the one found above the cut.
fn work(stage: &Stage) -> u128 {
    stage.vals.len() as u128 + 1
}

/// True when a lower bound shows that no order it covers beats `cut` (with a
/// margin for the rounding of the bound).
fn beaten(bound: f64, cut: f64) -> bool {
    bound > cut + 1e-12 * cut.abs()
}

impl<'a> Searcher<'a> {
    fn new(instance: &'a ScatterInstance, n: usize, budget: u128) -> Self {
        Searcher {
            items: instance.items(),
            relaxed: (0..instance.len())
                .map(|i| relaxed_line(instance, i))
                .collect(),
            linear: (0..instance.len())
                .map(|i| linear_line(instance, i))
                .collect(),
            procs: (0..instance.len()).map(|i| Proc::of(instance, i)).collect(),
            root: instance.root(),
            n,
            caps: vec![Some(n); instance.len()],
            caps_at: f64::INFINITY,
            cells: 0,
            evaluated: 0,
            budget,
            cache: Vec::new(),
            cache_order: Vec::new(),
            cache_cut: f64::NAN,
        }
    }

    fn over_budget(&self) -> bool {
        self.cells > self.budget
    }

    /// Capacities at `cut` (recomputed when the cut moves).
    fn set_cut(&mut self, cut: f64) {
        if cut != self.caps_at {
            self.caps_at = cut;
            let n = self.n;
            self.caps = self
                .procs
                .iter()
                .map(|p| {
                    if cut.is_finite() {
                        p.capacity(n, cut)
                    } else {
                        Some(n)
                    }
                })
                .collect();
        }
    }

    /// The least number of items the processors after `prefix` must take when every
    /// processor of `prefix` ends by the cut; `None` if one cannot.
    fn low(&self, prefix: &[usize]) -> Option<usize> {
        let mut room = 0usize;
        for &i in prefix {
            room = room.saturating_add(self.caps[i]?);
        }
        Some(self.n.saturating_sub(room))
    }

    /// `cost_0(N)` of `order` if it is below `cut`, otherwise some value `>= cut`
    /// (often infinity: the computation stops as soon as a lower bound, or the end
    /// of the order built so far, shows that it cannot end before `cut`). Stages
    /// of the end of the order shared with the cached order are reused.
    fn value(&mut self, order: &[usize], cut: f64) -> f64 {
        self.set_cut(cut);
        self.evaluated += 1;
        let p = order.len();
        let n = self.n;
        if p == 1 {
            return self.procs[order[0]].alone(n);
        }
        if cut.is_finite() {
            self.cells += (p * p / 8) as u128;
            let lines: Vec<Line> = order.iter().map(|&i| self.relaxed[i]).collect();
            if beaten(relaxation_value(&lines, self.items), cut) {
                return f64::INFINITY;
            }
        }
        let mut cells = 0u128;
        let mut owned: Option<Stage> = None;
        // Positions top..=1 are computed, those after come from the cache.
        let cached = self.cache_cut == cut && self.cache_order.len() == p;
        let top = if cached {
            (0..p)
                .rev()
                .find(|&k| order[k] != self.cache_order[k])
                .unwrap_or(0)
        } else {
            let Some(lo) = self.low(&order[..p - 1]) else {
                return f64::INFINITY;
            };
            let root = root_stage(self.procs[self.root], n, lo, cut);
            self.cells += work(&root);
            if root.at(lo) >= cut {
                return f64::INFINITY;
            }
            owned = Some(root);
            p - 2
        };
        for k in (1..=top).rev() {
            let Some(lo) = self.low(&order[..k]) else {
                self.cells += cells;
                return f64::INFINITY;
            };
            let prev = match &owned {
                Some(stage) => stage,
                None => self.cache[k + 1].as_ref().expect("cached stage"),
            };
            let lo = lo.max(prev.lo);
            let next = exact_stage(self.procs[order[k]], prev, n, lo, cut, None);
            cells += work(&next);
            if next.at(lo) >= cut {
                self.cells += cells;
                return f64::INFINITY;
            }
            owned = Some(next);
        }
        let prev = match &owned {
            Some(stage) => stage,
            None => self.cache[1].as_ref().expect("cached stage"),
        };
        cells += work(prev);
        let v = single_value(self.procs[order[0]], prev, n).0;
        self.cells += cells;
        v
    }

    /// Computes and keeps every stage of `order` at `cut` (positions 1..p), for
    /// [`Searcher::value`] to reuse on orders with the same end.
    fn fill_cache(&mut self, order: &[usize], cut: f64) {
        self.set_cut(cut);
        self.cache_order.clear();
        self.cache.clear();
        let p = order.len();
        let n = self.n;
        if p <= 1 {
            return;
        }
        let Some(lo) = self.low(&order[..p - 1]) else {
            return;
        };
        let mut stages: Vec<Option<Stage>> = vec![None; p];
        let mut stage = root_stage(self.procs[self.root], n, lo, cut);
        self.cells += work(&stage);
        for k in (1..p - 1).rev() {
            let Some(lo) = self.low(&order[..k]) else {
                return;
            };
            let lo = lo.max(stage.lo);
            let next = exact_stage(self.procs[order[k]], &stage, n, lo, cut, None);
            self.cells += work(&next);
            stages[k + 1] = Some(stage);
            stage = next;
        }
        stages[1] = Some(stage);
        self.cache = stages;
        self.cache_order = order.to_vec();
        self.cache_cut = cut;
    }

    /// First-improvement local search on exact values from `start`; each round
    /// tries the neighbours in the order of `guide` (cheap, not a bound) and keeps
    /// the first that is better. Returns the order, its value and whether it is a
    /// local optimum (false: the budget ran out first).
    fn local(
        &mut self,
        start: Vec<usize>,
        start_value: f64,
        guide: &dyn Fn(&[usize]) -> f64,
    ) -> (Vec<usize>, f64, bool) {
        let all = Moves::new(start.len() - 1);
        let (mut current, mut value) = (start, start_value);
        'round: loop {
            if self.over_budget() {
                return (current, value, false);
            }
            self.fill_cache(&current, value);
            // Neighbours by the guide when it is cheap, in move order otherwise.
            let p = current.len() as u64;
            let sequence: Box<dyn Iterator<Item = usize>> =
                if all.len() as u64 * p * p <= SEARCH_MAX_RATIONAL_WORK / 20 {
                    let keys: Vec<f64> = (0..all.len())
                        .map(|k| guide(&apply(&current, all.get(k))))
                        .collect();
                    let mut sorted: Vec<usize> = (0..all.len()).collect();
                    sorted.sort_by(|&x, &y| keys[x].total_cmp(&keys[y]));
                    Box::new(sorted.into_iter())
                } else {
                    Box::new(0..all.len())
                };
            for k in sequence {
                if self.over_budget() {
                    return (current, value, false);
                }
                let candidate = apply(&current, all.get(k));
                let v = self.value(&candidate, value);
                if v < value {
                    current = candidate;
                    value = v;
                    continue 'round;
                }
            }
            return (current, value, true);
        }
    }

    /// Depth-first search over every order, built from the back: `placed` holds the
    /// processors after the current position (root first), `stage` their
    /// `cost(d)`. Returns false when the budget ran out.
    fn exhaustive(
        &mut self,
        stage: &Stage,
        placed: &mut Vec<usize>,
        remaining: &mut Vec<usize>,
        best: &mut (f64, Vec<usize>),
    ) -> bool {
        let n = self.n;
        if remaining.len() == 1 {
            let first = remaining[0];
            self.evaluated += 1;
            self.cells += work(stage);
            let (v, _) = single_value(self.procs[first], stage, n);
            if v < best.0 {
                let mut order = vec![first];
                order.extend(placed.iter().rev());
                *best = (v, order);
            }
            return !self.over_budget();
        }
        for idx in 0..remaining.len() {
            self.set_cut(best.0);
            let j = remaining.remove(idx);
            let back: Vec<usize> = std::iter::once(j)
                .chain(placed.iter().rev().copied())
                .collect();
            let hopeless = beaten(
                partial_bound(&self.linear, remaining, &back, self.items),
                best.0,
            );
            let low = if hopeless { None } else { self.low(remaining) };
            if let Some(lo) = low {
                let lo = lo.max(stage.lo);
                let next = exact_stage(self.procs[j], stage, n, lo, best.0, None);
                self.cells += work(&next);
                if next.at(lo) < best.0 {
                    placed.push(j);
                    let within = self.exhaustive(&next, placed, remaining, best);
                    placed.pop();
                    if !within {
                        remaining.insert(idx, j);
                        return false;
                    }
                }
            }
            remaining.insert(idx, j);
            if self.over_budget() {
                return false;
            }
        }
        true
    }
}

/// A lower bound on the makespan of every order that puts the processors of
/// `front`, in any order, before `back` (an order's end, root last): the rational
/// optimum on the linear minorants `lines` (per processor) with `front` in
/// decreasing bandwidth, which Theorem 3 (an exchange argument on adjacent
/// processors) makes the best arrangement of `front`. O(p^2).
fn partial_bound(lines: &[Line], front: &[usize], back: &[usize], items: u64) -> f64 {
    let mut sorted = front.to_vec();
    sorted.sort_by(|&x, &y| lines[x].a.total_cmp(&lines[y].a));
    let order: Vec<Line> = sorted.iter().chain(back).map(|&i| lines[i]).collect();
    relaxation_value(&order, items)
}

/// The moves of the local search on the `m` positions before the root: every
/// swap of two positions, then every move of one processor to another position
/// (not next to it: that is a swap). Each is computed from its index, in O(log m)
/// time, so that the about 1.5 m^2 moves take O(m) memory.
struct Moves {
    m: usize,
    /// Moves before each row: swaps of position i with a later one, then moves
    /// of position i elsewhere.
    swaps_before: Vec<usize>,
    shifts_before: Vec<usize>,
}

impl Moves {
    fn new(m: usize) -> Self {
        let prefix = |row: &dyn Fn(usize) -> usize| -> Vec<usize> {
            std::iter::once(0)
                .chain((0..m).scan(0, |sum, i| {
                    *sum += row(i);
                    Some(*sum)
                }))
                .collect()
        };
        // Position i moves to every j but i - 1, i and i + 1.
        let shifts = |i: usize| m - 1 - usize::from(i > 0) - usize::from(i + 1 < m);
        Moves {
            m,
            swaps_before: prefix(&|i| m - 1 - i),
            shifts_before: prefix(&|i| if m < 2 { 0 } else { shifts(i) }),
        }
    }

    fn len(&self) -> usize {
        self.swaps_before[self.m] + self.shifts_before[self.m]
    }

    /// Move `k` (< [`Moves::len`]): `(true, i, j)` swaps positions i < j,
    /// `(false, i, j)` moves position i to position j.
    fn get(&self, k: usize) -> (bool, usize, usize) {
        // The row whose range holds `k`.
        let row = |before: &[usize], k: usize| before.partition_point(|&b| b <= k) - 1;
        let swaps = self.swaps_before[self.m];
        if k < swaps {
            let i = row(&self.swaps_before, k);
            (true, i, i + 1 + k - self.swaps_before[i])
        } else {
            let k = k - swaps;
            let i = row(&self.shifts_before, k);
            let t = k - self.shifts_before[i];
            let below = i.saturating_sub(1);
            (false, i, if t < below { t } else { t - below + i + 2 })
        }
    }
}

fn apply(order: &[usize], (swap, i, j): (bool, usize, usize)) -> Vec<usize> {
    let mut next = order.to_vec();
    if swap {
        next.swap(i, j);
    } else {
        let x = next.remove(i);
        next.insert(j, x);
    }
    next
}

/// First-improvement local search from `start`: `eval(order, cut)` returns the
/// value when below `cut` (anything `>= cut` otherwise), `None` when out of
/// budget. Returns the best order, its value and whether it is a local optimum.
fn local_search(
    start: Vec<usize>,
    start_value: f64,
    eval: &mut dyn FnMut(&[usize], f64) -> Option<f64>,
) -> (Vec<usize>, f64, bool) {
    let m = start.len() - 1;
    let all = Moves::new(m);
    let (mut current, mut value) = (start, start_value);
    if all.len() == 0 {
        return (current, value, true);
    }
    let mut since_improvement = 0usize;
    let mut k = 0usize;
    while since_improvement < all.len() {
        let candidate = apply(&current, all.get(k));
        match eval(&candidate, value) {
            None => return (current, value, false),
            Some(v) if v < value => {
                current = candidate;
                value = v;
                since_improvement = 0;
            }
            Some(_) => since_improvement += 1,
        }
        k = (k + 1) % all.len();
    }
    (current, value, true)
}

/// Every permutation of `items`, each passed to `visit` (Heap's algorithm).
fn permutations(items: &mut [usize], visit: &mut dyn FnMut(&[usize])) {
    let n = items.len();
    let mut c = vec![0usize; n];
    visit(items);
    let mut i = 0;
    while i < n {
        if c[i] < i {
            if i % 2 == 0 {
                items.swap(0, i);
            } else {
                items.swap(c[i], i);
            }
            visit(items);
            c[i] += 1;
            i = 0;
        } else {
            c[i] = 0;
            i += 1;
        }
    }
}

/// The makespan of the rational methods' rounded distribution in `order`.
fn rational_value(
    instance: &ScatterInstance,
    method: Method,
    order: &[usize],
) -> Result<f64, PlanError> {
    let d = match method {
        Method::Lp => lp(instance, order)?,
        _ => linear(instance, order)?,
    };
    Ok(evaluate(instance, order, &d.counts)?.makespan)
}

/// The best sending order for `method`, never worse than [`bandwidth_order`].
///
/// Orders are valued by the method itself: the optimal makespan in that order for
/// `exact` and `naive-dp` (both computed by the fast programme, since they agree),
/// the makespan of the rounded distribution for `lp` and `linear`.
///
/// - With at most [`EXHAUSTIVE_MAX_PROCESSORS`] processors: every order. For the
///   exact methods, orders are built from the back (the root first) so that orders
///   sharing their end share its stages, and a partial order is dropped as soon as
///   its end alone cannot finish before the best order found (every processor in
///   front takes at most the items it can finish by then). The result is then the
///   best of all orders ([`SearchKind::Exhaustive`]).
/// - Otherwise, or if that search runs out of budget: a first-improvement local
///   search over swaps of two processors and moves of one, started from the best of
///   the bandwidth order, the file's order and (exact methods) the local optimum of
///   the rational relaxation ([`crate::scatter::lower_bound`]'s), which is cheap.
///   It stops at a local optimum or at the budget.
///
/// # Errors
/// Those of the method on this instance (e.g. [`PlanError::NeedsAffine`] for `lp`
/// with tables, [`PlanError::TooLarge`]).
///
/// # Complexity
/// Exact methods: at most about [`SEARCH_MAX_CELLS`] cells of O(1) work (with
/// affine communication costs), usually far fewer thanks to the cut-offs. Rational
/// methods: about [`SEARCH_MAX_RATIONAL_WORK`] units of work (p^2 per order).
///
/// # Example
/// ```
/// use hetbal::scatter::{best_order, bandwidth_order, Method, ScatterInstance, SearchKind};
/// // model.md: serving P0 (the faster link) first is Theorem 3's order, and it
/// // gives 14; serving P1 first gives 12.
/// let s = ScatterInstance::linear(3, 2, &[2.0, 4.0, 0.0], &[6.0, 8.0, 6.0]).unwrap();
/// assert_eq!(bandwidth_order(&s), vec![0, 1, 2]);
/// let best = best_order(&s, Method::Exact).unwrap();
/// assert_eq!((best.order, best.value, best.bandwidth_value), (vec![1, 0, 2], 12.0, 14.0));
/// assert_eq!(best.kind, SearchKind::Exhaustive);
/// ```
pub fn best_order(instance: &ScatterInstance, method: Method) -> Result<OrderSearch, PlanError> {
    let bandwidth = bandwidth_order(instance);
    let given = given_order(instance);
    match method {
        Method::Exact | Method::NaiveDp => {
            // Sizes as for `exact` (the final plan is computed by it).
            let exact_start = crate::scatter::exact(instance, &bandwidth)?;
            best_exact(instance, bandwidth, given, exact_start.optimum)
        }
        Method::Lp | Method::Linear => best_rational(instance, method, bandwidth, given),
    }
}

fn best_exact(
    instance: &ScatterInstance,
    bandwidth: Vec<usize>,
    given: Vec<usize>,
    bandwidth_value: f64,
) -> Result<OrderSearch, PlanError> {
    let n = usize::try_from(instance.items()).expect("checked by exact");
    let p = instance.len();
    let mut s = Searcher::new(instance, n, SEARCH_MAX_CELLS);
    let mut best = (bandwidth_value, bandwidth.clone());
    let given_value = s.value(&given, best.0);
    if given_value < best.0 {
        best = (given_value, given);
    }
    let done = |s: &Searcher, best: (f64, Vec<usize>), kind| OrderSearch {
        order: best.1,
        value: best.0,
        bandwidth_value,
        kind,
        orders_evaluated: s.evaluated,
        cells: s.cells,
    };
    if p <= 2 {
        return Ok(done(&s, best, SearchKind::Exhaustive));
    }
    if p <= EXHAUSTIVE_MAX_PROCESSORS {
        // Place low-bandwidth processors at the back first: good orders early.
        let mut remaining: Vec<usize> = bandwidth[..p - 1].iter().rev().copied().collect();
        s.set_cut(best.0);
        if let Some(lo) = s.low(&remaining) {
            let root = root_stage(s.procs[s.root], n, lo, best.0);
            s.cells += work(&root);
            let complete = root.at(lo) >= best.0
                || s.exhaustive(&root, &mut vec![s.root], &mut remaining, &mut best);
            if complete {
                return Ok(done(&s, best, SearchKind::Exhaustive));
            }
        } else {
            return Ok(done(&s, best, SearchKind::Exhaustive));
        }
    }
    // Local search on a cheap guide (the paper's LP, every startup paid), then on
    // exact values, trying neighbours in the guide's order.
    let always = instance.with_rule(StartupRule::Always);
    let guide_lines: Vec<Line> = (0..p).map(|i| relaxed_line(&always, i)).collect();
    let items = instance.items();
    let guide = |order: &[usize]| {
        let lines: Vec<Line> = order.iter().map(|&i| guide_lines[i]).collect();
        relaxation_value(&lines, items)
    };
    let mut guide_calls = 0u64;
    let (guess, _, _) = local_search(bandwidth.clone(), guide(&bandwidth), &mut |order, _| {
        guide_calls += 1;
        (guide_calls <= rational_evaluations(p)).then(|| guide(order))
    });
    if guess != best.1 && !s.over_budget() {
        let v = s.value(&guess, best.0);
        if v < best.0 {
            best = (v, guess);
        }
    }
    let (order, value, converged) = s.local(best.1.clone(), best.0, &guide);
    let kind = if converged {
        SearchKind::LocalOptimum
    } else {
        SearchKind::Budget
    };
    Ok(done(&s, (value, order), kind))
}

fn best_rational(
    instance: &ScatterInstance,
    method: Method,
    bandwidth: Vec<usize>,
    given: Vec<usize>,
) -> Result<OrderSearch, PlanError> {
    let p = instance.len();
    let bandwidth_value = rational_value(instance, method, &bandwidth)?;
    let mut best = (bandwidth_value, bandwidth);
    let mut evaluated = 1u64;
    let given_value = rational_value(instance, method, &given)?;
    evaluated += 1;
    if given_value < best.0 {
        best = (given_value, given);
    }
    let kind;
    if p <= EXHAUSTIVE_MAX_PROCESSORS {
        let root = instance.root();
        let mut others: Vec<usize> = best.1[..p - 1].to_vec();
        let mut failure = None;
        permutations(&mut others, &mut |perm| {
            if failure.is_some() {
                return;
            }
            let mut order = perm.to_vec();
            order.push(root);
            evaluated += 1;
            match rational_value(instance, method, &order) {
                Ok(v) if v < best.0 => best = (v, order),
                Ok(_) => {}
                Err(e) => failure = Some(e),
            }
        });
        if let Some(e) = failure {
            return Err(e);
        }
        kind = SearchKind::Exhaustive;
    } else {
        let mut failure = None;
        let (order, value, converged) = local_search(best.1.clone(), best.0, &mut |order, _| {
            if evaluated >= rational_evaluations(p) {
                return None;
            }
            evaluated += 1;
            match rational_value(instance, method, order) {
                Ok(v) => Some(v),
                Err(e) => {
                    failure = Some(e);
                    None
                }
            }
        });
        if let Some(e) = failure {
            return Err(e);
        }
        best = (value, order);
        kind = if converged {
            SearchKind::LocalOptimum
        } else {
            SearchKind::Budget
        };
    }
    Ok(OrderSearch {
        order: best.1,
        value: best.0,
        bandwidth_value,
        kind,
        orders_evaluated: evaluated,
        cells: 0,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The moves computed from their index are the list written out: every
    /// swap of two positions, then every move of one position to another not
    /// next to it, in that order.
    #[test]
    fn moves_by_index_are_every_swap_then_every_move() {
        for m in 0..14usize {
            let mut listed = Vec::new();
            for i in 0..m {
                for j in i + 1..m {
                    listed.push((true, i, j));
                }
            }
            for i in 0..m {
                for j in 0..m {
                    if i.abs_diff(j) > 1 {
                        listed.push((false, i, j));
                    }
                }
            }
            let moves = Moves::new(m);
            let by_index: Vec<_> = (0..moves.len()).map(|k| moves.get(k)).collect();
            assert_eq!(by_index, listed, "m = {m}");
        }
    }

    /// `partial_bound` equals the least rational optimum over every arrangement of
    /// the front (so it is a valid bound): checked against all of them.
    #[test]
    fn partial_bound_is_the_best_arrangement_of_the_front() {
        let mut rng = crate::random::SplitMix64::new(0x2545_f491_4f6c_dd1d);
        let mut next = move || rng.unit();
        for _ in 0..500 {
            let p = 2 + (next() * 6.0) as usize;
            let lines: Vec<Line> = (0..p)
                .map(|i| Line {
                    a: if i + 1 == p { 0.0 } else { 0.01 + next() * 3.0 },
                    b: 0.0,
                    w: 0.01 + next() * 5.0,
                    s: 0.0,
                })
                .collect();
            let items = 1 + (next() * 1e6) as u64;
            let split = (next() * (p - 1) as f64) as usize; // front = 0..split
            let front: Vec<usize> = (0..split).collect();
            let back: Vec<usize> = (split..p).collect();
            let bound = partial_bound(&lines, &front, &back, items);
            let mut least = f64::INFINITY;
            let mut arrangement = front.clone();
            permutations(&mut arrangement, &mut |perm| {
                let order: Vec<Line> = perm.iter().chain(&back).map(|&i| lines[i]).collect();
                least = least.min(relaxation_value(&order, items));
            });
            assert!(
                (bound - least).abs() <= 1e-12 * least,
                "bound {bound} but the best arrangement gives {least}"
            );
        }
    }
}
