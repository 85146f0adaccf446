//! `hetbal experiment load-dependent`: the table (the library's), its JSON
//! document (formats.md, "Experiment tables"), one plot per profile, and a
//! missing plot folder refused with exit status 2. A failure prints the whole
//! story.

mod support;
use support::TestDir;

#[test]
fn the_table_the_json_and_a_plot_per_profile() {
    let dir = TestDir::new("experiment-load");
    std::fs::create_dir_all(dir.path.join("figs")).unwrap();
    let run = dir.run(&["experiment", "load-dependent", "--plot", "figs"]);
    run.expect_status(0)
        .expect_stdout("noise seed 1")
        .expect_stdout(
            "memory-cliff             functional       7       6      7       6     6     0.00%     0.00%  yes",
        )
        .expect_stdout("mixture                  constant         -       -      -       -    10");
    for profile in [
        "affine-gpu",
        "memory-cliff",
        "cache-steps",
        "measured-table",
        "mixture",
    ] {
        let svg = dir.read(&format!("figs/load-dependent-{profile}.svg"));
        assert!(
            svg.starts_with("<svg")
                && svg.contains("true optimum")
                && svg.contains("functional, 1% noise")
                && svg.contains(profile),
            "{profile}{}",
            run.story()
        );
    }
    let run = dir.run(&["experiment", "load-dependent", "--json", "--seed", "2"]);
    run.expect_status(0);
    let doc = run.json();
    assert_eq!(doc["experiment"], "load-dependent", "{}", run.story());
    assert_eq!(doc["parameters"], 2, "{}", run.story());
    let rows = doc["rows"].as_array().unwrap();
    assert_eq!(rows.len(), 20, "{}", run.story());
    assert!(rows
        .iter()
        .filter(|r| r["model"] == "functional")
        .all(|r| r["meets_goal"] == true));
    dir.run(&["experiment", "load-dependent", "--plot", "no/such/folder"])
        .expect_status(2)
        .expect_error_line("--plot no/such/folder: no such folder");
}
