//! The partition within a tolerance of the optimum that moves the fewest bytes.

use super::error::{check_cuts, check_speeds};
use super::exact::{partition_sums, reach, time, times_of, weights_of, Partition};
use super::prefix::{size_sums, Prefix, Sums, Weight};
use super::sources::{least_moving_by_sources, reach_back};
use super::PartitionError;
use serde::Serialize;

/// A partition chosen for how little it moves, and what it costs.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct MovingPartition {
    /// `p + 1` item indices: processor `j` holds items `cuts[j]..cuts[j+1]`.
    pub cuts: Vec<u64>,
    /// The bottleneck of these cuts (at most `limit`).
    pub bottleneck: f64,
    /// Each processor's time under these cuts.
    pub times: Vec<f64>,
    /// Each processor's weight under these cuts.
    pub weights: Vec<f64>,
    /// The least bottleneck of any partition ([`partition`](super::partition)),
    /// with its cuts and lower bound.
    pub optimum: Partition,
    /// `optimum.bottleneck * (1 + tolerance)`: no processor's time exceeds it.
    pub limit: f64,
    /// Bytes of the items whose owner changes from the current cuts (the least
    /// of any partition within `limit`).
    pub moved_bytes: u64,
    /// The number of items whose owner changes.
    pub moved_items: u64,
}

/// Among the partitions whose bottleneck is within `1 + tolerance` of the
/// optimum, one that moves the fewest bytes away from the `current` cuts (an
/// item moves when its owner changes; it weighs `sizes[i]` bytes, 1 each when
/// `sizes` is `None`).
///
/// With `tolerance = 0` it picks, among the optimal partitions, the one that
/// moves least; with a larger tolerance it keeps more of the current
/// distribution: when the current cuts are already within the limit, nothing
/// moves. This is the trade-off AMReX's knapsack exposes as `keep_ratio`,
/// made exact.
///
/// The method is exact, by two dynamic programmes over the cuts. The first
/// works on **sources**: among the least-moving partitions take one whose cuts
/// are nearest the current ones; each cut then stays, or is pushed left or
/// right by a neighbouring processor that is full, so the cuts form runs that
/// start at cuts that stay and at overloaded processors that float inside
/// their current range, and meet at processors that keep their whole current
/// range (the module `sources` has the argument). It is fast when few
/// processors are overloaded and the runs are short, as after some processors
/// slowed down; past a budget of 8(n + p) steps the second takes over: for
/// each cut position, the most bytes the processors before it can keep, over
/// the **window** `[lo_j, hi_j]` each cut can take under the limit (`hi_j` how
/// far the first `j` processors reach, `lo_j` how far back the last `p − j`
/// reach), the best predecessor found by three sliding-window maxima. Both are
/// checked against exhaustive search on tiny instances and against each
/// other.
///
/// # Arguments
/// * `weights`, `seconds_per_unit` - as for [`partition`](super::partition);
/// * `current` - the cuts the items are at now (`p + 1` entries, from 0 to
///   `n`, non-decreasing);
/// * `tolerance` - how much above the optimal bottleneck the result may be, as
///   a fraction (0.05: 5 %); finite, >= 0;
/// * `sizes` - each item's size in bytes (`None`: 1 each, so that bytes count
///   items).
///
/// # Errors
/// [`PartitionError`] for a bad weight, speed, tolerance, size or list of cuts,
/// naming the argument and the position.
///
/// # Complexity
/// O(n) for the prefix sums and the optimum. Then, by sources, O((S + R)
/// log n) for S floating positions tried and runs of R cuts in all (16 ms at
/// n = 10^6, p = 1,000 after one processor in ten slowed down), O(n + p + R)
/// memory; over the windows (when that exceeds 8(n + p) steps), O(Σ_j (hi_j −
/// lo_j)) time, twice (forward keeping every ⌈√p⌉-th stage, then back block by
/// block), and O(n + √p · max_j (hi_j − lo_j)) memory. Nothing is computed
/// when the current cuts are within the limit.
///
/// # Example
/// ```
/// use hetbal::partition::partition_with_movement;
///
/// let weights = [1u64, 1, 1, 1, 1, 1, 1, 1];
/// // Now 5 + 3; the optimum for equal speeds is 4 + 4.
/// let exact = partition_with_movement(&weights, &[1.0, 1.0], &[0, 5, 8], 0.0, None).unwrap();
/// assert_eq!((exact.cuts, exact.moved_items), (vec![0, 4, 8], 1));
/// // 25 % above the optimum is allowed: 5 + 3 is within it, nothing moves.
/// let lazy = partition_with_movement(&weights, &[1.0, 1.0], &[0, 5, 8], 0.25, None).unwrap();
/// assert_eq!((lazy.cuts, lazy.moved_bytes), (vec![0, 5, 8], 0));
/// ```
#[doc(alias = "keep_ratio")]
pub fn partition_with_movement<W: Weight>(
    weights: &[W],
    seconds_per_unit: &[f64],
    current: &[u64],
    tolerance: f64,
    sizes: Option<&[u64]>,
) -> Result<MovingPartition, PartitionError> {
    check_speeds(seconds_per_unit)?;
    let n = weights.len();
    check_cuts("current", current, seconds_per_unit.len(), n as u64)?;
    if !(tolerance.is_finite() && tolerance >= 0.0) {
        return Err(PartitionError::InvalidTolerance(tolerance));
    }
    let bytes = size_sums(sizes, n)?;
    if bytes[n] > i64::MAX as u64 {
        return Err(PartitionError::Limit {
            what: format!(
                "the sizes add up to {} bytes: at most 2^63 - 1 are supported",
                bytes[n]
            ),
        });
    }
    let prefix = W::prefix_sums(weights)?;
    let optimum = partition_sums(&prefix, seconds_per_unit)?;
    let limit = optimum.bottleneck * (1.0 + tolerance);
    let current: Vec<usize> = current.iter().map(|&c| c as usize).collect();
    let (cuts, times, bottleneck, loads) = match &prefix {
        Prefix::Int(s) => least_moving(s, seconds_per_unit, &current, &bytes, limit),
        Prefix::Float(s) => least_moving(s, seconds_per_unit, &current, &bytes, limit),
    };
    let kept_bytes: u64 = overlaps(&current, &cuts)
        .map(|(a, b)| bytes[b] - bytes[a])
        .sum();
    let kept_items: usize = overlaps(&current, &cuts).map(|(a, b)| b - a).sum();
    Ok(MovingPartition {
        cuts: cuts.iter().map(|&c| c as u64).collect(),
        bottleneck,
        times,
        weights: loads,
        optimum,
        limit,
        moved_bytes: bytes[n] - kept_bytes,
        moved_items: (n - kept_items) as u64,
    })
}

/// Each processor's kept range: the overlap of its range under `a` and `b`
/// (empty overlaps left out).
pub(crate) fn overlaps<'a>(
    a: &'a [usize],
    b: &'a [usize],
) -> impl Iterator<Item = (usize, usize)> + 'a {
    (0..a.len() - 1).filter_map(move |j| {
        let lo = a[j].max(b[j]);
        let hi = a[j + 1].min(b[j + 1]);
        (lo < hi).then_some((lo, hi))
    })
}

/// A sliding-window maximum over positions `x` with non-decreasing window ends:
/// a monotone queue in a vector (positions and keys, the front at `head`).
struct WindowMax {
    queue: Vec<(usize, i64)>,
    head: usize,
    /// The next position to push.
    next: usize,
}

impl WindowMax {
    fn new(start: usize) -> Self {
        WindowMax {
            queue: Vec::new(),
            head: 0,
            next: start,
        }
    }
    /// The position of the largest key in `lo..=hi` (None when empty); ties to
    /// the latest position. Both ends must never decrease between calls.
    #[inline]
    fn best(&mut self, lo: usize, hi: Option<usize>, key: impl Fn(usize) -> i64) -> Option<usize> {
        if let Some(hi) = hi {
            self.next = self.next.max(lo);
            while self.next <= hi {
                let k = key(self.next);
                while self.queue.len() > self.head && self.queue[self.queue.len() - 1].1 <= k {
                    self.queue.pop();
                }
                self.queue.push((self.next, k));
                self.next += 1;
            }
        }
        while self.head < self.queue.len() && self.queue[self.head].0 < lo {
            self.head += 1;
        }
        if self.head == self.queue.len() {
            self.queue.clear();
            self.head = 0;
            return None;
        }
        match hi {
            Some(hi) if self.queue[self.head].0 <= hi => Some(self.queue[self.head].0),
            _ => None,
        }
    }
}

fn least_moving<S: Sums>(
    sums: &S,
    speeds: &[f64],
    current: &[usize],
    bytes: &[u64],
    limit: f64,
) -> (Vec<usize>, Vec<f64>, f64, Vec<f64>) {
    let (times, now) = times_of(sums, speeds, current);
    if now <= limit {
        return (current.to_vec(), times, now, weights_of(sums, current));
    }
    let budget = 8 * (sums.items() + speeds.len());
    let cuts = least_moving_by_sources(sums, speeds, current, bytes, limit, budget)
        .unwrap_or_else(|| windows(sums, speeds, current, bytes, limit));
    let (times, bottleneck) = times_of(sums, speeds, &cuts);
    let loads = weights_of(sums, &cuts);
    (cuts, times, bottleneck, loads)
}

/// The least-moving partition by a dynamic programme over the windows of the
/// cuts: O(Σ_j (hi_j − lo_j)) time (two passes), O(sqrt(p) max_j (hi_j − lo_j))
/// memory.
pub(super) fn windows<S: Sums>(
    sums: &S,
    speeds: &[f64],
    current: &[usize],
    bytes: &[u64],
    limit: f64,
) -> Vec<usize> {
    let n = sums.items();
    let p = speeds.len();
    // Windows of the cuts: hi by the greedy from the left, lo from the right.
    let mut hi = vec![0usize; p + 1];
    for j in 0..p {
        hi[j + 1] = reach(sums, speeds[j], hi[j], limit, hi[j]);
    }
    debug_assert_eq!(hi[p], n, "the limit is at least the optimum");
    let mut lo = vec![n; p + 1];
    for j in (0..p).rev() {
        lo[j] = reach_back(sums, speeds[j], lo[j + 1], limit);
    }
    lo[0] = 0;
    hi[0] = 0;
    lo[p] = n;
    // stage(j, f): from f[x - lo[j]], the most bytes processors 0..j-1 can
    // keep with x_j = x, the same for x_{j+1}.
    let stage = |j: usize, f: &[u64]| -> Vec<u64> {
        let (lo_j, c_j, c_next) = (lo[j], current[j], current[j + 1]);
        let value = |x: usize| f[x - lo_j];
        let signed = |x: usize| f[x - lo_j] as i64;
        let mut before = WindowMax::new(lo_j);
        let mut inside = WindowMax::new(lo_j);
        let mut after = WindowMax::new(lo_j);
        let mut back = reach_back(sums, speeds[j], lo[j + 1], limit);
        let mut g = Vec::with_capacity(hi[j + 1] - lo[j + 1] + 1);
        for y in lo[j + 1]..=hi[j + 1] {
            while time(sums, speeds[j], back, y) > limit {
                back += 1;
            }
            let a = lo_j.max(back);
            let b = hi[j].min(y);
            let m = c_next.min(y);
            let mut best = 0u64;
            // x <= c_j: the processor keeps c_j..m.
            let upto = (a <= b.min(c_j)).then_some(b.min(c_j));
            if let Some(x) = before.best(a, upto, signed) {
                let keep = if m > c_j { bytes[m] - bytes[c_j] } else { 0 };
                best = best.max(value(x) + keep);
            }
            // c_j < x < m: it keeps x..m.
            let start = a.max(c_j + 1);
            let end = (m >= 1 && start <= b.min(m - 1)).then(|| b.min(m - 1));
            if let Some(x) = inside.best(start, end, |x| value(x) as i64 - bytes[x] as i64) {
                best = best.max(value(x) + (bytes[m] - bytes[x]));
            }
            // x > c_j and x >= m: it keeps nothing of its current range.
            let start = a.max(c_j + 1).max(m);
            let end = (start <= b).then_some(b);
            if let Some(x) = after.best(start, end, signed) {
                best = best.max(value(x));
            }
            g.push(best);
        }
        g
    };
    // Forward, keeping the values of every K-th stage only (K about sqrt(p)):
    // memory O(sqrt(p) * width) instead of O(p * width), for one more pass.
    let k = ((p as f64).sqrt().ceil() as usize).max(1);
    let mut checkpoints: Vec<Vec<u64>> = Vec::with_capacity(p / k + 1);
    let mut f = vec![0u64];
    for j in 0..p {
        if j % k == 0 {
            checkpoints.push(f.clone());
        }
        f = stage(j, &f);
    }
    drop(f);
    // Back from x_p = n, block by block: each step takes a predecessor that
    // attains the value, the one nearest the current cut.
    let mut cuts = vec![0usize; p + 1];
    cuts[p] = n;
    for block in (0..checkpoints.len()).rev() {
        let first = block * k;
        let last = (first + k).min(p);
        let mut kept: Vec<Vec<u64>> = Vec::with_capacity(last - first + 1);
        kept.push(std::mem::take(&mut checkpoints[block]));
        for j in first..last {
            let next = stage(j, &kept[j - first]);
            kept.push(next);
        }
        for j in (first..last).rev() {
            let y = cuts[j + 1];
            let goal = kept[j + 1 - first][y - lo[j + 1]];
            let a = lo[j].max(reach_back(sums, speeds[j], y, limit));
            let b = hi[j].min(y);
            let keep = |x: usize| {
                let (s, e) = (x.max(current[j]), y.min(current[j + 1]));
                if s < e {
                    bytes[e] - bytes[s]
                } else {
                    0
                }
            };
            let x = (a..=b)
                .filter(|&x| kept[j - first][x - lo[j]] + keep(x) == goal)
                .min_by_key(|&x| x.abs_diff(current[j]))
                .expect("the programme's value is attained");
            cuts[j] = x;
        }
    }
    cuts
}
