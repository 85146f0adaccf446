//! # hetbal
//!
//! Load balancing and data redistribution for data-parallel (SPMD) applications on
//! heterogeneous processors.
//!
//! Data flows one way: a validated instance ([`ring::RingInstance`]) goes to a
//! planner ([`ring::plan`]), which returns a plan (flows, lower bound) with a timed
//! [`Schedule`] of [`Transfer`]s; every schedule is checked by the one validator,
//! [`validate`]. [`balance::balanced_targets`] computes how many items each
//! processor should hold given its speed.
//!
//! ```
//! use hetbal::ring::{plan, RingInstance};
//! use hetbal::balance::balanced_targets;
//!
//! // Three processors; P0 is twice as fast as the others (time per item 1 vs 2).
//! let targets = balanced_targets(12, &[1.0, 2.0, 2.0]).unwrap().targets;
//! assert_eq!(targets, vec![6, 3, 3]);
//!
//! // They hold 2, 2 and 8 items; links cost 1.0 per item. Move the data.
//! let ring = RingInstance::unidirectional(&[2, 2, 8], &targets, &[1.0; 3]).unwrap();
//! let plan = plan(&ring, None).unwrap();
//! assert!(plan.optimal);
//! assert_eq!(plan.makespan, 5.0); // P2 sends 5 items to P0, P0 keeps 4 of them
//! ```
#![deny(missing_docs)]
#![forbid(unsafe_code)]

pub mod balance;
pub mod document;
pub mod experiment;
pub mod functional;
pub mod genblock;
pub mod iterative;
pub mod mapping;
pub mod pacing;
pub mod partition;
pub mod platform;
pub mod random;
pub mod ring;
pub mod scatter;

pub use ring::{validate, Schedule, ScheduleReport, Transfer, Violation, ViolationRule};

/// The Rust examples of the README and of the user guide (docs/guide), compiled
/// and run as doctests of this crate: a page whose example breaks fails
/// `cargo test --doc`. (The guide's MPI page is a doctest of hetbal-mpi.)
#[cfg(doctest)]
mod guide {
    #[doc = include_str!("../../../README.md")]
    mod readme {}
    #[doc = include_str!("../../../docs/guide/src/partition.md")]
    mod partition {}
    #[doc = include_str!("../../../docs/guide/src/ring.md")]
    mod ring {}
    #[doc = include_str!("../../../docs/guide/src/scatter.md")]
    mod scatter {}
    #[doc = include_str!("../../../docs/guide/src/genblock.md")]
    mod genblock {}
    #[doc = include_str!("../../../docs/guide/src/mapping.md")]
    mod mapping {}
    #[doc = include_str!("../../../docs/guide/src/deciding.md")]
    mod deciding {}
    #[doc = include_str!("../../../docs/guide/src/checking.md")]
    mod checking {}
}

/// A number in an error message as a user reads it: the shortest form that
/// reads back to the same f64, in scientific notation when it is huge or tiny
/// (`1e308`, not 309 digits).
pub(crate) fn shown(x: f64) -> String {
    if x != 0.0 && x.is_finite() && !(1e-6..1e16).contains(&x.abs()) {
        format!("{x:e}")
    } else {
        format!("{x}")
    }
}
