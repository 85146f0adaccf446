//! `hetbal-mpi`: runs a plan over MPI on synthetic data, verifies every item, and
//! prints measured against planned times (rank 0 prints).
//!
//! `mpirun -np N hetbal-mpi ring --instance FILE [--item-bytes B] [--json]`
//! `mpirun -np N hetbal-mpi jacobi [--cells C] [--factors 1,2,...]`
//!
//! Exit status: 0 when the run committed and every rank verified its items; 1 when
//! the run failed (every rank then checks that it still holds its original items);
//! 2 on bad input (unreadable instance, wrong number of ranks).

mod jacobi;

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Parser, Subcommand, ValueEnum};
use hetbal::ring::{plan, RingInstance, RingInstanceSpec};
use hetbal_mpi::ring::{link_flows, redistribute, Fault, Options, Pacing};
use mpi::collective::SystemOperation;
use mpi::traits::{Communicator, CommunicatorCollectives};

#[derive(Parser)]
#[command(
    name = "hetbal-mpi",
    version,
    about = "Run hetbal's plans over MPI with real data, verified, nothing lost"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Redistribute synthetic items on a ring as the plan of an instance says.
    Ring(RingArgs),
    /// Scatter synthetic items from the root with the scatter planner's counts, on a
    /// communicator ranked in the plan's order.
    Scatter(ScatterArgs),
    /// Run a GEN_BLOCK redistribution's planned steps on synthetic items.
    Genblock(GenblockArgs),
    /// A 1-D Jacobi relaxation on ranks slowed by different factors, with the
    /// static split and with hetbal's balancer: times, speed-up, same results.
    Jacobi(jacobi::JacobiArgs),
}

#[derive(clap::Args)]
struct RingArgs {
    /// Ring instance (JSON, the format of `hetbal ring plan`).
    #[arg(long)]
    instance: PathBuf,
    /// Bytes per item.
    #[arg(long, default_value_t = 64)]
    item_bytes: usize,
    /// Bytes of items per message.
    #[arg(long, default_value_t = 1 << 20)]
    chunk_bytes: usize,
    /// Print the run report as JSON.
    #[arg(long)]
    json: bool,
    /// Make one rank misbehave on purpose; the run must fail and keep every item.
    #[arg(long, value_enum)]
    inject_fault: Option<FaultArg>,
    /// The rank that misbehaves.
    #[arg(long, default_value_t = 0)]
    fault_rank: usize,
    /// Pace each link to the instance's per-item costs (as the plan schedules its
    /// transfers), so that heterogeneous links are reproduced on one machine.
    #[arg(long)]
    emulate_links: bool,
    /// With --emulate-links: seconds per time unit of the instance's costs.
    /// Default: the plan lasts one second.
    #[arg(long, value_name = "SECONDS")]
    time_scale: Option<f64>,
}

#[derive(clap::Args)]
struct ScatterArgs {
    /// Scatter instance (JSON, the format of `hetbal scatter plan`).
    #[arg(long)]
    instance: PathBuf,
    /// Bytes per item.
    #[arg(long, default_value_t = 64)]
    item_bytes: usize,
    /// Largest message in bytes: beyond it (or beyond MPI's 2^31 count limit) the
    /// root sends each share in chunks instead of one MPI_Scatterv.
    #[arg(long, default_value_t = (1 << 31) - 1)]
    max_message_bytes: usize,
    /// Print the run report as JSON.
    #[arg(long)]
    json: bool,
}

#[derive(clap::Args)]
struct GenblockArgs {
    /// GEN_BLOCK instance (JSON, the format of `hetbal genblock plan`).
    #[arg(long)]
    instance: PathBuf,
    /// Bytes per element.
    #[arg(long, default_value_t = 8)]
    item_bytes: usize,
    /// paper (exactly Delta steps) or best.
    #[arg(long, default_value = "best")]
    method: String,
    /// Print the run report as JSON.
    #[arg(long)]
    json: bool,
}

#[derive(Clone, Copy, ValueEnum)]
enum FaultArg {
    Corrupt,
    Short,
    FailBeforeCommit,
}

/// The bytes of the item at global position `g`: its position, then a pattern.
fn item_bytes_at(g: u128, item_bytes: usize, out: &mut Vec<u8>) {
    let tag = (g as u64).to_le_bytes();
    out.extend((0..item_bytes).map(|k| match tag.get(k) {
        Some(&b) => b,
        None => (g as u64).wrapping_mul(31).wrapping_add(k as u64) as u8,
    }));
}

/// True when `items` are exactly the items at positions `first, first + 1, ...`
/// (wrapping at `total`), `count` of them.
fn holds_positions(items: &[u8], first: i128, count: u64, total: u128, item_bytes: usize) -> bool {
    if items.len() as u128 != u128::from(count) * item_bytes as u128 {
        return false;
    }
    let mut expected = Vec::with_capacity(item_bytes);
    items.chunks_exact(item_bytes).enumerate().all(|(k, item)| {
        let g = (first + k as i128).rem_euclid(total as i128) as u128;
        expected.clear();
        item_bytes_at(g, item_bytes, &mut expected);
        item == expected.as_slice()
    })
}

/// Reads a JSON document; errors name the file and the field.
fn read_json<T: serde::de::DeserializeOwned>(path: &std::path::Path) -> Result<T, String> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| format!("{}: cannot read: {e}", path.display()))?;
    let mut de = serde_json::Deserializer::from_str(&text);
    serde_path_to_error::deserialize(&mut de)
        .map_err(|e| format!("{}: {}: {}", path.display(), e.path(), e.inner()))
}

fn read_instance(path: &std::path::Path) -> Result<RingInstance, String> {
    let spec: RingInstanceSpec = read_json(path)?;
    RingInstance::from_spec(spec).map_err(|e| format!("{}: {e}", path.display()))
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let Some(universe) = mpi::initialize() else {
        eprintln!("error: MPI is already initialised");
        return ExitCode::from(2);
    };
    let world = universe.world();
    let rank = world.rank() as usize;
    let args = match cli.command {
        Command::Ring(args) => args,
        Command::Scatter(args) => return run_scatter(&world, &args),
        Command::Genblock(args) => return run_genblock(&world, &args),
        Command::Jacobi(args) => {
            return match jacobi::run_jacobi(&world, &args) {
                Ok(true) => ExitCode::SUCCESS,
                Ok(false) => ExitCode::from(1),
                Err(e) => {
                    if rank == 0 {
                        eprintln!("error: {e}");
                    }
                    ExitCode::from(2)
                }
            };
        }
    };
    let say = |message: &str| {
        if rank == 0 {
            eprintln!("error: {message}");
        }
    };
    let instance = match read_instance(&args.instance) {
        Ok(i) => i,
        Err(e) => {
            say(&e);
            return ExitCode::from(2);
        }
    };
    let n = instance.len();
    if world.size() as usize != n {
        say(&format!(
            "the instance has {n} processors but {} ranks are running: start it with mpirun -np {n}",
            world.size()
        ));
        return ExitCode::from(2);
    }
    if args.item_bytes == 0 {
        say("--item-bytes must be at least 1");
        return ExitCode::from(2);
    }
    let plan = match plan(&instance, None) {
        Ok(p) => p,
        Err(e) => {
            say(&format!("{}: {e}", args.instance.display()));
            return ExitCode::from(2);
        }
    };
    let flows = link_flows(n, &plan.flows);
    let loads = instance.loads();
    let total: u128 = loads.iter().map(|&l| u128::from(l)).sum();
    let first: u128 = loads[..rank].iter().map(|&l| u128::from(l)).sum();
    let mut items = Vec::new();
    for k in 0..u128::from(loads[rank]) {
        item_bytes_at(first + k, args.item_bytes, &mut items);
    }
    let scale = args.time_scale.unwrap_or(if plan.makespan > 0.0 {
        1.0 / plan.makespan
    } else {
        1.0
    });
    if !(scale.is_finite() && scale > 0.0) {
        say("--time-scale must be a positive number of seconds");
        return ExitCode::from(2);
    }
    let pacing = args.emulate_links.then(|| {
        let mut pacing = Pacing::default();
        for t in plan.transfers.iter().filter(|t| t.from == rank) {
            let batch = (
                t.start * scale,
                t.items,
                (t.end - t.start) / t.items as f64 * scale,
            );
            if t.to == (rank + 1) % n {
                pacing.to_succ.push(batch);
            } else {
                pacing.to_pred.push(batch);
            }
        }
        pacing
    });
    let options = Options {
        pacing,
        chunk_bytes: args.chunk_bytes,
        fault: args.inject_fault.map(|f| {
            (
                args.fault_rank,
                match f {
                    FaultArg::Corrupt => Fault::Corrupt,
                    FaultArg::Short => Fault::Short,
                    FaultArg::FailBeforeCommit => Fault::FailBeforeCommit,
                },
            )
        }),
    };
    world.barrier();
    let start = mpi::time();
    let result = redistribute(&world, loads, &flows, args.item_bytes, &mut items, &options);
    let mut elapsed = 0.0f64;
    world.all_reduce_into(&(mpi::time() - start), &mut elapsed, SystemOperation::max());
    let mut transfer = 0.0f64;
    let mine = result.as_ref().map_or(0.0, |r| r.transfer_seconds);
    world.all_reduce_into(&mine, &mut transfer, SystemOperation::max());
    // With emulated links the plan is in seconds and the transfer is what it times.
    let (planned, measured) = if args.emulate_links {
        (plan.makespan * scale, transfer)
    } else {
        (plan.makespan, elapsed)
    };
    let (f_in, f_out) = (flows[(rank + n - 1) % n], flows[rank]);
    let verified_here = match &result {
        Ok(_) => holds_positions(
            &items,
            first as i128 - f_in,
            instance.targets()[rank],
            total,
            args.item_bytes,
        ),
        // After a failure, every rank must still hold exactly its original items.
        Err(_) => holds_positions(&items, first as i128, loads[rank], total, args.item_bytes),
    };
    let _ = f_out;
    let mut bad = 0u64;
    world.all_reduce_into(&u64::from(!verified_here), &mut bad, SystemOperation::sum());
    let items_moved: u128 = flows.iter().map(|f| f.unsigned_abs()).sum();
    match result {
        Ok(_) => {
            if rank == 0 {
                if args.json {
                    println!(
                        "{}",
                        serde_json::json!({
                            "ranks": n,
                            "kind": "ring",
                            "verified": bad == 0,
                            "items_moved": items_moved as u64,
                            "bytes_moved": (items_moved * args.item_bytes as u128) as u64,
                            "planned_makespan": planned,
                            "measured_seconds": measured,
                        })
                    );
                } else {
                    println!("ring redistribution on {n} ranks ({})", plan.algorithm);
                    println!(
                        "items moved       {items_moved} ({} bytes)",
                        items_moved * args.item_bytes as u128
                    );
                    if args.emulate_links {
                        println!("planned makespan  {planned:.6} s (emulated links, {scale} s per time unit)");
                        println!(
                            "measured          {measured:.6} s for the transfers ({:+.1}%), {elapsed:.6} s with the checks",
                            100.0 * (measured / planned - 1.0)
                        );
                    } else {
                        println!("planned makespan  {} (instance time units)", plan.makespan);
                        println!("measured          {elapsed:.6} s");
                    }
                    println!(
                        "verified          {}",
                        if bad == 0 {
                            "yes: every rank holds its target items, in order"
                        } else {
                            "NO"
                        }
                    );
                }
            }
            if bad == 0 {
                ExitCode::SUCCESS
            } else {
                ExitCode::from(1)
            }
        }
        Err(e) => {
            if rank == 0 {
                eprintln!("error: {e}");
                eprintln!(
                    "{}",
                    if bad == 0 {
                        "every rank still holds exactly its original items"
                    } else {
                        "SOME RANKS LOST ITEMS"
                    }
                );
            }
            ExitCode::from(1)
        }
    }
}

/// `hetbal-mpi scatter`: plan, rank the communicator, scatter, verify, report.
fn run_scatter<C: Communicator>(world: &C, args: &ScatterArgs) -> ExitCode {
    use hetbal::scatter::{
        plan as scatter_plan, Method, OrderPolicy, ScatterInstance, ScatterInstanceSpec,
    };
    use hetbal_mpi::scatter::{ranked_in_order, scatter_in_order};
    let rank = world.rank() as usize;
    let say = |message: &str| {
        if rank == 0 {
            eprintln!("error: {message}");
        }
    };
    let instance = read_json::<ScatterInstanceSpec>(&args.instance).and_then(|spec| {
        ScatterInstance::from_spec(spec).map_err(|e| format!("{}: {e}", args.instance.display()))
    });
    let instance = match instance {
        Ok(i) => i,
        Err(e) => {
            say(&e);
            return ExitCode::from(2);
        }
    };
    let p = instance.len();
    if world.size() as usize != p || args.item_bytes == 0 {
        say(&format!(
            "the instance has {p} processors but {} ranks are running (start it with mpirun -np {p}), or --item-bytes is 0",
            world.size()
        ));
        return ExitCode::from(2);
    }
    let plan = match scatter_plan(&instance, Method::Exact, OrderPolicy::Best) {
        Ok(plan) => plan,
        Err(e) => {
            say(&format!("{}: {e}", args.instance.display()));
            return ExitCode::from(2);
        }
    };
    let ranked = match ranked_in_order(world, &plan.order) {
        Ok(c) => c,
        Err(e) => {
            say(&e.to_string());
            return ExitCode::from(2);
        }
    };
    let me = ranked.rank() as usize;
    let root = me == p - 1;
    let total: u128 = plan.counts.iter().map(|&c| u128::from(c)).sum();
    let mut data = Vec::new();
    if root {
        for g in 0..total {
            item_bytes_at(g, args.item_bytes, &mut data);
        }
    }
    ranked.barrier();
    let start = mpi::time();
    let result = scatter_in_order(
        &ranked,
        &plan.counts,
        args.item_bytes,
        &data,
        args.max_message_bytes,
    );
    let mut elapsed = 0.0f64;
    ranked.all_reduce_into(&(mpi::time() - start), &mut elapsed, SystemOperation::max());
    let first: u128 = plan.counts[..me].iter().map(|&c| u128::from(c)).sum();
    let (ok, path) = match &result {
        Ok((items, path)) => (
            holds_positions(
                items,
                first as i128,
                plan.counts[me],
                total.max(1),
                args.item_bytes,
            ),
            Some(*path),
        ),
        Err(_) => (false, None),
    };
    let mut bad = 0u64;
    ranked.all_reduce_into(&u64::from(!ok), &mut bad, SystemOperation::sum());
    let moved = total - u128::from(plan.counts[p - 1]);
    if rank == 0 {
        let name = instance.name(plan.order[p - 1]).to_string();
        if args.json {
            println!(
                "{}",
                serde_json::json!({
                    "ranks": p,
                    "kind": "scatter",
                    "verified": bad == 0,
                    "items_moved": moved as u64,
                    "bytes_moved": (moved * args.item_bytes as u128) as u64,
                    "planned_makespan": plan.makespan,
                    "measured_seconds": elapsed,
                })
            );
        } else {
            println!("scatter of {total} items from {name} to {p} ranks in the plan's order");
            println!("counts            {:?}", plan.counts);
            println!(
                "sent by           {}",
                path.map_or("nothing (failed)".to_string(), |p| format!("{p:?}"))
            );
            println!(
                "planned makespan  {} (instance time units, computing included)",
                plan.makespan
            );
            println!("measured          {elapsed:.6} s (the scatter alone)");
            println!(
                "verified          {}",
                if bad == 0 {
                    "yes: every rank holds its share, in order"
                } else {
                    "NO"
                }
            );
        }
    }
    if let Err(e) = result {
        if rank == 0 {
            eprintln!("error: {e}");
        }
        return ExitCode::from(1);
    }
    if bad == 0 {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    }
}

/// `hetbal-mpi genblock`: plan, run the steps, verify, report.
fn run_genblock<C: Communicator>(world: &C, args: &GenblockArgs) -> ExitCode {
    use hetbal::genblock::{plan as genblock_plan, GenBlockInstance, GenBlockInstanceSpec, Method};
    let rank = world.rank() as usize;
    let say = |message: &str| {
        if rank == 0 {
            eprintln!("error: {message}");
        }
    };
    let method = match args.method.as_str() {
        "paper" => Method::Paper,
        "best" => Method::Best,
        other => {
            say(&format!("--method {other}: use paper or best"));
            return ExitCode::from(2);
        }
    };
    let instance = read_json::<GenBlockInstanceSpec>(&args.instance).and_then(|spec| {
        GenBlockInstance::from_spec(spec).map_err(|e| format!("{}: {e}", args.instance.display()))
    });
    let instance = match instance {
        Ok(i) => i,
        Err(e) => {
            say(&e);
            return ExitCode::from(2);
        }
    };
    let (source, target) = (instance.source().to_vec(), instance.target().to_vec());
    let n = source.len().max(target.len());
    if world.size() as usize != n || args.item_bytes == 0 {
        say(&format!(
            "the instance has {} sources and {} targets but {} ranks are running (start it with mpirun -np {n}), or --item-bytes is 0",
            source.len(),
            target.len(),
            world.size()
        ));
        return ExitCode::from(2);
    }
    let plan = genblock_plan(&instance, method);
    let total: u128 = source.iter().map(|&x| u128::from(x)).sum();
    let first = |blocks: &[u64]| -> u128 {
        blocks[..rank.min(blocks.len())]
            .iter()
            .map(|&x| u128::from(x))
            .sum()
    };
    let mut items = Vec::new();
    let mine = source.get(rank).copied().unwrap_or(0);
    for k in 0..u128::from(mine) {
        item_bytes_at(first(&source) + k, args.item_bytes, &mut items);
    }
    world.barrier();
    let start = mpi::time();
    let result = hetbal_mpi::genblock::run_steps(
        world,
        &source,
        &target,
        &plan.schedule.steps,
        args.item_bytes,
        &mut items,
    );
    let mut elapsed = 0.0f64;
    world.all_reduce_into(&(mpi::time() - start), &mut elapsed, SystemOperation::max());
    let ok = match &result {
        Ok(()) => holds_positions(
            &items,
            first(&target) as i128,
            target.get(rank).copied().unwrap_or(0),
            total.max(1),
            args.item_bytes,
        ),
        Err(_) => holds_positions(
            &items,
            first(&source) as i128,
            mine,
            total.max(1),
            args.item_bytes,
        ),
    };
    let mut bad = 0u64;
    world.all_reduce_into(&u64::from(!ok), &mut bad, SystemOperation::sum());
    let moved: u128 = plan
        .schedule
        .steps
        .iter()
        .flatten()
        .filter(|m| m.from != m.to)
        .map(|m| u128::from(m.size))
        .sum();
    if rank == 0 {
        match &result {
            Ok(()) if args.json => println!(
                "{}",
                serde_json::json!({
                    "ranks": n,
                    "kind": "genblock",
                    "verified": bad == 0,
                    "items_moved": moved as u64,
                    "bytes_moved": (moved * args.item_bytes as u128) as u64,
                    "planned_makespan": plan.cost,
                    "measured_seconds": elapsed,
                })
            ),
            Ok(()) => {
                println!(
                    "GEN_BLOCK redistribution on {n} ranks: {} steps ({}), {moved} elements moved",
                    plan.schedule.steps.len(),
                    args.method
                );
                println!("planned cost      {} (instance time units)", plan.cost);
                println!("measured          {elapsed:.6} s");
                println!(
                    "verified          {}",
                    if bad == 0 {
                        "yes: every rank holds its target block, in order"
                    } else {
                        "NO"
                    }
                );
            }
            Err(e) => eprintln!("error: {e}"),
        }
    }
    if result.is_ok() && bad == 0 {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    }
}
