//! Ring redistributions over MPI.
//!
//! Every rank holds an ordered slice of items; the slices, rank after rank, form one
//! cyclic sequence. A plan's net flow on link (i, i+1) moves the boundary between
//! the two slices: a clockwise flow f sends the last f items before the boundary to
//! P_{i+1} (they go before its own items), a counterclockwise one the first items
//! after it to P_i (they go after its own). So the cyclic order is kept, and a
//! forwarder's items are the ones nearest the boundary it receives from: the
//! items crossing a link are numbered from the boundary (their *depth*), the
//! sender's own items first, then those it passes on.
//!
//! The transfer runs in rounds. In each round, every link still active carries a
//! header message each way it is used (items in the chunk, the depth of its
//! first, whether it is the link's last, and how long the items waited for an
//! emulated link when recording), then the chunk itself: up to one chunk of
//! items, possibly none when a forwarder waits for items. The rank's items grow
//! in place (in capacity) to hold, in local order, what it keeps from the
//! predecessor, its own items, and what it keeps from the successor: every
//! chunk of own items is sent straight from where it is, and every item kept is
//! received straight into its place. Items a rank passes on (those nearest the
//! boundary it receives them from) go to chunks of their own, held until they
//! leave, and leave before the rank's own items; its neighbour sends it such
//! items only while it holds fewer than a few chunks of them (each round the
//! rank tells it how many it has passed on), so that forwarding costs no rank
//! more than a few chunks of memory, on long chains and on circulations where
//! every rank passes items on alike. Receives and sends of a round are
//! nonblocking and complete together, so chunks are pipelined along the ring
//! and both directions run at once. The own items are read in place and
//! written only at the commit, which moves the new items, a contiguous range,
//! to the front.
//!
//! # Rings with start-ups
//! On a ring whose links pay a start-up per message
//! ([`RingInstance::has_startups`]), a plan's transfer over such a link is one
//! message: all its items held when it starts, all delivered when it ends. Given
//! the plan's transfers ([`Options::batches`], from [`batches_from_plan`]), a
//! redistribution runs them as planned instead of in chunks: each planned
//! transfer over a link with a start-up goes as one MPI message (all its items,
//! sent once they are all held), received whole; transfers over links without
//! one go in pieces of [`Options::chunk_bytes`]. Both ends know every message's
//! size from the plan, so there are no headers and no rounds. With emulated
//! links ([`Options::pacing`]) a transfer begins at its planned start, or once
//! its items are held or the rank's previous send has ended if later, and its
//! message leaves its start-up plus its items' time after it began
//! ([`crate::pacing`]). Memory: as in chunks, the rank's vector grows to hold
//! what it keeps, and the items it passes on wait in buffers of their own, a
//! few chunks and one planned message at most, dropped once sent; a planned
//! message gathers its items from where they are (an MPI datatype), without a
//! copy. A circulation (every rank passing items on one way, which no planner
//! makes) runs in chunks. [`RedistributionReport::messages_sent`] counts the
//! messages.

use std::ops::Range;

use hetbal::ring::{transfer_link, RingInstance, RingPlan, Transfer};
use mpi::traits::Communicator;

use bytemuck::Pod;

use crate::buffer::{give_back_pages, ItemStorage};
use crate::checksum::{range_sum, Checksum};
use crate::comm::Duplicate;
use crate::links::RingLinks;
use crate::pacing::Pacing;
use crate::protocol::{agree_before_commit, refuse, sizes_match, Digest, Fingerprint, LocalChecks};
use crate::timeline::Message;
use crate::{Options, RunError};

mod batched;
mod chunked;

/// Tag of messages on clockwise links (P_i to P_{i+1}).
const TAG_CLOCKWISE: i32 = 17;
/// Tag of messages on counterclockwise links (P_{i+1} to P_i).
const TAG_COUNTERCLOCKWISE: i32 = 18;

/// The net flow on every link (i, i+1): the library's, re-exported here where
/// the redistributions take it.
pub use hetbal::iterative::online::{first_positions, link_flows};

/// The plan's pacing, batches and messages: the library's
/// ([`hetbal::pacing`]), re-exported here where the redistributions take
/// them (`pacing_from_plan` is [`hetbal::pacing::ring_pacing`]).
pub use hetbal::pacing::{
    batches_from_plan, message_batches, ring_pacing as pacing_from_plan, Batches, PlannedBatch,
};
use hetbal::pacing::{push_train, ring_stream};

/// What a rank did during a committed redistribution.
#[derive(Clone, Debug, PartialEq)]
pub struct RedistributionReport {
    /// Items this rank sent (own and forwarded).
    pub items_sent: u64,
    /// Items this rank received (kept and forwarded).
    pub items_received: u64,
    /// The global position of this rank's first item after the move,
    /// positions counted from rank 0's first item before it and wrapping at
    /// the total ([`hetbal::iterative::online::first_positions`]): this rank
    /// holds items `first .. first + target` (modulo the total).
    pub first: u64,
    /// Rounds of messages (with [`Options::batches`], which has no rounds: the
    /// messages of items this rank sent and received).
    pub rounds: u64,
    /// Messages of items this rank sent (not counting the small headers and
    /// flow-control messages of a run without [`Options::batches`]). With
    /// batches, one per planned transfer over a link with a start-up (a
    /// transfer beyond MPI's count limit, 2 GiB, goes in several), and one per
    /// piece of [`Options::chunk_bytes`] of the trains.
    pub messages_sent: u64,
    /// The most items to pass on (received from one neighbour for the other)
    /// this rank held at once: at most a few chunks, and one planned message
    /// with [`Options::batches`] (see [`redistribute`]).
    pub most_passed_on: u64,
    /// Wall-clock seconds of the transfer and the checks, on this rank.
    pub seconds: f64,
    /// Wall-clock seconds of the transfer alone (until this rank's last message;
    /// the checksum is computed meanwhile, as items leave and arrive). With
    /// [`Options::batches`], from when every rank has agreed to start (the
    /// clock of emulated links), so that a rank's wait for the others to call
    /// does not count.
    pub transfer_seconds: f64,
    /// Every message this rank sent or received, when [`Options::record`] is on
    /// (else none), `MPI_Wtime` seconds: a message per link direction and
    /// round, from the start of its round (its header) to its completion; with
    /// emulated links, from when its items began to wait for their planned
    /// crossing (the receiver learns how long from the header). With
    /// [`Options::batches`]: every message, a send from when it was posted (with
    /// emulated links: from when it began to cross its link) to its
    /// completion, a receive from the previous one on its side (with emulated
    /// links: from when it began to cross, as planned) to its arrival.
    pub messages: Vec<Message>,
}

/// The planned sends of a ring plan on links given apart from the plan, for
/// [`Options::pacing`]: the batches of [`pacing_from_plan`] (at the plan's
/// starts, in seconds), each lasting what its link of `links` takes for its
/// items of `item_bytes` bytes ([`LinkCost::seconds`](crate::links::LinkCost::seconds):
/// start-up plus bytes),
/// whatever the plan's costs. So a plan made on measured links runs on the
/// links they were measured on (emulated, [`crate::links::Probe::emulated`]),
/// and its predicted makespan can be set against the real one.
///
/// Complexity: O(n + transfers).
///
/// # Example
/// ```
/// use hetbal::ring::{plan, RingInstance};
/// use hetbal_mpi::links::{LinkCost, RingLinks};
/// use hetbal_mpi::ring::pacing_on_links;
/// // Planned at 1 ms per item and 2 ms per message; the links are twice slower.
/// let ring = RingInstance::unidirectional(&[4, 1], &[1, 4], &[1e-3; 2])
///     .unwrap()
///     .with_startups(&[2e-3; 2], &[0.0; 2])
///     .unwrap();
/// let the_plan = plan(&ring, None).unwrap();
/// let slow = LinkCost { startup: 4e-3, per_byte: 2e-3 / 8.0 };
/// let links = RingLinks { to_succ: vec![slow; 2], to_pred: vec![slow; 2] };
/// let pacing = pacing_on_links(&ring, &the_plan, &links, 8);
/// let (start, items, per_item) = pacing.stream(0)[0];
/// assert_eq!((start, items), (0.0, 3));
/// assert!((per_item * 3.0 - (4e-3 + 3.0 * 2e-3)).abs() < 1e-12);
/// ```
pub fn pacing_on_links(
    instance: &RingInstance,
    plan: &RingPlan,
    links: &RingLinks,
    item_bytes: usize,
) -> Pacing {
    let n = instance.len();
    let mut streams = vec![Vec::new(); 2 * n];
    for t in &plan.transfers {
        let side = if link_of(instance, t).2 {
            &links.to_succ
        } else {
            &links.to_pred
        };
        let stream = &mut streams[ring_stream(n, t)];
        if let Some(period) = t.period {
            // Each item of a paced train is a message of its own.
            let one = side
                .get(t.from)
                .map_or(0.0, |link| link.seconds(item_bytes));
            push_train(stream, t, one, period, 1.0);
            continue;
        }
        let bytes = (t.items as usize).saturating_mul(item_bytes);
        let seconds = side.get(t.from).map_or(0.0, |link| link.seconds(bytes));
        stream.push((t.start, t.items, seconds / t.items as f64));
    }
    Pacing { streams }
}

/// The link a planned transfer takes, `(cost per item, start-up, to the
/// successor)`: the library's answer ([`hetbal::ring::transfer_link`], as its
/// validator reads the plan); the successor's link for a transfer no link
/// explains (never for a plan of the library's).
pub(crate) fn link_of(instance: &RingInstance, t: &Transfer) -> (f64, f64, bool) {
    match transfer_link(instance, t) {
        Some(link) => (link.cost, link.startup, link.to_succ),
        None => (instance.c_succ()[t.from], instance.l_succ()[t.from], true),
    }
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
    /// Processor `i`'s part (flows within ±u64::MAX: see [`plan_problem`]).
    fn of(loads: &[u64], flows: &[i128], i: usize) -> Local {
        let n = loads.len();
        Local {
            load: i128::from(loads[i]),
            f_in: flows[(i + n - 1) % n],
            f_out: flows[i],
        }
    }
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
    /// Items from the predecessor that this rank passes on to its successor: the
    /// first ones it receives, local positions `-forwards .. 0` (it sends its own
    /// items first, then these).
    fn forwards_clockwise(&self) -> u64 {
        (self.f_out - self.load).clamp(0, self.f_in.max(0)) as u64
    }
    /// Items from the successor passed on to the predecessor: the first ones
    /// received, local positions `load .. load + forwards`.
    fn forwards_counterclockwise(&self) -> u64 {
        (-self.f_in - self.load).clamp(0, (-self.f_out).max(0)) as u64
    }
}

/// Why the flows cannot be run on these loads, if they cannot: a flow beyond
/// ±(2^64 - 1) items, or a processor left a negative number of items.
///
/// Complexity: O(n).
fn plan_problem(loads: &[u64], flows: &[i128]) -> Option<String> {
    let n = loads.len();
    if let Some(i) = flows
        .iter()
        .position(|f| f.unsigned_abs() > u128::from(u64::MAX))
    {
        return Some(format!(
            "the flow on link ({i}, {}) moves {} items, more than 2^64 - 1",
            (i + 1) % n,
            flows[i]
        ));
    }
    (0..n)
        .find(|&i| {
            let local = Local::of(loads, flows, i);
            local.load + local.f_in - local.f_out < 0
        })
        .map(|i| format!("the flows leave processor {i} a negative number of items"))
}

/// Moves the items of a ring plan between the ranks of `comm` (rank i is processor
/// i), checks them, and commits only if every rank's checks pass. Items are any
/// plain-old-data type ([`bytemuck::Pod`], for example `f64`, `[u8; 64]` or a
/// `#[derive(Pod, Zeroable)]` struct); [`redistribute_bytes`] takes raw bytes.
///
/// No second copy of the data: `items` grows in place (in capacity) to hold what
/// this rank receives beyond its own items, which stay intact until the commit,
/// and the commit moves the new items in place. In a `Vec`, items arriving in
/// front of the rank's own ones shift them once (a move in place); in an
/// [`ItemBuffer`](crate::buffer::ItemBuffer) the items the rank keeps never move
/// (their addresses stay the same) and those it receives land where they stay. A rank's memory is its items plus
/// those it receives and keeps, `max(load, target)` items when it only sends or
/// only receives; items it passes on stay only until they leave, a few chunks
/// at a time (its neighbour sends them only while it has room). An item buffer
/// that gives back what it sends
/// ([`ItemBuffer::set_give_back_sent`](crate::buffer::ItemBuffer::set_give_back_sent))
/// gives back the memory of its own items as they leave, so a rank that
/// keeps, sends and receives at once holds its items plus a few chunks (then,
/// should the run fail, it keeps only its items that had not left). With
/// [`Options::batches`] (rings with start-ups: see the module's docs) every
/// planned transfer over a link with a start-up is one message, and a rank
/// holds at most one planned message beyond that room. After the commit `items`
/// keeps its capacity, so that the next redistribution receives into memory
/// already touched (`shrink_to_fit` gives it back).
///
/// # Arguments
/// * `comm` - the communicator, one rank per processor;
/// * `loads` - every processor's load (items), identical on every rank;
/// * `flows` - the net flow on each link (i, i+1), positive clockwise
///   ([`link_flows`]), identical on every rank;
/// * `items` - this rank's items, `loads[rank]` of them, in order, in a `Vec` or
///   an [`ItemBuffer`](crate::buffer::ItemBuffer); replaced by its new items on
///   success, untouched on error;
/// * `options` - message size, fault injection ([`crate::Fault`]: the rank's first
///   non-empty message is spoiled), emulated links ([`pacing_from_plan`]) and
///   the plan's transfers for rings with start-ups ([`batches_from_plan`]).
///
/// # Returns
/// What this rank sent and received, in how many rounds and how long.
///
/// # Errors
/// [`RunError`] on every rank when any rank fails: wrong world size or load,
/// flows that would leave a processor a negative number of items
/// ([`RunError::InvalidPlan`], also for items of zero bytes, and for batches
/// or a pacing that do not carry the flows), protocol errors,
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
/// those received to keep, plus four chunks of items passed on. With batches:
/// one message per planned transfer (trains: per chunk), O(items + planned
/// transfers) local work, memory the items held and all those received.
pub fn redistribute<T: Pod, C: Communicator>(
    comm: &C,
    loads: &[u64],
    flows: &[i128],
    items: &mut impl ItemStorage<T>,
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
    items: &mut impl ItemStorage<u8>,
    options: &Options,
) -> Result<RedistributionReport, RunError> {
    run(comm, loads, flows, item_bytes.max(1), items, options)
}

/// The checks every rank runs before anything moves: the communicator has
/// one rank per processor (the loads and flows, one per processor), the flows
/// fit the loads, and this rank holds `held_bytes`, its load of items of
/// `item_bytes` bytes. On failure this rank refuses ([`refuse`]: every rank
/// learns of it) and returns its error; else the fingerprint of the arguments
/// that must match on every rank, which the caller agrees on with every rank
/// when it opens its arena ([`Arena::agreed`]).
fn start_checks<C: Communicator>(
    comm: &C,
    loads: &[u64],
    flows: &[i128],
    item_bytes: usize,
    held_bytes: usize,
    options: &Options,
) -> Result<Fingerprint, RunError> {
    let fingerprint = Digest::new("ring")
        .add(loads)
        .add(flows)
        .add(&item_bytes)
        .options(options)
        .finish();
    let n = loads.len();
    let (ranks, rank) = (comm.size() as usize, comm.rank() as usize);
    let checked = if ranks != n || flows.len() != n {
        let processors = if ranks != n { n } else { flows.len() };
        Err(RunError::WorldSize { ranks, processors })
    } else {
        let expected = u128::from(loads[rank]) * item_bytes as u128;
        match plan_problem(loads, flows) {
            Some(reason) => Err(RunError::InvalidPlan { reason }),
            None => sizes_match(rank, held_bytes, expected),
        }
    };
    match checked {
        Ok(()) => Ok(fingerprint),
        Err(e) => Err(refuse(comm, e, fingerprint)),
    }
}

/// The own items of a rank whose item buffer gives back what it sends
/// ([`ItemBuffer::set_give_back_sent`](crate::buffer::ItemBuffer::set_give_back_sent)):
/// towards the predecessor they leave from the front (depth 0 is the first
/// item), towards the successor from the back, and the whole pages holding
/// only items that left are given back to the system.
pub(super) struct GiveBack {
    page: usize,
    /// The own items' first byte (address) and their bytes.
    own: (usize, usize),
    /// The own items' whole pages not given back yet (addresses).
    pages: (usize, usize),
}

impl GiveBack {
    /// For own items at `own` (an address), `bytes` long, and pages of `page`
    /// bytes; `None` without a page size (a storage that does not give back).
    pub(super) fn of(page: Option<usize>, own: *const u8, bytes: usize) -> Option<GiveBack> {
        let page = page?;
        let at = own as usize;
        Some(GiveBack {
            page,
            own: (at, bytes),
            pages: (at.next_multiple_of(page), (at + bytes) / page * page),
        })
    }

    /// The first `front` and the last `back` own items (`item_bytes` each)
    /// left: gives back the whole pages that only held them, not given back
    /// yet.
    ///
    /// # Safety
    /// Those items' sends completed, nothing reads or writes them again, and
    /// the own items are in an item buffer.
    pub(super) unsafe fn left(&mut self, (front, back): (u64, u64), item_bytes: usize) {
        let (at, bytes) = self.own;
        let page = self.page;
        let front = (at + front as usize * item_bytes) / page * page;
        let back = (at + bytes - back as usize * item_bytes).next_multiple_of(page);
        let (lo, hi) = self.pages;
        // SAFETY: whole pages of own items that left (the caller's promise),
        // inside the own items' whole pages.
        unsafe {
            if front > lo {
                give_back_pages(lo, front, page);
            }
            if back < hi {
                give_back_pages(back, hi, page);
            }
        }
        self.pages = (front.max(lo), back.min(hi));
    }
}

/// The bytes of the items of depths `a .. b` of `side` (0: clockwise) within
/// a region holding depths `lo .. hi` of that side. Memory runs in ascending
/// local positions: from the deepest item to the nearest clockwise (the
/// items lie before the boundary), from the nearest counterclockwise.
pub(super) fn depth_bytes(
    side: usize,
    (lo, hi): (u64, u64),
    (a, b): (u64, u64),
    item_bytes: usize,
) -> Range<usize> {
    debug_assert!(lo <= a && a <= b && b <= hi);
    let (from, to) = if side == 0 {
        (hi - b, hi - a)
    } else {
        (a - lo, b - lo)
    };
    from as usize * item_bytes..to as usize * item_bytes
}

/// The local position of the first of the items of depths `a .. b` that a rank
/// of `load` items receives on `side` (before its own items clockwise, after
/// them counterclockwise).
pub(super) fn received_at(side: usize, load: i128, (a, b): (u64, u64)) -> i128 {
    if side == 0 {
        -i128::from(b)
    } else {
        load + i128::from(a)
    }
}

/// The local position of the first of its own items of depths `a .. b` that a
/// rank of `load` items sends on `side`.
pub(super) fn own_at(side: usize, load: i128, (a, b): (u64, u64)) -> i128 {
    if side == 0 {
        load - i128::from(b)
    } else {
        i128::from(a)
    }
}

/// The order-aware checksum of a rank's items at their global positions
/// ([`range_sum`]): items of `item_bytes` bytes, local position 0 at global
/// position `first`, `total` items on the ring.
#[derive(Clone, Copy, Debug)]
struct Positions {
    first: u128,
    total: u128,
    item_bytes: usize,
}

impl Positions {
    /// Rank `rank`'s positions on a ring of `loads`.
    fn of(loads: &[u64], rank: usize, item_bytes: usize) -> Positions {
        Positions {
            first: loads[..rank].iter().map(|&l| u128::from(l)).sum(),
            total: loads.iter().map(|&l| u128::from(l)).sum(),
            item_bytes,
        }
    }

    /// The checksum of the items `bytes` from local position `position` on.
    fn sum_at(&self, position: i128, bytes: &[u8]) -> Checksum {
        let global = (self.first as i128 + position).rem_euclid(self.total.max(1) as i128) as u128;
        range_sum(global, self.total, self.item_bytes, bytes)
    }
}

/// The commit decision of a redistribution (one collective: see
/// [`agree_before_commit`]): this rank's items `moved` (to its successor, to
/// its predecessor, from its predecessor, from its successor) against its
/// part `local` of the flows, the first `protocol` error it saw, whether it
/// reports a failure (`failing`), and its part of the checksum's difference
/// `delta` (counted only when its counts are right).
fn agree_to_commit<C: Communicator>(
    comm: &C,
    local: &Local,
    moved: [u64; 4],
    protocol: Option<String>,
    failing: bool,
    delta: Checksum,
) -> Result<(), RunError> {
    let planned = [
        local.items_to_succ(),
        local.items_to_pred(),
        local.items_from_pred(),
        local.items_from_succ(),
    ];
    let counts_ok = protocol.is_none() && moved == planned;
    agree_before_commit(
        comm,
        LocalChecks {
            protocol,
            counts_ok,
            failing,
            delta: if counts_ok { delta } else { Checksum::ZERO },
        },
    )
}

/// A redistribution (see [`redistribute`]) of items of `item_len` elements
/// each: on a duplicate of `comm`, as planned batches ([`Options::batches`])
/// or in chunks.
fn run<E: Pod, C: Communicator>(
    comm: &C,
    loads: &[u64],
    flows: &[i128],
    item_len: usize,
    items: &mut dyn ItemStorage<E>,
    options: &Options,
) -> Result<RedistributionReport, RunError> {
    let duplicate = Duplicate::of(comm);
    let job = Job {
        loads,
        flows,
        item_len,
        items,
        options,
    };
    let mut report = match &options.batches {
        // A circulation (every rank passes items on one way), which no planner
        // makes, runs in chunks, where the room limit holds whatever the
        // order of arrivals; its batches are still checked.
        Some(batches) if circulates(loads, flows) => chunked::run(&duplicate, job, Some(batches)),
        Some(batches) => batched::run(&duplicate, job, batches),
        None => chunked::run(&duplicate, job, None),
    }?;
    report.first = first_positions(loads, flows)[comm.rank() as usize];
    Ok(report)
}

/// Whether every processor passes items on in one direction (a circulation),
/// for valid `loads` and `flows` (false otherwise: the run refuses them).
///
/// Complexity: O(n).
fn circulates(loads: &[u64], flows: &[i128]) -> bool {
    let n = loads.len();
    if n < 2 || flows.len() != n || plan_problem(loads, flows).is_some() {
        return false;
    }
    let every =
        |forwards: fn(&Local) -> u64| (0..n).all(|i| forwards(&Local::of(loads, flows, i)) > 0);
    every(Local::forwards_clockwise) || every(Local::forwards_counterclockwise)
}

/// What a redistribution is given (see [`redistribute`]): every processor's
/// load, the net flows, this rank's items (`item_len` elements of `E` each)
/// and the options.
struct Job<'a, E> {
    loads: &'a [u64],
    flows: &'a [i128],
    item_len: usize,
    items: &'a mut dyn ItemStorage<E>,
    options: &'a Options,
}
