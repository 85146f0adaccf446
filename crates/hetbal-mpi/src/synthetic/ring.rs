//! `hetbal-mpi ring`: a ring redistribution of synthetic items.

use hetbal::ring::{plan, RingInstance, RingKind};
use mpi::traits::Communicator;

use super::{
    holds_positions, lane_name, peak_rss_bytes, ranks_wrong, sum, synthetic_items, timed, timeline,
    RunOutcome, RunSettings, SetupError,
};
use hetbal_mpi::links::{measure_ring_links, Probe, RingLinks};
use hetbal_mpi::ring::{link_flows, message_batches, pacing_from_plan, redistribute_bytes};
use hetbal_mpi::timeline::{planned_ring, Kind};
use hetbal_mpi::Options;

/// Plans `instance`, redistributes synthetic items on `world` (rank i is
/// processor i), and checks every item on every rank; then, when the
/// redistribution committed, moves the items back to the loads and again to the
/// targets `round_trips` times (each rank's items keep their capacity from one
/// move to the next), checking every item after each move (only the first move
/// is timed). With `measure_links`, the ring's links are measured first
/// ([`measure_ring_links`]; with emulated links, at the instance's costs: the
/// outcome's `measured_links` can be set against them).
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
    measure_links: bool,
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
    let mut options = settings.options(fault, || pacing_from_plan(instance, &plan, scale));
    // Under start-ups, every planned transfer over a link with one is a message.
    options.batches = message_batches(instance, &plan);
    let measured_links = if measure_links {
        let probe = probe(instance, settings.emulate_links.then_some(scale), ib);
        Some(measure_ring_links(world, &probe).map_err(SetupError::Run)?)
    } else {
        None
    };
    let mut items = synthetic_items(world, (first, loads[rank], total), ib)?;
    items.set_give_back_sent(settings.give_back_sent);
    let run = timed(
        world,
        || redistribute_bytes(world, loads, &flows, ib, &mut items, &options),
        |r| r.transfer_seconds,
    );
    let timeline = timeline(
        world,
        settings,
        &run,
        |r| r.messages.clone(),
        (Kind::Ring, plan.makespan, scale),
        || {
            let names = (0..n).map(|r| (r, lane_name(instance.name(r), r)));
            (planned_ring(n, &plan.transfers), names.collect())
        },
    );
    let (result, measured) = (run.result, run.seconds);
    let f_in = flows[(rank + n - 1) % n];
    let holds_targets =
        |items: &[u8]| holds_positions(items, first as i128 - f_in, targets[rank], total, ib);
    // Every rank holds exactly its original items (also after a failure).
    let holds_loads = |items: &[u8]| holds_positions(items, first as i128, loads[rank], total, ib);
    // Giving back, a failure leaves only the items that had not left: the
    // first ones went to the predecessor, the last ones to the successor.
    let (front, back) = if settings.give_back_sent {
        let to_pred = (-f_in).max(0) as u64;
        let front = to_pred.min(loads[rank]);
        let to_succ = flows[rank].max(0) as u64;
        (front, to_succ.min(loads[rank] - front))
    } else {
        (0, 0)
    };
    let left_after_failure = |items: &[u8]| {
        let count = loads[rank] - front - back;
        holds_positions(items, (first + u128::from(front)) as i128, count, total, ib)
    };
    let mut holds = match &result {
        Ok(_) => holds_targets(&items),
        Err(_) => left_after_failure(&items),
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
        measured_links,
        items_moved: flows.iter().map(|f| f.unsigned_abs()).sum(),
        item_bytes: ib,
        times: settings.times(scale, plan.makespan, plan.makespan, measured),
        lines: vec![format!(
            "ring redistribution on {n} ranks ({})",
            plan.algorithm
        )],
        verified_means: "yes: every rank holds its target items, in order",
        kept_means: settings.kept_means(),
        timeline,
    })
}

/// The probe measuring the links of `instance`'s ring for items of `item_bytes`
/// bytes: the default one, or with links emulated at the instance's costs times
/// `scale` seconds per time unit (a link to the predecessor the instance does
/// not price costs as the link to the successor, and starts up as the same
/// link the other way), start-ups included, probes
/// of 0, k/4 and k items with k such that the slowest link takes about 20 ms
/// for k items (at most 1 MiB), five times each.
fn probe(instance: &RingInstance, scale: Option<f64>, item_bytes: usize) -> Probe {
    let Some(scale) = scale else {
        return Probe::default();
    };
    let c_succ: Vec<f64> = instance.c_succ().iter().map(|c| c * scale).collect();
    let c_pred: Vec<f64> = instance
        .c_pred()
        .iter()
        .zip(&c_succ)
        .map(|(c, &succ)| c.map_or(succ, |c| c * scale))
        .collect();
    let slowest = c_succ.iter().chain(&c_pred).copied().fold(0.0, f64::max);
    let most = ((1 << 20) / item_bytes).max(1);
    let k = if slowest > 0.0 {
        ((0.02 / slowest) as usize).clamp(1, most)
    } else {
        most
    };
    // The instance's start-ups (a link to the predecessor it does not price
    // starts up as the same link the other way).
    let mut emulated = RingLinks::per_item_costs(&c_succ, Some(&c_pred), item_bytes);
    let n = instance.len();
    let bidirectional = instance.kind() == RingKind::Bidirectional;
    for i in 0..n {
        emulated.to_succ[i].startup = instance.l_succ()[i] * scale;
        emulated.to_pred[i].startup = scale
            * if bidirectional {
                instance.l_pred()[i]
            } else {
                instance.l_succ()[(i + n - 1) % n]
            };
    }
    Probe {
        sizes: vec![0, (k / 4) * item_bytes, k * item_bytes],
        emulated: Some(emulated),
        ..Probe::default()
    }
}
