//! A small deterministic generator (xorshift64) for tests and benchmarks, so that
//! every run draws the same instances. Shared through `#[path]`.
#![allow(dead_code)] // each target uses part of it

/// xorshift64 state (never 0).
pub struct Rng(pub u64);

impl Rng {
    /// The next 64 random bits.
    pub fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }

    /// A value in `0..k`.
    pub fn below(&mut self, k: u64) -> u64 {
        self.next() % k
    }

    /// A value in `[lo, hi)`.
    pub fn uniform(&mut self, lo: f64, hi: f64) -> f64 {
        lo + (hi - lo) * (self.next() >> 11) as f64 / (1u64 << 53) as f64
    }
}
