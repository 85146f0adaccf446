//! Gantt charts of schedules, drawn as SVG with plotters.
//!
//! One lane per processor, top to bottom `P0..Pn-1`. Each lane has two thin rows:
//! the upper row shows what the processor sends, the lower row what it receives, so
//! that the use of its one port in each direction can be read off at a glance.
//! Send bars are coloured by direction (to the successor `(i+1) mod n` or to the
//! predecessor), receive bars by a lighter shade of the sender's direction colour.
//!
//! Text is laid out with the DejaVu Sans font bundled in `assets/` (registered with
//! plotters once, on first use), so no system font is needed to render a chart.
//! Rendering is linear in the number of transfers.

use std::path::Path;
use std::sync::OnceLock;

use hetbal::{Schedule, Transfer};
use plotters::coord::ranged1d::{DefaultFormatting, KeyPointHint};
use plotters::coord::types::RangedCoordf64;
use plotters::prelude::*;
use plotters::style::register_font;
use plotters::style::text_anchor::{HPos, Pos, VPos};

/// The bundled font (DejaVu Sans, Bitstream Vera license: see
/// `assets/DejaVuSans-LICENSE.txt`).
const FONT_BYTES: &[u8] = include_bytes!("../assets/DejaVuSans.ttf");

/// The family under which the bundled font is registered, and that the SVG names.
const FONT_FAMILY: &str = "sans-serif";

/// Width of every chart, in pixels.
const CHART_WIDTH: u32 = 1000;

/// Smallest total height of a chart, in pixels.
const MIN_CHART_HEIGHT: u32 = 240;

/// Height of the strip under the chart that holds the legend, in pixels.
const LEGEND_HEIGHT: u32 = 30;

/// Height of the area under the lanes with the time ticks and axis name, in pixels.
const X_LABEL_AREA: u32 = 44;

/// Room taken by the title (caption) above the lanes, in pixels.
const CAPTION_ROOM: u32 = 36;

/// Margin above the title and right of the lanes, in pixels.
const MARGIN: u32 = 10;

/// Vertical extent of the send row inside a lane, as fractions of the lane height
/// measured from the lane's bottom edge (the lane spans `[0, 1]`).
const SEND_ROW: (f64, f64) = (0.53, 0.92);

/// Vertical extent of the receive row inside a lane (see [`SEND_ROW`]).
const RECEIVE_ROW: (f64, f64) = (0.08, 0.47);

/// Send bars towards the successor `(i+1) mod n` (blue).
const SEND_SUCCESSOR: RGBColor = RGBColor(0x1F, 0x5F, 0xB4);
/// Send bars towards the predecessor `(i-1) mod n` (orange).
const SEND_PREDECESSOR: RGBColor = RGBColor(0xD9, 0x5F, 0x02);
/// Receive bars of items sent towards the successor (light blue).
const RECEIVE_SUCCESSOR: RGBColor = lighten(SEND_SUCCESSOR);
/// Receive bars of items sent towards the predecessor (light orange).
const RECEIVE_PREDECESSOR: RGBColor = lighten(SEND_PREDECESSOR);
/// Background of every other lane.
const STRIPE: RGBColor = RGBColor(0xF0, 0xF0, 0xF0);
/// Text drawn on receive bars.
const DARK_TEXT: RGBColor = RGBColor(0x20, 0x20, 0x20);

/// Mixes `color` with white (55 % white): the shade of the receive bars.
const fn lighten(color: RGBColor) -> RGBColor {
    const fn mix(channel: u8) -> u8 {
        (channel as u16 + (255 - channel as u16) * 11 / 20) as u8
    }
    RGBColor(mix(color.0), mix(color.1), mix(color.2))
}

/// Registers the bundled font with plotters, once per process.
///
/// Every later call returns the outcome of the first one.
fn ensure_font() -> Result<(), String> {
    static REGISTERED: OnceLock<Result<(), String>> = OnceLock::new();
    REGISTERED
        .get_or_init(|| {
            register_font(FONT_FAMILY, FontStyle::Normal, FONT_BYTES)
                .map_err(|_| "the bundled font DejaVuSans.ttf cannot be read".to_string())
        })
        .clone()
}

/// Registers the bundled font (once per process) and returns the family to draw
/// text with: for other charts than the ring's (the scatter's).
pub(crate) fn bundled_font() -> Result<&'static str, String> {
    ensure_font()?;
    Ok(FONT_FAMILY)
}

/// Turns a plotters error into the message returned to the caller.
pub(crate) fn plot_error(error: impl std::fmt::Display) -> String {
    format!("cannot draw the Gantt chart: {error}")
}

/// Direction of a transfer on the ring.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Direction {
    /// From `i` to `(i+1) mod n`.
    Successor,
    /// From `i` to any other processor (on a ring: `(i-1) mod n`).
    Predecessor,
}

impl Direction {
    /// Direction of `transfer` on a ring of `n` processors.
    fn of(transfer: &Transfer, n: usize) -> Direction {
        if transfer.to == (transfer.from + 1) % n {
            Direction::Successor
        } else {
            Direction::Predecessor
        }
    }

    /// Fill colour of the send bars in this direction.
    fn send_color(self) -> RGBColor {
        match self {
            Direction::Successor => SEND_SUCCESSOR,
            Direction::Predecessor => SEND_PREDECESSOR,
        }
    }

    /// Fill colour of the receive bars of items sent in this direction.
    fn receive_color(self) -> RGBColor {
        match self {
            Direction::Successor => RECEIVE_SUCCESSOR,
            Direction::Predecessor => RECEIVE_PREDECESSOR,
        }
    }
}

/// The vertical axis: `n` lanes, each a unit interval, processor `i` spanning
/// `[n-1-i, n-i]` so that `P0` is on top. Its key points (where the lane labels go)
/// are the lane centres, all of them whatever the space: the layout makes them fit.
struct LaneAxis {
    /// The continuous range `[0, n]` that lanes are mapped with.
    range: RangedCoordf64,
    /// Number of lanes.
    lanes: usize,
}

impl LaneAxis {
    /// The axis of `lanes` lanes.
    fn new(lanes: usize) -> LaneAxis {
        LaneAxis {
            range: (0.0..lanes as f64).into(),
            lanes,
        }
    }

    /// Index of the lane whose centre is nearest to `y`, if `y` is inside the axis.
    fn lane_at(&self, y: f64) -> Option<usize> {
        let lane = (self.lanes as f64 - 0.5 - y).round();
        (lane >= 0.0 && lane < self.lanes as f64).then_some(lane as usize)
    }

    /// Bottom edge of the lane of processor `lane`; its top edge is one above.
    fn bottom_of(&self, lane: usize) -> f64 {
        (self.lanes - 1 - lane) as f64
    }
}

impl Ranged for LaneAxis {
    type FormatOption = DefaultFormatting;
    type ValueType = f64;

    fn map(&self, value: &f64, limit: (i32, i32)) -> i32 {
        self.range.map(value, limit)
    }

    fn key_points<Hint: KeyPointHint>(&self, _hint: Hint) -> Vec<f64> {
        (0..self.lanes)
            .map(|lane| self.bottom_of(lane) + 0.5)
            .collect()
    }

    fn range(&self) -> std::ops::Range<f64> {
        self.range.range()
    }
}

/// The time axis: a linear range of seconds whose ticks fall on round multiples of
/// 1, 2 or 5 times a power of ten, all printed with the same number of decimals.
struct TimeAxis {
    /// The time range drawn.
    range: RangedCoordf64,
}

impl TimeAxis {
    /// Number of time ticks aimed at.
    const TICKS: usize = 10;

    /// The axis of times `[start, end]` (`start < end`, both finite).
    fn new(start: f64, end: f64) -> TimeAxis {
        TimeAxis {
            range: (start..end).into(),
        }
    }

    /// Length of the axis, in seconds.
    fn span(&self) -> f64 {
        let range = self.range.range();
        range.end - range.start
    }

    /// Number of decimals of the tick labels: enough for the tick step.
    fn decimals(&self) -> usize {
        let step = nice_step(self.span(), Self::TICKS);
        (-step.log10().floor()).clamp(0.0, 12.0) as usize
    }

    /// The multiples of `step` inside the axis (none if `step` is not positive).
    fn multiples_of(&self, step: f64) -> Vec<f64> {
        let range = self.range.range();
        if !(step > 0.0 && step.is_finite()) {
            return Vec::new();
        }
        let first = (range.start / step).ceil();
        let count = ((range.end / step).floor() - first + 1.0).clamp(0.0, 1000.0) as usize;
        (0..count).map(|k| (first + k as f64) * step).collect()
    }
}

/// The smallest step of the form {1, 2, 5} x 10^k that cuts `span` in at most
/// `parts` parts (`span` and `parts` positive).
fn nice_step(span: f64, parts: usize) -> f64 {
    let raw = span / parts.max(1) as f64;
    let magnitude = 10f64.powf(raw.log10().floor());
    [1.0, 2.0, 5.0]
        .into_iter()
        .map(|factor| factor * magnitude)
        .find(|&step| step >= raw * (1.0 - 1e-9))
        .unwrap_or(10.0 * magnitude)
}

impl Ranged for TimeAxis {
    type FormatOption = DefaultFormatting;
    type ValueType = f64;

    fn map(&self, value: &f64, limit: (i32, i32)) -> i32 {
        self.range.map(value, limit)
    }

    fn key_points<Hint: KeyPointHint>(&self, hint: Hint) -> Vec<f64> {
        let bold_step = nice_step(self.span(), hint.bold_points().min(Self::TICKS));
        if !hint.weight().allow_light_points() {
            return self.multiples_of(bold_step);
        }
        // Light grid lines: halves of steps 1 and 2, fifths of step 5.
        let mantissa = (bold_step / 10f64.powf(bold_step.log10().floor())).round();
        let divisor = if mantissa == 5.0 { 5.0 } else { 2.0 };
        let light = self.multiples_of(bold_step / divisor);
        if light.len() <= hint.max_num_points() {
            light
        } else {
            Vec::new()
        }
    }

    fn range(&self) -> std::ops::Range<f64> {
        self.range.range()
    }
}

/// Sizes of a chart of `n` lanes: they shrink as `n` grows so that 64 lanes fit.
#[derive(Clone, Copy, Debug)]
struct Layout {
    /// Total height of the SVG, in pixels.
    height: u32,
    /// Font size of the title (plotters units: the SVG font size is this / 1.24).
    title_font: f64,
    /// Font size of the lane labels.
    label_font: f64,
    /// Font size of the time ticks.
    tick_font: f64,
    /// Font size of the axis name and the legend.
    legend_font: f64,
}

impl Layout {
    /// Layout for `n >= 1` lanes: 28 px per lane up to 16 lanes, 14 px from 64 on,
    /// linear in between; never less than [`MIN_CHART_HEIGHT`] in all.
    fn for_lanes(n: usize) -> Layout {
        let lane_px = if n <= 16 {
            28.0
        } else if n >= 64 {
            14.0
        } else {
            28.0 - (n - 16) as f64 * 14.0 / 48.0
        };
        let lanes_px = (lane_px * n as f64).round() as u32;
        let height =
            (MARGIN + CAPTION_ROOM + lanes_px + X_LABEL_AREA + LEGEND_HEIGHT).max(MIN_CHART_HEIGHT);
        Layout {
            height,
            title_font: 22.0,
            label_font: (lane_px * 0.95).min(16.0),
            tick_font: 14.0,
            legend_font: 15.0,
        }
    }
}

/// Checks that every transfer names processors of `0..n` and finite times with
/// `start <= end`, and returns the time range to draw: from `min(0, first start)`
/// to the makespan, or `[0, 1]` for an empty schedule.
fn time_range(n: usize, schedule: &Schedule) -> Result<(f64, f64), String> {
    let mut first = 0.0_f64;
    let mut last = 0.0_f64;
    for (index, transfer) in schedule.transfers.iter().enumerate() {
        if transfer.from >= n || transfer.to >= n {
            return Err(format!(
                "cannot draw transfer {index} ({} -> {}): only {n} processors are named",
                transfer.from, transfer.to
            ));
        }
        if !transfer.start.is_finite() || !transfer.end.is_finite() || transfer.end < transfer.start
        {
            return Err(format!(
                "cannot draw transfer {index}: its times [{}, {}] are not a finite interval",
                transfer.start, transfer.end
            ));
        }
        first = first.min(transfer.start);
        last = last.max(transfer.end);
    }
    if last <= first {
        last = first + 1.0;
    }
    Ok((first, last))
}

/// Renders `schedule` as a Gantt chart and returns the SVG document.
///
/// `names` holds one lane label per processor, in index order; its length is the
/// number of processors `n`, and every transfer must name processors of `0..n`.
/// The chart has one lane per processor (`P0` at the top), the upper row of a lane
/// showing its sends and the lower row its receives, a time axis in seconds, the
/// `title` above and a legend below. An empty schedule gives empty lanes over the
/// time range `[0, 1]`.
///
/// Runs in O(n + m) for m transfers. Never panics: bad input and plotting failures
/// are returned as human-readable messages.
pub fn render_gantt_svg(
    title: &str,
    names: &[String],
    schedule: &Schedule,
) -> Result<String, String> {
    let n = names.len();
    if n == 0 {
        return Err("cannot draw a Gantt chart without processors".to_string());
    }
    let (t_min, t_max) = time_range(n, schedule)?;
    ensure_font()?;

    let layout = Layout::for_lanes(n);
    let mut svg = String::new();
    {
        let root =
            SVGBackend::with_string(&mut svg, (CHART_WIDTH, layout.height)).into_drawing_area();
        root.fill(&WHITE).map_err(plot_error)?;
        let (chart_area, legend_area) = root.split_vertically(layout.height - LEGEND_HEIGHT);

        let label_style = TextStyle::from((FONT_FAMILY, layout.label_font).into_font());
        let mut name_width = 0;
        for name in names {
            let (width, _) = root
                .estimate_text_size(name, &label_style)
                .map_err(plot_error)?;
            name_width = name_width.max(width);
        }
        let y_label_area = (name_width + 16).clamp(40, CHART_WIDTH / 3);

        let lanes = LaneAxis::new(n);
        let mut chart = ChartBuilder::on(&chart_area)
            .caption(title, (FONT_FAMILY, layout.title_font))
            .margin_top(MARGIN)
            .margin_right(2 * MARGIN)
            .margin_left(MARGIN / 2)
            .x_label_area_size(X_LABEL_AREA)
            .y_label_area_size(y_label_area)
            .build_cartesian_2d(TimeAxis::new(t_min, t_max), LaneAxis::new(n))
            .map_err(plot_error)?;

        // Every other lane on a light background, drawn first so that the grid and
        // the bars lie above it.
        chart
            .draw_series((0..n).step_by(2).map(|lane| {
                let bottom = lanes.bottom_of(lane);
                Rectangle::new([(t_min, bottom), (t_max, bottom + 1.0)], STRIPE.filled())
            }))
            .map_err(plot_error)?;

        let decimals = TimeAxis::new(t_min, t_max).decimals();
        let format_time = |t: &f64| format!("{t:.decimals$}");
        let format_lane = |y: &f64| match lanes.lane_at(*y) {
            Some(lane) => names[lane].clone(),
            None => String::new(),
        };
        chart
            .configure_mesh()
            .disable_y_mesh()
            .x_labels(TimeAxis::TICKS)
            .x_label_formatter(&format_time)
            .y_label_formatter(&format_lane)
            .x_desc("time (s)")
            .x_label_style((FONT_FAMILY, layout.tick_font))
            .y_label_style((FONT_FAMILY, layout.label_font))
            .axis_desc_style((FONT_FAMILY, layout.legend_font))
            .light_line_style(RGBColor(0xE4, 0xE4, 0xE4))
            .bold_line_style(RGBColor(0xC8, 0xC8, 0xC8))
            .draw()
            .map_err(plot_error)?;

        // Bars narrower than a pixel are widened to one pixel so that they show.
        let (plot_width, plot_height) = chart.plotting_area().dim_in_pixel();
        let seconds_per_pixel = (t_max - t_min) / f64::from(plot_width.max(1));
        let bar_interval = |transfer: &Transfer| {
            let start = transfer.start.min(t_max - seconds_per_pixel);
            (start, transfer.end.max(start + seconds_per_pixel))
        };
        let row = |lane: usize, (low, high): (f64, f64)| {
            let bottom = lanes.bottom_of(lane);
            (bottom + low, bottom + high)
        };
        let bar = |lane: usize, rows: (f64, f64), transfer: &Transfer, color: RGBColor| {
            let (start, end) = bar_interval(transfer);
            let (low, high) = row(lane, rows);
            Rectangle::new([(start, high), (end, low)], color.filled())
        };
        chart
            .draw_series(schedule.transfers.iter().map(|transfer| {
                let color = Direction::of(transfer, n).send_color();
                bar(transfer.from, SEND_ROW, transfer, color)
            }))
            .map_err(plot_error)?;
        chart
            .draw_series(schedule.transfers.iter().map(|transfer| {
                let color = Direction::of(transfer, n).receive_color();
                bar(transfer.to, RECEIVE_ROW, transfer, color)
            }))
            .map_err(plot_error)?;

        // Item counts inside the bars that are wide and tall enough for them. The
        // font has digits of one width, so one measure serves every count.
        let row_px = f64::from(plot_height) / n as f64 * (SEND_ROW.1 - SEND_ROW.0);
        let count_font = (row_px * 1.1).min(13.0);
        if row_px >= 8.5 {
            let count_style = TextStyle::from((FONT_FAMILY, count_font).into_font())
                .pos(Pos::new(HPos::Center, VPos::Center));
            let (ten_digits, _) = root
                .estimate_text_size("0000000000", &count_style)
                .map_err(plot_error)?;
            let digit_px = f64::from(ten_digits) / 10.0;
            let fits = |transfer: &Transfer, label: &str| {
                let bar_px = (transfer.end - transfer.start) / seconds_per_pixel;
                bar_px >= digit_px * label.len() as f64 + 6.0
            };
            let counts =
                |lane: fn(&Transfer) -> usize, rows: (f64, f64), color: &'static RGBColor| {
                    let count_style = count_style.color(color);
                    schedule.transfers.iter().filter_map(move |transfer| {
                        let label = transfer.items.to_string();
                        if !fits(transfer, &label) {
                            return None;
                        }
                        let (low, high) = row(lane(transfer), rows);
                        let centre = ((transfer.start + transfer.end) / 2.0, (low + high) / 2.0);
                        Some(Text::new(label, centre, count_style.clone()))
                    })
                };
            chart
                .draw_series(counts(|t| t.from, SEND_ROW, &WHITE))
                .map_err(plot_error)?;
            chart
                .draw_series(counts(|t| t.to, RECEIVE_ROW, &DARK_TEXT))
                .map_err(plot_error)?;
        }

        draw_legend(&legend_area, layout.legend_font)?;
        root.present().map_err(plot_error)?;
    }
    Ok(svg)
}

/// Draws the legend, centred in `area`: a swatch and a text per kind of bar.
fn draw_legend<DB: DrawingBackend>(
    area: &DrawingArea<DB, plotters::coord::Shift>,
    font_size: f64,
) -> Result<(), String> {
    const SWATCH_WIDTH: i32 = 16;
    const SWATCH_HEIGHT: i32 = 10;
    const SWATCH_GAP: i32 = 6;
    const ENTRY_GAP: i32 = 28;
    let entries: [(&[RGBColor], &str); 3] = [
        (&[SEND_SUCCESSOR], "send to successor (upper row)"),
        (&[SEND_PREDECESSOR], "send to predecessor (upper row)"),
        (
            &[RECEIVE_SUCCESSOR, RECEIVE_PREDECESSOR],
            "receive, shade of the sender's direction (lower row)",
        ),
    ];
    let style = TextStyle::from((FONT_FAMILY, font_size).into_font())
        .pos(Pos::new(HPos::Left, VPos::Center));

    let mut widths = Vec::with_capacity(entries.len());
    for (swatches, text) in entries {
        let (text_width, _) = area.estimate_text_size(text, &style).map_err(plot_error)?;
        let swatch_width = SWATCH_WIDTH * swatches.len() as i32;
        widths.push(swatch_width + SWATCH_GAP + text_width as i32);
    }
    let total: i32 = widths.iter().sum::<i32>() + ENTRY_GAP * (entries.len() as i32 - 1);
    let (area_width, area_height) = area.dim_in_pixel();
    let centre_y = area_height as i32 / 2;
    let mut x = ((area_width as i32 - total) / 2).max(0);
    for ((swatches, text), width) in entries.iter().zip(widths) {
        let mut swatch_x = x;
        for color in swatches.iter() {
            area.draw(&Rectangle::new(
                [
                    (swatch_x, centre_y - SWATCH_HEIGHT / 2),
                    (swatch_x + SWATCH_WIDTH, centre_y + SWATCH_HEIGHT / 2),
                ],
                color.filled(),
            ))
            .map_err(plot_error)?;
            swatch_x += SWATCH_WIDTH;
        }
        area.draw(&Text::new(
            *text,
            (swatch_x + SWATCH_GAP, centre_y),
            style.clone(),
        ))
        .map_err(plot_error)?;
        x += width + ENTRY_GAP;
    }
    Ok(())
}

/// Renders `schedule` as a Gantt chart (see [`render_gantt_svg`]) and writes the SVG
/// document to `path`.
///
/// `names` holds one lane label per processor, in index order.
pub fn write_gantt(
    path: &Path,
    title: &str,
    names: &[String],
    schedule: &Schedule,
) -> Result<(), String> {
    let svg = render_gantt_svg(title, names, schedule)?;
    std::fs::write(path, svg).map_err(|error| format!("cannot write {}: {error}", path.display()))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Lane labels `P0..Pn-1`.
    fn names(n: usize) -> Vec<String> {
        (0..n).map(|i| format!("P{i}")).collect()
    }

    /// A schedule on `n` processors in which every processor sends to its successor,
    /// then every other one also to its predecessor (a mix of both directions, wide
    /// and narrow bars).
    fn ring_schedule(n: usize) -> Schedule {
        let mut transfers = Vec::new();
        for i in 0..n {
            let items = 1 + (i as u64 * 7) % 40;
            transfers.push(Transfer {
                from: i,
                to: (i + 1) % n,
                items,
                start: 0.0,
                end: items as f64 * 0.1,
            });
            if i % 2 == 1 {
                transfers.push(Transfer {
                    from: i,
                    to: (i + n - 1) % n,
                    items: 3,
                    start: 5.0,
                    end: 5.3,
                });
            }
        }
        Schedule::new(transfers)
    }

    /// The colour as the SVG writes it in a `fill` attribute.
    fn svg_fill(color: RGBColor) -> String {
        format!("fill=\"#{:02X}{:02X}{:02X}\"", color.0, color.1, color.2)
    }

    /// Number of `<rect>` elements filled with `color`.
    fn rects_filled_with(svg: &str, color: RGBColor) -> usize {
        let fill = svg_fill(color);
        svg.lines()
            .filter(|line| line.starts_with("<rect") && line.contains(&fill))
            .count()
    }

    /// The `y` attribute of the `<text>` element whose whole content is `content`.
    fn text_y(svg: &str, content: &str) -> Option<i64> {
        let end = svg.find(&format!(">\n{content}\n</text>"))?;
        let start = svg[..end].rfind("<text")?;
        let tag = &svg[start..end];
        let value = tag.split(" y=\"").nth(1)?.split('"').next()?;
        value.parse().ok()
    }

    /// Vertical centres of the `<rect>` elements filled with `color`, in drawing order.
    fn rect_centres(svg: &str, color: RGBColor) -> Vec<f64> {
        let fill = svg_fill(color);
        let attribute = |line: &str, name: &str| -> f64 {
            let value = line.split(&format!(" {name}=\"")).nth(1).expect(name);
            value.split('"').next().expect(name).parse().expect(name)
        };
        svg.lines()
            .filter(|line| line.starts_with("<rect") && line.contains(&fill))
            .map(|line| attribute(line, "y") + attribute(line, "height") / 2.0)
            .collect()
    }

    /// True if the SVG has a `<text>` element whose whole content is `content`.
    fn has_text(svg: &str, content: &str) -> bool {
        svg.contains(&format!(">\n{content}\n</text>"))
    }

    /// Renders and checks what every chart must show: the title, every lane label
    /// in order from top to bottom, and one bar per transfer in each of the send and
    /// receive rows, plus one legend swatch per colour.
    fn check_chart(n: usize, schedule: &Schedule) -> String {
        let title = format!("Gantt test on {n} processors");
        let svg = render_gantt_svg(&title, &names(n), schedule).expect("chart renders");
        assert!(svg.starts_with("<svg"), "not an SVG document");
        assert!(
            svg.trim_end().ends_with("</svg>"),
            "SVG document not closed"
        );
        assert!(has_text(&svg, &title), "title missing");
        let mut previous_y = None;
        for name in names(n) {
            let y = text_y(&svg, &name).unwrap_or_else(|| panic!("label {name} missing"));
            if let Some(previous) = previous_y {
                assert!(y > previous, "label {name} is not below the previous one");
            }
            previous_y = Some(y);
        }
        let successor = schedule
            .transfers
            .iter()
            .filter(|t| t.to == (t.from + 1) % n)
            .count();
        let predecessor = schedule.transfers.len() - successor;
        assert_eq!(rects_filled_with(&svg, SEND_SUCCESSOR), successor + 1);
        assert_eq!(rects_filled_with(&svg, SEND_PREDECESSOR), predecessor + 1);
        assert_eq!(rects_filled_with(&svg, RECEIVE_SUCCESSOR), successor + 1);
        assert_eq!(
            rects_filled_with(&svg, RECEIVE_PREDECESSOR),
            predecessor + 1
        );
        svg
    }

    #[test]
    fn renders_two_processors() {
        check_chart(2, &ring_schedule(2));
    }

    #[test]
    fn renders_eight_processors() {
        let schedule = ring_schedule(8);
        assert!(schedule.transfers.iter().any(|t| t.to == (t.from + 7) % 8));
        check_chart(8, &schedule);
    }

    #[test]
    fn renders_sixty_four_processors() {
        check_chart(64, &ring_schedule(64));
    }

    #[test]
    fn renders_an_empty_schedule() {
        let svg = check_chart(4, &Schedule::default());
        assert!(
            has_text(&svg, "1.0"),
            "empty schedule not drawn over [0, 1]"
        );
    }

    #[test]
    fn renders_many_transfers() {
        let n = 16;
        let transfers = (0..20_000)
            .map(|k| {
                let start = k as f64 * 0.001;
                Transfer {
                    from: k % n,
                    to: (k + 1) % n,
                    items: 1,
                    start,
                    end: start + 0.001,
                }
            })
            .collect();
        check_chart(n, &Schedule::new(transfers));
    }

    #[test]
    fn bars_lie_in_the_lanes_of_sender_and_receiver() {
        let n = 8;
        let schedule = Schedule::new(vec![
            Transfer {
                from: 2,
                to: 3,
                items: 4,
                start: 1.0,
                end: 2.0,
            },
            Transfer {
                from: 6,
                to: 5,
                items: 4,
                start: 1.0,
                end: 2.0,
            },
        ]);
        let svg = check_chart(n, &schedule);
        let lane_height = (text_y(&svg, "P1").unwrap() - text_y(&svg, "P0").unwrap()) as f64;
        // Send bars just above the centre of the sender's lane, receive bars just
        // below the centre of the receiver's lane; the legend swatches come last.
        let cases = [
            (SEND_SUCCESSOR, "P2", -1.0),
            (RECEIVE_SUCCESSOR, "P3", 1.0),
            (SEND_PREDECESSOR, "P6", -1.0),
            (RECEIVE_PREDECESSOR, "P5", 1.0),
        ];
        for (color, lane, side) in cases {
            let bar = rect_centres(&svg, color)[0];
            let lane_centre = text_y(&svg, lane).unwrap() as f64;
            let offset = (bar - lane_centre) * side;
            assert!(
                offset > 0.0 && offset < lane_height / 2.0,
                "bar of colour {color:?} at y = {bar}, lane {lane} centred at {lane_centre}"
            );
        }
    }

    #[test]
    fn writes_item_counts_in_wide_bars_only() {
        let schedule = Schedule::new(vec![
            Transfer {
                from: 0,
                to: 1,
                items: 12345,
                start: 0.0,
                end: 10.0,
            },
            Transfer {
                from: 1,
                to: 0,
                items: 98765,
                start: 10.0,
                end: 10.001,
            },
        ]);
        let svg = check_chart(2, &schedule);
        // Once in the send bar, once in the receive bar.
        assert_eq!(svg.matches(">\n12345\n</text>").count(), 2);
        assert!(!svg.contains("98765"), "a too narrow bar got a label");
    }

    #[test]
    fn rejects_bad_input() {
        let out_of_ring = Schedule::new(vec![Transfer {
            from: 0,
            to: 3,
            items: 1,
            start: 0.0,
            end: 1.0,
        }]);
        let error = render_gantt_svg("t", &names(3), &out_of_ring).unwrap_err();
        assert!(error.contains("only 3 processors"), "{error}");

        let not_a_time = Schedule::new(vec![Transfer {
            from: 0,
            to: 1,
            items: 1,
            start: f64::NAN,
            end: 1.0,
        }]);
        let error = render_gantt_svg("t", &names(3), &not_a_time).unwrap_err();
        assert!(error.contains("not a finite interval"), "{error}");

        let error = render_gantt_svg("t", &[], &Schedule::default()).unwrap_err();
        assert!(error.contains("without processors"), "{error}");
    }

    #[test]
    fn odd_titles_names_and_times_do_not_panic() {
        let odd_names = vec!["<a & \"b\">".to_string(), String::new(), "é".repeat(200)];
        for (start, end) in [(0.0, 0.0), (1e-300, 2e-300), (0.0, 1e300), (-1e308, 1e308)] {
            let schedule = Schedule::new(vec![Transfer {
                from: 0,
                to: 1,
                items: u64::MAX,
                start,
                end,
            }]);
            for title in ["", "<&>"] {
                let svg = render_gantt_svg(title, &odd_names, &schedule).expect("renders");
                assert!(svg.starts_with("<svg") && !svg.contains("<&>"));
            }
        }
    }

    #[test]
    fn write_gantt_writes_the_file_or_says_why_not() {
        let dir = std::env::temp_dir().join(format!("hetbal-gantt-test-{}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("temporary directory");
        let path = dir.join("chart.svg");
        write_gantt(&path, "written", &names(3), &ring_schedule(3)).expect("written");
        let written = std::fs::read_to_string(&path).expect("readable");
        assert!(written.starts_with("<svg") && has_text(&written, "written"));

        let missing = dir.join("no-such-dir").join("chart.svg");
        let error = write_gantt(&missing, "t", &names(3), &ring_schedule(3)).unwrap_err();
        assert!(error.starts_with("cannot write "), "{error}");
        assert!(error.contains("chart.svg"), "{error}");
        let _ = std::fs::remove_dir_all(&dir);
    }
}
