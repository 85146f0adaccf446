//! Moving whole items of different sizes from one partition to another along the
//! chain of processors: the schedule, its lower bound and its validator.
//!
//! The model is the ring papers' one-port model on a chain (model.md, section
//! 1), with items of different sizes: a processor sends at most one item at a
//! time and receives at most one at a time (it may do both at once); item `i`
//! takes `sizes[i] * c` seconds over a link of cost `c` seconds per byte
//! (`c_succ[j]` from processor `j` to `j + 1`, `c_pred[j]` from `j` to `j - 1`);
//! an item is held by the receiver once wholly received (store and forward) and
//! is never split. Items move along the chain, never around the wrap-around
//! link: under cuts, processor `j` ends with items `new[j]..new[j+1]`, so an
//! item travels from its current owner to its new one through the processors
//! between them.

use super::error::check_cuts;
use super::prefix::size_sums;
use super::PartitionError;
use serde::{Deserialize, Serialize};
use std::cmp::Ordering;
use std::collections::{BinaryHeap, VecDeque};
use std::fmt;

/// A train of whole items sent back to back over one link: items `first`,
/// `first ± 1`, ..., `last` (descending when `last < first`), each starting as
/// the previous one ends.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ItemMove {
    /// The sender.
    pub from: usize,
    /// The receiver: `from + 1` or `from - 1`.
    pub to: usize,
    /// The first item sent (a global item index).
    pub first: u64,
    /// The last item sent (inclusive).
    pub last: u64,
    /// When the first item starts, in seconds.
    pub start: f64,
    /// When the last item has arrived.
    pub end: f64,
}

impl ItemMove {
    /// The items of the train, in the order they are sent.
    pub fn items(&self) -> Box<dyn Iterator<Item = u64>> {
        if self.last >= self.first {
            Box::new(self.first..=self.last)
        } else {
            Box::new((self.last..=self.first).rev())
        }
    }
}

/// The timed moves of whole items from the current cuts to new ones.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct MovePlan {
    /// The trains, sorted by start time.
    pub moves: Vec<ItemMove>,
    /// When the last item arrives (0 when nothing moves).
    pub makespan: f64,
    /// No schedule of these moves can end before this (see [`move_schedule`]).
    pub lower_bound: f64,
    /// `makespan <= lower_bound`: proven optimal.
    pub optimal: bool,
    /// Bytes that change owner.
    pub moved_bytes: u64,
    /// Items that change owner.
    pub moved_items: u64,
}

/// Why a schedule of item moves is not valid.
#[derive(Clone, Debug, PartialEq)]
pub struct MoveViolation {
    /// The index of the offending train in the schedule given (None for a rule
    /// about the whole schedule).
    pub train: Option<usize>,
    /// What is wrong, in words.
    pub reason: String,
}

impl fmt::Display for MoveViolation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.train {
            Some(t) => write!(f, "move {t}: {}", self.reason),
            None => f.write_str(&self.reason),
        }
    }
}

impl std::error::Error for MoveViolation {}

/// The instance of a move, checked: item owners before and after, byte prefix
/// sums and link costs.
struct Chain<'a> {
    current: &'a [u64],
    new: &'a [u64],
    bytes: Vec<u64>,
    c_succ: &'a [f64],
    c_pred: &'a [f64],
}

impl<'a> Chain<'a> {
    fn new(
        current: &'a [u64],
        new: &'a [u64],
        sizes: Option<&[u64]>,
        c_succ: &'a [f64],
        c_pred: &'a [f64],
    ) -> Result<Self, PartitionError> {
        if current.len() < 2 {
            return Err(PartitionError::NoProcessors);
        }
        let p = current.len() - 1;
        let n = current[p];
        check_cuts("current", current, p, n)?;
        check_cuts("new", new, p, n)?;
        for (argument, costs) in [("c_succ", c_succ), ("c_pred", c_pred)] {
            if costs.len() != p {
                return Err(PartitionError::Length {
                    argument,
                    expected: p,
                    got: costs.len(),
                });
            }
            if let Some(index) = costs.iter().position(|c| !(c.is_finite() && *c >= 0.0)) {
                return Err(PartitionError::InvalidCost {
                    argument,
                    index,
                    value: costs[index],
                });
            }
        }
        let items = usize::try_from(n).map_err(|_| PartitionError::Limit {
            what: format!("{n} items do not fit in this machine's memory"),
        })?;
        let bytes = size_sums(sizes, items)?;
        Ok(Chain {
            current,
            new,
            bytes,
            c_succ,
            c_pred,
        })
    }
    fn size(&self, item: u64) -> u64 {
        self.bytes[item as usize + 1] - self.bytes[item as usize]
    }
    fn cost(&self, from: usize, to: usize) -> f64 {
        if to == from + 1 {
            self.c_succ[from]
        } else {
            self.c_pred[from]
        }
    }
    /// The owner of `item` under `cuts` (binary search).
    fn owner(cuts: &[u64], item: u64) -> usize {
        cuts.partition_point(|&c| c <= item) - 1
    }
    /// Each processor's send and receive bytes weighted by link cost, and the
    /// longest item path: the three parts of the lower bound.
    fn lower_bound(&self) -> f64 {
        let p = self.current.len() - 1;
        let mut send = vec![0.0f64; p];
        let mut receive = vec![0.0f64; p];
        let mut path = 0.0f64;
        // Boundary j (between processors j - 1 and j) is crossed by the items
        // between current[j] and new[j].
        for j in 1..p {
            let (c, x) = (self.current[j] as usize, self.new[j] as usize);
            if c == x {
                continue;
            }
            let b = (self.bytes[c.max(x)] - self.bytes[c.min(x)]) as f64;
            if x > c {
                // Leftwards: from j to j - 1.
                send[j] += b * self.c_pred[j];
                receive[j - 1] += b * self.c_pred[j];
            } else {
                send[j - 1] += b * self.c_succ[j - 1];
                receive[j] += b * self.c_succ[j - 1];
            }
        }
        // The longest single path: one pass per direction keeps it O(n + p)
        // only for short paths, so it is taken over the items' hops directly.
        let n = self.current[p];
        for item in 0..n {
            let (o, d) = (Self::owner(self.current, item), Self::owner(self.new, item));
            if o == d {
                continue;
            }
            let z = self.size(item) as f64;
            let t: f64 = if d > o {
                (o..d).map(|k| z * self.c_succ[k]).sum()
            } else {
                (d + 1..=o).map(|k| z * self.c_pred[k]).sum()
            };
            path = path.max(t);
        }
        send.iter().chain(&receive).copied().fold(path, f64::max)
    }
}

/// A candidate send: processor `from` towards `to`, at the earliest `start`.
#[derive(PartialEq)]
struct Candidate {
    start: f64,
    from: usize,
    to: usize,
}
impl Eq for Candidate {}
impl Ord for Candidate {
    fn cmp(&self, other: &Self) -> Ordering {
        // Earliest first (a max-heap, reversed), then by sender and receiver.
        other
            .start
            .total_cmp(&self.start)
            .then(other.from.cmp(&self.from))
            .then(other.to.cmp(&self.to))
    }
}
impl PartialOrd for Candidate {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

/// The moves of whole items of different sizes from the `current` cuts to the
/// `new` ones along the chain of processors, as a list schedule, with a lower
/// bound.
///
/// Every processor keeps two queues, the items it must pass to the left (in
/// increasing index: the first ones go furthest) and to the right (in
/// decreasing index); its own items are at the front, forwarded items join the
/// back as they arrive. Whenever a processor's send port, its neighbour's
/// receive port and the head item are all free, the send that can start
/// earliest is made. Consecutive items over the same link back to back become
/// one train ([`ItemMove`]).
///
/// The lower bound is the largest of: any processor's total sending time and
/// total receiving time (one port each way), and any one item's path (the sum
/// of its hops). The schedule meets it (`optimal`) whenever one boundary or
/// one item dominates, as in a shift between neighbours; where items both
/// trickle through forwarders and compete for ports it can be above it. The
/// ring planners ([`ring::plan`](crate::ring::plan)) are optimal for items of
/// one size (bytes as items, possibly split across messages); with whole items
/// of different sizes no planner here is proven optimal.
///
/// # Arguments
/// * `current`, `new` - cuts (`p + 1` entries from 0 to n, non-decreasing);
/// * `sizes` - bytes per item (`None`: 1 each);
/// * `c_succ`, `c_pred` - seconds per byte from each processor to its next and
///   previous one (`p` entries each; `c_succ[p-1]` and `c_pred[0]` are unused:
///   the chain does not wrap).
///
/// # Errors
/// [`PartitionError`] for bad cuts, sizes or costs.
///
/// # Complexity
/// O(n + H log p) time and O(n + p + H) memory, H the number of item hops
/// (items times the processors each passes).
///
/// # Example
/// ```
/// use hetbal::partition::{move_schedule, validate_moves};
///
/// // Items of 1, 2 and 3 bytes; P1's two items move to P0.
/// let sizes = [1, 2, 3];
/// let plan = move_schedule(&[0, 1, 3], &[0, 3, 3], Some(&sizes), &[1.0; 2], &[1.0; 2]).unwrap();
/// assert_eq!((plan.makespan, plan.lower_bound, plan.optimal), (5.0, 5.0, true));
/// assert_eq!(plan.moved_bytes, 5);
/// validate_moves(&[0, 1, 3], &[0, 3, 3], Some(&sizes), &[1.0; 2], &[1.0; 2], &plan.moves).unwrap();
/// ```
pub fn move_schedule(
    current: &[u64],
    new: &[u64],
    sizes: Option<&[u64]>,
    c_succ: &[f64],
    c_pred: &[f64],
) -> Result<MovePlan, PartitionError> {
    let chain = Chain::new(current, new, sizes, c_succ, c_pred)?;
    let p = current.len() - 1;
    let n = current[p];
    // queues[2j]: to the left of j; queues[2j + 1]: to the right. Entries
    // (item, time it is held).
    let mut queues: Vec<VecDeque<(u64, f64)>> = vec![VecDeque::new(); 2 * p];
    let mut moved_items = 0u64;
    let mut moved_bytes = 0u64;
    for j in 0..p {
        let (c0, c1) = (current[j], current[j + 1]);
        // Leftwards: own items below new[j], increasing.
        for item in c0..c1.min(new[j]) {
            queues[2 * j].push_back((item, 0.0));
        }
        // Rightwards: own items at or above new[j+1], decreasing.
        for item in (c0.max(new[j + 1])..c1).rev() {
            queues[2 * j + 1].push_back((item, 0.0));
        }
    }
    for item in 0..n {
        if Chain::owner(current, item) != Chain::owner(new, item) {
            moved_items += 1;
            moved_bytes += chain.size(item);
        }
    }
    let mut send_free = vec![0.0f64; p];
    let mut receive_free = vec![0.0f64; p];
    let earliest = |queues: &[VecDeque<(u64, f64)>], s: &[f64], r: &[f64], j: usize, to: usize| {
        let q = &queues[2 * j + usize::from(to > j)];
        q.front().map(|&(_, held)| held.max(s[j]).max(r[to]))
    };
    let mut heap = BinaryHeap::new();
    for j in 0..p {
        for to in [j.wrapping_sub(1), j + 1] {
            if to < p {
                if let Some(start) = earliest(&queues, &send_free, &receive_free, j, to) {
                    heap.push(Candidate { start, from: j, to });
                }
            }
        }
    }
    let mut moves: Vec<ItemMove> = Vec::new();
    // The last train of each link direction, to extend back to back.
    let mut last_train: Vec<Option<usize>> = vec![None; 2 * p];
    // The last train on each processor's send and receive port: a train grows
    // only while no other move used either port since.
    let mut last_send = vec![usize::MAX; p];
    let mut last_receive = vec![usize::MAX; p];
    while let Some(Candidate { start, from, to }) = heap.pop() {
        let Some(now) = earliest(&queues, &send_free, &receive_free, from, to) else {
            continue;
        };
        if now > start {
            heap.push(Candidate {
                start: now,
                from,
                to,
            });
            continue;
        }
        let q = 2 * from + usize::from(to > from);
        let (item, _) = queues[q].pop_front().expect("a candidate has an item");
        let end = now + chain.size(item) as f64 * chain.cost(from, to);
        send_free[from] = end;
        receive_free[to] = end;
        // A train grows by the next item in its direction, sent as it ends.
        let step_ok = |m: &ItemMove| {
            m.end == now
                && item.abs_diff(m.last) == 1
                && (m.first == m.last || (m.last > m.first) == (item > m.last))
        };
        match last_train[q] {
            Some(t) if step_ok(&moves[t]) && last_send[from] == t && last_receive[to] == t => {
                moves[t].last = item;
                moves[t].end = end;
            }
            _ => {
                last_train[q] = Some(moves.len());
                last_send[from] = moves.len();
                last_receive[to] = moves.len();
                moves.push(ItemMove {
                    from,
                    to,
                    first: item,
                    last: item,
                    start: now,
                    end,
                });
            }
        }
        // Forward it unless it has arrived.
        let destination = Chain::owner(new, item);
        if destination != to {
            let q_next = 2 * to + usize::from(destination > to);
            queues[q_next].push_back((item, end));
            let next = if destination > to { to + 1 } else { to - 1 };
            if let Some(s) = earliest(&queues, &send_free, &receive_free, to, next) {
                heap.push(Candidate {
                    start: s,
                    from: to,
                    to: next,
                });
            }
        }
        // The ports changed: the sender's both directions and the receiver's
        // neighbours may start later or now.
        for (j, k) in [(from, to), (from, from.wrapping_sub(1)), (from, from + 1)]
            .into_iter()
            .chain([(to.wrapping_sub(1), to), (to + 1, to)])
        {
            if j < p && k < p && j != k {
                if let Some(s) = earliest(&queues, &send_free, &receive_free, j, k) {
                    heap.push(Candidate {
                        start: s,
                        from: j,
                        to: k,
                    });
                }
            }
        }
    }
    debug_assert!(queues.iter().all(VecDeque::is_empty), "every item was sent");
    moves.sort_by(|a, b| a.start.total_cmp(&b.start).then(a.from.cmp(&b.from)));
    let makespan = moves.iter().map(|m| m.end).fold(0.0, f64::max);
    let lower_bound = chain.lower_bound();
    if !makespan.is_finite() {
        return Err(PartitionError::TimeOverflow {
            what: "the makespan of the moves".to_string(),
        });
    }
    Ok(MovePlan {
        // Up to rounding: the bound and the makespan add the same products
        // in different orders.
        optimal: makespan <= lower_bound * (1.0 + 1e-12),
        moves,
        makespan,
        lower_bound,
        moved_bytes,
        moved_items,
    })
}

/// Checks a schedule of item moves (the one validator of this model): every
/// train goes between neighbours and lasts its bytes times the link's cost;
/// every item that changes owner travels from its current owner to its new one
/// hop by hop, each hop starting once the item is wholly held; no processor
/// sends two items at once or receives two at once; nothing else moves.
/// Returns the makespan.
///
/// # Errors
/// A [`MoveViolation`] naming the train and the rule it breaks (bad arguments
/// are reported as violations too, without a train).
///
/// # Complexity
/// O(n + H log H), H the number of item hops.
///
/// # Example
/// See [`move_schedule`].
pub fn validate_moves(
    current: &[u64],
    new: &[u64],
    sizes: Option<&[u64]>,
    c_succ: &[f64],
    c_pred: &[f64],
    moves: &[ItemMove],
) -> Result<f64, MoveViolation> {
    let whole = |reason: String| MoveViolation {
        train: None,
        reason,
    };
    let chain =
        Chain::new(current, new, sizes, c_succ, c_pred).map_err(|e| whole(e.to_string()))?;
    let p = current.len() - 1;
    let n = current[p];
    const EPS: f64 = 1e-9;
    let close = |a: f64, b: f64| (a - b).abs() <= EPS * a.abs().max(b.abs()).max(1.0);
    // Hops: (item, start, end, from, to); ports: (processor, start, end, train).
    let mut hops: Vec<(u64, f64, f64, usize, usize)> = Vec::new();
    let mut sends: Vec<(usize, f64, f64, usize)> = Vec::new();
    let mut receives: Vec<(usize, f64, f64, usize)> = Vec::new();
    for (t, m) in moves.iter().enumerate() {
        let bad = |reason: String| MoveViolation {
            train: Some(t),
            reason,
        };
        if m.from >= p || m.to >= p || m.from.abs_diff(m.to) != 1 {
            return Err(bad(format!(
                "P{} to P{} is not a link of the chain of {p} processors",
                m.from, m.to
            )));
        }
        if m.first >= n || m.last >= n {
            return Err(bad(format!(
                "item {} is not one of the {n} items",
                m.first.max(m.last)
            )));
        }
        if !(m.start.is_finite() && m.start >= 0.0) {
            return Err(bad(format!("start {} must be finite and >= 0", m.start)));
        }
        let c = chain.cost(m.from, m.to);
        let mut at = m.start;
        for item in m.items() {
            let end = at + chain.size(item) as f64 * c;
            hops.push((item, at, end, m.from, m.to));
            at = end;
        }
        if !close(at, m.end) {
            return Err(bad(format!(
                "it ends at {} but its items take until {at} (bytes times {c} s per byte)",
                m.end
            )));
        }
        sends.push((m.from, m.start, m.end, t));
        receives.push((m.to, m.start, m.end, t));
    }
    for (ports, what) in [(&mut sends, "sends"), (&mut receives, "receives")] {
        ports.sort_by(|a, b| a.0.cmp(&b.0).then(a.1.total_cmp(&b.1)));
        for w in ports.windows(2) {
            if w[0].0 == w[1].0 && w[1].1 < w[0].2 && !close(w[1].1, w[0].2) {
                return Err(MoveViolation {
                    train: Some(w[1].3),
                    reason: format!(
                        "P{} {what} during move {} (one port: it is busy until {})",
                        w[0].0, w[0].3, w[0].2
                    ),
                });
            }
        }
    }
    // By item, then time; hops of no duration at the same time in the order
    // of their path (away from the item's current owner).
    let progress = |h: &(u64, f64, f64, usize, usize)| h.3.abs_diff(Chain::owner(current, h.0));
    hops.sort_by(|a, b| {
        a.0.cmp(&b.0)
            .then(a.1.total_cmp(&b.1))
            .then(progress(a).cmp(&progress(b)))
    });
    let mut k = 0;
    for item in 0..n {
        let (origin, destination) = (Chain::owner(current, item), Chain::owner(new, item));
        let (mut at, mut held) = (origin, 0.0f64);
        while k < hops.len() && hops[k].0 == item {
            let (_, start, end, from, to) = hops[k];
            if from != at {
                return Err(whole(format!(
                    "item {item} is sent by P{from} at {start} but is then at P{at}"
                )));
            }
            if start < held && !close(start, held) {
                return Err(whole(format!(
                    "item {item} is sent by P{from} at {start} before it is wholly held there (at {held})"
                )));
            }
            at = to;
            held = end;
            k += 1;
        }
        if at != destination {
            return Err(whole(format!(
                "item {item} ends at P{at}; the new cuts give it to P{destination}"
            )));
        }
    }
    Ok(moves.iter().map(|m| m.end).fold(0.0, f64::max))
}
