//! Schedules for bidirectional rings: Lemma 9 for light flows, and a
//! store-and-forward list scheduler driven by per-item deadlines for the others.

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use crate::random::SplitMix64;
use crate::ring::segments::segment_schedule;
use crate::ring::{prefix_sums, RingAlgorithm, RingInstance, MAX_TRANSFERS};
use crate::ring::{Schedule, Transfer};

/// The clockwise net flows `f_i = x + S_i` for the circulation `x` (link i joins
/// P_i and P_{i+1}; positive means P_i sends to P_{i+1}).
///
/// Complexity: O(n).
///
/// # Example
/// ```
/// use hetbal::ring::{circulation_flows, RingInstance};
/// let ring = RingInstance::bidirectional(&[3, 1, 2], &[1, 2, 3], &[1.0; 3], &[1.0; 3]).unwrap();
/// assert_eq!(circulation_flows(&ring, 0), vec![2, 1, 0]);
/// assert_eq!(circulation_flows(&ring, -1), vec![1, 0, -1]);
/// ```
pub fn circulation_flows(instance: &RingInstance, x: i128) -> Vec<i128> {
    prefix_sums(instance).into_iter().map(|s| s + x).collect()
}

/// Items processor i sends to its successor and to its predecessor under `flows`.
fn sends_of(flows: &[i128], i: usize) -> (u128, u128) {
    let n = flows.len();
    let next = flows[i];
    let prev = flows[(i + n - 1) % n];
    (next.max(0) as u128, (-prev).max(0) as u128)
}

/// True when no processor sends more items than it holds at the start under `flows`
/// (the paper's "light" redistributions: no item is forwarded).
///
/// Complexity: O(n).
pub fn is_light(instance: &RingInstance, flows: &[i128]) -> bool {
    (0..instance.len()).all(|i| {
        let (s, p) = sends_of(flows, i);
        s + p <= u128::from(instance.loads()[i])
    })
}

fn c_pred(instance: &RingInstance, i: usize) -> f64 {
    instance.c_pred()[i].expect("a bidirectional ring has c_pred")
}

/// Lemma 9's schedule for light flows: every processor sends its items for its
/// successor from time 0, back to back, then those for its predecessor as soon as
/// the predecessor has stopped receiving from its own predecessor.
///
/// With light flows every item sent is an item held from the start, so the
/// schedule is valid; its makespan is at most the System 6 value of the flows (each
/// backward batch ends by the larger of its sender's total sending time and its
/// receiver's total receiving time). On flows that are not light it may send items
/// not yet held: the validator says so.
///
/// Complexity: O(n) time and space; at most two transfers per processor.
///
/// # Example
/// ```
/// use hetbal::ring::{circulation_flows, light_flows_schedule, RingInstance};
/// use hetbal::validate;
/// // P0 holds 5 and keeps 1: it sends 2 each way.
/// let ring = RingInstance::bidirectional(&[5, 1, 1], &[1, 3, 3], &[1.0; 3], &[2.0; 3]).unwrap();
/// let flows = circulation_flows(&ring, -2); // [2, 0, -2]
/// let schedule = light_flows_schedule(&ring, &flows);
/// assert_eq!(schedule.makespan(), 6.0); // 2 items at 1.0, then 2 at 2.0
/// assert!(validate(&ring, &schedule).is_ok());
/// ```
#[doc(alias("Lemma 9", "lemma9_schedule"))]
pub fn light_flows_schedule(instance: &RingInstance, flows: &[i128]) -> Schedule {
    let n = instance.len();
    let forward_end = |i: usize| flows[i].max(0) as f64 * instance.c_succ()[i];
    let mut transfers = Vec::with_capacity(2 * n);
    for i in 0..n {
        let (to_succ, to_pred) = sends_of(flows, i);
        let pred = instance.pred(i);
        if to_succ > 0 {
            transfers.push(Transfer::new(
                i,
                instance.succ(i),
                to_succ as u64,
                0.0,
                forward_end(i),
            ));
        }
        if to_pred > 0 {
            // The predecessor receives from its own predecessor during
            // [0, forward_end(pred of pred)).
            let start = forward_end(i).max(forward_end(instance.pred(pred)));
            transfers.push(Transfer::new(
                i,
                pred,
                to_pred as u64,
                start,
                start + to_pred as f64 * c_pred(instance, i),
            ));
        }
    }
    Schedule::new(transfers)
}

/// A port that sends (or receives) one item at a time.
#[derive(Clone, Copy)]
struct Port {
    free_at: f64,
}

/// Store-and-forward list scheduling of given flows, item by item: whenever a
/// processor's sending port is free and it holds an item, it sends one to the
/// neighbour whose next item is due first, if that neighbour's receiving port is
/// free; the k-th of g items on a link is due at `k * target / g`. Candidates at
/// one instant are served in order of their due times.
///
/// The schedule is valid by construction (a processor only sends items it holds,
/// one at a time, to a free receiver); its makespan is measured. Consecutive items
/// on one link form one transfer.
///
/// Returns `None` when the flows move more than `max_items` items in all (the
/// scheduler works item by item).
///
/// # Complexity
/// O(F log n) time for F items moved, O(n + b) space for b transfers.
///
/// # Example
/// ```
/// use hetbal::ring::{circulation_flows, list_schedule, RingInstance};
/// use hetbal::validate;
/// // The paper's Algorithm 3 fails here (model.md): loads [1,2,3,1], delta [-3,1,2,0].
/// let ring = RingInstance::bidirectional(&[1, 2, 3, 1], &[4, 1, 1, 1], &[1.0; 4], &[1.0; 4]).unwrap();
/// let flows = circulation_flows(&ring, 1); // [-2, -1, 1, 1]
/// let schedule = list_schedule(&ring, &flows, 3.0, 1_000).unwrap();
/// assert!(validate(&ring, &schedule).is_ok());
/// assert_eq!(schedule.makespan(), 3.0);
/// ```
pub fn list_schedule(
    instance: &RingInstance,
    flows: &[i128],
    target: f64,
    max_items: u128,
) -> Option<Schedule> {
    let n = instance.len();
    let goal: Vec<(u128, u128)> = (0..n).map(|i| sends_of(flows, i)).collect();
    let due = |from: usize, dir: usize, k: u128| -> f64 {
        let count = if dir == 0 { goal[from].0 } else { goal[from].1 };
        if count == 0 {
            f64::INFINITY
        } else {
            k as f64 * target / count as f64
        }
    };
    list_schedule_by(instance, flows, &due, max_items)
}

/// Send times of every item, per processor and direction (0: to the successor, 1:
/// to the predecessor), in order.
pub(crate) type ItemTimes = Vec<[Vec<f64>; 2]>;

/// The start time of every item of a schedule, per sender and direction.
pub(crate) fn item_starts(instance: &RingInstance, schedule: &Schedule) -> ItemTimes {
    let n = instance.len();
    let mut times: ItemTimes = vec![[Vec::new(), Vec::new()]; n];
    for t in &schedule.transfers {
        let dir = usize::from(t.to != instance.succ(t.from));
        let spacing = t.period.unwrap_or(t.item_time());
        times[t.from][dir].extend((0..t.items).map(|k| t.start + k as f64 * spacing));
    }
    for per in &mut times {
        for list in per.iter_mut() {
            list.sort_by(f64::total_cmp);
        }
    }
    times
}

/// List scheduling with the due time of the k-th item (from 1) that processor `from`
/// sends in direction `dir` (0: to its successor, 1: to its predecessor) given by
/// `due(from, dir, k)`. See [`list_schedule`].
pub(crate) fn list_schedule_by(
    instance: &RingInstance,
    flows: &[i128],
    due: &dyn Fn(usize, usize, u128) -> f64,
    max_items: u128,
) -> Option<Schedule> {
    let n = instance.len();
    let total: u128 = flows.iter().map(|f| f.unsigned_abs()).sum();
    if total > max_items {
        return None;
    }
    // Per processor: items to send to succ, to pred, and how many already sent.
    let goal: Vec<(u128, u128)> = (0..n).map(|i| sends_of(flows, i)).collect();
    let mut sent = vec![(0u128, 0u128); n];
    let mut held: Vec<u128> = instance.loads().iter().map(|&l| u128::from(l)).collect();
    let mut send_port = vec![Port { free_at: 0.0 }; n];
    let mut receive_port = vec![Port { free_at: 0.0 }; n];
    // Events: the end of an item's transfer (time, sender, receiver), when the
    // receiver holds one more item and both ends and their neighbours are looked at
    // again. What one instant's events do commutes (counts, and a set of processors
    // to look at, whose candidates are then sorted), so their order in the heap
    // does not matter.
    let mut ends: BinaryHeap<Reverse<(OrderedTime, usize, usize)>> = BinaryHeap::new();
    let mut transfers: Vec<Transfer> = Vec::new();
    // Last transfer index per (processor, direction), to extend back-to-back runs.
    let mut last = vec![[usize::MAX; 2]; n];
    let mut woken: Vec<usize> = (0..n).collect();
    let mut is_woken = vec![true; n]; // i is in `woken`
    let mut t = 0.0f64;
    let mut candidates: Vec<(f64, usize, usize, usize)> = Vec::new(); // (due, from, to, dir)
    loop {
        // Deliver what arrives now.
        while let Some(&Reverse((OrderedTime(at), from, to))) = ends.peek() {
            if at > t {
                break;
            }
            ends.pop();
            held[to] += 1;
            for p in [from, to] {
                for q in [p, instance.succ(p), instance.pred(p)] {
                    if !is_woken[q] {
                        is_woken[q] = true;
                        woken.push(q);
                    }
                }
            }
        }
        // The candidates' order is their sort below (each processor once, its
        // successor's direction first), whatever the order of `woken`.
        candidates.clear();
        for &i in &woken {
            is_woken[i] = false;
            if send_port[i].free_at > t || held[i] == 0 {
                continue;
            }
            let (to_s, to_p) = goal[i];
            let (done_s, done_p) = sent[i];
            if done_s < to_s {
                candidates.push((due(i, 0, done_s + 1), i, instance.succ(i), 0));
            }
            if done_p < to_p {
                candidates.push((due(i, 1, done_p + 1), i, instance.pred(i), 1));
            }
        }
        woken.clear();
        candidates.sort_by(|a, b| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1)));
        for &(_, from, to, dir) in &candidates {
            if send_port[from].free_at > t || receive_port[to].free_at > t || held[from] == 0 {
                continue;
            }
            let cost = if dir == 0 {
                instance.c_succ()[from]
            } else {
                c_pred(instance, from)
            };
            let end = t + cost;
            held[from] -= 1;
            if dir == 0 {
                sent[from].0 += 1;
            } else {
                sent[from].1 += 1;
            }
            send_port[from].free_at = end;
            receive_port[to].free_at = end;
            ends.push(Reverse((OrderedTime(end), from, to)));
            let previous = last[from][dir];
            if previous != usize::MAX && transfers[previous].end == t {
                transfers[previous].items += 1;
                transfers[previous].end = end;
            } else {
                last[from][dir] = transfers.len();
                transfers.push(Transfer::new(from, to, 1, t, end));
            }
        }
        // Next instant something changes.
        t = match ends.peek() {
            None => break,
            Some(Reverse((OrderedTime(at), _, _))) => *at,
        };
    }
    let complete = (0..n).all(|i| sent[i] == goal[i]);
    // Incomplete only if a processor ran out of items with nothing in flight, which
    // flows of a valid instance never cause; the validator would report it.
    debug_assert!(complete, "list scheduling stalled");
    Some(Schedule::new(transfers))
}

/// An f64 time ordered by `total_cmp`, for the event heaps (here and in the
/// mapping's whole counts).
#[derive(Clone, Copy, PartialEq)]
pub(crate) struct OrderedTime(pub(crate) f64);

impl Eq for OrderedTime {}

impl PartialOrd for OrderedTime {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for OrderedTime {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        self.0.total_cmp(&other.0)
    }
}

/// The time-reversed ring: loads and targets swapped, and every link's cost (and
/// start-up) that of the opposite direction (sending from i to i+1 in the reversed ring stands for
/// i+1 sending to i in the original). A valid schedule of the reversed ring, run
/// backwards ([`reverse_schedule`]), is a valid schedule of the original with the
/// same makespan, and conversely.
///
/// Complexity: O(n).
///
/// # Example
/// ```
/// use hetbal::ring::{reversed_ring, RingInstance};
/// let ring = RingInstance::bidirectional(&[3, 1, 1], &[1, 2, 2], &[1.0, 2.0, 3.0], &[4.0, 5.0, 6.0]).unwrap();
/// let reversed = reversed_ring(&ring);
/// assert_eq!(reversed.loads(), &[1, 2, 2]);
/// assert_eq!(reversed.c_succ(), &[5.0, 6.0, 4.0]); // c_pred of the successor
/// ```
pub fn reversed_ring(instance: &RingInstance) -> RingInstance {
    let n = instance.len();
    let mut spec = instance.to_spec();
    for (i, p) in spec.processors.iter_mut().enumerate() {
        std::mem::swap(&mut p.load, &mut p.target);
        p.c_succ = c_pred(instance, (i + 1) % n);
        p.c_pred = Some(instance.c_succ()[(i + n - 1) % n]);
        p.l_succ = instance.l_pred()[(i + 1) % n];
        p.l_pred = instance.l_succ()[(i + n - 1) % n];
    }
    RingInstance::from_spec(spec).expect("reversing a valid ring keeps it valid")
}

/// Runs a schedule backwards in time: a transfer from a to b during `[s, e)` becomes
/// one from b to a during `[T - e, T - s)`, T the makespan. Sorted again.
///
/// Complexity: O(m log m).
pub fn reverse_schedule(schedule: &Schedule) -> Schedule {
    let horizon = schedule.makespan();
    Schedule::new(
        schedule
            .transfers
            .iter()
            .map(|t| Transfer::new(t.to, t.from, t.items, horizon - t.end, horizon - t.start))
            .collect(),
    )
}

/// Flows moving more items than this skip the alternating passes.
const ALTERNATING_ITEMS: u128 = 200_000;

/// The best store-and-forward schedule of the flows of circulation `x` found by list
/// scheduling: forwards with due times `k * target / g`, then on the time-reversed
/// ring run backwards, then `passes` alternating passes, each using the previous
/// schedule's item times as due times (forward passes the end times of the items,
/// backward passes their end times seen backwards). Stops as soon as a schedule
/// meets `target`, after two passes without progress, and skips the alternating
/// passes when the flows move more than 200,000 items. Small rings (at most 5,000
/// items moved) then get up to 40 restarts with due times scaled by random factors
/// in [0.75, 1.25), alternately forwards and backwards. Every candidate is valid by
/// construction; [`plan`](crate::ring::plan) validates the one it keeps, once.
///
/// Homogeneous rings of the papers' model whose flows move more than 200,000
/// items are first scheduled in synchronous steps ([`step_schedule`]) when
/// `target / c` steps of O(n) work are at most 20 `max_items` in all (`(n + 30)`
/// each: a step costs about 30 processors' work more); that schedule is kept
/// when it meets `target` or the flows move more than `max_items` items.
///
/// Returns `None` when the flows move more than `max_items` items and were not
/// stepped.
///
/// Complexity: O((passes + 2) F log n) for F items moved; stepped, O(n T) for T
/// steps.
pub(crate) fn best_list_schedule(
    instance: &RingInstance,
    x: i128,
    target: f64,
    passes: usize,
    max_items: u128,
    with_segments: bool,
) -> Option<(Schedule, RingAlgorithm)> {
    let flows = circulation_flows(instance, x);
    let total: u128 = flows.iter().map(|f| f.unsigned_abs()).sum();
    // The steps and the segments assume the papers' model (every load and target
    // >= 1); list scheduling holds on any instance.
    let papers = instance.is_papers_model();
    let with_segments = with_segments && papers;
    // Large homogeneous rings: synchronous steps, O(n) each, instead of item events
    // (at least `target / c` of them): at most 20 times `max_items` in all, an
    // overhead of about 30 processors a step counted.
    let c = instance.c_succ()[0];
    let few_steps = (target / c).ceil() * (instance.len() + 30) as f64 <= 20.0 * max_items as f64;
    if papers && instance.is_homogeneous() && total > ALTERNATING_ITEMS && few_steps {
        let cap = 4 * (target / c).ceil() as u64 + instance.len() as u64;
        if let Some(stepped) = step_schedule(instance, &flows, target, cap) {
            if stepped.makespan() <= target || total > max_items {
                return Some((stepped, RingAlgorithm::BidirectionalList));
            }
        }
    }
    // Segment by segment, in batches: fast at any size, and often at the target.
    let segmented = if with_segments {
        segment_schedule(instance, &flows, MAX_TRANSFERS)
    } else {
        None
    };
    let segments = |s: Schedule| Some((s, RingAlgorithm::BidirectionalSegments));
    if let Some(s) = segmented.as_ref().filter(|s| s.makespan() <= target) {
        return segments(s.clone());
    }
    let Some(mut best) = list_schedule(instance, &flows, target, max_items) else {
        return segmented.and_then(segments);
    };
    let list_or_segments = |best: Schedule, segmented: Option<Schedule>| match segmented {
        Some(s) if s.makespan() < best.makespan() => segments(s),
        _ => Some((best, RingAlgorithm::BidirectionalList)),
    };
    if best.makespan() <= target {
        return list_or_segments(best, segmented);
    }
    let reversed = reversed_ring(instance);
    let reversed_flows = circulation_flows(&reversed, -x);
    let backward = reverse_schedule(&list_schedule(
        &reversed,
        &reversed_flows,
        target,
        max_items,
    )?);
    if backward.makespan() < best.makespan() {
        best = backward;
    }
    // The alternating passes refine small and medium rings; on large ones each pass
    // costs as much as the first and they rarely pay.
    let passes = if total <= ALTERNATING_ITEMS {
        passes
    } else {
        0
    };
    let mut previous = best.clone();
    let mut stale = 0;
    for pass in 0..passes {
        if best.makespan() <= target || stale == 2 {
            break;
        }
        let starts = item_starts(instance, &previous);
        let horizon = previous.makespan();
        let candidate = if pass % 2 == 0 {
            // On the reversed ring, P_i sending to its successor stands for P_{i+1}
            // sending to its predecessor; its k-th item is the original's (g-k+1)-th.
            let due = |from: usize, dir: usize, k: u128| -> f64 {
                let (original, original_dir) = if dir == 0 {
                    (instance.succ(from), 1)
                } else {
                    (instance.pred(from), 0)
                };
                let list = &starts[original][original_dir];
                let g = list.len() as u128;
                if k == 0 || k > g {
                    return f64::INFINITY;
                }
                horizon - list[(g - k) as usize]
            };
            reverse_schedule(&list_schedule_by(
                &reversed,
                &reversed_flows,
                &due,
                max_items,
            )?)
        } else {
            let due = |from: usize, dir: usize, k: u128| -> f64 {
                let list = &starts[from][dir];
                let cost = if dir == 0 {
                    instance.c_succ()[from]
                } else {
                    c_pred(instance, from)
                };
                match usize::try_from(k)
                    .ok()
                    .and_then(|k| list.get(k.wrapping_sub(1)))
                {
                    Some(&start) => start + cost,
                    None => f64::INFINITY,
                }
            };
            list_schedule_by(instance, &flows, &due, max_items)?
        };
        if candidate.makespan() < best.makespan() {
            best = candidate.clone();
            stale = 0;
        } else {
            stale += 1;
        }
        previous = candidate;
    }
    // Small rings: restarts with jittered due times (a deterministic generator), in
    // both time directions, until one meets the target.
    if total <= JITTER_ITEMS {
        let mut rng = SplitMix64::new(0x9e37_79b9_7f4a_7c15u64 ^ (x as u64));
        for restart in 0..JITTER_RESTARTS {
            if best.makespan() <= target {
                break;
            }
            let mut jitter: Vec<[f64; 2]> = Vec::with_capacity(instance.len());
            for _ in 0..instance.len() {
                let mut draw = || 0.75 + 0.5 * rng.unit();
                jitter.push([draw(), draw()]);
            }
            let backward = restart % 2 == 1;
            let (ring, ring_flows) = if backward {
                (&reversed, &reversed_flows)
            } else {
                (instance, &flows)
            };
            let goal: Vec<(u128, u128)> =
                (0..ring.len()).map(|i| sends_of(ring_flows, i)).collect();
            let due = |from: usize, dir: usize, k: u128| -> f64 {
                let count = if dir == 0 { goal[from].0 } else { goal[from].1 };
                if count == 0 {
                    f64::INFINITY
                } else {
                    k as f64 * target / count as f64 * jitter[from][dir]
                }
            };
            let mut candidate = list_schedule_by(ring, ring_flows, &due, max_items)?;
            if backward {
                candidate = reverse_schedule(&candidate);
            }
            if candidate.makespan() < best.makespan() {
                best = candidate;
            }
        }
    }
    list_or_segments(best, segmented)
}

/// Flows moving at most this many items get jittered restarts.
const JITTER_ITEMS: u128 = 5_000;
/// How many jittered restarts small rings get.
const JITTER_RESTARTS: usize = 40;

/// List scheduling in synchronous steps for homogeneous rings (every transfer takes
/// one step of length c): the rule of [`list_schedule`] (due time `k * target / g`
/// for the k-th of g items on a link) applied step by step with arrays instead of
/// event queues. In each step every processor that holds an item proposes its most
/// urgent direction; each receiver takes the most urgent proposal; a refused sender
/// proposes its other direction if that receiver is still free. Items received in a
/// step can leave in the next.
///
/// Returns `None` if the flows are not done after `max_steps` steps. Meant for
/// homogeneous rings; on others it charges every transfer `c_succ[0]` and the
/// validator will refuse the schedule.
///
/// Complexity: O(n) per step, O(n T) for T steps, O(n + b) space for b transfers.
///
/// # Example
/// ```
/// use hetbal::ring::{circulation_flows, step_schedule, RingInstance};
/// use hetbal::validate;
/// let ring = RingInstance::bidirectional(&[1, 2, 3, 1], &[4, 1, 1, 1], &[1.0; 4], &[1.0; 4]).unwrap();
/// let schedule = step_schedule(&ring, &circulation_flows(&ring, 1), 3.0, 100).unwrap();
/// assert!(validate(&ring, &schedule).is_ok());
/// assert_eq!(schedule.makespan(), 3.0); // Lemma 6
/// ```
pub fn step_schedule(
    instance: &RingInstance,
    flows: &[i128],
    target: f64,
    max_steps: u64,
) -> Option<Schedule> {
    let n = instance.len();
    let c = instance.c_succ()[0];
    let goal: Vec<(u128, u128)> = (0..n).map(|i| sends_of(flows, i)).collect();
    let mut sent = vec![(0u128, 0u128); n];
    let mut held: Vec<u128> = instance.loads().iter().map(|&l| u128::from(l)).collect();
    let mut left: u128 = goal.iter().map(|g| g.0 + g.1).sum();
    let due = |count: u128, k: u128| k as f64 * target / count as f64;
    let mut transfers: Vec<Transfer> = Vec::new();
    let mut last = vec![[usize::MAX; 2]; n];
    // Per step: proposal of each sender (direction, due) and the receiver's choice.
    let mut proposal: Vec<Option<(usize, f64)>> = vec![None; n];
    let mut taken_by: Vec<Option<usize>> = vec![None; n]; // receiver -> sender
    let mut sending: Vec<Option<usize>> = vec![None; n]; // sender -> direction
    let receiver = |i: usize, d: usize| {
        if d == 0 {
            instance.succ(i)
        } else {
            instance.pred(i)
        }
    };
    let mut step = 0u64;
    while left > 0 {
        if step == max_steps {
            return None;
        }
        let urgency = |i: usize, d: usize, sent: &[(u128, u128)]| -> Option<f64> {
            let (g, s) = if d == 0 {
                (goal[i].0, sent[i].0)
            } else {
                (goal[i].1, sent[i].1)
            };
            (s < g).then(|| due(g, s + 1))
        };
        taken_by.iter_mut().for_each(|t| *t = None);
        sending.iter_mut().for_each(|s| *s = None);
        for round in 0..2 {
            for i in 0..n {
                proposal[i] = None;
                if held[i] == 0 || sending[i].is_some() {
                    continue;
                }
                // The most urgent direction whose receiver is still free (in round 0
                // every receiver is; in round 1 refused senders try the other side).
                let mut choice: Option<(usize, f64)> = None;
                for d in 0..2 {
                    if let Some(u) = urgency(i, d, &sent) {
                        if taken_by[receiver(i, d)].is_none()
                            && choice.is_none_or(|(_, best)| u < best)
                        {
                            choice = Some((d, u));
                        }
                    }
                }
                if round == 0 || sending[i].is_none() {
                    proposal[i] = choice;
                }
            }
            for i in 0..n {
                if let Some((d, u)) = proposal[i] {
                    let r = receiver(i, d);
                    let better = match taken_by[r] {
                        None => true,
                        Some(other) => {
                            let other_dir = sending[other].unwrap_or(0);
                            u < urgency(other, other_dir, &sent).unwrap_or(f64::INFINITY)
                        }
                    };
                    if better {
                        if let Some(other) = taken_by[r] {
                            sending[other] = None;
                        }
                        taken_by[r] = Some(i);
                        sending[i] = Some(d);
                    }
                }
            }
        }
        let start = step as f64 * c;
        for i in 0..n {
            if let Some(d) = sending[i] {
                held[i] -= 1;
                if d == 0 {
                    sent[i].0 += 1;
                } else {
                    sent[i].1 += 1;
                }
                left -= 1;
                let previous = last[i][d];
                if previous != usize::MAX && transfers[previous].end == start {
                    transfers[previous].items += 1;
                    transfers[previous].end = start + c;
                } else {
                    last[i][d] = transfers.len();
                    transfers.push(Transfer::new(i, receiver(i, d), 1, start, start + c));
                }
            }
        }
        for i in 0..n {
            if let Some(d) = sending[i] {
                held[receiver(i, d)] += 1;
            }
        }
        step += 1;
    }
    Some(Schedule::new(transfers))
}
