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
//! **Start-ups.** A balancer that measures its links
//! ([`Balancer::measuring`]) knows each link's start-up as well as its time per
//! byte, and plans every redistribution with them (a ring instance
//! [`RingInstance::with_startups`], planned by [`hetbal::ring::plan`]): the
//! [`Decision`]'s `redistribution_time` is then that plan's makespan, start-ups
//! included, and the items move as the plan says, one message per planned
//! transfer ([`Options::batches`]). With links emulated on one machine
//! ([`Balancer::measuring_with`] a [`Probe`] with `emulated` links) every
//! redistribution runs on those links ([`pacing_on_links`]), so the predicted
//! time can be set against the measured one
//! ([`Balancer::last_redistribution`]). The policies weigh the same plan: the
//! decider prices every move with the measured start-ups
//! ([`Decider::set_startups`]: by a lower bound first, the plan made only when
//! the bound does not rule the move out). A balancer given per-item costs
//! ([`Balancer::new`]) plans and moves as before, without start-ups.
//!
//! **Load-dependent speeds.** By default the decider models each rank's
//! compute time as its items times one time per item
//! ([`DeciderModel::Constant`]). [`Balancer::with_model`]`(`[`DeciderModel::functional`]`())`
//! makes it learn each rank's time as a function of its items instead (a GPU's
//! launch overhead, a share that stops fitting in memory): see
//! [`hetbal::iterative::online`].
//!
//! **Report compute time, not wall time.** Time the compute phase of the
//! iteration only ([`ComputeTimer`]): a rank that includes its halo exchange
//! waits there for the slowest neighbour, so every rank reports the slowest
//! rank's time, every rank looks as fast, and nothing ever moves.

use std::time::Instant;

use bytemuck::Pod;
use hetbal::iterative::Policy;
use mpi::traits::{Communicator, CommunicatorCollectives};

pub use hetbal::iterative::online::{DecideError, Decider, DeciderModel, Decision, Mark};

use hetbal::ring::{plan, RingInstance, RingPlan};

use crate::buffer::ItemStorage;
use crate::links::{measure_ring_links, Probe, RingLinks};
use crate::ring::{
    link_flows, message_batches, pacing_on_links, redistribute, redistribute_bytes,
    RedistributionReport,
};
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
    /// How [`Balancer::remeasure`] measures the links (the default [`Probe`]
    /// unless given to [`Balancer::measuring_with`]).
    probe: Probe,
    /// The links measured last, which the redistributions are planned on
    /// (start-ups included); `None` for per-item costs given.
    links: Option<RingLinks>,
    /// The item size the decider prices the measured links for.
    priced_bytes: usize,
    /// Global position of rank 0's first item minus the decider's (mod the
    /// items): the plans with start-ups may move another circulation than the
    /// decider's plan.
    shift: i128,
    /// What this rank did in the last redistribution.
    last: Option<RedistributionReport>,
}

impl Balancer {
    /// A balancer deciding with [`Policy::Adaptive`], for a ring with links
    /// `c_succ` (seconds per item from rank i to i+1) and `c_pred` (from rank i
    /// to i-1; `None`: only clockwise moves), default [`Options`].
    ///
    /// # Errors
    /// [`DecideError::Cost`] for a cost that is NaN, infinite or negative.
    pub fn new(c_succ: Vec<f64>, c_pred: Option<Vec<f64>>) -> Result<Balancer, DecideError> {
        Balancer::with_policy(Policy::Adaptive, c_succ, c_pred)
    }

    /// A balancer deciding with `policy`.
    ///
    /// # Errors
    /// [`DecideError::OfflinePolicy`] for [`Policy::OfflineBest`];
    /// [`DecideError::Cost`] for a cost that is NaN, infinite or negative.
    pub fn with_policy(
        policy: Policy,
        c_succ: Vec<f64>,
        c_pred: Option<Vec<f64>>,
    ) -> Result<Balancer, DecideError> {
        Ok(Balancer {
            decider: Decider::new(policy, c_succ, c_pred)?,
            options: Options::default(),
            probe: Probe::default(),
            links: None,
            priced_bytes: 0,
            shift: 0,
            last: None,
        })
    }

    /// The same balancer with `model` for the ranks' compute times, passed to
    /// its decider ([`Decider::with_model`]): [`DeciderModel::Constant`] (the
    /// default: one time per item per rank) or [`DeciderModel::Functional`]
    /// (a time function of the load per rank, learned from every decision's
    /// numbers; [`DeciderModel::functional`] interpolates it piecewise
    /// linearly). What the decider's model learned before is forgotten. Every
    /// rank must choose the same model ([`Balancer::decide`] refuses a
    /// mismatch). O(1).
    ///
    /// # Example
    /// ```no_run
    /// use hetbal::iterative::online::DeciderModel;
    /// use hetbal::iterative::Policy;
    /// use hetbal_mpi::balancer::Balancer;
    /// let universe = mpi::initialize().expect("MPI");
    /// let world = universe.world();
    /// let balancer = Balancer::measuring(&world, Policy::Profitability, 8)?
    ///     .with_model(DeciderModel::functional());
    /// assert_eq!(balancer.decider.model(), DeciderModel::functional());
    /// # Ok::<(), hetbal_mpi::RunError>(())
    /// ```
    pub fn with_model(mut self, model: DeciderModel) -> Balancer {
        self.set_model(model);
        self
    }

    /// [`Balancer::with_model`] on a balancer in place (for handles of the
    /// language bindings). O(1).
    pub fn set_model(&mut self, model: DeciderModel) {
        let decider = self.decider.clone();
        self.decider = decider.with_model(model);
    }

    /// Decides with `policy` from now on: the decider starts again, on the
    /// same links and start-ups and with the same model, as a new balancer's
    /// ([`Decider::new`]: the default tolerance, no border time); what it
    /// learned is forgotten, and the first
    /// positions of the next decisions count from rank 0's first item at the
    /// next decision. Call it on every rank alike (best before the first
    /// decision; [`Balancer::decide`] refuses ranks deciding with different
    /// policies). O(n).
    ///
    /// # Errors
    /// [`DecideError::OfflinePolicy`] for [`Policy::OfflineBest`] (the
    /// balancer is then unchanged).
    ///
    /// # Example
    /// ```
    /// use hetbal::iterative::Policy;
    /// use hetbal_mpi::balancer::Balancer;
    /// let mut balancer = Balancer::new(vec![1e-3; 4], None).unwrap();
    /// balancer.set_policy(Policy::Fixed { redistributions: 3 }).unwrap();
    /// assert_eq!(balancer.decider.policy(), &Policy::Fixed { redistributions: 3 });
    /// assert!(balancer.set_policy(Policy::OfflineBest).is_err());
    /// ```
    pub fn set_policy(&mut self, policy: Policy) -> Result<(), DecideError> {
        let (c_succ, c_pred) = self.decider.links();
        let (l_succ, l_pred) = self.decider.startups();
        let mut decider = Decider::new(policy, c_succ.to_vec(), c_pred.map(<[f64]>::to_vec))?
            .with_model(self.decider.model());
        decider.set_startups(l_succ.to_vec(), Some(l_pred.to_vec()));
        self.decider = decider;
        self.shift = 0;
        Ok(())
    }

    /// A balancer deciding with `policy` on links it measures itself
    /// ([`measure_ring_links`] with the default [`Probe`]: a few milliseconds),
    /// priced for items of `item_bytes` bytes, start-ups included (one per
    /// planned message). Collective over `comm`.
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
        Balancer::measuring_with(comm, policy, item_bytes, Probe::default())
    }

    /// [`Balancer::measuring`] with `probe` (and [`Balancer::remeasure`] with it
    /// from then on). With emulated links ([`Probe::emulated`]: links of
    /// known start-up and time per byte, reproduced on one machine) the
    /// balancer measures those links, and every redistribution runs on them:
    /// each planned message delivered its link's start-up plus its bytes' time
    /// after it begins ([`pacing_on_links`]). Collective over `comm`.
    ///
    /// # Errors
    /// As [`Balancer::measuring`].
    ///
    /// # Example
    /// ```no_run
    /// use hetbal::iterative::Policy;
    /// use hetbal_mpi::balancer::Balancer;
    /// use hetbal_mpi::links::{LinkCost, Probe, RingLinks};
    /// # use mpi::traits::Communicator;
    /// let universe = mpi::initialize().expect("MPI");
    /// let world = universe.world();
    /// let n = world.size() as usize;
    /// // Links of 2 ms per message and 0.1 ms per item of 16 bytes.
    /// let link = LinkCost { startup: 2e-3, per_byte: 1e-4 / 16.0 };
    /// let emulated = RingLinks { to_succ: vec![link; n], to_pred: vec![link; n] };
    /// let probe = Probe { sizes: vec![0, 16 * 10, 16 * 40], emulated: Some(emulated), ..Probe::default() };
    /// let balancer = Balancer::measuring_with(&world, Policy::Adaptive, 16, probe)?;
    /// let links = balancer.links().expect("measured");
    /// println!("start-up to the successor: {} s", links.to_succ[0].startup);
    /// # Ok::<(), hetbal_mpi::RunError>(())
    /// ```
    pub fn measuring_with<C: Communicator>(
        comm: &C,
        policy: Policy,
        item_bytes: usize,
        probe: Probe,
    ) -> Result<Balancer, RunError> {
        let n = comm.size() as usize;
        let mut balancer =
            Balancer::with_policy(policy, vec![0.0; n], None).map_err(RunError::Decide)?;
        balancer.probe = probe;
        balancer.remeasure(comm, item_bytes)?;
        Ok(balancer)
    }

    /// Measures the ring's links again ([`measure_ring_links`] with the
    /// balancer's [`Probe`]: the default one unless given to
    /// [`Balancer::measuring_with`]) and decides on them from now on, for
    /// items of `item_bytes` bytes: the decider prices the moves and the
    /// redistributions are planned on them, start-ups included. What the
    /// decider learned is kept. Collective over `comm`. Returns the links
    /// measured.
    ///
    /// # Errors
    /// Those of [`measure_ring_links`].
    pub fn remeasure<C: Communicator>(
        &mut self,
        comm: &C,
        item_bytes: usize,
    ) -> Result<RingLinks, RunError> {
        let links = measure_ring_links(comm, &self.probe)?;
        let (c_succ, c_pred) = links.item_seconds(item_bytes);
        let (l_succ, l_pred) = links.startup_seconds();
        self.decider.set_links(c_succ, Some(c_pred));
        self.decider.set_startups(l_succ, Some(l_pred));
        self.links = Some(links.clone());
        self.priced_bytes = item_bytes;
        Ok(links)
    }

    /// The links the redistributions are planned on (start-up and time per
    /// byte, both directions), when the balancer measured them; `None` when it
    /// was given per-item costs. O(1).
    pub fn links(&self) -> Option<&RingLinks> {
        self.links.as_ref()
    }

    /// What this rank did in the balancer's last redistribution (its
    /// [`RedistributionReport`]: seconds, messages), if any. Its
    /// `transfer_seconds`, the largest over the ranks, is the measured time to
    /// set against the [`Decision`]'s `redistribution_time`. O(1).
    pub fn last_redistribution(&self) -> Option<&RedistributionReport> {
        self.last.as_ref()
    }

    /// The plan of the redistribution from `loads` to `targets` on the
    /// measured links, start-ups included, for items of `item_bytes` bytes
    /// (each link's time per item its bytes' time, at least a picosecond), and
    /// the ring instance it plans; `None` without measured links.
    ///
    /// # Errors
    /// [`RunError::Decide`] when the instance is invalid or cannot be planned.
    fn startup_plan(
        &self,
        loads: &[u64],
        targets: &[u64],
        item_bytes: usize,
    ) -> Result<Option<(RingInstance, RingPlan)>, RunError> {
        let Some(links) = &self.links else {
            return Ok(None);
        };
        // The decider priced this move on the same links for the same items:
        // its plan, not a second one.
        if let Some((ring, the_plan)) = self.decider.last_plan() {
            if item_bytes == self.priced_bytes && ring.loads() == loads && ring.targets() == targets
            {
                return Ok(Some((ring.clone(), the_plan.clone())));
            }
        }
        let (c_succ, c_pred) = links.item_seconds(item_bytes);
        let (l_succ, l_pred) = links.startup_seconds();
        let ring = match self.decider.links().1 {
            Some(_) => RingInstance::bidirectional(loads, targets, &c_succ, &c_pred),
            None => RingInstance::unidirectional(loads, targets, &c_succ),
        }
        .and_then(|r| r.with_startups(&l_succ, &l_pred))
        .map_err(|e| RunError::Decide(DecideError::Instance(e)))?;
        let the_plan = plan(&ring, None).map_err(|e| RunError::Decide(DecideError::Plan(e)))?;
        Ok(Some((ring, the_plan)))
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
    /// communicator; [`RunError::Mismatch`] on every rank when the ranks give
    /// different `remaining` or their balancers differ (policy, model, links).
    ///
    /// # Complexity
    /// One all-gather of four words per rank, then [`Decider::observe`].
    pub fn decide<C: Communicator>(
        &mut self,
        comm: &C,
        items: u64,
        compute_seconds: f64,
        remaining: u64,
    ) -> Result<Decision, RunError> {
        let n = comm.size() as usize;
        // One all-gather: items, the bits of the seconds, and what must be the
        // same on every rank (else the ranks would decide differently and
        // wait for one another for ever): the iterations left and the
        // decider's setting.
        let setting = self.setting_fingerprint();
        let mut all = vec![[0u64; 4]; n];
        comm.all_gather_into(
            &[items, compute_seconds.to_bits(), remaining, setting][..],
            bytemuck::cast_slice_mut::<_, u64>(&mut all[..]),
        );
        if all.iter().any(|x| x[2] != remaining || x[3] != setting) {
            return Err(RunError::Mismatch);
        }
        let all_items: Vec<u64> = all.iter().map(|x| x[0]).collect();
        let all_seconds: Vec<f64> = all.iter().map(|x| f64::from_bits(x[1])).collect();
        let mut decision = self
            .decider
            .observe(&all_items, &all_seconds, remaining)
            .map_err(RunError::Decide)?;
        shift(&mut decision.firsts, self.shift, all_items.iter().sum());
        Ok(decision)
    }

    /// A fingerprint of what the decisions depend on besides the ranks'
    /// numbers: the policy, the model, the links and their start-ups.
    fn setting_fingerprint(&self) -> u64 {
        let (c_succ, c_pred) = self.decider.links();
        let startups = self.decider.startups();
        crate::comm::fingerprint(&format!(
            "{:?}",
            (
                self.decider.policy(),
                self.decider.model(),
                c_succ,
                c_pred,
                startups
            )
        ))
    }

    /// Decides ([`Balancer::decide`]) and, when it pays, moves the caller's items
    /// to the balanced targets with [`redistribute`] (in place: no second copy,
    /// and a vector keeps its capacity for the next time). `items` holds this
    /// rank's items in order, any plain-old-data type, in a `Vec` (whose kept
    /// items shift once when items arrive in front of them) or an
    /// [`ItemBuffer`](crate::buffer::ItemBuffer) (whose kept items never
    /// move); on error it is untouched on every rank, and the decider forgets
    /// the decision.
    ///
    /// # Example
    /// ```no_run
    /// use hetbal_mpi::balancer::{Balancer, ComputeTimer};
    /// use hetbal_mpi::RunError;
    /// # use mpi::traits::Communicator;
    /// let universe = mpi::initialize().expect("MPI");
    /// let world = universe.world();
    /// let n = world.size() as usize;
    /// let mut balancer = Balancer::new(vec![2e-8; n], Some(vec![2e-8; n])).map_err(RunError::Decide)?;
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
        items: &mut impl ItemStorage<T>,
        compute_seconds: f64,
        remaining: u64,
    ) -> Result<Decision, RunError> {
        self.moving(
            comm,
            (items.elements() as u64, std::mem::size_of::<T>()),
            compute_seconds,
            remaining,
            |flows, loads, options| redistribute(comm, loads, flows, items, options),
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
        items: &mut impl ItemStorage<u8>,
        item_bytes: usize,
        compute_seconds: f64,
        remaining: u64,
    ) -> Result<Decision, RunError> {
        let count = (items.elements() / item_bytes.max(1)) as u64;
        let sizes = (count, item_bytes.max(1));
        self.moving(
            comm,
            sizes,
            compute_seconds,
            remaining,
            |flows, loads, options| {
                redistribute_bytes(comm, loads, flows, item_bytes, items, options)
            },
        )
    }

    /// Decides, and when the decision redistributes carries it out
    /// ([`Balancer::carry_out`]) with `redistribute`.
    fn moving<C: Communicator>(
        &mut self,
        comm: &C,
        (items, item_bytes): (u64, usize),
        compute_seconds: f64,
        remaining: u64,
        redistribute: impl FnOnce(&[i128], &[u64], &Options) -> Result<RedistributionReport, RunError>,
    ) -> Result<Decision, RunError> {
        let mark = self.decider.mark();
        let mut decision = self.decide(comm, items, compute_seconds, remaining)?;
        self.carry_out(&mut decision, mark, item_bytes, redistribute)?;
        Ok(decision)
    }

    /// Moves the items of `items_bytes` bytes as `decision` (from
    /// [`Balancer::decide`], taken after `mark`) says, when it redistributes,
    /// by running `redistribute` (with the flows, the loads and the options).
    /// With measured links the items move as the plan with start-ups says, and
    /// the decision then gives that plan's makespan, flows and first
    /// positions. On failure the decider forgets the decision (not what it
    /// measured).
    fn carry_out(
        &mut self,
        decision: &mut Decision,
        mark: Mark,
        item_bytes: usize,
        redistribute: impl FnOnce(&[i128], &[u64], &Options) -> Result<RedistributionReport, RunError>,
    ) -> Result<(), RunError> {
        if !decision.redistribute {
            return Ok(());
        }
        let planned = match self.startup_plan(&decision.loads, &decision.targets, item_bytes) {
            Ok(planned) => planned,
            Err(e) => {
                self.decider.forget(mark);
                return Err(e);
            }
        };
        let mut options = self.options.clone();
        let mut flows = decision.flows.clone();
        if let Some((ring, the_plan)) = &planned {
            flows = link_flows(ring.len(), &the_plan.flows);
            options.batches = message_batches(ring, the_plan);
            if let Some(emulated) = &self.probe.emulated {
                options.pacing = Some(pacing_on_links(ring, the_plan, emulated, item_bytes));
            }
        }
        match redistribute(&flows, &decision.loads, &options) {
            Ok(report) => self.last = Some(report),
            Err(e) => {
                // Nothing moved: the decider forgets the decision.
                self.decider.forget(mark);
                return Err(e);
            }
        }
        if let Some((_, the_plan)) = planned {
            // Rank 0's first item moved back by the flow into it: the plan's,
            // not the decider's.
            let n = flows.len();
            let by = decision.flows[n - 1] - flows[n - 1];
            let total: u64 = decision.loads.iter().sum();
            self.shift = (self.shift + by).rem_euclid(i128::from(total.max(1)));
            shift(&mut decision.firsts, by, total);
            decision.redistribution_time = the_plan.makespan;
            decision.flows = flows;
        }
        Ok(())
    }

    /// Carries out a decision taken with [`Balancer::decide`] after `mark`
    /// ([`Decider::mark`] of [`Balancer::decider`]) on this rank's `items`,
    /// `item_bytes` bytes each, as [`Balancer::rebalance_bytes`] does after
    /// deciding: nothing when the decision keeps the items; else they move
    /// (with measured links, as the plan with start-ups says: the decision then
    /// gives that plan's makespan, flows and first positions). For callers that
    /// look at the decision before handing over their items (the language
    /// bindings, which copy them only when they move). Collective over `comm`.
    ///
    /// # Errors
    /// As [`redistribute_bytes`]; on error `items` is untouched on every rank
    /// and the decider forgets the decision.
    ///
    /// # Complexity
    /// That of the redistribution (and of the ring plan with start-ups when the
    /// links were measured).
    pub fn carry_out_bytes<C: Communicator>(
        &mut self,
        comm: &C,
        decision: &mut Decision,
        mark: Mark,
        items: &mut impl ItemStorage<u8>,
        item_bytes: usize,
    ) -> Result<(), RunError> {
        self.carry_out(
            decision,
            mark,
            item_bytes.max(1),
            |flows, loads, options| {
                redistribute_bytes(comm, loads, flows, item_bytes, items, options)
            },
        )
    }
}

/// Moves the global positions `firsts` of a ring of `total` items by `by`
/// items (wrapping at the total).
fn shift(firsts: &mut [u64], by: i128, total: u64) {
    if by == 0 || total == 0 {
        return;
    }
    let total = i128::from(total);
    for first in firsts {
        *first = (i128::from(*first) + by).rem_euclid(total) as u64;
    }
}

#[cfg(test)]
mod tests {
    use super::shift;

    #[test]
    fn first_positions_shift_and_wrap() {
        let mut firsts = vec![0, 30, 60, 90];
        shift(&mut firsts, -11, 120);
        assert_eq!(firsts, vec![109, 19, 49, 79]);
        shift(&mut firsts, 131, 120);
        assert_eq!(firsts, vec![0, 30, 60, 90]);
        shift(&mut firsts, 7, 0); // no items: nothing to move
        assert_eq!(firsts, vec![0, 30, 60, 90]);
    }
}
