//! Inputs that pass validation and still broke a command once: each is run
//! here, with the status and the message a user should get.

mod support;
use support::TestDir;

/// A name longer than a table's column can be padded to (65,535 characters)
/// is printed whole, in every table that shows names.
#[test]
fn a_very_long_name_is_printed_whole() {
    let dir = TestDir::new("bad-day-long-name");
    let long = "x".repeat(70_000);
    dir.write(
        "ring.json",
        format!(
            r#"{{"ring": "unidirectional", "processors": [{{"name": "{long}", "load": 2, "target": 1, "c_succ": 1}}, {{"load": 1, "target": 2, "c_succ": 1}}]}}"#
        ),
    );
    dir.write(
        "scatter.json",
        format!(
            r#"{{"items": 3, "root": "P1", "processors": [{{"name": "{long}", "comm": {{"per_item": 2.0, "startup": 0.0}}, "comp": {{"per_item": 6.0, "startup": 0.0}}}}, {{"name": "P1", "comm": {{"per_item": 0.0, "startup": 0.0}}, "comp": {{"per_item": 6.0, "startup": 0.0}}}}]}}"#
        ),
    );
    dir.write(
        "points.json",
        format!(
            r#"{{"total": 300, "processors": [{{"name": "{long}", "points": [[100, 1.0]]}}, {{"name": "slow", "points": [[100, 2.0]]}}]}}"#
        ),
    );
    for args in [
        &["ring", "plan", "ring.json"][..],
        &["ring", "balance", "ring.json", "--times", "1,2"],
        &["scatter", "plan", "scatter.json"],
        &["balance", "points.json"],
    ] {
        dir.run(args).expect_status(0).expect_stdout(&long);
    }
}
