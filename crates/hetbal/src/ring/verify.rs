//! Checking a plan someone hands in: its schedule against the instance with the
//! one validator, and its claims (ring kind, makespan, flows) against what the
//! schedule does.

use std::fmt;

use serde::{Deserialize, Serialize};

use crate::ring::{
    lower_bound, net_flows, validate, Flow, RingInstance, RingKind, Schedule, ScheduleReport,
    Transfer, Violation,
};

/// A plan document as [`verify`] reads it: the plan of formats.md, where every
/// field but `transfers` may be left out. Unknown fields are refused.
///
/// Read one from text with
/// [`document::parse_plan`](crate::document::parse_plan).
///
/// # Example
/// ```
/// use hetbal::ring::PlanDocument;
/// let plan: PlanDocument = serde_json::from_str(r#"{"transfers": []}"#).unwrap();
/// assert!(plan.ring.is_none() && plan.transfers.is_empty());
/// ```
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PlanDocument {
    /// Ring kind the plan was made for.
    pub ring: Option<RingKind>,
    /// Algorithm that made it.
    pub algorithm: Option<String>,
    /// Claimed makespan.
    pub makespan: Option<f64>,
    /// Claimed lower bound (not checked: [`verify`] computes its own).
    pub lower_bound: Option<f64>,
    /// Claimed optimality (not checked: [`verify`] says whether it is).
    pub optimal: Option<bool>,
    /// Claimed lightness (not checked).
    pub light: Option<bool>,
    /// Claimed net flows.
    pub flows: Option<Vec<Flow>>,
    /// The schedule, in the document's order (transfer numbers in messages follow
    /// it).
    pub transfers: Vec<Transfer>,
}

impl PlanDocument {
    /// The problem when the document names a ring kind other than the instance's
    /// (`None` when it names none, or the same).
    ///
    /// Complexity: O(1).
    ///
    /// # Example
    /// ```
    /// use hetbal::ring::{PlanDocument, RingInstance, RingKind};
    /// let ring = RingInstance::unidirectional(&[1, 1], &[1, 1], &[1.0; 2]).unwrap();
    /// let mut plan: PlanDocument = serde_json::from_str(r#"{"transfers": []}"#).unwrap();
    /// assert!(plan.kind_mismatch(&ring).is_none());
    /// plan.ring = Some(RingKind::Bidirectional);
    /// assert_eq!(
    ///     plan.kind_mismatch(&ring).unwrap().to_string(),
    ///     "the plan is for a bidirectional ring but the instance is unidirectional"
    /// );
    /// ```
    pub fn kind_mismatch(&self, ring: &RingInstance) -> Option<PlanProblem> {
        match self.ring {
            Some(plan) if plan != ring.kind() => Some(PlanProblem::KindMismatch {
                plan,
                instance: ring.kind(),
            }),
            _ => None,
        }
    }
}

/// What is wrong with a plan, as [`verify`] finds it.
#[derive(Clone, Debug, PartialEq)]
pub enum PlanProblem {
    /// The plan was made for another ring kind than the instance's.
    KindMismatch {
        /// The kind the plan names.
        plan: RingKind,
        /// The instance's kind.
        instance: RingKind,
    },
    /// The schedule breaks a rule of the model (the validator's finding).
    Violation(Violation),
    /// The claimed makespan is not when the last transfer ends (to 1e-9,
    /// relative, at least 1e-9 absolute).
    MakespanClaim {
        /// The makespan the plan claims.
        claimed: f64,
        /// When its last transfer ends.
        measured: f64,
    },
    /// The claimed flows are not the net flows of the transfers.
    FlowsDiffer {
        /// The plan's flows, sorted by (from, to, items).
        claimed: Vec<Flow>,
        /// The net flows of its transfers, sorted likewise.
        measured: Vec<Flow>,
    },
}

impl fmt::Display for PlanProblem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            PlanProblem::KindMismatch { plan, instance } => write!(
                f,
                "the plan is for a {plan} ring but the instance is {instance}"
            ),
            PlanProblem::Violation(v) => write!(f, "{v}"),
            PlanProblem::MakespanClaim { claimed, measured } => write!(
                f,
                "the plan claims makespan {claimed} but its last transfer ends at {measured}"
            ),
            PlanProblem::FlowsDiffer { claimed, measured } => write!(
                f,
                "the plan's flows {:?} differ from the net flows of its transfers {:?} (from, to, items)",
                triples(claimed),
                triples(measured)
            ),
        }
    }
}

/// Flows as `(from, to, items)`, sorted.
fn triples(flows: &[Flow]) -> Vec<(usize, usize, u64)> {
    let mut triples: Vec<_> = flows.iter().map(|f| (f.from, f.to, f.items)).collect();
    triples.sort_unstable();
    triples
}

/// Flows sorted by (from, to, items).
fn sorted(flows: &[Flow]) -> Vec<Flow> {
    triples(flows)
        .into_iter()
        .map(|(from, to, items)| Flow { from, to, items })
        .collect()
}

/// What [`verify`] finds: the problems, and for a schedule the validator accepts
/// its report, with the ring's lower bound.
#[derive(Clone, Debug, PartialEq)]
pub struct Verification {
    /// Every problem found, in this order: ring kind, the validator's violations,
    /// makespan claim, flows claim. Empty when the plan is valid.
    pub problems: Vec<PlanProblem>,
    /// The validator's report when the schedule keeps every rule of the model
    /// (`Some` even if a claim is wrong; `None` when the validator refuses it).
    pub report: Option<ScheduleReport>,
    /// Number of transfers in the plan.
    pub transfers: usize,
    /// The ring's lower bound on the makespan, [`lower_bound`].
    pub lower_bound: f64,
    /// True when the plan is valid and its makespan meets the lower bound (to
    /// 1e-9, relative): it is proven optimal.
    pub optimal: bool,
}

impl Verification {
    /// True when no problem was found.
    ///
    /// Complexity: O(1).
    pub fn is_valid(&self) -> bool {
        self.problems.is_empty()
    }
}

/// Checks a plan against an instance: the ring kind it names, its schedule with
/// the one validator ([`validate`], transfers numbered in the document's order),
/// its claimed makespan and its claimed flows (against [`net_flows`]); computes
/// the ring's [`lower_bound`] and whether the plan meets it.
///
/// # Arguments
/// * `ring`: the instance;
/// * `plan`: the plan document (only `transfers` is required; `algorithm`,
///   `lower_bound`, `optimal` and `light` are not checked).
///
/// # Returns
/// A [`Verification`]: the problems (empty when valid), the validator's report,
/// the lower bound and whether the plan is optimal. A wrong plan is not an error:
/// it is a verification with problems.
///
/// # Complexity
/// O(m log m + n) for m transfers on n processors, plus the cost of
/// [`lower_bound`] (the circulation bound on bidirectional rings).
///
/// # Example
/// ```
/// use hetbal::ring::{verify, PlanDocument, RingInstance};
/// // P0 holds 3 items and keeps 1; P1 holds 1 and ends with 3; links cost 1.
/// let ring = RingInstance::unidirectional(&[3, 1], &[1, 3], &[1.0; 2]).unwrap();
/// let plan: PlanDocument = serde_json::from_str(
///     r#"{"makespan": 2, "transfers": [{"from": 0, "to": 1, "items": 2, "start": 0, "end": 2}]}"#,
/// ).unwrap();
/// let v = verify(&ring, &plan);
/// assert!(v.is_valid() && v.optimal);
/// assert_eq!((v.report.unwrap().makespan, v.lower_bound), (2.0, 2.0));
///
/// // The same transfer claimed to end later.
/// let late = PlanDocument { makespan: Some(3.0), ..plan };
/// let v = verify(&ring, &late);
/// assert_eq!(
///     v.problems[0].to_string(),
///     "the plan claims makespan 3 but its last transfer ends at 2"
/// );
/// ```
pub fn verify(ring: &RingInstance, plan: &PlanDocument) -> Verification {
    let mut problems: Vec<PlanProblem> = plan.kind_mismatch(ring).into_iter().collect();
    // Transfer numbers in messages follow the document's order: keep it.
    let schedule = Schedule {
        transfers: plan.transfers.clone(),
    };
    let report = match validate(ring, &schedule) {
        Ok(report) => Some(report),
        Err(violations) => {
            problems.extend(violations.into_iter().map(PlanProblem::Violation));
            None
        }
    };
    if let Some(claimed) = plan.makespan {
        let measured = schedule.makespan();
        if (claimed - measured).abs() > 1e-9 * measured.abs().max(1.0) {
            problems.push(PlanProblem::MakespanClaim { claimed, measured });
        }
    }
    if let Some(flows) = &plan.flows {
        let claimed = sorted(flows);
        let measured = sorted(&net_flows(ring, &schedule));
        if claimed != measured {
            problems.push(PlanProblem::FlowsDiffer { claimed, measured });
        }
    }
    let bound = lower_bound(ring);
    let optimal = problems.is_empty()
        && report
            .as_ref()
            .is_some_and(|r| r.makespan <= bound * (1.0 + 1e-9));
    Verification {
        problems,
        report,
        transfers: schedule.transfers.len(),
        lower_bound: bound,
        optimal,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ring::ViolationRule;

    fn ring() -> RingInstance {
        RingInstance::unidirectional(&[3, 1], &[1, 3], &[1.0; 2]).unwrap()
    }

    fn transfer(items: u64, start: f64, end: f64) -> Transfer {
        Transfer::new(0, 1, items, start, end)
    }

    fn plan(transfers: Vec<Transfer>) -> PlanDocument {
        PlanDocument {
            ring: None,
            algorithm: None,
            makespan: None,
            lower_bound: None,
            optimal: None,
            light: None,
            flows: None,
            transfers,
        }
    }

    #[test]
    fn a_valid_optimal_plan_has_no_problem_and_its_report() {
        let doc = PlanDocument {
            ring: Some(RingKind::Unidirectional),
            makespan: Some(2.0),
            flows: Some(vec![Flow {
                from: 0,
                to: 1,
                items: 2,
            }]),
            ..plan(vec![transfer(2, 0.0, 2.0)])
        };
        let v = verify(&ring(), &doc);
        assert!(v.is_valid(), "{:?}", v.problems);
        assert!(v.optimal);
        assert_eq!(v.transfers, 1);
        assert_eq!(v.lower_bound, 2.0);
        assert_eq!(v.report.unwrap().received, vec![0, 2]);
    }

    #[test]
    fn a_valid_late_plan_is_not_optimal() {
        let v = verify(&ring(), &plan(vec![transfer(2, 1.0, 3.0)]));
        assert!(v.is_valid());
        assert!(!v.optimal);
        assert_eq!(v.report.unwrap().makespan, 3.0);
    }

    #[test]
    fn a_plan_for_another_ring_kind_is_refused_even_if_its_schedule_is_valid() {
        let doc = PlanDocument {
            ring: Some(RingKind::Bidirectional),
            ..plan(vec![transfer(2, 0.0, 2.0)])
        };
        let v = verify(&ring(), &doc);
        assert_eq!(
            v.problems,
            vec![PlanProblem::KindMismatch {
                plan: RingKind::Bidirectional,
                instance: RingKind::Unidirectional
            }]
        );
        assert!(v.report.is_some(), "the schedule itself is valid");
        assert!(!v.optimal);
        assert_eq!(
            v.problems[0].to_string(),
            "the plan is for a bidirectional ring but the instance is unidirectional"
        );
    }

    #[test]
    fn violations_come_from_the_validator_numbered_in_the_documents_order() {
        let bad = Transfer {
            from: 5,
            ..transfer(1, 0.0, 1.0)
        };
        let v = verify(&ring(), &plan(vec![transfer(2, 0.0, 3.0), bad]));
        assert!(v.report.is_none());
        let rules: Vec<_> = v
            .problems
            .iter()
            .map(|p| match p {
                PlanProblem::Violation(v) => (v.transfer, v.rule),
                other => panic!("not a violation: {other}"),
            })
            .collect();
        assert_eq!(
            rules,
            vec![
                (Some(0), ViolationRule::WrongDuration),
                (Some(1), ViolationRule::UnknownProcessor)
            ]
        );
        assert_eq!(
            v.problems[0].to_string(),
            "transfer 0: 0 -> 1: 2 items at 1 per item from 0 must end at 2, not 3 [duration = items x cost]"
        );
    }

    #[test]
    fn a_wrong_makespan_claim_is_a_problem_within_a_relative_tolerance() {
        let close = PlanDocument {
            makespan: Some(2.0 + 1e-12),
            ..plan(vec![transfer(2, 0.0, 2.0)])
        };
        assert!(verify(&ring(), &close).is_valid());
        let far = PlanDocument {
            makespan: Some(2.5),
            ..close
        };
        let v = verify(&ring(), &far);
        assert_eq!(
            v.problems,
            vec![PlanProblem::MakespanClaim {
                claimed: 2.5,
                measured: 2.0
            }]
        );
        assert_eq!(
            v.problems[0].to_string(),
            "the plan claims makespan 2.5 but its last transfer ends at 2"
        );
    }

    #[test]
    fn claimed_flows_are_compared_with_the_net_flows_in_any_order() {
        let flow = |from, to, items| Flow { from, to, items };
        let two = PlanDocument {
            flows: Some(vec![flow(0, 1, 2)]),
            ..plan(vec![transfer(1, 0.0, 1.0), transfer(1, 1.0, 2.0)])
        };
        assert!(verify(&ring(), &two).is_valid());
        let wrong = PlanDocument {
            flows: Some(vec![flow(1, 0, 1), flow(0, 1, 1)]),
            ..two
        };
        let v = verify(&ring(), &wrong);
        assert_eq!(
            v.problems,
            vec![PlanProblem::FlowsDiffer {
                claimed: vec![flow(0, 1, 1), flow(1, 0, 1)],
                measured: vec![flow(0, 1, 2)]
            }]
        );
        assert_eq!(
            v.problems[0].to_string(),
            "the plan's flows [(0, 1, 1), (1, 0, 1)] differ from the net flows of its transfers [(0, 1, 2)] (from, to, items)"
        );
    }
}
