//! Exhaustive search for tiny rings with start-ups: every schedule of the start-up
//! model (model.md, "Start-ups"), breadth-first in discrete time. The independent
//! reference the start-up bounds and planners are checked against and, pruned by
//! the start-up bound, what [`plan`](crate::ring::plan) uses to settle tiny rings
//! with start-ups.

use std::collections::{HashMap, HashSet};
use std::hash::{BuildHasherDefault, Hasher};

use crate::ring::{startup_lower_bound, ExactError, RingInstance, RingKind, Schedule, Transfer};

/// Most processors the search handles.
const MAX_PROCESSORS: usize = 12;
/// Rings of at most this many processors are searched with states of this
/// width.
const SMALL_RING: usize = 6;
/// Most items the search handles (a message's size fits in a byte).
const MAX_ITEMS: u64 = 255;

/// The largest unit 2^-k (k <= 6) of which every cost and start-up the ring uses is
/// a whole multiple, with every message (start-up plus all the ring's items) below
/// 2^16 units.
fn time_unit(instance: &RingInstance) -> Result<f64, ExactError> {
    let n = instance.len();
    let mut links: Vec<(f64, f64)> = (0..n)
        .map(|i| (instance.c_succ()[i], instance.l_succ()[i]))
        .collect();
    if instance.kind() == RingKind::Bidirectional {
        links.extend((0..n).map(|i| {
            (
                instance.c_pred()[i].expect("a bidirectional ring has c_pred"),
                instance.l_pred()[i],
            )
        }));
    }
    let items = instance.total_items() as f64;
    (0..=6)
        .map(|k| 0.5f64.powi(k))
        .find(|&u| {
            links.iter().all(|&(c, l)| {
                (c / u).fract() == 0.0
                    && (l / u).fract() == 0.0
                    && c / u >= 1.0
                    && (l + items * c) / u < 65_536.0
            })
        })
        .ok_or(ExactError::CostsNotDiscrete)
}

/// A search state: per processor the items held and its send in progress (direction
/// 0 none, 1 successor, 2 predecessor; items carried; time units left).
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
struct State<const N: usize> {
    hold: [u8; N],
    dir: [u8; N],
    items: [u8; N],
    left: [u16; N],
}

/// The ring in time units.
struct Units {
    n: usize,
    bidirectional: bool,
    /// A path: no send from the last processor to the first or back.
    path: bool,
    /// Per processor and direction (0 successor, 1 predecessor): cost and start-up.
    cost: Vec<[u16; 2]>,
    startup: Vec<[u16; 2]>,
    target: Vec<u8>,
}

impl Units {
    /// True when direction `dir` (1 successor, 2 predecessor) from `i` is the
    /// forbidden wrap-around link of a path.
    fn forbidden(&self, i: usize, dir: u8) -> bool {
        self.path && ((dir == 1 && i == self.n - 1) || (dir == 2 && i == 0))
    }

    fn receiver(&self, i: usize, dir: u8) -> usize {
        if dir == 1 {
            (i + 1) % self.n
        } else {
            (i + self.n - 1) % self.n
        }
    }

    fn goal<const N: usize>(&self, s: &State<N>) -> bool {
        (0..self.n).all(|i| s.dir[i] == 0 && s.hold[i] == self.target[i])
    }
}

/// A fast hasher for the search's small keys (the multiply-rotate hash of
/// rustc's `FxHasher`): the states are not chosen by an adversary, and hashing
/// them with the standard library's SipHash made the search about 1.45 times
/// slower (200 random rings of 3 to 6 processors and up to 24 items with
/// start-ups: `plan` 18.4 s for all of them, 12.6 s with this hash).
#[derive(Default)]
struct Fx(u64);

impl Hasher for Fx {
    fn write(&mut self, bytes: &[u8]) {
        let mut chunks = bytes.chunks_exact(8);
        for c in &mut chunks {
            self.add(u64::from_le_bytes(c.try_into().expect("8 bytes")));
        }
        for &b in chunks.remainder() {
            self.add(u64::from(b));
        }
    }
    fn write_u8(&mut self, x: u8) {
        self.add(u64::from(x));
    }
    fn write_u16(&mut self, x: u16) {
        self.add(u64::from(x));
    }
    fn write_usize(&mut self, x: usize) {
        self.add(x as u64);
    }
    fn finish(&self) -> u64 {
        self.0
    }
}

impl Fx {
    fn add(&mut self, x: u64) {
        self.0 = (self.0.rotate_left(5) ^ x).wrapping_mul(0x51_7c_c1_b7_27_22_0a_95);
    }
}

type FxBuild = BuildHasherDefault<Fx>;

/// Sends started at one unit: per processor 10 bits, direction (2 bits) and items (8).
type Started = u128;

/// An optimal schedule of `instance` under start-ups, if some schedule ends by
/// `horizon`, by breadth-first search over every schedule in discrete time.
///
/// The model (model.md, "Start-ups"): over a link with start-up `l > 0` a transfer
/// of m items takes `l + m c`, needs its m items held at its start and delivers them
/// at its end; over a link without start-up items travel one by one (a train is a
/// sequence of single items back to back). With every cost and start-up a whole
/// number of units, some optimal schedule starts every transfer at a whole unit
/// (move each start down to the unit below: durations are whole, so arrivals move
/// down too and nothing is sent before it is held), so searching unit by unit is
/// exact. At each unit every processor whose sending port is free and which holds
/// items may start one transfer to a neighbour whose receiving port is free: one
/// item over a link without start-up, any number it holds over a link with one;
/// items that arrive at t may leave at t. States met at an earlier unit are not
/// explored again. Nothing is pruned: this is the reference the start-up bounds and
/// planners are tested against.
///
/// # Returns
/// `Ok(Some(schedule))` with the least makespan, at most `horizon` (items on a link
/// without start-up sent back to back form one transfer); `Ok(None)` when every
/// schedule ends after `horizon`.
///
/// # Errors
/// [`ExactError::CostsNotDiscrete`] when costs and start-ups are not whole
/// multiples of one unit 2^-k (k <= 6), [`ExactError::TooLarge`] beyond 12
/// processors or 255 items, [`ExactError::Budget`] past `max_states` states.
///
/// # Complexity
/// Exponential: for rings of a few processors and a dozen items.
///
/// # Example
/// ```
/// use hetbal::ring::{startup_exhaustive, RingInstance};
/// use hetbal::validate;
/// // P0 gives 2 items to P2 through P1; every link costs 1 per item plus 2 per
/// // transfer. One message of 2 items per hop ends at (2 + 2) * 2 = 8. Better: P1
/// // sends its own item at once while P0 sends one item, then forwards that item
/// // while P0 sends the other, which P1 keeps: 3 + 3 = 6.
/// let ring = RingInstance::unidirectional(&[3, 1, 1], &[1, 1, 3], &[1.0; 3])
///     .unwrap()
///     .with_startups(&[2.0; 3], &[0.0; 3])
///     .unwrap();
/// let best = startup_exhaustive(&ring, 20.0, 100_000).unwrap().unwrap();
/// assert_eq!(best.makespan(), 6.0);
/// assert!(validate(&ring, &best).is_ok());
/// ```
pub fn startup_exhaustive(
    instance: &RingInstance,
    horizon: f64,
    max_states: usize,
) -> Result<Option<Schedule>, ExactError> {
    search(instance, horizon, max_states, false)
}

/// [`startup_exhaustive`], skipping every state from which the start-up lower
/// bound shows the schedule cannot end by `horizon`: what
/// [`plan`](crate::ring::plan) runs to settle tiny rings, where it finds the
/// same optimum among far fewer states (through [`startup_settle`]). Of 86
/// random unidirectional rings of 3 to 6 processors and up to 24 items with
/// start-ups, [`plan`](crate::ring::plan) proved 61 optimal in 42 s for all
/// of them with the search that prunes nothing, 77 in 22 s with this one up
/// to the planner's makespan, and 80 in 10.5 s below it; of 86 bidirectional
/// ones, 75 in 19 s, 84 in 7 s and 84 in 4.3 s.
///
/// Why it is exact: from a state at time t, the schedule's later transfers
/// are a schedule of the ring whose loads are what each processor holds plus
/// what is on its way to it (a *relaxation*: those items are held earlier and
/// every port is free at once), so they end at least
/// [`startup_lower_bound`](crate::ring::startup_lower_bound) of that ring
/// after t. A state where `t` plus that bound exceeds `horizon` leads to no
/// schedule ending by `horizon`. The bound of each distinct relaxed loads is
/// computed once. The bound is checked against [`startup_exhaustive`], which
/// prunes nothing, on the tests' tiny rings.
///
/// Errors and complexity as [`startup_exhaustive`] (states skipped are not
/// counted in the budget; each costs a look-up).
pub(crate) fn startup_exhaustive_pruned(
    instance: &RingInstance,
    horizon: f64,
    max_states: usize,
) -> Result<Option<Schedule>, ExactError> {
    search(instance, horizon, max_states, true)
}

/// Settles a ring that some schedule finishes at `makespan`: searches, with
/// [`startup_exhaustive_pruned`], for the earliest schedule that ends at
/// least one time unit before it. Some optimal schedule ends at a whole
/// number of units (see [`startup_exhaustive`]), so finding none proves
/// `makespan` optimal. Searching below `makespan` rather than up to it
/// prunes more (figures at [`startup_exhaustive_pruned`]).
///
/// # Returns
/// `(Some(schedule), its makespan)` when a schedule ends earlier (it is
/// optimal); `(None, bound)` when none does, `bound` being a time before
/// which no schedule ends: `makespan` on its unit (never above it).
///
/// # Errors
/// As [`startup_exhaustive`].
pub(crate) fn startup_settle(
    instance: &RingInstance,
    makespan: f64,
    max_states: usize,
) -> Result<(Option<Schedule>, f64), ExactError> {
    let unit = time_unit(instance)?;
    let units_below = (makespan / unit - 1e-9).ceil() - 1.0;
    if units_below < 0.0 {
        return Ok((None, 0.0)); // nothing ends before 0
    }
    let below = units_below * unit;
    let Some(earlier) = startup_exhaustive_pruned(instance, below, max_states)? else {
        // Never above `makespan`, which a schedule reaches, should its float
        // times have drifted off the units.
        return Ok((None, (below + unit).min(makespan)));
    };
    let end = earlier.makespan();
    Ok((Some(earlier), end))
}

/// The search of [`startup_exhaustive`], pruned by the start-up bound when
/// `prune` ([`startup_exhaustive_pruned`]).
fn search(
    instance: &RingInstance,
    horizon: f64,
    max_states: usize,
    prune: bool,
) -> Result<Option<Schedule>, ExactError> {
    let n = instance.len();
    if n > MAX_PROCESSORS || instance.total_items() > MAX_ITEMS {
        return Err(ExactError::TooLarge);
    }
    // States as wide as the ring needs: half the memory on rings of at most
    // 6 processors (those `plan` settles).
    if n <= SMALL_RING {
        search_in::<SMALL_RING>(instance, horizon, max_states, prune)
    } else {
        search_in::<MAX_PROCESSORS>(instance, horizon, max_states, prune)
    }
}

/// [`search`] with states of `N >= n` processors.
fn search_in<const N: usize>(
    instance: &RingInstance,
    horizon: f64,
    max_states: usize,
    prune: bool,
) -> Result<Option<Schedule>, ExactError> {
    let n = instance.len();
    let unit = time_unit(instance)?;
    let bidirectional = instance.kind() == RingKind::Bidirectional;
    let units = |x: f64| (x / unit) as u16;
    let ring = Units {
        n,
        bidirectional,
        path: instance.is_path(),
        cost: (0..n)
            .map(|i| {
                [
                    units(instance.c_succ()[i]),
                    instance.c_pred()[i].map_or(0, units),
                ]
            })
            .collect(),
        startup: (0..n)
            .map(|i| [units(instance.l_succ()[i]), units(instance.l_pred()[i])])
            .collect(),
        target: instance.targets().iter().map(|&t| t as u8).collect(),
    };
    let mut start = State::<N> {
        hold: [0; N],
        dir: [0; N],
        items: [0; N],
        left: [0; N],
    };
    for (h, &l) in start.hold.iter_mut().zip(instance.loads()) {
        *h = l as u8;
    }
    let steps = (horizon / unit + 1e-9).floor().max(0.0) as u64;
    // Every state met: its parent and the sends that led to it (the states
    // themselves only in `seen` and in the frontier, which holds each state of
    // the current unit with its index).
    let mut states: Vec<(u32, Started)> = vec![(u32::MAX, 0)];
    let mut seen: HashSet<State<N>, FxBuild> = HashSet::default();
    seen.insert(start);
    let mut frontier: Vec<(u32, State<N>)> = vec![(0, start)];
    let mut next: Vec<(u32, State<N>)> = Vec::new();
    let mut bounds = Remaining::<N> {
        instance,
        unit,
        horizon,
        known: HashMap::default(),
    };
    for t in 0..=steps {
        if let Some(&(goal, _)) = frontier.iter().find(|(_, s)| ring.goal(s)) {
            return Ok(Some(rebuild(instance, &ring, &states, goal, unit)));
        }
        if t == steps || frontier.is_empty() {
            break;
        }
        next.clear();
        for &(k, s) in &frontier {
            for (after, started) in successors(&ring, &s) {
                if seen.contains(&after) || (prune && bounds.misses(&ring, &after, t + 1)) {
                    continue;
                }
                let index = u32::try_from(states.len()).map_err(|_| ExactError::Budget {
                    states: states.len(),
                })?;
                if states.len() >= max_states {
                    return Err(ExactError::Budget {
                        states: states.len(),
                    });
                }
                seen.insert(after);
                states.push((k, started));
                next.push((index, after));
            }
        }
        std::mem::swap(&mut frontier, &mut next);
    }
    Ok(None)
}

/// The start-up lower bound of what remains from a search state (see
/// [`startup_exhaustive_pruned`]), by the loads held and on their way.
struct Remaining<'a, const N: usize> {
    instance: &'a RingInstance,
    unit: f64,
    horizon: f64,
    /// The bound of each relaxed loads met.
    known: HashMap<[u8; N], f64, FxBuild>,
}

impl<const N: usize> Remaining<'_, N> {
    /// Whether no schedule through state `s` at unit `t` ends by the horizon.
    fn misses(&mut self, ring: &Units, s: &State<N>, t: u64) -> bool {
        let mut loads = s.hold;
        for i in 0..ring.n {
            if s.dir[i] != 0 {
                loads[ring.receiver(i, s.dir[i])] += s.items[i];
            }
        }
        let instance = self.instance;
        let bound = *self.known.entry(loads).or_insert_with(|| {
            let relaxed: Vec<u64> = loads[..ring.n].iter().map(|&h| u64::from(h)).collect();
            startup_lower_bound(&instance.with_loads_of_same_total(&relaxed)).value
        });
        t as f64 * self.unit + bound > self.horizon * (1.0 + 1e-9)
    }
}

/// Every state one unit after `s`, with the sends started.
fn successors<const N: usize>(ring: &Units, s: &State<N>) -> Vec<(State<N>, Started)> {
    let n = ring.n;
    let mut receiving = 0u16;
    for i in 0..n {
        if s.dir[i] != 0 {
            receiving |= 1 << ring.receiver(i, s.dir[i]);
        }
    }
    let senders: Vec<usize> = (0..n).filter(|&i| s.dir[i] == 0 && s.hold[i] > 0).collect();
    let dirs: &[u8] = if ring.bidirectional { &[1, 2] } else { &[1] };
    let mut out = Vec::new();
    let mut stack: Vec<(usize, State<N>, u16, Started)> = vec![(0, *s, receiving, 0)];
    while let Some((k, state, receiving, started)) = stack.pop() {
        if k == senders.len() {
            // One unit passes: transfers that end deliver their items.
            let mut after = state;
            for i in 0..n {
                if after.dir[i] != 0 {
                    after.left[i] -= 1;
                    if after.left[i] == 0 {
                        let r = ring.receiver(i, after.dir[i]);
                        after.hold[r] += after.items[i];
                        after.dir[i] = 0;
                        after.items[i] = 0;
                    }
                }
            }
            out.push((after, started));
            continue;
        }
        let i = senders[k];
        stack.push((k + 1, state, receiving, started));
        for &d in dirs {
            let r = ring.receiver(i, d);
            if receiving & (1 << r) != 0 || ring.forbidden(i, d) {
                continue;
            }
            let side = usize::from(d - 1);
            let (cost, startup) = (ring.cost[i][side], ring.startup[i][side]);
            // Without start-up, items travel one by one; with one, any message.
            let most = if startup == 0 { 1 } else { state.hold[i] };
            for m in 1..=most {
                let mut sent = state;
                sent.hold[i] -= m;
                sent.dir[i] = d;
                sent.items[i] = m;
                sent.left[i] = startup + u16::from(m) * cost;
                let code = (u128::from(d) | (u128::from(m) << 2)) << (10 * i);
                stack.push((k + 1, sent, receiving | (1 << r), started | code));
            }
        }
    }
    out
}

/// The schedule leading to state `goal`: transfers unit by unit, single items back to
/// back on a link without start-up merged into one train.
fn rebuild(
    instance: &RingInstance,
    ring: &Units,
    states: &[(u32, Started)],
    goal: u32,
    unit: f64,
) -> Schedule {
    let mut steps: Vec<Started> = Vec::new();
    let mut k = goal;
    while states[k as usize].0 != u32::MAX {
        steps.push(states[k as usize].1);
        k = states[k as usize].0;
    }
    steps.reverse();
    let mut transfers: Vec<Transfer> = Vec::new();
    // Last train per processor and direction, to extend.
    let mut last = vec![[usize::MAX; 2]; ring.n];
    for (t, &started) in steps.iter().enumerate() {
        for (i, last) in last.iter_mut().enumerate() {
            let code = (started >> (10 * i)) & 0x3ff;
            let d = (code & 3) as u8;
            if d == 0 {
                continue;
            }
            let m = (code >> 2) as u64;
            let side = usize::from(d - 1);
            let (cost, startup) = (ring.cost[i][side], ring.startup[i][side]);
            let begin = t as f64 * unit;
            let end = (t as f64 + f64::from(startup) + m as f64 * f64::from(cost)) * unit;
            let to = ring.receiver(i, d);
            match last[side] {
                previous
                    if startup == 0
                        && previous != usize::MAX
                        && transfers[previous].end == begin =>
                {
                    transfers[previous].items += m;
                    transfers[previous].end = end;
                }
                _ => {
                    if startup == 0 {
                        last[side] = transfers.len();
                    }
                    transfers.push(Transfer::new(i, to, m, begin, end));
                }
            }
        }
    }
    debug_assert_eq!(instance.len(), ring.n);
    Schedule::new(transfers)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::random::SplitMix64;
    use crate::ring::validate;

    /// The pruned search finds what the search that prunes nothing finds, with
    /// the optimum as horizon and just below it, and settling from the start-up
    /// planner's makespan gives the optimum, on random tiny rings and paths
    /// with start-ups (some of them on every link, some on none).
    #[test]
    fn pruning_by_the_bound_keeps_the_optimum() {
        let mut rng = SplitMix64::new(0x9a_7e);
        let (mut compared, mut paths) = (0, 0);
        for round in 0..300 {
            let n = 2 + rng.below(3);
            let loads: Vec<u64> = (0..n).map(|_| rng.below_u64(4)).collect();
            let mut targets: Vec<u64> = (0..n).map(|_| rng.below_u64(4)).collect();
            let (held, wanted): (u64, u64) = (loads.iter().sum(), targets.iter().sum());
            if held == 0 || held < wanted {
                continue;
            }
            targets[rng.below(n)] += held - wanted;
            let mut draw = |values: &[f64]| -> Vec<f64> {
                (0..n).map(|_| values[rng.below(values.len())]).collect()
            };
            let (c, cp) = (draw(&[1.0, 2.0]), draw(&[1.0, 2.0]));
            let (l, lp) = (draw(&[0.0, 1.0, 2.0, 4.0]), draw(&[0.0, 1.0, 3.0]));
            let ring = match round % 2 {
                0 => RingInstance::unidirectional(&loads, &targets, &c),
                _ => RingInstance::bidirectional(&loads, &targets, &c, &cp),
            }
            .and_then(|r| r.with_startups(&l, &lp))
            .unwrap();
            // One ring in three a path, when its loads allow one.
            let ring = match round % 3 {
                0 => ring.as_path().unwrap_or(ring),
                _ => ring,
            };
            let Ok(Some(best)) = startup_exhaustive(&ring, 200.0, 1_000_000) else {
                continue;
            };
            let optimum = best.makespan();
            let pruned = startup_exhaustive_pruned(&ring, optimum, 1_000_000)
                .unwrap_or_else(|e| panic!("{e} on {ring:?}"))
                .unwrap_or_else(|| panic!("no schedule by the optimum {optimum} on {ring:?}"));
            assert_eq!(pruned.makespan(), optimum, "{ring:?}");
            assert!(validate(&ring, &pruned).is_ok(), "{ring:?}");
            if optimum >= 1.0 {
                let below = optimum - 0.5f64.powi(6);
                assert!(
                    startup_exhaustive_pruned(&ring, below, 1_000_000)
                        .unwrap()
                        .is_none(),
                    "a schedule before the optimum {optimum} on {ring:?}"
                );
            }
            // Settling from the planner's makespan: a better schedule when the
            // optimum is below it, else the proof that nothing ends earlier.
            let planned = validate(&ring, &crate::ring::startup_schedule(&ring))
                .unwrap()
                .makespan;
            let (earlier, bound) = startup_settle(&ring, planned, 1_000_000).unwrap();
            assert_eq!(bound, optimum, "{ring:?}");
            assert_eq!(earlier.is_some(), optimum < planned, "{ring:?}");
            compared += 1;
            paths += usize::from(ring.is_path());
        }
        assert!(
            compared >= 150 && paths >= 20,
            "{compared} rings compared, {paths} paths"
        );
    }

    /// Rings of more than 6 processors are searched with wider states: the
    /// same answers, pruned or not (items sent two and three hops both ways).
    #[test]
    fn wider_rings_are_searched_too() {
        let ring = RingInstance::bidirectional(
            &[3, 0, 0, 1, 0, 0, 2, 0],
            &[0, 1, 1, 1, 1, 1, 0, 1],
            &[1.0; 8],
            &[2.0; 8],
        )
        .and_then(|r| r.with_startups(&[1.0; 8], &[0.0; 8]))
        .unwrap();
        let best = startup_exhaustive(&ring, 100.0, 1_000_000)
            .unwrap()
            .unwrap();
        let pruned = startup_exhaustive_pruned(&ring, best.makespan(), 1_000_000)
            .unwrap()
            .unwrap();
        assert_eq!(pruned.makespan(), best.makespan());
        assert!(validate(&ring, &best).is_ok() && validate(&ring, &pruned).is_ok());
        assert!(best.makespan() >= startup_lower_bound(&ring).value);
    }
}
