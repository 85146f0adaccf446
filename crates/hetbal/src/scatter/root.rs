//! Choice of the root (the paper's section 3.4): the data sit on one machine, which
//! may forward them to a better root first.

use crate::scatter::{plan, Method, OrderPolicy, PlanError, ScatterInstance, ScatterPlan};

/// One candidate root and what it would cost.
#[derive(Clone, Debug, PartialEq)]
pub struct RootCandidate {
    /// Name of the candidate root.
    pub root: String,
    /// Time to move the N items from the data holder to this root (0 for the holder
    /// itself): the holder's `Tcomm` of that processor for N items.
    pub move_time: f64,
    /// Makespan of the scatter from this root, counted from its start.
    pub makespan: f64,
    /// `move_time + makespan`.
    pub total: f64,
}

/// The outcome of [`choose_root`].
#[derive(Clone, Debug, PartialEq)]
pub struct RootChoice {
    /// Every candidate: the data holder first, then the others in the order given.
    pub candidates: Vec<RootCandidate>,
    /// Index of the chosen candidate in `candidates` (0: the holder) and in the
    /// instances passed (0: `holder`, k: `others[k - 1]`).
    pub chosen: usize,
    /// The plan from the chosen root, its times counted from the moment the data
    /// start moving (`start` = the move time).
    pub plan: ScatterPlan,
}

/// Checks that a candidate instance describes the same platform as the holder's.
fn check_candidate(
    holder: &ScatterInstance,
    candidate: &ScatterInstance,
    k: usize,
) -> Result<usize, PlanError> {
    let fail = |reason: String| {
        Err(PlanError::RootCandidate {
            candidate: k,
            reason,
        })
    };
    let root_name = candidate.name(candidate.root());
    if candidate.items() != holder.items() {
        return fail(format!(
            "(root {root_name}) scatters {} items, the data holder's instance {}",
            candidate.items(),
            holder.items()
        ));
    }
    if candidate.startup_rule() != holder.startup_rule() {
        return fail(format!(
            "(root {root_name}) uses the startup rule {}, the data holder's instance {}",
            candidate.startup_rule(),
            holder.startup_rule()
        ));
    }
    if candidate.len() != holder.len() {
        return fail(format!(
            "(root {root_name}) has {} processors, the data holder's instance {}",
            candidate.len(),
            holder.len()
        ));
    }
    for i in 0..candidate.len() {
        let name = candidate.name(i);
        let Some(h) = holder.index_of(name) else {
            return fail(format!(
                "(root {root_name}) has a processor {name:?} that the data holder's instance lacks"
            ));
        };
        if candidate.comp(i) != holder.comp(h) {
            return fail(format!(
                "(root {root_name}) gives processor {name:?} another comp than the data holder's instance (a machine computes at one speed whoever the root)"
            ));
        }
    }
    let r = holder
        .index_of(root_name)
        .expect("same names, checked above");
    if r == holder.root() {
        return fail(format!(
            "(root {root_name}) has the data holder as its root: it is a candidate already"
        ));
    }
    Ok(r)
}

/// The best root when the N items sit on the root of `holder` and may first be
/// moved, all at once, to the root of one of `others`.
///
/// Each of `others` describes the same processors (same names, items, startup rule
/// and computation costs) with another root and the communication costs from that
/// root. Moving the items to candidate r takes the holder's `Tcomm_r(N)` (one
/// message of N items, the model of a share); then r scatters them, planned by
/// [`plan`] with `method` and `policy`. The candidate with the least total time
/// wins (ties to the holder, then to the first given).
///
/// # Errors
/// [`PlanError::RootCandidate`] when an instance of `others` does not match the
/// holder's; the planning errors of any candidate.
///
/// # Complexity
/// `others.len() + 1` plans.
///
/// # Example
/// ```
/// use hetbal::scatter::{choose_root, Method, OrderPolicy, ScatterInstance};
/// // The data sit on P0, a slow machine (4 s/item) whose links to P2 and P3 are
/// // slow (1 s/item); P1 is 4 times faster and well connected (1/64 s/item).
/// let on_p0 = ScatterInstance::linear(128, 0, &[0.0, 0.015625, 1.0, 1.0],
///                                     &[4.0, 1.0, 1.0, 1.0]).unwrap();
/// let from_p1 = ScatterInstance::linear(128, 1, &[0.015625, 0.0, 0.015625, 0.015625],
///                                       &[4.0, 1.0, 1.0, 1.0]).unwrap();
/// let choice = choose_root(&on_p0, &[from_p1], Method::Exact, OrderPolicy::Best).unwrap();
/// assert_eq!(choice.chosen, 1);
/// assert_eq!(choice.candidates[1].move_time, 2.0); // 128 items at 1/64 s/item
/// assert!(choice.candidates[1].total < choice.candidates[0].total);
/// assert_eq!(choice.plan.start, 2.0);
/// ```
pub fn choose_root(
    holder: &ScatterInstance,
    others: &[ScatterInstance],
    method: Method,
    policy: OrderPolicy,
) -> Result<RootChoice, PlanError> {
    let mut moves = vec![0.0];
    for (k, other) in others.iter().enumerate() {
        let r = check_candidate(holder, other, k + 1)?;
        moves.push(holder.comm_time(r, holder.items()));
    }
    let mut candidates = Vec::with_capacity(others.len() + 1);
    let mut best: Option<(usize, ScatterPlan)> = None;
    for (k, instance) in std::iter::once(holder).chain(others).enumerate() {
        let planned = plan(instance, method, policy)?;
        let total = moves[k] + planned.makespan;
        candidates.push(RootCandidate {
            root: instance.name(instance.root()).to_string(),
            move_time: moves[k],
            makespan: planned.makespan,
            total,
        });
        let better = match &best {
            None => true,
            Some((b, _)) => total < candidates[*b].total,
        };
        if better {
            best = Some((k, planned));
        }
    }
    let (chosen, planned) = best.expect("the holder is always a candidate");
    Ok(RootChoice {
        plan: planned.started_at(moves[chosen]),
        candidates,
        chosen,
    })
}
