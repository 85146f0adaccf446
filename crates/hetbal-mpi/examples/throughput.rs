//! Throughput of large redistributions against a plain MPI point-to-point transfer
//! of the same bytes between the same two ranks, for several sizes.
//!
//! `mpirun -np 2 target/release/examples/throughput [MEBIBYTES,...] [CHUNK_KIB] [RUNS]`
//!
//! `mpirun -np N target/release/examples/throughput holding [HELD_MIB] [MOVED_MIB] [RUNS]`
//! measures instead ranks that already hold data (default 1024 MiB) receiving
//! more (default 1024 MiB; N = 2), or, on N > 2 ranks, every rank keeping and
//! receiving at once: ring, GEN_BLOCK and scatter into a `Vec` and an
//! [`ItemBuffer`](hetbal_mpi::buffer::ItemBuffer), against plain transfers by
//! receivers that hold as much (the module `throughput/holding.rs` says how).
//!
//! For each size (default 64, 256 and 1024 MiB) that many bytes move between rank 0
//! and rank 1, in items of 1 KiB, in two parts.
//!
//! Steady state, as an iterative application redistributes again and again:
//! - `plain, warm buffers`: blocking sends of CHUNK_KIB KiB (default 1024) from one
//!   rank to the other, into a buffer allocated and touched before the timing,
//!   alternately from rank 0 to rank 1 and back;
//! - `ring, reused memory`: a ring redistribution giving all but one of rank
//!   0's items to rank 1, then one giving them back, alternately, in chunks of
//!   CHUNK_KIB KiB, each rank keeping its vector throughout (it keeps its
//!   capacity: the items received go to memory already touched); two round
//!   trips warm up before the timing.
//!
//! Cold, as a single redistribution pays:
//! - `plain, new buffer`: rank 0 to rank 1 into a buffer allocated in the timed
//!   part (the first touch of fresh pages is a large part of the cost on some
//!   machines), from items rank 0 made just before, as the operations below do
//!   (on virtual machines, memory freed and taken again can cost more than
//!   memory kept: each cold operation allocates alike);
//! - `ring, new memory`: the ring redistribution from rank 0 to rank 1, rank 1
//!   starting from a vector of its one item (the items received go to fresh
//!   pages);
//! - `scatter`: a scatter from rank 1 (the root, last) sending rank 0 its share
//!   (MPI_Scatterv);
//! - `genblock`: a GEN_BLOCK schedule moving rank 0's block to rank 1, in chunks of
//!   CHUNK_KIB KiB.
//!
//! Each redistribution's time includes its checks (sizes agreed, the order-aware
//! checksum, the collective agreement, the commit). The operations of each part
//! run in turn, RUNS times (default 5), so that a busy machine slows them alike
//! (the steady state's buffers are freed before the cold part); the best and
//! the median time of each are shown, and a ratio is the plain transfer's time over
//! the operation's (100% = as fast as the plain transfer), best over best and
//! median over median. The line below the steady ring gives the share of its time
//! spent until its last message (the checksum is computed meanwhile, as the items
//! leave and arrive), and the rest: the collective agreement and the commit.

use hetbal::genblock::{plan, GenBlockInstance, Method};
use hetbal_mpi::protocol::MAX_MESSAGE_BYTES;
use hetbal_mpi::{genblock, ring, scatter, Options, RunError};
use mpi::collective::SystemOperation;
use mpi::traits::{Communicator, CommunicatorCollectives, Destination, Source};

#[path = "throughput/holding.rs"]
mod holding;

const ITEM_BYTES: usize = 1024;

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

/// Rank `from` sends its `buffer` to the other rank in chunks, received into that
/// rank's `buffer`.
fn plain_transfer<C: Communicator>(world: &C, from: i32, buffer: &mut [u8], chunk: usize) {
    if world.rank() == from {
        for piece in buffer.chunks(chunk) {
            world.process_at_rank(1 - from).send(piece);
        }
    } else {
        for piece in buffer.chunks_mut(chunk) {
            world.process_at_rank(from).receive_into(piece);
        }
    }
}

/// Times of one operation over the runs.
#[derive(Default)]
struct Times(Vec<f64>);

impl Times {
    fn record(&mut self, t: Result<f64, RunError>) {
        match t {
            Ok(t) => self.0.push(t),
            Err(e) => fail(&e.to_string()),
        }
    }
    fn best(&self) -> f64 {
        self.0.iter().copied().fold(f64::INFINITY, f64::min)
    }
    fn median(&self) -> f64 {
        let mut v = self.0.clone();
        v.sort_by(f64::total_cmp);
        match v.len() {
            0 => f64::NAN,
            n if n % 2 == 1 => v[n / 2],
            n => (v[n / 2 - 1] + v[n / 2]) / 2.0,
        }
    }
}

/// Prints one line of the table (rank 0).
fn line(mib: Option<usize>, name: &str, times: &Times, reference: Option<&Times>, bytes: usize) {
    let gib = bytes as f64 / (1u64 << 30) as f64;
    let ratio = |r: &Times| {
        format!(
            "{:>4.0}% {:>4.0}%",
            100.0 * r.best() / times.best(),
            100.0 * r.median() / times.median()
        )
    };
    println!(
        "{:>6}  {name:<22} {:>7.3} {:>7.3} {:>6.2} GiB/s  {}",
        mib.map_or(String::new(), |m| m.to_string()),
        times.best(),
        times.median(),
        gib / times.best(),
        reference.map_or(String::new(), ratio),
    );
}

fn main() {
    let Some(universe) = mpi::initialize() else {
        eprintln!("error: MPI is already initialised");
        std::process::exit(2);
    };
    let world = universe.world();
    let args: Vec<String> = std::env::args().skip(1).collect();
    if args.first().map(String::as_str) == Some("holding") {
        let arg = |k: usize, default: usize| match args.get(k).map(|a| a.parse()) {
            None => default,
            Some(Ok(v)) if v > 0 => v,
            _ => fail("HELD_MIB, MOVED_MIB and RUNS are positive whole numbers"),
        };
        if world.size() < 2 {
            fail("run with mpirun -np 2 or more");
        }
        holding::run(&world, arg(1, 1024), arg(2, 1024), arg(3, 5));
        return;
    }
    if world.size() != 2 {
        if world.rank() == 0 {
            eprintln!("error: run with mpirun -np 2");
        }
        std::process::exit(2);
    }
    let rank = world.rank() as usize;
    let mut args = args.into_iter();
    let sizes: Vec<usize> = match args.next() {
        None => vec![64, 256, 1024],
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
    let runs: usize = match args.next().map(|a| a.parse()) {
        None => 5,
        Some(Ok(k)) if k > 0 => k,
        Some(_) => fail("RUNS: a positive whole number"),
    };
    let chunk = chunk_kib * 1024;
    if rank == 0 {
        println!(
            "chunks of {chunk_kib} KiB, items of {ITEM_BYTES} bytes, {runs} runs (steady state: \
             {} timed moves each way)",
            runs
        );
        println!(
            "{:>6}  {:<22} {:>7} {:>7} {:>12}  {:>11}",
            "MiB", "operation", "best s", "median", "best rate", "vs plain: best median"
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
        let options = Options {
            chunk_bytes: chunk,
            ..Options::default()
        };
        // Ring: rank 0 holds moved + 1 items and gives moved of them to rank 1
        // (there), then rank 1 gives them back (back).
        let (there_loads, there_flows) = ([moved + 1, 1], [i128::from(moved), 0]);
        let (back_loads, back_flows) = ([1, moved + 1], [0, i128::from(moved)]);
        let ring_move = |items: &mut Vec<u8>, there: bool| {
            let (loads, flows) = if there {
                (&there_loads, &there_flows)
            } else {
                (&back_loads, &back_flows)
            };
            ring::redistribute_bytes(&world, loads, flows, ITEM_BYTES, items, &options)
        };
        // Scatter: the root (rank 1, last) keeps one item and sends rank 0 the rest.
        let counts = [moved, 1];
        // GEN_BLOCK: blocks [moved + 1, 1] become [1, moved + 1].
        let src = [moved + 1, 1];
        let blocks = match GenBlockInstance::new(&src, &[1, moved + 1], 0.0, 1.0) {
            Ok(instance) => instance,
            Err(e) => fail(&e.to_string()),
        };
        let schedule = plan(&blocks, Method::Best).schedule;

        // Steady state: buffers kept from run to run, warmed up.
        let mut plain_buffer = pattern(moved); // touched on both ranks
        let mut items = pattern(there_loads[rank]);
        for _ in 0..2 {
            for there in [true, false] {
                if let Err(e) = ring_move(&mut items, there) {
                    fail(&e.to_string());
                }
            }
        }
        let mut plain_warm = Times::default();
        let mut ring_warm = Times::default();
        let (mut transfer_share, mut transfer_runs) = (0.0, 0);
        for _ in 0..runs {
            for there in [true, false] {
                let from = if there { 0 } else { 1 };
                plain_warm.record(timed(&world, || {
                    plain_transfer(&world, from, &mut plain_buffer, chunk);
                    Ok(())
                }));
                let mut report = None;
                ring_warm.record(timed(&world, || {
                    report = Some(ring_move(&mut items, there)?);
                    Ok(())
                }));
                if let Some(r) = report {
                    let (mut transfer, mut total) = (0.0, 0.0);
                    world.all_reduce_into(
                        &r.transfer_seconds,
                        &mut transfer,
                        SystemOperation::max(),
                    );
                    world.all_reduce_into(&r.seconds, &mut total, SystemOperation::max());
                    transfer_share += transfer / total;
                    transfer_runs += 1;
                }
            }
        }
        // Cold: everything allocated afresh (the steady state's memory freed first,
        // so that it does not weigh on the page faults).
        drop(items);
        drop(plain_buffer);
        let mut plain_new = Times::default();
        let mut ring_new = Times::default();
        let mut scatter_times = Times::default();
        let mut genblock_times = Times::default();
        for _ in 0..runs {
            // Rank 0 sends items made just before, as for the operations below.
            let mut fresh = if rank == 0 {
                pattern(moved)
            } else {
                Vec::new()
            };
            plain_new.record(timed(&world, || {
                if rank == 0 {
                    plain_transfer(&world, 0, &mut fresh, chunk);
                } else {
                    fresh = vec![0u8; bytes];
                    plain_transfer(&world, 0, &mut fresh, chunk);
                }
                Ok(())
            }));
            drop(fresh);
            let mut cold = pattern(there_loads[rank]);
            ring_new.record(timed(&world, || {
                ring::redistribute_bytes(
                    &world,
                    &there_loads,
                    &there_flows,
                    ITEM_BYTES,
                    &mut cold,
                    &options,
                )
                .map(|_| ())
            }));
            // Each operation's memory is freed before the next one (a shadowed
            // vector would live on, and weigh on the next one's page faults).
            drop(cold);
            let mut cold = pattern(if rank == 1 { moved + 1 } else { 0 });
            scatter_times.record(timed(&world, || {
                // All in one message: one MPI_Scatterv.
                let options = Options {
                    chunk_bytes: MAX_MESSAGE_BYTES,
                    ..Options::default()
                };
                scatter::scatter_in_order_bytes(&world, &counts, ITEM_BYTES, &mut cold, &options)
                    .map(|_| ())
            }));
            drop(cold);
            let mut cold = pattern(src[rank]);
            genblock_times.record(timed(&world, || {
                genblock::run_steps_bytes(
                    &world, &blocks, &schedule, ITEM_BYTES, &mut cold, &options,
                )
                .map(|_| ())
            }));
            drop(cold);
        }
        if rank == 0 {
            line(Some(mib), "plain, warm buffers", &plain_warm, None, bytes);
            line(
                None,
                "ring, reused memory",
                &ring_warm,
                Some(&plain_warm),
                bytes,
            );
            let share = 100.0 * transfer_share / transfer_runs as f64;
            println!(
                "{:>6}  {:<22} {share:.0}% until the last message, {:.0}% agreeing and committing",
                "",
                "",
                100.0 - share
            );
            line(None, "plain, new buffer", &plain_new, None, bytes);
            line(None, "ring, new memory", &ring_new, Some(&plain_new), bytes);
            line(None, "scatter", &scatter_times, Some(&plain_new), bytes);
            line(None, "genblock", &genblock_times, Some(&plain_new), bytes);
        }
    }
}
