//! Homogeneous bidirectional rings: one back-to-back block per link, provably at
//! Lemma 6 on every ring, tight loads included.
//!
//! # The construction
//! Take the circulation that centres the flows, `x = -floor((max S + min S) / 2)`,
//! so every `|f_i| <= ceil((max S - min S) / 2)`, and let `T` be Lemma 6's number of
//! steps, `max(max_i |delta_i|, ceil((max S - min S) / 2))`. Each link carries its
//! `|f_i|` items as one block of consecutive steps. With the flows fixed, a
//! processor is one of:
//! * a **source** (it only sends): its clockwise block runs in steps `1..=f_i`, its
//!   counter-clockwise block right after, ending by `|delta_i| <= T`;
//! * a **forwarder** (it receives on one side and sends on the other, in one
//!   direction): each port serves one link;
//! * a **sink** (it only receives): from one side, or from both.
//!
//! Every clockwise block starts at step 1. A counter-clockwise block starts at
//! step `b`: after its source's clockwise block; for a forwarder whose upstream
//! block starts at `b_up`, at `max(1, b_up - (l - 1))`; and the last block of a
//! chain, into a sink that also receives a clockwise block of `F` items, not before
//! `F + 1`.
//!
//! # Why it is valid and ends by step T
//! * **Availability.** A forwarder with load `l`, whose input block of `F` items
//!   starts at `b_up` and output block of `G` items at `a >= b_up - (l - 1)`, holds
//!   at the start of each output step t at least `l - (b_up - a) >= 1` items while
//!   its input flows (it started at most `l - 1` steps ahead and then receives one
//!   item per step as it sends one), and afterwards `l + F - (t - a) >= l + F - G + 1
//!   = target + 1 >= 1` (its net output `G - F` is `l - target`). Sources send their
//!   own surplus.
//! * **One port.** A source sends its two blocks one after the other; a sink with two
//!   inputs gets the clockwise block in steps `1..=F` and the other from `F + 1`;
//!   forwarders use one link per port.
//! * **Deadline.** Clockwise blocks end at `f_i <= T`. Along a counter-clockwise
//!   chain, by induction: the source's block ends at `delta_s <= T`; a forwarder
//!   with load `l` and target `t` sends `G = G_up + l - t` items, and when its block
//!   starts at `b_up - (l - 1) > 1` it ends at `b_up + G_up - t <= T` (at `G <= T`
//!   when it starts at step 1). A last block pushed to `F + 1` at a sink with two
//!   inputs ends at `F + G = |delta| <= T`.
//!
//! So Lemma 6, a lower bound on every schedule (each port handles `T` items one
//! per step at least somewhere, or a link carries `ceil(range / 2)` whichever way
//! the items go), is always met: the schedule is optimal. The tests check the
//! schedule against the independent validator and Lemma 6 on random rings of every
//! size and load, and against exhaustive search on tiny ones.

use crate::ring::{prefix_sums, RingInstance, RingKind};
use crate::ring::{Schedule, Transfer};

/// The block schedule of a homogeneous bidirectional ring: one transfer per link
/// that carries items, ending at Lemma 6 ([`crate::ring::homogeneous_bidirectional_bound`]) on every
/// ring (the module docs give the construction and the proof).
///
/// # Arguments
/// * `instance` - a bidirectional ring whose links all cost the same.
///
/// # Returns
/// The schedule, or `None` when the ring is unidirectional or heterogeneous.
///
/// # Complexity
/// O(n) time and memory: at most n transfers, whatever the number of items.
///
/// # Example
/// ```
/// use hetbal::ring::{block_schedule, homogeneous_bidirectional_bound, RingInstance};
/// use hetbal::validate;
/// // model.md's ring where the paper's Algorithm 3 sends an item P3 no longer holds.
/// let ring = RingInstance::bidirectional(&[1, 2, 3, 1], &[4, 1, 1, 1], &[1.0; 4], &[1.0; 4]).unwrap();
/// let schedule = block_schedule(&ring).unwrap();
/// assert!(validate(&ring, &schedule).is_ok());
/// assert_eq!(Some(schedule.makespan()), homogeneous_bidirectional_bound(&ring));
/// ```
pub fn block_schedule(instance: &RingInstance) -> Option<Schedule> {
    if instance.kind() != RingKind::Bidirectional || !instance.is_homogeneous() {
        return None;
    }
    let n = instance.len();
    let c = instance.c_succ()[0];
    let sums = prefix_sums(instance);
    let max = sums.iter().copied().max().unwrap_or(0);
    let min = sums.iter().copied().min().unwrap_or(0);
    let x = -(max + min).div_euclid(2);
    // f[i]: items on link (i, i+1), positive clockwise. Each |f| <= the total load.
    let f: Vec<i128> = sums.iter().map(|s| s + x).collect();
    let prev = |i: usize| (i + n - 1) % n;
    let items =
        |v: i128| u64::try_from(v.unsigned_abs()).expect("a flow is at most the total load");
    let block = |from: usize, to: usize, count: u64, first_step: u64| {
        Transfer::new(
            from,
            to,
            count,
            (first_step - 1) as f64 * c,
            (first_step - 1 + count) as f64 * c,
        )
    };
    let mut transfers = Vec::with_capacity(n);
    for (i, &flow) in f.iter().enumerate() {
        if flow > 0 {
            transfers.push(block(i, (i + 1) % n, items(flow), 1));
        }
    }
    // Counter-clockwise chains, each from its source (a processor sending to its
    // predecessor that receives nothing from its successor) down to its sink. The
    // centred flows have some f >= 0, so every chain has a source and an end.
    for source in 0..n {
        if f[prev(source)] >= 0 || f[source] < 0 {
            continue;
        }
        let mut sender = source;
        let mut first_step = 1 + items(f[source].max(0));
        loop {
            let receiver = prev(sender);
            let count = items(f[receiver]);
            if f[prev(receiver)] < 0 {
                // The receiver forwards: its block may start up to load - 1 steps
                // ahead of this one.
                transfers.push(block(sender, receiver, count, first_step));
                let lead = instance.loads()[receiver] - 1;
                first_step = first_step.saturating_sub(lead).max(1);
                sender = receiver;
            } else {
                // A sink: after its clockwise block, if any.
                let clockwise = items(f[prev(receiver)].max(0));
                transfers.push(block(
                    sender,
                    receiver,
                    count,
                    first_step.max(clockwise + 1),
                ));
                break;
            }
        }
    }
    Some(Schedule::new(transfers))
}
