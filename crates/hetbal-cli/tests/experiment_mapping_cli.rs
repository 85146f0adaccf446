//! `hetbal experiment mapping`: the table of the mapping slides' shared-link
//! experiment, checked for shape and consistency (H2 never worse than the single
//! fastest processor, which it always considers).

use std::process::Command;

fn hetbal(args: &[&str]) -> (Option<i32>, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_hetbal"))
        .args(args)
        .output()
        .expect("hetbal runs");
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn mapping_experiment_table() {
    let (status, stdout, stderr) = hetbal(&["experiment", "mapping", "--draws", "2", "--json"]);
    let story = format!("hetbal experiment mapping --draws 2 --json\nstatus {status:?}\n--- stdout\n{stdout}\n--- stderr\n{stderr}");
    assert_eq!(status, Some(0), "{story}");
    let doc: serde_json::Value =
        serde_json::from_str(&stdout).unwrap_or_else(|e| panic!("{e}\n{story}"));
    assert_eq!(doc["experiment"], "mapping", "{story}");
    let rows = doc["rows"].as_array().unwrap();
    assert_eq!(
        rows.len(),
        3 * 2 * 2,
        "3 ratios x 2 draws x 2 heuristics\n{story}"
    );
    for pair in rows.chunks(2) {
        assert_eq!(pair[0]["policy"], "H1-blind");
        assert_eq!(pair[1]["policy"], "H2-aware");
        let (h1, h2) = (
            pair[0]["t_step_over_work"].as_f64().unwrap(),
            pair[1]["t_step_over_work"].as_f64().unwrap(),
        );
        assert!(h1 > 0.0 && h2 > 0.0, "{story}");
    }
    let (status, _, stderr) = hetbal(&["experiment", "mapping", "--draws", "0"]);
    assert_eq!(status, Some(2), "{stderr}");
    assert!(stderr.contains("--draws"), "{stderr}");
}
