//! The scatter paper's seismic tomography case (section 5), rebuilt from the
//! values its text keeps: 817,101 rays scattered by `dinadan` to 16 processes on
//! 7 machines. Every value the text lost is assumed, and said so in
//! [`SeismicCase::assumptions`]; the LAN's time per ray is calibrated on one
//! measurement (the balanced run's 430 s), the other runs are predictions.
//!
//! [`run`] plans the runs the paper measured (the uniform scatter, the balanced
//! one in decreasing and in increasing bandwidth order) and hetbal's optimum.
//!
//! ```
//! use hetbal::experiment::scatter_seismic::{run, BALANCED_LATEST, RAYS};
//!
//! let seismic = run().unwrap();
//! assert_eq!(seismic.instance.len(), 16);
//! assert_eq!(seismic.runs[0].row.counts.iter().sum::<u64>(), RAYS);
//! // Calibrated: the balanced run (the paper's LP, decreasing bandwidth) predicts
//! // the 430 s measured.
//! let balanced = &seismic.runs[1].row;
//! assert_eq!((balanced.method, balanced.order), ("lp", "bandwidth-descending"));
//! assert!((balanced.makespan - BALANCED_LATEST).abs() < 1.0);
//! // Balancing halves the uniform scatter's time, as the paper measured.
//! assert!(seismic.runs[0].row.makespan > 1.9 * balanced.makespan);
//! ```

use std::time::Instant;

use serde::Serialize;

use super::Document;

use crate::scatter::{
    bandwidth_order, evaluate, lower_bound, lp, plan, plan_in_order, CostSpec, Method, OrderPolicy,
    PlanError, ProcessorSpec, ScatterInstance, ScatterInstanceSpec, StartupRule, Timeline,
};

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

/// The paper's measured makespan of the uniform scatter (s, section 5.2).
pub const UNIFORM_LATEST: f64 = 853.0;
/// The paper's measured earliest finish of the uniform scatter (s).
pub const UNIFORM_EARLIEST: f64 = 259.0;
/// The paper's measured makespan of the balanced scatter, decreasing bandwidth (s).
pub const BALANCED_LATEST: f64 = 430.0;
/// The paper's measured earliest finish of the balanced scatter, decreasing bandwidth (s).
pub const BALANCED_EARLIEST: f64 = 405.0;
/// The paper's measured makespan of the balanced scatter, increasing bandwidth (s).
pub const ASCENDING_LATEST: f64 = 486.0;
/// The paper's measured earliest finish of the balanced scatter, increasing bandwidth (s).
pub const ASCENDING_EARLIEST: f64 = 437.0;

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
#[derive(Clone, Debug)]
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
    lp(&instance, &order)
        .expect("linear costs with a time per item everywhere")
        .rational_makespan
}

/// `x` rounded to 7 significant digits (how the case prints its times per ray).
///
/// ```
/// use hetbal::experiment::scatter_seismic::seven_significant;
/// assert_eq!(seven_significant(0.00928153846), 0.009281538);
/// ```
pub fn seven_significant(x: f64) -> f64 {
    format!("{x:.6e}").parse().unwrap_or(x)
}

/// The platform of the paper's experiment, rebuilt: the reference (PIII/933) time
/// per ray from the surviving (time, rating) pairs, merlin's CPU, and the LAN's
/// time per ray calibrated by bisection so that the paper's LP predicts the 430 s
/// measured for the balanced run.
///
/// Complexity: about 100 LPs of 16 processors.
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
    let fmt = seven_significant;
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
            "merlin (the paper's processors 5 and 6, a dual-CPU PC; its Table 1 line is lost): an Athlon XP 1800 like caseb and sekhmet. As a PIII/933 the balanced run could not end before {as_piii:.1} s even with free communications, above the 430 s measured; as an XP 1800, {free:.1} s",
        ),
        "costs are linear (no startups): Table 2 gives communications as seconds per ray, Table 1 computations".to_string(),
        format!(
            "the LAN's time per ray (caseb, pellinore, sekhmet, seven; Table 2's values are lost) is calibrated on one measurement: the paper's LP in decreasing bandwidth order predicts the 430 s measured for the balanced run when it is {} s/ray (about {} bytes per ray at 100 Mbit/s). The other rows are predictions",
            fmt(lan),
            (lan * 100e6 / 8.0).round()
        ),
        "leda (remote site): 2 x the LAN's time per ray (Table 2 ranks it between seven and merlin)".to_string(),
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

impl SeismicCase {
    /// The instance of formats.md: 16 processes in the paper's serving order
    /// (decreasing bandwidth), root dinadan last. O(processes).
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

/// A run: its row, and the order and timeline its Gantt chart needs.
#[derive(Clone, Debug)]
pub struct SeismicRun {
    /// The row.
    pub row: Row,
    /// The serving order (processor indices, root last).
    pub order: Vec<usize>,
    /// When each process receives and finishes, in the order's sequence.
    pub timeline: Timeline,
}

/// How long a plan took to compute here.
#[derive(Clone, Debug)]
pub struct PlanningTime {
    /// `lp` or `exact`.
    pub method: &'static str,
    /// The order's label, as in [`Row::order`].
    pub order: &'static str,
    /// Wall-clock seconds.
    pub seconds: f64,
}

/// The experiment's outcome.
#[derive(Clone, Debug)]
pub struct SeismicExperiment {
    /// The rebuilt platform.
    pub case: SeismicCase,
    /// Its instance.
    pub instance: ScatterInstance,
    /// The runs, in this order: uniform (decreasing bandwidth); lp and exact in
    /// decreasing bandwidth order; lp and exact in increasing bandwidth order (the
    /// paper's Figure 4); exact in the best order found.
    pub runs: Vec<SeismicRun>,
    /// Planning times of the balanced runs.
    pub timings: Vec<PlanningTime>,
}

/// The experiment's JSON document: what `hetbal experiment scatter-seismic
/// --json` prints, the rows in the order of [`SeismicExperiment::runs`].
pub type SeismicDocument<'a> = Document<SeismicParameters<'a>, Vec<&'a Row>>;

/// The `parameters` of a [`SeismicDocument`].
#[derive(Clone, Debug, Serialize)]
pub struct SeismicParameters<'a> {
    /// Rays scattered ([`RAYS`]).
    pub items: u64,
    /// The instance's startup rule, by name.
    pub startup_rule: &'static str,
    /// The machines, with the source of every number.
    pub machines: &'a [Machine],
    /// Every value or rule assumed, in words.
    pub assumptions: &'a [String],
    /// The instance as formats.md writes it.
    pub instance: ScatterInstanceSpec,
}

impl SeismicExperiment {
    /// The JSON document of the experiment (borrowing its rows).
    ///
    /// Complexity: O(processes + runs).
    ///
    /// ```
    /// let seismic = hetbal::experiment::scatter_seismic::run().unwrap();
    /// let document = seismic.document();
    /// assert_eq!(document.experiment, "scatter-seismic");
    /// assert_eq!(document.rows.len(), seismic.runs.len());
    /// ```
    pub fn document(&self) -> SeismicDocument<'_> {
        Document {
            experiment: "scatter-seismic",
            parameters: SeismicParameters {
                items: RAYS,
                startup_rule: self.instance.startup_rule().name(),
                machines: &self.case.machines,
                assumptions: &self.case.assumptions,
                instance: self.instance.to_spec(),
            },
            rows: self.runs.iter().map(|r| &r.row).collect(),
        }
    }
}

/// Rebuilds the case and plans its runs (see [`SeismicExperiment::runs`]).
///
/// # Errors
/// A [`PlanError`] if a planner refuses the rebuilt instance (it does not: the
/// instance is fixed and valid).
///
/// # Complexity
/// That of [`seismic_case`], plus the plans: a few LPs and exact dynamic
/// programmes over 817,101 rays and 16 processes, and the local order search of
/// [`OrderPolicy::Best`].
pub fn run() -> Result<SeismicExperiment, PlanError> {
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
            let planned = plan_in_order(&instance, method, order)?;
            timings.push(PlanningTime {
                method: name,
                order: label,
                seconds: started.elapsed().as_secs_f64(),
            });
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
    let best = plan(&instance, Method::Exact, OrderPolicy::Best)?;
    timings.push(PlanningTime {
        method: "exact",
        order: "best",
        seconds: started.elapsed().as_secs_f64(),
    });
    runs.push(run_of(
        &instance,
        ("balanced", "exact", "best"),
        best.order,
        best.counts,
        None,
    )?);
    Ok(SeismicExperiment {
        case,
        instance,
        runs,
        timings,
    })
}

/// The run of `counts` in `order`: its timeline and its row, labelled `key`
/// (distribution, method, order), with the paper's measured (latest, earliest).
fn run_of(
    instance: &ScatterInstance,
    key: (&'static str, &'static str, &'static str),
    order: Vec<usize>,
    counts: Vec<u64>,
    paper: Option<(f64, f64)>,
) -> Result<SeismicRun, PlanError> {
    let timeline = evaluate(instance, &order, &counts)?;
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
        lower_bound: lower_bound(instance, &order)?,
        paper_makespan: paper.map(|p| p.0),
        paper_earliest_finish: paper.map(|p| p.1),
        counts,
    };
    Ok(SeismicRun {
        row,
        order,
        timeline,
    })
}
