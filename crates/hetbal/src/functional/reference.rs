//! The balance as it was before its passes kept one segment per processor:
//! every pass searched every function's knots, and the cubic's load was
//! guessed on its chord. Kept, for the tests only, as a reference that the
//! faster balance must meet exactly.

use super::{largest_within, newton, next_up, FunctionalBalance, FunctionalError, TimeFunction};

/// The previous evaluations of a [`TimeFunction`] (the same arithmetic).
trait Old {
    fn old_time(&self, load: u64) -> f64;
    fn old_time_at(&self, x: f64) -> f64;
    fn old_segment_of(&self, x: f64) -> usize;
    fn old_time_in(&self, i: usize, x: f64) -> f64;
    fn old_time_near(&self, hint: usize, x: f64) -> f64;
    fn old_largest_load_within(&self, seconds: f64) -> u64;
    fn old_load_and_rate(&self, seconds: f64) -> (f64, f64);
}

impl Old for TimeFunction {
    /// The model's time of `load` items. O(log m).
    fn old_time(&self, load: u64) -> f64 {
        self.old_time_at(load as f64)
    }

    /// The time at a real load `x >= 0`.
    fn old_time_at(&self, x: f64) -> f64 {
        self.old_time_in(self.old_segment_of(x), x)
    }

    /// The segment holding load `x`: i with `loads[i] <= x < loads[i + 1]`,
    /// or the last knot's index past it. O(log m).
    fn old_segment_of(&self, x: f64) -> usize {
        let last = self.loads.len() - 1;
        if x >= self.loads[last] {
            last
        } else {
            self.loads.partition_point(|&l| l <= x) - 1
        }
    }

    /// The time at `x` in segment `i` (as [`TimeFunction::segment_of`]
    /// gives). O(1).
    fn old_time_in(&self, i: usize, x: f64) -> f64 {
        let last = self.loads.len() - 1;
        if i == last {
            return self.times[last] + (x - self.loads[last]) * self.tail;
        }
        let (x0, x1, y0, y1) = (
            self.loads[i],
            self.loads[i + 1],
            self.times[i],
            self.times[i + 1],
        );
        let h = x1 - x0;
        let s = (x - x0) / h;
        match &self.slopes {
            // Clamped to the segment's ends, as the cubic: rounding never
            // makes the time decrease from one segment to the next.
            None => (y0 + (y1 - y0) * s).clamp(y0, y1),
            Some(d) => {
                // Cubic Hermite on [x0, x1].
                let (h00, h10) = (
                    (1.0 + 2.0 * s) * (1.0 - s) * (1.0 - s),
                    s * (1.0 - s) * (1.0 - s),
                );
                let (h01, h11) = (s * s * (3.0 - 2.0 * s), s * s * (s - 1.0));
                let y = h00 * y0 + h10 * h * d[i] + h01 * y1 + h11 * h * d[i + 1];
                // Rounding may step a hair outside [y0, y1]: clamp.
                y.clamp(y0, y1)
            }
        }
    }

    /// The time at `x`, looked for first in segment `hint` (the same value as
    /// [`TimeFunction::time_at`], without the search when `x` is there).
    fn old_time_near(&self, hint: usize, x: f64) -> f64 {
        let last = self.loads.len() - 1;
        let inside = match hint {
            i if i == last => x >= self.loads[last],
            i => self.loads[i] <= x && x < self.loads[i + 1],
        };
        if inside {
            self.old_time_in(hint, x)
        } else {
            self.old_time_at(x)
        }
    }

    /// The largest load whose time is at most `seconds` (`u64::MAX` when the
    /// time never exceeds it: a flat function; 0 for a negative or NaN
    /// time). The segment where the time crosses `seconds` is found among the
    /// knots, the load guessed by its straight line, and the guess corrected
    /// by the model's own times (a galloping search, a few steps).
    ///
    /// Complexity: O(log m) for m points, times the few steps of the
    /// correction.
    fn old_largest_load_within(&self, seconds: f64) -> u64 {
        if seconds.is_nan() || seconds < 0.0 {
            return 0;
        }
        let m = self.loads.len();
        // Knots whose time is within `seconds`: at least (0, 0).
        let k = self.times.partition_point(|&t| t <= seconds);
        let hint = k - 1;
        let guess = if k == m {
            if self.tail <= 0.0 {
                return u64::MAX;
            }
            self.loads[m - 1] + (seconds - self.times[m - 1]) / self.tail
        } else {
            let (x0, x1, y0, y1) = (
                self.loads[k - 1],
                self.loads[k],
                self.times[k - 1],
                self.times[k],
            );
            x0 + (seconds - y0) / (y1 - y0) * (x1 - x0)
        };
        let within = |x: u64| self.old_time_near(hint, x as f64) <= seconds;
        largest_within(guess, within)
    }

    /// The model's load at time `seconds` as a real number, read on the
    /// straight line of the segment where the time crosses it (exact for the
    /// piecewise-linear model, the segment's chord for the cubic), and its
    /// rate (loads per second there; infinite on a flat part). O(log m).
    fn old_load_and_rate(&self, seconds: f64) -> (f64, f64) {
        let m = self.loads.len();
        let k = self.times.partition_point(|&t| t <= seconds);
        if k == m {
            let rate = 1.0 / self.tail;
            return (
                self.loads[m - 1] + (seconds - self.times[m - 1]) * rate,
                rate,
            );
        }
        let (x0, x1, y0, y1) = (
            self.loads[k - 1],
            self.loads[k],
            self.times[k - 1],
            self.times[k],
        );
        let rate = (x1 - x0) / (y1 - y0);
        (x0 + (seconds - y0) * rate, rate)
    }
}

/// The balance as the module computed it before its segments were kept
/// (each pass searching every function's knots).
pub(super) fn balance(
    total: u64,
    functions: &[TimeFunction],
) -> Result<FunctionalBalance, FunctionalError> {
    let p = functions.len();
    if p == 0 {
        return Err(FunctionalError::NoProcessors);
    }
    let fits = |t: f64| -> u128 {
        functions
            .iter()
            .map(|f| u128::from(f.old_largest_load_within(t)))
            .sum()
    };
    let need = u128::from(total);
    let result = |loads: Vec<u64>| {
        let loads = complete(functions, loads, need);
        let time = loads
            .iter()
            .zip(functions)
            .map(|(&x, f)| f.old_time(x))
            .fold(0.0, f64::max);
        Ok(FunctionalBalance { loads, time })
    };
    if fits(0.0) >= need {
        return result(fill(functions, None, 0.0, need));
    }
    // A feasible time: any processor alone can take everything; beyond the
    // largest f64, the optimum overflows.
    let (mut lo, mut flo) = (0.0f64, fits(0.0));
    let mut hi = functions
        .iter()
        .map(|f| f.old_time(total))
        .fold(f64::INFINITY, f64::min);
    if !hi.is_finite() {
        if fits(f64::MAX) < need {
            return Err(FunctionalError::TimeOverflow { total });
        }
        hi = f64::MAX;
    }
    let mut fhi = fits(hi);
    // Newton's method on the loads' real sum (cheap: no rounding to items):
    // a time where it falls short of the total by about p/2, so that the
    // items below it miss at most 2p (each processor loses less than one
    // to rounding).
    let aim = need as f64 - p as f64 / 2.0;
    // Started from the constant model of each processor's last point.
    let rate: f64 = functions
        .iter()
        .map(|f| f.loads[f.loads.len() - 1] / f.times[f.times.len() - 1])
        .sum();
    let start = aim / rate;
    let t = if start > lo && start < hi {
        start
    } else {
        lo + (hi - lo) / 2.0
    };
    let t = newton(
        |t| {
            functions
                .iter()
                .map(|f| f.old_load_and_rate(t))
                .fold((0.0, 0.0), |(s, r), (x, q)| (s + x, r + q))
        },
        t,
        (aim, (aim - p as f64 / 2.0, aim)),
        (lo, hi),
    );
    let ft = fits(t);
    if ft < need && need - ft <= 2 * p as u128 {
        (lo, flo) = (t, ft);
    } else if ft >= need {
        (hi, fhi) = (t, ft);
    } else {
        (lo, flo) = (t, ft);
    }
    let mut step = 0u32;
    while need - flo > 2 * p as u128 {
        let next = next_up(lo);
        if next >= hi {
            // Adjacent times: the optimum is `hi`.
            return result(fill(functions, Some(lo), hi, need));
        }
        step += 1;
        let t = if step % 3 == 0 || fhi == flo {
            lo + (hi - lo) / 2.0
        } else {
            let share = (need - flo) as f64 / (fhi - flo) as f64;
            lo + (hi - lo) * share
        };
        let t = t.clamp(next, hi);
        let t = if t >= hi { lo + (hi - lo) / 2.0 } else { t };
        let t = t.max(next);
        let ft = fits(t);
        if ft >= need {
            (hi, fhi) = (t, ft);
        } else {
            (lo, flo) = (t, ft);
        }
    }
    // At most 2p items missing below `lo`.
    let loads: Vec<u64> = functions
        .iter()
        .map(|f| f.old_largest_load_within(lo))
        .collect();
    let missing = (need - flo) as u64;
    if let Some(loads) = one_more_each(functions, &loads, missing) {
        return result(loads);
    }
    result(greedy_from(functions, loads, missing))
}

/// The loads when the `missing` items go where they end earliest: the
/// optimum is the `missing`-th least of the times of the items still to
/// place. Those beyond the `missing`-th least next item (an upper bound) never
/// count, so only the items ending by then are listed (each processor's, up
/// to what fits within the bound) and the optimum is selected among them;
/// ties at the optimum go to the lower processors. `None` when more than 16p
/// items end by the bound (the heap then takes over). O(p + listed) besides
/// the time evaluations.
fn one_more_each(functions: &[TimeFunction], loads: &[u64], missing: u64) -> Option<Vec<u64>> {
    if missing == 0 {
        return Some(loads.to_vec());
    }
    let p = functions.len();
    let next = |x: u64, f: &TimeFunction| {
        if x == u64::MAX {
            f64::INFINITY
        } else {
            f.old_time(x + 1)
        }
    };
    let d = usize::try_from(missing).ok().filter(|&d| d <= p)?;
    let mut firsts: Vec<f64> = loads
        .iter()
        .zip(functions)
        .map(|(&x, f)| next(x, f))
        .collect();
    let (_, &mut bound, _) = firsts.select_nth_unstable_by(d - 1, f64::total_cmp);
    if !bound.is_finite() {
        return None;
    }
    // Every item ending by the bound: processor j's next ones up to what fits.
    let reach: Vec<u64> = functions
        .iter()
        .zip(loads)
        .map(|(f, &x)| f.old_largest_load_within(bound).max(x))
        .collect();
    let listed: u128 = reach
        .iter()
        .zip(loads)
        .map(|(&r, &x)| u128::from(r - x))
        .sum();
    if listed > 16 * p as u128 || listed < d as u128 {
        return None;
    }
    let mut times: Vec<f64> = Vec::with_capacity(listed as usize);
    for ((f, &x), &r) in functions.iter().zip(loads).zip(&reach) {
        times.extend((x + 1..=r).map(|k| f.old_time(k)));
    }
    let (_, &mut optimum, _) = times.select_nth_unstable_by(d - 1, f64::total_cmp);
    // Each processor takes its items ending before the optimum, then those
    // ending at it, lower processors first, until `missing` are placed.
    let mut out = loads.to_vec();
    let mut left = missing;
    for ((o, f), &r) in out.iter_mut().zip(functions).zip(&reach) {
        let below = (*o + 1..=r)
            .take_while(|&k| f.old_time(k) < optimum)
            .count() as u64;
        *o += below;
        left -= below;
    }
    for ((o, f), &r) in out.iter_mut().zip(functions).zip(&reach) {
        while left > 0 && *o < r && f.old_time(*o + 1) == optimum {
            *o += 1;
            left -= 1;
        }
    }
    (left == 0).then_some(out)
}

/// The `missing` items given one at a time to the processor whose time after
/// taking it is least (a heap), from `loads`.
fn greedy_from(functions: &[TimeFunction], mut loads: Vec<u64>, mut missing: u64) -> Vec<u64> {
    let mut heap: std::collections::BinaryHeap<Next> = loads
        .iter()
        .zip(functions)
        .enumerate()
        .filter(|(_, (&x, _))| x < u64::MAX)
        .map(|(j, (&x, f))| Next(f.old_time(x + 1), j))
        .collect();
    while missing > 0 {
        let Some(Next(_, j)) = heap.pop() else {
            break;
        };
        loads[j] += 1;
        missing -= 1;
        if loads[j] < u64::MAX {
            heap.push(Next(functions[j].old_time(loads[j] + 1), j));
        }
    }
    loads
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

/// The loads of an optimum `time` reached from `below` (what fits below it;
/// `None`: nothing), the `need` items topped up from the processors that fit
/// more within `time`, in processor order.
fn fill(functions: &[TimeFunction], below: Option<f64>, time: f64, need: u128) -> Vec<u64> {
    let mut loads: Vec<u64> = functions
        .iter()
        .map(|f| below.map_or(0, |b| f.old_largest_load_within(b)))
        .collect();
    let mut left = need.saturating_sub(loads.iter().map(|&x| u128::from(x)).sum());
    for (x, f) in loads.iter_mut().zip(functions) {
        if left == 0 {
            break;
        }
        let add = u128::from(f.old_largest_load_within(time).saturating_sub(*x)).min(left);
        *x += add as u64;
        left -= add;
    }
    loads
}

/// Items the selection left unplaced, which only f64 rounding causes (a time
/// evaluated a few ulps lower at a larger load, where a segment spans 10^18
/// items: `largest_load_within` then stops short of a load whose time is
/// within the bound): up to 2^20 of them go one by one where they end
/// earliest, more all to the processor where they end earliest. So the loads
/// always add up to `need`. O(p) when nothing is missing.
fn complete(functions: &[TimeFunction], loads: Vec<u64>, need: u128) -> Vec<u64> {
    let held: u128 = loads.iter().map(|&x| u128::from(x)).sum();
    let Some(missing) = need.checked_sub(held).filter(|&m| m > 0) else {
        return loads;
    };
    let missing = u64::try_from(missing).expect("at most the total, a u64");
    if missing <= 1 << 20 {
        return greedy_from(functions, loads, missing);
    }
    let mut loads = loads;
    let best = (0..loads.len())
        .filter(|&j| loads[j].checked_add(missing).is_some())
        .min_by(|&a, &b| {
            functions[a]
                .old_time(loads[a] + missing)
                .total_cmp(&functions[b].old_time(loads[b] + missing))
        });
    if let Some(j) = best {
        loads[j] += missing;
    }
    loads
}

mod tests {
    use super::super::{balance as fast, Model, TimeFunction};
    use super::{balance as reference, Old};
    use crate::random::SplitMix64;

    /// The scales of [`points`]: 10 to 2^62 items.
    const SCALES: [u64; 6] = [10, 1000, 1 << 20, 1_000_000_000, 1 << 40, 1 << 62];

    /// A random processor's points: a straight line, a memory cliff, flat
    /// steps (times repeated, the first ones possibly 0), a start-up then
    /// fast, a single point, or anything, at one of `scales` (returned too).
    fn points(rng: &mut SplitMix64, scales: &[u64]) -> (Vec<(u64, f64)>, u64) {
        let scale = scales[rng.below(scales.len())];
        let speed = rng.range((0.1, 10.0)) / scale as f64;
        let m = 1 + rng.below(8);
        let mut loads: Vec<u64> = (0..m).map(|_| 1 + rng.below_u64(scale)).collect();
        loads.sort_unstable();
        let kind = rng.below(6);
        let cliff = loads[rng.below(m)];
        let points = loads
            .iter()
            .enumerate()
            .map(|(k, &x)| {
                let t = match kind {
                    0 => x as f64 * speed,
                    1 if x > cliff => {
                        cliff as f64 * speed + (x - cliff) as f64 * speed * rng.range((5.0, 1e4))
                    }
                    1 => x as f64 * speed,
                    2 => (k / 2) as f64 * speed * scale as f64 / 4.0,
                    3 => scale as f64 * speed * 0.3 + x as f64 * speed / 10.0,
                    4 => rng.range((0.0, 3.0)),
                    _ => rng.range((1e-3, 10.0)) * [1e-9, 1.0, 1e6][rng.below(3)],
                };
                (x, t)
            })
            .take(if kind == 4 { 1 } else { m })
            .collect();
        (points, scale)
    }

    /// The balance with its segments kept meets the previous balance exactly
    /// (loads, time, or error) on random instances: cliffs, flat steps,
    /// single points, one processor, both models mixed, totals up to 2^64 -
    /// 1; and the item-by-item greedy on the small ones. Where a cubic
    /// segment spans more than 2^53 items, its time evaluated in f64 is not
    /// monotone at the ulp, so the largest load within a time depends on
    /// where its search starts (the cubic's inverse now, its chord before):
    /// there the time is the same to 1e-12 and the loads add up.
    #[test]
    fn the_fast_balance_meets_the_previous_one_exactly() {
        let mut rng = SplitMix64::new(2024);
        let (mut exact, mut rounded) = (0, 0);
        for case in 0..4000 {
            let p = match case % 5 {
                0 => 1,
                1 => 2,
                _ => 1 + rng.below(40),
            };
            let mut wild = false;
            let functions: Vec<TimeFunction> = (0..p)
                .filter_map(|j| {
                    let model = Model::ALL[rng.below(2)];
                    let (points, scale) = points(&mut rng, &SCALES);
                    wild |= model == Model::MonotoneCubic && scale > 1 << 53;
                    TimeFunction::new(j, &points, model).ok()
                })
                .collect();
            if functions.is_empty() {
                continue;
            }
            let total = match rng.below(6) {
                0 => rng.below_u64(30),
                1 => rng.below_u64(100_000),
                2 => rng.below_u64(1 << 40),
                3 => (1 << 63) - rng.below_u64(1000),
                4 => u64::MAX - rng.below_u64(3),
                _ => rng.next_u64(),
            };
            let (got, want) = (fast(total, &functions), reference(total, &functions));
            if let Ok(b) = &got {
                let sum: u128 = b.loads.iter().map(|&x| u128::from(x)).sum();
                assert_eq!(sum, u128::from(total), "case {case}");
                if total < 30 {
                    let greedy = super::super::tests::greedy(total, &functions);
                    assert_eq!(b.time, greedy, "case {case}");
                }
            }
            if !wild {
                assert_eq!(got, want, "case {case} total {total}");
                exact += 1;
                continue;
            }
            match (got, want) {
                (Ok(g), Ok(w)) => assert!(
                    (g.time - w.time).abs() <= 1e-12 * w.time,
                    "case {case} total {total}: {} against {}",
                    g.time,
                    w.time
                ),
                (g, w) => assert_eq!(g, w, "case {case} total {total}"),
            }
            rounded += 1;
        }
        assert!(
            exact > 2000 && rounded > 500,
            "{exact} exact, {rounded} rounded"
        );
    }

    /// Many processors at once, as the benchmark's (a start-up then fast, a
    /// memory cliff, cache steps), both models: the same loads as before.
    #[test]
    fn the_fast_balance_meets_the_previous_one_on_many_processors() {
        let mut rng = SplitMix64::new(33);
        for model in Model::ALL {
            let sizes = [
                (3000, 30_000_000u64),
                (2000, 1 << 62),
                (500, 12345),
                (20_000, 200_000_000),
                (20_000, 6_000_000_000),
            ];
            for (p, total) in sizes {
                let functions: Vec<TimeFunction> = (0..p)
                    .map(|j| {
                        let speed = rng.range((1.0, 8.0)) * 1e-9;
                        let pts: Vec<(u64, f64)> = (1..=32u64)
                            .map(|k| {
                                let x = k * 31_250;
                                let t = match j % 3 {
                                    0 => 2e-3 + x as f64 * speed / 4.0,
                                    1 if x > 500_000 => {
                                        500_000.0 * speed + (x - 500_000) as f64 * speed * 6.0
                                    }
                                    1 => x as f64 * speed,
                                    _ => x as f64 * speed * (1.0 + (x / 200_000) as f64 * 0.5),
                                };
                                (x, t)
                            })
                            .collect();
                        TimeFunction::new(j, &pts, model).unwrap()
                    })
                    .collect();
                assert_eq!(
                    fast(total, &functions),
                    reference(total, &functions),
                    "{model:?} p {p} total {total}"
                );
            }
        }
    }

    /// Past 4 x 4096 processors, Newton's method starts on a sample of them:
    /// the same loads as before on many processors of every kind (each model
    /// alone, then mixed), small, large and huge totals.
    #[test]
    fn the_sampled_start_meets_the_previous_balance() {
        let mut rng = SplitMix64::new(77);
        for case in 0..3 {
            let p = 16_385 + rng.below(4000);
            let functions: Vec<TimeFunction> = (0..p)
                .filter_map(|j| {
                    let model = Model::ALL.get(case).copied();
                    let model = model.unwrap_or_else(|| Model::ALL[rng.below(2)]);
                    // Cubic segments within 2^53 items: the exact same loads.
                    let (points, _) = points(&mut rng, &SCALES[..5]);
                    TimeFunction::new(j, &points, model).ok()
                })
                .collect();
            for total in [
                rng.below_u64(1 << 16),
                rng.below_u64(1 << 40),
                (1 << 63) + rng.below_u64(1 << 40),
            ] {
                let got = fast(total, &functions);
                assert_eq!(got, reference(total, &functions), "case {case} {total}");
                let sum: u128 = got.unwrap().loads.iter().map(|&x| u128::from(x)).sum();
                assert_eq!(sum, u128::from(total), "case {case} {total}");
            }
        }
    }

    /// The largest load within a time, its cubic load now guessed by the
    /// cubic's inverse instead of its chord: the same loads (where a cubic
    /// segment spans more than 2^53 items, each still a load within the time
    /// whose next is beyond it).
    #[test]
    fn largest_load_within_is_unchanged() {
        let mut rng = SplitMix64::new(8);
        for case in 0..4000 {
            let model = Model::ALL[case % 2];
            let (points, scale) = points(&mut rng, &SCALES);
            let Ok(f) = TimeFunction::new(0, &points, model) else {
                continue;
            };
            let last = f.times[f.times.len() - 1];
            for _ in 0..20 {
                let seconds = rng.range((0.0, 1.5 * last));
                let (new, old) = (
                    f.largest_load_within(seconds),
                    f.old_largest_load_within(seconds),
                );
                if model == Model::PiecewiseLinear || scale <= 1 << 53 {
                    assert_eq!(new, old, "case {case} {seconds}");
                } else {
                    assert!(f.time(new) <= seconds, "case {case} {seconds}");
                    assert!(
                        new == u64::MAX || f.time(new + 1) > seconds,
                        "case {case} {seconds}"
                    );
                }
            }
        }
    }
}
