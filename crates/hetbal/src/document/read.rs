//! The JSON and TOML machinery: deserializing a document of a given shape and
//! turning serde's errors into [`DocumentError`]s that name the place.

use serde::de::DeserializeOwned;
use serde_json::error::Category;

use super::{DocumentError, Format, JsonErrorKind};

/// Turns a serde path like `processors[3].target` into
/// ``processor 3 (NAME): field `target` `` using the raw document to find the
/// name.
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
pub(super) enum Shape {
    Object(&'static str),
    Array(&'static str),
}

pub(super) const RING: Shape = Shape::Object("a JSON object with `ring` and `processors`");
pub(super) const SCATTER: Shape =
    Shape::Object("a JSON object with `items`, `root` and `processors`");
pub(super) const GENBLOCK: Shape =
    Shape::Object("a JSON object with `source`, `target`, `startup` and `unit`");
pub(super) const POINTS: Shape =
    Shape::Object("a JSON object with `total` and `processors` (measured points)");
pub(super) const PLAN: Shape = Shape::Object("a JSON object with `transfers`");
pub(super) const TIMES: Shape =
    Shape::Array("a JSON array of numbers (a time per item for each processor)");
pub(super) const PARTITION: Shape =
    Shape::Object("a JSON object with `weights` and `seconds_per_unit`");
pub(super) const PLATFORM: Shape =
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

/// `message` without the JSON parser's ` at line L column C`.
fn without_position(message: String, line: usize, column: usize) -> String {
    match message.strip_suffix(&format!(" at line {line} column {column}")) {
        Some(stripped) => stripped.to_string(),
        None => message,
    }
}

/// Deserializes a JSON document of the given shape. Errors name the place of the
/// error (`place(serde path)`) and, for a syntax error, its line and column.
///
/// Complexity: O(length of `text`); twice that for a document with an error.
pub(super) fn parse_json<T: DeserializeOwned>(
    text: &str,
    shape: Shape,
    place: impl Fn(&str) -> String,
) -> Result<T, DocumentError> {
    let (expected, words) = match shape {
        Shape::Object(words) => ("an object", words),
        Shape::Array(words) => ("an array", words),
    };
    match top_level(text) {
        Some(found) if found != expected => {
            return Err(DocumentError::WrongShape {
                expected: words,
                found,
            })
        }
        _ => {}
    }
    // Tracking the path costs about a third of the parse of a large document,
    // and only an error needs it: the document is read without it, and read
    // again with it when there is an error to place.
    let mut de = serde_json::Deserializer::from_str(text);
    if let Ok(value) = T::deserialize(&mut de) {
        de.end().map_err(|e| DocumentError::TrailingText {
            message: e.to_string(),
        })?;
        return Ok(value);
    }
    let mut de = serde_json::Deserializer::from_str(text);
    let value: T = serde_path_to_error::deserialize(&mut de).map_err(|e| {
        let path = e.path().to_string();
        let inner = e.into_inner();
        let (line, column) = (inner.line(), inner.column());
        let message = without_position(inner.to_string(), line, column);
        let (kind, place) = match inner.classify() {
            Category::Data => (JsonErrorKind::Data, place(&path)),
            // In unreadable text, only the part of the path before the unreadable
            // key means something.
            category => {
                let kind = if category == Category::Eof {
                    JsonErrorKind::Truncated
                } else {
                    JsonErrorKind::Syntax
                };
                (
                    kind,
                    place(path.trim_end_matches('?').trim_end_matches('.')),
                )
            }
        };
        DocumentError::Json {
            kind,
            place,
            message,
            line,
            column,
        }
    })?;
    de.end().map_err(|e| DocumentError::TrailingText {
        message: e.to_string(),
    })?;
    Ok(value)
}

/// Deserializes an instance, plan or times document, JSON or TOML, naming the
/// place of a bad field (``document``, ``field `x` ``, ``processor 3 (NAME): field
/// `y` ``).
pub(super) fn parse_document<T: DeserializeOwned>(
    text: &str,
    format: Format,
    shape: Shape,
) -> Result<T, DocumentError> {
    if text.trim().is_empty() {
        return Err(DocumentError::Empty {
            expected: match format {
                Format::Json => "a JSON document",
                Format::Toml => "a TOML document",
            },
        });
    }
    match format {
        Format::Json => parse_json(text, shape, |p| {
            let raw: Option<serde_json::Value> = serde_json::from_str(text).ok();
            describe_path(p, |i| processor_name(raw.as_ref(), i))
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
                let line = inner
                    .span()
                    .map(|span| text[..span.start.min(text.len())].matches('\n').count() + 1);
                DocumentError::Toml {
                    place,
                    message: inner.message().to_string(),
                    line,
                }
            })
        }
    }
}
