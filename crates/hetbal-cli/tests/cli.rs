//! Integration tests of the `hetbal` command. Each test gets its own folder; a
//! failure prints the whole story: command, folder, exit status, stdout, stderr.

use std::path::Path;

mod support;
use support::TestDir;

const HETEROGENEOUS: &str = r#"{
  "ring": "unidirectional",
  "processors": [
    {"name": "A", "load": 9, "target": 1, "c_succ": 2.0},
    {"name": "B", "load": 1, "target": 1, "c_succ": 1.0},
    {"name": "C", "load": 1, "target": 3, "c_succ": 1.5},
    {"name": "D", "load": 1, "target": 7, "c_succ": 1.0}
  ]
}"#;

fn json(v: &str) -> serde_json::Value {
    serde_json::from_str(v).expect("valid JSON")
}

#[test]
fn demo_runs_and_draws() {
    let dir = TestDir::new("demo");
    dir.run(&["demo"])
        .expect_status(0)
        .expect_stdout("optimal      yes")
        .expect_stdout("hetbal-demo.svg");
    assert!(dir.read("hetbal-demo.svg").contains("<svg"));
}

#[test]
fn plan_json_verifies() {
    let dir = TestDir::new("plan-json");
    dir.write("ring.json", HETEROGENEOUS);
    let run = dir.run(&["ring", "plan", "ring.json", "--json"]);
    run.expect_status(0);
    let plan = json(&run.stdout());
    // A sends 8 items at 2.0 each: the bound and the makespan are 16.
    assert_eq!(plan["makespan"], 16.0, "{}", run.story());
    assert_eq!(plan["lower_bound"], 16.0);
    assert_eq!(plan["optimal"], true);
    assert_eq!(plan["algorithm"], "unidirectional-batched");
    assert_eq!(
        plan["flows"],
        json(
            r#"[{"from":0,"to":1,"items":8},{"from":1,"to":2,"items":8},{"from":2,"to":3,"items":6}]"#
        )
    );
    dir.write("plan.json", run.stdout());
    dir.run(&["ring", "verify", "ring.json", "plan.json"])
        .expect_status(0)
        .expect_stdout("valid: ")
        .expect_stdout("(optimal)");
}

/// A path with a drained processor and one that holds nothing: planned without
/// the missing link, validated by `ring verify`, refused by a planner that needs
/// the papers' model.
#[test]
fn paths_and_empty_processors_are_planned() {
    let dir = TestDir::new("path");
    dir.write(
        "path.json",
        r#"{"ring": "bidirectional", "path": true, "processors": [
            {"name": "A", "load": 4, "target": 0, "c_succ": 1.0, "c_pred": 1.0},
            {"name": "B", "load": 0, "target": 2, "c_succ": 1.0, "c_pred": 1.0},
            {"name": "C", "load": 0, "target": 2, "c_succ": 1.0, "c_pred": 1.0}]}"#,
    );
    let run = dir.run(&["ring", "plan", "path.json", "--json"]);
    run.expect_status(0);
    let plan = json(&run.stdout());
    // A sends its 4 items to B (one port: 4.0), which passes 2 on to C as they
    // come, by 3.0: A's sending is the bound.
    assert_eq!(plan["makespan"], 4.0, "{}", run.story());
    assert_eq!(plan["optimal"], true);
    assert_eq!(
        plan["flows"],
        json(r#"[{"from":0,"to":1,"items":4},{"from":1,"to":2,"items":2}]"#),
        "{}",
        run.story()
    );
    dir.write("plan.json", run.stdout());
    dir.run(&["ring", "verify", "path.json", "plan.json"])
        .expect_status(0)
        .expect_stdout("valid: ");
    dir.run(&["ring", "plan", "path.json"])
        .expect_status(0)
        .expect_stdout(
            "bidirectional path (no link from the last processor to the first) of 3 processors",
        );
    dir.run(&[
        "ring",
        "plan",
        "path.json",
        "--algorithm",
        "bidirectional-blocks",
    ])
    .expect_status(2)
    .expect_stderr("processor 0 (A) ends with none (target 0)");
}

#[test]
fn plan_report_and_gantt() {
    let dir = TestDir::new("report");
    dir.write("ring.json", HETEROGENEOUS);
    dir.run(&["ring", "plan", "ring.json", "--gantt", "g.svg"])
        .expect_status(0)
        .expect_stdout("makespan     16 s")
        .expect_stdout("lower bound  16 s")
        .expect_stdout("optimal      yes")
        .expect_stderr("g.svg");
    assert!(dir.read("g.svg").contains("<svg"));
}

#[test]
fn toml_instance_plans_like_json() {
    let dir = TestDir::new("toml");
    dir.write(
        "ring.toml",
        r#"ring = "unidirectional"
[[processors]]
name = "A"
load = 9
target = 1
c_succ = 2.0
[[processors]]
name = "B"
load = 1
target = 1
c_succ = 1.0
[[processors]]
name = "C"
load = 1
target = 3
c_succ = 1.5
[[processors]]
name = "D"
load = 1
target = 7
c_succ = 1.0
"#,
    );
    dir.write("ring.json", HETEROGENEOUS);
    let a = dir.run(&["ring", "plan", "ring.toml", "--json"]);
    a.expect_status(0);
    let b = dir.run(&["ring", "plan", "ring.json", "--json"]);
    assert_eq!(a.stdout(), b.stdout());
}

#[test]
fn verify_rejects_broken_plan_with_reasons() {
    let dir = TestDir::new("verify-bad");
    dir.write("ring.json", HETEROGENEOUS);
    // B forwards 8 items back to back from 0, but they arrive every 2 s from A.
    dir.write(
        "plan.json",
        r#"{"transfers": [
            {"from": 0, "to": 1, "items": 8, "start": 0.0, "end": 16.0},
            {"from": 1, "to": 2, "items": 8, "start": 0.0, "end": 8.0},
            {"from": 2, "to": 3, "items": 6, "start": 8.0, "end": 17.0}
        ]}"#,
    );
    dir.run(&["ring", "verify", "ring.json", "plan.json"])
        .expect_status(1)
        .expect_stdout("invalid")
        .expect_stdout("transfer 1")
        .expect_stdout("store and forward");
    // Wrong neighbour on a unidirectional ring.
    dir.write(
        "back.json",
        r#"{"transfers": [{"from": 1, "to": 0, "items": 1, "start": 0.0, "end": 1.0}]}"#,
    );
    dir.run(&["ring", "verify", "ring.json", "back.json"])
        .expect_status(1)
        .expect_stdout("neighbours only");
    // A claimed makespan that is not the schedule's.
    let plan = dir.run(&["ring", "plan", "ring.json", "--json"]);
    let mut doc = json(&plan.stdout());
    doc["makespan"] = serde_json::json!(15.0);
    dir.write("claim.json", doc.to_string());
    dir.run(&["ring", "verify", "ring.json", "claim.json"])
        .expect_status(1)
        .expect_stdout("claims makespan 15");
}

#[test]
fn balance_computes_targets_and_plans() {
    let dir = TestDir::new("balance");
    dir.write("ring.json", HETEROGENEOUS);
    let run = dir.run(&[
        "ring",
        "balance",
        "ring.json",
        "--times",
        "1,2,2,4",
        "--json",
        "--instance-out",
        "balanced.json",
    ]);
    run.expect_status(0);
    let balanced = json(&dir.read("balanced.json"));
    let targets: Vec<u64> = balanced["processors"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["target"].as_u64().unwrap())
        .collect();
    // 12 items, times 1, 2, 2, 4: the optimum max time is 6 (6, 3, 2, 1 or 6, 2, 3, 1).
    assert_eq!(targets.iter().sum::<u64>(), 12);
    let worst = targets
        .iter()
        .zip([1.0, 2.0, 2.0, 4.0])
        .map(|(&k, w)| k as f64 * w)
        .fold(0.0, f64::max);
    assert_eq!(worst, 6.0, "{targets:?}");
    assert_eq!(json(&run.stdout())["optimal"], true);
    dir.run(&["ring", "balance", "ring.json", "--times", "1,2"])
        .expect_status(2)
        .expect_stderr("2 times per item given for a ring of 4 processors");
    dir.run(&["ring", "balance", "ring.json", "--times", "1,2,0,1"])
        .expect_status(2)
        .expect_stderr("processor 2 (C): time per item 0 must be finite and > 0");
    dir.run(&["ring", "balance", "ring.json", "--times", "1,x,1,1"])
        .expect_status(2)
        .expect_stderr("not a number");
}

#[test]
fn algorithm_choice_errors() {
    let dir = TestDir::new("algorithms");
    dir.write("ring.json", HETEROGENEOUS);
    dir.run(&["ring", "plan", "ring.json", "--algorithm", "magic"])
        .expect_status(2)
        .expect_stderr("unknown algorithm \"magic\"");
    dir.run(&[
        "ring",
        "plan",
        "ring.json",
        "--algorithm",
        "unidirectional-homogeneous",
    ])
    .expect_status(2)
    .expect_stderr("needs equal successor costs");
    let bidirectional = r#"{"ring": "bidirectional", "processors": [
        {"load": 3, "target": 1, "c_succ": 3.0, "c_pred": 1.0},
        {"load": 1, "target": 1, "c_succ": 3.0, "c_pred": 1.0},
        {"load": 1, "target": 1, "c_succ": 3.0, "c_pred": 1.0},
        {"load": 1, "target": 3, "c_succ": 3.0, "c_pred": 1.0}]}"#;
    dir.write("bi.json", bidirectional);
    // P0 sends 2 items backwards to P3 over the cheap links: System 6 gives 2.
    dir.run(&["ring", "plan", "bi.json"])
        .expect_status(0)
        .expect_stdout("bidirectional-lemma9")
        .expect_stdout("makespan     2 s")
        .expect_stdout("optimal      yes");
    dir.run(&[
        "ring",
        "plan",
        "bi.json",
        "--algorithm",
        "unidirectional-heterogeneous",
    ])
    .expect_status(0)
    .expect_stdout("not proven")
    .expect_stdout("gap          200.00% above the lower bound");
    dir.run(&[
        "ring",
        "plan",
        "ring.json",
        "--algorithm",
        "bidirectional-list",
    ])
    .expect_status(2)
    .expect_stderr("needs a bidirectional ring");
}

/// Every class of bad input: exit status 2 and a message naming file, place and rule.
#[test]
fn bad_inputs_exit_2_with_clear_messages() {
    let p = |fields: &str| format!(r#"{{"load": 1, "target": 1, "c_succ": 1.0{fields}}}"#);
    let ring = |procs: &[String]| {
        format!(
            r#"{{"ring": "unidirectional", "processors": [{}]}}"#,
            procs.join(",")
        )
    };
    let ok = p("");
    let cases: Vec<(&str, String, &str)> = vec![
        ("empty", String::new(), "the file is empty"),
        (
            "truncated",
            r#"{"ring": "unidirectional", "processors": [{"load": 1"#.into(),
            "truncated",
        ),
        (
            "wrong type",
            ring(&[ok.clone(), r#"{"name": "Q", "load": "many", "target": 1, "c_succ": 1}"#.into()]),
            "processor 1 (Q): field `load`: invalid type: string \"many\", expected u64",
        ),
        ("one processor", ring(std::slice::from_ref(&ok)), "at least 2 processors, this one has 1"),
        ("no processors", ring(&[]), "at least 2 processors, this one has 0"),
        (
            "sums differ",
            ring(&[ok.clone(), r#"{"load": 5, "target": 1, "c_succ": 1}"#.into()]),
            "loads add up to 6 but targets add up to 2",
        ),
        (
            "unidirectional path that needs a backward move",
            r#"{"ring": "unidirectional", "path": true, "processors": [{"load": 0, "target": 1, "c_succ": 1}, {"load": 1, "target": 0, "c_succ": 1}]}"#.into(),
            "processors 0 to 0 (P0) hold 0 items but must end with 1: on a unidirectional path items only move to the successor",
        ),
        (
            "path not a boolean",
            r#"{"ring": "unidirectional", "path": "yes", "processors": []}"#.into(),
            "invalid type: string \"yes\", expected a boolean",
        ),
        (
            "zero cost",
            ring(&[ok.clone(), r#"{"load": 1, "target": 1, "c_succ": 0}"#.into()]),
            "processor 1 (P1): c_succ 0 must be > 0",
        ),
        (
            "negative cost",
            ring(&[ok.clone(), r#"{"load": 1, "target": 1, "c_succ": -2.5}"#.into()]),
            "processor 1 (P1): c_succ -2.5 must be > 0",
        ),
        (
            "cost out of range",
            ring(&[ok.clone(), r#"{"load": 1, "target": 1, "c_succ": 1e999}"#.into()]),
            "processor 1 (P1): field `c_succ`",
        ),
        (
            "negative count",
            ring(&[ok.clone(), r#"{"load": -1, "target": 1, "c_succ": 1}"#.into()]),
            "processor 1 (P1): field `load`: invalid value: integer `-1`, expected u64",
        ),
        (
            "count beyond u64",
            ring(&[ok.clone(), r#"{"load": 18446744073709551616, "target": 1, "c_succ": 1}"#.into()]),
            "processor 1 (P1): field `load`",
        ),
        (
            "total beyond u64",
            ring(&[
                ok.clone(),
                r#"{"load": 18446744073709551615, "target": 18446744073709551615, "c_succ": 1}"#
                    .into(),
            ]),
            "more than a u64 can count",
        ),
        (
            "unknown field",
            ring(&[ok.clone(), p(r#", "speed": 2"#)]),
            "processor 1 (P1): field `speed`: unknown field `speed`",
        ),
        (
            "unknown top-level field",
            r#"{"ring": "unidirectional", "processors": [], "extra": true}"#.into(),
            "unknown field `extra`",
        ),
        (
            "duplicate names",
            ring(&[p(r#", "name": "X""#), p(r#", "name": "X""#)]),
            "processor 1 (X): name \"X\" must be unique, processor 0 has it too",
        ),
        (
            "unknown ring kind",
            r#"{"ring": "circular", "processors": []}"#.into(),
            "unknown variant `circular`",
        ),
        (
            "missing c_pred on bidirectional",
            r#"{"ring": "bidirectional", "processors": [{"load": 1, "target": 1, "c_succ": 1}, {"load": 1, "target": 1, "c_succ": 1}]}"#.into(),
            "processor 0 (P0): c_pred (missing) is required on a bidirectional ring",
        ),
        (
            "trailing garbage",
            format!("{} ]", ring(&[ok.clone(), ok.clone()])),
            "unexpected text after the document",
        ),
        ("not JSON", "ring: unidirectional".into(), "ring.json: document: expected value"),
    ];
    let dir = TestDir::new("bad-input");
    for (what, contents, message) in &cases {
        dir.write("ring.json", contents);
        let run = dir.run(&["ring", "plan", "ring.json"]);
        run.expect_status(2);
        assert!(
            run.stderr().contains(message) && run.stderr().contains("ring.json"),
            "case {what:?}: stderr lacks {message:?}{}",
            run.story()
        );
    }
    // TOML has NaN and infinities; they are refused too.
    for (value, message) in [
        ("nan", "c_succ NaN must be a number > 0"),
        ("inf", "c_succ inf must be finite"),
        ("-inf", "c_succ -inf must be finite"),
    ] {
        dir.write(
            "ring.toml",
            format!(
                "ring = \"unidirectional\"\n[[processors]]\nload = 1\ntarget = 1\nc_succ = 1.0\n[[processors]]\nname = \"Q\"\nload = 1\ntarget = 1\nc_succ = {value}\n"
            ),
        );
        dir.run(&["ring", "plan", "ring.toml"])
            .expect_status(2)
            .expect_stderr(&format!("ring.toml: processor 1 (Q): {message}"));
    }
    // Not UTF-8, missing file.
    dir.write("bin.json", [0xff, 0xfe, 0x00, 0x41]);
    dir.run(&["ring", "plan", "bin.json"])
        .expect_status(2)
        .expect_stderr("bin.json: not UTF-8");
    dir.run(&["ring", "plan", "missing.json"])
        .expect_status(2)
        .expect_stderr("cannot read missing.json");
    // A broken plan file for verify.
    dir.write("ring.json", HETEROGENEOUS);
    dir.write("plan.json", r#"{"transfers": [{"from": 0, "to": 1}]}"#);
    dir.run(&["ring", "verify", "ring.json", "plan.json"])
        .expect_status(2)
        .expect_stderr("plan.json: field `transfers[0]`");
}

/// Whatever the bytes, hetbal answers with exit status 0 or 2 and never panics:
/// every prefix of a valid file and many one-byte corruptions of it.
#[test]
fn never_panics_on_mangled_files() {
    let dir = TestDir::new("mangled");
    for input in support::mangled(HETEROGENEOUS, 7, 60, 0x9e37_79b9_7f4a_7c15) {
        dir.write("ring.json", &input);
        dir.run(&["ring", "plan", "ring.json"])
            .expect_answer_or_refusal();
    }
}

#[test]
fn help_lists_the_commands() {
    let dir = TestDir::new("help");
    dir.run(&["--help"]).expect_status(0).expect_stdout("demo");
    dir.run(&["ring", "--help"])
        .expect_status(0)
        .expect_stdout("verify")
        .expect_stdout("balance");
    dir.run(&["ring", "plan"]).expect_status(2);
    let _ = Path::new("unused");
}

/// Exact simulated times, pinned: A's 8 items reach B every 2 s. Algorithm 2 (as
/// soon as possible) has B forward each one alone, as it arrives (one paced train,
/// an item every 2 s); the default batched plan sends B's 8 items in one batch from
/// 7 s, with the same optimal makespan.
#[test]
fn exact_times_of_both_unidirectional_schedules() {
    let dir = TestDir::new("exact-times");
    dir.write("ring.json", HETEROGENEOUS);
    type Row = (u64, u64, f64, f64, Option<f64>);
    let transfers = |args: &[&str]| -> Vec<Row> {
        let run = dir.run(args);
        run.expect_status(0);
        json(&run.stdout())["transfers"]
            .as_array()
            .unwrap()
            .iter()
            .map(|t| {
                (
                    t["from"].as_u64().unwrap(),
                    t["items"].as_u64().unwrap(),
                    t["start"].as_f64().unwrap(),
                    t["end"].as_f64().unwrap(),
                    t.get("period").map(|p| p.as_f64().unwrap()),
                )
            })
            .collect()
    };
    let asap = transfers(&[
        "ring",
        "plan",
        "ring.json",
        "--json",
        "--algorithm",
        "unidirectional-heterogeneous",
    ]);
    assert_eq!(
        asap,
        vec![
            (0, 8, 0.0, 16.0, None),
            (1, 1, 0.0, 1.0, None),
            (2, 2, 0.0, 3.0, None),
            (1, 7, 2.0, 15.0, Some(2.0)),
            (2, 4, 3.0, 10.5, Some(2.0)),
        ]
    );
    let batched = transfers(&["ring", "plan", "ring.json", "--json"]);
    assert_eq!(
        batched,
        vec![
            (0, 8, 0.0, 16.0, None),
            (2, 6, 6.5, 15.5, None),
            (1, 8, 7.0, 15.0, None)
        ]
    );
}

/// A Gantt chart of 600 lanes cannot be read: refused up front, exit 2.
#[test]
fn gantt_of_too_many_processors_is_refused() {
    let dir = TestDir::new("gantt-large");
    let processors: Vec<String> = (0..600)
        .map(|i| {
            let (load, target) = if i == 0 {
                (2, 1)
            } else if i == 1 {
                (1, 2)
            } else {
                (1, 1)
            };
            format!(r#"{{"load": {load}, "target": {target}, "c_succ": 1.0}}"#)
        })
        .collect();
    dir.write(
        "ring.json",
        format!(
            r#"{{"ring": "unidirectional", "processors": [{}]}}"#,
            processors.join(",")
        ),
    );
    dir.run(&["ring", "plan", "ring.json", "--gantt", "g.svg"])
        .expect_status(2)
        .expect_stderr("600 processors are too many to read");
    dir.run(&["ring", "plan", "ring.json"])
        .expect_status(0)
        .expect_stdout("optimal      yes");
}

/// The paper's Algorithm 3 on model.md's ring: it reaches Lemma 6's steps but sends
/// an item not yet held; hetbal says so and exits 1. The default plan is optimal.
#[test]
fn paper_algorithm3_reports_its_invalid_schedule() {
    let dir = TestDir::new("alg3");
    dir.write(
        "ring.json",
        r#"{"ring": "bidirectional", "processors": [
            {"load": 1, "target": 4, "c_succ": 1.0, "c_pred": 1.0},
            {"load": 2, "target": 1, "c_succ": 1.0, "c_pred": 1.0},
            {"load": 3, "target": 1, "c_succ": 1.0, "c_pred": 1.0},
            {"load": 1, "target": 1, "c_succ": 1.0, "c_pred": 1.0}]}"#,
    );
    dir.run(&["ring", "plan", "ring.json", "--algorithm", "paper-alg3"])
        .expect_status(1)
        .expect_stderr("the paper's rules ignore store and forward")
        .expect_stderr("store and forward");
    dir.run(&["ring", "plan", "ring.json", "--gantt", "bi.svg"])
        .expect_status(0)
        .expect_stdout("makespan     3 s")
        .expect_stdout("optimal      yes");
    assert!(dir.read("bi.svg").contains("<svg"));
}

/// A large ring's report shows the first 40 processors and says how many more
/// there are; `--all-rows` shows every one.
#[test]
fn large_reports_show_forty_processors_unless_asked() {
    let dir = TestDir::new("all-rows");
    let processors: Vec<String> = (0..50)
        .map(|i| {
            let (load, target) = if i == 0 { (51, 2) } else { (1, 2) };
            format!(r#"{{"name": "N{i}", "load": {load}, "target": {target}, "c_succ": 1.0}}"#)
        })
        .collect();
    dir.write(
        "ring.json",
        format!(
            r#"{{"ring": "unidirectional", "processors": [{}]}}"#,
            processors.join(", ")
        ),
    );
    let rows = |stdout: &str| stdout.lines().filter(|l| l.contains(" N")).count();
    let run = dir.run(&["ring", "plan", "ring.json"]);
    run.expect_status(0)
        .expect_stdout("... 10 more processors (--all-rows prints every one");
    assert_eq!(rows(&run.stdout()), 40, "{}", run.story());
    let run = dir.run(&["ring", "plan", "ring.json", "--all-rows"]);
    run.expect_status(0);
    assert_eq!(rows(&run.stdout()), 50, "{}", run.story());
    assert!(!run.stdout().contains("more processors"), "{}", run.story());
}
