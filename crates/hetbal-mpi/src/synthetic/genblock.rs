//! `hetbal-mpi genblock`: a GEN_BLOCK redistribution of synthetic items.

use hetbal::genblock::{plan, GenBlockInstance, Method};
use mpi::traits::Communicator;

use super::{
    holds_positions, peak_rss_bytes, ranks_wrong, sum, synthetic_items, timed, timeline,
    RunOutcome, RunSettings, SetupError,
};
use hetbal_mpi::genblock::{pacing_from_plan, run_steps_bytes};
use hetbal_mpi::timeline::{planned_genblock, Kind};

/// Plans `instance` with `method`, runs the schedule's steps on synthetic items
/// on `world` (rank r holds source block r and gets target block r) and checks
/// every item on every rank. Emulated links follow the instance's cost model: the
/// run lasts the plan's cost. Collective over `world`.
///
/// # Errors
/// Before anything moves, on every rank: [`SetupError::GenBlockRanks`] when
/// `world` does not have `max(P, Q)` ranks or the items have no bytes, a fault
/// that cannot be injected ([`SetupError::FaultRank`],
/// [`SetupError::NothingToSpoil`]: a rank that sends nothing),
/// [`SetupError::TimeScale`]. A failed run is not an error here: it is the
/// outcome's `result`.
///
/// # Complexity
/// The GEN_BLOCK planner's, then that of [`run_steps_bytes`], and O(items) per check.
pub fn run_genblock<C: Communicator>(
    world: &C,
    instance: &GenBlockInstance,
    method: Method,
    settings: &RunSettings,
) -> Result<RunOutcome, SetupError> {
    let rank = world.rank() as usize;
    let (source, target) = (instance.source(), instance.target());
    let n = source.len().max(target.len());
    let ib = settings.item_bytes;
    if world.size() as usize != n || ib == 0 {
        return Err(SetupError::GenBlockRanks {
            sources: source.len(),
            targets: target.len(),
            ranks: world.size() as usize,
        });
    }
    let plan = plan(instance, method);
    let steps = &plan.schedule.steps;
    let fault = settings.checked_fault(n, |r| {
        steps.iter().flatten().any(|m| m.from == r && m.size > 0)
    })?;
    let scale = settings.checked_scale(plan.cost)?;
    let options = settings.options(fault, || pacing_from_plan(instance, &plan.schedule, scale));
    let total = sum(source);
    let first = |blocks: &[u64]| sum(&blocks[..rank.min(blocks.len())]);
    let mine = source.get(rank).copied().unwrap_or(0);
    let mut items = synthetic_items(world, (first(source), mine, total), ib)?;
    items.set_give_back_sent(settings.give_back_sent);
    let run = timed(
        world,
        || run_steps_bytes(world, instance, &plan.schedule, ib, &mut items, &options),
        |r| r.transfer_seconds,
    );
    let timeline = timeline(
        world,
        settings,
        &run,
        |r| r.messages.clone(),
        (Kind::GenBlock, plan.cost, scale),
        || {
            let names = (0..n).map(|r| (r, format!("rank {r}")));
            (planned_genblock(instance, &plan.schedule), names.collect())
        },
    );
    let (result, measured) = (run.result, run.seconds);
    let holds = match &result {
        Ok(_) => {
            let count = target.get(rank).copied().unwrap_or(0);
            holds_positions(&items, first(target) as i128, count, total, ib)
        }
        // After a failure, every rank must still hold exactly its source
        // block; giving back, only its elements that did not leave: those of
        // its target block (the others went to lower ranks from the front of
        // the block, to higher ones from the back).
        Err(_) if settings.give_back_sent => {
            let (from, to) = (first(source), first(source) + u128::from(mine));
            let wanted =
                first(target)..first(target) + u128::from(target.get(rank).copied().unwrap_or(0));
            let (lo, hi) = (wanted.start.clamp(from, to), wanted.end.clamp(from, to));
            holds_positions(&items, lo as i128, hi.saturating_sub(lo) as u64, total, ib)
        }
        Err(_) => holds_positions(&items, first(source) as i128, mine, total, ib),
    };
    let moved: u128 = steps
        .iter()
        .flatten()
        .filter(|m| m.from != m.to)
        .map(|m| u128::from(m.size))
        .sum();
    Ok(RunOutcome {
        kind: "genblock",
        ranks: n,
        result: result.map(|_| ()),
        ranks_wrong: ranks_wrong(world, holds),
        peak_rss_bytes: peak_rss_bytes(world),
        measured_links: None,
        items_moved: moved,
        item_bytes: ib,
        times: settings.times(scale, plan.cost, plan.cost, measured),
        lines: vec![format!(
            "GEN_BLOCK redistribution on {n} ranks: {} steps ({method}), startup {} and {} per element",
            steps.len(),
            instance.startup(),
            instance.unit()
        )],
        verified_means: "yes: every rank holds its target block, in order",
        kept_means: settings.kept_means(),
        timeline,
    })
}
