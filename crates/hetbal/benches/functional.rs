//! Balancing with time functions: 10^5 processors with 32 measured points
//! each (a third GPU-like: a start-up then fast; a third with a memory
//! cliff; a third with cache steps), 10^9 items. The goal: under 50 ms.
//!
//! Figures: the guide's performance chapter (`cargo bench -p hetbal --bench
//! functional`).

use std::hint::black_box;
use std::time::Duration;

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion};
use hetbal::functional::{balance, Model, TimeFunction};
use hetbal::random::SplitMix64;

/// Processor j's measured points: 32 loads up to 10^6, times of its profile,
/// its speed drawn in [1, 8).
fn points(j: usize, rng: &mut SplitMix64) -> Vec<(u64, f64)> {
    let speed = rng.range((1.0, 8.0));
    (1..=32u64)
        .map(|k| {
            let x = k * 31_250;
            let per_item = speed * 1e-9;
            let t = match j % 3 {
                0 => 2e-3 + x as f64 * per_item / 4.0,
                1 if x > 500_000 => 500_000.0 * per_item + (x - 500_000) as f64 * per_item * 6.0,
                1 => x as f64 * per_item,
                _ => x as f64 * per_item * (1.0 + (x / 200_000) as f64 * 0.5),
            };
            (x, t)
        })
        .collect()
}

fn bench_balance(c: &mut Criterion) {
    let mut group = c.benchmark_group("functional");
    group
        .sample_size(10)
        .measurement_time(Duration::from_secs(8));
    for model in [Model::PiecewiseLinear, Model::MonotoneCubic] {
        let mut rng = SplitMix64::new(33);
        let p = 100_000;
        let functions: Vec<TimeFunction> = (0..p)
            .map(|j| TimeFunction::new(j, &points(j, &mut rng), model).expect("valid points"))
            .collect();
        let name = format!("{model:?}");
        group.bench_with_input(BenchmarkId::new(name, p), &functions, |b, f| {
            b.iter(|| balance(black_box(1_000_000_000), f).expect("balances"))
        });
    }
    group.finish();
}

criterion_group!(benches, bench_balance);
criterion_main!(benches);
