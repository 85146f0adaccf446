//! The project's one pseudo-random generator, SplitMix64: the same seed gives the
//! same draws on every machine, so generated platforms, speed changes, experiments
//! and tests replay exactly.
//!
//! ```
//! use hetbal::random::SplitMix64;
//!
//! let mut a = SplitMix64::new(7);
//! let mut b = SplitMix64::new(7);
//! assert_eq!(a.next_u64(), b.next_u64());
//! let x = a.unit();
//! assert!((0.0..1.0).contains(&x));
//! assert!(a.below(10) < 10);
//! ```

/// SplitMix64 (Steele, Lea & Flood, 2014): 64 bits of state, one multiply-xorshift
/// chain per draw. Any seed is fine, 0 included. Not for cryptography.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SplitMix64(pub u64);

impl SplitMix64 {
    /// A generator whose draws are fixed by `seed`.
    pub fn new(seed: u64) -> Self {
        SplitMix64(seed)
    }

    /// The next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// Uniform in `[0, 1)`, with 53 random bits.
    pub fn unit(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 / (1u64 << 53) as f64
    }

    /// Uniform in `[lo, hi)` (`lo` when the two are equal).
    pub fn range(&mut self, (lo, hi): (f64, f64)) -> f64 {
        lo + (hi - lo) * self.unit()
    }

    /// Uniform in `0..n` (0 when `n` is 0), by reduction modulo `n`: the bias is
    /// below `n / 2^64`, far under anything an experiment can see.
    pub fn below(&mut self, n: usize) -> usize {
        self.below_u64(n as u64) as usize
    }

    /// Uniform in `0..n` for 64-bit counts (0 when `n` is 0).
    pub fn below_u64(&mut self, n: u64) -> u64 {
        self.next_u64() % n.max(1)
    }
}
