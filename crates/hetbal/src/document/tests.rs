//! Tests of the document readers: every kind of error names its place, line
//! and column, word for word.

use super::*;
use crate::ring;

const RING_JSON: &str = r#"{"ring": "unidirectional", "processors": [{"load": 1, "target": 1, "c_succ": 1}, {"load": 1, "target": 1, "c_succ": 1}]}"#;

/// Four processors; the last is named `dee` and has `"load": LOAD`.
fn four(load: &str) -> String {
    format!(
        "{{\"ring\": \"unidirectional\", \"processors\": [\n \
         {{\"name\": \"a\", \"load\": 1, \"target\": 1, \"c_succ\": 1}},\n \
         {{\"load\": 1, \"target\": 1, \"c_succ\": 1}},\n \
         {{\"name\": \"c\", \"load\": 1, \"target\": 1, \"c_succ\": 1}},\n \
         {{\"name\": \"dee\", \"load\": {load}, \"target\": 1, \"c_succ\": 1}}]}}\n"
    )
}

fn ring_error(text: &str, format: Format) -> String {
    parse_ring_instance(text, format).unwrap_err().to_string()
}

#[test]
fn the_format_follows_the_extension_of_the_last_component() {
    assert_eq!(Format::of_file_name("a.toml"), Format::Toml);
    assert_eq!(Format::of_file_name("dir/a.Toml"), Format::Toml);
    assert_eq!(Format::of_file_name(r"dir\a.toml"), Format::Toml);
    assert_eq!(Format::of_file_name(".toml"), Format::Json);
    assert_eq!(Format::of_file_name("dir/.toml"), Format::Json);
    assert_eq!(Format::of_file_name("a.toml/b"), Format::Json);
    assert_eq!(Format::of_file_name("a.json"), Format::Json);
    assert_eq!(Format::of_file_name(""), Format::Json);
    assert_eq!(Format::Toml.name(), "TOML");
}

#[test]
fn a_valid_ring_is_read_in_json_and_toml() {
    let ring = parse_ring_instance(RING_JSON, Format::Json).unwrap();
    assert_eq!(ring.len(), 2);
    let toml = "ring = \"unidirectional\"\n[[processors]]\nload = 1\ntarget = 1\nc_succ = 1\n\
                [[processors]]\nload = 1\ntarget = 1\nc_succ = 1\n";
    assert_eq!(parse_ring_instance(toml, Format::Toml).unwrap(), ring);
}

#[test]
fn an_empty_document_says_which_format_was_expected() {
    assert_eq!(
        ring_error(" \n\t", Format::Json),
        "the file is empty: expected a JSON document"
    );
    assert_eq!(
        ring_error("", Format::Toml),
        "the file is empty: expected a TOML document"
    );
    assert_eq!(
        parse_platform_json("").unwrap_err().to_string(),
        "the file is empty: expected a platform (JSON or SimGrid XML)"
    );
}

#[test]
fn a_top_level_of_the_wrong_kind_says_what_the_document_should_be() {
    for (text, found) in [
        ("[1]", "an array"),
        ("42", "a number"),
        ("-1", "a number"),
        ("\"x\"", "a string"),
        ("true", "a boolean"),
        ("null", "null"),
    ] {
        assert_eq!(
            parse_ring_instance(text, Format::Json).unwrap_err(),
            DocumentError::WrongShape {
                expected: "a JSON object with `ring` and `processors`",
                found
            }
        );
    }
    assert_eq!(
        parse_times_document("{}", Format::Json)
            .unwrap_err()
            .to_string(),
        "expected a JSON array of numbers (a time per item for each processor), found an object"
    );
    assert_eq!(
        parse_plan("[]", Format::Json).unwrap_err().to_string(),
        "expected a JSON object with `transfers`, found an array"
    );
    // Text that starts no JSON value is a syntax error.
    assert_eq!(
        ring_error("hello", Format::Json),
        "document: expected value at line 1, column 1"
    );
}

#[test]
fn a_trailing_comma_names_the_place_line_and_column() {
    let in_processor = "{\"ring\": \"unidirectional\", \"processors\": [\n{\"load\": 1, \"target\": 1, \"c_succ\": 1,},\n{\"load\": 1, \"target\": 1, \"c_succ\": 1}]}";
    let error = parse_ring_instance(in_processor, Format::Json).unwrap_err();
    assert_eq!(
        error,
        DocumentError::Json {
            kind: JsonErrorKind::Syntax,
            place: "processor 0 (P0)".into(),
            message: "trailing comma".into(),
            line: 2,
            column: 38
        }
    );
    assert_eq!(
        error.to_string(),
        "processor 0 (P0): trailing comma at line 2, column 38 (JSON allows no comma after the last entry of an object or array)"
    );
    assert!(ring_error(&RING_JSON.replace("]}", "],}"), Format::Json)
        .starts_with("document: trailing comma at line 1, column 121 (JSON allows"));
    assert_eq!(
        parse_platform_json(r#"{"processors": [{"name": "A", "w": 1,}], "c": [[0]]}"#)
            .unwrap_err()
            .to_string(),
        "field `processors[0]`: trailing comma at line 1, column 38 (JSON allows no comma after the last entry of an object or array)"
    );
    // A key that is no string: only the path before it is named.
    assert_eq!(
        ring_error(
            r#"{"ring": "unidirectional", "processors": [{"load": 1, tar}]}"#,
            Format::Json
        ),
        "processor 0 (P0): key must be a string at line 1, column 55"
    );
}

#[test]
fn a_bad_field_names_the_processor_by_index_and_name() {
    assert_eq!(
        ring_error(&four("\"x\""), Format::Json),
        "processor 3 (dee): field `load`: invalid type: string \"x\", expected u64 at line 5 column 28 (item counts are whole numbers from 0 to 18446744073709551615)"
    );
    let unnamed = four("\"x\"").replace("\"name\": \"dee\", ", "");
    assert!(ring_error(&unnamed, Format::Json)
        .starts_with("processor 3 (P3): field `load`: invalid type"));
    assert_eq!(
        ring_error(&four("1, \"lod\": 1"), Format::Json),
        "processor 3 (dee): field `lod`: unknown field `lod`, expected one of `name`, `load`, `target`, `c_succ`, `c_pred`, `l_succ`, `l_pred` at line 5 column 33"
    );
    let missing = four("1").replace(
        "\"load\": 1, \"target\": 1, \"c_succ\": 1}]",
        "\"target\": 1, \"c_succ\": 1}]",
    );
    assert_eq!(
        ring_error(&missing, Format::Json),
        "processor 3 (dee): missing field `load` at line 5 column 42"
    );
}

#[test]
fn a_count_beyond_u64_says_what_counts_may_be() {
    let error = parse_ring_instance(&four("18446744073709551616"), Format::Json).unwrap_err();
    match &error {
        DocumentError::Json {
            kind: JsonErrorKind::Data,
            place,
            line,
            column,
            ..
        } => assert_eq!(
            (place.as_str(), *line, *column),
            ("processor 3 (dee): field `load`", 5, 45)
        ),
        other => panic!("not a data error: {other:?}"),
    }
    assert!(error.to_string().ends_with(
        "expected u64 at line 5 column 45 (item counts are whole numbers from 0 to 18446744073709551615)"
    ));
}

#[test]
fn truncated_text_and_text_after_the_document_are_named() {
    assert!(matches!(
        parse_plan("{\"transfers\": [", Format::Json),
        Err(DocumentError::Json {
            kind: JsonErrorKind::Truncated,
            line: 1,
            column: 15,
            ..
        })
    ));
    assert_eq!(
        ring_error(
            "{\"ring\": \"unidirectional\", \"processors\": [\n",
            Format::Json
        ),
        "field `processors`: the document is truncated (EOF while parsing a list at line 2 column 0)"
    );
    assert_eq!(
        ring_error(&format!("{RING_JSON} xyz"), Format::Json),
        "unexpected text after the document: trailing characters at line 1 column 122"
    );
}

#[test]
fn toml_errors_name_the_place_and_the_line() {
    let base = "ring = \"unidirectional\"\n[[processors]]\nname = \"a\"\nload = 1\ntarget = 1\nc_succ = 1\n[[processors]]\nname = \"dee\"\nload = \"x\"\ntarget = 1\nc_succ = 1\n";
    assert_eq!(
        ring_error(base, Format::Toml),
        "processor 1 (dee): field `load`: invalid type: string \"x\", expected u64 at line 9"
    );
    let syntax = ring_error("ring = ", Format::Toml);
    assert!(syntax.starts_with("document: "), "{syntax}");
    assert!(syntax.ends_with(" at line 1"), "{syntax}");
    assert_eq!(
        ring_error("ring = \"unidirectional\"", Format::Toml),
        "document: missing field `processors` at line 1"
    );
    assert!(parse_times_document("[1, 2]", Format::Toml).is_err());
}

#[test]
fn an_instance_that_breaks_a_rule_gives_the_instances_error() {
    let error = parse_ring_instance(&four("2"), Format::Json).unwrap_err();
    assert!(matches!(
        error,
        DocumentError::Ring(ring::InstanceError::SumsDiffer { .. })
    ));
    assert_eq!(
        error.to_string(),
        "loads add up to 5 but targets add up to 4: they must be equal (items are neither created nor destroyed)"
    );
    assert!(std::error::Error::source(&error).is_some());
    let genblock = r#"{"source": [1, 2], "target": [2, 2], "startup": 1, "unit": 1}"#;
    assert!(matches!(
        parse_genblock_instance(genblock, Format::Json),
        Err(DocumentError::GenBlock(_))
    ));
    let scatter = r#"{"items": 3, "root": "r", "processors": []}"#;
    assert!(matches!(
        parse_scatter_instance(scatter, Format::Json),
        Err(DocumentError::Scatter(_))
    ));
}

#[test]
fn scatter_and_genblock_errors_name_their_fields() {
    let scatter = r#"{"items": 3, "root": "r", "processors": [{"name": "r", "comm": {"per_item": 0, "startup": 0}, "comp": {"per_item": 1, "startup": 0}}, {"name": "q", "comm": {"per_item": "a", "startup": 0}, "comp": {"per_item": 1, "startup": 0}}]}"#;
    assert_eq!(
        parse_scatter_instance(scatter, Format::Json)
            .unwrap_err()
            .to_string(),
        "processor 1 (q): field `comm.per_item`: invalid type: string \"a\", expected f64 at line 1 column 172"
    );
    let genblock = r#"{"source": [1, -2], "target": [2, 1], "startup": 1, "unit": 1}"#;
    assert_eq!(
        parse_genblock_instance(genblock, Format::Json)
            .unwrap_err()
            .to_string(),
        "field `source[1]`: invalid value: integer `-2`, expected u64 at line 1 column 17 (item counts are whole numbers from 0 to 18446744073709551615)"
    );
}

#[test]
fn plans_refuse_unknown_fields_and_keep_the_transfer_order() {
    let plan = parse_plan(
        r#"{"ring": "unidirectional", "transfers": [
            {"from": 1, "to": 0, "items": 1, "start": 1, "end": 2},
            {"from": 0, "to": 1, "items": 1, "start": 0, "end": 1}]}"#,
        Format::Json,
    )
    .unwrap();
    assert_eq!(plan.ring, Some(ring::RingKind::Unidirectional));
    assert_eq!(plan.transfers[0].from, 1);
    assert_eq!(
        parse_plan(r#"{"transfers": [], "bogus": 1}"#, Format::Json)
            .unwrap_err()
            .to_string(),
        "field `bogus`: unknown field `bogus`, expected one of `ring`, `algorithm`, `makespan`, `lower_bound`, `optimal`, `light`, `flows`, `transfers` at line 1 column 25"
    );
    assert_eq!(
        parse_plan("transfers = 3", Format::Toml)
            .unwrap_err()
            .to_string(),
        "field `transfers`: invalid type: integer `3`, expected a sequence at line 1"
    );
}

#[test]
fn times_lists_name_the_entry_that_is_no_number() {
    assert_eq!(parse_times(" 1 ,2").unwrap(), vec![1.0, 2.0]);
    assert_eq!(
        parse_times("1, ,2").unwrap_err(),
        DocumentError::NotANumber {
            index: 1,
            value: String::new()
        }
    );
    assert_eq!(
        parse_times("").unwrap_err().to_string(),
        "--times: value 0 (\"\") is not a number"
    );
    assert_eq!(
        parse_times_document("[1, 2,]", Format::Json)
            .unwrap_err()
            .to_string(),
        "document: trailing comma at line 1, column 7 (JSON allows no comma after the last entry of an object or array)"
    );
}

#[test]
fn platform_errors_name_the_field_without_a_document_prefix() {
    assert_eq!(
        parse_platform_json(r#"{"processors": [{"name": "A", "w": "x"}], "c": [[0]]}"#)
            .unwrap_err()
            .to_string(),
        "field `processors[0].w`: invalid type: string \"x\", expected f64 at line 1 column 38"
    );
    assert!(matches!(
        parse_platform_json(r#"{"processors": [{"name": "A", "w": 1}], "c": [[0, 1]]}"#),
        Err(DocumentError::Platform(_))
    ));
    assert_eq!(
        parse_platform_json("[1]").unwrap_err().to_string(),
        "expected a JSON object with `processors` and a cost matrix `c` or `links` and `routes`, found an array"
    );
    assert_eq!(
        parse_platform_json("{\"processors\": [")
            .unwrap_err()
            .to_string(),
        "field `processors`: the document is truncated (EOF while parsing a list at line 1 column 16)"
    );
}

#[cfg(feature = "simgrid")]
#[test]
fn a_platform_is_xml_by_its_name_or_its_first_character() {
    let options = SimgridOptions::default();
    let xml = r#"<platform version="4.1"><zone id="z" routing="Full"><host id="a" speed="1f"/></zone></platform>"#;
    // By its text, whatever the name.
    assert_eq!(parse_platform(xml, "p.json", &options).unwrap().len(), 1);
    // By its name: an empty .xml file is bad XML, an empty .json one empty.
    let error = parse_platform("", "p.XML", &options).unwrap_err();
    assert!(matches!(error, DocumentError::Simgrid(_)), "{error:?}");
    assert_eq!(
        error.to_string(),
        "line 1, column 1: not well-formed XML: the document does not have a root node"
    );
    assert_eq!(
        parse_platform("", "p.json", &options)
            .unwrap_err()
            .to_string(),
        "the file is empty: expected a platform (JSON or SimGrid XML)"
    );
    let bad_speed = xml.replace("1f", "zz");
    assert_eq!(
        parse_platform(&bad_speed, "", &options)
            .unwrap_err()
            .to_string(),
        "line 1: <host> attribute `speed` = \"zz\": does not start with a number"
    );
}
