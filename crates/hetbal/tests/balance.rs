//! `balanced_targets` against a naive greedy oracle written here: one item each, then
//! every further item to the processor that would finish it first (smallest
//! `(t_i + 1) * w_i`, ties to the lower index), with a binary heap.

use std::cmp::{Ordering, Reverse};
use std::collections::BinaryHeap;

use hetbal::balance::{balanced_targets, BalanceError};
use proptest::prelude::*;
use proptest::test_runner::{Config, TestRunner};

#[derive(PartialEq)]
struct Key(f64, usize);
impl Eq for Key {}
impl PartialOrd for Key {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}
impl Ord for Key {
    fn cmp(&self, other: &Self) -> Ordering {
        self.0.total_cmp(&other.0).then(self.1.cmp(&other.1))
    }
}

/// The greedy: optimal for `min max t_i * w_i` with `t_i >= 1`, `sum t_i = total`.
fn oracle(total: u64, w: &[f64]) -> (Vec<u64>, f64) {
    let mut t = vec![1u64; w.len()];
    let mut heap: BinaryHeap<Reverse<Key>> =
        (0..w.len()).map(|i| Reverse(Key(2.0 * w[i], i))).collect();
    for _ in w.len() as u64..total {
        let Reverse(Key(_, i)) = heap.pop().unwrap();
        t[i] += 1;
        heap.push(Reverse(Key((t[i] + 1) as f64 * w[i], i)));
    }
    let max = t
        .iter()
        .zip(w)
        .map(|(&k, &x)| k as f64 * x)
        .fold(0.0, f64::max);
    (t, max)
}

fn times() -> impl Strategy<Value = Vec<f64>> {
    prop_oneof![
        // Small integer sets: many ties.
        proptest::collection::vec(
            proptest::sample::select(vec![1.0, 2.0, 3.0, 4.0, 6.0]),
            1..=30
        ),
        // Decimal sets whose products round (3 * 0.1 != 0.3).
        proptest::collection::vec(proptest::sample::select(vec![0.1, 0.2, 0.3, 0.7]), 1..=30),
        proptest::collection::vec(0.001f64..1000.0, 1..=30),
        proptest::collection::vec(1e-9f64..1e-6, 1..=30),
    ]
}

fn runner(cases: u32) -> TestRunner {
    TestRunner::new(Config {
        cases,
        failure_persistence: None,
        ..Config::default()
    })
}

#[test]
fn matches_the_greedy_oracle() {
    let cases = 4000;
    let strategy = times().prop_flat_map(|w| {
        let n = w.len() as u64;
        (Just(w), n..=2000u64)
    });
    runner(cases)
        .run(&strategy, |(w, total)| {
            let b = balanced_targets(total, &w).map_err(|e| TestCaseError::fail(e.to_string()))?;
            let (t, max) = oracle(total, &w);
            prop_assert_eq!(b.max_time, max, "targets {:?} vs oracle {:?}", b.targets, t);
            // The doc promises the greedy's own split (ties to the lower index).
            prop_assert_eq!(&b.targets, &t);
            prop_assert_eq!(b.targets.iter().sum::<u64>(), total);
            prop_assert!(b.targets.iter().all(|&k| k >= 1));
            let measured = b
                .targets
                .iter()
                .zip(&w)
                .map(|(&k, &x)| k as f64 * x)
                .fold(0.0, f64::max);
            prop_assert_eq!(b.max_time, measured);
            Ok(())
        })
        .unwrap_or_else(|e| panic!("{e}"));
    eprintln!("balanced_targets: {cases} random cases against the greedy oracle");
}

/// Totals beyond 2^53, up to u64::MAX, where f64 finish times cannot tell
/// neighbouring counts apart: the targets still add up to the total exactly (no
/// overflow, no item created), every processor gets one at least, and the
/// maximum stays within f64 rounding of the rational optimum total / sum(1/w).
#[test]
fn totals_up_to_u64_max_add_up() {
    let mut rng = hetbal::random::SplitMix64::new(64);
    let mut cases = vec![
        (u64::MAX, vec![1.0, 1.0, 3.0]),
        (u64::MAX, vec![1.0]),
        (u64::MAX - 7, vec![0.5; 9]),
    ];
    for _ in 0..300 {
        let n = 1 + rng.below(12);
        let w: Vec<f64> = (0..n).map(|_| rng.range((0.01, 100.0))).collect();
        let total = (1u64 << 53) + rng.below_u64(u64::MAX - (1u64 << 53));
        cases.push((total, w));
    }
    for (total, w) in cases {
        let b = balanced_targets(total, &w).unwrap();
        let sum: u128 = b.targets.iter().map(|&k| u128::from(k)).sum();
        assert_eq!(sum, u128::from(total), "{w:?}");
        assert!(b.targets.iter().all(|&k| k >= 1));
        let rational = total as f64 / w.iter().map(|x| 1.0 / x).sum::<f64>();
        let slowest = w.iter().copied().fold(0.0, f64::max);
        assert!(
            b.max_time <= rational * (1.0 + 1e-9) + slowest,
            "{w:?}: {} vs {rational}",
            b.max_time
        );
    }
}

/// Large totals (no oracle): the split is valid and no split has a smaller maximum,
/// i.e. fewer than `total` items fit strictly below `max_time`.
#[test]
fn large_totals_are_optimal() {
    let cases = 2000;
    let strategy = times().prop_flat_map(|w| {
        let n = w.len() as u64;
        (Just(w), n..=1_000_000_000_000u64)
    });
    runner(cases)
        .run(&strategy, |(w, total)| {
            let b = balanced_targets(total, &w).map_err(|e| TestCaseError::fail(e.to_string()))?;
            prop_assert_eq!(
                b.targets.iter().map(|&k| k as u128).sum::<u128>(),
                total as u128
            );
            prop_assert!(b.targets.iter().all(|&k| k >= 1));
            let m = b.max_time;
            // Items processor i can take while finishing strictly before m (at least 1).
            let below: u128 = w
                .iter()
                .map(|&x| {
                    let mut k = (m / x).floor().max(1.0) as u64;
                    while k > 1 && k as f64 * x >= m {
                        k -= 1;
                    }
                    while (k + 1) as f64 * x < m {
                        k += 1;
                    }
                    k as u128
                })
                .sum();
            let all_at_one = w.iter().copied().fold(0.0, f64::max);
            prop_assert!(
                below < total as u128 || m == all_at_one,
                "a split with max < {} exists: {} items fit below it",
                m,
                below
            );
            Ok(())
        })
        .unwrap_or_else(|e| panic!("{e}"));
    eprintln!("balanced_targets: {cases} large totals checked");
}

#[test]
fn small_exact_cases() {
    let b = balanced_targets(10, &[1.0, 2.0, 4.0]).unwrap();
    assert_eq!((b.targets, b.max_time), (vec![6, 3, 1], 6.0));
    // Ties go to the lower index.
    let b = balanced_targets(5, &[1.0, 1.0]).unwrap();
    assert_eq!((b.targets, b.max_time), (vec![3, 2], 3.0));
    // One processor takes everything.
    let b = balanced_targets(7, &[2.5]).unwrap();
    assert_eq!((b.targets, b.max_time), (vec![7], 17.5));
    // Exactly one item each.
    let b = balanced_targets(3, &[5.0, 1.0, 2.0]).unwrap();
    assert_eq!((b.targets, b.max_time), (vec![1, 1, 1], 5.0));
    // A very slow processor still gets its one item.
    let b = balanced_targets(4, &[1.0, 1000.0]).unwrap();
    assert_eq!((b.targets, b.max_time), (vec![3, 1], 1000.0));
}

#[test]
fn errors() {
    assert_eq!(balanced_targets(5, &[]), Err(BalanceError::NoProcessors));
    for (bad, index) in [
        (0.0, 1),
        (-1.0, 0),
        (-0.0, 2),
        (f64::INFINITY, 1),
        (f64::NEG_INFINITY, 0),
    ] {
        let mut w = vec![1.0, 2.0, 3.0];
        w[index] = bad;
        match balanced_targets(10, &w) {
            Err(BalanceError::InvalidTime { index: i, value }) => {
                assert_eq!(i, index);
                assert_eq!(value.to_bits(), bad.to_bits());
            }
            other => panic!("time {bad}: expected InvalidTime, got {other:?}"),
        }
    }
    match balanced_targets(10, &[1.0, f64::NAN]) {
        Err(BalanceError::InvalidTime { index: 1, value }) => assert!(value.is_nan()),
        other => panic!("expected InvalidTime for NaN, got {other:?}"),
    }
    assert_eq!(
        balanced_targets(2, &[1.0, 1.0, 1.0]),
        Err(BalanceError::TooFewItems {
            total: 2,
            processors: 3
        })
    );
    assert_eq!(
        balanced_targets(0, &[1.0]),
        Err(BalanceError::TooFewItems {
            total: 0,
            processors: 1
        })
    );
}

/// Huge totals with very unequal speeds once ran for minutes: the bisection's
/// upper end overflowed to infinity, the halving stopped at once, and the exact
/// step walked up one item at a time.
#[test]
fn huge_totals_and_very_unequal_speeds_end_at_once() {
    let b = balanced_targets(1 << 60, &[1e300, 1.0, 1.0]).unwrap();
    assert_eq!(
        b.targets.iter().map(|&k| u128::from(k)).sum::<u128>(),
        1 << 60
    );
    assert_eq!(b.targets[0], 1); // the slow one keeps its one item
    assert_eq!(b.max_time, 1e300);
    let b = balanced_targets(1_000_000_000, &[1e300, 1.0, 1.0]).unwrap();
    assert_eq!(b.targets, vec![1, 500_000_000, 499_999_999]); // ties to the lower index
                                                              // A balanced time beyond the largest f64 is an error, not a hang.
    assert_eq!(
        balanced_targets(u64::MAX, &[1e300, 1e300]),
        Err(BalanceError::TimeOverflow { total: u64::MAX })
    );
    // Times whose product with the total overflows, but not the balance.
    let b = balanced_targets(u64::MAX, &[1e280, 1e280]).unwrap();
    assert_eq!(
        u128::from(b.targets[0]) + u128::from(b.targets[1]),
        u128::from(u64::MAX)
    );
}
