//! The MPI runtime (`hetbal_mpi.h`): a ring redistribution of the caller's
//! buffer, and the balancer of iterative applications. Every function is
//! collective over its communicator: every rank calls it with matching
//! arguments. The communicator stays the caller's: hetbal works on a duplicate
//! (`MPI_Comm_dup`), so its messages never mix with the application's, and
//! frees only that duplicate.

use std::ffi::{c_int, c_void};
use std::mem::ManuallyDrop;

use ::mpi::collective::SystemOperation;
use ::mpi::ffi::MPI_Comm;
use ::mpi::topology::SimpleCommunicator;
use ::mpi::traits::{Communicator, CommunicatorCollectives, FromRaw};
use hetbal::iterative::Policy;
use hetbal_mpi::balancer::Balancer;
use hetbal_mpi::ring::{link_flows, message_batches, redistribute_bytes};
use hetbal_mpi::{Options, RunError};

use crate::plan::hetbal_plan;
use crate::{
    check_costs, guard, hand_out, hetbal_status, live, live_mut, slice, take_back, Failure,
};

/// A Fortran communicator handle (`MPI_Fint`, an `integer`; for `mpi_f08`'s
/// `type(MPI_Comm)` its `MPI_VAL`).
pub type MPI_Fint = c_int;

/// A duplicate of the caller's communicator, freed when dropped.
fn duplicate(comm: MPI_Comm, function: &str) -> Result<SimpleCommunicator, Failure> {
    if !::mpi::environment::is_initialized() {
        return Err(Failure::input(format!(
            "{function}: MPI is not initialised: call MPI_Init first"
        )));
    }
    if comm == unsafe { ::mpi::ffi::RSMPI_COMM_NULL } {
        return Err(Failure::input(format!("{function}: comm is MPI_COMM_NULL")));
    }
    let mut dup = unsafe { ::mpi::ffi::RSMPI_COMM_NULL };
    let code = unsafe { ::mpi::ffi::MPI_Comm_dup(comm, &mut dup) };
    if code != 0 {
        return Err(Failure::run(format!(
            "{function}: MPI_Comm_dup failed (MPI error {code})"
        )));
    }
    // The duplicate is ours: SimpleCommunicator frees it when dropped.
    Ok(unsafe { SimpleCommunicator::from_raw(dup) })
}

/// Every rank's argument checks agreed (one all-reduce): this rank's failure,
/// or an error naming the first rank that failed.
fn agree(
    comm: &SimpleCommunicator,
    local: Result<(), Failure>,
    function: &str,
) -> Result<(), Failure> {
    let mine = if local.is_err() {
        comm.rank()
    } else {
        i32::MAX
    };
    let mut first = i32::MAX;
    comm.all_reduce_into(&mine, &mut first, SystemOperation::min());
    match local {
        Err(failure) => Err(failure),
        Ok(()) if first != i32::MAX => Err(Failure::input(format!(
            "{function}: rank {first} gave wrong arguments (its hetbal_last_error says which); nothing moved"
        ))),
        Ok(()) => Ok(()),
    }
}

/// The caller's `malloc`ed buffer of `count` items as a vector (no copy).
///
/// # Safety
/// `*items` was allocated by `malloc` (or the library) and holds `count *
/// item_bytes` bytes.
unsafe fn buffer_of(
    items: *mut *mut c_void,
    count: *mut u64,
    item_bytes: usize,
    function: &str,
) -> Result<Vec<u8>, Failure> {
    if items.is_null() || count.is_null() {
        let name = if items.is_null() { "items" } else { "count" };
        return Err(Failure::input(format!("{function}: {name} is NULL")));
    }
    if item_bytes == 0 {
        return Err(Failure::input(format!("{function}: item_bytes is 0")));
    }
    let bytes = (*count)
        .checked_mul(item_bytes as u64)
        .and_then(|b| usize::try_from(b).ok())
        .filter(|&b| b <= isize::MAX as usize)
        .ok_or_else(|| {
            Failure::input(format!(
                "{function}: count {} x item_bytes {item_bytes} overflows this machine's memory",
                *count
            ))
        })?;
    if bytes == 0 {
        return Err(Failure::input(format!(
            "{function}: count is 0: every rank of a ring holds one item at least"
        )));
    }
    if (*items).is_null() {
        return Err(Failure::input(format!(
            "{function}: *items is NULL but count is {}",
            *count
        )));
    }
    // The library's allocator is malloc: the buffer is a vector's.
    Ok(Vec::from_raw_parts((*items) as *mut u8, bytes, bytes))
}

/// Hands the vector back to the caller as `*items` (it may have moved: a
/// `realloc`), and its item count as `*count` when `update_count`.
unsafe fn hand_back(
    buffer: Vec<u8>,
    items: *mut *mut c_void,
    count: *mut u64,
    item_bytes: usize,
    update_count: bool,
) {
    let mut buffer = ManuallyDrop::new(buffer);
    *items = buffer.as_mut_ptr() as *mut c_void;
    if update_count {
        *count = (buffer.len() / item_bytes) as u64;
    }
}

/// The status of a failed run: the caller's arguments, or the run.
fn run_failure(e: RunError, function: &str) -> Failure {
    let message = format!("{function}: {e}");
    match e {
        RunError::WorldSize { .. } | RunError::WrongLoad { .. } | RunError::InvalidPlan { .. } => {
            Failure::input(message)
        }
        _ => Failure::run(message),
    }
}

/// Moves this rank's items as `plan` says, over `comm` (rank i is ring
/// position i; the communicator's size is the plan's number of processors).
/// `*items` is a `malloc`ed buffer of `*count` items of `item_bytes` bytes,
/// `*count` the plan's load of this rank. On success `*items` holds this
/// rank's new items, in the global order (it may have been `realloc`ed), and
/// `*count` their number. The items arriving go to the buffer's spare room
/// beyond the rank's own: no second copy.
///
/// On failure nothing is lost: every rank gets an error and keeps its items
/// and `*count` (`*items` may point to a `realloc`ed buffer holding the same
/// items). Wrong arguments on any rank (NULL, `item_bytes` 0, a count that is
/// not the plan's load) give [`hetbal_status::HETBAL_ERROR_INPUT`] on every
/// rank before anything moves; a failed transfer or check gives
/// [`hetbal_status::HETBAL_ERROR_RUN`].
///
/// # Safety
/// `comm` is a valid communicator (or `MPI_COMM_NULL`); `plan` is NULL or from
/// `hetbal_ring_plan`; `items` and `count` are NULL or valid pointers, `*items`
/// a `malloc`ed buffer of `*count * item_bytes` bytes.
#[no_mangle]
pub unsafe extern "C" fn hetbal_mpi_ring_redistribute(
    comm: MPI_Comm,
    plan: *const hetbal_plan,
    item_bytes: usize,
    items: *mut *mut c_void,
    count: *mut u64,
) -> hetbal_status {
    const F: &str = "hetbal_mpi_ring_redistribute";
    guard(|| {
        let comm = duplicate(comm, F)?;
        let plan = live(plan);
        let mut buffer = None;
        let local = (|| {
            let plan = plan.ok_or_else(|| Failure::input(format!("{F}: plan is NULL or freed")))?;
            let (ranks, n) = (comm.size() as usize, plan.ring.len());
            if ranks != n {
                return Err(Failure::input(format!(
                    "{F}: the communicator has {ranks} ranks but the plan {n} processors"
                )));
            }
            buffer = Some(buffer_of(items, count, item_bytes, F)?);
            let load = plan.ring.loads()[comm.rank() as usize];
            if *count != load {
                return Err(Failure::input(format!(
                    "{F}: *count is {} but the plan's load of rank {} is {load}",
                    *count,
                    comm.rank()
                )));
            }
            Ok::<_, Failure>(plan)
        })();
        let plan = match agree(&comm, local.as_ref().map(|_| ()).map_err(clone_failure), F) {
            Ok(()) => local.expect("agreed"),
            Err(e) => {
                if let Some(b) = buffer {
                    hand_back(b, items, count, item_bytes, false);
                }
                return Err(e);
            }
        };
        let mut buffer = buffer.expect("checked");
        let flows = link_flows(plan.ring.len(), &plan.plan.flows);
        // A plan with start-ups: one message per planned transfer.
        let options = Options {
            batches: message_batches(&plan.ring, &plan.plan),
            ..Options::default()
        };
        let result = redistribute_bytes(
            &comm,
            plan.ring.loads(),
            &flows,
            item_bytes,
            &mut buffer,
            &options,
        );
        hand_back(buffer, items, count, item_bytes, result.is_ok());
        result.map(|_| ()).map_err(|e| run_failure(e, F))
    })
}

/// A copy of a failure (for the agreement, which consumes its argument).
fn clone_failure(f: &Failure) -> Failure {
    Failure {
        status: f.status,
        message: f.message.clone(),
    }
}

/// [`hetbal_mpi_ring_redistribute`] with a Fortran communicator handle.
///
/// # Safety
/// As [`hetbal_mpi_ring_redistribute`].
#[no_mangle]
pub unsafe extern "C" fn hetbal_mpi_ring_redistribute_f(
    comm: MPI_Fint,
    plan: *const hetbal_plan,
    item_bytes: usize,
    items: *mut *mut c_void,
    count: *mut u64,
) -> hetbal_status {
    hetbal_mpi_ring_redistribute(
        ::mpi::ffi::MPI_Comm_f2c(comm),
        plan,
        item_bytes,
        items,
        count,
    )
}

/// The balancer of an iterative application. Opaque to C.
pub struct hetbal_balancer {
    comm: SimpleCommunicator,
    balancer: Balancer,
    item_bytes: usize,
}

/// What the balancer decided after an iteration.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct hetbal_decision {
    /// 1 when the items moved (the buffer and count changed), 0 otherwise.
    pub redistribute: c_int,
    /// The iteration just measured (from 1).
    pub iteration: u32,
    /// The iteration time with the loads before: the slowest rank's compute.
    pub current_step: f64,
    /// The iteration time with the balanced loads, at the same speeds.
    pub balanced_step: f64,
    /// The predicted time of the move to the balanced loads, in seconds: its
    /// plan's makespan (0 when the loads are balanced already). With measured
    /// links, when a lower bound on that time already shows the move does not
    /// pay, the bound (the plan is not made).
    pub redistribution_time: f64,
    /// The gain the policy predicted over the remaining iterations, in seconds;
    /// NaN when it weighed none.
    pub predicted_gain: f64,
    /// The global position of this rank's first item now (positions count from
    /// rank 0's first item at the first decision, and wrap at the total).
    pub first: u64,
    /// This rank's items now.
    pub count: u64,
}

/// A balancer for an application on `comm` (rank i is ring position i) whose
/// items are `item_bytes` bytes each. `c_succ[i]` / `c_pred[i]`: seconds to
/// send one item from rank i to i+1 / to i-1; `c_succ` NULL: the balancer
/// measures every link itself (neighbour ping-pongs, a few milliseconds);
/// `c_pred` NULL with `c_succ` given: items move towards successors only. It
/// decides with the adaptive policy (hetbal's best online policy). Free it
/// with [`hetbal_mpi_balancer_free`]. Collective.
///
/// Errors: [`hetbal_status::HETBAL_ERROR_INPUT`] (on every rank) for a NULL
/// `balancer_out`, `item_bytes` 0, a NaN or negative cost, MPI not
/// initialised; [`hetbal_status::HETBAL_ERROR_RUN`] when measuring fails.
///
/// # Safety
/// `comm` is a valid communicator; the cost arrays are NULL or hold one value
/// per rank; `balancer_out` is NULL or a valid pointer.
#[no_mangle]
pub unsafe extern "C" fn hetbal_mpi_balancer_create(
    comm: MPI_Comm,
    item_bytes: usize,
    c_succ: *const f64,
    c_pred: *const f64,
    balancer_out: *mut *mut hetbal_balancer,
) -> hetbal_status {
    const F: &str = "hetbal_mpi_balancer_create";
    guard(|| {
        let comm = duplicate(comm, F)?;
        let n = comm.size() as usize;
        let local = (|| {
            if balancer_out.is_null() {
                return Err(Failure::input(format!("{F}: balancer_out is NULL")));
            }
            *balancer_out = std::ptr::null_mut();
            if item_bytes == 0 {
                return Err(Failure::input(format!("{F}: item_bytes is 0")));
            }
            if c_succ.is_null() {
                if !c_pred.is_null() {
                    return Err(Failure::input(format!(
                        "{F}: c_pred is given without c_succ: give both, c_succ alone, or neither (measured)"
                    )));
                }
                return Ok(None);
            }
            let succ = slice(c_succ, n, &format!("{F}: c_succ"))?.to_vec();
            check_costs(&succ, &format!("{F}: c_succ"))?;
            let pred = match c_pred.is_null() {
                true => None,
                false => {
                    let pred = slice(c_pred, n, &format!("{F}: c_pred"))?.to_vec();
                    check_costs(&pred, &format!("{F}: c_pred"))?;
                    Some(pred)
                }
            };
            Ok(Some((succ, pred)))
        })();
        agree(&comm, local.as_ref().map(|_| ()).map_err(clone_failure), F)?;
        let balancer = match local.expect("agreed") {
            Some((succ, pred)) => Balancer::new(succ, pred),
            None => Balancer::measuring(&comm, Policy::Adaptive, item_bytes)
                .map_err(|e| run_failure(e, F))?,
        };
        *balancer_out = hand_out(hetbal_balancer {
            comm,
            balancer,
            item_bytes,
        });
        Ok(())
    })
}

/// [`hetbal_mpi_balancer_create`] with a Fortran communicator handle.
///
/// # Safety
/// As [`hetbal_mpi_balancer_create`].
#[no_mangle]
pub unsafe extern "C" fn hetbal_mpi_balancer_create_f(
    comm: MPI_Fint,
    item_bytes: usize,
    c_succ: *const f64,
    c_pred: *const f64,
    balancer_out: *mut *mut hetbal_balancer,
) -> hetbal_status {
    hetbal_mpi_balancer_create(
        ::mpi::ffi::MPI_Comm_f2c(comm),
        item_bytes,
        c_succ,
        c_pred,
        balancer_out,
    )
}

/// One call per iteration, on every rank: `compute_seconds` is this rank's
/// compute time in the iteration just run (halo exchanges excluded: with wall
/// time every rank reports the slowest one's and nothing ever moves),
/// `remaining` the iterations still to run, `*items` / `*count` this rank's
/// `malloc`ed buffer and item count. The balancer decides with every rank's
/// numbers (one all-gather) whether moving the data pays; when it does it
/// moves the items (as [`hetbal_mpi_ring_redistribute`]: order kept, no second
/// copy, nothing lost) and updates `*items` and `*count`. `*decision_out` says
/// what was decided and where this rank's items now start.
///
/// Example (a 1-D code whose `cells` are a `malloc`ed array of `count`
/// doubles; `examples/c/jacobi.c` is a whole program):
/// ```c
/// hetbal_balancer *b;
/// hetbal_mpi_balancer_create(MPI_COMM_WORLD, sizeof(double), NULL, NULL, &b);
/// for (uint64_t it = 0; it < iterations; it++) {
///     exchange_halos(cells, count);               /* not timed */
///     double t0 = MPI_Wtime();
///     compute(cells, count);                      /* timed */
///     hetbal_decision d;
///     void *buffer = cells;
///     if (hetbal_mpi_balancer_step(b, MPI_Wtime() - t0, iterations - it - 1,
///                                  &buffer, &count, &d) != HETBAL_OK)
///         fprintf(stderr, "%s\n", hetbal_last_error());
///     cells = buffer;                             /* d.first: global position of cells[0] */
/// }
/// hetbal_mpi_balancer_free(b);
/// ```
///
/// Errors: [`hetbal_status::HETBAL_ERROR_INPUT`] for a NULL or freed balancer,
/// NULL pointers, a time that is not finite and > 0, `*count` 0 (on every rank
/// alike); [`hetbal_status::HETBAL_ERROR_RUN`] when the move fails (every rank
/// keeps its items; the balancer forgets the decision).
///
/// # Safety
/// `balancer` is NULL or from [`hetbal_mpi_balancer_create`]; the pointers are
/// NULL or valid, `*items` a `malloc`ed buffer of `*count` items.
#[no_mangle]
pub unsafe extern "C" fn hetbal_mpi_balancer_step(
    balancer: *mut hetbal_balancer,
    compute_seconds: f64,
    remaining: u64,
    items: *mut *mut c_void,
    count: *mut u64,
    decision_out: *mut hetbal_decision,
) -> hetbal_status {
    const F: &str = "hetbal_mpi_balancer_step";
    guard(|| {
        let Some(b) = live_mut(balancer) else {
            return Err(Failure::input(format!(
                "{F}: balancer is NULL or freed (collective: every rank's call fails alike only if every rank passes it so)"
            )));
        };
        let item_bytes = b.item_bytes;
        let mut buffer = None;
        let local = (|| {
            if decision_out.is_null() {
                return Err(Failure::input(format!("{F}: decision_out is NULL")));
            }
            if !(compute_seconds.is_finite() && compute_seconds > 0.0) {
                return Err(Failure::input(format!(
                    "{F}: compute_seconds = {compute_seconds}: a compute time must be finite and > 0"
                )));
            }
            buffer = Some(buffer_of(items, count, item_bytes, F)?);
            Ok(())
        })();
        if let Err(e) = agree(&b.comm, local, F) {
            if let Some(buf) = buffer {
                hand_back(buf, items, count, item_bytes, false);
            }
            return Err(e);
        }
        let mut buffer = buffer.expect("checked");
        let result = b.balancer.rebalance_bytes(
            &b.comm,
            &mut buffer,
            item_bytes,
            compute_seconds,
            remaining,
        );
        hand_back(buffer, items, count, item_bytes, result.is_ok());
        let d = result.map_err(|e| run_failure(e, F))?;
        let rank = b.comm.rank() as usize;
        *decision_out = hetbal_decision {
            redistribute: c_int::from(d.redistribute),
            iteration: d.iteration,
            current_step: d.current_step,
            balanced_step: d.balanced_step,
            redistribution_time: d.redistribution_time,
            predicted_gain: d.predicted_gain.unwrap_or(f64::NAN),
            first: d.firsts[rank],
            count: *count,
        };
        Ok(())
    })
}

/// Frees a balancer (and its duplicate of the communicator: call it before
/// `MPI_Finalize`). NULL, or a balancer already freed, does nothing.
///
/// # Safety
/// `balancer` is NULL or from [`hetbal_mpi_balancer_create`].
#[no_mangle]
pub unsafe extern "C" fn hetbal_mpi_balancer_free(balancer: *mut hetbal_balancer) {
    drop(take_back(balancer));
}
