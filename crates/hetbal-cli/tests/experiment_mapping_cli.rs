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
    for platform in ["clusters", "tiers"] {
        let args = [
            "experiment",
            "mapping",
            "--draws",
            "2",
            "--platform",
            platform,
            "--json",
        ];
        let (status, stdout, stderr) = hetbal(&args);
        let story = format!(
            "hetbal {}\nstatus {status:?}\n--- stdout\n{stdout}\n--- stderr\n{stderr}",
            args.join(" ")
        );
        assert_eq!(status, Some(0), "{story}");
        let doc: serde_json::Value =
            serde_json::from_str(&stdout).unwrap_or_else(|e| panic!("{e}\n{story}"));
        assert_eq!(doc["experiment"], "mapping", "{story}");
        let hosts = doc["parameters"]["hosts"].as_array().unwrap();
        let rows = doc["rows"].as_array().unwrap();
        assert_eq!(
            rows.len(),
            3 * 2 * 3,
            "3 ratios x 2 draws x 3 heuristics\n{story}"
        );
        for triple in rows.chunks(3) {
            assert_eq!(triple[0]["policy"], "H1-blind");
            assert_eq!(triple[1]["policy"], "H2-fixed-routes");
            assert_eq!(triple[2]["policy"], "H2-aware");
            for row in triple {
                let t = row["t_step_over_work"].as_f64().unwrap();
                assert!(t > 0.0, "{story}");
                let q = row["processors"].as_u64().unwrap();
                let seed = row["seed"].as_u64().unwrap() as usize;
                assert!(q >= 1 && q <= hosts[seed].as_u64().unwrap(), "{story}");
            }
        }
        // At D_c/D_w = 0.64 every heuristic keeps the fastest processor alone.
        assert!(rows[..6].iter().all(|r| r["processors"] == 1), "{story}");
    }
    let (status, stdout, _) = hetbal(&["experiment", "mapping", "--draws", "1"]);
    assert_eq!(status, Some(0));
    assert!(stdout.contains("H2 fixed routes"), "{stdout}");
    for bad in [
        vec!["experiment", "mapping", "--draws", "0"],
        vec!["experiment", "mapping", "--platform", "torus"],
    ] {
        let (status, _, stderr) = hetbal(&bad);
        assert_eq!(status, Some(2), "{stderr}");
        assert!(
            stderr.contains("--draws") || stderr.contains("--platform"),
            "{stderr}"
        );
    }
}
