//! The C ABI of hetbal: what `hetbal.h` (planning and weighted partitions, no
//! MPI) and `hetbal_mpi.h` (the MPI runtime) declare, installed as `libhetbal`
//! by `install.sh`, with a Fortran module (`fortran/hetbal.f90`) over the same
//! functions.
//!
//! A thin layer: every function checks its arguments, calls the `hetbal` library
//! or `hetbal-mpi`, and turns the outcome into a [`hetbal_status`] and, on
//! failure, a message that [`hetbal_last_error`] returns. No panic crosses the
//! boundary: one would be a bug, reported as [`hetbal_status::HETBAL_ERROR_RUN`]
//! with its message.
//!
//! Memory: the library allocates with the C library's `malloc`, `realloc` and
//! `free` (its global allocator is [`Malloc`]), so item buffers pass between C
//! and Rust without copies: a buffer the caller `malloc`ed is grown in place by
//! `realloc` and handed back.

#![allow(non_camel_case_types)]
#![deny(missing_docs)]

#[cfg(feature = "mpi")]
pub mod buffer;
#[cfg(feature = "mpi")]
pub mod mpi;
pub mod partition;
pub mod plan;
pub mod status;

pub use status::*;
