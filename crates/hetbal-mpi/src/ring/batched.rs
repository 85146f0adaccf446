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
//! on. The room holds no rank back for ever: a rank that passes nothing on
//! takes every message, and on a chain of forwarders each one's sends end once
//! the next one's do. A circulation (every rank passing items on one way),
//! where waiting for room could go round the ring, runs in chunks instead
//! (see [`super::redistribute`]).

use std::collections::VecDeque;
use std::mem::size_of;
use std::ops::Range;
use std::time::{Duration, Instant};

use bytemuck::Pod;

use crate::checksum::Checksum;
use mpi::datatype::{MutView, UserDatatype, View};
use mpi::point_to_point::{Destination, Source};
use mpi::request::Request;
use mpi::topology::SimpleCommunicator;
use mpi::traits::{Communicator, Equivalence};
use mpi::{Address, Count};

use super::chunked::STAGED_CHUNKS;
use super::{
    agree_to_commit, depth_bytes, own_at, received_at, start_checks, Batches, Job, Local,
    PlannedBatch, Positions, RedistributionReport, TAG_CLOCKWISE, TAG_COUNTERCLOCKWISE,
};
use crate::arena::Arena;
use crate::pacing::Batch;
use crate::protocol::{spoil, Fault, MAX_MESSAGE_BYTES};
use crate::timeline::{Direction, Recorder};
#[cfg(doc)]
use crate::Options;
use crate::RunError;

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
    /// The emulated link's batches (the plan's times), empty without.
    paced: &'a [Batch],
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
    /// The sender's emulated link's batches (the plan's times), empty without.
    paced: &'a [Batch],
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
        let same = paced.stream(k).len() == batches.stream(k).len()
            && paced
                .stream(k)
                .iter()
                .zip(batches.stream(k))
                .all(|(p, b)| p.1 == b.items);
        (!same).then(|| {
            format!("the pacing's stream {k} does not hold the batches' transfers at rank {rank}")
        })
    })
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
/// [`super::redistribute`]).
pub(super) fn run<E: Pod>(
    comm: &SimpleCommunicator,
    job: Job<'_, E>,
    batches: &Batches,
) -> Result<RedistributionReport, RunError> {
    let (loads, flows, item_len, options) = (job.loads, job.flows, job.item_len, job.options);
    let items = job.items;
    let started = Instant::now();
    let n = loads.len();
    let rank = comm.rank() as usize;
    let item_bytes = item_len * size_of::<E>();
    let held = items.len() * size_of::<E>();
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
    let mut arena = Arena::agreed(comm, (checked, fingerprint), items, item_len, around)?;
    let recorder_on = options.record;
    let mut recorder = Recorder::new(recorder_on);
    // The emulated links' clock starts once every rank has agreed to start.
    let epoch = Instant::now();
    let epoch_wtime = recorder.now();
    let (pred, succ) = ((rank + n - 1) % n, (rank + 1) % n);
    let peers = [succ as i32, pred as i32]; // where each side sends
    let sources = [pred as i32, succ as i32]; // where each side receives from
    let tags = [TAG_CLOCKWISE, TAG_COUNTERCLOCKWISE];
    let chunk_items = options.chunk_items(item_bytes) as u64;
    let sizes = (
        (MAX_MESSAGE_BYTES / item_bytes.max(1)).max(1) as u64,
        chunk_items,
    );
    let room = STAGED_CHUNKS * chunk_items;
    let pacing = options.pacing.as_ref();
    let mut outs: Vec<Out> = [2 * rank, 2 * rank + 1]
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
                paced: pacing.map_or(&[][..], |p| p.stream(k)),
                begins: vec![None; planned.len()],
                before,
                cursor: Cursor::default(),
                sent: 0,
            }
        })
        .collect();
    let mut ins: Vec<In> = [2 * pred, 2 * succ + 1]
        .into_iter()
        .map(|k| In {
            planned: batches.stream(k),
            cursor: Cursor::default(),
            received: 0,
            arrivals: Vec::new(),
            paced: pacing.map_or(&[][..], |p| p.stream(k)),
            waiting_since: epoch_wtime,
        })
        .collect();
    let mut stages = [Stage::default(), Stage::default()];
    // One port for this rank's sends with emulated links: its transfers in the
    // plan's order (start, then side).
    let mut order: Vec<(usize, usize)> = (0..2)
        .flat_map(|side| (0..outs[side].paced.len()).map(move |j| (side, j)))
        .collect();
    order.sort_by(|&(s, j), &(t, k)| {
        outs[s].paced[j]
            .0
            .total_cmp(&outs[t].paced[k].0)
            .then(s.cmp(&t))
    });
    let (mut next_in_order, mut port_free) = (0usize, 0.0f64);

    let load = local.load;
    let own_items = loads[rank];
    let b = item_bytes;
    // Where each zone starts in the arena, in bytes.
    let zone_start = [0, (kept[0] + own_items) as usize * b];
    let own_start = kept[0] as usize * b;
    let positions = Positions::of(loads, rank, item_bytes);
    let mut my_fault = options.fault_of(rank).filter(|f| f.spoils_a_message());
    let failing = options.fault_of(rank) == Some(Fault::FailBeforeCommit);
    let (mut sent_away, mut received_kept) = (Checksum::ZERO, Checksum::ZERO);
    let (mut messages_sent, mut messages_received, mut most_passed_on) = (0u64, 0u64, 0u64);
    let mut protocol: Option<String> = None;
    // Spoiled copies sent by a faulty rank, and the datatypes and views of
    // messages gathered from several places, kept until their sends complete.
    let mut spoiled: Vec<Vec<u8>> = Vec::new();
    let mut gathers: Vec<*mut (UserDatatype, [u8; 0])> = Vec::new();
    let mut views: Vec<*mut View<'static, 'static, UserDatatype, [u8]>> = Vec::new();
    let bytes = arena.bytes();
    let lender = Lender {
        base: bytes.as_mut_ptr(),
        len: bytes.len(),
    };

    mpi::request::scope(|scope| {
        // Sends in flight: (side, items, start of the message, chunks of the
        // stage it holds, request).
        let mut flying = Vec::new();
        loop {
            let mut moved = false;
            // Receive what has arrived, straight into its places: items kept
            // into the arena, items to pass on into their stage, while there
            // is room for them.
            for (side, input) in ins.iter_mut().enumerate() {
                while let Some(piece) = input.cursor.peek(input.planned, sizes) {
                    let (d, k) = (input.received, piece.items);
                    let passed = (d, (d + k).min(forwards[side]).max(d));
                    let kept_part = (d.max(forwards[side]), d + k);
                    let needed = outs[side]
                        .cursor
                        .peek(outs[side].planned, sizes)
                        .is_some_and(|p| (outs[side].sent + p.items).saturating_sub(own_items) > d);
                    let stage = &mut stages[side];
                    let passing = passed.1 - passed.0;
                    if !admits(passing, (stage.held(), room), needed, stage.flying()) {
                        break;
                    }
                    let source = comm.process_at_rank(sources[side]);
                    let Some((message, status)) =
                        source.immediate_matched_probe_with_tag(tags[side])
                    else {
                        break;
                    };
                    let got = status.count(u8::equivalent_datatype()).max(0) as usize;
                    let mut staged = stage.buffer(passing as usize * b);
                    let mut regions = Vec::new();
                    if kept_part.0 < kept_part.1 {
                        let zone = (forwards[side], totals[side]);
                        let range = depth_bytes(side, zone, kept_part, b);
                        let range = zone_start[side] + range.start..zone_start[side] + range.end;
                        // SAFETY: items not received yet: nothing else lends them.
                        let region = unsafe { lender.write(range) };
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
                        // SAFETY: the region is the arena's (as above) or the
                        // new stage buffer's, `expected` bytes.
                        let region = unsafe {
                            std::slice::from_raw_parts_mut(regions[0].0.cast_mut(), regions[0].1)
                        };
                        message.matched_receive_into(region);
                    } else if got == expected {
                        let datatype = gather_type(&regions);
                        // SAFETY: the datatype maps exactly the regions (in the
                        // arena, items not received yet, and the new stage
                        // buffer), `expected` bytes, and nothing else.
                        let mut view = unsafe {
                            let base = std::slice::from_raw_parts_mut(regions[0].0.cast_mut(), 0);
                            MutView::with_count_and_datatype(base, 1, &datatype)
                        };
                        message.matched_receive_into(&mut view);
                    } else {
                        // A message of another size (a fault): dropped; the
                        // items read as zeros, sent on as such, and the run
                        // fails.
                        let mut scratch = vec![0u8; got];
                        message.matched_receive_into(&mut scratch[..]);
                        for r in &regions {
                            // SAFETY: as above.
                            unsafe { std::ptr::write_bytes(r.0.cast_mut(), 0, r.1) };
                        }
                        protocol.get_or_insert(format!(
                            "from rank {}: a message of {got} bytes where the plan has {expected}",
                            sources[side]
                        ));
                    }
                    // The items kept: hashed now, while in cache.
                    if kept_part.0 < kept_part.1 {
                        let zone = (forwards[side], totals[side]);
                        let range = depth_bytes(side, zone, kept_part, b);
                        let range = zone_start[side] + range.start..zone_start[side] + range.end;
                        // SAFETY: received above, never written again.
                        let kept = unsafe { lender.read(range) };
                        received_kept += positions.sum_at(received_at(side, load, kept_part), kept);
                    }
                    if passing > 0 {
                        staged.truncate(passing as usize * b);
                        stage.chunks.push_back(Staged {
                            lo: passed.0,
                            hi: passed.1,
                            bytes: std::mem::take(&mut staged),
                            flying: 0,
                        });
                    }
                    input.received += piece.items;
                    input.cursor.advance(piece);
                    input
                        .arrivals
                        .push((input.received, epoch.elapsed().as_secs_f64()));
                    messages_received += 1;
                    let end = recorder.now();
                    let from = Some(sources[side] as usize);
                    // With emulated links, from when the message began to
                    // cross (its planned duration before its arrival).
                    let crossing = input.paced.get(piece.batch).map_or(f64::INFINITY, |b| {
                        let items = if input.planned[piece.batch].message {
                            b.1
                        } else {
                            piece.items
                        };
                        items as f64 * b.2.max(0.0)
                    });
                    let span = (input.waiting_since.max(end - crossing), end);
                    recorder.record(Direction::Receive, from, (piece.items, 0), span);
                    input.waiting_since = end;
                    moved = true;
                }
            }
            // Items passed on held now, at their most (before any leaves).
            most_passed_on = most_passed_on.max(stages[0].held() + stages[1].held());
            // Emulated links: the transfers whose begin is now known, in the
            // port's order.
            while let Some(&(side, j)) = order.get(next_in_order) {
                let out = &outs[side];
                let (start, items, cost) = out.paced[j];
                let held_at = if out.planned[j].message {
                    let needed = (out.before[j] + items).saturating_sub(load as u64);
                    match ins[side].held_at(needed) {
                        Some(at) => at,
                        None => break,
                    }
                } else {
                    0.0
                };
                let begin = start.max(held_at).max(port_free);
                port_free = begin + items as f64 * cost.max(0.0);
                outs[side].begins[j] = Some(begin);
                next_in_order += 1;
            }
            // Send what is held (and, with emulated links, has crossed its
            // link), straight from where it is.
            let now = epoch.elapsed().as_secs_f64();
            let mut next_release = f64::INFINITY;
            for (side, out) in outs.iter_mut().enumerate() {
                while let Some(piece) = out.cursor.peek(out.planned, sizes) {
                    let needed = (out.sent + piece.items).saturating_sub(load as u64);
                    if ins[side].received < needed {
                        break;
                    }
                    let leaves = if pacing.is_some() {
                        let Some(begin) = out.begins[piece.batch] else {
                            break;
                        };
                        let (_, items, cost) = out.paced[piece.batch];
                        let cost = cost.max(0.0);
                        let crossed = if out.planned[piece.batch].message {
                            items
                        } else {
                            piece.through
                        };
                        let leaves = begin + crossed as f64 * cost;
                        if leaves > now {
                            next_release = next_release.min(leaves);
                            break;
                        }
                        // The message's start on the emulated link.
                        let first = if out.planned[piece.batch].message {
                            0
                        } else {
                            piece.through - piece.items
                        };
                        Some(begin + first as f64 * cost)
                    } else {
                        None
                    };
                    // The message: own items where they are, items passed on
                    // from their stage, gathered by a datatype when in several
                    // places (clockwise the deepest first).
                    let depths = (out.sent, out.sent + piece.items);
                    let own_part = (depths.0.min(own_items), depths.1.min(own_items));
                    let (mut regions, ids) = if depths.1 > own_items {
                        let received = (depths.0.max(own_items) - own_items, depths.1 - own_items);
                        stages[side].regions(side, received, b)
                    } else {
                        (Vec::new(), 0..0)
                    };
                    if own_part.0 < own_part.1 {
                        let range = depth_bytes(side, (0, own_items), own_part, b);
                        let range = own_start + range.start..own_start + range.end;
                        // SAFETY: own items, never written before the commit.
                        let own = unsafe { lender.read(range) };
                        sent_away += positions.sum_at(own_at(side, load, own_part), own);
                        let part = Region(own.as_ptr(), own.len());
                        if side == 0 {
                            regions.push(part);
                        } else {
                            regions.insert(0, part);
                        }
                    }
                    stages[side].mark(&ids, true);
                    let start = match leaves {
                        Some(at) if recorder_on => epoch_wtime + at,
                        _ => recorder.now(),
                    };
                    let to = comm.process_at_rank(peers[side]);
                    let request = if let Some(fault) = my_fault.take() {
                        // A faulty rank spoils a copy of its first message.
                        let data: Vec<u8> = regions
                            .iter()
                            // SAFETY: the regions are held (as above).
                            .flat_map(|r| unsafe { std::slice::from_raw_parts(r.0, r.1) })
                            .copied()
                            .collect();
                        spoiled.push(spoil(fault, &data, item_bytes));
                        let copy = spoiled.last().expect("pushed");
                        // SAFETY: the copy's heap buffer stays put (never
                        // written) until `spoiled` is dropped, after the scope.
                        let data = unsafe { std::slice::from_raw_parts(copy.as_ptr(), copy.len()) };
                        to.immediate_send_with_tag(scope, data, tags[side])
                    } else if regions.len() == 1 {
                        // SAFETY: own items (never written) or items passed on
                        // (written once, before; held until this send completes).
                        let data =
                            unsafe { std::slice::from_raw_parts(regions[0].0, regions[0].1) };
                        to.immediate_send_with_tag(scope, data, tags[side])
                    } else {
                        let gather = Box::into_raw(Box::new((gather_type(&regions), [])));
                        gathers.push(gather);
                        // SAFETY: the datatype and the view live until after
                        // the scope (freed below); the datatype maps exactly
                        // the regions, held as above until the send completes.
                        let view = unsafe {
                            let (datatype, _) = &*gather;
                            let base = std::slice::from_raw_parts(regions[0].0, 0);
                            Box::into_raw(Box::new(View::with_count_and_datatype(
                                base, 1, datatype,
                            )))
                        };
                        views.push(view);
                        // SAFETY: as above; the request, the same MPI request
                        // seen as one over bytes, completes within the scope.
                        unsafe {
                            let request = to.immediate_send_with_tag(scope, &*view, tags[side]);
                            let (raw, _, scope) = request.into_raw();
                            let base = std::slice::from_raw_parts(regions[0].0, 0);
                            Request::from_raw(raw, base, scope)
                        }
                    };
                    flying.push((side, piece.items, start, ids, request));
                    out.sent += piece.items;
                    out.cursor.advance(piece);
                    messages_sent += 1;
                    moved = true;
                }
            }
            // The sends that have completed; the items passed on that have all
            // left.
            let mut still = Vec::with_capacity(flying.len());
            for (side, items, start, ids, request) in flying.drain(..) {
                match request.test() {
                    Ok(_) => {
                        let to = Some(peers[side] as usize);
                        let span = (start, recorder.now());
                        recorder.record(Direction::Send, to, (items, 0), span);
                        stages[side].mark(&ids, false);
                    }
                    Err(request) => still.push((side, items, start, ids, request)),
                }
            }
            flying = still;
            for side in 0..2 {
                stages[side].release(outs[side].sent.saturating_sub(own_items));
            }
            let finished =
                |cursor: &Cursor, planned: &[PlannedBatch]| cursor.peek(planned, sizes).is_none();
            if flying.is_empty()
                && outs.iter().all(|o| finished(&o.cursor, o.planned))
                && ins.iter().all(|i| finished(&i.cursor, i.planned))
            {
                break;
            }
            if !moved {
                let now = epoch.elapsed().as_secs_f64();
                let nap =
                    Duration::from_secs_f64((next_release - now).clamp(0.0, NAP.as_secs_f64()));
                std::thread::sleep(nap);
            }
        }
    });
    drop(spoiled);
    for (gather, view) in gathers.into_iter().zip(views) {
        // SAFETY: made by `Box::into_raw` above, their sends completed.
        unsafe {
            drop(Box::from_raw(view));
            drop(Box::from_raw(gather));
        }
    }

    // The transfers from the agreement to start on: a rank that arrived
    // early (its own work before the call took less time) waits for the others
    // in the agreement, not in its transfers.
    let transfer_seconds = epoch.elapsed().as_secs_f64();
    // On error the arena, dropped, puts the own items back.
    agree_to_commit(
        comm,
        &local,
        [outs[0].sent, outs[1].sent, ins[0].received, ins[1].received],
        protocol,
        failing,
        received_kept - sent_away,
    )?;
    // The new items, local positions keep_from .. keep_to (from the start of
    // the arena when some come from the predecessor), move to the front.
    let (keep_from, keep_to) = (-local.f_in, local.load - local.f_out);
    let start = keep_from.clamp(0, local.load) as usize;
    arena.commit(start, start + (keep_to - keep_from) as usize);
    Ok(RedistributionReport {
        items_sent: outs.iter().map(|o| o.sent).sum(),
        items_received: ins.iter().map(|i| i.received).sum(),
        rounds: messages_sent + messages_received,
        messages_sent,
        most_passed_on,
        seconds: started.elapsed().as_secs_f64(),
        transfer_seconds,
        messages: recorder.finish(),
    })
}
