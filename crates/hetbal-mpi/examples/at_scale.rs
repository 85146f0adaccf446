//! hetbal's MPI operations at scale: on every rank of the communicator (256 or
//! more, oversubscribed on a few cores: small data), a heterogeneous
//! bidirectional ring redistribution, a scatter, a GEN_BLOCK run and ten
//! balancer steps, every item checked on every rank, each operation's time
//! (the slowest rank's) printed by rank 0.
//!
//! `mpirun --oversubscribe -np 256 target/release/examples/at_scale [SEED]`
//!
//! The instances are drawn from SEED (default 256), the same on every rank: a
//! ring whose loads are 1 to 40 items and whose targets are the loads rotated by
//! 17 ranks, costs 1 to 4 per item each way; a scatter of 8 items per rank from
//! the last rank; a GEN_BLOCK resize of blocks of 1 to 30 elements; a balancer
//! over 100 cells per rank, ranks slowed 1 to 4 times (emulated: compute times
//! are reported, not slept).

use std::time::Instant;

use hetbal::genblock::{self, GenBlockInstance, Method};
use hetbal::iterative::Policy;
use hetbal::random::SplitMix64;
use hetbal::ring::{plan, RingInstance};
use hetbal::scatter::{plan_in_order, Method as ScatterMethod, ScatterInstance};
use hetbal_mpi::balancer::Balancer;
use hetbal_mpi::genblock::run_steps;
use hetbal_mpi::ring::{link_flows, redistribute};
use hetbal_mpi::scatter::scatter_in_order;
use hetbal_mpi::Options;
use mpi::collective::SystemOperation;
use mpi::traits::{Communicator, CommunicatorCollectives};

/// The item at global position `g`: its position and a tag.
fn item(g: u64) -> [u64; 2] {
    [g, g.wrapping_mul(0x9e37_79b9_7f4a_7c15)]
}

/// The items at positions `first ..` (wrapping at `total`).
fn items(first: u64, count: u64, total: u64) -> Vec<[u64; 2]> {
    (0..count)
        .map(|k| item((first + k) % total.max(1)))
        .collect()
}

fn main() {
    let universe = mpi::initialize().expect("MPI");
    let world = universe.world();
    let (rank, n) = (world.rank() as usize, world.size() as usize);
    let seed = std::env::args()
        .nth(1)
        .map_or(256, |s| s.parse().expect("SEED: an integer"));
    let mut rng = SplitMix64::new(seed);
    let options = Options::default();
    // The slowest rank's seconds for `f`, and its result.
    let timed = |what: &str, f: &mut dyn FnMut() -> bool| {
        world.barrier();
        let started = Instant::now();
        let ok = f();
        let mine = started.elapsed().as_secs_f64();
        let (mut slowest, mut all_ok) = (0.0, 0u64);
        world.all_reduce_into(&mine, &mut slowest, SystemOperation::max());
        world.all_reduce_into(&u64::from(ok), &mut all_ok, SystemOperation::sum());
        if rank == 0 {
            let verdict = if all_ok == n as u64 {
                "every item checked"
            } else {
                "FAILED"
            };
            println!("{what:<40} {slowest:>9.4} s   {verdict}");
        }
        assert_eq!(all_ok, n as u64, "{what} failed on some rank");
    };
    if rank == 0 {
        println!("hetbal at scale: {n} ranks, seed {seed}");
    }

    // Ring: loads 1 to 40, targets the loads rotated by 17 ranks.
    let loads: Vec<u64> = (0..n).map(|_| 1 + rng.below_u64(40)).collect();
    let targets: Vec<u64> = (0..n).map(|i| loads[(i + 17) % n]).collect();
    let c_succ: Vec<f64> = (0..n).map(|_| 1.0 + rng.below(4) as f64).collect();
    let c_pred: Vec<f64> = (0..n).map(|_| 1.0 + rng.below(4) as f64).collect();
    let ring = RingInstance::bidirectional(&loads, &targets, &c_succ, &c_pred).expect("a ring");
    let the_plan = plan(&ring, None).expect("a plan");
    let flows = link_flows(n, &the_plan.flows);
    let total: u64 = loads.iter().sum();
    let first: u64 = loads[..rank].iter().sum();
    let mut held = items(first, loads[rank], total);
    timed(
        &format!("ring ({} items, {})", total, the_plan.algorithm),
        &mut || {
            redistribute(&world, &loads, &flows, &mut held, &options).expect("ring");
            let into_rank_0 = flows[n - 1].rem_euclid(i128::from(total)) as u64;
            let new_first = (total - into_rank_0 + targets[..rank].iter().sum::<u64>()) % total;
            held == items(new_first, targets[rank], total)
        },
    );

    // Scatter: 8 items per rank from the last rank, in the planner's counts.
    let comm: Vec<f64> = (0..n).map(|i| if i == n - 1 { 0.0 } else { 1.0 }).collect();
    let comp: Vec<f64> = (0..n).map(|i| 1.0 + (i % 4) as f64).collect();
    let scatter = ScatterInstance::linear(8 * n as u64, n - 1, &comm, &comp).expect("a scatter");
    let order: Vec<usize> = (0..n).collect();
    let counts = plan_in_order(&scatter, ScatterMethod::Linear, &order)
        .expect("a scatter plan")
        .counts;
    let all = 8 * n as u64;
    let mut share = if rank == n - 1 {
        items(0, all, all)
    } else {
        Vec::new()
    };
    timed(
        &format!("scatter ({all} items from rank {})", n - 1),
        &mut || {
            scatter_in_order(&world, &counts, &mut share, &options).expect("scatter");
            let first: u64 = counts[..rank].iter().sum();
            share == items(first, counts[rank], all)
        },
    );

    // GEN_BLOCK: blocks of 1 to 30 elements, reversed and rotated.
    let source: Vec<u64> = (0..n).map(|_| 1 + rng.below_u64(30)).collect();
    let mut target: Vec<u64> = source.iter().rev().copied().collect();
    target.rotate_left(3);
    let instance = GenBlockInstance::new(&source, &target, 2.0, 1.0).expect("an instance");
    let schedule = genblock::plan(&instance, Method::Best).schedule;
    let elements: u64 = source.iter().sum();
    let block = |blocks: &[u64]| items(blocks[..rank].iter().sum(), blocks[rank], elements);
    let mut mine = block(&source);
    timed(
        &format!(
            "GEN_BLOCK ({elements} elements, {} steps)",
            schedule.steps.len()
        ),
        &mut || {
            run_steps(&world, &instance, &schedule, &mut mine, &options).expect("GEN_BLOCK");
            mine == block(&target)
        },
    );

    // The balancer: 100 cells per rank, ranks slowed 1 to 4 times.
    let slowdown = 1.0 + (rank % 4) as f64;
    let cells = 100 * n as u64;
    let mut balancer =
        Balancer::with_policy(Policy::Profitability, vec![1e-9; n], Some(vec![1e-9; n]))
            .expect("a balancer");
    let mut held = items(100 * rank as u64, 100, cells);
    let mut moves = 0;
    timed("balancer, 10 steps (decision and moves)", &mut || {
        let mut ok = true;
        for remaining in (0..10u64).rev() {
            let seconds = 1e-6 * held.len() as f64 * slowdown;
            let d = balancer
                .rebalance(&world, &mut held, seconds, remaining)
                .expect("a step");
            moves += u32::from(d.redistribute);
            ok &= held == items(d.firsts[rank], held.len() as u64, cells);
        }
        ok
    });
    if rank == 0 {
        println!("the balancer moved the cells {moves} time(s)");
    }
}
