//! `hetbal experiment load-dependent`: the online decider's constant and
//! functional models in closed loop on processors whose time depends on the
//! load (the library's `hetbal::experiment::load_dependent`), as a table or
//! JSON, with one plot per profile of the iteration time over the iterations.

use std::path::PathBuf;

use clap::Args;
use hetbal::experiment::load_dependent::{self as experiment, LoadDependentTrace};
use hetbal_draw::lines::{LineChart, Series};
use hetbal_draw::RGBColor;

use crate::common::CliError;
use crate::experiment::{check_folder, write_all};

/// `hetbal experiment load-dependent` options.
#[derive(Args)]
pub struct LoadDependentArgs {
    /// Print the table as JSON (formats.md, "Experiment tables").
    #[arg(long)]
    pub json: bool,
    /// Also draw, per profile, the iteration time over the iterations for
    /// both models (exact times solid, 1% noise dashed) against the true
    /// optimum, as SVG files load-dependent-PROFILE.svg in this folder.
    #[arg(long, value_name = "DIR")]
    pub plot: Option<PathBuf>,
    /// Seed of the noise (the same seed draws the same noise).
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
}

/// The suffix of a scenario's noisy variant (`standard_scenarios`).
const NOISY: &str = "-noise1%";

/// Runs `hetbal experiment load-dependent`.
pub fn run(args: &LoadDependentArgs) -> Result<u8, CliError> {
    check_folder("--plot", args.plot.as_deref())?;
    let result =
        experiment::run(args.seed).map_err(|e| CliError::input(format!("load-dependent: {e}")))?;
    if args.json {
        let text = serde_json::to_string_pretty(&result.document())
            .map_err(|e| CliError::input(format!("cannot write the table: {e}")))?;
        println!("{text}");
    } else {
        println!(
            "load-dependent: the decider's constant and functional models in closed loop (profitability policy, \
             links of 1 us per item), noise seed {}",
            args.seed
        );
        println!(
            "it<=5%, moves5: the first iteration from which the run stays within 5% of the true optimum, and the \
             moves before it (3% likewise); final, late max: the last iteration's gap and the largest of the last ten\n"
        );
        print!("{}", result.table());
    }
    if let Some(dir) = &args.plot {
        let mut files = Vec::new();
        for profile in profiles(&result.traces) {
            let svg = chart(&profile, &result.traces).svg()?;
            files.push((format!("load-dependent-{profile}.svg"), svg));
        }
        write_all(dir, "plot", files)?;
    }
    Ok(0)
}

/// The profiles' names, in order: the scenarios without their noisy suffix.
fn profiles(traces: &[LoadDependentTrace]) -> Vec<String> {
    let mut names: Vec<String> = Vec::new();
    for t in traces {
        let base = t.scenario.strip_suffix(NOISY).unwrap_or(&t.scenario);
        if !names.iter().any(|n| n == base) {
            names.push(base.to_string());
        }
    }
    names
}

/// One profile's chart: both models, exact and noisy, and the optimum.
fn chart(profile: &str, traces: &[LoadDependentTrace]) -> LineChart {
    let noisy = format!("{profile}{NOISY}");
    let mut series = Vec::new();
    let mut optimum = None;
    let mut iterations = 0;
    for t in traces
        .iter()
        .filter(|t| t.scenario == profile || t.scenario == noisy)
    {
        let with_noise = t.scenario == noisy;
        let colour = match t.model {
            "constant" => RGBColor(0xD6, 0x27, 0x28),
            _ => RGBColor(0x1F, 0x77, 0xB4),
        };
        series.push(Series {
            label: format!("{}{}", t.model, if with_noise { ", 1% noise" } else { "" }),
            colour,
            width: if with_noise { 2 } else { 3 },
            dashed: with_noise,
            points: (1..)
                .zip(&t.times)
                .map(|(k, &time)| (f64::from(k), time))
                .collect(),
        });
        optimum.get_or_insert(t.optimum);
        iterations = iterations.max(t.times.len());
    }
    if let Some(best) = optimum {
        series.push(Series {
            label: "true optimum".into(),
            colour: RGBColor(0, 0, 0),
            width: 2,
            dashed: true,
            points: vec![(1.0, best), (iterations as f64, best)],
        });
    }
    LineChart {
        title: format!("{profile}: iteration time, constant vs functional model"),
        x_label: "iteration".into(),
        y_label: "iteration time (s)".into(),
        log_x: false,
        y_from_zero: true,
        legend_beside: true,
        series,
    }
}
