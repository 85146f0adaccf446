//! Hand-computed examples with exact times (like SimGrid's tests): Algorithm 2's
//! complete transfer list on heterogeneous rings where forwarding creates gaps.

use hetbal::ring::{
    asap_unidirectional, homogeneous_unidirectional, plan, RingAlgorithm, RingInstance,
};
use hetbal::validate;

use crate::common::{one_item_each, tuple};

type T = (usize, usize, u64, f64, f64);

fn run(loads: &[u64], targets: &[u64], c: &[f64], expected: &[T], makespan: f64, light: bool) {
    let ring = RingInstance::unidirectional(loads, targets, c).unwrap();
    // The expected lists give every item sent alone; the schedule writes a run of
    // them, evenly spaced, as one paced transfer.
    let asap = asap_unidirectional(&ring);
    let got: Vec<T> = one_item_each(&asap);
    assert!(asap.transfers.len() <= expected.len());
    assert_eq!(
        got, expected,
        "algorithm2 on {loads:?} -> {targets:?}, c {c:?}"
    );
    let p = plan(&ring, Some(RingAlgorithm::UnidirectionalHeterogeneous)).unwrap();
    assert_eq!(one_item_each(&p.schedule()), expected);
    assert_eq!(p.transfers, asap.transfers);
    assert_eq!(p.algorithm, "unidirectional-heterogeneous");
    assert_eq!(
        (p.makespan, p.lower_bound, p.optimal),
        (makespan, makespan, true)
    );
    assert_eq!(p.light, light);
    // The default planner reaches the same exact makespan.
    let d = plan(&ring, None).unwrap();
    assert_eq!(
        (d.makespan, d.lower_bound, d.optimal),
        (makespan, makespan, true)
    );
    assert_eq!(d.light, light);
    assert_eq!(validate(&ring, &d.schedule()).unwrap().makespan, makespan);
    assert_eq!(validate(&ring, &p.schedule()).unwrap().makespan, makespan);
}

/// P0 --2--> P1 --1--> P2: P1 sends its own item at 0, then each item as it arrives
/// (2 and 4) and keeps the one arriving at 6.
#[test]
fn forwarder_on_a_faster_link_waits_for_each_item() {
    run(
        &[4, 1, 2],
        &[1, 1, 5],
        &[2.0, 1.0, 1.0],
        &[
            (0, 1, 3, 0.0, 6.0),
            (1, 2, 1, 0.0, 1.0),
            (1, 2, 1, 2.0, 3.0),
            (1, 2, 1, 4.0, 5.0),
        ],
        6.0,
        false,
    );
}

/// The validator's doc example is Algorithm 2's schedule.
#[test]
fn validator_doc_example() {
    run(
        &[3, 1, 1],
        &[1, 1, 3],
        &[2.0, 1.0, 1.0],
        &[
            (0, 1, 2, 0.0, 4.0),
            (1, 2, 1, 0.0, 1.0),
            (1, 2, 1, 2.0, 3.0),
        ],
        4.0,
        false,
    );
}

/// P0 --3--> P1 --1--> P2; P1 holds 4 items and sends 7. The item arriving at 3 joins
/// the backlog (sent at 4, right after P1's own items: one batch of 5), the next two
/// are sent as they arrive (6, 9), the last (12) is kept.
#[test]
fn backlog_then_items_as_they_arrive() {
    run(
        &[5, 4, 1],
        &[1, 1, 8],
        &[3.0, 1.0, 1.0],
        &[
            (0, 1, 4, 0.0, 12.0),
            (1, 2, 5, 0.0, 5.0),
            (1, 2, 1, 6.0, 7.0),
            (1, 2, 1, 9.0, 10.0),
        ],
        12.0,
        false,
    );
}

/// Three hops, costs 2, 1, 3. P2's link is the slowest: it sends its own item, then
/// P1's own item (arrived at 1) back to back, at 3.
#[test]
fn slow_last_hop_absorbs_the_gap() {
    run(
        &[3, 1, 1, 1],
        &[1, 1, 1, 3],
        &[2.0, 1.0, 3.0, 1.0],
        &[
            (0, 1, 2, 0.0, 4.0),
            (1, 2, 1, 0.0, 1.0),
            (2, 3, 2, 0.0, 6.0),
            (1, 2, 1, 2.0, 3.0),
        ],
        6.0,
        false,
    );
}

/// Gaps propagate: P0 --3--> P1 --1--> P2 --1--> P3. P1 forwards at 3 and 6; P2 sends
/// its own item and P1's (arrived at 1) back to back, then the item arriving at 4.
#[test]
fn gaps_propagate_down_the_chain() {
    run(
        &[4, 1, 1, 1],
        &[1, 1, 1, 4],
        &[3.0, 1.0, 1.0, 5.0],
        &[
            (0, 1, 3, 0.0, 9.0),
            (1, 2, 1, 0.0, 1.0),
            (2, 3, 2, 0.0, 2.0),
            (1, 2, 1, 3.0, 4.0),
            (2, 3, 1, 4.0, 5.0),
            (1, 2, 1, 6.0, 7.0),
        ],
        9.0,
        false,
    );
}

/// The flow wraps around the ring (P2 -> P3 -> P0) and the walk starts at P1; costs
/// are fractions. P3 forwards the items arriving at 2.5 and 5.
#[test]
fn wrapping_flow_with_fractional_costs() {
    run(
        &[1, 1, 5, 1],
        &[4, 1, 1, 2],
        &[1.0, 1.0, 2.5, 0.5],
        &[
            (2, 3, 4, 0.0, 10.0),
            (3, 0, 1, 0.0, 0.5),
            (3, 0, 1, 2.5, 3.0),
            (3, 0, 1, 5.0, 5.5),
        ],
        10.0,
        false,
    );
}

/// A light plan: every sender holds what it sends (no forwarding, no gaps).
#[test]
fn light_plan_sends_from_time_zero() {
    run(
        &[6, 1, 4, 1],
        &[2, 5, 1, 4],
        &[0.5, 3.0, 1.5, 1.0],
        &[(0, 1, 4, 0.0, 2.0), (2, 3, 3, 0.0, 4.5)],
        4.5,
        true,
    );
}

/// The crate doc's homogeneous example through Algorithm 1.
#[test]
fn homogeneous_doc_example() {
    let ring = RingInstance::unidirectional(&[2, 2, 8], &[6, 3, 3], &[1.0; 3]).unwrap();
    let expected: Vec<T> = vec![(0, 1, 1, 0.0, 1.0), (2, 0, 5, 0.0, 5.0)];
    assert_eq!(
        homogeneous_unidirectional(&ring)
            .transfers
            .iter()
            .map(tuple)
            .collect::<Vec<_>>(),
        expected
    );
    let p = plan(&ring, None).unwrap();
    assert_eq!(p.algorithm, "unidirectional-homogeneous");
    assert_eq!(p.transfers.iter().map(tuple).collect::<Vec<_>>(), expected);
    assert_eq!(
        (p.makespan, p.lower_bound, p.optimal, p.light),
        (5.0, 5.0, true, true)
    );
    let flows: Vec<(usize, usize, u64)> = p.flows.iter().map(|f| (f.from, f.to, f.items)).collect();
    assert_eq!(flows, vec![(0, 1, 1), (2, 0, 5)]);
}
