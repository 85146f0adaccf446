//! What the simulator runs: the [`Scenario`] (ring, application, speeds), its
//! checks, and why a scenario cannot be simulated ([`SimulationError`]).

use std::fmt;

use crate::balance::BalanceError;
use crate::iterative::SpeedProfile;
use crate::ring::{InstanceError, PlanError, RingKind};

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

/// [`SimulationError::InvalidValue`] for `field` (of processor `index`) = `value`.
pub(super) fn invalid(
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

/// Checks a scenario: lengths, values, at least two processors and one iteration.
pub(super) fn check(s: &Scenario) -> Result<(), SimulationError> {
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
