//! `hetbal genblock plan` (a GEN_BLOCK redistribution in communication steps:
//! report, JSON of formats.md, Gantt chart) and `hetbal experiment genblock` (the
//! paper's scenarios I–V, the GEN_BLOCK paper's section 5, for the
//! paper's method and for `best`, with plots).
//!
//! Random block lists (experiment): a distribution of N elements over P blocks
//! whose sizes lie in [1, U] is drawn uniformly among all such lists (every list
//! equally likely), by counting: the number of ways r blocks can hold s elements
//! is tabulated once per (P, N, U), and each block size is drawn with probability
//! proportional to the number of ways the remaining blocks can hold the rest. The
//! source and target lists are drawn independently. The paper does not say how it
//! drew its blocks; this choice reproduces the average degree it gives for
//! scenario V (1.95).

use std::fmt::Write as _;
use std::io::Write as _;
use std::path::PathBuf;
use std::time::Instant;

use clap::{Args, Subcommand};
use hetbal::genblock::{
    best_schedule, lower_bound, paper_schedule, plain_colouring, plan, redistribution_graph,
    GenBlockInstance, GenBlockPlan, Method, SearchOptions, StepSchedule,
};
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};
use serde::Serialize;

use crate::common::CliError;
use crate::report::{percent_above, secs};
use crate::{gantt, input};

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
        #[arg(long, value_name = "M", default_value = "best")]
        method: String,
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
    match command {
        GenblockCommand::Plan {
            instance,
            method,
            json,
            gantt,
        } => {
            let method = Method::from_name(&method).ok_or_else(|| {
                let known: Vec<_> = Method::ALL.iter().map(|m| m.name()).collect();
                CliError::input(format!(
                    "unknown method {method:?}: choose one of {}",
                    known.join(", ")
                ))
            })?;
            let g = input::read_genblock_instance(&instance)?;
            if gantt.is_some() {
                crate::common::gantt_fits(g.sources() + g.targets(), 0)?;
            }
            let planned = plan(&g, method);
            let graph = redistribution_graph(&g);
            let check =
                hetbal::genblock::check_schedule(&graph, &planned.schedule).map_err(|e| {
                    CliError::input(format!(
                        "internal error: the {method} schedule failed its check: {}",
                        e[0]
                    ))
                })?;
            if gantt.is_some() {
                crate::common::gantt_fits(g.sources() + g.targets(), check.pieces)?;
            }
            let stdout = std::io::stdout();
            let mut out = std::io::BufWriter::new(stdout.lock());
            if json {
                serde_json::to_writer_pretty(&mut out, &planned.document())
                    .map_err(|e| CliError::input(format!("cannot write the schedule: {e}")))?;
                let _ = writeln!(out);
            } else {
                let _ = write!(out, "{}", report(&g, &planned, graph.len()));
            }
            let _ = out.flush();
            if let Some(path) = gantt {
                let title = format!(
                    "GEN_BLOCK {} -> {} processors, {} elements: cost {} s in {} steps ({})",
                    g.sources(),
                    g.targets(),
                    g.total_elements(),
                    secs(planned.cost),
                    planned.schedule.len(),
                    method
                );
                let svg =
                    render_gantt_svg(&title, &g, &planned.schedule).map_err(CliError::input)?;
                std::fs::write(&path, svg).map_err(|e| {
                    CliError::input(format!("cannot write {}: {e}", path.display()))
                })?;
                eprintln!("Gantt chart written to {}", path.display());
            }
            Ok(0)
        }
    }
}

/// What a method does, in the report.
fn describe(method: Method) -> &'static str {
    match method {
        Method::Paper => {
            "the paper's Selection (dummy edges on large messages with free ends), Scheduling (O(m) colouring) and Partition, integer sizes: exactly Delta steps"
        }
        Method::Best => {
            "the least cost found over every number of steps from Delta up (optimised layouts, every colouring near Delta, the bound-meeting modular schedule and its merges), never worse than paper"
        }
    }
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
        describe(planned.method)
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

// ---------------------------------------------------------------- Gantt chart

fn plot_error(error: impl std::fmt::Display) -> String {
    format!("cannot draw the chart: {error}")
}

/// Bars of even steps.
const EVEN: RGBColor = RGBColor(0x1F, 0x5F, 0xB4);
/// Bars of odd steps.
const ODD: RGBColor = RGBColor(0x2C, 0xA0, 0x2C);
/// Startups.
const STARTUP: RGBColor = RGBColor(0xD0, 0xD0, 0xD0);

/// Renders a step schedule: a lane per source (S0, S1, ...) then per destination
/// (T0, T1, ...); each message a bar on its sender's and its receiver's lane
/// during its step (after the step's startup, grey), steps in alternating
/// colours. O(P + Q + pieces).
pub fn render_gantt_svg(
    title: &str,
    g: &GenBlockInstance,
    schedule: &StepSchedule,
) -> Result<String, String> {
    let font = gantt::bundled_font()?;
    let names: Vec<String> = (0..g.sources())
        .map(|i| format!("S{i}"))
        .chain((0..g.targets()).map(|j| format!("T{j}")))
        .collect();
    let n = names.len();
    let p = g.sources();
    let largest = schedule.largest();
    let mut starts = Vec::with_capacity(schedule.len());
    let mut t = 0.0f64;
    for &l in &largest {
        starts.push(t);
        t += g.startup() + g.unit() * l as f64;
    }
    let end = if t > 0.0 && t.is_finite() { t } else { 1.0 };
    let lane_px: u32 = if n <= 16 {
        28
    } else if n >= 64 {
        12
    } else {
        20
    };
    let height = (110 + lane_px * n as u32).max(260);
    let width = 1000u32;
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, (width, height)).into_drawing_area();
        root.fill(&WHITE).map_err(plot_error)?;
        let (chart_area, legend_area) = root.split_vertically(height - 30);
        let label_font = (f64::from(lane_px) * 0.6).clamp(8.0, 15.0);
        let mut chart = ChartBuilder::on(&chart_area)
            .caption(title, (font, 18.0))
            .margin(10)
            .margin_right(20)
            .x_label_area_size(40)
            .y_label_area_size(50)
            .build_cartesian_2d(0.0..end, 0.0..n as f64)
            .map_err(plot_error)?;
        let lane_of = |y: f64| -> Option<usize> {
            let k = (n as f64 - 0.5 - y).round();
            (k >= 0.0 && k < n as f64).then_some(k as usize)
        };
        let format_lane = |y: &f64| match lane_of(*y) {
            Some(k) if (y.fract() - 0.5).abs() < 1e-9 => names[k].clone(),
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
        let lane_bottom = |lane: usize| (n - 1 - lane) as f64;
        let mut bars = Vec::new();
        for (c, step) in schedule.steps.iter().enumerate() {
            let begin = starts[c] + g.startup();
            let colour = if c % 2 == 0 { EVEN } else { ODD };
            for m in step {
                let stop = begin + g.unit() * m.size as f64;
                for lane in [m.from, p + m.to] {
                    let y = lane_bottom(lane);
                    bars.push(Rectangle::new(
                        [(begin, y + 0.15), (stop, y + 0.85)],
                        colour.filled(),
                    ));
                }
            }
            if g.startup() > 0.0 {
                bars.push(Rectangle::new(
                    [(starts[c], 0.0), (begin, n as f64)],
                    STARTUP.mix(0.5).filled(),
                ));
            }
        }
        chart.draw_series(bars).map_err(plot_error)?;
        let style =
            TextStyle::from((font, 13.0).into_font()).pos(Pos::new(HPos::Left, VPos::Center));
        let mut x = 20i32;
        for (colour, label) in [
            (EVEN, "even steps"),
            (ODD, "odd steps"),
            (STARTUP, "startups"),
        ] {
            legend_area
                .draw(&Rectangle::new([(x, 10), (x + 16, 20)], colour.filled()))
                .map_err(plot_error)?;
            legend_area
                .draw(&Text::new(label, (x + 22, 15), style.clone()))
                .map_err(plot_error)?;
            let (w, _) = legend_area
                .estimate_text_size(label, &style)
                .map_err(plot_error)?;
            x += 22 + w as i32 + 26;
        }
        root.present().map_err(plot_error)?;
    }
    Ok(svg)
}

// ---------------------------------------------------------------- experiment

/// `hetbal experiment genblock` options.
#[derive(Args)]
pub struct ExperimentArgs {
    /// Print the table as JSON (formats.md, "Experiment tables").
    #[arg(long)]
    pub json: bool,
    /// Also draw one SVG chart per scenario (and the startup trade-off) in this
    /// folder.
    #[arg(long, value_name = "DIR")]
    pub plot: Option<PathBuf>,
    /// Random instances per point (the paper averaged at least 10,000).
    #[arg(long, value_name = "N", default_value_t = 300)]
    pub runs: usize,
    /// Seed of the random draws (the same seed draws the same instances).
    #[arg(long, default_value_t = 2005)]
    pub seed: u64,
}

/// xorshift64: the experiment's random numbers.
struct Rng(u64);

impl Rng {
    fn new(seed: u64) -> Rng {
        // Never 0; mix the seed so that nearby seeds differ.
        Rng(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1)
    }

    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }

    /// Uniform in [0, 1).
    fn unit(&mut self) -> f64 {
        (self.next() >> 11) as f64 / (1u64 << 53) as f64
    }
}

/// Draws block lists uniformly among all lists of `p` sizes in `[1, u]` adding up
/// to `n` (see the module doc).
struct BlockSampler {
    p: usize,
    n: usize,
    u: usize,
    /// `prefix[r][s]`: sum over `x <= s` of the (row-scaled) number of ways `r`
    /// blocks hold `x` elements.
    prefix: Vec<Vec<f64>>,
}

impl BlockSampler {
    /// Tabulates the counts: O(p n). None when no list exists.
    fn new(p: usize, n: usize, u: usize) -> Option<BlockSampler> {
        if p == 0 || u == 0 || n < p || n > p.saturating_mul(u) {
            return None;
        }
        let mut prefix = Vec::with_capacity(p + 1);
        let mut row = vec![0.0f64; n + 1];
        row[0] = 1.0;
        let prefix_of = |row: &[f64]| {
            let mut acc = 0.0;
            row.iter()
                .map(|&x| {
                    acc += x;
                    acc
                })
                .collect::<Vec<f64>>()
        };
        prefix.push(prefix_of(&row));
        for _ in 1..=p {
            let previous = prefix.last().expect("a row");
            // ways[s] = sum over v in 1..=u of previous_row[s - v]
            let mut next = vec![0.0f64; n + 1];
            for (s, slot) in next.iter_mut().enumerate().skip(1) {
                let hi = s - 1;
                let lo = s.saturating_sub(u);
                let below = if lo == 0 { 0.0 } else { previous[lo - 1] };
                *slot = (previous[hi] - below).max(0.0);
            }
            let top = next.iter().copied().fold(0.0f64, f64::max);
            if top > 0.0 {
                for x in &mut next {
                    *x /= top;
                }
            }
            prefix.push(prefix_of(&next));
            row = next;
        }
        let _ = row;
        Some(BlockSampler { p, n, u, prefix })
    }

    /// One block list. O(p log u).
    fn draw(&self, rng: &mut Rng) -> Vec<u64> {
        let mut left = self.n;
        let mut blocks = Vec::with_capacity(self.p);
        for r in (1..=self.p).rev() {
            let previous = &self.prefix[r - 1];
            // v in [1, hi]; weight of v = ways(r - 1, left - v), i.e. indices
            // x = left - v in [left - hi, left - 1].
            let hi = self.u.min(left);
            let (a, b) = (left - hi, left - 1);
            let base = if a == 0 { 0.0 } else { previous[a - 1] };
            let total = previous[b] - base;
            let v = if total > 0.0 {
                let target = base + rng.unit() * total;
                // First x in [a, b] whose prefix exceeds the target.
                let x = a + previous[a..=b].partition_point(|&c| c <= target);
                left - x.min(b)
            } else {
                // Only reachable through rounding: take the largest feasible size.
                hi.min(left - (r - 1))
            };
            blocks.push(v as u64);
            left -= v;
        }
        blocks
    }
}

/// A scenario of the paper's section 5.
struct Scenario {
    name: &'static str,
    what: &'static str,
    x_label: &'static str,
    /// `(point, P, N, U)`.
    points: Vec<(u64, usize, usize, usize)>,
}

fn scenarios() -> Vec<Scenario> {
    vec![
        Scenario {
        name: "I",
        what: "N = 25 P, blocks in [1, 50], P = 4 to 128 (the text says N = 100, which blocks of at least 1 element cannot fill beyond P = 100; its Table 4 gives N/P = 25)",
        x_label: "processors P",
        points: [4, 8, 16, 32, 64, 128].iter().map(|&p| (p as u64, p, 25 * p, 50)).collect(),
        },
        Scenario {
        name: "II",
        what: "P = 32, N = 1600 to 12800, blocks in [1, 2N/P]",
        x_label: "elements N",
        points: [1600, 3200, 6400, 9600, 12800]
            .iter()
            .map(|&n| (n as u64, 32, n, 2 * n / 32))
            .collect(),
        },
        Scenario {
        name: "III",
        what: "N = 3200, P = 4 to 128, blocks in [1, 2N/P]",
        x_label: "processors P",
        points: [4, 8, 16, 32, 64, 128]
            .iter()
            .map(|&p| (p as u64, p, 3200, 2 * 3200 / p))
            .collect(),
        },
        Scenario {
        name: "IV",
        what: "N = 3200, P = 32, blocks in [1, U], U = 150 to 1600",
        x_label: "largest block size U",
        points: [150, 200, 400, 800, 1200, 1600]
            .iter()
            .map(|&u| (u as u64, 32, 3200, u))
            .collect(),
        },
        Scenario {
        name: "V",
        what: "N = 3200, P = 32, blocks in [1, 400], instances grouped by their maximum degree Delta = 5 to 15 (drawn as in IV with U = 400 and kept by Delta, at most 500 x runs draws)",
        x_label: "maximum degree Delta",
        points: (5..=15).map(|d| (d, 32, 3200, 400)).collect(),
        },
    ]
}

/// Startups of the trade-off rows (scenario II at N = 3200, tau = 1).
const TRADEOFF_STARTUPS: [f64; 7] = [0.0, 5.0, 10.0, 25.0, 50.0, 100.0, 200.0];

/// One row (formats.md, "Experiment tables").
#[derive(Clone, Debug, Serialize)]
pub struct Row {
    /// `I` to `V`, or `II-startup` (scenario II at N = 3200 with startup `point`).
    pub scenario: String,
    /// The x value: P, N, U, Delta, or the startup.
    pub point: f64,
    /// `paper` or `best`.
    pub method: &'static str,
    /// Mean cost of the plain colouring.
    pub tb: f64,
    /// Mean cost of the method.
    pub ta: f64,
    /// Mean of the paper's B.
    pub b: f64,
    /// `(tb - ta) / tb`.
    pub r: f64,
    /// Mean lower bound.
    pub lower_bound: f64,
}

/// What the text report and the plots add to the rows.
#[derive(Clone, Debug, Serialize)]
pub struct Summary {
    /// Scenario.
    pub scenario: String,
    /// Point.
    pub point: f64,
    /// Method.
    pub method: &'static str,
    /// Instances averaged.
    pub instances: usize,
    /// Mean number of steps.
    pub steps: f64,
    /// Mean of cost / lower bound.
    pub cost_over_lower_bound: f64,
    /// Mean of the per-instance reductions (Tb - Ta) / Tb.
    pub mean_r: f64,
}

/// The measures of one instance at one startup.
#[derive(Clone, Copy, Debug, Default)]
struct Measure {
    tb: f64,
    b: f64,
    lb: f64,
    /// `(cost, steps)` of paper and best.
    paper: (f64, usize),
    best: (f64, usize),
}

fn measure(source: &[u64], target: &[u64], startup: f64) -> Measure {
    let g = GenBlockInstance::new(source, target, startup, 1.0).expect("drawn lists match");
    let graph = redistribution_graph(&g);
    let paper = paper_schedule(&graph);
    let (best, _) = best_schedule(&graph, startup, 1.0, &SearchOptions::default());
    let plain = plain_colouring(&graph);
    Measure {
        tb: plain.cost(startup, 1.0),
        b: hetbal::genblock::step_cost(graph.degree, paper.bound, startup, 1.0),
        lb: lower_bound(&graph, startup, 1.0),
        paper: (paper.schedule.cost(startup, 1.0), paper.schedule.len()),
        best: (best.cost(startup, 1.0), best.len()),
    }
}

/// Measures every instance, on several threads; results in input order.
fn measure_all(pairs: &[(Vec<u64>, Vec<u64>)], startup: f64) -> Vec<Measure> {
    let threads = std::thread::available_parallelism()
        .map(|n| n.get())
        .unwrap_or(1)
        .clamp(1, 4);
    let chunk = pairs.len().div_ceil(threads).max(1);
    std::thread::scope(|scope| {
        let handles: Vec<_> = pairs
            .chunks(chunk)
            .map(|part| {
                scope.spawn(move || {
                    part.iter()
                        .map(|(s, t)| measure(s, t, startup))
                        .collect::<Vec<_>>()
                })
            })
            .collect();
        handles
            .into_iter()
            .flat_map(|h| h.join().expect("a measuring thread panicked"))
            .collect()
    })
}

/// Rows and summaries of one point from its measures.
fn rows_of(scenario: &str, point: f64, measures: &[Measure]) -> Vec<(Row, Summary)> {
    let n = measures.len().max(1) as f64;
    let mean = |f: &dyn Fn(&Measure) -> f64| measures.iter().map(f).sum::<f64>() / n;
    let tb = mean(&|m| m.tb);
    let b = mean(&|m| m.b);
    let lb = mean(&|m| m.lb);
    let mut out = Vec::new();
    for (method, pick) in [
        (
            "paper",
            (|m: &Measure| m.paper) as fn(&Measure) -> (f64, usize),
        ),
        ("best", |m: &Measure| m.best),
    ] {
        let ta = mean(&|m| pick(m).0);
        out.push((
            Row {
                scenario: scenario.to_string(),
                point,
                method,
                tb,
                ta,
                b,
                r: if tb > 0.0 { (tb - ta) / tb } else { 0.0 },
                lower_bound: lb,
            },
            Summary {
                scenario: scenario.to_string(),
                point,
                method,
                instances: measures.len(),
                steps: mean(&|m| pick(m).1 as f64),
                cost_over_lower_bound: mean(&|m| if m.lb > 0.0 { pick(m).0 / m.lb } else { 1.0 }),
                mean_r: mean(&|m| {
                    if m.tb > 0.0 {
                        (m.tb - pick(m).0) / m.tb
                    } else {
                        0.0
                    }
                }),
            },
        ));
    }
    out
}

/// The JSON document.
#[derive(Serialize)]
struct Table<'a> {
    experiment: &'static str,
    parameters: Parameters<'a>,
    rows: Vec<&'a Row>,
}

#[derive(Serialize)]
struct Parameters<'a> {
    runs: usize,
    seed: u64,
    unit: f64,
    startup: f64,
    blocks: &'static str,
    scenarios: Vec<ScenarioInfo>,
    tradeoff: &'static str,
    notes: &'a [String],
    definitions: Definitions,
    summary: Vec<&'a Summary>,
}

#[derive(Serialize)]
struct ScenarioInfo {
    name: &'static str,
    description: &'static str,
    x: &'static str,
}

#[derive(Serialize)]
struct Definitions {
    tb: &'static str,
    ta: &'static str,
    b: &'static str,
    r: &'static str,
    lower_bound: &'static str,
}

/// How random blocks are drawn, in the output.
const BLOCKS: &str = "each distribution (source, then target, independently) is drawn uniformly among all lists of P block sizes in [1, U] adding up to N (every such list equally likely: sizes drawn one by one with probability proportional to the number of ways the other blocks can hold the rest); the paper does not say how it drew its blocks";

/// `hetbal experiment genblock`.
pub fn experiment(args: &ExperimentArgs) -> Result<u8, CliError> {
    if args.runs == 0 {
        return Err(CliError::input("--runs must be at least 1"));
    }
    if let Some(dir) = &args.plot {
        if !dir.is_dir() {
            return Err(CliError::input(format!(
                "--plot {}: no such folder",
                dir.display()
            )));
        }
    }
    let started = Instant::now();
    let mut results: Vec<(Row, Summary)> = Vec::new();
    let mut notes: Vec<String> = Vec::new();
    let all = scenarios();
    for (si, scenario) in all.iter().enumerate() {
        if scenario.name == "V" {
            // Draw, keep by Delta.
            let (_, p, n, u) = scenario.points[0];
            let sampler = BlockSampler::new(p, n, u).expect("feasible");
            let mut rng = Rng::new(args.seed ^ ((si as u64 + 1) << 32));
            let mut kept: Vec<Vec<(Vec<u64>, Vec<u64>)>> = vec![Vec::new(); scenario.points.len()];
            let cap = 500usize.saturating_mul(args.runs);
            let mut draws = 0usize;
            while draws < cap && kept.iter().any(|k| k.len() < args.runs) {
                draws += 1;
                let s = sampler.draw(&mut rng);
                let t = sampler.draw(&mut rng);
                let g = GenBlockInstance::new(&s, &t, 0.0, 1.0).expect("drawn lists match");
                let delta = redistribution_graph(&g).degree as u64;
                if let Some(k) = scenario.points.iter().position(|pt| pt.0 == delta) {
                    if kept[k].len() < args.runs {
                        kept[k].push((s, t));
                    }
                }
            }
            let counts: Vec<String> = scenario
                .points
                .iter()
                .zip(&kept)
                .map(|(pt, k)| format!("Delta {}: {}", pt.0, k.len()))
                .collect();
            notes.push(format!(
                "scenario V: {draws} draws; instances kept per Delta: {} (Delta >= 13 is rare among uniformly drawn lists: the paper's Delta up to 15 must come from another way of drawing)",
                counts.join(", ")
            ));
            for (pt, pairs) in scenario.points.iter().zip(&kept) {
                if pairs.is_empty() {
                    continue;
                }
                let measures = measure_all(pairs, 0.0);
                results.extend(rows_of(scenario.name, pt.0 as f64, &measures));
            }
            continue;
        }
        for (pi, &(point, p, n, u)) in scenario.points.iter().enumerate() {
            let sampler = BlockSampler::new(p, n, u).ok_or_else(|| {
                CliError::input(format!(
                    "scenario {}: no block list of {p} sizes in [1, {u}] adds up to {n}",
                    scenario.name
                ))
            })?;
            let mut rng = Rng::new(args.seed ^ ((si as u64 + 1) << 32) ^ ((pi as u64 + 1) << 16));
            let pairs: Vec<(Vec<u64>, Vec<u64>)> = (0..args.runs)
                .map(|_| (sampler.draw(&mut rng), sampler.draw(&mut rng)))
                .collect();
            let measures = measure_all(&pairs, 0.0);
            results.extend(rows_of(scenario.name, point as f64, &measures));
            if scenario.name == "II" && n == 3200 {
                // The startup trade-off on the same instances.
                for &startup in &TRADEOFF_STARTUPS {
                    let measures = if startup == 0.0 {
                        measures.clone()
                    } else {
                        measure_all(&pairs, startup)
                    };
                    results.extend(rows_of("II-startup", startup, &measures));
                }
            }
        }
    }
    // Trade-off rows in startup order.
    results.sort_by(|a, b| {
        let key = |r: &Row| {
            (
                r.scenario == "II-startup",
                if r.scenario == "II-startup" {
                    r.point
                } else {
                    0.0
                },
            )
        };
        let (ka, kb) = (key(&a.0), key(&b.0));
        ka.0.cmp(&kb.0).then(ka.1.total_cmp(&kb.1))
    });
    let elapsed = started.elapsed().as_secs_f64();
    let rows: Vec<&Row> = results.iter().map(|r| &r.0).collect();
    let summaries: Vec<&Summary> = results.iter().map(|r| &r.1).collect();
    if args.json {
        let table = Table {
            experiment: "genblock",
            parameters: Parameters {
                runs: args.runs,
                seed: args.seed,
                unit: 1.0,
                startup: 0.0,
                blocks: BLOCKS,
                scenarios: all
                    .iter()
                    .map(|s| ScenarioInfo {
                        name: s.name,
                        description: s.what,
                        x: s.x_label,
                    })
                    .collect(),
                tradeoff: "scenario II-startup: the instances of scenario II at N = 3200, with startup Tu = point (tau = 1); best chooses its number of steps for each Tu",
                notes: &notes,
                definitions: definitions(),
                summary: summaries,
            },
            rows,
        };
        let text = serde_json::to_string_pretty(&table)
            .map_err(|e| CliError::input(format!("cannot write the table: {e}")))?;
        println!("{text}");
    } else {
        print!("{}", text_report(args, &all, &results, &notes, elapsed));
    }
    if let Some(dir) = &args.plot {
        for scenario in all
            .iter()
            .map(|s| (s.name, s.x_label))
            .chain([("II-startup", "startup Tu (N = 3200, P = 32, tau = 1)")])
        {
            let path = dir.join(format!("genblock-scenario-{}.svg", scenario.0));
            let svg = render_plot(scenario.0, scenario.1, &results).map_err(CliError::input)?;
            std::fs::write(&path, svg)
                .map_err(|e| CliError::input(format!("cannot write {}: {e}", path.display())))?;
            eprintln!("plot written to {}", path.display());
        }
    }
    Ok(0)
}

fn definitions() -> Definitions {
    Definitions {
        tb: "mean cost of the plain colouring: the paper's O(m) colouring in Delta steps, messages unsplit",
        ta: "mean cost of the method's schedule",
        b: "mean of the paper's B: Delta x Tu + the sum over the colours of the paper's schedule of the largest message with an end of degree Delta (the least cost the paper's method can reach with its colouring; best is not bound by it)",
        r: "(tb - ta) / tb, from the means (the summary also gives the mean of the per-instance ratios)",
        lower_bound: "mean of Delta x Tu + tau x (largest block): no schedule costs less",
    }
}

/// The text report.
fn text_report(
    args: &ExperimentArgs,
    all: &[Scenario],
    results: &[(Row, Summary)],
    notes: &[String],
    elapsed: f64,
) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "genblock: the scenarios of the GEN_BLOCK paper's section 5, {} random instances per point (the paper: at least 10,000), seed {}, tau = 1, Tu = 0 unless said",
        args.runs, args.seed
    );
    let _ = writeln!(out, "blocks: {BLOCKS}");
    let d = definitions();
    let _ = writeln!(
        out,
        "Tb: {}\nTa: {}\nB: {}\nR: {}\nLB: {}",
        d.tb, d.ta, d.b, d.r, d.lower_bound
    );
    for note in notes {
        let _ = writeln!(out, "{note}");
    }
    let scenario_names: Vec<(&str, &str)> = all
        .iter()
        .map(|s| (s.name, s.what))
        .chain([(
            "II-startup",
            "the instances of scenario II at N = 3200 with startup Tu = point: best chooses its number of steps",
        )])
        .collect();
    for (name, what) in scenario_names {
        let _ = writeln!(out, "\nscenario {name}: {what}");
        let _ = writeln!(
            out,
            "  {:>7}  {:<6} {:>10} {:>10} {:>10} {:>7} {:>10} {:>8} {:>7} {:>5}",
            "point", "method", "Tb", "Ta", "B", "R", "LB", "Ta/LB", "steps", "runs"
        );
        for (row, summary) in results.iter().filter(|r| r.0.scenario == name) {
            let _ = writeln!(
                out,
                "  {:>7} {:<6} {:>10.1} {:>10.1} {:>10.1} {:>6.1}% {:>10.1} {:>8.3} {:>7.1} {:>5}",
                format!("{}", row.point),
                row.method,
                row.tb,
                row.ta,
                row.b,
                100.0 * row.r,
                row.lower_bound,
                summary.cost_over_lower_bound,
                summary.steps,
                summary.instances
            );
        }
    }
    let pick = |scenario: &str, point: f64, method: &str| {
        results
            .iter()
            .find(|r| r.0.scenario == scenario && r.0.point == point && r.0.method == method)
    };
    if let (Some(paper), Some(best)) = (pick("II", 3200.0, "paper"), pick("II", 3200.0, "best")) {
        let mean_ratio = |scenario: &str, method: &str| {
            let chosen: Vec<f64> = results
                .iter()
                .filter(|r| r.0.scenario == scenario && r.0.method == method)
                .map(|r| r.1.cost_over_lower_bound)
                .collect();
            chosen.iter().sum::<f64>() / chosen.len().max(1) as f64
        };
        let _ = writeln!(
            out,
            "\nscenario II at N = 3200, Tu = 0: R = {:.1}% for the paper's method (mean of per-instance R {:.1}%; the paper reports about 52%); mean cost / LB: paper {:.3}, best {:.3}",
            100.0 * paper.0.r,
            100.0 * paper.1.mean_r,
            paper.1.cost_over_lower_bound,
            best.1.cost_over_lower_bound
        );
        let _ = writeln!(
            out,
            "scenario II, all N, Tu = 0: mean cost / LB: paper {:.3}, best {:.3}",
            mean_ratio("II", "paper"),
            mean_ratio("II", "best")
        );
    }
    let _ = writeln!(out, "computed in {elapsed:.1} s");
    out
}

/// A line of a chart: label, colour, points.
type Series = (&'static str, RGBColor, Vec<(f64, f64)>);

/// One chart per scenario: Tb, Ta of both methods, B and the lower bound against
/// the scenario's x values.
fn render_plot(
    scenario: &str,
    x_label: &str,
    results: &[(Row, Summary)],
) -> Result<String, String> {
    let font = gantt::bundled_font()?;
    let rows: Vec<&Row> = results
        .iter()
        .map(|r| &r.0)
        .filter(|r| r.scenario == scenario)
        .collect();
    let paper: Vec<&&Row> = rows.iter().filter(|r| r.method == "paper").collect();
    let best: Vec<&&Row> = rows.iter().filter(|r| r.method == "best").collect();
    let xs: Vec<f64> = paper.iter().map(|r| r.point).collect();
    let series: Vec<Series> = vec![
        (
            "Tb (plain colouring)",
            RGBColor(0x80, 0x80, 0x80),
            paper.iter().map(|r| (r.point, r.tb)).collect(),
        ),
        (
            "Ta paper",
            RGBColor(0xD9, 0x5F, 0x02),
            paper.iter().map(|r| (r.point, r.ta)).collect(),
        ),
        (
            "B (paper's bound)",
            RGBColor(0x75, 0x70, 0xB3),
            paper.iter().map(|r| (r.point, r.b)).collect(),
        ),
        (
            "Ta best",
            RGBColor(0x1F, 0x5F, 0xB4),
            best.iter().map(|r| (r.point, r.ta)).collect(),
        ),
        (
            "lower bound",
            RGBColor(0x2C, 0xA0, 0x2C),
            paper.iter().map(|r| (r.point, r.lower_bound)).collect(),
        ),
    ];
    let x_min = xs.iter().copied().fold(f64::INFINITY, f64::min);
    let x_max = xs.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    let (x_min, x_max) = if x_min.is_finite() && x_max > x_min {
        (x_min, x_max)
    } else {
        (0.0, 1.0)
    };
    let y_max = series
        .iter()
        .flat_map(|s| s.2.iter().map(|p| p.1))
        .fold(0.0f64, f64::max)
        .max(1.0)
        * 1.08;
    let r_paper = paper.iter().map(|r| r.r).sum::<f64>() / paper.len().max(1) as f64;
    let r_best = best.iter().map(|r| r.r).sum::<f64>() / best.len().max(1) as f64;
    let title = format!(
        "scenario {scenario}: mean cost (R: paper {:.0}%, best {:.0}% on average)",
        100.0 * r_paper,
        100.0 * r_best
    );
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, (900, 560)).into_drawing_area();
        root.fill(&WHITE).map_err(plot_error)?;
        let mut chart = ChartBuilder::on(&root)
            .caption(title, (font, 20.0))
            .margin(14)
            .x_label_area_size(44)
            .y_label_area_size(64)
            .build_cartesian_2d(x_min..x_max, 0.0..y_max)
            .map_err(plot_error)?;
        chart
            .configure_mesh()
            .x_desc(x_label)
            .y_desc("cost (s)")
            .x_label_style((font, 13.0))
            .y_label_style((font, 13.0))
            .axis_desc_style((font, 14.0))
            .light_line_style(RGBColor(0xEE, 0xEE, 0xEE))
            .draw()
            .map_err(plot_error)?;
        for (label, colour, points) in series {
            let style = ShapeStyle::from(&colour).stroke_width(2);
            chart
                .draw_series(LineSeries::new(points.clone(), style))
                .map_err(plot_error)?
                .label(label)
                .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 18, y)], style));
            chart
                .draw_series(points.iter().map(|&p| Circle::new(p, 3, colour.filled())))
                .map_err(plot_error)?;
        }
        chart
            .configure_series_labels()
            .label_font((font, 13.0))
            .background_style(WHITE.mix(0.85))
            .border_style(BLACK)
            .position(SeriesLabelPosition::UpperLeft)
            .draw()
            .map_err(plot_error)?;
        root.present().map_err(plot_error)?;
    }
    Ok(svg)
}

/// Plans every instance of a small experiment and checks the schedules: used by
/// the tests of this module.
#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sampler_draws_lists_in_range_with_the_right_sum() {
        for &(p, n, u) in &[
            (4, 100, 50),
            (32, 3200, 200),
            (32, 3200, 1600),
            (128, 3200, 50),
            (3, 3, 1),
        ] {
            let s = BlockSampler::new(p, n, u).unwrap();
            let mut rng = Rng::new(1);
            for _ in 0..200 {
                let blocks = s.draw(&mut rng);
                assert_eq!(blocks.len(), p);
                assert_eq!(blocks.iter().sum::<u64>(), n as u64);
                assert!(
                    blocks.iter().all(|&b| b >= 1 && b <= u as u64),
                    "{blocks:?}"
                );
            }
        }
        assert!(BlockSampler::new(128, 100, 50).is_none());
        assert!(BlockSampler::new(2, 200, 50).is_none());
    }

    /// Uniform among lists: with p = 2, n = 6, u = 4 the lists are (2,4), (3,3),
    /// (4,2), each a third of the draws.
    #[test]
    fn sampler_is_uniform_over_lists() {
        let s = BlockSampler::new(2, 6, 4).unwrap();
        let mut rng = Rng::new(9);
        let mut count = [0usize; 5];
        let draws = 30_000;
        for _ in 0..draws {
            count[s.draw(&mut rng)[0] as usize] += 1;
        }
        assert_eq!(count[0] + count[1], 0);
        for &c in &count[2..] {
            assert!(
                (c as f64 / draws as f64 - 1.0 / 3.0).abs() < 0.015,
                "{count:?}"
            );
        }
    }

    #[test]
    fn gantt_has_a_bar_per_piece_and_lane() {
        let g = GenBlockInstance::new(&[7, 16, 11, 10, 7, 49], &[15, 16, 10, 16, 15, 28], 2.0, 1.0)
            .unwrap();
        let planned = plan(&g, Method::Paper);
        let svg = render_gantt_svg("chart", &g, &planned.schedule).unwrap();
        assert!(svg.starts_with("<svg") && svg.contains("S5") && svg.contains("T5"));
        let pieces: usize = planned.schedule.steps.iter().map(Vec::len).sum();
        let even = format!("#{:02X}{:02X}{:02X}", EVEN.0, EVEN.1, EVEN.2);
        let odd = format!("#{:02X}{:02X}{:02X}", ODD.0, ODD.1, ODD.2);
        let bars = svg.matches(&even).count() + svg.matches(&odd).count();
        // Two bars per piece (sender, receiver), plus the two legend swatches.
        assert_eq!(bars, 2 * pieces + 2);
    }
}
