//! An item buffer whose kept items never move (`hetbal_mpi.h`): a handle on
//! hetbal-mpi's `ItemBuffer`, for [`hetbal_mpi_ring_redistribute_buffer`] and
//! [`hetbal_mpi_balancer_step_buffer`].
//!
//! Why: a `malloc`ed buffer cannot grow in front, so when a redistribution
//! brings items in front of a rank's own (from its predecessor on the ring),
//! [`hetbal_mpi_ring_redistribute`] shifts the rank's kept items once
//! (`memmove`, at memory speed, into pages touched for the first time). An
//! item buffer reserves a large range of addresses (1 TiB, no memory until
//! written) and keeps its items in the middle of it: it grows in front and
//! behind without moving anything, so the items a rank keeps stay at their
//! addresses through every redistribution and the items it receives land
//! where they stay.
//!
//! The handle is an id in the library's registry of live handles (a freed or
//! foreign handle is refused, never dereferenced); its items are the
//! caller's to read and write through [`hetbal_item_buffer_data`].

use std::ffi::{c_int, c_void};
use std::sync::{Mutex, MutexGuard};

use hetbal_mpi::buffer::ItemBuffer;

#[cfg(doc)]
use crate::hetbal_last_error;
use crate::mpi::lock;
#[cfg(doc)]
use crate::mpi::{
    hetbal_mpi_balancer_step_buffer, hetbal_mpi_ring_redistribute,
    hetbal_mpi_ring_redistribute_buffer,
};
use crate::{guard, guard_value, hand_out, hetbal_status, live, take_back, Failure};

/// A rank's items of `item_bytes` bytes each, in a reserved range of
/// addresses that grows in front and behind without moving them. Opaque to
/// C: create it with [`hetbal_item_buffer_create`], free it with
/// [`hetbal_item_buffer_free`].
pub struct hetbal_item_buffer {
    pub(crate) items: ItemBuffer<u8>,
    pub(crate) item_bytes: usize,
}

/// What an item buffer handle holds: the buffer, one call at a time.
pub(crate) type ItemBufferCell = Mutex<hetbal_item_buffer>;

impl hetbal_item_buffer {
    /// The items held.
    pub(crate) fn count(&self) -> u64 {
        (self.items.len() / self.item_bytes) as u64
    }
}

/// The buffer behind `buffer`, locked for one call of `function`: refused
/// (with a message naming `function`) for NULL, a freed handle, a handle of
/// another kind, or a buffer in use by another thread's call.
pub(crate) fn buffer_of<'a>(
    cell: &'a Option<std::sync::Arc<ItemBufferCell>>,
    function: &str,
) -> Result<MutexGuard<'a, hetbal_item_buffer>, Failure> {
    let cell = cell.as_ref().ok_or_else(|| {
        Failure::input(format!(
            "{function}: buffer is NULL, freed or not an item buffer (make one with hetbal_item_buffer_create)"
        ))
    })?;
    lock(cell, function, "item buffer")
}

/// `f` of the buffer behind `buffer`, for the functions that return a value
/// (`function`): `fallback`, with this thread's last error set, when the
/// handle is refused (as by [`buffer_of`]) or on a panic (a bug).
fn read<R>(
    buffer: *const hetbal_item_buffer,
    function: &str,
    fallback: R,
    f: impl FnOnce(&mut hetbal_item_buffer) -> R,
) -> R {
    let mut out = None;
    let status = guard(|| {
        let cell = live::<ItemBufferCell, _>(buffer);
        let mut b = buffer_of(&cell, function)?;
        out = Some(f(&mut b));
        Ok(())
    });
    match (status, out) {
        (crate::HETBAL_OK, Some(out)) => out,
        _ => fallback,
    }
}

/// `count` items of `item_bytes` bytes, in bytes; refused (naming
/// `function`) when that overflows or passes what a buffer can hold.
fn bytes_of(count: u64, item_bytes: usize, function: &str) -> Result<usize, Failure> {
    count
        .checked_mul(item_bytes as u64)
        .and_then(|b| usize::try_from(b).ok())
        .filter(|&b| b <= isize::MAX as usize)
        .ok_or_else(|| {
            Failure::input(format!(
                "{function}: count {count} x item_bytes {item_bytes} overflows this machine's memory"
            ))
        })
}

/// Makes an empty item buffer for items of `item_bytes` bytes and writes its
/// handle to `*buffer_out` (NULL on failure). It reserves 1 TiB of addresses
/// (no memory until items are written; a process can hold about a hundred
/// buffers at once) and holds up to 512 GiB of items behind its first ones
/// and as many in front. Its first item is aligned for any type of
/// `item_bytes` bytes (its address is a page boundary plus a multiple of
/// `item_bytes`). Not collective. O(1).
///
/// Prefer it to a `malloc`ed buffer for ranks that keep most of their items
/// through redistributions and receive items in front of them (from their
/// predecessor): [`hetbal_mpi_ring_redistribute_buffer`] never moves the
/// items a rank keeps, where [`hetbal_mpi_ring_redistribute`] shifts them once.
///
/// Errors: [`hetbal_status::HETBAL_ERROR_INPUT`] for a NULL `buffer_out`,
/// `item_bytes` 0 or larger than 512 GiB (not one item would fit);
/// [`hetbal_status::HETBAL_ERROR_RUN`] when the system refuses the
/// reservation (not Linux, or a limit on virtual memory such as `ulimit -v`
/// or `vm.overcommit_memory = 2`).
///
/// # Safety
/// `buffer_out` is NULL or a valid pointer.
#[no_mangle]
pub unsafe extern "C" fn hetbal_item_buffer_create(
    item_bytes: usize,
    buffer_out: *mut *mut hetbal_item_buffer,
) -> hetbal_status {
    const F: &str = "hetbal_item_buffer_create";
    guard(|| {
        if buffer_out.is_null() {
            return Err(Failure::input(format!("{F}: buffer_out is NULL")));
        }
        *buffer_out = std::ptr::null_mut();
        if item_bytes == 0 {
            return Err(Failure::input(format!("{F}: item_bytes is 0")));
        }
        let items = ItemBuffer::<u8>::new().map_err(|e| Failure::run(format!("{F}: {e}")))?;
        let (_, behind) = items.room();
        if item_bytes > behind {
            return Err(Failure::input(format!(
                "{F}: item_bytes {item_bytes}: an item buffer holds at most {behind} bytes of items"
            )));
        }
        *buffer_out =
            hand_out::<ItemBufferCell, _>(Mutex::new(hetbal_item_buffer { items, item_bytes }));
        Ok(())
    })
}

/// Frees an item buffer: its items and its reserved addresses go back to
/// the system, and pointers from [`hetbal_item_buffer_data`] become invalid.
/// NULL, a buffer already freed or a handle of another kind does nothing.
/// Not collective. O(1), plus the system's unmapping.
///
/// # Safety
/// `buffer` is NULL or from [`hetbal_item_buffer_create`] (a freed or
/// foreign handle is refused, never dereferenced).
#[no_mangle]
pub unsafe extern "C" fn hetbal_item_buffer_free(buffer: *mut hetbal_item_buffer) {
    guard_value((), || drop(take_back::<ItemBufferCell, _>(buffer)))
}

/// The address of the buffer's first item (items follow one another,
/// `item_bytes` apart, as in an array): the caller reads and writes them
/// through it. Valid until the next call that changes the buffer
/// ([`hetbal_item_buffer_append`], [`hetbal_item_buffer_resize`], a
/// redistribution or balancer step, [`hetbal_item_buffer_free`]): a
/// redistribution keeps every kept item at its address, but the first item
/// may then be another one (items received in front, or the first ones given
/// away), so take the address again after it. For an empty buffer, a
/// non-NULL address that must not be read. NULL only for a NULL or freed
/// handle (or one of another kind, or a buffer in use by another thread's
/// call), with this thread's last error set. O(1).
///
/// # Safety
/// `buffer` is NULL or from [`hetbal_item_buffer_create`].
#[no_mangle]
pub unsafe extern "C" fn hetbal_item_buffer_data(buffer: *mut hetbal_item_buffer) -> *mut c_void {
    const F: &str = "hetbal_item_buffer_data";
    read(buffer, F, std::ptr::null_mut(), |b| {
        b.items.as_mut_ptr() as *mut c_void
    })
}

/// The number of items the buffer holds. 0 too for a NULL or freed handle
/// (or one of another kind, or a buffer in use by another thread's call),
/// with this thread's last error set: to tell the two apart,
/// [`hetbal_item_buffer_item_bytes`] is 0 only for a bad handle. O(1).
///
/// # Safety
/// `buffer` is NULL or from [`hetbal_item_buffer_create`].
#[no_mangle]
pub unsafe extern "C" fn hetbal_item_buffer_count(buffer: *const hetbal_item_buffer) -> u64 {
    const F: &str = "hetbal_item_buffer_count";
    read(buffer, F, 0, |b| b.count())
}

/// The size of the buffer's items in bytes, as given to
/// [`hetbal_item_buffer_create`]; 0 for a NULL or freed handle (or one of
/// another kind, or a buffer in use by another thread's call), with this
/// thread's last error set. O(1).
///
/// # Safety
/// `buffer` is NULL or from [`hetbal_item_buffer_create`].
#[no_mangle]
pub unsafe extern "C" fn hetbal_item_buffer_item_bytes(buffer: *const hetbal_item_buffer) -> usize {
    const F: &str = "hetbal_item_buffer_item_bytes";
    read(buffer, F, 0, |b| b.item_bytes)
}

/// Appends a copy of `count` items (`count * item_bytes` bytes from `items`)
/// behind those the buffer holds, which stay at their addresses. `items` may
/// be NULL when `count` is 0. O(`count * item_bytes`).
///
/// Errors ([`hetbal_status::HETBAL_ERROR_INPUT`], nothing appended): a NULL
/// or freed handle (or one of another kind, or a buffer in use by another
/// thread's call), `items` NULL with `count` above 0, `count * item_bytes`
/// overflowing, or more items than the buffer's reservation holds.
///
/// # Safety
/// `buffer` is NULL or from [`hetbal_item_buffer_create`]; `items` is NULL or
/// points to `count * item_bytes` readable bytes.
#[no_mangle]
pub unsafe extern "C" fn hetbal_item_buffer_append(
    buffer: *mut hetbal_item_buffer,
    items: *const c_void,
    count: u64,
) -> hetbal_status {
    const F: &str = "hetbal_item_buffer_append";
    guard(|| {
        let cell = live::<ItemBufferCell, _>(buffer);
        let mut b = buffer_of(&cell, F)?;
        let bytes = bytes_of(count, b.item_bytes, F)?;
        if bytes == 0 {
            return Ok(());
        }
        if items.is_null() {
            return Err(Failure::input(format!(
                "{F}: items is NULL but count is {count}"
            )));
        }
        let new = std::slice::from_raw_parts(items as *const u8, bytes);
        b.items
            .extend_from_slice(new)
            .map_err(|e| Failure::input(format!("{F}: {e}")))
    })
}

/// Makes the buffer hold `count` items: its first `count` when it holds more
/// (memory past them goes back to the system by whole pages), else its items
/// followed by new ones whose bytes are all 0, to fill through
/// [`hetbal_item_buffer_data`]. The items held stay at their addresses.
/// O(1) (at most a page zeroed; the memory of new items is given by the
/// system when first written).
///
/// Errors ([`hetbal_status::HETBAL_ERROR_INPUT`], nothing changed): a NULL
/// or freed handle (or one of another kind, or a buffer in use by another
/// thread's call), `count * item_bytes` overflowing, or more items than the
/// buffer's reservation holds.
///
/// # Safety
/// `buffer` is NULL or from [`hetbal_item_buffer_create`].
#[no_mangle]
pub unsafe extern "C" fn hetbal_item_buffer_resize(
    buffer: *mut hetbal_item_buffer,
    count: u64,
) -> hetbal_status {
    const F: &str = "hetbal_item_buffer_resize";
    guard(|| {
        let cell = live::<ItemBufferCell, _>(buffer);
        let mut b = buffer_of(&cell, F)?;
        let bytes = bytes_of(count, b.item_bytes, F)?;
        b.items
            .resize(bytes)
            .map_err(|e| Failure::input(format!("{F}: {e}")))
    })
}

/// With `on` non-zero, redistributions give back the memory of the items
/// this rank sends from the buffer as soon as they have left (by whole
/// pages), instead of at the commit; 0 turns it off (the default). A rank
/// that keeps, sends and receives at once (a circulation) then holds its
/// items plus a few chunks, instead of its items plus all it receives.
///
/// The price: a redistribution that fails after items left (a corrupted or
/// lost message, another rank failing) leaves this buffer holding only its
/// items that had not left, in order (fewer than before; the other ranks as
/// usual). Failures found before anything moves change nothing. Ring and
/// GEN_BLOCK redistributions give back chunk by chunk (along the messages of
/// a plan with start-ups, message by message). Not collective. O(1).
///
/// Errors ([`hetbal_status::HETBAL_ERROR_INPUT`], nothing changed): a NULL
/// or freed handle (or one of another kind, or a buffer in use by another
/// thread's call).
///
/// # Safety
/// `buffer` is NULL or from [`hetbal_item_buffer_create`].
#[no_mangle]
pub unsafe extern "C" fn hetbal_item_buffer_give_back_sent(
    buffer: *mut hetbal_item_buffer,
    on: c_int,
) -> hetbal_status {
    const F: &str = "hetbal_item_buffer_give_back_sent";
    guard(|| {
        let cell = live::<ItemBufferCell, _>(buffer);
        let mut b = buffer_of(&cell, F)?;
        b.items.set_give_back_sent(on != 0);
        Ok(())
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{last_error, HETBAL_ERROR_INPUT, HETBAL_OK};

    /// Filling, reading, resizing and the refusals, without MPI.
    #[test]
    fn fill_resize_and_refuse() {
        unsafe {
            let mut b = std::ptr::null_mut();
            assert_eq!(hetbal_item_buffer_create(0, &mut b), HETBAL_ERROR_INPUT);
            assert!(last_error().contains("item_bytes is 0"), "{}", last_error());
            assert!(b.is_null());
            assert_eq!(
                hetbal_item_buffer_create(usize::MAX, &mut b),
                HETBAL_ERROR_INPUT
            );
            assert!(last_error().contains("at most"), "{}", last_error());
            assert_eq!(
                hetbal_item_buffer_create(8, std::ptr::null_mut()),
                HETBAL_ERROR_INPUT
            );
            assert_eq!(hetbal_item_buffer_create(8, &mut b), HETBAL_OK);
            assert_eq!(hetbal_item_buffer_item_bytes(b), 8);
            assert_eq!(hetbal_item_buffer_count(b), 0);
            assert!(!hetbal_item_buffer_data(b).is_null());
            let values = [1u64, 2, 3];
            assert_eq!(
                hetbal_item_buffer_append(b, values.as_ptr().cast(), 3),
                HETBAL_OK
            );
            let at = hetbal_item_buffer_data(b);
            assert_eq!(hetbal_item_buffer_resize(b, 5), HETBAL_OK);
            assert_eq!(hetbal_item_buffer_data(b), at);
            let held = std::slice::from_raw_parts(at as *const u64, 5);
            assert_eq!(held, &[1, 2, 3, 0, 0]);
            assert_eq!(hetbal_item_buffer_resize(b, 2), HETBAL_OK);
            assert_eq!(hetbal_item_buffer_count(b), 2);
            // Refusals leave the buffer as it was.
            assert_eq!(
                hetbal_item_buffer_append(b, std::ptr::null(), 1),
                HETBAL_ERROR_INPUT
            );
            assert!(last_error().contains("items is NULL"), "{}", last_error());
            assert_eq!(hetbal_item_buffer_append(b, std::ptr::null(), 0), HETBAL_OK);
            assert_eq!(
                hetbal_item_buffer_resize(b, u64::MAX / 4),
                HETBAL_ERROR_INPUT
            );
            assert!(last_error().contains("overflows"), "{}", last_error());
            assert_eq!(hetbal_item_buffer_resize(b, 1 << 40), HETBAL_ERROR_INPUT);
            assert!(last_error().contains("beyond"), "{}", last_error());
            assert_eq!(hetbal_item_buffer_count(b), 2);
            assert_eq!(hetbal_item_buffer_data(b), at);
            hetbal_item_buffer_free(b);
            hetbal_item_buffer_free(b); // twice: nothing
            hetbal_item_buffer_free(std::ptr::null_mut());
            // A freed handle is refused by every function.
            assert!(hetbal_item_buffer_data(b).is_null());
            assert!(last_error().contains("freed"), "{}", last_error());
            assert_eq!(hetbal_item_buffer_count(b), 0);
            assert_eq!(hetbal_item_buffer_item_bytes(b), 0);
            assert_eq!(hetbal_item_buffer_resize(b, 1), HETBAL_ERROR_INPUT);
            assert_eq!(
                hetbal_item_buffer_append(b, values.as_ptr().cast(), 1),
                HETBAL_ERROR_INPUT
            );
        }
    }
}
