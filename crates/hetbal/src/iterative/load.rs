//! Processors whose time per iteration depends on the load, and the
//! [`Decider`] in closed loop on them.
//!
//! A [`LoadProfile`] is a processor's true compute time as a non-decreasing
//! function of its items: a GPU-like affine time with an overhead, a memory
//! cliff, cache steps, a measured table, or a sum of these. A
//! [`LoadScenario`] puts processors on a ring with a starting load and an
//! optional multiplicative noise (seeded: runs replay exactly), and
//! [`closed_loop`] runs a decider on it: every iteration each processor
//! reports its (noisy) compute time, the decider decides, and the loads
//! follow its targets. The run records, per iteration, the true step time of
//! the loads held and its gap to the true integer optimum ([`optimum`]:
//! [`crate::functional::balance`] on the profiles' exact time functions).
//!
//! ```
//! use hetbal::iterative::load::{closed_loop, LoadProfile, LoadScenario};
//! use hetbal::iterative::online::{Decider, DeciderModel};
//! use hetbal::iterative::Policy;
//! // P0 is fast up to 1000 items, then ten times slower per item (memory);
//! // P1 is steady.
//! let scenario = LoadScenario {
//!     name: "cliff".into(),
//!     profiles: vec![LoadProfile::cliff(1e-3, 1000, 1e-2), LoadProfile::Affine { overhead: 0.0, per_item: 2e-3 }],
//!     initial_loads: vec![1500, 1500],
//!     c_succ: vec![1e-6; 2],
//!     c_pred: Some(vec![1e-6; 2]),
//!     iterations: 20,
//!     noise: 0.0,
//!     seed: 1,
//! };
//! let decider = Decider::new(Policy::Profitability, vec![1e-6; 2], Some(vec![1e-6; 2])).unwrap();
//! let constant = closed_loop(&scenario, decider.clone()).unwrap();
//! let functional = closed_loop(&scenario, decider.with_model(DeciderModel::functional())).unwrap();
//! // One time per item keeps crossing the cliff; time functions settle.
//! assert!(constant.settled(0.05).is_none());
//! let settled = functional.settled(0.05).unwrap();
//! assert!(settled.iteration <= 4 && functional.final_gap() <= 0.05);
//! ```

use std::fmt;

use super::online::learning::balance_within;
use super::online::{DecideError, Decider};
use crate::functional::{Model, TimeFunction};
use crate::random::SplitMix64;

/// A processor's true compute time as a function of its load `x` (items);
/// every profile's time is 0 at no load and never decreases.
#[derive(Clone, Debug, PartialEq)]
pub enum LoadProfile {
    /// `overhead + per_item · x` for `x >= 1`: a GPU paying a launch and a
    /// transfer before any work, then fast per item.
    Affine {
        /// Seconds paid by any positive load (>= 0).
        overhead: f64,
        /// Seconds per item (>= 0).
        per_item: f64,
    },
    /// `per_item(x) · x`, the time per item of the whole load set by the
    /// first step whose bound holds it: `steps[k] = (bound, per_item)` applies
    /// to loads up to `bound` (bounds increasing, times per item
    /// non-decreasing), `beyond` past the last bound. One step is a memory
    /// cliff ([`LoadProfile::cliff`]), several are cache levels.
    Steps {
        /// `(largest load, seconds per item)`, bounds increasing.
        steps: Vec<(u64, f64)>,
        /// Seconds per item past the last bound.
        beyond: f64,
    },
    /// A measured table: `(load, seconds)` points, loads increasing and
    /// times non-decreasing, joined by straight lines from `(0, 0)`; past the
    /// last point the time grows at the last segment's slope.
    Table(Vec<(u64, f64)>),
    /// The sum of several profiles (a GPU's overhead and its memory cliff,
    /// say).
    Sum(Vec<LoadProfile>),
}

/// Why a load profile or scenario is invalid, or a closed loop failed.
#[derive(Clone, Debug, PartialEq)]
pub enum LoadError {
    /// A time, time per item or overhead is NaN, infinite or negative.
    Value {
        /// Which value.
        what: &'static str,
        /// The value given.
        value: f64,
    },
    /// Step bounds or table loads that do not increase, or times per item or
    /// table times that decrease (the time would decrease with the load).
    Order {
        /// Which list.
        what: &'static str,
        /// The index of the entry out of order.
        index: usize,
    },
    /// A table without points or a sum without terms.
    Empty {
        /// Which list.
        what: &'static str,
    },
    /// A per-processor list whose length is not the number of processors, or
    /// fewer than 2 processors, or a starting load of 0 or total overflow.
    Scenario {
        /// What is wrong.
        reason: String,
    },
    /// The decider failed.
    Decide(DecideError),
}

impl fmt::Display for LoadError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            LoadError::Value { what, value } => {
                write!(f, "{what} = {value}: it must be finite and >= 0")
            }
            LoadError::Order { what, index } => write!(
                f,
                "{what}[{index}] is out of order: loads must increase and times must not \
                 decrease (a time never decreases with the load)"
            ),
            LoadError::Empty { what } => write!(f, "{what} is empty"),
            LoadError::Scenario { reason } => write!(f, "invalid load scenario: {reason}"),
            LoadError::Decide(e) => write!(f, "the decider failed: {e}"),
        }
    }
}

impl std::error::Error for LoadError {}

/// Refuses a value that is NaN, infinite or negative.
fn finite(what: &'static str, value: f64) -> Result<(), LoadError> {
    if value.is_finite() && value >= 0.0 {
        Ok(())
    } else {
        Err(LoadError::Value { what, value })
    }
}

impl LoadProfile {
    /// A memory cliff: `per_item · x` up to `capacity` items, `beyond · x`
    /// past it (with `beyond` much larger than `per_item`: the share no longer
    /// fits). O(1).
    ///
    /// ```
    /// use hetbal::iterative::load::LoadProfile;
    /// let p = LoadProfile::cliff(1.0, 10, 5.0);
    /// assert_eq!((p.time(10), p.time(11)), (10.0, 55.0));
    /// ```
    pub fn cliff(per_item: f64, capacity: u64, beyond: f64) -> LoadProfile {
        LoadProfile::Steps {
            steps: vec![(capacity, per_item)],
            beyond,
        }
    }

    /// Checks the profile: values finite and >= 0, bounds and loads
    /// increasing, times per item and table times non-decreasing, tables and
    /// sums not empty.
    ///
    /// # Errors
    /// [`LoadError::Value`], [`LoadError::Order`] or [`LoadError::Empty`].
    ///
    /// # Complexity
    /// O(size of the profile).
    ///
    /// ```
    /// use hetbal::iterative::load::{LoadError, LoadProfile};
    /// assert!(LoadProfile::cliff(1.0, 10, 5.0).check().is_ok());
    /// let e = LoadProfile::cliff(5.0, 10, 1.0).check().unwrap_err();
    /// assert_eq!(e, LoadError::Order { what: "steps", index: 1 });
    /// ```
    pub fn check(&self) -> Result<(), LoadError> {
        match self {
            LoadProfile::Affine { overhead, per_item } => {
                finite("overhead", *overhead)?;
                finite("per_item", *per_item)
            }
            LoadProfile::Steps { steps, beyond } => {
                finite("beyond", *beyond)?;
                for (index, &(bound, t)) in steps.iter().enumerate() {
                    finite("steps", t)?;
                    if index > 0 && (bound <= steps[index - 1].0 || t < steps[index - 1].1) {
                        return Err(LoadError::Order {
                            what: "steps",
                            index,
                        });
                    }
                }
                if steps.last().is_some_and(|&(_, t)| *beyond < t) {
                    return Err(LoadError::Order {
                        what: "steps",
                        index: steps.len(),
                    });
                }
                Ok(())
            }
            LoadProfile::Table(points) => {
                if points.is_empty() {
                    return Err(LoadError::Empty { what: "table" });
                }
                for (index, &(load, t)) in points.iter().enumerate() {
                    finite("table", t)?;
                    let bad = if index == 0 {
                        load == 0
                    } else {
                        load <= points[index - 1].0 || t < points[index - 1].1
                    };
                    if bad {
                        return Err(LoadError::Order {
                            what: "table",
                            index,
                        });
                    }
                }
                Ok(())
            }
            LoadProfile::Sum(terms) => {
                if terms.is_empty() {
                    return Err(LoadError::Empty { what: "sum" });
                }
                terms.iter().try_for_each(LoadProfile::check)
            }
        }
    }

    /// The true compute time of `load` items (0 for no item). O(size of the
    /// profile) (a binary search for steps and tables).
    ///
    /// ```
    /// use hetbal::iterative::load::LoadProfile;
    /// let gpu = LoadProfile::Affine { overhead: 2.0, per_item: 0.5 };
    /// assert_eq!((gpu.time(0), gpu.time(4)), (0.0, 4.0));
    /// let table = LoadProfile::Table(vec![(10, 1.0), (20, 3.0)]);
    /// assert_eq!((table.time(5), table.time(15), table.time(30)), (0.5, 2.0, 5.0));
    /// ```
    pub fn time(&self, load: u64) -> f64 {
        if load == 0 {
            return 0.0;
        }
        let x = load as f64;
        match self {
            LoadProfile::Affine { overhead, per_item } => overhead + per_item * x,
            LoadProfile::Steps { steps, beyond } => {
                let k = steps.partition_point(|&(bound, _)| bound < load);
                steps.get(k).map_or(*beyond, |s| s.1) * x
            }
            LoadProfile::Table(points) => {
                let k = points.partition_point(|&(l, _)| l < load);
                let (x0, y0) = if k == 0 {
                    (0.0, 0.0)
                } else {
                    (points[k - 1].0 as f64, points[k - 1].1)
                };
                match points.get(k) {
                    Some(&(l, t)) if l == load => t,
                    Some(&(l, t)) => y0 + (t - y0) * (x - x0) / (l as f64 - x0),
                    None => {
                        // Past the last point: the last segment's slope.
                        let m = points.len();
                        let (xa, ya) = if m >= 2 {
                            (points[m - 2].0 as f64, points[m - 2].1)
                        } else {
                            (0.0, 0.0)
                        };
                        let (xb, yb) = (points[m - 1].0 as f64, points[m - 1].1);
                        yb + (yb - ya) / (xb - xa) * (x - xb)
                    }
                }
            }
            LoadProfile::Sum(terms) => terms.iter().map(|t| t.time(load)).sum(),
        }
    }

    /// The loads where the profile's integer times stop lying on one
    /// straight line (each such load and the next), in any order.
    fn breaks(&self, into: &mut Vec<u64>) {
        match self {
            LoadProfile::Affine { .. } => into.extend([1, 2]),
            LoadProfile::Steps { steps, .. } => {
                into.push(1);
                for &(bound, _) in steps {
                    into.extend([bound, bound.saturating_add(1), bound.saturating_add(2)]);
                }
            }
            LoadProfile::Table(points) => {
                into.push(1);
                for &(load, _) in points {
                    into.extend([load, load.saturating_add(1)]);
                }
            }
            LoadProfile::Sum(terms) => terms.iter().for_each(|t| t.breaks(into)),
        }
    }

    /// The profile as a [`TimeFunction`] (piecewise linear) equal to it at
    /// every integer load: points at every load where its slope or value
    /// jumps, and at the load after. `processor` names it in errors.
    ///
    /// # Errors
    /// The profile's [`LoadProfile::check`] errors; [`LoadError::Value`] for
    /// a profile whose times are all 0.
    ///
    /// # Complexity
    /// O(b log b) for a profile of b breaks.
    ///
    /// ```
    /// use hetbal::iterative::load::LoadProfile;
    /// let p = LoadProfile::Sum(vec![
    ///     LoadProfile::Affine { overhead: 2.0, per_item: 0.5 },
    ///     LoadProfile::cliff(1.0, 10, 5.0),
    /// ]);
    /// let f = p.time_function(0).unwrap();
    /// for x in 0..40 {
    ///     assert!((f.time(x) - p.time(x)).abs() < 1e-9);
    /// }
    /// ```
    pub fn time_function(&self, processor: usize) -> Result<TimeFunction, LoadError> {
        self.check()?;
        let mut loads = Vec::new();
        self.breaks(&mut loads);
        loads.sort_unstable();
        loads.dedup();
        let points: Vec<(u64, f64)> = loads.iter().map(|&x| (x, self.time(x))).collect();
        TimeFunction::new(processor, &points, Model::PiecewiseLinear).map_err(|_| {
            LoadError::Value {
                what: "time (all zero)",
                value: 0.0,
            }
        })
    }
}

/// The true optimum of a load scenario.
#[derive(Clone, Debug, PartialEq)]
pub struct Optimum {
    /// Items per processor (each >= 1, summing to the total).
    pub loads: Vec<u64>,
    /// The slowest processor's time with them: the least possible.
    pub time: f64,
}

/// The exact integer optimum of `min max_j t_j(x_j)` subject to `Σ_j x_j =
/// total` and every `x_j >= 1` (as the decider keeps every processor busy),
/// for the true times of `profiles`: [`crate::functional::balance`] on their
/// exact time functions ([`LoadProfile::time_function`]), then every
/// processor brought up to one item.
///
/// # Errors
/// The profiles' [`LoadProfile::check`] errors; [`LoadError::Scenario`] for
/// no profiles or fewer items than processors; [`LoadError::Decide`] when the
/// balance overflows.
///
/// # Complexity
/// That of [`crate::functional::balance`] on the profiles' breaks.
///
/// ```
/// use hetbal::iterative::load::{optimum, LoadProfile};
/// let gpu = LoadProfile::Affine { overhead: 2.0, per_item: 1e-3 };
/// let cpu = LoadProfile::Affine { overhead: 0.0, per_item: 1e-2 };
/// let best = optimum(1000, &[gpu, cpu]).unwrap();
/// assert_eq!(best.loads, vec![728, 272]);
/// assert!((best.time - 2.728).abs() < 1e-12);
/// ```
pub fn optimum(total: u64, profiles: &[LoadProfile]) -> Result<Optimum, LoadError> {
    if profiles.is_empty() || total < profiles.len() as u64 {
        return Err(LoadError::Scenario {
            reason: format!(
                "{total} items cannot give one to each of {} processors",
                profiles.len()
            ),
        });
    }
    let functions: Vec<TimeFunction> = profiles
        .iter()
        .enumerate()
        .map(|(i, p)| p.time_function(i))
        .collect::<Result<_, _>>()?;
    let loads = balance_within(total, &functions, None).map_err(LoadError::Decide)?;
    let time = step(profiles, &loads);
    Ok(Optimum { loads, time })
}

/// The slowest processor's true time with `loads`.
fn step(profiles: &[LoadProfile], loads: &[u64]) -> f64 {
    profiles
        .iter()
        .zip(loads)
        .map(|(p, &x)| p.time(x))
        .fold(0.0, f64::max)
}

/// Processors with load-dependent times on a ring, and how a closed loop runs
/// on them.
#[derive(Clone, Debug, PartialEq)]
pub struct LoadScenario {
    /// Its name in tables.
    pub name: String,
    /// Every processor's true time.
    pub profiles: Vec<LoadProfile>,
    /// Items held at the start (each >= 1).
    pub initial_loads: Vec<u64>,
    /// Seconds per item to the successor (for the decider's plans).
    pub c_succ: Vec<f64>,
    /// Seconds per item to the predecessor (`None`: unidirectional).
    pub c_pred: Option<Vec<f64>>,
    /// Iterations of the run (>= 1).
    pub iterations: u32,
    /// Relative noise on every reported time: each is multiplied by a factor
    /// drawn uniformly in `[1 - noise, 1 + noise]` (0: exact times; < 1).
    pub noise: f64,
    /// The noise's seed ([`SplitMix64`]).
    pub seed: u64,
}

/// One iteration of a closed loop.
#[derive(Clone, Debug, PartialEq)]
pub struct LoopIteration {
    /// Items per processor during it.
    pub loads: Vec<u64>,
    /// Its true step time (the slowest processor's time without noise).
    pub time: f64,
    /// `time / optimum - 1`.
    pub gap: f64,
    /// Whether the decider moved the items after it.
    pub moved: bool,
}

/// Where a closed loop settled within some gap of the optimum.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Settled {
    /// The first iteration (from 1) from which every iteration of the run is
    /// within the gap.
    pub iteration: u32,
    /// Moves made before it.
    pub moves: u32,
}

/// A closed loop's outcome.
#[derive(Clone, Debug, PartialEq)]
pub struct ClosedLoop {
    /// The true optimum.
    pub optimum: Optimum,
    /// Every iteration, in order.
    pub iterations: Vec<LoopIteration>,
    /// Moves made in the run.
    pub moves: u32,
}

impl ClosedLoop {
    /// Where the run settled within `gap` of the optimum (0.05: 5%): the first
    /// iteration from which every later one is within it, and the moves made
    /// before it; `None` when the last iteration is not within it. O(K) for K
    /// iterations.
    ///
    /// ```
    /// use hetbal::iterative::load::{ClosedLoop, LoopIteration, Optimum};
    /// let at = |gap: f64, moved| LoopIteration { loads: vec![], time: 1.0 + gap, gap, moved };
    /// let run = ClosedLoop {
    ///     optimum: Optimum { loads: vec![], time: 1.0 },
    ///     iterations: vec![at(0.5, true), at(0.01, true), at(0.2, true), at(0.04, false), at(0.0, false)],
    ///     moves: 3,
    /// };
    /// let s = run.settled(0.05).unwrap();
    /// assert_eq!((s.iteration, s.moves), (4, 3));
    /// assert_eq!(run.settled(0.001).unwrap().iteration, 5);
    /// ```
    pub fn settled(&self, gap: f64) -> Option<Settled> {
        let last_out = self.iterations.iter().rposition(|it| it.gap > gap);
        let first = last_out.map_or(0, |k| k + 1);
        if first >= self.iterations.len() {
            return None;
        }
        let moves = self.iterations[..first]
            .iter()
            .filter(|it| it.moved)
            .count();
        Some(Settled {
            iteration: first as u32 + 1,
            moves: moves as u32,
        })
    }

    /// The last iteration's gap to the optimum (0 for a run without
    /// iterations). O(1).
    pub fn final_gap(&self) -> f64 {
        self.iterations.last().map_or(0.0, |it| it.gap)
    }
}

/// Checks a scenario's lengths and values.
fn check_scenario(s: &LoadScenario) -> Result<u64, LoadError> {
    let n = s.profiles.len();
    let bad = |reason: String| Err(LoadError::Scenario { reason });
    if n < 2 {
        return bad(format!("a ring needs at least 2 processors, got {n}"));
    }
    if s.initial_loads.len() != n
        || s.c_succ.len() != n
        || s.c_pred.as_ref().is_some_and(|c| c.len() != n)
    {
        return bad(format!(
            "{n} profiles but {} initial loads, {} c_succ and {} c_pred (one per processor)",
            s.initial_loads.len(),
            s.c_succ.len(),
            s.c_pred.as_ref().map_or(n, Vec::len)
        ));
    }
    if s.initial_loads.contains(&0) {
        return bad("every initial load must be >= 1".into());
    }
    if s.iterations == 0 {
        return bad("iterations must be >= 1".into());
    }
    if !(s.noise.is_finite() && (0.0..1.0).contains(&s.noise)) {
        return bad(format!("noise = {}: it must be in [0, 1)", s.noise));
    }
    s.profiles.iter().try_for_each(LoadProfile::check)?;
    s.initial_loads
        .iter()
        .try_fold(0u64, |sum, &x| sum.checked_add(x))
        .ok_or(LoadError::Scenario {
            reason: "the initial loads' sum overflows 64 bits".into(),
        })
}

/// Runs `decider` in closed loop on `scenario`: in every iteration each
/// processor reports its true time at its load times the noise factor, the
/// decider decides with the iterations remaining, and when it redistributes
/// the loads become its targets. The decider's own links are used for its
/// plans (the scenario's `c_succ` and `c_pred` are those it should be given).
///
/// # Returns
/// The [`ClosedLoop`]: the optimum ([`optimum`]), every iteration's loads,
/// true time and gap, and the moves.
///
/// # Errors
/// [`LoadError::Scenario`] for lengths that do not match, no processors,
/// a load of 0, no iterations or a noise outside `[0, 1)`; the profiles'
/// [`LoadProfile::check`] errors; [`LoadError::Decide`] when the decider
/// fails.
///
/// # Complexity
/// K decisions for K iterations, plus the optimum.
///
/// # Example
/// See the [module's docs](self).
pub fn closed_loop(scenario: &LoadScenario, mut decider: Decider) -> Result<ClosedLoop, LoadError> {
    let total = check_scenario(scenario)?;
    let best = optimum(total, &scenario.profiles)?;
    let mut rng = SplitMix64::new(scenario.seed);
    let mut loads = scenario.initial_loads.clone();
    let mut iterations = Vec::with_capacity(scenario.iterations as usize);
    let mut moves = 0;
    for k in 1..=scenario.iterations {
        let seconds: Vec<f64> = scenario
            .profiles
            .iter()
            .zip(&loads)
            .map(|(p, &x)| {
                let factor = 1.0 + scenario.noise * (2.0 * rng.unit() - 1.0);
                // A processor reports a positive time even for a flat profile.
                (p.time(x) * factor).max(f64::MIN_POSITIVE)
            })
            .collect();
        let time = step(&scenario.profiles, &loads);
        let d = decider
            .observe(&loads, &seconds, u64::from(scenario.iterations - k))
            .map_err(LoadError::Decide)?;
        iterations.push(LoopIteration {
            loads: loads.clone(),
            time,
            gap: time / best.time - 1.0,
            moved: d.redistribute,
        });
        if d.redistribute {
            moves += 1;
            loads = d.targets;
        }
    }
    Ok(ClosedLoop {
        optimum: best,
        iterations,
        moves,
    })
}

/// The scenarios of the load-dependent study, on 4 or 8 processors with
/// equal starting loads, cheap links (1 µs per item) and 30 iterations:
/// `affine-gpu` (two GPUs with launch overheads, two CPUs), `memory-cliff`
/// (two processors whose time per item jumps past a capacity, two steady),
/// `cache-steps` (times per item rising by steps), `measured-table` (tables
/// of measured points), `mixture` (one of each on 8 processors, one a GPU
/// with a memory cliff), each exact and again with 1% noise (`-noise1%`;
/// seeded by `seed`).
///
/// # Complexity
/// O(1): twelve small scenarios.
///
/// ```
/// use hetbal::iterative::load::standard_scenarios;
/// let scenarios = standard_scenarios(1);
/// assert_eq!(scenarios.len(), 10);
/// assert_eq!(scenarios[0].name, "affine-gpu");
/// assert_eq!(scenarios[1].name, "affine-gpu-noise1%");
/// ```
pub fn standard_scenarios(seed: u64) -> Vec<LoadScenario> {
    let affine = |overhead: f64, per_item: f64| LoadProfile::Affine { overhead, per_item };
    let linear = |per_item: f64| affine(0.0, per_item);
    let gpu = vec![
        affine(0.5, 1e-4),
        affine(0.3, 2e-4),
        linear(1e-3),
        linear(2e-3),
    ];
    let cliff = vec![
        LoadProfile::cliff(1e-4, 1500, 2e-3),
        LoadProfile::cliff(2e-4, 2500, 3e-3),
        linear(5e-4),
        linear(1e-3),
    ];
    let steps = vec![
        LoadProfile::Steps {
            steps: vec![(500, 1e-4), (2000, 2e-4), (6000, 4e-4)],
            beyond: 8e-4,
        },
        LoadProfile::Steps {
            steps: vec![(1000, 1.5e-4), (4000, 3e-4)],
            beyond: 6e-4,
        },
        linear(5e-4),
        LoadProfile::Steps {
            steps: vec![(300, 2e-4)],
            beyond: 1e-3,
        },
    ];
    let table = vec![
        LoadProfile::Table(vec![
            (100, 0.05),
            (500, 0.12),
            (1000, 0.2),
            (2000, 0.5),
            (4000, 1.6),
        ]),
        LoadProfile::Table(vec![(200, 0.1), (1000, 0.4), (3000, 1.0), (6000, 3.5)]),
        LoadProfile::Table(vec![(1000, 0.5), (2000, 1.0), (5000, 2.6)]),
        LoadProfile::Table(vec![(500, 0.6), (2000, 2.0), (4000, 4.5)]),
    ];
    let mixture = vec![
        affine(0.5, 1e-4),
        LoadProfile::Sum(vec![affine(0.3, 1e-4), LoadProfile::cliff(0.0, 3000, 2e-3)]),
        LoadProfile::cliff(1e-4, 1500, 2e-3),
        cliff[1].clone(),
        steps[0].clone(),
        steps[1].clone(),
        table[0].clone(),
        linear(1e-3),
    ];
    let on = |name: &str, profiles: Vec<LoadProfile>, each: u64, noise: f64| {
        let n = profiles.len();
        LoadScenario {
            name: if noise > 0.0 {
                format!("{name}-noise1%")
            } else {
                name.to_string()
            },
            profiles,
            initial_loads: vec![each; n],
            c_succ: vec![1e-6; n],
            c_pred: Some(vec![1e-6; n]),
            iterations: 30,
            noise,
            seed,
        }
    };
    let mut scenarios = Vec::new();
    for (name, profiles, each) in [
        ("affine-gpu", gpu, 2000),
        ("memory-cliff", cliff, 2000),
        ("cache-steps", steps, 2000),
        ("measured-table", table, 2000),
        ("mixture", mixture, 2000),
    ] {
        scenarios.push(on(name, profiles.clone(), each, 0.0));
        scenarios.push(on(name, profiles, each, 0.01));
    }
    scenarios
}

#[cfg(test)]
mod tests;
