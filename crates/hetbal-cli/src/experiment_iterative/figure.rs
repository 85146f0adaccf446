//! The figure of `hetbal experiment ring-iterative` (the paper's Figures 3–4):
//! normalised time against the cost ratio on a log axis, one line per policy,
//! the legend beside the plot so that it covers no curve.

use hetbal::experiment::ring_iterative::{policies, Row};
use hetbal::iterative::Policy;
use plotters::coord::Shift;
use plotters::element::DashedPathElement;
use plotters::prelude::*;

const SIZE: (u32, u32) = (900, 560);

/// Width of the legend beside the plot (it never covers a curve).
const LEGEND_WIDTH: u32 = 150;

/// The figure of one ring size as SVG.
pub(super) fn svg(ring: usize, rows: &[&Row]) -> Result<String, String> {
    let mut svg = String::new();
    draw(
        &SVGBackend::with_string(&mut svg, SIZE).into_drawing_area(),
        ring,
        rows,
    )?;
    Ok(svg)
}

/// The figure of one ring size as PNG.
pub(super) fn png(ring: usize, rows: &[&Row]) -> Result<Vec<u8>, String> {
    let mut pixels = vec![0u8; (SIZE.0 * SIZE.1 * 3) as usize];
    draw(
        &BitMapBackend::with_buffer(&mut pixels, SIZE).into_drawing_area(),
        ring,
        rows,
    )?;
    let mut bytes = Vec::new();
    let fail = |e: png::EncodingError| format!("cannot encode the PNG: {e}");
    {
        let mut encoder = png::Encoder::new(&mut bytes, SIZE.0, SIZE.1);
        encoder.set_color(png::ColorType::Rgb);
        encoder.set_depth(png::BitDepth::Eight);
        let mut writer = encoder.write_header().map_err(fail)?;
        writer.write_image_data(&pixels).map_err(fail)?;
    }
    Ok(bytes)
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

/// The paper's Figures 3–4: normalised time against the ratio, one line per
/// policy, the legend beside the plot.
fn draw<DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>,
    ring: usize,
    rows: &[&Row],
) -> Result<(), String> {
    let font = hetbal_draw::bundled_font().map_err(|e| e.to_string())?;
    let fail = |e: DrawingAreaErrorKind<DB::ErrorType>| format!("cannot draw the figure: {e}");
    root.fill(&WHITE).map_err(fail)?;
    let (plot, legend) = root.split_horizontally(SIZE.0 - LEGEND_WIDTH);
    let fold = |f: fn(f64, f64) -> f64, start, value: fn(&Row) -> f64| {
        rows.iter().map(|r| value(r)).fold(start, f)
    };
    let (x_min, x_max) = (
        fold(f64::min, f64::INFINITY, |r| r.ratio),
        fold(f64::max, f64::NEG_INFINITY, |r| r.ratio),
    );
    let (x_min, x_max) = if x_max > x_min {
        (x_min, x_max)
    } else {
        (x_min / 2.0, x_min * 2.0)
    };
    let y_min = fold(f64::min, f64::INFINITY, |r| r.normalized_time);
    let y_max = fold(f64::max, 0.0, |r| r.normalized_time);
    let pad = ((y_max - y_min) * 0.08).max(0.01);
    let (labels, light) = log_ticks(x_min, x_max, f64::from(SIZE.0 - LEGEND_WIDTH - 100));
    let mut chart = ChartBuilder::on(&plot)
        .caption(
            format!("Ring of {ring}: time normalised to no redistribution"),
            (font, 20.0),
        )
        .margin(14)
        .x_label_area_size(44)
        .y_label_area_size(64)
        .build_cartesian_2d(
            (x_min..x_max)
                .log_scale()
                .with_key_points(labels)
                .with_light_points(light),
            (y_min - pad)..(y_max + pad),
        )
        .map_err(fail)?;
    chart
        .configure_mesh()
        .x_desc("ratio: cost of a redistribution / time of an iteration (log scale)")
        .y_desc("normalised time")
        .x_label_formatter(&|x| {
            if (1e-3..1e5).contains(x) {
                format!("{x}")
            } else {
                format!("{x:e}")
            }
        })
        .x_label_style((font, 13.0))
        .y_label_style((font, 13.0))
        .axis_desc_style((font, 14.0))
        .light_line_style(RGBColor(0xEE, 0xEE, 0xEE))
        .draw()
        .map_err(fail)?;
    let colours = [
        RGBColor(0x44, 0x44, 0x44),
        RGBColor(0x1F, 0x77, 0xB4),
        RGBColor(0x2C, 0xA0, 0x2C),
        RGBColor(0x94, 0x67, 0xBD),
        RGBColor(0x8C, 0x56, 0x4B),
        RGBColor(0xD6, 0x27, 0x28),
        RGBColor(0xFF, 0x7F, 0x0E),
        RGBColor(0x17, 0xBE, 0xCF),
    ];
    for (i, (policy, colour)) in policies().iter().zip(colours).enumerate() {
        let name = policy.name();
        let points: Vec<(f64, f64)> = rows
            .iter()
            .filter(|r| r.policy == name)
            .map(|r| (r.ratio, r.normalized_time))
            .collect();
        let width = if matches!(policy, Policy::Adaptive) {
            3
        } else {
            2
        };
        let style = ShapeStyle::from(&colour).stroke_width(width);
        let dashed = matches!(policy, Policy::OfflineBest);
        if dashed {
            chart.draw_series(DashedLineSeries::new(points.clone(), 6, 4, style))
        } else {
            chart.draw_series(LineSeries::new(points.clone(), style))
        }
        .map_err(fail)?;
        chart
            .draw_series(points.iter().map(|&p| Circle::new(p, 3, colour.filled())))
            .map_err(fail)?;
        // The legend entry, in the strip beside the plot.
        let y = 60 + 24 * i as i32;
        let sample = vec![(8, y), (36, y)];
        if dashed {
            legend.draw(&DashedPathElement::new(sample, 6, 4, style))
        } else {
            legend.draw(&PathElement::new(sample, style))
        }
        .and_then(|()| legend.draw(&Circle::new((22, y), 3, colour.filled())))
        .and_then(|()| legend.draw(&Text::new(name, (44, y - 7), (font, 13.0))))
        .map_err(fail)?;
    }
    root.present().map_err(fail)?;
    Ok(())
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
