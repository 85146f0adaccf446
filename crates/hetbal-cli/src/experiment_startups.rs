//! `hetbal experiment startups`: plans under start-ups against today's plans on
//! random rings (the library's `hetbal::experiment::startups`), as a table or JSON,
//! with a plot of the speed-ups.

use std::fmt::Write as _;
use std::path::PathBuf;
use std::time::Instant;

use clap::Args;
use hetbal::experiment::startups::{self as experiment, Settings, StartupExperiment};
use hetbal::ring::RingKind;
use hetbal_draw::lines::{LineChart, Series};
use hetbal_draw::RGBColor;
use indicatif::{ProgressBar, ProgressStyle};

use crate::common::{in_range, CliError, SvgFile};

/// `hetbal experiment startups` options.
#[derive(Args)]
pub struct StartupsArgs {
    /// Print the table as JSON (formats.md, "Experiment tables").
    #[arg(long)]
    pub json: bool,
    /// Also draw the speed-ups against the ring size as an SVG line chart here.
    #[arg(long, value_name = "FILE")]
    pub plot: Option<PathBuf>,
    /// Ring sizes (processors, at least 2 each), comma-separated.
    #[arg(long, value_name = "N,N,...", value_delimiter = ',',
          default_values_t = Settings::default().sizes)]
    pub sizes: Vec<usize>,
    /// Random rings per size and kind.
    #[arg(long, value_name = "N", default_value_t = Settings::default().rings)]
    pub rings: usize,
    /// Start-ups: each link's item cost times a factor drawn in LOW..HIGH.
    #[arg(long, value_name = "LOW..HIGH", default_value = "1..10", value_parser = factors)]
    pub startups: (f64, f64),
    /// Seed of the random draws (the same seed draws the same rings).
    #[arg(long, default_value_t = Settings::default().seed)]
    pub seed: u64,
}

/// Parses `LOW..HIGH`.
fn factors(text: &str) -> Result<(f64, f64), String> {
    let bad = || format!("{text:?}: expected LOW..HIGH, two numbers such as 1..10");
    let (low, high) = text.split_once("..").ok_or_else(bad)?;
    let number = |s: &str| s.trim().parse::<f64>().map_err(|_| bad());
    Ok((number(low)?, number(high)?))
}

/// Runs `hetbal experiment startups`.
pub fn run(args: &StartupsArgs) -> Result<u8, CliError> {
    for &n in &args.sizes {
        in_range(
            "--sizes",
            n,
            (0, 1_000_000),
            "a ring of that many processors is planned; 10^6 takes minutes",
        )?;
    }
    in_range("--rings", args.rings, (0, 100_000), "rings drawn per size")?;
    let plot_file = args.plot.as_deref().map(SvgFile::create).transpose()?;
    let settings = Settings {
        sizes: args.sizes.clone(),
        rings: args.rings,
        startup_factors: args.startups,
        seed: args.seed,
    };
    let total = 2 * settings.sizes.len() * settings.rings;
    let progress = ProgressBar::new(total as u64).with_style(
        ProgressStyle::with_template("{msg} [{bar:30}] {pos}/{len} ({eta} left)")
            .expect("a valid template")
            .progress_chars("=> "),
    );
    progress.set_message("startups");
    let started = Instant::now();
    let table = experiment::run_with_progress(&settings, |done| progress.set_position(done as u64))
        .map_err(|e| match e {
            experiment::ExperimentError::Plan(_) => CliError {
                message: e.to_string(),
                code: 1,
            },
            _ => CliError::input(e.to_string()),
        })?;
    progress.finish_and_clear();
    let elapsed = started.elapsed().as_secs_f64();
    if args.json {
        let json = serde_json::to_string_pretty(&table.document())
            .map_err(|e| CliError::input(format!("cannot write the table: {e}")))?;
        println!("{json}");
    } else {
        print!("{}", report(&table, elapsed));
    }
    if let (Some(file), Some(path)) = (plot_file, &args.plot) {
        file.write(&plot(&table).svg()?)?;
        eprintln!("plot written to {}", path.display());
    }
    Ok(0)
}

/// The text report.
fn report(table: &StartupExperiment, elapsed: f64) -> String {
    let s = &table.settings;
    let mut out = String::new();
    let _ = writeln!(
        out,
        "startups: {} random full rebalances per size and kind (loads 1..50 shuffled, item costs 0.5..2), start-ups {}..{} item costs per link, seed {}",
        s.rings, s.startup_factors.0, s.startup_factors.1, s.seed
    );
    let _ = writeln!(
        out,
        "speed-up: today's plan (made without start-ups) timed under them, over the start-up-aware plan; won: rings where the start-up planner's messages beat today's plan; /bound: makespan over the start-up lower bound (geometric means, min-max)"
    );
    let _ = writeln!(
        out,
        "\n{:<15} {:>5}  {:<26} {:>6}  {:<20} today /bound",
        "kind", "n", "speed-up mean (min-max)", "won", "aware /bound"
    );
    let spread = |s: &experiment::Spread| format!("{:.2} ({:.2}-{:.2})", s.mean, s.min, s.max);
    for r in &table.rows {
        let _ = writeln!(
            out,
            "{:<15} {:>5}  {:<26} {:>6}  {:<20} {}",
            r.kind.to_string(),
            r.processors,
            spread(&r.speedup),
            format!("{}/{}", r.messages_won, r.rings),
            spread(&r.over_bound),
            spread(&r.papers_over_bound),
        );
    }
    let _ = writeln!(out, "\n({elapsed:.1} s)");
    out
}

/// Speed-up against the ring size: per kind, the geometric mean and (dashed) the
/// least.
fn plot(table: &StartupExperiment) -> LineChart {
    let mut series = Vec::new();
    let kinds = [
        (RingKind::Unidirectional, "uni", RGBColor(0x1F, 0x5F, 0xB4)),
        (RingKind::Bidirectional, "bi", RGBColor(0xD9, 0x5F, 0x02)),
    ];
    for (kind, short, colour) in kinds {
        let rows: Vec<_> = table.rows.iter().filter(|r| r.kind == kind).collect();
        let line = |label: String, width, dashed, y: fn(&experiment::StartupRow) -> f64| Series {
            label,
            colour,
            width,
            dashed,
            points: rows.iter().map(|r| (r.processors as f64, y(r))).collect(),
        };
        series.push(line(format!("{short}, mean"), 2, false, |r| r.speedup.mean));
        series.push(line(format!("{short}, least"), 1, true, |r| r.speedup.min));
    }
    LineChart {
        title: format!(
            "start-up-aware plans against today's, start-ups {}..{} item costs",
            table.settings.startup_factors.0, table.settings.startup_factors.1
        ),
        x_label: "processors".into(),
        y_label: "speed-up (today's makespan / aware makespan)".into(),
        log_x: true,
        y_from_zero: false,
        legend_beside: true,
        series,
    }
}
