//! Ring redistributions that follow a plan's transfers ([`Options::batches`]):
//! the executor of rings with start-ups.
//!
//! Every planned transfer over a link with a start-up goes as **one MPI
//! message** holding all its items, sent once this rank holds them all (the
//! plan guarantees they are held at its start), and received whole; a planned
//! transfer over a link without one (a train) goes in pieces of
//! [`Options::chunk_bytes`], each sent once its items are held. Both ends know
//! every message's size from the plan: no headers, no flow-control messages. A
//! stream's messages leave in the plan's order.
//!
//! With emulated links ([`Options::pacing`], the plan's times) every transfer
//! begins at `max(planned start, when its items were all held, when this
//! rank's previous send ended)` (one port for a rank's sends, taken in the
//! plan's order), and its message leaves `start-up + items × time per item`
//! after it began (its planned duration): a message is delivered no earlier
//! than the emulated link would deliver it. A train's piece leaves when its
//! last item would have crossed. Receives take no emulated time.
//!
//! Memory: as in the chunked runtime there is no second copy of anything. The
//! rank's vector grows in place to `[kept from the predecessor | own | kept
//! from the successor]`; own items are sent straight from it and items kept
//! received straight into their places. Items a rank passes on go to buffers
//! of their own ([`Stage`]), dropped once every send holding them has
//! completed. A planned message gathers its items from where they are (own
//! items and several received parts) with an MPI datatype, and a received
//! message that holds items to pass on and items to keep is scattered the same
//! way: no copy. A rank receives a message holding items to pass on only while
//! it holds fewer than [`STAGED_CHUNKS`] chunks of them, unless its next send
//! needs them and none of its sends of such items is in flight ([`admits`]):
//! so a forwarder holds at most that room plus one planned message to pass
//! on. A circulation (every rank passing items on one way), where waiting for
//! room could go round the ring, runs in chunks instead (see
//! [`super::redistribute`]).
//!
//! # Why no rank waits for ever
//! Each link carries its net flow one way, so a rank that passes items on
//! (a *forwarder*) receives from one side and sends to the other only; a rank
//! sending both ways receives nothing, and one receiving from both sides
//! sends nothing. A rank waits for three things only:
//! - **room**, only at a forwarder, for a message whose items are not the
//!   ones its next send needs, or while one of its sends of such items is in
//!   flight: either way on its own send to the next rank downstream;
//! - **items**, for its next send: they come from upstream, and the message
//!   bringing them is let in (it is *needed*) unless a send is in flight,
//!   which again waits on the rank downstream;
//! - **time** (emulated links): a transfer begins at its planned start, once
//!   its items are held and the rank's previous send has ended, all finite
//!   once the items are held, as the plan is valid (every item held before
//!   its transfer starts, in the port's order).
//!
//! So every wait that is not for items points downstream, and downstream
//! along a chain of forwarders ends at a rank that passes nothing on, which
//! lets every message in: the last forwarder's sends complete, then the one
//! before, and so on up the chain; waits for items point upstream, to sends
//! that the same argument completes. Without a circulation there is no cycle
//! of waits. (`tests/random_plans.rs` runs random plans in chunks of one to
//! three items, so that the room binds, with and without emulated links:
//! over 6,000 plans on 2 to 8 ranks ended.)

use std::collections::VecDeque;
use std::mem::size_of;
use std::ops::Range;
use std::time::{Duration, Instant};

use bytemuck::Pod;

use crate::checksum::Checksum;
use mpi::datatype::{MutView, UserDatatype, View};
use mpi::point_to_point::Message;
use mpi::point_to_point::{Destination, Source};
use mpi::request::{Request, Scope};
use mpi::topology::SimpleCommunicator;
use mpi::traits::{Communicator, Equivalence};
use mpi::{Address, Count};

use super::chunked::STAGED_CHUNKS;
use super::{
    agree_to_commit, depth_bytes, own_at, received_at, start_checks, Batches, GiveBack, Job, Local,
    PlannedBatch, Positions, RedistributionReport, TAG_CLOCKWISE, TAG_COUNTERCLOCKWISE,
};
use crate::arena::Arena;
use crate::pacing::Batch;
use crate::protocol::{spoil, Fault, MAX_MESSAGE_BYTES};
use crate::timeline::{Direction, Recorder};
use crate::Options;
use crate::RunError;

/// The tags of each side's messages: clockwise (to the successor), and
/// counterclockwise.
const TAGS: [i32; 2] = [TAG_CLOCKWISE, TAG_COUNTERCLOCKWISE];

/// The longest nap of a rank waiting for a message (it checks for incoming
/// messages after each).
const NAP: Duration = Duration::from_micros(100);

/// One MPI message of a stream: `items` items of planned transfer `batch`,
/// whose first `through` items have left once it has.
#[derive(Clone, Copy, Debug, PartialEq)]
struct Piece {
    batch: usize,
    items: u64,
    through: u64,
}

/// Where a stream is: the next piece starts at item `done` of transfer `batch`.
#[derive(Clone, Copy, Debug, Default)]
struct Cursor {
    batch: usize,
    done: u64,
}

impl Cursor {
    /// The next piece of `stream`, whose messages hold at most `message_items`
    /// items and whose trains go in pieces of `chunk_items`; `None` at the end.
    fn peek(
        &self,
        stream: &[PlannedBatch],
        (message_items, chunk_items): (u64, u64),
    ) -> Option<Piece> {
        let mut at = *self;
        while let Some(b) = stream.get(at.batch) {
            if at.done < b.items {
                let size = if b.message {
                    message_items
                } else {
                    chunk_items
                };
                let items = size.max(1).min(b.items - at.done);
                return Some(Piece {
                    batch: at.batch,
                    items,
                    through: at.done + items,
                });
            }
            at = Cursor {
                batch: at.batch + 1,
                done: 0,
            };
        }
        None
    }

    /// Past `piece` (the one [`Cursor::peek`] gave).
    fn advance(&mut self, piece: Piece) {
        *self = Cursor {
            batch: piece.batch,
            done: piece.through,
        };
    }
}

/// A rank's sends on one side: 0 to its successor (clockwise), 1 to its
/// predecessor.
struct Out<'a> {
    planned: &'a [PlannedBatch],
    /// Each transfer's times on the emulated link (the plan's), empty without.
    paced: Vec<Paced<'a>>,
    /// When each transfer began on the emulated link, once known.
    begins: Vec<Option<f64>>,
    /// Items of the stream's transfers before each one.
    before: Vec<u64>,
    cursor: Cursor,
    sent: u64,
}

/// A rank's receives on one side: 0 from its predecessor, 1 from its
/// successor.
struct In<'a> {
    planned: &'a [PlannedBatch],
    cursor: Cursor,
    received: u64,
    /// Items received after each message, and when it arrived (seconds since
    /// the start).
    arrivals: Vec<(u64, f64)>,
    /// Each transfer's times on the sender's emulated link (the plan's), empty
    /// without.
    paced: Vec<Paced<'a>>,
    /// When the receive of the next message began (`MPI_Wtime`, recording).
    waiting_since: f64,
}

impl In<'_> {
    /// When this side had delivered `needed` items (seconds since the start; 0
    /// for none), if it has.
    fn held_at(&self, needed: u64) -> Option<f64> {
        if needed == 0 {
            return Some(0.0);
        }
        let k = self.arrivals.partition_point(|&(count, _)| count < needed);
        self.arrivals.get(k).map(|&(_, at)| at)
    }
}

/// The arena's bytes lent to the messages in flight, in disjoint ranges.
struct Lender {
    base: *mut u8,
    len: usize,
}

impl Lender {
    /// The bytes `range` to send.
    ///
    /// # Safety
    /// `range` lies within the arena, its bytes were written (own items, or
    /// received and never written again), and nothing writes them while the
    /// slice lives.
    unsafe fn read<'s>(&self, range: Range<usize>) -> &'s [u8] {
        debug_assert!(range.start <= range.end && range.end <= self.len);
        std::slice::from_raw_parts(self.base.add(range.start), range.end - range.start)
    }

    /// The bytes `range` to receive into.
    ///
    /// # Safety
    /// `range` lies within the arena, and no other slice of it lives meanwhile
    /// (items not yet received: nothing sends or reads them).
    unsafe fn write<'s>(&self, range: Range<usize>) -> &'s mut [u8] {
        debug_assert!(range.start <= range.end && range.end <= self.len);
        std::slice::from_raw_parts_mut(self.base.add(range.start), range.end - range.start)
    }
}

/// Why `batches` (and `pacing`'s batches, when given) do not fit this rank's
/// part of the flows, if they do not: its streams must carry exactly its
/// flows, the pacing's streams the same transfers.
pub(super) fn batches_problem(
    batches: &Batches,
    pacing: Option<&crate::Pacing>,
    local: &Local,
    rank: usize,
    n: usize,
) -> Option<String> {
    let (pred, succ) = ((rank + n - 1) % n, (rank + 1) % n);
    let streams = [
        (2 * rank, local.items_to_succ(), "to its successor"),
        (2 * rank + 1, local.items_to_pred(), "to its predecessor"),
        (2 * pred, local.items_from_pred(), "from its predecessor"),
        (2 * succ + 1, local.items_from_succ(), "from its successor"),
    ];
    for (k, flow, what) in streams {
        let items: u128 = batches.stream(k).iter().map(|b| u128::from(b.items)).sum();
        if items != u128::from(flow) {
            return Some(format!(
                "the batches of stream {k} carry {items} items but the flows move {flow} {what} at rank {rank}"
            ));
        }
    }
    let paced = pacing?;
    streams[..2].iter().find_map(|&(k, _, _)| {
        Paced::of(paced.stream(k), batches.stream(k))
            .is_none()
            .then(|| {
                format!(
                    "the pacing's stream {k} does not hold the batches' transfers at rank {rank}"
                )
            })
    })
}

/// A planned transfer's times on its emulated link: the pacing batches that
/// hold its items, one (a message, a train) or more (a paced train, whose
/// first item and the others go at their own pace, [`ring_pacing`]).
///
/// [`ring_pacing`]: hetbal::pacing::ring_pacing
#[derive(Clone, Copy, Debug)]
struct Paced<'a> {
    batches: &'a [Batch],
}

impl<'a> Paced<'a> {
    /// The transfers of `planned` on the batches of `paced`, in order: each
    /// the next batches whose items add up to its own; `None` unless they
    /// hold exactly the transfers' items.
    ///
    /// Complexity: O(transfers + batches).
    fn of(paced: &'a [Batch], planned: &[PlannedBatch]) -> Option<Vec<Paced<'a>>> {
        let mut at = 0;
        let mut all = Vec::with_capacity(planned.len());
        for transfer in planned {
            let (first, mut items) = (at, 0u64);
            while items < transfer.items {
                items = items.checked_add(paced.get(at)?.1)?;
                at += 1;
            }
            if items != transfer.items {
                return None;
            }
            all.push(Paced {
                batches: &paced[first..at],
            });
        }
        (at == paced.len()).then_some(all)
    }

    /// When the transfer is planned to begin (seconds since the start).
    fn start(&self) -> f64 {
        self.batches[0].0
    }

    /// Seconds from its planned beginning until its first `k` items have
    /// crossed (item j of a batch has crossed `j` times its seconds per item
    /// after the batch's start).
    fn crossed(&self, k: u64) -> f64 {
        let (mut left, mut at) = (k, 0.0f64);
        for &(start, items, cost) in self.batches {
            if left == 0 {
                break;
            }
            let j = left.min(items);
            at = start - self.start() + j as f64 * cost.max(0.0);
            left -= j;
        }
        at
    }
}

/// Items passed on, depths `lo .. hi` of the side they arrived on (a received
/// message's part), held from their arrival until every send holding them
/// has completed (`flying` counts those in flight).
struct Staged {
    lo: u64,
    hi: u64,
    bytes: Vec<u8>,
    flying: usize,
}

/// The items being passed on in one direction, in arrival (depth) order;
/// chunk `first + j` is `chunks[j]`.
#[derive(Default)]
struct Stage {
    first: usize,
    chunks: VecDeque<Staged>,
    /// Buffers of chunks gone, for the next ones (a few).
    spare: Vec<Vec<u8>>,
}

impl Stage {
    /// Items held, every chunk whole until it is dropped.
    fn held(&self) -> u64 {
        self.chunks.iter().map(|c| c.hi - c.lo).sum()
    }

    /// Whether a send holding some of these items is in flight.
    fn flying(&self) -> bool {
        self.chunks.iter().any(|c| c.flying > 0)
    }

    /// A buffer of `len` bytes for a part about to arrive.
    fn buffer(&mut self, len: usize) -> Vec<u8> {
        let mut bytes = self.spare.pop().unwrap_or_default();
        bytes.clear();
        bytes.resize(len, 0);
        bytes
    }

    /// The memory of depths `a .. b` (within the chunks held), in the order a
    /// message of `side` carries them (see [`depth_bytes`]), each chunk's
    /// part as `(address, bytes)`; and the ids of the chunks it touches.
    fn regions(
        &self,
        side: usize,
        (a, b): (u64, u64),
        item_bytes: usize,
    ) -> (Vec<Region>, Range<usize>) {
        let mut regions = Vec::new();
        let mut touched: Option<(usize, usize)> = None;
        for (j, c) in self.chunks.iter().enumerate() {
            let (x, y) = (a.max(c.lo), b.min(c.hi));
            if x < y {
                let range = depth_bytes(side, (c.lo, c.hi), (x, y), item_bytes);
                regions.push(Region(
                    c.bytes[range].as_ptr(),
                    (y - x) as usize * item_bytes,
                ));
                let id = self.first + j;
                touched = Some(touched.map_or((id, id + 1), |(lo, _)| (lo, id + 1)));
            }
        }
        let ids = touched.map_or(0..0, |(lo, hi)| lo..hi);
        if side == 0 {
            // Clockwise messages carry the deepest items first.
            regions.reverse();
        }
        (regions, ids)
    }

    /// A send holding chunks `ids` is posted (`+1`) or has completed (`-1`).
    fn mark(&mut self, ids: &Range<usize>, posted: bool) {
        for id in ids.clone() {
            if let Some(c) = id
                .checked_sub(self.first)
                .and_then(|j| self.chunks.get_mut(j))
            {
                if posted {
                    c.flying += 1;
                } else {
                    c.flying -= 1;
                }
            }
        }
    }

    /// Drops the chunks at the front whose items have all been sent (depths
    /// below `posted`) by sends that have all completed.
    fn release(&mut self, posted: u64) {
        while self
            .chunks
            .front()
            .is_some_and(|c| c.hi <= posted && c.flying == 0)
        {
            let c = self.chunks.pop_front().expect("a chunk");
            self.first += 1;
            if self.spare.len() < 2 {
                self.spare.push(c.bytes);
            }
        }
    }
}

/// A part of a message in memory: its address and length in bytes.
#[derive(Clone, Copy, Debug)]
struct Region(*const u8, usize);

/// The datatype of a message made of `regions` (in message order), as
/// displacements from the first one's address: one message from (or into)
/// several places, without a copy.
fn gather_type(regions: &[Region]) -> UserDatatype {
    let base = regions[0].0 as Address;
    let lengths: Vec<Count> = regions.iter().map(|r| r.1 as Count).collect();
    let offsets: Vec<Address> = regions.iter().map(|r| r.0 as Address - base).collect();
    UserDatatype::heterogeneous_indexed(&lengths, &offsets, &u8::equivalent_datatype())
}

/// Whether the room on `side` (`held` items to pass on held, `room` at most)
/// lets a message with `passed` items to pass on in: always when it has none,
/// when they fit, or when the rank's next send needs them and none of its
/// sends holding such items is in flight (so that a planned message larger
/// than the room still gathers, and a rank never waits for room it holds
/// itself).
fn admits(passed: u64, (held, room): (u64, u64), needed: bool, flying: bool) -> bool {
    passed == 0 || held + passed <= room || (needed && !flying)
}

/// A redistribution following `batches` (see the module's docs and
/// [`super::redistribute`]): the checks, then a loop of [`Run::receive`],
/// [`Run::schedule`], [`Run::send`] and [`Run::complete`] until every message
/// has moved, then the commit.
pub(super) fn run<E: Pod>(
    comm: &SimpleCommunicator,
    job: Job<'_, E>,
    batches: &Batches,
) -> Result<RedistributionReport, RunError> {
    let (loads, flows, item_len, options) = (job.loads, job.flows, job.item_len, job.options);
    let started = Instant::now();
    let n = loads.len();
    let rank = comm.rank() as usize;
    let item_bytes = item_len * size_of::<E>();
    let held = job.items.elements() * size_of::<E>();
    let fingerprint = start_checks(comm, loads, flows, item_bytes, held, options)?;
    let local = Local::of(loads, flows, rank);
    let checked = match batches_problem(batches, options.pacing.as_ref(), &local, rank, n) {
        Some(reason) => Err(RunError::InvalidPlan { reason }),
        None => Ok(()),
    };
    let forwards = [
        local.forwards_clockwise(),
        local.forwards_counterclockwise(),
    ];
    let totals = [local.items_from_pred(), local.items_from_succ()];
    // The items kept go to their places in the arena, [kept from the
    // predecessor | own | kept from the successor]; items passed on to a
    // stage of their own.
    let kept = [0, 1].map(|side| totals[side] - forwards[side]);
    let around = (kept[0], kept[1]);
    let mut arena = Arena::agreed(comm, (checked, fingerprint), job.items, item_len, around)?;
    let page = arena.gives_back_sent();
    let bytes = arena.bytes();
    let lender = Lender {
        base: bytes.as_mut_ptr(),
        len: bytes.len(),
    };
    let mut run = Run::new(
        comm,
        (loads, &local),
        (batches, options),
        (item_bytes, lender),
    );
    // The own items' memory given back as they leave, when it is.
    let own = (run.lender.base as usize + run.own_start) as *const u8;
    run.give_back = GiveBack::of(page, own, run.own_items as usize * item_bytes);
    mpi::request::scope(|scope| {
        let mut flying = Vec::new();
        loop {
            let mut moved = run.receive();
            run.schedule();
            let (sent, next_release) = run.send(scope, &mut flying);
            moved |= sent;
            run.complete(&mut flying);
            if flying.is_empty() && run.finished() {
                break;
            }
            if !moved {
                let now = run.epoch.elapsed().as_secs_f64();
                let nap =
                    Duration::from_secs_f64((next_release - now).clamp(0.0, NAP.as_secs_f64()));
                std::thread::sleep(nap);
            }
        }
    });
    run.free_messages();
    if run.give_back.is_some() {
        // Own items left towards the predecessor from the front, towards the
        // successor from the back (every send posted has completed).
        let own = run.own_items;
        arena.gave_back(
            run.outs[1].sent.min(own) as usize,
            run.outs[0].sent.min(own) as usize,
        );
    }

    // The transfers from the agreement to start on: a rank that arrived
    // early (its own work before the call took less time) waits for the others
    // in the agreement, not in its transfers.
    let transfer_seconds = run.epoch.elapsed().as_secs_f64();
    // On error the arena, dropped, puts the own items back.
    let (outs, ins) = (&run.outs, &run.ins);
    agree_to_commit(
        comm,
        &local,
        [outs[0].sent, outs[1].sent, ins[0].received, ins[1].received],
        run.protocol.take(),
        options.fault_of(rank) == Some(Fault::FailBeforeCommit),
        run.received_kept - run.sent_away,
    )?;
    // The new items, local positions keep_from .. keep_to (from the start of
    // the arena when some come from the predecessor), move to the front.
    let (keep_from, keep_to) = (-local.f_in, local.load - local.f_out);
    let start = keep_from.clamp(0, local.load) as usize;
    arena.commit(start, start + (keep_to - keep_from) as usize);
    Ok(RedistributionReport {
        first: 0,
        items_sent: outs.iter().map(|o| o.sent).sum(),
        items_received: ins.iter().map(|i| i.received).sum(),
        rounds: run.messages_sent + run.messages_received,
        messages_sent: run.messages_sent,
        most_passed_on: run.most_passed_on,
        seconds: started.elapsed().as_secs_f64(),
        transfer_seconds,
        messages: run.recorder.finish(),
    })
}

/// A send in flight: its side, items, when it began (recorder time), the
/// chunks of the stage it holds, and its request.
struct Flying<'s, Sc: Scope<'s>> {
    side: usize,
    items: u64,
    /// The depths of the own items it carries (empty: none).
    own: (u64, u64),
    start: f64,
    ids: Range<usize>,
    request: Request<'s, [u8], Sc>,
}

/// A redistribution along planned messages under way at one rank: its sends
/// and receives per side (0: clockwise, 1: counterclockwise), the items it
/// passes on, the arena lent to the messages, and what it has seen so far.
struct Run<'a> {
    comm: &'a SimpleCommunicator,
    /// Where each side sends, and receives from.
    peers: [i32; 2],
    sources: [i32; 2],
    outs: Vec<Out<'a>>,
    ins: Vec<In<'a>>,
    stages: [Stage; 2],
    /// Items this rank passes on, per side, and the items it receives.
    forwards: [u64; 2],
    totals: [u64; 2],
    /// Items a message may hold, and a train's piece.
    sizes: (u64, u64),
    /// Items to pass on a side may hold beyond what its next send needs.
    room: u64,
    pacing: bool,
    /// One port for this rank's sends with emulated links: its transfers in
    /// the plan's order (start, then side), the next one to begin, and when
    /// the port is free.
    order: Vec<(usize, usize)>,
    next_in_order: usize,
    port_free: f64,
    load: i128,
    own_items: u64,
    item_bytes: usize,
    /// Where each zone of items kept starts in the arena, and the own items,
    /// in bytes.
    zone_start: [usize; 2],
    own_start: usize,
    lender: Lender,
    positions: Positions,
    fault: Option<Fault>,
    sent_away: Checksum,
    received_kept: Checksum,
    messages_sent: u64,
    messages_received: u64,
    most_passed_on: u64,
    protocol: Option<String>,
    /// Spoiled copies sent by a faulty rank, and the datatypes and views of
    /// messages gathered from several places, kept until their sends
    /// complete ([`Run::free_messages`]).
    spoiled: Vec<Vec<u8>>,
    gathers: Vec<*mut UserDatatype>,
    views: Vec<*mut View<'static, 'static, UserDatatype, [u8]>>,
    recorder: Recorder,
    recorder_on: bool,
    /// The emulated links' clock, started once every rank has agreed to
    /// start, and its `MPI_Wtime`.
    epoch: Instant,
    epoch_wtime: f64,
    /// The own items' memory given back as they leave, when it is
    /// ([`crate::buffer::ItemBuffer::set_give_back_sent`]), and per side the
    /// own items whose sends completed: all of depths below the first
    /// number, and the ranges completed beyond it.
    give_back: Option<GiveBack>,
    own_left: [(u64, Vec<(u64, u64)>); 2],
}

impl<'a> Run<'a> {
    /// The run of `rank` of `comm` on `loads` (its part `local`), along
    /// `batches`, items of `item_bytes` bytes in the arena of `lender`.
    fn new(
        comm: &'a SimpleCommunicator,
        (loads, local): (&[u64], &Local),
        (batches, options): (&'a Batches, &'a Options),
        (item_bytes, lender): (usize, Lender),
    ) -> Run<'a> {
        let n = loads.len();
        let rank = comm.rank() as usize;
        let recorder = Recorder::new(options.record);
        let epoch_wtime = recorder.now();
        let (pred, succ) = ((rank + n - 1) % n, (rank + 1) % n);
        let chunk_items = options.chunk_items(item_bytes) as u64;
        let pacing = options.pacing.as_ref();
        // Each stream's transfers on its emulated link (every rank checked its
        // own streams' before the run began).
        let paced = |k: usize| {
            pacing
                .and_then(|p| Paced::of(p.stream(k), batches.stream(k)))
                .unwrap_or_default()
        };
        let outs: Vec<Out> = [2 * rank, 2 * rank + 1]
            .into_iter()
            .map(|k| {
                let planned = batches.stream(k);
                let before = planned
                    .iter()
                    .scan(0u64, |sum, b| {
                        let at = *sum;
                        *sum += b.items;
                        Some(at)
                    })
                    .collect();
                Out {
                    planned,
                    paced: paced(k),
                    begins: vec![None; planned.len()],
                    before,
                    cursor: Cursor::default(),
                    sent: 0,
                }
            })
            .collect();
        let ins: Vec<In> = [2 * pred, 2 * succ + 1]
            .into_iter()
            .map(|k| In {
                planned: batches.stream(k),
                cursor: Cursor::default(),
                received: 0,
                arrivals: Vec::new(),
                paced: paced(k),
                waiting_since: epoch_wtime,
            })
            .collect();
        let mut order: Vec<(usize, usize)> = (0..2)
            .flat_map(|side| (0..outs[side].paced.len()).map(move |j| (side, j)))
            .collect();
        order.sort_by(|&(s, j), &(t, k)| {
            outs[s].paced[j]
                .start()
                .total_cmp(&outs[t].paced[k].start())
                .then(s.cmp(&t))
        });
        let forwards = [
            local.forwards_clockwise(),
            local.forwards_counterclockwise(),
        ];
        let totals = [local.items_from_pred(), local.items_from_succ()];
        let kept_before = (totals[0] - forwards[0]) as usize;
        let own_items = loads[rank];
        Run {
            comm,
            peers: [succ as i32, pred as i32],
            sources: [pred as i32, succ as i32],
            outs,
            ins,
            stages: [Stage::default(), Stage::default()],
            forwards,
            totals,
            sizes: (
                (MAX_MESSAGE_BYTES / item_bytes.max(1)).max(1) as u64,
                chunk_items,
            ),
            room: STAGED_CHUNKS * chunk_items,
            pacing: pacing.is_some(),
            order,
            next_in_order: 0,
            port_free: 0.0,
            load: local.load,
            own_items,
            item_bytes,
            zone_start: [0, (kept_before + own_items as usize) * item_bytes],
            own_start: kept_before * item_bytes,
            lender,
            positions: Positions::of(loads, rank, item_bytes),
            fault: options.fault_of(rank).filter(|f| f.spoils_a_message()),
            sent_away: Checksum::ZERO,
            received_kept: Checksum::ZERO,
            messages_sent: 0,
            messages_received: 0,
            most_passed_on: 0,
            protocol: None,
            spoiled: Vec::new(),
            gathers: Vec::new(),
            views: Vec::new(),
            recorder,
            recorder_on: options.record,
            epoch: Instant::now(),
            epoch_wtime,
            give_back: None,
            own_left: [(0, Vec::new()), (0, Vec::new())],
        }
    }

    /// Whether every message has been sent and received (sends may still be
    /// in flight).
    fn finished(&self) -> bool {
        let sizes = self.sizes;
        self.outs
            .iter()
            .all(|o| o.cursor.peek(o.planned, sizes).is_none())
            && self
                .ins
                .iter()
                .all(|i| i.cursor.peek(i.planned, sizes).is_none())
    }

    /// The bytes `range` of the arena's zone of items kept on `side`, for the
    /// items of depths `depths`.
    fn kept_range(&self, side: usize, depths: (u64, u64)) -> Range<usize> {
        let zone = (self.forwards[side], self.totals[side]);
        let range = depth_bytes(side, zone, depths, self.item_bytes);
        self.zone_start[side] + range.start..self.zone_start[side] + range.end
    }

    /// Receives what has arrived, straight into its places: items kept into
    /// the arena, items to pass on into their stage, while there is room for
    /// them ([`admits`]). Returns whether anything arrived.
    fn receive(&mut self) -> bool {
        let mut moved = false;
        for (side, tag) in TAGS.into_iter().enumerate() {
            while let Some(piece) = self.ins[side]
                .cursor
                .peek(self.ins[side].planned, self.sizes)
            {
                let d = self.ins[side].received;
                let passed = (d, (d + piece.items).min(self.forwards[side]).max(d));
                let out = &self.outs[side];
                let needed = (out.cursor.peek(out.planned, self.sizes))
                    .is_some_and(|p| (out.sent + p.items).saturating_sub(self.own_items) > d);
                let stage = &self.stages[side];
                let room = (stage.held(), self.room);
                if !admits(passed.1 - passed.0, room, needed, stage.flying()) {
                    break;
                }
                let source = self.comm.process_at_rank(self.sources[side]);
                let Some((message, status)) = source.immediate_matched_probe_with_tag(tag) else {
                    break;
                };
                let got = status.count(u8::equivalent_datatype()).max(0) as usize;
                self.receive_piece(side, piece, (message, got));
                moved = true;
            }
        }
        // Items passed on held now, at their most (before any leaves).
        let held = self.stages[0].held() + self.stages[1].held();
        self.most_passed_on = self.most_passed_on.max(held);
        moved
    }

    /// Receives `piece` on `side`, a message of `got` bytes: items kept into
    /// their place in the arena (hashed), items to pass on into a new chunk of
    /// the stage, both at once (a datatype) when it holds both; a message of
    /// another size is dropped (the items read as zeros) and the run fails.
    fn receive_piece(&mut self, side: usize, piece: Piece, (message, got): (Message, usize)) {
        let (b, d, k) = (self.item_bytes, self.ins[side].received, piece.items);
        let passed = (d, (d + k).min(self.forwards[side]).max(d));
        let kept = (d.max(self.forwards[side]), d + k);
        let passing = (passed.1 - passed.0) as usize;
        let staged = self.stages[side].buffer(passing * b);
        let mut regions = Vec::new();
        if kept.0 < kept.1 {
            // SAFETY: items not received yet: nothing else lends them.
            let region = unsafe { self.lender.write(self.kept_range(side, kept)) };
            regions.push(Region(region.as_ptr(), region.len()));
        }
        if passing > 0 {
            let part = Region(staged.as_ptr(), staged.len());
            // Clockwise messages carry the deepest items first.
            if side == 0 {
                regions.push(part);
            } else {
                regions.insert(0, part);
            }
        }
        let expected = k as usize * b;
        if got == expected && regions.len() == 1 {
            // SAFETY: the region is the arena's (as above) or the new stage
            // buffer's, `expected` bytes.
            let region =
                unsafe { std::slice::from_raw_parts_mut(regions[0].0.cast_mut(), regions[0].1) };
            message.matched_receive_into(region);
        } else if got == expected {
            let datatype = gather_type(&regions);
            // SAFETY: the datatype maps exactly the regions (in the arena,
            // items not received yet, and the new stage buffer), `expected`
            // bytes, and nothing else.
            let mut view = unsafe {
                let base = std::slice::from_raw_parts_mut(regions[0].0.cast_mut(), 0);
                MutView::with_count_and_datatype(base, 1, &datatype)
            };
            message.matched_receive_into(&mut view);
        } else {
            // A message of another size (a fault): dropped; the items read as
            // zeros, sent on as such, and the run fails.
            let mut scratch = vec![0u8; got];
            message.matched_receive_into(&mut scratch[..]);
            for r in &regions {
                // SAFETY: as above.
                unsafe { std::ptr::write_bytes(r.0.cast_mut(), 0, r.1) };
            }
            self.protocol.get_or_insert(format!(
                "from rank {}: a message of {got} bytes where the plan has {expected}",
                self.sources[side]
            ));
        }
        // The items kept: hashed now, while in cache.
        if kept.0 < kept.1 {
            // SAFETY: received above, never written again.
            let bytes = unsafe { self.lender.read(self.kept_range(side, kept)) };
            let at = received_at(side, self.load, kept);
            self.received_kept += self.positions.sum_at(at, bytes);
        }
        if passing > 0 {
            self.stages[side].chunks.push_back(Staged {
                lo: passed.0,
                hi: passed.1,
                bytes: staged,
                flying: 0,
            });
        }
        let input = &mut self.ins[side];
        input.received += k;
        input.cursor.advance(piece);
        input
            .arrivals
            .push((input.received, self.epoch.elapsed().as_secs_f64()));
        self.messages_received += 1;
        let end = self.recorder.now();
        // With emulated links, from when the message began to cross (its
        // planned duration before its arrival).
        let crossing = input.paced.get(piece.batch).map_or(f64::INFINITY, |p| {
            if input.planned[piece.batch].message {
                p.crossed(input.planned[piece.batch].items)
            } else {
                p.crossed(piece.through) - p.crossed(piece.through - k)
            }
        });
        let span = (input.waiting_since.max(end - crossing), end);
        input.waiting_since = end;
        let from = Some(self.sources[side] as usize);
        self.recorder.record(Direction::Receive, from, (k, 0), span);
    }

    /// Emulated links: the transfers whose begin is now known, in the port's
    /// order (see the module's docs).
    fn schedule(&mut self) {
        while let Some(&(side, j)) = self.order.get(self.next_in_order) {
            let out = &self.outs[side];
            let (paced, items) = (out.paced[j], out.planned[j].items);
            let held_at = if out.planned[j].message {
                let needed = (out.before[j] + items).saturating_sub(self.own_items);
                match self.ins[side].held_at(needed) {
                    Some(at) => at,
                    None => break,
                }
            } else {
                0.0
            };
            let begin = paced.start().max(held_at).max(self.port_free);
            self.port_free = begin + paced.crossed(items);
            self.outs[side].begins[j] = Some(begin);
            self.next_in_order += 1;
        }
    }

    /// Sends what is held (and, with emulated links, has crossed its link),
    /// straight from where it is ([`Run::post`]). Returns whether anything
    /// left, and when the next message of an emulated link leaves.
    fn send<'s, Sc: Scope<'s> + Copy>(
        &mut self,
        scope: Sc,
        flying: &mut Vec<Flying<'s, Sc>>,
    ) -> (bool, f64) {
        let now = self.epoch.elapsed().as_secs_f64();
        let (mut moved, mut next_release) = (false, f64::INFINITY);
        for side in 0..2 {
            while let Some(piece) = self.outs[side]
                .cursor
                .peek(self.outs[side].planned, self.sizes)
            {
                let out = &self.outs[side];
                let needed = (out.sent + piece.items).saturating_sub(self.own_items);
                if self.ins[side].received < needed {
                    break;
                }
                let leaves = if self.pacing {
                    let Some(begin) = out.begins[piece.batch] else {
                        break;
                    };
                    let paced = out.paced[piece.batch];
                    let message = out.planned[piece.batch].message;
                    let crossed = if message {
                        out.planned[piece.batch].items
                    } else {
                        piece.through
                    };
                    let leaves = begin + paced.crossed(crossed);
                    if leaves > now {
                        next_release = next_release.min(leaves);
                        break;
                    }
                    // The message's start on the emulated link.
                    let first = if message {
                        0
                    } else {
                        piece.through - piece.items
                    };
                    Some(begin + paced.crossed(first))
                } else {
                    None
                };
                flying.push(self.post(scope, side, piece, leaves));
                moved = true;
            }
        }
        (moved, next_release)
    }

    /// Posts `piece` of `side`, which began to cross its emulated link at
    /// `leaves` (if emulated): own items where they are (hashed), items passed
    /// on from their stage, gathered by a datatype when in several places
    /// (clockwise the deepest first); a faulty rank's first message spoiled
    /// (a copy).
    fn post<'s, Sc: Scope<'s>>(
        &mut self,
        scope: Sc,
        side: usize,
        piece: Piece,
        leaves: Option<f64>,
    ) -> Flying<'s, Sc> {
        let (b, own_items) = (self.item_bytes, self.own_items);
        let sent = self.outs[side].sent;
        let depths = (sent, sent + piece.items);
        let own_part = (depths.0.min(own_items), depths.1.min(own_items));
        let (mut regions, ids) = if depths.1 > own_items {
            let received = (depths.0.max(own_items) - own_items, depths.1 - own_items);
            self.stages[side].regions(side, received, b)
        } else {
            (Vec::new(), 0..0)
        };
        if own_part.0 < own_part.1 {
            let range = depth_bytes(side, (0, own_items), own_part, b);
            let range = self.own_start + range.start..self.own_start + range.end;
            // SAFETY: own items, never written before the commit.
            let own = unsafe { self.lender.read(range) };
            let at = own_at(side, self.load, own_part);
            self.sent_away += self.positions.sum_at(at, own);
            let part = Region(own.as_ptr(), own.len());
            if side == 0 {
                regions.push(part);
            } else {
                regions.insert(0, part);
            }
        }
        self.stages[side].mark(&ids, true);
        let start = match leaves {
            Some(at) if self.recorder_on => self.epoch_wtime + at,
            _ => self.recorder.now(),
        };
        let to = self.comm.process_at_rank(self.peers[side]);
        let request = if let Some(fault) = self.fault.take() {
            // A faulty rank spoils a copy of its first message.
            let data: Vec<u8> = regions
                .iter()
                // SAFETY: the regions are held (as above).
                .flat_map(|r| unsafe { std::slice::from_raw_parts(r.0, r.1) })
                .copied()
                .collect();
            self.spoiled.push(spoil(fault, &data, b));
            let copy = self.spoiled.last().expect("pushed");
            // SAFETY: the copy's heap buffer stays put (never written) until
            // `spoiled` is dropped, after the scope.
            let data = unsafe { std::slice::from_raw_parts(copy.as_ptr(), copy.len()) };
            to.immediate_send_with_tag(scope, data, TAGS[side])
        } else if regions.len() == 1 {
            // SAFETY: own items (never written) or items passed on (written
            // once, before; held until this send completes).
            let data = unsafe { std::slice::from_raw_parts(regions[0].0, regions[0].1) };
            to.immediate_send_with_tag(scope, data, TAGS[side])
        } else {
            let gather = Box::into_raw(Box::new(gather_type(&regions)));
            self.gathers.push(gather);
            // SAFETY: the datatype and the view live until after the scope
            // (`free_messages`); the datatype maps exactly the regions, held
            // as above until the send completes.
            let view = unsafe {
                let base = std::slice::from_raw_parts(regions[0].0, 0);
                Box::into_raw(Box::new(View::with_count_and_datatype(base, 1, &*gather)))
            };
            self.views.push(view);
            // SAFETY: as above; the request, the same MPI request seen as one
            // over bytes, completes within the scope.
            unsafe {
                let request = to.immediate_send_with_tag(scope, &*view, TAGS[side]);
                let (raw, _, scope) = request.into_raw();
                let base = std::slice::from_raw_parts(regions[0].0, 0);
                Request::from_raw(raw, base, scope)
            }
        };
        let out = &mut self.outs[side];
        out.sent += piece.items;
        out.cursor.advance(piece);
        self.messages_sent += 1;
        Flying {
            side,
            items: piece.items,
            own: own_part,
            start,
            ids,
            request,
        }
    }

    /// Records the sends of `flying` that have completed and drops the items
    /// passed on that have all left.
    fn complete<'s, Sc: Scope<'s>>(&mut self, flying: &mut Vec<Flying<'s, Sc>>) {
        let mut still = Vec::with_capacity(flying.len());
        for f in flying.drain(..) {
            match f.request.test() {
                Ok(_) => {
                    let to = Some(self.peers[f.side] as usize);
                    let span = (f.start, self.recorder.now());
                    self.recorder
                        .record(Direction::Send, to, (f.items, 0), span);
                    self.stages[f.side].mark(&f.ids, false);
                    if self.give_back.is_some() && f.own.0 < f.own.1 {
                        self.own_left(f.side, f.own);
                    }
                }
                Err(request) => still.push(Flying { request, ..f }),
            }
        }
        *flying = still;
        for side in 0..2 {
            let posted = self.outs[side].sent.saturating_sub(self.own_items);
            self.stages[side].release(posted);
        }
    }

    /// The own items of depths `lo .. hi` of `side` left (their send
    /// completed): once every own item nearer the boundary has too, the
    /// memory of those that left is given back ([`Run::give_back`]).
    fn own_left(&mut self, side: usize, (lo, hi): (u64, u64)) {
        let (prefix, done) = &mut self.own_left[side];
        done.push((lo, hi));
        while let Some(k) = done.iter().position(|r| r.0 == *prefix) {
            *prefix = done.swap_remove(k).1;
        }
        let left = (self.own_left[1].0, self.own_left[0].0);
        if let Some(give_back) = &mut self.give_back {
            // SAFETY: own items whose sends completed, in an item buffer (only
            // they give back); a message reads only own items still to leave
            // (each is sent once), and the checks hashed them as they left.
            unsafe { give_back.left(left, self.item_bytes) };
        }
    }

    /// Frees the spoiled copies, datatypes and views of the messages sent,
    /// once every send has completed (after the scope).
    fn free_messages(&mut self) {
        self.spoiled.clear();
        for (gather, view) in self.gathers.drain(..).zip(self.views.drain(..)) {
            // SAFETY: made by `Box::into_raw` in `post`, their sends completed.
            unsafe {
                drop(Box::from_raw(view));
                drop(Box::from_raw(gather));
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const fn message(items: u64) -> PlannedBatch {
        PlannedBatch {
            items,
            message: true,
        }
    }

    /// Each transfer takes the next batches whose items add up to its own; a
    /// paced train's two (its first item after 1 s, the others every 0.5 s)
    /// time its items by both.
    #[test]
    fn transfers_take_their_pacing_batches() {
        let train = PlannedBatch {
            items: 4,
            message: false,
        };
        let planned = [message(2), train];
        let paced = [(0.0, 2, 1.5), (3.0, 1, 1.0), (4.0, 3, 0.5)];
        let all = Paced::of(&paced, &planned).unwrap();
        assert_eq!(all.len(), 2);
        assert_eq!((all[0].start(), all[0].crossed(2)), (0.0, 3.0));
        assert_eq!(all[1].start(), 3.0);
        let times: Vec<f64> = (0..=4).map(|k| all[1].crossed(k)).collect();
        assert_eq!(times, [0.0, 1.0, 1.5, 2.0, 2.5]);
    }

    /// Batches that do not hold exactly the transfers' items are refused: too
    /// few (none at all included), too many, or split across two transfers.
    #[test]
    fn pacing_batches_that_do_not_fit_are_refused() {
        let planned = [message(2), message(3)];
        for paced in [
            &[][..],
            &[(0.0, 2, 1.0)][..],
            &[(0.0, 2, 1.0), (2.0, 3, 1.0), (5.0, 1, 1.0)][..],
            &[(0.0, 3, 1.0), (3.0, 2, 1.0)][..],
            &[(0.0, 1, 1.0), (1.0, 2, 1.0), (3.0, 2, 1.0)][..],
        ] {
            assert!(Paced::of(paced, &planned).is_none(), "{paced:?}");
        }
        assert!(Paced::of(&[], &[]).is_some_and(|all| all.is_empty()));
    }
}
