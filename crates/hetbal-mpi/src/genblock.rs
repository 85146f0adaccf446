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
//! Emulated links ([`pacing_from_plan`]) follow the GEN_BLOCK cost model, the only
//! one the instance carries: a step costs `startup + unit * (largest message in
//! it)` and the steps follow each other. So step s starts at `S_s = sum over
//! earlier steps of (startup + unit * largest size)`, and element j (from 1) of a
//! message of step s crosses its link at `S_s + startup + j * unit`: every link has
//! the same cost, and the redistribution lasts the plan's cost.

use std::collections::HashMap;
use std::time::{Duration, Instant};

use hetbal::genblock::{
    check_schedule, redistribution_graph, GenBlockInstance, Message, StepSchedule,
};
use mpi::traits::{Communicator, Destination, Equivalence, Source};

use crate::checksum::range_sum;
use crate::pacing::{sleep_until, Pacing};
use crate::protocol::{
    agree_before_commit, agree_before_start, sizes_match, spoil, Fault, LocalChecks,
};
use crate::{Options, RunError};

/// Tag of GEN_BLOCK messages.
const TAG_STEP: i32 = 31;

/// Emulated links for a GEN_BLOCK schedule, for [`Options::pacing`]: the cost
/// model of the instance, `scale` seconds per time unit. Stream s holds one batch
/// that every message of step s follows: it starts at
/// `S_s + startup` (`S_0 = 0`, `S_{s+1} = S_s + startup + unit * (largest size in
/// step s)`), carries the step's largest size, at `unit` per element. A chunk
/// leaves once its last element has crossed its link.
///
/// Complexity: O(messages).
///
/// # Example
/// ```
/// use hetbal::genblock::{GenBlockInstance, Message, StepSchedule};
/// use hetbal_mpi::genblock::pacing_from_plan;
/// let instance = GenBlockInstance::new(&[3, 3], &[5, 1], 0.5, 0.25).unwrap();
/// let m = |from, to, size| Message { from, to, size };
/// let schedule = StepSchedule { steps: vec![vec![m(0, 0, 3), m(1, 1, 1)], vec![m(1, 0, 2)]] };
/// let pacing = pacing_from_plan(&instance, &schedule, 1.0);
/// assert_eq!(pacing.stream(0), &[(0.5, 3, 0.25)]);
/// assert_eq!(pacing.stream(1), &[(1.75, 2, 0.25)]); // after step 0's 1.25
/// ```
pub fn pacing_from_plan(
    instance: &GenBlockInstance,
    schedule: &StepSchedule,
    scale: f64,
) -> Pacing {
    let (startup, unit) = (instance.startup() * scale, instance.unit() * scale);
    let mut clock = 0.0f64;
    let streams = schedule
        .largest()
        .into_iter()
        .map(|largest| {
            let batch = (clock + startup, largest, unit);
            clock += startup + unit * largest as f64;
            vec![batch]
        })
        .collect();
    Pacing { streams }
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

/// Runs a GEN_BLOCK schedule on a communicator of `max(P, Q)` ranks: its steps of
/// messages (from source block, to target block, elements) one after the other.
/// The schedule is checked first with [`check_schedule`]. Counts and an
/// order-aware checksum are agreed by every rank before the commit; on any
/// failure every rank keeps its items.
///
/// # Arguments
/// * `comm` - the communicator: rank r holds source block r and gets target block
///   r;
/// * `instance` - the source and target blocks (its costs serve only to pace,
///   through `options`);
/// * `schedule` - the steps, identical on every rank;
/// * `item_bytes` - bytes per element;
/// * `items` - this rank's source block (`source[rank]` elements, empty when
///   rank >= P), replaced by its target block on success;
/// * `options` - message size (larger pieces go in several messages); fault
///   injection: [`Fault::Corrupt`] and [`Fault::Short`] spoil the first chunk of
///   the faulty rank's first message to another rank (of its first message to
///   itself when it sends to no other), [`Fault::FailBeforeCommit`] makes it
///   report a failure; emulated links ([`pacing_from_plan`]).
///
/// # Errors
/// On every rank when any rank fails: [`RunError::WorldSize`] for a communicator
/// of the wrong size; [`RunError::InvalidPlan`] when `schedule` is not a schedule
/// of the redistribution (every rule it breaks, see [`check_schedule`]);
/// [`RunError::WrongLoad`] (on the wrong rank,
/// [`RunError::PeerFailed`] on the others) when a rank's items do not match its
/// block; [`RunError::Protocol`], [`RunError::Verification`] or
/// [`RunError::PeerFailed`] when the checks before the commit fail.
///
/// # Complexity
/// Per rank and step, one nonblocking send and one receive per chunk; O(N) bytes
/// moved once and hashed once on each side; O(messages) to check the schedule.
pub fn run_steps<C: Communicator>(
    comm: &C,
    instance: &GenBlockInstance,
    schedule: &StepSchedule,
    item_bytes: usize,
    items: &mut Vec<u8>,
    options: &Options,
) -> Result<GenBlockReport, RunError> {
    let started = Instant::now();
    let rank = comm.rank() as usize;
    let (source, target, steps) = (instance.source(), instance.target(), &schedule.steps);
    let n = source.len().max(target.len());
    if comm.size() as usize != n {
        return Err(RunError::WorldSize {
            ranks: comm.size() as usize,
            processors: n,
        });
    }
    check_schedule(&redistribution_graph(instance), schedule).map_err(|violations| {
        let reasons: Vec<String> = violations.iter().map(ToString::to_string).collect();
        RunError::InvalidPlan {
            reason: reasons.join("; "),
        }
    })?;
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
    let chunk_items = options.chunk_items(item_bytes);
    let chunk = chunk_items * item_bytes;
    let my_fault = options.fault_of(rank);
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
    let mut protocol: Option<String> = None;
    // Elements of each pair already moved, to place the next piece (array order).
    let mut sent_of: HashMap<usize, u128> = HashMap::new();
    let mut got_of: HashMap<usize, u128> = HashMap::new();
    // Where message `m` goes in a block starting at element `block`: after the
    // pieces of its pair already moved (`moved[peer]`), in bytes; and the peer.
    let place = |m: &Message, block: u128, moved: &mut HashMap<usize, u128>, peer: usize| {
        let done = moved.entry(peer).or_insert(0);
        let at = src_start[m.from].max(dst_start[m.to]) - block + *done;
        *done += u128::from(m.size);
        let range = (at * b) as usize..((at + u128::from(m.size)) * b) as usize;
        (range, peer)
    };
    for (s, step) in steps.iter().enumerate() {
        let out = step.iter().find(|m| m.from == rank && m.size > 0);
        let inc = step.iter().find(|m| m.to == rank && m.size > 0);
        // Byte ranges in the source block (to send) and the target block (to
        // receive): inside the blocks, the schedule being checked.
        let send_range = out.map(|m| place(m, src_start[m.from], &mut sent_of, m.to));
        let recv_range = inc.map(|m| place(m, dst_start[m.to], &mut got_of, m.from));
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
                    let batch = options.pacing.as_ref().and_then(|p| p.stream(s).first());
                    if let Some(&(start, _, per_element)) = batch {
                        // The chunk leaves when its last element has crossed.
                        let elements = c * chunk_items + part.len() / item_bytes;
                        let at = start + elements as f64 * per_element;
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
