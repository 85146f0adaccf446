//! Schedules in a fixed number of steps `k` with every colouring allowed, for
//! given step lengths: a dynamic programme along the array. Crate-private:
//! [`super::best`] lowers the step lengths of its best layouts with it.
//!
//! Message `e` gets a set of steps `A(e)` (a bit mask) whose lengths add up to at
//! least its size; the messages of a processor get disjoint sets. Along the
//! array, a message shares a processor with the next one (or none at all), and a
//! processor's messages are consecutive; so the only history that matters before
//! message `e` is the set of steps already used by the processor `e` shares with
//! `e - 1`. The programme keeps, message after message, the minimal such sets
//! (a smaller set of used steps is never worse), and only minimal covers `A(e)`
//! (no step can be left out).

use super::graph::{Message, RedistributionGraph};
use super::layout::fill_steps;
use super::schedule::StepSchedule;

/// The most steps the programme handles (masks of `k` bits, `2^k` subset sums).
pub(crate) const MAX_STEPS: usize = 12;

/// The most sets of used steps kept after a message; beyond, the programme gives
/// up (reports no schedule).
const MAX_STATES: usize = 2048;

/// Which processor message `e` shares with message `e + 1`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Shared {
    /// None: a new connected component starts.
    Nothing,
    /// The sender.
    Source,
    /// The receiver.
    Target,
}

fn shared(messages: &[Message], e: usize) -> Shared {
    match messages.get(e + 1) {
        Some(next) if next.from == messages[e].from => Shared::Source,
        Some(next) if next.to == messages[e].to => Shared::Target,
        _ => Shared::Nothing,
    }
}

/// A set of steps for every message such that every step is a matching and every
/// message's steps are long enough, or None (none exists, or the programme went
/// beyond its state budget). `lengths.len() <= MAX_STEPS`.
/// O(m * states * covers + 2^k).
pub(crate) fn assign(graph: &RedistributionGraph, lengths: &[u64]) -> Option<Vec<u32>> {
    let k = lengths.len();
    debug_assert!(k <= MAX_STEPS);
    let masks = 1usize << k;
    // Sum and smallest length of every set of steps.
    let mut sum = vec![0u64; masks];
    let mut least = vec![u64::MAX; masks];
    for mask in 1..masks {
        let low = mask.trailing_zeros() as usize;
        let rest = mask & (mask - 1);
        sum[mask] = sum[rest].saturating_add(lengths[low]);
        least[mask] = least[rest].min(lengths[low]);
    }
    let messages = &graph.messages;
    let m = messages.len();
    // Minimal covers of every size: set `a` covers sizes `w <= sum[a]`, minimally
    // when no step can be left out: `w > sum[a] - least[a]`.
    let mut distinct: Vec<u64> = messages.iter().map(|x| x.size).collect();
    distinct.sort_unstable();
    distinct.dedup();
    let mut covers_of: Vec<Vec<u32>> = vec![Vec::new(); distinct.len()];
    for a in 1..masks {
        let first = distinct.partition_point(|&w| w <= sum[a] - least[a]);
        let end = distinct.partition_point(|&w| w <= sum[a]);
        for covers in &mut covers_of[first..end] {
            covers.push(a as u32);
        }
    }
    if covers_of.iter().any(Vec::is_empty) {
        return None;
    }
    let cover_index: Vec<usize> = messages
        .iter()
        .map(|x| distinct.partition_point(|&w| w < x.size))
        .collect();
    // layers[e]: (used steps of the processor shared with e + 1, parent state in
    // layers[e - 1], steps chosen for e).
    let mut layers: Vec<Vec<(u32, u32, u32)>> = Vec::with_capacity(m);
    let mut states: Vec<u32> = vec![0];
    let mut before = Shared::Nothing;
    for e in 0..m {
        let after = shared(messages, e);
        let covers = &covers_of[cover_index[e]];
        let mut next: Vec<(u32, u32, u32)> = Vec::new();
        for (parent, &used) in states.iter().enumerate() {
            for &a in covers {
                if a & used != 0 {
                    continue;
                }
                let state = match after {
                    Shared::Nothing => 0,
                    _ if after == before => used | a,
                    _ => a,
                };
                next.push((state, parent as u32, a));
            }
        }
        if next.is_empty() {
            return None;
        }
        // Keep the minimal sets (by inclusion), one entry each.
        next.sort_unstable_by_key(|&(state, _, _)| (state.count_ones(), state));
        let mut kept: Vec<(u32, u32, u32)> = Vec::new();
        for entry in next {
            if kept.iter().any(|&(s, _, _)| s & entry.0 == s) {
                continue;
            }
            kept.push(entry);
            if kept.len() > MAX_STATES {
                return None;
            }
        }
        states = kept.iter().map(|&(s, _, _)| s).collect();
        layers.push(kept);
        before = after;
    }
    // Walk back from any final state.
    let mut sets = vec![0u32; m];
    let mut index = 0usize;
    for e in (0..m).rev() {
        let (_, parent, a) = layers[e][index];
        sets[e] = a;
        index = parent as usize;
    }
    Some(sets)
}

/// The schedule of an assignment: each message fills its steps, longest first, up
/// to each step's length; empty steps are dropped. O(m k).
pub(crate) fn schedule_of(
    graph: &RedistributionGraph,
    lengths: &[u64],
    sets: &[u32],
) -> StepSchedule {
    let k = lengths.len();
    let mut steps: Vec<Vec<Message>> = vec![Vec::new(); k];
    for (message, &set) in graph.messages.iter().zip(sets) {
        let mut mine: Vec<usize> = (0..k).filter(|&c| set >> c & 1 == 1).collect();
        mine.sort_by_key(|&c| std::cmp::Reverse(lengths[c]));
        let left = fill_steps(&mut steps, message, lengths, mine);
        debug_assert_eq!(left, 0, "the steps are too short for a message");
    }
    steps.retain(|step| !step.is_empty());
    StepSchedule { steps }
}

/// Lowers the total of the step lengths while an assignment exists, until no move
/// helps or `checks` assignments have been tried. Two moves, each by galloping
/// (amounts 1, 2, 4, ... while they succeed, then 1 again): lower one step (the
/// longest first), or lower one step by `t` while lengthening another by `t - 1`
/// (which gets out of some local optima of the first move). Returns None when
/// `lengths` itself gets no assignment; otherwise the lowered lengths and their
/// assignment.
pub(crate) fn descend(
    graph: &RedistributionGraph,
    lengths: &[u64],
    checks: usize,
) -> Option<(Vec<u64>, Vec<u32>)> {
    let sets = assign(graph, lengths)?;
    let mut state = Descent {
        graph,
        lengths: lengths.to_vec(),
        sets,
        budget: checks,
    };
    let k = lengths.len();
    loop {
        let mut changed = false;
        let mut order: Vec<usize> = (0..k).collect();
        order.sort_by_key(|&c| std::cmp::Reverse(state.lengths[c]));
        for &c in &order {
            changed |= state.gallop(c, None);
        }
        if !changed {
            // Pairs: the longest steps give, the shortest take.
            'pairs: for &c in &order {
                for &d in order.iter().rev() {
                    if d != c && state.gallop(c, Some(d)) {
                        changed = true;
                        break 'pairs;
                    }
                }
            }
        }
        if !changed || state.budget == 0 {
            return Some((state.lengths, state.sets));
        }
    }
}

/// The state of [`descend`].
struct Descent<'a> {
    graph: &'a RedistributionGraph,
    lengths: Vec<u64>,
    sets: Vec<u32>,
    budget: usize,
}

impl Descent<'_> {
    /// Lowers step `c` by `t` (and lengthens `d` by `t - 1`), `t` galloping.
    /// Whether anything changed.
    fn gallop(&mut self, c: usize, d: Option<usize>) -> bool {
        let mut changed = false;
        let mut t = if d.is_some() { 2u64 } else { 1u64 };
        let first = t;
        while self.lengths[c] >= t && self.budget > 0 {
            self.budget -= 1;
            let mut trial = self.lengths.clone();
            trial[c] -= t;
            if let Some(d) = d {
                trial[d] += t - 1;
            }
            match assign(self.graph, &trial) {
                Some(found) => {
                    self.lengths = trial;
                    self.sets = found;
                    changed = true;
                    t = t.saturating_mul(2);
                }
                None if t == first => break,
                None => t = first,
            }
        }
        changed
    }
}
