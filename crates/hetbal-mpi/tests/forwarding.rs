//! Items passed on along the ring under `mpirun` (4 ranks): long forwarding
//! chains clockwise and counterclockwise with small chunks, and circulations
//! where every rank passes items on. Every rank ends with exactly its items, a
//! forwarding rank never holds more than a few chunks of items to pass on (in
//! the circulations too, where each passes on more than that bound), and
//! a fault anywhere on a chain (the forwarders included) leaves every rank its
//! original items.
//!
//! The same with the plan's messages (`Options::batches`, the executor of
//! rings with start-ups): a forwarder holds at most the room of a few chunks
//! and one planned message to pass on, and drops items once they have left.
//! And a forwarder's memory as the system counts it, passing on 192 MiB: both
//! executors stay within 48 MiB of what the rank held before.
//!
//! Run by `cargo test` like any test: started without MPI, it starts itself
//! under `mpirun -np 4` and passes when every rank does.

mod common;

use common::items;

use hetbal_mpi::memory::{peak_resident_bytes, resident_bytes};
use hetbal_mpi::ring::{redistribute, redistribute_bytes, Batches, PlannedBatch};
use hetbal_mpi::{Fault, Options};
use mpi::traits::{Communicator, CommunicatorCollectives};

const RANKS: usize = 4;
/// Items per message in these runs.
const CHUNK: u64 = 2;

/// The planned messages of `flows` on every link: each of `size` items (the
/// last one fewer), one message each (`message`) or trains.
fn messages_of(flows: [i128; RANKS], size: u64, message: bool) -> Batches {
    let n = RANKS;
    let split = |items: u64| {
        let whole = (0..items / size).map(|_| PlannedBatch {
            items: size,
            message,
        });
        let rest = (items % size > 0).then_some(PlannedBatch {
            items: items % size,
            message,
        });
        whole.chain(rest).collect::<Vec<_>>()
    };
    let streams = (0..n)
        .flat_map(|i| {
            let to_succ = flows[i].max(0) as u64;
            let to_pred = (-flows[(i + n - 1) % n]).max(0) as u64;
            [split(to_succ), split(to_pred)]
        })
        .collect();
    Batches { streams }
}

/// Runs `flows` on `loads` (every rank), in chunks or along `batches`, checks
/// the new items, how many items each rank held to pass on, and that every
/// fault leaves every rank its items.
fn check<C: Communicator>(
    world: &C,
    name: &str,
    (loads, flows): ([u64; RANKS], [i128; RANKS]),
    batches: Option<Batches>,
) {
    let rank = world.rank() as usize;
    let n = RANKS;
    let total: u64 = loads.iter().sum();
    let first: u64 = loads[..rank].iter().sum();
    let original = items(first, loads[rank], total);
    // The largest planned message (a forwarder may gather one beyond its room).
    let largest = (batches.iter())
        .flat_map(|b| b.streams.iter().flatten())
        .map(|b| b.items)
        .max()
        .unwrap_or(0);
    let options = Options {
        chunk_bytes: CHUNK as usize * 16,
        batches,
        ..Options::default()
    };
    let mut held = original.clone();
    for fault in Fault::ALL {
        for faulty in 0..n {
            let faulty_options = Options {
                fault: Some((faulty, fault)),
                ..options.clone()
            };
            let sends = flows[faulty] > 0 || flows[(faulty + n - 1) % n] < 0;
            if fault.spoils_a_message() && !sends {
                continue;
            }
            let result = redistribute(world, &loads, &flows, &mut held, &faulty_options);
            assert!(result.is_err(), "{name}: {fault:?} on rank {faulty}");
            assert_eq!(held, original, "{name}: {fault:?} on rank {faulty}");
        }
    }
    let report = redistribute(world, &loads, &flows, &mut held, &options)
        .unwrap_or_else(|e| panic!("{name}: {e}"));
    // The new items: rank 0's first global position moves back by the flow
    // into it from rank n - 1 (counted on the ring of `total` items).
    let targets: Vec<u64> = (0..n)
        .map(|i| (i128::from(loads[i]) + flows[(i + n - 1) % n] - flows[i]) as u64)
        .collect();
    let into_rank_0 = flows[n - 1].rem_euclid(i128::from(total)) as u64;
    let new_first = (total - into_rank_0 + targets[..rank].iter().sum::<u64>()) % total;
    assert_eq!(
        held,
        items(new_first, targets[rank], total),
        "{name}: rank {rank}"
    );
    assert_eq!(
        report.first, new_first,
        "{name}: rank {rank}'s first position"
    );
    let passed_on = (flows[rank] - i128::from(loads[rank]))
        .max(-flows[(rank + n - 1) % n] - i128::from(loads[rank]))
        .max(0);
    if passed_on > 0 {
        // Four chunks of room, and the chunk arriving while the last one leaves
        // (with planned messages: and one message gathering beyond the room).
        assert!(
            report.most_passed_on > 0 && report.most_passed_on <= 5 * CHUNK + largest,
            "{name}: rank {rank} held {} items to pass on at once ({passed_on} in all)",
            report.most_passed_on
        );
    }
    if passed_on == 0 {
        assert_eq!(report.most_passed_on, 0, "{name}: rank {rank}");
    }
}

/// A forwarder's memory: rank 0 gives rank 3 192 items of 1 MiB through ranks
/// 1 and 2 (which hold one item each), in chunks and along planned messages of
/// 4 MiB; each forwarder's peak resident memory stays within 48 MiB of its
/// resident memory before (holding all it passes on would take 192 MiB).
fn memory<C: CommunicatorCollectives>(world: &C) {
    const MIB: usize = 1 << 20;
    let rank = world.rank() as usize;
    let loads = [192, 1, 1, 1];
    let flows = [192, 193, 194, 0];
    let fill = |first: usize, count: u64| -> Vec<u8> {
        (0..count as usize)
            .flat_map(|k| std::iter::repeat_n((first + k) as u8, MIB))
            .collect()
    };
    let first: u64 = loads[..rank].iter().sum();
    for batches in [None, Some(messages_of(flows, 4, true))] {
        let planned = batches.is_some();
        let options = Options {
            batches,
            ..Options::default()
        };
        let mut held = fill(first as usize, loads[rank]);
        let before = resident_bytes().expect("Linux");
        redistribute_bytes(world, &loads, &flows, MIB, &mut held, &options)
            .unwrap_or_else(|e| panic!("memory (planned: {planned}): {e}"));
        let peak = peak_resident_bytes().expect("Linux");
        if rank == 1 || rank == 2 {
            let grown = peak.saturating_sub(before) as usize;
            assert!(
                grown <= 48 * MIB,
                "rank {rank} (planned messages: {planned}) grew by {} MiB passing on 192 MiB",
                grown / MIB
            );
            assert!(held.is_empty(), "rank {rank}");
            println!(
                "forwarding: rank {rank} passed on 192 MiB ({}) with its peak memory {} MiB above what it held before",
                if planned { "planned messages of 4 MiB" } else { "chunks of 1 MiB" },
                grown / MIB
            );
        }
        if rank == 3 {
            // Its own item after the 194 it receives (compared without
            // printing 195 MiB).
            let right = held == fill(0, 195);
            assert!(right, "rank 3 (planned messages: {planned}): wrong items");
        }
        drop(held);
        world.barrier();
    }
}

fn main() {
    let Some(universe) = common::as_ranks(RANKS) else {
        return;
    };
    let world = universe.world();
    // The memory test first, while the forwarders' peak is still low.
    memory(&world);
    let cases: [(&str, [u64; RANKS], [i128; RANKS]); 6] = [
        // Clockwise: rank 0 gives 39 items to rank 1, which sends its own 19
        // on too and passes 38 of rank 0's on to rank 2, which passes 57 on to
        // rank 3: without the room limit they would pile up.
        ("clockwise chain", [40, 20, 1, 1], [39, 58, 58, 0]),
        // The same counterclockwise, from rank 3 to rank 0.
        ("counterclockwise chain", [1, 1, 20, 40], [-58, -58, -39, 0]),
        // Both ways at once: rank 0 feeds rank 2 through rank 1 (clockwise)
        // and through rank 3 (counterclockwise).
        ("both ways", [40, 1, 1, 1], [19, 19, -20, -20]),
        // Circulations: every rank passes items on, 20 each (more than the
        // five chunks of the bound: sending its own 40 items first, as the
        // runtime once did, a rank would hold them all), clockwise and
        // counterclockwise; and one where items go more than once around.
        ("circulation", [40, 40, 40, 40], [60, 60, 60, 60]),
        (
            "counterclockwise circulation",
            [40, 40, 40, 40],
            [-60, -60, -60, -60],
        ),
        ("circulation around", [3, 3, 3, 3], [11, 11, 11, 11]),
    ];
    for (name, loads, flows) in cases {
        check(&world, name, (loads, flows), None);
        // Planned messages of 5 items (gathered from several chunks received,
        // own and passed on together) and trains in chunks.
        let planned = format!("{name}, planned messages");
        check(
            &world,
            &planned,
            (loads, flows),
            Some(messages_of(flows, 5, true)),
        );
        let trains = format!("{name}, planned trains");
        check(
            &world,
            &trains,
            (loads, flows),
            Some(messages_of(flows, 5, false)),
        );
    }
    if world.rank() == 0 {
        println!(
            "forwarding: chains, both ways and circulations, in chunks and along planned messages, verified on {RANKS} ranks"
        );
    }
}
