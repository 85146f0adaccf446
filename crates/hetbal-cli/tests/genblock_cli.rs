//! Integration tests of `hetbal genblock plan` and `hetbal experiment genblock`.
//! Each test gets its own folder; a failure prints the whole story: command,
//! folder, exit status, stdout, stderr.

use std::collections::HashMap;

mod support;
use support::TestDir;

/// formats.md's instance.
const FORMATS: &str = r#"{ "source": [7, 16, 11, 10, 7, 49], "target": [15, 16, 10, 16, 15, 28],
  "startup": 0.0, "unit": 1.0 }"#;

/// Five sources, seven targets, startups that matter.
const UNEVEN: &str = r#"{ "source": [30, 2, 41, 17, 60], "target": [5, 9, 33, 12, 40, 21, 30],
  "startup": 4.0, "unit": 0.5 }"#;

/// Checks a schedule document against the blocks, independently: every step a
/// non-empty matching, every pair's sizes adding up to the overlap of the blocks,
/// the cost recomputed step by step. Returns (steps, cost).
fn check_document(
    doc: &serde_json::Value,
    source: &[u64],
    target: &[u64],
    tu: f64,
    tau: f64,
) -> (usize, f64) {
    let mut keys: Vec<&String> = doc.as_object().expect("an object").keys().collect();
    keys.sort();
    assert_eq!(
        keys,
        ["cost", "degree", "lower_bound", "steps"],
        "fields of {doc}"
    );
    let bounds = |blocks: &[u64]| {
        let mut at = 0;
        blocks
            .iter()
            .map(|&b| {
                at += b;
                (at - b, at)
            })
            .collect::<Vec<_>>()
    };
    let (s, t) = (bounds(source), bounds(target));
    let mut sent: HashMap<(usize, usize), u64> = HashMap::new();
    let mut cost = 0.0;
    let steps = doc["steps"].as_array().expect("steps");
    for step in steps {
        let step = step.as_array().expect("a step");
        assert!(!step.is_empty());
        let mut senders = std::collections::HashSet::new();
        let mut receivers = std::collections::HashSet::new();
        let mut largest = 0;
        for m in step {
            assert_eq!(m.as_object().unwrap().len(), 3, "{m}");
            let (from, to, size) = (
                m["from"].as_u64().unwrap() as usize,
                m["to"].as_u64().unwrap() as usize,
                m["size"].as_u64().unwrap(),
            );
            assert!(
                size > 0 && senders.insert(from) && receivers.insert(to),
                "{doc}"
            );
            *sent.entry((from, to)).or_default() += size;
            largest = largest.max(size);
        }
        cost += tu + tau * largest as f64;
    }
    for (i, &(a, b)) in s.iter().enumerate() {
        for (j, &(c, d)) in t.iter().enumerate() {
            let overlap = b.min(d).saturating_sub(a.max(c));
            assert_eq!(
                sent.get(&(i, j)).copied().unwrap_or(0),
                overlap,
                "pair ({i}, {j})"
            );
        }
    }
    let claimed = doc["cost"].as_f64().unwrap();
    assert!(
        (claimed - cost).abs() <= 1e-9 * cost.max(1.0),
        "cost {claimed} vs {cost}"
    );
    (steps.len(), cost)
}

#[test]
fn plan_report_json_and_gantt() {
    let dir = TestDir::new("plan");
    dir.write("g.json", FORMATS);
    dir.run(&["genblock", "plan", "g.json", "--gantt", "g.svg"])
        .expect_status(0)
        .expect_stdout("maximum degree Delta = 3")
        .expect_stdout("cost         49 s in")
        .expect_stdout("lower bound  49 s")
        .expect_stdout("optimal      yes")
        .expect_stdout("paper        Tb = ")
        .expect_stderr("Gantt chart written to g.svg");
    let svg = dir.read("g.svg");
    assert!(svg.starts_with("<svg") && svg.contains("S5") && svg.contains("T5"));

    let source = [7, 16, 11, 10, 7, 49];
    let target = [15, 16, 10, 16, 15, 28];
    let paper = dir.run(&["genblock", "plan", "g.json", "--method", "paper", "--json"]);
    paper.expect_status(0);
    let doc = paper.json();
    let (steps, paper_cost) = check_document(&doc, &source, &target, 0.0, 1.0);
    assert_eq!(
        (steps, doc["degree"].as_u64()),
        (3, Some(3)),
        "paper: exactly Delta steps"
    );
    assert_eq!(doc["lower_bound"].as_f64(), Some(49.0));
    let best = dir.run(&["genblock", "plan", "g.json", "--json"]);
    best.expect_status(0);
    let (_, best_cost) = check_document(&best.json(), &source, &target, 0.0, 1.0);
    assert!(best_cost <= paper_cost);
    assert_eq!(best_cost, 49.0);
}

/// Different source and target counts, startups: best never costs more than
/// paper, the same TOML document plans the same.
#[test]
fn uneven_instance_with_startups_and_toml() {
    let dir = TestDir::new("uneven");
    dir.write("u.json", UNEVEN);
    let source = [30, 2, 41, 17, 60];
    let target = [5, 9, 33, 12, 40, 21, 30];
    let paper = dir.run(&["genblock", "plan", "u.json", "--method", "paper", "--json"]);
    paper.expect_status(0);
    let doc = paper.json();
    let (steps, paper_cost) = check_document(&doc, &source, &target, 4.0, 0.5);
    assert_eq!(steps as u64, doc["degree"].as_u64().unwrap());
    let best = dir.run(&["genblock", "plan", "u.json", "--json"]);
    best.expect_status(0);
    let doc = best.json();
    let (_, best_cost) = check_document(&doc, &source, &target, 4.0, 0.5);
    assert!(
        best_cost <= paper_cost,
        "best {best_cost} > paper {paper_cost}"
    );
    assert!(best_cost >= doc["lower_bound"].as_f64().unwrap());

    dir.write(
        "u.toml",
        "source = [30, 2, 41, 17, 60]\ntarget = [5, 9, 33, 12, 40, 21, 30]\nstartup = 4.0\nunit = 0.5\n",
    );
    let toml = dir.run(&["genblock", "plan", "u.toml", "--json"]);
    toml.expect_status(0);
    assert_eq!(toml.json(), doc);
}

/// Every class of bad input: exit status 2 and a message naming file, field and
/// rule.
#[test]
fn bad_inputs_exit_2_with_clear_messages() {
    let cases: Vec<(&str, &str, &str)> = vec![
        ("empty", "", "the file is empty"),
        ("truncated", r#"{"source": [1, 2"#, "truncated"),
        ("not JSON", "source = 1", "g.json: document: expected value"),
        (
            "missing field",
            r#"{"source": [1], "target": [1], "startup": 0}"#,
            "missing field `unit`",
        ),
        (
            "wrong type",
            r#"{"source": [1, "x"], "target": [1], "startup": 0, "unit": 1}"#,
            "field `source[1]`: invalid type: string \"x\", expected u64",
        ),
        (
            "negative size",
            r#"{"source": [-1], "target": [1], "startup": 0, "unit": 1}"#,
            "field `source[0]`: invalid value: integer `-1`, expected u64",
        ),
        (
            "unknown field",
            r#"{"source": [1], "target": [1], "startup": 0, "unit": 1, "speed": 2}"#,
            "unknown field `speed`",
        ),
        (
            "no source",
            r#"{"source": [], "target": [1], "startup": 0, "unit": 1}"#,
            "source: the distribution has no block",
        ),
        (
            "sums differ",
            r#"{"source": [3, 4], "target": [2, 3], "startup": 0, "unit": 1}"#,
            "source blocks add up to 7 elements but target blocks to 5",
        ),
        (
            "negative startup",
            r#"{"source": [1], "target": [1], "startup": -2, "unit": 1}"#,
            "startup: -2 must be finite and >= 0",
        ),
        (
            "zero unit",
            r#"{"source": [1], "target": [1], "startup": 0, "unit": 0}"#,
            "unit: 0 must be finite and > 0",
        ),
        (
            "total beyond u64",
            r#"{"source": [18446744073709551615, 1], "target": [1, 18446744073709551615], "startup": 0, "unit": 1}"#,
            "more than a u64 can count",
        ),
        (
            "size beyond u64",
            r#"{"source": [18446744073709551616], "target": [1], "startup": 0, "unit": 1}"#,
            "field `source[0]`",
        ),
    ];
    let dir = TestDir::new("bad-input");
    for (what, contents, message) in &cases {
        dir.write("g.json", contents);
        let run = dir.run(&["genblock", "plan", "g.json"]);
        run.expect_status(2);
        assert!(
            run.stderr().contains(message) && run.stderr().contains("g.json"),
            "case {what:?}: stderr lacks {message:?}{}",
            run.story()
        );
    }
    dir.write(
        "g.toml",
        "source = [1]\ntarget = [1]\nstartup = nan\nunit = 1.0\n",
    );
    dir.run(&["genblock", "plan", "g.toml"])
        .expect_status(2)
        .expect_stderr("g.toml: startup: NaN must be finite and >= 0");
    dir.run(&["genblock", "plan", "missing.json"])
        .expect_status(2)
        .expect_stderr("cannot read missing.json");
    dir.write("g.json", FORMATS);
    dir.run(&["genblock", "plan", "g.json", "--method", "fast"])
        .expect_status(2)
        .expect_stderr("unknown method \"fast\": choose one of paper, best");
    dir.run(&["genblock", "plan", "g.json", "--gantt", "no-such-dir/g.svg"])
        .expect_status(2)
        .expect_stderr("cannot write no-such-dir/g.svg");
    // A Gantt chart of 601 lanes is refused before any work.
    let wide = format!(
        r#"{{"source": [{}], "target": [600], "startup": 0, "unit": 1}}"#,
        vec!["1"; 600].join(",")
    );
    dir.write("wide.json", wide);
    dir.run(&["genblock", "plan", "wide.json", "--gantt", "w.svg"])
        .expect_status(2)
        .expect_stderr("processors are too many to read");
}

/// Whatever the bytes, exit status 0 or 2, never a panic: every prefix of a valid
/// file and many one-byte corruptions of it.
#[test]
fn never_panics_on_mangled_files() {
    let dir = TestDir::new("mangled");
    for input in support::mangled(UNEVEN, 5, 60, 0x2545_f491_4f6c_dd1d) {
        dir.write("g.json", &input);
        dir.run(&["genblock", "plan", "g.json"])
            .expect_answer_or_refusal();
    }
}

/// The experiment at a small size: every scenario and point, both methods, the
/// fields of formats.md, best never above paper, at the bound without startups;
/// the plots are written.
#[test]
fn experiment_small_run() {
    let dir = TestDir::new("experiment");
    std::fs::create_dir_all(dir.path.join("plots")).unwrap();
    let run = dir.run(&[
        "experiment",
        "genblock",
        "--runs",
        "3",
        "--json",
        "--plot",
        "plots",
    ]);
    run.expect_status(0);
    let table = run.json();
    assert_eq!(table["experiment"], "genblock");
    assert!(table["parameters"]["blocks"]
        .as_str()
        .unwrap()
        .contains("uniformly"));
    let rows = table["rows"].as_array().unwrap();
    let mut scenarios: Vec<&str> = rows
        .iter()
        .map(|r| r["scenario"].as_str().unwrap())
        .collect();
    scenarios.dedup();
    assert_eq!(scenarios, ["I", "II", "III", "IV", "V", "II-startup"]);
    for row in rows {
        let mut keys: Vec<&String> = row.as_object().unwrap().keys().collect();
        keys.sort();
        assert_eq!(
            keys,
            [
                "b",
                "lower_bound",
                "method",
                "point",
                "r",
                "scenario",
                "ta",
                "tb"
            ]
        );
    }
    for pair in rows.chunks(2) {
        assert_eq!(
            (pair[0]["method"].as_str(), pair[1]["method"].as_str()),
            (Some("paper"), Some("best"))
        );
        assert_eq!(pair[0]["point"], pair[1]["point"]);
        let (paper, best) = (
            pair[0]["ta"].as_f64().unwrap(),
            pair[1]["ta"].as_f64().unwrap(),
        );
        assert!(best <= paper * (1.0 + 1e-12), "{pair:?}");
        let lb = pair[1]["lower_bound"].as_f64().unwrap();
        assert!(best >= lb * (1.0 - 1e-12));
        if pair[0]["scenario"] != "II-startup" || pair[0]["point"] == 0.0 {
            assert!(
                (best - lb).abs() <= 1e-9 * lb,
                "free startups: best at the bound {pair:?}"
            );
        }
        let (tb, r) = (
            pair[1]["tb"].as_f64().unwrap(),
            pair[1]["r"].as_f64().unwrap(),
        );
        assert!((r - (tb - best) / tb).abs() < 1e-12);
    }
    for name in ["I", "II", "III", "IV", "V", "II-startup"] {
        let svg = dir.read(&format!("plots/genblock-scenario-{name}.svg"));
        assert!(
            svg.starts_with("<svg") && svg.contains("Ta best"),
            "plot {name}"
        );
    }
    // The text report says how blocks are drawn and gives the figures.
    dir.run(&["experiment", "genblock", "--runs", "2"])
        .expect_status(0)
        .expect_stdout("blocks: each distribution")
        .expect_stdout("scenario II at N = 3200, Tu = 0: R = ");
    dir.run(&["experiment", "genblock", "--runs", "0"])
        .expect_status(2)
        .expect_stderr("--runs must be at least 1");
    dir.run(&["experiment", "genblock", "--runs", "1", "--plot", "nowhere"])
        .expect_status(2)
        .expect_stderr("--plot nowhere: no such folder");
}

#[test]
fn help_lists_genblock() {
    let dir = TestDir::new("help");
    dir.run(&["--help"])
        .expect_status(0)
        .expect_stdout("genblock");
    dir.run(&["genblock", "--help"])
        .expect_status(0)
        .expect_stdout("plan");
    dir.run(&["experiment", "--help"])
        .expect_status(0)
        .expect_stdout("genblock");
    dir.run(&["genblock", "plan"]).expect_status(2);
}
