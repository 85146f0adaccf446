//! Balancing with speeds that depend on the load: functional performance
//! models (Lastovetsky and Reddy, "Data partitioning with a functional
//! performance model of heterogeneous processors", IJHPCA 2007; FuPerMod).
//!
//! A GPU is fast only on large loads (it pays a launch and a transfer first);
//! a CPU slows down sharply once its share no longer fits in cache or memory.
//! With one time per item the balance gives such a processor too much or too
//! little. Here each processor's time is a non-decreasing function of its
//! load ([`TimeFunction`], built from measured points), and [`balance`] finds
//! the exact integer optimum of `min max_j t_j(x_j)` with `Σ x_j = total`.
//!
//! # The model between and beyond the points
//! A [`TimeFunction`] holds measured `(load, seconds)` points. Repeated loads
//! are averaged; times that decrease with the load (noise) are pooled into
//! their mean (isotonic regression, pool-adjacent-violators), so the points
//! never decrease. The time of no load is 0. Between `(0, 0)` and the points
//! the time is interpolated ([`Model::PiecewiseLinear`], or
//! [`Model::MonotoneCubic`]: Fritsch–Carlson, smooth and still
//! non-decreasing); past the last point it grows at the last segment's slope
//! (with one point: in proportion to the load, the constant model).

use std::fmt;

use serde::{Deserialize, Serialize};

mod points;
#[cfg(test)]
mod reference;

pub use points::{
    PointsBalance, PointsError, PointsInstance, PointsInstanceSpec, PointsProcessorSpec,
    PointsTarget,
};

/// How a [`TimeFunction`] interpolates between its points. In documents:
/// `"piecewise-linear"` or `"monotone-cubic"` ([`Model::name`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Model {
    /// Straight segments between the points (FuPerMod's piecewise-linear
    /// model).
    #[default]
    PiecewiseLinear,
    /// A monotone cubic Hermite spline (Fritsch–Carlson): smooth, and never
    /// decreasing between non-decreasing points.
    MonotoneCubic,
}

/// Why a time function or a balance cannot be made.
#[derive(Clone, Debug, PartialEq)]
pub enum FunctionalError {
    /// A time function without a point of positive load and positive time.
    NoPoints {
        /// The processor.
        processor: usize,
    },
    /// A point's time is NaN, infinite or negative.
    InvalidTime {
        /// The processor.
        processor: usize,
        /// The point's load.
        load: u64,
        /// The value given.
        seconds: f64,
    },
    /// No processors to balance over.
    NoProcessors,
    /// The least time of the slowest processor is beyond the largest f64:
    /// the points' times are too large for so many items.
    TimeOverflow {
        /// Items to share.
        total: u64,
    },
}

impl Model {
    /// Every model, in the order of their names.
    pub const ALL: [Model; 2] = [Model::PiecewiseLinear, Model::MonotoneCubic];

    /// The model's name in documents and on command lines: `piecewise-linear`
    /// or `monotone-cubic`. O(1).
    ///
    /// ```
    /// use hetbal::functional::Model;
    /// assert_eq!(Model::MonotoneCubic.name(), "monotone-cubic");
    /// ```
    pub fn name(self) -> &'static str {
        match self {
            Model::PiecewiseLinear => "piecewise-linear",
            Model::MonotoneCubic => "monotone-cubic",
        }
    }
}

impl fmt::Display for FunctionalError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            FunctionalError::NoPoints { processor } => write!(
                f,
                "processor {processor}: a time function needs a measured point of positive load and positive time"
            ),
            FunctionalError::InvalidTime {
                processor,
                load,
                seconds,
            } => write!(
                f,
                "processor {processor}: the time {seconds} at load {load} must be finite and >= 0"
            ),
            FunctionalError::NoProcessors => f.write_str("no processors to balance over"),
            FunctionalError::TimeOverflow { total } => write!(
                f,
                "{total} items: the balanced time overflows (it is beyond {:e} s); give the times in a larger unit",
                f64::MAX
            ),
        }
    }
}

impl std::error::Error for FunctionalError {}

/// One processor's time as a non-decreasing function of its load, from
/// measured points (see the module's docs for the model).
#[derive(Clone, Debug, PartialEq)]
pub struct TimeFunction {
    /// The knots: `(0, 0)` then the points, loads increasing, times
    /// non-decreasing.
    loads: Vec<f64>,
    times: Vec<f64>,
    /// Tangents at the knots (monotone cubic), or none (piecewise linear).
    slopes: Option<Vec<f64>>,
    /// The slope past the last knot.
    tail: f64,
    /// The last knot `(load, time)`, and the largest load of no time
    /// ([`TimeFunction::largest_load_within`] of 0): copies that
    /// [`balance`]'s first pass reads with the function itself, without
    /// reaching for its vectors.
    last: (f64, f64),
    free: u64,
}

impl TimeFunction {
    /// The time function of measured `points` (`(load, seconds)`, any order;
    /// points of load 0 are ignored) with `model` between them, for processor
    /// `processor` (named in errors).
    ///
    /// # Errors
    /// [`FunctionalError::InvalidTime`] for a time that is NaN, infinite or
    /// negative; [`FunctionalError::NoPoints`] when no point has a positive
    /// load and, after making the times non-decreasing, a positive time.
    ///
    /// # Complexity
    /// O(m log m) for m points.
    ///
    /// # Example
    /// ```
    /// use hetbal::functional::{Model, TimeFunction};
    /// // 1 ms per item up to 1000 items, then 5 ms per item (a memory cliff).
    /// let f = TimeFunction::new(0, &[(1000, 1.0), (2000, 6.0)], Model::PiecewiseLinear).unwrap();
    /// assert_eq!(f.time(500), 0.5);
    /// assert_eq!(f.time(1500), 3.5);
    /// assert_eq!(f.time(3000), 11.0); // past the last point: its slope
    /// assert_eq!(f.largest_load_within(3.5), 1500);
    /// ```
    pub fn new(
        processor: usize,
        points: &[(u64, f64)],
        model: Model,
    ) -> Result<TimeFunction, FunctionalError> {
        if let Some(&(load, seconds)) = points.iter().find(|(_, s)| !(s.is_finite() && *s >= 0.0)) {
            return Err(FunctionalError::InvalidTime {
                processor,
                load,
                seconds,
            });
        }
        let mut sorted: Vec<(u64, f64)> = points.iter().copied().filter(|p| p.0 > 0).collect();
        sorted.sort_by_key(|p| p.0);
        // Repeated loads averaged: (load, mean seconds, weight).
        let mut merged: Vec<(u64, f64, f64)> = Vec::new();
        for (load, seconds) in sorted {
            match merged.last_mut() {
                Some(last) if last.0 == load => {
                    last.1 = (last.1 * last.2 + seconds) / (last.2 + 1.0);
                    last.2 += 1.0;
                }
                _ => merged.push((load, seconds, 1.0)),
            }
        }
        // Pool adjacent violators: blocks of (mean, weight, points).
        let mut blocks: Vec<(f64, f64, usize)> = Vec::new();
        for &(_, seconds, weight) in &merged {
            blocks.push((seconds, weight, 1));
            while blocks.len() >= 2 && blocks[blocks.len() - 2].0 > blocks[blocks.len() - 1].0 {
                let (b, a) = (blocks.pop().expect("two"), blocks.pop().expect("two"));
                let w = a.1 + b.1;
                blocks.push(((a.0 * a.1 + b.0 * b.1) / w, w, a.2 + b.2));
            }
        }
        let mut loads = vec![0.0];
        let mut times = vec![0.0];
        let mut at = 0;
        for (mean, _, count) in blocks {
            for &(load, _, _) in &merged[at..at + count] {
                loads.push(load as f64);
                times.push(mean);
            }
            at += count;
        }
        if times.last().is_none_or(|&t| t <= 0.0) {
            return Err(FunctionalError::NoPoints { processor });
        }
        let m = loads.len();
        let secant = |i: usize| (times[i + 1] - times[i]) / (loads[i + 1] - loads[i]);
        let tail = secant(m - 2);
        let slopes = match model {
            Model::PiecewiseLinear => None,
            Model::MonotoneCubic => Some(fritsch_carlson(&loads, &times)),
        };
        let last = (loads[m - 1], times[m - 1]);
        let mut f = TimeFunction {
            loads,
            times,
            slopes,
            tail,
            last,
            free: 0,
        };
        f.free = f.largest_load_within(0.0);
        Ok(f)
    }

    /// The model's time of `load` items. O(log m).
    pub fn time(&self, load: u64) -> f64 {
        self.time_at(load as f64)
    }

    /// The time at a real load `x >= 0`.
    fn time_at(&self, x: f64) -> f64 {
        self.segment(self.segment_of(x)).time(x)
    }

    /// The segment holding load `x`: i with `loads[i] <= x < loads[i + 1]`,
    /// or the last knot's index past it ([`knots_up_to`]). O(log m).
    fn segment_of(&self, x: f64) -> usize {
        if x >= self.last.0 {
            return self.loads.len() - 1;
        }
        knots_up_to(&self.loads, x).max(1) - 1
    }

    /// The segment where the time crosses `seconds`: i with `times[i] <=
    /// seconds < times[i + 1]`, or the last knot's index when no knot's time
    /// exceeds it (0 for a negative or NaN time; [`knots_up_to`]). O(log m).
    fn segment_at_time(&self, seconds: f64) -> usize {
        if seconds >= self.last.1 {
            return self.times.len() - 1;
        }
        knots_up_to(&self.times, seconds).max(1) - 1
    }

    /// Segment `i` (as [`TimeFunction::segment_of`] gives) copied out. O(1).
    fn segment(&self, i: usize) -> Segment {
        let last = self.loads.len() - 1;
        if i == last {
            return Segment {
                x0: self.last.0,
                x1: f64::INFINITY,
                y0: self.last.1,
                y1: f64::INFINITY,
                d0: self.tail,
                d1: 0.0,
                s: f64::NAN,
                shape: Shape::Tail,
            };
        }
        let (d0, d1, shape) = match &self.slopes {
            None => (0.0, 0.0, Shape::Linear),
            Some(d) => (d[i], d[i + 1], Shape::Cubic),
        };
        Segment {
            x0: self.loads[i],
            x1: self.loads[i + 1],
            y0: self.times[i],
            y1: self.times[i + 1],
            d0,
            d1,
            s: f64::NAN,
            shape,
        }
    }

    /// The largest load whose time is at most `seconds` (`u64::MAX` when the
    /// time never exceeds it: a flat function; 0 for a negative or NaN
    /// time). The segment where the time crosses `seconds` is found among the
    /// knots, the load guessed in it (on its straight line; for the cubic,
    /// the cubic's own inverse by a safeguarded Newton's method), and the
    /// guess corrected by the model's own times (a galloping search, a few
    /// steps).
    ///
    /// Complexity: O(log m) for m points, times the few steps of the
    /// correction.
    pub fn largest_load_within(&self, seconds: f64) -> u64 {
        if seconds.is_nan() || seconds < 0.0 {
            return 0;
        }
        self.segment(self.segment_at_time(seconds))
            .largest_load_within(seconds, |x| self.time_at(x))
    }
}

/// How many of the non-decreasing knot values `v` (the first one 0, the
/// last one above `x`) are at most `x`: the first segment tried first (small
/// loads and times are the usual case: a balance over many processors gives
/// each few items), then a branch-free count up to 64 knots (which reads
/// their cache lines all at once, where a binary search would wait for each
/// in turn), beyond that a binary search. O(log m), and O(1) up to 64 knots.
fn knots_up_to(v: &[f64], x: f64) -> usize {
    if v.len() < 2 || v[1] > x || x.is_nan() {
        return usize::from(v[0] <= x);
    }
    if v.len() <= 64 {
        v.iter().map(|&y| usize::from(y <= x)).sum()
    } else {
        v.partition_point(|&y| y <= x)
    }
}

/// How a [`Segment`]'s time grows with the load.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Shape {
    /// A straight line between its knots.
    Linear,
    /// A cubic Hermite between its knots, of tangents `d0` and `d1`.
    Cubic,
    /// Past the last knot: the slope `d0`.
    Tail,
}

/// One segment of a [`TimeFunction`] copied out of its vectors: from knot
/// `(x0, y0)` to knot `(x1, y1)`, or past the last knot (`x1` and `y1`
/// infinite). [`balance`] keeps one per processor in one contiguous vector
/// (64 bytes each), so that its passes read that instead of each function's
/// own vectors, and search a function's knots only when the load or time
/// asked for is outside the segment it remembers.
#[derive(Clone, Copy, Debug)]
#[repr(align(64))]
struct Segment {
    x0: f64,
    x1: f64,
    y0: f64,
    y1: f64,
    /// Tangents at the ends (cubic), or the slope past the last knot (`d0`).
    d0: f64,
    d1: f64,
    /// Where the cubic's inverse was found last (0 to 1 along the segment),
    /// the next one's start; NaN: none yet.
    s: f64,
    shape: Shape,
}

impl Segment {
    /// No segment: it holds no load and no time.
    const NONE: Segment = Segment {
        x0: f64::NAN,
        x1: f64::NAN,
        y0: f64::NAN,
        y1: f64::NAN,
        d0: f64::NAN,
        d1: f64::NAN,
        s: f64::NAN,
        shape: Shape::Linear,
    };

    /// Whether load `x` is in the segment (`x0 <= x < x1`).
    fn holds_load(&self, x: f64) -> bool {
        self.x0 <= x && x < self.x1
    }

    /// Whether the time crosses `seconds` in the segment (`y0 <= seconds <
    /// y1`; never on a flat segment).
    fn holds_time(&self, seconds: f64) -> bool {
        self.y0 <= seconds && seconds < self.y1
    }

    /// The time at load `x` in the segment. O(1).
    fn time(&self, x: f64) -> f64 {
        let (x0, x1, y0, y1) = (self.x0, self.x1, self.y0, self.y1);
        match self.shape {
            Shape::Tail => y0 + (x - x0) * self.d0,
            // Clamped to the segment's ends, as the cubic: rounding never
            // makes the time decrease from one segment to the next.
            Shape::Linear => {
                let s = (x - x0) / (x1 - x0);
                (y0 + (y1 - y0) * s).clamp(y0, y1)
            }
            Shape::Cubic => {
                // Cubic Hermite on [x0, x1].
                let h = x1 - x0;
                let s = (x - x0) / h;
                let (h00, h10) = (
                    (1.0 + 2.0 * s) * (1.0 - s) * (1.0 - s),
                    s * (1.0 - s) * (1.0 - s),
                );
                let (h01, h11) = (s * s * (3.0 - 2.0 * s), s * s * (s - 1.0));
                let y = h00 * y0 + h10 * h * self.d0 + h01 * y1 + h11 * h * self.d1;
                // Rounding may step a hair outside [y0, y1]: clamp.
                y.clamp(y0, y1)
            }
        }
    }

    /// Loads per second at load `x` in the segment (infinite where it is
    /// flat). O(1).
    fn rate_at(&self, x: f64) -> f64 {
        match self.shape {
            Shape::Tail => 1.0 / self.d0,
            Shape::Linear => (self.x1 - self.x0) / (self.y1 - self.y0),
            Shape::Cubic => {
                let h = self.x1 - self.x0;
                let s = (x - self.x0) / h;
                // The Hermite basis' derivatives in s.
                let dy = (6.0 * s * s - 6.0 * s) * self.y0
                    + (3.0 * s * s - 4.0 * s + 1.0) * h * self.d0
                    + (6.0 * s - 6.0 * s * s) * self.y1
                    + (3.0 * s * s - 2.0 * s) * h * self.d1;
                h / dy
            }
        }
    }

    /// The real load where the time is `seconds` (with
    /// [`Segment::holds_time`]), and the rate there (loads per second;
    /// infinite where the time is flat). Exact on a straight segment; on a
    /// cubic, its inverse within about a thousandth of an item (or the ulp),
    /// by a safeguarded Newton's method started where the last one ended.
    /// O(1): a few steps, one or two when `seconds` moved little.
    fn load_and_rate(&mut self, seconds: f64) -> (f64, f64) {
        match self.shape {
            Shape::Tail => {
                let rate = 1.0 / self.d0;
                (self.x0 + (seconds - self.y0) * rate, rate)
            }
            Shape::Linear => {
                let rate = (self.x1 - self.x0) / (self.y1 - self.y0);
                (self.x0 + (seconds - self.y0) * rate, rate)
            }
            Shape::Cubic => self.cubic_inverse(seconds),
        }
    }

    /// [`Segment::load_and_rate`] on a cubic segment.
    fn cubic_inverse(&mut self, seconds: f64) -> (f64, f64) {
        let h = self.x1 - self.x0;
        let dy = self.y1 - self.y0;
        // Normalised: P(s) = a s + c s^2 + e s^3 from P(0) = 0 to P(1) = 1,
        // non-decreasing (Fritsch–Carlson), solved for P(s) = u (u: the
        // chord's s, where a search without a last one starts).
        let u = (seconds - self.y0) / dy;
        let (a, b) = (h * self.d0 / dy, h * self.d1 / dy);
        let (c, e) = (3.0 - 2.0 * a - b, a + b - 2.0);
        let (mut lo, mut hi) = (0.0f64, 1.0f64);
        let mut s = if self.s >= 0.0 && self.s <= 1.0 {
            self.s
        } else {
            u.clamp(0.0, 1.0)
        };
        let mut slope = f64::NAN;
        if a.is_finite() && b.is_finite() && u.is_finite() {
            for _ in 0..64 {
                let v = ((e * s + c) * s + a) * s - u;
                slope = (3.0 * e * s + 2.0 * c) * s + a;
                if v < 0.0 {
                    lo = s;
                } else if v > 0.0 {
                    hi = s;
                } else {
                    break;
                }
                let newton = s - v / slope;
                let next = if newton > lo && newton < hi {
                    newton
                } else {
                    lo + (hi - lo) / 2.0
                };
                let step = (next - s).abs();
                s = next;
                if step * h <= 1e-3 || step <= 1e-15 || hi - lo <= 1e-15 {
                    slope = (3.0 * e * s + 2.0 * c) * s + a;
                    break;
                }
            }
        } else {
            s = u.clamp(0.0, 1.0);
        }
        if !s.is_finite() {
            s = 0.0;
        }
        self.s = s;
        let rate = if slope.is_finite() {
            h / (dy * slope)
        } else {
            h / dy
        };
        (self.x0 + s * h, rate)
    }

    /// [`TimeFunction::largest_load_within`] for a `seconds >= 0` that the
    /// segment holds ([`Segment::holds_time`]), or one at or past the last
    /// knot for a segment past it; `outside` gives the function's time at
    /// loads outside the segment.
    fn largest_load_within(&mut self, seconds: f64, outside: impl Fn(f64) -> f64) -> u64 {
        let guess = match self.shape {
            Shape::Tail => {
                if self.d0 <= 0.0 {
                    return u64::MAX;
                }
                self.x0 + (seconds - self.y0) / self.d0
            }
            Shape::Linear => {
                self.x0 + (seconds - self.y0) / (self.y1 - self.y0) * (self.x1 - self.x0)
            }
            Shape::Cubic => self.cubic_inverse(seconds).0,
        };
        let segment = &*self;
        let within = |x: u64| {
            let x = x as f64;
            let t = if segment.holds_load(x) {
                segment.time(x)
            } else {
                outside(x)
            };
            t <= seconds
        };
        largest_within(guess, within)
    }
}

/// Fritsch–Carlson tangents of a monotone cubic through non-decreasing
/// points: the secants' harmonic-style mean inside, one-sided at the ends,
/// limited so that the spline never decreases. O(m).
fn fritsch_carlson(x: &[f64], y: &[f64]) -> Vec<f64> {
    let m = x.len();
    let secants: Vec<f64> = (0..m - 1)
        .map(|i| (y[i + 1] - y[i]) / (x[i + 1] - x[i]))
        .collect();
    let mut d = vec![0.0; m];
    d[0] = secants[0];
    d[m - 1] = secants[m - 2];
    for i in 1..m - 1 {
        d[i] = if secants[i - 1] * secants[i] <= 0.0 {
            0.0
        } else {
            (secants[i - 1] + secants[i]) / 2.0
        };
    }
    for i in 0..m - 1 {
        if secants[i] == 0.0 {
            d[i] = 0.0;
            d[i + 1] = 0.0;
            continue;
        }
        let (a, b) = (d[i] / secants[i], d[i + 1] / secants[i]);
        let r = a * a + b * b;
        if r > 9.0 {
            let t = 3.0 / r.sqrt();
            d[i] = t * a * secants[i];
            d[i + 1] = t * b * secants[i];
        }
    }
    d
}

/// A balance with time functions.
#[derive(Clone, Debug, PartialEq)]
pub struct FunctionalBalance {
    /// Items per processor (each may be 0), adding up to the total.
    pub loads: Vec<u64>,
    /// The least `max_j t_j(x_j)` over every split: the time of these loads.
    pub time: f64,
}

/// The exact integer optimum of `min max_j t_j(x_j)` subject to `Σ_j x_j =
/// total`, `x_j >= 0`, for non-decreasing time functions `functions`
/// (Lastovetsky and Reddy's partitioning problem, solved exactly).
///
/// The method: the loads that fit within a time T add up to `F(T) = Σ_j
/// L_j(T)` ([`TimeFunction::largest_load_within`]), which grows with T. An
/// approximation of F (the real loads of each processor's segment at T, no
/// rounding: exact on straight segments, the cubic's own inverse on cubic
/// ones) is solved by Newton's method for a time where it falls short by
/// p/16 to p/2, started where the processors' tangents at the mean load,
/// added up, meet the total (beyond 16384 processors, Newton's method runs
/// first on a stratified sample of 4096 of them, each weighted by the
/// processors it stands for); an interpolation search on T (regula falsi,
/// with a bisection every third step) takes over if need be, until at most
/// 2p items are missing below it. Then every processor holds what fits
/// below it, and the optimum is the `missing`-th least time of the items
/// still to place: it is selected among the items that end by an upper
/// bound of it (where the processors' rates say that the missing items and
/// three standard deviations more fit, else the `missing`-th least time of
/// each processor's next items), ties going to the lower processors; when
/// more than 16p items end by the bound, the missing items go one at a time
/// to the processor whose time after taking it is least (a heap): with
/// non-decreasing times that greedy choice is optimal, and its last time is
/// the optimum. When the bracket closes first (two adjacent floating-point
/// times), the optimum is its upper end and the loads are filled up to it.
///
/// Each function keeps its knots in vectors of its own, so reading them
/// costs a cache miss or more per processor. The balance keeps one segment
/// of each processor (64 bytes, in one contiguous vector): a pass reads
/// that vector, and searches a function's knots again only where the time
/// or load asked for has left the segment it keeps (which then keeps the
/// new one). The first pass over every processor searches every function's
/// knots; near the optimum few processors change segment, so the later
/// passes cost O(p) and read 6.4 MB for 10^5 processors. What the steps
/// before read of every function (the load it takes in no time, its last
/// knot) is kept beside its vectors.
///
/// # Errors
/// [`FunctionalError::NoProcessors`] for no functions;
/// [`FunctionalError::TimeOverflow`] when the optimum is beyond the largest
/// f64.
///
/// # Complexity
/// For p processors of m points each: O(p) for the first steps and O(s log
/// m) for the sample's (s <= 4096 processors); then per evaluation of F or
/// of its approximation O(p), plus O(log m) for each processor whose
/// segment changes (O(p log m) at worst: the first), a few tens of
/// evaluations at most (on the benchmark: 1 or 2 on the sample, then 2 of
/// the approximation and 2 of F); then O(p + listed items) for the
/// selection, or O(p log p) for the heap. O(p) memory besides the
/// functions' own.
///
/// # Example
/// ```
/// use hetbal::functional::{balance, Model, TimeFunction};
/// // A GPU paying 2 s before any work, then 1 ms per item; a CPU at 4 ms
/// // per item.
/// let gpu = TimeFunction::new(0, &[(1, 2.001), (10_000, 12.0)], Model::PiecewiseLinear).unwrap();
/// let cpu = TimeFunction::new(1, &[(1000, 4.0)], Model::PiecewiseLinear).unwrap();
/// let b = balance(5000, &[gpu, cpu]).unwrap();
/// assert_eq!(b.loads.iter().sum::<u64>(), 5000);
/// assert!(b.loads[0] > b.loads[1]);
/// ```
pub fn balance(
    total: u64,
    functions: &[TimeFunction],
) -> Result<FunctionalBalance, FunctionalError> {
    let p = functions.len();
    if p == 0 {
        return Err(FunctionalError::NoProcessors);
    }
    let need = u128::from(total);
    let mut run = Run::new(functions, total);
    if run.zero >= need {
        let loads = run.fill(None, 0.0, need);
        return Ok(run.finish(loads, need));
    }
    // The loads within `lo` (empty until known) and a second buffer.
    let (mut lo_loads, mut scratch) = (Vec::with_capacity(p), Vec::with_capacity(p));
    // F(lo), and the rates there added up (unknown at 0).
    let (mut lo, mut flo, mut rlo) = (0.0f64, run.zero, f64::NAN);
    // A feasible time: any processor alone can take everything; beyond the
    // largest f64, the optimum overflows. F there is only needed by the
    // interpolation search.
    let mut hi = run.top;
    let mut fhi = None;
    if !hi.is_finite() {
        let (f, _) = run.fits(f64::MAX, &mut scratch);
        if f < need {
            return Err(FunctionalError::TimeOverflow { total });
        }
        (hi, fhi) = (f64::MAX, Some(f));
    }
    // Newton's method on the loads' real sum (cheap: no rounding to items):
    // a time where it falls short of the total by p/16 to p/2 (aiming at
    // p/4), so that the items below it miss at most 1.5p (each processor
    // loses less than one to rounding), and on average 0.75p (one next item
    // each then bounds the optimum).
    let aim = need as f64 - p as f64 / 4.0;
    let window = (need as f64 - p as f64 / 2.0, need as f64 - p as f64 / 16.0);
    let sample = run.sample();
    let start = run.start(&sample, total as f64 / p as f64);
    let mut t = if start > lo && start < hi {
        start
    } else {
        lo + (hi - lo) / 2.0
    };
    if sample.len() < p {
        // On many processors, first on the sample's loads (to 10^-4 of the
        // total, finer than the sample can tell): the passes over every
        // processor then start near the optimum, where few processors leave
        // the segment they keep.
        let close = (aim * 1e-4).max(p as f64 / 4.0);
        let sampled = |t: f64| run.sampled_real_loads(t, &sample);
        t = newton(sampled, t, (aim, (aim - close, aim + close)), (lo, hi));
    }
    t = newton(|t: f64| run.real_loads(t), t, (aim, window), (lo, hi));
    let (ft, rate) = run.fits(t, &mut scratch);
    if ft >= need {
        (hi, fhi) = (t, Some(ft));
    } else {
        (lo, flo, rlo) = (t, ft, rate);
        std::mem::swap(&mut lo_loads, &mut scratch);
    }
    let mut step = 0u32;
    while need - flo > 2 * p as u128 {
        let next = next_up(lo);
        if next >= hi {
            // Adjacent times: the optimum is `hi`.
            let loads = run.fill(Some(lo), hi, need);
            return Ok(run.finish(loads, need));
        }
        let fhi_now = match fhi {
            Some(f) => f,
            None => *fhi.insert(run.fits(hi, &mut scratch).0),
        };
        step += 1;
        let t = if step % 3 == 0 || fhi_now == flo {
            lo + (hi - lo) / 2.0
        } else {
            let share = (need - flo) as f64 / (fhi_now - flo) as f64;
            lo + (hi - lo) * share
        };
        let t = t.clamp(next, hi);
        let t = if t >= hi { lo + (hi - lo) / 2.0 } else { t };
        let t = t.max(next);
        let (ft, rate) = run.fits(t, &mut scratch);
        if ft >= need {
            (hi, fhi) = (t, Some(ft));
        } else {
            (lo, flo, rlo) = (t, ft, rate);
            std::mem::swap(&mut lo_loads, &mut scratch);
        }
    }
    // At most 2p items missing below `lo`.
    if lo_loads.len() != p {
        rlo = run.fits(lo, &mut lo_loads).1;
    }
    let missing = (need - flo) as u64;
    let loads = match run.one_more_each(&lo_loads, missing, (lo, rlo)) {
        Some(loads) => loads,
        None => run.greedy_from(lo_loads, missing),
    };
    Ok(run.finish(loads, need))
}

/// How many processors, at most, start Newton's method on many processors
/// ([`Run::sample`]).
const SAMPLE: usize = 4096;

/// A balance's state: the functions, and one segment of each
/// ([`Segment`]) where the last load or time asked for lies.
struct Run<'a> {
    functions: &'a [TimeFunction],
    segments: Vec<Segment>,
    /// F(0): the items that fit within no time.
    zero: u128,
    /// The least time of one processor taking everything.
    top: f64,
}

impl<'a> Run<'a> {
    /// F(0) and the least time of everything on one processor, from what
    /// each function keeps beside its vectors (its vectors are read only by
    /// a function whose last point is beyond the total); no segment kept
    /// yet. O(p).
    fn new(functions: &'a [TimeFunction], total: u64) -> Run<'a> {
        let (mut zero, mut top) = (0u128, f64::INFINITY);
        for f in functions {
            zero += u128::from(f.free);
            top = top.min(f.time(total));
        }
        Run {
            functions,
            segments: vec![Segment::NONE; functions.len()],
            zero,
            top,
        }
    }

    /// The processors that start Newton's method, each with the number of
    /// processors it stands for: every processor up to 4 [`SAMPLE`]; beyond,
    /// one drawn at random (the same on every run) from each of [`SAMPLE`]
    /// runs of consecutive processors, a stratified sample. O(min(p,
    /// SAMPLE)).
    fn sample(&self) -> Vec<(usize, f64)> {
        let p = self.functions.len();
        if p <= 4 * SAMPLE {
            return (0..p).map(|j| (j, 1.0)).collect();
        }
        let mut rng = crate::random::SplitMix64::new(0x5eed);
        let cut = |k: usize| (k as u128 * p as u128 / SAMPLE as u128) as usize;
        (0..SAMPLE)
            .map(|k| {
                let (from, to) = (cut(k), cut(k + 1));
                (from + rng.below(to - from), (to - from) as f64)
            })
            .collect()
    }

    /// Where the tangents of the `sample`'s processors at the mean load,
    /// weighted, add up to the total less p/4 (NaN when they are all flat);
    /// each keeps its segment at the mean load. O(|sample| log m).
    fn start(&mut self, sample: &[(usize, f64)], mean: f64) -> f64 {
        let (mut weighted, mut rates) = (0.0f64, 0.0f64);
        for &(j, w) in sample {
            let f = &self.functions[j];
            let segment = f.segment(f.segment_of(mean));
            let rate = segment.rate_at(mean);
            if rate.is_finite() && rate > 0.0 {
                weighted += w * segment.time(mean) * rate;
                rates += w * rate;
            }
            self.segments[j] = segment;
        }
        // Σ_j mean + (T - t_j(mean)) r_j = total - p/4.
        (weighted - self.functions.len() as f64 / 4.0) / rates
    }

    /// Processor j's segment holding the time `seconds` (searched for and
    /// kept when the kept one does not hold it).
    fn at_time(&mut self, j: usize, seconds: f64) -> &mut Segment {
        let segment = &mut self.segments[j];
        if !segment.holds_time(seconds) {
            let f = &self.functions[j];
            *segment = f.segment(f.segment_at_time(seconds));
        }
        segment
    }

    /// Processor j's time of `load` items (its segment holding the load
    /// kept).
    fn time(&mut self, j: usize, load: u64) -> f64 {
        let x = load as f64;
        let segment = &mut self.segments[j];
        if !segment.holds_load(x) {
            let f = &self.functions[j];
            *segment = f.segment(f.segment_of(x));
        }
        segment.time(x)
    }

    /// [`TimeFunction::largest_load_within`] of processor j.
    fn largest_load_within(&mut self, j: usize, seconds: f64) -> u64 {
        if seconds.is_nan() || seconds < 0.0 {
            return 0;
        }
        let f = &self.functions[j];
        self.at_time(j, seconds)
            .largest_load_within(seconds, |x| f.time_at(x))
    }

    /// F(t), each processor's load written to `loads`, and the rates
    /// there added up (loads per second; infinite where a time is flat).
    fn fits(&mut self, t: f64, loads: &mut Vec<u64>) -> (u128, f64) {
        loads.clear();
        let (mut sum, mut rate) = (0u128, 0.0);
        for j in 0..self.functions.len() {
            let x = self.largest_load_within(j, t);
            loads.push(x);
            sum += u128::from(x);
            rate += self.segments[j].rate_at(x as f64);
        }
        (sum, rate)
    }

    /// The real loads at time t of the `sample`'s processors, each weighted
    /// by the processors it stands for, added up, and their rates.
    fn sampled_real_loads(&mut self, t: f64, sample: &[(usize, f64)]) -> (f64, f64) {
        let (mut sum, mut rate) = (0.0, 0.0);
        for &(j, w) in sample {
            let (x, q) = self.at_time(j, t).load_and_rate(t);
            sum += w * x;
            rate += w * q;
        }
        (sum, rate)
    }

    /// The real loads at time t added up, and their rates.
    fn real_loads(&mut self, t: f64) -> (f64, f64) {
        let (mut sum, mut rate) = (0.0, 0.0);
        for j in 0..self.functions.len() {
            let (x, q) = self.at_time(j, t).load_and_rate(t);
            sum += x;
            rate += q;
        }
        (sum, rate)
    }

    /// The balance of `loads` (completed to `need`) and its time.
    fn finish(&mut self, loads: Vec<u64>, need: u128) -> FunctionalBalance {
        let loads = self.complete(loads, need);
        let time = (0..loads.len())
            .map(|j| self.time(j, loads[j]))
            .fold(0.0, f64::max);
        FunctionalBalance { loads, time }
    }

    /// The loads when the `missing` items go where they end earliest, from
    /// `loads` (what fits within `lo`, where the processors' rates add up
    /// to `rate`): the optimum is the `missing`-th least of the times of
    /// the items still to place. Items ending past an upper bound of it
    /// never count: so only the items ending by a bound are listed (each
    /// processor's, up to what fits within it) and the optimum is selected
    /// among them; ties at the optimum go to the lower processors. The
    /// bound: where the rates say that `missing` items and three standard
    /// deviations more fit (when that many do), else the `missing`-th least
    /// time of each processor's next `k = ⌈missing / p⌉` items (all items
    /// still to place). `None` when more than 16p items end by the bound or
    /// more than 4p are missing (the heap then takes over). O(p k + listed)
    /// besides the time evaluations.
    fn one_more_each(
        &mut self,
        loads: &[u64],
        missing: u64,
        (lo, rate): (f64, f64),
    ) -> Option<Vec<u64>> {
        if missing == 0 {
            return Some(loads.to_vec());
        }
        let p = loads.len();
        let d = usize::try_from(missing).ok().filter(|&d| d <= 4 * p)?;
        let mut reach: Vec<u64> = Vec::with_capacity(p);
        let guess = lo + (d as f64 + 3.0 * (d as f64).sqrt() + 8.0) / rate;
        let mut listed = 0u128;
        if guess > lo && guess.is_finite() {
            for (j, &x) in loads.iter().enumerate() {
                let r = self.largest_load_within(j, guess).max(x);
                reach.push(r);
                listed += u128::from(r - x);
            }
        }
        let mut firsts: Vec<f64> = Vec::new();
        if listed < d as u128 || listed > 16 * p as u128 {
            let k = d.div_ceil(p) as u64;
            firsts.reserve(p * k as usize);
            for (j, &x) in loads.iter().enumerate() {
                for i in 1..=k {
                    firsts.push(match x.checked_add(i) {
                        Some(next) => self.time(j, next),
                        None => f64::INFINITY,
                    });
                }
            }
            let (_, &mut bound, _) = firsts.select_nth_unstable_by(d - 1, f64::total_cmp);
            if !bound.is_finite() {
                return None;
            }
            // Every item ending by the bound: processor j's next ones up to
            // what fits.
            reach.clear();
            listed = 0;
            for (j, &x) in loads.iter().enumerate() {
                let r = self.largest_load_within(j, bound).max(x);
                reach.push(r);
                listed += u128::from(r - x);
            }
        }
        if listed > 16 * p as u128 || listed < d as u128 {
            return None;
        }
        // The listed items' times, processor by processor.
        let mut times: Vec<f64> = Vec::with_capacity(listed as usize);
        for j in 0..p {
            for item in loads[j]..reach[j] {
                times.push(self.time(j, item + 1));
            }
        }
        firsts.clear();
        firsts.extend_from_slice(&times);
        let (_, &mut optimum, _) = firsts.select_nth_unstable_by(d - 1, f64::total_cmp);
        // Each processor takes its items ending before the optimum, then
        // those ending at it, lower processors first, until `missing` are
        // placed.
        let mut out = loads.to_vec();
        let mut left = missing;
        let mut at = 0;
        let mut ties = Vec::new();
        for (o, &r) in out.iter_mut().zip(&reach) {
            let mine = &times[at..at + (r - *o) as usize];
            at += mine.len();
            let below = mine.iter().take_while(|&&t| t < optimum).count();
            let level = mine[below..].iter().take_while(|&&t| t == optimum).count();
            *o += below as u64;
            left -= below as u64;
            ties.push(level as u64);
        }
        for (o, tied) in out.iter_mut().zip(ties) {
            let take = tied.min(left);
            *o += take;
            left -= take;
        }
        (left == 0).then_some(out)
    }

    /// The `missing` items given one at a time to the processor whose time
    /// after taking it is least (a heap), from `loads`.
    fn greedy_from(&mut self, mut loads: Vec<u64>, mut missing: u64) -> Vec<u64> {
        let mut heap: std::collections::BinaryHeap<Next> = (0..loads.len())
            .filter(|&j| loads[j] < u64::MAX)
            .map(|j| Next(self.time(j, loads[j] + 1), j))
            .collect();
        while missing > 0 {
            let Some(Next(_, j)) = heap.pop() else {
                break;
            };
            loads[j] += 1;
            missing -= 1;
            if loads[j] < u64::MAX {
                heap.push(Next(self.time(j, loads[j] + 1), j));
            }
        }
        loads
    }

    /// The loads of an optimum `time` reached from `below` (what fits below
    /// it; `None`: nothing), the `need` items topped up from the processors
    /// that fit more within `time`, in processor order.
    fn fill(&mut self, below: Option<f64>, time: f64, need: u128) -> Vec<u64> {
        let p = self.functions.len();
        let mut loads: Vec<u64> = (0..p)
            .map(|j| below.map_or(0, |b| self.largest_load_within(j, b)))
            .collect();
        let mut left = need.saturating_sub(loads.iter().map(|&x| u128::from(x)).sum());
        for (j, x) in loads.iter_mut().enumerate() {
            if left == 0 {
                break;
            }
            let add = u128::from(self.largest_load_within(j, time).saturating_sub(*x)).min(left);
            *x += add as u64;
            left -= add;
        }
        loads
    }

    /// Items the selection left unplaced, which only f64 rounding causes (a
    /// time evaluated a few ulps lower at a larger load, where a segment
    /// spans 10^18 items: `largest_load_within` then stops short of a load
    /// whose time is within the bound): up to 2^20 of them go one by one
    /// where they end earliest, more all to the processor where they end
    /// earliest. So the loads always add up to `need`. O(p) when nothing is
    /// missing.
    fn complete(&mut self, loads: Vec<u64>, need: u128) -> Vec<u64> {
        let held: u128 = loads.iter().map(|&x| u128::from(x)).sum();
        let Some(missing) = need.checked_sub(held).filter(|&m| m > 0) else {
            return loads;
        };
        let missing = u64::try_from(missing).expect("at most the total, a u64");
        if missing <= 1 << 20 {
            return self.greedy_from(loads, missing);
        }
        let mut loads = loads;
        let mut best: Option<(f64, usize)> = None;
        for (j, &held) in loads.iter().enumerate() {
            let Some(x) = held.checked_add(missing) else {
                continue;
            };
            let t = self.time(j, x);
            if best.is_none_or(|(b, _)| t.total_cmp(&b).is_lt()) {
                best = Some((t, j));
            }
        }
        if let Some((_, j)) = best {
            loads[j] += missing;
        }
        loads
    }
}

/// A processor's time after taking one more item, ordered least first in a
/// [`std::collections::BinaryHeap`] (ties: the lower processor index).
#[derive(Clone, Copy, Debug, PartialEq)]
struct Next(f64, usize);

impl Eq for Next {}

impl PartialOrd for Next {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for Next {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        other.0.total_cmp(&self.0).then(other.1.cmp(&self.1))
    }
}

/// The largest whole load `x` with `within(x)`, for a predicate true up to
/// some load and false beyond (0 counts as within when none is): from
/// `guess` (clamped to `0..=u64::MAX`), steps doubling down while not within
/// and up while within, then bisection between the last two. O(log d)
/// evaluations for an answer d away from the guess.
fn largest_within(guess: f64, within: impl Fn(u64) -> bool) -> u64 {
    let mut lo = if guess >= u64::MAX as f64 {
        u64::MAX
    } else {
        guess.max(0.0) as u64
    };
    let mut step = 1u64;
    while lo > 0 && !within(lo) {
        lo = lo.saturating_sub(step);
        step = step.saturating_mul(2);
    }
    let (mut hi, mut step) = (lo.saturating_add(1), 1u64);
    while within(hi) {
        if hi == u64::MAX {
            return u64::MAX;
        }
        lo = hi;
        hi = hi.saturating_add(step);
        step = step.saturating_mul(2);
    }
    while hi - lo > 1 {
        let mid = lo + (hi - lo) / 2;
        if within(mid) {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    lo
}

/// Newton's method on a non-decreasing sum of real loads (`loads`: the sum
/// at a time, and its rate) for a time where it lies in `window`, aiming at
/// `aim`, from `t` in the bracket `(a, b)`: a bisection instead of any step
/// that leaves the bracket. The last time reached, after 60 steps at most.
fn newton(
    mut loads: impl FnMut(f64) -> (f64, f64),
    mut t: f64,
    (aim, window): (f64, (f64, f64)),
    (mut a, mut b): (f64, f64),
) -> f64 {
    for _ in 0..60 {
        let (sum, rate) = loads(t);
        if sum >= window.0 && sum <= window.1 {
            break;
        }
        if sum < aim {
            a = t;
        } else {
            b = t;
        }
        let newton = t - (sum - aim) / rate;
        t = if newton > a && newton < b && newton.is_finite() {
            newton
        } else {
            a + (b - a) / 2.0
        };
        if b <= next_up(a) {
            break;
        }
    }
    t
}

/// The least f64 above `x >= 0`.
fn next_up(x: f64) -> f64 {
    if x.is_infinite() {
        x
    } else {
        f64::from_bits(x.to_bits() + 1)
    }
}

/// A partition of weighted items under time functions of the weight held.
#[derive(Clone, Debug, PartialEq)]
pub struct FunctionalPartition {
    /// `p + 1` item indices: processor j holds items `cuts[j]..cuts[j + 1]`.
    pub cuts: Vec<u64>,
    /// The least `max_j t_j(W(cuts[j]..cuts[j + 1]))` over every partition.
    pub bottleneck: f64,
    /// Each processor's time under these cuts.
    pub times: Vec<f64>,
}

/// Why a partition under time functions cannot be made.
#[derive(Clone, Debug, PartialEq)]
pub enum FunctionalPartitionError {
    /// A weight is bad (negative, NaN, infinite) or the weights overflow.
    Weights(crate::partition::PartitionError),
    /// No processors.
    NoProcessors,
}

impl fmt::Display for FunctionalPartitionError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            FunctionalPartitionError::Weights(e) => write!(f, "{e}"),
            FunctionalPartitionError::NoProcessors => {
                f.write_str("no processors to partition over")
            }
        }
    }
}

impl std::error::Error for FunctionalPartitionError {}

/// The partition of least bottleneck of items of unequal weight, in a fixed
/// order, over processors whose time is a non-decreasing function of the
/// weight they hold (`functions`, their loads read as weight units): the
/// chains-on-chains partition of [`crate::partition::partition`] with time
/// functions instead of speeds. A processor may get no item.
///
/// The method is that of [`crate::partition::partition`]: exact bisection
/// over the probe (each processor in turn takes the longest run of items
/// whose time stays within a bound, found by galloping), here over the bit
/// patterns of `f64` (at most 64 probes), so the bottleneck is the least
/// feasible one exactly.
///
/// # Errors
/// [`FunctionalPartitionError::Weights`] for a negative, NaN or infinite
/// weight or an overflowing sum; [`FunctionalPartitionError::NoProcessors`].
///
/// # Complexity
/// O(n) for the prefix sums, then at most 64 probes of O(p log(n/p) log m)
/// for n items on p processors of m points each.
///
/// # Example
/// ```
/// use hetbal::functional::{partition, Model, TimeFunction};
/// // A processor with a cliff past 10 units of weight, and a steady one.
/// let cliff = TimeFunction::new(0, &[(10, 1.0), (20, 11.0)], Model::PiecewiseLinear).unwrap();
/// let steady = TimeFunction::new(1, &[(10, 2.0)], Model::PiecewiseLinear).unwrap();
/// let p = partition(&[3.0, 3.0, 3.0, 3.0, 3.0, 3.0], &[cliff, steady]).unwrap();
/// assert_eq!(p.cuts, vec![0, 3, 6]); // 9 units on each: 0.9 s and 1.8 s
/// assert_eq!(p.bottleneck, 1.8);
/// ```
pub fn partition<W: crate::partition::Weight>(
    weights: &[W],
    functions: &[TimeFunction],
) -> Result<FunctionalPartition, FunctionalPartitionError> {
    use crate::partition::Prefix;
    if functions.is_empty() {
        return Err(FunctionalPartitionError::NoProcessors);
    }
    match W::prefix_sums(weights).map_err(FunctionalPartitionError::Weights)? {
        Prefix::Int(s) => Ok(partition_sums(&s, functions)),
        Prefix::Float(s) => Ok(partition_sums(&s, functions)),
    }
}

/// [`partition`] on prefix sums.
fn partition_sums<S: crate::partition::Sums>(
    sums: &S,
    functions: &[TimeFunction],
) -> FunctionalPartition {
    let n = sums.items();
    // The cuts the probe reaches within `bound`, if it reaches the last item.
    let probe = |bound: f64| -> Option<Vec<u64>> {
        let mut cuts = Vec::with_capacity(functions.len() + 1);
        cuts.push(0u64);
        let mut a = 0usize;
        for f in functions {
            // The last item this processor reaches within `bound` from a
            // (galloping from a, then a binary search): a itself when none.
            let reaches = |b: u64| {
                let b = usize::try_from(b).unwrap_or(usize::MAX);
                b <= a || (b <= n && f.time_at(sums.weight(a, b)) <= bound)
            };
            a = largest_within(a as f64, reaches) as usize;
            cuts.push(a as u64);
        }
        (a == n).then_some(cuts)
    };
    // Any one processor alone is feasible at its time for everything.
    let everything = functions
        .iter()
        .map(|f| f.time_at(sums.weight(0, n)))
        .fold(f64::INFINITY, f64::min);
    let (mut lo, mut hi) = (0u64, everything.to_bits());
    let mut cuts = match probe(0.0) {
        Some(c) => {
            hi = 0;
            c
        }
        None => probe(everything).expect("a processor alone fits everything"),
    };
    while hi - lo > 1 {
        let mid = lo + (hi - lo) / 2;
        match probe(f64::from_bits(mid)) {
            Some(c) => {
                hi = mid;
                cuts = c;
            }
            None => lo = mid,
        }
    }
    // The last processor ends at the last item.
    *cuts.last_mut().expect("p + 1 cuts") = n as u64;
    let times: Vec<f64> = functions
        .iter()
        .enumerate()
        .map(|(j, f)| f.time_at(sums.weight(cuts[j] as usize, cuts[j + 1] as usize)))
        .collect();
    let bottleneck = times.iter().copied().fold(0.0, f64::max);
    FunctionalPartition {
        cuts,
        bottleneck,
        times,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The optimum by trying every split of `total` (tiny instances).
    fn brute(total: u64, f: &[TimeFunction]) -> f64 {
        fn go(total: u64, f: &[TimeFunction], worst: f64, best: &mut f64) {
            if f.len() == 1 {
                *best = best.min(worst.max(f[0].time(total)));
                return;
            }
            for x in 0..=total {
                go(total - x, &f[1..], worst.max(f[0].time(x)), best);
            }
        }
        let mut best = f64::INFINITY;
        go(total, f, 0.0, &mut best);
        best
    }

    #[test]
    fn balance_meets_exhaustive_search() {
        let mut state = 7u64;
        let mut next = || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state
        };
        for case in 0..300 {
            let p = 2 + (next() % 3) as usize;
            let total = next() % 13;
            let model = if case % 2 == 0 {
                Model::PiecewiseLinear
            } else {
                Model::MonotoneCubic
            };
            let functions: Vec<TimeFunction> = (0..p)
                .map(|j| {
                    let points: Vec<(u64, f64)> = (0..1 + next() % 4)
                        .map(|_| (1 + next() % 12, (next() % 1000) as f64 / 100.0 + 0.01))
                        .collect();
                    TimeFunction::new(j, &points, model).unwrap()
                })
                .collect();
            let b = balance(total, &functions).unwrap();
            assert_eq!(b.loads.iter().sum::<u64>(), total, "case {case}");
            let best = brute(total, &functions);
            assert_eq!(b.time, best, "case {case}: {:?}", b.loads);
        }
    }

    /// The optimum by giving items one at a time to the processor whose time
    /// after taking it is least (optimal for non-decreasing times; slow).
    pub(super) fn greedy(total: u64, f: &[TimeFunction]) -> f64 {
        let mut loads = vec![0u64; f.len()];
        let mut worst = 0.0f64;
        for _ in 0..total {
            let j = (0..f.len())
                .min_by(|&a, &b| f[a].time(loads[a] + 1).total_cmp(&f[b].time(loads[b] + 1)))
                .expect("processors");
            loads[j] += 1;
            worst = worst.max(f[j].time(loads[j]));
        }
        worst
    }

    /// `p` random time functions of 1 to `most` points each, loads in
    /// `1..=max_load`, times in `seconds`: piecewise linear for even cases,
    /// monotone cubic for odd ones.
    fn random_functions(
        rng: &mut crate::random::SplitMix64,
        case: usize,
        p: usize,
        (most, max_load): (usize, u64),
        seconds: (f64, f64),
    ) -> Vec<TimeFunction> {
        let model = if case % 2 == 0 {
            Model::PiecewiseLinear
        } else {
            Model::MonotoneCubic
        };
        (0..p)
            .map(|j| {
                let points: Vec<(u64, f64)> = (0..1 + rng.below(most))
                    .map(|_| (1 + rng.below_u64(max_load), rng.range(seconds)))
                    .collect();
                TimeFunction::new(j, &points, model).unwrap()
            })
            .collect()
    }

    #[test]
    fn balance_meets_the_greedy_on_larger_instances() {
        let mut rng = crate::random::SplitMix64::new(5);
        for case in 0..40 {
            let p = 2 + rng.below(20);
            let total = rng.below_u64(20_000);
            let functions = random_functions(&mut rng, case, p, (6, 5000), (0.01, 10.0));
            let b = balance(total, &functions).unwrap();
            assert_eq!(b.loads.iter().sum::<u64>(), total, "case {case}");
            assert_eq!(b.time, greedy(total, &functions), "case {case}");
        }
    }

    #[test]
    fn extremes_neither_panic_nor_lose_items() {
        // Huge totals, times from 1e-300 to 1e300, flat functions: the loads
        // always add up to the total, and the time is that of the loads.
        type Points<'a> = &'a [&'a [(u64, f64)]];
        let cases: [(u64, Points); 6] = [
            (u64::MAX, &[&[(1, 1.0)], &[(1, 2.0)]]),
            (1 << 62, &[&[(1, 1e-300)], &[(u64::MAX, 1e300)]]),
            (1000, &[&[(1, 1e300)], &[(5, 0.0), (10, 0.0), (20, 1.0)]]),
            (
                7,
                &[&[(3, 1.0), (3, 1.0), (3, 1.0)], &[(1, 1e-12)], &[(2, 5.0)]],
            ),
            (0, &[&[(1, 1.0)]]),
            (687, &[&[(7, 1e300), (1, 3.3)], &[(1, 1e-300)]]),
        ];
        for (case, (total, points)) in cases.iter().enumerate() {
            for model in [Model::PiecewiseLinear, Model::MonotoneCubic] {
                let functions: Vec<TimeFunction> = points
                    .iter()
                    .enumerate()
                    .map(|(j, p)| TimeFunction::new(j, p, model).unwrap())
                    .collect();
                let b = balance(*total, &functions).unwrap();
                let sum: u128 = b.loads.iter().map(|&x| u128::from(x)).sum();
                assert_eq!(sum, u128::from(*total), "case {case} {model:?}");
                let time = b
                    .loads
                    .iter()
                    .zip(&functions)
                    .map(|(&x, f)| f.time(x))
                    .fold(0.0, f64::max);
                assert_eq!(b.time, time, "case {case} {model:?}");
            }
        }
    }

    #[test]
    fn partition_meets_exhaustive_search_and_the_speeds_partition() {
        let mut rng = crate::random::SplitMix64::new(11);
        for case in 0..200 {
            let (n, p) = (rng.below(7), 1 + rng.below(3));
            let weights: Vec<f64> = (0..n).map(|_| rng.below(5) as f64).collect();
            let functions = random_functions(&mut rng, case, p, (3, 12), (0.1, 5.0));
            let got = partition(&weights, &functions).unwrap();
            // Every way to cut n items into p ranges.
            let mut best = f64::INFINITY;
            let mut cuts = vec![0usize; p + 1];
            cuts[p] = n;
            fn all(k: usize, cuts: &mut Vec<usize>, w: &[f64], f: &[TimeFunction], best: &mut f64) {
                let p = f.len();
                if k == p {
                    let worst = (0..p)
                        .map(|j| f[j].time_at(w[cuts[j]..cuts[j + 1]].iter().sum()))
                        .fold(0.0, f64::max);
                    *best = best.min(worst);
                    return;
                }
                for c in cuts[k - 1]..=cuts[p] {
                    cuts[k] = c;
                    all(k + 1, cuts, w, f, best);
                }
            }
            if p == 1 {
                best = functions[0].time_at(weights.iter().sum());
            } else {
                all(1, &mut cuts, &weights, &functions, &mut best);
            }
            assert_eq!(got.bottleneck, best, "case {case}: {:?}", got.cuts);
        }
        // One point far out: a straight line through 0, the speeds' partition.
        let speeds = [1.0, 2.5, 0.75];
        let big = 1u64 << 40;
        let functions: Vec<TimeFunction> = speeds
            .iter()
            .enumerate()
            .map(|(j, &s)| {
                TimeFunction::new(j, &[(big, s * big as f64)], Model::PiecewiseLinear).unwrap()
            })
            .collect();
        let weights: Vec<f64> = (0..50).map(|i| ((i * 7) % 11) as f64).collect();
        let by_speeds = crate::partition::partition(&weights, &speeds).unwrap();
        assert_eq!(
            partition(&weights, &functions).unwrap().bottleneck,
            by_speeds.bottleneck
        );
    }

    #[test]
    fn an_optimum_beyond_the_largest_float_is_refused() {
        // Past its last point the time grows by about 1.7e307 per item: 687
        // items overflow (this hung a first version of the search).
        let f = TimeFunction::new(0, &[(7, 1e308), (1, 3.29)], Model::PiecewiseLinear).unwrap();
        assert_eq!(
            balance(687, std::slice::from_ref(&f)),
            Err(FunctionalError::TimeOverflow { total: 687 })
        );
        assert_eq!(balance(7, &[f]).unwrap().loads, vec![7]);
    }

    #[test]
    fn one_point_is_the_constant_model() {
        let f: Vec<TimeFunction> = [1.0, 2.0, 4.0]
            .iter()
            .enumerate()
            .map(|(j, &c)| TimeFunction::new(j, &[(10, 10.0 * c)], Model::PiecewiseLinear).unwrap())
            .collect();
        let b = balance(70, &f).unwrap();
        let constant = crate::balance::balanced_targets(70, &[1.0, 2.0, 4.0]).unwrap();
        assert_eq!(b.time, constant.max_time);
    }

    #[test]
    fn noise_is_pooled_and_models_never_decrease() {
        // Times that go down are pooled into their mean.
        let f = TimeFunction::new(
            0,
            &[(1, 1.0), (2, 3.0), (3, 2.0), (3, 2.0)],
            Model::MonotoneCubic,
        )
        .unwrap();
        let mut last = 0.0;
        for x in 0..=40 {
            let t = f.time_at(x as f64 / 10.0);
            assert!(t >= last, "{x}: {t} < {last}");
            last = t;
        }
        // Load 2 (3 s, once) and load 3 (2 s, twice) pool into their mean.
        assert_eq!(f.time(2), 7.0 / 3.0);
        assert_eq!(f.time(3), 7.0 / 3.0);
        assert!(matches!(
            TimeFunction::new(3, &[(0, 1.0)], Model::PiecewiseLinear),
            Err(FunctionalError::NoPoints { processor: 3 })
        ));
        assert!(matches!(
            TimeFunction::new(1, &[(4, f64::NAN)], Model::PiecewiseLinear),
            Err(FunctionalError::InvalidTime { processor: 1, .. })
        ));
        assert_eq!(balance(3, &[]), Err(FunctionalError::NoProcessors));
    }
}

#[cfg(test)]
mod fuzz_regressions {
    use super::*;

    /// The C fuzz, seed 4: segments of 2^63 items, where the cubic's time
    /// evaluated in f64 is not monotone at the ulp, left items unplaced (517 of
    /// 595). Every split of these points, both models: the loads add up to the
    /// total, and no other split is better by more than rounding.
    #[test]
    fn loads_add_up_when_segments_span_2_pow_63_items() {
        let pts = [
            (9223372036854775808u64, 6.0),
            (10, 1.0),
            (9223372036854775808, 0.048172133440055005),
            (3, 1.0412120039401418),
            (18446744073709551615, 1.0),
        ];
        for split in 1..pts.len() {
            for model in [Model::MonotoneCubic, Model::PiecewiseLinear] {
                let (Ok(f0), Ok(f1)) = (
                    TimeFunction::new(0, &pts[..split], model),
                    TimeFunction::new(1, &pts[split..], model),
                ) else {
                    continue;
                };
                for total in [1u64, 595, 10_000] {
                    let b = balance(total, &[f0.clone(), f1.clone()]).unwrap();
                    assert_eq!(
                        b.loads.iter().sum::<u64>(),
                        total,
                        "split {split} {model:?}"
                    );
                    let best = (0..=total)
                        .map(|x| f0.time(x).max(f1.time(total - x)))
                        .fold(f64::INFINITY, f64::min);
                    assert!(
                        b.time <= best * (1.0 + 1e-12),
                        "split {split} {model:?} total {total}: {} > {best}",
                        b.time
                    );
                }
            }
        }
    }
}
