//! Staging memory kept from one redistribution to the next.
//!
//! A ring redistribution receives items into staging buffers, and at the commit
//! the largest part of a rank's new items becomes its buffer (the buffer moves, no
//! item is copied). Memory fresh from the allocator costs a page fault the first
//! time each page is touched, which can cost more than the transfer itself (about
//! 0.4 ms per MiB on a small VM, where a shared-memory transfer takes 0.15 to 0.5
//! ms per MiB). An
//! iterative application redistributes many times: a [`Workspace`] passed to every
//! redistribution ([`crate::ring::redistribute_with`],
//! [`crate::balancer::Balancer::rebalance_with`]) keeps the buffers a commit no
//! longer needs (the other staging buffers and the rank's old items) and hands them
//! out as the next staging buffers, so that the redistributions after the first
//! ones receive into memory already touched.
//!
//! Reusing memory changes nothing in the protocol: items still arrive in staging
//! buffers, are checked, and replace the caller's items only when every rank
//! commits; a buffer's old contents are overwritten by the items received (a
//! message shorter than announced is a protocol error, and nothing commits).

/// Spare buffers kept at most (the smallest goes first): a redistribution takes at
/// most three and gives back at most three.
const MAX_SPARE: usize = 4;

/// Buffers kept between redistributions, to receive into memory already touched.
/// One per rank and per data set; `Workspace::default()` is empty, and an empty
/// workspace makes a redistribution allocate as without one.
///
/// It holds on to memory: up to four buffers, each up to the size of the rank's
/// items after large moves (see [`Workspace::retained_bytes`];
/// [`Workspace::release`] frees them).
///
/// # Example
/// ```
/// use hetbal_mpi::workspace::Workspace;
/// let mut workspace = Workspace::new();
/// workspace.recycle(vec![0u8; 1 << 20]); // a buffer the application no longer needs
/// assert_eq!(workspace.buffers(), 1);
/// assert!(workspace.retained_bytes() >= 1 << 20);
/// workspace.release();
/// assert_eq!(workspace.retained_bytes(), 0);
/// ```
#[derive(Debug, Default)]
pub struct Workspace {
    spare: Vec<Vec<u8>>,
}

impl Workspace {
    /// An empty workspace.
    pub fn new() -> Self {
        Workspace::default()
    }

    /// Bytes of memory the workspace holds (the capacities of its buffers).
    ///
    /// Complexity: O(1) (at most four buffers).
    pub fn retained_bytes(&self) -> usize {
        self.spare.iter().map(Vec::capacity).sum()
    }

    /// Buffers the workspace holds.
    pub fn buffers(&self) -> usize {
        self.spare.len()
    }

    /// Frees every buffer (the next redistribution allocates afresh).
    pub fn release(&mut self) {
        self.spare = Vec::new();
    }

    /// Gives the workspace a buffer to reuse (its contents are not kept). When it
    /// then holds more than four buffers, the smallest is freed.
    ///
    /// Complexity: O(1).
    pub fn recycle(&mut self, buffer: Vec<u8>) {
        if buffer.capacity() == 0 {
            return;
        }
        self.spare.push(buffer);
        if self.spare.len() > MAX_SPARE {
            if let Some(smallest) = (0..self.spare.len()).min_by_key(|&k| self.spare[k].capacity())
            {
                self.spare.swap_remove(smallest);
            }
        }
    }

    /// A buffer of `len` bytes (contents unspecified) with room for at least
    /// `capacity` bytes: the best-fitting spare buffer, preferring one whose
    /// initialised length already covers `len` (nothing to write then); else the
    /// largest spare grown when it holds at least half of `capacity`; else a new,
    /// zeroed allocation (whose pages the system maps on first touch).
    ///
    /// Complexity: O(1) besides zeroing what the buffer did not hold (none when
    /// the buffers come back at the same sizes).
    pub(crate) fn take(&mut self, len: usize, capacity: usize) -> Vec<u8> {
        let capacity = capacity.max(len);
        if capacity == 0 {
            return Vec::new();
        }
        let fits = (0..self.spare.len())
            .filter(|&k| self.spare[k].capacity() >= capacity)
            .min_by_key(|&k| (self.spare[k].len() < len, self.spare[k].capacity()));
        let largest = (0..self.spare.len()).max_by_key(|&k| self.spare[k].capacity());
        let mut buffer = match (fits, largest) {
            (Some(k), _) => self.spare.swap_remove(k),
            (None, Some(k)) if self.spare[k].capacity() >= capacity / 2 => {
                let mut buffer = self.spare.swap_remove(k);
                buffer.truncate(len);
                buffer.reserve_exact(capacity - buffer.len());
                buffer
            }
            _ => {
                let mut buffer = vec![0u8; capacity];
                buffer.truncate(len);
                return buffer;
            }
        };
        if buffer.len() >= len {
            buffer.truncate(len);
        } else {
            buffer.resize(len, 0);
        }
        buffer
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn take_reuses_the_best_fit_without_copying() {
        let mut w = Workspace::new();
        let big = vec![7u8; 1000];
        let big_ptr = big.as_ptr();
        w.recycle(big);
        w.recycle(vec![1u8; 10]);
        let b = w.take(600, 700);
        assert_eq!(b.len(), 600);
        assert!(b.capacity() >= 700);
        assert_eq!(b.as_ptr(), big_ptr, "the spare buffer, not a new one");
        assert_eq!(w.buffers(), 1);
        // Too big for every spare and more than twice the largest: a new buffer,
        // the small spare stays.
        let c = w.take(100, 100);
        assert_eq!(c.len(), 100);
        assert_eq!(w.buffers(), 1);
        let fresh = w.take(5000, 6000);
        assert_eq!(fresh.len(), 5000);
        assert!(fresh.capacity() >= 6000);
        assert!(w.take(0, 0).capacity() == 0);
    }

    #[test]
    fn take_grows_the_largest_when_close() {
        let mut w = Workspace::new();
        w.recycle(vec![3u8; 800]);
        let b = w.take(1000, 1000);
        assert_eq!(b.len(), 1000);
        assert!(b[800..].iter().all(|&x| x == 0));
        assert_eq!(w.buffers(), 0);
    }

    #[test]
    fn at_most_four_spares_and_release() {
        let mut w = Workspace::new();
        for k in 1..=6 {
            w.recycle(vec![0u8; 100 * k]);
        }
        w.recycle(Vec::new());
        assert_eq!(w.buffers(), MAX_SPARE);
        assert!(w.retained_bytes() >= 300 + 400 + 500 + 600);
        assert!(w.retained_bytes() < 300 + 400 + 500 + 600 + 100);
        w.release();
        assert_eq!((w.buffers(), w.retained_bytes()), (0, 0));
    }
}
