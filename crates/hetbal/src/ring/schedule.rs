//! Timed schedules of item transfers on a ring.
//!
//! A [`Schedule`] is a list of [`Transfer`]s: batches of items sent back to back
//! over one ring link. Every ring planner produces a schedule, and every schedule,
//! whoever made it, is checked by the same function,
//! [`validate`](crate::ring::validate), which shares no code with any planner.

use serde::{Deserialize, Serialize};

/// `items` identical items sent back to back from processor `from` to processor `to`,
/// the first starting at `start`, the last ending at `end = start + items * cost`.
///
/// The k-th item (k = 1..=items) is sent during
/// `[start + (k-1)*cost, start + k*cost)` and is held by `to` from `start + k*cost`.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Transfer {
    /// Index of the sending processor.
    pub from: usize,
    /// Index of the receiving processor (a ring neighbour of `from`).
    pub to: usize,
    /// Number of items in the batch (at least 1).
    pub items: u64,
    /// Time at which the first item starts (seconds).
    pub start: f64,
    /// Time at which the last item has arrived (seconds).
    pub end: f64,
}

/// A timed schedule: the transfers of a redistribution, sorted by start time, then
/// by sender.
///
/// # Example
/// ```
/// use hetbal::{Schedule, Transfer};
/// let schedule = Schedule::new(vec![
///     Transfer { from: 1, to: 2, items: 1, start: 2.0, end: 3.0 },
///     Transfer { from: 0, to: 1, items: 2, start: 0.0, end: 2.0 },
/// ]);
/// assert_eq!(schedule.transfers[0].from, 0); // sorted by start
/// assert_eq!(schedule.makespan(), 3.0);
/// ```
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Schedule {
    /// The transfers, sorted by `start`, then `from`.
    pub transfers: Vec<Transfer>,
}

impl Schedule {
    /// Builds a schedule from transfers in any order and sorts them by start, then
    /// sender (the order of formats.md; then receiver, end and items, so that the
    /// order does not depend on the input's).
    ///
    /// Complexity: O(m log m) for m transfers, in place.
    pub fn new(mut transfers: Vec<Transfer>) -> Self {
        transfers.sort_unstable_by(|a, b| {
            a.start
                .total_cmp(&b.start)
                .then(a.from.cmp(&b.from))
                .then(a.to.cmp(&b.to))
                .then(a.end.total_cmp(&b.end))
                .then(a.items.cmp(&b.items))
        });
        Schedule { transfers }
    }

    /// Time at which the last transfer ends (0 for an empty schedule).
    ///
    /// Complexity: O(m).
    pub fn makespan(&self) -> f64 {
        self.transfers.iter().map(|t| t.end).fold(0.0, f64::max)
    }

    /// Total number of items sent, over all transfers (u128: cannot overflow).
    pub fn items_sent(&self) -> u128 {
        self.transfers.iter().map(|t| u128::from(t.items)).sum()
    }
}
