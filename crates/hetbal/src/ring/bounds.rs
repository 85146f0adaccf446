//! Lower bounds on the makespan of a redistribution: the port bound valid on every
//! ring, and for bidirectional rings Lemma 6, Lemma 12 (corrected) and the optimum
//! of System 6 (model.md section 1); [`lower_bound`] picks the strongest for the
//! ring's kind.

use std::ops::{Add, Div, Sub};

use crate::ring::{
    prefix_sums, startup_lower_bound, unidirectional_lower_bound, RingInstance, RingKind,
};

/// The strongest lower bound hetbal knows for a ring, the one [`plan`](crate::ring::plan)
/// compares its makespan with: the exact bound `max f_i c_succ[i]`
/// ([`unidirectional_lower_bound`]) on unidirectional rings; on bidirectional ones
/// the integer optimum of [`circulation_bound`], or the [`port_lower_bound`] if larger.
/// On rings with start-ups, [`startup_lower_bound`]'s value.
///
/// # Arguments
/// * `instance` - a validated ring.
///
/// # Returns
/// The bound in seconds: no valid schedule of the ring ends earlier.
///
/// # Complexity
/// O(n) on unidirectional rings, that of [`circulation_bound`] on bidirectional ones
/// (and that of [`startup_lower_bound`] with start-ups).
///
/// # Example
/// ```
/// use hetbal::ring::{lower_bound, plan, RingInstance};
/// let ring = RingInstance::unidirectional(&[4, 1, 1], &[2, 2, 2], &[1.0, 3.0, 1.0]).unwrap();
/// assert_eq!(lower_bound(&ring), 3.0);
/// let both_ways = RingInstance::bidirectional(&[3, 1, 1], &[1, 2, 2], &[2.0; 3], &[1.5; 3]).unwrap();
/// assert!(plan(&both_ways, None).unwrap().makespan >= lower_bound(&both_ways));
/// ```
pub fn lower_bound(instance: &RingInstance) -> f64 {
    let s6 = (instance.kind() == RingKind::Bidirectional).then(|| circulation_bound(instance));
    lower_bound_with(instance, s6.as_ref())
}

/// [`lower_bound`] with System 6 already solved (`Some` on bidirectional rings).
pub(crate) fn lower_bound_with(instance: &RingInstance, s6: Option<&CirculationBound>) -> f64 {
    if instance.has_startups() {
        return startup_lower_bound(instance).value;
    }
    match s6 {
        None => unidirectional_lower_bound(instance),
        Some(s6) => s6.tau.max(port_lower_bound(instance)),
    }
}

/// A lower bound valid on every ring kind: each processor must send at least its
/// surplus `delta_i^+` and receive at least its deficit `delta_i^-`, one item at a time,
/// over its cheapest link.
///
/// Weak, but proven for bidirectional rings too (the bidirectional bounds of the
/// paper, Lemma 6 and System 6, are stronger).
///
/// Complexity: O(n).
///
/// # Example
/// ```
/// use hetbal::ring::{port_lower_bound, RingInstance};
/// // P0 must give away 2 items; its cheaper link costs 1.5 per item.
/// let ring = RingInstance::bidirectional(&[3, 1, 1], &[1, 2, 2], &[2.0; 3], &[1.5; 3]).unwrap();
/// assert_eq!(port_lower_bound(&ring), 3.0);
/// ```
pub fn port_lower_bound(instance: &RingInstance) -> f64 {
    let n = instance.len();
    let out_cost = |i: usize| {
        let c = instance.c_succ()[i];
        match (instance.kind(), instance.c_pred()[i]) {
            (RingKind::Bidirectional, Some(p)) => c.min(p),
            _ => c,
        }
    };
    let in_cost = |i: usize| {
        let from_pred = instance.c_succ()[instance.pred(i)];
        match (instance.kind(), instance.c_pred()[instance.succ(i)]) {
            (RingKind::Bidirectional, Some(p)) => from_pred.min(p),
            _ => from_pred,
        }
    };
    (0..n)
        .map(|i| {
            let d = instance.delta(i);
            if d > 0 {
                d as f64 * out_cost(i)
            } else {
                (-d) as f64 * in_cost(i)
            }
        })
        .fold(0.0, f64::max)
}

/// Lemma 6 of the ring paper for homogeneous bidirectional rings:
/// `c * max( max_i |delta_i| , ceil((max S - min S) / 2) )`.
///
/// Returns `None` unless the ring is bidirectional with every cost equal to one `c`.
///
/// Complexity: O(n).
///
/// # Example
/// ```
/// use hetbal::ring::{homogeneous_bidirectional_bound, RingInstance};
/// // S = [3, 2, 0, -2, 0]: range 5, so at least ceil(5/2) = 3 items cross one link.
/// let ring = RingInstance::bidirectional(&[4, 1, 1, 1, 4], &[1, 2, 3, 3, 2], &[1.0; 5], &[1.0; 5]).unwrap();
/// assert_eq!(homogeneous_bidirectional_bound(&ring), Some(3.0));
/// ```
#[doc(alias("Lemma 6", "lemma6_bound"))]
pub fn homogeneous_bidirectional_bound(instance: &RingInstance) -> Option<f64> {
    if instance.kind() != RingKind::Bidirectional || !instance.is_homogeneous() {
        return None;
    }
    let c = instance.c_succ()[0];
    let sums = prefix_sums(instance);
    let max = sums.iter().copied().max().unwrap_or(0);
    let min = sums.iter().copied().min().unwrap_or(0);
    let range = max - min;
    let half = (range + 1) / 2;
    let delta = (0..instance.len())
        .map(|i| instance.delta(i).abs())
        .max()
        .unwrap_or(0);
    Some(delta.max(half) as f64 * c)
}

/// Lemma 12 of the ring paper (general bidirectional rings), with its typo corrected:
/// for a slice with negative unbalance the incoming link at the slice's right end is
/// `c_pred[k+l+1]` (from P_{k+l+1} to P_{k+l}).
///
/// The bound is the largest of: each processor's surplus sent over its cheaper
/// outgoing link, each deficit received over the cheaper incoming link, and, for
/// every slice of 2 to n-1 consecutive processors, its unbalance split at best
/// between the two links leaving (or entering) it. Not tight (model.md: loads
/// `[1,2,2]`, delta `[-2,1,1]` has 2 against an optimum of 3) and never stronger than
/// [`circulation_bound`]; kept for comparison with the paper.
///
/// Complexity: O(n^2) time (every slice), O(n) space.
///
/// # Example
/// ```
/// use hetbal::ring::{slice_bound, RingInstance};
/// let ring = RingInstance::bidirectional(&[1, 2, 2], &[3, 1, 1], &[1.0, 1.0, 2.0], &[1.0, 1.0, 3.0]).unwrap();
/// assert_eq!(slice_bound(&ring), 2.0);
/// ```
#[doc(alias("Lemma 12", "lemma12_bound"))]
pub fn slice_bound(instance: &RingInstance) -> f64 {
    let n = instance.len();
    let succ = instance.c_succ();
    let pred: Vec<f64> = (0..n)
        .map(|i| instance.c_pred()[i].unwrap_or(f64::INFINITY))
        .collect();
    let mut bound = 0.0f64;
    for k in 0..n {
        let d = instance.delta(k);
        if d > 0 {
            bound = bound.max(d as f64 * succ[k].min(pred[k]));
        } else if d < 0 {
            let incoming = succ[instance.pred(k)].min(pred[instance.succ(k)]);
            bound = bound.max((-d) as f64 * incoming);
        }
    }
    // Best split of `total` items between two links of costs a and b.
    let split = |total: i128, a: f64, b: f64| -> f64 {
        let t = total as f64;
        let ideal = (t * b / (a + b)).floor() as i128;
        (ideal.max(0)..=(ideal + 1).min(total))
            .map(|i| (i as f64 * a).max((total - i) as f64 * b))
            .fold(f64::INFINITY, f64::min)
    };
    for k in 0..n {
        let mut sum = instance.delta(k);
        for l in 1..n.saturating_sub(1) {
            let end = (k + l) % n;
            sum += instance.delta(end);
            if sum > 0 {
                // P_k sends left (c_pred[k]), P_end sends right (c_succ[end]).
                bound = bound.max(split(sum, pred[k], succ[end]));
            } else if sum < 0 {
                // P_{k-1} sends right into P_k, P_{end+1} sends left into P_end.
                let left = succ[instance.pred(k)];
                let right = pred[instance.succ(end)];
                bound = bound.max(split(-sum, left, right));
            }
        }
    }
    bound
}

/// The optimum of System 6: the net flows and the smallest `tau` such that every
/// processor's total sending time and total receiving time fit in `tau`.
#[derive(Clone, Debug, PartialEq)]
#[doc(alias("System 6", "System6"))]
pub struct CirculationBound {
    /// The circulation of the rational optimum.
    pub rational_x: f64,
    /// The rational optimum (a lower bound, weaker than `tau`).
    pub rational_tau: f64,
    /// The circulation of the integer optimum: flows are `x + S_i`.
    pub x: i128,
    /// The integer optimum: a lower bound on the makespan of every schedule.
    pub tau: f64,
    /// Every integer circulation reaching `tau` (one or two values, consecutive).
    pub optimal_x: Vec<i128>,
}

/// The prefix sums `S_i` as f64, converted once: the searches below evaluate
/// [`tau_at`] hundreds of times, and a conversion from i128 is a library call.
fn sums_as_f64(sums: &[i128]) -> Vec<f64> {
    sums.iter().map(|&s| s as f64).collect()
}

/// Sending and receiving times of every processor for the flows `x + S_i` (`sums`:
/// [`sums_as_f64`]), reduced to their maximum: the value System 6 minimises.
fn tau_at(instance: &RingInstance, sums: &[f64], x: f64) -> f64 {
    Terms::new(instance, sums).tau_at(x)
}

/// System 6's coefficients laid out processor by processor for [`Terms::tau_at`],
/// which the searches evaluate about a hundred times: the neighbours' prefix sums and
/// costs rotated into place and absent backward links made infinite once, so that
/// each evaluation is one pass over a flat array without index arithmetic.
struct Terms {
    /// For processor i: `[S_{i-1}, S_i, c_succ[i], c_pred[i], c_succ[i-1],
    /// c_pred[i+1]]` (absent `c_pred` infinite). The flows at circulation x are
    /// `x + S_{i-1}` on (i-1, i) and `x + S_i` on (i, i+1).
    coefficients: Vec<[f64; 6]>,
}

impl Terms {
    fn new(instance: &RingInstance, sums: &[f64]) -> Terms {
        let c_succ = instance.c_succ();
        let c_pred = |i: usize| instance.c_pred()[i].unwrap_or(f64::INFINITY);
        let coefficients = (0..instance.len())
            .map(|i| {
                let (p, s) = (instance.pred(i), instance.succ(i));
                [sums[p], sums[i], c_succ[i], c_pred(i), c_succ[p], c_pred(s)]
            })
            .collect();
        Terms { coefficients }
    }

    /// The maximum over processors of the sending and receiving times at
    /// circulation `x`. The same operations on each processor as the formula in
    /// [`circulation_bound`]'s documentation, reduced in four interleaved lanes: every
    /// time is a non-negative number (never NaN, never -0), so their maximum does not
    /// depend on the order.
    fn tau_at(&self, x: f64) -> f64 {
        let mut lanes = [0.0f64; 4];
        let chunks = self.coefficients.chunks_exact(lanes.len());
        let rest = chunks.remainder();
        for chunk in chunks {
            for (lane, terms) in lanes.iter_mut().zip(chunk) {
                *lane = max(*lane, worst_of(terms, x));
            }
        }
        let worst = lanes.into_iter().fold(0.0f64, max);
        rest.iter()
            .fold(worst, |w, terms| max(w, worst_of(terms, x)))
    }
}

/// `a.max(b)` for the values met here (flows and times are never NaN: the
/// sums and x are finite, and `mul` keeps infinite costs off empty links), as
/// one compare and select.
#[inline(always)]
fn max(a: f64, b: f64) -> f64 {
    if b > a {
        b
    } else {
        a
    }
}

/// Processor i's sending and receiving times, the larger, at circulation `x`,
/// from its coefficients `[S_{i-1}, S_i, c_succ[i], c_pred[i], c_succ[i-1],
/// c_pred[i+1]]` ([`Terms`]).
#[inline(always)]
fn worst_of(&[prev, next, c_succ, c_pred, c_from_pred, c_from_succ]: &[f64; 6], x: f64) -> f64 {
    let prev = prev + x; // flow on (i-1, i)
    let next = next + x; // flow on (i, i+1)
    let send = c_succ * max(next, 0.0) + mul(c_pred, max(-prev, 0.0));
    let receive = c_from_pred * max(prev, 0.0) + mul(c_from_succ, max(-next, 0.0));
    max(send, receive)
}

/// [`tau_at`] at the integer circulation `x`, each flow `x + S_i` computed
/// exactly (i128) and converted once: for rings whose flows pass 2^52 items,
/// where a float circulation rounds them.
fn tau_exact(instance: &RingInstance, sums: &[i128], x: i128) -> f64 {
    let c_succ = instance.c_succ();
    let c_pred = |i: usize| instance.c_pred()[i].unwrap_or(f64::INFINITY);
    (0..instance.len())
        .map(|i| {
            let (p, s) = (instance.pred(i), instance.succ(i));
            let flows = ((x + sums[p]) as f64, (x + sums[i]) as f64);
            worst_of(
                &[flows.0, flows.1, c_succ[i], c_pred(i), c_succ[p], c_pred(s)],
                0.0,
            )
        })
        .fold(0.0, max)
}

/// The least point of the convex function `f` on the integers of `[lo, hi]`
/// (the lower one on a tie), by ternary steps on the integers (a third
/// dropped each step) until three remain: O(log(hi - lo)) evaluations.
fn integer_minimiser(mut lo: i128, mut hi: i128, f: impl Fn(i128) -> f64) -> i128 {
    while hi - lo > 2 {
        let third = (hi - lo) / 3;
        let (c, d) = (lo + third, hi - third);
        // The end where f is higher goes (the right one on a tie): the least
        // point stays within [lo, hi].
        if f(c) <= f(d) {
            hi = d;
        } else {
            lo = c;
        }
    }
    (lo..=hi)
        .map(|x| (x, f(x)))
        .fold(
            (lo, f64::INFINITY),
            |best, (x, v)| if v < best.1 { (x, v) } else { best },
        )
        .0
}

/// `a * b` with `inf * 0 = 0` (a link that carries nothing costs nothing).
fn mul(a: f64, b: f64) -> f64 {
    if b == 0.0 {
        0.0
    } else {
        a * b
    }
}

/// The rational and integer optima of System 6 (model.md section 1).
///
/// Every bidirectional redistribution induces net flows `f_i = x + S_i` on the ring's
/// links for one integer circulation `x`. Processor i then sends for at least
/// `c_succ[i] f_i^+ + c_pred[i] f_{i-1}^-` and receives for at least
/// `c_succ[i-1] f_{i-1}^+ + c_pred[i+1] f_i^-`: both must fit in the makespan. These
/// are convex piecewise-linear in `x`, so their maximum `tau(x)` is convex: the
/// rational optimum is found by golden-section search, and the integer optimum is at
/// the floor or the ceiling of the rational minimiser (Theorem 4, with the floor the
/// paper's text misprints as a second ceiling). The integer optimum is a lower bound
/// for every schedule, light or not.
///
/// On a unidirectional instance the result describes the ring as if it were
/// bidirectional with the missing `c_pred` infinite (no backward link). On a path
/// ([`RingInstance::is_path`]) the circulation is fixed at 0 (the last link carries
/// nothing): `tau` is the value of those flows.
///
/// Flows past 2^52 items: the integer optimum is searched on the integers
/// (each flow exact until its time is computed), where a float circulation
/// would stand for many and round the flows by whole items; `rational_x` and
/// `rational_tau` are then those of the float search.
///
/// # Complexity
/// O(n) on a path; otherwise O(n log R) time, where log R <= ~200 bisection
/// steps on f64 (and, past 2^52 items, about 1.7 log2 R ternary steps on the
/// integers), and O(n) space.
///
/// # Example
/// ```
/// use hetbal::ring::{circulation_bound, RingInstance};
/// // model.md: loads [5,1,1,1], delta [4,0,0,-4]: System 6 gives 6 (the optimum is 7).
/// let ring = RingInstance::bidirectional(
///     &[5, 1, 1, 1], &[1, 1, 1, 5], &[1.0, 2.0, 1.0, 3.0], &[3.0; 4]).unwrap();
/// let s6 = circulation_bound(&ring);
/// assert_eq!(s6.tau, 6.0);
/// assert!(s6.rational_tau <= s6.tau);
/// ```
#[doc(alias("System 6", "system6"))]
pub fn circulation_bound(instance: &RingInstance) -> CirculationBound {
    let sums = prefix_sums(instance);
    let sums_f = sums_as_f64(&sums);
    if instance.is_path() {
        // A path's flows are fixed: the circulation that leaves the last link empty.
        let tau = tau_at(instance, &sums_f, 0.0);
        return CirculationBound {
            rational_x: 0.0,
            rational_tau: tau,
            x: 0,
            tau,
            optimal_x: vec![0],
        };
    }
    let max = sums.iter().copied().max().unwrap_or(0);
    let min = sums.iter().copied().min().unwrap_or(0);
    // Beyond [-max, -min] every flow has one sign and tau only grows.
    let (mut lo, mut hi) = ((-max) as f64, (-min) as f64);
    let terms = Terms::new(instance, &sums_f);
    let f = |x: f64| terms.tau_at(x);
    // Golden-section search on a convex function, down to adjacent floats: one
    // evaluation a step (a ternary search takes two for a smaller cut), about 75
    // evaluations of O(n) for a range of 10^6 items.
    let shrink = (5f64.sqrt() - 1.0) / 2.0;
    let (mut c, mut d) = (hi - shrink * (hi - lo), lo + shrink * (hi - lo));
    let (mut fc, mut fd) = (f(c), f(d));
    for _ in 0..400 {
        if hi - lo <= f64::EPSILON * hi.abs().max(lo.abs()).max(1.0) {
            break;
        }
        // The end where f is higher goes (the right one on a tie).
        if fc <= fd {
            hi = d;
            (d, fd) = (c, fc);
            c = hi - shrink * (hi - lo);
            fc = f(c);
        } else {
            lo = c;
            (c, fc) = (d, fd);
            d = lo + shrink * (hi - lo);
            fd = f(d);
        }
    }
    let rational_x = (lo + hi) / 2.0;
    let rational_tau = f(rational_x);
    // Beyond 2^52 items a float x stands for many circulations, and `x + S_i`
    // rounds by whole items times the costs: the integer optimum is searched
    // over the integers, each flow exact until its time is computed.
    let exact = (-min).abs().max(max.abs()) >= 1 << 52;
    let f_int = |x: i128| {
        if exact {
            tau_exact(instance, &sums, x)
        } else {
            f(x as f64)
        }
    };
    // Integer optimum: floor or ceiling of the minimiser; look one step further on
    // each side to absorb the bisection's rounding (tau is convex).
    let base = if exact {
        integer_minimiser(-max, -min, f_int)
    } else {
        rational_x.floor() as i128
    };
    let candidates: Vec<(i128, f64)> = (base - 1..=base + 2)
        .filter(|&x| x >= -max && x <= -min)
        .map(|x| (x, f_int(x)))
        .collect();
    let candidates = if candidates.is_empty() {
        vec![(-max, f_int(-max))]
    } else {
        candidates
    };
    let tau = candidates.iter().map(|c| c.1).fold(f64::INFINITY, f64::min);
    let optimal_x: Vec<i128> = candidates
        .iter()
        .filter(|c| c.1 == tau)
        .map(|c| c.0)
        .collect();
    CirculationBound {
        rational_x,
        rational_tau: rational_tau.min(tau),
        x: optimal_x[0],
        tau,
        optimal_x,
    }
}

/// One step of a ternary search for the least point of a convex function `f` on
/// `[lo, hi]`: drops the third at the end where `f` is higher (the last third on a
/// tie).
fn narrow<T, V: PartialOrd>(lo: &mut T, hi: &mut T, f: impl Fn(T) -> V)
where
    T: Copy + Add<Output = T> + Sub<Output = T> + Div<Output = T> + From<u8>,
{
    let third = (*hi - *lo) / T::from(3);
    let (m1, m2) = (*lo + third, *hi - third);
    if f(m1) <= f(m2) {
        *hi = m2;
    } else {
        *lo = m1;
    }
}

/// The least point of a convex function `f` on the integers `lo..=hi`
/// (`lo <= hi`) by ternary search; among equal least values, the smallest point of
/// the last three examined. O(log(hi - lo)) evaluations of `f`.
pub(crate) fn convex_argmin<V: PartialOrd>(
    mut lo: i128,
    mut hi: i128,
    f: impl Fn(i128) -> V,
) -> i128 {
    while hi - lo > 2 {
        narrow(&mut lo, &mut hi, &f);
    }
    let mut best = (lo, f(lo));
    for x in lo + 1..=hi {
        let v = f(x);
        if v < best.1 {
            best = (x, v);
        }
    }
    best.0
}

/// System 8 of the ring paper: System 6 plus "no processor sends more items than it
/// initially holds". The light circulations form an interval of integers (each
/// processor's sends are convex in `x`); System 8 is the best of them, and Lemma 9
/// schedules it with that makespan. A baseline: sometimes infeasible (`None`),
/// sometimes far above the optimum.
///
/// Returns `(x, tau)`: the circulation and its System 6 value. On a path the only
/// circulation is 0.
///
/// # Complexity
/// O(n log R) time (bisections on the integer circulation), O(n) space.
///
/// # Example
/// ```
/// use hetbal::ring::{light_circulation, RingInstance};
/// // P1 and P2 hold one item each: light flows pass at most one item through them,
/// // so P0 sends 1 forward and 3 backward over its slow link: 1 + 3 * 3 = 10, where
/// // the optimum is 7 (and System 6 says 6).
/// let ring = RingInstance::bidirectional(
///     &[5, 1, 1, 1], &[1, 1, 1, 5], &[1.0, 2.0, 1.0, 3.0], &[3.0; 4]).unwrap();
/// assert_eq!(light_circulation(&ring), Some((-3, 10.0)));
/// ```
#[doc(alias("System 8", "system8"))]
pub fn light_circulation(instance: &RingInstance) -> Option<(i128, f64)> {
    let sums = prefix_sums(instance);
    let n = instance.len();
    let max = sums.iter().copied().max().unwrap_or(0);
    let min = sums.iter().copied().min().unwrap_or(0);
    // Largest excess of items sent over items held, at circulation x (convex in x).
    let excess = |x: i128| -> i128 {
        (0..n)
            .map(|i| {
                let next = sums[i] + x;
                let prev = sums[instance.pred(i)] + x;
                next.max(0) + (-prev).max(0) - i128::from(instance.loads()[i])
            })
            .max()
            .unwrap_or(0)
    };
    // A path's flows are fixed (circulation 0); otherwise minimise the convex
    // integer function `excess` on [-max, -min].
    let (max, min) = if instance.is_path() {
        (0, 0)
    } else {
        (max, min)
    };
    let best = convex_argmin(-max, -min, |x| excess(x) as f64);
    if excess(best) > 0 {
        return None;
    }
    // The light interval [left, right] around `best` (excess is convex).
    let (mut a, mut b) = (-max, best); // left end in [a, b]: first x with excess <= 0
    while a < b {
        let m = a + (b - a) / 2;
        if excess(m) <= 0 {
            b = m;
        } else {
            a = m + 1;
        }
    }
    let left = a;
    let (mut a, mut b) = (best, -min); // right end: last x with excess <= 0
    while a < b {
        let m = b - (b - a) / 2;
        if excess(m) <= 0 {
            a = m;
        } else {
            b = m - 1;
        }
    }
    let right = a;
    let terms = Terms::new(instance, &sums_as_f64(&sums));
    let x = convex_argmin(left, right, |x| terms.tau_at(x as f64));
    Some((x, terms.tau_at(x as f64)))
}
