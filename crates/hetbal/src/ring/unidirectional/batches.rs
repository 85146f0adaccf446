//! Algorithm 2's makespan in few transfers on unidirectional rings: sends
//! grouped in batches between their earliest and latest schedules
//! ([`batched_schedule`]), or convoys when batches would be too many.

use super::*;

/// A piece of a bound sequence over send indices: `count` sends whose bound is
/// `first + j * step` for j = 0..count.
#[derive(Clone, Copy, Debug)]
struct Piece {
    count: u64,
    first: f64,
    step: f64,
}

/// Cuts `pieces` so that they cover exactly `total` indices (extended with `fill`
/// if they cover fewer).
fn fit_pieces(pieces: &mut Vec<Piece>, total: u64, fill: f64) {
    let mut covered = 0u64;
    let mut kept = 0usize;
    for k in 0..pieces.len() {
        if covered == total {
            break;
        }
        let p = pieces[k];
        let take = p.count.min(total - covered);
        if take > 0 {
            pieces[kept] = Piece { count: take, ..p };
            kept += 1;
            covered += take;
        }
    }
    pieces.truncate(kept);
    if covered < total {
        pieces.push(Piece {
            count: total - covered,
            first: fill,
            step: 0.0,
        });
    }
}

/// Earliest start of each of the `f` sends of processor `i`, into `out`: 0 for its
/// own items, then the arrival of each item from the predecessor, whose sends are
/// `pred_sends`.
fn earliest_starts(
    instance: &RingInstance,
    i: usize,
    f: u64,
    pred_sends: &[Train],
    out: &mut Vec<Piece>,
) {
    let c_in = instance.c_succ()[instance.pred(i)];
    out.clear();
    out.push(Piece {
        count: f.min(instance.loads()[i]),
        first: 0.0,
        step: 0.0,
    });
    out.extend(pred_sends.iter().map(|t| Piece {
        count: t.count,
        first: t.start + c_in,
        step: t.period,
    }));
    fit_pieces(out, f, f64::INFINITY);
}

/// Where both bounds of [`greedy_runs`] are arithmetic.
#[derive(Clone, Copy)]
struct Segment {
    begin: u64,
    count: u64,
    lower: f64,
    lower_step: f64,
    upper: f64,
    upper_step: f64,
}

/// Reused buffers of the batched planner (one allocation each for the whole ring).
#[derive(Default)]
struct Scratch {
    lower: Vec<Piece>,
    upper: Vec<Piece>,
    segments: Vec<Segment>,
    mirrored_lower: Vec<Piece>,
    mirrored_upper: Vec<Piece>,
}

/// Chooses send times `s_k` with `lower[k] <= s_k <= upper[k]` and
/// `s_{k+1} >= s_k + c`, in as few back-to-back runs as possible, appended to `out`
/// in time order: each run starts at the earliest time that lets it be as long as
/// possible (greedy, optimal for the number of runs since the feasible starts of a
/// run form an interval that shrinks as the run grows).
///
/// `lower` and `upper` are piecewise arithmetic over the same `total` indices. Runs
/// never start later than the as-soon-as-possible sends would, so when those respect
/// `upper` a choice always exists. Returns false as soon as more than `budget` runs
/// have been made in all.
fn greedy_runs(
    lower: &[Piece],
    upper: &[Piece],
    total: u64,
    c: f64,
    budget: &mut u128,
    segments: &mut Vec<Segment>,
    out: &mut Vec<Train>,
) -> bool {
    // Merge both piece lists into segments where both bounds are arithmetic.
    segments.clear();
    common_pieces(lower, upper, total, |begin, l, u| {
        segments.push(Segment {
            begin,
            count: l.count,
            lower: l.first,
            lower_step: l.step,
            upper: u.first,
            upper_step: u.step,
        })
    });
    let tolerance = |x: f64| 1e-12 * x.abs().max(1.0);
    let mut free = f64::NEG_INFINITY; // the link is free from here on
    let mut seg = 0usize;
    let mut k0 = 0u64; // first index of the run being built
    while k0 < total {
        while segments[seg].begin + segments[seg].count <= k0 {
            seg += 1;
        }
        // Bounds on the run's start s implied by index g: lower[g] - (g - k0) c <= s
        // and s <= upper[g] - (g - k0) c. Both are linear in g within a segment.
        let (mut lo, mut hi) = (free, f64::INFINITY);
        let mut g = k0;
        let mut s_idx = seg;
        while g < total {
            let sg = segments[s_idx];
            let end = sg.begin + sg.count; // exclusive
            let at = |h: u64| {
                let j = (h - sg.begin) as f64;
                let shift = (h - k0) as f64 * c;
                (
                    sg.lower + j * sg.lower_step - shift,
                    sg.upper + j * sg.upper_step - shift,
                )
            };
            let bounds = |from: u64, to: u64| {
                let (l1, u1) = at(from);
                let (l2, u2) = at(to);
                (l1.max(l2), u1.min(u2))
            };
            let fits = |h: u64| {
                let (l, u) = bounds(g, h);
                let (nlo, nhi) = (lo.max(l), hi.min(u));
                nlo <= nhi + tolerance(nhi)
            };
            if fits(end - 1) {
                let (l, u) = bounds(g, end - 1);
                lo = lo.max(l);
                hi = hi.min(u);
                g = end;
                s_idx += 1;
                continue;
            }
            // Largest h in [g, end) such that indices g..=h still fit (monotone).
            let mut best = None;
            let (mut left, mut right) = (g, end - 1);
            while left <= right {
                let mid = left + (right - left) / 2;
                if fits(mid) {
                    best = Some(mid);
                    left = mid + 1;
                } else if mid == g {
                    break;
                } else {
                    right = mid - 1;
                }
            }
            if let Some(h) = best {
                lo = lo.max(bounds(g, h).0);
                g = h + 1;
            }
            break;
        }
        if g == k0 {
            // Cannot happen when the bounds come from a valid schedule; keep going
            // with a single send at its lower bound so the validator reports it.
            g = k0 + 1;
        }
        let count = g - k0;
        if *budget == 0 {
            return false;
        }
        *budget -= 1;
        out.push(Train {
            start: lo,
            count,
            period: c,
        });
        free = lo + count as f64 * c;
        k0 = g;
    }
    true
}

/// Mirrors pieces: indices reversed, values negated.
fn mirror(pieces: &[Piece], out: &mut Vec<Piece>) {
    out.clear();
    out.extend(pieces.iter().rev().map(|p| Piece {
        count: p.count,
        first: -(p.first + (p.count - 1) as f64 * p.step),
        step: p.step,
    }));
}

/// The same choice made from the last send backwards: the fewest runs, each as late
/// as possible, which leaves the most slack to the predecessor that feeds them.
/// It is [`greedy_runs`] on the mirrored problem (indices reversed, times negated).
/// Uses `scratch.lower` and `scratch.upper` as the bounds; appends to `out`.
fn latest_runs(
    scratch: &mut Scratch,
    total: u64,
    c: f64,
    budget: &mut u128,
    out: &mut Vec<Train>,
) -> bool {
    mirror(&scratch.upper, &mut scratch.mirrored_lower);
    mirror(&scratch.lower, &mut scratch.mirrored_upper);
    let first = out.len();
    if !greedy_runs(
        &scratch.mirrored_lower,
        &scratch.mirrored_upper,
        total,
        c,
        budget,
        &mut scratch.segments,
        out,
    ) {
        return false;
    }
    let runs = &mut out[first..];
    runs.reverse();
    for r in runs.iter_mut() {
        r.start = -(r.start + (r.count - 1) as f64 * c);
    }
    true
}

/// Moves every run as early as the runs before it allow, keeping the runs (same
/// items, same order): processors in walk order, each run starting when the link is
/// free and its last needed item has arrived from the predecessor's final runs.
/// Earlier arrivals never hurt a successor, so validity and makespan are kept.
fn shift_earliest(
    instance: &RingInstance,
    order: &[usize],
    runs: &mut RingTrains,
    lower: &mut Vec<Piece>,
) {
    for &i in order {
        let f: u64 = runs.of(i).iter().map(|t| t.count).sum();
        if f == 0 {
            continue;
        }
        let c = instance.c_succ()[i];
        earliest_starts(instance, i, f, runs.of(instance.pred(i)), lower);
        let mut free = 0.0f64;
        let (mut piece, mut piece_begin) = (0usize, 0u64);
        let mut k = 0u64; // index of the run's first send
        let (first, last) = runs.ranges[i];
        for run in &mut runs.trains[first..last] {
            let end = k + run.count; // exclusive
            let mut start = free;
            // Pieces overlapping [k, end): the bound lower[g] - (g - k) c is linear in
            // g within a piece, so its maximum is at an end of the overlap.
            while piece_begin + lower[piece].count <= k {
                piece_begin += lower[piece].count;
                piece += 1;
            }
            let (mut p, mut p_begin) = (piece, piece_begin);
            while p < lower.len() && p_begin < end {
                let pc = lower[p];
                let from = k.max(p_begin);
                let to = end.min(p_begin + pc.count) - 1;
                for g in [from, to] {
                    let bound = pc.first + (g - p_begin) as f64 * pc.step - (g - k) as f64 * c;
                    start = start.max(bound);
                }
                p_begin += pc.count;
                p += 1;
            }
            // Never later than before (guards against rounding), never before 0.
            run.start = start.min(run.start).max(0.0);
            free = run.start + run.count as f64 * c;
            k = end;
        }
    }
}

/// The share of each send's slack that the batched planner lets one link use.
///
/// Each link may delay a send by this share of the time between its earliest (given
/// the links before it) and its latest (for the optimal makespan); the rest is left
/// to the links after it. Measured on full rebalances (loads 1..=50, shuffled
/// targets, costs in [0.5, 2)): 0.1 gives the fewest batches of the shares tried
/// (1.6 million at 10^5 processors, against 3.7 million with 0.5, 2.1 million with
/// 0.3 and 35 million when each link takes all of its slack).
const SLACK_SHARE: f64 = 0.1;

/// An optimal unidirectional schedule in few transfers: the flows and the makespan of
/// Algorithm 2 (the lower bound), with each processor's items grouped into few
/// back-to-back batches, or Algorithm 2's own schedule where that has fewer
/// transfers.
///
/// Algorithm 2 forwards every item the moment it arrives, so wherever items arrive
/// slower than they can leave, it sends them one at a time (a paced train: one
/// transfer, but a message per item). Most of those gaps are not needed: a
/// processor may wait and forward several items at once, as long as the processors
/// after it can still finish by the bound. This planner
/// 1. computes every send's latest time: Algorithm 2 on the mirrored ring (walked
///    backwards in time, loads and targets swapped) read backwards, the latest
///    schedule that ends by the lower bound;
/// 2. walks the ring from the processor that receives nothing; each processor's
///    k-th send may start once its k-th item is held (its own items at 0, then the
///    arrivals of its predecessor's chosen batches) and no later than its earliest
///    possible time plus a tenth (`SLACK_SHARE`) of the way to its latest time;
/// 3. chooses the send times within these windows in the fewest back-to-back runs,
///    greedily from the first send, each run as early as lets it be as long as
///    possible.
///
/// Every window holds the processor's as-soon-as-possible sends, and every window
/// ends by the latest time, so a choice always exists, each processor after it
/// still has the latest schedule to fall back on, and every send ends by the lower
/// bound: the schedule is optimal. Taking a share of the slack rather than all of it
/// keeps batching possible further along: on a 10^5-processor full rebalance this
/// gives 1.6 million batches where taking all the slack gives 35 million. Gaps
/// remain where the successor really needs items a few at a time (a chain of
/// saturated links).
///
/// On small rings, where the slack is short, a second pass often does better: walk
/// the ring backwards from the processor that sends nothing, give each processor the
/// fewest runs between Algorithm 2's arrivals and its successor's chosen sends, each
/// as late as possible, then move every run as early as the runs before it allow.
/// It runs first, cut off beyond one batch per link plus 1% (where it gets there, as
/// on rings that forward little, it is kept), and again after the first pass,
/// cut off as soon as it makes more transfers than Algorithm 2; the schedule with
/// fewer batches is kept, or Algorithm 2's own (each paced train one transfer)
/// where it has fewer transfers still, which is the rule on large rings that
/// forward a lot (10^4 processors, full rebalance: 21,003 trains of Algorithm 2
/// against 48,674 batches).
///
/// # Complexity
/// O(n + a + b log F) time and O(n + a + b) space, where a is the number of trains of
/// Algorithm 2 (about two per processor, on the ring and its mirror), b the number
/// of batches of the first pass and F the largest flow.
///
/// # Example
/// ```
/// use hetbal::ring::{asap_unidirectional, batched_schedule, RingInstance};
/// // P0 (4 items) --2.0--> P1 (1 item) --1.0--> P2 (2 items) --1.0--> P0.
/// // Algorithm 2 has P1 send its 3 items one at a time (0, 2, 4: 2 transfers, the
/// // second paced); P2 keeps them, so P1 may as well wait and send all 3 back to back.
/// let ring = RingInstance::unidirectional(&[4, 1, 2], &[1, 1, 5], &[2.0, 1.0, 1.0]).unwrap();
/// assert_eq!(asap_unidirectional(&ring).transfers.len(), 3);
/// let schedule = batched_schedule(&ring);
/// let p1: Vec<(u64, f64, f64)> = schedule.transfers.iter()
///     .filter(|t| t.from == 1).map(|t| (t.items, t.start, t.end)).collect();
/// assert_eq!(p1, vec![(3, 2.0, 5.0)]); // one batch, from when the 2nd item arrives
/// assert_eq!(schedule.makespan(), 6.0);
/// ```
pub fn batched_schedule(instance: &RingInstance) -> Schedule {
    let trains = batched_trains(instance, u128::MAX, false).expect("an unlimited budget");
    expand(instance, &trains)
}

/// The latest send times of link i in a schedule ending by `makespan`, as pieces
/// over send indices: send k at `makespan - c - a'` for the mirror's send `f - k + 1`
/// at `a'` (`mirror` holds the mirror's Algorithm 2 sends).
fn latest_starts(
    instance: &RingInstance,
    mirror: &RingTrains,
    i: usize,
    makespan: f64,
    out: &mut Vec<Piece>,
) {
    let c = instance.c_succ()[i];
    let j = instance.len() - 1 - instance.succ(i);
    out.clear();
    out.extend(mirror.of(j).iter().rev().map(|t| Piece {
        count: t.count,
        first: makespan - c - t.last_start(),
        step: t.period,
    }));
}

/// `low + share * (high - low)`, piece by piece, over `total` indices.
fn between(low: &[Piece], high: &[Piece], total: u64, share: f64, out: &mut Vec<Piece>) {
    out.clear();
    common_pieces(low, high, total, |_, l, h| {
        out.push(Piece {
            count: l.count,
            first: l.first + share * (h.first - l.first),
            step: l.step + share * (h.step - l.step),
        })
    });
}

/// Walks two piece lists over the same `total` indices together: `visit(begin, a,
/// b)` for each stretch where both are arithmetic, with `a` and `b` cut to it (same
/// count, first value at index `begin`).
fn common_pieces(a: &[Piece], b: &[Piece], total: u64, mut visit: impl FnMut(u64, Piece, Piece)) {
    let (mut i, mut j) = (0usize, 0usize);
    let (mut used_a, mut used_b) = (0u64, 0u64); // indices used within a[i], b[j]
    let mut begin = 0u64;
    while begin < total {
        let (pa, pb) = (a[i], b[j]);
        let count = (pa.count - used_a).min(pb.count - used_b);
        let cut = |p: Piece, used: u64| Piece {
            count,
            first: p.first + used as f64 * p.step,
            step: p.step,
        };
        visit(begin, cut(pa, used_a), cut(pb, used_b));
        begin += count;
        used_a += count;
        used_b += count;
        if used_a == pa.count {
            i += 1;
            used_a = 0;
        }
        if used_b == pb.count {
            j += 1;
            used_b = 0;
        }
    }
}

/// Rings of at most this many processors get the latest-first pass again after the
/// slack-share pass, even when that one did not fit, and always get the
/// slack-share pass.
const LATEST_FIRST_RETRY_MAX_PROCESSORS: usize = 10_000;

/// How many times fewer runs than the latest-first pass the slack-share pass is
/// taken to make at most, with a margin: 4.1 on a full rebalance of 10^4
/// processors (48,674 runs against 199,606), taken twice.
const SLACK_SHARE_GAIN_MAX: f64 = 8.0;

/// The batched planner's sends per processor, before they become transfers, or
/// `None` when they would be more than `max_runs` transfers: Algorithm 2's sends
/// (each train one transfer, paced where items trickle in), or the runs of the
/// latest-first and slack-share passes when they make no more transfers. With
/// `per_message` (for rings whose links pay start-ups, where every message costs),
/// a paced train counts one per item, as the messages it stands for.
/// The passes are cut off as soon as they cannot do better, so a ring whose runs
/// would be many costs little more than Algorithm 2.
pub(crate) fn batched_trains(
    instance: &RingInstance,
    max_runs: u128,
    per_message: bool,
) -> Option<RingTrains> {
    let asap = asap_trains(instance);
    let asap_runs = if per_message {
        message_count(instance, &asap.trains)
    } else {
        transfer_count(&asap.trains)
    };
    let bound = lower_bound_of_flows(instance, &asap.flows);
    let limit = max_runs;
    // Runs only pay when they are no more than Algorithm 2's trains (on a tie they
    // are kept: they are fewer messages).
    let max_runs = limit.min(asap_runs);
    // Nothing does better than one run per link that carries items; the latest-first
    // pass is the cheaper one, and on rings that forward little it gets within 1% of
    // that: then it is kept.
    let fewest = asap.flows.iter().filter(|&&f| f > 0).count() as u128;
    let near_fewest = fewest + fewest / 100;
    if near_fewest <= max_runs {
        match latest_first_trains(instance, &asap, bound, near_fewest) {
            Ok(t) => return Some(t),
            // A large ring where that pass ran out of runs early: it would make
            // many times Algorithm 2's trains (about `near_fewest` per part of the
            // ring walked), and slack sharing, which makes up to about 4 times
            // fewer runs, would still make more. Algorithm 2's trains are kept
            // without it (on a full rebalance of 10^6 processors: 0.46 s saved).
            Err(walked)
                if instance.len() > LATEST_FIRST_RETRY_MAX_PROCESSORS
                    && near_fewest as f64 * instance.len() as f64
                        > SLACK_SHARE_GAIN_MAX * asap_runs as f64 * walked as f64 =>
            {
                return Some(asap.trains).filter(|_| asap_runs <= limit);
            }
            Err(_) => {}
        }
    }
    let mut best = slack_share_trains(instance, &asap, bound, max_runs);
    let best_runs = best
        .as_ref()
        .map_or(max_runs.saturating_add(1), |t| t.trains.len() as u128);
    // The latest-first pass again, cut off as soon as it cannot do better. It does
    // better than slack sharing on small rings, where the slack is short; on large
    // ones where slack sharing made more runs than Algorithm 2 has trains, latest
    // first (which batches less there: 199,606 runs against 48,674 on a full
    // rebalance of 10^4 processors) is not tried.
    if (best.is_some() || instance.len() <= LATEST_FIRST_RETRY_MAX_PROCESSORS)
        && best_runs > fewest + 1
    {
        if let Ok(t) = latest_first_trains(instance, &asap, bound, best_runs - 1) {
            best = Some(t);
        }
    }
    // The passes ran within `max_runs`, at most Algorithm 2's count.
    best.or_else(|| Some(asap.trains).filter(|_| asap_runs <= limit))
}

/// The slack-share pass of [`batched_schedule`], or `None` as soon as it makes more
/// than `max_runs` runs.
pub(super) fn slack_share_trains(
    instance: &RingInstance,
    asap: &AsapTrains,
    bound: f64,
    max_runs: u128,
) -> Option<RingTrains> {
    let mirror = asap_trains(&instance.mirrored_unidirectional()).trains;
    let mut budget = max_runs;
    let mut chosen = RingTrains::new(instance.len());
    let mut scratch = Scratch::default();
    let mut sends = Vec::new();
    let mut earliest = Vec::new();
    let mut latest = Vec::new();
    for &i in &asap.order {
        let f = asap.flows[i];
        chosen.begin(i);
        if f == 0 {
            continue;
        }
        let pred_runs = chosen.of(instance.pred(i));
        earliest_starts(instance, i, f, pred_runs, &mut scratch.lower);
        asap_sends(instance, i, f, pred_runs, &mut sends);
        earliest.clear();
        earliest.extend(sends.iter().map(|t| Piece {
            count: t.count,
            first: t.start,
            step: t.period,
        }));
        latest_starts(instance, &mirror, i, bound, &mut latest);
        between(&earliest, &latest, f, SLACK_SHARE, &mut scratch.upper);
        let c = instance.c_succ()[i];
        if !greedy_runs(
            &scratch.lower,
            &scratch.upper,
            f,
            c,
            &mut budget,
            &mut scratch.segments,
            &mut chosen.trains,
        ) {
            return None;
        }
        chosen.ranges[i].1 = chosen.trains.len();
    }
    Some(chosen)
}

/// The other way to batch, better on small rings: walk the ring backwards from the
/// processor that sends nothing; each processor's k-th send must start after its
/// k-th item can be held (Algorithm 2's arrivals) and early enough for the
/// successor's chosen sends (its (L_succ + k)-th send needs the item), or by
/// `bound - c` for items the successor keeps; choose the fewest runs from the last
/// send backwards, each as late as possible (the most slack for the predecessor),
/// then move every run as early as the runs before it allow. Every window holds
/// Algorithm 2's send, so a choice always exists. `None` as soon as the runs would
/// be more than `max_runs`.
pub(super) fn latest_first_trains(
    instance: &RingInstance,
    asap: &AsapTrains,
    bound: f64,
    max_runs: u128,
) -> Result<RingTrains, usize> {
    let mut budget = max_runs;
    let mut chosen = RingTrains::new(instance.len());
    let mut scratch = Scratch::default();
    for (walked, &i) in asap.order.iter().rev().enumerate() {
        let f = asap.flows[i];
        chosen.begin(i);
        if f == 0 {
            continue;
        }
        let c = instance.c_succ()[i];
        let succ = instance.succ(i);
        // Earliest starts: own items at 0, then Algorithm 2's arrivals.
        earliest_starts(
            instance,
            i,
            f,
            asap.trains.of(instance.pred(i)),
            &mut scratch.lower,
        );
        // Latest starts: the successor's chosen sends beyond its own items, then the
        // bound for the items it keeps.
        let mut skip = instance.loads()[succ];
        scratch.upper.clear();
        for t in chosen.of(succ) {
            if skip >= t.count {
                skip -= t.count;
                continue;
            }
            scratch.upper.push(Piece {
                count: t.count - skip,
                first: t.start + skip as f64 * t.period - c,
                step: t.period,
            });
            skip = 0;
        }
        fit_pieces(&mut scratch.upper, f, bound - c);
        if !latest_runs(&mut scratch, f, c, &mut budget, &mut chosen.trains) {
            return Err(walked + 1);
        }
        chosen.ranges[i].1 = chosen.trains.len();
    }
    shift_earliest(instance, &asap.order, &mut chosen, &mut scratch.lower);
    Ok(chosen)
}

/// Unidirectional runs within a budget, for rings whose optimal schedules need more
/// transfers than allowed ([`crate::ring::MAX_TRANSFERS`]): items grouped in
/// convoys, each convoy one back-to-back run on every link it crosses, as early as
/// its items allow.
///
/// Items travel in FIFO order: the k-th item processor j sends is its own while
/// `k <= L_j`, then the `(k - L_j)`-th it received. Numbering items by
/// `u = k - (L_0 + ... + L_j)` along the walk (from the processor after a zero flow)
/// gives every item one number on all the links it crosses, and each link carries
/// the items of one interval of numbers. A convoy is an interval `[a M, (a + 1) M)`
/// of numbers: on each link it is one run, so convoys keep their shape from link to
/// link instead of splitting where a processor's own items shift the count. `M` is
/// the least size whose runs fit in `max_runs` (counted in closed form per link,
/// then a bisection on `M`); with one link per run at most, the budget is met
/// whenever it is at least twice the number of links carrying flow. Every run then
/// starts as soon as its link is free and its items are held (the timing pass of
/// [`batched_schedule`]), so the schedule is valid; its makespan is measured, not
/// proven: merging items delays their forwarding, most where a fast link sits
/// between slower ones (a convoy gathered at the fast link reaches the slower one in
/// a burst that it drains at its own pace).
///
/// Complexity: O(n log F + b) time and O(n + b) space for b runs, F the largest
/// flow.
pub(crate) fn convoy_trains(instance: &RingInstance, max_runs: u128) -> RingTrains {
    let n = instance.len();
    let flows = unidirectional_flows(instance);
    let zero = flows.iter().position(|&f| f == 0).unwrap_or(0);
    let order: Vec<usize> = (1..=n).map(|k| (zero + k) % n).collect();
    // lam[i]: loads of the walk up to and including processor i. Item k (1-based) of
    // link i has number k - lam[i].
    let mut lam = vec![0i128; n];
    let mut acc = 0i128;
    for &i in &order {
        acc += i128::from(instance.loads()[i]);
        lam[i] = acc;
    }
    let convoy = |u: i128, m: i128| u.div_euclid(m);
    // Runs of link i with convoys of m items.
    let parts = |i: usize, m: i128| -> u128 {
        let f = i128::from(flows[i]);
        if f == 0 {
            return 0;
        }
        (convoy(f - lam[i], m) - convoy(1 - lam[i], m) + 1) as u128
    };
    let runs = |m: i128| -> u128 { (0..n).map(|i| parts(i, m)).sum() };
    // The least convoy size that fits (runs only fall as convoys grow).
    let largest = i128::from(flows.iter().copied().max().unwrap_or(0)).max(1);
    let (mut lo, mut hi) = (1i128, largest);
    while lo < hi {
        let m = lo + (hi - lo) / 2;
        if runs(m) <= max_runs {
            hi = m;
        } else {
            lo = m + 1;
        }
    }
    let m = lo;
    let mut chosen = RingTrains::new(n);
    for i in 0..n {
        chosen.begin(i);
        let f = flows[i];
        let mut k = 1i128; // first item of the next run
        while k <= i128::from(f) {
            // Items k..=end share the convoy of item k.
            let end = ((convoy(k - lam[i], m) + 1) * m + lam[i] - 1).min(i128::from(f));
            chosen.push(
                i,
                Train {
                    start: f64::INFINITY,
                    count: (end - k + 1) as u64,
                    period: instance.c_succ()[i],
                },
            );
            k = end + 1;
        }
    }
    let mut lower = Vec::new();
    shift_earliest(instance, &order, &mut chosen, &mut lower);
    chosen
}
