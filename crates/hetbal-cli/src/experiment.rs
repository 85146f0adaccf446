//! `hetbal experiment scatter-seismic`: the paper's 16-processor seismic tomography
//! case (the scatter paper, section 5) rebuilt from the values that
//! survive in its text, every other value assumed and said so; the uniform scatter
//! against the balanced one in both orders, as the paper measured them.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::time::Instant;

use clap::Subcommand;
use hetbal::scatter::{
    bandwidth_order, evaluate, lower_bound, plan, plan_in_order, CostSpec, Method, OrderPolicy,
    ProcessorSpec, ScatterInstance, ScatterInstanceSpec, StartupRule,
};
use serde::Serialize;

use crate::common::CliError;
use crate::report::secs;
use crate::scatter::{lanes, plan_error, write_svg};

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
    Genblock(crate::genblock::ExperimentArgs),
    /// The mapping slides' shared-link experiment: the heuristic blind to link
    /// sharing (H1) against the aware one (H2), T_step / D_w at D_c/D_w = 0.64,
    /// 0.064, 0.0064 on generated WAN/MAN/LAN platforms.
    Mapping(crate::experiment_mapping::MappingExperimentArgs),
    /// The ring paper's iterative experiment (section 7): processors change speed
    /// twice; no redistribution, 1, 4, 9 or 19, the adaptive policy and the offline
    /// best, time normalised to no redistribution against the cost ratio.
    #[command(name = "ring-iterative")]
    RingIterative(crate::experiment_iterative::IterativeExperimentArgs),
}

/// Runs an experiment.
pub fn run(command: ExperimentCommand) -> Result<u8, CliError> {
    match command {
        ExperimentCommand::ScatterSeismic { json, gantt_dir } => {
            scatter_seismic(json, gantt_dir.as_deref())
        }
        ExperimentCommand::Mapping(args) => crate::experiment_mapping::run(&args),
        ExperimentCommand::Genblock(args) => crate::genblock::experiment(&args),
        ExperimentCommand::RingIterative(args) => crate::experiment_iterative::run(&args),
    }
}

/// Rays in the paper's data set (the seismic events of 1999).
pub const RAYS: u64 = 817_101;

/// The paper's seconds per ray (Table 1) of the three machines whose values survive.
const SEKHMET: f64 = 0.004885;
const SEVEN: f64 = 0.016156;
const LEDA: f64 = 0.009677;
/// Their ratings (Table 1: PIII/933 = 1, higher is faster).
const SEKHMET_RATING: f64 = 1.90;
const SEVEN_RATING: f64 = 0.57;
const LEDA_RATING: f64 = 0.95;

/// The paper's measurements (section 5.2).
const UNIFORM_LATEST: f64 = 853.0;
const UNIFORM_EARLIEST: f64 = 259.0;
const BALANCED_LATEST: f64 = 430.0;
const BALANCED_EARLIEST: f64 = 405.0;
const ASCENDING_LATEST: f64 = 486.0;
const ASCENDING_EARLIEST: f64 = 437.0;

/// One machine of the platform, with where each of its numbers comes from.
#[derive(Clone, Debug, Serialize)]
pub struct Machine {
    /// Machine name (the paper's).
    pub name: &'static str,
    /// Processes it runs (CPUs used).
    pub processes: usize,
    /// Seconds to process one ray, per process.
    pub comp: f64,
    /// Where `comp` comes from.
    pub comp_source: String,
    /// Seconds for the root to send one ray to it.
    pub comm: f64,
    /// Where `comm` comes from.
    pub comm_source: String,
}

/// The rebuilt platform: machines in the paper's serving order (decreasing
/// bandwidth, root last), and the assumptions made.
pub struct SeismicCase {
    /// The machines.
    pub machines: Vec<Machine>,
    /// Every value or rule assumed, in words.
    pub assumptions: Vec<String>,
}

/// The machines with a LAN time per ray `lan` (leda 2x, merlin 10x) and merlin's
/// time per ray `merlin`.
fn machines(reference: f64, lan: f64, merlin: f64) -> Vec<Machine> {
    let pellinore = reference * 933.0 / 800.0;
    let m = |name, processes, comp: f64, comp_source: &str, comm: f64, comm_source: &str| Machine {
        name,
        processes,
        comp,
        comp_source: comp_source.to_string(),
        comm,
        comm_source: comm_source.to_string(),
    };
    let lan_source = "calibrated: the LAN's time per ray (see assumptions)";
    vec![
        m("caseb", 1, SEKHMET, "assumed: Athlon XP 1800 like sekhmet (its own value is lost)", lan, lan_source),
        m("pellinore", 1, pellinore, "assumed: PIII/800, the PIII/933 time scaled by 933/800", lan, lan_source),
        m("sekhmet", 1, SEKHMET, "paper (Table 1)", lan, lan_source),
        m("seven", 2, SEVEN, "paper (Table 1), per CPU", lan, lan_source),
        m("leda", 8, LEDA, "paper (Table 1), per CPU", 2.0 * lan, "assumed: 2 x the LAN's (remote site, between seven and merlin in Table 2's order)"),
        m("merlin", 2, merlin, "assumed: a dual Athlon XP 1800 PC (its line of Table 1 is lost; see assumptions)", 10.0 * lan, "assumed: 10 x the LAN's (10 Mbit/s hub against 100 Mbit/s switches)"),
        m("dinadan", 1, reference, "derived: the PIII/933 (rating 1) time, mean of rating x time over the three surviving pairs", 0.0, "root"),
    ]
}

/// The rational optimum (the paper's LP) of a platform in its serving order.
fn rational_makespan(machines: &[Machine]) -> f64 {
    let instance = instance_of(machines);
    let order: Vec<usize> = (0..instance.len()).collect();
    hetbal::scatter::lp(&instance, &order)
        .expect("linear costs with a time per item everywhere")
        .rational_makespan
}

/// The platform of the paper's experiment, rebuilt.
pub fn seismic_case() -> SeismicCase {
    // PIII/933 time per ray: each surviving (time, rating) pair gives rating * time;
    // their mean (the three agree within 1%).
    let reference = (SEKHMET_RATING * SEKHMET + SEVEN_RATING * SEVEN + LEDA_RATING * LEDA) / 3.0;
    // merlin's CPU: a PIII/933 cannot be, even with free communications.
    let as_piii = rational_makespan(&machines(reference, 0.0, reference));
    let free = rational_makespan(&machines(reference, 0.0, SEKHMET));
    // The LAN's time per ray: the balanced run (paper's LP, decreasing bandwidth)
    // predicts the 430 s measured. The makespan grows with it: bisection.
    let (mut lo, mut hi) = (0.0f64, 1e-3f64);
    for _ in 0..100 {
        let mid = 0.5 * (lo + hi);
        if rational_makespan(&machines(reference, mid, SEKHMET)) < BALANCED_LATEST {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    let lan = lo;
    let share = RAYS / 16;
    let assumptions = vec![
        format!(
            "PIII/933 = rating 1: {} s/ray, the mean of rating x time for sekhmet (1.90 x 0.004885), seven (0.57 x 0.016156) and leda (0.95 x 0.009677); dinadan is a PIII/933",
            fmt(reference)
        ),
        format!(
            "pellinore (PIII/800): the PIII/933 time scaled by clock, 933/800: {} s/ray",
            fmt(reference * 933.0 / 800.0)
        ),
        "caseb: an Athlon XP 1800 like sekhmet, same time per ray (its Table 1 value is lost)".to_string(),
        format!(
            "merlin (the paper's processors 5 and 6, a dual-CPU PC; its Table 1 line is lost): an Athlon XP 1800 like caseb and sekhmet. As a PIII/933 the balanced run could not end before {} s even with free communications, above the 430 s measured; as an XP 1800, {} s",
            secs1(as_piii),
            secs1(free)
        ),
        "costs are linear (no startups): Table 2 gives communications as seconds per ray, Table 1 computations".to_string(),
        format!(
            "the LAN's time per ray (caseb, pellinore, sekhmet, seven; Table 2's values are lost) is calibrated on one measurement: the paper's LP in decreasing bandwidth order predicts the 430 s measured for the balanced run when it is {} s/ray (about {} bytes per ray at 100 Mbit/s). The other rows are predictions",
            fmt(lan),
            (lan * 100e6 / 8.0).round()
        ),
        format!("leda (remote site): 2 x the LAN's time per ray (Table 2 ranks it between seven and merlin)"),
        "merlin: 10 x the LAN's time per ray (a 10 Mbit/s hub against 100 Mbit/s switches)".to_string(),
        format!(
            "uniform run: MPI_Scatter gives {share} rays to each of the 16 processes; the {} left over go to the root dinadan",
            RAYS % 16
        ),
        "each CPU of seven, leda and merlin runs a process of its own over its machine's link; the root serves one process after the other".to_string(),
        "the paper's balanced runs used its LP heuristic: its measured times are shown on the lp rows; exact rows are hetbal's optimum in the same order".to_string(),
    ];
    SeismicCase {
        machines: machines(reference, lan, SEKHMET),
        assumptions,
    }
}

/// Seconds with one decimal.
fn secs1(x: f64) -> String {
    format!("{x:.1}")
}

/// A number with 6 significant digits.
fn fmt(x: f64) -> String {
    format!("{x:.6e}")
        .parse::<f64>()
        .map(|v| format!("{v}"))
        .unwrap_or_else(|_| format!("{x}"))
}

impl SeismicCase {
    /// The instance of formats.md: 16 processes in the paper's serving order
    /// (decreasing bandwidth), root dinadan last.
    pub fn instance(&self) -> ScatterInstance {
        instance_of(&self.machines)
    }
}

/// The instance of a platform: one processor per process, in the machines' order.
fn instance_of(machines: &[Machine]) -> ScatterInstance {
    let mut processors = Vec::new();
    for machine in machines {
        for k in 1..=machine.processes {
            let name = if machine.processes == 1 {
                machine.name.to_string()
            } else {
                format!("{}-{k}", machine.name)
            };
            processors.push(ProcessorSpec {
                name: Some(name),
                comm: CostSpec::affine(machine.comm, 0.0),
                comp: CostSpec::affine(machine.comp, 0.0),
            });
        }
    }
    ScatterInstance::from_spec(ScatterInstanceSpec {
        items: RAYS,
        root: "dinadan".to_string(),
        startup_rule: StartupRule::WhenUsed,
        processors,
    })
    .expect("the rebuilt platform is a valid instance")
}

/// One row of the table (formats.md, "Experiment tables").
#[derive(Clone, Debug, Serialize)]
pub struct Row {
    /// `uniform` or `balanced`.
    pub distribution: &'static str,
    /// `uniform`, `lp` or `exact`.
    pub method: &'static str,
    /// `bandwidth-descending`, `bandwidth-ascending` or `best`.
    pub order: &'static str,
    /// Predicted makespan (s).
    pub makespan: f64,
    /// Predicted earliest finish of a process that gets rays (s).
    pub earliest_finish: f64,
    /// `(makespan - earliest_finish) / makespan`.
    pub spread: f64,
    /// Lower bound on every distribution in this order (s).
    pub lower_bound: f64,
    /// The paper's measured makespan, when it measured this run (s).
    pub paper_makespan: Option<f64>,
    /// The paper's measured earliest finish (s).
    pub paper_earliest_finish: Option<f64>,
    /// Rays per process, in the order's sequence.
    pub counts: Vec<u64>,
}

/// The JSON document.
#[derive(Serialize)]
struct Table<'a> {
    experiment: &'static str,
    parameters: Parameters<'a>,
    rows: &'a [Row],
}

#[derive(Serialize)]
struct Parameters<'a> {
    items: u64,
    startup_rule: &'static str,
    machines: &'a [Machine],
    assumptions: &'a [String],
    instance: ScatterInstanceSpec,
}

/// A run: its row, and what its Gantt chart needs.
struct Run {
    row: Row,
    order: Vec<usize>,
    counts: Vec<u64>,
    timeline: hetbal::scatter::Timeline,
}

fn run_of(
    instance: &ScatterInstance,
    key: (&'static str, &'static str, &'static str),
    order: Vec<usize>,
    counts: Vec<u64>,
    paper: Option<(f64, f64)>,
) -> Result<Run, CliError> {
    let timeline = evaluate(instance, &order, &counts).map_err(plan_error)?;
    let earliest = timeline
        .finish_times
        .iter()
        .zip(&counts)
        .filter(|(_, &c)| c > 0)
        .map(|(&t, _)| t)
        .fold(f64::INFINITY, f64::min);
    let row = Row {
        distribution: key.0,
        method: key.1,
        order: key.2,
        makespan: timeline.makespan,
        earliest_finish: earliest,
        spread: (timeline.makespan - earliest) / timeline.makespan,
        lower_bound: lower_bound(instance, &order).map_err(plan_error)?,
        paper_makespan: paper.map(|p| p.0),
        paper_earliest_finish: paper.map(|p| p.1),
        counts: counts.clone(),
    };
    Ok(Run {
        row,
        order,
        counts,
        timeline,
    })
}

fn scatter_seismic(json: bool, gantt_dir: Option<&Path>) -> Result<u8, CliError> {
    let case = seismic_case();
    let instance = case.instance();
    let p = instance.len();
    let descending: Vec<usize> = (0..p).collect();
    // The paper's Figure 4: merlin, merlin, leda x 8, seven x 2, sekhmet,
    // pellinore, caseb, then the root.
    let mut ascending: Vec<usize> = (0..p - 1).rev().collect();
    ascending.push(p - 1);
    debug_assert_eq!(bandwidth_order(&instance), descending, "serving order");
    let share = RAYS / p as u64;
    let mut uniform = vec![share; p];
    uniform[p - 1] += RAYS % p as u64;

    let mut runs = vec![run_of(
        &instance,
        ("uniform", "uniform", "bandwidth-descending"),
        descending.clone(),
        uniform,
        Some((UNIFORM_LATEST, UNIFORM_EARLIEST)),
    )?];
    let mut timings = Vec::new();
    for (order, label, paper) in [
        (
            &descending,
            "bandwidth-descending",
            Some((BALANCED_LATEST, BALANCED_EARLIEST)),
        ),
        (
            &ascending,
            "bandwidth-ascending",
            Some((ASCENDING_LATEST, ASCENDING_EARLIEST)),
        ),
    ] {
        for (method, name, measured) in [(Method::Lp, "lp", paper), (Method::Exact, "exact", None)]
        {
            let started = Instant::now();
            let planned = plan_in_order(&instance, method, order).map_err(plan_error)?;
            timings.push((name, label, started.elapsed().as_secs_f64()));
            runs.push(run_of(
                &instance,
                ("balanced", name, label),
                order.clone(),
                planned.counts,
                measured,
            )?);
        }
    }
    let started = Instant::now();
    let best = plan(&instance, Method::Exact, OrderPolicy::Best).map_err(plan_error)?;
    timings.push(("exact", "best", started.elapsed().as_secs_f64()));
    runs.push(run_of(
        &instance,
        ("balanced", "exact", "best"),
        best.order.clone(),
        best.counts.clone(),
        None,
    )?);

    let rows: Vec<Row> = runs.iter().map(|r| r.row.clone()).collect();
    if json {
        let table = Table {
            experiment: "scatter-seismic",
            parameters: Parameters {
                items: RAYS,
                startup_rule: instance.startup_rule().name(),
                machines: &case.machines,
                assumptions: &case.assumptions,
                instance: instance.to_spec(),
            },
            rows: &rows,
        };
        let text = serde_json::to_string_pretty(&table)
            .map_err(|e| CliError::input(format!("cannot write the table: {e}")))?;
        println!("{text}");
    } else {
        print!("{}", report(&case, &instance, &runs, &timings, &best.order));
    }
    if let Some(dir) = gantt_dir {
        let figures = [
            (
                0,
                "scatter-seismic-uniform.svg",
                "uniform scatter, decreasing bandwidth (paper's Figure 2)",
            ),
            (
                1,
                "scatter-seismic-balanced-descending.svg",
                "balanced (lp), decreasing bandwidth (Figure 3)",
            ),
            (
                3,
                "scatter-seismic-balanced-ascending.svg",
                "balanced (lp), increasing bandwidth (Figure 4)",
            ),
        ];
        for (k, file, what) in figures {
            let run = &runs[k];
            let title = format!("{what}: makespan {} s", secs(round2(run.row.makespan)));
            let lanes = lanes(
                &instance,
                &run.order,
                &run.counts,
                &run.timeline,
                0.0,
                "dinadan",
            );
            let path = dir.join(file);
            write_svg(&path, &title, &lanes)?;
            eprintln!("Gantt chart written to {}", path.display());
        }
    }
    Ok(0)
}

fn round2(x: f64) -> f64 {
    (x * 100.0).round() / 100.0
}

/// The text report: the platform with the source of every number, the
/// assumptions, the table.
fn report(
    case: &SeismicCase,
    instance: &ScatterInstance,
    runs: &[Run],
    timings: &[(&str, &str, f64)],
    best_order: &[usize],
) -> String {
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
    for m in &case.machines {
        let _ = writeln!(
            out,
            "  {:<10} {:>3}  {:>12}  {:>12}  comp: {}; comm: {}",
            m.name,
            m.processes,
            fmt(m.comp),
            fmt(m.comm),
            m.comp_source,
            m.comm_source
        );
    }
    let _ = writeln!(out, "\nassumed (the paper's text lost these values):");
    for a in &case.assumptions {
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
    for run in runs {
        let r = &run.row;
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
    let uniform = runs[0].row.makespan;
    let balanced = runs[1].row.makespan;
    let ascending = runs[3].row.makespan;
    let _ = writeln!(
        out,
        "\nbalancing divides the predicted time by {:.2} (paper: 853 / 430 = {:.2}); \
         increasing bandwidth order costs {:+.1}% over decreasing (paper: 486 / 430 = {:+.1}%)",
        uniform / balanced,
        UNIFORM_LATEST / BALANCED_LATEST,
        100.0 * (ascending / balanced - 1.0),
        100.0 * (ASCENDING_LATEST / BALANCED_LATEST - 1.0)
    );
    let names: Vec<&str> = best_order.iter().map(|&i| instance.name(i)).collect();
    let _ = writeln!(out, "best order found: {}", names.join(", "));
    let _ = writeln!(
        out,
        "predicted times come from the model (instance above); the paper's are measured on its grid"
    );
    let _ = write!(out, "planning time here:");
    for (method, order, seconds) in timings {
        let _ = write!(out, " {method} {order} {:.3} s;", seconds);
    }
    let _ = writeln!(
        out,
        " (the paper's Algorithm 1 took about 15 minutes on this case in 2003)"
    );
    out
}
