//! `hetbal-mpi`: runs a plan over MPI on synthetic data, verifies every item, and
//! prints measured against planned times (rank 0 prints).
//!
//! `mpirun -np N hetbal-mpi ring|scatter|genblock --instance FILE [--item-bytes B]
//! [--emulate-links [--time-scale S]] [--inject-fault corrupt|short|fail-before-commit
//! [--fault-rank R]] [--json]` (ring: also `[--round-trips K]`, moving the items
//! back and forth K more times with one workspace per rank)
//! `mpirun -np N hetbal-mpi jacobi [--cells C] [--factors 1,2,...]`
//!
//! Exit status: 0 when the run committed and every rank verified its items; 1 when
//! the run failed (every rank then checks that it still holds its original items);
//! 2 on bad input (unreadable instance, wrong number of ranks, a fault that cannot
//! be injected).

mod jacobi;

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use clap::{Parser, Subcommand, ValueEnum};
use hetbal::ring::{plan, RingInstance, RingInstanceSpec};
use hetbal_mpi::protocol::Fault;
use hetbal_mpi::ring::{link_flows, redistribute_with, Options, Pacing};
use hetbal_mpi::workspace::Workspace;
use hetbal_mpi::RunError;
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

/// Options every planned run shares: report, fault injection, emulated links.
#[derive(clap::Args)]
struct RunFlags {
    /// Print the run report as JSON.
    #[arg(long)]
    json: bool,
    /// Make one rank misbehave on purpose; the run must fail on every rank and
    /// every rank must keep exactly its original items.
    #[arg(long, value_enum)]
    inject_fault: Option<FaultArg>,
    /// The rank that misbehaves (its processor index in the instance). In a
    /// scatter only the root sends: corrupt and short then spoil the root's first
    /// message to this rank.
    #[arg(long, default_value_t = 0)]
    fault_rank: usize,
    /// Pace each link to the instance's per-item costs (as the plan schedules its
    /// transfers), so that heterogeneous links are reproduced on one machine.
    #[arg(long)]
    emulate_links: bool,
    /// With --emulate-links: seconds per time unit of the instance's costs.
    /// Default: the plan's transfers last one second.
    #[arg(long, value_name = "SECONDS")]
    time_scale: Option<f64>,
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
    /// After the redistribution, move the items back to the loads and again to
    /// the targets this many times, reusing the staging memory (one workspace per
    /// rank), checking every item after each move. Only the first is timed.
    #[arg(long, default_value_t = 0)]
    round_trips: u32,
    #[command(flatten)]
    flags: RunFlags,
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
    #[command(flatten)]
    flags: RunFlags,
}

#[derive(clap::Args)]
struct GenblockArgs {
    /// GEN_BLOCK instance (JSON, the format of `hetbal genblock plan`).
    #[arg(long)]
    instance: PathBuf,
    /// Bytes per element.
    #[arg(long, default_value_t = 8)]
    item_bytes: usize,
    /// Bytes of elements per message (larger pieces go in several messages).
    #[arg(long, default_value_t = 1 << 20)]
    chunk_bytes: usize,
    /// paper (exactly Delta steps) or best.
    #[arg(long, default_value = "best")]
    method: String,
    #[command(flatten)]
    flags: RunFlags,
}

#[derive(Clone, Copy, ValueEnum)]
enum FaultArg {
    Corrupt,
    Short,
    FailBeforeCommit,
}

impl From<FaultArg> for Fault {
    fn from(f: FaultArg) -> Fault {
        match f {
            FaultArg::Corrupt => Fault::Corrupt,
            FaultArg::Short => Fault::Short,
            FaultArg::FailBeforeCommit => Fault::FailBeforeCommit,
        }
    }
}

impl RunFlags {
    /// The injected fault, checked against the number of ranks; `sends(rank)`
    /// says whether a rank has a message a fault can spoil.
    fn fault(
        &self,
        ranks: usize,
        sends: impl Fn(usize) -> bool,
    ) -> Result<Option<(usize, Fault)>, String> {
        let Some(fault) = self.inject_fault.map(Fault::from) else {
            return Ok(None);
        };
        let r = self.fault_rank;
        if r >= ranks {
            return Err(format!(
                "--fault-rank {r}: there are {ranks} ranks (0 to {})",
                ranks - 1
            ));
        }
        if fault.spoils_a_message() && !sends(r) {
            return Err(format!(
                "--fault-rank {r}: rank {r} has no message in this plan for --inject-fault to spoil; pick another rank (or fail-before-commit)"
            ));
        }
        Ok(Some((r, fault)))
    }

    /// Seconds per time unit for emulated links: `--time-scale`, or by default
    /// what makes `planned` (time units) last one second.
    fn scale(&self, planned: f64) -> Result<f64, String> {
        let scale = self
            .time_scale
            .unwrap_or(if planned > 0.0 { 1.0 / planned } else { 1.0 });
        if scale.is_finite() && scale > 0.0 {
            Ok(scale)
        } else {
            Err("--time-scale must be a positive number of seconds".to_string())
        }
    }
}

/// The bytes of the item at global position `g`: its position, then a pattern.
fn item_bytes_at(g: u128, item_bytes: usize, out: &mut Vec<u8>) {
    let tag = (g as u64).to_le_bytes();
    out.extend((0..item_bytes).map(|k| match tag.get(k) {
        Some(&b) => b,
        None => (g as u64).wrapping_mul(31).wrapping_add(k as u64) as u8,
    }));
}

/// The synthetic items at positions `first .. first + count`.
fn items_at(first: u128, count: u64, item_bytes: usize) -> Vec<u8> {
    let mut items = Vec::with_capacity(count as usize * item_bytes);
    for k in 0..u128::from(count) {
        item_bytes_at(first + k, item_bytes, &mut items);
    }
    items
}

/// True when `items` are exactly the items at positions `first, first + 1, ...`
/// (wrapping at `total`), `count` of them.
fn holds_positions(items: &[u8], first: i128, count: u64, total: u128, item_bytes: usize) -> bool {
    if items.len() as u128 != u128::from(count) * item_bytes as u128 {
        return false;
    }
    let mut expected = Vec::with_capacity(item_bytes);
    items.chunks_exact(item_bytes).enumerate().all(|(k, item)| {
        let g = (first + k as i128).rem_euclid(total.max(1) as i128) as u128;
        expected.clear();
        item_bytes_at(g, item_bytes, &mut expected);
        item == expected.as_slice()
    })
}

/// Reads a JSON document; errors name the file and the field.
fn read_json<T: serde::de::DeserializeOwned>(path: &Path) -> Result<T, String> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| format!("{}: cannot read: {e}", path.display()))?;
    let mut de = serde_json::Deserializer::from_str(&text);
    serde_path_to_error::deserialize(&mut de)
        .map_err(|e| format!("{}: {}: {}", path.display(), e.path(), e.inner()))
}

fn read_instance(path: &Path) -> Result<RingInstance, String> {
    let spec: RingInstanceSpec = read_json(path)?;
    RingInstance::from_spec(spec).map_err(|e| format!("{}: {e}", path.display()))
}

/// The largest value of `x` over the ranks of `world`.
fn max_over<C: Communicator>(world: &C, x: f64) -> f64 {
    let mut max = 0.0f64;
    world.all_reduce_into(&x, &mut max, SystemOperation::max());
    max
}

/// What a run did, for the report that rank 0 prints.
struct Outcome {
    kind: &'static str,
    ranks: usize,
    items_moved: u128,
    item_bytes: usize,
    /// Time units of the instance, or seconds with emulated links.
    planned: f64,
    /// Seconds of the whole operation (checks included), the slowest rank's.
    elapsed: f64,
    /// Seconds of the transfers alone, the slowest rank's.
    transfer: f64,
    /// Seconds per time unit when the links were emulated.
    scale: Option<f64>,
    /// Text report lines before the times.
    lines: Vec<String>,
    /// What the verification checks, in the text report.
    verified_means: &'static str,
}

/// Reports a run: every rank says whether it holds what it should (its target
/// items after a commit, exactly its original items after a failure), rank 0
/// prints the report (`--json`: the run report of formats.md) or the error, and
/// the exit status follows.
fn finish<C: Communicator>(
    world: &C,
    flags: &RunFlags,
    result: Result<(), RunError>,
    holds_what_it_should: bool,
    outcome: Outcome,
) -> ExitCode {
    let mut bad = 0u64;
    world.all_reduce_into(
        &u64::from(!holds_what_it_should),
        &mut bad,
        SystemOperation::sum(),
    );
    let rank0 = world.rank() == 0;
    let Outcome {
        kind,
        ranks,
        items_moved,
        item_bytes,
        planned,
        elapsed,
        transfer,
        scale,
        lines,
        verified_means,
    } = outcome;
    // With emulated links the plan is in seconds and the transfer is what it times.
    let measured = if scale.is_some() { transfer } else { elapsed };
    match result {
        Ok(()) if rank0 && flags.json => println!(
            "{}",
            serde_json::json!({
                "ranks": ranks,
                "kind": kind,
                "verified": bad == 0,
                "items_moved": items_moved as u64,
                "bytes_moved": (items_moved * item_bytes as u128) as u64,
                "planned_makespan": planned,
                "measured_seconds": measured,
            })
        ),
        Ok(()) if rank0 => {
            for line in lines {
                println!("{line}");
            }
            println!(
                "items moved       {items_moved} ({} bytes)",
                items_moved * item_bytes as u128
            );
            match scale {
                Some(scale) => {
                    println!("planned makespan  {planned:.6} s (emulated links, {scale} s per time unit)");
                    println!(
                        "measured          {measured:.6} s for the transfers ({:+.1}%), {elapsed:.6} s with the checks",
                        100.0 * (measured / planned - 1.0)
                    );
                }
                None => {
                    println!("planned makespan  {planned} (instance time units)");
                    println!("measured          {elapsed:.6} s");
                }
            }
            println!(
                "verified          {}",
                if bad == 0 { verified_means } else { "NO" }
            );
        }
        Ok(()) => {}
        Err(e) => {
            if rank0 {
                eprintln!("error: {e}");
                if bad == 0 {
                    eprintln!(
                        "every rank still holds exactly its original items (checked item by item on all {} ranks)",
                        world.size()
                    );
                } else {
                    eprintln!("SOME RANKS LOST ITEMS ({bad} of {} ranks)", world.size());
                }
            }
            return ExitCode::from(1);
        }
    }
    if bad == 0 {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    }
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let Some(universe) = mpi::initialize() else {
        eprintln!("error: MPI is already initialised");
        return ExitCode::from(2);
    };
    let world = universe.world();
    let rank = world.rank() as usize;
    let refused = |message: &str| {
        if rank == 0 {
            eprintln!("error: {message}");
        }
        ExitCode::from(2)
    };
    let outcome = match cli.command {
        Command::Ring(args) => run_ring(&world, &args),
        Command::Scatter(args) => run_scatter(&world, &args),
        Command::Genblock(args) => run_genblock(&world, &args),
        Command::Jacobi(args) => {
            return match jacobi::run_jacobi(&world, &args) {
                Ok(true) => ExitCode::SUCCESS,
                Ok(false) => ExitCode::from(1),
                Err(e) => refused(&e),
            };
        }
    };
    outcome.unwrap_or_else(|e| refused(&e))
}

/// `hetbal-mpi ring`: plan, redistribute, verify, report. `Err` on bad input.
fn run_ring<C: Communicator>(world: &C, args: &RingArgs) -> Result<ExitCode, String> {
    let rank = world.rank() as usize;
    let instance = read_instance(&args.instance)?;
    let n = instance.len();
    if world.size() as usize != n {
        return Err(format!(
            "the instance has {n} processors but {} ranks are running: start it with mpirun -np {n}",
            world.size()
        ));
    }
    if args.item_bytes == 0 {
        return Err("--item-bytes must be at least 1".to_string());
    }
    let plan = plan(&instance, None).map_err(|e| format!("{}: {e}", args.instance.display()))?;
    let flows = link_flows(n, &plan.flows);
    let loads = instance.loads();
    let total: u128 = loads.iter().map(|&l| u128::from(l)).sum();
    let first: u128 = loads[..rank].iter().map(|&l| u128::from(l)).sum();
    let fault = args
        .flags
        .fault(n, |r| flows[r] > 0 || flows[(r + n - 1) % n] < 0)?;
    let scale = args.flags.scale(plan.makespan)?;
    let pacing = args.flags.emulate_links.then(|| {
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
        fault,
    };
    let mut items = items_at(first, loads[rank], args.item_bytes);
    let mut workspace = Workspace::new();
    world.barrier();
    let start = mpi::time();
    let result = redistribute_with(
        world,
        loads,
        &flows,
        args.item_bytes,
        &mut items,
        &options,
        &mut workspace,
    );
    let elapsed = max_over(world, mpi::time() - start);
    let transfer = max_over(world, result.as_ref().map_or(0.0, |r| r.transfer_seconds));
    let f_in = flows[(rank + n - 1) % n];
    let targets = instance.targets();
    let holds_targets = |items: &[u8]| {
        holds_positions(
            items,
            first as i128 - f_in,
            targets[rank],
            total,
            args.item_bytes,
        )
    };
    // Every rank holds exactly its original items (also after a failure).
    let holds_loads =
        |items: &[u8]| holds_positions(items, first as i128, loads[rank], total, args.item_bytes);
    let mut holds = match &result {
        Ok(_) => holds_targets(&items),
        Err(_) => holds_loads(&items),
    };
    if result.is_ok() {
        // Back and forth with the same workspace, as an iterative application does.
        let back: Vec<i128> = flows.iter().map(|f| -f).collect();
        let plain = Options {
            chunk_bytes: args.chunk_bytes,
            ..Options::default()
        };
        let ib = args.item_bytes;
        for _ in 0..args.round_trips {
            let went_back = redistribute_with(
                world,
                targets,
                &back,
                ib,
                &mut items,
                &plain,
                &mut workspace,
            );
            holds &= went_back.is_ok() && holds_loads(&items);
            let came_again =
                redistribute_with(world, loads, &flows, ib, &mut items, &plain, &mut workspace);
            holds &= came_again.is_ok() && holds_targets(&items);
        }
    }
    let emulated = args.flags.emulate_links;
    Ok(finish(
        world,
        &args.flags,
        result.map(|_| ()),
        holds,
        Outcome {
            kind: "ring",
            ranks: n,
            items_moved: flows.iter().map(|f| f.unsigned_abs()).sum(),
            item_bytes: args.item_bytes,
            planned: if emulated {
                plan.makespan * scale
            } else {
                plan.makespan
            },
            elapsed,
            transfer,
            scale: emulated.then_some(scale),
            lines: vec![format!(
                "ring redistribution on {n} ranks ({})",
                plan.algorithm
            )],
            verified_means: "yes: every rank holds its target items, in order",
        },
    ))
}

/// `hetbal-mpi scatter`: plan, rank the communicator, scatter, verify, report.
/// `Err` on bad input.
fn run_scatter<C: Communicator>(world: &C, args: &ScatterArgs) -> Result<ExitCode, String> {
    use hetbal::scatter::{
        plan as scatter_plan, Method, OrderPolicy, ScatterInstance, ScatterInstanceSpec,
    };
    use hetbal_mpi::scatter::{pacing_from_plan, ranked_in_order, scatter_in_order};
    let spec = read_json::<ScatterInstanceSpec>(&args.instance)?;
    let instance = ScatterInstance::from_spec(spec)
        .map_err(|e| format!("{}: {e}", args.instance.display()))?;
    let p = instance.len();
    if world.size() as usize != p || args.item_bytes == 0 {
        return Err(format!(
            "the instance has {p} processors but {} ranks are running (start it with mpirun -np {p}), or --item-bytes is 0",
            world.size()
        ));
    }
    let plan = scatter_plan(&instance, Method::Exact, OrderPolicy::Best)
        .map_err(|e| format!("{}: {e}", args.instance.display()))?;
    // Positions in the plan's order (ranks of the ranked communicator).
    let position = |processor: usize| plan.order.iter().position(|&i| i == processor);
    let root_position = p - 1;
    let fault = args.flags.fault(p, |r| match position(r) {
        Some(k) if k == root_position => plan.counts[..root_position].iter().any(|&c| c > 0),
        Some(k) => plan.counts[k] > 0,
        None => false,
    })?;
    // The communication part of the plan: when the root's last send ends.
    let comm_time = plan.timeline.receive_start[root_position] - plan.start;
    let scale = args.flags.scale(comm_time)?;
    let ranked = ranked_in_order(world, &plan.order).map_err(|e| e.to_string())?;
    let me = ranked.rank() as usize;
    let options = hetbal_mpi::scatter::Options {
        max_message_bytes: args.max_message_bytes,
        fault: fault.and_then(|(r, f)| Some((position(r)?, f))),
        pacing: args
            .flags
            .emulate_links
            .then(|| pacing_from_plan(&instance, &plan, scale)),
    };
    let total: u128 = plan.counts.iter().map(|&c| u128::from(c)).sum();
    let original = if me == root_position { total as u64 } else { 0 };
    let mut items = items_at(0, original, args.item_bytes);
    ranked.barrier();
    let start = mpi::time();
    let result = scatter_in_order(&ranked, &plan.counts, args.item_bytes, &mut items, &options);
    let elapsed = max_over(world, mpi::time() - start);
    let transfer = max_over(world, result.as_ref().map_or(0.0, |r| r.transfer_seconds));
    let first: u128 = plan.counts[..me].iter().map(|&c| u128::from(c)).sum();
    let holds = match &result {
        Ok(_) => holds_positions(
            &items,
            first as i128,
            plan.counts[me],
            total,
            args.item_bytes,
        ),
        // After a failure: the root holds every item, the others none.
        Err(_) => holds_positions(&items, 0, original, total, args.item_bytes),
    };
    let path = result.as_ref().ok().map(|r| r.path);
    let mut path_seen = [0u64; 2]; // ranks that saw Scatterv, the chunked path
    let mine = match path {
        Some(hetbal_mpi::scatter::ScatterPath::Scatterv) => [1u64, 0],
        Some(_) => [0, 1],
        None => [0, 0],
    };
    world.all_reduce_into(&mine[..], &mut path_seen[..], SystemOperation::sum());
    let sent_by = if path_seen[0] > 0 {
        "MPI_Scatterv"
    } else {
        "point-to-point messages in the plan's order"
    };
    let emulated = args.flags.emulate_links;
    let name = instance.name(plan.order[root_position]).to_string();
    Ok(finish(
        world,
        &args.flags,
        result.map(|_| ()),
        holds,
        Outcome {
            kind: "scatter",
            ranks: p,
            items_moved: total - u128::from(plan.counts[root_position]),
            item_bytes: args.item_bytes,
            planned: if emulated {
                comm_time * scale
            } else {
                plan.makespan
            },
            elapsed,
            transfer,
            scale: emulated.then_some(scale),
            lines: vec![
                format!("scatter of {total} items from {name} to {p} ranks in the plan's order"),
                format!("counts            {:?}", plan.counts),
                format!("sent by           {sent_by}"),
                if emulated {
                    format!(
                        "plan              {} time units of communication, {} with the computing",
                        comm_time, plan.makespan
                    )
                } else {
                    "plan              its makespan includes the computing; measured: the scatter alone".to_string()
                },
            ],
            verified_means: "yes: every rank holds its share, in order",
        },
    ))
}

/// `hetbal-mpi genblock`: plan, run the steps, verify, report. `Err` on bad input.
fn run_genblock<C: Communicator>(world: &C, args: &GenblockArgs) -> Result<ExitCode, String> {
    use hetbal::genblock::{plan as genblock_plan, GenBlockInstance, GenBlockInstanceSpec, Method};
    use hetbal_mpi::genblock::{run_steps, Pacing};
    let rank = world.rank() as usize;
    let method = match args.method.as_str() {
        "paper" => Method::Paper,
        "best" => Method::Best,
        other => return Err(format!("--method {other}: use paper or best")),
    };
    let spec = read_json::<GenBlockInstanceSpec>(&args.instance)?;
    let instance = GenBlockInstance::from_spec(spec)
        .map_err(|e| format!("{}: {e}", args.instance.display()))?;
    let (source, target) = (instance.source().to_vec(), instance.target().to_vec());
    let n = source.len().max(target.len());
    if world.size() as usize != n || args.item_bytes == 0 {
        return Err(format!(
            "the instance has {} sources and {} targets but {} ranks are running (start it with mpirun -np {n}), or --item-bytes is 0",
            source.len(),
            target.len(),
            world.size()
        ));
    }
    let plan = genblock_plan(&instance, method);
    let steps = &plan.schedule.steps;
    let fault = args.flags.fault(n, |r| {
        steps.iter().flatten().any(|m| m.from == r && m.size > 0)
    })?;
    let scale = args.flags.scale(plan.cost)?;
    let options = hetbal_mpi::genblock::Options {
        chunk_bytes: args.chunk_bytes,
        fault,
        pacing: args.flags.emulate_links.then(|| Pacing {
            startup: instance.startup() * scale,
            unit: instance.unit() * scale,
        }),
    };
    let total: u128 = source.iter().map(|&x| u128::from(x)).sum();
    let first = |blocks: &[u64]| -> u128 {
        blocks[..rank.min(blocks.len())]
            .iter()
            .map(|&x| u128::from(x))
            .sum()
    };
    let mine = source.get(rank).copied().unwrap_or(0);
    let mut items = items_at(first(&source), mine, args.item_bytes);
    world.barrier();
    let start = mpi::time();
    let result = run_steps(
        world,
        &source,
        &target,
        steps,
        args.item_bytes,
        &mut items,
        &options,
    );
    let elapsed = max_over(world, mpi::time() - start);
    let transfer = max_over(world, result.as_ref().map_or(0.0, |r| r.transfer_seconds));
    let holds = match &result {
        Ok(_) => holds_positions(
            &items,
            first(&target) as i128,
            target.get(rank).copied().unwrap_or(0),
            total,
            args.item_bytes,
        ),
        // After a failure, every rank must still hold exactly its source block.
        Err(_) => holds_positions(&items, first(&source) as i128, mine, total, args.item_bytes),
    };
    let moved: u128 = steps
        .iter()
        .flatten()
        .filter(|m| m.from != m.to)
        .map(|m| u128::from(m.size))
        .sum();
    let emulated = args.flags.emulate_links;
    Ok(finish(
        world,
        &args.flags,
        result.map(|_| ()),
        holds,
        Outcome {
            kind: "genblock",
            ranks: n,
            items_moved: moved,
            item_bytes: args.item_bytes,
            planned: if emulated {
                plan.cost * scale
            } else {
                plan.cost
            },
            elapsed,
            transfer,
            scale: emulated.then_some(scale),
            lines: vec![format!(
                "GEN_BLOCK redistribution on {n} ranks: {} steps ({}), startup {} and {} per element",
                steps.len(),
                args.method,
                instance.startup(),
                instance.unit()
            )],
            verified_means: "yes: every rank holds its target block, in order",
        },
    ))
}
