//! Many successive rebalances of one application ([`run_rebalances`]): the
//! speeds change at every step, the [`Balancer`] moves the items every time, and
//! every rank checks every item after every move, while the time of each
//! rebalance and every rank's memory are recorded, to show that neither grows
//! with the number of steps.

use bytemuck::{Pod, Zeroable};
use hetbal::iterative::Policy;
use hetbal::random::SplitMix64;
use mpi::collective::SystemOperation;
use mpi::traits::{Communicator, CommunicatorCollectives};

use crate::balancer::Balancer;
use crate::memory::{peak_resident_bytes, resident_bytes};
use crate::RunError;

/// An item of the synthetic application: 128 bytes that say their global
/// position.
#[derive(Clone, Copy, Debug, PartialEq, Pod, Zeroable)]
#[repr(C)]
pub struct Cell {
    /// Global position of the cell.
    pub position: u64,
    /// Derived from the position: a misplaced or corrupted cell shows.
    pub payload: [u64; 15],
}

impl Cell {
    /// The cell at global position `g`.
    pub fn at(g: u64) -> Cell {
        let mut payload = [0u64; 15];
        for (k, word) in payload.iter_mut().enumerate() {
            *word = g.wrapping_mul(0x9E37_79B9_7F4A_7C15).rotate_left(k as u32);
        }
        Cell {
            position: g,
            payload,
        }
    }
}

/// How [`run_rebalances`] runs.
#[derive(Clone, Debug, PartialEq)]
pub struct RebalanceSettings {
    /// Rebalances (steps).
    pub steps: u32,
    /// Cells of each rank at the start.
    pub cells_per_rank: u64,
    /// The speeds' seed: rank i computes a cell in `f × 1 µs` at step k, `f`
    /// drawn in `[1, 4)` for every rank and step from this seed.
    pub seed: u64,
}

/// One rebalance, as the slowest (or largest) rank saw it.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct RebalanceStep {
    /// Seconds of the rebalance (decision and redistribution), the slowest
    /// rank's.
    pub seconds: f64,
    /// Cells that changed rank.
    pub cells_moved: u64,
    /// The largest resident memory of a rank right after it, in bytes.
    pub resident_bytes: u64,
    /// The largest peak resident memory of a rank so far, in bytes.
    pub peak_rss_bytes: u64,
    /// The largest capacity of a rank's vector of cells, in bytes.
    pub capacity_bytes: u64,
    /// The most memory a rank's cells needed in a redistribution so far (its
    /// cells plus those it received), in bytes.
    pub needed_bytes: u64,
}

/// What [`run_rebalances`] did, the same on every rank.
#[derive(Clone, Debug, PartialEq)]
pub struct RebalanceOutcome {
    /// Every step, in order.
    pub steps: Vec<RebalanceStep>,
    /// Ranks that did not hold exactly their cells after some step.
    pub ranks_wrong: u64,
    /// Steps where the balancer did not move anything.
    pub steps_still: u32,
}

/// Runs `settings.steps` rebalances of a synthetic application on `world`, its
/// ranks' speeds changing at every step ([`RebalanceSettings::seed`]), the
/// balancer (links given: 10 ns per cell) set to move at every step
/// ([`Policy::Fixed`] with one redistribution per step), every rank checking
/// every cell after every step. Collective over `world`.
///
/// # Errors
/// A failed rebalance, on every rank.
///
/// # Complexity
/// Per step: one decision (an all-gather, a ring plan) and one redistribution;
/// O(cells) checks.
pub fn run_rebalances<C: Communicator>(
    world: &C,
    settings: &RebalanceSettings,
) -> Result<RebalanceOutcome, RunError> {
    let n = world.size() as usize;
    let rank = world.rank() as usize;
    let steps = settings.steps;
    let policy = Policy::Fixed {
        redistributions: steps,
    };
    let mut balancer = Balancer::with_policy(policy, vec![1e-8; n], Some(vec![1e-8; n]))
        .map_err(RunError::Decide)?;
    balancer.decider = balancer.decider.clone().with_tolerance(0.0);
    let total = settings.cells_per_rank * n as u64;
    let first = settings.cells_per_rank * rank as u64;
    let mut cells: Vec<Cell> = (first..first + settings.cells_per_rank)
        .map(Cell::at)
        .collect();
    let mut wrong = false;
    let mut still = 0;
    let mut records = Vec::with_capacity(steps as usize);
    let mut needed = 0u64;
    for k in 1..=steps {
        // This step's speeds, the same draws on every rank.
        let mut rng =
            SplitMix64::new(settings.seed ^ u64::from(k).wrapping_mul(0xD1B5_4A32_D192_ED03));
        let factors: Vec<f64> = (0..n).map(|_| rng.range((1.0, 4.0))).collect();
        let seconds = cells.len() as f64 * factors[rank] * 1e-6;
        let held = cells.len();
        world.barrier();
        let started = mpi::time();
        let decision = balancer.rebalance(world, &mut cells, seconds, u64::from(steps + 1 - k))?;
        let elapsed = mpi::time() - started;
        if !decision.redistribute {
            still += 1;
        }
        // What this rank held plus what it received.
        let received = decision.flows[(rank + n - 1) % n].max(0) + (-decision.flows[rank]).max(0);
        needed = needed.max(((held as u128 + received as u128) * 128) as u64);
        let start = decision.firsts[rank];
        wrong |= cells.len() as u64 != decision.targets[rank]
            || cells
                .iter()
                .enumerate()
                .any(|(j, c)| *c != Cell::at((start + j as u64) % total));
        let capacity = (cells.capacity() * std::mem::size_of::<Cell>()) as u64;
        let mine = [
            elapsed.to_bits(),
            resident_bytes().unwrap_or(0),
            peak_resident_bytes().unwrap_or(0),
            capacity,
            needed,
        ];
        let mut most = [0u64; 5];
        // Non-negative f64s order as their bits: one max reduction for all.
        world.all_reduce_into(&mine[..], &mut most[..], SystemOperation::max());
        records.push(RebalanceStep {
            seconds: f64::from_bits(most[0]),
            cells_moved: decision.flows.iter().map(|f| f.unsigned_abs() as u64).sum(),
            resident_bytes: most[1],
            peak_rss_bytes: most[2],
            capacity_bytes: most[3],
            needed_bytes: most[4],
        });
    }
    let mut ranks_wrong = 0u64;
    world.all_reduce_into(&u64::from(wrong), &mut ranks_wrong, SystemOperation::sum());
    Ok(RebalanceOutcome {
        steps: records,
        ranks_wrong,
        steps_still: still,
    })
}
