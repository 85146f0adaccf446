//! Balanced integer targets from processor speeds.

use std::fmt;

/// Integer targets that minimise the time of the slowest processor.
#[derive(Clone, Debug, PartialEq)]
pub struct BalancedTargets {
    /// Items per processor, in the order of the speeds given (each >= 1, sum = total).
    pub targets: Vec<u64>,
    /// `max_i targets[i] * time_per_item[i]`: the minimum over all such splits.
    pub max_time: f64,
}

/// Why targets could not be computed.
#[derive(Clone, Debug, PartialEq)]
pub enum BalanceError {
    /// No processors were given.
    NoProcessors,
    /// A time per item is zero, negative, NaN or infinite.
    InvalidTime {
        /// Index of the processor.
        index: usize,
        /// The value given.
        value: f64,
    },
    /// The balanced time is beyond the largest f64: the items times the times
    /// per item overflow (for instance 10^19 items at 10^300 s each).
    TimeOverflow {
        /// Items to share.
        total: u64,
    },
    /// Fewer items than processors: some processor would get none.
    TooFewItems {
        /// Items to share.
        total: u64,
        /// Processors.
        processors: usize,
    },
}

impl fmt::Display for BalanceError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            BalanceError::NoProcessors => f.write_str("no processors to balance over"),
            BalanceError::InvalidTime { index, value } => write!(
                f,
                "processor {index}: time per item {value} must be finite and > 0"
            ),
            BalanceError::TimeOverflow { total } => write!(
                f,
                "{total} items: the balanced time per iteration overflows (it is beyond {:e} s); measure time in a larger unit, so that the times per item are smaller numbers",
                f64::MAX
            ),
            BalanceError::TooFewItems { total, processors } => write!(
                f,
                "{total} items cannot give at least one item to each of {processors} processors"
            ),
        }
    }
}

impl std::error::Error for BalanceError {}

/// Items processor `i` can finish by time `t`: the largest k with `k * w <= t`
/// (products in f64, the same products as the reported finish times), at least 1,
/// at most `cap`.
fn capacity(w: f64, t: f64, cap: u64) -> u64 {
    let guess = (t / w).floor();
    if guess >= cap as f64 {
        return cap;
    }
    let mut k = if guess < 1.0 { 1 } else { guess as u64 };
    while k < cap && (k + 1) as f64 * w <= t {
        k += 1;
    }
    while k > 1 && k as f64 * w > t {
        k -= 1;
    }
    k
}

/// The greedy's targets ([`balanced_targets`]) reached from just below the
/// fractional optimum `T* = total / sum(1 / w_i)`: every processor's items
/// that finish by `T* (1 - 1e-9)` (at most `total`, since those of the
/// fractional split do), then the next items one at a time in the order of
/// their finish times `(k + 1) w_i`, ties to the lower index, from a heap: the
/// same items in the same order as the greedy from one item each, which the
/// bisection reaches too. About n items are left for the heap (each
/// processor's fraction of an item), so O(n log n), against 64 passes over the
/// processors for the bisection.
///
/// `None` (the bisection then decides) when the start is not below `total`
/// (processors held at one item, or rounding), when more than `2 n + 2` items
/// would be left, or beyond 2^52 items, where f64 finish times stop telling
/// neighbouring counts apart.
fn from_fractional(total: u64, time_per_item: &[f64], cap: u64) -> Option<Vec<u64>> {
    use std::cmp::Reverse;
    use std::collections::BinaryHeap;
    let n = time_per_item.len();
    if total > 1 << 52 {
        return None;
    }
    let speed: f64 = time_per_item.iter().map(|&w| 1.0 / w).sum();
    let start = total as f64 / speed * (1.0 - 1e-9);
    if !(start.is_finite() && start > 0.0) {
        return None;
    }
    let mut targets: Vec<u64> = time_per_item
        .iter()
        .map(|&w| capacity(w, start, cap))
        .collect();
    let have: u128 = targets.iter().map(|&k| u128::from(k)).sum();
    let left = u128::from(total).checked_sub(have)?;
    if left > 2 * n as u128 + 2 {
        return None;
    }
    // Finish times are positive, so their bit patterns order them.
    let next = |k: u64, w: f64| ((k + 1) as f64 * w).to_bits();
    let mut heap: BinaryHeap<Reverse<(u64, usize)>> = (targets.iter().zip(time_per_item))
        .enumerate()
        .filter(|(_, (&k, _))| k < cap)
        .map(|(i, (&k, &w))| Reverse((next(k, w), i)))
        .collect();
    for _ in 0..left {
        let Reverse((_, i)) = heap.pop()?;
        targets[i] += 1;
        if targets[i] < cap {
            heap.push(Reverse((next(targets[i], time_per_item[i]), i)));
        }
    }
    Some(targets)
}

/// Takes `excess` items back from `targets`, one at a time from the processor
/// that finishes last (ties to the higher index), never below 1 item.
/// O(excess log n); called only when f64 rounding made the capacities overshoot.
fn trim(targets: &mut [u64], time_per_item: &[f64], excess: u128) {
    use std::cmp::Ordering;
    use std::collections::BinaryHeap;
    #[derive(PartialEq)]
    struct Last(f64, usize);
    impl Eq for Last {}
    impl PartialOrd for Last {
        fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
            Some(self.cmp(other))
        }
    }
    impl Ord for Last {
        fn cmp(&self, other: &Self) -> Ordering {
            self.0.total_cmp(&other.0).then(self.1.cmp(&other.1))
        }
    }
    let mut heap: BinaryHeap<Last> = targets
        .iter()
        .zip(time_per_item)
        .enumerate()
        .filter(|(_, (&k, _))| k > 1)
        .map(|(i, (&k, &w))| Last(k as f64 * w, i))
        .collect();
    for _ in 0..excess {
        let Some(Last(_, i)) = heap.pop() else { break };
        targets[i] -= 1;
        if targets[i] > 1 {
            heap.push(Last(targets[i] as f64 * time_per_item[i], i));
        }
    }
}

/// Integer targets minimising `max_i targets[i] * time_per_item[i]`, every target
/// at least 1, summing to `total`.
///
/// Among the optimal splits it returns the one the greedy "give the next item to the
/// processor that would finish it first" reaches from one item each (ties to the
/// lower index), i.e. the fewest processors at the maximum. It finds the greedy's
/// final threshold `T` directly: the smallest `T` with
/// `sum_i max(1, floor(T / w_i)) >= total`: from just below the fractional
/// optimum `total / sum(1 / w_i)`, giving the items left one at a time from a
/// heap of finish times; or, where that start does not hold (processors held
/// at one item, more than 2^52 items), by bisection on `T` and then an exact
/// step to the next finish time `k * w_i`.
///
/// # Arguments
/// * `total` - the number of items to share;
/// * `time_per_item` - seconds per item of each processor (finite, > 0).
///
/// # Errors
/// [`BalanceError`] for no processors, a bad time, fewer items than processors,
/// or a balanced time beyond the largest f64.
///
/// # Complexity
/// O(n log n) time from the fractional optimum (about n items left for the
/// heap); otherwise O(64 n): at most 64 bisection steps over the bit patterns
/// of f64, then an exact step or two, whatever the total and the times (`2^60`
/// items with one processor 10^300 times slower than the others included).
/// O(n) space.
///
/// # Example
/// ```
/// use hetbal::balance::balanced_targets;
/// // 10 items; P0 takes 1 s per item, P1 2 s, P2 4 s.
/// let b = balanced_targets(10, &[1.0, 2.0, 4.0]).unwrap();
/// assert_eq!(b.targets, vec![6, 3, 1]);
/// assert_eq!(b.max_time, 6.0);
/// ```
pub fn balanced_targets(
    total: u64,
    time_per_item: &[f64],
) -> Result<BalancedTargets, BalanceError> {
    balanced_targets_with(total, time_per_item, true)
}

/// [`balanced_targets`], trying the start from the fractional optimum first
/// when `fast` (the tests compare both ways).
fn balanced_targets_with(
    total: u64,
    time_per_item: &[f64],
    fast: bool,
) -> Result<BalancedTargets, BalanceError> {
    let n = time_per_item.len();
    if n == 0 {
        return Err(BalanceError::NoProcessors);
    }
    if let Some((index, &value)) = time_per_item
        .iter()
        .enumerate()
        .find(|(_, &w)| !(w.is_finite() && w > 0.0))
    {
        return Err(BalanceError::InvalidTime { index, value });
    }
    if (total as u128) < n as u128 {
        return Err(BalanceError::TooFewItems {
            total,
            processors: n,
        });
    }
    // Every target is at most this (the others get at least one item each).
    let cap = total - (n as u64 - 1);
    let count = |t: f64| -> u128 {
        time_per_item
            .iter()
            .map(|&w| u128::from(capacity(w, t, cap)))
            .sum()
    };
    let w_max = time_per_item.iter().copied().fold(0.0, f64::max);
    let finish = |targets: &[u64]| {
        targets
            .iter()
            .zip(time_per_item)
            .map(|(&k, &w)| k as f64 * w)
            .fold(0.0, f64::max)
    };
    if total == n as u64 {
        let targets = vec![1; n];
        let max_time = finish(&targets);
        return Ok(BalancedTargets { targets, max_time });
    }
    if let Some(targets) = fast
        .then(|| from_fractional(total, time_per_item, cap))
        .flatten()
    {
        let max_time = finish(&targets);
        return Ok(BalancedTargets { targets, max_time });
    }
    // Invariant: count(lo) < total <= count(hi). `hi` may be infinite (huge
    // times per item): the bisection runs over the bit patterns of f64, which
    // order the non-negative values, infinity included, so it ends after at
    // most 64 halvings with lo and hi neighbours, whatever the magnitudes.
    let mut lo = 0.0f64;
    let mut hi = w_max * total as f64;
    while count(hi) < u128::from(total) {
        hi *= 2.0;
    }
    while hi.to_bits() - lo.to_bits() > 1 {
        let mid = f64::from_bits(lo.to_bits() + (hi.to_bits() - lo.to_bits()) / 2);
        if count(mid) < u128::from(total) {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    if hi.is_infinite() {
        return Err(BalanceError::TimeOverflow { total });
    }
    // Step exactly from lo to the next finish times until enough items fit.
    loop {
        let base: Vec<u64> = time_per_item
            .iter()
            .map(|&w| capacity(w, lo, cap))
            .collect();
        let next: Vec<f64> = base
            .iter()
            .zip(time_per_item)
            .map(|(&k, &w)| {
                if k >= cap {
                    f64::INFINITY
                } else {
                    (k + 1) as f64 * w
                }
            })
            .collect();
        let t = next.iter().copied().fold(f64::INFINITY, f64::min);
        let have: u128 = base.iter().map(|&k| u128::from(k)).sum();
        let at_t = next.iter().filter(|&&x| x == t).count() as u128;
        if have > u128::from(total) {
            // Beyond 2^53 items f64 finish times cannot tell neighbouring counts
            // apart, and the capacities may overshoot: take the excess back.
            let mut targets = base;
            trim(&mut targets, time_per_item, have - u128::from(total));
            let max_time = finish(&targets);
            return Ok(BalancedTargets { targets, max_time });
        }
        if have + at_t >= u128::from(total) {
            let mut missing = u128::from(total) - have;
            let mut targets = base;
            for (k, &x) in targets.iter_mut().zip(&next) {
                if missing == 0 {
                    break;
                }
                if x == t {
                    *k += 1;
                    missing -= 1;
                }
            }
            let max_time = finish(&targets);
            return Ok(BalancedTargets { targets, max_time });
        }
        lo = t;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::random::SplitMix64;

    /// The start from the fractional optimum gives the bisection's targets,
    /// on random processors with times drawn from a few values (ties between
    /// finish times), from a wide range, and with very slow processors held at
    /// one item; and it is taken on most of them.
    #[test]
    fn the_fractional_start_equals_the_bisection() {
        let mut rng = SplitMix64::new(38);
        let (mut cases, mut fast) = (0, [0; 3]);
        for case in 0..3000 {
            let n = 1 + (rng.next_u64() % 60) as usize;
            let w: Vec<f64> = (0..n)
                .map(|_| match case % 3 {
                    0 => [0.5, 1.0, 1.5, 2.0, 3.0][rng.below(5)],
                    1 => rng.range((1e-3, 1e3)),
                    _ => {
                        if rng.next_u64() % 4 == 0 {
                            1e6
                        } else {
                            rng.range((0.5, 2.0))
                        }
                    }
                })
                .collect();
            let total = n as u64 + rng.next_u64() % (1 + [10, 1000, 1 << 40][case % 3]);
            let cap = total - (n as u64 - 1);
            fast[case % 3] += usize::from(from_fractional(total, &w, cap).is_some());
            let a = balanced_targets_with(total, &w, true).unwrap();
            let b = balanced_targets_with(total, &w, false).unwrap();
            assert_eq!(a, b, "case {case}: total {total}, times {w:?}");
            cases += 1;
        }
        eprintln!(
            "{cases} splits the same both ways; from the fractional optimum: {fast:?} of \
             1,000 with a few times, a wide range, slow processors"
        );
        assert!(fast[0] > 300 && fast[1] > 900, "{fast:?}");
    }
}
