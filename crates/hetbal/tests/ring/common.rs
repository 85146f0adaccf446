//! Helpers shared by the ring tests: instance generators, naive oracles written
//! independently of the library (slice lower bound, item-by-item ASAP simulation,
//! item-by-item schedule checker) and small assertion helpers.

use std::collections::BTreeSet;

use hetbal::ring::RingInstance;
use hetbal::{Schedule, Transfer, Violation, ViolationRule};
use proptest::prelude::*;
use proptest::test_runner::{Config, TestRunner};

/// A unidirectional instance as plain vectors (shrinks well, prints well).
#[derive(Clone, Debug)]
pub struct Uni {
    pub loads: Vec<u64>,
    pub targets: Vec<u64>,
    pub costs: Vec<f64>,
}

impl Uni {
    pub fn ring(&self) -> RingInstance {
        RingInstance::unidirectional(&self.loads, &self.targets, &self.costs)
            .unwrap_or_else(|e| panic!("generator built an invalid instance {self:?}: {e}"))
    }
}

/// A proptest runner with `cases` cases, no regression files, no forking.
pub fn runner(cases: u32) -> TestRunner {
    TestRunner::new(Config {
        cases,
        failure_persistence: None,
        max_shrink_iters: 2000,
        ..Config::default()
    })
}

/// Runs `test` on `cases` values of `strategy`; panics with the minimal failing input.
pub fn check<S: Strategy>(
    name: &str,
    cases: u32,
    strategy: S,
    test: impl Fn(S::Value) -> Result<(), TestCaseError>,
) where
    S::Value: std::fmt::Debug,
{
    let mut r = runner(cases);
    if let Err(e) = r.run(&strategy, test) {
        panic!("property {name} failed: {e}");
    }
    eprintln!("property {name}: {cases} random instances checked");
}

/// The costs a link may take.
#[derive(Clone, Copy, Debug)]
pub enum Costs {
    /// Every link has the same cost (from the small set, or a float in [0.01, 100]).
    Homogeneous,
    /// Each link independently from {0.5, 1, 1.5, 2, 3} (exact in binary).
    SmallSet,
    /// Each link independently a float in [0.01, 100].
    Float,
}

pub const COST_SET: [f64; 5] = [0.5, 1.0, 1.5, 2.0, 3.0];

pub fn cost_vec(n: usize, kind: Costs) -> BoxedStrategy<Vec<f64>> {
    match kind {
        Costs::Homogeneous => {
            prop_oneof![proptest::sample::select(COST_SET.to_vec()), 0.01f64..100.0]
                .prop_map(move |c| vec![c; n])
                .boxed()
        }
        Costs::SmallSet => {
            proptest::collection::vec(proptest::sample::select(COST_SET.to_vec()), n).boxed()
        }
        Costs::Float => proptest::collection::vec(0.01f64..100.0, n).boxed(),
    }
}

/// Makes the two sums equal by adding the difference to processor `j` on the
/// lighter side.
fn equalise(loads: &mut [u64], targets: &mut [u64], j: usize) {
    let (sl, st): (u128, u128) = (
        loads.iter().map(|&x| x as u128).sum(),
        targets.iter().map(|&x| x as u128).sum(),
    );
    if sl > st {
        targets[j] += (sl - st) as u64;
    } else {
        loads[j] += (st - sl) as u64;
    }
}

/// Loose instances: loads and targets uniform in 1..=max, n in 2..=max_n.
pub fn loose(max_n: usize, max: u64, kind: Costs) -> impl Strategy<Value = Uni> {
    (2..=max_n).prop_flat_map(move |n| {
        (
            proptest::collection::vec(1..=max, n),
            proptest::collection::vec(1..=max, n),
            0..n,
            cost_vec(n, kind),
        )
            .prop_map(|(mut loads, mut targets, j, costs)| {
                equalise(&mut loads, &mut targets, j);
                Uni {
                    loads,
                    targets,
                    costs,
                }
            })
    })
}

/// Tight instances: loads and targets 1 or 2 (sums fixed on one processor), plus one
/// big source and one big sink at least n/2 links downstream of it, so that long
/// forwarding chains through processors holding 1 or 2 items are needed.
pub fn tight(max_n: usize, max_big: u64, kind: Costs) -> impl Strategy<Value = Uni> {
    (2..=max_n).prop_flat_map(move |n| {
        (
            proptest::collection::vec(1..=2u64, n),
            proptest::collection::vec(1..=2u64, n),
            0..n,
            0..n,
            (n / 2).max(1)..n,
            1..=max_big,
            cost_vec(n, kind),
        )
            .prop_map(move |(mut loads, mut targets, j, s, off, big, costs)| {
                equalise(&mut loads, &mut targets, j);
                loads[s] += big;
                targets[(s + off) % n] += big;
                Uni {
                    loads,
                    targets,
                    costs,
                }
            })
    })
}

/// Huge instances (item counts up to ~10^12) whose costs never decrease along the
/// flow, starting after the first zero-flow link: Algorithm 2 then never meets items
/// arriving slower than they leave, so its schedule has few batches (every planner
/// is checked on these rings, Algorithm 2 included; see
/// `saturated_chain_needs_small_batches` for rings where no optimal schedule has few).
pub fn huge_monotone(max_n: usize, tight_loads: bool) -> impl Strategy<Value = Uni> {
    (2..=max_n).prop_flat_map(move |n| {
        let small = if tight_loads { 2u64 } else { 1_000_000_000_000 };
        (
            proptest::collection::vec(1..=small, n),
            proptest::collection::vec(1..=small, n),
            0..n,
            0..n,
            (n / 2).max(1)..n,
            1..=1_000_000_000_000u64,
            proptest::collection::vec(0.01f64..100.0, n),
        )
            .prop_map(move |(mut loads, mut targets, j, s, off, big, mut costs)| {
                equalise(&mut loads, &mut targets, j);
                loads[s] += big;
                targets[(s + off) % n] += big;
                // Sort the costs ascending along the walk of Algorithm 2.
                let sums = naive_prefix_sums(&loads, &targets);
                let min = *sums.iter().min().unwrap();
                let zero = sums.iter().position(|&s| s == min).unwrap();
                costs.sort_by(f64::total_cmp);
                let mut placed = vec![0.0; n];
                for (k, &c) in costs.iter().enumerate() {
                    placed[(zero + 1 + k) % n] = c;
                }
                Uni {
                    loads,
                    targets,
                    costs: placed,
                }
            })
    })
}

pub fn naive_prefix_sums(loads: &[u64], targets: &[u64]) -> Vec<i128> {
    let mut acc = 0i128;
    loads
        .iter()
        .zip(targets)
        .map(|(&l, &t)| {
            acc += l as i128 - t as i128;
            acc
        })
        .collect()
}

/// The paper's slice bound (Lemma 1 / Theorem 2 as corrected in model.md), O(n^2):
/// for every slice P_k..P_{k+l} (l < n - 1, wrapping) with unbalance sum D, at least
/// |D| items cross one link one at a time: the outgoing link c[k+l] when D > 0, the
/// incoming link c[k-1] when D < 0.
pub fn naive_slice_bound(loads: &[u64], targets: &[u64], c: &[f64]) -> f64 {
    let n = loads.len();
    let mut best = 0.0f64;
    for k in 0..n {
        let mut d = 0i128;
        for l in 0..n - 1 {
            let j = (k + l) % n;
            d += loads[j] as i128 - targets[j] as i128;
            let bound = if d > 0 {
                d as f64 * c[j]
            } else if d < 0 {
                (-d) as f64 * c[(k + n - 1) % n]
            } else {
                0.0
            };
            best = best.max(bound);
        }
    }
    best
}

/// `|a - b| <= rel * max(1, |a|, |b|)`.
pub fn close(a: f64, b: f64, rel: f64) -> bool {
    (a - b).abs() <= rel * a.abs().max(b.abs()).max(1.0)
}

/// The rules broken, as a set.
pub fn rules(v: &[Violation]) -> BTreeSet<String> {
    v.iter().map(|x| format!("{:?}", x.rule)).collect()
}

pub fn rule_set(r: &[ViolationRule]) -> BTreeSet<String> {
    r.iter().map(|x| format!("{x:?}")).collect()
}

/// Send instants of every item of a schedule, per processor, sorted.
pub fn item_send_times(n: usize, s: &Schedule, cost: &[f64]) -> Vec<Vec<f64>> {
    let mut out = vec![Vec::new(); n];
    for t in &s.transfers {
        for k in 0..t.items {
            out[t.from].push(t.start + k as f64 * t.period.unwrap_or(cost[t.from]));
        }
    }
    for v in &mut out {
        v.sort_by(f64::total_cmp);
    }
    out
}

/// Item-by-item as-soon-as-possible simulation of a unidirectional ring with the
/// minimal flows `f`: processor i sends its k-th item at
/// `max(previous send + c_i, 0 if k <= load_i else arrival of item k - load_i)`.
/// Independent of the library's closed-form trains. Small counts only.
pub fn naive_asap(u: &Uni, f: &[u64]) -> Vec<Vec<f64>> {
    let n = u.loads.len();
    let zero = f
        .iter()
        .position(|&x| x == 0)
        .expect("a minimal flow is zero");
    let mut sends = vec![Vec::new(); n];
    let mut i = (zero + 1) % n;
    let mut arrivals: Vec<f64> = Vec::new();
    for _ in 0..n {
        let c = u.costs[i];
        let mut free = 0.0f64;
        let mut mine = Vec::with_capacity(f[i] as usize);
        for k in 1..=f[i] {
            let ready = if k <= u.loads[i] {
                0.0
            } else {
                arrivals[(k - u.loads[i] - 1) as usize]
            };
            let s = free.max(ready);
            mine.push(s);
            free = s + c;
        }
        arrivals = mine.iter().map(|s| s + c).collect();
        sends[i] = mine;
        i = (i + 1) % n;
    }
    sends
}

/// Item-by-item check of a unidirectional schedule, written without the library's
/// validator: successor only, items >= 1, finite non-negative times, exact durations
/// (a paced train: a period at least the cost, `end = start + (items-1) period +
/// cost`, its ports kept from start to end), one-port sends and receives, an item held at each send start (arrivals at or
/// before the instant count, earlier sends are gone), final holdings = targets.
/// Times are compared exactly: use it with costs and shifts exact in binary.
pub fn naive_valid(u: &Uni, s: &Schedule) -> bool {
    let n = u.loads.len();
    let mut sends: Vec<Vec<(f64, f64)>> = vec![Vec::new(); n];
    let mut recvs: Vec<Vec<(f64, f64)>> = vec![Vec::new(); n];
    let mut arrivals: Vec<Vec<f64>> = vec![Vec::new(); n];
    let mut starts: Vec<Vec<f64>> = vec![Vec::new(); n];
    let mut hold: Vec<i128> = u.loads.iter().map(|&x| x as i128).collect();
    for t in &s.transfers {
        if t.from >= n || t.to != (t.from + 1) % n || t.items == 0 {
            return false;
        }
        if !(t.start.is_finite() && t.end.is_finite() && t.start >= 0.0) {
            return false;
        }
        let c = u.costs[t.from];
        let p = t.period.unwrap_or(c);
        if p.is_nan() || p < c || t.end != t.start + (t.items - 1) as f64 * p + c {
            return false;
        }
        sends[t.from].push((t.start, t.end));
        recvs[t.to].push((t.start, t.end));
        for k in 0..t.items {
            starts[t.from].push(t.start + k as f64 * p);
            arrivals[t.to].push(t.start + k as f64 * p + c);
        }
        hold[t.from] -= t.items as i128;
        hold[t.to] += t.items as i128;
    }
    for p in 0..n {
        if hold[p] != u.targets[p] as i128 {
            return false;
        }
        for v in [&mut sends[p], &mut recvs[p]] {
            v.sort_by(|a, b| a.0.total_cmp(&b.0));
            if v.windows(2).any(|w| w[1].0 < w[0].1) {
                return false;
            }
        }
        starts[p].sort_by(f64::total_cmp);
        for (k, &t) in starts[p].iter().enumerate() {
            let arrived = arrivals[p].iter().filter(|&&a| a <= t).count() as i128;
            if u.loads[p] as i128 + arrived - k as i128 <= 0 {
                return false;
            }
        }
    }
    true
}

/// A transfer in the tuple form used by the regression tests.
pub fn tuple(t: &Transfer) -> (usize, usize, u64, f64, f64) {
    (t.from, t.to, t.items, t.start, t.end)
}

/// The tuples of a schedule with every paced train written out as its one-item
/// transfers (the item cost is what a paced train's end adds to its last start).
pub fn one_item_each(s: &Schedule) -> Vec<(usize, usize, u64, f64, f64)> {
    let mut out = Vec::new();
    for t in &s.transfers {
        match t.period {
            None => out.push(tuple(t)),
            Some(p) => {
                let last = t.start + (t.items - 1) as f64 * p;
                let c = t.end - last;
                for k in 0..t.items {
                    let start = if k + 1 == t.items {
                        last
                    } else {
                        t.start + k as f64 * p
                    };
                    out.push((t.from, t.to, 1, start, start + c));
                }
            }
        }
    }
    out.sort_by(|a, b| a.3.total_cmp(&b.3).then(a.0.cmp(&b.0)));
    out
}
