//! The reference for `hetbal-mpi ring` and `hetbal-mpi genblock`: a plain MPI
//! transfer of the same bytes from rank 0 to rank 1, blocking sends of CHUNK_KIB
//! KiB (default 1024) into a buffer rank 1 allocates in the timed part, from
//! bytes rank 0 made just before, as the commands do. Prints the seconds between
//! two barriers (rank 0), as the commands' `measured_seconds`.
//!
//! `mpirun -np 2 target/release/examples/plain_transfer MEBIBYTES [CHUNK_KIB] [HELD_MIB]`
//!
//! With HELD_MIB, rank 1 holds that much data (made before the timing) while it
//! receives, as a rank that keeps its items in a redistribution does.
//!
//! `crates/hetbal-mpi/scripts/cli-throughput.sh` runs it beside the commands.

use mpi::traits::{Communicator, CommunicatorCollectives, Destination, Source};

/// Prints the error and ends the process with status 2 (every rank alike).
fn fail(message: &str) -> ! {
    eprintln!("error: {message}");
    std::process::exit(2);
}

fn main() {
    let Some(universe) = mpi::initialize() else {
        fail("MPI is already initialised");
    };
    let world = universe.world();
    if world.size() != 2 {
        fail("run with mpirun -np 2");
    }
    let mut args = std::env::args().skip(1);
    let mib: usize = match args.next().map(|a| a.parse()) {
        Some(Ok(m)) if m > 0 => m,
        _ => fail("MEBIBYTES: a positive whole number"),
    };
    let chunk = match args.next().map(|a| a.parse::<usize>()) {
        None => 1 << 20,
        Some(Ok(k)) if k > 0 => k * 1024,
        Some(_) => fail("CHUNK_KIB: a positive whole number"),
    };
    let held_mib = match args.next().map(|a| a.parse::<usize>()) {
        None => 0,
        Some(Ok(h)) => h,
        Some(_) => fail("HELD_MIB: a whole number"),
    };
    let bytes = mib << 20;
    let held: Vec<u8> = if world.rank() == 1 {
        vec![3u8; held_mib << 20]
    } else {
        Vec::new()
    };
    let data: Vec<u8> = if world.rank() == 0 {
        (0..bytes).map(|k| (k % 251) as u8).collect()
    } else {
        Vec::new()
    };
    world.barrier();
    let started = mpi::time();
    if world.rank() == 0 {
        for piece in data.chunks(chunk) {
            world.process_at_rank(1).send(piece);
        }
    } else {
        let mut fresh = vec![0u8; bytes];
        for piece in fresh.chunks_mut(chunk) {
            world.process_at_rank(0).receive_into(piece);
        }
    }
    world.barrier();
    if world.rank() == 0 {
        println!("{:.6}", mpi::time() - started);
    }
    std::hint::black_box(&held);
}
