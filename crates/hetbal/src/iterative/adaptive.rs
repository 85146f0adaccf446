//! [`Policy::Adaptive`]: the ski-rental guard, then the gain predicted by a speed
//! model learned from the run (a renewal process: Kaplan–Meier hazard of a change
//! by age, speeds drawn from those seen), sampled over futures. The simulator
//! ([`Simulator::run`]) and the online decider ([`super::online::Decider`]) both
//! decide through [`AdaptiveState`].

use super::scenario::SimulationError;
use super::simulator::{step_time, Policy, Run, Simulator};
use crate::random::SplitMix64;

impl Simulator {
    /// [`Policy::Adaptive`]: the guard, then the gain predicted by sampling futures
    /// of the speed model learned so far.
    pub(super) fn run_adaptive(&mut self) -> Result<Run, SimulationError> {
        let k_total = self.scenario.iterations;
        let mut adaptive = AdaptiveState::new(self.scenario.initial_loads.len());
        self.simulate(Policy::Adaptive.name(), |simulator, k, current| {
            if k >= 2 {
                adaptive.observe(
                    k,
                    simulator.times_per_item(k - 1),
                    simulator.times_per_item(k),
                    simulator.times_per_item(1),
                );
            }
            let Some((target, now, balanced)) = simulator.balancing_offer(k, current)? else {
                return Ok(None);
            };
            let cost = simulator.cost(current, target)?;
            let weighed = adaptive.weigh(&Offer {
                iteration: k,
                held: &simulator.loads[current],
                aimed: &simulator.loads[target],
                now,
                balanced,
                cost,
                first: simulator.times_per_item(1),
                times: simulator.times_per_item(k),
                border: &simulator.border,
                remaining: k_total - k,
            });
            Ok(weighed.redistribute.then_some(target))
        })
    }
}

/// [`Policy::Adaptive`] looks at a redistribution only once the time lost to
/// imbalance since the loads were last set reaches this share of its cost.
const ADAPTIVE_GUARD: f64 = 0.5;
/// Futures sampled per decision of [`Policy::Adaptive`].
const ADAPTIVE_SAMPLES: usize = 64;

/// What [`Policy::Adaptive`] carries along a run: what it measured of the speeds
/// ([`ChangeHistory`]) and the time lost to imbalance since the loads were last
/// set (its guard).
#[derive(Clone, Debug)]
pub(super) struct AdaptiveState {
    history: ChangeHistory,
    /// Time lost to imbalance since the loads were last set.
    pub(super) lost: f64,
}

/// A redistribution [`AdaptiveState::weigh`] weighs after iteration `iteration`:
/// from the loads `held` to the faster `aimed`, at the times per item `times`.
pub(super) struct Offer<'a> {
    /// The iteration just run (from 1): the age of the history and the seed.
    pub(super) iteration: u32,
    /// The loads in force.
    pub(super) held: &'a [u64],
    /// The balanced targets.
    pub(super) aimed: &'a [u64],
    /// The iteration time with `held` at `times` (> `balanced`).
    pub(super) now: f64,
    /// The iteration time with `aimed` at `times`.
    pub(super) balanced: f64,
    /// The redistribution's cost.
    pub(super) cost: f64,
    /// The times per item of iteration 1.
    pub(super) first: &'a [f64],
    /// The times per item of this iteration.
    pub(super) times: &'a [f64],
    /// Every processor's border time per iteration.
    pub(super) border: &'a [f64],
    /// Iterations still to run.
    pub(super) remaining: u32,
}

/// What [`AdaptiveState::weigh`] decided.
pub(super) struct Weighed {
    /// True when the redistribution pays.
    pub(super) redistribute: bool,
    /// The gain the speed model predicted (`None` when the guard stopped first).
    pub(super) predicted_gain: Option<f64>,
}

impl AdaptiveState {
    /// Nothing measured yet, for `processors` processors.
    pub(super) fn new(processors: usize) -> AdaptiveState {
        AdaptiveState {
            history: ChangeHistory::new(processors),
            lost: 0.0,
        }
    }

    /// Forgets the speeds measured (a new history for `processors` processors),
    /// keeping the time lost.
    pub(super) fn restart_history(&mut self, processors: usize) {
        self.history = ChangeHistory::new(processors);
    }

    /// Records the speed changes between iteration `k - 1` (times per item
    /// `before`) and iteration `k` (`after`); `first`: the times per item of
    /// iteration 1. O(n).
    pub(super) fn observe(&mut self, k: u32, before: &[f64], after: &[f64], first: &[f64]) {
        self.history.observe(k, before, after, first);
    }

    /// The gaps between successive speed changes seen so far.
    #[cfg(test)]
    pub(super) fn gaps(&self) -> &[u32] {
        &self.history.gaps
    }

    /// [`Policy::Adaptive`]'s decision on `offer`: adds the time it loses to the
    /// time lost; once that reaches [`ADAPTIVE_GUARD`] times its cost, predicts
    /// the gain with the speed model learned so far and redistributes when the
    /// gain exceeds the cost (the time lost then restarts from 0).
    ///
    /// Complexity: O(n + g + K) for the hazard of g changes seen, plus
    /// O(samples * remaining * n) past the guard.
    pub(super) fn weigh(&mut self, offer: &Offer) -> Weighed {
        self.lost += offer.now - offer.balanced;
        if self.lost < ADAPTIVE_GUARD * offer.cost {
            return Weighed {
                redistribute: false,
                predicted_gain: None,
            };
        }
        let ages = self.history.ages(offer.iteration);
        let model = SpeedModel {
            hazard: change_hazard(&self.history.gaps, &ages),
            ages: &ages,
            factors: &self.history.factors,
            first: offer.first,
            now: offer.times,
        };
        let gain = model.predicted_gain(
            offer.held,
            offer.aimed,
            offer.border,
            offer.remaining,
            u64::from(offer.iteration),
        );
        let redistribute = gain > offer.cost;
        if redistribute {
            self.lost = 0.0;
        }
        Weighed {
            redistribute,
            predicted_gain: Some(gain),
        }
    }
}

/// What [`Policy::Adaptive`] has measured of the speeds: the iteration in which
/// each processor's speed last changed (1 until it changes), the gaps between
/// successive changes of a processor (the first counted from iteration 1), and the
/// speeds after changes as factors of the processors' first speeds.
#[derive(Clone, Debug)]
struct ChangeHistory {
    last_change: Vec<u32>,
    gaps: Vec<u32>,
    factors: Vec<f64>,
}

impl ChangeHistory {
    fn new(processors: usize) -> ChangeHistory {
        ChangeHistory {
            last_change: vec![1; processors],
            gaps: Vec::new(),
            factors: Vec::new(),
        }
    }

    /// Records the changes between iteration `k - 1` (times per item `before`) and
    /// iteration `k` (`after`); `first`: the times per item of iteration 1. O(n).
    fn observe(&mut self, k: u32, before: &[f64], after: &[f64], first: &[f64]) {
        for i in 0..after.len() {
            if before[i] != after[i] {
                self.gaps.push(k - self.last_change[i]);
                self.last_change[i] = k;
                self.factors.push(first[i] / after[i]);
            }
        }
    }

    /// Each processor's age at iteration `k`: iterations since its speed last
    /// changed (a gap still open, so a censored one). O(n).
    fn ages(&self, k: u32) -> Vec<u32> {
        self.last_change.iter().map(|&last| k - last).collect()
    }
}

/// The probability that a processor's speed changes in its next iteration, by age
/// (iterations since its last change).
#[derive(Debug, PartialEq)]
struct ChangeHazard {
    /// `by_age[a]` for the ages `a = 1..=top` the run has seen (`by_age[0]` unused).
    by_age: Vec<f64>,
    /// The hazard at ages beyond them.
    beyond: f64,
}

impl ChangeHazard {
    fn at(&self, age: u32) -> f64 {
        self.by_age
            .get(age as usize)
            .copied()
            .unwrap_or(self.beyond)
    }
}

/// The hazard of a change by age, estimated from completed `gaps` and the current
/// `ages` (gaps still open: censored) as survival analysis does (Kaplan–Meier):
/// at age `a`, the changes after exactly `a` iterations over the gaps that reached
/// `a` (completed ones of length >= a and open ones of age >= a). Beyond the ages
/// seen, the rate of change since changes began: changes per processor-iteration
/// spent at ages >= the shortest gap (with no change seen, 0). O(n + g + top) for
/// g gaps and the largest age or gap `top`.
fn change_hazard(gaps: &[u32], ages: &[u32]) -> ChangeHazard {
    let top = gaps.iter().chain(ages).copied().max().unwrap_or(0) as usize;
    let (mut ended, mut reached) = (vec![0u64; top + 1], vec![0u64; top + 1]);
    for &gap in gaps {
        ended[gap as usize] += 1;
        reached[gap as usize] += 1;
    }
    for &age in ages {
        reached[age as usize] += 1;
    }
    let mut by_age = vec![0.0; top + 1];
    let mut at_risk = 0u64;
    for age in (1..=top).rev() {
        at_risk += reached[age];
        if at_risk > 0 {
            by_age[age] = ended[age] as f64 / at_risk as f64;
        }
    }
    let since = gaps
        .iter()
        .copied()
        .min()
        .map_or(0, |shortest| shortest - 1);
    let exposure: u64 = gaps
        .iter()
        .chain(ages)
        .map(|&length| u64::from(length.saturating_sub(since)))
        .sum();
    let beyond = if exposure > 0 {
        gaps.len() as f64 / exposure as f64
    } else {
        0.0
    };
    ChangeHazard { by_age, beyond }
}

/// The speeds as [`Policy::Adaptive`] models them from what the run measured (a
/// renewal model): in each iteration a processor of age `a` changes speed with the
/// probability `hazard.at(a + 1)`, to one of the `factors` seen so far times its
/// first speed, and its age restarts from 0.
struct SpeedModel<'a> {
    hazard: ChangeHazard,
    ages: &'a [u32],
    factors: &'a [f64],
    first: &'a [f64],
    now: &'a [f64],
}

impl SpeedModel<'_> {
    /// The gain of moving from `held` to `aimed`, predicted over at most
    /// `remaining` iterations: the mean over [`ADAPTIVE_SAMPLES`] sampled futures of
    /// `T(held) - T(aimed)` in each iteration, summed up to the iteration where the
    /// sum is largest (beyond it the new loads stop paying, and the policy can move
    /// again). The draws are seeded by `seed`: the same run decides the same.
    ///
    /// Complexity: O(samples * remaining * n).
    fn predicted_gain(
        &self,
        held: &[u64],
        aimed: &[u64],
        border: &[f64],
        remaining: u32,
        seed: u64,
    ) -> f64 {
        let changing = !self.factors.is_empty();
        let samples = if changing { ADAPTIVE_SAMPLES } else { 1 };
        let mut rng = SplitMix64(0xADA9_71FE ^ seed.wrapping_mul(0x9E37_79B9_7F4A_7C15));
        let mut per_iteration = vec![0.0; remaining as usize];
        let (mut times, mut ages) = (self.now.to_vec(), self.ages.to_vec());
        for _ in 0..samples {
            times.copy_from_slice(self.now);
            ages.copy_from_slice(self.ages);
            for gain in per_iteration.iter_mut() {
                if changing {
                    for (i, time) in times.iter_mut().enumerate() {
                        ages[i] += 1;
                        if rng.unit() < self.hazard.at(ages[i]) {
                            ages[i] = 0;
                            *time = self.first[i] / self.factors[rng.below(self.factors.len())];
                        }
                    }
                }
                *gain += step_time(held, &times, border) - step_time(aimed, &times, border);
            }
        }
        let (mut best, mut sum) = (0.0f64, 0.0);
        for gain in per_iteration {
            sum += gain / samples as f64;
            best = best.max(sum);
        }
        best
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The hazard by age, computed by hand: gaps 2 and 3 completed, gaps of 1 and 3
    /// still open. At age 1: no change among the 4 gaps that reached it; age 2: 1 of 3
    /// (the open gap of 1 stopped before); age 3: 1 of 2. Beyond: 2 changes over the
    /// 1 + 2 + 0 + 2 processor-iterations at ages >= 2 (the shortest gap).
    #[test]
    fn change_hazard_by_hand() {
        let hazard = change_hazard(&[2, 3], &[1, 3]);
        assert_eq!(hazard.by_age, vec![0.0, 0.0, 1.0 / 3.0, 0.5]);
        assert_eq!(hazard.beyond, 0.4);
        assert_eq!(
            (hazard.at(2), hazard.at(3), hazard.at(4), hazard.at(99)),
            (1.0 / 3.0, 0.5, 0.4, 0.4)
        );
        // No change seen: the speeds are expected to stay.
        let hazard = change_hazard(&[], &[7, 7]);
        assert_eq!((hazard.at(1), hazard.at(7), hazard.at(8)), (0.0, 0.0, 0.0));
    }

    /// The history and the estimate together recover known laws: speeds that change
    /// every 5 iterations exactly (hazard 0 before age 5, 1 at it), and speeds that
    /// change with probability 0.1 in every iteration (hazard 0.1 at every age).
    #[test]
    fn change_hazard_recovers_known_laws() {
        let (processors, iterations) = (4, 40u32);
        let mut history = ChangeHistory::new(processors);
        let time = |k: u32| vec![1.0 + f64::from((k - 1) / 5); processors];
        for k in 2..=iterations {
            history.observe(k, &time(k - 1), &time(k), &time(1));
        }
        let hazard = change_hazard(&history.gaps, &history.ages(iterations));
        assert_eq!(&hazard.by_age[1..], &[0.0, 0.0, 0.0, 0.0, 1.0]);
        assert_eq!(history.factors.len(), 7 * processors);

        let (processors, iterations) = (2_000, 60u32);
        let mut rng = SplitMix64(42);
        let mut history = ChangeHistory::new(processors);
        let first = vec![1.0; processors];
        let mut before = first.clone();
        for k in 2..=iterations {
            let after: Vec<f64> = before
                .iter()
                .map(|&t| if rng.unit() < 0.1 { t + 1.0 } else { t })
                .collect();
            history.observe(k, &before, &after, &first);
            before = after;
        }
        let hazard = change_hazard(&history.gaps, &history.ages(iterations));
        for age in 1..=20 {
            assert!(
                (hazard.at(age) - 0.1).abs() < 0.02,
                "age {age}: {}",
                hazard.at(age)
            );
        }
        assert!((hazard.beyond - 0.1).abs() < 0.005, "{}", hazard.beyond);
    }

    /// The renewal model predicts exactly when its hazard is 0 or 1. Processor 1 runs
    /// at half speed; loads [5, 5] take 10 per iteration, [7, 3] take 7. Every gap seen
    /// lasted 20 iterations: just after changes (ages 0) nothing changes in the next
    /// 10 iterations, so the gain is 10 * 3; at age 19 both processors change in the
    /// next iteration, back to their first speeds (the only factor seen), where
    /// [7, 3] loses 2 per iteration: no gain.
    #[test]
    fn renewal_model_predicts_by_age() {
        let (first, now) = ([1.0, 1.0], [1.0, 2.0]);
        let model = |ages| SpeedModel {
            hazard: change_hazard(&[20, 20], ages),
            ages,
            factors: &[1.0],
            first: &first,
            now: &now,
        };
        let (held, aimed, border) = ([5, 5], [7, 3], [0.0, 0.0]);
        assert_eq!(
            model(&[0, 0]).predicted_gain(&held, &aimed, &border, 10, 1),
            30.0
        );
        assert_eq!(
            model(&[19, 19]).predicted_gain(&held, &aimed, &border, 10, 1),
            0.0
        );
    }
}
