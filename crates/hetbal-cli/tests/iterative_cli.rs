//! `hetbal experiment ring-iterative`: the table's shape and the relations no run
//! can break (offline best never above any policy, `none` normalised to 1), the
//! files written, trace folders, and errors for bad arguments (exit 2).

mod support;
use support::TestDir;

#[test]
fn table_json_and_files() {
    let dir = TestDir::new("iterative-table");
    let run = dir.run(&[
        "experiment",
        "ring-iterative",
        "--rings",
        "4,6",
        "--ratios",
        "1,10,100",
        "--draws",
        "3",
        "--iterations",
        "40",
        "--items",
        "200",
        "--out",
        "out",
        "--json",
    ]);
    run.expect_status(0);
    let doc = run.json();
    let story = run.story();
    assert_eq!(doc["experiment"], "ring-iterative", "{story}");
    assert!(doc["parameters"]["ratio_meaning"]
        .as_str()
        .unwrap()
        .contains("redistribution"));
    let rows = doc["rows"].as_array().unwrap();
    let names = [
        "none",
        "fixed-1",
        "fixed-4",
        "fixed-9",
        "fixed-19",
        "adaptive",
        "offline-best",
    ];
    assert_eq!(rows.len(), 2 * 3 * names.len(), "{story}");
    for group in rows.chunks(names.len()) {
        let policies: Vec<&str> = group
            .iter()
            .map(|r| r["policy"].as_str().unwrap())
            .collect();
        assert_eq!(policies, names, "{story}");
        assert_eq!(group[0]["normalized_time"], 1.0, "{story}");
        assert_eq!(group[0]["redistributions"], 0.0, "{story}");
        let offline = group[6]["normalized_time"].as_f64().unwrap();
        for row in group {
            let normalized = row["normalized_time"].as_f64().unwrap();
            assert!(
                normalized >= offline * (1.0 - 1e-12),
                "offline best beaten: {row}\n{story}"
            );
            assert!(row["time"].as_f64().unwrap() > 0.0);
        }
        // fixed-N moves data at most N times.
        for (row, n) in group[1..5].iter().zip([1.0, 4.0, 9.0, 19.0]) {
            assert!(row["redistributions"].as_f64().unwrap() <= n, "{row}");
        }
    }
    let csv = dir.read("out/ring-iterative.csv");
    assert!(csv.starts_with("ring,ratio,policy,redistributions,time,normalized_time\n"));
    assert_eq!(csv.lines().count(), 1 + 2 * 3 * (names.len() + 1), "{csv}");
    for ring in [4, 6] {
        assert!(dir
            .read(&format!("out/ring-iterative-{ring}.svg"))
            .contains("<svg"));
        let png = std::fs::read(dir.path.join(format!("out/ring-iterative-{ring}.png"))).unwrap();
        assert_eq!(&png[1..4], b"PNG");
    }
}

#[test]
fn text_table_states_the_ratio_and_the_summary() {
    let dir = TestDir::new("iterative-text");
    dir.run(&[
        "experiment",
        "ring-iterative",
        "--rings",
        "4",
        "--ratios",
        "1..3",
        "--draws",
        "2",
        "--iterations",
        "20",
        "--items",
        "100",
    ])
    .expect_status(0)
    .expect_stdout("ratio = cost of one redistribution / time of one iteration")
    .expect_stdout("adaptive vs the best fixed scheme: worst")
    .expect_stdout("profitability");
}

#[test]
fn traces_from_profile_files() {
    let dir = TestDir::new("iterative-traces");
    let platform = dir.write(
        "platform.json",
        r#"{"processors": [{"name": "a", "w": 1.0}, {"name": "b", "w": 1.0}, {"name": "c", "w": 2.0}],
            "c": [[0, 0.01, 0.01], [0.01, 0, 0.01], [0.01, 0.01, 0]]}"#,
    );
    for folder in ["traces", "empty", "bad"] {
        std::fs::create_dir_all(dir.path.join(folder)).unwrap();
    }
    dir.write("traces/b.profile", "0 1.0\n4 0.25\n");
    let args = |traces: &str| {
        vec![
            "experiment".to_string(),
            "ring-iterative".into(),
            "--rings".into(),
            "3".into(),
            "--ratios".into(),
            "1".into(),
            "--draws".into(),
            "1".into(),
            "--iterations".into(),
            "20".into(),
            "--items".into(),
            "60".into(),
            "--platform".into(),
            platform.to_str().unwrap().into(),
            "--traces".into(),
            traces.into(),
            "--json".into(),
        ]
    };
    let run = dir.run(
        &args("traces")
            .iter()
            .map(String::as_str)
            .collect::<Vec<_>>(),
    );
    run.expect_status(0);
    let doc = run.json();
    let rows = doc["rows"].as_array().unwrap();
    // b slows down 4x at iteration 5: the offline best redistributes and gains.
    assert!(
        rows[6]["normalized_time"].as_f64().unwrap() < 0.9,
        "{}",
        run.story()
    );
    // A folder without any matching profile is refused.
    dir.write("empty/x.profile", "0 1\n");
    dir.run(&args("empty").iter().map(String::as_str).collect::<Vec<_>>())
        .expect_status(2)
        .expect_stderr("no file `<host>.profile` for any host");
    // A bad profile names its file and line.
    dir.write("bad/a.profile", "0 1\n3 zero\n");
    dir.run(&args("bad").iter().map(String::as_str).collect::<Vec<_>>())
        .expect_status(2)
        .expect_stderr("a.profile: line 2");
}

#[test]
fn bad_arguments_exit_2() {
    let dir = TestDir::new("iterative-errors");
    let cases: &[(&[&str], &str)] = &[
        (&["--rings", "1"], "at least 2 processors"),
        (&["--rings", "8,x"], "expected sizes like 8,32"),
        (&["--ratios", "5..1"], "the range is empty"),
        (&["--ratios", "0"], "finite and > 0"),
        (&["--draws", "0"], "--draws must be at least 1"),
        (&["--iterations", "1"], "--iterations must be at least 2"),
        (&["--spread", "0.5"], "--spread 0.5"),
        (&["--rings", "500"], "needs 500 hosts"),
        (&["--items", "5", "--rings", "8"], "at least one item each"),
        (
            &["--border-items", "50", "--rings", "4", "--ratios", "100"],
            "cannot be reached",
        ),
    ];
    for (extra, expected) in cases {
        let mut args = vec!["experiment", "ring-iterative"];
        args.extend_from_slice(extra);
        if !extra.contains(&"--draws") {
            args.extend(["--draws", "1"]);
        }
        dir.run(&args).expect_status(2).expect_stderr(expected);
    }
}

/// The adaptive policy's goal on the paper's experiment (10 draws of rings of 8
/// and 32 processors, seed 2004, one ratio per regime): within 2% of the best of
/// `none` and the fixed schemes at every ratio, strictly below all of them
/// somewhere.
#[test]
fn adaptive_meets_its_goal_on_the_papers_experiment() {
    let dir = TestDir::new("iterative-goal");
    let run = dir.run(&[
        "experiment",
        "ring-iterative",
        "--rings",
        "8,32",
        "--ratios",
        "1,10,20,50",
        "--draws",
        "10",
        "--json",
    ]);
    run.expect_status(0);
    let doc = run.json();
    let story = run.story();
    let mut strictly_better = 0;
    for group in doc["rows"].as_array().unwrap().chunks(7) {
        let time = |name: &str| {
            group
                .iter()
                .find(|row| row["policy"] == name)
                .and_then(|row| row["normalized_time"].as_f64())
                .unwrap()
        };
        let best_fixed = ["none", "fixed-1", "fixed-4", "fixed-9", "fixed-19"]
            .iter()
            .map(|name| time(name))
            .fold(f64::INFINITY, f64::min);
        let adaptive = time("adaptive");
        assert!(
            adaptive <= 1.02 * best_fixed,
            "ring {} ratio {}: adaptive {adaptive} against {best_fixed}\n{story}",
            group[0]["ring"],
            group[0]["ratio"]
        );
        strictly_better += usize::from(adaptive < best_fixed);
    }
    assert!(strictly_better > 0, "{story}");
}
