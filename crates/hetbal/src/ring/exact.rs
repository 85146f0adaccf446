//! Exact solvers for small rings: breadth-first search over every schedule in
//! discrete time, plain ([`exhaustive_optimum`], the independent reference) or
//! pruned by a lower bound on what remains ([`exact_optimum`], the one
//! [`plan`](crate::ring::plan) uses to prove optimality).

use std::collections::HashMap;
use std::fmt;

use crate::ring::bounds::convex_argmin;
use crate::ring::{startup_exhaustive, RingInstance, RingKind};
use crate::ring::{Schedule, Transfer};

/// Why the exhaustive search could not answer.
#[derive(Clone, Debug, PartialEq)]
pub enum ExactError {
    /// The costs are not all whole multiples of one unit 2^-k (k <= 6) below 256
    /// units: the search works in discrete time.
    CostsNotDiscrete,
    /// More items than the search can count (255) or more than 12 processors (16 for the pruned search).
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
                "the costs are not whole multiples of one unit 2^-k (k from 0 to 6) small enough for the exact search, which works in discrete time: without start-ups each cost must be 1 to 255 units; with start-ups each cost at least 1 unit, and a link's start-up plus the cost of all the items under 65,536 units",
            ),
            ExactError::TooLarge => {
                f.write_str("the ring is too large for the exact search (at most 255 items, and 12 processors for the plain search or 16 for the pruned one)")
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

/// The least makespan of any schedule of `instance`, if some schedule ends by
/// `horizon`, by breadth-first search over all schedules in discrete time: the
/// makespan of [`startup_exhaustive`]'s schedule (on a ring without start-ups, the
/// papers' model).
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
/// [`ExactError`] when the costs are not discrete, the ring is too large (more than
/// 12 processors or 255 items), or more than `max_states` states are met.
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
    Ok(startup_exhaustive(instance, horizon, max_states)?.map(|s| s.makespan()))
}

/// Most processors [`exact_optimum`] handles.
const PRUNED_MAX_PROCESSORS: usize = 16;

/// A search state of [`exact_optimum`], packed: per processor the items held, the
/// direction of the send in progress (0 none, 1 successor, 2 predecessor) and the
/// time units left in it.
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
struct Packed {
    hold: [u8; PRUNED_MAX_PROCESSORS],
    dir: [u8; PRUNED_MAX_PROCESSORS],
    left: [u8; PRUNED_MAX_PROCESSORS],
    /// Directions (bit 0: successor, bit 1: predecessor) in which the processor may
    /// not start its next send: it stayed idle while it could have started there,
    /// and nothing has reached that receiver since (see [`exact_schedule`]).
    waived: [u8; PRUNED_MAX_PROCESSORS],
}

/// The ring in time units, for the pruned search.
struct UnitRing {
    n: usize,
    bidirectional: bool,
    /// A path: no send from the last processor to the first or back.
    path: bool,
    succ_cost: Vec<u32>,
    pred_cost: Vec<u32>,
    target: Vec<u8>,
}

impl UnitRing {
    /// True when direction `d` (1 successor, 2 predecessor) from `i` is the
    /// forbidden wrap-around link of a path.
    fn forbidden(&self, i: usize, d: u8) -> bool {
        self.path && ((d == 1 && i == self.n - 1) || (d == 2 && i == 0))
    }

    fn receiver(&self, i: usize, d: u8) -> usize {
        if d == 1 {
            (i + 1) % self.n
        } else {
            (i + self.n - 1) % self.n
        }
    }

    /// What remains to move from `s`, counting each transfer in progress as
    /// delivered: `prefix[i]` = sum over processors 0..=i of (eventual items -
    /// target), the net flow on link i for circulation 0, and `receive_busy[r]`, the
    /// units receiver r's port stays busy with the transfer in progress. O(n).
    fn remaining_imbalance(
        &self,
        s: &Packed,
    ) -> ([i32; PRUNED_MAX_PROCESSORS], [u32; PRUNED_MAX_PROCESSORS]) {
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
        (prefix, receive_busy)
    }

    /// System 6 on what remains from `s` for the circulation `x`: the busiest port,
    /// each sending port first busy with its send in progress (`s.left`) and each
    /// receiving one with its arrival in progress (`receive_busy`), then moving the
    /// net flows `x + prefix[i]` over link i one item at a time. O(n).
    fn ports_bound(&self, s: &Packed, prefix: &[i32], receive_busy: &[u32], x: i32) -> u32 {
        let n = self.n;
        let pos = |f: i32| f.max(0) as u32;
        let neg = |f: i32| (-f).max(0) as u32;
        let mut worst = 0u32;
        for i in 0..n {
            let p = (i + n - 1) % n;
            let (out, inc) = (x + prefix[i], x + prefix[p]); // links i and i-1
            let send =
                u32::from(s.left[i]) + pos(out) * self.succ_cost[i] + neg(inc) * self.pred_cost[i];
            let receive = receive_busy[i]
                + pos(inc) * self.succ_cost[p]
                + neg(out) * self.pred_cost[(i + 1) % n];
            worst = worst.max(send).max(receive);
        }
        worst
    }

    /// A lower bound, in units, on the time any schedule still needs from `s`: the
    /// integer optimum of System 6 on what remains, with each port first busy with
    /// the transfer in progress. Every continuation moves net flows `x + S_j` for the
    /// remaining imbalances and some integer `x`, and each port handles its items
    /// one at a time after the current one; the bound is convex in `x`.
    fn remaining_bound(&self, s: &Packed) -> u32 {
        let n = self.n;
        let (prefix, receive_busy) = self.remaining_imbalance(s);
        let tau = |x: i32| self.ports_bound(s, &prefix, &receive_busy, x);
        let (_, _, best) = self.least_circulation(&prefix[..n], tau);
        tau(best)
    }

    /// The circulations worth trying, `lo..=hi` (beyond them every net flow only
    /// grows), and the one where the convex `tau` is least: on a unidirectional
    /// ring `hi`, the smallest with every net flow >= 0; on a bidirectional one by
    /// integer ternary search. O(log(hi - lo)) evaluations of `tau`.
    fn least_circulation(&self, prefix: &[i32], tau: impl Fn(i32) -> u32) -> (i32, i32, i32) {
        let lo = -prefix.iter().copied().max().unwrap_or(0);
        let hi = -prefix.iter().copied().min().unwrap_or(0);
        if !self.bidirectional {
            return (lo, hi, hi);
        }
        // The circulations stay within the i32 range of `lo..=hi`.
        let best = convex_argmin(lo.into(), hi.into(), |x| tau(x as i32)) as i32;
        (lo, hi, best)
    }

    /// Whether some continuation of `s` might end within `budget` units: false when
    /// every circulation `x` has System 6 on what remains ([`Self::ports_bound`])
    /// or its release-time bound (sends wait for the arrivals they forward) above
    /// the budget.
    fn fits(&self, s: &Packed, budget: u32) -> bool {
        let n = self.n;
        let (prefix, receive_busy) = self.remaining_imbalance(s);
        let pos = |f: i32| f.max(0) as u32;
        let neg = |f: i32| (-f).max(0) as u32;
        let tau = |x: i32| self.ports_bound(s, &prefix, &receive_busy, x);
        // Items are sent only once held, and end up held: per processor, the
        // sends beyond what it holds wait for arrivals, and (time reversed) the
        // arrivals beyond what it keeps come before sends end.
        let release = |x: i32| -> u32 {
            let mut worst = 0u32;
            for i in 0..n {
                let p = (i + n - 1) % n;
                let (out, inc) = (x + prefix[i], x + prefix[p]);
                let sends = Classes::new(pos(out), self.succ_cost[i], neg(inc), self.pred_cost[i]);
                let arrivals = Classes::new(
                    pos(inc),
                    self.succ_cost[p],
                    neg(out),
                    self.pred_cost[(i + 1) % n],
                );
                let held = u32::from(s.hold[i]);
                let busy = receive_busy[i];
                if sends.count > held {
                    let waiting = sends.count - held;
                    for j in 1..=waiting {
                        // The j-th arrival: the one in progress first, if any.
                        let arrival = if busy > 0 {
                            busy + arrivals.cheapest(j - 1)
                        } else {
                            arrivals.cheapest(j)
                        };
                        let start = arrival.max(u32::from(s.left[i]));
                        worst = worst.max(start + sends.cheapest(waiting - j + 1));
                    }
                }
                let kept = u32::from(self.target[i]);
                if arrivals.count > kept {
                    let late = arrivals.count - kept;
                    for j in 1..=late {
                        worst = worst.max(sends.cheapest(j) + arrivals.cheapest(late - j + 1));
                    }
                }
            }
            worst
        };
        let (lo, hi, best) = self.least_circulation(&prefix[..n], tau);
        if !self.bidirectional {
            return tau(hi) <= budget && release(hi) <= budget;
        }
        if tau(best) > budget {
            return false;
        }
        // Every x where System 6 fits is an interval around `best` (convexity);
        // beyond [lo, hi] both bounds only grow.
        let mut x = best;
        while x >= lo && tau(x) <= budget {
            if release(x) <= budget {
                return true;
            }
            x -= 1;
        }
        let mut x = best + 1;
        while x <= hi && tau(x) <= budget {
            if release(x) <= budget {
                return true;
            }
            x += 1;
        }
        false
    }
}

/// Items of two kinds, `first` costing `first_cost` each and `second` costing
/// `second_cost`: the least time of any `m` of them one after the other.
struct Classes {
    count: u32,
    cheap: (u32, u32),
    dear: u32,
}

impl Classes {
    fn new(first: u32, first_cost: u32, second: u32, second_cost: u32) -> Classes {
        let (cheap, dear) = if first_cost <= second_cost {
            ((first, first_cost), second_cost)
        } else {
            ((second, second_cost), first_cost)
        };
        Classes {
            count: first + second,
            cheap,
            dear,
        }
    }

    fn cheapest(&self, m: u32) -> u32 {
        let cheap = m.min(self.cheap.0);
        cheap * self.cheap.1 + (m - cheap) * self.dear
    }
}

/// The least makespan of any schedule of `instance`, if some schedule ends by
/// `horizon`: the makespan of [`exact_schedule`]'s schedule. The answer is the same
/// as the plain search's ([`exhaustive_optimum`]); the tests check that they agree.
///
/// # Returns
/// `Ok(Some(t))`: the optimum is t <= horizon; `Ok(None)`: every schedule ends after
/// `horizon`.
///
/// # Errors
/// [`ExactError`] when the costs are not discrete, the ring has more than 16
/// processors or 255 items, or more than `max_states` states are met.
///
/// # Complexity
/// As [`exact_schedule`].
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

/// An optimal schedule of `instance`, if some schedule ends by `horizon`.
///
/// The search works in discrete time, as [`exhaustive_optimum`] does, with three
/// refinements that keep its answer exact:
/// * **Iterative deepening.** It asks "does some schedule end by `h`?" for `h` from
///   System 6's bound upwards, unit by unit, up to `horizon`; the first yes is the
///   optimum. Each question is answered depth first, most promising sends first,
///   remembering the earliest unit each state was met at.
/// * **Pruning by lower bounds on what remains.** A state at unit t is dropped when
///   no circulation lets both bounds fit in `h - t`: the integer optimum of System 6
///   on the remaining imbalances (each port first finishing its transfer in
///   progress), and release times per processor (sends beyond the items held wait
///   for the arrivals, at the earliest one after the other over the cheapest links;
///   time reversed, arrivals beyond the items kept come before the last sends).
/// * **No unforced idle time.** A processor that could start a send (free port, an
///   item held, the receiver's port free) but stays idle may not make its next send
///   in that direction until another transfer reaches that receiver. Such a send
///   could start at the idle unit instead: its port and the receiver's stay free
///   until it starts, the processor sends nothing else meanwhile so it still holds
///   the item, and the receiver only gets it earlier. Moving sends earlier one by
///   one ends (the sum of start times decreases), so some optimal schedule obeys
///   the rule.
///
/// Consecutive items on one link form one transfer.
///
/// # Returns
/// `Ok(Some(schedule))` with the least makespan, at most `horizon`; `Ok(None)`:
/// every schedule ends after `horizon`.
///
/// # Errors
/// [`ExactError`] when the costs are not discrete, the ring has more than 16
/// processors or 255 items, or more than `max_states` states are met (over all the
/// horizons tried).
///
/// # Complexity
/// Exponential in the worst case; O(n·(F + m)) per state for the bounds over F
/// circulations and m items, 64 bytes and a hash-table slot per state. Proves the
/// optimum of every random tight ring of up to 8 processors in the `open_case`
/// example (about 43,000 per 100,000 rings) within a million states.
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
        path: instance.is_path(),
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
        waived: [0; PRUNED_MAX_PROCESSORS],
    };
    for (h, &l) in start.hold.iter_mut().zip(instance.loads()) {
        *h = l as u8;
    }
    let mut search = DepthFirst {
        ring: &ring,
        seen: HashMap::new(),
        states: 0,
        max_states,
        path: Vec::new(),
    };
    // Iterative deepening: the first horizon with a schedule is the optimum.
    for level in ring.remaining_bound(&start)..=steps {
        search.seen.clear();
        search.path.clear();
        if search.explore(start, 0, level)? {
            return Ok(Some(rebuild(&ring, &search.path, unit)));
        }
    }
    Ok(None)
}

/// The depth-first search of [`exact_schedule`] for one horizon.
struct DepthFirst<'a> {
    ring: &'a UnitRing,
    /// Every state met, with the earliest unit it was met at.
    seen: HashMap<Packed, u32>,
    /// States met over every horizon so far.
    states: usize,
    max_states: usize,
    /// The sends started at each unit on the way to the current state.
    path: Vec<u32>,
}

impl DepthFirst<'_> {
    /// Whether some schedule from `s` at unit `t` ends by `horizon`; on success
    /// `path` holds the sends started at each unit.
    fn explore(&mut self, s: Packed, t: u32, horizon: u32) -> Result<bool, ExactError> {
        let ring = self.ring;
        let n = ring.n;
        if s.dir[..n].iter().all(|&d| d == 0) && s.hold[..n] == ring.target[..] {
            return Ok(true);
        }
        if t >= horizon || !ring.fits(&s, horizon - t) {
            return Ok(false);
        }
        match self.seen.get_mut(&s) {
            Some(earliest) if *earliest <= t => return Ok(false),
            Some(earliest) => *earliest = t,
            None => {
                self.states += 1;
                if self.states > self.max_states {
                    return Err(ExactError::Budget {
                        states: self.states,
                    });
                }
                self.seen.insert(s, t);
            }
        }
        let mut next = successors(ring, &s);
        // Most promising first: the least System 6 on what remains, then the most
        // sends started.
        next.sort_by_cached_key(|(after, started)| {
            (
                ring.remaining_bound(after),
                std::cmp::Reverse(started.count_ones()),
            )
        });
        for (after, started) in next {
            self.path.push(started);
            if self.explore(after, t + 1, horizon)? {
                return Ok(true);
            }
            self.path.pop();
        }
        Ok(false)
    }
}

/// Every state one unit after `s`: each processor with a free port and an item
/// may start a send to a neighbour whose receiving port is free (unless it waived
/// that direction), then the unit passes. With the sends started (2 bits per
/// processor).
fn successors(ring: &UnitRing, s: &Packed) -> Vec<(Packed, u32)> {
    let n = ring.n;
    let dirs: &[u8] = if ring.bidirectional {
        &[0, 1, 2]
    } else {
        &[0, 1]
    };
    let mut receiving = 0u16;
    for i in 0..n {
        if s.dir[i] != 0 {
            receiving |= 1 << ring.receiver(i, s.dir[i]);
        }
    }
    let receiving_before = receiving;
    let senders: Vec<usize> = (0..n).filter(|&i| s.dir[i] == 0 && s.hold[i] > 0).collect();
    let mut out = Vec::new();
    let mut stack: Vec<(usize, Packed, u16, u32)> = vec![(0, *s, receiving, 0)];
    while let Some((k, state, receiving, started)) = stack.pop() {
        if k == senders.len() {
            let mut after = state;
            waive(
                ring,
                &mut after,
                &senders,
                receiving_before,
                receiving,
                started,
            );
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
            out.push((after, started));
            continue;
        }
        let i = senders[k];
        for &d in dirs {
            if d == 0 {
                stack.push((k + 1, state, receiving, started));
                continue;
            }
            let r = ring.receiver(i, d);
            if receiving & (1 << r) != 0 || state.waived[i] & d != 0 || ring.forbidden(i, d) {
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
    out
}

/// Updates the waived directions after the sends of one unit are chosen
/// (`started`: 2 bits per processor; `receiving_before`/`receiving_after`: the
/// receivers busy before and after the choice).
///
/// A processor that starts a send is free again to choose. A processor that did
/// not start keeps its waived directions, except those whose receiver a transfer
/// from the other side has just reached. A processor that could have sent (free
/// port, an item held) but stayed idle waives every direction whose receiver is
/// still free: if its next send went there, nothing else having reached that
/// receiver meanwhile, the same send could start now (see [`exact_schedule`]).
fn waive(
    ring: &UnitRing,
    state: &mut Packed,
    senders: &[usize],
    receiving_before: u16,
    receiving_after: u16,
    started: u32,
) {
    let reached = receiving_after & !receiving_before;
    for i in 0..ring.n {
        if (started >> (2 * i)) & 3 != 0 {
            state.waived[i] = 0;
            continue;
        }
        for d in [1u8, 2] {
            if reached & (1 << ring.receiver(i, d)) != 0 {
                state.waived[i] &= !d;
            }
        }
    }
    for &i in senders {
        if (started >> (2 * i)) & 3 != 0 {
            continue;
        }
        for d in [1u8, 2] {
            if d == 2 && !ring.bidirectional {
                continue;
            }
            if receiving_after & (1 << ring.receiver(i, d)) == 0 {
                state.waived[i] |= d;
            }
        }
    }
}

/// The schedule of the sends started at each unit (`steps[t]`, 2 bits per
/// processor), items on one link back to back merged into one transfer.
fn rebuild(ring: &UnitRing, steps: &[u32], unit: f64) -> Schedule {
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
                    transfers.push(Transfer::new(i, to, 1, start, end));
                }
            }
        }
    }
    Schedule::new(transfers)
}
