//! A plan as a runtime paces and sends it, without MPI: the planned sends of
//! every stream of messages for emulated links ([`Pacing`]: [`ring_pacing`],
//! [`scatter_pacing`], [`genblock_pacing`]) and the planned messages of a ring
//! with start-ups ([`Batches`]: [`batches_from_plan`]). The MPI runtime
//! (`hetbal-mpi`) runs them; here they are plain data, checked by doctests.
//!
//! Planned sends are batches `(start, items, seconds per item)`: item j of a
//! batch (from 1) has crossed its link at `start + j * seconds per item`.
//! Times are seconds from the start of the operation.

use crate::genblock::{GenBlockInstance, StepSchedule};
use crate::ring::{transfer_link, RingInstance, RingPlan, Transfer};
use crate::scatter::{Cost, ScatterInstance, ScatterPlan};

/// One batch of planned sends on a link: `(start, items, seconds per item)`.
pub type Batch = (f64, u64, f64);

/// Emulated links for one operation (the MPI runtime's `Options::pacing`): the planned
/// sends of every stream of messages, each a list of batches in time order,
/// identical on every rank. Which stream is which is the operation's:
/// - ring ([`ring_pacing`]): stream `2 i` holds processor i's
///   sends to its successor, stream `2 i + 1` its sends to its predecessor;
/// - scatter ([`scatter_pacing`]): stream k holds the root's
///   sends to rank k of the communicator ranked in the plan's order;
/// - GEN_BLOCK ([`genblock_pacing`]): stream s holds one batch
///   that every message of step s follows.
///
/// # Example
/// ```
/// use hetbal::pacing::Pacing;
/// let pacing = Pacing { streams: vec![vec![(0.0, 3, 1.0)], vec![]] };
/// assert_eq!(pacing.stream(0), &[(0.0, 3, 1.0)]);
/// assert!(pacing.stream(1).is_empty() && pacing.stream(7).is_empty());
/// ```
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Pacing {
    /// The batches of each stream, in time order.
    pub streams: Vec<Vec<Batch>>,
}

impl Pacing {
    /// The batches of stream `k` (none when the pacing has no such stream).
    ///
    /// Complexity: O(1).
    pub fn stream(&self, k: usize) -> &[Batch] {
        self.streams.get(k).map_or(&[], Vec::as_slice)
    }
}

/// Items of `batches` (in time order) whose planned transfer has ended `now`
/// seconds after the start, and when the next one ends (`None` when all have).
/// A batch with a cost per item of zero (or less) releases all its items at its
/// start.
///
/// Complexity: O(batches).
///
/// # Example
/// ```
/// use hetbal::pacing::released;
/// let batches = [(0.0, 3, 1.0), (5.0, 2, 0.5)];
/// assert_eq!(released(&batches, 0.5), (0, Some(1.0)));
/// assert_eq!(released(&batches, 2.2), (2, Some(3.0)));
/// assert_eq!(released(&batches, 4.0), (3, Some(5.5)));
/// assert_eq!(released(&batches, 6.0), (5, None));
/// assert_eq!(released(&[(1.0, 4, 0.0)], 1.0), (4, None));
/// ```
pub fn released(batches: &[Batch], now: f64) -> (u64, Option<f64>) {
    let mut released = 0u64;
    for &(start, items, cost) in batches {
        if items == 0 {
            continue;
        }
        let ended = if cost > 0.0 {
            if now < start + cost {
                0
            } else {
                (((now - start) / cost).floor() as u64).min(items)
            }
        } else if now >= start {
            items
        } else {
            0
        };
        released += ended;
        if ended < items {
            let next = if cost > 0.0 {
                start + (ended + 1) as f64 * cost
            } else {
                start
            };
            return (released, Some(next));
        }
    }
    (released, None)
}

/// When item `item` (from 0, counting over all `batches`, in time order) starts
/// to cross its emulated link: `start + item_in_batch × cost` of its batch;
/// `None` beyond the batches' items.
///
/// Complexity: O(batches).
///
/// # Example
/// ```
/// use hetbal::pacing::crossing_start;
/// let batches = [(0.0, 3, 1.0), (5.0, 2, 0.5)];
/// assert_eq!(crossing_start(&batches, 2), Some(2.0));
/// assert_eq!(crossing_start(&batches, 4), Some(5.5));
/// assert_eq!(crossing_start(&batches, 5), None);
/// ```
pub fn crossing_start(batches: &[Batch], item: u64) -> Option<f64> {
    let mut before = 0u64;
    for &(start, items, cost) in batches {
        if item < before + items {
            return Some(start + (item - before) as f64 * cost.max(0.0));
        }
        before += items;
    }
    None
}

/// The planned sends of a ring plan, for the MPI runtime's `Options::pacing`: stream `2 i` holds
/// processor i's transfers to its successor, stream `2 i + 1` those to its
/// predecessor, each transfer a batch `(start, items, (end - start) / items)`,
/// times `scale` seconds per time unit (a paced train two: its first item, then
/// the others one `period` apart). An item leaves once its planned transfer
/// has ended, so each link carries its items at the plan's pace and the
/// redistribution lasts about the plan's makespan, on one machine as on
/// heterogeneous links. On a ring of two processors, whose neighbours are one
/// processor, every transfer is a send to the successor (as in `link_flows`).
///
/// Complexity: O(n + transfers).
///
/// # Example
/// ```
/// use hetbal::ring::{plan, RingInstance};
/// use hetbal::pacing::ring_pacing;
/// // P0 gives P2 two items through P1, at one time unit per item on every link.
/// let ring = RingInstance::unidirectional(&[3, 1, 1], &[1, 1, 3], &[1.0; 3]).unwrap();
/// let plan = plan(&ring, None).unwrap();
/// let pacing = ring_pacing(&ring, &plan, 0.5); // half a second per time unit
/// assert_eq!(pacing.stream(0), &[(0.0, 2, 0.5)]); // P0 to P1
/// assert_eq!(pacing.stream(2)[0].1, 2); // P1 forwards them to P2
/// assert!(pacing.stream(1).is_empty()); // P0 sends nothing to its predecessor
/// ```
pub fn ring_pacing(instance: &RingInstance, plan: &RingPlan, scale: f64) -> Pacing {
    let n = instance.len();
    let mut streams = vec![Vec::new(); 2 * n];
    for t in &plan.transfers {
        let stream = &mut streams[ring_stream(n, t)];
        let cost = t.item_time() * scale;
        match t.period {
            Some(period) => push_train(stream, t, cost, period * scale, scale),
            None => stream.push((t.start * scale, t.items, cost)),
        }
    }
    Pacing { streams }
}

/// A paced train's items as pacing batches: the first one after `first`
/// seconds, then one every `period` seconds (at least `first`).
pub fn push_train(stream: &mut Vec<Batch>, t: &Transfer, first: f64, period: f64, scale: f64) {
    let start = t.start * scale;
    stream.push((start, 1, first));
    if t.items > 1 {
        stream.push((start + first, t.items - 1, period.max(first)));
    }
}

/// The stream of a planned transfer on a ring of `n` processors: `2 i` for
/// processor i's sends to its successor, `2 i + 1` for those to its
/// predecessor (on two processors every send is to the successor).
pub fn ring_stream(n: usize, t: &Transfer) -> usize {
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
    /// `Options::chunk_bytes`).
    pub message: bool,
}

/// The planned transfers of a ring plan, for the MPI runtime's `Options::batches`: stream
/// `2 i` holds processor i's transfers to its successor, stream `2 i + 1`
/// those to its predecessor, in the plan's order (the streams of
/// [`ring_pacing`], transfer for transfer: a paced train is one entry here
/// and two batches there). Identical on every rank.
///
/// # Example
/// ```
/// use hetbal::pacing::{Batches, PlannedBatch};
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
/// without (its trains go in chunks). What the MPI runtime's `Options::batches` takes for a
/// plan.
///
/// Complexity: O(n + transfers) with start-ups, O(1) without.
///
/// # Example
/// ```
/// use hetbal::ring::{plan, RingInstance};
/// use hetbal::pacing::message_batches;
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
/// the MPI runtime's `Options::batches`): each a message when its link has a start-up
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
/// use hetbal::pacing::batches_from_plan;
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
        streams[ring_stream(n, t)].push(PlannedBatch {
            items: t.items,
            message: transfer_link(instance, t).is_some_and(|link| link.startup > 0.0),
        });
    }
    Batches { streams }
}

/// The root's planned sends of a scatter plan, for the MPI runtime's `Options::pacing`: stream k
/// holds the sends to position k of the plan's order (rank k of
/// the MPI runtime's `ranked_in_order`), where item j (from 1) crosses the link at
/// `receive_start[k] + Tcomm(j)` time units after the scatter starts, times
/// `scale` seconds per time unit. Affine costs give one batch (`startup` first,
/// then `per_item` per item), tabulated costs one batch per item. An item leaves
/// the root once its planned transfer has ended.
///
/// Complexity: O(p) for affine costs, O(N) for tables.
///
/// # Example
/// ```
/// use hetbal::scatter::{plan_in_order, Method, ScatterInstance};
/// use hetbal::pacing::scatter_pacing;
/// // Root P2 sends to P0, then to P1, both at 1 per item; P2 computes slowly.
/// let s = ScatterInstance::linear(3, 2, &[1.0, 1.0, 0.0], &[1.0, 1.0, 10.0]).unwrap();
/// let plan = plan_in_order(&s, Method::Exact, &[0, 1, 2]).unwrap();
/// assert_eq!(plan.counts, vec![2, 1, 0]);
/// let pacing = scatter_pacing(&s, &plan, 0.5); // half a second per time unit
/// assert_eq!(pacing.stream(0), &[(0.0, 2, 0.5)]);
/// assert_eq!(pacing.stream(1), &[(1.0, 1, 0.5)]); // after P0's two items
/// assert!(pacing.stream(2).is_empty()); // the root sends nothing to itself
/// ```
pub fn scatter_pacing(instance: &ScatterInstance, plan: &ScatterPlan, scale: f64) -> Pacing {
    let root = plan.order.len().saturating_sub(1);
    let streams = plan
        .order
        .iter()
        .zip(&plan.counts)
        .enumerate()
        .map(|(k, (&i, &x))| {
            if x == 0 || k == root {
                return Vec::new();
            }
            let start = plan.timeline.receive_start[k] - plan.start;
            match instance.comm(i) {
                Cost::Affine { per_item, startup } => {
                    vec![((start + startup) * scale, x, per_item * scale)]
                }
                Cost::Table(t) => (1..=x as usize)
                    .filter_map(|j| Some((t.get(j - 1)?, t.get(j)?)))
                    .map(|(&before, &after)| {
                        ((start + before) * scale, 1, (after - before) * scale)
                    })
                    .collect(),
            }
        })
        .collect();
    Pacing { streams }
}

/// Emulated links for a GEN_BLOCK schedule, for the MPI runtime's `Options::pacing`: the cost
/// model of the instance, `scale` seconds per time unit. Stream s holds one batch
/// that every message of step s follows: it starts at
/// `S_s + startup` (`S_0 = 0`, `S_{s+1} = S_s + startup + unit * (largest size in
/// step s)`), carries the step's largest size, at `unit` per element. A chunk
/// leaves once its last element has crossed its link.
///
/// Complexity: O(messages).
///
/// # Example
/// ```
/// use hetbal::genblock::{GenBlockInstance, Message, StepSchedule};
/// use hetbal::pacing::genblock_pacing;
/// let instance = GenBlockInstance::new(&[3, 3], &[5, 1], 0.5, 0.25).unwrap();
/// let m = |from, to, size| Message { from, to, size };
/// let schedule = StepSchedule { steps: vec![vec![m(0, 0, 3), m(1, 1, 1)], vec![m(1, 0, 2)]] };
/// let pacing = genblock_pacing(&instance, &schedule, 1.0);
/// assert_eq!(pacing.stream(0), &[(0.5, 3, 0.25)]);
/// assert_eq!(pacing.stream(1), &[(1.75, 2, 0.25)]); // after step 0's 1.25
/// ```
pub fn genblock_pacing(instance: &GenBlockInstance, schedule: &StepSchedule, scale: f64) -> Pacing {
    let (startup, unit) = (instance.startup() * scale, instance.unit() * scale);
    let mut clock = 0.0f64;
    let streams = schedule
        .largest()
        .into_iter()
        .map(|largest| {
            let batch = (clock + startup, largest, unit);
            clock += startup + unit * largest as f64;
            vec![batch]
        })
        .collect();
    Pacing { streams }
}
