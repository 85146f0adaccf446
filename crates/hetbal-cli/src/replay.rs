//! `hetbal replay`: replays a plan under SimGrid's network models and reports
//! SimGrid's makespan next to the plan's, transfer by transfer.
//!
//! Needs the cargo feature `replay` (and SimGrid: Debian's `libsimgrid-dev`).
//! Without it the subcommand exists but only says how to build it (exit 2).
//!
//! Rings with start-ups (`l_succ`, `l_pred`): each SimGrid link's latency is the
//! instance's start-up (always under `oneport`; under CM02 and LV08 with links
//! from the instance), and a transfer over a link with a start-up is replayed as
//! one message of all its items, so a valid plan replays at its planned times
//! under `oneport`. Rings without start-ups replay exactly as before.
//!
//! Exit status: 0 when the replay ran (whatever the differences), 1 when the plan
//! cannot be carried out (malformed for a replay, or a deadlock) or the
//! simulation failed or exceeded `--timeout`, 2 on bad input.

use std::path::PathBuf;

use clap::{Args, ValueEnum};

/// `--model`: SimGrid's network models (the help of `--model` says what they
/// are); `hetbal_simgrid::NetworkModel` exists only in builds with SimGrid.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum Model {
    #[value(name = "oneport", alias = "one-port")]
    OnePort,
    #[value(name = "CM02")]
    Cm02,
    #[value(name = "LV08")]
    Lv08,
}

impl Model {
    /// The model's name: `oneport`, `CM02` or `LV08`.
    pub fn name(self) -> &'static str {
        match self {
            Model::OnePort => "oneport",
            Model::Cm02 => "CM02",
            Model::Lv08 => "LV08",
        }
    }

    /// SimGrid's model.
    #[cfg(feature = "replay")]
    pub fn network_model(self) -> hetbal_simgrid::NetworkModel {
        use hetbal_simgrid::NetworkModel;
        match self {
            Model::OnePort => NetworkModel::OnePort,
            Model::Cm02 => NetworkModel::Cm02,
            Model::Lv08 => NetworkModel::Lv08,
        }
    }
}

/// Arguments of `hetbal replay`.
#[derive(Args)]
pub struct ReplayArgs {
    /// Plan (the JSON of `hetbal ring plan --json`; only `transfers` is required).
    /// Valid or not: a plan that breaks one-port or sends items it does not hold
    /// yet shows as later transfers or a deadlock.
    #[cfg_attr(feature = "replay", arg(required_unless_present = "simgrid_worker"))]
    pub plan: Option<PathBuf>,
    /// Ring instance the plan was made for (JSON, or TOML if the name ends in .toml).
    #[cfg_attr(feature = "replay", arg(required_unless_present = "simgrid_worker"))]
    #[arg(long, value_name = "INSTANCE")]
    pub instance: Option<PathBuf>,
    /// Take the links from a platform (SimGrid XML, or JSON with links and routes):
    /// processors are hosts of the same name; each ring edge gets its route's
    /// bottleneck bandwidth and total latency. Default: links from the instance's
    /// costs, each with the instance's start-up as its latency (0 when absent).
    #[arg(long, value_name = "FILE.xml")]
    pub platform: Option<PathBuf>,
    /// Network model: oneport (the papers' model: SimGrid's CM02 with TCP-gamma 0,
    /// no cross traffic, factors 1 and each link's latency the instance's start-up,
    /// none on rings without; a valid plan replays exactly), CM02 or LV08
    /// (SimGrid's, with their corrections and the links' latencies).
    #[arg(long, value_enum, value_name = "MODEL", ignore_case = true, default_value_t = Model::OnePort)]
    pub model: Model,
    /// Size of one item in bytes. Default: with --platform, inferred from the
    /// instance's costs and the routes' bandwidths (c * bandwidth, equal on every
    /// ring edge); otherwise 1000000 (with links from the instance the size changes
    /// nothing).
    #[arg(long, value_name = "BYTES")]
    pub item_bytes: Option<u64>,
    /// Wall-time limit of the simulation in seconds; it is stopped beyond.
    #[arg(long, value_name = "SECONDS", default_value_t = 60.0)]
    pub timeout: f64,
    /// Print the replay report as JSON (formats.md) instead of the table.
    #[arg(long)]
    pub json: bool,
    /// Serve one simulation request read on the standard input (hetbal runs each
    /// SimGrid simulation in such a child process).
    #[arg(long, hide = true)]
    pub simgrid_worker: bool,
}

/// Runs `hetbal replay` in a build without SimGrid: explains how to get it.
#[cfg(not(feature = "replay"))]
pub fn run(_args: ReplayArgs) -> Result<u8, crate::common::CliError> {
    Err(crate::common::CliError::input(
        "this hetbal was built without SimGrid: `hetbal replay` needs the cargo feature `replay` and SimGrid 3.32 or later (Debian: apt-get install libsimgrid-dev). Build it with `cargo build --release -p hetbal-cli --features replay` (or `cargo install --path crates/hetbal-cli --features replay`)",
    ))
}

#[cfg(feature = "replay")]
pub use with_simgrid::{run, worker};

#[cfg(feature = "replay")]
mod with_simgrid {
    use std::fmt::Write as _;
    use std::io::Write as _;
    use std::time::Duration;

    use hetbal::ring::RingInstance;
    use hetbal::{validate, Schedule};
    use hetbal_simgrid::network::DEFAULT_ITEM_BYTES;
    use hetbal_simgrid::{NetworkModel, ReplayError, ReplayJob, ReplayReport, RingNetwork, Worker};

    use super::ReplayArgs;
    use crate::common::CliError;
    use crate::input;
    use crate::report::{percent_above, secs};

    /// Transfers listed in the table (the JSON has them all).
    const TABLE_ROWS: usize = 40;

    /// Runs `hetbal replay` (or serves as a SimGrid worker).
    pub fn run(args: ReplayArgs) -> Result<u8, CliError> {
        if args.simgrid_worker {
            return Ok(u8::try_from(hetbal_simgrid::worker_main()).unwrap_or(2));
        }
        let (Some(plan_path), Some(instance_path)) = (&args.plan, &args.instance) else {
            return Err(CliError::input("give a plan and --instance"));
        };
        let model = args.model.network_model();
        let worker = worker(args.timeout)?;
        let ring = input::read_ring_instance(instance_path)?;
        let document = input::read_plan(plan_path)?;
        if let Some(problem) = document.kind_mismatch(&ring) {
            return Err(CliError::input(format!(
                "{}: {problem}",
                plan_path.display()
            )));
        }
        // The file's order: transfer numbers in the report follow it.
        let schedule = Schedule {
            transfers: document.transfers,
        };
        let network = match &args.platform {
            Some(path) => {
                let platform = input::read_platform(path, 1.0, 1.0)?;
                RingNetwork::from_platform(&ring, &platform, args.item_bytes)
                    .map_err(|e| CliError::input(format!("{}: {e}", path.display())))?
            }
            None => {
                RingNetwork::from_instance(&ring, args.item_bytes.unwrap_or(DEFAULT_ITEM_BYTES))
                    .map_err(|e| CliError::input(e.to_string()))?
            }
        };
        let job = ReplayJob::new(&ring, &schedule, &network, model).map_err(failure)?;
        let report = worker.replay(&job).map_err(failure)?;

        let problems: Vec<String> = validate(&ring, &schedule)
            .err()
            .unwrap_or_default()
            .iter()
            .map(|v| v.to_string())
            .collect();
        let stdout = std::io::stdout();
        let mut out = std::io::BufWriter::new(stdout.lock());
        if args.json {
            serde_json::to_writer_pretty(&mut out, &report)
                .map_err(|e| CliError::input(format!("cannot write the report: {e}")))?;
            let _ = writeln!(out);
            if !problems.is_empty() {
                eprintln!(
                    "note: the plan breaks the model ({} problem(s); `hetbal ring verify` lists them)",
                    problems.len()
                );
            }
        } else {
            let startups = ring.has_startups();
            let from = match &args.platform {
                Some(p) if startups && model == NetworkModel::OnePort => format!(
                    "links from the routes of {}, latencies the instance's start-ups",
                    p.display()
                ),
                Some(p) => format!("links from the routes of {}", p.display()),
                None if startups => {
                    "links from the instance's costs, latencies its start-ups".to_string()
                }
                None => "links from the instance's costs".to_string(),
            };
            let _ = write!(out, "{}", table(&ring, &network, &report, &from, &problems));
        }
        let _ = out.flush();
        Ok(0)
    }

    /// The SimGrid worker: this program run as `hetbal replay --simgrid-worker`,
    /// one simulation per process, stopped after `timeout` seconds.
    pub fn worker(timeout: f64) -> Result<Worker, CliError> {
        if !(timeout.is_finite() && timeout > 0.0 && timeout <= 1e6) {
            return Err(CliError::input(format!(
                "--timeout {timeout}: give a number of seconds above 0 (at most 1000000)"
            )));
        }
        let program = std::env::current_exe().map_err(|e| {
            CliError::input(format!(
                "cannot find the hetbal program to run SimGrid: {e}"
            ))
        })?;
        Ok(Worker::new(program, ["replay", "--simgrid-worker"])
            .timeout(Duration::from_secs_f64(timeout)))
    }

    /// A replay that could not report: exit 1 (the plan cannot be carried out,
    /// or the simulation failed), 2 for a plan or ring too large to simulate.
    fn failure(e: ReplayError) -> CliError {
        let code = match e {
            ReplayError::TooManyItems { .. } | ReplayError::TooManyProcessors { .. } => 2,
            _ => 1,
        };
        CliError {
            message: e.to_string(),
            code,
        }
    }

    /// What a model is, for the table's heading (`startups`: the ring has some).
    fn model_words(model: NetworkModel, startups: bool) -> &'static str {
        match model {
            NetworkModel::OnePort if startups => {
                "the papers' one-port model with start-ups: SimGrid's CM02, TCP-gamma 0, no cross traffic, factors 1, latencies the start-ups; a transfer over a link with a start-up is one message"
            }
            NetworkModel::OnePort => {
                "the papers' one-port model: SimGrid's CM02, TCP-gamma 0, no cross traffic, factors 1, no latency"
            }
            NetworkModel::Cm02 => "SimGrid's CM02: max-min sharing, TCP window, cross traffic, latency",
            NetworkModel::Lv08 => {
                "SimGrid's LV08: CM02 with latency x13.01, bandwidth x0.97, weight-S 20537"
            }
        }
    }

    /// A difference with its sign.
    fn signed(x: f64) -> String {
        if x >= 0.0 {
            format!("+{}", secs(x))
        } else {
            secs(x)
        }
    }

    /// The report as a table.
    fn table(
        ring: &RingInstance,
        network: &RingNetwork,
        report: &ReplayReport,
        links: &str,
        problems: &[String],
    ) -> String {
        let mut s = String::new();
        let items: u64 = report.transfers.iter().map(|t| t.items).sum();
        let _ = writeln!(
            s,
            "SimGrid replay: {} ring, {} processors, {} transfers, {} item moves of {} bytes",
            ring.kind(),
            ring.len(),
            report.transfers.len(),
            items,
            network.item_bytes
        );
        let _ = writeln!(
            s,
            "model {} ({})",
            report.model,
            model_words(report.model, ring.has_startups())
        );
        let _ = writeln!(s, "{links}");
        let change = if report.plan_makespan > 0.0 {
            format!(
                " ({:+.2}%)",
                percent_above(report.simgrid_makespan, report.plan_makespan)
            )
        } else {
            String::new()
        };
        let _ = writeln!(s, "plan makespan     {} s", secs(report.plan_makespan));
        let _ = writeln!(
            s,
            "SimGrid makespan  {} s{change}",
            secs(report.simgrid_makespan)
        );
        let scale = report.plan_makespan.abs().max(1.0);
        let differ = report
            .transfers
            .iter()
            .filter(|t| t.difference().abs() > 1e-9 * scale)
            .count();
        if differ == 0 {
            let _ = writeln!(
                s,
                "every transfer ends when the plan says (to 1e-9 of the makespan)"
            );
        } else if let Some((i, t)) = report.largest_difference() {
            let _ = writeln!(
                s,
                "{differ} of {} transfers end elsewhere than planned; largest difference: transfer {i} ({} -> {}) {} s",
                report.transfers.len(),
                t.from,
                t.to,
                signed(t.difference())
            );
        }
        if !problems.is_empty() {
            let _ = writeln!(
                s,
                "the plan breaks the model ({} problem(s)):",
                problems.len()
            );
            for p in problems.iter().take(10) {
                let _ = writeln!(s, "  {p}");
            }
            if problems.len() > 10 {
                let _ = writeln!(s, "  ... (`hetbal ring verify` lists them all)");
            }
        }
        let _ = writeln!(
            s,
            "\n{:>8}  {:>11}  {:>6}  {:>14}  {:>14}  {:>12}",
            "transfer", "from -> to", "items", "plan end (s)", "SimGrid end", "difference"
        );
        for (i, t) in report.transfers.iter().enumerate().take(TABLE_ROWS) {
            let _ = writeln!(
                s,
                "{i:>8}  {:>11}  {:>6}  {:>14}  {:>14}  {:>12}",
                format!("{} -> {}", t.from, t.to),
                t.items,
                secs(t.plan_end),
                secs(t.simgrid_end),
                signed(t.difference())
            );
        }
        if report.transfers.len() > TABLE_ROWS {
            let _ = writeln!(
                s,
                "{:>8}  ... {} more transfers (--json lists them all)",
                "",
                report.transfers.len() - TABLE_ROWS
            );
        }
        s
    }
}
