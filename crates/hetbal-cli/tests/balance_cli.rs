//! Integration tests of `hetbal balance`: the balance of measured (load,
//! seconds) points as a report and as JSON (formats.md, "Measured points" and
//! "Balance with measured points"), and every class of bad document refused
//! with exit status 2 and one line naming the file, the processor and the
//! rule, never a panic. A failure prints the whole story.

mod support;
use support::TestDir;

/// P0 at 10 ms per item, P1 at 20 ms: 300 items split 200 / 100, 2 s each.
const LINEAR: &str = r#"{"total": 300, "processors": [
  {"name": "fast", "points": [[100, 1.0]]},
  {"name": "slow", "points": [[100, 2.0]]}
]}"#;

#[test]
fn the_report_and_the_json_give_the_optimum() {
    let dir = TestDir::new("balance-linear");
    dir.write("linear.json", LINEAR);
    dir.run(&["balance", "linear.json"])
        .expect_status(0)
        .expect_stdout("300 items over 2 processors, piecewise-linear model")
        .expect_stdout("        0  fast     200              2\n")
        .expect_stdout("        1  slow     100              2\n")
        .expect_stdout("predicted iteration time: 2 s");
    let run = dir.run(&["balance", "linear.json", "--json"]);
    run.expect_status(0);
    let doc = run.json();
    let expected = serde_json::json!({
        "total": 300,
        "model": "piecewise-linear",
        "time": 2.0,
        "processors": [
            {"name": "fast", "target": 200, "seconds": 2.0},
            {"name": "slow", "target": 100, "seconds": 2.0}
        ]
    });
    assert_eq!(doc, expected, "{}", run.story());
}

#[test]
fn a_gpu_with_an_overhead_and_a_cubic_model_balance_exactly() {
    let dir = TestDir::new("balance-gpu");
    // A GPU paying 2 s before any work then 1 ms per item, a CPU at 4 ms per
    // item, unnamed (P1); TOML, monotone cubic.
    dir.write(
        "gpu.toml",
        "total = 5000\nmodel = \"monotone-cubic\"\n[[processors]]\nname = \"gpu\"\n\
         points = [[1, 2.001], [10000, 12.0]]\n[[processors]]\npoints = [[1000, 4.0]]\n",
    );
    let run = dir.run(&["balance", "gpu.toml", "--json"]);
    run.expect_status(0);
    let doc = run.json();
    assert_eq!(doc["model"], "monotone-cubic", "{}", run.story());
    assert_eq!(doc["processors"][1]["name"], "P1", "{}", run.story());
    let targets: Vec<u64> = (0..2)
        .map(|i| doc["processors"][i]["target"].as_u64().unwrap())
        .collect();
    assert_eq!(targets.iter().sum::<u64>(), 5000, "{}", run.story());
    assert!(targets[0] > targets[1], "{}", run.story());
    let slowest = (0..2)
        .map(|i| doc["processors"][i]["seconds"].as_f64().unwrap())
        .fold(0.0, f64::max);
    assert_eq!(doc["time"].as_f64().unwrap(), slowest, "{}", run.story());
    // No items: every target 0, time 0.
    dir.write(
        "zero.json",
        r#"{"total": 0, "processors": [{"points": [[1, 1]]}]}"#,
    );
    let run = dir.run(&["balance", "zero.json", "--json"]);
    run.expect_status(0);
    assert_eq!(run.json()["processors"][0]["target"], 0, "{}", run.story());
}

#[test]
fn every_bad_document_is_refused_with_the_processor_and_the_rule() {
    let dir = TestDir::new("balance-bad");
    let one = |points: &str| {
        format!(
            r#"{{"total": 10, "processors": [{{"name": "a", "points": [[1, 1]]}}, {{"name": "b", "points": {points}}}]}}"#
        )
    };
    let cases: Vec<(&str, String, &str)> = vec![
        (
            "unknown_top.json",
            r#"{"total": 10, "processors": [{"points": [[1, 1]]}], "speed": 1}"#.into(),
            "unknown_top.json: field `speed`: unknown field `speed`, expected one of `total`, `model`, `processors`",
        ),
        (
            "unknown_processor.json",
            r#"{"total": 10, "processors": [{"name": "g", "points": [[1, 1]], "speed": 1}]}"#
                .into(),
            "unknown_processor.json: processor 0 (g): field `speed`: unknown field `speed`, expected `name` or `points`",
        ),
        (
            "wrong_type.json",
            one(r#"[[1, "x"]]"#),
            "wrong_type.json: processor 1 (b): field `points[0][1]`: invalid type: string \"x\", expected f64",
        ),
        (
            "not_a_pair.json",
            one("[[1]]"),
            "not_a_pair.json: processor 1 (b): field `points[0]`: invalid length 1, expected a tuple of size 2",
        ),
        (
            "fractional_load.json",
            one("[[1.5, 1]]"),
            "fractional_load.json: processor 1 (b): field `points[0][0]`: invalid type: floating point `1.5`, expected u64",
        ),
        (
            "negative_load.json",
            one("[[-3, 1]]"),
            "negative_load.json: processor 1 (b): field `points[0][0]`: invalid value: integer `-3`, expected u64",
        ),
        (
            "negative_seconds.json",
            one("[[5, 1], [10, -0.5]]"),
            "negative_seconds.json: processor 1 (b): field `points[1]`: the time -0.5 s at load 10 must be finite and >= 0",
        ),
        (
            "nan.json",
            one("[[5, NaN]]"),
            "nan.json: processor 1 (P1): field `points[0][1]`: expected value at line 1",
        ),
        (
            "no_points.json",
            one("[]"),
            "no_points.json: processor 1 (b): field `points`: no points (a time function needs a point of positive load and positive time)",
        ),
        (
            "zero_points.json",
            one("[[0, 1], [7, 0]]"),
            "zero_points.json: processor 1 (b): field `points`: none of its 2 points has a positive load and a positive time",
        ),
        (
            "no_processors.json",
            r#"{"total": 10, "processors": []}"#.into(),
            "no_processors.json: field `processors`: give at least one processor",
        ),
        (
            "missing_total.json",
            r#"{"processors": [{"points": [[1, 1]]}]}"#.into(),
            "missing_total.json: document: missing field `total`",
        ),
        (
            "total_beyond_u64.json",
            r#"{"total": 18446744073709551616, "processors": [{"points": [[1, 1]]}]}"#.into(),
            "total_beyond_u64.json: field `total`: invalid type: floating point `1.8446744073709552e+19`, expected u64 at line 1 column 30 (item counts are whole numbers from 0 to 18446744073709551615)",
        ),
        (
            "overflow.json",
            r#"{"total": 18446744073709551615, "processors": [{"points": [[1, 1e308]]}]}"#
                .into(),
            "overflow.json: field `total`: 18446744073709551615 items: the balanced time overflows",
        ),
        (
            "unknown_model.json",
            r#"{"total": 10, "model": "cubic", "processors": [{"points": [[1, 1]]}]}"#.into(),
            "unknown_model.json: field `model`: unknown variant `cubic`, expected `piecewise-linear` or `monotone-cubic`",
        ),
        (
            "duplicate.json",
            r#"{"total": 10, "processors": [{"name": "a", "points": [[1, 1]]}, {"name": "a", "points": [[1, 1]]}]}"#.into(),
            "duplicate.json: processor 1 (a): name \"a\" must be unique, processor 0 has it too",
        ),
        (
            "empty_name.json",
            r#"{"total": 10, "processors": [{"name": "", "points": [[1, 1]]}]}"#.into(),
            "empty_name.json: processor 0: field `name` must not be empty",
        ),
        (
            "array.json",
            "[[1, 1]]".into(),
            "array.json: expected a JSON object with `total` and `processors` (measured points), found an array",
        ),
        ("empty.json", "  \n".into(), "empty.json: the file is empty"),
    ];
    for (file, text, needle) in &cases {
        dir.write(file, text);
        for json in [false, true] {
            let mut args = vec!["balance", file];
            if json {
                args.push("--json");
            }
            let run = dir.run(&args);
            run.expect_status(2).expect_error_line(needle);
            assert!(run.stdout().is_empty(), "{}", run.story());
        }
    }
    // NaN and infinity can be written in TOML.
    for (value, shown) in [("nan", "NaN"), ("inf", "inf"), ("-inf", "-inf")] {
        dir.write(
            "bad.toml",
            format!("total = 10\n[[processors]]\nname = \"c\"\npoints = [[4, {value}]]\n"),
        );
        dir.run(&["balance", "bad.toml"])
            .expect_status(2)
            .expect_error_line(&format!(
                "bad.toml: processor 0 (c): field `points[0]`: the time {shown} s at load 4 must be finite and >= 0"
            ));
    }
    dir.run(&["balance", "no-such-file.json"])
        .expect_status(2)
        .expect_error_line("cannot read no-such-file.json");
}

#[test]
fn never_panics_on_mangled_files() {
    let dir = TestDir::new("balance-mangled");
    let valid = LINEAR.replace('\n', " ");
    for input in support::mangled(&valid, 5, 80, 0x5eed) {
        dir.write("m.json", &input);
        dir.run(&["balance", "m.json"]).expect_answer_or_refusal();
    }
}
