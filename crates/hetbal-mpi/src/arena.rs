//! A rank's items grown in place for one operation, so that no rank ever holds a
//! second copy of its data.
//!
//! A redistribution receives items before the rank's own ones (from its
//! predecessor, or the part of its target block before its source block) and
//! after them. The caller's `Vec` grows (in capacity) to hold both; its own items
//! shift to leave room in front (one move in place, only when items come in
//! front); the items received go straight to their places, beyond the own ones;
//! the own ones are never written until the commit. So during the transfer the
//! buffer holds, item after item, `[received before | own | received after]`:
//! a rank's memory is its items plus those it receives, `max(load, target)`
//! items when it only sends or only receives. At the commit the new items, a
//! contiguous range of that buffer, move to its front (a move in place, none
//! when they start there) and the buffer is truncated (it keeps its capacity:
//! the next redistribution receives into memory already touched). On failure the
//! own items move back: the caller finds exactly what it had. In an
//! [`ItemBuffer`](crate::buffer::ItemBuffer) nothing shifts or moves back: it
//! grows in front and behind its items, and the commit only changes which of
//! its bytes are the items.

use bytemuck::Pod;
use mpi::traits::Communicator;

use crate::buffer::ItemStorage;
use crate::protocol::{agree_before_start, Fingerprint};
use crate::RunError;

/// The caller's items, grown to `[before | own | after]` items (see the module's
/// docs) in their storage (a `Vec` or an [`ItemBuffer`](crate::buffer::ItemBuffer)).
/// Dropped without [`Arena::commit`], it puts the own items back.
pub(crate) struct Arena<'a, E: Pod> {
    items: &'a mut dyn ItemStorage<E>,
    /// Where item 0 of the arena (the first of `before`) is.
    base: *mut E,
    /// Elements of `E` per item.
    item_len: usize,
    /// Bytes per item.
    item_bytes: usize,
    before: usize,
    own: usize,
    after: usize,
    /// Own items whose memory was given back once they had left, at the front
    /// and at the back ([`Arena::gave_back`]).
    gone: (usize, usize),
    committed: bool,
}

impl<'a, E: Pod> Arena<'a, E> {
    /// Grows `items` (whole items of `item_len` elements each) to hold `before`
    /// more items in front and `after` more behind (a `Vec`'s own items shift by
    /// `before`; an item buffer's stay where they are).
    ///
    /// # Errors
    /// A message when the items cannot be held in memory (nothing changed).
    pub(crate) fn new(
        items: &'a mut dyn ItemStorage<E>,
        item_len: usize,
        before: usize,
        after: usize,
    ) -> Result<Self, String> {
        let item_len = item_len.max(1);
        let item_bytes = item_len * std::mem::size_of::<E>();
        let own = items.elements() / item_len;
        let elements = |k: usize| {
            k.checked_mul(item_len)
                .ok_or_else(|| format!("{k} items do not fit in memory"))
        };
        // SAFETY: the arena gives the storage back once, by `commit` (`keep`)
        // or its drop (`restore`), and nothing else uses it meanwhile (it
        // borrows it mutably for its whole life).
        let base = unsafe { items.open(elements(before)?, elements(after)?)? };
        Ok(Arena {
            items,
            base,
            item_len,
            item_bytes,
            before,
            own,
            after,
            gone: (0, 0),
            committed: false,
        })
    }

    /// Opens the arena of an operation on every rank, or on none: when this
    /// rank's items are as the operation expects (`checked`), grows them by
    /// `before` and `after` items (see [`Arena::new`]); then every rank learns
    /// whether every rank could start, and with the same arguments (their
    /// `fingerprint`s).
    /// Collective over `comm`.
    ///
    /// # Errors
    /// On every rank when a rank cannot start: this rank's error
    /// ([`RunError::InvalidPlan`] for items of zero bytes, `checked`'s, or
    /// [`RunError::Protocol`] when the items do not fit in memory),
    /// [`RunError::PeerRefused`], or [`RunError::Mismatch`] when the ranks'
    /// `fingerprint`s of their arguments differ (see [`agree_before_start`]).
    /// The items are then unchanged.
    pub(crate) fn agreed<C: Communicator>(
        comm: &C,
        (checked, fingerprint): (Result<(), RunError>, Fingerprint),
        items: &'a mut dyn ItemStorage<E>,
        item_len: usize,
        (before, after): (u64, u64),
    ) -> Result<Self, RunError> {
        let rank = comm.rank() as usize;
        let fit =
            |k: u64| usize::try_from(k).map_err(|_| format!("{k} items do not fit in memory"));
        let arena = checked.and_then(|()| {
            if item_len * std::mem::size_of::<E>() == 0 {
                return Err(RunError::InvalidPlan {
                    reason: "items of zero bytes cannot move".to_string(),
                });
            }
            fit(before)
                .and_then(|b| Ok((b, fit(after)?)))
                .and_then(|(b, a)| Arena::new(items, item_len, b, a))
                .map_err(|reason| RunError::Protocol { rank, reason })
        });
        let (valid, arena) = match arena {
            Ok(arena) => (Ok(()), Some(arena)),
            Err(e) => (Err(e), None),
        };
        agree_before_start(comm, valid, fingerprint)?;
        Ok(arena.expect("agreed: every rank holds its arena"))
    }

    /// Items in the arena: `before + own + after`.
    pub(crate) fn len(&self) -> usize {
        self.before + self.own + self.after
    }

    /// The whole arena as bytes: item `k` at `k * item_bytes`. The own items are
    /// items `before .. before + own`; the others hold whatever was received
    /// (unspecified bytes before that).
    pub(crate) fn bytes(&mut self) -> &mut [u8] {
        let len = self.len() * self.item_bytes;
        // SAFETY: the storage holds room for `len()` items from `base` (opened in
        // `new`), `E` is plain old data (any bytes are a valid `E`, none is
        // padding), and the arena borrows the storage mutably for its whole life.
        // The bytes outside the own items may not have been written yet: they
        // are only written (by receives) and read after being written, except by
        // the commit, which the protocol runs only once every item was received.
        unsafe { std::slice::from_raw_parts_mut(self.base.cast::<u8>(), len) }
    }

    /// The system's page size when the storage gives back the memory of the
    /// own items that leave ([`crate::buffer::ItemBuffer::set_give_back_sent`]).
    pub(crate) fn gives_back_sent(&self) -> Option<usize> {
        self.items.gives_back_sent()
    }

    /// Notes that the memory of the first `front` and the last `back` own
    /// items was given back (they left): a failed run then gives back only the
    /// own items between them.
    pub(crate) fn gave_back(&mut self, front: usize, back: usize) {
        debug_assert!(front + back <= self.own);
        self.gone = (front, back);
    }

    /// Makes items `from .. to` of the arena the caller's items (a `Vec` moves
    /// them to its front; an item buffer keeps them where they are). Call it
    /// only when every item of that range was written (the own ones, or
    /// received).
    pub(crate) fn commit(mut self, from: usize, to: usize) {
        debug_assert!(from <= to && to <= self.len());
        // SAFETY: `open` was called by `new`; every item of `from .. to` was
        // written (the caller's promise).
        unsafe { self.items.keep(from * self.item_len, to * self.item_len) };
        self.committed = true;
    }
}

impl<E: Pod> Drop for Arena<'_, E> {
    fn drop(&mut self) {
        if !self.committed {
            // The own items that did not leave (all of them, unless their
            // memory was given back as they left).
            let (front, back) = self.gone;
            let (before, own) = (self.before + front, self.own - front - back);
            // SAFETY: `open` was called by `new` with `own` items held, which
            // nothing wrote since (receives write only the other places); a
            // storage that gave back memory is an item buffer, whose restore
            // takes any range of what it opened.
            unsafe {
                self.items
                    .restore(before * self.item_len, own * self.item_len)
            };
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn grows_in_place_commits_and_rolls_back() {
        // Items of two u16: own items 1..=3, two to receive before, one after.
        let original: Vec<u16> = vec![1, 1, 2, 2, 3, 3];
        let mut items = original.clone();
        {
            let mut arena = Arena::new(&mut items, 2, 2, 1).unwrap();
            assert_eq!(arena.len(), 6);
            let bytes = arena.bytes();
            assert_eq!(bytes.len(), 24);
            // The own items, shifted by two items (8 bytes).
            assert_eq!(&bytes[8..20], bytemuck::cast_slice::<u16, u8>(&original));
            bytes[..8].copy_from_slice(bytemuck::cast_slice::<u16, u8>(&[8, 8, 9, 9]));
            // Dropped without a commit: the own items come back.
        }
        assert_eq!(items, original);
        {
            let mut arena = Arena::new(&mut items, 2, 2, 1).unwrap();
            let bytes = arena.bytes();
            bytes[..8].copy_from_slice(bytemuck::cast_slice::<u16, u8>(&[8, 8, 9, 9]));
            bytes[20..].copy_from_slice(bytemuck::cast_slice::<u16, u8>(&[4, 4]));
            // Keep the received item 9, the own ones and 4; item 8 went on.
            arena.commit(1, 6);
        }
        assert_eq!(items, vec![9, 9, 1, 1, 2, 2, 3, 3, 4, 4]);
        assert!(items.capacity() >= 12);
        // Only items after: no shift; keep the last two own items and the new one.
        let mut items: Vec<u8> = vec![1, 2, 3];
        let mut arena = Arena::new(&mut items, 1, 0, 1).unwrap();
        arena.bytes()[3] = 4;
        arena.commit(1, 4);
        assert_eq!(items, vec![2, 3, 4]);
        assert!(Arena::new(&mut items, 1, usize::MAX, 1).is_err());
        assert_eq!(items, vec![2, 3, 4]);
    }
}
