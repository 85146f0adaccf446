//! The weighted partition document (formats.md, "Weighted partition").

use serde::{Deserialize, Serialize};

use super::read::{parse_document, PARTITION};
use super::{DocumentError, Format};

/// A weighted partition problem as written in a document: the items' weights
/// (or none, when they come from an array file), the processors' seconds per
/// unit of weight, and optionally the current cuts, the items' sizes in bytes
/// and the tolerance of the least-moving partition.
///
/// Weights in JSON are read as f64 numbers (integers up to 2^53 exactly);
/// integer weights beyond that are given as a `.npy` or raw `u64` array
/// ([`parse_array`](super::parse_array)). The values are checked by
/// [`partition`](crate::partition::partition), which names the bad entry.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PartitionInstance {
    /// The items' weights in their global order (absent: given elsewhere).
    #[serde(default)]
    pub weights: Option<Vec<f64>>,
    /// Seconds per unit of weight of each processor, in processor order.
    pub seconds_per_unit: Vec<f64>,
    /// The current cuts (`p + 1` item indices from 0 to n).
    #[serde(default)]
    pub current: Option<Vec<u64>>,
    /// Each item's size in bytes (default 1 each).
    #[serde(default)]
    pub sizes: Option<Vec<u64>>,
    /// How far above the optimal bottleneck the least-moving partition may be
    /// (0.05: 5 %; default 0). Needs `current`.
    #[serde(default)]
    pub tolerance: Option<f64>,
    /// Seconds per byte from each processor to the next, to plan the moves
    /// (needs `current`).
    #[serde(default)]
    pub c_succ: Option<Vec<f64>>,
    /// Seconds per byte from each processor to the previous one (default:
    /// `c_succ`).
    #[serde(default)]
    pub c_pred: Option<Vec<f64>>,
}

/// Reads a weighted partition document (JSON or TOML).
///
/// # Errors
/// [`DocumentError`] naming the field and line: an empty document, a missing
/// `seconds_per_unit`, an unknown field, a value of the wrong type. The numbers
/// themselves are checked by the partition functions.
///
/// # Complexity
/// O(length of `text`).
///
/// # Example
/// ```
/// use hetbal::document::{parse_partition_instance, Format};
/// let doc = parse_partition_instance(
///     r#"{"weights": [1, 2, 3.5], "seconds_per_unit": [1, 2]}"#, Format::Json).unwrap();
/// assert_eq!(doc.weights, Some(vec![1.0, 2.0, 3.5]));
/// let bad = parse_partition_instance(r#"{"weights": [1, "x"], "seconds_per_unit": [1]}"#,
///     Format::Json).unwrap_err();
/// assert!(bad.to_string().starts_with("field `weights[1]`: invalid type"), "{bad}");
/// ```
pub fn parse_partition_instance(
    text: &str,
    format: Format,
) -> Result<PartitionInstance, DocumentError> {
    parse_document(text, format, PARTITION)
}
