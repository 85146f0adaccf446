//! The extension's allocator: the system's, with large blocks advised to be
//! backed by transparent huge pages (Linux), as numpy does for its arrays.
//!
//! A pass that writes a fresh array of n values (the prefix sums of
//! `hetbal.partition`, n + 1 float64) spends much of its time in page faults
//! when the array is backed by 4 KiB pages: numpy's `cumsum` of the same
//! weights, whose output numpy advises `MADV_HUGEPAGE`, faults 512 times less.
//! The advice only matters where the kernel's setting is `madvise` (the usual
//! default; with `always` every block gets huge pages anyway, with `never`
//! none does) and is given only for whole 2 MiB-aligned ranges inside a block
//! of at least 4 MiB, so that it never touches memory outside the block.

use std::alloc::{GlobalAlloc, Layout, System};

/// Blocks from this size on are advised (numpy's threshold).
const THRESHOLD: usize = 4 << 20;
/// The size and alignment of a transparent huge page (x86-64, and arm64 with
/// 4 KiB pages; a multiple of every base page size, so the advised range is
/// always page-aligned).
const HUGE: usize = 2 << 20;

/// The system allocator, advising large blocks to use huge pages.
pub(crate) struct HugePages;

#[cfg(all(
    target_os = "linux",
    any(target_arch = "x86_64", target_arch = "aarch64")
))]
fn advise(block: *mut u8, size: usize) {
    use std::ffi::{c_int, c_void};
    extern "C" {
        fn madvise(addr: *mut c_void, length: usize, advice: c_int) -> c_int;
    }
    // <linux/mman.h> (asm-generic), the same on x86-64 and arm64.
    const MADV_HUGEPAGE: c_int = 14;
    if block.is_null() || size < THRESHOLD {
        return;
    }
    let start = (block as usize).next_multiple_of(HUGE);
    let end = (block as usize + size) / HUGE * HUGE;
    if start < end {
        // Advice only: a refusal (an old kernel, THP compiled out) changes
        // nothing but the speed.
        // SAFETY: [start, end) lies inside the block just allocated, which
        // this allocator owns; madvise does not change its contents.
        unsafe {
            madvise(start as *mut c_void, end - start, MADV_HUGEPAGE);
        }
    }
}

#[cfg(not(all(
    target_os = "linux",
    any(target_arch = "x86_64", target_arch = "aarch64")
)))]
fn advise(_block: *mut u8, _size: usize) {}

// SAFETY: every call is forwarded to the system allocator unchanged; the
// advice neither moves nor frees memory.
unsafe impl GlobalAlloc for HugePages {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        let block = System.alloc(layout);
        advise(block, layout.size());
        block
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        let block = System.alloc_zeroed(layout);
        advise(block, layout.size());
        block
    }

    unsafe fn realloc(&self, block: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        let moved = System.realloc(block, layout, new_size);
        if new_size > layout.size() {
            advise(moved, new_size);
        }
        moved
    }

    unsafe fn dealloc(&self, block: *mut u8, layout: Layout) {
        System.dealloc(block, layout)
    }
}
