//! Throughput of large redistributions against a plain MPI point-to-point transfer
//! of the same bytes between the same two ranks, for several sizes.
//!
//! `mpirun -np 2 target/release/examples/throughput [MEBIBYTES,...] [CHUNK_KIB]`
//!
//! For each size (default 16, 64 and 256 MiB) rank 0 ends up sending that many
//! bytes to rank 1, in items of 1 KiB:
//! - `plain, warm buffer`: blocking sends of CHUNK_KIB KiB (default 1024) into a
//!   buffer allocated and touched before the timing;
//! - `plain, new buffer`: the same into a buffer allocated in the timed part, as
//!   any operation that leaves the data in new memory must (the first touch of
//!   fresh pages is a large part of the cost on some machines);
//! - `ring`: a ring redistribution giving all but one of rank 0's items to rank 1,
//!   in chunks of CHUNK_KIB KiB;
//! - `scatter`: a scatter from rank 1 (the root, last) sending rank 0 its share
//!   (MPI_Scatterv);
//! - `genblock`: a GEN_BLOCK schedule moving rank 0's block to rank 1, in chunks of
//!   CHUNK_KIB KiB.
//!
//! Each run of the three operations includes their checks (sizes agreed, the
//! order-aware checksum of every item on both sides, the collective agreement,
//! the commit). The five run in turn, 5 times, so that a busy machine slows them
//! alike; the best time of each counts, and a ratio is a plain transfer's time over
//! the operation's (100% = as fast as that plain transfer).

use hetbal::genblock::{plan, GenBlockInstance, Method};
use hetbal_mpi::{genblock, ring, scatter, RunError};
use mpi::traits::{Communicator, CommunicatorCollectives, Destination, Source};

const ITEM_BYTES: usize = 1024;
const RUNS: usize = 5;

/// Prints the error and ends the process (every rank fails alike: the operations
/// return their errors on every rank).
fn fail(message: &str) -> ! {
    eprintln!("error: {message}");
    std::process::exit(1);
}

/// Wall-clock time of `run`, between barriers.
fn timed<C: Communicator>(
    world: &C,
    run: impl FnOnce() -> Result<(), RunError>,
) -> Result<f64, RunError> {
    world.barrier();
    let t = mpi::time();
    run()?;
    world.barrier();
    Ok(mpi::time() - t)
}

/// Rank 0 sends `source` to rank 1 in chunks, received into `buffer`.
fn plain_transfer<C: Communicator>(world: &C, source: &[u8], buffer: &mut [u8], chunk: usize) {
    if world.rank() == 0 {
        for piece in source.chunks(chunk) {
            world.process_at_rank(1).send(piece);
        }
    } else {
        for piece in buffer.chunks_mut(chunk) {
            world.process_at_rank(0).receive_into(piece);
        }
    }
}

fn main() {
    let Some(universe) = mpi::initialize() else {
        eprintln!("error: MPI is already initialised");
        std::process::exit(2);
    };
    let world = universe.world();
    if world.size() != 2 {
        if world.rank() == 0 {
            eprintln!("error: run with mpirun -np 2");
        }
        std::process::exit(2);
    }
    let rank = world.rank() as usize;
    let mut args = std::env::args().skip(1);
    let sizes: Vec<usize> = match args.next() {
        None => vec![16, 64, 256],
        Some(a) => match a.split(',').map(str::parse).collect() {
            Ok(sizes) => sizes,
            Err(_) => fail(&format!(
                "MEBIBYTES: comma-separated whole numbers, not {a}"
            )),
        },
    };
    let chunk_kib: usize = match args.next().map(|a| a.parse()) {
        None => 1024,
        Some(Ok(k)) if k > 0 => k,
        Some(_) => fail("CHUNK_KIB: a positive whole number"),
    };
    let chunk = chunk_kib * 1024;
    if rank == 0 {
        println!("chunks of {chunk_kib} KiB, items of {ITEM_BYTES} bytes, best of {RUNS} runs");
        println!(
            "{:>6}  {:<20} {:>8} {:>11} {:>14} {:>13}",
            "MiB", "operation", "seconds", "throughput", "vs warm plain", "vs new plain"
        );
    }
    for mib in sizes {
        let moved = (mib * 1024 * 1024 / ITEM_BYTES) as u64;
        let bytes = moved as usize * ITEM_BYTES;
        let pattern = |count: u64| -> Vec<u8> {
            (0..count as usize * ITEM_BYTES)
                .map(|k| (k % 251) as u8)
                .collect()
        };
        let source = if rank == 0 {
            pattern(moved)
        } else {
            Vec::new()
        };
        let mut warm = vec![1u8; if rank == 1 { bytes } else { 0 }];
        // Ring: rank 0 holds moved + 1 items and gives moved of them to rank 1.
        let loads = [moved + 1, 1];
        let flows = [i128::from(moved), 0];
        let ring_options = ring::Options {
            chunk_bytes: chunk,
            ..ring::Options::default()
        };
        // Scatter: the root (rank 1, last) keeps one item and sends rank 0 the rest.
        let counts = [moved, 1];
        // GEN_BLOCK: blocks [moved + 1, 1] become [1, moved + 1].
        let (src, dst) = ([moved + 1, 1], [1, moved + 1]);
        let steps = match GenBlockInstance::new(&src, &dst, 0.0, 1.0) {
            Ok(instance) => plan(&instance, Method::Best).schedule.steps,
            Err(e) => fail(&e.to_string()),
        };
        let genblock_options = genblock::Options {
            chunk_bytes: chunk,
            ..genblock::Options::default()
        };
        // All in turn in every run, so that a busy machine slows them alike.
        let names = [
            "plain, warm buffer",
            "plain, new buffer",
            "ring",
            "scatter",
            "genblock",
        ];
        let mut times = [f64::INFINITY; 5];
        for _ in 0..RUNS {
            let mut record = |k: usize, t: Result<f64, RunError>| match t {
                Ok(t) => times[k] = times[k].min(t),
                Err(e) => fail(&e.to_string()),
            };
            record(
                0,
                timed(&world, || {
                    plain_transfer(&world, &source, &mut warm, chunk);
                    Ok(())
                }),
            );
            let mut fresh = Vec::new();
            record(
                1,
                timed(&world, || {
                    fresh = vec![0u8; if rank == 1 { bytes } else { 0 }];
                    plain_transfer(&world, &source, &mut fresh, chunk);
                    Ok(())
                }),
            );
            drop(fresh);
            let mut items = pattern(loads[rank]);
            record(
                2,
                timed(&world, || {
                    ring::redistribute(
                        &world,
                        &loads,
                        &flows,
                        ITEM_BYTES,
                        &mut items,
                        &ring_options,
                    )
                    .map(|_| ())
                }),
            );
            let mut items = pattern(if rank == 1 { moved + 1 } else { 0 });
            record(
                3,
                timed(&world, || {
                    let options = scatter::Options::default();
                    scatter::scatter_in_order(&world, &counts, ITEM_BYTES, &mut items, &options)
                        .map(|_| ())
                }),
            );
            let mut items = pattern(src[rank]);
            record(
                4,
                timed(&world, || {
                    genblock::run_steps(
                        &world,
                        &src,
                        &dst,
                        &steps,
                        ITEM_BYTES,
                        &mut items,
                        &genblock_options,
                    )
                    .map(|_| ())
                }),
            );
        }
        if rank == 0 {
            let gib = bytes as f64 / (1u64 << 30) as f64;
            for (k, (name, t)) in names.iter().zip(times).enumerate() {
                let (warm_ratio, new_ratio) = if k < 2 {
                    (String::new(), String::new())
                } else {
                    (
                        format!("{:.0}%", 100.0 * times[0] / t),
                        format!("{:.0}%", 100.0 * times[1] / t),
                    )
                };
                println!(
                    "{:>6}  {name:<20} {t:>8.3} {:>6.2} GiB/s {warm_ratio:>14} {new_ratio:>13}",
                    if k == 0 {
                        mib.to_string()
                    } else {
                        String::new()
                    },
                    gib / t
                );
            }
        }
    }
}
