//! The balancer's model of the compute times ([`Balancer::with_model`]), under
//! `mpirun -np 4`: on the library's memory-cliff scenario (two ranks whose
//! time per item jumps past a capacity, two steady), each rank reporting the
//! scenario's compute time for the items it holds, the balancer moves the
//! items exactly as the library's closed loop of the same decider does, load
//! for load: with the functional model it settles within 5% of the optimum
//! by iteration 10, with the constant model it moves every two or three
//! iterations.
//! The items arrive in order every time. A model chosen on one rank only,
//! or a policy set on one rank only, is refused on every rank.
//!
//! Run by `cargo test` like any test: started without MPI, it starts itself
//! under `mpirun -np 4` and passes when every rank does.

mod common;

use hetbal::experiment::load_dependent::decider;
use hetbal::functional::Model;
use hetbal::iterative::load::{closed_loop, standard_scenarios};
use hetbal::iterative::Policy;
use hetbal_mpi::balancer::{Balancer, DeciderModel};
use hetbal_mpi::RunError;
use mpi::traits::Communicator;

const RANKS: usize = 4;

fn main() {
    let Some(universe) = common::as_ranks(RANKS) else {
        return;
    };
    let world = universe.world();
    let rank = world.rank() as usize;
    let scenario = standard_scenarios(1)
        .into_iter()
        .find(|s| s.name == "memory-cliff")
        .expect("the library's memory-cliff scenario");
    assert_eq!(scenario.profiles.len(), RANKS);
    let total: u64 = scenario.initial_loads.iter().sum();
    for model in [
        DeciderModel::Constant,
        DeciderModel::functional(),
        DeciderModel::Functional(Model::MonotoneCubic),
    ] {
        // The library's closed loop: the decider alone, on the same numbers.
        let reference = closed_loop(&scenario, decider(&scenario, model).unwrap()).unwrap();
        let mut balancer = Balancer::with_policy(
            Policy::Profitability,
            scenario.c_succ.clone(),
            scenario.c_pred.clone(),
        )
        .unwrap()
        .with_model(model);
        assert_eq!(balancer.decider.model(), model);
        let first: u64 = scenario.initial_loads[..rank].iter().sum();
        let mut cells = common::items(first, scenario.initial_loads[rank], total);
        let mut moves = 0;
        for k in 1..=scenario.iterations {
            let expected = &reference.iterations[k as usize - 1];
            assert_eq!(
                cells.len() as u64,
                expected.loads[rank],
                "{}: iteration {k}",
                model.name()
            );
            let seconds = scenario.profiles[rank].time(cells.len() as u64);
            let d = balancer
                .rebalance(
                    &world,
                    &mut cells,
                    seconds,
                    u64::from(scenario.iterations - k),
                )
                .unwrap();
            assert_eq!(d.redistribute, expected.moved, "{}: {k}", model.name());
            moves += u32::from(d.redistribute);
            let first = d.firsts[rank];
            assert_eq!(cells, common::items(first, cells.len() as u64, total));
        }
        assert_eq!(moves, reference.moves, "{}", model.name());
        match model {
            DeciderModel::Constant => {
                // It oscillates: a move every two or three iterations (each
                // new time per item believed at its second measure).
                assert!(
                    moves >= (scenario.iterations - 1) / 3,
                    "the constant model oscillates: {moves} moves"
                );
                assert!(reference.settled(0.05).is_none());
            }
            _ if model == DeciderModel::functional() => {
                let settled = reference
                    .settled(0.05)
                    .expect("the functional model settles");
                assert!(settled.iteration <= 10, "settled at {}", settled.iteration);
                let last_move = reference.iterations.iter().rposition(|it| it.moved);
                assert!(last_move.is_some_and(|k| k < 10), "moved at {last_move:?}");
            }
            _ => {}
        }
        if rank == 0 {
            println!(
                "models: {} moved {moves} times, as the library's closed loop",
                model.name()
            );
        }
    }

    // A model or a policy chosen on one rank only would make the ranks
    // decide differently: refused on every rank.
    let n = RANKS;
    let mut cells = common::items(0, 10, 10);
    let model = if rank == 1 {
        DeciderModel::functional()
    } else {
        DeciderModel::Constant
    };
    let mut other = Balancer::new(vec![1e-9; n], None)
        .unwrap()
        .with_model(model);
    let r = other.rebalance(&world, &mut cells, 1e-3, 6);
    assert!(matches!(r, Err(RunError::Mismatch)), "{r:?}");
    let mut other = Balancer::new(vec![1e-9; n], None).unwrap();
    if rank == 2 {
        other.set_policy(Policy::Profitability).unwrap();
    }
    let r = other.rebalance(&world, &mut cells, 1e-3, 6);
    assert!(matches!(r, Err(RunError::Mismatch)), "{r:?}");
    assert_eq!(cells, common::items(0, 10, 10));
    if rank == 0 {
        println!("models: a model or a policy on one rank only is refused on all {RANKS}");
    }
}
