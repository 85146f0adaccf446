//! Optimal plans on unidirectional rings: the paper's Algorithms 1 and 2, and
//! (in `batches`) the same makespan in few transfers.

use crate::ring::{unidirectional_flows, RingInstance};
use crate::ring::{Schedule, Transfer};

mod batches;

pub use batches::batched_schedule;
pub(crate) use batches::{batched_trains, convoy_trains};

/// The exact lower bound of a unidirectional ring: `max_i f_i * c_succ[i]` with the
/// smallest flows `f` ([`unidirectional_flows`]).
///
/// Every unidirectional schedule sends at least `f_i` items over link (i, i+1), one
/// at a time; Algorithms 1 and 2 meet the bound (the paper's Theorems 1 and 2, in the
/// exact flow form of model.md), so this is the optimal makespan.
///
/// Complexity: O(n) time and space.
///
/// # Example
/// ```
/// use hetbal::ring::{unidirectional_lower_bound, RingInstance};
/// //  P0 --1.0--> P1 --3.0--> P2 --1.0--> P0; P0 sends 2 items, P1 forwards 1.
/// let ring = RingInstance::unidirectional(&[4, 1, 1], &[2, 2, 2], &[1.0, 3.0, 1.0]).unwrap();
/// assert_eq!(unidirectional_lower_bound(&ring), 3.0);
/// ```
pub fn unidirectional_lower_bound(instance: &RingInstance) -> f64 {
    lower_bound_of_flows(instance, &unidirectional_flows(instance))
}

pub(crate) fn lower_bound_of_flows(instance: &RingInstance, flows: &[u64]) -> f64 {
    flows
        .iter()
        .zip(instance.c_succ())
        .map(|(&f, &c)| f as f64 * c)
        .fold(0.0, f64::max)
}

/// The paper's Algorithm 1 for homogeneous unidirectional rings: processor i sends its
/// `f_i` items to its successor back to back during `[0, f_i * c)`.
///
/// With equal costs this is also the as-soon-as-possible schedule: the paper's
/// Lemma 3 shows that every processor always holds the item it must send.
/// Only meaningful when all `c_succ` are equal; on other rings the schedule may send
/// items not yet held (the validator says so).
///
/// Complexity: O(n) time and space.
///
/// # Example
/// ```
/// use hetbal::ring::{homogeneous_unidirectional, RingInstance};
/// let ring = RingInstance::unidirectional(&[4, 1, 1], &[2, 2, 2], &[1.0; 3]).unwrap();
/// let schedule = homogeneous_unidirectional(&ring);
/// assert_eq!(schedule.transfers.len(), 2);
/// assert_eq!(schedule.makespan(), 2.0);
/// ```
#[doc(alias("Algorithm 1", "algorithm1"))]
pub fn homogeneous_unidirectional(instance: &RingInstance) -> Schedule {
    let flows = unidirectional_flows(instance);
    let transfers = flows
        .iter()
        .enumerate()
        .filter(|&(_, &f)| f > 0)
        .map(|(i, &f)| Transfer::new(i, instance.succ(i), f, 0.0, f as f64 * instance.c_succ()[i]))
        .collect();
    Schedule::new(transfers)
}

/// Sends of one processor: `count` items, the k-th starting at `start + k * period`
/// (`period >= cost`; `period == cost` means back to back).
#[derive(Clone, Copy, Debug)]
pub(crate) struct Train {
    start: f64,
    count: u64,
    period: f64,
}

impl Train {
    /// Start of the last send.
    fn last_start(&self) -> f64 {
        self.start + (self.count - 1) as f64 * self.period
    }
}

/// Every processor's trains in one vector: processor i owns `trains[ranges[i]]`.
/// One allocation for the whole ring instead of one per processor.
pub(crate) struct RingTrains {
    trains: Vec<Train>,
    ranges: Vec<(usize, usize)>,
}

impl RingTrains {
    fn new(n: usize) -> Self {
        RingTrains {
            trains: Vec::with_capacity(3 * n),
            ranges: vec![(0, 0); n],
        }
    }

    /// The trains of processor `i`.
    fn of(&self, i: usize) -> &[Train] {
        let (a, b) = self.ranges[i];
        &self.trains[a..b]
    }

    /// Starts the trains of processor `i` (they are pushed next).
    fn begin(&mut self, i: usize) {
        let at = self.trains.len();
        self.ranges[i] = (at, at);
    }

    /// Appends a train to processor `i` (the one begun last), merging it with the
    /// previous one when it continues it exactly.
    fn push(&mut self, i: usize, t: Train) {
        if t.count == 0 {
            return;
        }
        let (a, b) = self.ranges[i];
        if b > a {
            let last = &mut self.trains[b - 1];
            let next = last.start + last.count as f64 * last.period;
            if last.period == t.period && (next - t.start).abs() <= 1e-12 * next.abs().max(1.0) {
                last.count += t.count;
                return;
            }
        }
        self.trains.push(t);
        self.ranges[i].1 = self.trains.len();
    }
}

/// The as-soon-as-possible sends of every processor, as trains, and the order of the
/// walk (each processor after its predecessor; the first one receives nothing).
struct AsapTrains {
    flows: Vec<u64>,
    /// Processor i's sends to its successor, in time order.
    trains: RingTrains,
    /// Processors in walk order: `order[0]` receives nothing.
    order: Vec<usize>,
}

/// Forward pass of Algorithm 2: each processor's sends in closed form from its
/// predecessor's. O(n + trains).
fn asap_trains(instance: &RingInstance) -> AsapTrains {
    let n = instance.len();
    let flows = unidirectional_flows(instance);
    // The processor after a zero flow receives nothing: start the walk there.
    let zero = flows.iter().position(|&f| f == 0).unwrap_or(0);
    let order: Vec<usize> = (1..=n).map(|k| (zero + k) % n).collect();
    let mut trains = RingTrains::new(n);
    let mut sends = Vec::new();
    for &i in &order {
        // The walk started after a zero flow, so the predecessor's trains are known
        // (or empty when its flow is zero).
        asap_sends(
            instance,
            i,
            flows[i],
            trains.of(instance.pred(i)),
            &mut sends,
        );
        trains.begin(i);
        for &t in &sends {
            trains.push(i, t);
        }
    }
    AsapTrains {
        flows,
        trains,
        order,
    }
}

/// The as-soon-as-possible sends of processor `i` (Algorithm 2 on one link), into
/// `out` in time order: its `f` sends, each as soon as the link is free and the
/// processor holds an item, its own items at 0 and then the items that `pred_sends`
/// (its predecessor's sends, in time order) bring.
///
/// An incoming train of period `p` fed to a link of cost `c` becomes one
/// back-to-back train when `p <= c`, and otherwise a back-to-back part (while a
/// backlog lasts) followed by a train at the arrival period `p`. O(trains).
fn asap_sends(
    instance: &RingInstance,
    i: usize,
    f: u64,
    pred_sends: &[Train],
    out: &mut Vec<Train>,
) {
    let c = instance.c_succ()[i];
    let incoming_cost = instance.c_succ()[instance.pred(i)];
    out.clear();
    let own = f.min(instance.loads()[i]);
    out.push(Train {
        start: 0.0,
        count: own,
        period: c,
    });
    let mut free = own as f64 * c; // when the link is next free
    let mut remaining = f - own;
    for train in pred_sends {
        if remaining == 0 {
            break;
        }
        let m = train.count.min(remaining);
        remaining -= m;
        let a = train.start + incoming_cost; // arrival of the train's first item
        let p = train.period;
        if p <= c {
            // Items arrive at least as fast as they leave: one back-to-back run.
            let start = free.max(a);
            out.push(Train {
                start,
                count: m,
                period: c,
            });
            free = start + m as f64 * c;
        } else {
            // Send j (0-based) starts at max(free + j*c, a + j*p): back to back while
            // the backlog lasts (j <= jmax), then at each arrival.
            let backlog = if free <= a {
                0
            } else {
                // The cast truncates, which is floor for the non-negative values that
                // matter (without a call to libm's floor); negatives give 0.
                let mut j = (((free - a) / (p - c)) as u64).min(m - 1);
                while j > 0 && free + j as f64 * c < a + j as f64 * p {
                    j -= 1;
                }
                while j + 1 < m && free + (j + 1) as f64 * c >= a + (j + 1) as f64 * p {
                    j += 1;
                }
                j + 1
            };
            out.push(Train {
                start: free,
                count: backlog,
                period: c,
            });
            out.push(Train {
                start: a + backlog as f64 * p,
                count: m - backlog,
                period: p,
            });
            // The last non-empty train ends the link's busy time.
            let last = out.iter().rev().find(|t| t.count > 0);
            free = last.map_or(free, |t| t.last_start() + c);
        }
    }
    debug_assert_eq!(remaining, 0, "the predecessor sends enough to forward");
    out.retain(|t| t.count > 0);
}

/// Turns each processor's trains into transfers: a back-to-back train is one
/// transfer, a train with gaps one paced transfer (its `period`).
fn expand(instance: &RingInstance, trains: &RingTrains) -> Schedule {
    let mut transfers = Vec::with_capacity(trains.trains.len());
    for i in 0..instance.len() {
        let c = instance.c_succ()[i];
        let to = instance.succ(i);
        for t in trains.of(i) {
            let paced = t.period != c && t.count > 1;
            transfers.push(Transfer {
                from: i,
                to,
                items: t.count,
                start: t.start,
                end: if paced {
                    t.last_start() + c
                } else {
                    t.start + t.count as f64 * c
                },
                period: paced.then_some(t.period),
            });
        }
    }
    Schedule::new(transfers)
}

/// How many transfers `trains` make: one per train (u128, as the limits).
pub(crate) fn transfer_count(trains: &RingTrains) -> u128 {
    trains.trains.len() as u128
}

/// How many messages `trains` make when every item of a paced train is a message
/// of its own (u128: cannot overflow).
fn message_count(instance: &RingInstance, trains: &RingTrains) -> u128 {
    (0..instance.len())
        .map(|i| {
            let c = instance.c_succ()[i];
            (trains.of(i).iter())
                .map(|t| {
                    if t.period == c {
                        1
                    } else {
                        u128::from(t.count)
                    }
                })
                .sum::<u128>()
        })
        .sum()
}

/// Expands trains into a schedule (see [`transfer_count`] for its size).
pub(crate) fn schedule_of_trains(instance: &RingInstance, trains: &RingTrains) -> Schedule {
    expand(instance, trains)
}

/// The paper's Algorithm 2 for heterogeneous unidirectional rings: processor i sends
/// its `f_i` items to its successor one by one, each as soon as the link is free and
/// the processor holds an item. This is the true as-soon-as-possible schedule: where
/// a processor waits for items to forward, the schedule has gaps, and the batches of
/// the schedule show them.
///
/// The schedule is computed without expanding items: each processor's sends form
/// "trains" (arithmetic sequences of send times), built from its predecessor's
/// trains in closed form. An incoming train of period `p` fed to a link of cost `c`
/// becomes one back-to-back train when `p <= c`, and otherwise a back-to-back part
/// (while a backlog lasts) followed by a train at the arrival period `p`: one paced
/// transfer ([`Transfer::period`](crate::Transfer::period)), each of its items
/// sent alone as it arrives. The walk starts at the processor after `argmin S`,
/// which receives nothing. Lemma 5 of the paper shows the makespan equals the lower
/// bound; the plan measures it on the schedule.
///
/// Each train is one transfer, so the schedule stays small however many items
/// trickle in: on a full rebalance of 10^6 processors (loads 1 to 50, link costs
/// 0.5 to 2) it has 2.9 million transfers, which stand for 8.9·10^9 items sent
/// one by one, and takes 0.16 s. [`batched_schedule`] sends the same items in
/// back-to-back batches (fewer messages) where they make no more transfers.
///
/// # Complexity
/// O(n + b) time and O(b) space, where b is the number of trains in the output:
/// at least one per sending processor, about 3 per processor on full rebalances.
///
/// # Example
/// ```
/// use hetbal::ring::{asap_unidirectional, RingInstance};
/// // P0 (4 items) --2.0--> P1 (1 item) --1.0--> P2 (2 items) --1.0--> P0.
/// // P0 sends 3 items, arriving at t = 2, 4, 6. P1 passes 3 items on, but its outgoing
/// // link is faster: it sends its own item at 0, then each item as it arrives (at 2
/// // and 4: one paced transfer of 2 items, one every 2 s).
/// let ring = RingInstance::unidirectional(&[4, 1, 2], &[1, 1, 5], &[2.0, 1.0, 1.0]).unwrap();
/// let schedule = asap_unidirectional(&ring);
/// let p1: Vec<(u64, f64, Option<f64>)> = schedule.transfers.iter()
///     .filter(|t| t.from == 1).map(|t| (t.items, t.start, t.period)).collect();
/// assert_eq!(p1, vec![(1, 0.0, None), (2, 2.0, Some(2.0))]);
/// assert_eq!(schedule.makespan(), 6.0);
/// ```
#[doc(alias("Algorithm 2", "algorithm2"))]
pub fn asap_unidirectional(instance: &RingInstance) -> Schedule {
    expand(instance, &algorithm2_trains(instance))
}

/// Algorithm 2's sends per processor, before expansion into transfers.
pub(crate) fn algorithm2_trains(instance: &RingInstance) -> RingTrains {
    asap_trains(instance).trains
}

#[cfg(test)]
mod tests {
    use super::batches::{latest_first_trains, slack_share_trains};
    use super::*;
    use crate::experiment::startups::full_rebalance;
    use crate::ring::{validate, RingKind};

    /// On a full rebalance of 10^4 processors, both passes give valid optimal
    /// schedules, and sharing the slack makes several times fewer batches than
    /// giving each link all of it (the figures of `SLACK_SHARE`'s docs, at 10^4).
    #[test]
    fn sharing_the_slack_batches_more() {
        let ring = full_rebalance(RingKind::Unidirectional, 10_000, 21).unwrap();
        let asap = asap_trains(&ring);
        let bound = lower_bound_of_flows(&ring, &asap.flows);
        let shared = slack_share_trains(&ring, &asap, bound, u128::MAX).unwrap();
        let latest = latest_first_trains(&ring, &asap, bound, u128::MAX).unwrap();
        for trains in [&shared, &latest] {
            let schedule = expand(&ring, trains);
            assert!(validate(&ring, &schedule).is_ok());
            assert!((schedule.makespan() - bound).abs() <= 1e-9 * bound);
        }
        let (s, l) = (shared.trains.len(), latest.trains.len());
        let a = asap.trains.trains.len();
        eprintln!(
            "10^4 processors: {s} batches sharing the slack, {l} latest first, {a} trains of Algorithm 2"
        );
        assert!(3 * s < l, "{s} vs {l}");
        // The batched planner keeps the fewest transfers.
        assert_eq!(
            expand(&ring, &batched_trains(&ring, u128::MAX, false).unwrap())
                .transfers
                .len(),
            s.min(a)
        );
    }
}
