//! Emulated links (`--emulate-links`): a sender releases each item no earlier than
//! the plan says its transfer ends, so that every link carries its items at the
//! plan's pace and heterogeneous links are reproduced on one machine.
//!
//! Planned sends are batches `(start, items, seconds per item)`: item j (from 1) of a
//! batch has crossed its link at `start + j * seconds per item`. Times are seconds
//! from the start of the operation. A [`Pacing`] holds the batches of every stream
//! of messages of an operation, as its `pacing_from_plan` builds them from the plan.
//!
//! A ring redistribution that follows its plan's transfers
//! ([`crate::Options::batches`], rings with start-ups) reads a batch that is one
//! message as a whole: the message leaves `items * seconds per item` (the plan's
//! duration, start-up included) after the transfer began, and it begins at
//! `max(start, when its items were all held, when the rank's previous send
//! ended)`; so a message is delivered no earlier than its link's start-up plus
//! its items' time after it is sent, even when it starts late. A train (a link
//! without start-up) leaves piece by piece, each piece when its last item has
//! crossed.

use std::time::{Duration, Instant};

/// One batch of planned sends on a link: `(start, items, seconds per item)`.
pub type Batch = (f64, u64, f64);

/// Emulated links for one operation ([`crate::Options::pacing`]): the planned
/// sends of every stream of messages, each a list of batches in time order,
/// identical on every rank. Which stream is which is the operation's:
/// - ring ([`crate::ring::pacing_from_plan`]): stream `2 i` holds processor i's
///   sends to its successor, stream `2 i + 1` its sends to its predecessor;
/// - scatter ([`crate::scatter::pacing_from_plan`]): stream k holds the root's
///   sends to rank k of the communicator ranked in the plan's order;
/// - GEN_BLOCK ([`crate::genblock::pacing_from_plan`]): stream s holds one batch
///   that every message of step s follows.
///
/// # Example
/// ```
/// use hetbal_mpi::Pacing;
/// let pacing = Pacing { streams: vec![vec![(0.0, 3, 1.0)], vec![]] };
/// assert_eq!(pacing.stream(0), &[(0.0, 3, 1.0)]);
/// assert!(pacing.stream(1).is_empty() && pacing.stream(7).is_empty());
/// ```
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Pacing {
    /// The batches of each stream, in time order.
    pub streams: Vec<Vec<Batch>>,
}

impl Pacing {
    /// The batches of stream `k` (none when the pacing has no such stream).
    ///
    /// Complexity: O(1).
    pub fn stream(&self, k: usize) -> &[Batch] {
        self.streams.get(k).map_or(&[], Vec::as_slice)
    }
}

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

/// When item `item` (from 0, counting over all `batches`, in time order) starts
/// to cross its emulated link: `start + item_in_batch × cost` of its batch;
/// `None` beyond the batches' items.
///
/// Complexity: O(batches).
///
/// # Example
/// ```
/// use hetbal_mpi::pacing::crossing_start;
/// let batches = [(0.0, 3, 1.0), (5.0, 2, 0.5)];
/// assert_eq!(crossing_start(&batches, 2), Some(2.0));
/// assert_eq!(crossing_start(&batches, 4), Some(5.5));
/// assert_eq!(crossing_start(&batches, 5), None);
/// ```
pub fn crossing_start(batches: &[Batch], item: u64) -> Option<f64> {
    let mut before = 0u64;
    for &(start, items, cost) in batches {
        if item < before + items {
            return Some(start + (item - before) as f64 * cost.max(0.0));
        }
        before += items;
    }
    None
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
