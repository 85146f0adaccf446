//! How much to move: the tolerance that pays over the iterations left.

use serde::Serialize;

use super::prefix::Weight;
use super::shares::times_and_weights;
use super::{move_schedule, partition_with_movement, MovePlan, MovingPartition, PartitionError};

/// The tolerances [`choose_tolerance`] tries by default: 0 (the optimum that
/// moves least) to 50 % above it.
pub const TOLERANCES: [f64; 8] = [0.0, 0.01, 0.02, 0.05, 0.1, 0.2, 0.3, 0.5];

/// One tolerance tried: the iterations left at its bottleneck, after its move.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Candidate {
    /// The tolerance (None: stay, move nothing).
    pub tolerance: Option<f64>,
    /// The bottleneck of its partition (seconds per iteration).
    pub bottleneck: f64,
    /// The makespan of its moves (0 to stay).
    pub move_time: f64,
    /// Bytes moved.
    pub moved_bytes: u64,
    /// `move_time + remaining * bottleneck`.
    pub total: f64,
}

/// The tolerance chosen, its partition and moves, and every candidate.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Rebalance {
    /// The best candidate's tolerance (None: staying is best).
    pub tolerance: Option<f64>,
    /// Its partition (the current cuts, nothing moved, when staying is best).
    pub partition: MovingPartition,
    /// Its moves (None when staying is best).
    pub moves: Option<MovePlan>,
    /// Every candidate, staying first, then by tolerance.
    pub candidates: Vec<Candidate>,
}

/// Chooses how far from the optimum to stay so that the iterations left end
/// soonest: for staying put and for each tolerance, the least-moving partition
/// ([`partition_with_movement`]), the makespan of its moves
/// ([`move_schedule`]) and `move time + remaining × bottleneck`; the smallest
/// total wins (ties to staying, then to the larger tolerance: less moved).
///
/// This is the trade-off a run-time decider makes with weighted items: with
/// many iterations left the optimum pays for any move; with few, moving part of
/// the way or not at all is better. A decider calls it with the iterations it
/// expects to remain, the link costs it measured and the current cuts; the
/// move times are those of the planned moves, so the choice is as good as the
/// model of the links.
///
/// # Arguments
/// * `weights`, `seconds_per_unit`, `current`, `sizes` - as for
///   [`partition_with_movement`];
/// * `c_succ`, `c_pred` - seconds per byte, as for [`move_schedule`];
/// * `remaining` - iterations left;
/// * `tolerances` - the tolerances to try ([`TOLERANCES`] is a sensible set).
///
/// # Errors
/// As [`partition_with_movement`] and [`move_schedule`];
/// [`PartitionError::Limit`] for an empty list of tolerances.
///
/// # Complexity
/// One least-moving partition and one move schedule per tolerance.
///
/// # Example
/// ```
/// use hetbal::partition::{choose_tolerance, TOLERANCES};
///
/// // Now 5 + 3 items of 1 000 bytes on equal processors; moving one costs 1 s.
/// let w = [1u64; 8];
/// let sizes = [1000u64; 8];
/// let c = [1e-3, 1e-3];
/// let soon = choose_tolerance(&w, &[1.0, 1.0], &[0, 5, 8], Some(&sizes), &c, &c, 0, &TOLERANCES)?;
/// assert_eq!(soon.tolerance, None); // no iteration left: stay
/// let later = choose_tolerance(&w, &[1.0, 1.0], &[0, 5, 8], Some(&sizes), &c, &c, 10, &TOLERANCES)?;
/// assert_eq!(later.tolerance, Some(0.2)); // 10 x 4 s + 1 s beats 10 x 5 s; 0.2 moves as little
/// # Ok::<(), hetbal::partition::PartitionError>(())
/// ```
#[allow(clippy::too_many_arguments)]
pub fn choose_tolerance<W: Weight>(
    weights: &[W],
    seconds_per_unit: &[f64],
    current: &[u64],
    sizes: Option<&[u64]>,
    c_succ: &[f64],
    c_pred: &[f64],
    remaining: u64,
    tolerances: &[f64],
) -> Result<Rebalance, PartitionError> {
    let mut best: Option<(f64, MovingPartition, MovePlan, f64)> = None;
    let mut candidates = Vec::with_capacity(tolerances.len() + 1);
    let mut sorted = tolerances.to_vec();
    sorted.sort_by(|a, b| a.total_cmp(b));
    let mut stay_total = 0.0;
    let mut stay: Option<MovingPartition> = None;
    for &tolerance in &sorted {
        let moving = partition_with_movement(weights, seconds_per_unit, current, tolerance, sizes)?;
        let moves = move_schedule(current, &moving.cuts, sizes, c_succ, c_pred)?;
        if candidates.is_empty() {
            // Staying: the current cuts' bottleneck (computed as the library does).
            let (times, weights_now) = times_and_weights(weights, seconds_per_unit, current)?;
            let now = times.iter().copied().fold(0.0, f64::max);
            stay_total = remaining as f64 * now;
            stay = Some(MovingPartition {
                cuts: current.to_vec(),
                bottleneck: now,
                times,
                weights: weights_now,
                optimum: moving.optimum.clone(),
                limit: now,
                moved_bytes: 0,
                moved_items: 0,
            });
            candidates.push(Candidate {
                tolerance: None,
                bottleneck: now,
                move_time: 0.0,
                moved_bytes: 0,
                total: stay_total,
            });
        }
        let total = moves.makespan + remaining as f64 * moving.bottleneck;
        candidates.push(Candidate {
            tolerance: Some(tolerance),
            bottleneck: moving.bottleneck,
            move_time: moves.makespan,
            moved_bytes: moving.moved_bytes,
            total,
        });
        if best.as_ref().is_none_or(|b| total <= b.3) {
            best = Some((tolerance, moving, moves, total));
        }
    }
    Ok(match best {
        Some((tolerance, moving, moves, total)) if total < stay_total && moving.moved_bytes > 0 => {
            Rebalance {
                tolerance: Some(tolerance),
                partition: moving,
                moves: Some(moves),
                candidates,
            }
        }
        _ => Rebalance {
            tolerance: None,
            partition: stay.ok_or(PartitionError::Limit {
                what: "choose_tolerance needs at least one tolerance to try".into(),
            })?,
            moves: None,
            candidates,
        },
    })
}
