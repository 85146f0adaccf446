//! The Python package of hetbal (`import hetbal`): the extension module
//! `hetbal._hetbal`, which the Python sources under `python/hetbal` re-export.
//!
//! A thin layer: every function converts its arguments (u64 counts never pass
//! through floats), calls the `hetbal` library (or `hetbal-mpi` with the cargo
//! feature `mpi`) and turns its outcome into Python objects, numpy arrays and
//! exceptions: [`InputError`] (a `ValueError`) for every bad input, with the
//! library's message, the one the `hetbal` command prints. No panic crosses
//! into Python: one would be a bug, raised as [`PlanError`] (or
//! `hetbal.mpi.RunError`) with its message.

use std::panic::{catch_unwind, AssertUnwindSafe};

use pyo3::create_exception;
use pyo3::exceptions::{PyRuntimeError, PyValueError};
use pyo3::prelude::*;

mod convert;
mod decider;
mod experiment;
mod genblock;
mod hugepages;
#[cfg(feature = "mpi")]
mod item_buffer;
#[cfg(feature = "mpi")]
mod mpi;
mod partition;
mod plan;
mod scatter;

create_exception!(
    hetbal,
    InputError,
    PyValueError,
    "A bad input: a wrong length, a negative, fractional or boolean count, one that \
     does not fit in 64 bits, a NaN cost, counts that do not add up... The message \
     names the argument and the rule (the message the hetbal command prints)."
);
create_exception!(
    hetbal,
    PlanError,
    PyRuntimeError,
    "A planner produced a schedule the validator rejects (the paper's Algorithm 3 \
     can: it is a reference), or an internal error of hetbal (a bug: please report it)."
);
create_exception!(
    hetbal.mpi,
    RunError,
    PyRuntimeError,
    "A distributed operation did not commit: raised on every rank, and every rank \
     keeps its items (its array is untouched)."
);

/// Rust's allocations in the extension (the library's prefix sums...) get
/// huge pages where numpy's arrays do: see [`hugepages`].
#[global_allocator]
static ALLOCATOR: hugepages::HugePages = hugepages::HugePages;

/// Why a call failed, turned into the Python exception of its kind.
#[derive(Debug)]
pub(crate) enum Failure {
    /// A bad argument: [`InputError`].
    Input(String),
    /// An invalid schedule or a bug: [`PlanError`].
    Plan(String),
    /// A failed MPI run: [`RunError`].
    #[cfg_attr(not(feature = "mpi"), allow(dead_code))]
    Run(String),
}

impl Failure {
    /// A bad argument.
    pub(crate) fn input(message: impl Into<String>) -> Failure {
        Failure::Input(message.into())
    }
}

impl From<Failure> for PyErr {
    fn from(failure: Failure) -> PyErr {
        match failure {
            Failure::Input(m) => InputError::new_err(m),
            Failure::Plan(m) => PlanError::new_err(m),
            Failure::Run(m) => RunError::new_err(m),
        }
    }
}

/// Runs `f`, turning a panic (a bug) into a failure of kind `bug` instead of
/// letting it reach Python.
pub(crate) fn shield<T>(
    bug: fn(String) -> Failure,
    f: impl FnOnce() -> Result<T, Failure>,
) -> Result<T, Failure> {
    catch_unwind(AssertUnwindSafe(f)).unwrap_or_else(|panic| {
        let what = panic
            .downcast_ref::<&str>()
            .map(|s| s.to_string())
            .or_else(|| panic.downcast_ref::<String>().cloned())
            .unwrap_or_default();
        Err(bug(format!(
            "internal error (a bug in hetbal, please report it): {what}"
        )))
    })
}

/// The extension module `hetbal._hetbal`.
#[pymodule]
fn _hetbal(m: &Bound<'_, PyModule>) -> PyResult<()> {
    let py = m.py();
    m.add("InputError", py.get_type::<InputError>())?;
    m.add("PlanError", py.get_type::<PlanError>())?;
    m.add("RunError", py.get_type::<RunError>())?;
    m.add("WITH_MPI", cfg!(feature = "mpi"))?;
    plan::register(m)?;
    decider::register(m)?;
    partition::register(m)?;
    scatter::register(m)?;
    genblock::register(m)?;
    experiment::register(m)?;
    #[cfg(feature = "mpi")]
    mpi::register(m)?;
    Ok(())
}
