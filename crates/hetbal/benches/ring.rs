//! Planning a unidirectional ring, next to reading the same instance from disk.
//!
//! Two families of heterogeneous rings (link costs uniform in [0.5, 2)):
//! - `drift`: speeds drifted since the last balance: loads uniform in 501..=1500 and
//!   flows a random walk in [0, 3000] (steps of at most 400 items), so most
//!   processors forward more items than they hold but flows stay bounded whatever n
//!   (n = 10^3 to 10^6);
//! - `reshuffle`: loads uniform in 1..=1000 and targets balanced for random times per
//!   item (1 to 4): flows grow like sqrt(n) times the loads, items cross hundreds of
//!   processors, and every optimal schedule needs many batches (n = 10^3, 10^4).
//!
//! Measured: `read+parse` (read the JSON file, deserialize, validate), `flows+bound`
//! (the O(n) optimal flows and the exact lower bound), `batched` (the default
//! schedule), `asap_unidirectional` (the as-soon-as-possible schedule), `plan` (schedule +
//! validation + bound: what `hetbal ring plan` computes) and `validate` alone.
//! Run with `cargo bench -p hetbal --bench ring`.

use std::hint::black_box;
use std::time::Duration;

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion};
use hetbal::balance::balanced_targets;
use hetbal::ring::{
    asap_unidirectional, batched_schedule, plan, unidirectional_flows, unidirectional_lower_bound,
    RingAlgorithm, RingInstance, RingInstanceSpec, MAX_TRANSFERS,
};
use hetbal::validate;

use hetbal::random::SplitMix64;

fn reshuffle_ring(n: usize, seed: u64) -> RingInstance {
    let mut rng = SplitMix64::new(seed);
    let loads: Vec<u64> = (0..n).map(|_| 1 + rng.below_u64(1000)).collect();
    let times: Vec<f64> = (0..n).map(|_| rng.range((1.0, 4.0))).collect();
    let costs: Vec<f64> = (0..n).map(|_| rng.range((0.5, 2.0))).collect();
    let total = loads.iter().sum();
    let targets = balanced_targets(total, &times).unwrap().targets;
    RingInstance::unidirectional(&loads, &targets, &costs).unwrap()
}

fn drift_ring(n: usize, seed: u64) -> RingInstance {
    let mut rng = SplitMix64::new(seed);
    let mut loads: Vec<u64> = (0..n).map(|_| 501 + rng.below_u64(1000)).collect();
    loads[0] += 3000; // room for the wrap-around step f_0 - f_{n-1}
                      // A random walk of flows, reflected into [0, 3000], steps of at most 400 items:
                      // most processors forward more than they hold.
    let mut flow = 1500i64;
    let flows: Vec<i64> = (0..n)
        .map(|_| {
            flow += (rng.below_u64(801)) as i64 - 400;
            flow = flow.abs();
            if flow > 3000 {
                flow = 6000 - flow;
            }
            flow
        })
        .collect();
    let costs: Vec<f64> = (0..n).map(|_| rng.range((0.5, 2.0))).collect();
    // delta_i = f_i - f_{i-1}: the ring then carries exactly these flows.
    let targets: Vec<u64> = (0..n)
        .map(|i| {
            let delta = flows[i] - flows[(i + n - 1) % n];
            (loads[i] as i64 - delta) as u64
        })
        .collect();
    RingInstance::unidirectional(&loads, &targets, &costs).unwrap()
}

fn bench_family(
    c: &mut Criterion,
    family: &str,
    sizes: &[usize],
    make: fn(usize, u64) -> RingInstance,
) {
    // The instance files, in the build directory (overwritten by the next run).
    let dir = std::path::PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("hetbal-bench");
    std::fs::create_dir_all(&dir).unwrap();
    let mut group = c.benchmark_group(family);
    for &n in sizes {
        let ring = make(n, 0x5eed ^ n as u64);
        let path = dir.join(format!("{family}-{n}.json"));
        std::fs::write(&path, serde_json::to_string(&ring.to_spec()).unwrap()).unwrap();
        let planned = plan(&ring, None).unwrap();
        // Algorithm 2's size (beyond the plan limit, the plan is made of convoys).
        let forced = plan(&ring, Some(RingAlgorithm::UnidirectionalHeterogeneous)).unwrap();
        let asap_transfers =
            if forced.algorithm == RingAlgorithm::UnidirectionalHeterogeneous.name() {
                forced.transfers.len() as u128
            } else {
                MAX_TRANSFERS + 1
            };
        eprintln!(
            "{family} n = {n}: batched {} transfers, Algorithm 2 {} transfers, makespan {} = lower bound {}, JSON {} bytes",
            planned.transfers.len(),
            asap_transfers,
            planned.makespan,
            planned.lower_bound,
            std::fs::metadata(&path).unwrap().len()
        );
        if n >= 100_000 {
            group.sample_size(10);
            group.measurement_time(Duration::from_secs(10));
        } else {
            group.sample_size(20);
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
        group.bench_with_input(BenchmarkId::new("batched", n), &ring, |b, ring| {
            b.iter(|| black_box(batched_schedule(ring)))
        });
        if asap_transfers <= MAX_TRANSFERS {
            group.bench_with_input(BenchmarkId::new("algorithm2", n), &ring, |b, ring| {
                b.iter(|| black_box(asap_unidirectional(ring)))
            });
        }
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

fn bench_ring(c: &mut Criterion) {
    bench_family(c, "drift", &[1_000, 10_000, 100_000, 1_000_000], drift_ring);
    bench_family(c, "reshuffle", &[1_000, 10_000], reshuffle_ring);
}

criterion_group!(benches, bench_ring);
criterion_main!(benches);
