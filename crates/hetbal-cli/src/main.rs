//! The `hetbal` command: plans, verifies and draws data redistributions.
//!
//! Exit status: 0 on success, 1 when `verify` finds a plan invalid, 2 on bad input
//! (unreadable or invalid files, bad arguments).

mod balance;
mod common;
mod demo;
mod experiment;
mod experiment_iterative;
mod experiment_load;
mod experiment_mapping;
mod experiment_partition;
mod experiment_startups;
mod genblock;
mod input;
mod map;
mod partition;
mod plan_json;
mod replay;
mod report;
mod scatter;

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Args, Parser, Subcommand};
use hetbal::ring::{self, RingAlgorithm, RingInstance};

use common::{balance, gantt_fits, make_plan, ring_svg, write_file, CliError};

#[derive(Parser)]
#[command(
    name = "hetbal",
    version,
    about = "Balance data-parallel work on heterogeneous processors and move the data there as fast as the network allows",
    after_help = "Start with `hetbal demo`. Exit status: 0 success, 1 invalid plan (verify), 2 bad input."
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Redistribute items on a ring of processors.
    #[command(subcommand)]
    Ring(RingCommand),
    /// Scatter items from a root to heterogeneous processors, balanced.
    #[command(subcommand)]
    Scatter(scatter::ScatterCommand),
    /// Schedule an irregular (GEN_BLOCK) redistribution in communication steps.
    #[command(subcommand)]
    Genblock(genblock::GenblockCommand),
    /// Rebuild an experiment of the papers and print its table.
    #[command(subcommand)]
    Experiment(experiment::ExperimentCommand),
    /// Cut weighted items (cells along a space-filling curve, particles, sparse
    /// rows) into contiguous ranges for processors of different speeds: the
    /// optimal partition, or the one that moves least within a tolerance of it,
    /// and the moves of whole items to it.
    Partition(partition::PartitionArgs),
    /// Share items among processors whose time depends on their load, from
    /// measured (load, seconds) points per processor: the exact integer optimum
    /// of the slowest processor's predicted time (see `ring balance` for one
    /// constant time per item, with the redistribution planned).
    Balance(balance::BalanceArgs),
    /// Map an iterative application on a platform (JSON or SimGrid XML): choose the
    /// processors, order them in a ring, share the work.
    Map(map::MapArgs),
    /// Generate platforms for `hetbal map`.
    #[command(subcommand)]
    Platform(map::PlatformCommand),
    /// Replay a ring plan under SimGrid's network models (oneport, CM02, LV08) and
    /// compare SimGrid's makespan with the plan's, transfer by transfer. Needs a
    /// build with the cargo feature `replay` (and SimGrid).
    Replay(replay::ReplayArgs),
    /// Run the main job on a built-in heterogeneous ring of 8 processors: balanced
    /// targets, the optimal plan, its report and a Gantt chart (hetbal-demo.svg).
    Demo {
        /// Folder where the Gantt chart is written.
        #[arg(long, default_value = ".")]
        out_dir: PathBuf,
    },
}

#[derive(Subcommand)]
enum RingCommand {
    /// Plan an optimal redistribution from the loads to the targets of an instance.
    Plan {
        /// Ring instance (JSON, or TOML if the name ends in .toml).
        instance: PathBuf,
        #[command(flatten)]
        output: PlanOutput,
    },
    /// Check a plan's schedule against an instance (exit 0 valid, 1 invalid).
    Verify {
        /// Ring instance (JSON or TOML).
        instance: PathBuf,
        /// Plan (the JSON of `hetbal ring plan --json`; only `transfers` is required).
        plan: PathBuf,
    },
    /// Compute the targets that balance the work given each processor's time per
    /// item, then plan the redistribution to them (the instance's targets are
    /// replaced).
    Balance {
        /// Ring instance (JSON or TOML); its loads and costs are used.
        instance: PathBuf,
        /// Time per item of each processor, comma-separated, in ring order.
        #[arg(
            long,
            value_name = "T0,T1,...",
            required_unless_present = "times_file",
            conflicts_with = "times_file"
        )]
        times: Option<String>,
        /// File holding the times per item as a JSON array.
        #[arg(long, value_name = "FILE")]
        times_file: Option<PathBuf>,
        /// Also write the instance with the balanced targets to this file.
        #[arg(long, value_name = "FILE")]
        instance_out: Option<PathBuf>,
        #[command(flatten)]
        output: PlanOutput,
    },
}

#[derive(Args)]
struct PlanOutput {
    /// Print the plan as JSON (formats.md) instead of the report.
    #[arg(long)]
    json: bool,
    /// Print every processor's row of the report (by default the first 40).
    #[arg(long)]
    all_rows: bool,
    /// Draw the schedule as a Gantt chart in this SVG file.
    #[arg(long, value_name = "FILE.svg")]
    gantt: Option<PathBuf>,
    /// Force an algorithm: unidirectional-homogeneous (Algorithm 1),
    /// unidirectional-heterogeneous (Algorithm 2, as soon as possible),
    /// unidirectional-batched (Algorithm 2's makespan in few batches),
    /// unidirectional-convoys (the same in convoys, when batches would be too
    /// many), bidirectional-blocks (homogeneous rings, at Lemma 6),
    /// bidirectional-lemma9 (light flows), bidirectional-list (store-and-forward
    /// list scheduling), bidirectional-segments (batches, path by path),
    /// exact-search (optimal, small rings only), system8 (the paper's light LP, a
    /// baseline), paper-alg3 (the paper's Algorithm 3, a reference that can be
    /// invalid) or startup-batches (links with start-ups). Default: chosen from
    /// the ring kind and costs.
    #[arg(long, value_name = "NAME",
        value_parser = common::choice("algorithm", &RingAlgorithm::ALL, RingAlgorithm::name))]
    algorithm: Option<RingAlgorithm>,
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    match run(cli) {
        Ok(code) => ExitCode::from(code),
        Err(e) => {
            eprintln!("error: {}", e.message);
            ExitCode::from(e.code)
        }
    }
}

fn run(cli: Cli) -> Result<u8, CliError> {
    match cli.command {
        Command::Demo { out_dir } => demo::run(&out_dir),
        Command::Map(args) => map::run(args),
        Command::Replay(args) => replay::run(args),
        Command::Platform(command) => map::run_platform(command),
        Command::Scatter(command) => scatter::run(command),
        Command::Genblock(command) => genblock::run(command),
        Command::Experiment(command) => experiment::run(command),
        Command::Partition(args) => partition::run(&args),
        Command::Balance(args) => balance::run(&args),
        Command::Ring(RingCommand::Plan { instance, output }) => {
            let ring = input::read_ring_instance(&instance)?;
            plan_and_print(&ring, &output)
        }
        Command::Ring(RingCommand::Verify { instance, plan }) => {
            let ring = input::read_ring_instance(&instance)?;
            let document = input::read_plan(&plan)?;
            verify(&ring, &document)
        }
        Command::Ring(RingCommand::Balance {
            instance,
            times,
            times_file,
            instance_out,
            output,
        }) => {
            let ring = input::read_ring_instance(&instance)?;
            let times = match (times, times_file) {
                (Some(list), _) => input::parse_times(&list)?,
                (None, Some(file)) => input::read_times_file(&file)?,
                (None, None) => unreachable!("clap requires one of them"),
            };
            let balanced = balance(&ring, &times)?;
            if let Some(path) = instance_out {
                let text = serde_json::to_string_pretty(&balanced.to_spec())
                    .map_err(|e| CliError::input(format!("cannot encode the instance: {e}")))?;
                write_file(&path, &(text + "\n"))?;
            }
            plan_and_print(&balanced, &output)
        }
    }
}

/// Plans a ring, prints the report or the JSON, draws the Gantt chart if asked
/// (its file opened first: nothing is printed when it cannot be written).
fn plan_and_print(ring: &RingInstance, output: &PlanOutput) -> Result<u8, CliError> {
    let svg_file = common::open_chart(output.gantt.as_deref(), ring.len())?;
    let plan = make_plan(ring, output.algorithm)?;
    let svg = match svg_file {
        Some(file) => {
            gantt_fits(ring.len(), plan.transfers.len())?;
            Some((ring_svg(ring, &plan, &plan.schedule())?, file))
        }
        None => None,
    };
    let report = || report::plan_report(ring, &plan, &plan.report, output.all_rows);
    common::print_ring_plan(output.json, &plan, report, svg)
}

/// `ring verify`: exit 0 when the plan is valid, 1 with the reasons otherwise.
fn verify(ring: &RingInstance, document: &ring::PlanDocument) -> Result<u8, CliError> {
    let verification = ring::verify(ring, document);
    match &verification.report {
        Some(report) if verification.is_valid() => {
            println!(
                "valid: {} transfers, makespan {} s, lower bound {} s{}",
                verification.transfers,
                report::secs(report.makespan),
                report::secs(verification.lower_bound),
                if verification.optimal {
                    " (optimal)"
                } else {
                    ""
                }
            );
            Ok(0)
        }
        _ => {
            println!("invalid: {} problem(s)", verification.problems.len());
            for p in &verification.problems {
                println!("  {p}");
            }
            Ok(1)
        }
    }
}
