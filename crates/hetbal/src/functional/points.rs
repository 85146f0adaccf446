//! The measured-points document (formats.md, "Measured points"): items to
//! share, a model, and every processor's measured `(load, seconds)` points;
//! [`PointsInstance::from_spec`] validates it into time functions and
//! [`PointsInstance::balance`] shares the items ([`balance`]).
//!
//! ```
//! use hetbal::functional::{Model, PointsInstance, PointsInstanceSpec, PointsProcessorSpec};
//! let spec = PointsInstanceSpec {
//!     total: 3000,
//!     model: Model::PiecewiseLinear,
//!     processors: vec![
//!         PointsProcessorSpec { name: Some("gpu".into()), points: vec![(1, 2.001), (10_000, 12.0)] },
//!         PointsProcessorSpec { name: None, points: vec![(1000, 4.0)] },
//!     ],
//! };
//! let instance = PointsInstance::from_spec(spec).unwrap();
//! assert_eq!(instance.names(), ["gpu", "P1"]);
//! let b = instance.balance().unwrap();
//! assert_eq!(b.processors.iter().map(|p| p.target).sum::<u64>(), 3000);
//! assert_eq!(b.time, b.processors.iter().map(|p| p.seconds).fold(0.0, f64::max));
//! ```

use std::collections::HashMap;
use std::fmt;

use serde::{Deserialize, Serialize};

use super::{balance, FunctionalError, Model, TimeFunction};

/// A measured-points document as written: the items to share, the model
/// between the points (default piecewise linear) and the processors.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PointsInstanceSpec {
    /// Items to share (u64).
    pub total: u64,
    /// How the time is interpolated between the points.
    #[serde(default)]
    pub model: Model,
    /// The processors, in order.
    pub processors: Vec<PointsProcessorSpec>,
}

/// One processor of a measured-points document.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PointsProcessorSpec {
    /// Its name (default `P<index>`); not empty, unique.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// Measured `(load, seconds)` points, any order ([`TimeFunction::new`]).
    pub points: Vec<(u64, f64)>,
}

/// Why a measured-points document is invalid or cannot be balanced. Each
/// message names the processor (index and name) and the rule it breaks.
#[derive(Clone, Debug, PartialEq)]
pub enum PointsError {
    /// `processors` is empty.
    NoProcessors,
    /// A name given as `""`.
    EmptyName {
        /// The processor.
        index: usize,
    },
    /// Two processors carry the same name.
    DuplicateName {
        /// Index of the second processor with that name.
        index: usize,
        /// The repeated name.
        name: String,
        /// Index of the first processor with that name.
        first: usize,
    },
    /// A point's time is infinite, NaN or negative.
    InvalidTime {
        /// The processor.
        index: usize,
        /// Its name.
        name: String,
        /// The point's index in `points`.
        point: usize,
        /// The point's load.
        load: u64,
        /// The time given.
        seconds: f64,
    },
    /// No point of positive load and positive time (after the times are made
    /// non-decreasing), or no points at all.
    NoPoints {
        /// The processor.
        index: usize,
        /// Its name.
        name: String,
        /// How many points it has.
        count: usize,
    },
    /// The optimum's time is beyond the largest f64.
    TimeOverflow {
        /// Items to share.
        total: u64,
    },
}

impl fmt::Display for PointsError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            PointsError::NoProcessors => {
                f.write_str("field `processors`: give at least one processor")
            }
            PointsError::EmptyName { index } => {
                write!(f, "processor {index}: field `name` must not be empty")
            }
            PointsError::DuplicateName { index, name, first } => write!(
                f,
                "processor {index} ({name}): name {name:?} must be unique, processor {first} has it too"
            ),
            PointsError::InvalidTime {
                index,
                name,
                point,
                load,
                seconds,
            } => write!(
                f,
                "processor {index} ({name}): field `points[{point}]`: the time {seconds} s at load \
                 {load} must be finite and >= 0"
            ),
            PointsError::NoPoints { index, name, count } => write!(
                f,
                "processor {index} ({name}): field `points`: {} (a time function needs a point \
                 of positive load and positive time)",
                if *count == 0 {
                    "no points".to_string()
                } else {
                    format!("none of its {count} points has a positive load and a positive time")
                }
            ),
            PointsError::TimeOverflow { total } => write!(
                f,
                "field `total`: {total} items: the balanced time overflows (it is beyond {:e} s); \
                 give the times in a larger unit",
                f64::MAX
            ),
        }
    }
}

impl std::error::Error for PointsError {}

/// A validated measured-points document: every processor's name and time
/// function.
#[derive(Clone, Debug, PartialEq)]
pub struct PointsInstance {
    total: u64,
    model: Model,
    names: Vec<String>,
    functions: Vec<TimeFunction>,
}

impl PointsInstance {
    /// Validates a document: at least one processor; names not empty and
    /// unique (default `P<index>`); every time finite and >= 0; every
    /// processor with a point of positive load and positive time once its
    /// times are made non-decreasing ([`TimeFunction::new`]: points of load 0
    /// are ignored, repeated loads averaged).
    ///
    /// # Errors
    /// The first rule broken, in processor order: [`PointsError`].
    ///
    /// # Complexity
    /// O(m log m) for m points in all.
    ///
    /// ```
    /// use hetbal::functional::{Model, PointsError, PointsInstance, PointsInstanceSpec, PointsProcessorSpec};
    /// let spec = PointsInstanceSpec {
    ///     total: 10,
    ///     model: Model::default(),
    ///     processors: vec![PointsProcessorSpec { name: Some("a".into()), points: vec![(5, -1.0)] }],
    /// };
    /// let e = PointsInstance::from_spec(spec).unwrap_err();
    /// assert!(matches!(e, PointsError::InvalidTime { index: 0, point: 0, .. }));
    /// assert_eq!(e.to_string(), "processor 0 (a): field `points[0]`: the time -1 s at load 5 must be finite and >= 0");
    /// ```
    pub fn from_spec(spec: PointsInstanceSpec) -> Result<PointsInstance, PointsError> {
        if spec.processors.is_empty() {
            return Err(PointsError::NoProcessors);
        }
        let mut names = Vec::with_capacity(spec.processors.len());
        let mut functions = Vec::with_capacity(spec.processors.len());
        let mut seen: HashMap<String, usize> = HashMap::new();
        for (index, p) in spec.processors.into_iter().enumerate() {
            let name = match p.name {
                Some(name) if name.is_empty() => return Err(PointsError::EmptyName { index }),
                Some(name) => name,
                None => format!("P{index}"),
            };
            if let Some(&first) = seen.get(&name) {
                return Err(PointsError::DuplicateName { index, name, first });
            }
            seen.insert(name.clone(), index);
            if let Some((point, &(load, seconds))) = p
                .points
                .iter()
                .enumerate()
                .find(|(_, (_, s))| !(s.is_finite() && *s >= 0.0))
            {
                return Err(PointsError::InvalidTime {
                    index,
                    name,
                    point,
                    load,
                    seconds,
                });
            }
            let function = TimeFunction::new(index, &p.points, spec.model).map_err(|_| {
                PointsError::NoPoints {
                    index,
                    name: name.clone(),
                    count: p.points.len(),
                }
            })?;
            names.push(name);
            functions.push(function);
        }
        Ok(PointsInstance {
            total: spec.total,
            model: spec.model,
            names,
            functions,
        })
    }

    /// Items to share. O(1).
    pub fn total(&self) -> u64 {
        self.total
    }

    /// The model between the points. O(1).
    pub fn model(&self) -> Model {
        self.model
    }

    /// The processors' names, in order. O(1).
    pub fn names(&self) -> &[String] {
        &self.names
    }

    /// The processors' time functions, in order. O(1).
    pub fn functions(&self) -> &[TimeFunction] {
        &self.functions
    }

    /// The exact integer optimum of `min max_j t_j(x_j)`, `Σ x_j = total`
    /// ([`balance`]), with each processor's target and predicted time.
    ///
    /// # Errors
    /// [`PointsError::TimeOverflow`] when the optimum is beyond the largest
    /// f64.
    ///
    /// # Complexity
    /// That of [`balance`].
    ///
    /// # Example
    /// ```
    /// use hetbal::functional::{Model, PointsInstance, PointsInstanceSpec, PointsProcessorSpec};
    /// let spec = PointsInstanceSpec {
    ///     total: 3000,
    ///     model: Model::PiecewiseLinear,
    ///     processors: vec![
    ///         PointsProcessorSpec { name: Some("gpu".into()), points: vec![(1, 2.001), (10_000, 12.0)] },
    ///         PointsProcessorSpec { name: None, points: vec![(1000, 4.0)] },
    ///     ],
    /// };
    /// let b = PointsInstance::from_spec(spec).unwrap().balance().unwrap();
    /// assert_eq!(b.processors.iter().map(|p| p.target).sum::<u64>(), 3000);
    /// ```
    pub fn balance(&self) -> Result<PointsBalance, PointsError> {
        let b = balance(self.total, &self.functions).map_err(|e| match e {
            FunctionalError::TimeOverflow { total } => PointsError::TimeOverflow { total },
            // The instance has processors, and its functions were made.
            _ => PointsError::NoProcessors,
        })?;
        let processors = self
            .names
            .iter()
            .zip(&self.functions)
            .zip(&b.loads)
            .map(|((name, f), &target)| PointsTarget {
                name: name.clone(),
                target,
                seconds: f.time(target),
            })
            .collect();
        Ok(PointsBalance {
            total: self.total,
            model: self.model,
            time: b.time,
            processors,
        })
    }
}

/// The balance of a measured-points document (formats.md, "Balance with
/// measured points (output)").
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct PointsBalance {
    /// Items shared.
    pub total: u64,
    /// The model between the points.
    pub model: Model,
    /// The predicted iteration time: the largest of the processors' predicted
    /// seconds, the least over every split.
    pub time: f64,
    /// Every processor, in the document's order.
    pub processors: Vec<PointsTarget>,
}

/// One processor's share.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct PointsTarget {
    /// Its name.
    pub name: String,
    /// Items it should hold.
    pub target: u64,
    /// Its model's time with them.
    pub seconds: f64,
}
