//! The open case, measured: random tight-load heterogeneous bidirectional rings (the
//! generator of the test `tight_heterogeneous_rings_measured`, with more rings).
//! Prints how often the plan reaches System 6, how often it is proven optimal (by
//! the bound or by the exact search), the worst gap, the same figures for rings of
//! at most 8 processors, and every ring left unproven.
//!
//! `cargo run --release -p hetbal --example open_case -- [RINGS] [SEED]`

use std::time::Instant;

use hetbal::ring::{circulation_bound, plan, RingInstance};

use hetbal::random::SplitMix64;

fn main() {
    let mut args = std::env::args().skip(1);
    let rings: usize = args
        .next()
        .map_or(100_000, |a| a.parse().expect("RINGS: a number"));
    let seed: u64 = args
        .next()
        .map_or(0x0be7, |a| a.parse().expect("SEED: a number"));
    let mut rng = SplitMix64::new(seed);
    let started = Instant::now();
    let (mut light, mut at_s6, mut proven, mut worst_gap) = (0usize, 0usize, 0usize, 0.0f64);
    let (mut small, mut small_proven, mut heterogeneous) = (0usize, 0usize, 0usize);
    let mut unproven = Vec::new();
    let mut slowest = (0.0f64, 0usize);
    for _ in 0..rings {
        let n = 3 + rng.below(14);
        let mut loads: Vec<u64> = (0..n).map(|_| 1 + rng.below_u64(2)).collect();
        let mut targets = loads.clone();
        for _ in 0..1 + rng.below_u64(3) {
            let (src, dst) = (rng.below(n), rng.below(n));
            let extra = 1 + rng.below_u64(20);
            loads[src] += extra;
            targets[dst] += extra;
        }
        let cs: Vec<f64> = (0..n)
            .map(|_| 0.5 * (1 + rng.below_u64(8)) as f64)
            .collect();
        let cp: Vec<f64> = (0..n)
            .map(|_| 0.5 * (1 + rng.below_u64(8)) as f64)
            .collect();
        let ring = RingInstance::bidirectional(&loads, &targets, &cs, &cp).expect("valid");
        if ring.is_homogeneous() {
            continue;
        }
        heterogeneous += 1;
        let planning = Instant::now();
        let p = plan(&ring, None).unwrap_or_else(|e| panic!("{e} on {ring:?}"));
        let seconds = planning.elapsed().as_secs_f64();
        if seconds > slowest.0 {
            slowest = (seconds, n);
        }
        let s6 = circulation_bound(&ring).tau;
        light += usize::from(p.light && p.algorithm == "bidirectional-lemma9");
        at_s6 += usize::from(p.makespan <= s6 * (1.0 + 1e-9));
        proven += usize::from(p.optimal);
        worst_gap = worst_gap.max(p.makespan / p.lower_bound - 1.0);
        if n <= 8 {
            small += 1;
            small_proven += usize::from(p.optimal);
        }
        if !p.optimal {
            unproven.push(format!(
                "n {n} makespan {} bound {} (System 6 {s6}) loads {loads:?} targets {targets:?} c_succ {cs:?} c_pred {cp:?}",
                p.makespan, p.lower_bound
            ));
        }
    }
    let pct = |a: usize, b: usize| 100.0 * a as f64 / b.max(1) as f64;
    println!(
        "{heterogeneous} heterogeneous tight rings ({light} light) in {:.1} s",
        started.elapsed().as_secs_f64()
    );
    println!(
        "at System 6: {at_s6} ({:.3}%); proven optimal: {proven} ({:.3}%); worst gap to the best bound {:.2}%",
        pct(at_s6, heterogeneous),
        pct(proven, heterogeneous),
        100.0 * worst_gap
    );
    println!(
        "n <= 8: {small_proven} of {small} proven ({:.3}%); n > 8: {} of {} proven ({:.3}%)",
        pct(small_proven, small),
        proven - small_proven,
        heterogeneous - small,
        pct(proven - small_proven, heterogeneous - small)
    );
    println!("slowest plan: {:.2} s (n = {})", slowest.0, slowest.1);
    for line in unproven {
        println!("unproven: {line}");
    }
}
