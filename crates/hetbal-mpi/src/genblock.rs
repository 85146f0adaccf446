//! GEN_BLOCK redistributions over MPI: the planned steps run one after the other,
//! each a matching (every rank sends at most one message and receives at most one),
//! so no step has contention. Rank r holds source block r (r < P) and ends with
//! target block r (r < Q); the pieces of one pair of blocks go in array order.

use hetbal::genblock::Message;
use mpi::collective::SystemOperation;
use mpi::traits::{Communicator, CommunicatorCollectives, Destination, Source};

use crate::checksum::range_sum;
use crate::RunError;

/// Runs a GEN_BLOCK schedule: `steps` of messages (from source block, to target
/// block, elements), on a communicator of `max(P, Q)` ranks. `items` holds this
/// rank's source block (`source[rank]` items of `item_bytes`, empty when rank >= P)
/// and is replaced by its target block on success. Counts and an order-aware
/// checksum are agreed by every rank before the commit; on any failure every rank
/// keeps its items.
///
/// # Errors
/// [`RunError`] on every rank when any rank fails (sizes, messages, checksum).
///
/// # Complexity
/// One nonblocking send and receive per rank and step; O(N) bytes moved once.
pub fn run_steps<C: Communicator>(
    comm: &C,
    source: &[u64],
    target: &[u64],
    steps: &[Vec<Message>],
    item_bytes: usize,
    items: &mut Vec<u8>,
) -> Result<(), RunError> {
    let rank = comm.rank() as usize;
    let n = source.len().max(target.len());
    if comm.size() as usize != n {
        return Err(RunError::WorldSize {
            ranks: comm.size() as usize,
            processors: n,
        });
    }
    let b = item_bytes.max(1) as u128;
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
    // Every rank agrees on the sizes before anything moves.
    let ok = items.len() as u128 == u128::from(my_source) * b;
    let mut bad = 0u64;
    comm.all_reduce_into(&u64::from(!ok), &mut bad, SystemOperation::sum());
    if bad > 0 {
        return Err(RunError::WrongLoad {
            rank,
            bytes: items.len(),
            expected: u128::from(my_source) * b,
        });
    }
    let mut received = vec![0u8; (u128::from(my_target) * b) as usize];
    // Elements of each pair already moved, to place the next piece (array order).
    let mut sent_of: std::collections::HashMap<usize, u128> = Default::default();
    let mut got_of: std::collections::HashMap<usize, u128> = Default::default();
    for step in steps {
        let out = step.iter().find(|m| m.from == rank && m.size > 0);
        let inc = step.iter().find(|m| m.to == rank && m.size > 0);
        let send_range = out.map(|m| {
            let overlap = src_start[m.from].max(dst_start[m.to]);
            let done = sent_of.entry(m.to).or_insert(0);
            let at = overlap - src_start[m.from] + *done;
            *done += u128::from(m.size);
            (
                (at * b) as usize,
                ((at + u128::from(m.size)) * b) as usize,
                m.to,
            )
        });
        let recv_range = inc.map(|m| {
            let overlap = src_start[m.from].max(dst_start[m.to]);
            let done = got_of.entry(m.from).or_insert(0);
            let at = overlap - dst_start[m.to] + *done;
            *done += u128::from(m.size);
            (
                (at * b) as usize,
                ((at + u128::from(m.size)) * b) as usize,
                m.from,
            )
        });
        // A checked schedule stays within the blocks (its pieces add up to the
        // overlaps); a wrong one fails the checks below instead of writing outside.
        let send_range = send_range.filter(|&(_, e, _)| e <= items.len());
        let recv_range = recv_range.filter(|&(_, e, _)| e <= received.len());
        mpi::request::scope(|scope| {
            let receive = recv_range.map(|(s, e, from)| {
                comm.process_at_rank(from as i32)
                    .immediate_receive_into(scope, &mut received[s..e])
            });
            let send = send_range.map(|(s, e, to)| {
                comm.process_at_rank(to as i32)
                    .immediate_send(scope, &items[s..e])
            });
            if let Some(r) = receive {
                r.wait();
            }
            if let Some(r) = send {
                r.wait();
            }
        });
    }
    let before = range_sum(
        src_start.get(rank).copied().unwrap_or(0),
        total,
        item_bytes.max(1),
        items,
    );
    let after = range_sum(
        dst_start.get(rank).copied().unwrap_or(0),
        total,
        item_bytes.max(1),
        &received,
    );
    let counts_ok = sent_of.values().sum::<u128>() == u128::from(my_source)
        && got_of.values().sum::<u128>() == u128::from(my_target);
    let local = [u64::from(!counts_ok), after.wrapping_sub(before)];
    let mut global = [0u64; 2];
    comm.all_reduce_into(&local[..], &mut global[..], SystemOperation::sum());
    if global[0] > 0 || global[1] != 0 {
        return Err(RunError::Verification {
            failed_ranks: global[0],
            checksum_differs: global[1] != 0,
        });
    }
    *items = received;
    Ok(())
}
