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
//! header message each way it is used (items in the chunk, whether it is the
//! link's last, and how long the items waited for an emulated link when
//! recording), then the chunk itself: up to one chunk of items, possibly none
//! when a forwarder waits for items. The rank's items grow in place (in
//! capacity) to hold, in local order, what it keeps from the predecessor, its
//! own items, and what it keeps from the successor: every chunk of own items is
//! sent straight from where it is, and every item kept is received straight
//! into its place. Items a rank passes on (the first ones it receives from a
//! side) go to chunks of their own, held until they leave; its neighbour sends
//! it such items only while it holds fewer than a few chunks of them (each
//! round the rank tells it how many it has passed on), so that a long
//! forwarding chain costs no rank more than a few chunks of memory. Receives
//! and sends of a round are nonblocking and complete together, so chunks are
//! pipelined along the ring and both directions run at once. The own items are
//! read in place and written only at the commit, which moves the new items, a
//! contiguous range, to the front.
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
//! ([`crate::pacing`]). Memory: the rank's vector grows to hold everything it
//! receives, the items it passes on included (a planned message may gather
//! items that arrived in several, and goes from one place), still without a
//! second copy. [`RedistributionReport::messages_sent`] counts the messages.

use std::collections::VecDeque;
use std::mem::size_of;
use std::time::Instant;

use hetbal::ring::{transfer_link, RingInstance, RingPlan, Transfer};
use mpi::point_to_point::{Destination, Source};
use mpi::topology::SimpleCommunicator;
use mpi::traits::{Communicator, Equivalence};

use bytemuck::Pod;

use crate::arena::Arena;
use crate::checksum::{range_sum, Checksum};
use crate::comm::Duplicate;
use crate::links::RingLinks;
use crate::pacing::{crossing_start, released, Batch, Pacing};
use crate::protocol::{
    agree_before_commit, refuse, sizes_match, spoil, Digest, Fault, Fingerprint, LocalChecks,
};
use crate::timeline::{Direction, Message, Recorder};
use crate::{Options, RunError};

mod batched;

/// The net flow on every link (i, i+1): the library's, re-exported here where
/// the redistributions take it.
pub use hetbal::iterative::online::link_flows;

/// Tag of messages on clockwise links (P_i to P_{i+1}).
const TAG_CLOCKWISE: i32 = 17;
/// Tag of messages on counterclockwise links (P_{i+1} to P_i).
const TAG_COUNTERCLOCKWISE: i32 = 18;
/// Tag of the room messages for clockwise items passed on (from P_{i+1} to P_i:
/// how many of P_i's items it has passed on).
const TAG_ROOM_CLOCKWISE: i32 = 19;
/// Tag of the room messages for counterclockwise items passed on (from P_i to
/// P_{i+1}).
const TAG_ROOM_COUNTERCLOCKWISE: i32 = 20;
/// What a rank did during a committed redistribution.
#[derive(Clone, Debug, PartialEq)]
pub struct RedistributionReport {
    /// Items this rank sent (own and forwarded).
    pub items_sent: u64,
    /// Items this rank received (kept and forwarded).
    pub items_received: u64,
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
    /// this rank held at once: at most a few chunks (see [`redistribute`]).
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

/// The planned sends of a ring plan, for [`Options::pacing`]: stream `2 i` holds
/// processor i's transfers to its successor, stream `2 i + 1` those to its
/// predecessor, each transfer a batch `(start, items, (end - start) / items)`,
/// times `scale` seconds per time unit (a paced train two: its first item, then
/// the others one `period` apart). An item leaves once its planned transfer
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
        let stream = &mut streams[stream_of(n, t)];
        let cost = t.item_time() * scale;
        match t.period {
            Some(period) => push_paced(stream, t, cost, period * scale, scale),
            None => stream.push((t.start * scale, t.items, cost)),
        }
    }
    Pacing { streams }
}

/// A paced train's items as pacing batches: the first one after `first`
/// seconds, then one every `period` seconds (at least `first`).
fn push_paced(
    stream: &mut Vec<(f64, u64, f64)>,
    t: &Transfer,
    first: f64,
    period: f64,
    scale: f64,
) {
    let start = t.start * scale;
    stream.push((start, 1, first));
    if t.items > 1 {
        stream.push((start + first, t.items - 1, period.max(first)));
    }
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
        let stream = &mut streams[stream_of(n, t)];
        if let Some(period) = t.period {
            // Each item of a paced train is a message of its own.
            let one = side
                .get(t.from)
                .map_or(0.0, |link| link.seconds(item_bytes));
            push_paced(stream, t, one, period, 1.0);
            continue;
        }
        let bytes = (t.items as usize).saturating_mul(item_bytes);
        let seconds = side.get(t.from).map_or(0.0, |link| link.seconds(bytes));
        stream.push((t.start, t.items, seconds / t.items as f64));
    }
    Pacing { streams }
}

/// The stream of a planned transfer on a ring of `n` processors: `2 i` for
/// processor i's sends to its successor, `2 i + 1` for those to its
/// predecessor (on two processors every send is to the successor).
fn stream_of(n: usize, t: &Transfer) -> usize {
    2 * t.from + usize::from(t.to != (t.from + 1) % n)
}

/// One planned transfer of a stream of [`Batches`]: its items, and whether it
/// goes as one message (its link has a start-up) or as a train.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PlannedBatch {
    /// Items of the transfer (at least 1).
    pub items: u64,
    /// True when the transfer is one message (its link has a start-up): all its
    /// items leave together once all are held, and arrive together. False: a
    /// train, whose items may leave as they are held (in pieces of
    /// [`Options::chunk_bytes`]).
    pub message: bool,
}

/// The planned transfers of a ring plan, for [`Options::batches`]: stream
/// `2 i` holds processor i's transfers to its successor, stream `2 i + 1`
/// those to its predecessor, in the plan's order (the streams of
/// [`pacing_from_plan`], batch for batch). Identical on every rank.
///
/// # Example
/// ```
/// use hetbal_mpi::ring::{Batches, PlannedBatch};
/// let batches = Batches { streams: vec![vec![PlannedBatch { items: 3, message: true }], vec![]] };
/// assert_eq!(batches.stream(0)[0].items, 3);
/// assert!(batches.stream(1).is_empty() && batches.stream(5).is_empty());
/// ```
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Batches {
    /// The planned transfers of each stream, in the plan's order.
    pub streams: Vec<Vec<PlannedBatch>>,
}

impl Batches {
    /// The transfers of stream `k` (none when there is no such stream).
    ///
    /// Complexity: O(1).
    pub fn stream(&self, k: usize) -> &[PlannedBatch] {
        self.streams.get(k).map_or(&[], Vec::as_slice)
    }
}

/// The batches a redistribution of `plan` needs: [`batches_from_plan`] on a
/// ring with start-ups (one message per planned transfer), `None` on a ring
/// without (its trains go in chunks). What [`Options::batches`] takes for a
/// plan.
///
/// Complexity: O(n + transfers) with start-ups, O(1) without.
///
/// # Example
/// ```
/// use hetbal::ring::{plan, RingInstance};
/// use hetbal_mpi::ring::message_batches;
/// let ring = RingInstance::unidirectional(&[5, 1, 1], &[1, 1, 5], &[1.0; 3]).unwrap();
/// assert!(message_batches(&ring, &plan(&ring, None).unwrap()).is_none());
/// let ring = ring.with_startups(&[3.0; 3], &[0.0; 3]).unwrap();
/// assert!(message_batches(&ring, &plan(&ring, None).unwrap()).is_some());
/// ```
pub fn message_batches(instance: &RingInstance, plan: &RingPlan) -> Option<Batches> {
    instance
        .has_startups()
        .then(|| batches_from_plan(instance, plan))
}

/// The planned transfers of a ring plan ([`Batches`], for
/// [`Options::batches`]): each a message when its link has a start-up
/// (`instance.l_succ()`, `l_pred()`: the link whose cost and start-up give the
/// transfer's duration, as the library's validator reads it), else a train.
/// Give them to a redistribution of a ring with start-ups
/// ([`RingInstance::has_startups`]) so that it sends one message per planned
/// transfer; a ring without start-ups needs none (its plan's trains go in
/// chunks as before).
///
/// Complexity: O(n + transfers).
///
/// # Example
/// ```
/// use hetbal::ring::{plan, RingInstance};
/// use hetbal_mpi::ring::batches_from_plan;
/// // P0 gives P2 four items through P1; every message pays a start-up of 3.
/// let ring = RingInstance::unidirectional(&[5, 1, 1], &[1, 1, 5], &[1.0; 3])
///     .unwrap()
///     .with_startups(&[3.0; 3], &[0.0; 3])
///     .unwrap();
/// let the_plan = plan(&ring, None).unwrap();
/// let batches = batches_from_plan(&ring, &the_plan);
/// // One entry per planned transfer, every one a message.
/// let entries: Vec<_> = batches.streams.iter().flatten().collect();
/// assert_eq!(entries.len(), the_plan.transfers.len());
/// assert!(entries.iter().all(|b| b.message));
/// assert_eq!(batches.stream(0).iter().map(|b| b.items).sum::<u64>(), 4);
/// ```
pub fn batches_from_plan(instance: &RingInstance, plan: &RingPlan) -> Batches {
    let n = instance.len();
    let mut streams = vec![Vec::new(); 2 * n];
    for t in &plan.transfers {
        streams[stream_of(n, t)].push(PlannedBatch {
            items: t.items,
            message: link_of(instance, t).1 > 0.0,
        });
    }
    Batches { streams }
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

/// Moves the items of a ring plan between the ranks of `comm` (rank i is processor
/// i), checks them, and commits only if every rank's checks pass. Items are any
/// plain-old-data type ([`bytemuck::Pod`], for example `f64`, `[u8; 64]` or a
/// `#[derive(Pod, Zeroable)]` struct); [`redistribute_bytes`] takes raw bytes.
///
/// No second copy of the data: `items` grows in place (in capacity) to hold what
/// this rank receives beyond its own items, which stay intact until the commit,
/// and the commit moves the new items in place. A rank's memory is its items plus
/// those it receives and keeps, `max(load, target)` items when it only sends or
/// only receives; items it passes on stay only until they leave, a few chunks
/// at a time (its neighbour sends them only while it has room). With
/// [`Options::batches`] (rings with start-ups: see the module's docs) every
/// planned transfer over a link with a start-up is one message, and the items
/// a rank passes on are held in `items`' capacity too. After the commit `items`
/// keeps its capacity, so that the next redistribution receives into memory
/// already touched (`shrink_to_fit` gives it back).
///
/// # Arguments
/// * `comm` - the communicator, one rank per processor;
/// * `loads` - every processor's load (items), identical on every rank;
/// * `flows` - the net flow on each link (i, i+1), positive clockwise
///   ([`link_flows`]), identical on every rank;
/// * `items` - this rank's items, `loads[rank]` of them, in order; replaced by its
///   new items on success, untouched on error;
/// * `options` - message size, fault injection ([`Fault`]: the rank's first
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

/// A redistribution (see [`redistribute`]) of items of `item_len` elements each.
fn run<E: Pod, C: Communicator>(
    comm: &C,
    loads: &[u64],
    flows: &[i128],
    item_len: usize,
    items: &mut Vec<E>,
    options: &Options,
) -> Result<RedistributionReport, RunError> {
    let duplicate = Duplicate::of(comm);
    let comm: &SimpleCommunicator = &duplicate;
    if let Some(batches) = &options.batches {
        return batched::run(comm, loads, flows, item_len, items, options, batches);
    }
    let started = Instant::now();
    let n = loads.len();
    let rank = comm.rank() as usize;
    let item_bytes = item_len * std::mem::size_of::<E>();
    let held = items.len() * size_of::<E>();
    let fingerprint = start_checks(comm, loads, flows, item_bytes, held, options)?;
    let local = Local::of(loads, flows, rank);
    let (from_pred, from_succ) = (local.items_from_pred(), local.items_from_succ());
    // Items passed on never enter the arena, which holds what this rank keeps:
    // [kept from pred | own | kept from succ].
    let forwards = [
        local.forwards_clockwise(),
        local.forwards_counterclockwise(),
    ];
    let (kept_before, kept_after) = (from_pred - forwards[0], from_succ - forwards[1]);
    let mut arena = Arena::agreed(
        comm,
        Ok(()),
        fingerprint,
        items,
        item_len,
        kept_before,
        kept_after,
    )?;
    let succ = ((rank + 1) % n) as i32;
    let pred = ((rank + n - 1) % n) as i32;
    let chunk_items = options.chunk_items(item_bytes);
    let my_fault = options.fault_of(rank);
    // Flow control of the items passed on (see `STAGED_CHUNKS`): how many of the
    // items this rank sends its successor (predecessor) are passed on, and how
    // many of them it has passed on so far, as last heard. When every rank
    // passes items on in the same direction (a circulation no planner makes),
    // waiting for room could go round the ring for ever: no limit then.
    let neighbour_forwards = [
        Local::of(loads, flows, (rank + 1) % n).forwards_clockwise(),
        Local::of(loads, flows, (rank + n - 1) % n).forwards_counterclockwise(),
    ];
    let bounded = [
        !(0..n).all(|i| Local::of(loads, flows, i).forwards_clockwise() > 0),
        !(0..n).all(|i| Local::of(loads, flows, i).forwards_counterclockwise() > 0),
    ];
    let room = STAGED_CHUNKS * chunk_items as u64;
    let mut neighbour_passed_on = [0u64; 2];
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
        // a link count the same items): to the neighbour sending items this rank
        // passes on, and from the neighbour passing on items this rank sends.
        let give_room = [
            bounded[0] && recv_pred.done < forwards[0],
            bounded[1] && recv_succ.done < forwards[1],
        ];
        let take_room = [
            bounded[0] && send_succ.done < neighbour_forwards[0],
            bounded[1] && send_pred.done < neighbour_forwards[1],
        ];
        // How many items each side may take now: never across the line between
        // own items and items passed on (here) or between items passed on and
        // items kept (at the neighbour), and within the neighbour's room.
        let limit = |stream: &Stream, side: usize, ready: i128| {
            let mut ready = ready;
            if stream.done < neighbour_forwards[side] {
                ready = ready.min(i128::from(neighbour_forwards[side] - stream.done));
                if bounded[side] {
                    let allowed = i128::from(neighbour_passed_on[side]) + i128::from(room);
                    ready = ready.min(allowed - i128::from(stream.done));
                }
            }
            ready
        };
        // This round's chunks: local positions [lo, hi), to the successor and to
        // the predecessor, sent from where they are.
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
            // Clockwise: positions downwards from load - done: own items, then
            // the chunks received from the predecessor to pass on.
            let hi = local.load - i128::from(send_succ.done);
            let ready = if hi > 0 {
                hi
            } else {
                stages[0].ready_from(hi, true)
            };
            let ready = limit(&send_succ, 0, ready);
            let (k, capped) = send_succ.take(ready, chunk_items, cap_succ);
            held[0] = capped && carrying(2 * rank, send_succ.done);
            sent += k;
            out[0] = Some((hi - i128::from(k), hi, send_succ.finished));
        }
        if !send_pred.finished {
            // Counterclockwise: positions upwards from done: own items, then the
            // chunks received from the successor to pass on.
            let lo = i128::from(send_pred.done);
            let ready = if lo < local.load {
                local.load - lo
            } else {
                stages[1].ready_from(lo, false)
            };
            let ready = limit(&send_pred, 1, ready);
            let (k, capped) = send_pred.take(ready, chunk_items, cap_pred);
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
        let passed_on = [
            [send_succ.done.saturating_sub(loads[rank])],
            [send_pred.done.saturating_sub(loads[rank])],
        ];
        let mut headers_in = [[0u64; 3]; 2]; // from pred, from succ
        let mut room_in = [[0u64; 1]; 2]; // from succ (clockwise), from pred
        let want = [!recv_pred.finished, !recv_succ.finished];
        mpi::request::scope(|scope| {
            let [from_pred, from_succ] = &mut headers_in;
            let [room_succ, room_pred] = &mut room_in;
            let mut requests = Vec::new();
            let (to_pred, to_succ) = (comm.process_at_rank(pred), comm.process_at_rank(succ));
            if want[0] {
                requests.push(to_pred.immediate_receive_into_with_tag(
                    scope,
                    &mut from_pred[..],
                    TAG_CLOCKWISE,
                ));
            }
            if want[1] {
                requests.push(to_succ.immediate_receive_into_with_tag(
                    scope,
                    &mut from_succ[..],
                    TAG_COUNTERCLOCKWISE,
                ));
            }
            if take_room[0] {
                requests.push(to_succ.immediate_receive_into_with_tag(
                    scope,
                    &mut room_succ[..],
                    TAG_ROOM_CLOCKWISE,
                ));
            }
            if take_room[1] {
                requests.push(to_pred.immediate_receive_into_with_tag(
                    scope,
                    &mut room_pred[..],
                    TAG_ROOM_COUNTERCLOCKWISE,
                ));
            }
            if out[0].is_some() {
                requests.push(to_succ.immediate_send_with_tag(
                    scope,
                    &headers_out[0][..],
                    TAG_CLOCKWISE,
                ));
            }
            if out[1].is_some() {
                requests.push(to_pred.immediate_send_with_tag(
                    scope,
                    &headers_out[1][..],
                    TAG_COUNTERCLOCKWISE,
                ));
            }
            if give_room[0] {
                requests.push(to_pred.immediate_send_with_tag(
                    scope,
                    &passed_on[0][..],
                    TAG_ROOM_CLOCKWISE,
                ));
            }
            if give_room[1] {
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
        for side in 0..2 {
            if take_room[side] {
                neighbour_passed_on[side] = neighbour_passed_on[side].max(room_in[side][0]);
            }
        }
        // Check the headers: how many items come from each side, and where they
        // go: a chunk to pass on (never mixed with items kept) or the arena.
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
            if stream.done < forwards[side] && stream.done + k > forwards[side] {
                protocol.get_or_insert(format!(
                    "from rank {from}: a chunk of {k} items mixes items to pass on and items to keep"
                ));
            }
            incoming[side] = Some(k);
            stream.finished = last == 1 || k == left;
        }
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
