//! The decisions of the [`Balancer`](crate::balancer::Balancer), apart from any
//! communication: fed every rank's items and compute time after each iteration,
//! a [`Decider`] says whether to move the data, where to, and what it costs, with
//! any online policy of [`hetbal::iterative`] ([`Policy::Never`],
//! [`Policy::Fixed`], [`Policy::At`], [`Policy::Profitability`],
//! [`Policy::Adaptive`]). Fed the iteration times of a simulated scenario, it
//! takes the decisions the simulator takes ([`hetbal::iterative::Simulator::run`]):
//! the same iterations, the same targets, the same costs.
//!
//! # What a rank must report: its compute time
//! The policies compare each rank's time per item (compute seconds over items).
//! A rank that times its whole iteration, halo exchange included, waits in the
//! exchange for the slowest neighbour: every rank then reports about the slowest
//! rank's time, every rank looks equally fast, the balanced targets are the
//! current loads, and nothing ever moves. Time the compute phase only
//! ([`ComputeTimer`]).
//!
//! # Noise
//! Measured times jitter. A rank's time per item counts as changed only when it
//! moves by more than a tolerance ([`Decider::with_tolerance`], 5% by default)
//! from the value in force; otherwise the value in force is kept. The policies
//! see these values: the adaptive policy learns how often speeds really change,
//! not how noisy the clock is. Likewise, nothing moves unless the balanced
//! iteration is faster than the current one by more than the tolerance. With a
//! tolerance of 0 the decider takes exactly the simulator's decisions.
//!
//! # Copied logic
//! [`Policy::Adaptive`]'s speed model (the change history, the hazard of a change
//! by age, the sampled futures) lives inside `hetbal::iterative::Simulator`, which
//! offers no way to feed it one iteration at a time; this module repeats it, line
//! for line, and the tests check that both decide alike.

use std::fmt;
use std::time::Instant;

use hetbal::balance::balanced_targets;
use hetbal::iterative::Policy;
use hetbal::random::SplitMix64;
use hetbal::ring::{plan, RingInstance};

use crate::ring::link_flows;

/// The online policy of a name: `adaptive`, `profitability`, `never` (or
/// `none`, as [`Policy::name`] says), `fixed-N` (N evenly spaced
/// redistributions); `None` for any other name.
///
/// # Example
/// ```
/// use hetbal::iterative::Policy;
/// use hetbal_mpi::decider::policy_from_name;
/// assert_eq!(policy_from_name("fixed-4"), Some(Policy::Fixed { redistributions: 4 }));
/// assert_eq!(policy_from_name("adaptive"), Some(Policy::Adaptive));
/// assert_eq!(policy_from_name("offline-best"), None);
/// ```
pub fn policy_from_name(name: &str) -> Option<Policy> {
    match name {
        "adaptive" => Some(Policy::Adaptive),
        "profitability" => Some(Policy::Profitability),
        "never" | "none" => Some(Policy::Never),
        _ => name
            .strip_prefix("fixed-")
            .and_then(|r| r.parse().ok())
            .map(|redistributions| Policy::Fixed { redistributions }),
    }
}

/// Measures a rank's compute time: wrap each compute phase in
/// [`ComputeTimer::time`], leave the halo exchange outside, and hand
/// [`ComputeTimer::take`] to the balancer after each iteration.
///
/// # Example
/// ```
/// use hetbal_mpi::decider::ComputeTimer;
/// let mut timer = ComputeTimer::new();
/// let sum: u64 = timer.time(|| (0..1000u64).sum());
/// assert_eq!(sum, 499_500);
/// let seconds = timer.take(); // this iteration's compute time
/// assert!(seconds >= 0.0);
/// assert_eq!(timer.seconds(), 0.0);
/// ```
#[derive(Clone, Debug, Default)]
pub struct ComputeTimer {
    seconds: f64,
}

impl ComputeTimer {
    /// A timer at zero.
    pub fn new() -> Self {
        ComputeTimer::default()
    }

    /// Runs `compute`, adding its wall-clock time to the timer.
    pub fn time<R>(&mut self, compute: impl FnOnce() -> R) -> R {
        let started = Instant::now();
        let result = compute();
        self.seconds += started.elapsed().as_secs_f64();
        result
    }

    /// Seconds timed since the last [`ComputeTimer::take`].
    pub fn seconds(&self) -> f64 {
        self.seconds
    }

    /// Seconds timed since the last take, and back to zero.
    pub fn take(&mut self) -> f64 {
        std::mem::take(&mut self.seconds)
    }
}

/// Why the balancer cannot decide. Every rank finds the same reason (the
/// decision runs on the same numbers everywhere).
#[derive(Clone, Debug, PartialEq)]
pub enum DecideError {
    /// [`Policy::OfflineBest`] needs the future speeds: no running code has them.
    OfflinePolicy,
    /// The ring's links do not match the ranks.
    Links {
        /// Links given (`c_succ`, and `c_pred` when given, must have one per rank).
        links: usize,
        /// Ranks reporting.
        ranks: usize,
    },
    /// A rank reported no items or a time that is not positive.
    Measure {
        /// The rank.
        rank: usize,
        /// Items it reported.
        items: u64,
        /// Seconds it reported.
        seconds: f64,
    },
    /// The balanced targets or the ring plan could not be computed.
    Plan(String),
}

impl fmt::Display for DecideError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            DecideError::OfflinePolicy => write!(
                f,
                "the offline-best policy needs the future speeds; at run time use never, \
                 fixed-K, at, profitability or adaptive"
            ),
            DecideError::Links { links, ranks } => write!(
                f,
                "the balancer's ring has {links} links but {ranks} ranks report (one link per rank)"
            ),
            DecideError::Measure {
                rank,
                items,
                seconds,
            } => write!(
                f,
                "rank {rank} reported {items} items and {seconds} s: every rank needs items and a \
                 positive compute time"
            ),
            DecideError::Plan(reason) => write!(f, "cannot plan the balancing: {reason}"),
        }
    }
}

impl std::error::Error for DecideError {}

/// What was decided after one iteration, identical on every rank.
#[derive(Clone, Debug, PartialEq)]
pub struct Decision {
    /// The iteration just measured (from 1).
    pub iteration: u32,
    /// True when the items move to `targets`.
    pub redistribute: bool,
    /// The iteration time with the current loads: the slowest rank's compute
    /// (its items times its time per item), plus its border time if any.
    pub current_step: f64,
    /// The iteration time with the balanced targets, at the same speeds.
    pub balanced_step: f64,
    /// The plan's makespan: the predicted time of the redistribution (seconds;
    /// 0 when the targets are the loads).
    pub redistribution_time: f64,
    /// The gain the policy predicted over the remaining iterations, when it
    /// weighed one: [`Policy::Profitability`] `R × (current − balanced)`,
    /// [`Policy::Adaptive`] its speed model's (`None` when its guard stopped it
    /// first, and for the other policies).
    pub predicted_gain: Option<f64>,
    /// Items per rank before.
    pub loads: Vec<u64>,
    /// Items per rank after balancing (the loads again when nothing moves).
    pub targets: Vec<u64>,
    /// The plan's net flow on each link (i, i+1), positive clockwise (all zero
    /// when nothing moves).
    pub flows: Vec<i128>,
    /// The global position of each rank's first item once the decision is
    /// carried out (positions count from rank 0's first item at the first
    /// decision, and wrap at the total).
    pub firsts: Vec<u64>,
}

/// Decides after every iteration whether moving the data pays, with a policy of
/// [`hetbal::iterative`], from every rank's items and compute time. Pure: no
/// communication (the [`Balancer`](crate::balancer::Balancer) gathers the
/// numbers and runs one on every rank).
///
/// # Example
/// ```
/// use hetbal::iterative::Policy;
/// use hetbal_mpi::decider::Decider;
/// // Two ranks of 50 items; rank 1 computes twice slower. Links: 1 ms per item.
/// let mut decider = Decider::new(Policy::Profitability, vec![1e-3; 2], Some(vec![1e-3; 2])).unwrap();
/// let d = decider.observe(&[50, 50], &[0.5, 1.0], 100).unwrap();
/// assert!(d.redistribute);
/// assert_eq!(d.targets, vec![67, 33]);
/// // Rank 1 sends its last 17 items (83..100) on to rank 0, before rank 0's own:
/// assert_eq!(d.flows, vec![0, 17]);
/// assert_eq!(d.firsts, vec![83, 50]);
/// ```
#[derive(Clone, Debug)]
pub struct Decider {
    policy: Policy,
    c_succ: Vec<f64>,
    c_pred: Option<Vec<f64>>,
    border: Vec<f64>,
    tolerance: f64,
    /// Iterations observed.
    iteration: u32,
    /// Times per item of iteration 1, and those in force.
    first: Vec<f64>,
    times: Vec<f64>,
    /// [`Policy::Adaptive`]: time lost to imbalance since the loads were set.
    lost: f64,
    history: ChangeHistory,
    /// Global position of rank 0's first item.
    origin: u64,
}

impl Decider {
    /// A decider for a ring with links `c_succ` (seconds per item from rank i to
    /// i+1) and `c_pred` (from rank i to i-1; `None`: the plans use only the
    /// clockwise links).
    ///
    /// # Errors
    /// [`DecideError::OfflinePolicy`] for [`Policy::OfflineBest`].
    pub fn new(
        policy: Policy,
        c_succ: Vec<f64>,
        c_pred: Option<Vec<f64>>,
    ) -> Result<Decider, DecideError> {
        if policy == Policy::OfflineBest {
            return Err(DecideError::OfflinePolicy);
        }
        Ok(Decider {
            policy,
            c_succ,
            c_pred,
            border: Vec::new(),
            tolerance: 0.05,
            iteration: 0,
            first: Vec::new(),
            times: Vec::new(),
            lost: 0.0,
            history: ChangeHistory::new(0),
            origin: 0,
        })
    }

    /// The same decider with a relative tolerance for noise (default 0.05): a
    /// rank's time per item that moves by less is taken as unchanged, and a
    /// balanced iteration faster by less is no reason to move. 0: every
    /// difference counts, as in the simulator.
    pub fn with_tolerance(mut self, tolerance: f64) -> Decider {
        self.tolerance = tolerance.max(0.0);
        self
    }

    /// The same decider adding `border[i]` seconds to rank i's iteration time (a
    /// border exchange that does not depend on the loads, as the simulator's
    /// `border_items`); none by default.
    pub fn with_border(mut self, border: Vec<f64>) -> Decider {
        self.border = border;
        self
    }

    /// Replaces the ring's links (for example after measuring them again), keeping
    /// what the decider has learned.
    pub fn set_links(&mut self, c_succ: Vec<f64>, c_pred: Option<Vec<f64>>) {
        self.c_succ = c_succ;
        self.c_pred = c_pred;
    }

    /// The ring's links: seconds per item to the successor and to the
    /// predecessor (`None`: only clockwise moves).
    pub fn links(&self) -> (&[f64], Option<&[f64]>) {
        (&self.c_succ, self.c_pred.as_deref())
    }

    /// What a decision to redistribute changes in the decider (the first
    /// positions, the adaptive policy's time lost), to put back with
    /// [`Decider::forget`] when the redistribution failed.
    pub(crate) fn mark(&self) -> (u64, f64) {
        (self.origin, self.lost)
    }

    /// Forgets the decisions since `mark` was taken (see [`Decider::mark`]):
    /// what was measured stays.
    pub(crate) fn forget(&mut self, mark: (u64, f64)) {
        (self.origin, self.lost) = mark;
    }

    /// The policy deciding.
    pub fn policy(&self) -> &Policy {
        &self.policy
    }

    /// Iterations observed so far.
    pub fn iterations(&self) -> u32 {
        self.iteration
    }

    /// Decides after one more iteration.
    ///
    /// # Arguments
    /// * `loads` - items of every rank during the iteration (each >= 1);
    /// * `seconds` - every rank's compute time in it (each > 0): not its wall
    ///   time (see the module's docs);
    /// * `remaining` - iterations still to run (0: nothing moves).
    ///
    /// # Returns
    /// The [`Decision`]; when it redistributes, the next call's loads are its
    /// targets.
    ///
    /// # Errors
    /// [`DecideError::Links`], [`DecideError::Measure`], [`DecideError::Plan`].
    ///
    /// # Complexity
    /// O(n log n) for the targets, plus a ring plan when they differ from the
    /// loads; [`Policy::Adaptive`] past its guard samples 64 futures:
    /// O(64 × remaining × n).
    pub fn observe(
        &mut self,
        loads: &[u64],
        seconds: &[f64],
        remaining: u64,
    ) -> Result<Decision, DecideError> {
        let n = loads.len();
        if self.c_succ.len() != n || self.c_pred.as_ref().is_some_and(|c| c.len() != n) {
            return Err(DecideError::Links {
                links: self.c_succ.len(),
                ranks: n,
            });
        }
        if let Some(rank) =
            (0..n).find(|&i| loads[i] == 0 || !seconds.get(i).is_some_and(|s| *s > 0.0))
        {
            return Err(DecideError::Measure {
                rank,
                items: loads[rank],
                seconds: seconds.get(rank).copied().unwrap_or(f64::NAN),
            });
        }
        if self.border.len() != n {
            self.border.resize(n, 0.0);
        }
        // The times per item in force: a measure within the tolerance keeps the
        // value in force.
        let measured = (0..n).map(|i| seconds[i] / loads[i] as f64);
        let before = std::mem::take(&mut self.times);
        self.times = if before.len() == n {
            measured
                .zip(&before)
                .map(|(t, &held)| {
                    if (t - held).abs() > self.tolerance * held {
                        t
                    } else {
                        held
                    }
                })
                .collect()
        } else {
            measured.collect()
        };
        self.iteration += 1;
        let k = self.iteration;
        if k == 1 || self.first.len() != n {
            self.first = self.times.clone();
            self.history = ChangeHistory::new(n);
        } else if self.policy == Policy::Adaptive {
            self.history.observe(k, &before, &self.times, &self.first);
        }
        let total: u64 = loads.iter().sum();
        let targets = balanced_targets(total, &self.times)
            .map_err(|e| DecideError::Plan(e.to_string()))?
            .targets;
        let now = step_time(loads, &self.times, &self.border);
        let balanced = step_time(&targets, &self.times, &self.border);
        let (redistribution_time, flows) = if targets == loads {
            (0.0, vec![0; n])
        } else {
            self.plan(loads, &targets)?
        };
        let mut predicted_gain = None;
        // Within the tolerance, the gain is noise.
        let beyond_noise = self.tolerance == 0.0 || now - balanced > self.tolerance * now;
        let redistribute = targets != loads
            && remaining > 0
            && beyond_noise
            && match &self.policy {
                Policy::Never | Policy::OfflineBest => false,
                Policy::Fixed { redistributions } => {
                    let (k, r) = (u64::from(k), u64::from(*redistributions));
                    let k_total = k.saturating_add(remaining);
                    (1..=r).any(|m| k_total * m / (r + 1) == k)
                }
                Policy::At(points) => points.contains(&k),
                Policy::Profitability => {
                    let r = remaining as f64;
                    predicted_gain = Some(r * now - r * balanced);
                    balanced < now && redistribution_time + r * balanced < r * now
                }
                Policy::Adaptive => {
                    if balanced < now {
                        self.lost += now - balanced;
                    }
                    if balanced >= now || self.lost < ADAPTIVE_GUARD * redistribution_time {
                        false
                    } else {
                        let ages = self.history.ages(k);
                        let model = SpeedModel {
                            hazard: change_hazard(&self.history.gaps, &ages),
                            ages: &ages,
                            factors: &self.history.factors,
                            first: &self.first,
                            now: &self.times,
                        };
                        let horizon = u32::try_from(remaining).unwrap_or(u32::MAX);
                        let gain = model.predicted_gain(
                            loads,
                            &targets,
                            &self.border,
                            horizon,
                            u64::from(k),
                        );
                        predicted_gain = Some(gain);
                        if gain > redistribution_time {
                            self.lost = 0.0;
                        }
                        gain > redistribution_time
                    }
                }
            };
        let (targets, flows) = if redistribute {
            if total > 0 {
                let into_rank_0 = flows[n - 1].rem_euclid(i128::from(total)) as u64;
                self.origin = (self.origin + total - into_rank_0) % total;
            }
            (targets, flows)
        } else {
            (loads.to_vec(), vec![0; n])
        };
        let firsts = targets
            .iter()
            .scan(self.origin, |at, &x| {
                let first = *at;
                *at = (*at + x) % total.max(1);
                Some(first)
            })
            .collect();
        Ok(Decision {
            iteration: k,
            redistribute,
            current_step: now,
            balanced_step: balanced,
            redistribution_time,
            predicted_gain,
            loads: loads.to_vec(),
            targets,
            flows,
            firsts,
        })
    }

    /// The ring plan from `loads` to `targets`: its makespan and the net flow on
    /// every link.
    fn plan(&self, loads: &[u64], targets: &[u64]) -> Result<(f64, Vec<i128>), DecideError> {
        let ring = match &self.c_pred {
            Some(cp) => RingInstance::bidirectional(loads, targets, &self.c_succ, cp),
            None => RingInstance::unidirectional(loads, targets, &self.c_succ),
        }
        .map_err(|e| DecideError::Plan(e.to_string()))?;
        let the_plan = plan(&ring, None).map_err(|e| DecideError::Plan(e.to_string()))?;
        Ok((the_plan.makespan, link_flows(loads.len(), &the_plan.flows)))
    }
}

// What follows repeats `hetbal::iterative`'s private speed model of
// `Policy::Adaptive` (see the module's docs): keep both alike.

/// [`Policy::Adaptive`] looks at a redistribution only once the time lost to
/// imbalance since the loads were last set reaches this share of its cost.
const ADAPTIVE_GUARD: f64 = 0.5;
/// Futures sampled per decision of [`Policy::Adaptive`].
const ADAPTIVE_SAMPLES: usize = 64;

/// What [`Policy::Adaptive`] has measured of the speeds: the iteration in which
/// each rank's speed last changed (1 until it changes), the gaps between
/// successive changes of a rank (the first counted from iteration 1), and the
/// speeds after changes as factors of the ranks' first speeds.
#[derive(Clone, Debug)]
struct ChangeHistory {
    last_change: Vec<u32>,
    gaps: Vec<u32>,
    factors: Vec<f64>,
}

impl ChangeHistory {
    fn new(ranks: usize) -> ChangeHistory {
        ChangeHistory {
            last_change: vec![1; ranks],
            gaps: Vec::new(),
            factors: Vec::new(),
        }
    }

    /// Records the changes between iteration `k - 1` (times per item `before`)
    /// and iteration `k` (`after`); `first`: the times of iteration 1. O(n).
    fn observe(&mut self, k: u32, before: &[f64], after: &[f64], first: &[f64]) {
        for i in 0..after.len() {
            if before[i] != after[i] {
                self.gaps.push(k - self.last_change[i]);
                self.last_change[i] = k;
                self.factors.push(first[i] / after[i]);
            }
        }
    }

    /// Each rank's age at iteration `k`: iterations since its last change.
    fn ages(&self, k: u32) -> Vec<u32> {
        self.last_change.iter().map(|&last| k - last).collect()
    }
}

/// The probability that a rank's speed changes in its next iteration, by age.
struct ChangeHazard {
    /// `by_age[a]` for the ages `a = 1..=top` seen (`by_age[0]` unused).
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

/// The hazard of a change by age (Kaplan–Meier over the completed `gaps` and the
/// open `ages`); beyond the ages seen, changes per rank-iteration since changes
/// began. O(n + g + top).
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

/// The speeds as [`Policy::Adaptive`] models them (a renewal model).
struct SpeedModel<'a> {
    hazard: ChangeHazard,
    ages: &'a [u32],
    factors: &'a [f64],
    first: &'a [f64],
    now: &'a [f64],
}

impl SpeedModel<'_> {
    /// The gain of moving from `held` to `aimed`, predicted over at most
    /// `remaining` iterations (the mean over sampled futures, summed up to where
    /// the sum is largest), the draws seeded by `seed`.
    /// O(samples × remaining × n).
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
        let mut rng = SplitMix64::new(0xADA9_71FE ^ seed.wrapping_mul(0x9E37_79B9_7F4A_7C15));
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

/// Time of one iteration: the slowest rank's compute (`loads[i] * times[i]`)
/// plus its border time. O(n).
fn step_time(loads: &[u64], times: &[f64], border: &[f64]) -> f64 {
    (0..loads.len())
        .map(|i| loads[i] as f64 * times[i] + border.get(i).copied().unwrap_or(0.0))
        .fold(0.0, f64::max)
}

#[cfg(test)]
mod tests;
