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
use hetbal_draw::RGBColor;
use indicatif::{ProgressBar, ProgressStyle};

use hetbal_draw::lines::{LineChart, Series};

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
    #[arg(long, default_value = "8,32", value_name = "P,P,...", value_delimiter = ',', value_parser = ring_size)]
    rings: Vec<usize>,
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

/// Parses one ring size of `--rings`.
fn ring_size(text: &str) -> Result<usize, String> {
    match text.trim().parse::<usize>() {
        Ok(p) if p < 2 => Err("every ring needs at least 2 processors".into()),
        Ok(p) => Ok(p),
        Err(_) => Err("expected sizes like 8,32".into()),
    }
}

/// Speed profiles of the hosts read from `dir` (`<host>.profile`).
fn read_traces(dir: &Path, platform: &Platform) -> Result<Vec<SpeedProfile>, CliError> {
    crate::experiment::check_folder("--traces", Some(dir))?;
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
    let ratios = parse_ratios(&args.ratios)?;
    let platform = match &args.platform {
        Some(path) => crate::input::read_platform(path, 1e6, 1e6)?,
        None => paper_platform(args.seed),
    };
    let settings = Settings {
        rings: args.rings.clone(),
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
        traces: match &args.traces {
            Some(dir) => Some(read_traces(dir, &platform)?),
            None => None,
        },
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
        let model = retime.is_some().then(|| args.model.name());
        let document = table.document(&settings, engine.get_name(), model);
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
    let mut out = format!(
        "ring-iterative: {} iterations, {} items, {} draws per ring, {} redistributions\n{RATIO_MEANING}\n",
        args.iterations, args.items, args.draws, settings.kind
    );
    blocks(
        &mut out,
        table,
        &|ring| {
            format!("ring of {ring}: time normalised to `none` (mean redistributions in brackets)")
        },
        &format!(" {:>13} {:>13}", "adapt/fixed", "adapt/offline"),
        &|row| {
            format!(
                "{:>9.4} [{:>5.1}]",
                row.normalized_time, row.redistributions
            )
        },
        &|ring, ratio| {
            let at = |name| {
                table
                    .row(ring, ratio, name)
                    .map_or(f64::NAN, |r| r.normalized_time)
            };
            format!(
                " {:>+12.2}% {:>+12.2}%",
                percent_above(at("adaptive"), table.best_fixed(ring, ratio)),
                percent_above(at("adaptive"), at("offline-best"))
            )
        },
    );
    if table.rows.iter().any(|r| r.retimed.is_some()) {
        let _ = writeln!(
            out,
            "\nSimGrid ({} model): the same runs (same loads and redistributions) timed by \
             SimGrid, where a processor waits only for its neighbours' borders and, at a \
             redistribution, for every processor; it may beat the built-in max-model.",
            args.model.name()
        );
        blocks(
            &mut out,
            table,
            &|ring| {
                format!("ring of {ring} under SimGrid: time normalised to `none` under SimGrid (SimGrid time / built-in time in brackets)")
            },
            "",
            &|row| {
                let time = row.retimed.unwrap_or(f64::NAN) / row.time;
                format!(
                    "{:>9.4} [{time:>5.3}]",
                    row.retimed_normalized.unwrap_or(f64::NAN)
                )
            },
            &|_, _| String::new(),
        );
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

/// One block of the text table per ring size: its title, then a line per ratio
/// with a cell per policy and `extra` columns (headed `extra_header`).
fn blocks(
    out: &mut String,
    table: &Table,
    title: &dyn Fn(usize) -> String,
    extra_header: &str,
    cell: &dyn Fn(&Row) -> String,
    extra: &dyn Fn(usize, f64) -> String,
) {
    let names: Vec<String> = policies().iter().map(Policy::name).collect();
    for &ring in &table.rings {
        let _ = write!(out, "\n{}\n{:>6}", title(ring), "ratio");
        for name in &names {
            let _ = write!(out, " {name:>17}");
        }
        let _ = writeln!(out, "{extra_header}");
        for &ratio in &table.ratios {
            let _ = write!(out, "{ratio:>6}");
            for name in &names {
                let row = table.row(ring, ratio, name).expect("a row per policy");
                let _ = write!(out, " {}", cell(row));
            }
            let _ = writeln!(out, "{}", extra(ring, ratio));
        }
    }
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
        if let (Some(t), Some(n)) = (r.retimed, r.retimed_normalized) {
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
        let rows: Vec<&Row> = table.rows.iter().filter(|r| r.ring == ring).collect();
        let chart = figure(ring, &rows);
        write(
            format!("ring-iterative-{ring}.svg"),
            chart.svg()?.as_bytes(),
        )?;
        write(format!("ring-iterative-{ring}.png"), &chart.png()?)?;
    }
    Ok(())
}

/// The paper's Figures 3–4 for one ring size: normalised time against the
/// ratio on a log axis, one line per policy (adaptive thicker, offline-best
/// dashed), the legend beside the plot.
fn figure(ring: usize, rows: &[&Row]) -> LineChart {
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
    let series = policies().into_iter().zip(colours).map(|(policy, colour)| {
        let label = policy.name();
        Series {
            points: (rows.iter().filter(|r| r.policy == label))
                .map(|r| (r.ratio, r.normalized_time))
                .collect(),
            label,
            colour,
            width: if matches!(policy, Policy::Adaptive) {
                3
            } else {
                2
            },
            dashed: matches!(policy, Policy::OfflineBest),
        }
    });
    LineChart {
        title: format!("Ring of {ring}: time normalised to no redistribution"),
        x_label: "ratio: cost of a redistribution / time of an iteration (log scale)".into(),
        y_label: "normalised time".into(),
        log_x: true,
        y_from_zero: false,
        legend_beside: true,
        series: series.collect(),
    }
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
        assert_eq!(ring_size(" 8"), Ok(8));
        assert!(ring_size("1").is_err() && ring_size("x").is_err());
    }
}
