//! What every function shares: the status, this thread's last error, argument
//! checks, live handles, and the malloc-based allocator.

use std::alloc::{GlobalAlloc, Layout};
use std::any::Any;
use std::cell::RefCell;
use std::collections::BTreeMap;
use std::ffi::{c_char, CString};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::{Arc, Mutex};

/// The outcome of a call.
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum hetbal_status {
    /// It worked.
    HETBAL_OK = 0,
    /// An argument is wrong (NULL, zero length, NaN, counts that do not add
    /// up, an overflow...): the message names it. Nothing was changed.
    HETBAL_ERROR_INPUT = 1,
    /// The algorithm asked for does not apply to this input.
    HETBAL_ERROR_NOT_APPLICABLE = 2,
    /// A limit of the library was reached: `hetbal_partition_moving` with
    /// sizes that add up to 2^63 bytes or more (checked before the weights).
    HETBAL_ERROR_LIMIT = 3,
    /// A run failed (MPI, a check, a peer rank); every rank keeps its items.
    HETBAL_ERROR_RUN = 4,
}

pub use self::hetbal_status::*;

/// A failure: its status and message.
#[derive(Debug)]
pub(crate) struct Failure {
    pub(crate) status: hetbal_status,
    pub(crate) message: String,
}

impl Failure {
    /// A wrong argument.
    pub(crate) fn input(message: impl Into<String>) -> Failure {
        Failure {
            status: HETBAL_ERROR_INPUT,
            message: message.into(),
        }
    }

    /// A failed run.
    pub(crate) fn run(message: impl Into<String>) -> Failure {
        Failure {
            status: HETBAL_ERROR_RUN,
            message: message.into(),
        }
    }
}

thread_local! {
    static LAST_ERROR: RefCell<CString> = RefCell::new(c"no error".to_owned());
}

/// Records `message` as this thread's last error.
pub(crate) fn set_error(message: &str) {
    let text = CString::new(message.replace('\0', " ")).expect("no NUL left");
    LAST_ERROR.with(|e| *e.borrow_mut() = text);
}

/// This thread's last error, as text.
pub(crate) fn last_error() -> String {
    LAST_ERROR.with(|e| e.borrow().to_string_lossy().into_owned())
}

/// Runs `f`, turning its failure (or a panic, a bug) into a status and this
/// thread's last error.
pub(crate) fn guard(f: impl FnOnce() -> Result<(), Failure>) -> hetbal_status {
    match catch_unwind(AssertUnwindSafe(f)) {
        Ok(Ok(())) => HETBAL_OK,
        Ok(Err(failure)) => {
            set_error(&failure.message);
            failure.status
        }
        Err(panic) => {
            let what = panic
                .downcast_ref::<&str>()
                .map(|s| s.to_string())
                .or_else(|| panic.downcast_ref::<String>().cloned())
                .unwrap_or_default();
            set_error(&format!(
                "internal error (a bug in hetbal, please report it): {what}"
            ));
            HETBAL_ERROR_RUN
        }
    }
}

/// This thread's last failure, as a message naming the argument or the cause;
/// "no error" before the first one. Never NULL; valid until this thread's next
/// failing call.
#[no_mangle]
pub extern "C" fn hetbal_last_error() -> *const c_char {
    // Reading a thread-local cannot fail but while the thread is torn down;
    // then, or on any panic, a static message.
    catch_unwind(|| LAST_ERROR.try_with(|e| e.borrow().as_ptr()).ok())
        .ok()
        .flatten()
        .unwrap_or(c"the last error is unavailable while the thread ends".as_ptr())
}

/// `n` elements from a C array, refusing NULL (with the argument's name).
///
/// # Safety
/// `data`, when not NULL, points to `n` valid elements.
pub(crate) unsafe fn slice<'a, T>(
    data: *const T,
    n: usize,
    name: &str,
) -> Result<&'a [T], Failure> {
    if data.is_null() {
        return Err(Failure::input(format!("{name} is NULL")));
    }
    Ok(std::slice::from_raw_parts(data, n))
}

/// `n` elements of a C output array, refusing NULL.
///
/// # Safety
/// `data`, when not NULL, points to `n` writable elements.
pub(crate) unsafe fn slice_mut<'a, T>(
    data: *mut T,
    n: usize,
    name: &str,
) -> Result<&'a mut [T], Failure> {
    if data.is_null() {
        return Err(Failure::input(format!("{name} is NULL")));
    }
    Ok(std::slice::from_raw_parts_mut(data, n))
}

/// Refuses a NaN, infinite or negative cost (named `name[i]`).
pub(crate) fn check_costs(costs: &[f64], name: &str) -> Result<(), Failure> {
    match costs.iter().position(|c| !(c.is_finite() && *c >= 0.0)) {
        Some(i) => Err(Failure::input(format!(
            "{name}[{i}] = {}: a cost must be finite and >= 0",
            costs[i]
        ))),
        None => Ok(()),
    }
}

/// The live handles handed out (plans, balancers). A handle is not an address
/// but an id that is never reused (a counter, in steps of 16 so that it looks
/// like an aligned pointer to C), mapped to its value and its type: a handle
/// freed twice, one never handed out, one of another type (a plan passed as a
/// balancer) or a stale one is refused, never dereferenced. A call holds its
/// own reference to the value (an `Arc`), so a free on another thread during
/// the call only ends the handle: the value lives until the call returns.
struct Handles {
    next: usize,
    live: BTreeMap<usize, Arc<dyn Any + Send + Sync>>,
}

static HANDLES: Mutex<Handles> = Mutex::new(Handles {
    next: FIRST_HANDLE,
    live: BTreeMap::new(),
});

/// The first handle's id; the ids step by [`HANDLE_STEP`].
const FIRST_HANDLE: usize = 0x1_0000;
/// The distance between consecutive handles' ids.
const HANDLE_STEP: usize = 16;

/// The registry, even when a thread panicked while holding it (its map is
/// never left half-updated: every change is one insert or remove).
fn handles() -> std::sync::MutexGuard<'static, Handles> {
    HANDLES.lock().unwrap_or_else(|e| e.into_inner())
}

/// Hands out `value` as a new handle of type `S` (its C type is `*mut T`).
pub(crate) fn hand_out<S: Any + Send + Sync, T>(value: S) -> *mut T {
    let mut handles = handles();
    let id = handles.next;
    handles.next = id
        .checked_add(HANDLE_STEP)
        .expect("fewer than 2^60 handles");
    handles.live.insert(id, Arc::new(value));
    std::ptr::without_provenance_mut(id)
}

/// The value behind `handle` when it is a live handle of type `S`; `None` for
/// NULL, a freed or unknown handle, or a handle of another type.
pub(crate) fn live<S: Any + Send + Sync, T>(handle: *const T) -> Option<Arc<S>> {
    let value = handles().live.get(&handle.addr())?.clone();
    value.downcast::<S>().ok()
}

/// Ends a live handle of type `S`, giving back its value (dropped once no call
/// uses it any more); `None`, and nothing done, as for [`live`].
pub(crate) fn take_back<S: Any + Send + Sync, T>(handle: *const T) -> Option<Arc<S>> {
    let mut handles = handles();
    let entry = handles.live.get(&handle.addr())?;
    if !<dyn Any>::is::<S>(&**entry) {
        return None;
    }
    let value = handles.live.remove(&handle.addr())?;
    drop(handles);
    value.downcast::<S>().ok()
}

/// Runs `f` behind the panic guard, for the functions that return a value
/// rather than a status: `fallback` (with this thread's last error set) when
/// `f` panics.
pub(crate) fn guard_value<R>(fallback: R, f: impl FnOnce() -> R) -> R {
    let mut out = None;
    let status = guard(|| {
        out = Some(f());
        Ok(())
    });
    match (status, out) {
        (HETBAL_OK, Some(out)) => out,
        _ => fallback,
    }
}

/// The library's global allocator: the C library's `malloc`, `realloc` and
/// `free` (`posix_memalign` for alignments above 16 bytes), so that buffers
/// pass between C and Rust: one `malloc`ed by the caller can be grown by the
/// library, and one the library allocated can be `free`d by the caller.
pub struct Malloc;

/// What `malloc` aligns to on the platforms hetbal supports (x86-64, AArch64):
/// the alignment of `max_align_t`.
const MALLOC_ALIGN: usize = 16;

// A target whose malloc aligns to less would get misaligned allocations from
// the allocator below: refuse to build there rather than misbehave.
const _: () = assert!(
    std::mem::align_of::<libc::max_align_t>() >= MALLOC_ALIGN,
    "malloc aligns to less than MALLOC_ALIGN on this target: lower MALLOC_ALIGN"
);

unsafe impl GlobalAlloc for Malloc {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        if layout.align() <= MALLOC_ALIGN && layout.align() <= layout.size() {
            libc::malloc(layout.size()) as *mut u8
        } else {
            let mut out = std::ptr::null_mut();
            let align = layout.align().max(std::mem::size_of::<usize>());
            match libc::posix_memalign(&mut out, align, layout.size()) {
                0 => out as *mut u8,
                _ => std::ptr::null_mut(),
            }
        }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, _layout: Layout) {
        libc::free(ptr as *mut libc::c_void)
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        if layout.align() <= MALLOC_ALIGN && layout.align() <= new_size {
            libc::realloc(ptr as *mut libc::c_void, new_size) as *mut u8
        } else {
            let new = self.alloc(Layout::from_size_align_unchecked(new_size, layout.align()));
            if !new.is_null() {
                std::ptr::copy_nonoverlapping(ptr, new, layout.size().min(new_size));
                self.dealloc(ptr, layout);
            }
            new
        }
    }
}

#[global_allocator]
static GLOBAL: Malloc = Malloc;

/// Allocates `bytes` bytes with `malloc` (for callers, such as Fortran, that
/// hand the library a buffer it may grow): free it with [`hetbal_free`] or
/// `free`. NULL when `bytes` is 0 or memory is short (then see
/// [`hetbal_last_error`]).
#[no_mangle]
pub extern "C" fn hetbal_alloc(bytes: usize) -> *mut libc::c_void {
    guard_value(std::ptr::null_mut(), || {
        if bytes == 0 {
            set_error("hetbal_alloc: bytes is 0");
            return std::ptr::null_mut();
        }
        let out = unsafe { libc::malloc(bytes) };
        if out.is_null() {
            set_error(&format!("hetbal_alloc: cannot allocate {bytes} bytes"));
        }
        out
    })
}

/// Frees a buffer of [`hetbal_alloc`] (or one the library handed back); NULL
/// does nothing.
///
/// # Safety
/// `buffer` is NULL or was allocated by `malloc` and not freed yet.
#[no_mangle]
pub unsafe extern "C" fn hetbal_free(buffer: *mut libc::c_void) {
    guard_value((), || libc::free(buffer))
}
