//! Irregular (GEN_BLOCK) redistribution scheduling (model.md section 4; paper:
//! the GEN_BLOCK message-partitioning paper).
//!
//! An array of N elements is cut in consecutive blocks over P source processors
//! and must be cut in other consecutive blocks over Q destination processors.
//! Source `i` sends destination `j` the overlap of their blocks: the
//! redistribution graph is bipartite and biplanar (no two messages cross).
//!
//! ```text
//!  array   0 . . . . . . . . . . . . . . . . . . . . . . N
//!  source  |  S0   |      S1       |  S2  |     S3      |
//!  target  |    T0     |  T1  |       T2        |  T3   |
//!  messages (S0,T0) (S1,T0) (S1,T1) (S1,T2) (S2,T2) (S3,T2) (S3,T3)
//! ```
//!
//! A communication step is a set of messages with no shared sender and no shared
//! receiver; it costs `Tu + tau * (largest message in it)` and a schedule costs
//! the sum over its steps. The fewest steps is the maximum degree `Delta`. Every
//! schedule costs at least `Delta * Tu + tau * (largest block)`: a processor takes
//! part in one message per step, so the steps' largest sizes add up to at least
//! any processor's block ([`lower_bound`]).
//!
//! Data flows one way: a validated [`GenBlockInstance`] goes to [`plan`] with a
//! [`Method`], which returns a [`GenBlockPlan`] whose
//! [`document`](GenBlockPlan::document) is the JSON of formats.md. The building
//! blocks are free functions:
//!
//! | function | what | time |
//! |---|---|---|
//! | [`redistribution_graph`] | messages, degrees, `Delta` | O(P + Q) |
//! | [`plain_colouring`] | the paper's O(m) colouring in `Delta` steps, messages unsplit (`Tb`) | O(m) |
//! | [`selection`] | the paper's Selection step (dummy edges), with a degree budget | O((m + d) log m) |
//! | [`paper_schedule`] | Selection, Scheduling and Partition, integer sizes, exactly `Delta` steps (`Ta`), and the paper's `B` | O((m + d) log m) |
//! | [`tradeoff`] | schedules from `Delta` steps up to the lower bound's, Pareto front of steps against volume | see its doc |
//! | [`best_schedule`] | the trade-off point of least cost for `Tu`, `tau`, never worse than the paper's | see its doc |
//! | [`check_schedule`] | every step a matching, every pair's total exact | O(u log u) |
//! | [`BlockListSampler`] | random block lists, uniform among all lists of `P` sizes in `[1, U]` adding up to `N` | O(P N) once, O(P log U) a list |
//!
//! (m <= P + Q - 1 messages, d dummy edges, u pieces.)
//!
//! # Example
//! ```
//! use hetbal::genblock::{plan, GenBlockInstance, Method};
//! // formats.md's instance: Delta = 3, largest block 49.
//! let g = GenBlockInstance::new(&[7, 16, 11, 10, 7, 49], &[15, 16, 10, 16, 15, 28], 0.0, 1.0)
//!     .unwrap();
//! let paper = plan(&g, Method::Paper);
//! assert_eq!((paper.degree, paper.schedule.len()), (3, 3));
//! let best = plan(&g, Method::Best);
//! assert_eq!(best.lower_bound, 49.0);
//! assert_eq!(best.cost, 49.0); // free startups: the bound is reached
//! assert!(best.cost <= paper.cost);
//! ```

mod best;
mod colouring;
mod graph;
mod instance;
mod layout;
mod paper;
mod sampler;
mod schedule;

use std::fmt;

use serde::{Deserialize, Serialize};

pub use best::{best_schedule, tradeoff, SearchOptions, Tradeoff, TradeoffPoint, MAX_PIECES};
pub use graph::{redistribution_graph, Message, RedistributionGraph};
pub use instance::{GenBlockInstance, GenBlockInstanceSpec, InstanceError};
pub use paper::{paper_schedule, plain_colouring, selection, PaperSchedule};
pub use sampler::{BlockListSampler, NoBlockList};
pub use schedule::{check_schedule, step_cost, ScheduleCheck, ScheduleViolation, StepSchedule};

/// How [`plan`] schedules the messages.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Method {
    /// The paper's Selection, Scheduling and Partition: exactly `Delta` steps.
    Paper,
    /// The least cost found for the instance's `Tu` and `tau`, any number of
    /// steps ([`best_schedule`]); never worse than `Paper`.
    Best,
}

impl Method {
    /// Every method, in the order the CLI lists them.
    pub const ALL: [Method; 2] = [Method::Paper, Method::Best];

    /// The method's name (`paper`, `best`).
    pub fn name(self) -> &'static str {
        match self {
            Method::Paper => "paper",
            Method::Best => "best",
        }
    }

    /// What the method does, in a sentence for reports.
    ///
    /// # Example
    /// ```
    /// use hetbal::genblock::Method;
    /// assert!(Method::Paper.description().ends_with("exactly Delta steps"));
    /// ```
    pub fn description(self) -> &'static str {
        match self {
            Method::Paper => {
                "the paper's Selection (dummy edges on large messages with free ends), Scheduling (O(m) colouring) and Partition, integer sizes: exactly Delta steps"
            }
            Method::Best => {
                "the least cost found over every number of steps from Delta up (optimised layouts, every colouring near Delta, the bound-meeting modular schedule and its merges), never worse than paper"
            }
        }
    }

    /// The method of a name, if any.
    ///
    /// # Example
    /// ```
    /// use hetbal::genblock::Method;
    /// assert_eq!(Method::from_name("best"), Some(Method::Best));
    /// assert_eq!(Method::from_name("fast"), None);
    /// ```
    pub fn from_name(name: &str) -> Option<Method> {
        Method::ALL.into_iter().find(|m| m.name() == name)
    }
}

impl fmt::Display for Method {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// The lower bound on the cost of every schedule:
/// `Delta * startup + unit * (largest block)`.
///
/// Every schedule needs at least `Delta` steps, and a processor takes part in at
/// most one message per step, so the largest sizes of the steps add up to at least
/// its block. Tight when `Tu = 0` ([`tradeoff`] reaches it).
///
/// Complexity: O(1) given the graph.
///
/// # Example
/// ```
/// use hetbal::genblock::{lower_bound, redistribution_graph, GenBlockInstance};
/// let g = GenBlockInstance::new(&[3, 4], &[2, 3, 2], 0.5, 2.0).unwrap();
/// assert_eq!(lower_bound(&redistribution_graph(&g), 0.5, 2.0), 2.0 * 0.5 + 2.0 * 4.0);
/// ```
pub fn lower_bound(graph: &RedistributionGraph, startup: f64, unit: f64) -> f64 {
    step_cost(graph.degree, u128::from(graph.largest_block), startup, unit)
}

/// A planned GEN_BLOCK redistribution.
#[derive(Clone, Debug)]
pub struct GenBlockPlan {
    /// The method that made the schedule.
    pub method: Method,
    /// The schedule.
    pub schedule: StepSchedule,
    /// Its cost: `startup * steps + unit * volume`.
    pub cost: f64,
    /// [`lower_bound`].
    pub lower_bound: f64,
    /// The maximum degree `Delta` of the redistribution graph.
    pub degree: usize,
    /// The cost of the plain colouring (messages unsplit, `Delta` steps): the
    /// paper's `Tb`.
    pub plain_cost: f64,
    /// The cost of the paper's method (`Ta` of `paper`).
    pub paper_cost: f64,
    /// The paper's `B` with startups: `Delta * startup + unit * B`.
    pub paper_bound: f64,
    /// For `best`: the trade-off the schedule was chosen from (steps against
    /// volume); empty for `paper`.
    pub tradeoff: Vec<TradeoffPoint>,
}

/// The schedule document of formats.md ("GEN_BLOCK instance and schedule").
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct GenBlockScheduleDocument {
    /// The steps.
    pub steps: Vec<Vec<Message>>,
    /// `sum over steps of (startup + unit * largest size in the step)`.
    pub cost: f64,
    /// `Delta * startup + unit * (largest block)`.
    pub lower_bound: f64,
    /// The maximum degree `Delta`.
    pub degree: usize,
}

impl GenBlockPlan {
    /// The JSON document of formats.md: the steps, the cost, the lower bound and
    /// `Delta`. O(pieces) (a copy).
    ///
    /// # Example
    /// ```
    /// use hetbal::genblock::{plan, GenBlockInstance, Method};
    /// let g = GenBlockInstance::new(&[3, 4], &[7], 1.0, 1.0).unwrap();
    /// let doc = plan(&g, Method::Paper).document();
    /// assert_eq!(
    ///     serde_json::to_string(&doc).unwrap(),
    ///     r#"{"steps":[[{"from":0,"to":0,"size":3}],[{"from":1,"to":0,"size":4}]],"cost":9.0,"lower_bound":9.0,"degree":2}"#
    /// );
    /// ```
    pub fn document(&self) -> GenBlockScheduleDocument {
        GenBlockScheduleDocument {
            steps: self.schedule.steps.clone(),
            cost: self.cost,
            lower_bound: self.lower_bound,
            degree: self.degree,
        }
    }
}

/// Plans a GEN_BLOCK redistribution with the instance's cost model.
///
/// # Arguments
/// * `instance`: the two distributions, `Tu` and `tau`.
/// * `method`: [`Method::Paper`] (exactly `Delta` steps) or [`Method::Best`].
///
/// # Returns
/// The [`GenBlockPlan`]: the schedule, its cost, the lower bound, `Delta`, and
/// the paper's `Tb`, `Ta` and `B` for comparison. An empty array gives no step and
/// cost 0. Never fails: every valid instance has a schedule.
///
/// # Complexity
/// `Paper`: O((m + d) log m). `Best`: that of [`best_schedule`] with the default
/// [`SearchOptions`].
///
/// # Example
/// ```
/// use hetbal::genblock::{plan, GenBlockInstance, Method};
/// // S0 holds [0, 10), S1 [10, 12); T0 gets [0, 9), T1 [9, 12).
/// //   (S0,T0) 9   (S0,T1) 1   (S1,T1) 2      Delta = 2 (S0 and T1)
/// let g = GenBlockInstance::new(&[10, 2], &[9, 3], 1.0, 1.0).unwrap();
/// let p = plan(&g, Method::Paper);
/// // Step 0: (S0,T0) 9 and (S1,T1) 2; step 1: (S0,T1) 1. Nothing can be split.
/// assert_eq!((p.cost, p.plain_cost, p.lower_bound), (12.0, 12.0, 12.0));
/// assert_eq!(p.document().steps.len(), 2);
/// ```
pub fn plan(instance: &GenBlockInstance, method: Method) -> GenBlockPlan {
    plan_with(instance, method, &SearchOptions::default())
}

/// [`plan`] with explicit search limits for [`Method::Best`].
///
/// Arguments, returns: those of [`plan`], with `options` for the search.
/// Complexity: that of [`plan`] with these options.
///
/// # Example
/// ```
/// use hetbal::genblock::{plan_with, GenBlockInstance, Method, SearchOptions};
/// let g = GenBlockInstance::new(&[10, 4, 27], &[14, 27], 3.0, 1.0).unwrap();
/// // Without the colouring and local searches.
/// let quick = SearchOptions { colouring_budget: 0, local_search_budget: 0, ..SearchOptions::default() };
/// let p = plan_with(&g, Method::Best, &quick);
/// assert!(p.cost <= p.paper_cost);
/// ```
pub fn plan_with(
    instance: &GenBlockInstance,
    method: Method,
    options: &SearchOptions,
) -> GenBlockPlan {
    let (startup, unit) = (instance.startup(), instance.unit());
    let graph = redistribution_graph(instance);
    let paper = paper_schedule(&graph);
    let paper_cost = paper.schedule.cost(startup, unit);
    let (schedule, tradeoff) = match method {
        Method::Paper => (paper.schedule.clone(), Vec::new()),
        Method::Best => {
            let (schedule, t) = best_schedule(&graph, startup, unit, options);
            (schedule, t.points)
        }
    };
    GenBlockPlan {
        method,
        cost: schedule.cost(startup, unit),
        schedule,
        lower_bound: lower_bound(&graph, startup, unit),
        degree: graph.degree,
        plain_cost: plain_colouring(&graph).cost(startup, unit),
        paper_cost,
        paper_bound: step_cost(graph.degree, paper.bound, startup, unit),
        tradeoff,
    }
}
