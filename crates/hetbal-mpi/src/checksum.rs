//! An order-aware checksum of distributed items: the wrapping sum over all items of
//! a hash of (global position, bytes). Moving items between ranks keeps the sum only
//! when every item arrives intact at its position; summing per rank and reducing
//! with a wrapping sum gives the global value without gathering anything.

/// Hash of one item at a global position (FNV-1a over the position and the bytes,
/// then a final mix so that sums of hashes do not cancel by accident).
///
/// Complexity: O(item size).
///
/// # Example
/// ```
/// use hetbal_mpi::checksum::item_hash;
/// assert_ne!(item_hash(0, b"ab"), item_hash(1, b"ab"));
/// assert_ne!(item_hash(0, b"ab"), item_hash(0, b"ba"));
/// ```
pub fn item_hash(position: u128, bytes: &[u8]) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in position.to_le_bytes().iter().chain(bytes) {
        h ^= u64::from(*b);
        h = h.wrapping_mul(0x0100_0000_01b3);
    }
    // splitmix64 finaliser
    h ^= h >> 30;
    h = h.wrapping_mul(0xbf58_476d_1ce4_e5b9);
    h ^= h >> 27;
    h = h.wrapping_mul(0x94d0_49bb_1331_11eb);
    h ^ (h >> 31)
}

/// The wrapping sum of [`item_hash`] over consecutive items of `item_bytes` bytes
/// each, the first at global position `first` (positions wrap at `total`).
///
/// Complexity: O(bytes.len()).
///
/// # Example
/// ```
/// use hetbal_mpi::checksum::{item_hash, range_sum};
/// let items = b"aabbcc"; // three items of 2 bytes at positions 4, 0, 1 of 5
/// let sum = range_sum(4, 5, 2, items);
/// let expected = item_hash(4, b"aa")
///     .wrapping_add(item_hash(0, b"bb"))
///     .wrapping_add(item_hash(1, b"cc"));
/// assert_eq!(sum, expected);
/// ```
pub fn range_sum(first: u128, total: u128, item_bytes: usize, bytes: &[u8]) -> u64 {
    bytes
        .chunks_exact(item_bytes.max(1))
        .enumerate()
        .fold(0u64, |acc, (k, item)| {
            let position = (first + k as u128) % total.max(1);
            acc.wrapping_add(item_hash(position, item))
        })
}
