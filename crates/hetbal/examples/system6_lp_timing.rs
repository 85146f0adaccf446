//! One-shot timing of System 6 on a large heterogeneous bidirectional ring: the
//! combinatorial solver and the whole plan against the paper's LP solved by good_lp
//! (microlp). Criterion would repeat the LP many times; at n = 10^5 one run is enough.
//!
//! `cargo run --release -p hetbal --example system6_lp_timing -- 100000 [--no-lp]`
//!
//! The ring is the benchmark's forwarding ring (`benches/bidirectional.rs`): loads
//! uniform in 1..=1000, targets the loads shifted by one processor, costs uniform in
//! [0.5, 2.5).

use std::time::Instant;

use hetbal::ring::{circulation_bound, plan};

#[path = "../tests/support/system6_lp.rs"]
mod system6_lp;

#[path = "../tests/support/forwarding_ring.rs"]
mod forwarding_ring;
use forwarding_ring::shifted_ring;

fn main() {
    let n: usize = std::env::args()
        .nth(1)
        .map_or(100_000, |a| a.parse().expect("n: a number of processors"));
    let ring = shifted_ring(n, 0, n as u64);
    let t = Instant::now();
    let s6 = circulation_bound(&ring);
    let s6_time = t.elapsed();
    println!(
        "n = {n}: System 6 rational tau {} (integer {}) in {:.3} s",
        s6.rational_tau,
        s6.tau,
        s6_time.as_secs_f64()
    );
    let t = Instant::now();
    match plan(&ring, None) {
        Ok(p) => println!(
            "plan: {} makespan {} bound {} optimal {} in {:.3} s ({} transfers)",
            p.algorithm,
            p.makespan,
            p.lower_bound,
            p.optimal,
            t.elapsed().as_secs_f64(),
            p.transfers.len()
        ),
        Err(e) => println!("plan: {e} after {:.3} s", t.elapsed().as_secs_f64()),
    }
    if std::env::args().any(|a| a == "--no-lp") {
        return;
    }
    let t = Instant::now();
    let lp = system6_lp::lp_tau(&ring);
    let lp_time = t.elapsed();
    println!(
        "LP (microlp): tau {lp} in {:.3} s; relative difference {:.2e}; System 6 {:.0}x faster",
        lp_time.as_secs_f64(),
        (lp - s6.rational_tau).abs() / lp,
        lp_time.as_secs_f64() / s6_time.as_secs_f64()
    );
}
