//! `hetbal experiment ring-iterative`: the ring paper's section 7 experiment (an
//! iterative application whose processors change speed twice, redistributed 0, 1,
//! 4, 9 or 19 times), plus the adaptive policy and the offline best. The library
//! runs it (`hetbal::experiment::ring_iterative`); this module reads the
//! arguments and files, shows the progress, prints the table and draws the plots.
//!
//! With `--engine simgrid` (builds with the cargo feature `replay`) every run of
//! the built-in simulator is also re-timed under SimGrid, one worker process per
//! run: the same loads and redistributions (what the policy decided), timed by
//! SimGrid's hosts and links, where neighbours wait only for each other's borders
//! and everyone for everyone only at a redistribution (see
//! `hetbal_simgrid::iterative`). Both engines' times are reported side by side.

use std::fmt::{self, Write as _};
use std::path::{Path, PathBuf};

use clap::{Args, ValueEnum};
use hetbal::experiment::ring_iterative::{
    self as experiment, paper_platform, policies, RingIterativeError, Row, Settings, Table,
    RATIO_MEANING,
};
use hetbal::iterative::{Policy, Run, Simulator, SpeedProfile};
use hetbal::platform::Platform;
use hetbal::ring::RingKind;
use indicatif::{ProgressBar, ProgressStyle};
use plotters::coord::Shift;
use plotters::element::DashedPathElement;
use plotters::prelude::*;

use crate::common::CliError;
use crate::replay::Model;
use crate::report::percent_above;

/// `--kind`: the ring kind whose planner prices the redistributions.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
enum Kind {
    Bidirectional,
    Unidirectional,
}

/// `--engine`: who times the runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
enum Engine {
    Builtin,
    Simgrid,
}

/// Arguments of `hetbal experiment ring-iterative`.
#[derive(Args)]
pub struct IterativeExperimentArgs {
    /// Ring sizes, comma-separated.
    #[arg(long, default_value = "8,32", value_name = "P,P,...")]
    rings: String,
    /// Ratios: a range `A..B` (integers from A to B) or a comma-separated list.
    /// See the printed meaning: cost of a redistribution / time of an iteration.
    #[arg(
        long,
        default_value = "1,2,5,10,20,50,100",
        value_name = "A..B|R,R,..."
    )]
    ratios: String,
    /// Random draws per ring size (processors and speed changes); times are
    /// averaged over them.
    #[arg(long, default_value_t = 10)]
    draws: u64,
    /// Iterations of the application.
    #[arg(long, default_value_t = 100)]
    iterations: u32,
    /// Items (matrix columns) shared by the processors.
    #[arg(long, default_value_t = 1000)]
    items: u64,
    /// Items exchanged with each neighbour at the end of every iteration (the
    /// paper's experiment updates independent columns: none). With borders, large
    /// ratios may be out of reach: a redistribution must cost more than `ratio`
    /// border exchanges.
    #[arg(long, default_value_t = 0)]
    border_items: u64,
    /// Ring kind whose planner prices the redistributions.
    #[arg(long, value_enum, default_value_t = Kind::Bidirectional)]
    kind: Kind,
    /// Largest speed change factor of the random changes: each new speed is the
    /// nominal one times a factor drawn log-uniformly in [1/spread, spread].
    #[arg(long, default_value_t = 3.0)]
    spread: f64,
    /// Platform to draw the rings from (JSON or SimGrid XML). Default: a generated
    /// WAN/MAN/LAN platform of 90 hosts, like the paper's.
    #[arg(long, value_name = "FILE")]
    platform: Option<PathBuf>,
    /// Folder of speed profiles `<host>.profile` (SimGrid's syntax, dates in
    /// iterations); hosts without a file keep their speed. Default: the paper's
    /// random changes.
    #[arg(long, value_name = "DIR")]
    traces: Option<PathBuf>,
    /// Seed of the random draws.
    #[arg(long, default_value_t = 2004)]
    seed: u64,
    /// Write the table as CSV and the plots (SVG and PNG) in this folder.
    #[arg(long, value_name = "DIR")]
    out: Option<PathBuf>,
    /// Print the table as JSON (formats.md, "Experiment tables").
    #[arg(long)]
    json: bool,
    /// Engine: `builtin` (the simulator's max-model) or `simgrid` (also re-time
    /// every run under SimGrid, one simulation per run: slow; needs the cargo
    /// feature `replay`). SimGrid's processors wait only for the messages they
    /// need (neighbours' borders, everyone at a redistribution), so its times may
    /// be lower than the built-in ones.
    #[arg(long, value_enum, default_value_t = Engine::Builtin)]
    engine: Engine,
    /// Network model of `--engine simgrid`: oneport (the papers' model), CM02 or
    /// LV08 (SimGrid's).
    #[arg(long, value_enum, value_name = "MODEL", ignore_case = true, default_value_t = Model::OnePort)]
    model: Model,
    /// Wall-time limit of each SimGrid simulation in seconds (`--engine simgrid`).
    #[arg(long, value_name = "SECONDS", default_value_t = 60.0)]
    timeout: f64,
}

/// Parses `A..B` (integers A to B) or `x,y,z`.
fn parse_ratios(text: &str) -> Result<Vec<f64>, CliError> {
    let bad = |why: &str| CliError::input(format!("--ratios {text}: {why}"));
    let ratios: Vec<f64> = if let Some((a, b)) = text.split_once("..") {
        let a: u32 = a.trim().parse().map_err(|_| bad("A..B needs integers"))?;
        let b: u32 = b.trim().parse().map_err(|_| bad("A..B needs integers"))?;
        if a > b {
            return Err(bad("the range is empty"));
        }
        (a..=b).map(f64::from).collect()
    } else {
        text.split(',')
            .map(|r| r.trim().parse::<f64>().map_err(|_| bad("not a number")))
            .collect::<Result<_, _>>()?
    };
    if ratios.is_empty() || ratios.iter().any(|r| !r.is_finite() || *r <= 0.0) {
        return Err(bad("every ratio must be finite and > 0"));
    }
    Ok(ratios)
}

fn parse_rings(text: &str) -> Result<Vec<usize>, CliError> {
    let rings: Vec<usize> = text
        .split(',')
        .map(|r| r.trim().parse::<usize>())
        .collect::<Result<_, _>>()
        .map_err(|_| CliError::input(format!("--rings {text}: expected sizes like 8,32")))?;
    if rings.is_empty() || rings.iter().any(|&p| p < 2) {
        return Err(CliError::input(format!(
            "--rings {text}: every ring needs at least 2 processors"
        )));
    }
    Ok(rings)
}

/// Speed profiles of the hosts read from `dir` (`<host>.profile`).
fn read_traces(dir: &Path, platform: &Platform) -> Result<Vec<SpeedProfile>, CliError> {
    if !dir.is_dir() {
        return Err(CliError::input(format!(
            "--traces {}: not a folder",
            dir.display()
        )));
    }
    let mut found = 0;
    let mut profiles = Vec::with_capacity(platform.len());
    for host in 0..platform.len() {
        let path = dir.join(format!("{}.profile", platform.name(host)));
        if path.exists() {
            let text = crate::input::read_text(&path)?;
            let profile = SpeedProfile::parse(&text)
                .map_err(|e| CliError::input(format!("{}: {e}", path.display())))?;
            profiles.push(profile);
            found += 1;
        } else {
            profiles.push(SpeedProfile::constant());
        }
    }
    if found == 0 {
        return Err(CliError::input(format!(
            "--traces {}: no file `<host>.profile` for any host of the platform \
             (first host: `{}`)",
            dir.display(),
            platform.name(0)
        )));
    }
    Ok(profiles)
}

/// Why SimGrid could not time a run: the message and the exit status.
struct EngineFailure(CliError);

impl fmt::Display for EngineFailure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "SimGrid: {}", self.0.message)
    }
}

/// Re-times one run of the simulator under SimGrid: its time.
type Retime = Box<dyn FnMut(&Simulator, &Run) -> Result<f64, EngineFailure>>;

/// Runs the experiment, prints the table and writes the files.
pub fn run(args: &IterativeExperimentArgs) -> Result<u8, CliError> {
    let rings = parse_rings(&args.rings)?;
    let ratios = parse_ratios(&args.ratios)?;
    let platform = match &args.platform {
        Some(path) => crate::input::read_platform(path, 1e6, 1e6)?,
        None => paper_platform(args.seed),
    };
    let settings = Settings {
        rings,
        ratios,
        draws: args.draws,
        iterations: args.iterations,
        items: args.items,
        border_items: args.border_items,
        kind: match args.kind {
            Kind::Bidirectional => RingKind::Bidirectional,
            Kind::Unidirectional => RingKind::Unidirectional,
        },
        spread: args.spread,
        traces: None,
        seed: args.seed,
    };
    let failure = |e: RingIterativeError<EngineFailure>| match e {
        RingIterativeError::Retime { ref error, .. } => CliError {
            message: e.to_string(),
            code: error.0.code,
        },
        e if e.setting().is_some() => CliError::input(format!("--{e}")),
        e => CliError::input(e.to_string()),
    };
    experiment::check(&settings, &platform).map_err(failure)?;
    let settings = Settings {
        traces: match &args.traces {
            Some(dir) => Some(read_traces(dir, &platform)?),
            None => None,
        },
        ..settings
    };
    let mut retime = simgrid_engine(args)?;
    if retime.is_some() && settings.rings.contains(&2) {
        return Err(CliError::input(
            "--engine simgrid: rings of 2 processors cannot be simulated (SimGrid has one route per pair of hosts and the borders need both links); use rings of 3 or more",
        ));
    }
    let steps = settings.rings.len() as u64 * args.draws * settings.ratios.len() as u64;
    if retime.is_some() {
        eprintln!(
            "note: --engine simgrid runs one SimGrid simulation per run ({} here, in worker processes): this takes a while",
            steps * policies().len() as u64
        );
    }
    let progress = ProgressBar::new(steps).with_style(
        ProgressStyle::with_template("{msg} [{bar:30}] {pos}/{len} ({eta} left)")
            .expect("a valid template")
            .progress_chars("=> "),
    );
    progress.set_message("ring-iterative");
    let table = experiment::run(
        &platform,
        &settings,
        retime.as_deref_mut(),
        &mut |done, _| progress.set_position(done),
    )
    .map_err(failure)?;
    progress.finish_and_clear();
    if let Some(dir) = &args.out {
        write_outputs(dir, &table)?;
    }
    if args.json {
        let engine = args.engine.to_possible_value().expect("a named value");
        let mut document = serde_json::json!({
            "experiment": "ring-iterative",
            "parameters": {
                "iterations": args.iterations,
                "items": args.items,
                "border_items": args.border_items,
                "draws": args.draws,
                "kind": settings.kind.to_string(),
                "spread": args.spread,
                "seed": args.seed,
                "speeds": if args.traces.is_some() { "trace files" } else { "paper: two random changes per processor" },
                "ratio_meaning": RATIO_MEANING,
                "engine": engine.get_name(),
            },
            "rows": table.rows.iter().filter(|r| r.policy != "profitability").collect::<Vec<_>>(),
        });
        if retime.is_some() {
            document["parameters"]["model"] = serde_json::json!(args.model.name());
        }
        println!(
            "{}",
            serde_json::to_string_pretty(&document).expect("the table serialises")
        );
    } else {
        print!("{}", text_table(args, &settings, &table));
    }
    Ok(0)
}

/// The SimGrid re-timing of `--engine simgrid`, `None` for `builtin`.
#[cfg(not(feature = "replay"))]
fn simgrid_engine(args: &IterativeExperimentArgs) -> Result<Option<Retime>, CliError> {
    if args.engine == Engine::Simgrid {
        return Err(CliError::input(
            "this hetbal was built without SimGrid: `--engine simgrid` needs the cargo feature `replay` and SimGrid 3.32 or later (Debian: apt-get install libsimgrid-dev). Build it with `cargo build --release -p hetbal-cli --features replay` (or `cargo install --path crates/hetbal-cli --features replay`)",
        ));
    }
    Ok(None)
}

/// The SimGrid re-timing of `--engine simgrid`, `None` for `builtin`: each run
/// in its own worker process (`hetbal replay --simgrid-worker`; SimGrid runs one
/// simulation per process).
#[cfg(feature = "replay")]
fn simgrid_engine(args: &IterativeExperimentArgs) -> Result<Option<Retime>, CliError> {
    use hetbal_simgrid::{IterativeJob, ReplayError};
    if args.engine != Engine::Simgrid {
        return Ok(None);
    }
    let worker = crate::replay::worker(args.timeout)?;
    let model = args.model.network_model();
    let failure = |e: ReplayError| {
        let code = match e {
            ReplayError::TooManyItems { .. }
            | ReplayError::TooManyProcessors { .. }
            | ReplayError::Unreplayable(_) => 2,
            _ => 1,
        };
        EngineFailure(CliError {
            message: e.to_string(),
            code,
        })
    };
    Ok(Some(Box::new(move |simulator: &Simulator, run: &Run| {
        let job = IterativeJob::from_run(simulator, run, model).map_err(failure)?;
        Ok(worker.iterative(&job).map_err(failure)?.time)
    })))
}

/// The text table: normalised times per ratio, one block per ring size, and the
/// adaptive policy's standing.
fn text_table(args: &IterativeExperimentArgs, settings: &Settings, table: &Table) -> String {
    let names: Vec<String> = policies().iter().map(Policy::name).collect();
    let mut out = String::new();
    let _ = writeln!(
        out,
        "ring-iterative: {} iterations, {} items, {} draws per ring, {} redistributions",
        args.iterations, args.items, args.draws, settings.kind
    );
    let _ = writeln!(out, "{RATIO_MEANING}");
    for &ring in &table.rings {
        let _ = writeln!(
            out,
            "\nring of {ring}: time normalised to `none` (mean redistributions in brackets)"
        );
        let _ = write!(out, "{:>6}", "ratio");
        for name in &names {
            let _ = write!(out, " {name:>17}");
        }
        let _ = writeln!(out, " {:>13} {:>13}", "adapt/fixed", "adapt/offline");
        for &ratio in &table.ratios {
            let at = |name: &str| table.row(ring, ratio, name).expect("a row per policy");
            let _ = write!(out, "{ratio:>6}");
            for name in &names {
                let row = at(name);
                let _ = write!(
                    out,
                    " {:>9.4} [{:>5.1}]",
                    row.normalized_time, row.redistributions
                );
            }
            let adaptive = at("adaptive").normalized_time;
            let offline = at("offline-best").normalized_time;
            let _ = writeln!(
                out,
                " {:>+12.2}% {:>+12.2}%",
                percent_above(adaptive, table.best_fixed(ring, ratio)),
                percent_above(adaptive, offline)
            );
        }
    }
    if table.rows.iter().any(|r| r.retimed.is_some()) {
        let _ = write!(out, "{}", simgrid_table(args, table, &names));
    }
    let _ = writeln!(
        out,
        "\nadapt/fixed: the adaptive policy against the best of none and fixed-N at that \
         ratio (negative = better); adapt/offline: against the offline best. \
         profitability: model.md's rule alone (speeds assumed to persist)."
    );
    let s = table.standing();
    let wins: Vec<String> = s.wins.iter().map(|(r, t)| format!("{r}@{t}")).collect();
    let _ = writeln!(
        out,
        "\nadaptive vs the best fixed scheme: worst {:+.2}% (ring {}, ratio {}); strictly \
         better than every fixed scheme at {} of {} (ring@ratio: {}); at most {:+.2}% \
         above the offline best.",
        100.0 * s.worst_excess,
        s.worst_ring,
        s.worst_ratio,
        wins.len(),
        table.rings.len() * table.ratios.len(),
        if wins.is_empty() {
            "none".to_string()
        } else {
            wins.join(" ")
        },
        100.0 * s.offline_gap
    );
    out
}

/// The SimGrid blocks of the text table: SimGrid's normalised times, and in
/// brackets SimGrid's mean time over the built-in one.
fn simgrid_table(args: &IterativeExperimentArgs, table: &Table, names: &[String]) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "\nSimGrid ({} model): the same runs (same loads and redistributions) timed by \
         SimGrid, where a processor waits only for its neighbours' borders and, at a \
         redistribution, for every processor; it may beat the built-in max-model.",
        args.model.name()
    );
    for &ring in &table.rings {
        let _ = writeln!(
            out,
            "\nring of {ring} under SimGrid: time normalised to `none` under SimGrid \
             (SimGrid time / built-in time in brackets)"
        );
        let _ = write!(out, "{:>6}", "ratio");
        for name in names {
            let _ = write!(out, " {name:>17}");
        }
        let _ = writeln!(out);
        for &ratio in &table.ratios {
            let _ = write!(out, "{ratio:>6}");
            for name in names {
                let row = table.row(ring, ratio, name).expect("a row per policy");
                let _ = write!(
                    out,
                    " {:>9.4} [{:>5.3}]",
                    row.retimed_normalized.unwrap_or(f64::NAN),
                    row.retimed.unwrap_or(f64::NAN) / row.time
                );
            }
            let _ = writeln!(out);
        }
    }
    out
}

/// Writes `ring-iterative.csv` and, per ring size, `ring-iterative-P.svg` and `.png`.
fn write_outputs(dir: &Path, table: &Table) -> Result<(), CliError> {
    std::fs::create_dir_all(dir)
        .map_err(|e| CliError::input(format!("cannot create {}: {e}", dir.display())))?;
    let simgrid = table.rows.iter().any(|r| r.retimed.is_some());
    let mut csv = String::from("ring,ratio,policy,redistributions,time,normalized_time");
    csv.push_str(if simgrid {
        ",simgrid_time,simgrid_normalized_time\n"
    } else {
        "\n"
    });
    for r in &table.rows {
        let _ = write!(
            csv,
            "{},{},{},{},{},{}",
            r.ring, r.ratio, r.policy, r.redistributions, r.time, r.normalized_time
        );
        if let (true, Some(t), Some(n)) = (simgrid, r.retimed, r.retimed_normalized) {
            let _ = write!(csv, ",{t},{n}");
        }
        csv.push('\n');
    }
    let write = |name: String, bytes: &[u8]| {
        let path = dir.join(name);
        std::fs::write(&path, bytes)
            .map_err(|e| CliError::input(format!("cannot write {}: {e}", path.display())))
    };
    write("ring-iterative.csv".into(), csv.as_bytes())?;
    for &ring in &table.rings {
        let ring_rows: Vec<&Row> = table.rows.iter().filter(|r| r.ring == ring).collect();
        let mut svg = String::new();
        {
            let root = SVGBackend::with_string(&mut svg, SIZE).into_drawing_area();
            draw_figure(&root, ring, &ring_rows).map_err(CliError::input)?;
        }
        write(format!("ring-iterative-{ring}.svg"), svg.as_bytes())?;
        let mut pixels = vec![0u8; (SIZE.0 * SIZE.1 * 3) as usize];
        {
            let root = BitMapBackend::with_buffer(&mut pixels, SIZE).into_drawing_area();
            draw_figure(&root, ring, &ring_rows).map_err(CliError::input)?;
        }
        write(
            format!("ring-iterative-{ring}.png"),
            &encode_png(&pixels, SIZE)?,
        )?;
    }
    Ok(())
}

const SIZE: (u32, u32) = (900, 560);

/// Width of the legend beside the plot (it never covers a curve).
const LEGEND_WIDTH: u32 = 150;

fn encode_png(rgb: &[u8], (width, height): (u32, u32)) -> Result<Vec<u8>, CliError> {
    let mut bytes = Vec::new();
    let fail = |e: png::EncodingError| CliError::input(format!("cannot encode the PNG: {e}"));
    {
        let mut encoder = png::Encoder::new(&mut bytes, width, height);
        encoder.set_color(png::ColorType::Rgb);
        encoder.set_depth(png::BitDepth::Eight);
        let mut writer = encoder.write_header().map_err(fail)?;
        writer.write_image_data(rgb).map_err(fail)?;
    }
    Ok(bytes)
}

/// Ticks of a log axis over `[lo, hi]`, for `pixels` of axis: labelled ticks
/// (1, 2, 5 or 1 per decade, or every few decades, as room allows: labels at
/// least 48 pixels apart) and the light grid (every unit of each decade when it
/// fits).
fn log_ticks(lo: f64, hi: f64, pixels: f64) -> (Vec<f64>, Vec<f64>) {
    let decades = (hi / lo).log10().max(1e-9);
    // Smallest gap between labels, in decades.
    let gap = decades * 48.0 / pixels;
    let steps: &[f64] = if gap <= (10f64 / 9.0).log10() {
        &[1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0]
    } else if gap <= 2f64.log10() {
        &[1.0, 2.0, 5.0]
    } else {
        &[1.0]
    };
    let every = gap.ceil().max(1.0) as i32;
    let value = |k: i32, m: f64| {
        if k >= 0 {
            m * 10f64.powi(k)
        } else {
            m / 10f64.powi(-k)
        }
    };
    let (first, last) = (lo.log10().floor() as i32, hi.log10().ceil() as i32);
    let in_range = |x: &f64| *x >= lo * (1.0 - 1e-9) && *x <= hi * (1.0 + 1e-9);
    let labels = (first..=last)
        .filter(|k| steps.len() > 1 || k.rem_euclid(every) == 0)
        .flat_map(|k| steps.iter().map(move |&m| value(k, m)))
        .filter(in_range)
        .collect();
    let light = if decades * 9.0 * 4.0 <= pixels {
        (first..=last)
            .flat_map(|k| (1..10).map(move |m| value(k, f64::from(m))))
            .filter(in_range)
            .collect()
    } else {
        Vec::new()
    };
    (labels, light)
}

/// The paper's Figures 3–4: normalised time against the ratio, one line per
/// policy, the legend beside the plot.
fn draw_figure<DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>,
    ring: usize,
    rows: &[&Row],
) -> Result<(), String> {
    let font = crate::gantt::bundled_font()?;
    let fail = |e: DrawingAreaErrorKind<DB::ErrorType>| format!("cannot draw the figure: {e}");
    root.fill(&WHITE).map_err(fail)?;
    let (plot, legend) = root.split_horizontally(SIZE.0 - LEGEND_WIDTH);
    let fold = |f: fn(f64, f64) -> f64, start, value: fn(&Row) -> f64| {
        rows.iter().map(|r| value(r)).fold(start, f)
    };
    let (x_min, x_max) = (
        fold(f64::min, f64::INFINITY, |r| r.ratio),
        fold(f64::max, f64::NEG_INFINITY, |r| r.ratio),
    );
    let (x_min, x_max) = if x_max > x_min {
        (x_min, x_max)
    } else {
        (x_min / 2.0, x_min * 2.0)
    };
    let y_min = fold(f64::min, f64::INFINITY, |r| r.normalized_time);
    let y_max = fold(f64::max, 0.0, |r| r.normalized_time);
    let pad = ((y_max - y_min) * 0.08).max(0.01);
    let (labels, light) = log_ticks(x_min, x_max, f64::from(SIZE.0 - LEGEND_WIDTH - 100));
    let mut chart = ChartBuilder::on(&plot)
        .caption(
            format!("Ring of {ring}: time normalised to no redistribution"),
            (font, 20.0),
        )
        .margin(14)
        .x_label_area_size(44)
        .y_label_area_size(64)
        .build_cartesian_2d(
            (x_min..x_max)
                .log_scale()
                .with_key_points(labels)
                .with_light_points(light),
            (y_min - pad)..(y_max + pad),
        )
        .map_err(fail)?;
    chart
        .configure_mesh()
        .x_desc("ratio: cost of a redistribution / time of an iteration (log scale)")
        .y_desc("normalised time")
        .x_label_formatter(&|x| {
            if (1e-3..1e5).contains(x) {
                format!("{x}")
            } else {
                format!("{x:e}")
            }
        })
        .x_label_style((font, 13.0))
        .y_label_style((font, 13.0))
        .axis_desc_style((font, 14.0))
        .light_line_style(RGBColor(0xEE, 0xEE, 0xEE))
        .draw()
        .map_err(fail)?;
    let colours = [
        RGBColor(0x44, 0x44, 0x44),
        RGBColor(0x1F, 0x77, 0xB4),
        RGBColor(0x2C, 0xA0, 0x2C),
        RGBColor(0x94, 0x67, 0xBD),
        RGBColor(0x8C, 0x56, 0x4B),
        RGBColor(0xD6, 0x27, 0x28),
        RGBColor(0xFF, 0x7F, 0x0E),
        RGBColor(0x17, 0xBE, 0xCF),
    ];
    for (i, (policy, colour)) in policies().iter().zip(colours).enumerate() {
        let name = policy.name();
        let points: Vec<(f64, f64)> = rows
            .iter()
            .filter(|r| r.policy == name)
            .map(|r| (r.ratio, r.normalized_time))
            .collect();
        let width = if matches!(policy, Policy::Adaptive) {
            3
        } else {
            2
        };
        let style = ShapeStyle::from(&colour).stroke_width(width);
        let dashed = matches!(policy, Policy::OfflineBest);
        if dashed {
            chart.draw_series(DashedLineSeries::new(points.clone(), 6, 4, style))
        } else {
            chart.draw_series(LineSeries::new(points.clone(), style))
        }
        .map_err(fail)?;
        chart
            .draw_series(points.iter().map(|&p| Circle::new(p, 3, colour.filled())))
            .map_err(fail)?;
        // The legend entry, in the strip beside the plot.
        let y = 60 + 24 * i as i32;
        let sample = vec![(8, y), (36, y)];
        if dashed {
            legend.draw(&DashedPathElement::new(sample, 6, 4, style))
        } else {
            legend.draw(&PathElement::new(sample, style))
        }
        .and_then(|()| legend.draw(&Circle::new((22, y), 3, colour.filled())))
        .and_then(|()| legend.draw(&Text::new(name, (44, y - 7), (font, 13.0))))
        .map_err(fail)?;
    }
    root.present().map_err(fail)?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ratios_parse_ranges_and_lists() {
        assert_eq!(parse_ratios("1..3").unwrap(), vec![1.0, 2.0, 3.0]);
        assert_eq!(parse_ratios("0.5, 2").unwrap(), vec![0.5, 2.0]);
        for bad in ["3..1", "a..b", "1,x", "0", "-1", ""] {
            assert!(parse_ratios(bad).is_err(), "{bad}");
        }
        assert_eq!(parse_rings("8, 32").unwrap(), vec![8, 32]);
        assert!(parse_rings("1").is_err());
    }

    #[test]
    fn log_axis_labels_keep_apart() {
        // 1 to 12 on 650 pixels: 1, 2, 5, 10 (not 8, 9, 10 side by side).
        assert_eq!(log_ticks(1.0, 12.0, 650.0).0, vec![1.0, 2.0, 5.0, 10.0]);
        // Narrow ranges get every unit.
        assert_eq!(log_ticks(1.0, 3.0, 650.0).0, vec![1.0, 2.0, 3.0]);
        // Wide ranges one label per decade or fewer, each 48 pixels apart at least.
        for (lo, hi) in [(0.5, 200.0), (1.0, 1e6), (1e-3, 1e12)] {
            let (labels, _) = log_ticks(lo, hi, 650.0);
            let decades_per_pixel = (hi / lo).log10() / 650.0;
            for pair in labels.windows(2) {
                assert!(
                    (pair[1] / pair[0]).log10() / decades_per_pixel >= 48.0,
                    "{pair:?}"
                );
            }
            assert!(labels.len() >= 2, "{lo}..{hi}: {labels:?}");
        }
        assert_eq!(
            log_ticks(0.5, 200.0, 650.0).0,
            vec![0.5, 1.0, 2.0, 5.0, 10.0, 20.0, 50.0, 100.0, 200.0]
        );
    }
}
