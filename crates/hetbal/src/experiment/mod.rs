//! The papers' experiments as library functions: each takes its settings and a
//! seed and returns plain result rows (no I/O), which the `hetbal experiment`
//! commands print and plot.

pub mod genblock;
pub mod mapping;
pub mod ring_iterative;
pub mod scatter_seismic;
