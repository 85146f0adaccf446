//! Many successive rebalances of one application under `mpirun` (8 ranks, the
//! speeds changing at every step, the items moving at every step): every rank
//! holds exactly its cells after every step, memory does not grow with the
//! steps, and the later rebalances are not slower than the earlier ones.
//! `examples/rebalances.rs` runs 300 steps.
//!
//! Run by `cargo test` like any test: started without MPI, it starts itself
//! under `mpirun -np 8` and passes when every rank does.

mod common;

use hetbal_mpi::rebalances::{run_rebalances, RebalanceSettings};
use mpi::traits::Communicator;

const RANKS: usize = 8;
const MIB: u64 = 1 << 20;

/// The median of `x`.
fn median(x: &[f64]) -> f64 {
    let mut v = x.to_vec();
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

fn main() {
    let Some(universe) = common::as_ranks(RANKS) else {
        return;
    };
    let world = universe.world();
    let settings = RebalanceSettings {
        steps: 40,
        cells_per_rank: 4096,
        seed: 18,
    };
    let outcome = run_rebalances(&world, &settings).expect("every rebalance commits");
    let steps = &outcome.steps;
    assert_eq!(outcome.ranks_wrong, 0, "every rank holds exactly its cells");
    assert_eq!(outcome.steps_still, 0, "the items moved at every step");
    let last = steps.last().unwrap();
    // Memory: what the cells need (a rank's cells plus those it receives, at
    // most the 4 MiB of all cells), nothing that grows with the steps.
    assert!(last.capacity_bytes <= last.needed_bytes, "{last:?}");
    let warm = &steps[4];
    assert!(
        last.resident_bytes <= warm.resident_bytes + 8 * MIB,
        "resident memory grew from {} to {} bytes",
        warm.resident_bytes,
        last.resident_bytes
    );
    assert!(
        last.peak_rss_bytes <= last.needed_bytes + 64 * MIB,
        "{last:?}"
    );
    // Time: the last quarter's median rebalance against the second quarter's
    // (generous: the ranks share two busy cores).
    let seconds: Vec<f64> = steps.iter().map(|s| s.seconds).collect();
    let (early, late) = (median(&seconds[10..20]), median(&seconds[30..40]));
    assert!(
        late <= 3.0 * early + 0.005,
        "later rebalances slower: {late} s against {early} s"
    );
    if world.rank() == 0 {
        println!(
            "{} rebalances on {RANKS} ranks verified; median {:.2} ms then {:.2} ms; resident {:.1} then {:.1} MiB",
            steps.len(),
            early * 1e3,
            late * 1e3,
            warm.resident_bytes as f64 / MIB as f64,
            last.resident_bytes as f64 / MIB as f64
        );
    }
}
