//! An exact solver for tiny rings: breadth-first search over every schedule.

use std::collections::HashSet;
use std::fmt;

use crate::ring::{RingInstance, RingKind};

/// Why the exhaustive search could not answer.
#[derive(Clone, Debug, PartialEq)]
pub enum ExactError {
    /// The costs are not all whole multiples of one unit 2^-k (k <= 6) below 256
    /// units: the search works in discrete time.
    CostsNotDiscrete,
    /// More items than the search can count (255) or more than 12 processors.
    TooLarge,
    /// The search met more states than allowed before answering.
    Budget {
        /// States explored.
        states: usize,
    },
}

impl fmt::Display for ExactError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ExactError::CostsNotDiscrete => f.write_str(
                "the costs are not whole multiples of a common unit 2^-k: the exact search works in discrete time",
            ),
            ExactError::TooLarge => {
                f.write_str("the ring is too large for the exact search (at most 12 processors and 255 items)")
            }
            ExactError::Budget { states } => {
                write!(f, "the exact search stopped after {states} states")
            }
        }
    }
}

impl std::error::Error for ExactError {}

/// Per processor: items held, direction of the send in progress (0 none, 1 to the
/// successor, 2 to the predecessor) and time units left in it.
#[derive(Clone, PartialEq, Eq, Hash)]
struct State {
    hold: Vec<u8>,
    dir: Vec<u8>,
    left: Vec<u8>,
}

/// The least makespan of any schedule of `instance`, if some schedule ends by
/// `horizon`, by breadth-first search over all schedules in discrete time.
///
/// With every cost a whole number of units, some optimal schedule starts every
/// transfer at a whole number of units (shift each start to the latest unit not
/// after it; availability and one-port constraints keep holding), so searching unit
/// by unit is exact. At each unit, every processor whose sending port is free and
/// which holds an item may start sending one to a neighbour whose receiving port is
/// free (items that arrive at t may leave at t); states already seen at an earlier
/// unit are not explored again.
///
/// # Returns
/// `Ok(Some(t))`: the optimum is t <= horizon; `Ok(None)`: every schedule ends after
/// `horizon`.
///
/// # Errors
/// [`ExactError`] when the costs are not discrete, the ring is too large, or more
/// than `max_states` states are met.
///
/// # Complexity
/// Exponential: meant for rings of a few processors and a few dozen items.
///
/// # Example
/// ```
/// use hetbal::ring::{exhaustive_optimum, RingInstance};
/// // model.md: System 6 says 6, the true optimum is 7.
/// let ring = RingInstance::bidirectional(
///     &[5, 1, 1, 1], &[1, 1, 1, 5], &[1.0, 2.0, 1.0, 3.0], &[3.0; 4]).unwrap();
/// assert_eq!(exhaustive_optimum(&ring, 10.0, 1_000_000), Ok(Some(7.0)));
/// assert_eq!(exhaustive_optimum(&ring, 6.5, 1_000_000), Ok(None));
/// ```
pub fn exhaustive_optimum(
    instance: &RingInstance,
    horizon: f64,
    max_states: usize,
) -> Result<Option<f64>, ExactError> {
    let n = instance.len();
    if n > 12 || instance.total_items() > 255 {
        return Err(ExactError::TooLarge);
    }
    let bidirectional = instance.kind() == RingKind::Bidirectional;
    let mut costs: Vec<f64> = instance.c_succ().to_vec();
    if bidirectional {
        costs.extend(instance.c_pred().iter().flatten());
    }
    let unit = (0..=6)
        .map(|k| 0.5f64.powi(k))
        .find(|&u| {
            costs
                .iter()
                .all(|&c| (c / u).fract() == 0.0 && c / u >= 1.0 && c / u < 256.0)
        })
        .ok_or(ExactError::CostsNotDiscrete)?;
    let units = |c: f64| (c / unit) as u8;
    let succ_cost: Vec<u8> = instance.c_succ().iter().map(|&c| units(c)).collect();
    let pred_cost: Vec<u8> = instance
        .c_pred()
        .iter()
        .map(|c| c.map_or(0, units))
        .collect();
    let steps = (horizon / unit + 1e-9).floor() as u64;
    let target: Vec<u8> = instance.targets().iter().map(|&t| t as u8).collect();
    let start = State {
        hold: instance.loads().iter().map(|&l| l as u8).collect(),
        dir: vec![0; n],
        left: vec![0; n],
    };
    let receiver = |i: usize, d: u8| if d == 1 { (i + 1) % n } else { (i + n - 1) % n };
    let goal = |s: &State| s.dir.iter().all(|&d| d == 0) && s.hold == target;
    let mut seen: HashSet<State> = HashSet::new();
    seen.insert(start.clone());
    let mut frontier = vec![start];
    let mut next: Vec<State> = Vec::new();
    let dirs: &[u8] = if bidirectional { &[0, 1, 2] } else { &[0, 1] };
    for t in 0..=steps {
        if frontier.iter().any(goal) {
            return Ok(Some(t as f64 * unit));
        }
        if t == steps || frontier.is_empty() {
            break;
        }
        next.clear();
        for s in &frontier {
            // Every choice of new sends, by depth-first enumeration over senders.
            let mut receiving = vec![false; n];
            for i in 0..n {
                if s.dir[i] != 0 {
                    receiving[receiver(i, s.dir[i])] = true;
                }
            }
            let senders: Vec<usize> = (0..n).filter(|&i| s.dir[i] == 0 && s.hold[i] > 0).collect();
            let mut stack: Vec<(usize, State, Vec<bool>)> = vec![(0, s.clone(), receiving)];
            while let Some((k, state, receiving)) = stack.pop() {
                if k == senders.len() {
                    // One unit passes: sends that end deliver their item.
                    let mut after = state;
                    for i in 0..n {
                        if after.dir[i] != 0 {
                            after.left[i] -= 1;
                            if after.left[i] == 0 {
                                let r = receiver(i, after.dir[i]);
                                after.hold[r] += 1;
                                after.dir[i] = 0;
                            }
                        }
                    }
                    if seen.insert(after.clone()) {
                        if seen.len() > max_states {
                            return Err(ExactError::Budget { states: seen.len() });
                        }
                        next.push(after);
                    }
                    continue;
                }
                let i = senders[k];
                for &d in dirs {
                    if d == 0 {
                        stack.push((k + 1, state.clone(), receiving.clone()));
                        continue;
                    }
                    let r = receiver(i, d);
                    if receiving[r] {
                        continue;
                    }
                    let mut sent = state.clone();
                    sent.hold[i] -= 1;
                    sent.dir[i] = d;
                    sent.left[i] = if d == 1 { succ_cost[i] } else { pred_cost[i] };
                    let mut busy = receiving.clone();
                    busy[r] = true;
                    stack.push((k + 1, sent, busy));
                }
            }
        }
        std::mem::swap(&mut frontier, &mut next);
    }
    Ok(None)
}
