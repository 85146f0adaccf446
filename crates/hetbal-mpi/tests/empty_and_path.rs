//! Ranks that hold or keep no items, and paths (no link from the last rank to the
//! first), under `mpirun`: planned by the library, moved by the chunked runtime
//! and, with start-ups, one message per planned transfer; every rank checks each
//! of its items and its first global position, and a fault on any rank leaves
//! every rank its items.
//!
//! Run by `cargo test` like any test: started without MPI, it starts itself
//! under `mpirun -np 4` (killed after 120 s) and passes when every rank does.

mod common;

use hetbal::ring::{plan, RingInstance};
use hetbal_mpi::ring::{batches_from_plan, link_flows, redistribute};
use hetbal_mpi::{Fault, Options};
use mpi::traits::Communicator;

const RANKS: usize = 4;

/// The item at global position `g` (positions wrap at `total`).
fn item(g: u64) -> [u64; 2] {
    [g, g.wrapping_mul(0x9e37_79b9_7f4a_7c15)]
}

fn items(first: u64, count: u64, total: u64) -> Vec<[u64; 2]> {
    (0..count).map(|k| item((first + k) % total)).collect()
}

/// Plans `ring`, injects every fault on every rank (nothing moves), then moves and
/// checks: on a path rank r ends with positions `sum targets[..r] ..` exactly.
fn check<C: Communicator>(world: &C, name: &str, ring: &RingInstance, batches: bool) {
    let rank = world.rank() as usize;
    let plan = plan(ring, None).unwrap_or_else(|e| panic!("{name}: {e}"));
    let flows = link_flows(RANKS, &plan.flows);
    if ring.is_path() {
        assert_eq!(
            flows[RANKS - 1],
            0,
            "{name}: the missing link carries nothing"
        );
    }
    let (loads, targets) = (ring.loads(), ring.targets());
    let total = ring.total_items();
    let first: u64 = loads[..rank].iter().sum();
    let original = items(first, loads[rank], total);
    let options = Options {
        chunk_bytes: 2 * 16, // two items per message
        batches: batches.then(|| batches_from_plan(ring, &plan)),
        ..Options::default()
    };
    let mut held = original.clone();
    for fault in Fault::ALL {
        for faulty in 0..RANKS {
            let sends = flows[faulty] > 0 || flows[(faulty + RANKS - 1) % RANKS] < 0;
            if fault.spoils_a_message() && !sends {
                continue;
            }
            let faulty_options = Options {
                fault: Some((faulty, fault)),
                ..options.clone()
            };
            let result = redistribute(world, loads, &flows, &mut held, &faulty_options);
            assert!(result.is_err(), "{name}: {fault:?} on rank {faulty}");
            assert_eq!(held, original, "{name}: {fault:?} on rank {faulty}");
        }
    }
    let report = redistribute(world, loads, &flows, &mut held, &options)
        .unwrap_or_else(|e| panic!("{name}: {e}"));
    if ring.is_path() {
        assert_eq!(report.first, targets[..rank].iter().sum::<u64>(), "{name}");
    }
    assert_eq!(held, items(report.first, targets[rank], total), "{name}");
}

fn main() {
    let Some(universe) = common::as_ranks(RANKS) else {
        return;
    };
    let world = universe.world();
    let c = [1e-6; RANKS];
    // Rank 0 holds everything and is drained; ranks 1 and 2 start empty; on a
    // path its items go the long way, through ranks 1 and 2, to rank 3.
    let (loads, targets) = ([12u64, 0, 0, 2], [0u64, 3, 5, 6]);
    let bi = RingInstance::bidirectional(&loads, &targets, &c, &c).unwrap();
    check(&world, "bidirectional ring, empty ranks", &bi, false);
    check(
        &world,
        "bidirectional path, empty ranks",
        &bi.as_path().unwrap(),
        false,
    );
    let uni = RingInstance::unidirectional(&loads, &targets, &c).unwrap();
    check(
        &world,
        "unidirectional path",
        &uni.as_path().unwrap(),
        false,
    );
    // Items move backwards on this path: rank 3 feeds ranks 0 to 2.
    let back = RingInstance::bidirectional(&[0, 1, 0, 9], &[4, 0, 3, 3], &c, &c).unwrap();
    check(&world, "path, backwards", &back.as_path().unwrap(), false);
    // With start-ups: one message per planned transfer.
    let l = [1e-5; RANKS];
    check(
        &world,
        "path with start-ups",
        &bi.as_path().unwrap().with_startups(&l, &l).unwrap(),
        true,
    );
    check(
        &world,
        "ring with start-ups",
        &back.with_startups(&l, &l).unwrap(),
        true,
    );
    if world.rank() == 0 {
        println!("empty ranks and paths: 6 moves verified item by item on {RANKS} ranks");
    }
}
