//! The nothing-lost protocol shared by ring redistributions, scatters and
//! GEN_BLOCK redistributions: incoming items go to the receiving rank's own
//! vector, grown in place around its own items (intact, shifted once when
//! items come in front: see `arena`), then every rank
//! checks its counts and its part of an order-aware checksum
//! ([`crate::checksum`]), and one collective decides for all ranks whether they
//! commit; on any failure every rank keeps its original items and gets an error.
//! Also the deliberate faults that prove it ([`Fault`]).

use mpi::collective::SystemOperation;
use mpi::traits::{Communicator, CommunicatorCollectives};

use crate::checksum::Checksum;
use crate::comm::{agree_arguments, Refusal, Refused};
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
    /// Send a message one item longer than its receiver expects (junk
    /// appended): not in [`Fault::ALL`], since it is not a failure
    /// everywhere. A receiver that probes the size (the planned messages of
    /// rings with start-ups) refuses it; one that posted the announced size
    /// gets the announced items, the junk cut off (with MPI's default error
    /// handler the truncation would abort the job; hetbal's duplicate returns
    /// errors instead), and the checks decide.
    Long,
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
            Fault::Long => "long",
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
/// intact): one byte flipped ([`Fault::Corrupt`]), the last item dropped
/// ([`Fault::Short`]) or a junk item appended ([`Fault::Long`]); `data`
/// itself otherwise. `data` holds whole items.
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
        Fault::Long => {
            let mut longer = data.to_vec();
            longer.resize(data.len() + item_bytes.max(1), 0xee);
            longer
        }
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

/// Before anything moves, every rank learns whether every rank can start and
/// was given the same arguments: `Ok` on every rank, or an error on every rank
/// (this rank's own when `local` is one; else [`RunError::PeerRefused`]
/// naming the first rank that refused, or [`RunError::Mismatch`] when the
/// ranks' `fingerprint`s differ: a plan, loads, item size or options that
/// differ between ranks). Collective over `comm`; every check that can differ
/// between ranks goes through here, so no rank returns alone and leaves the
/// others waiting.
///
/// # Complexity
/// One all-reduce of three words.
pub(crate) fn agree_before_start<C: Communicator>(
    comm: &C,
    local: Result<(), RunError>,
    fingerprint: Fingerprint,
) -> Result<(), RunError> {
    agree_arguments(comm, local, fingerprint.0).map_err(|refusal| match refusal {
        Refusal::Local(e) => e,
        Refusal::Refused(Refused { rank }) => RunError::PeerRefused { rank },
        Refusal::Mismatch => RunError::Mismatch,
    })
}

/// This rank's `error`, found before anything moved, after every rank has
/// learned of it: the rank takes part in the agreement the others reach when
/// they open their arenas ([`agree_before_start`]), so that no rank waits for
/// it. Collective over `comm` (the same all-reduce).
pub(crate) fn refuse<C: Communicator>(
    comm: &C,
    error: RunError,
    fingerprint: Fingerprint,
) -> RunError {
    match agree_before_start(comm, Err(error), fingerprint) {
        Err(e) => e,
        Ok(()) => unreachable!("a refusal never agrees"),
    }
}

/// A digest of the arguments that must be identical on every rank (loads,
/// flows, item size, options...), compared by [`agree_before_start`]. A
/// 64-bit hash (SipHash with fixed keys): ranks given different arguments
/// agree by accident with probability 2^-64.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct Fingerprint(pub(crate) u64);

/// Builds a [`Fingerprint`] from what must match.
pub(crate) struct Digest(std::hash::DefaultHasher);

impl Digest {
    /// A digest of an operation named `what` (so that a ring redistribution
    /// and a scatter never agree).
    pub(crate) fn new(what: &str) -> Digest {
        let mut d = Digest(std::hash::DefaultHasher::new());
        d.add(what);
        d
    }

    /// Adds `value`.
    pub(crate) fn add<T: std::hash::Hash + ?Sized>(&mut self, value: &T) -> &mut Digest {
        std::hash::Hash::hash(value, &mut self.0);
        self
    }

    /// Adds the options that must match on every rank: the message size, the
    /// fault, the pacing and the batches (their exact values).
    pub(crate) fn options(&mut self, options: &crate::Options) -> &mut Digest {
        use std::fmt::Write;
        self.add(&options.chunk_bytes).add(&options.record);
        // The exact values of the pacing's and batches' times, through their
        // Debug text (floats print exactly), written into the hash unbuffered.
        let _ = write!(
            self,
            "{:?}{:?}{:?}",
            options.fault, options.pacing, options.batches
        );
        self
    }

    /// The fingerprint.
    pub(crate) fn finish(&self) -> Fingerprint {
        use std::hash::Hasher;
        Fingerprint(self.0.finish())
    }
}

impl std::fmt::Write for Digest {
    fn write_str(&mut self, s: &str) -> std::fmt::Result {
        use std::hash::Hasher;
        self.0.write(s.as_bytes());
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
