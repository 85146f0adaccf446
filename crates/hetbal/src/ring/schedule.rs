//! Timed schedules of item transfers on a ring.
//!
//! A [`Schedule`] is a list of [`Transfer`]s: batches of items sent back to back
//! over one ring link. Every ring planner produces a schedule, and every schedule,
//! whoever made it, is checked by the same function,
//! [`validate`](crate::ring::validate), which shares no code with any planner.

use serde::{Deserialize, Serialize};

/// `items` identical items sent from processor `from` to processor `to`, the first
/// starting at `start`, the last arriving at `end`.
///
/// Back to back (`period` is `None`, the papers' model): the k-th item (k =
/// 1..=items) is sent during `[start + (k-1)*cost, start + k*cost)` and is held by
/// `to` from `start + k*cost`; `end = start + items * cost`.
///
/// Paced (`period` is `Some(p)`, `p >= cost`, on a link without start-up): the k-th
/// item is sent during `[start + (k-1)*p, start + (k-1)*p + cost)`, so that
/// `end = start + (items-1)*p + cost`. It is the same as `items` transfers of one
/// item, `p` apart, written once: what a link does when it forwards items as they
/// trickle in from a slower one (the papers' Algorithm 2). It keeps its link's
/// ports from `start` to `end`.
///
/// On a link with a start-up `l` a transfer is one message: `end = start + l +
/// items * cost`, and it has no period.
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
    /// Seconds between the starts of consecutive items of a paced train; `None`
    /// (absent in JSON) for items back to back, or a message.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub period: Option<f64>,
}

impl Transfer {
    /// `items` items back to back (or one message) from `from` to `to` over
    /// `[start, end]`.
    ///
    /// # Example
    /// ```
    /// use hetbal::Transfer;
    /// let t = Transfer::new(0, 1, 2, 0.0, 4.0);
    /// assert_eq!((t.items, t.end, t.period), (2, 4.0, None));
    /// ```
    pub fn new(from: usize, to: usize, items: u64, start: f64, end: f64) -> Self {
        Transfer {
            from,
            to,
            items,
            start,
            end,
            period: None,
        }
    }

    /// When item `k` (0-based) of the transfer starts, on a link of item cost `cost`:
    /// `start + k * period` for a paced train, `start + k * cost` back to back.
    ///
    /// # Example
    /// ```
    /// use hetbal::Transfer;
    /// let paced = Transfer { period: Some(3.0), ..Transfer::new(0, 1, 3, 1.0, 8.0) };
    /// assert_eq!(paced.item_start(2, 1.0), 7.0);
    /// ```
    pub fn item_start(&self, k: u64, cost: f64) -> f64 {
        self.start + k as f64 * self.period.unwrap_or(cost)
    }

    /// The time one item of the transfer takes on its link: what a paced train's
    /// `end` adds to its last item's start, `(end - start) / items` back to back
    /// (a message's start-up shared among its items).
    ///
    /// # Example
    /// ```
    /// use hetbal::Transfer;
    /// let paced = Transfer { period: Some(3.0), ..Transfer::new(0, 1, 3, 1.0, 8.0) };
    /// assert_eq!(paced.item_time(), 1.0);
    /// assert_eq!(Transfer::new(0, 1, 2, 0.0, 4.0).item_time(), 2.0);
    /// ```
    pub fn item_time(&self) -> f64 {
        match self.period {
            Some(p) => self.end - (self.start + (self.items - 1) as f64 * p),
            None => (self.end - self.start) / self.items as f64,
        }
    }
}

/// Schedules of at least this many transfers are sorted on two threads.
const PARALLEL_SORT: usize = 200_000;

/// The order of a schedule's transfers: by start, then sender (the order of
/// formats.md), then receiver, end, items and period, so that the order does
/// not depend on the input's.
fn order(a: &Transfer, b: &Transfer) -> std::cmp::Ordering {
    a.start
        .total_cmp(&b.start)
        .then(a.from.cmp(&b.from))
        .then(a.to.cmp(&b.to))
        .then(a.end.total_cmp(&b.end))
        .then(a.items.cmp(&b.items))
        .then(a.period.unwrap_or(0.0).total_cmp(&b.period.unwrap_or(0.0)))
}

/// A timed schedule: the transfers of a redistribution, sorted by start time, then
/// by sender.
///
/// # Example
/// ```
/// use hetbal::{Schedule, Transfer};
/// let schedule = Schedule::new(vec![
///     Transfer::new(1, 2, 1, 2.0, 3.0),
///     Transfer::new(0, 1, 2, 0.0, 2.0),
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
    /// Complexity: O(m log m) for m transfers, in place; from
    /// 200,000 transfers on two threads (the transfers split at their median,
    /// each half sorted on its own).
    pub fn new(mut transfers: Vec<Transfer>) -> Self {
        // (Asking the machine for its threads costs microseconds: only when
        // they would be used.)
        let two = || std::thread::available_parallelism().is_ok_and(|t| t.get() >= 2);
        if transfers.len() >= PARALLEL_SORT && two() {
            let middle = transfers.len() / 2;
            transfers.select_nth_unstable_by(middle, order);
            let (low, high) = transfers.split_at_mut(middle);
            std::thread::scope(|scope| {
                scope.spawn(|| low.sort_unstable_by(order));
                high.sort_unstable_by(order);
            });
        } else {
            transfers.sort_unstable_by(order);
        }
        Schedule { transfers }
    }

    /// The same schedule with its transfers sorted as [`Schedule::new`]
    /// sorts them (those of a schedule made otherwise may be in any order).
    ///
    /// Complexity: O(m) when they are sorted already, else as
    /// [`Schedule::new`].
    pub(crate) fn sorted(self) -> Self {
        if self.transfers.is_sorted_by(|a, b| order(a, b).is_le()) {
            self
        } else {
            Schedule::new(self.transfers)
        }
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::random::SplitMix64;

    /// Large schedules, sorted on two threads, come out in the order of one
    /// sort: many equal starts, senders and ends, and paced trains.
    #[test]
    fn the_two_thread_sort_is_the_one_thread_order() {
        let mut rng = SplitMix64::new(11);
        let transfers: Vec<Transfer> = (0..PARALLEL_SORT + 50_001)
            .map(|_| {
                let start = (rng.next_u64() % 5_000) as f64 * 0.5;
                let items = 1 + rng.next_u64() % 3;
                let mut t = Transfer::new(
                    (rng.next_u64() % 40) as usize,
                    (rng.next_u64() % 40) as usize,
                    items,
                    start,
                    start + (1 + rng.next_u64() % 4) as f64,
                );
                if rng.next_u64() % 5 == 0 {
                    t.period = Some(1.0 + (rng.next_u64() % 3) as f64);
                }
                t
            })
            .collect();
        let mut expected = transfers.clone();
        expected.sort_by(|a, b| {
            let key = |t: &Transfer| (t.from, t.to);
            a.start
                .total_cmp(&b.start)
                .then(key(a).cmp(&key(b)))
                .then(a.end.total_cmp(&b.end))
                .then(a.items.cmp(&b.items))
                .then(a.period.unwrap_or(0.0).total_cmp(&b.period.unwrap_or(0.0)))
        });
        assert_eq!(Schedule::new(transfers).transfers, expected);
    }
}
