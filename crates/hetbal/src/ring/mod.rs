//! Data redistribution on processor rings (model.md section 1).
//!
//! Instances ([`RingInstance`]), prefix sums and flows, lower bounds and the
//! planners. [`plan`] picks the right planner for a ring and returns a checked
//! [`RingPlan`].

mod flows;
mod instance;
mod plan;
mod unidirectional;

pub use flows::{prefix_sums, unidirectional_flows};
pub use instance::{InstanceError, ProcessorSpec, RingInstance, RingInstanceSpec, RingKind};
pub use plan::{Flow, PlanError, RingAlgorithm, RingPlan};
pub use unidirectional::{algorithm1, algorithm2, batched_schedule, unidirectional_lower_bound};

use crate::schedule::{validate, Schedule};

/// The most transfers [`plan`] puts in a schedule (40 bytes each in memory, about 100
/// bytes each in JSON). Rings
/// whose optimal schedules need more are refused with
/// [`PlanError::TooManyTransfers`] rather than exhausting memory.
pub const MAX_TRANSFERS: u128 = 10_000_000;

/// A lower bound valid on every ring kind: each processor must send at least its
/// surplus `delta_i^+` and receive at least its deficit `delta_i^-`, one item at a time,
/// over its cheapest link.
///
/// Weak, but proven for bidirectional rings too (the bidirectional bounds of the
/// paper, Lemma 6 and System 6, are stronger).
///
/// Complexity: O(n).
///
/// # Example
/// ```
/// use hetbal::ring::{port_lower_bound, RingInstance};
/// // P0 must give away 2 items; its cheaper link costs 1.5 per item.
/// let ring = RingInstance::bidirectional(&[3, 1, 1], &[1, 2, 2], &[2.0; 3], &[1.5; 3]).unwrap();
/// assert_eq!(port_lower_bound(&ring), 3.0);
/// ```
pub fn port_lower_bound(instance: &RingInstance) -> f64 {
    let n = instance.len();
    let out_cost = |i: usize| {
        let c = instance.c_succ()[i];
        match (instance.kind(), instance.c_pred()[i]) {
            (RingKind::Bidirectional, Some(p)) => c.min(p),
            _ => c,
        }
    };
    let in_cost = |i: usize| {
        let from_pred = instance.c_succ()[instance.pred(i)];
        match (instance.kind(), instance.c_pred()[instance.succ(i)]) {
            (RingKind::Bidirectional, Some(p)) => from_pred.min(p),
            _ => from_pred,
        }
    };
    (0..n)
        .map(|i| {
            let d = instance.delta(i);
            if d > 0 {
                d as f64 * out_cost(i)
            } else {
                (-d) as f64 * in_cost(i)
            }
        })
        .fold(0.0, f64::max)
}

/// The algorithm [`plan`] picks when none is forced: Algorithm 1 on homogeneous
/// unidirectional rings; on heterogeneous ones, Algorithm 2's optimal flows and
/// makespan in few batches ([`batched_schedule`]; Algorithm 2 itself, the
/// as-soon-as-possible schedule, can have a transfer per item). Errors on bidirectional
/// rings, which have no planner in this version.
///
/// # Example
/// ```
/// use hetbal::ring::{default_algorithm, RingAlgorithm, RingInstance};
/// let equal = RingInstance::unidirectional(&[2, 1], &[1, 2], &[1.0, 1.0]).unwrap();
/// assert_eq!(default_algorithm(&equal).unwrap(), RingAlgorithm::UnidirectionalHomogeneous);
/// let mixed = RingInstance::unidirectional(&[2, 1], &[1, 2], &[1.0, 2.0]).unwrap();
/// assert_eq!(default_algorithm(&mixed).unwrap(), RingAlgorithm::UnidirectionalBatched);
/// ```
pub fn default_algorithm(instance: &RingInstance) -> Result<RingAlgorithm, PlanError> {
    match instance.kind() {
        RingKind::Unidirectional if instance.is_homogeneous() => {
            Ok(RingAlgorithm::UnidirectionalHomogeneous)
        }
        RingKind::Unidirectional => Ok(RingAlgorithm::UnidirectionalBatched),
        RingKind::Bidirectional => Err(PlanError::Unsupported {
            reason: "no bidirectional planner in this version of hetbal; \
                     `--algorithm unidirectional-batched` gives a valid plan that uses \
                     successor links only (not proven optimal)"
                .to_string(),
        }),
    }
}

/// Plans a redistribution and checks it.
///
/// Runs `algorithm` (or [`default_algorithm`]), validates its schedule with
/// [`validate`], measures the makespan on the schedule and compares it with the
/// strongest lower bound known for the ring.
///
/// # Arguments
/// * `instance` - a validated ring;
/// * `algorithm` - `None` to let hetbal choose.
///
/// # Returns
/// The plan, with `optimal` set only when the valid schedule meets a proven lower
/// bound.
///
/// # Errors
/// [`PlanError::NotApplicable`] when the forced algorithm needs homogeneous costs;
/// [`PlanError::Unsupported`] for bidirectional rings without a forced algorithm;
/// [`PlanError::TooManyTransfers`] when the schedule would exceed [`MAX_TRANSFERS`];
/// [`PlanError::InvalidSchedule`] if a planner's schedule fails validation (a bug).
///
/// # Complexity
/// O(n + m log m) for m transfers in the schedule (validation dominates).
///
/// # Example
/// ```
/// use hetbal::ring::{plan, RingInstance};
/// let ring = RingInstance::unidirectional(&[4, 1, 1], &[2, 2, 2], &[1.0, 3.0, 1.0]).unwrap();
/// let plan = plan(&ring, None).unwrap();
/// assert_eq!(plan.algorithm, "unidirectional-batched");
/// assert_eq!((plan.makespan, plan.lower_bound, plan.optimal), (3.0, 3.0, true));
/// ```
pub fn plan(
    instance: &RingInstance,
    algorithm: Option<RingAlgorithm>,
) -> Result<RingPlan, PlanError> {
    let algorithm = match algorithm {
        Some(a) => a,
        None => default_algorithm(instance)?,
    };
    let flows = unidirectional_flows(instance);
    let schedule: Schedule = match algorithm {
        RingAlgorithm::UnidirectionalHomogeneous => {
            let c = instance.c_succ()[0];
            if let Some(i) = instance.c_succ().iter().position(|&x| x != c) {
                return Err(PlanError::NotApplicable {
                    algorithm,
                    reason: format!(
                        "it needs equal successor costs, but processor {i} ({}) has c_succ {} and processor 0 has {c}",
                        instance.name(i),
                        instance.c_succ()[i]
                    ),
                });
            }
            algorithm1(instance)
        }
        RingAlgorithm::UnidirectionalHeterogeneous | RingAlgorithm::UnidirectionalBatched => {
            let too_many = |transfers| PlanError::TooManyTransfers {
                algorithm,
                transfers,
                limit: MAX_TRANSFERS,
            };
            let trains = if algorithm == RingAlgorithm::UnidirectionalBatched {
                unidirectional::batched_trains(instance, MAX_TRANSFERS)
                    .ok_or_else(|| too_many(MAX_TRANSFERS + 1))?
            } else {
                unidirectional::algorithm2_trains(instance)
            };
            let transfers = unidirectional::transfer_count(instance, &trains);
            if transfers > MAX_TRANSFERS {
                return Err(too_many(transfers));
            }
            unidirectional::schedule_of_trains(instance, &trains)
        }
    };
    let report =
        validate(instance, &schedule).map_err(|violations| PlanError::InvalidSchedule {
            algorithm,
            violations,
        })?;
    let lower_bound = match instance.kind() {
        RingKind::Unidirectional => unidirectional::lower_bound_of_flows(instance, &flows),
        RingKind::Bidirectional => port_lower_bound(instance),
    };
    let makespan = report.makespan;
    let optimal = makespan <= lower_bound * (1.0 + 1e-9);
    let light = (0..instance.len()).all(|i| {
        u128::from(report.sent_to_succ[i]) + u128::from(report.sent_to_pred[i])
            <= u128::from(instance.loads()[i])
    });
    let flows = flows
        .iter()
        .enumerate()
        .filter(|&(_, &f)| f > 0)
        .map(|(i, &f)| Flow {
            from: i,
            to: instance.succ(i),
            items: f,
        })
        .collect();
    Ok(RingPlan {
        ring: instance.kind(),
        algorithm: algorithm.name().to_string(),
        makespan,
        lower_bound,
        optimal,
        light,
        flows,
        transfers: schedule.transfers,
    })
}
