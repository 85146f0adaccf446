//! Load-balanced scatter: the fast exact programme against the paper's Algorithm 1
//! (`naive-dp`, O(p N^2)) at equal N, and the goal: 817,101 items on 16
//! processors (the paper's seismic case took 15 minutes in 2003).
//!
//! Platforms (`support/scatter_gen.rs`, `grid_like`): the root last, items cheap to
//! send (1e-5 to 1e-3 s, log-uniform) and costly to process (4e-3 to 2e-2 s), with
//! or without startups (up to 0.5 s to send, 2 s to compute, paid when used).
//!
//! - `exact-vs-naive/{exact,naive-dp}/N`: p = 8, N = 1,000 and 4,000, Theorem 3's
//!   order;
//! - `goal/*`: p = 16, N = 817,101: `exact` (linear costs and with startups), `lp`,
//!   and `plan` with the order `best` (search and final plan).
//!
//! Run with `cargo bench -p hetbal --bench scatter`.

use std::hint::black_box;
use std::time::Duration;

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion};
use hetbal::scatter::{bandwidth_order, exact, lp, naive_dp, plan, Method, OrderPolicy};

use hetbal::random::SplitMix64;
#[path = "../tests/support/scatter_gen.rs"]
mod scatter_gen;
use scatter_gen::grid_like;

fn exact_vs_naive(c: &mut Criterion) {
    let mut group = c.benchmark_group("exact-vs-naive");
    group.sample_size(10);
    for n in [1_000u64, 4_000] {
        let s = grid_like(&mut SplitMix64::new(0x5ca7 ^ n), 8, n, true);
        let order = bandwidth_order(&s);
        assert_eq!(
            exact(&s, &order).unwrap().optimum.to_bits(),
            naive_dp(&s, &order).unwrap().optimum.to_bits(),
            "the two programmes must agree"
        );
        group.bench_with_input(BenchmarkId::new("exact", n), &n, |b, _| {
            b.iter(|| black_box(exact(&s, &order).unwrap()))
        });
        group.bench_with_input(BenchmarkId::new("naive-dp", n), &n, |b, _| {
            b.iter(|| black_box(naive_dp(&s, &order).unwrap()))
        });
    }
    group.finish();
}

fn goal(c: &mut Criterion) {
    const ITEMS: u64 = 817_101;
    let mut group = c.benchmark_group("goal");
    group.sample_size(10);
    group.measurement_time(Duration::from_secs(15));
    for (label, startups) in [("linear", false), ("startups", true)] {
        let s = grid_like(&mut SplitMix64::new(0x0081_7101), 16, ITEMS, startups);
        let order = bandwidth_order(&s);
        let d = exact(&s, &order).unwrap();
        eprintln!(
            "goal ({label}): optimum {} s for {ITEMS} items on 16 processors",
            d.optimum
        );
        group.bench_function(BenchmarkId::new("exact", label), |b| {
            b.iter(|| black_box(exact(&s, &order).unwrap()))
        });
        group.bench_function(BenchmarkId::new("lp", label), |b| {
            b.iter(|| black_box(lp(&s, &order).unwrap()))
        });
        group.bench_function(BenchmarkId::new("plan-best", label), |b| {
            b.iter(|| black_box(plan(&s, Method::Exact, OrderPolicy::Best).unwrap()))
        });
    }
    group.finish();
}

criterion_group!(benches, exact_vs_naive, goal);
criterion_main!(benches);
