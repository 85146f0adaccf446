//! A schedule made for one model, timed under the ring's own: the same transfers in
//! the same order on every port, each as early as the ring's start-ups allow.

use crate::ring::{RingInstance, Schedule, Transfer};

/// Items received by one processor so far: each receive as `(first arrival,
/// spacing, items)`, in time order (a message delivers all at once: spacing 0).
#[derive(Default, Clone)]
struct Arrivals {
    pieces: Vec<(f64, f64, u64)>,
    /// Items in the pieces before each one.
    before: Vec<u128>,
}

impl Arrivals {
    fn push(&mut self, first: f64, spacing: f64, items: u64) {
        let total = self.total();
        self.before.push(total);
        self.pieces.push((first, spacing, items));
    }

    fn total(&self) -> u128 {
        match (self.before.last(), self.pieces.last()) {
            (Some(&b), Some(&(_, _, m))) => b + u128::from(m),
            _ => 0,
        }
    }

    /// When the q-th item (from 1) arrives; `None` if it has not been received.
    fn time_of(&self, q: u128) -> Option<f64> {
        let k = self.before.partition_point(|&b| b < q);
        if k == 0 {
            return None;
        }
        let (first, spacing, items) = self.pieces[k - 1];
        let within = q - self.before[k - 1]; // 1..=items
        (within <= u128::from(items)).then(|| first + (within - 1) as f64 * spacing)
    }
}

/// The same transfers, timed under the ring's model (model.md, "Start-ups"): taken
/// in order of their start, each starts as early as its sender's and receiver's
/// ports (in that order) and its items allow; over a link with a start-up it is a
/// message (`l + m c`, all items held when it starts; a paced train, which stands
/// for one-item transfers, a message per item), over a link without one a train
/// (each item held when it leaves; a paced train keeps its period).
///
/// Made to time a plan computed without start-ups on a ring that has them (the
/// papers' planners ignore start-ups), or to tighten any valid schedule: on a ring
/// without start-ups every transfer of a valid schedule starts no later than before
/// (by induction over the transfers in start order), so the makespan never grows.
///
/// # Arguments
/// * `instance` - the ring whose costs and start-ups time the transfers;
/// * `schedule` - a schedule valid on the ring without start-ups (transfers between
///   neighbours, items held in time): its order is kept.
///
/// # Returns
/// The retimed schedule, valid on `instance` when `schedule` was valid on it with
/// its start-ups set to zero.
///
/// # Complexity
/// O(m log m) for m transfers (the items of paced trains over links with
/// start-ups counted one by one); O(M log M) for M items moved in the rare
/// deadlocked case.
///
/// # Example
/// ```
/// use hetbal::ring::{plan, retime_with_startups, RingInstance};
/// use hetbal::validate;
/// // A plan made without start-ups, then timed with 1 s per transfer.
/// let ring = RingInstance::unidirectional(&[4, 1, 2], &[1, 1, 5], &[2.0, 1.0, 1.0]).unwrap();
/// let papers = plan(&ring, None).unwrap().schedule();
/// let latent = ring.with_startups(&[1.0; 3], &[0.0; 3]).unwrap();
/// let timed = retime_with_startups(&latent, &papers);
/// assert!(validate(&latent, &timed).is_ok());
/// assert!(timed.makespan() > papers.makespan());
/// // Without start-ups nothing moves later.
/// assert!(retime_with_startups(&ring, &papers).makespan() <= papers.makespan());
/// ```
pub fn retime_with_startups(instance: &RingInstance, schedule: &Schedule) -> Schedule {
    retime_within(instance, schedule, f64::INFINITY, u128::MAX).expect("no cutoff to pass")
}

/// The same transfers with their ends recomputed from their starts as
/// [`validate`](crate::ring::validate) computes durations (`start + startup +
/// items * cost`, a paced train `start + (items - 1) * period + cost`): what a
/// planner whose times were summed another way gives when those sums drift
/// past the validator's tolerance (times past 2^52 item costs, or costs 2^40
/// apart).
///
/// Complexity: O(m) for m transfers.
pub(crate) fn with_model_durations(instance: &RingInstance, schedule: &Schedule) -> Schedule {
    let timed = |t: &Transfer| {
        let link = link(instance, t.from, transfer_to_succ(instance, t));
        let end = model_end(t.start, t.items, t.period, link);
        Transfer { end, ..*t }
    };
    Schedule {
        transfers: schedule.transfers.iter().map(timed).collect(),
    }
}

/// [`retime_with_startups`], or `None` as soon as a transfer that its order
/// does not block would end after `cutoff`: the retimed schedule then ends
/// after `cutoff` (when the order deadlocks, the transfers it does not block
/// keep their times once the blocked ones are split, see below; only when
/// splitting those is not enough and every transfer goes item by item could
/// the schedule end earlier, a case no test has met). Lets
/// [`plan`](crate::ring::plan) stop timing the papers' plan once it cannot
/// end before the start-up planner's: on the benchmark's rings of 10^4
/// processors it ends hundreds of times later. `None` too when it would
/// split transfers into more than `most` pieces (paced trains over links with
/// start-ups, or the deadlocked case below): [`plan`](crate::ring::plan)
/// times schedules within its limit of transfers, where items of 2^63 would
/// otherwise be split one by one.
pub(crate) fn retime_within(
    instance: &RingInstance,
    schedule: &Schedule,
    cutoff: f64,
    most: u128,
) -> Option<Schedule> {
    // No retiming ends before its busiest sender has sent (a check in O(m)
    // that spares splitting trains into millions of messages to find out).
    if cutoff.is_finite() && busiest_sender(instance, schedule) > cutoff * (1.0 + 1e-9) {
        return None;
    }
    // A paced train stands for one-item transfers: over a link with a start-up,
    // each of them is a message.
    let paced_on_startup =
        |t: &Transfer| t.period.is_some() && instance.startup(t.from, t.to) > 0.0;
    if schedule.transfers.iter().any(paced_on_startup) {
        let chosen = |k: usize| paced_on_startup(&schedule.transfers[k]);
        if pieces(schedule, chosen) > most {
            return None;
        }
        let (units, _) = split(schedule, chosen);
        return retime_within(instance, &units, cutoff, most);
    }
    let times = retime_in_order(instance, schedule, cutoff)?;
    if times.iter().all(|&(_, end)| end.is_finite()) {
        return Some(Schedule::new(
            with_times(instance, &schedule.transfers, &times).transfers,
        ));
    }
    // The transfers' order deadlocks: a train needs an item of a transfer that
    // starts after it does, and that one an item of the first; or a message needs
    // items that, as a train, it received while it was sending. Send the stuck
    // transfers item by item (free over a link without start-up; a message per
    // item over one with a start-up): each item then needs only transfers that
    // start before it leaves. If some are still stuck, every transfer goes item by
    // item. Pieces of a train that still leave back to back are merged again.
    // (A transfer the order did not block keeps its times once the blocked ones
    // are split: its predecessors on its ports and the receives that bring its
    // items start before it, so none of them was blocked or is split, and the
    // pieces of a split one all start after it, as the blocked one did.)
    let stuck: Vec<bool> = times.iter().map(|&(_, end)| !end.is_finite()).collect();
    if pieces(schedule, |k| stuck[k]) > most {
        return None;
    }
    let (units, origin) = split(schedule, |k| stuck[k]);
    let unlimited = f64::INFINITY;
    let mut times = retime_in_order(instance, &units, unlimited)?;
    let (mut units, mut origin) = (units, origin);
    if times.iter().any(|&(_, end)| !end.is_finite()) {
        if pieces(schedule, |_| true) > most {
            return None;
        }
        (units, origin) = split(schedule, |_| true);
        times = retime_in_order(instance, &units, unlimited)?;
    }
    Some(merge_trains(
        instance,
        &with_times(instance, &units.transfers, &times),
        &origin,
    ))
}

/// The longest any processor sends in `schedule` once it is retimed: each
/// transfer's least duration (`l + m c`; `m` messages of one item for a paced
/// train over a link with a start-up, at least `m c` for one without), summed
/// per sender, whose one port sends one transfer at a time. No retimed
/// schedule ends before it. O(n + m).
fn busiest_sender(instance: &RingInstance, schedule: &Schedule) -> f64 {
    let n = instance.len();
    let mut busy = vec![0.0f64; n];
    for t in schedule.transfers.iter().filter(|t| t.from < n && t.to < n) {
        let least = |to_succ: bool| {
            let (cost, startup) = link(instance, t.from, to_succ);
            let messages = if startup > 0.0 && t.period.is_some() {
                t.items as f64
            } else {
                1.0
            };
            messages * startup + t.items as f64 * cost
        };
        // (On two processors both links join them: the shorter.)
        busy[t.from] += if n > 2 {
            least(t.to == instance.succ(t.from))
        } else {
            least(true).min(least(false))
        };
    }
    busy.into_iter().fold(0.0, f64::max)
}

/// The transfers with new `(start, end)` times, in the same order (a paced train
/// over a link with a start-up is a message: it loses its period).
fn with_times(instance: &RingInstance, transfers: &[Transfer], times: &[(f64, f64)]) -> Schedule {
    Schedule {
        transfers: (transfers.iter().zip(times))
            .map(|(t, &(start, end))| Transfer {
                start,
                end,
                period: t.period.filter(|_| instance.startup(t.from, t.to) == 0.0),
                ..*t
            })
            .collect(),
    }
}

/// How many transfers [`split`] makes of `schedule` with `chosen` (u128: no
/// overflow).
fn pieces(schedule: &Schedule, chosen: impl Fn(usize) -> bool) -> u128 {
    let each = |(k, t): (usize, &Transfer)| if chosen(k) { u128::from(t.items) } else { 1 };
    schedule.transfers.iter().enumerate().map(each).sum()
}

/// The transfers `chosen` by index split into one-item transfers at their item
/// times, the others kept. Returns the schedule and, per transfer, the index of the
/// one it came from.
fn split(schedule: &Schedule, chosen: impl Fn(usize) -> bool) -> (Schedule, Vec<usize>) {
    let mut units = Vec::new();
    let mut origin = Vec::new();
    for (k, t) in schedule.transfers.iter().enumerate() {
        if !chosen(k) || t.items <= 1 {
            units.push(*t);
            origin.push(k);
            continue;
        }
        let cost = t.item_time();
        let spacing = t.period.unwrap_or(cost);
        for j in 0..t.items {
            let start = t.start + j as f64 * spacing;
            units.push(Transfer {
                items: 1,
                start,
                end: start + cost,
                period: None,
                ..*t
            });
            origin.push(k);
        }
    }
    (Schedule { transfers: units }, origin)
}

/// Merges consecutive timed pieces of one original train that still leave back to
/// back (same origin, each starting when the previous ends); sorts the result.
fn merge_trains(instance: &RingInstance, timed: &Schedule, origin: &[usize]) -> Schedule {
    let mut pieces: Vec<(&Transfer, usize)> =
        timed.transfers.iter().zip(origin.iter().copied()).collect();
    pieces.sort_by(|a, b| a.1.cmp(&b.1).then(a.0.start.total_cmp(&b.0.start)));
    let mut merged: Vec<Transfer> = Vec::with_capacity(pieces.len());
    // Per origin: the merged transfer and where its last piece ended.
    let mut last_of: std::collections::HashMap<usize, (usize, f64)> = Default::default();
    for (t, o) in pieces {
        if instance.startup(t.from, t.to) == 0.0 {
            if let Some((at, piece_end)) = last_of.get_mut(&o) {
                let previous = &mut merged[*at];
                // The duration the validator checks, computed as it does;
                // merged only while it ends with the pieces (their times are
                // sums, which drift from it by roundings).
                let link = link(instance, t.from, transfer_to_succ(instance, t));
                let end = model_end(previous.start, previous.items + t.items, None, link);
                if *piece_end == t.start && (end - t.end).abs() <= 4.0 * f64::EPSILON * t.end {
                    previous.items += t.items;
                    previous.end = end;
                    *piece_end = t.end;
                    continue;
                }
            }
        }
        last_of.insert(o, (merged.len(), t.end));
        merged.push(*t);
    }
    Schedule::new(merged)
}

/// [`retime_with_startups`]'s pass: the transfers in order of start, each once its
/// port predecessors and the receives that bring its items are timed. Infinite
/// times where trains feed each other both ways. The times, in the schedule's
/// order; `None` as soon as a transfer would end after `cutoff` (finite times
/// only).
fn retime_in_order(
    instance: &RingInstance,
    schedule: &Schedule,
    cutoff: f64,
) -> Option<Vec<(f64, f64)>> {
    let n = instance.len();
    let transfers = &schedule.transfers;
    let m = transfers.len();
    let mut order: Vec<usize> = (0..m).collect();
    order.sort_by(|&a, &b| {
        let (a, b) = (&transfers[a], &transfers[b]);
        a.start.total_cmp(&b.start).then(a.from.cmp(&b.from))
    });
    // Each port's transfers in order, and each transfer's place on its two ports.
    let mut sends: Vec<Vec<usize>> = vec![Vec::new(); n];
    let mut receives: Vec<Vec<usize>> = vec![Vec::new(); n];
    let (mut send_pos, mut receive_pos) = (vec![0usize; m], vec![0usize; m]);
    for &k in &order {
        let t = &transfers[k];
        if t.from >= n || t.to >= n {
            continue;
        }
        send_pos[k] = sends[t.from].len();
        sends[t.from].push(k);
        receive_pos[k] = receives[t.to].len();
        receives[t.to].push(k);
    }
    let mut state = Retiming {
        send_free: vec![0.0; n],
        receive_free: vec![0.0; n],
        sent: vec![0; n],
        sends_done: vec![0; n],
        receives_done: vec![0; n],
        arrivals: vec![Arrivals::default(); n],
        times: vec![(f64::INFINITY, f64::INFINITY); m],
    };
    // Each transfer once its prerequisites are timed: the previous transfer on its
    // sending port, the previous one on its receiving port, and the receives that
    // bring the items it sends (with trains, those can start after it does).
    let mut done = vec![false; m];
    let mut on_stack = vec![false; m];
    let mut stack: Vec<usize> = Vec::new();
    for &first in &order {
        let t = &transfers[first];
        if done[first] || t.from >= n || t.to >= n {
            continue;
        }
        stack.push(first);
        on_stack[first] = true;
        while let Some(&k) = stack.last() {
            let t = &transfers[k];
            let needed = state.sent[t.from] + u128::from(t.items);
            let load = u128::from(instance.loads()[t.from]);
            let prerequisite = if state.sends_done[t.from] < send_pos[k] {
                Some(sends[t.from][state.sends_done[t.from]])
            } else if state.receives_done[t.to] < receive_pos[k] {
                Some(receives[t.to][state.receives_done[t.to]])
            } else if load + state.arrivals[t.from].total() < needed {
                receives[t.from].get(state.receives_done[t.from]).copied()
            } else {
                None
            };
            match prerequisite {
                Some(p) if !on_stack[p] && !done[p] => {
                    on_stack[p] = true;
                    stack.push(p);
                }
                _ => {
                    // Ready (or its items never come, or trains feed each other
                    // both ways: its times are then infinite).
                    state.time(instance, t, k);
                    let end = state.times[k].1;
                    if end > cutoff && end.is_finite() {
                        return None;
                    }
                    done[k] = true;
                    on_stack[k] = false;
                    stack.pop();
                }
            }
        }
    }
    Some(state.times)
}

/// What [`retime_with_startups`] knows so far, per processor.
struct Retiming {
    send_free: Vec<f64>,
    receive_free: Vec<f64>,
    sent: Vec<u128>,
    sends_done: Vec<usize>,
    receives_done: Vec<usize>,
    arrivals: Vec<Arrivals>,
    /// New (start, end) of each transfer.
    times: Vec<(f64, f64)>,
}

impl Retiming {
    /// Times transfer `k` (`t`), its port predecessors and the items it needs done.
    fn time(&mut self, instance: &RingInstance, t: &Transfer, k: usize) {
        let (from, to, m) = (t.from, t.to, t.items);
        let (cost, startup) = link(instance, from, transfer_to_succ(instance, t));
        let spacing = t.period.filter(|_| startup == 0.0).unwrap_or(cost);
        let load = u128::from(instance.loads()[from]);
        let arrivals = &self.arrivals[from];
        let ready = if startup > 0.0 {
            // A message: its last item held at its start.
            let q = self.sent[from] + u128::from(m);
            if q <= load {
                0.0
            } else {
                arrivals.time_of(q - load).unwrap_or(f64::INFINITY)
            }
        } else {
            // A train: item k leaves at start + (k - 1) spacing.
            train_ready(arrivals, load, self.sent[from], m, spacing)
        };
        let start = self.send_free[from].max(self.receive_free[to]).max(ready);
        let end = model_end(start, m, t.period, (cost, startup));
        self.send_free[from] = end;
        self.receive_free[to] = end;
        self.sent[from] += u128::from(m);
        self.sends_done[from] += 1;
        self.receives_done[to] += 1;
        if startup > 0.0 {
            self.arrivals[to].push(end, 0.0, m);
        } else {
            self.arrivals[to].push(start + cost, spacing, m);
        }
        self.times[k] = (start, end);
    }
}

/// When a transfer of `items` from `start` over a link of `(cost, startup)`
/// ends, computed as [`validate`](crate::ring::validate) computes durations:
/// `start + startup + items * cost`, or a paced train's (`period`, on a link
/// without start-up) `start + (items - 1) * period + cost`; the next time
/// after `start` that f64 tells apart when the transfer is shorter than that,
/// so that the next transfer on its ports starts later.
pub(crate) fn model_end(
    start: f64,
    items: u64,
    period: Option<f64>,
    (cost, startup): (f64, f64),
) -> f64 {
    let end = match period.filter(|_| startup == 0.0) {
        Some(period) => start + (items - 1) as f64 * period + cost,
        None => start + startup + items as f64 * cost,
    };
    if end > start {
        end
    } else {
        next_after(start)
    }
}

/// The least f64 above `t` (`t` itself when infinite or NaN): what
/// `f64::next_up` gives from Rust 1.86.
fn next_after(t: f64) -> f64 {
    if !t.is_finite() {
        t
    } else if t == 0.0 {
        f64::from_bits(1)
    } else if t > 0.0 {
        f64::from_bits(t.to_bits() + 1)
    } else {
        f64::from_bits(t.to_bits() - 1)
    }
}

/// Whether transfer `t` goes to its sender's successor. On a 2-processor ring
/// both links join the same pair: the duration tells (on a path, the one link
/// that is not missing).
fn transfer_to_succ(instance: &RingInstance, t: &Transfer) -> bool {
    if instance.len() > 2 {
        t.to == instance.succ(t.from)
    } else if instance.is_path() {
        !instance.is_missing_link(t.from, true)
    } else {
        instance.c_pred()[t.from].is_none() || fits_link(instance, t, true)
    }
}

/// Cost and start-up of the link from `from` to its successor (`to_succ`) or
/// predecessor. A unidirectional ring has no predecessor link: its successor's
/// costs are given (such a transfer cannot be valid anyway).
fn link(instance: &RingInstance, from: usize, to_succ: bool) -> (f64, f64) {
    match (to_succ, instance.c_pred()[from]) {
        (false, Some(c)) => (c, instance.l_pred()[from]),
        _ => (instance.c_succ()[from], instance.l_succ()[from]),
    }
}

/// Whether a transfer's duration fits the link in that direction, with or without
/// its start-up.
fn fits_link(instance: &RingInstance, t: &Transfer, to_succ: bool) -> bool {
    let (cost, startup) = link(instance, t.from, to_succ);
    let items = match t.period {
        Some(p) => (t.items - 1) as f64 * p + cost,
        None => t.items as f64 * cost,
    };
    [items, startup + items]
        .iter()
        .any(|&expected| (t.end - t.start - expected).abs() <= 1e-9 * expected.max(1.0))
}

/// The earliest start of a train of `m` items at `pace` (its cost back to back,
/// its period paced) whose k-th item must be held when it leaves, given `sent` items
/// sent before and `load` own items.
fn train_ready(arrivals: &Arrivals, load: u128, sent: u128, m: u64, pace: f64) -> f64 {
    let mut ready = 0.0f64;
    // Item k (1..=m) needs arrival q = sent + k - load, if positive.
    let first_q = (sent + 1).saturating_sub(load).max(1);
    let last_q = match (sent + u128::from(m)).checked_sub(load) {
        Some(q) if q >= 1 => q,
        _ => return 0.0,
    };
    let k_of = |q: u128| q + load - sent; // 1-based item of the train
    let mut q = first_q;
    while q <= last_q {
        let piece = arrivals.before.partition_point(|&b| b < q);
        if piece == 0 {
            return f64::INFINITY;
        }
        let (first, spacing, items) = arrivals.pieces[piece - 1];
        let base = arrivals.before[piece - 1];
        let end_q = (base + u128::from(items)).min(last_q);
        if q > base + u128::from(items) {
            return f64::INFINITY;
        }
        // Within the piece, arrival - (k - 1) pace is linear in q: check both ends.
        for r in [q, end_q] {
            let arrival = first + (r - base - 1) as f64 * spacing;
            ready = ready.max(arrival - (k_of(r) - 1) as f64 * pace);
        }
        q = end_q + 1;
    }
    ready
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::experiment::startups::{full_rebalance, with_random_startups};
    use crate::ring::{plan, RingKind};

    /// The next f64 after a time: above it, with none between, and the
    /// transfers it ends no shorter than f64 allows.
    #[test]
    fn the_next_time_is_the_least_above() {
        assert_eq!(next_after(0.0), 5e-324);
        assert_eq!(next_after(1.0), 1.0 + f64::EPSILON);
        assert_eq!(next_after(-1.0), -1.0 + f64::EPSILON / 2.0);
        assert_eq!(next_after(f64::MAX), f64::INFINITY);
        assert_eq!(next_after(f64::INFINITY), f64::INFINITY);
        assert!(next_after(f64::NAN).is_nan());
        for t in [1e-300, 0.1, 3.0, 1.9e101, 4e300] {
            let next = next_after(t);
            // (Their midpoint rounds to one of them: no f64 lies between.)
            let middle = (t + next) / 2.0;
            assert!(next > t && (middle == t || middle == next), "{t}");
            // Seconds after 10^100 s: the message ends at the next f64.
            assert_eq!(
                model_end(t, 1, None, (1e-200, 7.0)),
                if t + 7.0 > t { t + 7.0 } else { next }
            );
        }
    }

    /// Stopping at a cutoff gives up exactly when the retimed schedule ends
    /// after it, and otherwise gives the same schedule: the papers' plans
    /// (paced trains among them) of full rebalances of 10 to 1,000
    /// processors, both kinds, timed under start-ups from none to 100 times
    /// the item cost, with cutoffs around their makespans. The busiest
    /// sender, by which it stops without timing, never ends after the
    /// retimed schedule.
    #[test]
    fn a_cutoff_stops_exactly_the_schedules_that_end_after_it() {
        let (mut checked, mut stopped, mut paced, mut unseen) = (0, 0, 0, 0);
        for kind in [RingKind::Unidirectional, RingKind::Bidirectional] {
            for n in [10usize, 50, 200, 1000] {
                for seed in 0..3u64 {
                    let ring = full_rebalance(kind, n, seed + n as u64).unwrap();
                    let papers = plan(&ring, None).unwrap().schedule();
                    paced += papers
                        .transfers
                        .iter()
                        .filter(|t| t.period.is_some())
                        .count();
                    for (k, high) in [0.0, 1.0, 10.0, 100.0].into_iter().enumerate() {
                        let timed = with_random_startups(&ring, (0.0, high), seed + k as u64);
                        let whole = retime_with_startups(&timed, &papers);
                        let m = whole.makespan();
                        let busiest = busiest_sender(&timed, &papers);
                        assert!(
                            busiest <= m * (1.0 + 1e-12),
                            "{kind:?} n = {n}: {busiest} {m}"
                        );
                        for cutoff in [0.0, 0.5 * m, m * (1.0 - 1e-12), m, 2.0 * m] {
                            unseen += usize::from(busiest > cutoff * (1.0 + 1e-9));
                            match retime_within(&timed, &papers, cutoff, u128::MAX) {
                                Some(s) => assert!(m <= cutoff && s == whole, "{cutoff} {m}"),
                                None => {
                                    assert!(m > cutoff, "{kind:?} n = {n}: {cutoff} {m}");
                                    stopped += 1;
                                }
                            }
                            checked += 1;
                        }
                    }
                }
            }
        }
        eprintln!("{checked} cutoffs ({paced} paced trains in the plans), {stopped} stopped, {unseen} of them without timing");
        assert!(paced > 0 && checked == 480 && stopped >= 240, "{stopped}");
        assert!(unseen > 0 && unseen < stopped, "{unseen}");
    }
}
