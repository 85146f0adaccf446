//! Load-balanced scatter, checked independently:
//!
//! - `exact` against `naive_dp` (the paper's Algorithm 1) on thousands of random
//!   small instances (affine and tabulated costs, both startup rules), bit for bit
//!   with dyadic costs, to 1e-12 with arbitrary reals;
//! - both against brute force over every count vector on tiny instances;
//! - `best_order` against every permutation on small p, never worse than
//!   `bandwidth_order`, and model.md's three processors where Theorem 3 loses;
//! - the rational LP against a general LP solver (good_lp, microlp), the paper's
//!   rounding bound, `linear` against the LP, Theorem 3 on linear costs;
//! - lower bounds, validation messages, root choice, sizes.
//!
//! Instances come from the project's deterministic generator
//! (`hetbal::random::SplitMix64`, through `support/scatter_gen.rs`): every run draws
//! the same ones.

#[path = "support/scatter_gen.rs"]
mod scatter_gen;
#[path = "support/scatter_lp.rs"]
mod scatter_lp;

use hetbal::random::SplitMix64;
use hetbal::scatter::{
    bandwidth_order, best_order, choose_root, evaluate, exact, given_order, linear, lower_bound,
    lp, naive_dp, plan, plan_in_order, round_shares, CostSpec, InstanceError, Method, OrderPolicy,
    PlanError, ProcessorSpec, ScatterInstance, ScatterInstanceSpec, SearchKind, StartupRule,
};
use scatter_gen::{grid_like, instance, random_order, Shape};
use scatter_lp::lp_optimum;

/// Every count vector of `total` items over `p` positions.
fn count_vectors(p: usize, total: u64, visit: &mut dyn FnMut(&[u64])) {
    fn go(prefix: &mut Vec<u64>, left: u64, p: usize, visit: &mut dyn FnMut(&[u64])) {
        if prefix.len() + 1 == p {
            prefix.push(left);
            visit(prefix);
            prefix.pop();
            return;
        }
        for x in 0..=left {
            prefix.push(x);
            go(prefix, left - x, p, visit);
            prefix.pop();
        }
    }
    go(&mut Vec::new(), total, p, visit);
}

/// The least makespan over every count vector, by brute force.
fn brute_force(s: &ScatterInstance, order: &[usize]) -> f64 {
    let mut best = f64::INFINITY;
    count_vectors(order.len(), s.items(), &mut |counts| {
        best = best.min(evaluate(s, order, counts).unwrap().makespan);
    });
    best
}

/// Every order of the processors, root last (written here, not the library's).
fn all_orders(s: &ScatterInstance) -> Vec<Vec<usize>> {
    fn go(rest: &mut Vec<usize>, prefix: &mut Vec<usize>, out: &mut Vec<Vec<usize>>) {
        if rest.is_empty() {
            out.push(prefix.clone());
            return;
        }
        for k in 0..rest.len() {
            let x = rest.remove(k);
            prefix.push(x);
            go(rest, prefix, out);
            prefix.pop();
            rest.insert(k, x);
        }
    }
    let root = s.root();
    let mut rest: Vec<usize> = (0..s.len()).filter(|&i| i != root).collect();
    let mut out = Vec::new();
    go(&mut rest, &mut Vec::new(), &mut out);
    for o in &mut out {
        o.push(root);
    }
    out
}

fn close(a: f64, b: f64, rel: f64) -> bool {
    (a - b).abs() <= rel * a.abs().max(b.abs()).max(1.0)
}

// ---------------------------------------------------------------- exact vs naive

#[test]
fn exact_equals_naive_dp_bit_for_bit_on_dyadic_instances() {
    let mut rng = SplitMix64::new(0x5ca7_7e12);
    let shape = Shape::small();
    let mut checked = 0;
    let mut tables = 0;
    for _ in 0..10_000 {
        let s = instance(&mut rng, &shape);
        let order = random_order(&mut rng, &s);
        let fast = exact(&s, &order).unwrap();
        let naive = naive_dp(&s, &order).unwrap();
        assert_eq!(fast.optimum, naive.optimum, "{s:?} order {order:?}");
        assert_eq!(fast.counts.iter().sum::<u64>(), s.items());
        let mf = evaluate(&s, &order, &fast.counts).unwrap().makespan;
        let mn = evaluate(&s, &order, &naive.counts).unwrap().makespan;
        // Dyadic costs: adding from the back or the front gives the same sums.
        assert_eq!(mf, fast.optimum, "{s:?} order {order:?}");
        assert_eq!(mf, mn);
        tables += usize::from(!s.is_affine());
        checked += 1;
    }
    eprintln!("exact = naive-dp (bit for bit): {checked} random instances, {tables} with tables");
    assert!(tables > 2000 && checked - tables > 1000);
}

#[test]
fn exact_equals_naive_dp_on_real_costs() {
    let mut rng = SplitMix64::new(0xfeed_beef);
    let shape = Shape {
        max_p: 6,
        max_items: 60,
        tables: true,
        startups: true,
        dyadic: false,
        rule: None,
    };
    let mut checked = 0;
    for _ in 0..3000 {
        let s = instance(&mut rng, &shape);
        let order = random_order(&mut rng, &s);
        let fast = exact(&s, &order).unwrap();
        let naive = naive_dp(&s, &order).unwrap();
        assert!(
            close(fast.optimum, naive.optimum, 1e-12),
            "{} vs {} on {s:?} order {order:?}",
            fast.optimum,
            naive.optimum
        );
        let mf = evaluate(&s, &order, &fast.counts).unwrap().makespan;
        assert!(close(mf, naive.optimum, 1e-12), "{mf} vs {}", naive.optimum);
        checked += 1;
    }
    eprintln!("exact = naive-dp (1e-12): {checked} random instances with real costs");
}

/// Larger N, fewer instances: the sliding window over long ranges.
#[test]
fn exact_equals_naive_dp_on_larger_instances() {
    let mut rng = SplitMix64::new(0x1234_5678_9abc);
    let shape = Shape {
        max_p: 7,
        max_items: 400,
        tables: true,
        startups: true,
        dyadic: true,
        rule: None,
    };
    for _ in 0..60 {
        let s = instance(&mut rng, &shape);
        let order = random_order(&mut rng, &s);
        assert_eq!(
            exact(&s, &order).unwrap().optimum,
            naive_dp(&s, &order).unwrap().optimum,
            "{s:?} order {order:?}"
        );
    }
    for seed in 1..=6 {
        let mut g = SplitMix64::new(seed);
        let s = grid_like(&mut g, 6, 1500, seed % 2 == 0);
        let order = bandwidth_order(&s);
        let (fast, naive) = (exact(&s, &order).unwrap(), naive_dp(&s, &order).unwrap());
        assert!(close(fast.optimum, naive.optimum, 1e-12));
    }
}

#[test]
fn exact_equals_brute_force_on_tiny_instances() {
    let mut rng = SplitMix64::new(0xb007_f0cc);
    let shape = Shape {
        max_p: 4,
        max_items: 9,
        ..Shape::small()
    };
    let mut checked = 0;
    for _ in 0..5000 {
        let s = instance(&mut rng, &shape);
        let order = random_order(&mut rng, &s);
        let brute = brute_force(&s, &order);
        let fast = exact(&s, &order).unwrap();
        assert_eq!(fast.optimum, brute, "{s:?} order {order:?}");
        assert_eq!(evaluate(&s, &order, &fast.counts).unwrap().makespan, brute);
        assert_eq!(naive_dp(&s, &order).unwrap().optimum, brute);
        checked += 1;
    }
    eprintln!("exact = naive-dp = brute force: {checked} tiny instances");
}

// ---------------------------------------------------------------- orders

#[test]
fn model_md_three_processors_theorem3_is_not_optimal() {
    // N = 3; P0 comm 2 comp 6, P1 comm 4 comp 8, root P2 comp 6 (s/item).
    let s = ScatterInstance::linear(3, 2, &[2.0, 4.0, 0.0], &[6.0, 8.0, 6.0]).unwrap();
    assert_eq!(bandwidth_order(&s), vec![0, 1, 2]);
    assert_eq!(brute_force(&s, &[0, 1, 2]), 14.0);
    assert_eq!(brute_force(&s, &[1, 0, 2]), 12.0);
    let theorem3 = plan(&s, Method::Exact, OrderPolicy::Bandwidth).unwrap();
    assert_eq!(theorem3.makespan, 14.0);
    for method in [Method::Exact, Method::NaiveDp] {
        let best = plan(&s, method, OrderPolicy::Best).unwrap();
        assert_eq!(best.order, vec![1, 0, 2]);
        assert_eq!(best.counts, vec![1, 1, 1]);
        assert_eq!(best.makespan, 12.0);
        assert_eq!(best.search.unwrap().kind, SearchKind::Exhaustive);
    }
    // Theorem 3 holds for the rational relaxation: there P0 first is better.
    assert!(lower_bound(&s, &[0, 1, 2]).unwrap() < lower_bound(&s, &[1, 0, 2]).unwrap());
}

#[test]
fn best_order_equals_every_permutation_on_small_p() {
    let mut rng = SplitMix64::new(0x0bde_5ea7);
    let shape = Shape {
        max_p: 6,
        max_items: 25,
        ..Shape::small()
    };
    let mut checked = 0;
    let mut beats_bandwidth = 0;
    for _ in 0..1000 {
        let s = instance(&mut rng, &shape);
        let orders = all_orders(&s);
        let values: Vec<f64> = orders
            .iter()
            .map(|o| naive_dp(&s, o).unwrap().optimum)
            .collect();
        let best_value = values.iter().copied().fold(f64::INFINITY, f64::min);
        let search = best_order(&s, Method::Exact).unwrap();
        assert_eq!(search.kind, SearchKind::Exhaustive);
        assert_eq!(search.value, best_value, "{s:?}");
        assert_eq!(exact(&s, &search.order).unwrap().optimum, best_value);
        let bw = exact(&s, &bandwidth_order(&s)).unwrap().optimum;
        assert!(search.value <= bw);
        let planned = plan(&s, Method::Exact, OrderPolicy::Best).unwrap();
        assert_eq!(planned.makespan, best_value);
        beats_bandwidth += usize::from(best_value < bw);
        checked += 1;
    }
    eprintln!(
        "best order = best of all permutations: {checked} instances, {beats_bandwidth} where Theorem 3's order is not optimal"
    );
    assert!(beats_bandwidth > 50);
}

/// Large N on grid-like platforms with startups: the search's cut-offs (capacities,
/// the rational relaxation, Theorem 3 on partial orders) matter here.
#[test]
fn best_order_equals_every_permutation_on_grid_like_platforms() {
    let mut rng = SplitMix64::new(0x9e1d);
    let mut differs = 0;
    for round in 0..30 {
        let p = 5 + (round % 2);
        let items = 1000 + rng.below_u64(7000);
        let s = grid_like(&mut rng, p, items, round % 3 != 0);
        let best_value = all_orders(&s)
            .iter()
            .map(|o| exact(&s, o).unwrap().optimum)
            .fold(f64::INFINITY, f64::min);
        let search = best_order(&s, Method::Exact).unwrap();
        assert_eq!(search.kind, SearchKind::Exhaustive);
        assert!(
            close(search.value, best_value, 1e-12),
            "{} vs {best_value}",
            search.value
        );
        let found = exact(&s, &search.order).unwrap().optimum;
        assert!(
            close(found, best_value, 1e-12),
            "{found} vs {best_value} on {s:?}"
        );
        differs += usize::from(search.order != bandwidth_order(&s));
    }
    eprintln!("grid-like platforms: 30 checked against every order, {differs} best orders differ from Theorem 3's");
    assert!(differs >= 5);
}

#[test]
fn best_order_of_rational_methods_equals_every_permutation() {
    let mut rng = SplitMix64::new(0x7a7e);
    let shape = Shape {
        max_p: 6,
        max_items: 2000,
        tables: false,
        startups: true,
        dyadic: false,
        rule: Some(StartupRule::Always),
    };
    let mut checked = 0;
    while checked < 150 {
        let s = instance(&mut rng, &shape);
        if lp(&s, &given_order(&s)).is_err() {
            continue; // a processor with no time per item
        }
        let best_value = all_orders(&s)
            .iter()
            .map(|o| {
                evaluate(&s, o, &lp(&s, o).unwrap().counts)
                    .unwrap()
                    .makespan
            })
            .fold(f64::INFINITY, f64::min);
        let planned = plan(&s, Method::Lp, OrderPolicy::Best).unwrap();
        assert_eq!(planned.makespan, best_value);
        let bw = plan(&s, Method::Lp, OrderPolicy::Bandwidth).unwrap();
        assert!(planned.makespan <= bw.makespan);
        checked += 1;
    }
}

#[test]
fn local_search_beyond_eight_processors_is_never_worse_than_bandwidth() {
    let mut rng = SplitMix64::new(0x10ca1);
    let mut improved = 0;
    for round in 0..12 {
        let shape = Shape {
            max_p: 12,
            max_items: 60,
            ..Shape::small()
        };
        let mut s = instance(&mut rng, &shape);
        while s.len() <= 8 {
            s = instance(&mut rng, &shape);
        }
        let search = best_order(&s, Method::Exact).unwrap();
        assert_ne!(search.kind, SearchKind::Exhaustive);
        let bw = exact(&s, &bandwidth_order(&s)).unwrap().optimum;
        let given = exact(&s, &given_order(&s)).unwrap().optimum;
        assert_eq!(search.bandwidth_value, bw);
        assert!(search.value <= bw && search.value <= given, "round {round}");
        assert_eq!(exact(&s, &search.order).unwrap().optimum, search.value);
        let planned = plan(&s, Method::Exact, OrderPolicy::Best).unwrap();
        assert!(
            planned.makespan
                <= plan(&s, Method::Exact, OrderPolicy::Bandwidth)
                    .unwrap()
                    .makespan
        );
        improved += usize::from(search.value < bw);
    }
    // The grid-like platform of the benchmark: 16 processors, large N.
    let s = grid_like(&mut SplitMix64::new(99), 16, 20_000, true);
    let search = best_order(&s, Method::Exact).unwrap();
    assert!(search.value <= search.bandwidth_value);
    eprintln!("local search: {improved} of 12 random instances improved on Theorem 3's order");
}

// ---------------------------------------------------------------- LP

#[test]
fn lp_equals_the_lp_solver_and_its_rounding_keeps_the_papers_bound() {
    let mut rng = SplitMix64::new(0x1b_5eed);
    let mut checked = 0;
    let mut below_optimum = 0;
    while checked < 600 {
        let p = 1 + rng.below(10);
        let items = if rng.below_u64(3) == 0 {
            rng.below_u64(40)
        } else {
            rng.below_u64(2_000_000)
        };
        let root = rng.below(p);
        let comm: Vec<(f64, f64)> = (0..p)
            .map(|i| {
                if i == root {
                    (0.0, 0.0)
                } else {
                    (
                        rng.range((0.0, 2.0)),
                        if rng.below_u64(2) == 0 {
                            0.0
                        } else {
                            rng.range((0.0, 20.0))
                        },
                    )
                }
            })
            .collect();
        let comp: Vec<(f64, f64)> = (0..p)
            .map(|_| {
                (
                    rng.range((0.01, 5.0)),
                    if rng.below_u64(2) == 0 {
                        0.0
                    } else {
                        rng.range((0.0, 20.0))
                    },
                )
            })
            .collect();
        let s = ScatterInstance::affine(items, root, &comm, &comp, StartupRule::Always).unwrap();
        let order = random_order(&mut rng, &s);
        let ours = lp(&s, &order).unwrap();
        let (solver, _) = lp_optimum(&s, &order);
        assert!(
            close(ours.rational_makespan, solver, 1e-7),
            "hetbal {} vs LP solver {solver} on {s:?} order {order:?}",
            ours.rational_makespan
        );
        // The shares are a feasible LP solution at that T.
        let shares = &ours.shares;
        assert!(close(shares.iter().sum::<f64>(), items as f64, 1e-9));
        let mut sent = 0.0;
        for (k, &i) in order.iter().enumerate() {
            let (a, b, w, sp) = scatter_lp::line(&s, i);
            sent += a * shares[k] + b;
            assert!(sent + w * shares[k] + sp <= ours.rational_makespan * (1.0 + 1e-9) + 1e-9);
        }
        // The paper's bound, with every startup paid.
        assert_eq!(ours.counts.iter().sum::<u64>(), items);
        for (c, x) in ours.counts.iter().zip(shares) {
            assert!((*c as f64 - x).abs() < 1.0 + 1e-6, "{c} from {x}");
        }
        let rounded = evaluate(&s, &order, &ours.counts).unwrap().makespan;
        let slack = 1e-9 * ours.rational_makespan.max(1.0);
        assert!(rounded <= ours.rational_makespan + ours.guarantee + slack);
        // The rational optimum is a lower bound on every integer distribution.
        assert!(close(
            lower_bound(&s, &order).unwrap(),
            ours.rational_makespan,
            1e-12
        ));
        if items <= 40 && p <= 5 {
            let opt = exact(&s, &order).unwrap().optimum;
            assert!(ours.rational_makespan <= opt * (1.0 + 1e-12) + 1e-12);
            assert!(rounded >= opt * (1.0 - 1e-12));
            below_optimum += 1;
        }
        checked += 1;
    }
    eprintln!(
        "LP: {checked} random instances equal to the LP solver, rounding within the paper's bound; {below_optimum} compared with the exact optimum"
    );
    assert!(below_optimum > 50);
}

/// Under `when_used` the LP's rounding is not bounded against the optimum: a
/// startup paid only when used makes the optimum cheaper than the LP thinks.
#[test]
fn lp_bound_is_stated_for_the_always_rule() {
    // P0: startups of 100 s; the root processes 10 items in 10 s alone.
    let s = ScatterInstance::affine(
        10,
        1,
        &[(0.0, 100.0), (0.0, 0.0)],
        &[(0.1, 0.0), (1.0, 0.0)],
        StartupRule::WhenUsed,
    )
    .unwrap();
    let order = [0, 1];
    let planned = plan_in_order(&s, Method::Lp, &order).unwrap();
    let r = planned.rational.as_ref().unwrap();
    // The LP pays P0's 100 s startup whatever: its optimum is 100 + (root's 10 s
    // minus what P0 takes), above the when_used optimum of 10 (P0 unused).
    assert!(r.distribution.rational_makespan > 100.0);
    assert_eq!(exact(&s, &order).unwrap().optimum, 10.0);
    assert!(planned.makespan <= r.makespan_always);
    assert!(r.makespan_always <= r.bound);
    // The lower bound of the plan is valid under when_used (not the LP's value).
    assert!(planned.lower_bound <= 10.0);
}

#[test]
fn linear_closed_form_equals_the_lp_and_the_lp_solver() {
    let mut rng = SplitMix64::new(0x11ea);
    for _ in 0..400 {
        let p = 1 + rng.below(12);
        let items = rng.below_u64(1_000_000);
        let comm: Vec<f64> = (0..p)
            .map(|i| {
                if i + 1 == p {
                    0.0
                } else {
                    rng.range((0.0, 3.0))
                }
            })
            .collect();
        let comp: Vec<f64> = (0..p).map(|_| rng.range((0.01, 5.0))).collect();
        let s = ScatterInstance::linear(items, p - 1, &comm, &comp).unwrap();
        let order = random_order(&mut rng, &s);
        let closed = linear(&s, &order).unwrap();
        let via_lp = lp(&s, &order).unwrap();
        let (solver, _) = lp_optimum(&s, &order);
        assert!(close(
            closed.rational_makespan,
            via_lp.rational_makespan,
            1e-9
        ));
        assert!(close(closed.rational_makespan, solver, 1e-7));
        // Every processor that gets items ends at T (Theorem 2).
        let mut sent = 0.0;
        for (k, &i) in order.iter().enumerate() {
            let x = closed.shares[k];
            sent += comm[i] * x;
            if x > 0.0 {
                assert!(close(sent + comp[i] * x, closed.rational_makespan, 1e-9));
            }
        }
    }
}

/// Theorem 3: with linear costs and rational shares, decreasing bandwidth (root
/// last) is the best order.
#[test]
fn theorem3_holds_for_rational_shares() {
    let mut rng = SplitMix64::new(0x7e03);
    for _ in 0..300 {
        let p = 2 + rng.below(5);
        let comm: Vec<f64> = (0..p)
            .map(|i| {
                if i + 1 == p {
                    0.0
                } else {
                    rng.range((0.001, 3.0))
                }
            })
            .collect();
        let comp: Vec<f64> = (0..p).map(|_| rng.range((0.01, 5.0))).collect();
        let s = ScatterInstance::linear(1 + rng.below_u64(10_000), p - 1, &comm, &comp).unwrap();
        let bw = linear(&s, &bandwidth_order(&s)).unwrap().rational_makespan;
        for order in all_orders(&s) {
            let t = linear(&s, &order).unwrap().rational_makespan;
            assert!(bw <= t * (1.0 + 1e-12), "{bw} > {t} for {order:?} on {s:?}");
        }
    }
}

#[test]
fn lower_bound_is_below_the_optimum_under_both_rules_and_tables() {
    let mut rng = SplitMix64::new(0x10b0);
    let shape = Shape {
        max_p: 6,
        max_items: 40,
        tables: true,
        startups: true,
        dyadic: false,
        rule: None,
    };
    let mut tight = 0;
    for _ in 0..2000 {
        let s = instance(&mut rng, &shape);
        let order = random_order(&mut rng, &s);
        let lb = lower_bound(&s, &order).unwrap();
        let opt = exact(&s, &order).unwrap().optimum;
        assert!(
            lb <= opt * (1.0 + 1e-12) + 1e-12,
            "{lb} > {opt} on {s:?} {order:?}"
        );
        tight += usize::from(lb >= 0.5 * opt);
    }
    assert!(tight > 1000, "the bound is rarely useful: {tight}");
}

#[test]
fn round_shares_follows_the_papers_scheme() {
    assert_eq!(round_shares(&[2.4, 3.4, 4.2], 10), vec![3, 3, 4]);
    assert_eq!(round_shares(&[1.5, 1.5], 3), vec![1, 2]);
    assert_eq!(round_shares(&[0.6, 0.6, 0.8], 2), vec![0, 1, 1]);
    assert_eq!(round_shares(&[], 0), Vec::<u64>::new());
    let mut rng = SplitMix64::new(0x20ad);
    for _ in 0..2000 {
        let p = 1 + rng.below(20);
        let total = rng.below_u64(100_000);
        let weights: Vec<f64> = (0..p).map(|_| rng.range((0.0, 1.0))).collect();
        let sum: f64 = weights.iter().sum();
        let shares: Vec<f64> = weights.iter().map(|w| w / sum * total as f64).collect();
        let counts = round_shares(&shares, total);
        assert_eq!(counts.iter().sum::<u64>(), total);
        for (c, x) in counts.iter().zip(&shares) {
            assert!((*c as f64 - x).abs() < 1.0);
        }
    }
}

// ---------------------------------------------------------------- plans, times

/// Exact times on a hand-computed case (all values dyadic).
#[test]
fn timeline_of_a_hand_computed_plan() {
    // Root R (comp 1 s/item); A: comm 0.5 s/item + 1 s startup, comp 2 s/item;
    // B: comm 0.25 s/item, comp 1 s/item + 2 s startup. 12 items, order A, B, R.
    let s = ScatterInstance::affine(
        12,
        2,
        &[(0.5, 1.0), (0.25, 0.0), (0.0, 0.0)],
        &[(2.0, 0.0), (1.0, 2.0), (1.0, 0.0)],
        StartupRule::WhenUsed,
    )
    .unwrap();
    let t = evaluate(&s, &[0, 1, 2], &[3, 4, 5]).unwrap();
    assert_eq!(t.receive_start, vec![0.0, 2.5, 3.5]);
    assert_eq!(t.receive_end, vec![2.5, 3.5, 3.5]);
    assert_eq!(t.finish_times, vec![8.5, 9.5, 8.5]);
    assert_eq!(t.makespan, 9.5);
    let best = plan_in_order(&s, Method::Exact, &[0, 1, 2]).unwrap();
    assert_eq!(best.makespan, brute_force(&s, &[0, 1, 2]));
    assert_eq!(best.displacements[0], 0);
    assert_eq!(best.displacements[2], best.counts[0] + best.counts[1]);
    // Under `always`, an unused processor still pays both startups.
    let always = s.with_rule(StartupRule::Always);
    let t = evaluate(&always, &[0, 1, 2], &[0, 0, 12]).unwrap();
    assert_eq!(t.finish_times, vec![1.0, 3.0, 13.0]);
}

#[test]
fn every_method_and_order_gives_a_consistent_plan() {
    let mut rng = SplitMix64::new(0xc0115);
    let shape = Shape {
        max_p: 7,
        max_items: 50,
        tables: false,
        startups: true,
        dyadic: true,
        rule: None,
    };
    for _ in 0..200 {
        let s = instance(&mut rng, &shape);
        let linear_costs =
            (0..s.len()).all(|i| [s.comm(i), s.comp(i)].iter().all(|c| c.first_item() == 0.0));
        for method in Method::ALL {
            for policy in OrderPolicy::ALL {
                let planned = match plan(&s, method, policy) {
                    Ok(p) => p,
                    Err(PlanError::NeedsLinear { .. }) if !linear_costs => continue,
                    Err(PlanError::NeedsTimePerItem { .. }) => continue,
                    Err(e) => panic!("{method} {policy}: {e} on {s:?}"),
                };
                let doc = planned.document(&s);
                assert_eq!(doc.method, method.name());
                assert_eq!(doc.order.last().unwrap(), s.name(s.root()));
                assert_eq!(doc.counts.iter().sum::<u64>(), s.items());
                let t = evaluate(&s, &planned.order, &planned.counts).unwrap();
                assert_eq!(doc.finish_times, t.finish_times);
                assert_eq!(doc.makespan, t.makespan);
                assert!(planned.lower_bound <= planned.makespan * (1.0 + 1e-12) + 1e-12);
                let opt = exact(&s, &planned.order).unwrap().optimum;
                assert!(planned.makespan >= opt);
                if method.is_exact() {
                    assert_eq!(planned.makespan, opt);
                }
                let json = serde_json::to_value(&doc).unwrap();
                let keys: Vec<&str> = json
                    .as_object()
                    .unwrap()
                    .keys()
                    .map(|k| k.as_str())
                    .collect();
                assert_eq!(
                    keys,
                    [
                        "counts",
                        "displacements",
                        "finish_times",
                        "lower_bound",
                        "makespan",
                        "method",
                        "order"
                    ]
                );
            }
        }
    }
}

#[test]
fn zero_items_and_a_lone_root() {
    let s = ScatterInstance::affine(
        0,
        1,
        &[(1.0, 5.0), (0.0, 0.0)],
        &[(1.0, 3.0), (1.0, 2.0)],
        StartupRule::WhenUsed,
    )
    .unwrap();
    for method in [Method::Exact, Method::NaiveDp, Method::Lp] {
        let planned = plan(&s, method, OrderPolicy::Best).unwrap();
        assert_eq!(planned.counts, vec![0, 0]);
        assert_eq!(planned.makespan, 0.0);
    }
    let always = s.with_rule(StartupRule::Always);
    let planned = plan(&always, Method::Exact, OrderPolicy::Given).unwrap();
    assert_eq!(planned.timeline.finish_times, vec![8.0, 7.0]);
    assert_eq!(planned.lower_bound, 8.0);
    let alone = ScatterInstance::linear(7, 0, &[0.0], &[2.0]).unwrap();
    for method in Method::ALL {
        let planned = plan(&alone, method, OrderPolicy::Best).unwrap();
        assert_eq!((planned.counts.clone(), planned.makespan), (vec![7], 14.0));
    }
}

// ---------------------------------------------------------------- root choice

#[test]
fn choose_root_picks_the_least_total_time() {
    let mut rng = SplitMix64::new(0x7007);
    for _ in 0..100 {
        let p = 2 + rng.below(4);
        let items = rng.below_u64(200);
        let comp: Vec<f64> = (0..p)
            .map(|_| rng.below_u64(16) as f64 / 4.0 + 0.25)
            .collect();
        // One link cost matrix; the instance rooted at r uses its row r.
        let links: Vec<Vec<f64>> = (0..p)
            .map(|r| {
                (0..p)
                    .map(|j| {
                        if r == j {
                            0.0
                        } else {
                            rng.below_u64(8) as f64 / 8.0
                        }
                    })
                    .collect()
            })
            .collect();
        let rooted = |r: usize| ScatterInstance::linear(items, r, &links[r], &comp).unwrap();
        let holder = rooted(0);
        let others: Vec<ScatterInstance> = (1..p).map(rooted).collect();
        let choice = choose_root(&holder, &others, Method::Exact, OrderPolicy::Bandwidth).unwrap();
        // Independently: move time + brute-force-checked exact makespan.
        let totals: Vec<f64> = (0..p)
            .map(|r| {
                let s = rooted(r);
                let order = bandwidth_order(&s);
                let m = exact(&s, &order).unwrap().optimum;
                links[0][r] * items as f64 + m
            })
            .collect();
        let best = totals.iter().copied().fold(f64::INFINITY, f64::min);
        assert_eq!(choice.candidates[choice.chosen].total, best);
        assert_eq!(choice.plan.makespan, best);
        assert_eq!(choice.plan.start, links[0][choice.chosen] * items as f64);
        assert_eq!(choice.plan.timeline.receive_start[0], choice.plan.start);
    }
}

#[test]
fn choose_root_rejects_mismatched_candidates() {
    let holder = ScatterInstance::linear(10, 0, &[0.0, 1.0], &[1.0, 1.0]).unwrap();
    let more_items = ScatterInstance::linear(11, 1, &[1.0, 0.0], &[1.0, 1.0]).unwrap();
    let other_speed = ScatterInstance::linear(10, 1, &[1.0, 0.0], &[2.0, 1.0]).unwrap();
    let same_root = ScatterInstance::linear(10, 0, &[0.0, 2.0], &[1.0, 1.0]).unwrap();
    let cases = [
        (
            more_items,
            "candidate root 1: (root P1) scatters 11 items, the data holder's instance 10",
        ),
        (
            other_speed,
            "candidate root 1: (root P1) gives processor \"P0\" another comp",
        ),
        (same_root, "has the data holder as its root"),
    ];
    for (candidate, message) in cases {
        let err =
            choose_root(&holder, &[candidate], Method::Exact, OrderPolicy::Given).unwrap_err();
        assert!(err.to_string().contains(message), "{err}");
    }
}

// ---------------------------------------------------------------- sizes, errors

#[test]
fn huge_item_counts_need_the_lp_and_say_so() {
    let items = 10u64.pow(15);
    let s = ScatterInstance::linear(items, 2, &[1e-9, 2e-9, 0.0], &[1e-6, 2e-6, 3e-6]).unwrap();
    let order = bandwidth_order(&s);
    let err = exact(&s, &order).unwrap_err();
    assert!(matches!(err, PlanError::TooLarge { .. }));
    assert!(err.to_string().contains("(use lp"), "{err}");
    let err = naive_dp(&s, &order).unwrap_err();
    assert!(err.to_string().contains("(use exact"), "{err}");
    let planned = plan(&s, Method::Lp, OrderPolicy::Best).unwrap();
    assert_eq!(planned.counts.iter().sum::<u64>(), items);
    assert_eq!(
        *planned.displacements.last().unwrap() + planned.counts[2],
        items
    );
    let r = planned.rational.unwrap();
    // The bound (3e-6 s above 5.5e8 s) holds up to f64 rounding of such times.
    assert!(planned.makespan <= r.bound * (1.0 + 1e-15));
    // u64::MAX items still add up exactly.
    let s = ScatterInstance::linear(u64::MAX, 1, &[1e-9, 0.0], &[1e-6, 1e-6]).unwrap();
    let planned = plan(&s, Method::Linear, OrderPolicy::Given).unwrap();
    assert_eq!(
        planned.counts.iter().map(|&c| u128::from(c)).sum::<u128>(),
        u128::from(u64::MAX)
    );
}

#[test]
fn methods_refuse_costs_they_cannot_take() {
    let spec = |comm: CostSpec, comp: CostSpec| ScatterInstanceSpec {
        items: 3,
        root: "r".into(),
        startup_rule: StartupRule::WhenUsed,
        processors: vec![
            ProcessorSpec {
                name: Some("seven".into()),
                comm,
                comp,
            },
            ProcessorSpec {
                name: Some("r".into()),
                comm: CostSpec::affine(0.0, 0.0),
                comp: CostSpec::affine(1.0, 0.0),
            },
        ],
    };
    let table = ScatterInstance::from_spec(spec(
        CostSpec::affine(1.0, 0.0),
        CostSpec::table(vec![0.0, 1.0, 2.0, 3.0]),
    ))
    .unwrap();
    let err = plan(&table, Method::Lp, OrderPolicy::Given).unwrap_err();
    assert_eq!(
        err.to_string(),
        "method lp needs affine costs: processor 0 (seven) has a comp table (use exact)"
    );
    let startup =
        ScatterInstance::from_spec(spec(CostSpec::affine(1.0, 0.5), CostSpec::affine(1.0, 0.0)))
            .unwrap();
    let err = plan(&startup, Method::Linear, OrderPolicy::Given).unwrap_err();
    assert_eq!(
        err.to_string(),
        "method linear needs linear costs (startup 0): processor 0 (seven) has comm startup 0.5 (use lp or exact)"
    );
    let free =
        ScatterInstance::from_spec(spec(CostSpec::affine(0.0, 1.0), CostSpec::affine(0.0, 1.0)))
            .unwrap();
    let err = plan(&free, Method::Lp, OrderPolicy::Given).unwrap_err();
    assert!(err
        .to_string()
        .starts_with("method lp needs a time per item on every processor: processor 0 (seven)"));
    // exact takes it: the free processor gets everything after its startups.
    assert_eq!(
        plan(&free, Method::Exact, OrderPolicy::Given)
            .unwrap()
            .makespan,
        2.0
    );
    // Bad orders and counts.
    let s = ScatterInstance::linear(3, 2, &[2.0, 4.0, 0.0], &[6.0, 8.0, 6.0]).unwrap();
    for (order, message) in [
        (vec![0, 1], "it lists 2 processors, the instance has 3"),
        (vec![0, 0, 2], "processor 0 (P0) appears twice"),
        (
            vec![2, 0, 1],
            "it must end with the root 2 (P2), not 1 (P1)",
        ),
        (vec![0, 5, 2], "processor index 5 is out of range (0 to 2)"),
    ] {
        let err = exact(&s, &order).unwrap_err();
        assert_eq!(err.to_string(), format!("invalid order: {message}"));
    }
    let err = evaluate(&s, &[0, 1, 2], &[1, 1, 2]).unwrap_err();
    assert_eq!(
        err.to_string(),
        "invalid counts: the counts add up to 4, the instance has 3 items"
    );
}

#[test]
fn invalid_instances_name_processor_cost_and_rule() {
    let p = |name: &str, comm: CostSpec, comp: CostSpec| ProcessorSpec {
        name: Some(name.into()),
        comm,
        comp,
    };
    let zero = || CostSpec::affine(0.0, 0.0);
    let one = || CostSpec::affine(1.0, 0.0);
    let check = |processors: Vec<ProcessorSpec>, root: &str, message: &str| {
        let err: InstanceError = ScatterInstance::from_spec(ScatterInstanceSpec {
            items: 5,
            root: root.into(),
            startup_rule: StartupRule::WhenUsed,
            processors,
        })
        .unwrap_err();
        assert_eq!(err.to_string(), message);
    };
    check(
        vec![],
        "r",
        "a scatter needs at least 1 processor (its root), this one has 0",
    );
    check(
        vec![p("a", one(), one()), p("a", zero(), one())],
        "a",
        "processor 1 (a): name \"a\" must be unique, processor 0 has it too",
    );
    check(
        vec![p("", zero(), one())],
        "",
        "processor 0: name \"\" must not be empty",
    );
    check(
        vec![
            p("seven", CostSpec::affine(-1.0, 0.0), one()),
            p("r", zero(), one()),
        ],
        "r",
        "processor 0 (seven): comm per_item -1 must be >= 0",
    );
    check(
        vec![
            p("seven", one(), CostSpec::affine(1.0, f64::NAN)),
            p("r", zero(), one()),
        ],
        "r",
        "processor 0 (seven): comp startup NaN must be a number >= 0",
    );
    check(
        vec![
            p("seven", CostSpec::affine(f64::INFINITY, 0.0), one()),
            p("r", zero(), one()),
        ],
        "r",
        "processor 0 (seven): comm per_item inf must be finite",
    );
    check(
        vec![
            p("x", one(), one()),
            p("y", one(), one()),
            p("z", one(), one()),
            p(
                "seven",
                one(),
                CostSpec::table(vec![0.0, 1.0, 2.0, 3.0, 4.0, 3.5]),
            ),
            p("r", zero(), one()),
        ],
        "r",
        "processor 3 (seven): comp table must be non-decreasing at 5 items (t(4) = 4 > t(5) = 3.5)",
    );
    check(
        vec![p("seven", one(), CostSpec::table(vec![0.0, 1.0])), p("r", zero(), one())],
        "r",
        "processor 0 (seven): comp table has 2 entries but items is 5: give t(0) to t(5), 6 entries",
    );
    check(
        vec![
            p(
                "seven",
                CostSpec::table(vec![0.5, 1.0, 2.0, 3.0, 4.0, 5.0]),
                one(),
            ),
            p("r", zero(), one()),
        ],
        "r",
        "processor 0 (seven): comm table t(0) 0.5 must be 0 (no items take no time)",
    );
    check(
        vec![
            p(
                "seven",
                CostSpec::table(vec![0.0, 1.0, 2.0, -3.0, 4.0, 5.0]),
                one(),
            ),
            p("r", zero(), one()),
        ],
        "r",
        "processor 0 (seven): comm table t(3) -3 must be >= 0",
    );
    check(
        vec![p("seven", CostSpec { per_item: Some(1.0), startup: None, table: Some(vec![0.0; 6]) }, one()), p("r", zero(), one())],
        "r",
        "processor 0 (seven): comm gives both `table` and `per_item`: give one of them (affine or tabulated)",
    );
    check(
        vec![p("seven", CostSpec::default(), one()), p("r", zero(), one())],
        "r",
        "processor 0 (seven): comm needs `per_item` (with an optional `startup`) or a `table` of t(0), …, t(items)",
    );
    check(
        vec![p("seven", one(), one()), p("r", zero(), one())],
        "dinadan",
        "root \"dinadan\" is not one of the processors (seven, r)",
    );
    check(
        vec![p("seven", one(), one()), p("r", CostSpec::affine(0.0, 0.25), one())],
        "r",
        "processor 1 (r): comm must be zero for the root (it keeps its share without sending it), got per_item 0, startup 0.25",
    );
}

#[test]
fn instance_documents_round_trip() {
    let mut rng = SplitMix64::new(0xd0c);
    for _ in 0..200 {
        let s = instance(&mut rng, &Shape::small());
        let json = serde_json::to_string(&s.to_spec()).unwrap();
        let back: ScatterInstanceSpec = serde_json::from_str(&json).unwrap();
        assert_eq!(ScatterInstance::from_spec(back).unwrap(), s);
    }
    // Unknown fields are refused; startup_rule defaults to when_used.
    let text = r#"{"items": 2, "root": "r", "processors": [
        {"name": "r", "comm": {"per_item": 0.0}, "comp": {"per_item": 1.0, "speed": 2}}]}"#;
    let err = serde_json::from_str::<ScatterInstanceSpec>(text).unwrap_err();
    assert!(err.to_string().contains("unknown field `speed`"), "{err}");
    let text = r#"{"items": 2, "root": "r", "processors": [
        {"name": "r", "comm": {"per_item": 0.0}, "comp": {"per_item": 1.0}}]}"#;
    let spec: ScatterInstanceSpec = serde_json::from_str(text).unwrap();
    assert_eq!(spec.startup_rule, StartupRule::WhenUsed);
}

/// Costs whose plans' times overflow f64 are refused when the instance is
/// built, and only those: every communication of all the items plus the
/// longest computation of them must be finite, computations are not added up.
#[test]
fn costs_whose_times_overflow_are_refused_and_only_those() {
    let p = 1000;
    let comm = |per_item: f64| {
        (0..p)
            .map(|i| (if i == p - 1 { 0.0 } else { per_item }, 0.0))
            .collect::<Vec<_>>()
    };
    let comp = |per_item: f64| vec![(per_item, 0.0); p];
    let rule = StartupRule::WhenUsed;
    // Each processor computes all the items in 1e306 s: finite, however many.
    let fine = ScatterInstance::affine(1000, p - 1, &comm(1e-3), &comp(1e303), rule).unwrap();
    let planned = plan(&fine, Method::Linear, OrderPolicy::Given).unwrap();
    assert!(planned.makespan.is_finite());
    // Sending all the items to each of them overflows.
    let err = ScatterInstance::affine(1000, p - 1, &comm(1e306), &comp(1.0), rule).unwrap_err();
    assert_eq!(
        err.to_string(),
        "processor 0 (P0): comm per_item 1e306 is too large: the times of a plan of all the items would overflow a 64-bit float; measure time in a larger unit, so that the costs are smaller numbers"
    );
    // One computation of all the items overflows.
    let err = ScatterInstance::affine(1000, p - 1, &comm(1e-3), &comp(1e306), rule).unwrap_err();
    assert!(
        err.to_string()
            .starts_with("processor 0 (P0): comp per_item 1e306 is too large"),
        "{err}"
    );
}
