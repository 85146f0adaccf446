//! Finish times of a distribution: the one place where times are added up.

use crate::scatter::{PlanError, ScatterInstance};

/// When each processor of an order waits, receives and computes.
///
/// Position `k` of the order waits from 0 to `receive_start[k]` (the root sends to
/// the processors before it), receives from `receive_start[k]` to `receive_end[k]`
/// and computes from `receive_end[k]` to `finish_times[k]`. The root (last) receives
/// nothing: it sends from 0 to its `receive_start`, then computes.
#[derive(Clone, Debug, PartialEq)]
pub struct Timeline {
    /// `sum_{j<k} Tcomm_j(n_j)`: when the root starts sending to position k.
    pub receive_start: Vec<f64>,
    /// `sum_{j<=k} Tcomm_j(n_j)`: when position k holds its items.
    pub receive_end: Vec<f64>,
    /// `T_k = receive_end[k] + Tcomp_k(n_k)`.
    pub finish_times: Vec<f64>,
    /// `max_k T_k`.
    pub makespan: f64,
}

/// Checks that `order` lists every processor once and ends with the root.
pub(crate) fn check_order(instance: &ScatterInstance, order: &[usize]) -> Result<(), PlanError> {
    let p = instance.len();
    let bad = |reason: String| Err(PlanError::InvalidOrder { reason });
    if order.len() != p {
        return bad(format!(
            "it lists {} processors, the instance has {p}",
            order.len()
        ));
    }
    let mut seen = vec![false; p];
    for &i in order {
        if i >= p {
            return bad(format!(
                "processor index {i} is out of range (0 to {})",
                p - 1
            ));
        }
        if seen[i] {
            return bad(format!(
                "processor {i} ({}) appears twice",
                instance.name(i)
            ));
        }
        seen[i] = true;
    }
    let root = instance.root();
    if order[p - 1] != root {
        return bad(format!(
            "it must end with the root {root} ({}), not {} ({})",
            instance.name(root),
            order[p - 1],
            instance.name(order[p - 1])
        ));
    }
    Ok(())
}

/// The finish time of every processor when the root sends `counts[k]` items to
/// `order[k]`, one processor after the other, and every processor computes as soon
/// as its items are in:
/// `T_k = sum_{j<=k} Tcomm_j(n_j) + Tcomp_k(n_k)` (model.md section 2), added from
/// the front in f64. Every processor counts in the makespan, including those that
/// get no items (under [`crate::scatter::StartupRule::Always`] they still pay their
/// startups).
///
/// # Arguments
/// * `instance` - the instance (its startup rule applies);
/// * `order` - every processor once, the root last;
/// * `counts` - items per position of `order`, adding up to N.
///
/// # Errors
/// [`PlanError::InvalidOrder`] or [`PlanError::InvalidCounts`].
///
/// # Complexity
/// O(p).
///
/// # Example
/// ```
/// use hetbal::scatter::{evaluate, ScatterInstance};
/// //   root P2 --comm 2/item--> P0 (comp 6/item)
/// //           --comm 4/item--> P1 (comp 8/item),  root comp 6/item
/// let s = ScatterInstance::linear(3, 2, &[2.0, 4.0, 0.0], &[6.0, 8.0, 6.0]).unwrap();
/// let t = evaluate(&s, &[1, 0, 2], &[1, 1, 1]).unwrap();
/// assert_eq!(t.receive_start, vec![0.0, 4.0, 6.0]);
/// assert_eq!(t.finish_times, vec![12.0, 12.0, 12.0]);
/// assert_eq!(t.makespan, 12.0);
/// assert!(evaluate(&s, &[1, 0, 2], &[1, 1, 2]).is_err()); // 4 items, not 3
/// ```
pub fn evaluate(
    instance: &ScatterInstance,
    order: &[usize],
    counts: &[u64],
) -> Result<Timeline, PlanError> {
    check_order(instance, order)?;
    if counts.len() != order.len() {
        return Err(PlanError::InvalidCounts {
            reason: format!(
                "{} counts given for {} processors",
                counts.len(),
                order.len()
            ),
        });
    }
    let total: u128 = counts.iter().map(|&c| u128::from(c)).sum();
    if total != u128::from(instance.items()) {
        return Err(PlanError::InvalidCounts {
            reason: format!(
                "the counts add up to {total}, the instance has {} items",
                instance.items()
            ),
        });
    }
    let p = order.len();
    let mut receive_start = Vec::with_capacity(p);
    let mut receive_end = Vec::with_capacity(p);
    let mut finish_times = Vec::with_capacity(p);
    let mut clock = 0.0f64;
    for (&i, &x) in order.iter().zip(counts) {
        receive_start.push(clock);
        clock += instance.comm_time(i, x);
        receive_end.push(clock);
        finish_times.push(clock + instance.comp_time(i, x));
    }
    let makespan = finish_times.iter().copied().fold(0.0, f64::max);
    Ok(Timeline {
        receive_start,
        receive_end,
        finish_times,
        makespan,
    })
}
