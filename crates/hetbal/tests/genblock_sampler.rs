//! `BlockListSampler` claims every list of `P` block sizes in `[1, U]` adding up to
//! `N` is equally likely. Checked against an independent enumeration: on tiny
//! `(P, N, U)` every list is listed by brute force (nested counting over all
//! `U^P` size vectors), many lists are drawn, and the counts must fit the uniform
//! distribution (Pearson's chi-square far below what a biased sampler gives, no
//! list drawn outside the enumeration, every list drawn).

use std::collections::HashMap;

use hetbal::genblock::{BlockListSampler, NoBlockList};
use hetbal::random::SplitMix64;

/// Every list of `p` sizes in `[1, u]` adding up to `n`, by brute force over all
/// `u^p` vectors.
fn all_lists(p: usize, n: u64, u: u64) -> Vec<Vec<u64>> {
    let mut out = Vec::new();
    let mut sizes = vec![1u64; p];
    loop {
        if sizes.iter().sum::<u64>() == n {
            out.push(sizes.clone());
        }
        // Next vector, as an odometer with digits 1..=u.
        let mut k = 0;
        while k < p && sizes[k] == u {
            sizes[k] = 1;
            k += 1;
        }
        if k == p {
            return out;
        }
        sizes[k] += 1;
    }
}

/// Calls `draw` `per_list` times per list of `p` sizes in `[1, u]` adding up to
/// `n`, checks that every list drawn is one of them and that each is drawn, and
/// returns Pearson's chi-square of the counts against the uniform distribution
/// with its limit: the degrees of freedom plus 6 standard deviations (a uniform
/// sampler exceeds it with a probability below 1e-6).
fn chi_square(
    p: usize,
    n: u64,
    u: u64,
    per_list: usize,
    mut draw: impl FnMut() -> Vec<u64>,
) -> (f64, f64) {
    let lists = all_lists(p, n, u);
    let mut counts: HashMap<Vec<u64>, usize> = lists.iter().map(|l| (l.clone(), 0)).collect();
    for _ in 0..per_list * lists.len() {
        let list = draw();
        match counts.get_mut(&list) {
            Some(c) => *c += 1,
            None => panic!("drew {list:?}, not a list of {p} sizes in [1, {u}] adding up to {n}"),
        }
    }
    let expected = per_list as f64;
    let stat = counts
        .values()
        .map(|&c| {
            assert!(c > 0, "a list was never drawn");
            (c as f64 - expected).powi(2) / expected
        })
        .sum();
    let df = (lists.len() - 1).max(1) as f64;
    (stat, df + 6.0 * (2.0 * df).sqrt())
}

#[test]
fn draws_are_uniform_over_all_lists() {
    for (p, n, u) in [
        (1, 3, 5),
        (2, 6, 4),
        (3, 7, 4),
        (4, 10, 4),
        (5, 9, 3),
        (3, 30, 20),
        (6, 14, 4),
    ] {
        let sampler = BlockListSampler::new(p, n as usize, u as usize).expect("lists exist");
        let mut rng = SplitMix64::new(17 + n);
        let (stat, limit) = chi_square(p, n, u, 400, || sampler.draw(&mut rng));
        assert!(
            stat < limit,
            "(P, N, U) = ({p}, {n}, {u}): chi-square {stat:.1}, limit {limit:.1}"
        );
    }
}

#[test]
fn a_naive_sampler_fails_the_same_check() {
    // The check has power: drawing each size uniformly among the sizes that leave
    // the rest feasible is not uniform over lists, and the statistic shows it.
    let (p, n, u) = (3usize, 7u64, 4u64);
    let mut rng = SplitMix64::new(5);
    let naive = || {
        let mut left = n;
        let mut list = Vec::new();
        for r in (1..=p as u64).rev() {
            let lo = left.saturating_sub((r - 1) * u).max(1);
            let hi = (left - (r - 1)).min(u);
            let v = lo + rng.below_u64(hi - lo + 1);
            list.push(v);
            left -= v;
        }
        list
    };
    let (stat, limit) = chi_square(p, n, u, 400, naive);
    assert!(stat > limit, "chi-square {stat:.1}, limit {limit:.1}");
}

#[test]
fn draws_fit_the_bounds_on_the_papers_sizes() {
    for (p, n, u) in [
        (32, 3200, 200),
        (32, 3200, 1600),
        (128, 3200, 50),
        (3, 3, 1),
    ] {
        let sampler = BlockListSampler::new(p, n, u).unwrap();
        let mut rng = SplitMix64::new(1);
        for _ in 0..100 {
            let blocks = sampler.draw(&mut rng);
            assert_eq!(blocks.len(), p);
            assert_eq!(blocks.iter().sum::<u64>(), n as u64);
            assert!(
                blocks.iter().all(|&b| (1..=u as u64).contains(&b)),
                "{blocks:?}"
            );
        }
    }
}

#[test]
fn impossible_bounds_are_refused_with_the_reason() {
    for (p, n, u) in [(128, 100, 50), (2, 200, 50), (0, 0, 1), (3, 3, 0)] {
        let error = BlockListSampler::new(p, n, u).unwrap_err();
        assert_eq!(
            error,
            NoBlockList {
                blocks: p,
                elements: n,
                largest: u
            }
        );
    }
    assert_eq!(
        BlockListSampler::new(2, 200, 50).unwrap_err().to_string(),
        "no block list of 2 sizes in [1, 50] adds up to 200: it takes between 2 and 100 elements"
    );
}
