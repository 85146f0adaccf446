//! Random valid plans from hetbal's planners, replayed under SimGrid: under the
//! exact setting (`oneport`) every transfer ends when the plan says, to 1e-9
//! relative; under LV08 the differences are measured and reported per transfer.

mod support;

use hetbal::random::SplitMix64;
use hetbal::ring::{plan, RingAlgorithm, RingInstance, RingPlan};
use hetbal_simgrid::{NetworkModel, ReplayJob, ReplayReport, RingNetwork};
use support::{costs, story, tight_loads, worker};

/// A ring, the algorithm forced on it (if any) and its plan.
struct Case {
    label: String,
    ring: RingInstance,
    plan: RingPlan,
}

/// Plans a ring with the default planner and, when it applies, with `extra`.
fn planned(label: &str, ring: RingInstance, extra: Option<RingAlgorithm>, cases: &mut Vec<Case>) {
    let default = plan(&ring, None).unwrap_or_else(|e| panic!("{label}: {e}"));
    if let Some(algorithm) = extra {
        if let Ok(p) = plan(&ring, Some(algorithm)) {
            if p.algorithm != default.algorithm || p.transfers != default.transfers {
                cases.push(Case {
                    label: format!("{label}, {algorithm}"),
                    ring: ring.clone(),
                    plan: p,
                });
            }
        }
    }
    cases.push(Case {
        label: format!("{label}, default ({})", default.algorithm),
        ring,
        plan: default,
    });
}

/// Random tight-load rings: `uni` unidirectional and `bi` bidirectional ones.
fn random_cases(seed: u64, uni: usize, bi: usize) -> Vec<Case> {
    let mut rng = SplitMix64::new(seed);
    let mut cases = Vec::new();
    for k in 0..uni {
        let n = 2 + rng.below(9);
        let (loads, targets) = tight_loads(&mut rng, n, 12);
        let cs = costs(&mut rng, n, k as u64);
        let ring = RingInstance::unidirectional(&loads, &targets, &cs).unwrap();
        // Algorithm 2 as soon as possible: every item forwarded the moment it
        // arrives (paced trains, replayed item by item).
        let extra = (k % 2 == 0).then_some(RingAlgorithm::UnidirectionalHeterogeneous);
        planned(&format!("uni #{k}"), ring, extra, &mut cases);
    }
    for k in 0..bi {
        let n = 3 + rng.below(8);
        let (loads, targets) = tight_loads(&mut rng, n, 12);
        let cs = costs(&mut rng, n, k as u64);
        let cp = costs(&mut rng, n, k as u64 / 3);
        let ring = RingInstance::bidirectional(&loads, &targets, &cs, &cp).unwrap();
        let extra = match k % 3 {
            0 => Some(RingAlgorithm::BidirectionalList),
            1 => Some(RingAlgorithm::BidirectionalSegments),
            _ => None,
        };
        planned(&format!("bi #{k}"), ring, extra, &mut cases);
    }
    cases
}

/// Replays every case under `model` on two threads (the machine's cores).
fn replay_all(cases: &[Case], model: NetworkModel) -> Vec<Result<ReplayReport, String>> {
    let worker = worker(60);
    let replay = |case: &Case| -> Result<ReplayReport, String> {
        let network =
            RingNetwork::from_instance(&case.ring, 1_000_000).map_err(|e| e.to_string())?;
        let job = ReplayJob::new(&case.ring, &case.plan.schedule(), &network, model)
            .map_err(|e| e.to_string())?;
        worker.replay(&job).map_err(|e| e.to_string())
    };
    let half = cases.len().div_ceil(2);
    std::thread::scope(|scope| {
        let first = scope.spawn(|| cases[..half].iter().map(replay).collect::<Vec<_>>());
        let mut results: Vec<_> = cases[half..].iter().map(replay).collect();
        let mut all = first.join().expect("replay thread");
        all.append(&mut results);
        all
    })
}

#[test]
fn random_valid_plans_agree_under_the_exact_setting() {
    let cases = random_cases(0x51_6d_67_72, 90, 120);
    let results = replay_all(&cases, NetworkModel::OnePort);
    let mut failures = String::new();
    let (mut agreed, mut uni, mut bi, mut items) = (0, 0, 0, 0u128);
    let mut worst = 0.0f64;
    for (case, result) in cases.iter().zip(&results) {
        match result {
            Ok(report) if report.agrees(1e-9) => {
                agreed += 1;
                for t in &report.transfers {
                    worst = worst.max(t.difference().abs() / report.plan_makespan.max(1.0));
                }
                if case.label.starts_with("uni") {
                    uni += 1;
                } else {
                    bi += 1;
                }
                items += case.plan.schedule().items_sent();
            }
            Ok(report) => {
                failures.push_str(&story(&case.label, &case.ring, &case.plan, Some(report)))
            }
            Err(e) => failures.push_str(&format!(
                "{}--- replay failed: {e}\n",
                story(&case.label, &case.ring, &case.plan, None)
            )),
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {} plans do not replay at their planned times under oneport:{failures}",
        cases.len() - agreed,
        cases.len()
    );
    eprintln!(
        "oneport: {agreed} random valid plans ({uni} unidirectional, {bi} bidirectional, {items} item moves) replayed at their planned times to 1e-9 (largest difference {worst:.1e} of the makespan)"
    );
}

#[test]
fn lv08_and_cm02_differences_are_reported_per_transfer() {
    let cases = random_cases(0x1f08, 4, 6);
    for model in [NetworkModel::Lv08, NetworkModel::Cm02] {
        let results = replay_all(&cases, model);
        for (case, result) in cases.iter().zip(results) {
            let report = result.unwrap_or_else(|e| {
                panic!(
                    "{}--- {e}",
                    story(&case.label, &case.ring, &case.plan, None)
                )
            });
            let context = || story(&case.label, &case.ring, &case.plan, Some(&report));
            assert_eq!(report.model, model);
            assert_eq!(
                report.transfers.len(),
                case.plan.transfers.len(),
                "{}",
                context()
            );
            assert!(
                report
                    .transfers
                    .iter()
                    .all(|t| t.simgrid_end.is_finite() && t.simgrid_end > 0.0),
                "{}",
                context()
            );
            if model == NetworkModel::Lv08 {
                // LV08 gives a lone flow 97% of the bandwidth: every transfer
                // ends later than planned, the makespan by at least 3%.
                assert!(
                    report.transfers.iter().all(|t| t.simgrid_end > t.plan_end),
                    "{}",
                    context()
                );
                assert!(
                    report.simgrid_makespan >= report.plan_makespan / 0.97 * (1.0 - 1e-9),
                    "{}",
                    context()
                );
            } else {
                // CM02 differs from oneport only by cross traffic (no latency
                // here): never earlier than the plan.
                assert!(
                    report
                        .transfers
                        .iter()
                        .all(|t| t.simgrid_end >= t.plan_end * (1.0 - 1e-9)),
                    "{}",
                    context()
                );
            }
            let (i, worst) = report.largest_difference().expect("plans move items");
            eprintln!(
                "{model} {}: makespan {} s planned, {} s in SimGrid ({:+.2}%); largest transfer difference: #{i} {} -> {} {:+.4} s",
                case.label,
                report.plan_makespan,
                report.simgrid_makespan,
                100.0 * (report.simgrid_makespan / report.plan_makespan - 1.0),
                worst.from,
                worst.to,
                worst.difference()
            );
        }
    }
}

#[test]
fn two_processor_rings_replay() {
    let w = worker(30);
    let uni = RingInstance::unidirectional(&[5, 1], &[2, 4], &[0.75, 2.0]).unwrap();
    let bi = RingInstance::bidirectional(&[5, 1], &[2, 4], &[0.75, 2.0], &[1.5, 1.0]).unwrap();
    for ring in [uni, bi] {
        let p = plan(&ring, None).unwrap();
        let network = RingNetwork::from_instance(&ring, 4096).unwrap();
        let job = ReplayJob::new(&ring, &p.schedule(), &network, NetworkModel::OnePort).unwrap();
        let report = w.replay(&job).unwrap();
        assert!(
            report.agrees(1e-9),
            "{}",
            story("2-ring", &ring, &p, Some(&report))
        );
    }
}
