//! `hetbal experiment …`: runs the papers' experiments (the library's
//! `hetbal::experiment`) and prints their tables, as text or JSON, with their
//! plots. Here: `scatter-seismic` (the scatter paper's seismic case, with its
//! Gantt charts) and `genblock` (the GEN_BLOCK paper's scenarios I–V).

use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::time::Instant;

use clap::{Args, Subcommand};
use hetbal::experiment::genblock::{self as gb, GenBlockExperiment};
use hetbal::experiment::scatter_seismic::{
    self as seismic, seven_significant, SeismicExperiment, ASCENDING_LATEST, BALANCED_LATEST, RAYS,
    UNIFORM_LATEST,
};
use hetbal::genblock::Method;
use hetbal_draw::RGBColor;
use serde::Serialize;

use crate::common::SvgFile;
use crate::common::{in_range, CliError};
use crate::report::secs;
use crate::scatter::plan_error;
use hetbal_draw::lines::{LineChart, Series};

/// `hetbal experiment …`
#[derive(Subcommand)]
pub enum ExperimentCommand {
    /// The paper's 16-processor seismic case (817,101 rays): uniform scatter
    /// against the balanced one, in decreasing and increasing bandwidth order.
    /// Every value the paper's text lost is assumed and printed.
    #[command(name = "scatter-seismic")]
    ScatterSeismic {
        /// Print the table as JSON (formats.md, "Experiment tables").
        #[arg(long)]
        json: bool,
        /// Also draw the three runs the paper plots (Figures 2, 3 and 4) as SVG
        /// Gantt charts in this folder.
        #[arg(long, value_name = "DIR")]
        gantt_dir: Option<PathBuf>,
    },
    /// The GEN_BLOCK paper's scenarios I-V (section 5): Tb, Ta, B and R per point
    /// for the paper's method and for best, and best's startup trade-off.
    #[command(name = "genblock")]
    Genblock(GenblockArgs),
    /// The mapping slides' shared-link experiment: the heuristic blind to link
    /// sharing (H1) against the aware one (H2), T_step / D_w at D_c/D_w = 0.64,
    /// 0.064, 0.0064 on generated WAN/MAN/LAN platforms.
    Mapping(crate::experiment_mapping::MappingExperimentArgs),
    /// The ring paper's iterative experiment (section 7): processors change speed
    /// twice; no redistribution, 1, 4, 9 or 19, the adaptive policy and the offline
    /// best, time normalised to no redistribution against the cost ratio.
    #[command(name = "ring-iterative")]
    RingIterative(crate::experiment_iterative::IterativeExperimentArgs),
    /// Plans under start-ups (a cost per message) against today's plans, timed
    /// under the same start-ups, on random uni- and bidirectional rings of 8 to
    /// 1,000 processors: the speed-ups and the gaps to the start-up bound.
    Startups(crate::experiment_startups::StartupsArgs),
    /// Weighted partitions: the equal-weight cut (p4est) and the speed-share
    /// cut (Zoltan HSFC, AMReX SFC) against the optimum, on uniform, clustered
    /// (Morton curve) and power-law weights and mixed, one-slow and GPU+CPU
    /// speeds.
    Partition(crate::experiment_partition::PartitionArgs),
    /// The online decider on processors whose time depends on the load (GPU
    /// overheads, memory cliffs, cache steps, measured tables): the constant
    /// and the functional model in closed loop, how soon each gets within 5%
    /// and 3% of the true optimum and with how many moves; `--plot` draws the
    /// iteration time over the iterations per profile.
    #[command(name = "load-dependent")]
    LoadDependent(crate::experiment_load::LoadDependentArgs),
}

/// `hetbal experiment genblock` options.
#[derive(Args)]
pub struct GenblockArgs {
    /// Print the table as JSON (formats.md, "Experiment tables").
    #[arg(long)]
    pub json: bool,
    /// Also draw one SVG chart per scenario (and the startup trade-off) in this
    /// folder.
    #[arg(long, value_name = "DIR")]
    pub plot: Option<PathBuf>,
    /// Random instances per point (the paper averaged at least 10,000).
    #[arg(long, value_name = "N", default_value_t = 300)]
    pub runs: usize,
    /// Seed of the random draws (the same seed draws the same instances).
    #[arg(long, default_value_t = 2005)]
    pub seed: u64,
}

/// Runs an experiment.
pub fn run(command: ExperimentCommand) -> Result<u8, CliError> {
    match command {
        ExperimentCommand::ScatterSeismic { json, gantt_dir } => {
            scatter_seismic(json, gantt_dir.as_deref())
        }
        ExperimentCommand::Mapping(args) => crate::experiment_mapping::run(&args),
        ExperimentCommand::Genblock(args) => genblock(&args),
        ExperimentCommand::RingIterative(args) => crate::experiment_iterative::run(&args),
        ExperimentCommand::Startups(args) => crate::experiment_startups::run(&args),
        ExperimentCommand::Partition(args) => crate::experiment_partition::run(&args),
        ExperimentCommand::LoadDependent(args) => crate::experiment_load::run(&args),
    }
}

/// Refuses a folder for plots that does not exist, before any work.
pub(crate) fn check_folder(option: &str, dir: Option<&Path>) -> Result<(), CliError> {
    match dir {
        Some(dir) if !dir.is_dir() => Err(CliError::input(format!(
            "{option} {}: {}",
            dir.display(),
            if dir.exists() {
                "a file, not a folder"
            } else {
                "no such folder"
            }
        ))),
        _ => Ok(()),
    }
}

/// Writes each `(file name, SVG)` into `dir`, saying so on stderr.
pub(crate) fn write_all(
    dir: &Path,
    what: &str,
    files: Vec<(String, String)>,
) -> Result<(), CliError> {
    for (name, svg) in files {
        let path = dir.join(name);
        SvgFile::create(&path)?.write(&svg)?;
        eprintln!("{what} written to {}", path.display());
    }
    Ok(())
}

// ---------------------------------------------------------------- scatter-seismic

fn scatter_seismic(json: bool, gantt_dir: Option<&Path>) -> Result<u8, CliError> {
    check_folder("--gantt-dir", gantt_dir)?;
    let s = seismic::run().map_err(plan_error)?;
    let figures = [
        (
            0,
            "uniform",
            "uniform scatter, decreasing bandwidth (paper's Figure 2)",
        ),
        (
            1,
            "balanced-descending",
            "balanced (lp), decreasing bandwidth (Figure 3)",
        ),
        (
            3,
            "balanced-ascending",
            "balanced (lp), increasing bandwidth (Figure 4)",
        ),
    ];
    let mut charts = Vec::new();
    for (k, name, what) in figures.into_iter().filter(|_| gantt_dir.is_some()) {
        let run = &s.runs[k];
        let makespan = (run.row.makespan * 100.0).round() / 100.0;
        let title = format!("{what}: makespan {} s", secs(makespan));
        let timeline = (&run.order[..], &run.row.counts[..], &run.timeline);
        let chart = hetbal_draw::scatter_chart(title, &s.instance, timeline, 0.0, "dinadan");
        let svg = hetbal_draw::render_svg(&chart)?;
        charts.push((format!("scatter-seismic-{name}.svg"), svg));
    }
    if json {
        println!("{}", to_json(&s.document())?);
    } else {
        print!("{}", seismic_report(&s));
    }
    if let Some(dir) = gantt_dir {
        write_all(dir, "Gantt chart", charts)?;
    }
    Ok(0)
}

fn to_json(value: &impl Serialize) -> Result<String, CliError> {
    serde_json::to_string_pretty(value)
        .map_err(|e| CliError::input(format!("cannot write the table: {e}")))
}

/// The text report: the platform with the source of every number, the
/// assumptions, the table.
fn seismic_report(s: &SeismicExperiment) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "scatter-seismic: the paper's seismic tomography run (section 5), rebuilt\n\
         {RAYS} rays scattered by dinadan to 16 processes, linear costs, served in decreasing bandwidth\n"
    );
    let _ = writeln!(
        out,
        "  {:<10} {:>3}  {:>12}  {:>12}  sources",
        "machine", "cpu", "comp (s/ray)", "comm (s/ray)"
    );
    for m in &s.case.machines {
        let _ = writeln!(
            out,
            "  {:<10} {:>3}  {:>12}  {:>12}  comp: {}; comm: {}",
            m.name,
            m.processes,
            seven_significant(m.comp),
            seven_significant(m.comm),
            m.comp_source,
            m.comm_source
        );
    }
    let _ = writeln!(out, "\nassumed (the paper's text lost these values):");
    for a in &s.case.assumptions {
        let _ = writeln!(out, "  - {a}");
    }
    let _ = writeln!(
        out,
        "\n  {:<9} {:<7} {:<21} {:>10} {:>10} {:>7} {:>10}   {:>14} {:>9}",
        "scatter",
        "method",
        "order",
        "makespan",
        "earliest",
        "spread",
        "lower bnd",
        "paper: latest",
        "earliest"
    );
    for r in s.runs.iter().map(|run| &run.row) {
        let paper = |x: Option<f64>| x.map(|v| format!("{v}")).unwrap_or_else(|| "-".into());
        let _ = writeln!(
            out,
            "  {:<9} {:<7} {:<21} {:>10.2} {:>10.2} {:>6.2}% {:>10.2}   {:>14} {:>9}",
            r.distribution,
            r.method,
            r.order,
            r.makespan,
            r.earliest_finish,
            100.0 * r.spread,
            r.lower_bound,
            paper(r.paper_makespan),
            paper(r.paper_earliest_finish)
        );
    }
    // The paper's balanced runs used its LP heuristic: compare those rows.
    let (uniform, balanced) = (s.runs[0].row.makespan, s.runs[1].row.makespan);
    let ascending = s.runs[3].row.makespan;
    let _ = writeln!(
        out,
        "\nbalancing divides the predicted time by {:.2} (paper: 853 / 430 = {:.2}); \
         increasing bandwidth order costs {:+.1}% over decreasing (paper: 486 / 430 = {:+.1}%)",
        uniform / balanced,
        UNIFORM_LATEST / BALANCED_LATEST,
        100.0 * (ascending / balanced - 1.0),
        100.0 * (ASCENDING_LATEST / BALANCED_LATEST - 1.0)
    );
    let best = &s.runs[s.runs.len() - 1].order;
    let names: Vec<&str> = best.iter().map(|&i| s.instance.name(i)).collect();
    let _ = writeln!(out, "best order found: {}", names.join(", "));
    let _ = writeln!(
        out,
        "predicted times come from the model (instance above); the paper's are measured on its grid"
    );
    let _ = write!(out, "planning time here:");
    for t in &s.timings {
        let _ = write!(out, " {} {} {:.3} s;", t.method, t.order, t.seconds);
    }
    let _ = writeln!(
        out,
        " (the paper's Algorithm 1 took about 15 minutes on this case in 2003)"
    );
    out
}

// ---------------------------------------------------------------- genblock

/// The trade-off rows' description in the report.
const TRADEOFF_WHAT: &str = "the instances of scenario II at N = 3200 with startup Tu = point: best chooses its number of steps";

/// `hetbal experiment genblock`.
fn genblock(args: &GenblockArgs) -> Result<u8, CliError> {
    check_folder("--plot", args.plot.as_deref())?;
    in_range(
        "--runs",
        args.runs,
        (0, 100_000),
        "every point draws that many instances and keeps them; the paper averaged 10,000",
    )?;
    let started = Instant::now();
    let table = gb::run(args.runs, args.seed).map_err(|e| match e {
        gb::ExperimentError::NoRuns => CliError::input("--runs must be at least 1"),
    })?;
    let elapsed = started.elapsed().as_secs_f64();
    let charts: Vec<(&str, &str)> = (gb::scenarios().iter())
        .map(|s| (s.name, s.x_label))
        .chain([(gb::TRADEOFF, gb::TRADEOFF_X_LABEL)])
        .filter(|_| args.plot.is_some())
        .collect();
    let mut plots = Vec::new();
    for (name, x_label) in charts {
        let svg = plot(name, x_label, &table).svg()?;
        plots.push((format!("genblock-scenario-{name}.svg"), svg));
    }
    if args.json {
        println!("{}", to_json(&table.document())?);
    } else {
        print!("{}", genblock_report(&table, elapsed));
    }
    if let Some(dir) = &args.plot {
        write_all(dir, "plot", plots)?;
    }
    Ok(0)
}

/// The text report of genblock.
fn genblock_report(table: &GenBlockExperiment, elapsed: f64) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "genblock: the scenarios of the GEN_BLOCK paper's section 5, {} random instances per point (the paper: at least 10,000), seed {}, tau = 1, Tu = 0 unless said",
        table.runs, table.seed
    );
    let _ = writeln!(out, "blocks: {}", gb::BLOCKS);
    let d = gb::DEFINITIONS;
    let _ = writeln!(
        out,
        "Tb: {}\nTa: {}\nB: {}\nR: {}\nLB: {}",
        d.tb, d.ta, d.b, d.r, d.lower_bound
    );
    for note in table.notes() {
        let _ = writeln!(out, "{note}");
    }
    let results: Vec<_> = table.rows.iter().zip(&table.summaries).collect();
    let scenarios = gb::scenarios();
    let described = scenarios.iter().map(|s| (s.name, s.description));
    for (name, what) in described.chain([(gb::TRADEOFF, TRADEOFF_WHAT)]) {
        let _ = writeln!(out, "\nscenario {name}: {what}");
        let _ = writeln!(
            out,
            "  {:>7}  {:<6} {:>10} {:>10} {:>10} {:>7} {:>10} {:>8} {:>7} {:>5}",
            "point", "method", "Tb", "Ta", "B", "R", "LB", "Ta/LB", "steps", "runs"
        );
        for (row, summary) in results.iter().filter(|r| r.0.scenario == name) {
            let _ = writeln!(
                out,
                "  {:>7} {:<6} {:>10.1} {:>10.1} {:>10.1} {:>6.1}% {:>10.1} {:>8.3} {:>7.1} {:>5}",
                format!("{}", row.point),
                row.method.name(),
                row.tb,
                row.ta,
                row.b,
                100.0 * row.r,
                row.lower_bound,
                summary.cost_over_lower_bound,
                summary.steps,
                summary.instances
            );
        }
    }
    let pick = |point: f64, method: Method| {
        results
            .iter()
            .find(|r| r.0.scenario == "II" && r.0.point == point && r.0.method == method)
    };
    if let (Some(paper), Some(best)) = (pick(3200.0, Method::Paper), pick(3200.0, Method::Best)) {
        let mean_ratio = |method: Method| {
            let chosen: Vec<f64> = results
                .iter()
                .filter(|r| r.0.scenario == "II" && r.0.method == method)
                .map(|r| r.1.cost_over_lower_bound)
                .collect();
            chosen.iter().sum::<f64>() / chosen.len().max(1) as f64
        };
        let _ = writeln!(
            out,
            "\nscenario II at N = 3200, Tu = 0: R = {:.1}% for the paper's method (mean of per-instance R {:.1}%; the paper reports about 52%); mean cost / LB: paper {:.3}, best {:.3}",
            100.0 * paper.0.r,
            100.0 * paper.1.mean_r,
            paper.1.cost_over_lower_bound,
            best.1.cost_over_lower_bound
        );
        let _ = writeln!(
            out,
            "scenario II, all N, Tu = 0: mean cost / LB: paper {:.3}, best {:.3}",
            mean_ratio(Method::Paper),
            mean_ratio(Method::Best)
        );
    }
    let _ = writeln!(out, "computed in {elapsed:.1} s");
    out
}

/// One chart per scenario: Tb, Ta of both methods, B and the lower bound against
/// the scenario's x values.
fn plot(scenario: &str, x_label: &str, table: &GenBlockExperiment) -> LineChart {
    let rows = |method: Method| -> Vec<&gb::Row> {
        let of = |r: &&gb::Row| r.scenario == scenario && r.method == method;
        table.rows.iter().filter(of).collect()
    };
    let (paper, best) = (rows(Method::Paper), rows(Method::Best));
    type Line<'a> = (&'a str, RGBColor, &'a [&'a gb::Row], fn(&gb::Row) -> f64);
    #[rustfmt::skip]
    let lines: [Line; 5] = [
        ("Tb (plain colouring)", RGBColor(0x80, 0x80, 0x80), &paper, |r| r.tb),
        ("Ta paper", RGBColor(0xD9, 0x5F, 0x02), &paper, |r| r.ta),
        ("B (paper's bound)", RGBColor(0x75, 0x70, 0xB3), &paper, |r| r.b),
        ("Ta best", RGBColor(0x1F, 0x5F, 0xB4), &best, |r| r.ta),
        ("lower bound", RGBColor(0x2C, 0xA0, 0x2C), &paper, |r| r.lower_bound),
    ];
    let series = lines.map(|(label, colour, rows, y)| Series {
        label: label.into(),
        colour,
        width: 2,
        dashed: false,
        points: rows.iter().map(|r| (r.point, y(r))).collect(),
    });
    let mean_r =
        |rows: &[&gb::Row]| rows.iter().map(|r| r.r).sum::<f64>() / rows.len().max(1) as f64;
    LineChart {
        title: format!(
            "scenario {scenario}: mean cost (R: paper {:.0}%, best {:.0}% on average)",
            100.0 * mean_r(&paper),
            100.0 * mean_r(&best)
        ),
        x_label: x_label.into(),
        y_label: "cost (s)".into(),
        log_x: false,
        y_from_zero: true,
        legend_beside: false,
        series: series.into(),
    }
}
