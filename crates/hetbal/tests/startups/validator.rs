//! The validator's start-up rules against an item-by-item check written here, on
//! planned schedules of random rings with start-ups and on mutations of them.

use hetbal::random::SplitMix64;
use hetbal::ring::{startup_schedule, RingInstance, RingKind};
use hetbal::{validate, Schedule, Transfer, ViolationRule};

use crate::tiny::random_tiny;

/// Item-by-item check, independent of the library: neighbours, durations
/// `l + m c`, one port each way, every item held when it leaves (a message needs
/// all its items at its start and delivers them at its end; a train item by item),
/// final holdings. Times are exact multiples of 1/2 here: compared exactly.
fn naive_valid(ring: &RingInstance, s: &Schedule) -> bool {
    let n = ring.len();
    let bidirectional = ring.kind() == RingKind::Bidirectional;
    // Per processor: (time, change in holdings), sends as negative changes.
    let mut events: Vec<Vec<(f64, i64, bool)>> = vec![Vec::new(); n]; // (t, delta, is_send)
    let mut sends: Vec<Vec<(f64, f64)>> = vec![Vec::new(); n];
    let mut receives: Vec<Vec<(f64, f64)>> = vec![Vec::new(); n];
    let mut hold: Vec<i64> = ring.loads().iter().map(|&l| l as i64).collect();
    for t in &s.transfers {
        if t.from >= n
            || t.to >= n
            || t.items == 0
            || t.start.is_nan()
            || t.start < 0.0
            || !t.end.is_finite()
        {
            return false;
        }
        let mut links = Vec::new();
        if t.to == (t.from + 1) % n {
            links.push((ring.c_succ()[t.from], ring.l_succ()[t.from]));
        }
        if bidirectional && t.to == (t.from + n - 1) % n {
            links.push((ring.c_pred()[t.from].unwrap(), ring.l_pred()[t.from]));
        }
        let m = t.items as f64;
        let Some(&(c, l)) = links.iter().find(|&&(c, l)| t.end == t.start + l + m * c) else {
            return false;
        };
        sends[t.from].push((t.start, t.end));
        receives[t.to].push((t.start, t.end));
        if l > 0.0 {
            events[t.from].push((t.start, -(t.items as i64), true));
            events[t.to].push((t.end, t.items as i64, false));
        } else {
            for k in 0..t.items {
                events[t.from].push((t.start + k as f64 * c, -1, true));
                events[t.to].push((t.start + (k + 1) as f64 * c, 1, false));
            }
        }
        hold[t.from] -= t.items as i64;
        hold[t.to] += t.items as i64;
    }
    for p in 0..n {
        if hold[p] != ring.targets()[p] as i64 {
            return false;
        }
        for list in [&mut sends[p], &mut receives[p]] {
            list.sort_by(|a, b| a.0.total_cmp(&b.0));
            if list.windows(2).any(|w| w[1].0 < w[0].1) {
                return false;
            }
        }
        // Arrivals at t count for sends at t.
        events[p].sort_by(|a, b| a.0.total_cmp(&b.0).then(a.2.cmp(&b.2)));
        let mut held = ring.loads()[p] as i64;
        for &(_, delta, _) in &events[p] {
            held += delta;
            if held < 0 {
                return false;
            }
        }
    }
    true
}

/// A random change of one transfer: shift it, resize it (its end follows its link),
/// or make it a train where it is a message.
fn mutate(ring: &RingInstance, s: &Schedule, rng: &mut SplitMix64) -> Schedule {
    let mut transfers = s.transfers.clone();
    if transfers.is_empty() {
        return Schedule::new(transfers);
    }
    let k = rng.below(transfers.len());
    let t: Transfer = transfers[k];
    let shift = [-1.0, -0.5, 0.5, 1.0][rng.below(4)];
    transfers[k] = match rng.below(3) {
        0 => Transfer {
            start: (t.start + shift).max(0.0),
            end: (t.start + shift).max(0.0) + (t.end - t.start),
            ..t
        },
        1 if t.items > 1 => {
            let per = (t.end - t.start) / t.items as f64;
            let l = (t.end - t.start) - per * t.items as f64;
            Transfer {
                items: t.items - 1,
                end: t.start + l + per * (t.items - 1) as f64,
                ..t
            }
        }
        _ => {
            // The duration without the start-up: a train where a message is due.
            let l = if t.to == ring.succ(t.from) {
                ring.l_succ()[t.from]
            } else {
                ring.l_pred()[t.from]
            };
            Transfer {
                end: t.end - l,
                ..t
            }
        }
    };
    Schedule::new(transfers)
}

#[test]
fn validator_agrees_with_the_item_by_item_check_under_startups() {
    let mut rng = SplitMix64::new(0x7a_11d);
    let (mut valid, mut invalid, mut messages_caught) = (0, 0, 0);
    for round in 0..1500 {
        let n = 2 + rng.below(4);
        let ring = random_tiny(&mut rng, n, 4, round % 2 == 1);
        let planned = startup_schedule(&ring);
        assert!(naive_valid(&ring, &planned), "{ring:?} {planned:?}");
        assert!(validate(&ring, &planned).is_ok());
        for _ in 0..4 {
            let mutated = mutate(&ring, &planned, &mut rng);
            let ours = validate(&ring, &mutated);
            assert_eq!(
                ours.is_ok(),
                naive_valid(&ring, &mutated),
                "{ring:?}\n{mutated:?}\n{ours:?}"
            );
            match ours {
                Ok(_) => valid += 1,
                Err(v) => {
                    invalid += 1;
                    messages_caught +=
                        usize::from(v.iter().any(|v| v.rule == ViolationRule::MessageNotHeld));
                }
            }
        }
    }
    eprintln!("start-up validator: {valid} valid and {invalid} invalid mutated schedules agree with the item-by-item check ({messages_caught} messages sent before their items were held)");
    assert!(valid > 500 && invalid > 500 && messages_caught >= 10);
}

/// A message's items arrive together at its end: forwarding one of them earlier is
/// refused, at its end it is accepted.
#[test]
fn a_message_delivers_at_its_end() {
    // P0 sends 2 items to P1 in one message (start-up 1, 1 per item: ends at 3);
    // P1, holding 1 item, forwards 2 to P2 over a link without start-up.
    let ring = RingInstance::unidirectional(&[3, 1, 1], &[1, 1, 3], &[1.0; 3])
        .unwrap()
        .with_startups(&[1.0, 0.0, 0.0], &[0.0; 3])
        .unwrap();
    let at = |second: f64| {
        Schedule::new(vec![
            Transfer::new(0, 1, 2, 0.0, 3.0),
            Transfer::new(1, 2, 1, 0.0, 1.0),
            Transfer::new(1, 2, 1, second, second + 1.0),
        ])
    };
    let early = validate(&ring, &at(2.0)).unwrap_err();
    assert_eq!(early[0].rule, ViolationRule::NotHeld);
    assert_eq!(validate(&ring, &at(3.0)).unwrap().makespan, 4.0);
    // The duration must include the start-up.
    let short = Schedule::new(vec![Transfer::new(0, 1, 2, 0.0, 2.0)]);
    let errors = validate(&ring, &short).unwrap_err();
    assert_eq!(errors[0].rule, ViolationRule::WrongDuration);
    assert!(
        errors[0].message.contains("after a start-up of 1"),
        "{}",
        errors[0].message
    );
}
