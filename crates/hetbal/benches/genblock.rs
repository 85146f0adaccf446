//! GEN_BLOCK scheduling at the size: P = Q = 1024 processors, N = 10^7
//! elements. The full methods against the plain colouring.
//!
//! Instances: each distribution (source and target, independently) has block sizes
//! drawn uniformly in [1, 2N/P] then scaled to add up to N (cumulative rounding),
//! the shape of the paper's scenario II; tau = 1, and the startup Tu = 0 or
//! Tu = 1000 (about a tenth of an average block).
//!
//! - `graph`: the redistribution graph (messages, degrees, Delta);
//! - `plain-colouring`: the paper's O(m) colouring, messages unsplit (`Tb`);
//! - `paper`: Selection, Scheduling, Partition (`Ta`), exactly Delta steps;
//! - `best/tu0`, `best/tu1000`: the `best` method for that startup (search of
//!   layouts, colourings and the merge chain; never worse than `paper`);
//! - `check`: the library's schedule checker on `best`'s schedule.
//!
//! Run with `cargo bench -p hetbal --bench genblock`.

use std::hint::black_box;
use std::time::Duration;

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion};
use hetbal::genblock::{
    best_schedule, check_schedule, lower_bound, paper_schedule, plain_colouring,
    redistribution_graph, GenBlockInstance, SearchOptions,
};

use hetbal::random::SplitMix64;

const P: usize = 1024;
const N: u64 = 10_000_000;

/// `p` block sizes in [1, 2N/p], scaled to add up to `n`.
fn blocks(rng: &mut SplitMix64, p: usize, n: u64) -> Vec<u64> {
    let raw: Vec<u64> = (0..p)
        .map(|_| 1 + rng.below_u64(2 * n / p as u64))
        .collect();
    let sum: u128 = raw.iter().map(|&x| u128::from(x)).sum();
    let mut out = Vec::with_capacity(p);
    let (mut acc, mut previous) = (0u128, 0u64);
    for x in raw {
        acc += u128::from(x);
        let boundary = (acc * u128::from(n) / sum) as u64;
        out.push(boundary - previous);
        previous = boundary;
    }
    out
}

fn genblock(c: &mut Criterion) {
    let mut rng = SplitMix64::new(0x6e6b_1024_0001);
    let source = blocks(&mut rng, P, N);
    let target = blocks(&mut rng, P, N);
    let g = GenBlockInstance::new(&source, &target, 0.0, 1.0).unwrap();
    let graph = redistribution_graph(&g);
    let options = SearchOptions::default();
    let plain = plain_colouring(&graph);
    let paper = paper_schedule(&graph).schedule;
    for tu in [0.0, 1000.0] {
        let (best, t) = best_schedule(&graph, tu, 1.0, &options);
        assert!(check_schedule(&graph, &best).is_ok());
        eprintln!(
            "P = {P}, N = {N}, Tu = {tu}: {} messages, Delta = {}, largest block {}; cost: plain {}, paper {}, best {} in {} steps ({} trade-off points), lower bound {}",
            graph.len(),
            graph.degree,
            graph.largest_block,
            plain.cost(tu, 1.0),
            paper.cost(tu, 1.0),
            best.cost(tu, 1.0),
            best.len(),
            t.points.len(),
            lower_bound(&graph, tu, 1.0)
        );
    }
    let mut group = c.benchmark_group("genblock");
    group.sample_size(10);
    group.measurement_time(Duration::from_secs(5));
    group.bench_function("graph", |b| b.iter(|| black_box(redistribution_graph(&g))));
    group.bench_function("plain-colouring", |b| {
        b.iter(|| black_box(plain_colouring(&graph)))
    });
    group.bench_function("paper", |b| b.iter(|| black_box(paper_schedule(&graph))));
    for tu in [0u32, 1000] {
        group.bench_with_input(
            BenchmarkId::new("best", format!("tu{tu}")),
            &tu,
            |b, &tu| b.iter(|| black_box(best_schedule(&graph, f64::from(tu), 1.0, &options))),
        );
    }
    let (best, _) = best_schedule(&graph, 1000.0, 1.0, &options);
    group.bench_function("check", |b| {
        b.iter(|| black_box(check_schedule(&graph, &best).unwrap()))
    });
    group.finish();
}

criterion_group!(benches, genblock);
criterion_main!(benches);
