//! Batch-level scheduling of bidirectional flows on large rings, segment by segment.
//!
//! Given flows with one direction per link, every processor is a *source* (no link
//! brings it items), a *sink* (no link takes items from it) or a *forwarder* (one link
//! in, one link out). The links form maximal directed paths, *segments*, each from a
//! source to a sink. A source holds everything it sends from the start, so along a
//! segment the only coupling is store and forward, which is the unidirectional
//! problem: the batched unidirectional planner schedules a segment optimally (its
//! makespan is the segment's `max g c`) in few batches. What remains is the one-port
//! rule where two segments meet: a source sends its two segments one after the other
//! (the order that ends both sooner), and a sink receives its two incoming batches
//! in order of their start, delaying the later one.

use crate::ring::unidirectional::{batched_trains, convoy_trains, schedule_of_trains};
use crate::ring::RingInstance;
use crate::ring::{Schedule, Transfer};

/// One link in the direction its flow goes.
#[derive(Clone, Copy)]
struct Link {
    sender: usize,
    receiver: usize,
    items: u64,
    cost: f64,
}

/// A maximal directed path of links, from a source to a sink.
struct Segment {
    /// Processors from the source to the sink.
    processors: Vec<usize>,
    /// Its links' items and costs, from the source.
    links: Vec<(u64, f64)>,
    /// Its batches, in ring indices, shifted to their final times.
    transfers: Vec<Transfer>,
    /// When the source sends its first item.
    offset: f64,
}

impl Segment {
    /// Time the source's port spends on this segment.
    fn head_time(&self) -> f64 {
        self.links[0].0 as f64 * self.links[0].1
    }

    /// Items over all its links.
    fn items(&self) -> u128 {
        self.links.iter().map(|&(g, _)| u128::from(g)).sum()
    }

    /// The segment's makespan when it starts at 0 (the unidirectional bound).
    fn span(&self) -> f64 {
        self.links
            .iter()
            .map(|&(g, c)| g as f64 * c)
            .fold(0.0, f64::max)
    }
}

/// Schedules `flows` (clockwise net flow per link, as from
/// [`circulation_flows`](crate::ring::circulation_flows)) segment by segment, in
/// batches. Returns `None` when no processor is a source (the flows turn around the
/// whole ring in one direction). When the optimal batches of the paths would be more
/// than `max_transfers`, every path is scheduled in convoys within a share of
/// `max_transfers` ([`convoy_trains`]).
///
/// The schedule is valid by construction; [`plan`](crate::ring::plan) validates it
/// again. Its makespan is not always the System 6 optimum: sources never interleave
/// their two segments, and a sink delays whole batches.
///
/// Complexity: O(n + b log b) time and O(n + b) space for b batches.
pub(crate) fn segment_schedule(
    instance: &RingInstance,
    flows: &[i128],
    max_transfers: u128,
) -> Option<Schedule> {
    let n = instance.len();
    let mut links: Vec<Option<Link>> = Vec::with_capacity(n);
    for (l, &f) in flows.iter().enumerate() {
        let items = u64::try_from(f.unsigned_abs()).ok()?;
        links.push(match f.signum() {
            0 => None,
            1 => Some(Link {
                sender: l,
                receiver: instance.succ(l),
                items,
                cost: instance.c_succ()[l],
            }),
            _ => Some(Link {
                sender: instance.succ(l),
                receiver: l,
                items,
                cost: instance.c_pred()[instance.succ(l)]?,
            }),
        });
    }
    // Per processor, its outgoing and incoming links (link i joins P_i and P_{i+1}).
    let incident = |i: usize| [instance.pred(i), i];
    let outgoing = |i: usize| -> Vec<usize> {
        incident(i)
            .into_iter()
            .filter(|&l| links[l].is_some_and(|k| k.sender == i))
            .collect()
    };
    let incoming_count = |i: usize| {
        incident(i)
            .into_iter()
            .filter(|&l| links[l].is_some_and(|k| k.receiver == i))
            .count()
    };
    if n == 2 {
        // Both links join the same two processors; the general walk assumes two
        // distinct neighbours.
        return None;
    }
    // Walk every segment from its source.
    let mut segments: Vec<Segment> = Vec::new();
    let mut first_of_source: Vec<[usize; 2]> = vec![[usize::MAX; 2]; n];
    let mut walked = 0usize;
    for (s, firsts) in first_of_source.iter_mut().enumerate() {
        if incoming_count(s) != 0 {
            continue;
        }
        for (k, start) in outgoing(s).into_iter().enumerate() {
            let mut processors = vec![s];
            let mut path = Vec::new();
            let mut l = start;
            loop {
                let link = links[l].expect("a link of the walk carries items");
                path.push((link.items, link.cost));
                processors.push(link.receiver);
                walked += 1;
                let r = link.receiver;
                let out = outgoing(r);
                if out.len() == 1 && incoming_count(r) == 1 {
                    l = out[0];
                } else {
                    break;
                }
            }
            firsts[k] = segments.len();
            segments.push(Segment {
                processors,
                links: path,
                transfers: Vec::new(),
                offset: 0.0,
            });
        }
    }
    if walked != links.iter().flatten().count() {
        return None; // a cycle without source
    }
    // Each segment alone: the batched unidirectional planner on the path, or, when
    // the paths together need more than `max_transfers` batches, convoys on every
    // path with a share of the budget in proportion to its items.
    let mut budget = Some(max_transfers);
    for segment in &mut segments {
        match path_schedule(instance, segment, budget.as_mut()) {
            Some(transfers) => segment.transfers = transfers,
            None => {
                budget = None;
                break;
            }
        }
    }
    if budget.is_none() {
        let items: u128 = segments.iter().map(Segment::items).sum();
        for segment in &mut segments {
            let share = (max_transfers * segment.items() / items.max(1))
                .max(2 * segment.links.len() as u128);
            segment.transfers = path_schedule_within(instance, segment, share);
        }
    }
    // Sources: the order that ends both segments sooner goes first.
    let mut second: Vec<Option<(usize, usize)>> = vec![None; segments.len()]; // (first, source)
    for (s, pair) in first_of_source.iter_mut().enumerate() {
        if pair[1] == usize::MAX {
            continue;
        }
        let (a, b) = (&segments[pair[0]], &segments[pair[1]]);
        let a_first = a.span().max(a.head_time() + b.span());
        let b_first = b.span().max(b.head_time() + a.span());
        if b_first < a_first {
            pair.swap(0, 1);
        }
        second[pair[1]] = Some((pair[0], s));
    }
    // Sinks: incoming batches in order of start; a direct first batch of a source
    // (segment of one link, sent from time 0) cannot move, everything else can be
    // delayed (the sender keeps the items longer, or is a source done otherwise).
    let mut into_sink: Vec<Vec<usize>> = vec![Vec::new(); n];
    for (k, segment) in segments.iter().enumerate() {
        into_sink[*segment.processors.last().expect("a segment has a sink")].push(k);
    }
    // Second segments start when their source's first one has left it. A direct
    // first segment may itself be delayed at its sink, so sinks whose incoming
    // segments are all first segments are settled before second segments start.
    let is_second = |k: usize| second[k].is_some();
    let mut settled = vec![false; n];
    for sink in 0..n {
        if into_sink[sink].iter().all(|&k| !is_second(k)) {
            settle_sink(&mut segments, &into_sink[sink], &second);
            settled[sink] = true;
        }
    }
    for k in 0..segments.len() {
        if let Some((first, source)) = second[k] {
            let end = segments[first]
                .transfers
                .iter()
                .filter(|t| t.from == source)
                .map(|t| t.end)
                .fold(0.0, f64::max);
            let shift = end - segments[k].offset;
            segments[k].offset = end;
            for t in &mut segments[k].transfers {
                t.start += shift;
                t.end += shift;
            }
        }
    }
    for sink in 0..n {
        if !settled[sink] {
            settle_sink(&mut segments, &into_sink[sink], &second);
        }
    }
    let transfers: Vec<Transfer> = segments.into_iter().flat_map(|s| s.transfers).collect();
    Some(Schedule::new(transfers))
}

/// The path of a segment as a unidirectional ring: the source holding the items it
/// sends, forwarders as in the ring, the sink receiving (link costs of the path, the
/// last one unused).
fn path_ring(instance: &RingInstance, segment: &Segment) -> Option<RingInstance> {
    let k = segment.processors.len();
    let mut loads = Vec::with_capacity(k);
    let mut targets = Vec::with_capacity(k);
    let mut costs = Vec::with_capacity(k);
    for (j, &p) in segment.processors.iter().enumerate() {
        if j == 0 {
            loads.push(segment.links[0].0 + 1);
            targets.push(1);
        } else if j + 1 == k {
            loads.push(1);
            targets.push(1 + segment.links[j - 1].0);
        } else {
            loads.push(instance.loads()[p]);
            targets.push(instance.targets()[p]);
        }
        costs.push(segment.links.get(j).map_or(1.0, |l| l.1));
    }
    RingInstance::unnamed_unidirectional(loads, targets, costs)
}

/// The transfers of a path schedule in ring indices.
fn in_ring(segment: &Segment, schedule: Schedule) -> Vec<Transfer> {
    schedule
        .transfers
        .into_iter()
        .map(|t| Transfer {
            from: segment.processors[t.from],
            to: segment.processors[t.to],
            ..t
        })
        .collect()
}

/// Schedules one segment alone from time 0: the batched unidirectional planner on
/// the path, in ring indices. Counts the batches against `budget`; `None` when
/// they do not fit.
fn path_schedule(
    instance: &RingInstance,
    segment: &Segment,
    budget: Option<&mut u128>,
) -> Option<Vec<Transfer>> {
    let budget = budget?;
    let path = path_ring(instance, segment)?;
    // On a ring with start-ups each item of a paced train would be a message.
    let trains = batched_trains(&path, *budget, instance.has_startups())?;
    let schedule = schedule_of_trains(&path, &trains);
    *budget = budget.checked_sub(schedule.transfers.len() as u128)?;
    Some(in_ring(segment, schedule))
}

/// Schedules one segment alone from time 0 in convoys within `budget` batches
/// (at least two per link).
fn path_schedule_within(instance: &RingInstance, segment: &Segment, budget: u128) -> Vec<Transfer> {
    let Some(path) = path_ring(instance, segment) else {
        return Vec::new();
    };
    let trains = convoy_trains(&path, budget);
    in_ring(segment, schedule_of_trains(&path, &trains))
}

/// Orders the batches entering one sink on its receiving port: fixed batches (a
/// source's direct first segment) stay; the others, in order of start, each go at
/// the first time from their start, and after the previous batch of their link,
/// when the port is free for their whole length.
fn settle_sink(segments: &mut [Segment], entering: &[usize], second: &[Option<(usize, usize)>]) {
    if entering.len() < 2 {
        return;
    }
    let sink = *segments[entering[0]]
        .processors
        .last()
        .expect("a segment has a sink");
    let fixed =
        |k: usize, segments: &[Segment]| segments[k].links.len() == 1 && second[k].is_none();
    // Busy intervals of the port, sorted: the fixed batches first.
    let mut busy: Vec<(f64, f64)> = Vec::new();
    let mut movable: Vec<(usize, usize)> = Vec::new(); // (segment, transfer index)
    let mut kept_one_fixed = false;
    for &k in entering {
        let keep = fixed(k, segments) && !kept_one_fixed;
        kept_one_fixed |= keep;
        for (index, t) in segments[k].transfers.iter().enumerate() {
            if t.to != sink {
                continue;
            }
            if keep {
                busy.push((t.start, t.end));
            } else {
                movable.push((k, index));
            }
        }
    }
    busy.sort_by(|a, b| a.0.total_cmp(&b.0));
    movable.sort_by(|a, b| {
        let (x, y) = (&segments[a.0].transfers[a.1], &segments[b.0].transfers[b.1]);
        x.start.total_cmp(&y.start)
    });
    let mut link_free = vec![0.0f64; entering.len()];
    for (k, index) in movable {
        let slot = entering.iter().position(|&e| e == k).expect("entering");
        let t = segments[k].transfers[index];
        let length = t.end - t.start;
        let mut start = t.start.max(link_free[slot]);
        // First fit among the busy intervals (sorted, disjoint: ends sorted too).
        let mut at = busy.partition_point(|&(_, b)| b <= start);
        while at < busy.len() && busy[at].0 < start + length {
            start = start.max(busy[at].1);
            at += 1;
        }
        let moved = &mut segments[k].transfers[index];
        moved.start = start;
        moved.end = start + length;
        link_free[slot] = moved.end;
        busy.insert(at, (start, start + length));
    }
}
