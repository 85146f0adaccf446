//! The communicator hetbal works on: a duplicate of the caller's, so that its
//! messages never match the application's (an application's receive with
//! `MPI_ANY_TAG` on the same communicator could take them), with MPI errors
//! returned instead of aborting the job (`MPI_ERRORS_RETURN`), freed when
//! dropped unless MPI is finalized by then. Every operation of this crate
//! that sends point to point (ring redistributions, scatters, GEN_BLOCK runs,
//! link measurements) duplicates the communicator it is given, at the cost of
//! one `MPI_Comm_dup` (a collective) per call; the C and Python bindings
//! duplicate theirs with [`duplicate_raw`].

use std::ffi::c_int;
use std::fmt;
use std::mem::ManuallyDrop;
use std::ops::Deref;

use mpi::ffi::MPI_Comm;
use mpi::topology::SimpleCommunicator;
use mpi::traits::{AsRaw, Communicator, FromRaw};

/// A duplicate of a caller's communicator (see the module's docs).
pub struct Duplicate(ManuallyDrop<SimpleCommunicator>);

impl fmt::Debug for Duplicate {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Duplicate")
            .field("size", &self.size())
            .field("rank", &self.rank())
            .finish()
    }
}

// SAFETY: a communicator handle is a plain value that MPI lets any thread use
// at the thread level the application initialised MPI with; hetbal uses a
// duplicate from one call at a time (its owners hold it behind `&mut` or a
// lock).
unsafe impl Send for Duplicate {}
unsafe impl Sync for Duplicate {}

impl Deref for Duplicate {
    type Target = SimpleCommunicator;
    fn deref(&self) -> &SimpleCommunicator {
        &self.0
    }
}

impl Drop for Duplicate {
    fn drop(&mut self) {
        // Freeing after MPI_Finalize is erroneous (a C or Python object may
        // outlive it): the duplicate is then left to the finalized library.
        if !mpi::environment::is_finalized() {
            // SAFETY: dropped once, here.
            unsafe { ManuallyDrop::drop(&mut self.0) }
        }
    }
}

impl Duplicate {
    /// A duplicate of `comm` (collective over `comm`), whose MPI errors are
    /// returned, not fatal.
    ///
    /// Complexity: one `MPI_Comm_dup`.
    pub fn of<C: Communicator>(comm: &C) -> Duplicate {
        Duplicate::adopt(comm.duplicate())
    }

    /// Takes ownership of a duplicate, setting its error handler.
    fn adopt(dup: SimpleCommunicator) -> Duplicate {
        // SAFETY: a valid communicator and a predefined error handler.
        unsafe {
            mpi::ffi::MPI_Comm_set_errhandler(dup.as_raw(), mpi::ffi::RSMPI_ERRORS_RETURN);
        }
        Duplicate(ManuallyDrop::new(dup))
    }
}

/// Why a caller's communicator cannot be duplicated.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum DuplicateError {
    /// MPI is not initialised (or already finalized).
    NotInitialized,
    /// The communicator is `MPI_COMM_NULL`.
    Null,
    /// `MPI_Comm_dup` returned an error code.
    Failed {
        /// The MPI error code.
        code: c_int,
    },
}

impl fmt::Display for DuplicateError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            DuplicateError::NotInitialized => {
                f.write_str("MPI is not initialised (or already finalized)")
            }
            DuplicateError::Null => f.write_str("the communicator is MPI_COMM_NULL"),
            DuplicateError::Failed { code } => write!(f, "MPI_Comm_dup failed (MPI error {code})"),
        }
    }
}

impl std::error::Error for DuplicateError {}

/// A duplicate of the raw communicator `comm` a C or Python caller gave
/// (collective over it).
///
/// # Errors
/// [`DuplicateError`]: MPI not initialised (or finalized), `MPI_COMM_NULL`, or
/// `MPI_Comm_dup` failing.
///
/// # Safety
/// `comm` is a valid communicator handle or `MPI_COMM_NULL`.
pub unsafe fn duplicate_raw(comm: MPI_Comm) -> Result<Duplicate, DuplicateError> {
    if !mpi::environment::is_initialized() || mpi::environment::is_finalized() {
        return Err(DuplicateError::NotInitialized);
    }
    if comm == mpi::ffi::RSMPI_COMM_NULL {
        return Err(DuplicateError::Null);
    }
    let mut dup = mpi::ffi::RSMPI_COMM_NULL;
    let code = mpi::ffi::MPI_Comm_dup(comm, &mut dup);
    if code != 0 {
        return Err(DuplicateError::Failed { code });
    }
    // SAFETY: the duplicate is ours, freed by Duplicate.
    Ok(Duplicate::adopt(SimpleCommunicator::from_raw(dup)))
}

/// Every rank's checks of its arguments, agreed (one all-reduce): `Ok` with
/// this rank's value when every rank's `local` is `Ok` and every rank's
/// `fingerprint` of the arguments that must match is the same; this rank's
/// error; or, on a rank whose checks passed, [`Refusal::Refused`] naming the
/// first rank whose checks failed, or [`Refusal::Mismatch`] when the ranks
/// were given different arguments. So a binding raises on every rank, not only
/// on the one given a wrong argument, and no rank goes on to a collective the
/// others skip. [`fingerprint`] makes a fingerprint; 0 when nothing must match.
///
/// # Complexity
/// One all-reduce of three words.
pub fn agree_arguments<C: Communicator, T, E>(
    comm: &C,
    local: Result<T, E>,
    fingerprint: u64,
) -> Result<T, Refusal<E>> {
    use mpi::collective::SystemOperation;
    use mpi::traits::CommunicatorCollectives;
    let mine = if local.is_err() {
        comm.rank() as u64
    } else {
        u64::MAX
    };
    // The minimum of the fingerprint and of its complement: every rank's is
    // the same exactly when both are this rank's.
    let mut first = [0u64; 3];
    comm.all_reduce_into(
        &[mine, fingerprint, !fingerprint][..],
        &mut first[..],
        SystemOperation::min(),
    );
    match local {
        Err(e) => Err(Refusal::Local(e)),
        Ok(_) if first[0] != u64::MAX => Err(Refusal::Refused(Refused {
            rank: first[0] as usize,
        })),
        Ok(_) if first[1] != fingerprint || first[2] != !fingerprint => Err(Refusal::Mismatch),
        Ok(value) => Ok(value),
    }
}

/// A fingerprint of `arguments` (their text, for instance the `Debug` of the
/// values that must match: floats print exactly) for [`agree_arguments`]: a
/// 64-bit hash, the same on every rank of one build.
///
/// # Example
/// ```
/// use hetbal_mpi::comm::fingerprint;
/// let costs = [1.0, 2.5];
/// assert_eq!(fingerprint(&format!("{costs:?}")), fingerprint(&format!("{:?}", [1.0, 2.5])));
/// assert_ne!(fingerprint("[1.0, 2.5]"), fingerprint("[1.0, 2.6]"));
/// ```
pub fn fingerprint(arguments: &str) -> u64 {
    crate::protocol::Digest::new("arguments")
        .add(arguments)
        .finish()
        .0
}

/// Why [`agree_arguments`] did not agree.
#[derive(Debug)]
pub enum Refusal<E> {
    /// This rank's own error.
    Local(E),
    /// Another rank's.
    Refused(Refused),
    /// The ranks were given different arguments (their fingerprints differ).
    Mismatch,
}

/// Another rank refused its arguments.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Refused {
    /// The first rank that refused.
    pub rank: usize,
}

impl fmt::Display for Refused {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "rank {} gave wrong arguments (its own error says which); nothing moved",
            self.rank
        )
    }
}
