//! Cyclic layouts of the messages over `k` steps, and the exact piece sizes of a
//! layout (a cyclic staffing problem). Crate-private: [`super::best`] searches
//! over layouts.
//!
//! A layout cuts an endless line of step slots in laps of `k` slots (slot `x` is
//! step `x mod k`) and gives the messages, in array order, runs of slots that
//! follow each other, possibly with free slots between them: message `e` holds
//! slots `start(e) .. end(e)`, so it may be sent in pieces in the steps
//! `start(e) mod k, ..., (end(e) - 1) mod k`. A processor's messages are
//! consecutive in array order, so its slots lie in one stretch; when that stretch
//! is at most `k` slots long its messages never share a step. The round-robin
//! colouring is the layout `start(e) = e, end(e) = e + 1`; the paper's schedule
//! gives message `e` as many slots as pieces; the schedule that sends element `x`
//! at time `x mod B` is a layout too.
//!
//! Given a layout, the best step lengths `C_0..C_{k-1}` (the largest piece of each
//! step) solve: minimise `sum C` such that every message's steps add up to at least
//! its size. Every constraint covers a cyclic interval of steps, so with the total
//! `S` fixed the prefix sums `P_c = C_0 + ... + C_{c-1}` obey difference
//! constraints (a longest-path problem), whose least solution is integral; the
//! smallest feasible `S` is found by search (Bartholdi, Orlin and Ratliff's cyclic
//! staffing).

use super::graph::{Message, RedistributionGraph};
use super::schedule::StepSchedule;

/// The first and last message of every processor that has one (sources, then
/// targets). O(m).
pub(crate) fn runs(graph: &RedistributionGraph) -> Vec<(usize, usize)> {
    let p = graph.source_degree.len();
    let q = graph.target_degree.len();
    let mut first = vec![usize::MAX; p + q];
    let mut last = vec![0usize; p + q];
    for (e, m) in graph.messages.iter().enumerate() {
        for v in [m.from, p + m.to] {
            first[v] = first[v].min(e);
            last[v] = e;
        }
    }
    (0..p + q)
        .filter(|&v| first[v] != usize::MAX)
        .map(|v| (first[v], last[v]))
        .collect()
}

/// A cyclic layout: `k` steps, message `e` in slots `pos[2e] .. pos[2e+1]`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Layout {
    /// Steps per lap.
    pub k: usize,
    /// Start and end slot of every message, `2m` of them: non-decreasing, each
    /// message's start below its end.
    pub pos: Vec<usize>,
}

impl Layout {
    /// The layout giving message `e` `copies[e]` consecutive slots, no free slot.
    pub fn from_copies(k: usize, copies: &[usize]) -> Layout {
        let mut pos = Vec::with_capacity(2 * copies.len());
        let mut x = 0usize;
        for &z in copies {
            pos.push(x);
            x += z;
            pos.push(x);
        }
        Layout { k, pos }
    }

    /// Slots of all messages: the most pieces the layout's schedule can have.
    pub fn slot_count(&self) -> usize {
        self.pos.chunks(2).map(|w| w[1] - w[0]).sum()
    }

    /// Slots of message `e`.
    pub fn slots(&self, e: usize) -> std::ops::Range<usize> {
        self.pos[2 * e]..self.pos[2 * e + 1]
    }

    /// Whether every message has a slot, messages follow each other, and every
    /// processor's stretch fits in a lap, so that every step is a matching.
    pub fn is_valid(&self, runs: &[(usize, usize)]) -> bool {
        self.k > 0
            && self.pos.chunks(2).all(|w| w[0] < w[1])
            && self.pos.windows(2).all(|w| w[0] <= w[1])
            && runs
                .iter()
                .all(|&(first, last)| self.pos[2 * last + 1] - self.pos[2 * first] <= self.k)
    }
}

/// The layout of the schedule that sends element `x` of the array at time
/// `x mod B` (`B` the largest block): each processor's block spans at most `B`
/// consecutive times, so no processor sends or receives two elements at once.
/// Steps are the gaps between the distinct `boundary mod B` values of the message
/// boundaries; each step's length is its gap, and they add up to `B`, the lower
/// bound. Returns the layout and the step lengths. O(m log m).
pub(crate) fn modular_layout(graph: &RedistributionGraph) -> (Layout, Vec<u64>) {
    let b = graph.largest_block;
    let m = graph.len();
    let boundaries: Vec<u64> = graph
        .starts
        .iter()
        .copied()
        .chain(std::iter::once(graph.total))
        .collect();
    let mut residues: Vec<u64> = boundaries.iter().map(|&x| x % b).collect();
    residues.sort_unstable();
    residues.dedup();
    let k = residues.len();
    let slot = |x: u64| {
        let q = residues
            .binary_search(&(x % b))
            .expect("every residue is listed");
        (x / b) as usize * k + q
    };
    let mut pos = Vec::with_capacity(2 * m);
    for e in 0..m {
        pos.push(slot(boundaries[e]));
        pos.push(slot(boundaries[e + 1]));
    }
    let lengths: Vec<u64> = (0..k)
        .map(|c| {
            if c + 1 < k {
                residues[c + 1] - residues[c]
            } else {
                b - residues[c]
            }
        })
        .collect();
    (Layout { k, pos }, lengths)
}

/// The constraints of a layout for the staffing search, grouped by first step.
struct Constraints {
    k: usize,
    /// `forward[c]`: `(end, w)`: `P_end >= P_c + w` (non-wrapping windows).
    forward: Vec<Vec<(usize, u64)>>,
    /// `backward[c]`: `(end, w)`: `P_end >= P_c + w - S` (windows that wrap).
    backward: Vec<Vec<(usize, u64)>>,
    /// The largest message that spans a whole lap: `S >= full`.
    full: u64,
}

impl Constraints {
    fn new(graph: &RedistributionGraph, layout: &Layout) -> Constraints {
        let k = layout.k;
        let mut forward = vec![Vec::new(); k];
        let mut backward = vec![Vec::new(); k];
        let mut full = 0u64;
        for (e, message) in graph.messages.iter().enumerate() {
            let slots = layout.slots(e);
            let a = slots.start % k;
            let n = slots.len();
            let w = message.size;
            if n >= k {
                full = full.max(w);
            } else if a + n <= k {
                forward[a].push((a + n, w));
            } else {
                backward[a].push((a + n - k, w));
            }
        }
        Constraints {
            k,
            forward,
            backward,
            full,
        }
    }

    /// The least prefix sums `P_0 = 0 <= P_1 <= ... <= P_k <= s` meeting every
    /// window with total `s`, or None when no step lengths of total `s` do.
    /// Longest paths by sweeps in step order: forward constraints settle within a
    /// sweep, a wrapping one may start another; more than `k + 1` sweeps means a
    /// positive cycle. O(sweeps * (k + m)).
    fn least_prefix(&self, s: u64) -> Option<Vec<u64>> {
        if self.full > s {
            return None;
        }
        let k = self.k;
        let s = i128::from(s);
        let mut p = vec![0i128; k + 1];
        for _sweep in 0..=k + 1 {
            let mut again = false;
            for c in 0..k {
                if p[c + 1] < p[c] {
                    p[c + 1] = p[c];
                }
                for &(end, w) in &self.forward[c] {
                    let v = p[c] + i128::from(w);
                    if v > p[end] {
                        p[end] = v;
                    }
                }
                for &(end, w) in &self.backward[c] {
                    let v = p[c] + i128::from(w) - s;
                    if v > p[end] {
                        if end == 0 {
                            return None;
                        }
                        p[end] = v;
                        again = true;
                    }
                }
            }
            if p[k] > s {
                return None;
            }
            if !again {
                return Some(p.iter().map(|&x| x as u64).collect());
            }
        }
        None
    }
}

/// The best step lengths of a layout: the smallest total `S >= lo` for which step
/// lengths exist (`lo` must be a lower bound, e.g. the largest block), found by
/// probing `hint` (or `lo`) first, then doubling and bisection. Returns the
/// lengths; they add up to `S`. O((k + m) * sweeps * log S).
pub(crate) fn staff(
    graph: &RedistributionGraph,
    layout: &Layout,
    lo: u64,
    hint: Option<u64>,
) -> Vec<u64> {
    let constraints = Constraints::new(graph, layout);
    let lo = lo.max(constraints.full);
    // Every total below `below` is infeasible.
    let mut below = lo;
    let mut probe = hint.map_or(lo, |h| h.max(lo));
    let mut step = (probe - lo).max(1);
    let (mut hi, mut best) = loop {
        match constraints.least_prefix(probe) {
            Some(p) => break (probe, p),
            None => {
                below = probe + 1;
                probe = probe.saturating_add(step);
                step = step.saturating_mul(2);
            }
        }
    };
    while below < hi {
        let mid = below + (hi - below) / 2;
        match constraints.least_prefix(mid) {
            Some(p) => {
                hi = mid;
                best = p;
            }
            None => below = mid + 1,
        }
    }
    lengths_of(&best, hi)
}

/// Whether the layout admits step lengths of total `s`. O((k + m) * sweeps).
pub(crate) fn feasible(graph: &RedistributionGraph, layout: &Layout, s: u64) -> bool {
    Constraints::new(graph, layout).least_prefix(s).is_some()
}

/// Step lengths from least prefix sums: `C_c = P_{c+1} - P_c`, the last step
/// taking what is left of `s`.
fn lengths_of(p: &[u64], s: u64) -> Vec<u64> {
    let k = p.len() - 1;
    (0..k)
        .map(|c| if c + 1 < k { p[c + 1] - p[c] } else { s - p[c] })
        .collect()
}

/// The schedule of a layout with step lengths `lengths` (enough for every
/// message): each message fills its steps in turn, up to each step's length.
/// Steps left empty are dropped. O(m + slots).
pub(crate) fn schedule_of(
    graph: &RedistributionGraph,
    layout: &Layout,
    lengths: &[u64],
) -> StepSchedule {
    let k = layout.k;
    let mut steps: Vec<Vec<Message>> = vec![Vec::new(); k];
    for (e, message) in graph.messages.iter().enumerate() {
        let left = fill_steps(&mut steps, message, lengths, layout.slots(e).map(|x| x % k));
        debug_assert_eq!(left, 0, "the step lengths leave message {e} short");
    }
    for step in &mut steps {
        step.sort_by_key(|m| m.from);
    }
    steps.retain(|step| !step.is_empty());
    StepSchedule { steps }
}

/// Splits `message` over the steps `order`, in turn, each piece as long as the
/// step (`lengths`) and no longer than what is left; a step that gets nothing gets
/// no piece. Returns what is left (0 when the steps are long enough). O(steps).
pub(crate) fn fill_steps(
    steps: &mut [Vec<Message>],
    message: &Message,
    lengths: &[u64],
    order: impl IntoIterator<Item = usize>,
) -> u64 {
    let mut left = message.size;
    for c in order {
        if left == 0 {
            break;
        }
        let piece = left.min(lengths[c]);
        if piece > 0 {
            steps[c].push(Message {
                size: piece,
                ..*message
            });
            left -= piece;
        }
    }
    left
}

/// The layout with steps `g - 1` and `g` merged for every `g` of `points`
/// (distinct, `1 <= g < k`, no two adjacent): slot `g` of every lap disappears. A
/// message starting or ending at a removed `g` either keeps its number of slots (a
/// start moves back to the merged step, an end moves past it) or loses one; where
/// a message ends and the next starts at `g`, one of the two loses a slot: the one
/// that stays lighter per slot. None when no valid layout results. O(m + k + P + Q).
pub(crate) fn merge(
    graph: &RedistributionGraph,
    runs: &[(usize, usize)],
    layout: &Layout,
    points: &[usize],
) -> Option<Layout> {
    let k = layout.k;
    let mut removed = vec![false; k];
    for &g in points {
        debug_assert!(g >= 1 && g < k && !removed[g - 1]);
        removed[g] = true;
    }
    let fewer = k - points.len();
    // New index of every kept grid point; a removed one maps to the merged step's
    // start (left) or to the next kept point (right).
    let mut index = vec![0usize; k];
    let mut kept = 0usize;
    for q in 0..k {
        index[q] = kept;
        if !removed[q] {
            kept += 1;
        }
    }
    let m = graph.len();
    let len = |e: usize| layout.slots(e).len() as u128;
    let size = |e: usize| u128::from(graph.messages[e].size);
    let at_removed = |i: usize| removed[layout.pos[i] % k];
    let preferred: Vec<bool> = (0..2 * m)
        .map(|i| {
            let e = i / 2;
            if !at_removed(i) || i % 2 == 1 {
                // Not at a removed point; or an end, moved past the merged step to
                // keep its slot count (unless it coincides with the next start:
                // it follows that start, below).
                return false;
            }
            let shared = e > 0 && layout.pos[i - 1] == layout.pos[i];
            if !shared {
                return true; // a start moved back keeps the slot count
            }
            // End of e-1 and start of e coincide: shorten the one lighter per
            // slot (left shortens e-1, right shortens e).
            match (len(e - 1) >= 2, len(e) >= 2) {
                (true, true) => size(e - 1) * (len(e) - 1) <= size(e) * (len(e - 1) - 1),
                (true, false) => true,
                _ => false,
            }
        })
        .collect();
    let follows = |i: usize| {
        // An end that coincides with the next start moves with it.
        i % 2 == 1 && i + 1 < 2 * m && layout.pos[i + 1] == layout.pos[i]
    };
    let map = |x: usize, left: bool| {
        let (lap, q) = (x / k, x % k);
        let q = if removed[q] && left {
            index[q] - 1
        } else {
            index[q]
        };
        lap * fewer + q
    };
    let build = |choice: &dyn Fn(usize) -> bool| Layout {
        k: fewer,
        pos: layout
            .pos
            .iter()
            .enumerate()
            .map(|(i, &x)| map(x, choice(i)))
            .collect(),
    };
    let preferred_choice = |i: usize| {
        if follows(i) {
            preferred[i + 1]
        } else {
            preferred[i]
        }
    };
    for choice in [
        &preferred_choice as &dyn Fn(usize) -> bool,
        &|_| true,
        &|_| false,
    ] {
        let merged = build(choice);
        if merged.is_valid(runs) {
            return Some(merged);
        }
    }
    None
}

/// The layout with positions `from..to` (of [`Layout::pos`]) moved by one slot,
/// later or earlier, if it stays valid. O(m + P + Q).
pub(crate) fn shift(
    runs: &[(usize, usize)],
    layout: &Layout,
    from: usize,
    to: usize,
    later: bool,
) -> Option<Layout> {
    let mut moved = layout.clone();
    for x in &mut moved.pos[from..to] {
        *x = if later { *x + 1 } else { x.checked_sub(1)? };
    }
    moved.is_valid(runs).then_some(moved)
}
