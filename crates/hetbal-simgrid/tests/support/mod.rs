//! Shared by the integration tests: the worker, tight-load rings drawn from the
//! project's seeded generator (`hetbal::random::SplitMix64`), and the failure story
//! a test prints.
#![allow(dead_code)] // each test file uses part of it

use std::time::Duration;

use hetbal::random::SplitMix64;
use hetbal::ring::{RingInstance, RingPlan};
use hetbal::Transfer;
use hetbal_simgrid::{ReplayReport, Worker};

/// A transfer of a hand-made schedule.
pub fn transfer(from: usize, to: usize, items: u64, start: f64, end: f64) -> Transfer {
    Transfer::new(from, to, items, start, end)
}

/// The worker binary of this crate, with a wall-time limit of `seconds`.
pub fn worker(seconds: u64) -> Worker {
    Worker::new(env!("CARGO_BIN_EXE_hetbal-simgrid"), ["worker"])
        .timeout(Duration::from_secs(seconds))
}

/// Tight loads: every processor holds and keeps 1 or 2 items, and 1 to 3 times
/// 1 to `most` items go from a random processor to a random one (so most items
/// are forwarded the moment they arrive).
pub fn tight_loads(rng: &mut SplitMix64, n: usize, most: u64) -> (Vec<u64>, Vec<u64>) {
    let mut loads: Vec<u64> = (0..n).map(|_| 1 + rng.below_u64(2)).collect();
    let mut targets = loads.clone();
    for _ in 0..1 + rng.below_u64(3) {
        let extra = 1 + rng.below_u64(most);
        let src = rng.below(n);
        let dst = (src + 1 + rng.below(n - 1)) % n; // another one
        loads[src] += extra;
        targets[dst] += extra;
    }
    (loads, targets)
}

/// Link costs: all equal, from a small set exact in binary, or any float.
pub fn costs(rng: &mut SplitMix64, n: usize, style: u64) -> Vec<f64> {
    let c = 0.5 * (1 + rng.below_u64(6)) as f64;
    (0..n)
        .map(|_| match style % 3 {
            0 => c,
            1 => 0.5 * (1 + rng.below_u64(6)) as f64,
            _ => rng.range((0.01, 100.0)),
        })
        .collect()
}

/// Everything needed to rerun a failing case by hand.
pub fn story(
    label: &str,
    ring: &RingInstance,
    plan: &RingPlan,
    report: Option<&ReplayReport>,
) -> String {
    let mut s = format!(
        "\n=== {label}\n--- instance:\n{}\n--- plan:\n{}\n",
        serde_json::to_string(&ring.to_spec()).unwrap(),
        serde_json::to_string(plan).unwrap()
    );
    if let Some(report) = report {
        s.push_str(&format!(
            "--- replay: plan makespan {} s, SimGrid makespan {} s\n",
            report.plan_makespan, report.simgrid_makespan
        ));
        for (i, t) in report.transfers.iter().enumerate() {
            if t.plan_end != t.simgrid_end {
                s.push_str(&format!(
                    "    transfer {i}: {} -> {} ({} items): plan end {} s, SimGrid end {} s ({:+e} s)\n",
                    t.from,
                    t.to,
                    t.items,
                    t.plan_end,
                    t.simgrid_end,
                    t.difference()
                ));
            }
        }
    }
    s
}
