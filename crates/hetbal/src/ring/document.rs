//! The plan document: flows, schedule, bound and the proof status.

use std::fmt;

use serde::{Deserialize, Serialize};

use crate::ring::RingKind;
use crate::ring::{Schedule, ScheduleReport, Transfer, Violation};

/// Net items moved over one ring link in one direction.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Flow {
    /// Sending processor.
    pub from: usize,
    /// Receiving processor (a neighbour).
    pub to: usize,
    /// Number of items.
    pub items: u64,
}

/// The ring planners of hetbal, by the name they carry in plans and on the command
/// line.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum RingAlgorithm {
    /// The paper's Algorithm 1 (homogeneous unidirectional rings): every processor
    /// sends its flow back to back from time 0.
    UnidirectionalHomogeneous,
    /// The paper's Algorithm 2 (heterogeneous unidirectional rings): every processor
    /// sends its flow one item at a time, as soon as it holds one.
    UnidirectionalHeterogeneous,
    /// Algorithm 2's flows and makespan with items grouped into as few back-to-back
    /// batches as the successors' needs allow ([`crate::ring::batched_schedule`]).
    UnidirectionalBatched,
    /// Unidirectional rings whose optimal schedules need more transfers than
    /// [`crate::ring::MAX_TRANSFERS`]: the items in convoys, each one run per link,
    /// as early as possible; within the limit, the gap to the bound measured.
    UnidirectionalConvoys,
    /// Homogeneous bidirectional rings: one back-to-back block per link, at Lemma 6
    /// on every ring, tight loads included ([`crate::ring::block_schedule`], with
    /// the proof).
    BidirectionalBlocks,
    /// Lemma 9 on light System 6 flows (bidirectional rings): each processor sends
    /// forward from time 0, then backward as soon as the receiver is free.
    BidirectionalLemma9,
    /// Store-and-forward list scheduling of System 6 flows, driven by per-item due
    /// times ([`crate::ring::list_schedule`]).
    BidirectionalList,
    /// Batch-level scheduling of System 6 flows segment by segment (each maximal
    /// one-direction path scheduled as a unidirectional ring, sources and sinks
    /// shared in order): fast at any size, not always at the bound.
    BidirectionalSegments,
    /// Exact search over every schedule in discrete time, by iterative deepening
    /// from System 6 with lower bounds on what remains
    /// ([`crate::ring::exact_schedule`]): optimal, for rings of at most 16
    /// processors and 255 items whose costs are multiples of a unit 2^-k.
    ExactSearch,
    /// The paper's System 8 (System 6 restricted to light circulations) scheduled by
    /// Lemma 9: a baseline, not always feasible, not always optimal.
    System8,
    /// The paper's Algorithm 3 (homogeneous bidirectional rings), a reference: its
    /// schedule can send items not yet held, and the plan then fails validation.
    PaperAlgorithm3,
    /// Rings with start-ups (model.md, "Start-ups"): every link sends its flow in
    /// messages sized to trade pipelining against start-ups, each as soon as
    /// possible ([`crate::ring::startup_schedule`]), or the papers' plan timed under
    /// the start-ups when that ends earlier. On a ring without start-ups, the
    /// papers' plan.
    StartupBatches,
}

impl RingAlgorithm {
    /// Every algorithm, in the order of the docs.
    pub const ALL: [RingAlgorithm; 12] = [
        RingAlgorithm::UnidirectionalHomogeneous,
        RingAlgorithm::UnidirectionalHeterogeneous,
        RingAlgorithm::UnidirectionalBatched,
        RingAlgorithm::UnidirectionalConvoys,
        RingAlgorithm::BidirectionalBlocks,
        RingAlgorithm::BidirectionalLemma9,
        RingAlgorithm::BidirectionalList,
        RingAlgorithm::BidirectionalSegments,
        RingAlgorithm::ExactSearch,
        RingAlgorithm::System8,
        RingAlgorithm::PaperAlgorithm3,
        RingAlgorithm::StartupBatches,
    ];

    /// The name used in plans and on the command line.
    pub fn name(self) -> &'static str {
        match self {
            RingAlgorithm::UnidirectionalHomogeneous => "unidirectional-homogeneous",
            RingAlgorithm::UnidirectionalHeterogeneous => "unidirectional-heterogeneous",
            RingAlgorithm::UnidirectionalBatched => "unidirectional-batched",
            RingAlgorithm::UnidirectionalConvoys => "unidirectional-convoys",
            RingAlgorithm::BidirectionalBlocks => "bidirectional-blocks",
            RingAlgorithm::BidirectionalLemma9 => "bidirectional-lemma9",
            RingAlgorithm::BidirectionalList => "bidirectional-list",
            RingAlgorithm::BidirectionalSegments => "bidirectional-segments",
            RingAlgorithm::ExactSearch => "exact-search",
            RingAlgorithm::System8 => "system8",
            RingAlgorithm::PaperAlgorithm3 => "paper-alg3",
            RingAlgorithm::StartupBatches => "startup-batches",
        }
    }

    /// Parses a name given by [`RingAlgorithm::name`].
    pub fn from_name(name: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|a| a.name() == name)
    }

    /// What the algorithm does, in a sentence for reports.
    ///
    /// # Example
    /// ```
    /// use hetbal::ring::RingAlgorithm;
    /// let a = RingAlgorithm::from_name("exact-search").unwrap();
    /// assert!(a.description().ends_with("optimal"));
    /// ```
    pub fn description(self) -> &'static str {
        match self {
            RingAlgorithm::UnidirectionalHomogeneous => {
                "the paper's Algorithm 1: every flow sent back to back from time 0"
            }
            RingAlgorithm::UnidirectionalHeterogeneous => {
                "the paper's Algorithm 2: every item sent as soon as possible"
            }
            RingAlgorithm::UnidirectionalBatched => {
                "Algorithm 2's optimal flows and makespan, items grouped in few batches"
            }
            RingAlgorithm::UnidirectionalConvoys => {
                "items in convoys, one run per link each, as early as possible: within the transfer limit, not always optimal"
            }
            RingAlgorithm::BidirectionalBlocks => {
                "one back-to-back block per link (homogeneous ring): at Lemma 6, optimal"
            }
            RingAlgorithm::BidirectionalLemma9 => {
                "Lemma 9 on light System 6 flows: forward from 0, then backward as soon as possible"
            }
            RingAlgorithm::BidirectionalList => {
                "System 6 flows, list-scheduled item by item with per-item due times"
            }
            RingAlgorithm::BidirectionalSegments => {
                "System 6 flows, scheduled in batches path by path (each one-direction path as a unidirectional ring)"
            }
            RingAlgorithm::ExactSearch => {
                "search over every schedule, deepening the horizon from System 6, pruned by bounds on what remains: optimal"
            }
            RingAlgorithm::System8 => {
                "the paper's System 8 (light flows only) scheduled by Lemma 9: a baseline"
            }
            RingAlgorithm::PaperAlgorithm3 => {
                "the paper's Algorithm 3 as printed: a reference whose schedules can be invalid"
            }
            RingAlgorithm::StartupBatches => {
                "messages sized per link to trade pipelining against start-ups, each sent as soon as possible"
            }
        }
    }
}

impl fmt::Display for RingAlgorithm {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A redistribution plan (formats.md, "Ring redistribution plan").
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RingPlan {
    /// The ring kind of the instance.
    pub ring: RingKind,
    /// Name of the algorithm that made the plan.
    pub algorithm: String,
    /// Time at which the schedule's last transfer ends (measured on the schedule).
    pub makespan: f64,
    /// The strongest proven lower bound on the makespan of any schedule.
    pub lower_bound: f64,
    /// True only when proven: the schedule is valid and meets the lower bound.
    pub optimal: bool,
    /// True when no processor sends more items than it initially holds.
    pub light: bool,
    /// Net items per link and direction (non-zero only).
    pub flows: Vec<Flow>,
    /// The schedule, sorted by start then sender.
    pub transfers: Vec<Transfer>,
    /// What the validator found on the schedule (per-processor sends, receives and
    /// busy times): [`plan`](crate::ring::plan) validates once and hands the report
    /// on, so callers need not validate again. Not part of the plan document
    /// (formats.md): a plan read back from JSON has an empty report until checked
    /// with [`validate`](crate::ring::validate).
    #[serde(skip)]
    pub report: ScheduleReport,
}

impl RingPlan {
    /// The schedule of this plan.
    pub fn schedule(&self) -> Schedule {
        Schedule {
            transfers: self.transfers.clone(),
        }
    }
}

/// Why a ring could not be planned.
#[derive(Clone, Debug, PartialEq)]
pub enum PlanError {
    /// The algorithm asked for does not apply to this ring.
    NotApplicable {
        /// The algorithm asked for.
        algorithm: RingAlgorithm,
        /// Why it does not apply.
        reason: String,
    },
    /// The times of a plan would overflow f64: items times costs (and
    /// start-ups) beyond the largest f64. Bad input, not a bug: measure time
    /// in a larger unit, so that the costs are smaller numbers.
    TimesOverflow {
        /// What overflows, in words.
        what: String,
    },
    /// The planner produced a schedule that the validator rejects (a bug: please
    /// report it with the instance).
    InvalidSchedule {
        /// The algorithm at fault.
        algorithm: RingAlgorithm,
        /// What the validator found.
        violations: Vec<Violation>,
    },
}

impl fmt::Display for PlanError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            PlanError::NotApplicable { algorithm, reason } => {
                write!(f, "algorithm {algorithm} does not apply: {reason}")
            }
            PlanError::TimesOverflow { what } => write!(
                f,
                "{what}: the times of the plan would overflow (beyond {:e} s); measure time in a larger unit, so that the costs are smaller numbers",
                f64::MAX
            ),
            PlanError::InvalidSchedule {
                algorithm,
                violations,
            } => {
                if *algorithm == RingAlgorithm::PaperAlgorithm3 {
                    write!(
                        f,
                        "algorithm {algorithm} produced an invalid schedule (the paper's rules ignore store and forward):"
                    )?;
                } else {
                    write!(
                        f,
                        "algorithm {algorithm} produced an invalid schedule (a bug in hetbal):"
                    )?;
                }
                for v in violations {
                    write!(f, "\n  {v}")?;
                }
                Ok(())
            }
        }
    }
}

impl std::error::Error for PlanError {}
