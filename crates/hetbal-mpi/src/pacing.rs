//! Emulated links (`--emulate-links`): a sender releases each item no earlier than
//! the plan says its transfer ends, so that every link carries its items at the
//! plan's pace and heterogeneous links are reproduced on one machine.
//!
//! A link's planned sends are batches `(start, items, seconds per item)`: item j
//! (from 1) of a batch has crossed the link at `start + j * seconds per item`. Times
//! are seconds from the start of the operation.

use std::time::{Duration, Instant};

/// One batch of planned sends on a link: `(start, items, seconds per item)`.
pub type Batch = (f64, u64, f64);

/// Items of `batches` (in time order) whose planned transfer has ended `now`
/// seconds after the start, and when the next one ends (`None` when all have).
/// A batch with a cost per item of zero (or less) releases all its items at its
/// start.
///
/// Complexity: O(batches).
///
/// # Example
/// ```
/// use hetbal_mpi::pacing::released;
/// let batches = [(0.0, 3, 1.0), (5.0, 2, 0.5)];
/// assert_eq!(released(&batches, 0.5), (0, Some(1.0)));
/// assert_eq!(released(&batches, 2.2), (2, Some(3.0)));
/// assert_eq!(released(&batches, 4.0), (3, Some(5.5)));
/// assert_eq!(released(&batches, 6.0), (5, None));
/// assert_eq!(released(&[(1.0, 4, 0.0)], 1.0), (4, None));
/// ```
pub fn released(batches: &[Batch], now: f64) -> (u64, Option<f64>) {
    let mut released = 0u64;
    for &(start, items, cost) in batches {
        if items == 0 {
            continue;
        }
        let ended = if cost > 0.0 {
            if now < start + cost {
                0
            } else {
                (((now - start) / cost).floor() as u64).min(items)
            }
        } else if now >= start {
            items
        } else {
            0
        };
        released += ended;
        if ended < items {
            let next = if cost > 0.0 {
                start + (ended + 1) as f64 * cost
            } else {
                start
            };
            return (released, Some(next));
        }
    }
    (released, None)
}

/// Sleeps until `at` seconds after `started`, in slices of at most `slice`, calling
/// `progress` between them (for example an MPI probe, so that transfers with other
/// ranks keep moving while this rank waits).
pub(crate) fn sleep_until(started: Instant, at: f64, slice: Duration, mut progress: impl FnMut()) {
    loop {
        let left = at - started.elapsed().as_secs_f64();
        if left <= 0.0 {
            return;
        }
        std::thread::sleep(Duration::from_secs_f64(left).min(slice));
        progress();
    }
}
