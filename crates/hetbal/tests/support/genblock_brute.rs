//! Exhaustive search for the cheapest GEN_BLOCK schedule in exactly `Delta` steps,
//! on tiny instances. Independent of the library's search: every vector of step
//! lengths, by increasing total, each tried with a search over every set of steps
//! for every message. Shared through `#[path]`.
#![allow(dead_code)]

use std::collections::HashSet;

/// The messages `(from, to, size)` in array order.
pub fn messages(source: &[u64], target: &[u64]) -> Vec<(usize, usize, u64)> {
    let mut out = Vec::new();
    let (mut a, mut b) = (0u64, 0u64); // starts of the current blocks
    let (mut i, mut j) = (0usize, 0usize);
    while i < source.len() && j < target.len() {
        let (ea, eb) = (a + source[i], b + target[j]);
        let lo = a.max(b);
        let hi = ea.min(eb);
        if hi > lo {
            out.push((i, j, hi - lo));
        }
        if ea <= eb {
            i += 1;
            a = ea;
        } else {
            j += 1;
            b = eb;
        }
    }
    out
}

/// Steps of `(from, to, size)` messages.
pub type Steps = Vec<Vec<(usize, usize, u64)>>;

/// The depth-first search of [`assignment`].
struct Search<'a> {
    msgs: &'a [(usize, usize, u64)],
    lengths: &'a [u64],
    full: u32,
    /// States known to fail: (message, steps used by its source, by its target).
    failed: HashSet<(usize, u32, u32)>,
    out: Vec<u32>,
}

impl Search<'_> {
    fn sum(&self, mask: u32) -> u64 {
        (0..self.lengths.len())
            .filter(|&c| mask >> c & 1 == 1)
            .map(|c| self.lengths[c])
            .sum()
    }

    fn go(&mut self, e: usize, used_source: u32, used_target: u32) -> bool {
        if e == self.msgs.len() {
            return true;
        }
        if self.failed.contains(&(e, used_source, used_target)) {
            return false;
        }
        let (from, to, size) = self.msgs[e];
        let free = self.full & !(used_source | used_target);
        let mut a = free;
        while a > 0 {
            if self.sum(a) >= size {
                let (ns, nt) = match self.msgs.get(e + 1) {
                    Some(&(f, t, _)) => (
                        if f == from { used_source | a } else { 0 },
                        if t == to { used_target | a } else { 0 },
                    ),
                    None => (0, 0),
                };
                self.out.push(a);
                if self.go(e + 1, ns, nt) {
                    return true;
                }
                self.out.pop();
            }
            a = (a - 1) & free;
        }
        self.failed.insert((e, used_source, used_target));
        false
    }
}

/// A set of steps (bit mask) per message such that the steps of `lengths` are
/// matchings and long enough, if one exists. Depth-first over messages, every
/// subset of steps tried, memoised on (message, steps used by its source, steps
/// used by its target).
pub fn assignment(msgs: &[(usize, usize, u64)], lengths: &[u64]) -> Option<Vec<u32>> {
    let mut search = Search {
        msgs,
        lengths,
        full: (1u32 << lengths.len()) - 1,
        failed: HashSet::new(),
        out: Vec::new(),
    };
    search.go(0, 0, 0).then_some(search.out)
}

/// The least volume of any schedule in exactly `delta` steps, and such a
/// schedule (steps of `(from, to, size)`): step lengths tried as non-increasing
/// vectors of `delta` positive integers by increasing total from the largest
/// block.
pub fn best_in_delta_steps(source: &[u64], target: &[u64], delta: usize) -> (u64, Steps) {
    let msgs = messages(source, target);
    let largest_message = msgs.iter().map(|m| m.2).max().unwrap();
    let largest_block = source.iter().chain(target).copied().max().unwrap();
    fn vectors(
        prefix: &mut Vec<u64>,
        left: u64,
        cap: u64,
        parts: usize,
        visit: &mut dyn FnMut(&[u64]) -> bool,
    ) -> bool {
        if prefix.len() == parts {
            return left == 0 && visit(prefix);
        }
        let rest = (parts - prefix.len()) as u64;
        let lo = left.div_ceil(rest).max(1);
        let hi = cap.min(left.saturating_sub(rest - 1));
        let mut v = hi;
        while v >= lo {
            prefix.push(v);
            if vectors(prefix, left - v, v, parts, visit) {
                return true;
            }
            prefix.pop();
            v -= 1;
        }
        false
    }
    let mut total = largest_block.max(delta as u64);
    loop {
        let mut found = None;
        vectors(
            &mut Vec::new(),
            total,
            largest_message,
            delta,
            &mut |lengths| match assignment(&msgs, lengths) {
                Some(sets) => {
                    found = Some((lengths.to_vec(), sets));
                    true
                }
                None => false,
            },
        );
        if let Some((lengths, sets)) = found {
            let mut steps = vec![Vec::new(); delta];
            for (&(from, to, size), &set) in msgs.iter().zip(&sets) {
                let mut left = size;
                for c in 0..delta {
                    if set >> c & 1 == 1 && left > 0 {
                        let piece = left.min(lengths[c]);
                        steps[c].push((from, to, piece));
                        left -= piece;
                    }
                }
            }
            return (total, steps);
        }
        total += 1;
    }
}
