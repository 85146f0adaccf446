//! The validator rejects broken schedules, each for the exact rule broken; random
//! valid plans, once mutated, are rejected; and its verdicts match an item-by-item
//! check written in the test.

use std::time::Instant;

use hetbal::ring::{plan, PlanError, RingAlgorithm, RingInstance, RingPlan};
use hetbal::{validate, Schedule, Transfer, Violation, ViolationRule};
use proptest::prelude::*;
use proptest::sample::Index;

use crate::common::*;
use ViolationRule::*;

fn tr(from: usize, to: usize, items: u64, start: f64, end: f64) -> Transfer {
    Transfer::new(from, to, items, start, end)
}

/// Validates the transfers as given (not re-sorted, so indices are known).
fn check(ring: &RingInstance, transfers: Vec<Transfer>) -> Result<f64, Vec<Violation>> {
    validate(ring, &Schedule { transfers }).map(|r| r.makespan)
}

fn assert_rules(result: Result<f64, Vec<Violation>>, expected: &[ViolationRule]) -> Vec<Violation> {
    let v = result.expect_err("the validator accepted a broken schedule");
    assert_eq!(rules(&v), rule_set(expected), "violations: {v:#?}");
    v
}

/// The rule blamed on transfer `index` (exactly one violation names it).
fn rule_of(v: &[Violation], index: usize) -> ViolationRule {
    let mine: Vec<_> = v.iter().filter(|x| x.transfer == Some(index)).collect();
    assert_eq!(mine.len(), 1, "violations: {v:#?}");
    mine[0].rule
}

/// P0 (3 items) --2--> P1 (1 item) --1--> P2 (1 item) --1--> P0: P0 gives 2 items to
/// P2 through P1 (the validator's own doc example).
fn ring3() -> RingInstance {
    RingInstance::unidirectional(&[3, 1, 1], &[1, 1, 3], &[2.0, 1.0, 1.0]).unwrap()
}

fn good3() -> Vec<Transfer> {
    vec![
        tr(0, 1, 2, 0.0, 4.0), // arrivals at 2 and 4
        tr(1, 2, 1, 0.0, 1.0), // its own item
        tr(1, 2, 1, 2.0, 3.0), // forwarded as it arrives
    ]
}

#[test]
fn the_base_schedule_is_valid() {
    assert_eq!(check(&ring3(), good3()), Ok(4.0));
    // An item may leave at the very instant it arrives.
    let mut s = good3();
    s[2] = tr(1, 2, 1, 2.0, 3.0);
    assert!(check(&ring3(), s).is_ok());
}

#[test]
fn forwarder_moved_before_its_item_arrives_is_not_held() {
    for start in [1.0, 1.5, 2.0 - 1e-6] {
        let mut s = good3();
        s[2] = tr(1, 2, 1, start, start + 1.0);
        let v = assert_rules(check(&ring3(), s), &[NotHeld]);
        assert_eq!(v[0].transfer, Some(2));
        assert_eq!(v[0].processor, Some(1));
    }
}

#[test]
fn start_moved_earlier_into_the_previous_send_overlaps() {
    // On a unidirectional ring the receiver sees the same overlap.
    let mut s = good3();
    s[2] = tr(1, 2, 1, 0.5, 1.5);
    assert_rules(check(&ring3(), s), &[SendOverlap, ReceiveOverlap]);
}

#[test]
fn item_sent_before_it_arrives_is_not_held() {
    // P1 sends both items back to back from 0: at t = 1 it holds nothing.
    let s = vec![tr(0, 1, 2, 0.0, 4.0), tr(1, 2, 2, 0.0, 2.0)];
    let v = assert_rules(check(&ring3(), s), &[NotHeld]);
    assert_eq!(v.len(), 1);
    assert_eq!((v[0].transfer, v[0].processor), (Some(1), Some(1)));
    // Sending first and receiving later is not enough either: P1 forwards at 3 the item
    // arriving at 4.
    let s = vec![
        tr(0, 1, 2, 0.0, 4.0),
        tr(1, 2, 1, 0.0, 1.0),
        tr(1, 2, 1, 2.0, 3.0),
        tr(1, 2, 1, 3.0, 4.0),
        tr(2, 0, 1, 5.0, 6.0),
        tr(0, 1, 1, 6.0, 8.0),
    ];
    // Final holdings: P0 3-3+1 = 1, P1 1+3-3 = 1, P2 1+3-1 = 3.
    let v = assert_rules(check(&ring3(), s), &[NotHeld]);
    assert_eq!(v[0].transfer, Some(3));
}

#[test]
fn one_item_too_many_breaks_final_holdings() {
    let mut s = good3();
    s[0] = tr(0, 1, 3, 0.0, 6.0);
    let v = assert_rules(check(&ring3(), s), &[FinalHolding]);
    let mut procs: Vec<_> = v.iter().map(|x| x.processor.unwrap()).collect();
    procs.sort_unstable();
    assert_eq!(procs, vec![0, 1]);
    // And one item too few.
    let mut s = good3();
    s.pop();
    assert_rules(check(&ring3(), s), &[FinalHolding]);
}

#[test]
fn wrong_neighbour_is_refused() {
    // P1 -> P0 is its predecessor: not allowed on a unidirectional ring.
    let mut s = good3();
    s[1] = tr(1, 0, 1, 0.0, 1.0);
    let v = check(&ring3(), s.clone()).unwrap_err();
    assert_eq!(rule_of(&v, 1), NotNeighbour);
    assert!(rules(&v).is_subset(&rule_set(&[NotNeighbour, FinalHolding])));
    // A processor sending to itself.
    let mut s2 = good3();
    s2[1] = tr(1, 1, 1, 0.0, 1.0);
    let v = check(&ring3(), s2).unwrap_err();
    assert_eq!(rule_of(&v, 1), NotNeighbour);
    // On a 4-ring, P0 -> P2 is no neighbour even on a bidirectional ring.
    let ring4 =
        RingInstance::bidirectional(&[2, 1, 1, 1], &[1, 1, 2, 1], &[1.0; 4], &[1.0; 4]).unwrap();
    let v = check(&ring4, vec![tr(0, 2, 1, 0.0, 1.0)]).unwrap_err();
    assert_eq!(rule_of(&v, 0), NotNeighbour);
    // Positive control: a bidirectional ring accepts a send to the predecessor.
    let bi = RingInstance::bidirectional(&[2, 1, 1], &[1, 1, 2], &[1.0; 3], &[1.0; 3]).unwrap();
    assert_eq!(check(&bi, vec![tr(0, 2, 1, 0.0, 1.0)]), Ok(1.0));
}

#[test]
fn overlapping_sends_are_refused() {
    // Bidirectional: P0 sends to P1 and to P2 at once; receivers differ.
    let bi = RingInstance::bidirectional(&[3, 1, 1], &[1, 2, 2], &[1.0; 3], &[1.0; 3]).unwrap();
    let ok = vec![tr(0, 1, 1, 0.0, 1.0), tr(0, 2, 1, 1.0, 2.0)];
    assert_eq!(check(&bi, ok), Ok(2.0));
    let v = assert_rules(
        check(&bi, vec![tr(0, 1, 1, 0.0, 1.0), tr(0, 2, 1, 0.5, 1.5)]),
        &[SendOverlap],
    );
    assert_eq!(v.len(), 1);
    assert_eq!((v[0].transfer, v[0].processor), (Some(1), Some(0)));
    // Unidirectional: two batches on one link overlap on both ends.
    let uni = RingInstance::unidirectional(&[3, 1, 1], &[1, 3, 1], &[2.0, 1.0, 1.0]).unwrap();
    assert_rules(
        check(&uni, vec![tr(0, 1, 1, 0.0, 2.0), tr(0, 1, 1, 1.0, 3.0)]),
        &[SendOverlap, ReceiveOverlap],
    );
}

#[test]
fn overlapping_receives_are_refused() {
    // P1 receives from P0 (its predecessor) and from P2 (its successor) at once.
    let bi = RingInstance::bidirectional(&[2, 1, 2], &[1, 3, 1], &[1.0; 3], &[1.0; 3]).unwrap();
    assert_eq!(
        check(&bi, vec![tr(0, 1, 1, 0.0, 1.0), tr(2, 1, 1, 1.0, 2.0)]),
        Ok(2.0)
    );
    let v = assert_rules(
        check(&bi, vec![tr(0, 1, 1, 0.0, 1.0), tr(2, 1, 1, 0.5, 1.5)]),
        &[ReceiveOverlap],
    );
    assert_eq!(v.len(), 1);
    assert_eq!(v[0].processor, Some(1));
}

#[test]
fn wrong_end_time_is_refused() {
    for end in [1.5, 0.5, 2.0, 1.0 + 1e-6] {
        let mut s = good3();
        s[1] = tr(1, 2, 1, 0.0, end);
        let v = check(&ring3(), s).unwrap_err();
        assert_eq!(rule_of(&v, 1), WrongDuration, "end {end}");
        assert!(rules(&v).is_subset(&rule_set(&[WrongDuration, FinalHolding])));
    }
    // Rounding noise far below the tolerance is accepted.
    let mut s = good3();
    s[1] = tr(1, 2, 1, 0.0, 1.0 + 1e-13);
    assert!(check(&ring3(), s).is_ok());
}

#[test]
fn zero_items_are_refused() {
    let mut s = good3();
    s.push(tr(2, 0, 0, 5.0, 5.0));
    let v = assert_rules(check(&ring3(), s), &[NoItems]);
    assert_eq!(v[0].transfer, Some(3));
}

#[test]
fn bad_times_are_refused() {
    for (start, end) in [
        (-1.0, 0.0),
        (-1e-3, 1.0 - 1e-3),
        (f64::NAN, f64::NAN),
        (f64::NAN, 1.0),
        (0.0, f64::INFINITY),
        (f64::NEG_INFINITY, 1.0),
    ] {
        let mut s = good3();
        s[1] = tr(1, 2, 1, start, end);
        let v = check(&ring3(), s).unwrap_err();
        assert_eq!(rule_of(&v, 1), BadTime, "start {start} end {end}");
        assert!(rules(&v).is_subset(&rule_set(&[BadTime, FinalHolding])));
    }
}

#[test]
fn unknown_processors_are_refused() {
    for (from, to) in [(3, 0), (2, 3), (7, 8), (usize::MAX, 0)] {
        let mut s = good3();
        s.push(tr(from, to, 1, 0.0, 1.0));
        let v = check(&ring3(), s).unwrap_err();
        assert_eq!(rule_of(&v, 3), UnknownProcessor, "{from} -> {to}");
        assert!(rules(&v).is_subset(&rule_set(&[UnknownProcessor, FinalHolding])));
    }
}

const N12: u64 = 1_000_000_000_000;

/// 10^12 items: the validator never expands batches.
#[test]
fn huge_batches_validate_without_expansion() {
    let clock = Instant::now();
    // Planned homogeneous ring.
    let ring = RingInstance::unidirectional(&[N12 + 1, 1, 1], &[1, 1, N12 + 1], &[1.0; 3]).unwrap();
    let p = plan(&ring, None).unwrap();
    assert!(p.optimal);
    // Both links carry 10^12 items in parallel from t = 0.
    assert_eq!(p.makespan, 1e12);
    assert!(validate(&ring, &p.schedule()).is_ok());

    // P0 --1--> P1 --2--> P2: P1 forwards 10^12 items over a slower link, back to back.
    let ring =
        RingInstance::unidirectional(&[N12 + 1, 1, 1], &[1, 1, N12 + 1], &[1.0, 2.0, 1.0]).unwrap();
    let s = vec![tr(0, 1, N12, 0.0, 1e12), tr(1, 2, N12, 0.0, 2e12)];
    assert_eq!(check(&ring, s), Ok(2e12));

    // The same through a faster link: at t = 0.5 P1 holds nothing.
    let ring =
        RingInstance::unidirectional(&[N12 + 1, 1, 1], &[1, 1, N12 + 1], &[1.0, 0.5, 1.0]).unwrap();
    let s = vec![tr(0, 1, N12, 0.0, 1e12), tr(1, 2, N12, 0.0, 5e11)];
    let v = assert_rules(check(&ring, s), &[NotHeld]);
    assert_eq!(v[0].transfer, Some(1));

    // A failure deep inside a huge batch: P0 pauses 10^4 time units half-way, P1 does
    // not, and runs dry at item N/2 + 2.
    let ring = RingInstance::unidirectional(&[N12 + 1, 1, 1], &[1, 1, N12 + 1], &[1.0; 3]).unwrap();
    let h = N12 / 2;
    let pause = 1e4;
    let s = vec![
        tr(0, 1, h, 0.0, h as f64),
        tr(0, 1, h, h as f64 + pause, N12 as f64 + pause),
        tr(1, 2, N12, 0.0, N12 as f64),
    ];
    let v = assert_rules(check(&ring, s), &[NotHeld]);
    assert_eq!(v[0].transfer, Some(2));
    assert!(
        v[0].message.contains("item 500000000002 "),
        "{}",
        v[0].message
    );
    // With P1 waiting for the pause, it is valid.
    let s = vec![
        tr(0, 1, h, 0.0, h as f64),
        tr(0, 1, h, h as f64 + pause, N12 as f64 + pause),
        tr(1, 2, h + 1, 0.0, (h + 1) as f64),
        tr(1, 2, h - 1, h as f64 + pause + 1.0, N12 as f64 + pause),
    ];
    assert_eq!(check(&ring, s), Ok(N12 as f64 + pause));
    assert!(clock.elapsed().as_secs() < 5, "took {:?}", clock.elapsed());
}

/// Regression: the validator's tolerance was purely relative (1e-9 * |t|), ~500 time
/// units at t ~ 5e11, and accepted a processor running dry for 100 time units in the
/// middle of a 10^12-item batch. It is now capped by the smallest cost.
#[test]
fn tolerance_at_large_times_does_not_hide_a_pause() {
    let ring = RingInstance::unidirectional(&[N12 + 1, 1, 1], &[1, 1, N12 + 1], &[1.0; 3]).unwrap();
    let h = N12 / 2;
    let pause = 100.0;
    let s = vec![
        tr(0, 1, h, 0.0, h as f64),
        tr(0, 1, h, h as f64 + pause, N12 as f64 + pause),
        tr(1, 2, N12, 0.0, N12 as f64),
    ];
    assert_rules(check(&ring, s), &[NotHeld]);
}

/// Regression, on a 5-item ring: P0 sends 2 items over a slow link (5e11 per item,
/// arrivals at 5e11 and 1e12); P1 sends its own item at 0 and forwards the first
/// arrival 300 time units before it arrives (the old tolerance there was 500).
#[test]
fn tolerance_at_large_times_does_not_hide_an_early_forward() {
    let ring = RingInstance::unidirectional(&[3, 1, 1], &[1, 1, 3], &[5e11, 1.0, 1.0]).unwrap();
    let s = vec![
        tr(0, 1, 2, 0.0, 1e12),
        tr(1, 2, 1, 0.0, 1.0),
        tr(1, 2, 1, 5e11 - 300.0, 5e11 - 299.0),
    ];
    assert_rules(check(&ring, s), &[NotHeld]);
}

#[test]
fn early_forward_beyond_the_tolerance_is_caught_at_large_times() {
    let ring = RingInstance::unidirectional(&[3, 1, 1], &[1, 1, 3], &[5e11, 1.0, 1.0]).unwrap();
    let s = vec![
        tr(0, 1, 2, 0.0, 1e12),
        tr(1, 2, 1, 0.0, 1.0),
        tr(1, 2, 1, 5e11 - 600.0, 5e11 - 599.0),
    ];
    assert_rules(check(&ring, s), &[NotHeld]);
    let on_time = vec![
        tr(0, 1, 2, 0.0, 1e12),
        tr(1, 2, 1, 0.0, 1.0),
        tr(1, 2, 1, 5e11, 5e11 + 1.0),
    ];
    assert_eq!(check(&ring, on_time), Ok(1e12));
}

// ---- mutations of random planned schedules ----

/// Any planner of the library (the default one when it does not apply), but the
/// exact search, exponential and checked on its own.
fn any_algorithm() -> impl Strategy<Value = RingAlgorithm> {
    let all: Vec<RingAlgorithm> = RingAlgorithm::ALL
        .into_iter()
        .filter(|&a| a != RingAlgorithm::ExactSearch)
        .collect();
    proptest::sample::select(all)
}

fn plan_with(ring: &RingInstance, algorithm: RingAlgorithm) -> RingPlan {
    match plan(ring, Some(algorithm)) {
        Ok(p) => p,
        Err(PlanError::NotApplicable { .. }) => plan(ring, None).unwrap(),
        Err(e) => panic!("{algorithm}: {e}"),
    }
}

/// Heterogeneous tight rings: forwarders wait for items, so schedules have gaps.
fn gappy() -> impl Strategy<Value = Uni> {
    prop_oneof![
        tight(30, 100, Costs::SmallSet),
        tight(30, 100, Costs::Float),
        loose(30, 20, Costs::Float),
    ]
}

/// Transfers that start after a gap in their sender's sends: in the as-soon-as-possible
/// schedule the sender held no item just before (it waited for an arrival). Returns
/// (index, gap).
fn waiting_transfers(s: &Schedule, n: usize) -> Vec<(usize, f64)> {
    let mut last_end = vec![None::<f64>; n];
    let mut out = Vec::new();
    // `s` is sorted by start, and one processor's sends never overlap.
    for (k, t) in s.transfers.iter().enumerate() {
        if let Some(e) = last_end[t.from] {
            let gap = t.start - e;
            if gap > 1e-7 * t.start.max(1.0) {
                out.push((k, gap));
            }
        }
        last_end[t.from] = Some(t.end);
    }
    out
}

#[test]
fn moving_a_waiting_forward_earlier_is_not_held() {
    let mutated = std::cell::Cell::new(0u32);
    crate::common::check(
        "moving_a_waiting_forward_earlier_is_not_held",
        2000,
        (gappy(), any::<Index>(), 0.05f64..0.95, any_algorithm()),
        |(u, pick, frac, algorithm)| {
            let ring = u.ring();
            let p = plan_with(&ring, algorithm);
            let mut s = p.schedule();
            let waiting = waiting_transfers(&s, ring.len());
            if waiting.is_empty() {
                return Ok(());
            }
            let (k, gap) = waiting[pick.index(waiting.len())];
            let t = &mut s.transfers[k];
            let shift = frac * gap.min(u.costs[t.from]);
            t.start -= shift;
            t.end -= shift;
            let v = match validate(&ring, &s) {
                Ok(_) => {
                    return Err(TestCaseError::fail(format!(
                        "{}: transfer {k} moved {shift} earlier is accepted",
                        p.algorithm
                    )))
                }
                Err(v) => v,
            };
            prop_assert_eq!(rules(&v), rule_set(&[NotHeld]), "{}: {:?}", p.algorithm, v);
            prop_assert!(v.iter().any(|x| x.transfer == Some(k)));
            mutated.set(mutated.get() + 1);
            Ok(())
        },
    );
    eprintln!("  {} schedules mutated", mutated.get());
    assert!(mutated.get() > 1000);
}

#[test]
fn adding_an_item_to_a_batch_is_refused() {
    crate::common::check(
        "adding_an_item_to_a_batch_is_refused",
        2000,
        (
            prop_oneof![
                gappy(),
                loose(30, 1000, Costs::Homogeneous),
                tight(30, 100, Costs::Homogeneous)
            ],
            any::<Index>(),
            any_algorithm(),
        ),
        |(u, pick, algorithm)| {
            let ring = u.ring();
            let p = plan_with(&ring, algorithm);
            let mut s = p.schedule();
            if s.transfers.is_empty() {
                return Ok(());
            }
            let k = pick.index(s.transfers.len());
            let t = &mut s.transfers[k];
            t.items += 1;
            t.end += t.period.unwrap_or(u.costs[t.from]);
            let v = validate(&ring, &s).expect_err("extra item accepted");
            let r = rules(&v);
            prop_assert!(r.contains("FinalHolding"), "{:?}", v);
            prop_assert!(
                r.is_subset(&rule_set(&[FinalHolding, SendOverlap, ReceiveOverlap])),
                "{:?}",
                v
            );
            Ok(())
        },
    );
}

/// Random shifts and splits of planned schedules (costs and shifts exact in binary):
/// the validator's verdict equals an item-by-item check's.
#[test]
fn validator_agrees_with_item_by_item_check_on_mutations() {
    let verdicts = std::cell::Cell::new((0u32, 0u32));
    crate::common::check(
        "validator_agrees_with_item_by_item_check_on_mutations",
        3000,
        (
            prop_oneof![
                tight(12, 20, Costs::SmallSet),
                loose(12, 12, Costs::SmallSet),
                tight(12, 20, Costs::Homogeneous)
                    .prop_filter("binary costs", |u| COST_SET.contains(&u.costs[0])),
            ],
            any::<Index>(),
            -12i32..=12,
            any::<Index>(),
            any::<bool>(),
            any_algorithm(),
        ),
        |(u, pick, quarter_shift, cut, split, algorithm)| {
            let ring = u.ring();
            let p = plan_with(&ring, algorithm);
            let mut s = p.schedule();
            if s.transfers.is_empty() {
                return Ok(());
            }
            let k = pick.index(s.transfers.len());
            let shift = f64::from(quarter_shift) * 0.25;
            let c = u.costs[s.transfers[k].from];
            if split && s.transfers[k].items >= 2 {
                // Split the batch after m items and shift the second part.
                let t = s.transfers[k];
                let m = 1 + cut.index(t.items as usize - 1) as u64;
                let first = tr(t.from, t.to, m, t.start, t.start + m as f64 * c);
                let st = t.start + m as f64 * c + shift;
                let second = tr(t.from, t.to, t.items - m, st, st + (t.items - m) as f64 * c);
                s.transfers[k] = first;
                s.transfers.push(second);
            } else {
                let t = &mut s.transfers[k];
                t.start += shift;
                t.end += shift;
            }
            let ours = naive_valid(&u, &s);
            let theirs = validate(&ring, &s);
            prop_assert_eq!(ours, theirs.is_ok(), "validator: {:?}", theirs.err());
            let (a, r) = verdicts.get();
            verdicts.set(if ours { (a + 1, r) } else { (a, r + 1) });
            Ok(())
        },
    );
    let (a, r) = verdicts.get();
    eprintln!("  {a} mutated schedules accepted, {r} rejected by both");
    assert!(a > 300 && r > 300);
}

/// Random schedules, not planned ones: on rings of 2 to 5 processors every processor
/// sends a few batches (1 to 6 items, gaps and overlaps in quarters of a time unit);
/// loads are small and then raised just enough for every target to be >= 1, so many
/// schedules run dry mid-batch. The validator's verdict equals the item-by-item one.
#[test]
fn validator_agrees_with_item_by_item_check_on_random_schedules() {
    let verdicts = std::cell::Cell::new((0u32, 0u32));
    let strategy = (2usize..=5).prop_flat_map(|n| {
        (
            proptest::collection::vec(proptest::sample::select(COST_SET.to_vec()), n),
            proptest::collection::vec(1u64..=4, n),
            proptest::collection::vec(proptest::collection::vec((1u64..=6, -3i32..=16), 0..=4), n),
        )
    });
    crate::common::check(
        "validator_agrees_with_item_by_item_check_on_random_schedules",
        4000,
        strategy,
        |(costs, mut loads, batches)| {
            let n = costs.len();
            let mut transfers = Vec::new();
            let mut net = vec![0i128; n];
            for (i, list) in batches.iter().enumerate() {
                let mut free = 0.0f64;
                for &(items, gap) in list {
                    let start = (free + f64::from(gap) * 0.25).max(0.0);
                    let end = start + items as f64 * costs[i];
                    transfers.push(tr(i, (i + 1) % n, items, start, end));
                    free = end;
                    net[i] -= items as i128;
                    net[(i + 1) % n] += items as i128;
                }
            }
            let mut targets = Vec::with_capacity(n);
            for i in 0..n {
                let t = loads[i] as i128 + net[i];
                if t < 1 {
                    loads[i] += (1 - t) as u64;
                }
                targets.push((loads[i] as i128 + net[i]) as u64);
            }
            let u = Uni {
                loads,
                targets,
                costs,
            };
            let s = Schedule::new(transfers);
            let ours = naive_valid(&u, &s);
            let theirs = validate(&u.ring(), &s);
            prop_assert_eq!(ours, theirs.is_ok(), "validator: {:?}", theirs.err());
            let (a, r) = verdicts.get();
            verdicts.set(if ours { (a + 1, r) } else { (a, r + 1) });
            Ok(())
        },
    );
    let (a, r) = verdicts.get();
    eprintln!("  {a} random schedules accepted, {r} rejected by both");
    assert!(a > 300 && r > 300);
}

/// Paced trains against the one-item transfers they stand for, on Algorithm 2's
/// schedules of gappy rings: the validator accepts the paced schedule exactly when
/// it accepts the expansion (Algorithm 2's trains never interleave), with the same
/// makespan; a paced train moved earlier by a fraction of its period, or given a
/// shorter period, is refused both ways, for the same rule; and broken periods
/// (below the cost, NaN, on a link with a start-up) are wrong durations.
#[test]
fn paced_trains_agree_with_their_items() {
    let paced_seen = std::cell::Cell::new(0u32);
    crate::common::check(
        "paced_trains_agree_with_their_items",
        1500,
        (gappy(), any::<Index>(), 0.05f64..0.95),
        |(u, pick, frac)| {
            let ring = u.ring();
            let p = plan(&ring, Some(RingAlgorithm::UnidirectionalHeterogeneous)).unwrap();
            let s = p.schedule();
            let expand = |s: &Schedule| -> Schedule {
                let mut out = Vec::new();
                for t in &s.transfers {
                    match t.period {
                        None => out.push(*t),
                        Some(period) => {
                            let c = u.costs[t.from];
                            for k in 0..t.items {
                                let start = t.start + k as f64 * period;
                                out.push(tr(t.from, t.to, 1, start, start + c));
                            }
                        }
                    }
                }
                Schedule::new(out)
            };
            let report = validate(&ring, &s).map_err(|v| TestCaseError::fail(format!("{v:?}")))?;
            let items =
                validate(&ring, &expand(&s)).map_err(|v| TestCaseError::fail(format!("{v:?}")))?;
            prop_assert_eq!(report.makespan, items.makespan);
            prop_assert_eq!(&report.sent_to_succ, &items.sent_to_succ);
            let paced: Vec<usize> = (0..s.transfers.len())
                .filter(|&k| s.transfers[k].period.is_some())
                .collect();
            if paced.is_empty() {
                return Ok(());
            }
            paced_seen.set(paced_seen.get() + 1);
            let k = paced[pick.index(paced.len())];
            let t = s.transfers[k];
            let period = t.period.unwrap();
            let c = u.costs[t.from];
            // Earlier by a fraction of the gap before its first item arrives no later.
            let mut early = s.clone();
            let shift = frac * (period - c).max(c);
            early.transfers[k].start -= shift;
            early.transfers[k].end -= shift;
            let paced_verdict = validate(&ring, &early)
                .map(|r| r.makespan)
                .map_err(|v| rules(&v));
            let items_verdict = validate(&ring, &expand(&early))
                .map(|r| r.makespan)
                .map_err(|v| rules(&v));
            if items_verdict.is_err() {
                prop_assert!(
                    paced_verdict.is_err(),
                    "paced accepted, items refused: {:?}",
                    items_verdict
                );
            }
            if paced_verdict.is_ok() {
                prop_assert!(items_verdict.is_ok());
            }
            // A period shorter than the cost; NaN; a start-up on the link.
            for bad in [c * (1.0 - frac), f64::NAN] {
                let mut broken = s.clone();
                broken.transfers[k].period = Some(bad);
                let v = validate(&ring, &broken).expect_err("a broken period accepted");
                prop_assert!(
                    v.iter()
                        .any(|x| x.rule == WrongDuration && x.transfer == Some(k)),
                    "{:?}",
                    v
                );
            }
            let mut startups = vec![0.0; u.loads.len()];
            startups[t.from] = c;
            let latent = ring
                .with_startups(&startups, &vec![0.0; u.loads.len()])
                .unwrap();
            let v = validate(&latent, &s)
                .expect_err("a paced train over a link with a start-up accepted");
            prop_assert!(
                v.iter()
                    .any(|x| x.rule == WrongDuration && x.transfer == Some(k)),
                "{:?}",
                v
            );
            Ok(())
        },
    );
    eprintln!("  {} schedules with paced trains", paced_seen.get());
    assert!(paced_seen.get() > 300);
}
