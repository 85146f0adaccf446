//! An independent checker of GEN_BLOCK step schedules, written from the model
//! (model.md section 4, formats.md) without the library's graph or checker: block
//! intervals are intersected pair by pair, steps are checked as matchings, costs
//! are summed step by step. Shared through `#[path]`.
#![allow(dead_code)] // each target uses part of it

use std::collections::HashMap;

/// What the checker measured on a valid schedule.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Checked {
    /// Steps in the schedule.
    pub steps: usize,
    /// Sum over steps of the largest size.
    pub volume: u128,
    /// `sum over steps of (startup + unit * largest)`, added step by step.
    pub cost: f64,
    /// Maximum degree of the redistribution graph.
    pub degree: usize,
    /// `degree * startup + unit * largest block`.
    pub lower_bound: f64,
}

/// `[start, end)` of every block.
fn intervals(blocks: &[u64]) -> Vec<(u128, u128)> {
    let mut at = 0u128;
    blocks
        .iter()
        .map(|&b| {
            let interval = (at, at + u128::from(b));
            at += u128::from(b);
            interval
        })
        .collect()
}

/// The overlap of every pair of blocks that overlap, by brute force (O(P Q)).
pub fn overlaps(source: &[u64], target: &[u64]) -> HashMap<(usize, usize), u128> {
    let s = intervals(source);
    let t = intervals(target);
    let mut out = HashMap::new();
    for (i, &(a, b)) in s.iter().enumerate() {
        for (j, &(c, d)) in t.iter().enumerate() {
            let lo = a.max(c);
            let hi = b.min(d);
            if hi > lo {
                out.insert((i, j), hi - lo);
            }
        }
    }
    out
}

/// The maximum degree: the most pairs any processor takes part in.
pub fn degree(source: &[u64], target: &[u64]) -> usize {
    let pairs = overlaps(source, target);
    let mut count: HashMap<(bool, usize), usize> = HashMap::new();
    for &(i, j) in pairs.keys() {
        *count.entry((true, i)).or_default() += 1;
        *count.entry((false, j)).or_default() += 1;
    }
    count.values().copied().max().unwrap_or(0)
}

/// Checks `steps` (each a list of `(from, to, size)`) against the two
/// distributions: every step non-empty and a matching, every size positive,
/// processors in range, and for every pair the sizes adding up to the overlap.
/// `exact_steps`: the number of steps required, if any. Returns the measures or
/// the first problem, in words.
pub fn check(
    source: &[u64],
    target: &[u64],
    steps: &[Vec<(usize, usize, u64)>],
    startup: f64,
    unit: f64,
    exact_steps: Option<usize>,
) -> Result<Checked, String> {
    let expected = overlaps(source, target);
    let mut sent: HashMap<(usize, usize), u128> = HashMap::new();
    let mut volume = 0u128;
    let mut cost = 0.0f64;
    for (c, step) in steps.iter().enumerate() {
        if step.is_empty() {
            return Err(format!("step {c} is empty"));
        }
        let mut senders = std::collections::HashSet::new();
        let mut receivers = std::collections::HashSet::new();
        let mut largest = 0u64;
        for &(from, to, size) in step {
            if from >= source.len() || to >= target.len() {
                return Err(format!("step {c}: ({from}, {to}) out of range"));
            }
            if size == 0 {
                return Err(format!("step {c}: ({from}, {to}) has size 0"));
            }
            if !senders.insert(from) {
                return Err(format!("step {c}: source {from} sends twice"));
            }
            if !receivers.insert(to) {
                return Err(format!("step {c}: target {to} receives twice"));
            }
            *sent.entry((from, to)).or_default() += u128::from(size);
            largest = largest.max(size);
        }
        volume += u128::from(largest);
        cost += startup + unit * largest as f64;
    }
    for (pair, &size) in &expected {
        let got = sent.get(pair).copied().unwrap_or(0);
        if got != size {
            return Err(format!("pair {pair:?}: sent {got}, overlap {size}"));
        }
    }
    for (pair, &got) in &sent {
        if !expected.contains_key(pair) {
            return Err(format!(
                "pair {pair:?}: sent {got} but the blocks do not overlap"
            ));
        }
    }
    let degree = degree(source, target);
    if let Some(k) = exact_steps {
        if steps.len() != k {
            return Err(format!("{} steps, {k} required", steps.len()));
        }
    }
    let largest_block = source.iter().chain(target).copied().max().unwrap_or(0);
    Ok(Checked {
        steps: steps.len(),
        volume,
        cost,
        degree,
        lower_bound: degree as f64 * startup + unit * largest_block as f64,
    })
}
