//! Full rebalances of large rings, timed: loads uniform in 1..=50, targets the loads
//! shuffled (every processor's load changes), link costs uniform in [0.5, 2).
//!
//! `cargo run --release -p hetbal --example full_rebalance -- KIND N [SEED] [FILE]`
//! with KIND `uni` or `bi`. Prints the time `plan` takes (schedule and validation),
//! the makespan, the lower bound, the gap and the number of transfers; with FILE,
//! first writes the instance there as JSON (the instance document of formats.md).

use std::time::Instant;

use hetbal::random::SplitMix64;
use hetbal::ring::{plan, RingInstance};

/// The ring: loads uniform in 1..=50, targets a random permutation of the loads.
fn full_rebalance(bidirectional: bool, n: usize, seed: u64) -> RingInstance {
    let mut rng = SplitMix64::new(seed);
    let loads: Vec<u64> = (0..n).map(|_| 1 + rng.below_u64(50)).collect();
    let mut targets = loads.clone();
    for i in (1..n).rev() {
        targets.swap(i, rng.below(i + 1));
    }
    let c_succ: Vec<f64> = (0..n).map(|_| rng.range((0.5, 2.0))).collect();
    if bidirectional {
        let c_pred: Vec<f64> = (0..n).map(|_| rng.range((0.5, 2.0))).collect();
        RingInstance::bidirectional(&loads, &targets, &c_succ, &c_pred)
    } else {
        RingInstance::unidirectional(&loads, &targets, &c_succ)
    }
    .expect("a permutation of the loads balances the sums")
}

fn main() {
    let mut args = std::env::args().skip(1);
    let bidirectional = match args.next().as_deref() {
        Some("uni") => false,
        Some("bi") => true,
        _ => panic!("KIND: uni or bi"),
    };
    let n: usize = args.next().map_or(1_000_000, |a| a.parse().expect("N"));
    let seed: u64 = args.next().map_or(21, |a| a.parse().expect("SEED"));
    let ring = full_rebalance(bidirectional, n, seed);
    if let Some(file) = args.next() {
        let text = serde_json::to_string(&ring.to_spec()).expect("an instance serialises");
        std::fs::write(&file, text).expect("FILE: writable");
        eprintln!("instance written to {file}");
    }
    let started = Instant::now();
    let planned = plan(&ring, None).expect("every valid ring is planned");
    let seconds = started.elapsed().as_secs_f64();
    println!(
        "{} n = {n}: plan {seconds:.3} s, algorithm {}, makespan {}, bound {}, gap {:.4}%, {} transfers",
        if bidirectional { "bidirectional" } else { "unidirectional" },
        planned.algorithm,
        planned.makespan,
        planned.lower_bound,
        100.0 * (planned.makespan / planned.lower_bound - 1.0),
        planned.transfers.len()
    );
}
