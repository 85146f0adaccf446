//! Reading instance, plan, times and platform files: the text is read here, parsed
//! by `hetbal::document`, and its errors get the file's name in front.

use std::path::Path;

use hetbal::document::{self, DocumentError, Format};
use hetbal::functional::PointsInstance;
use hetbal::genblock::GenBlockInstance;
use hetbal::platform::simgrid::SimgridOptions;
use hetbal::platform::Platform;
use hetbal::ring::{PlanDocument, RingInstance};
use hetbal::scatter::ScatterInstance;

use crate::common::CliError;

/// Reads a file as UTF-8 text (checked once; the library's error when it is
/// not), without the byte-order mark some editors write first.
pub fn read_text(path: &Path) -> Result<String, CliError> {
    let bytes = std::fs::read(path)
        .map_err(|e| CliError::input(format!("cannot read {}: {e}", path.display())))?;
    let text =
        String::from_utf8(bytes).map_err(|e| match document::text_from_bytes(e.as_bytes()) {
            Err(error) => in_file(path)(error),
            Ok(_) => CliError::input(format!("{}: not UTF-8 text", path.display())),
        })?;
    // The byte-order mark some editors write first is not part of the text.
    Ok(match text.strip_prefix('\u{feff}') {
        Some(rest) => rest.to_string(),
        None => text,
    })
}

/// A document error as the user sees it: `FILE: message`.
fn in_file(path: &Path) -> impl Fn(DocumentError) -> CliError + '_ {
    move |e| CliError::input(format!("{}: {e}", path.display()))
}

/// Reads a file and parses it (JSON, or TOML when its name ends in `.toml`).
fn read<T>(
    path: &Path,
    parse: fn(&str, Format) -> Result<T, DocumentError>,
) -> Result<T, CliError> {
    let text = read_text(path)?;
    parse(&text, Format::of_file_name(&path.to_string_lossy())).map_err(in_file(path))
}

/// Reads a platform: SimGrid XML when the name ends in `.xml` or the text starts
/// with `<`, JSON otherwise.
pub fn read_platform(
    path: &Path,
    flops_per_unit: f64,
    unit_bytes: f64,
) -> Result<Platform, CliError> {
    let text = read_text(path)?;
    let options = SimgridOptions {
        flops_per_unit,
        unit_bytes,
    };
    let platform = document::parse_platform(&text, &path.to_string_lossy(), &options)
        .map_err(in_file(path))?;
    // SimGrid files refuse them already; a JSON platform does not use them,
    // but a bad value is a mistake on any command line.
    for (option, value) in [
        ("--flops-per-unit", flops_per_unit),
        ("--unit-bytes", unit_bytes),
    ] {
        if !(value.is_finite() && value > 0.0) {
            return Err(CliError::input(format!(
                "{option} {value}: must be finite and > 0"
            )));
        }
    }
    Ok(platform)
}

/// Reads and validates a ring instance.
pub fn read_ring_instance(path: &Path) -> Result<RingInstance, CliError> {
    read(path, document::parse_ring_instance)
}

/// Reads and validates a scatter instance.
pub fn read_scatter_instance(path: &Path) -> Result<ScatterInstance, CliError> {
    read(path, document::parse_scatter_instance)
}

/// Reads and validates a GEN_BLOCK instance.
pub fn read_genblock_instance(path: &Path) -> Result<GenBlockInstance, CliError> {
    read(path, document::parse_genblock_instance)
}

/// Reads a plan document.
pub fn read_plan(path: &Path) -> Result<PlanDocument, CliError> {
    read(path, document::parse_plan)
}

/// Parses `--times`: a list of times per item, `1.0,2.5,3`.
pub fn parse_times(list: &str) -> Result<Vec<f64>, CliError> {
    document::parse_times(list).map_err(|e| CliError::input(e.to_string()))
}

/// Reads times per item from a file: a JSON array of numbers.
pub fn read_times_file(path: &Path) -> Result<Vec<f64>, CliError> {
    read(path, document::parse_times_document)
}

/// Reads and validates a measured-points document (`hetbal balance`).
pub fn read_points_instance(path: &Path) -> Result<PointsInstance, CliError> {
    read(path, document::parse_points_instance)
}
