//! The iterative-application simulator at the size: 100 iterations on a
//! ring of 1000 processors with 20 redistributions, each priced by a real plan of
//! the ring planner (10^6 items; every processor's speed drifts at every
//! iteration, so that every redistribution moves data).
//!
//! - `fixed-20/unidirectional`, `fixed-20/bidirectional`: the whole run, from a
//!   fresh simulator (no plan cached), 20 plans included;
//! - `never`: the same run without redistributions: the iterations alone;
//! - `naive-never`: the naive simulation (speeds read from the profiles and the
//!   iteration time recomputed from scratch at every iteration), the baseline of
//!   the epoch precomputation.
//!
//! And the policies at the experiment's size (`policies-32x100`): a ring of 32
//! processors with the paper's speed changes, 100 iterations, a redistribution
//! costing about 10 iterations: `adaptive` (64 sampled futures per decision that
//! passes its guard), `profitability` and `offline-best` (the dynamic program), each
//! from a fresh simulator.
//!
//! And one decision of the online [`Decider`] on a bidirectional ring of 1000
//! processors with start-ups (`decider-1000`, 100 items each, speeds 0.5 to 2):
//! `without-startups` (priced by the plan without start-ups, as before
//! start-ups), `startups-stay` (one iteration left: the start-up lower bound
//! rules the move out, no plan made), `startups-move` (10^6 iterations left:
//! the bound, then the plan with start-ups), and `plan-with-startups` alone, the
//! price of pricing every iteration by the plan.
//!
//! And one step of the MPI balancer without MPI (`balancer-step/N`): the
//! decision and the plan with start-ups on a bidirectional ring of N = 10^3,
//! 10^4 and 10^5 ranks (100 items each) where the move pays. Measured (quiet
//! machine, release): 8.73 ms, 152 ms and 3.91 s; then, with one factor walk
//! per run of neighbouring circulations and `balanced_targets` from the
//! fractional optimum, 6.58 ms, 110 ms and 2.92 s; and with the papers'
//! plan's timing stopped once it cannot win, 6.01 ms, 94.6 ms and 2.50 s; with
//! bursts in the start-up planner, 6.16 ms, 94.4 ms and 1.97 s; with the
//! papers' plan made on a second thread, 5.90 ms, 88.2 ms and 1.85 s; with
//! the start-up planner's sizings refused by their message count before
//! simulating, its transfers written once and sorted on two threads, the
//! bound's faster conversions and the validator's index groups (the same
//! plans), 4.20 ms, 63.8 ms and 0.874 s; with sizings refused by their
//! busiest port and the validator's receives taken from the neighbours'
//! sends, 3.77 ms, 56.0 ms and 0.751 s.
//!
//! Run with `cargo bench -p hetbal --bench iterative`.

use std::hint::black_box;
use std::time::Duration;

use criterion::{criterion_group, criterion_main, BatchSize, Criterion};
use hetbal::balance::balanced_targets;
use hetbal::iterative::online::Decider;
use hetbal::iterative::{paper_speed_changes, Policy, Scenario, Simulator, SpeedProfile};
use hetbal::ring::{plan, RingInstance, RingKind};

use hetbal::random::SplitMix64;

const P: usize = 1000;
const ITEMS: u64 = 1_000_000;
const ITERATIONS: u32 = 100;

fn scenario(kind: RingKind) -> Scenario {
    let mut rng = SplitMix64::new(2004);
    let time_per_item: Vec<f64> = (0..P).map(|_| 0.5 + rng.range((0.0, 1.0))).collect();
    let profiles = (0..P)
        .map(|_| {
            let (start, slope) = (
                0.5 + rng.range((0.0, 1.0)),
                0.02 * (rng.range((0.0, 1.0)) - 0.5),
            );
            let events = (0..ITERATIONS)
                .map(|d| (f64::from(d), (start + slope * f64::from(d)).max(0.05)))
                .collect();
            SpeedProfile::new(events, None).expect("positive factors")
        })
        .collect();
    Scenario {
        kind,
        initial_loads: balanced_targets(ITEMS, &time_per_item).unwrap().targets,
        time_per_item,
        c_succ: (0..P)
            .map(|_| 0.01 + 0.02 * rng.range((0.0, 1.0)))
            .collect(),
        c_pred: (0..P)
            .map(|_| 0.01 + 0.02 * rng.range((0.0, 1.0)))
            .collect(),
        border_items: 1,
        iterations: ITERATIONS,
        profiles,
        comm_scale: 1.0,
    }
}

fn naive_never(s: &Scenario) -> f64 {
    let mut clock = 0.0;
    for k in 1..=s.iterations {
        clock += (0..s.initial_loads.len())
            .map(|i| {
                s.initial_loads[i] as f64 * s.time_per_item[i]
                    / s.profiles[i].factor_at(f64::from(k - 1))
                    + s.border_items as f64 * (s.c_succ[i] + s.c_pred[i]) * s.comm_scale
            })
            .fold(0.0, f64::max);
    }
    clock
}

fn bench(c: &mut Criterion) {
    let mut group = c.benchmark_group("iterative-1000x100");
    group
        .sample_size(10)
        .measurement_time(Duration::from_secs(10));
    for kind in [RingKind::Unidirectional, RingKind::Bidirectional] {
        let s = scenario(kind);
        let run = Simulator::new(s.clone())
            .unwrap()
            .run(&Policy::Fixed {
                redistributions: 20,
            })
            .unwrap();
        assert_eq!(run.redistributions.len(), 20, "every point moves data");
        group.bench_function(format!("fixed-20/{kind}"), |b| {
            b.iter_batched(
                || s.clone(),
                |s| {
                    let mut simulator = Simulator::new(s).unwrap();
                    black_box(
                        simulator
                            .run(&Policy::Fixed {
                                redistributions: 20,
                            })
                            .unwrap(),
                    )
                },
                BatchSize::LargeInput,
            )
        });
    }
    let s = scenario(RingKind::Unidirectional);
    group.bench_function("never", |b| {
        b.iter_batched(
            || s.clone(),
            |s| {
                black_box(
                    Simulator::new(s)
                        .unwrap()
                        .run(&Policy::Never)
                        .unwrap()
                        .total_time,
                )
            },
            BatchSize::LargeInput,
        )
    });
    group.bench_function("naive-never", |b| b.iter(|| black_box(naive_never(&s))));
    group.finish();
}

/// The paper's experiment on 32 processors: speeds and links drawn at random, every
/// processor changing speed twice (iterations 20-40 and 60-80), balanced start.
fn paper_scenario() -> Scenario {
    const N: usize = 32;
    let mut rng = SplitMix64::new(32);
    let time_per_item: Vec<f64> = (0..N).map(|_| 0.5 + rng.range((0.0, 1.0))).collect();
    let mut links = || (0..N).map(|_| 0.01 + rng.range((0.0, 1.0))).collect();
    Scenario {
        kind: RingKind::Bidirectional,
        initial_loads: balanced_targets(1000, &time_per_item).unwrap().targets,
        c_succ: links(),
        c_pred: links(),
        time_per_item,
        border_items: 0,
        iterations: ITERATIONS,
        profiles: paper_speed_changes(2004, N, ITERATIONS, 3.0),
        comm_scale: 1.0,
    }
}

fn bench_policies(c: &mut Criterion) {
    let mut group = c.benchmark_group("policies-32x100");
    let mut simulator = Simulator::new(paper_scenario()).unwrap();
    simulator.set_ratio(10.0, ITERATIONS / 2).unwrap();
    let s = simulator.scenario().clone();
    for policy in [Policy::Adaptive, Policy::Profitability, Policy::OfflineBest] {
        group.bench_function(policy.name(), |b| {
            b.iter_batched(
                || s.clone(),
                |s| black_box(Simulator::new(s).unwrap().run(&policy).unwrap().total_time),
                BatchSize::SmallInput,
            )
        });
    }
    group.finish();
}

fn bench_decider(c: &mut Criterion) {
    let mut group = c.benchmark_group("decider-1000");
    group.sample_size(10);
    let mut rng = SplitMix64::new(21);
    let loads = vec![100u64; P];
    // P values of 1e-3 * (low + (high - low) * u), u uniform in [0, 1).
    let mut draw = |low: f64, high: f64| -> Vec<f64> {
        (0..P)
            .map(|_| 1e-3 * (low + (high - low) * rng.range((0.0, 1.0))))
            .collect()
    };
    let seconds = draw(0.5, 2.0);
    let c_succ = draw(0.5, 2.0);
    let c_pred = draw(0.5, 2.0);
    let l = draw(1.0, 10.0);
    let decider = |startups: bool| {
        let mut d =
            Decider::new(Policy::Profitability, c_succ.clone(), Some(c_pred.clone())).unwrap();
        if startups {
            d.set_startups(l.clone(), Some(l.clone()));
        }
        d
    };
    let cases = [
        ("without-startups", false, 1_000_000u64),
        ("startups-stay", true, 1),
        ("startups-move", true, 1_000_000),
    ];
    for (name, startups, remaining) in cases {
        let mut d = decider(startups);
        let first = d.observe(&loads, &seconds, remaining).unwrap();
        assert_eq!(first.redistribute, remaining > 1, "{name}");
        group.bench_function(name, |b| {
            b.iter(|| {
                black_box(
                    d.observe(&loads, &seconds, remaining)
                        .unwrap()
                        .redistribution_time,
                )
            })
        });
    }
    let targets = decider(true)
        .observe(&loads, &seconds, 1_000_000)
        .unwrap()
        .targets;
    let ring = RingInstance::bidirectional(&loads, &targets, &c_succ, &c_pred)
        .unwrap()
        .with_startups(&l, &l)
        .unwrap();
    group.bench_function("plan-with-startups", |b| {
        b.iter(|| black_box(plan(&ring, None).unwrap().makespan))
    });
    group.finish();
}

/// One step of the MPI balancer without MPI: the decision of the online
/// [`Decider`] (the profitability policy: the adaptive one, the balancer's
/// default, waits for a history before it moves) on a bidirectional ring
/// of n ranks with start-ups (measured links), 100 items per rank, speeds 0.5
/// to 2: with 10^6 iterations left the move pays, so the step is the
/// decision, the start-up lower bound and the plan with start-ups.
fn bench_balancer_step(c: &mut Criterion) {
    let mut group = c.benchmark_group("balancer-step");
    group.sample_size(10);
    for n in [1_000usize, 10_000, 100_000] {
        let mut rng = SplitMix64::new(34);
        let mut draw = |low: f64, high: f64| -> Vec<f64> {
            (0..n)
                .map(|_| 1e-3 * (low + (high - low) * rng.range((0.0, 1.0))))
                .collect()
        };
        let (seconds, c_succ, c_pred, l) = (
            draw(0.5, 2.0),
            draw(0.5, 2.0),
            draw(0.5, 2.0),
            draw(1.0, 10.0),
        );
        let loads = vec![100u64; n];
        let mut d = Decider::new(Policy::Profitability, c_succ, Some(c_pred)).unwrap();
        d.set_startups(l.clone(), Some(l));
        let first = d.observe(&loads, &seconds, 1_000_000).unwrap();
        assert!(
            first.redistribute && first.planned,
            "the move pays at n = {n}"
        );
        group.bench_function(format!("{n}"), |b| {
            b.iter(|| {
                black_box(
                    d.observe(&loads, &seconds, 1_000_000)
                        .unwrap()
                        .redistribution_time,
                )
            })
        });
    }
    group.finish();
}

criterion_group!(
    benches,
    bench,
    bench_policies,
    bench_decider,
    bench_balancer_step
);
criterion_main!(benches);
