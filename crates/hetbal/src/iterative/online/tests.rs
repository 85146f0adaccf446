use crate::iterative::{Scenario, Simulator, SpeedProfile};
use crate::random::SplitMix64;
use crate::ring::RingKind;

use super::*;

/// A scenario whose times are exact in binary (powers of two and small
/// integers): the compute times a rank would measure, `loads × time per item`,
/// give back the time per item exactly, as the simulator uses it.
fn scenario(seed: u64, n: usize, kind: RingKind, border_items: u64) -> Scenario {
    let mut rng = SplitMix64::new(seed);
    let iterations = 60;
    let profiles = (0..n)
        .map(|_| {
            let mut events = Vec::new();
            let mut date = 0.0;
            for _ in 0..rng.below(4) {
                date += (1 + rng.below(25)) as f64;
                let factor = [0.25, 0.5, 1.0, 2.0][rng.below(4)];
                events.push((date, factor));
            }
            SpeedProfile::new(events, None).unwrap()
        })
        .collect();
    Scenario {
        kind,
        time_per_item: (0..n).map(|_| (1 + rng.below(4)) as f64 / 1024.0).collect(),
        c_succ: (0..n).map(|_| (1 + rng.below(4)) as f64 / 4096.0).collect(),
        c_pred: (0..n).map(|_| (1 + rng.below(4)) as f64 / 4096.0).collect(),
        border_items,
        iterations,
        initial_loads: (0..n).map(|_| 50 + rng.below_u64(200)).collect(),
        profiles,
        comm_scale: 1.0,
    }
}

/// The processors (2 to 7) and the kind of ring of test scenario `seed`.
fn ring_of(seed: u64) -> (usize, RingKind) {
    let kind = if seed % 2 == 0 {
        RingKind::Bidirectional
    } else {
        RingKind::Unidirectional
    };
    (2 + (seed % 6) as usize, kind)
}

/// Feeds a decider the compute times each iteration of `scenario` takes with the
/// loads the decider set, and returns its redistributions as the simulator
/// lists them: (after iteration, cost, loads after).
fn replay(scenario: &Scenario, policy: &Policy) -> Vec<(u32, f64, Vec<u64>)> {
    let simulator = Simulator::new(scenario.clone()).unwrap();
    let c_pred = (scenario.kind == RingKind::Bidirectional).then(|| scenario.c_pred.clone());
    let border = (0..scenario.c_succ.len())
        .map(|i| {
            scenario.border_items as f64
                * (scenario.c_succ[i] + scenario.c_pred[i])
                * scenario.comm_scale
        })
        .collect();
    let mut decider = Decider::new(policy.clone(), scenario.c_succ.clone(), c_pred)
        .unwrap()
        .with_border(border)
        .with_tolerance(0.0);
    let mut loads = scenario.initial_loads.clone();
    let mut moves = Vec::new();
    let k_total = scenario.iterations;
    for k in 1..k_total {
        let seconds: Vec<f64> = loads
            .iter()
            .zip(simulator.times_per_item(k))
            .map(|(&l, &t)| l as f64 * t)
            .collect();
        let d = decider
            .observe(&loads, &seconds, u64::from(k_total - k))
            .unwrap();
        assert_eq!(d.iteration, k);
        if d.redistribute {
            moves.push((k, d.redistribution_time, d.targets.clone()));
            loads = d.targets;
        } else {
            assert_eq!(d.targets, loads, "nothing moves: the targets are the loads");
        }
    }
    moves
}

#[test]
fn decides_as_the_simulator_on_the_same_scenario() {
    let policies = [
        Policy::Never,
        Policy::Fixed { redistributions: 4 },
        Policy::Fixed { redistributions: 9 },
        Policy::At(vec![3, 17, 40]),
        Policy::Profitability,
        Policy::Adaptive,
    ];
    let mut moved = [0usize; 6];
    for seed in 0..24u64 {
        let (n, kind) = ring_of(seed);
        let s = scenario(seed, n, kind, seed % 3);
        let mut simulator = Simulator::new(s.clone()).unwrap();
        for (p, policy) in policies.iter().enumerate() {
            let expected: Vec<(u32, f64, Vec<u64>)> = simulator
                .run(policy)
                .unwrap()
                .redistributions
                .into_iter()
                .map(|r| (r.after_iteration, r.cost, r.loads))
                .collect();
            let got = replay(&s, policy);
            assert_eq!(got, expected, "seed {seed}, {}", policy.name());
            moved[p] += got.len();
        }
    }
    // The scenarios exercise every policy that moves.
    assert_eq!(moved[0], 0);
    assert!(moved[1..].iter().all(|&m| m > 0), "{moved:?}");
}

#[test]
fn compute_time_moves_the_data_wall_time_does_not() {
    // Two ranks of 100 items; rank 1 computes twice slower. Each iteration ends
    // with a halo exchange, where rank 0 waits for rank 1: in wall-clock time
    // both ranks' iterations last as long as rank 1's.
    let per_item = [0.01, 0.02];
    let run = |wall: bool| {
        let links = vec![1e-4; 2];
        let mut decider = Decider::new(Policy::Adaptive, links.clone(), Some(links)).unwrap();
        let mut loads = vec![100u64, 100];
        let mut moves = 0;
        for k in 1..50u64 {
            let compute = [loads[0] as f64 * per_item[0], loads[1] as f64 * per_item[1]];
            let reported = if wall {
                [compute[0].max(compute[1]); 2]
            } else {
                compute
            };
            let d = decider.observe(&loads, &reported, 50 - k).unwrap();
            if d.redistribute {
                moves += 1;
                loads = d.targets;
            }
        }
        (moves, loads)
    };
    // Compute times: the balancer moves about a third of rank 1's items, once.
    let (moves, loads) = run(false);
    assert_eq!(moves, 1);
    assert!((133..=134).contains(&loads[0]), "{loads:?}");
    // Wall times: every rank looks as fast, nothing ever moves.
    assert_eq!(run(true), (0, vec![100, 100]));
}

#[test]
fn firsts_follow_the_items() {
    // Three processors; P2 is four times slower than the others.
    let mut decider = Decider::new(Policy::Profitability, vec![1e-3; 3], None).unwrap();
    let d = decider
        .observe(&[30, 30, 30], &[0.3, 0.3, 1.2], 10)
        .unwrap();
    assert!(d.redistribute);
    assert_eq!(d.targets, vec![40, 40, 10]);
    // Unidirectional: rank 2 sends its last 20 items to rank 0 (they go before
    // rank 0's), rank 0 forwards 10 of its own to rank 1.
    assert_eq!(d.flows, vec![10, 0, 20]);
    assert_eq!(d.firsts, vec![70, 20, 60]);
    // Nothing moves next time: the firsts stay.
    let d = decider.observe(&[40, 40, 10], &[0.4, 0.4, 0.4], 9).unwrap();
    assert!(!d.redistribute);
    assert_eq!(d.firsts, vec![70, 20, 60]);
}

#[test]
fn jitter_within_the_tolerance_is_no_speed_change() {
    let mut decider = Decider::new(Policy::Adaptive, vec![1e-3; 2], Some(vec![1e-3; 2])).unwrap();
    for (k, jitter) in [1.0, 1.03, 0.97, 1.04].into_iter().enumerate() {
        let d = decider
            .observe(&[100, 100], &[jitter, 1.0], 14 - k as u64)
            .unwrap();
        // The time in force stays the first one: equal speeds, nothing to move.
        assert_eq!(d.targets, vec![100, 100]);
        assert_eq!(d.current_step, 1.0);
    }
    assert!(decider.adaptive.gaps().is_empty());
    // 20% slower (within NOT_NOISE of the level): the level moves once half
    // of the observations since the start are slower, at the fifth.
    for remaining in [9, 8, 7, 6] {
        let d = decider
            .observe(&[100, 100], &[1.2, 1.0], remaining)
            .unwrap();
        assert_eq!(d.current_step, 1.0);
    }
    assert!(decider.adaptive.gaps().is_empty());
    let d = decider.observe(&[100, 100], &[1.2, 1.0], 5).unwrap();
    assert!((d.current_step - 1.2).abs() < 1e-12);
    assert_eq!(decider.adaptive.gaps(), vec![8]);
    // Twice 50% slower is a burst: the level stays; three times is a change.
    for remaining in [4, 3] {
        let d = decider
            .observe(&[100, 100], &[1.8, 1.0], remaining)
            .unwrap();
        assert!((d.current_step - 1.2).abs() < 1e-12);
    }
    let d = decider.observe(&[100, 100], &[1.8, 1.0], 2).unwrap();
    assert!((d.current_step - 1.8).abs() < 1e-12);
}

#[test]
fn bad_reports_and_policies_are_refused() {
    assert_eq!(
        Decider::new(Policy::OfflineBest, vec![1.0; 2], None).unwrap_err(),
        DecideError::OfflinePolicy
    );
    let mut d = Decider::new(Policy::Adaptive, vec![1.0; 2], None).unwrap();
    let e = d.observe(&[1, 2, 3], &[1.0; 3], 5).unwrap_err();
    assert_eq!(e, DecideError::Links { links: 2, ranks: 3 });
    let e = d.observe(&[1, 2], &[1.0, 0.0], 5).unwrap_err();
    assert!(
        e.to_string().contains("rank 1 reported 2 items and 0 s"),
        "{e}"
    );
    let e = d.observe(&[0, 2], &[1.0, 1.0], 5).unwrap_err();
    assert!(matches!(e, DecideError::Measure { rank: 0, .. }));
    // Start-ups: checked when a move is priced.
    let mut d = Decider::new(Policy::Profitability, vec![1e-3; 2], None).unwrap();
    d.set_startups(vec![0.0, f64::NAN], None);
    let e = d.observe(&[50, 50], &[0.5, 1.0], 10).unwrap_err();
    assert!(
        e.to_string().contains("processor 1 (P1): l_succ NaN"),
        "{e}"
    );
    d.set_startups(vec![0.5; 3], None);
    let e = d.observe(&[50, 50], &[0.5, 1.0], 10).unwrap_err();
    assert_eq!(e, DecideError::Links { links: 3, ranks: 2 });
    d.set_startups(Vec::new(), None);
    assert!(d.observe(&[50, 50], &[0.5, 1.0], 10).unwrap().redistribute);
}

/// With start-ups the decider prices a move by a lower bound first and plans
/// only when the bound does not rule the move out: on random scenarios whose
/// start-ups change decisions, it takes exactly the decisions (flows, first
/// positions, costs; predicted gains wherever it planned) of a decider that
/// plans every move, and most of the plans are never made.
#[test]
fn pricing_by_the_bound_first_changes_no_decision() {
    let policies = [
        Policy::Fixed { redistributions: 4 },
        Policy::At(vec![3, 17, 40]),
        Policy::Profitability,
        Policy::Adaptive,
    ];
    let (mut decisions, mut bounded, mut changed_by_startups) = (0usize, 0usize, 0usize);
    let mut moves = 0usize;
    for seed in 0..24u64 {
        let (n, kind) = ring_of(seed);
        let s = scenario(seed, n, kind, 0);
        let simulator = Simulator::new(s.clone()).unwrap();
        let c_pred = (kind == RingKind::Bidirectional).then(|| s.c_pred.clone());
        let mut rng = SplitMix64::new(seed + 100);
        // Start-ups of 0 to 0.25 s: from nothing to several iterations' worth.
        let mut startups = || {
            (0..n)
                .map(|_| rng.below(5) as f64 / 16.0)
                .collect::<Vec<_>>()
        };
        let (l_succ, l_pred) = (startups(), startups());
        for policy in &policies {
            let make = || {
                let mut d = Decider::new(policy.clone(), s.c_succ.clone(), c_pred.clone())
                    .unwrap()
                    .with_tolerance(0.0);
                d.set_startups(l_succ.clone(), Some(l_pred.clone()));
                d
            };
            let (mut fast, mut reference) = (make(), make().always_planning());
            let mut without = Decider::new(policy.clone(), s.c_succ.clone(), c_pred.clone())
                .unwrap()
                .with_tolerance(0.0);
            let mut loads = s.initial_loads.clone();
            for k in 1..s.iterations {
                let seconds: Vec<f64> = loads
                    .iter()
                    .zip(simulator.times_per_item(k))
                    .map(|(&l, &t)| l as f64 * t)
                    .collect();
                let remaining = u64::from(s.iterations - k);
                let got = fast.observe(&loads, &seconds, remaining).unwrap();
                let expected = reference.observe(&loads, &seconds, remaining).unwrap();
                let context = format!("seed {seed}, {}, iteration {k}", policy.name());
                assert!(expected.planned, "{context}");
                if got.planned {
                    assert_eq!(got, expected, "{context}");
                } else {
                    bounded += 1;
                    assert!(!got.redistribute, "{context}");
                    assert!(
                        got.redistribution_time <= expected.redistribution_time,
                        "{context}: bound {} above the plan's {}",
                        got.redistribution_time,
                        expected.redistribution_time
                    );
                    // The same decision at the plan's price (the adaptive
                    // policy may have weighed a gain at the bound's).
                    let same = Decision {
                        redistribution_time: expected.redistribution_time,
                        planned: true,
                        predicted_gain: expected.predicted_gain,
                        ..got.clone()
                    };
                    assert_eq!(same, expected, "{context}");
                }
                // Without start-ups the profitability rule (which remembers
                // nothing) may answer otherwise on the same loads.
                let plain = without.observe(&loads, &seconds, remaining).unwrap();
                if *policy == Policy::Profitability {
                    changed_by_startups += usize::from(plain.redistribute != got.redistribute);
                }
                decisions += 1;
                if got.redistribute {
                    moves += 1;
                    loads = got.targets;
                }
            }
        }
    }
    eprintln!(
        "{decisions} decisions, {moves} moves, {bounded} priced by the bound alone, \
         {changed_by_startups} changed by the start-ups"
    );
    assert!(bounded > decisions / 4, "{bounded} of {decisions}");
    assert!(moves > 0);
    assert!(changed_by_startups > 0);
}

#[test]
fn first_positions_follow_the_boundaries() {
    // Every ring of 2 to 4 processors with loads of 1 to 3 and flows of -4 to
    // 4 that leave every processor 0 items or more: consecutive firsts are
    // the targets apart (modulo the total), and a flow of k into processor 0
    // puts its first item k places back.
    use super::first_positions;
    for n in 2..=4usize {
        for code in 0..(3usize.pow(n as u32) * 9usize.pow(n as u32)) {
            let mut c = code;
            let loads: Vec<u64> = (0..n)
                .map(|_| {
                    let l = (c % 3) as u64 + 1;
                    c /= 3;
                    l
                })
                .collect();
            let flows: Vec<i128> = (0..n)
                .map(|_| {
                    let f = (c % 9) as i128 - 4;
                    c /= 9;
                    f
                })
                .collect();
            let total: i128 = loads.iter().map(|&l| i128::from(l)).sum();
            let targets: Vec<i128> = (0..n)
                .map(|i| i128::from(loads[i]) + flows[(i + n - 1) % n] - flows[i])
                .collect();
            if targets.iter().any(|&t| t < 0) {
                continue;
            }
            let firsts = first_positions(&loads, &flows);
            assert_eq!(firsts[0] as i128, (-flows[n - 1]).rem_euclid(total));
            for i in 0..n - 1 {
                let gap = (firsts[i + 1] as i128 - firsts[i] as i128).rem_euclid(total);
                assert_eq!(gap, targets[i].rem_euclid(total), "{loads:?} {flows:?}");
            }
        }
    }
}

/// A functional decider on two processors (Profitability, cheap links).
fn functional(tolerance: f64) -> Decider {
    Decider::new(Policy::Profitability, vec![1e-6; 2], Some(vec![1e-6; 2]))
        .unwrap()
        .with_model(DeciderModel::functional())
        .with_tolerance(tolerance)
}

#[test]
fn functional_refuses_infinite_and_non_positive_times() {
    let mut d = functional(0.05);
    let e = d.observe(&[5, 5], &[1.0, f64::INFINITY], 3).unwrap_err();
    assert!(matches!(e, DecideError::Measure { rank: 1, .. }));
    let e = d.observe(&[5, 5], &[f64::NAN, 1.0], 3).unwrap_err();
    assert!(matches!(e, DecideError::Measure { rank: 0, .. }));
    let e = d.observe(&[5, 0], &[1.0, 1.0], 3).unwrap_err();
    assert!(matches!(e, DecideError::Measure { rank: 1, .. }));
}

#[test]
fn functional_history_is_bounded() {
    let mut d = functional(0.05).with_exploration(0);
    for k in 0..200u64 {
        let x = 100 + 7 * k;
        // The caller keeps its loads (it ignores the decisions).
        d.observe(
            &[x, 3000 - x],
            &[x as f64 * 1e-3, (3000 - x) as f64 * 2e-3],
            10,
        )
        .unwrap();
    }
    let learned = d.learning().unwrap();
    assert_eq!(learned.points, vec![MAX_POINTS; 2]);
    // Merging kept the line (up to the rounding of merged loads): 1 ms and
    // 2 ms per item.
    let (a, b) = (
        learned.functions[0].time(1000),
        learned.functions[1].time(1000),
    );
    assert!((a - 1.0).abs() < 2e-3 && (b - 2.0).abs() < 4e-3, "{a} {b}");
}

#[test]
fn functional_clips_an_outlier_and_restarts_after_two() {
    let mut d = functional(0.05);
    for _ in 0..3 {
        d.observe(&[100, 200], &[1.0, 2.0], 10).unwrap();
    }
    // A spike of 10x at a measured load is clipped to twice the model's time.
    d.observe(&[100, 200], &[10.0, 2.0], 10).unwrap();
    let learned = d.learning().unwrap();
    assert_eq!(learned.clipped, 1);
    let t = learned.functions[0].time(100);
    assert!(t > 1.0 && t <= 1.0 + (2.0 - 1.0) / 4.0 + 1e-12, "{t}");
    // A second one in a row is a change of speed: P0 restarts from it.
    d.observe(&[100, 200], &[10.0, 2.0], 10).unwrap();
    let learned = d.learning().unwrap();
    assert_eq!(learned.clipped, 2);
    assert_eq!(learned.points, vec![1, 1]);
    assert_eq!(learned.functions[0].time(100), 10.0);
}

#[test]
fn functional_does_not_move_on_noise() {
    // Two processors at their optimum (1 ms and 2 ms per item), times within
    // 1% noise, no tolerance: only the noise rule stops the moves.
    let mut rng = SplitMix64::new(5);
    let mut d = functional(0.0);
    let mut loads = vec![2000u64, 1000];
    let mut moves = Vec::new();
    for k in 1..=40u64 {
        let seconds: Vec<f64> = [1e-3, 2e-3]
            .iter()
            .zip(&loads)
            .map(|(t, &x)| t * x as f64 * (1.0 + 0.01 * (2.0 * rng.unit() - 1.0)))
            .collect();
        let decision = d.observe(&loads, &seconds, 40 - k).unwrap();
        if decision.redistribute {
            moves.push(k);
            loads = decision.targets;
        }
    }
    let noise = d.learning().unwrap().noise;
    assert!(noise > 0.001 && noise < 0.02, "{noise}");
    assert!(
        moves.len() <= 2 && moves.iter().all(|&k| k <= 3),
        "{moves:?}"
    );
    assert!(loads[0].abs_diff(2000) <= 20, "{loads:?}");
}

#[test]
fn functional_exploration_is_bounded() {
    // P1 is four times slower: the optimum [80, 20] lies beyond half of P1's
    // first load.
    let run = |budget| {
        let mut d = functional(0.0).with_exploration(budget);
        let mut loads = vec![50u64, 50];
        let mut moves = 0;
        for remaining in (0..10).rev() {
            let seconds = [loads[0] as f64 * 0.01, loads[1] as f64 * 0.04];
            let decision = d.observe(&loads, &seconds, remaining).unwrap();
            if decision.redistribute {
                moves += 1;
                loads = decision.targets;
            }
        }
        (loads, moves, d.learning().unwrap().explorations)
    };
    // One exploring move reaches P1's half, 25 items; then the targets stay
    // within the loads measured.
    assert_eq!(run(1), (vec![75, 25], 1, 1));
    // With the default budget a second step reaches the optimum.
    assert_eq!(run(EXPLORATION_BUDGET), (vec![80, 20], 2, 2));
    // No exploration: nothing moves outside the first loads.
    assert_eq!(run(0), (vec![50, 50], 0, 0));
}

#[test]
fn constant_model_is_the_default_and_decides_as_before() {
    let mut rng = SplitMix64::new(11);
    let mut a = Decider::new(Policy::Profitability, vec![1e-3; 3], None).unwrap();
    let mut b = a.clone().with_model(DeciderModel::Constant);
    assert_eq!(a.model(), DeciderModel::Constant);
    assert!(a.learning().is_none() && b.learning().is_none());
    let mut loads = vec![30u64, 30, 30];
    for remaining in (0..20).rev() {
        let seconds: Vec<f64> = loads
            .iter()
            .map(|&x| x as f64 * (1 + rng.below(4)) as f64 * 1e-3)
            .collect();
        let (da, db) = (
            a.observe(&loads, &seconds, remaining).unwrap(),
            b.observe(&loads, &seconds, remaining).unwrap(),
        );
        assert_eq!(da, db);
        loads = da.targets;
    }
}

/// Runs the constant model with `policy` and `tolerance` on four processors
/// at their balanced loads (1, 2, 4 and 4 ms per item: 0.4 s each), the times
/// jittered by `jitter` (uniform, relative) from iteration `from` on, and
/// processor 3 `slower` times slower from iteration `change` on. Returns the
/// iterations that moved.
fn jittered(
    policy: Policy,
    tolerance: f64,
    jitter: f64,
    from: u64,
    (change, slower): (u64, f64),
) -> (Vec<u64>, Decider) {
    let mut rng = SplitMix64::new(17);
    let mut d = Decider::new(policy, vec![1e-6; 4], Some(vec![1e-6; 4]))
        .unwrap()
        .with_tolerance(tolerance);
    let mut loads = vec![400u64, 200, 100, 100];
    let mut moves = Vec::new();
    let iterations = 100u64;
    for k in 1..=iterations {
        let seconds: Vec<f64> = [1e-3, 2e-3, 4e-3, 4e-3]
            .iter()
            .zip(&loads)
            .enumerate()
            .map(|(i, (t, &x))| {
                let noise = if k >= from {
                    1.0 + jitter * (2.0 * rng.unit() - 1.0)
                } else {
                    1.0
                };
                let factor = if i == 3 && k >= change { slower } else { 1.0 };
                t * x as f64 * noise * factor
            })
            .collect();
        let decision = d.observe(&loads, &seconds, iterations - k).unwrap();
        if decision.redistribute {
            moves.push(k);
            loads = decision.targets;
        }
    }
    (moves, d)
}

#[test]
fn constant_model_does_not_move_on_noise() {
    let never = (u64::MAX, 1.0);
    for policy in [Policy::Profitability, Policy::Adaptive] {
        // 1% jitter around the balanced state, a tolerance below it: only the
        // noise rule holds the moves back.
        let (moves, d) = jittered(policy.clone(), 0.002, 0.01, 2, never);
        assert!(moves.is_empty(), "{policy:?}: {moves:?}");
        assert!(d.noise() > 0.003 && d.noise() < 0.01, "{}", d.noise());
        // Without the rule (a tolerance of 0: the simulator's decisions) the
        // same jitter moves the items.
        let (moves, d) = jittered(policy.clone(), 0.0, 0.01, 2, never);
        assert!(moves.len() > 5, "{policy:?}: {moves:?}");
        assert!(d.noise() > 0.003, "{}", d.noise());
        // 10% jitter from the start, the default tolerance.
        let (moves, _) = jittered(policy.clone(), 0.05, 0.10, 1, never);
        assert!(moves.len() <= 1, "{policy:?}: {moves:?}");
    }
}

#[test]
fn constant_model_moves_on_a_real_imbalance_despite_noise() {
    for policy in [Policy::Profitability, Policy::Adaptive] {
        // 1% jitter, then processor 3 30% slower from iteration 40: a change
        // far beyond 3 times the spread.
        let (moves, d) = jittered(policy.clone(), 0.002, 0.01, 2, (40, 1.3));
        assert!(
            !moves.is_empty() && moves[0] >= 40 && moves[0] <= 45,
            "{policy:?}: {moves:?}"
        );
        assert!(d.noise() < 0.01, "{}", d.noise());
        // So with 10% jitter and the default tolerance, 2 times slower.
        let (moves, _) = jittered(policy.clone(), 0.05, 0.10, 1, (40, 2.0));
        assert!(
            moves.iter().any(|&k| (40..=45).contains(&k)),
            "{policy:?}: {moves:?}"
        );
    }
}

/// The noise of ranks sharing cores with steps of tens of microseconds (as
/// measured by the C Jacobi example on 4 ranks and 2 cores): 5% jitter, and
/// in each iteration each processor with probability 0.06 a burst of one or
/// two iterations 2 to 5 times slower. Four processors of 1, 2, 3 and 4 ns
/// per item hold 25,000 items each at first; the links cost 0.1 ns per item
/// (a move of the imbalance costs a few microseconds, as there). Processor 3
/// becomes `slower` times slower from iteration `change` on. Returns the
/// iterations that moved, and each iteration's step time without the noise
/// divided by the optimum's at its speeds.
fn bursty(policy: Policy, seed: u64, (change, slower): (u64, f64)) -> (Vec<u64>, Vec<f64>) {
    let mut rng = SplitMix64::new(seed);
    let mut d = Decider::new(policy, vec![1e-10; 4], Some(vec![1e-10; 4])).unwrap();
    let mut loads = vec![25_000u64; 4];
    let mut burst = [(0u64, 1.0f64); 4];
    let (mut moves, mut gaps) = (Vec::new(), Vec::new());
    let iterations = 100u64;
    for k in 1..=iterations {
        let per_item: Vec<f64> = (0..4)
            .map(|i| {
                let slow = if i == 3 && k >= change { slower } else { 1.0 };
                (i + 1) as f64 * 1e-9 * slow
            })
            .collect();
        let optimum = 1e5 / per_item.iter().map(|t| 1.0 / t).sum::<f64>();
        let step = (0..4)
            .map(|i| per_item[i] * loads[i] as f64)
            .fold(0.0, f64::max);
        gaps.push(step / optimum);
        let seconds: Vec<f64> = (0..4)
            .map(|i| {
                if burst[i].0 == 0 && rng.unit() < 0.06 {
                    burst[i] = (1 + rng.below_u64(2), rng.range((2.0, 5.0)));
                }
                let factor = if burst[i].0 > 0 {
                    burst[i].0 -= 1;
                    burst[i].1
                } else {
                    1.0
                };
                let jitter = 1.0 + 0.05 * (2.0 * rng.unit() - 1.0);
                per_item[i] * loads[i] as f64 * factor * jitter
            })
            .collect();
        let decision = d.observe(&loads, &seconds, iterations - k).unwrap();
        if decision.redistribute {
            moves.push(k);
            loads = decision.targets;
        }
    }
    (moves, gaps)
}

#[test]
fn constant_model_does_not_chase_spikes_and_bursts() {
    let never = (u64::MAX, 1.0);
    for policy in [Policy::Profitability, Policy::Adaptive] {
        let mut all = 0;
        for seed in 0..50 {
            let (moves, gaps) = bursty(policy.clone(), seed, never);
            // The first move balances. Three slow iterations in a row (two
            // bursts of similar factors) look like a change of speed: a move,
            // and one back when it ends.
            assert!(moves.len() <= 8, "{policy:?}, seed {seed}: {moves:?}");
            assert_eq!(
                moves.first(),
                Some(&1),
                "{policy:?}, seed {seed}: {moves:?}"
            );
            let off = gaps[1..].iter().filter(|&&g| g > 1.1).count();
            assert!(off <= 12, "{policy:?}, seed {seed}: {off} iterations off");
            all += moves.len();
        }
        // 2.3 and 2.6 a run, measured; without the filter every burst moved the items
        // (and back).
        assert!(all <= 150, "{policy:?}: {all} moves in 50 runs");
    }
}

#[test]
fn constant_model_follows_a_real_change_through_bursts() {
    for policy in [Policy::Profitability, Policy::Adaptive] {
        let mut timely = 0;
        for seed in 0..50 {
            // Processor 3 becomes 2 times slower at iteration 50: seen at its
            // third iteration, unless a burst delays it.
            let (moves, gaps) = bursty(policy.clone(), seed, (50, 2.0));
            timely += usize::from(moves.iter().any(|&k| (52..=56).contains(&k)));
            let off = gaps[56..].iter().filter(|&&g| g > 1.1).count();
            assert!(
                off <= 8,
                "{policy:?}, seed {seed}: {moves:?}, {off} iterations off"
            );
        }
        // (Where it did not, a burst had already moved the items nearly there.)
        assert!(
            timely >= 45,
            "{policy:?}: {timely} of 50 runs moved in time"
        );
    }
}
