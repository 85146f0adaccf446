//! The simulator: the policies ([`Policy`]), the outcome of a run ([`Run`]), and
//! the [`Simulator`] that runs a scenario's iterations and redistributions,
//! sharing balanced targets and plans between policies. The adaptive policy's
//! speed model is in `adaptive`, the offline optimum in `offline`.

use std::collections::HashMap;

use super::scenario::{check, invalid, Scenario, SimulationError};
use crate::balance::balanced_targets;
use crate::ring::{plan, InstanceError, RingInstance, RingKind};

/// When to redistribute.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Policy {
    /// Never redistribute (the reference of normalised times).
    Never,
    /// `redistributions` evenly spaced redistributions: after iterations
    /// `iterations * m / (redistributions + 1)` for `m = 1..=redistributions`
    /// (with 100 iterations: 1 → after 50; 4 → 20, 40, 60, 80; 9 → every 10;
    /// 19 → every 5: the ring paper's schemes).
    Fixed {
        /// How many redistributions.
        redistributions: u32,
    },
    /// Redistribute after each of these iterations (each in `1..iterations`).
    At(Vec<u32>),
    /// After every iteration, redistribute to the balanced targets when both hold:
    /// * **the guard:** the time already lost to imbalance since the loads were
    ///   last set (`sum T_step - T'_step` over the iterations measured) reaches half
    ///   the plan's cost (a ski-rental rule: do not pay for a change that may not
    ///   last before it has cost something);
    /// * **the predicted gain repays the plan.** The policy models the speeds from
    ///   what the run has measured, as a renewal process: the probability that a
    ///   processor's speed changes in its next iteration depends on its age
    ///   (iterations since its last change), estimated from the gaps between the
    ///   changes seen so far and the gaps still open (Kaplan–Meier hazard); beyond
    ///   the ages seen, the rate of change since changes began. A change takes one
    ///   of the speeds seen after earlier changes (as a factor of the processor's
    ///   first speed). The policy samples 64 futures of the remaining iterations
    ///   (seeded by the iteration: runs are reproducible) and sums the mean gain
    ///   `T_step - T'_step` of each iteration up to where the sum is largest
    ///   (later, the new loads stop paying and the policy can move again).
    ///   Redistribute when that sum exceeds the plan's cost.
    ///
    /// So it learns when changes come as well as how often: after a burst of
    /// changes that each processor went through once it expects calm (no gap that
    /// short was seen) and balances; in the middle of a burst it expects the
    /// processors that have not changed yet to change at the rate seen since the
    /// burst began, not at the lower rate of the whole run, and waits longer.
    ///
    /// With speeds that never change it is model.md's rule over the whole remaining
    /// run, once the guard holds. O(64 * R * n) per decision that passes the guard,
    /// plus O(n + g + K) for the hazard of g changes seen.
    Adaptive,
    /// model.md's profitability rule alone: after every iteration, redistribute
    /// when `cost + R * T'_step < R * T_step` for the `R` remaining iterations,
    /// assuming the speeds just measured persist. It chases every change, and
    /// speeds that changed tend to change again (see the experiment), which
    /// [`Policy::Adaptive`] learns from the run.
    Profitability,
    /// The best set of redistribution points, knowing the future speeds (dynamic
    /// programming): the reference no policy of this module can beat.
    OfflineBest,
}

impl Policy {
    /// The policy's name in experiment tables: `none`, `fixed-N`, `at`,
    /// `profitability`, `adaptive`, `offline-best`.
    ///
    /// ```
    /// use hetbal::iterative::Policy;
    /// assert_eq!(Policy::Fixed { redistributions: 4 }.name(), "fixed-4");
    /// ```
    pub fn name(&self) -> String {
        match self {
            Policy::Never => "none".into(),
            Policy::Fixed { redistributions } => format!("fixed-{redistributions}"),
            Policy::At(_) => "at".into(),
            Policy::Adaptive => "adaptive".into(),
            Policy::Profitability => "profitability".into(),
            Policy::OfflineBest => "offline-best".into(),
        }
    }

    /// The policy of a name, the inverse of [`Policy::name`]: `none` (or
    /// `never`), `fixed-N`, `profitability`, `adaptive`, `offline-best`.
    ///
    /// # Arguments
    /// * `name` - the policy's name.
    ///
    /// # Returns
    /// The policy; `None` for any other name, and for `at`, whose points a name
    /// does not give.
    ///
    /// # Complexity
    /// O(length of the name).
    ///
    /// # Example
    /// ```
    /// use hetbal::iterative::Policy;
    /// assert_eq!(Policy::from_name("fixed-4"), Some(Policy::Fixed { redistributions: 4 }));
    /// assert_eq!(Policy::from_name("never"), Some(Policy::Never));
    /// assert_eq!(Policy::from_name("offline-best"), Some(Policy::OfflineBest));
    /// assert_eq!(Policy::from_name("at"), None);
    /// ```
    pub fn from_name(name: &str) -> Option<Policy> {
        match name {
            "never" | "none" => Some(Policy::Never),
            "profitability" => Some(Policy::Profitability),
            "adaptive" => Some(Policy::Adaptive),
            "offline-best" => Some(Policy::OfflineBest),
            _ => name
                .strip_prefix("fixed-")
                .and_then(|r| r.parse().ok())
                .map(|redistributions| Policy::Fixed { redistributions }),
        }
    }
}

/// The iterations after which [`Policy::Fixed`] with `redistributions`
/// redistributes in a run of `iterations` iterations:
/// `iterations * m / (redistributions + 1)` for `m = 1..=redistributions`, in
/// order (repeated, or 0, when the run is short). O(1) per point.
pub(super) fn fixed_points(redistributions: u32, iterations: u64) -> impl Iterator<Item = u64> {
    let r = u64::from(redistributions);
    (1..=r).map(move |m| iterations * m / (r + 1))
}

/// model.md's profitability rule ([`Policy::Profitability`]): moving at `cost`
/// from loads taking `now` per iteration to loads taking `balanced` pays over
/// `remaining` iterations when `cost + remaining * balanced < remaining * now`.
pub(super) fn profitable(cost: f64, remaining: f64, now: f64, balanced: f64) -> bool {
    balanced < now && cost + remaining * balanced < remaining * now
}

/// The ring instance of a redistribution from `loads` to `targets`: bidirectional
/// on the links `c_succ` and `c_pred`, or unidirectional on `c_succ` when
/// `c_pred` is `None`.
pub(super) fn redistribution_instance(
    loads: &[u64],
    targets: &[u64],
    c_succ: &[f64],
    c_pred: Option<&[f64]>,
) -> Result<RingInstance, InstanceError> {
    match c_pred {
        Some(c_pred) => RingInstance::bidirectional(loads, targets, c_succ, c_pred),
        None => RingInstance::unidirectional(loads, targets, c_succ),
    }
}

/// One redistribution of a run.
#[derive(Clone, Debug, PartialEq)]
pub struct Redistribution {
    /// It happened after this iteration (from 1).
    pub after_iteration: u32,
    /// Its cost: the plan's makespan times `comm_scale`.
    pub cost: f64,
    /// The loads after it.
    pub loads: Vec<u64>,
}

/// The outcome of one simulated run.
#[derive(Clone, Debug, PartialEq)]
pub struct Run {
    /// The policy's name ([`Policy::name`]).
    pub policy: String,
    /// Time of the whole run: iterations plus redistributions.
    pub total_time: f64,
    /// Time spent in redistributions.
    pub redistribution_time: f64,
    /// The redistributions that moved data, in order.
    pub redistributions: Vec<Redistribution>,
    /// The time at which each iteration ended (`iterations` entries, never
    /// decreasing).
    pub iteration_ends: Vec<f64>,
}

/// Index of a load vector interned by the simulator: 0 = the initial loads,
/// `1 + e` = the balanced targets of speed epoch `e`.
pub(super) type LoadsId = usize;

/// Runs policies on one [`Scenario`], sharing the work they have in common: the
/// balanced targets of each speed epoch, the iteration times, and the plan of every
/// redistribution (planned once, at unit communication scale, and scaled).
///
/// # Complexity
/// Building: O(c log c + E·n) for c speed changes and E ≤ iterations speed
/// epochs (intervals of iterations where no speed changes); the balanced targets
/// of an epoch are computed when a policy first asks for them. Memory O(E·n).
/// [`Simulator::run`]: O(K·n) for K iterations, plus one plan per redistribution;
/// [`Policy::OfflineBest`]: O(K² + E²·n) steps and at most E²/2 plans.
#[derive(Debug)]
pub struct Simulator {
    pub(super) scenario: Scenario,
    /// `epoch_of[k - 1]` = speed epoch of iteration k.
    pub(super) epoch_of: Vec<usize>,
    /// Time per item of every processor in each epoch.
    pub(super) epoch_times: Vec<Vec<f64>>,
    /// Interned load vectors ([`LoadsId`]); balanced targets repeated across
    /// epochs are stored once.
    pub(super) loads: Vec<Vec<u64>>,
    /// Loads id of the balanced targets of each epoch, computed when first asked.
    epoch_targets: Vec<Option<LoadsId>>,
    /// Unit-scale plan makespans by (from, to).
    plans: HashMap<(LoadsId, LoadsId), f64>,
    /// `border[i]`: processor i's border exchange, comm_scale applied.
    pub(super) border: Vec<f64>,
}

impl Simulator {
    /// Validates the scenario and precomputes the speed epochs and their balanced
    /// targets.
    ///
    /// # Errors
    /// [`SimulationError`] naming the field and processor at fault.
    pub fn new(scenario: Scenario) -> Result<Simulator, SimulationError> {
        check(&scenario)?;
        let k = scenario.iterations as usize;
        // Iteration k runs at the factors in force at date k - 1: a new epoch starts
        // at iteration k when some profile changes in (k - 2, k - 1].
        let mut starts: Vec<u32> = scenario
            .profiles
            .iter()
            .flat_map(|p| p.change_dates(f64::from(scenario.iterations)))
            .map(|d| (d.ceil() as u32).saturating_add(1))
            .filter(|&first| first >= 2 && first <= scenario.iterations)
            .collect();
        starts.sort_unstable();
        starts.dedup();
        let mut epoch_of = Vec::with_capacity(k);
        let mut epoch_times: Vec<Vec<f64>> = Vec::with_capacity(starts.len() + 1);
        let mut next_start = starts.iter().peekable();
        for iteration in 1..=scenario.iterations {
            if iteration == 1 || next_start.next_if(|&&s| s == iteration).is_some() {
                let date = f64::from(iteration - 1);
                let times: Vec<f64> = scenario
                    .time_per_item
                    .iter()
                    .zip(&scenario.profiles)
                    .map(|(&t, p)| t / p.factor_at(date))
                    .collect();
                if epoch_times.last() != Some(&times) {
                    epoch_times.push(times);
                }
            }
            epoch_of.push(epoch_times.len() - 1);
        }
        let loads = vec![scenario.initial_loads.clone()];
        let epoch_targets = vec![None; epoch_times.len()];
        let mut simulator = Simulator {
            epoch_of,
            epoch_times,
            loads,
            epoch_targets,
            plans: HashMap::new(),
            border: Vec::new(),
            scenario,
        };
        simulator.set_comm_scale(simulator.scenario.comm_scale)?;
        Ok(simulator)
    }

    /// The scenario simulated.
    pub fn scenario(&self) -> &Scenario {
        &self.scenario
    }

    /// Changes the communication scale; the plans already made are kept (they are
    /// stored at unit scale).
    ///
    /// # Errors
    /// [`SimulationError::InvalidValue`] unless `comm_scale` is finite and >= 0.
    pub fn set_comm_scale(&mut self, comm_scale: f64) -> Result<(), SimulationError> {
        if !comm_scale.is_finite() || comm_scale < 0.0 {
            return Err(invalid(
                "comm_scale",
                None,
                comm_scale,
                "must be finite and >= 0",
            ));
        }
        let s = &mut self.scenario;
        s.comm_scale = comm_scale;
        let b = s.border_items as f64;
        self.border = (0..s.c_succ.len())
            .map(|i| b * (s.c_succ[i] + s.c_pred[i]) * comm_scale)
            .collect();
        Ok(())
    }

    /// Time each processor takes to compute one item in iteration `k` (from 1 to
    /// `iterations`): `time_per_item[i] / factor_i(k)`, as the iteration times
    /// use it (processor `i` computes its load in `loads[i] * times[i]`).
    ///
    /// # Panics
    /// When `k` is 0 or above `iterations`.
    pub fn times_per_item(&self, k: u32) -> &[f64] {
        &self.epoch_times[self.epoch_of[k as usize - 1]]
    }

    /// Time of iteration `k` (from 1) with the loads `loads`.
    pub(super) fn iteration_time(&self, loads: LoadsId, k: u32) -> f64 {
        let times = &self.epoch_times[self.epoch_of[k as usize - 1]];
        step_time(&self.loads[loads], times, &self.border)
    }

    /// The loads a redistribution after iteration `k` aims at.
    pub(super) fn targets_after(&mut self, k: u32) -> Result<LoadsId, SimulationError> {
        let epoch = self.epoch_of[k as usize - 1];
        if let Some(id) = self.epoch_targets[epoch] {
            return Ok(id);
        }
        let total: u64 = self.scenario.initial_loads.iter().sum();
        let targets = balanced_targets(total, &self.epoch_times[epoch])
            .map_err(SimulationError::Balance)?
            .targets;
        // Intern: targets repeated across epochs are stored (and planned) once.
        let id = match self.loads.iter().position(|l| *l == targets) {
            Some(id) => id,
            None => {
                self.loads.push(targets);
                self.loads.len() - 1
            }
        };
        self.epoch_targets[epoch] = Some(id);
        Ok(id)
    }

    /// The cost of redistributing from `from` to `to` at the current scale.
    pub(super) fn cost(&mut self, from: LoadsId, to: LoadsId) -> Result<f64, SimulationError> {
        if from == to {
            return Ok(0.0);
        }
        if let Some(&makespan) = self.plans.get(&(from, to)) {
            return Ok(makespan * self.scenario.comm_scale);
        }
        let s = &self.scenario;
        let (loads, targets) = (&self.loads[from], &self.loads[to]);
        let c_pred = (s.kind == RingKind::Bidirectional).then_some(&s.c_pred[..]);
        let instance = redistribution_instance(loads, targets, &s.c_succ, c_pred)
            .map_err(SimulationError::Instance)?;
        let makespan = plan(&instance, None)
            .map_err(SimulationError::Plan)?
            .makespan;
        self.plans.insert((from, to), makespan);
        Ok(makespan * self.scenario.comm_scale)
    }

    /// The cost at the current scale of the redistribution after iteration `k`
    /// from the initial loads: the reference the experiment scales against.
    ///
    /// # Errors
    /// [`SimulationError::BadPoint`], or a planning error.
    pub fn redistribution_cost_from_start(&mut self, k: u32) -> Result<f64, SimulationError> {
        self.check_point(k)?;
        let to = self.targets_after(k)?;
        self.cost(0, to)
    }

    /// Time of iteration 1 with the initial loads at the current scale.
    pub fn first_iteration_time(&self) -> f64 {
        self.iteration_time(0, 1)
    }

    /// Sets the communication scale so that the redistribution after iteration
    /// `reference_point` from the initial loads costs `ratio` times the first
    /// iteration: the experiment's "redistribution-to-iteration ratio".
    ///
    /// Borders are communication too, so the first iteration grows with the scale:
    /// with `A_i` the computing time, `B_i` the border time and `M` the
    /// redistribution's makespan at unit scale, the scale is the smallest `s` with
    /// `s * M >= ratio * (A_i + s * B_i)` for every `i`, i.e.
    /// `s = max_i ratio * A_i / (M - ratio * B_i)`.
    ///
    /// # Returns
    /// The scale set.
    ///
    /// # Errors
    /// [`SimulationError::InvalidValue`] when `ratio` is not finite and > 0, when the
    /// reference redistribution moves nothing, or when the borders alone cost more
    /// than `1 / ratio` of it (no scale reaches the ratio);
    /// [`SimulationError::BadPoint`]; planning errors.
    ///
    /// ```
    /// use hetbal::iterative::{Scenario, Simulator, SpeedProfile};
    /// use hetbal::ring::RingKind;
    /// let scenario = Scenario {
    ///     kind: RingKind::Unidirectional,
    ///     time_per_item: vec![1.0, 1.0],
    ///     c_succ: vec![1.0, 1.0],
    ///     c_pred: vec![1.0, 1.0],
    ///     border_items: 1,
    ///     iterations: 10,
    ///     initial_loads: vec![6, 6],
    ///     profiles: vec![SpeedProfile::constant(), SpeedProfile::new(vec![(2.0, 0.25)], None).unwrap()],
    ///     comm_scale: 1.0,
    /// };
    /// let mut simulator = Simulator::new(scenario).unwrap();
    /// // After iteration 5 the targets are [10, 2]: 4 items cross a link of cost 1
    /// // (makespan 4); the first iteration computes 6 and exchanges 2 borders.
    /// // Scale s with 4s = 1.5 * (6 + 2s): s = 9.
    /// assert_eq!(simulator.set_ratio(1.5, 5).unwrap(), 9.0);
    /// let (cost, first) = (simulator.redistribution_cost_from_start(5).unwrap(), simulator.first_iteration_time());
    /// assert_eq!((cost, first), (36.0, 24.0));
    /// // With 3 it cannot be reached: the borders alone cost 2 * 3 > 4 per unit scale.
    /// assert!(simulator.set_ratio(3.0, 5).unwrap_err().to_string().contains("cannot be reached"));
    /// ```
    pub fn set_ratio(&mut self, ratio: f64, reference_point: u32) -> Result<f64, SimulationError> {
        if !ratio.is_finite() || ratio <= 0.0 {
            return Err(invalid("ratio", None, ratio, "must be finite and > 0"));
        }
        self.set_comm_scale(1.0)?;
        let makespan = self.redistribution_cost_from_start(reference_point)?;
        if makespan <= 0.0 {
            return Err(SimulationError::InvalidValue {
                field: "ratio",
                index: None,
                value: ratio.to_string(),
                rule: "has no meaning here: the reference redistribution moves nothing \
                       (the speeds at the reference point keep the initial balance)",
            });
        }
        let times = &self.epoch_times[self.epoch_of[0]];
        let mut scale: f64 = 0.0;
        let parts = self
            .scenario
            .initial_loads
            .iter()
            .zip(times)
            .zip(&self.border);
        for ((&load, &time), &border) in parts {
            let compute = load as f64 * time;
            let room = makespan - ratio * border;
            if room <= 0.0 {
                return Err(SimulationError::InvalidValue {
                    field: "ratio",
                    index: None,
                    value: ratio.to_string(),
                    rule: "cannot be reached: the border exchanges alone cost more than \
                           1/ratio of the reference redistribution",
                });
            }
            scale = scale.max(ratio * compute / room);
        }
        self.set_comm_scale(scale)?;
        Ok(scale)
    }

    fn check_point(&self, k: u32) -> Result<(), SimulationError> {
        if k == 0 || k >= self.scenario.iterations {
            return Err(SimulationError::BadPoint {
                after_iteration: k,
                iterations: self.scenario.iterations,
            });
        }
        Ok(())
    }

    /// Simulates one run under `policy`.
    ///
    /// # Errors
    /// [`SimulationError::BadPoint`] for a point of [`Policy::At`] outside
    /// `1..iterations`; planning errors.
    ///
    /// # Complexity
    /// O(K·n) plus the plans (cached); [`Policy::OfflineBest`] O(K² + E²·n) steps
    /// and up to E²/2 plans.
    pub fn run(&mut self, policy: &Policy) -> Result<Run, SimulationError> {
        let k_total = self.scenario.iterations;
        let points: Vec<u32> = match policy {
            Policy::Never => Vec::new(),
            Policy::Fixed { redistributions } => {
                let mut points: Vec<u32> = fixed_points(*redistributions, u64::from(k_total))
                    .map(|p| p as u32)
                    .filter(|&p| p >= 1 && p < k_total)
                    .collect();
                points.dedup();
                points
            }
            Policy::At(points) => {
                let mut points = points.clone();
                points.sort_unstable();
                points.dedup();
                for &p in &points {
                    self.check_point(p)?;
                }
                points
            }
            Policy::Adaptive => return self.run_adaptive(),
            Policy::Profitability => return self.run_profitability(),
            Policy::OfflineBest => self.offline_best_points()?,
        };
        self.simulate(policy.name(), |simulator, k, _| {
            if points.binary_search(&k).is_ok() {
                simulator.targets_after(k).map(Some)
            } else {
                Ok(None)
            }
        })
    }

    /// What the online policies weigh after iteration `k` with loads `current`:
    /// the balanced targets for iteration k's speeds, iteration k's time with the
    /// current loads and with the targets; `None` when the targets would not be
    /// faster. O(n) plus the targets (cached).
    pub(super) fn balancing_offer(
        &mut self,
        k: u32,
        current: LoadsId,
    ) -> Result<Option<(LoadsId, f64, f64)>, SimulationError> {
        let target = self.targets_after(k)?;
        let (now, balanced) = (
            self.iteration_time(current, k),
            self.iteration_time(target, k),
        );
        Ok((target != current && balanced < now).then_some((target, now, balanced)))
    }

    /// [`Policy::Profitability`], deciding after iteration `k` from what a running
    /// code measures (iteration k's speeds).
    fn run_profitability(&mut self) -> Result<Run, SimulationError> {
        let k_total = self.scenario.iterations;
        self.simulate(Policy::Profitability.name(), |simulator, k, current| {
            let Some((target, now, balanced)) = simulator.balancing_offer(k, current)? else {
                return Ok(None);
            };
            let remaining = f64::from(k_total - k);
            let cost = simulator.cost(current, target)?;
            Ok(profitable(cost, remaining, now, balanced).then_some(target))
        })
    }

    /// Runs the iterations, asking `redistribute(self, k, current)` after each
    /// iteration `k < K` which loads to move to, if any.
    pub(super) fn simulate(
        &mut self,
        policy: String,
        mut redistribute: impl FnMut(
            &mut Self,
            u32,
            LoadsId,
        ) -> Result<Option<LoadsId>, SimulationError>,
    ) -> Result<Run, SimulationError> {
        let k_total = self.scenario.iterations;
        let mut clock = 0.0;
        let mut current: LoadsId = 0;
        let mut run = Run {
            policy,
            total_time: 0.0,
            redistribution_time: 0.0,
            redistributions: Vec::new(),
            iteration_ends: Vec::with_capacity(k_total as usize),
        };
        for k in 1..=k_total {
            clock += self.iteration_time(current, k);
            run.iteration_ends.push(clock);
            if k == k_total {
                break;
            }
            let target = redistribute(self, k, current)?;
            if let Some(target) = target.filter(|&t| t != current) {
                let cost = self.cost(current, target)?;
                clock += cost;
                run.redistribution_time += cost;
                current = target;
                run.redistributions.push(Redistribution {
                    after_iteration: k,
                    cost,
                    loads: self.loads[current].clone(),
                });
            }
        }
        run.total_time = clock;
        Ok(run)
    }
}

/// Time of one iteration: the slowest processor's compute (`loads[i] * times[i]`)
/// plus its border exchange. O(n).
pub(super) fn step_time(loads: &[u64], times: &[f64], border: &[f64]) -> f64 {
    (0..loads.len())
        .map(|i| loads[i] as f64 * times[i] + border[i])
        .fold(0.0, f64::max)
}
