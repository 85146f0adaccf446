//! Load-balanced scatter (model.md section 2; the paper on load-balancing scatter operations):
//! how many of N items the root should send to each processor, in which order, so
//! that the last processor to finish finishes as early as possible.
//!
//! The root sends the shares one after the other (one port), in the sending order,
//! and serves itself last at no communication cost. Position k of the order gets
//! `n_k` items and finishes at
//! `T_k = sum_{j<=k} Tcomm_j(n_j) + Tcomp_k(n_k)`; the makespan is `max_k T_k`.
//!
//! ```text
//!  root ──send n_0──▶ P_0 ──────compute────────┐
//!       ···wait···   ──send n_1──▶ P_1 ──compute──┤
//!       ···········wait··········   root ─compute─┤ makespan = max T_k
//! ```
//!
//! Data flows one way: a validated [`ScatterInstance`] goes to [`plan`] with a
//! [`Method`] and an [`OrderPolicy`], which returns a [`ScatterPlan`] (order,
//! counts, MPI_Scatterv displacements, the [`Timeline`] of every processor, a
//! lower bound), whose [`ScatterPlan::document`] is the JSON of formats.md. The
//! building blocks are free functions:
//!
//! | function | what | time |
//! |---|---|---|
//! | [`naive_dp`] | the paper's Algorithm 1, optimal counts for an order | O(p N^2) |
//! | [`exact`] | the same optimum | O(p N) (affine comm) |
//! | [`lp`] | the paper's LP (every startup paid) and rounding, with its bound | O(p^2) |
//! | [`linear`] | the closed form of linear costs (Theorems 1 and 2) | O(p) |
//! | [`lower_bound`] | a rational relaxation valid under the instance's rule | O(p^2) |
//! | [`bandwidth_order`] | Theorem 3's order | O(p log p) |
//! | [`best_order`] | exhaustive for p <= 8, local search beyond | budgeted |
//! | [`choose_root`] | the paper's section 3.4: move the data to a better root | a plan per candidate |
//! | [`evaluate`] | the finish times of any distribution | O(p) |
//!
//! # Example
//! ```
//! use hetbal::scatter::{plan, Method, OrderPolicy, ScatterInstance};
//! // model.md: N = 3; P0 comm 2 comp 6, P1 comm 4 comp 8, root P2 comp 6 (s/item).
//! let s = ScatterInstance::linear(3, 2, &[2.0, 4.0, 0.0], &[6.0, 8.0, 6.0]).unwrap();
//! let theorem3 = plan(&s, Method::Exact, OrderPolicy::Bandwidth).unwrap();
//! assert_eq!((theorem3.order.clone(), theorem3.makespan), (vec![0, 1, 2], 14.0));
//! let best = plan(&s, Method::Exact, OrderPolicy::Best).unwrap();
//! assert_eq!((best.order.clone(), best.counts.clone()), (vec![1, 0, 2], vec![1, 1, 1]));
//! assert_eq!(best.timeline.finish_times, vec![12.0, 12.0, 12.0]);
//! ```

mod dp;
mod evaluate;
mod instance;
mod order;
mod plan;
mod rational;
mod root;

pub use dp::{exact, naive_dp, DpDistribution, EXACT_MAX_CELLS, NAIVE_DP_MAX_STEPS};
pub use evaluate::{evaluate, Timeline};
pub use instance::{
    Cost, CostSpec, InstanceError, ProcessorSpec, ScatterInstance, ScatterInstanceSpec, StartupRule,
};
pub use order::{
    bandwidth_order, best_order, given_order, OrderSearch, SearchKind, EXHAUSTIVE_MAX_PROCESSORS,
    SEARCH_MAX_CELLS, SEARCH_MAX_RATIONAL_WORK,
};
pub use plan::{
    plan, plan_in_order, Method, OrderPolicy, PlanError, RationalReport, ScatterPlan,
    ScatterPlanDocument,
};
pub use rational::{linear, lower_bound, lp, round_shares, RationalDistribution};
pub use root::{choose_root, RootCandidate, RootChoice};
