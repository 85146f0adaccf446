//! `hetbal scatter plan`: how many items the root sends to each processor and in
//! which order (MPI_Scatterv counts and displacements), its report, its JSON
//! (formats.md, "Scatter plan (output)") and its Gantt chart.

use std::fmt::Write as _;
use std::path::PathBuf;

use clap::Subcommand;
use hetbal::scatter::{
    choose_root, plan, Cost, Method, OrderPolicy, PlanError, RootChoice, ScatterInstance,
    ScatterPlan, SearchKind, StartupRule, EXHAUSTIVE_MAX_PROCESSORS,
};
use hetbal_draw::scatter_chart;

use crate::common::{choice, name_column, CliError};
use crate::common::{open_chart, print_plan};
use crate::input;
use crate::report::{percent_above, secs};

/// `hetbal scatter …`
#[derive(Subcommand)]
pub enum ScatterCommand {
    /// Plan a load-balanced scatter: how many items the root sends to each
    /// processor, in which order, and when each one finishes.
    Plan {
        /// Scatter instance (JSON, or TOML if the name ends in .toml).
        instance: PathBuf,
        /// How the counts are computed: exact (optimal for the order, fast),
        /// naive-dp (the paper's Algorithm 1, O(p N^2), same optimum), lp (the
        /// paper's LP and rounding, with its guaranteed bound) or linear (closed
        /// form of linear costs: every processor ends together).
        #[arg(long, value_name = "M", default_value = "exact",
            value_parser = choice("method", &Method::ALL, Method::name))]
        method: Method,
        /// The sending order: best (searched: every order up to 8 processors,
        /// a local search beyond; never worse than bandwidth), bandwidth (Theorem 3:
        /// decreasing bandwidth, root last) or given (the file's order, root last).
        #[arg(long, value_name = "O", default_value = "best",
            value_parser = choice("order", &OrderPolicy::ALL, OrderPolicy::name))]
        order: OrderPolicy,
        /// Print the plan as JSON (formats.md) instead of the report.
        #[arg(long)]
        json: bool,
        /// Draw each processor's waiting, receiving and computing time in this SVG
        /// file.
        #[arg(long, value_name = "FILE.svg")]
        gantt: Option<PathBuf>,
        /// The items sit on INSTANCE's root; FILE describes the same processors
        /// scattered from another root (its comm costs from that root). The root
        /// with the least total time, moving the data there included, is chosen.
        /// Repeat for several candidates.
        #[arg(long = "root-candidate", value_name = "FILE")]
        root_candidates: Vec<PathBuf>,
    },
}

/// Runs a scatter command.
pub fn run(command: ScatterCommand) -> Result<u8, CliError> {
    match command {
        ScatterCommand::Plan {
            instance,
            method,
            order,
            json,
            gantt,
            root_candidates,
        } => {
            let holder = input::read_scatter_instance(&instance)?;
            let others = root_candidates
                .iter()
                .map(|path| input::read_scatter_instance(path))
                .collect::<Result<Vec<_>, _>>()?;
            let svg_file = open_chart(gantt.as_deref(), holder.len())?;
            let (chosen, planned, choice) = if others.is_empty() {
                let planned = plan(&holder, method, order).map_err(plan_error)?;
                (&holder, planned, None)
            } else {
                let choice = choose_root(&holder, &others, method, order).map_err(|e| match e {
                    PlanError::RootCandidate { candidate, reason } => CliError::input(format!(
                        "{}: {reason}",
                        root_candidates[candidate - 1].display()
                    )),
                    other => plan_error(other),
                })?;
                let instance = if choice.chosen == 0 {
                    &holder
                } else {
                    &others[choice.chosen - 1]
                };
                (instance, choice.plan.clone(), Some(choice))
            };
            let svg = match svg_file {
                Some(file) => {
                    let title = format!(
                        "scatter of {} items from {}: makespan {} s ({}, {} order)",
                        chosen.items(),
                        chosen.name(chosen.root()),
                        secs(planned.makespan),
                        planned.method,
                        planned.order_policy
                    );
                    let holder_name = holder.name(holder.root());
                    let t = (&planned.order[..], &planned.counts[..], &planned.timeline);
                    let chart = scatter_chart(title, chosen, t, planned.start, holder_name);
                    Some((hetbal_draw::render_svg(&chart)?, file))
                }
                None => None,
            };
            let report = || plan_report(chosen, &planned, choice.as_ref(), &holder);
            print_plan(json, &planned.document(chosen), report, svg)
        }
    }
}

/// Planning errors are the user's input (exit 2).
pub fn plan_error(e: PlanError) -> CliError {
    CliError::input(e.to_string())
}

/// How the order was chosen, in the report.
fn describe_order(planned: &ScatterPlan, instance: &ScatterInstance) -> String {
    match planned.order_policy {
        OrderPolicy::Given => "given: the file's order, root last".to_string(),
        OrderPolicy::Bandwidth => {
            "bandwidth: decreasing bandwidth, root last (Theorem 3)".to_string()
        }
        OrderPolicy::Best => {
            let Some(search) = &planned.search else {
                return "best".to_string();
            };
            let others = instance.len().saturating_sub(1);
            let what = match search.kind {
                SearchKind::Exhaustive => {
                    let all: u64 = (1..=others as u64).product();
                    if all == 1 {
                        "the only order".to_string()
                    } else {
                        format!("the best of all {all} orders (exhaustive search)")
                    }
                }
                SearchKind::LocalOptimum => format!(
                    "a local search (swaps of two processors, moves of one) stopped at an order none of its neighbours beats, after {} orders; more than {EXHAUSTIVE_MAX_PROCESSORS} processors, so not proven the best of all",
                    search.orders_evaluated
                ),
                SearchKind::Budget => format!(
                    "a local search stopped at its work budget after {} orders: not proven the best",
                    search.orders_evaluated
                ),
            };
            format!(
                "best: {what}; Theorem 3's order (decreasing bandwidth) gives {} s",
                secs(search.bandwidth_value + planned.start)
            )
        }
    }
}

/// The report: per processor, items, displacement, waiting, receiving, computing
/// and finish times; then makespan, bound, optimality, and the LP's guarantee.
pub fn plan_report(
    instance: &ScatterInstance,
    planned: &ScatterPlan,
    choice: Option<&RootChoice>,
    holder: &ScatterInstance,
) -> String {
    let mut out = String::new();
    let p = instance.len();
    let root = instance.root();
    let _ = writeln!(
        out,
        "scatter of {} items from {} to {p} processor{} (startup rule: {})",
        instance.items(),
        instance.name(root),
        if p == 1 { "" } else { "s" },
        instance.startup_rule()
    );
    let _ = writeln!(
        out,
        "method  {}: {}",
        planned.method,
        planned.method.description()
    );
    let _ = writeln!(out, "order   {}", describe_order(planned, instance));
    if let Some(choice) = choice {
        let _ = writeln!(
            out,
            "root    chosen among {} candidates (the items sit on {}):",
            choice.candidates.len(),
            holder.name(holder.root())
        );
        let width = name_column("root", choice.candidates.iter().map(|c| c.root.as_str()));
        let _ = writeln!(
            out,
            "          {:<width$}  {:>12}  {:>12}  {:>12}",
            "root", "move (s)", "scatter (s)", "total (s)"
        );
        for (k, c) in choice.candidates.iter().enumerate() {
            let _ = writeln!(
                out,
                "          {:<width$}  {:>12}  {:>12}  {:>12}{}",
                c.root,
                secs(c.move_time),
                secs(c.makespan),
                secs(c.total),
                if k == choice.chosen {
                    "  <- chosen"
                } else {
                    ""
                }
            );
        }
    }
    let _ = writeln!(out);
    let name_width = name_column("name", planned.order.iter().map(|&i| instance.name(i)));
    let _ = writeln!(
        out,
        "{:>4}  {:<name_width$}  {:>12}  {:>12}  {:>12}  {:>12}  {:>12}  {:>12}",
        "#",
        "name",
        "items",
        "displacement",
        "waits (s)",
        "receives (s)",
        "computes (s)",
        "finishes (s)"
    );
    let t = &planned.timeline;
    for (k, &i) in planned.order.iter().enumerate() {
        let _ = writeln!(
            out,
            "{:>4}  {:<name_width$}  {:>12}  {:>12}  {:>12}  {:>12}  {:>12}  {:>12}{}",
            k,
            instance.name(i),
            planned.counts[k],
            planned.displacements[k],
            secs(t.receive_start[k]),
            secs(t.receive_end[k] - t.receive_start[k]),
            secs(t.finish_times[k] - t.receive_end[k]),
            secs(t.finish_times[k]),
            if i == root {
                "  (root: sends to the others while it waits)"
            } else {
                ""
            }
        );
    }
    let _ = writeln!(out);
    let _ = writeln!(out, "makespan     {} s", secs(planned.makespan));
    let _ = writeln!(
        out,
        "lower bound  {} s (rational relaxation in this order, valid under {})",
        secs(planned.lower_bound),
        instance.startup_rule()
    );
    if planned.method.is_exact() {
        let _ = writeln!(
            out,
            "optimal      yes for this order (the dynamic programme is exact)"
        );
    } else {
        let _ = writeln!(
            out,
            "optimal      not proven (rounded rational solution); {:.3}% above the lower bound",
            percent_above(planned.makespan, planned.lower_bound)
        );
    }
    let earliest = t.finish_times.iter().copied().fold(f64::INFINITY, f64::min);
    let _ = writeln!(
        out,
        "earliest     {} s (finish times spread over {:.2}% of the makespan)",
        secs(earliest),
        gap_of(planned.makespan, earliest)
    );
    if let Some(r) = &planned.rational {
        let d = &r.distribution;
        let _ = writeln!(
            out,
            "rational     {} s: the {} optimum in this order, every startup paid",
            secs(d.rational_makespan + planned.start),
            if planned.method == Method::Lp {
                "LP's"
            } else {
                "closed form's"
            }
        );
        let _ = writeln!(
            out,
            "guarantee    with every startup paid these counts end at {} s <= {} s = rational + {} s (the paper's bound: rounding loses less than {} s)",
            secs(r.makespan_always),
            secs(r.bound),
            secs(d.guarantee),
            secs(d.guarantee)
        );
        let no_startups = (0..p).all(|i| {
            [instance.comm(i), instance.comp(i)]
                .iter()
                .all(|c| matches!(c, Cost::Affine { startup, .. } if *startup == 0.0))
        });
        match instance.startup_rule() {
            _ if no_startups => {
                let _ = writeln!(
                    out,
                    "             no startups here, so both rules agree: no integer distribution in this order ends before {} s",
                    secs(d.rational_makespan + planned.start)
                );
            }
            StartupRule::Always => {
                let _ = writeln!(
                    out,
                    "             this instance pays every startup (always): no integer distribution in this order ends before {} s",
                    secs(d.rational_makespan + planned.start)
                );
            }
            StartupRule::WhenUsed => {
                let _ = writeln!(
                    out,
                    "             the bound holds for the always rule; this instance pays startups only when used (when_used): the counts end no later, but its optimum can be below the LP's, so the loss is not bounded (use exact)"
                );
            }
        }
    }
    if planned.start > 0.0 {
        let _ = writeln!(
            out,
            "note         times include {} s to move the items from {} to {} first",
            secs(planned.start),
            holder.name(holder.root()),
            instance.name(root)
        );
    }
    out
}

/// `100 (a - b) / a`, 0 when a is 0.
fn gap_of(a: f64, b: f64) -> f64 {
    if a > 0.0 {
        100.0 * (a - b) / a
    } else {
        0.0
    }
}
