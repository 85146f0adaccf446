//! Arguments that differ between ranks, under `mpirun -np 4`: every argument
//! check of a ring redistribution (with and without planned batches), a
//! scatter, a GEN_BLOCK run and a link measurement, made to fail on one rank
//! only, ends with an error on every rank (the wrong rank's own, the others'
//! naming it), and arguments valid on each rank but different between ranks
//! (another plan, item size or message size on one rank; for the balancer,
//! other iterations left or other link costs) end with `RunError::Mismatch` on
//! every rank: no rank waits for ever, no message is truncated, nothing moves. Then an application's message on the same
//! communicator, with the tag hetbal uses, reaches the application intact
//! across a redistribution, and on a single rank the balancer measures and
//! decides without moving anything.
//!
//! Run by `cargo test` like any test: started without MPI, it starts itself
//! under `mpirun -np 4` (killed after the time limit) and passes when every
//! rank does.

mod common;

use hetbal::genblock::{self, GenBlockInstance, Method};
use hetbal::iterative::Policy;
use hetbal::ring::{plan, RingInstance};
use hetbal_mpi::balancer::Balancer;
use hetbal_mpi::links::{measure_ring_links, Probe};
use hetbal_mpi::ring::{batches_from_plan, link_flows, redistribute, redistribute_bytes};
use hetbal_mpi::scatter::scatter_in_order;
use hetbal_mpi::{Fault, Options, RunError};
use mpi::point_to_point::{Destination, Source};
use mpi::topology::Color;
use mpi::traits::Communicator;

const RANKS: usize = 4;
/// The rank given other arguments.
const ODD: usize = 2;

/// `result` is `Err` on every rank: `own` on the odd rank, `others` elsewhere.
fn fails(
    what: &str,
    rank: usize,
    result: Result<impl std::fmt::Debug, RunError>,
    own: impl Fn(&RunError) -> bool,
    others: impl Fn(&RunError) -> bool,
) {
    let e = result.expect_err(what);
    let expected = if rank == ODD { own(&e) } else { others(&e) };
    assert!(expected, "{what}: rank {rank} got {e:?}");
}

/// After a message longer than announced: `held` is `committed` when the run
/// committed, `before` when it failed (whose error is returned, for more
/// checks).
fn committed_or_kept<R>(
    what: &str,
    result: Result<R, RunError>,
    held: &[[u64; 2]],
    committed: &[[u64; 2]],
    before: &[[u64; 2]],
) -> Option<RunError> {
    match result {
        Ok(_) => {
            assert_eq!(held, committed, "{what}: committed, in order");
            None
        }
        Err(e) => {
            assert_eq!(held, before, "{what} failed ({e:?}): items intact");
            Some(e)
        }
    }
}

fn refused(e: &RunError) -> bool {
    *e == RunError::PeerRefused { rank: ODD }
}

fn mismatch(e: &RunError) -> bool {
    *e == RunError::Mismatch
}

fn main() {
    let Some(universe) = common::as_ranks(RANKS) else {
        return;
    };
    let world = universe.world();
    let rank = world.rank() as usize;
    let odd = rank == ODD;

    let (loads, targets) = ([6u64, 2, 5, 3], [4u64, 4, 4, 4]);
    let total: u64 = loads.iter().sum();
    let ring = RingInstance::bidirectional(&loads, &targets, &[1.0; 4], &[1.0; 4]).unwrap();
    let ring_plan = plan(&ring, None).unwrap();
    let flows = link_flows(RANKS, &ring_plan.flows);
    let first: u64 = loads[..rank].iter().sum();
    let original = common::items(first, loads[rank], total);
    let options = Options {
        chunk_bytes: 16,
        ..Options::default()
    };
    let mut items = original.clone();

    // Checks that fail on one rank only.
    let short_loads = &loads[..3];
    let l: &[u64] = if odd { short_loads } else { &loads };
    let r = redistribute(&world, l, &flows, &mut items, &options);
    fails(
        "loads of another length",
        rank,
        r,
        |e| matches!(e, RunError::WorldSize { .. }),
        refused,
    );
    let f: &[i128] = if odd { &flows[..3] } else { &flows };
    let r = redistribute(&world, &loads, f, &mut items, &options);
    fails(
        "flows of another length",
        rank,
        r,
        |e| matches!(e, RunError::WorldSize { .. }),
        refused,
    );
    if odd {
        items.push([0, 0]);
    }
    let r = redistribute(&world, &loads, &flows, &mut items, &options);
    fails(
        "an item too many",
        rank,
        r,
        |e| matches!(e, RunError::WrongLoad { .. }),
        refused,
    );
    items.truncate(original.len());
    let impossible = [-100i128, 0, 0, 0];
    let f: &[i128] = if odd { &impossible } else { &flows };
    let r = redistribute(&world, &loads, f, &mut items, &options);
    fails(
        "flows the loads cannot carry",
        rank,
        r,
        |e| matches!(e, RunError::InvalidPlan { .. }),
        refused,
    );
    assert_eq!(items, original);

    // Arguments valid on each rank, different between ranks.
    let uni = RingInstance::unidirectional(&loads, &targets, &[1.0; 4]).unwrap();
    let uni_flows = link_flows(RANKS, &plan(&uni, None).unwrap().flows);
    assert_ne!(uni_flows, flows);
    let f: &[i128] = if odd { &uni_flows } else { &flows };
    let r = redistribute(&world, &loads, f, &mut items, &options);
    fails(
        "a unidirectional plan on one rank",
        rank,
        r,
        mismatch,
        mismatch,
    );
    let other_targets = [5u64, 3, 4, 4];
    let other = RingInstance::bidirectional(&loads, &other_targets, &[1.0; 4], &[1.0; 4]).unwrap();
    let other_flows = link_flows(RANKS, &plan(&other, None).unwrap().flows);
    let f: &[i128] = if odd { &other_flows } else { &flows };
    let r = redistribute(&world, &loads, f, &mut items, &options);
    fails("other targets on one rank", rank, r, mismatch, mismatch);
    let bigger = Options {
        chunk_bytes: 64,
        ..options.clone()
    };
    let r = redistribute(
        &world,
        &loads,
        &flows,
        &mut items,
        if odd { &bigger } else { &options },
    );
    fails(
        "another message size on one rank",
        rank,
        r,
        mismatch,
        mismatch,
    );
    let batched = Options {
        batches: Some(batches_from_plan(&ring, &ring_plan)),
        ..options.clone()
    };
    let r = redistribute(
        &world,
        &loads,
        &flows,
        &mut items,
        if odd { &batched } else { &options },
    );
    fails("planned batches on one rank", rank, r, mismatch, mismatch);
    // Items of 8 bytes on one rank, 16 elsewhere (each rank's bytes fit its own
    // item size): without the agreement a 16-byte message would be truncated.
    let mut bytes: Vec<u8> = bytemuck::cast_slice(&original).to_vec();
    let mut wide_loads = loads;
    if odd {
        wide_loads = loads.map(|l| l * 2);
    }
    let item_bytes = if odd { 8 } else { 16 };
    let r = redistribute_bytes(
        &world,
        &wide_loads,
        &flows,
        item_bytes,
        &mut bytes,
        &options,
    );
    fails("another item size on one rank", rank, r, mismatch, mismatch);
    assert_eq!(bytes, bytemuck::cast_slice::<_, u8>(&original));
    assert_eq!(items, original);

    // A message one item longer than announced (a bug's stand-in) from rank
    // 0: no rank aborts (hetbal's duplicate returns MPI's truncation error);
    // in chunks the receive of the announced size cuts the junk off and the
    // checks pass, with planned batches the receiver probes the size and every
    // rank fails with its items intact.
    let into_rank_0 = flows[RANKS - 1].rem_euclid(i128::from(total)) as u64;
    let new_first = (total - into_rank_0 + targets[..rank].iter().sum::<u64>()) % total;
    for (what, base) in [("chunks", &options), ("planned batches", &batched)] {
        let long = Options {
            fault: Some((0, Fault::Long)),
            ..base.clone()
        };
        let mut moved = original.clone();
        let r = redistribute(&world, &loads, &flows, &mut moved, &long);
        let committed = common::items(new_first, targets[rank], total);
        if let Some(e) = committed_or_kept(what, r, &moved, &committed, &original) {
            assert!(
                matches!(e, RunError::Protocol { .. } | RunError::Verification { .. }),
                "{what}: {e:?}"
            );
        }
    }

    // Scatter from the last rank: counts of another length, then other counts.
    let counts = [3u64, 4, 5, 6];
    let root = rank == RANKS - 1;
    let mut scattered = if root {
        common::items(0, 18, 18)
    } else {
        Vec::new()
    };
    let kept = scattered.clone();
    let c: &[u64] = if odd { &counts[..2] } else { &counts };
    let r = scatter_in_order(&world, c, &mut scattered, &options);
    fails(
        "scatter counts of another length",
        rank,
        r,
        |e| matches!(e, RunError::WorldSize { .. }),
        refused,
    );
    let other_counts = [4u64, 3, 5, 6];
    let c: &[u64] = if odd { &other_counts } else { &counts };
    let r = scatter_in_order(&world, c, &mut scattered, &options);
    fails("other scatter counts", rank, r, mismatch, mismatch);
    assert_eq!(scattered, kept);
    // The root's first message to rank 0 one item longer than announced: no
    // rank aborts; every rank gets its share, or fails with its items intact.
    let long = Options {
        fault: Some((0, Fault::Long)),
        ..options.clone()
    };
    let r = scatter_in_order(&world, &counts, &mut scattered, &long);
    let share = common::items(counts[..rank].iter().sum(), counts[rank], 18);
    committed_or_kept("long scatter", r, &scattered, &share, &kept);

    // GEN_BLOCK: a schedule of another instance on one rank.
    let (source, target) = ([6u64, 2, 5, 3], [2u64, 6, 3, 5]);
    let instance = GenBlockInstance::new(&source, &target, 1.0, 1.0).unwrap();
    let schedule = genblock::plan(&instance, Method::Best).schedule;
    let reverse = GenBlockInstance::new(&target, &source, 1.0, 1.0).unwrap();
    let wrong = genblock::plan(&reverse, Method::Best).schedule;
    let mut elements = common::items(first, source[rank], total);
    let kept = elements.clone();
    let s = if odd { &wrong } else { &schedule };
    let r = hetbal_mpi::genblock::run_steps(&world, &instance, s, &mut elements, &options);
    fails(
        "a schedule of another instance",
        rank,
        r,
        |e| matches!(e, RunError::InvalidPlan { .. }),
        refused,
    );
    assert_eq!(elements, kept);
    // Rank 0's first message one element longer than announced: no rank
    // aborts; every rank gets its block, or fails with its elements intact.
    let long = Options {
        fault: Some((0, Fault::Long)),
        ..options.clone()
    };
    let r = hetbal_mpi::genblock::run_steps(&world, &instance, &schedule, &mut elements, &long);
    let block = common::items(target[..rank].iter().sum(), target[rank], total);
    committed_or_kept("long GEN_BLOCK", r, &elements, &block, &kept);

    // Link measurement: no repeat on one rank, then other probe sizes.
    let probe = Probe {
        sizes: vec![0, 1024],
        repeats: 2,
        emulated: None,
    };
    let none = Probe {
        repeats: 0,
        ..probe.clone()
    };
    let r = measure_ring_links(&world, if odd { &none } else { &probe });
    fails(
        "a probe without repeats",
        rank,
        r,
        |e| matches!(e, RunError::InvalidPlan { .. }),
        refused,
    );
    let other = Probe {
        sizes: vec![0, 2048],
        ..probe.clone()
    };
    let r = measure_ring_links(&world, if odd { &other } else { &probe });
    fails("other probe sizes", rank, r, mismatch, mismatch);

    // The application's own message, sent with the tag of hetbal's clockwise
    // items before a redistribution and received after it: hetbal works on a
    // duplicate of the communicator, so neither takes the other's message.
    const APP_TAG: i32 = 17;
    let note = [rank as u64 * 1000 + 7; 3];
    let to = world.process_at_rank(((rank + 1) % RANKS) as i32);
    let from = world.process_at_rank(((rank + RANKS - 1) % RANKS) as i32);
    mpi::request::scope(|scope| {
        let sent = to.immediate_send_with_tag(scope, &note[..], APP_TAG);
        redistribute(&world, &loads, &flows, &mut items, &options).expect("redistribute");
        let (got, _) = from.receive_vec_with_tag::<u64>(APP_TAG);
        assert_eq!(got, vec![((rank + RANKS - 1) % RANKS) as u64 * 1000 + 7; 3]);
        sent.wait();
    });
    let into_rank_0 = flows[RANKS - 1].rem_euclid(i128::from(total)) as u64;
    let new_first = (total - into_rank_0 + targets[..rank].iter().sum::<u64>()) % total;
    assert_eq!(items, common::items(new_first, targets[rank], total));

    // The balancer: iterations left, or link costs, that differ on one rank
    // would make the ranks decide differently (and one move while the others
    // wait): refused on every rank instead.
    let n = RANKS;
    let mut balancer = Balancer::new(vec![1e-9; n], Some(vec![1e-9; n])).unwrap();
    let mut cells = common::items(first, loads[rank], total);
    let remaining = if odd { 5 } else { 6 };
    let r = balancer.rebalance(&world, &mut cells, 1e-3 * (1 + rank) as f64, remaining);
    fails(
        "other iterations left on one rank",
        rank,
        r,
        mismatch,
        mismatch,
    );
    let costs = if odd { 2e-9 } else { 1e-9 };
    let mut other = Balancer::new(vec![costs; n], Some(vec![1e-9; n])).unwrap();
    let r = other.rebalance(&world, &mut cells, 1e-3 * (1 + rank) as f64, 6);
    fails("other link costs on one rank", rank, r, mismatch, mismatch);
    assert_eq!(cells, common::items(first, loads[rank], total));

    // One rank alone: the balancer measures no link and never moves.
    let alone = world
        .split_by_color(Color::with_value(rank as i32))
        .expect("a communicator of one rank");
    let mut balancer = Balancer::measuring(&alone, Policy::Adaptive, 16).expect("one rank");
    let mut mine = common::items(0, 10, 10);
    for remaining in (0..5u64).rev() {
        let seconds = 1.0 + remaining as f64;
        let d = balancer
            .rebalance(&alone, &mut mine, seconds, remaining)
            .expect("one rank");
        assert!(!d.redistribute);
        assert_eq!(d.firsts, vec![0]);
    }
    assert_eq!(mine, common::items(0, 10, 10));
    if rank == 0 {
        println!("disagreements: every check failing on one rank failed on all {RANKS}");
    }
}
