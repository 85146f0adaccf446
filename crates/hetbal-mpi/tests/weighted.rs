//! The weighted balancer under `mpirun` (4 ranks): cells of different
//! weights (a dense cluster) and sizes, rank 3 three times slower (the compute
//! times given, so that every run decides the same). The first step moves the
//! cells to within the tolerance of the optimal weighted partition (checked
//! against the library's partition of all the weights), cells and weights
//! checked element by element; the next step does not move; a move that does
//! not pay is not made; bad weights on one rank fail on every rank with
//! nothing changed.
//!
//! Run by `cargo test` like any test: started without MPI, it starts itself
//! under `mpirun -np 4` and passes when every rank does.

mod common;

use hetbal::partition::partition;
use hetbal_mpi::links::{LinkCost, RingLinks};
use hetbal_mpi::weighted::WeightedBalancer;
use hetbal_mpi::RunError;
use mpi::traits::Communicator;

const RANKS: usize = 4;
const CELLS: u64 = 400;
/// Seconds per unit of weight of each rank: rank 3 three times slower.
const SPEEDS: [f64; RANKS] = [1e-6, 1e-6, 1e-6, 3e-6];

/// Cell g's weight: a cluster of heavy cells around 120.
fn weight(g: u64) -> f64 {
    if (100..140).contains(&g) {
        50.0
    } else {
        (g % 3) as f64 + 1.0
    }
}

/// Cell g's elements (as many as its weight, at most 8): its index and place.
fn cell(g: u64) -> impl Iterator<Item = u64> {
    (0..(weight(g) as u64).min(8)).map(move |j| g * 16 + j)
}

/// Data, offsets and weights of cells `first .. last`.
fn cells(first: u64, last: u64) -> (Vec<u64>, Vec<u64>, Vec<f64>) {
    let data: Vec<u64> = (first..last).flat_map(cell).collect();
    let mut offsets = vec![0];
    for g in first..last {
        offsets.push(offsets.last().unwrap() + cell(g).count() as u64);
    }
    (data, offsets, (first..last).map(weight).collect())
}

fn main() {
    let Some(universe) = common::as_ranks(RANKS) else {
        return;
    };
    let world = universe.world();
    let rank = world.rank() as usize;
    let fast = LinkCost {
        startup: 1e-5,
        per_byte: 1e-9,
    };
    let links = RingLinks {
        to_succ: vec![fast; RANKS],
        to_pred: vec![fast; RANKS],
    };
    let mut balancer = WeightedBalancer::new(links.clone());
    let mut cuts: Vec<u64> = (0..=RANKS as u64)
        .map(|r| r * CELLS / RANKS as u64)
        .collect();
    let (mut data, mut offsets, mut weights) = cells(cuts[rank], cuts[rank + 1]);
    let seconds = |w: &[f64]| w.iter().sum::<f64>() * SPEEDS[rank];

    // Bad weights on one rank: every rank fails, nothing changes.
    for (case, bad) in [
        ("a weight too few", 1),
        ("a NaN weight", 2),
        ("a negative weight", 3),
    ] {
        let mut my_weights = weights.clone();
        if rank == bad {
            match case {
                "a weight too few" => {
                    my_weights.pop();
                }
                "a NaN weight" => my_weights[0] = f64::NAN,
                _ => my_weights[1] = -1.0,
            }
        }
        let before = (data.clone(), offsets.clone(), my_weights.clone());
        let t = seconds(&weights);
        let e = balancer
            .step(&world, (&mut data, &mut offsets, &mut my_weights), t, 100)
            .expect_err(case);
        match e {
            RunError::InvalidItems { rank: r, .. } => assert_eq!((r, rank), (bad, bad), "{case}"),
            RunError::PeerRefused { rank: r } => assert_eq!(r, bad, "{case}"),
            e => panic!("{case}: {e}"),
        }
        // Compared bit for bit (a NaN is not equal to itself).
        let bits = |w: &[f64]| w.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
        assert!(before.0 == data && before.1 == offsets, "{case}");
        assert_eq!(bits(&before.2), bits(&my_weights), "{case}");
    }

    // With one iteration left nothing pays.
    let t = seconds(&weights);
    let d = balancer
        .step(&world, (&mut data, &mut offsets, &mut weights), t, 0)
        .unwrap();
    assert!(!d.redistribute && d.cuts == cuts, "{d:?}");

    // The first step moves to within 5 % of the optimum.
    let t = seconds(&weights);
    let d = balancer
        .step(&world, (&mut data, &mut offsets, &mut weights), t, 100)
        .unwrap_or_else(|e| panic!("step: {e}"));
    assert!(d.redistribute, "{d:?}");
    let (moved, balanced) = (d.moved_items, d.balanced_seconds);
    let all: Vec<f64> = (0..CELLS).map(weight).collect();
    let optimum = partition(&all, &SPEEDS).unwrap();
    assert!((d.optimum_seconds - optimum.bottleneck).abs() <= 1e-12 * optimum.bottleneck);
    assert!(
        d.balanced_seconds <= optimum.bottleneck * 1.05 + 1e-15,
        "{d:?}"
    );
    assert!(d.current_seconds > 1.5 * d.balanced_seconds, "{d:?}");
    cuts = d.cuts.clone();
    let (want, want_offsets, want_weights) = cells(cuts[rank], cuts[rank + 1]);
    assert!(
        data == want && offsets == want_offsets && weights == want_weights,
        "rank {rank}"
    );
    let time = seconds(&weights);
    assert!(
        time <= optimum.bottleneck * 1.05 + 1e-15,
        "rank {rank}: {time}"
    );

    // Balanced now: the next step stays.
    let d = balancer
        .step(&world, (&mut data, &mut offsets, &mut weights), time, 100)
        .unwrap();
    assert!(!d.redistribute && d.cuts == cuts, "{d:?}");

    // Links so slow that no move pays.
    let slow = LinkCost {
        startup: 1.0,
        per_byte: 1e-3,
    };
    let mut lazy = WeightedBalancer::new(RingLinks {
        to_succ: vec![slow; RANKS],
        to_pred: vec![slow; RANKS],
    });
    let (mut d2, mut o2, mut w2) = cells(0, 0);
    if rank == 0 {
        (d2, o2, w2) = cells(0, CELLS);
    }
    let t = seconds(&w2);
    let d = lazy
        .step(&world, (&mut d2, &mut o2, &mut w2), t, 10)
        .unwrap();
    assert!(!d.redistribute && d.move_seconds > d.saved_seconds, "{d:?}");
    if rank == 0 {
        println!(
            "weighted balancer: {moved} cells moved to within 5 % of the optimum ({balanced:.3e} s for {:.3e} s), then stayed; no move on slow links; bad weights refused on {RANKS} ranks",
            optimum.bottleneck
        );
    }
}
