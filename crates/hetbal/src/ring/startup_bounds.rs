//! Lower bounds on the makespan of a redistribution under start-ups (model.md,
//! "Start-ups"): every transfer over a link with start-up `l` and per-item cost `c`
//! takes `l + m c` for its m items, all held when it starts and delivered when it
//! ends (on a link with `l = 0`, a train of items, the papers' model).
//!
//! # The bounds and their proofs
//! Every schedule moves net flows `f_i = x + S_i` over the links (link i joins P_i
//! and P_{i+1}, positive clockwise) for one integer circulation `x`; on a
//! unidirectional ring `x >= -min S`. Write `A(g; c, l) = 0` for `g <= 0` and
//! `l + g c` for `g >= 1`.
//!
//! * **Links.** A link whose net flow in one direction is `g >= 1` carries at least
//!   g items that way, in at least one transfer: at least `l + g c` of that
//!   direction's time. So the makespan is at least `max_i A(f_i; c_succ[i],
//!   l_succ[i])` and `A(-f_i; c_pred[i+1], l_pred[i+1])`.
//! * **Ports** (System 6 generalised). Processor i sends its transfers one after
//!   the other, both directions together, and receives likewise: the makespan is at
//!   least `send_i = A(f_i; c_succ[i], l_succ[i]) + A(-f_{i-1}; c_pred[i],
//!   l_pred[i])` and `receive_i = A(f_{i-1}; c_succ[i-1], l_succ[i-1]) + A(-f_i;
//!   c_pred[i+1], l_pred[i+1])`. Their maximum `tau(x)` is not convex in `x` (a
//!   start-up appears when a flow becomes non-zero), so System 6's ternary search
//!   does not apply. It is the maximum of a non-decreasing function (the clockwise
//!   link terms), a non-increasing one (the counter-clockwise ones) and, on the
//!   circulations where a processor sends both ways (or receives from both sides),
//!   one affine function per such processor. [`startup_lower_bound`] finds the
//!   least integer `x` exactly, by bisection on the value `T`: the circulations
//!   with `tau(x) <= T` are an interval (from the monotone parts) minus, for each
//!   two-sided processor, the sub-interval where its affine term exceeds `T`; those
//!   are sorted once (O(n log n)), then each test is O(n), and 64 tests on the bits
//!   of `T` find the least value. A link bound is a port bound of its sender, so
//!   the port bound is never weaker.
//! * **Paths.** Take an arc of processors `R = {a+1, ..., j}` (not the whole ring)
//!   and the links `a` (into it) and `j` (out of it). An item that crosses `j`
//!   clockwise either started in R (at most `sum_R L` such crossings), or last
//!   entered R through `j` counter-clockwise (at most one per counter-clockwise
//!   crossing of `j`), or entered R through `a` clockwise and then crossed every
//!   link of the arc clockwise. So at least `r = f_j - sum_{m in R} L_m` crossings
//!   of `j` end journeys over the links `a, a+1, ..., j`, each hop a transfer that
//!   starts after the previous hop ended. If `r >= 1`: those r items pass link `a`
//!   (at least `l_a + r c_a` from time 0), the last of them then needs every later
//!   hop: the makespan is at least `l_a + r c_a + sum_{m=a+1}^{j} (l_m + c_m)`
//!   ("the last item of a flow from its source"); symmetrically the first of them
//!   needs every earlier hop before the r items pass link `j`: at least
//!   `sum_{m=a}^{j-1} (l_m + c_m) + l_j + r c_j`. Counter-clockwise likewise. These
//!   hold for any schedule with net flow `f`; each is non-decreasing in `x` for
//!   clockwise arcs and non-increasing for counter-clockwise ones.
//!
//! The reported bound is the largest proven one: on a unidirectional ring the
//! larger of the link and path bounds at the minimal flows (every other `x` adds
//! flow everywhere and only raises them); on a bidirectional ring the larger of the
//! least port bound over `x` and the least path bound over `x` (each minimised on
//! its own, which is valid and can be weaker than minimising their maximum).
//!
//! # Complexity of the path bounds
//! For each link j the arcs with `r >= 1` are those with `a` in a window that only
//! moves forward as j does (`sum L` over the arc grows with its length). Over the
//! window, each family is the maximum of lines (one per `a`) at a point fixed by j:
//! a deque keeps the lines that are not dominated (a newer line that is at least as
//! high now and will stay so while it lives removes an older one), and each query
//! evaluates the deque. Linear in practice; the deque is capped at 1,024 lines
//! (the oldest are dropped, which keeps a valid but possibly weaker bound).

use std::collections::VecDeque;

use crate::ring::{prefix_sums, RingInstance, RingKind};

/// Which family gave a start-up bound its value.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StartupBoundKind {
    /// One start-up and the flow's items on some link.
    Link,
    /// All the transfers of one processor's sending or receiving port.
    Port,
    /// An item's journey over several links, one start-up and one item time each.
    Path,
}

impl StartupBoundKind {
    /// The family's name, for reports: `link`, `port` or `path`.
    pub fn name(self) -> &'static str {
        match self {
            StartupBoundKind::Link => "link",
            StartupBoundKind::Port => "port",
            StartupBoundKind::Path => "path",
        }
    }

    /// What the family counts, in a few words, for reports.
    pub fn description(self) -> &'static str {
        match self {
            StartupBoundKind::Link => "the busiest link, one start-up and all its items",
            StartupBoundKind::Port => {
                "one processor's port, the start-ups and items of all its messages"
            }
            StartupBoundKind::Path => "an item's journey, a start-up and an item time per link",
        }
    }
}

/// The lower bounds of a ring under start-ups ([`startup_lower_bound`]), each
/// minimised over the circulation (model.md, "Start-ups").
#[derive(Clone, Debug, PartialEq)]
pub struct StartupBound {
    /// The least over `x` of the largest link bound `l + |f| c`.
    pub link: f64,
    /// The least over `x` of the largest port bound (System 6 with start-ups).
    pub port: f64,
    /// The least over `x` of the largest path bound.
    pub path: f64,
    /// A circulation reaching `port` (flows `x + S_i`).
    pub port_x: i128,
    /// A circulation reaching `path`.
    pub path_x: i128,
    /// The reported bound: the largest of the three (no schedule ends earlier).
    pub value: f64,
    /// The family that gives `value`.
    pub kind: StartupBoundKind,
}

/// `A(g; c, l)`: the least time to move `g` items over a link in one direction.
fn link_time(g: i128, c: f64, l: f64) -> f64 {
    if g <= 0 {
        0.0
    } else {
        l + as_f64(g) * c
    }
}

/// `v as f64` (the same rounding), in one instruction when `v` fits an i64 (an
/// i128's conversion is a library call: half of the bound's time at 10^5
/// processors).
fn as_f64(v: i128) -> f64 {
    /// Kept out of line, or the compiler merges the two branches back into
    /// the library call.
    #[cold]
    #[inline(never)]
    fn wide(v: i128) -> f64 {
        v as f64
    }
    match i64::try_from(v) {
        Ok(v) => v as f64,
        Err(_) => wide(v),
    }
}

/// [`as_f64`] of a u128 (the same integer, so the same rounding).
fn unsigned_as_f64(v: u128) -> f64 {
    match i128::try_from(v) {
        Ok(v) => as_f64(v),
        Err(_) => v as f64,
    }
}

/// A link direction's cost and start-up.
#[derive(Clone, Copy)]
struct Link {
    c: f64,
    l: f64,
}

impl Link {
    /// About the most items a transfer can carry within `t` (0 when even one
    /// does not fit): a starting point for exact searches.
    fn most_items(self, t: f64) -> i128 {
        let most = ((t - self.l) / self.c).floor();
        if most.is_finite() && most >= 1.0 {
            most.min(1e30) as i128
        } else {
            0
        }
    }
}

/// The ring's links: `cw[i]` from P_i to P_{i+1}, `ccw[i]` from P_{i+1} to P_i
/// (infinite cost on a unidirectional ring).
struct Links {
    cw: Vec<Link>,
    ccw: Vec<Link>,
}

fn links(instance: &RingInstance) -> Links {
    let n = instance.len();
    let cw = (0..n)
        .map(|i| Link {
            c: instance.c_succ()[i],
            l: instance.l_succ()[i],
        })
        .collect();
    let ccw = (0..n)
        .map(|i| {
            let j = instance.succ(i);
            match (instance.kind(), instance.c_pred()[j]) {
                (RingKind::Bidirectional, Some(c)) => Link {
                    c,
                    l: instance.l_pred()[j],
                },
                _ => Link {
                    c: f64::INFINITY,
                    l: 0.0,
                },
            }
        })
        .collect();
    Links { cw, ccw }
}

impl Links {
    /// Clockwise time of link i at circulation x.
    fn cw_time(&self, sums: &[i128], i: usize, x: i128) -> f64 {
        link_time(x + sums[i], self.cw[i].c, self.cw[i].l)
    }
    /// Counter-clockwise time of link i at circulation x.
    fn ccw_time(&self, sums: &[i128], i: usize, x: i128) -> f64 {
        link_time(-(x + sums[i]), self.ccw[i].c, self.ccw[i].l)
    }
}

/// The largest link bound at circulation `x`. O(n).
fn link_bound_at(links: &Links, sums: &[i128], x: i128) -> f64 {
    (0..sums.len())
        .map(|i| links.cw_time(sums, i, x).max(links.ccw_time(sums, i, x)))
        .fold(0.0, f64::max)
}

/// The largest port bound at circulation `x`. O(n).
fn port_bound_at(links: &Links, sums: &[i128], x: i128) -> f64 {
    let n = sums.len();
    (0..n)
        .map(|i| {
            let p = (i + n - 1) % n;
            let send = links.cw_time(sums, i, x) + links.ccw_time(sums, p, x);
            let receive = links.cw_time(sums, p, x) + links.ccw_time(sums, i, x);
            send.max(receive)
        })
        .fold(0.0, f64::max)
}

/// A two-sided port (a processor sending both ways, or receiving from both sides)
/// on the circulations `from..=to` where it is two-sided: its time there is
/// `value(x)`, affine in x.
struct TwoSided {
    from: i128,
    to: i128,
    /// The two link terms, evaluated as [`port_bound_at`] does.
    cw_link: usize,
    ccw_link: usize,
    slope: f64,
}

impl TwoSided {
    fn value(&self, links: &Links, sums: &[i128], x: i128) -> f64 {
        links.cw_time(sums, self.cw_link, x) + links.ccw_time(sums, self.ccw_link, x)
    }

    /// About where the value crosses `t` (the affine formula, rounded down).
    fn crossing(&self, links: &Links, sums: &[i128], t: f64) -> i128 {
        if self.slope == 0.0 {
            return self.to;
        }
        let at_from = self.value(links, sums, self.from);
        let steps = ((t - at_from) / self.slope).floor();
        if steps.is_finite() {
            self.from.saturating_add(steps.clamp(-1e30, 1e30) as i128)
        } else {
            self.from
        }
    }
}

/// The least integer circulation of the port bound, by bisection on its value (the
/// module docs). Returns `(x, value)`.
fn least_port_bound(links: &Links, sums: &[i128]) -> (i128, f64) {
    let n = sums.len();
    let lo = -sums.iter().copied().max().unwrap_or(0);
    let hi = -sums.iter().copied().min().unwrap_or(0);
    // Two-sided processors: sources (f_i >= 1 and f_{i-1} <= -1: x in
    // [1 - S_i, -1 - S_{i-1}]) and sinks (f_{i-1} >= 1 and f_i <= -1).
    let mut rising: Vec<TwoSided> = Vec::new(); // affine terms growing with x
    let mut falling: Vec<TwoSided> = Vec::new();
    for i in 0..n {
        let p = (i + n - 1) % n;
        for (cw_link, ccw_link, from, to) in [
            (i, p, 1 - sums[i], -1 - sums[p]),
            (p, i, 1 - sums[p], -1 - sums[i]),
        ] {
            let (from, to) = (from.max(lo), to.min(hi));
            if from > to {
                continue;
            }
            let slope = links.cw[cw_link].c - links.ccw[ccw_link].c;
            let term = TwoSided {
                from,
                to,
                cw_link,
                ccw_link,
                slope,
            };
            if slope > 0.0 {
                rising.push(term);
            } else {
                falling.push(term);
            }
        }
    }
    // Rising terms exceed T on a suffix of their range: merged from the right, by
    // their right end; falling ones on a prefix: merged from the left.
    rising.sort_unstable_by_key(|term| std::cmp::Reverse(term.to));
    falling.sort_unstable_by_key(|term| term.from);
    let mut scratch = Intervals::default();
    // The least x in [lo, hi] with port bound <= t, if any.
    let feasible = |t: f64, scratch: &mut Intervals| -> Option<i128> {
        // Monotone parts: clockwise link terms bound x from above, counter-clockwise
        // ones from below.
        let mut upper = hi;
        let mut lower = lo;
        for i in 0..n {
            if links.cw_time(sums, i, upper) > t {
                // Largest x <= upper with the term <= t: flow <= 0, or l + f c <= t.
                let most = links.cw[i].most_items(t);
                let guess = (-sums[i]).saturating_add(most).min(upper);
                upper = last_at_most(guess, -sums[i], upper, |x| links.cw_time(sums, i, x) <= t);
            }
            if links.ccw_time(sums, i, lower) > t {
                let most = links.ccw[i].most_items(t);
                let guess = (-sums[i]).saturating_sub(most).max(lower);
                lower = first_at_most(guess, lower, -sums[i], |x| links.ccw_time(sums, i, x) <= t);
            }
            if lower > upper {
                return None;
            }
        }
        // Forbidden sub-intervals of the two-sided terms (affine: the crossing by
        // formula, then checked on the exact evaluation).
        scratch.clear();
        for term in &falling {
            if term.value(links, sums, term.from) <= t {
                continue;
            }
            // Last x of the range still above t (the value falls with x).
            let guess = term.crossing(links, sums, t).min(term.to);
            let last = last_at_most(guess, term.from, term.to, |x| {
                term.value(links, sums, x) > t
            });
            scratch.push_forward(term.from, last);
        }
        for term in &rising {
            if term.value(links, sums, term.to) <= t {
                continue;
            }
            // First x of the range above t (the value grows with x).
            let guess = term.crossing(links, sums, t).max(term.from);
            let first = first_at_most(guess, term.from, term.to, |x| {
                term.value(links, sums, x) > t
            });
            scratch.push_backward(first, term.to);
        }
        scratch.first_free(lower, upper)
    };
    if let Some(x) = feasible(0.0, &mut scratch) {
        return (x, port_bound_at(links, sums, x));
    }
    // Bisection on the bits of the value (non-negative f64s order as their bits),
    // from a feasible value: the bound at the middle circulation.
    let mut found = (lo + hi) / 2;
    let mut high_bits = port_bound_at(links, sums, found).to_bits();
    let mut low_bits = 0u64;
    while high_bits - low_bits > 1 {
        let mid = low_bits + (high_bits - low_bits) / 2;
        match feasible(f64::from_bits(mid), &mut scratch) {
            Some(x) => {
                high_bits = mid;
                found = x;
            }
            None => low_bits = mid,
        }
    }
    (found, port_bound_at(links, sums, found))
}

/// The largest x in `lo..=hi` with `holds(x)`, for a predicate true up to some
/// point and false after, searched from `guess` (assumed within one or two steps):
/// `lo` when none holds beyond it.
fn last_at_most(guess: i128, lo: i128, hi: i128, holds: impl Fn(i128) -> bool) -> i128 {
    let mut x = guess.clamp(lo, hi);
    while x > lo && !holds(x) {
        x -= 1;
    }
    while x < hi && holds(x + 1) {
        x += 1;
    }
    x
}

/// The smallest x in `lo..=hi` with `holds(x)`, for a predicate false up to some
/// point and true after, searched from `guess`: `hi` when none holds before it.
fn first_at_most(guess: i128, lo: i128, hi: i128, holds: impl Fn(i128) -> bool) -> i128 {
    let mut x = guess.clamp(lo, hi);
    while x < hi && !holds(x) {
        x += 1;
    }
    while x > lo && holds(x - 1) {
        x -= 1;
    }
    x
}

/// Forbidden intervals of circulations, merged from two sorted families.
#[derive(Default)]
struct Intervals {
    /// Merged from the left (pushed by increasing start).
    forward: Vec<(i128, i128)>,
    /// Merged from the right (pushed by decreasing end), reversed when read.
    backward: Vec<(i128, i128)>,
}

impl Intervals {
    fn clear(&mut self) {
        self.forward.clear();
        self.backward.clear();
    }

    fn push_forward(&mut self, from: i128, to: i128) {
        match self.forward.last_mut() {
            Some(last) if from <= last.1 + 1 => last.1 = last.1.max(to),
            _ => self.forward.push((from, to)),
        }
    }

    fn push_backward(&mut self, from: i128, to: i128) {
        match self.backward.last_mut() {
            Some(last) if to + 1 >= last.0 => last.0 = last.0.min(from),
            _ => self.backward.push((from, to)),
        }
    }

    /// The least integer of `lower..=upper` outside every interval.
    fn first_free(&self, lower: i128, upper: i128) -> Option<i128> {
        let mut x = lower;
        let (mut a, mut b) = (0usize, self.backward.len());
        loop {
            // Skip intervals ending before x; step over one containing x.
            let mut moved = false;
            while a < self.forward.len() && self.forward[a].1 < x {
                a += 1;
            }
            if a < self.forward.len() && self.forward[a].0 <= x {
                x = self.forward[a].1 + 1;
                moved = true;
            }
            while b > 0 && self.backward[b - 1].1 < x {
                b -= 1;
            }
            if b > 0 && self.backward[b - 1].0 <= x {
                x = self.backward[b - 1].1 + 1;
                moved = true;
            }
            if x > upper {
                return None;
            }
            if !moved {
                return Some(x);
            }
        }
    }
}

/// A directed ring for the path bounds: positions in travel order, `load[p]`
/// items starting at p, link p from p to p + 1 (mod n) with `link[p]`, net flow
/// `flow[p]` that way.
struct Directed {
    load: Vec<u64>,
    link: Vec<Link>,
    flow: Vec<i128>,
}

/// Most lines the path bounds' deque keeps (see the module docs).
const MAX_LINES: usize = 1024;

/// The largest "last item of a flow from its source" bound over every arc of a
/// directed ring: `max l_a + r c_a + sum_{m=a+1}^{j} (l_m + c_m)` over arcs a..j
/// (shorter than the ring) with `r = flow_j - sum_{m=a+1}^{j} load_m >= 1`.
/// O(n) amortised (deque of undominated lines, capped).
fn source_paths(ring: &Directed) -> f64 {
    let n = ring.flow.len();
    if ring.link.iter().any(|k| !k.c.is_finite()) {
        return 0.0;
    }
    // Positions 0..2n (the ring unrolled twice); prefix sums over them.
    // hop[k] = sum_{m<k} (l_m + c_m); cum[k] = sum_{m<=k} load_m.
    let at = |k: usize| k % n;
    let mut hop = vec![0.0f64; 2 * n + 1];
    let mut cum = vec![0u128; 2 * n];
    for k in 0..2 * n {
        let link = ring.link[at(k)];
        hop[k + 1] = hop[k] + link.l + link.c;
        cum[k] = if k == 0 { 0 } else { cum[k - 1] } + u128::from(ring.load[at(k)]);
    }
    // Line of arc start a, evaluated for arc end j: l_a + c_a r + hop[j+1] - hop[a+1]
    // with r = flow_j - (cum[j] - cum[a]) = (flow_j - cum[j]) + cum[a].
    // value = [l_a + c_a cum[a] - hop[a+1]] + c_a z_j + hop[j+1], z_j = flow_j - cum[j].
    let line_of = |a: usize| PathLine {
        start: a,
        l: ring.link[at(a)].l,
        c: ring.link[at(a)].c,
        cum: unsigned_as_f64(cum[a]),
        hop: hop[a + 1],
    };
    // Past 2^53 items `cum + z` rounds by whole items, which the costs could
    // turn into more than the bound proves: each line's items are then counted
    // exactly (the floats only pick the lines to keep).
    let exact = cum[2 * n - 1] >= 1 << 53 || ring.flow.iter().any(|f| f.unsigned_abs() >= 1 << 53);
    let mut best = 0.0f64;
    let mut lines: VecDeque<PathLine> = VecDeque::new();
    let mut next_a = 0usize;
    for j in 0..2 * n {
        // Arcs end at j and start at a in (j - n, j]: add the starts up to j.
        let z_now = as_f64(ring.flow[at(j)]) - unsigned_as_f64(cum[j]);
        while next_a <= j {
            let line = line_of(next_a);
            next_a += 1;
            while let Some(b) = lines.back() {
                if b.c >= line.c && b.at(z_now) <= line.at(z_now) {
                    lines.pop_back();
                } else {
                    break;
                }
            }
            lines.push_back(line);
            if lines.len() > MAX_LINES {
                lines.pop_front();
            }
        }
        let flow = ring.flow[at(j)];
        if flow < 1 {
            lines.clear();
            continue;
        }
        // Drop starts too far back: the arc is the whole ring, or r < 1 (r only
        // falls as the arc grows, and the window only moves forward).
        while let Some(line) = lines.front() {
            let a = line.start;
            let r = i128::try_from(cum[a]).unwrap_or(i128::MAX) + flow
                - i128::try_from(cum[j]).unwrap_or(i128::MAX);
            if a + n <= j || r < 1 {
                lines.pop_front();
            } else {
                break;
            }
        }
        let after = hop[j + 1];
        if exact {
            // r = flow_j - (cum[j] - cum[a]), at least 1 on every line kept.
            let items = |a: usize| cum[a] as i128 + flow - cum[j] as i128;
            let value =
                |line: &PathLine| line.l + line.c * as_f64(items(line.start)) - line.hop + after;
            best = lines.iter().map(value).fold(best, f64::max);
            continue;
        }
        let (front, back) = lines.as_slices();
        best = best
            .max(highest(front, z_now, after))
            .max(highest(back, z_now, after));
    }
    best
}

/// A path bound's line: the arc start's link (`l`, `c`), its `cum` and `hop`
/// terms (see [`source_paths`]).
#[derive(Clone, Copy)]
struct PathLine {
    start: usize,
    l: f64,
    c: f64,
    cum: f64,
    hop: f64,
}

impl PathLine {
    /// The line's value at `z`, without the arc end's hops.
    fn at(&self, z: f64) -> f64 {
        self.l + self.c * (self.cum + z) - self.hop
    }
}

/// The largest `line.at(z) + after` over `lines` (0 when none): four lanes of
/// plain comparisons (the values are finite), which the compiler can keep in
/// vector registers.
fn highest(lines: &[PathLine], z: f64, after: f64) -> f64 {
    let mut lanes = [0.0f64; 4];
    let mut chunks = lines.chunks_exact(4);
    for chunk in &mut chunks {
        for (lane, line) in lanes.iter_mut().zip(chunk) {
            let value = line.at(z) + after;
            if value > *lane {
                *lane = value;
            }
        }
    }
    for line in chunks.remainder() {
        let value = line.at(z) + after;
        if value > lanes[0] {
            lanes[0] = value;
        }
    }
    lanes.iter().fold(0.0, |m, &v| if v > m { v } else { m })
}

/// The largest path bounds at circulation `x` (both families): clockwise arcs, and
/// counter-clockwise ones (0 on a unidirectional ring).
fn path_bounds_at(instance: &RingInstance, links: &Links, sums: &[i128], x: i128) -> (f64, f64) {
    let n = sums.len();
    let flows: Vec<i128> = sums.iter().map(|s| s + x).collect();
    // Travel order n-1-i: position r holds processor n-1-r, and its link to r+1
    // (mod n) is ring link (2n-2-r) % n.
    let backwards = |link: &[Link], sign: i128, loads: &[u64]| Directed {
        load: (0..n).map(|r| loads[n - 1 - r]).collect(),
        link: (0..n).map(|r| link[(2 * n - 2 - r) % n]).collect(),
        flow: (0..n).map(|r| sign * flows[(2 * n - 2 - r) % n]).collect(),
    };
    // Clockwise as is, and time reversed (backwards, loads and targets swapped).
    let cw = Directed {
        load: instance.loads().to_vec(),
        link: links.cw.clone(),
        flow: flows.clone(),
    };
    let clockwise =
        source_paths(&cw).max(source_paths(&backwards(&links.cw, 1, instance.targets())));
    if instance.kind() == RingKind::Unidirectional {
        return (clockwise, 0.0);
    }
    // Counter-clockwise (backwards), and time reversed (forwards, targets as loads).
    let ccw_reversed = Directed {
        load: instance.targets().to_vec(),
        link: links.ccw.clone(),
        flow: flows.iter().map(|f| -f).collect(),
    };
    let counter =
        source_paths(&backwards(&links.ccw, -1, instance.loads())).max(source_paths(&ccw_reversed));
    (clockwise, counter)
}

/// A start-up bound of each circulation of `xs`, which every schedule with its
/// net flows `x + S_i` meets (the module docs' proofs): its port bound, and
/// the larger of that and its path bounds where the flows move more than
/// `heavy` items (the path bounds, the costlier, pay off where simulating
/// the flows does). The start-up planner compares the circulations it tries
/// by it, and skips those it shows cannot beat the best plan found. O(n)
/// each (with the path bounds' deque capped).
pub(crate) fn startup_bounds_at(instance: &RingInstance, xs: &[i128], heavy: u128) -> Vec<f64> {
    let links = links(instance);
    let sums = prefix_sums(instance);
    let bound_at = |&x: &i128| {
        let port = port_bound_at(&links, &sums, x);
        let moved: u128 = sums.iter().map(|s| (s + x).unsigned_abs()).sum();
        if moved <= heavy {
            return port;
        }
        let (clockwise, counter) = path_bounds_at(instance, &links, &sums, x);
        port.max(clockwise).max(counter)
    };
    xs.iter().map(bound_at).collect()
}

/// Lower bounds on the makespan of a ring with start-ups: link, port and path
/// bounds, each minimised over the circulation, and the strongest (the module docs
/// give the proofs).
///
/// On a ring without start-ups the port bound is System 6's integer optimum on
/// bidirectional rings ([`circulation_bound`](crate::ring::circulation_bound)) and
/// the exact `max f c` on unidirectional ones, and the path bounds add nothing new.
///
/// # Arguments
/// * `instance` - a validated ring.
///
/// # Returns
/// The three bounds, the circulation of the port bound, and the largest of them
/// with its family.
///
/// # Complexity
/// Unidirectional: O(n) (with the path bounds' deque capped, see the module docs).
/// Bidirectional: O(n log n) to sort the two-sided ports, then O(n) per bisection
/// step (64 steps) for the port bound, and O(n log d) for the path bound (a
/// search on the circulation from the link bound's crossing, d the distance
/// between the two crossings, usually 0 or 1; O(n log R) at worst, R the range
/// of the prefix sums). The path bounds' O(n) assumes a bounded deque (module
/// docs): each arc end scans the undominated arc starts in its window.
///
/// # Example
/// ```
/// use hetbal::ring::{startup_lower_bound, RingInstance, StartupBoundKind};
/// // P0 gives 2 items to P2 through P1: per item 1, per transfer 2. The link bound
/// // is 2 + 2 * 1 = 4. P1 holds 1 item but sends 2, so some item crosses both
/// // links, one transfer each: (2 + 1) + (2 + 1) = 6, the optimum.
/// let ring = RingInstance::unidirectional(&[3, 1, 1], &[1, 1, 3], &[1.0; 3])
///     .unwrap()
///     .with_startups(&[2.0; 3], &[0.0; 3])
///     .unwrap();
/// let bound = startup_lower_bound(&ring);
/// assert_eq!(bound.link, 4.0);
/// assert_eq!(bound.path, 6.0);
/// assert_eq!((bound.value, bound.kind), (6.0, StartupBoundKind::Path));
/// ```
pub fn startup_lower_bound(instance: &RingInstance) -> StartupBound {
    let links = links(instance);
    let sums = prefix_sums(instance);
    let (link, port, path, port_x, path_x) = match instance.kind() {
        RingKind::Unidirectional => {
            let x = -sums.iter().copied().min().unwrap_or(0);
            let link = link_bound_at(&links, &sums, x);
            let path = path_bounds_at(instance, &links, &sums, x).0;
            (link, link, path, x, x)
        }
        RingKind::Bidirectional => {
            let (port_x, port) = least_port_bound(&links, &sums);
            let (link_x, link) = least_link_bound(&links, &sums);
            let (path_x, path) = least_path_bound(instance, &links, &sums, link_x);
            (link, port, path, port_x, path_x)
        }
    };
    let (value, kind) = if path > port {
        (path, StartupBoundKind::Path)
    } else if port > link {
        (port, StartupBoundKind::Port)
    } else {
        (link, StartupBoundKind::Link)
    };
    StartupBound {
        link,
        port,
        path,
        port_x,
        path_x,
        value,
        kind,
    }
}

/// The least over `x` of the largest link bound: the maximum of a non-decreasing
/// and a non-increasing function of x, least where they cross. O(n log R).
fn least_link_bound(links: &Links, sums: &[i128]) -> (i128, f64) {
    let n = sums.len();
    least_crossing(sums, None, |x| {
        (0..n).fold((0.0f64, 0.0f64), |(cw, ccw), i| {
            (
                cw.max(links.cw_time(sums, i, x)),
                ccw.max(links.ccw_time(sums, i, x)),
            )
        })
    })
}

/// The least over `x` of the largest path bound: clockwise path bounds grow with x,
/// counter-clockwise ones fall. Searched from `guess` (the link bound's crossing,
/// usually at or next to the path bound's): O(n log d) for a crossing d away from
/// it, O(n log R) at worst.
fn least_path_bound(
    instance: &RingInstance,
    links: &Links,
    sums: &[i128],
    guess: i128,
) -> (i128, f64) {
    least_crossing(sums, Some(guess), |x| {
        path_bounds_at(instance, links, sums, x)
    })
}

/// The least over integer x in `[-max S, -min S]` of `max(rising(x), falling(x))`,
/// where `both(x) = (rising(x), falling(x))`, `rising` non-decreasing and `falling`
/// non-increasing: at their crossing. Returns `(x, value)`.
///
/// The crossing is found by bisection over the whole range or, from `guess`, by
/// steps doubling away from it until they pass the crossing, then bisection
/// between the last two: about `2 log2 d` evaluations for a crossing `d` away
/// from the guess. No x is evaluated twice.
fn least_crossing(
    sums: &[i128],
    guess: Option<i128>,
    both: impl Fn(i128) -> (f64, f64),
) -> (i128, f64) {
    let min_x = -sums.iter().copied().max().unwrap_or(0);
    let max_x = -sums.iter().copied().min().unwrap_or(0);
    let mut seen: Vec<(i128, (f64, f64))> = Vec::new();
    let mut eval = |x: i128| -> (f64, f64) {
        if let Some(&(_, v)) = seen.iter().find(|(at, _)| *at == x) {
            return v;
        }
        let v = both(x);
        seen.push((x, v));
        v
    };
    let crossed = |(rising, falling): (f64, f64)| rising >= falling;
    // The first x where rising >= falling lies in lo..=hi (max_x if none).
    let (mut lo, mut hi) = (min_x, max_x);
    if let Some(g) = guess.map(|g| g.clamp(min_x, max_x)) {
        let mut step = 1i128;
        if crossed(eval(g)) {
            // Back from g while still crossed.
            hi = g;
            while hi > min_x {
                let x = (hi - step).max(min_x);
                if !crossed(eval(x)) {
                    lo = x + 1;
                    break;
                }
                hi = x;
                step *= 2;
            }
            lo = lo.min(hi);
        } else {
            // Forward from g until crossed.
            lo = g + 1;
            while lo < max_x {
                let x = (lo - 1 + step).min(max_x);
                if crossed(eval(x)) {
                    hi = x;
                    break;
                }
                lo = x + 1;
                step *= 2;
            }
            lo = lo.min(max_x);
        }
    }
    while lo < hi {
        let m = lo + (hi - lo) / 2;
        if crossed(eval(m)) {
            hi = m;
        } else {
            lo = m + 1;
        }
    }
    let mut at = |x: i128| {
        let (rising, falling) = eval(x);
        rising.max(falling)
    };
    let here = (lo, at(lo));
    if lo > min_x {
        let before = (lo - 1, at(lo - 1));
        if before.1 < here.1 {
            return before;
        }
    }
    here
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::random::SplitMix64;

    /// The conversions round as `as f64` does, on both sides of the i64 and
    /// u64 ranges and on random values of every magnitude.
    #[test]
    fn conversions_round_as_the_cast_does() {
        let mut rng = SplitMix64::new(7);
        let mut signed = vec![0i128, 1, -1, i128::MAX, i128::MIN];
        for edge in [i128::from(i64::MAX), i128::from(i64::MIN)] {
            signed.extend((-3..=3).map(|d| edge + d));
        }
        for bits in 0..127 {
            let v = (i128::from(rng.next_u64()) << 64 | i128::from(rng.next_u64())) >> bits;
            signed.extend([v, -v]);
        }
        for v in signed {
            assert_eq!(as_f64(v).to_bits(), (v as f64).to_bits(), "{v}");
            let u = v.unsigned_abs();
            assert_eq!(unsigned_as_f64(u).to_bits(), (u as f64).to_bits(), "{u}");
        }
        let edge = u128::from(u64::MAX);
        for u in (edge - 3..=edge + 3).chain([u128::MAX]) {
            assert_eq!(unsigned_as_f64(u).to_bits(), (u as f64).to_bits(), "{u}");
        }
    }

    /// From any guess, the search finds the crossing the bisection over the whole
    /// range finds: on step functions with plateaus (ties at the crossing
    /// included) and on the path bounds of random bidirectional rings.
    #[test]
    fn the_search_from_a_guess_finds_the_bisections_crossing() {
        let mut rng = SplitMix64::new(36);
        for _ in 0..300 {
            let lo = -((rng.next_u64() % 40) as i128);
            let hi = lo + (rng.next_u64() % 60) as i128;
            let sums = [-lo, -hi]; // the range lo..=hi
            let cross = lo + (rng.next_u64() % (hi - lo + 3) as u64) as i128 - 1;
            let step = |x: i128| (x / 3) as f64; // plateaus of 3
            let both = |x: i128| (step(x), step(cross) + step(cross - x));
            let whole = least_crossing(&sums, None, both);
            for guess in lo - 3..=hi + 3 {
                assert_eq!(least_crossing(&sums, Some(guess), both), whole);
            }
        }
        let mut checked = 0;
        for case in 0..200u64 {
            let n = 3 + (case % 12) as usize;
            let loads: Vec<u64> = (0..n).map(|_| rng.next_u64() % 20).collect();
            let mut targets = vec![0u64; n];
            for _ in 0..loads.iter().sum::<u64>() {
                targets[(rng.next_u64() % n as u64) as usize] += 1;
            }
            let c: Vec<f64> = (0..n).map(|_| 0.5 + (rng.next_u64() % 4) as f64).collect();
            let l: Vec<f64> = (0..n).map(|_| (rng.next_u64() % 6) as f64).collect();
            let ring = RingInstance::bidirectional(&loads, &targets, &c, &c)
                .unwrap()
                .with_startups(&l, &l)
                .unwrap();
            let (links, sums) = (links(&ring), prefix_sums(&ring));
            let whole = least_crossing(&sums, None, |x| path_bounds_at(&ring, &links, &sums, x));
            for guess in [-100, -3, 0, 2, 7, 100] {
                assert_eq!(least_path_bound(&ring, &links, &sums, guess), whole);
            }
            checked += 1;
        }
        assert_eq!(checked, 200);
    }
}
