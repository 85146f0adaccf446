//! Bidirectional rings: the System 6 bound by one-dimensional convex minimisation
//! against the paper's LP solved by good_lp (microlp), and whole plans.
//!
//! Rings: loads uniform in 1..=1000, targets the loads shifted by one processor
//! (every processor's load moves), costs uniform in [0.5, 2.5). `light` rings have
//! loads of 5,000 to 6,000 so that no processor forwards (Lemma 9 applies).
//! `plan-homogeneous-tight`: 10^4 processors, max |delta| = 10^4, 5 * 10^7 items moved,
//! by the default block schedule and by synchronous-step list scheduling.
//! The LP at n = 10^5 takes too long to repeat: `examples/system6_lp_timing.rs` times
//! it once. Run with `cargo bench -p hetbal --bench bidirectional`.

use std::hint::black_box;
use std::time::Duration;

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion};
use hetbal::ring::{circulation_bound, plan, RingAlgorithm, RingInstance};

#[path = "../tests/support/system6_lp.rs"]
mod system6_lp;
use system6_lp::lp_tau;

#[path = "../tests/support/forwarding_ring.rs"]
mod forwarding_ring;
use forwarding_ring::shifted_ring;

fn bench(c: &mut Criterion) {
    let mut group = c.benchmark_group("bidirectional");
    group.sample_size(10);
    group.measurement_time(Duration::from_secs(5));
    for &n in &[1_000usize, 10_000, 100_000] {
        let ring = shifted_ring(n, 0, n as u64);
        group.bench_with_input(BenchmarkId::new("system6", n), &ring, |b, r| {
            b.iter(|| black_box(circulation_bound(r)))
        });
        if n <= 3_000 {
            let ours = circulation_bound(&ring).rational_tau;
            let lp = lp_tau(&ring);
            assert!((ours - lp).abs() <= 1e-9 * lp);
            group.bench_with_input(BenchmarkId::new("system6-lp", n), &ring, |b, r| {
                b.iter(|| black_box(lp_tau(r)))
            });
        }
        group.bench_with_input(BenchmarkId::new("plan-forwarding", n), &ring, |b, r| {
            b.iter(|| black_box(plan(r, None).unwrap()))
        });
        let light = shifted_ring(n, 5_000, n as u64 + 1);
        group.bench_with_input(BenchmarkId::new("plan-light", n), &light, |b, r| {
            b.iter(|| black_box(plan(r, None).unwrap()))
        });
    }
    // Homogeneous, tight: 10^4 processors holding one item, five sources giving
    // 10^4 items each to five sinks (max |delta| = 10^4, Lemma 6 = 10^4 steps).
    let n = 10_000;
    let mut loads = vec![1u64; n];
    let mut targets = vec![1u64; n];
    for k in 0..10 {
        if k % 2 == 0 {
            loads[k * 1000] += 10_000;
        } else {
            targets[k * 1000] += 10_000;
        }
    }
    let ring = RingInstance::bidirectional(&loads, &targets, &vec![1.0; n], &vec![1.0; n]).unwrap();
    group.bench_with_input(
        BenchmarkId::new("plan-homogeneous-tight", n),
        &ring,
        |b, r| b.iter(|| black_box(plan(r, None).unwrap())),
    );
    // The same ring by synchronous-step list scheduling (O(n) per step), the
    // default before the block schedule.
    group.bench_with_input(
        BenchmarkId::new("plan-homogeneous-tight-steps", n),
        &ring,
        |b, r| b.iter(|| black_box(plan(r, Some(RingAlgorithm::BidirectionalList)).unwrap())),
    );
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
