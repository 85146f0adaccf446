//! Item weights and their prefix sums: the one pass over the weights that every
//! partition makes.

use super::PartitionError;

mod sealed {
    pub trait Sealed {}
}

/// An item weight: `u64`, `u32`, `i64`, `i32` (each >= 0), `f64` or `f32` (each
/// finite and >= 0). Integer weights are summed exactly in `u64` (an overflow is
/// an error, never a wrap); float weights are summed in `f64`.
///
/// Sealed: the partition functions are written for exactly these types.
pub trait Weight: Copy + sealed::Sealed {
    #[doc(hidden)]
    fn prefix_sums(weights: &[Self]) -> Result<Prefix, PartitionError>;
}

/// Prefix sums of the weights, `n + 1` entries starting at 0: integers summed
/// exactly, or floats.
#[doc(hidden)]
#[derive(Clone, Debug)]
pub enum Prefix {
    /// Sums of integer weights.
    Int(IntSums),
    /// Sums of float weights.
    Float(FloatSums),
}

/// What the partition algorithms need of prefix sums: the weight of a range as
/// an f64 that never decreases when the range grows.
pub(crate) trait Sums {
    /// The number of items.
    fn items(&self) -> usize;
    /// The weight of items `a..b` (`a <= b`), as f64: non-decreasing in `b` and
    /// non-increasing in `a`.
    fn weight(&self, a: usize, b: usize) -> f64;
}

/// Exact prefix sums of integer weights.
#[doc(hidden)]
#[derive(Clone, Debug)]
pub struct IntSums(pub Vec<u64>);

/// Prefix sums of float weights.
#[doc(hidden)]
#[derive(Clone, Debug)]
pub struct FloatSums(pub Vec<f64>);

impl Sums for IntSums {
    fn items(&self) -> usize {
        self.0.len() - 1
    }
    /// The exact integer weight, rounded once to f64 (monotone).
    #[inline]
    fn weight(&self, a: usize, b: usize) -> f64 {
        (self.0[b] - self.0[a]) as f64
    }
}

impl Sums for FloatSums {
    fn items(&self) -> usize {
        self.0.len() - 1
    }
    /// The difference of two prefix sums: monotone, since the sums never
    /// decrease and f64 subtraction is monotone in each argument.
    #[inline]
    fn weight(&self, a: usize, b: usize) -> f64 {
        self.0[b] - self.0[a]
    }
}

macro_rules! integer_weight {
    ($($t:ty),*) => {$(
        impl sealed::Sealed for $t {}
        impl Weight for $t {
            #[allow(unused_comparisons)]
            fn prefix_sums(weights: &[Self]) -> Result<Prefix, PartitionError> {
                let mut sums = Vec::with_capacity(weights.len() + 1);
                sums.push(0u64);
                let mut total = 0u64;
                for (index, &w) in weights.iter().enumerate() {
                    if w < 0 {
                        return Err(PartitionError::InvalidWeight { index, value: w as f64 });
                    }
                    total = total
                        .checked_add(w as u64)
                        .ok_or(PartitionError::WeightOverflow { index })?;
                    sums.push(total);
                }
                Ok(Prefix::Int(IntSums(sums)))
            }
        }
    )*};
}
integer_weight!(u64, u32, i64, i32);

macro_rules! float_weight {
    ($($t:ty),*) => {$(
        impl sealed::Sealed for $t {}
        impl Weight for $t {
            fn prefix_sums(weights: &[Self]) -> Result<Prefix, PartitionError> {
                let mut sums = Vec::with_capacity(weights.len() + 1);
                sums.push(0.0f64);
                let mut total = 0.0f64;
                // One pass: a negative weight or a NaN clears `ok`, an
                // infinity shows in the total.
                let mut ok = true;
                sums.extend(weights.iter().map(|&w| {
                    let w = w as f64;
                    ok &= w >= 0.0;
                    total += w;
                    total
                }));
                if !ok || !total.is_finite() {
                    let index = weights
                        .iter()
                        .position(|&w| (w as f64).is_nan() || w < 0.0 || (w as f64).is_infinite());
                    return Err(match index {
                        Some(index) => PartitionError::InvalidWeight {
                            index,
                            value: weights[index] as f64,
                        },
                        None => PartitionError::WeightOverflow {
                            index: sums.iter().position(|s| s.is_infinite()).unwrap_or(1) - 1,
                        },
                    });
                }
                Ok(Prefix::Float(FloatSums(sums)))
            }
        }
    )*};
}
float_weight!(f64, f32);

/// Prefix sums of item sizes in bytes (`None`: 1 byte each), checked for
/// overflow.
pub(crate) fn size_sums(sizes: Option<&[u64]>, items: usize) -> Result<Vec<u64>, PartitionError> {
    match sizes {
        None => Ok((0..=items as u64).collect()),
        Some(sizes) => {
            if sizes.len() != items {
                return Err(PartitionError::Length {
                    argument: "sizes",
                    expected: items,
                    got: sizes.len(),
                });
            }
            let mut sums = Vec::with_capacity(items + 1);
            sums.push(0u64);
            let mut total = 0u64;
            for (index, &z) in sizes.iter().enumerate() {
                total = total
                    .checked_add(z)
                    .ok_or(PartitionError::SizeOverflow { index })?;
                sums.push(total);
            }
            Ok(sums)
        }
    }
}
