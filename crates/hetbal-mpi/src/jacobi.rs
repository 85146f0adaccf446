//! A 1-D Jacobi relaxation on a periodic array split over the ranks of a ring, with
//! ranks artificially slowed by different factors: once with the static equal
//! split, once with hetbal's balancer deciding after every K iterations whether
//! moving cells pays (adaptive policy by default). Prints both run times, the
//! speed-up, the decisions that moved cells (iteration, predicted gain, cost),
//! and checks that both runs computed exactly the same values (the
//! redistribution keeps the cells' order).
//!
//! `mpirun -np 4 hetbal-mpi jacobi [--cells C] [--iterations I] [--every K]
//! [--factors F] [--policy P] [--timing compute|wall] [--link-seconds S]`
//!
//! The balancer measures the ring's links itself (unless `--link-seconds` gives
//! them) and decides with the adaptive policy by default.
//!
//! This file is also the example of the balancer API ([`Balancer::rebalance`] on
//! the cells themselves, a `Vec<f64>`, and a [`ComputeTimer`] around the compute
//! phase). `--timing wall` reports whole iterations instead, as a timer around
//! the loop's body would (from the top of the loop to the top of the next
//! iteration, halo exchanges and the balancer's own collective included: the
//! decision after K iterations gets the K before, and the first decision is
//! skipped), to show why that is wrong: every rank then reports the slowest
//! rank's time and nothing moves.
//! FACTORS is a comma-separated slowdown per rank (default 1,2,3,...): besides the
//! real computation, a rank with factor f waits f * 200 ns per cell, as if its
//! processor were that slow (waiting rather than spinning keeps the emulation
//! faithful when ranks share cores).

use std::hint::black_box;
use std::time::{Duration, Instant};

use mpi::collective::SystemOperation;
use mpi::point_to_point::send_receive;
use mpi::traits::{Communicator, CommunicatorCollectives};

use hetbal::iterative::Policy;
use hetbal_mpi::balancer::{Balancer, ComputeTimer, DecideError, Decision};
use hetbal_mpi::checksum::{range_sum, Checksum};

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

/// What to report to the balancer.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Timing {
    /// The compute phase only (right).
    Compute,
    /// The whole iteration, halo exchange included (wrong: nothing moves).
    Wall,
}

/// Runs the relaxation; returns (seconds, the decisions that moved cells with
/// the iterations after which they came, cells per rank at the end, global
/// checksum).
fn run<C: Communicator>(
    world: &C,
    total: u64,
    iterations: u64,
    every: u64,
    factor: f64,
    balancing: Option<(&mut Balancer, Timing)>,
) -> (f64, Vec<(u64, Decision)>, Vec<u64>, Checksum) {
    let n = world.size() as u64;
    let rank = world.rank() as u64;
    // Equal split, then the cells' initial values from their global positions.
    let share = |r: u64| total / n + u64::from(r < total % n);
    let mut first: u64 = (0..rank).map(share).sum();
    let mut cells: Vec<f64> = (first..first + share(rank))
        .map(|g| ((g % 97) as f64).sin())
        .collect();
    let (succ, pred) = (
        world.process_at_rank(((rank + 1) % n) as i32),
        world.process_at_rank(((rank + n - 1) % n) as i32),
    );
    let mut scratch = Vec::new();
    let mut timer = ComputeTimer::new();
    // Wall mode: the top of the loop after the last decision, and the whole
    // iterations of the window before it (none before the first decision).
    let (mut window_start, mut last_window) = (Instant::now(), None::<f64>);
    let mut moves = Vec::new();
    let mut balancing = balancing;
    world.barrier();
    let started = mpi::time();
    for iteration in 1..=iterations {
        if iteration % every == 1 % every {
            // The top of the loop after a decision (or the start).
            if iteration > 1 {
                last_window = Some(window_start.elapsed().as_secs_f64());
            }
            window_start = Instant::now();
        }
        // ANCHOR: iteration
        // Borders: my last cell to the successor, my first to the predecessor.
        let (left, _) = send_receive::<f64, f64, _, _>(cells.last().expect("a cell"), &succ, &pred);
        let (right, _) = send_receive::<f64, f64, _, _>(&cells[0], &pred, &succ);
        timer.time(|| {
            let t = Instant::now();
            relax(&mut cells, left, right, &mut scratch);
            let emulated = Duration::from_secs_f64(cells.len() as f64 * factor * 200e-9);
            if let Some(rest) = emulated.checked_sub(t.elapsed()) {
                std::thread::sleep(rest);
            }
        });
        // ANCHOR_END: iteration
        let Some((balancer, timing)) = balancing.as_mut() else {
            continue;
        };
        if iteration % every != 0 || iteration == iterations {
            continue;
        }
        // The mean time of an iteration: compute time since the last decision,
        // or whole iterations of the window before it.
        let seconds = match timing {
            Timing::Compute => timer.take(),
            Timing::Wall => match last_window {
                Some(seconds) => seconds,
                None => {
                    // No whole window yet: no decision, but the ranks meet as
                    // a decision's collective makes them.
                    world.barrier();
                    continue;
                }
            },
        } / every as f64;
        // ANCHOR: rebalance
        let decision = balancer
            .rebalance(world, &mut cells, seconds, (iterations - iteration) / every)
            .expect("rebalancing");
        if decision.redistribute {
            first = decision.firsts[rank as usize];
            moves.push((iteration, decision));
        }
        // ANCHOR_END: rebalance
    }
    world.barrier();
    let seconds = mpi::time() - started;
    let mut counts = vec![0u64; n as usize];
    world.all_gather_into(&(cells.len() as u64), &mut counts[..]);
    let local = range_sum(
        u128::from(first),
        u128::from(total),
        8,
        bytemuck::cast_slice(&cells),
    );
    let mut global = [0u64; 2];
    world.all_reduce_into(&local.0[..], &mut global[..], SystemOperation::sum());
    (seconds, moves, counts, Checksum(global))
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
    /// Let the balancer decide every K iterations (with the mean compute time
    /// of the K).
    #[arg(long, default_value_t = 1)]
    every: u64,
    /// Slowdown of each rank, comma-separated (default 1,2,3,...).
    #[arg(long, value_name = "F0,F1,...")]
    factors: Option<String>,
    /// The balancer's policy: adaptive, profitability, never, or fixed-N (N
    /// evenly spaced redistributions).
    #[arg(long, default_value = "adaptive")]
    policy: String,
    /// What each rank reports to the balancer: its compute time, or (wrongly)
    /// its whole iteration, halo exchange included.
    #[arg(long, value_enum, default_value_t = Timing::Compute)]
    timing: Timing,
    /// Relative noise of the measured times the balancer ignores (see
    /// `hetbal::iterative::online`).
    #[arg(long, default_value_t = 0.05)]
    tolerance: f64,
    /// Seconds per cell on every link, both ways; by default the balancer
    /// measures the links itself.
    #[arg(long, value_name = "SECONDS")]
    link_seconds: Option<f64>,
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
    // Online policies only: offline-best is refused as an unknown name.
    let online = Policy::from_name(&args.policy).filter(|p| *p != Policy::OfflineBest);
    let policy: Policy = online.ok_or_else(|| {
        format!(
            "--policy {}: give adaptive, profitability, never or fixed-N",
            args.policy
        )
    })?;
    let (cells, iterations, every) = (args.cells, args.iterations, args.every);
    let factor = factors[world.rank() as usize];
    if !(args.tolerance >= 0.0 && args.tolerance < 1.0) {
        return Err(format!(
            "--tolerance {}: give a number in [0, 1)",
            args.tolerance
        ));
    }
    if policy == Policy::OfflineBest {
        return Err(format!(
            "--policy {}: {}",
            args.policy,
            DecideError::OfflinePolicy
        ));
    }
    // ANCHOR: balancer
    // The links: measured (every rank alike), or given.
    let mut balancer = match args.link_seconds {
        None => Balancer::measuring(world, policy, 8).map_err(|e| e.to_string())?,
        Some(c) if c.is_finite() && c > 0.0 => {
            Balancer::with_policy(policy, vec![c; n], Some(vec![c; n]))
                .map_err(|e| format!("--policy {}: {e}", args.policy))?
        }
        Some(c) => return Err(format!("--link-seconds {c}: give a positive number")),
    };
    balancer.decider = balancer.decider.with_tolerance(args.tolerance);
    // ANCHOR_END: balancer
    let (static_time, _, _, static_sum) = run(world, cells, iterations, every, factor, None);
    let (balanced_time, moves, counts, balanced_sum) = run(
        world,
        cells,
        iterations,
        every,
        factor,
        Some((&mut balancer, args.timing)),
    );
    if world.rank() == 0 {
        println!(
            "jacobi: {cells} cells, {iterations} iterations on {n} ranks slowed by {factors:?}"
        );
        let (c_succ, c_pred) = balancer.decider.links();
        let show = |c: &[f64]| {
            let c: Vec<String> = c.iter().map(|c| format!("{c:.2e}")).collect();
            c.join(", ")
        };
        println!(
            "links (s per cell)  to succ [{}], to pred [{}] ({})",
            show(c_succ),
            show(c_pred.unwrap_or(c_succ)),
            if args.link_seconds.is_some() {
                "given"
            } else {
                "measured"
            }
        );
        println!("static equal split  {static_time:.3} s");
        println!(
            "hetbal balancer     {balanced_time:.3} s ({} redistributions, {} policy deciding every {every} iterations on {} time)",
            moves.len(),
            args.policy,
            match args.timing {
                Timing::Compute => "compute",
                Timing::Wall => "wall",
            }
        );
        for (iteration, d) in &moves {
            println!(
                "  after iteration {:>4}: predicted gain {}, cost {:.6} s, cells {:?}",
                iteration,
                d.predicted_gain
                    .map_or("-".to_string(), |g| format!("{g:.6} s")),
                d.redistribution_time,
                d.targets
            );
        }
        println!("cells at the end    {counts:?}");
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
