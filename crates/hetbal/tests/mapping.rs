//! Mapping on a ring: every algorithm against an independent check (brute force on
//! small platforms, direct evaluation of T_step, optimality conditions).

use hetbal::mapping::{
    closed_form_shares, cycle_weight, held_karp, homogeneous_t_step, improve_cycle, item_counts,
    lin_kernighan, map, optimal_shares, ring_weights, t_step, MapOptions, MappingError, Method,
};
use hetbal::platform::{Platform, Processor};
use hetbal::random::SplitMix64;

/// A random heterogeneous complete platform: w in [0.01, 0.05] (the slides' Lyon
/// values are 0.0087 to 0.0451 s per Mflop), asymmetric c in [0.001, 0.1].
fn random_platform(rng: &mut SplitMix64, p: usize) -> Platform {
    let procs = (0..p)
        .map(|i| Processor::new(format!("P{i}"), rng.range((0.01, 0.05))))
        .collect();
    let c = (0..p)
        .map(|i| {
            (0..p)
                .map(|j| if i == j { 0.0 } else { rng.range((0.001, 0.1)) })
                .collect()
        })
        .collect();
    Platform::from_matrix(procs, c).unwrap()
}

fn homogeneous_platform(rng: &mut SplitMix64, p: usize, c: f64) -> Platform {
    let procs = (0..p)
        .map(|i| Processor::new(format!("P{i}"), rng.range((0.01, 0.05))))
        .collect();
    let m = (0..p)
        .map(|i| (0..p).map(|j| if i == j { 0.0 } else { c }).collect())
        .collect();
    Platform::from_matrix(procs, m).unwrap()
}

/// Next permutation in lexicographic order (false after the last).
fn next_permutation(v: &mut [usize]) -> bool {
    let n = v.len();
    if n < 2 {
        return false;
    }
    let mut i = n - 1;
    while i > 0 && v[i - 1] >= v[i] {
        i -= 1;
    }
    if i == 0 {
        return false;
    }
    let mut j = n - 1;
    while v[j] <= v[i - 1] {
        j -= 1;
    }
    v.swap(i - 1, j);
    v[i..].reverse();
    true
}

/// Best step time over every subset (of size `q` if given) and every ring order,
/// each ring with its best shares. Exponential: tiny platforms only.
fn brute_force(platform: &Platform, work: f64, border: f64, q: Option<usize>) -> f64 {
    let p = platform.len();
    let mut best = f64::INFINITY;
    for s in 1usize..(1 << p) {
        let members: Vec<usize> = (0..p).filter(|&i| s & (1 << i) != 0).collect();
        if q.is_some_and(|q| q != members.len()) {
            continue;
        }
        // Rings up to rotation: first member fixed, the rest permuted.
        let mut rest: Vec<usize> = members[1..].to_vec();
        loop {
            let mut ring = vec![members[0]];
            ring.extend(&rest);
            let t = optimal_shares(platform, &ring, work, border)
                .unwrap()
                .t_step;
            best = best.min(t);
            if !next_permutation(&mut rest) {
                break;
            }
        }
    }
    best
}

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() <= 1e-9 * a.abs().max(b.abs()).max(1e-300)
}

#[test]
fn closed_form_equals_direct_evaluation() {
    let mut rng = SplitMix64::new(7);
    let (mut valid, mut negative) = (0, 0);
    for _ in 0..500 {
        let p = 1 + rng.below(8);
        let platform = random_platform(&mut rng, p);
        let mut ring: Vec<usize> = (0..p).collect();
        for k in (1..p).rev() {
            ring.swap(k, rng.below(k + 1));
        }
        let border = [0.64, 0.064, 0.0064][rng.below(3)];
        match closed_form_shares(&platform, &ring, 1.0, border) {
            Ok(step) => {
                valid += 1;
                assert!(close(step.shares.iter().sum::<f64>(), 1.0));
                assert!(step.shares.iter().all(|&a| a >= 0.0));
                // Direct evaluation gives the same T, and every processor ends at T.
                let direct = t_step(&platform, &ring, &step.shares, 1.0, border).unwrap();
                assert!(close(direct, step.t_step), "{direct} vs {}", step.t_step);
                let q = ring.len();
                for k in 0..q {
                    let i = ring[k];
                    let comm = if q < 2 {
                        0.0
                    } else {
                        platform.cost(i, ring[(k + q - 1) % q])
                            + platform.cost(i, ring[(k + 1) % q])
                    };
                    let end = step.shares[k] * platform.w(i) + border * comm;
                    assert!(
                        close(end, step.t_step),
                        "P{i} ends at {end}, not {}",
                        step.t_step
                    );
                }
                // And it is the optimal shares of that ring.
                let best = optimal_shares(&platform, &ring, 1.0, border).unwrap();
                assert!(close(best.t_step, step.t_step));
            }
            Err(MappingError::NegativeShare { name, share }) => {
                negative += 1;
                assert!(share < 0.0);
                // The named processor's exchanges alone outlast every feasible step.
                let best = optimal_shares(&platform, &ring, 1.0, border).unwrap();
                let k = ring.iter().position(|&i| platform.name(i) == name).unwrap();
                assert_eq!(best.shares[k], 0.0, "{name} gets no work");
            }
            Err(e) => panic!("{e}"),
        }
    }
    // Both branches were exercised.
    assert!(
        valid > 100 && negative > 50,
        "valid {valid}, negative {negative}"
    );
}

/// Bisection on T: the smallest T with `sum_i max(0, (T - D_c comm_i)/(D_w w_i)) >= 1`
/// and `T >= D_c comm_i` for all i. Independent of the water filling.
fn bisect_step(platform: &Platform, ring: &[usize], work: f64, border: f64) -> f64 {
    let q = ring.len();
    let floor: Vec<f64> = (0..q)
        .map(|k| {
            if q < 2 {
                0.0
            } else {
                let i = ring[k];
                border
                    * (platform.cost(i, ring[(k + q - 1) % q])
                        + platform.cost(i, ring[(k + 1) % q]))
            }
        })
        .collect();
    let enough = |t: f64| {
        floor.iter().all(|&f| t >= f)
            && (0..q)
                .map(|k| ((t - floor[k]) / (work * platform.w(ring[k]))).max(0.0))
                .sum::<f64>()
                >= 1.0
    };
    let (mut lo, mut hi) = (0.0, 1.0);
    while !enough(hi) {
        hi *= 2.0;
    }
    for _ in 0..200 {
        let mid = 0.5 * (lo + hi);
        if enough(mid) {
            hi = mid;
        } else {
            lo = mid;
        }
    }
    hi
}

#[test]
fn optimal_shares_match_bisection_and_are_never_negative() {
    let mut rng = SplitMix64::new(11);
    for _ in 0..500 {
        let p = 1 + rng.below(9);
        let platform = random_platform(&mut rng, p);
        let ring: Vec<usize> = (0..p).collect();
        let border = rng.range((0.0, 1.0));
        let step = optimal_shares(&platform, &ring, 1.0, border).unwrap();
        assert!(step.shares.iter().all(|&a| a >= 0.0));
        assert!(close(step.shares.iter().sum::<f64>(), 1.0));
        let direct = t_step(&platform, &ring, &step.shares, 1.0, border).unwrap();
        assert!(close(direct, step.t_step));
        let b = bisect_step(&platform, &ring, 1.0, border);
        assert!(
            (b - step.t_step).abs() <= 1e-9 * b,
            "bisection {b} vs {}",
            step.t_step
        );
    }
}

#[test]
fn homogeneous_closed_form_equals_brute_force() {
    let mut rng = SplitMix64::new(3);
    for case in 0..300 {
        let p = 1 + rng.below(6);
        let c = rng.range((0.0, 0.2));
        let platform = homogeneous_platform(&mut rng, p, c);
        let border = [0.64, 0.064, 0.0064, 0.0][case % 4];
        let w: Vec<f64> = platform.processors().iter().map(|x| x.w).collect();
        let closed = homogeneous_t_step(&w, c, 1.0, border).unwrap();
        let brute = brute_force(&platform, 1.0, border, None);
        assert!(
            close(closed, brute),
            "p={p} c={c}: closed {closed} vs brute {brute}"
        );
        let exact = map(&platform, &MapOptions::new(1.0, border, Method::Exact)).unwrap();
        assert!(close(exact.t_step, closed));
    }
}

#[test]
fn held_karp_equals_brute_force_and_improvement_never_hurts() {
    let mut rng = SplitMix64::new(5);
    for _ in 0..200 {
        let n = 1 + rng.below(8);
        let mut d = vec![0.0; n * n];
        for i in 0..n {
            for j in i + 1..n {
                let v = rng.range((0.0, 10.0));
                d[i * n + j] = v;
                d[j * n + i] = v;
            }
        }
        let hk = held_karp(&d, n).unwrap();
        let mut sorted = hk.order.clone();
        sorted.sort_unstable();
        assert_eq!(sorted, (0..n).collect::<Vec<_>>(), "a permutation");
        assert!(close(hk.weight, cycle_weight(&d, n, &hk.order)));
        let mut rest: Vec<usize> = (1..n).collect();
        let mut brute = f64::INFINITY;
        loop {
            let mut order = vec![0];
            order.extend(&rest);
            brute = brute.min(cycle_weight(&d, n, &order));
            if !next_permutation(&mut rest) {
                break;
            }
        }
        assert!(close(hk.weight, brute), "n={n}: {} vs {brute}", hk.weight);
        // Local improvement from a random order: a permutation, never heavier, never
        // below the optimum.
        let mut order: Vec<usize> = (0..n).collect();
        for k in (1..n).rev() {
            order.swap(k, rng.below(k + 1));
        }
        let before = cycle_weight(&d, n, &order);
        let improved = improve_cycle(&d, n, order);
        let mut sorted = improved.order.clone();
        sorted.sort_unstable();
        assert_eq!(sorted, (0..n).collect::<Vec<_>>());
        assert!(improved.weight <= before + 1e-12);
        assert!(improved.weight >= brute - 1e-9);
    }
    assert!(matches!(
        held_karp(&vec![0.0; 17 * 17], 17),
        Err(MappingError::TooLargeForExact { .. })
    ));
}

#[test]
fn exact_equals_brute_force_on_small_platforms() {
    let mut rng = SplitMix64::new(13);
    let mut instances = 0;
    for case in 0..240 {
        let p = 1 + (case % 7);
        let platform = random_platform(&mut rng, p);
        let border = [0.64, 0.064, 0.0064][case % 3];
        let q = if case % 4 == 0 {
            Some(1 + rng.below(p))
        } else {
            None
        };
        let brute = brute_force(&platform, 1.0, border, q);
        let mut options = MapOptions::new(1.0, border, Method::Exact);
        options.processors = q;
        let m = map(&platform, &options).unwrap();
        assert!(
            close(m.t_step, brute),
            "case {case}, p={p}, q={q:?}: exact {} vs brute force {brute}",
            m.t_step
        );
        if let Some(q) = q {
            assert_eq!(m.ring.len(), q);
        }
        // The reported step is the direct evaluation of the reported shares.
        let direct = t_step(&platform, &m.ring, &m.shares, 1.0, border).unwrap();
        assert!(close(direct, m.t_step));
        assert!(m.shares.iter().all(|&a| a >= 0.0));
        instances += 1;
    }
    assert_eq!(instances, 240);
}

#[test]
fn heuristics_are_valid_and_close_to_exact() {
    let mut rng = SplitMix64::new(17);
    let mut gaps_greedy = Vec::new();
    let mut gaps_local = Vec::new();
    for case in 0..300 {
        let p = 2 + (case % 11); // 2 to 12
        let platform = random_platform(&mut rng, p);
        let border = [0.64, 0.064, 0.0064][case % 3];
        let exact = map(&platform, &MapOptions::new(1.0, border, Method::Exact)).unwrap();
        for (method, gaps) in [
            (Method::Greedy, &mut gaps_greedy),
            (Method::Local, &mut gaps_local),
        ] {
            let m = map(&platform, &MapOptions::new(1.0, border, method)).unwrap();
            let direct = t_step(&platform, &m.ring, &m.shares, 1.0, border).unwrap();
            assert!(close(direct, m.t_step));
            assert!(
                m.t_step >= exact.t_step * (1.0 - 1e-9),
                "{method:?} beats exact: impossible"
            );
            gaps.push(m.t_step / exact.t_step - 1.0);
        }
    }
    let stats = |g: &[f64]| {
        (
            g.iter().sum::<f64>() / g.len() as f64,
            g.iter().copied().fold(0.0, f64::max),
        )
    };
    let (gm, gw) = stats(&gaps_greedy);
    let (lm, lw) = stats(&gaps_local);
    println!("300 random platforms, p = 2..12: greedy gap mean {:.3}% worst {:.2}%; local gap mean {:.3}% worst {:.2}%",
        100.0 * gm, 100.0 * gw, 100.0 * lm, 100.0 * lw);
    assert!(lm <= 0.01, "local: mean gap {lm} above 1%");
    assert!(lw <= 0.10, "local: worst gap {lw} above 10%");
}

#[test]
fn fixed_ring_size_is_respected_by_every_method() {
    let mut rng = SplitMix64::new(19);
    for case in 0..60 {
        let p = 3 + case % 8;
        let platform = random_platform(&mut rng, p);
        let q = 1 + case % p;
        let border = [0.64, 0.064, 0.0064][case % 3];
        let exact = {
            let mut o = MapOptions::new(1.0, border, Method::Exact);
            o.processors = Some(q);
            map(&platform, &o).unwrap()
        };
        for method in [Method::Greedy, Method::Local] {
            let mut o = MapOptions::new(1.0, border, method);
            o.processors = Some(q);
            let m = map(&platform, &o).unwrap();
            assert_eq!(m.ring.len(), q, "{method:?}");
            assert!(m.t_step >= exact.t_step * (1.0 - 1e-9));
        }
    }
}

#[test]
fn item_counts_equal_brute_force() {
    let mut rng = SplitMix64::new(23);
    for case in 0..200 {
        let q = 1 + case % 4;
        let platform = random_platform(&mut rng, q);
        let ring: Vec<usize> = (0..q).collect();
        let items = 1 + rng.below_u64(12);
        let border = [0.64, 0.064, 0.0064, 0.0][case % 4];
        let (counts, t) = item_counts(&platform, &ring, 1.0, border, items).unwrap();
        assert_eq!(counts.iter().sum::<u64>(), items);
        let shares: Vec<f64> = counts.iter().map(|&n| n as f64 / items as f64).collect();
        assert!(close(
            t,
            t_step(&platform, &ring, &shares, 1.0, border).unwrap()
        ));
        // Every composition of `items` into q parts.
        let mut best = f64::INFINITY;
        let mut parts = vec![0u64; q];
        loop {
            if parts.iter().sum::<u64>() == items {
                let shares: Vec<f64> = parts.iter().map(|&n| n as f64 / items as f64).collect();
                best = best.min(t_step(&platform, &ring, &shares, 1.0, border).unwrap());
            }
            let mut k = 0;
            while k < q && parts[k] == items {
                parts[k] = 0;
                k += 1;
            }
            if k == q {
                break;
            }
            parts[k] += 1;
        }
        assert!(
            close(t, best),
            "case {case}: counts {counts:?} give {t}, best {best}"
        );
    }
}

#[test]
fn errors_name_the_problem() {
    let platform = Platform::from_matrix(
        vec![Processor::new("A", 1.0), Processor::new("B", 1.0)],
        vec![vec![0.0, 1.0], vec![1.0, 0.0]],
    )
    .unwrap();
    let err = |r: Result<_, MappingError>| {
        r.map(|_: hetbal::mapping::Mapping| ())
            .unwrap_err()
            .to_string()
    };
    assert!(err(map(&platform, &MapOptions::new(0.0, 1.0, Method::Exact))).contains("D_w = 0"));
    assert!(err(map(&platform, &MapOptions::new(1.0, -1.0, Method::Exact))).contains("D_c = -1"));
    let mut o = MapOptions::new(1.0, 1.0, Method::Local);
    o.processors = Some(3);
    assert!(err(map(&platform, &o)).contains("3 processors asked: choose from 1 to 2"));
    assert!(t_step(&platform, &[0, 0], &[0.5, 0.5], 1.0, 1.0)
        .unwrap_err()
        .to_string()
        .contains("\"A\" appears twice"));
    assert!(t_step(&platform, &[0, 5], &[0.5, 0.5], 1.0, 1.0)
        .unwrap_err()
        .to_string()
        .contains("index 5"));
    assert!(t_step(&platform, &[0, 1], &[1.0], 1.0, 1.0)
        .unwrap_err()
        .to_string()
        .contains("1 shares for a ring of 2"));
    let big = random_platform(&mut SplitMix64::new(1), 17);
    assert!(err(map(&big, &MapOptions::new(1.0, 1.0, Method::Exact))).contains("at most 16"));
    // Pairs without a route are never used; a platform with none has only rings of one.
    let cut = Platform::from_graph(
        vec![Processor::new("A", 1.0), Processor::new("B", 2.0)],
        vec![],
        vec![],
        1.0,
    )
    .unwrap();
    for method in Method::ALL {
        let m = map(&cut, &MapOptions::new(1.0, 1.0, method)).unwrap();
        assert_eq!(m.ring, vec![0]);
        let mut o = MapOptions::new(1.0, 1.0, method);
        o.processors = Some(2);
        assert!(
            err(map(&cut, &o)).contains("no ring of 2 processors"),
            "{method:?}"
        );
    }
    assert!(closed_form_shares(&cut, &[0, 1], 1.0, 1.0)
        .unwrap_err()
        .to_string()
        .contains("needs a route from"));
    // d is symmetric.
    let d = ring_weights(&random_platform(&mut SplitMix64::new(2), 5));
    for i in 0..5 {
        for j in 0..5 {
            assert_eq!(d[i * 5 + j], d[j * 5 + i]);
        }
    }
}

#[test]
fn a_thousand_processors_in_seconds() {
    let mut rng = SplitMix64::new(29);
    let platform = random_platform(&mut rng, 1000);
    for method in [Method::Greedy, Method::Local] {
        let start = std::time::Instant::now();
        let m = map(&platform, &MapOptions::new(1.0, 0.0064, method)).unwrap();
        let elapsed = start.elapsed().as_secs_f64();
        println!(
            "p = 1000, {method:?}: {} processors, T_step {:.6}, {elapsed:.2} s",
            m.ring.len(),
            m.t_step
        );
        let direct = t_step(&platform, &m.ring, &m.shares, 1.0, 0.0064).unwrap();
        assert!(close(direct, m.t_step));
    }
}

/// A graph platform: processors `w` in [0.01, 0.05], links from `bandwidths`, and the
/// route of each ordered pair chosen by `route(a, b)`.
fn graph_platform(
    rng: &mut SplitMix64,
    p: usize,
    bandwidths: &[f64],
    route: impl Fn(usize, usize) -> Vec<usize>,
) -> Platform {
    use hetbal::platform::{Link, Route, SharingPolicy};
    let procs = (0..p)
        .map(|i| Processor::new(format!("P{i}"), rng.range((0.01, 0.05))))
        .collect();
    let links = bandwidths
        .iter()
        .enumerate()
        .map(|(i, &b)| Link {
            name: format!("l{i}"),
            bandwidth: b,
            latency: 0.0,
            sharing: SharingPolicy::Shared,
        })
        .collect();
    let mut routes = Vec::new();
    for a in 0..p {
        for b in 0..p {
            if a != b {
                routes.push(Route {
                    src: a,
                    dst: b,
                    links: route(a, b),
                });
            }
        }
    }
    Platform::from_graph(procs, links, routes, 1.0).unwrap()
}

#[test]
fn shared_step_without_common_links_is_the_plain_step() {
    use hetbal::mapping::shared_step;
    let mut rng = SplitMix64::new(31);
    for _ in 0..100 {
        let p = 3 + rng.below(5);
        // One private link per ordered pair: no two ring flows meet (q >= 3).
        let bw: Vec<f64> = (0..p * p).map(|_| rng.range((10.0, 1000.0))).collect();
        let platform = graph_platform(&mut rng, p, &bw, |a, b| vec![a * p + b]);
        let ring: Vec<usize> = (0..p).collect();
        let shared = shared_step(&platform, &ring, 1.0, 0.064).unwrap();
        let plain = optimal_shares(&platform, &ring, 1.0, 0.064).unwrap();
        assert!(close(shared.t_step, plain.t_step));
    }
}

#[test]
fn shared_heuristics_are_valid_against_brute_force() {
    use hetbal::mapping::{map_shared, shared_step};
    let mut rng = SplitMix64::new(37);
    let (mut blind_gap, mut aware_gap, mut n) = (0.0, 0.0, 0);
    for case in 0..60 {
        let p = 3 + case % 3;
        // A star: each processor has an up and a down link to a central switch, and
        // routes cross a shared backbone `l0` when both ends are in different halves.
        let mut bw = vec![rng.range((1.0, 10.0))];
        for _ in 0..2 * p {
            bw.push(rng.range((1.0, 100.0)));
        }
        let half = p / 2;
        let platform = graph_platform(&mut rng, p, &bw, |a, b| {
            let mut r = vec![1 + 2 * a];
            if (a < half) != (b < half) {
                r.push(0);
            }
            r.push(2 + 2 * b);
            r
        });
        let border = [0.64, 0.064, 0.0064][case % 3];
        let both = map_shared(&platform, 1.0, border).unwrap();
        // Brute force over every subset and order under sharing.
        let mut best = f64::INFINITY;
        for s in 1usize..(1 << p) {
            let members: Vec<usize> = (0..p).filter(|&i| s & (1 << i) != 0).collect();
            let mut rest = members[1..].to_vec();
            loop {
                let mut ring = vec![members[0]];
                ring.extend(&rest);
                best = best.min(shared_step(&platform, &ring, 1.0, border).unwrap().t_step);
                if !next_permutation(&mut rest) {
                    break;
                }
            }
        }
        for m in [&both.blind, &both.aware] {
            let again = shared_step(&platform, &m.ring, 1.0, border).unwrap();
            assert!(close(again.t_step, m.t_step));
            assert!(m.t_step >= best * (1.0 - 1e-9));
        }
        blind_gap += both.blind.t_step / best - 1.0;
        aware_gap += both.aware.t_step / best - 1.0;
        n += 1;
    }
    println!(
        "shared links, {n} star platforms p = 3..5: mean gap to the optimum: blind {:.2}%, aware {:.2}%",
        100.0 * blind_gap / n as f64,
        100.0 * aware_gap / n as f64
    );
}

/// The slides' experiment (H1 blind to sharing vs H2 aware of it) on generated
/// clusters of clusters and WAN/MAN/LAN trees, at the three ratios of the slides.
/// Every mapping must be valid (re-evaluated on its routes, which must be paths of
/// the network); the figures are printed (run with --nocapture).
#[test]
fn shared_links_h1_vs_h2_on_generated_platforms() {
    use hetbal::mapping::{map_shared_with, shared_step_on, Routing};
    use hetbal::platform::generate::{clusters, tiers, ClustersOptions, TiersOptions};
    let o = TiersOptions {
        wan: 2,
        man_per_wan: 2,
        lan_per_man: 2,
        hosts_per_lan: 3,
        ..TiersOptions::default()
    };
    let draws = 5;
    for kind in ["clusters", "tiers"] {
        for ratio in [0.64, 0.064, 0.0064] {
            let (mut h1, mut fixed, mut h2, mut wins) = (0.0, 0.0, 0.0, 0);
            for seed in 0..draws {
                // Units: 1 unit of work = 1 Mflop at w s/Mflop; 1 unit of data = 1 MB.
                let platform = if kind == "tiers" {
                    tiers(seed, &o).unwrap()
                } else {
                    clusters(seed, &ClustersOptions::default()).unwrap()
                };
                let platform = platform.with_unit_bytes(1e6).unwrap();
                let both = map_shared_with(&platform, 1.0, ratio, Routing::Widest).unwrap();
                let kept = map_shared_with(&platform, 1.0, ratio, Routing::Fixed).unwrap();
                for (m, routes) in [
                    (&both.blind, &both.blind_routes),
                    (&both.aware, &both.aware_routes),
                    (&kept.aware, &kept.aware_routes),
                ] {
                    let again = shared_step_on(&platform, &m.ring, routes, 1.0, ratio).unwrap();
                    assert!(close(again.t_step, m.t_step));
                    assert!(m.shares.iter().all(|&a| a >= 0.0));
                }
                // H2 never does worse than the fastest processor alone, its first candidate.
                let w_min = platform
                    .processors()
                    .iter()
                    .map(|x| x.w)
                    .fold(f64::INFINITY, f64::min);
                assert!(both.aware.t_step <= w_min * (1.0 + 1e-12));
                h1 += both.blind.t_step;
                fixed += kept.aware.t_step;
                h2 += both.aware.t_step;
                if both.aware.t_step < both.blind.t_step * (1.0 - 1e-9) {
                    wins += 1;
                }
            }
            let n = draws as f64;
            println!(
                "{kind}, D_c/D_w = {ratio}: mean T_step/D_w H1 {:.6}, H2 fixed routes {:.6}, H2 {:.6}, gain {:.1}%, H2 better on {wins}/{draws}",
                h1 / n,
                fixed / n,
                h2 / n,
                100.0 * (1.0 - h2 / h1)
            );
        }
    }
}

/// Lin–Kernighan chains and the full local search against Held–Karp on random
/// symmetric weights (p = 5 to 12, random starting orders): never heavier than
/// the start, never below the optimum, the same nodes; the gaps are printed.
#[test]
fn lin_kernighan_against_held_karp() {
    let mut rng = SplitMix64::new(43);
    let (mut lk_sum, mut lk_worst, mut all_sum, mut all_worst) = (0.0, 0.0f64, 0.0, 0.0f64);
    let cases = 400;
    for case in 0..cases {
        let n = 5 + case % 8;
        let platform = random_platform(&mut rng, n);
        let d = ring_weights(&platform);
        let mut order: Vec<usize> = (0..n).collect();
        for k in (1..n).rev() {
            order.swap(k, rng.below(k + 1));
        }
        let start = cycle_weight(&d, n, &order);
        let optimum = held_karp(&d, n).unwrap().weight;
        for (cycle, sum, worst) in [
            (
                lin_kernighan(&d, n, order.clone()),
                &mut lk_sum,
                &mut lk_worst,
            ),
            (
                improve_cycle(&d, n, order.clone()),
                &mut all_sum,
                &mut all_worst,
            ),
        ] {
            let mut sorted = cycle.order.clone();
            sorted.sort_unstable();
            assert_eq!(sorted, (0..n).collect::<Vec<_>>());
            assert!(close(cycle.weight, cycle_weight(&d, n, &cycle.order)));
            assert!(cycle.weight <= start * (1.0 + 1e-12));
            assert!(cycle.weight >= optimum * (1.0 - 1e-9));
            let gap = cycle.weight / optimum - 1.0;
            *sum += gap;
            *worst = worst.max(gap);
        }
    }
    let n = cases as f64;
    println!(
        "{cases} random weight matrices, p = 5..12, random starts: Lin-Kernighan alone gap mean {:.3}% worst {:.2}%; 2-opt + Or-opt + LK mean {:.3}% worst {:.2}%",
        100.0 * lk_sum / n,
        100.0 * lk_worst,
        100.0 * all_sum / n,
        100.0 * all_worst
    );
    assert!(all_sum / n <= 0.01, "mean gap above 1%");
    // On a large instance: Lin-Kernighan improves on the 2-opt/Or-opt local
    // optimum it starts from (it is applied after them in improve_cycle).
    let platform = random_platform(&mut rng, 300);
    let d = ring_weights(&platform);
    let order: Vec<usize> = (0..300).collect();
    let improved = improve_cycle(&d, 300, order.clone());
    let again = lin_kernighan(&d, 300, improved.order.clone());
    assert!(again.weight <= improved.weight * (1.0 + 1e-12));
    assert!(
        lin_kernighan(&d, 300, order).weight < cycle_weight(&d, 300, &(0..300).collect::<Vec<_>>())
    );
}

/// Every simple path from `a` to `b` in a platform's network, through routers only.
fn paths(platform: &Platform, a: usize, b: usize) -> Vec<Vec<u32>> {
    let net = platform.network().unwrap();
    let p = platform.len();
    let mut out = Vec::new();
    let mut stack = vec![(a, vec![a], Vec::<u32>::new())];
    while let Some((at, nodes, links)) = stack.pop() {
        if at == b {
            out.push(links);
            continue;
        }
        if at < p && at != a {
            continue;
        }
        for (l, e) in net.ends().iter().enumerate() {
            let next = if e.from == at {
                e.to
            } else if !e.one_way && e.to == at {
                e.from
            } else {
                continue;
            };
            if nodes.contains(&next) {
                continue;
            }
            let mut n2 = nodes.clone();
            n2.push(next);
            let mut l2 = links.clone();
            l2.push(l as u32);
            stack.push((next, n2, l2));
        }
    }
    out
}

/// Two routers, every processor linked to both (and, on some platforms, the
/// routers to each other): several paths per pair. The fixed routes go through
/// the first router.
fn two_router_platform(rng: &mut SplitMix64, p: usize, bridge: bool) -> Platform {
    use hetbal::platform::{Link, LinkEnds, Route, SharingPolicy};
    let (r1, r2) = (p, p + 1);
    let mut links = Vec::new();
    let mut ends = Vec::new();
    for i in 0..p {
        for (r, name) in [(r1, "a"), (r2, "b")] {
            links.push(Link {
                name: format!("{name}{i}"),
                bandwidth: rng.range((1.0, 100.0)),
                latency: 0.0,
                sharing: SharingPolicy::Shared,
            });
            ends.push(LinkEnds::both_ways(i, r));
        }
    }
    if bridge {
        links.push(Link {
            name: "bridge".into(),
            bandwidth: rng.range((1.0, 100.0)),
            latency: 0.0,
            sharing: SharingPolicy::Shared,
        });
        ends.push(LinkEnds::both_ways(r1, r2));
    }
    let mut routes = Vec::new();
    for a in 0..p {
        for b in (0..p).filter(|&b| b != a) {
            routes.push(Route {
                src: a,
                dst: b,
                links: vec![2 * a, 2 * b],
            });
        }
    }
    let procs = (0..p)
        .map(|i| Processor::new(format!("P{i}"), rng.range((0.01, 0.05))))
        .collect();
    Platform::from_graph(procs, links, routes, 1.0)
        .unwrap()
        .with_network(vec!["R1".into(), "R2".into()], ends)
        .unwrap()
}

/// The shared-link heuristics when they choose routes, against brute force over
/// every subset, every order and every choice of path for each of the 2q
/// exchanges: both are valid (their step times are those of their rings and
/// routes, never below the optimum); the mean gaps are printed.
#[test]
fn routed_shared_heuristics_against_brute_force() {
    use hetbal::mapping::{map_shared_with, shared_step_on, Routing};
    let mut rng = SplitMix64::new(47);
    let (mut blind_gap, mut aware_gap, mut fixed_gap, mut n, mut rings) = (0.0, 0.0, 0.0, 0, 0);
    for case in 0..36 {
        let (p, bridge) = if case % 2 == 0 { (4, false) } else { (3, true) };
        let platform = two_router_platform(&mut rng, p, bridge);
        let border = [0.064, 0.0064, 0.00064][case % 3];
        let mut best = (0..p).map(|i| platform.w(i)).fold(f64::INFINITY, f64::min);
        let all: Vec<Vec<Vec<Vec<u32>>>> = (0..p)
            .map(|a| {
                (0..p)
                    .map(|b| {
                        if a == b {
                            Vec::new()
                        } else {
                            paths(&platform, a, b)
                        }
                    })
                    .collect()
            })
            .collect();
        for s in 1usize..(1 << p) {
            let members: Vec<usize> = (0..p).filter(|&i| s & (1 << i) != 0).collect();
            if members.len() < 2 {
                continue;
            }
            let mut rest = members[1..].to_vec();
            loop {
                let mut ring = vec![members[0]];
                ring.extend(&rest);
                let q = ring.len();
                // The 2q flows (to predecessor, to successor) and their path choices.
                let flows: Vec<(usize, usize)> = (0..q)
                    .flat_map(|k| {
                        [
                            (ring[k], ring[(k + q - 1) % q]),
                            (ring[k], ring[(k + 1) % q]),
                        ]
                    })
                    .collect();
                let mut pick = vec![0usize; flows.len()];
                loop {
                    let routes: Vec<(Vec<u32>, Vec<u32>)> = (0..q)
                        .map(|k| {
                            let (f0, f1) = (flows[2 * k], flows[2 * k + 1]);
                            (
                                all[f0.0][f0.1][pick[2 * k]].clone(),
                                all[f1.0][f1.1][pick[2 * k + 1]].clone(),
                            )
                        })
                        .collect();
                    let t = shared_step_on(&platform, &ring, &routes, 1.0, border)
                        .unwrap()
                        .t_step;
                    best = best.min(t);
                    let mut k = 0;
                    while k < pick.len() {
                        pick[k] += 1;
                        if pick[k] < all[flows[k].0][flows[k].1].len() {
                            break;
                        }
                        pick[k] = 0;
                        k += 1;
                    }
                    if k == pick.len() {
                        break;
                    }
                }
                if !next_permutation(&mut rest) {
                    break;
                }
            }
        }
        let widest = map_shared_with(&platform, 1.0, border, Routing::Widest).unwrap();
        let fixed = map_shared_with(&platform, 1.0, border, Routing::Fixed).unwrap();
        for (m, routes) in [
            (&widest.blind, &widest.blind_routes),
            (&widest.aware, &widest.aware_routes),
            (&fixed.aware, &fixed.aware_routes),
        ] {
            let again = shared_step_on(&platform, &m.ring, routes, 1.0, border).unwrap();
            assert!(close(again.t_step, m.t_step));
            assert!(
                m.t_step >= best * (1.0 - 1e-9),
                "case {case}: {} < {best}",
                m.t_step
            );
        }
        blind_gap += widest.blind.t_step / best - 1.0;
        aware_gap += widest.aware.t_step / best - 1.0;
        fixed_gap += fixed.aware.t_step / best - 1.0;
        n += 1;
        if best < (0..p).map(|i| platform.w(i)).fold(f64::INFINITY, f64::min) * (1.0 - 1e-9) {
            rings += 1;
        }
    }
    println!("{rings} of {n} optima are rings of 2 processors or more");
    assert!(rings >= 12, "too few cases where a ring pays: {rings}");
    let n = n as f64;
    println!(
        "routes chosen, 36 two-router platforms p = 3..4: mean gap to the optimum over subsets, orders and paths: H1 {:.2}%, H2 on fixed routes {:.2}%, H2 routed {:.2}%",
        100.0 * blind_gap / n,
        100.0 * fixed_gap / n,
        100.0 * aware_gap / n
    );
}

#[test]
fn routes_given_for_a_ring_are_checked() {
    use hetbal::mapping::{fixed_routes, shared_ring_costs, shared_ring_costs_on, Routing};
    let mut rng = SplitMix64::new(53);
    let platform = two_router_platform(&mut rng, 3, false);
    let ring = [0, 1, 2];
    let fixed = fixed_routes(&platform, &ring).unwrap();
    assert_eq!(
        shared_ring_costs_on(&platform, &ring, &fixed).unwrap(),
        shared_ring_costs(&platform, &ring).unwrap()
    );
    let err = |routes: &[(Vec<u32>, Vec<u32>)]| {
        shared_ring_costs_on(&platform, &ring, routes)
            .unwrap_err()
            .to_string()
    };
    assert!(err(&fixed[..2]).contains("2 route pairs for a ring of 3"));
    let mut wrong = fixed.clone();
    wrong[0].1 = vec![0, 5]; // P0 -> R1 -> P2 is not the way to P1
    assert!(err(&wrong).contains("from \"P0\" to \"P1\" is not a path"));
    // Without a network, routes cannot be chosen.
    let plain = random_platform(&mut rng, 3);
    assert!(matches!(
        hetbal::mapping::map_shared_with(&plain, 1.0, 1.0, Routing::Widest),
        Err(MappingError::NoNetwork)
    ));
    // A ring of one exchanges nothing, whatever the routes.
    assert_eq!(
        shared_ring_costs_on(&platform, &[1], &[]).unwrap(),
        vec![(0.0, 0.0)]
    );
}
