//! Weighted partitions: items of unequal cost cut into contiguous ranges, one per
//! processor, for processors of different speeds.
//!
//! Items `0..n` keep their global order (cells along a space-filling curve, rows of
//! a sparse matrix, particles sorted by cell) and have weights `w_i >= 0` (their
//! cost: particles, non-zeros, refinement level). Processors `0..p` keep their
//! order too (ranks along a ring or a chain) and take `seconds_per_unit[j] > 0`
//! seconds per unit of weight. A partition is given by its `cuts`, `p + 1` item
//! indices `0 = cuts[0] <= cuts[1] <= ... <= cuts[p] = n`: processor `j` holds the
//! items `cuts[j]..cuts[j+1]` (possibly none), and its time is
//! `seconds_per_unit[j] * W(cuts[j]..cuts[j+1])`. The bottleneck is the largest of
//! these times, what one iteration of an SPMD code waits for.
//!
//! - [`partition`]: the partition of least bottleneck (chains-on-chains
//!   partitioning for heterogeneous processors, exact), with a certified lower
//!   bound;
//! - [`partition_with_movement`]: among the partitions within `1 + tolerance` of
//!   that optimum, one that moves the fewest bytes away from the current cuts
//!   (exact);
//! - [`order_processors`]: a processor order for when the order is free (a ring
//!   being mapped), a heuristic measured against exhaustive search;
//! - [`move_schedule`]: the timed moves of whole, variable-size items from the
//!   current cuts to new ones along the chain, checked by [`validate_moves`] and
//!   compared with a lower bound;
//! - [`choose_tolerance`]: how much to move, the tolerance whose moves and
//!   bottleneck end the iterations left soonest;
//! - [`equal_weight_cuts`] and [`speed_share_cuts`]: the cuts other balancers make
//!   (p4est's equal weights, Zoltan HSFC's and AMReX's greedy shares), for
//!   comparison.
//!
//! ```
//! use hetbal::partition::partition;
//!
//! // Six cells with 1 to 6 particles; P0 is twice as fast as P1.
//! let p = partition(&[1u64, 2, 3, 4, 5, 6], &[1.0, 2.0]).unwrap();
//! assert_eq!(p.cuts, vec![0, 5, 6]); // P0: 1+...+5 = 15 units in 15 s, P1: 6 in 12 s
//! assert_eq!(p.bottleneck, 15.0);
//! assert!(p.optimal);
//! ```

mod error;
mod exact;
mod movement;
mod moves;
mod order;
mod prefix;
mod report;
mod shares;
mod sources;
mod tradeoff;

pub use error::PartitionError;
pub use exact::{partition, Partition};
pub use movement::{partition_with_movement, MovingPartition};
pub use moves::{move_schedule, validate_moves, ItemMove, MovePlan, MoveViolation};
pub use order::{exhaustive_order, order_processors, ProcessorOrder};
pub use prefix::Weight;
pub(crate) use prefix::{Prefix, Sums};
pub use report::PartitionDocument;
pub use shares::{bottleneck_of, equal_weight_cuts, speed_share_cuts};
pub use tradeoff::{choose_tolerance, Candidate, Rebalance, TOLERANCES};

#[cfg(test)]
mod tests;
