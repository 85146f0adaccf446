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
//! Memory: as in the chunked runtime there is no second copy of anything: the
//! rank's vector grows in place to `[from the predecessor | own | from the
//! successor]`, messages are sent straight from it and received straight into
//! their places. Unlike the chunked runtime, the items a rank passes on are
//! received there too (a planned message may gather items from several
//! received ones, and must be contiguous), so a forwarding rank holds, until
//! the commit, its items plus every item it receives.

use std::mem::size_of;
use std::ops::Range;
use std::time::{Duration, Instant};

use bytemuck::Pod;

use crate::checksum::Checksum;
use mpi::point_to_point::{Destination, Source};
use mpi::topology::SimpleCommunicator;
use mpi::traits::{Communicator, Equivalence};

use super::{
    agree_to_commit, start_checks, Batches, Job, Local, PlannedBatch, Positions,
    RedistributionReport, TAG_CLOCKWISE, TAG_COUNTERCLOCKWISE,
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
fn batches_problem(
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
    let (from_pred, from_succ) = (local.items_from_pred(), local.items_from_succ());
    // Every item received, kept or passed on, goes to its place in the arena:
    // local position p (negative: from the predecessor) at item p + from_pred.
    let around = (from_pred, from_succ);
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
    let sizes = (
        (MAX_MESSAGE_BYTES / item_bytes.max(1)).max(1) as u64,
        options.chunk_items(item_bytes) as u64,
    );
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
    let b = item_bytes as i128;
    let base = from_pred as i128; // arena item of local position 0
    let byte_range = |lo: i128, hi: i128| ((lo + base) * b) as usize..((hi + base) * b) as usize;
    let positions = Positions::of(loads, rank, item_bytes);
    let (keep_from, keep_to) = (-local.f_in, local.load - local.f_out);
    let forwards = [
        local.forwards_clockwise(),
        local.forwards_counterclockwise(),
    ];
    let mut my_fault = options.fault_of(rank).filter(|f| f.spoils_a_message());
    let failing = options.fault_of(rank) == Some(Fault::FailBeforeCommit);
    let (mut sent_away, mut received_kept) = (Checksum::ZERO, Checksum::ZERO);
    let (mut messages_sent, mut messages_received, mut most_passed_on) = (0u64, 0u64, 0u64);
    let mut protocol: Option<String> = None;
    // Spoiled copies sent by a faulty rank, kept until their sends complete.
    let mut spoiled: Vec<Vec<u8>> = Vec::new();
    let bytes = arena.bytes();
    let lender = Lender {
        base: bytes.as_mut_ptr(),
        len: bytes.len(),
    };

    mpi::request::scope(|scope| {
        // Sends in flight: (side, items, start of the message, request).
        let mut flying = Vec::new();
        loop {
            let mut moved = false;
            // Receive what has arrived, straight into its place.
            for (side, input) in ins.iter_mut().enumerate() {
                while let Some(piece) = input.cursor.peek(input.planned, sizes) {
                    let source = comm.process_at_rank(sources[side]);
                    let Some((message, status)) =
                        source.immediate_matched_probe_with_tag(tags[side])
                    else {
                        break;
                    };
                    let got = status.count(u8::equivalent_datatype()).max(0) as usize;
                    let (k, done) = (i128::from(piece.items), i128::from(input.received));
                    let (lo, hi) = if side == 0 {
                        (-(done + k), -done)
                    } else {
                        (load + done, load + done + k)
                    };
                    let range = byte_range(lo, hi);
                    let expected = range.len();
                    // SAFETY: items not received yet: nothing else lends them.
                    let region = unsafe { lender.write(range.clone()) };
                    if got <= expected {
                        message.matched_receive_into(&mut region[..got]);
                        // A short message (a fault): the rest is zeros, sent
                        // on as such, and the run fails.
                        region[got..].fill(0);
                    } else {
                        let mut scratch = vec![0u8; got];
                        message.matched_receive_into(&mut scratch[..]);
                        region.fill(0);
                    }
                    if got != expected {
                        protocol.get_or_insert(format!(
                            "from rank {}: a message of {got} bytes where the plan has {expected}",
                            sources[side]
                        ));
                    }
                    // The items kept: hashed now, while in cache.
                    let (klo, khi) = (lo.max(keep_from), hi.min(keep_to));
                    if klo < khi {
                        // SAFETY: received above, never written again.
                        let kept = unsafe { lender.read(byte_range(klo, khi)) };
                        received_kept += positions.sum_at(klo, kept);
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
                    let (k, done) = (i128::from(piece.items), i128::from(out.sent));
                    let (lo, hi) = if side == 0 {
                        (load - done - k, load - done)
                    } else {
                        (done, done + k)
                    };
                    // SAFETY: own items (never written) or items received
                    // (written once, before): held, as checked above.
                    let mut data = unsafe { lender.read(byte_range(lo, hi)) };
                    if let Some(fault) = my_fault.take() {
                        spoiled.push(spoil(fault, data, item_bytes));
                        let copy = spoiled.last().expect("pushed");
                        // SAFETY: the copy's heap buffer stays put (never
                        // written) until `spoiled` is dropped, after the scope.
                        data = unsafe { std::slice::from_raw_parts(copy.as_ptr(), copy.len()) };
                    }
                    // The own items leaving: hashed while they fly.
                    let (olo, ohi) = (lo.max(0), hi.min(load));
                    if olo < ohi {
                        // SAFETY: own items, never written before the commit.
                        let own = unsafe { lender.read(byte_range(olo, ohi)) };
                        sent_away += positions.sum_at(olo, own);
                    }
                    let start = match leaves {
                        Some(at) if recorder_on => epoch_wtime + at,
                        _ => recorder.now(),
                    };
                    let to = comm.process_at_rank(peers[side]);
                    let request = to.immediate_send_with_tag(scope, data, tags[side]);
                    flying.push((side, piece.items, start, request));
                    out.sent += piece.items;
                    out.cursor.advance(piece);
                    messages_sent += 1;
                    moved = true;
                }
            }
            // The sends that have completed.
            let mut still = Vec::with_capacity(flying.len());
            for (side, items, start, request) in flying.drain(..) {
                match request.test() {
                    Ok(_) => {
                        let to = Some(peers[side] as usize);
                        let span = (start, recorder.now());
                        recorder.record(Direction::Send, to, (items, 0), span);
                    }
                    Err(request) => still.push((side, items, start, request)),
                }
            }
            flying = still;
            // Items passed on held now.
            let passing: u64 = (0..2)
                .map(|side| {
                    let arrived = ins[side].received.min(forwards[side]);
                    arrived.saturating_sub(outs[side].sent.saturating_sub(load as u64))
                })
                .sum();
            most_passed_on = most_passed_on.max(passing);
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
    let item = |p: i128| (p + base) as usize;
    arena.commit(item(keep_from), item(keep_to));
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
