//! The partition of least bottleneck: exact bisection over the probe.

use super::error::check_speeds;
use super::prefix::{Prefix, Sums, Weight};
use super::PartitionError;
use serde::Serialize;

/// A partition of items over processors, and how good it is.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Partition {
    /// `p + 1` item indices: processor `j` holds items `cuts[j]..cuts[j+1]`.
    pub cuts: Vec<u64>,
    /// The largest processor time, `max_j seconds_per_unit[j] * W(cuts[j]..cuts[j+1])`.
    pub bottleneck: f64,
    /// No partition has a smaller bottleneck than this: a probe proved every
    /// smaller value infeasible (see [`partition`]).
    pub lower_bound: f64,
    /// `bottleneck <= lower_bound`: the partition is proven optimal.
    pub optimal: bool,
    /// Each processor's time, `seconds_per_unit[j] * W(cuts[j]..cuts[j+1])`.
    pub times: Vec<f64>,
    /// Each processor's weight, `W(cuts[j]..cuts[j+1])` (as f64).
    pub weights: Vec<f64>,
    /// The number of probes the search made (each O(p log(n/p))).
    pub probes: u32,
}

/// The partition of least bottleneck for processors in a fixed order: the exact
/// optimum of chains-on-chains partitioning on heterogeneous processors.
///
/// Items `0..n` with weights `weights` are cut into `p` contiguous ranges, one
/// per processor in the order of `seconds_per_unit`, minimising the bottleneck
/// `max_j seconds_per_unit[j] * W(cuts[j]..cuts[j+1])`. A processor may get no
/// item (a very slow one, when that is best; unlike
/// [`balanced_targets`](crate::balance::balanced_targets), which gives each at
/// least one item because a ring redistribution needs it).
///
/// The method is exact bisection over the **probe**: given a bound `B`, each
/// processor in turn takes the longest run of items whose time stays within `B`;
/// `B` is feasible exactly when the runs reach the last item, and feasibility
/// never decreases with `B`. The bisection keeps an interval `[lo, hi]` where `hi`
/// is the bottleneck of a partition found and every value below `lo` is proven
/// infeasible. A feasible probe lowers `hi` to the bottleneck it found; an
/// infeasible one raises `lo` to the smallest time at which some processor could
/// take one more item (below that, the probe's runs cannot change). Midpoints
/// are taken over the bit patterns of f64, so the interval halves each time and
/// the search ends with `lo = hi`: the bottleneck is exactly optimal for the
/// processor times as computed (integer weights summed exactly, then one
/// product; float weights as differences of their f64 prefix sums).
/// `lower_bound` is that `lo`, the certificate of optimality.
///
/// Ties: the cuts returned are those of the probe at the optimum, which gives
/// each processor in turn as many items as fit (zero-weight items go to the
/// earlier processor).
///
/// # Arguments
/// * `weights` - the items' weights, in their global order (integer or float;
///   see [`Weight`]); none may be negative, NaN or infinite;
/// * `seconds_per_unit` - each processor's seconds per unit of weight, in
///   processor order (finite, > 0).
///
/// # Errors
/// [`PartitionError`]: no processors, a bad speed or weight (naming its index),
/// weights whose sum overflows, or a bottleneck that overflows f64.
///
/// # Complexity
/// O(n) time for the prefix sums (one pass, n + 1 entries: the only O(n)
/// memory), then O(log R) probes of O(p log(n/p)) each, R the ratio of the
/// optimum to the fluid bound, times 2^20, plus at most 64 halvings of the
/// f64 bit patterns (10 to 60 probes in all in practice); every processor's run
/// is found by galloping from where the previous probe ended it.
///
/// # Example
/// ```
/// use hetbal::partition::partition;
///
/// // A very slow processor in the middle gets nothing.
/// let p = partition(&[3.0, 1.0, 2.0, 2.0], &[1.0, 100.0, 1.0]).unwrap();
/// assert_eq!(p.cuts, vec![0, 2, 2, 4]);
/// assert_eq!((p.bottleneck, p.optimal), (4.0, true));
/// ```
#[doc(alias = "chains-on-chains")]
#[doc(alias = "CCP")]
#[doc(alias = "ExactBS")]
pub fn partition<W: Weight>(
    weights: &[W],
    seconds_per_unit: &[f64],
) -> Result<Partition, PartitionError> {
    check_speeds(seconds_per_unit)?;
    let prefix = W::prefix_sums(weights)?;
    partition_sums(&prefix, seconds_per_unit)
}

/// [`partition`] on prefix sums already computed (speeds already checked).
pub(crate) fn partition_sums(
    prefix: &Prefix,
    seconds_per_unit: &[f64],
) -> Result<Partition, PartitionError> {
    match prefix {
        Prefix::Int(s) => optimum(s, seconds_per_unit),
        Prefix::Float(s) => optimum(s, seconds_per_unit),
    }
}

/// Processor `j`'s time on items `a..b`.
#[inline]
pub(crate) fn time<S: Sums>(sums: &S, s: f64, a: usize, b: usize) -> f64 {
    s * sums.weight(a, b)
}

/// The largest `b` in `a..=n` with `s * W(a..b) <= bound`, searched by galloping
/// from `hint`: O(log |answer - hint|).
#[inline]
pub(crate) fn reach<S: Sums>(sums: &S, s: f64, a: usize, bound: f64, hint: usize) -> usize {
    let n = sums.items();
    let fits = |b: usize| time(sums, s, a, b) <= bound;
    let h = hint.clamp(a, n);
    // Invariant of the final binary search: fits(lo), !fits(hi) (hi may be n + 1).
    let (mut lo, mut hi);
    if fits(h) {
        lo = h;
        let mut step = 1usize;
        loop {
            if lo == n {
                return n;
            }
            let next = lo.saturating_add(step).min(n);
            if fits(next) {
                lo = next;
                step = step.saturating_mul(2);
            } else {
                hi = next;
                break;
            }
        }
    } else {
        hi = h;
        let mut step = 1usize;
        loop {
            let next = hi.saturating_sub(step).max(a);
            if next == a || fits(next) {
                lo = next; // fits(a) always: W(a..a) = 0
                break;
            }
            hi = next;
            step = step.saturating_mul(2);
        }
    }
    while hi - lo > 1 {
        let mid = lo + (hi - lo) / 2;
        if fits(mid) {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    lo
}

/// One probe at `bound`: each processor in turn takes as many items as fit.
/// Writes the cuts into `cuts` (hints on entry: the previous probe's cuts) and
/// returns whether the runs reach the last item.
fn probe<S: Sums>(sums: &S, speeds: &[f64], bound: f64, cuts: &mut [usize]) -> bool {
    let n = sums.items();
    let p = speeds.len();
    cuts[0] = 0;
    for j in 0..p {
        let a = cuts[j];
        cuts[j + 1] = if a == n {
            n
        } else {
            reach(sums, speeds[j], a, bound, cuts[j + 1])
        };
    }
    cuts[p] == n
}

/// The processors' times under `cuts`, and the largest.
pub(crate) fn times_of<S: Sums>(sums: &S, speeds: &[f64], cuts: &[usize]) -> (Vec<f64>, f64) {
    let times: Vec<f64> = speeds
        .iter()
        .enumerate()
        .map(|(j, &s)| time(sums, s, cuts[j], cuts[j + 1]))
        .collect();
    let max = times.iter().copied().fold(0.0, f64::max);
    (times, max)
}

/// Each processor's weight under `cuts`.
pub(crate) fn weights_of<S: Sums>(sums: &S, cuts: &[usize]) -> Vec<f64> {
    cuts.windows(2).map(|w| sums.weight(w[0], w[1])).collect()
}

/// The f64 halfway between `lo` and `hi` (`0 <= lo < hi`) in bit patterns: in
/// `[lo, hi)`, so that a bisection over it ends after at most 64 halvings.
fn bit_midpoint(lo: f64, hi: f64) -> f64 {
    let (a, b) = (lo.to_bits(), hi.to_bits());
    f64::from_bits(a + (b - a) / 2)
}

fn optimum<S: Sums>(sums: &S, speeds: &[f64]) -> Result<Partition, PartitionError> {
    let n = sums.items();
    let p = speeds.len();
    // A feasible start: everything on the fastest processor.
    let total = sums.weight(0, n);
    let fastest = speeds.iter().copied().fold(f64::INFINITY, f64::min);
    let start = fastest * total;
    if !start.is_finite() {
        return Err(PartitionError::TimeOverflow {
            what: format!(
                "the time of the fastest processor on all the weight ({} * {})",
                crate::shown(fastest),
                crate::shown(total)
            ),
        });
    }
    let mut cuts = vec![0usize; p + 1];
    // Hints for the first probe: the speed shares of the fluid optimum.
    let inverse: f64 = speeds.iter().map(|s| 1.0 / s).sum();
    let fluid = total / inverse;
    let mut share = 0.0;
    for j in 0..p {
        share += 1.0 / speeds[j] / inverse;
        cuts[j + 1] = ((share * n as f64) as usize).min(n);
    }
    let mut best = vec![0usize; p + 1];
    let mut probes = 0u32;
    let mut lo = 0.0f64;
    let mut hi;
    // The first probe at the fluid bound (rarely feasible, but it places the
    // cuts near the answer, and its failure raises lo there).
    let mut next = fluid.min(start);
    let mut step = (fluid * 2f64.powi(-20)).max(f64::MIN_POSITIVE);
    loop {
        probes += 1;
        if probe(sums, speeds, next, &mut cuts) {
            best.copy_from_slice(&cuts);
            hi = times_of(sums, speeds, &cuts).1;
            break;
        }
        lo = lo.max(smallest_extension(sums, speeds, &cuts));
        // Upwards from the fluid bound in doubling steps, so that hi starts
        // close to the optimum: about log2(gap / step) probes.
        next = (lo + step).min(start);
        step *= 2.0;
    }
    while lo < hi {
        let mid = bit_midpoint(lo, hi);
        probes += 1;
        if probe(sums, speeds, mid, &mut cuts) {
            best.copy_from_slice(&cuts);
            hi = times_of(sums, speeds, &cuts).1;
        } else {
            lo = smallest_extension(sums, speeds, &cuts);
        }
    }
    let (times, bottleneck) = times_of(sums, speeds, &best);
    Ok(Partition {
        weights: weights_of(sums, &best),
        cuts: best.iter().map(|&c| c as u64).collect(),
        bottleneck,
        lower_bound: lo,
        optimal: bottleneck <= lo,
        times,
        probes,
    })
}

/// After an infeasible probe: the smallest time at which some processor could
/// take one item more than the probe gave it. Every bound below it gives the
/// same runs, so it is infeasible too: the optimum is at least this.
fn smallest_extension<S: Sums>(sums: &S, speeds: &[f64], cuts: &[usize]) -> f64 {
    let n = sums.items();
    (0..speeds.len())
        .filter(|&j| cuts[j + 1] < n)
        .map(|j| time(sums, speeds[j], cuts[j], cuts[j + 1] + 1))
        .fold(f64::INFINITY, f64::min)
}
