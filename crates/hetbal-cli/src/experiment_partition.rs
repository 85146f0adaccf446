//! `hetbal experiment partition`: the cuts other balancers make (p4est's equal
//! weights, Zoltan HSFC's and AMReX's speed shares) against the optimal weighted
//! partition (the library's `hetbal::experiment::partition`), as a table or JSON.

use std::fmt::Write as _;
use std::time::Instant;

use clap::Args;
use hetbal::experiment::partition::{self as experiment, PartitionExperiment, Settings};
use indicatif::{ProgressBar, ProgressStyle};

use crate::common::{in_range, CliError};

/// `hetbal experiment partition` options.
#[derive(Args)]
pub struct PartitionArgs {
    /// Print the table as JSON (formats.md, "Experiment tables").
    #[arg(long)]
    pub json: bool,
    /// Numbers of items, comma-separated.
    #[arg(long, value_name = "N,N,...", value_delimiter = ',',
          default_values_t = Settings::default().items)]
    pub items: Vec<usize>,
    /// Numbers of processors, comma-separated.
    #[arg(long, value_name = "P,P,...", value_delimiter = ',',
          default_values_t = Settings::default().processors)]
    pub processors: Vec<usize>,
    /// Random instances per profile, kind of speeds, size and processor count.
    #[arg(long, value_name = "N", default_value_t = Settings::default().instances)]
    pub instances: usize,
    /// Seed of the random draws (the same seed draws the same instances).
    #[arg(long, default_value_t = Settings::default().seed)]
    pub seed: u64,
}

/// Runs `hetbal experiment partition`.
pub fn run(args: &PartitionArgs) -> Result<u8, CliError> {
    for &n in &args.items {
        in_range(
            "--items",
            n,
            (1, 10_000_000),
            "each instance holds that many weights",
        )?;
    }
    for &p in &args.processors {
        in_range(
            "--processors",
            p,
            (1, 1_000_000),
            "each instance holds that many speeds",
        )?;
    }
    in_range(
        "--instances",
        args.instances,
        (1, 10_000),
        "a row averages that many instances",
    )?;
    let settings = Settings {
        items: args.items.clone(),
        processors: args.processors.clone(),
        instances: args.instances,
        seed: args.seed,
    };
    let total = experiment::PROFILES.len()
        * experiment::SPEEDS.len()
        * settings.items.len()
        * settings.processors.len()
        * settings.instances;
    let progress = ProgressBar::new(total as u64).with_style(
        ProgressStyle::with_template("{msg} [{bar:30}] {pos}/{len} ({eta} left)")
            .expect("a valid template")
            .progress_chars("=> "),
    );
    progress.set_message("partition");
    let started = Instant::now();
    let table = experiment::run_with_progress(&settings, |done| progress.set_position(done as u64))
        .map_err(|e| CliError::input(e.to_string()))?;
    progress.finish_and_clear();
    if args.json {
        let json = serde_json::to_string_pretty(&table.document())
            .map_err(|e| CliError::input(format!("cannot write the table: {e}")))?;
        println!("{json}");
    } else {
        print!("{}", report(&table, started.elapsed().as_secs_f64()));
    }
    Ok(0)
}

/// The text report.
fn report(table: &PartitionExperiment, elapsed: f64) -> String {
    let s = &table.settings;
    let mut out = String::new();
    let list = |v: &[usize]| {
        v.iter()
            .map(usize::to_string)
            .collect::<Vec<_>>()
            .join(", ")
    };
    let _ = writeln!(
        out,
        "partition: {} instances per profile, speeds, size and count; items {}; processors {}; seed {}",
        s.instances,
        list(&s.items),
        list(&s.processors),
        s.seed
    );
    let _ = writeln!(
        out,
        "bottleneck over the optimal one: equal weights (p4est), speed shares (Zoltan HSFC, AMReX SFC); proven: optima certified"
    );
    let _ = writeln!(
        out,
        "\n{:<10} {:<9} {:>9}  {:>19}  {:>19}  {:>7}",
        "weights", "speeds", "instances", "equal mean (worst)", "shares mean (worst)", "proven"
    );
    for r in &table.rows {
        let _ = writeln!(
            out,
            "{:<10} {:<9} {:>9}  {:>19}  {:>19}  {:>7}",
            r.weights,
            r.speeds,
            r.instances,
            format!("{:.2} ({:.2})", r.equal.mean, r.equal.worst),
            format!("{:.2} ({:.2})", r.share.mean, r.share.worst),
            format!("{}/{}", r.proven, r.instances),
        );
    }
    let _ = writeln!(out, "\n({elapsed:.1} s)");
    out
}
