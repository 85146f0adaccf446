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
use std::ops::Range;
use std::time::{Duration, Instant};

use hetbal::genblock::{
    check_schedule, redistribution_graph, GenBlockInstance, Message, StepSchedule,
};
use mpi::topology::SimpleCommunicator;
use mpi::traits::{Communicator, Destination, Equivalence, Source};

use bytemuck::Pod;

use crate::arena::Arena;
use crate::buffer::{give_back_pages, ItemStorage};
use crate::checksum::{range_sum, Checksum};
use crate::comm::Duplicate;
use crate::pacing::{sleep_until, Pacing};
use crate::protocol::{
    agree_before_commit, refuse, sizes_match, spoil, Digest, Fault, Fingerprint, LocalChecks,
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
/// other. An item buffer that gives back what it sends
/// ([`ItemBuffer::set_give_back_sent`](crate::buffer::ItemBuffer::set_give_back_sent))
/// gives back the memory of the elements that left as their messages complete
/// (then, should the run fail, it keeps only its elements that had not left).
///
/// # Arguments
/// * `comm` - the communicator: rank r holds source block r and gets target block
///   r;
/// * `instance` - the source and target blocks (its costs serve only to pace,
///   through `options`);
/// * `schedule` - the steps, identical on every rank;
/// * `items` - this rank's source block (`source[rank]` elements, empty when
///   rank >= P), in a `Vec` or an [`ItemBuffer`](crate::buffer::ItemBuffer)
///   (where the elements the rank keeps never move), replaced by its target
///   block on success;
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
    items: &mut impl ItemStorage<T>,
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
    items: &mut impl ItemStorage<u8>,
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

/// A GEN_BLOCK run (see [`run_steps`]) of elements of `item_len` elements of `E`:
/// the arguments checked ([`check_arguments`]) and the arena opened on every
/// rank ([`open_arena`]), the steps one after the other ([`Run::step`]), then
/// the checks and the commit ([`Run::finish`]).
fn run<E: Pod, C: Communicator>(
    comm: &C,
    instance: &GenBlockInstance,
    schedule: &StepSchedule,
    item_len: usize,
    items: &mut dyn ItemStorage<E>,
    options: &Options,
) -> Result<GenBlockReport, RunError> {
    let started = Instant::now();
    let recorder = Recorder::new(options.record);
    let started_at = recorder.now();
    let duplicate = Duplicate::of(comm);
    let comm: &SimpleCommunicator = &duplicate;
    let rank = comm.rank() as usize;
    let item_bytes = item_len * std::mem::size_of::<E>();
    let fingerprint = check_arguments(comm, instance, schedule, item_bytes, options)?;
    let layout = Layout::of(instance, rank, item_bytes);
    let mut arena = open_arena(comm, rank, &layout, (items, item_len), fingerprint)?;
    let give_back = arena.gives_back_sent();
    let bytes = arena.bytes();
    let chunk_items = options.chunk_items(item_bytes);
    let fault = options.fault_of(rank);
    let own = layout.own();
    let mut run = Run {
        comm,
        rank,
        fault_step: fault_step(&schedule.steps, rank, fault),
        layout,
        chunk_items,
        chunk: chunk_items * item_bytes,
        pacing: options.pacing.as_ref(),
        fault,
        protocol: None,
        sent_of: HashMap::new(),
        got_of: HashMap::new(),
        sent_away: Checksum::ZERO,
        received_sum: Checksum::ZERO,
        recorder,
        started,
        started_at,
        gone: give_back.map(|page| Gone {
            page,
            source_at: bytes.as_ptr() as usize + own.start,
            ends: (0, 0),
            done: Vec::new(),
        }),
    };
    for (s, step) in schedule.steps.iter().enumerate() {
        run.step(s, step, bytes);
    }
    run.finish(arena)
}

/// The elements of a rank's source block that left, with
/// [`ItemBuffer::set_give_back_sent`](crate::buffer::ItemBuffer::set_give_back_sent):
/// the whole pages of each message out are given back as its chunks' sends
/// complete (in order), and the elements gone from either end of the block
/// are counted, for a failed run to give back the elements between. (A run
/// fails only after its last step, once every send has completed: the
/// elements gone are then those below the target block, sent to lower
/// ranks, and those above it.)
struct Gone {
    page: usize,
    /// The address of the source block's first byte.
    source_at: usize,
    /// Elements gone from the front and from the back of the source block.
    ends: (u128, u128),
    /// Pieces gone (global positions) not joined to either end yet.
    done: Vec<Range<u128>>,
}

impl Gone {
    /// The address of the element at global position `g` of the source block
    /// `source`, of `item_bytes` bytes each.
    fn address(&self, g: u128, source: &Range<u128>, item_bytes: usize) -> usize {
        self.source_at + ((g - source.start) * item_bytes as u128) as usize
    }

    /// Notes that the elements `g` (global positions, within `source`) left.
    /// O(1) amortized: a message's pieces leave in order, each joining the
    /// one before it, so `done` holds a range or so per message.
    fn left(&mut self, g: Range<u128>, source: &Range<u128>) {
        match self.done.iter_mut().find(|r| r.end == g.start) {
            Some(before) => before.end = g.end,
            None => self.done.push(g),
        }
        loop {
            let (front, back) = self.ends;
            let joined = self
                .done
                .iter()
                .position(|r| r.start == source.start + front || r.end == source.end - back);
            let Some(k) = joined else { break };
            let r = self.done.swap_remove(k);
            if r.start == source.start + front {
                self.ends.0 += r.end - r.start;
            } else {
                self.ends.1 += r.end - r.start;
            }
        }
    }
}

/// Checks a run's arguments before anything moves: hashes what must be
/// identical on every rank (the blocks, `item_bytes` per element, the
/// schedule, the `options`) into the fingerprint the ranks compare when they
/// open their arenas, and refuses a communicator of the wrong size or a
/// schedule that is not one of the redistribution of `instance` (every rank
/// takes part in the refusal: see [`refuse`]). Returns the fingerprint.
///
/// # Errors
/// [`RunError::WorldSize`] or [`RunError::InvalidPlan`] (every rule the
/// schedule breaks, see [`check_schedule`]), after the agreement of every rank.
fn check_arguments(
    comm: &SimpleCommunicator,
    instance: &GenBlockInstance,
    schedule: &StepSchedule,
    item_bytes: usize,
    options: &Options,
) -> Result<Fingerprint, RunError> {
    let (source, target, steps) = (instance.source(), instance.target(), &schedule.steps);
    let n = source.len().max(target.len());
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
    Ok(fingerprint)
}

/// A message's global positions and the rank at its other end.
type Piece = (Range<u128>, usize);

/// A step's message out, as it moves: the global position of its first
/// element, the rank it goes to, and its bytes.
type Outgoing<'b> = (u128, usize, &'b [u8]);

/// A step's message in, as it moves: the global position of its first
/// element, the rank it comes from, and the room it arrives in.
type Incoming<'b> = (u128, usize, &'b mut [u8]);

/// Where the elements of a run are, seen from one rank: where every source
/// block and every target block starts, and this rank's two blocks.
struct Layout {
    /// Global position of the first element of each source block.
    src_start: Vec<u128>,
    /// Global position of the first element of each target block.
    dst_start: Vec<u128>,
    /// Elements in all.
    total: u128,
    /// Elements of this rank's source block.
    my_source: u64,
    /// Elements of this rank's target block.
    my_target: u64,
    /// Global positions of this rank's blocks.
    blocks: Blocks,
    /// Bytes per element.
    item_bytes: usize,
}

impl Layout {
    /// The layout of `instance` at `rank` (blocks past the last are empty, at
    /// the end), for elements of `item_bytes` bytes. O(P + Q).
    fn of(instance: &GenBlockInstance, rank: usize, item_bytes: usize) -> Layout {
        let (source, target) = (instance.source(), instance.target());
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
        Layout {
            src_start,
            dst_start,
            total,
            my_source,
            my_target,
            blocks,
            item_bytes,
        }
    }

    /// The global positions of message `m`: after the pieces of its pair already
    /// moved, `moved[peer]`, which grows by its size (the pieces of a pair go in
    /// array order).
    fn place(&self, m: &Message, moved: &mut HashMap<usize, u128>, peer: usize) -> Range<u128> {
        let done = moved.entry(peer).or_insert(0);
        let at = self.src_start[m.from].max(self.dst_start[m.to]) + *done;
        *done += u128::from(m.size);
        at..at + u128::from(m.size)
    }

    /// The byte range in the arena of global positions `g` (in the source block
    /// or the target block).
    fn byte_range(&self, g: &Range<u128>) -> Range<usize> {
        let b = self.item_bytes as u128;
        let at = self.blocks.index(g.start);
        (at * b) as usize..((at + (g.end - g.start)) * b) as usize
    }

    /// The source block's bytes in the arena (once open: they then fit).
    fn own(&self) -> Range<usize> {
        let b = self.item_bytes as u128;
        let at = (self.blocks.before() * b) as usize;
        at..at + (u128::from(self.my_source) * b) as usize
    }
}

/// Opens the arena of `rank` on every rank, or on none: checks that `items`
/// (of `item_len` elements of `E` per element) hold its source block, grows
/// them by the target elements before and after it (see [`Blocks`]), and
/// learns whether every rank could, with the same `fingerprint`
/// ([`Arena::agreed`]). Returns the arena.
///
/// # Errors
/// On every rank when any rank cannot start, as [`Arena::agreed`]:
/// [`RunError::WrongLoad`] on a rank whose items do not match its block (and
/// [`RunError::PeerRefused`] on the others), [`RunError::InvalidPlan`] for
/// elements of no bytes, [`RunError::Protocol`] when the arena does not fit in
/// memory, [`RunError::Mismatch`] when the fingerprints differ. The items are
/// then unchanged.
fn open_arena<'a, E: Pod>(
    comm: &SimpleCommunicator,
    rank: usize,
    layout: &Layout,
    (items, item_len): (&'a mut dyn ItemStorage<E>, usize),
    fingerprint: Fingerprint,
) -> Result<Arena<'a, E>, RunError> {
    // Every rank agrees on the sizes before anything moves (the arena must fit in
    // memory too).
    let checked = sizes_match(
        rank,
        items.elements() * std::mem::size_of::<E>(),
        u128::from(layout.my_source) * layout.item_bytes as u128,
    );
    let (before, after) = (layout.blocks.before(), layout.blocks.after());
    let fit = |k: u128| u64::try_from(k).unwrap_or(u64::MAX);
    let opening = (checked, fingerprint);
    Arena::agreed(comm, opening, items, item_len, (fit(before), fit(after)))
}

/// The step whose message a faulty rank spoils, for this rank (`rank`, its
/// `fault` if any) in `steps`: when its fault spoils a message, its first one
/// to another rank, else its first one to itself; `None` otherwise (or when it
/// sends nothing). O(messages).
fn fault_step(steps: &[Vec<Message>], rank: usize, fault: Option<Fault>) -> Option<usize> {
    fault.filter(|f| f.spoils_a_message()).and_then(|_| {
        let sends_in = |to_others: bool| {
            steps.iter().position(|step| {
                step.iter()
                    .any(|m| m.from == rank && m.size > 0 && (m.to != rank || !to_others))
            })
        };
        sends_in(true).or_else(|| sends_in(false))
    })
}

/// A GEN_BLOCK run under way at one rank: where its elements are, what it has
/// moved of each pair of blocks so far, its part of the checksum, and what it
/// has seen.
struct Run<'a> {
    comm: &'a SimpleCommunicator,
    rank: usize,
    layout: Layout,
    /// Elements per chunk.
    chunk_items: usize,
    /// Bytes per chunk.
    chunk: usize,
    /// Emulated links, if any.
    pacing: Option<&'a Pacing>,
    /// This rank's fault, if any.
    fault: Option<Fault>,
    /// The step whose message the fault spoils ([`fault_step`]).
    fault_step: Option<usize>,
    /// The first protocol problem seen.
    protocol: Option<String>,
    /// Elements of each pair already sent, by the rank they went to, to place
    /// the next piece (array order).
    sent_of: HashMap<usize, u128>,
    /// Elements of each pair already received, by the rank they came from.
    got_of: HashMap<usize, u128>,
    /// This rank's part of the checksum: the elements received (`received_sum`)
    /// minus those sent to other ranks (`sent_away`); the elements it keeps do
    /// not move and cancel out.
    sent_away: Checksum,
    received_sum: Checksum,
    recorder: Recorder,
    /// When the run started: the clock, and the recorder's time.
    started: Instant,
    started_at: f64,
    /// The elements gone, when their memory is given back as they leave.
    gone: Option<Gone>,
}

impl Run<'_> {
    /// Step `s` of the schedule, its messages `step`, on the arena's `bytes`:
    /// this rank's message to itself stays where it is ([`Run::keep`]); else
    /// its message out (from its source block) and its message in (to its
    /// target block, outside its source block) go chunk by chunk
    /// ([`Run::move_chunks`]) and are recorded and checked ([`Run::settle`]).
    fn step(&mut self, s: usize, step: &[Message], bytes: &mut [u8]) {
        let rank = self.rank;
        let out = step.iter().find(|m| m.from == rank && m.size > 0);
        let inc = step.iter().find(|m| m.to == rank && m.size > 0);
        let spoiling = self.fault_step == Some(s);
        if let Some(m) = out.filter(|m| m.to == rank) {
            self.keep(s, m, bytes, spoiling);
            return;
        }
        // Global positions to send (in the source block) and to receive (in the
        // target block, outside the source block).
        let send = out.map(|m| (self.layout.place(m, &mut self.sent_of, m.to), m.to));
        let recv = inc
            .filter(|m| m.from != rank)
            .map(|m| (self.layout.place(m, &mut self.got_of, m.from), m.from));
        let own = self.layout.own();
        let (before, rest) = bytes.split_at_mut(own.start);
        let (source_bytes, after) = rest.split_at_mut(own.len());
        // A faulty rank spoils the first chunk of its message (a copy: the items
        // stay).
        let spoiled = match (&send, self.fault) {
            (Some((g, _)), Some(fault)) if spoiling => {
                let range = self.layout.byte_range(g);
                let first =
                    range.start - own.start..(range.end.min(range.start + self.chunk) - own.start);
                Some(spoil(fault, &source_bytes[first], self.layout.item_bytes))
            }
            _ => None,
        };
        let step_start = self.step_start(s);
        let layout = &self.layout;
        let outgoing = send.as_ref().map(|(g, to)| {
            let range = layout.byte_range(g);
            let data = &source_bytes[range.start - own.start..range.end - own.start];
            (g.start, *to, data)
        });
        let incoming = recv.as_ref().map(|(g, from)| {
            let range = layout.byte_range(g);
            let region = if range.start < own.start {
                &mut before[range]
            } else {
                let at = own.end;
                &mut after[range.start - at..range.end - at]
            };
            (g.start, *from, region)
        });
        let moved = self.move_chunks(s, (outgoing, incoming), spoiled.as_deref(), step_start);
        self.settle(s, (send.as_ref(), recv.as_ref()), step_start, moved);
    }

    /// Step `s`'s message `m` of this rank to itself: the elements of its
    /// source block that are in its target block stay where they are in
    /// `bytes` (counted as sent and received). When `spoiling`, the fault
    /// spoils this message (a rank that sends to no other): its first chunk
    /// counts as received spoiled in this rank's part of the checksum, and a
    /// chunk of the wrong length as a protocol problem.
    fn keep(&mut self, s: usize, m: &Message, bytes: &[u8], spoiling: bool) {
        let rank = self.rank;
        let g = self.layout.place(m, &mut self.sent_of, rank);
        self.layout.place(m, &mut self.got_of, rank);
        if !spoiling {
            return;
        }
        let (total, item_bytes) = (self.layout.total, self.layout.item_bytes);
        let range = self.layout.byte_range(&g);
        let first = range.start..range.end.min(range.start + self.chunk);
        let fault = self.fault.unwrap_or(Fault::Corrupt);
        let spoiled = spoil(fault, &bytes[first.clone()], item_bytes);
        if spoiled.len() != first.len() {
            self.protocol.get_or_insert(format!(
                "step {s}: from rank {rank}, a message of {} bytes where {} were due",
                spoiled.len(),
                first.len()
            ));
        }
        self.received_sum += range_sum(g.start, total, item_bytes, &spoiled)
            - range_sum(g.start, total, item_bytes, &bytes[first]);
    }

    /// When step `s`'s messages start on this rank (recorder time): now, or
    /// with emulated links when the step's links begin to carry elements, if
    /// later.
    fn step_start(&self, s: usize) -> f64 {
        let link_start = self.pacing.and_then(|p| p.stream(s).first());
        link_start.map_or(self.recorder.now(), |&(at, _, _)| {
            self.recorder.now().max(self.started_at + at)
        })
    }

    /// Step `s`'s message out and its message in, chunk by chunk, side by side:
    /// `outgoing` (the global position of its first element, the rank it goes
    /// to, its bytes; the first chunk replaced by `spoiled` when given) and
    /// `incoming` (the same, with the room it arrives in). Each chunk out is
    /// hashed while it flies (while the receiver reads it), each chunk in as
    /// soon as it has arrived (while still in cache), and at most a window of
    /// chunks out ([`SEND_WINDOW_BYTES`]) are in flight, so that the hashes keep
    /// in step with the copies. Every rank posts its chunk c out before it
    /// waits for its chunk c in, so no cycle of ranks waits for ever. Returns
    /// the (expected, received) bytes of each chunk in, and when the send and
    /// the receive ended (recorder times; `step_start` for none).
    fn move_chunks(
        &mut self,
        s: usize,
        (outgoing, incoming): (Option<Outgoing<'_>>, Option<Incoming<'_>>),
        spoiled: Option<&[u8]>,
        step_start: f64,
    ) -> (Vec<(usize, usize)>, [f64; 2]) {
        let (comm, chunk, chunk_items) = (self.comm, self.chunk, self.chunk_items);
        let (total, item_bytes) = (self.layout.total, self.layout.item_bytes);
        // (expected, received) bytes of each chunk in.
        let mut got: Vec<(usize, usize)> = Vec::new();
        let mut ended = [step_start; 2]; // the send's, the receive's
        let window = (SEND_WINDOW_BYTES / chunk.max(1)).max(2);
        // With `gone`: the message out's whole pages given back so far, up to
        // this address.
        let mut given_to = outgoing.as_ref().map_or(0, |(_, _, data)| {
            let page = self.gone.as_ref().map_or(1, |g| g.page);
            (data.as_ptr() as usize).next_multiple_of(page)
        });
        mpi::request::scope(|scope| {
            let mut outgoing = outgoing.map(|(first, to, data)| {
                let to = comm.process_at_rank(to as i32);
                (first, to, data.chunks(chunk).enumerate())
            });
            let mut incoming = incoming.map(|(first, from, region)| {
                let from = comm.process_at_rank(from as i32);
                (first, from, region.chunks_mut(chunk).enumerate())
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
                    self.wait_for_link(s, c, part.len());
                    let data = match (spoiled, c) {
                        (Some(spoiled), 0) => spoiled,
                        _ => part,
                    };
                    let request = to.immediate_send_with_tag(scope, data, TAG_STEP);
                    let at = first + (c * chunk_items) as u128;
                    in_flight.push_back((request, at..at + (part.len() / item_bytes) as u128));
                    self.sent_away += range_sum(at, total, item_bytes, part);
                }
                if let Some((first, from, (c, part))) = inc {
                    let status = from.receive_into_with_tag(part, TAG_STEP);
                    got.push((
                        part.len(),
                        status.count(u8::equivalent_datatype()).max(0) as usize,
                    ));
                    let at = first + (c * chunk_items) as u128;
                    self.received_sum += range_sum(at, total, item_bytes, part);
                    ended[1] = self.recorder.now();
                }
                while in_flight.len() > window {
                    if let Some((request, g)) = in_flight.pop_front() {
                        request.wait();
                        self.left(g, &mut given_to);
                    }
                }
                // Giving back: the chunks whose sends completed meanwhile.
                while self.gone.is_some() {
                    let Some((request, g)) = in_flight.pop_front() else {
                        break;
                    };
                    match request.test() {
                        Ok(_) => self.left(g, &mut given_to),
                        Err(request) => {
                            in_flight.push_front((request, g));
                            break;
                        }
                    }
                }
            }
            for (request, g) in in_flight {
                request.wait();
                self.left(g, &mut given_to);
            }
            ended[0] = self.recorder.now();
        });
        (got, ended)
    }

    /// The elements `g` (global positions, the next of the message out) left:
    /// with [`Run::gone`], noted, and the whole pages of the message out from
    /// `given_to` (an address) to their end given back.
    fn left(&mut self, g: Range<u128>, given_to: &mut usize) {
        let Some(gone) = &mut self.gone else { return };
        let (source, item_bytes) = (&self.layout.blocks.source, self.layout.item_bytes);
        let end = gone.address(g.end, source, item_bytes) / gone.page * gone.page;
        if end > *given_to {
            // SAFETY: whole pages of the message out whose sends completed
            // (they are sent in order), within the source block of an item
            // buffer (only they give back); nothing reads them again.
            unsafe { give_back_pages(*given_to, end, gone.page) };
            *given_to = end;
        }
        gone.left(g, source);
    }

    /// With emulated links, waits until chunk `c` (of `len` bytes) of step
    /// `s`'s message out may leave: when its last element has crossed its
    /// link. Meanwhile it keeps this rank's transfers with the others moving.
    fn wait_for_link(&self, s: usize, c: usize, len: usize) {
        let batch = self.pacing.and_then(|p| p.stream(s).first());
        if let Some(&(start, _, per_element)) = batch {
            // The chunk leaves when its last element has crossed.
            let elements = c * self.chunk_items + len / self.layout.item_bytes;
            let at = start + elements as f64 * per_element;
            sleep_until(self.started, at, Duration::from_millis(1), || {
                // Keeps this rank's transfers with the others moving.
                let _ = self.comm.any_process().immediate_probe();
            });
        }
    }

    /// After step `s`'s messages `send` and `recv` (if any): records them, from
    /// `step_start` to their ends (`ended`: the send's, the receive's), and
    /// checks that each chunk in was as long as due (`got`: its expected and
    /// received bytes), the first problem going to `protocol`.
    fn settle(
        &mut self,
        s: usize,
        (send, recv): (Option<&Piece>, Option<&Piece>),
        step_start: f64,
        (got, ended): (Vec<(usize, usize)>, [f64; 2]),
    ) {
        let pieces = [(Direction::Send, send), (Direction::Receive, recv)];
        for ((direction, piece), end) in pieces.into_iter().zip(ended) {
            if let Some((g, peer)) = piece {
                let items = (g.end - g.start) as u64;
                let span = (step_start, end);
                self.recorder
                    .record(direction, Some(*peer), (items, s), span);
            }
        }
        if let Some(&(expected, bytes)) = got.iter().find(|(e, g)| e != g) {
            let from = recv.map_or(0, |(_, from)| *from);
            self.protocol.get_or_insert(format!(
                "step {s}: from rank {from}, a message of {bytes} bytes where {expected} were due"
            ));
        }
    }

    /// After the last step: the checks every rank agrees on before any rank
    /// commits (this rank's protocol problems, its counts, an injected failure,
    /// its part of the checksum), then the commit: the target block moves to
    /// the front of `arena`. Returns this rank's report.
    ///
    /// # Errors
    /// As [`agree_before_commit`]; the arena, dropped, then puts the source
    /// block back.
    fn finish<E: Pod>(self, mut arena: Arena<'_, E>) -> Result<GenBlockReport, RunError> {
        let transfer_seconds = self.started.elapsed().as_secs_f64();
        if let Some(gone) = &self.gone {
            // A failed run gives back the source elements between those gone.
            arena.gave_back(gone.ends.0 as usize, gone.ends.1 as usize);
        }
        let items_sent: u128 = self.sent_of.values().sum();
        let items_received: u128 = self.got_of.values().sum();
        let layout = &self.layout;
        // On error the arena, dropped, puts the source block back.
        agree_before_commit(
            self.comm,
            LocalChecks {
                protocol: self.protocol,
                counts_ok: items_sent == u128::from(layout.my_source)
                    && items_received == u128::from(layout.my_target),
                failing: self.fault == Some(Fault::FailBeforeCommit),
                delta: self.received_sum - self.sent_away,
            },
        )?;
        // Commit: the target block moves to the front of the arena.
        let first = layout.blocks.index(layout.blocks.target.start) as usize;
        arena.commit(first, first + layout.my_target as usize);
        Ok(GenBlockReport {
            items_sent: items_sent as u64,
            items_received: items_received as u64,
            seconds: self.started.elapsed().as_secs_f64(),
            transfer_seconds,
            messages: self.recorder.finish(),
        })
    }
}
