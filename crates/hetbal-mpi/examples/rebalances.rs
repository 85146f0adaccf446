//! Many successive rebalances of one application: `hetbal_mpi::rebalances::
//! run_rebalances` on a ring (8 ranks in the setting), the speeds
//! changing at every step and the cells (128 bytes each) moving at every step,
//! every rank checking every cell after every step. Prints, for each tenth of
//! the steps, the median and largest time of a rebalance and the largest
//! resident memory, peak memory and vector capacity of a rank, then the last
//! tenth against the first: later rebalances must be no slower, and memory must
//! not grow with the steps.
//!
//! `mpirun -np 8 target/release/examples/rebalances [STEPS] [CELLS_PER_RANK]`
//! (default 300 steps of 65,536 cells per rank: 8 MiB per rank).

use hetbal_mpi::rebalances::{run_rebalances, RebalanceSettings, RebalanceStep};
use mpi::traits::Communicator;

/// Prints the error and ends the process.
fn fail(message: &str) -> ! {
    eprintln!("error: {message}");
    std::process::exit(2);
}

/// The median of `x`.
fn median(mut x: Vec<f64>) -> f64 {
    x.sort_by(f64::total_cmp);
    x[x.len() / 2]
}

fn mib(bytes: u64) -> f64 {
    bytes as f64 / f64::from(1u32 << 20)
}

/// One line of the table: steps `from..to`.
fn line(from: usize, steps: &[RebalanceStep]) {
    let seconds: Vec<f64> = steps.iter().map(|s| s.seconds).collect();
    let most = |f: fn(&RebalanceStep) -> u64| steps.iter().map(f).max().unwrap_or(0);
    println!(
        "{:>5}-{:<5} {:>9.2} {:>9.2} {:>10.1} {:>10.1} {:>10.1} {:>10.1}",
        from + 1,
        from + steps.len(),
        1e3 * median(seconds.clone()),
        1e3 * seconds.iter().copied().fold(0.0, f64::max),
        mib(most(|s| s.resident_bytes)),
        mib(most(|s| s.peak_rss_bytes)),
        mib(most(|s| s.capacity_bytes)),
        mib(most(|s| s.needed_bytes)),
    );
}

fn main() {
    let Some(universe) = mpi::initialize() else {
        fail("MPI is already initialised");
    };
    let world = universe.world();
    let mut args = std::env::args().skip(1);
    let mut number = |name: &str, default: u64| match args.next().map(|a| a.parse::<u64>()) {
        None => default,
        Some(Ok(k)) if k >= 10 => k,
        Some(_) => fail(&format!("{name}: a whole number of at least 10")),
    };
    let steps = number("STEPS", 300);
    let cells_per_rank = number("CELLS_PER_RANK", 65_536);
    let settings = RebalanceSettings {
        steps: u32::try_from(steps).unwrap_or_else(|_| fail("STEPS: too many")),
        cells_per_rank,
        seed: 18,
    };
    let outcome = match run_rebalances(&world, &settings) {
        Ok(outcome) => outcome,
        Err(e) => fail(&e.to_string()),
    };
    if world.rank() != 0 {
        return;
    }
    let all = &outcome.steps;
    println!(
        "{} rebalances on {} ranks, {} cells of 128 bytes per rank at the start",
        all.len(),
        world.size(),
        cells_per_rank
    );
    println!(
        "{:>11} {:>9} {:>9} {:>10} {:>10} {:>10} {:>10}",
        "steps", "median ms", "max ms", "rss MiB", "peak MiB", "cap MiB", "need MiB"
    );
    let tenth = (all.len() / 10).max(1);
    for (k, window) in all.chunks(tenth).enumerate() {
        line(k * tenth, window);
    }
    let times = |w: &[RebalanceStep]| median(w.iter().map(|s| s.seconds).collect());
    let (first, last) = (&all[..tenth], &all[all.len() - tenth..]);
    println!(
        "last tenth against the first: median time {:.0}%, largest resident memory {:+.1} MiB",
        100.0 * times(last) / times(first),
        mib(last.iter().map(|s| s.resident_bytes).max().unwrap_or(0))
            - mib(first.iter().map(|s| s.resident_bytes).max().unwrap_or(0))
    );
    println!(
        "verified: {} (ranks wrong: {}, steps without a move: {})",
        if outcome.ranks_wrong == 0 {
            "yes, every cell after every step"
        } else {
            "NO"
        },
        outcome.ranks_wrong,
        outcome.steps_still
    );
    if outcome.ranks_wrong > 0 {
        std::process::exit(1);
    }
}
