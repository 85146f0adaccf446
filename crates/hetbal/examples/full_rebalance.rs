//! Full rebalances of large rings, timed: loads uniform in 1..=50, targets the loads
//! shuffled (every processor's load changes), link costs uniform in [0.5, 2).
//!
//! `cargo run --release -p hetbal --example full_rebalance -- KIND N [SEED] [FILE]`
//! with KIND `uni` or `bi`. Prints the time `plan` takes (schedule and validation),
//! the makespan, the lower bound, the gap and the number of transfers; with FILE,
//! first writes the instance there as JSON (the instance document of formats.md).

use std::time::Instant;

use hetbal::experiment::startups::full_rebalance;
use hetbal::ring::{plan, RingKind};

fn main() {
    let mut args = std::env::args().skip(1);
    let kind = match args.next().as_deref() {
        Some("uni") => RingKind::Unidirectional,
        Some("bi") => RingKind::Bidirectional,
        _ => panic!("KIND: uni or bi"),
    };
    let n: usize = args.next().map_or(1_000_000, |a| a.parse().expect("N"));
    let seed: u64 = args.next().map_or(21, |a| a.parse().expect("SEED"));
    let ring = full_rebalance(kind, n, seed).expect("N: at least 2");
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
        kind,
        planned.algorithm,
        planned.makespan,
        planned.lower_bound,
        100.0 * (planned.makespan / planned.lower_bound - 1.0),
        planned.transfers.len()
    );
}
