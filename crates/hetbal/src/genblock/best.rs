//! The `best` method: schedules for every number of steps from `Delta` up, the
//! trade-off between steps (startups) and transfer volume, and the choice for a
//! cost model.

use super::colouring;
use super::graph::RedistributionGraph;
use super::layout::{self, Layout};
use super::paper::{paper_schedule, selection};
use super::schedule::{step_cost, StepSchedule};

/// How hard [`tradeoff`] searches.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SearchOptions {
    /// The most steps worth considering (`None`: no limit but the search's own,
    /// the number of steps of the schedule that meets the lower bound).
    pub max_steps: Option<usize>,
    /// Layouts the local search may evaluate at each number of steps it improves
    /// (`Delta`, and the number chosen by [`best_schedule`]); scaled down in
    /// proportion beyond 4,096 messages. 0 turns it off.
    pub local_search_budget: usize,
    /// Candidate merges evaluated exactly at each step of the merge chain (scaled
    /// down in proportion beyond 4,096 messages).
    pub merge_candidates: usize,
    /// Assignments the colouring search may try at each number of steps it
    /// improves (`Delta` to `Delta + 2`, at most 12 steps). 0 turns it off.
    pub colouring_budget: usize,
}

impl Default for SearchOptions {
    /// No step limit, 400 local-search evaluations, 4 merge candidates, 48
    /// colouring assignments.
    fn default() -> Self {
        SearchOptions {
            max_steps: None,
            local_search_budget: 400,
            merge_candidates: 4,
            colouring_budget: 48,
        }
    }
}

/// A point of the trade-off: a schedule of `steps` steps whose largest sizes add
/// up to `volume`; it costs `startup * steps + unit * volume`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TradeoffPoint {
    /// Number of steps (each non-empty).
    pub steps: usize,
    /// Sum over steps of the largest size.
    pub volume: u128,
}

/// Where a point's schedule comes from.
#[derive(Clone, Debug)]
enum Source {
    /// The paper's schedule itself.
    Paper(StepSchedule),
    /// A layout with its step lengths.
    Layout(Layout, Vec<u64>),
    /// Step lengths and a set of steps per message (bit masks).
    Colouring(Vec<u64>, Vec<u32>),
}

/// The schedules found for every number of steps, keeping only those that no
/// schedule with fewer or as many steps beats: `points` has steps increasing and
/// volume strictly decreasing. The first point has `Delta` steps (the paper's
/// schedule or better); the last reaches the largest block when the search went
/// that far (the lower bound on every volume).
#[derive(Clone, Debug)]
pub struct Tradeoff {
    /// The Pareto front, steps increasing.
    pub points: Vec<TradeoffPoint>,
    sources: Vec<Source>,
}

impl Tradeoff {
    /// The index of the point of least cost `startup * steps + unit * volume`
    /// (the fewest steps among equals). None only for an empty array.
    ///
    /// Complexity: O(points).
    ///
    /// # Example
    /// ```
    /// use hetbal::genblock::{redistribution_graph, tradeoff, GenBlockInstance, SearchOptions};
    /// let g = GenBlockInstance::new(&[7, 16, 11, 10, 7, 49], &[15, 16, 10, 16, 15, 28], 0.0, 1.0)
    ///     .unwrap();
    /// let graph = redistribution_graph(&g);
    /// let t = tradeoff(&graph, &SearchOptions::default());
    /// // Dear startups: the fewest steps, Delta.
    /// let dear = t.choose(1e6, 1.0).unwrap();
    /// assert_eq!(t.points[dear].steps, graph.degree);
    /// // Free startups: the least volume.
    /// let free = t.choose(0.0, 1.0).unwrap();
    /// assert_eq!(t.schedule(&graph, free).volume(), t.points.last().unwrap().volume);
    /// ```
    pub fn choose(&self, startup: f64, unit: f64) -> Option<usize> {
        let mut best: Option<(usize, f64)> = None;
        for (i, p) in self.points.iter().enumerate() {
            let cost = step_cost(p.steps, p.volume, startup, unit);
            if best.is_none_or(|(_, c)| cost < c) {
                best = Some((i, cost));
            }
        }
        best.map(|(i, _)| i)
    }

    /// The schedule of point `index` (panics if `index` is out of range): its
    /// steps and volume are those of `points[index]` (see [`Tradeoff::choose`] for
    /// an example).
    ///
    /// Complexity: O(m + slots) for a layout, O(m k) for a colouring, a copy for
    /// the paper's schedule.
    pub fn schedule(&self, graph: &RedistributionGraph, index: usize) -> StepSchedule {
        match &self.sources[index] {
            Source::Paper(schedule) => schedule.clone(),
            Source::Layout(layout, lengths) => layout::schedule_of(graph, layout, lengths),
            Source::Colouring(lengths, sets) => colouring::schedule_of(graph, lengths, sets),
        }
    }
}

/// The most pieces (messages over all steps) of a schedule that [`tradeoff`]
/// proposes: layouts with more slots are left out. The schedule meeting the bound
/// has about `N / B` laps of up to `m + 1` steps, which on large arrays of small
/// blocks is far more pieces than a redistribution can use (10^5 processors of
/// 1,000 elements: 10^8 pieces).
pub const MAX_PIECES: usize = 10_000_000;

/// Above this many steps beyond `Delta` (or 8 beyond the step limit, if lower),
/// the merge chain merges several pairs of steps at a time (one exact evaluation
/// per batch).
const SINGLE_MERGE_ZONE: usize = 64;

/// Messages beyond which the merge candidates and the local search budget shrink
/// in proportion (each evaluation costs O(m) or more).
const LARGE_GRAPH: usize = 4096;

/// `budget` (at least 1), scaled down in proportion beyond [`LARGE_GRAPH`]
/// messages.
fn scaled(graph: &RedistributionGraph, budget: usize) -> usize {
    if budget == 0 {
        return 0;
    }
    let m = graph.len().max(1);
    if m <= LARGE_GRAPH {
        budget
    } else {
        (budget.saturating_mul(LARGE_GRAPH) / m).max(1)
    }
}

/// Single merges tried down the ranking when a batch of merges fails.
const BATCH_FALLBACKS: usize = 32;

/// Steps beyond `Delta` for which the Selection layout (the paper's Selection with
/// a larger degree budget) is tried.
const SELECTION_EXTRA_STEPS: usize = 8;

/// Collects candidates, keeps the best per number of steps.
struct Collector {
    max_steps: usize,
    /// `(steps, volume, source)`.
    found: Vec<(usize, u128, Source)>,
}

impl Collector {
    fn add_layout(&mut self, layout: &Layout, lengths: &[u64]) {
        let steps = lengths.iter().filter(|&&c| c > 0).count();
        if steps <= self.max_steps && layout.slot_count() <= MAX_PIECES {
            let volume = lengths.iter().map(|&c| u128::from(c)).sum();
            self.found.push((
                steps,
                volume,
                Source::Layout(layout.clone(), lengths.to_vec()),
            ));
        }
    }

    fn into_tradeoff(mut self) -> Tradeoff {
        // Fewest steps first, then least volume; keep strict improvements only.
        self.found.sort_by_key(|a| (a.0, a.1));
        let mut points = Vec::new();
        let mut sources = Vec::new();
        for (steps, volume, source) in self.found {
            if points
                .last()
                .is_none_or(|last: &TradeoffPoint| volume < last.volume)
            {
                points.push(TradeoffPoint { steps, volume });
                sources.push(source);
            }
        }
        Tradeoff { points, sources }
    }
}

fn volume_of(lengths: &[u64]) -> u64 {
    lengths.iter().sum()
}

/// Local search at a fixed number of steps. Moves, for every message: its start
/// or its end by one slot (a free slot appears or disappears), its start together
/// with the previous message's end when they coincide (one message gains a slot,
/// its neighbour loses one), and everything from its start on (the rest of the
/// array turns by a step). A move is kept when the exact volume drops; each tried
/// move costs one feasibility check at the current volume minus one.
fn local_search(
    graph: &RedistributionGraph,
    runs: &[(usize, usize)],
    mut layout: Layout,
    mut lengths: Vec<u64>,
    budget: usize,
) -> (Layout, Vec<u64>) {
    let lo = graph.largest_block;
    let m = graph.len();
    let mut budget = budget;
    let mut volume = volume_of(&lengths);
    'passes: loop {
        let mut improved = false;
        for e in 0..m {
            let (s, t) = (2 * e, 2 * e + 1);
            let coincide = e > 0 && layout.pos[s - 1] == layout.pos[s];
            let moves: [(usize, usize); 4] = [
                (s, s + 1),
                (t, t + 1),
                if coincide { (s - 1, s + 1) } else { (0, 0) },
                (s, 2 * m),
            ];
            for (from, to) in moves {
                for later in [false, true] {
                    if volume <= lo || budget == 0 {
                        break 'passes;
                    }
                    if from == to {
                        continue;
                    }
                    let Some(moved) = layout::shift(runs, &layout, from, to, later) else {
                        continue;
                    };
                    budget -= 1;
                    if layout::feasible(graph, &moved, volume - 1) {
                        lengths = layout::staff(graph, &moved, lo, Some(volume - 1));
                        volume = volume_of(&lengths);
                        layout = moved;
                        improved = true;
                    }
                }
            }
        }
        if !improved {
            break;
        }
    }
    (layout, lengths)
}

/// Schedules for every number of steps from `Delta` up, and their trade-off.
///
/// Every schedule is a *layout*: the messages, in array order, get consecutive
/// runs of slots on a cycle of `k` steps (a processor's messages never share a
/// step because its run fits in one lap), and the step lengths of a layout are
/// optimised exactly (an integer cyclic staffing problem: difference constraints
/// on prefix sums, searched on the total). Candidates:
/// 1. the paper's schedule ([`paper_schedule`]), and the same layout (Selection
///    then the round-robin colouring) with the optimal piece sizes;
/// 2. the schedule meeting the lower bound: element `x` sent at time `x mod B`
///    (`B` the largest block; preemptive open-shop scheduling on a path), in as
///    many steps as there are distinct `boundary mod B`;
/// 3. from it, a chain down to `Delta` steps that merges two adjacent steps at a
///    time (the best of a few candidates, exactly evaluated; several at a time far
///    from `Delta`), unless the modular schedule has more than [`MAX_PIECES`]
///    pieces;
/// 4. the paper's Selection with a budget of `Delta + 1 ..= Delta + 8` pieces per
///    processor;
/// 5. a local search over layouts at `Delta` steps (boundaries moved by a slot).
///
/// # Arguments
/// * `graph`: the redistribution graph.
/// * `options`: limits of the search.
///
/// # Returns
/// The [`Tradeoff`]: the first point has `Delta` steps and a volume no larger than
/// the paper's; without a step limit, the last point's volume is the largest
/// block (unless that schedule has more than [`MAX_PIECES`] pieces). Empty for an
/// empty array.
///
/// # Complexity
/// With m messages, `k0 <= m + 1` steps in the modular schedule, k steps in a
/// layout and `s <= k + 2` sweeps per feasibility check (a few in practice): a
/// feasibility check costs O(s (k + m)), an exact evaluation (the least total)
/// O(s (k + m) log N). The chain makes O(log k0) batches (each O(m + k0 log k0),
/// plus an evaluation where its point is kept) and, in its last 64 steps,
/// `merge_candidates` evaluations per step; Selection with larger budgets, 8
/// evaluations; the local search, `local_search_budget` checks; the colouring
/// search, at most `colouring_budget` assignments of O(m 2^k) each (and
/// O(2 * 10^6) work in all per number of steps). Beyond 4,096 messages the merge
/// candidates and the local search shrink in proportion. O((m + d) log m) for the
/// paper's schedule besides. Space: O(m + k0 + points * (m + k)).
///
/// # Example
/// ```
/// use hetbal::genblock::{redistribution_graph, tradeoff, GenBlockInstance, SearchOptions};
/// let g = GenBlockInstance::new(&[7, 16, 11, 10, 7, 49], &[15, 16, 10, 16, 15, 28], 0.0, 1.0)
///     .unwrap();
/// let graph = redistribution_graph(&g);
/// let t = tradeoff(&graph, &SearchOptions::default());
/// assert_eq!(t.points[0].steps, graph.degree);
/// // With free startups, the bound (the largest block, 49) is reached.
/// assert_eq!(t.points.last().unwrap().volume, 49);
/// ```
pub fn tradeoff(graph: &RedistributionGraph, options: &SearchOptions) -> Tradeoff {
    search(graph, options, false)
}

/// [`tradeoff`]; with `bound_only`, only what can reach the lower bound: the
/// paper's schedule, the modular schedule and its merge chain while the volume
/// stays at the bound (what free startups call for).
fn search(graph: &RedistributionGraph, options: &SearchOptions, bound_only: bool) -> Tradeoff {
    let delta = graph.degree;
    let max_steps = options.max_steps.unwrap_or(usize::MAX).max(delta);
    let mut collector = Collector {
        max_steps,
        found: Vec::new(),
    };
    if graph.is_empty() {
        return collector.into_tradeoff();
    }
    let runs = layout::runs(graph);
    let lo = graph.largest_block;

    // 1. The paper's schedule, and its layout with the best sizes.
    let paper = paper_schedule(graph);
    let paper_volume = paper.schedule.volume();
    collector
        .found
        .push((delta, paper_volume, Source::Paper(paper.schedule)));
    let paper_layout = Layout::from_copies(delta, &paper.copies);
    let lengths = layout::staff(graph, &paper_layout, lo, u64::try_from(paper_volume).ok());
    let mut at_delta = (paper_layout, lengths);
    collector.add_layout(&at_delta.0, &at_delta.1);

    // 2 and 3. The modular schedule, and the merge chain down to Delta.
    let (mut chain, mut chain_lengths) = layout::modular_layout(graph);
    // Merge with care (one pair at a time, candidates evaluated) only where the
    // points may be used: near Delta and below the step limit.
    let zone = SINGLE_MERGE_ZONE.min(max_steps.saturating_sub(delta).saturating_add(8));
    collector.add_layout(&chain, &chain_lengths);
    // Too many pieces: its laps are too many to merge down in reasonable time.
    let chain_worth_it = chain.slot_count() <= MAX_PIECES;
    while chain_worth_it && chain.k > delta {
        let k = chain.k;
        let (next, exact) = if k - delta > zone {
            let count = (k - delta) / 8;
            let after = k - count.max(1);
            // Exact lengths only where the point may be recorded; elsewhere the
            // merged lengths only rank the next merges.
            let exact = bound_only || after <= max_steps || after - delta <= zone;
            (
                merge_batch(graph, &runs, &chain, &chain_lengths, count, exact),
                exact,
            )
        } else {
            let candidates = scaled(graph, options.merge_candidates);
            (
                merge_best(graph, &runs, &chain, &chain_lengths, candidates),
                true,
            )
        };
        let Some((merged, lengths)) = next else { break };
        if bound_only && volume_of(&lengths) > lo {
            break;
        }
        chain = merged;
        chain_lengths = lengths;
        if exact {
            collector.add_layout(&chain, &chain_lengths);
            if chain.k == delta && volume_of(&chain_lengths) < volume_of(&at_delta.1) {
                at_delta = (chain.clone(), chain_lengths.clone());
            }
        }
    }

    if bound_only {
        return collector.into_tradeoff();
    }

    // 4. Selection with larger budgets.
    let top = max_steps.min(delta.saturating_add(SELECTION_EXTRA_STEPS));
    for k in delta + 1..=top {
        let copies = selection(graph, k);
        let layout = Layout::from_copies(k, &copies);
        let lengths = layout::staff(graph, &layout, lo, None);
        collector.add_layout(&layout, &lengths);
    }

    // 5. Local search at Delta steps.
    if options.local_search_budget > 0 {
        let (layout, lengths) = local_search(
            graph,
            &runs,
            at_delta.0,
            at_delta.1,
            scaled(graph, options.local_search_budget),
        );
        collector.add_layout(&layout, &lengths);
    }
    // 6. Every colouring, at Delta to Delta + 2 steps: lower the step lengths of
    // the best layout found.
    if options.colouring_budget > 0 {
        let top = max_steps
            .min(delta.saturating_add(COLOURING_EXTRA_STEPS))
            .min(colouring::MAX_STEPS);
        for k in delta..=top {
            let start = collector
                .found
                .iter()
                .filter_map(|(_, volume, source)| match source {
                    Source::Layout(layout, lengths) if layout.k == k => Some((*volume, lengths)),
                    _ => None,
                })
                .min_by_key(|&(volume, _)| volume)
                .map(|(_, lengths)| lengths.clone());
            let Some(start) = start else { continue };
            // Each assignment costs about m * 2^k: on large graphs, fewer checks,
            // none when too few would be left to make progress.
            let per_check = graph.len().max(1).saturating_mul(1 << k);
            let affordable = COLOURING_WORK / per_check;
            if affordable < COLOURING_MIN_CHECKS {
                continue;
            }
            let checks = options.colouring_budget.min(affordable);
            if let Some((lengths, sets)) = colouring::descend(graph, &start, checks) {
                let schedule = colouring::schedule_of(graph, &lengths, &sets);
                collector.found.push((
                    schedule.len(),
                    schedule.volume(),
                    Source::Colouring(lengths, sets),
                ));
            }
        }
    }
    collector.into_tradeoff()
}

/// Steps beyond `Delta` for which the colouring search runs.
const COLOURING_EXTRA_STEPS: usize = 2;

/// Work of the colouring search at one number of steps (checks times `m * 2^k`).
const COLOURING_WORK: usize = 2_000_000;

/// The colouring search is skipped when its work cap leaves fewer checks.
const COLOURING_MIN_CHECKS: usize = 8;

/// The merge points `g` (`1 <= g < k`: steps `g - 1` and `g`) ranked for merging:
/// the shorter of the two steps first, then their total, then `g`.
fn merge_order(lengths: &[u64], k: usize) -> Vec<usize> {
    let mut order: Vec<usize> = (1..k).collect();
    order.sort_by_key(|&g| {
        (
            lengths[g - 1].min(lengths[g]),
            lengths[g - 1] + lengths[g],
            g,
        )
    });
    order
}

/// One step of the merge chain: the best of the first `candidates` valid merges,
/// adjacent steps ranked by the shorter of the two.
fn merge_best(
    graph: &RedistributionGraph,
    runs: &[(usize, usize)],
    chain: &Layout,
    lengths: &[u64],
    candidates: usize,
) -> Option<(Layout, Vec<u64>)> {
    let order = merge_order(lengths, chain.k);
    let lo = graph.largest_block;
    let hint = volume_of(lengths);
    let mut best: Option<(Layout, Vec<u64>)> = None;
    let mut tried = 0;
    for g in order {
        if tried == candidates {
            break;
        }
        let Some(merged) = layout::merge(graph, runs, chain, &[g]) else {
            continue;
        };
        tried += 1;
        if let Some((_, best_lengths)) = &best {
            let to_beat = volume_of(best_lengths);
            if to_beat <= lo || !layout::feasible(graph, &merged, to_beat - 1) {
                continue;
            }
        }
        let merged_lengths = layout::staff(graph, &merged, lo, Some(hint));
        best = Some((merged, merged_lengths));
    }
    best
}

/// Several merges at once (`count` of them, at least one), the shortest adjacent
/// steps first by the lengths known before the batch; then, if `exact`, one exact
/// evaluation (otherwise the lengths returned are the merged ones, a ranking
/// only, not necessarily enough for the layout).
fn merge_batch(
    graph: &RedistributionGraph,
    runs: &[(usize, usize)],
    chain: &Layout,
    lengths: &[u64],
    count: usize,
    exact: bool,
) -> Option<(Layout, Vec<u64>)> {
    let k = chain.k;
    let order = merge_order(lengths, k);
    // The best-ranked points, no two adjacent.
    let mut taken = vec![false; k + 1];
    let mut points = Vec::with_capacity(count);
    for &g in &order {
        if points.len() == count.max(1) {
            break;
        }
        if !taken[g - 1] && !taken[g + 1] {
            taken[g] = true;
            points.push(g);
        }
    }
    // Fewer points at a time when the batch leaves no valid layout, then single
    // points down the ranking.
    let mut merged = None;
    while !points.is_empty() {
        if let Some(layout) = layout::merge(graph, runs, chain, &points) {
            merged = Some(layout);
            break;
        }
        points.truncate(points.len() / 2);
    }
    if merged.is_none() {
        for &g in order.iter().skip(1).take(BATCH_FALLBACKS) {
            if let Some(layout) = layout::merge(graph, runs, chain, &[g]) {
                merged = Some(layout);
                points = vec![g];
                break;
            }
        }
    }
    let layout = merged?;
    let mut removed = vec![false; k];
    for &g in &points {
        removed[g] = true;
    }
    // The merged lengths: a removed point's two steps become one.
    let mut approx: Vec<u64> = Vec::with_capacity(layout.k);
    for (q, &c) in lengths.iter().enumerate() {
        if removed[q] {
            *approx.last_mut().expect("point 0 is never removed") += c;
        } else {
            approx.push(c);
        }
    }
    if !exact {
        return Some((layout, approx));
    }
    let lengths = layout::staff(
        graph,
        &layout,
        graph.largest_block,
        Some(volume_of(&approx)),
    );
    Some((layout, lengths))
}

/// The `best` schedule for a cost model: the point of [`tradeoff`] of least
/// `startup * steps + unit * volume`, improved by a local search at its number of
/// steps, never worse than the paper's schedule.
///
/// The search is limited to the numbers of steps that could beat the paper's
/// schedule: `k * startup + unit * B <= Delta * startup + unit * paper volume`.
/// With free startups (`startup = 0`) the bound is met by the modular schedule,
/// and only the merge chain runs, as long as it stays at the bound (to find fewer
/// steps at the same cost) — unless that schedule has more than [`MAX_PIECES`]
/// pieces, in which case the whole search runs within that limit.
///
/// # Arguments
/// * `graph`: the redistribution graph.
/// * `startup`, `unit`: the cost model (`Tu >= 0`, `tau > 0`).
/// * `options`: limits of the search (`max_steps` is lowered as above).
///
/// # Returns
/// The schedule and the trade-off it was chosen from. Empty for an empty array.
///
/// # Complexity
/// That of [`tradeoff`], plus one local search.
///
/// # Example
/// ```
/// use hetbal::genblock::{best_schedule, paper_schedule, redistribution_graph};
/// use hetbal::genblock::{GenBlockInstance, SearchOptions};
/// let g = GenBlockInstance::new(&[7, 16, 11, 10, 7, 49], &[15, 16, 10, 16, 15, 28], 0.0, 1.0)
///     .unwrap();
/// let graph = redistribution_graph(&g);
/// let paper = paper_schedule(&graph).schedule;
/// for tu in [0.0, 5.0, 1000.0] {
///     let (best, _) = best_schedule(&graph, tu, 1.0, &SearchOptions::default());
///     assert!(best.cost(tu, 1.0) <= paper.cost(tu, 1.0));
/// }
/// // Free startups: the largest block, 49, is reached.
/// let (best, _) = best_schedule(&graph, 0.0, 1.0, &SearchOptions::default());
/// assert_eq!(best.volume(), 49);
/// ```
pub fn best_schedule(
    graph: &RedistributionGraph,
    startup: f64,
    unit: f64,
    options: &SearchOptions,
) -> (StepSchedule, Tradeoff) {
    if graph.is_empty() {
        return (StepSchedule::default(), tradeoff(graph, options));
    }
    let delta = graph.degree;
    let paper = paper_schedule(graph).schedule;
    let paper_volume = paper.volume();
    let mut options = *options;
    if startup > 0.0 {
        // k * Tu + tau * B > Delta * Tu + tau * paper  =>  k cannot win.
        let slack = unit * (paper_volume - u128::from(graph.largest_block)) as f64 / startup;
        let limit = delta.saturating_add(slack.floor().min(1e12) as usize);
        options.max_steps = Some(options.max_steps.map_or(limit, |m| m.min(limit)));
    }
    // Free startups: every schedule at the bound is optimal, look no further.
    let (modular, _) = layout::modular_layout(graph);
    let slots_per_step = modular.slot_count().div_ceil(modular.k).max(1);
    let bound_only = startup == 0.0 && modular.slot_count() <= MAX_PIECES;
    if modular.slot_count() > MAX_PIECES {
        // Schedules of more steps than this have too many pieces anyway.
        let limit = (MAX_PIECES / slots_per_step).max(delta);
        options.max_steps = Some(options.max_steps.map_or(limit, |m| m.min(limit)));
    }
    let t = search(graph, &options, bound_only);
    let chosen = t
        .choose(startup, unit)
        .expect("a non-empty array has points");
    let mut schedule = t.schedule(graph, chosen);
    if let Source::Layout(layout, lengths) = &t.sources[chosen] {
        if layout.k != delta && options.local_search_budget > 0 {
            let runs = layout::runs(graph);
            let (layout, lengths) = local_search(
                graph,
                &runs,
                layout.clone(),
                lengths.clone(),
                scaled(graph, options.local_search_budget),
            );
            let improved = layout::schedule_of(graph, &layout, &lengths);
            if improved.cost(startup, unit) < schedule.cost(startup, unit) {
                schedule = improved;
            }
        }
    }
    if paper.cost(startup, unit) < schedule.cost(startup, unit) {
        schedule = paper;
    }
    (schedule, t)
}
