//! `hetbal partition`: the optimal weighted partition of items over processors of
//! different speeds, the least-moving one within a tolerance, and the moves of
//! whole items to it (the library's `hetbal::partition`), as a report or JSON.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use clap::Args;
use hetbal::document::{self, NumberArray, PartitionInstance};
use hetbal::partition::{
    choose_tolerance, move_schedule, order_processors, partition, partition_with_movement,
    MovePlan, PartitionDocument, PartitionError, Weight, TOLERANCES,
};

use crate::common::{gantt_fits, print_plan, CliError, SvgFile};
use crate::input::read_text;
use crate::report::secs;

/// `hetbal partition` options.
#[derive(Args)]
pub struct PartitionArgs {
    /// The problem (JSON, or TOML if the name ends in .toml): `weights`,
    /// `seconds_per_unit`, and optionally `current`, `sizes`, `tolerance`,
    /// `c_succ`, `c_pred` (formats.md, "Weighted partition").
    pub file: PathBuf,
    /// Print the result as JSON (formats.md) instead of the report.
    #[arg(long)]
    pub json: bool,
    /// Read the weights from this array file instead of the document: a NumPy
    /// .npy file (float64, float32, int64, int32, uint64 or uint32, one
    /// dimension) or raw little-endian numbers named .f64, .f32, .u64, .u32,
    /// .i64 or .i32.
    #[arg(long, value_name = "FILE")]
    pub weights: Option<PathBuf>,
    /// Read the items' sizes in bytes from this array file (.npy or raw
    /// integers, as --weights).
    #[arg(long, value_name = "FILE")]
    pub sizes: Option<PathBuf>,
    /// The tolerance of the least-moving partition (replaces the document's).
    #[arg(long, value_name = "X")]
    pub tolerance: Option<f64>,
    /// The processor order is free: choose one (a heuristic) and partition in
    /// it. Not with current cuts.
    #[arg(long)]
    pub free_order: bool,
    /// Print every processor's row, however many (by default 64 at most).
    #[arg(long)]
    pub all: bool,
    /// Iterations left: choose the tolerance whose moves and bottleneck end
    /// them soonest (needs `current` and `c_succ`; replaces `tolerance`).
    #[arg(long, value_name = "N")]
    pub remaining: Option<u64>,
    /// Draw each processor's time per iteration in this SVG file.
    #[arg(long, value_name = "FILE.svg")]
    pub svg: Option<PathBuf>,
}

/// Reads an array file.
fn read_array(path: &Path) -> Result<NumberArray, CliError> {
    let bytes = std::fs::read(path)
        .map_err(|e| CliError::input(format!("cannot read {}: {e}", path.display())))?;
    document::parse_array(&bytes, &path.to_string_lossy())
        .map_err(|e| CliError::input(format!("{}: {e}", path.display())))
}

/// Where the value an error names came from: the array file given for the
/// weights or the sizes, `--tolerance`, else the document.
fn origin(e: &PartitionError, args: &PartitionArgs) -> String {
    let file = |path: &Option<PathBuf>| path.as_ref().map(|p| p.display().to_string());
    let given = match e {
        PartitionError::InvalidWeight { .. } | PartitionError::WeightOverflow { .. } => {
            file(&args.weights)
        }
        PartitionError::SizeOverflow { .. } => file(&args.sizes),
        PartitionError::InvalidTolerance(_) => args.tolerance.map(|_| "--tolerance".to_string()),
        _ => None,
    };
    given.unwrap_or_else(|| args.file.display().to_string())
}

/// Runs `hetbal partition`.
pub fn run(args: &PartitionArgs) -> Result<u8, CliError> {
    let text = read_text(&args.file)?;
    let mut chart_file: Option<SvgFile> = None;
    let format = document::Format::of_file_name(&args.file.to_string_lossy());
    let mut doc = document::parse_partition_instance(&text, format)
        .map_err(|e| CliError::input(format!("{}: {e}", args.file.display())))?;
    if let Some(path) = &args.sizes {
        doc.sizes = Some(
            read_array(path)?
                .into_u64()
                .map_err(|e| CliError::input(format!("{}: {e}", path.display())))?,
        );
    }
    if args.tolerance.is_some() {
        doc.tolerance = args.tolerance;
    }
    let weights = match (&args.weights, doc.weights.take()) {
        (Some(path), _) => read_array(path)?,
        (None, Some(w)) => NumberArray::F64(w),
        (None, None) => {
            return Err(CliError::input(format!(
                "{}: no `weights`: give them in the document or with --weights FILE",
                args.file.display()
            )))
        }
    };
    let result = match &weights {
        NumberArray::F64(w) => solve(w, &doc, args),
        NumberArray::F32(w) => solve(w, &doc, args),
        NumberArray::U64(w) => solve(w, &doc, args),
        NumberArray::U32(w) => solve(w, &doc, args),
        NumberArray::I64(w) => solve(w, &doc, args),
        NumberArray::I32(w) => solve(w, &doc, args),
    };
    let result = result.map_err(|e| CliError::input(format!("{}: {e}", origin(&e, args))))?;
    if let Some(path) = &args.svg {
        gantt_fits(result.times.len(), 0)?;
        chart_file = Some(SvgFile::create(path)?);
    }
    print_plan(
        args.json,
        &result,
        || report(&doc, weights.len(), &result, args.all),
        None,
    )?;
    if let (Some(file), Some(path)) = (chart_file, &args.svg) {
        let title = format!(
            "{} items on {} processors: bottleneck {} s{}",
            weights.len(),
            result.times.len(),
            secs(result.bottleneck),
            if result.optimal { " (optimal)" } else { "" }
        );
        let chart = hetbal_draw::partition_chart(title, &result);
        let svg = hetbal_draw::render_svg(&chart)
            .map_err(|e| CliError::input(format!("cannot draw the chart: {e}")))?;
        file.write(&svg)?;
        eprintln!("chart written to {}", path.display());
    }
    Ok(0)
}

/// Partitions the weights as the document and options ask.
fn solve<W: Weight>(
    weights: &[W],
    doc: &PartitionInstance,
    args: &PartitionArgs,
) -> Result<PartitionDocument, PartitionError> {
    let speeds = &doc.seconds_per_unit;
    let needs_current = |what: &str| PartitionError::Limit {
        what: format!("`{what}` needs the current cuts (`current`)"),
    };
    match &doc.current {
        None => {
            if doc.tolerance.is_some() {
                return Err(needs_current("tolerance"));
            }
            if doc.c_succ.is_some() || doc.c_pred.is_some() {
                return Err(needs_current("c_succ"));
            }
            if doc.sizes.is_some() {
                return Err(needs_current("sizes"));
            }
            if args.remaining.is_some() {
                return Err(needs_current("--remaining"));
            }
            if args.free_order {
                Ok(PartitionDocument::ordered(&order_processors(
                    weights, speeds,
                )?))
            } else {
                Ok(PartitionDocument::optimal(&partition(weights, speeds)?))
            }
        }
        Some(current) => {
            if args.free_order {
                return Err(PartitionError::Limit {
                    what: "--free-order renumbers the processors: it cannot keep `current`".into(),
                });
            }
            let tolerance = doc.tolerance.unwrap_or(0.0);
            let sizes = doc.sizes.as_deref();
            if let Some(remaining) = args.remaining {
                let (Some(succ), pred) = (doc.c_succ.as_ref().or(doc.c_pred.as_ref()), &doc.c_pred)
                else {
                    return Err(PartitionError::Limit {
                        what: "--remaining needs the link costs (`c_succ`, `c_pred`) to price the moves".into(),
                    });
                };
                let pred = pred.as_ref().unwrap_or(succ);
                let r = choose_tolerance(
                    weights,
                    speeds,
                    current,
                    sizes,
                    succ,
                    pred,
                    remaining,
                    &TOLERANCES,
                )?;
                return Ok(PartitionDocument::rebalance(&r));
            }
            let moving = partition_with_movement(weights, speeds, current, tolerance, sizes)?;
            let moves: Option<MovePlan> = match (&doc.c_succ, &doc.c_pred) {
                (None, None) => None,
                (succ, pred) => {
                    let succ = succ.as_ref().or(pred.as_ref()).expect("one is given");
                    let pred = pred.as_ref().unwrap_or(succ);
                    Some(move_schedule(current, &moving.cuts, sizes, succ, pred)?)
                }
            };
            Ok(PartitionDocument::moving(&moving, moves))
        }
    }
}

/// The text report: a row per processor (range, weight, time), the bottleneck
/// against its bound, what moves.
fn report(doc: &PartitionInstance, items: usize, r: &PartitionDocument, all: bool) -> String {
    let p = r.times.len();
    let mut out = String::new();
    let total: f64 = r.weights.iter().sum();
    let _ = writeln!(
        out,
        "partition of {items} items (weight {}) over {p} processors{}",
        secs(total),
        if r.order.is_some() {
            ", in an order of its own"
        } else {
            ""
        }
    );
    let _ = writeln!(
        out,
        "\n{:>6}  {:>6}  {:>22}  {:>10}  {:>12}  {:>12}  {:>10}",
        "#", "proc", "items", "count", "weight", "s per unit", "time (s)"
    );
    // Rows: all, or the 64 busiest in processor order.
    let mut shown: Vec<usize> = (0..p).collect();
    if !all && p > 64 {
        shown.sort_by(|&a, &b| r.times[b].total_cmp(&r.times[a]).then(a.cmp(&b)));
        shown.truncate(64);
        shown.sort_unstable();
    }
    for &k in &shown {
        let proc = r.order.as_ref().map_or(k, |o| o[k]);
        let (a, b) = (r.cuts[k], r.cuts[k + 1]);
        let _ = writeln!(
            out,
            "{:>6}  {:>6}  {:>22}  {:>10}  {:>12}  {:>12}  {:>10}",
            k,
            format!("P{proc}"),
            if a == b {
                "-".to_string()
            } else {
                format!("{a}..{b}")
            },
            b - a,
            secs(r.weights[k]),
            secs(doc.seconds_per_unit[proc]),
            secs(r.times[k]),
        );
    }
    if shown.len() < p {
        let _ = writeln!(
            out,
            "  ({} of {p} processors shown: the busiest; --all prints every one)",
            shown.len()
        );
    }
    let _ = writeln!(out);
    let _ = writeln!(out, "bottleneck   {} s", secs(r.bottleneck));
    let _ = writeln!(out, "lower bound  {} s", secs(r.lower_bound));
    let _ = writeln!(
        out,
        "optimal      {}",
        if r.optimal {
            "yes (proven: every smaller bottleneck fails the probe)"
        } else {
            "no (within the tolerance)"
        }
    );
    if let (Some(moved), Some(moved_items), Some(limit)) = (r.moved, r.moved_items, r.limit) {
        let _ = writeln!(
            out,
            "moved        {moved_items} {}, {moved} bytes (the least of any partition within {} s: tolerance {})",
            if moved_items == 1 { "item" } else { "items" },
            secs(limit),
            r.chosen.or(doc.tolerance).unwrap_or(0.0)
        );
    }
    if let Some(candidates) = &r.candidates {
        let _ = writeln!(
            out,
            "\nover the iterations left: move time + iterations x bottleneck, per tolerance"
        );
        for c in candidates {
            let chosen = c.tolerance == r.chosen;
            let _ = writeln!(
                out,
                "  {:<9} bottleneck {:>10} s  moves {:>10} s  {:>12} bytes  total {:>12} s{}",
                c.tolerance
                    .map_or("stay".to_string(), |t| format!("{}%", t * 100.0)),
                secs(c.bottleneck),
                secs(c.move_time),
                c.moved_bytes,
                secs(c.total),
                if chosen { "  <-" } else { "" }
            );
        }
        let _ = writeln!(out);
    }
    if let Some(m) = &r.moves {
        let _ = writeln!(
            out,
            "moves        {} trains of whole items, makespan {} s, lower bound {} s{}",
            m.moves.len(),
            secs(m.makespan),
            secs(m.lower_bound),
            if m.optimal { " (optimal)" } else { "" }
        );
    }
    out
}
