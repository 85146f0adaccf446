//! With every start-up zero the start-up model is the papers' model: the start-up
//! planner gives today's makespans, and documents without start-ups are read and
//! planned exactly as before.

use hetbal::random::SplitMix64;
use hetbal::ring::{
    plan, startup_schedule, unidirectional_lower_bound, RingAlgorithm, RingInstance,
    RingInstanceSpec,
};
use hetbal::validate;

/// The rings of the library's examples and regression tests, and random ones.
fn rings(rng: &mut SplitMix64) -> Vec<RingInstance> {
    let mut rings = vec![
        RingInstance::unidirectional(&[4, 1, 1], &[2, 2, 2], &[1.0, 3.0, 1.0]).unwrap(),
        RingInstance::unidirectional(&[4, 1, 2], &[1, 1, 5], &[2.0, 1.0, 1.0]).unwrap(),
        RingInstance::unidirectional(&[9, 1, 1, 1], &[1, 1, 3, 7], &[2.0, 1.0, 1.5, 1.0]).unwrap(),
        RingInstance::unidirectional(&[3, 1, 1], &[1, 1, 3], &[2.0, 1.0, 1.0]).unwrap(),
        RingInstance::bidirectional(&[1, 2, 3, 1], &[4, 1, 1, 1], &[1.0; 4], &[1.0; 4]).unwrap(),
        RingInstance::bidirectional(
            &[5, 1, 1, 1],
            &[1, 1, 1, 5],
            &[1.0, 2.0, 1.0, 3.0],
            &[3.0; 4],
        )
        .unwrap(),
        RingInstance::bidirectional(&[1, 2, 2], &[3, 1, 1], &[1.0, 1.0, 2.0], &[1.0, 1.0, 3.0])
            .unwrap(),
        RingInstance::bidirectional(&[3, 1, 1], &[1, 2, 2], &[2.0; 3], &[1.5; 3]).unwrap(),
    ];
    for round in 0..400 {
        let n = 2 + rng.below(30);
        let loads: Vec<u64> = (0..n).map(|_| 1 + rng.below_u64(12)).collect();
        let mut targets = loads.clone();
        for i in (1..n).rev() {
            targets.swap(i, rng.below(i + 1));
        }
        let costs = |rng: &mut SplitMix64| -> Vec<f64> {
            (0..n).map(|_| [0.5, 1.0, 1.5, 2.0][rng.below(4)]).collect()
        };
        let cs = costs(rng);
        rings.push(if round % 2 == 0 {
            RingInstance::unidirectional(&loads, &targets, &cs).unwrap()
        } else {
            let cp = costs(rng);
            RingInstance::bidirectional(&loads, &targets, &cs, &cp).unwrap()
        });
    }
    rings
}

/// On unidirectional rings the planner's own schedule (messages of one item over
/// links without start-up, as soon as possible) is Algorithm 2's: the optimum
/// `max f c`.
#[test]
fn without_startups_the_startup_planner_is_optimal_on_unidirectional_rings() {
    let mut rng = SplitMix64::new(0x2e_70);
    let mut checked = 0;
    for ring in rings(&mut rng)
        .iter()
        .filter(|r| r.kind() == hetbal::ring::RingKind::Unidirectional)
    {
        let schedule = startup_schedule(ring);
        let report = validate(ring, &schedule).unwrap();
        assert_eq!(
            report.makespan,
            unidirectional_lower_bound(ring),
            "{ring:?}"
        );
        checked += 1;
    }
    assert!(checked > 200);
}

/// `startup-batches` forced on a ring without start-ups gives today's plan's
/// makespan, and so does a document with explicit zero start-ups.
#[test]
fn without_startups_the_startup_algorithm_gives_todays_makespans() {
    let mut rng = SplitMix64::new(0x2e_71);
    for ring in rings(&mut rng) {
        let today = plan(&ring, None).unwrap();
        let forced = plan(&ring, Some(RingAlgorithm::StartupBatches)).unwrap();
        assert_eq!(forced.makespan, today.makespan, "{ring:?}");
        let zero = ring
            .with_startups(&vec![0.0; ring.len()], &vec![0.0; ring.len()])
            .unwrap();
        assert!(!zero.has_startups());
        assert_eq!(plan(&zero, None).unwrap(), today);
    }
}

/// Documents without start-ups are written as before (no new field), read back the
/// same, and zero start-ups written explicitly read as absent.
#[test]
fn documents_without_startups_are_unchanged() {
    let text = r#"{"ring":"bidirectional","processors":[{"name":"A","load":3,"target":1,"c_succ":1.0,"c_pred":2.0},{"name":"B","load":1,"target":3,"c_succ":1.5,"c_pred":1.0}]}"#;
    let spec: RingInstanceSpec = serde_json::from_str(text).unwrap();
    let ring = RingInstance::from_spec(spec).unwrap();
    assert_eq!(serde_json::to_string(&ring.to_spec()).unwrap(), text);
    let explicit = text.replace(
        r#""c_pred":2.0}"#,
        r#""c_pred":2.0,"l_succ":0.0,"l_pred":0}"#,
    );
    let spec: RingInstanceSpec = serde_json::from_str(&explicit).unwrap();
    assert_eq!(RingInstance::from_spec(spec).unwrap(), ring);
    // With a start-up, it is written and read back.
    let latent = ring.with_startups(&[0.25, 0.0], &[0.0, 1.0]).unwrap();
    let written = serde_json::to_string(&latent.to_spec()).unwrap();
    assert!(written.contains(r#""l_succ":0.25"#) && written.contains(r#""l_pred":1.0"#));
    let spec: RingInstanceSpec = serde_json::from_str(&written).unwrap();
    assert_eq!(RingInstance::from_spec(spec).unwrap(), latent);
}

/// Bad start-ups are refused with the processor, the field and the rule.
#[test]
fn bad_startups_are_refused_with_their_place() {
    let ring = RingInstance::unidirectional(&[2, 1], &[1, 2], &[1.0; 2]).unwrap();
    let cases = [
        (
            f64::NAN,
            "processor 1 (P1): l_pred NaN must be a number >= 0",
        ),
        (f64::INFINITY, "processor 1 (P1): l_pred inf must be finite"),
        (-0.5, "processor 1 (P1): l_pred -0.5 must be >= 0"),
    ];
    for (value, message) in cases {
        let err = ring.with_startups(&[0.0, 0.0], &[0.0, value]).unwrap_err();
        assert_eq!(err.to_string(), message);
    }
    let text = r#"{"ring":"unidirectional","processors":[{"load":1,"target":1,"c_succ":1.0,"l_succ":-1},{"load":1,"target":1,"c_succ":1.0}]}"#;
    let spec: RingInstanceSpec = serde_json::from_str(text).unwrap();
    assert_eq!(
        RingInstance::from_spec(spec).unwrap_err().to_string(),
        "processor 0 (P0): l_succ -1 must be >= 0"
    );
    // -0 is a zero start-up.
    let minus_zero = ring.with_startups(&[-0.0, 0.0], &[0.0, 0.0]).unwrap();
    assert!(!minus_zero.has_startups());
    assert_eq!(minus_zero.l_succ()[0].to_bits(), 0.0f64.to_bits());
}
