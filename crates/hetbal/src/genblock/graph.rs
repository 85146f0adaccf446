//! The redistribution graph of two GEN_BLOCK distributions.

use serde::{Deserialize, Serialize};

use super::instance::GenBlockInstance;

/// One message of a schedule: `size` elements sent by source processor `from` to
/// destination processor `to` (formats.md: `{"from": 0, "to": 0, "size": 7}`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Message {
    /// Source processor (index from 0).
    pub from: usize,
    /// Destination processor (index from 0).
    pub to: usize,
    /// Elements sent.
    pub size: u64,
}

/// The redistribution graph: a bipartite graph with an edge per pair of blocks
/// that overlap, weighted by the overlap.
///
/// Messages are listed in array order (the order of the elements they carry), so
/// `from` and `to` never decrease along the list, and no two messages cross: the
/// graph is biplanar (a forest of caterpillars). A message and the next one share
/// their sender or their receiver, unless a source and a target block end at the
/// same element.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RedistributionGraph {
    /// Messages in array order, each with the full overlap as its size (> 0).
    pub messages: Vec<Message>,
    /// Index in the array of the first element of each message.
    pub starts: Vec<u64>,
    /// Number of messages of each source processor.
    pub source_degree: Vec<usize>,
    /// Number of messages of each destination processor.
    pub target_degree: Vec<usize>,
    /// The maximum degree `Delta`: the fewest communication steps of any schedule.
    pub degree: usize,
    /// Elements of the array.
    pub total: u64,
    /// The largest block: the most elements one processor sends or receives.
    pub largest_block: u64,
}

impl RedistributionGraph {
    /// Number of messages `m` (at most `P + Q - 1`).
    pub fn len(&self) -> usize {
        self.messages.len()
    }

    /// Whether the array is empty (no message at all).
    pub fn is_empty(&self) -> bool {
        self.messages.is_empty()
    }

    /// The size of the message from `from` to `to`: the overlap of their blocks, 0
    /// when they do not overlap. O(log m).
    pub fn overlap(&self, from: usize, to: usize) -> u64 {
        self.messages
            .binary_search_by(|m| (m.from, m.to).cmp(&(from, to)))
            .map(|k| self.messages[k].size)
            .unwrap_or(0)
    }
}

/// The redistribution graph of an instance: one message per pair of overlapping
/// blocks, in array order, with the degrees and `Delta`.
///
/// Walks both block lists at once, like a merge.
///
/// # Arguments
/// * `instance`: the two distributions (validated: they cover the same array).
///
/// # Returns
/// The [`RedistributionGraph`]. Empty blocks get no message and degree 0; an empty
/// array gives no message and `Delta = 0`.
///
/// # Complexity
/// O(P + Q) time and space.
///
/// # Example
/// ```
/// use hetbal::genblock::{redistribution_graph, GenBlockInstance, Message};
/// // array:  0 1 2 3 4 5 6
/// // source |  S0 |   S1  |      S0 = [0, 3), S1 = [3, 7)
/// // target | T0|  T1 |T2 |      T0 = [0, 2), T1 = [2, 5), T2 = [5, 7)
/// let g = GenBlockInstance::new(&[3, 4], &[2, 3, 2], 0.0, 1.0).unwrap();
/// let graph = redistribution_graph(&g);
/// let pairs: Vec<(usize, usize, u64)> =
///     graph.messages.iter().map(|m| (m.from, m.to, m.size)).collect();
/// assert_eq!(pairs, vec![(0, 0, 2), (0, 1, 1), (1, 1, 2), (1, 2, 2)]);
/// assert_eq!(graph.degree, 2); // S0, S1 and T1 take part in two messages each
/// assert_eq!(graph.overlap(1, 2), 2);
/// assert_eq!(graph.overlap(0, 2), 0);
/// ```
pub fn redistribution_graph(instance: &GenBlockInstance) -> RedistributionGraph {
    let source = instance.source();
    let target = instance.target();
    let mut messages = Vec::with_capacity(source.len() + target.len());
    let mut starts = Vec::with_capacity(source.len() + target.len());
    let mut source_degree = vec![0usize; source.len()];
    let mut target_degree = vec![0usize; target.len()];
    let (mut i, mut j) = (0usize, 0usize);
    // Elements of the current blocks not yet covered by a message.
    let (mut left_i, mut left_j) = (source[0], target[0]);
    let mut position = 0u64;
    loop {
        while left_i == 0 && i + 1 < source.len() {
            i += 1;
            left_i = source[i];
        }
        while left_j == 0 && j + 1 < target.len() {
            j += 1;
            left_j = target[j];
        }
        if left_i == 0 || left_j == 0 {
            // Both sides end together (the sums are equal).
            break;
        }
        let size = left_i.min(left_j);
        messages.push(Message {
            from: i,
            to: j,
            size,
        });
        starts.push(position);
        position += size;
        source_degree[i] += 1;
        target_degree[j] += 1;
        left_i -= size;
        left_j -= size;
    }
    let degree = source_degree
        .iter()
        .chain(&target_degree)
        .copied()
        .max()
        .unwrap_or(0);
    RedistributionGraph {
        messages,
        starts,
        source_degree,
        target_degree,
        degree,
        total: instance.total_elements(),
        largest_block: instance.largest_block(),
    }
}
