//! Planning without MPI (`hetbal.h`): balanced targets and optimal ring
//! redistributions.

use std::ffi::c_int;
use std::sync::Arc;

use hetbal::balance::{balanced_targets, BalanceError};
use hetbal::functional::{self, Model, TimeFunction};
use hetbal::iterative::online::{first_positions, link_flows};
use hetbal::ring::{self, PlanError, RingInstance, RingPlan};

#[cfg(doc)]
use crate::hetbal_last_error;
use crate::{
    check_costs, guard, guard_value, hand_out, hetbal_status, last_error, live, set_error, slice,
    slice_mut, take_back, Failure, HETBAL_ERROR_INPUT, HETBAL_ERROR_NOT_APPLICABLE,
    HETBAL_ERROR_RUN,
};

/// Largest array the library accepts (elements), far beyond any machine.
pub(crate) const MAX_LENGTH: usize = 1 << 40;

/// Refuses `n = 0` and absurd lengths (named `name`).
fn check_length(n: usize, name: &str) -> Result<(), Failure> {
    match n {
        0 => Err(Failure::input(format!(
            "{name} is 0: give one processor at least"
        ))),
        n if n > MAX_LENGTH => Err(Failure::input(format!(
            "{name} = {n} is beyond the {MAX_LENGTH} processors the library accepts"
        ))),
        _ => Ok(()),
    }
}

/// Splits `total` items over `n` processors so that the slowest one finishes
/// first: `targets_out[i]` items for processor i (each at least 1, summing to
/// `total`), minimising `max_i targets[i] * seconds_per_item[i]`, which goes
/// to `*iteration_time_out` (when not NULL). O(n log n).
///
/// Errors ([`hetbal_status::HETBAL_ERROR_INPUT`], nothing written): `n` is 0,
/// an array is NULL, a time is not finite and > 0, `total < n`.
///
/// # Safety
/// `seconds_per_item` and `targets_out` point to `n` elements (or are NULL);
/// `iteration_time_out` is NULL or points to a double.
#[no_mangle]
pub unsafe extern "C" fn hetbal_balance(
    n: usize,
    total: u64,
    seconds_per_item: *const f64,
    targets_out: *mut u64,
    iteration_time_out: *mut f64,
) -> hetbal_status {
    guard(|| {
        check_length(n, "hetbal_balance: n")?;
        let times = slice(seconds_per_item, n, "hetbal_balance: seconds_per_item")?;
        let out = slice_mut(targets_out, n, "hetbal_balance: targets_out")?;
        let balanced = balanced_targets(total, times).map_err(|e| {
            Failure::input(match e {
                BalanceError::InvalidTime { index, value } => format!(
                    "hetbal_balance: seconds_per_item[{index}] = {value}: a time per item must be finite and > 0"
                ),
                e => format!("hetbal_balance: {e}"),
            })
        })?;
        out.copy_from_slice(&balanced.targets);
        if !iteration_time_out.is_null() {
            *iteration_time_out = balanced.max_time;
        }
        Ok(())
    })
}

/// Splits `total` items over `n` processors whose speed depends on their
/// load (a GPU, a memory cliff): processor i's time is a non-decreasing
/// function of its load, read from its measured points (see
/// `hetbal::functional`). Processor i's `point_counts[i]` points come next
/// in `point_loads` and `point_seconds` (loads in items, seconds finite and
/// at least 0; repeated loads averaged, decreasing times pooled); `cubic` 0
/// joins them by straight segments, 1 by a monotone cubic. `targets_out[i]` gets
/// processor i's items (a processor may get none; they add up to `total`),
/// minimising the slowest time, which goes to `*iteration_time_out` (when
/// not NULL): the exact integer optimum.
///
/// Errors ([`hetbal_status::HETBAL_ERROR_INPUT`], nothing written): `n` is 0,
/// an array is NULL, `cubic` not 0 or 1, a time NaN, infinite or negative, a
/// processor without a point of positive load and time.
///
/// # Safety
/// `point_counts` and `targets_out` point to `n` elements (or are NULL);
/// `point_loads` and `point_seconds` to the sum of the counts;
/// `iteration_time_out` is NULL or points to a double.
#[no_mangle]
#[allow(clippy::too_many_arguments)] // the C interface's arguments
pub unsafe extern "C" fn hetbal_balance_points(
    n: usize,
    total: u64,
    point_counts: *const usize,
    point_loads: *const u64,
    point_seconds: *const f64,
    cubic: c_int,
    targets_out: *mut u64,
    iteration_time_out: *mut f64,
) -> hetbal_status {
    const F: &str = "hetbal_balance_points";
    guard(|| {
        check_length(n, &format!("{F}: n"))?;
        let counts = slice(point_counts, n, &format!("{F}: point_counts"))?;
        let all = counts
            .iter()
            .try_fold(0usize, |a, &c| a.checked_add(c))
            .filter(|&a| a <= MAX_LENGTH)
            .ok_or_else(|| Failure::input(format!("{F}: too many points in all")))?;
        let loads = slice(point_loads, all, &format!("{F}: point_loads"))?;
        let seconds = slice(point_seconds, all, &format!("{F}: point_seconds"))?;
        let model = match cubic {
            0 => Model::PiecewiseLinear,
            1 => Model::MonotoneCubic,
            other => {
                return Err(Failure::input(format!(
                    "{F}: cubic = {other}: 0 (straight segments) or 1 (monotone cubic)"
                )))
            }
        };
        let out = slice_mut(targets_out, n, &format!("{F}: targets_out"))?;
        let mut at = 0usize;
        let functions = counts
            .iter()
            .enumerate()
            .map(|(i, &c)| {
                let points: Vec<(u64, f64)> =
                    (at..at + c).map(|k| (loads[k], seconds[k])).collect();
                at += c;
                TimeFunction::new(i, &points, model)
                    .map_err(|e| Failure::input(format!("{F}: {e}")))
            })
            .collect::<Result<Vec<_>, _>>()?;
        let balanced = functional::balance(total, &functions)
            .map_err(|e| Failure::input(format!("{F}: {e}")))?;
        out.copy_from_slice(&balanced.loads);
        if !iteration_time_out.is_null() {
            *iteration_time_out = balanced.time;
        }
        Ok(())
    })
}

/// A ring plan: the instance it was made for, the plan, the net flow on each
/// link. Opaque to C.
pub struct hetbal_plan {
    pub(crate) ring: RingInstance,
    pub(crate) plan: RingPlan,
}

/// One transfer of a plan: `items` items from processor `from` to its
/// neighbour `to`, from `start` to `end` (in the costs' time unit): back to
/// back (`period` 0), or a paced train whose k-th item (from 0) starts at
/// `start + k * period`.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct hetbal_transfer {
    /// Sending processor.
    pub from: usize,
    /// Receiving processor (a ring neighbour of `from`).
    pub to: usize,
    /// Items sent.
    pub items: u64,
    /// Start time.
    pub start: f64,
    /// End time (the last item's arrival).
    pub end: f64,
    /// Time between the starts of consecutive items of a paced train; 0 when
    /// the items go back to back (or in one message).
    pub period: f64,
}

/// Plans the fastest redistribution of a ring of `n` processors from `loads`
/// to `targets` (the same total; a processor may hold no item before, a rank
/// being filled, or after, a rank being drained): `c_succ[i]` is the time to
/// send one item from processor i to i+1 (mod n), `c_pred[i]` from i to i-1;
/// `c_pred` NULL means a unidirectional ring (items move towards successors
/// only). The planner is the library's: optimal where theory allows (every
/// unidirectional ring, homogeneous bidirectional rings, and heterogeneous ones
/// up to the exact search's size), with its lower bound otherwise. Free the
/// plan with [`hetbal_plan_free`].
///
/// Errors: [`hetbal_status::HETBAL_ERROR_INPUT`] for `n` below 2 (a ring has
/// two processors at least), a NULL array or `plan_out`, a cost that is not
/// finite and > 0 (NaN, infinite, 0 or negative), totals that differ (the
/// message names the processor and field). `*plan_out` is set to NULL on
/// failure.
///
/// # Safety
/// The arrays point to `n` elements each (or are NULL); `plan_out` is NULL or
/// points to a writable pointer.
#[no_mangle]
pub unsafe extern "C" fn hetbal_ring_plan(
    n: usize,
    loads: *const u64,
    targets: *const u64,
    c_succ: *const f64,
    c_pred: *const f64,
    plan_out: *mut *mut hetbal_plan,
) -> hetbal_status {
    let costs = LinkArrays {
        c_succ,
        c_pred,
        l_succ: std::ptr::null(),
        l_pred: std::ptr::null(),
    };
    guard(|| {
        ring_plan(
            "hetbal_ring_plan",
            n,
            loads,
            targets,
            costs,
            false,
            plan_out,
        )
    })
}

/// [`hetbal_ring_plan`] on links with a start-up per message: a transfer of m
/// items from processor i to i+1 takes `l_succ[i] + m * c_succ[i]`, one to
/// i-1 `l_pred[i] + m * c_pred[i]` (a NULL start-up array: none that way;
/// `l_pred` is not used on a unidirectional ring, but is checked when given). The planner then chooses how
/// many messages each link sends and how large, trading pipelining against
/// start-ups, and reports its lower bound with start-ups
/// ([`hetbal_plan_lower_bound`]); on links whose start-ups are all 0 the plan
/// is `hetbal_ring_plan`'s. `hetbal_mpi_ring_redistribute` (hetbal_mpi.h)
/// then sends one message per planned transfer.
///
/// Errors: those of [`hetbal_ring_plan`], and
/// [`hetbal_status::HETBAL_ERROR_INPUT`] for a start-up that is NaN,
/// infinite or negative (the message names the array and the index).
///
/// # Safety
/// As [`hetbal_ring_plan`]; `l_succ` and `l_pred` are NULL or point to `n`
/// elements.
#[no_mangle]
pub unsafe extern "C" fn hetbal_ring_plan_startups(
    n: usize,
    loads: *const u64,
    targets: *const u64,
    c_succ: *const f64,
    c_pred: *const f64,
    l_succ: *const f64,
    l_pred: *const f64,
    plan_out: *mut *mut hetbal_plan,
) -> hetbal_status {
    let costs = LinkArrays {
        c_succ,
        c_pred,
        l_succ,
        l_pred,
    };
    guard(|| {
        ring_plan(
            "hetbal_ring_plan_startups",
            n,
            loads,
            targets,
            costs,
            false,
            plan_out,
        )
    })
}

/// [`hetbal_ring_plan_startups`] on a path: the link between processor
/// `n - 1` and processor 0 is missing (both ways on a bidirectional ring), so
/// no planned transfer crosses it; a decomposition that is not periodic. The
/// net flow on every other link is then fixed (link (i, i+1) carries the items
/// processors 0 to i hold beyond their targets), and the planner schedules
/// it. `c_succ[n - 1]` and `c_pred[0]`, the missing link's costs, are checked
/// as the others but never used; the start-up arrays may be NULL (none).
///
/// Errors: those of [`hetbal_ring_plan_startups`], and
/// [`hetbal_status::HETBAL_ERROR_INPUT`] for a unidirectional path (`c_pred`
/// NULL) whose first processors hold fewer items than they must end with:
/// items would have to move backwards (the message names the last processor
/// of that prefix, the items it holds and those it needs).
///
/// # Safety
/// As [`hetbal_ring_plan_startups`].
#[no_mangle]
pub unsafe extern "C" fn hetbal_ring_plan_path(
    n: usize,
    loads: *const u64,
    targets: *const u64,
    c_succ: *const f64,
    c_pred: *const f64,
    l_succ: *const f64,
    l_pred: *const f64,
    plan_out: *mut *mut hetbal_plan,
) -> hetbal_status {
    let costs = LinkArrays {
        c_succ,
        c_pred,
        l_succ,
        l_pred,
    };
    guard(|| {
        ring_plan(
            "hetbal_ring_plan_path",
            n,
            loads,
            targets,
            costs,
            true,
            plan_out,
        )
    })
}

/// The link arrays of a ring plan's call (each NULL or `n` elements).
struct LinkArrays {
    c_succ: *const f64,
    c_pred: *const f64,
    l_succ: *const f64,
    l_pred: *const f64,
}

/// The body of [`hetbal_ring_plan`], [`hetbal_ring_plan_startups`] and
/// [`hetbal_ring_plan_path`] (`path`: the library's
/// [`RingInstance::as_path`]), its errors named after `function`.
///
/// # Safety
/// As [`hetbal_ring_plan_startups`].
unsafe fn ring_plan(
    function: &str,
    n: usize,
    loads: *const u64,
    targets: *const u64,
    links: LinkArrays,
    path: bool,
    plan_out: *mut *mut hetbal_plan,
) -> Result<(), Failure> {
    if plan_out.is_null() {
        return Err(Failure::input(format!("{function}: plan_out is NULL")));
    }
    *plan_out = std::ptr::null_mut();
    check_length(n, &format!("{function}: n"))?;
    let loads = slice(loads, n, &format!("{function}: loads"))?;
    let targets = slice(targets, n, &format!("{function}: targets"))?;
    let c_succ = slice(links.c_succ, n, &format!("{function}: c_succ"))?;
    check_costs(c_succ, &format!("{function}: c_succ"))?;
    let mut ring = if links.c_pred.is_null() {
        RingInstance::unidirectional(loads, targets, c_succ)
    } else {
        let c_pred = slice(links.c_pred, n, &format!("{function}: c_pred"))?;
        check_costs(c_pred, &format!("{function}: c_pred"))?;
        RingInstance::bidirectional(loads, targets, c_succ, c_pred)
    }
    .map_err(|e| Failure::input(format!("{function}: {e}")))?;
    if !links.l_succ.is_null() || !links.l_pred.is_null() {
        let startups = |p: *const f64, name: &str| -> Result<Vec<f64>, Failure> {
            if p.is_null() {
                return Ok(vec![0.0; n]);
            }
            let name = format!("{function}: {name}");
            let values = slice(p, n, &name)?;
            check_costs(values, &name)?;
            Ok(values.to_vec())
        };
        let (l_succ, l_pred) = (
            startups(links.l_succ, "l_succ")?,
            startups(links.l_pred, "l_pred")?,
        );
        ring = ring
            .with_startups(&l_succ, &l_pred)
            .map_err(|e| Failure::input(format!("{function}: {e}")))?;
    }
    if path {
        ring = ring
            .as_path()
            .map_err(|e| Failure::input(format!("{function}: {e}")))?;
    }
    let plan = ring::plan(&ring, None).map_err(|e| {
        let status = match e {
            PlanError::NotApplicable { .. } => HETBAL_ERROR_NOT_APPLICABLE,
            PlanError::TimesOverflow { .. } => HETBAL_ERROR_INPUT,
            _ => HETBAL_ERROR_RUN,
        };
        Failure {
            status,
            message: format!("{function}: {e}"),
        }
    })?;
    *plan_out = hand_out::<hetbal_plan, _>(hetbal_plan { ring, plan });
    Ok(())
}

/// The plan behind a handle, or `None` with this thread's last error naming
/// what is wrong (after `function`).
fn plan_of(plan: *const hetbal_plan, function: &str) -> Option<Arc<hetbal_plan>> {
    let found = live::<hetbal_plan, _>(plan);
    if found.is_none() {
        set_error(&format!(
            "{function}: plan is {}",
            if plan.is_null() {
                "NULL"
            } else {
                "not a live plan (freed, or not made by hetbal_ring_plan)"
            }
        ));
    }
    found
}

/// The plan's makespan (the time its last transfer ends); NaN for a NULL or
/// freed plan (see [`hetbal_last_error`]).
///
/// # Safety
/// `plan` is NULL or a pointer [`hetbal_ring_plan`] gave (a freed or foreign
/// handle is refused, never dereferenced).
#[no_mangle]
pub unsafe extern "C" fn hetbal_plan_makespan(plan: *const hetbal_plan) -> f64 {
    guard_value(f64::NAN, || {
        plan_of(plan, "hetbal_plan_makespan").map_or(f64::NAN, |p| p.plan.makespan)
    })
}

/// The best lower bound known on the makespan of any schedule; NaN for a NULL
/// or freed plan.
///
/// # Safety
/// As [`hetbal_plan_makespan`].
#[no_mangle]
pub unsafe extern "C" fn hetbal_plan_lower_bound(plan: *const hetbal_plan) -> f64 {
    guard_value(f64::NAN, || {
        plan_of(plan, "hetbal_plan_lower_bound").map_or(f64::NAN, |p| p.plan.lower_bound)
    })
}

/// 1 when the plan is proven optimal (it meets the lower bound), 0 when not
/// proven, -1 for a NULL or freed plan.
///
/// # Safety
/// As [`hetbal_plan_makespan`].
#[no_mangle]
pub unsafe extern "C" fn hetbal_plan_optimal(plan: *const hetbal_plan) -> c_int {
    guard_value(-1, || {
        plan_of(plan, "hetbal_plan_optimal").map_or(-1, |p| c_int::from(p.plan.optimal))
    })
}

/// Where processor `processor`'s items start after the plan: the global
/// position of its first item, positions counted from processor 0's first
/// item before the move and wrapping at the total; it then holds items
/// `first .. first + target` (modulo the total). `UINT64_MAX` for a NULL or
/// freed plan or a processor out of range, with this thread's last error set.
///
/// # Safety
/// As [`hetbal_plan_makespan`].
#[no_mangle]
pub unsafe extern "C" fn hetbal_plan_first_position(
    plan: *const hetbal_plan,
    processor: usize,
) -> u64 {
    const F: &str = "hetbal_plan_first_position";
    guard_value(u64::MAX, || {
        let Some(p) = plan_of(plan, F) else {
            return u64::MAX;
        };
        let n = p.ring.len();
        if processor >= n {
            set_error(&format!(
                "{F}: processor {processor} of a ring of {n} processors"
            ));
            return u64::MAX;
        }
        let flows = link_flows(n, &p.plan.flows);
        first_positions(p.ring.loads(), &flows)[processor]
    })
}

/// The number of transfers of the plan (0 when the loads are the targets
/// already). 0 too for a NULL or freed plan, with this thread's last error
/// set: to tell the two apart, [`hetbal_plan_makespan`] is NaN only for a bad
/// handle, and [`hetbal_plan_transfers`] returns
/// [`hetbal_status::HETBAL_ERROR_INPUT`] for one.
///
/// # Safety
/// As [`hetbal_plan_makespan`].
#[no_mangle]
pub unsafe extern "C" fn hetbal_plan_transfer_count(plan: *const hetbal_plan) -> usize {
    guard_value(0, || {
        plan_of(plan, "hetbal_plan_transfer_count").map_or(0, |p| p.plan.transfers.len())
    })
}

/// Copies the plan's transfers, in the plan's order, into `out`, which has room
/// for `capacity` of them (at least [`hetbal_plan_transfer_count`]).
///
/// Errors ([`hetbal_status::HETBAL_ERROR_INPUT`], nothing written): a NULL or
/// freed plan, `out` NULL while the plan has transfers, too small a capacity.
///
/// # Safety
/// `plan` is NULL or a pointer [`hetbal_ring_plan`] gave; `out` is NULL or has
/// room for `capacity` transfers.
#[no_mangle]
pub unsafe extern "C" fn hetbal_plan_transfers(
    plan: *const hetbal_plan,
    out: *mut hetbal_transfer,
    capacity: usize,
) -> hetbal_status {
    guard(|| {
        let Some(p) = plan_of(plan, "hetbal_plan_transfers") else {
            return Err(Failure::input(last_error()));
        };
        let transfers = &p.plan.transfers;
        if capacity < transfers.len() {
            return Err(Failure::input(format!(
                "hetbal_plan_transfers: capacity {capacity} is below the plan's {} transfers",
                transfers.len()
            )));
        }
        if transfers.is_empty() {
            return Ok(());
        }
        let out = slice_mut(out, transfers.len(), "hetbal_plan_transfers: out")?;
        for (o, t) in out.iter_mut().zip(transfers) {
            *o = hetbal_transfer {
                from: t.from,
                to: t.to,
                items: t.items,
                start: t.start,
                end: t.end,
                period: t.period.unwrap_or(0.0),
            };
        }
        Ok(())
    })
}

/// Frees a plan. NULL, or a plan already freed, does nothing.
///
/// # Safety
/// `plan` is NULL or a pointer [`hetbal_ring_plan`] gave.
#[no_mangle]
pub unsafe extern "C" fn hetbal_plan_free(plan: *mut hetbal_plan) {
    guard_value((), || drop(take_back::<hetbal_plan, _>(plan)))
}
