//! `hetbal experiment ring-iterative`: the ring paper's section 7 experiment (an
//! iterative application whose processors change speed twice, redistributed 0, 1,
//! 4, 9 or 19 times), plus the adaptive policy and the offline best.
//!
//! With `--engine simgrid` (builds with the cargo feature `replay`) every run of
//! the built-in simulator is also re-timed under SimGrid, one worker process per
//! run: the same loads and redistributions (what the policy decided), timed by
//! SimGrid's hosts and links, where neighbours wait only for each other's borders
//! and everyone for everyone only at a redistribution (see
//! `hetbal_simgrid::iterative`). Both engines' times are reported side by side.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use clap::Args;
use hetbal::balance::balanced_targets;
use hetbal::iterative::{
    draw_hosts, paper_speed_changes, Policy, Run, Scenario, Simulator, SpeedProfile,
};
use hetbal::platform::generate::{tiers, TiersOptions};
use hetbal::platform::Platform;
use hetbal::ring::RingKind;
use indicatif::{ProgressBar, ProgressStyle};
use plotters::coord::Shift;
use plotters::prelude::*;
use serde::Serialize;

use crate::common::CliError;
use crate::report::percent_above;

/// What the ratio means, printed with every table.
pub const RATIO_MEANING: &str = "ratio = cost of one redistribution / time of one iteration: \
the communication scale is set so that the fixed-1 redistribution (after the middle \
iteration, from the initial balance) costs `ratio` times the first iteration \
(borders included). Large ratio = expensive redistributions (the paper's ratio 10, \
where none is best); small ratio = cheap ones (the paper's ratio 1).";

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
    #[arg(long, default_value = "bidirectional", value_parser = ["bidirectional", "unidirectional"])]
    kind: String,
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
    #[arg(long, default_value = "builtin", value_parser = ["builtin", "simgrid"])]
    engine: String,
    /// Network model of `--engine simgrid`: oneport (the papers' model), CM02 or
    /// LV08 (SimGrid's).
    #[arg(long, value_name = "MODEL", default_value = "oneport")]
    model: String,
    /// Wall-time limit of each SimGrid simulation in seconds (`--engine simgrid`).
    #[arg(long, value_name = "SECONDS", default_value_t = 60.0)]
    timeout: f64,
}

/// One row of the table: a policy on one ring size at one ratio, averaged.
#[derive(Clone, Debug, Serialize)]
pub struct Row {
    /// Processors in the ring.
    pub ring: usize,
    /// Cost of a redistribution / time of an iteration.
    pub ratio: f64,
    /// Policy name (formats.md).
    pub policy: String,
    /// Mean number of redistributions that moved data.
    pub redistributions: f64,
    /// Mean time of the run.
    pub time: f64,
    /// Mean of time / time of `none` on the same draw.
    pub normalized_time: f64,
    /// `--engine simgrid`: mean time of the same runs under SimGrid.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub simgrid_time: Option<f64>,
    /// `--engine simgrid`: mean of SimGrid's time / SimGrid's time of `none` on
    /// the same draw.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub simgrid_normalized_time: Option<f64>,
}

fn policies() -> Vec<Policy> {
    let mut list = vec![Policy::Never];
    for r in [1, 4, 9, 19] {
        list.push(Policy::Fixed { redistributions: r });
    }
    list.push(Policy::Profitability);
    list.push(Policy::Adaptive);
    list.push(Policy::OfflineBest);
    list
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

/// The seed of one draw: every (ring size, draw) pair gets its own.
fn draw_seed(seed: u64, ring: usize, draw: u64) -> u64 {
    seed ^ draw.wrapping_mul(0x2545_F491_4F6C_DD1D) ^ (ring as u64).wrapping_mul(0x9E37_79B9)
}

/// The platform the rings are drawn from.
fn platform(args: &IterativeExperimentArgs) -> Result<Platform, CliError> {
    match &args.platform {
        Some(path) => crate::map::read_platform(path, 1e6, 1e6),
        None => {
            let options = TiersOptions {
                wan: 3,
                man_per_wan: 2,
                lan_per_man: 3,
                hosts_per_lan: 5,
                ..TiersOptions::default()
            };
            let platform =
                tiers(args.seed, &options).map_err(|e| CliError::input(e.to_string()))?;
            platform
                .with_unit_bytes(1e6)
                .map_err(|e| CliError::input(e.to_string()))
        }
    }
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

/// Runs the experiment, prints the table and writes the files.
pub fn run(args: &IterativeExperimentArgs) -> Result<u8, CliError> {
    let rings = parse_rings(&args.rings)?;
    let ratios = parse_ratios(&args.ratios)?;
    if args.draws == 0 {
        return Err(CliError::input("--draws must be at least 1"));
    }
    if args.iterations < 2 {
        return Err(CliError::input(
            "--iterations must be at least 2 (redistributions happen between iterations)",
        ));
    }
    if !(args.spread.is_finite() && args.spread >= 1.0) {
        return Err(CliError::input(format!(
            "--spread {}: must be a finite factor >= 1",
            args.spread
        )));
    }
    let kind = if args.kind == "unidirectional" {
        RingKind::Unidirectional
    } else {
        RingKind::Bidirectional
    };
    let platform = platform(args)?;
    let host_traces = match &args.traces {
        Some(dir) => Some(read_traces(dir, &platform)?),
        None => None,
    };
    if let Some(&p) = rings.iter().find(|&&p| p > platform.len()) {
        return Err(CliError::input(format!(
            "--rings: a ring of {p} processors needs {p} hosts; the platform has {}",
            platform.len()
        )));
    }
    if let Some(&p) = rings.iter().find(|&&p| args.items < p as u64) {
        return Err(CliError::input(format!(
            "--items {}: a ring of {p} processors needs at least one item each",
            args.items
        )));
    }
    let mut retime = simgrid_engine(args)?;
    if retime.is_some() && rings.contains(&2) {
        return Err(CliError::input(
            "--engine simgrid: rings of 2 processors cannot be simulated (SimGrid has one route per pair of hosts and the borders need both links); use rings of 3 or more",
        ));
    }
    let policies = policies();
    if retime.is_some() {
        eprintln!(
            "note: --engine simgrid runs one SimGrid simulation per run ({} here, in worker processes): this takes a while",
            rings.len() as u64 * args.draws * ratios.len() as u64 * policies.len() as u64
        );
    }
    let steps = rings.len() as u64 * args.draws * ratios.len() as u64;
    let progress = ProgressBar::new(steps).with_style(
        ProgressStyle::with_template("{msg} [{bar:30}] {pos}/{len} ({eta} left)")
            .expect("a valid template")
            .progress_chars("=> "),
    );
    progress.set_message("ring-iterative");
    // sums[ring][ratio][policy] = (time, normalized, redistributions, SimGrid
    // time, SimGrid normalized)
    let mut sums =
        vec![vec![vec![(0.0, 0.0, 0.0, 0.0, 0.0); policies.len()]; ratios.len()]; rings.len()];
    let reference_point = args.iterations / 2;
    for (ri, &p) in rings.iter().enumerate() {
        for draw in 0..args.draws {
            let hosts = draw_hosts(draw_seed(args.seed, p, draw) ^ 0xA5A5, platform.len(), p);
            let scenario = scenario(args, &platform, &hosts, host_traces.as_deref(), kind, draw)?;
            let mut simulator = Simulator::new(scenario)
                .map_err(|e| CliError::input(format!("ring of {p}, draw {draw}: {e}")))?;
            for (ti, &ratio) in ratios.iter().enumerate() {
                simulator.set_ratio(ratio, reference_point).map_err(|e| {
                    CliError::input(format!("ring of {p}, draw {draw}, ratio {ratio}: {e}"))
                })?;
                let (mut never, mut simgrid_never) = (f64::NAN, f64::NAN);
                for (pi, policy) in policies.iter().enumerate() {
                    let run = simulator.run(policy).map_err(|e| {
                        CliError::input(format!("ring of {p}, draw {draw}, {}: {e}", policy.name()))
                    })?;
                    let simgrid = match retime.as_mut() {
                        Some(retime) => retime(&simulator, &run).map_err(|e| CliError {
                            message: format!(
                                "ring of {p}, draw {draw}, ratio {ratio}, {}: SimGrid: {}",
                                policy.name(),
                                e.message
                            ),
                            code: e.code,
                        })?,
                        None => f64::NAN,
                    };
                    if pi == 0 {
                        never = run.total_time;
                        simgrid_never = simgrid;
                    }
                    let sum = &mut sums[ri][ti][pi];
                    sum.0 += run.total_time;
                    sum.1 += run.total_time / never;
                    sum.2 += run.redistributions.len() as f64;
                    sum.3 += simgrid;
                    sum.4 += simgrid / simgrid_never;
                }
                progress.inc(1);
            }
        }
    }
    progress.finish_and_clear();
    let draws = args.draws as f64;
    let mut rows = Vec::new();
    for (ri, &ring) in rings.iter().enumerate() {
        for (ti, &ratio) in ratios.iter().enumerate() {
            for (pi, policy) in policies.iter().enumerate() {
                let (time, normalized, redistributions, simgrid, simgrid_normalized) =
                    sums[ri][ti][pi];
                let with_simgrid = |x: f64| retime.is_some().then_some(x / draws);
                rows.push(Row {
                    ring,
                    ratio,
                    policy: policy.name(),
                    redistributions: redistributions / draws,
                    time: time / draws,
                    normalized_time: normalized / draws,
                    simgrid_time: with_simgrid(simgrid),
                    simgrid_normalized_time: with_simgrid(simgrid_normalized),
                });
            }
        }
    }
    if let Some(dir) = &args.out {
        write_outputs(dir, &rings, &rows)?;
    }
    if args.json {
        let mut document = serde_json::json!({
            "experiment": "ring-iterative",
            "parameters": {
                "iterations": args.iterations,
                "items": args.items,
                "border_items": args.border_items,
                "draws": args.draws,
                "kind": kind.to_string(),
                "spread": args.spread,
                "seed": args.seed,
                "speeds": if args.traces.is_some() { "trace files" } else { "paper: two random changes per processor" },
                "ratio_meaning": RATIO_MEANING,
                "engine": args.engine,
            },
            "rows": rows.iter().filter(|r| r.policy != "profitability").collect::<Vec<_>>(),
        });
        if retime.is_some() {
            document["parameters"]["model"] = serde_json::json!(args.model);
        }
        println!(
            "{}",
            serde_json::to_string_pretty(&document).expect("the table serialises")
        );
    } else {
        print!("{}", table(args, &rings, &ratios, &rows));
    }
    Ok(0)
}

/// Re-times one run of the simulator under SimGrid: its time.
type Retime = Box<dyn FnMut(&Simulator, &Run) -> Result<f64, CliError>>;

/// The SimGrid re-timing of `--engine simgrid`, `None` for `builtin`.
#[cfg(not(feature = "replay"))]
fn simgrid_engine(args: &IterativeExperimentArgs) -> Result<Option<Retime>, CliError> {
    if args.engine == "simgrid" {
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
    use hetbal_simgrid::{IterativeJob, NetworkModel, ReplayError, Worker};
    if args.engine != "simgrid" {
        return Ok(None);
    }
    let model = NetworkModel::from_name(&args.model).ok_or_else(|| {
        CliError::input(format!(
            "unknown model {:?}: choose oneport, CM02 or LV08",
            args.model
        ))
    })?;
    if !(args.timeout.is_finite() && args.timeout > 0.0 && args.timeout <= 1e6) {
        return Err(CliError::input(format!(
            "--timeout {}: give a number of seconds above 0 (at most 1000000)",
            args.timeout
        )));
    }
    let program = std::env::current_exe().map_err(|e| {
        CliError::input(format!(
            "cannot find the hetbal program to run SimGrid: {e}"
        ))
    })?;
    let worker = Worker::new(program, ["replay", "--simgrid-worker"])
        .timeout(std::time::Duration::from_secs_f64(args.timeout));
    let failure = |e: ReplayError| {
        let code = match e {
            ReplayError::TooManyItems { .. }
            | ReplayError::TooManyProcessors { .. }
            | ReplayError::Unreplayable(_) => 2,
            _ => 1,
        };
        CliError {
            message: e.to_string(),
            code,
        }
    };
    Ok(Some(Box::new(move |simulator: &Simulator, run: &Run| {
        let job = IterativeJob::from_run(simulator, run, model).map_err(failure)?;
        Ok(worker.iterative(&job).map_err(failure)?.time)
    })))
}

/// One draw's scenario: the hosts in ring order, their speeds and links.
fn scenario(
    args: &IterativeExperimentArgs,
    platform: &Platform,
    hosts: &[usize],
    traces: Option<&[SpeedProfile]>,
    kind: RingKind,
    draw: u64,
) -> Result<Scenario, CliError> {
    let p = hosts.len();
    let time_per_item: Vec<f64> = hosts.iter().map(|&h| platform.w(h)).collect();
    let c_succ: Vec<f64> = (0..p)
        .map(|i| platform.cost(hosts[i], hosts[(i + 1) % p]))
        .collect();
    let c_pred: Vec<f64> = (0..p)
        .map(|i| platform.cost(hosts[i], hosts[(i + p - 1) % p]))
        .collect();
    if let Some(i) = (0..p).find(|&i| !(c_succ[i] > 0.0 && c_pred[i] > 0.0)) {
        return Err(CliError::input(format!(
            "hosts {} and its neighbours have no route (or a free one) on the platform",
            platform.name(hosts[i])
        )));
    }
    // Initial loads proportional to the initial speeds (the paper's start).
    let initial_loads = balanced_targets(args.items, &time_per_item)
        .map_err(|e| CliError::input(e.to_string()))?
        .targets;
    let profiles = match traces {
        Some(all) => hosts.iter().map(|&h| all[h].clone()).collect(),
        None => paper_speed_changes(
            draw_seed(args.seed, p, draw),
            p,
            args.iterations,
            args.spread,
        ),
    };
    Ok(Scenario {
        kind,
        time_per_item,
        c_succ,
        c_pred,
        border_items: args.border_items,
        iterations: args.iterations,
        initial_loads,
        profiles,
        comm_scale: 1.0,
    })
}

/// The text table: normalised times per ratio, one block per ring size, and the
/// adaptive policy's standing.
fn table(args: &IterativeExperimentArgs, rings: &[usize], ratios: &[f64], rows: &[Row]) -> String {
    let names: Vec<String> = policies().iter().map(Policy::name).collect();
    let mut out = String::new();
    let _ = writeln!(
        out,
        "ring-iterative: {} iterations, {} items, {} draws per ring, {} redistributions",
        args.iterations, args.items, args.draws, args.kind
    );
    let _ = writeln!(out, "{RATIO_MEANING}");
    for &ring in rings {
        let _ = writeln!(
            out,
            "\nring of {ring}: time normalised to `none` (mean redistributions in brackets)"
        );
        let _ = write!(out, "{:>6}", "ratio");
        for name in &names {
            let _ = write!(out, " {name:>17}");
        }
        let _ = writeln!(out, " {:>13} {:>13}", "adapt/fixed", "adapt/offline");
        for &ratio in ratios {
            let at = |name: &str| {
                rows.iter()
                    .find(|r| r.ring == ring && r.ratio == ratio && r.policy == name)
                    .expect("a row per policy")
            };
            let _ = write!(out, "{ratio:>6}");
            for name in &names {
                let row = at(name);
                let _ = write!(
                    out,
                    " {:>9.4} [{:>5.1}]",
                    row.normalized_time, row.redistributions
                );
            }
            let best_fixed = names
                .iter()
                .filter(|n| *n == "none" || n.starts_with("fixed-"))
                .map(|n| at(n).normalized_time)
                .fold(f64::INFINITY, f64::min);
            let adaptive = at("adaptive").normalized_time;
            let offline = at("offline-best").normalized_time;
            let _ = writeln!(
                out,
                " {:>+12.2}% {:>+12.2}%",
                percent_above(adaptive, best_fixed),
                percent_above(adaptive, offline)
            );
        }
    }
    if rows.iter().any(|r| r.simgrid_time.is_some()) {
        let _ = write!(out, "{}", simgrid_table(args, rings, ratios, rows, &names));
    }
    let _ = writeln!(
        out,
        "\nadapt/fixed: the adaptive policy against the best of none and fixed-N at that \
         ratio (negative = better); adapt/offline: against the offline best. \
         profitability: model.md's rule alone (speeds assumed to persist)."
    );
    let _ = writeln!(out, "\n{}", summary(rings, ratios, rows));
    out
}

/// The SimGrid blocks of the text table: SimGrid's normalised times, and in
/// brackets SimGrid's mean time over the built-in one.
fn simgrid_table(
    args: &IterativeExperimentArgs,
    rings: &[usize],
    ratios: &[f64],
    rows: &[Row],
    names: &[String],
) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "\nSimGrid ({} model): the same runs (same loads and redistributions) timed by \
         SimGrid, where a processor waits only for its neighbours' borders and, at a \
         redistribution, for every processor; it may beat the built-in max-model.",
        args.model
    );
    for &ring in rings {
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
        for &ratio in ratios {
            let _ = write!(out, "{ratio:>6}");
            for name in names {
                let row = rows
                    .iter()
                    .find(|r| r.ring == ring && r.ratio == ratio && r.policy == *name)
                    .expect("a row per policy");
                let simgrid = row.simgrid_time.unwrap_or(f64::NAN);
                let _ = write!(
                    out,
                    " {:>9.4} [{:>5.3}]",
                    row.simgrid_normalized_time.unwrap_or(f64::NAN),
                    simgrid / row.time
                );
            }
            let _ = writeln!(out);
        }
    }
    out
}

/// The adaptive policy's standing: worst excess over the best fixed scheme,
/// where it beats every fixed scheme, and its distance to the offline best.
fn summary(rings: &[usize], ratios: &[f64], rows: &[Row]) -> String {
    let mut worst = (f64::NEG_INFINITY, 0, 0.0);
    let mut wins = Vec::new();
    let mut offline_gap: f64 = 0.0;
    for &ring in rings {
        for &ratio in ratios {
            let here = |name: &str| {
                rows.iter()
                    .find(|r| r.ring == ring && r.ratio == ratio && r.policy == name)
                    .map_or(f64::NAN, |r| r.normalized_time)
            };
            let best_fixed = rows
                .iter()
                .filter(|r| r.ring == ring && r.ratio == ratio)
                .filter(|r| r.policy == "none" || r.policy.starts_with("fixed-"))
                .map(|r| r.normalized_time)
                .fold(f64::INFINITY, f64::min);
            let excess = here("adaptive") / best_fixed - 1.0;
            if excess > worst.0 {
                worst = (excess, ring, ratio);
            }
            if excess < -1e-9 {
                wins.push(format!("{ring}@{ratio}"));
            }
            offline_gap = offline_gap.max(here("adaptive") / here("offline-best") - 1.0);
        }
    }
    format!(
        "adaptive vs the best fixed scheme: worst {:+.2}% (ring {}, ratio {}); strictly \
         better than every fixed scheme at {} of {} (ring@ratio: {}); at most {:+.2}% \
         above the offline best.",
        100.0 * worst.0,
        worst.1,
        worst.2,
        wins.len(),
        rings.len() * ratios.len(),
        if wins.is_empty() {
            "none".to_string()
        } else {
            wins.join(" ")
        },
        100.0 * offline_gap
    )
}

/// Writes `ring-iterative.csv` and, per ring size, `ring-iterative-P.svg` and `.png`.
fn write_outputs(dir: &Path, rings: &[usize], rows: &[Row]) -> Result<(), CliError> {
    std::fs::create_dir_all(dir)
        .map_err(|e| CliError::input(format!("cannot create {}: {e}", dir.display())))?;
    let simgrid = rows.iter().any(|r| r.simgrid_time.is_some());
    let mut csv = String::from("ring,ratio,policy,redistributions,time,normalized_time");
    csv.push_str(if simgrid {
        ",simgrid_time,simgrid_normalized_time\n"
    } else {
        "\n"
    });
    for r in rows {
        let _ = write!(
            csv,
            "{},{},{},{},{},{}",
            r.ring, r.ratio, r.policy, r.redistributions, r.time, r.normalized_time
        );
        if let (true, Some(t), Some(n)) = (simgrid, r.simgrid_time, r.simgrid_normalized_time) {
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
    for &ring in rings {
        let ring_rows: Vec<&Row> = rows.iter().filter(|r| r.ring == ring).collect();
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

/// The paper's Figures 3–4: normalised time against the ratio, one line per policy.
fn draw_figure<DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>,
    ring: usize,
    rows: &[&Row],
) -> Result<(), String> {
    let font = crate::gantt::bundled_font()?;
    let fail = |e: DrawingAreaErrorKind<DB::ErrorType>| format!("cannot draw the figure: {e}");
    root.fill(&WHITE).map_err(fail)?;
    let x_min = rows.iter().map(|r| r.ratio).fold(f64::INFINITY, f64::min);
    let x_max = rows
        .iter()
        .map(|r| r.ratio)
        .fold(f64::NEG_INFINITY, f64::max);
    let (x_min, x_max) = if x_max > x_min {
        (x_min, x_max)
    } else {
        (x_min - 1.0, x_min + 1.0)
    };
    let y_min = rows
        .iter()
        .map(|r| r.normalized_time)
        .fold(f64::INFINITY, f64::min);
    let y_max = rows.iter().map(|r| r.normalized_time).fold(0.0, f64::max);
    let pad = ((y_max - y_min) * 0.08).max(0.01);
    let mut chart = ChartBuilder::on(root)
        .caption(
            format!("Ring of {ring}: time normalised to no redistribution"),
            (font, 20.0),
        )
        .margin(14)
        .x_label_area_size(44)
        .y_label_area_size(64)
        .build_cartesian_2d((x_min..x_max).log_scale(), (y_min - pad)..(y_max + pad))
        .map_err(fail)?;
    chart
        .configure_mesh()
        .x_desc("ratio: cost of a redistribution / time of an iteration (log scale)")
        .y_desc("normalised time")
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
    for (policy, colour) in policies().iter().zip(colours) {
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
        let series = if matches!(policy, Policy::OfflineBest) {
            chart.draw_series(DashedLineSeries::new(points.clone(), 6, 4, style))
        } else {
            chart.draw_series(LineSeries::new(points.clone(), style))
        };
        series
            .map_err(fail)?
            .label(name)
            .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 18, y)], style));
        chart
            .draw_series(points.iter().map(|&p| Circle::new(p, 3, colour.filled())))
            .map_err(fail)?;
    }
    chart
        .configure_series_labels()
        .label_font((font, 13.0))
        .background_style(WHITE.mix(0.85))
        .border_style(BLACK)
        .position(SeriesLabelPosition::LowerLeft)
        .draw()
        .map_err(fail)?;
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
}
