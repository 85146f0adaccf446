//! GEN_BLOCK redistributions over MPI: the planned steps run one after the other,
//! each a matching (every rank sends at most one message and receives at most one),
//! so no step has contention. Rank r holds source block r (r < P) and ends with
//! target block r (r < Q); the pieces of one pair of blocks go in array order.
//!
//! The nothing-lost protocol of [`crate::protocol`] applies: what a rank receives
//! goes to a staging buffer (its target block), its source block is read in place,
//! and counts and an order-aware checksum are agreed by every rank before any rank
//! commits.
//!
//! Emulated links ([`Pacing`]) follow the GEN_BLOCK cost model, the only one the
//! instance carries: a step costs `startup + unit * (largest message in it)` and
//! the steps follow each other. So step s starts at `S_s = sum over earlier steps
//! of (startup + unit * largest size)`, and element j (from 1) of a message of step
//! s crosses its link at `S_s + startup + j * unit`: every link has the same cost,
//! and the redistribution lasts the plan's cost.

use std::collections::HashMap;
use std::time::{Duration, Instant};

use hetbal::genblock::Message;
use mpi::traits::{Communicator, Destination, Equivalence, Source};

use crate::checksum::range_sum;
use crate::pacing::sleep_until;
use crate::protocol::{
    agree_before_commit, agree_before_start, sizes_match, spoil, Fault, LocalChecks,
};
use crate::RunError;

/// Tag of GEN_BLOCK messages.
const TAG_STEP: i32 = 31;
/// MPI counts are C ints: every message stays below this many bytes.
const MAX_MESSAGE_BYTES: usize = (1 << 31) - 1;

/// Emulated links for a GEN_BLOCK schedule: the cost model of the instance, in
/// seconds (the instance's `startup` and `unit` times a time scale).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Pacing {
    /// Seconds paid at the start of every step.
    pub startup: f64,
    /// Seconds per element on every link.
    pub unit: f64,
}

impl Pacing {
    /// When each step starts, in seconds from the start of the redistribution, and
    /// (last entry) when the last one ends: `S_0 = 0`,
    /// `S_{s+1} = S_s + startup + unit * (largest size in step s)`. The last entry
    /// is the plan's cost in seconds.
    ///
    /// Complexity: O(messages).
    ///
    /// # Example
    /// ```
    /// use hetbal::genblock::Message;
    /// use hetbal_mpi::genblock::Pacing;
    /// let steps = vec![
    ///     vec![Message { from: 0, to: 0, size: 3 }, Message { from: 1, to: 1, size: 1 }],
    ///     vec![Message { from: 1, to: 0, size: 2 }],
    /// ];
    /// let pacing = Pacing { startup: 0.5, unit: 0.25 };
    /// assert_eq!(pacing.step_starts(&steps), vec![0.0, 1.25, 2.25]);
    /// ```
    pub fn step_starts(&self, steps: &[Vec<Message>]) -> Vec<f64> {
        let mut starts = Vec::with_capacity(steps.len() + 1);
        let mut clock = 0.0f64;
        starts.push(clock);
        for step in steps {
            let largest = step.iter().map(|m| m.size).max().unwrap_or(0);
            clock += self.startup + self.unit * largest as f64;
            starts.push(clock);
        }
        starts
    }
}

/// How a GEN_BLOCK redistribution runs.
#[derive(Clone, Debug)]
pub struct Options {
    /// Bytes of elements per message: a larger piece of a step goes in several
    /// messages (at least one element each; capped below the 2^31 limit of MPI
    /// counts). Default 1 MiB.
    pub chunk_bytes: usize,
    /// Make one rank misbehave on purpose: `(rank, fault)`. [`Fault::Corrupt`] and
    /// [`Fault::Short`] spoil the first chunk of the rank's first message to
    /// another rank (of its first message to itself when it sends to no other);
    /// [`Fault::FailBeforeCommit`] makes it report a failure.
    pub fault: Option<(usize, Fault)>,
    /// Emulated links: each chunk leaves once the plan's cost model says its last
    /// element has crossed the link. `None`: as fast as MPI goes.
    pub pacing: Option<Pacing>,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            chunk_bytes: 1 << 20,
            fault: None,
            pacing: None,
        }
    }
}

/// What a rank did during a committed GEN_BLOCK redistribution.
#[derive(Clone, Debug, PartialEq)]
pub struct GenBlockReport {
    /// Elements this rank sent (to itself included).
    pub items_sent: u64,
    /// Elements this rank received (from itself included).
    pub items_received: u64,
    /// Wall-clock seconds of the transfer and the checks, on this rank.
    pub seconds: f64,
    /// Wall-clock seconds of the transfer alone (until this rank's last step).
    pub transfer_seconds: f64,
}

/// Checks that `steps` is a schedule of the redistribution from `source` to
/// `target` blocks: every message joins a source block and a target block, no two
/// non-empty messages of a step share a sender or a receiver, and the sizes of
/// every pair add up to the overlap of its blocks. Every rank finds the same
/// answer without communicating.
fn check_steps(source: &[u64], target: &[u64], steps: &[Vec<Message>]) -> Result<(), String> {
    let starts = |blocks: &[u64]| -> Vec<u128> {
        blocks
            .iter()
            .scan(0u128, |at, &x| {
                let s = *at;
                *at += u128::from(x);
                Some(s)
            })
            .collect()
    };
    let (src, dst) = (starts(source), starts(target));
    let overlap = |i: usize, j: usize| -> u128 {
        let lo = src[i].max(dst[j]);
        let hi = (src[i] + u128::from(source[i])).min(dst[j] + u128::from(target[j]));
        hi.saturating_sub(lo)
    };
    let mut moved: HashMap<(usize, usize), u128> = HashMap::new();
    for (s, step) in steps.iter().enumerate() {
        let mut senders = std::collections::HashSet::new();
        let mut receivers = std::collections::HashSet::new();
        for m in step.iter().filter(|m| m.size > 0) {
            if m.from >= source.len() || m.to >= target.len() {
                return Err(format!(
                    "step {s}: a message from {} to {} (there are {} source and {} target blocks)",
                    m.from,
                    m.to,
                    source.len(),
                    target.len()
                ));
            }
            if !senders.insert(m.from) || !receivers.insert(m.to) {
                return Err(format!(
                    "step {s}: block {} sends or block {} receives twice",
                    m.from, m.to
                ));
            }
            *moved.entry((m.from, m.to)).or_insert(0) += u128::from(m.size);
        }
    }
    for (&(i, j), &size) in &moved {
        if size != overlap(i, j) {
            return Err(format!(
                "the messages from {i} to {j} add up to {size} elements, the overlap of the blocks is {}",
                overlap(i, j)
            ));
        }
    }
    let needed = (0..source.len())
        .flat_map(|i| (0..target.len()).map(move |j| (i, j)))
        .filter(|&(i, j)| overlap(i, j) > 0)
        .count();
    if needed != moved.len() {
        return Err(format!(
            "{} pairs of blocks overlap but the steps carry {}",
            needed,
            moved.len()
        ));
    }
    Ok(())
}

/// Runs a GEN_BLOCK schedule: `steps` of messages (from source block, to target
/// block, elements), on a communicator of `max(P, Q)` ranks. `items` holds this
/// rank's source block (`source[rank]` items of `item_bytes`, empty when rank >= P)
/// and is replaced by its target block on success. Counts and an order-aware
/// checksum are agreed by every rank before the commit; on any failure every rank
/// keeps its items.
///
/// # Errors
/// On every rank when any rank fails: [`RunError::WorldSize`] for a communicator
/// of the wrong size; [`RunError::InvalidPlan`] when `steps` is not a schedule of
/// the redistribution; [`RunError::WrongLoad`] (on the wrong rank,
/// [`RunError::PeerFailed`] on the others) when a rank's items do not match its
/// block; [`RunError::Protocol`], [`RunError::Verification`] or
/// [`RunError::PeerFailed`] when the checks before the commit fail.
///
/// # Complexity
/// Per rank and step, one nonblocking send and one receive per chunk; O(N) bytes
/// moved once and hashed once on each side; O(messages) to check the schedule.
pub fn run_steps<C: Communicator>(
    comm: &C,
    source: &[u64],
    target: &[u64],
    steps: &[Vec<Message>],
    item_bytes: usize,
    items: &mut Vec<u8>,
    options: &Options,
) -> Result<GenBlockReport, RunError> {
    let started = Instant::now();
    let rank = comm.rank() as usize;
    let n = source.len().max(target.len());
    if comm.size() as usize != n {
        return Err(RunError::WorldSize {
            ranks: comm.size() as usize,
            processors: n,
        });
    }
    check_steps(source, target, steps).map_err(|reason| RunError::InvalidPlan { reason })?;
    let item_bytes = item_bytes.max(1);
    let b = item_bytes as u128;
    let starts = |blocks: &[u64]| -> Vec<u128> {
        blocks
            .iter()
            .scan(0u128, |at, &x| {
                let s = *at;
                *at += u128::from(x);
                Some(s)
            })
            .collect()
    };
    let (src_start, dst_start) = (starts(source), starts(target));
    let total: u128 = source.iter().map(|&x| u128::from(x)).sum();
    let my_source = source.get(rank).copied().unwrap_or(0);
    let my_target = target.get(rank).copied().unwrap_or(0);
    // Every rank agrees on the sizes before anything moves (the target block must
    // fit in memory too).
    let target_bytes = usize::try_from(u128::from(my_target) * b).ok();
    agree_before_start(
        comm,
        sizes_match(rank, items.len(), u128::from(my_source) * b).and_then(|()| {
            target_bytes.map(|_| ()).ok_or_else(|| RunError::Protocol {
                rank,
                reason: format!("a target block of {my_target} elements does not fit in memory"),
            })
        }),
    )?;
    let mut received = vec![0u8; target_bytes.unwrap_or(0)];
    let chunk_items = (options.chunk_bytes.min(MAX_MESSAGE_BYTES) / item_bytes).max(1);
    let chunk = chunk_items * item_bytes;
    let my_fault = options.fault.and_then(|(r, f)| (r == rank).then_some(f));
    // The step whose message a faulty rank spoils: its first one to another rank
    // (else its first one to itself).
    let fault_step = my_fault.filter(|f| f.spoils_a_message()).and_then(|_| {
        let sends_in = |to_others: bool| {
            steps.iter().position(|step| {
                step.iter()
                    .any(|m| m.from == rank && m.size > 0 && (m.to != rank || !to_others))
            })
        };
        sends_in(true).or_else(|| sends_in(false))
    });
    let step_starts = options.pacing.map(|p| p.step_starts(steps));
    let mut protocol: Option<String> = None;
    // Elements of each pair already moved, to place the next piece (array order).
    let mut sent_of: HashMap<usize, u128> = HashMap::new();
    let mut got_of: HashMap<usize, u128> = HashMap::new();
    for (s, step) in steps.iter().enumerate() {
        let out = step.iter().find(|m| m.from == rank && m.size > 0);
        let inc = step.iter().find(|m| m.to == rank && m.size > 0);
        // Byte ranges in the source block (to send) and the target block (to
        // receive): inside the blocks, the schedule being checked.
        let send_range = out.map(|m| {
            let overlap = src_start[m.from].max(dst_start[m.to]);
            let done = sent_of.entry(m.to).or_insert(0);
            let at = overlap - src_start[m.from] + *done;
            *done += u128::from(m.size);
            (
                (at * b) as usize..((at + u128::from(m.size)) * b) as usize,
                m.to,
            )
        });
        let recv_range = inc.map(|m| {
            let overlap = src_start[m.from].max(dst_start[m.to]);
            let done = got_of.entry(m.from).or_insert(0);
            let at = overlap - dst_start[m.to] + *done;
            *done += u128::from(m.size);
            (
                (at * b) as usize..((at + u128::from(m.size)) * b) as usize,
                m.from,
            )
        });
        // A faulty rank spoils the first chunk of its message (a copy: the items
        // stay).
        let spoiled = match (&send_range, my_fault) {
            (Some((range, _)), Some(fault)) if fault_step == Some(s) => {
                let first = range.start..range.end.min(range.start + chunk);
                Some(spoil(fault, &items[first], item_bytes))
            }
            _ => None,
        };
        let mut got: Vec<(usize, usize)> = Vec::new(); // (expected, received) bytes
        mpi::request::scope(|scope| {
            let mut receives = Vec::new();
            if let Some((range, from)) = &recv_range {
                for part in received[range.clone()].chunks_mut(chunk) {
                    let len = part.len();
                    receives.push((
                        len,
                        comm.process_at_rank(*from as i32)
                            .immediate_receive_into_with_tag(scope, part, TAG_STEP),
                    ));
                }
            }
            let mut sends = Vec::new();
            if let Some((range, to)) = &send_range {
                for (c, part) in items[range.clone()].chunks(chunk).enumerate() {
                    if let (Some(pacing), Some(starts)) = (options.pacing, &step_starts) {
                        // The chunk leaves when its last element has crossed.
                        let elements = c * chunk_items + part.len() / item_bytes;
                        let at = starts[s] + pacing.startup + elements as f64 * pacing.unit;
                        sleep_until(started, at, Duration::from_millis(1), || {
                            // Keeps this rank's transfers with the others moving.
                            let _ = comm.any_process().immediate_probe();
                        });
                    }
                    let data = match (&spoiled, c) {
                        (Some(spoiled), 0) => &spoiled[..],
                        _ => part,
                    };
                    sends.push(
                        comm.process_at_rank(*to as i32)
                            .immediate_send_with_tag(scope, data, TAG_STEP),
                    );
                }
            }
            for (expected, request) in receives {
                let status = request.wait();
                got.push((
                    expected,
                    status.count(u8::equivalent_datatype()).max(0) as usize,
                ));
            }
            for request in sends {
                request.wait();
            }
        });
        if let Some(&(expected, bytes)) = got.iter().find(|(e, g)| e != g) {
            let from = recv_range.as_ref().map_or(0, |(_, from)| *from);
            protocol.get_or_insert(format!(
                "step {s}: from rank {from}, a message of {bytes} bytes where {expected} were due"
            ));
        }
    }
    let transfer_seconds = started.elapsed().as_secs_f64();
    let before = range_sum(
        src_start.get(rank).copied().unwrap_or(0),
        total,
        item_bytes,
        items,
    );
    let after = range_sum(
        dst_start.get(rank).copied().unwrap_or(0),
        total,
        item_bytes,
        &received,
    );
    let items_sent: u128 = sent_of.values().sum();
    let items_received: u128 = got_of.values().sum();
    agree_before_commit(
        comm,
        LocalChecks {
            protocol,
            counts_ok: items_sent == u128::from(my_source)
                && items_received == u128::from(my_target),
            failing: my_fault == Some(Fault::FailBeforeCommit),
            delta: after.wrapping_sub(before),
        },
    )?;
    *items = received;
    Ok(GenBlockReport {
        items_sent: items_sent as u64,
        items_received: items_received as u64,
        seconds: started.elapsed().as_secs_f64(),
        transfer_seconds,
    })
}
