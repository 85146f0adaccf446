//! `hetbal experiment startups`: the table's shape and consistency (never slower
//! than today's plan, never below the bound; today's plans pay start-ups for their
//! many transfers), the plot, and bad settings refused with exit status 2.

use std::process::Command;

fn hetbal(args: &[&str]) -> (Option<i32>, String, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_hetbal"))
        .args(args)
        .output()
        .expect("hetbal runs");
    let (stdout, stderr) = (
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    );
    let story = format!(
        "hetbal {}\nstatus {:?}\n--- stdout\n{stdout}\n--- stderr\n{stderr}",
        args.join(" "),
        out.status.code()
    );
    (out.status.code(), stdout, stderr, story)
}

#[test]
fn startups_experiment_table_and_plot() {
    // In the build directory, overwritten by the next run.
    let dir = std::path::PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("hetbal-startups-cli");
    std::fs::create_dir_all(&dir).unwrap();
    let plot = dir.join("startups.svg");
    let args = [
        "experiment",
        "startups",
        "--sizes",
        "8,40",
        "--rings",
        "3",
        "--json",
        "--plot",
        plot.to_str().unwrap(),
    ];
    let (status, stdout, _, story) = hetbal(&args);
    assert_eq!(status, Some(0), "{story}");
    let doc: serde_json::Value =
        serde_json::from_str(&stdout).unwrap_or_else(|e| panic!("{e}\n{story}"));
    assert_eq!(doc["experiment"], "startups", "{story}");
    assert_eq!(
        doc["parameters"]["startup_factors"],
        serde_json::json!([1.0, 10.0])
    );
    let rows = doc["rows"].as_array().unwrap();
    let shape: Vec<(&str, u64)> = rows
        .iter()
        .map(|r| {
            (
                r["kind"].as_str().unwrap(),
                r["processors"].as_u64().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        shape,
        [
            ("unidirectional", 8),
            ("unidirectional", 40),
            ("bidirectional", 8),
            ("bidirectional", 40)
        ],
        "{story}"
    );
    for r in rows {
        let get = |spread: &str, what: &str| r[spread][what].as_f64().unwrap();
        assert!(get("speedup", "min") >= 1.0 - 1e-12, "{story}");
        assert!(get("over_bound", "min") >= 1.0 - 1e-12, "{story}");
        for spread in ["speedup", "over_bound", "papers_over_bound"] {
            assert!(
                get(spread, "min") <= get(spread, "mean") * (1.0 + 1e-12),
                "{story}"
            );
            assert!(
                get(spread, "mean") <= get(spread, "max") * (1.0 + 1e-12),
                "{story}"
            );
        }
        // speedup = today's / aware, both over the same bound.
        let today = get("over_bound", "mean") * get("speedup", "mean");
        assert!(
            (today / get("papers_over_bound", "mean") - 1.0).abs() < 1e-9,
            "{story}"
        );
    }
    // On 40 processors today's many transfers pay a start-up each: the aware plans win.
    assert!(rows[1]["speedup"]["min"].as_f64().unwrap() > 2.0, "{story}");
    let svg = std::fs::read_to_string(&plot).unwrap();
    assert!(
        svg.starts_with("<svg") && svg.contains("uni, mean"),
        "{story}"
    );
    // The same seed gives the same table; the text report shows it.
    let (_, again, _, _) = hetbal(&args);
    assert_eq!(again, stdout);
    let (status, text, _, story) =
        hetbal(&["experiment", "startups", "--sizes", "8", "--rings", "2"]);
    assert_eq!(status, Some(0), "{story}");
    assert!(
        text.starts_with("startups: 2 random full rebalances per size and kind")
            && text
                .lines()
                .any(|l| l.starts_with("unidirectional      8  ")),
        "{story}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn bad_settings_are_refused_with_status_2() {
    for (args, message) in [
        (vec!["--rings", "0"], "at least 1 ring"),
        (vec!["--sizes", "1"], "a ring of 1 processors"),
        (vec!["--startups", "5..1"], "start-up factors 5..1"),
        (vec!["--startups", "fast"], "expected LOW..HIGH"),
        (vec!["--sizes", "8,x"], "invalid digit"),
    ] {
        let mut all = vec!["experiment", "startups"];
        all.extend(args);
        let (status, stdout, stderr, story) = hetbal(&all);
        assert_eq!(status, Some(2), "{story}");
        assert!(stdout.is_empty() && stderr.contains(message), "{story}");
    }
}
