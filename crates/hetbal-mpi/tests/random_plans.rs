//! Random rings with start-ups under `mpirun` (5 ranks): the library's plans,
//! run along their planned messages ([`Options::batches`]) and in chunks as
//! items are held (without batches), in chunks of one to three items (so that
//! every forwarder's room of a few chunks binds), with and without emulated
//! links, on items in a `Vec` or in an item buffer (giving back what leaves
//! or not), end with every item in its place, no rank waiting for ever, and,
//! with emulated links, no earlier than the plan.
//!
//! The rings mix links with and without start-ups, so their plans hold trains
//! beside messages, and now and then a paced train (its first item, then the
//! others one period apart: two pacing batches for one planned transfer, which
//! the runtime once refused as "the pacing's stream does not hold the
//! batches' transfers"); a fixed ring whose plan holds one runs first. The
//! test counts what its random rings exercised and fails unless most pass
//! items on and some run with emulated links.
//!
//! `SEED`, `ROUNDS` and `SCALE` (largest extra load) in the environment draw
//! other rings, and `mpirun -np K` on the built test runs them on K ranks.
//!
//! Run by `cargo test` like any test: started without MPI, it starts itself
//! under `mpirun -np 5` and passes when every rank does.

mod common;

use common::items;

use hetbal::random::SplitMix64;
use hetbal::ring::{plan, RingInstance, RingKind, RingPlan};
use hetbal_mpi::buffer::ItemBuffer;
use hetbal_mpi::ring::{batches_from_plan, link_flows, pacing_from_plan, redistribute};
use hetbal_mpi::{Options, RunError};
use mpi::collective::SystemOperation;
use mpi::traits::{Communicator, CommunicatorCollectives};

const RANKS: usize = 5;

/// A setting from the environment, else `default`.
fn setting(name: &str, default: u64) -> u64 {
    std::env::var(name)
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(default)
}

/// A random ring of `n` processors with start-ups on about three links in
/// four (from 1 to 20 item times of 10 µs), loads moved up to `scale` items.
fn random_ring(rng: &mut SplitMix64, n: usize, kind: RingKind, scale: u64) -> RingInstance {
    let mut loads: Vec<u64> = (0..n).map(|_| rng.below_u64(4)).collect();
    let mut targets: Vec<u64> = (0..n).map(|_| rng.below_u64(4)).collect();
    for _ in 0..1 + rng.below(3) {
        let extra = 1 + rng.below_u64(scale);
        loads[rng.below(n)] += extra;
        targets[rng.below(n)] += extra;
    }
    let (held, wanted): (u64, u64) = (loads.iter().sum(), targets.iter().sum());
    if held > wanted {
        targets[0] += held - wanted;
    } else {
        loads[0] += wanted - held;
    }
    let mut cost = || 1e-5 * (1 + rng.below(6)) as f64;
    let (c_succ, c_pred): (Vec<f64>, Vec<f64>) = (0..n).map(|_| (cost(), cost())).unzip();
    let mut startup = || match rng.below(4) {
        0 => 0.0,
        _ => 1e-5 * (1 + rng.below(20)) as f64,
    };
    let (l_succ, l_pred): (Vec<f64>, Vec<f64>) = (0..n).map(|_| (startup(), startup())).unzip();
    match kind {
        RingKind::Unidirectional => RingInstance::unidirectional(&loads, &targets, &c_succ)
            .and_then(|r| r.with_startups(&l_succ, &vec![0.0; n])),
        RingKind::Bidirectional => RingInstance::bidirectional(&loads, &targets, &c_succ, &c_pred)
            .and_then(|r| r.with_startups(&l_succ, &l_pred)),
    }
    .expect("balanced loads, costs and start-ups in range")
}

/// Runs `plan` of `ring` on every rank, along its planned messages (`batched`)
/// or in chunks as items are held, with its emulated links or not, in chunks
/// of `chunk_bytes`, on items in a `Vec` or (`storage`) in an item buffer
/// giving back what leaves or not, and checks every item.
fn check<C: Communicator>(
    world: &C,
    ring: &RingInstance,
    plan: &RingPlan,
    (emulated, chunk_bytes, batched): (bool, usize, bool),
    storage: Option<bool>,
    name: &str,
) {
    let (rank, size) = (world.rank() as usize, world.size() as usize);
    let options = Options {
        chunk_bytes,
        pacing: emulated.then(|| pacing_from_plan(ring, plan, 1.0)),
        batches: batched.then(|| batches_from_plan(ring, plan)),
        ..Options::default()
    };
    let (loads, targets) = (ring.loads(), ring.targets());
    let flows = link_flows(size, &plan.flows);
    let total: u64 = loads.iter().sum();
    let first: u64 = loads[..rank].iter().sum();
    let mut held = items(first, loads[rank], total);
    // Some runs move the items of an item buffer, giving back what leaves or
    // not, instead of a `Vec`.
    let mut buffer = storage.map(|give_back| {
        let mut buffer = ItemBuffer::from_slice(&held).unwrap();
        buffer.set_give_back_sent(give_back);
        buffer
    });
    let story = || {
        format!(
            "{name} (seed {}): {:?}, emulated {emulated}, batched {batched}, chunks of {chunk_bytes} bytes, item buffer (giving back) {storage:?}, \
             loads {loads:?}, targets {targets:?}, flows {flows:?}, {} transfers",
            setting("SEED", 1),
            ring.kind(),
            plan.transfers.len()
        )
    };
    let report = match buffer.as_mut() {
        Some(buffer) => redistribute(world, loads, &flows, buffer, &options),
        None => redistribute(world, loads, &flows, &mut held, &options),
    }
    .unwrap_or_else(|e: RunError| panic!("rank {rank}: {e}\n{}", story()));
    if let Some(buffer) = buffer {
        held = buffer.to_vec();
    }
    // Emulated links deliver nothing before the plan does.
    let mut seconds = 0.0f64;
    world.all_reduce_into(
        &report.transfer_seconds,
        &mut seconds,
        SystemOperation::max(),
    );
    assert!(
        !emulated || seconds >= 0.99 * plan.makespan,
        "rank {rank}: {seconds} s, before the plan's {} s\n{}",
        plan.makespan,
        story()
    );
    let into_rank_0 = flows[size - 1].rem_euclid(i128::from(total)) as u64;
    let new_first = (total - into_rank_0 + targets[..rank].iter().sum::<u64>()) % total;
    assert_eq!(
        held,
        items(new_first, targets[rank], total),
        "rank {rank}\n{}",
        story()
    );
}

/// Whether `plan` holds a paced train of several items.
fn has_paced_train(plan: &RingPlan) -> bool {
    plan.transfers
        .iter()
        .any(|t| t.period.is_some() && t.items > 1)
}

/// Whether some processor passes items on: flows into it and out of it the
/// same way.
fn passes_on(flows: &[i128]) -> bool {
    let n = flows.len();
    (0..n).any(|i| {
        let (into, out) = (flows[(i + n - 1) % n], flows[i]);
        (into > 0 && out > 0) || (into < 0 && out < 0)
    })
}

fn main() {
    let Some(universe) = common::as_ranks(RANKS) else {
        return;
    };
    let world = universe.world();
    let (rank, size) = (world.rank() as usize, world.size() as usize);
    // A plan with a paced train (18 items from P4 to P0, over a link without
    // start-up): two pacing batches for one planned transfer.
    if size == RANKS {
        let us = |v: [f64; RANKS]| v.map(|x| x * 1e-5);
        let ring = RingInstance::unidirectional(
            &[6, 0, 0, 41, 11],
            &[38, 5, 12, 0, 3],
            &us([5.0, 5.0, 4.0, 6.0, 4.0]),
        )
        .and_then(|r| r.with_startups(&us([4.0, 4.0, 17.0, 0.0, 0.0]), &[0.0; RANKS]))
        .unwrap();
        let plan = plan(&ring, None).unwrap();
        assert!(has_paced_train(&plan), "{plan:?}");
        for chunk_bytes in [16, 48] {
            check(
                &world,
                &ring,
                &plan,
                (true, chunk_bytes, true),
                None,
                "a paced train",
            );
        }
    }
    let mut rng = SplitMix64::new(setting("SEED", 1));
    let (rounds, scale) = (setting("ROUNDS", 120), setting("SCALE", 200));
    // Rounds run, with emulated links, with a paced train under them, with a
    // rank passing items on.
    let (mut run, mut paced, mut paced_trains, mut forwarded) = (0, 0, 0, 0);
    for round in 0..rounds {
        let kind = match rng.below(2) {
            0 => RingKind::Unidirectional,
            _ => RingKind::Bidirectional,
        };
        let ring = random_ring(&mut rng, size, kind, scale);
        let emulated = rng.below(2) == 0;
        let chunk_bytes = 16 * (1 + rng.below(3)); // 1 to 3 items of 16 bytes
        if !ring.has_startups() {
            continue;
        }
        let plan = plan(&ring, None).unwrap();
        let storage = [None, Some(false), Some(true)][rng.below(3)];
        // Along the planned messages, then in chunks as items are held (the
        // runtime of rings without start-ups).
        for batched in [true, false] {
            let name = format!("round {round}");
            let how = (emulated, chunk_bytes, batched);
            check(&world, &ring, &plan, how, storage, &name);
        }
        run += 1;
        paced += usize::from(emulated);
        paced_trains += usize::from(emulated && has_paced_train(&plan));
        forwarded += usize::from(passes_on(&link_flows(size, &plan.flows)));
    }
    if rank == 0 {
        println!(
            "random plans: {run} rings on {size} ranks, {paced} with emulated links \
             ({paced_trains} of them with paced trains), {forwarded} with items passed on"
        );
        if rounds >= 100 && size == RANKS {
            assert!(
                forwarded > run / 2 && paced > run / 4,
                "the rings did not exercise every case"
            );
        }
    }
}
