//! GEN_BLOCK redistributions over MPI: the planned steps run one after the other,
//! each a matching (every rank sends at most one message and receives at most one),
//! so no step has contention. Rank r holds source block r (r < P) and ends with
//! target block r (r < Q); the pieces of one pair of blocks go in array order.
//!
//! The nothing-lost protocol of [`crate::protocol`] applies: what a rank receives
//! goes to its own vector, grown in place around its source block (the target
//! elements before it, then those after it), which is read in place and intact
//! until the commit, and counts and an order-aware
//! checksum are agreed by every rank before any rank commits.
//!
//! Emulated links ([`pacing_from_plan`]) follow the GEN_BLOCK cost model, the only
//! one the instance carries: a step costs `startup + unit * (largest message in
//! it)` and the steps follow each other. So step s starts at `S_s = sum over
//! earlier steps of (startup + unit * largest size)`, and element j (from 1) of a
//! message of step s crosses its link at `S_s + startup + j * unit`: every link has
//! the same cost, and the redistribution lasts the plan's cost.

use std::collections::{HashMap, VecDeque};
use std::time::{Duration, Instant};

use hetbal::genblock::{
    check_schedule, redistribution_graph, GenBlockInstance, Message, StepSchedule,
};
use mpi::topology::SimpleCommunicator;
use mpi::traits::{Communicator, Destination, Equivalence, Source};

use bytemuck::Pod;

use crate::arena::Arena;
use crate::checksum::{range_sum, Checksum};
use crate::comm::Duplicate;
use crate::pacing::sleep_until;
use crate::protocol::{
    agree_before_commit, refuse, sizes_match, spoil, Digest, Fault, LocalChecks,
};
use crate::timeline::{Direction, Message as Record, Recorder};
use crate::{Options, RunError};

/// Tag of GEN_BLOCK messages.
const TAG_STEP: i32 = 31;
/// Bytes of a step's message in flight at most, beyond two chunks (a few MiB: what
/// the last level of cache holds, where the receiver reads what the sender hashed).
const SEND_WINDOW_BYTES: usize = 4 << 20;

/// Emulated links for a GEN_BLOCK schedule, for [`Options::pacing`]: the
/// library's [`hetbal::pacing::genblock_pacing`].
pub use hetbal::pacing::genblock_pacing as pacing_from_plan;

/// What a rank did during a committed GEN_BLOCK redistribution.
#[derive(Clone, Debug, PartialEq)]
pub struct GenBlockReport {
    /// Elements this rank sent (to itself included).
    pub items_sent: u64,
    /// Elements this rank received (from itself included).
    pub items_received: u64,
    /// Wall-clock seconds of the transfer and the checks, on this rank.
    pub seconds: f64,
    /// Wall-clock seconds of the transfer alone (until this rank's last step).
    pub transfer_seconds: f64,
    /// Every message this rank sent to or received from another rank, when
    /// [`Options::record`] is on (else none): one per step and direction (all
    /// its chunks), from the step's start on this rank (with emulated links:
    /// from when the step's links begin to carry elements, if later; the
    /// send's pacing included) to its completion, `MPI_Wtime` seconds.
    pub messages: Vec<Record>,
}

/// Runs a GEN_BLOCK schedule on a communicator of `max(P, Q)` ranks: its steps of
/// messages (from source block, to target block, elements) one after the other.
/// The schedule is checked first with [`check_schedule`]. Counts and an
/// order-aware checksum are agreed by every rank before the commit; on any
/// failure every rank keeps its items. Elements are any plain-old-data type
/// ([`bytemuck::Pod`]); [`run_steps_bytes`] takes raw bytes.
///
/// No second copy of the data: `items` grows in place to hold the part of the
/// target block outside the source block (before it and after it), received
/// there while the source block stays intact; the part of the target block
/// inside the source block does not move (a message of a rank to itself costs
/// nothing); the commit moves the target block in place. A rank's memory is the
/// union of its two blocks: `max(source, target)` elements when one holds the
/// other.
///
/// # Arguments
/// * `comm` - the communicator: rank r holds source block r and gets target block
///   r;
/// * `instance` - the source and target blocks (its costs serve only to pace,
///   through `options`);
/// * `schedule` - the steps, identical on every rank;
/// * `items` - this rank's source block (`source[rank]` elements, empty when
///   rank >= P), replaced by its target block on success;
/// * `options` - message size (larger pieces go in several messages); fault
///   injection: [`Fault::Corrupt`] and [`Fault::Short`] spoil the first chunk of
///   the faulty rank's first message to another rank (of its first message to
///   itself when it sends to no other: its elements then count as corrupted or
///   one short), [`Fault::FailBeforeCommit`] makes it report a failure; emulated
///   links ([`pacing_from_plan`]).
///
/// # Errors
/// On every rank when any rank fails: [`RunError::WorldSize`] for a communicator
/// of the wrong size; [`RunError::InvalidPlan`] when `schedule` is not a schedule
/// of the redistribution (every rule it breaks, see [`check_schedule`]) or the
/// elements have no bytes; [`RunError::WrongLoad`] (on the wrong rank,
/// [`RunError::PeerFailed`] on the others) when a rank's items do not match its
/// block; [`RunError::Protocol`], [`RunError::Verification`] or
/// [`RunError::PeerFailed`] when the checks before the commit fail.
///
/// # Complexity
/// Per rank and step, one nonblocking send and one receive per chunk; the
/// elements that change rank moved once and hashed once on each side; O(messages)
/// to check the schedule.
pub fn run_steps<T: Pod, C: Communicator>(
    comm: &C,
    instance: &GenBlockInstance,
    schedule: &StepSchedule,
    items: &mut Vec<T>,
    options: &Options,
) -> Result<GenBlockReport, RunError> {
    run(comm, instance, schedule, 1, items, options)
}

/// [`run_steps`] for elements given as bytes, `item_bytes` each (0 counts as 1).
///
/// # Errors
/// As [`run_steps`].
///
/// # Complexity
/// As [`run_steps`].
pub fn run_steps_bytes<C: Communicator>(
    comm: &C,
    instance: &GenBlockInstance,
    schedule: &StepSchedule,
    item_bytes: usize,
    items: &mut Vec<u8>,
    options: &Options,
) -> Result<GenBlockReport, RunError> {
    run(comm, instance, schedule, item_bytes.max(1), items, options)
}

/// Where a rank's elements are during a run: its arena holds, in global order,
/// the target elements before its source block, the source block, and the target
/// elements after it.
struct Blocks {
    /// Global positions of the source block.
    source: std::ops::Range<u128>,
    /// Global positions of the target block.
    target: std::ops::Range<u128>,
}

impl Blocks {
    /// Target elements before the source block.
    fn before(&self) -> u128 {
        self.target
            .end
            .min(self.source.start)
            .saturating_sub(self.target.start)
    }

    /// Target elements after the source block.
    fn after(&self) -> u128 {
        self.target
            .end
            .saturating_sub(self.target.start.max(self.source.end))
    }

    /// The arena index of global position `g` (in the source block or the
    /// target block).
    fn index(&self, g: u128) -> u128 {
        let source_len = self.source.end - self.source.start;
        if g < self.source.start {
            g - self.target.start
        } else if g < self.source.end {
            self.before() + g - self.source.start
        } else {
            self.before() + source_len + g - self.target.start.max(self.source.end)
        }
    }
}

/// A GEN_BLOCK run (see [`run_steps`]) of elements of `item_len` elements of `E`.
fn run<E: Pod, C: Communicator>(
    comm: &C,
    instance: &GenBlockInstance,
    schedule: &StepSchedule,
    item_len: usize,
    items: &mut Vec<E>,
    options: &Options,
) -> Result<GenBlockReport, RunError> {
    let started = Instant::now();
    let mut recorder = Recorder::new(options.record);
    let started_at = recorder.now();
    let duplicate = Duplicate::of(comm);
    let comm: &SimpleCommunicator = &duplicate;
    let rank = comm.rank() as usize;
    let (source, target, steps) = (instance.source(), instance.target(), &schedule.steps);
    let n = source.len().max(target.len());
    let item_bytes = item_len * std::mem::size_of::<E>();
    let fingerprint = Digest::new("genblock")
        .add(source)
        .add(target)
        .add(&item_bytes)
        .add(&format!("{steps:?}"))
        .options(options)
        .finish();
    if comm.size() as usize != n {
        let e = RunError::WorldSize {
            ranks: comm.size() as usize,
            processors: n,
        };
        return Err(refuse(comm, e, fingerprint));
    }
    if let Err(violations) = check_schedule(&redistribution_graph(instance), schedule) {
        let reasons: Vec<String> = violations.iter().map(ToString::to_string).collect();
        let e = RunError::InvalidPlan {
            reason: reasons.join("; "),
        };
        return Err(refuse(comm, e, fingerprint));
    }
    let b = item_bytes as u128;
    let starts = |blocks: &[u64]| -> Vec<u128> {
        blocks
            .iter()
            .scan(0u128, |at, &x| {
                let s = *at;
                *at += u128::from(x);
                Some(s)
            })
            .collect()
    };
    let (src_start, dst_start) = (starts(source), starts(target));
    let total: u128 = source.iter().map(|&x| u128::from(x)).sum();
    let my_source = source.get(rank).copied().unwrap_or(0);
    let my_target = target.get(rank).copied().unwrap_or(0);
    let block = |starts: &[u128], len: u64| {
        let s = starts.get(rank).copied().unwrap_or(total);
        s..s + u128::from(len)
    };
    let blocks = Blocks {
        source: block(&src_start, my_source),
        target: block(&dst_start, my_target),
    };
    // Every rank agrees on the sizes before anything moves (the arena must fit in
    // memory too).
    let checked = sizes_match(
        rank,
        items.len() * std::mem::size_of::<E>(),
        u128::from(my_source) * b,
    );
    let (before, after) = (blocks.before(), blocks.after());
    let fit = |k: u128| u64::try_from(k).unwrap_or(u64::MAX);
    let opening = (checked, fingerprint);
    let mut arena = Arena::agreed(comm, opening, items, item_len, (fit(before), fit(after)))?;
    let bytes = arena.bytes();
    let chunk_items = options.chunk_items(item_bytes);
    let chunk = chunk_items * item_bytes;
    let my_fault = options.fault_of(rank);
    // The step whose message a faulty rank spoils: its first one to another rank
    // (else its first one to itself).
    let fault_step = my_fault.filter(|f| f.spoils_a_message()).and_then(|_| {
        let sends_in = |to_others: bool| {
            steps.iter().position(|step| {
                step.iter()
                    .any(|m| m.from == rank && m.size > 0 && (m.to != rank || !to_others))
            })
        };
        sends_in(true).or_else(|| sends_in(false))
    });
    let mut protocol: Option<String> = None;
    // Elements of each pair already moved, to place the next piece (array order).
    let mut sent_of: HashMap<usize, u128> = HashMap::new();
    let mut got_of: HashMap<usize, u128> = HashMap::new();
    // The global positions of message `m`: after the pieces of its pair already
    // moved (`moved[peer]`).
    let place = |m: &Message, moved: &mut HashMap<usize, u128>, peer: usize| {
        let done = moved.entry(peer).or_insert(0);
        let at = src_start[m.from].max(dst_start[m.to]) + *done;
        *done += u128::from(m.size);
        at..at + u128::from(m.size)
    };
    // Byte range in the arena of global positions `g`.
    let byte_range = |g: &std::ops::Range<u128>| {
        let at = blocks.index(g.start);
        (at * b) as usize..((at + (g.end - g.start)) * b) as usize
    };
    // This rank's part of the checksum: the elements received minus those sent
    // to other ranks (the elements it keeps do not move and cancel out).
    let (mut sent_away, mut received_sum) = (Checksum::ZERO, Checksum::ZERO);
    // The source block's bytes in the arena.
    let own = {
        let at = (blocks.before() * b) as usize;
        at..at + (u128::from(my_source) * b) as usize
    };
    for (s, step) in steps.iter().enumerate() {
        let out = step.iter().find(|m| m.from == rank && m.size > 0);
        let inc = step.iter().find(|m| m.to == rank && m.size > 0);
        let spoiling = fault_step == Some(s);
        if let Some(m) = out.filter(|m| m.to == rank) {
            // Elements of this rank's source block that are in its target block:
            // they stay where they are.
            let g = place(m, &mut sent_of, rank);
            place(m, &mut got_of, rank);
            if spoiling {
                // The fault spoils the message this rank would send itself.
                let range = byte_range(&g);
                let first = range.start..range.end.min(range.start + chunk);
                let spoiled = spoil(
                    my_fault.unwrap_or(Fault::Corrupt),
                    &bytes[first.clone()],
                    item_bytes,
                );
                if spoiled.len() != first.len() {
                    protocol.get_or_insert(format!(
                        "step {s}: from rank {rank}, a message of {} bytes where {} were due",
                        spoiled.len(),
                        first.len()
                    ));
                }
                received_sum += range_sum(g.start, total, item_bytes, &spoiled)
                    - range_sum(g.start, total, item_bytes, &bytes[first]);
            }
            continue;
        }
        // Global positions to send (in the source block) and to receive (in the
        // target block, outside the source block).
        let send = out.map(|m| (place(m, &mut sent_of, m.to), m.to));
        let recv = inc
            .filter(|m| m.from != rank)
            .map(|m| (place(m, &mut got_of, m.from), m.from));
        let (before, rest) = bytes.split_at_mut(own.start);
        let (source_bytes, after) = rest.split_at_mut(own.len());
        // A faulty rank spoils the first chunk of its message (a copy: the items
        // stay).
        let spoiled = match (&send, my_fault) {
            (Some((g, _)), Some(fault)) if spoiling => {
                let range = byte_range(g);
                let first =
                    range.start - own.start..(range.end.min(range.start + chunk) - own.start);
                Some(spoil(fault, &source_bytes[first], item_bytes))
            }
            _ => None,
        };
        // (expected, received) bytes of each chunk in.
        let mut got: Vec<(usize, usize)> = Vec::new();
        // A message starts with its step on this rank, or with emulated links
        // when the step's links begin to carry elements, if later.
        let link_start = options.pacing.as_ref().and_then(|p| p.stream(s).first());
        let step_start = link_start.map_or(recorder.now(), |&(at, _, _)| {
            recorder.now().max(started_at + at)
        });
        let mut ended = [step_start; 2]; // the send's, the receive's

        // The step's message out and the one in go chunk by chunk, side by
        // side: each chunk out is hashed while it flies (while the receiver
        // reads it), each chunk in as soon as it has arrived (while still in
        // cache), and at most `window` chunks out are in flight, so that the
        // hashes keep in step with the copies. Every rank posts its chunk c out
        // before it waits for its chunk c in, so no cycle of ranks waits for
        // ever.
        let window = (SEND_WINDOW_BYTES / chunk.max(1)).max(2);
        mpi::request::scope(|scope| {
            let mut outgoing = send.as_ref().map(|(g, to)| {
                let range = byte_range(g);
                let data = &source_bytes[range.start - own.start..range.end - own.start];
                (
                    g.start,
                    comm.process_at_rank(*to as i32),
                    data.chunks(chunk).enumerate(),
                )
            });
            let mut incoming = recv.as_ref().map(|(g, from)| {
                let range = byte_range(g);
                let region = if range.start < own.start {
                    &mut before[range]
                } else {
                    let at = own.end;
                    &mut after[range.start - at..range.end - at]
                };
                (
                    g.start,
                    comm.process_at_rank(*from as i32),
                    region.chunks_mut(chunk).enumerate(),
                )
            });
            let mut in_flight = VecDeque::new();
            loop {
                let out = outgoing
                    .as_mut()
                    .and_then(|(first, to, parts)| parts.next().map(|p| (*first, to, p)));
                let inc = incoming
                    .as_mut()
                    .and_then(|(first, from, parts)| parts.next().map(|p| (*first, from, p)));
                if out.is_none() && inc.is_none() {
                    break;
                }
                if let Some((first, to, (c, part))) = out {
                    let batch = options.pacing.as_ref().and_then(|p| p.stream(s).first());
                    if let Some(&(start, _, per_element)) = batch {
                        // The chunk leaves when its last element has crossed.
                        let elements = c * chunk_items + part.len() / item_bytes;
                        let at = start + elements as f64 * per_element;
                        sleep_until(started, at, Duration::from_millis(1), || {
                            // Keeps this rank's transfers with the others moving.
                            let _ = comm.any_process().immediate_probe();
                        });
                    }
                    let data = match (&spoiled, c) {
                        (Some(spoiled), 0) => &spoiled[..],
                        _ => part,
                    };
                    in_flight.push_back(to.immediate_send_with_tag(scope, data, TAG_STEP));
                    let at = first + (c * chunk_items) as u128;
                    sent_away += range_sum(at, total, item_bytes, part);
                }
                if let Some((first, from, (c, part))) = inc {
                    let status = from.receive_into_with_tag(part, TAG_STEP);
                    got.push((
                        part.len(),
                        status.count(u8::equivalent_datatype()).max(0) as usize,
                    ));
                    let at = first + (c * chunk_items) as u128;
                    received_sum += range_sum(at, total, item_bytes, part);
                    ended[1] = recorder.now();
                }
                while in_flight.len() > window {
                    if let Some(request) = in_flight.pop_front() {
                        request.wait();
                    }
                }
            }
            for request in in_flight {
                request.wait();
            }
            ended[0] = recorder.now();
        });
        let pieces = [(Direction::Send, &send), (Direction::Receive, &recv)];
        for ((direction, piece), end) in pieces.into_iter().zip(ended) {
            if let Some((g, peer)) = piece {
                let items = (g.end - g.start) as u64;
                recorder.record(direction, Some(*peer), (items, s), (step_start, end));
            }
        }
        if let Some(&(expected, bytes)) = got.iter().find(|(e, g)| e != g) {
            let from = recv.as_ref().map_or(0, |(_, from)| *from);
            protocol.get_or_insert(format!(
                "step {s}: from rank {from}, a message of {bytes} bytes where {expected} were due"
            ));
        }
    }
    let transfer_seconds = started.elapsed().as_secs_f64();
    let items_sent: u128 = sent_of.values().sum();
    let items_received: u128 = got_of.values().sum();
    // On error the arena, dropped, puts the source block back.
    agree_before_commit(
        comm,
        LocalChecks {
            protocol,
            counts_ok: items_sent == u128::from(my_source)
                && items_received == u128::from(my_target),
            failing: my_fault == Some(Fault::FailBeforeCommit),
            delta: received_sum - sent_away,
        },
    )?;
    // Commit: the target block moves to the front of the arena.
    let first = blocks.index(blocks.target.start) as usize;
    arena.commit(first, first + my_target as usize);
    Ok(GenBlockReport {
        items_sent: items_sent as u64,
        items_received: items_received as u64,
        seconds: started.elapsed().as_secs_f64(),
        transfer_seconds,
        messages: recorder.finish(),
    })
}
