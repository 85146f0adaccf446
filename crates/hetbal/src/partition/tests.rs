//! Checks of the partitions against exhaustive search, a dynamic programme and
//! Nicol's parametric search, written here independently of the library.

use super::*;
use crate::random::SplitMix64;

/// Every list of p + 1 cuts from 0 to n, non-decreasing.
fn all_cuts(n: u64, p: usize) -> Vec<Vec<u64>> {
    fn rec(n: u64, p: usize, cuts: &mut Vec<u64>, out: &mut Vec<Vec<u64>>) {
        if cuts.len() == p {
            let mut c = cuts.clone();
            c.push(n);
            out.push(c);
            return;
        }
        let from = *cuts.last().unwrap();
        for x in from..=n {
            cuts.push(x);
            rec(n, p, cuts, out);
            cuts.pop();
        }
    }
    let mut out = Vec::new();
    rec(n, p, &mut vec![0], &mut out);
    out
}

/// The bottleneck of cuts, summing each range directly.
fn direct_bottleneck(w: &[u64], s: &[f64], cuts: &[u64]) -> f64 {
    (0..s.len())
        .map(|j| {
            s[j] * w[cuts[j] as usize..cuts[j + 1] as usize]
                .iter()
                .sum::<u64>() as f64
        })
        .fold(0.0, f64::max)
}

fn moved(sizes: &[u64], a: &[u64], b: &[u64]) -> u64 {
    let owner =
        |cuts: &[u64], i: u64| (0..cuts.len() - 1).find(|&j| cuts[j] <= i && i < cuts[j + 1]);
    (0..sizes.len() as u64)
        .filter(|&i| owner(a, i) != owner(b, i))
        .map(|i| sizes[i as usize])
        .sum()
}

/// The library's prefix sums of integer weights, and the byte sums.
fn sums_of(w: &[u64], sizes: &[u64]) -> (super::prefix::IntSums, Vec<u64>) {
    let mut sums = vec![0u64];
    let mut bytes = vec![0u64];
    for (&x, &z) in w.iter().zip(sizes) {
        sums.push(sums.last().unwrap() + x);
        bytes.push(bytes.last().unwrap() + z);
    }
    (super::prefix::IntSums(sums), bytes)
}

fn random_instance(rng: &mut SplitMix64, n: usize, p: usize, wmax: u64) -> (Vec<u64>, Vec<f64>) {
    let w = (0..n).map(|_| rng.below_u64(wmax + 1)).collect();
    let s = (0..p)
        .map(|_| [1.0, 2.0, 3.0, 0.5, 7.0][rng.below(5)])
        .collect();
    (w, s)
}

#[test]
fn the_optimum_equals_exhaustive_search_on_every_tiny_instance() {
    let mut rng = SplitMix64::new(31);
    let mut checked = 0;
    for _ in 0..3000 {
        let n = rng.below(8);
        let p = 1 + rng.below(4);
        let (w, s) = random_instance(&mut rng, n, p, 6);
        let best = all_cuts(n as u64, p)
            .iter()
            .map(|c| direct_bottleneck(&w, &s, c))
            .fold(f64::INFINITY, f64::min);
        let got = partition(&w, &s).unwrap();
        assert_eq!(got.bottleneck, best, "weights {w:?} speeds {s:?}");
        assert_eq!(direct_bottleneck(&w, &s, &got.cuts), best);
        assert!(got.optimal && got.lower_bound == best, "{got:?}");
        checked += 1;
    }
    assert_eq!(checked, 3000);
}

#[test]
fn float_weights_give_the_same_optimum_as_integer_ones() {
    // Quarter units: every sum is exact in f64, so the two must agree.
    let mut rng = SplitMix64::new(5);
    for _ in 0..500 {
        let n = rng.below(40);
        let p = 1 + rng.below(6);
        let (w, s) = random_instance(&mut rng, n, p, 20);
        let f: Vec<f64> = w.iter().map(|&x| x as f64 * 0.25).collect();
        let a = partition(&w, &s).unwrap();
        let b = partition(&f, &s).unwrap();
        assert_eq!(a.bottleneck * 0.25, b.bottleneck);
        let i32w: Vec<i32> = w.iter().map(|&x| x as i32).collect();
        assert_eq!(partition(&i32w, &s).unwrap().cuts, a.cuts);
    }
}

/// Nicol's parametric search (exact, O(p^2 log^2 n)), written for the test.
fn nicol(w: &[u64], s: &[f64]) -> f64 {
    let mut prefix = vec![0u64];
    for &x in w {
        prefix.push(prefix.last().unwrap() + x);
    }
    let n = w.len();
    let t = |j: usize, a: usize, b: usize| s[j] * (prefix[b] - prefix[a]) as f64;
    let feasible = |from: usize, start: usize, bound: f64| {
        let mut a = start;
        for j in from..s.len() {
            let mut b = a;
            while b < n && t(j, a, b + 1) <= bound {
                b += 1;
            }
            a = b;
        }
        a == n
    };
    let mut best = f64::INFINITY;
    let mut start = 0;
    for j in 0..s.len() {
        // The smallest b whose time for processor j is feasible for the rest.
        let (mut lo, mut hi) = (start, n);
        while lo < hi {
            let mid = (lo + hi) / 2;
            if feasible(j, start, t(j, start, mid)) {
                hi = mid;
            } else {
                lo = mid + 1;
            }
        }
        best = best.min(t(j, start, lo));
        if lo == start {
            break;
        }
        start = lo - 1;
    }
    best
}

#[test]
fn the_optimum_equals_nicols_search_on_larger_instances() {
    let mut rng = SplitMix64::new(77);
    for round in 0..60 {
        let n = 200 + rng.below(3000);
        let p = 2 + rng.below(40);
        let (mut w, s) = random_instance(&mut rng, n, p, 1000);
        if round % 3 == 0 {
            // Heavy tails and runs of empty cells.
            for x in w.iter_mut() {
                *x = if rng.below(4) == 0 { 0 } else { *x * *x / 50 };
            }
        }
        let got = partition(&w, &s).unwrap();
        assert_eq!(got.bottleneck, nicol(&w, &s), "round {round}");
        assert!(got.optimal);
        assert!(got.probes <= 80, "{} probes", got.probes);
    }
}

#[test]
fn slow_processors_may_get_nothing_and_edge_cases_hold() {
    let p = partition(&[5u64, 5], &[1.0, 1000.0, 1.0]).unwrap();
    assert_eq!(p.cuts, vec![0, 1, 1, 2]);
    // No items, no weight.
    let p = partition::<u64>(&[], &[1.0, 2.0]).unwrap();
    assert_eq!((p.cuts, p.bottleneck), (vec![0, 0, 0], 0.0));
    let p = partition(&[0.0, 0.0, 0.0], &[1.0, 2.0]).unwrap();
    assert_eq!(p.bottleneck, 0.0);
    assert!(p.optimal);
    // One processor.
    assert_eq!(partition(&[1u64, 2, 3], &[2.0]).unwrap().bottleneck, 12.0);
}

#[test]
fn bad_input_is_named() {
    use PartitionError::*;
    assert_eq!(partition(&[1u64], &[]), Err(NoProcessors));
    assert_eq!(
        partition(&[1u64], &[1.0, 0.0]),
        Err(InvalidSpeed {
            index: 1,
            value: 0.0
        })
    );
    assert!(matches!(
        partition(&[1.0, f64::NAN], &[1.0]),
        Err(InvalidWeight { index: 1, .. })
    ));
    assert!(matches!(
        partition(&[1.0, -2.0], &[1.0]),
        Err(InvalidWeight { index: 1, .. })
    ));
    assert!(matches!(
        partition(&[f64::INFINITY], &[1.0]),
        Err(InvalidWeight { index: 0, .. })
    ));
    assert!(matches!(
        partition(&[-1i64], &[1.0]),
        Err(InvalidWeight { index: 0, .. })
    ));
    assert_eq!(
        partition(&[u64::MAX, 1], &[1.0]),
        Err(WeightOverflow { index: 1 })
    );
    assert_eq!(
        partition(&[1e308, 1e308], &[1.0]),
        Err(WeightOverflow { index: 1 })
    );
    assert!(matches!(
        partition(&[1e300], &[1e10]),
        Err(TimeOverflow { .. })
    ));
    let e = partition_with_movement(&[1u64, 1], &[1.0], &[0, 1], 0.0, None).unwrap_err();
    assert_eq!(
        e.to_string(),
        "current[1]: the last cut is 1; it must be the number of items, 2"
    );
    let e = partition_with_movement(&[1u64, 1], &[1.0, 1.0], &[0, 1], 0.0, None).unwrap_err();
    assert_eq!(e.to_string(), "current has 2 entries; it must have 3");
    let e = partition_with_movement(&[1u64, 1], &[1.0, 1.0], &[0, 2, 1], 0.0, None).unwrap_err();
    assert!(
        e.to_string().starts_with("current[2]: the cuts decrease"),
        "{e}"
    );
    let e = partition_with_movement(&[1u64, 1], &[1.0], &[0, 2], -0.1, None).unwrap_err();
    assert_eq!(e, InvalidTolerance(-0.1));
    let e = partition_with_movement(&[1u64, 1], &[1.0], &[0, 2], 0.0, Some(&[1])).unwrap_err();
    assert_eq!(e.to_string(), "sizes has 1 entries; it must have 2");
}

#[test]
fn the_least_moving_partition_equals_exhaustive_search() {
    let mut rng = SplitMix64::new(32);
    let mut moved_something = 0;
    let mut both = 0;
    for round in 0..2500 {
        let n = rng.below(8);
        let p = 1 + rng.below(4);
        let (w, s) = random_instance(&mut rng, n, p, 5);
        let sizes: Vec<u64> = (0..n).map(|_| rng.below_u64(4)).collect();
        let cuts = all_cuts(n as u64, p);
        let current = cuts[rng.below(cuts.len())].clone();
        let tolerance = [0.0, 0.05, 0.25, 1.0][rng.below(4)];
        let opt = cuts
            .iter()
            .map(|c| direct_bottleneck(&w, &s, c))
            .fold(f64::INFINITY, f64::min);
        let limit = opt * (1.0 + tolerance);
        let best = cuts
            .iter()
            .filter(|c| direct_bottleneck(&w, &s, c) <= limit)
            .map(|c| moved(&sizes, &current, c))
            .min()
            .unwrap();
        let got = partition_with_movement(&w, &s, &current, tolerance, Some(&sizes)).unwrap();
        assert_eq!(
            got.moved_bytes, best,
            "round {round}: {w:?} {s:?} {current:?} {tolerance}"
        );
        // Both programmes, each on its own: by sources (no budget limit) and
        // over the windows.
        let (sums, bytes) = sums_of(&w, &sizes);
        let c: Vec<usize> = current.iter().map(|&x| x as usize).collect();
        if direct_bottleneck(&w, &s, &current) > got.limit {
            let by_sources = super::sources::least_moving_by_sources(
                &sums,
                &s,
                &c,
                &bytes,
                got.limit,
                usize::MAX,
            )
            .expect("no budget limit");
            let by_windows = super::movement::windows(&sums, &s, &c, &bytes, got.limit);
            for cuts in [by_sources, by_windows] {
                let cuts: Vec<u64> = cuts.iter().map(|&x| x as u64).collect();
                assert_eq!(
                    moved(&sizes, &current, &cuts),
                    best,
                    "round {round}: {w:?} {s:?} {current:?} {sizes:?} {tolerance} -> {cuts:?}"
                );
                assert!(direct_bottleneck(&w, &s, &cuts) <= got.limit);
            }
            both += 1;
        }
        assert_eq!(moved(&sizes, &current, &got.cuts), best);
        assert!(direct_bottleneck(&w, &s, &got.cuts) <= limit);
        assert_eq!(got.bottleneck, direct_bottleneck(&w, &s, &got.cuts));
        moved_something += usize::from(best > 0);
    }
    assert!(moved_something > 500, "{moved_something}");
    assert!(both > 500, "{both}");
}

#[test]
fn the_least_moving_partition_keeps_what_it_can_on_larger_instances() {
    // Against a plain O(p n^2) dynamic programme over (processor, cut).
    let mut rng = SplitMix64::new(9);
    for _ in 0..40 {
        let n = 20 + rng.below(60);
        let p = 2 + rng.below(6);
        let (w, s) = random_instance(&mut rng, n, p, 30);
        let sizes: Vec<u64> = (0..n).map(|_| 1 + rng.below_u64(100)).collect();
        let mut current: Vec<u64> = (0..=p).map(|_| rng.below_u64(n as u64 + 1)).collect();
        current.sort_unstable();
        current[0] = 0;
        current[p] = n as u64;
        let tolerance = [0.0, 0.02, 0.1][rng.below(3)];
        let got = partition_with_movement(&w, &s, &current, tolerance, Some(&sizes)).unwrap();
        let limit = got.optimum.bottleneck * (1.0 + tolerance);
        let mut prefix = vec![0u64];
        for &x in &w {
            prefix.push(prefix.last().unwrap() + x);
        }
        let mut bytes = vec![0u64];
        for &z in &sizes {
            bytes.push(bytes.last().unwrap() + z);
        }
        let none = i64::MIN;
        let mut f = vec![none; n + 1];
        f[0] = 0;
        for j in 0..p {
            let mut g = vec![none; n + 1];
            for x in 0..=n {
                if f[x] == none {
                    continue;
                }
                for y in x..=n {
                    if s[j] * (prefix[y] - prefix[x]) as f64 > limit {
                        break;
                    }
                    let (a, b) = (x.max(current[j] as usize), y.min(current[j + 1] as usize));
                    let keep = if a < b { bytes[b] - bytes[a] } else { 0 } as i64;
                    g[y] = g[y].max(f[x] + keep);
                }
            }
            f = g;
        }
        assert_eq!(got.moved_bytes as i64, bytes[n] as i64 - f[n]);
    }
}

#[test]
fn the_order_heuristic_is_close_to_the_best_order() {
    let mut rng = SplitMix64::new(3);
    let (mut exact, mut worst) = (0, 1.0f64);
    let rounds = 400;
    for _ in 0..rounds {
        let n = 4 + rng.below(30);
        let p = 2 + rng.below(5);
        let (w, s) = random_instance(&mut rng, n, p, 40);
        let h = order_processors(&w, &s).unwrap();
        let e = exhaustive_order(&w, &s).unwrap();
        let speeds: Vec<f64> = h.order.iter().map(|&j| s[j]).collect();
        assert_eq!(partition(&w, &speeds).unwrap(), h.partition);
        assert!(h.partition.bottleneck >= e.partition.bottleneck);
        if h.partition.bottleneck == e.partition.bottleneck {
            exact += 1;
        }
        worst = worst.max(h.partition.bottleneck / e.partition.bottleneck);
    }
    eprintln!("order heuristic: best order on {exact} of {rounds}, worst ratio {worst}");
    assert!(
        exact * 10 >= rounds * 7,
        "best order found on {exact} of {rounds}"
    );
    assert!(worst < 1.5, "worst ratio {worst}");
}

#[test]
fn shares_cut_where_they_say() {
    let w = [1u64, 1, 1, 1, 1, 1, 1, 1];
    assert_eq!(equal_weight_cuts(&w, 4).unwrap(), vec![0, 2, 4, 6, 8]);
    // Shares 0.4, 0.4, 0.2 of 8 units: cuts at the first items reaching 3.2 and 6.4.
    assert_eq!(
        speed_share_cuts(&w, &[1.0, 1.0, 2.0]).unwrap(),
        vec![0, 4, 7, 8]
    );
    // Both are never better than the optimum.
    let mut rng = SplitMix64::new(12);
    for _ in 0..300 {
        let n = rng.below(200);
        let p = 1 + rng.below(20);
        let (w, s) = random_instance(&mut rng, n, p, 50);
        let opt = partition(&w, &s).unwrap().bottleneck;
        let eq = bottleneck_of(&w, &s, &equal_weight_cuts(&w, p).unwrap()).unwrap();
        let sh = bottleneck_of(&w, &s, &speed_share_cuts(&w, &s).unwrap()).unwrap();
        assert!(eq >= opt && sh >= opt);
    }
}

#[test]
fn item_moves_are_valid_and_never_below_their_bound() {
    let mut rng = SplitMix64::new(44);
    let (mut optimal, mut total) = (0, 0);
    for round in 0..1500 {
        let n = rng.below(30) as u64;
        let p = 1 + rng.below(6);
        let cut = |rng: &mut SplitMix64| {
            let mut c: Vec<u64> = (0..=p).map(|_| rng.below_u64(n + 1)).collect();
            c.sort_unstable();
            c[0] = 0;
            c[p] = n;
            c
        };
        let (current, new) = (cut(&mut rng), cut(&mut rng));
        let sizes: Vec<u64> = (0..n).map(|_| rng.below_u64(5)).collect();
        let c_succ: Vec<f64> = (0..p).map(|_| [0.5, 1.0, 2.0][rng.below(3)]).collect();
        let c_pred: Vec<f64> = (0..p).map(|_| [0.5, 1.0, 3.0][rng.below(3)]).collect();
        let plan = move_schedule(&current, &new, Some(&sizes), &c_succ, &c_pred).unwrap();
        let makespan = validate_moves(&current, &new, Some(&sizes), &c_succ, &c_pred, &plan.moves)
            .unwrap_or_else(|e| panic!("round {round}: {e}\n{current:?} -> {new:?} {plan:?}"));
        assert_eq!(makespan, plan.makespan);
        assert!(plan.makespan >= plan.lower_bound - 1e-9, "round {round}");
        assert_eq!(plan.moved_bytes, moved(&sizes, &current, &new));
        total += 1;
        optimal += usize::from(plan.optimal);
    }
    assert!(optimal * 2 > total, "optimal on {optimal} of {total}");
}

#[test]
fn the_validator_refuses_broken_moves() {
    let sizes = [1u64, 2, 3];
    let (current, new) = ([0u64, 1, 3], [0u64, 3, 3]);
    let plan = move_schedule(&current, &new, Some(&sizes), &[1.0; 2], &[1.0; 2]).unwrap();
    let check = |moves: &[ItemMove]| {
        validate_moves(&current, &new, Some(&sizes), &[1.0; 2], &[1.0; 2], moves)
            .map_err(|e| e.to_string())
    };
    assert_eq!(check(&plan.moves), Ok(5.0));
    assert!(check(&[]).unwrap_err().contains("item 1 ends at P1"));
    let mut late = plan.moves.clone();
    late[0].end += 1.0;
    assert!(check(&late).unwrap_err().contains("its items take until"));
    // Two items at once from P1.
    let split = vec![
        ItemMove {
            from: 1,
            to: 0,
            first: 1,
            last: 1,
            start: 0.0,
            end: 2.0,
        },
        ItemMove {
            from: 1,
            to: 0,
            first: 2,
            last: 2,
            start: 1.0,
            end: 4.0,
        },
    ];
    assert!(check(&split).unwrap_err().contains("one port"));
    let wrong_way = vec![ItemMove {
        from: 0,
        to: 1,
        first: 1,
        last: 2,
        start: 0.0,
        end: 5.0,
    }];
    assert!(check(&wrong_way).unwrap_err().contains("is sent by P0"));
}

#[test]
fn a_forwarder_waits_for_whole_items() {
    // Items travel two hops from P2 to P0: each leaves P1 only once wholly
    // received, so the second hop of the last item ends at 2 + 3 + 3 = 8.
    let sizes = [2u64, 3];
    let plan = move_schedule(
        &[0, 0, 0, 2],
        &[0, 2, 2, 2],
        Some(&sizes),
        &[1.0; 3],
        &[1.0; 3],
    )
    .unwrap();
    validate_moves(
        &[0, 0, 0, 2],
        &[0, 2, 2, 2],
        Some(&sizes),
        &[1.0; 3],
        &[1.0; 3],
        &plan.moves,
    )
    .unwrap();
    assert_eq!(plan.makespan, 8.0);
    assert_eq!(plan.lower_bound, 6.0);
}

#[test]
fn both_least_moving_programmes_agree_on_medium_instances() {
    // Rebalances after some processors slowed down: the source programme
    // (fast when few processors are overloaded) against the window programme.
    let mut rng = SplitMix64::new(71);
    let mut compared = 0;
    for round in 0..40 {
        let n = 500 + rng.below(2000);
        let p = 2 + rng.below(40);
        let (mut w, s) = random_instance(&mut rng, n, p, 50);
        if round % 2 == 0 {
            for x in w.iter_mut() {
                *x = *x * *x / 20;
            }
        }
        let sizes: Vec<u64> = (0..n).map(|_| rng.below_u64(1000)).collect();
        let current: Vec<usize> = partition(&w, &s)
            .unwrap()
            .cuts
            .iter()
            .map(|&c| c as usize)
            .collect();
        let slower: Vec<f64> = s
            .iter()
            .map(|&x| {
                if rng.below(4) == 0 {
                    x * (1.2 + rng.unit())
                } else {
                    x
                }
            })
            .collect();
        let tolerance = [0.0, 0.03, 0.1][rng.below(3)];
        let limit = partition(&w, &slower).unwrap().bottleneck * (1.0 + tolerance);
        let (sums, bytes) = sums_of(&w, &sizes);
        let cur64: Vec<u64> = current.iter().map(|&x| x as u64).collect();
        if direct_bottleneck(&w, &slower, &cur64) <= limit {
            continue;
        }
        let a = super::sources::least_moving_by_sources(
            &sums,
            &slower,
            &current,
            &bytes,
            limit,
            usize::MAX,
        )
        .unwrap();
        let b = super::movement::windows(&sums, &slower, &current, &bytes, limit);
        let (a, b): (Vec<u64>, Vec<u64>) = (
            a.iter().map(|&x| x as u64).collect(),
            b.iter().map(|&x| x as u64).collect(),
        );
        assert_eq!(
            moved(&sizes, &cur64, &a),
            moved(&sizes, &cur64, &b),
            "round {round}"
        );
        assert!(direct_bottleneck(&w, &slower, &a) <= limit);
        compared += 1;
    }
    assert!(compared >= 20, "{compared} of 40 compared");
}

#[test]
fn the_tolerance_chosen_ends_the_remaining_iterations_soonest() {
    let mut rng = SplitMix64::new(8);
    let mut moved_part_way = 0;
    for round in 0..300 {
        let n = 5 + rng.below(40);
        let p = 2 + rng.below(6);
        let (w, s) = random_instance(&mut rng, n, p, 20);
        let sizes: Vec<u64> = (0..n).map(|_| 1 + rng.below_u64(50)).collect();
        let mut current: Vec<u64> = (0..=p).map(|_| rng.below_u64(n as u64 + 1)).collect();
        current.sort_unstable();
        current[0] = 0;
        current[p] = n as u64;
        let costs: Vec<f64> = (0..p).map(|_| rng.range((0.01, 0.5))).collect();
        let remaining = rng.below_u64(30);
        let r = choose_tolerance(
            &w,
            &s,
            &current,
            Some(&sizes),
            &costs,
            &costs,
            remaining,
            &TOLERANCES,
        )
        .unwrap();
        // Every candidate's total recomputed independently of the choice.
        let stay = remaining as f64 * direct_bottleneck(&w, &s, &current);
        assert_eq!(r.candidates[0].total, stay, "round {round}");
        let best = r
            .candidates
            .iter()
            .map(|c| c.total)
            .fold(f64::INFINITY, f64::min);
        let chosen = match r.tolerance {
            None => stay,
            Some(t) => {
                let m = &r.partition;
                let plan = r.moves.as_ref().unwrap();
                validate_moves(&current, &m.cuts, Some(&sizes), &costs, &costs, &plan.moves)
                    .unwrap();
                assert!(m.bottleneck <= m.optimum.bottleneck * (1.0 + t));
                plan.makespan + remaining as f64 * m.bottleneck
            }
        };
        assert_eq!(chosen, best, "round {round}: {r:?}");
        if remaining == 0 {
            assert_eq!(r.tolerance, None);
        }
        if r.tolerance.is_none() {
            assert_eq!((&r.partition.cuts, r.partition.moved_bytes), (&current, 0));
        }
        moved_part_way += usize::from(r.tolerance.is_some_and(|t| t > 0.0));
    }
    assert!(moved_part_way > 0);
}
