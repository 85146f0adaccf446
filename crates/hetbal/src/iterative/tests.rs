use super::*;
use crate::balance::balanced_targets;
use crate::random::SplitMix64;
use crate::ring::{plan, RingInstance, RingKind};

fn two_processors(border_items: u64) -> Scenario {
    Scenario {
        kind: RingKind::Bidirectional,
        time_per_item: vec![1.0, 2.0],
        c_succ: vec![1.0, 3.0],
        c_pred: vec![2.0, 1.0],
        border_items,
        iterations: 5,
        initial_loads: vec![4, 2],
        profiles: vec![
            SpeedProfile::constant(),
            SpeedProfile::new(vec![(2.0, 4.0)], None).unwrap(),
        ],
        comm_scale: 0.5,
    }
}

/// Hand-computed: P0 computes 1 per item, P1 2 per item until its speed is
/// multiplied by 4 from iteration 3 on (date 2): 0.5 per item. Borders: one item
/// each way, (1 + 2) * 0.5 = 1.5 for P0 and (3 + 1) * 0.5 = 2 for P1.
#[test]
fn golden_times_by_hand() {
    let mut simulator = Simulator::new(two_processors(1)).unwrap();
    // Loads [4, 2]: iterations 1-2: max(4 + 1.5, 4 + 2) = 6; 3-5: max(5.5, 1 + 2) = 5.5.
    let never = simulator.run(&Policy::Never).unwrap();
    assert_eq!(never.iteration_ends, vec![6.0, 12.0, 17.5, 23.0, 28.5]);
    assert_eq!(never.total_time, 28.5);
    // After iteration 3 (speeds 1 and 0.25 per item): balanced targets of 6 items are
    // [2, 4] (2 * 1 = 2, 4 * 0.5 = 2). P0 sends 2 items to P1, one each way: the
    // both over the successor link (1 each; the predecessor link costs 2): makespan 2, times 0.5 = 1.
    let run = simulator.run(&Policy::At(vec![3])).unwrap();
    assert_eq!(run.redistributions.len(), 1);
    assert_eq!(run.redistributions[0].loads, vec![2, 4]);
    assert_eq!(run.redistributions[0].cost, 1.0);
    // Then max(2 + 1.5, 2 + 2) = 4 per iteration.
    assert_eq!(run.iteration_ends, vec![6.0, 12.0, 17.5, 22.5, 26.5]);
    assert_eq!(run.total_time, 26.5);
    assert_eq!(run.redistribution_time, 1.0);
    // The earliest useful point is after iteration 2 (speeds of iteration 2 are
    // still the old ones: targets [4, 2] = the loads, nothing to do), so the
    // offline best redistributes after 3 as well.
    let best = simulator.run(&Policy::OfflineBest).unwrap();
    assert_eq!(best.total_time, 26.5);
    // The adaptive policy has seen one of two processors change, after 2
    // iterations: it expects P0 to change as well (hazard 1/2 per iteration beyond
    // age 2) to 4 times its first speed (the only change seen), where [2, 4]
    // takes 4 and [4, 2] 3. Mean gain over iterations 4 and 5: 1/2 * 1.5 - 1/2 * 1
    // = 0.25, then 1/4 * 1.5 - 3/4 * 1 < 0: 0.25 at best, below the cost of 1. It
    // stays.
    let adaptive = simulator.run(&Policy::Adaptive).unwrap();
    assert!(adaptive.redistributions.is_empty());
    assert_eq!(adaptive.total_time, 28.5);
}

#[test]
fn fixed_schemes_are_the_papers() {
    let points = |r: u32| {
        let mut scenario = two_processors(0);
        scenario.iterations = 100;
        scenario.initial_loads = vec![5000, 5000];
        // P1 speeds up at every iteration, so that every point redistributes.
        let events = (0..100).map(|d| (f64::from(d), f64::from(1 + d))).collect();
        scenario.profiles[1] = SpeedProfile::new(events, None).unwrap();
        let mut simulator = Simulator::new(scenario).unwrap();
        let run = simulator
            .run(&Policy::Fixed { redistributions: r })
            .unwrap();
        run.redistributions
            .iter()
            .map(|r| r.after_iteration)
            .collect::<Vec<_>>()
    };
    assert_eq!(points(1), vec![50]);
    assert_eq!(points(4), vec![20, 40, 60, 80]);
    assert_eq!(points(9), (1..=9).map(|m| 10 * m).collect::<Vec<_>>());
    assert_eq!(points(19), (1..=19).map(|m| 5 * m).collect::<Vec<_>>());
}

fn random_scenario(rng: &mut SplitMix64, n: usize, iterations: u32) -> Scenario {
    let kind = if rng.next_u64().is_multiple_of(2) {
        RingKind::Unidirectional
    } else {
        RingKind::Bidirectional
    };
    let total = n as u64 * (2 + rng.next_u64() % 6);
    let mut initial_loads = vec![1u64; n];
    for _ in n as u64..total {
        initial_loads[rng.below(n)] += 1;
    }
    let profiles = (0..n)
        .map(|_| {
            let mut date = 0.0;
            let events = (0..rng.below(3))
                .map(|_| {
                    date += 1.0 + rng.below(iterations as usize) as f64;
                    (date, 0.25 + 2.0 * rng.unit())
                })
                .collect();
            SpeedProfile::new(events, None).unwrap()
        })
        .collect();
    Scenario {
        kind,
        time_per_item: (0..n).map(|_| 0.5 + rng.unit()).collect(),
        c_succ: (0..n).map(|_| 0.1 + rng.unit()).collect(),
        c_pred: (0..n).map(|_| 0.1 + rng.unit()).collect(),
        border_items: rng.next_u64() % 3,
        iterations,
        initial_loads,
        profiles,
        comm_scale: 0.2 + 3.0 * rng.unit(),
    }
}

/// An independent, naive simulation of a set of points: speeds read from the
/// profiles at every iteration, targets and plans computed from scratch.
fn naive_time(s: &Scenario, points: &[u32]) -> f64 {
    let n = s.initial_loads.len();
    let total: u64 = s.initial_loads.iter().sum();
    let mut loads = s.initial_loads.clone();
    let mut clock = 0.0;
    for k in 1..=s.iterations {
        let times: Vec<f64> = (0..n)
            .map(|i| s.time_per_item[i] / s.profiles[i].factor_at(f64::from(k - 1)))
            .collect();
        clock += (0..n)
            .map(|i| {
                loads[i] as f64 * times[i]
                    + s.border_items as f64 * (s.c_succ[i] + s.c_pred[i]) * s.comm_scale
            })
            .fold(0.0, f64::max);
        if points.contains(&k) {
            let targets = balanced_targets(total, &times).unwrap().targets;
            if targets != loads {
                let instance = match s.kind {
                    RingKind::Unidirectional => {
                        RingInstance::unidirectional(&loads, &targets, &s.c_succ)
                    }
                    RingKind::Bidirectional => {
                        RingInstance::bidirectional(&loads, &targets, &s.c_succ, &s.c_pred)
                    }
                }
                .unwrap();
                clock += plan(&instance, None).unwrap().makespan * s.comm_scale;
                loads = targets;
            }
        }
    }
    clock
}

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() <= 1e-9 * a.abs().max(b.abs()).max(1.0)
}

/// The offline best equals the best of all 2^(K-1) sets of points, each simulated
/// naively; every policy is at least as slow; every run keeps its invariants.
#[test]
fn offline_best_is_the_brute_force_optimum() {
    let mut rng = SplitMix64(2026);
    let mut scenarios = 0;
    let mut strictly_better_than_never = 0;
    for case in 0..300 {
        let n = 2 + case % 4;
        let iterations = 2 + (case % 9) as u32;
        let scenario = random_scenario(&mut rng, n, iterations);
        let mut simulator = Simulator::new(scenario.clone()).unwrap();
        let best = simulator.run(&Policy::OfflineBest).unwrap();
        let mut brute = f64::INFINITY;
        for mask in 0u32..(1 << (iterations - 1)) {
            let points: Vec<u32> = (1..iterations)
                .filter(|p| mask >> (p - 1) & 1 == 1)
                .collect();
            let naive = naive_time(&scenario, &points);
            let simulated = simulator
                .run(&Policy::At(points.clone()))
                .unwrap()
                .total_time;
            assert!(
                close(naive, simulated),
                "case {case}: points {points:?}: naive {naive}, simulator {simulated}\n{scenario:?}"
            );
            brute = brute.min(naive);
        }
        assert!(
            close(best.total_time, brute),
            "case {case}: offline best {} but brute force {brute}\n{scenario:?}",
            best.total_time
        );
        let policies = [
            Policy::Never,
            Policy::Fixed { redistributions: 1 },
            Policy::Fixed { redistributions: 3 },
            Policy::Profitability,
            Policy::Adaptive,
        ];
        for policy in &policies {
            let run = simulator.run(policy).unwrap();
            assert!(
                run.total_time >= best.total_time * (1.0 - 1e-12),
                "case {case}"
            );
            check_invariants(&scenario, &run);
        }
        check_invariants(&scenario, &best);
        scenarios += 1;
        if best.total_time < simulator.run(&Policy::Never).unwrap().total_time * (1.0 - 1e-9) {
            strictly_better_than_never += 1;
        }
    }
    assert_eq!(scenarios, 300);
    // The cases are not all trivial: redistributing pays on a good share of them.
    assert!(
        strictly_better_than_never > 60,
        "{strictly_better_than_never}"
    );
}

fn check_invariants(scenario: &Scenario, run: &Run) {
    let total: u64 = scenario.initial_loads.iter().sum();
    assert_eq!(run.iteration_ends.len(), scenario.iterations as usize);
    let mut previous = 0.0;
    for &end in &run.iteration_ends {
        assert!(end >= previous, "time went back: {:?}", run.iteration_ends);
        previous = end;
    }
    assert_eq!(run.total_time, previous);
    let mut previous_point = 0;
    let mut cost = 0.0;
    for r in &run.redistributions {
        assert_eq!(r.loads.iter().sum::<u64>(), total, "items lost or created");
        assert!(r.loads.iter().all(|&l| l >= 1));
        assert!(r.after_iteration > previous_point && r.after_iteration < scenario.iterations);
        assert!(r.cost >= 0.0);
        previous_point = r.after_iteration;
        cost += r.cost;
    }
    assert!(close(cost, run.redistribution_time));
}

/// The online policies redistribute exactly when their rules say so, replayed
/// naively: `profitability` with the whole remaining run; `adaptive` on the same
/// rings with speeds that never change (its speed model then predicts the present
/// speeds for the whole remaining run, with no sampling), once the time lost to
/// imbalance reaches half the plan's cost.
#[test]
fn online_policies_follow_their_rules() {
    let mut rng = SplitMix64(7);
    let mut decisions = [0, 0];
    for case in 0..200 {
        let changing = random_scenario(&mut rng, 3 + case % 3, 12);
        let mut constant = changing.clone();
        constant.profiles = vec![SpeedProfile::constant(); constant.profiles.len()];
        for (p, (policy, scenario, guard)) in [
            (Policy::Profitability, changing, None),
            (Policy::Adaptive, constant, Some(0.5)),
        ]
        .into_iter()
        .enumerate()
        {
            let mut simulator = Simulator::new(scenario.clone()).unwrap();
            let horizon = 1.0;
            let run = simulator.run(&policy).unwrap();
            let total: u64 = scenario.initial_loads.iter().sum();
            let mut loads = scenario.initial_loads.clone();
            let mut lost = 0.0;
            let n = loads.len();
            for k in 1..scenario.iterations {
                let times: Vec<f64> = (0..n)
                    .map(|i| {
                        scenario.time_per_item[i] / scenario.profiles[i].factor_at(f64::from(k - 1))
                    })
                    .collect();
                let step = |loads: &[u64]| {
                    (0..n)
                        .map(|i| {
                            loads[i] as f64 * times[i]
                                + scenario.border_items as f64
                                    * (scenario.c_succ[i] + scenario.c_pred[i])
                                    * scenario.comm_scale
                        })
                        .fold(0.0, f64::max)
                };
                let targets = balanced_targets(total, &times).unwrap().targets;
                lost += (step(&loads) - step(&targets)).max(0.0);
                let remaining = horizon * f64::from(scenario.iterations - k);
                let expected = targets != loads && step(&targets) < step(&loads) && {
                    let cost = naive_time_of_move(&scenario, &loads, &targets);
                    cost + remaining * step(&targets) < remaining * step(&loads)
                        && guard.is_none_or(|share| lost >= share * cost)
                };
                let taken = run.redistributions.iter().find(|r| r.after_iteration == k);
                assert_eq!(
                    taken.is_some(),
                    expected,
                    "case {case}, {}, after iteration {k}",
                    run.policy
                );
                if let Some(r) = taken {
                    loads = r.loads.clone();
                    lost = 0.0;
                    decisions[p] += 1;
                }
            }
        }
    }
    // Both policies do redistribute on these scenarios.
    assert!(decisions[0] > 50 && decisions[1] > 20, "{decisions:?}");
}

fn naive_time_of_move(s: &Scenario, loads: &[u64], targets: &[u64]) -> f64 {
    let instance = match s.kind {
        RingKind::Unidirectional => RingInstance::unidirectional(loads, targets, &s.c_succ),
        RingKind::Bidirectional => {
            RingInstance::bidirectional(loads, targets, &s.c_succ, &s.c_pred)
        }
    }
    .unwrap();
    plan(&instance, None).unwrap().makespan * s.comm_scale
}

#[test]
fn scale_changes_keep_plans_and_scale_costs() {
    let mut simulator = Simulator::new(two_processors(1)).unwrap();
    let at_half = simulator.run(&Policy::At(vec![3])).unwrap();
    simulator.set_comm_scale(1.0).unwrap();
    let at_one = simulator.run(&Policy::At(vec![3])).unwrap();
    assert_eq!(
        at_one.redistribution_time,
        2.0 * at_half.redistribution_time
    );
    // Borders double too: (1 + 2) and (3 + 1) instead of 1.5 and 2.
    assert_eq!(at_one.iteration_ends[0], 4.0 + 4.0);
    assert!(simulator.set_comm_scale(f64::NAN).is_err());
}

#[test]
fn bad_scenarios_are_named() {
    type Mutation = Box<dyn Fn(&mut Scenario)>;
    let cases: Vec<(Mutation, &str)> = vec![
        (
            Box::new(|s| s.initial_loads = vec![3]),
            "at least 2 processors",
        ),
        (
            Box::new(|s| s.c_pred.pop().map(|_| ()).unwrap()),
            "c_pred has 1 entries",
        ),
        (
            Box::new(|s| s.time_per_item[1] = 0.0),
            "time_per_item[1] = 0 must be finite and > 0",
        ),
        (Box::new(|s| s.c_succ[0] = f64::INFINITY), "c_succ[0] = inf"),
        (Box::new(|s| s.initial_loads[1] = 0), "initial_loads[1] = 0"),
        (
            Box::new(|s| s.initial_loads = vec![u64::MAX, 1]),
            "overflows 64 bits",
        ),
        (
            Box::new(|s| s.iterations = 0),
            "iterations = 0 must be >= 1",
        ),
        (Box::new(|s| s.comm_scale = -1.0), "comm_scale = -1"),
        (Box::new(|s| s.profiles.clear()), "profiles has 0 entries"),
    ];
    for (mutate, expected) in cases {
        let mut scenario = two_processors(1);
        mutate(&mut scenario);
        let message = Simulator::new(scenario).unwrap_err().to_string();
        assert!(message.contains(expected), "{message}");
    }
    let mut simulator = Simulator::new(two_processors(1)).unwrap();
    for point in [0, 5, 9] {
        let message = simulator
            .run(&Policy::At(vec![point]))
            .unwrap_err()
            .to_string();
        assert!(
            message.contains(&format!("after iteration {point}")),
            "{message}"
        );
    }
}

/// P1 runs one iteration in three at full speed, the other two at a quarter of it
/// (events at dates 0 and 1, looping after 2 more: SimGrid's LOOPAFTER), and a
/// redistribution costs more than one slow iteration gains (30 against 40 - 16). The
/// profitability rule chases every flip and ends far behind never redistributing;
/// the adaptive policy learns from the run that the speeds keep changing and
/// stays (almost) put. (The offline best moves once, to loads that suit both
/// speeds, which no policy aiming at the balance of the moment can find.)
#[test]
fn adaptive_does_not_chase_speeds_that_flip() {
    let scenario = Scenario {
        kind: RingKind::Bidirectional,
        time_per_item: vec![1.0, 1.0],
        c_succ: vec![1.0, 1.0],
        c_pred: vec![1.0, 1.0],
        border_items: 0,
        iterations: 40,
        initial_loads: vec![10, 10],
        profiles: vec![
            SpeedProfile::constant(),
            SpeedProfile::new(vec![(0.0, 1.0), (1.0, 0.25)], Some(2.0)).unwrap(),
        ],
        comm_scale: 5.0,
    };
    let mut simulator = Simulator::new(scenario).unwrap();
    // Iterations of 10 (full speed) and 40 (a quarter): fast, slow, slow, fast, ...
    let never = simulator.run(&Policy::Never).unwrap();
    assert_eq!(&never.iteration_ends[..4], &[10.0, 50.0, 90.0, 100.0]);
    assert_eq!(never.total_time, 14.0 * 10.0 + 26.0 * 40.0);
    let chasing = simulator.run(&Policy::Profitability).unwrap();
    let adaptive = simulator.run(&Policy::Adaptive).unwrap();
    let best = simulator.run(&Policy::OfflineBest).unwrap();
    assert!(
        chasing.redistributions.len() >= 15,
        "{}",
        chasing.redistributions.len()
    );
    assert!(chasing.total_time > 1.3 * never.total_time);
    assert!(
        adaptive.redistributions.len() <= 2,
        "{:?}",
        adaptive.redistributions
    );
    assert!(adaptive.total_time <= never.total_time);
    assert!(adaptive.total_time >= best.total_time);
}
