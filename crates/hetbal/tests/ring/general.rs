//! Instances outside the papers' model: processors that hold or keep no items, and
//! paths (no link from the last processor to the first). Every planner either plans
//! validly or refuses; the bounds stay below the exhaustive optimum; the plan is
//! checked against it on tiny instances.

use hetbal::random::SplitMix64;
use hetbal::ring::{
    exact_optimum, exhaustive_optimum, lower_bound, plan, prefix_sums, validate, PlanError,
    RingAlgorithm, RingInstance, RingKind, Schedule, Transfer, ViolationRule,
};

/// A random instance with empty processors (about a third of loads and targets 0),
/// a path one time in three, start-ups one time in five (at most 4 processors, so
/// that settling them by exhaustive search stays quick); costs multiples of 0.5.
fn general(rng: &mut SplitMix64, case: usize, max_n: u64, max_load: u64) -> Option<RingInstance> {
    let startups = case % 5 == 0;
    let max_n = if startups { max_n.min(4) } else { max_n };
    let n = 2 + (rng.next_u64() % (max_n - 1)) as usize;
    let mut loads: Vec<u64> = (0..n).map(|_| rng.next_u64() % (max_load + 1)).collect();
    if loads.iter().sum::<u64>() == 0 {
        loads[0] = 1;
    }
    let total: u64 = loads.iter().sum();
    let mut targets = vec![0u64; n];
    for _ in 0..total {
        targets[(rng.next_u64() % n as u64) as usize] += 1;
    }
    let mut cost = || (1 + rng.next_u64() % 3) as f64 * 0.5;
    let c_succ: Vec<f64> = (0..n).map(|_| cost()).collect();
    let c_pred: Vec<f64> = (0..n).map(|_| cost()).collect();
    let ring = if case % 2 == 0 {
        RingInstance::bidirectional(&loads, &targets, &c_succ, &c_pred)
    } else {
        RingInstance::unidirectional(&loads, &targets, &c_succ)
    }
    .unwrap();
    let ring = if startups {
        ring.with_startups(&vec![0.5; n], &vec![1.0; n]).unwrap()
    } else {
        ring
    };
    if case % 3 == 0 {
        ring.as_path().ok() // a unidirectional path may need items to go back
    } else {
        Some(ring)
    }
}

fn describe(ring: &RingInstance) -> String {
    format!(
        "{} {}ring loads {:?} targets {:?} c_succ {:?} c_pred {:?} startups {}",
        ring.kind(),
        if ring.is_path() { "path " } else { "" },
        ring.loads(),
        ring.targets(),
        ring.c_succ(),
        ring.c_pred(),
        ring.has_startups()
    )
}

/// Every algorithm, forced or chosen, on 1,500 random instances outside the papers'
/// model: a valid plan (validated inside `plan`) that never uses a path's missing
/// link, or a refusal that names the cause; never an invalid schedule or a panic.
#[test]
fn every_planner_plans_validly_or_refuses() {
    let mut rng = SplitMix64::new(32);
    let (mut planned, mut refused) = (0, 0);
    for case in 0..1500 {
        let Some(ring) = general(&mut rng, case, 6, 3) else {
            continue;
        };
        let mut algorithms = vec![None];
        algorithms.extend(RingAlgorithm::ALL.map(Some));
        for algorithm in algorithms {
            // The forced exact search is checked on the tiny instances below.
            if algorithm == Some(RingAlgorithm::ExactSearch) && ring.total_items() > 6 {
                continue;
            }
            match plan(&ring, algorithm) {
                Ok(p) => {
                    planned += 1;
                    if ring.is_path() && ring.len() > 2 {
                        let last = ring.len() - 1;
                        for t in &p.transfers {
                            let wrap =
                                (t.from == last && t.to == 0) || (t.from == 0 && t.to == last);
                            assert!(!wrap, "{:?} uses the missing link: {}", t, describe(&ring));
                        }
                        // The flows of a path are its prefix sums.
                        let mut net = vec![0i128; ring.len()];
                        for f in &p.flows {
                            if f.to == (f.from + 1) % ring.len() {
                                net[f.from] += i128::from(f.items);
                            } else {
                                net[f.to] -= i128::from(f.items);
                            }
                        }
                        assert_eq!(net, prefix_sums(&ring), "{}", describe(&ring));
                    }
                }
                Err(PlanError::NotApplicable { reason, .. }) => {
                    refused += 1;
                    assert!(!reason.is_empty());
                    assert!(
                        algorithm.is_some(),
                        "hetbal's own choice refused {}",
                        describe(&ring)
                    );
                }
                Err(e) => panic!(
                    "{:?}: {e} on {}",
                    algorithm.map(|a| a.name()),
                    describe(&ring)
                ),
            }
        }
    }
    assert!(
        planned > 8_000 && refused > 1_000,
        "{planned} planned, {refused} refused"
    );
}

/// Tiny instances outside the papers' model against the exhaustive search (which
/// sends only items held and, on a path, never over the missing link): the bound
/// is at most the optimum, a plan called optimal is, and hetbal's plan (which
/// settles small instances by the pruned search) reaches the optimum.
#[test]
fn tiny_instances_meet_the_exhaustive_optimum() {
    let mut rng = SplitMix64::new(5);
    let (mut checked, mut optimal) = (0, 0);
    for case in 0..400 {
        let Some(ring) = general(&mut rng, case, 4, 2) else {
            continue;
        };
        let made = plan(&ring, None).unwrap_or_else(|e| panic!("{e}: {}", describe(&ring)));
        let Ok(Some(best)) = exhaustive_optimum(&ring, made.makespan, 2_000_000) else {
            continue;
        };
        checked += 1;
        let bound = lower_bound(&ring);
        assert!(
            bound <= best + 1e-9,
            "bound {bound} above the optimum {best}: {}",
            describe(&ring)
        );
        assert!(made.makespan >= best - 1e-9, "{}", describe(&ring));
        if made.optimal {
            assert!((made.makespan - best).abs() <= 1e-9, "{}", describe(&ring));
        }
        if !ring.has_startups() {
            let pruned = exact_optimum(&ring, made.makespan, 2_000_000).unwrap();
            assert_eq!(pruned, Some(best), "{}", describe(&ring));
        }
        if (made.makespan - best).abs() <= 1e-9 {
            optimal += 1;
        }
    }
    assert!(checked >= 250, "{checked}");
    // Without start-ups the pruned search settles every tiny instance; with them
    // the exhaustive one does up to 6 processors and 24 items.
    assert_eq!(optimal, checked, "{optimal} of {checked} optimal");
}

/// The validator refuses a transfer over a path's missing link, in both directions,
/// and says why.
#[test]
fn the_validator_refuses_the_missing_link_of_a_path() {
    let ring = RingInstance::bidirectional(&[2, 0, 0], &[0, 0, 2], &[1.0; 3], &[1.0; 3]).unwrap();
    let wrap = Schedule::new(vec![Transfer::new(0, 2, 2, 0.0, 2.0)]);
    assert!(validate(&ring, &wrap).is_ok());
    let path = ring.as_path().unwrap();
    let errors = validate(&path, &wrap).unwrap_err();
    assert_eq!(errors[0].rule, ViolationRule::NotNeighbour);
    assert!(errors[0].message.contains("path"), "{}", errors[0].message);
    let back = RingInstance::bidirectional(&[0, 0, 2], &[2, 0, 0], &[1.0; 3], &[1.0; 3])
        .unwrap()
        .as_path()
        .unwrap();
    let errors = validate(
        &back,
        &Schedule::new(vec![Transfer::new(2, 0, 2, 0.0, 2.0)]),
    )
    .unwrap_err();
    assert_eq!(errors[0].rule, ViolationRule::NotNeighbour);
    // The long way round is the plan: 2 items through P1, which holds none.
    let p = plan(&path, None).unwrap();
    assert_eq!(p.makespan, 3.0);
    assert!(p.optimal);
}

/// A unidirectional path whose first processors lack items is refused with the
/// prefix that lacks them; a 2-processor path moves over its one link.
#[test]
fn paths_that_need_backward_moves_are_refused() {
    let ring = RingInstance::unidirectional(&[1, 0, 5], &[2, 2, 2], &[1.0; 3]).unwrap();
    let err = ring.as_path().unwrap_err();
    assert_eq!(
        err.to_string(),
        "processors 0 to 0 (P0) hold 1 items but must end with 2: on a unidirectional path items only move to the successor, so the missing 1 cannot come from later processors (make the ring bidirectional or allow the wrap-around link)"
    );
    let two = RingInstance::bidirectional(&[0, 3], &[3, 0], &[1.0, 5.0], &[2.0, 7.0])
        .unwrap()
        .as_path()
        .unwrap();
    let p = plan(&two, None).unwrap();
    // On the path only P1's link to its predecessor joins them: 3 items at 7.0,
    // where the ring's other link would take 3 at 5.0.
    assert_eq!(p.makespan, 21.0);
    assert_eq!(
        plan(
            &RingInstance::bidirectional(&[0, 3], &[3, 0], &[1.0, 5.0], &[2.0, 7.0]).unwrap(),
            None
        )
        .unwrap()
        .makespan,
        15.0
    );
    assert_eq!(p.transfers.len(), 1);
    assert_eq!(two.kind(), RingKind::Bidirectional);
}

/// The drained processor of the issue: all items leave P0 for P5 through four
/// processors that hold none; a unidirectional ring takes the one-hop way round.
#[test]
fn items_cross_processors_that_hold_none() {
    let ring =
        RingInstance::unidirectional(&[1, 0, 0, 0, 0, 0], &[0, 0, 0, 0, 0, 1], &[0.5; 6]).unwrap();
    let p = plan(&ring, None).unwrap();
    assert_eq!(p.makespan, 2.5); // five hops of 0.5: no plan is faster
    assert!(p.optimal, "{p:?}");
    let ring = RingInstance::bidirectional(
        &[1, 0, 0, 0, 0, 0],
        &[0, 0, 0, 0, 0, 1],
        &[0.5; 6],
        &[0.5; 6],
    )
    .unwrap();
    assert_eq!(plan(&ring, None).unwrap().makespan, 0.5);
    assert_eq!(plan(&ring.as_path().unwrap(), None).unwrap().makespan, 2.5);
}
