//! A 1-D Jacobi relaxation on a periodic array split over the ranks of a ring, with
//! ranks artificially slowed by different factors: once with the static equal
//! split, once with hetbal's balancer deciding every K iterations whether moving
//! cells pays. Prints both run times, the speed-up, and checks that both runs
//! computed exactly the same values (the redistribution keeps the cells' order).
//!
//! `mpirun -np 4 hetbal-mpi jacobi [--cells C] [--iterations I] [--every K] [--factors F]`
//!
//! This file is also the example of the balancer API ([`Balancer::rebalance_with`],
//! with one [`Workspace`] for the whole run).
//! FACTORS is a comma-separated slowdown per rank (default 1,2,3,...): besides the
//! real computation, a rank with factor f waits f * 200 ns per cell, as if its
//! processor were that slow (waiting rather than spinning keeps the emulation
//! faithful when ranks share cores).

use std::hint::black_box;
use std::time::{Duration, Instant};

use mpi::collective::SystemOperation;
use mpi::point_to_point::send_receive;
use mpi::traits::{Communicator, CommunicatorCollectives};

use hetbal_mpi::balancer::Balancer;
use hetbal_mpi::checksum::range_sum;
use hetbal_mpi::workspace::Workspace;
use hetbal_mpi::Options;

/// One relaxation step of the cells with the neighbours' border cells.
fn relax(cells: &mut Vec<f64>, left: f64, right: f64, scratch: &mut Vec<f64>) {
    scratch.clear();
    let n = cells.len();
    for i in 0..n {
        let l = if i == 0 { left } else { cells[i - 1] };
        let r = if i + 1 == n { right } else { cells[i + 1] };
        scratch.push(black_box((l + cells[i] + r) / 3.0));
    }
    std::mem::swap(cells, scratch);
}

fn to_bytes(cells: &[f64]) -> Vec<u8> {
    cells.iter().flat_map(|c| c.to_le_bytes()).collect()
}

fn from_bytes(bytes: &[u8]) -> Vec<f64> {
    bytes
        .chunks_exact(8)
        .map(|b| f64::from_le_bytes(b.try_into().expect("8 bytes")))
        .collect()
}

/// Runs the relaxation; returns (seconds, redistributions, global checksum).
fn run<C: Communicator>(
    world: &C,
    total: u64,
    iterations: u64,
    every: u64,
    factor: f64,
    balancer: Option<&Balancer>,
) -> (f64, u64, u64) {
    let n = world.size() as u64;
    let rank = world.rank() as u64;
    // Equal split, then the cells' initial values from their global positions.
    let share = |r: u64| total / n + u64::from(r < total % n);
    let mut origin = 0u64; // global position of rank 0's first cell
    let mut first: u64 = (0..rank).map(share).sum();
    let mut cells: Vec<f64> = (first..first + share(rank))
        .map(|g| ((g % 97) as f64).sin())
        .collect();
    let (succ, pred) = (
        world.process_at_rank(((rank + 1) % n) as i32),
        world.process_at_rank(((rank + n - 1) % n) as i32),
    );
    let mut scratch = Vec::new();
    // Staging memory kept from one redistribution to the next.
    let mut workspace = Workspace::new();
    let mut busy = 0.0f64; // this rank's computing time since the last decision
    let mut moves = 0;
    world.barrier();
    let started = mpi::time();
    for iteration in 1..=iterations {
        // Borders: my last cell to the successor, my first to the predecessor.
        let (left, _) = send_receive::<f64, f64, _, _>(cells.last().expect("a cell"), &succ, &pred);
        let (right, _) = send_receive::<f64, f64, _, _>(&cells[0], &pred, &succ);
        let t = Instant::now();
        relax(&mut cells, left, right, &mut scratch);
        let emulated = Duration::from_secs_f64(cells.len() as f64 * factor * 200e-9);
        if let Some(rest) = emulated.checked_sub(t.elapsed()) {
            std::thread::sleep(rest);
        }
        busy += t.elapsed().as_secs_f64();
        if let Some(b) = balancer {
            if iteration % every == 0 && iteration < iterations {
                let mut bytes = to_bytes(&cells);
                let decision = b
                    .rebalance_with(
                        world,
                        &mut bytes,
                        busy / every as f64,
                        iterations - iteration,
                        &mut workspace,
                    )
                    .expect("rebalancing");
                if decision.redistribute {
                    moves += 1;
                    cells = from_bytes(&bytes);
                    // The order is kept on the ring; rank 0's first cell moves by
                    // the flow over the link from the last rank to rank 0.
                    origin = (i128::from(origin) - decision.flows[n as usize - 1])
                        .rem_euclid(i128::from(total)) as u64;
                    let before: u64 = decision.targets[..rank as usize].iter().sum();
                    first = (origin + before) % total;
                }
                // The bytes were a copy of the cells: their buffer can stage the
                // next redistribution.
                workspace.recycle(bytes);
                busy = 0.0;
            }
        }
    }
    world.barrier();
    let seconds = mpi::time() - started;
    let local = range_sum(u128::from(first), u128::from(total), 8, &to_bytes(&cells));
    let mut global = 0u64;
    world.all_reduce_into(&local, &mut global, SystemOperation::sum());
    (seconds, moves, global)
}

/// The command's arguments.
#[derive(clap::Args)]
pub struct JacobiArgs {
    /// Cells of the periodic array.
    #[arg(long, default_value_t = 400_000)]
    cells: u64,
    /// Iterations of each run.
    #[arg(long, default_value_t = 60)]
    iterations: u64,
    /// Let the balancer decide every K iterations.
    #[arg(long, default_value_t = 10)]
    every: u64,
    /// Slowdown of each rank, comma-separated (default 1,2,3,...).
    #[arg(long, value_name = "F0,F1,...")]
    factors: Option<String>,
}

/// Runs both versions and prints the comparison on rank 0; returns false when the
/// results differ or the arguments are wrong.
pub fn run_jacobi<C: Communicator>(world: &C, args: &JacobiArgs) -> Result<bool, String> {
    let n = world.size() as usize;
    let factors: Vec<f64> = match &args.factors {
        None => (1..=n).map(|f| f as f64).collect(),
        Some(list) => list
            .split(',')
            .map(|f| f.trim().parse::<f64>().ok().filter(|f| *f >= 1.0))
            .collect::<Option<Vec<f64>>>()
            .ok_or_else(|| format!("--factors {list}: give numbers >= 1, comma-separated"))?,
    };
    if factors.len() != n {
        return Err(format!(
            "--factors gives {} values for {n} ranks",
            factors.len()
        ));
    }
    if args.cells < n as u64 || args.every == 0 {
        return Err(format!(
            "--cells must be at least the {n} ranks and --every at least 1"
        ));
    }
    let (cells, iterations, every) = (args.cells, args.iterations, args.every);
    let factor = factors[world.rank() as usize];
    let balancer = Balancer {
        c_succ: vec![2e-8; n], // shared memory: about 8 bytes per 20 ns
        c_pred: Some(vec![2e-8; n]),
        item_bytes: 8,
        options: Options::default(),
    };
    let (static_time, _, static_sum) = run(world, cells, iterations, every, factor, None);
    let (balanced_time, moves, balanced_sum) =
        run(world, cells, iterations, every, factor, Some(&balancer));
    if world.rank() == 0 {
        println!(
            "jacobi: {cells} cells, {iterations} iterations on {n} ranks slowed by {factors:?}"
        );
        println!("static equal split  {static_time:.3} s");
        println!(
            "hetbal balancer     {balanced_time:.3} s ({moves} redistributions, decided every {every} iterations)"
        );
        println!("speed-up            {:.2}x", static_time / balanced_time);
        println!(
            "same results        {}",
            if static_sum == balanced_sum {
                "yes (bit for bit, in order)"
            } else {
                "NO"
            }
        );
    }
    Ok(static_sum == balanced_sum)
}
