//! Weighted partitions: the optimum at scale, the least-moving partition, and
//! the prefix sums every partition starts with (the floor: one pass).
//!
//! `optimal`: power-law weights (Pareto, exponent 1.5, f64) of n items on p
//! processors of mixed speeds (uniform in [1, 8)), the generators of
//! `hetbal::experiment::partition`. `prefix`: the same weights summed into a
//! new vector, what `partition` cannot avoid. `moving`: the least-moving
//! partition within 5 % of the optimum, from the optimum of the speeds before
//! one processor in ten slowed down by half (the source programme; the window
//! programme, its fallback, took 7.0 s on this instance).
//!
//! Figures: the guide's performance chapter (measured with
//! `cargo bench -p hetbal --bench partition`; the 10^8 rows alone with
//! `-- 100000000`).

use std::hint::black_box;
use std::time::Duration;

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion};
use hetbal::experiment::partition::{speeds, weights};
use hetbal::partition::{partition, partition_with_movement};
use hetbal::random::SplitMix64;

fn bench_optimal(c: &mut Criterion) {
    let mut group = c.benchmark_group("partition");
    group
        .sample_size(10)
        .measurement_time(Duration::from_secs(8));
    for n in [1_000_000usize, 100_000_000] {
        let mut rng = SplitMix64::new(1);
        let w = weights("power-law", n, &mut rng);
        group.bench_with_input(BenchmarkId::new("prefix", n), &w, |b, w| {
            b.iter(|| {
                let mut sums = Vec::with_capacity(w.len() + 1);
                let mut acc = 0.0f64;
                sums.push(acc);
                sums.extend(w.iter().map(|&x| {
                    acc += x;
                    acc
                }));
                black_box(sums)
            })
        });
        for p in [16usize, 1_000, 100_000] {
            let s = speeds("mixed", p, &mut rng);
            let id = format!("{n}/p={p}");
            let probes = partition(&w, &s).unwrap().probes;
            eprintln!("partition n={n} p={p}: {probes} probes");
            group.bench_with_input(BenchmarkId::new("optimal", id), &s, |b, s| {
                b.iter(|| black_box(partition(&w, s).unwrap()))
            });
        }
    }
    group.finish();
}

fn bench_moving(c: &mut Criterion) {
    let mut group = c.benchmark_group("partition");
    group.sample_size(10);
    let n = 1_000_000;
    let p = 1_000;
    let mut rng = SplitMix64::new(2);
    let w = weights("power-law", n, &mut rng);
    let before = speeds("mixed", p, &mut rng);
    let current = partition(&w, &before).unwrap().cuts;
    let after: Vec<f64> = before
        .iter()
        .enumerate()
        .map(|(j, &s)| if j % 10 == 0 { 1.5 * s } else { s })
        .collect();
    let m = partition_with_movement(&w, &after, &current, 0.05, None).unwrap();
    eprintln!(
        "moving n={n} p={p}: {} of {n} items moved, bottleneck {} within {}",
        m.moved_items, m.bottleneck, m.limit
    );
    group.bench_function(BenchmarkId::new("moving", format!("{n}/p={p}")), |b| {
        b.iter(|| black_box(partition_with_movement(&w, &after, &current, 0.05, None).unwrap()))
    });
    group.finish();
}

criterion_group!(benches, bench_optimal, bench_moving);
criterion_main!(benches);
