//! The `holding` part of the throughput example: ranks that already hold data
//! receive more, in items of 1 MiB and messages of 1 MiB, against plain MPI
//! transfers of the same bytes into a new buffer, alternated run by run.
//!
//! On 2 ranks rank 0 holds MOVED + 1 MiB and gives MOVED MiB to rank 1, which
//! holds HELD MiB (the items arrive in front of its own):
//! - `plain, empty receiver` and `plain, receiver holding`: blocking sends into a
//!   buffer rank 1 allocates in the timed part, rank 1 holding nothing or its
//!   HELD MiB;
//! - `ring into a Vec` (the kept items shift once), `ring into an ItemBuffer`
//!   (they never move), `genblock into an ItemBuffer` (blocks [MOVED + 1, HELD]
//!   become [1, HELD + MOVED]);
//! - `scatter into an ItemBuffer`: the root (rank 1) holds HELD + MOVED MiB, keeps
//!   the last HELD and sends rank 0, which holds nothing, the first MOVED;
//! - `typed ring`: the ring move with the typed interface (`ring::redistribute`)
//!   on items of `[u64; 512]` (4 KiB, 256 to the MiB) in an item buffer;
//! - `ring` and `genblock, ItemBuffer giving back`: the ring and GEN_BLOCK
//!   moves into item buffers that give back the memory of what they send as
//!   it leaves (`ItemBuffer::set_give_back_sent`).
//!
//! On more ranks every rank holds HELD MiB:
//! - `ring into a Vec` and `ring into an ItemBuffer`: MOVED MiB over every link of
//!   a unidirectional ring at once (a circulation: every rank keeps, sends and
//!   receives), against `plain, ring holding` (every rank sends MOVED MiB to the
//!   next and receives as much from the previous one, every message posted at
//!   once);
//! - `genblock into an ItemBuffer`: the block of rank 0 holds MOVED MiB more and
//!   every block boundary moves by MOVED MiB (every rank but the first keeps and
//!   receives; every rank but the last sends), against `plain, chain holding`;
//! - the ring and GEN_BLOCK moves again into item buffers giving back what
//!   they send as it leaves.
//!
//! Every operation includes its checks; an item buffer's kept items are checked
//! to stay at their addresses. Prints the median seconds of each and its ratio to
//! the plain transfers, and the machine's memory bandwidth (a copy of 1 GiB into
//! memory touched before).

use hetbal::genblock::{plan, GenBlockInstance, Method, StepSchedule};
use hetbal_mpi::buffer::{ItemBuffer, ItemStorage};
use hetbal_mpi::{genblock, ring, scatter, Options};
use mpi::topology::SimpleCommunicator;
use mpi::traits::{Communicator, CommunicatorCollectives, Destination, Source};

use super::fail;

const MIB: usize = 1 << 20;

/// Seconds between two barriers of `work` (rank 0's clock).
fn timed(world: &SimpleCommunicator, work: impl FnOnce()) -> f64 {
    world.barrier();
    let started = mpi::time();
    work();
    world.barrier();
    mpi::time() - started
}

/// `count` items of 1 MiB (bytes that differ from item to item) in a `Vec`.
fn vec_of(count: usize) -> Vec<u8> {
    let mut items = Vec::new();
    for k in 0..count {
        items.extend_from_slice(&[(k % 251) as u8; MIB]);
    }
    items
}

/// The same in a new item buffer.
fn item_buffer(count: usize) -> ItemBuffer<u8> {
    let mut buffer = ItemBuffer::new().unwrap_or_else(|e| fail(&e.to_string()));
    for k in 0..count {
        buffer
            .extend_from_slice(&[(k % 251) as u8; MIB])
            .unwrap_or_else(|e| fail(&e.to_string()));
    }
    buffer
}

/// Bytes of an item of the typed rows.
const TYPED_BYTES: usize = 4096;

/// `count` items of `[u64; 512]` in a new item buffer.
fn typed_buffer(count: usize) -> ItemBuffer<[u64; 512]> {
    let mut buffer = ItemBuffer::new().unwrap_or_else(|e| fail(&e.to_string()));
    for k in 0..count {
        buffer
            .extend_from_slice(&[[k as u64; 512]])
            .unwrap_or_else(|e| fail(&e.to_string()));
    }
    buffer
}

/// Plain MPI: every rank in `sends` sends `mib` MiB to the next rank, every rank
/// in `receives` receives as much from the previous one into a new buffer, in
/// messages of 1 MiB (where a rank does both, all posted at once, then waited
/// for); `held` MiB are held meanwhile by the ranks that receive.
fn plain(
    world: &SimpleCommunicator,
    mib: usize,
    held: usize,
    (sends, receives): (&dyn Fn(i32) -> bool, &dyn Fn(i32) -> bool),
) -> f64 {
    let (rank, size) = (world.rank(), world.size());
    let (send, receive) = (sends(rank), receives(rank));
    let data = if send {
        vec![7u8; mib * MIB]
    } else {
        Vec::new()
    };
    let holding = if receive {
        vec![3u8; held * MIB]
    } else {
        Vec::new()
    };
    let (next, previous) = (
        world.process_at_rank((rank + 1) % size),
        world.process_at_rank((rank + size - 1) % size),
    );
    let seconds = timed(world, || {
        let mut fresh = if receive {
            vec![0u8; mib * MIB]
        } else {
            Vec::new()
        };
        match (send, receive) {
            (true, false) => data.chunks(MIB).for_each(|piece| next.send(piece)),
            (false, true) => fresh.chunks_mut(MIB).for_each(|piece| {
                previous.receive_into(piece);
            }),
            // Every receive and send posted at once, then waited for: the
            // plain transfer at its best (blocking `MPI_Sendrecv`s round a
            // ring of oversubscribed ranks wait on each other in turn).
            (true, true) => mpi::request::scope(|scope| {
                let mut requests = Vec::new();
                for (piece, into) in data.chunks(MIB).zip(fresh.chunks_mut(MIB)) {
                    requests.push(previous.immediate_receive_into(scope, into));
                    requests.push(next.immediate_send(scope, piece));
                }
                for request in requests {
                    request.wait();
                }
            }),
            (false, false) => {}
        }
        std::hint::black_box(&fresh);
    });
    std::hint::black_box(&holding);
    seconds
}

/// Seconds of `operation` on `storage`; with `kept = Some((before, after))`,
/// checks that the item at index `before` is at index `after` afterwards, at the
/// same address.
fn moved_in_place<S: ItemStorage<u8> + std::ops::Deref<Target = [u8]>>(
    world: &SimpleCommunicator,
    storage: &mut S,
    kept: Option<(usize, usize)>,
    operation: impl FnOnce(&mut S),
) -> f64 {
    let address = |s: &S, k: usize| s.as_ptr() as usize + k * MIB;
    let before = kept.map(|(b, _)| address(storage, b));
    let seconds = timed(world, || operation(storage));
    if let (Some(before), Some((_, after))) = (before, kept) {
        if address(storage, after) != before {
            fail("a kept item moved in an item buffer");
        }
    }
    seconds
}

/// A ring redistribution of `items` with `(loads, flows)`, in items of 1 MiB;
/// an error ends the example.
fn ring_move(
    world: &SimpleCommunicator,
    (loads, flows): (&[u64], &[i128]),
    items: &mut impl ItemStorage<u8>,
    options: &Options,
) {
    ring::redistribute_bytes(world, loads, flows, MIB, items, options)
        .unwrap_or_else(|e| fail(&e.to_string()));
}

/// Which item must stay at its address through a move, and where it is then
/// ([`moved_in_place`]).
type Kept = Option<(usize, usize)>;

/// A ring move and GEN_BLOCK steps, as [`into_item_buffers`] runs them.
struct Moves<'a> {
    ring: (&'a [u64], &'a [i128]),
    blocks: (&'a GenBlockInstance, &'a StepSchedule),
    options: &'a Options,
}

/// The ring move into an item buffer of `counts.0` items (row `rows.0`), then
/// the GEN_BLOCK steps into one of `counts.1` (row `rows.1`), each giving back
/// what it sends as it leaves or not (`give_back`); `kept` says which item
/// must stay at its address in each ([`moved_in_place`]).
fn into_item_buffers(
    world: &SimpleCommunicator,
    table: &mut Table,
    moves: &Moves<'_>,
    (rows, give_back): ((usize, usize), bool),
    (counts, kept): ((usize, usize), [Kept; 2]),
) {
    let mut buffer = item_buffer(counts.0);
    buffer.set_give_back_sent(give_back);
    table.record(
        rows.0,
        moved_in_place(world, &mut buffer, kept[0], |items| {
            ring_move(world, moves.ring, items, moves.options)
        }),
    );
    drop(buffer);
    let mut buffer = item_buffer(counts.1);
    buffer.set_give_back_sent(give_back);
    let (blocks, schedule) = moves.blocks;
    table.record(
        rows.1,
        moved_in_place(world, &mut buffer, kept[1], |items| {
            genblock::run_steps_bytes(world, blocks, schedule, MIB, items, moves.options)
                .unwrap_or_else(|e| fail(&e.to_string()));
        }),
    );
}

/// The table: one row per operation, its median and ratios.
struct Table {
    names: Vec<&'static str>,
    times: Vec<Vec<f64>>,
}

impl Table {
    fn new(names: &[&'static str]) -> Self {
        Table {
            names: names.to_vec(),
            times: vec![Vec::new(); names.len()],
        }
    }

    fn record(&mut self, row: usize, seconds: f64) {
        self.times[row].push(seconds);
    }

    fn median(&self, row: usize) -> f64 {
        let mut v = self.times[row].clone();
        v.sort_by(f64::total_cmp);
        v[v.len() / 2]
    }

    /// Prints every row with its ratio to the rows `references` (rank 0).
    fn print(&self, references: &[usize]) {
        for (row, name) in self.names.iter().enumerate() {
            let m = self.median(row);
            let ratios: Vec<String> = references
                .iter()
                .map(|&r| format!("{:4.0}% of {}", 100.0 * self.median(r) / m, self.names[r]))
                .collect();
            let all: Vec<String> = self.times[row].iter().map(|x| format!("{x:.3}")).collect();
            println!(
                "  {name:<36} {m:.3} s  {}   [{}]",
                ratios.join(", "),
                all.join(" ")
            );
        }
    }
}

/// The machine's memory bandwidth: seconds of a copy of 1 GiB into memory
/// touched before.
fn copy_seconds() -> f64 {
    let source = vec![1u8; 1 << 30];
    let mut target = vec![2u8; 1 << 30];
    target.fill(3);
    let started = std::time::Instant::now();
    target.copy_from_slice(&source);
    let seconds = started.elapsed().as_secs_f64();
    std::hint::black_box(&target);
    seconds
}

/// Runs the part: `held` and `moved` MiB, `runs` runs of each operation.
pub fn run(world: &SimpleCommunicator, held: usize, moved: usize, runs: usize) {
    let options = Options {
        chunk_bytes: MIB,
        ..Options::default()
    };
    let (rank, size) = (world.rank() as usize, world.size() as usize);
    let table = if size == 2 {
        two_ranks(world, held, moved, runs, &options)
    } else {
        every_rank(world, held, moved, runs, &options)
    };
    if rank == 0 {
        let copy = copy_seconds();
        println!(
            "memcpy of 1 GiB: {copy:.3} s ({:.1} GB/s); {runs} runs each (median seconds)",
            1.073741824 / copy
        );
        table.0.print(&table.1);
    }
}

/// The 2-rank rows (module docs).
fn two_ranks(
    world: &SimpleCommunicator,
    held: usize,
    moved: usize,
    runs: usize,
    options: &Options,
) -> (Table, Vec<usize>) {
    let rank = world.rank() as usize;
    let mut table = Table::new(&[
        "plain, empty receiver",
        "plain, receiver holding",
        "ring into a Vec",
        "ring into an ItemBuffer",
        "genblock into an ItemBuffer",
        "scatter into an ItemBuffer",
        "typed ring, ItemBuffer<[u64; 512]>",
        "ring, ItemBuffer giving back",
        "genblock, ItemBuffer giving back",
    ]);
    let (loads, flows) = ([moved as u64 + 1, held as u64], [moved as i128, 0]);
    let blocks = GenBlockInstance::new(&loads, &[1, (held + moved) as u64], 0.0, 1.0)
        .unwrap_or_else(|e| fail(&e.to_string()));
    let schedule = plan(&blocks, Method::Best).schedule;
    let counts = [moved as u64, held as u64];
    // Rank 1's first kept item moves from index 0 to MOVED (the root's, in the
    // scatter, from MOVED to 0).
    let kept = (rank == 1).then_some((0, moved));
    if world.rank() == 0 {
        println!("rank 1 holds {held} MiB and receives {moved} MiB in front");
    }
    for _ in 0..runs {
        let (sends, receives) = (&|r: i32| r == 0, &|r: i32| r == 1);
        table.record(0, plain(world, moved, 0, (sends, receives)));
        table.record(1, plain(world, moved, held, (sends, receives)));
        let mut vec = vec_of(loads[rank] as usize);
        table.record(
            2,
            moved_in_place(world, &mut vec, None, |items| {
                ring_move(world, (&loads, &flows), items, options)
            }),
        );
        drop(vec);
        // Into item buffers, then into item buffers giving back what leaves.
        let moves = Moves {
            ring: (&loads, &flows),
            blocks: (&blocks, &schedule),
            options,
        };
        let mine = (loads[rank] as usize, loads[rank] as usize);
        for rows in [((3, 4), false), ((7, 8), true)] {
            into_item_buffers(world, &mut table, &moves, rows, (mine, [kept, kept]));
        }
        let mut buffer = item_buffer(if rank == 1 { held + moved } else { 0 });
        let root_kept = (rank == 1).then_some((moved, 0));
        table.record(
            5,
            moved_in_place(world, &mut buffer, root_kept, |items| {
                scatter::scatter_in_order_bytes(world, &counts, MIB, items, options)
                    .unwrap_or_else(|e| fail(&e.to_string()));
            }),
        );
        drop(buffer);
        // The typed interface: items of 4 KiB, 256 to the MiB.
        let per_mib = (MIB / TYPED_BYTES) as u64;
        let typed_loads = loads.map(|l| l * per_mib);
        let typed_flows = flows.map(|f| f * i128::from(per_mib));
        let mut typed = typed_buffer(typed_loads[rank] as usize);
        let before = typed.first().map(|item| item.as_ptr() as usize);
        table.record(
            6,
            timed(world, || {
                ring::redistribute(world, &typed_loads, &typed_flows, &mut typed, options)
                    .unwrap_or_else(|e| fail(&e.to_string()));
            }),
        );
        let kept = typed
            .get(moved * per_mib as usize)
            .map(|item| item.as_ptr() as usize);
        if rank == 1 && before != kept {
            fail("a kept item moved in a typed item buffer");
        }
    }
    (table, vec![0, 1])
}

/// The rows on more than 2 ranks (module docs).
fn every_rank(
    world: &SimpleCommunicator,
    held: usize,
    moved: usize,
    runs: usize,
    options: &Options,
) -> (Table, Vec<usize>) {
    let (rank, size) = (world.rank() as usize, world.size() as usize);
    let mut table = Table::new(&[
        "plain, ring holding",
        "plain, chain holding",
        "ring into a Vec",
        "ring into an ItemBuffer",
        "genblock into an ItemBuffer",
        "ring, ItemBuffer giving back",
        "genblock, ItemBuffer giving back",
    ]);
    if moved > held {
        fail("on more than 2 ranks MOVED must be at most HELD (every rank sends from its own)");
    }
    let loads = vec![held as u64; size];
    let flows = vec![moved as i128; size];
    let mut source = loads.clone();
    source[0] += moved as u64;
    let mut target = loads.clone();
    target[size - 1] += moved as u64;
    let blocks =
        GenBlockInstance::new(&source, &target, 0.0, 1.0).unwrap_or_else(|e| fail(&e.to_string()));
    let schedule = plan(&blocks, Method::Best).schedule;
    if rank == 0 {
        println!(
            "{size} ranks hold {held} MiB each and {moved} MiB go from every rank to the next"
        );
    }
    let last = size as i32 - 1;
    for _ in 0..runs {
        table.record(0, plain(world, moved, held, (&|_| true, &|_| true)));
        table.record(1, plain(world, moved, held, (&|r| r < last, &|r| r > 0)));
        let mut vec = vec_of(held);
        table.record(
            2,
            moved_in_place(world, &mut vec, None, |items| {
                ring_move(world, (&loads, &flows), items, options)
            }),
        );
        drop(vec);
        // Every rank keeps its first HELD - MOVED items, behind the MOVED
        // received; into item buffers, then into ones giving back what leaves.
        let kept_ring = (held > moved).then_some((0, moved));
        let kept_blocks = (rank > 0 && held > moved).then_some((0, moved));
        let moves = Moves {
            ring: (&loads, &flows),
            blocks: (&blocks, &schedule),
            options,
        };
        let counts = (held, source[rank] as usize);
        for rows in [((3, 4), false), ((5, 6), true)] {
            let kept = [kept_ring, kept_blocks];
            into_item_buffers(world, &mut table, &moves, rows, (counts, kept));
        }
    }
    (table, vec![0, 1])
}
