//! `hetbal-mpi scatter`: a balanced scatter of synthetic items.

use hetbal::scatter::{plan, Method, OrderPolicy, ScatterInstance};
use mpi::collective::SystemOperation;
use mpi::traits::{Communicator, CommunicatorCollectives};

use super::{
    holds_positions, lane_name, peak_rss_bytes, ranks_wrong, sum, synthetic_items, timed, timeline,
    RunOutcome, RunSettings, SetupError,
};
use hetbal_mpi::scatter::{
    pacing_from_plan, ranked_in_order, scatter_in_order_bytes, ScatterPath, ScatterReport,
};
use hetbal_mpi::timeline::{planned_scatter, Kind, Message};

/// Plans `instance` (`exact` counts, `best` order), ranks `world` in the plan's
/// order (root last), scatters synthetic items from the root and checks every
/// item on every rank. The fault's rank is a processor index of the instance;
/// `corrupt` and `short` spoil the root's first message to it. Emulated links
/// follow the communication part of the plan (when the root's last send ends).
/// Collective over `world`.
///
/// # Errors
/// Before anything moves, on every rank: [`SetupError::ScatterRanks`] when
/// `world` does not have one rank per processor or the items have no bytes,
/// [`SetupError::Plan`], a fault that cannot be injected
/// ([`SetupError::FaultRank`], [`SetupError::NothingToSpoil`]: a processor that
/// receives nothing, or a root that sends nothing), [`SetupError::TimeScale`],
/// [`SetupError::Run`] when the communicator cannot be ranked. A failed scatter
/// is not an error here: it is the outcome's `result`.
///
/// # Complexity
/// The scatter planner's, then that of [`scatter_in_order_bytes`], and O(items) per
/// check.
pub fn run_scatter<C: Communicator>(
    world: &C,
    instance: &ScatterInstance,
    settings: &RunSettings,
) -> Result<RunOutcome, SetupError> {
    let p = instance.len();
    let ib = settings.item_bytes;
    if world.size() as usize != p || ib == 0 {
        return Err(SetupError::ScatterRanks {
            processors: p,
            ranks: world.size() as usize,
        });
    }
    let plan = plan(instance, Method::Exact, OrderPolicy::Best)
        .map_err(|e| SetupError::Plan(e.to_string()))?;
    // Positions in the plan's order (ranks of the ranked communicator).
    let position = |processor: usize| plan.order.iter().position(|&i| i == processor);
    let root_position = p - 1;
    let fault = settings.checked_fault(p, |r| match position(r) {
        Some(k) if k == root_position => plan.counts[..root_position].iter().any(|&c| c > 0),
        Some(k) => plan.counts[k] > 0,
        None => false,
    })?;
    // The communication part of the plan: when the root's last send ends.
    let comm_time = plan.timeline.receive_start[root_position] - plan.start;
    let scale = settings.checked_scale(comm_time)?;
    let ranked = ranked_in_order(world, &plan.order).map_err(SetupError::Run)?;
    let me = ranked.rank() as usize;
    let options = settings.options(fault.and_then(|(r, f)| Some((position(r)?, f))), || {
        pacing_from_plan(instance, &plan, scale)
    });
    let total = sum(&plan.counts);
    let original = if me == root_position { total as u64 } else { 0 };
    let mut items = synthetic_items(&ranked, (0, original, total), ib)?;
    let run = timed(
        &ranked,
        || scatter_in_order_bytes(&ranked, &plan.counts, ib, &mut items, &options),
        |r| r.transfer_seconds,
    );
    // The messages' peers are ranks of `ranked`: positions in the plan's order.
    let in_world = |r: &ScatterReport| {
        let peer = |m: &Message| m.peer.map(|k| plan.order[k]);
        let translate = |m: &Message| Message {
            peer: peer(m),
            ..*m
        };
        r.messages.iter().map(translate).collect()
    };
    let timeline = timeline(
        world,
        settings,
        &run,
        in_world,
        (Kind::Scatter, comm_time, scale),
        || {
            // In the plan's order, root last.
            let names = plan
                .order
                .iter()
                .map(|&i| (i, lane_name(instance.name(i), i)));
            (planned_scatter(&plan), names.collect())
        },
    );
    let (result, measured) = (run.result, run.seconds);
    let first = sum(&plan.counts[..me]);
    let holds = match &result {
        Ok(_) => holds_positions(&items, first as i128, plan.counts[me], total, ib),
        // After a failure: the root holds every item, the others none.
        Err(_) => holds_positions(&items, 0, original, total, ib),
    };
    let mut path_seen = [0u64; 2]; // ranks that saw Scatterv, the chunked path
    let mine = match result.as_ref().map(|r| r.path) {
        Ok(ScatterPath::Scatterv) => [1u64, 0],
        Ok(ScatterPath::Chunked) => [0, 1],
        Err(_) => [0, 0],
    };
    world.all_reduce_into(&mine[..], &mut path_seen[..], SystemOperation::sum());
    let sent_by = if path_seen[0] > 0 {
        "MPI_Scatterv"
    } else {
        "point-to-point messages in the plan's order"
    };
    let emulated = settings.emulate_links;
    let name = instance.name(plan.order[root_position]);
    Ok(RunOutcome {
        kind: "scatter",
        ranks: p,
        result: result.map(|_| ()),
        ranks_wrong: ranks_wrong(world, holds),
        peak_rss_bytes: peak_rss_bytes(world),
        measured_links: None,
        items_moved: total - u128::from(plan.counts[root_position]),
        item_bytes: ib,
        times: settings.times(scale, comm_time, plan.makespan, measured),
        lines: vec![
            format!("scatter of {total} items from {name} to {p} ranks in the plan's order"),
            format!("counts            {:?}", plan.counts),
            format!("sent by           {sent_by}"),
            if emulated {
                format!(
                    "plan              {} time units of communication, {} with the computing",
                    comm_time, plan.makespan
                )
            } else {
                "plan              its makespan includes the computing; measured: the scatter alone"
                    .to_string()
            },
        ],
        verified_means: "yes: every rank holds its share, in order",
        kept_means: settings.kept_means(),
        timeline,
    })
}
