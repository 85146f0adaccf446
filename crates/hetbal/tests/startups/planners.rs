//! The start-up planner against the exhaustive search on tiny rings.

use hetbal::random::SplitMix64;
use hetbal::ring::{startup_exhaustive, startup_lower_bound, startup_schedule};
use hetbal::validate;

use crate::tiny::random_tiny;

#[test]
fn startup_planner_against_the_exhaustive_optimum() {
    let mut rng = SplitMix64::new(0x91a2);
    let mut stats = [[0usize; 3]; 2]; // rings, optimal, worst gap in permille
    let mut worst = [0.0f64; 2];
    for round in 0..1500 {
        let bidirectional = round % 2 == 1;
        let n = 2 + rng.below(3);
        let ring = random_tiny(&mut rng, n, 3, bidirectional);
        let schedule = startup_schedule(&ring);
        let report = validate(&ring, &schedule)
            .unwrap_or_else(|v| panic!("invalid start-up plan on {ring:?}: {v:?}"));
        let Ok(Some(best)) = startup_exhaustive(&ring, report.makespan, 3_000_000) else {
            continue;
        };
        let opt = best.makespan();
        assert!(report.makespan >= opt - 1e-9);
        assert!(startup_lower_bound(&ring).value <= opt + 1e-9);
        let k = usize::from(bidirectional);
        stats[k][0] += 1;
        if report.makespan <= opt + 1e-9 {
            stats[k][1] += 1;
        } else {
            let gap = report.makespan / opt - 1.0;
            if gap > worst[k] {
                worst[k] = gap;
                eprintln!(
                    "gap {gap:.3}: planned {} optimum {opt} on {ring:?}",
                    report.makespan
                );
            }
        }
    }
    for (k, kind) in ["unidirectional", "bidirectional"].iter().enumerate() {
        eprintln!(
            "start-up planner, {kind}: {} tiny rings, optimal on {}, worst gap {:.1}%",
            stats[k][0],
            stats[k][1],
            100.0 * worst[k]
        );
    }
}
