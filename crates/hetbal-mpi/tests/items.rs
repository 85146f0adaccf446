//! Variable-size items moved to new cuts under `mpirun` (4 ranks): items of
//! 0 to 40 elements and one of 2^20, elements of two bytes (offsets count
//! elements), ranks left empty and filled again, 20 successive moves checked
//! element by element; every fault on every rank leaves every rank its data
//! and offsets; every bad argument on one rank fails on every rank, nothing
//! changed.
//!
//! Run by `cargo test` like any test: started without MPI, it starts itself
//! under `mpirun -np 4` and passes when every rank does.

mod common;

use hetbal_mpi::items::redistribute_items;
use hetbal_mpi::{Fault, Options, RunError};
use mpi::traits::Communicator;

const RANKS: usize = 4;
/// Items in all.
const ITEMS: u64 = 120;
/// The item of 2^20 elements.
const HUGE: u64 = 37;

/// Elements of item `g`: 0 to 40 (every seventh empty), one of 2^20.
fn size(g: u64) -> u64 {
    match g {
        HUGE => 1 << 20,
        g if g % 7 == 3 => 0,
        g => (g * 2_654_435_761) % 41,
    }
}

/// Item `g`'s elements: its index and each element's place, so that a lost,
/// misplaced or corrupted element shows.
fn item(g: u64) -> impl Iterator<Item = u16> {
    (0..size(g)).map(move |j| (g as u16).wrapping_mul(257) ^ (j as u16))
}

/// The data and offsets of items `first .. last`.
fn holding(first: u64, last: u64) -> (Vec<u16>, Vec<u64>) {
    let data: Vec<u16> = (first..last).flat_map(item).collect();
    let mut offsets = vec![0];
    for g in first..last {
        offsets.push(offsets.last().unwrap() + size(g));
    }
    (data, offsets)
}

/// Cuts for move `m`: a few ranks left empty now and then.
fn cuts_of(m: u64) -> Vec<u64> {
    let mut cuts = vec![0u64; RANKS + 1];
    for (r, cut) in cuts.iter_mut().enumerate().take(RANKS).skip(1) {
        let spread = (m * 37 + r as u64 * 53) % 100;
        *cut = (ITEMS * r as u64 / RANKS as u64 + spread).min(ITEMS) - spread.min(30);
    }
    if m % 5 == 2 {
        // Rank 1 left empty, rank 2 with everything up to its cut.
        cuts[2] = cuts[1];
    }
    if m % 6 == 4 {
        // Everything on the last rank.
        cuts[1..RANKS].iter_mut().for_each(|c| *c = 0);
    }
    cuts[RANKS] = ITEMS;
    for r in 1..=RANKS {
        cuts[r] = cuts[r].max(cuts[r - 1]);
    }
    cuts
}

fn main() {
    let Some(universe) = common::as_ranks(RANKS) else {
        return;
    };
    let world = universe.world();
    let rank = world.rank() as usize;
    let options = Options {
        chunk_bytes: 4096,
        ..Options::default()
    };
    let mut cuts = vec![0, 30, 60, 90, ITEMS];
    let mut failed = 0;
    let (mut data, mut offsets) = holding(cuts[rank], cuts[rank + 1]);
    for m in 0..20u64 {
        let new = cuts_of(m);
        // Faults first, on every rank: nothing changes.
        if m % 4 == 0 {
            for fault in Fault::ALL {
                for faulty in 0..RANKS {
                    let faulty_options = Options {
                        fault: Some((faulty, fault)),
                        ..options.clone()
                    };
                    let (before, offsets_before) = (data.clone(), offsets.clone());
                    let result =
                        redistribute_items(&world, &mut data, &mut offsets, &new, &faulty_options);
                    match result {
                        Err(e) => {
                            failed += 1;
                            assert!(!e.is_input(), "move {m}, {fault:?} on {faulty}: {e}");
                            assert!(
                                data == before && offsets == offsets_before,
                                "move {m}: {fault:?} on rank {faulty} changed rank {rank}'s items"
                            );
                        }
                        // A fault on a rank that sends nothing spoils nothing:
                        // the move committed on every rank alike.
                        Ok(_) => {
                            assert!(
                                fault.spoils_a_message(),
                                "move {m}: {fault:?} on rank {faulty} did not fail"
                            );
                            let (d, o) = holding(new[rank], new[rank + 1]);
                            assert!(data == d && offsets == o, "move {m}: wrong items");
                            // Move back, to go on from where we were.
                            redistribute_items(&world, &mut data, &mut offsets, &cuts, &options)
                                .unwrap_or_else(|e| panic!("move {m} back: {e}"));
                            assert!(data == before && offsets == offsets_before);
                        }
                    }
                }
            }
        }
        let report = redistribute_items(&world, &mut data, &mut offsets, &new, &options)
            .unwrap_or_else(|e| panic!("move {m} to {new:?}: {e}"));
        let (want, want_offsets) = holding(new[rank], new[rank + 1]);
        assert!(
            data == want,
            "move {m} to {new:?}: rank {rank}'s elements are wrong"
        );
        assert_eq!(offsets, want_offsets, "move {m} to {new:?}: rank {rank}");
        assert_eq!(report.first, new[rank]);
        assert_eq!(report.items, new[rank + 1] - new[rank]);
        cuts = new;
    }
    // Most faults hit a rank that moves something.
    assert!(failed >= 40, "only {failed} faulty moves failed");
    // Bad arguments on one rank: every rank fails, nothing changes.
    let bad_cases: [(&str, usize); 7] = [
        ("offsets not from 0", 1),
        ("offsets decreasing", 2),
        ("offsets past the data", 3),
        ("cuts too few", 0),
        ("cuts decreasing", 1),
        ("cuts of another rank", 2),
        ("cuts not ending at the total", RANKS),
    ];
    for (case, bad) in bad_cases {
        let (before, offsets_before) = (data.clone(), offsets.clone());
        let mut new = cuts_of(3);
        let mut my_offsets = offsets.clone();
        if rank == bad || bad == RANKS {
            match case {
                "offsets not from 0" => my_offsets[0] = 1,
                "offsets decreasing" if my_offsets.len() > 2 => {
                    my_offsets[1] = my_offsets[2] + 1;
                }
                "offsets decreasing" => my_offsets = vec![0, 1, 0],
                "offsets past the data" => *my_offsets.last_mut().unwrap() += 1,
                "cuts too few" => {
                    new.pop();
                }
                "cuts decreasing" => new[2] = new[3] + 1,
                "cuts of another rank" => new[1] += 1,
                _ => new[RANKS] += 1,
            }
        }
        let result = redistribute_items(&world, &mut data, &mut my_offsets, &new, &options);
        let e = result.expect_err(case);
        assert!(e.is_input(), "{case}: {e}");
        match (&e, rank == bad) {
            (RunError::InvalidItems { rank: r, .. }, true) => assert_eq!(*r, rank),
            (RunError::PeerRefused { rank: r }, false) => assert_eq!(*r, bad),
            (RunError::Mismatch, _) => assert_eq!(case, "cuts of another rank"),
            (RunError::InvalidPlan { .. }, _) => assert_eq!(bad, RANKS),
            _ => panic!("{case}: rank {rank}: {e}"),
        }
        assert!(data == before && offsets == offsets_before, "{case}");
    }
    if rank == 0 {
        println!(
            "items: 20 moves of {ITEMS} items (0 to 40 elements, one of 2^20) checked, faults and bad arguments refused on {RANKS} ranks"
        );
    }
}
