//! Reading instance, plan and platform files, with errors that name the file,
//! the processor, the field, the bad value and the rule (or the line and column
//! of a JSON syntax error, or what the document should have been).

use std::path::Path;

use hetbal::genblock::{GenBlockInstance, GenBlockInstanceSpec};
use hetbal::platform::simgrid::{read_simgrid, SimgridOptions};
use hetbal::platform::{Platform, PlatformSpec};
use hetbal::ring::{Flow, RingInstance, RingInstanceSpec, RingKind};
use hetbal::scatter::{ScatterInstance, ScatterInstanceSpec};
use hetbal::Transfer;
use serde::de::DeserializeOwned;
use serde::Deserialize;
use serde_json::error::Category;

use crate::common::CliError;

/// The text formats an input file may use.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Format {
    Json,
    Toml,
}

fn format_of(path: &Path) -> Format {
    match path.extension().and_then(|e| e.to_str()) {
        Some(ext) if ext.eq_ignore_ascii_case("toml") => Format::Toml,
        _ => Format::Json,
    }
}

/// Reads a file as UTF-8 text.
pub fn read_text(path: &Path) -> Result<String, CliError> {
    let bytes = std::fs::read(path)
        .map_err(|e| CliError::input(format!("cannot read {}: {e}", path.display())))?;
    String::from_utf8(bytes).map_err(|e| {
        CliError::input(format!(
            "{}: not UTF-8 text (invalid byte at offset {})",
            path.display(),
            e.utf8_error().valid_up_to()
        ))
    })
}

/// Turns a serde path like `processors[3].target` into
/// `processor 3 (NAME): field target` using the raw document to find the name.
fn describe_path(path: &str, raw_name: impl Fn(usize) -> Option<String>) -> String {
    if let Some(rest) = path.strip_prefix("processors[") {
        if let Some(close) = rest.find(']') {
            if let Ok(index) = rest[..close].parse::<usize>() {
                let name = raw_name(index).unwrap_or_else(|| format!("P{index}"));
                let field = rest[close + 1..].trim_start_matches('.');
                return if field.is_empty() {
                    format!("processor {index} ({name})")
                } else {
                    format!("processor {index} ({name}): field `{field}`")
                };
            }
        }
    }
    if path.is_empty() || path == "." {
        "document".to_string()
    } else {
        format!("field `{path}`")
    }
}

/// The name of processor `i` in a raw document, if it has one.
fn processor_name(raw: Option<&serde_json::Value>, i: usize) -> Option<String> {
    raw?.get("processors")?
        .get(i)?
        .get("name")?
        .as_str()
        .map(str::to_string)
}

/// What the top level of a JSON document must be, with the document in words
/// for errors.
#[derive(Clone, Copy)]
enum Shape {
    Object(&'static str),
    Array(&'static str),
}

const RING: Shape = Shape::Object("a JSON object with `ring` and `processors`");
const SCATTER: Shape = Shape::Object("a JSON object with `items`, `root` and `processors`");
const GENBLOCK: Shape =
    Shape::Object("a JSON object with `source`, `target`, `startup` and `unit`");
const PLAN: Shape = Shape::Object("a JSON object with `transfers`");
const TIMES: Shape = Shape::Array("a JSON array of numbers (a time per item for each processor)");
const PLATFORM: Shape =
    Shape::Object("a JSON object with `processors` and a cost matrix `c` or `links` and `routes`");

/// What a JSON text's top level is, from its first character (`None` when that
/// starts no JSON value).
fn top_level(text: &str) -> Option<&'static str> {
    Some(match text.trim_start().chars().next()? {
        '{' => "an object",
        '[' => "an array",
        '"' => "a string",
        '0'..='9' | '-' => "a number",
        't' | 'f' => "a boolean",
        'n' => "null",
        _ => return None,
    })
}

/// Deserializes a JSON document of the given shape. Errors name the file, the
/// place of the error (`place(serde path)`, ending in ": "), and for a syntax
/// error its line and column.
fn parse_json<T: DeserializeOwned>(
    path: &Path,
    text: &str,
    shape: Shape,
    place: impl Fn(&str) -> String,
) -> Result<T, CliError> {
    let file = path.display();
    let (expected, words) = match shape {
        Shape::Object(words) => ("an object", words),
        Shape::Array(words) => ("an array", words),
    };
    match top_level(text) {
        Some(found) if found != expected => {
            return Err(CliError::input(format!(
                "{file}: expected {words}, found {found}"
            )))
        }
        _ => {}
    }
    let mut de = serde_json::Deserializer::from_str(text);
    let value: T = serde_path_to_error::deserialize(&mut de).map_err(|e| {
        let path = e.path().to_string();
        let inner = e.into_inner();
        let (line, column) = (inner.line(), inner.column());
        // In unreadable text, only the part of the path before the unreadable key
        // means something.
        let at = place(path.trim_end_matches('?').trim_end_matches('.'));
        match inner.classify() {
            Category::Eof => {
                CliError::input(format!("{file}: {at}the document is truncated ({inner})"))
            }
            Category::Syntax | Category::Io => {
                let what = inner.to_string();
                let what = what
                    .strip_suffix(&format!(" at line {line} column {column}"))
                    .unwrap_or(&what);
                let hint = if what == "trailing comma" {
                    " (JSON allows no comma after the last entry of an object or array)"
                } else {
                    ""
                };
                CliError::input(format!(
                    "{file}: {at}{what} at line {line}, column {column}{hint}"
                ))
            }
            Category::Data => {
                let mut what = inner.to_string();
                if what.contains("expected u64") {
                    what.push_str(&format!(
                        " (item counts are whole numbers from 0 to {})",
                        u64::MAX
                    ));
                }
                CliError::input(format!("{file}: {}{what}", place(&path)))
            }
        }
    })?;
    de.end()
        .map_err(|e| CliError::input(format!("{file}: unexpected text after the document: {e}")))?;
    Ok(value)
}

/// Deserializes a document, JSON or TOML, reporting the path of a bad field.
fn parse_document<T: DeserializeOwned>(
    path: &Path,
    text: &str,
    shape: Shape,
) -> Result<T, CliError> {
    let file = path.display();
    if text.trim().is_empty() {
        return Err(CliError::input(format!(
            "{file}: the file is empty: expected a {} document",
            match format_of(path) {
                Format::Json => "JSON",
                Format::Toml => "TOML",
            }
        )));
    }
    match format_of(path) {
        Format::Json => parse_json(path, text, shape, |p| {
            let raw: Option<serde_json::Value> = serde_json::from_str(text).ok();
            let place = describe_path(p, |i| processor_name(raw.as_ref(), i));
            format!("{place}: ")
        }),
        Format::Toml => {
            let de = toml::Deserializer::new(text);
            let result: Result<T, _> = serde_path_to_error::deserialize(de);
            result.map_err(|e| {
                let raw: Option<serde_json::Value> = toml::from_str::<toml::Value>(text)
                    .ok()
                    .and_then(|v| serde_json::to_value(v).ok());
                let name = |i: usize| processor_name(raw.as_ref(), i);
                let place = describe_path(&e.path().to_string(), name);
                let inner = e.into_inner();
                let message = inner.message().to_string();
                let at = inner
                    .span()
                    .map(|span| {
                        let line = text[..span.start.min(text.len())].matches('\n').count() + 1;
                        format!(" at line {line}")
                    })
                    .unwrap_or_default();
                CliError::input(format!("{file}: {place}: {message}{at}"))
            })
        }
    }
}

/// Reads a platform: SimGrid XML when the name ends in `.xml` or the text starts
/// with `<`, JSON otherwise.
pub fn read_platform(
    path: &Path,
    flops_per_unit: f64,
    unit_bytes: f64,
) -> Result<Platform, CliError> {
    let text = read_text(path)?;
    let file = path.display();
    let is_xml = path
        .extension()
        .and_then(|e| e.to_str())
        .is_some_and(|e| e.eq_ignore_ascii_case("xml"))
        || text.trim_start().starts_with('<');
    if is_xml {
        let options = SimgridOptions {
            flops_per_unit,
            unit_bytes,
        };
        return read_simgrid(&text, &options).map_err(|e| CliError::input(format!("{file}: {e}")));
    }
    if text.trim().is_empty() {
        return Err(CliError::input(format!(
            "{file}: the file is empty: expected a platform (JSON or SimGrid XML)"
        )));
    }
    let spec: PlatformSpec = parse_json(path, &text, PLATFORM, |p| {
        if p.is_empty() || p == "." {
            String::new()
        } else {
            format!("field `{p}`: ")
        }
    })?;
    Platform::from_spec(spec).map_err(|e| CliError::input(format!("{file}: {e}")))
}

/// Reads and validates a ring instance (JSON, or TOML when the file name ends in
/// `.toml`).
pub fn read_ring_instance(path: &Path) -> Result<RingInstance, CliError> {
    let text = read_text(path)?;
    let spec: RingInstanceSpec = parse_document(path, &text, RING)?;
    RingInstance::from_spec(spec).map_err(|e| CliError::input(format!("{}: {e}", path.display())))
}

/// Reads a scatter instance (JSON, or TOML when the file name ends in `.toml`) and
/// validates it; errors name the file, the processor, the field and the rule.
pub fn read_scatter_instance(path: &Path) -> Result<ScatterInstance, CliError> {
    let text = read_text(path)?;
    let spec: ScatterInstanceSpec = parse_document(path, &text, SCATTER)?;
    ScatterInstance::from_spec(spec)
        .map_err(|e| CliError::input(format!("{}: {e}", path.display())))
}

/// Reads a GEN_BLOCK instance (JSON, or TOML when the file name ends in `.toml`)
/// and validates it; errors name the file, the field and the rule.
pub fn read_genblock_instance(path: &Path) -> Result<GenBlockInstance, CliError> {
    let text = read_text(path)?;
    let spec: GenBlockInstanceSpec = parse_document(path, &text, GENBLOCK)?;
    GenBlockInstance::from_spec(spec)
        .map_err(|e| CliError::input(format!("{}: {e}", path.display())))
}

/// A plan document as accepted by `ring verify`: the plan of formats.md, where every
/// field but `transfers` may be left out.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PlanDocument {
    /// Ring kind the plan was made for.
    pub ring: Option<RingKind>,
    /// Algorithm that made it.
    #[allow(dead_code)]
    pub algorithm: Option<String>,
    /// Claimed makespan.
    pub makespan: Option<f64>,
    /// Claimed lower bound.
    #[allow(dead_code)]
    pub lower_bound: Option<f64>,
    /// Claimed optimality.
    #[allow(dead_code)]
    pub optimal: Option<bool>,
    /// Claimed lightness.
    #[allow(dead_code)]
    pub light: Option<bool>,
    /// Claimed flows.
    pub flows: Option<Vec<Flow>>,
    /// The schedule.
    pub transfers: Vec<Transfer>,
}

/// Reads a plan document (JSON or TOML).
pub fn read_plan(path: &Path) -> Result<PlanDocument, CliError> {
    let text = read_text(path)?;
    parse_document(path, &text, PLAN)
}

/// Parses a list of times per item: `1.0,2.5,3` or a JSON array in a file.
pub fn parse_times(list: &str) -> Result<Vec<f64>, CliError> {
    list.split(',')
        .enumerate()
        .map(|(i, s)| {
            s.trim().parse::<f64>().map_err(|_| {
                CliError::input(format!(
                    "--times: value {} ({:?}) is not a number",
                    i,
                    s.trim()
                ))
            })
        })
        .collect()
}

/// Reads times per item from a file: a JSON array of numbers.
pub fn read_times_file(path: &Path) -> Result<Vec<f64>, CliError> {
    let text = read_text(path)?;
    parse_document(path, &text, TIMES)
}
