//! `hetbal map`: platforms in, mapping plans out; bad input exits 2 with one message.

mod support;
use support::TestDir;

/// Four processors; D is far from everyone, so it costs more than it brings when
/// borders are large.
const MATRIX: &str = r#"{
  "processors": [{"name": "A", "w": 1.0}, {"name": "B", "w": 2.0}, {"name": "C", "w": 1.5}, {"name": "D", "w": 0.5}],
  "c": [[0, 0.01, 0.02, 5], [0.01, 0, 0.01, 5], [0.02, 0.01, 0, 5], [5, 5, 5, 0]]
}"#;

const W: [f64; 4] = [1.0, 2.0, 1.5, 0.5];
const C: [[f64; 4]; 4] = [
    [0.0, 0.01, 0.02, 5.0],
    [0.01, 0.0, 0.01, 5.0],
    [0.02, 0.01, 0.0, 5.0],
    [5.0, 5.0, 5.0, 0.0],
];

/// T_step of a plan, recomputed from its ring and shares by the formula of formats.md.
fn t_step_of(plan: &serde_json::Value, work: f64, border: f64) -> f64 {
    let names = ["A", "B", "C", "D"];
    let ring: Vec<usize> = plan["ring"]
        .as_array()
        .unwrap()
        .iter()
        .map(|n| {
            names
                .iter()
                .position(|x| *x == n.as_str().unwrap())
                .unwrap()
        })
        .collect();
    let shares: Vec<f64> = plan["shares"]
        .as_array()
        .unwrap()
        .iter()
        .map(|x| x.as_f64().unwrap())
        .collect();
    let q = ring.len();
    (0..q)
        .map(|k| {
            let i = ring[k];
            let comm = if q < 2 {
                0.0
            } else {
                C[i][ring[(k + q - 1) % q]] + C[i][ring[(k + 1) % q]]
            };
            shares[k] * work * W[i] + border * comm
        })
        .fold(0.0, f64::max)
}

#[test]
fn json_platform_plan_is_consistent_and_exact_is_best() {
    let dir = TestDir::new("matrix");
    dir.write("p.json", MATRIX);
    let mut steps = Vec::new();
    for method in ["exact", "greedy", "local"] {
        let run = dir.run(&[
            "map", "p.json", "--work", "100", "--border", "10", "--items", "1000", "--method",
            method, "--json",
        ]);
        run.expect_status(0);
        let plan = run.json();
        assert_eq!(plan["method"], method);
        let shares: Vec<f64> = plan["shares"]
            .as_array()
            .unwrap()
            .iter()
            .map(|x| x.as_f64().unwrap())
            .collect();
        assert!((shares.iter().sum::<f64>() - 1.0).abs() < 1e-12);
        assert!(shares.iter().all(|&a| a >= 0.0));
        let counts: Vec<u64> = plan["counts"]
            .as_array()
            .unwrap()
            .iter()
            .map(|x| x.as_u64().unwrap())
            .collect();
        assert_eq!(counts.iter().sum::<u64>(), 1000);
        assert_eq!(counts.len(), shares.len());
        let t = plan["t_step"].as_f64().unwrap();
        assert!(
            (t - t_step_of(&plan, 100.0, 10.0)).abs() < 1e-9 * t,
            "{}",
            run.story()
        );
        assert!((plan["t_step_over_work"].as_f64().unwrap() - t / 100.0).abs() < 1e-15);
        // D's exchanges alone (10 * (5 + 5) = 100 s) exceed A, B, C together.
        assert!(
            !plan["ring"]
                .as_array()
                .unwrap()
                .contains(&serde_json::json!("D")),
            "{}",
            run.story()
        );
        steps.push(t);
    }
    // A, B, C all end together: (D_w + D_c * sum_i comm_i / w_i) / sum_i 1/w_i.
    let comm = [0.01 + 0.02, 0.01 + 0.01, 0.02 + 0.01];
    let h: f64 = W[..3].iter().map(|w| 1.0 / w).sum();
    let s: f64 = (0..3).map(|i| comm[i] / W[i]).sum();
    let expected = (100.0 + 10.0 * s) / h;
    assert!(
        (steps[0] - expected).abs() < 1e-9 * expected,
        "exact {} vs {expected}",
        steps[0]
    );
    assert!(steps.iter().all(|&t| t >= steps[0] * (1.0 - 1e-12)));
    // Without borders, D (the fastest) joins.
    let run = dir.run(&["map", "p.json", "--work", "100", "--border", "0", "--json"]);
    run.expect_status(0);
    assert_eq!(run.json()["ring"].as_array().unwrap().len(), 4);
}

#[test]
fn fixed_number_of_processors_and_text_report() {
    let dir = TestDir::new("fixed");
    dir.write("p.json", MATRIX);
    let run = dir.run(&[
        "map",
        "p.json",
        "--work",
        "100",
        "--border",
        "10",
        "--processors",
        "2",
        "--json",
    ]);
    run.expect_status(0);
    assert_eq!(run.json()["ring"].as_array().unwrap().len(), 2);
    let run = dir.run(&[
        "map", "p.json", "--work", "100", "--border", "10", "--items", "7",
    ]);
    run.expect_status(0);
    let out = run.stdout();
    for needle in [
        "method    exact",
        "ring      ",
        "T_step",
        "with 7 whole items",
        "processor",
    ] {
        assert!(out.contains(needle), "lacks {needle:?}{}", run.story());
    }
}

#[test]
fn simgrid_platform_with_units() {
    let dir = TestDir::new("xml");
    let xml = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../hetbal/tests/data/platforms/clusters.xml"
    ))
    .unwrap();
    dir.write("clusters.xml", &xml);
    // 1 unit of work = 1 Gflop, 1 unit of data = 1 MB.
    let mut best = f64::INFINITY;
    for method in ["exact", "greedy", "local"] {
        let run = dir.run(&[
            "map",
            "clusters.xml",
            "--work",
            "1000",
            "--border",
            "10",
            "--method",
            method,
            "--flops-per-unit",
            "1e9",
            "--unit-bytes",
            "1e6",
            "--json",
        ]);
        run.expect_status(0);
        let plan = run.json();
        let t = plan["t_step"].as_f64().unwrap();
        if method == "exact" {
            best = t;
        }
        assert!(
            t >= best * (1.0 - 1e-12),
            "{method} beats exact{}",
            run.story()
        );
        // Exchanges (at most 10 MB over the 10 MB/s WAN, ~1 s) are small next to the
        // work (1000 Gflop over 9 Gflop/s): every host joins.
        assert_eq!(plan["ring"].as_array().unwrap().len(), 6, "{}", run.story());
        let lower = 1000.0 / 9.0;
        assert!(t > lower && t < lower + 2.0, "{t}");
    }
}

#[test]
fn bad_input_exits_2_with_one_clear_message() {
    let dir = TestDir::new("errors");
    dir.write("p.json", MATRIX);
    dir.write("empty.json", "");
    dir.write(
        "bad_field.json",
        r#"{"processors": [{"name": "A", "w": "fast"}], "c": [[0]]}"#,
    );
    dir.write(
        "bad_value.json",
        r#"{"processors": [{"name": "A", "w": -1}], "c": [[0]]}"#,
    );
    dir.write("broken.xml", "<platform version=\"4.1\">\n<zone id=\"z\" routing=\"Full\">\n<host id=\"a\" speed=\"1Gx\"/>\n</zone></platform>");
    let big: Vec<String> = (0..17)
        .map(|i| format!(r#"{{"name": "P{i}", "w": 1}}"#))
        .collect();
    let row = format!("[{}]", vec!["1"; 17].join(","));
    dir.write(
        "big.json",
        format!(
            r#"{{"processors": [{}], "c": [{}]}}"#,
            big.join(","),
            vec![row; 17].join(",")
        ),
    );
    let cases: &[(&[&str], &str)] = &[
        (
            &["map", "missing.json", "--work", "1", "--border", "1"],
            "cannot read missing.json",
        ),
        (
            &["map", "empty.json", "--work", "1", "--border", "1"],
            "empty.json: the file is empty",
        ),
        (
            &["map", "bad_field.json", "--work", "1", "--border", "1"],
            "bad_field.json: field `processors[0].w`",
        ),
        (
            &["map", "bad_value.json", "--work", "1", "--border", "1"],
            "processor \"A\": time per unit of work w = -1",
        ),
        (
            &["map", "broken.xml", "--work", "1", "--border", "1"],
            "broken.xml: line 3: <host> attribute `speed` = \"1Gx\": unknown unit",
        ),
        (
            &["map", "p.json", "--work", "0", "--border", "1"],
            "D_w = 0 must be finite and > 0",
        ),
        (
            &["map", "p.json", "--work", "1", "--border", "-2"],
            "D_c = -2",
        ),
        (
            &[
                "map",
                "p.json",
                "--work",
                "1",
                "--border",
                "1",
                "--processors",
                "5",
            ],
            "5 processors asked: choose from 1 to 4",
        ),
        (
            &[
                "map", "big.json", "--work", "1", "--border", "1", "--method", "exact",
            ],
            "at most 16 processors",
        ),
        (
            &[
                "map",
                "broken.xml",
                "--work",
                "1",
                "--border",
                "1",
                "--unit-bytes",
                "0",
            ],
            "unit_bytes must be finite and > 0",
        ),
    ];
    for (args, needle) in cases {
        dir.run(args).expect_status(2).expect_error_line(needle);
    }
    // clap refuses an unknown method and names the choices.
    dir.run(&[
        "map", "p.json", "--work", "1", "--border", "1", "--method", "magic",
    ])
    .expect_status(2)
    .expect_stderr("invalid value 'magic' for '--method <NAME>'")
    .expect_stderr("[possible values: exact, greedy, local]");
    // The 17-processor platform maps with the default method (local).
    let run = dir.run(&["map", "big.json", "--work", "1", "--border", "1", "--json"]);
    run.expect_status(0);
    assert_eq!(run.json()["method"], "local");
}

#[test]
fn from_platform_to_redistribution_plan() {
    let dir = TestDir::new("instance");
    dir.write("p.json", MATRIX);
    let run = dir.run(&[
        "map",
        "p.json",
        "--work",
        "100",
        "--border",
        "10",
        "--items",
        "999",
        "--instance-out",
        "ring.json",
        "--json",
    ]);
    run.expect_status(0);
    let plan = run.json();
    let instance: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.path.join("ring.json")).unwrap())
            .unwrap();
    assert_eq!(instance["ring"], "bidirectional");
    let procs = instance["processors"].as_array().unwrap();
    let ring = plan["ring"].as_array().unwrap();
    assert_eq!(procs.len(), ring.len());
    let names = ["A", "B", "C", "D"];
    let index = |v: &serde_json::Value| {
        names
            .iter()
            .position(|n| *n == v.as_str().unwrap())
            .unwrap()
    };
    let q = ring.len();
    let mut loads = 0;
    for k in 0..q {
        assert_eq!(procs[k]["name"], ring[k]);
        assert_eq!(procs[k]["target"], plan["counts"][k]);
        loads += procs[k]["load"].as_u64().unwrap();
        // Item data defaults to D_c = 10 units.
        let (i, s, p) = (
            index(&ring[k]),
            index(&ring[(k + 1) % q]),
            index(&ring[(k + q - 1) % q]),
        );
        assert!((procs[k]["c_succ"].as_f64().unwrap() - 10.0 * C[i][s]).abs() < 1e-12);
        assert!((procs[k]["c_pred"].as_f64().unwrap() - 10.0 * C[i][p]).abs() < 1e-12);
    }
    assert_eq!(loads, 999);
    // The ring planner takes it as it is.
    dir.run(&["ring", "plan", "ring.json", "--json"])
        .expect_status(0);
    // A mapping on one processor has no ring to write.
    dir.write(
        "one.json",
        r#"{"processors": [{"name": "A", "w": 1}], "c": [[0]]}"#,
    );
    dir.run(&[
        "map",
        "one.json",
        "--work",
        "1",
        "--border",
        "1",
        "--items",
        "5",
        "--instance-out",
        "r.json",
    ])
    .expect_status(2)
    .expect_error_line("uses one processor (A), there is no ring");
    // --instance-out needs --items.
    dir.run(&[
        "map",
        "p.json",
        "--work",
        "1",
        "--border",
        "1",
        "--instance-out",
        "r.json",
    ])
    .expect_status(2);
}

#[test]
fn shared_links_compare_blind_and_aware_rings() {
    let dir = TestDir::new("sharing");
    let xml = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../hetbal/tests/data/platforms/clusters.xml"
    ))
    .unwrap();
    dir.write("clusters.xml", &xml);
    dir.write("p.json", MATRIX);
    let args = [
        "map",
        "clusters.xml",
        "--work",
        "100",
        "--border",
        "50",
        "--flops-per-unit",
        "1e9",
        "--unit-bytes",
        "1e6",
    ];
    let plain = dir.run(&[&args[..], &["--json"]].concat());
    plain.expect_status(0);
    let shared = dir.run(&[&args[..], &["--sharing", "--json"]].concat());
    shared.expect_status(0);
    // Sharing links can only slow the exchanges down.
    let (t_plain, t_shared) = (
        plain.json()["t_step"].as_f64().unwrap(),
        shared.json()["t_step"].as_f64().unwrap(),
    );
    assert!(
        t_shared >= t_plain * (1.0 - 1e-12),
        "{t_shared} < {t_plain}"
    );
    let report = dir.run(&[&args[..], &["--sharing"]].concat());
    report.expect_status(0);
    assert!(report.stdout().contains("H2 gains"), "{}", report.story());
    dir.run(&["map", "p.json", "--work", "1", "--border", "1", "--sharing"])
        .expect_status(2)
        .expect_error_line("--sharing: p.json gives a cost matrix");
    dir.run(&[&args[..], &["--sharing", "--items", "10"]].concat())
        .expect_status(2);
}

#[test]
fn generated_platforms_feed_map() {
    let dir = TestDir::new("generate");
    let a = dir.run(&[
        "platform", "generate", "tiers", "--seed", "4", "--wan", "2", "--hosts", "2",
    ]);
    a.expect_status(0);
    let b = dir.run(&[
        "platform", "generate", "tiers", "--seed", "4", "--wan", "2", "--hosts", "2", "--out",
        "t.json",
    ]);
    b.expect_status(0);
    let written = std::fs::read_to_string(dir.path.join("t.json")).unwrap();
    assert_eq!(a.stdout(), written, "same seed, same platform");
    let doc: serde_json::Value = serde_json::from_str(&written).unwrap();
    assert_eq!(doc["processors"].as_array().unwrap().len(), 2 * 2 * 2 * 2);
    let run = dir.run(&[
        "map",
        "t.json",
        "--work",
        "1",
        "--border",
        "0.064",
        "--sharing",
        "--json",
    ]);
    run.expect_status(0);
    assert!(run.json()["t_step"].as_f64().unwrap() > 0.0);
    let c = dir.run(&[
        "platform",
        "generate",
        "complete",
        "--processors",
        "5",
        "--seed",
        "9",
    ]);
    c.expect_status(0);
    assert_eq!(c.json()["processors"].as_array().unwrap().len(), 5);
    dir.run(&["platform", "generate", "mesh"])
        .expect_status(2)
        .expect_error_line("unknown platform kind \"mesh\"");
    dir.run(&["platform", "generate", "complete", "--processors", "0"])
        .expect_status(2)
        .expect_error_line("processors = 0: must be at least 1");
}

/// `--start-loads`: by name, in platform order, from a text or JSON file; the
/// instance's loads are the given ones in ring order, its targets the whole
/// counts; refusals name what is wrong.
#[test]
fn start_loads_from_the_user() {
    let dir = TestDir::new("start-loads");
    dir.write("p.json", MATRIX);
    let base = ["map", "p.json", "--work", "100", "--border", "0.1"];
    let plan_with = |loads: &str| {
        let run = dir.run(
            &[
                &base[..],
                &[
                    "--instance-out",
                    "ring.json",
                    "--start-loads",
                    loads,
                    "--json",
                ],
            ]
            .concat(),
        );
        run.expect_status(0);
        let instance: serde_json::Value = serde_json::from_str(&dir.read("ring.json")).unwrap();
        (run.json(), instance)
    };
    // D_c = 0.1 is small: every processor is in the ring.
    let given = [("A", 40u64), ("B", 1), ("C", 1), ("D", 58)];
    let by_name = "A=40,B=1,C=1,D=58";
    dir.write("loads.txt", "40 1\n1 58\n");
    dir.write("loads.json", r#"{"D": 58, "C": 1, "B": 1, "A": 40}"#);
    dir.write("list.json", "[40, 1, 1, 58]");
    for loads in [by_name, "40,1,1,58", "loads.txt", "loads.json", "list.json"] {
        let (plan, instance) = plan_with(loads);
        let procs = instance["processors"].as_array().unwrap();
        assert_eq!(procs.len(), 4, "{loads}");
        let mut total = 0;
        for (k, proc) in procs.iter().enumerate() {
            let name = proc["name"].as_str().unwrap();
            assert_eq!(plan["ring"][k], name);
            let expected = given.iter().find(|(n, _)| *n == name).unwrap().1;
            assert_eq!(proc["load"], expected, "{loads}: {name}");
            assert_eq!(proc["target"], plan["counts"][k], "{loads}");
            total += proc["target"].as_u64().unwrap();
        }
        // --items defaults to the sum of the start loads.
        assert_eq!(total, 100, "{loads}");
        dir.run(&["ring", "plan", "ring.json", "--json"])
            .expect_status(0);
    }
    // A processor may start with no items: the instance says so and is planned.
    let (_, instance) = plan_with("A=40,B=1,C=0,D=58");
    let c = instance["processors"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["name"] == "C")
        .unwrap();
    assert_eq!(c["load"], 0);
    dir.run(&["ring", "plan", "ring.json", "--json"])
        .expect_status(0);
    // The even split stays the default.
    let run = dir.run(&[&base[..], &["--items", "10", "--instance-out", "even.json"]].concat());
    run.expect_status(0);
    let even: serde_json::Value = serde_json::from_str(&dir.read("even.json")).unwrap();
    let loads: Vec<u64> = even["processors"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["load"].as_u64().unwrap())
        .collect();
    assert_eq!(loads, vec![3, 3, 2, 2]);
    // Refusals.
    let refuse = |loads: &str, extra: &[&str], needle: &str| {
        dir.run(
            &[
                &base[..],
                &["--instance-out", "r.json", "--start-loads", loads],
                extra,
            ]
            .concat(),
        )
        .expect_status(2)
        .expect_error_line(needle);
    };
    refuse(
        "A=1,Z=2",
        &[],
        "--start-loads: \"Z\" is not a processor of the platform",
    );
    refuse("1,2,3", &[], "--start-loads: 3 counts for 4 processors");
    refuse("A=1,2", &[], "mixes NAME=N entries with plain counts");
    refuse("A=1,A=2", &[], "\"A\" is given twice");
    refuse("A=x", &[], "A: \"x\" is not a whole number >= 0");
    refuse(
        "A=40,B=1,C=1,D=58",
        &["--items", "99"],
        "--start-loads hold 100 items and --items says 99",
    );
    dir.write("bad.json", "{\"A\": -1}");
    refuse(
        "bad.json",
        &[],
        "--start-loads bad.json: A: -1 is not a whole number >= 0",
    );
    // Items on a processor the ring leaves out: with large borders only A, B, C
    // (D is far from everyone) are mapped.
    dir.run(&[
        "map",
        "p.json",
        "--work",
        "100",
        "--border",
        "10",
        "--instance-out",
        "r.json",
        "--start-loads",
        "A=5,B=5,C=5,D=5",
    ])
    .expect_status(2)
    .expect_error_line("items on processors outside the chosen ring: D (5)");
    // --start-loads needs --instance-out; --instance-out needs a number of items.
    dir.run(&[&base[..], &["--start-loads", by_name]].concat())
        .expect_status(2);
    dir.run(&[&base[..], &["--instance-out", "r.json"]].concat())
        .expect_status(2)
        .expect_error_line("--instance-out needs the number of items");
}

/// A generated cluster of clusters keeps its network through JSON: `map
/// --sharing` routes the ring along widest paths and lists the routes.
#[test]
fn generated_clusters_are_routed() {
    let dir = TestDir::new("clusters");
    dir.run(&[
        "platform", "generate", "clusters", "--seed", "2", "--out", "c.json",
    ])
    .expect_status(0);
    let doc: serde_json::Value = serde_json::from_str(&dir.read("c.json")).unwrap();
    assert_eq!(doc["routers"].as_array().unwrap().len(), 12);
    assert!(doc["links"]
        .as_array()
        .unwrap()
        .iter()
        .all(|l| l["ends"].is_array()));
    // Units: the JSON's unit of data is one byte; a border of 64 kB per unit of work.
    let run = dir.run(&[
        "map",
        "c.json",
        "--work",
        "1",
        "--border",
        "6400",
        "--sharing",
    ]);
    run.expect_status(0);
    let out = run.stdout();
    assert!(
        out.contains("routed along widest paths of the network"),
        "{}",
        run.story()
    );
    assert!(out.contains("routes of the H2 ring:"), "{}", run.story());
    assert!(out.contains("_up fabric"), "{}", run.story());
    dir.run(&["platform", "generate", "clusters", "--sites", "0"])
        .expect_status(2)
        .expect_error_line("clusters = 0");
}
