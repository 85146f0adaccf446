//! The papers' experiments as library functions: each takes its settings and a
//! seed and returns plain result rows (no I/O), which the `hetbal experiment`
//! commands print and plot.

pub mod genblock;
pub mod load_dependent;
pub mod mapping;
pub mod partition;
pub mod ring_iterative;
pub mod scatter_seismic;
pub mod startups;

use serde::Serialize;

/// An experiment's JSON document (formats.md, "Experiment tables"): what
/// `hetbal experiment NAME --json` prints. Each experiment's result gives its
/// own (for instance [`genblock::GenBlockExperiment::document`]); serialise it
/// with serde.
#[derive(Clone, Debug, Serialize)]
pub struct Document<P, R> {
    /// The experiment's name: `genblock`, `load-dependent`, `mapping`, `partition`,
    /// `ring-iterative`, `scatter-seismic` or `startups`.
    pub experiment: &'static str,
    /// Its settings, and what explains the rows.
    pub parameters: P,
    /// The rows.
    pub rows: R,
}
