//! GEN_BLOCK instances: the document of formats.md and its validation.

use std::fmt;

use serde::{Deserialize, Serialize};

/// A GEN_BLOCK redistribution as written in a file (formats.md, "GEN_BLOCK instance
/// and schedule"), not yet validated. Turn it into a [`GenBlockInstance`] with
/// [`GenBlockInstance::from_spec`].
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct GenBlockInstanceSpec {
    /// Block sizes of the source distribution, one per source processor, in array
    /// order.
    pub source: Vec<u64>,
    /// Block sizes of the target distribution, one per destination processor.
    pub target: Vec<u64>,
    /// Startup time `Tu` paid once per communication step (finite, >= 0).
    pub startup: f64,
    /// Time `tau` to send one element (finite, > 0).
    pub unit: f64,
}

/// Why a GEN_BLOCK instance is invalid. Each message names the field, the bad
/// value and the rule it breaks.
#[derive(Clone, Debug, PartialEq)]
pub enum InstanceError {
    /// A distribution has no processor.
    NoProcessors {
        /// `source` or `target`.
        side: &'static str,
    },
    /// The two distributions do not cover arrays of the same size.
    SumsDiffer {
        /// Sum of the source blocks.
        source_sum: u128,
        /// Sum of the target blocks.
        target_sum: u128,
    },
    /// The array has more elements than a u64 can count.
    TotalTooLarge {
        /// The exact number of elements.
        total: u128,
    },
    /// `startup` or `unit` breaks its rule.
    InvalidCost {
        /// `startup` or `unit`.
        field: &'static str,
        /// The bad value.
        value: f64,
        /// The rule, e.g. `must be finite and > 0`.
        rule: &'static str,
    },
}

impl fmt::Display for InstanceError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            InstanceError::NoProcessors { side } => write!(
                f,
                "{side}: the distribution has no block: give at least one processor"
            ),
            InstanceError::SumsDiffer {
                source_sum,
                target_sum,
            } => write!(
                f,
                "source blocks add up to {source_sum} elements but target blocks to {target_sum}: both must cover the same array"
            ),
            InstanceError::TotalTooLarge { total } => write!(
                f,
                "source: the blocks add up to {total} elements, more than a u64 can count ({})",
                u64::MAX
            ),
            InstanceError::InvalidCost { field, value, rule } => {
                write!(f, "{field}: {} {rule}", crate::shown(*value))
            }
        }
    }
}

impl std::error::Error for InstanceError {}

/// A validated GEN_BLOCK redistribution: an array of `N` elements cut in
/// consecutive blocks over `P` source processors (`source[i]` elements on source
/// processor `i`, in array order) must be cut in other consecutive blocks over `Q`
/// destination processors (`target[j]` elements), with a cost model of `startup`
/// (`Tu`, per communication step) and `unit` (`tau`, per element).
///
/// Guarantees: `P, Q >= 1`; both distributions cover the same number of elements,
/// which fits in a u64; `startup` is finite and >= 0; `unit` is finite and > 0;
/// `(P + Q) startup + N unit` is finite (no schedule's cost overflows). Empty
/// blocks (size 0) are allowed: their processor sends or receives nothing.
///
/// # Example
/// ```
/// use hetbal::genblock::GenBlockInstance;
/// // array:   |0 1 2|3 4 5 6|       source: 3 + 4 elements on 2 processors
/// //          |0 1|2 3 4|5 6|       target: 2 + 3 + 2 elements on 3 processors
/// let g = GenBlockInstance::new(&[3, 4], &[2, 3, 2], 0.5, 1.0).unwrap();
/// assert_eq!((g.sources(), g.targets(), g.total_elements()), (2, 3, 7));
///
/// // Distributions of different arrays are refused, with both totals.
/// let err = GenBlockInstance::new(&[3, 4], &[2, 3], 0.0, 1.0).unwrap_err();
/// assert_eq!(
///     err.to_string(),
///     "source blocks add up to 7 elements but target blocks to 5: both must cover the same array"
/// );
/// ```
#[derive(Clone, Debug, PartialEq)]
pub struct GenBlockInstance {
    source: Vec<u64>,
    target: Vec<u64>,
    startup: f64,
    unit: f64,
    total: u64,
}

fn check_cost(field: &'static str, value: f64, positive: bool) -> Result<(), InstanceError> {
    let rule = if positive {
        "must be finite and > 0"
    } else {
        "must be finite and >= 0"
    };
    let ok = value.is_finite() && if positive { value > 0.0 } else { value >= 0.0 };
    if ok {
        Ok(())
    } else {
        Err(InstanceError::InvalidCost { field, value, rule })
    }
}

/// Refuses costs with which a schedule's cost can overflow f64: one start-up
/// per message (at most `blocks` messages, source and target blocks together)
/// plus `unit` per element of every step's largest message (at most `total`
/// in all).
fn check_total_cost(
    startup: f64,
    unit: f64,
    blocks: usize,
    total: u64,
) -> Result<(), InstanceError> {
    let (startups, units) = (blocks as f64 * startup, total as f64 * unit);
    if (startups + units).is_finite() {
        return Ok(());
    }
    let (field, value) = if startups >= units {
        ("startup", startup)
    } else {
        ("unit", unit)
    };
    Err(InstanceError::InvalidCost {
        field,
        value,
        rule: "is too large: the cost of a schedule would overflow a 64-bit float; measure time in a larger unit, so that the costs are smaller numbers",
    })
}

impl GenBlockInstance {
    /// Validates an instance document.
    ///
    /// Arguments: the document as read from a file. Returns the validated
    /// instance. Errors: the first rule broken, checked in this order: each side
    /// has a processor, `startup`, `unit`, the totals, then the cost of a
    /// schedule, which must not overflow f64 (see [`InstanceError`]).
    /// Complexity: O(P + Q).
    ///
    /// # Example
    /// ```
    /// use hetbal::genblock::{GenBlockInstance, GenBlockInstanceSpec};
    /// let spec: GenBlockInstanceSpec = serde_json::from_str(
    ///     r#"{"source": [3, 4], "target": [7], "startup": 0.5, "unit": 1.0}"#,
    /// ).unwrap();
    /// let g = GenBlockInstance::from_spec(spec.clone()).unwrap();
    /// assert_eq!(g.to_spec(), spec);
    ///
    /// let bad = GenBlockInstanceSpec { unit: -1.0, ..spec };
    /// let err = GenBlockInstance::from_spec(bad).unwrap_err();
    /// assert_eq!(err.to_string(), "unit: -1 must be finite and > 0");
    /// ```
    pub fn from_spec(spec: GenBlockInstanceSpec) -> Result<Self, InstanceError> {
        if spec.source.is_empty() {
            return Err(InstanceError::NoProcessors { side: "source" });
        }
        if spec.target.is_empty() {
            return Err(InstanceError::NoProcessors { side: "target" });
        }
        check_cost("startup", spec.startup, false)?;
        check_cost("unit", spec.unit, true)?;
        let source_sum: u128 = spec.source.iter().map(|&b| u128::from(b)).sum();
        let target_sum: u128 = spec.target.iter().map(|&b| u128::from(b)).sum();
        if source_sum != target_sum {
            return Err(InstanceError::SumsDiffer {
                source_sum,
                target_sum,
            });
        }
        let total = u64::try_from(source_sum)
            .map_err(|_| InstanceError::TotalTooLarge { total: source_sum })?;
        let blocks = spec.source.len() + spec.target.len();
        check_total_cost(spec.startup, spec.unit, blocks, total)?;
        Ok(GenBlockInstance {
            source: spec.source,
            target: spec.target,
            startup: spec.startup,
            unit: spec.unit,
            total,
        })
    }

    /// Validates blocks and costs given directly (see [`GenBlockInstance::from_spec`]).
    ///
    /// Errors and complexity: those of [`GenBlockInstance::from_spec`].
    pub fn new(
        source: &[u64],
        target: &[u64],
        startup: f64,
        unit: f64,
    ) -> Result<Self, InstanceError> {
        Self::from_spec(GenBlockInstanceSpec {
            source: source.to_vec(),
            target: target.to_vec(),
            startup,
            unit,
        })
    }

    /// The document this instance was read from.
    pub fn to_spec(&self) -> GenBlockInstanceSpec {
        GenBlockInstanceSpec {
            source: self.source.clone(),
            target: self.target.clone(),
            startup: self.startup,
            unit: self.unit,
        }
    }

    /// The same blocks with another cost model.
    ///
    /// Arguments: the startup `Tu` (finite, at least 0) and the unit time `tau`
    /// (finite, positive). Errors: [`InstanceError::InvalidCost`] as in
    /// [`GenBlockInstance::from_spec`]. Complexity: O(P + Q) (a copy).
    ///
    /// # Example
    /// ```
    /// use hetbal::genblock::GenBlockInstance;
    /// let g = GenBlockInstance::new(&[3, 4], &[7], 0.0, 1.0).unwrap();
    /// let h = g.with_costs(2.0, 0.5).unwrap();
    /// assert_eq!((h.startup(), h.unit(), h.source()), (2.0, 0.5, g.source()));
    /// assert!(g.with_costs(f64::NAN, 1.0).is_err());
    /// ```
    pub fn with_costs(&self, startup: f64, unit: f64) -> Result<Self, InstanceError> {
        check_cost("startup", startup, false)?;
        check_cost("unit", unit, true)?;
        let blocks = self.source.len() + self.target.len();
        check_total_cost(startup, unit, blocks, self.total)?;
        Ok(GenBlockInstance {
            startup,
            unit,
            ..self.clone()
        })
    }

    /// Source block sizes, in array order.
    pub fn source(&self) -> &[u64] {
        &self.source
    }

    /// Target block sizes, in array order.
    pub fn target(&self) -> &[u64] {
        &self.target
    }

    /// Number of source processors `P`.
    pub fn sources(&self) -> usize {
        self.source.len()
    }

    /// Number of destination processors `Q`.
    pub fn targets(&self) -> usize {
        self.target.len()
    }

    /// Startup time `Tu` of a communication step.
    pub fn startup(&self) -> f64 {
        self.startup
    }

    /// Time `tau` per element.
    pub fn unit(&self) -> f64 {
        self.unit
    }

    /// Number of elements `N` of the array.
    pub fn total_elements(&self) -> u64 {
        self.total
    }

    /// The largest block of either distribution: the most elements one processor
    /// sends or receives. O(P + Q).
    ///
    /// # Example
    /// ```
    /// use hetbal::genblock::GenBlockInstance;
    /// let g = GenBlockInstance::new(&[3, 4], &[1, 5, 1], 0.0, 1.0).unwrap();
    /// assert_eq!(g.largest_block(), 5);
    /// ```
    pub fn largest_block(&self) -> u64 {
        self.source
            .iter()
            .chain(&self.target)
            .copied()
            .max()
            .unwrap_or(0)
    }
}
