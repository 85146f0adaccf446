//! The order-aware checksum that every redistribution computes over the items it
//! sends and keeps: `range_sum` over 1 MiB of items of 1 KiB and of 1 MiB, in
//! bytes per second, against a plain copy of the same bytes (what moving them
//! costs at least). Run with `cargo bench -p hetbal-mpi --bench checksum`.

use std::hint::black_box;

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use hetbal::random::SplitMix64;
use hetbal_mpi::checksum::range_sum;

fn checksum(c: &mut Criterion) {
    let mut rng = SplitMix64::new(5);
    let bytes: Vec<u8> = (0..1 << 20).map(|_| rng.next_u64() as u8).collect();
    let mut group = c.benchmark_group("checksum-1MiB");
    group.throughput(Throughput::Bytes(bytes.len() as u64));
    for item in [1usize << 10, 1 << 20] {
        group.bench_with_input(BenchmarkId::new("range_sum", item), &item, |b, &item| {
            b.iter(|| range_sum(black_box(5), 1 << 40, item, black_box(&bytes)))
        });
    }
    let mut copy = vec![0u8; bytes.len()];
    group.bench_function("copy", |b| {
        b.iter(|| copy.copy_from_slice(black_box(&bytes)));
    });
    group.finish();
}

criterion_group!(benches, checksum);
criterion_main!(benches);
