//! Gantt charts: lanes top to bottom, bars on them, grey spans across every
//! lane, a legend, drawn as SVG by [`render_svg`]. The model ([`Chart`]) is plain
//! data: build one by hand or with the crate's builders for hetbal's plans.

use plotters::coord::ranged1d::{DefaultFormatting, KeyPointHint};
use plotters::coord::types::RangedCoordf64;
use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

use crate::font::{bundled_font, FONT};
use crate::{backend_error, DrawError};

/// Width of every chart, in pixels.
const CHART_WIDTH: u32 = 1000;
/// Height of the strip under the chart that holds the legend, in pixels.
const LEGEND_HEIGHT: u32 = 30;
/// Height of the area under the lanes with the time ticks and axis name, in pixels.
const X_LABEL_AREA: u32 = 44;
/// Margin above the title and right of the lanes, in pixels.
const MARGIN: u32 = 10;
/// Background of every other lane.
const STRIPE: RGBColor = RGBColor(0xF0, 0xF0, 0xF0);
/// The grey spans across every lane (drawn half transparent).
pub const SPAN: RGBColor = RGBColor(0xD0, 0xD0, 0xD0);
/// Text on light bars and lane notes.
const DARK_TEXT: RGBColor = RGBColor(0x20, 0x20, 0x20);

/// Which part of its lane a bar fills: fractions of the lane's height from its
/// bottom edge, `(low, high)`.
pub type Rows = (f64, f64);
/// Most of the lane.
pub const WHOLE: Rows = (0.14, 0.86);
/// The lane's upper half (the ring's sends).
pub const UPPER: Rows = (0.53, 0.92);
/// The lane's lower half (the ring's receives).
pub const LOWER: Rows = (0.08, 0.47);

/// A bar: `lane`'s activity over `span`, with the texts it can carry.
#[derive(Clone, Debug, PartialEq)]
pub struct Bar {
    /// The lane (0 is the top one).
    pub lane: usize,
    /// The part of the lane it fills.
    pub rows: Rows,
    /// Its start and end, in seconds.
    pub span: (f64, f64),
    /// Its colour.
    pub colour: RGBColor,
    /// The texts it can carry, longest first: the first that fits is written
    /// inside, white on dark bars and dark on light ones.
    pub labels: Vec<String>,
}

/// What a Gantt chart shows.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Chart {
    /// The title, above the lanes.
    pub title: String,
    /// The lanes' names, top to bottom.
    pub lanes: Vec<String>,
    /// A note per lane, written after its last bar (one per lane).
    pub notes: Vec<Option<String>>,
    /// The bars.
    pub bars: Vec<Bar>,
    /// Grey spans `(start, end)` across every lane, under the bars.
    pub spans: Vec<(f64, f64)>,
    /// Legend entries: their swatches (none for a plain note) and text.
    pub legend: Vec<(Vec<RGBColor>, String)>,
    /// The time axis's label: "time (s)" by default, "time" for a model whose
    /// costs have no unit of their own (ring plans: the unit of the costs).
    pub time_label: String,
}

impl Chart {
    /// A chart with lanes of these names and nothing else yet.
    pub fn new(title: String, names: impl IntoIterator<Item = String>) -> Chart {
        let lanes: Vec<String> = names.into_iter().collect();
        let notes = vec![None; lanes.len()];
        Chart {
            title,
            lanes,
            notes,
            time_label: "time (s)".to_string(),
            ..Chart::default()
        }
    }

    /// Adds a bar on `lane`, in `rows`, over `span`, with its `labels`.
    pub fn bar(
        &mut self,
        lane: usize,
        rows: Rows,
        span: (f64, f64),
        colour: RGBColor,
        labels: Vec<String>,
    ) {
        self.bars.push(Bar {
            lane,
            rows,
            span,
            colour,
            labels,
        });
    }
}

/// The vertical axis: `n` lanes, each a unit interval, lane `i` spanning
/// `[n-1-i, n-i]` so that lane 0 is on top. Its key points (where the lane names
/// go) are the lane centres, all of them: the layout makes them fit.
struct LaneAxis(RangedCoordf64, usize);

impl LaneAxis {
    fn new(lanes: usize) -> LaneAxis {
        LaneAxis((0.0..lanes as f64).into(), lanes)
    }

    /// The lane whose centre is nearest to `y`, if `y` is inside the axis.
    fn lane_at(&self, y: f64) -> Option<usize> {
        let lane = (self.1 as f64 - 0.5 - y).round();
        (lane >= 0.0 && lane < self.1 as f64).then_some(lane as usize)
    }

    /// Bottom edge of `lane`; its top edge is one above.
    fn bottom_of(&self, lane: usize) -> f64 {
        (self.1 - 1 - lane) as f64
    }
}

impl Ranged for LaneAxis {
    type FormatOption = DefaultFormatting;
    type ValueType = f64;
    fn map(&self, value: &f64, limit: (i32, i32)) -> i32 {
        self.0.map(value, limit)
    }
    fn key_points<Hint: KeyPointHint>(&self, _hint: Hint) -> Vec<f64> {
        (0..self.1).map(|lane| self.bottom_of(lane) + 0.5).collect()
    }
    fn range(&self) -> std::ops::Range<f64> {
        self.0.range()
    }
}

/// The time axis: seconds, ticks on round multiples of 1, 2 or 5 times a power of
/// ten, all printed with the same number of decimals.
struct TimeAxis(RangedCoordf64);

impl TimeAxis {
    /// Number of time ticks aimed at.
    const TICKS: usize = 10;

    fn span(&self) -> f64 {
        let range = self.0.range();
        range.end - range.start
    }

    /// Number of decimals of the tick labels: enough for the tick step.
    fn decimals(&self) -> usize {
        let step = nice_step(self.span(), Self::TICKS);
        (-step.log10().floor()).clamp(0.0, 12.0) as usize
    }

    /// The multiples of `step` inside the axis (none if `step` is not positive).
    fn multiples_of(&self, step: f64) -> Vec<f64> {
        let range = self.0.range();
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
        self.0.map(value, limit)
    }
    fn key_points<Hint: KeyPointHint>(&self, hint: Hint) -> Vec<f64> {
        let bold_step = nice_step(self.span(), hint.bold_points().min(Self::TICKS));
        if !hint.weight().allow_light_points() {
            return self.multiples_of(bold_step);
        }
        // Light grid lines: halves of steps 1 and 2, fifths of step 5.
        let mantissa = (bold_step / 10f64.powf(bold_step.log10().floor())).round();
        let light = self.multiples_of(bold_step / if mantissa == 5.0 { 5.0 } else { 2.0 });
        if light.len() <= hint.max_num_points() {
            light
        } else {
            Vec::new()
        }
    }
    fn range(&self) -> std::ops::Range<f64> {
        self.0.range()
    }
}

/// Checks the bars and spans, and returns the time range to draw: from
/// `min(0, first start)` to the last end, or `[0, 1]` when nothing is drawn.
fn time_range(chart: &Chart) -> Result<(f64, f64), DrawError> {
    let n = chart.lanes.len();
    let (mut first, mut last) = (0.0f64, 0.0f64);
    let spans = chart.spans.iter().map(|&(s, e)| (None, s, e));
    let bars = chart
        .bars
        .iter()
        .map(|b| (Some(b.lane), b.span.0, b.span.1));
    for (index, (lane, start, end)) in bars.chain(spans).enumerate() {
        if let Some(lane) = lane.filter(|&lane| lane >= n) {
            return Err(DrawError::NoSuchLane {
                bar: index,
                lane,
                lanes: n,
            });
        }
        if !start.is_finite() || !end.is_finite() || end < start {
            return Err(DrawError::BadInterval {
                bar: index,
                start,
                end,
            });
        }
        first = first.min(start);
        last = last.max(end);
    }
    if last <= first {
        last = first + 1.0;
    }
    Ok((first, last))
}

/// Renders `chart` as an SVG document: its lanes top to bottom,
/// every other one on a light stripe, a time axis in seconds, the title above and
/// the legend below. Lanes get 28 px each up to 16 lanes, 14 px from 64 on.
///
/// O(lanes + bars). Never panics: bad input and plotting failures come back as
/// errors.
///
/// # Errors
/// [`DrawError::NoLanes`] for a chart without lanes, [`DrawError::NoSuchLane`]
/// or [`DrawError::BadInterval`] for a bar off the chart or with times that are
/// not a finite interval, [`DrawError::Font`] or [`DrawError::Backend`] when
/// drawing fails.
///
/// # Example
/// ```
/// use hetbal_draw::gantt::{render_svg, Chart, WHOLE};
/// use plotters::style::RGBColor;
///
/// let mut chart = Chart::new("two lanes".into(), ["a".to_string(), "b".to_string()]);
/// chart.bar(1, WHOLE, (0.0, 2.5), RGBColor(0x1F, 0x5F, 0xB4), vec!["busy".into()]);
/// let svg = render_svg(&chart)?;
/// assert!(svg.contains("two lanes"));
/// chart.bar(2, WHOLE, (0.0, 1.0), RGBColor(0, 0, 0), vec![]);
/// assert_eq!(render_svg(&chart).unwrap_err().to_string(),
///            "cannot draw bar 1: it is on lane 2, there are 2");
/// # Ok::<(), hetbal_draw::DrawError>(())
/// ```
pub fn render_svg(chart: &Chart) -> Result<String, DrawError> {
    let n = chart.lanes.len();
    if n == 0 {
        return Err(DrawError::NoLanes);
    }
    let (t_min, t_max) = time_range(chart)?;
    bundled_font()?;
    let lane_px = 28.0 - (n.clamp(16, 64) - 16) as f64 * 14.0 / 48.0;
    let height =
        (MARGIN + 36 + (lane_px * n as f64).round() as u32 + X_LABEL_AREA + LEGEND_HEIGHT).max(240);
    let label_font = (lane_px * 0.95).min(16.0);
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, (CHART_WIDTH, height)).into_drawing_area();
        root.fill(&WHITE).map_err(backend_error)?;
        let (chart_area, legend_area) = root.split_vertically(height - LEGEND_HEIGHT);
        let width_of = |text: &str, size: f64| {
            root.estimate_text_size(text, &TextStyle::from((FONT, size).into_font()))
                .map(|(w, _)| w)
                .map_err(backend_error)
        };
        let mut name_width = 0;
        let mut note_width = 0;
        for lane in &chart.lanes {
            name_width = name_width.max(width_of(lane, label_font)?);
        }
        for note in chart.notes.iter().flatten() {
            note_width = note_width.max(width_of(note, 12.0)? + 8);
        }
        let axis = LaneAxis::new(n);
        let mut plot = ChartBuilder::on(&chart_area)
            .caption(&chart.title, (FONT, 22.0))
            .margin_top(MARGIN)
            .margin_right(2 * MARGIN + note_width)
            .margin_left(MARGIN / 2)
            .x_label_area_size(X_LABEL_AREA)
            .y_label_area_size((name_width + 16).clamp(40, CHART_WIDTH / 3))
            .build_cartesian_2d(TimeAxis((t_min..t_max).into()), LaneAxis::new(n))
            .map_err(backend_error)?;
        // Stripes first, so that the grid and the bars lie above them.
        plot.draw_series((0..n).step_by(2).map(|lane| {
            let bottom = axis.bottom_of(lane);
            Rectangle::new([(t_min, bottom), (t_max, bottom + 1.0)], STRIPE.filled())
        }))
        .map_err(backend_error)?;
        let decimals = TimeAxis((t_min..t_max).into()).decimals();
        let format_time = |t: &f64| format!("{t:.decimals$}");
        let format_lane = |y: &f64| match axis.lane_at(*y) {
            Some(lane) => chart.lanes[lane].clone(),
            None => String::new(),
        };
        plot.configure_mesh()
            .disable_y_mesh()
            .x_labels(TimeAxis::TICKS)
            .x_label_formatter(&format_time)
            .y_label_formatter(&format_lane)
            .x_desc(&chart.time_label)
            .x_label_style((FONT, 14.0))
            .y_label_style((FONT, label_font))
            .axis_desc_style((FONT, 15.0))
            .light_line_style(RGBColor(0xE4, 0xE4, 0xE4))
            .bold_line_style(RGBColor(0xC8, 0xC8, 0xC8))
            .draw()
            .map_err(backend_error)?;
        plot.draw_series(chart.spans.iter().map(|&(start, end)| {
            Rectangle::new([(start, 0.0), (end, n as f64)], SPAN.mix(0.5).filled())
        }))
        .map_err(backend_error)?;

        // Bars narrower than a pixel are widened to one pixel so that they show.
        let (plot_width, plot_height) = plot.plotting_area().dim_in_pixel();
        let pixel = (t_max - t_min) / f64::from(plot_width.max(1));
        let place = |bar: &Bar| {
            let start = bar.span.0.min(t_max - pixel);
            let (low, high) = bar.rows;
            let bottom = axis.bottom_of(bar.lane);
            (
                (start, bottom + high),
                (bar.span.1.max(start + pixel), bottom + low),
            )
        };
        plot.draw_series(chart.bars.iter().map(|bar| {
            let (top_left, bottom_right) = place(bar);
            Rectangle::new([top_left, bottom_right], bar.colour.filled())
        }))
        .map_err(backend_error)?;

        // Labels: the first that fits its bar, white on dark bars, dark on light.
        let lane_height = f64::from(plot_height) / n as f64;
        let mut labels = Vec::new();
        for bar in chart.bars.iter().filter(|b| !b.labels.is_empty()) {
            let (low, high) = bar.rows;
            let row_px = lane_height * (high - low);
            let size = (row_px * 1.1).min(13.0);
            let bar_px = (bar.span.1 - bar.span.0) / pixel;
            if row_px < 8.5 || bar_px < size {
                continue;
            }
            for label in &bar.labels {
                // A character is at least 0.3 em wide: skip the measure when the
                // bar is surely too narrow.
                if bar_px < 0.3 * size * label.chars().count() as f64 + 6.0
                    || bar_px < f64::from(width_of(label, size)?) + 6.0
                {
                    continue;
                }
                let ((start, top), (end, bottom)) = place(bar);
                let c = bar.colour;
                let light =
                    0.299 * f64::from(c.0) + 0.587 * f64::from(c.1) + 0.114 * f64::from(c.2);
                let style = TextStyle::from((FONT, size).into_font())
                    .pos(Pos::new(HPos::Center, VPos::Center))
                    .color(if light > 150.0 { &DARK_TEXT } else { &WHITE });
                let centre = ((start + end) / 2.0, (top + bottom) / 2.0);
                labels.push(Text::new(label.clone(), centre, style));
                break;
            }
        }
        plot.draw_series(labels).map_err(backend_error)?;

        // Lane notes after each lane's last bar.
        let note_style = TextStyle::from((FONT, 12.0).into_font())
            .pos(Pos::new(HPos::Left, VPos::Center))
            .color(&DARK_TEXT);
        let mut lane_end = vec![t_min; n];
        for bar in &chart.bars {
            lane_end[bar.lane] = lane_end[bar.lane].max(bar.span.1);
        }
        plot.draw_series(
            chart
                .notes
                .iter()
                .take(n)
                .enumerate()
                .filter_map(|(lane, note)| {
                    let at = (lane_end[lane] + 4.0 * pixel, axis.bottom_of(lane) + 0.5);
                    Some(Text::new(note.clone()?, at, note_style.clone()))
                }),
        )
        .map_err(backend_error)?;

        draw_legend(&legend_area, &chart.legend)?;
        root.present().map_err(backend_error)?;
    }
    Ok(svg)
}

/// Draws the legend centred in `area`: the swatches and the text of each entry.
fn draw_legend<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    entries: &[(Vec<RGBColor>, String)],
) -> Result<(), DrawError> {
    const SWATCH: (i32, i32) = (16, 10);
    let style = TextStyle::from((FONT, 15.0).into_font()).pos(Pos::new(HPos::Left, VPos::Center));
    let mut widths = Vec::with_capacity(entries.len());
    for (swatches, text) in entries {
        let (text_width, _) = area
            .estimate_text_size(text, &style)
            .map_err(backend_error)?;
        widths.push(SWATCH.0 * swatches.len() as i32 + 6 + text_width as i32);
    }
    let total: i32 = widths.iter().sum::<i32>() + 28 * (entries.len() as i32 - 1);
    let (area_width, area_height) = area.dim_in_pixel();
    let y = area_height as i32 / 2;
    let mut x = ((area_width as i32 - total) / 2).max(0);
    for ((swatches, text), width) in entries.iter().zip(widths) {
        let mut swatch_x = x;
        for colour in swatches {
            let corners = [
                (swatch_x, y - SWATCH.1 / 2),
                (swatch_x + SWATCH.0, y + SWATCH.1 / 2),
            ];
            area.draw(&Rectangle::new(corners, colour.filled()))
                .map_err(backend_error)?;
            swatch_x += SWATCH.0;
        }
        area.draw(&Text::new(text.as_str(), (swatch_x + 6, y), style.clone()))
            .map_err(backend_error)?;
        x += width + 28;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    //! The commands' charts are checked from their SVG in the CLI's
    //! `tests/gantt_cli.rs`; here, what no command can feed the renderer.
    use super::*;
    use crate::plans::{ring_chart, SUCCESSOR};
    use hetbal::ring::RingInstance;
    use hetbal::{Schedule, Transfer};

    fn names(n: usize) -> Vec<String> {
        (0..n).map(|i| format!("P{i}")).collect()
    }

    fn ring(names: &[String], transfers: Vec<(usize, usize, u64, f64, f64)>) -> Chart {
        let transfers = transfers
            .into_iter()
            .map(|(from, to, items, start, end)| Transfer::new(from, to, items, start, end))
            .collect();
        let n = names.len();
        let ring = RingInstance::unidirectional(&vec![1; n], &vec![1; n], &vec![1.0; n]).unwrap();
        let mut chart = ring_chart("t".into(), &ring, &Schedule::new(transfers));
        // Lane names no ring accepts (empty ones), for the renderer.
        chart.lanes = names.to_vec();
        chart
    }

    #[test]
    fn many_bars_render_and_labels_go_where_they_fit() {
        let many = (0..20_000).map(|k| (k % 16, (k + 1) % 16, 1, k as f64, k as f64 + 1.0));
        assert!(render_svg(&ring(&names(16), many.collect())).is_ok());
        let svg = render_svg(&ring(
            &names(2),
            vec![(0, 1, 12345, 0.0, 10.0), (1, 0, 98765, 10.0, 10.001)],
        ))
        .unwrap();
        assert_eq!(svg.matches(">\n12345\n</text>").count(), 2);
        assert!(!svg.contains("98765"), "a too narrow bar got a label");
        // The first label that fits: the long one in the wide bar, the short one
        // in the narrower bar.
        let mut chart = Chart::new("t".into(), names(1));
        for span in [(0.0, 90.0), (90.0, 100.0)] {
            let labels = vec!["a rather long label".to_string(), "short".to_string()];
            chart.bar(0, WHOLE, span, SUCCESSOR, labels);
        }
        let svg = render_svg(&chart).unwrap();
        assert!(
            svg.contains(">\na rather long label\n</text>") && svg.contains(">\nshort\n</text>")
        );
    }

    #[test]
    fn bad_input_and_odd_text_are_messages_not_panics() {
        let error = render_svg(&ring(&names(3), vec![(0, 3, 1, 0.0, 1.0)])).unwrap_err();
        assert!(
            error.to_string().contains("on lane 3, there are 3"),
            "{error}"
        );
        let error = render_svg(&ring(&names(3), vec![(0, 1, 1, f64::NAN, 1.0)])).unwrap_err();
        assert!(
            error.to_string().contains("not a finite interval"),
            "{error}"
        );
        assert_eq!(render_svg(&Chart::default()), Err(DrawError::NoLanes));
        // More notes than lanes: the extra ones are not drawn.
        let mut chart = Chart::new("t".into(), names(1));
        chart.notes = vec![Some("a".into()), Some("b".into())];
        assert!(render_svg(&chart).is_ok());
        let odd = vec!["<a & \"b\">".to_string(), String::new(), "é".repeat(200)];
        for (start, end) in [(0.0, 0.0), (1e-300, 2e-300), (0.0, 1e300), (-1e308, 1e308)] {
            let svg = render_svg(&ring(&odd, vec![(0, 1, u64::MAX, start, end)])).unwrap();
            assert!(svg.starts_with("<svg") && !svg.contains("<&>"));
        }
    }
}
