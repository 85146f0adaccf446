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
use crate::buffer::ItemStorage;
use crate::checksum::{range_sum, Checksum};
use crate::comm::Duplicate;
use crate::pacing::{released, sleep_until, Pacing};
use crate::protocol::{
    agree_before_commit, refuse, sizes_match, spoil, Digest, Fault, Fingerprint, LocalChecks,
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
///   a `Vec` or an [`ItemBuffer`](crate::buffer::ItemBuffer) (where the root's
///   share never moves);
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
    items: &mut impl ItemStorage<T>,
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
    items: &mut impl ItemStorage<u8>,
    options: &Options,
) -> Result<ScatterReport, RunError> {
    run(comm, counts, item_bytes.max(1), items, options)
}

/// A scatter (see [`scatter_in_order`]) of items of `item_len` elements of `E`:
/// the counts checked ([`check_counts`]) and the arena opened on every rank
/// ([`Run::open_arena`]), the items sent by the path chosen
/// ([`Run::choose_path`]: [`Run::scatterv`], or [`Run::send_chunks`] on the
/// root and [`Run::receive_chunks`] on the others), then the checks
/// ([`Run::checks`]) and the commit ([`Run::commit`]).
fn run<E: Pod, C: Communicator>(
    comm: &C,
    counts: &[u64],
    item_len: usize,
    items: &mut dyn ItemStorage<E>,
    options: &Options,
) -> Result<ScatterReport, RunError> {
    let started = Instant::now();
    let duplicate = Duplicate::of(comm);
    let comm: &SimpleCommunicator = &duplicate;
    let p = comm.size() as usize;
    let rank = comm.rank() as usize;
    let item_bytes = item_len * std::mem::size_of::<E>();
    let fingerprint = check_counts(comm, counts, p, item_bytes, options)?;
    let mut run = Run::new(comm, counts, rank, item_bytes, options, started);
    let mut arena = run.open_arena(items, item_len, fingerprint)?;
    // The root's items, or the room for this rank's share.
    let bytes = arena.bytes();
    let fault = options.fault.filter(|&(r, _)| r < p);
    let failing = fault == Some((rank, Fault::FailBeforeCommit));
    let spoiled_share = run.spoiled_share(fault);
    let path = run.choose_path(fault);
    match path {
        ScatterPath::Scatterv => run.scatterv(bytes, spoiled_share),
        ScatterPath::Chunked if run.is_root => run.send_chunks(bytes, spoiled_share),
        ScatterPath::Chunked => run.receive_chunks(bytes),
    }
    let transfer_seconds = started.elapsed().as_secs_f64();
    // On error the arena, dropped, changed nothing.
    agree_before_commit(comm, run.checks(bytes, failing))?;
    Ok(run.commit(arena, path, transfer_seconds))
}

/// Checks the counts before anything moves: hashes what must be identical on
/// every rank (`counts`, `item_bytes` per item, the `options`) into the
/// fingerprint the ranks compare when they open their arenas, and refuses
/// counts that do not have one entry per rank of `comm` (its `p` ranks; every
/// rank takes part in the refusal: see [`refuse`]). Returns the fingerprint.
///
/// # Errors
/// [`RunError::WorldSize`], after the agreement of every rank.
fn check_counts(
    comm: &SimpleCommunicator,
    counts: &[u64],
    p: usize,
    item_bytes: usize,
    options: &Options,
) -> Result<Fingerprint, RunError> {
    let fingerprint = Digest::new("scatter")
        .add(counts)
        .add(&item_bytes)
        .options(options)
        .finish();
    if counts.len() != p {
        let e = RunError::WorldSize {
            ranks: p,
            processors: counts.len(),
        };
        return Err(refuse(comm, e, fingerprint));
    }
    Ok(fingerprint)
}

/// A scatter under way at one rank: the shares and where they start, this
/// rank's place, and what it has received and seen so far.
struct Run<'a> {
    comm: &'a SimpleCommunicator,
    /// Items per rank, in rank order.
    counts: &'a [u64],
    /// Where each rank's share starts among all the items.
    firsts: Vec<u128>,
    /// Items in all.
    total: u128,
    rank: usize,
    /// The root's rank: the last.
    root_rank: usize,
    is_root: bool,
    /// Bytes per item.
    b: usize,
    /// Items per chunk.
    chunk_items: usize,
    /// Emulated links, if any.
    pacing: Option<&'a Pacing>,
    /// The first protocol problem seen.
    protocol: Option<String>,
    /// Items this rank received.
    received: u64,
    /// The checksum of the items received, when hashed chunk by chunk as they
    /// came.
    hashed: Option<Checksum>,
    recorder: Recorder,
    /// When the scatter started.
    started: Instant,
}

impl<'a> Run<'a> {
    /// The scatter of `counts` (one per rank of `comm`, checked) at `rank`, for
    /// items of `b` bytes, with `options`, started at `started`. O(p).
    fn new(
        comm: &'a SimpleCommunicator,
        counts: &'a [u64],
        rank: usize,
        b: usize,
        options: &'a Options,
        started: Instant,
    ) -> Run<'a> {
        let root_rank = counts.len() - 1;
        let firsts: Vec<u128> = counts
            .iter()
            .scan(0u128, |at, &c| {
                let first = *at;
                *at += u128::from(c);
                Some(first)
            })
            .collect();
        Run {
            comm,
            counts,
            firsts,
            total: counts.iter().map(|&c| u128::from(c)).sum(),
            rank,
            root_rank,
            is_root: rank == root_rank,
            b,
            chunk_items: options.chunk_items(b),
            pacing: options.pacing.as_ref(),
            protocol: None,
            received: 0,
            hashed: None,
            recorder: Recorder::new(options.record),
            started,
        }
    }

    /// Opens this rank's arena on every rank, or on none: checks that `items`
    /// (of `item_len` elements of `E` per item) hold every item on the root and
    /// none elsewhere, grows a receiver's by room for its share, and learns
    /// whether every rank could, with the same `fingerprint`
    /// ([`Arena::agreed`]). Returns the arena.
    ///
    /// # Errors
    /// On every rank when any rank cannot start, as [`Arena::agreed`]:
    /// [`RunError::WrongLoad`] on a rank whose items do not match (and
    /// [`RunError::PeerRefused`] on the others), [`RunError::InvalidPlan`] for
    /// items of no bytes, [`RunError::Protocol`] when a share does not fit in
    /// memory, [`RunError::Mismatch`] when the fingerprints differ. The items
    /// are then unchanged.
    fn open_arena<'i, E: Pod>(
        &self,
        items: &'i mut dyn ItemStorage<E>,
        item_len: usize,
        fingerprint: Fingerprint,
    ) -> Result<Arena<'i, E>, RunError> {
        // Every rank agrees on the sizes before anything moves: the root holds every
        // item, the others none, and this rank's share fits in memory.
        let expected = if self.is_root {
            self.total * self.b as u128
        } else {
            0
        };
        // The others receive their share after their (no) items.
        let checked = sizes_match(
            self.rank,
            items.elements() * std::mem::size_of::<E>(),
            expected,
        );
        let share = if self.is_root {
            0
        } else {
            self.counts[self.rank]
        };
        Arena::agreed(
            self.comm,
            (checked, fingerprint),
            items,
            item_len,
            (0, share),
        )
    }

    /// The share whose first message `fault` (the fault injected, if on a rank
    /// of the communicator) spoils, and how: known to the root only, which
    /// sends every message. The root's own fault spoils its first non-empty
    /// message. `None` on the other ranks, for a fault that spoils no message,
    /// or an empty share.
    fn spoiled_share(&self, fault: Option<(usize, Fault)>) -> Option<(usize, Fault)> {
        let (counts, root_rank) = (self.counts, self.root_rank);
        fault.and_then(|(r, f)| {
            if !f.spoils_a_message() || !self.is_root {
                None
            } else if r != root_rank {
                (counts[r] > 0).then_some((r, f))
            } else {
                (0..root_rank).find(|&k| counts[k] > 0).map(|k| (k, f))
            }
        })
    }

    /// How the items go, given the `fault` injected: one MPI_Scatterv when all
    /// the root's items fit in one message, no link is emulated and no message
    /// of another length than announced is injected (one MPI_Scatterv has no
    /// room for it); in chunks otherwise.
    fn choose_path(&self, fault: Option<(usize, Fault)>) -> ScatterPath {
        // A message of another length than announced goes in chunks (one
        // MPI_Scatterv has no room for it).
        let short_injected = fault.is_some_and(|(_, f)| matches!(f, Fault::Short | Fault::Long));
        let fits_one_message = self.total * self.b as u128 <= (self.chunk_items * self.b) as u128;
        if self.pacing.is_none() && fits_one_message && !short_injected {
            ScatterPath::Scatterv
        } else {
            ScatterPath::Chunked
        }
    }

    /// Byte offset of rank `k`'s share in the root's items (they fit: the root
    /// holds them all).
    fn offset(&self, k: usize) -> usize {
        (self.firsts[k] * self.b as u128) as usize
    }

    /// The items as one MPI_Scatterv ([`ScatterPath::Scatterv`]): the root
    /// sends its items, `bytes` (the share of `spoiled_share` spoiled, in a
    /// copy), and nothing to itself (its own share stays where it is); the
    /// others receive their share into `bytes`. Recorded as one collective:
    /// the root's with no peer, the others' from the root.
    fn scatterv(&mut self, bytes: &mut [u8], spoiled_share: Option<(usize, Fault)>) {
        let (comm, counts, b) = (self.comm, self.counts, self.b);
        let (p, root_rank) = (counts.len(), self.root_rank);
        let root = comm.process_at_rank(root_rank as i32);
        let start = self.recorder.now();
        if self.is_root {
            // The root's own share stays where it is: it scatters nothing to
            // itself.
            let mut byte_counts: Vec<Count> =
                counts.iter().map(|&c| (c as usize * b) as Count).collect();
            byte_counts[root_rank] = 0;
            let displs: Vec<Count> = (0..p).map(|k| self.offset(k) as Count).collect();
            let spoiled = spoiled_share.map(|(k, f)| {
                let mut copy = bytes.to_vec();
                let at = self.offset(k);
                let share = spoil(f, &bytes[at..at + counts[k] as usize * b], b);
                copy[at..at + share.len()].copy_from_slice(&share);
                copy
            });
            let data = spoiled.as_deref().unwrap_or(&bytes[..]);
            let partition = Partition::new(data, &byte_counts[..], &displs[..]);
            root.scatter_varcount_into_root(&partition, &mut [0u8; 0][..]);
            let items = (self.total - u128::from(counts[root_rank])) as u64;
            let span = (start, self.recorder.now());
            self.recorder
                .record(Direction::Send, None, (items, 0), span);
        } else {
            root.scatter_varcount_into(&mut bytes[..]);
            self.received = counts[self.rank];
            let span = (start, self.recorder.now());
            let items = (self.received, 0);
            self.recorder
                .record(Direction::Receive, Some(root_rank), items, span);
        }
    }

    /// The root's side of the chunked path ([`ScatterPath::Chunked`]): each
    /// other rank's share of `bytes` in turn, in rank order
    /// ([`Run::send_share`]), the first message of the share of
    /// `spoiled_share` spoiled (a copy).
    fn send_chunks(&mut self, bytes: &[u8], spoiled_share: Option<(usize, Fault)>) {
        let mut pending = spoiled_share;
        let counts = self.counts;
        for (k, &share) in counts.iter().enumerate().take(self.root_rank) {
            self.send_share(k, share, bytes, &mut pending);
        }
    }

    /// Sends rank `k` its `share` of the root's `bytes`, in chunks of at most
    /// `chunk_items` items, each a header (items, whether it is the last,
    /// seconds its items waited for their emulated link) then the items. With
    /// emulated links a chunk leaves once its items are released (pacing that
    /// releases fewer items than the share: the rest at the end of its
    /// batches). When `pending`, the share still to spoil, is `k`'s, its first
    /// message is spoiled (a copy) and `pending` cleared.
    fn send_share(
        &mut self,
        k: usize,
        share: u64,
        bytes: &[u8],
        pending: &mut Option<(usize, Fault)>,
    ) {
        let (comm, b) = (self.comm, self.b);
        let mut sent = 0u64;
        // Recording: since when the next chunk waits for its emulated link.
        let mut waiting: Option<f64> = None;
        while sent < share {
            let now = self.started.elapsed().as_secs_f64();
            let (allowed, next) = match self.pacing {
                None => (share, None),
                Some(pacing) => released(pacing.stream(k), now),
            };
            // Pacing that releases fewer items than the share: the rest
            // goes at the end of its batches.
            let allowed = if next.is_none() { share } else { allowed };
            if allowed <= sent {
                if let Some(at) = next {
                    waiting.get_or_insert(self.recorder.now());
                    sleep_until(self.started, at, Duration::from_millis(1), || {});
                }
                continue;
            }
            let n = (allowed - sent).min(self.chunk_items as u64);
            let last = sent + n == share;
            let at = self.offset(k) + sent as usize * b;
            let data = &bytes[at..at + n as usize * b];
            let spoiled = match *pending {
                Some((target, f)) if target == k => {
                    *pending = None;
                    Some(spoil(f, data, b))
                }
                _ => None,
            };
            let to = comm.process_at_rank(k as i32);
            let now = self.recorder.now();
            let start = waiting.take().unwrap_or(now);
            let header = [n, u64::from(last), (now - start).to_bits()];
            to.send_with_tag(&header[..], TAG_HEADER);
            to.send_with_tag(spoiled.as_deref().unwrap_or(data), TAG_ITEMS);
            let span = (start, self.recorder.now());
            self.recorder.record(Direction::Send, Some(k), (n, 0), span);
            sent += n;
        }
    }

    /// A receiver's side of the chunked path ([`ScatterPath::Chunked`]): its
    /// share from the root into `bytes`, chunk by chunk, each announced by a
    /// header. Each header and message is checked against what is left and
    /// what it announced (the first problem going to `protocol`); each chunk
    /// is hashed as soon as it has arrived (into `hashed`), counted in
    /// `received`, and recorded from the header's arrival (less the seconds
    /// its items waited for their emulated link, as the header says).
    fn receive_chunks(&mut self, bytes: &mut [u8]) {
        let (rank, b, total) = (self.rank, self.b, self.total);
        let root_rank = self.root_rank;
        let root = self.comm.process_at_rank(root_rank as i32);
        let want = self.counts[rank];
        while self.received < want {
            let mut header = [0u64; 3];
            root.receive_into_with_tag(&mut header[..], TAG_HEADER);
            let [n, last, waited] = header;
            let waited = f64::from_bits(waited);
            let start = self.recorder.now()
                - if waited.is_finite() {
                    waited.max(0.0)
                } else {
                    0.0
                };
            let left = want - self.received;
            if n > left || (last == 1) != (n == left) {
                self.protocol.get_or_insert(format!(
                    "from the root: a header announces {n} items (last: {last}) with {left} left"
                ));
            }
            let n = n.min(left);
            let at = self.received as usize * b;
            let expected = n as usize * b;
            let part = &mut bytes[at..at + expected];
            let status = root.receive_into_with_tag(part, TAG_ITEMS);
            // Hashed as soon as it has arrived, while still in cache.
            let first = self.firsts[rank] + u128::from(self.received);
            *self.hashed.get_or_insert(Checksum::ZERO) += range_sum(first, total, b, part);
            let bytes = status.count(u8::equivalent_datatype()).max(0) as usize;
            if bytes != expected {
                self.protocol.get_or_insert(format!(
                    "from the root: a message of {bytes} bytes where its header announced {expected}"
                ));
            }
            let span = (start, self.recorder.now());
            self.recorder
                .record(Direction::Receive, Some(root_rank), (n, 0), span);
            self.received += n;
            if last == 1 {
                break;
            }
        }
    }

    /// This rank's checks before the commit, for [`agree_before_commit`]: its
    /// protocol problems (taken), its count, whether it fails on purpose
    /// (`failing`), and the checksum of what it will hold minus what it held,
    /// its arena's `bytes`. The root's own share stays in place: it counts on
    /// neither side.
    fn checks(&mut self, bytes: &[u8], failing: bool) -> LocalChecks {
        let (total, b) = (self.total, self.b);
        let delta = if self.is_root {
            Checksum::ZERO - range_sum(0, total, b, &bytes[..self.offset(self.root_rank)])
        } else {
            let first = self.firsts[self.rank];
            self.hashed
                .unwrap_or_else(|| range_sum(first, total, b, bytes))
        };
        LocalChecks {
            protocol: self.protocol.take(),
            counts_ok: self.is_root || self.received == self.counts[self.rank],
            failing,
            delta,
        }
    }

    /// The commit, once every rank agreed: the root keeps its share, the last
    /// one; the others hold what they received (moved to the front of
    /// `arena`). Returns this rank's report (items sent by `path`, the
    /// transfer done after `transfer_seconds`).
    fn commit<E: Pod>(
        self,
        arena: Arena<'_, E>,
        path: ScatterPath,
        transfer_seconds: f64,
    ) -> ScatterReport {
        if self.is_root {
            arena.commit(self.firsts[self.root_rank] as usize, self.total as usize);
        } else {
            arena.commit(0, self.counts[self.rank] as usize);
        }
        ScatterReport {
            path,
            items_received: self.received,
            seconds: self.started.elapsed().as_secs_f64(),
            transfer_seconds,
            messages: self.recorder.finish(),
        }
    }
}
