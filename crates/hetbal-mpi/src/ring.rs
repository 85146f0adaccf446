//! Ring redistributions over MPI.
//!
//! Every rank holds an ordered slice of items; the slices, rank after rank, form one
//! cyclic sequence. A plan's net flow on link (i, i+1) moves the boundary between
//! the two slices: a clockwise flow f sends the last f items before the boundary to
//! P_{i+1} (they go before its own items), a counterclockwise one the first items
//! after it to P_i (they go after its own). So the cyclic order is kept, and a
//! forwarder's items are the ones nearest the boundary it receives from: each link
//! streams its items starting at the boundary (clockwise links backwards, the others
//! forwards), so a processor sends its own items first and then forwards items in
//! the order they arrive.
//!
//! The transfer runs in rounds. In each round, every link still active carries a
//! header message each way it is used (items in the chunk, whether it is the link's
//! last, and how long the items waited for an emulated link when recording), then the chunk itself: up to one chunk of items, possibly none when a
//! forwarder waits for items. Nothing is staged elsewhere: the rank's items grow
//! in place (in capacity) to hold, in local order, what comes from the
//! predecessor, its own items, and what comes from the successor, so that every
//! chunk is sent straight from where it is (own items and items to forward are
//! contiguous) and received straight into its place. Receives and sends of a
//! round are nonblocking and complete together, so chunks are pipelined along the
//! ring and both directions run at once. The own items are read in place and
//! written only at the commit, which moves the new items, a contiguous range, to
//! the front.

use std::time::Instant;

use hetbal::ring::{RingInstance, RingPlan};
use mpi::point_to_point::{Destination, Source};
use mpi::traits::{Communicator, Equivalence};

use bytemuck::Pod;

use crate::arena::Arena;
use crate::checksum::range_sum;
use crate::pacing::{crossing_start, released, Batch, Pacing};
use crate::protocol::{agree_before_commit, sizes_match, spoil, Fault, LocalChecks};
use crate::timeline::{Direction, Message, Recorder};
use crate::{Options, RunError};

/// The net flow on every link (i, i+1): the library's, re-exported here where
/// the redistributions take it.
pub use hetbal::iterative::online::link_flows;

/// Tag of messages on clockwise links (P_i to P_{i+1}).
const TAG_CLOCKWISE: i32 = 17;
/// Tag of messages on counterclockwise links (P_{i+1} to P_i).
const TAG_COUNTERCLOCKWISE: i32 = 18;
/// What a rank did during a committed redistribution.
#[derive(Clone, Debug, PartialEq)]
pub struct RedistributionReport {
    /// Items this rank sent (own and forwarded).
    pub items_sent: u64,
    /// Items this rank received (kept and forwarded).
    pub items_received: u64,
    /// Rounds of messages.
    pub rounds: u64,
    /// Wall-clock seconds of the transfer and the checks, on this rank.
    pub seconds: f64,
    /// Wall-clock seconds of the transfer alone (until this rank's last message;
    /// the checksum is computed meanwhile, as items leave and arrive).
    pub transfer_seconds: f64,
    /// Every message this rank sent or received, when [`Options::record`] is on
    /// (else none), `MPI_Wtime` seconds: a message per link direction and
    /// round, from the start of its round (its header) to its completion; with
    /// emulated links, from when its items began to wait for their planned
    /// crossing (the receiver learns how long from the header).
    pub messages: Vec<Message>,
}

/// The planned sends of a ring plan, for [`Options::pacing`]: stream `2 i` holds
/// processor i's transfers to its successor, stream `2 i + 1` those to its
/// predecessor, each transfer a batch `(start, items, (end - start) / items)`,
/// times `scale` seconds per time unit. An item leaves once its planned transfer
/// has ended, so each link carries its items at the plan's pace and the
/// redistribution lasts about the plan's makespan, on one machine as on
/// heterogeneous links. On a ring of two processors, whose neighbours are one
/// processor, every transfer is a send to the successor (as in [`link_flows`]).
///
/// Complexity: O(n + transfers).
///
/// # Example
/// ```
/// use hetbal::ring::{plan, RingInstance};
/// use hetbal_mpi::ring::pacing_from_plan;
/// // P0 gives P2 two items through P1, at one time unit per item on every link.
/// let ring = RingInstance::unidirectional(&[3, 1, 1], &[1, 1, 3], &[1.0; 3]).unwrap();
/// let plan = plan(&ring, None).unwrap();
/// let pacing = pacing_from_plan(&ring, &plan, 0.5); // half a second per time unit
/// assert_eq!(pacing.stream(0), &[(0.0, 2, 0.5)]); // P0 to P1
/// assert_eq!(pacing.stream(2)[0].1, 2); // P1 forwards them to P2
/// assert!(pacing.stream(1).is_empty()); // P0 sends nothing to its predecessor
/// ```
pub fn pacing_from_plan(instance: &RingInstance, plan: &RingPlan, scale: f64) -> Pacing {
    let n = instance.len();
    let mut streams = vec![Vec::new(); 2 * n];
    for t in &plan.transfers {
        let batch = (
            t.start * scale,
            t.items,
            (t.end - t.start) / t.items as f64 * scale,
        );
        let to_pred = t.to != (t.from + 1) % n;
        streams[2 * t.from + usize::from(to_pred)].push(batch);
    }
    Pacing { streams }
}

/// One rank's part of a ring redistribution, in local positions: its own items are
/// 0..load, items from its predecessor are negative, from its successor >= load.
#[derive(Clone, Copy, Debug)]
struct Local {
    load: i128,
    /// Net flow on the incoming-side link (pred, me): > 0 the predecessor sends.
    f_in: i128,
    /// Net flow on the outgoing-side link (me, succ): > 0 I send to the successor.
    f_out: i128,
}

impl Local {
    fn items_to_succ(&self) -> u64 {
        self.f_out.max(0) as u64
    }
    fn items_from_succ(&self) -> u64 {
        (-self.f_out).max(0) as u64
    }
    fn items_to_pred(&self) -> u64 {
        (-self.f_in).max(0) as u64
    }
    fn items_from_pred(&self) -> u64 {
        self.f_in.max(0) as u64
    }
}

/// State of one direction of one link at this rank.
#[derive(Default)]
struct Stream {
    total: u64,
    done: u64,
    finished: bool,
}

impl Stream {
    fn new(total: u64) -> Self {
        Stream {
            total,
            done: 0,
            finished: total == 0,
        }
    }

    /// Sends this round's share of a direction: as many of the `held` items
    /// this rank can send now as remain to send, at most `chunk_items` and
    /// `cap` (the emulated link's released items). Returns how many, and
    /// whether the cap held some back. O(1).
    fn take(&mut self, held: i128, chunk_items: usize, cap: i128) -> (u64, bool) {
        let ready = held
            .min(i128::from(self.total - self.done))
            .min(chunk_items as i128);
        let k = ready.min(cap).max(0) as u64;
        self.done += k;
        self.finished = self.done == self.total;
        (k, i128::from(k) < ready)
    }
}

/// Moves the items of a ring plan between the ranks of `comm` (rank i is processor
/// i), checks them, and commits only if every rank's checks pass. Items are any
/// plain-old-data type ([`bytemuck::Pod`], for example `f64`, `[u8; 64]` or a
/// `#[derive(Pod, Zeroable)]` struct); [`redistribute_bytes`] takes raw bytes.
///
/// No second copy of the data: `items` grows in place (in capacity) to hold what
/// this rank receives beyond its own items, which stay intact until the commit,
/// and the commit moves the new items in place. A rank's memory is its items plus
/// those it receives: `max(load, target)` items when it only sends or only
/// receives. After the commit `items` keeps its capacity, so that the next
/// redistribution receives into memory already touched (`shrink_to_fit` gives
/// it back).
///
/// # Arguments
/// * `comm` - the communicator, one rank per processor;
/// * `loads` - every processor's load (items), identical on every rank;
/// * `flows` - the net flow on each link (i, i+1), positive clockwise
///   ([`link_flows`]), identical on every rank;
/// * `items` - this rank's items, `loads[rank]` of them, in order; replaced by its
///   new items on success, untouched on error;
/// * `options` - message size, fault injection ([`Fault`]: the rank's first
///   non-empty message is spoiled) and emulated links ([`pacing_from_plan`]).
///
/// # Returns
/// What this rank sent and received, in how many rounds and how long.
///
/// # Errors
/// [`RunError`] on every rank when any rank fails: wrong world size or load,
/// flows that would leave a processor a negative number of items
/// ([`RunError::InvalidPlan`], also for items of zero bytes), protocol errors,
/// counts or the global order-aware checksum wrong, or a rank reporting failure.
/// The items are then untouched.
///
/// # Example
/// ```no_run
/// use hetbal_mpi::ring::redistribute;
/// use hetbal_mpi::Options;
/// let universe = mpi::initialize().expect("MPI");
/// let world = universe.world(); // 2 ranks
/// # use mpi::traits::Communicator;
/// let (loads, back) = ([1000u64, 10], [10u64, 1000]);
/// let mut items = vec![1.5f64; loads[world.rank() as usize] as usize];
/// let options = Options::default();
/// for _ in 0..10 {
///     // 990 items to rank 1, then back: from the second round trip on, both
///     // ranks receive into memory already touched.
///     redistribute(&world, &loads, &[990, 0], &mut items, &options)?;
///     redistribute(&world, &back, &[0, 990], &mut items, &options)?;
/// }
/// # Ok::<(), hetbal_mpi::RunError>(())
/// ```
///
/// # Complexity
/// O(R) rounds for R = the largest number of chunks a link carries plus the
/// longest forwarding chain; O(items) local work; memory: the items held and
/// received.
pub fn redistribute<T: Pod, C: Communicator>(
    comm: &C,
    loads: &[u64],
    flows: &[i128],
    items: &mut Vec<T>,
    options: &Options,
) -> Result<RedistributionReport, RunError> {
    run(comm, loads, flows, 1, items, options)
}

/// [`redistribute`] for items given as bytes, `item_bytes` each (0 counts as 1):
/// `items` holds `loads[rank] * item_bytes` bytes.
///
/// # Errors
/// As [`redistribute`].
///
/// # Complexity
/// As [`redistribute`].
pub fn redistribute_bytes<C: Communicator>(
    comm: &C,
    loads: &[u64],
    flows: &[i128],
    item_bytes: usize,
    items: &mut Vec<u8>,
    options: &Options,
) -> Result<RedistributionReport, RunError> {
    run(comm, loads, flows, item_bytes.max(1), items, options)
}

/// A redistribution (see [`redistribute`]) of items of `item_len` elements each.
fn run<E: Pod, C: Communicator>(
    comm: &C,
    loads: &[u64],
    flows: &[i128],
    item_len: usize,
    items: &mut Vec<E>,
    options: &Options,
) -> Result<RedistributionReport, RunError> {
    let started = Instant::now();
    let n = loads.len();
    let rank = comm.rank() as usize;
    if comm.size() as usize != n || flows.len() != n {
        return Err(RunError::WorldSize {
            ranks: comm.size() as usize,
            processors: n,
        });
    }
    let item_bytes = item_len * std::mem::size_of::<E>();
    let expected = u128::from(loads[rank]) * item_bytes as u128;
    // Every rank agrees on the plan's and the loads' validity before anything moves.
    let negative = (0..n).find(|&i| {
        i128::from(loads[i])
            .checked_add(flows[(i + n - 1) % n])
            .and_then(|x| x.checked_sub(flows[i]))
            .map_or(true, |target| target < 0)
    });
    let local = Local {
        load: i128::from(loads[rank]),
        f_in: flows[(rank + n - 1) % n],
        f_out: flows[rank],
    };
    let (from_pred, from_succ) = (local.items_from_pred(), local.items_from_succ());
    let checked = match negative {
        Some(i) => Err(RunError::InvalidPlan {
            reason: format!("the flows leave processor {i} a negative number of items"),
        }),
        None => sizes_match(rank, items.len() * std::mem::size_of::<E>(), expected),
    };
    let mut arena = Arena::agreed(comm, checked, items, item_len, from_pred, from_succ)?;
    let succ = ((rank + 1) % n) as i32;
    let pred = ((rank + n - 1) % n) as i32;
    let chunk_items = options.chunk_items(item_bytes);
    let my_fault = options.fault_of(rank);

    let mut send_succ = Stream::new(local.items_to_succ());
    let mut send_pred = Stream::new(local.items_to_pred());
    let mut recv_pred = Stream::new(from_pred);
    let mut recv_succ = Stream::new(from_succ);
    let mut protocol: Option<String> = None;
    let mut fault_pending = my_fault.is_some_and(|f| f != Fault::FailBeforeCommit);
    let mut rounds = 0u64;
    let (mut sent, mut received) = (0u64, 0u64);
    let mut recorder = Recorder::new(options.record);
    // Recording with emulated links: since when the items of each stream out
    // (to the successor, to the predecessor) have waited for their planned
    // crossing (the link's emulated time).
    let mut waiting: [Option<f64>; 2] = [None, None];
    // The arena holds local positions -from_pred .. load + from_succ, in order:
    // position p at byte (p + fp) * b.
    let fp = from_pred as i128;
    let b = item_bytes as i128;
    let bytes = arena.bytes();
    // This rank's part of the order-aware checksum, computed while the items move:
    // each own item sent away as it leaves (while its message is in flight), each
    // received item this rank keeps as it arrives (see the checks below).
    let total: u128 = loads.iter().map(|&l| u128::from(l)).sum();
    let first: u128 = loads[..rank].iter().map(|&l| u128::from(l)).sum();
    let sum_at = |position: i128, bytes: &[u8]| {
        let global = (first as i128 + position).rem_euclid(total.max(1) as i128) as u128;
        range_sum(global, total, item_bytes, bytes)
    };
    let (keep_from, keep_to) = (-local.f_in, local.load - local.f_out); // new local range
    let (mut sent_away, mut received_kept) = (0u64, 0u64);

    while !(send_succ.finished && send_pred.finished && recv_pred.finished && recv_succ.finished) {
        rounds += 1;
        // This round's chunks: local positions [lo, hi) of what is held now (own
        // items and items received, contiguous), to the successor and to the
        // predecessor, sent from where they are.
        let mut out: [Option<(i128, i128, bool)>; 2] = [None, None]; // (lo, hi, last)
                                                                     // Emulated links: only the items whose planned transfer has ended.
        let now = started.elapsed().as_secs_f64();
        let mut next_release = f64::INFINITY;
        let mut paced = |batches: Option<&[Batch]>, done: u64| -> i128 {
            match batches {
                None => i128::MAX,
                Some(b) => {
                    let (ready, next) = released(b, now);
                    if let Some(t) = next {
                        next_release = next_release.min(t);
                    }
                    i128::from(ready.saturating_sub(done))
                }
            }
        };
        let pacing = options.pacing.as_ref();
        let cap_succ = paced(pacing.map(|p| p.stream(2 * rank)), send_succ.done);
        let cap_pred = paced(pacing.map(|p| p.stream(2 * rank + 1)), send_pred.done);
        // Items ready to leave that their emulated link is carrying (it has
        // started on the next one) but has not released yet, per side.
        let mut held = [false; 2];
        let carrying = |stream: usize, done: u64| {
            pacing
                .and_then(|p| crossing_start(p.stream(stream), done))
                .is_some_and(|t| t <= now)
        };
        if !send_succ.finished {
            // Clockwise: positions downwards from load - done; the predecessor's
            // items held so far are positions >= -received.
            let hi = local.load - i128::from(send_succ.done);
            let (k, capped) =
                send_succ.take(hi + i128::from(recv_pred.done), chunk_items, cap_succ);
            held[0] = capped && carrying(2 * rank, send_succ.done);
            sent += k;
            out[0] = Some((hi - i128::from(k), hi, send_succ.finished));
        }
        if !send_pred.finished {
            // Counterclockwise: positions upwards from done; the successor's items
            // held so far are positions < load + received.
            let lo = i128::from(send_pred.done);
            let (k, capped) = send_pred.take(
                local.load + i128::from(recv_succ.done) - lo,
                chunk_items,
                cap_pred,
            );
            held[1] = capped && carrying(2 * rank + 1, send_pred.done);
            sent += k;
            out[1] = Some((lo, lo + i128::from(k), send_pred.finished));
        }
        // Emulated links with nothing released yet: wait a little for the next item
        // (at most a millisecond, so that the neighbours' rounds keep going).
        if pacing.is_some()
            && out.iter().flatten().all(|&(lo, hi, _)| lo == hi)
            && next_release.is_finite()
        {
            let wait = (next_release - started.elapsed().as_secs_f64()).clamp(0.0, 1e-3);
            std::thread::sleep(std::time::Duration::from_secs_f64(wait));
        }
        let byte_range = |lo: i128, hi: i128| ((fp + lo) * b) as usize..((fp + hi) * b) as usize;
        // The round's messages start with their headers; each ends when it completes.
        let round_start = recorder.now();
        // When each message ended: sends as `out` (to the successor, to the
        // predecessor), receives as `incoming` (from the predecessor, from the
        // successor).
        let mut ended = [[round_start; 2]; 2];
        // A send starts when its emulated link began to carry its items (to the
        // round), else with its round; its header tells the receiver how long
        // they waited (clocks need not agree).
        let mut starts = [round_start; 2];
        for (side, chunk) in out.iter().enumerate() {
            if chunk.is_some_and(|(lo, hi, _)| lo < hi) {
                starts[side] = waiting[side].take().unwrap_or(round_start);
            }
            if held[side] {
                waiting[side].get_or_insert(round_start);
            }
        }
        // A faulty rank spoils its first non-empty message (a copy: the items stay).
        let mut fault_copy: Option<(usize, Vec<u8>)> = None; // (side, bytes)
        if fault_pending {
            let first = out
                .iter()
                .enumerate()
                .find_map(|(side, c)| c.filter(|&(lo, hi, _)| lo < hi).map(|c| (side, c)));
            if let Some((side, (lo, hi, _))) = first {
                let spoiled = spoil(
                    my_fault.unwrap_or(Fault::Corrupt),
                    &bytes[byte_range(lo, hi)],
                    item_bytes,
                );
                fault_copy = Some((side, spoiled));
                fault_pending = false;
            }
        }
        // Phase 1: headers (items, last, seconds the items waited for their
        // emulated link: 0 unless recording).
        let headers_out: Vec<[u64; 3]> = out
            .iter()
            .zip(starts)
            .map(|(c, start)| match c {
                Some((lo, hi, last)) => [
                    (hi - lo) as u64,
                    u64::from(*last),
                    (round_start - start).to_bits(),
                ],
                None => [0; 3],
            })
            .collect();
        let mut headers_in = [[0u64; 3]; 2]; // from pred, from succ
        let want = [!recv_pred.finished, !recv_succ.finished];
        mpi::request::scope(|scope| {
            let [from_pred, from_succ] = &mut headers_in;
            let mut requests = Vec::new();
            if want[0] {
                requests.push(comm.process_at_rank(pred).immediate_receive_into_with_tag(
                    scope,
                    &mut from_pred[..],
                    TAG_CLOCKWISE,
                ));
            }
            if want[1] {
                requests.push(comm.process_at_rank(succ).immediate_receive_into_with_tag(
                    scope,
                    &mut from_succ[..],
                    TAG_COUNTERCLOCKWISE,
                ));
            }
            if out[0].is_some() {
                requests.push(comm.process_at_rank(succ).immediate_send_with_tag(
                    scope,
                    &headers_out[0][..],
                    TAG_CLOCKWISE,
                ));
            }
            if out[1].is_some() {
                requests.push(comm.process_at_rank(pred).immediate_send_with_tag(
                    scope,
                    &headers_out[1][..],
                    TAG_COUNTERCLOCKWISE,
                ));
            }
            for r in requests {
                r.wait();
            }
        });
        // Check the headers: how many items come from each side.
        let mut incoming: [Option<u64>; 2] = [None, None];
        for (side, stream) in [(0usize, &mut recv_pred), (1usize, &mut recv_succ)] {
            if !want[side] {
                continue;
            }
            let [k, last, _] = headers_in[side];
            let left = stream.total - stream.done;
            let from = if side == 0 { pred } else { succ };
            if k > left || (last == 1) != (k == left) {
                protocol.get_or_insert(format!(
                    "from rank {from}: a header announces {k} items (last: {last}) on a link with {left} left"
                ));
            }
            let k = k.min(left).min(chunk_items as u64);
            incoming[side] = Some(k);
            stream.finished = last == 1 || k == left;
        }
        // Phase 2: the items, sent from where they are, received where they go:
        // the arena is [unfilled from pred | held | unfilled from succ].
        let (pred_unfilled, rest) =
            bytes.split_at_mut(((fp - i128::from(recv_pred.done)) * b) as usize);
        let held_len = (i128::from(recv_pred.done) + local.load + i128::from(recv_succ.done)) * b;
        let (held, succ_unfilled) = rest.split_at_mut(held_len as usize);
        let held_from = pred_unfilled.len(); // byte index of held[0] in the arena
        let mut got: [Option<(usize, usize)>; 2] = [None, None]; // (expected, received)
        mpi::request::scope(|scope| {
            let mut receives = Vec::new();
            // From the predecessor, positions -(done + k) .. -done: the tail of its
            // unfilled part; from the successor, the head of its unfilled part.
            let regions = [
                incoming[0].map(|k| {
                    let start = pred_unfilled.len() - k as usize * item_bytes;
                    (&mut pred_unfilled[start..], pred, TAG_CLOCKWISE)
                }),
                incoming[1].map(|k| {
                    let region = &mut succ_unfilled[..k as usize * item_bytes];
                    (region, succ, TAG_COUNTERCLOCKWISE)
                }),
            ];
            for (side, region) in regions.into_iter().enumerate() {
                let Some((region, from, tag)) = region else {
                    continue;
                };
                if !region.is_empty() {
                    let len = region.len();
                    let source = comm.process_at_rank(from);
                    let request = source.immediate_receive_into_with_tag(scope, region, tag);
                    receives.push((side, len, request));
                }
            }
            let mut sends = Vec::new();
            for (side, chunk) in out.iter().enumerate() {
                let Some((lo, hi, _)) = *chunk else { continue };
                if lo == hi {
                    continue;
                }
                let (to, tag) = if side == 0 {
                    (succ, TAG_CLOCKWISE)
                } else {
                    (pred, TAG_COUNTERCLOCKWISE)
                };
                let range = byte_range(lo, hi);
                let data: &[u8] = match &fault_copy {
                    Some((fs, spoiled)) if *fs == side => spoiled,
                    _ => &held[range.start - held_from..range.end - held_from],
                };
                sends.push((
                    side,
                    comm.process_at_rank(to)
                        .immediate_send_with_tag(scope, data, tag),
                ));
            }
            // While the messages fly: hash the own items leaving this rank.
            for &(lo, hi, _) in out.iter().flatten() {
                let (lo, hi) = (lo.max(0), hi.min(local.load));
                if lo < hi {
                    let range = byte_range(lo, hi);
                    let own = &held[range.start - held_from..range.end - held_from];
                    sent_away = sent_away.wrapping_add(sum_at(lo, own));
                }
            }
            for (side, expected, request) in receives {
                let status = request.wait();
                let bytes = status.count(u8::equivalent_datatype()).max(0) as usize;
                got[side] = Some((expected, bytes));
                ended[1][side] = recorder.now();
            }
            for (side, request) in sends {
                request.wait();
                ended[0][side] = recorder.now();
            }
        });
        let (pred_rank, succ_rank) = (pred as usize, succ as usize);
        for (side, (&chunk, to)) in out.iter().zip([succ_rank, pred_rank]).enumerate() {
            let items = chunk.map_or(0, |(lo, hi, _)| (hi - lo) as u64);
            let span = (starts[side], ended[0][side]);
            recorder.record(Direction::Send, Some(to), (items, 0), span);
        }
        for (side, (&k, from)) in incoming.iter().zip([pred_rank, succ_rank]).enumerate() {
            let waited = f64::from_bits(headers_in[side][2]);
            let waited = if waited.is_finite() {
                waited.max(0.0)
            } else {
                0.0
            };
            let span = (round_start - waited, ended[1][side]);
            recorder.record(Direction::Receive, Some(from), (k.unwrap_or(0), 0), span);
        }
        for (side, stream) in [(0usize, &mut recv_pred), (1usize, &mut recv_succ)] {
            let Some(k) = incoming[side] else {
                continue;
            };
            if let Some((expected, bytes)) = got[side].filter(|(e, b)| e != b) {
                let from = if side == 0 { pred } else { succ };
                protocol.get_or_insert(format!(
                    "from rank {from}: a message of {bytes} bytes where its header announced {expected}"
                ));
            }
            // Hash the items just received that this rank keeps (still in cache).
            let (done, k_items) = (i128::from(stream.done), i128::from(k));
            let (lo, hi) = if side == 0 {
                (-(done + k_items), -done)
            } else {
                (local.load + done, local.load + done + k_items)
            };
            let (lo, hi) = (lo.max(keep_from), hi.min(keep_to));
            if lo < hi {
                let region = if side == 0 {
                    &pred_unfilled[..]
                } else {
                    &succ_unfilled[..]
                };
                // Byte index of the region's start in the arena.
                let at = if side == 0 { 0 } else { held_from + held.len() };
                let range = byte_range(lo, hi);
                received_kept = received_kept
                    .wrapping_add(sum_at(lo, &region[range.start - at..range.end - at]));
            }
            stream.done += k;
            received += k;
        }
    }

    let transfer_seconds = started.elapsed().as_secs_f64();
    // Checks: counts, then the order-aware checksum of what this rank will hold
    // against what it held, summed over all ranks. The own items a rank keeps keep
    // their global positions, so their hashes cancel out of the difference: only
    // the own items sent away and the received items kept count, hashed as they
    // moved, which gives the same difference, bit for bit, as hashing everything
    // now (when the counts are right, every own item not kept was sent once, and
    // the received items kept were not written after their arrival).
    let counts_ok = protocol.is_none()
        && send_succ.done == local.items_to_succ()
        && send_pred.done == local.items_to_pred()
        && recv_pred.done == from_pred
        && recv_succ.done == from_succ;
    let delta = if counts_ok {
        received_kept.wrapping_sub(sent_away)
    } else {
        0
    };
    // On error the arena, dropped, puts the own items back.
    agree_before_commit(
        comm,
        LocalChecks {
            protocol,
            counts_ok,
            failing: my_fault == Some(Fault::FailBeforeCommit),
            delta,
        },
    )?;
    // Commit: the new items, local positions keep_from .. keep_to, move to the
    // front of the arena.
    arena.commit((fp + keep_from) as usize, (fp + keep_to) as usize);
    Ok(RedistributionReport {
        items_sent: sent,
        items_received: received,
        rounds,
        seconds: started.elapsed().as_secs_f64(),
        transfer_seconds,
        messages: recorder.finish(),
    })
}
