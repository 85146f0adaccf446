//! One weighted partition at scale, timed once in a fresh process: what a user
//! meets the first time (page faults included).
//!
//! `cargo run --release -p hetbal --example partition_scale -- N P [moving]`:
//! power-law weights of N items, P processors of mixed speeds (the generators of
//! `hetbal::experiment::partition`); with `moving`, the least-moving partition
//! within 5 % after one processor in ten slowed down by half.

use std::time::Instant;

use hetbal::experiment::partition::{speeds, weights};
use hetbal::partition::{partition, partition_with_movement};
use hetbal::random::SplitMix64;

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let n: usize = args
        .get(1)
        .and_then(|a| a.parse().ok())
        .unwrap_or(1_000_000);
    let p: usize = args.get(2).and_then(|a| a.parse().ok()).unwrap_or(1_000);
    let moving = args.get(3).is_some_and(|a| a == "moving");
    let mut rng = SplitMix64::new(1);
    let w = weights("power-law", n, &mut rng);
    let s = speeds("mixed", p, &mut rng);
    let started = Instant::now();
    let best = partition(&w, &s).unwrap();
    println!(
        "partition n={n} p={p}: {:.3} s, {} probes, bottleneck {}, optimal {}",
        started.elapsed().as_secs_f64(),
        best.probes,
        best.bottleneck,
        best.optimal
    );
    if moving {
        let after: Vec<f64> = s
            .iter()
            .enumerate()
            .map(|(j, &x)| if j % 10 == 0 { 1.5 * x } else { x })
            .collect();
        let started = Instant::now();
        let m = partition_with_movement(&w, &after, &best.cuts, 0.05, None).unwrap();
        println!(
            "moving: {:.3} s, {} of {n} items moved, bottleneck {} within {}",
            started.elapsed().as_secs_f64(),
            m.moved_items,
            m.bottleneck,
            m.limit
        );
    }
}
