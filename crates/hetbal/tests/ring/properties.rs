//! Property tests of the unidirectional planners on thousands of random rings.

use hetbal::ring::{
    asap_unidirectional, homogeneous_unidirectional, plan, prefix_sums, unidirectional_flows,
    unidirectional_lower_bound, PlanError, RingAlgorithm, RingKind, RingPlan,
};
use hetbal::{validate, ViolationRule};
use proptest::prelude::*;

use crate::common::*;

fn fail(msg: String) -> TestCaseError {
    TestCaseError::fail(msg)
}

/// The checks every plan of a unidirectional ring must pass, whatever the planner:
/// valid, optimal (makespan = bound = naive slice bound), minimal flows that conserve
/// items, successor transfers sorted by start then sender.
fn check_one_plan(u: &Uni, p: &RingPlan) -> Result<(), TestCaseError> {
    let ring = u.ring();
    let n = ring.len();
    let s = p.schedule();
    let report = validate(&ring, &s)
        .map_err(|v| fail(format!("{}: invalid schedule: {v:?}", p.algorithm)))?;

    // The bound: library, flow form recomputed here, and the naive O(n^2) slices.
    let sums = naive_prefix_sums(&u.loads, &u.targets);
    prop_assert_eq!(&prefix_sums(&ring), &sums);
    prop_assert_eq!(*sums.last().unwrap(), 0);
    let min = *sums.iter().min().unwrap();
    let f: Vec<u64> = sums.iter().map(|&x| (x - min) as u64).collect();
    prop_assert_eq!(&unidirectional_flows(&ring), &f);
    prop_assert!(f.contains(&0));
    let flow_bound = f
        .iter()
        .zip(&u.costs)
        .map(|(&x, &c)| x as f64 * c)
        .fold(0.0, f64::max);
    let slice_bound = naive_slice_bound(&u.loads, &u.targets, &u.costs);
    let lb = unidirectional_lower_bound(&ring);
    prop_assert!(close(lb, flow_bound, 1e-12), "{} vs {}", lb, flow_bound);
    prop_assert!(close(lb, slice_bound, 1e-12), "{} vs {}", lb, slice_bound);
    prop_assert!(close(p.lower_bound, lb, 1e-12));

    // Optimal, and the makespan is the schedule's.
    prop_assert!(
        close(p.makespan, lb, 1e-9),
        "{}: makespan {} bound {}",
        p.algorithm,
        p.makespan,
        lb
    );
    prop_assert!(p.optimal);
    prop_assert_eq!(p.makespan, s.makespan());
    prop_assert_eq!(p.makespan, report.makespan);
    prop_assert_eq!(p.ring, RingKind::Unidirectional);

    // Flows: minimal, on successor links, conserving items.
    let mut out = vec![0u64; n];
    for fl in &p.flows {
        prop_assert!(fl.from < n && fl.to == (fl.from + 1) % n && fl.items > 0);
        prop_assert_eq!(out[fl.from], 0, "two flows on one link");
        out[fl.from] = fl.items;
    }
    prop_assert_eq!(&out, &f);
    for i in 0..n {
        let held = u.loads[i] as i128 - out[i] as i128 + out[(i + n - 1) % n] as i128;
        prop_assert_eq!(held, u.targets[i] as i128, "conservation at {}", i);
    }
    // The schedule moves exactly the flows.
    prop_assert_eq!(&report.sent_to_succ, &f);
    prop_assert!(report.sent_to_pred.iter().all(|&x| x == 0));
    for i in 0..n {
        prop_assert_eq!(report.received[i], f[(i + n - 1) % n]);
    }
    prop_assert_eq!(p.light, (0..n).all(|i| f[i] <= u.loads[i]));

    // Transfers: successor only, non-empty, sorted by start then sender.
    for t in &p.transfers {
        prop_assert!(t.to == (t.from + 1) % n && t.items >= 1);
    }
    for w in p.transfers.windows(2) {
        prop_assert!(
            w[0].start < w[1].start || (w[0].start == w[1].start && w[0].from <= w[1].from),
            "{}: transfers not sorted: {:?}",
            p.algorithm,
            w
        );
    }
    Ok(())
}

/// The default plan and every planner that can be forced on the ring.
fn check_plan(u: &Uni) -> Result<(), TestCaseError> {
    let ring = u.ring();
    let homogeneous = u.costs.iter().all(|&c| c == u.costs[0]);
    let lb = unidirectional_lower_bound(&ring);

    let default = plan(&ring, None).map_err(|e| fail(format!("plan failed: {e}")))?;
    check_one_plan(u, &default)?;
    if homogeneous {
        prop_assert_eq!(
            &default.algorithm,
            RingAlgorithm::UnidirectionalHomogeneous.name()
        );
        prop_assert_eq!(
            &default.transfers,
            &homogeneous_unidirectional(&ring).transfers
        );
    } else {
        prop_assert!(default.algorithm != RingAlgorithm::UnidirectionalHomogeneous.name());
        // The default never has more batches than Algorithm 2's ASAP schedule.
        prop_assert!(
            default.transfers.len() <= asap_unidirectional(&ring).transfers.len(),
            "{}: {} transfers, asap_unidirectional {}",
            default.algorithm,
            default.transfers.len(),
            asap_unidirectional(&ring).transfers.len()
        );
    }

    // Every planner but the exact search (exponential, checked on its own) and the
    // convoys (within the transfer limit, not always optimal: checked in `batched`).
    for a in RingAlgorithm::ALL
        .into_iter()
        .filter(|&a| a != RingAlgorithm::ExactSearch && a != RingAlgorithm::UnidirectionalConvoys)
    {
        match plan(&ring, Some(a)) {
            Ok(p) => {
                prop_assert_eq!(&p.algorithm, a.name());
                prop_assert!(
                    a != RingAlgorithm::UnidirectionalHomogeneous || homogeneous,
                    "Algorithm 1 accepted on a heterogeneous ring"
                );
                check_one_plan(u, &p)?;
                if a == RingAlgorithm::UnidirectionalHeterogeneous {
                    prop_assert_eq!(&p.transfers, &asap_unidirectional(&ring).transfers);
                }
            }
            Err(PlanError::NotApplicable { algorithm, .. }) => {
                // Only Algorithm 1 on a heterogeneous ring, and the bidirectional
                // planners on these unidirectional rings, may refuse.
                prop_assert_eq!(algorithm, a);
                let bidirectional = matches!(
                    a,
                    RingAlgorithm::BidirectionalBlocks
                        | RingAlgorithm::BidirectionalLemma9
                        | RingAlgorithm::BidirectionalList
                        | RingAlgorithm::BidirectionalSegments
                        | RingAlgorithm::System8
                        | RingAlgorithm::PaperAlgorithm3
                );
                prop_assert!(
                    bidirectional
                        || (a == RingAlgorithm::UnidirectionalHomogeneous && !homogeneous),
                    "{} refused a ring it should plan",
                    a
                );
            }
            Err(e) => return Err(fail(format!("{a} failed: {e}"))),
        }
    }

    if !homogeneous {
        // Algorithm 1's raw schedule on a heterogeneous ring is either valid (hence
        // optimal: everything starts at 0 and ends by the bound) or breaks store and
        // forward only.
        let a1 = homogeneous_unidirectional(&ring);
        match validate(&ring, &a1) {
            Ok(r) => prop_assert!(close(r.makespan, lb, 1e-9)),
            Err(v) => prop_assert!(
                v.iter().all(|x| x.rule == ViolationRule::NotHeld),
                "{:?}",
                v
            ),
        }
    }
    Ok(())
}

const CASES: u32 = 4000;

#[test]
fn homogeneous_loose() {
    check(
        "homogeneous_loose",
        CASES,
        loose(40, 1000, Costs::Homogeneous),
        |u| check_plan(&u),
    );
}

#[test]
fn homogeneous_tight() {
    check(
        "homogeneous_tight",
        CASES,
        tight(40, 200, Costs::Homogeneous),
        |u| check_plan(&u),
    );
}

#[test]
fn homogeneous_huge_counts() {
    check(
        "homogeneous_huge_counts",
        2000,
        loose(40, 1_000_000_000_000, Costs::Homogeneous),
        |u| check_plan(&u),
    );
}

#[test]
fn heterogeneous_small_set_loose() {
    check(
        "heterogeneous_small_set_loose",
        CASES,
        loose(40, 100, Costs::SmallSet),
        |u| check_plan(&u),
    );
}

#[test]
fn heterogeneous_small_set_tight() {
    check(
        "heterogeneous_small_set_tight",
        CASES,
        tight(40, 150, Costs::SmallSet),
        |u| check_plan(&u),
    );
}

#[test]
fn heterogeneous_float_loose() {
    check(
        "heterogeneous_float_loose",
        CASES,
        loose(40, 100, Costs::Float),
        |u| check_plan(&u),
    );
}

#[test]
fn heterogeneous_float_tight() {
    check(
        "heterogeneous_float_tight",
        CASES,
        tight(40, 150, Costs::Float),
        |u| check_plan(&u),
    );
}

#[test]
fn heterogeneous_huge_counts_monotone_costs() {
    check(
        "heterogeneous_huge_counts_monotone_costs (loose)",
        2000,
        huge_monotone(40, false),
        |u| check_plan(&u),
    );
    check(
        "heterogeneous_huge_counts_monotone_costs (tight)",
        2000,
        huge_monotone(40, true),
        |u| check_plan(&u),
    );
}

/// Algorithm 2's closed-form trains equal an item-by-item ASAP simulation.
#[test]
fn algorithm2_equals_item_by_item_asap() {
    let strategy = prop_oneof![
        tight(25, 60, Costs::SmallSet),
        tight(25, 60, Costs::Float),
        loose(25, 30, Costs::SmallSet),
        loose(25, 30, Costs::Float),
        tight(25, 60, Costs::Homogeneous),
    ];
    check(
        "algorithm2_equals_item_by_item_asap",
        CASES,
        strategy,
        |u| {
            let ring = u.ring();
            let f = unidirectional_flows(&ring);
            let expected = naive_asap(&u, &f);
            let got = item_send_times(u.loads.len(), &asap_unidirectional(&ring), &u.costs);
            for (i, (e, g)) in expected.iter().zip(&got).enumerate() {
                prop_assert_eq!(e.len(), g.len(), "items sent by {}", i);
                for (a, b) in e.iter().zip(g) {
                    prop_assert!(close(*a, *b, 1e-9), "processor {}: {:?} vs {:?}", i, e, g);
                }
            }
            Ok(())
        },
    );
}

/// On heterogeneous rings with costs exact in binary, the validator's verdict on
/// Algorithm 1's raw schedule (everything from t = 0) matches an item-by-item check.
#[test]
fn validator_agrees_with_item_by_item_check_on_algorithm1() {
    let counts = std::cell::Cell::new((0u32, 0u32));
    check(
        "validator_agrees_with_item_by_item_check_on_algorithm1",
        CASES,
        prop_oneof![
            tight(20, 40, Costs::SmallSet),
            loose(20, 20, Costs::SmallSet)
        ],
        |u| {
            let ring = u.ring();
            let s = homogeneous_unidirectional(&ring);
            let ours = naive_valid(&u, &s);
            let theirs = validate(&ring, &s);
            prop_assert_eq!(ours, theirs.is_ok(), "{:?}", theirs.err());
            let (v, i) = counts.get();
            counts.set(if ours { (v + 1, i) } else { (v, i + 1) });
            Ok(())
        },
    );
    let (valid, invalid) = counts.get();
    eprintln!(
        "  homogeneous_unidirectional on heterogeneous rings: {valid} valid, {invalid} invalid"
    );
    assert!(
        valid > 100 && invalid > 100,
        "both verdicts must be exercised"
    );
}

/// P0 --2--> P1 --1--> P2 with many items: P1 forwards over a faster link, so in the
/// as-soon-as-possible schedule every forwarded item is its own transfer. Valid and
/// optimal.
#[test]
fn forwarding_onto_a_faster_link() {
    let n = 100_000u64;
    let u = Uni {
        loads: vec![n + 1, 1, 1],
        targets: vec![1, 1, n + 1],
        costs: vec![2.0, 1.0, 1.0],
    };
    check_plan(&u).unwrap();
}

/// The same ring with 10^12 items: P2 keeps every item, so P1 need not forward them
/// one by one (Algorithm 2 would emit ~10^12 transfers); the default plan must stay
/// small. Checked on 10^6 items first, so that a regression fails instead of
/// exhausting memory.
#[test]
fn huge_forwarding_onto_a_faster_link_is_batched() {
    for n in [1_000_000u64, 1_000_000_000_000] {
        let ring = hetbal::ring::RingInstance::unidirectional(
            &[n + 1, 1, 1],
            &[1, 1, n + 1],
            &[2.0, 1.0, 1.0],
        )
        .unwrap();
        let p = plan(&ring, None).unwrap();
        assert!(p.optimal);
        assert_eq!(p.makespan, 2.0 * n as f64);
        assert!(
            p.transfers.len() <= 10,
            "{}: {} transfers for {} items",
            p.algorithm,
            p.transfers.len(),
            n
        );
        assert!(validate(&ring, &p.schedule()).is_ok());
    }
}

/// A chain of saturated links, P0 --2--> P1 --1--> P2 --2--> P3: P2 sends back to back
/// from 0 to the bound and needs each item right away, so P1 must forward item j in
/// [2j, 2j+1]: at most 2 items per back-to-back batch in ANY optimal schedule (about
/// N/2 batches: with 10^12 items no such schedule fits in memory). A paced train
/// (one item every 2 time units) writes it in a few transfers.
#[test]
fn saturated_chain_needs_small_batches() {
    let n = 100_000u64;
    let u = Uni {
        loads: vec![n + 1, 1, 1, 1],
        targets: vec![1, 1, 1, n + 1],
        costs: vec![2.0, 1.0, 2.0, 1.0],
    };
    check_plan(&u).unwrap();
    let p = plan(&u.ring(), None).unwrap();
    let p1: Vec<_> = p.transfers.iter().filter(|t| t.from == 1).collect();
    eprintln!(
        "saturated chain, {n} items: P1 forwards in {} transfers ({})",
        p1.len(),
        p.algorithm
    );
    for t in &p1 {
        match t.period {
            None => assert!(t.items <= 2, "a batch of {} items: {t:?}", t.items),
            Some(period) => assert!(period >= 2.0, "{t:?}"),
        }
    }
    assert!(p1.len() <= 4, "{p1:?}");
    assert_eq!(p.makespan, p.lower_bound);
}
