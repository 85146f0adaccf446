//! Integration tests of `hetbal scatter` and `hetbal experiment scatter-seismic`.
//! Each test gets its own folder; a failure prints the whole story: command,
//! folder, exit status, stdout, stderr.

mod support;
use support::TestDir;

/// model.md's three processors: Theorem 3's order gives 14, serving P1 first 12.
const THREE: &str = r#"{
  "items": 3,
  "root": "P2",
  "processors": [
    {"name": "P0", "comm": {"per_item": 2.0, "startup": 0.0}, "comp": {"per_item": 6.0, "startup": 0.0}},
    {"name": "P1", "comm": {"per_item": 4.0, "startup": 0.0}, "comp": {"per_item": 8.0, "startup": 0.0}},
    {"name": "P2", "comm": {"per_item": 0.0, "startup": 0.0}, "comp": {"per_item": 6.0, "startup": 0.0}}
  ]
}"#;

/// Affine costs with startups, a table and the `always` rule.
const MIXED: &str = r#"{
  "items": 40,
  "root": "r",
  "startup_rule": "always",
  "processors": [
    {"name": "a", "comm": {"per_item": 0.25, "startup": 1.0}, "comp": {"per_item": 2.0, "startup": 0.5}},
    {"name": "r", "comm": {"per_item": 0.0}, "comp": {"per_item": 3.0}},
    {"name": "b", "comm": {"per_item": 0.125}, "comp": {"per_item": 1.0, "startup": 4.0}}
  ]
}"#;

fn json(v: &str) -> serde_json::Value {
    serde_json::from_str(v).expect("valid JSON")
}

#[test]
fn plan_finds_the_order_theorem3_misses() {
    let dir = TestDir::new("three");
    dir.write("three.json", THREE);
    dir.run(&["scatter", "plan", "three.json"])
        .expect_status(0)
        .expect_stdout("order   best: the best of all 2 orders (exhaustive search); Theorem 3's order (decreasing bandwidth) gives 14 s")
        .expect_stdout("   0  P1               1             0             0             4             8            12")
        .expect_stdout("makespan     12 s")
        .expect_stdout("optimal      yes for this order");
    dir.run(&["scatter", "plan", "three.json", "--order", "bandwidth"])
        .expect_status(0)
        .expect_stdout("makespan     14 s");
    dir.run(&[
        "scatter",
        "plan",
        "three.json",
        "--order",
        "given",
        "--method",
        "naive-dp",
    ])
    .expect_status(0)
    .expect_stdout("method  naive-dp")
    .expect_stdout("makespan     14 s");
}

#[test]
fn plan_json_follows_formats_md() {
    let dir = TestDir::new("json");
    dir.write("three.json", THREE);
    let run = dir.run(&["scatter", "plan", "three.json", "--json"]);
    run.expect_status(0);
    assert_eq!(
        run.json(),
        json(
            r#"{"method": "exact", "order": ["P1", "P0", "P2"], "counts": [1, 1, 1],
                "displacements": [0, 1, 2], "finish_times": [12.0, 12.0, 12.0],
                "makespan": 12.0, "lower_bound": 12.0}"#
        ),
        "{}",
        run.story()
    );
    // Field order as in formats.md.
    let text = run.stdout();
    let at = |key: &str| text.find(&format!("\"{key}\"")).expect(key);
    let keys = [
        "method",
        "order",
        "counts",
        "displacements",
        "finish_times",
        "makespan",
        "lower_bound",
    ];
    assert!(
        keys.windows(2).all(|w| at(w[0]) < at(w[1])),
        "{}",
        run.story()
    );
}

#[test]
fn every_method_and_order_agrees_with_the_optimum() {
    let dir = TestDir::new("methods");
    dir.write("mixed.json", MIXED);
    let makespan = |args: &[&str]| -> f64 {
        let mut all = vec!["scatter", "plan", "mixed.json", "--json"];
        all.extend_from_slice(args);
        let run = dir.run(&all);
        run.expect_status(0);
        let plan = run.json();
        let counts: u64 = plan["counts"]
            .as_array()
            .unwrap()
            .iter()
            .map(|c| c.as_u64().unwrap())
            .sum();
        assert_eq!(counts, 40, "{}", run.story());
        assert_eq!(plan["order"].as_array().unwrap().last().unwrap(), "r");
        plan["makespan"].as_f64().unwrap()
    };
    for order in ["given", "bandwidth", "best"] {
        let exact = makespan(&["--order", order]);
        assert_eq!(makespan(&["--order", order, "--method", "naive-dp"]), exact);
        assert!(makespan(&["--order", order, "--method", "lp"]) >= exact);
    }
    assert!(makespan(&["--order", "best"]) <= makespan(&["--order", "bandwidth"]));
    dir.run(&["scatter", "plan", "mixed.json", "--method", "lp"])
        .expect_status(0)
        .expect_stdout("rational     ")
        .expect_stdout("guarantee    with every startup paid these counts end at")
        .expect_stdout("this instance pays every startup (always)");
    dir.run(&["scatter", "plan", "mixed.json", "--method", "linear", "--order", "given"])
        .expect_status(2)
        .expect_stderr("error: method linear needs linear costs (startup 0): processor 0 (a) has comm startup 1 (use lp or exact)");
    dir.write("three.json", THREE);
    dir.run(&[
        "scatter",
        "plan",
        "three.json",
        "--method",
        "linear",
        "--order",
        "given",
    ])
    .expect_status(0)
    .expect_stdout("no startups here, so both rules agree");
}

#[test]
fn toml_instance_plans_like_json() {
    let dir = TestDir::new("toml");
    dir.write("three.json", THREE);
    dir.write(
        "three.toml",
        r#"items = 3
root = "P2"
[[processors]]
name = "P0"
comm = { per_item = 2.0, startup = 0.0 }
comp = { per_item = 6.0, startup = 0.0 }
[[processors]]
name = "P1"
comm = { per_item = 4.0 }
comp = { per_item = 8.0 }
[[processors]]
name = "P2"
comm = { table = [0.0, 0.0, 0.0, 0.0] }
comp = { table = [0.0, 6.0, 12.0, 18.0] }
"#,
    );
    let a = dir.run(&["scatter", "plan", "three.toml", "--json"]);
    a.expect_status(0);
    let b = dir.run(&["scatter", "plan", "three.json", "--json"]);
    assert_eq!(a.stdout(), b.stdout(), "{}{}", a.story(), b.story());
}

#[test]
fn gantt_draws_waiting_receiving_and_computing() {
    let dir = TestDir::new("gantt");
    dir.write("three.json", THREE);
    dir.run(&["scatter", "plan", "three.json", "--gantt", "g.svg"])
        .expect_status(0)
        .expect_stderr("Gantt chart written to g.svg");
    let svg = dir.read("g.svg");
    assert!(svg.starts_with("<svg"));
    for text in [
        "P0",
        "P1",
        "P2",
        "waiting",
        "receiving",
        "computing",
        "makespan 12 s",
    ] {
        assert!(svg.contains(text), "the chart lacks {text:?}");
    }
    // P1 first: receives 0..4, computes 4..12; P0 waits 0..4, receives 4..6, …
    // 3 lanes: 1 waiting bar (P0), 2 receiving, 3 computing, 1 sending (root);
    // plus one legend swatch each.
    let count = |fill: &str| svg.matches(&format!("fill=\"#{fill}\"")).count();
    assert_eq!(count("D0D0D0"), 2);
    assert_eq!(count("1F5FB4"), 3);
    assert_eq!(count("2CA02C"), 4);
    assert_eq!(count("D95F02"), 2);
    dir.run(&[
        "scatter",
        "plan",
        "three.json",
        "--gantt",
        "no-such-dir/g.svg",
    ])
    .expect_status(2)
    .expect_stderr("cannot write no-such-dir/g.svg");
}

#[test]
fn gantt_of_too_many_processors_is_refused() {
    let dir = TestDir::new("gantt-large");
    let processors: Vec<String> = (0..600)
        .map(|i| {
            let comm = if i == 0 { 0.0 } else { 0.001 };
            format!(
                r#"{{"name": "p{i}", "comm": {{"per_item": {comm}}}, "comp": {{"per_item": 1.0}}}}"#
            )
        })
        .collect();
    dir.write(
        "big.json",
        format!(
            r#"{{"items": 5000, "root": "p0", "processors": [{}]}}"#,
            processors.join(",")
        ),
    );
    dir.run(&["scatter", "plan", "big.json", "--gantt", "g.svg"])
        .expect_status(2)
        .expect_stderr("600 processors are too many to read");
    dir.run(&["scatter", "plan", "big.json", "--method", "lp"])
        .expect_status(0)
        .expect_stdout("makespan");
}

#[test]
fn root_candidates_move_the_items_to_a_better_root() {
    let dir = TestDir::new("roots");
    // The items sit on P0, slow (4 s/item) with slow links to P2 and P3; P1 is
    // 4 times faster and well connected.
    let instance = |root: &str, comm: [f64; 4]| {
        let procs: Vec<String> = (0..4)
            .map(|i| {
                let comp = if i == 0 { 4.0 } else { 1.0 };
                format!(r#"{{"name": "P{i}", "comm": {{"per_item": {}}}, "comp": {{"per_item": {comp}}}}}"#, comm[i])
            })
            .collect();
        format!(
            r#"{{"items": 128, "root": "{root}", "processors": [{}]}}"#,
            procs.join(",")
        )
    };
    dir.write("on-p0.json", instance("P0", [0.0, 0.015625, 1.0, 1.0]));
    dir.write(
        "from-p1.json",
        instance("P1", [0.015625, 0.0, 0.015625, 0.015625]),
    );
    dir.run(&[
        "scatter",
        "plan",
        "on-p0.json",
        "--root-candidate",
        "from-p1.json",
    ])
    .expect_status(0)
    .expect_stdout("root    chosen among 2 candidates (the items sit on P0):")
    .expect_stdout("  <- chosen")
    .expect_stdout("note         times include 2 s to move the items from P0 to P1 first");
    let run = dir.run(&[
        "scatter",
        "plan",
        "on-p0.json",
        "--root-candidate",
        "from-p1.json",
        "--json",
        "--gantt",
        "g.svg",
    ]);
    run.expect_status(0);
    let plan = run.json();
    assert_eq!(plan["order"].as_array().unwrap().last().unwrap(), "P1");
    let finish = plan["finish_times"].as_array().unwrap();
    assert!(
        finish.iter().all(|t| t.as_f64().unwrap() >= 2.0),
        "{}",
        run.story()
    );
    assert!(dir.read("g.svg").contains("<svg"));
    // A candidate for another platform is refused, naming its file.
    dir.write(
        "other.json",
        instance("P1", [0.015625, 0.0, 0.015625, 0.015625]).replace("128", "100"),
    );
    dir.run(&[
        "scatter",
        "plan",
        "on-p0.json",
        "--root-candidate",
        "other.json",
    ])
    .expect_status(2)
    .expect_stderr(
        "error: other.json: (root P1) scatters 100 items, the data holder's instance 128",
    );
}

/// Every class of bad input: exit status 2 and one message naming file, place and
/// rule.
#[test]
fn bad_inputs_exit_2_with_clear_messages() {
    let proc = |name: &str, comm: &str, comp: &str| {
        format!(r#"{{"name": "{name}", "comm": {comm}, "comp": {comp}}}"#)
    };
    let one = r#"{"per_item": 1.0}"#;
    let zero = r#"{"per_item": 0.0}"#;
    let doc = |items: &str, root: &str, procs: &[String]| {
        format!(
            r#"{{"items": {items}, "root": "{root}", "processors": [{}]}}"#,
            procs.join(",")
        )
    };
    let root = proc("r", zero, one);
    let cases: Vec<(&str, String, &str)> = vec![
        ("empty", String::new(), "the file is empty"),
        ("truncated", r#"{"items": 3, "root": "r", "processors": [{"name""#.into(), "truncated"),
        ("not JSON", "items: 3".into(), "s.json: document: expected value"),
        ("items not a number", doc(r#""many""#, "r", std::slice::from_ref(&root)), "field `items`: invalid type: string \"many\", expected u64"),
        ("negative items", doc("-1", "r", std::slice::from_ref(&root)), "field `items`: invalid value: integer `-1`, expected u64"),
        ("items beyond u64", doc("18446744073709551616", "r", std::slice::from_ref(&root)), "field `items`"),
        ("missing root", r#"{"items": 3, "processors": []}"#.into(), "missing field `root`"),
        ("no processors", doc("3", "r", &[]), "a scatter needs at least 1 processor (its root), this one has 0"),
        ("unknown root", doc("3", "zz", std::slice::from_ref(&root)), "root \"zz\" is not one of the processors (r)"),
        ("root comm", doc("3", "r", &[proc("r", r#"{"per_item": 0.5, "startup": 0.0}"#, one)]),
         "processor 0 (r): comm must be zero for the root (it keeps its share without sending it), got per_item 0.5, startup 0"),
        ("unknown processor field", doc("3", "r", &[root.clone(), r#"{"name": "x", "comm": {"per_item": 1}, "comp": {"per_item": 1}, "speed": 2}"#.into()]),
         "processor 1 (x): field `speed`: unknown field `speed`"),
        ("unknown cost field", doc("3", "r", &[root.clone(), proc("x", r#"{"rate": 1}"#, one)]),
         "processor 1 (x): field `comm.rate`: unknown field `rate`"),
        ("unknown top-level field", r#"{"items": 3, "root": "r", "processors": [], "extra": 1}"#.into(), "unknown field `extra`"),
        ("unknown rule", r#"{"items": 3, "root": "r", "startup_rule": "sometimes", "processors": []}"#.into(), "unknown variant `sometimes`"),
        ("negative per_item", doc("3", "r", &[root.clone(), proc("x", r#"{"per_item": -1}"#, one)]),
         "processor 1 (x): comm per_item -1 must be >= 0"),
        ("negative startup", doc("3", "r", &[root.clone(), proc("x", one, r#"{"per_item": 1, "startup": -0.5}"#)]),
         "processor 1 (x): comp startup -0.5 must be >= 0"),
        ("cost out of range", doc("3", "r", &[root.clone(), proc("x", r#"{"per_item": 1e999}"#, one)]),
         "field `comm.per_item`: number out of range"),
        ("no cost", doc("3", "r", &[root.clone(), proc("x", "{}", one)]),
         "processor 1 (x): comm needs `per_item` (with an optional `startup`) or a `table`"),
        ("both kinds", doc("3", "r", &[root.clone(), proc("x", r#"{"per_item": 1, "table": [0, 1, 2, 3]}"#, one)]),
         "processor 1 (x): comm gives both `table` and `per_item`: give one of them"),
        ("startup with table", doc("3", "r", &[root.clone(), proc("x", r#"{"startup": 1, "table": [0, 1, 2, 3]}"#, one)]),
         "processor 1 (x): comm gives `startup` with `table`"),
        ("table too short", doc("3", "r", &[root.clone(), proc("x", one, r#"{"table": [0, 1]}"#)]),
         "processor 1 (x): comp table has 2 entries but items is 3: give t(0) to t(3), 4 entries"),
        ("table decreasing", doc("5", "r", &[root.clone(), proc("a", one, one), proc("b", one, one), proc("seven", one, r#"{"table": [0, 1, 2, 3, 4, 3.5]}"#)]),
         "processor 3 (seven): comp table must be non-decreasing at 5 items (t(4) = 4 > t(5) = 3.5)"),
        ("table not from 0", doc("3", "r", &[root.clone(), proc("x", r#"{"table": [1, 1, 2, 3]}"#, one)]),
         "processor 1 (x): comm table t(0) 1 must be 0 (no items take no time)"),
        ("duplicate names", doc("3", "r", &[root.clone(), proc("r", one, one)]),
         "processor 1 (r): name \"r\" must be unique, processor 0 has it too"),
        ("empty name", doc("3", "r", &[root.clone(), proc("", one, one)]), "processor 1: name \"\" must not be empty"),
        ("trailing garbage", format!("{} ]", doc("3", "r", std::slice::from_ref(&root))), "unexpected text after the document"),
    ];
    let dir = TestDir::new("bad-input");
    for (what, contents, message) in &cases {
        dir.write("s.json", contents);
        let run = dir.run(&["scatter", "plan", "s.json"]);
        run.expect_status(2);
        let stderr = run.stderr();
        assert!(
            stderr.contains(message)
                && stderr.starts_with("error: s.json")
                && stderr.lines().count() == 1,
            "case {what:?}: stderr lacks {message:?} (or is not one line naming the file){}",
            run.story()
        );
    }
    // TOML has NaN and infinities; they are refused too.
    for (value, message) in [
        ("nan", "comp per_item NaN must be a number >= 0"),
        ("inf", "comp per_item inf must be finite"),
    ] {
        dir.write(
            "s.toml",
            format!("items = 2\nroot = \"r\"\n[[processors]]\nname = \"r\"\ncomm = {{ per_item = 0.0 }}\ncomp = {{ per_item = {value} }}\n"),
        );
        dir.run(&["scatter", "plan", "s.toml"])
            .expect_status(2)
            .expect_stderr(&format!("s.toml: processor 0 (r): {message}"));
    }
    // Arguments, files and sizes.
    dir.write("three.json", THREE);
    dir.run(&["scatter", "plan", "three.json", "--method", "magic"])
        .expect_status(2)
        .expect_stderr(
            "error: unknown method \"magic\": choose one of naive-dp, exact, lp, linear",
        );
    dir.run(&["scatter", "plan", "three.json", "--order", "random"])
        .expect_status(2)
        .expect_stderr("error: unknown order \"random\": choose one of given, bandwidth, best");
    dir.run(&["scatter", "plan", "missing.json"])
        .expect_status(2)
        .expect_stderr("cannot read missing.json");
    dir.write("bin.json", [0xff, 0xfe, 0x00, 0x41]);
    dir.run(&["scatter", "plan", "bin.json"])
        .expect_status(2)
        .expect_stderr("bin.json: not UTF-8");
    dir.write(
        "big.json",
        THREE.replace("\"items\": 3", "\"items\": 1000000"),
    );
    dir.run(&["scatter", "plan", "big.json", "--method", "naive-dp"])
        .expect_status(2)
        .expect_stderr("error: method naive-dp would need 1500004500003 steps for 1000000 items on 3 processors, beyond its limit of 40000000000 (use exact: the same optimum in O(p N))");
    dir.write(
        "huge.json",
        THREE.replace("\"items\": 3", "\"items\": 1000000000000"),
    );
    dir.run(&["scatter", "plan", "huge.json"])
        .expect_status(2)
        .expect_stderr("(use lp: O(p^2) whatever the number of items, within its printed bound)");
    dir.run(&["scatter", "plan", "huge.json", "--method", "lp"])
        .expect_status(0)
        .expect_stdout("scatter of 1000000000000 items");
    dir.write(
        "table.json",
        THREE.replace(
            r#""comp": {"per_item": 6.0, "startup": 0.0}}"#,
            r#""comp": {"table": [0, 6, 12, 18]}}"#,
        ),
    );
    dir.run(&["scatter", "plan", "table.json", "--method", "lp"])
        .expect_status(2)
        .expect_stderr(
            "error: method lp needs affine costs: processor 0 (P0) has a comp table (use exact)",
        );
    dir.run(&["scatter", "plan", "table.json"]).expect_status(0);
}

/// Whatever the bytes, hetbal answers with exit status 0 or 2 and never panics.
#[test]
fn never_panics_on_mangled_files() {
    let dir = TestDir::new("mangled");
    for input in support::mangled(MIXED, 9, 80, 0x9e37_79b9_7f4a_7c15) {
        dir.write("s.json", &input);
        for method in ["exact", "lp", "linear", "naive-dp"] {
            dir.run(&["scatter", "plan", "s.json", "--method", method])
                .expect_answer_or_refusal();
        }
    }
}

#[test]
fn experiment_scatter_seismic_rebuilds_the_papers_case() {
    let dir = TestDir::new("seismic");
    let text = dir.run(&["experiment", "scatter-seismic", "--gantt-dir", "."]);
    text.expect_status(0)
        .expect_stdout("assumed (the paper's text lost these values):")
        .expect_stdout("is calibrated on one measurement")
        .expect_stdout("merlin (the paper's processors 5 and 6")
        .expect_stdout("  uniform   uniform bandwidth-descending")
        .expect_stdout("balancing divides the predicted time by");
    for figure in ["uniform", "balanced-descending", "balanced-ascending"] {
        let svg = dir.read(&format!("scatter-seismic-{figure}.svg"));
        assert!(
            svg.contains("leda-8") && svg.contains("dinadan"),
            "{figure}"
        );
    }
    let run = dir.run(&["experiment", "scatter-seismic", "--json"]);
    run.expect_status(0);
    let table = run.json();
    assert_eq!(table["experiment"], "scatter-seismic");
    assert_eq!(table["parameters"]["items"], 817_101);
    assert!(table["parameters"]["assumptions"].as_array().unwrap().len() >= 8);
    let rows = table["rows"].as_array().unwrap();
    let row = |method: &str, order: &str| {
        rows.iter()
            .find(|r| r["method"] == method && r["order"] == order)
            .unwrap_or_else(|| panic!("no row {method} {order}{}", run.story()))
    };
    let makespan = |r: &serde_json::Value| r["makespan"].as_f64().unwrap();
    let uniform = row("uniform", "bandwidth-descending");
    let lp_desc = row("lp", "bandwidth-descending");
    let exact_desc = row("exact", "bandwidth-descending");
    let exact_asc = row("exact", "bandwidth-ascending");
    let best = row("exact", "best");
    assert_eq!(uniform["paper_makespan"], 853.0);
    assert_eq!(lp_desc["paper_makespan"], 430.0);
    assert_eq!(row("lp", "bandwidth-ascending")["paper_makespan"], 486.0);
    assert!(exact_desc["paper_makespan"].is_null());
    // The calibrated LAN makes the LP predict the measured 430 s.
    assert!((makespan(lp_desc) - 430.0).abs() < 0.1, "{}", run.story());
    // Balancing roughly halves the time; the ascending order is slower; best <= both.
    assert!(makespan(uniform) > 1.8 * makespan(exact_desc));
    assert!(makespan(exact_asc) > makespan(exact_desc));
    assert!(makespan(best) <= makespan(exact_desc) && makespan(exact_desc) <= makespan(lp_desc));
    for r in rows {
        let counts: u64 = r["counts"]
            .as_array()
            .unwrap()
            .iter()
            .map(|c| c.as_u64().unwrap())
            .sum();
        assert_eq!(counts, 817_101);
        assert!(r["lower_bound"].as_f64().unwrap() <= makespan(r) + 1e-9);
    }
    // The instance it prints is a valid scatter instance that plans to the same
    // numbers.
    dir.write("seismic.json", table["parameters"]["instance"].to_string());
    let planned = dir.run(&[
        "scatter",
        "plan",
        "seismic.json",
        "--order",
        "given",
        "--json",
    ]);
    planned.expect_status(0);
    assert_eq!(
        planned.json()["makespan"],
        exact_desc["makespan"],
        "{}",
        planned.story()
    );
    assert_eq!(planned.json()["counts"], exact_desc["counts"]);
}

#[test]
fn help_lists_scatter_and_experiment() {
    let dir = TestDir::new("help");
    dir.run(&["--help"])
        .expect_status(0)
        .expect_stdout("scatter")
        .expect_stdout("experiment");
    dir.run(&["scatter", "plan", "--help"])
        .expect_status(0)
        .expect_stdout("--method")
        .expect_stdout("--root-candidate");
    dir.run(&["experiment", "--help"])
        .expect_status(0)
        .expect_stdout("scatter-seismic");
    dir.run(&["scatter", "plan"]).expect_status(2);
}
