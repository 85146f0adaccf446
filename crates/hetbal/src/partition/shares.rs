//! The cuts other balancers make, for comparison, and the bottleneck of any cuts.

use super::error::{check_cuts, check_speeds};
use super::prefix::{Prefix, Sums, Weight};
use super::PartitionError;

/// The cuts at equal shares of the weight, whatever the processors' speeds: the
/// first item whose preceding weight reaches `j * W / p` starts processor `j`.
/// This is how p4est's `p4est_partition` cuts a space-filling curve of weighted
/// quadrants (it has no per-rank speed).
///
/// # Errors
/// A bad weight or an empty processor count ([`PartitionError`]).
///
/// # Complexity
/// O(n) for the prefix sums, then O(p log n).
///
/// # Example
/// ```
/// use hetbal::partition::equal_weight_cuts;
/// assert_eq!(equal_weight_cuts(&[1u64, 1, 1, 1, 4], 2).unwrap(), vec![0, 4, 5]);
/// ```
pub fn equal_weight_cuts<W: Weight>(
    weights: &[W],
    processors: usize,
) -> Result<Vec<u64>, PartitionError> {
    if processors == 0 {
        return Err(PartitionError::NoProcessors);
    }
    let shares: Vec<f64> = (0..=processors)
        .map(|j| j as f64 / processors as f64)
        .collect();
    cuts_at_shares(&W::prefix_sums(weights)?, &shares)
}

/// The cuts at shares of the weight proportional to the processors' speeds,
/// placed greedily along the items: processor `j` starts at the first item whose
/// preceding weight reaches `W * (1/s_0 + ... + 1/s_{j-1}) / (1/s_0 + ... +
/// 1/s_{p-1})`. This is the cut of Zoltan's HSFC with part sizes and of AMReX's
/// SFC distribution with speed weights: right in the limit of many light items,
/// off by whole items otherwise, and never better than [`partition`](super::partition).
///
/// # Errors
/// A bad weight or speed ([`PartitionError`]).
///
/// # Complexity
/// O(n) for the prefix sums, then O(p log n).
///
/// # Example
/// ```
/// use hetbal::partition::speed_share_cuts;
/// // P0 is three times as fast: it gets the first three quarters of the weight.
/// assert_eq!(speed_share_cuts(&[1u64; 8], &[1.0, 3.0]).unwrap(), vec![0, 6, 8]);
/// ```
pub fn speed_share_cuts<W: Weight>(
    weights: &[W],
    seconds_per_unit: &[f64],
) -> Result<Vec<u64>, PartitionError> {
    check_speeds(seconds_per_unit)?;
    let inverse: f64 = seconds_per_unit.iter().map(|s| 1.0 / s).sum();
    let mut shares = Vec::with_capacity(seconds_per_unit.len() + 1);
    let mut acc = 0.0;
    shares.push(0.0);
    for s in seconds_per_unit {
        acc += 1.0 / s;
        shares.push(acc / inverse);
    }
    cuts_at_shares(&W::prefix_sums(weights)?, &shares)
}

fn cuts_at_shares(prefix: &Prefix, shares: &[f64]) -> Result<Vec<u64>, PartitionError> {
    fn cut<S: Sums>(sums: &S, shares: &[f64]) -> Vec<u64> {
        let n = sums.items();
        let total = sums.weight(0, n);
        let last = shares.len() - 1;
        shares
            .iter()
            .enumerate()
            .map(|(j, share)| {
                if j == last {
                    return n as u64;
                }
                let goal = total * share;
                // The first i with W(0..i) >= goal.
                let (mut lo, mut hi) = (0usize, n);
                while lo < hi {
                    let mid = lo + (hi - lo) / 2;
                    if sums.weight(0, mid) >= goal {
                        hi = mid;
                    } else {
                        lo = mid + 1;
                    }
                }
                lo as u64
            })
            .collect()
    }
    Ok(match prefix {
        Prefix::Int(s) => cut(s, shares),
        Prefix::Float(s) => cut(s, shares),
    })
}

/// The bottleneck of given cuts: `max_j seconds_per_unit[j] * W(cuts[j]..cuts[j+1])`,
/// with the processors' times computed exactly as [`partition`](super::partition)
/// computes them.
///
/// # Errors
/// A bad weight, speed or list of cuts ([`PartitionError`]).
///
/// # Complexity
/// O(n + p).
///
/// # Example
/// ```
/// use hetbal::partition::bottleneck_of;
/// assert_eq!(bottleneck_of(&[1u64, 2, 3], &[1.0, 2.0], &[0, 2, 3]).unwrap(), 6.0);
/// ```
pub fn bottleneck_of<W: Weight>(
    weights: &[W],
    seconds_per_unit: &[f64],
    cuts: &[u64],
) -> Result<f64, PartitionError> {
    check_speeds(seconds_per_unit)?;
    check_cuts("cuts", cuts, seconds_per_unit.len(), weights.len() as u64)?;
    let (times, _) = times_and_weights(weights, seconds_per_unit, cuts)?;
    Ok(times.iter().copied().fold(0.0, f64::max))
}

/// Each processor's time and weight under `cuts` (checked by the caller), as
/// [`partition`](super::partition) computes them. O(n + p).
pub(crate) fn times_and_weights<W: Weight>(
    weights: &[W],
    seconds_per_unit: &[f64],
    cuts: &[u64],
) -> Result<(Vec<f64>, Vec<f64>), PartitionError> {
    fn of<S: Sums>(sums: &S, speeds: &[f64], cuts: &[usize]) -> (Vec<f64>, Vec<f64>) {
        (
            super::exact::times_of(sums, speeds, cuts).0,
            super::exact::weights_of(sums, cuts),
        )
    }
    let cuts: Vec<usize> = cuts.iter().map(|&c| c as usize).collect();
    Ok(match W::prefix_sums(weights)? {
        Prefix::Int(s) => of(&s, seconds_per_unit, &cuts),
        Prefix::Float(s) => of(&s, seconds_per_unit, &cuts),
    })
}
