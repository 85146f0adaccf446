//! Items passed on along the ring under `mpirun` (4 ranks): long forwarding
//! chains clockwise and counterclockwise with small chunks, and circulations
//! where every rank passes items on. Every rank ends with exactly its items, a
//! forwarding rank never holds more than a few chunks of items to pass on (in
//! the circulations too, where each passes on more than that bound), and
//! a fault anywhere on a chain (the forwarders included) leaves every rank its
//! original items.
//!
//! Run by `cargo test` like any test: started without MPI, it starts itself
//! under `mpirun -np 4` and passes when every rank does.

mod common;

use common::items;

use hetbal_mpi::ring::redistribute;
use hetbal_mpi::{Fault, Options};
use mpi::traits::Communicator;

const RANKS: usize = 4;
/// Items per message in these runs.
const CHUNK: u64 = 2;

/// Runs `flows` on `loads` (every rank), checks the new items, how many items
/// each rank held to pass on, and that every fault leaves every rank its items.
fn check<C: Communicator>(world: &C, name: &str, loads: [u64; RANKS], flows: [i128; RANKS]) {
    let rank = world.rank() as usize;
    let n = RANKS;
    let total: u64 = loads.iter().sum();
    let first: u64 = loads[..rank].iter().sum();
    let original = items(first, loads[rank], total);
    let options = Options {
        chunk_bytes: CHUNK as usize * 16,
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
    let passed_on = (flows[rank] - i128::from(loads[rank]))
        .max(-flows[(rank + n - 1) % n] - i128::from(loads[rank]))
        .max(0);
    if passed_on > 0 {
        // Four chunks of room, and the chunk arriving while the last one leaves.
        assert!(
            report.most_passed_on > 0 && report.most_passed_on <= 5 * CHUNK,
            "{name}: rank {rank} held {} items to pass on at once ({passed_on} in all)",
            report.most_passed_on
        );
    }
    if passed_on == 0 {
        assert_eq!(report.most_passed_on, 0, "{name}: rank {rank}");
    }
}

fn main() {
    let Some(universe) = common::as_ranks(RANKS) else {
        return;
    };
    let world = universe.world();
    // Clockwise: rank 0 gives 39 items to rank 1, which sends its own 19 on
    // first (while they leave, rank 0's items keep coming: without the room
    // limit they would pile up) and passes 38 of rank 0's on to rank 2, which
    // passes 57 on to rank 3.
    check(&world, "clockwise chain", [40, 20, 1, 1], [39, 58, 58, 0]);
    // The same counterclockwise, from rank 3 to rank 0.
    check(
        &world,
        "counterclockwise chain",
        [1, 1, 20, 40],
        [-58, -58, -39, 0],
    );
    // Both ways at once: rank 0 feeds rank 2 through rank 1 (clockwise) and
    // through rank 3 (counterclockwise).
    check(&world, "both ways", [40, 1, 1, 1], [19, 19, -20, -20]);
    // Circulations: every rank passes items on, 20 each (more than the five
    // chunks of the bound: sending its own 40 items first, as the runtime once
    // did, a rank would hold them all), clockwise and counterclockwise; and
    // one where items go more than once around the ring.
    check(&world, "circulation", [40, 40, 40, 40], [60, 60, 60, 60]);
    check(
        &world,
        "counterclockwise circulation",
        [40, 40, 40, 40],
        [-60, -60, -60, -60],
    );
    check(&world, "circulation around", [3, 3, 3, 3], [11, 11, 11, 11]);
    if world.rank() == 0 {
        println!("forwarding: chains, both ways and a circulation verified on {RANKS} ranks");
    }
}
