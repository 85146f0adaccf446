//! Mapping an iterative application at the size: p = 1000 processors on a
//! random heterogeneous complete network (w in [0.01, 0.05] s per unit of work, c in
//! [0.001, 0.1] s per unit of data, asymmetric; D_w = 1, D_c = 0.0064), and the
//! shared-link heuristics on the generated clusters of clusters.
//!
//! - `map/greedy`, `map/local`: `map` with the slides' greedy, and with the greedy
//!   followed by local search (2-opt, Or-opt, Lin–Kernighan chains, additions,
//!   removals);
//! - `cycle/improve`, `cycle/lin-kernighan`: the ring order of all 1000 processors
//!   from a random order, by the full local search and by Lin–Kernighan chains
//!   alone;
//! - `shared/clusters`: H1 and H2 with widest-path routing on one generated
//!   cluster of clusters (23 hosts), D_c/D_w = 0.064.
//!
//! Run with `cargo bench -p hetbal --bench mapping`.

use std::hint::black_box;
use std::time::Duration;

use criterion::{criterion_group, criterion_main, Criterion};
use hetbal::mapping::{
    improve_cycle, lin_kernighan, map, map_shared_with, ring_weights, MapOptions, Method, Routing,
};
use hetbal::platform::generate::{clusters, ClustersOptions};
use hetbal::platform::{Platform, Processor};

use hetbal::random::SplitMix64;

const P: usize = 1000;

fn platform(rng: &mut SplitMix64, p: usize) -> Platform {
    let procs = (0..p)
        .map(|i| Processor::new(format!("P{i}"), rng.range((0.01, 0.05))))
        .collect();
    let c = (0..p)
        .map(|i| {
            (0..p)
                .map(|j| if i == j { 0.0 } else { rng.range((0.001, 0.1)) })
                .collect()
        })
        .collect();
    Platform::from_matrix(procs, c).unwrap()
}

fn mapping(c: &mut Criterion) {
    let mut rng = SplitMix64::new(0x5eed_1000);
    let p = platform(&mut rng, P);
    let d = ring_weights(&p);
    let mut order: Vec<usize> = (0..P).collect();
    for k in (1..P).rev() {
        order.swap(k, rng.below_u64(k as u64 + 1) as usize);
    }
    let mut group = c.benchmark_group("mapping");
    group.sample_size(10);
    group.measurement_time(Duration::from_secs(10));
    for (name, method) in [("map/greedy", Method::Greedy), ("map/local", Method::Local)] {
        group.bench_function(name, |b| {
            b.iter(|| black_box(map(&p, &MapOptions::new(1.0, 0.0064, method)).unwrap()))
        });
    }
    group.bench_function("cycle/improve", |b| {
        b.iter(|| black_box(improve_cycle(&d, P, order.clone())))
    });
    group.bench_function("cycle/lin-kernighan", |b| {
        b.iter(|| black_box(lin_kernighan(&d, P, order.clone())))
    });
    let shared = clusters(1, &ClustersOptions::default())
        .unwrap()
        .with_unit_bytes(1e6)
        .unwrap();
    group.bench_function("shared/clusters", |b| {
        b.iter(|| black_box(map_shared_with(&shared, 1.0, 0.064, Routing::Widest).unwrap()))
    });
    group.finish();
}

criterion_group!(benches, mapping);
criterion_main!(benches);
