//! The balancer of an application whose items differ in cost and size
//! (cells along a space-filling curve holding different numbers of particles,
//! AMR blocks, sparse rows): [`WeightedBalancer`].
//!
//! After each iteration every rank gives its items (data and offsets, as
//! [`crate::items`]), each item's weight (its cost: particles, non-zeros, any
//! unit) and its compute time. The balancer learns each rank's seconds per
//! unit of weight, finds the optimal partition of the weights for those speeds
//! and, among the partitions within `1 + tolerance` of it, the one that moves
//! the fewest bytes from the current cuts
//! ([`hetbal::partition::partition_with_movement`]); it moves when the time
//! saved over the iterations left exceeds the move's time on the links, and
//! then the items (and their weights) go to their new owners along a chain
//! ([`crate::items::redistribute_items`]).
//!
//! Every rank gathers every item's weight and size: O(n) memory and time per
//! step for n items in all, plus the partition (O(n) and the movement-aware
//! choice: see its docs).

use bytemuck::Pod;
use hetbal::partition::partition_with_movement;
use mpi::datatype::PartitionMut;
use mpi::traits::{Communicator, CommunicatorCollectives};
use mpi::Count;

use crate::comm::{agree_arguments, fingerprint, Refusal, Refused};
use crate::items::{boundaries, chain_flows, redistribute_items, ItemsReport};
use crate::links::{measure_ring_links, Probe, RingLinks};
use crate::ring::redistribute;
use crate::{Options, RunError};

/// What the weighted balancer decided at a step (the same on every rank but
/// `first` and `items`).
#[derive(Clone, Debug, PartialEq)]
pub struct WeightedDecision {
    /// True when the items moved.
    pub redistribute: bool,
    /// The cuts after the step (`p + 1` global item indices): the new ones
    /// when the items moved, else the current ones.
    pub cuts: Vec<u64>,
    /// This rank's first global item index after the step.
    pub first: u64,
    /// This rank's items after the step.
    pub items: u64,
    /// The iteration time the current cuts give at the speeds learned
    /// (seconds: the largest rank's weight times its seconds per unit).
    pub current_seconds: f64,
    /// The iteration time of the least-moving partition within the tolerance.
    pub balanced_seconds: f64,
    /// The least iteration time of any partition (the optimum).
    pub optimum_seconds: f64,
    /// Items and bytes that change owner in the least-moving partition.
    pub moved_items: u64,
    /// Bytes of those items.
    pub moved_bytes: u64,
    /// The move's estimated time: the slowest link's start-up plus its bytes
    /// (the links work at once), and at least the time the last move took
    /// (the slowest rank's, checks and agreements included).
    pub move_seconds: f64,
    /// `(current_seconds - balanced_seconds) × remaining`.
    pub saved_seconds: f64,
}

/// The balancer of an application with items of different costs and sizes
/// (see the module's docs). Every rank builds the same balancer and calls
/// [`WeightedBalancer::step`] at the same iterations.
#[derive(Clone, Debug)]
pub struct WeightedBalancer {
    /// How far above the optimal iteration time a distribution may be and
    /// stay where it is, as a fraction (0.05: 5 %, the default): the larger,
    /// the fewer items move.
    pub tolerance: f64,
    /// The links the moves are priced on (rank i to rank i+1 and back).
    pub links: RingLinks,
    /// Message size and fault injection of the moves.
    pub options: Options,
    /// Seconds per unit of weight learned for each rank (the last
    /// measurement where it had weight); none before the first step.
    speeds: Option<Vec<f64>>,
    /// What this rank did in the last move.
    last: Option<ItemsReport>,
    /// The cuts the last decision started from.
    current: Option<Vec<u64>>,
    /// How long this rank's last move took (seconds; 0 before the first).
    last_move_seconds: f64,
}

impl WeightedBalancer {
    /// A balancer pricing its moves on `links` (from
    /// [`measure_ring_links`], or given), tolerance 5 %.
    pub fn new(links: RingLinks) -> WeightedBalancer {
        WeightedBalancer {
            tolerance: 0.05,
            links,
            options: Options::default(),
            speeds: None,
            last: None,
            current: None,
            last_move_seconds: 0.0,
        }
    }

    /// A balancer on the links of `comm` measured now (collective: neighbour
    /// ping-pongs, a few milliseconds).
    ///
    /// # Errors
    /// As [`measure_ring_links`].
    pub fn measuring<C: Communicator>(comm: &C) -> Result<WeightedBalancer, RunError> {
        Ok(WeightedBalancer::new(measure_ring_links(
            comm,
            &Probe::default(),
        )?))
    }

    /// What this rank did in the last move, if any.
    pub fn last_move(&self) -> Option<&ItemsReport> {
        self.last.as_ref()
    }

    /// The cuts after the last decision (`p + 1` global item indices: the new
    /// ones once a move is carried out, else the ones decided from), once a
    /// step has run.
    pub fn cuts(&self) -> Option<&[u64]> {
        self.current.as_deref()
    }

    /// Seconds per unit of weight learned for each rank, once a step has run.
    pub fn speeds(&self) -> Option<&[f64]> {
        self.speeds.as_deref()
    }

    /// One step after an iteration: [`WeightedBalancer::decide`], then, when
    /// moving pays, [`WeightedBalancer::carry_out`]. Collective.
    ///
    /// # Arguments
    /// * `comm` - the application's communicator, rank r holding the r-th
    ///   part of the items;
    /// * `data`, `offsets` - this rank's items (see [`crate::items`]);
    /// * `weights` - each item's cost (finite, >= 0), as many as items;
    /// * `compute_seconds` - this rank's compute time in the iteration
    ///   (finite, >= 0; halo exchanges excluded);
    /// * `remaining` - iterations still to run (the same on every rank).
    ///
    /// # Returns
    /// The decision ([`WeightedDecision`]); `data`, `offsets` and `weights`
    /// hold this rank's items after it.
    ///
    /// # Errors
    /// As [`WeightedBalancer::decide`] (the offsets must also end at
    /// `data.len()`) and [`WeightedBalancer::carry_out`]. On every rank alike;
    /// nothing changes.
    ///
    /// # Complexity
    /// That of [`WeightedBalancer::decide`], plus the move when it runs.
    pub fn step<T: Pod, C: Communicator>(
        &mut self,
        comm: &C,
        (data, offsets, weights): (&mut Vec<T>, &mut Vec<u64>, &mut Vec<f64>),
        compute_seconds: f64,
        remaining: u64,
    ) -> Result<WeightedDecision, RunError> {
        let elements = Some(data.len() as u64);
        let decision = self.decide(
            comm,
            (offsets, weights, size_of::<T>(), elements),
            compute_seconds,
            remaining,
        )?;
        if decision.redistribute {
            self.carry_out(comm, (data, offsets, weights), &decision)?;
        }
        Ok(decision)
    }

    /// Decides, without moving anything: learns every rank's seconds per unit
    /// of weight from its `compute_seconds` and `weights`, finds the
    /// least-moving partition within the tolerance of the optimum, and says
    /// whether moving to it pays over the `remaining` iterations (the time it
    /// saves against the move's time on the links). Collective.
    ///
    /// # Arguments
    /// * `offsets`, `weights` - this rank's items' offsets (from 0, never
    ///   decreasing) and costs (finite, >= 0; one per item);
    /// * `element_bytes` - bytes of an element of the data (the sizes of the
    ///   items in bytes are their offsets' differences times it);
    /// * `elements` - the data's length in elements, when known (checked
    ///   against the last offset);
    /// * `compute_seconds`, `remaining` - as for [`WeightedBalancer::step`].
    ///
    /// # Errors
    /// [`RunError::InvalidItems`] on the rank whose arguments are wrong,
    /// [`RunError::PeerRefused`] on the others; [`RunError::Mismatch`] when
    /// `remaining` or the balancers differ between ranks;
    /// [`RunError::InvalidPlan`] when no rank has measured a speed yet or the
    /// partition fails. On every rank alike.
    ///
    /// # Complexity
    /// O(n) per rank for n items in all (every item's weight and size
    /// gathered), plus [`partition_with_movement`].
    pub fn decide<C: Communicator>(
        &mut self,
        comm: &C,
        (offsets, weights, element_bytes, elements): (&[u64], &[f64], usize, Option<u64>),
        compute_seconds: f64,
        remaining: u64,
    ) -> Result<WeightedDecision, RunError> {
        let (rank, p) = (comm.rank() as usize, comm.size() as usize);
        let local = self.check(rank, (elements, offsets, weights), compute_seconds);
        let setting = fingerprint(&format!(
            "weighted {} {:?} {remaining} {element_bytes}",
            self.tolerance, self.links
        ));
        agree_arguments(comm, local, setting).map_err(|refusal| match refusal {
            Refusal::Local(e) => e,
            Refusal::Refused(Refused { rank }) => RunError::PeerRefused { rank },
            Refusal::Mismatch => RunError::Mismatch,
        })?;
        // Every rank's items and seconds, and every item's weight and size.
        // With them, how long this rank's last move took.
        let k = weights.len() as u64;
        let mut all = vec![[0u64; 3]; p];
        comm.all_gather_into(
            &[
                k,
                compute_seconds.to_bits(),
                self.last_move_seconds.to_bits(),
            ][..],
            bytemuck::cast_slice_mut::<_, u64>(&mut all[..]),
        );
        let counts: Vec<u64> = all.iter().map(|a| a[0]).collect();
        let seconds: Vec<f64> = all.iter().map(|a| f64::from_bits(a[1])).collect();
        let last_move = all.iter().map(|a| f64::from_bits(a[2])).fold(0.0, f64::max);
        let all_weights = gather_varying(comm, weights, &counts)?;
        let element = element_bytes as u64;
        let sizes: Vec<u64> = offsets
            .windows(2)
            .map(|w| (w[1] - w[0]).saturating_mul(element))
            .collect();
        let all_sizes = gather_varying(comm, &sizes, &counts)?;
        let current = boundaries(&counts).ok_or_else(|| RunError::InvalidPlan {
            reason: "the ranks hold more than 2^64 - 1 items".to_string(),
        })?;
        // Each rank's weight and seconds per unit of weight.
        let loads: Vec<f64> = (0..p)
            .map(|r| {
                all_weights[current[r] as usize..current[r + 1] as usize]
                    .iter()
                    .sum()
            })
            .collect();
        let speeds = self.learn(&seconds, &loads)?;
        let moving = partition_with_movement(
            &all_weights,
            &speeds,
            &current,
            self.tolerance,
            Some(&all_sizes),
        )
        .map_err(|e| RunError::InvalidPlan {
            reason: format!("the weighted partition: {e}"),
        })?;
        let current_seconds = (0..p).map(|r| loads[r] * speeds[r]).fold(0.0, f64::max);
        // The move's time: on the links, and at least what the last move took
        // (its checks and agreements included), the slowest rank's.
        let move_seconds = self
            .move_seconds(&current, &moving.cuts, &all_sizes)
            .max(last_move);
        let saved_seconds = (current_seconds - moving.bottleneck).max(0.0) * remaining as f64;
        let pays = moving.moved_bytes + moving.moved_items > 0 && saved_seconds > move_seconds;
        let cuts = if pays {
            moving.cuts.clone()
        } else {
            current.clone()
        };
        self.current = Some(current);
        Ok(WeightedDecision {
            redistribute: pays,
            first: cuts[rank],
            items: cuts[rank + 1] - cuts[rank],
            cuts,
            current_seconds,
            balanced_seconds: moving.bottleneck,
            optimum_seconds: moving.optimum.bottleneck,
            moved_items: moving.moved_items,
            moved_bytes: moving.moved_bytes,
            move_seconds,
            saved_seconds,
        })
    }

    /// Why `rank`'s arguments are wrong, if they are: its data's `elements`,
    /// `offsets` and `weights`, and its `compute_seconds`. O(k).
    fn check(
        &self,
        rank: usize,
        (elements, offsets, weights): (Option<u64>, &[u64], &[f64]),
        compute_seconds: f64,
    ) -> Result<(), RunError> {
        let bad_offsets = offsets.first() != Some(&0)
            || offsets.windows(2).any(|w| w[0] > w[1])
            || elements.is_some_and(|e| offsets.last() != Some(&e));
        let problem = if bad_offsets {
            Some(match elements {
                Some(e) => format!(
                    "the offsets must go from 0 to the data's {e} elements, never decreasing"
                ),
                None => "the offsets must start at 0 and never decrease".to_string(),
            })
        } else if weights.len() + 1 != offsets.len() {
            Some(format!(
                "{} weights for {} items",
                weights.len(),
                offsets.len() - 1
            ))
        } else if let Some(i) = weights.iter().position(|w| !(w.is_finite() && *w >= 0.0)) {
            Some(format!(
                "the weight of item {i} is {}: weights are finite and >= 0",
                weights[i]
            ))
        } else if !(compute_seconds.is_finite() && compute_seconds >= 0.0) {
            Some(format!(
                "the compute time is {compute_seconds}: finite and >= 0"
            ))
        } else if !(self.tolerance.is_finite() && self.tolerance >= 0.0) {
            Some(format!(
                "the tolerance is {}: finite and >= 0",
                self.tolerance
            ))
        } else {
            None
        };
        match problem {
            None => Ok(()),
            Some(reason) => Err(RunError::InvalidItems { rank, reason }),
        }
    }

    /// Every rank's seconds per unit of weight: measured where a rank had
    /// weight and time, else the one learned before, else the median of the
    /// others (a rank with no work yet is taken as a typical one).
    fn learn(&mut self, seconds: &[f64], loads: &[f64]) -> Result<Vec<f64>, RunError> {
        let p = seconds.len();
        let mut speeds = self.speeds.clone().unwrap_or_else(|| vec![f64::NAN; p]);
        speeds.resize(p, f64::NAN);
        for r in 0..p {
            if loads[r] > 0.0 && seconds[r] > 0.0 {
                speeds[r] = seconds[r] / loads[r];
            }
        }
        let mut known: Vec<f64> = speeds.iter().copied().filter(|s| s.is_finite()).collect();
        if known.is_empty() {
            return Err(RunError::InvalidPlan {
                reason: "no rank has both weight and compute time yet: no speed to balance with"
                    .to_string(),
            });
        }
        known.sort_by(f64::total_cmp);
        let median = known[known.len() / 2];
        for s in speeds.iter_mut().filter(|s| !s.is_finite()) {
            *s = median;
        }
        self.speeds = Some(speeds.clone());
        Ok(speeds)
    }

    /// The estimated time of the chain move from `current` to `new` cuts of
    /// items of `sizes` bytes: the slowest link's start-up plus its bytes
    /// (links work at once, pipelined). O(n + p).
    fn move_seconds(&self, current: &[u64], new: &[u64], sizes: &[u64]) -> f64 {
        let prefix =
            boundaries(sizes).expect("the partition checked that the sizes add up below 2^63");
        let p = current.len() - 1;
        (0..p.saturating_sub(1))
            .map(|i| {
                let (a, b) = (current[i + 1] as usize, new[i + 1] as usize);
                let bytes = prefix[a.max(b)] - prefix[a.min(b)];
                let link = if a > b {
                    self.links.to_succ.get(i)
                } else {
                    self.links.to_pred.get(i + 1)
                };
                match (bytes, link) {
                    (0, _) => 0.0,
                    (_, Some(l)) => l.seconds(bytes as usize),
                    (_, None) => 0.0,
                }
            })
            .fold(0.0, f64::max)
    }

    /// Moves the items (`data`, `offsets`) and their `weights` to the cuts of
    /// `decision` (the last one [`WeightedBalancer::decide`] made): the
    /// weights first (a copy, along the items' flows), then the items
    /// ([`redistribute_items`]); the caller's weights change only once both
    /// have committed. Collective.
    ///
    /// # Errors
    /// [`RunError::InvalidPlan`] without a decision before; those of
    /// [`redistribute`] and [`redistribute_items`]. On every rank alike;
    /// nothing changes.
    pub fn carry_out<T: Pod, C: Communicator>(
        &mut self,
        comm: &C,
        (data, offsets, weights): (&mut Vec<T>, &mut Vec<u64>, &mut Vec<f64>),
        decision: &WeightedDecision,
    ) -> Result<(), RunError> {
        let current = self.current.clone().ok_or_else(|| RunError::InvalidPlan {
            reason: "carry_out needs a decision of this balancer first".to_string(),
        })?;
        let cuts = &decision.cuts;
        let counts: Vec<u64> = current.windows(2).map(|w| w[1] - w[0]).collect();
        let flows = chain_flows(&current, cuts);
        let mut moved = weights.clone();
        let options = Options {
            fault: None,
            record: false,
            ..self.options.clone()
        };
        let started = std::time::Instant::now();
        redistribute(comm, &counts, &flows, &mut moved, &options)?;
        let report = redistribute_items(comm, data, offsets, cuts, &self.options)?;
        self.last_move_seconds = started.elapsed().as_secs_f64();
        *weights = moved;
        self.last = Some(report);
        self.current = Some(cuts.clone());
        Ok(())
    }
}

/// Every rank's `mine`, `counts[r]` values from rank r, in rank order
/// (`MPI_Allgatherv`).
fn gather_varying<T: Pod + mpi::traits::Equivalence, C: Communicator>(
    comm: &C,
    mine: &[T],
    counts: &[u64],
) -> Result<Vec<T>, RunError> {
    let too_many = || RunError::InvalidPlan {
        reason: "more items than one MPI collective can gather (2^31 - 1)".to_string(),
    };
    let total: u64 = counts.iter().sum();
    if total > Count::MAX as u64 {
        return Err(too_many());
    }
    let sizes: Vec<Count> = counts.iter().map(|&c| c as Count).collect();
    let displs: Vec<Count> = sizes
        .iter()
        .scan(0, |at, &c| {
            let here = *at;
            *at += c;
            Some(here)
        })
        .collect();
    let mut all = vec![T::zeroed(); total as usize];
    let mut partition = PartitionMut::new(&mut all[..], sizes, &displs[..]);
    comm.all_gather_varcount_into(mine, &mut partition);
    Ok(all)
}
