//! Integration tests of the ring planners and of the schedule validator.
//!
//! - `properties`: thousands of random unidirectional rings (homogeneous and
//!   heterogeneous costs, loose and tight loads, counts up to 10^12): valid, optimal,
//!   bound = naive slice bound, flows conserve items.
//! - `exhaustive`: a breadth-first search over tiny rings confirms optimality.
//! - `mutations`: broken schedules are rejected for the exact rule.
//! - `regression`: hand-computed schedules with exact times.
//! - `bidirectional`: System 6 against brute force, planners against the exhaustive
//!   optimum of tiny bidirectional rings.

#[path = "ring/bidirectional.rs"]
mod bidirectional;
#[path = "ring/common.rs"]
mod common;
#[path = "ring/exhaustive.rs"]
mod exhaustive;
#[path = "ring/mutations.rs"]
mod mutations;
#[path = "ring/properties.rs"]
mod properties;
#[path = "ring/regression.rs"]
mod regression;
