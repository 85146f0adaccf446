//! Why a partition, or a move between partitions, could not be computed.

use std::fmt;

/// Why a partition could not be computed: every variant names the argument and,
/// where there is one, the position that is wrong.
#[derive(Clone, Debug, PartialEq)]
pub enum PartitionError {
    /// `seconds_per_unit` is empty.
    NoProcessors,
    /// A processor's seconds per unit of weight is zero, negative, NaN or
    /// infinite.
    InvalidSpeed {
        /// Index of the processor.
        index: usize,
        /// The value given.
        value: f64,
    },
    /// A weight is negative, NaN or infinite.
    InvalidWeight {
        /// Index of the item.
        index: usize,
        /// The value given (integer weights converted for the message).
        value: f64,
    },
    /// The weights add up to more than `u64::MAX` (integer weights) or to
    /// infinity (f64 weights): the sum is counted up to this item.
    WeightOverflow {
        /// Index of the item at which the sum overflowed.
        index: usize,
    },
    /// The sizes add up to more than `u64::MAX` bytes.
    SizeOverflow {
        /// Index of the item at which the sum overflowed.
        index: usize,
    },
    /// A list does not have the length it must have.
    Length {
        /// The argument: `current`, `sizes`, `new`, `c_succ` or `c_pred`.
        argument: &'static str,
        /// The length it must have.
        expected: usize,
        /// The length given.
        got: usize,
    },
    /// A list of cuts does not start at 0, decrease somewhere, or does not end
    /// at the number of items.
    InvalidCuts {
        /// The argument: `current` or `new`.
        argument: &'static str,
        /// The position in the list that breaks the rule.
        index: usize,
        /// What is wrong, in words.
        reason: String,
    },
    /// The tolerance is negative, NaN or infinite.
    InvalidTolerance(f64),
    /// A link cost (seconds per byte) is negative, NaN or infinite.
    InvalidCost {
        /// The argument: `c_succ` or `c_pred`.
        argument: &'static str,
        /// The link's index (its sender).
        index: usize,
        /// The value given.
        value: f64,
    },
    /// A time would be infinite: a processor's time, a bottleneck or a
    /// makespan overflows f64 (huge weights times huge seconds per unit).
    TimeOverflow {
        /// What overflowed, in words.
        what: String,
    },
    /// More processors than [`order_processors`](super::order_processors)
    /// searches exhaustively, or another size limit.
    Limit {
        /// What is too large, in words.
        what: String,
    },
}

impl fmt::Display for PartitionError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            PartitionError::NoProcessors => {
                f.write_str("seconds_per_unit is empty: there are no processors to partition over")
            }
            PartitionError::InvalidSpeed { index, value } => write!(
                f,
                "seconds_per_unit[{index}] = {}: seconds per unit of weight must be finite and > 0",
                crate::shown(*value)
            ),
            PartitionError::InvalidWeight { index, value } => write!(
                f,
                "weights[{index}] = {}: a weight must be finite and >= 0",
                crate::shown(*value)
            ),
            PartitionError::WeightOverflow { index } => write!(
                f,
                "the weights overflow at weights[{index}]: their sum must fit in the weights' type (u64, or a finite f64)"
            ),
            PartitionError::SizeOverflow { index } => write!(
                f,
                "the sizes overflow at sizes[{index}]: their sum must fit in u64 bytes"
            ),
            PartitionError::Length {
                argument,
                expected,
                got,
            } => write!(f, "{argument} has {got} entries; it must have {expected}"),
            PartitionError::InvalidCuts {
                argument,
                index,
                reason,
            } => write!(f, "{argument}[{index}]: {reason}"),
            PartitionError::InvalidTolerance(t) => {
                write!(f, "tolerance = {t}: it must be finite and >= 0")
            }
            PartitionError::InvalidCost {
                argument,
                index,
                value,
            } => write!(
                f,
                "{argument}[{index}] = {value}: a link cost (seconds per byte) must be finite and >= 0"
            ),
            PartitionError::TimeOverflow { what } => {
                write!(f, "{what} overflows: the times must be finite f64 values; measure time in a larger unit, so that the seconds per unit are smaller numbers")
            }
            PartitionError::Limit { what } => f.write_str(what),
        }
    }
}

impl std::error::Error for PartitionError {}

/// Checks `seconds_per_unit`: at least one processor, each finite and > 0.
pub(crate) fn check_speeds(seconds_per_unit: &[f64]) -> Result<(), PartitionError> {
    if seconds_per_unit.is_empty() {
        return Err(PartitionError::NoProcessors);
    }
    match seconds_per_unit
        .iter()
        .position(|s| !(s.is_finite() && *s > 0.0))
    {
        Some(index) => Err(PartitionError::InvalidSpeed {
            index,
            value: seconds_per_unit[index],
        }),
        None => Ok(()),
    }
}

/// Checks a list of cuts: `p + 1` entries, the first 0, non-decreasing, the last
/// `n`.
pub(crate) fn check_cuts(
    argument: &'static str,
    cuts: &[u64],
    processors: usize,
    items: u64,
) -> Result<(), PartitionError> {
    if cuts.len() != processors + 1 {
        return Err(PartitionError::Length {
            argument,
            expected: processors + 1,
            got: cuts.len(),
        });
    }
    let bad = |index: usize, reason: String| PartitionError::InvalidCuts {
        argument,
        index,
        reason,
    };
    if cuts[0] != 0 {
        return Err(bad(
            0,
            format!("the first cut is {}; it must be 0", cuts[0]),
        ));
    }
    if let Some(i) = cuts.windows(2).position(|w| w[1] < w[0]) {
        return Err(bad(
            i + 1,
            format!(
                "the cuts decrease ({} after {}); they must be non-decreasing",
                cuts[i + 1],
                cuts[i]
            ),
        ));
    }
    let last = cuts[processors];
    if last != items {
        return Err(bad(
            processors,
            format!("the last cut is {last}; it must be the number of items, {items}"),
        ));
    }
    Ok(())
}
