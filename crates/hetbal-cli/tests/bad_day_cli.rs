//! Inputs that pass validation and still broke a command once: each is run
//! here, with the status and the message a user should get.

mod support;
use support::TestDir;

/// A name longer than a table's column can be padded to (65,535 characters)
/// is printed whole, in every table that shows names.
#[test]
fn a_very_long_name_is_printed_whole() {
    let dir = TestDir::new("bad-day-long-name");
    let long = "x".repeat(70_000);
    dir.write(
        "ring.json",
        format!(
            r#"{{"ring": "unidirectional", "processors": [{{"name": "{long}", "load": 2, "target": 1, "c_succ": 1}}, {{"load": 1, "target": 2, "c_succ": 1}}]}}"#
        ),
    );
    dir.write(
        "scatter.json",
        format!(
            r#"{{"items": 3, "root": "P1", "processors": [{{"name": "{long}", "comm": {{"per_item": 2.0, "startup": 0.0}}, "comp": {{"per_item": 6.0, "startup": 0.0}}}}, {{"name": "P1", "comm": {{"per_item": 0.0, "startup": 0.0}}, "comp": {{"per_item": 6.0, "startup": 0.0}}}}]}}"#
        ),
    );
    dir.write(
        "points.json",
        format!(
            r#"{{"total": 300, "processors": [{{"name": "{long}", "points": [[100, 1.0]]}}, {{"name": "slow", "points": [[100, 2.0]]}}]}}"#
        ),
    );
    for args in [
        &["ring", "plan", "ring.json"][..],
        &["ring", "balance", "ring.json", "--times", "1,2"],
        &["scatter", "plan", "scatter.json"],
        &["balance", "points.json"],
    ] {
        dir.run(args).expect_status(0).expect_stdout(&long);
    }
}

/// Planners that work a synchronous step or an item at a time refuse a ring
/// that would take them hours, at once and saying why, rather than run.
#[test]
fn a_planner_forced_on_a_ring_too_large_for_it_refuses_at_once() {
    let dir = TestDir::new("bad-day-forced-large");
    let huge = 1_000_000_000_000_000_000u64;
    dir.write(
        "ring.json",
        format!(
            r#"{{"ring": "bidirectional", "processors": [{{"load": {huge}, "target": 1, "c_succ": 1, "c_pred": 1}}, {{"load": 1, "target": 1, "c_succ": 1, "c_pred": 1}}, {{"load": 1, "target": {huge}, "c_succ": 1, "c_pred": 1}}]}}"#
        ),
    );
    dir.run(&["ring", "plan", "ring.json", "--algorithm", "bidirectional-list"])
        .expect_status(2)
        .expect_error_line("algorithm bidirectional-list does not apply: list scheduling works item by item and these flows move more than 20000000 items");
    dir.run(&["ring", "plan", "ring.json", "--algorithm", "paper-alg3"])
        .expect_status(2)
        .expect_error_line("algorithm paper-alg3 does not apply: the paper's rules take O(n^2) a synchronous step, and this ring of 3 processors needs about 1000000000000000000 steps");
    // The default planner plans it at once.
    dir.run(&["ring", "plan", "ring.json", "--json"])
        .expect_status(0)
        .expect_stdout(r#""algorithm": "bidirectional-blocks""#);
}

/// An experiment's size options are bounded, with the reason: values that
/// ran out of memory or overflowed a capacity are refused before anything
/// is drawn.
#[test]
fn experiment_sizes_past_what_a_machine_holds_are_refused() {
    let dir = TestDir::new("bad-day-experiment-sizes");
    let cases: &[(&[&str], &str)] = &[
        (
            &["experiment", "genblock", "--runs", "18446744073709551615"],
            "--runs 18446744073709551615: must be at most 100000",
        ),
        (
            &["experiment", "partition", "--items", "1000000000000"],
            "--items 1000000000000: must be at most 10000000",
        ),
        (
            &[
                "experiment",
                "partition",
                "--processors",
                "1000000000000",
                "--items",
                "10",
            ],
            "--processors 1000000000000: must be at most 1000000",
        ),
        (
            &["experiment", "partition", "--instances", "0"],
            "--instances 0: must be at least 1",
        ),
        (
            &["experiment", "startups", "--sizes", "8,1000000000"],
            "--sizes 1000000000: must be at most 1000000",
        ),
    ];
    for (args, message) in cases {
        dir.run(args).expect_status(2).expect_error_line(message);
    }
}
