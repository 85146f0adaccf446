//! Step schedules, their cost, and the check of a schedule ([`check_schedule`]:
//! the tests run it on every planned schedule, and the MPI runtime on every
//! schedule it is given).

use std::fmt;

use serde::{Deserialize, Serialize};

use super::graph::{Message, RedistributionGraph};

/// A schedule in communication steps: `steps[c]` lists the messages (pieces of the
/// redistribution's messages) sent in step `c`. Steps run one after the other; a
/// step costs `startup + unit * (largest size in it)`.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct StepSchedule {
    /// The steps, in order.
    pub steps: Vec<Vec<Message>>,
}

impl StepSchedule {
    /// Number of steps.
    pub fn len(&self) -> usize {
        self.steps.len()
    }

    /// Whether the schedule has no step.
    pub fn is_empty(&self) -> bool {
        self.steps.is_empty()
    }

    /// The largest size of each step (0 for an empty step).
    ///
    /// Complexity: O(pieces).
    ///
    /// # Example
    /// ```
    /// use hetbal::genblock::{Message, StepSchedule};
    /// let m = |from, to, size| Message { from, to, size };
    /// let s = StepSchedule { steps: vec![vec![m(0, 0, 7), m(1, 1, 3)], vec![]] };
    /// assert_eq!(s.largest(), vec![7, 0]);
    /// ```
    pub fn largest(&self) -> Vec<u64> {
        self.steps
            .iter()
            .map(|step| step.iter().map(|m| m.size).max().unwrap_or(0))
            .collect()
    }

    /// The sum over steps of the largest size: the elements whose transfer time the
    /// schedule pays. Exact (u128: no overflow whatever the schedule).
    ///
    /// Complexity: O(pieces).
    pub fn volume(&self) -> u128 {
        self.largest().iter().map(|&s| u128::from(s)).sum()
    }

    /// The cost `sum over steps of (startup + unit * largest size)`, evaluated as
    /// `startup * steps + unit * volume` from the exact integer volume, so that two
    /// schedules with the same number of steps and volume cost exactly the same.
    ///
    /// Complexity: O(pieces).
    ///
    /// # Example
    /// ```
    /// use hetbal::genblock::{Message, StepSchedule};
    /// let m = |from, to, size| Message { from, to, size };
    /// let s = StepSchedule { steps: vec![vec![m(0, 0, 7), m(1, 1, 3)], vec![m(0, 1, 2)]] };
    /// assert_eq!(s.volume(), 9);
    /// assert_eq!(s.cost(0.5, 2.0), 2.0 * 0.5 + 2.0 * 9.0);
    /// ```
    pub fn cost(&self, startup: f64, unit: f64) -> f64 {
        step_cost(self.len(), self.volume(), startup, unit)
    }
}

/// The cost of `steps` steps whose largest sizes add up to `volume`:
/// `startup * steps + unit * volume`.
///
/// Complexity: O(1).
///
/// # Example
/// ```
/// use hetbal::genblock::step_cost;
/// assert_eq!(step_cost(4, 29, 1.5, 1.0), 35.0);
/// ```
pub fn step_cost(steps: usize, volume: u128, startup: f64, unit: f64) -> f64 {
    startup * steps as f64 + unit * volume as f64
}

/// A rule of [`check_schedule`] that a schedule breaks.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ScheduleViolation {
    /// A step has no message.
    EmptyStep {
        /// The step (from 0).
        step: usize,
    },
    /// A message names a processor that does not exist.
    NoSuchProcessor {
        /// The step.
        step: usize,
        /// The message.
        message: Message,
    },
    /// A message carries no element.
    EmptyMessage {
        /// The step.
        step: usize,
        /// The message.
        message: Message,
    },
    /// A source processor sends twice in one step.
    SendsTwice {
        /// The step.
        step: usize,
        /// The source processor.
        from: usize,
    },
    /// A destination processor receives twice in one step.
    ReceivesTwice {
        /// The step.
        step: usize,
        /// The destination processor.
        to: usize,
    },
    /// The sizes sent from `from` to `to` over all steps differ from the overlap of
    /// their blocks (0 when the blocks do not overlap).
    WrongTotal {
        /// Source processor.
        from: usize,
        /// Destination processor.
        to: usize,
        /// The overlap of the two blocks.
        expected: u64,
        /// What the schedule sends.
        sent: u128,
    },
}

impl fmt::Display for ScheduleViolation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ScheduleViolation::EmptyStep { step } => {
                write!(f, "step {step}: has no message (a step must send something)")
            }
            ScheduleViolation::NoSuchProcessor { step, message } => write!(
                f,
                "step {step}: message {} -> {} names a processor that does not exist",
                message.from, message.to
            ),
            ScheduleViolation::EmptyMessage { step, message } => write!(
                f,
                "step {step}: message {} -> {} has size 0 (leave it out)",
                message.from, message.to
            ),
            ScheduleViolation::SendsTwice { step, from } => write!(
                f,
                "step {step}: source {from} sends two messages (a step is a matching)"
            ),
            ScheduleViolation::ReceivesTwice { step, to } => write!(
                f,
                "step {step}: destination {to} receives two messages (a step is a matching)"
            ),
            ScheduleViolation::WrongTotal {
                from,
                to,
                expected,
                sent,
            } => write!(
                f,
                "pair {from} -> {to}: the steps send {sent} elements but the blocks overlap on {expected}"
            ),
        }
    }
}

/// What [`check_schedule`] measured on a valid schedule.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ScheduleCheck {
    /// Number of steps.
    pub steps: usize,
    /// Number of messages over all steps (pieces).
    pub pieces: usize,
    /// Sum over steps of the largest size.
    pub volume: u128,
}

/// Checks a step schedule against a redistribution graph: every step is a
/// non-empty matching (no source sends twice, no destination receives twice),
/// every message names existing processors and carries at least one element, and
/// for every pair of processors the sizes over all steps add up to the overlap of
/// their blocks.
///
/// # Arguments
/// * `graph`: the redistribution graph (see [`super::redistribution_graph`]).
/// * `schedule`: the schedule to check.
///
/// # Returns
/// The measured [`ScheduleCheck`] when valid; otherwise every violation found,
/// in step order, then pair order.
///
/// # Complexity
/// O(u log u + P + Q) for u pieces.
///
/// # Example
/// ```
/// use hetbal::genblock::{check_schedule, redistribution_graph, GenBlockInstance, Message};
/// use hetbal::genblock::{ScheduleViolation, StepSchedule};
/// let g = GenBlockInstance::new(&[3, 4], &[2, 3, 2], 0.0, 1.0).unwrap();
/// let graph = redistribution_graph(&g);
/// let m = |from, to, size| Message { from, to, size };
/// let good = StepSchedule { steps: vec![
///     vec![m(0, 0, 2), m(1, 1, 2)],
///     vec![m(0, 1, 1), m(1, 2, 2)],
/// ] };
/// assert_eq!(check_schedule(&graph, &good).unwrap().volume, 4);
///
/// let bad = StepSchedule { steps: vec![vec![m(0, 0, 2), m(0, 1, 1)], vec![m(1, 1, 2), m(1, 2, 2)]] };
/// let errors = check_schedule(&graph, &bad).unwrap_err();
/// assert_eq!(errors[0], ScheduleViolation::SendsTwice { step: 0, from: 0 });
/// ```
pub fn check_schedule(
    graph: &RedistributionGraph,
    schedule: &StepSchedule,
) -> Result<ScheduleCheck, Vec<ScheduleViolation>> {
    let p = graph.source_degree.len();
    let q = graph.target_degree.len();
    let mut violations = Vec::new();
    let mut sent: Vec<(usize, usize, u64)> = Vec::new();
    let mut last_send = vec![usize::MAX; p];
    let mut last_receive = vec![usize::MAX; q];
    for (step, messages) in schedule.steps.iter().enumerate() {
        if messages.is_empty() {
            violations.push(ScheduleViolation::EmptyStep { step });
        }
        for &message in messages {
            if message.from >= p || message.to >= q {
                violations.push(ScheduleViolation::NoSuchProcessor { step, message });
                continue;
            }
            if message.size == 0 {
                violations.push(ScheduleViolation::EmptyMessage { step, message });
            }
            if last_send[message.from] == step {
                violations.push(ScheduleViolation::SendsTwice {
                    step,
                    from: message.from,
                });
            }
            if last_receive[message.to] == step {
                violations.push(ScheduleViolation::ReceivesTwice {
                    step,
                    to: message.to,
                });
            }
            last_send[message.from] = step;
            last_receive[message.to] = step;
            sent.push((message.from, message.to, message.size));
        }
    }
    sent.sort_unstable();
    // Merge the sorted sums per pair with the expected messages (sorted too).
    let mut totals: Vec<(usize, usize, u128)> = Vec::new();
    for (from, to, size) in sent {
        match totals.last_mut() {
            Some(last) if (last.0, last.1) == (from, to) => last.2 += u128::from(size),
            _ => totals.push((from, to, u128::from(size))),
        }
    }
    let (mut a, mut b) = (0usize, 0usize);
    let expected = &graph.messages;
    while a < expected.len() || b < totals.len() {
        let e = expected.get(a).map(|m| (m.from, m.to));
        let t = totals.get(b).map(|t| (t.0, t.1));
        match (e, t) {
            (Some(ek), Some(tk)) if ek == tk => {
                if u128::from(expected[a].size) != totals[b].2 {
                    violations.push(ScheduleViolation::WrongTotal {
                        from: ek.0,
                        to: ek.1,
                        expected: expected[a].size,
                        sent: totals[b].2,
                    });
                }
                a += 1;
                b += 1;
            }
            (Some(ek), tk) if tk.is_none() || Some(ek) < tk => {
                violations.push(ScheduleViolation::WrongTotal {
                    from: ek.0,
                    to: ek.1,
                    expected: expected[a].size,
                    sent: 0,
                });
                a += 1;
            }
            _ => {
                violations.push(ScheduleViolation::WrongTotal {
                    from: totals[b].0,
                    to: totals[b].1,
                    expected: 0,
                    sent: totals[b].2,
                });
                b += 1;
            }
        }
    }
    if violations.is_empty() {
        Ok(ScheduleCheck {
            steps: schedule.len(),
            pieces: schedule.steps.iter().map(Vec::len).sum(),
            volume: schedule.volume(),
        })
    } else {
        Err(violations)
    }
}
