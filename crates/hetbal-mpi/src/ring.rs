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
//! last, items in its first piece), then the chunk itself: up to one chunk of items,
//! possibly none when a forwarder waits for items, sent straight from where they are
//! (the rank's own items, or the staging buffer of items to forward: at most two
//! pieces) and received straight into the staging buffer at their place. Receives
//! and sends of a round are nonblocking and complete together, so chunks are
//! pipelined along the ring and both directions run at once. Incoming items go to
//! staging buffers (what a rank receives, plus room for the commit); the caller's
//! items are read in place and changed only at the commit, where the buffer holding
//! the largest part of the new items becomes the rank's items (a move, not a copy)
//! and the smaller parts are copied around it. With a [`Workspace`]
//! ([`redistribute_with`]), staging buffers come from the memory earlier
//! redistributions left over (their other staging buffers, the rank's old items), so
//! a repeated redistribution receives into memory already touched.

use std::time::Instant;

use hetbal::ring::{RingInstance, RingPlan};
use mpi::point_to_point::{Destination, Source};
use mpi::traits::{Communicator, Equivalence};

use crate::checksum::range_sum;
use crate::pacing::{released, Batch, Pacing};
use crate::protocol::{
    agree_before_commit, agree_before_start, sizes_match, spoil, Fault, LocalChecks,
};
use crate::workspace::Workspace;
use crate::{Options, RunError};

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
}

/// The net flow on every link (i, i+1) of a ring, positive clockwise, from a plan's
/// flows (each from a processor to a neighbour).
///
/// Complexity: O(n + flows).
///
/// # Example
/// ```
/// use hetbal::ring::Flow;
/// use hetbal_mpi::ring::link_flows;
/// let flows = [Flow { from: 1, to: 0, items: 2 }, Flow { from: 1, to: 2, items: 1 }];
/// assert_eq!(link_flows(3, &flows), vec![-2, 1, 0]);
/// ```
pub fn link_flows(n: usize, flows: &[hetbal::ring::Flow]) -> Vec<i128> {
    let mut f = vec![0i128; n];
    for fl in flows {
        if fl.to == (fl.from + 1) % n {
            f[fl.from] += i128::from(fl.items);
        } else {
            f[fl.to] -= i128::from(fl.items);
        }
    }
    f
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

/// Where the bytes of a piece of a chunk are: byte ranges of the rank's own items or
/// of a staging buffer.
#[derive(Clone, Debug)]
enum Piece {
    Own(std::ops::Range<usize>),
    Pred(std::ops::Range<usize>),
    Succ(std::ops::Range<usize>),
}

impl Piece {
    fn len(&self) -> usize {
        match self {
            Piece::Own(r) | Piece::Pred(r) | Piece::Succ(r) => r.len(),
        }
    }

    fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// One round's message on one link: a header, then its pieces.
struct Chunk {
    items: u64,
    last: bool,
    pieces: Vec<Piece>,
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
}

/// Moves the items of a ring plan between the ranks of `comm` (rank i is processor
/// i), checks them, and commits only if every rank's checks pass.
///
/// # Arguments
/// * `comm` - the communicator, one rank per processor;
/// * `loads` - every processor's load (items), identical on every rank;
/// * `flows` - the net flow on each link (i, i+1), positive clockwise
///   ([`link_flows`]), identical on every rank;
/// * `item_bytes` - size of one item;
/// * `items` - this rank's items, `loads[rank] * item_bytes` bytes, in order;
///   replaced by its new items on success, untouched on error;
/// * `options` - message size, fault injection ([`Fault`]: the rank's first
///   non-empty message is spoiled) and emulated links ([`pacing_from_plan`]).
///
/// # Returns
/// What this rank sent and received, in how many rounds and how long.
///
/// # Errors
/// [`RunError`] on every rank when any rank fails: wrong world size or load,
/// flows that would leave a processor a negative number of items
/// ([`RunError::InvalidPlan`]), protocol errors, counts or the global
/// order-aware checksum wrong, or a rank reporting failure. The items are then
/// untouched.
///
/// # Complexity
/// O(R) rounds for R = the largest number of chunks a link carries plus the
/// longest forwarding chain; O(items) local work; memory: the items received.
/// Staging memory is allocated afresh (and faulted in on first touch): to
/// redistribute repeatedly, prefer [`redistribute_with`] and one [`Workspace`].
pub fn redistribute<C: Communicator>(
    comm: &C,
    loads: &[u64],
    flows: &[i128],
    item_bytes: usize,
    items: &mut Vec<u8>,
    options: &Options,
) -> Result<RedistributionReport, RunError> {
    run(
        comm,
        loads,
        flows,
        item_bytes,
        items,
        options,
        &mut Workspace::new(),
        false,
    )
}

/// [`redistribute`], taking its staging buffers from `workspace` and leaving there
/// the buffers the commit no longer needs (the other staging buffers, the rank's
/// old items when another buffer becomes its items). Redistributing repeatedly
/// with the same workspace (one per rank and data set), every redistribution after
/// the first ones receives into memory already touched instead of paying for
/// fresh pages. Same guarantees: on error the items are untouched (the staging
/// buffers go back to the workspace).
///
/// # Example
/// ```no_run
/// use hetbal_mpi::ring::redistribute_with;
/// use hetbal_mpi::Options;
/// use hetbal_mpi::workspace::Workspace;
/// let universe = mpi::initialize().expect("MPI");
/// let world = universe.world(); // 2 ranks
/// # use mpi::traits::Communicator;
/// let (loads, back) = ([1000u64, 10], [10u64, 1000]);
/// let mut items = vec![1u8; 64 * loads[world.rank() as usize] as usize];
/// let (options, mut workspace) = (Options::default(), Workspace::new());
/// for _ in 0..10 {
///     // 990 items to rank 1, then back: from the second round trip on, both
///     // ranks receive into buffers already touched.
///     let there = [990, 0];
///     redistribute_with(&world, &loads, &there, 64, &mut items, &options, &mut workspace)?;
///     let back_flows = [0, 990];
///     redistribute_with(&world, &back, &back_flows, 64, &mut items, &options, &mut workspace)?;
/// }
/// # Ok::<(), hetbal_mpi::RunError>(())
/// ```
///
/// # Errors
/// As [`redistribute`].
///
/// # Complexity
/// As [`redistribute`]; besides, the workspace keeps up to four buffers (see
/// [`Workspace`]).
pub fn redistribute_with<C: Communicator>(
    comm: &C,
    loads: &[u64],
    flows: &[i128],
    item_bytes: usize,
    items: &mut Vec<u8>,
    options: &Options,
    workspace: &mut Workspace,
) -> Result<RedistributionReport, RunError> {
    run(
        comm, loads, flows, item_bytes, items, options, workspace, true,
    )
}

/// A redistribution (see [`redistribute_with`]); `lasting`: the workspace outlives
/// it, so that a rank's old items are worth keeping there when most of them left
/// (otherwise they stay the caller's buffer, as without a workspace).
#[allow(clippy::too_many_arguments)]
fn run<C: Communicator>(
    comm: &C,
    loads: &[u64],
    flows: &[i128],
    item_bytes: usize,
    items: &mut Vec<u8>,
    options: &Options,
    workspace: &mut Workspace,
    lasting: bool,
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
    let item_bytes = item_bytes.max(1);
    let expected = u128::from(loads[rank]) * item_bytes as u128;
    // Every rank agrees on the plan's and the loads' validity before anything moves.
    let negative = (0..n).find(|&i| {
        i128::from(loads[i])
            .checked_add(flows[(i + n - 1) % n])
            .and_then(|x| x.checked_sub(flows[i]))
            .is_none_or(|target| target < 0)
    });
    let valid = match negative {
        Some(i) => Err(RunError::InvalidPlan {
            reason: format!("the flows leave processor {i} a negative number of items"),
        }),
        None => sizes_match(rank, items.len(), expected),
    };
    agree_before_start(comm, valid)?;
    let local = Local {
        load: i128::from(loads[rank]),
        f_in: flows[(rank + n - 1) % n],
        f_out: flows[rank],
    };
    let succ = ((rank + 1) % n) as i32;
    let pred = ((rank + n - 1) % n) as i32;
    let chunk_items = options.chunk_items(item_bytes);
    let my_fault = options.fault_of(rank);

    // Where the new items come from, and which buffer will become the rank's items.
    let layout = Layout::new(
        &local,
        item_bytes,
        bytes_of(local.items_from_pred(), item_bytes)?,
        bytes_of(local.items_from_succ(), item_bytes)?,
    );
    // Staging buffers: items from the predecessor (stored by local position -k at
    // index from_pred - k) and from the successor (position load + k at index
    // succ_at + k, after room for the rest of the new items when this buffer
    // becomes the rank's items); the base's buffer has room for the whole result.
    let (pred_room, succ_at) = match layout.base {
        Base::Pred => (layout.front.len() + layout.own.len() + layout.back.len(), 0),
        Base::Succ => (0, layout.front.len() + layout.own.len()),
        Base::Own => (0, 0),
    };
    let mut from_pred_buf = workspace.take(layout.pred_bytes, pred_room);
    let mut from_succ_buf = workspace.take(succ_at + layout.succ_bytes, 0);
    let mut send_succ = Stream::new(local.items_to_succ());
    let mut send_pred = Stream::new(local.items_to_pred());
    let mut recv_pred = Stream::new(local.items_from_pred());
    let mut recv_succ = Stream::new(local.items_from_succ());
    let mut protocol: Option<String> = None;
    let mut fault_pending = my_fault.is_some_and(|f| f != Fault::FailBeforeCommit);
    let mut rounds = 0u64;
    let (mut sent, mut received) = (0u64, 0u64);
    let fp = local.items_from_pred() as i128;
    let b = item_bytes as i128;
    let pred_bytes = from_pred_buf.len();
    let succ_staged = &mut from_succ_buf[succ_at..];
    // This rank's part of the order-aware checksum, computed while the items move:
    // each own item sent away as it leaves (while its message is in flight), each
    // received item this rank keeps as it arrives (see the checks below).
    let total: u128 = loads.iter().map(|&l| u128::from(l)).sum();
    let first: u128 = loads[..rank].iter().map(|&l| u128::from(l)).sum();
    let sum_at = |position: i128, bytes: &[u8]| {
        let global = (first as i128 + position).rem_euclid(total.max(1) as i128) as u128;
        range_sum(global, total, item_bytes, bytes)
    };
    let (keep_from, keep_to) = (layout.s, local.load - local.f_out); // new local range
    let (mut sent_away, mut received_kept) = (0u64, 0u64);

    while !(send_succ.finished && send_pred.finished && recv_pred.finished && recv_succ.finished) {
        rounds += 1;
        // This round's chunks, from what is held now, as pieces of the own items and
        // of the staging buffers (sent from there: no copy).
        let mut out: [Option<Chunk>; 2] = [None, None]; // to succ, to pred
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
        if !send_succ.finished {
            // Clockwise: positions downwards from load - done; the predecessor's
            // items held so far are positions >= -received.
            let hi = local.load - i128::from(send_succ.done);
            let k = (hi + i128::from(recv_pred.done))
                .min(i128::from(send_succ.total - send_succ.done))
                .min(chunk_items as i128)
                .min(cap_succ)
                .max(0) as u64;
            let lo = hi - i128::from(k);
            let mut pieces = Vec::with_capacity(2);
            if lo < hi.min(0) {
                let (x, y) = ((fp + lo) * b, (fp + hi.min(0)) * b);
                pieces.push(Piece::Pred(x as usize..y as usize));
            }
            if lo.max(0) < hi {
                pieces.push(Piece::Own((lo.max(0) * b) as usize..(hi * b) as usize));
            }
            send_succ.done += k;
            send_succ.finished = send_succ.done == send_succ.total;
            sent += k;
            out[0] = Some(Chunk {
                items: k,
                last: send_succ.finished,
                pieces,
            });
        }
        if !send_pred.finished {
            // Counterclockwise: positions upwards from done; the successor's items
            // held so far are positions < load + received.
            let lo = i128::from(send_pred.done);
            let k = (local.load + i128::from(recv_succ.done) - lo)
                .min(i128::from(send_pred.total - send_pred.done))
                .min(chunk_items as i128)
                .min(cap_pred)
                .max(0) as u64;
            let hi = lo + i128::from(k);
            let mut pieces = Vec::with_capacity(2);
            if lo < hi.min(local.load) {
                pieces.push(Piece::Own(
                    (lo * b) as usize..(hi.min(local.load) * b) as usize,
                ));
            }
            if lo.max(local.load) < hi {
                let (x, y) = ((lo.max(local.load) - local.load) * b, (hi - local.load) * b);
                pieces.push(Piece::Succ(x as usize..y as usize));
            }
            send_pred.done += k;
            send_pred.finished = send_pred.done == send_pred.total;
            sent += k;
            out[1] = Some(Chunk {
                items: k,
                last: send_pred.finished,
                pieces,
            });
        }
        // Emulated links with nothing released yet: wait a little for the next item
        // (at most a millisecond, so that the neighbours' rounds keep going).
        if pacing.is_some()
            && out.iter().flatten().all(|c| c.items == 0)
            && next_release.is_finite()
        {
            let wait = (next_release - started.elapsed().as_secs_f64()).clamp(0.0, 1e-3);
            std::thread::sleep(std::time::Duration::from_secs_f64(wait));
        }
        // A faulty rank spoils its first non-empty piece (a copy: the items stay).
        let mut fault_copy: Option<(usize, usize, Vec<u8>)> = None; // (side, piece, bytes)
        if fault_pending {
            let first = out.iter().enumerate().find_map(|(side, c)| {
                c.as_ref().and_then(|c| {
                    c.pieces
                        .iter()
                        .position(|p| !p.is_empty())
                        .map(|k| (side, k, c.pieces[k].clone()))
                })
            });
            if let Some((side, k, piece)) = first {
                let data = match &piece {
                    Piece::Own(r) => &items[r.clone()],
                    Piece::Pred(r) => &from_pred_buf[r.clone()],
                    Piece::Succ(r) => &succ_staged[r.clone()],
                };
                let spoiled = spoil(my_fault.unwrap_or(Fault::Corrupt), data, item_bytes);
                fault_copy = Some((side, k, spoiled));
                fault_pending = false;
            }
        }
        // Phase 1: headers (items, last, items in the first piece).
        let headers_out: Vec<[u64; 3]> = out
            .iter()
            .map(|c| match c {
                Some(c) => [
                    c.items,
                    u64::from(c.last),
                    c.pieces
                        .first()
                        .map_or(0, |p| (p.len() / item_bytes) as u64),
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
        // Check the headers; where to put the announced items.
        let mut incoming: [Option<(u64, u64)>; 2] = [None, None]; // (items, first piece)
        for (side, stream) in [(0usize, &mut recv_pred), (1usize, &mut recv_succ)] {
            if !want[side] {
                continue;
            }
            let [k, last, first] = headers_in[side];
            let left = stream.total - stream.done;
            let from = if side == 0 { pred } else { succ };
            if k > left || first > k || (last == 1) != (k == left) {
                protocol.get_or_insert(format!(
                    "from rank {from}: a header announces {k} items (last: {last}) on a link with {left} left"
                ));
            }
            let k = k.min(left).min(chunk_items as u64);
            incoming[side] = Some((k, first.min(k)));
            stream.finished = last == 1 || k == left;
        }
        // Phase 2: the items, sent from where they are, received where they go.
        let (pred_new, pred_held) = {
            let at = pred_bytes - recv_pred.done as usize * item_bytes;
            from_pred_buf.split_at_mut(at)
        };
        let (succ_held, succ_new) = succ_staged.split_at_mut(recv_succ.done as usize * item_bytes);
        let held_from = pred_new.len(); // byte index of pred_held[0] in from_pred_buf
        let mut got: [Vec<(usize, usize)>; 2] = [Vec::new(), Vec::new()]; // (expected, received)
        mpi::request::scope(|scope| {
            let mut receives = Vec::new();
            // From the predecessor, positions -(done + k) .. -done: the tail of the
            // unfilled part; from the successor, the head of its unfilled part.
            let regions = [
                incoming[0].map(|(k, first)| {
                    let start = pred_new.len() - k as usize * item_bytes;
                    (&mut pred_new[start..], first, pred, TAG_CLOCKWISE)
                }),
                incoming[1].map(|(k, first)| {
                    let region = &mut succ_new[..k as usize * item_bytes];
                    (region, first, succ, TAG_COUNTERCLOCKWISE)
                }),
            ];
            for (side, region) in regions.into_iter().enumerate() {
                let Some((region, first, from, tag)) = region else {
                    continue;
                };
                let (one, two) = region.split_at_mut(first as usize * item_bytes);
                for part in [one, two] {
                    if !part.is_empty() {
                        let len = part.len();
                        let source = comm.process_at_rank(from);
                        let request = source.immediate_receive_into_with_tag(scope, part, tag);
                        receives.push((side, len, request));
                    }
                }
            }
            let mut sends = Vec::new();
            for (side, chunk) in out.iter().enumerate() {
                let Some(chunk) = chunk else { continue };
                let (to, tag) = if side == 0 {
                    (succ, TAG_CLOCKWISE)
                } else {
                    (pred, TAG_COUNTERCLOCKWISE)
                };
                for (k, piece) in chunk.pieces.iter().enumerate() {
                    let data: &[u8] = match (&fault_copy, piece) {
                        (Some((fs, fk, spoiled)), _) if *fs == side && *fk == k => &spoiled[..],
                        (_, Piece::Own(r)) => &items[r.clone()],
                        (_, Piece::Pred(r)) => &pred_held[r.start - held_from..r.end - held_from],
                        (_, Piece::Succ(r)) => &succ_held[r.clone()],
                    };
                    sends.push(
                        comm.process_at_rank(to)
                            .immediate_send_with_tag(scope, data, tag),
                    );
                }
            }
            // While the messages fly: hash the own items leaving this rank.
            for piece in out.iter().flatten().flat_map(|c| &c.pieces) {
                if let Piece::Own(r) = piece {
                    let position = (r.start / item_bytes) as i128;
                    sent_away = sent_away.wrapping_add(sum_at(position, &items[r.clone()]));
                }
            }
            for (side, expected, request) in receives {
                let status = request.wait();
                let bytes = status.count(u8::equivalent_datatype()).max(0) as usize;
                got[side].push((expected, bytes));
            }
            for request in sends {
                request.wait();
            }
        });
        for (side, stream) in [(0usize, &mut recv_pred), (1usize, &mut recv_succ)] {
            let Some((k, _)) = incoming[side] else {
                continue;
            };
            if let Some(&(expected, bytes)) = got[side].iter().find(|(e, b)| e != b) {
                let from = if side == 0 { pred } else { succ };
                protocol.get_or_insert(format!(
                    "from rank {from}: a message of {bytes} bytes where its header announced {expected}"
                ));
            }
            // Hash the items just received that this rank keeps (still in cache).
            let (done, k_items) = (i128::from(stream.done), i128::from(k));
            if side == 0 {
                // Positions -(done + k) .. -done, at index fp + position.
                let lo = (-(done + k_items)).max(keep_from);
                let hi = (-done).min(keep_to.min(0));
                if lo < hi {
                    let bytes = &pred_new[((fp + lo) * b) as usize..((fp + hi) * b) as usize];
                    received_kept = received_kept.wrapping_add(sum_at(lo, bytes));
                }
            } else {
                // Positions load + done .. load + done + k, from succ_new's start.
                let start = local.load + done;
                let lo = start.max(keep_from);
                let hi = (start + k_items).min(keep_to);
                if lo < hi {
                    let bytes = &succ_new[((lo - start) * b) as usize..((hi - start) * b) as usize];
                    received_kept = received_kept.wrapping_add(sum_at(lo, bytes));
                }
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
        && recv_pred.done == local.items_from_pred()
        && recv_succ.done == local.items_from_succ();
    let Layout {
        front,
        own,
        back,
        base,
        ..
    } = layout;
    let delta = if counts_ok {
        received_kept.wrapping_sub(sent_away)
    } else {
        0
    };
    let agreed = agree_before_commit(
        comm,
        LocalChecks {
            protocol,
            counts_ok,
            failing: my_fault == Some(Fault::FailBeforeCommit),
            delta,
        },
    );
    if let Err(e) = agreed {
        workspace.recycle(from_pred_buf);
        workspace.recycle(from_succ_buf);
        return Err(e);
    }
    // Commit: the base's buffer becomes the rank's items, the rest is copied around
    // the base's part; buffers no longer needed go to the workspace.
    match base {
        Base::Pred => {
            // Mostly items from the predecessor: their staging buffer (with room for
            // the rest) becomes the rank's items, the rest is appended.
            let mut base = from_pred_buf;
            base.truncate(front.end);
            base.drain(..front.start);
            base.extend_from_slice(&items[own]);
            base.extend_from_slice(&from_succ_buf[back]);
            workspace.recycle(std::mem::replace(items, base));
            workspace.recycle(from_succ_buf);
        }
        Base::Succ => {
            // Mostly items from the successor: their staging buffer, received after
            // room for the predecessor's and own parts, becomes the rank's items
            // (when items before `back` were forwarded, the room is empty).
            let mut base = from_succ_buf;
            base.truncate(succ_at + back.end);
            base.drain(succ_at..succ_at + back.start);
            base[..front.len()].copy_from_slice(&from_pred_buf[front.clone()]);
            base[front.len()..succ_at].copy_from_slice(&items[own]);
            workspace.recycle(std::mem::replace(items, base));
            workspace.recycle(from_pred_buf);
        }
        Base::Own => {
            let new_len = front.len() + own.len() + back.len();
            let most_left = new_len.saturating_mul(4) <= items.len();
            if (lasting && most_left) || items.capacity() < new_len {
                // Most items left (or the buffer is too small): the new items go to a
                // buffer of their size, and the old one to the workspace, whole
                // (ready to receive without being written first).
                let mut base = workspace.take(0, new_len);
                base.extend_from_slice(&from_pred_buf[front]);
                base.extend_from_slice(&items[own]);
                base.extend_from_slice(&from_succ_buf[back]);
                workspace.recycle(std::mem::replace(items, base));
            } else {
                // Mostly own items: keep them in place, move them after the
                // predecessor's part and copy the received parts around them.
                items.truncate(own.end);
                items.drain(..own.start);
                if !front.is_empty() {
                    items.resize(front.len() + own.len(), 0);
                    items.copy_within(0..own.len(), front.len());
                    items[..front.len()].copy_from_slice(&from_pred_buf[front]);
                }
                items.extend_from_slice(&from_succ_buf[back]);
            }
            workspace.recycle(from_pred_buf);
            workspace.recycle(from_succ_buf);
        }
    }
    Ok(RedistributionReport {
        items_sent: sent,
        items_received: received,
        rounds,
        seconds: started.elapsed().as_secs_f64(),
        transfer_seconds,
    })
}

/// Which buffer becomes the rank's items at the commit: the one holding the
/// largest part of its new items.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Base {
    /// The predecessor's staging buffer.
    Pred,
    /// The rank's own items.
    Own,
    /// The successor's staging buffer.
    Succ,
}

/// Where a rank's new items (local positions `s .. e`, with `s = -f_in` and
/// `e = load - f_out`) come from, as byte ranges, and which buffer becomes its
/// items.
#[derive(Clone, Debug)]
struct Layout {
    /// Bytes received from the predecessor.
    pred_bytes: usize,
    /// Bytes received from the successor.
    succ_bytes: usize,
    /// Local position of the first new item.
    s: i128,
    /// The new items from the predecessor, in its staging buffer.
    front: std::ops::Range<usize>,
    /// The own items kept, in the rank's items.
    own: std::ops::Range<usize>,
    /// The new items from the successor, in its staging area.
    back: std::ops::Range<usize>,
    /// The buffer that becomes the rank's items.
    base: Base,
}

impl Layout {
    /// The layout of `local`'s new items (its target is not negative).
    fn new(local: &Local, item_bytes: usize, pred_bytes: usize, succ_bytes: usize) -> Self {
        let b = item_bytes as i128;
        let bytes = |k: i128| (k * b) as usize;
        let fp = local.items_from_pred() as i128;
        let (s, e) = (-local.f_in, local.load - local.f_out);
        let front = if s < 0 {
            bytes(fp + s)..bytes(fp + e.min(0))
        } else {
            0..0
        };
        let own = bytes(s.clamp(0, local.load))..bytes(e.clamp(0, local.load));
        let back = if e > local.load {
            bytes(s.max(local.load) - local.load)..bytes(e - local.load)
        } else {
            0..0
        };
        let (f, o, k) = (front.len(), own.len(), back.len());
        let base = if f > o && f >= k {
            Base::Pred
        } else if k > o {
            Base::Succ
        } else {
            Base::Own
        };
        Layout {
            pred_bytes,
            succ_bytes,
            s,
            front,
            own,
            back,
            base,
        }
    }
}

/// Bytes of `items` items, refusing sizes that do not fit in memory.
fn bytes_of(items: u64, item_bytes: usize) -> Result<usize, RunError> {
    usize::try_from(items)
        .ok()
        .and_then(|k| k.checked_mul(item_bytes))
        .ok_or_else(|| RunError::Protocol {
            rank: 0,
            reason: format!("{items} items of {item_bytes} bytes do not fit in memory"),
        })
}
