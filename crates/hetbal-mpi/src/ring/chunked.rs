//! Ring redistributions in chunks (see the parent module's docs).
//!
//! A run is a loop of rounds ([`run`]), each in four phases: choose this
//! round's chunks ([`choose_chunks`]), exchange the small messages
//! ([`exchange_headers`]: headers and room messages), check the headers
//! ([`read_headers`]) and move the items ([`move_items`]); then the rank
//! settles what moved ([`Run::settle`]). After the last round come the checks
//! and the commit.
//!
//! # Depths
//! The items crossing a link in one direction are numbered by *depth*, from the
//! one nearest the boundary between the two ranks' slices: the sender's own
//! items first (depths `0 .. own`), then the items it passes on (the item it
//! received at depth `e` goes at depth `load + e`). The receiver passes on the
//! items of depths below its `forwards` and keeps the others. Every header
//! names the depth of its chunk's first item, so chunks need not cross in
//! order: a rank sends the items it passes on before its own (its stage
//! drains first), in chunks that never mix items its neighbour passes on with
//! items it keeps.
//!
//! # Memory
//! Items kept go straight to their places in the arena; items passed on go to
//! chunks of their own ([`Stage`]), held until they have left. A neighbour
//! sends a rank items it passes on only while the rank holds fewer than
//! [`STAGED_CHUNKS`] chunks of them ([`FlowControl`]; each round the rank says
//! how many it has passed on), so a forwarding rank holds at most that many
//! chunks plus the one leaving, in every plan, circulations included.
//!
//! Without emulated links no rank ever waits for room: a rank receives at most
//! one chunk a side per round and, items to pass on going first, sends one
//! (only the chunk split at its neighbour's line between items passed on and
//! kept takes two rounds), so it never holds more than two chunks to pass on.
//! With emulated links a rank's sends wait for their planned times; the room
//! then holds the neighbour back, and the planned times go on passing.

use std::collections::VecDeque;
use std::mem::size_of;
use std::time::Instant;

use bytemuck::Pod;
use mpi::point_to_point::{Destination, Source};
use mpi::topology::SimpleCommunicator;
use mpi::traits::{Communicator, Equivalence};

use super::batched::batches_problem;
use super::Batches;
use super::{
    agree_to_commit, depth_bytes, own_at, received_at, start_checks, GiveBack, Job, Local,
    Positions, RedistributionReport, TAG_CLOCKWISE, TAG_COUNTERCLOCKWISE,
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

/// Chunks of items to pass on that a rank holds at most, beyond the one
/// leaving: its neighbour sends it such items only while it has room for them
/// (see the module's docs).
pub(super) const STAGED_CHUNKS: u64 = 4;

/// Items being passed on, depths `lo .. hi` of the side they arrived on (a
/// received chunk), of which `lo .. next` have left; held until all have.
struct Staged {
    lo: u64,
    hi: u64,
    next: u64,
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

    /// The depths of the chunk that leaves first still to leave, if any.
    fn front(&self) -> Option<(u64, u64)> {
        self.chunks.front().map(|c| (c.next, c.hi))
    }

    /// The bytes of depths `a .. b` of the front chunk, on `side`.
    fn front_bytes(&self, side: usize, (a, b): (u64, u64), item_bytes: usize) -> &[u8] {
        let c = self.chunks.front().expect("a chunk to send from");
        &c.bytes[depth_bytes(side, (c.lo, c.hi), (a, b), item_bytes)]
    }

    /// `k` more items of the front chunk have left; a chunk all gone is
    /// dropped (its buffer kept for the next).
    fn sent(&mut self, k: u64) {
        let Some(c) = self.chunks.front_mut() else {
            return;
        };
        c.next += k;
        if c.next >= c.hi {
            let c = self.chunks.pop_front().expect("a chunk");
            self.spare.push(c.bytes);
        }
    }

    /// Items held: every chunk whole until its last item has left.
    fn held(&self) -> u64 {
        self.chunks.iter().map(|c| c.hi - c.lo).sum()
    }
}

/// A rank's sends on one side (0: to its successor, 1: to its predecessor).
struct Sends {
    /// Items to send, and sent.
    total: u64,
    done: u64,
    /// Own items that go this way (depths `0 .. own`), and sent.
    own: u64,
    own_done: u64,
    /// Items sent that the neighbour passes on.
    to_stage: u64,
    /// Items of this rank's stage sent (passed on).
    passed_on: u64,
}

impl Sends {
    fn new(total: u64, load: u64) -> Sends {
        Sends {
            total,
            done: 0,
            own: total.min(load),
            own_done: 0,
            to_stage: 0,
            passed_on: 0,
        }
    }

    fn finished(&self) -> bool {
        self.done == self.total
    }
}

/// A rank's receives on one side (0: from its predecessor, 1: from its
/// successor).
struct Receives {
    /// Items to receive (depths `0 .. total`), and received.
    total: u64,
    done: u64,
    finished: bool,
    /// Items received to pass on.
    staged: u64,
}

impl Receives {
    fn new(total: u64) -> Receives {
        Receives {
            total,
            done: 0,
            finished: total == 0,
            staged: 0,
        }
    }
}

/// Flow control of the items passed on (see [`STAGED_CHUNKS`]), per side: a
/// rank sends its neighbour items that neighbour passes on only while the
/// neighbour has room for them, which it learns from a small message each
/// round.
struct FlowControl {
    /// Items this rank passes on: received from its predecessor (depths
    /// `0 .. forwards[0]`), and from its successor.
    forwards: [u64; 2],
    /// Items the successor (predecessor) passes on of those this rank sends
    /// it: depths `0 .. neighbour_forwards`.
    neighbour_forwards: [u64; 2],
    /// Items a neighbour may hold beyond those it has passed on.
    room: u64,
    /// How many items the successor (predecessor) has passed on, as last
    /// heard.
    heard: [u64; 2],
}

impl FlowControl {
    /// The flow control of `rank` on a ring of `loads` and `flows`, chunks of
    /// `chunk_items` items. O(1).
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
            room: STAGED_CHUNKS * chunk_items as u64,
            heard: [0; 2],
        }
    }

    /// Whether this rank tells the neighbour it receives from on each side how
    /// many items it has passed on: while items to pass on are still to come.
    /// Both ends of a link count the same items.
    fn give_room(&self, receives: [&Receives; 2]) -> [bool; 2] {
        [0, 1].map(|side| receives[side].staged < self.forwards[side])
    }

    /// Whether this rank hears from the neighbour it sends to on each side:
    /// while it has items that neighbour passes on still to send.
    fn take_room(&self, sends: [&Sends; 2]) -> [bool; 2] {
        [0, 1].map(|side| sends[side].to_stage < self.neighbour_forwards[side])
    }

    /// How many more items the neighbour on `side` may be sent to pass on.
    fn room_left(&self, side: usize, sends: &Sends) -> u64 {
        (self.heard[side] + self.room).saturating_sub(sends.to_stage)
    }

    /// The neighbour on `side` says it has passed on `passed_on` items.
    fn heard(&mut self, side: usize, passed_on: u64) {
        self.heard[side] = self.heard[side].max(passed_on);
    }
}

/// A chunk a rank sends on a side: `items` items from depth `depth` (the
/// receiver's depths, the sender's send order), from its stage or its own
/// items, and whether they are the link's last.
#[derive(Clone, Copy, Debug, Default)]
struct Piece {
    depth: u64,
    items: u64,
    staged: bool,
    last: bool,
}

/// The chunks a rank sends in a round, to the successor and to the
/// predecessor (`None` once that side is finished; a piece of no items is a
/// header alone); whether an emulated link holds back items ready to leave
/// that it is already carrying, per side; and when the next item of an
/// emulated link is released.
struct Chosen {
    out: [Option<Piece>; 2],
    held: [bool; 2],
    next_release: f64,
}

/// Chooses this round's chunks ([`Chosen`]): on each side, items to pass on
/// first (the front chunk of `stages`), then own items, at most `chunk_items`,
/// never mixing items the neighbour passes on with items it keeps, the ones it
/// passes on within its room ([`FlowControl`]); with emulated links (`pacing`
/// of `rank`, at time `now` since the start) only the items whose planned
/// transfer has ended. O(1) without emulated links, O(batches) with.
fn choose_chunks(
    (sends, stages): ([&Sends; 2], &[Stage; 2]),
    (flow, load): (&FlowControl, u64),
    chunk_items: usize,
    (pacing, rank, now): (Option<&Pacing>, usize, f64),
) -> Chosen {
    let mut next_release = f64::INFINITY;
    let mut chosen = Chosen {
        out: [None, None],
        held: [false; 2],
        next_release,
    };
    for side in 0..2 {
        let send = sends[side];
        if send.finished() {
            continue;
        }
        let stream = 2 * rank + side;
        let cap = match pacing.map(|p| p.stream(stream)) {
            None => u64::MAX,
            Some(batches) => {
                let (ready, next) = released(batches, now);
                if let Some(t) = next {
                    next_release = next_release.min(t);
                }
                ready.saturating_sub(send.done)
            }
        };
        let staged = stages[side]
            .front()
            .map(|(a, b)| (load + a, load + b, true));
        let own = (send.own_done < send.own).then_some((send.own_done, send.own, false));
        let mut piece = Piece {
            last: false,
            ..Piece::default()
        };
        let mut capped = false;
        for (a, b, from_stage) in [staged, own].into_iter().flatten() {
            let line = flow.neighbour_forwards[side];
            let (end, room) = if a < line {
                (b.min(line), flow.room_left(side, send))
            } else {
                (b, u64::MAX)
            };
            let want = (end - a).min(chunk_items as u64).min(room);
            let k = want.min(cap);
            capped = k < want;
            if k > 0 || capped {
                piece = Piece {
                    depth: a,
                    items: k,
                    staged: from_stage,
                    last: send.done + k == send.total,
                };
                break;
            }
        }
        // Items ready to leave that their emulated link is carrying (it has
        // started on the next one) but has not released yet.
        chosen.held[side] = capped
            && pacing
                .and_then(|p| crossing_start(p.stream(stream), send.done))
                .is_some_and(|t| t <= now);
        chosen.out[side] = Some(piece);
    }
    chosen.next_release = next_release;
    chosen
}

/// The small messages of a round, before the items: which headers this rank
/// expects, sends, and which room messages it expects and sends.
struct Headers {
    /// Expect a header from the predecessor (successor).
    want: [bool; 2],
    /// Expect a room message from the successor (predecessor).
    take_room: [bool; 2],
    /// The headers to the successor (predecessor): items, last (0 or 1), the
    /// bits of the seconds the items waited for their emulated link, depth.
    out: [Option<[u64; 4]>; 2],
    /// Send a room message to the predecessor (successor).
    give_room: [bool; 2],
    /// The items passed on so far that the room messages say: clockwise (to
    /// the predecessor), counterclockwise (to the successor).
    passed_on: [u64; 2],
}

/// Phase 2 of a round: the headers and room messages of [`Headers`], with the
/// neighbours `(pred, succ)`, nonblocking, completed together. Returns the
/// headers received (from the predecessor, from the successor; zeros where
/// none was expected) and the room messages (from the successor, from the
/// predecessor).
fn exchange_headers(
    comm: &SimpleCommunicator,
    (pred, succ): (i32, i32),
    h: Headers,
) -> ([[u64; 4]; 2], [u64; 2]) {
    let mut headers_in = [[0u64; 4]; 2];
    let mut room_in = [[0u64; 1]; 2];
    let passed_on = h.passed_on.map(|p| [p]);
    let out = h.out.map(|o| o.unwrap_or_default());
    // Side 0 receives from the predecessor and sends to the successor.
    let from = [pred, succ];
    let to = [succ, pred];
    let tags = [TAG_CLOCKWISE, TAG_COUNTERCLOCKWISE];
    let room_tags = [TAG_ROOM_CLOCKWISE, TAG_ROOM_COUNTERCLOCKWISE];
    mpi::request::scope(|scope| {
        let mut requests = Vec::new();
        for (side, (header, room)) in headers_in.iter_mut().zip(&mut room_in).enumerate() {
            if h.want[side] {
                let source = comm.process_at_rank(from[side]);
                requests.push(source.immediate_receive_into_with_tag(
                    scope,
                    &mut header[..],
                    tags[side],
                ));
            }
            if h.take_room[side] {
                let source = comm.process_at_rank(to[side]);
                requests.push(source.immediate_receive_into_with_tag(
                    scope,
                    &mut room[..],
                    room_tags[side],
                ));
            }
        }
        for side in 0..2 {
            if h.out[side].is_some() {
                let peer = comm.process_at_rank(to[side]);
                requests.push(peer.immediate_send_with_tag(scope, &out[side][..], tags[side]));
            }
            if h.give_room[side] {
                let peer = comm.process_at_rank(from[side]);
                requests.push(peer.immediate_send_with_tag(
                    scope,
                    &passed_on[side][..],
                    room_tags[side],
                ));
            }
        }
        for r in requests {
            r.wait();
        }
    });
    (headers_in, room_in.map(|[r]| r))
}

/// Where a chunk announced by a header goes: a chunk of its own to pass on,
/// the arena (items kept), or nowhere (a bad header: received and dropped).
#[derive(Clone, Copy, Debug, PartialEq)]
enum Place {
    Stage,
    Kept,
    Dropped,
}

/// A chunk coming from one side: `items` items from depth `depth`, and where
/// they go.
#[derive(Clone, Copy, Debug)]
struct Incoming {
    depth: u64,
    items: u64,
    place: Place,
}

/// Phase 3 of a round: checks the headers received (`want`: from the
/// predecessor, from the successor) against the receives they announce items
/// on: how many items (at most `chunk_items` and what is left), a last header
/// only with the last items, depths within the side's, and never a chunk
/// mixing items to pass on (depths below `forwards`) with items to keep.
/// Records the first problem in `protocol` (its chunk is then dropped) and
/// marks the sides finished. Returns what comes from each side.
fn read_headers(
    headers_in: &[[u64; 4]; 2],
    want: [bool; 2],
    receives: [&mut Receives; 2],
    (forwards, chunk_items): ([u64; 2], usize),
    (pred, succ): (i32, i32),
    protocol: &mut Option<String>,
) -> [Option<Incoming>; 2] {
    let mut incoming = [None, None];
    for (side, receive) in receives.into_iter().enumerate() {
        if !want[side] {
            continue;
        }
        let [k, last, _, depth] = headers_in[side];
        let left = receive.total - receive.done;
        let from = if side == 0 { pred } else { succ };
        let problem = if k > left || (last == 1) != (k == left) {
            Some(format!(
                "from rank {from}: a header announces {k} items (last: {last}) on a link with {left} left"
            ))
        } else if k > chunk_items as u64 {
            Some(format!(
                "from rank {from}: a header announces {k} items, more than a chunk ({chunk_items})"
            ))
        } else if depth.checked_add(k).is_none_or(|end| end > receive.total) {
            Some(format!(
                "from rank {from}: a chunk of {k} items at depth {depth} on a link of {} items",
                receive.total
            ))
        } else if depth < forwards[side] && depth + k > forwards[side] {
            Some(format!(
                "from rank {from}: a chunk of {k} items mixes items to pass on and items to keep"
            ))
        } else {
            None
        };
        let place = match problem {
            Some(p) => {
                protocol.get_or_insert(p);
                Place::Dropped
            }
            None if depth < forwards[side] => Place::Stage,
            None => Place::Kept,
        };
        incoming[side] = Some(Incoming {
            depth,
            items: k.min(left).min(chunk_items as u64),
            place,
        });
        receive.finished = last == 1 || k == left;
    }
    incoming
}

/// Phase 4 of a round: receives into `regions` (from the predecessor, from the
/// successor) and sends `data` (to the successor, to the predecessor), all at
/// once, nonblocking; `meanwhile` runs while they fly. Returns the bytes each
/// receive got, and when each message ended: sends, then receives (recorder
/// times).
fn move_items(
    comm: &SimpleCommunicator,
    (pred, succ): (i32, i32),
    regions: [Option<&mut [u8]>; 2],
    data: [Option<&[u8]>; 2],
    meanwhile: impl FnOnce(),
    recorder: &Recorder,
) -> ([Option<usize>; 2], [[f64; 2]; 2]) {
    let start = recorder.now();
    let mut ended = [[start; 2]; 2];
    let mut got = [None, None];
    let (from, to) = ([pred, succ], [succ, pred]);
    let tags = [TAG_CLOCKWISE, TAG_COUNTERCLOCKWISE];
    mpi::request::scope(|scope| {
        let mut receives = Vec::new();
        for (side, region) in regions.into_iter().enumerate() {
            if let Some(region) = region.filter(|r| !r.is_empty()) {
                let source = comm.process_at_rank(from[side]);
                receives.push((
                    side,
                    source.immediate_receive_into_with_tag(scope, region, tags[side]),
                ));
            }
        }
        let mut sends = Vec::new();
        for (side, bytes) in data.into_iter().enumerate() {
            if let Some(bytes) = bytes {
                let peer = comm.process_at_rank(to[side]);
                sends.push((side, peer.immediate_send_with_tag(scope, bytes, tags[side])));
            }
        }
        meanwhile();
        for (side, request) in receives {
            let status = request.wait();
            got[side] = Some(status.count(u8::equivalent_datatype()).max(0) as usize);
            ended[1][side] = recorder.now();
        }
        for (side, request) in sends {
            request.wait();
            ended[0][side] = recorder.now();
        }
    });
    (got, ended)
}

/// The bytes of `piece`, sent on `side` by a rank of `load` own items `own`:
/// own items where they are, items passed on from their chunk of `stages`.
fn piece_bytes<'s>(
    (own, stages): (&'s [u8], &'s [Stage; 2]),
    (load, item_bytes): (u64, usize),
    side: usize,
    piece: Piece,
) -> &'s [u8] {
    let depths = (piece.depth, piece.depth + piece.items);
    if piece.staged {
        let received = (depths.0 - load, depths.1 - load);
        stages[side].front_bytes(side, received, item_bytes)
    } else {
        &own[depth_bytes(side, (0, load), depths, item_bytes)]
    }
}

/// A redistribution in chunks (see [`super::redistribute`] and the module's
/// docs) of items of `item_len` elements each, on hetbal's duplicate `comm`.
///
/// `batches`, when given (a circulation of a ring with start-ups, which runs in
/// chunks: see [`super::batched`]), are checked against the flows as a batched
/// run checks them, and otherwise unused.
pub(super) fn run<E: Pod>(
    comm: &SimpleCommunicator,
    job: Job<'_, E>,
    batches: Option<&Batches>,
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
    let item_bytes = item_len * size_of::<E>();
    let held = items.elements() * size_of::<E>();
    let fingerprint = start_checks(comm, loads, flows, item_bytes, held, options)?;
    let local = Local::of(loads, flows, rank);
    let chunk_items = options.chunk_items(item_bytes);
    let flow = FlowControl::of(loads, flows, rank, chunk_items);
    let forwards = flow.forwards;
    let receives = [
        Receives::new(local.items_from_pred()),
        Receives::new(local.items_from_succ()),
    ];
    // Items passed on never enter the arena, which holds what this rank keeps:
    // [kept from pred | own | kept from succ].
    let kept = [0, 1].map(|side| receives[side].total - forwards[side]);
    let checked =
        match batches.and_then(|b| batches_problem(b, options.pacing.as_ref(), &local, rank, n)) {
            Some(reason) => Err(RunError::InvalidPlan { reason }),
            None => Ok(()),
        };
    let mut arena = Arena::agreed(
        comm,
        (checked, fingerprint),
        items,
        item_len,
        (kept[0], kept[1]),
    )?;
    let give_back = arena.gives_back_sent();
    let bytes = arena.bytes();
    let (kept_pred, rest) = bytes.split_at_mut(kept[0] as usize * item_bytes);
    let (own, kept_succ) = rest.split_at_mut(loads[rank] as usize * item_bytes);
    let give_back = GiveBack::of(give_back, own.as_ptr(), own.len());
    let mut run = Run {
        comm,
        rank,
        neighbours: (((rank + n - 1) % n) as i32, ((rank + 1) % n) as i32),
        load: loads[rank],
        item_bytes,
        chunk_items,
        pacing_of_links: options.pacing.as_ref(),
        flow,
        sends: [
            Sends::new(local.items_to_succ(), loads[rank]),
            Sends::new(local.items_to_pred(), loads[rank]),
        ],
        receives,
        stages: [Stage::default(), Stage::default()],
        zones: [kept_pred, kept_succ],
        own,
        give_back,
        positions: Positions::of(loads, rank, item_bytes),
        fault: options.fault_of(rank),
        fault_pending: options
            .fault_of(rank)
            .is_some_and(|f| f != Fault::FailBeforeCommit),
        protocol: None,
        waiting: [None, None],
        sums: (Checksum::ZERO, Checksum::ZERO),
        report: RedistributionReport {
            first: 0,
            items_sent: 0,
            items_received: 0,
            rounds: 0,
            messages_sent: 0,
            most_passed_on: 0,
            seconds: 0.0,
            transfer_seconds: 0.0,
            messages: Vec::new(),
        },
        recorder: Recorder::new(options.record),
        started,
    };
    while !run.finished() {
        run.round();
    }
    let Run {
        give_back,
        sends,
        receives,
        protocol,
        fault,
        sums: (sent_away, received_kept),
        mut report,
        recorder,
        ..
    } = run;

    if give_back.is_some() {
        // Own items left towards the predecessor from the front, towards the
        // successor from the back.
        arena.gave_back(sends[1].own_done as usize, sends[0].own_done as usize);
    }
    report.transfer_seconds = started.elapsed().as_secs_f64();
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
            sends[0].done,
            sends[1].done,
            receives[0].done,
            receives[1].done,
        ],
        protocol,
        fault == Some(Fault::FailBeforeCommit),
        received_kept - sent_away,
    )?;
    // Commit: the new items, local positions keep_from .. keep_to (from the
    // start of the arena when some come from the predecessor), move to the front.
    let (keep_from, keep_to) = (-local.f_in, local.load - local.f_out);
    let start = keep_from.clamp(0, local.load) as usize;
    arena.commit(start, start + (keep_to - keep_from) as usize);
    report.seconds = started.elapsed().as_secs_f64();
    report.messages = recorder.finish();
    Ok(report)
}

/// What a round's transfer gives back: the bytes each receive got, when
/// each message ended (sends, then receives), and the chunks received to
/// pass on (or drop).
type Transferred = ([Option<usize>; 2], [[f64; 2]; 2], [Option<Vec<u8>>; 2]);

/// A round's messages as chosen and announced: the pieces out, what comes in,
/// and the headers received.
type RoundMessages<'a> = (
    &'a [Option<Piece>; 2],
    &'a [Option<Incoming>; 2],
    &'a [[u64; 4]; 2],
);

/// A redistribution in chunks under way at one rank: its sends, receives and
/// stages per side (0: clockwise, 1: counterclockwise), the arena's zones, and
/// what it has seen so far.
struct Run<'a> {
    comm: &'a SimpleCommunicator,
    rank: usize,
    /// The predecessor's and the successor's ranks.
    neighbours: (i32, i32),
    load: u64,
    item_bytes: usize,
    chunk_items: usize,
    pacing_of_links: Option<&'a Pacing>,
    flow: FlowControl,
    sends: [Sends; 2],
    receives: [Receives; 2],
    stages: [Stage; 2],
    /// The arena's zones of items kept: from the predecessor (depths
    /// `forwards[0] .. total`, deepest first), from the successor.
    zones: [&'a mut [u8]; 2],
    /// The own items, never written before the commit (with `give_back`, the
    /// pages of those that left go back to the system, and are never read
    /// again).
    own: &'a [u8],
    /// The own items' memory given back as they leave, when it is
    /// ([`crate::buffer::ItemBuffer::set_give_back_sent`]).
    give_back: Option<GiveBack>,
    positions: Positions,
    fault: Option<Fault>,
    fault_pending: bool,
    protocol: Option<String>,
    /// Recording with emulated links: since when the items of each side out
    /// have waited for their planned crossing (the link's emulated time).
    waiting: [Option<f64>; 2],
    /// The checksums of the own items sent away and of the items received and
    /// kept (see the checks in [`run`]).
    sums: (Checksum, Checksum),
    report: RedistributionReport,
    recorder: Recorder,
    started: Instant,
}

impl Run<'_> {
    fn finished(&self) -> bool {
        self.sends.iter().all(Sends::finished) && self.receives.iter().all(|r| r.finished)
    }

    /// One round: choose the chunks ([`Run::choose`]), exchange headers and
    /// room messages and check them ([`Run::headers`]), move the items
    /// ([`Run::transfer`]), record the messages, settle ([`Run::settle`]).
    fn round(&mut self) {
        self.report.rounds += 1;
        let (chosen, round_start, starts) = self.choose();
        let out = chosen.out;
        let spoiled = self.spoiled_copy(&out);
        let (headers_in, incoming) = self.headers(&out, round_start, starts);
        let (got, ended, fresh) = self.transfer(&out, &incoming, spoiled);
        self.record_round((&out, &incoming, &headers_in), (round_start, starts), ended);
        self.settle(out, incoming, got, fresh);
        self.give_back_sent();
    }

    /// With [`Run::give_back`], gives back the memory of the whole pages of
    /// own items that left since the last round.
    fn give_back_sent(&mut self) {
        let left = (self.sends[1].own_done, self.sends[0].own_done);
        if let Some(give_back) = &mut self.give_back {
            // SAFETY: the own items that left: their sends completed with the
            // round, and nothing reads them again (`transfer` reads only own
            // items still to leave; the checks hashed them as they left); only
            // item buffers give back.
            unsafe { give_back.left(left, self.item_bytes) };
        }
    }

    /// Phase 1: this round's chunks (emulated links: only the items whose
    /// planned transfer has ended; with nothing released yet, a wait of at
    /// most a millisecond for the next item, so that the neighbours' rounds go
    /// on). Returns them, the round's start (recorder time) and when each
    /// send started: when its emulated link began to carry its items (to the
    /// round), else with the round.
    fn choose(&mut self) -> (Chosen, f64, [f64; 2]) {
        let now = self.started.elapsed().as_secs_f64();
        let pacing = self.pacing_of_links;
        let chosen = choose_chunks(
            ([&self.sends[0], &self.sends[1]], &self.stages),
            (&self.flow, self.load),
            self.chunk_items,
            (pacing, self.rank, now),
        );
        let moving = |side: usize| chosen.out[side].is_some_and(|p| p.items > 0);
        if pacing.is_some() && !moving(0) && !moving(1) && chosen.next_release.is_finite() {
            let wait =
                (chosen.next_release - self.started.elapsed().as_secs_f64()).clamp(0.0, 1e-3);
            std::thread::sleep(std::time::Duration::from_secs_f64(wait));
        }
        let round_start = self.recorder.now();
        let mut starts = [round_start; 2];
        for (side, (start, waiting)) in starts.iter_mut().zip(&mut self.waiting).enumerate() {
            if moving(side) {
                *start = waiting.take().unwrap_or(round_start);
            }
            if chosen.held[side] {
                waiting.get_or_insert(round_start);
            }
        }
        (chosen, round_start, starts)
    }

    /// A faulty rank's first non-empty message, spoiled (a copy: the items
    /// stay), with its side.
    fn spoiled_copy(&mut self, out: &[Option<Piece>; 2]) -> Option<(usize, Vec<u8>)> {
        if !self.fault_pending {
            return None;
        }
        let side = (0..2).find(|&s| out[s].is_some_and(|p| p.items > 0))?;
        let held = (self.own, &self.stages);
        let data = piece_bytes(held, (self.load, self.item_bytes), side, out[side]?);
        self.fault_pending = false;
        let fault = self.fault.unwrap_or(Fault::Corrupt);
        Some((side, spoil(fault, data, self.item_bytes)))
    }

    /// Phases 2 and 3: the headers (items, last, seconds the items waited
    /// for their emulated link, depth) and room messages exchanged, the room
    /// heard, the headers checked. Returns the headers received and what
    /// comes from each side.
    fn headers(
        &mut self,
        out: &[Option<Piece>; 2],
        round_start: f64,
        starts: [f64; 2],
    ) -> ([[u64; 4]; 2], [Option<Incoming>; 2]) {
        // Room messages, decided from what both ends of a link have counted.
        let give_room = self.flow.give_room([&self.receives[0], &self.receives[1]]);
        let take_room = self.flow.take_room([&self.sends[0], &self.sends[1]]);
        let want = [!self.receives[0].finished, !self.receives[1].finished];
        let (headers_in, room_in) = exchange_headers(
            self.comm,
            self.neighbours,
            Headers {
                want,
                take_room,
                out: [0, 1].map(|side| {
                    out[side].map(|p| {
                        let waited = round_start - starts[side];
                        [p.items, u64::from(p.last), waited.to_bits(), p.depth]
                    })
                }),
                give_room,
                passed_on: [self.sends[0].passed_on, self.sends[1].passed_on],
            },
        );
        for side in 0..2 {
            if take_room[side] {
                self.flow.heard(side, room_in[side]);
            }
        }
        let [receive_pred, receive_succ] = &mut self.receives;
        let incoming = read_headers(
            &headers_in,
            want,
            [receive_pred, receive_succ],
            (self.flow.forwards, self.chunk_items),
            self.neighbours,
            &mut self.protocol,
        );
        (headers_in, incoming)
    }

    /// Phase 4: the items, sent from where they are (or the spoiled copy),
    /// received where they go (items to pass on to a chunk of their own,
    /// items kept to their place in the arena, a bad header's items to a
    /// buffer dropped after); the own items leaving are hashed while the
    /// messages fly. Returns the bytes each receive got, when each message
    /// ended, and the chunks received to pass on (or drop).
    fn transfer(
        &mut self,
        out: &[Option<Piece>; 2],
        incoming: &[Option<Incoming>; 2],
        spoiled: Option<(usize, Vec<u8>)>,
    ) -> Transferred {
        let moving = |side: usize| out[side].filter(|p| p.items > 0);
        let mut fresh: [Option<Vec<u8>>; 2] = [None, None];
        for side in 0..2 {
            if let Some(c) = incoming[side].filter(|c| c.place != Place::Kept && c.items > 0) {
                fresh[side] = Some(self.stages[side].buffer(c.items as usize * self.item_bytes));
            }
        }
        let item_bytes = self.item_bytes;
        let (forwards, totals) = (
            self.flow.forwards,
            [self.receives[0].total, self.receives[1].total],
        );
        let kept_range = |side: usize, c: Incoming| {
            let zone = (forwards[side], totals[side]);
            depth_bytes(side, zone, (c.depth, c.depth + c.items), item_bytes)
        };
        let own = self.own;
        let data = [0, 1].map(|side| {
            moving(side).map(|p| match &spoiled {
                Some((s, bytes)) if *s == side => &bytes[..],
                _ => piece_bytes((own, &self.stages), (self.load, item_bytes), side, p),
            })
        });
        let (positions, load) = (self.positions, i128::from(self.load));
        let mut sent_away = Checksum::ZERO;
        let hash_own_leaving = || {
            for side in 0..2 {
                if let Some(p) = moving(side).filter(|p| !p.staged) {
                    let depths = (p.depth, p.depth + p.items);
                    let bytes = &own[depth_bytes(side, (0, load as u64), depths, item_bytes)];
                    sent_away += positions.sum_at(own_at(side, load, depths), bytes);
                }
            }
        };
        let [zone_pred, zone_succ] = &mut self.zones;
        let [fresh_pred, fresh_succ] = &mut fresh;
        // No receive for a header alone.
        let incoming_items = incoming.map(|c| c.filter(|c| c.items > 0));
        let regions: [Option<&mut [u8]>; 2] = [
            incoming_items[0].map(|c| match fresh_pred {
                Some(chunk) => &mut chunk[..],
                None => &mut zone_pred[kept_range(0, c)],
            }),
            incoming_items[1].map(|c| match fresh_succ {
                Some(chunk) => &mut chunk[..],
                None => &mut zone_succ[kept_range(1, c)],
            }),
        ];
        let (got, ended) = move_items(
            self.comm,
            self.neighbours,
            regions,
            data,
            hash_own_leaving,
            &self.recorder,
        );
        self.sums.0 += sent_away;
        self.report.messages_sent += data.iter().flatten().count() as u64;
        (got, ended, fresh)
    }

    /// Records the round's messages (with [`crate::Options::record`]): a send
    /// from its start to its end, a receive from when its items began to wait
    /// on the sender's emulated link (its header says) to its arrival.
    fn record_round(
        &mut self,
        (out, incoming, headers_in): RoundMessages<'_>,
        (round_start, starts): (f64, [f64; 2]),
        ended: [[f64; 2]; 2],
    ) {
        let (pred, succ) = (self.neighbours.0 as usize, self.neighbours.1 as usize);
        for (side, to) in [succ, pred].into_iter().enumerate() {
            let items = out[side].map_or(0, |p| p.items);
            let span = (starts[side], ended[0][side]);
            self.recorder
                .record(Direction::Send, Some(to), (items, 0), span);
        }
        for (side, from) in [pred, succ].into_iter().enumerate() {
            let waited = f64::from_bits(headers_in[side][2]);
            let waited = if waited.is_finite() {
                waited.max(0.0)
            } else {
                0.0
            };
            let span = (round_start - waited, ended[1][side]);
            let items = incoming[side].map_or(0, |c| c.items);
            self.recorder
                .record(Direction::Receive, Some(from), (items, 0), span);
        }
    }

    /// After a round's messages: the sends counted (items passed on leave
    /// their chunks, which make room once empty), the receives checked
    /// against their headers, counted, and put where they go (kept items
    /// hashed now, while in cache).
    fn settle(
        &mut self,
        out: [Option<Piece>; 2],
        incoming: [Option<Incoming>; 2],
        got: [Option<usize>; 2],
        mut fresh: [Option<Vec<u8>>; 2],
    ) {
        let line = self.flow.neighbour_forwards;
        for (side, piece) in out.into_iter().enumerate() {
            let Some(p) = piece.filter(|p| p.items > 0) else {
                continue;
            };
            let send = &mut self.sends[side];
            send.done += p.items;
            if p.depth < line[side] {
                send.to_stage += p.items;
            }
            if p.staged {
                send.passed_on += p.items;
                self.stages[side].sent(p.items);
            } else {
                send.own_done += p.items;
            }
            self.report.items_sent += p.items;
        }
        let (pred, succ) = self.neighbours;
        for (side, c) in incoming.into_iter().enumerate() {
            let Some(c) = c else { continue };
            let expected = c.items as usize * self.item_bytes;
            let bytes = got[side].unwrap_or(0);
            if bytes != expected {
                let from = if side == 0 { pred } else { succ };
                self.protocol.get_or_insert(format!(
                    "from rank {from}: a message of {bytes} bytes where its header announced {expected}"
                ));
            }
            if c.items == 0 {
                continue;
            }
            let depths = (c.depth, c.depth + c.items);
            match c.place {
                Place::Stage => {
                    let bytes = fresh[side].take().expect("a chunk received");
                    self.receives[side].staged += c.items;
                    self.stages[side].chunks.push_back(Staged {
                        lo: depths.0,
                        hi: depths.1,
                        next: depths.0,
                        bytes,
                    });
                }
                Place::Kept => {
                    let zone = (self.flow.forwards[side], self.receives[side].total);
                    let range = depth_bytes(side, zone, depths, self.item_bytes);
                    let at = received_at(side, i128::from(self.load), depths);
                    self.sums.1 += self.positions.sum_at(at, &self.zones[side][range]);
                }
                Place::Dropped => {
                    if let Some(bytes) = fresh[side].take() {
                        self.stages[side].spare.push(bytes);
                    }
                }
            }
            self.receives[side].done += c.items;
            self.report.items_received += c.items;
        }
        let held = self.stages[0].held() + self.stages[1].held();
        self.report.most_passed_on = self.report.most_passed_on.max(held);
    }
}
