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
//! On more than 2 ranks, a chain: every rank but the last sends MEBIBYTES MiB to
//! the next, and every rank but the first receives as much from the previous one
//! into a new buffer, all at once (`MPI_Sendrecv` of CHUNK_KIB KiB at a time), each
//! rank holding HELD_MIB MiB: the reference for a ring redistribution forwarding
//! items along the same ranks.
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
    let (rank, size) = (world.rank(), world.size());
    if size < 2 {
        fail("run with mpirun -np 2 or more");
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
    let (sends, receives) = (rank + 1 < size, rank > 0);
    let held: Vec<u8> = if receives {
        vec![3u8; held_mib << 20]
    } else {
        Vec::new()
    };
    let data: Vec<u8> = if sends {
        (0..bytes).map(|k| (k % 251) as u8).collect()
    } else {
        Vec::new()
    };
    world.barrier();
    let started = mpi::time();
    let (next, previous) = (
        world.process_at_rank((rank + 1) % size),
        world.process_at_rank((rank + size - 1) % size),
    );
    let mut fresh = if receives {
        vec![0u8; bytes]
    } else {
        Vec::new()
    };
    match (sends, receives) {
        (true, false) => data.chunks(chunk).for_each(|piece| next.send(piece)),
        (false, true) => (fresh.chunks_mut(chunk)).for_each(|piece| {
            previous.receive_into(piece);
        }),
        _ => {
            for (piece, into) in data.chunks(chunk).zip(fresh.chunks_mut(chunk)) {
                mpi::point_to_point::send_receive_into(piece, &next, into, &previous);
            }
        }
    }
    world.barrier();
    std::hint::black_box(&fresh);
    if rank == 0 {
        println!("{:.6}", mpi::time() - started);
    }
    std::hint::black_box(&held);
}
