//! The start-up bounds: never above the exhaustive optimum, and how often tight.

use hetbal::random::SplitMix64;
use hetbal::ring::{
    circulation_bound, startup_exhaustive, startup_lower_bound, unidirectional_lower_bound,
    RingInstance, RingKind,
};

use crate::tiny::random_tiny;

/// The exhaustive optimum of a tiny ring (None if the search gives up).
fn optimum(ring: &RingInstance) -> Option<f64> {
    match startup_exhaustive(ring, 200.0, 3_000_000) {
        Ok(Some(s)) => Some(s.makespan()),
        _ => None,
    }
}

#[test]
fn startup_bounds_never_exceed_the_exhaustive_optimum() {
    let mut rng = SplitMix64::new(0x5a_b0_0d);
    let mut stats = [[0usize; 5]; 2]; // per kind: rings, tight, path best, port best, link best
    for round in 0..1500 {
        let bidirectional = round % 2 == 1;
        let n = 2 + rng.below(3);
        let ring = random_tiny(&mut rng, n, 3, bidirectional);
        let Some(opt) = optimum(&ring) else { continue };
        let b = startup_lower_bound(&ring);
        for (name, v) in [
            ("link", b.link),
            ("port", b.port),
            ("path", b.path),
            ("value", b.value),
        ] {
            assert!(
                v <= opt + 1e-9,
                "{name} bound {v} above the optimum {opt} on {ring:?}"
            );
        }
        let k = usize::from(bidirectional);
        stats[k][0] += 1;
        stats[k][1] += usize::from(b.value >= opt - 1e-9);
    }
    for (k, kind) in ["unidirectional", "bidirectional"].iter().enumerate() {
        eprintln!(
            "start-up bounds, {kind}: {} tiny rings, never above the optimum, tight on {}",
            stats[k][0], stats[k][1]
        );
    }
}

/// Without start-ups the port bound is the papers' bound: System 6's integer optimum
/// (bidirectional) and `max f c` (unidirectional).
#[test]
fn without_startups_the_port_bound_is_the_papers_bound() {
    let mut rng = SplitMix64::new(0x0b0_0d);
    for round in 0..3000 {
        let n = 2 + rng.below(40);
        let loads: Vec<u64> = (0..n).map(|_| 1 + rng.below_u64(20)).collect();
        let mut targets = loads.clone();
        for i in (1..n).rev() {
            targets.swap(i, rng.below(i + 1));
        }
        let cs: Vec<f64> = (0..n).map(|_| rng.range((0.5, 2.0))).collect();
        let cp: Vec<f64> = (0..n).map(|_| rng.range((0.5, 2.0))).collect();
        let ring = if round % 2 == 0 {
            RingInstance::unidirectional(&loads, &targets, &cs).unwrap()
        } else {
            RingInstance::bidirectional(&loads, &targets, &cs, &cp).unwrap()
        };
        let b = startup_lower_bound(&ring);
        let papers = match ring.kind() {
            RingKind::Unidirectional => unidirectional_lower_bound(&ring),
            RingKind::Bidirectional => circulation_bound(&ring).tau,
        };
        assert_eq!(b.port, papers, "{ring:?}");
        assert!(b.value >= papers);
    }
}
