//! Load balancing for iterative applications. After each iteration every rank
//! hands the balancer its items and its compute time; the balancer gathers them
//! (one all-gather), decides with a policy of [`hetbal::iterative`]
//! ([`Policy::Adaptive`] by default; the decisions are those of
//! [`hetbal::iterative::online::Decider`], which takes the simulator's
//! decisions on the simulator's scenarios) whether moving the data pays, and
//! when it does moves the caller's items to the balanced targets with a ring
//! redistribution (order kept, nothing lost). The [`Decision`] tells every
//! rank what was decided and the global position of its first item afterwards.
//!
//! **Report compute time, not wall time.** Time the compute phase of the
//! iteration only ([`ComputeTimer`]): a rank that includes its halo exchange
//! waits there for the slowest neighbour, so every rank reports the slowest
//! rank's time, every rank looks as fast, and nothing ever moves.

use std::time::Instant;

use bytemuck::Pod;
use hetbal::iterative::Policy;
use mpi::traits::{Communicator, CommunicatorCollectives};

pub use hetbal::iterative::online::{DecideError, Decider, Decision};

use crate::links::{measure_ring_links, Probe, RingLinks};
use crate::ring::{redistribute, redistribute_bytes, RedistributionReport};
use crate::{Options, RunError};

/// Measures a rank's compute time: wrap each compute phase in
/// [`ComputeTimer::time`], leave the halo exchange outside, and hand
/// [`ComputeTimer::take`] to the balancer after each iteration.
///
/// # Example
/// ```
/// use hetbal_mpi::balancer::ComputeTimer;
/// let mut timer = ComputeTimer::new();
/// let sum: u64 = timer.time(|| (0..1000u64).sum());
/// assert_eq!(sum, 499_500);
/// let seconds = timer.take(); // this iteration's compute time
/// assert!(seconds >= 0.0);
/// assert_eq!(timer.seconds(), 0.0);
/// ```
#[derive(Clone, Debug, Default)]
pub struct ComputeTimer {
    seconds: f64,
}

impl ComputeTimer {
    /// A timer at zero.
    pub fn new() -> Self {
        ComputeTimer::default()
    }

    /// Runs `compute`, adding its wall-clock time to the timer.
    pub fn time<R>(&mut self, compute: impl FnOnce() -> R) -> R {
        let started = Instant::now();
        let result = compute();
        self.seconds += started.elapsed().as_secs_f64();
        result
    }

    /// Seconds timed since the last [`ComputeTimer::take`].
    pub fn seconds(&self) -> f64 {
        self.seconds
    }

    /// Seconds timed since the last take, and back to zero.
    pub fn take(&mut self) -> f64 {
        std::mem::take(&mut self.seconds)
    }
}

/// The balancer of one application: its [`Decider`] (the ring's links, the
/// policy and what it learned so far) and how items move. Every rank builds the
/// same balancer and calls it at the same iterations.
#[derive(Clone, Debug)]
pub struct Balancer {
    /// Decides from every rank's items and compute time.
    pub decider: Decider,
    /// Message size, fault injection and emulated links of the redistributions.
    pub options: Options,
}

impl Balancer {
    /// A balancer deciding with [`Policy::Adaptive`], for a ring with links
    /// `c_succ` (seconds per item from rank i to i+1) and `c_pred` (from rank i
    /// to i-1; `None`: only clockwise moves), default [`Options`].
    pub fn new(c_succ: Vec<f64>, c_pred: Option<Vec<f64>>) -> Balancer {
        Balancer::with_policy(Policy::Adaptive, c_succ, c_pred)
            .expect("the adaptive policy runs online")
    }

    /// A balancer deciding with `policy`.
    ///
    /// # Errors
    /// [`DecideError::OfflinePolicy`] for [`Policy::OfflineBest`].
    pub fn with_policy(
        policy: Policy,
        c_succ: Vec<f64>,
        c_pred: Option<Vec<f64>>,
    ) -> Result<Balancer, DecideError> {
        Ok(Balancer {
            decider: Decider::new(policy, c_succ, c_pred)?,
            options: Options::default(),
        })
    }

    /// A balancer deciding with `policy` on links it measures itself
    /// ([`measure_ring_links`] with the default [`Probe`]: a few milliseconds),
    /// priced for items of `item_bytes` bytes moved in the default
    /// [`Options`]' messages. Collective over `comm`.
    ///
    /// # Errors
    /// [`RunError::Decide`] for [`Policy::OfflineBest`]; those of
    /// [`measure_ring_links`].
    ///
    /// # Example
    /// ```no_run
    /// use hetbal::iterative::Policy;
    /// use hetbal_mpi::balancer::Balancer;
    /// let universe = mpi::initialize().expect("MPI");
    /// let world = universe.world();
    /// let mut balancer = Balancer::measuring(&world, Policy::Adaptive, 8)?;
    /// // ... later, when the network may have changed:
    /// balancer.remeasure(&world, 8)?;
    /// # Ok::<(), hetbal_mpi::RunError>(())
    /// ```
    pub fn measuring<C: Communicator>(
        comm: &C,
        policy: Policy,
        item_bytes: usize,
    ) -> Result<Balancer, RunError> {
        let n = comm.size() as usize;
        let mut balancer =
            Balancer::with_policy(policy, vec![0.0; n], None).map_err(RunError::Decide)?;
        balancer.remeasure(comm, item_bytes)?;
        Ok(balancer)
    }

    /// Measures the ring's links again ([`measure_ring_links`], default
    /// [`Probe`]) and decides on them from now on, for items of `item_bytes`
    /// bytes in the messages of [`Balancer::options`]; what the decider learned
    /// is kept. Collective over `comm`. Returns the links measured.
    ///
    /// # Errors
    /// Those of [`measure_ring_links`].
    pub fn remeasure<C: Communicator>(
        &mut self,
        comm: &C,
        item_bytes: usize,
    ) -> Result<RingLinks, RunError> {
        let links = measure_ring_links(comm, &Probe::default())?;
        let (c_succ, c_pred) = links.per_item(item_bytes, &self.options);
        self.decider.set_links(c_succ, Some(c_pred));
        Ok(links)
    }

    /// Decides after one iteration, from every rank's items and compute time
    /// (one all-gather), without moving anything. Call it on every rank after
    /// every iteration (or every group of iterations: `remaining` then counts
    /// groups); when it says to redistribute, move the items to its targets
    /// (as [`Balancer::rebalance`] does) before the next call.
    ///
    /// # Arguments
    /// * `comm` - the application's communicator (rank i is ring position i);
    /// * `items` - items this rank holds (at least 1);
    /// * `compute_seconds` - this rank's compute time in the iteration (> 0),
    ///   halo exchanges excluded ([`ComputeTimer`]);
    /// * `remaining` - iterations still to run.
    ///
    /// # Errors
    /// [`RunError::Decide`] on every rank when a rank's numbers are unusable (no
    /// items, a time that is not positive) or the ring does not match the
    /// communicator.
    ///
    /// # Complexity
    /// One all-gather of two words per rank, then [`Decider::observe`].
    pub fn decide<C: Communicator>(
        &mut self,
        comm: &C,
        items: u64,
        compute_seconds: f64,
        remaining: u64,
    ) -> Result<Decision, RunError> {
        let n = comm.size() as usize;
        // One all-gather: items and the bits of the seconds.
        let mut all = vec![[0u64; 2]; n];
        comm.all_gather_into(
            &[items, compute_seconds.to_bits()][..],
            bytemuck::cast_slice_mut::<_, u64>(&mut all[..]),
        );
        let all_items: Vec<u64> = all.iter().map(|x| x[0]).collect();
        let all_seconds: Vec<f64> = all.iter().map(|x| f64::from_bits(x[1])).collect();
        self.decider
            .observe(&all_items, &all_seconds, remaining)
            .map_err(RunError::Decide)
    }

    /// Decides ([`Balancer::decide`]) and, when it pays, moves the caller's items
    /// to the balanced targets with [`redistribute`] (in place: no second copy,
    /// and the vector keeps its capacity for the next time). `items` holds this
    /// rank's items in order, any plain-old-data type; on error it is untouched
    /// on every rank, and the decider forgets the decision.
    ///
    /// # Example
    /// ```no_run
    /// use hetbal_mpi::balancer::{Balancer, ComputeTimer};
    /// # use mpi::traits::Communicator;
    /// let universe = mpi::initialize().expect("MPI");
    /// let world = universe.world();
    /// let n = world.size() as usize;
    /// let mut balancer = Balancer::new(vec![2e-8; n], Some(vec![2e-8; n]));
    /// let mut cells = vec![0.0f64; 1000];
    /// let mut timer = ComputeTimer::new();
    /// for remaining in (0..100u64).rev() {
    ///     // exchange the halos (not timed), then compute (timed):
    ///     timer.time(|| cells.iter_mut().for_each(|x| *x += 1.0));
    ///     let d = balancer.rebalance(&world, &mut cells, timer.take(), remaining)?;
    ///     let my_first = d.firsts[world.rank() as usize]; // global position of cells[0]
    /// }
    /// # Ok::<(), hetbal_mpi::RunError>(())
    /// ```
    ///
    /// # Errors
    /// As [`Balancer::decide`] and [`redistribute`].
    ///
    /// # Complexity
    /// That of [`Balancer::decide`], plus the redistribution when it runs.
    pub fn rebalance<T: Pod, C: Communicator>(
        &mut self,
        comm: &C,
        items: &mut Vec<T>,
        compute_seconds: f64,
        remaining: u64,
    ) -> Result<Decision, RunError> {
        self.moving(
            comm,
            items.len() as u64,
            compute_seconds,
            remaining,
            |d, options| redistribute(comm, &d.loads, &d.flows, items, options),
        )
    }

    /// [`Balancer::rebalance`] for items given as bytes, `item_bytes` each (0
    /// counts as 1).
    ///
    /// # Errors
    /// As [`Balancer::rebalance`].
    ///
    /// # Complexity
    /// As [`Balancer::rebalance`].
    pub fn rebalance_bytes<C: Communicator>(
        &mut self,
        comm: &C,
        items: &mut Vec<u8>,
        item_bytes: usize,
        compute_seconds: f64,
        remaining: u64,
    ) -> Result<Decision, RunError> {
        let count = (items.len() / item_bytes.max(1)) as u64;
        self.moving(comm, count, compute_seconds, remaining, |d, options| {
            redistribute_bytes(comm, &d.loads, &d.flows, item_bytes, items, options)
        })
    }

    /// Decides, and when the decision redistributes runs `redistribute`; on its
    /// failure the decider forgets the decision (not what it measured).
    fn moving<C: Communicator>(
        &mut self,
        comm: &C,
        items: u64,
        compute_seconds: f64,
        remaining: u64,
        redistribute: impl FnOnce(&Decision, &Options) -> Result<RedistributionReport, RunError>,
    ) -> Result<Decision, RunError> {
        let mark = self.decider.mark();
        let decision = self.decide(comm, items, compute_seconds, remaining)?;
        if decision.redistribute {
            if let Err(e) = redistribute(&decision, &self.options) {
                // Nothing moved: the decider forgets the decision.
                self.decider.forget(mark);
                return Err(e);
            }
        }
        Ok(decision)
    }
}
