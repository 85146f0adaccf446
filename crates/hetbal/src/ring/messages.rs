//! Planners for rings with start-ups (model.md, "Start-ups"): each link sends its
//! flow in messages whose size is chosen per link, every message as soon as its
//! sender holds its items and both ports are free.
//!
//! # Why batch, and how much
//! A message of b items over a link with start-up l and per-item cost c takes
//! `l + b c`. Sending a flow item by item pays the start-up for every item; sending
//! it in one message makes the next processor wait for all of it before forwarding.
//! On a chain of k homogeneous hops carrying m items in messages of b, the last
//! message leaves the source after `(m/b) (l + b c)` and needs `k - 1` more hops:
//! about `(m/b + k - 1)(l + b c)`, least at `b = sqrt(m l / ((k - 1) c))`. The
//! heterogeneous generalisation used here sizes each link on its own: link e with
//! flow g, start-up l, cost c, whose items travel on average `h` more hops after
//! it, gets `b_e = sqrt(g l / (h c))` (one message when its items go no further),
//! and forwarders send as soon as they hold a message's worth, so a slow link
//! downstream of a fast one naturally gathers what arrives while it is busy.
//!
//! # The planner
//! [`startup_schedule`] takes the minimal flows (unidirectional) or a few candidate
//! circulations (bidirectional: where the start-up port bound is least, where
//! System 6 is least, and their neighbours), and for each evaluates the sizing above
//! scaled by factors from 1/8 to 8, one message per link, and a variant where a
//! sender holding more than a message's worth sends it all; on small rings it then
//! improves the sizes link by link while the makespan falls. Each evaluation is a
//! simulation of every message as soon as possible (one port per direction of
//! each processor): where every processor sends over one link at most and
//! receives over one at most (every unidirectional ring), link by link along the
//! chains of flows, each link one merge of its sender's sends with the arrivals
//! of the link into it, O(n + m) for m messages; elsewhere event by event,
//! O(m log m). Sizings are compared by makespan, and only the best one's
//! transfers are written. Links without start-up send every item they hold
//! whenever their port is free, which is Algorithm 2's as-soon-as-possible
//! schedule on a ring without start-ups: with every start-up zero the planner's
//! makespan is today's optimum `max f c` on unidirectional rings.

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use crate::ring::{
    circulation_bound, prefix_sums, startup_lower_bound, OrderedTime, RingInstance, RingKind,
    Schedule, Transfer,
};

/// A link direction that carries flow in a plan.
#[derive(Clone, Copy, Debug)]
struct FlowLink {
    from: usize,
    to: usize,
    /// Items the link carries.
    items: u64,
    cost: f64,
    startup: f64,
    /// The next link its items may take (same direction, out of `to`), if any.
    next: Option<usize>,
    /// About how many hops its items travel after it (an estimate).
    onward: f64,
}

/// The links carrying the flows `flows` (clockwise net flow per link, as from
/// [`circulation_flows`](crate::ring::circulation_flows)), with the onward estimate.
fn flow_links(instance: &RingInstance, flows: &[i128]) -> Option<Vec<FlowLink>> {
    let n = instance.len();
    // Index of the flow link on ring link i (usize::MAX: none).
    let mut on_link = vec![usize::MAX; n];
    let mut links = Vec::new();
    for (i, &f) in flows.iter().enumerate() {
        if f == 0 {
            continue;
        }
        let items = u64::try_from(f.unsigned_abs()).ok()?;
        let link = if f > 0 {
            FlowLink {
                from: i,
                to: instance.succ(i),
                items,
                cost: instance.c_succ()[i],
                startup: instance.l_succ()[i],
                next: None,
                onward: 0.0,
            }
        } else {
            let j = instance.succ(i);
            FlowLink {
                from: j,
                to: i,
                items,
                cost: instance.c_pred()[j]?,
                startup: instance.l_pred()[j],
                next: None,
                onward: 0.0,
            }
        };
        on_link[i] = links.len();
        links.push(link);
    }
    // The next link of each: out of its receiver, in the same direction.
    for k in 0..links.len() {
        let (from, to) = (links[k].from, links[k].to);
        let onward_link = if instance.succ(from) == to && n > 2 {
            to // clockwise: ring link `to` joins to and to + 1
        } else if n > 2 {
            instance.pred(to) // counter-clockwise: ring link to - 1
        } else {
            usize::MAX
        };
        if onward_link != usize::MAX {
            let e = on_link[onward_link];
            if e != usize::MAX && links[e].from == to {
                links[k].next = Some(e);
            }
        }
    }
    // Onward hops, from the ends of the chains backwards: the items that continue
    // are at least what the receiver sends on beyond its own load.
    let fraction = |links: &[FlowLink], k: usize| -> (f64, Option<usize>) {
        match links[k].next {
            None => (0.0, None),
            Some(e) => {
                let own = instance.loads()[links[k].to];
                let continuing = links[e].items.saturating_sub(own).min(links[k].items);
                (continuing as f64 / links[k].items as f64, Some(e))
            }
        }
    };
    let mut done = vec![false; links.len()];
    let mut on_stack = vec![false; links.len()];
    let mut stack = Vec::new();
    for start in 0..links.len() {
        let mut k = start;
        // Walk to the end of the chain (or around a cycle), then back.
        while !done[k] && !on_stack[k] {
            stack.push(k);
            on_stack[k] = true;
            match links[k].next {
                Some(e) => k = e,
                None => break,
            }
        }
        while let Some(k) = stack.pop() {
            on_stack[k] = false;
            let (share, next) = fraction(&links, k);
            let after = next.filter(|&e| done[e]).map_or(0.0, |e| links[e].onward);
            links[k].onward = share * (1.0 + after);
            done[k] = true;
        }
    }
    Some(links)
}

/// How messages are sized: per link the size of its first message, then the least
/// size of a message (it waits until its sender holds that many, or all that
/// remains) and the largest (a sender holding more sends up to that many at once);
/// and whether links without start-up send item by item (`trains`; otherwise
/// everything held at once).
#[derive(Clone, Debug)]
struct Sizing {
    /// The first message's size (0: as the others).
    first: Vec<u64>,
    size: Vec<u64>,
    most: Vec<u64>,
    trains: bool,
    /// Per processor sending both ways: try the other link first.
    swapped: Vec<bool>,
}

/// The base message size of a link: `sqrt(g l / (h c))`, one message when its
/// items go no further, one item on a link without start-up.
fn base_size(link: &FlowLink) -> f64 {
    if link.startup == 0.0 {
        return 1.0;
    }
    if link.onward <= 0.0 {
        return link.items as f64;
    }
    (link.items as f64 * link.startup / (link.onward * link.cost)).sqrt()
}

/// The base sizes scaled by `factor`; with `absorb`, a sender holding more sends
/// it all.
fn scaled(links: &[FlowLink], factor: f64, absorb: bool, trains: bool) -> Sizing {
    let size: Vec<u64> = links
        .iter()
        .map(|k| (base_size(k) * factor).round().clamp(1.0, k.items as f64) as u64)
        .collect();
    let most = if absorb {
        links.iter().map(|k| k.items).collect()
    } else {
        size.clone()
    };
    Sizing {
        first: vec![0; links.len()],
        size,
        most,
        trains,
        swapped: Vec::new(),
    }
}

/// Every message as soon as possible: a link's next message starts when its
/// sender's port and its receiver's port are free and the sender holds the items.
/// A link without start-up sends one item at a time, each as soon as possible
/// (Algorithm 2's rule), consecutive items merged into one train transfer; or, when
/// `sizing.trains` is off, everything its sender holds at once. Returns the
/// transfers, or `None` when the flows cannot be completed with these sizes (a
/// circulation around the whole ring whose processors all wait), when more than
/// `max_transfers` would be needed, or as soon as a message would end after
/// `cutoff` (a sizing that cannot beat the best one found).
fn simulate(
    instance: &RingInstance,
    links: &[FlowLink],
    sizing: &Sizing,
    max_transfers: usize,
    cutoff: f64,
) -> Option<Vec<Transfer>> {
    let n = instance.len();
    let mut held: Vec<u64> = instance.loads().to_vec();
    let mut sending = vec![false; n];
    let mut receiving = vec![false; n];
    let mut remaining: Vec<u64> = links.iter().map(|k| k.items).collect();
    // Out links per processor, the one with more onward work first.
    let mut out: Vec<[usize; 2]> = vec![[usize::MAX; 2]; n];
    for (k, link) in links.iter().enumerate() {
        let slot = &mut out[link.from];
        if slot[0] == usize::MAX {
            slot[0] = k;
        } else {
            slot[1] = k;
            let weight = |k: usize| {
                links[k].onward * (links[k].startup + links[k].cost)
                    + links[k].items as f64 * links[k].cost
            };
            if weight(slot[1]) > weight(slot[0]) {
                slot.swap(0, 1);
            }
            if sizing.swapped.get(link.from) == Some(&true) {
                slot.swap(0, 1);
            }
        }
    }
    let mut events: BinaryHeap<Reverse<(OrderedTime, usize, u64)>> = BinaryHeap::new();
    let mut transfers: Vec<Transfer> = Vec::new();
    // The last transfer of each link, extended by items sent right after it on a
    // link without start-up (a train).
    let mut last = vec![usize::MAX; links.len()];
    let mut woken: Vec<usize> = (0..n).collect();
    let mut t = 0.0f64;
    loop {
        woken.sort_unstable();
        woken.dedup();
        for &p in &woken {
            if sending[p] {
                continue;
            }
            for &k in &out[p] {
                if k == usize::MAX || remaining[k] == 0 {
                    continue;
                }
                let link = links[k];
                if receiving[link.to] || held[p] == 0 {
                    continue;
                }
                let size = message_size(&link, k, sizing, held[p], remaining[k]);
                if held[p] < size {
                    continue;
                }
                held[p] -= size;
                remaining[k] -= size;
                sending[p] = true;
                receiving[link.to] = true;
                let end = t + link.startup + size as f64 * link.cost;
                if end > cutoff {
                    return None;
                }
                events.push(Reverse((OrderedTime(end), k, size)));
                match last[k] {
                    j if link.startup == 0.0 && j != usize::MAX && transfers[j].end == t => {
                        transfers[j].items += size;
                        transfers[j].end = end;
                    }
                    _ => {
                        if transfers.len() == max_transfers {
                            return None;
                        }
                        last[k] = transfers.len();
                        transfers.push(Transfer::new(p, link.to, size, t, end));
                    }
                }
                break;
            }
        }
        woken.clear();
        let Some(&Reverse((OrderedTime(next), _, _))) = events.peek() else {
            break;
        };
        t = next;
        while let Some(&Reverse((OrderedTime(at), k, size))) = events.peek() {
            if at > t {
                break;
            }
            events.pop();
            let link = links[k];
            held[link.to] += size;
            sending[link.from] = false;
            receiving[link.to] = false;
            // The sender, the receiver, and whoever else may send to the receiver.
            woken.extend([
                link.from,
                link.to,
                instance.pred(link.to),
                instance.succ(link.to),
            ]);
        }
    }
    remaining.iter().all(|&r| r == 0).then_some(transfers)
}

/// The links in an order where each comes right after the link into its sender,
/// chain after chain, when every processor sends over at most one link and
/// receives over at most one (every unidirectional ring, and bidirectional flows
/// without a processor that sends both ways or receives from both sides): a
/// link's messages then depend only on its sender's load and on the messages
/// of the link into it. `None` when ports are shared, or the links close a cycle.
///
/// Complexity: O(n + links).
fn chain_order(n: usize, links: &[FlowLink]) -> Option<Vec<usize>> {
    let mut out_link = vec![usize::MAX; n];
    let mut in_link = vec![usize::MAX; n];
    for (k, link) in links.iter().enumerate() {
        if out_link[link.from] != usize::MAX || in_link[link.to] != usize::MAX {
            return None;
        }
        out_link[link.from] = k;
        in_link[link.to] = k;
    }
    let mut order = Vec::with_capacity(links.len());
    for (k, link) in links.iter().enumerate() {
        if in_link[link.from] != usize::MAX {
            continue; // not the head of its chain
        }
        let mut next = k;
        while next != usize::MAX {
            order.push(next);
            next = out_link[links[next].to];
        }
    }
    // Links left out go round a cycle.
    (order.len() == links.len()).then_some(order)
}

/// [`simulate`] link by link along [`chain_order`]'s `order`: the same greedy
/// rule (a message as soon as the sender's port is free and it holds the
/// message's items; the receiver's port is then free too, as only this link
/// feeds it), so the same transfers, without an event queue. Each link is one
/// merge of its sender's sends with the arrivals of the link into it. Returns
/// the makespan, and writes the transfers into `record` when given (the
/// planner compares sizings by makespan, and writes only the best one's).
///
/// Complexity: O(n + m) for m messages (items, for trains).
fn simulate_chains(
    instance: &RingInstance,
    links: &[FlowLink],
    order: &[usize],
    sizing: &Sizing,
    (max_transfers, cutoff): (usize, f64),
    mut record: Option<&mut Vec<Transfer>>,
) -> Option<f64> {
    let (mut count, mut makespan) = (0usize, 0.0f64);
    // Arrivals (time, items) at the receiver of the link just simulated, and of
    // the one being simulated.
    let mut arriving: Vec<(f64, u64)> = Vec::new();
    let mut sent: Vec<(f64, u64)> = Vec::new();
    let mut previous = usize::MAX;
    for &k in order {
        let link = links[k];
        // The head of a chain has nothing coming in.
        if previous == usize::MAX || links[previous].to != link.from {
            arriving.clear();
        }
        sent.clear();
        let mut held = instance.loads()[link.from];
        let mut remaining = link.items;
        let (mut t, mut next_arrival) = (0.0f64, 0usize);
        // When this link's last transfer ends (a train goes on from there).
        let mut last_end = f64::NAN;
        while remaining > 0 {
            while next_arrival < arriving.len() && arriving[next_arrival].0 <= t {
                held += arriving[next_arrival].1;
                next_arrival += 1;
            }
            let size = message_size(&link, k, sizing, held, remaining);
            if held < size || held == 0 {
                // Wait for the next arrival (none left: the flows cannot complete).
                t = arriving.get(next_arrival)?.0;
                continue;
            }
            held -= size;
            remaining -= size;
            let end = t + link.startup + size as f64 * link.cost;
            if end > cutoff {
                return None;
            }
            sent.push((end, size));
            let extends = link.startup == 0.0 && last_end == t;
            if !extends {
                if count == max_transfers {
                    return None;
                }
                count += 1;
            }
            if let Some(transfers) = record.as_deref_mut() {
                match transfers.last_mut() {
                    Some(last) if extends => {
                        last.items += size;
                        last.end = end;
                    }
                    _ => transfers.push(Transfer::new(link.from, link.to, size, t, end)),
                }
            }
            last_end = end;
            t = end;
        }
        makespan = makespan.max(t);
        std::mem::swap(&mut arriving, &mut sent);
        previous = k;
    }
    Some(makespan)
}

/// The size of the message link `k` sends when its sender holds `held` items and
/// `remaining` are left to send (see [`Sizing`]).
fn message_size(link: &FlowLink, k: usize, sizing: &Sizing, held: u64, remaining: u64) -> u64 {
    if link.startup == 0.0 && sizing.trains {
        1
    } else if link.startup == 0.0 {
        remaining.min(held)
    } else if remaining == link.items && sizing.first[k] > 0 {
        remaining.min(sizing.first[k])
    } else {
        let most = sizing.most[k].max(sizing.size[k]);
        remaining.min(sizing.size[k].max(held.min(most)))
    }
}

/// Makespan of transfers.
fn makespan(transfers: &[Transfer]) -> f64 {
    transfers.iter().map(|t| t.end).fold(0.0, f64::max)
}

/// Bidirectional rings with fewer circulations than this try them all.
const ALL_CIRCULATIONS: i128 = 16;

/// Most transfers a start-up plan may hold.
const MAX_MESSAGES: usize = 10_000_000;

/// Most items sent one by one over links without start-up (one event each).
const MAX_ITEM_EVENTS: u128 = 2_000_000;

/// The best sizing found for the flows `flows`, with its transfers.
fn best_for_flows(instance: &RingInstance, flows: &[i128]) -> Option<Vec<Transfer>> {
    let links = flow_links(instance, flows)?;
    // Item by item over links without start-up, unless that means too many events.
    let trains = links
        .iter()
        .filter(|k| k.startup == 0.0)
        .map(|k| u128::from(k.items))
        .sum::<u128>()
        <= MAX_ITEM_EVENTS;
    // Chains of links (every unidirectional ring): simulated link by link.
    let order = chain_order(instance.len(), &links);
    let mut best: Option<(f64, Sizing, Vec<Transfer>)> = None;
    let consider = |sizing: Sizing, best: &mut Option<(f64, Sizing, Vec<Transfer>)>| {
        // A sizing whose messages end after the best makespan so far cannot
        // be kept: its simulation stops there.
        let cutoff = best.as_ref().map_or(f64::INFINITY, |b| b.0);
        // Chains: the makespan alone (the best sizing's transfers are written
        // at the end); otherwise the transfers with it.
        let made = match &order {
            Some(order) => simulate_chains(
                instance,
                &links,
                order,
                &sizing,
                (MAX_MESSAGES, cutoff),
                None,
            )
            .map(|m| (m, Vec::new())),
            None => {
                simulate(instance, &links, &sizing, MAX_MESSAGES, cutoff).map(|t| (makespan(&t), t))
            }
        };
        if let Some((m, transfers)) = made {
            if best.as_ref().is_none_or(|b| m < b.0) {
                *best = Some((m, sizing, transfers));
            }
        }
    };
    for absorb in [false, true] {
        for factor in [0.125, 0.25, 0.5, 0.71, 1.0, 1.41, 2.0, 4.0, 8.0] {
            consider(scaled(&links, factor, absorb, trains), &mut best);
        }
        // One message per link, and one item per message.
        consider(scaled(&links, f64::INFINITY, absorb, trains), &mut best);
        consider(scaled(&links, 0.0, absorb, trains), &mut best);
    }
    // Small rings: improve the sizes link by link while the makespan falls.
    let moved: u64 = links.iter().map(|k| k.items).sum();
    if links.len() <= 64 && moved <= 4096 {
        let mut rounds = 0;
        while let Some((current, sizing, _)) = best.as_ref() {
            let (current, sizing) = (*current, sizing.clone());
            for (k, link) in links.iter().enumerate() {
                if link.startup == 0.0 {
                    continue;
                }
                let g = link.items;
                let candidates: Vec<u64> = if g <= 24 {
                    (1..=g).collect()
                } else {
                    let s = sizing.size[k];
                    [1, s / 2, s.saturating_sub(1), s + 1, 2 * s, g]
                        .into_iter()
                        .filter(|&v| v >= 1 && v <= g)
                        .collect()
                };
                // Small flows: every first size with every other size.
                let firsts: Vec<u64> = if g <= 12 { (0..=g).collect() } else { vec![0] };
                for &first in &firsts {
                    for &size in &candidates {
                        for most in [size, g] {
                            let mut trial = best.as_ref().map_or(sizing.clone(), |b| b.1.clone());
                            trial.first[k] = first;
                            trial.size[k] = size;
                            trial.most[k] = most;
                            consider(trial, &mut best);
                        }
                    }
                }
                if g > 12 {
                    for &first in &candidates {
                        let mut trial = best.as_ref().map_or(sizing.clone(), |b| b.1.clone());
                        trial.first[k] = first;
                        consider(trial, &mut best);
                    }
                }
            }
            // Processors sending both ways: the other link first.
            let mut sends = vec![0u8; instance.len()];
            for k in &links {
                sends[k.from] += 1;
            }
            for p in (0..instance.len()).filter(|&p| sends[p] == 2) {
                let mut trial = best.as_ref().map_or(sizing.clone(), |b| b.1.clone());
                trial.swapped.resize(instance.len(), false);
                trial.swapped[p] = !trial.swapped[p];
                consider(trial, &mut best);
            }
            rounds += 1;
            let improved = best.as_ref().is_some_and(|b| b.0 < current);
            if !improved || rounds == 8 {
                break;
            }
        }
    }
    let (_, sizing, transfers) = best?;
    match &order {
        Some(order) => {
            let mut transfers = Vec::new();
            simulate_chains(
                instance,
                &links,
                order,
                &sizing,
                (MAX_MESSAGES, f64::INFINITY),
                Some(&mut transfers),
            )?;
            Some(transfers)
        }
        None => Some(transfers),
    }
}

/// A schedule for a ring with start-ups: messages sized per link and sent as soon
/// as possible (the module docs give the sizing and the search).
///
/// On unidirectional rings the flows are the minimal ones; on bidirectional rings
/// the best of a few circulations: every one when there are fewer than 16, else
/// where the start-up port bound ([`startup_lower_bound`]) is least, where its path
/// bound is least, where System 6 is least, and their neighbours. Valid by construction (every message is held when it starts, ports
/// are never shared); [`plan`](crate::ring::plan) validates it again and compares
/// it with the start-up bound.
///
/// # Arguments
/// * `instance` - a validated ring, with or without start-ups.
///
/// # Returns
/// The schedule (transfers are messages; over links without start-up they are
/// trains of the items held at their start).
///
/// # Complexity
/// About 22 simulations of O(m log m) for m messages per circulation tried (a few
/// on bidirectional rings), plus the link-by-link improvement on rings with at most
/// 64 links carrying flow and 4,096 items moved.
///
/// # Example
/// ```
/// use hetbal::ring::{startup_lower_bound, startup_schedule, RingInstance};
/// use hetbal::validate;
/// // A chain: P0 gives 12 items to P4 through P1..P3 (1 s per item, 4 s per message).
/// let ring = RingInstance::unidirectional(&[13, 1, 1, 1, 1], &[1, 1, 1, 1, 13], &[1.0; 5])
///     .unwrap()
///     .with_startups(&[4.0; 5], &[0.0; 5])
///     .unwrap();
/// let schedule = startup_schedule(&ring);
/// assert!(validate(&ring, &schedule).is_ok());
/// // One message per hop would take 4 * 16 = 64; item by item 12 * 5 + 3 * 5 = 75.
/// assert!(schedule.makespan() < 64.0);
/// assert!(schedule.makespan() >= startup_lower_bound(&ring).value);
/// ```
pub fn startup_schedule(instance: &RingInstance) -> Schedule {
    let sums = prefix_sums(instance);
    let flows_of = |x: i128| -> Vec<i128> { sums.iter().map(|s| s + x).collect() };
    let mut candidates: Vec<i128> = Vec::new();
    match instance.kind() {
        // A path's flows are fixed: the last link carries nothing.
        _ if instance.is_path() => candidates.push(0),
        RingKind::Unidirectional => candidates.push(-sums.iter().copied().min().unwrap_or(0)),
        RingKind::Bidirectional => {
            let (lo, hi) = (
                -sums.iter().copied().max().unwrap_or(0),
                -sums.iter().copied().min().unwrap_or(0),
            );
            if hi - lo < ALL_CIRCULATIONS {
                candidates.extend(lo..=hi);
            } else {
                let bound = startup_lower_bound(instance);
                let s6 = circulation_bound(instance).x;
                for x in [bound.port_x, bound.path_x, s6] {
                    candidates.extend([x - 1, x, x + 1]);
                }
                candidates.sort_unstable();
                candidates.dedup();
            }
        }
    }
    let mut best: Option<Vec<Transfer>> = None;
    for x in candidates {
        if let Some(transfers) = best_for_flows(instance, &flows_of(x)) {
            if best
                .as_ref()
                .is_none_or(|b| makespan(&transfers) < makespan(b))
            {
                best = Some(transfers);
            }
        }
    }
    Schedule::new(best.unwrap_or_default())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::random::SplitMix64;

    /// The chain sweep makes exactly the event simulation's transfers, for every
    /// sizing the planner tries, on random rings with start-ups (some links
    /// without), processors that hold nothing, paths and bidirectional flows
    /// whose links form chains.
    #[test]
    fn the_chain_sweep_equals_the_event_simulation() {
        let mut rng = SplitMix64::new(35);
        let mut compared = 0;
        for case in 0..400 {
            let n = 2 + (rng.next_u64() % 9) as usize;
            let loads: Vec<u64> = (0..n).map(|_| rng.next_u64() % 30).collect();
            let total: u64 = loads.iter().sum::<u64>().max(1);
            let mut loads = loads;
            if loads.iter().sum::<u64>() == 0 {
                loads[0] = 1;
            }
            let mut targets = vec![0u64; n];
            for _ in 0..total {
                targets[(rng.next_u64() % n as u64) as usize] += 1;
            }
            let mut draw = |scale: f64| (1 + rng.next_u64() % 8) as f64 * scale;
            let c: Vec<f64> = (0..n).map(|_| draw(0.25)).collect();
            let l: Vec<f64> = (0..n)
                .map(|i| if i % 3 == 0 { 0.0 } else { draw(0.5) })
                .collect();
            let ring = if case % 2 == 0 {
                RingInstance::unidirectional(&loads, &targets, &c)
            } else {
                RingInstance::bidirectional(&loads, &targets, &c, &c)
            }
            .unwrap()
            .with_startups(&l, &l)
            .unwrap();
            let sums = prefix_sums(&ring);
            let x = match ring.kind() {
                RingKind::Unidirectional => -sums.iter().copied().min().unwrap(),
                RingKind::Bidirectional => 0,
            };
            let flows: Vec<i128> = sums.iter().map(|s| s + x).collect();
            let links = flow_links(&ring, &flows).unwrap();
            let Some(order) = chain_order(n, &links) else {
                continue;
            };
            for (factor, absorb, trains) in [
                (1.0, false, true),
                (0.25, true, true),
                (4.0, false, false),
                (f64::INFINITY, true, false),
                (0.0, false, true),
            ] {
                let sizing = scaled(&links, factor, absorb, trains);
                let sorted = |t: Option<Vec<Transfer>>| {
                    t.map(|mut t| {
                        t.sort_by(|a, b| a.from.cmp(&b.from).then(a.start.total_cmp(&b.start)));
                        t
                    })
                };
                let events = sorted(simulate(
                    &ring,
                    &links,
                    &sizing,
                    MAX_MESSAGES,
                    f64::INFINITY,
                ));
                let mut recorded = Vec::new();
                let m = simulate_chains(
                    &ring,
                    &links,
                    &order,
                    &sizing,
                    (MAX_MESSAGES, f64::INFINITY),
                    Some(&mut recorded),
                );
                let alone = simulate_chains(
                    &ring,
                    &links,
                    &order,
                    &sizing,
                    (MAX_MESSAGES, f64::INFINITY),
                    None,
                );
                assert_eq!(m, alone);
                assert_eq!(m, events.as_ref().map(|t| makespan(t)));
                let chains = sorted(m.map(|_| recorded));
                assert_eq!(
                    events,
                    chains,
                    "case {case}: {:?} {:?}",
                    ring.loads(),
                    ring.targets()
                );
                // A cutoff below the makespan stops both.
                if let Some(m) = m.filter(|&m| m > 0.0) {
                    let cut = (MAX_MESSAGES, m * 0.999);
                    assert!(simulate(&ring, &links, &sizing, MAX_MESSAGES, cut.1).is_none());
                    assert!(simulate_chains(&ring, &links, &order, &sizing, cut, None).is_none());
                }
                compared += 1;
            }
        }
        assert!(compared > 1000, "{compared}");
    }
}
