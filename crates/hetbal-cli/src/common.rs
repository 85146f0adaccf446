//! What the commands share: the user-facing error with its exit status, choices
//! among a library enum's names, planning a ring, balancing, Gantt size limits and
//! drawing, writing files.

use std::ffi::OsStr;
use std::io::Write;
use std::path::Path;

use clap::builder::{PossibleValue, TypedValueParser};
use clap::error::ErrorKind;
use clap::{Arg, Command};

use hetbal::balance::balanced_targets;
use hetbal::ring::{self, RingAlgorithm, RingInstance, RingPlan};
use hetbal::Schedule;

use hetbal_draw::DrawError;
use serde::Serialize;

use crate::plan_json;
use crate::report;

/// An error for the user, with the exit status it calls for.
#[derive(Debug)]
pub struct CliError {
    pub(crate) message: String,
    pub(crate) code: u8,
}

impl CliError {
    /// Bad input: exit status 2.
    pub fn input(message: impl Into<String>) -> Self {
        CliError {
            message: message.into(),
            code: 2,
        }
    }
}

/// Refuses an option's value outside `least..=most`, saying why the bounds
/// are there (`why`: what the value costs, or what the command needs).
///
/// # Errors
/// [`CliError::input`] naming the option, its value and the bound it breaks.
pub fn in_range(
    option: &str,
    value: usize,
    (least, most): (usize, usize),
    why: &str,
) -> Result<(), CliError> {
    if value < least {
        Err(CliError::input(format!(
            "{option} {value}: must be at least {least} ({why})"
        )))
    } else if value > most {
        Err(CliError::input(format!(
            "{option} {value}: must be at most {most} ({why})"
        )))
    } else {
        Ok(())
    }
}

/// The widest a table's name column grows: longer names are printed whole and
/// push the rest of their row to the right.
const NAME_COLUMN_MAX: usize = 48;

/// The width of a table's name column: its longest name, at least `header`
/// wide and at most 48 characters (a width past 65,535 would not format).
pub fn name_column<'a>(header: &str, names: impl IntoIterator<Item = &'a str>) -> usize {
    names
        .into_iter()
        .map(|name| name.chars().count())
        .max()
        .unwrap_or(0)
        .clamp(
            header.chars().count(),
            NAME_COLUMN_MAX.max(header.chars().count()),
        )
}

/// The ring with its targets replaced by the balanced ones.
pub fn balance(ring: &RingInstance, times: &[f64]) -> Result<RingInstance, CliError> {
    if times.len() != ring.len() {
        return Err(CliError::input(format!(
            "{} times per item given for a ring of {} processors: give one per processor",
            times.len(),
            ring.len()
        )));
    }
    let balanced = balanced_targets(ring.total_items(), times).map_err(|e| {
        CliError::input(match e {
            hetbal::balance::BalanceError::InvalidTime { index, value } => format!(
                "processor {index} ({}): time per item {value} must be finite and > 0",
                ring.name(index)
            ),
            other => other.to_string(),
        })
    })?;
    ring.with_targets(&balanced.targets)
        .map_err(|e| CliError::input(e.to_string()))
}

/// A clap value parser over a library enum's `ALL` and `name()`: `--help` lists
/// the names, and an unknown one is refused with the choices, e.g. `unknown method
/// "fast": choose one of paper, best`.
#[derive(Clone)]
pub struct Choice<T: 'static> {
    what: &'static str,
    all: &'static [T],
    name: fn(T) -> &'static str,
}

/// The [`Choice`] among `all`, called `what` in messages.
pub fn choice<T>(what: &'static str, all: &'static [T], name: fn(T) -> &'static str) -> Choice<T> {
    Choice { what, all, name }
}

impl<T: Copy + Send + Sync + 'static> TypedValueParser for Choice<T> {
    type Value = T;

    fn parse_ref(&self, _: &Command, _: Option<&Arg>, value: &OsStr) -> Result<T, clap::Error> {
        let text = value.to_string_lossy();
        let names = || self.all.iter().map(|&v| (self.name)(v));
        let found = self.all.iter().copied().find(|&v| (self.name)(v) == text);
        found.ok_or_else(|| {
            let choices = names().collect::<Vec<_>>().join(", ");
            let message = format!("unknown {} {text:?}: choose one of {choices}\n", self.what);
            clap::Error::raw(ErrorKind::InvalidValue, message)
        })
    }

    fn possible_values(&self) -> Option<Box<dyn Iterator<Item = PossibleValue> + '_>> {
        Some(Box::new(
            self.all.iter().map(|&v| PossibleValue::new((self.name)(v))),
        ))
    }
}

impl From<DrawError> for CliError {
    /// A chart that cannot be drawn: bad input (exit 2).
    fn from(e: DrawError) -> Self {
        CliError::input(e.to_string())
    }
}

/// Runs the planner, turning planning errors into user errors.
pub fn make_plan(
    ring: &RingInstance,
    algorithm: Option<RingAlgorithm>,
) -> Result<RingPlan, CliError> {
    ring::plan(ring, algorithm).map_err(|e| match e {
        // The algorithm ran but its schedule breaks the model (the paper's
        // Algorithm 3 can): the plan is invalid, exit 1 as `verify` does.
        ring::PlanError::InvalidSchedule { .. } => CliError {
            message: e.to_string(),
            code: 1,
        },
        other => CliError::input(other.to_string()),
    })
}

/// Lanes and bars beyond which a Gantt chart is no longer readable (nor small).
const GANTT_MAX_PROCESSORS: usize = 512;
const GANTT_MAX_TRANSFERS: usize = 200_000;

/// Refuses Gantt charts too large to read, before any work is done.
pub fn gantt_fits(processors: usize, transfers: usize) -> Result<(), CliError> {
    if processors > GANTT_MAX_PROCESSORS {
        return Err(CliError::input(format!(
            "--gantt draws a lane per processor: {processors} processors are too many to read (at most {GANTT_MAX_PROCESSORS})"
        )));
    }
    if transfers > GANTT_MAX_TRANSFERS {
        return Err(CliError::input(format!(
            "--gantt draws a bar per transfer: {transfers} transfers are too many to read (at most {GANTT_MAX_TRANSFERS}); the plan itself is fine without --gantt"
        )));
    }
    Ok(())
}

/// Opens the file of `--gantt` (if given) before any work, refusing charts of
/// more than [`GANTT_MAX_PROCESSORS`] lanes.
pub fn open_chart(path: Option<&Path>, lanes: usize) -> Result<Option<(SvgFile, &Path)>, CliError> {
    match path {
        Some(path) => {
            gantt_fits(lanes, 0)?;
            Ok(Some((SvgFile::create(path)?, path)))
        }
        None => Ok(None),
    }
}

/// Prints a plan command's output: its JSON `document` with `--json`, else its
/// text `report`; then writes its Gantt chart `(svg, file, path)` if any.
pub fn print_plan(
    json: bool,
    document: &impl Serialize,
    report: impl FnOnce() -> String,
    chart: Option<(String, (SvgFile, &Path))>,
) -> Result<u8, CliError> {
    let write = |out: &mut dyn Write| {
        hetbal::document::write_json(out, document).map_err(std::io::Error::from)
    };
    print_with(json.then_some(write), report, chart)
}

/// [`print_plan`] for a ring plan, its JSON written row by row
/// ([`plan_json::write_plan`]: the same bytes, in a fraction of the time).
pub fn print_ring_plan(
    json: bool,
    plan: &RingPlan,
    report: impl FnOnce() -> String,
    chart: Option<(String, (SvgFile, &Path))>,
) -> Result<u8, CliError> {
    let write = |mut out: &mut dyn Write| plan_json::write_plan(&mut out, plan);
    print_with(json.then_some(write), report, chart)
}

/// What [`print_plan`] does, the JSON written by `write_document` (given with
/// `--json`). The output is buffered in large blocks: a plan can be hundreds
/// of megabytes.
fn print_with(
    write_document: Option<impl FnOnce(&mut dyn Write) -> std::io::Result<()>>,
    report: impl FnOnce() -> String,
    chart: Option<(String, (SvgFile, &Path))>,
) -> Result<u8, CliError> {
    let stdout = std::io::stdout();
    let mut out = std::io::BufWriter::with_capacity(OUTPUT_BUFFER, stdout.lock());
    if let Some(write_document) = write_document {
        write_document(&mut out)
            .map_err(|e| CliError::input(format!("cannot write the plan: {e}")))?;
        let _ = writeln!(out);
    } else {
        let _ = write!(out, "{}", report());
    }
    let _ = out.flush();
    if let Some((svg, (file, path))) = chart {
        file.write(&svg)?;
        eprintln!("Gantt chart written to {}", path.display());
    }
    Ok(0)
}

/// The bytes [`print_with`] gathers before each write to the standard output
/// (the blocks of a ring plan's rows, as large, go through as they are).
const OUTPUT_BUFFER: usize = plan_json::BLOCK;

/// The Gantt chart of a ring plan, as an SVG document.
pub fn ring_svg(
    ring: &RingInstance,
    plan: &RingPlan,
    schedule: &Schedule,
) -> Result<String, CliError> {
    let title = format!(
        "{} ring, {} processors: makespan {} ({})",
        ring.kind(),
        ring.len(),
        report::secs(plan.makespan),
        plan.algorithm
    );
    let chart = hetbal_draw::ring_chart(title, ring, schedule);
    Ok(hetbal_draw::render_svg(&chart)?)
}

pub fn write_file(path: &Path, text: &str) -> Result<(), CliError> {
    std::fs::write(path, text)
        .map_err(|e| CliError::input(format!("cannot write {}: {e}", path.display())))
}

/// A chart's file, opened before any work so that an unwritable path is refused
/// before anything is printed ([`hetbal_draw::ChartFile`], with the CLI's errors).
pub struct SvgFile(hetbal_draw::ChartFile);

impl SvgFile {
    /// Opens (or creates) `path` for writing, without truncating it yet.
    pub fn create(path: &Path) -> Result<SvgFile, CliError> {
        hetbal_draw::ChartFile::create(path)
            .map(SvgFile)
            .map_err(|e| CliError::input(format!("cannot write {}: {e}", path.display())))
    }

    /// Replaces the file's content with `svg`.
    pub fn write(self, svg: &str) -> Result<(), CliError> {
        let path = self.0.path().to_path_buf();
        self.0
            .write(svg)
            .map_err(|e| CliError::input(format!("cannot write {}: {e}", path.display())))
    }
}
