//! An order-aware checksum of distributed items: the wrapping sum over all items of
//! a hash of (global position, bytes). Moving items between ranks keeps the sum only
//! when every item arrives intact at its position; summing per rank and reducing
//! with a wrapping sum gives the global value without gathering anything.

/// Hash of one item at a global position: the position and the bytes, 32 at a time
/// in four lanes, folded by multiply-rotate rounds, then a final mix (splitmix64) so that
/// sums of hashes do not cancel by accident.
///
/// Complexity: O(item size), about a byte per cycle.
///
/// # Example
/// ```
/// use hetbal_mpi::checksum::item_hash;
/// assert_ne!(item_hash(0, b"ab"), item_hash(1, b"ab"));
/// assert_ne!(item_hash(0, b"ab"), item_hash(0, b"ba"));
/// assert_ne!(item_hash(0, b"ab"), item_hash(0, b"ab\0"));
/// ```
pub fn item_hash(position: u128, bytes: &[u8]) -> u64 {
    const K: u64 = 0x9e37_79b9_7f4a_7c15;
    let mix = |h: u64, word: u64| (h ^ word).wrapping_mul(K).rotate_left(29);
    let word = |b: &[u8]| u64::from_le_bytes(b.try_into().expect("8 bytes"));
    // Four independent lanes over 32-byte blocks (the processor runs them in
    // parallel), then the tail eight bytes at a time.
    let mut lanes = [
        0x243f_6a88_85a3_08d3 ^ position as u64,
        0x1319_8a2e_0370_7344 ^ (position >> 64) as u64,
        0xa409_3822_299f_31d0 ^ bytes.len() as u64,
        0x082e_fa98_ec4e_6c89,
    ];
    let mut blocks = bytes.chunks_exact(32);
    for block in &mut blocks {
        for (k, lane) in lanes.iter_mut().enumerate() {
            *lane = mix(*lane, word(&block[8 * k..8 * k + 8]));
        }
    }
    let mut h = lanes.iter().fold(0u64, |h, &lane| mix(h, lane));
    let mut words = blocks.remainder().chunks_exact(8);
    for w in &mut words {
        h = mix(h, word(w));
    }
    let mut tail = [0u8; 8];
    tail[..words.remainder().len()].copy_from_slice(words.remainder());
    h = mix(h, u64::from_le_bytes(tail));
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
    let total = total.max(1);
    // Positions counted up with a wrap (no division per item).
    let mut position = first % total;
    bytes
        .chunks_exact(item_bytes.max(1))
        .fold(0u64, |acc, item| {
            let h = item_hash(position, item);
            position += 1;
            if position == total {
                position = 0;
            }
            acc.wrapping_add(h)
        })
}
