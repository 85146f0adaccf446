//! Reading documents: the text of an instance, a plan, a list of times or a
//! platform (JSON, TOML or SimGrid XML, formats.md) into a validated value.
//!
//! No file access here: the caller reads the file and gives its text (and, for
//! the format, its name). Errors say what is wrong and where: the processor (index
//! and name), the field, the bad value and the rule; for a syntax error its line
//! and column; for a document of the wrong kind what it should have been. Their
//! messages do not name the file: a caller reading one puts its name in front,
//! `"{file}: {error}"`, as the `hetbal` command does.
//!
//! * instances: [`parse_ring_instance`], [`parse_scatter_instance`],
//!   [`parse_genblock_instance`];
//! * plans: [`parse_plan`] (checked by [`ring::verify`](crate::ring::verify));
//! * times per item: [`parse_times`] (a comma-separated list),
//!   [`parse_times_document`];
//! * platforms: [`parse_platform_json`], and `parse_platform` (JSON or SimGrid
//!   XML, cargo feature `simgrid`);
//! * measured points (balance with time functions):
//!   [`parse_points_instance`];
//! * weighted partitions: [`parse_partition_instance`], and arrays of weights
//!   or sizes too large for JSON: [`parse_array`] (`.npy` or raw little-endian).
//!
//! ```
//! use hetbal::document::{parse_ring_instance, Format};
//! let text = r#"{"ring": "unidirectional", "processors": [
//!     {"load": 3, "target": 1, "c_succ": 1},
//!     {"load": 1, "target": 3, "c_succ": 1},]}"#;
//! let error = parse_ring_instance(text, Format::of_file_name("ring.json")).unwrap_err();
//! assert_eq!(
//!     error.to_string(),
//!     "field `processors`: trailing comma at line 3, column 43 \
//!      (JSON allows no comma after the last entry of an object or array)"
//! );
//! ```

mod array;
mod error;
mod partition;
mod read;
#[cfg(test)]
mod tests;
mod write;

pub use array::{parse_array, NumberArray};
pub use error::{DocumentError, JsonErrorKind};
pub use partition::{parse_partition_instance, PartitionInstance};
pub use write::{to_json, write_json};

use crate::genblock::{GenBlockInstance, GenBlockInstanceSpec};
use crate::platform::{Platform, PlatformSpec};
use crate::ring::{PlanDocument, RingInstance, RingInstanceSpec};
use crate::scatter::{ScatterInstance, ScatterInstanceSpec};

#[cfg(feature = "simgrid")]
use crate::platform::simgrid::{read_simgrid, SimgridOptions};

use crate::functional::{PointsInstance, PointsInstanceSpec};

use read::{parse_document, parse_json, GENBLOCK, PLAN, PLATFORM, POINTS, RING, SCATTER, TIMES};

/// The text formats an instance, plan or times document may use.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Format {
    /// JSON.
    Json,
    /// TOML.
    Toml,
}

impl Format {
    /// The format a file's name calls for: TOML when it ends in `.toml` (any case),
    /// JSON otherwise.
    ///
    /// `name` is a file name or a path (only its last component counts; a name
    /// that is only an extension, `.toml`, has none).
    ///
    /// Complexity: O(length of `name`).
    ///
    /// # Example
    /// ```
    /// use hetbal::document::Format;
    /// assert_eq!(Format::of_file_name("cases/ring.TOML"), Format::Toml);
    /// assert_eq!(Format::of_file_name("ring.json"), Format::Json);
    /// assert_eq!(Format::of_file_name("ring"), Format::Json);
    /// ```
    pub fn of_file_name(name: &str) -> Format {
        if has_extension(name, "toml") {
            Format::Toml
        } else {
            Format::Json
        }
    }

    /// The format's name: `JSON` or `TOML`.
    ///
    /// Complexity: O(1).
    pub fn name(self) -> &'static str {
        match self {
            Format::Json => "JSON",
            Format::Toml => "TOML",
        }
    }
}

/// Whether the last component of `name` has the extension `ext` (any case), as
/// `std::path::Path::extension` sees it: a leading dot starts no extension.
fn has_extension(name: &str, ext: &str) -> bool {
    let base = name.rsplit(['/', '\\']).next().unwrap_or(name);
    match base.rsplit_once('.') {
        Some((stem, found)) => !stem.is_empty() && found.eq_ignore_ascii_case(ext),
        None => false,
    }
}

/// The text of a document given as bytes: they must be UTF-8.
///
/// # Errors
/// [`DocumentError::NotUtf8`] with the offset of the first invalid byte.
///
/// Complexity: O(length of `bytes`).
///
/// # Example
/// ```
/// use hetbal::document::text_from_bytes;
/// assert_eq!(text_from_bytes(b"{}").unwrap(), "{}");
/// let error = text_from_bytes(b"{\xff}").unwrap_err();
/// assert_eq!(error.to_string(), "not UTF-8 text (invalid byte at offset 1)");
/// ```
pub fn text_from_bytes(bytes: &[u8]) -> Result<&str, DocumentError> {
    std::str::from_utf8(bytes).map_err(|e| DocumentError::NotUtf8 {
        offset: e.valid_up_to(),
    })
}

/// Reads a ring instance (formats.md, "Ring instances") and validates it.
///
/// # Arguments
/// * `text`: the document;
/// * `format`: JSON or TOML ([`Format::of_file_name`] picks it from a file name).
///
/// # Errors
/// [`DocumentError::Empty`], a JSON or TOML error naming the place (``processor 3
/// (NAME): field `load` ``) with the line, or [`DocumentError::Ring`] for an
/// instance that breaks a rule (sums that differ, a cost of 0...).
///
/// # Complexity
/// O(length of `text`) to read, O(n) to validate n processors; a second reading
/// on error, to name the processor.
///
/// # Example
/// ```
/// use hetbal::document::{parse_ring_instance, Format};
/// let text = r#"{"ring": "unidirectional", "processors": [
///     {"name": "a", "load": 3, "target": 1, "c_succ": 1},
///     {"name": "b", "load": 1, "target": 3, "c_succ": 2}]}"#;
/// let ring = parse_ring_instance(text, Format::Json).unwrap();
/// assert_eq!(ring.len(), 2);
///
/// let bad = text.replace("\"load\": 1", "\"load\": -1");
/// assert_eq!(
///     parse_ring_instance(&bad, Format::Json).unwrap_err().to_string(),
///     "processor 1 (b): field `load`: invalid value: integer `-1`, expected u64 at line 3 \
///      column 28 (item counts are whole numbers from 0 to 18446744073709551615)"
/// );
/// ```
pub fn parse_ring_instance(text: &str, format: Format) -> Result<RingInstance, DocumentError> {
    let spec: RingInstanceSpec = parse_document(text, format, RING)?;
    RingInstance::from_spec(spec).map_err(DocumentError::Ring)
}

/// Reads a measured-points document (formats.md, "Measured points") and
/// validates it ([`PointsInstance::from_spec`]).
///
/// # Arguments
/// * `text`: the document;
/// * `format`: JSON or TOML ([`Format::of_file_name`]).
///
/// # Errors
/// [`DocumentError::Empty`], a JSON or TOML error naming the place (``processor
/// 1 (cpu): field `points[0][1]` ``, an unknown field, a load that is not a
/// u64) with the line, or [`DocumentError::Points`] for a document that
/// breaks a rule (a negative time, no points, duplicate names...).
///
/// # Complexity
/// O(length of `text`) to read, O(m log m) to validate m points.
///
/// # Example
/// ```
/// use hetbal::document::{parse_points_instance, Format};
/// let text = r#"{"total": 100, "processors": [
///     {"name": "gpu", "points": [[10, 0.5], [100, 0.6]]},
///     {"name": "cpu", "points": [[100, 1.0]]}]}"#;
/// let balance = parse_points_instance(text, Format::Json).unwrap().balance().unwrap();
/// assert_eq!(balance.processors[0].target + balance.processors[1].target, 100);
///
/// let bad = text.replace("[[100, 1.0]]", "[[100, -1.0]]");
/// assert_eq!(
///     parse_points_instance(&bad, Format::Json).unwrap_err().to_string(),
///     "processor 1 (cpu): field `points[0]`: the time -1 s at load 100 must be finite and >= 0"
/// );
/// ```
pub fn parse_points_instance(text: &str, format: Format) -> Result<PointsInstance, DocumentError> {
    let spec: PointsInstanceSpec = parse_document(text, format, POINTS)?;
    PointsInstance::from_spec(spec).map_err(DocumentError::Points)
}

/// Reads a scatter instance (formats.md, "Scatter instances") and validates it.
///
/// # Arguments
/// * `text`: the document;
/// * `format`: JSON or TOML.
///
/// # Errors
/// [`DocumentError::Empty`], a JSON or TOML error naming the place and the line,
/// or [`DocumentError::Scatter`] for an instance that breaks a rule.
///
/// # Complexity
/// O(length of `text`) to read, O(n) to validate n processors.
///
/// # Example
/// ```
/// use hetbal::document::{parse_scatter_instance, DocumentError, Format};
/// let text = r#"
/// items = 10
/// root = "r"
/// [[processors]]
/// name = "r"
/// comm = { per_item = 0.0, startup = 0.0 }
/// comp = { per_item = 1.0, startup = 0.0 }
/// "#;
/// let scatter = parse_scatter_instance(text, Format::Toml).unwrap();
/// assert_eq!(scatter.items(), 10);
/// let wrong_root = text.replace("root = \"r\"", "root = \"z\"");
/// let error = parse_scatter_instance(&wrong_root, Format::Toml).unwrap_err();
/// assert!(matches!(error, DocumentError::Scatter(_)));
/// ```
pub fn parse_scatter_instance(
    text: &str,
    format: Format,
) -> Result<ScatterInstance, DocumentError> {
    let spec: ScatterInstanceSpec = parse_document(text, format, SCATTER)?;
    ScatterInstance::from_spec(spec).map_err(DocumentError::Scatter)
}

/// Reads a GEN_BLOCK instance (formats.md, "GEN_BLOCK instances") and validates
/// it.
///
/// # Arguments
/// * `text`: the document;
/// * `format`: JSON or TOML.
///
/// # Errors
/// [`DocumentError::Empty`], a JSON or TOML error naming the field and the line,
/// or [`DocumentError::GenBlock`] for an instance that breaks a rule.
///
/// # Complexity
/// O(length of `text`).
///
/// # Example
/// ```
/// use hetbal::document::{parse_genblock_instance, Format};
/// let text = r#"{"source": [1, 2], "target": [2, 1], "startup": 1, "unit": 1}"#;
/// assert!(parse_genblock_instance(text, Format::Json).is_ok());
/// let error = parse_genblock_instance("[1, 2]", Format::Json).unwrap_err();
/// assert_eq!(
///     error.to_string(),
///     "expected a JSON object with `source`, `target`, `startup` and `unit`, found an array"
/// );
/// ```
pub fn parse_genblock_instance(
    text: &str,
    format: Format,
) -> Result<GenBlockInstance, DocumentError> {
    let spec: GenBlockInstanceSpec = parse_document(text, format, GENBLOCK)?;
    GenBlockInstance::from_spec(spec).map_err(DocumentError::GenBlock)
}

/// Reads a ring plan document (formats.md, "Plans"; every field but `transfers`
/// may be left out). Its content is not checked here:
/// [`ring::verify`](crate::ring::verify) does.
///
/// # Arguments
/// * `text`: the document;
/// * `format`: JSON or TOML.
///
/// # Errors
/// [`DocumentError::Empty`], or a JSON or TOML error naming the field (unknown
/// fields are refused) and the line.
///
/// # Complexity
/// O(length of `text`).
///
/// # Example
/// ```
/// use hetbal::document::{parse_plan, Format};
/// let plan = parse_plan(r#"{"makespan": 2, "transfers": []}"#, Format::Json).unwrap();
/// assert_eq!(plan.makespan, Some(2.0));
/// let error = parse_plan("transfers = []\nbogus = 1", Format::Toml).unwrap_err();
/// assert!(error.to_string().starts_with("field `bogus`: unknown field `bogus`"));
/// ```
pub fn parse_plan(text: &str, format: Format) -> Result<PlanDocument, DocumentError> {
    parse_document(text, format, PLAN)
}

/// Reads a comma-separated list of times per item, `1.0,2.5,3` (white space
/// around the entries allowed).
///
/// # Errors
/// [`DocumentError::NotANumber`] for the first entry that is not a number; its
/// message names the command line's `--times`, where the list comes from.
///
/// # Complexity
/// O(length of `list`).
///
/// # Example
/// ```
/// use hetbal::document::parse_times;
/// assert_eq!(parse_times("1, 2.5,3").unwrap(), vec![1.0, 2.5, 3.0]);
/// assert_eq!(
///     parse_times("1,x").unwrap_err().to_string(),
///     "--times: value 1 (\"x\") is not a number"
/// );
/// ```
pub fn parse_times(list: &str) -> Result<Vec<f64>, DocumentError> {
    list.split(',')
        .enumerate()
        .map(|(index, s)| {
            s.trim()
                .parse::<f64>()
                .map_err(|_| DocumentError::NotANumber {
                    index,
                    value: s.trim().to_string(),
                })
        })
        .collect()
}

/// Reads times per item from a document: a JSON array of numbers (TOML has no
/// top-level array, so a TOML document is always refused).
///
/// # Errors
/// [`DocumentError::Empty`], [`DocumentError::WrongShape`] for anything but an
/// array, or a JSON error naming the entry and the line.
///
/// # Complexity
/// O(length of `text`).
///
/// # Example
/// ```
/// use hetbal::document::{parse_times_document, Format};
/// assert_eq!(parse_times_document("[1, 2.5]", Format::Json).unwrap(), vec![1.0, 2.5]);
/// let error = parse_times_document("[1, \"a\"]", Format::Json).unwrap_err();
/// assert_eq!(
///     error.to_string(),
///     "field `[1]`: invalid type: string \"a\", expected f64 at line 1 column 7"
/// );
/// ```
pub fn parse_times_document(text: &str, format: Format) -> Result<Vec<f64>, DocumentError> {
    parse_document(text, format, TIMES)
}

/// Reads a platform in JSON (formats.md, "Platforms": a cost matrix, or links and
/// routes) and validates it.
///
/// # Errors
/// [`DocumentError::Empty`], a JSON error naming the field and the line, or
/// [`DocumentError::Platform`] for a platform that breaks a rule.
///
/// # Complexity
/// O(length of `text`) to read; validating computes the cost of every route.
///
/// # Example
/// ```
/// use hetbal::document::parse_platform_json;
/// let text = r#"{"processors": [{"name": "A", "w": 1}, {"name": "B", "w": 2}],
///                "c": [[0, 1], [1, 0]]}"#;
/// assert_eq!(parse_platform_json(text).unwrap().len(), 2);
/// let error = parse_platform_json(r#"{"processors": [{"name": "A", "w": 1}], "c": [[0, 1]]}"#)
///     .unwrap_err();
/// assert_eq!(
///     error.to_string(),
///     "cost matrix `c`: row 0 has 2 numbers, expected 1 (one per processor)"
/// );
/// ```
pub fn parse_platform_json(text: &str) -> Result<Platform, DocumentError> {
    if text.trim().is_empty() {
        return Err(DocumentError::Empty {
            expected: "a platform (JSON or SimGrid XML)",
        });
    }
    let spec: PlatformSpec = parse_json(text, PLATFORM, |p| {
        if p.is_empty() || p == "." {
            String::new()
        } else {
            format!("field `{p}`")
        }
    })?;
    Platform::from_spec(spec).map_err(DocumentError::Platform)
}

/// Reads a platform: SimGrid XML when `file_name` ends in `.xml` (any case) or
/// the text starts with `<`, JSON ([`parse_platform_json`]) otherwise.
///
/// # Arguments
/// * `text`: the document;
/// * `file_name`: the name of the file it comes from (empty if none): only its
///   extension counts;
/// * `options`: how SimGrid's flops and bytes become the model's units (XML
///   only).
///
/// # Errors
/// [`DocumentError::Simgrid`] for XML that cannot be read (with its line), or the
/// errors of [`parse_platform_json`].
///
/// # Complexity
/// That of [`read_simgrid`] or of [`parse_platform_json`].
///
/// # Example
/// ```
/// use hetbal::document::parse_platform;
/// use hetbal::platform::simgrid::SimgridOptions;
/// let xml = r#"<?xml version="1.0"?>
/// <platform version="4.1"><zone id="z" routing="Full">
///   <host id="a" speed="2f"/>
/// </zone></platform>"#;
/// let options = SimgridOptions::default();
/// assert_eq!(parse_platform(xml, "", &options).unwrap().name(0), "a");
/// let error = parse_platform("", "cluster.xml", &options).unwrap_err();
/// assert!(error.to_string().contains("not well-formed XML"));
/// ```
#[cfg(feature = "simgrid")]
pub fn parse_platform(
    text: &str,
    file_name: &str,
    options: &SimgridOptions,
) -> Result<Platform, DocumentError> {
    if has_extension(file_name, "xml") || text.trim_start().starts_with('<') {
        read_simgrid(text, options).map_err(DocumentError::Simgrid)
    } else {
        parse_platform_json(text)
    }
}
