//! What every function shares: the status, this thread's last error, argument
//! checks, live handles, and the malloc-based allocator.

use std::alloc::{GlobalAlloc, Layout};
use std::cell::RefCell;
use std::collections::HashSet;
use std::ffi::{c_char, CString};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::Mutex;

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
    /// A limit of the library was reached (for example a schedule with too many
    /// transfers).
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
    LAST_ERROR.with(|e| e.borrow().as_ptr())
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

/// The live handles handed out (plans, balancers), so that a handle freed twice,
/// or one never handed out, is refused instead of freed again.
static LIVE: Mutex<Option<HashSet<usize>>> = Mutex::new(None);

/// Hands out `value` as a handle.
pub(crate) fn hand_out<T>(value: T) -> *mut T {
    let pointer = Box::into_raw(Box::new(value));
    let mut live = LIVE.lock().unwrap_or_else(|e| e.into_inner());
    live.get_or_insert_with(HashSet::new)
        .insert(pointer as usize);
    pointer
}

/// The value behind a live handle (`None` for NULL or a handle not live).
///
/// # Safety
/// A live handle was made by [`hand_out`] with the same `T`.
pub(crate) unsafe fn live<'a, T>(handle: *const T) -> Option<&'a T> {
    let live = LIVE.lock().unwrap_or_else(|e| e.into_inner());
    let known = live
        .as_ref()
        .is_some_and(|l| l.contains(&(handle as usize)));
    (known && !handle.is_null()).then(|| &*handle)
}

/// The value behind a live handle, mutably.
///
/// # Safety
/// As [`live`]; no other reference to the value is in use.
pub(crate) unsafe fn live_mut<'a, T>(handle: *mut T) -> Option<&'a mut T> {
    live(handle as *const T)?;
    Some(&mut *handle)
}

/// Frees a live handle; NULL or a handle already freed is left alone.
///
/// # Safety
/// As [`live`].
pub(crate) unsafe fn take_back<T>(handle: *mut T) -> Option<T> {
    let mut live = LIVE.lock().unwrap_or_else(|e| e.into_inner());
    let removed = live.as_mut().is_some_and(|l| l.remove(&(handle as usize)));
    (removed && !handle.is_null()).then(|| *Box::from_raw(handle))
}

/// The library's global allocator: the C library's `malloc`, `realloc` and
/// `free` (`posix_memalign` for alignments above 16 bytes), so that buffers
/// pass between C and Rust: one `malloc`ed by the caller can be grown by the
/// library, and one the library allocated can be `free`d by the caller.
pub struct Malloc;

/// What `malloc` aligns to on the platforms hetbal supports (x86-64, AArch64).
const MALLOC_ALIGN: usize = 16;

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
    if bytes == 0 {
        set_error("hetbal_alloc: bytes is 0");
        return std::ptr::null_mut();
    }
    let out = unsafe { libc::malloc(bytes) };
    if out.is_null() {
        set_error(&format!("hetbal_alloc: cannot allocate {bytes} bytes"));
    }
    out
}

/// Frees a buffer of [`hetbal_alloc`] (or one the library handed back); NULL
/// does nothing.
///
/// # Safety
/// `buffer` is NULL or was allocated by `malloc` and not freed yet.
#[no_mangle]
pub unsafe extern "C" fn hetbal_free(buffer: *mut libc::c_void) {
    libc::free(buffer)
}
