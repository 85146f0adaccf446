//! Line charts (the GEN_BLOCK scenarios' costs, the ring-iterative figure):
//! series of points against a linear or a log x axis, each series a line with
//! a dot per point, drawn as SVG or PNG.
//!
//! ```
//! use hetbal_draw::lines::{LineChart, Series};
//! use plotters::style::RGBColor;
//!
//! let chart = LineChart {
//!     title: "cost".into(),
//!     x_label: "ratio".into(),
//!     y_label: "time (s)".into(),
//!     log_x: true,
//!     y_from_zero: false,
//!     legend_beside: true,
//!     series: vec![Series {
//!         label: "adaptive".into(),
//!         colour: RGBColor(0xD6, 0x27, 0x28),
//!         width: 3,
//!         dashed: false,
//!         points: vec![(1.0, 0.9), (10.0, 0.8), (100.0, 1.0)],
//!     }],
//! };
//! let svg = chart.svg()?;
//! assert!(svg.contains("adaptive"));
//! assert!(chart.png()?.starts_with(b"\x89PNG"));
//! # Ok::<(), hetbal_draw::DrawError>(())
//! ```

use plotters::coord::ranged1d::{AsRangedCoord, ValueFormatter};
use plotters::coord::Shift;
use plotters::element::{DashedPathElement, DynElement, IntoDynElement};
use plotters::prelude::*;

use crate::font::bundled_font;
use crate::{backend_error as plot_error, DrawError};

/// Size of every chart, in pixels.
const SIZE: (u32, u32) = (900, 560);

/// Width of the legend strip beside the plot.
const LEGEND_WIDTH: u32 = 150;

/// One line of a chart.
pub struct Series {
    /// The legend's text.
    pub label: String,
    /// The line's and the dots' colour.
    pub colour: RGBColor,
    /// Line width in pixels.
    pub width: u32,
    /// A dashed line (else solid).
    pub dashed: bool,
    /// `(x, y)` in drawing order.
    pub points: Vec<(f64, f64)>,
}

/// A line chart: its title, axis names, x scale and series.
pub struct LineChart {
    /// The title, above the plot.
    pub title: String,
    /// The x axis's name.
    pub x_label: String,
    /// The y axis's name.
    pub y_label: String,
    /// A log x axis (labels kept apart so that they never overlap) instead of a linear one.
    pub log_x: bool,
    /// The y axis from 0 (else it fits the points, padded).
    pub y_from_zero: bool,
    /// The legend in a strip beside the plot, where it covers no curve (else in
    /// the plot's upper left corner).
    pub legend_beside: bool,
    /// The lines, drawn in this order.
    pub series: Vec<Series>,
}

impl LineChart {
    /// The chart as an SVG document, 900 x 560 pixels. O(points).
    ///
    /// # Errors
    /// [`DrawError::Font`] or [`DrawError::Backend`] when drawing fails.
    pub fn svg(&self) -> Result<String, DrawError> {
        let mut svg = String::new();
        self.draw(&SVGBackend::with_string(&mut svg, SIZE).into_drawing_area())?;
        Ok(svg)
    }

    /// The chart as a PNG image, 900 x 560 pixels. O(points + pixels).
    ///
    /// # Errors
    /// As [`LineChart::svg`], and [`DrawError::Backend`] when encoding fails.
    pub fn png(&self) -> Result<Vec<u8>, DrawError> {
        let mut pixels = vec![0u8; (SIZE.0 * SIZE.1 * 3) as usize];
        self.draw(&BitMapBackend::with_buffer(&mut pixels, SIZE).into_drawing_area())?;
        let mut bytes = Vec::new();
        let fail =
            |e: png::EncodingError| DrawError::Backend(format!("cannot encode the PNG: {e}"));
        let mut encoder = png::Encoder::new(&mut bytes, SIZE.0, SIZE.1);
        encoder.set_color(png::ColorType::Rgb);
        encoder.set_depth(png::BitDepth::Eight);
        let mut writer = encoder.write_header().map_err(fail)?;
        writer.write_image_data(&pixels).map_err(fail)?;
        writer.finish().map_err(fail)?;
        Ok(bytes)
    }

    fn draw<DB: DrawingBackend>(&self, root: &DrawingArea<DB, Shift>) -> Result<(), DrawError> {
        root.fill(&WHITE).map_err(plot_error)?;
        let points = || self.series.iter().flat_map(|s| s.points.iter());
        let min_max = |v: fn(&(f64, f64)) -> f64| {
            let fold = |(lo, hi): (f64, f64), p| (f64::min(lo, v(p)), f64::max(hi, v(p)));
            points().fold((f64::INFINITY, f64::NEG_INFINITY), fold)
        };
        let ((x_min, x_max), (y_min, y_max)) = (min_max(|p| p.0), min_max(|p| p.1));
        let x = match (x_min.is_finite() && x_max > x_min, self.log_x) {
            (true, _) => (x_min, x_max),
            (false, true) => (x_min / 2.0, x_min * 2.0),
            (false, false) => (0.0, 1.0),
        };
        let y_max = y_max.max(0.0);
        let y = if self.y_from_zero {
            (0.0, y_max.max(1.0) * 1.08)
        } else {
            let pad = ((y_max - y_min) * 0.08).max(0.01);
            (y_min - pad, y_max + pad)
        };
        let width = SIZE.0 - if self.legend_beside { LEGEND_WIDTH } else { 0 };
        let (plot, strip) = root.split_horizontally(width);
        if self.log_x {
            let (labels, light) = log_ticks(x.0, x.1, f64::from(width - 100));
            let axis = (x.0..x.1)
                .log_scale()
                .with_key_points(labels)
                .with_light_points(light);
            self.plot(&plot, axis, y, Some(&log_label))?;
        } else {
            self.plot(&plot, x.0..x.1, y, None)?;
        }
        if self.legend_beside {
            let font = bundled_font()?;
            for (i, s) in self.series.iter().enumerate() {
                let y = 60 + 24 * i as i32;
                strip
                    .draw(&sample(s.dashed, s.style(), (8, y), (36, y)))
                    .and_then(|()| strip.draw(&Circle::new((22, y), 3, s.colour.filled())))
                    .and_then(|()| {
                        strip.draw(&Text::new(s.label.as_str(), (44, y - 7), (font, 13.0)))
                    })
                    .map_err(plot_error)?;
            }
        }
        root.present().map_err(plot_error)
    }

    /// Draws the axes and the series in `area`, on the x axis `x` (labelled by
    /// `x_format`, or plotters' default).
    fn plot<DB: DrawingBackend, X>(
        &self,
        area: &DrawingArea<DB, Shift>,
        x: X,
        y: (f64, f64),
        x_format: Option<&dyn Fn(&f64) -> String>,
    ) -> Result<(), DrawError>
    where
        X: AsRangedCoord<Value = f64>,
        X::CoordDescType: ValueFormatter<f64>,
    {
        let font = bundled_font()?;
        let mut chart = ChartBuilder::on(area)
            .caption(&self.title, (font, 20.0))
            .margin(14)
            .x_label_area_size(44)
            .y_label_area_size(64)
            .build_cartesian_2d(x, y.0..y.1)
            .map_err(plot_error)?;
        let mut mesh = chart.configure_mesh();
        if let Some(format) = x_format {
            mesh.x_label_formatter(format);
        }
        mesh.x_desc(&self.x_label)
            .y_desc(&self.y_label)
            .x_label_style((font, 13.0))
            .y_label_style((font, 13.0))
            .axis_desc_style((font, 14.0))
            .light_line_style(RGBColor(0xEE, 0xEE, 0xEE))
            .draw()
            .map_err(plot_error)?;
        for s in &self.series {
            let style = s.style();
            let points = s.points.iter().copied();
            let line = if s.dashed {
                chart.draw_series(DashedLineSeries::new(points, 6, 4, style))
            } else {
                chart.draw_series(LineSeries::new(points, style))
            };
            let dashed = s.dashed;
            line.map_err(plot_error)?
                .label(s.label.as_str())
                .legend(move |(x, y)| sample(dashed, style, (x, y), (x + 18, y)));
            chart
                .draw_series(
                    s.points
                        .iter()
                        .map(|&p| Circle::new(p, 3, s.colour.filled())),
                )
                .map_err(plot_error)?;
        }
        if !self.legend_beside {
            chart
                .configure_series_labels()
                .label_font((font, 13.0))
                .background_style(WHITE.mix(0.85))
                .border_style(BLACK)
                .position(SeriesLabelPosition::UpperLeft)
                .draw()
                .map_err(plot_error)?;
        }
        Ok(())
    }
}

impl Series {
    fn style(&self) -> ShapeStyle {
        ShapeStyle::from(&self.colour).stroke_width(self.width)
    }
}

/// A legend's line sample, dashed like its series.
fn sample<DB: DrawingBackend>(
    dashed: bool,
    style: ShapeStyle,
    from: (i32, i32),
    to: (i32, i32),
) -> DynElement<'static, DB, (i32, i32)> {
    if dashed {
        DashedPathElement::new(vec![from, to], 6, 4, style).into_dyn()
    } else {
        PathElement::new(vec![from, to], style).into_dyn()
    }
}

/// A log axis label: plain from 0.001 to 99,999, else in scientific notation.
fn log_label(x: &f64) -> String {
    if (1e-3..1e5).contains(x) {
        format!("{x}")
    } else {
        format!("{x:e}")
    }
}

/// Ticks of a log axis over `[lo, hi]`, for `pixels` of axis: labelled ticks
/// (1, 2, 5 or 1 per decade, or every few decades, as room allows: labels at
/// least 48 pixels apart) and the light grid (every unit of each decade when it
/// fits).
fn log_ticks(lo: f64, hi: f64, pixels: f64) -> (Vec<f64>, Vec<f64>) {
    let decades = (hi / lo).log10().max(1e-9);
    // Smallest gap between labels, in decades.
    let gap = decades * 48.0 / pixels;
    let steps: &[f64] = if gap <= (10f64 / 9.0).log10() {
        &[1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0]
    } else if gap <= 2f64.log10() {
        &[1.0, 2.0, 5.0]
    } else {
        &[1.0]
    };
    let every = gap.ceil().max(1.0) as i32;
    let value = |k: i32, m: f64| {
        if k >= 0 {
            m * 10f64.powi(k)
        } else {
            m / 10f64.powi(-k)
        }
    };
    let (first, last) = (lo.log10().floor() as i32, hi.log10().ceil() as i32);
    let in_range = |x: &f64| *x >= lo * (1.0 - 1e-9) && *x <= hi * (1.0 + 1e-9);
    let labels = (first..=last)
        .filter(|k| steps.len() > 1 || k.rem_euclid(every) == 0)
        .flat_map(|k| steps.iter().map(move |&m| value(k, m)))
        .filter(in_range)
        .collect();
    let light = if decades * 9.0 * 4.0 <= pixels {
        (first..=last)
            .flat_map(|k| (1..10).map(move |m| value(k, f64::from(m))))
            .filter(in_range)
            .collect()
    } else {
        Vec::new()
    };
    (labels, light)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn log_axis_labels_keep_apart() {
        // 1 to 12 on 650 pixels: 1, 2, 5, 10 (not 8, 9, 10 side by side).
        assert_eq!(log_ticks(1.0, 12.0, 650.0).0, vec![1.0, 2.0, 5.0, 10.0]);
        // Narrow ranges get every unit.
        assert_eq!(log_ticks(1.0, 3.0, 650.0).0, vec![1.0, 2.0, 3.0]);
        // Wide ranges one label per decade or fewer, each 48 pixels apart at least.
        for (lo, hi) in [(0.5, 200.0), (1.0, 1e6), (1e-3, 1e12)] {
            let (labels, _) = log_ticks(lo, hi, 650.0);
            let decades_per_pixel = (hi / lo).log10() / 650.0;
            for pair in labels.windows(2) {
                assert!(
                    (pair[1] / pair[0]).log10() / decades_per_pixel >= 48.0,
                    "{pair:?}"
                );
            }
            assert!(labels.len() >= 2, "{lo}..{hi}: {labels:?}");
        }
        assert_eq!(
            log_ticks(0.5, 200.0, 650.0).0,
            vec![0.5, 1.0, 2.0, 5.0, 10.0, 20.0, 50.0, 100.0, 200.0]
        );
    }
}
