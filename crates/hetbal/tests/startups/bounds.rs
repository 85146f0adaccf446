//! The start-up bounds without start-ups: the papers' bounds (against the exhaustive
//! optimum, see `exhaustive`).

use hetbal::random::SplitMix64;
use hetbal::ring::{
    circulation_bound, startup_lower_bound, unidirectional_lower_bound, RingInstance, RingKind,
};

/// Without start-ups the port bound is the papers' bound: System 6's integer optimum
/// (bidirectional) and `max f c` (unidirectional).
#[test]
fn without_startups_the_port_bound_is_the_papers_bound() {
    let mut rng = SplitMix64::new(0xb00d);
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
