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

pub use hetbal::pacing::{crossing_start, released, Batch, Pacing};

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
