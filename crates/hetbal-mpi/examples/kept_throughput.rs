//! A rank that already holds data receives more in front of it: the ring
//! redistribution into a `Vec` (the kept items shift once) and into an
//! [`ItemBuffer`] (they never move), against a plain MPI transfer of the same
//! bytes into a new buffer (by a rank 1 that holds nothing, and by one that
//! holds its data, as in the redistributions), alternated run by run; and the
//! machine's memory bandwidth (a `memcpy` of 1 GiB into a buffer touched
//! before).
//!
//! `mpirun -np 2 target/release/examples/kept_throughput [HELD_MIB] [MOVED_MIB] [RUNS]`
//!
//! Rank 0 holds MOVED_MIB + 1 MiB and sends MOVED_MIB MiB to rank 1, which holds
//! HELD_MIB MiB (default 1024 and 1024), in items of 1 MiB, chunks of 1 MiB;
//! RUNS (default 5) runs of each; prints each one's median seconds between
//! barriers (checks included) and its ratio to the plain transfer's.

use hetbal_mpi::buffer::{ItemBuffer, ItemStorage};

use hetbal_mpi::Options;
use mpi::traits::{Communicator, CommunicatorCollectives, Destination, Source};

type Item = [u8; 1 << 20];

fn fail(message: &str) -> ! {
    eprintln!("error: {message}");
    std::process::exit(2);
}

fn arg(args: &[String], k: usize, default: usize) -> usize {
    match args.get(k).map(|a| a.parse()) {
        None => default,
        Some(Ok(v)) if v > 0 => v,
        _ => fail("HELD_MIB, MOVED_MIB and RUNS are positive whole numbers"),
    }
}

/// Seconds between two barriers of `work` (rank 0's clock).
fn timed<C: Communicator>(world: &C, work: impl FnOnce()) -> f64 {
    world.barrier();
    let started = mpi::time();
    work();
    world.barrier();
    mpi::time() - started
}

/// `count` items of 1 MiB from item `first` on: bytes that say where they are.
fn fill<S: ItemStorage<u8> + Extend>(storage: &mut S, first: usize, count: usize) {
    for k in first..first + count {
        storage.push_item(&[(k % 251) as u8; 1 << 20]);
    }
}

/// What `fill` needs of a storage.
trait Extend {
    fn push_item(&mut self, item: &[u8]);
}

impl Extend for Vec<u8> {
    fn push_item(&mut self, item: &[u8]) {
        self.extend_from_slice(item);
    }
}

impl Extend for ItemBuffer<u8> {
    fn push_item(&mut self, item: &[u8]) {
        self.extend_from_slice(item)
            .unwrap_or_else(|e| fail(&e.to_string()));
    }
}

fn main() {
    let Some(universe) = mpi::initialize() else {
        fail("MPI is already initialised");
    };
    let world = universe.world();
    if world.size() != 2 {
        fail("run with mpirun -np 2");
    }
    let args: Vec<String> = std::env::args().skip(1).collect();
    let (held, moved, runs) = (arg(&args, 0, 1024), arg(&args, 1, 1024), arg(&args, 2, 5));
    let rank = world.rank() as usize;
    let loads = [moved as u64 + 1, held as u64];
    let flows = [moved as i128, 0];
    let options = Options::default();
    let item_bytes = std::mem::size_of::<Item>();
    let mut times: [Vec<f64>; 4] = Default::default();
    for _ in 0..runs {
        // Plain: the same bytes into a new buffer, rank 1 holding nothing, then
        // holding its data (as it does in the redistributions).
        let data: Vec<u8> = if rank == 0 {
            vec![7u8; moved << 20]
        } else {
            Vec::new()
        };
        let plain = |world: &mpi::topology::SimpleCommunicator| {
            if rank == 0 {
                for piece in data.chunks(1 << 20) {
                    world.process_at_rank(1).send(piece);
                }
            } else {
                let mut fresh = vec![0u8; moved << 20];
                for piece in fresh.chunks_mut(1 << 20) {
                    world.process_at_rank(0).receive_into(piece);
                }
            }
        };
        times[0].push(timed(&world, || plain(&world)));
        let mut held_data = Vec::new();
        if rank == 1 {
            fill(&mut held_data, moved + 1, held);
        }
        times[3].push(timed(&world, || plain(&world)));
        drop(data);
        drop(held_data);
        // Into a Vec, then into an item buffer.
        let first = if rank == 0 { 0 } else { moved + 1 };
        let mut vec = Vec::new();
        fill(&mut vec, first, loads[rank] as usize);
        times[1].push(timed(&world, || {
            hetbal_mpi::ring::redistribute_bytes(
                &world, &loads, &flows, item_bytes, &mut vec, &options,
            )
            .unwrap_or_else(|e| fail(&e.to_string()));
        }));
        drop(vec);
        let mut buffer = ItemBuffer::new().unwrap_or_else(|e| fail(&e.to_string()));
        fill(&mut buffer, first, loads[rank] as usize);
        let before = buffer.as_ptr() as usize + (buffer.len() - 1);
        times[2].push(timed(&world, || {
            hetbal_mpi::ring::redistribute_bytes(
                &world,
                &loads,
                &flows,
                item_bytes,
                &mut buffer,
                &options,
            )
            .unwrap_or_else(|e| fail(&e.to_string()));
        }));
        if rank == 1 && buffer.as_ptr() as usize + (buffer.len() - 1) != before {
            fail("the item buffer's last kept byte moved");
        }
    }
    // The machine's bandwidth: a memcpy of 1 GiB into memory touched before.
    let source = vec![1u8; 1 << 30];
    let mut target = vec![2u8; 1 << 30];
    target.fill(3); // touched
    let copy = {
        let started = std::time::Instant::now();
        target.copy_from_slice(&source);
        started.elapsed().as_secs_f64()
    };
    std::hint::black_box(&target);
    if rank == 0 {
        let median = |v: &mut Vec<f64>| {
            v.sort_by(f64::total_cmp);
            v[v.len() / 2]
        };
        let plain = median(&mut times[0]);
        println!(
            "rank 1 holds {held} MiB and receives {moved} MiB in front, {runs} runs each (median seconds); memcpy of 1 GiB: {copy:.3} s ({:.1} GB/s)",
            1.073741824 / copy
        );
        let holding = median(&mut times[3]);
        for (name, t) in [
            "plain MPI, new buffer",
            "plain, rank 1 holding",
            "ring into a Vec",
            "ring into an ItemBuffer",
        ]
        .iter()
        .zip([0, 3, 1, 2])
        {
            let t = &mut times[t];
            let m = median(t);
            let all: Vec<String> = t.iter().map(|x| format!("{x:.3}")).collect();
            println!(
                "{name:<25} {m:.3} s  {:4.0}% of plain, {:4.0}% of plain holding   [{}]",
                100.0 * plain / m,
                100.0 * holding / m,
                all.join(" ")
            );
        }
    }
}
