//! Inputs that pass validation and still broke a command once: each is run
//! here, with the status and the message a user should get.

mod support;
use support::{npy_file as npy, TestDir};

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
        .expect_error_line("algorithm paper-alg3 does not apply: the paper's rules take O(n^2) a synchronous step, and this ring of 3 processors may take 2000000000000000003 steps (twice Lemma 6's 1000000000000000000, plus n)");
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

/// Costs whose times overflow f64 are refused, naming the cost, with the
/// number as a user writes it, never printed as `null` with exit status 0.
#[test]
fn times_that_overflow_are_refused_not_printed_as_null() {
    let dir = TestDir::new("bad-day-overflow");
    dir.write(
        "scatter.json",
        r#"{"items": 1000, "root": "P1", "processors": [
            {"name": "P0", "comm": {"per_item": 1.0, "startup": 0.0}, "comp": {"per_item": 1e306, "startup": 0.0}},
            {"name": "P1", "comm": {"per_item": 0.0, "startup": 0.0}, "comp": {"per_item": 1e306, "startup": 0.0}}]}"#,
    );
    for method in ["lp", "linear", "exact"] {
        dir.run(&["scatter", "plan", "scatter.json", "--method", method, "--json"])
            .expect_status(2)
            .expect_error_line("scatter.json: processor 0 (P0): comp per_item 1e306 is too large: the times of a plan of all the items would overflow a 64-bit float; measure time in a larger unit");
    }
    dir.write(
        "genblock.json",
        r#"{"source": [1, 2], "target": [2, 1], "startup": 1e308, "unit": 1e308}"#,
    );
    dir.run(&["genblock", "plan", "genblock.json", "--json"])
        .expect_status(2)
        .expect_error_line("genblock.json: startup: 1e308 is too large: the cost of a schedule would overflow a 64-bit float");
    dir.write(
        "platform.json",
        r#"{"processors": [{"name": "A", "w": 1e308}, {"name": "B", "w": 1e308}], "c": [[0, 0.001], [0.0015, 0]]}"#,
    );
    dir.run(&[
        "map",
        "platform.json",
        "--work",
        "100",
        "--border",
        "1",
        "--json",
    ])
    .expect_status(2)
    .expect_stderr("the step time overflows a 64-bit float");
    // One processor too slow to use is left out, not refused.
    dir.write(
        "one_slow.json",
        r#"{"processors": [{"name": "A", "w": 1e308}, {"name": "B", "w": 1}], "c": [[0, 0.001], [0.0015, 0]]}"#,
    );
    dir.run(&[
        "map",
        "one_slow.json",
        "--work",
        "100",
        "--border",
        "1",
        "--json",
    ])
    .expect_status(0)
    .expect_stdout(r#""t_step": 100.0"#);
    dir.write(
        "partition.json",
        r#"{"weights": [1, 2, 3, 4], "seconds_per_unit": [1e308, 1e308]}"#,
    );
    dir.run(&["partition", "partition.json"])
        .expect_status(2)
        .expect_error_line("partition.json: the time of the fastest processor on all the weight (1e308 * 10) overflows");
}

/// A .npy file whose shape does not give its data's length is refused: the
/// shape is the file's own statement of its length.
#[test]
fn a_npy_shape_that_does_not_match_its_data_is_refused() {
    let dir = TestDir::new("bad-day-npy-shape");
    dir.write("speeds.json", r#"{"seconds_per_unit": [1, 2]}"#);
    let data: Vec<u8> = [1.0f64, 2.0, 3.0, 4.0]
        .iter()
        .flat_map(|x| x.to_le_bytes())
        .collect();
    let cases = [
        (
            "(3,)",
            "a .npy array of shape (3,) holds 4 entries after its header",
        ),
        (
            "(5,)",
            "a .npy array of shape (5,) holds 4 entries after its header",
        ),
        (
            "(-4,)",
            "a .npy array of shape (-4,): its length \"-4\" is not a count of entries",
        ),
        (
            "(18446744073709551616,)",
            "its length \"18446744073709551616\" is not a count of entries (a whole number below 2^64)",
        ),
    ];
    for (shape, message) in cases {
        let fields = format!("'descr': '<f8', 'fortran_order': False, 'shape': {shape}, ");
        dir.write("w.npy", npy(&fields, &data));
        dir.run(&["partition", "speeds.json", "--weights", "w.npy"])
            .expect_status(2)
            .expect_stderr(message);
    }
    dir.write("w.npy", npy("'descr': '<f8', 'shape': (4,), ", &data));
    dir.run(&["partition", "speeds.json", "--weights", "w.npy"])
        .expect_status(2)
        .expect_stderr("a .npy header without 'fortran_order'");
    let fields = "'descr': '<f8', 'fortran_order': False, 'shape': (4,), ";
    dir.write("w.npy", npy(fields, &data));
    dir.run(&["partition", "speeds.json", "--weights", "w.npy"])
        .expect_status(0);
}

/// An error about a value names where the value came from: the array file
/// given for the weights, `--tolerance`, the start loads.
#[test]
fn an_error_names_the_file_or_option_the_bad_value_came_from() {
    let dir = TestDir::new("bad-day-origin");
    dir.write("speeds.json", r#"{"seconds_per_unit": [1, 2]}"#);
    let data: Vec<u8> = [1.0f64, f64::NAN]
        .iter()
        .flat_map(|x| x.to_le_bytes())
        .collect();
    dir.write("nan.f64", &data);
    dir.run(&["partition", "speeds.json", "--weights", "nan.f64"])
        .expect_status(2)
        .expect_error_line("nan.f64: weights[1] = NaN: a weight must be finite and >= 0");
    dir.write(
        "current.json",
        r#"{"weights": [1, 2, 3], "seconds_per_unit": [1, 2], "current": [0, 1, 3]}"#,
    );
    dir.run(&["partition", "current.json", "--tolerance=-1"])
        .expect_status(2)
        .expect_error_line("--tolerance: tolerance = -1: it must be finite and >= 0");
    // Start loads: a name given twice in JSON, counts past a u64.
    dir.run(&["platform", "generate", "complete", "--out", "c8.json"])
        .expect_status(0);
    let map = [
        "map",
        "c8.json",
        "--work",
        "10",
        "--border",
        "1",
        "--instance-out",
        "i.json",
    ];
    let with = |loads: &'static str| [&map[..], &["--start-loads", loads]].concat();
    dir.run(&with(r#"{"P0": 5, "P0": 3}"#))
        .expect_status(2)
        .expect_error_line(r#"--start-loads: "P0" is given twice"#);
    dir.run(&with("18446744073709551615,1,1,1,1,1,1,1"))
        .expect_status(2)
        .expect_error_line("--start-loads: the counts add up to 18446744073709551622 items, more than a u64 counts");
}

/// `platform generate`: an option of another kind of platform is refused,
/// not ignored; a complete platform is at most 1,024 processors (its file
/// grows with their square).
#[test]
fn platform_options_fit_the_kind_generated() {
    let dir = TestDir::new("bad-day-platform");
    dir.run(&["platform", "generate", "complete", "--wan", "5"])
        .expect_status(2)
        .expect_error_line("--wan sets tiers platforms, and this is a complete platform");
    dir.run(&["platform", "generate", "tiers", "--processors", "5"])
        .expect_status(2)
        .expect_error_line("--processors sets complete platforms, and this is a tiers platform");
    dir.run(&["platform", "generate", "complete", "--processors", "4096"])
        .expect_status(2)
        .expect_error_line("--processors 4096: must be at most 1024");
}

/// Small things a user meets: a file that starts with a byte-order mark is
/// read; a chart folder that is a file says so; `startup-batches` on a ring
/// without start-ups plans it (the papers' plan); a bidirectional planner on
/// a unidirectional ring says that is the reason; a SimGrid unit option that
/// is not a number > 0 is refused on a JSON platform too.
#[test]
fn small_things_a_user_meets() {
    let dir = TestDir::new("bad-day-small");
    let ring = r#"{"ring": "bidirectional", "processors": [{"load": 4, "target": 1, "c_succ": 1, "c_pred": 2}, {"load": 1, "target": 1, "c_succ": 1, "c_pred": 1}, {"load": 1, "target": 4, "c_succ": 3, "c_pred": 1}]}"#;
    dir.write("bom.json", format!("\u{feff}{ring}"));
    dir.run(&["ring", "plan", "bom.json"]).expect_status(0);
    // Flows of 10^12 items, more than list scheduling takes: the papers'
    // plan as hetbal chooses it.
    let huge = ring
        .replace(r#""load": 4"#, r#""load": 1000000000000"#)
        .replace(r#""target": 4"#, r#""target": 1000000000000"#);
    dir.write("ring.json", huge);
    dir.run(&[
        "ring",
        "plan",
        "ring.json",
        "--algorithm",
        "startup-batches",
        "--json",
    ])
    .expect_status(0)
    .expect_stdout(r#""algorithm": "startup-batches""#);
    dir.write(
        "uni.json",
        r#"{"ring": "unidirectional", "processors": [{"load": 2, "target": 1, "c_succ": 1, "c_pred": 1}, {"load": 1, "target": 2, "c_succ": 1, "c_pred": 1}]}"#,
    );
    dir.run(&[
        "ring",
        "plan",
        "uni.json",
        "--algorithm",
        "bidirectional-list",
    ])
    .expect_status(2)
    .expect_stderr("and this one is unidirectional");
    dir.write(
        "platform.json",
        r#"{"processors": [{"name": "A", "w": 1}, {"name": "B", "w": 2}], "c": [[0, 1], [1, 0]]}"#,
    );
    for (option, value) in [("--unit-bytes", "NaN"), ("--flops-per-unit", "0")] {
        dir.run(&[
            "map",
            "platform.json",
            "--work",
            "1",
            "--border",
            "1",
            option,
            value,
        ])
        .expect_status(2)
        .expect_error_line(&format!("{option} {value}: must be finite and > 0"));
    }
    dir.write("a_file", "");
    dir.run(&["experiment", "genblock", "--runs", "1", "--plot", "a_file"])
        .expect_status(2)
        .expect_error_line("--plot a_file: a file, not a folder");
}
