//! The nothing-lost protocol shared by ring redistributions, scatters and
//! GEN_BLOCK redistributions: incoming items go to the spare capacity of the
//! receiving rank's vector, beyond its own items (intact), then every rank
//! checks its counts and its part of an order-aware checksum
//! ([`crate::checksum`]), and one collective decides for all ranks whether they
//! commit; on any failure every rank keeps its original items and gets an error.
//! Also the deliberate faults that prove it ([`Fault`]).

use mpi::collective::SystemOperation;
use mpi::traits::{Communicator, CommunicatorCollectives};

use crate::checksum::Checksum;
use crate::RunError;

/// MPI counts are C ints: every message of the three operations stays below this
/// many bytes.
pub const MAX_MESSAGE_BYTES: usize = (1 << 31) - 1;

/// A deliberate misbehaviour of one rank (`--inject-fault`), to check that nothing
/// is lost. Which message a fault spoils is said by each operation (ring: the
/// rank's first non-empty message; scatter: the root's first message to the rank;
/// GEN_BLOCK: the rank's first message to another rank).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Fault {
    /// Flip one byte of a message.
    Corrupt,
    /// Send a message one item short of what its receiver expects.
    Short,
    /// Report a failure just before the commit.
    FailBeforeCommit,
}

impl Fault {
    /// Every fault, in the order the `hetbal-mpi` binary lists them.
    pub const ALL: [Fault; 3] = [Fault::Corrupt, Fault::Short, Fault::FailBeforeCommit];

    /// The fault's name (`corrupt`, `short`, `fail-before-commit`), as
    /// `--inject-fault` takes it.
    pub fn name(self) -> &'static str {
        match self {
            Fault::Corrupt => "corrupt",
            Fault::Short => "short",
            Fault::FailBeforeCommit => "fail-before-commit",
        }
    }

    /// The fault of a name, if any.
    ///
    /// # Example
    /// ```
    /// use hetbal_mpi::protocol::Fault;
    /// assert_eq!(Fault::from_name("short"), Some(Fault::Short));
    /// assert_eq!(Fault::from_name("fail-before-commit"), Some(Fault::FailBeforeCommit));
    /// assert_eq!(Fault::from_name("lost"), None);
    /// ```
    pub fn from_name(name: &str) -> Option<Fault> {
        Fault::ALL.into_iter().find(|f| f.name() == name)
    }

    /// True for the faults that spoil a message ([`Fault::Corrupt`],
    /// [`Fault::Short`]); false for [`Fault::FailBeforeCommit`].
    ///
    /// # Example
    /// ```
    /// use hetbal_mpi::protocol::Fault;
    /// assert!(Fault::Short.spoils_a_message());
    /// assert!(!Fault::FailBeforeCommit.spoils_a_message());
    /// ```
    pub fn spoils_a_message(self) -> bool {
        self != Fault::FailBeforeCommit
    }
}

/// The bytes a faulty rank sends instead of `data` (a copy: the items stay
/// intact): one byte flipped ([`Fault::Corrupt`]) or the last item dropped
/// ([`Fault::Short`]); `data` itself otherwise. `data` holds whole items.
///
/// Complexity: O(data.len()).
pub(crate) fn spoil(fault: Fault, data: &[u8], item_bytes: usize) -> Vec<u8> {
    match fault {
        Fault::Corrupt => {
            let mut copy = data.to_vec();
            if let Some(byte) = copy.first_mut() {
                *byte ^= 0x5a;
            }
            copy
        }
        Fault::Short => data[..data.len().saturating_sub(item_bytes.max(1))].to_vec(),
        Fault::FailBeforeCommit => data.to_vec(),
    }
}

/// `Ok` when `bytes` (the items a rank holds) are the `expected` bytes,
/// [`RunError::WrongLoad`] otherwise.
pub(crate) fn sizes_match(rank: usize, bytes: usize, expected: u128) -> Result<(), RunError> {
    if u128::try_from(bytes).is_ok_and(|b| b == expected) {
        Ok(())
    } else {
        Err(RunError::WrongLoad {
            rank,
            bytes,
            expected,
        })
    }
}

/// Before anything moves, every rank learns whether every rank can start: `Ok` on
/// every rank, or an error on every rank (this rank's own when `local` is one,
/// [`RunError::PeerFailed`] otherwise). Collective over `comm`.
///
/// # Complexity
/// One all-reduce of a word.
pub(crate) fn agree_before_start<C: Communicator>(
    comm: &C,
    local: Result<(), RunError>,
) -> Result<(), RunError> {
    let mut failed = 0u64;
    comm.all_reduce_into(
        &u64::from(local.is_err()),
        &mut failed,
        SystemOperation::sum(),
    );
    local?;
    if failed > 0 {
        Err(RunError::PeerFailed {
            failed_ranks: failed,
        })
    } else {
        Ok(())
    }
}

/// What one rank found after the transfers, before the commit.
#[derive(Clone, Debug, Default)]
pub(crate) struct LocalChecks {
    /// The first protocol error this rank saw (a header or a message of the wrong
    /// size), if any.
    pub protocol: Option<String>,
    /// True when this rank sent and received the counts the plan says.
    pub counts_ok: bool,
    /// True when this rank reports a failure (an injected one).
    pub failing: bool,
    /// This rank's part of the global checksum: the checksum of what it will hold
    /// minus the checksum of what it held (wrapping). Zero summed over all ranks
    /// when every item is intact at its place.
    pub delta: Checksum,
}

/// The commit decision: one collective (a sum of counts failures, reported
/// failures and checksum deltas over `comm`), so that every rank commits, or none.
///
/// # Errors
/// On every rank when any check failed anywhere: [`RunError::PeerFailed`] when a
/// rank reported failure; [`RunError::Protocol`] on a rank that saw a protocol
/// error (the others get [`RunError::Verification`]); otherwise
/// [`RunError::Verification`] for wrong counts or a differing checksum.
///
/// # Complexity
/// One all-reduce of four words.
pub(crate) fn agree_before_commit<C: Communicator>(
    comm: &C,
    checks: LocalChecks,
) -> Result<(), RunError> {
    let counts_ok = checks.counts_ok && checks.protocol.is_none();
    let [d0, d1] = checks.delta.0;
    let local = [u64::from(!counts_ok), u64::from(checks.failing), d0, d1];
    let mut global = [0u64; 4];
    comm.all_reduce_into(&local[..], &mut global[..], SystemOperation::sum());
    let [bad_counts, failed, d0, d1] = global;
    let delta = Checksum([d0, d1]);
    if failed > 0 {
        return Err(RunError::PeerFailed {
            failed_ranks: failed,
        });
    }
    if let Some(reason) = checks.protocol {
        return Err(RunError::Protocol {
            rank: comm.rank() as usize,
            reason,
        });
    }
    if bad_counts > 0 || !delta.is_zero() {
        return Err(RunError::Verification {
            failed_ranks: bad_counts,
            checksum_differs: !delta.is_zero(),
        });
    }
    Ok(())
}
