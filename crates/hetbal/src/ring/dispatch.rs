//! The planner dispatch: [`plan`] picks (or runs the forced) planner for a ring,
//! validates its schedule once, compares it with the ring's [`lower_bound`], settles
//! small rings that miss it by exact search, and returns the [`RingPlan`] with its
//! validation report.

use crate::ring::bidirectional;
use crate::ring::bounds::lower_bound_with;
use crate::ring::messages::startup_transfers_with;
use crate::ring::retime::{retime_within, with_model_durations};
use crate::ring::segments;
use crate::ring::startup_exact::{startup_exhaustive_pruned, startup_settle};
use crate::ring::unidirectional;
#[cfg(doc)]
use crate::ring::{batched_schedule, lower_bound};
use crate::ring::{
    block_schedule, circulation_bound, circulation_flows, exact_schedule,
    homogeneous_bidirectional_bound, homogeneous_unidirectional, is_light, light_circulation,
    light_flows_schedule, net_flows, paper_algorithm3, startup_lower_bound, startup_schedule,
    validate, CirculationBound, PlanError, RingAlgorithm, RingInstance, RingKind, RingPlan,
    Schedule, ScheduleReport, StartupBound, Transfer,
};

/// The most transfers [`plan`] puts in a schedule (56 bytes each in memory, about 100
/// bytes each in JSON), a paced train counting as one. Rings whose optimal schedules
/// need more are planned within it, in convoys
/// ([`RingAlgorithm::UnidirectionalConvoys`], alone or per path of a bidirectional
/// ring), and the plan's gap to the bound says what that costs.
pub const MAX_TRANSFERS: u128 = 10_000_000;

/// The most items the item-by-item list scheduler moves in one plan.
pub const MAX_LIST_ITEMS: u128 = 20_000_000;

/// Rings small enough for [`plan`] to settle a missed bound by exact search: at most
/// 12 processors and 255 items, and at most a million search states (about 150 MB;
/// usually seconds, but a search that exhausts the budget has been measured at about
/// 70 s of CPU on an 11-processor ring).
const EXACT_MAX_PROCESSORS: usize = 12;
const EXACT_MAX_ITEMS: u64 = 255;
const EXACT_MAX_STATES: usize = 1_000_000;
/// The state budget of the forced `exact-search` algorithm.
const FORCED_EXACT_MAX_STATES: usize = 4_000_000;

/// Rings with start-ups small enough for [`plan`] to settle a missed bound by the
/// exhaustive search pruned by the start-up bound: at most 6 processors and 24
/// items, within 2,000,000 states.
const STARTUP_EXACT_MAX_PROCESSORS: usize = 6;
const STARTUP_EXACT_MAX_ITEMS: u64 = 24;
const STARTUP_EXACT_MAX_STATES: usize = 2_000_000;
/// The state budget of the forced `exact-search` algorithm on rings with start-ups.
const STARTUP_FORCED_EXACT_MAX_STATES: usize = 2_000_000;

/// Alternating forward and backward list-scheduling passes tried after the first two.
const LIST_PASSES: usize = 6;

/// The algorithm [`plan`] picks when none is forced.
///
/// Rings with start-ups (some `l_succ` or `l_pred` above 0):
/// [`startup_schedule`]'s messages ([`RingAlgorithm::StartupBatches`]). Otherwise,
/// unidirectional rings: Algorithm 1 when all costs are equal; otherwise Algorithm 2's
/// optimal flows and makespan in the fewest transfers ([`batched_schedule`]: back-to-back
/// batches, or Algorithm 2's own paced trains where they are fewer).
/// Bidirectional rings: one block per link when all costs are equal
/// ([`block_schedule`], at Lemma 6 on every ring); otherwise Lemma 9 when an
/// optimal circulation of System 6 is light (its makespan is then the System 6
/// optimum), list scheduling otherwise.
///
/// Complexity: O(n) on unidirectional rings, that of [`circulation_bound`] on bidirectional ones.
///
/// # Example
/// ```
/// use hetbal::ring::{default_algorithm, RingAlgorithm, RingInstance};
/// let equal = RingInstance::unidirectional(&[2, 1], &[1, 2], &[1.0, 1.0]).unwrap();
/// assert_eq!(default_algorithm(&equal), RingAlgorithm::UnidirectionalHomogeneous);
/// let mixed = RingInstance::unidirectional(&[2, 1], &[1, 2], &[1.0, 2.0]).unwrap();
/// assert_eq!(default_algorithm(&mixed), RingAlgorithm::UnidirectionalBatched);
/// let both_ways = RingInstance::bidirectional(&[2, 1], &[1, 2], &[1.0; 2], &[1.0; 2]).unwrap();
/// assert_eq!(default_algorithm(&both_ways), RingAlgorithm::BidirectionalBlocks);
/// ```
pub fn default_algorithm(instance: &RingInstance) -> RingAlgorithm {
    let s6 = (instance.kind() == RingKind::Bidirectional).then(|| circulation_bound(instance));
    default_algorithm_with(instance, s6.as_ref())
}

/// [`default_algorithm`] with System 6 already solved (bidirectional rings).
fn default_algorithm_with(instance: &RingInstance, s6: Option<&CirculationBound>) -> RingAlgorithm {
    if instance.has_startups() {
        RingAlgorithm::StartupBatches
    } else {
        papers_algorithm(instance, s6)
    }
}

/// The planner hetbal picks for a ring with start-ups ignored: the papers' own
/// in their model; outside it (a processor with no items, or a path), those that
/// hold there ([`outside_papers_model`]).
fn papers_algorithm(instance: &RingInstance, s6: Option<&CirculationBound>) -> RingAlgorithm {
    let papers = instance.is_papers_model();
    match instance.kind() {
        RingKind::Unidirectional if !papers => RingAlgorithm::UnidirectionalHeterogeneous,
        RingKind::Unidirectional if instance.is_homogeneous() => {
            RingAlgorithm::UnidirectionalHomogeneous
        }
        RingKind::Unidirectional => RingAlgorithm::UnidirectionalBatched,
        RingKind::Bidirectional if papers && instance.is_homogeneous() => {
            RingAlgorithm::BidirectionalBlocks
        }
        RingKind::Bidirectional => {
            let s6 = s6.expect("System 6 is solved for bidirectional rings");
            if s6
                .optimal_x
                .iter()
                .any(|&x| is_light(instance, &circulation_flows(instance, x)))
            {
                RingAlgorithm::BidirectionalLemma9
            } else {
                RingAlgorithm::BidirectionalList
            }
        }
    }
}

/// Refuses the planners that need the papers' model for an instance outside it.
///
/// * Every load and target >= 1: Algorithm 1, the batched planner, the blocks,
///   the segments and Algorithm 3 let a processor send from time 0 as if it held an
///   item, which a processor that holds none does not. The others send only items
///   held: Algorithm 2 and the convoys (as soon as an item is held), Lemma 9 and
///   System 8 (light flows: only items held from the start), list scheduling, the
///   exact search and the start-up messages.
/// * A wrap-around link: the blocks and Algorithm 3 choose their own flows, which may
///   use the link a path forbids; on a bidirectional path whose flows go backwards
///   somewhere, the unidirectional planners (successors only) cannot move them.
fn outside_papers_model(
    instance: &RingInstance,
    algorithm: RingAlgorithm,
) -> Result<(), PlanError> {
    use RingAlgorithm::*;
    let needs_items = matches!(
        algorithm,
        UnidirectionalHomogeneous
            | UnidirectionalBatched
            | BidirectionalBlocks
            | BidirectionalSegments
            | PaperAlgorithm3
    );
    let empty =
        (0..instance.len()).find(|&i| instance.loads()[i] == 0 || instance.targets()[i] == 0);
    if let (true, Some(i)) = (needs_items, empty) {
        let (field, value) = if instance.loads()[i] == 0 {
            ("holds", "load")
        } else {
            ("ends with", "target")
        };
        return Err(not_applicable(algorithm, format!(
            "it needs every processor to hold and keep at least one item (the papers' model), but processor {i} ({}) {field} none ({value} 0)",
            instance.name(i)
        )));
    }
    if !instance.is_path() {
        return Ok(());
    }
    if matches!(algorithm, BidirectionalBlocks | PaperAlgorithm3) {
        return Err(not_applicable(
            algorithm,
            "it chooses its own flows, which may use the link from the last processor to the first, and this instance is a path",
        ));
    }
    let unidirectional = matches!(
        algorithm,
        UnidirectionalHomogeneous
            | UnidirectionalHeterogeneous
            | UnidirectionalBatched
            | UnidirectionalConvoys
    );
    let backward = crate::ring::prefix_sums(instance)
        .iter()
        .position(|&s| s < 0);
    if let (true, Some(i)) = (unidirectional, backward) {
        return Err(not_applicable(algorithm, format!(
            "it sends only to successors, but on this path items must move from processor {} to processor {i} ({})",
            i + 1,
            instance.name(i)
        )));
    }
    Ok(())
}

/// [`PlanError::NotApplicable`]: `algorithm` does not apply to the ring, for `reason`.
fn not_applicable(algorithm: RingAlgorithm, reason: impl Into<String>) -> PlanError {
    PlanError::NotApplicable {
        algorithm,
        reason: reason.into(),
    }
}

/// Why the planners of homogeneous bidirectional rings refuse a ring.
const NEEDS_HOMOGENEOUS: &str =
    "it needs a homogeneous bidirectional ring (every c_succ and c_pred equal)";

/// The unidirectional planners' schedule and who made it: Algorithm 2 or the
/// batched planner as asked, or convoys ([`unidirectional::convoy_trains`]) when
/// their schedule would exceed [`MAX_TRANSFERS`] (or when asked).
fn unidirectional_trains(
    instance: &RingInstance,
    algorithm: RingAlgorithm,
) -> (Schedule, RingAlgorithm) {
    let trains = match algorithm {
        RingAlgorithm::UnidirectionalBatched => {
            unidirectional::batched_trains(instance, MAX_TRANSFERS, instance.has_startups())
        }
        RingAlgorithm::UnidirectionalHeterogeneous => {
            Some(unidirectional::algorithm2_trains(instance))
                .filter(|t| unidirectional::transfer_count(t) <= MAX_TRANSFERS)
        }
        _ => None,
    };
    match trains {
        Some(trains) => (
            unidirectional::schedule_of_trains(instance, &trains),
            algorithm,
        ),
        None => {
            let trains = unidirectional::convoy_trains(instance, MAX_TRANSFERS);
            (
                unidirectional::schedule_of_trains(instance, &trains),
                RingAlgorithm::UnidirectionalConvoys,
            )
        }
    }
}

/// A bidirectional path turned round: processor i becomes n - 1 - i and its
/// two links swap, so that the flows going backwards on `instance` go forwards
/// on it (the link left out stays the one between the ends). `None` for other
/// rings. O(n).
fn turned_round(instance: &RingInstance) -> Option<RingInstance> {
    if !instance.is_path() || instance.kind() != RingKind::Bidirectional {
        return None;
    }
    let mut spec = instance.to_spec();
    spec.processors.reverse();
    for p in &mut spec.processors {
        let c_pred = p.c_pred?;
        (p.c_succ, p.c_pred) = (c_pred, Some(p.c_succ));
        (p.l_succ, p.l_pred) = (p.l_pred, p.l_succ);
    }
    RingInstance::from_spec(spec).ok()
}

/// A schedule of [`turned_round`]'s path on the `n` processors of the path it
/// came from. O(m log m).
fn turned_back(n: usize, schedule: Schedule) -> Schedule {
    let back = |t: Transfer| Transfer {
        from: n - 1 - t.from,
        to: n - 1 - t.to,
        ..t
    };
    Schedule::new(schedule.transfers.into_iter().map(back).collect())
}

/// Refuses a unidirectional ring for the planners of bidirectional ones.
fn bidirectional_only(instance: &RingInstance, algorithm: RingAlgorithm) -> Result<(), PlanError> {
    if instance.kind() == RingKind::Bidirectional {
        Ok(())
    } else {
        Err(not_applicable(
            algorithm,
            "it needs a bidirectional ring (\"ring\": \"bidirectional\", with c_pred on every processor), and this one is unidirectional",
        ))
    }
}

/// Rings with start-ups of at least this many processors make the papers' plan,
/// and time it under the start-ups up to twice the start-up bound, on a second
/// thread while the start-up planner runs.
const PLAN_BESIDE_MIN_PROCESSORS: usize = 1000;

/// The schedule an algorithm makes for a ring, and the planner that made it (with
/// `automatic`, list scheduling may hand the ring to the segment scheduler). On a
/// ring with start-ups the papers' planners plan as if there were none, and their
/// schedule is then timed under the start-ups ([`retime_with_startups`](crate::ring::retime_with_startups)).
/// `startup` is the ring's start-up bound when [`plan`] has computed it (the
/// start-up planner picks its circulations by it); on a large unidirectional
/// ring [`plan`] leaves it to the start-up planner's second thread, which
/// computes it here. With the schedule comes its validator report when the
/// planner validated it already (the start-up planner's, checked in its own
/// order while the papers' plan is made beside).
fn run_algorithm(
    instance: &RingInstance,
    algorithm: RingAlgorithm,
    (s6, startup): (Option<&CirculationBound>, &mut Option<StartupBound>),
    automatic: bool,
) -> Result<Made, PlanError> {
    match algorithm {
        RingAlgorithm::StartupBatches => {
            let papers = papers_algorithm(instance, s6);
            if !instance.has_startups() {
                // Without start-ups, the papers' plan, as hetbal chooses it
                // (never refused, asked for or not).
                let (schedule, _) = run_papers_algorithm(instance, papers, s6, true)?;
                return Ok((schedule, algorithm, None));
            }
            // The messages' plan, or the papers' plan timed under the start-ups
            // when it ends earlier (its timing stops once it cannot). On large
            // rings the papers' plan is made and timed on a second thread
            // meanwhile, up to twice the start-up bound (`early`): when the
            // messages' plan ends by then, that timing decides.
            let papers_plan = || run_papers_algorithm(instance, papers, s6, automatic).ok();
            let (batches, papers_plan, timed_early) =
                if instance.len() >= PLAN_BESIDE_MIN_PROCESSORS {
                    let known = startup.clone();
                    let (batches, (bound, plan, timed)) = std::thread::scope(|scope| {
                        let beside = scope.spawn(|| {
                            // The bound, when left to this thread.
                            let bound = known.unwrap_or_else(|| startup_lower_bound(instance));
                            let early = 2.0 * bound.value;
                            let plan = papers_plan();
                            let timed = plan.as_ref().and_then(|(s, _)| {
                                retime_within(instance, s, early, MAX_TRANSFERS)
                            });
                            (bound, plan, Some((timed, early)))
                        });
                        let batches = validated_startup(instance, startup.as_ref(), s6);
                        let beside = beside.join().expect("the papers' planner does not panic");
                        (batches, beside)
                    });
                    *startup = Some(bound);
                    (batches, plan, timed)
                } else {
                    let batches = validated_startup(instance, startup.as_ref(), s6);
                    (batches, papers_plan(), None)
                };
            let (batches, report) = batches;
            let cutoff = batches.makespan();
            let timed = match timed_early {
                // Timed whole within `early`, or stopped after it: the same
                // answer as timing up to the messages' plan when that ends by
                // then.
                Some((timed, early)) if cutoff <= early => timed,
                _ => papers_plan
                    .and_then(|(s, _)| retime_within(instance, &s, cutoff, MAX_TRANSFERS)),
            };
            if let Some(t) = timed.filter(|t| t.makespan() < cutoff) {
                if let Ok(report) = validate(instance, &t) {
                    return Ok((t, algorithm, Some(report)));
                }
            }
            Ok((batches, algorithm, report))
        }
        RingAlgorithm::ExactSearch if instance.has_startups() => {
            let (heuristic, _, report) =
                run_algorithm(instance, RingAlgorithm::StartupBatches, (s6, startup), true)?;
            match startup_exhaustive_pruned(
                instance,
                heuristic.makespan(),
                STARTUP_FORCED_EXACT_MAX_STATES,
            ) {
                Ok(Some(schedule)) => Ok((schedule, algorithm, None)),
                Ok(None) => Ok((heuristic, RingAlgorithm::StartupBatches, report)),
                Err(e) => Err(not_applicable(algorithm, e.to_string())),
            }
        }
        _ => {
            let (schedule, algorithm) = run_papers_algorithm(instance, algorithm, s6, automatic)?;
            if instance.has_startups() {
                match retime_within(instance, &schedule, f64::INFINITY, MAX_TRANSFERS) {
                    Some(timed) => Ok((timed, algorithm, None)),
                    None => Err(not_applicable(algorithm, format!(
                        "it plans as if there were no start-ups, and its plan under them would take more than {MAX_TRANSFERS} messages"
                    ))),
                }
            } else {
                Ok((schedule, algorithm, None))
            }
        }
    }
}

/// A schedule made by [`run_algorithm`], its planner, and its validator report
/// when the planner validated it already.
type Made = (Schedule, RingAlgorithm, Option<ScheduleReport>);

/// The start-up planner's schedule, validated in the planner's order (link
/// after link, each link's transfers in time order: the validator reads each
/// processor's sends in memory order, twice as fast as in the order of
/// starts on the benchmark's rings of 10^4 and 10^5 processors), then sorted;
/// with its report when it is valid (else [`plan`] mends it).
fn validated_startup(
    instance: &RingInstance,
    bound: Option<&StartupBound>,
    s6: Option<&CirculationBound>,
) -> (Schedule, Option<ScheduleReport>) {
    let planned = Schedule {
        transfers: startup_transfers_with(instance, bound, s6),
    };
    let report = validate(instance, &planned).ok();
    (planned.sorted(), report)
}

/// [`run_algorithm`] for the papers' planners, in the papers' model.
fn run_papers_algorithm(
    instance: &RingInstance,
    algorithm: RingAlgorithm,
    s6: Option<&CirculationBound>,
    automatic: bool,
) -> Result<(Schedule, RingAlgorithm), PlanError> {
    outside_papers_model(instance, algorithm)?;
    match algorithm {
        RingAlgorithm::UnidirectionalHomogeneous => {
            let c = instance.c_succ()[0];
            if let Some(i) = instance.c_succ().iter().position(|&x| x != c) {
                return Err(not_applicable(algorithm, format!(
                    "it needs equal successor costs, but processor {i} ({}) has c_succ {} and processor 0 has {c}",
                    instance.name(i),
                    instance.c_succ()[i]
                )));
            }
            Ok((homogeneous_unidirectional(instance), algorithm))
        }
        RingAlgorithm::UnidirectionalHeterogeneous
        | RingAlgorithm::UnidirectionalBatched
        | RingAlgorithm::UnidirectionalConvoys => Ok(unidirectional_trains(instance, algorithm)),
        RingAlgorithm::BidirectionalBlocks => match block_schedule(instance) {
            Some(schedule) => Ok((schedule, algorithm)),
            None => Err(not_applicable(algorithm, NEEDS_HOMOGENEOUS)),
        },
        RingAlgorithm::PaperAlgorithm3 => {
            if instance.kind() != RingKind::Bidirectional || !instance.is_homogeneous() {
                return Err(not_applicable(algorithm, NEEDS_HOMOGENEOUS));
            }
            // O(n^2) a step, up to twice Lemma 6's steps plus n.
            let n = instance.len() as u128;
            let lemma6 = homogeneous_bidirectional_bound(instance)
                .map_or(0, |b| (b / instance.c_succ()[0]).round() as u128);
            let steps = lemma6.saturating_mul(2).saturating_add(n);
            if n.saturating_mul(n).saturating_mul(steps) > MAX_LIST_ITEMS {
                return Err(not_applicable(algorithm, format!(
                    "the paper's rules take O(n^2) a synchronous step, and this ring of {n} processors may take {steps} steps (twice Lemma 6's {lemma6}, plus n): n^2 times that is above {MAX_LIST_ITEMS} (the default planner, bidirectional-blocks, plans it)"
                )));
            }
            Ok((paper_algorithm3(instance), algorithm))
        }
        RingAlgorithm::System8 => {
            bidirectional_only(instance, algorithm)?;
            let (x, _) = light_circulation(instance).ok_or_else(|| {
                not_applicable(
                    algorithm,
                    "no circulation is light: some processor must forward items",
                )
            })?;
            Ok((
                light_flows_schedule(instance, &circulation_flows(instance, x)),
                algorithm,
            ))
        }
        RingAlgorithm::BidirectionalLemma9
        | RingAlgorithm::BidirectionalList
        | RingAlgorithm::BidirectionalSegments => {
            match bidirectional_schedule(instance, algorithm, s6, automatic) {
                // Chosen by hetbal, a valid ring is never refused: its clockwise
                // flows by Algorithm 2 (in convoys beyond the transfer limit),
                // valid on a bidirectional ring too; on a path whose flows all
                // go backwards, the same on the path turned round; on a path
                // whose flows go both ways, the start-up planner's messages
                // (as soon as possible, every item held sent whenever a port
                // is free: it plans any ring).
                Err(_) if automatic => {
                    let clockwise = RingAlgorithm::UnidirectionalHeterogeneous;
                    let forwards =
                        |ring: &RingInstance| outside_papers_model(ring, clockwise).is_ok();
                    if forwards(instance) {
                        Ok(unidirectional_trains(instance, clockwise))
                    } else if let Some(turned) = turned_round(instance).filter(forwards) {
                        let (schedule, algorithm) = unidirectional_trains(&turned, clockwise);
                        Ok((turned_back(instance.len(), schedule), algorithm))
                    } else {
                        Ok((startup_schedule(instance), RingAlgorithm::StartupBatches))
                    }
                }
                made => made,
            }
        }
        RingAlgorithm::ExactSearch => {
            // The default planner's makespan bounds the search.
            let default = default_algorithm_with(instance, s6);
            let (heuristic, _, _) = run_algorithm(instance, default, (s6, &mut None), true)?;
            match exact_schedule(instance, heuristic.makespan(), FORCED_EXACT_MAX_STATES) {
                Ok(Some(exact)) => Ok((exact, algorithm)),
                Ok(None) => Ok((heuristic, default)),
                Err(e) => Err(not_applicable(algorithm, e.to_string())),
            }
        }
        RingAlgorithm::StartupBatches => Ok((startup_schedule(instance), algorithm)),
    }
}

/// The bidirectional planners: the best schedule over every optimal circulation.
fn bidirectional_schedule(
    instance: &RingInstance,
    algorithm: RingAlgorithm,
    s6: Option<&CirculationBound>,
    automatic: bool,
) -> Result<(Schedule, RingAlgorithm), PlanError> {
    bidirectional_only(instance, algorithm)?;
    let s6 = s6.expect("System 6 is solved for bidirectional rings");
    let mut best: Option<(Schedule, RingAlgorithm)> = None;
    for &x in &s6.optimal_x {
        let flows = circulation_flows(instance, x);
        let made = match algorithm {
            RingAlgorithm::BidirectionalLemma9 => {
                if !is_light(instance, &flows) {
                    continue;
                }
                (light_flows_schedule(instance, &flows), algorithm)
            }
            RingAlgorithm::BidirectionalSegments => {
                match segments::segment_schedule(instance, &flows, MAX_TRANSFERS) {
                    Some(schedule) => (schedule, algorithm),
                    None => continue,
                }
            }
            _ => bidirectional::best_list_schedule(
                instance,
                x,
                s6.tau,
                LIST_PASSES,
                MAX_LIST_ITEMS,
                automatic,
            )
            .ok_or_else(|| {
                not_applicable(algorithm, format!(
                    "list scheduling works item by item and these flows move more than {MAX_LIST_ITEMS} items"
                ))
            })?,
        };
        if best
            .as_ref()
            .is_none_or(|b| made.0.makespan() < b.0.makespan())
        {
            best = Some(made);
        }
    }
    best.ok_or_else(|| {
        not_applicable(algorithm, match algorithm {
            RingAlgorithm::BidirectionalSegments => format!(
                "no optimal System 6 circulation has a processor that only sends, or its schedule needs more than {MAX_TRANSFERS} transfers"
            ),
            _ => "no optimal System 6 circulation is light (some processor must forward items)"
                .to_string(),
        })
    })
}

/// Refuses a ring whose plans' times could overflow f64: every item crossing
/// every link at the largest cost, with a start-up each, must stay finite (an
/// upper bound on any plan's makespan).
fn check_times_fit(instance: &RingInstance) -> Result<(), PlanError> {
    let costs = instance
        .c_succ()
        .iter()
        .copied()
        .chain(instance.c_pred().iter().flatten().copied());
    let worst_cost = costs.fold(0.0f64, f64::max);
    let worst_startup = instance
        .l_succ()
        .iter()
        .chain(instance.l_pred())
        .copied()
        .fold(0.0f64, f64::max);
    let items = instance.total_items() as f64;
    let hops = instance.len() as f64;
    let worst = items * hops * (worst_cost + worst_startup);
    if worst.is_finite() {
        Ok(())
    } else {
        Err(PlanError::TimesOverflow {
            what: format!(
                "{} items over {} links at up to {worst_cost:e} s per item{}",
                instance.total_items(),
                instance.len(),
                if worst_startup > 0.0 {
                    format!(" and {worst_startup:e} s per message")
                } else {
                    String::new()
                }
            ),
        })
    }
}

/// A planner's schedule that its validation rejected, mended when its times
/// rounded beyond what f64 resolves (items times costs past 2^52, or costs
/// 2^40 apart): the same transfers with the durations the validator computes,
/// else the same transfers in the same order timed by the model's own
/// formulas (within the limit of transfers), whichever is valid first. An
/// algorithm the caller asked for (`asked`) is mended only when every
/// transfer keeps its times to 1e-9 of the makespan: a schedule that breaks
/// the model by more (the paper's Algorithm 3 on some rings) is reported. One
/// that hetbal chose is mended whenever the retimed schedule is valid: the
/// planners' float arithmetic can lose whole items at those edges, and the
/// user asked for a plan, not for that planner. `None` otherwise.
fn mended(
    instance: &RingInstance,
    schedule: &Schedule,
    asked: bool,
) -> Option<(Schedule, ScheduleReport)> {
    let durations = || Some(with_model_durations(instance, schedule));
    let retimed = || retime_within(instance, schedule, f64::INFINITY, MAX_TRANSFERS);
    // The second only if the first fails.
    std::iter::once_with(durations)
        .chain(std::iter::once_with(retimed))
        .flatten()
        .filter(|mended| !asked || only_rounded(schedule, mended))
        .find_map(|mended| validate(instance, &mended).ok().map(|r| (mended, r)))
}

/// Whether `mended` has the transfers of `schedule`, each starting and ending
/// within 1e-9 of the makespan (or of 1 s) of where it did. O(m log m).
fn only_rounded(schedule: &Schedule, mended: &Schedule) -> bool {
    let by_link = |s: &Schedule| {
        let mut t = s.transfers.clone();
        t.sort_by(|a, b| {
            (a.from, a.to)
                .cmp(&(b.from, b.to))
                .then(a.start.total_cmp(&b.start))
        });
        t
    };
    let scale = schedule.makespan().max(1.0);
    let close = |a: f64, b: f64| (a - b).abs() <= 1e-9 * scale;
    let (before, after) = (by_link(schedule), by_link(mended));
    before.len() == after.len()
        && before.iter().zip(&after).all(|(a, b)| {
            (a.from, a.to, a.items) == (b.from, b.to, b.items)
                && close(a.start, b.start)
                && close(a.end, b.end)
        })
}

/// Plans a redistribution and checks it.
///
/// Runs `algorithm` (or [`default_algorithm`]), validates its schedule with
/// [`validate`] (the one validation on the way to the user: the report travels in
/// [`RingPlan::report`]), measures the makespan on the schedule and compares it with
/// the strongest lower bound known for the ring, [`lower_bound`].
/// When hetbal chose the algorithm and a small ring (at most 12 processors and 255
/// items, costs multiples of a unit 2^-k) misses the bound, [`exact_schedule`]
/// settles it within a million search states: the optimum it finds becomes the
/// bound, and its schedule replaces the planner's when it ends earlier (algorithm
/// `exact-search`), so the plan is optimal.
///
/// At the edges of f64 (items times costs past 2^52, costs 2^40 and more
/// apart) a planner's float times can drift past the validator's tolerance,
/// or lose whole items. A schedule that fails validation is then mended
/// before it is refused: its transfers with the durations the validator
/// computes, else the same transfers in the same order timed by the model's
/// formulas. An algorithm the caller asked for is mended only where every
/// transfer keeps its times to 1e-9 of the makespan (the paper's Algorithm 3
/// breaks the model on some rings, and says so); one hetbal chose, whenever
/// the mended schedule is valid. When hetbal chose list scheduling and the
/// flows move more items than it takes, a bidirectional ring gets Algorithm 2
/// on its clockwise flows (convoys beyond the transfer limit), a path whose
/// flows all go backwards the same on the path turned round, and a path whose
/// flows go both ways the start-up planner's messages.
///
/// # Arguments
/// * `instance` - a validated ring;
/// * `algorithm` - `None` to let hetbal choose.
///
/// # Returns
/// The plan, with `optimal` set only when the valid schedule meets a proven lower
/// bound, and the validator's report of its schedule.
///
/// # Errors
/// [`PlanError::NotApplicable`] when the forced algorithm does not apply to the ring
/// (a papers' planner on a ring with start-ups also when timing its plan under
/// them would take more than [`MAX_TRANSFERS`] messages);
/// [`PlanError::InvalidSchedule`] if a planner's schedule fails validation and
/// cannot be mended (a bug, or the paper's Algorithm 3 where it breaks the model);
/// [`PlanError::TimesOverflow`] when the ring's times do not fit in f64.
///
/// # Complexity
/// O(n + m log m) for m transfers on unidirectional rings (validation dominates); on
/// bidirectional rings add [`circulation_bound`] and, when flows are not light, O(F log n) for
/// F items moved.
///
/// # Example
/// ```
/// use hetbal::ring::{plan, RingInstance};
/// let ring = RingInstance::unidirectional(&[4, 1, 1], &[2, 2, 2], &[1.0, 3.0, 1.0]).unwrap();
/// let plan = plan(&ring, None).unwrap();
/// assert_eq!(plan.algorithm, "unidirectional-batched");
/// assert_eq!((plan.makespan, plan.lower_bound, plan.optimal), (3.0, 3.0, true));
/// ```
pub fn plan(
    instance: &RingInstance,
    algorithm: Option<RingAlgorithm>,
) -> Result<RingPlan, PlanError> {
    plan_with_startup_bound(instance, algorithm, None)
}

/// [`plan`], given the ring's start-up bound when the caller has computed it
/// already ([`startup_lower_bound`] of the same instance), so that it is not
/// computed twice (the online decider prices a move by the bound first).
pub(crate) fn plan_with_startup_bound(
    instance: &RingInstance,
    algorithm: Option<RingAlgorithm>,
    known: Option<StartupBound>,
) -> Result<RingPlan, PlanError> {
    check_times_fit(instance)?;
    let s6 = (instance.kind() == RingKind::Bidirectional).then(|| circulation_bound(instance));
    let chosen_by_hetbal = algorithm.is_none();
    let algorithm = algorithm.unwrap_or_else(|| default_algorithm_with(instance, s6.as_ref()));
    // The start-up bound, once: the start-up planner's circulations and the
    // plan's bound.
    // (On a large unidirectional ring, where the start-up planner does not
    // need it, the start-up planner's second thread computes it.)
    let beside = instance.kind() == RingKind::Unidirectional
        && algorithm == RingAlgorithm::StartupBatches
        && instance.len() >= PLAN_BESIDE_MIN_PROCESSORS;
    let mut startup = match known {
        Some(bound) => Some(bound),
        None if instance.has_startups() && !beside => Some(startup_lower_bound(instance)),
        None => None,
    };
    let (mut schedule, mut algorithm, validated) = run_algorithm(
        instance,
        algorithm,
        (s6.as_ref(), &mut startup),
        chosen_by_hetbal,
    )?;
    if instance.has_startups() && startup.is_none() {
        startup = Some(startup_lower_bound(instance));
    }
    let invalid = |algorithm| {
        move |violations| PlanError::InvalidSchedule {
            algorithm,
            violations,
        }
    };
    let mut report = match validated.map_or_else(|| validate(instance, &schedule), Ok) {
        Ok(report) => report,
        Err(violations) => {
            let (mended, report) = mended(instance, &schedule, !chosen_by_hetbal)
                .ok_or_else(|| invalid(algorithm)(violations))?;
            schedule = mended;
            report
        }
    };
    let mut lower_bound = match &startup {
        Some(bound) => bound.value,
        None => lower_bound_with(instance, s6.as_ref()),
    };
    if algorithm == RingAlgorithm::ExactSearch {
        lower_bound = report.makespan; // the search's optimum
    }
    // A small ring whose bound is missed: the exact search (the exhaustive one
    // under start-ups) settles it, with an optimal schedule that replaces the
    // plan's when it ends earlier.
    let missed = chosen_by_hetbal && report.makespan > lower_bound * (1.0 + 1e-9);
    let exact = if !missed {
        None
    } else if instance.has_startups() {
        (instance.len() <= STARTUP_EXACT_MAX_PROCESSORS
            && instance.total_items() <= STARTUP_EXACT_MAX_ITEMS)
            .then(|| {
                let settled = startup_settle(instance, report.makespan, STARTUP_EXACT_MAX_STATES);
                settled.map(|(earlier, bound)| {
                    lower_bound = lower_bound.max(bound);
                    earlier
                })
            })
    } else {
        (instance.len() <= EXACT_MAX_PROCESSORS && instance.total_items() <= EXACT_MAX_ITEMS)
            .then(|| exact_schedule(instance, report.makespan, EXACT_MAX_STATES))
    };
    if let Some(Ok(Some(exact))) = exact {
        lower_bound = lower_bound.max(exact.makespan());
        if exact.makespan() < report.makespan {
            report = validate(instance, &exact).map_err(invalid(RingAlgorithm::ExactSearch))?;
            schedule = exact;
            algorithm = RingAlgorithm::ExactSearch;
        }
    }
    let makespan = report.makespan;
    let optimal = makespan <= lower_bound * (1.0 + 1e-9);
    let light = (0..instance.len()).all(|i| {
        u128::from(report.sent_to_succ[i]) + u128::from(report.sent_to_pred[i])
            <= u128::from(instance.loads()[i])
    });
    Ok(RingPlan {
        ring: instance.kind(),
        algorithm: algorithm.name().to_string(),
        makespan,
        lower_bound,
        optimal,
        light,
        flows: net_flows(instance, &schedule),
        transfers: schedule.transfers,
        report,
    })
}
