//! The GEN_BLOCK paper's scenarios I–V (section 5): the plain colouring (`Tb`),
//! the paper's method and `best` (`Ta`), the paper's bound `B` and the lower bound
//! on random instances, and `best`'s trade-off between steps and startups.
//!
//! Random instances: the source and the target distributions are drawn
//! independently by [`BlockListSampler`], uniformly among all lists of `P` block
//! sizes in `[1, U]` adding up to `N` (the paper does not say how it drew its
//! blocks; this choice reproduces the average degree it gives for scenario V,
//! 1.95). Every point draws its own instances from a generator seeded by the seed,
//! the scenario and the point, so the same seed gives the same table.
//!
//! ```
//! use hetbal::experiment::genblock::{run, scenarios};
//! use hetbal::genblock::Method;
//!
//! let table = run(1, 2005).unwrap();
//! // Two rows (paper, best) per point of scenarios I to IV, at most two per Delta of
//! // scenario V, and two per startup of the trade-off.
//! let ii = table.rows.iter().filter(|r| r.scenario == "II").count();
//! assert_eq!(ii, 2 * scenarios()[1].points.len());
//! for row in &table.rows {
//!     // Without startups best meets the lower bound; no method beats it.
//!     assert!(row.ta >= row.lower_bound - 1e-9);
//!     if row.method == Method::Best && row.scenario != "II-startup" {
//!         assert!((row.ta - row.lower_bound).abs() < 1e-9);
//!     }
//! }
//! ```

use std::fmt;

use serde::Serialize;

use super::Document;

use crate::genblock::{
    best_schedule, lower_bound, paper_schedule, plain_colouring, redistribution_graph, step_cost,
    BlockListSampler, GenBlockInstance, Method, SearchOptions,
};
use crate::random::SplitMix64;

/// A point of a scenario: its x value and the instances drawn there.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct ScenarioPoint {
    /// The x value: P, N, U or Delta.
    pub x: u64,
    /// Source and target processors `P`.
    pub processors: usize,
    /// Elements `N`.
    pub elements: usize,
    /// Largest block size `U`.
    pub largest: usize,
}

/// A scenario of the paper's section 5.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Scenario {
    /// `I` to `V`.
    pub name: &'static str,
    /// What varies and how blocks are drawn, in words.
    pub description: &'static str,
    /// What the x value is.
    pub x_label: &'static str,
    /// The points, in increasing x.
    pub points: Vec<ScenarioPoint>,
}

/// The name of the trade-off rows: scenario II at `N = 3200` with startups.
pub const TRADEOFF: &str = "II-startup";

/// What the trade-off rows are, in words.
pub const TRADEOFF_DESCRIPTION: &str = "scenario II-startup: the instances of scenario II at N = 3200, with startup Tu = point (tau = 1); best chooses its number of steps for each Tu";

/// What the x value of the trade-off rows is (the x axis of their plot).
pub const TRADEOFF_X_LABEL: &str = "startup Tu (N = 3200, P = 32, tau = 1)";

/// Startups `Tu` of the trade-off rows (`tau = 1`).
pub const TRADEOFF_STARTUPS: [f64; 7] = [0.0, 5.0, 10.0, 25.0, 50.0, 100.0, 200.0];

/// How the random blocks are drawn, in words.
pub const BLOCKS: &str = "each distribution (source, then target, independently) is drawn uniformly among all lists of P block sizes in [1, U] adding up to N (every such list equally likely: sizes drawn one by one with probability proportional to the number of ways the other blocks can hold the rest); the paper does not say how it drew its blocks";

/// Scenario V draws at most this many instances per run asked for.
pub const SCENARIO_V_DRAWS_PER_RUN: usize = 500;

/// The five scenarios (`Tu = 0`, `tau = 1`). Scenario V's points share one
/// `(P, N, U)`: its instances are drawn there and grouped by their Delta.
///
/// Complexity: O(1).
pub fn scenarios() -> Vec<Scenario> {
    let points = |xs: &[u64], f: &dyn Fn(u64) -> (usize, usize, usize)| {
        xs.iter()
            .map(|&x| {
                let (processors, elements, largest) = f(x);
                ScenarioPoint {
                    x,
                    processors,
                    elements,
                    largest,
                }
            })
            .collect()
    };
    let processors = [4, 8, 16, 32, 64, 128];
    vec![
        Scenario {
            name: "I",
            description: "N = 25 P, blocks in [1, 50], P = 4 to 128 (the text says N = 100, which blocks of at least 1 element cannot fill beyond P = 100; its Table 4 gives N/P = 25)",
            x_label: "processors P",
            points: points(&processors, &|p| (p as usize, 25 * p as usize, 50)),
        },
        Scenario {
            name: "II",
            description: "P = 32, N = 1600 to 12800, blocks in [1, 2N/P]",
            x_label: "elements N",
            points: points(&[1600, 3200, 6400, 9600, 12800], &|n| {
                (32, n as usize, 2 * n as usize / 32)
            }),
        },
        Scenario {
            name: "III",
            description: "N = 3200, P = 4 to 128, blocks in [1, 2N/P]",
            x_label: "processors P",
            points: points(&processors, &|p| (p as usize, 3200, 2 * 3200 / p as usize)),
        },
        Scenario {
            name: "IV",
            description: "N = 3200, P = 32, blocks in [1, U], U = 150 to 1600",
            x_label: "largest block size U",
            points: points(&[150, 200, 400, 800, 1200, 1600], &|u| (32, 3200, u as usize)),
        },
        Scenario {
            name: "V",
            description: "N = 3200, P = 32, blocks in [1, 400], instances grouped by their maximum degree Delta = 5 to 15 (drawn as in IV with U = 400 and kept by Delta, at most 500 x runs draws)",
            x_label: "maximum degree Delta",
            points: points(&(5..=15).collect::<Vec<_>>(), &|_| (32, 3200, 400)),
        },
    ]
}

/// What the columns of a [`Row`] mean.
#[derive(Clone, Copy, Debug, Serialize)]
pub struct Definitions {
    /// Of `tb`.
    pub tb: &'static str,
    /// Of `ta`.
    pub ta: &'static str,
    /// Of `b`.
    pub b: &'static str,
    /// Of `r`.
    pub r: &'static str,
    /// Of `lower_bound`.
    pub lower_bound: &'static str,
}

/// The definitions of the columns.
pub const DEFINITIONS: Definitions = Definitions {
    tb: "mean cost of the plain colouring: the paper's O(m) colouring in Delta steps, messages unsplit",
    ta: "mean cost of the method's schedule",
    b: "mean of the paper's B: Delta x Tu + the sum over the colours of the paper's schedule of the largest message with an end of degree Delta (the least cost the paper's method can reach with its colouring; best is not bound by it)",
    r: "(tb - ta) / tb, from the means (the summary also gives the mean of the per-instance ratios)",
    lower_bound: "mean of Delta x Tu + tau x (largest block): no schedule costs less",
};

/// One row of the table (formats.md, "Experiment tables"): the means over the
/// instances of a point, for one method.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Row {
    /// `I` to `V`, or [`TRADEOFF`] (scenario II at N = 3200 with startup `point`).
    pub scenario: &'static str,
    /// The x value: P, N, U, Delta, or the startup.
    pub point: f64,
    /// `paper` or `best`.
    pub method: Method,
    /// Mean cost of the plain colouring.
    pub tb: f64,
    /// Mean cost of the method.
    pub ta: f64,
    /// Mean of the paper's B.
    pub b: f64,
    /// `(tb - ta) / tb`.
    pub r: f64,
    /// Mean lower bound.
    pub lower_bound: f64,
}

/// What the report and the plots add to a [`Row`] (same scenario, point and
/// method).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Summary {
    /// Scenario.
    pub scenario: &'static str,
    /// Point.
    pub point: f64,
    /// Method.
    pub method: Method,
    /// Instances averaged.
    pub instances: usize,
    /// Mean number of steps.
    pub steps: f64,
    /// Mean of cost / lower bound.
    pub cost_over_lower_bound: f64,
    /// Mean of the per-instance reductions (Tb - Ta) / Tb.
    pub mean_r: f64,
}

/// Scenario V's draws: how many instances each Delta got.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DeltaDraws {
    /// Instances drawn in all.
    pub draws: usize,
    /// `(Delta, instances kept)` per point of scenario V.
    pub kept: Vec<(u64, usize)>,
}

/// The experiment's outcome.
#[derive(Clone, Debug)]
pub struct GenBlockExperiment {
    /// Random instances per point asked for.
    pub runs: usize,
    /// Seed of the random draws.
    pub seed: u64,
    /// The rows: scenarios I to V in order, points in order, `paper` then `best`;
    /// then the trade-off rows in increasing startup. Points of scenario V with no
    /// instance have no row.
    pub rows: Vec<Row>,
    /// One summary per row, in the same order.
    pub summaries: Vec<Summary>,
    /// Scenario V's draws.
    pub scenario_v: DeltaDraws,
}

/// The experiment's JSON document: what `hetbal experiment genblock --json`
/// prints, the rows of [`GenBlockExperiment::rows`].
pub type GenBlockDocument<'a> = Document<GenBlockParameters<'a>, &'a [Row]>;

/// The `parameters` of a [`GenBlockDocument`].
#[derive(Clone, Debug, Serialize)]
pub struct GenBlockParameters<'a> {
    /// Random instances per point.
    pub runs: usize,
    /// Seed of the draws.
    pub seed: u64,
    /// Time per element `tau` (1).
    pub unit: f64,
    /// Startup `Tu` of scenarios I to V (0).
    pub startup: f64,
    /// How the blocks are drawn ([`BLOCKS`]).
    pub blocks: &'static str,
    /// The scenarios, in words.
    pub scenarios: Vec<ScenarioInfo>,
    /// What the trade-off rows are ([`TRADEOFF_DESCRIPTION`]).
    pub tradeoff: &'static str,
    /// Notes on the draws ([`GenBlockExperiment::notes`]).
    pub notes: Vec<String>,
    /// What the columns mean ([`DEFINITIONS`]).
    pub definitions: Definitions,
    /// One summary per row.
    pub summary: &'a [Summary],
}

/// A scenario in words, as the JSON document gives it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct ScenarioInfo {
    /// `I` to `V`.
    pub name: &'static str,
    /// What varies and how blocks are drawn.
    pub description: &'static str,
    /// What the x value is.
    pub x: &'static str,
}

impl GenBlockExperiment {
    /// Notes on the draws, for the report and the document: how many instances
    /// scenario V drew and kept per Delta.
    ///
    /// Complexity: O(points of scenario V).
    pub fn notes(&self) -> Vec<String> {
        let counts: Vec<String> = (self.scenario_v.kept.iter())
            .map(|(d, k)| format!("Delta {d}: {k}"))
            .collect();
        vec![format!(
            "scenario V: {} draws; instances kept per Delta: {} (Delta >= 13 is rare among uniformly drawn lists: the paper's Delta up to 15 must come from another way of drawing)",
            self.scenario_v.draws,
            counts.join(", ")
        )]
    }

    /// The JSON document of the experiment (borrowing its rows and summaries).
    ///
    /// Complexity: O(points of scenario V).
    ///
    /// ```
    /// let table = hetbal::experiment::genblock::run(1, 2005).unwrap();
    /// let document = table.document();
    /// assert_eq!((document.parameters.runs, document.parameters.seed), (1, 2005));
    /// assert_eq!(document.parameters.scenarios.len(), 5);
    /// assert_eq!(document.rows.len(), document.parameters.summary.len());
    /// ```
    pub fn document(&self) -> GenBlockDocument<'_> {
        let scenarios = scenarios().into_iter().map(|s| ScenarioInfo {
            name: s.name,
            description: s.description,
            x: s.x_label,
        });
        Document {
            experiment: "genblock",
            parameters: GenBlockParameters {
                runs: self.runs,
                seed: self.seed,
                unit: 1.0,
                startup: 0.0,
                blocks: BLOCKS,
                scenarios: scenarios.collect(),
                tradeoff: TRADEOFF_DESCRIPTION,
                notes: self.notes(),
                definitions: DEFINITIONS,
                summary: &self.summaries,
            },
            rows: &self.rows,
        }
    }
}

/// Why the experiment cannot run.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ExperimentError {
    /// `runs` is 0: a point needs at least one instance.
    NoRuns,
}

impl fmt::Display for ExperimentError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ExperimentError::NoRuns => {
                f.write_str("no run asked for: every point needs at least one instance")
            }
        }
    }
}

impl std::error::Error for ExperimentError {}

/// Runs the five scenarios and the trade-off with `runs` random instances per
/// point (source and target drawn by [`BlockListSampler`]), at `Tu = 0` and
/// `tau = 1` (the trade-off at each of [`TRADEOFF_STARTUPS`]).
///
/// Scenario V draws instances at `P = 32`, `N = 3200`, `U = 400` and keeps them by
/// their maximum degree, up to `runs` per Delta, stopping after
/// [`SCENARIO_V_DRAWS_PER_RUN`]` x runs` draws (high degrees are rare).
///
/// # Returns
/// The rows and summaries, and scenario V's draw counts. The same `seed` gives
/// the same outcome; instances are measured on up to 4 threads.
///
/// # Errors
/// [`ExperimentError::NoRuns`] when `runs` is 0.
///
/// # Complexity
/// About 40 points of `runs` instances each, an instance costing one
/// [`best_schedule`] (`P = 32`: about 0.1 ms without startups, 1 to 20 ms with),
/// plus up to `500 runs` redistribution graphs for scenario V.
pub fn run(runs: usize, seed: u64) -> Result<GenBlockExperiment, ExperimentError> {
    if runs == 0 {
        return Err(ExperimentError::NoRuns);
    }
    let mut results: Vec<(Row, Summary)> = Vec::new();
    let mut scenario_v = DeltaDraws {
        draws: 0,
        kept: Vec::new(),
    };
    for (si, scenario) in scenarios().iter().enumerate() {
        let stream = seed ^ ((si as u64 + 1) << 32);
        if scenario.name == "V" {
            let (pairs, draws) = draw_by_degree(scenario, runs, stream);
            scenario_v.draws = draws;
            for (point, pairs) in scenario.points.iter().zip(&pairs) {
                scenario_v.kept.push((point.x, pairs.len()));
                if !pairs.is_empty() {
                    let measures = measure_all(pairs, 0.0);
                    results.extend(rows_of(scenario.name, point.x as f64, &measures));
                }
            }
            continue;
        }
        for (pi, point) in scenario.points.iter().enumerate() {
            let sampler = sampler_of(point);
            let mut rng = SplitMix64::new(stream ^ ((pi as u64 + 1) << 16));
            let pairs: Vec<(Vec<u64>, Vec<u64>)> = (0..runs)
                .map(|_| (sampler.draw(&mut rng), sampler.draw(&mut rng)))
                .collect();
            let measures = measure_all(&pairs, 0.0);
            results.extend(rows_of(scenario.name, point.x as f64, &measures));
            if scenario.name == "II" && point.elements == 3200 {
                // The startup trade-off on the same instances.
                for startup in TRADEOFF_STARTUPS {
                    let measures = if startup == 0.0 {
                        measures.clone()
                    } else {
                        measure_all(&pairs, startup)
                    };
                    results.extend(rows_of(TRADEOFF, startup, &measures));
                }
            }
        }
    }
    // The trade-off rows last, in startup order (a stable sort).
    let key = |r: &(Row, Summary)| {
        let tradeoff = r.0.scenario == TRADEOFF;
        (tradeoff, if tradeoff { r.0.point } else { 0.0 })
    };
    results.sort_by(|a, b| {
        let (ka, kb) = (key(a), key(b));
        ka.0.cmp(&kb.0).then(ka.1.total_cmp(&kb.1))
    });
    let (rows, summaries) = results.into_iter().unzip();
    Ok(GenBlockExperiment {
        runs,
        seed,
        rows,
        summaries,
        scenario_v,
    })
}

/// The sampler of a point (the scenarios' points all admit lists).
fn sampler_of(point: &ScenarioPoint) -> BlockListSampler {
    BlockListSampler::new(point.processors, point.elements, point.largest)
        .expect("every point of the scenarios admits block lists")
}

/// Scenario V: instances drawn at its `(P, N, U)` and kept by Delta, up to `runs`
/// per point; returns them per point and the number of draws.
#[allow(clippy::type_complexity)]
fn draw_by_degree(
    scenario: &Scenario,
    runs: usize,
    seed: u64,
) -> (Vec<Vec<(Vec<u64>, Vec<u64>)>>, usize) {
    let sampler = sampler_of(&scenario.points[0]);
    let mut rng = SplitMix64::new(seed);
    let mut kept: Vec<Vec<(Vec<u64>, Vec<u64>)>> = vec![Vec::new(); scenario.points.len()];
    let cap = SCENARIO_V_DRAWS_PER_RUN.saturating_mul(runs);
    let mut draws = 0;
    while draws < cap && kept.iter().any(|k| k.len() < runs) {
        draws += 1;
        let source = sampler.draw(&mut rng);
        let target = sampler.draw(&mut rng);
        let g = GenBlockInstance::new(&source, &target, 0.0, 1.0).expect("drawn lists match");
        let delta = redistribution_graph(&g).degree as u64;
        if let Some(k) = scenario.points.iter().position(|pt| pt.x == delta) {
            if kept[k].len() < runs {
                kept[k].push((source, target));
            }
        }
    }
    (kept, draws)
}

/// The measures of one instance at one startup (`tau = 1`).
#[derive(Clone, Copy, Debug, Default)]
struct Measure {
    tb: f64,
    b: f64,
    lb: f64,
    /// `(cost, steps)` of paper and of best.
    paper: (f64, usize),
    best: (f64, usize),
}

impl Measure {
    /// `(cost, steps)` of a method.
    fn of(&self, method: Method) -> (f64, usize) {
        match method {
            Method::Paper => self.paper,
            Method::Best => self.best,
        }
    }
}

fn measure(source: &[u64], target: &[u64], startup: f64) -> Measure {
    let g = GenBlockInstance::new(source, target, startup, 1.0).expect("drawn lists match");
    let graph = redistribution_graph(&g);
    let paper = paper_schedule(&graph);
    let (best, _) = best_schedule(&graph, startup, 1.0, &SearchOptions::default());
    Measure {
        tb: plain_colouring(&graph).cost(startup, 1.0),
        b: step_cost(graph.degree, paper.bound, startup, 1.0),
        lb: lower_bound(&graph, startup, 1.0),
        paper: (paper.schedule.cost(startup, 1.0), paper.schedule.len()),
        best: (best.cost(startup, 1.0), best.len()),
    }
}

/// Measures every instance on up to 4 threads; results in input order.
fn measure_all(pairs: &[(Vec<u64>, Vec<u64>)], startup: f64) -> Vec<Measure> {
    let threads = std::thread::available_parallelism()
        .map(|n| n.get())
        .unwrap_or(1)
        .clamp(1, 4);
    let chunk = pairs.len().div_ceil(threads).max(1);
    std::thread::scope(|scope| {
        let handles: Vec<_> = pairs
            .chunks(chunk)
            .map(|part| {
                scope.spawn(move || {
                    part.iter()
                        .map(|(s, t)| measure(s, t, startup))
                        .collect::<Vec<_>>()
                })
            })
            .collect();
        handles
            .into_iter()
            .flat_map(|h| h.join().expect("a measuring thread panicked"))
            .collect()
    })
}

/// The rows and summaries of one point, paper then best.
fn rows_of(scenario: &'static str, point: f64, measures: &[Measure]) -> Vec<(Row, Summary)> {
    let n = measures.len().max(1) as f64;
    let mean = |f: &dyn Fn(&Measure) -> f64| measures.iter().map(f).sum::<f64>() / n;
    let (tb, b, lb) = (mean(&|m| m.tb), mean(&|m| m.b), mean(&|m| m.lb));
    Method::ALL
        .into_iter()
        .map(|method| {
            let ta = mean(&|m| m.of(method).0);
            let row = Row {
                scenario,
                point,
                method,
                tb,
                ta,
                b,
                r: if tb > 0.0 { (tb - ta) / tb } else { 0.0 },
                lower_bound: lb,
            };
            let summary = Summary {
                scenario,
                point,
                method,
                instances: measures.len(),
                steps: mean(&|m| m.of(method).1 as f64),
                cost_over_lower_bound: mean(&|m| {
                    if m.lb > 0.0 {
                        m.of(method).0 / m.lb
                    } else {
                        1.0
                    }
                }),
                mean_r: mean(&|m| {
                    if m.tb > 0.0 {
                        (m.tb - m.of(method).0) / m.tb
                    } else {
                        0.0
                    }
                }),
            };
            (row, summary)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scenario_points_admit_lists() {
        for scenario in scenarios() {
            for point in &scenario.points {
                assert!(
                    BlockListSampler::new(point.processors, point.elements, point.largest).is_ok()
                );
            }
        }
    }

    #[test]
    fn no_runs_is_an_error() {
        assert_eq!(run(0, 1).unwrap_err(), ExperimentError::NoRuns);
    }
}
