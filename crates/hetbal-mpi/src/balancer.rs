//! Load balancing for iterative applications: feed the balancer each rank's last
//! iteration time; it decides with the profitability rule whether moving the data
//! pays over the remaining iterations, computes balanced targets and the ring plan,
//! and redistributes the caller's items (order kept, nothing lost). With
//! [`Balancer::rebalance_with`] and one [`Workspace`] for the whole run, the
//! redistributions reuse their staging memory.
//!
//! The rule (model.md): with T_step the current iteration time (the slowest rank),
//! T'_step the balanced one and T_r the plan's makespan, redistribute only when
//! `T_r + n * T'_step < n * T_step` for the n remaining iterations.

use hetbal::balance::balanced_targets;
use hetbal::ring::{plan, RingInstance};
use mpi::traits::{Communicator, CommunicatorCollectives};

use crate::ring::{link_flows, redistribute_with};
use crate::workspace::Workspace;
use crate::{Options, RunError};

/// The ring the application runs on: link costs (seconds per item) and how items
/// move. Every rank passes the same values.
#[derive(Clone, Debug)]
pub struct Balancer {
    /// Seconds to send one item from rank i to rank i+1.
    pub c_succ: Vec<f64>,
    /// Seconds to send one item from rank i to rank i-1 (`None`: unidirectional).
    pub c_pred: Option<Vec<f64>>,
    /// Bytes per item.
    pub item_bytes: usize,
    /// Chunk size and fault injection of the redistribution.
    pub options: Options,
}

/// What the balancer decided, identical on every rank.
#[derive(Clone, Debug, PartialEq)]
pub struct Decision {
    /// True when the items were (or should be) moved.
    pub redistribute: bool,
    /// The current iteration time: the slowest rank's.
    pub current_step: f64,
    /// The iteration time with balanced items (predicted from each rank's time per
    /// item).
    pub balanced_step: f64,
    /// The plan's makespan: the predicted time of the redistribution.
    pub redistribution_time: f64,
    /// Items per rank after balancing.
    pub targets: Vec<u64>,
    /// Items per rank before.
    pub loads: Vec<u64>,
    /// The plan's net flow on each link (i, i+1), positive clockwise. The items
    /// keep their cyclic order, but rank 0's first item moves: it is the item that
    /// was `-flows[n - 1]` positions after the old one (before it when negative).
    pub flows: Vec<i128>,
}

impl Balancer {
    /// Decides whether to rebalance, from every rank's items and last iteration
    /// time (one all-gather), without moving anything.
    ///
    /// # Arguments
    /// * `comm` - the application's communicator (rank i is ring position i);
    /// * `items` - items this rank holds (at least 1);
    /// * `seconds` - this rank's time for its last iteration (> 0);
    /// * `remaining` - iterations still to run.
    ///
    /// # Errors
    /// [`RunError::Protocol`] when a rank's numbers are unusable (no items, a time
    /// that is not positive) or the ring does not match the communicator.
    ///
    /// # Complexity
    /// One all-gather of two numbers per rank; O(n log R) for the targets and the
    /// ring planner's cost on n ranks.
    pub fn decide<C: Communicator>(
        &self,
        comm: &C,
        items: u64,
        seconds: f64,
        remaining: u64,
    ) -> Result<Decision, RunError> {
        let n = comm.size() as usize;
        let mut all_items = vec![0u64; n];
        let mut all_seconds = vec![0f64; n];
        comm.all_gather_into(&items, &mut all_items[..]);
        comm.all_gather_into(&seconds, &mut all_seconds[..]);
        let rank = comm.rank() as usize;
        let bad = |reason: String| RunError::Protocol { rank, reason };
        if self.c_succ.len() != n || self.c_pred.as_ref().is_some_and(|c| c.len() != n) {
            return Err(bad(format!(
                "the balancer's ring has {} links but the communicator {n} ranks",
                self.c_succ.len()
            )));
        }
        if let Some(i) =
            (0..n).find(|&i| all_items[i] == 0 || all_seconds[i].is_nan() || all_seconds[i] <= 0.0)
        {
            return Err(bad(format!(
                "rank {i} reported {} items and {} s: every rank needs items and a positive time",
                all_items[i], all_seconds[i]
            )));
        }
        let per_item: Vec<f64> = (0..n)
            .map(|i| all_seconds[i] / all_items[i] as f64)
            .collect();
        let total: u64 = all_items.iter().sum();
        let current_step = all_seconds.iter().copied().fold(0.0, f64::max);
        let balanced = balanced_targets(total, &per_item).map_err(|e| bad(e.to_string()))?;
        let ring = match &self.c_pred {
            Some(cp) => {
                RingInstance::bidirectional(&all_items, &balanced.targets, &self.c_succ, cp)
            }
            None => RingInstance::unidirectional(&all_items, &balanced.targets, &self.c_succ),
        }
        .map_err(|e| bad(e.to_string()))?;
        let the_plan = plan(&ring, None).map_err(|e| bad(e.to_string()))?;
        let redistribution_time = the_plan.makespan;
        let n_iter = remaining as f64;
        Ok(Decision {
            redistribute: balanced.targets != all_items
                && redistribution_time + n_iter * balanced.max_time < n_iter * current_step,
            current_step,
            balanced_step: balanced.max_time,
            redistribution_time,
            targets: balanced.targets,
            flows: link_flows(n, &the_plan.flows),
            loads: all_items,
        })
    }

    /// Decides ([`Balancer::decide`]) and, when it pays, moves the caller's items
    /// to the balanced targets with [`redistribute`](crate::ring::redistribute).
    /// `items` holds this rank's items (`item_bytes` each) in order; on error it is
    /// untouched on every rank. Staging memory is allocated afresh at every
    /// redistribution: when rebalancing repeatedly, prefer
    /// [`Balancer::rebalance_with`].
    ///
    /// # Errors
    /// As [`Balancer::decide`] and [`redistribute`](crate::ring::redistribute).
    ///
    /// # Complexity
    /// That of [`Balancer::decide`], plus the redistribution when it runs.
    pub fn rebalance<C: Communicator>(
        &self,
        comm: &C,
        items: &mut Vec<u8>,
        seconds: f64,
        remaining: u64,
    ) -> Result<Decision, RunError> {
        self.rebalance_with(comm, items, seconds, remaining, &mut Workspace::new())
    }

    /// [`Balancer::rebalance`], redistributing with [`redistribute_with`] and
    /// `workspace`: keep one workspace per rank for the whole run, so that the
    /// redistributions after the first ones receive into memory already touched
    /// instead of fresh pages.
    ///
    /// # Example
    /// ```no_run
    /// use hetbal_mpi::balancer::Balancer;
    /// use hetbal_mpi::Options;
    /// use hetbal_mpi::workspace::Workspace;
    /// # use mpi::traits::Communicator;
    /// let universe = mpi::initialize().expect("MPI");
    /// let world = universe.world();
    /// let n = world.size() as usize;
    /// let balancer = Balancer {
    ///     c_succ: vec![2e-8; n],
    ///     c_pred: Some(vec![2e-8; n]),
    ///     item_bytes: 8,
    ///     options: Options::default(),
    /// };
    /// let mut items = vec![0u8; 8 * 1000];
    /// let mut workspace = Workspace::new();
    /// for remaining in (0..100u64).rev() {
    ///     let seconds = 0.01; // this rank's last iteration, measured
    ///     balancer.rebalance_with(&world, &mut items, seconds, remaining, &mut workspace)?;
    /// }
    /// # Ok::<(), hetbal_mpi::RunError>(())
    /// ```
    ///
    /// # Errors
    /// As [`Balancer::rebalance`].
    ///
    /// # Complexity
    /// As [`Balancer::rebalance`].
    pub fn rebalance_with<C: Communicator>(
        &self,
        comm: &C,
        items: &mut Vec<u8>,
        seconds: f64,
        remaining: u64,
        workspace: &mut Workspace,
    ) -> Result<Decision, RunError> {
        let count = (items.len() / self.item_bytes.max(1)) as u64;
        let decision = self.decide(comm, count, seconds, remaining)?;
        if decision.redistribute {
            redistribute_with(
                comm,
                &decision.loads,
                &decision.flows,
                self.item_bytes,
                items,
                &self.options,
                workspace,
            )?;
        }
        Ok(decision)
    }
}
