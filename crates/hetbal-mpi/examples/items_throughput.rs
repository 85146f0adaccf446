//! Throughput of variable-size items moved to new cuts
//! ([`hetbal_mpi::items::redistribute_items`]) against a plain MPI transfer of
//! the same bytes between the same two ranks.
//!
//! `mpirun -np 2 target/release/examples/items_throughput [MEBIBYTES] [RUNS]`
//!
//! Items of 1 KiB to 1 MiB (uniform, seeded), MEBIBYTES in all (default 1024):
//! - `items to an empty rank`: rank 0 holds them all and gives them all to
//!   rank 1, which holds none;
//! - `items to a full rank`: rank 1 holds them all and gives them to rank 0,
//!   which already holds as many bytes of items of its own (the items arrive
//!   after its own, which stay where they are);
//! - `plain, new buffer`: the same bytes from one rank to the other in
//!   messages of 1 MiB, received into a buffer allocated in the timed part.
//!
//! Each runs RUNS times (default 5), in turn, so that a busy machine slows
//! them alike; the median time of each is shown with its rate and the plain
//! transfer's time over it (100 %: as fast as MPI), and each rank's peak
//! resident memory at the end, against the bytes it held at most.

use hetbal_mpi::items::redistribute_items;
use hetbal_mpi::memory::peak_resident_bytes;
use hetbal_mpi::Options;
use mpi::traits::{Communicator, CommunicatorCollectives, Destination, Source};

const CHUNK: usize = 1 << 20;

/// Item sizes of 1 KiB to 1 MiB adding up to about `bytes` (a fixed
/// pseudo-random sequence).
fn sizes(bytes: usize) -> Vec<u64> {
    let (mut state, mut total, mut out) = (0x9e37_79b9_7f4a_7c15u64, 0usize, Vec::new());
    while total < bytes {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        let size = 1024 + (state % (CHUNK as u64 - 1024 + 1)) as usize;
        let size = size.min(bytes - total).max(1);
        out.push(size as u64);
        total += size;
    }
    out
}

/// Data and offsets of items of `sizes`, each byte its item's index.
fn items(sizes: &[u64]) -> (Vec<u8>, Vec<u64>) {
    let mut offsets = vec![0u64];
    let mut data = Vec::with_capacity(sizes.iter().sum::<u64>() as usize);
    for (i, &s) in sizes.iter().enumerate() {
        data.resize(data.len() + s as usize, i as u8);
        offsets.push(data.len() as u64);
    }
    (data, offsets)
}

/// Median of `times`.
fn median(times: &mut [f64]) -> f64 {
    times.sort_by(f64::total_cmp);
    times[times.len() / 2]
}

fn main() {
    let Some(universe) = mpi::initialize() else {
        eprintln!("error: MPI did not initialise");
        std::process::exit(1);
    };
    let world = universe.world();
    if world.size() != 2 {
        eprintln!("error: run on 2 ranks (mpirun -np 2)");
        std::process::exit(2);
    }
    let rank = world.rank() as usize;
    let args: Vec<String> = std::env::args().collect();
    let mib: usize = args.get(1).and_then(|a| a.parse().ok()).unwrap_or(1024);
    let runs: usize = args.get(2).and_then(|a| a.parse().ok()).unwrap_or(5);
    let bytes = mib << 20;
    let sizes = sizes(bytes);
    let n = sizes.len() as u64;
    let options = Options::default();
    let (mut empty, mut full, mut plain) = (Vec::new(), Vec::new(), Vec::new());
    for _ in 0..runs {
        // Items to an empty rank: rank 0 gives all to rank 1.
        let (mut data, mut offsets) = match rank {
            0 => items(&sizes),
            _ => (Vec::new(), vec![0]),
        };
        world.barrier();
        let t = mpi::time();
        redistribute_items(&world, &mut data, &mut offsets, &[0, 0, n], &options)
            .unwrap_or_else(|e| panic!("to an empty rank: {e}"));
        world.barrier();
        empty.push(mpi::time() - t);
        drop((data, offsets));
        // Items to a full rank: rank 1 gives its items to rank 0, which holds
        // as many bytes already (items of its own, before them).
        let (mut data, mut offsets) = items(&sizes);
        let cuts = [0, 2 * n, 2 * n];
        world.barrier();
        let t = mpi::time();
        redistribute_items(&world, &mut data, &mut offsets, &cuts, &options)
            .unwrap_or_else(|e| panic!("to a full rank: {e}"));
        world.barrier();
        full.push(mpi::time() - t);
        drop((data, offsets));
        // The plain transfer of the same bytes into a new buffer.
        let data = match rank {
            0 => items(&sizes).0,
            _ => Vec::new(),
        };
        world.barrier();
        let t = mpi::time();
        if rank == 0 {
            for piece in data.chunks(CHUNK) {
                world.process_at_rank(1).send(piece);
            }
        } else {
            let mut fresh = vec![0u8; bytes];
            for piece in fresh.chunks_mut(CHUNK) {
                world.process_at_rank(0).receive_into(piece);
            }
            std::hint::black_box(&fresh);
        }
        world.barrier();
        plain.push(mpi::time() - t);
    }
    let peak = peak_resident_bytes().unwrap_or(0) as f64 / (1 << 20) as f64;
    let mut peaks = [0.0f64; 2];
    world.all_gather_into(&peak, &mut peaks[..]);
    if rank == 0 {
        let plain = median(&mut plain);
        let gib = bytes as f64 / (1u64 << 30) as f64;
        println!("{n} items of 1 KiB to 1 MiB, {mib} MiB, between 2 ranks; medians of {runs} runs");
        for (name, times) in [
            ("items to an empty rank", &mut empty),
            ("items to a full rank", &mut full),
        ] {
            let t = median(times);
            println!(
                "{name:<24} {t:>7.3} s {:>6.2} GiB/s  {:>4.0}% of plain",
                gib / t,
                100.0 * plain / t
            );
        }
        println!(
            "{:<24} {plain:>7.3} s {:>6.2} GiB/s",
            "plain, new buffer",
            gib / plain
        );
        println!(
            "peak resident memory: rank 0 {:.0} MiB, rank 1 {:.0} MiB (at most {} MiB held, {} MiB at rank 0 after the move to a full rank)",
            peaks[0],
            peaks[1],
            mib,
            2 * mib
        );
    }
}
