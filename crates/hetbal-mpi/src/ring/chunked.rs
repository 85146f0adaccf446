//! Ring redistributions in chunks (see the parent module's docs): rounds of
//! headers and room messages ([`exchange_headers`], [`read_headers`]), then up
//! to one chunk of items each way per link, own items sent from where they
//! are, items kept received into their place in the arena, items passed on
//! held in chunks of their own ([`Stage`]) under flow control
//! ([`FlowControl`]); then the checks and the commit.

use std::collections::VecDeque;
use std::mem::size_of;
use std::time::Instant;

use bytemuck::Pod;
use mpi::point_to_point::{Destination, Source};
use mpi::topology::SimpleCommunicator;
use mpi::traits::{Communicator, Equivalence};

use super::{
    agree_to_commit, start_checks, Job, Local, Positions, RedistributionReport, TAG_CLOCKWISE,
    TAG_COUNTERCLOCKWISE,
};
use crate::arena::Arena;
use crate::checksum::Checksum;
use crate::pacing::{crossing_start, released, Pacing};
use crate::protocol::{spoil, Fault};
use crate::timeline::{Direction, Recorder};
use crate::RunError;

/// Tag of the room messages for clockwise items passed on (from P_{i+1} to P_i:
/// how many of P_i's items it has passed on).
const TAG_ROOM_CLOCKWISE: i32 = 19;
/// Tag of the room messages for counterclockwise items passed on (from P_i to
/// P_{i+1}).
const TAG_ROOM_COUNTERCLOCKWISE: i32 = 20;

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

/// Chunks of items to pass on that a rank holds at most: its neighbour sends
/// it such items only while it has room for them (it learns how many the rank
/// has passed on from a small message each round), so that a forwarding rank's
/// memory is its own items, those it keeps and a few chunks.
const STAGED_CHUNKS: u64 = 4;

/// Items being passed on, positions `lo .. hi` (a received chunk), held from
/// their arrival until they have all left.
struct Staged {
    lo: i128,
    hi: i128,
    bytes: Vec<u8>,
}

/// The chunks of items being passed on in one direction, in arrival order,
/// and the buffers of chunks gone (reused for the next ones).
#[derive(Default)]
struct Stage {
    chunks: VecDeque<Staged>,
    spare: Vec<Vec<u8>>,
}

impl Stage {
    /// A buffer of `len` bytes for a chunk about to arrive.
    fn buffer(&mut self, len: usize) -> Vec<u8> {
        let mut bytes = self.spare.pop().unwrap_or_default();
        bytes.resize(len, 0);
        bytes
    }

    /// Items of the chunk that leaves first, from position `from` on, towards
    /// `lo` (`downwards`, clockwise) or `hi`: none when no chunk is held.
    fn ready_from(&self, from: i128, downwards: bool) -> i128 {
        self.chunks
            .front()
            .map_or(0, |c| if downwards { from - c.lo } else { c.hi - from })
    }

    /// Drops the chunks whose items have all left: clockwise (`downwards`) the
    /// next item to leave is `next - 1`, else `next`.
    fn release(&mut self, next: i128, downwards: bool) {
        while let Some(c) = self.chunks.front() {
            let gone = if downwards {
                next <= c.lo
            } else {
                next >= c.hi
            };
            if !gone {
                break;
            }
            let c = self.chunks.pop_front().expect("a chunk");
            self.spare.push(c.bytes);
        }
    }
}

/// The bytes of the items at positions `lo .. hi` that leave this round: own
/// items (positions `0 .. own.len() / item_bytes`) where they are, items passed on
/// from the chunk of `stage` that leaves first.
fn chunk_bytes<'a>(
    own: &'a [u8],
    stage: &'a Stage,
    (lo, hi): (i128, i128),
    item_bytes: usize,
) -> &'a [u8] {
    let b = item_bytes as i128;
    if lo >= 0 && hi * b <= own.len() as i128 {
        return &own[(lo * b) as usize..(hi * b) as usize];
    }
    match stage.chunks.front() {
        Some(c) if c.lo <= lo && hi <= c.hi => {
            &c.bytes[((lo - c.lo) * b) as usize..((hi - c.lo) * b) as usize]
        }
        _ => &[],
    }
}

/// Flow control of the items passed on (see [`STAGED_CHUNKS`]), per direction
/// (0: clockwise, 1: counterclockwise): a rank sends its neighbour items that
/// neighbour passes on only while the neighbour has room for them, which it
/// learns from a small message each round.
struct FlowControl {
    /// Items this rank passes on: from its predecessor to its successor, and
    /// from its successor to its predecessor (the first ones it receives).
    forwards: [u64; 2],
    /// Of the items this rank sends its successor (predecessor), how many
    /// that neighbour passes on.
    neighbour_forwards: [u64; 2],
    /// Whether the room limit holds in a direction: not when every rank
    /// passes items on that way (a circulation no planner makes), where
    /// waiting for room could go round the ring for ever.
    bounded: [bool; 2],
    /// Items a neighbour may hold beyond those it has passed on.
    room: u64,
    /// How many items the successor (predecessor) has passed on, as last
    /// heard.
    neighbour_passed_on: [u64; 2],
}

impl FlowControl {
    /// The flow control of `rank` on a ring of `loads` and `flows`, chunks of
    /// `chunk_items` items. O(n).
    fn of(loads: &[u64], flows: &[i128], rank: usize, chunk_items: usize) -> FlowControl {
        let n = loads.len();
        let local = |i: usize| Local::of(loads, flows, i);
        FlowControl {
            forwards: [
                local(rank).forwards_clockwise(),
                local(rank).forwards_counterclockwise(),
            ],
            neighbour_forwards: [
                local((rank + 1) % n).forwards_clockwise(),
                local((rank + n - 1) % n).forwards_counterclockwise(),
            ],
            bounded: [
                !(0..n).all(|i| local(i).forwards_clockwise() > 0),
                !(0..n).all(|i| local(i).forwards_counterclockwise() > 0),
            ],
            room: STAGED_CHUNKS * chunk_items as u64,
            neighbour_passed_on: [0; 2],
        }
    }

    /// Whether this rank tells its predecessor (successor) how many items it
    /// has passed on, having `received` items from it: while it receives
    /// items it passes on.
    fn give_room(&self, received: [u64; 2]) -> [bool; 2] {
        [0, 1].map(|side| self.bounded[side] && received[side] < self.forwards[side])
    }

    /// Whether this rank hears from its successor (predecessor) how many items
    /// it has passed on, having `sent` items to it: while it sends items that
    /// neighbour passes on.
    fn take_room(&self, sent: [u64; 2]) -> [bool; 2] {
        [0, 1].map(|side| self.bounded[side] && sent[side] < self.neighbour_forwards[side])
    }

    /// How many of `ready` items this rank may send on `side` having sent
    /// `done`: never across the line between items the neighbour passes on and
    /// items it keeps, and within the neighbour's room.
    fn limit(&self, side: usize, done: u64, ready: i128) -> i128 {
        let mut ready = ready;
        if done < self.neighbour_forwards[side] {
            ready = ready.min(i128::from(self.neighbour_forwards[side] - done));
            if self.bounded[side] {
                let allowed = i128::from(self.neighbour_passed_on[side]) + i128::from(self.room);
                ready = ready.min(allowed - i128::from(done));
            }
        }
        ready
    }

    /// The neighbour on `side` says it has passed on `passed_on` items.
    fn heard(&mut self, side: usize, passed_on: u64) {
        self.neighbour_passed_on[side] = self.neighbour_passed_on[side].max(passed_on);
    }
}

/// The small messages of a round, before the items: which headers this rank
/// expects, sends, and which room messages it expects and sends.
struct Headers {
    /// Expect a header from the predecessor (successor).
    want: [bool; 2],
    /// Expect a room message from the successor (predecessor).
    take_room: [bool; 2],
    /// The headers to the successor (predecessor): items, last (0 or 1), the
    /// bits of the seconds the items waited for their emulated link.
    out: [Option<[u64; 3]>; 2],
    /// Send a room message to the predecessor (successor).
    give_room: [bool; 2],
    /// The items passed on so far that the room messages say: clockwise (to
    /// the predecessor), counterclockwise (to the successor).
    passed_on: [u64; 2],
}

/// Phase 1 of a round: the headers and room messages of [`Headers`], with the
/// neighbours `(pred, succ)`, nonblocking, completed together. Returns the
/// headers received (from the predecessor, from the successor; zeros where
/// none was expected) and the room messages (from the successor, from the
/// predecessor).
fn exchange_headers(
    comm: &SimpleCommunicator,
    (pred, succ): (i32, i32),
    h: Headers,
) -> ([[u64; 3]; 2], [u64; 2]) {
    let mut headers_in = [[0u64; 3]; 2];
    let mut room_in = [[0u64; 1]; 2];
    let passed_on = h.passed_on.map(|p| [p]);
    let out = h.out.map(|o| o.unwrap_or_default());
    mpi::request::scope(|scope| {
        let [from_pred, from_succ] = &mut headers_in;
        let [room_succ, room_pred] = &mut room_in;
        let (to_pred, to_succ) = (comm.process_at_rank(pred), comm.process_at_rank(succ));
        let mut requests = Vec::new();
        if h.want[0] {
            requests.push(to_pred.immediate_receive_into_with_tag(
                scope,
                &mut from_pred[..],
                TAG_CLOCKWISE,
            ));
        }
        if h.want[1] {
            requests.push(to_succ.immediate_receive_into_with_tag(
                scope,
                &mut from_succ[..],
                TAG_COUNTERCLOCKWISE,
            ));
        }
        if h.take_room[0] {
            requests.push(to_succ.immediate_receive_into_with_tag(
                scope,
                &mut room_succ[..],
                TAG_ROOM_CLOCKWISE,
            ));
        }
        if h.take_room[1] {
            requests.push(to_pred.immediate_receive_into_with_tag(
                scope,
                &mut room_pred[..],
                TAG_ROOM_COUNTERCLOCKWISE,
            ));
        }
        if h.out[0].is_some() {
            requests.push(to_succ.immediate_send_with_tag(scope, &out[0][..], TAG_CLOCKWISE));
        }
        if h.out[1].is_some() {
            requests.push(to_pred.immediate_send_with_tag(
                scope,
                &out[1][..],
                TAG_COUNTERCLOCKWISE,
            ));
        }
        if h.give_room[0] {
            requests.push(to_pred.immediate_send_with_tag(
                scope,
                &passed_on[0][..],
                TAG_ROOM_CLOCKWISE,
            ));
        }
        if h.give_room[1] {
            requests.push(to_succ.immediate_send_with_tag(
                scope,
                &passed_on[1][..],
                TAG_ROOM_COUNTERCLOCKWISE,
            ));
        }
        for r in requests {
            r.wait();
        }
    });
    (headers_in, room_in.map(|[r]| r))
}

/// Checks the headers received (`want`: from the predecessor, from the
/// successor) against the streams they announce items on: how many items come
/// from each side (at most `chunk_items`), a last header only with the last
/// items, and never a chunk mixing items to pass on (the first `forwards` of
/// a side) with items to keep. Records the first problem in `protocol` and
/// marks the streams finished. Returns the items coming from each side.
fn read_headers(
    headers_in: &[[u64; 3]; 2],
    want: [bool; 2],
    streams: [&mut Stream; 2],
    forwards: [u64; 2],
    chunk_items: usize,
    (pred, succ): (i32, i32),
    protocol: &mut Option<String>,
) -> [Option<u64>; 2] {
    let mut incoming = [None, None];
    for (side, stream) in streams.into_iter().enumerate() {
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
        if stream.done < forwards[side] && stream.done + k > forwards[side] {
            protocol.get_or_insert(format!(
                "from rank {from}: a chunk of {k} items mixes items to pass on and items to keep"
            ));
        }
        incoming[side] = Some(k);
        stream.finished = last == 1 || k == left;
    }
    incoming
}

/// The chunks a rank sends in a round: local positions `[lo, hi)` and whether
/// they are the link's last, to the successor and to the predecessor (`None`
/// once that stream is finished); whether an emulated link holds back items
/// ready to leave that it is already carrying, per side; and when the next
/// item of an emulated link is released.
struct Chosen {
    out: [Option<(i128, i128, bool)>; 2],
    held: [bool; 2],
    next_release: f64,
}

/// Chooses this round's chunks ([`Chosen`]) from the streams to the successor
/// and the predecessor (`sends`, advanced by what is chosen): own items first
/// (clockwise downwards from the load, counterclockwise upwards from 0), then
/// the chunks passed on (`stages`), within the flow control and at most
/// `chunk_items` a side; with emulated links (`pacing` of `rank`, at time
/// `now` since the start) only the items whose planned transfer has ended.
fn choose_chunks(
    local: &Local,
    sends: [&mut Stream; 2],
    stages: &[Stage; 2],
    flow: &FlowControl,
    chunk_items: usize,
    (pacing, rank, now): (Option<&Pacing>, usize, f64),
) -> Chosen {
    let mut next_release = f64::INFINITY;
    let mut paced = |stream: usize, done: u64| -> i128 {
        match pacing.map(|p| p.stream(stream)) {
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
    // Items ready to leave that their emulated link is carrying (it has
    // started on the next one) but has not released yet.
    let carrying = |stream: usize, done: u64| {
        pacing
            .and_then(|p| crossing_start(p.stream(stream), done))
            .is_some_and(|t| t <= now)
    };
    let (mut out, mut held) = ([None, None], [false; 2]);
    for (side, send) in sends.into_iter().enumerate() {
        if send.finished {
            continue;
        }
        let stream = 2 * rank + side;
        let cap = paced(stream, send.done);
        // Clockwise: positions downwards from load - done; counterclockwise:
        // upwards from done.
        let at = if side == 0 {
            local.load - i128::from(send.done)
        } else {
            i128::from(send.done)
        };
        let ready = match side {
            0 if at > 0 => at,
            1 if at < local.load => local.load - at,
            _ => stages[side].ready_from(at, side == 0),
        };
        let ready = flow.limit(side, send.done, ready);
        let (k, capped) = send.take(ready, chunk_items, cap);
        held[side] = capped && carrying(stream, send.done);
        let k = i128::from(k);
        out[side] = Some(if side == 0 {
            (at - k, at, send.finished)
        } else {
            (at, at + k, send.finished)
        });
    }
    Chosen {
        out,
        held,
        next_release,
    }
}

/// A redistribution in chunks (see [`super::redistribute`] and the module's
/// docs) of items of `item_len` elements each, on hetbal's duplicate `comm`.
pub(super) fn run<E: Pod>(
    comm: &SimpleCommunicator,
    job: Job<'_, E>,
) -> Result<RedistributionReport, RunError> {
    let Job {
        loads,
        flows,
        item_len,
        items,
        options,
    } = job;
    let started = Instant::now();
    let n = loads.len();
    let rank = comm.rank() as usize;
    let item_bytes = item_len * std::mem::size_of::<E>();
    let held = items.len() * size_of::<E>();
    let fingerprint = start_checks(comm, loads, flows, item_bytes, held, options)?;
    let local = Local::of(loads, flows, rank);
    let (from_pred, from_succ) = (local.items_from_pred(), local.items_from_succ());
    let chunk_items = options.chunk_items(item_bytes);
    let mut flow = FlowControl::of(loads, flows, rank, chunk_items);
    let forwards = flow.forwards;
    // Items passed on never enter the arena, which holds what this rank keeps:
    // [kept from pred | own | kept from succ].
    let (kept_before, kept_after) = (from_pred - forwards[0], from_succ - forwards[1]);
    let kept = (kept_before, kept_after);
    let mut arena = Arena::agreed(comm, (Ok(()), fingerprint), items, item_len, kept)?;
    let succ = ((rank + 1) % n) as i32;
    let pred = ((rank + n - 1) % n) as i32;
    let my_fault = options.fault_of(rank);
    let mut stages = [Stage::default(), Stage::default()]; // clockwise, counterclockwise

    let mut send_succ = Stream::new(local.items_to_succ());
    let mut send_pred = Stream::new(local.items_to_pred());
    let mut recv_pred = Stream::new(from_pred);
    let mut recv_succ = Stream::new(from_succ);
    let mut protocol: Option<String> = None;
    let mut fault_pending = my_fault.is_some_and(|f| f != Fault::FailBeforeCommit);
    let (mut rounds, mut most_passed_on) = (0u64, 0u64);
    let (mut sent, mut received, mut messages_sent) = (0u64, 0u64, 0u64);
    let mut recorder = Recorder::new(options.record);
    // Recording with emulated links: since when the items of each stream out
    // (to the successor, to the predecessor) have waited for their planned
    // crossing (the link's emulated time).
    let mut waiting: [Option<f64>; 2] = [None, None];
    let b = item_bytes as i128;
    let (before_len, own_len) = (
        kept_before as usize * item_bytes,
        loads[rank] as usize * item_bytes,
    );
    let bytes = arena.bytes();
    // This rank's part of the order-aware checksum, computed while the items move:
    // each own item sent away as it leaves (while its message is in flight), each
    // received item this rank keeps as it arrives (see the checks below).
    let positions = Positions::of(loads, rank, item_bytes);
    let sum_at = |position: i128, bytes: &[u8]| positions.sum_at(position, bytes);
    let (keep_from, keep_to) = (-local.f_in, local.load - local.f_out); // new local range
    let (mut sent_away, mut received_kept) = (Checksum::ZERO, Checksum::ZERO);

    while !(send_succ.finished && send_pred.finished && recv_pred.finished && recv_succ.finished) {
        rounds += 1;
        // Room messages this round, decided before anything moves (both ends of
        // a link count the same items).
        let give_room = flow.give_room([recv_pred.done, recv_succ.done]);
        let take_room = flow.take_room([send_succ.done, send_pred.done]);
        // This round's chunks (emulated links: only the items whose planned
        // transfer has ended).
        let now = started.elapsed().as_secs_f64();
        let pacing = options.pacing.as_ref();
        let Chosen {
            out,
            held,
            next_release,
        } = choose_chunks(
            &local,
            [&mut send_succ, &mut send_pred],
            &stages,
            &flow,
            chunk_items,
            (pacing, rank, now),
        );
        sent += out
            .iter()
            .flatten()
            .map(|&(lo, hi, _)| (hi - lo) as u64)
            .sum::<u64>();
        // Emulated links with nothing released yet: wait a little for the next item
        // (at most a millisecond, so that the neighbours' rounds keep going).
        if pacing.is_some()
            && out.iter().flatten().all(|&(lo, hi, _)| lo == hi)
            && next_release.is_finite()
        {
            let wait = (next_release - started.elapsed().as_secs_f64()).clamp(0.0, 1e-3);
            std::thread::sleep(std::time::Duration::from_secs_f64(wait));
        }
        // The arena's zones: [kept from pred | own | kept from succ].
        let (kept_pred, rest) = bytes.split_at_mut(before_len);
        let (own, kept_succ) = rest.split_at_mut(own_len);
        let own: &[u8] = own;
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
                let data = chunk_bytes(own, &stages[side], (lo, hi), item_bytes);
                let spoiled = spoil(my_fault.unwrap_or(Fault::Corrupt), data, item_bytes);
                fault_copy = Some((side, spoiled));
                fault_pending = false;
            }
        }
        // Phase 1: headers (items, last, seconds the items waited for their
        // emulated link: 0 unless recording), and the room messages (items
        // passed on so far).
        let headers_out = [0, 1].map(|side| {
            out[side].map(|(lo, hi, last)| {
                let waited = round_start - starts[side];
                [(hi - lo) as u64, u64::from(last), waited.to_bits()]
            })
        });
        let passed_on = [
            send_succ.done.saturating_sub(loads[rank]),
            send_pred.done.saturating_sub(loads[rank]),
        ];
        let want = [!recv_pred.finished, !recv_succ.finished];
        let (headers_in, room_in) = exchange_headers(
            comm,
            (pred, succ),
            Headers {
                want,
                take_room,
                out: headers_out,
                give_room,
                passed_on,
            },
        );
        for side in 0..2 {
            if take_room[side] {
                flow.heard(side, room_in[side]);
            }
        }
        let incoming = read_headers(
            &headers_in,
            want,
            [&mut recv_pred, &mut recv_succ],
            forwards,
            chunk_items,
            (pred, succ),
            &mut protocol,
        );
        // Phase 2: the items, sent from where they are, received where they go.
        // Items to pass on go to a chunk of their own; kept items to the arena:
        // from the predecessor at the end of its zone's unfilled part (positions
        // -(done + k) .. -done), from the successor at the start of its zone's.
        let mut fresh: [Option<Vec<u8>>; 2] = [None, None];
        for (side, stream) in [(0usize, &recv_pred), (1usize, &recv_succ)] {
            if let Some(k) = incoming[side].filter(|_| stream.done < forwards[side]) {
                fresh[side] = Some(stages[side].buffer(k as usize * item_bytes));
            }
        }
        let pred_filled = recv_pred.done.saturating_sub(forwards[0]) as usize * item_bytes;
        let succ_filled = recv_succ.done.saturating_sub(forwards[1]) as usize * item_bytes;
        let (pred_zone, succ_zone) = (kept_pred.len(), kept_succ.len());
        // The bytes of a side's kept zone that k items arriving now fill.
        let kept_range = |side: usize, k: u64| {
            let len = k as usize * item_bytes;
            if side == 0 {
                let end = pred_zone - pred_filled;
                end.saturating_sub(len)..end
            } else {
                let end = (succ_filled + len).min(succ_zone);
                succ_filled.min(end)..end
            }
        };
        let mut got: [Option<(usize, usize)>; 2] = [None, None]; // (expected, received)
        {
            let [fresh_pred, fresh_succ] = &mut fresh;
            let regions: [Option<&mut [u8]>; 2] = [
                incoming[0].map(|k| match fresh_pred {
                    Some(chunk) => &mut chunk[..],
                    None => &mut kept_pred[kept_range(0, k)],
                }),
                incoming[1].map(|k| match fresh_succ {
                    Some(chunk) => &mut chunk[..],
                    None => &mut kept_succ[kept_range(1, k)],
                }),
            ];
            mpi::request::scope(|scope| {
                let mut receives = Vec::new();
                for (side, region) in regions.into_iter().enumerate() {
                    let Some(region) = region else { continue };
                    if !region.is_empty() {
                        let (from, tag) = if side == 0 {
                            (pred, TAG_CLOCKWISE)
                        } else {
                            (succ, TAG_COUNTERCLOCKWISE)
                        };
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
                    let data: &[u8] = match &fault_copy {
                        Some((fs, spoiled)) if *fs == side => spoiled,
                        _ => chunk_bytes(own, &stages[side], (lo, hi), item_bytes),
                    };
                    messages_sent += 1;
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
                        let own = &own[(lo * b) as usize..(hi * b) as usize];
                        sent_away += sum_at(lo, own);
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
        }
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
        // The chunks whose items have all left make room.
        stages[0].release(local.load - i128::from(send_succ.done), true);
        stages[1].release(i128::from(send_pred.done), false);
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
            let (done, k_items) = (i128::from(stream.done), i128::from(k));
            let (lo, hi) = if side == 0 {
                (-(done + k_items), -done)
            } else {
                (local.load + done, local.load + done + k_items)
            };
            match fresh[side].take() {
                // Items to pass on: held until they have left.
                Some(bytes) => stages[side].chunks.push_back(Staged { lo, hi, bytes }),
                // Items kept (every item of the kept zones is): hash them now,
                // while still in cache.
                None => {
                    let region: &[u8] = if side == 0 {
                        &kept_pred[kept_range(0, k)]
                    } else {
                        &kept_succ[kept_range(1, k)]
                    };
                    debug_assert!(keep_from <= lo && hi <= keep_to);
                    received_kept += sum_at(lo, region);
                }
            }
            stream.done += k;
            received += k;
        }
        let passing_on: i128 = stages
            .iter()
            .flat_map(|stage| &stage.chunks)
            .map(|c| c.hi - c.lo)
            .sum();
        most_passed_on = most_passed_on.max(passing_on as u64);
    }

    let transfer_seconds = started.elapsed().as_secs_f64();
    // Checks: counts, then the order-aware checksum of what this rank will hold
    // against what it held, summed over all ranks. The own items a rank keeps keep
    // their global positions, so their hashes cancel out of the difference: only
    // the own items sent away and the received items kept count, hashed as they
    // moved, which gives the same difference, bit for bit, as hashing everything
    // now (when the counts are right, every own item not kept was sent once, and
    // the received items kept were not written after their arrival).
    // On error the arena, dropped, puts the own items back.
    agree_to_commit(
        comm,
        &local,
        [
            send_succ.done,
            send_pred.done,
            recv_pred.done,
            recv_succ.done,
        ],
        protocol,
        my_fault == Some(Fault::FailBeforeCommit),
        received_kept - sent_away,
    )?;
    // Commit: the new items, local positions keep_from .. keep_to (from the
    // start of the arena when some come from the predecessor), move to the front.
    let start = keep_from.clamp(0, local.load) as usize;
    arena.commit(start, start + (keep_to - keep_from) as usize);
    Ok(RedistributionReport {
        items_sent: sent,
        items_received: received,
        rounds,
        messages_sent,
        most_passed_on,
        seconds: started.elapsed().as_secs_f64(),
        transfer_seconds,
        messages: recorder.finish(),
    })
}
