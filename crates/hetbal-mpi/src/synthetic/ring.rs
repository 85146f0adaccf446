//! `hetbal-mpi ring`: a ring redistribution of synthetic items.

use hetbal::ring::{plan, RingInstance};
use mpi::traits::Communicator;

use super::{
    holds_positions, items_at, peak_rss_bytes, ranks_wrong, sum, timed, RunOutcome, RunSettings,
    SetupError,
};
use crate::ring::{link_flows, pacing_from_plan, redistribute_bytes};
use crate::Options;

/// Plans `instance`, redistributes synthetic items on `world` (rank i is
/// processor i), and checks every item on every rank; then, when the
/// redistribution committed, moves the items back to the loads and again to the
/// targets `round_trips` times (each rank's items keep their capacity from one
/// move to the next), checking every item after each move (only the first move
/// is timed).
/// Collective over `world`.
///
/// # Errors
/// Before anything moves, on every rank: [`SetupError::RingRanks`] when `world`
/// does not have one rank per processor, [`SetupError::NoItemBytes`],
/// [`SetupError::Plan`], a fault that cannot be injected
/// ([`SetupError::FaultRank`], [`SetupError::NothingToSpoil`]: a rank with no
/// message), [`SetupError::TimeScale`]. A failed redistribution is not an error
/// here: it is the outcome's `result`.
///
/// # Complexity
/// The ring planner's, then that of [`redistribute_bytes`] (times `1 + 2 ×
/// round_trips`), and O(items) per check.
pub fn run_ring<C: Communicator>(
    world: &C,
    instance: &RingInstance,
    settings: &RunSettings,
    round_trips: u32,
) -> Result<RunOutcome, SetupError> {
    let rank = world.rank() as usize;
    let n = instance.len();
    if world.size() as usize != n {
        return Err(SetupError::RingRanks {
            processors: n,
            ranks: world.size() as usize,
        });
    }
    let ib = settings.item_bytes;
    if ib == 0 {
        return Err(SetupError::NoItemBytes);
    }
    let plan = plan(instance, None).map_err(|e| SetupError::Plan(e.to_string()))?;
    let flows = link_flows(n, &plan.flows);
    let (loads, targets) = (instance.loads(), instance.targets());
    let total = sum(loads);
    let first = sum(&loads[..rank]);
    let fault = settings.checked_fault(n, |r| flows[r] > 0 || flows[(r + n - 1) % n] < 0)?;
    let scale = settings.checked_scale(plan.makespan)?;
    let options = settings.options(fault, || pacing_from_plan(instance, &plan, scale));
    let mut items = items_at(first, loads[rank], ib);
    let (result, measured) = timed(
        world,
        || redistribute_bytes(world, loads, &flows, ib, &mut items, &options),
        |r| r.transfer_seconds,
    );
    let f_in = flows[(rank + n - 1) % n];
    let holds_targets =
        |items: &[u8]| holds_positions(items, first as i128 - f_in, targets[rank], total, ib);
    // Every rank holds exactly its original items (also after a failure).
    let holds_loads = |items: &[u8]| holds_positions(items, first as i128, loads[rank], total, ib);
    let mut holds = match &result {
        Ok(_) => holds_targets(&items),
        Err(_) => holds_loads(&items),
    };
    if result.is_ok() {
        // Back and forth, as an iterative application does.
        let back: Vec<i128> = flows.iter().map(|f| -f).collect();
        let plain = Options {
            chunk_bytes: settings.chunk_bytes,
            ..Options::default()
        };
        for _ in 0..round_trips {
            let went_back = redistribute_bytes(world, targets, &back, ib, &mut items, &plain);
            holds &= went_back.is_ok() && holds_loads(&items);
            let came_again = redistribute_bytes(world, loads, &flows, ib, &mut items, &plain);
            holds &= came_again.is_ok() && holds_targets(&items);
        }
    }
    Ok(RunOutcome {
        kind: "ring",
        ranks: n,
        result: result.map(|_| ()),
        ranks_wrong: ranks_wrong(world, holds),
        peak_rss_bytes: peak_rss_bytes(world),
        items_moved: flows.iter().map(|f| f.unsigned_abs()).sum(),
        item_bytes: ib,
        times: settings.times(scale, plan.makespan, plan.makespan, measured),
        lines: vec![format!(
            "ring redistribution on {n} ranks ({})",
            plan.algorithm
        )],
        verified_means: "yes: every rank holds its target items, in order",
    })
}
