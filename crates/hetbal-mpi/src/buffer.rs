//! Where a rank's items live while they are redistributed: a `Vec`, or an
//! [`ItemBuffer`] whose items never move.
//!
//! A redistribution receives items before a rank's own ones (from its
//! predecessor, or the part of its new block that comes first) and after them.
//! A `Vec` has no room in front: its own items shift once, in place, to make
//! room (one move of what the rank keeps, at memory speed, into pages touched
//! for the first time). An [`ItemBuffer`] reserves a large range of virtual
//! addresses and keeps its items in the middle of it: it grows in front and
//! behind without moving anything, so the items a rank keeps stay at their
//! addresses through every redistribution, and the items received land where
//! they will stay. It dereferences to a slice, as a `Vec` does.
//!
//! Every redistribution of this crate takes either ([`ItemStorage`]).

use std::ffi::c_void;
use std::fmt;
use std::marker::PhantomData;
use std::ops::{Deref, DerefMut};

use bytemuck::Pod;

/// The storage of a rank's items during a redistribution: `Vec<E>` or
/// [`ItemBuffer<E>`]. Sealed: its methods are the crate's own (outside the crate
/// they can be neither implemented nor called).
pub trait ItemStorage<E: Pod>: sealed::Storage<E> {}

impl<E: Pod> ItemStorage<E> for Vec<E> {}
impl<E: Pod> ItemStorage<E> for ItemBuffer<E> {}

pub(crate) mod sealed {
    /// What a redistribution does with a storage (see [`super::ItemStorage`]).
    /// Its methods that change the storage are `unsafe`: they trust the
    /// crate's arena to have written what they make visible.
    pub trait Storage<E> {
        /// Elements held.
        fn elements(&self) -> usize;
        /// Makes room for `before` elements in front of those held and `after`
        /// behind, and returns where the first of the `before` ones goes: the
        /// held elements are then at `before ..` from it, and stay there,
        /// untouched, until [`Storage::keep`] or [`Storage::restore`].
        ///
        /// # Safety
        /// The storage must be given back by exactly one `keep` or `restore`
        /// before any other use of it.
        unsafe fn open(&mut self, before: usize, after: usize) -> Result<*mut E, String>;
        /// Makes elements `from .. to` (from the pointer `open` returned) the
        /// elements held. Panics unless `from <= to` and `to` is within the
        /// room `open` made.
        ///
        /// # Safety
        /// `open` was called, and every element of `from .. to` was written.
        unsafe fn keep(&mut self, from: usize, to: usize);
        /// Gives back the `own` elements held before `open(before, ..)`,
        /// unchanged. Panics unless `before + own` is within that room.
        ///
        /// # Safety
        /// `open(before, ..)` was called with `own` elements held, and the
        /// elements `before .. before + own` were not written since.
        unsafe fn restore(&mut self, before: usize, own: usize);
        /// The system's page size when the storage gives back the memory of
        /// the items a redistribution sends, once they have left
        /// ([`super::ItemBuffer::set_give_back_sent`]); `None` otherwise.
        fn gives_back_sent(&self) -> Option<usize> {
            None
        }
    }
}

use sealed::Storage;

impl<E: Pod> Storage<E> for Vec<E> {
    fn elements(&self) -> usize {
        self.len()
    }

    unsafe fn open(&mut self, before: usize, after: usize) -> Result<*mut E, String> {
        let own = self.len();
        let room = before
            .checked_add(own)
            .and_then(|x| x.checked_add(after))
            .filter(|&x| x.checked_mul(std::mem::size_of::<E>()).is_some())
            .ok_or_else(|| format!("{before} + {own} + {after} elements do not fit in memory"))?;
        self.try_reserve_exact(room - own)
            .map_err(|e| format!("cannot hold {room} elements: {e}"))?;
        let base = self.as_mut_ptr();
        if before > 0 && own > 0 {
            // SAFETY: the capacity holds `before + own` elements; `copy` handles
            // the overlap. The own elements stay initialised where they were too.
            unsafe { std::ptr::copy(base, base.add(before), own) };
        }
        Ok(base)
    }

    unsafe fn keep(&mut self, from: usize, to: usize) {
        assert!(
            from <= to && to <= self.capacity(),
            "keep outside the room opened"
        );
        // SAFETY: `from .. to` lies within the capacity reserved by `open` and
        // every element of it was written (the crate's promise); `copy`
        // handles the overlap.
        unsafe {
            let base = self.as_mut_ptr();
            if from > 0 && to > from {
                std::ptr::copy(base.add(from), base, to - from);
            }
            self.set_len(to - from);
        }
    }

    unsafe fn restore(&mut self, before: usize, own: usize) {
        assert!(
            own == self.len()
                && before
                    .checked_add(own)
                    .is_some_and(|e| e <= self.capacity()),
            "restore outside the room opened"
        );
        if before > 0 && own > 0 {
            // SAFETY: the own elements are at `before .. before + own` (nothing
            // wrote there since `open`); they go back to the front, where the
            // length (unchanged) covers them.
            unsafe {
                let base = self.as_mut_ptr();
                std::ptr::copy(base.add(before), base, own);
            }
        }
    }
}

/// Why an [`ItemBuffer`] cannot be made or grown.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum BufferError {
    /// The system refused the reservation of addresses (its message).
    Reserve(String),
    /// Growing in front or behind would leave the reserved range.
    Full {
        /// Bytes the buffer would need on that side.
        needed: u128,
        /// Bytes the reservation has on that side.
        room: usize,
    },
}

impl fmt::Display for BufferError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            BufferError::Reserve(e) => write!(f, "cannot reserve addresses for an item buffer: {e}"),
            BufferError::Full { needed, room } => write!(
                f,
                "an item buffer would need {needed} bytes on one side, beyond the {room} it reserved (use ItemBuffer::with_reserve)"
            ),
        }
    }
}

impl std::error::Error for BufferError {}

/// Items in a reserved range of virtual addresses that grows in front and behind
/// without moving them: the items a rank keeps through a redistribution stay at
/// their addresses, and the items it receives land where they stay. Dereferences
/// to `[E]`.
///
/// The range is reserved at creation (by default 1 TiB of addresses, half in
/// front of the items and half behind; no memory until written) and memory is
/// given back to the system, by whole pages, when the items no longer cover it.
/// So a rank's memory is its items (plus at most a page at each end), and a
/// redistribution into an `ItemBuffer` never copies what the rank keeps: with a
/// `Vec`, items arriving in front shift the kept ones once.
///
/// Linux only (it maps anonymous memory with `mmap`).
///
/// # Example
/// ```
/// use hetbal_mpi::buffer::ItemBuffer;
/// let mut items = ItemBuffer::from_slice(&[1.0f64, 2.0, 3.0])?;
/// items.extend_from_slice(&[4.0])?;
/// items[0] = 0.5;
/// assert_eq!(&items[..], &[0.5, 2.0, 3.0, 4.0]);
/// let sum: f64 = items.iter().sum();
/// assert_eq!(sum, 9.5);
/// # Ok::<(), hetbal_mpi::buffer::BufferError>(())
/// ```
pub struct ItemBuffer<E: Pod> {
    /// The reserved range, and its size in bytes.
    map: *mut u8,
    reserve: usize,
    /// Byte offset of the first item in the range, and items held.
    start: usize,
    len: usize,
    /// Bytes of the range that may hold written pages (`touched.0 .. touched.1`).
    touched: (usize, usize),
    /// The system's page size.
    page: usize,
    /// Whether redistributions give back the memory of the items that left
    /// ([`ItemBuffer::set_give_back_sent`]).
    give_back_sent: bool,
    /// Whether the system took the advice of huge pages
    /// ([`ItemBuffer::advise_huge_pages`]): memory then goes back by whole
    /// huge pages, which splitting would make slow.
    huge_pages: bool,
    _items: PhantomData<E>,
}

// SAFETY: the buffer owns its mapping as a `Vec` owns its allocation.
unsafe impl<E: Pod + Send> Send for ItemBuffer<E> {}
// SAFETY: as above; shared access only reads.
unsafe impl<E: Pod + Sync> Sync for ItemBuffer<E> {}

/// The size of a transparent huge page (x86-64, and arm64 with 4 KiB pages).
const HUGE_PAGE: usize = 2 << 20;

/// The default reservation: 1 TiB of addresses.
const DEFAULT_RESERVE: usize = 1 << 40;

#[cfg(target_os = "linux")]
mod sys {
    use std::ffi::{c_int, c_long, c_void};
    pub const PROT_READ: c_int = 1;
    pub const PROT_WRITE: c_int = 2;
    pub const MAP_PRIVATE: c_int = 2;
    pub const MAP_ANONYMOUS: c_int = 0x20;
    pub const MAP_NORESERVE: c_int = 0x4000;
    pub const MADV_DONTNEED: c_int = 4;
    pub const MADV_HUGEPAGE: c_int = 14;
    pub const SC_PAGESIZE: c_int = 30;
    extern "C" {
        pub fn sysconf(name: c_int) -> c_long;
        pub fn mmap(
            addr: *mut c_void,
            len: usize,
            prot: c_int,
            flags: c_int,
            fd: c_int,
            offset: c_long,
        ) -> *mut c_void;
        pub fn munmap(addr: *mut c_void, len: usize) -> c_int;
        pub fn madvise(addr: *mut c_void, len: usize, advice: c_int) -> c_int;
    }
}

impl<E: Pod> ItemBuffer<E> {
    /// An empty buffer with the default reservation (1 TiB of addresses, no
    /// memory).
    ///
    /// # Errors
    /// [`BufferError::Reserve`] when the system refuses the reservation.
    pub fn new() -> Result<Self, BufferError> {
        Self::with_reserve(DEFAULT_RESERVE)
    }

    /// An empty buffer reserving `bytes` of addresses (rounded up to pages), half
    /// in front of its items and half behind.
    ///
    /// # Errors
    /// [`BufferError::Reserve`] when the system refuses the reservation.
    #[cfg(target_os = "linux")]
    pub fn with_reserve(bytes: usize) -> Result<Self, BufferError> {
        // SAFETY: sysconf only reads a system constant.
        let page = usize::try_from(unsafe { sys::sysconf(sys::SC_PAGESIZE) })
            .ok()
            .filter(|&p| p.is_power_of_two())
            .unwrap_or(4096);
        if std::mem::align_of::<E>() > page {
            return Err(BufferError::Reserve(format!(
                "items aligned to {} bytes, more than a page ({page})",
                std::mem::align_of::<E>()
            )));
        }
        let reserve = bytes
            .max(2 * page)
            .checked_next_multiple_of(2 * page)
            .ok_or_else(|| BufferError::Reserve(format!("{bytes} bytes of addresses")))?;
        // SAFETY: a new private anonymous mapping; nothing else refers to it.
        let map = unsafe {
            sys::mmap(
                std::ptr::null_mut(),
                reserve,
                sys::PROT_READ | sys::PROT_WRITE,
                sys::MAP_PRIVATE | sys::MAP_ANONYMOUS | sys::MAP_NORESERVE,
                -1,
                0,
            )
        };
        if map as isize == -1 || map.is_null() {
            return Err(BufferError::Reserve(
                std::io::Error::last_os_error().to_string(),
            ));
        }
        let middle = reserve / 2;
        // The first item aligned for `E` (a page is aligned for any Pod type).
        Ok(ItemBuffer {
            map: map.cast(),
            reserve,
            start: middle,
            len: 0,
            touched: (middle, middle),
            page,
            give_back_sent: false,
            huge_pages: false,
            _items: PhantomData,
        })
    }

    /// Refused: item buffers map memory with Linux's `mmap`.
    #[cfg(not(target_os = "linux"))]
    pub fn with_reserve(_bytes: usize) -> Result<Self, BufferError> {
        Err(BufferError::Reserve("item buffers need Linux".to_string()))
    }

    /// A buffer holding a copy of `items`.
    ///
    /// # Errors
    /// As [`ItemBuffer::new`] and [`ItemBuffer::extend_from_slice`].
    pub fn from_slice(items: &[E]) -> Result<Self, BufferError> {
        let mut buffer = Self::new()?;
        buffer.extend_from_slice(items)?;
        Ok(buffer)
    }

    /// Appends a copy of `items`.
    ///
    /// # Errors
    /// [`BufferError::Full`] beyond the reservation (nothing appended).
    pub fn extend_from_slice(&mut self, items: &[E]) -> Result<(), BufferError> {
        let at = self.len;
        self.grow(0, items.len())?;
        self[at..].copy_from_slice(items);
        Ok(())
    }

    /// Keeps the first `len` items (none dropped if there are fewer); memory past
    /// them is given back by whole pages.
    pub fn truncate(&mut self, len: usize) {
        self.len = self.len.min(len);
        self.release();
    }

    /// Makes the buffer hold `len` items: the first `len` when it holds more
    /// (as [`ItemBuffer::truncate`]), else its items followed by zeroed ones
    /// (all bits 0). The items held stay at their addresses; memory for the
    /// new items is given by the system when first written, except for the
    /// end of the page the last item held lies in, zeroed here.
    ///
    /// # Errors
    /// [`BufferError::Full`] beyond the reservation (nothing changed).
    ///
    /// # Complexity
    /// O(1) (at most a page zeroed), plus the system's work to give back
    /// memory when shrinking.
    pub fn resize(&mut self, len: usize) -> Result<(), BufferError> {
        if len <= self.len {
            self.truncate(len);
            return Ok(());
        }
        let size = std::mem::size_of::<E>();
        let end = self.start + self.len * size;
        // Bytes past the items that may hold data written before (the rest of
        // the range reads as zeros: never written, or given back).
        let dirty = end
            .next_multiple_of(self.page)
            .max(self.touched.1)
            .min(self.reserve);
        self.grow(0, len - self.len)?;
        let new_end = self.start + self.len * size;
        let zero_to = dirty.min(new_end);
        if zero_to > end {
            // SAFETY: `end .. zero_to` lies within the mapping, past the items
            // held (no slice of it is alive: `&mut self`).
            unsafe { std::ptr::write_bytes(self.map.add(end), 0, zero_to - end) };
        }
        Ok(())
    }

    /// Asks the system to back the buffer with transparent huge pages where it
    /// can (`madvise(MADV_HUGEPAGE)` over the whole reservation, as numpy does
    /// for its large arrays): items then arrive in fresh memory with one page
    /// fault per huge page (2 MiB on x86-64) instead of one per page, which on
    /// some machines makes the first write of fresh memory several times
    /// faster. Memory given back still goes by the system's pages (a huge page
    /// the items leave in part is split). Returns whether the system took the
    /// advice (false where transparent huge pages are disabled or unknown);
    /// the buffer works the same either way.
    ///
    /// Whether it pays depends on the machine: when the system has no free
    /// huge page it may first compact memory (the `defrag` setting of
    /// transparent huge pages), which can make a first write slower than with
    /// small pages. Measure before relying on it.
    ///
    /// # Example
    /// ```
    /// use hetbal_mpi::buffer::ItemBuffer;
    /// let mut items = ItemBuffer::<u8>::new()?;
    /// let _advised: bool = items.advise_huge_pages();
    /// items.resize(4 << 20)?;
    /// assert!(items.iter().all(|&b| b == 0));
    /// # Ok::<(), hetbal_mpi::buffer::BufferError>(())
    /// ```
    pub fn advise_huge_pages(&mut self) -> bool {
        // SAFETY: advice over this buffer's own mapping; it changes how pages
        // are backed, not what they hold.
        #[cfg(target_os = "linux")]
        let taken = unsafe {
            sys::madvise(self.map.cast::<c_void>(), self.reserve, sys::MADV_HUGEPAGE) == 0
        };
        #[cfg(not(target_os = "linux"))]
        let taken = false;
        self.huge_pages |= taken;
        taken
    }

    /// Makes the redistributions of this rank give back the memory of the
    /// items it sends as soon as they have left (by whole pages), rather than
    /// at the commit. A rank that keeps, sends and receives at once (a
    /// circulation, or the middle of a chain) then holds its items and those
    /// it has received, less those that left, instead of its items plus all
    /// it receives: within a few chunks of what it holds before or after
    /// when it sends about as fast as it receives.
    ///
    /// The price is the guarantee that a failed redistribution gives every
    /// rank its items back: on this rank, a redistribution that fails after
    /// items left (a message corrupted or lost, another rank failing) leaves
    /// the buffer holding only its items that had not left, in order (so
    /// fewer than before; on the other ranks as usual). Failures found
    /// before anything moves (wrong arguments on any rank) change nothing.
    /// Off by default. Ring redistributions and GEN_BLOCK redistributions
    /// give back, chunk by chunk (along the messages of a plan with
    /// start-ups, message by message: items that leave in one message are
    /// held until it has left); a scatter's root keeps the end of its items
    /// and sends the rest away, so its memory falls anyway.
    ///
    /// # Example
    /// ```
    /// use hetbal_mpi::buffer::ItemBuffer;
    /// let mut items = ItemBuffer::from_slice(&[1u8, 2, 3])?;
    /// assert!(!items.gives_back_sent());
    /// items.set_give_back_sent(true);
    /// assert!(items.gives_back_sent());
    /// # Ok::<(), hetbal_mpi::buffer::BufferError>(())
    /// ```
    pub fn set_give_back_sent(&mut self, on: bool) {
        self.give_back_sent = on;
    }

    /// Whether redistributions give back the memory of the items this rank
    /// sends as soon as they have left ([`ItemBuffer::set_give_back_sent`]).
    pub fn gives_back_sent(&self) -> bool {
        self.give_back_sent
    }

    /// How many more items fit in front of those held and behind them before
    /// the reservation is full (growth beyond fails with
    /// [`BufferError::Full`]).
    pub fn room(&self) -> (usize, usize) {
        let size = std::mem::size_of::<E>().max(1);
        let behind = self.reserve - self.start - self.len * size;
        (self.start / size, behind / size)
    }

    /// Room for `before` more items in front and `after` behind (zeros, memory
    /// given on first write); the items held stay at their addresses.
    fn grow(&mut self, before: usize, after: usize) -> Result<(), BufferError> {
        let size = std::mem::size_of::<E>();
        let front = before as u128 * size as u128;
        let back = (self.len as u128 + after as u128) * size as u128;
        if front > self.start as u128 {
            return Err(BufferError::Full {
                needed: front,
                room: self.start,
            });
        }
        if back > (self.reserve - self.start) as u128 {
            return Err(BufferError::Full {
                needed: back,
                room: self.reserve - self.start,
            });
        }
        // Front: the new items start `front` bytes earlier, a multiple of the
        // item size (so still aligned for `E`).
        self.start -= front as usize;
        self.len += before + after;
        let end = self.start + self.len * size;
        self.touched = (self.touched.0.min(self.start), self.touched.1.max(end));
        Ok(())
    }

    /// Gives back the whole pages (of the system's size) the items no longer
    /// cover (they read as zeros if written again).
    fn release(&mut self) {
        let size = std::mem::size_of::<E>();
        let (lo, hi) = (self.start, self.start + self.len * size);
        let page = self.page;
        let first_page = lo / page * page; // pages below `lo`, whole
        let last_page = hi.next_multiple_of(page); // pages from here on, whole
        let (t0, t1) = self.touched;
        for (from, to) in [
            (t0 / page * page, first_page),
            (last_page, t1.next_multiple_of(page)),
        ] {
            if to > from {
                // SAFETY: a page range inside the mapping holding no item.
                #[cfg(target_os = "linux")]
                unsafe {
                    sys::madvise(
                        self.map.add(from).cast::<c_void>(),
                        to - from,
                        sys::MADV_DONTNEED,
                    );
                }
            }
        }
        self.touched = (lo, hi);
    }
}

impl<E: Pod> Deref for ItemBuffer<E> {
    type Target = [E];
    fn deref(&self) -> &[E] {
        // SAFETY: `start .. start + len * size` lies in the mapping, is aligned
        // for `E` (the middle is page-aligned and moves by whole items), and any
        // bytes are a valid `E` (Pod), zeros included.
        unsafe { std::slice::from_raw_parts(self.map.add(self.start).cast::<E>(), self.len) }
    }
}

impl<E: Pod> DerefMut for ItemBuffer<E> {
    fn deref_mut(&mut self) -> &mut [E] {
        // SAFETY: as in `deref`, and `&mut self` is exclusive.
        unsafe { std::slice::from_raw_parts_mut(self.map.add(self.start).cast::<E>(), self.len) }
    }
}

impl<E: Pod + fmt::Debug> fmt::Debug for ItemBuffer<E> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_list().entries(self.iter()).finish()
    }
}

impl<E: Pod> Drop for ItemBuffer<E> {
    fn drop(&mut self) {
        // SAFETY: the mapping is this buffer's, and no slice of it outlives it.
        #[cfg(target_os = "linux")]
        unsafe {
            sys::munmap(self.map.cast::<c_void>(), self.reserve);
        }
    }
}

impl<E: Pod> Storage<E> for ItemBuffer<E> {
    fn elements(&self) -> usize {
        self.len
    }

    unsafe fn open(&mut self, before: usize, after: usize) -> Result<*mut E, String> {
        self.grow(before, after).map_err(|e| e.to_string())?;
        Ok(self.as_mut_ptr())
    }

    unsafe fn keep(&mut self, from: usize, to: usize) {
        assert!(from <= to && to <= self.len, "keep outside the room opened");
        self.start += from * std::mem::size_of::<E>();
        self.len = to - from;
        self.release();
    }

    unsafe fn restore(&mut self, before: usize, own: usize) {
        assert!(
            before.checked_add(own).is_some_and(|e| e <= self.len),
            "restore outside the room opened"
        );
        // The own items never moved: only the room opened around them goes.
        self.start += before * std::mem::size_of::<E>();
        self.len = own;
        self.release();
    }

    fn gives_back_sent(&self) -> Option<usize> {
        // Advised huge pages go back whole (giving back part of one splits it).
        let page = if self.huge_pages {
            HUGE_PAGE.max(self.page)
        } else {
            self.page
        };
        self.give_back_sent.then_some(page)
    }
}

/// Gives back to the system the memory of the whole pages (of `page` bytes)
/// within `from .. to` (addresses), which then read as zeros.
///
/// # Safety
/// The range lies within one item buffer's mapping, and nothing reads or
/// writes the bytes of those pages until they are written again.
pub(crate) unsafe fn give_back_pages(from: usize, to: usize, page: usize) {
    let (lo, hi) = (from.next_multiple_of(page), to / page * page);
    if hi > lo {
        // SAFETY: whole pages of the mapping, which the caller no longer uses.
        #[cfg(target_os = "linux")]
        unsafe {
            sys::madvise(lo as *mut c_void, hi - lo, sys::MADV_DONTNEED);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Growing in front and behind, keeping a range and restoring never move
    /// the items held; memory outside the items is given back.
    #[test]
    fn items_stay_where_they_are() {
        let mut b = ItemBuffer::with_reserve(1 << 24).unwrap();
        b.extend_from_slice(&[1u32, 2, 3]).unwrap();
        let at = b.as_ptr() as usize;
        // Open two in front and one behind: the own items are 2.. from the base.
        let base = unsafe { b.open(2, 1).unwrap() as usize };
        assert_eq!(base + 8, at);
        assert_eq!(&b[2..5], &[1, 2, 3]);
        b[0] = 9;
        b[5] = 4;
        // A failed run: back to what it was.
        unsafe { b.restore(2, 3) };
        assert_eq!(&b[..], &[1, 2, 3]);
        assert_eq!(b.as_ptr() as usize, at);
        // A run that keeps the last own item, then receives one behind.
        let base = unsafe { b.open(2, 1).unwrap() };
        b[5] = 4;
        unsafe { b.keep(4, 6) };
        assert_eq!(&b[..], &[3, 4]);
        assert_eq!(b.as_ptr() as usize, base as usize + 16);
        assert_eq!(b.as_ptr() as usize, at + 8);
        b.truncate(1);
        assert_eq!(&b[..], &[3]);
        // Growth beyond the reservation is refused, nothing changed.
        let err = unsafe { b.open(1 << 30, 0).unwrap_err() };
        assert!(err.contains("beyond"), "{err}");
        assert_eq!(&b[..], &[3]);
        let full = b.extend_from_slice(&vec![0u32; 1 << 23]).unwrap_err();
        assert!(matches!(full, BufferError::Full { .. }));
        assert_eq!(&b[..], &[3]);
        // Large ranges: pages given back and touched again read as zeros.
        let mut big = ItemBuffer::<u8>::with_reserve(1 << 26).unwrap();
        big.extend_from_slice(&vec![5u8; 1 << 20]).unwrap();
        unsafe { big.keep(1 << 19, 1 << 20) };
        assert!(big.iter().all(|&x| x == 5));
        unsafe { big.open(1 << 19, 0).unwrap() };
        assert!(big[..1 << 19].iter().all(|&x| x == 0));
        assert!(big[1 << 19..].iter().all(|&x| x == 5));
    }

    /// Resizing keeps the items where they are and zeroes the new ones, even
    /// where items were written before a shrink; the room shrinks as the
    /// buffer grows.
    #[test]
    fn resize_zeroes_and_keeps_addresses() {
        let mut b = ItemBuffer::<u64>::with_reserve(1 << 24).unwrap();
        let (front, behind) = b.room();
        assert_eq!((front, behind), ((1 << 23) / 8, (1 << 23) / 8));
        b.extend_from_slice(&[7; 1000]).unwrap();
        let at = b.as_ptr() as usize;
        assert_eq!(b.room(), (front, behind - 1000));
        // Shrink within a page and across pages, then grow again: zeros.
        b.resize(3).unwrap();
        assert_eq!(&b[..], &[7, 7, 7]);
        b.resize(1000).unwrap();
        assert_eq!(b.as_ptr() as usize, at);
        assert_eq!(&b[..3], &[7, 7, 7]);
        assert!(b[3..].iter().all(|&x| x == 0));
        b[999] = 9;
        b.resize(999).unwrap();
        b.resize(1000).unwrap();
        assert_eq!(b[999], 0);
        // Nothing changes when the reservation is exceeded.
        assert!(matches!(b.resize(1 << 22), Err(BufferError::Full { .. })));
        assert_eq!(b.len(), 1000);
        b.resize(0).unwrap();
        assert!(b.is_empty());
        assert_eq!(b.room(), (front, behind));
    }
}
