//! Exact solvers for small rings: breadth-first search over every schedule in
//! discrete time, plain ([`exhaustive_optimum`], the independent reference) or
//! pruned by a lower bound on what remains ([`exact_optimum`], the one
//! [`plan`](crate::ring::plan) uses to prove optimality).

use std::collections::HashSet;
use std::fmt;

use crate::ring::{RingInstance, RingKind};
use crate::schedule::{Schedule, Transfer};

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

/// The largest unit 2^-k (k <= 6) of which every cost is a whole multiple below 256.
fn time_unit(instance: &RingInstance) -> Result<f64, ExactError> {
    let mut costs: Vec<f64> = instance.c_succ().to_vec();
    if instance.kind() == RingKind::Bidirectional {
        costs.extend(instance.c_pred().iter().flatten());
    }
    (0..=6)
        .map(|k| 0.5f64.powi(k))
        .find(|&u| {
            costs
                .iter()
                .all(|&c| (c / u).fract() == 0.0 && c / u >= 1.0 && c / u < 256.0)
        })
        .ok_or(ExactError::CostsNotDiscrete)
}

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
    let unit = time_unit(instance)?;
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

/// Most processors [`exact_optimum`] handles.
const PRUNED_MAX_PROCESSORS: usize = 12;

/// A search state of [`exact_optimum`], packed: per processor the items held, the
/// direction of the send in progress (0 none, 1 successor, 2 predecessor) and the
/// time units left in it.
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
struct Packed {
    hold: [u8; PRUNED_MAX_PROCESSORS],
    dir: [u8; PRUNED_MAX_PROCESSORS],
    left: [u8; PRUNED_MAX_PROCESSORS],
}

/// The ring in time units, for the pruned search.
struct UnitRing {
    n: usize,
    bidirectional: bool,
    succ_cost: Vec<u32>,
    pred_cost: Vec<u32>,
    target: Vec<u8>,
}

impl UnitRing {
    fn receiver(&self, i: usize, d: u8) -> usize {
        if d == 1 {
            (i + 1) % self.n
        } else {
            (i + self.n - 1) % self.n
        }
    }

    /// A lower bound, in units, on the time any schedule still needs from `s`: the
    /// integer optimum of System 6 on what remains, with each port first busy with
    /// the transfer in progress. Every continuation moves net flows `x + S_j` for the
    /// remaining imbalances and some integer `x`, and each port handles its items
    /// one at a time after the current one; the bound is convex in `x`.
    fn remaining_bound(&self, s: &Packed) -> u32 {
        let n = self.n;
        let mut eventual = [0i32; PRUNED_MAX_PROCESSORS];
        let mut receive_busy = [0u32; PRUNED_MAX_PROCESSORS];
        for i in 0..n {
            eventual[i] += i32::from(s.hold[i]);
            if s.dir[i] != 0 {
                let r = self.receiver(i, s.dir[i]);
                eventual[r] += 1;
                receive_busy[r] = u32::from(s.left[i]);
            }
        }
        let mut prefix = [0i32; PRUNED_MAX_PROCESSORS];
        let mut sum = 0;
        for i in 0..n {
            sum += eventual[i] - i32::from(self.target[i]);
            prefix[i] = sum;
        }
        let tau = |x: i32| -> u32 {
            let mut worst = 0u32;
            for i in 0..n {
                let p = (i + n - 1) % n;
                let (out, inc) = (x + prefix[i], x + prefix[p]); // links i and i-1
                let pos = |f: i32| f.max(0) as u32;
                let neg = |f: i32| (-f).max(0) as u32;
                let send = u32::from(s.left[i])
                    + pos(out) * self.succ_cost[i]
                    + neg(inc) * self.pred_cost[i];
                let receive = receive_busy[i]
                    + pos(inc) * self.succ_cost[p]
                    + neg(out) * self.pred_cost[(i + 1) % n];
                worst = worst.max(send).max(receive);
            }
            worst
        };
        let lo = -prefix[..n].iter().copied().max().unwrap_or(0);
        let hi = -prefix[..n].iter().copied().min().unwrap_or(0);
        if !self.bidirectional {
            return tau(hi); // every net flow >= 0: the smallest circulation
        }
        // Integer ternary search on a convex function over [lo, hi].
        let (mut a, mut b) = (lo, hi);
        while b - a > 2 {
            let m1 = a + (b - a) / 3;
            let m2 = b - (b - a) / 3;
            if tau(m1) <= tau(m2) {
                b = m2;
            } else {
                a = m1;
            }
        }
        (a..=b).map(tau).min().unwrap_or(0)
    }
}

/// The least makespan of any schedule of `instance`, if some schedule ends by
/// `horizon`: the search of [`exhaustive_optimum`] with pruning. A state reached at
/// unit t is dropped when t plus a lower bound on what remains (the integer optimum
/// of System 6 on the remaining imbalances, each port first finishing its transfer
/// in progress) exceeds the horizon. The bound is valid for every continuation, so
/// the answer is the same as the plain search's; the tests check that they agree.
///
/// # Returns
/// `Ok(Some(t))`: the optimum is t <= horizon; `Ok(None)`: every schedule ends after
/// `horizon`.
///
/// # Errors
/// [`ExactError`] when the costs are not discrete, the ring has more than 12
/// processors or 255 items, or more than `max_states` states are met.
///
/// # Complexity
/// Exponential in the worst case; O(n log F) per state for the bound, 48 bytes of
/// memory per state. Settles most rings of up to 8 processors and a hundred items
/// in well under a second.
///
/// # Example
/// ```
/// use hetbal::ring::{exact_optimum, RingInstance};
/// // model.md: System 6 says 6, the true optimum is 7.
/// let ring = RingInstance::bidirectional(
///     &[5, 1, 1, 1], &[1, 1, 1, 5], &[1.0, 2.0, 1.0, 3.0], &[3.0; 4]).unwrap();
/// assert_eq!(exact_optimum(&ring, 10.0, 100_000), Ok(Some(7.0)));
/// assert_eq!(exact_optimum(&ring, 6.5, 100_000), Ok(None));
/// ```
pub fn exact_optimum(
    instance: &RingInstance,
    horizon: f64,
    max_states: usize,
) -> Result<Option<f64>, ExactError> {
    Ok(exact_schedule(instance, horizon, max_states)?.map(|s| s.makespan()))
}

/// An optimal schedule of `instance`, if some schedule ends by `horizon`: the
/// pruned search of [`exact_optimum`], remembering how each state was reached.
/// Consecutive items on one link form one transfer.
///
/// # Returns
/// `Ok(Some(schedule))` with the least makespan, at most `horizon`; `Ok(None)`:
/// every schedule ends after `horizon`.
///
/// # Errors
/// As [`exact_optimum`].
///
/// # Complexity
/// As [`exact_optimum`].
///
/// # Example
/// ```
/// use hetbal::ring::{exact_schedule, RingInstance};
/// use hetbal::validate;
/// let ring = RingInstance::bidirectional(
///     &[5, 1, 1, 1], &[1, 1, 1, 5], &[1.0, 2.0, 1.0, 3.0], &[3.0; 4]).unwrap();
/// let schedule = exact_schedule(&ring, 10.0, 100_000).unwrap().unwrap();
/// assert_eq!(schedule.makespan(), 7.0);
/// assert!(validate(&ring, &schedule).is_ok());
/// ```
pub fn exact_schedule(
    instance: &RingInstance,
    horizon: f64,
    max_states: usize,
) -> Result<Option<Schedule>, ExactError> {
    let n = instance.len();
    if n > PRUNED_MAX_PROCESSORS || instance.total_items() > 255 {
        return Err(ExactError::TooLarge);
    }
    let bidirectional = instance.kind() == RingKind::Bidirectional;
    let unit = time_unit(instance)?;
    let units = |c: f64| (c / unit) as u32;
    let ring = UnitRing {
        n,
        bidirectional,
        succ_cost: instance.c_succ().iter().map(|&c| units(c)).collect(),
        pred_cost: instance
            .c_pred()
            .iter()
            .map(|c| c.map_or(0, units))
            .collect(),
        target: instance.targets().iter().map(|&t| t as u8).collect(),
    };
    let steps = (horizon / unit + 1e-9).floor().max(0.0) as u32;
    let mut start = Packed {
        hold: [0; PRUNED_MAX_PROCESSORS],
        dir: [0; PRUNED_MAX_PROCESSORS],
        left: [0; PRUNED_MAX_PROCESSORS],
    };
    for (h, &l) in start.hold.iter_mut().zip(instance.loads()) {
        *h = l as u8;
    }
    if ring.remaining_bound(&start) > steps {
        return Ok(None);
    }
    let goal = |s: &Packed| s.dir[..n].iter().all(|&d| d == 0) && s.hold[..n] == ring.target[..];
    // Every state kept, with the state it came from and the sends started then
    // (2 bits per processor); the frontiers hold indices into it.
    let mut reached: Vec<Reached> = vec![Reached {
        state: start,
        parent: u32::MAX,
        started: 0,
    }];
    let mut seen: HashSet<Packed> = HashSet::new();
    seen.insert(start);
    let mut frontier: Vec<u32> = vec![0];
    let mut next: Vec<u32> = Vec::new();
    let dirs: &[u8] = if bidirectional { &[0, 1, 2] } else { &[0, 1] };
    let mut stack: Vec<(usize, Packed, u16, u32)> = Vec::new();
    for t in 0..=steps {
        if let Some(&end) = frontier.iter().find(|&&k| goal(&reached[k as usize].state)) {
            return Ok(Some(rebuild(&ring, &reached, end, unit)));
        }
        if t == steps || frontier.is_empty() {
            break;
        }
        next.clear();
        for &from in &frontier {
            let s = reached[from as usize].state;
            // Receivers busy with a transfer in progress, as a bit set.
            let mut receiving = 0u16;
            for i in 0..n {
                if s.dir[i] != 0 {
                    receiving |= 1 << ring.receiver(i, s.dir[i]);
                }
            }
            let senders: Vec<usize> = (0..n).filter(|&i| s.dir[i] == 0 && s.hold[i] > 0).collect();
            stack.clear();
            stack.push((0, s, receiving, 0));
            while let Some((k, state, receiving, started)) = stack.pop() {
                if k == senders.len() {
                    let mut after = state;
                    for i in 0..n {
                        if after.dir[i] != 0 {
                            after.left[i] -= 1;
                            if after.left[i] == 0 {
                                let r = ring.receiver(i, after.dir[i]);
                                after.hold[r] += 1;
                                after.dir[i] = 0;
                            }
                        }
                    }
                    if seen.insert(after) {
                        if seen.len() > max_states {
                            return Err(ExactError::Budget { states: seen.len() });
                        }
                        if t + 1 + ring.remaining_bound(&after) <= steps {
                            next.push(reached.len() as u32);
                            reached.push(Reached {
                                state: after,
                                parent: from,
                                started,
                            });
                        }
                    }
                    continue;
                }
                let i = senders[k];
                for &d in dirs {
                    if d == 0 {
                        stack.push((k + 1, state, receiving, started));
                        continue;
                    }
                    let r = ring.receiver(i, d);
                    if receiving & (1 << r) != 0 {
                        continue;
                    }
                    let mut sent = state;
                    sent.hold[i] -= 1;
                    sent.dir[i] = d;
                    let cost = if d == 1 {
                        ring.succ_cost[i]
                    } else {
                        ring.pred_cost[i]
                    };
                    sent.left[i] = cost as u8;
                    stack.push((
                        k + 1,
                        sent,
                        receiving | (1 << r),
                        started | u32::from(d) << (2 * i),
                    ));
                }
            }
        }
        std::mem::swap(&mut frontier, &mut next);
    }
    Ok(None)
}

/// A state of the pruned search, how it was reached, and the sends started then.
struct Reached {
    state: Packed,
    parent: u32,
    started: u32,
}

/// The schedule leading to `reached[end]`: the sends started at each unit, items
/// on one link back to back merged into one transfer.
fn rebuild(ring: &UnitRing, reached: &[Reached], end: u32, unit: f64) -> Schedule {
    let mut steps: Vec<u32> = Vec::new(); // the sends started at t = 0, 1, ...
    let mut k = end;
    while reached[k as usize].parent != u32::MAX {
        steps.push(reached[k as usize].started);
        k = reached[k as usize].parent;
    }
    steps.reverse();
    let mut transfers: Vec<Transfer> = Vec::new();
    let mut last = vec![[usize::MAX; 2]; ring.n];
    for (t, &started) in steps.iter().enumerate() {
        for (i, last) in last.iter_mut().enumerate() {
            let d = ((started >> (2 * i)) & 3) as u8;
            if d == 0 {
                continue;
            }
            let to = ring.receiver(i, d);
            let cost = if d == 1 {
                ring.succ_cost[i]
            } else {
                ring.pred_cost[i]
            };
            let (start, end) = (t as f64 * unit, (t as f64 + f64::from(cost)) * unit);
            let slot = usize::from(d - 1);
            match last[slot] {
                previous if previous != usize::MAX && transfers[previous].end == start => {
                    transfers[previous].items += 1;
                    transfers[previous].end = end;
                }
                _ => {
                    last[slot] = transfers.len();
                    transfers.push(Transfer {
                        from: i,
                        to,
                        items: 1,
                        start,
                        end,
                    });
                }
            }
        }
    }
    Schedule::new(transfers)
}
