//! The plan: method and order chosen, counts, displacements, times, bounds; and
//! its document (formats.md, "Scatter plan (output)").

use std::fmt;

use serde::{Deserialize, Serialize};

use crate::scatter::{
    bandwidth_order, best_order, evaluate, exact, given_order, linear, lower_bound, lp, naive_dp,
    OrderSearch, RationalDistribution, ScatterInstance, StartupRule, Timeline,
};

/// How the counts are computed for a given order.
///
/// # Example
/// ```
/// use hetbal::scatter::Method;
/// assert_eq!(Method::from_name("naive-dp"), Some(Method::NaiveDp));
/// assert_eq!(Method::Exact.to_string(), "exact");
/// assert!(Method::from_name("magic").is_none());
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Method {
    /// The paper's Algorithm 1, O(p N^2): the reference ([`naive_dp`]).
    NaiveDp,
    /// The same optimum, O(p N) with affine communication costs ([`exact`]).
    Exact,
    /// The paper's rational LP (every startup paid) and its rounding, with the
    /// paper's guaranteed bound ([`lp`]).
    Lp,
    /// The closed form of linear costs, every used processor ending together
    /// ([`linear`]).
    Linear,
}

impl Method {
    /// Every method, in the order of the docs.
    pub const ALL: [Method; 4] = [Method::NaiveDp, Method::Exact, Method::Lp, Method::Linear];

    /// The name used in plans and on the command line.
    pub fn name(self) -> &'static str {
        match self {
            Method::NaiveDp => "naive-dp",
            Method::Exact => "exact",
            Method::Lp => "lp",
            Method::Linear => "linear",
        }
    }

    /// Parses a name given by [`Method::name`].
    pub fn from_name(name: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|m| m.name() == name)
    }

    /// What the method does, in a sentence for reports.
    ///
    /// # Example
    /// ```
    /// use hetbal::scatter::Method;
    /// assert!(Method::Exact.description().contains("optimal counts"));
    /// ```
    pub fn description(self) -> &'static str {
        match self {
            Method::NaiveDp => {
                "the paper's Algorithm 1, a dynamic programme over every split (O(p N^2)): optimal counts for the order"
            }
            Method::Exact => {
                "the paper's dynamic programme without trying every split (O(p N) with affine comm costs): optimal counts for the order"
            }
            Method::Lp => "the paper's rational LP (every startup paid), rounded by its scheme",
            Method::Linear => {
                "the closed form of linear costs (every processor that gets items ends together), rounded"
            }
        }
    }

    /// True for the methods whose counts are optimal for their order.
    pub fn is_exact(self) -> bool {
        matches!(self, Method::NaiveDp | Method::Exact)
    }
}

impl fmt::Display for Method {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// How the sending order is chosen.
///
/// # Example
/// ```
/// use hetbal::scatter::OrderPolicy;
/// assert_eq!(OrderPolicy::from_name("bandwidth"), Some(OrderPolicy::Bandwidth));
/// assert_eq!(OrderPolicy::Best.name(), "best");
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum OrderPolicy {
    /// The file's order, root last ([`given_order`]).
    Given,
    /// Decreasing bandwidth, root last: Theorem 3 ([`bandwidth_order`]).
    Bandwidth,
    /// Searched ([`best_order`]): never worse than `Bandwidth`.
    Best,
}

impl OrderPolicy {
    /// Every policy.
    pub const ALL: [OrderPolicy; 3] = [
        OrderPolicy::Given,
        OrderPolicy::Bandwidth,
        OrderPolicy::Best,
    ];

    /// The name used on the command line.
    pub fn name(self) -> &'static str {
        match self {
            OrderPolicy::Given => "given",
            OrderPolicy::Bandwidth => "bandwidth",
            OrderPolicy::Best => "best",
        }
    }

    /// Parses a name given by [`OrderPolicy::name`].
    pub fn from_name(name: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|m| m.name() == name)
    }
}

impl fmt::Display for OrderPolicy {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// Why a scatter could not be planned. Messages name the method, the processor
/// (index and name), the cost and what to do instead.
///
/// # Example
/// ```
/// use hetbal::scatter::{plan, Method, OrderPolicy, PlanError, ScatterInstance};
/// let s = ScatterInstance::linear(1_000_000, 1, &[1.0, 0.0], &[1.0, 1.0]).unwrap();
/// let err = plan(&s, Method::NaiveDp, OrderPolicy::Given).unwrap_err();
/// assert!(matches!(err, PlanError::TooLarge { .. }));
/// assert!(err.to_string().ends_with("(use exact: the same optimum in O(p N))"));
/// ```
#[derive(Clone, Debug, PartialEq)]
pub enum PlanError {
    /// An order given is not a permutation of the processors ending with the root.
    InvalidOrder {
        /// What is wrong.
        reason: String,
    },
    /// Counts given do not fit the instance.
    InvalidCounts {
        /// What is wrong.
        reason: String,
    },
    /// The method needs affine costs and a processor has a table.
    NeedsAffine {
        /// The method.
        method: &'static str,
        /// Index of the processor.
        index: usize,
        /// Its name.
        name: String,
        /// `comm` or `comp`.
        cost: &'static str,
    },
    /// The method needs linear costs and a processor has a startup.
    NeedsLinear {
        /// The method.
        method: &'static str,
        /// Index of the processor.
        index: usize,
        /// Its name.
        name: String,
        /// `comm` or `comp`.
        cost: &'static str,
        /// The startup.
        startup: f64,
    },
    /// The method's relaxation needs every processor to cost some time per item.
    NeedsTimePerItem {
        /// The method.
        method: &'static str,
        /// Index of the processor.
        index: usize,
        /// Its name.
        name: String,
    },
    /// The instance is beyond the method's size limit.
    TooLarge {
        /// The method.
        method: &'static str,
        /// What is counted (`steps`, `table cells`).
        what: &'static str,
        /// How many it would take.
        amount: u128,
        /// The limit.
        limit: u128,
        /// Items N.
        items: u64,
        /// Processors p.
        processors: usize,
    },
    /// A candidate root's instance does not match the data holder's.
    RootCandidate {
        /// Index of the candidate among those given (from 1; 0 is the holder).
        candidate: usize,
        /// What differs.
        reason: String,
    },
}

impl fmt::Display for PlanError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            PlanError::InvalidOrder { reason } => write!(f, "invalid order: {reason}"),
            PlanError::InvalidCounts { reason } => write!(f, "invalid counts: {reason}"),
            PlanError::NeedsAffine {
                method,
                index,
                name,
                cost,
            } => write!(
                f,
                "method {method} needs affine costs: processor {index} ({name}) has a {cost} table (use exact)"
            ),
            PlanError::NeedsLinear {
                method,
                index,
                name,
                cost,
                startup,
            } => write!(
                f,
                "method {method} needs linear costs (startup 0): processor {index} ({name}) has {cost} startup {startup} (use lp or exact)"
            ),
            PlanError::NeedsTimePerItem {
                method,
                index,
                name,
            } => write!(
                f,
                "method {method} needs a time per item on every processor: processor {index} ({name}) has comm and comp per_item 0, so its relaxation would send it every item for free (use exact)"
            ),
            PlanError::TooLarge {
                method,
                what,
                amount,
                limit,
                items,
                processors,
            } => {
                write!(
                    f,
                    "method {method} would need {amount} {what} for {items} items on {processors} processors, beyond its limit of {limit}"
                )?;
                match *method {
                    "naive-dp" => f.write_str(" (use exact: the same optimum in O(p N))"),
                    "exact" => f.write_str(
                        " (use lp: O(p^2) whatever the number of items, within its printed bound)",
                    ),
                    _ => Ok(()),
                }
            }
            PlanError::RootCandidate { candidate, reason } => {
                write!(f, "candidate root {candidate}: {reason}")
            }
        }
    }
}

impl std::error::Error for PlanError {}

/// A scatter plan: who gets how many items, in which order, when each finishes.
#[derive(Clone, Debug, PartialEq)]
pub struct ScatterPlan {
    /// The method that computed the counts.
    pub method: Method,
    /// How the order was chosen.
    pub order_policy: OrderPolicy,
    /// The sending order (processor indices), root last.
    pub order: Vec<usize>,
    /// Items per position of `order`; they add up to N.
    pub counts: Vec<u64>,
    /// Where each position's items start in the root's buffer (prefix sums of
    /// `counts`): with `counts`, the arguments of MPI_Scatterv on a communicator
    /// ranked in `order`.
    pub displacements: Vec<u64>,
    /// Waiting, receiving and computing times per position (plus `start`).
    pub timeline: Timeline,
    /// `max` of the finish times (plus `start`).
    pub makespan: f64,
    /// A lower bound on the makespan of every integer distribution in this order
    /// ([`lower_bound`], plus `start`).
    pub lower_bound: f64,
    /// The startup rule the times are computed with (the instance's).
    pub startup_rule: StartupRule,
    /// True when the counts are proven optimal for the order (`exact`,
    /// `naive-dp`).
    pub optimal_for_order: bool,
    /// For `lp` and `linear`: the rational solution, the bound and the makespan of
    /// the counts with every startup paid (the rule under which the paper's
    /// guarantee holds).
    pub rational: Option<RationalReport>,
    /// For the order policy `best`: how the order was found.
    pub search: Option<OrderSearch>,
    /// When the scatter starts (0, or the time to move the data to the root when
    /// the root was chosen by [`crate::scatter::choose_root`]); every time above
    /// includes it.
    pub start: f64,
}

/// The rational side of an `lp` or `linear` plan.
#[derive(Clone, Debug, PartialEq)]
pub struct RationalReport {
    /// The rational solution and its rounding.
    pub distribution: RationalDistribution,
    /// The makespan of the counts with every startup paid.
    pub makespan_always: f64,
    /// `rational_makespan + guarantee`: the counts end by then with every startup
    /// paid (the paper's bound), whatever the instance's rule.
    pub bound: f64,
}

/// The plan document of formats.md ("Scatter plan (output)"): names instead of
/// indices, nothing else.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ScatterPlanDocument {
    /// Method name.
    pub method: String,
    /// Sending order (names), root last.
    pub order: Vec<String>,
    /// Items per position of `order`.
    pub counts: Vec<u64>,
    /// Displacements per position of `order`.
    pub displacements: Vec<u64>,
    /// Finish time per position of `order` (s).
    pub finish_times: Vec<f64>,
    /// Makespan (s).
    pub makespan: f64,
    /// Lower bound (s).
    pub lower_bound: f64,
}

impl ScatterPlan {
    /// The document of this plan, with the names of `instance` (the instance it
    /// was planned on). Complexity: O(p).
    ///
    /// # Example
    /// ```
    /// use hetbal::scatter::{plan, Method, OrderPolicy, ScatterInstance};
    /// let s = ScatterInstance::linear(3, 2, &[2.0, 4.0, 0.0], &[6.0, 8.0, 6.0]).unwrap();
    /// let doc = plan(&s, Method::Exact, OrderPolicy::Best).unwrap().document(&s);
    /// assert_eq!(
    ///     serde_json::to_string(&doc).unwrap(),
    ///     r#"{"method":"exact","order":["P1","P0","P2"],"counts":[1,1,1],"displacements":[0,1,2],"finish_times":[12.0,12.0,12.0],"makespan":12.0,"lower_bound":12.0}"#
    /// );
    /// ```
    pub fn document(&self, instance: &ScatterInstance) -> ScatterPlanDocument {
        ScatterPlanDocument {
            method: self.method.name().to_string(),
            order: self
                .order
                .iter()
                .map(|&i| instance.name(i).to_string())
                .collect(),
            counts: self.counts.clone(),
            displacements: self.displacements.clone(),
            finish_times: self.timeline.finish_times.clone(),
            makespan: self.makespan,
            lower_bound: self.lower_bound,
        }
    }

    /// The same plan started at `start` seconds instead of 0 (every time shifted).
    ///
    /// # Example
    /// ```
    /// use hetbal::scatter::{plan, Method, OrderPolicy, ScatterInstance};
    /// let s = ScatterInstance::linear(3, 2, &[2.0, 4.0, 0.0], &[6.0, 8.0, 6.0]).unwrap();
    /// let later = plan(&s, Method::Exact, OrderPolicy::Best).unwrap().started_at(1.5);
    /// assert_eq!((later.start, later.makespan), (1.5, 13.5));
    /// ```
    pub fn started_at(mut self, start: f64) -> Self {
        let shift = |v: &mut Vec<f64>| v.iter_mut().for_each(|x| *x += start);
        shift(&mut self.timeline.receive_start);
        shift(&mut self.timeline.receive_end);
        shift(&mut self.timeline.finish_times);
        self.timeline.makespan += start;
        self.makespan += start;
        self.lower_bound += start;
        if let Some(r) = &mut self.rational {
            r.bound += start;
            r.makespan_always += start;
        }
        self.start += start;
        self
    }
}

/// Prefix sums of the counts (they add up to a u64, so none overflows).
fn displacements(counts: &[u64]) -> Vec<u64> {
    let mut at = 0u64;
    counts
        .iter()
        .map(|&c| {
            let d = at;
            at = at.checked_add(c).expect("counts add up to N, a u64");
            d
        })
        .collect()
}

/// Plans the scatter in a given `order` with `method`: counts, displacements,
/// times, lower bound, and for `lp`/`linear` the rational solution and its bound.
///
/// # Errors
/// Those of the method ([`exact`], [`naive_dp`], [`lp`], [`linear`]).
///
/// # Complexity
/// The method's, plus O(p^2) for the lower bound (plus the tables' lengths).
///
/// # Example
/// ```
/// use hetbal::scatter::{plan_in_order, Method, ScatterInstance};
/// let s = ScatterInstance::linear(3, 2, &[2.0, 4.0, 0.0], &[6.0, 8.0, 6.0]).unwrap();
/// let plan = plan_in_order(&s, Method::Exact, &[1, 0, 2]).unwrap();
/// assert_eq!(plan.counts, vec![1, 1, 1]);
/// assert_eq!(plan.displacements, vec![0, 1, 2]);
/// assert_eq!(plan.makespan, 12.0);
/// assert_eq!(plan.lower_bound, 12.0); // the rational optimum is integral here
/// ```
pub fn plan_in_order(
    instance: &ScatterInstance,
    method: Method,
    order: &[usize],
) -> Result<ScatterPlan, PlanError> {
    let (counts, rational) = match method {
        Method::NaiveDp => (naive_dp(instance, order)?.counts, None),
        Method::Exact => (exact(instance, order)?.counts, None),
        Method::Lp | Method::Linear => {
            let d = if method == Method::Lp {
                lp(instance, order)?
            } else {
                linear(instance, order)?
            };
            let always = instance.with_rule(StartupRule::Always);
            let makespan_always = evaluate(&always, order, &d.counts)?.makespan;
            let bound = d.rational_makespan + d.guarantee;
            (
                d.counts.clone(),
                Some(RationalReport {
                    distribution: d,
                    makespan_always,
                    bound,
                }),
            )
        }
    };
    let timeline = evaluate(instance, order, &counts)?;
    Ok(ScatterPlan {
        method,
        order_policy: OrderPolicy::Given,
        order: order.to_vec(),
        displacements: displacements(&counts),
        counts,
        makespan: timeline.makespan,
        timeline,
        lower_bound: lower_bound(instance, order)?,
        startup_rule: instance.startup_rule(),
        optimal_for_order: method.is_exact(),
        rational,
        search: None,
        start: 0.0,
    })
}

/// Plans the scatter of `instance`: chooses the order by `policy`, then the counts
/// by `method` ([`plan_in_order`]).
///
/// With [`OrderPolicy::Best`] the order comes from [`best_order`]; the plan in
/// [`bandwidth_order`] is computed too and kept instead should the searched one
/// end later once the times are added from the front (they can differ in the last
/// bits of an f64), so the plan is never worse than Theorem 3's order.
///
/// # Errors
/// Those of the method; see [`PlanError`].
///
/// # Complexity
/// The method's, plus the search's for `best` ([`best_order`]).
///
/// # Example
/// ```
/// use hetbal::scatter::{plan, Method, OrderPolicy, ScatterInstance};
/// let s = ScatterInstance::linear(3, 2, &[2.0, 4.0, 0.0], &[6.0, 8.0, 6.0]).unwrap();
/// let by_bandwidth = plan(&s, Method::Exact, OrderPolicy::Bandwidth).unwrap();
/// let best = plan(&s, Method::Exact, OrderPolicy::Best).unwrap();
/// assert_eq!((by_bandwidth.makespan, best.makespan), (14.0, 12.0));
/// assert_eq!(best.document(&s).order, vec!["P1", "P0", "P2"]);
/// ```
pub fn plan(
    instance: &ScatterInstance,
    method: Method,
    policy: OrderPolicy,
) -> Result<ScatterPlan, PlanError> {
    let mut result = match policy {
        OrderPolicy::Given => plan_in_order(instance, method, &given_order(instance))?,
        OrderPolicy::Bandwidth => plan_in_order(instance, method, &bandwidth_order(instance))?,
        OrderPolicy::Best => {
            let mut search = best_order(instance, method)?;
            let mut found = plan_in_order(instance, method, &search.order)?;
            if search.order != bandwidth_order(instance) {
                let reference = plan_in_order(instance, method, &bandwidth_order(instance))?;
                if reference.makespan < found.makespan {
                    found = reference;
                    search.order = found.order.clone();
                    search.value = search.bandwidth_value;
                }
            }
            found.search = Some(search);
            found
        }
    };
    result.order_policy = policy;
    Ok(result)
}
