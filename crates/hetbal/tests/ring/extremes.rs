//! Valid rings at the edges of f64: item counts whose times pass 2^52 item
//! costs, costs up to 10^19 apart, paths.
//! hetbal plans every one of them (or refuses times that overflow f64, as
//! input): a planner whose sums drift past the validator's tolerance has its
//! transfers' durations recomputed as the validator computes them, or the same
//! transfers retimed in their order, and the result validated again.

use hetbal::random::SplitMix64;
use hetbal::ring::{lower_bound, plan, PlanError, RingInstance};
use hetbal::validate;

/// A random ring from `rng` with extreme loads and costs (`None` when the
/// draw is not a valid ring).
fn extreme_ring(rng: &mut SplitMix64) -> Option<RingInstance> {
    let n = 2 + rng.below(6);
    let scale: u64 = match rng.below(10) {
        0 => u64::MAX / 8,
        1..=3 => 1 << 53,
        4..=6 => 1 << 40,
        _ => 1000,
    };
    let loads: Vec<u64> = (0..n).map(|_| rng.below_u64(scale)).collect();
    let mut left: u128 = loads.iter().map(|&l| u128::from(l)).sum();
    let mut targets = vec![0u64; n];
    for target in targets.iter_mut().take(n - 1) {
        let t = u128::from(rng.below_u64(u64::try_from(left).unwrap_or(u64::MAX).max(1)));
        *target = t.min(left) as u64;
        left -= u128::from(*target);
    }
    targets[n - 1] = u64::try_from(left).ok()?;
    let mut cost = || match rng.below(6) {
        0 => (rng.unit() * 1e-12).max(1e-300),
        1 => 1.0 + rng.unit(),
        2 => 1e3 * (1.0 + rng.unit()),
        3 => 1e-9,
        4 => 1e6 * (1.0 + rng.unit()),
        _ => 1.0,
    };
    let c_succ: Vec<f64> = (0..n).map(|_| cost()).collect();
    let c_pred: Vec<f64> = (0..n).map(|_| cost()).collect();
    let mut ring = if rng.below(2) == 0 {
        RingInstance::unidirectional(&loads, &targets, &c_succ).ok()?
    } else {
        RingInstance::bidirectional(&loads, &targets, &c_succ, &c_pred).ok()?
    };
    // Start-ups on small loads only (the start-up planner sends messages).
    if rng.below(3) == 0 && ring.total_items() < 1 << 20 {
        let mut startup = || {
            if rng.below(2) == 0 {
                0.0
            } else {
                10.0 * rng.unit()
            }
        };
        let (l_succ, l_pred): (Vec<f64>, Vec<f64>) = (0..n).map(|_| (startup(), startup())).unzip();
        ring = ring.with_startups(&l_succ, &l_pred).ok()?;
    }
    // Paths up to 2^40 items: beyond, a bidirectional path whose flows go
    // forwards is planned in convoys of up to 10^7 transfers (seconds each).
    if rng.below(5) == 0 && ring.total_items() < 1 << 40 {
        ring = ring.as_path().ok()?;
    }
    Some(ring)
}

#[test]
fn extreme_rings_are_planned() {
    let (mut planned, mut overflow) = (0, 0);
    for seed in 1..=3 {
        let mut rng = SplitMix64::new(seed);
        for k in 0..1500 {
            let Some(ring) = extreme_ring(&mut rng) else {
                continue;
            };
            match plan(&ring, None) {
                Ok(p) => {
                    // Checked again, apart from the plan: valid, and not below
                    // the bound.
                    let report = validate(&ring, &p.schedule()).unwrap_or_else(|v| {
                        panic!("seed {seed}, ring {k}: {:?}\n{v:?}", ring.to_spec())
                    });
                    assert_eq!(report.makespan, p.makespan);
                    if !ring.has_startups() {
                        let bound = lower_bound(&ring);
                        assert!(
                            p.makespan >= bound * (1.0 - 1e-9),
                            "seed {seed}, ring {k}: {} below the bound {bound} ({}): {:?}",
                            p.makespan,
                            p.algorithm,
                            ring.to_spec()
                        );
                    }
                    planned += 1;
                }
                Err(PlanError::TimesOverflow { .. }) => overflow += 1,
                Err(e) => panic!("seed {seed}, ring {k}: {:?}\n{e}", ring.to_spec()),
            }
        }
    }
    // Most draws are valid rings, and nearly all of them are planned.
    assert!(
        planned > 4000 && overflow < 100,
        "{planned} planned, {overflow} overflow"
    );
}

/// Bidirectional paths whose flows move more items than list scheduling
/// takes, where the convoys (successors only) do not apply either. Flows all
/// backwards: Algorithm 2 on the path turned round, each item forwarded as it
/// arrives (the bound plus one item). Flows both ways: the start-up planner's
/// messages, its links without start-up sending what they hold in chunks of
/// at most a 1,024th of their flow, so that each hop forwards one while the
/// next comes (within 0.1% of the bound; 1.5 times it when they sent all
/// they held at once).
#[test]
fn large_backward_flows_on_a_bidirectional_path_are_planned() {
    let items = 30_000_000;
    // A bidirectional path, planned by hetbal and checked again.
    let planned = |loads: &[u64], targets: &[u64], c_succ: &[f64], c_pred: &[f64]| {
        let path = RingInstance::bidirectional(loads, targets, c_succ, c_pred)
            .unwrap()
            .as_path()
            .unwrap();
        let p = plan(&path, None).unwrap();
        assert_eq!(validate(&path, &p.schedule()).unwrap().makespan, p.makespan);
        p
    };
    let p = planned(&[0, 0, items], &[items, 0, 0], &[1.0; 3], &[2.0, 1.0, 1.0]);
    assert_eq!(p.algorithm, "unidirectional-heterogeneous");
    assert!(p.transfers.iter().all(|t| t.to + 1 == t.from));
    assert_eq!(
        (p.lower_bound, p.makespan),
        (items as f64, items as f64 + 1.0)
    );
    // Both ways: P2 sends to P0 through P1 and to P4 through P3.
    let (loads, targets) = ([0, 0, 2 * items, 0, 0], [items, 0, 0, 0, items]);
    let p = planned(&loads, &targets, &[1.0; 5], &[1.0; 5]);
    assert_eq!(p.algorithm, "startup-batches");
    assert!(p.makespan >= p.lower_bound);
    assert!(p.makespan <= 1.001 * p.lower_bound, "{p:?}");
}

/// System 6 past 2^53 items: on two processors, moving N items from P1 to P0
/// over the link of 8.6e-13 s per item (the other way round costs 1,479 s per
/// item) takes N times its cost, at the circulation x = N. A float
/// circulation there stands for 128 integers, and each of them off by one
/// costs 1,479 s.
#[test]
fn system6_finds_the_integer_optimum_past_2_53_items() {
    let (load, target) = (1_629_433_056_542_813_466u64, 869_742_626_391_903_821u64);
    let n = load - target;
    let cheap = 8.647332571102293e-13;
    let ring = RingInstance::bidirectional(
        &[69_819_030_085_074_939, load],
        &[829_509_460_235_984_584, target],
        &[1.0, cheap],
        &[1681378.377743339, 1479.122594829282],
    )
    .unwrap();
    let s6 = hetbal::ring::circulation_bound(&ring);
    assert_eq!((s6.x, s6.tau), (i128::from(n), n as f64 * cheap));
    let p = plan(&ring, None).unwrap();
    assert!(p.optimal, "{} against {}", p.makespan, p.lower_bound);
}

/// The start-up path bound past 2^53 items: P4 gives P3 three items over a
/// link of 1 s per item without start-up, which no bound may put above 3 s;
/// P2's 2^52 items (kept) had made the arcs through it count one item too many.
#[test]
fn startup_bounds_count_items_exactly_past_2_53() {
    let big = 1u64 << 52;
    let ring = RingInstance::bidirectional(
        &[2, 6, big, 8, 4],
        &[2, 6, big, 11, 1],
        &[1.1, 1.0, 2.1, 3.3, 341.0],
        &[3.0, 24.0, 1.0, 0.57, 1.0],
    )
    .unwrap()
    .with_startups(&[0.0; 5], &[0.0046, 1.0, 7.0, 2.85, 0.0])
    .unwrap();
    let bound = hetbal::ring::startup_lower_bound(&ring);
    assert_eq!((bound.link, bound.port, bound.path), (3.0, 3.0, 3.0));
    let p = plan(&ring, None).unwrap();
    assert_eq!((p.makespan, p.optimal), (3.0, true));
}

/// A path with start-ups moving nearly 2^63 items: the papers' plan sends
/// them in paced trains, which under start-ups stand for a message per item.
/// Timing it is not tried beyond the limit of 10^7 transfers (it had split
/// the trains item by item until memory ran out); the start-up planner's
/// messages plan the path.
#[test]
fn huge_paced_trains_are_not_split_under_startups() {
    let ring = RingInstance::unidirectional(
        &[1 << 63, 9, 7, 8],
        &[151_944_425_293_854_620, 9, 9_071_427_611_560_921_195, 8],
        &[3.0, 1.0, 179.8, 1e-308],
    )
    .unwrap()
    .with_startups(&[2.0, 4.17, 1.92, 5.24], &[0.0; 4])
    .unwrap()
    .as_path()
    .unwrap();
    let p = plan(&ring, None).unwrap();
    assert_eq!(p.algorithm, "startup-batches");
    assert!(p.transfers.len() <= 10_000_000);
    assert_eq!(validate(&ring, &p.schedule()).unwrap().makespan, p.makespan);
    // Asked for, the papers' plan is refused with the reason.
    let e = plan(
        &ring,
        Some(hetbal::ring::RingAlgorithm::UnidirectionalHeterogeneous),
    )
    .unwrap_err()
    .to_string();
    assert!(e.contains("more than 10000000 messages"), "{e}");
}

/// Costs up to 10^500 apart (1e-300 next to 1e200), with start-ups of
/// seconds: after 10^100 s of transfers a message of a few seconds ends, in
/// f64, when it starts, and the next one on its port must still start later.
/// Before the planners' times stepped to the next f64 there, 3 of these
/// 25,000 rings got a plan whose messages shared a port at one instant
/// (caught again by the validator, one at a time); each plan is valid now,
/// and never below the bound by more than rounding.
#[test]
fn costs_10_to_the_500_apart_with_startups_are_planned() {
    let mut rng = SplitMix64::new(5);
    let (mut planned, mut with_startups) = (0, 0);
    for k in 0..25_000 {
        let n = 2 + rng.below(5);
        let scale = [1000u64, 1 << 40, 1 << 53][rng.below(3)];
        let loads: Vec<u64> = (0..n).map(|_| rng.below_u64(scale)).collect();
        let mut targets = loads.clone();
        for i in (1..n).rev() {
            targets.swap(i, rng.below(i + 1));
        }
        let mut cost = || match rng.below(6) {
            0 => 1e-200 * (1.0 + rng.unit()),
            1 => 1e100 * (1.0 + rng.unit()),
            2 => 1.0 + rng.unit(),
            3 => 1e-300 * (1.0 + rng.unit()),
            4 => 1e200 * (1.0 + rng.unit()),
            _ => 1e-9,
        };
        let c_succ: Vec<f64> = (0..n).map(|_| cost()).collect();
        let c_pred: Vec<f64> = (0..n).map(|_| cost()).collect();
        let ring = if rng.below(2) == 0 {
            RingInstance::unidirectional(&loads, &targets, &c_succ)
        } else {
            RingInstance::bidirectional(&loads, &targets, &c_succ, &c_pred)
        };
        let Ok(mut ring) = ring else { continue };
        if rng.below(3) == 0 && ring.total_items() < 1 << 20 {
            let l: Vec<f64> = (0..n).map(|_| 10.0 * rng.unit()).collect();
            ring = ring.with_startups(&l, &l).unwrap();
            with_startups += 1;
        }
        // (A unidirectional path refuses loads that must move backwards.)
        if rng.below(5) == 0 {
            if let Ok(path) = ring.as_path() {
                ring = path;
            }
        }
        let p = plan(&ring, None).unwrap_or_else(|e| panic!("ring {k}: {e}\n{:?}", ring.to_spec()));
        let report = validate(&ring, &p.schedule())
            .unwrap_or_else(|v| panic!("ring {k}: {:?}\n{v:?}", ring.to_spec()));
        assert_eq!(report.makespan, p.makespan);
        assert!(
            p.makespan >= p.lower_bound * (1.0 - 1e-9),
            "ring {k}: {} below the bound {}: {:?}",
            p.makespan,
            p.lower_bound,
            ring.to_spec()
        );
        planned += 1;
    }
    assert!(
        planned == 25_000 && with_startups > 2500,
        "{planned}, {with_startups}"
    );
}
