//! Prefix sums of the unbalances and the net flows they induce on ring links.

use crate::ring::{Flow, RingInstance, Schedule};

/// Prefix sums `S_j = delta_0 + … + delta_j` of the unbalances (`S_{n-1} = 0`).
///
/// Every slice sum, wrapping or not, is a difference `S_l - S_k`, and the net
/// clockwise flow on link (i, i+1) of any redistribution is `f_i = x + S_i` for one
/// integer `x`, the circulation (model.md section 1).
///
/// i128 holds every value exactly: |S_j| <= total items <= u64::MAX.
///
/// Complexity: O(n) time and space.
///
/// # Example
/// ```
/// use hetbal::ring::{prefix_sums, RingInstance};
/// let ring = RingInstance::unidirectional(&[4, 1, 1], &[2, 2, 2], &[1.0; 3]).unwrap();
/// assert_eq!(prefix_sums(&ring), vec![2, 1, 0]);
/// ```
pub fn prefix_sums(instance: &RingInstance) -> Vec<i128> {
    let mut acc = 0i128;
    (0..instance.len())
        .map(|i| {
            acc += instance.delta(i);
            acc
        })
        .collect()
}

/// The smallest non-negative clockwise flows: `f_i = S_i - min_j S_j`, the number of
/// items processor i sends to its successor in every optimal unidirectional plan.
///
/// Every unidirectional redistribution has flows `x + S_i >= 0`, so these are the
/// pointwise smallest; at least one of them is zero. Each fits in a u64: it is the
/// unbalance of a slice, at most the slice's load.
///
/// Complexity: O(n) time and space.
///
/// # Example
/// ```
/// use hetbal::ring::{unidirectional_flows, RingInstance};
/// //   P0 has 2 items too many, P1 and P2 lack one each: P0 -> P1 carries 2, P1 -> P2 1.
/// let ring = RingInstance::unidirectional(&[4, 1, 1], &[2, 2, 2], &[1.0; 3]).unwrap();
/// assert_eq!(unidirectional_flows(&ring), vec![2, 1, 0]);
/// ```
pub fn unidirectional_flows(instance: &RingInstance) -> Vec<u64> {
    let sums = prefix_sums(instance);
    let min = sums.iter().copied().min().unwrap_or(0);
    sums.iter()
        .map(|&s| u64::try_from(s - min).expect("a slice unbalance is at most the total load"))
        .collect()
}

/// Net items per link and direction moved by a schedule (non-zero only), sorted by
/// link.
///
/// Complexity: O(n + m).
pub fn net_flows(instance: &RingInstance, schedule: &Schedule) -> Vec<Flow> {
    let n = instance.len();
    let mut clockwise = vec![0i128; n]; // link (i, succ(i))
    for t in &schedule.transfers {
        if t.from >= n || t.to >= n {
            continue;
        }
        if t.to == instance.succ(t.from) {
            clockwise[t.from] += i128::from(t.items);
        } else if t.to == instance.pred(t.from) {
            clockwise[t.to] -= i128::from(t.items);
        }
    }
    clockwise
        .iter()
        .enumerate()
        .filter(|&(_, &f)| f != 0)
        .map(|(i, &f)| {
            let items = u64::try_from(f.unsigned_abs()).unwrap_or(u64::MAX);
            if f > 0 {
                Flow {
                    from: i,
                    to: instance.succ(i),
                    items,
                }
            } else {
                Flow {
                    from: instance.succ(i),
                    to: i,
                    items,
                }
            }
        })
        .collect()
}
