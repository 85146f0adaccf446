//! `hetbal replay`: with the cargo feature `replay`, plans replayed under SimGrid
//! (report, JSON, platforms, broken plans, limits); without it, the message that
//! says how to build it.

mod support;

const INSTANCE: &str = r#"{ "ring": "bidirectional", "processors": [
  {"name": "A", "load": 6, "target": 2, "c_succ": 1.0, "c_pred": 1.5},
  {"name": "B", "load": 1, "target": 3, "c_succ": 2.0, "c_pred": 1.0},
  {"name": "C", "load": 1, "target": 3, "c_succ": 1.0, "c_pred": 2.0},
  {"name": "D", "load": 2, "target": 2, "c_succ": 1.5, "c_pred": 1.0} ] }"#;

#[cfg(not(feature = "replay"))]
#[test]
fn without_the_feature_replay_says_how_to_build_it() {
    let dir = support::TestDir::new("replay-no-feature");
    dir.write("ring.json", INSTANCE);
    dir.run(&["ring", "plan", "ring.json", "--json"]);
    for args in [
        &["replay", "plan.json", "--instance", "ring.json"][..],
        &["replay"][..],
    ] {
        dir.run(args)
            .expect_status(2)
            .expect_stderr("--features replay")
            .expect_stderr("libsimgrid-dev");
    }
    dir.run(&[
        "experiment",
        "ring-iterative",
        "--rings",
        "3",
        "--draws",
        "1",
        "--ratios",
        "1",
        "--iterations",
        "4",
        "--engine",
        "simgrid",
    ])
    .expect_status(2)
    .expect_stderr("--features replay");
}

#[cfg(feature = "replay")]
mod with_simgrid {
    use super::support::TestDir;
    use super::INSTANCE;

    /// Three hosts `a`, `b`, `c` (time per item 1, 1, 2) and a trace that slows `b`
    /// down 4 times after iteration 4: with 60 items the initial loads 24, 24, 12
    /// take 24 s on every host, and `b` is the slowest ever after.
    const ITERATIVE_PLATFORM: &str = r#"{"processors": [{"name": "a", "w": 1.0}, {"name": "b", "w": 1.0}, {"name": "c", "w": 2.0}],
        "c": [[0, 0.01, 0.02], [0.01, 0, 0.01], [0.02, 0.01, 0]]}"#;

    /// The ring's links as a SimGrid platform: 10 ms of latency per link, and
    /// bandwidths that give 1 MB items the instance's costs.
    const PLATFORM: &str = r#"<?xml version='1.0'?>
<!DOCTYPE platform SYSTEM "https://simgrid.org/simgrid.dtd">
<platform version="4.1">
  <zone id="ring" routing="Full">
    <host id="A" speed="1Gf"/><host id="B" speed="1Gf"/><host id="C" speed="1Gf"/><host id="D" speed="1Gf"/>
    <link id="ab" bandwidth="1MBps" latency="10ms"/>
    <link id="bc" bandwidth="500kBps" latency="10ms"/>
    <link id="cd" bandwidth="1MBps" latency="10ms"/>
    <link id="da" bandwidth="666666.6666666666Bps" latency="10ms"/>
    <route src="A" dst="B"><link_ctn id="ab"/></route>
    <route src="B" dst="C"><link_ctn id="bc"/></route>
    <route src="C" dst="D"><link_ctn id="cd"/></route>
    <route src="D" dst="A"><link_ctn id="da"/></route>
  </zone>
</platform>
"#;

    fn planned(name: &str) -> TestDir {
        let dir = TestDir::new(name);
        dir.write("ring.json", INSTANCE);
        let plan = dir.run(&["ring", "plan", "ring.json", "--json"]);
        plan.expect_status(0);
        dir.write("plan.json", plan.stdout());
        dir
    }

    #[test]
    fn a_valid_plan_replays_exactly_under_oneport() {
        let dir = planned("replay-oneport");
        let run = dir.run(&["replay", "plan.json", "--instance", "ring.json", "--json"]);
        run.expect_status(0);
        let report = run.json();
        // The fields of formats.md, no more (serde_json sorts them).
        let keys: Vec<&str> = report
            .as_object()
            .unwrap()
            .keys()
            .map(String::as_str)
            .collect();
        assert_eq!(
            keys,
            ["model", "plan_makespan", "simgrid_makespan", "transfers"],
            "{}",
            run.story()
        );
        assert_eq!(report["model"], "oneport", "{}", run.story());
        let (plan, simgrid) = (
            report["plan_makespan"].as_f64().unwrap(),
            report["simgrid_makespan"].as_f64().unwrap(),
        );
        assert!((plan - simgrid).abs() <= 1e-9 * plan, "{}", run.story());
        for t in report["transfers"].as_array().unwrap() {
            let keys: Vec<&str> = t.as_object().unwrap().keys().map(String::as_str).collect();
            assert_eq!(keys, ["from", "items", "plan_end", "simgrid_end", "to"]);
            let (p, s) = (
                t["plan_end"].as_f64().unwrap(),
                t["simgrid_end"].as_f64().unwrap(),
            );
            assert!((p - s).abs() <= 1e-9 * plan, "{}", run.story());
        }
        dir.run(&["replay", "plan.json", "--instance", "ring.json"])
            .expect_status(0)
            .expect_stdout("model oneport")
            .expect_stdout("every transfer ends when the plan says");
    }

    /// A unidirectional ring with a start-up on every link.
    const UNI_STARTUPS: &str = r#"{ "ring": "unidirectional", "processors": [
  {"name": "A", "load": 9, "target": 2, "c_succ": 1.0, "l_succ": 2.0},
  {"name": "B", "load": 1, "target": 4, "c_succ": 0.5, "l_succ": 1.5},
  {"name": "C", "load": 2, "target": 3, "c_succ": 2.0, "l_succ": 0.5},
  {"name": "D", "load": 1, "target": 4, "c_succ": 1.0, "l_succ": 3.0} ] }"#;

    /// A bidirectional ring whose links have start-ups or none.
    const MIXED_STARTUPS: &str = r#"{ "ring": "bidirectional", "processors": [
  {"load": 1, "target": 3, "c_succ": 1.0, "c_pred": 1.0, "l_pred": 2.0},
  {"load": 8, "target": 3, "c_succ": 0.5, "c_pred": 1.0, "l_succ": 3.0},
  {"load": 1, "target": 3, "c_succ": 1.0, "c_pred": 0.5},
  {"load": 1, "target": 3, "c_succ": 1.0, "c_pred": 1.0, "l_succ": 1.0},
  {"load": 1, "target": 3, "c_succ": 2.0, "c_pred": 1.0},
  {"load": 6, "target": 3, "c_succ": 0.5, "c_pred": 1.0, "l_pred": 1.5} ] }"#;

    #[test]
    fn plans_with_startups_replay_at_their_planned_times_under_oneport() {
        for (name, instance) in [("uni", UNI_STARTUPS), ("mixed", MIXED_STARTUPS)] {
            let dir = TestDir::new(&format!("replay-startups-{name}"));
            dir.write("ring.json", instance);
            let ring: serde_json::Value = serde_json::from_str(instance).unwrap();
            let processors = ring["processors"].as_array().unwrap();
            let n = processors.len();
            let made = dir.run(&["ring", "plan", "ring.json", "--json"]);
            made.expect_status(0);
            dir.write("plan.json", made.stdout());
            let plan = made.json();
            let run = dir.run(&["replay", "plan.json", "--instance", "ring.json", "--json"]);
            run.expect_status(0);
            let report = run.json();
            let makespan = plan["makespan"].as_f64().unwrap();
            assert_eq!(report["plan_makespan"].as_f64(), Some(makespan));
            let simgrid = report["simgrid_makespan"].as_f64().unwrap();
            assert!(
                (simgrid - makespan).abs() <= 1e-9 * makespan,
                "{}",
                run.story()
            );
            // Every transfer ends when planned; over a link with a start-up that
            // end is the start plus the start-up plus the items' costs, so a
            // replay without the latency would end those transfers early.
            let (mut messages, mut trains) = (0, 0);
            let planned = plan["transfers"].as_array().unwrap();
            let replayed = report["transfers"].as_array().unwrap();
            assert_eq!(planned.len(), replayed.len());
            for (p, r) in planned.iter().zip(replayed) {
                let field = |v: &serde_json::Value, k: &str| v[k].as_f64().unwrap();
                let (from, to) = (
                    p["from"].as_u64().unwrap() as usize,
                    p["to"].as_u64().unwrap(),
                );
                let link = if to as usize == (from + 1) % n {
                    "succ"
                } else {
                    "pred"
                };
                let sender = &processors[from];
                let l = sender[format!("l_{link}")].as_f64().unwrap_or(0.0);
                let c = field(sender, &format!("c_{link}"));
                let duration = l + field(p, "items") * c;
                assert!(
                    (field(p, "end") - field(p, "start") - duration).abs() <= 1e-9 * makespan,
                    "{p}"
                );
                assert!(
                    (field(r, "simgrid_end") - field(p, "end")).abs() <= 1e-9 * makespan,
                    "{}",
                    run.story()
                );
                if l > 0.0 {
                    messages += 1;
                } else {
                    trains += 1;
                }
            }
            assert!(messages > 0, "{}", run.story());
            if name == "mixed" {
                assert!(trains > 0, "{}", run.story());
            }
            dir.run(&["replay", "plan.json", "--instance", "ring.json"])
                .expect_status(0)
                .expect_stdout("one-port model with start-ups")
                .expect_stdout("latencies its start-ups")
                .expect_stdout("every transfer ends when the plan says");
        }
    }

    #[test]
    fn lv08_reports_the_difference_per_transfer() {
        let dir = planned("replay-lv08");
        let run = dir.run(&[
            "replay",
            "plan.json",
            "--instance",
            "ring.json",
            "--model",
            "LV08",
            "--json",
        ]);
        run.expect_status(0);
        let report = run.json();
        assert_eq!(report["model"], "LV08");
        let plan = report["plan_makespan"].as_f64().unwrap();
        let simgrid = report["simgrid_makespan"].as_f64().unwrap();
        // 97% of the bandwidth for a lone flow, no latency here.
        assert!(simgrid >= plan / 0.97 * (1.0 - 1e-9), "{}", run.story());
        dir.run(&[
            "replay",
            "plan.json",
            "--instance",
            "ring.json",
            "--model",
            "lv08",
        ])
        .expect_status(0)
        .expect_stdout("end elsewhere than planned")
        .expect_stdout("difference");
    }

    #[test]
    fn platform_routes_give_bandwidth_and_latency() {
        let dir = planned("replay-platform");
        dir.write("platform.xml", PLATFORM);
        // oneport takes the instance's start-ups (none here), not the routes'
        // latencies: the routes' bandwidths are the instance's costs.
        let exact = dir.run(&[
            "replay",
            "plan.json",
            "--instance",
            "ring.json",
            "--platform",
            "platform.xml",
            "--json",
        ]);
        exact.expect_status(0);
        let report = exact.json();
        let plan = report["plan_makespan"].as_f64().unwrap();
        let simgrid = report["simgrid_makespan"].as_f64().unwrap();
        assert!((plan - simgrid).abs() <= 1e-9 * plan, "{}", exact.story());
        // With start-ups the platform's bandwidths stay and oneport's latencies are
        // the instance's start-ups: the start-up plan replays at its times.
        dir.write(
            "latent.json",
            INSTANCE
                .replace(
                    "\"c_succ\": 1.0, \"c_pred\": 1.5",
                    "\"c_succ\": 1.0, \"c_pred\": 1.5, \"l_succ\": 2.5",
                )
                .replace(
                    "\"c_succ\": 1.5, \"c_pred\": 1.0",
                    "\"c_succ\": 1.5, \"c_pred\": 1.0, \"l_pred\": 0.75",
                ),
        );
        let latent_plan = dir.run(&["ring", "plan", "latent.json", "--json"]);
        latent_plan.expect_status(0);
        dir.write("latent-plan.json", latent_plan.stdout());
        let latent = dir.run(&[
            "replay",
            "latent-plan.json",
            "--instance",
            "latent.json",
            "--platform",
            "platform.xml",
        ]);
        latent
            .expect_status(0)
            .expect_stdout("latencies the instance's start-ups")
            .expect_stdout("every transfer ends when the plan says");
        // CM02 keeps 10 ms per link and item: later, by a few items' latencies.
        let cm02 = dir.run(&[
            "replay",
            "plan.json",
            "--instance",
            "ring.json",
            "--platform",
            "platform.xml",
            "--model",
            "CM02",
            "--json",
        ]);
        cm02.expect_status(0);
        let later = cm02.json()["simgrid_makespan"].as_f64().unwrap();
        assert!(
            later > plan + 0.01 && later < plan + 0.2,
            "{}",
            cm02.story()
        );
        // Costs and bandwidths that disagree need an explicit item size.
        dir.write(
            "other.json",
            INSTANCE.replace("\"c_pred\": 1.5", "\"c_pred\": 1.0"),
        );
        dir.run(&[
            "replay",
            "plan.json",
            "--instance",
            "other.json",
            "--platform",
            "platform.xml",
        ])
        .expect_status(2)
        .expect_stderr("--item-bytes");
        // A processor the platform lacks.
        dir.write("renamed.json", INSTANCE.replace("\"D\"", "\"E\""));
        dir.run(&[
            "replay",
            "plan.json",
            "--instance",
            "renamed.json",
            "--platform",
            "platform.xml",
        ])
        .expect_status(2)
        .expect_stderr("processor 3 (E)");
    }

    #[test]
    fn broken_plans_are_exposed() {
        let dir = TestDir::new("replay-broken");
        dir.write(
            "ring.json",
            r#"{ "ring": "bidirectional", "processors": [
              {"load": 3, "target": 1, "c_succ": 1.0, "c_pred": 1.0},
              {"load": 1, "target": 2, "c_succ": 1.0, "c_pred": 1.0},
              {"load": 1, "target": 2, "c_succ": 1.0, "c_pred": 1.0} ] }"#,
        );
        // P0 sends to both neighbours at once.
        dir.write(
            "two-at-once.json",
            r#"{ "transfers": [ {"from": 0, "to": 1, "items": 1, "start": 0.0, "end": 1.0},
                               {"from": 0, "to": 2, "items": 1, "start": 0.0, "end": 1.0} ] }"#,
        );
        let run = dir.run(&[
            "replay",
            "two-at-once.json",
            "--instance",
            "ring.json",
            "--json",
        ]);
        run.expect_status(0).expect_stderr("breaks the model");
        assert_eq!(
            run.json()["simgrid_makespan"].as_f64(),
            Some(2.0),
            "{}",
            run.story()
        );
        dir.run(&["replay", "two-at-once.json", "--instance", "ring.json"])
            .expect_status(0)
            .expect_stdout("one-port sending");
        // P1 sends two items, holds one and receives none: blocked forever.
        dir.write(
            "never-held.json",
            r#"{ "transfers": [ {"from": 1, "to": 2, "items": 2, "start": 0.0, "end": 2.0} ] }"#,
        );
        dir.run(&["replay", "never-held.json", "--instance", "ring.json"])
            .expect_status(1)
            .expect_stderr("deadlock")
            .expect_stderr("P1 must send item 2 of 2");
        // Not a transfer between neighbours: refused before simulating.
        dir.write(
            "far.json",
            r#"{ "transfers": [ {"from": 0, "to": 0, "items": 1, "start": 0.0, "end": 1.0} ] }"#,
        );
        dir.run(&["replay", "far.json", "--instance", "ring.json"])
            .expect_status(1)
            .expect_stderr("cannot be replayed");
    }

    #[test]
    fn limits_and_bad_arguments() {
        let dir = planned("replay-limits");
        dir.run(&[
            "replay",
            "plan.json",
            "--instance",
            "ring.json",
            "--model",
            "NS3",
        ])
        .expect_status(2)
        .expect_stderr("[possible values: oneport, CM02, LV08]");
        dir.run(&[
            "replay",
            "plan.json",
            "--instance",
            "ring.json",
            "--timeout",
            "0",
        ])
        .expect_status(2)
        .expect_stderr("--timeout");
        dir.run(&["replay", "plan.json"]).expect_status(2);
        // A plan far too long for 0.2 s of wall time is stopped.
        let n = 8;
        let processors: Vec<String> = (0..n)
            .map(|i| {
                let (load, target) = match i {
                    0 => (100_001, 1),
                    7 => (1, 100_001),
                    _ => (1, 1),
                };
                format!(r#"{{"load": {load}, "target": {target}, "c_succ": 1.0}}"#)
            })
            .collect();
        dir.write(
            "long.json",
            format!(
                r#"{{"ring": "unidirectional", "processors": [{}]}}"#,
                processors.join(",")
            ),
        );
        let plan = dir.run(&["ring", "plan", "long.json", "--json"]);
        plan.expect_status(0);
        dir.write("long-plan.json", plan.stdout());
        let started = std::time::Instant::now();
        dir.run(&[
            "replay",
            "long-plan.json",
            "--instance",
            "long.json",
            "--timeout",
            "0.2",
        ])
        .expect_status(1)
        .expect_stderr("did not end within 0.2 s");
        assert!(started.elapsed() < std::time::Duration::from_secs(10));
    }

    /// The experiment's rows under `--engine simgrid` for `border_items`.
    fn iterative_rows(dir: &TestDir, border_items: &str, extra: &[&str]) -> Vec<serde_json::Value> {
        let mut args = vec![
            "experiment",
            "ring-iterative",
            "--rings",
            "3",
            "--draws",
            "1",
            "--ratios",
            "1,2",
            "--iterations",
            "12",
            "--items",
            "60",
            "--platform",
            "platform.json",
            "--traces",
            "traces",
            "--border-items",
            border_items,
            "--engine",
            "simgrid",
            "--json",
        ];
        args.extend_from_slice(extra);
        let run = dir.run(&args);
        run.expect_status(0);
        let doc = run.json();
        assert_eq!(doc["parameters"]["engine"], "simgrid", "{}", run.story());
        assert_eq!(doc["parameters"]["model"], "oneport", "{}", run.story());
        doc["rows"].as_array().unwrap().clone()
    }

    #[test]
    fn ring_iterative_under_simgrid() {
        let dir = TestDir::new("iterative-simgrid");
        dir.write("platform.json", ITERATIVE_PLATFORM);
        std::fs::create_dir_all(dir.path.join("traces")).unwrap();
        dir.write("traces/b.profile", "0 1.0\n4 0.25\n");
        let field = |row: &serde_json::Value, name: &str| {
            row[name]
                .as_f64()
                .unwrap_or_else(|| panic!("{name} in {row}"))
        };
        // No borders: SimGrid computes exactly the built-in times when nothing
        // moves (the same host is the slowest in every iteration), and never
        // takes longer with redistributions (processors run ahead of the slowest).
        let rows = iterative_rows(&dir, "0", &[]);
        assert_eq!(rows.len(), 2 * 7);
        let mut redistributed = 0;
        for row in &rows {
            let (time, simgrid) = (field(row, "time"), field(row, "simgrid_time"));
            assert!(simgrid.is_finite() && simgrid > 0.0, "{row}");
            assert!(simgrid <= time * (1.0 + 1e-9), "{row}");
            assert!(field(row, "simgrid_normalized_time") > 0.0, "{row}");
            if row["policy"] == "none" {
                assert!((simgrid - time).abs() <= 1e-9 * time, "{row}");
                assert_eq!(field(row, "simgrid_normalized_time"), 1.0, "{row}");
            }
            if field(row, "redistributions") > 0.0 {
                redistributed += 1;
            }
        }
        assert!(redistributed >= 4, "{rows:?}");
        // One border item: messages between neighbours, finite positive times.
        for row in iterative_rows(&dir, "1", &[]) {
            let simgrid = field(&row, "simgrid_time");
            assert!(simgrid.is_finite() && simgrid > 0.0, "{row}");
        }
        // The builtin engine adds no field (the table's contract).
        let run = dir.run(&[
            "experiment",
            "ring-iterative",
            "--rings",
            "3",
            "--draws",
            "1",
            "--ratios",
            "1",
            "--iterations",
            "4",
            "--items",
            "60",
            "--platform",
            "platform.json",
            "--json",
        ]);
        run.expect_status(0);
        let doc = run.json();
        assert!(
            doc["rows"][0].get("simgrid_time").is_none(),
            "{}",
            run.story()
        );
        // Rings of 2 and unknown models are refused.
        for (extra, needle) in [
            (&["--rings", "2"][..], "rings of 2"),
            (
                &["--rings", "3", "--model", "NS3"][..],
                "possible values: oneport",
            ),
        ] {
            let mut args = vec![
                "experiment",
                "ring-iterative",
                "--draws",
                "1",
                "--ratios",
                "1",
                "--iterations",
                "4",
                "--items",
                "60",
                "--platform",
                "platform.json",
                "--engine",
                "simgrid",
            ];
            args.extend_from_slice(extra);
            dir.run(&args).expect_status(2).expect_stderr(needle);
        }
    }
}
