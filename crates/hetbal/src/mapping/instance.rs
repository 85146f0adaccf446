//! From a mapping to the ring redistribution instance that moves the items to it.

use std::fmt;

use super::{ring_costs, MappingError};
use crate::platform::Platform;
use crate::ring::{InstanceError, ProcessorSpec, RingInstance, RingInstanceSpec, RingKind};

/// Why a mapped ring is not a redistribution instance.
#[derive(Clone, Debug, PartialEq)]
pub enum RingInstanceError {
    /// The data size of an item is not finite and > 0.
    InvalidItemData {
        /// The value given.
        value: f64,
    },
    /// The ring has a single processor: nothing to redistribute on.
    SingleProcessor {
        /// Its name.
        name: String,
    },
    /// Targets or start loads do not have the length they should.
    LengthMismatch {
        /// `targets` (one per ring position) or `start_loads` (one per processor
        /// of the platform).
        field: &'static str,
        /// Its length.
        len: usize,
        /// The length expected.
        expected: usize,
    },
    /// Start loads put items on processors outside the ring.
    LoadsOutsideRing {
        /// Those processors and their items, in the platform's order.
        processors: Vec<(String, u64)>,
    },
    /// The ring's link costs (a missing route, a bad ring).
    Mapping(MappingError),
    /// The instance breaks the ring planner's rules (see [`RingInstance::from_spec`]).
    Instance(InstanceError),
}

impl fmt::Display for RingInstanceError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            RingInstanceError::InvalidItemData { value } => write!(
                f,
                "the data size of an item ({value}) must be finite and > 0"
            ),
            RingInstanceError::SingleProcessor { name } => write!(
                f,
                "the mapping uses one processor ({name}), there is no ring to redistribute on"
            ),
            RingInstanceError::LengthMismatch {
                field,
                len,
                expected,
            } => write!(f, "{len} {field} given where {expected} are needed"),
            RingInstanceError::LoadsOutsideRing { processors } => {
                let list: Vec<String> = processors
                    .iter()
                    .map(|(name, items)| format!("{name} ({items})"))
                    .collect();
                write!(
                    f,
                    "items on processors outside the chosen ring: {}; the ring instance moves data between ring members only",
                    list.join(", ")
                )
            }
            RingInstanceError::Mapping(e) => write!(f, "{e}"),
            RingInstanceError::Instance(e) => write!(
                f,
                "the mapped ring is not a valid redistribution instance: {e}"
            ),
        }
    }
}

impl std::error::Error for RingInstanceError {}

/// The bidirectional ring redistribution instance of a mapped ring: its
/// processors in ring order with their names, the items where `start_loads`
/// puts them (default: split evenly, the first processors of the ring getting
/// one more), `targets` as the targets, and link costs from the platform's
/// routes times `item_data` (the units of data in one item).
///
/// # Arguments
/// * `ring` - processor indices of the platform in ring order (a
///   [`Mapping`](super::Mapping)'s `ring`);
/// * `targets` - items each should hold, in ring order ([`item_counts`](super::item_counts));
/// * `start_loads` - items each processor of the platform holds now, in the
///   platform's order; every item must be on the ring.
///
/// # Errors
/// [`RingInstanceError`]: `item_data` not finite and > 0, a ring of one
/// processor, lengths that do not fit, items outside the ring, a missing route,
/// or an instance the ring planner refuses (a processor with no item before or
/// after).
///
/// # Complexity
/// O(p + q) for p processors on the platform and q on the ring.
///
/// ```
/// use hetbal::mapping::ring_instance;
/// use hetbal::platform::{Platform, Processor};
/// let p = Platform::from_matrix(
///     vec![Processor::new("A", 1.0), Processor::new("B", 1.0), Processor::new("C", 1.0)],
///     vec![vec![0.0, 1.0, 2.0], vec![3.0, 0.0, 4.0], vec![5.0, 6.0, 0.0]]).unwrap();
/// // The ring A -> C; A holds all 6 items, C should get 4; an item is 10 units of data.
/// let ring = ring_instance(&p, &[0, 2], &[2, 4], Some(&[5, 0, 1]), 10.0).unwrap();
/// assert_eq!(ring.names(), ["A", "C"]);
/// let spec = ring.to_spec();
/// assert_eq!(spec.processors[0].load, 5);
/// assert_eq!(spec.processors[1].target, 4);
/// assert_eq!(spec.processors[0].c_succ, 20.0); // A -> C costs 2 per unit of data
/// // Without start loads, the items are split evenly.
/// let even = ring_instance(&p, &[0, 2], &[2, 4], None, 10.0).unwrap();
/// assert_eq!(even.to_spec().processors[0].load, 3);
/// // Items on B, outside the ring, cannot be moved on it.
/// assert!(ring_instance(&p, &[0, 2], &[2, 4], Some(&[4, 1, 1]), 10.0).is_err());
/// ```
pub fn ring_instance(
    platform: &Platform,
    ring: &[usize],
    targets: &[u64],
    start_loads: Option<&[u64]>,
    item_data: f64,
) -> Result<RingInstance, RingInstanceError> {
    if !(item_data.is_finite() && item_data > 0.0) {
        return Err(RingInstanceError::InvalidItemData { value: item_data });
    }
    let q = ring.len();
    if q == 1 {
        return Err(RingInstanceError::SingleProcessor {
            name: platform.name(ring[0]).to_string(),
        });
    }
    let (c_succ, c_pred) = ring_costs(platform, ring).map_err(RingInstanceError::Mapping)?;
    let mismatch = |field, len, expected| RingInstanceError::LengthMismatch {
        field,
        len,
        expected,
    };
    if targets.len() != q {
        return Err(mismatch("targets", targets.len(), q));
    }
    let items: u64 = targets.iter().sum();
    let loads: Vec<u64> = match start_loads {
        None => (0..q as u64)
            .map(|k| items / q as u64 + u64::from(k < items % q as u64))
            .collect(),
        Some(all) => {
            if all.len() != platform.len() {
                return Err(mismatch("start_loads", all.len(), platform.len()));
            }
            let outside: Vec<(String, u64)> = (0..platform.len())
                .filter(|i| all[*i] > 0 && !ring.contains(i))
                .map(|i| (platform.name(i).to_string(), all[i]))
                .collect();
            if !outside.is_empty() {
                return Err(RingInstanceError::LoadsOutsideRing {
                    processors: outside,
                });
            }
            ring.iter().map(|&i| all[i]).collect()
        }
    };
    let processors = (0..q)
        .map(|k| ProcessorSpec {
            name: Some(platform.name(ring[k]).to_string()),
            load: loads[k],
            target: targets[k],
            c_succ: c_succ[k] * item_data,
            c_pred: Some(c_pred[k] * item_data),
            l_succ: 0.0,
            l_pred: 0.0,
        })
        .collect();
    RingInstance::from_spec(RingInstanceSpec {
        ring: RingKind::Bidirectional,
        processors,
        path: false,
    })
    .map_err(RingInstanceError::Instance)
}
