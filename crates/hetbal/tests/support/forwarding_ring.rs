//! The benchmarks' forwarding ring, shared by `benches/bidirectional.rs`,
//! `examples/system6_lp_timing.rs` and `tools/highs-compare`: loads uniform in
//! `base + 1 ..= base + 1000`, targets the loads shifted by one processor (every
//! processor forwards), costs uniform in [0.5, 2.5) both ways, drawn from
//! `seed` (SplitMix64).

use hetbal::random::SplitMix64;
use hetbal::ring::RingInstance;

/// The forwarding ring of `n` processors above `base` items, drawn from `seed`.
pub fn shifted_ring(n: usize, base: u64, seed: u64) -> RingInstance {
    let mut rng = SplitMix64::new(seed);
    let loads: Vec<u64> = (0..n).map(|_| base + 1 + rng.below_u64(1000)).collect();
    let mut targets = loads.clone();
    targets.rotate_left(1);
    let cs: Vec<f64> = (0..n)
        .map(|_| 0.5 + (rng.below_u64(100)) as f64 / 50.0)
        .collect();
    let cp: Vec<f64> = (0..n)
        .map(|_| 0.5 + (rng.below_u64(100)) as f64 / 50.0)
        .collect();
    RingInstance::bidirectional(&loads, &targets, &cs, &cp).expect("a valid ring")
}
