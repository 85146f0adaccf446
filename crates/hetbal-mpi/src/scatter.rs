//! Balanced scatters over MPI: the counts of hetbal's scatter planner, sent from
//! the root in the plan's order.

use mpi::datatype::Partition;
use mpi::topology::Color;
use mpi::traits::{Communicator, Destination, Root, Source};
use mpi::Count;

use crate::RunError;

/// A communicator ranked in the plan's order: rank k of the new communicator is
/// processor `order[k]` (world rank `order[k]`), so the root, last in the order, is
/// its last rank. Collective over `comm`.
///
/// # Errors
/// [`RunError::WorldSize`] when `order` does not list every rank of `comm` once.
///
/// # Complexity
/// One communicator split.
pub fn ranked_in_order<C: Communicator>(
    comm: &C,
    order: &[usize],
) -> Result<mpi::topology::SimpleCommunicator, RunError> {
    let n = comm.size() as usize;
    let rank = comm.rank() as usize;
    let mut seen = vec![false; n];
    let valid = order.len() == n
        && order
            .iter()
            .all(|&p| p < n && !std::mem::replace(&mut seen[p], true));
    let position = order.iter().position(|&p| p == rank);
    match (valid, position) {
        (true, Some(key)) => comm
            .split_by_color_with_key(Color::with_value(0), key as i32)
            .ok_or(RunError::WorldSize {
                ranks: n,
                processors: order.len(),
            }),
        _ => Err(RunError::WorldSize {
            ranks: n,
            processors: order.len(),
        }),
    }
}

/// How [`scatter_in_order`] sent the items.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ScatterPath {
    /// One MPI_Scatterv (every count and displacement fits an MPI count).
    Scatterv,
    /// Point-to-point sends from the root in rank order, in chunks below the MPI
    /// count limit (large counts).
    Chunked,
}

/// Scatters `counts[k]` items to rank k of `comm` (ranked in the plan's order, root
/// last) from the root's `data` (all items, in order), returning this rank's items.
/// Uses MPI_Scatterv when all byte counts and displacements fit an MPI count and
/// are at most `max_message_bytes`; otherwise the root sends each share in turn, in
/// rank order, in chunks of at most `max_message_bytes` bytes.
///
/// # Arguments
/// * `comm` - ranked in the plan's order ([`ranked_in_order`]); the root is the last
///   rank;
/// * `counts` - items per rank, identical on every rank;
/// * `item_bytes` - bytes per item;
/// * `data` - on the root, every item (`sum(counts) * item_bytes` bytes); ignored
///   elsewhere;
/// * `max_message_bytes` - the largest message (capped below 2^31).
///
/// # Errors
/// [`RunError::WrongLoad`] when the root's data does not match the counts.
///
/// # Complexity
/// O(N) bytes moved once; O(p) messages plus one per chunk.
pub fn scatter_in_order<C: Communicator>(
    comm: &C,
    counts: &[u64],
    item_bytes: usize,
    data: &[u8],
    max_message_bytes: usize,
) -> Result<(Vec<u8>, ScatterPath), RunError> {
    let p = comm.size() as usize;
    let rank = comm.rank() as usize;
    let root_rank = p - 1;
    let root = comm.process_at_rank(root_rank as i32);
    let limit = max_message_bytes.clamp(item_bytes.max(1), (1usize << 31) - 1);
    let bytes: Vec<u128> = counts
        .iter()
        .map(|&c| u128::from(c) * item_bytes as u128)
        .collect();
    let total: u128 = bytes.iter().sum();
    if rank == root_rank && data.len() as u128 != total {
        return Err(RunError::WrongLoad {
            rank,
            bytes: data.len(),
            expected: total,
        });
    }
    let mine = usize::try_from(bytes[rank]).map_err(|_| RunError::Protocol {
        rank,
        reason: format!("{} bytes do not fit in memory", bytes[rank]),
    })?;
    let mut received = vec![0u8; mine];
    if total <= limit as u128 {
        let counts: Vec<Count> = bytes.iter().map(|&b| b as Count).collect();
        let displs: Vec<Count> = counts
            .iter()
            .scan(0, |at, &c| {
                let d = *at;
                *at += c;
                Some(d)
            })
            .collect();
        if rank == root_rank {
            let partition = Partition::new(data, &counts[..], &displs[..]);
            root.scatter_varcount_into_root(&partition, &mut received[..]);
        } else {
            root.scatter_varcount_into(&mut received[..]);
        }
        return Ok((received, ScatterPath::Scatterv));
    }
    if rank == root_rank {
        let mut at = 0usize;
        for (k, &b) in bytes.iter().enumerate() {
            let b = b as usize;
            if k == root_rank {
                received.copy_from_slice(&data[at..at + b]);
            } else {
                for piece in data[at..at + b].chunks(limit) {
                    comm.process_at_rank(k as i32).send(piece);
                }
            }
            at += b;
        }
    } else {
        for piece in received.chunks_mut(limit) {
            root.receive_into(piece);
        }
    }
    Ok((received, ScatterPath::Chunked))
}
