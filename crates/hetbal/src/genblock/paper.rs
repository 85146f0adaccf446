//! The paper's method (the GEN_BLOCK paper, section 4): the O(m)
//! colouring of biplanar graphs, and the Selection, Scheduling and Partition steps.

use std::cmp::Ordering;
use std::collections::BinaryHeap;

use super::graph::{Message, RedistributionGraph};
use super::schedule::StepSchedule;

/// The paper's Scheduling step on a multigraph: message `e` of `graph` taken
/// `copies[e]` times, copies next to each other, coloured in turn with `Delta`
/// colours in array order. Returns the first colour of every message; its copies
/// take the next colours, modulo `Delta`.
///
/// Sorting the messages by `from + to` (the paper's key) is the array order: along
/// the array, `from + to` grows by 1 or 2 from one message to the next. A
/// processor's messages (copies included) are consecutive in that order and at
/// most `Delta` of them, so they get distinct colours.
fn first_colours(copies: &[usize], delta: usize) -> Vec<usize> {
    let mut next = 0usize;
    copies
        .iter()
        .map(|&z| {
            let first = next;
            next = (next + z) % delta;
            first
        })
        .collect()
}

/// The plain schedule in `Delta` steps: the paper's O(m) colouring of the
/// redistribution graph (messages sorted by `from + to`, which is array order,
/// coloured in turn), one step per colour, messages unsplit. Its cost is the
/// paper's `Tb`.
///
/// # Arguments
/// * `graph`: the redistribution graph.
///
/// # Returns
/// `Delta` steps (none for an empty array), each a non-empty matching; step `c`
/// holds the messages whose rank in array order is `c` modulo `Delta`.
///
/// # Complexity
/// O(m) time and space, m messages.
///
/// # Example
/// ```
/// use hetbal::genblock::{plain_colouring, redistribution_graph, GenBlockInstance};
/// // Messages in array order: (0,0,2) (0,1,1) (1,1,2) (1,2,2); Delta = 2.
/// let g = GenBlockInstance::new(&[3, 4], &[2, 3, 2], 0.0, 1.0).unwrap();
/// let plain = plain_colouring(&redistribution_graph(&g));
/// assert_eq!(plain.len(), 2);
/// assert_eq!(plain.largest(), vec![2, 2]);
/// ```
pub fn plain_colouring(graph: &RedistributionGraph) -> StepSchedule {
    let delta = graph.degree;
    let mut steps = vec![Vec::new(); delta];
    for (e, message) in graph.messages.iter().enumerate() {
        steps[e % delta].push(*message);
    }
    StepSchedule { steps }
}

/// A message of the Selection step's priority queue: largest estimated piece
/// `size / copies` first, then lowest index.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Candidate {
    size: u64,
    copies: u64,
    index: usize,
}

impl Ord for Candidate {
    fn cmp(&self, other: &Self) -> Ordering {
        // size / copies against other.size / other.copies, exactly.
        (u128::from(self.size) * u128::from(other.copies))
            .cmp(&(u128::from(other.size) * u128::from(self.copies)))
            .then(other.index.cmp(&self.index))
    }
}

impl PartialOrd for Candidate {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

/// The paper's Selection step with a degree budget: adds dummy edges (extra
/// pieces) to the messages whose estimated piece `size / (1 + dummies)` is the
/// largest, as long as both ends of the message take part in fewer than `budget`
/// messages (dummies included). With `budget = Delta` this is the paper's Selection;
/// larger budgets allow more steps.
///
/// # Arguments
/// * `graph`: the redistribution graph.
/// * `budget`: the most messages a processor may take part in (>= `Delta`).
///
/// # Returns
/// The number of pieces `1 + dummies` of every message, in array order. A message
/// with an end of degree `budget` is never split.
///
/// # Complexity
/// O((m + d) log m) for d dummies added (d <= (P + Q) * budget / 2).
///
/// # Example
/// ```
/// use hetbal::genblock::{redistribution_graph, selection, GenBlockInstance};
/// //  array   0          10   14     20
/// //  source  |  S0 (10) |S1 4| S2 6 |
/// //  target  |  T0 (14)      | T1 6 |     messages (S0,T0) 10, (S1,T0) 4, (S2,T1) 6
/// let g = GenBlockInstance::new(&[10, 4, 6], &[14, 6], 0.0, 1.0).unwrap();
/// let graph = redistribution_graph(&g);
/// assert_eq!(graph.degree, 2); // T0
/// // Delta = 2: only (S2,T1) has both ends below degree 2; it gets one dummy.
/// assert_eq!(selection(&graph, 2), vec![1, 1, 2]);
/// // A budget of 3: (S0,T0) first (10 is the largest), then (S2,T1) twice.
/// assert_eq!(selection(&graph, 3), vec![2, 1, 3]);
/// ```
pub fn selection(graph: &RedistributionGraph, budget: usize) -> Vec<usize> {
    let mut source_degree = graph.source_degree.clone();
    let mut target_degree = graph.target_degree.clone();
    let mut copies = vec![1usize; graph.len()];
    let mut heap: BinaryHeap<Candidate> = graph
        .messages
        .iter()
        .enumerate()
        .map(|(index, m)| Candidate {
            size: m.size,
            copies: 1,
            index,
        })
        .collect();
    while let Some(top) = heap.pop() {
        let Message { from, to, .. } = graph.messages[top.index];
        // Degrees only grow: a message with a saturated end never comes back.
        if source_degree[from] >= budget || target_degree[to] >= budget {
            continue;
        }
        source_degree[from] += 1;
        target_degree[to] += 1;
        copies[top.index] += 1;
        heap.push(Candidate {
            copies: top.copies + 1,
            ..top
        });
    }
    copies
}

/// The paper's method and what its evaluation needs.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PaperSchedule {
    /// The schedule: exactly `Delta` steps (colours), each a non-empty matching.
    pub schedule: StepSchedule,
    /// Pieces of every message after Selection (`1 + dummies`), in array order.
    pub copies: Vec<usize>,
    /// First colour (step) of every message; its pieces take the next ones.
    pub colours: Vec<usize>,
    /// The paper's `B` without startups: the sum over colours of the largest
    /// message with an end of degree `Delta` (never split), the least volume this
    /// colouring can reach.
    pub bound: u128,
}

/// The paper's method: Selection (dummy edges on large messages whose ends have
/// degree below `Delta`), Scheduling (the O(m) colouring of the multigraph with
/// `Delta` colours) and Partition (lightest split message first, its weight spread
/// over its pieces' steps), with integer sizes.
///
/// Partition, for a split message of weight `w` whose pieces sit in steps
/// `o(1..z)` whose current largest sizes are `C_o(i)`: if `w <= sum C_o(i)`, the
/// pieces fill `C_o(1)`, `C_o(2)`, ... in turn (no step grows); otherwise each
/// piece gets `C_o(i)` plus an equal share of the excess `w - sum C_o(i)`. The
/// paper's shares are fractional: here the excess is cut in integers that differ by
/// at most one (the first pieces get the extra elements), so every size is an
/// integer and every pair's total stays exact. Pieces of size 0 are left out.
///
/// # Arguments
/// * `graph`: the redistribution graph.
///
/// # Returns
/// The [`PaperSchedule`]: exactly `Delta` non-empty steps (none for an empty
/// array). Every step holds a message of a vertex of degree `Delta`, never split.
///
/// # Complexity
/// O(m log m + d log m) time, O(m + d) space, for m messages and d dummy edges
/// (the paper states O(m log m + Delta m) for a Partition that recomputes every
/// `C_i`; here they are kept up to date).
///
/// # Example
/// ```
/// use hetbal::genblock::{paper_schedule, plain_colouring, redistribution_graph};
/// use hetbal::genblock::{GenBlockInstance, Message};
/// //  array   0          10   14                41
/// //  source  |  S0 (10) |S1 4|     S2 (27)     |
/// //  target  |  T0 (14)      |     T1 (27)     |
/// let g = GenBlockInstance::new(&[10, 4, 27], &[14, 27], 0.0, 1.0).unwrap();
/// let graph = redistribution_graph(&g);
/// // Plain colouring: step 0 = {(S0,T0) 10, (S2,T1) 27}, step 1 = {(S1,T0) 4}.
/// assert_eq!(plain_colouring(&graph).volume(), 31);
/// // Selection splits (S2,T1) in two (colours 0 and 1). Partition: 27 exceeds
/// // C_0 + C_1 = 10 + 4; each piece gets its step's C plus half of the excess 13,
/// // in integers: 10 + 7 and 4 + 6.
/// let paper = paper_schedule(&graph);
/// let m = |from, to, size| Message { from, to, size };
/// assert_eq!(paper.schedule.steps, vec![
///     vec![m(0, 0, 10), m(2, 1, 17)],
///     vec![m(1, 0, 4), m(2, 1, 10)],
/// ]);
/// assert_eq!(paper.schedule.volume(), 27);
/// assert_eq!(paper.bound, 14); // T0's messages, never split: 10 + 4
/// ```
pub fn paper_schedule(graph: &RedistributionGraph) -> PaperSchedule {
    let delta = graph.degree;
    let m = graph.len();
    if delta == 0 {
        return PaperSchedule {
            schedule: StepSchedule::default(),
            copies: Vec::new(),
            colours: Vec::new(),
            bound: 0,
        };
    }
    let copies = selection(graph, delta);
    let colours = first_colours(&copies, delta);
    // C_i: the largest size placed in colour i so far, starting from the messages
    // that are not split (F = the split ones).
    let mut largest = vec![0u64; delta];
    let mut bound_largest = vec![0u64; delta];
    let mut pieces: Vec<Vec<u64>> = vec![Vec::new(); m];
    for e in 0..m {
        let message = graph.messages[e];
        if copies[e] == 1 {
            let c = colours[e];
            largest[c] = largest[c].max(message.size);
            pieces[e] = vec![message.size];
            if graph.source_degree[message.from] == delta
                || graph.target_degree[message.to] == delta
            {
                bound_largest[c] = bound_largest[c].max(message.size);
            }
        }
    }
    let mut split: Vec<usize> = (0..m).filter(|&e| copies[e] > 1).collect();
    split.sort_by_key(|&e| (graph.messages[e].size, e));
    for e in split {
        let w = graph.messages[e].size;
        let z = copies[e];
        let steps: Vec<usize> = (0..z).map(|i| (colours[e] + i) % delta).collect();
        let available: u128 = steps.iter().map(|&c| u128::from(largest[c])).sum();
        let mut sizes = vec![0u64; z];
        if u128::from(w) <= available {
            // Fill the steps' current largest sizes in turn: no step grows.
            let mut left = w;
            for (i, &c) in steps.iter().enumerate() {
                let piece = left.min(largest[c]);
                sizes[i] = piece;
                left -= piece;
                if left == 0 {
                    break;
                }
            }
        } else {
            // Every piece gets its step's largest size plus an equal share of the
            // excess, in integers (the first `excess % z` pieces get one more).
            let excess = w - available as u64; // available < w fits in a u64
            let share = excess / z as u64;
            let extra = (excess % z as u64) as usize;
            for (i, &c) in steps.iter().enumerate() {
                sizes[i] = largest[c] + share + u64::from(i < extra);
                largest[c] = sizes[i];
            }
        }
        pieces[e] = sizes;
    }
    let mut schedule = vec![Vec::new(); delta];
    for e in 0..m {
        let message = graph.messages[e];
        for (i, &size) in pieces[e].iter().enumerate() {
            if size > 0 {
                schedule[(colours[e] + i) % delta].push(Message { size, ..message });
            }
        }
    }
    // Steps list their messages by sender (array order within a step already, but
    // a message's pieces may wrap around the colours).
    for step in &mut schedule {
        step.sort_by_key(|m| m.from);
    }
    PaperSchedule {
        schedule: StepSchedule { steps: schedule },
        copies,
        colours,
        bound: bound_largest.iter().map(|&s| u128::from(s)).sum(),
    }
}
