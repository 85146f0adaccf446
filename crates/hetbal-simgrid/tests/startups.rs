//! Rings with start-ups (docs/model.md "Start-ups") replayed under SimGrid: each
//! link's latency is the instance's start-up, a transfer over a link with a
//! start-up is one SimGrid communication of all its items, and under `oneport` a
//! valid plan ends when it says, to 1e-9 of its makespan (as without start-ups).
//! Times are pinned: a message of `m` items over a link with start-up `l` and cost
//! `c` ends at exactly `start + l + m c`.

mod support;

use hetbal::random::SplitMix64;
use hetbal::ring::{plan, retime_with_startups, RingInstance, RingKind, RingPlan};
use hetbal::{validate, Schedule};
use hetbal_simgrid::{NetworkModel, ReplayJob, ReplayReport, RingNetwork};
use support::{costs, story, tight_loads, transfer as t, worker};

/// Replays `schedule` on `ring` under `model`, items of `item_bytes` bytes.
fn replay(
    ring: &RingInstance,
    schedule: &Schedule,
    item_bytes: u64,
    model: NetworkModel,
) -> ReplayReport {
    let network = RingNetwork::from_instance(ring, item_bytes).unwrap();
    let job = ReplayJob::new(ring, schedule, &network, model).unwrap();
    worker(60).replay(&job).unwrap()
}

/// P0 -> P1 -> P2 (unidirectional): a start-up of 0.75 s on P0's link, none on
/// P1's; 0.5 s per item from P0, 0.25 s from P1. P0 sends 3 items, P1 forwards
/// them with its own.
fn chain() -> RingInstance {
    RingInstance::unidirectional(&[4, 1, 1], &[1, 1, 4], &[0.5, 0.25, 1.0])
        .unwrap()
        .with_startups(&[0.75, 0.0, 0.0], &[0.0; 3])
        .unwrap()
}

#[test]
fn a_message_takes_its_start_up_plus_its_items() {
    let ring = chain();
    // 3 items in one message: 0.75 + 3 x 0.5 = 2.25 s. P1 forwards 3 items as a
    // train (0.25 s each) from 2 s: its own first, then two of the message's,
    // held from 2.25 s.
    let plan = Schedule::new(vec![t(0, 1, 3, 0.0, 2.25), t(1, 2, 3, 2.0, 2.75)]);
    validate(&ring, &plan).expect("the plan is valid");
    for item_bytes in [1, 1_000_000, 1_000_000_000] {
        let report = replay(&ring, &plan, item_bytes, NetworkModel::OnePort);
        let ends: Vec<f64> = report.transfers.iter().map(|t| t.simgrid_end).collect();
        // Without the latency the message would end at 1.5 s.
        assert!(
            (ends[0] - 2.25).abs() <= 1e-12 && (ends[1] - 2.75).abs() <= 1e-12,
            "{item_bytes} bytes per item: {ends:?}"
        );
        assert!(report.agrees(1e-9), "{report:?}");
    }
}

#[test]
fn a_message_brings_its_items_only_at_its_end() {
    let ring = chain();
    // P1 plans its train from 1.25 s: its own item, then at 1.5 s and 1.75 s two
    // items that a train from P0 would have brought by then (at 1.25 s and 1.75
    // s, cut-through). The message brings them only at 2.25 s (the validator says
    // they are not held): the second item leaves then, the third after it.
    let early = Schedule::new(vec![t(0, 1, 3, 0.0, 2.25), t(1, 2, 3, 1.25, 2.0)]);
    assert!(validate(&ring, &early).is_err());
    let report = replay(&ring, &early, 1_000_000, NetworkModel::OnePort);
    assert!((report.transfers[0].simgrid_end - 2.25).abs() <= 1e-12);
    assert!(
        (report.transfers[1].simgrid_end - 2.75).abs() <= 1e-12,
        "{report:?}"
    );
}

#[test]
fn oneport_switches_off_the_tcp_window_that_cm02_keeps() {
    // 1 GB items at 2 GB/s behind 0.75 s of latency: CM02's TCP window
    // (gamma / (2 latency), 4 MiB / 1.5 s) caps the flow far below the link's
    // bandwidth; oneport has no window.
    let ring = chain();
    let plan = Schedule::new(vec![t(0, 1, 3, 0.0, 2.25), t(1, 2, 3, 2.0, 2.75)]);
    let exact = replay(&ring, &plan, 1_000_000_000, NetworkModel::OnePort);
    assert!((exact.transfers[0].simgrid_end - 2.25).abs() <= 1e-12);
    let cm02 = replay(&ring, &plan, 1_000_000_000, NetworkModel::Cm02);
    let window = 4_194_304.0 / (2.0 * 0.75);
    let capped = 0.75 + 3e9 / window;
    assert!(
        (cm02.transfers[0].simgrid_end - capped).abs() <= 1e-6 * capped,
        "{cm02:?}"
    );
}

/// Whether every planned transfer over a link with a start-up is one message:
/// the same plan timed without its start-ups ends strictly earlier.
fn pays_startups(ring: &RingInstance, plan: &RingPlan) -> bool {
    let without = ring
        .with_startups(&vec![0.0; ring.len()], &vec![0.0; ring.len()])
        .unwrap();
    retime_with_startups(&without, &plan.schedule()).makespan() < plan.makespan
}

/// The small rings of the pinned tests: unidirectional and bidirectional with a
/// start-up on every link, and one mixing links with and without.
fn small_rings() -> Vec<(&'static str, RingInstance)> {
    let uni = RingInstance::unidirectional(&[9, 1, 2, 1], &[2, 4, 3, 4], &[1.0, 0.5, 2.0, 1.0])
        .unwrap()
        .with_startups(&[2.0, 1.5, 0.5, 3.0], &[0.0; 4])
        .unwrap();
    let bi = RingInstance::bidirectional(
        &[9, 1, 1, 2, 1],
        &[2, 3, 3, 3, 3],
        &[1.0, 0.5, 2.0, 1.0, 1.5],
        &[0.5, 1.0, 1.0, 2.0, 1.0],
    )
    .unwrap()
    .with_startups(&[1.0, 2.0, 0.5, 1.5, 1.0], &[2.5, 1.0, 1.0, 0.25, 3.0])
    .unwrap();
    let mixed = RingInstance::bidirectional(
        &[1, 8, 1, 1, 1, 6],
        &[3, 3, 3, 3, 3, 3],
        &[1.0, 0.5, 1.0, 1.0, 2.0, 0.5],
        &[1.0, 1.0, 0.5, 1.0, 1.0, 1.0],
    )
    .unwrap()
    .with_startups(
        &[0.0, 3.0, 0.0, 1.0, 0.0, 0.0],
        &[2.0, 0.0, 0.0, 0.0, 0.0, 1.5],
    )
    .unwrap();
    vec![("uni", uni), ("bi", bi), ("mixed", mixed)]
}

#[test]
fn planned_rings_with_startups_replay_at_their_planned_times() {
    for (label, ring) in small_rings() {
        assert!(ring.has_startups());
        let p = plan(&ring, None).unwrap();
        assert!(validate(&ring, &p.schedule()).is_ok());
        assert!(pays_startups(&ring, &p), "{label}: {}", p.makespan);
        let messages = p
            .transfers
            .iter()
            .filter(|tr| ring.startup(tr.from, tr.to) > 0.0)
            .count();
        assert!(messages > 0, "{label}");
        if label == "mixed" {
            assert!(messages < p.transfers.len(), "{label}: trains too");
        }
        let report = replay(&ring, &p.schedule(), 1_000_000, NetworkModel::OnePort);
        let context = story(label, &ring, &p, Some(&report));
        assert!(report.agrees(1e-9), "{context}");
        // The makespan itself, against the planner's (its own measure).
        assert!(
            (report.simgrid_makespan - p.makespan).abs() <= 1e-9 * p.makespan,
            "{context}"
        );
        eprintln!(
            "{label} ({}, {} transfers): planned {} s, SimGrid {} s ({:+.1e} relative)",
            p.algorithm,
            p.transfers.len(),
            p.makespan,
            report.simgrid_makespan,
            report.simgrid_makespan / p.makespan - 1.0
        );
    }
}

/// A random ring of `n` processors with start-ups from 0 to `most` times the mean
/// item cost; on `mixed` rings about a third of the links have none.
fn random_ring(rng: &mut SplitMix64, kind: RingKind, n: usize, style: u64) -> RingInstance {
    let (loads, targets) = tight_loads(rng, n, 12);
    let cs = costs(rng, n, style);
    let cp = costs(rng, n, style / 3);
    let ring = match kind {
        RingKind::Unidirectional => RingInstance::unidirectional(&loads, &targets, &cs),
        RingKind::Bidirectional => RingInstance::bidirectional(&loads, &targets, &cs, &cp),
    }
    .unwrap();
    let mean = cs.iter().chain(&cp).sum::<f64>() / (2 * n) as f64;
    let mixed = style % 2 == 1;
    let startup = |rng: &mut SplitMix64| {
        if mixed && rng.below(3) == 0 {
            0.0
        } else {
            mean * rng.range((0.0, 10.0))
        }
    };
    let l_succ: Vec<f64> = (0..n).map(|_| startup(rng)).collect();
    let l_pred: Vec<f64> = (0..n).map(|_| startup(rng)).collect();
    ring.with_startups(&l_succ, &l_pred).unwrap()
}

#[test]
fn random_plans_with_startups_agree_under_oneport() {
    let mut rng = SplitMix64::new(0x1a7e_2c1e);
    // (label, ring, plan): hetbal's start-up plan, and today's plan (made without
    // start-ups) timed under them, which sends many small messages.
    let mut cases: Vec<(String, RingInstance, RingPlan, Schedule)> = Vec::new();
    for k in 0..48u64 {
        let (kind, n) = if k % 2 == 0 {
            (RingKind::Unidirectional, 2 + rng.below(9))
        } else {
            (RingKind::Bidirectional, 3 + rng.below(8))
        };
        let ring = random_ring(&mut rng, kind, n, k / 2);
        if !ring.has_startups() {
            continue;
        }
        let p = plan(&ring, None).unwrap_or_else(|e| panic!("{k}: {e}"));
        let without = ring.with_startups(&vec![0.0; n], &vec![0.0; n]).unwrap();
        let papers = plan(&without, None).unwrap().schedule();
        let label = format!("{kind} #{k} ({} processors)", n);
        cases.push((
            format!("{label}, {}", p.algorithm),
            ring.clone(),
            p.clone(),
            p.schedule(),
        ));
        // Always valid (the library sends deadlocked transfers item by item).
        let timed = retime_with_startups(&ring, &papers);
        if let Err(v) = validate(&ring, &timed) {
            panic!("{label}: today's plan timed under start-ups is invalid: {v:?}");
        }
        cases.push((format!("{label}, today's plan timed"), ring, p, timed));
    }
    let replay_one = |(label, ring, p, schedule): &(String, RingInstance, RingPlan, Schedule)| {
        let network = RingNetwork::from_instance(ring, 1_000_000).unwrap();
        let job = ReplayJob::new(ring, schedule, &network, NetworkModel::OnePort)
            .map_err(|e| format!("{label}: {e}"))?;
        let report = worker(60)
            .replay(&job)
            .map_err(|e| format!("{}--- {e}", story(label, ring, p, None)))?;
        Ok::<_, String>(report)
    };
    let half = cases.len().div_ceil(2);
    let results: Vec<Result<ReplayReport, String>> = std::thread::scope(|scope| {
        let first = scope.spawn(|| cases[..half].iter().map(replay_one).collect::<Vec<_>>());
        let mut rest: Vec<_> = cases[half..].iter().map(replay_one).collect();
        let mut all = first.join().expect("replay thread");
        all.append(&mut rest);
        all
    });
    let (mut worst, mut messages, mut failures) = (0.0f64, 0usize, String::new());
    for ((label, ring, p, schedule), result) in cases.iter().zip(&results) {
        match result {
            Ok(report) if report.agrees(1e-9) => {
                assert_eq!(report.plan_makespan, schedule.makespan());
                worst = worst.max(
                    (report.simgrid_makespan - report.plan_makespan).abs()
                        / report.plan_makespan.max(1.0),
                );
                for tr in &report.transfers {
                    worst = worst.max(tr.difference().abs() / report.plan_makespan.max(1.0));
                }
                messages += schedule
                    .transfers
                    .iter()
                    .filter(|tr| ring.startup(tr.from, tr.to) > 0.0)
                    .count();
            }
            Ok(report) => failures.push_str(&story(label, ring, p, Some(report))),
            Err(e) => failures.push_str(&format!("\n=== {label}: {e}\n")),
        }
    }
    assert!(
        failures.is_empty(),
        "plans with start-ups that do not replay at their planned times under oneport:{failures}"
    );
    eprintln!(
        "oneport with start-ups: {} valid plans ({messages} messages) replayed at their planned times, largest difference {worst:.1e} of the makespan",
        cases.len()
    );
}
