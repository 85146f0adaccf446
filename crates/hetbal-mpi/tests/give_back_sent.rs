//! Item buffers that give back the memory of the items they send, under
//! `mpirun -np 4`, every rank holding 64 MiB (items of 4 KiB):
//! - a ring circulation, 32 MiB from every rank to the next (every rank keeps,
//!   sends and receives at once): giving back, the peak resident memory grows
//!   by at most 16 MiB over what the ranks held; holding the items until the
//!   commit, by the 32 MiB received (so the check can fail); giving back
//!   from a buffer advised to use huge pages, by at most 16 MiB too;
//! - GEN_BLOCK steps on a chain (rank 0's block 32 MiB larger, every boundary
//!   moving by 32 MiB: the middle ranks keep, send and receive): the same on
//!   the middle ranks;
//! - a ring with start-ups along its plan's messages (one per link), on the
//!   same chain: the items right, and after a failure exactly those not sent;
//! - the items are right either way; a failure after items left (a rank
//!   failing before the commit, a corrupted message) leaves each rank's buffer
//!   holding exactly its items that had not left; a refusal before anything
//!   moves leaves them all.
//!
//! Each peak is measured alone: the peak is reset to the resident memory
//! before each run (`/proc/self/clear_refs`, Linux).
//!
//! Run by `cargo test` like any test: started without MPI, it starts itself
//! under `mpirun -np 4` (killed after 120 s) and passes when every rank does.

mod common;

use hetbal::genblock::{self, GenBlockInstance, Method};
use hetbal::ring::{plan, RingInstance};
use hetbal_mpi::buffer::ItemBuffer;
use hetbal_mpi::genblock::run_steps;
use hetbal_mpi::memory::{peak_resident_bytes, resident_bytes};
use hetbal_mpi::ring::{batches_from_plan, link_flows, redistribute};
use hetbal_mpi::{Fault, Options, RunError};
use mpi::traits::{Communicator, CommunicatorCollectives};

const RANKS: usize = 4;
/// Items of 4 KiB: their position, then a pattern.
type Item = [u64; 512];
const MIB_ITEMS: u64 = 256;
const HELD: u64 = 64 * MIB_ITEMS;
const MOVED: u64 = 32 * MIB_ITEMS;

/// Item `g`: its position, then words that depend on it.
fn item(g: u64) -> Item {
    let mut item = [0u64; 512];
    for (k, word) in item.iter_mut().enumerate() {
        *word = g.wrapping_mul(0x9e37_79b9).wrapping_add(k as u64);
    }
    item[0] = g;
    item
}

/// A buffer giving back (or not) of `count` items from position `first`,
/// written in place (no other copy of them).
fn buffer_of(first: u64, count: u64, give_back: bool) -> ItemBuffer<Item> {
    let mut items = ItemBuffer::new().unwrap();
    items.resize(count as usize).unwrap();
    for (k, slot) in items.iter_mut().enumerate() {
        *slot = item(first + k as u64);
    }
    items.set_give_back_sent(give_back);
    items
}

/// Whether `items` are the items at positions `first ..`, wrapping at `total`.
fn holds(items: &[Item], first: u64, total: u64) -> bool {
    items
        .iter()
        .enumerate()
        .all(|(k, i)| *i == item((first + k as u64) % total))
}

const MIB: u64 = 1 << 20;

/// After a failed move along the chain (every rank but the last sends its
/// last MOVED items to the next), `items`, which held `count` items from
/// position `first`, hold exactly those that did not leave.
fn kept_unsent(
    items: &[Item],
    (first, count): (u64, u64),
    total: u64,
    (rank, fault): (usize, Fault),
) {
    let left = if rank == RANKS - 1 { 0 } else { MOVED };
    assert_eq!(items.len() as u64, count - left, "rank {rank}, {fault:?}");
    assert!(holds(items, first, total), "rank {rank}, {fault:?}");
}

/// A fault injected after items left: a peer's failure or a corrupted
/// message found, on every rank.
fn assert_failed_mid_run(error: &RunError) {
    assert!(
        matches!(
            error,
            RunError::PeerFailed { .. } | RunError::Verification { .. }
        ),
        "{error:?}"
    );
}

/// How much this rank's peak resident memory grows over its resident memory
/// during `work` (bytes), every rank starting together.
fn growth<C: CommunicatorCollectives>(world: &C, work: impl FnOnce()) -> u64 {
    world.barrier();
    // Linux: "5" resets the peak to the resident memory now.
    std::fs::write("/proc/self/clear_refs", "5").expect("resetting the peak resident memory");
    let before = resident_bytes().expect("the resident memory (Linux)");
    work();
    let peak = peak_resident_bytes().expect("the peak resident memory (Linux)");
    peak.saturating_sub(before)
}

fn main() {
    let Some(universe) = common::as_ranks(RANKS) else {
        return;
    };
    let world = universe.world();
    let rank = world.rank() as usize;
    let n = RANKS as u64;
    let total = HELD * n;
    let loads = [HELD; RANKS];
    let flows = [i128::from(MOVED); RANKS];
    let options = Options::default();
    let first = HELD * rank as u64;
    // After the move a rank holds the last MOVED items of its predecessor,
    // then its first HELD - MOVED.
    let first_after = (first + total - MOVED) % total;
    let mut grown = [0u64; 4];
    for (k, give_back) in [true, false].into_iter().enumerate() {
        let mut items = buffer_of(first, HELD, give_back);
        grown[k] = growth(&world, || {
            redistribute(&world, &loads, &flows, &mut items, &options).unwrap();
        });
        assert!(
            holds(&items, first_after, total),
            "rank {rank}: wrong items"
        );
    }
    // Advised huge pages (where the system has them) go back whole.
    let mut items = buffer_of(first, HELD, true);
    let huge = items.advise_huge_pages();
    let huge_growth = growth(&world, || {
        redistribute(&world, &loads, &flows, &mut items, &options).unwrap();
    });
    assert!(
        holds(&items, first_after, total),
        "rank {rank}: wrong items"
    );
    assert!(
        huge_growth <= 16 * MIB,
        "rank {rank}: giving back huge pages ({huge}), the peak grew by {} MiB",
        huge_growth / MIB
    );
    drop(items);

    // GEN_BLOCK: rank 0's block holds MOVED more, every boundary moves by
    // MOVED; every rank but the first keeps and receives, every rank but the
    // last sends.
    let mut source = [HELD; RANKS];
    source[0] += MOVED;
    let mut target = [HELD; RANKS];
    target[RANKS - 1] += MOVED;
    let instance = GenBlockInstance::new(&source, &target, 0.0, 1.0).unwrap();
    let schedule = genblock::plan(&instance, Method::Best).schedule;
    let start = |blocks: &[u64]| blocks[..rank].iter().sum::<u64>();
    let whole: u64 = source.iter().sum();
    for (k, give_back) in [true, false].into_iter().enumerate() {
        let mut elements = buffer_of(start(&source), source[rank], give_back);
        grown[2 + k] = growth(&world, || {
            run_steps(&world, &instance, &schedule, &mut elements, &options).unwrap();
        });
        assert_eq!(elements.len() as u64, target[rank]);
        assert!(holds(&elements, start(&target), whole), "rank {rank}");
    }
    let mib = grown.map(|g| g / MIB);
    // The ring's ranks all keep, send and receive; GEN_BLOCK's middle ones.
    let middle = rank > 0 && rank < RANKS - 1;
    for (what, given, held, checked) in [
        ("ring", grown[0], grown[1], true),
        ("GEN_BLOCK", grown[2], grown[3], middle),
    ] {
        if checked {
            assert!(
                given <= 16 * MIB && held >= 24 * MIB,
                "rank {rank}, {what}: the peak grew by {} MiB giving back, {} MiB holding until the commit",
                given / MIB,
                held / MIB
            );
        }
    }
    if rank == 1 {
        println!(
            "give back sent, rank 1 receiving {} MiB: peak +{} MiB giving back, +{} MiB holding (ring); +{} and +{} MiB (GEN_BLOCK)",
            MOVED / MIB_ITEMS,
            mib[0],
            mib[1],
            mib[2],
            mib[3]
        );
    }

    // Failures after items left: each rank keeps the items it did not send
    // (its first HELD - MOVED), in order, at their addresses.
    for fault in [Fault::FailBeforeCommit, Fault::Corrupt] {
        let mut items = buffer_of(first, HELD, true);
        let kept_at = items.as_ptr() as usize;
        let faulty = Options {
            fault: Some((2, fault)),
            ..Options::default()
        };
        let error = redistribute(&world, &loads, &flows, &mut items, &faulty).unwrap_err();
        assert_failed_mid_run(&error);
        assert_eq!(items.len() as u64, HELD - MOVED, "rank {rank}, {fault:?}");
        assert!(holds(&items, first, total), "rank {rank}, {fault:?}");
        assert_eq!(items.as_ptr() as usize, kept_at);
        // GEN_BLOCK: every rank but the last sent its last MOVED elements.
        let mut elements = buffer_of(start(&source), source[rank], true);
        let error = run_steps(&world, &instance, &schedule, &mut elements, &faulty).unwrap_err();
        assert_failed_mid_run(&error);
        kept_unsent(
            &elements,
            (start(&source), source[rank]),
            whole,
            (rank, fault),
        );
    }
    // With start-ups, along the plan's messages: rank 0 holds MOVED more,
    // which goes to rank 3 through ranks 1 and 2 (each keeps, sends its last
    // MOVED and receives as much).
    let mut chain = [HELD; RANKS];
    chain[0] += MOVED;
    let mut after = [HELD; RANKS];
    after[RANKS - 1] += MOVED;
    let ring = RingInstance::unidirectional(&chain, &after, &[1e-9; RANKS])
        .unwrap()
        .with_startups(&[1e-6; RANKS], &[0.0; RANKS])
        .unwrap();
    let planned = plan(&ring, None).unwrap();
    let batched = Options {
        batches: Some(batches_from_plan(&ring, &planned)),
        ..Options::default()
    };
    let chain_flows = link_flows(RANKS, &planned.flows);
    // (Each link's items go in one planned message: its memory is given
    // back once it has left, so the peak is as without giving back.)
    let mut items = buffer_of(start(&chain), chain[rank], true);
    redistribute(&world, &chain, &chain_flows, &mut items, &batched).unwrap();
    assert!(
        holds(&items, start(&after), whole),
        "rank {rank}: wrong items"
    );
    for fault in [Fault::FailBeforeCommit, Fault::Corrupt] {
        let mut items = buffer_of(start(&chain), chain[rank], true);
        let faulty = Options {
            fault: Some((2, fault)),
            ..batched.clone()
        };
        assert!(redistribute(&world, &chain, &chain_flows, &mut items, &faulty).is_err());
        kept_unsent(&items, (start(&chain), chain[rank]), whole, (rank, fault));
    }

    // A refusal before anything moves changes nothing.
    let mut items = buffer_of(first, HELD, true);
    let wrong = if rank == 3 { [HELD + 1; RANKS] } else { loads };
    assert!(redistribute(&world, &wrong, &flows, &mut items, &options).is_err());
    assert_eq!(items.len() as u64, HELD);
    assert!(holds(&items, first, total));
    if rank == 1 {
        println!("give back sent: failures keep exactly the items that did not leave");
    }
}
