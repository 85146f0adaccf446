//! The MPI runtime (`hetbal_mpi.h`): a ring redistribution of the caller's
//! buffer, and the balancer of iterative applications. Every function is
//! collective over its communicator: every rank calls it with matching
//! arguments. The communicator stays the caller's: hetbal works on a duplicate
//! (`MPI_Comm_dup`), so its messages never mix with the application's, and
//! frees only that duplicate.

use std::ffi::{c_int, c_void};
use std::mem::ManuallyDrop;
use std::sync::{Mutex, MutexGuard, TryLockError};

use ::mpi::ffi::MPI_Comm;
use ::mpi::traits::Communicator;
use hetbal::functional::Model;
use hetbal::iterative::Policy;
use hetbal_mpi::balancer::{Balancer, DeciderModel};
use hetbal_mpi::buffer::{ItemBuffer, ItemStorage};
use hetbal_mpi::comm::{
    agree_arguments, duplicate_raw, fingerprint, Duplicate, DuplicateError, Refusal,
};
use hetbal_mpi::items::redistribute_items_bytes;
use hetbal_mpi::ring::{link_flows, message_batches, redistribute_bytes};
use hetbal_mpi::weighted::WeightedBalancer;
use hetbal_mpi::{Options, RunError};

use crate::buffer::{buffer_of, hetbal_item_buffer, ItemBufferCell};
#[cfg(doc)]
use crate::buffer::{hetbal_item_buffer_count, hetbal_item_buffer_create, hetbal_item_buffer_data};
use crate::plan::hetbal_plan;
use crate::{guard, guard_value, hand_out, hetbal_status, live, slice, take_back, Failure};

/// A Fortran communicator handle (`MPI_Fint`, an `integer`; for `mpi_f08`'s
/// `type(MPI_Comm)` its `MPI_VAL`).
pub type MPI_Fint = c_int;

/// A duplicate of the caller's communicator (see [`hetbal_mpi::comm`]).
fn duplicate(comm: MPI_Comm, function: &str) -> Result<Duplicate, Failure> {
    // SAFETY: the caller passes a communicator or MPI_COMM_NULL.
    unsafe { duplicate_raw(comm) }.map_err(|e| match e {
        DuplicateError::Failed { .. } => Failure::run(format!("{function}: {e}")),
        DuplicateError::NotInitialized => Failure::input(format!(
            "{function}: MPI is not initialised (or already finalized): call it between MPI_Init and MPI_Finalize"
        )),
        DuplicateError::Null => Failure::input(format!("{function}: comm is MPI_COMM_NULL")),
    })
}

/// Every rank's argument checks agreed ([`agree_arguments`], with the
/// `fingerprint` of what must match, 0 for nothing): this rank's failure, or
/// an error naming the first rank that failed, or saying that the ranks'
/// arguments differ.
fn agree<T>(
    comm: &Duplicate,
    local: Result<T, Failure>,
    fingerprint: u64,
    function: &str,
) -> Result<T, Failure> {
    agree_arguments(&**comm, local, fingerprint).map_err(|refusal| match refusal {
        Refusal::Local(failure) => failure,
        Refusal::Refused(refused) => Failure::input(format!(
            "{function}: {refused} (see hetbal_last_error on that rank)"
        )),
        Refusal::Mismatch => Failure::input(format!(
            "{function}: the ranks were given different arguments (every rank must pass the same); nothing done"
        )),
    })
}

/// The caller's `malloc`ed buffer, lent to the library as a vector for one
/// call (no copy). Whatever ends the call (success, failure, or a panic
/// unwinding through it, a bug), dropping the loan writes the buffer's
/// address back to `*items` (a `realloc` may have moved it): the caller never
/// keeps a freed pointer, and the library never frees the caller's memory.
/// `*count` is written only once the call [`Lent::commit`]s.
struct Lent {
    buffer: ManuallyDrop<Vec<u8>>,
    items: *mut *mut c_void,
    count: *mut u64,
    item_bytes: usize,
    committed: bool,
}

impl Lent {
    /// Borrows the caller's buffer of `*count` items of `item_bytes` bytes,
    /// refusing NULL pointers, `item_bytes` 0, a count of 0 and sizes that
    /// overflow (named after `function`).
    ///
    /// # Safety
    /// `items` and `count` are NULL or valid; `*items` was allocated by
    /// `malloc` (or the library) and holds `*count * item_bytes` bytes.
    unsafe fn borrow(
        items: *mut *mut c_void,
        count: *mut u64,
        item_bytes: usize,
        function: &str,
    ) -> Result<Lent, Failure> {
        Lent::borrow_named(
            items,
            count,
            (item_bytes, false),
            ("items", "count"),
            function,
        )
    }

    /// Borrows the caller's buffer `*items` of `*count` items of
    /// `item_bytes` bytes (`allow_empty`: a count of 0 allowed, `*items` then
    /// NULL or a `malloc`ed block), refusing NULL pointers, `item_bytes` 0 and
    /// sizes that overflow, naming the arguments `names` and `function`.
    ///
    /// # Safety
    /// As [`Lent::borrow`].
    unsafe fn borrow_named(
        items: *mut *mut c_void,
        count: *mut u64,
        (item_bytes, allow_empty): (usize, bool),
        (name, count_name): (&str, &str),
        function: &str,
    ) -> Result<Lent, Failure> {
        if items.is_null() || count.is_null() {
            let null = if items.is_null() { name } else { count_name };
            return Err(Failure::input(format!("{function}: {null} is NULL")));
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
                    "{function}: {count_name} {} x item_bytes {item_bytes} overflows this machine's memory",
                    *count
                ))
            })?;
        if bytes == 0 && !allow_empty {
            return Err(Failure::input(format!(
                "{function}: {count_name} is 0: every rank of a ring holds one item at least"
            )));
        }
        if bytes == 0 {
            // No items: a vector of its own, or the caller's block (malloc(0)
            // or larger) taken over by realloc so that it grows from there.
            let buffer = match (*items).is_null() {
                true => Vec::new(),
                false => {
                    let block = libc::realloc(*items, 1);
                    if block.is_null() {
                        return Err(Failure::run(format!("{function}: out of memory")));
                    }
                    *items = block;
                    Vec::from_raw_parts(block as *mut u8, 0, 1)
                }
            };
            return Ok(Lent {
                buffer: ManuallyDrop::new(buffer),
                items,
                count,
                item_bytes,
                committed: false,
            });
        }
        if (*items).is_null() {
            return Err(Failure::input(format!(
                "{function}: *{name} is NULL but {count_name} is {}",
                *count
            )));
        }
        // The library's allocator is malloc: the buffer is a vector's.
        let buffer = Vec::from_raw_parts((*items) as *mut u8, bytes, bytes);
        Ok(Lent {
            buffer: ManuallyDrop::new(buffer),
            items,
            count,
            item_bytes,
            committed: false,
        })
    }

    /// The buffer, to move items in.
    fn buffer(&mut self) -> &mut Vec<u8> {
        &mut self.buffer
    }

    /// The call succeeded: `*count` becomes the buffer's item count when the
    /// loan ends.
    fn commit(&mut self) {
        self.committed = true;
    }
}

impl Drop for Lent {
    fn drop(&mut self) {
        // SAFETY: `items` and `count` were checked valid when borrowed, and
        // the buffer goes back to the caller, who owns it.
        unsafe {
            // An empty vector that never allocated holds no block: NULL back.
            *self.items = match self.buffer.capacity() {
                0 => std::ptr::null_mut(),
                _ => self.buffer.as_mut_ptr() as *mut c_void,
            };
            if self.committed {
                *self.count = (self.buffer.len() / self.item_bytes) as u64;
            }
        }
    }
}

/// A handle's lock for one call (`function` and the handle's kind, `what`,
/// named in the error): refused while another thread's call holds it. A
/// panic in an earlier call (a bug) leaves a balancer or an item buffer as it
/// was when it ran: it forgets nothing it had committed, so a poisoned lock
/// is taken all the same.
pub(crate) fn lock<'a, S>(
    cell: &'a Mutex<S>,
    function: &str,
    what: &str,
) -> Result<MutexGuard<'a, S>, Failure> {
    cell.try_lock().or_else(|e| match e {
        TryLockError::Poisoned(p) => Ok(p.into_inner()),
        TryLockError::WouldBlock => Err(Failure::input(format!(
            "{function}: the {what} is in use by another thread's call"
        ))),
    })
}

/// Where a call moves this rank's items: the caller's `malloc`ed buffer lent
/// for the call ([`Lent`], a vector whose kept items shift when items arrive
/// in front of them) or a locked item buffer (whose kept items never move).
trait Loan {
    /// The storage the redistribution grows and fills.
    type Storage: ItemStorage<u8>;
    /// The storage, to move items in.
    fn storage(&mut self) -> &mut Self::Storage;
    /// The bytes of the items held.
    fn bytes(&self) -> usize;
    /// The call succeeded: the caller's count follows the storage's.
    fn commit(&mut self);
}

impl Loan for Lent {
    type Storage = Vec<u8>;
    fn storage(&mut self) -> &mut Vec<u8> {
        self.buffer()
    }
    fn bytes(&self) -> usize {
        self.buffer.len()
    }
    fn commit(&mut self) {
        Lent::commit(self)
    }
}

impl Loan for MutexGuard<'_, hetbal_item_buffer> {
    type Storage = ItemBuffer<u8>;
    fn storage(&mut self) -> &mut ItemBuffer<u8> {
        &mut self.items
    }
    fn bytes(&self) -> usize {
        self.items.len()
    }
    /// Nothing to do: the buffer holds its new items, and its count is theirs.
    fn commit(&mut self) {}
}

/// The error for a rank given `count` items (`what`: how the caller gave
/// them) where the plan's load of the rank is `load` (named after
/// `function`).
fn wrong_count(function: &str, what: &str, count: u64, rank: i32, load: u64) -> Failure {
    Failure::input(format!(
        "{function}: {what} is {count} but the plan's load of rank {rank} is {load}"
    ))
}

/// The 64-bit words of a lent buffer of `u64`s (native byte order).
fn words(bytes: &[u8]) -> Vec<u64> {
    (bytes.chunks_exact(size_of::<u64>()))
        .map(|b| u64::from_ne_bytes(b.try_into().expect("8 bytes")))
        .collect()
}

/// Replaces a lent buffer's bytes by `values`' (the buffer grows by
/// `realloc` when they need more room).
fn store(buffer: &mut Vec<u8>, values: impl Iterator<Item = [u8; 8]>) {
    buffer.clear();
    buffer.extend(values.flatten());
}

/// The status of a failed run: the caller's arguments, or the run.
fn run_failure(e: RunError, function: &str) -> Failure {
    let message = format!("{function}: {e}");
    match e.is_input() {
        true => Failure::input(message),
        false => Failure::run(message),
    }
}

/// Moves this rank's items as `plan` says, over `comm` (rank i is ring
/// position i; the communicator's size is the plan's number of processors).
/// `*items` is a `malloc`ed buffer of `*count` items of `item_bytes` bytes,
/// `*count` the plan's load of this rank (a rank of load 0 may pass a NULL
/// `*items`). On success `*items` holds this rank's new items, in the global
/// order (it may have been `realloc`ed; NULL when the rank ends with none and
/// never had a block), and `*count` their number. The buffer grows in place
/// (`realloc`) around the rank's own items and the items arriving go straight
/// to their places: no second copy of them. But a `malloc`ed block cannot
/// grow in front: when items arrive in front of the rank's own (from its
/// predecessor), the items it keeps shift once, by a `memmove` within the
/// block (one more pass over the kept bytes; the first touch of the memory
/// the block grows by is paid either way). Measured with 2 ranks, rank 1
/// keeping 1 GiB and receiving 1023 MiB in front: rank 1's call took
/// 0.577 s, against 0.540 s into an item buffer and 0.526 s for a plain MPI
/// transfer into a new buffer (see the guide's performance page). An item
/// buffer ([`hetbal_item_buffer_create`],
/// [`hetbal_mpi_ring_redistribute_buffer`]) never moves the kept items.
///
/// Complexity: O(items held and received) local work, plus the shift of the
/// kept items when items arrive in front of them; the messages as the plan
/// says.
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
        ring_redistribute(comm, plan, item_bytes, F, |load, rank| {
            // A rank of load 0 lends an empty buffer (NULL, or a block the
            // loan takes over); a count of 0 where the plan has items is
            // refused before the caller's block is touched.
            if !count.is_null() && *count == 0 && load != 0 {
                return Err(wrong_count(F, "*count", 0, rank, load));
            }
            let lent =
                Lent::borrow_named(items, count, (item_bytes, load == 0), ("items", "count"), F)?;
            if *count != load {
                return Err(wrong_count(F, "*count", *count, rank, load));
            }
            Ok(lent)
        })
    })
}

/// [`hetbal_mpi_ring_redistribute`] with the rank's items in an item buffer
/// (from [`hetbal_item_buffer_create`], holding the plan's load of this rank,
/// items of `item_bytes` bytes): the items this rank keeps never move (each
/// stays at its address), and those it receives land where they stay, in
/// front of them or behind. On success the buffer holds this rank's new
/// items in the global order; take its data address again
/// ([`hetbal_item_buffer_data`]: the first item may be another one now).
///
/// Prefer it to [`hetbal_mpi_ring_redistribute`] when the kept items must
/// stay where they are (pointers into them, memory registered with a network
/// or a device) or when ranks keep much and receive in front of it (from
/// their predecessor on the ring): a `malloc`ed buffer cannot grow in front,
/// so the other function shifts the kept items once (a `memmove`, one more
/// pass over them). A rank that gives items away gives their memory back to
/// the system (whole pages) before it returns, where a `malloc`ed block
/// keeps it until freed. Measured with 2 ranks, rank 1 keeping 1 GiB and
/// receiving 1023 MiB in front: rank 1's call 0.540 s here against 0.577 s
/// with the `malloc`ed buffer; the call on both ranks 0.621 s against
/// 0.577 s, rank 0 giving back the 1023 MiB it sent (see the guide's
/// performance page).
///
/// On failure nothing is lost: every rank gets an error and its buffer is
/// as it was (items, count and addresses). Wrong arguments on any rank (a
/// NULL, freed or foreign buffer handle, a buffer in use by another thread,
/// `item_bytes` 0 or not the buffer's item size, a count that is not the
/// plan's load, a NULL or freed plan) give
/// [`hetbal_status::HETBAL_ERROR_INPUT`] on every rank before anything
/// moves; a failed transfer or check, or a buffer whose reservation cannot
/// hold the items, gives [`hetbal_status::HETBAL_ERROR_RUN`].
///
/// Complexity: that of [`hetbal_mpi_ring_redistribute`], without the shift.
///
/// Example (each rank's items its global positions, as doubles):
/// ```c
/// hetbal_item_buffer *buffer;
/// hetbal_item_buffer_create(sizeof(double), &buffer);
/// hetbal_item_buffer_resize(buffer, count);             /* zeroed */
/// double *items = hetbal_item_buffer_data(buffer);
/// for (uint64_t k = 0; k < count; k++) items[k] = (double)(first + k);
/// if (hetbal_mpi_ring_redistribute_buffer(MPI_COMM_WORLD, plan, sizeof(double), buffer) != HETBAL_OK)
///     fprintf(stderr, "%s\n", hetbal_last_error());
/// items = hetbal_item_buffer_data(buffer);              /* its first item now */
/// count = hetbal_item_buffer_count(buffer);
/// hetbal_item_buffer_free(buffer);
/// ```
///
/// # Safety
/// `comm` is a valid communicator (or `MPI_COMM_NULL`); `plan` is NULL or
/// from `hetbal_ring_plan`; `buffer` is NULL or from
/// [`hetbal_item_buffer_create`].
#[no_mangle]
pub unsafe extern "C" fn hetbal_mpi_ring_redistribute_buffer(
    comm: MPI_Comm,
    plan: *const hetbal_plan,
    item_bytes: usize,
    buffer: *mut hetbal_item_buffer,
) -> hetbal_status {
    const F: &str = "hetbal_mpi_ring_redistribute_buffer";
    guard(|| {
        let cell = live::<ItemBufferCell, _>(buffer);
        ring_redistribute(comm, plan, item_bytes, F, |load, rank| {
            let b = buffer_of(&cell, F)?;
            check_item_bytes(&b, item_bytes, F)?;
            if b.count() != load {
                return Err(wrong_count(F, "the buffer's count", b.count(), rank, load));
            }
            Ok(b)
        })
    })
}

/// Refuses `item_bytes` 0 or other than the buffer's item size (named after
/// `function`).
fn check_item_bytes(
    buffer: &hetbal_item_buffer,
    item_bytes: usize,
    function: &str,
) -> Result<(), Failure> {
    if item_bytes == 0 {
        return Err(Failure::input(format!("{function}: item_bytes is 0")));
    }
    if item_bytes != buffer.item_bytes {
        return Err(Failure::input(format!(
            "{function}: item_bytes is {item_bytes} but the buffer holds items of {} bytes",
            buffer.item_bytes
        )));
    }
    Ok(())
}

/// The ring redistribution of [`hetbal_mpi_ring_redistribute`] and
/// [`hetbal_mpi_ring_redistribute_buffer`] (named `function` in errors):
/// checks the communicator and the plan, then `lend`s this rank's items
/// (given the plan's load of this rank and the rank: it checks them against
/// it), every rank agreeing on the checks before anything moves; then moves
/// the items as the plan says and commits the loan.
///
/// # Safety
/// `comm` is a valid communicator (or `MPI_COMM_NULL`); `plan` is NULL or
/// from `hetbal_ring_plan`.
unsafe fn ring_redistribute<L: Loan>(
    comm: MPI_Comm,
    plan: *const hetbal_plan,
    item_bytes: usize,
    function: &str,
    lend: impl FnOnce(u64, i32) -> Result<L, Failure>,
) -> Result<(), Failure> {
    let comm = duplicate(comm, function)?;
    let plan = live::<hetbal_plan, _>(plan);
    let mut lent = None;
    let local = (|| {
        let plan =
            plan.ok_or_else(|| Failure::input(format!("{function}: plan is NULL or freed")))?;
        let (ranks, n) = (comm.size() as usize, plan.ring.len());
        if ranks != n {
            return Err(Failure::input(format!(
                "{function}: the communicator has {ranks} ranks but the plan {n} processors"
            )));
        }
        let load = plan.ring.loads()[comm.rank() as usize];
        lent = Some(lend(load, comm.rank())?);
        Ok::<_, Failure>(plan)
    })();
    let plan = agree(&comm, local, 0, function)?;
    let mut lent = lent.expect("agreed: every rank lent its items");
    let flows = link_flows(plan.ring.len(), &plan.plan.flows);
    // A plan with start-ups: one message per planned transfer.
    let options = Options {
        batches: message_batches(&plan.ring, &plan.plan),
        ..Options::default()
    };
    redistribute_bytes(
        &*comm,
        plan.ring.loads(),
        &flows,
        item_bytes,
        lent.storage(),
        &options,
    )
    .map_err(|e| run_failure(e, function))?;
    lent.commit();
    Ok(())
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

/// [`hetbal_mpi_ring_redistribute_buffer`] with a Fortran communicator handle
/// (an `integer`, or `mpi_f08`'s `type(MPI_Comm)`'s `MPI_VAL`; converted with
/// `MPI_Comm_f2c`): the rank's items in an item buffer, the kept ones never
/// moving. Arguments, errors (on every rank, nothing lost) and complexity as
/// [`hetbal_mpi_ring_redistribute_buffer`]. The Fortran module's
/// `hetbal_ring_redistribute_buffer` calls it.
///
/// # Safety
/// As [`hetbal_mpi_ring_redistribute_buffer`].
#[no_mangle]
pub unsafe extern "C" fn hetbal_mpi_ring_redistribute_buffer_f(
    comm: MPI_Fint,
    plan: *const hetbal_plan,
    item_bytes: usize,
    buffer: *mut hetbal_item_buffer,
) -> hetbal_status {
    hetbal_mpi_ring_redistribute_buffer(::mpi::ffi::MPI_Comm_f2c(comm), plan, item_bytes, buffer)
}

/// Moves variable-size items so that rank r holds items `cuts[r] ..
/// cuts[r + 1]` of the global order (the ranks' items, rank after rank), over
/// `comm`: a chain (no item goes from the last rank to the first). This rank
/// holds `*count` items as a `malloc`ed buffer `*data` of elements of
/// `element_bytes` bytes and a `malloc`ed array `*offsets` of `*count + 1`
/// offsets in elements (item i is elements `(*offsets)[i] ..
/// (*offsets)[i + 1]`; from 0, never decreasing; items may be empty, and a
/// rank may hold none: `*data` may then be NULL). `cuts` holds `cut_count =
/// p + 1` global item indices, the same on every rank (from 0, never
/// decreasing, ending at the total number of items). On success `*data`,
/// `*offsets` (both maybe `realloc`ed) and `*count` hold this rank's new
/// items, in order; the data grows in place around the elements the rank
/// keeps, which never move until the commit.
///
/// On failure nothing is lost: every rank gets an error and keeps its items,
/// offsets and count (`*data` and `*offsets` may point to `realloc`ed blocks
/// holding the same). Wrong arguments on any rank (NULL pointers,
/// `element_bytes` 0, offsets or cuts as above not holding, cuts that differ
/// between ranks or do not end at the total) give `HETBAL_ERROR_INPUT` on
/// every rank before anything moves; a failed transfer or check gives
/// `HETBAL_ERROR_RUN`.
///
/// # Safety
/// `comm` is a valid communicator (or `MPI_COMM_NULL`); the pointers are NULL
/// or valid; `*offsets` a `malloc`ed array of `*count + 1` offsets and
/// `*data` a `malloc`ed buffer (or NULL when empty) of `(*offsets)[*count]`
/// elements; `cuts` NULL or `cut_count` values.
#[no_mangle]
pub unsafe extern "C" fn hetbal_mpi_redistribute_items(
    comm: MPI_Comm,
    element_bytes: usize,
    data: *mut *mut c_void,
    offsets: *mut *mut u64,
    count: *mut u64,
    cuts: *const u64,
    cut_count: usize,
) -> hetbal_status {
    const F: &str = "hetbal_mpi_redistribute_items";
    guard(|| {
        let comm = duplicate(comm, F)?;
        let mut loans = None;
        // The element and offset counts the loans read and write.
        let (mut elements, mut offset_count) = (0u64, 0u64);
        let local = (|| {
            if offsets.is_null() || count.is_null() || data.is_null() {
                let null = [(data.is_null(), "data"), (offsets.is_null(), "offsets")]
                    .iter()
                    .find_map(|&(n, name)| n.then_some(name))
                    .unwrap_or("count");
                return Err(Failure::input(format!("{F}: {null} is NULL")));
            }
            if (*offsets).is_null() {
                return Err(Failure::input(format!(
                    "{F}: *offsets is NULL: k items need k + 1 offsets, from 0"
                )));
            }
            offset_count = (*count)
                .checked_add(1)
                .ok_or_else(|| Failure::input(format!("{F}: *count is {}", *count)))?;
            let offs = slice(*offsets, offset_count as usize, &format!("{F}: *offsets"))?;
            elements = *offs.last().expect("k + 1 offsets");
            let cuts = slice(cuts, cut_count, &format!("{F}: cuts"))?.to_vec();
            let element_loan = Lent::borrow_named(
                data,
                &mut elements,
                (element_bytes, true),
                ("data", "the last offset"),
                F,
            )?;
            let offset_loan = Lent::borrow_named(
                offsets as *mut *mut c_void,
                &mut offset_count,
                (size_of::<u64>(), false),
                ("offsets", "*count + 1"),
                F,
            )?;
            loans = Some((element_loan, offset_loan));
            Ok(cuts)
        })();
        let cuts = agree(&comm, local, 0, F)?;
        let (mut element_loan, mut offset_loan) = loans.expect("agreed: every rank lent");
        // The offsets as the library's vector of u64 (the same bytes).
        let mut offs = words(offset_loan.buffer());
        let options = Options::default();
        let data = element_loan.buffer();
        redistribute_items_bytes(&*comm, element_bytes, data, &mut offs, &cuts, &options)
            .map_err(|e| run_failure(e, F))?;
        store(offset_loan.buffer(), offs.iter().map(|o| o.to_ne_bytes()));
        element_loan.commit();
        offset_loan.commit();
        drop((element_loan, offset_loan));
        *count = offset_count - 1;
        Ok(())
    })
}

/// [`hetbal_mpi_redistribute_items`] with a Fortran communicator handle.
///
/// # Safety
/// As [`hetbal_mpi_redistribute_items`].
#[no_mangle]
pub unsafe extern "C" fn hetbal_mpi_redistribute_items_f(
    comm: MPI_Fint,
    element_bytes: usize,
    data: *mut *mut c_void,
    offsets: *mut *mut u64,
    count: *mut u64,
    cuts: *const u64,
    cut_count: usize,
) -> hetbal_status {
    hetbal_mpi_redistribute_items(
        ::mpi::ffi::MPI_Comm_f2c(comm),
        element_bytes,
        data,
        offsets,
        count,
        cuts,
        cut_count,
    )
}

/// The balancer of an iterative application. Opaque to C: a handle to it is
/// an id in the library's registry of live handles, locked for each
/// call.
pub struct hetbal_balancer {
    comm: Duplicate,
    balancer: Balancer,
    item_bytes: usize,
}

/// What a balancer handle holds: the balancer, one call at a time.
type BalancerCell = Mutex<hetbal_balancer>;

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
/// decides with the adaptive policy (hetbal's best online policy) and one time
/// per item per rank ([`hetbal_mpi_balancer_set_policy`] and
/// [`hetbal_mpi_balancer_set_model`] change them). Free it with
/// [`hetbal_mpi_balancer_free`]. Collective.
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
            let pred = match c_pred.is_null() {
                true => None,
                false => Some(slice(c_pred, n, &format!("{F}: c_pred"))?.to_vec()),
            };
            Balancer::new(succ, pred)
                .map(Some)
                .map_err(|e| Failure::input(format!("{F}: {e}")))
        })();
        // Every rank measures, or every rank gives the same costs (those of
        // the balancer made above: read once).
        let setting = match &local {
            Ok(given) => fingerprint(&format!(
                "{item_bytes} {:?}",
                given.as_ref().map(|b| b.decider.links())
            )),
            Err(_) => 0,
        };
        let balancer = match agree(&comm, local, setting, F)? {
            Some(balancer) => balancer,
            None => Balancer::measuring(&*comm, Policy::Adaptive, item_bytes)
                .map_err(|e| run_failure(e, F))?,
        };
        *balancer_out = hand_out::<BalancerCell, _>(Mutex::new(hetbal_balancer {
            comm,
            balancer,
            item_bytes,
        }));
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
        let step = (compute_seconds, remaining, decision_out);
        balancer_step(balancer, step, F, |item_bytes| {
            Lent::borrow(items, count, item_bytes, F)
        })
    })
}

/// [`hetbal_mpi_balancer_step`] with the rank's items in an item buffer
/// (from [`hetbal_item_buffer_create`], with the balancer's item size, one
/// item at least): when the balancer moves items, those this rank keeps
/// never move (each stays at its address), as in
/// [`hetbal_mpi_ring_redistribute_buffer`]; take the buffer's data address
/// and count again after the step ([`hetbal_item_buffer_data`],
/// [`hetbal_item_buffer_count`], or `decision_out->count`).
///
/// Errors: those of [`hetbal_mpi_balancer_step`], on every rank alike; a
/// NULL, freed or foreign buffer handle, a buffer in use by another thread,
/// a buffer whose item size is not the balancer's, or an empty buffer give
/// [`hetbal_status::HETBAL_ERROR_INPUT`]. On failure every buffer is as it
/// was (items, count and addresses).
///
/// Complexity: that of [`hetbal_mpi_balancer_step`], without the shift of
/// the kept items.
///
/// # Safety
/// `balancer` is NULL or from [`hetbal_mpi_balancer_create`]; `buffer` is
/// NULL or from [`hetbal_item_buffer_create`]; `decision_out` is NULL or
/// valid.
#[no_mangle]
pub unsafe extern "C" fn hetbal_mpi_balancer_step_buffer(
    balancer: *mut hetbal_balancer,
    compute_seconds: f64,
    remaining: u64,
    buffer: *mut hetbal_item_buffer,
    decision_out: *mut hetbal_decision,
) -> hetbal_status {
    const F: &str = "hetbal_mpi_balancer_step_buffer";
    guard(|| {
        let cell = live::<ItemBufferCell, _>(buffer);
        let step = (compute_seconds, remaining, decision_out);
        balancer_step(balancer, step, F, |item_bytes| {
            let b = buffer_of(&cell, F)?;
            if b.item_bytes != item_bytes {
                return Err(Failure::input(format!(
                    "{F}: the buffer holds items of {} bytes but the balancer's are {item_bytes} bytes",
                    b.item_bytes
                )));
            }
            if b.count() == 0 {
                return Err(Failure::input(format!(
                    "{F}: the buffer is empty: every rank of a ring holds one item at least"
                )));
            }
            Ok(b)
        })
    })
}

/// The step of [`hetbal_mpi_balancer_step`] and
/// [`hetbal_mpi_balancer_step_buffer`] (named `function` in errors), for
/// `(compute_seconds, remaining, decision_out)`: checks the balancer and the
/// arguments, then `lend`s this rank's items (given the balancer's item
/// size: it checks them against it), every rank agreeing on the checks
/// before anything moves; then decides, moves the items when it pays,
/// commits the loan and writes the decision.
///
/// # Safety
/// `balancer` is NULL or from [`hetbal_mpi_balancer_create`]; `decision_out`
/// is NULL or valid.
unsafe fn balancer_step<L: Loan>(
    balancer: *mut hetbal_balancer,
    (compute_seconds, remaining, decision_out): (f64, u64, *mut hetbal_decision),
    function: &str,
    lend: impl FnOnce(usize) -> Result<L, Failure>,
) -> Result<(), Failure> {
    let Some(cell) = live::<BalancerCell, _>(balancer) else {
        return Err(Failure::input(format!(
            "{function}: balancer is NULL, freed or not a balancer (collective: every rank's call fails alike only if every rank passes it so)"
        )));
    };
    let mut b = lock(&cell, function, "balancer")?;
    let b = &mut *b;
    let item_bytes = b.item_bytes;
    let mut lent = None;
    let local = (|| {
        if decision_out.is_null() {
            return Err(Failure::input(format!("{function}: decision_out is NULL")));
        }
        if !(compute_seconds.is_finite() && compute_seconds > 0.0) {
            return Err(Failure::input(format!(
                "{function}: compute_seconds = {compute_seconds}: a compute time must be finite and > 0"
            )));
        }
        lent = Some(lend(item_bytes)?);
        Ok(())
    })();
    agree(&b.comm, local, 0, function)?;
    let mut lent = lent.expect("agreed: every rank lent its items");
    let d = b
        .balancer
        .rebalance_bytes(
            &*b.comm,
            lent.storage(),
            item_bytes,
            compute_seconds,
            remaining,
        )
        .map_err(|e| run_failure(e, function))?;
    lent.commit();
    let rank = b.comm.rank() as usize;
    *decision_out = hetbal_decision {
        redistribute: c_int::from(d.redistribute),
        iteration: d.iteration,
        current_step: d.current_step,
        balanced_step: d.balanced_step,
        redistribution_time: d.redistribution_time,
        predicted_gain: d.predicted_gain.unwrap_or(f64::NAN),
        first: d.firsts[rank],
        count: (lent.bytes() / item_bytes) as u64,
    };
    Ok(())
}

/// [`hetbal_mpi_balancer_set_model`]: one time per item per rank (the
/// default).
pub const HETBAL_MODEL_CONSTANT: c_int = 0;
/// [`hetbal_mpi_balancer_set_model`]: a time function of the load per rank,
/// learned on line, piecewise linear.
pub const HETBAL_MODEL_FUNCTIONAL: c_int = 1;
/// [`hetbal_mpi_balancer_set_model`]: the same function, monotone cubic
/// between the measured loads.
pub const HETBAL_MODEL_MONOTONE_CUBIC: c_int = 2;

/// [`hetbal_mpi_balancer_set_policy`]: the adaptive policy (the default).
pub const HETBAL_POLICY_ADAPTIVE: c_int = 0;
/// [`hetbal_mpi_balancer_set_policy`]: the profitability rule (move when the
/// gain predicted over the remaining iterations repays the move).
pub const HETBAL_POLICY_PROFITABILITY: c_int = 1;
/// [`hetbal_mpi_balancer_set_policy`]: never move.
pub const HETBAL_POLICY_NEVER: c_int = 2;
/// [`hetbal_mpi_balancer_set_policy`]: `redistributions` moves evenly spaced
/// over the run (after iterations `I m / (redistributions + 1)`, I the
/// iterations of the run).
pub const HETBAL_POLICY_FIXED: c_int = 3;

/// Sets how the balancer's decider models each rank's compute time (the
/// library's `DeciderModel`): [`HETBAL_MODEL_CONSTANT`] (0: one time per item
/// per rank, the default), [`HETBAL_MODEL_FUNCTIONAL`] (1: a piecewise-linear
/// time function of the rank's items, learned from every step: GPUs with
/// launch overheads, shares that stop fitting in memory; on a memory cliff,
/// where the constant model moves after every step and never settles, it
/// settles within a few moves) or [`HETBAL_MODEL_MONOTONE_CUBIC`] (2: the
/// same with monotone cubic interpolation). What the model learned before is
/// forgotten. Not collective, but every rank must set the same model: a step
/// with different models fails with `HETBAL_ERROR_INPUT` on every rank.
///
/// Errors: [`hetbal_status::HETBAL_ERROR_INPUT`] for a NULL or freed
/// balancer, or another `model` (the balancer is then unchanged).
///
/// # Safety
/// `balancer` is NULL or from [`hetbal_mpi_balancer_create`].
#[no_mangle]
pub unsafe extern "C" fn hetbal_mpi_balancer_set_model(
    balancer: *mut hetbal_balancer,
    model: c_int,
) -> hetbal_status {
    const F: &str = "hetbal_mpi_balancer_set_model";
    guard(|| {
        let Some(cell) = live::<BalancerCell, _>(balancer) else {
            return Err(Failure::input(format!(
                "{F}: balancer is NULL, freed or not a balancer"
            )));
        };
        let model = match model {
            HETBAL_MODEL_CONSTANT => DeciderModel::Constant,
            HETBAL_MODEL_FUNCTIONAL => DeciderModel::Functional(Model::PiecewiseLinear),
            HETBAL_MODEL_MONOTONE_CUBIC => DeciderModel::Functional(Model::MonotoneCubic),
            other => {
                return Err(Failure::input(format!(
                    "{F}: model = {other}: 0 (constant), 1 (functional, piecewise linear) or 2 \
                     (functional, monotone cubic)"
                )))
            }
        };
        let mut b = lock(&cell, F, "balancer")?;
        b.balancer.set_model(model);
        Ok(())
    })
}

/// Sets the policy the balancer decides with (the library's `Policy`):
/// [`HETBAL_POLICY_ADAPTIVE`] (0, the default), [`HETBAL_POLICY_PROFITABILITY`]
/// (1), [`HETBAL_POLICY_NEVER`] (2) or [`HETBAL_POLICY_FIXED`] (3:
/// `redistributions` moves evenly spaced over the run; `redistributions` is
/// ignored by the others). The decider starts again on the same links and
/// model (the library's `Balancer::set_policy`): what it learned is
/// forgotten, and the first positions count from rank 0's first item at the
/// next step; best called right after [`hetbal_mpi_balancer_create`]. Not
/// collective, but every rank must set the same policy: a step with
/// different policies fails with `HETBAL_ERROR_INPUT` on every rank. (There is
/// no "decide every K iterations" setting: to decide every K iterations, step
/// every K iterations with `remaining` counting the steps left.)
///
/// Errors: [`hetbal_status::HETBAL_ERROR_INPUT`] for a NULL or freed
/// balancer, or another `policy` (the balancer is then unchanged).
///
/// # Safety
/// `balancer` is NULL or from [`hetbal_mpi_balancer_create`].
#[no_mangle]
pub unsafe extern "C" fn hetbal_mpi_balancer_set_policy(
    balancer: *mut hetbal_balancer,
    policy: c_int,
    redistributions: u32,
) -> hetbal_status {
    const F: &str = "hetbal_mpi_balancer_set_policy";
    guard(|| {
        let Some(cell) = live::<BalancerCell, _>(balancer) else {
            return Err(Failure::input(format!(
                "{F}: balancer is NULL, freed or not a balancer"
            )));
        };
        let policy = match policy {
            HETBAL_POLICY_ADAPTIVE => Policy::Adaptive,
            HETBAL_POLICY_PROFITABILITY => Policy::Profitability,
            HETBAL_POLICY_NEVER => Policy::Never,
            HETBAL_POLICY_FIXED => Policy::Fixed { redistributions },
            other => {
                return Err(Failure::input(format!(
                    "{F}: policy = {other}: 0 (adaptive), 1 (profitability), 2 (never) or 3 \
                     (fixed, with redistributions)"
                )))
            }
        };
        let mut b = lock(&cell, F, "balancer")?;
        b.balancer
            .set_policy(policy)
            .map_err(|e| Failure::input(format!("{F}: {e}")))
    })
}

/// Frees a balancer and its duplicate of the communicator (not collective).
/// Call it before `MPI_Finalize`; after it, the duplicate is left to the
/// finalized library and no MPI function is called. NULL, a balancer already
/// freed, or a handle that is not a balancer does nothing. A step running on
/// another thread finishes first: the balancer is freed when it returns.
///
/// # Safety
/// `balancer` is NULL or from [`hetbal_mpi_balancer_create`] (a freed or
/// foreign handle is refused, never dereferenced).
#[no_mangle]
pub unsafe extern "C" fn hetbal_mpi_balancer_free(balancer: *mut hetbal_balancer) {
    guard_value((), || drop(take_back::<BalancerCell, _>(balancer)))
}

/// The balancer of an application whose items differ in cost and size
/// (cells of a particle code, AMR blocks, sparse rows). Opaque to C: a handle
/// in the library's registry of live handles, locked for each call.
pub struct hetbal_weighted_balancer {
    comm: Duplicate,
    balancer: WeightedBalancer,
}

/// What a weighted balancer handle holds: the balancer, one call at a time.
type WeightedCell = Mutex<hetbal_weighted_balancer>;

/// What the weighted balancer decided at a step.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct hetbal_weighted_decision {
    /// 1 when the items moved (the buffers and count changed), 0 otherwise.
    pub redistribute: c_int,
    /// This rank's first global item index after the step.
    pub first: u64,
    /// This rank's items after the step.
    pub count: u64,
    /// The iteration time of the cuts before the step, at the speeds learned
    /// (seconds: the slowest rank's weight times its seconds per unit).
    pub current_seconds: f64,
    /// That of the least-moving partition within the tolerance.
    pub balanced_seconds: f64,
    /// The least iteration time of any partition.
    pub optimum_seconds: f64,
    /// Items that change owner in that partition.
    pub moved_items: u64,
    /// Bytes of those items.
    pub moved_bytes: u64,
    /// The move's estimated time (the links, and at least the last move's).
    pub move_seconds: f64,
    /// The time the move saves over the iterations left.
    pub saved_seconds: f64,
}

/// A weighted balancer for an application on `comm`: rank r holds the r-th
/// part of the items. Among the partitions within `1 + tolerance` of the
/// optimal partition of the items' weights (0.05: 5 %), it moves to the one
/// moving the fewest bytes, when that pays. It measures every link now
/// (neighbour ping-pongs, a few milliseconds). Free it with
/// [`hetbal_mpi_weighted_balancer_free`]. Collective.
///
/// Errors: [`hetbal_status::HETBAL_ERROR_INPUT`] (on every rank) for a NULL
/// `balancer_out`, a tolerance that is not finite and >= 0, tolerances that
/// differ between ranks, MPI not initialised;
/// [`hetbal_status::HETBAL_ERROR_RUN`] when measuring fails.
///
/// # Safety
/// `comm` is a valid communicator; `balancer_out` NULL or a valid pointer.
#[no_mangle]
pub unsafe extern "C" fn hetbal_mpi_weighted_balancer_create(
    comm: MPI_Comm,
    tolerance: f64,
    balancer_out: *mut *mut hetbal_weighted_balancer,
) -> hetbal_status {
    const F: &str = "hetbal_mpi_weighted_balancer_create";
    guard(|| {
        let comm = duplicate(comm, F)?;
        let local = (|| {
            if balancer_out.is_null() {
                return Err(Failure::input(format!("{F}: balancer_out is NULL")));
            }
            *balancer_out = std::ptr::null_mut();
            if !(tolerance.is_finite() && tolerance >= 0.0) {
                return Err(Failure::input(format!(
                    "{F}: tolerance = {tolerance}: a fraction above the optimum, finite and >= 0"
                )));
            }
            Ok(())
        })();
        agree(&comm, local, fingerprint(&format!("{tolerance}")), F)?;
        let mut balancer = WeightedBalancer::measuring(&*comm).map_err(|e| run_failure(e, F))?;
        balancer.tolerance = tolerance;
        *balancer_out =
            hand_out::<WeightedCell, _>(Mutex::new(hetbal_weighted_balancer { comm, balancer }));
        Ok(())
    })
}

/// [`hetbal_mpi_weighted_balancer_create`] with a Fortran communicator handle.
///
/// # Safety
/// As [`hetbal_mpi_weighted_balancer_create`].
#[no_mangle]
pub unsafe extern "C" fn hetbal_mpi_weighted_balancer_create_f(
    comm: MPI_Fint,
    tolerance: f64,
    balancer_out: *mut *mut hetbal_weighted_balancer,
) -> hetbal_status {
    hetbal_mpi_weighted_balancer_create(::mpi::ffi::MPI_Comm_f2c(comm), tolerance, balancer_out)
}

/// One call per iteration, on every rank: this rank's `*count` items (its
/// `malloc`ed `*data` of elements of `element_bytes` bytes, `*offsets` of
/// `*count + 1` offsets in elements, as [`hetbal_mpi_redistribute_items`]),
/// `*weights` their costs (`*count` finite values >= 0, `malloc`ed),
/// `compute_seconds` this rank's compute time in the iteration (halo
/// exchanges excluded), `remaining` the iterations still to run. The
/// balancer learns every rank's seconds per unit of weight, and when moving
/// to the least-moving partition within its tolerance pays, moves the items
/// and their weights (the buffers `realloc`ed as needed, `*count` updated).
/// `*decision_out` says what it decided.
///
/// Errors: [`hetbal_status::HETBAL_ERROR_INPUT`] on every rank for a NULL or
/// freed balancer, NULL pointers, bad offsets, weights or time on any rank;
/// [`hetbal_status::HETBAL_ERROR_RUN`] when the move fails (every rank keeps
/// its items).
///
/// # Safety
/// `balancer` is NULL or from [`hetbal_mpi_weighted_balancer_create`]; the
/// pointers NULL or valid, the buffers as described.
#[no_mangle]
#[allow(clippy::too_many_arguments)] // the C interface's arguments
pub unsafe extern "C" fn hetbal_mpi_weighted_balancer_step(
    balancer: *mut hetbal_weighted_balancer,
    element_bytes: usize,
    data: *mut *mut c_void,
    offsets: *mut *mut u64,
    weights: *mut *mut f64,
    count: *mut u64,
    compute_seconds: f64,
    remaining: u64,
    decision_out: *mut hetbal_weighted_decision,
) -> hetbal_status {
    const F: &str = "hetbal_mpi_weighted_balancer_step";
    guard(|| {
        let Some(cell) = live::<WeightedCell, _>(balancer) else {
            return Err(Failure::input(format!(
                "{F}: balancer is NULL, freed or not a weighted balancer"
            )));
        };
        let mut b = lock(&cell, F, "balancer")?;
        let b = &mut *b;
        // Offsets and weights read (copied) and every buffer lent before the
        // agreement, so that no rank fails alone after it.
        let (mut elements, mut offset_count, mut weight_count) = (0u64, 0u64, 0u64);
        let local = (|| {
            if decision_out.is_null() || weights.is_null() || offsets.is_null() || count.is_null() {
                return Err(Failure::input(format!(
                    "{F}: decision_out, weights, offsets and count must not be NULL"
                )));
            }
            if data.is_null() || (*offsets).is_null() {
                return Err(Failure::input(format!("{F}: data or *offsets is NULL")));
            }
            let k = *count;
            offset_count = k
                .checked_add(1)
                .ok_or_else(|| Failure::input(format!("{F}: *count is {k}")))?;
            let offs = slice(*offsets, offset_count as usize, &format!("{F}: *offsets"))?.to_vec();
            let w = match k {
                0 => Vec::new(),
                _ => slice(*weights, k as usize, &format!("{F}: *weights"))?.to_vec(),
            };
            (elements, weight_count) = (*offs.last().expect("k + 1 offsets"), k);
            let loans = (
                Lent::borrow_named(
                    data,
                    &mut elements,
                    (element_bytes, true),
                    ("data", "the last offset"),
                    F,
                )?,
                Lent::borrow_named(
                    offsets as *mut *mut c_void,
                    &mut offset_count,
                    (size_of::<u64>(), false),
                    ("offsets", "*count + 1"),
                    F,
                )?,
                Lent::borrow_named(
                    weights as *mut *mut c_void,
                    &mut weight_count,
                    (size_of::<f64>(), true),
                    ("weights", "*count"),
                    F,
                )?,
            );
            Ok((offs, w, loans))
        })();
        let (offs, w, loans) = agree(&b.comm, local, 0, F)?;
        let (mut element_loan, mut offset_loan, mut weight_loan) = loans;
        let d = b
            .balancer
            .decide(
                &*b.comm,
                (&offs, &w, element_bytes, None),
                compute_seconds,
                remaining,
            )
            .map_err(|e| run_failure(e, F))?;
        if d.redistribute {
            let mut byte_offsets: Vec<u64> =
                offs.iter().map(|&o| o * element_bytes as u64).collect();
            let mut ws = w;
            b.balancer
                .carry_out(
                    &*b.comm,
                    (element_loan.buffer(), &mut byte_offsets, &mut ws),
                    &d,
                )
                .map_err(|e| run_failure(e, F))?;
            let elements = byte_offsets.iter().map(|o| o / element_bytes as u64);
            store(offset_loan.buffer(), elements.map(u64::to_ne_bytes));
            store(weight_loan.buffer(), ws.iter().map(|w| w.to_ne_bytes()));
            element_loan.commit();
            offset_loan.commit();
            weight_loan.commit();
            drop((element_loan, offset_loan, weight_loan));
            *count = weight_count;
        }
        *decision_out = hetbal_weighted_decision {
            redistribute: c_int::from(d.redistribute),
            first: d.first,
            count: d.items,
            current_seconds: d.current_seconds,
            balanced_seconds: d.balanced_seconds,
            optimum_seconds: d.optimum_seconds,
            moved_items: d.moved_items,
            moved_bytes: d.moved_bytes,
            move_seconds: d.move_seconds,
            saved_seconds: d.saved_seconds,
        };
        Ok(())
    })
}

/// Copies the cuts after the balancer's last step (`p + 1` global item
/// indices for p ranks: rank r holds items `cuts[r] .. cuts[r + 1]`) into
/// `cuts_out`, which has room for `capacity` of them. Not collective.
///
/// Errors: [`hetbal_status::HETBAL_ERROR_INPUT`] for a NULL or freed
/// balancer, no step yet, `cuts_out` NULL or a capacity below `p + 1`
/// (nothing written).
///
/// # Safety
/// `balancer` is NULL or from [`hetbal_mpi_weighted_balancer_create`];
/// `cuts_out` NULL or valid for `capacity` values.
#[no_mangle]
pub unsafe extern "C" fn hetbal_mpi_weighted_balancer_cuts(
    balancer: *const hetbal_weighted_balancer,
    cuts_out: *mut u64,
    capacity: usize,
) -> hetbal_status {
    const F: &str = "hetbal_mpi_weighted_balancer_cuts";
    guard(|| {
        let Some(cell) = live::<WeightedCell, _>(balancer) else {
            return Err(Failure::input(format!(
                "{F}: balancer is NULL, freed or not a weighted balancer"
            )));
        };
        let b = lock(&cell, F, "balancer")?;
        let cuts = b
            .balancer
            .cuts()
            .ok_or_else(|| Failure::input(format!("{F}: no step yet")))?;
        if cuts_out.is_null() || capacity < cuts.len() {
            return Err(Failure::input(format!(
                "{F}: cuts_out must hold {} values (capacity {capacity})",
                cuts.len()
            )));
        }
        std::ptr::copy_nonoverlapping(cuts.as_ptr(), cuts_out, cuts.len());
        Ok(())
    })
}

/// Frees a weighted balancer and its duplicate of the communicator (not
/// collective; before `MPI_Finalize`). NULL, a balancer already freed, or a
/// handle of another kind does nothing.
///
/// # Safety
/// `balancer` is NULL or from [`hetbal_mpi_weighted_balancer_create`] (a
/// freed or foreign handle is refused, never dereferenced).
#[no_mangle]
pub unsafe extern "C" fn hetbal_mpi_weighted_balancer_free(
    balancer: *mut hetbal_weighted_balancer,
) {
    guard_value((), || drop(take_back::<WeightedCell, _>(balancer)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plan::{hetbal_plan_free, hetbal_plan_makespan, hetbal_ring_plan};
    use crate::{last_error, HETBAL_ERROR_INPUT, HETBAL_ERROR_RUN, HETBAL_OK};

    /// A panic while the library holds the caller's buffer (grown by
    /// `realloc`, which may move it) hands the buffer back: `*items` is the
    /// live block, with the caller's items, and `*count` unchanged. Before the
    /// loan, unwinding freed the block and `*items` kept the old address:
    /// the caller's `free` below was a double free.
    #[test]
    fn a_panic_hands_the_callers_buffer_back() {
        unsafe {
            let mut items = libc::malloc(16);
            std::slice::from_raw_parts_mut(items as *mut u8, 16).fill(3);
            let mut count = 2u64;
            let status = guard(|| {
                let mut lent = Lent::borrow(&mut items, &mut count, 8, "test")?;
                // Grows the block far beyond malloc's arena: realloc moves it.
                lent.buffer().reserve(64 << 20);
                lent.buffer().extend_from_slice(&[7; 8]);
                lent.commit();
                panic!("injected");
            });
            assert_eq!(status, HETBAL_ERROR_RUN);
            assert!(last_error().contains("injected"), "{}", last_error());
            // The loan committed before the panic: *count is the buffer's.
            assert_eq!(count, 3);
            let held = std::slice::from_raw_parts(items as *const u8, 24);
            assert_eq!(&held[..16], &[3; 16]);
            libc::free(items);
        }
    }

    /// A failure (not committed) hands the buffer back with `*count` as it was.
    #[test]
    fn a_failure_keeps_the_count() {
        unsafe {
            let mut items = libc::malloc(8);
            let mut count = 1u64;
            let status = guard(|| {
                let mut lent = Lent::borrow(&mut items, &mut count, 8, "test")?;
                lent.buffer().reserve(64 << 20);
                lent.buffer().extend_from_slice(&[7; 8]);
                Err(Failure::run("failed"))
            });
            assert_eq!(status, HETBAL_ERROR_RUN);
            assert_eq!(count, 1);
            libc::free(items);
        }
    }

    /// Bad buffers are refused before the library takes them.
    #[test]
    fn bad_buffers_are_refused() {
        unsafe {
            let mut count = 4u64;
            let mut null: *mut c_void = std::ptr::null_mut();
            for (items, count, bytes, says) in [
                (
                    std::ptr::null_mut(),
                    &mut count as *mut u64,
                    8,
                    "items is NULL",
                ),
                (
                    &mut null as *mut _,
                    std::ptr::null_mut(),
                    8,
                    "count is NULL",
                ),
                (
                    &mut null as *mut _,
                    &mut count as *mut u64,
                    0,
                    "item_bytes is 0",
                ),
                (
                    &mut null as *mut _,
                    &mut count as *mut u64,
                    8,
                    "*items is NULL",
                ),
                (
                    &mut null as *mut _,
                    &mut count as *mut u64,
                    usize::MAX,
                    "overflows",
                ),
            ] {
                let e = Lent::borrow(items, count, bytes, "f")
                    .err()
                    .expect("refused");
                assert_eq!(e.status, HETBAL_ERROR_INPUT);
                assert!(e.message.contains(says), "{} / {says}", e.message);
            }
        }
    }

    /// Handles are typed: a plan passed as a balancer is refused, not
    /// dereferenced, and freeing it as a balancer leaves the plan alone.
    #[test]
    fn a_plan_is_not_a_balancer() {
        unsafe {
            let mut plan = std::ptr::null_mut();
            let (loads, targets, costs) = ([3u64, 1], [2u64, 2], [1.0f64, 1.0]);
            let s = hetbal_ring_plan(
                2,
                loads.as_ptr(),
                targets.as_ptr(),
                costs.as_ptr(),
                std::ptr::null(),
                &mut plan,
            );
            assert_eq!(s, HETBAL_OK);
            let as_balancer = plan as *mut hetbal_balancer;
            let (mut items, mut count) = (std::ptr::null_mut(), 0u64);
            let mut d = hetbal_decision::default();
            let s = hetbal_mpi_balancer_step(as_balancer, 1.0, 1, &mut items, &mut count, &mut d);
            assert_eq!(s, HETBAL_ERROR_INPUT);
            assert!(last_error().contains("not a balancer"), "{}", last_error());
            hetbal_mpi_balancer_free(as_balancer);
            assert_eq!(hetbal_plan_makespan(plan), 1.0);
            hetbal_plan_free(plan);
            assert!(hetbal_plan_makespan(plan).is_nan());
        }
    }
}
