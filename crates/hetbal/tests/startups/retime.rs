//! Today's plans (made without start-ups) timed under start-ups: always finite and
//! valid, never earlier than the start-up bound, unchanged without start-ups.

use hetbal::random::SplitMix64;
use hetbal::ring::{plan, retime_with_startups, startup_lower_bound, RingInstance, RingKind};
use hetbal::validate;

/// A random ring of `n` processors: tight loads (1 or 2 items each, kept, plus 1 to
/// 3 piles of up to 12 items moving from one processor to another: most items are
/// forwarded as they arrive) or 1 to 12 items with shuffled targets; costs all
/// equal, from {0.5, 1, ..., 3} or any in [0.01, 100); start-ups 0 to 10 mean item
/// costs (a third of the links none on odd `style`).
fn random_ring(rng: &mut SplitMix64, kind: RingKind, n: usize, style: u64) -> RingInstance {
    let (loads, targets) = if style % 4 < 3 {
        let mut loads: Vec<u64> = (0..n).map(|_| 1 + rng.below_u64(2)).collect();
        let mut targets = loads.clone();
        for _ in 0..1 + rng.below_u64(3) {
            let extra = 1 + rng.below_u64(12);
            let from = rng.below(n);
            loads[from] += extra;
            targets[(from + 1 + rng.below(n - 1)) % n] += extra;
        }
        (loads, targets)
    } else {
        let loads: Vec<u64> = (0..n).map(|_| 1 + rng.below_u64(12)).collect();
        let mut targets = loads.clone();
        for i in (1..n).rev() {
            targets.swap(i, rng.below(i + 1));
        }
        (loads, targets)
    };
    let mut costs = |style: u64| -> Vec<f64> {
        let c = 0.5 * (1 + rng.below_u64(6)) as f64;
        (0..n)
            .map(|_| match style % 3 {
                0 => c,
                1 => 0.5 * (1 + rng.below_u64(6)) as f64,
                _ => rng.range((0.01, 100.0)),
            })
            .collect()
    };
    let (cs, cp) = (costs(style), costs(style / 3));
    let ring = match kind {
        RingKind::Unidirectional => RingInstance::unidirectional(&loads, &targets, &cs),
        RingKind::Bidirectional => RingInstance::bidirectional(&loads, &targets, &cs, &cp),
    }
    .unwrap();
    let mean = cs.iter().chain(&cp).sum::<f64>() / (2 * n) as f64;
    let mut startup = || {
        if style % 2 == 1 && rng.below(3) == 0 {
            0.0
        } else {
            mean * rng.range((0.0, 10.0))
        }
    };
    let l_succ: Vec<f64> = (0..n).map(|_| startup()).collect();
    let l_pred: Vec<f64> = (0..n).map(|_| startup()).collect();
    ring.with_startups(&l_succ, &l_pred).unwrap()
}

#[test]
fn todays_plans_timed_under_startups_are_valid_and_above_the_bound() {
    let mut rng = SplitMix64::new(0x1a7e_2c1e);
    let (mut rings, mut trains_fed_both_ways) = (0, 0);
    for k in 0..1500u64 {
        let kind = if k % 2 == 0 {
            RingKind::Unidirectional
        } else {
            RingKind::Bidirectional
        };
        let n = match kind {
            RingKind::Unidirectional => 2 + rng.below(9),
            RingKind::Bidirectional => 3 + rng.below(8),
        };
        let ring = random_ring(&mut rng, kind, n, k / 2);
        let without = ring.with_startups(&vec![0.0; n], &vec![0.0; n]).unwrap();
        let today = plan(&without, None).unwrap().schedule();
        // Without start-ups nothing moves later, and the result is valid.
        let same = retime_with_startups(&without, &today);
        assert!(validate(&without, &same).is_ok(), "#{k}: {without:?}");
        assert!(same.makespan() <= today.makespan() + 1e-9, "#{k}");
        let timed = retime_with_startups(&ring, &today);
        let items = |s: &hetbal::Schedule| s.transfers.iter().map(|t| t.items).sum::<u64>();
        assert_eq!(items(&timed), items(&today), "#{k}: the same items move");
        if let Err(e) = validate(&ring, &timed) {
            panic!("#{k}: today's plan timed under start-ups is invalid: {e:?}\n{ring:?}\n{today:?}\n{timed:?}");
        }
        let bound = startup_lower_bound(&ring).value;
        assert!(timed.makespan() >= bound * (1.0 - 1e-9), "#{k}");
        if timed.transfers.len() != today.transfers.len() {
            trains_fed_both_ways += 1;
        }
        rings += 1;
    }
    eprintln!("{rings} rings; {trains_fed_both_ways} needed their trains split and merged");
    assert!(rings == 1500);
}

/// A paced train stands for one-item transfers: timed under a start-up, each of
/// its items is a message of its own, sent once it has arrived.
#[test]
fn a_paced_train_is_a_message_per_item_under_startups() {
    use hetbal::ring::asap_unidirectional;
    use hetbal::validate;
    // P0 --2--> P1 --1--> P2: P1 sends its own item at 0, then each of two items
    // as it arrives (2 and 4): one paced transfer.
    let ring = RingInstance::unidirectional(&[4, 1, 2], &[1, 1, 5], &[2.0, 1.0, 1.0]).unwrap();
    let asap = asap_unidirectional(&ring);
    assert!(asap
        .transfers
        .iter()
        .any(|t| t.from == 1 && t.period == Some(2.0)));
    let latent = ring.with_startups(&[0.0, 0.5, 0.0], &[0.0; 3]).unwrap();
    let timed = retime_with_startups(&latent, &asap);
    assert!(validate(&latent, &timed).is_ok());
    let p1: Vec<(u64, f64, f64)> = timed
        .transfers
        .iter()
        .filter(|t| t.from == 1)
        .map(|t| (t.items, t.start, t.end))
        .collect();
    // Each message takes 0.5 + 1: the own item at 0, then the items of 2 and 4.
    assert_eq!(p1, vec![(1, 0.0, 1.5), (1, 2.0, 3.5), (1, 4.0, 5.5)]);
    assert!(timed
        .transfers
        .iter()
        .all(|t| t.period.is_none() || t.from != 1));
}

/// On rings of 1,000 processors and more (where `plan` makes and times the
/// papers' plan on a second thread, up to twice the start-up bound), the plan
/// ends exactly when the earlier of the start-up planner's messages and the
/// papers' plan timed whole under the start-ups does, with start-ups from
/// 10^-9 to 10 times the item cost. (On these full rebalances the messages
/// always end first, by 30 to 900 times: timed under start-ups, the papers'
/// paced trains become messages that wait for all their items.)
#[test]
fn large_rings_keep_the_earlier_of_the_two_plans() {
    use hetbal::experiment::startups::{full_rebalance, with_random_startups};
    use hetbal::ring::startup_schedule;
    let mut compared = 0;
    for (k, scale) in [1e-9, 1e-6, 0.001, 0.01, 0.1, 1.0, 10.0]
        .into_iter()
        .enumerate()
    {
        for kind in [RingKind::Unidirectional, RingKind::Bidirectional] {
            let n = 1000 + 50 * k;
            let ring = full_rebalance(kind, n, k as u64).unwrap();
            let ring = with_random_startups(&ring, (scale, 2.0 * scale), k as u64);
            let without = ring.with_startups(&vec![0.0; n], &vec![0.0; n]).unwrap();
            let papers = retime_with_startups(&ring, &plan(&without, None).unwrap().schedule());
            let messages = startup_schedule(&ring);
            let planned = plan(&ring, None).unwrap();
            let expected = papers.makespan().min(messages.makespan());
            assert_eq!(
                planned.makespan, expected,
                "{kind:?}, n = {n}, start-ups x{scale}"
            );
            assert!(planned.makespan >= planned.lower_bound * (1.0 - 1e-9));
            compared += 1;
        }
    }
    assert_eq!(compared, 14);
}
