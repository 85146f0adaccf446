//! # hetbal-mpi
//!
//! Runs hetbal's plans over MPI with real data. [`ring::redistribute`] moves the
//! items of a ring plan between the ranks of a communicator: nonblocking sends and
//! receives in chunks, in both directions, forwarding items as soon as they have
//! arrived, keeping the global cyclic order of the items. Items are any
//! plain-old-data type ([`bytemuck::Pod`]; `*_bytes` variants take raw bytes).
//! Nothing is lost, and there is no second copy of the data: the rank's own
//! vector grows in place, its items shift once to leave room for those coming
//! in front (the layout: received before, own, received after), the own items
//! are never written until the commit, and every rank checks counts and an
//! order-aware checksum agreed through a collective before any rank commits
//! (the new items then move in place); on any mismatch or failure every rank
//! keeps its original items and gets an error. The vector keeps its capacity:
//! the next redistribution receives into memory already touched.
//! [`scatter::scatter_in_order`] (balanced scatters) and
//! [`genblock::run_steps`] (GEN_BLOCK schedules) follow the same protocol ([`protocol`]). All three take
//! the same [`Options`]: the message size, a fault to inject on purpose
//! ([`Fault`]), and emulated links that pace every item to the plan's costs
//! ([`Pacing`], built by each operation's `pacing_from_plan`).
//!
//! Rings with start-ups (a cost per message, `l_succ` and `l_pred` of
//! [`hetbal::ring::RingInstance`]) run their plan's transfers
//! ([`Options::batches`], [`ring::batches_from_plan`]): one MPI message per
//! planned transfer over a link with a start-up, sent once all its items are
//! held; with emulated links each message is delivered its start-up plus its
//! items' time after it begins.
//!
//! The `hetbal-mpi` binary runs them on synthetic items that every rank checks
//! one by one (its `ring`, `scatter` and `genblock` commands), and
//! [`balancer::Balancer`] on a Jacobi relaxation (its `jacobi` command);
//! [`rebalances`] runs many successive rebalances of one synthetic application.
//!
//! [`balancer::Balancer`] is the API for iterative applications: fed with each
//! rank's compute time after each iteration, it decides with a policy of
//! `hetbal::iterative` (adaptive by default; the decisions are those of the
//! library's [`hetbal::iterative::online::Decider`], without communication)
//! whether moving the data pays,
//! and moves it (see the `jacobi` command of the `hetbal-mpi` binary). On links
//! it measured it plans each move with their start-ups and predicts its time.
//!
//! [`links::measure_ring_links`] measures every ring link in both directions
//! (start-up and time per byte, from neighbour ping-pongs), so that no one has to
//! give link costs: the balancer can measure them itself.
//!
//! [`timeline`] records when every message really moved (with
//! [`Options::record`]), gathers the records at rank 0 and draws them beside the
//! plan's, one lane per rank: the `--gantt` option of the binary's commands.
//!
//! [`memory::peak_resident_bytes`] tells a rank's peak resident memory, which the
//! JSON run report gives for every rank.
//!
//! The crate needs an MPI library (OpenMPI or MPICH) and stays out of the default
//! build of the workspace.
#![deny(missing_docs)]

mod arena;
pub mod balancer;
pub mod buffer;
pub mod checksum;
pub mod comm;
pub mod genblock;
pub mod items;
pub mod links;
pub mod memory;
pub mod pacing;
pub mod protocol;
pub mod rebalances;
pub mod ring;
pub mod scatter;
pub mod timeline;
pub mod weighted;

/// The user guide's page on running plans over MPI (docs/guide), whose Rust
/// example is compiled as a doctest of this crate (`no_run`: it needs mpirun;
/// tests/typed.rs runs the same calls under mpirun).
#[cfg(doctest)]
#[doc = include_str!("../../../docs/guide/src/mpi-runtime.md")]
mod guide_mpi_runtime {}

pub use pacing::Pacing;
pub use protocol::Fault;

use std::fmt;

use protocol::MAX_MESSAGE_BYTES;

/// How a ring redistribution ([`ring::redistribute`]), a scatter
/// ([`scatter::scatter_in_order`]) or a GEN_BLOCK redistribution
/// ([`genblock::run_steps`]) runs: the message size, a fault to inject, emulated
/// links. Every rank passes the same options.
///
/// # Example
/// ```
/// use hetbal_mpi::{Fault, Options};
/// let options = Options { fault: Some((2, Fault::Short)), ..Options::default() };
/// assert_eq!(options.chunk_bytes, 1 << 20);
/// assert_eq!(options.chunk_items(1000), 1048);
/// ```
#[derive(Clone, Debug)]
pub struct Options {
    /// Bytes of items per message: more items go in several messages (at least one
    /// item each; capped below the 2^31 limit of MPI counts,
    /// [`MAX_MESSAGE_BYTES`]). A scatter uses one
    /// MPI_Scatterv when all the root's items fit in one message, and otherwise
    /// sends each share in turn, in chunks. Default 1 MiB.
    pub chunk_bytes: usize,
    /// Make one rank misbehave on purpose, `(rank of the communicator, fault)`, to
    /// check that nothing is lost; which message it spoils is said by each
    /// operation (see [`Fault`]).
    pub fault: Option<(usize, Fault)>,
    /// Emulated links: every item leaves once the plan says its transfer has
    /// ended (with [`Options::batches`], a planned message once its start-up
    /// and items' time have passed since it began: see [`pacing`]). Built from
    /// the plan by the operation's `pacing_from_plan`
    /// ([`ring::pacing_from_plan`], [`scatter::pacing_from_plan`],
    /// [`genblock::pacing_from_plan`]). `None`: as fast as MPI goes.
    pub pacing: Option<Pacing>,
    /// Record every message this rank sends or receives, with its wall-clock
    /// start and end, in the operation's report (`messages`), for a Gantt chart
    /// of the run ([`timeline`]). Default `false`: nothing is recorded and no
    /// clock is read.
    pub record: bool,
    /// Ring redistributions only: the plan's transfers on every link, for
    /// rings with start-ups ([`ring::batches_from_plan`]). Each planned
    /// transfer over a link with a start-up then goes as one MPI message, sent
    /// once all its items are held (with [`Options::pacing`]: also not before
    /// its planned start, and delivered a start-up plus its items' time after
    /// it is sent); transfers over links without one go in pieces of
    /// [`Options::chunk_bytes`]. `None` (default): items go in chunks as they
    /// are held, the papers' model, where splitting a transfer costs nothing.
    pub batches: Option<ring::Batches>,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            chunk_bytes: 1 << 20,
            fault: None,
            pacing: None,
            record: false,
            batches: None,
        }
    }
}

impl Options {
    /// Items per message for items of `item_bytes` bytes (0 counts as 1): as many
    /// as fit in [`Options::chunk_bytes`] and below the MPI limit, at least one.
    ///
    /// Complexity: O(1).
    pub fn chunk_items(&self, item_bytes: usize) -> usize {
        (self.chunk_bytes.min(MAX_MESSAGE_BYTES) / item_bytes.max(1)).max(1)
    }

    /// The fault this rank injects, if any.
    pub(crate) fn fault_of(&self, rank: usize) -> Option<Fault> {
        self.fault.and_then(|(r, f)| (r == rank).then_some(f))
    }
}

/// What a failed run's message adds about item buffers that give back what
/// they send ([`buffer::ItemBuffer::set_give_back_sent`]).
const GIVEN_BACK: &str = " (those not sent, where an item buffer gives back what it sends)";

/// Why a distributed operation did not commit. Every rank returns an error when any
/// rank fails, and every rank then still holds its original items (a rank whose
/// [`ItemBuffer`](buffer::ItemBuffer) gives back what it sends, as
/// [`buffer::ItemBuffer::set_give_back_sent`] says: those it had not sent).
#[derive(Clone, Debug, PartialEq)]
pub enum RunError {
    /// The communicator's size differs from the number of processors of the plan.
    WorldSize {
        /// Ranks in the communicator.
        ranks: usize,
        /// Processors in the instance.
        processors: usize,
    },
    /// The caller's items do not match the plan's load on this rank.
    WrongLoad {
        /// This rank.
        rank: usize,
        /// Bytes the caller gave.
        bytes: usize,
        /// Bytes the plan expects (load × item size).
        expected: u128,
    },
    /// A message broke the protocol (wrong length, more items than announced, a
    /// link that ended early or late).
    Protocol {
        /// The rank that saw it.
        rank: usize,
        /// What was wrong.
        reason: String,
    },
    /// The transfers ended but the checks failed somewhere: counts, or the global
    /// checksum of items and positions (an item corrupted, lost or misplaced).
    Verification {
        /// Ranks whose local checks failed.
        failed_ranks: u64,
        /// True when the global checksum differed.
        checksum_differs: bool,
    },
    /// A rank reported a failure before the commit (for example an injected one).
    PeerFailed {
        /// Ranks that reported failure.
        failed_ranks: u64,
    },
    /// The plan given does not fit the data (found by every rank alike, before
    /// anything moves).
    InvalidPlan {
        /// What is wrong.
        reason: String,
    },
    /// Another rank refused its arguments before anything moved (its own error
    /// says why); found by every rank alike.
    PeerRefused {
        /// The first rank that refused.
        rank: usize,
    },
    /// The ranks were given different arguments (plan, loads, flows, item
    /// size or options): every rank must pass the same. Found by every rank
    /// alike, before anything moved.
    Mismatch,
    /// The balancer cannot decide (found by every rank alike, before anything
    /// moves).
    Decide(hetbal::iterative::online::DecideError),
    /// A rank's variable-size items or cuts are wrong ([`items::redistribute_items`]:
    /// offsets not starting at 0, decreasing or not ending at the data's
    /// length; cuts of the wrong length, decreasing or not from 0); the other
    /// ranks get [`RunError::PeerRefused`]. Nothing moved.
    InvalidItems {
        /// The rank whose arguments are wrong.
        rank: usize,
        /// What is wrong.
        reason: String,
    },
}

impl fmt::Display for RunError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            RunError::WorldSize { ranks, processors } => write!(
                f,
                "the communicator has {ranks} ranks but the instance has {processors} processors (start it with mpirun -np {processors})"
            ),
            RunError::WrongLoad { rank, bytes, expected } => write!(
                f,
                "rank {rank} holds {bytes} bytes but the plan expects {expected} (its load times the item size)"
            ),
            RunError::Protocol { rank, reason } => {
                write!(f, "rank {rank}: protocol error: {reason}; nothing committed")
            }
            RunError::Verification {
                failed_ranks,
                checksum_differs,
            } => write!(
                f,
                "verification failed ({failed_ranks} rank(s) saw wrong counts{}); every rank kept its original items{GIVEN_BACK}",
                if *checksum_differs {
                    ", and the global checksum of items and positions differs"
                } else {
                    ""
                }
            ),
            RunError::PeerFailed { failed_ranks } => write!(
                f,
                "{failed_ranks} rank(s) reported a failure before the commit; every rank kept its original items{GIVEN_BACK}"
            ),
            RunError::InvalidPlan { reason } => {
                write!(f, "invalid plan: {reason}; nothing moved")
            }
            RunError::PeerRefused { rank } => write!(
                f,
                "rank {rank} refused its arguments (its own error says why); nothing moved"
            ),
            RunError::Mismatch => write!(
                f,
                "the ranks were given different arguments (the plan, loads, flows, item size or \
                 options differ between ranks: every rank must pass the same); nothing moved"
            ),
            RunError::Decide(e) => write!(f, "the balancer cannot decide: {e}; nothing moved"),
            RunError::InvalidItems { rank, reason } => {
                write!(f, "rank {rank}: invalid items: {reason}; nothing moved")
            }
        }
    }
}

impl std::error::Error for RunError {}

impl RunError {
    /// True when the error is the caller's (wrong or mismatched arguments,
    /// found before anything moved); false for a run that failed (a transfer,
    /// a check, a peer). The bindings report the first kind as bad input.
    ///
    /// # Example
    /// ```
    /// use hetbal_mpi::RunError;
    /// assert!(RunError::Mismatch.is_input());
    /// assert!(!RunError::PeerFailed { failed_ranks: 1 }.is_input());
    /// ```
    pub fn is_input(&self) -> bool {
        matches!(
            self,
            RunError::WorldSize { .. }
                | RunError::WrongLoad { .. }
                | RunError::InvalidPlan { .. }
                | RunError::PeerRefused { .. }
                | RunError::Mismatch
                | RunError::Decide(_)
                | RunError::InvalidItems { .. }
        )
    }
}
