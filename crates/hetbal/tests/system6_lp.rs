//! System 6 as the paper writes it, solved as a linear program by a real solver
//! (good_lp with microlp, see `support/system6_lp.rs`), against hetbal's
//! one-variable convex minimisation.

use hetbal::random::SplitMix64;
#[path = "support/system6_lp.rs"]
mod system6_lp;

use hetbal::ring::{circulation_bound, RingInstance};
use system6_lp::lp_tau;

#[test]
fn system6_matches_the_lp_solver() {
    let mut rng = SplitMix64::new(0x1b5);
    let mut checked = 0;
    for _ in 0..1500 {
        let n = 2 + rng.below(25);
        let loads: Vec<u64> = (0..n).map(|_| 1 + rng.below_u64(50)).collect();
        let mut targets: Vec<u64> = (0..n).map(|_| 1 + rng.below_u64(50)).collect();
        let (sl, st): (u64, u64) = (loads.iter().sum(), targets.iter().sum());
        if st < sl {
            targets[0] += sl - st;
        } else if st - sl < targets[0] {
            targets[0] -= st - sl;
        } else {
            continue;
        }
        let costs = |rng: &mut SplitMix64| -> Vec<f64> {
            (0..n)
                .map(|_| 0.1 + (rng.below_u64(1000) as f64) / 100.0)
                .collect()
        };
        let (cs, cp) = (costs(&mut rng), costs(&mut rng));
        let ring = RingInstance::bidirectional(&loads, &targets, &cs, &cp).unwrap();
        let lp = lp_tau(&ring);
        let ours = circulation_bound(&ring).rational_tau;
        assert!(
            (lp - ours).abs() <= 1e-9 * lp.abs().max(1.0),
            "LP {lp} vs hetbal {ours} on {ring:?}"
        );
        checked += 1;
    }
    eprintln!("System 6: {checked} random rings, rational optimum = LP optimum within 1e-9");
    assert!(checked > 900);
}
