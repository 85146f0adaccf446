//! Data redistribution on processor rings (model.md section 1).
//!
//! Data flows one way: a validated instance ([`RingInstance`]) goes to the planner
//! dispatch, [`plan`], which picks the right planner for the ring, checks the
//! timed [`Schedule`] it makes with the one validator, [`validate`], compares its
//! makespan with the ring's [`lower_bound`] and returns a [`RingPlan`] carrying the
//! validator's [`ScheduleReport`].
//!
//! * instances: [`RingInstance`], [`RingInstanceSpec`];
//! * prefix sums and flows: [`prefix_sums`], [`unidirectional_flows`],
//!   [`circulation_flows`], [`net_flows`];
//! * lower bounds: [`lower_bound`], [`unidirectional_lower_bound`],
//!   [`port_lower_bound`], [`homogeneous_bidirectional_bound`], [`slice_bound`], [`circulation_bound`],
//!   [`light_circulation`], and under start-ups [`startup_lower_bound`];
//! * planners: [`homogeneous_unidirectional`], [`asap_unidirectional`], [`batched_schedule`],
//!   [`block_schedule`], [`light_flows_schedule`], [`list_schedule`],
//!   [`step_schedule`], [`exact_schedule`], [`paper_algorithm3`]; under start-ups
//!   (model.md, "Start-ups") [`startup_schedule`], [`startup_exhaustive`], and
//!   [`retime_with_startups`] to time any plan under them;
//! * schedules and their validator: [`Schedule`], [`Transfer`], [`validate`];
//! * plans handed in: [`PlanDocument`], checked by [`verify`].

mod algorithm3;
mod bidirectional;
mod blocks;
mod bounds;
mod dispatch;
mod document;
mod exact;
mod flows;
mod instance;
mod messages;
mod retime;
mod schedule;
mod segments;
mod startup_bounds;
mod startup_exact;
mod unidirectional;
mod validator;
mod verify;

pub use algorithm3::paper_algorithm3;
pub(crate) use bidirectional::OrderedTime;
pub use bidirectional::{
    circulation_flows, is_light, light_flows_schedule, list_schedule, reverse_schedule,
    reversed_ring, step_schedule,
};
pub use blocks::block_schedule;
pub use bounds::{
    circulation_bound, homogeneous_bidirectional_bound, light_circulation, lower_bound,
    port_lower_bound, slice_bound, CirculationBound,
};
pub(crate) use dispatch::plan_with_startup_bound;
pub use dispatch::{default_algorithm, plan, MAX_LIST_ITEMS, MAX_TRANSFERS};
pub use document::{Flow, PlanError, RingAlgorithm, RingPlan};
pub use exact::{exact_optimum, exact_schedule, exhaustive_optimum, ExactError};
pub use flows::{net_flows, prefix_sums, unidirectional_flows};
pub use instance::{InstanceError, ProcessorSpec, RingInstance, RingInstanceSpec, RingKind};
pub use messages::startup_schedule;
pub use retime::retime_with_startups;
pub use schedule::{Schedule, Transfer};
pub use startup_bounds::{startup_lower_bound, StartupBound, StartupBoundKind};
pub use startup_exact::startup_exhaustive;
pub use unidirectional::{
    asap_unidirectional, batched_schedule, homogeneous_unidirectional, unidirectional_lower_bound,
};
pub use validator::{
    transfer_link, validate, ScheduleReport, TransferLink, Violation, ViolationRule,
};
pub use verify::{verify, PlanDocument, PlanProblem, Verification};
