//! `hetbal scatter plan`: how many items the root sends to each processor and in
//! which order (MPI_Scatterv counts and displacements), its report, its JSON
//! (formats.md, "Scatter plan (output)") and its Gantt chart.

use std::fmt::Write as _;
use std::io::Write as _;
use std::path::{Path, PathBuf};

use clap::Subcommand;
use hetbal::scatter::{
    choose_root, plan, Cost, Method, OrderPolicy, PlanError, RootChoice, ScatterInstance,
    ScatterPlan, SearchKind, StartupRule, Timeline, EXHAUSTIVE_MAX_PROCESSORS,
};
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

use crate::common::CliError;
use crate::gantt::plot_error;
use crate::report::{percent_above, secs};
use crate::{gantt, input};

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
        #[arg(long, value_name = "M", default_value = "exact")]
        method: String,
        /// The sending order: best (searched: every order up to 8 processors,
        /// a local search beyond; never worse than bandwidth), bandwidth (Theorem 3:
        /// decreasing bandwidth, root last) or given (the file's order, root last).
        #[arg(long, value_name = "O", default_value = "best")]
        order: String,
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
            let method = parse_method(&method)?;
            let policy = parse_order(&order)?;
            let holder = input::read_scatter_instance(&instance)?;
            let others = root_candidates
                .iter()
                .map(|path| input::read_scatter_instance(path))
                .collect::<Result<Vec<_>, _>>()?;
            if gantt.is_some() {
                crate::common::gantt_fits(holder.len(), 0)?;
            }
            let (chosen, planned, choice) = if others.is_empty() {
                let planned = plan(&holder, method, policy).map_err(plan_error)?;
                (&holder, planned, None)
            } else {
                let choice =
                    choose_root(&holder, &others, method, policy).map_err(|e| match e {
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
            let stdout = std::io::stdout();
            let mut out = std::io::BufWriter::new(stdout.lock());
            if json {
                serde_json::to_writer_pretty(&mut out, &planned.document(chosen))
                    .map_err(|e| CliError::input(format!("cannot write the plan: {e}")))?;
                let _ = writeln!(out);
            } else {
                let _ = write!(
                    out,
                    "{}",
                    plan_report(chosen, &planned, choice.as_ref(), &holder)
                );
            }
            let _ = out.flush();
            if let Some(path) = gantt {
                let title = format!(
                    "scatter of {} items from {}: makespan {} s ({}, {} order)",
                    chosen.items(),
                    chosen.name(chosen.root()),
                    secs(planned.makespan),
                    planned.method,
                    planned.order_policy
                );
                let holder_name = holder.name(holder.root());
                write_gantt(&path, &title, chosen, &planned, holder_name)?;
                eprintln!("Gantt chart written to {}", path.display());
            }
            Ok(0)
        }
    }
}

fn parse_method(name: &str) -> Result<Method, CliError> {
    Method::from_name(name).ok_or_else(|| {
        let known: Vec<_> = Method::ALL.iter().map(|m| m.name()).collect();
        CliError::input(format!(
            "unknown method {name:?}: choose one of {}",
            known.join(", ")
        ))
    })
}

fn parse_order(name: &str) -> Result<OrderPolicy, CliError> {
    OrderPolicy::from_name(name).ok_or_else(|| {
        let known: Vec<_> = OrderPolicy::ALL.iter().map(|m| m.name()).collect();
        CliError::input(format!(
            "unknown order {name:?}: choose one of {}",
            known.join(", ")
        ))
    })
}

/// Planning errors are the user's input (exit 2).
pub fn plan_error(e: PlanError) -> CliError {
    CliError::input(e.to_string())
}

/// What a method does, in the report.
fn describe_method(method: Method) -> &'static str {
    match method {
        Method::NaiveDp => {
            "the paper's Algorithm 1, a dynamic programme over every split (O(p N^2)): optimal counts for the order"
        }
        Method::Exact => {
            "the paper's dynamic programme without trying every split (O(p N) with affine comm costs): optimal counts for the order"
        }
        Method::Lp => "the paper's rational LP (every startup paid), rounded by its scheme",
        Method::Linear => {
            "the closed form of linear costs (every processor that gets items ends together), rounded"
        }
    }
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
        describe_method(planned.method)
    );
    let _ = writeln!(out, "order   {}", describe_order(planned, instance));
    if let Some(choice) = choice {
        let _ = writeln!(
            out,
            "root    chosen among {} candidates (the items sit on {}):",
            choice.candidates.len(),
            holder.name(holder.root())
        );
        let width = choice
            .candidates
            .iter()
            .map(|c| c.root.chars().count())
            .max()
            .unwrap_or(4)
            .max(4);
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
    let name_width = planned
        .order
        .iter()
        .map(|&i| instance.name(i).chars().count())
        .max()
        .unwrap_or(4)
        .max(4);
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

// ---------------------------------------------------------------- Gantt chart

/// What a processor does during a bar.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Activity {
    /// Waiting for its items.
    Waiting,
    /// Receiving its items.
    Receiving,
    /// Computing its items.
    Computing,
    /// Sending (the root sending the shares, or the data holder moving the items
    /// to the root).
    Sending,
}

impl Activity {
    const ALL: [Activity; 4] = [
        Activity::Waiting,
        Activity::Receiving,
        Activity::Computing,
        Activity::Sending,
    ];

    fn color(self) -> RGBColor {
        match self {
            Activity::Waiting => RGBColor(0xD0, 0xD0, 0xD0),
            Activity::Receiving => RGBColor(0x1F, 0x5F, 0xB4),
            Activity::Computing => RGBColor(0x2C, 0xA0, 0x2C),
            Activity::Sending => RGBColor(0xD9, 0x5F, 0x02),
        }
    }

    fn label(self) -> &'static str {
        match self {
            Activity::Waiting => "waiting",
            Activity::Receiving => "receiving",
            Activity::Computing => "computing",
            Activity::Sending => "sending (root, or moving the items to it)",
        }
    }
}

/// One lane of the chart: a processor and its bars, with its item count.
pub struct Lane {
    /// Label (the processor's name).
    pub name: String,
    /// Items it processes.
    pub items: u64,
    /// `(activity, start, end)`.
    bars: Vec<(Activity, f64, f64)>,
}

/// The lanes of a distribution, in sending order (root last), like the paper's
/// Figures 2–4: each processor waits, receives, then computes; the root sends while
/// the others wait. With a root chosen elsewhere (`start > 0`), the data holder
/// (named `holder`) first sends the items to the root.
pub fn lanes(
    instance: &ScatterInstance,
    order: &[usize],
    counts: &[u64],
    t: &Timeline,
    start: f64,
    holder: &str,
) -> Vec<Lane> {
    let root = instance.root();
    order
        .iter()
        .enumerate()
        .map(|(k, &i)| {
            let mut bars = Vec::new();
            let mut push = |a, s: f64, e: f64| {
                if e > s {
                    bars.push((a, s, e));
                }
            };
            let name = instance.name(i);
            if start > 0.0 && name == holder {
                push(Activity::Sending, 0.0, start);
            }
            if i == root {
                push(Activity::Receiving, 0.0, start);
                push(Activity::Sending, start, t.receive_start[k]);
            } else {
                let from = if name == holder { start } else { 0.0 };
                push(Activity::Waiting, from, t.receive_start[k]);
                push(Activity::Receiving, t.receive_start[k], t.receive_end[k]);
            }
            push(Activity::Computing, t.receive_end[k], t.finish_times[k]);
            Lane {
                name: name.to_string(),
                items: counts[k],
                bars,
            }
        })
        .collect()
}

/// Renders lanes as an SVG Gantt chart: one lane per processor (first served on
/// top), bars coloured by activity, the item count at the end of each lane, a time
/// axis in seconds, the title above and a legend below. O(lanes).
pub fn render_svg(title: &str, lanes: &[Lane]) -> Result<String, String> {
    if lanes.is_empty() {
        return Err("cannot draw a Gantt chart without processors".to_string());
    }
    let font = gantt::bundled_font()?;
    let n = lanes.len();
    let end = lanes
        .iter()
        .flat_map(|l| l.bars.iter().map(|b| b.2))
        .fold(0.0f64, f64::max);
    let end = if end > 0.0 && end.is_finite() {
        end
    } else {
        1.0
    };
    let lane_px: u32 = if n <= 16 {
        30
    } else if n >= 64 {
        14
    } else {
        22
    };
    let height = (110 + lane_px * n as u32).max(260);
    let width = 1000u32;
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, (width, height)).into_drawing_area();
        root.fill(&WHITE).map_err(plot_error)?;
        let (chart_area, legend_area) = root.split_vertically(height - 30);
        let label_font = (f64::from(lane_px) * 0.6).clamp(9.0, 15.0);
        let mut name_width = 0;
        for lane in lanes {
            let (w, _) = root
                .estimate_text_size(&lane.name, &TextStyle::from((font, label_font).into_font()))
                .map_err(plot_error)?;
            name_width = name_width.max(w);
        }
        let mut chart = ChartBuilder::on(&chart_area)
            .caption(title, (font, 20.0))
            .margin(10)
            .margin_right(70)
            .x_label_area_size(40)
            .y_label_area_size((name_width + 14).clamp(40, width / 3))
            .build_cartesian_2d(0.0..end * 1.02, 0.0..n as f64)
            .map_err(plot_error)?;
        let lane_of = |y: f64| -> Option<usize> {
            let k = (n as f64 - 0.5 - y).round();
            (k >= 0.0 && k < n as f64).then_some(k as usize)
        };
        let format_lane = |y: &f64| match lane_of(*y) {
            Some(k) if (y.fract() - 0.5).abs() < 1e-9 => lanes[k].name.clone(),
            _ => String::new(),
        };
        chart
            .configure_mesh()
            .disable_y_mesh()
            .y_labels(2 * n + 1)
            .y_label_formatter(&format_lane)
            .x_desc("time (s)")
            .x_label_style((font, 13.0))
            .y_label_style((font, label_font))
            .axis_desc_style((font, 14.0))
            .light_line_style(RGBColor(0xEE, 0xEE, 0xEE))
            .draw()
            .map_err(plot_error)?;
        let (plot_width, _) = chart.plotting_area().dim_in_pixel();
        let pixel = end * 1.02 / f64::from(plot_width.max(1));
        chart
            .draw_series(lanes.iter().enumerate().flat_map(|(k, lane)| {
                let bottom = (n - 1 - k) as f64;
                lane.bars.iter().map(move |&(a, s, e)| {
                    Rectangle::new(
                        [(s, bottom + 0.15), (e.max(s + pixel), bottom + 0.85)],
                        a.color().filled(),
                    )
                })
            }))
            .map_err(plot_error)?;
        let count_style = TextStyle::from((font, 12.0).into_font())
            .pos(Pos::new(HPos::Left, VPos::Center))
            .color(&BLACK);
        chart
            .draw_series(lanes.iter().enumerate().map(|(k, lane)| {
                let last = lane.bars.iter().map(|b| b.2).fold(0.0f64, f64::max);
                let y = (n - 1 - k) as f64 + 0.5;
                Text::new(
                    format!("{}", lane.items),
                    (last + 4.0 * pixel, y),
                    count_style.clone(),
                )
            }))
            .map_err(plot_error)?;
        // Legend.
        let style =
            TextStyle::from((font, 13.0).into_font()).pos(Pos::new(HPos::Left, VPos::Center));
        let mut x = 20i32;
        for a in Activity::ALL {
            legend_area
                .draw(&Rectangle::new([(x, 10), (x + 16, 20)], a.color().filled()))
                .map_err(plot_error)?;
            legend_area
                .draw(&Text::new(a.label(), (x + 22, 15), style.clone()))
                .map_err(plot_error)?;
            let (w, _) = legend_area
                .estimate_text_size(a.label(), &style)
                .map_err(plot_error)?;
            x += 22 + w as i32 + 26;
        }
        let note = "numbers: items per processor";
        legend_area
            .draw(&Text::new(note, (x, 15), style.clone()))
            .map_err(plot_error)?;
        root.present().map_err(plot_error)?;
    }
    Ok(svg)
}

/// Draws lanes as a Gantt chart in `path`.
pub fn write_svg(path: &Path, title: &str, lanes: &[Lane]) -> Result<(), CliError> {
    let svg = render_svg(title, lanes).map_err(CliError::input)?;
    std::fs::write(path, svg)
        .map_err(|e| CliError::input(format!("cannot write {}: {e}", path.display())))
}

/// Draws the plan's Gantt chart in `path`.
fn write_gantt(
    path: &Path,
    title: &str,
    instance: &ScatterInstance,
    planned: &ScatterPlan,
    holder: &str,
) -> Result<(), CliError> {
    let lanes = lanes(
        instance,
        &planned.order,
        &planned.counts,
        &planned.timeline,
        planned.start,
        holder,
    );
    write_svg(path, title, &lanes)
}
