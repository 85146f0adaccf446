//! A deterministic simulator of iterative data-parallel applications on a ring, and
//! the policies that decide when to redistribute the data.
//!
//! # The model
//! An application of `total` identical items (matrix columns, say) runs `iterations`
//! iterations on a ring of processors. Processor `i` holds `loads[i]` items; in
//! iteration `k` (from 1) it computes them in `loads[i] * time_per_item[i] /
//! factor_i(k)`, where `factor_i` is its [`SpeedProfile`], and then exchanges
//! `border_items` items with each neighbour, one after the other (one-port), in
//! `border_items * (c_succ[i] + c_pred[i])`. The iteration ends when the slowest
//! processor is done (neighbours wait for each other's borders, so the slowest
//! sets the pace of all):
//!
//! `T_k = max_i ( loads[i] * time_per_item[i] / factor_i(k) + border_items * (c_succ[i] + c_pred[i]) * comm_scale )`
//!
//! which is model.md's `T_step` with `alpha_i * D_w = loads[i]`.
//!
//! Between two iterations the application may redistribute: every processor's load
//! becomes the [`balanced_targets`](crate::balance::balanced_targets) for the speeds of the iteration just finished
//! (what a running code can measure), and the redistribution costs the makespan of
//! the ring planner's plan ([`crate::ring::plan`], unidirectional or bidirectional)
//! on the links `c_succ`, `c_pred`, times `comm_scale`. Time only moves forward:
//! the run's time is the sum of its iterations and redistributions.
//!
//! # Policies
//! [`Policy::Never`], [`Policy::Fixed`] (the ring paper's schemes: 1, 4, 9 or 19
//! evenly spaced redistributions), [`Policy::At`] (given points),
//! [`Policy::Profitability`] (redistribute when the gain predicted over the
//! remaining iterations exceeds the plan's cost: model.md's rule),
//! [`Policy::Adaptive`] (the gain predicted by a speed model learned from the
//! run, when and how the speeds change, after a ski-rental guard), and
//! [`Policy::OfflineBest`]: a dynamic program over every set of redistribution
//! points, knowing the future speeds. Every other policy is one such set with the
//! same targets, so no policy of this module can beat it.
//!
//! # Online
//! A running code decides one iteration at a time with [`online::Decider`]: the
//! online policies on measured compute times, through the same rules (the
//! adaptive policy's speed model included), so that it takes the simulator's
//! decisions on the simulator's scenarios.
//!
//! ```
//! use hetbal::iterative::{Policy, Scenario, Simulator, SpeedProfile};
//! use hetbal::ring::RingKind;
//!
//! // Two processors, 10 items, 4 iterations; P1 slows down to half speed after
//! // the first iteration.
//! let scenario = Scenario {
//!     kind: RingKind::Bidirectional,
//!     time_per_item: vec![1.0, 1.0],
//!     c_succ: vec![1.0, 1.0],
//!     c_pred: vec![1.0, 1.0],
//!     border_items: 0,
//!     iterations: 4,
//!     initial_loads: vec![5, 5],
//!     profiles: vec![SpeedProfile::constant(), SpeedProfile::new(vec![(1.0, 0.5)], None).unwrap()],
//!     comm_scale: 1.0,
//! };
//! let mut simulator = Simulator::new(scenario).unwrap();
//! // Never: 5 + 10 + 10 + 10.
//! assert_eq!(simulator.run(&Policy::Never).unwrap().total_time, 35.0);
//! // After iteration 2, balance for speeds 1 and 0.5: loads [7, 3] (P1: 3 * 2 = 6 <= 7),
//! // moving 2 items costs 2; then 7 + 7.
//! let run = simulator.run(&Policy::At(vec![2])).unwrap();
//! assert_eq!(run.total_time, 5.0 + 10.0 + 2.0 + 7.0 + 7.0);
//! assert!(simulator.run(&Policy::OfflineBest).unwrap().total_time <= run.total_time);
//! ```

mod adaptive;
pub mod load;
mod offline;
pub mod online;
mod profile;
mod scenario;
mod simulator;

pub use profile::{draw_hosts, paper_speed_changes, ProfileError, SpeedProfile};
pub use scenario::{Scenario, SimulationError};
pub use simulator::{Policy, Redistribution, Run, Simulator};

#[cfg(test)]
mod tests;
