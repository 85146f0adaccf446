//! Throughput of a large ring redistribution against a plain MPI transfer of the
//! same bytes between the same two ranks.
//!
//! `mpirun -np 2 target/release/examples/throughput [MEBIBYTES] [CHUNK_KIB]`
//!
//! Rank 0 holds every item and gives all but one to rank 1: the redistribution
//! moves MEBIBYTES MiB (default 512) in chunks of CHUNK_KIB KiB (default 1024), with
//! its checks (order-aware checksum, collective agreement, commit). The plain
//! transfer sends the same bytes with blocking sends of the same chunk size into a
//! preallocated buffer. Best of 5 runs each.

use hetbal_mpi::ring::{redistribute, Options};
use mpi::traits::{Communicator, CommunicatorCollectives, Destination, Source};

fn main() {
    let universe = mpi::initialize().expect("MPI");
    let world = universe.world();
    assert_eq!(world.size(), 2, "run with mpirun -np 2");
    let rank = world.rank();
    let mut args = std::env::args().skip(1);
    let mib: usize = args.next().map_or(512, |a| a.parse().expect("MEBIBYTES"));
    let chunk_kib: usize = args.next().map_or(1024, |a| a.parse().expect("CHUNK_KIB"));
    let item_bytes = 1024usize;
    let moved = (mib * 1024) as u64; // items of 1 KiB
    let loads = [moved + 1, 1];
    let flows = [moved as i128, 0];
    let chunk = chunk_kib * 1024;
    let mut best_ring = f64::INFINITY;
    let mut best_plain = f64::INFINITY;
    for _ in 0..5 {
        let mut items: Vec<u8> = (0..loads[rank as usize] as usize * item_bytes)
            .map(|k| k as u8)
            .collect();
        world.barrier();
        let t = mpi::time();
        let options = Options {
            chunk_bytes: chunk,
            ..Options::default()
        };
        redistribute(&world, &loads, &flows, item_bytes, &mut items, &options)
            .expect("redistribution");
        world.barrier();
        best_ring = best_ring.min(mpi::time() - t);

        let bytes = moved as usize * item_bytes;
        let mut buffer = vec![0u8; if rank == 0 { 0 } else { bytes }];
        let source: Vec<u8> = if rank == 0 {
            (0..bytes).map(|k| k as u8).collect()
        } else {
            Vec::new()
        };
        world.barrier();
        let t = mpi::time();
        if rank == 0 {
            for piece in source.chunks(chunk) {
                world.process_at_rank(1).send(piece);
            }
        } else {
            for piece in buffer.chunks_mut(chunk) {
                world.process_at_rank(0).receive_into(piece);
            }
        }
        world.barrier();
        best_plain = best_plain.min(mpi::time() - t);
    }
    if rank == 0 {
        let gib = (moved as f64 * item_bytes as f64) / (1u64 << 30) as f64;
        println!(
            "{mib} MiB in chunks of {chunk_kib} KiB: redistribution {:.3} s ({:.2} GiB/s), plain MPI {:.3} s ({:.2} GiB/s): {:.0}%",
            best_ring,
            gib / best_ring,
            best_plain,
            gib / best_plain,
            100.0 * best_plain / best_ring
        );
    }
}
