//! Kept items never move, under `mpirun`: ranks hold their items in
//! [`ItemBuffer`]s and receive items in front of theirs and behind them; after
//! every redistribution each item a rank kept is at the address it had, and
//! every item is right. The same moves with `Vec`s shift the kept items (so the
//! check would see a copy). A fault on any rank leaves every buffer as it was,
//! addresses included. GEN_BLOCK steps, a scatter and the balancer's moves into
//! item buffers keep the elements a rank keeps (the root's share) at their
//! addresses too.
//!
//! Run by `cargo test` like any test: started without MPI, it starts itself
//! under `mpirun -np 3` (killed after 120 s) and passes when every rank does.

mod common;

use hetbal::genblock::{self, GenBlockInstance, Method};
use hetbal::iterative::Policy;
use hetbal::ring::{plan, RingInstance};
use hetbal_mpi::balancer::Balancer;
use hetbal_mpi::buffer::ItemBuffer;
use hetbal_mpi::genblock::run_steps;
use hetbal_mpi::ring::{link_flows, redistribute};
use hetbal_mpi::scatter::scatter_in_order;
use hetbal_mpi::{Fault, Options};
use mpi::traits::Communicator;
use std::collections::HashMap;

const RANKS: usize = 3;

/// Item `g`: its global position and a payload.
fn item(g: u64) -> [u64; 4] {
    [g, g ^ 0xdead_beef, g.wrapping_mul(31), 7]
}

/// Where each item (by position) is.
fn addresses(items: &[[u64; 4]]) -> HashMap<u64, usize> {
    items
        .iter()
        .map(|i| (i[0], i as *const _ as usize))
        .collect()
}

fn main() {
    let Some(universe) = common::as_ranks(RANKS) else {
        return;
    };
    let world = universe.world();
    let rank = world.rank() as usize;
    // Bidirectional: rank 1 receives from both sides (in front and behind).
    let moves: [([u64; 3], [u64; 3]); 3] = [
        ([600, 100, 500], [200, 800, 200]),
        ([200, 800, 200], [300, 300, 600]),
        ([300, 300, 600], [600, 100, 500]),
    ];
    let c = [1e-6; RANKS];
    let options = Options {
        chunk_bytes: 64 * 32,
        ..Options::default()
    };
    let total = 1200u64;
    let (loads, _) = moves[0];
    let first: u64 = loads[..rank].iter().sum();
    let mut buffer =
        ItemBuffer::from_slice(&(first..first + loads[rank]).map(item).collect::<Vec<_>>())
            .unwrap();
    let mut vec: Vec<[u64; 4]> = buffer.to_vec();
    let (mut kept_checked, mut vec_moved) = (0usize, 0usize);
    for (loads, targets) in moves {
        let ring = RingInstance::bidirectional(&loads, &targets, &c, &c).unwrap();
        let flows = link_flows(RANKS, &plan(&ring, None).unwrap().flows);
        // Faults: nothing changes, addresses included.
        let before = addresses(&buffer);
        let contents = buffer.to_vec();
        for faulty in 0..RANKS {
            let faulty_options = Options {
                fault: Some((faulty, Fault::Corrupt)),
                ..options.clone()
            };
            // A rank that sends nothing has no message to spoil.
            if flows[faulty] <= 0 && flows[(faulty + RANKS - 1) % RANKS] >= 0 {
                continue;
            }
            let result = redistribute(&world, &loads, &flows, &mut buffer, &faulty_options);
            assert!(result.is_err(), "fault on rank {faulty}");
            assert_eq!(&buffer[..], &contents[..]);
            assert_eq!(addresses(&buffer), before);
        }
        // Positions are counted from rank 0's first item before the move.
        let position: u64 = loads[..rank].iter().sum();
        let origin = (buffer[0][0] + total - position) % total;
        let report = redistribute(&world, &loads, &flows, &mut buffer, &options).unwrap();
        let expected: Vec<[u64; 4]> = (0..targets[rank])
            .map(|k| item((origin + report.first + k) % total))
            .collect();
        assert_eq!(&buffer[..], &expected[..]);
        let after = addresses(&buffer);
        for (g, at) in &before {
            if let Some(now) = after.get(g) {
                assert_eq!(now, at, "rank {rank}: kept item {g} moved");
                kept_checked += 1;
            }
        }
        // The same move with a Vec: items arriving in front shift the kept ones.
        let vec_before = addresses(&vec);
        redistribute(&world, &loads, &flows, &mut vec, &options).unwrap();
        assert_eq!(&vec[..], &expected[..]);
        let vec_after = addresses(&vec);
        vec_moved += vec_before
            .iter()
            .filter(|(g, at)| vec_after.get(g).is_some_and(|now| now != *at))
            .count();
    }
    // GEN_BLOCK and a scatter into item buffers: kept elements stay put too.
    let (source, target) = ([70u64, 160, 110], [150u64, 20, 170]);
    let instance = GenBlockInstance::new(&source, &target, 1.0, 1.0).unwrap();
    let schedule = genblock::plan(&instance, Method::Best).schedule;
    let block = |blocks: &[u64]| -> Vec<[u64; 4]> {
        let first: u64 = blocks[..rank].iter().sum();
        (first..first + blocks[rank]).map(item).collect()
    };
    let mut elements = ItemBuffer::from_slice(&block(&source)).unwrap();
    let before = addresses(&elements);
    run_steps(&world, &instance, &schedule, &mut elements, &options).unwrap();
    assert_eq!(&elements[..], &block(&target)[..]);
    let after = addresses(&elements);
    let kept = before.iter().filter(|(g, _)| after.contains_key(g)).count();
    assert!(before
        .iter()
        .all(|(g, at)| after.get(g).is_none_or(|now| now == at)));
    kept_checked += kept;
    let counts = [40u64, 50, 30];
    // The root is the last rank.
    let mut shares = if rank == RANKS - 1 {
        ItemBuffer::from_slice(&(0..120).map(item).collect::<Vec<_>>()).unwrap()
    } else {
        ItemBuffer::new().unwrap()
    };
    let root_first = shares.first().map(|i| i as *const _ as usize);
    scatter_in_order(&world, &counts, &mut shares, &options).unwrap();
    assert_eq!(&shares[..], &block(&counts)[..]);
    if rank == RANKS - 1 {
        // The root keeps the end of its items: its share starts 90 items in.
        assert_eq!(
            shares.first().map(|i| i as *const _ as usize),
            root_first.map(|a| a + 90 * std::mem::size_of::<[u64; 4]>())
        );
    }
    // The balancer moving an item buffer: rank 2 reports four times the time
    // per item, items leave it, and what every rank keeps stays put.
    let mut balancer = Balancer::with_policy(
        Policy::Profitability,
        vec![1e-9; RANKS],
        Some(vec![1e-9; RANKS]),
    )
    .unwrap();
    let mut cells = ItemBuffer::from_slice(&block(&[100, 100, 100])).unwrap();
    let mut moves = 0;
    for _ in 0..4 {
        let before = addresses(&cells);
        let slow = if rank == 2 { 4.0 } else { 1.0 };
        let seconds = 1e-5 * cells.len() as f64 * slow;
        let d = balancer
            .rebalance(&world, &mut cells, seconds, 100)
            .unwrap();
        moves += usize::from(d.redistribute);
        let after = addresses(&cells);
        assert!(before
            .iter()
            .all(|(g, at)| after.get(g).is_none_or(|now| now == at)));
        assert!(cells.iter().all(|c| *c == item(c[0])));
        kept_checked += before.keys().filter(|g| after.contains_key(g)).count();
    }
    assert!(moves > 0, "the balancer never moved");
    if rank == 2 {
        assert!(
            cells.len() < 100,
            "the slow rank kept {} cells",
            cells.len()
        );
    }
    assert!(kept_checked > 0);
    if rank == 1 {
        // Rank 1 receives in front of its items in the first move.
        assert!(
            vec_moved > 0,
            "the Vec's kept items never moved: the check would see nothing"
        );
        println!("kept items in place: {kept_checked} kept items checked on rank 1, {vec_moved} moved in a Vec");
    }
}
