//! `hetbal genblock plan`: a GEN_BLOCK redistribution in communication steps,
//! its report, its JSON (formats.md) and its Gantt chart.

use std::fmt::Write as _;
use std::path::PathBuf;

use clap::Subcommand;
use hetbal::genblock::{
    check_schedule, plan, redistribution_graph, GenBlockInstance, GenBlockPlan, Method,
};

use crate::common::{choice, gantt_fits, CliError};
use crate::common::{open_chart, print_plan};
use crate::input;
use crate::report::{percent_above, secs};

/// `hetbal genblock …`
#[derive(Subcommand)]
pub enum GenblockCommand {
    /// Schedule a GEN_BLOCK redistribution in communication steps: each step a
    /// set of messages with no shared sender or receiver, costing startup + unit
    /// x (largest message); the schedule costs the sum over its steps.
    Plan {
        /// GEN_BLOCK instance (JSON, or TOML if the name ends in .toml):
        /// {"source": [...], "target": [...], "startup": Tu, "unit": tau}.
        instance: PathBuf,
        /// paper: the paper's Selection, Scheduling and Partition, exactly Delta
        /// steps; best: the least cost found for this startup, any number of
        /// steps, never worse than paper.
        #[arg(long, value_name = "M", default_value = "best",
            value_parser = choice("method", &Method::ALL, Method::name))]
        method: Method,
        /// Print the schedule as JSON (formats.md) instead of the report.
        #[arg(long)]
        json: bool,
        /// Draw the steps as a Gantt chart in this SVG file (a lane per source
        /// and per destination processor).
        #[arg(long, value_name = "FILE.svg")]
        gantt: Option<PathBuf>,
    },
}

/// Runs a genblock command.
pub fn run(command: GenblockCommand) -> Result<u8, CliError> {
    let GenblockCommand::Plan {
        instance,
        method,
        json,
        gantt,
    } = command;
    let g = input::read_genblock_instance(&instance)?;
    let lanes = g.sources() + g.targets();
    let svg_file = open_chart(gantt.as_deref(), lanes)?;
    let planned = plan(&g, method);
    let graph = redistribution_graph(&g);
    let check = check_schedule(&graph, &planned.schedule).map_err(|e| {
        CliError::input(format!(
            "internal error: the {method} schedule failed its check: {}",
            e[0]
        ))
    })?;
    let svg = match svg_file {
        Some(file) => {
            gantt_fits(lanes, check.pieces)?;
            let title = format!(
                "GEN_BLOCK {} -> {} processors, {} elements: cost {} s in {} steps ({})",
                g.sources(),
                g.targets(),
                g.total_elements(),
                secs(planned.cost),
                planned.schedule.len(),
                method
            );
            let chart = hetbal_draw::genblock_chart(title, &g, &planned.schedule);
            Some((hetbal_draw::render_svg(&chart)?, file))
        }
        None => None,
    };
    let report = || report(&g, &planned, graph.len());
    print_plan(json, &planned.document(), report, svg)
}

/// The report: the instance, the steps, the cost against the bound and the
/// paper's figures.
pub fn report(g: &GenBlockInstance, planned: &GenBlockPlan, messages: usize) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "GEN_BLOCK redistribution of {} elements: {} source blocks -> {} target blocks",
        g.total_elements(),
        g.sources(),
        g.targets()
    );
    let _ = writeln!(
        out,
        "cost model: startup Tu = {} s per step, unit tau = {} s per element",
        secs(g.startup()),
        secs(g.unit())
    );
    let _ = writeln!(
        out,
        "graph: {messages} messages, maximum degree Delta = {} (the fewest steps), largest block {}",
        planned.degree,
        g.largest_block()
    );
    let _ = writeln!(
        out,
        "method {}: {}\n",
        planned.method,
        planned.method.description()
    );
    let largest = planned.schedule.largest();
    const SHOWN: usize = 40;
    let _ = writeln!(
        out,
        "{:>5}  {:>8}  {:>12}  {:>12}",
        "step", "messages", "largest", "cost (s)"
    );
    for (c, step) in planned.schedule.steps.iter().enumerate().take(SHOWN) {
        let _ = writeln!(
            out,
            "{:>5}  {:>8}  {:>12}  {:>12}",
            c,
            step.len(),
            largest[c],
            secs(g.startup() + g.unit() * largest[c] as f64)
        );
    }
    if planned.schedule.len() > SHOWN {
        let _ = writeln!(
            out,
            "  ... {} more steps (--json lists them all)",
            planned.schedule.len() - SHOWN
        );
    }
    let _ = writeln!(out);
    let _ = writeln!(
        out,
        "cost         {} s in {} steps (largest sizes add up to {})",
        secs(planned.cost),
        planned.schedule.len(),
        planned.schedule.volume()
    );
    let _ = writeln!(
        out,
        "lower bound  {} s (Delta x Tu + tau x largest block)",
        secs(planned.lower_bound)
    );
    if planned.cost <= planned.lower_bound * (1.0 + 1e-12) {
        let _ = writeln!(out, "optimal      yes (the cost meets the lower bound)");
    } else {
        let _ = writeln!(
            out,
            "gap          {:.2}% above the lower bound (not proven optimal)",
            percent_above(planned.cost, planned.lower_bound)
        );
    }
    let _ = writeln!(
        out,
        "paper        Tb = {} s (plain colouring), Ta = {} s (paper's method), B = {} s (paper's bound for its colouring)",
        secs(planned.plain_cost),
        secs(planned.paper_cost),
        secs(planned.paper_bound)
    );
    if planned.plain_cost > 0.0 {
        let _ = writeln!(
            out,
            "reduction    R = (Tb - cost) / Tb = {:.1}% (the paper's method: {:.1}%)",
            100.0 * (planned.plain_cost - planned.cost) / planned.plain_cost,
            100.0 * (planned.plain_cost - planned.paper_cost) / planned.plain_cost
        );
    }
    if !planned.tradeoff.is_empty() {
        let points: Vec<String> = planned
            .tradeoff
            .iter()
            .take(12)
            .map(|p| format!("{} steps: {}", p.steps, p.volume))
            .collect();
        let _ = writeln!(
            out,
            "trade-off    largest sizes added up, by number of steps: {}{}",
            points.join(", "),
            if planned.tradeoff.len() > 12 {
                ", ..."
            } else {
                ""
            }
        );
    }
    out
}
