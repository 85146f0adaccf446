//! Tiny rings with start-ups for the exhaustive comparisons.

use hetbal::random::SplitMix64;
use hetbal::ring::RingInstance;

/// A random tiny ring: `n` processors, loads and targets in 1..=`max_load` (sums
/// equalised on one processor), costs in {1, 2}, start-ups in {0, 1, 2, 4} (half of
/// the rings with one start-up for every link), unidirectional or bidirectional.
pub fn random_tiny(
    rng: &mut SplitMix64,
    n: usize,
    max_load: u64,
    bidirectional: bool,
) -> RingInstance {
    let mut loads: Vec<u64> = (0..n).map(|_| 1 + rng.below_u64(max_load)).collect();
    let mut targets: Vec<u64> = (0..n).map(|_| 1 + rng.below_u64(max_load)).collect();
    let (sl, st): (u64, u64) = (loads.iter().sum(), targets.iter().sum());
    let j = rng.below(n);
    if sl > st {
        targets[j] += sl - st;
    } else {
        loads[j] += st - sl;
    }
    let cost = |rng: &mut SplitMix64| (1 + rng.below_u64(2)) as f64;
    let startups = [0.0, 1.0, 2.0, 4.0];
    let uniform = rng.below(2) == 0;
    let one = startups[rng.below(4)];
    let startup = |rng: &mut SplitMix64| if uniform { one } else { startups[rng.below(4)] };
    let cs: Vec<f64> = (0..n).map(|_| cost(rng)).collect();
    let ls: Vec<f64> = (0..n).map(|_| startup(rng)).collect();
    if bidirectional {
        let cp: Vec<f64> = (0..n).map(|_| cost(rng)).collect();
        let lp: Vec<f64> = (0..n).map(|_| startup(rng)).collect();
        RingInstance::bidirectional(&loads, &targets, &cs, &cp)
            .unwrap()
            .with_startups(&ls, &lp)
            .unwrap()
    } else {
        RingInstance::unidirectional(&loads, &targets, &cs)
            .unwrap()
            .with_startups(&ls, &vec![0.0; n])
            .unwrap()
    }
}
