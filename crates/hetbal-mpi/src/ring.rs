//! Ring redistributions over MPI.
//!
//! Every rank holds an ordered slice of items; the slices, rank after rank, form one
//! cyclic sequence. A plan's net flow on link (i, i+1) moves the boundary between
//! the two slices: a clockwise flow f sends the last f items before the boundary to
//! P_{i+1} (they go before its own items), a counterclockwise one the first items
//! after it to P_i (they go after its own). So the cyclic order is kept, and a
//! forwarder's items are the ones nearest the boundary it receives from: each link
//! streams its items starting at the boundary (clockwise links backwards, the others
//! forwards), so a processor sends its own items first and then forwards items in
//! the order they arrive.
//!
//! The transfer runs in rounds. In each round, every link still active carries one
//! message each way it is used: a 16-byte header (items in the message, and whether
//! it is the link's last message) and up to one chunk of items, possibly none when
//! a forwarder waits for items. Receives and sends of a round are nonblocking and
//! complete together, so chunks are pipelined along the ring and both directions
//! run at once. Incoming items go to staging buffers (what a rank receives, nothing
//! more); the caller's items are read in place and changed only at the commit.

use std::time::Instant;

use mpi::collective::SystemOperation;
use mpi::point_to_point::{Destination, Source};
use mpi::traits::{Communicator, CommunicatorCollectives, Equivalence};

use crate::checksum::range_sum;
use crate::RunError;

/// Tag of messages on clockwise links (P_i to P_{i+1}).
const TAG_CLOCKWISE: i32 = 17;
/// Tag of messages on counterclockwise links (P_{i+1} to P_i).
const TAG_COUNTERCLOCKWISE: i32 = 18;
/// Header bytes of every message: items (u64) and last-message flag (u64).
const HEADER: usize = 16;
/// MPI counts are C ints: every message stays below this many bytes.
const MAX_MESSAGE_BYTES: usize = (1 << 31) - 1;

/// How a redistribution runs.
#[derive(Clone, Debug)]
pub struct Options {
    /// Bytes of items per message (at least one item per message; capped below the
    /// 2^31 limit of MPI counts). Default 1 MiB.
    pub chunk_bytes: usize,
    /// Make one rank misbehave on purpose, to check that nothing is lost.
    pub fault: Option<(usize, Fault)>,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            chunk_bytes: 1 << 20,
            fault: None,
        }
    }
}

/// A deliberate misbehaviour of one rank (`--inject-fault`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Fault {
    /// Flip one byte of the first non-empty message the rank sends.
    Corrupt,
    /// Send the first non-empty message one item short of its header.
    Short,
    /// Report a failure just before the commit.
    FailBeforeCommit,
}

/// What a rank did during a committed redistribution.
#[derive(Clone, Debug, PartialEq)]
pub struct RedistributionReport {
    /// Items this rank sent (own and forwarded).
    pub items_sent: u64,
    /// Items this rank received (kept and forwarded).
    pub items_received: u64,
    /// Rounds of messages.
    pub rounds: u64,
    /// Wall-clock seconds of the transfer and the checks, on this rank.
    pub seconds: f64,
}

/// The net flow on every link (i, i+1) of a ring, positive clockwise, from a plan's
/// flows (each from a processor to a neighbour).
///
/// Complexity: O(n + flows).
///
/// # Example
/// ```
/// use hetbal::ring::Flow;
/// use hetbal_mpi::ring::link_flows;
/// let flows = [Flow { from: 1, to: 0, items: 2 }, Flow { from: 1, to: 2, items: 1 }];
/// assert_eq!(link_flows(3, &flows), vec![-2, 1, 0]);
/// ```
pub fn link_flows(n: usize, flows: &[hetbal::ring::Flow]) -> Vec<i128> {
    let mut f = vec![0i128; n];
    for fl in flows {
        if fl.to == (fl.from + 1) % n {
            f[fl.from] += i128::from(fl.items);
        } else {
            f[fl.to] -= i128::from(fl.items);
        }
    }
    f
}

/// One rank's part of a ring redistribution, in local positions: its own items are
/// 0..load, items from its predecessor are negative, from its successor >= load.
#[derive(Clone, Copy, Debug)]
struct Local {
    load: i128,
    /// Net flow on the incoming-side link (pred, me): > 0 the predecessor sends.
    f_in: i128,
    /// Net flow on the outgoing-side link (me, succ): > 0 I send to the successor.
    f_out: i128,
}

impl Local {
    fn items_to_succ(&self) -> u64 {
        self.f_out.max(0) as u64
    }
    fn items_from_succ(&self) -> u64 {
        (-self.f_out).max(0) as u64
    }
    fn items_to_pred(&self) -> u64 {
        (-self.f_in).max(0) as u64
    }
    fn items_from_pred(&self) -> u64 {
        self.f_in.max(0) as u64
    }
}

/// State of one direction of one link at this rank.
#[derive(Default)]
struct Stream {
    total: u64,
    done: u64,
    finished: bool,
}

impl Stream {
    fn new(total: u64) -> Self {
        Stream {
            total,
            done: 0,
            finished: total == 0,
        }
    }
}

/// Moves the items of a ring plan between the ranks of `comm` (rank i is processor
/// i), checks them, and commits only if every rank's checks pass.
///
/// # Arguments
/// * `comm` - the communicator, one rank per processor;
/// * `loads` - every processor's load (items), identical on every rank;
/// * `flows` - the net flow on each link (i, i+1), positive clockwise
///   ([`link_flows`]), identical on every rank;
/// * `item_bytes` - size of one item;
/// * `items` - this rank's items, `loads[rank] * item_bytes` bytes, in order;
///   replaced by its new items on success, untouched on error;
/// * `options` - chunk size and fault injection.
///
/// # Returns
/// What this rank sent and received, in how many rounds and how long.
///
/// # Errors
/// [`RunError`] on every rank when any rank fails: wrong world size or load,
/// protocol errors, counts or the global order-aware checksum wrong, or a rank
/// reporting failure. The items are then untouched.
///
/// # Complexity
/// O(R) rounds for R = the largest number of chunks a link carries plus the
/// longest forwarding chain; O(items) local work; memory: the items received
/// plus one chunk per outgoing link.
pub fn redistribute<C: Communicator>(
    comm: &C,
    loads: &[u64],
    flows: &[i128],
    item_bytes: usize,
    items: &mut Vec<u8>,
    options: &Options,
) -> Result<RedistributionReport, RunError> {
    let started = Instant::now();
    let n = loads.len();
    let rank = comm.rank() as usize;
    if comm.size() as usize != n || flows.len() != n {
        return Err(RunError::WorldSize {
            ranks: comm.size() as usize,
            processors: n,
        });
    }
    let item_bytes = item_bytes.max(1);
    let expected = u128::from(loads[rank]) * item_bytes as u128;
    // Every rank agrees on the loads' validity before anything moves.
    let load_ok = u128::try_from(items.len()).is_ok_and(|b| b == expected);
    if !all_agree(comm, load_ok) {
        return Err(if load_ok {
            RunError::PeerFailed { failed_ranks: 1 }
        } else {
            RunError::WrongLoad {
                rank,
                bytes: items.len(),
                expected,
            }
        });
    }
    let local = Local {
        load: i128::from(loads[rank]),
        f_in: flows[(rank + n - 1) % n],
        f_out: flows[rank],
    };
    let succ = ((rank + 1) % n) as i32;
    let pred = ((rank + n - 1) % n) as i32;
    let chunk_items = (options.chunk_bytes.min(MAX_MESSAGE_BYTES - HEADER) / item_bytes).max(1);
    let chunk_bytes = chunk_items * item_bytes;
    let my_fault = options.fault.and_then(|(r, f)| (r == rank).then_some(f));

    // Staging buffers: items from the predecessor (stored by local position -k at
    // index from_pred - k) and from the successor (position load + k at index k).
    let mut from_pred_buf = vec![0u8; bytes_of(local.items_from_pred(), item_bytes)?];
    let mut from_succ_buf = vec![0u8; bytes_of(local.items_from_succ(), item_bytes)?];
    let mut send_succ = Stream::new(local.items_to_succ());
    let mut send_pred = Stream::new(local.items_to_pred());
    let mut recv_pred = Stream::new(local.items_from_pred());
    let mut recv_succ = Stream::new(local.items_from_succ());
    let mut out_succ = vec![0u8; HEADER + chunk_bytes];
    let mut out_pred = vec![0u8; HEADER + chunk_bytes];
    let mut in_pred = vec![0u8; HEADER + chunk_bytes];
    let mut in_succ = vec![0u8; HEADER + chunk_bytes];
    let mut protocol: Option<String> = None;
    let mut fault_pending = my_fault.is_some_and(|f| f != Fault::FailBeforeCommit);
    let mut rounds = 0u64;
    let (mut sent, mut received) = (0u64, 0u64);

    while !(send_succ.finished && send_pred.finished && recv_pred.finished && recv_succ.finished) {
        rounds += 1;
        // Build this round's outgoing messages from what is held now.
        let mut succ_len = 0;
        if !send_succ.finished {
            // Clockwise: positions downwards from load - done.
            let hi = local.load - i128::from(send_succ.done);
            let low_held = -i128::from(recv_pred.done);
            let k = (hi - low_held)
                .min(i128::from(send_succ.total - send_succ.done))
                .min(chunk_items as i128)
                .max(0) as u64;
            let last = send_succ.done + k == send_succ.total;
            let payload = &mut out_succ[HEADER..HEADER + k as usize * item_bytes];
            copy_positions(
                hi - i128::from(k),
                k,
                &local,
                items,
                &from_pred_buf,
                &from_succ_buf,
                item_bytes,
                payload,
            );
            succ_len = HEADER + payload.len();
            write_header(&mut out_succ, k, last);
            send_succ.done += k;
            send_succ.finished = last;
            sent += k;
            if k > 0 && fault_pending {
                succ_len = apply_fault(my_fault, &mut out_succ, succ_len, item_bytes);
                fault_pending = false;
            }
        }
        let mut pred_len = 0;
        if !send_pred.finished {
            // Counterclockwise: positions upwards from done.
            let lo = i128::from(send_pred.done);
            let high_held = local.load + i128::from(recv_succ.done);
            let k = (high_held - lo)
                .min(i128::from(send_pred.total - send_pred.done))
                .min(chunk_items as i128)
                .max(0) as u64;
            let last = send_pred.done + k == send_pred.total;
            let payload = &mut out_pred[HEADER..HEADER + k as usize * item_bytes];
            copy_positions(
                lo,
                k,
                &local,
                items,
                &from_pred_buf,
                &from_succ_buf,
                item_bytes,
                payload,
            );
            pred_len = HEADER + payload.len();
            write_header(&mut out_pred, k, last);
            send_pred.done += k;
            send_pred.finished = last;
            sent += k;
            if k > 0 && fault_pending {
                pred_len = apply_fault(my_fault, &mut out_pred, pred_len, item_bytes);
                fault_pending = false;
            }
        }
        let want_pred = !recv_pred.finished;
        let want_succ = !recv_succ.finished;
        let (mut got_pred, mut got_succ) = (0usize, 0usize);
        mpi::request::scope(|scope| {
            let mut receives = Vec::new();
            if want_pred {
                receives.push((
                    0,
                    comm.process_at_rank(pred).immediate_receive_into_with_tag(
                        scope,
                        &mut in_pred[..],
                        TAG_CLOCKWISE,
                    ),
                ));
            }
            if want_succ {
                receives.push((
                    1,
                    comm.process_at_rank(succ).immediate_receive_into_with_tag(
                        scope,
                        &mut in_succ[..],
                        TAG_COUNTERCLOCKWISE,
                    ),
                ));
            }
            let mut sends = Vec::new();
            if succ_len > 0 {
                sends.push(comm.process_at_rank(succ).immediate_send_with_tag(
                    scope,
                    &out_succ[..succ_len],
                    TAG_CLOCKWISE,
                ));
            }
            if pred_len > 0 {
                sends.push(comm.process_at_rank(pred).immediate_send_with_tag(
                    scope,
                    &out_pred[..pred_len],
                    TAG_COUNTERCLOCKWISE,
                ));
            }
            for (which, request) in receives {
                let status = request.wait();
                let bytes = status.count(u8::equivalent_datatype()).max(0) as usize;
                if which == 0 {
                    got_pred = bytes;
                } else {
                    got_succ = bytes;
                }
            }
            for request in sends {
                request.wait();
            }
        });
        if want_pred {
            let message = take_message(&in_pred[..got_pred], item_bytes, &mut recv_pred);
            if let Some(payload) = message.payload {
                // Positions -(done + k) .. -done: buffer indices from_pred - done - k
                // .. from_pred - done.
                let end = (recv_pred.total - recv_pred.done) as usize * item_bytes;
                from_pred_buf[end - payload.len()..end].copy_from_slice(payload);
            }
            if let Some(reason) = message.error {
                protocol.get_or_insert(format!("from rank {pred}: {reason}"));
            }
            recv_pred.done += message.items;
            received += message.items;
        }
        if want_succ {
            let message = take_message(&in_succ[..got_succ], item_bytes, &mut recv_succ);
            if let Some(payload) = message.payload {
                let start = recv_succ.done as usize * item_bytes;
                from_succ_buf[start..start + payload.len()].copy_from_slice(payload);
            }
            if let Some(reason) = message.error {
                protocol.get_or_insert(format!("from rank {succ}: {reason}"));
            }
            recv_succ.done += message.items;
            received += message.items;
        }
    }

    // Checks: counts, then the order-aware checksum of what this rank will hold
    // against what it held, summed over all ranks.
    let total: u128 = loads.iter().map(|&l| u128::from(l)).sum();
    let first: u128 = loads[..rank].iter().map(|&l| u128::from(l)).sum();
    let counts_ok = protocol.is_none()
        && send_succ.done == local.items_to_succ()
        && send_pred.done == local.items_to_pred()
        && recv_pred.done == local.items_from_pred()
        && recv_succ.done == local.items_from_succ();
    let before = range_sum(first, total, item_bytes, items);
    let (s, e) = (-local.f_in, local.load - local.f_out); // final local range
    let after = if counts_ok {
        final_pieces(
            &local,
            s,
            e,
            items,
            &from_pred_buf,
            &from_succ_buf,
            item_bytes,
        )
        .iter()
        .fold(0u64, |acc, &(position, bytes)| {
            let global = (first as i128 + position).rem_euclid(total.max(1) as i128) as u128;
            acc.wrapping_add(range_sum(global, total, item_bytes, bytes))
        })
    } else {
        before
    };
    let failing = my_fault == Some(Fault::FailBeforeCommit);
    let local_state: [u64; 3] = [
        u64::from(!counts_ok),
        u64::from(failing),
        after.wrapping_sub(before),
    ];
    let mut global = [0u64; 3];
    comm.all_reduce_into(&local_state[..], &mut global[..], SystemOperation::sum());
    let [bad_counts, failed, delta] = global;
    if failed > 0 {
        return Err(RunError::PeerFailed {
            failed_ranks: failed,
        });
    }
    if let Some(reason) = protocol {
        return Err(RunError::Protocol { rank, reason });
    }
    if bad_counts > 0 || delta != 0 {
        return Err(RunError::Verification {
            failed_ranks: bad_counts,
            checksum_differs: delta != 0,
        });
    }
    // Commit: own items kept in place, received ones around them.
    let b = item_bytes as i128;
    let from_pred_items = local.items_from_pred() as i128;
    let front = if s < 0 {
        ((from_pred_items + s) * b) as usize..((from_pred_items + e.min(0)) * b) as usize
    } else {
        0..0
    };
    let back = if e > local.load {
        ((s.max(local.load) - local.load) * b) as usize..((e - local.load) * b) as usize
    } else {
        0..0
    };
    let own = (s.clamp(0, local.load) * b) as usize..(e.clamp(0, local.load) * b) as usize;
    // In place: keep the own part, grow, move it after the predecessor's part, and
    // copy the received parts around it (memmove and memcpy, no second copy).
    let own_len = own.end.saturating_sub(own.start);
    items.truncate(own.end.max(own.start));
    items.drain(..own.start);
    items.resize(front.len() + own_len + back.len(), 0);
    items.copy_within(0..own_len, front.len());
    let front_len = front.len();
    items[..front_len].copy_from_slice(&from_pred_buf[front]);
    items[front_len + own_len..].copy_from_slice(&from_succ_buf[back]);
    Ok(RedistributionReport {
        items_sent: sent,
        items_received: received,
        rounds,
        seconds: started.elapsed().as_secs_f64(),
    })
}

/// True on every rank when `ok` is true on every rank.
fn all_agree<C: Communicator>(comm: &C, ok: bool) -> bool {
    let local = u64::from(!ok);
    let mut failed = 0u64;
    comm.all_reduce_into(&local, &mut failed, SystemOperation::sum());
    failed == 0
}

/// Bytes of `items` items, refusing sizes that do not fit in memory.
fn bytes_of(items: u64, item_bytes: usize) -> Result<usize, RunError> {
    usize::try_from(items)
        .ok()
        .and_then(|k| k.checked_mul(item_bytes))
        .ok_or_else(|| RunError::Protocol {
            rank: 0,
            reason: format!("{items} items of {item_bytes} bytes do not fit in memory"),
        })
}

fn write_header(buf: &mut [u8], items: u64, last: bool) {
    buf[..8].copy_from_slice(&items.to_le_bytes());
    buf[8..16].copy_from_slice(&u64::from(last).to_le_bytes());
}

/// A received message, checked against its stream.
struct Message<'a> {
    /// Items the message accounts for (its header's claim, within the stream).
    items: u64,
    /// Its items, when the message is well formed.
    payload: Option<&'a [u8]>,
    /// What was wrong with it.
    error: Option<String>,
}

/// Checks a received message against the stream and marks the stream finished on
/// its last message. A wrong message is still accounted as its header says (within
/// the stream's total), so that both sides of the link end the protocol together and
/// the checks fail instead of a rank waiting forever.
fn take_message<'a>(message: &'a [u8], item_bytes: usize, stream: &mut Stream) -> Message<'a> {
    let left = stream.total - stream.done;
    if message.len() < HEADER {
        stream.finished = true;
        return Message {
            items: 0,
            payload: None,
            error: Some(format!(
                "a message of {} bytes has no header",
                message.len()
            )),
        };
    }
    let k = u64::from_le_bytes(message[..8].try_into().expect("8 bytes"));
    let last = u64::from_le_bytes(message[8..16].try_into().expect("8 bytes")) == 1;
    let payload = &message[HEADER..];
    let items = k.min(left);
    stream.finished = last || items == left;
    let error = if payload.len() as u128 != u128::from(k) * item_bytes as u128 {
        Some(format!(
            "the header announces {k} items ({} bytes) but {} bytes came",
            u128::from(k) * item_bytes as u128,
            payload.len()
        ))
    } else if k > left {
        Some(format!(
            "{} items came on a link that carries {}",
            stream.done + k,
            stream.total
        ))
    } else if last != (k == left) {
        Some(format!(
            "the link ended after {} of its {} items",
            stream.done + k,
            stream.total
        ))
    } else {
        None
    };
    Message {
        items,
        payload: error.is_none().then_some(payload),
        error,
    }
}

/// Copies items at local positions `from .. from + k` into `out`.
#[allow(clippy::too_many_arguments)]
fn copy_positions(
    from: i128,
    k: u64,
    local: &Local,
    own: &[u8],
    from_pred: &[u8],
    from_succ: &[u8],
    item_bytes: usize,
    out: &mut [u8],
) {
    let mut written = 0usize;
    for (position, bytes) in pieces_of(
        local,
        from,
        from + i128::from(k),
        own,
        from_pred,
        from_succ,
        item_bytes,
    ) {
        let _ = position;
        out[written..written + bytes.len()].copy_from_slice(bytes);
        written += bytes.len();
    }
}

/// The byte slices holding local positions `s .. e`, in order, each with its first
/// position: predecessor's part, own part, successor's part.
fn pieces_of<'a>(
    local: &Local,
    s: i128,
    e: i128,
    own: &'a [u8],
    from_pred: &'a [u8],
    from_succ: &'a [u8],
    item_bytes: usize,
) -> Vec<(i128, &'a [u8])> {
    let mut pieces = Vec::with_capacity(3);
    let b = item_bytes as i128;
    let from_pred_items = local.items_from_pred() as i128;
    if s < 0 {
        let (a, z) = (s, e.min(0));
        if z > a {
            let (i, j) = ((from_pred_items + a) * b, (from_pred_items + z) * b);
            pieces.push((a, &from_pred[i as usize..j as usize]));
        }
    }
    let (a, z) = (s.max(0), e.min(local.load));
    if z > a {
        pieces.push((a, &own[(a * b) as usize..(z * b) as usize]));
    }
    if e > local.load {
        let (a, z) = (s.max(local.load), e);
        if z > a {
            let (i, j) = ((a - local.load) * b, (z - local.load) * b);
            pieces.push((a, &from_succ[i as usize..j as usize]));
        }
    }
    pieces
}

/// The final items of this rank, as pieces (see [`pieces_of`]).
fn final_pieces<'a>(
    local: &Local,
    s: i128,
    e: i128,
    own: &'a [u8],
    from_pred: &'a [u8],
    from_succ: &'a [u8],
    item_bytes: usize,
) -> Vec<(i128, &'a [u8])> {
    pieces_of(local, s, e, own, from_pred, from_succ, item_bytes)
}

/// Applies a corrupting or shortening fault to a built message; returns its length.
fn apply_fault(fault: Option<Fault>, message: &mut [u8], len: usize, item_bytes: usize) -> usize {
    match fault {
        Some(Fault::Corrupt) => {
            message[HEADER] ^= 0x5a;
            len
        }
        Some(Fault::Short) => len - item_bytes,
        _ => len,
    }
}
