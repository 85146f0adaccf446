//! `hetbal-mpi`: runs a plan over MPI on synthetic data, verifies every item, and
//! prints measured against planned times (rank 0 prints).
//!
//! `mpirun -np N hetbal-mpi ring|scatter|genblock --instance FILE [--item-bytes B]
//! [--emulate-links [--time-scale S]] [--inject-fault corrupt|short|fail-before-commit
//! [--fault-rank R]] [--gantt FILE.svg] [--json]` (ring: also `[--round-trips K]`,
//! moving the items back and forth K more times, and `[--measure-links]`,
//! measuring every link in both directions first)
//! `mpirun -np N hetbal-mpi jacobi [--cells C] [--factors 1,2,...]`
//!
//! Exit status: 0 when the run committed and every rank verified its items; 1 when
//! the run failed (every rank then checks that it still holds exactly its original
//! items); 2 on bad input (unreadable instance, wrong number of ranks, a fault that
//! cannot be injected, a `--gantt` file that cannot be written).
//!
//! `--gantt FILE.svg` draws the run: one lane per rank, the plan's messages in
//! the upper half of each lane and the measured ones in the lower half
//! (`hetbal_mpi::timeline`); rank 0 opens the file before anything moves, and
//! draws it once the run has committed (exit status 2 on rank 0 if it then
//! cannot).
//!
//! This file parses the arguments, reads the instance and prints; the runs are
//! the `synthetic` module's (on synthetic items) and the `jacobi` module's.

mod jacobi;
mod synthetic;

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use clap::builder::{PossibleValuesParser, TypedValueParser};
use clap::{Parser, Subcommand};
use hetbal::document::{self, DocumentError, Format};
use hetbal::genblock::Method;
use hetbal_draw::ChartFile;
use hetbal_mpi::timeline::root_says;
use hetbal_mpi::Fault;
use mpi::traits::Communicator;
use synthetic::{run_genblock, run_ring, run_scatter, RunOutcome, RunSettings, SetupError};

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
    /// every rank must keep exactly its original items (with --give-back-sent,
    /// those it had not sent).
    #[arg(long, value_parser = named(&Fault::ALL, Fault::name))]
    inject_fault: Option<Fault>,
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
    /// Draw the run as a Gantt chart (SVG): one lane per rank, the plan's
    /// messages in the upper half of each lane, the measured ones in the lower
    /// half, on one time axis (the plan in seconds with --emulate-links, else
    /// scaled to the measured makespan). Drawn when the run commits; rank 0
    /// opens the file before anything moves.
    #[arg(long, value_name = "FILE.svg")]
    gantt: Option<PathBuf>,
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
    /// the targets this many times (each rank's memory reused from one move to
    /// the next), checking every item after each move. Only the first is timed.
    #[arg(long, default_value_t = 0)]
    round_trips: u32,
    /// Measure every ring link in both directions before the run (neighbour
    /// ping-pongs; with --emulate-links, at the instance's costs) and report the
    /// costs measured.
    #[arg(long)]
    measure_links: bool,
    /// Give back the memory of the items each rank sends as soon as they have
    /// left, not at the commit: a rank that keeps, sends and receives at once
    /// then holds its items plus a few chunks instead of its items plus all it
    /// receives. A failure after items left then leaves each rank only its
    /// items that had not left (the check after a failure expects exactly
    /// those).
    #[arg(long)]
    give_back_sent: bool,
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
    #[arg(long, default_value = "best", value_parser = named(&Method::ALL, Method::name))]
    method: Method,
    /// Give back the memory of the items each rank sends as soon as they have
    /// left, not at the commit: a rank that keeps, sends and receives at once
    /// then holds its items plus a few chunks instead of its items plus all it
    /// receives. A failure after items left then leaves each rank only its
    /// items that had not left (the check after a failure expects exactly
    /// those).
    #[arg(long)]
    give_back_sent: bool,
    #[command(flatten)]
    flags: RunFlags,
}

/// A value parser accepting the names of `all` (listed by `--help`), giving the
/// value of that name.
fn named<T: Copy + Send + Sync + 'static>(
    all: &'static [T],
    name: fn(T) -> &'static str,
) -> impl TypedValueParser<Value = T> {
    PossibleValuesParser::new(all.iter().map(|&v| name(v))).map(move |chosen| {
        *all.iter()
            .find(|&&v| name(v) == chosen)
            .expect("clap accepts only the listed names")
    })
}

impl RunFlags {
    /// The run's settings, with the bytes per item and per message.
    fn settings(&self, item_bytes: usize, chunk_bytes: usize) -> RunSettings {
        RunSettings {
            item_bytes,
            chunk_bytes,
            fault: self.inject_fault.map(|f| (self.fault_rank, f)),
            emulate_links: self.emulate_links,
            time_scale: self.time_scale,
            record: self.gantt.is_some(),
            give_back_sent: false,
        }
    }
}

impl Command {
    /// The options of a planned run (none for `jacobi`).
    fn run_flags(&self) -> Option<&RunFlags> {
        match self {
            Command::Ring(args) => Some(&args.flags),
            Command::Scatter(args) => Some(&args.flags),
            Command::Genblock(args) => Some(&args.flags),
            Command::Jacobi(_) => None,
        }
    }
}

/// On rank 0, opens the file of `--gantt` before anything moves (removed again
/// if no chart is written into it); every rank learns whether it could.
/// `Ok(None)` on the other ranks. Collective over `world`.
fn open_chart<C: Communicator>(world: &C, path: &Path) -> Result<Option<ChartFile>, String> {
    let opened = (world.rank() == 0).then(|| {
        ChartFile::create(path)
            .map_err(|e| format!("--gantt {}: cannot write: {e}", path.display()))
    });
    let ok = !matches!(opened, Some(Err(_)));
    if root_says(world, ok) {
        opened.transpose()
    } else {
        Err(opened
            .and_then(Result::err)
            .unwrap_or_else(|| format!("--gantt {}: rank 0 cannot write it", path.display())))
    }
}

/// Rank 0 draws the run's timeline into `file` (when the run committed);
/// the message of a failure to draw or write it.
fn draw(outcome: &RunOutcome, file: Option<ChartFile>) -> Result<(), String> {
    let (Some(file), Some(timeline)) = (file, &outcome.timeline) else {
        return Ok(());
    };
    let svg = hetbal_draw::render_svg(&timeline.chart()).map_err(|e| e.to_string())?;
    let path = file.path().to_path_buf();
    file.write(&svg)
        .map_err(|e| format!("--gantt {}: cannot write: {e}", path.display()))?;
    eprintln!("Gantt chart written to {}", path.display());
    Ok(())
}

/// Reads an instance document (JSON, or TOML when the name ends in `.toml`)
/// with the library's parser: the errors of the `hetbal` command, after the
/// file's name.
fn read_instance<T>(
    path: &Path,
    parse: fn(&str, Format) -> Result<T, DocumentError>,
) -> Result<T, String> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| format!("{}: cannot read: {e}", path.display()))?;
    parse(&text, Format::of_file_name(&path.to_string_lossy()))
        .map_err(|e| format!("{}: {e}", path.display()))
}

/// The message of a refused run; a planner's refusal names the instance's file.
fn refusal(instance: &Path) -> impl Fn(SetupError) -> String + '_ {
    move |e| match e {
        SetupError::Plan(_) => format!("{}: {e}", instance.display()),
        e => e.to_string(),
    }
}

/// Rank 0 prints the outcome (`json`: the run report of formats.md) or the
/// error; the exit status follows.
fn report<C: Communicator>(world: &C, outcome: &RunOutcome, json: bool) -> ExitCode {
    if world.rank() == 0 {
        match &outcome.result {
            Ok(()) if json => println!(
                "{}",
                serde_json::to_string(&outcome.report()).expect("a run report serialises")
            ),
            Ok(()) => outcome.text().iter().for_each(|line| println!("{line}")),
            Err(e) => {
                eprintln!("error: {e}");
                eprintln!("{}", outcome.items_kept());
            }
        }
    }
    if outcome.succeeded() {
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
    let refused = |message: &str| {
        if world.rank() == 0 {
            eprintln!("error: {message}");
        }
        ExitCode::from(2)
    };
    // The chart's file is opened before anything moves.
    let gantt = cli.command.run_flags().and_then(|f| f.gantt.as_deref());
    let chart = match gantt.map(|path| open_chart(&world, path)).transpose() {
        Ok(chart) => chart.flatten(),
        Err(message) => return refused(&message),
    };
    let (run, flags) = match &cli.command {
        Command::Ring(args) => (
            read_instance(&args.instance, document::parse_ring_instance).and_then(|ring| {
                let settings = RunSettings {
                    give_back_sent: args.give_back_sent,
                    ..args.flags.settings(args.item_bytes, args.chunk_bytes)
                };
                run_ring(
                    &world,
                    &ring,
                    &settings,
                    args.round_trips,
                    args.measure_links,
                )
                .map_err(refusal(&args.instance))
            }),
            &args.flags,
        ),
        Command::Scatter(args) => (
            read_instance(&args.instance, document::parse_scatter_instance).and_then(|instance| {
                let settings = args.flags.settings(args.item_bytes, args.max_message_bytes);
                run_scatter(&world, &instance, &settings).map_err(refusal(&args.instance))
            }),
            &args.flags,
        ),
        Command::Genblock(args) => (
            read_instance(&args.instance, document::parse_genblock_instance).and_then(|instance| {
                let settings = RunSettings {
                    give_back_sent: args.give_back_sent,
                    ..args.flags.settings(args.item_bytes, args.chunk_bytes)
                };
                run_genblock(&world, &instance, args.method, &settings)
                    .map_err(refusal(&args.instance))
            }),
            &args.flags,
        ),
        Command::Jacobi(args) => {
            return match jacobi::run_jacobi(&world, args) {
                Ok(true) => ExitCode::SUCCESS,
                Ok(false) => ExitCode::from(1),
                Err(e) => refused(&e),
            };
        }
    };
    match run {
        Ok(outcome) => {
            let status = report(&world, &outcome, flags.json);
            match draw(&outcome, chart) {
                Ok(()) => status,
                Err(message) => refused(&message),
            }
        }
        Err(message) => refused(&message),
    }
}
