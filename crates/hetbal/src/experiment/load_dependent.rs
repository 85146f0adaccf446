//! The online decider on processors whose time depends on the load (issue
//! 33): every scenario of [`standard_scenarios`] run in closed loop
//! ([`closed_loop`]) with the constant and the functional model, and how fast
//! each gets within 5% and 3% of the true integer optimum. Every run's
//! iteration times are kept too ([`LoadDependentTrace`]), for plots.
//!
//! ```
//! use hetbal::experiment::load_dependent::{run, GOAL_ITERATIONS, GOAL_MOVES};
//! let result = run(1).unwrap();
//! for row in result.rows.iter().filter(|r| r.model == "functional") {
//!     assert!(row.meets_goal, "{}", row.scenario);
//! }
//! assert!(result.table().contains("memory-cliff"));
//! // One trace per row: the true time of every iteration and the optimum.
//! let trace = &result.traces[4];
//! assert_eq!((trace.scenario.as_str(), trace.model), ("memory-cliff", "constant"));
//! assert_eq!(trace.times.len(), result.rows[4].iterations as usize);
//! assert!(trace.times.iter().all(|&t| t >= trace.optimum * (1.0 - 1e-12)));
//! ```

use serde::Serialize;

use super::Document;
use crate::iterative::load::{closed_loop, standard_scenarios, LoadError, LoadScenario};
use crate::iterative::online::{Decider, DeciderModel};
use crate::iterative::Policy;
use crate::random::SplitMix64;

/// The goal: within this gap of the optimum ...
pub const GOAL_GAP: f64 = 0.05;
/// ... from at most this iteration on ...
pub const GOAL_ITERATIONS: u32 = 10;
/// ... with at most this many moves in the whole run.
pub const GOAL_MOVES: u32 = 6;

/// One scenario run with one model.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct LoadDependentRow {
    /// The scenario's name ([`standard_scenarios`]).
    pub scenario: String,
    /// The decider's model: `constant` or `functional`
    /// ([`DeciderModel::name`]).
    pub model: &'static str,
    /// Processors.
    pub processors: usize,
    /// Items.
    pub items: u64,
    /// Iterations of the run.
    pub iterations: u32,
    /// The first iteration from which the run stays within 5% of the optimum
    /// (`None`: it does not end within 5%).
    pub within5_iteration: Option<u32>,
    /// Moves made before it.
    pub within5_moves: Option<u32>,
    /// The same within 3%.
    pub within3_iteration: Option<u32>,
    /// Moves made before it.
    pub within3_moves: Option<u32>,
    /// Moves in the whole run.
    pub moves: u32,
    /// The last iteration's gap to the optimum (0.01: 1%).
    pub final_gap: f64,
    /// The largest gap of the last ten iterations (an oscillation shows
    /// here).
    pub late_worst_gap: f64,
    /// Within [`GOAL_GAP`] from iteration [`GOAL_ITERATIONS`] at the latest,
    /// with at most [`GOAL_MOVES`] moves in the run.
    pub meets_goal: bool,
}

/// One run's iterations, for plots: the true step time of each iteration
/// against the true optimum.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct LoadDependentTrace {
    /// The scenario's name.
    pub scenario: String,
    /// The decider's model ([`DeciderModel::name`]).
    pub model: &'static str,
    /// The true integer optimum's step time ([`crate::iterative::load::optimum`]).
    pub optimum: f64,
    /// The true step time (no noise) of every iteration, from iteration 1.
    pub times: Vec<f64>,
    /// Whether the decider moved the items after each iteration.
    pub moved: Vec<bool>,
}

/// The experiment's rows: every scenario with each model, in order.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct LoadDependentExperiment {
    /// The noise seed.
    pub seed: u64,
    /// The rows.
    pub rows: Vec<LoadDependentRow>,
    /// Each row's run, iteration by iteration (same order as `rows`; not in
    /// the JSON document of [`LoadDependentExperiment::document`]).
    pub traces: Vec<LoadDependentTrace>,
}

impl LoadDependentExperiment {
    /// The JSON document (formats.md, "Experiment tables"): experiment
    /// `load-dependent`, the seed, the rows. O(1).
    pub fn document(&self) -> Document<u64, &[LoadDependentRow]> {
        Document {
            experiment: "load-dependent",
            parameters: self.seed,
            rows: &self.rows,
        }
    }

    /// The rows as a text table (one line per scenario and model; `-` where
    /// a run does not settle). O(rows).
    pub fn table(&self) -> String {
        let opt = |v: Option<u32>| v.map_or("-".to_string(), |v| v.to_string());
        let mut out = format!(
            "{:<24} {:<11} {:>6} {:>7} {:>6} {:>7} {:>5} {:>9} {:>9} {:>4}\n",
            "scenario",
            "model",
            "it<=5%",
            "moves5",
            "it<=3%",
            "moves3",
            "moves",
            "final",
            "late max",
            "goal"
        );
        for r in &self.rows {
            out.push_str(&format!(
                "{:<24} {:<11} {:>6} {:>7} {:>6} {:>7} {:>5} {:>8.2}% {:>8.2}% {:>4}\n",
                r.scenario,
                r.model,
                opt(r.within5_iteration),
                opt(r.within5_moves),
                opt(r.within3_iteration),
                opt(r.within3_moves),
                r.moves,
                100.0 * r.final_gap,
                100.0 * r.late_worst_gap,
                if r.meets_goal { "yes" } else { "no" }
            ));
        }
        out
    }
}

/// The decider of the study for `scenario`: [`Policy::Profitability`] on its
/// links, the default tolerance (5%), with `model`.
///
/// # Errors
/// [`LoadError::Decide`] for bad links.
///
/// # Complexity
/// O(n).
///
/// ```
/// use hetbal::experiment::load_dependent::decider;
/// use hetbal::iterative::load::standard_scenarios;
/// use hetbal::iterative::online::DeciderModel;
/// let d = decider(&standard_scenarios(1)[0], DeciderModel::functional()).unwrap();
/// assert_eq!(d.model(), DeciderModel::functional());
/// ```
pub fn decider(scenario: &LoadScenario, model: DeciderModel) -> Result<Decider, LoadError> {
    Ok(Decider::new(
        Policy::Profitability,
        scenario.c_succ.clone(),
        scenario.c_pred.clone(),
    )
    .map_err(LoadError::Decide)?
    .with_model(model))
}

/// One row: `scenario` in closed loop with `model`.
///
/// # Errors
/// [`closed_loop`]'s.
///
/// # Complexity
/// That of [`closed_loop`].
///
/// ```
/// use hetbal::experiment::load_dependent::row;
/// use hetbal::iterative::load::standard_scenarios;
/// use hetbal::iterative::online::DeciderModel;
/// let r = row(&standard_scenarios(1)[2], DeciderModel::Constant).unwrap();
/// assert_eq!((r.scenario.as_str(), r.model), ("memory-cliff", "constant"));
/// assert!(!r.meets_goal);
/// ```
pub fn row(scenario: &LoadScenario, model: DeciderModel) -> Result<LoadDependentRow, LoadError> {
    row_and_trace(scenario, model).map(|(row, _)| row)
}

/// One row and its run's trace: `scenario` in closed loop with `model`.
///
/// # Errors
/// [`closed_loop`]'s.
///
/// # Complexity
/// That of [`closed_loop`].
///
/// ```
/// use hetbal::experiment::load_dependent::row_and_trace;
/// use hetbal::iterative::load::standard_scenarios;
/// use hetbal::iterative::online::DeciderModel;
/// let (r, t) = row_and_trace(&standard_scenarios(1)[2], DeciderModel::functional()).unwrap();
/// assert_eq!(t.moved.iter().filter(|&&m| m).count() as u32, r.moves);
/// let last = *t.times.last().unwrap();
/// assert!((last / t.optimum - 1.0 - r.final_gap).abs() < 1e-12);
/// ```
pub fn row_and_trace(
    scenario: &LoadScenario,
    model: DeciderModel,
) -> Result<(LoadDependentRow, LoadDependentTrace), LoadError> {
    let run = closed_loop(scenario, decider(scenario, model)?)?;
    let trace = LoadDependentTrace {
        scenario: scenario.name.clone(),
        model: model.name(),
        optimum: run.optimum.time,
        times: run.iterations.iter().map(|it| it.time).collect(),
        moved: run.iterations.iter().map(|it| it.moved).collect(),
    };
    let within5 = run.settled(0.05);
    let within3 = run.settled(0.03);
    let late = run.iterations.len().saturating_sub(10);
    let meets_goal = run
        .settled(GOAL_GAP)
        .is_some_and(|s| s.iteration <= GOAL_ITERATIONS)
        && run.moves <= GOAL_MOVES;
    let row = LoadDependentRow {
        scenario: scenario.name.clone(),
        model: model.name(),
        processors: scenario.profiles.len(),
        items: scenario.initial_loads.iter().sum(),
        iterations: scenario.iterations,
        within5_iteration: within5.map(|s| s.iteration),
        within5_moves: within5.map(|s| s.moves),
        within3_iteration: within3.map(|s| s.iteration),
        within3_moves: within3.map(|s| s.moves),
        moves: run.moves,
        final_gap: run.final_gap(),
        late_worst_gap: run.iterations[late..]
            .iter()
            .map(|it| it.gap)
            .fold(0.0, f64::max),
        meets_goal,
    };
    Ok((row, trace))
}

/// The study: every scenario of [`standard_scenarios`]`(seed)` with the
/// constant and the functional (piecewise-linear) model.
///
/// # Errors
/// [`closed_loop`]'s (none on these scenarios).
///
/// # Complexity
/// 20 closed loops of 30 decisions on 4 or 8 processors: milliseconds.
///
/// # Example
/// See the [module's docs](self).
pub fn run(seed: u64) -> Result<LoadDependentExperiment, LoadError> {
    let (mut rows, mut traces) = (Vec::new(), Vec::new());
    for scenario in standard_scenarios(seed) {
        for model in [DeciderModel::Constant, DeciderModel::functional()] {
            let (row, trace) = row_and_trace(&scenario, model)?;
            rows.push(row);
            traces.push(trace);
        }
    }
    Ok(LoadDependentExperiment { seed, rows, traces })
}

/// The study from other starting loads: for each seed `1..=draws`, every
/// scenario of [`standard_scenarios`]`(seed)` with each processor's starting
/// load drawn uniformly between half and one and a half times the scenario's
/// (seeded by `seed`), run with `model`. Each row's scenario is named
/// `NAME@SEED`.
///
/// # Errors
/// [`closed_loop`]'s (none on these scenarios).
///
/// # Complexity
/// `10 × draws` closed loops.
///
/// ```
/// use hetbal::experiment::load_dependent::random_starts;
/// use hetbal::iterative::online::DeciderModel;
/// let rows = random_starts(2, 7, DeciderModel::functional()).unwrap();
/// assert_eq!(rows.len(), 20);
/// assert_eq!(rows[0].scenario, "affine-gpu@1");
/// ```
pub fn random_starts(
    draws: u64,
    seed: u64,
    model: DeciderModel,
) -> Result<Vec<LoadDependentRow>, LoadError> {
    let mut rng = SplitMix64::new(seed);
    let mut rows = Vec::new();
    for draw in 1..=draws {
        for mut scenario in standard_scenarios(draw) {
            for x in scenario.initial_loads.iter_mut() {
                *x = *x / 2 + rng.below_u64((*x).max(1));
            }
            scenario.name = format!("{}@{draw}", scenario.name);
            rows.push(row(&scenario, model)?);
        }
    }
    Ok(rows)
}
