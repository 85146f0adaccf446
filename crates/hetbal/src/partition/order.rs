//! A processor order for when the order is free.

use super::error::check_speeds;
use super::exact::{partition_sums, Partition};
use super::prefix::{Prefix, Weight};
use super::PartitionError;
use serde::Serialize;

/// Up to this many processors, the bottleneck processor is tried at every
/// place, not only beside its neighbours and the processors of nearest speed.
const SWAP_ALL: usize = 32;

/// A processor order and the optimal partition in that order.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ProcessorOrder {
    /// The processors (indices into `seconds_per_unit`) in the order they take
    /// the items: `order[k]` holds items `partition.cuts[k]..partition.cuts[k+1]`.
    pub order: Vec<usize>,
    /// The optimal partition for that order.
    pub partition: Partition,
    /// Orders whose partition was computed.
    pub evaluated: usize,
}

/// A processor order that makes the optimal partition's bottleneck small, for
/// when the order is free (a ring being mapped, ranks that can be renumbered).
/// Finding the best order is NP-complete (Pinar, Tabak and Aykanat, 2008); this
/// is a heuristic.
///
/// It starts from the best of three orders (as given, fastest first, slowest
/// first), then repeatedly tries to swap the bottleneck processor with each of
/// its neighbours and with the processors of the next and previous speed,
/// keeping a swap when the optimal bottleneck drops, until no such swap helps
/// (at most `4p` swaps). Against exhaustive search over every order (tested on
/// thousands of instances with p <= 6) it finds the best order on most and is
/// within a few per cent on the rest; the guide's partitioning chapter gives
/// the measured figures.
///
/// # Errors
/// As [`partition`](super::partition).
///
/// # Complexity
/// O(n) for the prefix sums, then O(p) partitions of O(64 p log(n/p)) each:
/// O(n + p^2 log(n/p)).
///
/// # Example
/// ```
/// use hetbal::partition::order_processors;
/// // One heavy item: in the given order the slow processor must take it or its
/// // neighbour's share; the heuristic puts the fast processor on it.
/// let o = order_processors(&[8u64, 1, 1, 1, 1], &[4.0, 1.0]).unwrap();
/// assert_eq!(o.order, vec![1, 0]);
/// assert_eq!(o.partition.bottleneck, 10.0); // the fast one takes 8 + 1 + 1, the slow one 1 + 1
/// ```
pub fn order_processors<W: Weight>(
    weights: &[W],
    seconds_per_unit: &[f64],
) -> Result<ProcessorOrder, PartitionError> {
    check_speeds(seconds_per_unit)?;
    let prefix = W::prefix_sums(weights)?;
    let p = seconds_per_unit.len();
    let mut evaluated = 0usize;
    let mut solve = |order: &[usize]| -> Result<Partition, PartitionError> {
        evaluated += 1;
        let speeds: Vec<f64> = order.iter().map(|&j| seconds_per_unit[j]).collect();
        partition_sums(&prefix, &speeds)
    };
    let given: Vec<usize> = (0..p).collect();
    let mut fastest = given.clone();
    fastest.sort_by(|&a, &b| {
        seconds_per_unit[a]
            .total_cmp(&seconds_per_unit[b])
            .then(a.cmp(&b))
    });
    let slowest: Vec<usize> = fastest.iter().rev().copied().collect();
    let mut best_order = given.clone();
    let mut best = solve(&given)?;
    for candidate in [fastest.clone(), slowest] {
        let part = solve(&candidate)?;
        if part.bottleneck < best.bottleneck {
            best = part;
            best_order = candidate;
        }
    }
    // rank[j]: processor j's place in the order by speed.
    let mut rank = vec![0usize; p];
    for (r, &j) in fastest.iter().enumerate() {
        rank[j] = r;
    }
    for _ in 0..4 * p {
        let (k, _) =
            best.times.iter().enumerate().fold(
                (0, f64::MIN),
                |acc, (k, &t)| if t > acc.1 { (k, t) } else { acc },
            );
        let at = |j: usize| best_order.iter().position(|&x| x == j);
        let slot = best_order[k];
        let mut partners: Vec<usize> = Vec::with_capacity(4);
        if p <= SWAP_ALL {
            partners.extend((0..p).filter(|&place| place != k));
        } else if k > 0 {
            partners.push(k - 1);
        }
        if k + 1 < p {
            partners.push(k + 1);
        }
        let r = rank[slot];
        for other in [r.checked_sub(1), (r + 1 < p).then_some(r + 1)]
            .into_iter()
            .flatten()
        {
            if let Some(place) = at(fastest[other]) {
                if !partners.contains(&place) && place != k {
                    partners.push(place);
                }
            }
        }
        let mut improved = false;
        for place in partners {
            let mut candidate = best_order.clone();
            candidate.swap(k, place);
            let part = solve(&candidate)?;
            if part.bottleneck < best.bottleneck {
                best = part;
                best_order = candidate;
                improved = true;
                break;
            }
        }
        if !improved {
            break;
        }
    }
    Ok(ProcessorOrder {
        order: best_order,
        partition: best,
        evaluated,
    })
}

/// The best processor order by exhaustive search over all `p!` orders, for
/// checking [`order_processors`] (p <= 9).
///
/// # Errors
/// As [`partition`](super::partition); [`PartitionError::Limit`] above 9
/// processors.
///
/// # Complexity
/// O(n + p! · 64 p log(n/p)).
///
/// # Example
/// ```
/// use hetbal::partition::exhaustive_order;
/// let o = exhaustive_order(&[8u64, 1, 1, 1, 1], &[4.0, 1.0]).unwrap();
/// assert_eq!(o.partition.bottleneck, 10.0); // the fast one takes 8 + 1 + 1, the slow one 1 + 1
/// ```
pub fn exhaustive_order<W: Weight>(
    weights: &[W],
    seconds_per_unit: &[f64],
) -> Result<ProcessorOrder, PartitionError> {
    check_speeds(seconds_per_unit)?;
    let p = seconds_per_unit.len();
    if p > 9 {
        return Err(PartitionError::Limit {
            what: format!(
                "{p} processors: the exhaustive order search is limited to 9 (9! orders)"
            ),
        });
    }
    let prefix: Prefix = W::prefix_sums(weights)?;
    let mut order: Vec<usize> = (0..p).collect();
    let mut best: Option<(Vec<usize>, Partition)> = None;
    let mut evaluated = 0usize;
    loop {
        let speeds: Vec<f64> = order.iter().map(|&j| seconds_per_unit[j]).collect();
        let part = partition_sums(&prefix, &speeds)?;
        evaluated += 1;
        if best
            .as_ref()
            .is_none_or(|(_, b)| part.bottleneck < b.bottleneck)
        {
            best = Some((order.clone(), part));
        }
        if !next_permutation(&mut order) {
            break;
        }
    }
    let (order, partition) = best.expect("at least one order");
    Ok(ProcessorOrder {
        order,
        partition,
        evaluated,
    })
}

/// The next permutation in lexicographic order; false after the last.
fn next_permutation(a: &mut [usize]) -> bool {
    let n = a.len();
    if n < 2 {
        return false;
    }
    let mut i = n - 1;
    while i > 0 && a[i - 1] >= a[i] {
        i -= 1;
    }
    if i == 0 {
        return false;
    }
    let mut j = n - 1;
    while a[j] <= a[i - 1] {
        j -= 1;
    }
    a.swap(i - 1, j);
    a[i..].reverse();
    true
}
