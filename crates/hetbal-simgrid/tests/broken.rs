//! Plans that break the model are exposed by the replay: a later makespan, or a
//! deadlock reported as an error; and no replay hangs (every worker has a
//! wall-time limit).

mod support;

use std::time::{Duration, Instant};

use hetbal::ring::RingInstance;
use hetbal::{validate, Schedule, Transfer, ViolationRule};
use hetbal_simgrid::{NetworkModel, ReplayError, ReplayJob, ReplayReport, RingNetwork, Worker};
use support::{transfer, worker};

/// Replays a hand-made schedule under oneport; also returns what the validator
/// says of it.
fn replay(
    ring: &RingInstance,
    transfers: Vec<Transfer>,
) -> (Result<ReplayReport, ReplayError>, Vec<ViolationRule>) {
    let schedule = Schedule { transfers };
    let rules = validate(ring, &schedule)
        .err()
        .unwrap_or_default()
        .iter()
        .map(|v| v.rule)
        .collect();
    let network = RingNetwork::from_instance(ring, 1_000_000).unwrap();
    let job = ReplayJob::new(ring, &schedule, &network, NetworkModel::OnePort).unwrap();
    (worker(30).replay(&job), rules)
}

fn story(report: &Result<ReplayReport, ReplayError>, rules: &[ViolationRule]) -> String {
    format!(
        "\n--- validator: {rules:?}\n--- replay: {}",
        match report {
            Ok(r) => serde_json::to_string_pretty(r).unwrap(),
            Err(e) => e.to_string(),
        }
    )
}

#[test]
fn an_item_sent_before_it_arrives_delays_the_makespan() {
    // P0 -> P1 -> P2; P1 keeps one item and forwards two of P0's to P2 (2 s each).
    // P1 starts its second send at t = 2, but P0's first item arrives at 2.5.
    let ring = RingInstance::unidirectional(&[3, 1, 1], &[1, 1, 3], &[1.0, 2.0, 1.0]).unwrap();
    let (report, rules) = replay(
        &ring,
        vec![transfer(1, 2, 2, 0.0, 4.0), transfer(0, 1, 2, 1.5, 3.5)],
    );
    let context = story(&report, &rules);
    assert_eq!(rules, vec![ViolationRule::NotHeld], "{context}");
    let report = report.expect("a late item delays, it does not block");
    assert_eq!(report.plan_makespan, 4.0, "{context}");
    // The second item leaves P1 when it arrives (2.5) and lands at 4.5.
    assert!((report.simgrid_makespan - 4.5).abs() < 1e-9, "{context}");
    assert!(
        (report.transfers[0].simgrid_end - 4.5).abs() < 1e-9,
        "{context}"
    );
    assert!(!report.agrees(1e-9), "{context}");
}

#[test]
fn two_sends_at_once_are_serialised() {
    // P0 sends one item to each neighbour at the same time: one-port forbids it.
    let ring = RingInstance::bidirectional(&[3, 1, 1], &[1, 2, 2], &[1.0; 3], &[1.0; 3]).unwrap();
    let (report, rules) = replay(
        &ring,
        vec![transfer(0, 1, 1, 0.0, 1.0), transfer(0, 2, 1, 0.0, 1.0)],
    );
    let context = story(&report, &rules);
    assert_eq!(rules, vec![ViolationRule::SendOverlap], "{context}");
    let report = report.expect("one send waits for the other");
    assert_eq!(report.plan_makespan, 1.0, "{context}");
    assert!((report.simgrid_makespan - 2.0).abs() < 1e-9, "{context}");
}

#[test]
fn two_receives_at_once_are_serialised() {
    // P1 and P2 both send to P0 at the same time: P0 receives one at a time.
    let ring = RingInstance::bidirectional(&[1, 2, 2], &[3, 1, 1], &[1.0; 3], &[1.0; 3]).unwrap();
    let (report, rules) = replay(
        &ring,
        vec![transfer(1, 0, 1, 0.0, 1.0), transfer(2, 0, 1, 0.0, 1.0)],
    );
    let context = story(&report, &rules);
    assert_eq!(rules, vec![ViolationRule::ReceiveOverlap], "{context}");
    let report = report.expect("one receive waits for the other");
    assert!((report.simgrid_makespan - 2.0).abs() < 1e-9, "{context}");
}

#[test]
fn an_item_never_held_is_a_deadlock_not_a_hang() {
    // P0 holds one item and sends two: the second never exists.
    let ring = RingInstance::unidirectional(&[1, 2, 1], &[1, 2, 1], &[1.0; 3]).unwrap();
    let started = Instant::now();
    let (report, rules) = replay(&ring, vec![transfer(0, 1, 2, 0.0, 2.0)]);
    let context = story(&report, &rules);
    // The validator stops at the counts: P0 would end with -1 items.
    assert!(rules.contains(&ViolationRule::FinalHolding), "{context}");
    match &report {
        Err(ReplayError::Deadlock { time, stuck }) => {
            assert_eq!(*time, 1.0, "{context}");
            assert!(
                stuck
                    .iter()
                    .any(|s| s.contains("P0") && s.contains("holds no item")),
                "{context}"
            );
        }
        _ => panic!("expected a deadlock{context}"),
    }
    assert!(started.elapsed() < Duration::from_secs(20), "{context}");
}

#[test]
fn waits_in_a_cycle_are_a_deadlock() {
    // Loads [1, 3, 1], targets [3, 1, 1], bidirectional, every cost 1.
    // P2 sends its only item to P1, then item Y to P0 at t = 1 although it holds
    // nothing until P1's items Z arrive (t = 4 and 5). P0 receives Y (planned at
    // 1) before X (planned at 2), one at a time: P1's send of X waits for P0, P1's
    // sends Z wait behind X, P2 waits for Z, P0 waits for Y.
    let ring = RingInstance::bidirectional(&[1, 3, 1], &[3, 1, 1], &[1.0; 3], &[1.0; 3]).unwrap();
    let (report, rules) = replay(
        &ring,
        vec![
            transfer(2, 1, 1, 0.0, 1.0),
            transfer(2, 0, 1, 1.0, 2.0),
            transfer(1, 0, 1, 2.0, 3.0),
            transfer(1, 2, 2, 3.0, 5.0),
        ],
    );
    let context = story(&report, &rules);
    assert_eq!(rules, vec![ViolationRule::NotHeld], "{context}");
    match &report {
        Err(ReplayError::Deadlock { time, stuck }) => {
            assert_eq!(*time, 2.0, "{context}");
            // P0's and P2's receivers, P1's and P2's senders.
            assert_eq!(stuck.len(), 4, "{context}");
            assert!(
                stuck
                    .iter()
                    .any(|s| s.starts_with("P1 sends") && s.contains("P0 never receives it")),
                "{context}"
            );
        }
        _ => panic!("expected a deadlock{context}"),
    }
}

#[test]
fn a_worker_that_never_answers_is_killed_at_its_limit() {
    // Not SimGrid at all: a program that sleeps far beyond the limit.
    let w = Worker::new("sleep", ["30"]).timeout(Duration::from_millis(300));
    let ring = RingInstance::unidirectional(&[2, 1], &[1, 2], &[1.0, 1.0]).unwrap();
    let network = RingNetwork::from_instance(&ring, 8).unwrap();
    let schedule = Schedule {
        transfers: vec![transfer(0, 1, 1, 0.0, 1.0)],
    };
    let job = ReplayJob::new(&ring, &schedule, &network, NetworkModel::OnePort).unwrap();
    let started = Instant::now();
    let result = w.replay(&job);
    assert!(
        matches!(result, Err(ReplayError::Timeout { .. })),
        "expected a timeout, got {result:?}"
    );
    assert!(
        started.elapsed() < Duration::from_secs(5),
        "took {:?}",
        started.elapsed()
    );
}

#[test]
fn a_long_simulation_is_stopped_at_its_limit() {
    // 100,000 items forwarded along an 8-ring (700,000 messages): far more than
    // 0.2 s of simulation.
    let n = 8;
    let mut loads = vec![1u64; n];
    let mut targets = vec![1u64; n];
    loads[0] += 100_000;
    targets[n - 1] += 100_000;
    let ring = RingInstance::unidirectional(&loads, &targets, &vec![1.0; n]).unwrap();
    let plan = hetbal::ring::plan(&ring, None).unwrap();
    let network = RingNetwork::from_instance(&ring, 1000).unwrap();
    let job = ReplayJob::new(&ring, &plan.schedule(), &network, NetworkModel::OnePort).unwrap();
    let started = Instant::now();
    let result = worker(30).timeout(Duration::from_millis(200)).replay(&job);
    assert!(
        matches!(result, Err(ReplayError::Timeout { .. })),
        "expected a timeout, got {result:?}"
    );
    assert!(
        started.elapsed() < Duration::from_secs(5),
        "took {:?}",
        started.elapsed()
    );
}

#[test]
fn malformed_plans_are_refused_before_simulating() {
    let ring = RingInstance::unidirectional(&[2, 1, 1], &[1, 1, 2], &[1.0; 3]).unwrap();
    let network = RingNetwork::from_instance(&ring, 8).unwrap();
    for bad in [
        transfer(0, 2, 1, 0.0, 1.0),      // not the successor
        transfer(0, 7, 1, 0.0, 1.0),      // no such processor
        transfer(0, 1, 0, 0.0, 0.0),      // no items
        transfer(0, 1, 1, f64::NAN, 1.0), // bad time
    ] {
        let schedule = Schedule {
            transfers: vec![bad],
        };
        let result = ReplayJob::new(&ring, &schedule, &network, NetworkModel::OnePort);
        assert!(
            matches!(result, Err(ReplayError::Unreplayable(_))),
            "{bad:?}: {result:?}"
        );
    }
}
