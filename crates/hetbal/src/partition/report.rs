//! The result document of a weighted partition (formats.md, "Weighted
//! partition"): what `hetbal partition --json` prints.

use serde::Serialize;

use super::{Candidate, MovePlan, MovingPartition, Partition, ProcessorOrder, Rebalance};

/// The JSON document of a weighted partition. Build it with
/// [`PartitionDocument::optimal`], [`PartitionDocument::moving`] or
/// [`PartitionDocument::ordered`], then serialise it with serde.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct PartitionDocument {
    /// `p + 1` item indices: processor `j` holds items `cuts[j]..cuts[j+1]`.
    pub cuts: Vec<u64>,
    /// The largest processor time.
    pub bottleneck: f64,
    /// No partition has a smaller bottleneck (certified by the search).
    pub lower_bound: f64,
    /// `bottleneck <= lower_bound`.
    pub optimal: bool,
    /// Bytes that change owner from the current cuts (None without them).
    pub moved: Option<u64>,
    /// Items that change owner (None without current cuts).
    pub moved_items: Option<u64>,
    /// `optimal bottleneck * (1 + tolerance)` (None without current cuts).
    pub limit: Option<f64>,
    /// Each processor's time.
    pub times: Vec<f64>,
    /// Each processor's weight.
    pub weights: Vec<f64>,
    /// The processor order chosen (None when the order was fixed).
    pub order: Option<Vec<usize>>,
    /// The timed moves of the items to the new cuts (None unless asked).
    pub moves: Option<MovePlan>,
    /// The candidates of a choice of tolerance over the iterations left (None
    /// unless asked).
    pub candidates: Option<Vec<Candidate>>,
    /// The tolerance chosen among the candidates (None: stay, or no choice).
    pub chosen: Option<f64>,
}

impl PartitionDocument {
    /// The document of an optimal partition.
    pub fn optimal(p: &Partition) -> Self {
        PartitionDocument {
            cuts: p.cuts.clone(),
            bottleneck: p.bottleneck,
            lower_bound: p.lower_bound,
            optimal: p.optimal,
            moved: None,
            moved_items: None,
            limit: None,
            times: p.times.clone(),
            weights: p.weights.clone(),
            order: None,
            moves: None,
            candidates: None,
            chosen: None,
        }
    }

    /// The document of a least-moving partition, with its moves if planned.
    pub fn moving(m: &MovingPartition, moves: Option<MovePlan>) -> Self {
        PartitionDocument {
            cuts: m.cuts.clone(),
            bottleneck: m.bottleneck,
            lower_bound: m.optimum.lower_bound,
            optimal: m.bottleneck <= m.optimum.lower_bound,
            moved: Some(m.moved_bytes),
            moved_items: Some(m.moved_items),
            limit: Some(m.limit),
            times: m.times.clone(),
            weights: m.weights.clone(),
            order: None,
            moves,
            candidates: None,
            chosen: None,
        }
    }

    /// The document of a choice of tolerance: its partition (the current cuts
    /// when staying is best), its moves and every candidate.
    pub fn rebalance(r: &Rebalance) -> Self {
        PartitionDocument {
            candidates: Some(r.candidates.clone()),
            chosen: r.tolerance,
            ..Self::moving(&r.partition, r.moves.clone())
        }
    }

    /// The document of a partition in a processor order of its own.
    pub fn ordered(o: &ProcessorOrder) -> Self {
        PartitionDocument {
            order: Some(o.order.clone()),
            ..Self::optimal(&o.partition)
        }
    }
}
