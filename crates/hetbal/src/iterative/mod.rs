//! A deterministic simulator of iterative data-parallel applications on a ring, and
//! the policies that decide when to redistribute the data.
//!
//! # The model
//! An application of `total` identical items (matrix columns, say) runs `iterations`
//! iterations on a ring of processors. Processor `i` holds `loads[i]` items; in
//! iteration `k` (from 1) it computes them in `loads[i] * time_per_item[i] /
//! factor_i(k)`, where `factor_i` is its [`SpeedProfile`], and then exchanges
//! `border_items` items with each neighbour, one after the other (one-port), in
//! `border_items * (c_succ[i] + c_pred[i])`. The iteration ends when the slowest
//! processor is done (neighbours wait for each other's borders, so the slowest
//! sets the pace of all):
//!
//! `T_k = max_i ( loads[i] * time_per_item[i] / factor_i(k) + border_items * (c_succ[i] + c_pred[i]) * comm_scale )`
//!
//! which is model.md's `T_step` with `alpha_i * D_w = loads[i]`.
//!
//! Between two iterations the application may redistribute: every processor's load
//! becomes the [`balanced_targets`] for the speeds of the iteration just finished
//! (what a running code can measure), and the redistribution costs the makespan of
//! the ring planner's plan ([`crate::ring::plan`], unidirectional or bidirectional)
//! on the links `c_succ`, `c_pred`, times `comm_scale`. Time only moves forward:
//! the run's time is the sum of its iterations and redistributions.
//!
//! # Policies
//! [`Policy::Never`], [`Policy::Fixed`] (the ring paper's schemes: 1, 4, 9 or 19
//! evenly spaced redistributions), [`Policy::At`] (given points),
//! [`Policy::Profitability`] (redistribute when the gain predicted over the
//! remaining iterations exceeds the plan's cost: model.md's rule),
//! [`Policy::Adaptive`] (the gain predicted by a speed model learned from the
//! run, when and how the speeds change, after a ski-rental guard), and
//! [`Policy::OfflineBest`]: a dynamic program over every set of redistribution
//! points, knowing the future speeds. Every other policy is one such set with the
//! same targets, so no policy of this module can beat it.
//!
//! ```
//! use hetbal::iterative::{Policy, Scenario, Simulator, SpeedProfile};
//! use hetbal::ring::RingKind;
//!
//! // Two processors, 10 items, 4 iterations; P1 slows down to half speed after
//! // the first iteration.
//! let scenario = Scenario {
//!     kind: RingKind::Bidirectional,
//!     time_per_item: vec![1.0, 1.0],
//!     c_succ: vec![1.0, 1.0],
//!     c_pred: vec![1.0, 1.0],
//!     border_items: 0,
//!     iterations: 4,
//!     initial_loads: vec![5, 5],
//!     profiles: vec![SpeedProfile::constant(), SpeedProfile::new(vec![(1.0, 0.5)], None).unwrap()],
//!     comm_scale: 1.0,
//! };
//! let mut simulator = Simulator::new(scenario).unwrap();
//! // Never: 5 + 10 + 10 + 10.
//! assert_eq!(simulator.run(&Policy::Never).unwrap().total_time, 35.0);
//! // After iteration 2, balance for speeds 1 and 0.5: loads [7, 3] (P1: 3 * 2 = 6 <= 7),
//! // moving 2 items costs 2; then 7 + 7.
//! let run = simulator.run(&Policy::At(vec![2])).unwrap();
//! assert_eq!(run.total_time, 5.0 + 10.0 + 2.0 + 7.0 + 7.0);
//! assert!(simulator.run(&Policy::OfflineBest).unwrap().total_time <= run.total_time);
//! ```

mod profile;

use std::collections::HashMap;
use std::fmt;

pub use profile::{draw_hosts, paper_speed_changes, ProfileError, SpeedProfile};

use crate::balance::{balanced_targets, BalanceError};
use crate::random::SplitMix64;
use crate::ring::{plan, InstanceError, PlanError, RingInstance, RingKind};

/// Everything the simulator needs: the ring, the application, the speeds.
#[derive(Clone, Debug, PartialEq)]
pub struct Scenario {
    /// The ring kind whose planner prices a redistribution (the border exchange
    /// always goes both ways).
    pub kind: RingKind,
    /// Time for each processor to compute one item at its nominal speed (> 0).
    pub time_per_item: Vec<f64>,
    /// Time to send one item to the successor, per processor (> 0).
    pub c_succ: Vec<f64>,
    /// Time to send one item to the predecessor, per processor (> 0).
    pub c_pred: Vec<f64>,
    /// Items exchanged with each neighbour at the end of every iteration.
    pub border_items: u64,
    /// Iterations of the run (>= 1).
    pub iterations: u32,
    /// Items held at the start (each >= 1).
    pub initial_loads: Vec<u64>,
    /// Speed of each processor over the iterations.
    pub profiles: Vec<SpeedProfile>,
    /// Multiplies every communication time (border exchanges and redistributions):
    /// the knob that sets the cost of communication against computation.
    pub comm_scale: f64,
}

/// Why a scenario cannot be simulated.
#[derive(Clone, Debug, PartialEq)]
pub enum SimulationError {
    /// A ring needs at least two processors.
    TooFewProcessors {
        /// How many were given.
        count: usize,
    },
    /// A per-processor list does not have one entry per processor.
    LengthMismatch {
        /// The list.
        field: &'static str,
        /// Its length.
        len: usize,
        /// The number of processors (the length of `initial_loads`).
        processors: usize,
    },
    /// A value breaks a rule.
    InvalidValue {
        /// The field.
        field: &'static str,
        /// Index of the processor (`None` for a scalar field).
        index: Option<usize>,
        /// The value, as text.
        value: String,
        /// The rule.
        rule: &'static str,
    },
    /// A fixed redistribution point lies outside `1..iterations`.
    BadPoint {
        /// The point (redistribute after this iteration).
        after_iteration: u32,
        /// Iterations of the run.
        iterations: u32,
    },
    /// The balanced targets cannot be computed.
    Balance(BalanceError),
    /// A redistribution's ring instance is invalid.
    Instance(InstanceError),
    /// The ring planner failed on a redistribution.
    Plan(PlanError),
}

impl fmt::Display for SimulationError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SimulationError::TooFewProcessors { count } => {
                write!(f, "a ring needs at least 2 processors, got {count}")
            }
            SimulationError::LengthMismatch {
                field,
                len,
                processors,
            } => write!(
                f,
                "{field} has {len} entries but the ring has {processors} processors \
                 (one per entry of initial_loads)"
            ),
            SimulationError::InvalidValue {
                field,
                index: Some(i),
                value,
                rule,
            } => write!(f, "{field}[{i}] = {value} {rule}"),
            SimulationError::InvalidValue {
                field,
                index: None,
                value,
                rule,
            } => write!(f, "{field} = {value} {rule}"),
            SimulationError::BadPoint {
                after_iteration,
                iterations,
            } => write!(
                f,
                "cannot redistribute after iteration {after_iteration}: points must lie in \
                 1..{iterations} (between two iterations of the run)"
            ),
            SimulationError::Balance(e) => write!(f, "balancing: {e}"),
            SimulationError::Instance(e) => write!(f, "redistribution instance: {e}"),
            SimulationError::Plan(e) => write!(f, "planning a redistribution: {e}"),
        }
    }
}

impl std::error::Error for SimulationError {}

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
type LoadsId = usize;

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
    scenario: Scenario,
    /// `epoch_of[k - 1]` = speed epoch of iteration k.
    epoch_of: Vec<usize>,
    /// Time per item of every processor in each epoch.
    epoch_times: Vec<Vec<f64>>,
    /// Interned load vectors ([`LoadsId`]); balanced targets repeated across
    /// epochs are stored once.
    loads: Vec<Vec<u64>>,
    /// Loads id of the balanced targets of each epoch, computed when first asked.
    epoch_targets: Vec<Option<LoadsId>>,
    /// Unit-scale plan makespans by (from, to).
    plans: HashMap<(LoadsId, LoadsId), f64>,
    /// `border[i]`: processor i's border exchange, comm_scale applied.
    border: Vec<f64>,
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
    fn iteration_time(&self, loads: LoadsId, k: u32) -> f64 {
        let times = &self.epoch_times[self.epoch_of[k as usize - 1]];
        step_time(&self.loads[loads], times, &self.border)
    }

    /// The loads a redistribution after iteration `k` aims at.
    fn targets_after(&mut self, k: u32) -> Result<LoadsId, SimulationError> {
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
    fn cost(&mut self, from: LoadsId, to: LoadsId) -> Result<f64, SimulationError> {
        if from == to {
            return Ok(0.0);
        }
        if let Some(&makespan) = self.plans.get(&(from, to)) {
            return Ok(makespan * self.scenario.comm_scale);
        }
        let s = &self.scenario;
        let (loads, targets) = (&self.loads[from], &self.loads[to]);
        let instance = match s.kind {
            RingKind::Unidirectional => RingInstance::unidirectional(loads, targets, &s.c_succ),
            RingKind::Bidirectional => {
                RingInstance::bidirectional(loads, targets, &s.c_succ, &s.c_pred)
            }
        }
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
                let r = u64::from(*redistributions);
                let mut points: Vec<u32> = (1..=r)
                    .map(|m| (u64::from(k_total) * m / (r + 1)) as u32)
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
    fn balancing_offer(
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
            Ok((cost + remaining * balanced < remaining * now).then_some(target))
        })
    }

    /// [`Policy::Adaptive`]: the guard, then the gain predicted by sampling futures
    /// of the speed model learned so far.
    fn run_adaptive(&mut self) -> Result<Run, SimulationError> {
        let k_total = self.scenario.iterations;
        let mut lost = 0.0;
        let mut history = ChangeHistory::new(self.scenario.initial_loads.len());
        self.simulate(Policy::Adaptive.name(), |simulator, k, current| {
            if k >= 2 {
                history.observe(
                    k,
                    simulator.times_per_item(k - 1),
                    simulator.times_per_item(k),
                    simulator.times_per_item(1),
                );
            }
            let Some((target, now, balanced)) = simulator.balancing_offer(k, current)? else {
                return Ok(None);
            };
            lost += now - balanced;
            let cost = simulator.cost(current, target)?;
            if lost < ADAPTIVE_GUARD * cost {
                return Ok(None);
            }
            let ages = history.ages(k);
            let model = SpeedModel {
                hazard: change_hazard(&history.gaps, &ages),
                ages: &ages,
                factors: &history.factors,
                first: simulator.times_per_item(1),
                now: simulator.times_per_item(k),
            };
            let gain = model.predicted_gain(
                &simulator.loads[current],
                &simulator.loads[target],
                &simulator.border,
                k_total - k,
                u64::from(k),
            );
            if gain > cost {
                lost = 0.0;
                return Ok(Some(target));
            }
            Ok(None)
        })
    }

    /// Runs the iterations, asking `redistribute(self, k, current)` after each
    /// iteration `k < K` which loads to move to, if any.
    fn simulate(
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

    /// The optimal set of points: `best[j]` is the least time to finish iteration
    /// j and redistribute after it; from a redistribution after r (or the start,
    /// r = 0) the loads are fixed until the next one, so
    /// `best[j] = min_r best[r] + sum_{k=r+1..j} T_k(loads_r) + cost(loads_r, loads_j)`.
    fn offline_best_points(&mut self) -> Result<Vec<u32>, SimulationError> {
        let k_total = self.scenario.iterations as usize;
        // state_loads[r]: loads after a redistribution after iteration r (r = 0: start).
        let mut state_loads: Vec<LoadsId> = vec![0];
        for r in 1..k_total {
            state_loads.push(self.targets_after(r as u32)?);
        }
        // Iteration times by (loads, epoch), each computed once: O(ids * E * n).
        let epochs = self.epoch_times.len();
        let mut table = vec![f64::NAN; self.loads.len() * epochs];
        let mut iteration_time = |simulator: &Self, loads: LoadsId, k: usize| {
            let slot = loads * epochs + simulator.epoch_of[k - 1];
            if table[slot].is_nan() {
                table[slot] = simulator.iteration_time(loads, k as u32);
            }
            table[slot]
        };
        let mut best = vec![f64::INFINITY; k_total];
        let mut parent = vec![usize::MAX; k_total];
        best[0] = 0.0;
        // running[r] = best[r] + iterations r+1..=j with loads_r, advanced with j.
        let mut running = vec![f64::INFINITY; k_total];
        let mut final_best = (f64::INFINITY, 0);
        for j in 1..=k_total {
            running[j - 1] = best[j - 1];
            for r in 0..j {
                if running[r].is_finite() {
                    running[r] += iteration_time(self, state_loads[r], j);
                }
            }
            if j == k_total {
                for (r, &time) in running.iter().enumerate() {
                    if time < final_best.0 {
                        final_best = (time, r);
                    }
                }
                break;
            }
            for r in 0..j {
                if !running[r].is_finite() || state_loads[r] == state_loads[j] {
                    continue; // nothing to move: the same as not redistributing
                }
                let time = running[r] + self.cost(state_loads[r], state_loads[j])?;
                if time < best[j] {
                    best[j] = time;
                    parent[j] = r;
                }
            }
        }
        let mut points = Vec::new();
        let mut r = final_best.1;
        while r != 0 {
            points.push(r as u32);
            r = parent[r];
        }
        points.reverse();
        Ok(points)
    }
}

/// [`Policy::Adaptive`] looks at a redistribution only once the time lost to
/// imbalance since the loads were last set reaches this share of its cost.
const ADAPTIVE_GUARD: f64 = 0.5;
/// Futures sampled per decision of [`Policy::Adaptive`].
const ADAPTIVE_SAMPLES: usize = 64;

/// What [`Policy::Adaptive`] has measured of the speeds: the iteration in which
/// each processor's speed last changed (1 until it changes), the gaps between
/// successive changes of a processor (the first counted from iteration 1), and the
/// speeds after changes as factors of the processors' first speeds.
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

/// Time of one iteration: the slowest processor's compute (`loads[i] * times[i]`)
/// plus its border exchange. O(n).
fn step_time(loads: &[u64], times: &[f64], border: &[f64]) -> f64 {
    (0..loads.len())
        .map(|i| loads[i] as f64 * times[i] + border[i])
        .fold(0.0, f64::max)
}

fn invalid(
    field: &'static str,
    index: Option<usize>,
    value: f64,
    rule: &'static str,
) -> SimulationError {
    SimulationError::InvalidValue {
        field,
        index,
        value: value.to_string(),
        rule,
    }
}

fn check(s: &Scenario) -> Result<(), SimulationError> {
    let n = s.initial_loads.len();
    if n < 2 {
        return Err(SimulationError::TooFewProcessors { count: n });
    }
    let lengths = [
        ("time_per_item", s.time_per_item.len()),
        ("c_succ", s.c_succ.len()),
        ("c_pred", s.c_pred.len()),
        ("profiles", s.profiles.len()),
    ];
    for (field, len) in lengths {
        if len != n {
            return Err(SimulationError::LengthMismatch {
                field,
                len,
                processors: n,
            });
        }
    }
    for (field, values) in [
        ("time_per_item", &s.time_per_item),
        ("c_succ", &s.c_succ),
        ("c_pred", &s.c_pred),
    ] {
        if let Some(i) = values.iter().position(|v| !v.is_finite() || *v <= 0.0) {
            return Err(invalid(field, Some(i), values[i], "must be finite and > 0"));
        }
    }
    if let Some(i) = s.initial_loads.iter().position(|&l| l == 0) {
        return Err(SimulationError::InvalidValue {
            field: "initial_loads",
            index: Some(i),
            value: "0".into(),
            rule: "must be >= 1 (every processor holds at least one item)",
        });
    }
    if s.initial_loads
        .iter()
        .try_fold(0u64, |sum, &l| sum.checked_add(l))
        .is_none()
    {
        return Err(SimulationError::InvalidValue {
            field: "initial_loads",
            index: None,
            value: "their sum".into(),
            rule: "overflows 64 bits",
        });
    }
    if s.iterations == 0 {
        return Err(SimulationError::InvalidValue {
            field: "iterations",
            index: None,
            value: "0".into(),
            rule: "must be >= 1",
        });
    }
    Ok(())
}

#[cfg(test)]
mod tests;
