//! Integration tests of `hetbal partition` and `hetbal experiment partition`:
//! the report and JSON (formats.md), weights from .npy and raw files, the
//! least-moving partition and its moves, and bad input refused with exit
//! status 2. A failure prints the whole story.

mod support;
use support::TestDir;

/// Six cells of 1 to 6 particles; P0 twice as fast as P1: P0 takes 1..5
/// (15 units, 15 s), P1 the last (6 units, 12 s).
const SIX: &str = r#"{"weights": [1, 2, 3, 4, 5, 6], "seconds_per_unit": [1, 2]}"#;

#[test]
fn the_report_and_the_json_give_the_optimum() {
    let dir = TestDir::new("partition-six");
    dir.write("six.json", SIX);
    dir.run(&["partition", "six.json"])
        .expect_status(0)
        .expect_stdout("0..5")
        .expect_stdout("bottleneck   15 s")
        .expect_stdout("optimal      yes");
    let run = dir.run(&["partition", "six.json", "--json"]);
    run.expect_status(0);
    let doc = run.json();
    assert_eq!(doc["cuts"], serde_json::json!([0, 5, 6]), "{}", run.story());
    assert_eq!(doc["bottleneck"], 15.0);
    assert_eq!(doc["lower_bound"], 15.0);
    assert_eq!(doc["optimal"], true);
    assert_eq!(doc["moved"], serde_json::Value::Null);
    assert_eq!(doc["times"], serde_json::json!([15.0, 12.0]));
    // The chart: a lane per processor, the bottleneck's bar in red.
    dir.run(&["partition", "six.json", "--svg", "six.svg"])
        .expect_status(0)
        .expect_stderr("chart written to six.svg");
    let svg = dir.read("six.svg");
    assert!(
        svg.starts_with("<svg") && svg.contains("P1") && svg.contains("items 5..6"),
        "{svg}"
    );
    dir.run(&["partition", "six.json", "--svg", "no/such/folder/six.svg"])
        .expect_status(2);
}

/// A .npy file as NumPy writes it, with its header for `descr` and `shape`.
fn npy(descr: &str, shape: &str, data: &[u8]) -> Vec<u8> {
    support::npy_file(
        &format!("'descr': '{descr}', 'fortran_order': False, 'shape': {shape}, "),
        data,
    )
}

#[test]
fn weights_from_npy_and_raw_files_give_the_same_cuts() {
    let dir = TestDir::new("partition-arrays");
    dir.write("speeds.json", r#"{"seconds_per_unit": [1, 2]}"#);
    let w = [1u64, 2, 3, 4, 5, 6];
    let u64s: Vec<u8> = w.iter().flat_map(|x| x.to_le_bytes()).collect();
    let f64s: Vec<u8> = w.iter().flat_map(|&x| (x as f64).to_le_bytes()).collect();
    let i32s: Vec<u8> = w.iter().flat_map(|&x| (x as i32).to_le_bytes()).collect();
    dir.write("w.u64", &u64s);
    dir.write("w.npy", npy("<f8", "(6,)", &f64s));
    dir.write("w32.npy", npy("<i4", "(6,)", &i32s));
    for file in ["w.u64", "w.npy", "w32.npy"] {
        let run = dir.run(&["partition", "speeds.json", "--weights", file, "--json"]);
        run.expect_status(0);
        assert_eq!(
            run.json()["cuts"],
            serde_json::json!([0, 5, 6]),
            "{}",
            run.story()
        );
    }
    // A 2-D array, a truncated raw file, an unknown extension.
    dir.write("2d.npy", npy("<f8", "(2, 3)", &f64s));
    dir.write("big.npy", npy(">f8", "(6,)", &f64s));
    dir.run(&["partition", "speeds.json", "--weights", "big.npy"])
        .expect_status(2)
        .expect_stderr("little-endian");
    dir.write("fake.npy", &f64s);
    dir.run(&["partition", "speeds.json", "--weights", "fake.npy"])
        .expect_status(2)
        .expect_stderr("no NumPy magic");
    dir.run(&["partition", "speeds.json", "--weights", "2d.npy"])
        .expect_status(2)
        .expect_stderr("one dimension");
    dir.write("cut.f64", &f64s[..13]);
    dir.run(&["partition", "speeds.json", "--weights", "cut.f64"])
        .expect_status(2)
        .expect_stderr("not a whole number of 8-byte f64 entries");
    dir.write("w.bin", &f64s);
    dir.run(&["partition", "speeds.json", "--weights", "w.bin"])
        .expect_status(2)
        .expect_stderr("neither a .npy file nor a raw array");
    dir.run(&["partition", "speeds.json"])
        .expect_status(2)
        .expect_stderr("no `weights`");
}

#[test]
fn the_least_moving_partition_and_its_moves() {
    let dir = TestDir::new("partition-moving");
    dir.write(
        "moving.json",
        r#"{"weights": [1, 1, 1, 1, 1, 1, 1, 1], "seconds_per_unit": [1, 1],
            "current": [0, 5, 8], "sizes": [10, 10, 10, 10, 10, 10, 10, 10],
            "c_succ": [0.001, 0.001]}"#,
    );
    let run = dir.run(&["partition", "moving.json", "--json"]);
    run.expect_status(0);
    let doc = run.json();
    assert_eq!(doc["cuts"], serde_json::json!([0, 4, 8]), "{}", run.story());
    assert_eq!(
        (doc["moved"].as_u64(), doc["moved_items"].as_u64()),
        (Some(10), Some(1))
    );
    assert_eq!(doc["moves"]["makespan"], 0.01);
    assert_eq!(doc["moves"]["optimal"], true);
    // Within 25 % nothing moves.
    let run = dir.run(&["partition", "moving.json", "--json", "--tolerance", "0.25"]);
    run.expect_status(0);
    assert_eq!(
        run.json()["cuts"],
        serde_json::json!([0, 5, 8]),
        "{}",
        run.story()
    );
    assert_eq!(run.json()["moved"], 0);
    dir.run(&["partition", "moving.json"])
        .expect_status(0)
        .expect_stdout("moved        1 item, 10 bytes")
        .expect_stdout("moves        1 trains");
}

#[test]
fn bad_input_is_refused_with_status_2_and_named() {
    let dir = TestDir::new("partition-bad");
    let cases = [
        (
            r#"{"weights": [1, -1], "seconds_per_unit": [1]}"#,
            "weights[1] = -1",
        ),
        (
            r#"{"weights": [1, 1], "seconds_per_unit": [1, 0]}"#,
            "seconds_per_unit[1] = 0",
        ),
        (
            r#"{"weights": [1, 1], "seconds_per_unit": []}"#,
            "no processors",
        ),
        (
            r#"{"weights": [1, "a"], "seconds_per_unit": [1]}"#,
            "weights[1]",
        ),
        (
            r#"{"weights": [[1]], "seconds_per_unit": [1]}"#,
            "weights[0]",
        ),
        (
            r#"{"weights": [1, 1], "seconds_per_unit": [1], "current": [0, 1]}"#,
            "current[1]",
        ),
        (
            r#"{"weights": [1, 1], "seconds_per_unit": [1, 1], "current": [0, 2]}"#,
            "current has 2 entries",
        ),
        (
            r#"{"weights": [1, 1], "seconds_per_unit": [1], "current": [0, 2], "tolerance": -1}"#,
            "tolerance = -1",
        ),
        (
            r#"{"weights": [1, 1], "seconds_per_unit": [1], "current": [0, 2], "sizes": [1]}"#,
            "sizes has 1 entries",
        ),
        (
            r#"{"weights": [1, 1], "seconds_per_unit": [1], "tolerance": 0.1}"#,
            "needs the current cuts",
        ),
        (
            r#"{"weights": [1], "seconds_per_unit": [1], "speed": 2}"#,
            "unknown field `speed`",
        ),
        (r#"[1, 2]"#, "expected a JSON object with `weights`"),
    ];
    for (i, (text, message)) in cases.iter().enumerate() {
        let name = format!("bad{i}.json");
        dir.write(&name, text);
        dir.run(&["partition", &name])
            .expect_status(2)
            .expect_stderr(message);
    }
}

#[test]
fn a_free_order_puts_the_fast_processor_on_the_heavy_item() {
    let dir = TestDir::new("partition-order");
    dir.write(
        "heavy.json",
        r#"{"weights": [8, 1, 1, 1, 1], "seconds_per_unit": [4, 1]}"#,
    );
    let run = dir.run(&["partition", "heavy.json", "--free-order", "--json"]);
    run.expect_status(0);
    assert_eq!(
        run.json()["order"],
        serde_json::json!([1, 0]),
        "{}",
        run.story()
    );
    assert_eq!(run.json()["bottleneck"], 10.0);
}

#[test]
fn the_comparison_experiment_prints_its_table() {
    let dir = TestDir::new("partition-experiment");
    let run = dir.run(&[
        "experiment",
        "partition",
        "--items",
        "3000",
        "--processors",
        "8,32",
        "--instances",
        "2",
        "--json",
    ]);
    run.expect_status(0);
    let doc = run.json();
    assert_eq!(doc["experiment"], "partition", "{}", run.story());
    let rows = doc["rows"].as_array().unwrap();
    assert_eq!(rows.len(), 10);
    for r in rows {
        assert!(
            r["equal"]["mean"].as_f64().unwrap() >= 1.0,
            "{}",
            run.story()
        );
        assert!(r["share"]["worst"].as_f64().unwrap() >= r["share"]["mean"].as_f64().unwrap());
        assert_eq!(r["proven"], r["instances"]);
    }
    assert_eq!(rows[9]["instances"], 36);
    dir.run(&["experiment", "partition", "--processors", "0"])
        .expect_status(2)
        .expect_stderr("--processors 0");
}

#[test]
fn the_iterations_left_choose_how_much_to_move() {
    let dir = TestDir::new("partition-remaining");
    // 12 items of 1,000 bytes, now 6 + 3 + 3 on equal processors; a byte takes
    // 1 ms: the optimum (4 + 4 + 4) moves 3 items in 2 s and saves 2 s per
    // iteration.
    dir.write(
        "r.json",
        r#"{"weights": [1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1], "seconds_per_unit": [1, 1, 1],
            "current": [0, 6, 9, 12], "sizes": [1000, 1000, 1000, 1000, 1000, 1000, 1000, 1000, 1000, 1000, 1000, 1000],
            "c_succ": [0.001, 0.001, 0.001]}"#,
    );
    let run = dir.run(&["partition", "r.json", "--remaining", "3", "--json"]);
    run.expect_status(0);
    let doc = run.json();
    assert_eq!(
        doc["cuts"],
        serde_json::json!([0, 4, 8, 12]),
        "{}",
        run.story()
    );
    assert_eq!(doc["moves"]["makespan"], 2.0);
    assert_eq!(doc["candidates"][0]["total"], 18.0); // staying: 3 x 6 s
    assert_eq!(doc["chosen"], 0.2); // the largest tolerance that moves as much
                                    // Nothing left to run: stay.
    let run = dir.run(&["partition", "r.json", "--remaining", "0", "--json"]);
    assert_eq!(
        run.json()["cuts"],
        serde_json::json!([0, 6, 9, 12]),
        "{}",
        run.story()
    );
    assert_eq!(run.json()["moved"], 0);
    dir.run(&["partition", "r.json", "--remaining", "3"])
        .expect_status(0)
        .expect_stdout("  20%       bottleneck          4 s")
        .expect_stdout("tolerance 0.2");
    dir.write(
        "nolinks.json",
        r#"{"weights": [1, 1], "seconds_per_unit": [1, 1], "current": [0, 2, 2]}"#,
    );
    dir.run(&["partition", "nolinks.json", "--remaining", "3"])
        .expect_status(2)
        .expect_stderr("needs the link costs");
}
