//! Planning a unidirectional ring, next to reading the same instance from disk.
//!
//! For n = 10^3 to 10^6 processors: `read+parse` (read the JSON file, deserialize,
//! validate), `flows+bound` (the O(n) optimal flows and the exact lower bound),
//! `algorithm2` (the full as-soon-as-possible schedule), `plan` (schedule +
//! validation + bound: what `hetbal ring plan` computes) and `validate` alone.
//!
//! Instances: a rebalancing after speeds changed. Loads are uniform in 1..=1000,
//! targets are the balanced split for random times per item (1 to 4), link costs are
//! uniform in [0.5, 2). Run with `cargo bench -p hetbal --bench ring`.

use std::hint::black_box;
use std::time::Duration;

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion};
use hetbal::balance::balanced_targets;
use hetbal::ring::{
    algorithm2, plan, unidirectional_flows, unidirectional_lower_bound, RingInstance,
    RingInstanceSpec,
};
use hetbal::validate;

/// A small deterministic generator (xorshift), so runs compare.
struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    fn uniform(&mut self, lo: f64, hi: f64) -> f64 {
        lo + (hi - lo) * (self.next() >> 11) as f64 / (1u64 << 53) as f64
    }
}

fn rebalancing_ring(n: usize, seed: u64) -> RingInstance {
    let mut rng = Rng(seed);
    let loads: Vec<u64> = (0..n).map(|_| 1 + rng.next() % 1000).collect();
    let times: Vec<f64> = (0..n).map(|_| rng.uniform(1.0, 4.0)).collect();
    let costs: Vec<f64> = (0..n).map(|_| rng.uniform(0.5, 2.0)).collect();
    let total = loads.iter().sum();
    let targets = balanced_targets(total, &times).unwrap().targets;
    RingInstance::unidirectional(&loads, &targets, &costs).unwrap()
}

fn bench_ring(c: &mut Criterion) {
    let dir = std::env::temp_dir().join(format!("hetbal-bench-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let mut group = c.benchmark_group("unidirectional");
    for &n in &[1_000usize, 10_000, 100_000, 1_000_000] {
        let ring = rebalancing_ring(n, 0x5eed ^ n as u64);
        let path = dir.join(format!("ring-{n}.json"));
        std::fs::write(&path, serde_json::to_string(&ring.to_spec()).unwrap()).unwrap();
        let planned = plan(&ring, None).unwrap();
        eprintln!(
            "n = {n}: {} transfers, makespan {} = lower bound {}, JSON {} bytes",
            planned.transfers.len(),
            planned.makespan,
            planned.lower_bound,
            std::fs::metadata(&path).unwrap().len()
        );
        if n >= 100_000 {
            group.sample_size(10);
            group.measurement_time(Duration::from_secs(8));
        }
        group.bench_with_input(BenchmarkId::new("read+parse", n), &path, |b, path| {
            b.iter(|| {
                let text = std::fs::read_to_string(path).unwrap();
                let spec: RingInstanceSpec = serde_json::from_str(&text).unwrap();
                black_box(RingInstance::from_spec(spec).unwrap())
            })
        });
        group.bench_with_input(BenchmarkId::new("flows+bound", n), &ring, |b, ring| {
            b.iter(|| {
                let flows = unidirectional_flows(ring);
                black_box((flows, unidirectional_lower_bound(ring)))
            })
        });
        group.bench_with_input(BenchmarkId::new("algorithm2", n), &ring, |b, ring| {
            b.iter(|| black_box(algorithm2(ring)))
        });
        group.bench_with_input(BenchmarkId::new("plan", n), &ring, |b, ring| {
            b.iter(|| black_box(plan(ring, None).unwrap()))
        });
        let schedule = planned.schedule();
        group.bench_with_input(BenchmarkId::new("validate", n), &ring, |b, ring| {
            b.iter(|| black_box(validate(ring, &schedule).unwrap()))
        });
    }
    group.finish();
    let _ = std::fs::remove_dir_all(&dir);
}

criterion_group!(benches, bench_ring);
criterion_main!(benches);
