//! The ring paper's section 7 study: redistribution policies on iterative
//! applications.
//!
//! For every ring size and draw, `p` hosts are drawn from a platform, their
//! speeds change over the run (the paper's two random changes per processor, or
//! given speed profiles), and each policy of [`policies`] runs on the same
//! [`Scenario`] at every cost ratio ([`RATIO_MEANING`]). The table holds, per
//! ring size, ratio and policy, the means over the draws: time, time normalised
//! to `none` on the same draw, and redistributions that moved data.
//!
//! A second engine may re-time every run (the CLI's `--engine simgrid`): the
//! driver calls a [`Retime`] hook with the simulator and the run and averages
//! its times beside the built-in ones.
//!
//! ```
//! use std::convert::Infallible;
//! use hetbal::experiment::ring_iterative::{paper_platform, run, Settings};
//! use hetbal::ring::RingKind;
//!
//! let settings = Settings {
//!     rings: vec![4],
//!     ratios: vec![1.0, 10.0],
//!     draws: 2,
//!     iterations: 20,
//!     items: 100,
//!     border_items: 0,
//!     kind: RingKind::Bidirectional,
//!     spread: 3.0,
//!     traces: None,
//!     seed: 2004,
//! };
//! let platform = paper_platform(settings.seed);
//! let mut steps = 0;
//! let table = run::<Infallible>(&platform, &settings, None, &mut |_, _| steps += 1).unwrap();
//! assert_eq!(steps, 2 * 2); // one per draw and ratio
//! assert_eq!(table.rows.len(), 2 * 8); // one per ratio and policy
//! let none = table.row(4, 1.0, "none").unwrap();
//! assert_eq!(none.normalized_time, 1.0);
//! // No policy beats the offline best.
//! let offline = table.row(4, 1.0, "offline-best").unwrap().normalized_time;
//! assert!(table.rows.iter().filter(|r| r.ratio == 1.0).all(|r| r.normalized_time >= offline * (1.0 - 1e-12)));
//! ```

use std::convert::Infallible;
use std::fmt;

use serde::Serialize;

use super::Document;

use crate::balance::{balanced_targets, BalanceError};
use crate::iterative::{
    draw_hosts, paper_speed_changes, Policy, Run, Scenario, SimulationError, Simulator,
    SpeedProfile,
};
use crate::mapping::{ring_costs, MappingError};
use crate::platform::generate::{tiers, TiersOptions};
use crate::platform::Platform;
use crate::ring::RingKind;

/// What the ratio means (the experiment tables print it).
pub const RATIO_MEANING: &str = "ratio = cost of one redistribution / time of one iteration: \
the communication scale is set so that the fixed-1 redistribution (after the middle \
iteration, from the initial balance) costs `ratio` times the first iteration \
(borders included). Large ratio = expensive redistributions (the paper's ratio 10, \
where none is best); small ratio = cheap ones (the paper's ratio 1).";

/// The experiment's settings.
#[derive(Clone, Debug, PartialEq)]
pub struct Settings {
    /// Ring sizes (each >= 2 and at most the platform's hosts).
    pub rings: Vec<usize>,
    /// Cost ratios ([`RATIO_MEANING`]; each finite and > 0).
    pub ratios: Vec<f64>,
    /// Random draws per ring size (hosts and speed changes; >= 1).
    pub draws: u64,
    /// Iterations of the application (>= 2).
    pub iterations: u32,
    /// Items shared by the processors (at least one per processor).
    pub items: u64,
    /// Items exchanged with each neighbour after every iteration.
    pub border_items: u64,
    /// Ring kind whose planner prices the redistributions.
    pub kind: RingKind,
    /// Largest factor of the paper's random speed changes (finite, >= 1).
    pub spread: f64,
    /// Speed profile of every host of the platform, in the platform's order;
    /// `None`: the paper's random changes.
    pub traces: Option<Vec<SpeedProfile>>,
    /// Seed of the random draws.
    pub seed: u64,
}

/// One row of the table: a policy on one ring size at one ratio, averaged over
/// the draws. Serialises as a row of formats.md's "Experiment tables"; the
/// fields are in the alphabetical order of their names there (the order the
/// JSON document has always printed them in).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Row {
    /// Mean of time / time of `none` on the same draw.
    pub normalized_time: f64,
    /// Policy name ([`Policy::name`]).
    pub policy: String,
    /// Cost of a redistribution / time of an iteration.
    pub ratio: f64,
    /// Mean number of redistributions that moved data.
    pub redistributions: f64,
    /// Processors in the ring.
    pub ring: usize,
    /// With a [`Retime`] hook: mean of its time / its time of `none` on the same
    /// draw (`simgrid_normalized_time` in files).
    #[serde(
        rename = "simgrid_normalized_time",
        skip_serializing_if = "Option::is_none"
    )]
    pub retimed_normalized: Option<f64>,
    /// With a [`Retime`] hook: mean time of the same runs under it (`simgrid_time`
    /// in files: the CLI's second engine is SimGrid).
    #[serde(rename = "simgrid_time", skip_serializing_if = "Option::is_none")]
    pub retimed: Option<f64>,
    /// Mean time of the run.
    pub time: f64,
}

/// The experiment's JSON document: what `hetbal experiment ring-iterative
/// --json` prints, the rows but `profitability`'s (a rule shown in the text
/// table only). The fields of [`RingIterativeParameters`] and [`Row`] are in
/// alphabetical order.
pub type RingIterativeDocument<'a> = Document<RingIterativeParameters<'a>, Vec<&'a Row>>;

/// The `parameters` of a [`RingIterativeDocument`].
#[derive(Clone, Debug, Serialize)]
pub struct RingIterativeParameters<'a> {
    /// Items exchanged with each neighbour after every iteration.
    pub border_items: u64,
    /// Random draws per ring size.
    pub draws: u64,
    /// Who timed the runs (the CLI's `builtin` or `simgrid`).
    pub engine: &'a str,
    /// Items shared by the processors.
    pub items: u64,
    /// Iterations of the application.
    pub iterations: u32,
    /// Ring kind whose planner priced the redistributions.
    pub kind: String,
    /// The second engine's network model, when it re-timed the runs.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub model: Option<&'a str>,
    /// What the ratio means ([`RATIO_MEANING`]).
    pub ratio_meaning: &'static str,
    /// Seed of the draws.
    pub seed: u64,
    /// Where the speed changes come from: trace files or the paper's random
    /// changes.
    pub speeds: &'static str,
    /// Largest factor of the random speed changes.
    pub spread: f64,
}

/// The experiment's result: rows by ring size, then ratio, then policy (in the
/// order of [`policies`]).
#[derive(Clone, Debug, PartialEq)]
pub struct Table {
    /// The ring sizes, as given.
    pub rings: Vec<usize>,
    /// The ratios, as given.
    pub ratios: Vec<f64>,
    /// The rows.
    pub rows: Vec<Row>,
}

/// How the adaptive policy fares over the whole table.
#[derive(Clone, Debug, PartialEq)]
pub struct Standing {
    /// Largest `adaptive / best fixed - 1` over the points (negative: better
    /// everywhere; `-inf` for an empty table).
    pub worst_excess: f64,
    /// The ring size where the worst excess is reached.
    pub worst_ring: usize,
    /// The ratio where the worst excess is reached.
    pub worst_ratio: f64,
    /// The points (ring size, ratio) where the adaptive policy is strictly better
    /// than `none` and every `fixed-N`.
    pub wins: Vec<(usize, f64)>,
    /// Largest `adaptive / offline best - 1` (0 at least).
    pub offline_gap: f64,
}

impl Table {
    /// The JSON document of the table run with `settings`: `engine` names who
    /// timed the runs and `model` the second engine's network model (give it
    /// only when a [`Retime`] hook re-timed them).
    ///
    /// Complexity: O(rows).
    ///
    /// ```
    /// use hetbal::experiment::ring_iterative::{Settings, Table};
    /// use hetbal::ring::RingKind;
    /// let settings = Settings {
    ///     rings: vec![4], ratios: vec![1.0], draws: 1, iterations: 20, items: 100,
    ///     border_items: 0, kind: RingKind::Bidirectional, spread: 3.0, traces: None, seed: 1,
    /// };
    /// let table = Table { rings: vec![4], ratios: vec![1.0], rows: Vec::new() };
    /// let document = table.document(&settings, "builtin", None);
    /// assert_eq!(document.parameters.kind, "bidirectional");
    /// assert_eq!(document.parameters.speeds, "paper: two random changes per processor");
    /// ```
    pub fn document<'a>(
        &'a self,
        settings: &Settings,
        engine: &'a str,
        model: Option<&'a str>,
    ) -> RingIterativeDocument<'a> {
        Document {
            experiment: "ring-iterative",
            parameters: RingIterativeParameters {
                border_items: settings.border_items,
                draws: settings.draws,
                engine,
                items: settings.items,
                iterations: settings.iterations,
                kind: settings.kind.to_string(),
                model,
                ratio_meaning: RATIO_MEANING,
                seed: settings.seed,
                speeds: match settings.traces {
                    Some(_) => "trace files",
                    None => "paper: two random changes per processor",
                },
                spread: settings.spread,
            },
            rows: self
                .rows
                .iter()
                .filter(|r| r.policy != "profitability")
                .collect(),
        }
    }

    /// The row of `policy` on rings of `ring` at `ratio`, if any. O(rows).
    pub fn row(&self, ring: usize, ratio: f64, policy: &str) -> Option<&Row> {
        self.rows
            .iter()
            .find(|r| r.ring == ring && r.ratio == ratio && r.policy == policy)
    }

    /// The best normalised time of `none` and the `fixed-N` schemes at one point
    /// (infinite if the table has none there). O(rows).
    pub fn best_fixed(&self, ring: usize, ratio: f64) -> f64 {
        self.rows
            .iter()
            .filter(|r| r.ring == ring && r.ratio == ratio)
            .filter(|r| r.policy == "none" || r.policy.starts_with("fixed-"))
            .map(|r| r.normalized_time)
            .fold(f64::INFINITY, f64::min)
    }

    /// The adaptive policy's standing against the fixed schemes and the offline
    /// best. O(points · rows).
    pub fn standing(&self) -> Standing {
        let mut standing = Standing {
            worst_excess: f64::NEG_INFINITY,
            worst_ring: 0,
            worst_ratio: 0.0,
            wins: Vec::new(),
            offline_gap: 0.0,
        };
        for &ring in &self.rings {
            for &ratio in &self.ratios {
                let here = |name: &str| {
                    self.row(ring, ratio, name)
                        .map_or(f64::NAN, |r| r.normalized_time)
                };
                let excess = here("adaptive") / self.best_fixed(ring, ratio) - 1.0;
                if excess > standing.worst_excess {
                    (
                        standing.worst_excess,
                        standing.worst_ring,
                        standing.worst_ratio,
                    ) = (excess, ring, ratio);
                }
                if excess < -1e-9 {
                    standing.wins.push((ring, ratio));
                }
                standing.offline_gap = standing
                    .offline_gap
                    .max(here("adaptive") / here("offline-best") - 1.0);
            }
        }
        standing
    }
}

/// Re-times one run of the simulator with a second engine (same loads, same
/// redistributions): its time of the run.
pub type Retime<'a, E> = dyn FnMut(&Simulator, &Run) -> Result<f64, E> + 'a;

/// Why the experiment could not run. `E` is the error of the [`Retime`] hook.
#[derive(Clone, Debug, PartialEq)]
pub enum RingIterativeError<E = Infallible> {
    /// A ring size below 2.
    RingTooSmall {
        /// The size.
        processors: usize,
    },
    /// A ratio that is not finite and > 0.
    InvalidRatio {
        /// The ratio.
        ratio: f64,
    },
    /// No draws.
    NoDraws,
    /// Fewer than 2 iterations.
    TooFewIterations {
        /// The iterations asked.
        iterations: u32,
    },
    /// A spread that is not finite and >= 1.
    InvalidSpread {
        /// The spread.
        spread: f64,
    },
    /// A ring larger than the platform.
    NotEnoughHosts {
        /// The ring size.
        processors: usize,
        /// The platform's hosts.
        hosts: usize,
    },
    /// Fewer items than processors.
    NotEnoughItems {
        /// The ring size.
        processors: usize,
        /// The items.
        items: u64,
    },
    /// Speed profiles that are not one per host.
    TracesMismatch {
        /// Profiles given.
        traces: usize,
        /// Hosts of the platform.
        hosts: usize,
    },
    /// A drawn host has no route to a ring neighbour (or a free one).
    NoRoute {
        /// The host.
        host: String,
    },
    /// The initial balance cannot be computed.
    Balance(BalanceError),
    /// The simulator refused a scenario or a ratio, or a run failed.
    Simulation {
        /// Ring size.
        ring: usize,
        /// Draw.
        draw: u64,
        /// The ratio, once set.
        ratio: Option<f64>,
        /// The policy, for a run.
        policy: Option<String>,
        /// The simulator's error (boxed: it is large, and the other errors small).
        error: Box<SimulationError>,
    },
    /// The [`Retime`] hook failed.
    Retime {
        /// Ring size.
        ring: usize,
        /// Draw.
        draw: u64,
        /// Ratio.
        ratio: f64,
        /// Policy.
        policy: String,
        /// The hook's error.
        error: E,
    },
}

impl<E> RingIterativeError<E> {
    /// The field of [`Settings`] at fault, for the errors of [`check`]: their
    /// messages start with that name, so a front end can put its own spelling of
    /// the setting before them.
    pub fn setting(&self) -> Option<&'static str> {
        use RingIterativeError::*;
        match self {
            RingTooSmall { .. } | NotEnoughHosts { .. } => Some("rings"),
            InvalidRatio { .. } => Some("ratios"),
            NoDraws => Some("draws"),
            TooFewIterations { .. } => Some("iterations"),
            InvalidSpread { .. } => Some("spread"),
            NotEnoughItems { .. } => Some("items"),
            TracesMismatch { .. } => Some("traces"),
            NoRoute { .. } | Balance(_) | Simulation { .. } | Retime { .. } => None,
        }
    }
}

impl<E: fmt::Display> fmt::Display for RingIterativeError<E> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        use RingIterativeError::*;
        match self {
            RingTooSmall { processors } => write!(
                f,
                "rings: a ring of {processors} processors: every ring needs at least 2 processors"
            ),
            InvalidRatio { ratio } => write!(f, "ratios {ratio}: every ratio must be finite and > 0"),
            NoDraws => f.write_str("draws must be at least 1"),
            TooFewIterations { .. } => f.write_str(
                "iterations must be at least 2 (redistributions happen between iterations)",
            ),
            InvalidSpread { spread } => write!(f, "spread {spread}: must be a finite factor >= 1"),
            NotEnoughHosts { processors, hosts } => write!(
                f,
                "rings: a ring of {processors} processors needs {processors} hosts; the platform has {hosts}"
            ),
            NotEnoughItems { processors, items } => write!(
                f,
                "items {items}: a ring of {processors} processors needs at least one item each"
            ),
            TracesMismatch { traces, hosts } => write!(
                f,
                "traces: {traces} speed profiles for {hosts} hosts: give one per host of the platform"
            ),
            NoRoute { host } => write!(
                f,
                "hosts {host} and its neighbours have no route (or a free one) on the platform"
            ),
            Balance(e) => write!(f, "{e}"),
            Simulation {
                ring,
                draw,
                ratio,
                policy,
                error,
            } => {
                write!(f, "ring of {ring}, draw {draw}")?;
                if let Some(ratio) = ratio {
                    write!(f, ", ratio {}", crate::shown(*ratio))?;
                }
                if let Some(policy) = policy {
                    write!(f, ", {policy}")?;
                }
                write!(f, ": {error}")
            }
            Retime {
                ring,
                draw,
                ratio,
                policy,
                error,
            } => write!(
                f,
                "ring of {ring}, draw {draw}, ratio {}, {policy}: {error}",
                crate::shown(*ratio)
            ),
        }
    }
}

impl<E: fmt::Debug + fmt::Display> std::error::Error for RingIterativeError<E> {}

/// The policies compared, in table order: `none`, `fixed-1`, `fixed-4`,
/// `fixed-9`, `fixed-19` (the paper's schemes), `profitability`, `adaptive`,
/// `offline-best`.
///
/// ```
/// let names: Vec<String> = hetbal::experiment::ring_iterative::policies()
///     .iter().map(|p| p.name()).collect();
/// assert_eq!(names[0], "none");
/// assert_eq!(names.len(), 8);
/// ```
pub fn policies() -> Vec<Policy> {
    let mut list = vec![Policy::Never];
    for r in [1, 4, 9, 19] {
        list.push(Policy::Fixed { redistributions: r });
    }
    list.push(Policy::Profitability);
    list.push(Policy::Adaptive);
    list.push(Policy::OfflineBest);
    list
}

/// The paper's platform: a generated WAN/MAN/LAN tree of 90 hosts (3 WAN routers,
/// 2 MANs each, 3 LANs each, 5 hosts per LAN), a unit of data being 1 MB.
///
/// Complexity: O(h²) for the 90 hosts' routes.
///
/// ```
/// let platform = hetbal::experiment::ring_iterative::paper_platform(2004);
/// assert_eq!(platform.len(), 90);
/// ```
pub fn paper_platform(seed: u64) -> Platform {
    let options = TiersOptions {
        wan: 3,
        man_per_wan: 2,
        lan_per_man: 3,
        hosts_per_lan: 5,
        ..TiersOptions::default()
    };
    tiers(seed, &options)
        .expect("the paper's tiers options are valid")
        .with_unit_bytes(1e6)
        .expect("1e6 bytes is a valid unit of data")
}

/// Checks the settings against the platform.
///
/// # Errors
/// The first setting out of range (see [`RingIterativeError::setting`]).
///
/// Complexity: O(rings + ratios).
pub fn check<E>(settings: &Settings, platform: &Platform) -> Result<(), RingIterativeError<E>> {
    use RingIterativeError::*;
    let s = settings;
    if let Some(&processors) = s.rings.iter().find(|&&p| p < 2) {
        return Err(RingTooSmall { processors });
    }
    if let Some(&ratio) = s.ratios.iter().find(|r| !(r.is_finite() && **r > 0.0)) {
        return Err(InvalidRatio { ratio });
    }
    if s.draws == 0 {
        return Err(NoDraws);
    }
    if s.iterations < 2 {
        return Err(TooFewIterations {
            iterations: s.iterations,
        });
    }
    if !(s.spread.is_finite() && s.spread >= 1.0) {
        return Err(InvalidSpread { spread: s.spread });
    }
    if let Some(traces) = &s.traces {
        if traces.len() != platform.len() {
            return Err(TracesMismatch {
                traces: traces.len(),
                hosts: platform.len(),
            });
        }
    }
    if let Some(&processors) = s.rings.iter().find(|&&p| p > platform.len()) {
        return Err(NotEnoughHosts {
            processors,
            hosts: platform.len(),
        });
    }
    if let Some(&processors) = s.rings.iter().find(|&&p| s.items < p as u64) {
        return Err(NotEnoughItems {
            processors,
            items: s.items,
        });
    }
    Ok(())
}

/// The seed of one draw: every (ring size, draw) pair gets its own.
fn draw_seed(seed: u64, ring: usize, draw: u64) -> u64 {
    seed ^ draw.wrapping_mul(0x2545_F491_4F6C_DD1D) ^ (ring as u64).wrapping_mul(0x9E37_79B9)
}

/// The scenario of one draw: `ring` hosts drawn from the platform in ring order,
/// their speeds and links, the items balanced for the initial speeds, the speed
/// profiles (the hosts' traces or the paper's random changes).
///
/// # Errors
/// [`RingIterativeError::NoRoute`] when a host has no route (or a free one) to a
/// neighbour; [`RingIterativeError::Balance`]. The settings are not checked
/// ([`check`]).
///
/// Complexity: O(hosts + ring).
///
/// ```
/// use hetbal::experiment::ring_iterative::{draw_scenario, paper_platform, Settings};
/// use hetbal::ring::RingKind;
/// let settings = Settings {
///     rings: vec![8], ratios: vec![1.0], draws: 1, iterations: 100, items: 1000,
///     border_items: 0, kind: RingKind::Bidirectional, spread: 3.0, traces: None, seed: 1,
/// };
/// let scenario = draw_scenario::<std::convert::Infallible>(&paper_platform(1), &settings, 8, 0).unwrap();
/// assert_eq!(scenario.initial_loads.iter().sum::<u64>(), 1000);
/// ```
pub fn draw_scenario<E>(
    platform: &Platform,
    settings: &Settings,
    ring: usize,
    draw: u64,
) -> Result<Scenario, RingIterativeError<E>> {
    let s = settings;
    let hosts = draw_hosts(draw_seed(s.seed, ring, draw) ^ 0xA5A5, platform.len(), ring);
    let (c_succ, c_pred) = ring_costs(platform, &hosts).map_err(|e| match e {
        MappingError::NoRoute { from, .. } => RingIterativeError::NoRoute { host: from },
        other => unreachable!("drawn hosts are distinct platform hosts: {other}"),
    })?;
    if let Some(k) = (0..ring).find(|&k| !(c_succ[k] > 0.0 && c_pred[k] > 0.0)) {
        return Err(RingIterativeError::NoRoute {
            host: platform.name(hosts[k]).to_string(),
        });
    }
    let time_per_item: Vec<f64> = hosts.iter().map(|&h| platform.w(h)).collect();
    // Initial loads proportional to the initial speeds (the paper's start).
    let initial_loads = balanced_targets(s.items, &time_per_item)
        .map_err(RingIterativeError::Balance)?
        .targets;
    let profiles = match &s.traces {
        Some(all) => hosts.iter().map(|&h| all[h].clone()).collect(),
        None => paper_speed_changes(draw_seed(s.seed, ring, draw), ring, s.iterations, s.spread),
    };
    Ok(Scenario {
        kind: s.kind,
        time_per_item,
        c_succ,
        c_pred,
        border_items: s.border_items,
        iterations: s.iterations,
        initial_loads,
        profiles,
        comm_scale: 1.0,
    })
}

/// The sums over the draws of one (ring size, ratio, policy).
#[derive(Clone, Copy, Default)]
struct Sums {
    time: f64,
    normalized: f64,
    redistributions: f64,
    retimed: f64,
    retimed_normalized: f64,
}

/// Runs the experiment: for each ring size and draw, [`draw_scenario`]; for each
/// ratio, the communication scale set so that the fixed-1 redistribution costs
/// `ratio` first iterations ([`Simulator::set_ratio`] after the middle
/// iteration); every policy of [`policies`] run and, with `retime`, re-timed.
///
/// # Arguments
/// * `platform` - the hosts to draw the rings from;
/// * `retime` - a second engine, or `None` (the rows' `retimed` fields stay empty);
/// * `progress` - called with (steps done, steps in all) after every (ring size,
///   draw, ratio).
///
/// # Errors
/// [`check`]'s, [`draw_scenario`]'s, the simulator's (a ratio out of reach with
/// borders, a planning failure) and the hook's, with the ring size, draw, ratio
/// and policy where they happened.
///
/// # Complexity
/// rings · draws · (scenario + ratios · policies · run), a run being
/// [`Simulator::run`]'s (the offline best: O(K² + E²·n) for K iterations and E
/// speed epochs), plus the hook.
pub fn run<E>(
    platform: &Platform,
    settings: &Settings,
    mut retime: Option<&mut Retime<'_, E>>,
    progress: &mut dyn FnMut(u64, u64),
) -> Result<Table, RingIterativeError<E>> {
    check(settings, platform)?;
    let s = settings;
    let policies = policies();
    let total = s.rings.len() as u64 * s.draws * s.ratios.len() as u64;
    let mut done = 0;
    let mut sums = vec![vec![vec![Sums::default(); policies.len()]; s.ratios.len()]; s.rings.len()];
    let reference_point = s.iterations / 2;
    for (ri, &ring) in s.rings.iter().enumerate() {
        for draw in 0..s.draws {
            let simulation = |ratio, policy, error| RingIterativeError::Simulation {
                ring,
                draw,
                ratio,
                policy,
                error: Box::new(error),
            };
            let scenario = draw_scenario(platform, s, ring, draw)?;
            let mut simulator = Simulator::new(scenario).map_err(|e| simulation(None, None, e))?;
            for (ti, &ratio) in s.ratios.iter().enumerate() {
                simulator
                    .set_ratio(ratio, reference_point)
                    .map_err(|e| simulation(Some(ratio), None, e))?;
                let (mut never, mut retimed_never) = (f64::NAN, f64::NAN);
                for (pi, policy) in policies.iter().enumerate() {
                    let run = simulator
                        .run(policy)
                        .map_err(|e| simulation(Some(ratio), Some(policy.name()), e))?;
                    let retimed = match retime.as_mut() {
                        Some(retime) => retime(&simulator, &run).map_err(|error| {
                            RingIterativeError::Retime {
                                ring,
                                draw,
                                ratio,
                                policy: policy.name(),
                                error,
                            }
                        })?,
                        None => f64::NAN,
                    };
                    if pi == 0 {
                        never = run.total_time;
                        retimed_never = retimed;
                    }
                    let sum = &mut sums[ri][ti][pi];
                    sum.time += run.total_time;
                    sum.normalized += run.total_time / never;
                    sum.redistributions += run.redistributions.len() as f64;
                    sum.retimed += retimed;
                    sum.retimed_normalized += retimed / retimed_never;
                }
                done += 1;
                progress(done, total);
            }
        }
    }
    let draws = s.draws as f64;
    let with_retime = |x: f64| retime.is_some().then_some(x / draws);
    let mut rows = Vec::new();
    for (ri, &ring) in s.rings.iter().enumerate() {
        for (ti, &ratio) in s.ratios.iter().enumerate() {
            for (pi, policy) in policies.iter().enumerate() {
                let sum = sums[ri][ti][pi];
                rows.push(Row {
                    ring,
                    ratio,
                    policy: policy.name(),
                    redistributions: sum.redistributions / draws,
                    time: sum.time / draws,
                    normalized_time: sum.normalized / draws,
                    retimed: with_retime(sum.retimed),
                    retimed_normalized: with_retime(sum.retimed_normalized),
                });
            }
        }
    }
    Ok(Table {
        rings: s.rings.clone(),
        ratios: s.ratios.clone(),
        rows,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn settings() -> Settings {
        Settings {
            rings: vec![3],
            ratios: vec![1.0],
            draws: 1,
            iterations: 10,
            items: 30,
            border_items: 0,
            kind: RingKind::Bidirectional,
            spread: 3.0,
            traces: None,
            seed: 5,
        }
    }

    #[test]
    fn settings_errors_name_the_setting() {
        let platform = paper_platform(1);
        let cases: Vec<(Settings, &str)> = vec![
            (
                Settings {
                    rings: vec![1],
                    ..settings()
                },
                "rings",
            ),
            (
                Settings {
                    ratios: vec![0.0],
                    ..settings()
                },
                "ratios",
            ),
            (
                Settings {
                    draws: 0,
                    ..settings()
                },
                "draws",
            ),
            (
                Settings {
                    iterations: 1,
                    ..settings()
                },
                "iterations",
            ),
            (
                Settings {
                    spread: 0.5,
                    ..settings()
                },
                "spread",
            ),
            (
                Settings {
                    rings: vec![91],
                    ..settings()
                },
                "rings",
            ),
            (
                Settings {
                    items: 2,
                    ..settings()
                },
                "items",
            ),
            (
                Settings {
                    traces: Some(vec![]),
                    ..settings()
                },
                "traces",
            ),
        ];
        for (s, name) in cases {
            let e = check::<Infallible>(&s, &platform).unwrap_err();
            assert_eq!(e.setting(), Some(name), "{e}");
            assert!(e.to_string().starts_with(name), "{e}");
        }
        assert!(check::<Infallible>(&settings(), &platform).is_ok());
    }

    #[test]
    fn the_hook_sees_every_run_and_its_errors_say_where() {
        let platform = paper_platform(1);
        let mut calls = 0;
        let mut hook = |_: &Simulator, run: &Run| {
            calls += 1;
            Ok::<f64, String>(2.0 * run.total_time)
        };
        let table = run(&platform, &settings(), Some(&mut hook), &mut |_, _| {}).unwrap();
        assert_eq!(calls, 8);
        for row in &table.rows {
            assert!((row.retimed.unwrap() - 2.0 * row.time).abs() <= 1e-9 * row.time);
            assert!((row.retimed_normalized.unwrap() - row.normalized_time).abs() < 1e-9);
        }
        let mut failing = |_: &Simulator, _: &Run| Err::<f64, String>("down".into());
        let e = run(&platform, &settings(), Some(&mut failing), &mut |_, _| {}).unwrap_err();
        assert_eq!(e.to_string(), "ring of 3, draw 0, ratio 1, none: down");
    }
}
