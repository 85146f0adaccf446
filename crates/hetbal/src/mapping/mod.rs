//! Mapping an iterative (stencil) application on a ring of processors (model.md
//! section 3, slides "Iterative algorithms"): choose `q` of the `p` processors,
//! order them in a ring and share the work `D_w` so as to minimise the step time
//! `T_step = max_i alpha_i*D_w*w_i + D_c*(c_{i,pred(i)} + c_{i,succ(i)})`.
//!
//! * [`t_step`] evaluates a ring with given shares; [`closed_form_shares`] gives
//!   the slides' "all end together" shares (refusing a ring that would need a
//!   negative share); [`optimal_shares`] the best non-negative shares of a ring;
//!   [`item_counts`] whole item counts; [`homogeneous_t_step`] the closed form of a
//!   homogeneous network.
//! * When every processor of a ring ends together,
//!   `T_step = (D_w + D_c * W) / sum_i 1/w_i` where `W` is the weight of the ring as a
//!   cycle on `d_ij = c_ij/w_i + c_ji/w_j`: for a fixed set of processors the best
//!   ring is a minimum Hamiltonian cycle ([`held_karp`]; beyond its range
//!   [`improve_cycle`]: 2-opt, Or-opt and [`lin_kernighan`] chains).
//! * [`map`] chooses processors and ring with one of three [`Method`]s.
//! * Shared links: [`shared_step`] and [`shared_step_on`] evaluate a ring whose
//!   exchanges share links max-min fairly; [`map_shared`] runs the slides' H1
//!   (blind to sharing) and H2 (aware of it, routing along widest paths of the
//!   bandwidth left when the platform has a network graph).
//! * [`ring_instance`] turns a mapped ring into the redistribution instance that
//!   moves the items to their counts (for [`crate::ring::plan`]), from the start
//!   loads a user gives as text ([`parse_start_loads`]); [`Mapping::document`]
//!   is the mapping plan of formats.md.
//!
//! ```
//! use hetbal::mapping::{map, MapOptions, Method};
//! use hetbal::platform::{Platform, Processor};
//! // Three processors on a homogeneous network (0.01 per unit of data).
//! let c = vec![vec![0.0, 0.01, 0.01], vec![0.01, 0.0, 0.01], vec![0.01, 0.01, 0.0]];
//! let p = Platform::from_matrix(
//!     vec![Processor::new("A", 1.0), Processor::new("B", 2.0), Processor::new("C", 2.0)], c,
//! ).unwrap();
//! let m = map(&p, &MapOptions::new(100.0, 1.0, Method::Exact)).unwrap();
//! assert_eq!(m.ring.len(), 3);
//! assert!((m.t_step - (100.0 / 2.0 + 2.0 * 0.01)).abs() < 1e-9);
//! ```

mod cycle;
mod instance;
mod select;
mod shared;
mod shares;
mod start_loads;

pub use cycle::{cycle_weight, held_karp, improve_cycle, lin_kernighan, Cycle, HELD_KARP_MAX};
pub use instance::{ring_instance, RingInstanceError};
pub use select::{map, ring_weights, MapOptions, Mapping, MappingPlan, Method, EXACT_MAX};
pub use shared::{
    fixed_routes, map_shared, map_shared_with, shared_ring_costs, shared_ring_costs_on,
    shared_step, shared_step_on, RingRoutes, Routing, SharedComparison,
};
pub use shares::{
    closed_form_shares, homogeneous_t_step, item_counts, optimal_shares, ring_costs, t_step, Step,
};
pub use start_loads::{parse_start_loads, StartLoadsError};

use std::fmt;

/// Why a mapping could not be computed.
#[derive(Clone, Debug, PartialEq)]
pub enum MappingError {
    /// The total work `D_w` is not finite and > 0.
    InvalidWork {
        /// The value given.
        value: f64,
    },
    /// The border size `D_c` is not finite and >= 0.
    InvalidBorder {
        /// The value given.
        value: f64,
    },
    /// No processors to map on.
    NoProcessors,
    /// A ring with no processor.
    EmptyRing,
    /// A ring names a processor index beyond the platform.
    UnknownProcessor {
        /// The index.
        index: usize,
    },
    /// A ring visits a processor twice.
    RepeatedProcessor {
        /// The processor.
        name: String,
    },
    /// Shares and ring differ in length.
    SharesMismatch {
        /// Number of shares.
        shares: usize,
        /// Number of processors in the ring.
        ring: usize,
    },
    /// A processor's share would be negative: its border exchanges alone outlast the
    /// step time of "all end together".
    NegativeShare {
        /// The processor.
        name: String,
        /// The share the closed form gives.
        share: f64,
    },
    /// The ring uses a pair of processors with no route.
    NoRoute {
        /// Source.
        from: String,
        /// Destination.
        to: String,
    },
    /// No ring of the size asked avoids pairs without a route.
    NoRing {
        /// The ring size asked (or `None`: any size).
        processors: Option<usize>,
    },
    /// The number of processors asked is 0 or more than the platform has.
    BadProcessorCount {
        /// Asked.
        asked: usize,
        /// Available.
        available: usize,
    },
    /// The exact method is limited in size.
    TooLargeForExact {
        /// Processors of the platform.
        processors: usize,
        /// The limit.
        max: usize,
    },
    /// A homogeneous cost or time per unit of work that is not valid.
    InvalidCost,
    /// Routes were to be chosen in the network graph, and the platform has none.
    NoNetwork,
    /// Routes given for a ring do not fit it.
    BadRoutes {
        /// What is wrong.
        reason: String,
    },
    /// The step time would overflow f64: the work or the border exchanges of
    /// a processor, at its costs, beyond the largest f64.
    TimesOverflow {
        /// The processor whose times overflow.
        processor: String,
    },
}

impl fmt::Display for MappingError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        use MappingError::*;
        match self {
            InvalidWork { value } => write!(f, "the work D_w = {value} must be finite and > 0"),
            InvalidBorder { value } => {
                write!(f, "the border size D_c = {value} must be finite and >= 0")
            }
            NoProcessors => f.write_str("no processors to map on"),
            EmptyRing => f.write_str("the ring has no processor"),
            UnknownProcessor { index } => {
                write!(f, "processor index {index} is not on the platform")
            }
            RepeatedProcessor { name } => {
                write!(f, "processor {name:?} appears twice in the ring")
            }
            SharesMismatch { shares, ring } => write!(
                f,
                "{shares} shares for a ring of {ring} processors: give one per processor"
            ),
            NegativeShare { name, share } => write!(
                f,
                "processor {name:?} would get a negative share ({share}): its border exchanges alone outlast the step, the ring is not valid as is"
            ),
            NoRoute { from, to } => {
                write!(f, "the ring needs a route from {from:?} to {to:?} and the platform has none")
            }
            NoRing { processors: Some(q) } => write!(
                f,
                "no ring of {q} processors avoids the pairs of processors without a route"
            ),
            NoRing { processors: None } => {
                f.write_str("no ring avoids the pairs of processors without a route")
            }
            BadProcessorCount { asked, available } => write!(
                f,
                "{asked} processors asked: choose from 1 to {available} (the platform has {available})"
            ),
            TooLargeForExact { processors, max } => write!(
                f,
                "the exact method handles at most {max} processors, the platform has {processors}: use the local method"
            ),
            InvalidCost => f.write_str(
                "every time per unit of work must be finite and > 0 and the link cost finite and >= 0",
            ),
            NoNetwork => f.write_str(
                "choosing routes needs the platform's network graph (link ends and routers), and this platform gives only routes",
            ),
            BadRoutes { reason } => write!(f, "ring routes: {reason}"),
            TimesOverflow { processor } => write!(
                f,
                "processor {processor}: the step time overflows a 64-bit float (the work D_w times its w, or the border D_c times its link costs); measure time in a larger unit, so that w and the costs are smaller numbers"
            ),
        }
    }
}

impl std::error::Error for MappingError {}
