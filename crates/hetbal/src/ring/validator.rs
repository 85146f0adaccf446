//! The schedule validator. It shares no logic with any planner: it only reads the
//! instance and the transfers, and checks the model's rules one by one.

use std::fmt;

use crate::ring::{RingInstance, RingKind, Schedule, Transfer};

/// When two instants count as the same. Times are f64 sums of products of item
/// counts and costs, so planners carry rounding errors of a few ulps; a real
/// violation moves a send by a sizeable part of an item's cost. The tolerance is
/// `1e-9 * max(1, |t|)`, capped at a thousandth of the smallest cost in the ring,
/// but never below 16 ulps of `t` (what f64 can tell apart at that magnitude).
#[derive(Clone, Copy)]
struct Tolerance {
    cap: f64,
}

impl Tolerance {
    fn new(instance: &RingInstance) -> Self {
        let mut c_min = instance
            .c_succ()
            .iter()
            .copied()
            .fold(f64::INFINITY, f64::min);
        if instance.kind() == RingKind::Bidirectional {
            c_min = instance
                .c_pred()
                .iter()
                .flatten()
                .copied()
                .fold(c_min, f64::min);
        }
        Tolerance { cap: 1e-3 * c_min }
    }

    fn at(self, t: f64) -> f64 {
        (1e-9 * t.abs().max(1.0))
            .min(self.cap)
            .max(16.0 * f64::EPSILON * t.abs())
    }
}

/// Which rule of the model a transfer breaks.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ViolationRule {
    /// `from` or `to` is not a processor of the ring.
    UnknownProcessor,
    /// `to` is not a neighbour of `from` (or not the successor on a unidirectional ring).
    NotNeighbour,
    /// A transfer of zero items.
    NoItems,
    /// A start or end that is negative, NaN or infinite.
    BadTime,
    /// `end` differs from `start + items * cost` (`start + (items-1) * period + cost`
    /// for a paced train), or a period is below the cost or on a link with a start-up.
    WrongDuration,
    /// Two sends of one processor overlap (one-port, both directions together).
    SendOverlap,
    /// Two receives of one processor overlap (one-port, both directions together).
    ReceiveOverlap,
    /// A send starts while the processor holds no item (store and forward).
    NotHeld,
    /// A message (a transfer over a link with a start-up) starts while its sender
    /// holds fewer items than the message carries: on such a link every item of a
    /// transfer must be held when it starts.
    MessageNotHeld,
    /// A processor does not end with its target.
    FinalHolding,
}

impl fmt::Display for ViolationRule {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            ViolationRule::UnknownProcessor => "unknown processor",
            ViolationRule::NotNeighbour => "neighbours only",
            ViolationRule::NoItems => "at least one item",
            ViolationRule::BadTime => "finite, non-negative times",
            ViolationRule::WrongDuration => "duration = items x cost",
            ViolationRule::SendOverlap => "one-port sending",
            ViolationRule::ReceiveOverlap => "one-port receiving",
            ViolationRule::NotHeld => "store and forward",
            ViolationRule::MessageNotHeld => "a message's items held when it starts",
            ViolationRule::FinalHolding => "final holdings = targets",
        })
    }
}

/// One broken rule: which transfer (index in the schedule as given) or processor,
/// which rule, and a sentence explaining it.
#[derive(Clone, Debug, PartialEq)]
pub struct Violation {
    /// Index of the offending transfer in `schedule.transfers`, if one is to blame.
    pub transfer: Option<usize>,
    /// The processor concerned.
    pub processor: Option<usize>,
    /// The rule broken.
    pub rule: ViolationRule,
    /// What is wrong, with the numbers.
    pub message: String,
}

impl fmt::Display for Violation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if let Some(t) = self.transfer {
            write!(f, "transfer {t}: ")?;
        }
        write!(f, "{} [{}]", self.message, self.rule)
    }
}

/// What a valid schedule does, per processor and overall.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ScheduleReport {
    /// Time at which the last transfer ends.
    pub makespan: f64,
    /// Items each processor sends to its successor.
    pub sent_to_succ: Vec<u64>,
    /// Items each processor sends to its predecessor.
    pub sent_to_pred: Vec<u64>,
    /// Items each processor receives.
    pub received: Vec<u64>,
    /// Total time each processor spends sending.
    pub send_busy: Vec<f64>,
    /// Total time each processor spends receiving.
    pub receive_busy: Vec<f64>,
}

/// A batch as seen by one processor: `items` items of duration `cost`, first one
/// starting at `start`, transfer index `index`. A message (`message`: the link has
/// a start-up) holds all its items from its start and delivers them at its end; a
/// train sends its k-th item (0-based) at `start + k * period` and delivers it
/// `cost` later (`period == cost` back to back).
#[derive(Clone, Copy)]
struct Batch {
    start: f64,
    end: f64,
    items: u64,
    cost: f64,
    period: f64,
    index: usize,
    message: bool,
    to_succ: bool,
}

impl Batch {
    /// When its first item arrives.
    fn first_arrival(&self) -> f64 {
        if self.message {
            self.end
        } else {
            self.start + self.cost
        }
    }
}

/// Each processor's sends as indices into the schedule (a counting sort,
/// stable: in schedule order within a group). Eight bytes per transfer: the
/// batches themselves are made one processor at a time ([`Accepted::gather`]),
/// and a processor's receives are its neighbours' sends towards it
/// ([`merge_receives`]).
struct Groups {
    offsets: Vec<usize>,
    at: Vec<usize>,
}

impl Groups {
    /// The accepted transfers (`links[i] != REFUSED`) grouped by sender (below
    /// `n`). O(n + m).
    fn by_sender(n: usize, transfers: &[Transfer], links: &[u8]) -> Self {
        let accepted = || {
            transfers
                .iter()
                .zip(links)
                .enumerate()
                .filter(|(_, (_, &l))| l != REFUSED)
                .map(|(i, (t, _))| (i, t.from))
        };
        let mut offsets = vec![0usize; n + 1];
        for (_, from) in accepted() {
            offsets[from + 1] += 1;
        }
        for p in 0..n {
            offsets[p + 1] += offsets[p];
        }
        let mut next = offsets[..n].to_vec();
        let mut at = vec![0usize; offsets[n]];
        for (i, from) in accepted() {
            at[next[from]] = i;
            next[from] += 1;
        }
        Groups { offsets, at }
    }

    fn of(&self, p: usize) -> &[usize] {
        &self.at[self.offsets[p]..self.offsets[p + 1]]
    }
}

/// Schedules with fewer transfers are validated on one thread; larger ones on
/// as many as the machine offers, at most 8 (each takes the structural checks of
/// a range of transfers, then the checks of a range of processors).
const PARALLEL_TRANSFERS: usize = 200_000;

/// `threads` contiguous ranges of processors with about as many batches each
/// (`offsets`: each processor's first batch); some may be empty.
fn processor_ranges(offsets: &[usize], threads: usize) -> Vec<std::ops::Range<usize>> {
    let n = offsets.len() - 1;
    let threads = threads.max(1);
    let total = offsets[n];
    let mut ranges = Vec::with_capacity(threads);
    let mut start = 0;
    for k in 1..=threads {
        let end = if k == threads {
            n
        } else {
            // The first processor whose batches start past k / threads of them.
            offsets
                .partition_point(|&o| o < total * k / threads)
                .clamp(start, n)
        };
        ranges.push(start..end);
        start = end;
    }
    ranges
}

/// `work` on each of `inputs`, on threads of their own (the first on the
/// caller's), the results in the order of the inputs.
fn in_parallel<I, R>(inputs: impl Iterator<Item = I>, work: impl Fn(I) -> R + Sync) -> Vec<R>
where
    I: Send,
    R: Send,
{
    let mut inputs: Vec<I> = inputs.collect();
    if inputs.len() <= 1 {
        return inputs.into_iter().map(&work).collect();
    }
    let first = inputs.remove(0);
    std::thread::scope(|scope| {
        let work = &work;
        let others: Vec<_> = inputs
            .into_iter()
            .map(|input| scope.spawn(move || work(input)))
            .collect();
        let mut results = vec![work(first)];
        results.extend(
            others
                .into_iter()
                .map(|h| h.join().expect("a validation thread does not panic")),
        );
        results
    })
}

/// What one thread of the structural pass found: the transfers it refused
/// (with their senders, receivers and items when the refusal was a bad time,
/// which still counts towards the final holdings).
struct Refused {
    violations: Vec<Violation>,
    bad_times: Vec<(usize, usize, u64)>,
}

/// The link of each accepted transfer, as the structural pass writes it
/// (one byte per transfer).
const REFUSED: u8 = 0;
const TO_PRED: u8 = 1;
const TO_SUCC: u8 = 2;

/// The structural checks of the transfers from index `base` on, one per entry
/// of `links`, where each accepted transfer's link is written.
fn check_transfers(
    instance: &RingInstance,
    tol: Tolerance,
    transfers: &[Transfer],
    base: usize,
    links: &mut [u8],
) -> Refused {
    let mut refused = Refused {
        violations: Vec::new(),
        bad_times: Vec::new(),
    };
    for (k, link) in links.iter_mut().enumerate() {
        let index = base + k;
        let t = &transfers[index];
        *link = match check_transfer(instance, tol, index, t) {
            Ok((_, _, to_succ)) => {
                if to_succ {
                    TO_SUCC
                } else {
                    TO_PRED
                }
            }
            Err(v) => {
                if matches!(
                    v.rule,
                    ViolationRule::BadTime | ViolationRule::WrongDuration
                ) {
                    refused.bad_times.push((t.from, t.to, t.items));
                }
                refused.violations.push(v);
                REFUSED
            }
        };
    }
    refused
}

/// Buffers reused from one processor to the next.
#[derive(Default)]
struct Scratch {
    received_before: Vec<u128>,
    breakpoints: Vec<f64>,
    candidates: Vec<u64>,
}

/// The accepted transfers of a schedule, as [`Batch`]es made on demand.
struct Accepted<'a> {
    instance: &'a RingInstance,
    transfers: &'a [Transfer],
    links: &'a [u8],
}

impl Accepted<'_> {
    /// The batches of transfers `at`, sorted by start then transfer index, into
    /// `out`.
    fn gather<'b>(&self, at: &[usize], out: &'b mut Vec<Batch>) -> &'b [Batch] {
        out.clear();
        out.extend(at.iter().map(|&i| self.batch(i)));
        // Groups of a schedule sorted by start are sorted already.
        if !out.is_sorted_by(|a, b| batch_order(a, b).is_le()) {
            out.sort_unstable_by(batch_order);
        }
        out
    }

    /// Transfer `i` (accepted) as a batch over the link the structural pass
    /// found: its item cost, and whether it is a message (a start-up).
    fn batch(&self, i: usize) -> Batch {
        let t = &self.transfers[i];
        let to_succ = self.links[i] == TO_SUCC;
        // Accepted over this link: it exists.
        let (cost, startup) = link_of(self.instance, t.from, to_succ).unwrap_or((f64::NAN, 0.0));
        Batch {
            start: t.start,
            end: t.end,
            items: t.items,
            cost,
            period: t.period.unwrap_or(cost),
            index: i,
            message: startup > 0.0,
            to_succ,
        }
    }
}

/// The order of a processor's batches: by start, then transfer index.
fn batch_order(a: &Batch, b: &Batch) -> std::cmp::Ordering {
    a.start.total_cmp(&b.start).then(a.index.cmp(&b.index))
}

/// A processor's receives, in [`batch_order`]: its predecessor's sends to
/// its successor (`from_pred`) merged with its successor's sends to its
/// predecessor (`from_succ`), each in that order (on a ring of two, both are
/// the other processor's sends, over one link each).
fn merge_receives(from_pred: &[Batch], from_succ: &[Batch], out: &mut Vec<Batch>) {
    out.clear();
    let mut a = from_pred.iter().filter(|b| b.to_succ).peekable();
    let mut b = from_succ.iter().filter(|b| !b.to_succ).peekable();
    loop {
        let next = match (a.peek(), b.peek()) {
            (Some(x), Some(y)) if batch_order(x, y).is_le() => a.next(),
            (_, Some(_)) => b.next(),
            (Some(_), None) => a.next(),
            (None, None) => None,
        };
        match next {
            Some(batch) => out.push(*batch),
            None => break,
        }
    }
}

/// What the checks of a range of processors found, processor by processor.
#[derive(Default)]
struct RangeChecked {
    /// Overlapping sends or receives, and final holdings.
    violations: Vec<Violation>,
    /// Items sent before they were held (checked on the processors with no
    /// violation above, when asked).
    availability: Vec<Violation>,
    /// Items sent to the successor, to the predecessor, and received.
    totals: Vec<[u128; 3]>,
    /// Time spent sending and receiving.
    busy: Vec<[f64; 2]>,
}

/// The per-processor checks of processors `range`: one port each way, the
/// final holdings (with `bad`, the items of transfers refused for their times:
/// sent to the successor, to the predecessor, received), and, when
/// `availability`, store and forward.
fn check_processors(
    (tol, accepted): (Tolerance, &Accepted),
    sends: &Groups,
    bad: &[[u128; 3]],
    range: std::ops::Range<usize>,
    availability: bool,
) -> RangeChecked {
    let instance = accepted.instance;
    let n = instance.len();
    let mut checked = RangeChecked::default();
    let mut scratch = Scratch::default();
    // The sends of p - 1, p and p + 1, and the receives of p.
    let (mut before, mut sent, mut after, mut received) =
        (Vec::new(), Vec::new(), Vec::new(), Vec::new());
    // A paced train's port is busy `cost` per item; the gaps between are idle.
    let busy = |batches: &[Batch]| {
        batches
            .iter()
            .map(|b| {
                if b.period == b.cost {
                    b.end - b.start
                } else {
                    b.items as f64 * b.cost
                }
            })
            .sum::<f64>()
    };
    let start = range.start;
    for p in range {
        if p == start {
            accepted.gather(sends.of((p + n - 1) % n), &mut before);
            accepted.gather(sends.of(p), &mut sent);
        } else {
            std::mem::swap(&mut before, &mut sent);
            std::mem::swap(&mut sent, &mut after);
        }
        accepted.gather(sends.of((p + 1) % n), &mut after);
        merge_receives(&before, &after, &mut received);
        let (sent, received) = (&sent[..], &received[..]);
        let [mut to_succ, mut to_pred, mut got] = bad[p];
        for b in sent {
            if b.to_succ {
                to_succ += u128::from(b.items);
            } else {
                to_pred += u128::from(b.items);
            }
        }
        got += received.iter().map(|b| u128::from(b.items)).sum::<u128>();
        let earlier = checked.violations.len();
        let found = &mut checked.violations;
        check_one_port(p, tol, sent, ViolationRule::SendOverlap, "sends", found);
        check_one_port(
            p,
            tol,
            received,
            ViolationRule::ReceiveOverlap,
            "receives",
            found,
        );
        let start = i128::from(instance.loads()[p]);
        let gone = (to_succ + to_pred) as i128;
        let end = start + got as i128 - gone;
        if end != i128::from(instance.targets()[p]) {
            found.push(Violation {
                transfer: None,
                processor: Some(p),
                rule: ViolationRule::FinalHolding,
                message: format!(
                    "processor {p} ({}) ends with {end} items (load {start} + received {got} - sent {gone}) but its target is {}",
                    instance.name(p),
                    instance.targets()[p]
                ),
            });
        }
        if availability && found.len() == earlier {
            let avail = &mut checked.availability;
            check_availability(instance, tol, p, sent, received, &mut scratch, avail);
        }
        checked.totals.push([to_succ, to_pred, got]);
        checked.busy.push([busy(sent), busy(received)]);
    }
    checked
}

/// Checks a schedule against a ring instance.
///
/// Rules (model.md section 1, formats.md): endpoints are processors of the ring and
/// neighbours (the successor only, on a unidirectional ring; never over the link
/// between the last processor and the first on a path); `items >= 1`; times are
/// finite and non-negative; `end = start + startup + items * cost(from -> to)`; per
/// processor, sends never overlap (both directions together) and receives never
/// overlap; every item is held when its sending starts (initial items plus items that
/// arrived at or before that instant, minus items already started); final holdings
/// equal targets. On a link without start-up a transfer is a train: its k-th item
/// leaves at `start + (k-1) cost` and arrives `cost` later; a paced train (with a
/// `period`, at least the cost) sends it at `start + (k-1) period`, and keeps the
/// ports from `start` to `end`. On a link with a start-up
/// (model.md, "Start-ups") it is one message: all its items must be held at `start`
/// and all arrive at `end`. On a 2-processor bidirectional ring the two links join
/// the same pair of processors and a transfer may use either (a train's where both
/// fit).
///
/// The check is exact and event-based: batches are never expanded item by item.
/// Between two consecutive "breakpoints" (first and last arrival of an incoming
/// batch) the number of items held at the successive send instants of a batch is
/// monotone, so checking the sends next to each breakpoint and at both ends of each
/// batch covers every send. Two instants count as one when they differ by less than
/// `1e-9 * max(1, |t|)`, capped at a thousandth of the smallest cost (but at least
/// 16 ulps of `t`): rounding passes, a send early by a fraction of an item does not.
///
/// # Arguments
/// * `instance` - the ring, with its loads, targets and costs;
/// * `schedule` - the transfers, in any order.
///
/// # Returns
/// `Ok` with per-processor totals when every rule holds; `Err` with every violation
/// found (structural ones first: timing is checked only on a well-formed schedule).
///
/// # Complexity
/// O(m log m) time and O(n + m) space for m transfers on n processors, whatever the
/// number of items (O(n + m) time for a schedule sorted by start, as
/// [`Schedule::new`] sorts it). It holds 9 bytes per transfer (each transfer's
/// link, and its place among its sender's), and each processor's transfers one
/// processor at a time. From 200,000 transfers it
/// runs on as many threads as the machine offers, up to 8.
///
/// # Example
/// ```
/// use hetbal::ring::RingInstance;
/// use hetbal::{validate, Schedule, Transfer, ViolationRule};
/// // P0 (3 items) --2.0--> P1 (1 item) --1.0--> P2 (1 item) --1.0--> P0.
/// // P0 must give 2 items to P2, through P1.
/// let ring = RingInstance::unidirectional(&[3, 1, 1], &[1, 1, 3], &[2.0, 1.0, 1.0]).unwrap();
/// let good = Schedule::new(vec![
///     Transfer::new(0, 1, 2, 0.0, 4.0), // arrivals at 2 and 4
///     Transfer::new(1, 2, 1, 0.0, 1.0), // its own item
///     Transfer::new(1, 2, 1, 2.0, 3.0), // forwarded at once
/// ]);
/// assert_eq!(validate(&ring, &good).unwrap().makespan, 4.0);
///
/// // P1 sending both items back to back from 0: at t = 1 it holds nothing.
/// let bad = Schedule::new(vec![
///     Transfer::new(0, 1, 2, 0.0, 4.0),
///     Transfer::new(1, 2, 2, 0.0, 2.0),
/// ]);
/// let errors = validate(&ring, &bad).unwrap_err();
/// assert!(errors.iter().any(|v| v.rule == ViolationRule::NotHeld));
///
/// // With a start-up of 0.5 on P1's link, a transfer from P1 is one message: P1 may
/// // send its own item at once, but forwarding both items together must wait until
/// // it holds both (the first arrives from P0 at 2).
/// let latent = ring.with_startups(&[0.0, 0.5, 0.0], &[0.0; 3]).unwrap();
/// let early = Schedule::new(vec![
///     Transfer::new(0, 1, 2, 0.0, 4.0),
///     Transfer::new(1, 2, 2, 1.0, 3.5),
/// ]);
/// let errors = validate(&latent, &early).unwrap_err();
/// assert_eq!(errors[0].rule, ViolationRule::MessageNotHeld);
/// let on_time = Schedule::new(vec![
///     Transfer::new(0, 1, 2, 0.0, 4.0),
///     Transfer::new(1, 2, 2, 2.0, 4.5),
/// ]);
/// assert_eq!(validate(&latent, &on_time).unwrap().makespan, 4.5);
/// ```
pub fn validate(
    instance: &RingInstance,
    schedule: &Schedule,
) -> Result<ScheduleReport, Vec<Violation>> {
    let threads = if schedule.transfers.len() < PARALLEL_TRANSFERS {
        1
    } else {
        std::thread::available_parallelism().map_or(1, |t| t.get().min(8))
    };
    validate_on(instance, schedule, threads)
}

/// [`validate`] on `threads` threads (the same answer on any number).
fn validate_on(
    instance: &RingInstance,
    schedule: &Schedule,
    threads: usize,
) -> Result<ScheduleReport, Vec<Violation>> {
    let n = instance.len();
    let tol = Tolerance::new(instance);
    let transfers = &schedule.transfers[..];
    // The structural checks, each thread a range of transfers: each accepted
    // transfer's link.
    let mut links = vec![REFUSED; transfers.len()];
    let chunk = transfers.len().div_ceil(threads.max(1)).max(1);
    let refused: Vec<Refused> = in_parallel(links.chunks_mut(chunk).enumerate(), |(k, part)| {
        check_transfers(instance, tol, transfers, k * chunk, part)
    });
    // Items moved by transfers with bad times, which are not checked further: they
    // still count towards the final holdings, so that one bad time does not also
    // read as lost items.
    let mut bad = vec![[0u128; 3]; n];
    let mut violations = Vec::new();
    for part in refused {
        for &(from, to, items) in &part.bad_times {
            let side = if to == instance.succ(from) { 0 } else { 1 };
            bad[from][side] += u128::from(items);
            bad[to][2] += u128::from(items);
        }
        // In transfer order, as one pass would find them.
        violations.extend(part.violations);
    }
    let accepted = Accepted {
        instance,
        transfers,
        links: &links,
    };
    let sends = Groups::by_sender(n, transfers, &links);
    // Each thread checks a range of processors; store and forward only when
    // every transfer is well formed (it is checked only on a well-formed
    // schedule whose ports and holdings hold).
    let availability = violations.is_empty();
    let checked: Vec<RangeChecked> = in_parallel(
        processor_ranges(&sends.offsets, threads).into_iter(),
        |range| check_processors((tol, &accepted), &sends, &bad, range, availability),
    );
    violations.extend(checked.iter().flat_map(|c| c.violations.iter().cloned()));
    if violations.is_empty() {
        violations.extend(checked.iter().flat_map(|c| c.availability.iter().cloned()));
    }
    if !violations.is_empty() {
        return Err(violations);
    }
    let totals: Vec<[u128; 3]> = checked
        .iter()
        .flat_map(|c| c.totals.iter().copied())
        .collect();
    let busy: Vec<[f64; 2]> = checked
        .iter()
        .flat_map(|c| c.busy.iter().copied())
        .collect();
    // Every count is at most the total number of items moved through one link, which
    // the final-holdings check bounds by u64 sums; saturate rather than wrap anyway.
    let count = |side: usize| {
        totals
            .iter()
            .map(|t| u64::try_from(t[side]).unwrap_or(u64::MAX))
            .collect()
    };
    Ok(ScheduleReport {
        makespan: schedule.makespan(),
        sent_to_succ: count(0),
        sent_to_pred: count(1),
        received: count(2),
        send_busy: busy.iter().map(|b| b[0]).collect(),
        receive_busy: busy.iter().map(|b| b[1]).collect(),
    })
}

/// The link a transfer takes: its cost per item, its start-up, and whether it
/// goes to the sender's successor.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct TransferLink {
    /// Time per item on the link.
    pub cost: f64,
    /// Start-up per message on the link (0 on links without).
    pub startup: f64,
    /// True for the link to the successor, false for the one to the
    /// predecessor.
    pub to_succ: bool,
}

/// The link a transfer of `instance` takes, as [`validate`] reads it: the
/// neighbour's link, and on a 2-processor bidirectional ring (where both links
/// join the pair) the one whose cost and start-up give the transfer's duration
/// (a paced train's: its period times its items but one, plus one item's cost),
/// the one without start-up when both do; for a duration no link gives (a
/// schedule [`validate`] refuses), the link whose duration is nearest. The one
/// answer to "which link does this transfer use" for everything that replays
/// or runs a plan (the MPI runtime, the SimGrid replay). `None` for a transfer
/// between processors that are not neighbours.
///
/// Complexity: O(1).
///
/// # Example
/// ```
/// use hetbal::ring::{transfer_link, RingInstance, Transfer};
/// // Two processors: 2 items from P0 to P1 take 2 at 1.0 per item (the
/// // successor's link) or 6 at 3.0 (the predecessor's).
/// let ring = RingInstance::bidirectional(&[3, 1], &[1, 3], &[1.0, 1.0], &[3.0, 3.0]).unwrap();
/// let t = |end| Transfer { from: 0, to: 1, items: 2, start: 0.0, end, period: None };
/// assert!(transfer_link(&ring, &t(2.0)).unwrap().to_succ);
/// assert!(!transfer_link(&ring, &t(6.0)).unwrap().to_succ);
/// // 5 fits neither: the predecessor's 6 is the nearest.
/// assert!(!transfer_link(&ring, &t(5.0)).unwrap().to_succ);
/// ```
pub fn transfer_link(instance: &RingInstance, t: &Transfer) -> Option<TransferLink> {
    let link = |(cost, startup, to_succ): (f64, f64, bool)| TransferLink {
        cost,
        startup,
        to_succ,
    };
    let options = link_options(instance, t);
    if let Ok((cost, _, to_succ)) = check_transfer(instance, Tolerance::new(instance), 0, t) {
        let startup = options
            .iter()
            .flatten()
            .find(|o| o.2 == to_succ)
            .map_or(0.0, |o| o.1);
        return Some(link((cost, startup, to_succ)));
    }
    // The nearest duration (a paced train: its last item's, the period apart).
    let off = |&(cost, startup, _): &(f64, f64, bool)| {
        let expected = match t.period {
            Some(p) => (t.items.saturating_sub(1)) as f64 * p + cost,
            None => startup + t.items as f64 * cost,
        };
        (t.end - t.start - expected).abs()
    };
    options
        .into_iter()
        .flatten()
        .min_by(|a, b| off(a).total_cmp(&off(b)))
        .map(link)
}

/// The (cost, start-up, to successor) a transfer between neighbours `t.from`
/// and `t.to` may be charged (two on a 2-ring), a train's first: where both
/// fit, the more permissive reading. Both `None` when they are not neighbours.
/// The item cost and start-up of processor `from`'s link to its successor
/// (`to_succ`) or its predecessor (`None`: no such link).
fn link_of(instance: &RingInstance, from: usize, to_succ: bool) -> Option<(f64, f64)> {
    if to_succ {
        Some((instance.c_succ()[from], instance.l_succ()[from]))
    } else {
        instance.c_pred()[from].map(|c| (c, instance.l_pred()[from]))
    }
}

fn link_options(instance: &RingInstance, t: &Transfer) -> [Option<(f64, f64, bool)>; 2] {
    let n = instance.len();
    let mut options: [Option<(f64, f64, bool)>; 2] = [None, None];
    if t.from >= n || t.to >= n {
        return options;
    }
    // On a path the link between the last processor and the first is missing.
    if t.to == (t.from + 1) % n && !instance.is_missing_link(t.from, true) {
        options[0] = link_of(instance, t.from, true).map(|(c, l)| (c, l, true));
    }
    if instance.kind() == RingKind::Bidirectional
        && t.to == (t.from + n - 1) % n
        && !instance.is_missing_link(t.from, false)
    {
        options[1] = link_of(instance, t.from, false).map(|(c, l)| (c, l, false));
    }
    if options[1].is_some_and(|o| o.1 == 0.0) {
        options.swap(0, 1);
    }
    options
}

/// Structural checks of one transfer. Returns its item cost, whether it is a message
/// (its link has a start-up) and whether it goes to the successor.
fn check_transfer(
    instance: &RingInstance,
    tol: Tolerance,
    index: usize,
    t: &Transfer,
) -> Result<(f64, bool, bool), Violation> {
    let n = instance.len();
    let violation = |rule, processor, message| Violation {
        transfer: Some(index),
        processor,
        rule,
        message,
    };
    if t.from >= n || t.to >= n {
        return Err(violation(
            ViolationRule::UnknownProcessor,
            None,
            format!(
                "{} -> {}: the ring has processors 0 to {}",
                t.from,
                t.to,
                n - 1
            ),
        ));
    }
    if t.items == 0 {
        return Err(violation(
            ViolationRule::NoItems,
            Some(t.from),
            format!("{} -> {} sends 0 items", t.from, t.to),
        ));
    }
    if !(t.start.is_finite() && t.end.is_finite() && t.start >= 0.0) {
        return Err(violation(
            ViolationRule::BadTime,
            Some(t.from),
            format!(
                "{} -> {} has start {} and end {}",
                t.from, t.to, t.start, t.end
            ),
        ));
    }
    let succ = (t.from + 1) % n;
    let pred = (t.from + n - 1) % n;
    let bidirectional = instance.kind() == RingKind::Bidirectional;
    let options = link_options(instance, t);
    if options == [None, None] {
        let path = instance.is_path();
        let allowed = match (bidirectional, path && t.from == n - 1, path && t.from == 0) {
            (_, true, _) if bidirectional || n == 2 => {
                format!(
                    "{pred} (the instance is a path: no link from the last processor to the first)"
                )
            }
            (_, true, _) => {
                "no one (the instance is a unidirectional path and it is the last processor)"
                    .to_string()
            }
            (true, _, true) => format!(
                "{succ} (the instance is a path: no link from the first processor to the last)"
            ),
            (true, _, _) => format!("{succ} or {pred}"),
            (false, _, _) => format!("{succ} (its successor: the ring is unidirectional)"),
        };
        return Err(violation(
            ViolationRule::NotNeighbour,
            Some(t.from),
            format!(
                "processor {} ({}) sends to {}, but may only send to {allowed}",
                t.from,
                instance.name(t.from),
                t.to
            ),
        ));
    }
    if t.period.is_some() {
        return check_paced(tol, t, &options)
            .map_err(|message| violation(ViolationRule::WrongDuration, Some(t.from), message));
    }
    for &(cost, startup, to_succ) in options.iter().flatten() {
        let expected = t.start + startup + t.items as f64 * cost;
        if (t.end - expected).abs() <= tol.at(expected) {
            return Ok((cost, startup > 0.0, to_succ));
        }
    }
    let (cost, startup, _) =
        options
            .iter()
            .flatten()
            .next()
            .copied()
            .unwrap_or((f64::NAN, 0.0, true));
    let after = if startup > 0.0 {
        format!(" after a start-up of {startup}")
    } else {
        String::new()
    };
    Err(violation(
        ViolationRule::WrongDuration,
        Some(t.from),
        format!(
            "{} -> {}: {} items at {cost} per item{after} from {} must end at {}, not {}",
            t.from,
            t.to,
            t.items,
            t.start,
            t.start + startup + t.items as f64 * cost,
            t.end
        ),
    ))
}

/// The duration of a paced train: a period that is a number at least the item
/// cost, on a link without start-up, and `end = start + (items-1) * period + cost`.
/// Returns what [`check_transfer`] returns, or what is wrong.
fn check_paced(
    tol: Tolerance,
    t: &Transfer,
    options: &[Option<(f64, f64, bool)>; 2],
) -> Result<(f64, bool, bool), String> {
    let period = t.period.unwrap_or(f64::NAN);
    let mut why = String::new();
    for &(cost, startup, to_succ) in options.iter().flatten() {
        why = if startup > 0.0 {
            format!(
                "{} -> {}: a paced train (period {period}) over a link with a start-up of {startup}: such a link carries messages, which have no period",
                t.from, t.to
            )
        } else if !(period.is_finite() && period >= cost - tol.at(cost)) {
            format!(
                "{} -> {}: period {period} of a paced train must be a number at least the item cost {cost}",
                t.from, t.to
            )
        } else {
            let expected = t.start + (t.items - 1) as f64 * period + cost;
            if (t.end - expected).abs() <= tol.at(expected) {
                return Ok((cost, false, to_succ));
            }
            format!(
                "{} -> {}: {} items at {cost} per item, one every {period} from {} must end at {expected}, not {}",
                t.from, t.to, t.items, t.start, t.end
            )
        };
    }
    Err(why)
}

fn check_one_port(
    p: usize,
    tol: Tolerance,
    batches: &[Batch],
    rule: ViolationRule,
    what: &str,
    violations: &mut Vec<Violation>,
) {
    for pair in batches.windows(2) {
        let (a, b) = (pair[0], pair[1]);
        if b.start < a.end - tol.at(a.end) {
            violations.push(Violation {
                transfer: Some(b.index),
                processor: Some(p),
                rule,
                message: format!(
                    "processor {p} {what} during [{}, {}) and during [{}, {}) (transfer {}): one at a time",
                    b.start, b.end, a.start, a.end, a.index
                ),
            });
        }
    }
}

/// `floor(x)` as a count: 0 for negative or NaN `x`, saturated at `u64::MAX`.
/// The cast alone does it (it truncates towards zero and saturates, which agrees
/// with `floor` wherever the result is not negative) without the call to libm's
/// `floor` that the default x86-64 target makes.
fn whole_steps(x: f64) -> u64 {
    x as u64
}

/// Store and forward: at the start of each send, the processor holds an item; at the
/// start of a message, all the items it carries.
///
/// `receives` are sorted and pairwise disjoint, so at any instant at most one incoming
/// train is "active" (between its first and last arrival); an incoming message
/// delivers all its items at its end. Within a sent train of period `P` (its cost
/// when back to back) the sends at `s + k*P` see `held(k) = load + A(s + k*P) -
/// (before + k)`, where `A` counts arrivals. Between two breakpoints of `A` (first
/// or last arrival of some incoming batch, of period `d`) `held` is monotone in `k`:
/// non-increasing when no batch is active or when `P <= d` (at most one arrival per
/// send), non-decreasing when `P > d` (at least one arrival per send). Its minimum is at a piece's end, next to a breakpoint.
/// A sent message is checked once, at its start.
///
/// Complexity: O(r log r) for the processor's r receives, then per send a binary
/// search among the receives and among the breakpoints, and its candidate
/// instants (four per breakpoint within the send), checked in ascending order
/// with a pointer into the receives that only moves forward: O((r + s) log r +
/// candidates) for s sends.
fn check_availability(
    instance: &RingInstance,
    tol: Tolerance,
    p: usize,
    sends: &[Batch],
    receives: &[Batch],
    scratch: &mut Scratch,
    violations: &mut Vec<Violation>,
) {
    if sends.is_empty() {
        return;
    }
    let Scratch {
        received_before,
        breakpoints,
        candidates,
    } = scratch;
    // Prefix sums of received items, over receives sorted by start.
    received_before.clear();
    let mut acc = 0u128;
    received_before.push(0u128);
    for r in receives {
        acc += u128::from(r.items);
        received_before.push(acc);
    }
    // An instant moved later by the tolerance: the receives that started by then
    // may have delivered items at the instant.
    let reach = |t: f64| t + tol.at(t);
    // Number of items arrived by `reached` (a `reach`), from the first `begun`
    // receives: those that started by then (only they can have delivered items).
    let arrived_by = |reached: f64, begun: usize| -> u128 {
        if begun == 0 {
            return 0;
        }
        let t = reached;
        let last = receives[begun - 1];
        let in_last = if last.message {
            if t >= last.end {
                u128::from(last.items)
            } else {
                0
            }
        } else if last.period == last.cost {
            u128::from(whole_steps((t - last.start) / last.cost).min(last.items))
        } else if t < last.start + last.cost {
            0
        } else {
            let after_first = whole_steps((t - last.start - last.cost) / last.period);
            u128::from(after_first.saturating_add(1).min(last.items))
        };
        received_before[begun - 1] + in_last
    };
    // The receives that started by `reached`: a binary search.
    let begun_by = |reached: f64| receives.partition_point(|r| r.start <= reached);
    // Breakpoints: first and last arrival of each incoming batch, sorted.
    breakpoints.clear();
    breakpoints.extend(receives.iter().flat_map(|r| [r.first_arrival(), r.end]));
    breakpoints.sort_unstable_by(f64::total_cmp);

    let load = u128::from(instance.loads()[p]);
    let mut started = 0u128;
    let direction = |s: &Batch| {
        if s.to_succ {
            "successor"
        } else {
            "predecessor"
        }
    };
    for s in sends {
        let reached = reach(s.start);
        let mut begun = begun_by(reached);
        let held_at_start = load + arrived_by(reached, begun);
        if s.message {
            let held = held_at_start;
            let needed = started + u128::from(s.items);
            if held < needed {
                violations.push(Violation {
                    transfer: Some(s.index),
                    processor: Some(p),
                    rule: ViolationRule::MessageNotHeld,
                    message: format!(
                        "processor {p} ({}) starts a message of {} items to its {} at {}, but holds only {} then (load {load} + arrived {} - already sent {started}): over a link with a start-up every item of a transfer must be held when it starts",
                        instance.name(p),
                        s.items,
                        direction(s),
                        s.start,
                        held.saturating_sub(started),
                        held - load,
                    ),
                });
            }
            started += u128::from(s.items);
            continue;
        }
        let last_k = s.items - 1;
        // Quick acceptance: arrivals never decrease, so when the items held at the
        // start already cover the whole train, every send of it holds an item.
        if held_at_start > started + u128::from(last_k) {
            started += u128::from(s.items);
            continue;
        }
        candidates.clear();
        candidates.extend([0, last_k]);
        let window_end = s.start + last_k as f64 * s.period;
        let lo = breakpoints.partition_point(|&b| b < s.start - tol.at(s.start));
        let hi = breakpoints.partition_point(|&b| b <= window_end + tol.at(window_end));
        for &b in &breakpoints[lo..hi] {
            let k = whole_steps((b - s.start) / s.period).min(last_k);
            for dk in [
                k.saturating_sub(1),
                k,
                k.saturating_add(1),
                k.saturating_add(2),
            ] {
                candidates.push(dk.min(last_k));
            }
        }
        candidates.sort_unstable();
        candidates.dedup();
        // The candidates ascend, and so do their instants and the receives begun
        // by them: from the first candidate's (k = 0, at the send's start), one
        // pointer moves forward instead of a binary search per candidate.
        for &k in candidates.iter() {
            let t = s.start + k as f64 * s.period;
            let reached = reach(t);
            while begun < receives.len() && receives[begun].start <= reached {
                begun += 1;
            }
            let held = load + arrived_by(reached, begun);
            let used = started + u128::from(k);
            if held <= used {
                let to = direction(s);
                violations.push(Violation {
                    transfer: Some(s.index),
                    processor: Some(p),
                    rule: ViolationRule::NotHeld,
                    message: format!(
                        "processor {p} ({}) starts sending item {} of this batch to its {to} at {t}, but holds no item then (load {load} + arrived {} - already sent {used})",
                        instance.name(p),
                        k + 1,
                        held - load,
                    ),
                });
                break;
            }
        }
        started += u128::from(s.items);
    }
}

#[cfg(test)]
mod tests {
    use super::{validate_on, whole_steps};
    use crate::random::SplitMix64;
    use crate::ring::{plan, RingInstance, Schedule};

    /// On 1, 2, 3 and 5 threads the validator gives the same answer, valid plans
    /// and plans broken in many places alike (the violations in the same order).
    #[test]
    fn any_number_of_threads_gives_the_same_answer() {
        let mut rng = SplitMix64::new(8);
        let n = 300;
        let loads: Vec<u64> = (0..n).map(|_| 1 + rng.next_u64() % 40).collect();
        let mut targets = loads.clone();
        targets.rotate_left(7);
        let c: Vec<f64> = (0..n)
            .map(|_| 0.5 + (rng.next_u64() % 4) as f64 * 0.25)
            .collect();
        for ring in [
            RingInstance::unidirectional(&loads, &targets, &c).unwrap(),
            RingInstance::bidirectional(&loads, &targets, &c, &c).unwrap(),
        ] {
            let good = plan(&ring, None).unwrap().schedule();
            let mut bad = good.clone();
            for (k, t) in bad.transfers.iter_mut().enumerate() {
                match k % 7 {
                    0 => t.start += 0.125,                      // too early or overlapping
                    3 => t.end += 1.0,                          // wrong duration
                    5 if k % 2 == 0 => t.to = (t.from + 2) % n, // not a neighbour
                    _ => {}
                }
            }
            bad.transfers
                .push(crate::ring::Transfer::new(n + 3, 0, 1, 0.0, 1.0));
            // Senders from outside the ring only: every range but the last is
            // empty, and each refusal must come once.
            let strangers = Schedule::new(
                (0..50)
                    .map(|k| crate::ring::Transfer::new(n + k, 0, 1, 0.0, 1.0))
                    .collect(),
            );
            let refused = validate_on(&ring, &strangers, 3).unwrap_err();
            let unknown = refused
                .iter()
                .filter(|v| v.rule == super::ViolationRule::UnknownProcessor)
                .count();
            assert_eq!(unknown, 50);
            for schedule in [&good, &bad, &Schedule::new(Vec::new()), &strangers] {
                let one = validate_on(&ring, schedule, 1);
                for threads in [2, 3, 5] {
                    assert_eq!(
                        validate_on(&ring, schedule, threads),
                        one,
                        "{threads} threads"
                    );
                }
            }
            assert!(validate_on(&ring, &good, 3).is_ok());
            assert!(validate_on(&ring, &bad, 3).unwrap_err().len() > 100);
        }
    }

    /// `whole_steps` is `floor` cast to a count, edge values included.
    #[test]
    fn whole_steps_is_floor_as_a_count() {
        for x in [
            -1e30,
            -2.0,
            -1.0,
            -0.5,
            -0.0,
            0.0,
            1e-300,
            0.999_999,
            1.0,
            1.5,
            2.0,
            3.999,
            4.0,
            1e15 + 0.5,
            1e30,
            f64::INFINITY,
            f64::NEG_INFINITY,
            f64::NAN,
        ] {
            assert_eq!(whole_steps(x), x.floor() as u64, "{x}");
        }
    }
}
