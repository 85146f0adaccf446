//! Typed items under `mpirun`: a ring redistribution, a scatter and a GEN_BLOCK
//! run move plain-old-data structs (not bytes), in order, and every rank checks
//! each item; an injected fault and a wrong load leave every rank exactly its
//! original items.
//!
//! Run by `cargo test` like any test: started without MPI, it starts itself
//! under `mpirun -np 3` (killed after 120 s) and passes when every rank does.

mod common;

use bytemuck::{Pod, Zeroable};
use hetbal::genblock::{self, GenBlockInstance, Method};
use hetbal::ring::{plan, RingInstance};
use hetbal_mpi::ring::{link_flows, redistribute};
use hetbal_mpi::scatter::scatter_in_order;
use hetbal_mpi::{Fault, Options, RunError};
use mpi::traits::Communicator;

/// An item of an application: 32 bytes, no padding.
#[derive(Clone, Copy, Debug, PartialEq, Pod, Zeroable)]
#[repr(C)]
struct Particle {
    position: [f64; 3],
    id: u64,
}

/// The particle at global position `g`.
fn particle(g: u64) -> Particle {
    let x = g as f64;
    Particle {
        position: [x, -x, 0.5 * x],
        id: g,
    }
}

/// The particles at global positions `first ..` (wrapping at `total`).
fn particles(first: u64, count: u64, total: u64) -> Vec<Particle> {
    (0..count).map(|k| particle((first + k) % total)).collect()
}

const RANKS: usize = 3;

fn main() {
    let Some(universe) = common::as_ranks(RANKS) else {
        return;
    };
    let world = universe.world();
    let rank = world.rank() as usize;
    assert_eq!(world.size() as usize, RANKS);

    // Ring: loads [5, 40, 3] to targets [20, 8, 20], both directions.
    let (loads, targets) = ([5u64, 40, 3], [20u64, 8, 20]);
    let ring = RingInstance::bidirectional(&loads, &targets, &[1.0; 3], &[1.5; 3]).unwrap();
    let flows = link_flows(RANKS, &plan(&ring, None).unwrap().flows);
    let total: u64 = loads.iter().sum();
    let first: u64 = loads[..rank].iter().sum();
    let original = particles(first, loads[rank], total);
    let options = Options {
        chunk_bytes: 3 * 32, // three particles per message
        ..Options::default()
    };
    // A rank with one particle too many: refused before anything moves.
    let mut items = original.clone();
    if rank == 1 {
        items.push(particle(999));
    }
    let e = redistribute(&world, &loads, &flows, &mut items, &options).unwrap_err();
    assert!(
        matches!(
            e,
            RunError::WrongLoad { rank: 1, .. } | RunError::PeerRefused { rank: 1 }
        ),
        "{e}"
    );
    items.truncate(original.len());
    assert_eq!(items, original);
    // Faults: every rank keeps exactly its particles (in place, same order).
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
            let result = redistribute(&world, &loads, &flows, &mut items, &faulty_options);
            assert!(result.is_err(), "{fault:?} on rank {faulty}");
            assert_eq!(items, original, "{fault:?} on rank {faulty}");
        }
    }
    redistribute(&world, &loads, &flows, &mut items, &options).unwrap();
    let into_rank_0 = flows[RANKS - 1].rem_euclid(i128::from(total)) as u64;
    let new_first = (total - into_rank_0 + targets[..rank].iter().sum::<u64>()) % total;
    assert_eq!(items, particles(new_first, targets[rank], total), "ring");

    // Scatter from rank 2 (the last: the root) of 30 particles: 12, 10 and 8.
    let counts = [12u64, 10, 8];
    let mut items = if rank == 2 {
        particles(0, 30, 30)
    } else {
        Vec::new()
    };
    scatter_in_order(&world, &counts, &mut items, &options).unwrap();
    let first: u64 = counts[..rank].iter().sum();
    assert_eq!(items, particles(first, counts[rank], 30), "scatter");

    // GEN_BLOCK of u32 elements: blocks [7, 16, 11] to [15, 2, 17].
    let (source, target) = ([7u64, 16, 11], [15u64, 2, 17]);
    let instance = GenBlockInstance::new(&source, &target, 1.0, 1.0).unwrap();
    let schedule = genblock::plan(&instance, Method::Best).schedule;
    let block = |blocks: &[u64]| -> Vec<u32> {
        let first: u64 = blocks[..rank].iter().sum();
        (first..first + blocks[rank])
            .map(|g| g as u32 * 7)
            .collect()
    };
    let mut elements = block(&source);
    let corrupt = Options {
        fault: Some((1, Fault::Corrupt)),
        ..options.clone()
    };
    let e = hetbal_mpi::genblock::run_steps(&world, &instance, &schedule, &mut elements, &corrupt);
    assert!(e.is_err());
    assert_eq!(elements, block(&source), "GEN_BLOCK rolled back");
    hetbal_mpi::genblock::run_steps(&world, &instance, &schedule, &mut elements, &options).unwrap();
    assert_eq!(elements, block(&target), "GEN_BLOCK");
    if rank == 0 {
        println!("typed items: ring, scatter and GEN_BLOCK verified on {RANKS} ranks");
    }
}
