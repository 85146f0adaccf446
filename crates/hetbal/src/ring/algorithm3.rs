//! The paper's Algorithm 3 for homogeneous bidirectional rings, kept as a reference.

use std::collections::BTreeSet;

use crate::ring::{homogeneous_bidirectional_bound, RingInstance};
use crate::ring::{Schedule, Transfer};

/// The paper's Algorithm 3 (homogeneous bidirectional rings), rule by rule, one
/// synchronous step of length c at a time, with lines 25-30 repeated until nothing
/// changes (chains of processors with zero unbalance). The rules reach Lemma 6's
/// number of steps, but they ignore store and forward: on rings with small loads
/// they can ask a processor to send an item it does not hold yet (model.md: loads
/// `[1,2,3,1]`, delta `[-3,1,2,0]`). The schedule is returned as the rules give it; the
/// validator tells whether it is valid. Stops after `2 * Lemma 6 + n` steps if the
/// rules never balance the ring (the final holdings then show it).
///
/// # Complexity
/// O(n^2) per step (every slice's unbalance, as the paper evaluates its rules), so
/// O(n^2 T) for T steps: a reference, not a planner for large rings.
///
/// # Example
/// ```
/// use hetbal::ring::{paper_algorithm3, RingInstance};
/// use hetbal::{validate, ViolationRule};
/// let ring = RingInstance::bidirectional(&[1, 2, 3, 1], &[4, 1, 1, 1], &[1.0; 4], &[1.0; 4]).unwrap();
/// let schedule = paper_algorithm3(&ring);
/// assert_eq!(schedule.makespan(), 3.0); // Lemma 6's number of steps...
/// let errors = validate(&ring, &schedule).unwrap_err();
/// assert!(errors.iter().any(|v| v.rule == ViolationRule::NotHeld)); // ...but invalid
/// ```
#[doc(alias = "Algorithm 3")]
pub fn paper_algorithm3(instance: &RingInstance) -> Schedule {
    let n = instance.len();
    let c = instance.c_succ()[0];
    let succ = |i: usize| (i + 1) % n;
    let pred = |i: usize| (i + n - 1) % n;
    let mut delta: Vec<i128> = (0..n).map(|i| instance.delta(i)).collect();
    let steps_bound =
        homogeneous_bidirectional_bound(instance).map_or(0, |b| (b / c).round() as usize);
    let max_steps = 2 * steps_bound + n;
    let mut transfers: Vec<Transfer> = Vec::new();
    // Index of the last transfer per (from, to), to extend runs over steps.
    let mut last: std::collections::HashMap<(usize, usize), usize> = Default::default();
    for step in 1..=max_steps {
        // Every slice C_{k,l} of 1 to n-1 processors with its unbalance.
        let mut slices: Vec<(usize, usize, i128)> = Vec::with_capacity(n * n);
        for k in 0..n {
            let mut sum = 0i128;
            for len in 1..n {
                let l = (k + len - 1) % n;
                sum += delta[l];
                slices.push((k, l, sum));
            }
        }
        let half = |v: i128| (v.abs() + 1) / 2;
        let dmax = delta
            .iter()
            .map(|d| d.abs())
            .chain(slices.iter().map(|s| half(s.2)))
            .max()
            .unwrap_or(0);
        if dmax == 0 {
            break;
        }
        let mut sends: BTreeSet<(usize, usize)> = BTreeSet::new();
        if dmax != 2 {
            for &(k, l, d) in &slices {
                if d > 1 && half(d) == dmax {
                    sends.insert((k, pred(k)));
                    sends.insert((l, succ(l)));
                }
                if d < -1 && half(d) == dmax {
                    sends.insert((pred(k), k));
                    sends.insert((succ(l), l));
                }
            }
        } else {
            for &(k, l, d) in &slices {
                if d >= 3 {
                    sends.insert((l, succ(l)));
                }
                if d == 4 {
                    sends.insert((k, pred(k)));
                }
                if d <= -3 {
                    sends.insert((pred(k), k));
                }
                if d == -4 {
                    sends.insert((succ(l), l));
                }
            }
        }
        let sending = |sends: &BTreeSet<(usize, usize)>, i: usize| {
            sends.contains(&(i, succ(i))) || sends.contains(&(i, pred(i)))
        };
        let receiving = |sends: &BTreeSet<(usize, usize)>, i: usize| {
            sends.contains(&(pred(i), i)) || sends.contains(&(succ(i), i))
        };
        for (i, &d) in delta.iter().enumerate() {
            if d == dmax && !sending(&sends, i) {
                sends.insert((i, succ(i)));
            }
        }
        for (i, &d) in delta.iter().enumerate() {
            if d == -dmax && !receiving(&sends, i) {
                sends.insert((pred(i), i));
            }
        }
        if dmax == 1 {
            // Lines 25-30, repeated until nothing changes.
            loop {
                let before = sends.len();
                for (i, &d) in delta.iter().enumerate() {
                    if d != 0 {
                        continue;
                    }
                    if sends.contains(&(pred(i), i)) {
                        sends.insert((i, succ(i)));
                    }
                    if sends.contains(&(succ(i), i)) {
                        sends.insert((i, pred(i)));
                    }
                }
                if sends.len() == before {
                    break;
                }
            }
        }
        let start = (step - 1) as f64 * c;
        for &(from, to) in &sends {
            delta[from] -= 1;
            delta[to] += 1;
            match last.get(&(from, to)) {
                Some(&t) if transfers[t].end == start => {
                    transfers[t].items += 1;
                    transfers[t].end = start + c;
                }
                _ => {
                    last.insert((from, to), transfers.len());
                    transfers.push(Transfer::new(from, to, 1, start, start + c));
                }
            }
        }
    }
    Schedule::new(transfers)
}
