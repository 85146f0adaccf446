//! JSON that is not what a reader expects: a syntax error says what is wrong and
//! where (line and column), a document of the wrong shape says what it should
//! be, for every file the commands read (ring, scatter and GEN_BLOCK instances,
//! plans, times, platforms).

mod support;
use support::TestDir;

const RING: &str = r#"{"ring": "unidirectional", "processors": [{"load": 1, "target": 1, "c_succ": 1}, {"load": 1, "target": 1, "c_succ": 1}]}"#;

#[test]
fn a_trailing_comma_is_named_with_its_line_and_column() {
    let dir = TestDir::new("input-comma");
    dir.write("ring.json", RING);
    let cases: &[(&str, &str, &[&str], &str)] = &[
        (
            "in_processor.json",
            "{\"ring\": \"unidirectional\", \"processors\": [\n{\"load\": 1, \"target\": 1, \"c_succ\": 1,},\n{\"load\": 1, \"target\": 1, \"c_succ\": 1}]}",
            &["ring", "plan"],
            "in_processor.json: processor 0 (P0): trailing comma at line 2, column 38",
        ),
        (
            "in_list.json",
            &RING.replace("}]}", "},]}"),
            &["ring", "plan"],
            "in_list.json: field `processors`: trailing comma at line 1, column",
        ),
        (
            "at_top.json",
            &RING.replace("]}", "],}"),
            &["ring", "plan"],
            "at_top.json: document: trailing comma at line 1, column",
        ),
        (
            "scatter.json",
            r#"{"items": 3, "root": "r", "processors": [],}"#,
            &["scatter", "plan"],
            "scatter.json: document: trailing comma at line 1, column 44",
        ),
        (
            "genblock.json",
            r#"{"source": [1, 2,], "target": [2, 1], "startup": 1, "unit": 1}"#,
            &["genblock", "plan"],
            "genblock.json: field `source`: trailing comma at line 1, column 18",
        ),
        (
            "platform.json",
            r#"{"processors": [{"name": "A", "w": 1,}], "c": [[0]]}"#,
            &["map"],
            "platform.json: field `processors[0]`: trailing comma at line 1, column 38",
        ),
    ];
    for (file, text, command, needle) in cases {
        dir.write(file, text);
        let mut args = command.to_vec();
        args.push(file);
        if args[0] == "map" {
            args.extend(["--work", "1", "--border", "1"]);
        }
        dir.run(&args)
            .expect_status(2)
            .expect_error_line(needle)
            .expect_stderr("JSON allows no comma after the last entry");
    }
    // Plans and times files too.
    dir.write("plan.json", r#"{"transfers": [],}"#);
    dir.run(&["ring", "verify", "ring.json", "plan.json"])
        .expect_status(2)
        .expect_error_line("plan.json: document: trailing comma at line 1, column 18");
    dir.write("times.json", "[1, 2,]");
    dir.run(&["ring", "balance", "ring.json", "--times-file", "times.json"])
        .expect_status(2)
        .expect_error_line("times.json: document: trailing comma at line 1, column 7");
}

#[test]
fn a_document_of_the_wrong_shape_says_what_it_should_be() {
    let dir = TestDir::new("input-shape");
    dir.write("ring.json", RING);
    dir.write("array.json", r#"[{"load": 1}]"#);
    dir.write("number.json", "42");
    let cases: &[(&[&str], &str)] = &[
        (
            &["ring", "plan", "array.json"],
            "array.json: expected a JSON object with `ring` and `processors`, found an array",
        ),
        (
            &["ring", "plan", "number.json"],
            "number.json: expected a JSON object with `ring` and `processors`, found a number",
        ),
        (
            &["scatter", "plan", "array.json"],
            "expected a JSON object with `items`, `root` and `processors`, found an array",
        ),
        (
            &["genblock", "plan", "array.json"],
            "expected a JSON object with `source`, `target`, `startup` and `unit`, found an array",
        ),
        (
            &["ring", "verify", "ring.json", "array.json"],
            "expected a JSON object with `transfers`, found an array",
        ),
        (
            &["ring", "balance", "ring.json", "--times-file", "ring.json"],
            "ring.json: expected a JSON array of numbers",
        ),
        (
            &["map", "array.json", "--work", "1", "--border", "1"],
            "array.json: expected a JSON object with `processors` and a cost matrix `c` or `links` and `routes`, found an array",
        ),
    ];
    for (args, needle) in cases {
        dir.run(args).expect_status(2).expect_error_line(needle);
    }
}
