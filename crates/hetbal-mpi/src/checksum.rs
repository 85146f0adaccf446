//! An order-aware checksum of distributed items: the wrapping sum over all items of
//! a hash of (global position, bytes). Moving items between ranks keeps the sum only
//! when every item arrives intact at its position; summing per rank and reducing
//! with a wrapping sum gives the global value without gathering anything.

/// Hash of one item at a global position: the bytes accumulated 64 at a time
/// in eight 64-bit lanes (each lane adds the product of the two 32-bit halves
/// of its word mixed with a key that changes with every 64 bytes, and its
/// neighbour lane's raw word: the accumulation of XXH3), the lanes, the tail,
/// the position and the length then folded by multiply-rotate rounds and a final
/// mix (splitmix64), so that sums of hashes do not cancel by accident. A flipped
/// bit, a byte moved within the item or an item moved to another position
/// changes it (with probability 1 - 2^-64 for random changes: a check against
/// accidents, not against an adversary).
///
/// The same value on every machine: on x86-64 processors with AVX2 the
/// accumulation runs in 256-bit registers (about 4 bytes per cycle), elsewhere
/// in plain 64-bit arithmetic, bit for bit the same.
///
/// Complexity: O(item size).
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
    let whole = bytes.len() / STRIPE * STRIPE;
    let (stripes, rest) = bytes.split_at(whole);
    let acc = accumulate(stripes);
    let mut h = mix(
        position as u64,
        (position >> 64) as u64 ^ bytes.len() as u64,
    );
    for lane in acc {
        h = mix(h, lane);
    }
    let mut words = rest.chunks_exact(8);
    for w in &mut words {
        h = mix(h, u64::from_le_bytes(w.try_into().expect("8 bytes")));
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

/// Bytes accumulated at a time, in [`LANES`] lanes of 64 bits.
const STRIPE: usize = 64;
/// Lanes of the accumulation.
const LANES: usize = 8;
/// The lanes' keys for the first 64 bytes (and their starting values).
const KEYS: [u64; LANES] = [
    0xbe4b_a423_396c_feb8,
    0x1cad_21f7_2c81_017c,
    0xdb97_9083_e96d_d4de,
    0x1f10_0bb8_2ade_9ffc,
    0x78e5_c0cc_4ee6_79cb,
    0xbe3e_d6a1_a3bf_9a44,
    0x8172_5a4e_8f97_0bd4,
    0x5f5d_7a01_a4dd_19d3,
];
/// What the keys gain from one 64 bytes to the next.
const KEY_STEP: u64 = 0x9e37_79b9_7f4a_7c15;

/// The eight lanes after accumulating `stripes` (a multiple of 64 bytes): for
/// the 64 bytes number s, word j (little-endian), with `k = word_j ^ (KEYS[j] +
/// s * KEY_STEP)`, lane j adds `low32(k) * high32(k) + word_(j xor 1)`.
///
/// Complexity: O(stripes.len()).
fn accumulate(stripes: &[u8]) -> [u64; LANES] {
    #[cfg(target_arch = "x86_64")]
    {
        if std::arch::is_x86_feature_detected!("avx2") {
            // SAFETY: the processor has AVX2 (checked just above).
            return unsafe { accumulate_avx2(stripes) };
        }
    }
    accumulate_portable(stripes)
}

/// [`accumulate`] in 64-bit arithmetic.
fn accumulate_portable(stripes: &[u8]) -> [u64; LANES] {
    let mut acc = KEYS;
    let mut offset = 0u64;
    for stripe in stripes.chunks_exact(STRIPE) {
        let word = |j: usize| u64::from_le_bytes(stripe[8 * j..8 * j + 8].try_into().expect("8"));
        for (j, lane) in acc.iter_mut().enumerate() {
            let k = word(j) ^ KEYS[j].wrapping_add(offset);
            *lane = lane
                .wrapping_add((k & 0xffff_ffff) * (k >> 32))
                .wrapping_add(word(j ^ 1));
        }
        offset = offset.wrapping_add(KEY_STEP);
    }
    acc
}

/// [`accumulate`] in AVX2 registers: lanes 0-3 and 4-7 in two of them.
///
/// # Safety
/// The processor must have AVX2.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
unsafe fn accumulate_avx2(stripes: &[u8]) -> [u64; LANES] {
    use std::arch::x86_64::*;
    let mut acc = KEYS;
    // SAFETY: every load and store below reads or writes 32 bytes within
    // `stripes` (a chunk of 64) or `acc`/`KEYS` (64 bytes); unaligned
    // intrinsics are used throughout.
    unsafe {
        let load = |p: *const u64| _mm256_loadu_si256(p.cast::<__m256i>());
        let (mut a0, mut a1) = (load(acc.as_ptr()), load(acc.as_ptr().add(4)));
        let (mut k0, mut k1) = (load(KEYS.as_ptr()), load(KEYS.as_ptr().add(4)));
        let step = _mm256_set1_epi64x(KEY_STEP as i64);
        for stripe in stripes.chunks_exact(STRIPE) {
            let p = stripe.as_ptr().cast::<__m256i>();
            let (w0, w1) = (_mm256_loadu_si256(p), _mm256_loadu_si256(p.add(1)));
            let (x0, x1) = (_mm256_xor_si256(w0, k0), _mm256_xor_si256(w1, k1));
            let p0 = _mm256_mul_epu32(x0, _mm256_srli_epi64::<32>(x0));
            let p1 = _mm256_mul_epu32(x1, _mm256_srli_epi64::<32>(x1));
            // Words j xor 1: the two 64-bit halves of each 128 bits swapped.
            let s0 = _mm256_shuffle_epi32::<0b0100_1110>(w0);
            let s1 = _mm256_shuffle_epi32::<0b0100_1110>(w1);
            a0 = _mm256_add_epi64(a0, _mm256_add_epi64(p0, s0));
            a1 = _mm256_add_epi64(a1, _mm256_add_epi64(p1, s1));
            k0 = _mm256_add_epi64(k0, step);
            k1 = _mm256_add_epi64(k1, step);
        }
        _mm256_storeu_si256(acc.as_mut_ptr().cast::<__m256i>(), a0);
        _mm256_storeu_si256(acc.as_mut_ptr().add(4).cast::<__m256i>(), a1);
    }
    acc
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

#[cfg(test)]
mod tests {
    use super::*;
    use hetbal::random::SplitMix64;

    /// The accumulation gives the same lanes on every path (AVX2 when the
    /// processor has it), for every length of 0 to 40 stripes.
    #[test]
    fn accumulation_is_the_same_everywhere() {
        let mut rng = SplitMix64::new(7);
        let bytes: Vec<u8> = (0..STRIPE * 40).map(|_| rng.next_u64() as u8).collect();
        for stripes in 0..=40 {
            let part = &bytes[..stripes * STRIPE];
            assert_eq!(
                accumulate(part),
                accumulate_portable(part),
                "{stripes} stripes"
            );
        }
    }

    /// A flipped bit anywhere, two 64-byte stripes swapped, or the item at
    /// another position changes the hash.
    #[test]
    fn changes_change_the_hash() {
        let mut rng = SplitMix64::new(11);
        let item: Vec<u8> = (0..1000).map(|_| rng.next_u64() as u8).collect();
        let h = item_hash(42, &item);
        for bit in (0..item.len() * 8).step_by(7) {
            let mut copy = item.clone();
            copy[bit / 8] ^= 1 << (bit % 8);
            assert_ne!(item_hash(42, &copy), h, "bit {bit}");
        }
        let mut swapped = item.clone();
        swapped[..64].copy_from_slice(&item[64..128]);
        swapped[64..128].copy_from_slice(&item[..64]);
        assert_ne!(item_hash(42, &swapped), h);
        assert_ne!(item_hash(43, &item), h);
        assert_ne!(item_hash(42 + (1 << 64), &item), h);
    }
}
