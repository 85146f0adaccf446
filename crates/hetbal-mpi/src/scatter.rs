//! Balanced scatters over MPI: the counts of hetbal's scatter planner, sent from
//! the root in the plan's order, with the nothing-lost protocol of
//! [`crate::protocol`]: what a rank receives goes to its vector's spare capacity, the root
//! keeps every item until the commit, and every rank checks its count and its part
//! of the order-aware checksum before one collective decides whether all commit.
//! On any failure the root still holds every item and the others hold none.

use std::time::{Duration, Instant};

use mpi::datatype::Partition;
use mpi::topology::{Color, SimpleCommunicator};
use mpi::traits::{Communicator, Destination, Equivalence, Root, Source};
use mpi::Count;

use bytemuck::Pod;

use crate::arena::Arena;
use crate::checksum::{range_sum, Checksum};
use crate::comm::Duplicate;
use crate::pacing::{released, sleep_until};
use crate::protocol::{
    agree_before_commit, refuse, sizes_match, spoil, Digest, Fault, LocalChecks,
};
use crate::timeline::{Direction, Message, Recorder};
use crate::{Options, RunError};

/// Tag of the root's headers (items in the next message, whether it is the last,
/// seconds its items waited for their emulated link when recording).
const TAG_HEADER: i32 = 21;
/// Tag of the root's messages of items.
const TAG_ITEMS: i32 = 22;

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
    /// Point-to-point messages from the root in rank order, each a header (items,
    /// last) then the items, in chunks of at most the largest message: for large
    /// counts, emulated links, or an injected short message (MPI_Scatterv cannot
    /// carry one: its counts must match on both sides).
    Chunked,
}

/// What a rank did during a committed scatter.
#[derive(Clone, Debug, PartialEq)]
pub struct ScatterReport {
    /// How the items were sent.
    pub path: ScatterPath,
    /// Items this rank received (none on the root).
    pub items_received: u64,
    /// Wall-clock seconds of the transfer and the checks, on this rank.
    pub seconds: f64,
    /// Wall-clock seconds of the transfer alone (until this rank's last message).
    pub transfer_seconds: f64,
    /// Every message this rank sent or received, when [`Options::record`] is on
    /// (else none), `MPI_Wtime` seconds: with MPI_Scatterv, one collective
    /// (the root's with no peer, the others' from the root); else a message
    /// per chunk, the root's from its header to its completion, a receiver's
    /// from the header's arrival to the items'; with emulated links both start
    /// when the chunk's items began to wait for their planned crossing.
    pub messages: Vec<Message>,
}

/// The root's planned sends of a scatter plan, for [`Options::pacing`]: the
/// library's [`hetbal::pacing::scatter_pacing`].
pub use hetbal::pacing::scatter_pacing as pacing_from_plan;

/// Scatters `counts[k]` items to rank k of `comm` (ranked in the plan's order, root
/// last) from the root's `items` (all items, in order). On success the root's
/// `items` become its own share (the last one) and every other rank's `items` its
/// share; on any failure nothing changes anywhere (the root keeps every item, the
/// others none). Uses MPI_Scatterv when all the root's items fit in one message
/// ([`Options::chunk_bytes`]), no link is emulated and no short message is
/// injected; otherwise the root sends each share in turn, in rank order, in
/// chunks ([`ScatterPath::Chunked`]). Items are any plain-old-data type
/// ([`bytemuck::Pod`]); [`scatter_in_order_bytes`] takes raw bytes.
///
/// No second copy of the data: a rank receives its share into the spare
/// capacity of its own vector (grown to its share), and the root's own share
/// moves to the front of its vector at the commit (which keeps its capacity).
///
/// # Arguments
/// * `comm` - ranked in the plan's order ([`ranked_in_order`]); the root is the last
///   rank;
/// * `counts` - items per rank, identical on every rank;
/// * `items` - on the root, every item (`sum(counts)` of them); empty elsewhere;
/// * `options` - message size; fault injection: only the root sends, so
///   [`Fault::Corrupt`] and [`Fault::Short`] spoil the root's first message to the
///   faulty rank (when it is the root itself: the root's first non-empty
///   message), [`Fault::FailBeforeCommit`] makes that rank report a failure;
///   emulated links ([`pacing_from_plan`]).
///
/// # Errors
/// On every rank when any rank fails: [`RunError::WorldSize`] when `counts` does
/// not have one entry per rank; [`RunError::WrongLoad`] (on the wrong rank,
/// [`RunError::PeerFailed`] on the others) when a rank's items do not match;
/// [`RunError::Protocol`], [`RunError::Verification`] or
/// [`RunError::PeerFailed`] when the checks before the commit fail.
///
/// # Complexity
/// O(N) bytes moved once and hashed once on each side; O(p) messages, plus two
/// per chunk on the chunked path.
pub fn scatter_in_order<T: Pod, C: Communicator>(
    comm: &C,
    counts: &[u64],
    items: &mut Vec<T>,
    options: &Options,
) -> Result<ScatterReport, RunError> {
    run(comm, counts, 1, items, options)
}

/// [`scatter_in_order`] for items given as bytes, `item_bytes` each (0 counts
/// as 1): the root's `items` hold `sum(counts) * item_bytes` bytes.
///
/// # Errors
/// As [`scatter_in_order`].
///
/// # Complexity
/// As [`scatter_in_order`].
pub fn scatter_in_order_bytes<C: Communicator>(
    comm: &C,
    counts: &[u64],
    item_bytes: usize,
    items: &mut Vec<u8>,
    options: &Options,
) -> Result<ScatterReport, RunError> {
    run(comm, counts, item_bytes.max(1), items, options)
}

/// A scatter (see [`scatter_in_order`]) of items of `item_len` elements of `E`.
fn run<E: Pod, C: Communicator>(
    comm: &C,
    counts: &[u64],
    item_len: usize,
    items: &mut Vec<E>,
    options: &Options,
) -> Result<ScatterReport, RunError> {
    let started = Instant::now();
    let duplicate = Duplicate::of(comm);
    let comm: &SimpleCommunicator = &duplicate;
    let p = comm.size() as usize;
    let rank = comm.rank() as usize;
    let fingerprint = Digest::new("scatter")
        .add(counts)
        .add(&(item_len * std::mem::size_of::<E>()))
        .options(options)
        .finish();
    if counts.len() != p {
        let e = RunError::WorldSize {
            ranks: p,
            processors: counts.len(),
        };
        return Err(refuse(comm, e, fingerprint));
    }
    let root_rank = p - 1;
    let is_root = rank == root_rank;
    let b = item_len * std::mem::size_of::<E>();
    let total: u128 = counts.iter().map(|&c| u128::from(c)).sum();
    let firsts: Vec<u128> = counts
        .iter()
        .scan(0u128, |at, &c| {
            let first = *at;
            *at += u128::from(c);
            Some(first)
        })
        .collect();
    // Every rank agrees on the sizes before anything moves: the root holds every
    // item, the others none, and this rank's share fits in memory.
    let expected = if is_root { total * b as u128 } else { 0 };
    // The others receive their share after their (no) items.
    let checked = sizes_match(rank, items.len() * std::mem::size_of::<E>(), expected);
    let share = if is_root { 0 } else { counts[rank] };
    let mut arena = Arena::agreed(comm, (checked, fingerprint), items, item_len, (0, share))?;
    // The root's items, or the room for this rank's share.
    let bytes = arena.bytes();
    // Byte offset of rank k's share in the root's items (they fit: the root holds
    // them all).
    let offset = |k: usize| (firsts[k] * b as u128) as usize;
    let chunk_items = options.chunk_items(b);
    let fault = options.fault.filter(|&(r, _)| r < p);
    let failing = fault == Some((rank, Fault::FailBeforeCommit));
    // The share whose first message is spoiled (known to the root only).
    let spoiled_share = fault.and_then(|(r, f)| {
        if !f.spoils_a_message() || !is_root {
            None
        } else if r != root_rank {
            (counts[r] > 0).then_some((r, f))
        } else {
            (0..root_rank).find(|&k| counts[k] > 0).map(|k| (k, f))
        }
    });
    // A message of another length than announced goes in chunks (one
    // MPI_Scatterv has no room for it).
    let short_injected = fault.is_some_and(|(_, f)| matches!(f, Fault::Short | Fault::Long));
    let fits_one_message = total * b as u128 <= (chunk_items * b) as u128;
    let path = if options.pacing.is_none() && fits_one_message && !short_injected {
        ScatterPath::Scatterv
    } else {
        ScatterPath::Chunked
    };
    let mut protocol: Option<String> = None;
    let mut received = 0u64;
    // The checksum of the items received, when hashed chunk by chunk as they came.
    let mut hashed: Option<Checksum> = None;
    let mut recorder = Recorder::new(options.record);
    match path {
        ScatterPath::Scatterv => {
            let root = comm.process_at_rank(root_rank as i32);
            let start = recorder.now();
            if is_root {
                // The root's own share stays where it is: it scatters nothing to
                // itself.
                let mut byte_counts: Vec<Count> =
                    counts.iter().map(|&c| (c as usize * b) as Count).collect();
                byte_counts[root_rank] = 0;
                let displs: Vec<Count> = (0..p).map(|k| offset(k) as Count).collect();
                let spoiled = spoiled_share.map(|(k, f)| {
                    let mut copy = bytes.to_vec();
                    let at = offset(k);
                    let share = spoil(f, &bytes[at..at + counts[k] as usize * b], b);
                    copy[at..at + share.len()].copy_from_slice(&share);
                    copy
                });
                let data = spoiled.as_deref().unwrap_or(&bytes[..]);
                let partition = Partition::new(data, &byte_counts[..], &displs[..]);
                root.scatter_varcount_into_root(&partition, &mut [0u8; 0][..]);
                let items = (total - u128::from(counts[root_rank])) as u64;
                let span = (start, recorder.now());
                recorder.record(Direction::Send, None, (items, 0), span);
            } else {
                root.scatter_varcount_into(&mut bytes[..]);
                received = counts[rank];
                let span = (start, recorder.now());
                recorder.record(Direction::Receive, Some(root_rank), (received, 0), span);
            }
        }
        ScatterPath::Chunked if is_root => {
            let mut pending = spoiled_share;
            for (k, &share) in counts.iter().enumerate().take(root_rank) {
                let mut sent = 0u64;
                // Recording: since when the next chunk waits for its emulated link.
                let mut waiting: Option<f64> = None;
                while sent < share {
                    let now = started.elapsed().as_secs_f64();
                    let (allowed, next) = match options.pacing.as_ref() {
                        None => (share, None),
                        Some(pacing) => released(pacing.stream(k), now),
                    };
                    // Pacing that releases fewer items than the share: the rest
                    // goes at the end of its batches.
                    let allowed = if next.is_none() { share } else { allowed };
                    if allowed <= sent {
                        if let Some(at) = next {
                            waiting.get_or_insert(recorder.now());
                            sleep_until(started, at, Duration::from_millis(1), || {});
                        }
                        continue;
                    }
                    let n = (allowed - sent).min(chunk_items as u64);
                    let last = sent + n == share;
                    let at = offset(k) + sent as usize * b;
                    let data = &bytes[at..at + n as usize * b];
                    let spoiled = match pending {
                        Some((target, f)) if target == k => {
                            pending = None;
                            Some(spoil(f, data, b))
                        }
                        _ => None,
                    };
                    let to = comm.process_at_rank(k as i32);
                    let now = recorder.now();
                    let start = waiting.take().unwrap_or(now);
                    let header = [n, u64::from(last), (now - start).to_bits()];
                    to.send_with_tag(&header[..], TAG_HEADER);
                    to.send_with_tag(spoiled.as_deref().unwrap_or(data), TAG_ITEMS);
                    let span = (start, recorder.now());
                    recorder.record(Direction::Send, Some(k), (n, 0), span);
                    sent += n;
                }
            }
        }
        ScatterPath::Chunked => {
            let root = comm.process_at_rank(root_rank as i32);
            let want = counts[rank];
            while received < want {
                let mut header = [0u64; 3];
                root.receive_into_with_tag(&mut header[..], TAG_HEADER);
                let [n, last, waited] = header;
                let waited = f64::from_bits(waited);
                let start = recorder.now()
                    - if waited.is_finite() {
                        waited.max(0.0)
                    } else {
                        0.0
                    };
                let left = want - received;
                if n > left || (last == 1) != (n == left) {
                    protocol.get_or_insert(format!(
                        "from the root: a header announces {n} items (last: {last}) with {left} left"
                    ));
                }
                let n = n.min(left);
                let at = received as usize * b;
                let expected = n as usize * b;
                let part = &mut bytes[at..at + expected];
                let status = root.receive_into_with_tag(part, TAG_ITEMS);
                // Hashed as soon as it has arrived, while still in cache.
                let first = firsts[rank] + u128::from(received);
                *hashed.get_or_insert(Checksum::ZERO) += range_sum(first, total, b, part);
                let bytes = status.count(u8::equivalent_datatype()).max(0) as usize;
                if bytes != expected {
                    protocol.get_or_insert(format!(
                        "from the root: a message of {bytes} bytes where its header announced {expected}"
                    ));
                }
                let span = (start, recorder.now());
                recorder.record(Direction::Receive, Some(root_rank), (n, 0), span);
                received += n;
                if last == 1 {
                    break;
                }
            }
        }
    }
    let transfer_seconds = started.elapsed().as_secs_f64();
    // Checks: this rank's count, and the checksum of what it will hold minus what
    // it held. The root's own share stays in place: it counts on neither side.
    let delta = if is_root {
        Checksum::ZERO - range_sum(0, total, b, &bytes[..offset(root_rank)])
    } else {
        hashed.unwrap_or_else(|| range_sum(firsts[rank], total, b, bytes))
    };
    agree_before_commit(
        comm,
        LocalChecks {
            protocol,
            counts_ok: is_root || received == counts[rank],
            failing,
            delta,
        },
    )?;
    // Commit (on error the arena, dropped, changed nothing): the root keeps its
    // share, the last one; the others hold what they received.
    if is_root {
        arena.commit(firsts[root_rank] as usize, total as usize);
    } else {
        arena.commit(0, counts[rank] as usize);
    }
    Ok(ScatterReport {
        path,
        items_received: received,
        seconds: started.elapsed().as_secs_f64(),
        transfer_seconds,
        messages: recorder.finish(),
    })
}
