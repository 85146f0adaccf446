//! The functional model of the [`Decider`](super::Decider): every processor's
//! time learned on line as a [`TimeFunction`] of its load (see
//! [`DeciderModel::Functional`]).

use crate::balance::BalanceError;
use crate::functional::{balance, FunctionalError, Model, TimeFunction};

use super::DecideError;

/// How a [`Decider`](super::Decider) models each processor's compute time.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum DeciderModel {
    /// One time per item per processor: the last measured seconds over items
    /// (held within the tolerance). The decider's behaviour before time
    /// functions, unchanged, and the default.
    #[default]
    Constant,
    /// A [`TimeFunction`] per processor learned from every (load, compute
    /// seconds) it reported, with `Model` between the measured loads (see the
    /// [module's docs](super#learning-time-functions) for the history, the
    /// clipping of outliers, the noise rule and the exploration).
    Functional(Model),
}

impl DeciderModel {
    /// The functional model with piecewise-linear interpolation (the default
    /// interpolation). O(1).
    ///
    /// ```
    /// use hetbal::functional::Model;
    /// use hetbal::iterative::online::DeciderModel;
    /// assert_eq!(DeciderModel::functional(), DeciderModel::Functional(Model::PiecewiseLinear));
    /// ```
    pub fn functional() -> DeciderModel {
        DeciderModel::Functional(Model::PiecewiseLinear)
    }

    /// The model's name in experiment tables: `constant`, `functional` or
    /// `functional-cubic`. O(1).
    ///
    /// ```
    /// use hetbal::iterative::online::DeciderModel;
    /// assert_eq!(DeciderModel::Constant.name(), "constant");
    /// assert_eq!(DeciderModel::functional().name(), "functional");
    /// ```
    pub fn name(&self) -> &'static str {
        match self {
            DeciderModel::Constant => "constant",
            DeciderModel::Functional(Model::PiecewiseLinear) => "functional",
            DeciderModel::Functional(Model::MonotoneCubic) => "functional-cubic",
        }
    }
}

/// Distinct loads kept per processor; past it the two nearest merge.
pub const MAX_POINTS: usize = 32;
/// A point weighs at most this many observations: a repeated load is a
/// running mean that forgets, so that a slow drift is followed.
pub const MAX_WEIGHT: f64 = 8.0;
/// An observation more than this factor above the model's time at the next
/// measured load above it (or below the time at the next measured load below
/// it, divided by the factor) is clipped to that bound.
pub const CLIP_FACTOR: f64 = 2.0;
/// Two observations of a processor clipped in a row are a change of speed,
/// not noise: its history restarts from the second.
pub const CLIPS_TO_RESTART: u32 = 2;
/// Loads within this relative distance count as near for the noise spread.
pub const NEAR: f64 = 0.01;
/// A relative deviation of the time per item larger than this between equal
/// or near loads is no noise (a cliff between them, a change of speed) and
/// does not count in the spread. It is also the least growth of the time per
/// item across a segment that makes it a jump (see [`JUMP_SLOPE`]).
pub const NOT_NOISE: f64 = 0.25;
/// A segment between two adjacent measured loads `x0 < x1` holds a jump (a
/// cliff or a cache step) when the time per item grows across it by more
/// than [`NOT_NOISE`] (beyond noise), and either its slope exceeds
/// `JUMP_SLOPE` times the slope of the segment before `x0` (a smooth power
/// law `c x^d` over a doubling of the load has a ratio `2^d - 1`: 3 for a
/// square, 7 for a cube), or the time per item grows by more than
/// `1 + NOT_NOISE` times `(x1 / x0)^2` (faster than a cube's).
/// Linear interpolation across a jump is misleading (the balance would creep
/// towards the cliff one interpolation at a time), so the segment is modelled
/// as the search for the jump: see [`NARROW`].
pub const JUMP_SLOPE: f64 = 8.0;
/// A segment that is no jump but steeper than the next one (the function is
/// not convex there: a step inside, then the next slope) follows the next
/// segment's line extended back, after a step right after `x0`: above the
/// chord, and exact for a step followed by a straight line.
///
/// A jump segment at most this wide (relative to `x1`) is a step right after
/// `x0`: the loads inside cost `t(x1)` (pessimistic, the cliff is located).
/// A wider one is bisected: the time follows the slope before `x0` up to the
/// segment's middle (optimistic), then is `t(x1)` past it (pessimistic), so
/// that the balance either stays below the middle (it may probe there: each
/// probe halves the segment) or goes to `x1` at the latest.
pub const NARROW: f64 = 0.07;
/// The predicted gain must exceed this multiple of the measured noise spread.
pub const NOISE_MULTIPLE: f64 = 3.0;
/// Exploring moves (a target outside its processor's measured loads) the
/// functional decider takes at most by default.
pub const EXPLORATION_BUDGET: u32 = 6;

/// What the functional model has learned, after the last decision
/// ([`Decider::learning`](super::Decider::learning)).
#[derive(Clone, Debug, PartialEq)]
pub struct Learning {
    /// Every processor's fitted time function (from its history, as the last
    /// decision used it).
    pub functions: Vec<TimeFunction>,
    /// Distinct loads held per processor (at most [`MAX_POINTS`]).
    pub points: Vec<usize>,
    /// The measured noise: the largest, over the processors, mean relative
    /// deviation of the time per item between observations at equal or near
    /// loads (within 1%); 0 until some processor was measured twice there.
    pub noise: f64,
    /// Exploring moves taken (a target outside its processor's measured
    /// loads); at most the exploration budget.
    pub explorations: u32,
    /// Observations clipped as outliers so far.
    pub clipped: u64,
    /// For each processor, whether the last decision's target lies outside
    /// its measured loads (the move explores there).
    pub unmeasured: Vec<bool>,
    /// For each processor, whether the fitted functions' optimum lay beyond
    /// the step allowed into unmeasured loads (above twice its largest measured
    /// load or below half its smallest) and the target was limited to it.
    pub limited: Vec<bool>,
}

/// A measured load: the running mean of its seconds and its weight.
#[derive(Clone, Copy, Debug, PartialEq)]
struct Point {
    load: u64,
    seconds: f64,
    weight: f64,
}

/// One processor's history.
#[derive(Clone, Debug, Default, PartialEq)]
struct History {
    /// Sorted by load, distinct loads.
    points: Vec<Point>,
    clips_in_a_row: u32,
    /// Sum and count of the relative deviations at equal or near loads.
    deviation_sum: f64,
    deviations: u32,
}

impl History {
    fn spread(&self) -> f64 {
        if self.deviations == 0 {
            0.0
        } else {
            self.deviation_sum / f64::from(self.deviations)
        }
    }

    /// The bounds the monotone model puts on the time at `load`: the fitted
    /// time at the nearest measured load below (or at) it, and at the nearest
    /// above (or at) it (`None`: no measured load that side).
    fn bracket(&self, fitted: &TimeFunction, load: u64) -> (Option<f64>, Option<f64>) {
        let at = self.points.partition_point(|p| p.load < load);
        let above = self.points.get(at).map(|p| fitted.time(p.load));
        let below = if self.points.get(at).is_some_and(|p| p.load == load) {
            above
        } else if at > 0 {
            Some(fitted.time(self.points[at - 1].load))
        } else {
            None
        };
        (below, above)
    }

    /// Adds an observation (already checked: load >= 1, seconds finite > 0),
    /// clipped against `fitted` (the function of the history so far). Returns
    /// whether it was clipped.
    fn add(&mut self, fitted: Option<&TimeFunction>, load: u64, measured: f64) -> bool {
        let mut seconds = measured;
        let mut clipped = false;
        if let Some(f) = fitted {
            let (below, above) = self.bracket(f, load);
            let high = above.map(|t| t * CLIP_FACTOR);
            let low = below.map(|t| t / CLIP_FACTOR);
            if let Some(h) = high.filter(|&h| seconds > h && h > 0.0) {
                seconds = h;
                clipped = true;
            } else if let Some(l) = low.filter(|&l| seconds < l) {
                seconds = l;
                clipped = true;
            }
        }
        if clipped {
            self.clips_in_a_row += 1;
            if self.clips_in_a_row >= CLIPS_TO_RESTART {
                // A change of speed: start again from this observation.
                *self = History::default();
                self.points.push(Point {
                    load,
                    seconds: measured,
                    weight: 1.0,
                });
                return true;
            }
        } else {
            self.clips_in_a_row = 0;
        }
        // The noise: the relative deviation of the time per item from the
        // nearest point at an equal or near load.
        let tpi = seconds / load as f64;
        let near = self
            .points
            .iter()
            .filter(|p| (p.load.abs_diff(load) as f64) <= NEAR * load as f64)
            .min_by_key(|p| p.load.abs_diff(load));
        if let Some(p) = near {
            let held = p.seconds / p.load as f64;
            let deviation = (tpi - held).abs() / held;
            if deviation <= NOT_NOISE {
                self.deviation_sum += deviation;
                self.deviations += 1;
            }
        }
        let at = self.points.partition_point(|p| p.load < load);
        match self.points.get_mut(at) {
            Some(p) if p.load == load => {
                p.weight = (p.weight + 1.0).min(MAX_WEIGHT);
                p.seconds += (seconds - p.seconds) / p.weight;
            }
            _ => self.points.insert(
                at,
                Point {
                    load,
                    seconds,
                    weight: 1.0,
                },
            ),
        }
        if self.points.len() > MAX_POINTS {
            self.merge_nearest();
        }
        clipped
    }

    /// Merges the two adjacent points of least relative load gap into their
    /// weighted mean.
    fn merge_nearest(&mut self) {
        let i = (0..self.points.len() - 1)
            .min_by(|&a, &b| {
                let gap = |i: usize| {
                    let (p, q) = (self.points[i], self.points[i + 1]);
                    (q.load - p.load) as f64 / q.load as f64
                };
                gap(a).total_cmp(&gap(b))
            })
            .expect("more than one point");
        let (p, q) = (self.points[i], self.points[i + 1]);
        let w = p.weight + q.weight;
        let load = ((p.load as f64 * p.weight + q.load as f64 * q.weight) / w).round() as u64;
        self.points[i] = Point {
            load: load.clamp(p.load, q.load),
            seconds: (p.seconds * p.weight + q.seconds * q.weight) / w,
            weight: w.min(MAX_WEIGHT),
        };
        self.points.remove(i + 1);
    }

    fn fit(&self, processor: usize, model: Model) -> Result<TimeFunction, DecideError> {
        let mut points: Vec<(u64, f64)> = Vec::with_capacity(self.points.len() * 2);
        let mut before = (0u64, 0.0f64);
        for (k, p) in self.points.iter().enumerate() {
            points.push((p.load, p.seconds));
            if let Some(q) = self.points.get(k + 1) {
                let (x0, t0, x1, t1) = (p.load as f64, p.seconds, q.load as f64, q.seconds);
                let left = (t0 - before.1) / (x0 - before.0 as f64);
                let left = if left > 0.0 { left } else { t0 / x0 };
                let growth = (t1 / x1) / (t0 / x0);
                let jump = q.load - p.load > 1
                    && growth > 1.0 + NOT_NOISE
                    && ((t1 - t0) / (x1 - x0) > JUMP_SLOPE * left
                        || growth > (1.0 + NOT_NOISE) * (x1 / x0).powi(2));
                if jump && x1 - x0 <= NARROW * x1 {
                    points.push((p.load + 1, q.seconds));
                } else if jump {
                    let middle = p.load + (q.load - p.load) / 2;
                    let t = (t0 + left * (middle - p.load) as f64).min(t1);
                    points.push((middle, t));
                    points.push((middle + 1, t1));
                } else if let Some(r) = self.points.get(k + 2) {
                    // Steeper than the next segment (not convex there): the
                    // next segment's line, extended back, lies above the
                    // chord; it is the time after a step at x0.
                    let right = (r.seconds - t1) / (r.load as f64 - x1);
                    let slope = (t1 - t0) / (x1 - x0);
                    if q.load - p.load > 1 && right >= 0.0 && slope > right {
                        let t = t1 - right * (x1 - x0 - 1.0);
                        points.push((p.load + 1, t.max(t0)));
                    }
                }
            }
            before = (p.load, p.seconds);
        }
        TimeFunction::new(processor, &points, model).map_err(|e| functional_error(e, 0))
    }
}

/// A functional error as the decider's error (no new variant: the measures
/// were checked, so only a balance can fail).
fn functional_error(e: FunctionalError, total: u64) -> DecideError {
    match e {
        FunctionalError::NoProcessors => DecideError::Balance(BalanceError::NoProcessors),
        FunctionalError::TimeOverflow { total } => {
            DecideError::Balance(BalanceError::TimeOverflow { total })
        }
        FunctionalError::NoPoints { processor } => DecideError::Measure {
            rank: processor,
            items: total,
            seconds: 0.0,
        },
        FunctionalError::InvalidTime {
            processor,
            load,
            seconds,
        } => DecideError::Measure {
            rank: processor,
            items: load,
            seconds,
        },
    }
}

/// The functional model's state in a decider.
#[derive(Clone, Debug, PartialEq)]
pub(super) struct Learner {
    model: Model,
    histories: Vec<History>,
    functions: Vec<TimeFunction>,
    budget: u32,
    explorations: u32,
    clipped: u64,
    unmeasured: Vec<bool>,
    limited: Vec<bool>,
}

/// The functional model's answer for one iteration.
pub(super) struct Fitted {
    pub targets: Vec<u64>,
    pub now: f64,
    pub balanced: f64,
    /// The relative gain a move must beat (noise rule), before the tolerance.
    pub noise: f64,
}

impl Learner {
    pub(super) fn new(model: Model, budget: u32) -> Learner {
        Learner {
            model,
            histories: Vec::new(),
            functions: Vec::new(),
            budget,
            explorations: 0,
            clipped: 0,
            unmeasured: Vec::new(),
            limited: Vec::new(),
        }
    }

    pub(super) fn set_budget(&mut self, budget: u32) {
        self.budget = budget;
    }

    pub(super) fn report(&self) -> Learning {
        Learning {
            functions: self.functions.clone(),
            points: self.histories.iter().map(|h| h.points.len()).collect(),
            noise: self.noise(),
            explorations: self.explorations,
            clipped: self.clipped,
            unmeasured: self.unmeasured.clone(),
            limited: self.limited.clone(),
        }
    }

    fn noise(&self) -> f64 {
        self.histories
            .iter()
            .map(History::spread)
            .fold(0.0, f64::max)
    }

    /// Adds the iteration's measures (checked) and fits the functions, then
    /// balances: the targets, the step times now and balanced (border
    /// included), and the noise threshold.
    pub(super) fn fit(
        &mut self,
        loads: &[u64],
        seconds: &[f64],
        border: &[f64],
    ) -> Result<Fitted, DecideError> {
        let n = loads.len();
        if self.histories.len() != n || self.functions.len() != n {
            self.histories = vec![History::default(); n];
            self.functions.clear();
        }
        let mut functions = Vec::with_capacity(n);
        for (i, history) in self.histories.iter_mut().enumerate() {
            let fitted = self.functions.get(i);
            if history.add(fitted, loads[i], seconds[i]) {
                self.clipped += 1;
            }
            functions.push(history.fit(i, self.model)?);
        }
        self.functions = functions;
        let total = loads
            .iter()
            .try_fold(0u64, |s, &x| s.checked_add(x))
            .ok_or(DecideError::Balance(BalanceError::TimeOverflow {
                total: u64::MAX,
            }))?;
        if total < n as u64 {
            return Err(DecideError::Balance(BalanceError::TooFewItems {
                total,
                processors: n,
            }));
        }
        // The range each processor may reach: one doubling or halving beyond
        // its measured loads while the budget lasts, its measured loads after.
        let exploring = self.explorations < self.budget;
        let ranges: Vec<(u64, u64)> = self
            .histories
            .iter()
            .map(|h| {
                let (lo, hi) = (h.points[0].load, h.points[h.points.len() - 1].load);
                if exploring {
                    (lo.div_ceil(2).max(1), hi.saturating_mul(2))
                } else {
                    (lo, hi)
                }
            })
            .collect();
        let free = balance_within(total, &self.functions, None)?;
        let targets = balance_within(total, &self.functions, Some(&ranges))?;
        self.limited = (0..n)
            .map(|i| free[i] < ranges[i].0 || free[i] > ranges[i].1)
            .collect();
        self.unmeasured = (0..n)
            .map(|i| {
                let h = &self.histories[i].points;
                targets[i] < h[0].load || targets[i] > h[h.len() - 1].load
            })
            .collect();
        let step = |x: &[u64]| {
            (0..n)
                .map(|i| self.functions[i].time(x[i]) + border.get(i).copied().unwrap_or(0.0))
                .fold(0.0, f64::max)
        };
        Ok(Fitted {
            now: step(loads),
            balanced: step(&targets),
            targets,
            noise: NOISE_MULTIPLE * self.noise(),
        })
    }

    /// Counts a move that was taken: exploring when a target is unmeasured.
    pub(super) fn moved(&mut self) {
        if self.unmeasured.iter().any(|&u| u) {
            self.explorations += 1;
        }
    }
}

/// The exact integer optimum of `min max_j f_j(x_j)` with `Σ x_j = total`,
/// every `x_j >= 1`, and with `ranges` every `x_j` in `ranges[j]` (which must
/// hold a solution: the current loads do).
///
/// The caps: [`balance`] without them; a processor given more than its cap
/// holds its cap in an optimum with caps too (the others can only take more,
/// so the optimum only grows and it still fits its cap's worth), so it is set
/// there and the others are balanced again, until no one exceeds (at most n
/// balances; usually one or two). The floors: the optimum with floors is the
/// larger of the optimum without them and the floors' own times, so each
/// processor below its floor gets its floor, taken from those above theirs
/// (which only lowers their times).
pub(crate) fn balance_within(
    total: u64,
    functions: &[TimeFunction],
    ranges: Option<&[(u64, u64)]>,
) -> Result<Vec<u64>, DecideError> {
    let n = functions.len();
    let mut loads = vec![0u64; n];
    let mut free: Vec<usize> = (0..n).collect();
    let mut left = total;
    loop {
        let subset: Vec<TimeFunction> = free.iter().map(|&j| functions[j].clone()).collect();
        let b = if free.is_empty() {
            Vec::new()
        } else {
            balance(left, &subset)
                .map_err(|e| functional_error(e, total))?
                .loads
        };
        let over: Vec<usize> = match ranges {
            Some(r) => (0..free.len()).filter(|&k| b[k] > r[free[k]].1).collect(),
            None => Vec::new(),
        };
        if over.is_empty() || ranges.is_none() {
            for (k, &j) in free.iter().enumerate() {
                loads[j] = b[k];
            }
            break;
        }
        let r = ranges.expect("caps");
        for &k in &over {
            let j = free[k];
            loads[j] = r[j].1;
            left = left.saturating_sub(r[j].1);
        }
        let mut k = 0;
        free.retain(|_| {
            k += 1;
            !over.contains(&(k - 1))
        });
        if free.is_empty() {
            break;
        }
    }
    let floors: Vec<u64> = match ranges {
        Some(r) => r.iter().map(|&(lo, _)| lo.max(1)).collect(),
        None => vec![1; n],
    };
    let mut missing = 0u64;
    for (x, &lo) in loads.iter_mut().zip(&floors) {
        if *x < lo {
            missing += lo - *x;
            *x = lo;
        }
    }
    // Take the missing items from the processors above their floors, the
    // slowest first (any order keeps every time within the optimum).
    let mut order: Vec<usize> = (0..n).collect();
    order.sort_by(|&a, &b| {
        functions[b]
            .time(loads[b])
            .total_cmp(&functions[a].time(loads[a]))
    });
    for j in order {
        if missing == 0 {
            break;
        }
        let give = missing.min(loads[j] - floors[j].min(loads[j]));
        loads[j] -= give;
        missing -= give;
    }
    Ok(loads)
}
