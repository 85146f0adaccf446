//! Rational relaxations: the paper's linear programme for affine costs ([`lp`]), the
//! closed form of linear costs ([`linear`]), lower bounds ([`lower_bound`]) and the
//! paper's rounding ([`round_shares`]).
//!
//! # The linear programme, solved exactly in a fixed order
//!
//! With affine costs `Tcomm_i(x) = a_i x + b_i`, `Tcomp_i(x) = w_i x + s_i` and
//! every startup paid, the paper's LP is: minimise T subject to
//! `sum_{j<=k} (a_j n_j + b_j) + w_k n_k + s_k <= T` for every position k,
//! `sum n = N`, `n >= 0`. Let `M_k(t)` be the most items (rational) that positions
//! `k..p-1` process within `t` when the root starts sending to k at time 0. It is
//! concave, non-decreasing and piecewise linear, and
//! `M_k(t) = max_e e + M_{k+1}(t - b_k - a_k e)` over the `e >= 0` with
//! `b_k + s_k + (a_k + w_k) e <= t`. The best `e` leaves the rest of the order the
//! time `y = clamp(theta, l(t), t - b_k)`, where `theta` is the point where the
//! slope of `M_{k+1}` falls to `1 / a_k` (beyond it an item here costs the rest
//! more than it brings) and `l(t)` is where processor k's own deadline binds.
//! Building `M_{p-1}, …, M_0` this way is exact and takes O(p^2) time; the optimum
//! is the least `T` with `M_0(T) >= N`, and the shares follow from front to back.
//! The test suite checks it against a general LP solver.

use crate::scatter::{Cost, PlanError, ScatterInstance, StartupRule};

/// A rational distribution and its rounding.
#[derive(Clone, Debug, PartialEq)]
pub struct RationalDistribution {
    /// Rational items per position of the order (they add up to N up to rounding
    /// errors of f64).
    pub shares: Vec<f64>,
    /// The rational optimum T of the relaxation in this order.
    pub rational_makespan: f64,
    /// The shares rounded by the paper's scheme ([`round_shares`]): they add up to
    /// N and differ from the shares by less than one item each.
    pub counts: Vec<u64>,
    /// `max_k (sum_{j<=k} a_j + w_k)` over the positions k: with every startup
    /// paid, the rounded distribution ends by `rational_makespan + guarantee`, and
    /// `rational_makespan` is at most the optimal integer makespan, so the rounding
    /// loses less than `guarantee` (the paper's bound).
    pub guarantee: f64,
}

/// `Tcomm(x) = a x + b`, `Tcomp(x) = w x + s`, every startup paid.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct Line {
    pub(crate) a: f64,
    pub(crate) b: f64,
    pub(crate) w: f64,
    pub(crate) s: f64,
}

/// A concave, non-decreasing, piecewise-linear function on `[xs[0], ∞)`: value
/// `vs[j]` at `xs[j]` and slope `rs[j]` up to `xs[j+1]` (the last slope to
/// infinity), or `+∞` everywhere on its domain.
#[derive(Clone, Debug)]
struct Pl {
    xs: Vec<f64>,
    vs: Vec<f64>,
    rs: Vec<f64>,
    infinite: bool,
}

impl Pl {
    /// The zero function on `[0, ∞)` (no processor).
    fn zero() -> Pl {
        Pl {
            xs: vec![0.0],
            vs: vec![0.0],
            rs: vec![0.0],
            infinite: false,
        }
    }

    fn infinite(start: f64) -> Pl {
        Pl {
            xs: vec![start],
            vs: vec![f64::INFINITY],
            rs: vec![0.0],
            infinite: true,
        }
    }

    fn empty() -> Pl {
        Pl {
            xs: Vec::new(),
            vs: Vec::new(),
            rs: Vec::new(),
            infinite: false,
        }
    }

    /// Appends a breakpoint; one at (or, by rounding, before) the last replaces it.
    fn push(&mut self, x: f64, v: f64, r: f64) {
        if let Some(&last) = self.xs.last() {
            if x <= last {
                let k = self.xs.len() - 1;
                self.vs[k] = v;
                self.rs[k] = r;
                return;
            }
        }
        self.xs.push(x);
        self.vs.push(v);
        self.rs.push(r);
    }

    /// Index of the segment holding `y >= xs[0]`.
    fn segment(&self, y: f64) -> usize {
        self.xs.partition_point(|&x| x <= y).saturating_sub(1)
    }

    fn value_in(&self, j: usize, y: f64) -> f64 {
        self.vs[j] + self.rs[j] * (y - self.xs[j])
    }

    fn value(&self, y: f64) -> f64 {
        self.value_in(self.segment(y), y)
    }

    /// The least `t` with `M(t) >= target` (`∞` if none).
    fn inverse(&self, target: f64) -> f64 {
        if self.infinite || self.vs[0] >= target {
            return self.xs[0];
        }
        for j in 0..self.xs.len() {
            let last = j + 1 == self.xs.len();
            if last || self.vs[j + 1] >= target {
                if self.rs[j] <= 0.0 {
                    if last {
                        return f64::INFINITY;
                    }
                    continue;
                }
                let t = self.xs[j] + (target - self.vs[j]) / self.rs[j];
                return if last { t } else { t.min(self.xs[j + 1]) };
            }
        }
        f64::INFINITY
    }

    /// `theta` for a processor of comm `a > 0` in front: where the slope falls to
    /// `1 / a` or below (`None`: never, the processor gets nothing).
    fn theta(&self, a: f64) -> Option<f64> {
        self.rs
            .iter()
            .position(|&r| r * a <= 1.0)
            .map(|j| self.xs[j])
    }
}

/// `M_k` from `M_{k+1}` (module documentation).
fn stage(next: &Pl, c: Line) -> Pl {
    let Line { a, b, w, s } = c;
    let base = s.max(next.xs[0]);
    let start = b + base;
    if next.infinite || (a == 0.0 && w == 0.0) {
        return Pl::infinite(start);
    }
    let mut out = Pl::empty();
    let len = next.xs.len();
    if a == 0.0 {
        // The rest gets t - b whatever e: this processor takes all it can.
        let j = next.segment(base);
        out.push(
            start,
            (base - s) / w + next.value_in(j, base),
            next.rs[j] + 1.0 / w,
        );
        for k in j + 1..len {
            let y = next.xs[k];
            out.push(b + y, (y - s) / w + next.vs[k], next.rs[k] + 1.0 / w);
        }
        return out;
    }
    let theta = next.theta(a);
    // Piece A: no item here while the rest has at most theta.
    let below_theta = match theta {
        None => true,
        Some(th) => th > base,
    };
    if below_theta {
        let j = next.segment(base);
        out.push(start, next.value_in(j, base), next.rs[j]);
        for k in j + 1..len {
            if theta.is_some_and(|th| next.xs[k] >= th) {
                break;
            }
            out.push(b + next.xs[k], next.vs[k], next.rs[k]);
        }
    }
    let Some(theta) = theta else {
        return out;
    };
    if theta >= s {
        // Piece B: items here, the rest keeps exactly theta.
        out.push(b + theta, next.value(theta), 1.0 / a);
        if w == 0.0 {
            return out;
        }
    } else if w == 0.0 {
        // The rest keeps s (this processor's deadline never binds otherwise).
        out.push(start, next.value(s), 1.0 / a);
        return out;
    }
    // Piece C: this processor's own deadline binds; the rest keeps l(t).
    let y_c = theta.max(s);
    let to_t = |y: f64| b + ((a + w) * y - a * s) / w;
    let j = next.segment(y_c);
    let t_c = to_t(y_c);
    out.push(
        t_c,
        (t_c - b - s) / (a + w) + next.value_in(j, y_c),
        (1.0 + next.rs[j] * w) / (a + w),
    );
    for k in j + 1..len {
        let y = next.xs[k];
        let t = to_t(y);
        out.push(
            t,
            (t - b - s) / (a + w) + next.vs[k],
            (1.0 + next.rs[k] * w) / (a + w),
        );
    }
    out
}

/// `M_0, …, M_p` for the lines of an order (`M_p` = zero).
fn suffix_functions(lines: &[Line]) -> Vec<Pl> {
    let p = lines.len();
    let mut fs = vec![Pl::zero(); p + 1];
    for k in (0..p).rev() {
        fs[k] = stage(&fs[k + 1], lines[k]);
    }
    fs
}

/// The rational optimum of the relaxation of `lines` for `items` items: the least T
/// with `M_0(T) >= items`. O(p^2).
pub(crate) fn relaxation_value(lines: &[Line], items: u64) -> f64 {
    suffix_functions(lines)[0].inverse(items as f64)
}

/// The optimal rational shares and T. Needs `a + w > 0` everywhere.
fn solve(lines: &[Line], items: u64) -> (Vec<f64>, f64) {
    let fs = suffix_functions(lines);
    let target = items as f64;
    let t_opt = fs[0].inverse(target);
    let p = lines.len();
    let mut shares = vec![0.0; p];
    let mut t = t_opt;
    for k in 0..p {
        let Line { a, b, w, s } = lines[k];
        let next = &fs[k + 1];
        let e = if a == 0.0 {
            let e = (t - b - s) / w;
            t -= b;
            e
        } else {
            let own = if w > 0.0 {
                (w * (t - b) + a * s) / (a + w)
            } else {
                s
            };
            let low = own.max(next.xs[0]);
            // e from the binding constraint directly (t - b - y cancels badly when
            // a is much smaller than w).
            let e = match next.theta(a) {
                None => 0.0,
                Some(theta) if theta >= t - b => 0.0,
                Some(theta) if theta >= low => (t - b - theta) / a,
                Some(_) if own >= next.xs[0] => (t - b - s) / (a + w),
                Some(_) => (t - b - next.xs[0]) / a,
            }
            .max(0.0);
            t = t - b - a * e;
            e
        };
        shares[k] = e.max(0.0);
    }
    // At the domain's start the startups alone may leave room for more than N:
    // give back the excess from the back of the order.
    let mut excess = shares.iter().sum::<f64>() - target;
    if excess > 0.0 {
        for x in shares.iter_mut().rev() {
            let cut = x.min(excess);
            *x -= cut;
            excess -= cut;
            if excess <= 0.0 {
                break;
            }
        }
    }
    (shares, t_opt)
}

/// The paper's rounding: every share to the nearest integer, then, while the
/// rounded counts miss the total by E, the |E| shares rounded the other way that
/// lie nearest to it (largest fractional parts when E > 0, smallest when E < 0;
/// ties to the lower index). Every count is then the floor or the ceiling of its
/// share, so it differs from it by less than one item.
///
/// # Arguments
/// * `shares` - non-negative rational shares adding up to `total` (up to f64
///   rounding; values are clamped into `[0, total]`);
/// * `total` - the number of items.
///
/// # Returns
/// Integer counts adding up to `total` (none for no shares).
///
/// # Complexity
/// O(p log p).
///
/// # Example
/// ```
/// use hetbal::scatter::round_shares;
/// // 2.4 + 3.4 + 4.2 = 10: to nearest gives 2 + 3 + 4 = 9, so the share rounded
/// // down with the largest fractional part (one of the .4s, the first) goes up.
/// assert_eq!(round_shares(&[2.4, 3.4, 4.2], 10), vec![3, 3, 4]);
/// ```
pub fn round_shares(shares: &[f64], total: u64) -> Vec<u64> {
    if shares.is_empty() {
        return Vec::new();
    }
    let cap = total as f64;
    let xs: Vec<f64> = shares
        .iter()
        .map(|&x| if x.is_nan() { 0.0 } else { x.clamp(0.0, cap) })
        .collect();
    let mut counts: Vec<u64> = xs
        .iter()
        .map(|&x| ((x + 0.5).floor() as u64).min(total))
        .collect();
    let sum: u128 = counts.iter().map(|&c| u128::from(c)).sum();
    let frac = |x: f64| x - x.floor();
    if sum < u128::from(total) {
        let mut missing = u128::from(total) - sum;
        let mut down: Vec<usize> = (0..xs.len())
            .filter(|&i| (counts[i] as f64) < xs[i])
            .collect();
        down.sort_by(|&i, &j| frac(xs[j]).total_cmp(&frac(xs[i])).then(i.cmp(&j)));
        for i in down {
            if missing == 0 {
                break;
            }
            counts[i] += 1;
            missing -= 1;
        }
        // Only when f64 errors made the shares add up to less than the total.
        let (mut i, len) = (0, counts.len());
        while missing > 0 {
            counts[i % len] += 1;
            missing -= 1;
            i += 1;
        }
    } else if sum > u128::from(total) {
        let mut excess = sum - u128::from(total);
        let mut up: Vec<usize> = (0..xs.len())
            .filter(|&i| (counts[i] as f64) > xs[i])
            .collect();
        up.sort_by(|&i, &j| frac(xs[i]).total_cmp(&frac(xs[j])).then(i.cmp(&j)));
        for i in up {
            if excess == 0 {
                break;
            }
            counts[i] -= 1;
            excess -= 1;
        }
        let (mut i, len) = (0, counts.len());
        while excess > 0 {
            let k = i % len;
            if counts[k] > 0 {
                counts[k] -= 1;
                excess -= 1;
            }
            i += 1;
        }
    }
    counts
}

/// The affine lines of `order`, every startup paid; an error names the first
/// processor that is not affine (or, with `linear`, not linear), or that costs no
/// time per item.
fn affine_lines(
    instance: &ScatterInstance,
    order: &[usize],
    method: &'static str,
    linear: bool,
) -> Result<Vec<Line>, PlanError> {
    let mut lines = Vec::with_capacity(order.len());
    for &i in order {
        let name = instance.name(i).to_string();
        let mut line = [0.0; 4];
        for (k, (cost, which)) in [(instance.comm(i), "comm"), (instance.comp(i), "comp")]
            .into_iter()
            .enumerate()
        {
            match cost {
                Cost::Table(_) => {
                    return Err(PlanError::NeedsAffine {
                        method,
                        index: i,
                        name,
                        cost: which,
                    })
                }
                Cost::Affine { per_item, startup } => {
                    if linear && *startup != 0.0 {
                        return Err(PlanError::NeedsLinear {
                            method,
                            index: i,
                            name,
                            cost: which,
                            startup: *startup,
                        });
                    }
                    line[2 * k] = *per_item;
                    line[2 * k + 1] = *startup;
                }
            }
        }
        if line[0] + line[2] <= 0.0 {
            return Err(PlanError::NeedsTimePerItem {
                method,
                index: i,
                name,
            });
        }
        lines.push(Line {
            a: line[0],
            b: line[1],
            w: line[2],
            s: line[3],
        });
    }
    Ok(lines)
}

/// `max_k (sum_{j<=k} a_j + w_k)`.
fn guarantee(lines: &[Line]) -> f64 {
    let mut prefix = 0.0;
    let mut worst = 0.0f64;
    for l in lines {
        prefix += l.a;
        worst = worst.max(prefix + l.w);
    }
    worst
}

/// The paper's guaranteed heuristic: the rational optimum of its linear programme
/// (affine costs, every startup paid) in `order`, rounded by the paper's scheme.
///
/// The rounded counts end, with every startup paid, by
/// `rational_makespan + guarantee` (the paper's bound, checked by the tests), and
/// the rational optimum is a lower bound on every integer distribution in this
/// order under [`StartupRule::Always`]: under that rule the rounding loses less
/// than `guarantee`. Under [`StartupRule::WhenUsed`] the same counts end no later
/// (processors without items pay nothing), but the optimum can be below the LP's
/// rational optimum, so the loss is not bounded.
///
/// # Arguments
/// * `instance` - affine costs only (its startup rule does not change the LP);
/// * `order` - every processor once, the root last.
///
/// # Errors
/// [`PlanError::InvalidOrder`]; [`PlanError::NeedsAffine`] for a table;
/// [`PlanError::NeedsTimePerItem`] when a processor has comm and comp `per_item`
/// both 0 (the LP would send it everything at no cost: use [`crate::scatter::exact`]).
///
/// # Complexity
/// O(p^2) time and space, whatever N.
///
/// # Example
/// ```
/// use hetbal::scatter::{lp, ScatterInstance, StartupRule};
/// //  root P1 --(startup 1 s, then 1 s/item)--> P0;  both compute at 1 s/item.
/// let s = ScatterInstance::affine(11, 1, &[(1.0, 1.0), (0.0, 0.0)], &[(1.0, 0.0), (1.0, 0.0)],
///                                 StartupRule::Always).unwrap();
/// let d = lp(&s, &[0, 1]).unwrap();
/// // P0 ends at 1 + 2 n0, the root at 1 + n0 + n1: both at T = 12 with n0 = n1 = 5.5.
/// assert_eq!((d.rational_makespan, d.shares.clone()), (12.0, vec![5.5, 5.5]));
/// assert_eq!(d.counts, vec![5, 6]); // both round up to 6, one goes back down
/// assert_eq!(d.guarantee, 2.0); // max(a_0 + w_0, a_0 + a_1 + w_1)
/// ```
pub fn lp(instance: &ScatterInstance, order: &[usize]) -> Result<RationalDistribution, PlanError> {
    crate::scatter::evaluate::check_order(instance, order)?;
    let lines = affine_lines(instance, order, "lp", false)?;
    let (shares, rational_makespan) = solve(&lines, instance.items());
    Ok(RationalDistribution {
        counts: round_shares(&shares, instance.items()),
        shares,
        rational_makespan,
        guarantee: guarantee(&lines),
    })
}

/// The closed form of linear costs (no startups), Theorems 1 and 2 of the paper:
/// every processor that gets items ends at the same time T.
///
/// From the back, the rate of the end of the order is `R_{p-1} = 1 / w_{p-1}` and
/// `R_k = (1 + w_k R_{k+1}) / (a_k + w_k)` when `a_k R_{k+1} < 1` (an item sent to k
/// costs the rest less than one item), `R_k = R_{k+1}` otherwise (k gets nothing);
/// then `T = N / R_0` and, from the front, each used processor gets
/// `n_k = (T - C_{k-1}) / (a_k + w_k)` where `C_{k-1}` is the time spent sending to
/// the processors before it. The shares are rounded by [`round_shares`]; the bound
/// of [`lp`] holds (startups are zero, so both rules agree).
///
/// # Errors
/// [`PlanError::InvalidOrder`]; [`PlanError::NeedsAffine`] or
/// [`PlanError::NeedsLinear`] unless every cost is linear;
/// [`PlanError::NeedsTimePerItem`] when comm and comp `per_item` are both 0.
///
/// # Complexity
/// O(p).
///
/// # Example
/// ```
/// use hetbal::scatter::{linear, ScatterInstance};
/// // model.md's three processors in decreasing bandwidth (P0 first): rates from
/// // the back 1/6, 14/72, 13/48, so T = 3 / (13/48) = 144/13 and P1 gets 9/13.
/// let s = ScatterInstance::linear(3, 2, &[2.0, 4.0, 0.0], &[6.0, 8.0, 6.0]).unwrap();
/// let d = linear(&s, &[0, 1, 2]).unwrap();
/// assert!((d.rational_makespan - 144.0 / 13.0).abs() < 1e-12);
/// assert!((d.shares[1] - 9.0 / 13.0).abs() < 1e-12);
/// assert_eq!(d.counts, vec![1, 1, 1]);
/// ```
pub fn linear(
    instance: &ScatterInstance,
    order: &[usize],
) -> Result<RationalDistribution, PlanError> {
    crate::scatter::evaluate::check_order(instance, order)?;
    let lines = affine_lines(instance, order, "linear", true)?;
    let p = lines.len();
    let mut rate = vec![0.0; p];
    let mut used = vec![true; p];
    for k in (0..p).rev() {
        let Line { a, w, .. } = lines[k];
        let next = if k + 1 < p { rate[k + 1] } else { 0.0 };
        if a * next < 1.0 {
            rate[k] = (1.0 + w * next) / (a + w);
        } else {
            rate[k] = next;
            used[k] = false;
        }
    }
    let items = instance.items();
    let t = items as f64 / rate[0];
    let mut shares = vec![0.0; p];
    let mut sent = 0.0;
    for k in 0..p {
        if used[k] {
            let Line { a, w, .. } = lines[k];
            shares[k] = ((t - sent) / (a + w)).max(0.0);
            sent += a * shares[k];
        }
    }
    Ok(RationalDistribution {
        counts: round_shares(&shares, items),
        shares,
        rational_makespan: t,
        guarantee: guarantee(&lines),
    })
}

/// The relaxed line of one processor: affine costs under `Always` as they are;
/// under `WhenUsed`, `startup + per_item x >= (per_item + startup / N) x` on
/// `[1, N]`; a table `t(x) >= (min_x t(x) / x) x`.
fn relaxed(cost: &Cost, rule: StartupRule, items: u64) -> (f64, f64) {
    match cost {
        Cost::Affine { per_item, startup } => match rule {
            StartupRule::Always => (*per_item, *startup),
            StartupRule::WhenUsed if items == 0 => (*per_item, 0.0),
            StartupRule::WhenUsed => (per_item + startup / items as f64, 0.0),
        },
        Cost::Table(t) => {
            let slope = (1..t.len())
                .map(|x| t[x] / x as f64)
                .fold(f64::INFINITY, f64::min);
            (if slope.is_finite() { slope } else { 0.0 }, 0.0)
        }
    }
}

/// A lower bound on the makespan of every integer distribution in `order`: the
/// rational optimum of a relaxation that is valid under the instance's startup
/// rule.
///
/// Under [`StartupRule::Always`] with affine costs the relaxation is the paper's LP
/// itself. Otherwise each cost is replaced by the largest linear function below it
/// on `0..=N`: `(per_item + startup / N) x` for an affine cost whose startup is
/// paid only when used, `(min_x t(x) / x) x` for a table. Computed exactly like
/// [`lp`] (module documentation), in f64.
///
/// # Errors
/// [`PlanError::InvalidOrder`].
///
/// # Complexity
/// O(p^2) for affine costs, plus O(table length) per table.
///
/// # Example
/// ```
/// use hetbal::scatter::{exact, lower_bound, ScatterInstance};
/// let s = ScatterInstance::linear(3, 2, &[2.0, 4.0, 0.0], &[6.0, 8.0, 6.0]).unwrap();
/// let lb = lower_bound(&s, &[0, 1, 2]).unwrap();
/// assert_eq!(exact(&s, &[0, 1, 2]).unwrap().optimum, 14.0);
/// assert!((lb - 144.0 / 13.0).abs() < 1e-12); // the rational optimum in that order
/// ```
pub fn lower_bound(instance: &ScatterInstance, order: &[usize]) -> Result<f64, PlanError> {
    crate::scatter::evaluate::check_order(instance, order)?;
    Ok(relaxation_value(
        &relaxed_lines(instance, order),
        instance.items(),
    ))
}

/// The relaxed line of processor `i` (see [`lower_bound`]).
pub(crate) fn relaxed_line(instance: &ScatterInstance, i: usize) -> Line {
    let rule = instance.startup_rule();
    let items = instance.items();
    let (a, b) = relaxed(instance.comm(i), rule, items);
    let (w, s) = relaxed(instance.comp(i), rule, items);
    Line { a, b, w, s }
}

/// The relaxed lines of `order` (see [`lower_bound`]).
pub(crate) fn relaxed_lines(instance: &ScatterInstance, order: &[usize]) -> Vec<Line> {
    order.iter().map(|&i| relaxed_line(instance, i)).collect()
}

/// The largest linear function below processor `i`'s costs on `0..=N`, whatever
/// the rule: `(per_item + startup / N) x` for affine costs, `(min t(x) / x) x` for
/// tables. With these lines Theorem 3 applies: among the orders of a set of
/// processors placed before a fixed end of the order, decreasing bandwidth gives
/// the least rational optimum.
pub(crate) fn linear_line(instance: &ScatterInstance, i: usize) -> Line {
    let items = instance.items();
    let slope = |cost: &Cost| match cost {
        Cost::Affine { per_item, startup } if items > 0 => per_item + startup / items as f64,
        Cost::Affine { per_item, .. } => *per_item,
        Cost::Table(_) => relaxed(cost, StartupRule::WhenUsed, items).0,
    };
    Line {
        a: slope(instance.comm(i)),
        b: 0.0,
        w: slope(instance.comp(i)),
        s: 0.0,
    }
}
