//! Plans under start-ups against today's plans: on random rings whose links pay a
//! start-up per message (1 to 10 times one item's cost), the start-up-aware plan
//! ([`plan`], `startup-batches`) against the papers' plan made without start-ups
//! and timed under the same start-ups ([`retime_with_startups`]): what a user of
//! the papers' planners would get on that network.
//!
//! Rings are full rebalances ([`full_rebalance`]): loads uniform in 1..=50, the
//! targets a random permutation of the loads, item costs uniform in [0.5, 2).
//!
//! # Example
//! ```
//! use hetbal::experiment::startups::{run, Settings};
//! use hetbal::ring::RingKind;
//!
//! let settings = Settings { sizes: vec![8], rings: 3, ..Settings::default() };
//! let result = run(&settings)?;
//! assert_eq!(result.rows.len(), 2); // unidirectional and bidirectional
//! let uni = &result.rows[0];
//! assert_eq!((uni.kind, uni.processors, uni.rings), (RingKind::Unidirectional, 8, 3));
//! assert!(uni.speedup.min >= 1.0); // never slower than the papers' plan
//! # Ok::<(), hetbal::experiment::startups::ExperimentError>(())
//! ```

use serde::Serialize;

use crate::experiment::Document;
use crate::random::SplitMix64;
use crate::ring::{
    plan, retime_with_startups, startup_lower_bound, PlanError, RingInstance, RingKind,
};

/// A full rebalance of `n` processors: loads uniform in 1..=50, targets a random
/// permutation of the loads (most processors' loads change), item costs uniform in
/// [0.5, 2) on every link (both directions on a bidirectional ring). The same seed
/// gives the same ring.
///
/// # Errors
/// [`ExperimentError::TooFewProcessors`] below 2 processors.
///
/// Complexity: O(n).
///
/// # Example
/// ```
/// use hetbal::experiment::startups::full_rebalance;
/// use hetbal::ring::RingKind;
/// let ring = full_rebalance(RingKind::Bidirectional, 100, 7)?;
/// assert_eq!(ring.len(), 100);
/// let mut loads = ring.loads().to_vec();
/// let mut targets = ring.targets().to_vec();
/// loads.sort();
/// targets.sort();
/// assert_eq!(loads, targets);
/// # Ok::<(), hetbal::experiment::startups::ExperimentError>(())
/// ```
pub fn full_rebalance(
    kind: RingKind,
    n: usize,
    seed: u64,
) -> Result<RingInstance, ExperimentError> {
    if n < 2 {
        return Err(ExperimentError::TooFewProcessors { processors: n });
    }
    let mut rng = SplitMix64::new(seed);
    let loads: Vec<u64> = (0..n).map(|_| 1 + rng.below_u64(50)).collect();
    let mut targets = loads.clone();
    for i in (1..n).rev() {
        targets.swap(i, rng.below(i + 1));
    }
    let c_succ: Vec<f64> = (0..n).map(|_| rng.range((0.5, 2.0))).collect();
    let ring = match kind {
        RingKind::Unidirectional => RingInstance::unidirectional(&loads, &targets, &c_succ),
        RingKind::Bidirectional => {
            let c_pred: Vec<f64> = (0..n).map(|_| rng.range((0.5, 2.0))).collect();
            RingInstance::bidirectional(&loads, &targets, &c_succ, &c_pred)
        }
    };
    Ok(ring.expect("a permutation of the loads balances, costs are in range"))
}

/// The same ring with a start-up on every link it uses: each link's item cost times
/// a factor uniform in `[low, high)`. The same seed gives the same start-ups.
///
/// Panics unless `0 <= low <= high` and both are finite.
///
/// Complexity: O(n).
///
/// # Example
/// ```
/// use hetbal::experiment::startups::{full_rebalance, with_random_startups};
/// use hetbal::ring::RingKind;
/// let ring = with_random_startups(&full_rebalance(RingKind::Unidirectional, 10, 1)?, (1.0, 10.0), 2);
/// for (l, c) in ring.l_succ().iter().zip(ring.c_succ()) {
///     assert!(*l >= *c && *l < 10.0 * c);
/// }
/// # Ok::<(), hetbal::experiment::startups::ExperimentError>(())
/// ```
pub fn with_random_startups(
    ring: &RingInstance,
    (low, high): (f64, f64),
    seed: u64,
) -> RingInstance {
    assert!(
        low.is_finite() && high.is_finite() && 0.0 <= low && low <= high,
        "start-up factors must satisfy 0 <= low <= high"
    );
    let mut rng = SplitMix64::new(seed);
    let mut factor = || {
        if high > low {
            rng.range((low, high))
        } else {
            low
        }
    };
    let l_succ: Vec<f64> = ring.c_succ().iter().map(|&c| c * factor()).collect();
    let l_pred: Vec<f64> = (ring.c_pred().iter())
        .map(|c| c.map_or(0.0, |c| c * factor()))
        .collect();
    ring.with_startups(&l_succ, &l_pred)
        .expect("finite start-ups >= 0 from finite costs")
}

/// The experiment's settings.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Settings {
    /// Ring sizes (processors), each at least 2.
    pub sizes: Vec<usize>,
    /// Random rings per size and kind (at least 1).
    pub rings: usize,
    /// Start-ups: each link's item cost times a factor uniform in this range.
    pub startup_factors: (f64, f64),
    /// Seed of the draws (the same seed draws the same rings).
    pub seed: u64,
}

impl Default for Settings {
    /// Sizes 8 to 1,000, 10 rings each, start-ups 1 to 10 item costs, seed 21.
    fn default() -> Self {
        Settings {
            sizes: vec![8, 16, 32, 64, 125, 250, 500, 1000],
            rings: 10,
            startup_factors: (1.0, 10.0),
            seed: 21,
        }
    }
}

/// A spread of values over the rings of a row.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct Spread {
    /// The least.
    pub min: f64,
    /// The geometric mean (the mean of ratios).
    pub mean: f64,
    /// The largest.
    pub max: f64,
}

impl Spread {
    fn of(values: &[f64]) -> Spread {
        let min = values.iter().copied().fold(f64::INFINITY, f64::min);
        let max = values.iter().copied().fold(f64::NEG_INFINITY, f64::max);
        let log_mean = values.iter().map(|v| v.ln()).sum::<f64>() / values.len() as f64;
        Spread {
            min,
            mean: log_mean.exp(),
            max,
        }
    }
}

/// One ring kind at one size.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct StartupRow {
    /// The ring kind.
    pub kind: RingKind,
    /// Processors per ring.
    pub processors: usize,
    /// Rings drawn.
    pub rings: usize,
    /// Makespan of today's plan timed under the start-ups over that of the
    /// start-up-aware plan (above 1: the start-up-aware plan is faster).
    pub speedup: Spread,
    /// Rings where the start-up planner's messages beat today's plan (on the others
    /// `plan` keeps today's plan, timed under the start-ups).
    pub messages_won: usize,
    /// The start-up-aware plan's makespan over the start-up lower bound.
    pub over_bound: Spread,
    /// Today's plan, timed under the start-ups, over the start-up lower bound.
    pub papers_over_bound: Spread,
}

/// What [`run`] returns.
#[derive(Clone, Debug, PartialEq)]
pub struct StartupExperiment {
    /// The settings it ran with.
    pub settings: Settings,
    /// A row per size, unidirectional then bidirectional.
    pub rows: Vec<StartupRow>,
}

impl StartupExperiment {
    /// The experiment's JSON document (formats.md, "Experiment tables").
    pub fn document(&self) -> Document<&Settings, &[StartupRow]> {
        Document {
            experiment: "startups",
            parameters: &self.settings,
            rows: &self.rows,
        }
    }
}

/// Why the experiment could not run.
#[derive(Clone, Debug, PartialEq)]
pub enum ExperimentError {
    /// `rings` was 0.
    NoRings,
    /// A size below 2 processors.
    TooFewProcessors {
        /// The size given.
        processors: usize,
    },
    /// The start-up factors are not `0 <= low <= high`, finite.
    BadFactors {
        /// The range given.
        factors: (f64, f64),
    },
    /// A planner failed (a defect: every valid ring is planned).
    Plan(PlanError),
}

impl std::fmt::Display for ExperimentError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ExperimentError::NoRings => write!(f, "at least 1 ring per size is needed"),
            ExperimentError::TooFewProcessors { processors } => {
                write!(
                    f,
                    "a ring of {processors} processors: rings have at least 2"
                )
            }
            ExperimentError::BadFactors {
                factors: (low, high),
            } => write!(
                f,
                "start-up factors {low}..{high}: they must be finite with 0 <= low <= high"
            ),
            ExperimentError::Plan(e) => write!(f, "planning failed: {e}"),
        }
    }
}

impl std::error::Error for ExperimentError {}

/// Runs the experiment: for each size and kind, `rings` random full rebalances with
/// random start-ups; each planned by [`plan`] (start-up aware) and by the papers'
/// planner on the ring without start-ups, timed under them. Every plan is
/// validated (by `plan`) and its makespan measured; the bound is
/// [`startup_lower_bound`].
///
/// # Errors
/// [`ExperimentError`] for bad settings.
///
/// # Complexity
/// Per ring, that of the planners: about O(n log n) for the start-up planner and
/// the bound, and the papers' planner's (list scheduling on bidirectional rings).
pub fn run(settings: &Settings) -> Result<StartupExperiment, ExperimentError> {
    run_with_progress(settings, |_| {})
}

/// [`run`], calling `progress(done)` after each ring (`done` rings so far, out of
/// `2 * sizes.len() * rings`): for progress bars.
///
/// # Errors
/// As [`run`].
pub fn run_with_progress(
    settings: &Settings,
    mut progress: impl FnMut(usize),
) -> Result<StartupExperiment, ExperimentError> {
    if settings.rings == 0 {
        return Err(ExperimentError::NoRings);
    }
    if let Some(&n) = settings.sizes.iter().find(|&&n| n < 2) {
        return Err(ExperimentError::TooFewProcessors { processors: n });
    }
    let (low, high) = settings.startup_factors;
    if !(low.is_finite() && high.is_finite() && 0.0 <= low && low <= high) {
        return Err(ExperimentError::BadFactors {
            factors: settings.startup_factors,
        });
    }
    let mut rng = SplitMix64::new(settings.seed);
    let mut rows = Vec::new();
    let mut done = 0;
    for kind in [RingKind::Unidirectional, RingKind::Bidirectional] {
        for &n in &settings.sizes {
            let (mut speedups, mut over, mut papers_over) = (vec![], vec![], vec![]);
            let mut messages_won = 0;
            for _ in 0..settings.rings {
                let papers_ring = full_rebalance(kind, n, rng.next_u64())?;
                let ring =
                    with_random_startups(&papers_ring, settings.startup_factors, rng.next_u64());
                let aware = plan(&ring, None).map_err(ExperimentError::Plan)?;
                // Today's plan: the same ring without its start-ups.
                let today = plan(&papers_ring, None).map_err(ExperimentError::Plan)?;
                let timed = retime_with_startups(&ring, &today.schedule()).makespan();
                let bound = startup_lower_bound(&ring).value;
                speedups.push(timed / aware.makespan);
                if aware.makespan < timed {
                    messages_won += 1;
                }
                over.push(aware.makespan / bound);
                papers_over.push(timed / bound);
                done += 1;
                progress(done);
            }
            rows.push(StartupRow {
                kind,
                processors: n,
                rings: settings.rings,
                speedup: Spread::of(&speedups),
                messages_won,
                over_bound: Spread::of(&over),
                papers_over_bound: Spread::of(&papers_over),
            });
        }
    }
    Ok(StartupExperiment {
        settings: settings.clone(),
        rows,
    })
}
