//! GEN_BLOCK redistribution scheduling, checked independently:
//!
//! - every schedule (plain colouring, `paper`, `best` at several startups, every
//!   point of the trade-off) goes through the independent checker of
//!   `support/genblock_check.rs` (each step a non-empty matching, each pair's sizes
//!   adding up to the overlap of the blocks computed by interval intersection,
//!   cost summed step by step) and through the library's own checker;
//! - `paper` has exactly `Delta` steps; `best` is never worse than `paper`, never
//!   below the lower bound, and meets it when startups are free;
//! - on tiny instances, brute force over every step-length vector and every
//!   assignment (`support/genblock_brute.rs`) gives the cheapest schedule in
//!   `Delta` steps: neither method beats it, and `best` reaches it;
//! - property tests on random instances with different source and target
//!   processor counts (proptest), larger ones from the deterministic generator;
//! - the checkers reject corrupted schedules; validation messages; u64 limits.

#[path = "support/genblock_brute.rs"]
mod genblock_brute;
#[path = "support/genblock_check.rs"]
mod genblock_check;

use hetbal::genblock::{
    best_schedule, check_schedule, lower_bound, paper_schedule, plain_colouring, plan,
    redistribution_graph, selection, tradeoff, GenBlockInstance, GenBlockInstanceSpec,
    InstanceError, Message, Method, ScheduleViolation, SearchOptions, StepSchedule,
};
use hetbal::random::SplitMix64;
use proptest::prelude::*;

/// A schedule as the independent checker reads it.
fn triples(schedule: &StepSchedule) -> Vec<Vec<(usize, usize, u64)>> {
    schedule
        .steps
        .iter()
        .map(|step| step.iter().map(|m| (m.from, m.to, m.size)).collect())
        .collect()
}

/// Relative closeness of two costs summed in different orders.
fn close(a: f64, b: f64) -> bool {
    (a - b).abs() <= 1e-9 * a.abs().max(b.abs()).max(1.0)
}

/// Startups tried on every instance: free, small, about a message, huge.
const STARTUPS: [f64; 4] = [0.0, 0.5, 7.0, 1e6];

/// Checks everything the library computes for one instance; returns
/// `(delta, paper volume, best volume at Tu = 1e6)` for the callers' statistics.
fn check_instance(source: &[u64], target: &[u64]) -> (usize, u128, u128) {
    let instance = GenBlockInstance::new(source, target, 0.0, 1.0).expect("valid instance");
    let graph = redistribution_graph(&instance);
    let delta = genblock_check::degree(source, target);
    assert_eq!(graph.degree, delta, "Delta of {source:?} -> {target:?}");
    let story = |what: &str, s: &StepSchedule| format!("{what} of {source:?} -> {target:?}: {s:?}");

    // The plain colouring and the paper's method: exactly Delta steps.
    let plain = plain_colouring(&graph);
    genblock_check::check(source, target, &triples(&plain), 0.0, 1.0, Some(delta))
        .unwrap_or_else(|e| panic!("{e}: {}", story("plain colouring", &plain)));
    let paper = paper_schedule(&graph);
    let checked = genblock_check::check(
        source,
        target,
        &triples(&paper.schedule),
        0.0,
        1.0,
        Some(delta),
    )
    .unwrap_or_else(|e| panic!("{e}: {}", story("paper", &paper.schedule)));
    assert!(check_schedule(&graph, &paper.schedule).is_ok());
    // (The paper's schedule can be worse than the plain colouring: its dummy
    // edges shift the round-robin colours; see paper_can_lose_to_plain_colouring.)
    assert!(
        paper.bound <= checked.volume,
        "the paper's B exceeds its Ta"
    );
    assert!(checked.volume >= u128::from(graph.largest_block));
    assert_eq!(paper.copies, selection(&graph, delta));

    // The trade-off: every point's schedule valid, with the claimed steps and
    // volume; steps increasing, volumes decreasing down to the largest block.
    let t = tradeoff(&graph, &SearchOptions::default());
    if delta > 0 {
        assert_eq!(t.points[0].steps, delta);
        assert!(t.points[0].volume <= checked.volume);
        assert_eq!(
            t.points.last().unwrap().volume,
            u128::from(graph.largest_block)
        );
    }
    for (i, point) in t.points.iter().enumerate() {
        let s = t.schedule(&graph, i);
        let c = genblock_check::check(source, target, &triples(&s), 0.0, 1.0, None)
            .unwrap_or_else(|e| panic!("{e}: {}", story("trade-off point", &s)));
        assert_eq!(
            (c.steps, c.volume),
            (point.steps, point.volume),
            "{}",
            story("point", &s)
        );
        if i > 0 {
            assert!(point.steps > t.points[i - 1].steps && point.volume < t.points[i - 1].volume);
        }
    }

    // best, at every startup: valid, never worse than paper, never below the bound.
    let mut at_huge = 0;
    for startup in STARTUPS {
        let (best, _) = best_schedule(&graph, startup, 1.0, &SearchOptions::default());
        let c = genblock_check::check(source, target, &triples(&best), startup, 1.0, None)
            .unwrap_or_else(|e| panic!("{e}: {}", story("best", &best)));
        assert!(check_schedule(&graph, &best).is_ok());
        assert!(close(c.cost, best.cost(startup, 1.0)), "cost of best");
        let paper_cost = genblock_check::check(
            source,
            target,
            &triples(&paper.schedule),
            startup,
            1.0,
            None,
        )
        .unwrap()
        .cost;
        assert!(
            c.cost <= paper_cost * (1.0 + 1e-12),
            "best {} > paper {paper_cost} at Tu = {startup}: {}",
            c.cost,
            story("best", &best)
        );
        assert!(c.cost >= c.lower_bound * (1.0 - 1e-12), "below the bound");
        assert!(close(c.lower_bound, lower_bound(&graph, startup, 1.0)));
        if startup == 0.0 {
            assert_eq!(
                c.volume,
                u128::from(graph.largest_block),
                "free startups: the bound"
            );
        }
        if startup == 1e6 {
            // Startups dominate: exactly Delta steps.
            assert_eq!(c.steps, delta);
            at_huge = c.volume;
        }
    }
    (delta, checked.volume, at_huge)
}

/// A random composition of `total` into `parts` blocks, zeros allowed.
fn composition(rng: &mut SplitMix64, total: u64, parts: usize) -> Vec<u64> {
    let mut cuts: Vec<u64> = (0..parts - 1).map(|_| rng.below_u64(total + 1)).collect();
    cuts.sort_unstable();
    let mut blocks = Vec::with_capacity(parts);
    let mut previous = 0;
    for c in cuts {
        blocks.push(c - previous);
        previous = c;
    }
    blocks.push(total - previous);
    blocks
}

#[test]
fn formats_example_is_planned_and_checked() {
    let source = [7, 16, 11, 10, 7, 49];
    let target = [15, 16, 10, 16, 15, 28];
    let (delta, paper, _) = check_instance(&source, &target);
    assert_eq!(delta, 3);
    let g = GenBlockInstance::new(&source, &target, 0.0, 1.0).unwrap();
    let p = plan(&g, Method::Paper);
    assert_eq!((p.degree, p.schedule.len()), (3, 3));
    assert_eq!(p.schedule.volume(), paper);
    let b = plan(&g, Method::Best);
    assert_eq!((b.cost, b.lower_bound), (49.0, 49.0));
    // The document has exactly the four fields of formats.md.
    let json = serde_json::to_value(b.document()).unwrap();
    let mut keys: Vec<&String> = json.as_object().unwrap().keys().collect();
    keys.sort();
    assert_eq!(keys, ["cost", "degree", "lower_bound", "steps"]);
    assert_eq!(json["steps"][0][0].as_object().unwrap().len(), 3);
}

/// The paper's Partition on a hand-made case, values computed by hand.
///
/// ```text
///  array  0         10   14   20
///  source | S0 (10) |S1 4| S2 6|      S1 = [10,14) sends 4 to T0
///  target | T0 (14)      | T1 6|      T0 receives 10 and 4: degree 2 = Delta
/// ```
/// Delta = 2 (T0). Messages: (0,0,10), (1,0,4), (2,1,6). (2,1) has free ends: it
/// gets a dummy; the others touch T0. Colours: (0,0) 0, (1,0) 1, (2,1) 0 and 1.
/// C = [10, 4]; w = 6 <= 14: fill step 0 with 6. Volume 10 + 4 = 14; the plain
/// colouring is 10 + 4 too ((2,1) goes in step 0 with (0,0)).
#[test]
fn partition_by_hand() {
    let g = GenBlockInstance::new(&[10, 4, 6], &[14, 6], 0.0, 1.0).unwrap();
    let graph = redistribution_graph(&g);
    let paper = paper_schedule(&graph);
    assert_eq!(paper.copies, vec![1, 1, 2]);
    assert_eq!(paper.colours, vec![0, 1, 0]);
    let m = |from, to, size| Message { from, to, size };
    assert_eq!(
        paper.schedule.steps,
        vec![vec![m(0, 0, 10), m(2, 1, 6)], vec![m(1, 0, 4)]]
    );
    assert_eq!(paper.bound, 14);

    // When the split message exceeds what its steps hold, the excess is shared
    // in integers: S2 = 27 > 10 + 4, excess 13 over 2 pieces = 7 + 6.
    let g = GenBlockInstance::new(&[10, 4, 27], &[14, 27], 0.0, 1.0).unwrap();
    let paper = paper_schedule(&redistribution_graph(&g));
    assert_eq!(
        paper.schedule.steps,
        vec![
            vec![m(0, 0, 10), m(2, 1, 17)],
            vec![m(1, 0, 4), m(2, 1, 10)]
        ]
    );
    assert_eq!(paper.schedule.volume(), 27);
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(400))]

    /// Random instances, different source and target counts, zeros allowed.
    #[test]
    fn random_instances_are_valid_and_best_beats_paper(
        source in prop::collection::vec(0u64..40, 1..14),
        cuts in prop::collection::vec(0u64..1000, 0..14),
    ) {
        let total: u64 = source.iter().sum();
        // Target blocks: the array cut at the given points (scaled into it).
        let mut points: Vec<u64> = cuts.iter().map(|&c| if total == 0 { 0 } else { c % (total + 1) }).collect();
        points.sort_unstable();
        let mut target = Vec::new();
        let mut previous = 0;
        for p in points { target.push(p - previous); previous = p; }
        target.push(total - previous);
        check_instance(&source, &target);
    }
}

/// Larger instances from the deterministic generator: P and Q from 1 to 100
/// (different), block sizes from a few to thousands, zeros now and then.
#[test]
fn larger_random_instances() {
    let mut rng = SplitMix64::new(0x6e6e_b10c_5eed_0001);
    let mut count = 0;
    let (mut paper_sum, mut best_sum) = (0u128, 0u128);
    for _ in 0..30 {
        let p = 1 + rng.below(100);
        let q = 1 + rng.below(100);
        let scale = 1 + rng.below_u64(2000);
        let source: Vec<u64> = (0..p).map(|_| rng.below_u64(scale + 1)).collect();
        let total: u64 = source.iter().sum();
        let target = composition(&mut rng, total, q);
        let (_, paper, best) = check_instance(&source, &target);
        paper_sum += paper;
        best_sum += best;
        count += 1;
    }
    assert_eq!(count, 30);
    // In Delta steps, best's volume is well below the paper's on these.
    assert!(
        best_sum * 100 < paper_sum * 95,
        "best {best_sum} paper {paper_sum}"
    );
}

/// Regression: coordinate descent on the step lengths stopped at 16 (7 + 2 + 7);
/// lowering one step while lengthening another reaches the optimum, 15.
#[test]
fn pair_moves_reach_the_optimum() {
    let g = GenBlockInstance::new(&[9, 8, 7, 8, 7], &[15, 1, 13, 5, 5], 0.0, 1.0).unwrap();
    let graph = redistribution_graph(&g);
    let t = tradeoff(&graph, &SearchOptions::default());
    assert_eq!((t.points[0].steps, t.points[0].volume), (3, 15));
    assert_eq!(
        genblock_brute::best_in_delta_steps(&[9, 8, 7, 8, 7], &[15, 1, 13, 5, 5], 3).0,
        15
    );
}

/// Brute force on tiny instances: the cheapest schedule in exactly Delta steps.
/// Neither method beats it; best (with startups so high that Delta steps win)
/// reaches it on every instance, the paper's method on fewer.
#[test]
fn brute_force_best_in_delta_steps() {
    let mut rng = SplitMix64::new(0x00b2_07ef_02ce);
    let (mut instances, mut paper_optimal) = (0, 0);
    let mut misses = Vec::new();
    while instances < 400 {
        let p = 1 + rng.below(5);
        let q = 1 + rng.below(5);
        let source: Vec<u64> = (0..p).map(|_| 1 + rng.below_u64(9)).collect();
        let total: u64 = source.iter().sum();
        let target = composition(&mut rng, total, q);
        let delta = genblock_check::degree(&source, &target);
        if delta > 4 {
            continue;
        }
        instances += 1;
        let (optimum, steps) = genblock_brute::best_in_delta_steps(&source, &target, delta);
        // The brute force's own schedule is valid and has the volume it claims.
        let c = genblock_check::check(&source, &target, &steps, 0.0, 1.0, Some(delta))
            .unwrap_or_else(|e| panic!("brute force schedule: {e}: {source:?} {target:?}"));
        assert_eq!(c.volume, u128::from(optimum));
        let (_, paper, best) = check_instance(&source, &target);
        assert!(paper >= u128::from(optimum) && best >= u128::from(optimum));
        if best != u128::from(optimum) {
            misses.push(format!(
                "{source:?} -> {target:?}: optimum {optimum}, best {best}"
            ));
        }
        paper_optimal += usize::from(paper == u128::from(optimum));
    }
    assert!(
        misses.is_empty(),
        "best missed the optimum in Delta steps on {} of {instances}:\n{}",
        misses.len(),
        misses.join("\n")
    );
    eprintln!(
        "brute force: {instances} instances, paper optimal on {paper_optimal}, best on {}",
        instances - misses.len()
    );
    assert!(
        paper_optimal < instances,
        "the paper's method is not always optimal"
    );
}

/// Regression: the paper's Selection can make things worse than no partition at
/// all. Its dummy edge on (S3,T1) shifts the round-robin colours of the messages
/// after it, and the plain colouring happened to align them better.
#[test]
fn paper_can_lose_to_plain_colouring() {
    let g = GenBlockInstance::new(&[1, 7, 5, 7], &[11, 6, 3], 0.0, 1.0).unwrap();
    let graph = redistribution_graph(&g);
    assert_eq!(plain_colouring(&graph).volume(), 12); // 2 + 7 + 3
    assert_eq!(paper_schedule(&graph).schedule.volume(), 13); // 3 + 7 + 3
    let (best, _) = best_schedule(&graph, 1e6, 1.0, &SearchOptions::default());
    // best in 3 steps: 1 + 7 + 3 = 11, the optimum in Delta steps (brute force).
    assert_eq!((best.len(), best.volume()), (3, 11));
}

/// A schedule that breaks one rule at a time is rejected by both checkers.
#[test]
fn corrupted_schedules_are_rejected() {
    let source = [7, 16, 11, 10, 7, 49];
    let target = [15, 16, 10, 16, 15, 28];
    let g = GenBlockInstance::new(&source, &target, 0.0, 1.0).unwrap();
    let graph = redistribution_graph(&g);
    let good = plan(&g, Method::Paper).schedule;
    let m = |from, to, size| Message { from, to, size };
    let mut cases: Vec<(StepSchedule, &str)> = Vec::new();
    // Move a message of S5 (three messages, Delta = 3) to a step where S5 sends.
    let mut twice = good.clone();
    let (c, k) = (0..twice.len())
        .flat_map(|c| (0..twice.steps[c].len()).map(move |k| (c, k)))
        .find(|&(c, k)| twice.steps[c][k].from == 5 && c > 0)
        .unwrap();
    let moved = twice.steps[c].remove(k);
    let dest = (0..twice.len())
        .find(|&d| d != c && twice.steps[d].iter().any(|x| x.from == 5))
        .unwrap();
    twice.steps[dest].push(moved);
    cases.push((twice, "sends twice"));
    let mut short = good.clone();
    short.steps[0][0].size -= 1;
    cases.push((short, "overlap"));
    let mut extra = good.clone();
    extra.steps.push(vec![m(0, 5, 1)]);
    cases.push((extra, "do not overlap"));
    let mut empty = good.clone();
    empty.steps.push(Vec::new());
    cases.push((empty, "empty"));
    let mut zero = good.clone();
    zero.steps[0].push(m(4, 0, 0));
    cases.push((zero, "size 0"));
    let mut outside = good.clone();
    outside.steps[0].push(m(9, 0, 1));
    cases.push((outside, "out of range"));
    for (schedule, rule) in cases {
        let independent =
            genblock_check::check(&source, &target, &triples(&schedule), 0.0, 1.0, None);
        assert!(
            independent.is_err(),
            "independent checker accepted ({rule})"
        );
        assert!(
            independent.unwrap_err().contains(rule),
            "independent checker: wrong reason for {rule}"
        );
        assert!(
            check_schedule(&graph, &schedule).is_err(),
            "library checker accepted ({rule})"
        );
    }
    // The library names the rule and the place.
    let mut twice = good.clone();
    let first = twice.steps[0][0];
    twice.steps[0].push(Message {
        to: first.to + 1,
        size: 1,
        ..first
    });
    let errors = check_schedule(&graph, &twice).unwrap_err();
    assert!(errors.contains(&ScheduleViolation::SendsTwice {
        step: 0,
        from: first.from
    }));
    assert_eq!(
        ScheduleViolation::WrongTotal {
            from: 1,
            to: 2,
            expected: 3,
            sent: 4
        }
        .to_string(),
        "pair 1 -> 2: the steps send 4 elements but the blocks overlap on 3"
    );
    // Exactly Delta steps is the independent checker's rule for paper.
    let mut more = good.clone();
    let last = more.steps[0].pop().unwrap();
    more.steps.push(vec![last]);
    assert!(genblock_check::check(&source, &target, &triples(&more), 0.0, 1.0, None).is_ok());
    assert!(genblock_check::check(&source, &target, &triples(&more), 0.0, 1.0, Some(3)).is_err());
}

#[test]
fn validation_messages_name_the_field() {
    let spec = |source: Vec<u64>, target: Vec<u64>, startup: f64, unit: f64| GenBlockInstanceSpec {
        source,
        target,
        startup,
        unit,
    };
    let cases = [
        (
            spec(vec![], vec![1], 0.0, 1.0),
            "source: the distribution has no block",
        ),
        (
            spec(vec![1], vec![], 0.0, 1.0),
            "target: the distribution has no block",
        ),
        (
            spec(vec![1], vec![1], -1.0, 1.0),
            "startup: -1 must be finite and >= 0",
        ),
        (
            spec(vec![1], vec![1], f64::NAN, 1.0),
            "startup: NaN must be finite and >= 0",
        ),
        (
            spec(vec![1], vec![1], 0.0, 0.0),
            "unit: 0 must be finite and > 0",
        ),
        (
            spec(vec![1], vec![1], 0.0, f64::INFINITY),
            "unit: inf must be finite and > 0",
        ),
        (
            spec(vec![3, 4], vec![2, 3], 0.0, 1.0),
            "source blocks add up to 7 elements but target blocks to 5",
        ),
        (
            spec(vec![u64::MAX, 1], vec![u64::MAX, 1], 0.0, 1.0),
            "the blocks add up to 18446744073709551616 elements, more than a u64 can count",
        ),
    ];
    for (spec, message) in cases {
        let err = GenBlockInstance::from_spec(spec).unwrap_err();
        assert!(err.to_string().contains(message), "{err} lacks {message:?}");
    }
    assert!(matches!(
        GenBlockInstance::new(&[1], &[2], 0.0, 1.0),
        Err(InstanceError::SumsDiffer {
            source_sum: 1,
            target_sum: 2
        })
    ));
}

/// Sizes near u64::MAX: no overflow anywhere, exact volumes.
#[test]
fn huge_blocks_do_not_overflow() {
    let big = u64::MAX - 10;
    check_instance(&[big, 10], &[10, big]);
    check_instance(&[big / 2, big / 2 + 1, 10], &[10, big / 3, big - big / 3]);
    let g = GenBlockInstance::new(&[big, 10], &[10, big], 1.0, 1.0).unwrap();
    let p = plan(&g, Method::Best);
    assert_eq!(p.schedule.volume(), u128::from(big));
}

/// Degenerate shapes: one processor on a side, empty blocks, an empty array.
#[test]
fn degenerate_instances() {
    let (delta, _, _) = check_instance(&[12], &[3, 0, 4, 5]);
    assert_eq!(delta, 3); // the one source sends three messages
    check_instance(&[0, 5, 0, 0, 7, 0], &[12]);
    check_instance(&[1; 20], &[20]);
    check_instance(&[4, 4, 4], &[4, 4, 4]); // identical: Delta = 1
    let g = GenBlockInstance::new(&[0, 0], &[0], 2.0, 1.0).unwrap();
    let p = plan(&g, Method::Best);
    assert!(p.schedule.is_empty());
    assert_eq!((p.cost, p.lower_bound, p.degree), (0.0, 0.0, 0));
    assert!(plan(&g, Method::Paper).schedule.is_empty());
}

/// best's choice of the number of steps: more steps when startups are cheap,
/// exactly Delta when they are dear, and every choice the least cost on its
/// trade-off.
#[test]
fn best_chooses_the_number_of_steps() {
    let mut rng = SplitMix64::new(77);
    for _ in 0..30 {
        let source: Vec<u64> = (0..32).map(|_| 1 + rng.below_u64(200)).collect();
        let total = source.iter().sum();
        let target = composition(&mut rng, total, 32);
        let g = GenBlockInstance::new(&source, &target, 0.0, 1.0).unwrap();
        let graph = redistribution_graph(&g);
        let delta = graph.degree;
        let mut previous_steps = usize::MAX;
        for startup in [0.0, 2.0, 10.0, 50.0, 1e9] {
            let (best, t) = best_schedule(&graph, startup, 1.0, &SearchOptions::default());
            // The trade-off's cheapest point is never cheaper than the schedule.
            let cheapest = t
                .points
                .iter()
                .map(|p| startup * p.steps as f64 + p.volume as f64)
                .fold(f64::INFINITY, f64::min);
            assert!(best.cost(startup, 1.0) <= cheapest * (1.0 + 1e-12));
            assert!(
                best.len() <= previous_steps,
                "more startups cost, more steps chosen"
            );
            previous_steps = best.len();
            if startup == 1e9 {
                assert_eq!(best.len(), delta);
            }
        }
    }
}
