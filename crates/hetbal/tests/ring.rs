//! Integration tests of the ring planners and of the schedule validator.
//!
//! - `properties`: thousands of random unidirectional rings (homogeneous and
//!   heterogeneous costs, loose and tight loads, counts up to 10^12): valid, optimal,
//!   bound = naive slice bound, flows conserve items.
//! - `exhaustive`: a breadth-first search over tiny rings confirms optimality.
//! - `general`: instances outside the papers' model (processors with no items,
//!   paths): every planner valid or refusing, bounds below the exhaustive optimum.
//! - `extremes`: rings at the edges of f64 (times past 2^52 item costs, costs
//!   10^12 and more apart, paths) are planned.
//! - `mutations`: broken schedules are rejected for the exact rule.
//! - `regression`: hand-computed schedules with exact times.
//! - `bidirectional`: System 6 against brute force, planners against the exhaustive
//!   optimum of tiny bidirectional rings.

#[path = "ring/bidirectional.rs"]
mod bidirectional;
#[path = "ring/common.rs"]
mod common;
#[path = "ring/exhaustive.rs"]
mod exhaustive;
#[path = "ring/extremes.rs"]
mod extremes;
#[path = "ring/general.rs"]
mod general;
#[path = "ring/mutations.rs"]
mod mutations;
#[path = "ring/properties.rs"]
mod properties;
#[path = "ring/regression.rs"]
mod regression;

/// Costs whose plans' times overflow f64 are bad input, not a planner bug.
#[test]
fn costs_that_overflow_are_refused_as_input() {
    let ring =
        hetbal::ring::RingInstance::unidirectional(&[3, 1, 1], &[1, 2, 2], &[1e308; 3]).unwrap();
    let e = hetbal::ring::plan(&ring, None).unwrap_err();
    assert!(
        matches!(e, hetbal::ring::PlanError::TimesOverflow { .. }),
        "{e}"
    );
    assert!(
        e.to_string()
            .contains("measure time in a larger unit, so that the costs are smaller numbers"),
        "{e}"
    );
    // Large but finite: planned.
    let ring =
        hetbal::ring::RingInstance::unidirectional(&[3, 1, 1], &[1, 2, 2], &[1e300; 3]).unwrap();
    assert_eq!(hetbal::ring::plan(&ring, None).unwrap().makespan, 2e300);
}
