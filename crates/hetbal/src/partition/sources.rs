//! The least-moving partition by sources and runs: fast when few cuts move.
//!
//! Take, among the least-moving partitions within the limit, one whose cuts are
//! nearest the current ones `c`. Moving a cut towards its current place never
//! moves more bytes, so each cut `x_j` is blocked there:
//! - **anchored**: `x_j = c_j`;
//! - **pushed left**: `x_j < c_j`, and processor `j - 1` is full from
//!   `x_{j-1}`: `x_j = reach_{j-1}(x_{j-1})`;
//! - **pushed right**: `x_j > c_j`, and processor `j` is full up to `x_{j+1}`:
//!   `x_j = back_j(x_{j+1})`.
//!
//! A run pushed left continues from its left end, a run pushed right from its
//! right end. Where a cut pushed left meets a cut pushed right on its right
//! (or an anchor), the processor between them holds its whole current range
//! and more: a **junction**, which keeps all its bytes and must fit the limit.
//! Where a cut pushed right (`x_j = u`) has a cut pushed left on its right
//! (`x_{j+1} = v`), processor `j` is full in both directions inside its
//! current range: it **floats**, and only an overloaded processor (whose
//! current range is over the limit) can. So the cuts are made of **sources**,
//! anchors and floating processors, each starting a run pushed right towards
//! its left and a run pushed left towards its right, and consecutive sources'
//! runs meet at junctions.
//!
//! The programme takes the sources from left to right. Each source's best
//! value (bytes kept up to it) is the best, over the junctions along its run
//! pushed right, of a run pushed left from an earlier source that reaches the
//! junction from far enough left for it to fit; the runs pushed left are kept
//! per cut, sorted by position with running maxima. A floating processor's
//! position is tried at every place where it is full from its start.
//!
//! Cost: O((S + R) log) for S sources and runs of R cuts in all, which is
//! small when few processors are overloaded and runs are short (a rebalance
//! after a few processors slowed down), and can reach O(n p) when everything
//! shifts: the caller gives a budget and falls back to the window programme.

use super::exact::{reach, time};
use super::prefix::Sums;

/// The smallest `a` in `0..=b` with `s * W(a..b) <= bound` (binary search).
pub(crate) fn reach_back<S: Sums>(sums: &S, s: f64, b: usize, bound: f64) -> usize {
    let (mut lo, mut hi) = (0usize, b);
    while lo < hi {
        let mid = lo + (hi - lo) / 2;
        if time(sums, s, mid, b) <= bound {
            hi = mid;
        } else {
            lo = mid + 1;
        }
    }
    lo
}

/// A source: its run pushed left starts at cut `cut` at `at`; a floating
/// processor `cut - 1` starts at `float`.
struct Source {
    cut: usize,
    at: usize,
    float: Option<usize>,
    /// Bytes kept by the processors before `cut`.
    value: u64,
    /// The earlier source whose run pushed left meets this one's run pushed
    /// right, and the junction processor.
    from: (usize, usize),
}

/// The runs pushed left that reach one cut: (position, bytes kept before the
/// cut, source), then sorted by position, highest first, with running maxima.
#[derive(Default)]
struct Bucket {
    entries: Vec<(usize, u64, usize)>,
    best: Option<Vec<usize>>,
}

impl Bucket {
    /// The best entry at a position >= `earliest`: its value and source.
    fn query(&mut self, earliest: usize) -> Option<(u64, usize)> {
        if self.best.is_none() {
            self.entries
                .sort_unstable_by(|a, b| b.0.cmp(&a.0).then(b.1.cmp(&a.1)));
            let mut best: Vec<usize> = Vec::with_capacity(self.entries.len());
            for k in 0..self.entries.len() {
                let keep = match best.last() {
                    Some(&b) if self.entries[b].1 >= self.entries[k].1 => b,
                    _ => k,
                };
                best.push(keep);
            }
            self.best = Some(best);
        }
        let count = self.entries.partition_point(|e| e.0 >= earliest);
        let k = *self.best.as_ref()?.get(count.checked_sub(1)?)?;
        Some((self.entries[k].1, self.entries[k].2))
    }
}

/// The least-moving cuts within `limit` (the current cuts are over it), or
/// `None` when the sources and runs exceed `budget` steps.
pub(crate) fn least_moving_by_sources<S: Sums>(
    sums: &S,
    speeds: &[f64],
    c: &[usize],
    bytes: &[u64],
    limit: f64,
    budget: usize,
) -> Option<Vec<usize>> {
    let p = speeds.len();
    let z = |a: usize, b: usize| if a < b { bytes[b] - bytes[a] } else { 0 };
    let mut buckets: Vec<Bucket> = (0..p).map(|_| Bucket::default()).collect();
    let mut sources: Vec<Source> = Vec::new();
    let mut anchor = vec![usize::MAX; p + 1];
    let mut steps = 0usize;
    let mut spend = |k: usize| {
        steps += k;
        steps <= budget
    };
    // The best value of a source whose run pushed right starts at cut `s` at
    // `q` (cuts s-1, s-2, ... pushed right), over its junctions.
    let meet = |buckets: &mut Vec<Bucket>,
                s: usize,
                q: usize,
                steps_left: &mut dyn FnMut(usize) -> bool|
     -> Option<Option<(u64, usize, usize)>> {
        let mut best: Option<(u64, usize, usize)> = None;
        let (mut after, mut right) = (q, 0u64);
        let mut m = s.checked_sub(1)?;
        loop {
            let earliest = reach_back(sums, speeds[m], after, limit);
            if let Some((value, from)) = buckets[m].query(earliest) {
                let total = value + z(c[m], c[m + 1]) + right;
                if best.is_none_or(|(v, _, _)| total > v) {
                    best = Some((total, from, m));
                }
            }
            if m == 0 || earliest <= c[m] {
                break;
            }
            right += z(earliest, c[m + 1]);
            after = earliest;
            m -= 1;
            if !steps_left(1) {
                return None;
            }
        }
        Some(best)
    };
    for t in 0..=p {
        let mut here: Vec<usize> = Vec::new();
        if t == 0 {
            sources.push(Source {
                cut: 0,
                at: 0,
                float: None,
                value: 0,
                from: (0, 0),
            });
            here.push(0);
        } else {
            // Cut t anchored.
            if let Some((value, from, m)) = meet(&mut buckets, t, c[t], &mut spend)? {
                sources.push(Source {
                    cut: t,
                    at: c[t],
                    float: None,
                    value,
                    from: (from, m),
                });
                here.push(sources.len() - 1);
            }
            // Processor t - 1 floating, if its current range is over the limit.
            let j = t - 1;
            if time(sums, speeds[j], c[j], c[t]) > limit && t < p && j > 0 {
                let mut v = c[j] + 1;
                for u in c[j] + 1..c[t] {
                    v = reach(sums, speeds[j], u, limit, v);
                    if v >= c[t] {
                        break;
                    }
                    if !spend(1) {
                        return None;
                    }
                    if let Some((value, from, m)) = meet(&mut buckets, j, u, &mut spend)? {
                        sources.push(Source {
                            cut: t,
                            at: v,
                            float: Some(u),
                            value: value + z(u, v),
                            from: (from, m),
                        });
                        here.push(sources.len() - 1);
                    }
                }
            }
        }
        if t == p {
            anchor[p] = here
                .first()
                .copied()
                .filter(|&s| sources[s].float.is_none())?;
            break;
        }
        // The runs pushed left of the sources at cut t.
        for s in here {
            let (mut at, mut kept, mut j) = (sources[s].at, sources[s].value, t);
            loop {
                buckets[j].entries.push((at, kept, s));
                if !spend(1) {
                    return None;
                }
                if j + 1 >= p {
                    break;
                }
                let next = reach(sums, speeds[j], at, limit, c[j + 1]);
                if next >= c[j + 1] {
                    break;
                }
                kept += z(c[j], next);
                at = next;
                j += 1;
            }
        }
    }
    // Back from the anchor at cut p: each source's run pushed right down to
    // its junction, then the earlier source's run pushed left up to it.
    let mut cuts = c.to_vec();
    let mut s = anchor[p];
    while s != 0 {
        let src = &sources[s];
        let (from, m) = src.from;
        cuts[src.cut] = src.at;
        let (mut start, mut q) = (src.cut, src.at);
        if let Some(u) = src.float {
            cuts[src.cut - 1] = u;
            start = src.cut - 1;
            q = u;
        }
        for j in (m + 1..start).rev() {
            q = reach_back(sums, speeds[j], q, limit);
            cuts[j] = q;
        }
        let earlier = &sources[from];
        let mut at = earlier.at;
        cuts[earlier.cut] = at;
        for j in earlier.cut + 1..=m {
            at = reach(sums, speeds[j - 1], at, limit, c[j]);
            cuts[j] = at;
        }
        s = from;
    }
    Some(cuts)
}
