//! Large rings: full rebalances beyond the transfer limit, and rings with start-ups.
//!
//! `full-rebalance`: loads uniform in 1..=50, targets the loads shuffled (every
//! processor's load changes), link costs uniform in [0.5, 2) (the generator of
//! `examples/full_rebalance.rs`). Measured: `read+parse` (read the JSON instance,
//! deserialize, validate: what Python's `json.load` is compared with) and `plan`
//! (schedule and validation, what `hetbal ring plan` computes).
//!
//! Figures on the development machine (2 cores shared, release build), with
//! `python3 -c 'import json,sys,time; t=time.time(); json.load(open(sys.argv[1]));
//! print(time.time()-t)' FILE` on the same files (medians of 5), every plan optimal
//! (gap 0):
//!
//! | ring | json.load | `read+parse` | `plan` | transfers |
//! |---|---:|---:|---:|---:|
//! | uni, 10^5 | 0.095 s | 103 ms | 128 ms | 258,038 |
//! | bi, 10^5 | 0.143 s | 86 ms | 167 ms | 216,133 |
//! | uni, 10^6 (68 MB) | 1.02 s | 1.43 s | 1.36 s | 2,942,001 |
//!
//! Since instances are checked without cloning their names, `read+parse` takes
//! 0.44 to 0.49 s at 10^6 and 35 ms for the bidirectional ring of 10^5 (five runs
//! in one process).
//!
//! At 10^6, 1.94 million of the transfers are paced trains (Algorithm 2 forwarding
//! items one at a time as they arrive, written once each), standing for 8.9 × 10^9
//! one-item sends. Before paced trains the same ring was planned in convoys within
//! 10^7 transfers, 478% above the bound, in 12.7 s and 2.6 GB: the optimum in
//! back-to-back batches needs 5.1 × 10^7.
//!
//! `startups`: random rings with start-ups 1 to 10 times the item cost (uni and
//! bidirectional, loads 1..=50 shuffled, costs uniform in [0.5, 2)): `plan` and the
//! start-up bound alone; the gap to the bound is printed. Measured (criterion
//! medians, release build, the machine otherwise idle):
//!
//! | n | plan, uni | bound, uni | plan, bi | bound, bi |
//! |---|---|---|---|---|
//! | 100 | 2.94 ms | 69 µs | 17.5 ms | 1.16 ms |
//! | 1,000 | 135 ms | 1.28 ms | 347 ms | 13.2 ms |
//! | 10,000 | 7.69 s | 35.9 ms | 13.6 s | 297 ms |
//!
//! The plans end 39% (uni, n = 1,000 and 10,000) and 33–57% (bi) above the bound,
//! with up to a million messages at n = 10,000: each candidate sizing is a
//! simulation of every message, which is where the time goes (a simulation stops
//! as soon as a message would end after the best makespan found: 15-19% faster
//! than running every one to its end, the same plans).
//!
//! Since unidirectional rings are simulated link by link along the chains of
//! flows (no event queue; the same transfers, checked against the event
//! simulation) and only the best sizing's transfers are written, the same plans
//! take (single runs, `plan` including its validation, the machine shared):
//! uni n = 1,000: 11 ms (was 79 ms in the same conditions), n = 10,000: 0.45 s
//! (was 4.0 s): about 40% of it simulating the 22 sizings, 25% validating the
//! million messages. At n = 100,000 the good sizings need more than the
//! 10^7-message limit: the plan is 8.7 times the bound (the message count, not
//! the time, is what limits this planner at that scale). Bidirectional rings
//! whose sources send both ways still went event by event (n = 10,000: 6.5 s).
//!
//! Since bidirectional flows are swept too (the links coupled at a processor
//! sending both ways or receiving from both sides simulated as small clusters,
//! the same transfers), large rings walk the sizing factors instead of trying
//! all 22, and `plan` computes the start-up bound and System 6 once (the
//! planner reused them), criterion medians, `plan` including its validation,
//! the machine shared, before (the same conditions) and after:
//!
//! | n | uni, before | uni, after | gap | bi, before | bi, after | gap, before | gap, after |
//! |---|---:|---:|---:|---:|---:|---:|---:|
//! | 100 | 237 µs | 146 µs | 41.1% | 7.26 ms | 1.16 ms | 57.2% | 50.6% |
//! | 1,000 | 14.0 ms | 6.9 ms | 39.8% | 218 ms | 13.4 ms | 33.1% | 33.1% |
//! | 10,000 | 546 ms | 317 ms | 39.0% | 8.55 s | 298 ms | 45.5% | 45.5% |
//!
//! The unidirectional gaps are unchanged. At n = 10,000 the bidirectional plan
//! still computes the start-up bound once (about 140 ms), and validation and
//! sorting the million unidirectional messages remain.
//!
//! Since a sizing that cannot beat the best one found ends the factor walk,
//! and bidirectional rings of at least 1,000 processors walk the factors once
//! per run of neighbouring candidate circulations (criterion medians, a quiet
//! machine): bi 0.85 ms, 7.99 ms and 167 ms at n = 100, 1,000 and 10,000
//! (were 1.02 ms, 10.0 ms and 197 ms), the same plans; uni unchanged (143 µs,
//! 6.69 ms, 267 ms). With the papers' plan's timing stopped once it cannot
//! beat the start-up plan: uni 132 µs, 6.58 ms, 254 ms; bi 0.83 ms, 7.52 ms,
//! 149 ms. With bursts of 1, 4, 2 and all in the factor walk (a sender
//! holding more than a message's worth sends up to that many times the
//! size): uni 167 µs, 5.70 ms, 208 ms with gaps 28.2%, 20.6%, 19.0%; bi 1.14
//! ms, 7.23 ms, 157 ms with gaps 41.7%, 20.8%, 25.9%. With the papers' plan
//! made on a second thread from 1,000 processors: uni 162 µs, 4.87 ms, 190
//! ms; bi 1.12 ms, 6.81 ms, 140 ms. With sizings refused without simulating
//! when their fewest messages exceed the limit, the chosen transfers written
//! once, two-thread sorting, the bound's one-instruction conversions, the
//! validator's index groups, and the run's other circulations trying the
//! walked sizing alone (the same plans): uni 168 µs, 4.20 ms, 128 ms; bi 0.94
//! ms, 4.51 ms, 97.9 ms; the bounds uni 8.9 µs, 0.10 ms, 2.48 ms and bi 86 µs,
//! 0.42 ms, 6.92 ms. At 10^5 (one cold run each): uni 1.95 to 2.02 s, bi 1.92
//! to 1.97 s (were 3.70 and 4.43 s). With sizings refused when their busiest
//! port ends after the cutoff, receives taken from the neighbours' sends in the
//! validator, and the bound and the papers' timing on the second thread: uni
//! 159 µs, 3.06 ms, 102 ms (four runs: 100.5 to 115 ms); bi 0.89 ms, 4.14 ms,
//! 94.1 ms; at 10^5 uni 1.69 to 1.81 s, bi 1.67 to 1.74 s.
//!
//! `tiny-exact` (criterion medians, the machine otherwise idle): `plan` proves
//! the 5-processor ring optimal in 2.79 ms; the search that prunes nothing
//! gives up after 2 million states in 2.30 s (as `plan` did before it
//! pruned). With states as wide as 6 processors on such rings (half the
//! memory: 290 MB instead of 550 at the budget): 2.54 ms and 1.54 s. With
//! `plan` searching for a schedule one time unit before its own (16, none):
//! 1.20 ms. With the search's states hashed by a multiply-rotate hash instead
//! of SipHash (back to back, on a day this machine ran slower): `plan` 3.31
//! ms before, 1.85 ms after; the search that prunes nothing 3.64 s, 2.03 s.
//!
//! Run with `cargo bench -p hetbal --bench startups` (the 10^6 ring alone takes
//! minutes: `cargo bench -p hetbal --bench startups -- full-rebalance`).

use std::hint::black_box;
use std::time::Duration;

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion};
use hetbal::experiment::startups::{full_rebalance, with_random_startups};
use hetbal::ring::{
    plan, startup_exhaustive, startup_lower_bound, RingInstance, RingInstanceSpec, RingKind,
};

/// A full rebalance of the library's experiment ([`full_rebalance`]).
fn ring(bidirectional: bool, n: usize, seed: u64) -> RingInstance {
    let kind = if bidirectional {
        RingKind::Bidirectional
    } else {
        RingKind::Unidirectional
    };
    full_rebalance(kind, n, seed).expect("at least 2 processors")
}

fn bench_full_rebalance(c: &mut Criterion) {
    let dir = std::env::temp_dir().join(format!("hetbal-startups-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let mut group = c.benchmark_group("full-rebalance");
    group.sample_size(10);
    group.measurement_time(Duration::from_secs(30));
    for (bidirectional, n) in [(false, 100_000), (true, 100_000), (false, 1_000_000)] {
        let kind = if bidirectional { "bi" } else { "uni" };
        let ring = ring(bidirectional, n, 21);
        let path = dir.join(format!("{kind}-{n}.json"));
        std::fs::write(&path, serde_json::to_string(&ring.to_spec()).unwrap()).unwrap();
        let planned = plan(&ring, None).unwrap();
        eprintln!(
            "{kind} n = {n}: {}, {} transfers, makespan {} bound {} (gap {:.3}%), JSON {} bytes",
            planned.algorithm,
            planned.transfers.len(),
            planned.makespan,
            planned.lower_bound,
            100.0 * (planned.makespan / planned.lower_bound - 1.0),
            std::fs::metadata(&path).unwrap().len()
        );
        group.bench_with_input(
            BenchmarkId::new(format!("read+parse-{kind}"), n),
            &path,
            |b, path| {
                b.iter(|| {
                    let text = std::fs::read_to_string(path).unwrap();
                    let spec: RingInstanceSpec = serde_json::from_str(&text).unwrap();
                    black_box(RingInstance::from_spec(spec).unwrap())
                })
            },
        );
        group.bench_with_input(
            BenchmarkId::new(format!("plan-{kind}"), n),
            &ring,
            |b, r| b.iter(|| black_box(plan(r, None).unwrap())),
        );
    }
    group.finish();
    let _ = std::fs::remove_dir_all(&dir);
}

fn bench_startups(c: &mut Criterion) {
    let mut group = c.benchmark_group("startups");
    group.sample_size(10);
    for bidirectional in [false, true] {
        let kind = if bidirectional { "bi" } else { "uni" };
        for n in [100usize, 1_000, 10_000] {
            let ring = with_random_startups(&ring(bidirectional, n, n as u64), (1.0, 10.0), 7);
            let planned = plan(&ring, None).unwrap();
            eprintln!(
                "start-ups, {kind} n = {n}: {}, {} transfers, makespan {} bound {} (gap {:.1}%)",
                planned.algorithm,
                planned.transfers.len(),
                planned.makespan,
                planned.lower_bound,
                100.0 * (planned.makespan / planned.lower_bound - 1.0)
            );
            group.bench_with_input(
                BenchmarkId::new(format!("plan-{kind}"), n),
                &ring,
                |b, r| b.iter(|| black_box(plan(r, None).unwrap())),
            );
            group.bench_with_input(
                BenchmarkId::new(format!("bound-{kind}"), n),
                &ring,
                |b, r| b.iter(|| black_box(startup_lower_bound(r))),
            );
        }
    }
    group.finish();
}

/// `tiny-exact`: a ring of 5 processors and 24 items whose start-up bound (16)
/// the planner misses (17): `plan`, which settles it with the search pruned by
/// the bound, against the search that prunes nothing (`startup_exhaustive`,
/// the reference), which stops at its budget of 2 million states.
fn bench_tiny_exact(c: &mut Criterion) {
    let ring = RingInstance::unidirectional(
        &[5, 5, 2, 9, 3],
        &[15, 5, 2, 2, 0],
        &[4.0, 1.0, 3.0, 2.0, 1.0],
    )
    .and_then(|r| r.with_startups(&[0.0, 0.0, 1.0, 0.0, 1.0], &[0.0; 5]))
    .expect("a valid ring");
    let mut group = c.benchmark_group("tiny-exact");
    group.sample_size(10);
    group.bench_function("plan", |b| b.iter(|| black_box(plan(&ring, None).unwrap())));
    group.bench_function("unpruned-search", |b| {
        b.iter(|| black_box(startup_exhaustive(&ring, 17.0, 2_000_000).is_err()))
    });
    group.finish();
}

criterion_group!(
    benches,
    bench_startups,
    bench_full_rebalance,
    bench_tiny_exact
);
criterion_main!(benches);
