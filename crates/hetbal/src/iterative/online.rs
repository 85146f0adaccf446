//! The online policies one iteration at a time, for a running code: fed every
//! processor's items and compute time after each iteration, a [`Decider`] says
//! whether to move the data, where to, and what it costs, with any online policy
//! of [`crate::iterative`] ([`Policy::Never`], [`Policy::Fixed`], [`Policy::At`],
//! [`Policy::Profitability`], [`Policy::Adaptive`]). It decides through the
//! simulator's own rules (the adaptive policy's speed model is the one
//! [`Simulator::run`] uses), so fed the iteration times of a simulated scenario
//! it takes the simulator's decisions: the same iterations, the same targets,
//! the same costs. It communicates nothing: a distributed runtime gathers the
//! numbers and runs the same decider on every rank.
//!
//! # What a processor must report: its compute time
//! The policies compare each processor's time per item (compute seconds over
//! items). A processor that times its whole iteration, halo exchange included,
//! waits in the exchange for the slowest neighbour: every processor then reports
//! about the slowest one's time, every processor looks equally fast, the
//! balanced targets are the current loads, and nothing ever moves. Time the
//! compute phase only.
//!
//! # Noise
//! Measured times jitter. A processor's time per item counts as changed only
//! when it moves by more than a tolerance ([`Decider::with_tolerance`], 5% by
//! default) from the value in force; otherwise the value in force is kept. The
//! policies see these values: the adaptive policy learns how often speeds really
//! change, not how noisy the clock is. Likewise, nothing moves unless the
//! balanced iteration is faster than the current one by more than the tolerance.
//! With a tolerance of 0 the decider takes exactly the simulator's decisions.
//!
//! Noise larger than the tolerance (ranks sharing cores, a clock of
//! microseconds against steps of a few tens) would still make the constant
//! model move after every few iterations, each move paid for gains the jitter
//! invented. With the constant model and a positive tolerance, these rules
//! hold it back (with a tolerance of 0 they are off; time functions have
//! their own, see [Learning time functions](#learning-time-functions)):
//! * **the median filter.** A processor's measured time per item is its
//!   level: the median of its observations at its current load since its
//!   last change of speed (at most the last [`FILTER_WINDOW`], 15; the lower
//!   of the two middle ones for an even count, as noise only ever slows),
//!   before the tolerance compares it with the value in force. A change of
//!   speed is [`PERSIST`] (3) observations in a row more than [`NOT_NOISE`]
//!   (25%) from the level and within 25% of each other (a new level): the
//!   level then starts again from them, so a change is seen at its third
//!   iteration. Fewer are a spike or a burst (a rank descheduled, another
//!   job's burst) and never move anything; smaller changes move the level
//!   once they make half of the window. Right after a move the last two
//!   times at the old loads vote with the new ones until there are three,
//!   and nothing moves again before every processor was observed twice at
//!   its new load.
//! * **the noise rule.** The decider measures each processor's spread: the
//!   mean relative deviation of its time per item between consecutive
//!   observations at the same load, those beyond [`NOT_NOISE`] left out
//!   (spikes, which the filter removes, and changes of speed).
//!   [`Decider::noise`] shows the largest spread. Nothing moves unless the
//!   balanced iteration is faster by more than [`NOISE_MULTIPLE`] (3) times
//!   the largest spread divided by `sqrt(m)`, `m` the fewest observations
//!   behind a processor's level (a median of `m` observations errs about
//!   `1 / sqrt(m)` as much as one): unless the predicted gain exceeds 3
//!   times what the noise could have made up. Until a processor was measured
//!   twice at the same load its spread is 0 (the first move is not held
//!   back). The functional model has its own rule (see [Learning time
//!   functions](#learning-time-functions)).
//!
//! # Start-ups
//! Links may have a start-up per message ([`Decider::set_startups`]): every
//! redistribution is then priced by its plan with start-ups
//! ([`RingInstance::with_startups`]), the plan the runtime carries out. Planning
//! with start-ups costs far more than without (hundreds of milliseconds at a
//! thousand processors), so the decider first prices the move by its lower
//! bound ([`startup_lower_bound`], milliseconds): every policy's answer only
//! turns from "move" to "stay" as the cost grows, so when the bound already
//! says stay, so would the plan, and the plan is made only when the bound says
//! move. The decisions are exactly those of pricing every move by its plan
//! (tested); [`Decision::planned`] says which price a decision shows.
//!
//! # Learning time functions
//! By default ([`DeciderModel::Constant`]) a processor's time is its load
//! times one time per item, the last one measured. A GPU paying an overhead
//! per launch, or a CPU whose share stops fitting in memory, breaks that
//! model: balanced on it, the memory-bound processor oscillates between too
//! few items and too many. With [`Decider::with_model`]`(`[`DeciderModel::Functional`]`)`
//! the decider learns each processor's time as a function of its load
//! ([`crate::functional::TimeFunction`]) and balances with
//! [`crate::functional::balance`] (every processor keeping at least one
//! item):
//! * **history.** Every observation (load, compute seconds) adds a point to
//!   its processor's history. A repeated load is a running mean weighing at
//!   most the last [`MAX_WEIGHT`] observations; at most [`MAX_POINTS`]
//!   distinct loads are kept, the two nearest (relative gap) merging into
//!   their weighted mean past it. The function is fitted on the points as
//!   [`crate::functional::TimeFunction::new`] does (non-decreasing, through
//!   `(0, 0)`, the last segment's slope past the last point: one point is
//!   the constant model). A segment between two measured loads across which
//!   the time jumps ([`JUMP_SLOPE`]) is searched: while wider than [`NARROW`]
//!   (7%) it is optimistic up to its middle and pessimistic past it, so the
//!   balance may probe the lower half (each probe halves the segment);
//!   narrower, the loads inside cost the upper time
//!   (the cliff is located, and avoided).
//! * **outliers.** Times never decrease with the load, so a new observation
//!   should lie between the fitted times at the measured loads around it. One
//!   more than [`CLIP_FACTOR`] times above the time at the next measured load
//!   up, or below the time at the next one down divided by it, is clipped to
//!   that bound (beyond the largest measured load there is no upper bound: a
//!   cliff is learned, not clipped). [`CLIPS_TO_RESTART`] clipped
//!   observations of a processor in a row are a change of speed: its history
//!   restarts from the last one.
//! * **predictions.** The current and balanced step times
//!   ([`Decision::current_step`], [`Decision::balanced_step`]) and so the
//!   predicted gain are the fitted functions' times (plus the border).
//! * **exploration.** A load beyond twice the largest measured load of its
//!   processor, or below half the smallest, is extrapolated: the decider
//!   never moves there in one step. Each target is limited to that range
//!   (the exact optimum under these bounds), so a move explores at most one
//!   doubling or halving; the new point then shows the function there. At most
//!   [`EXPLORATION_BUDGET`] moves may explore (a target outside its
//!   processor's measured loads; [`Decider::with_exploration`]); after them
//!   the targets stay within the measured loads, so learning costs at most
//!   that many moves. [`Decider::learning`] shows the state.
//! * **noise.** The decider measures each processor's spread: the mean
//!   relative deviation of its time per item between observations at equal
//!   or near loads (within [`NEAR`], 1%; a deviation beyond [`NOT_NOISE`],
//!   25%, is a cliff or a change, not noise). A move is noise unless the
//!   predicted step is faster by more than the tolerance and by more than
//!   [`NOISE_MULTIPLE`] times the largest spread.
//!
//! The policies weigh the functions' step times as they weigh the constant
//! model's: [`Policy::Profitability`] moves when the predicted gain over the
//! remaining iterations exceeds the move's cost. ([`Policy::Adaptive`]'s speed
//! model still learns from the times per item measured at the current loads.)
//!
//! ```
//! use hetbal::iterative::online::Decider;
//! use hetbal::iterative::Policy;
//! // Two processors of 50 items; P1 computes twice slower. Links: 1 ms per item.
//! let mut decider = Decider::new(Policy::Profitability, vec![1e-3; 2], Some(vec![1e-3; 2])).unwrap();
//! let d = decider.observe(&[50, 50], &[0.5, 1.0], 100).unwrap();
//! assert!(d.redistribute);
//! assert_eq!(d.targets, vec![67, 33]);
//! ```

use std::fmt;

pub(crate) mod learning;

pub use learning::{
    DeciderModel, Learning, CLIPS_TO_RESTART, CLIP_FACTOR, EXPLORATION_BUDGET, JUMP_SLOPE,
    MAX_POINTS, MAX_WEIGHT, NARROW, NEAR, NOISE_MULTIPLE, NOT_NOISE,
};

use super::adaptive::{AdaptiveState, Offer, Weighed};
#[cfg(doc)]
use super::simulator::Simulator;
use super::simulator::{fixed_points, profitable, redistribution_instance, step_time, Policy};
use crate::balance::{balanced_targets, BalanceError};
use crate::ring::{
    plan_with_startup_bound, startup_lower_bound, Flow, InstanceError, PlanError, RingInstance,
    RingPlan, StartupBound,
};

/// Why a [`Decider`] cannot decide. Every rank of a distributed run finds the
/// same reason (the decision runs on the same numbers everywhere).
#[derive(Clone, Debug, PartialEq)]
pub enum DecideError {
    /// [`Policy::OfflineBest`] needs the future speeds: no running code has them.
    OfflinePolicy,
    /// The ring's links do not match the processors.
    Links {
        /// Links given (`c_succ`, and `c_pred` when given, must have one per
        /// processor).
        links: usize,
        /// Processors reporting (ranks, in a distributed run).
        ranks: usize,
    },
    /// A link cost given is NaN, infinite or negative.
    Cost {
        /// Which costs: `c_succ` or `c_pred`.
        links: &'static str,
        /// The processor whose link it is.
        index: usize,
        /// The value given.
        value: f64,
    },
    /// A processor reported no items or a time that is not positive.
    Measure {
        /// The processor (rank).
        rank: usize,
        /// Items it reported.
        items: u64,
        /// Seconds it reported.
        seconds: f64,
    },
    /// The balanced targets cannot be computed.
    Balance(BalanceError),
    /// The redistribution's ring instance is invalid.
    Instance(InstanceError),
    /// The ring planner failed on the redistribution.
    Plan(PlanError),
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
            DecideError::Cost {
                links,
                index,
                value,
            } => write!(
                f,
                "{links}[{index}] = {value}: a cost must be finite and >= 0"
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
            DecideError::Balance(e) => write!(f, "cannot plan the balancing: {e}"),
            DecideError::Instance(e) => write!(f, "cannot plan the balancing: {e}"),
            DecideError::Plan(e) => write!(f, "cannot plan the balancing: {e}"),
        }
    }
}

impl std::error::Error for DecideError {}

/// Refuses a link cost that is NaN, infinite or negative, naming it
/// `links[index]`. O(n).
fn check_link_costs(links: &'static str, costs: &[f64]) -> Result<(), DecideError> {
    match costs.iter().position(|c| !(c.is_finite() && *c >= 0.0)) {
        Some(index) => Err(DecideError::Cost {
            links,
            index,
            value: costs[index],
        }),
        None => Ok(()),
    }
}

/// What was decided after one iteration (identical on every rank of a
/// distributed run).
#[derive(Clone, Debug, PartialEq)]
pub struct Decision {
    /// The iteration just measured (from 1).
    pub iteration: u32,
    /// True when the items move to `targets`.
    pub redistribute: bool,
    /// The iteration time with the current loads: the slowest processor's
    /// compute (its items times its time per item; with
    /// [`DeciderModel::Functional`], its fitted function's time), plus its
    /// border time if any.
    pub current_step: f64,
    /// The iteration time with the balanced targets, at the same speeds (or
    /// by the same fitted functions).
    pub balanced_step: f64,
    /// The plan's makespan: the predicted time of the redistribution (seconds;
    /// 0 when the targets are the loads). With start-ups, when nothing moves
    /// because even a lower bound on that makespan makes moving not pay, the
    /// plan is not made and this is the bound (`planned` is false).
    pub redistribution_time: f64,
    /// True when `redistribution_time` is a plan's makespan (always without
    /// positive start-ups, and whenever the items move); false when it is the lower
    /// bound that already ruled the move out (see the [module's docs](self)).
    /// The adaptive policy then weighed the move at the bound's price: its
    /// guard opens sooner at a lower price, so `predicted_gain` may hold a
    /// gain where the plan's price would have left none.
    pub planned: bool,
    /// The gain the policy predicted over the remaining iterations, when it
    /// weighed one: [`Policy::Profitability`] `R × (current − balanced)`,
    /// [`Policy::Adaptive`] its speed model's (`None` when its guard stopped it
    /// first, and for the other policies).
    pub predicted_gain: Option<f64>,
    /// Items per processor before.
    pub loads: Vec<u64>,
    /// Items per processor after balancing (the loads again when nothing moves).
    pub targets: Vec<u64>,
    /// The plan's net flow on each link (i, i+1), positive clockwise
    /// ([`link_flows`]; all zero when nothing moves).
    pub flows: Vec<i128>,
    /// The global position of each processor's first item once the decision is
    /// carried out (positions count from processor 0's first item at the first
    /// decision, and wrap at the total).
    pub firsts: Vec<u64>,
}

/// What a decision to redistribute changes in a [`Decider`] (the first
/// positions, the adaptive policy's time lost), taken by [`Decider::mark`]
/// before deciding and put back by [`Decider::forget`] when the redistribution
/// failed.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Mark {
    origin: u64,
    lost: f64,
}

/// Decides after every iteration whether moving the data pays, with an online
/// policy of [`crate::iterative`], from every processor's items and compute
/// time (see the [module's docs](self)).
///
/// # Example
/// ```
/// use hetbal::iterative::online::Decider;
/// use hetbal::iterative::Policy;
/// // Two processors of 50 items; P1 computes twice slower. Links: 1 ms per item.
/// let mut decider = Decider::new(Policy::Profitability, vec![1e-3; 2], Some(vec![1e-3; 2])).unwrap();
/// let d = decider.observe(&[50, 50], &[0.5, 1.0], 100).unwrap();
/// assert!(d.redistribute);
/// assert_eq!(d.targets, vec![67, 33]);
/// // P1 sends its last 17 items (83..100) on to P0, before P0's own:
/// assert_eq!(d.flows, vec![0, 17]);
/// assert_eq!(d.firsts, vec![83, 50]);
/// ```
#[derive(Clone, Debug)]
pub struct Decider {
    policy: Policy,
    c_succ: Vec<f64>,
    c_pred: Option<Vec<f64>>,
    /// Start-ups per message to the successor and to the predecessor (empty:
    /// none).
    l_succ: Vec<f64>,
    l_pred: Vec<f64>,
    /// Price moves by their lower bound first (with start-ups): false only in
    /// tests, which check that it changes no decision.
    bound_first: bool,
    border: Vec<f64>,
    tolerance: f64,
    /// Iterations observed.
    iteration: u32,
    /// Times per item of iteration 1, and those in force.
    first: Vec<f64>,
    times: Vec<f64>,
    /// [`Policy::Adaptive`]: what it learned and the time it lost.
    adaptive: AdaptiveState,
    /// Global position of processor 0's first item.
    origin: u64,
    /// The instance and plan of the last decision, when it moved the items.
    last_plan: Option<(RingInstance, RingPlan)>,
    /// The model of the compute times, and with time functions what they
    /// learned.
    model: DeciderModel,
    learner: Option<learning::Learner>,
    /// Exploring moves the functional model may take.
    exploration: u32,
    /// Every processor's spread of its time per item at a repeated load.
    spread: Spread,
}

/// Consecutive observations beyond [`NOT_NOISE`] of a processor's level, and
/// within it of each other, that make a change of speed (fewer are a spike
/// or a burst: noise).
pub const PERSIST: usize = 3;

/// The most observations the median filter keeps per processor.
pub const FILTER_WINDOW: usize = 15;

/// Every processor's spread (the mean relative deviation of its time per item
/// between consecutive observations at the same load) and its median filter:
/// see the [module's docs](self#noise).
#[derive(Clone, Debug, Default)]
struct Spread {
    each: Vec<Noise>,
}

/// One processor's part of [`Spread`].
#[derive(Clone, Debug, Default)]
struct Noise {
    /// The load and time per item of the last observation (0: none).
    load: u64,
    last: f64,
    /// Sum and count of the deviations within [`NOT_NOISE`].
    sum: f64,
    count: u32,
    /// The times per item at the current load since the last change of speed
    /// (at most [`FILTER_WINDOW`], the oldest dropped first), whose median is
    /// the level; `next` is where the next one goes once the window is full.
    window: Vec<f64>,
    next: usize,
    /// The observations in a row beyond [`NOT_NOISE`] of the level.
    excursion: Vec<f64>,
    /// The last two times per item at the previous loads (the newest first;
    /// 0: none).
    before: [f64; 2],
}

impl Noise {
    /// Adds an observation: `load` items, `t` seconds per item. O(FILTER_WINDOW).
    fn observe(&mut self, load: u64, t: f64) {
        if !(t.is_finite() && t > 0.0) {
            *self = Noise::default();
            return;
        }
        if load == self.load && self.last > 0.0 {
            let deviation = (t - self.last).abs() / self.last;
            if deviation <= NOT_NOISE {
                self.sum += deviation;
                self.count += 1;
            }
        }
        if load != self.load {
            // New loads: the level starts again from them, the last times
            // at the old loads voting until there are PERSIST.
            self.before = [self.last, self.before[0]];
            self.window.clear();
            self.next = 0;
            self.excursion.clear();
        }
        (self.load, self.last) = (load, t);
        let beyond = self
            .level()
            .is_some_and(|level| (t - level).abs() > NOT_NOISE * level);
        if !beyond {
            self.excursion.clear();
            self.push(t);
        } else {
            // An excursion is a new level only while its times agree.
            let agrees = |x: &f64| (t - x).abs() <= NOT_NOISE * x.min(t);
            if !self.excursion.iter().all(agrees) {
                self.excursion.clear();
            }
            self.excursion.push(t);
            if self.excursion.len() == PERSIST {
                // It lasted: a change of speed. The level starts again from it.
                self.window = std::mem::take(&mut self.excursion);
                self.next = 0;
            }
        }
    }

    /// Adds `t` to the window, dropping the oldest when full. O(1).
    fn push(&mut self, t: f64) {
        if self.window.len() < FILTER_WINDOW {
            self.window.push(t);
        } else {
            self.window[self.next] = t;
            self.next = (self.next + 1) % FILTER_WINDOW;
        }
    }

    /// The level: the median of the window (the lower of the two middle ones
    /// for an even count), `None` before any observation. O(FILTER_WINDOW).
    fn level(&self) -> Option<f64> {
        let mut window = [0.0; FILTER_WINDOW];
        let held = self.window.len();
        window[..held].copy_from_slice(&self.window);
        // Fewer than PERSIST at these loads: the last ones before vote too.
        let votes = self.before.iter().filter(|&&t| t > 0.0);
        let mut len = held;
        for &t in votes.take(PERSIST.saturating_sub(held)) {
            window[len] = t;
            len += 1;
        }
        let window = &mut window[..len];
        let middle = window.len().checked_sub(1)? / 2;
        Some(*window.select_nth_unstable_by(middle, f64::total_cmp).1)
    }
}

impl Spread {
    /// Adds an iteration's measures (loads >= 1, times > 0). O(n FILTER_WINDOW).
    fn observe(&mut self, loads: &[u64], seconds: &[f64]) {
        if self.each.len() != loads.len() {
            self.each = vec![Noise::default(); loads.len()];
        }
        for (i, noise) in self.each.iter_mut().enumerate() {
            noise.observe(loads[i], seconds[i] / loads[i] as f64);
        }
    }

    /// Processor i's time per item through the median filter. O(FILTER_WINDOW).
    fn filtered(&self, i: usize) -> Option<f64> {
        self.each.get(i)?.level()
    }

    /// The largest processor's spread (0 before any repeated load). O(n).
    fn largest(&self) -> f64 {
        self.each
            .iter()
            .filter(|e| e.count > 0)
            .map(|e| e.sum / f64::from(e.count))
            .fold(0.0, f64::max)
    }

    /// The relative gain the noise rule asks for: [`NOISE_MULTIPLE`] times
    /// the largest spread, divided by the square root of the fewest
    /// observations behind a processor's level (a median of `m` noisy
    /// observations errs about `1 / sqrt(m)` as much as one). O(n).
    fn threshold(&self) -> f64 {
        let fewest = self.each.iter().map(|e| e.window.len()).min().unwrap_or(0);
        NOISE_MULTIPLE * self.largest() / (fewest.max(1) as f64).sqrt()
    }

    /// Whether some processor was observed only once at its loads (its
    /// level may be a spike). O(n).
    fn unconfirmed(&self) -> bool {
        self.each.iter().any(|e| e.window.len() < 2)
    }
}

impl Decider {
    /// A decider with a relative noise tolerance of 5% and no border time.
    ///
    /// # Arguments
    /// * `policy` - the online policy deciding;
    /// * `c_succ` - seconds per item from processor i to i+1;
    /// * `c_pred` - seconds per item from processor i to i-1 (`None`: the plans
    ///   use only the clockwise links).
    ///
    /// # Errors
    /// [`DecideError::OfflinePolicy`] for [`Policy::OfflineBest`];
    /// [`DecideError::Cost`] for a cost that is NaN, infinite or negative.
    ///
    /// # Complexity
    /// O(n) to check the costs.
    ///
    /// # Example
    /// ```
    /// use hetbal::iterative::online::{DecideError, Decider};
    /// use hetbal::iterative::Policy;
    /// assert!(Decider::new(Policy::Adaptive, vec![1.0; 3], None).is_ok());
    /// let e = Decider::new(Policy::OfflineBest, vec![1.0; 3], None).unwrap_err();
    /// assert_eq!(e, DecideError::OfflinePolicy);
    /// let e = Decider::new(Policy::Adaptive, vec![1.0; 3], Some(vec![1.0, f64::NAN, 1.0]));
    /// assert_eq!(e.unwrap_err().to_string(), "c_pred[1] = NaN: a cost must be finite and >= 0");
    /// ```
    pub fn new(
        policy: Policy,
        c_succ: Vec<f64>,
        c_pred: Option<Vec<f64>>,
    ) -> Result<Decider, DecideError> {
        if policy == Policy::OfflineBest {
            return Err(DecideError::OfflinePolicy);
        }
        check_link_costs("c_succ", &c_succ)?;
        check_link_costs("c_pred", c_pred.as_deref().unwrap_or_default())?;
        Ok(Decider {
            policy,
            c_succ,
            c_pred,
            l_succ: Vec::new(),
            l_pred: Vec::new(),
            bound_first: true,
            border: Vec::new(),
            tolerance: 0.05,
            iteration: 0,
            first: Vec::new(),
            times: Vec::new(),
            adaptive: AdaptiveState::new(0),
            origin: 0,
            last_plan: None,
            model: DeciderModel::Constant,
            learner: None,
            exploration: EXPLORATION_BUDGET,
            spread: Spread::default(),
        })
    }

    /// The same decider with `model` for the compute times:
    /// [`DeciderModel::Constant`] (the default: one time per item per
    /// processor, the decisions of the simulator) or
    /// [`DeciderModel::Functional`] (a time function of the load per
    /// processor, learned from every observation: see the [module's
    /// docs](self#learning-time-functions)). What was learned before is
    /// forgotten. O(1).
    ///
    /// # Example
    /// ```
    /// use hetbal::iterative::online::{Decider, DeciderModel};
    /// use hetbal::iterative::Policy;
    /// // P0 is a GPU: 2 s of overhead, then 1 ms per item; P1 takes 10 ms per item.
    /// let gpu = |x: u64| 2.0 + 1e-3 * x as f64;
    /// let cpu = |x: u64| 1e-2 * x as f64;
    /// let mut decider = Decider::new(Policy::Profitability, vec![1e-5; 2], None)
    ///     .unwrap()
    ///     .with_model(DeciderModel::functional());
    /// let mut loads = vec![500, 500];
    /// for remaining in (0..8).rev() {
    ///     let d = decider.observe(&loads, &[gpu(loads[0]), cpu(loads[1])], remaining).unwrap();
    ///     loads = d.targets;
    /// }
    /// // The optimum: 2 + 0.001 x against 0.01 (1000 - x): x = 728 (2.728 s and 2.72 s;
    /// // 727 would leave P1 at 2.73 s).
    /// assert_eq!(loads, vec![728, 272]);
    /// ```
    pub fn with_model(mut self, model: DeciderModel) -> Decider {
        self.model = model;
        self.learner = match model {
            DeciderModel::Constant => None,
            DeciderModel::Functional(m) => Some(learning::Learner::new(m, self.exploration)),
        };
        self
    }

    /// The same decider allowing at most `moves` exploring moves with the
    /// functional model (moves taking a processor outside the loads it was
    /// measured at; [`EXPLORATION_BUDGET`] by default); after them every target
    /// stays within its processor's measured loads. No effect with the constant
    /// model. O(1).
    ///
    /// ```
    /// use hetbal::iterative::online::{Decider, DeciderModel};
    /// use hetbal::iterative::Policy;
    /// let decider = Decider::new(Policy::Profitability, vec![1e-3; 2], None)
    ///     .unwrap()
    ///     .with_model(DeciderModel::functional())
    ///     .with_exploration(2);
    /// assert_eq!(decider.learning().unwrap().explorations, 0);
    /// ```
    pub fn with_exploration(mut self, moves: u32) -> Decider {
        self.exploration = moves;
        if let Some(learner) = &mut self.learner {
            learner.set_budget(moves);
        }
        self
    }

    /// The model of the compute times ([`Decider::with_model`]). O(1).
    pub fn model(&self) -> DeciderModel {
        self.model
    }

    /// What the functional model has learned, as of the last decision
    /// (`None` with the constant model): the fitted time functions, the
    /// points held, the measured noise, the exploring moves taken, the
    /// clipped observations, and where the last targets were unmeasured or
    /// limited. O(n m) for n processors of m points (a copy).
    ///
    /// # Example
    /// ```
    /// use hetbal::iterative::online::{Decider, DeciderModel};
    /// use hetbal::iterative::Policy;
    /// let mut decider = Decider::new(Policy::Profitability, vec![1e-3; 2], None)
    ///     .unwrap()
    ///     .with_model(DeciderModel::functional());
    /// assert!(decider.learning().unwrap().functions.is_empty());
    /// // P1 is four times slower: the optimum [80, 20] is beyond half of P1's
    /// // 50 items, so the move stops at 25 there.
    /// let d = decider.observe(&[50, 50], &[0.5, 2.0], 10).unwrap();
    /// assert_eq!(d.targets, vec![75, 25]);
    /// let learned = decider.learning().unwrap();
    /// assert_eq!(learned.limited, vec![false, true]); // 80 is within twice 50
    /// assert_eq!(learned.unmeasured, vec![true, true]);
    /// assert_eq!(learned.explorations, 1);
    /// assert_eq!(learned.functions[1].time(50), 2.0);
    /// ```
    pub fn learning(&self) -> Option<Learning> {
        self.learner.as_ref().map(learning::Learner::report)
    }

    /// The same decider with a relative tolerance for noise (default 0.05): a
    /// processor's time per item that moves by less is taken as unchanged, and a
    /// balanced iteration faster by less is no reason to move. 0 (or a negative
    /// value): every difference counts, as in the simulator. With
    /// [`DeciderModel::Functional`] it is the floor of the noise rule (see the
    /// [module's docs](self#learning-time-functions)). O(1).
    pub fn with_tolerance(mut self, tolerance: f64) -> Decider {
        self.tolerance = tolerance.max(0.0);
        self
    }

    /// The same decider adding `border[i]` seconds to processor i's iteration
    /// time (a border exchange that does not depend on the loads, as the
    /// simulator's `border_items`); none by default, and missing entries count
    /// as 0. O(1).
    pub fn with_border(mut self, border: Vec<f64>) -> Decider {
        self.border = border;
        self
    }

    /// Replaces the ring's links (for example after measuring them again),
    /// keeping what the decider has learned. O(1).
    pub fn set_links(&mut self, c_succ: Vec<f64>, c_pred: Option<Vec<f64>>) {
        self.last_plan = None;
        self.c_succ = c_succ;
        self.c_pred = c_pred;
    }

    /// The ring's links: seconds per item to the successor and to the
    /// predecessor (`None`: only clockwise moves). O(1).
    pub fn links(&self) -> (&[f64], Option<&[f64]>) {
        (&self.c_succ, self.c_pred.as_deref())
    }

    /// Gives every link a start-up: `l_succ[i]` seconds before the items of
    /// each message from processor i to i+1, `l_pred[i]` before those from i to
    /// i-1 (`None`: no start-up that way; ignored when only clockwise moves are
    /// planned). Every redistribution is then priced by its plan with start-ups
    /// (see the [module's docs](self)); empty slices remove the start-ups. The
    /// values are checked when a redistribution is priced: a start-up that is
    /// negative or not finite is then a [`DecideError::Instance`], a list that
    /// does not hold one per processor a [`DecideError::Links`]. O(n).
    ///
    /// # Example
    /// ```
    /// use hetbal::iterative::online::Decider;
    /// use hetbal::iterative::Policy;
    /// // P1 computes twice slower; moving 17 items takes 17 ms without start-ups.
    /// let mut decider = Decider::new(Policy::Profitability, vec![1e-3; 2], None).unwrap();
    /// assert!(decider.observe(&[50, 50], &[0.5, 1.0], 1).unwrap().redistribute);
    /// // With a start-up of 1 s per message, one more iteration does not pay for it.
    /// let mut decider = Decider::new(Policy::Profitability, vec![1e-3; 2], None).unwrap();
    /// decider.set_startups(vec![1.0; 2], None);
    /// let d = decider.observe(&[50, 50], &[0.5, 1.0], 1).unwrap();
    /// assert!(!d.redistribute);
    /// assert!(!d.planned && d.redistribution_time >= 1.0); // a lower bound did it
    /// // Over 10 more iterations it pays, and the price is the plan's makespan.
    /// let d = decider.observe(&[50, 50], &[0.5, 1.0], 10).unwrap();
    /// assert!(d.redistribute && d.planned);
    /// assert!((d.redistribution_time - 1.017).abs() < 1e-12);
    /// ```
    pub fn set_startups(&mut self, l_succ: Vec<f64>, l_pred: Option<Vec<f64>>) {
        let n = l_succ.len();
        self.last_plan = None;
        self.l_pred = l_pred.unwrap_or_else(|| vec![0.0; n]);
        self.l_succ = l_succ;
        if self.l_succ.is_empty() {
            self.l_pred.clear();
        }
    }

    /// The ring instance and the plan (start-ups included) of the last
    /// decision, when it moved the items: what a runtime carries out, without
    /// planning it again; `None` after a decision that kept them, and once the
    /// links or start-ups change. O(1).
    ///
    /// # Example
    /// ```
    /// use hetbal::iterative::online::Decider;
    /// use hetbal::iterative::Policy;
    /// let mut decider = Decider::new(Policy::Profitability, vec![1e-3; 2], None).unwrap();
    /// let d = decider.observe(&[50, 50], &[0.5, 1.0], 10).unwrap();
    /// let (ring, plan) = decider.last_plan().expect("it moved");
    /// assert_eq!((ring.targets(), plan.makespan), (&d.targets[..], d.redistribution_time));
    /// decider.observe(&[67, 33], &[0.67, 0.66], 10).unwrap();
    /// assert!(decider.last_plan().is_none());
    /// ```
    pub fn last_plan(&self) -> Option<(&RingInstance, &RingPlan)> {
        self.last_plan.as_ref().map(|(ring, plan)| (ring, plan))
    }

    /// The start-ups per message to the successor and to the predecessor
    /// (empty when the links have none). O(1).
    pub fn startups(&self) -> (&[f64], &[f64]) {
        (&self.l_succ, &self.l_pred)
    }

    /// What the next decision to redistribute would change in the decider, to
    /// put back with [`Decider::forget`] if the redistribution fails. O(1).
    ///
    /// # Example
    /// ```
    /// use hetbal::iterative::online::Decider;
    /// use hetbal::iterative::Policy;
    /// let mut decider = Decider::new(Policy::Profitability, vec![1e-3; 2], None).unwrap();
    /// let mark = decider.mark();
    /// let d = decider.observe(&[50, 50], &[0.5, 1.0], 100).unwrap();
    /// assert_eq!(d.firsts, vec![83, 50]);
    /// // The items could not move: forget the decision, not the measures.
    /// decider.forget(mark);
    /// let d = decider.observe(&[50, 50], &[0.5, 1.0], 99).unwrap();
    /// assert_eq!(d.firsts, vec![83, 50]);
    /// assert_eq!(decider.iterations(), 2);
    /// ```
    pub fn mark(&self) -> Mark {
        Mark {
            origin: self.origin,
            lost: self.adaptive.lost,
        }
    }

    /// Forgets the decisions taken since `mark` ([`Decider::mark`]): what was
    /// measured stays. O(1).
    pub fn forget(&mut self, mark: Mark) {
        self.origin = mark.origin;
        self.adaptive.lost = mark.lost;
    }

    /// The largest processor's spread as measured so far: the mean relative
    /// deviation of its time per item between consecutive observations at
    /// the same load (0 until some processor was measured twice at one load).
    /// With the constant model and a positive tolerance nothing moves unless
    /// the balanced iteration is faster by more than [`NOISE_MULTIPLE`] times
    /// it over the square root of the fewest observations behind a level (see
    /// the [module's docs](self#noise)). O(n).
    ///
    /// ```
    /// use hetbal::iterative::online::Decider;
    /// use hetbal::iterative::Policy;
    /// let mut decider = Decider::new(Policy::Profitability, vec![1e-3; 2], None).unwrap();
    /// decider.observe(&[100, 100], &[1.0, 1.0], 10).unwrap();
    /// assert_eq!(decider.noise(), 0.0);
    /// decider.observe(&[100, 100], &[1.1, 1.0], 9).unwrap();
    /// assert!((decider.noise() - 0.1).abs() < 1e-12);
    /// // 20% slower than the time in force is beyond the tolerance (5%) but
    /// // within 3 times the spread (30%): nothing moves.
    /// let d = decider.observe(&[100, 100], &[1.2, 1.0], 8).unwrap();
    /// assert!(!d.redistribute);
    /// ```
    pub fn noise(&self) -> f64 {
        self.spread.largest()
    }

    /// The policy deciding. O(1).
    pub fn policy(&self) -> &Policy {
        &self.policy
    }

    /// Iterations observed so far. O(1).
    pub fn iterations(&self) -> u32 {
        self.iteration
    }

    /// Decides after one more iteration.
    ///
    /// # Arguments
    /// * `loads` - items of every processor during the iteration (each >= 1);
    /// * `seconds` - every processor's compute time in it (each > 0, and
    ///   finite with [`DeciderModel::Functional`]): not its wall time (see the
    ///   module's docs);
    /// * `remaining` - iterations still to run (0: nothing moves).
    ///
    /// # Returns
    /// The [`Decision`]; when it redistributes, the next call's loads are its
    /// targets.
    ///
    /// # Errors
    /// [`DecideError::Links`] when the links do not match the processors,
    /// [`DecideError::Measure`] for a processor without items or time (or an
    /// infinite time, with the functional model),
    /// [`DecideError::Balance`], [`DecideError::Instance`] and
    /// [`DecideError::Plan`] when the targets or the ring plan cannot be
    /// computed.
    ///
    /// # Complexity
    /// O(n log n) for the targets, plus a ring plan when they differ from the
    /// loads; [`Policy::Adaptive`] past its guard samples 64 futures:
    /// O(64 × remaining × n). With [`DeciderModel::Functional`] the targets
    /// cost O(n m) to fit n functions of m <= [`MAX_POINTS`] points, then two
    /// [`crate::functional::balance`]s, plus one more per round of targets
    /// held to their exploration bounds (usually none or one; at most n).
    ///
    /// # Example
    /// ```
    /// use hetbal::iterative::online::Decider;
    /// use hetbal::iterative::Policy;
    /// // Three processors on a unidirectional ring; P2 is four times slower.
    /// let mut decider = Decider::new(Policy::Fixed { redistributions: 1 }, vec![1e-3; 3], None).unwrap();
    /// // Fixed-1 over 1 + 9 iterations moves after iteration 5 only.
    /// let d = decider.observe(&[30, 30, 30], &[0.3, 0.3, 1.2], 9).unwrap();
    /// assert!(!d.redistribute);
    /// assert_eq!(d.targets, d.loads);
    /// ```
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
        if self.learner.is_some() {
            // Time functions need finite times.
            if let Some(rank) = (0..n).find(|&i| !seconds[i].is_finite()) {
                return Err(DecideError::Measure {
                    rank,
                    items: loads[rank],
                    seconds: seconds[rank],
                });
            }
        }
        if self.border.len() != n {
            self.border.resize(n, 0.0);
        }
        // The times per item in force: a measure within the tolerance keeps the
        // value in force. With a positive tolerance and the constant model the
        // measure is first filtered (the processor's level: see `Noise`; time
        // functions have their own rules).
        self.spread.observe(loads, seconds);
        let filter = self.tolerance > 0.0 && self.learner.is_none();
        let spread = &self.spread;
        let measured = (0..n).map(|i| {
            let raw = seconds[i] / loads[i] as f64;
            if filter {
                spread.filtered(i).unwrap_or(raw)
            } else {
                raw
            }
        });
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
            self.adaptive.restart_history(n);
        } else if self.policy == Policy::Adaptive {
            self.adaptive.observe(k, &before, &self.times, &self.first);
        }
        let total: u64 = loads.iter().sum();
        let (targets, now, balanced, threshold) = match &mut self.learner {
            None => {
                let targets = balanced_targets(total, &self.times)
                    .map_err(DecideError::Balance)?
                    .targets;
                let now = step_time(loads, &self.times, &self.border);
                let balanced = step_time(&targets, &self.times, &self.border);
                // The noise rule, off with a tolerance of 0 (the simulator's
                // decisions).
                let threshold = if self.tolerance > 0.0 {
                    if k > 1 && self.spread.unconfirmed() {
                        // Moved last time: wait for a second observation
                        // at the new loads.
                        f64::INFINITY
                    } else {
                        self.tolerance.max(self.spread.threshold())
                    }
                } else {
                    0.0
                };
                (targets, now, balanced, threshold)
            }
            Some(learner) => {
                let fitted = learner.fit(loads, seconds, &self.border)?;
                let threshold = self.tolerance.max(fitted.noise);
                (fitted.targets, fitted.now, fitted.balanced, threshold)
            }
        };
        // The price of the move: its plan, or with start-ups first a lower
        // bound, the plan made only if the bound does not rule the move out.
        let moving = targets != loads;
        self.last_plan = None;
        // (Without a positive start-up the plan is as cheap as the bound.)
        let startups = self.l_succ.iter().chain(&self.l_pred).any(|&l| l > 0.0);
        let bound_first = moving && self.bound_first && startups;
        // The bound, kept for the plan when it is made (not computed twice).
        let mut bound = None;
        let (mut redistribution_time, mut flows) = if !moving {
            (0.0, vec![0; n])
        } else if bound_first {
            let found = self.lower_bound(loads, &targets)?;
            let value = found.value;
            bound = Some(found);
            (value, vec![0; n])
        } else {
            self.plan(loads, &targets, None)?
        };
        let lost = self.adaptive.lost;
        let mut weighed = self.weigh(
            k,
            loads,
            &targets,
            (now, balanced, threshold),
            redistribution_time,
            remaining,
        );
        let planned = !bound_first || weighed.redistribute;
        if bound_first && weighed.redistribute {
            // The bound did not rule it out: the plan's price decides, on the
            // same state.
            (redistribution_time, flows) = self.plan(loads, &targets, bound)?;
            self.adaptive.lost = lost;
            weighed = self.weigh(
                k,
                loads,
                &targets,
                (now, balanced, threshold),
                redistribution_time,
                remaining,
            );
        }
        let Weighed {
            redistribute,
            predicted_gain,
        } = weighed;
        if !redistribute {
            self.last_plan = None;
        } else if let Some(learner) = &mut self.learner {
            learner.moved();
        }
        let (targets, flows) = if redistribute {
            if total > 0 {
                let into_first = flows[n - 1].rem_euclid(i128::from(total)) as u64;
                self.origin = (self.origin + total - into_first) % total;
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
            planned,
            predicted_gain,
            loads: loads.to_vec(),
            targets,
            flows,
            firsts,
        })
    }

    /// The policy's answer to moving from `loads` to `targets` at `cost`
    /// after iteration `k`, with step times `(now, balanced)`: whether to move,
    /// and the gain it predicted. Within `threshold` (relative: the tolerance,
    /// or with time functions the larger of it and the noise rule's) the gain
    /// is noise.
    /// [`Policy::Adaptive`] adds the time lost to its state.
    fn weigh(
        &mut self,
        k: u32,
        loads: &[u64],
        targets: &[u64],
        (now, balanced, threshold): (f64, f64, f64),
        cost: f64,
        remaining: u64,
    ) -> Weighed {
        let mut predicted_gain = None;
        let beyond_noise = threshold == 0.0 || now - balanced > threshold * now;
        let redistribute = targets != loads
            && remaining > 0
            && beyond_noise
            && match &self.policy {
                Policy::Never | Policy::OfflineBest => false,
                Policy::Fixed { redistributions } => {
                    fixed_points(*redistributions, u64::from(k).saturating_add(remaining))
                        .any(|point| point == u64::from(k))
                }
                Policy::At(points) => points.contains(&k),
                Policy::Profitability => {
                    let r = remaining as f64;
                    predicted_gain = Some(r * now - r * balanced);
                    profitable(cost, r, now, balanced)
                }
                Policy::Adaptive => {
                    balanced < now && {
                        let weighed = self.adaptive.weigh(&Offer {
                            iteration: k,
                            held: loads,
                            aimed: targets,
                            now,
                            balanced,
                            cost,
                            first: &self.first,
                            times: &self.times,
                            border: &self.border,
                            remaining: u32::try_from(remaining).unwrap_or(u32::MAX),
                        });
                        predicted_gain = weighed.predicted_gain;
                        weighed.redistribute
                    }
                }
            };
        Weighed {
            redistribute,
            predicted_gain,
        }
    }

    /// The ring instance of the move from `loads` to `targets`, start-ups
    /// included.
    fn instance(&self, loads: &[u64], targets: &[u64]) -> Result<RingInstance, DecideError> {
        let n = loads.len();
        let ring = redistribution_instance(loads, targets, &self.c_succ, self.c_pred.as_deref())
            .map_err(DecideError::Instance)?;
        if self.l_succ.is_empty() {
            return Ok(ring);
        }
        if self.l_succ.len() != n || self.l_pred.len() != n {
            return Err(DecideError::Links {
                links: if self.l_succ.len() != n {
                    self.l_succ.len()
                } else {
                    self.l_pred.len()
                },
                ranks: n,
            });
        }
        ring.with_startups(&self.l_succ, &self.l_pred)
            .map_err(DecideError::Instance)
    }

    /// The ring plan from `loads` to `targets` (kept as the last plan): its
    /// makespan and the net flow on every link.
    /// `bound`: the ring's start-up bound when [`Decider::lower_bound`] has
    /// computed it for these loads and targets.
    fn plan(
        &mut self,
        loads: &[u64],
        targets: &[u64],
        bound: Option<StartupBound>,
    ) -> Result<(f64, Vec<i128>), DecideError> {
        let ring = self.instance(loads, targets)?;
        let the_plan = plan_with_startup_bound(&ring, None, bound).map_err(DecideError::Plan)?;
        let priced = (the_plan.makespan, link_flows(loads.len(), &the_plan.flows));
        self.last_plan = Some((ring, the_plan));
        Ok(priced)
    }

    /// A lower bound on the makespan of every plan from `loads` to `targets`
    /// (start-ups included).
    fn lower_bound(&self, loads: &[u64], targets: &[u64]) -> Result<StartupBound, DecideError> {
        Ok(startup_lower_bound(&self.instance(loads, targets)?))
    }

    /// Prices every move by its plan, never by a bound first (the reference the
    /// tests compare the decisions with).
    #[cfg(test)]
    fn always_planning(mut self) -> Decider {
        self.bound_first = false;
        self
    }
}

/// The net flow on every link (i, i+1) of a ring of `n` processors, positive
/// clockwise, from a plan's flows (each from a processor to a neighbour). On a
/// ring of two processors, whose neighbours are one processor, every flow counts
/// as clockwise (on link (from, from + 1)).
///
/// # Arguments
/// * `n` - processors of the ring;
/// * `flows` - the plan's flows ([`crate::ring::RingPlan::flows`]), each
///   between neighbours.
///
/// # Returns
/// `n` net flows; entry i is the link from processor i to processor i + 1
/// (mod n), negative when the items go counterclockwise.
///
/// # Complexity
/// O(n + flows).
///
/// # Example
/// ```
/// use hetbal::iterative::online::link_flows;
/// use hetbal::ring::Flow;
/// let flows = [Flow { from: 1, to: 0, items: 2 }, Flow { from: 1, to: 2, items: 1 }];
/// assert_eq!(link_flows(3, &flows), vec![-2, 1, 0]);
/// ```
pub fn link_flows(n: usize, flows: &[Flow]) -> Vec<i128> {
    let mut f = vec![0i128; n];
    for fl in flows {
        if fl.to == (fl.from + 1) % n {
            f[fl.from] += i128::from(fl.items);
        } else {
            f[fl.to] -= i128::from(fl.items);
        }
    }
    f
}

/// Where every processor's items start after a ring redistribution with net
/// flows `flows` (on each link (i, i+1), positive clockwise: [`link_flows`])
/// from `loads`: the global position of processor i's first item after the
/// move, positions counted from processor 0's first item before it and
/// wrapping at the total. The boundary between processors i and i+1 moves
/// back by the flow on their link (the cyclic order of the items is kept).
///
/// With this an application knows which global items it holds after a move:
/// items `first .. first + target` (modulo the total).
///
/// # Example
/// ```
/// use hetbal::iterative::online::first_positions;
/// // 3 + 1 + 2 items; processor 0 gives 2 to processor 1, which gives 1 to 2.
/// assert_eq!(first_positions(&[3, 1, 2], &[2, 1, 0]), vec![0, 1, 3]);
/// // Processor 2 gives 1 item to processor 0 over the wrap link.
/// assert_eq!(first_positions(&[3, 1, 2], &[0, 0, 1]), vec![5, 3, 4]);
/// ```
///
/// Complexity: O(n).
pub fn first_positions(loads: &[u64], flows: &[i128]) -> Vec<u64> {
    let n = loads.len();
    let total: u128 = loads.iter().map(|&l| u128::from(l)).sum();
    let total = total.max(1) as i128;
    let mut boundary = 0i128; // old position of processor i's first item
    (0..n)
        .map(|i| {
            let into = flows.get((i + n - 1) % n).copied().unwrap_or(0);
            let first = (boundary - into).rem_euclid(total) as u64;
            boundary += i128::from(loads[i]);
            first
        })
        .collect()
}

#[cfg(test)]
mod tests;
