//! Pictures of hetbal's plans and experiments: Gantt charts of ring, scatter
//! and GEN_BLOCK schedules and of weighted partitions, and line charts ([`lines`]), drawn as SVG (and PNG)
//! with [plotters].
//!
//! The data flows one way: a plan from the `hetbal` library becomes a
//! [`Chart`] (lanes and bars: [`ring_chart`], [`scatter_chart`],
//! [`genblock_chart`], [`partition_chart`], or one built by hand), and [`render_svg`] draws it. Text is
//! laid out with the DejaVu Sans font bundled in the crate, so no system font is
//! needed; the SVG names the family `sans-serif`.
//!
//! The `hetbal` command (`--gantt`), the MPI runtime and the language bindings
//! draw with this crate, so a schedule looks the same wherever it is drawn.
//!
//! ```
//! use hetbal::ring::RingInstance;
//! use hetbal_draw::{render_svg, ring_chart};
//!
//! let ring = RingInstance::unidirectional(&[4, 1, 1], &[2, 2, 2], &[1.0, 1.0, 1.0])?;
//! let plan = hetbal::ring::plan(&ring, None)?;
//! let chart = ring_chart("three processors".into(), &ring, &plan.schedule());
//! let svg = render_svg(&chart)?;
//! assert!(svg.starts_with("<svg") && svg.contains("three processors"));
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

#![deny(missing_docs)]

mod file;
mod font;
pub mod gantt;
pub mod lines;
mod plans;

pub use file::ChartFile;
pub use font::bundled_font;
pub use gantt::{render_svg, Chart};
pub use plans::{genblock_chart, partition_chart, ring_chart, scatter_chart};
/// Colours of bars and lines (plotters' RGB colour).
pub use plotters::style::RGBColor;

/// A number for a title or a table: integers without decimals, others with
/// at most 6 decimals (trailing zeros dropped), tiny ones in scientific
/// notation, huge ones too (from 10^15); `79.48128782765235` reads `79.481288`.
///
/// # Example
/// ```
/// use hetbal_draw::short_number;
/// assert_eq!(short_number(79.48128782765235), "79.481288");
/// assert_eq!(short_number(12.0), "12");
/// assert_eq!(short_number(0.5), "0.5");
/// assert_eq!(short_number(2.5e-5), "2.500e-5");
/// assert_eq!(short_number(1e308), "1e308");
/// ```
pub fn short_number(x: f64) -> String {
    if x == x.trunc() && x.abs() < 1e15 {
        format!("{}", x as i64)
    } else if x.is_finite() && x.abs() >= 1e15 {
        format!("{x:e}")
    } else if x.abs() >= 1e-3 || !x.is_finite() {
        let s = format!("{x:.6}");
        s.trim_end_matches('0').trim_end_matches('.').to_string()
    } else {
        format!("{x:.3e}")
    }
}

/// Why a chart cannot be drawn.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub enum DrawError {
    /// The chart has no lanes: there is nothing to draw on.
    NoLanes,
    /// Bar `bar` (in the order added, spans after bars) lies on `lane`, but the
    /// chart has only `lanes` lanes.
    NoSuchLane {
        /// The bar's index.
        bar: usize,
        /// The lane it names.
        lane: usize,
        /// The chart's number of lanes.
        lanes: usize,
    },
    /// Bar `bar`'s times are not a finite interval (`start <= end`, both finite).
    BadInterval {
        /// The bar's index.
        bar: usize,
        /// Its start.
        start: f64,
        /// Its end.
        end: f64,
    },
    /// The bundled font cannot be read (a damaged build).
    Font,
    /// The drawing backend failed; the text is its message.
    Backend(String),
}

impl std::fmt::Display for DrawError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            DrawError::NoLanes => write!(f, "cannot draw a Gantt chart without lanes"),
            DrawError::NoSuchLane { bar, lane, lanes } => write!(
                f,
                "cannot draw bar {bar}: it is on lane {lane}, there are {lanes}"
            ),
            DrawError::BadInterval { bar, start, end } => write!(
                f,
                "cannot draw bar {bar}: its times [{start}, {end}] are not a finite interval"
            ),
            DrawError::Font => write!(f, "the bundled font DejaVuSans.ttf cannot be read"),
            DrawError::Backend(message) => write!(f, "cannot draw the chart: {message}"),
        }
    }
}

impl std::error::Error for DrawError {}

/// Turns a plotters error into a [`DrawError::Backend`].
pub fn backend_error(error: impl std::fmt::Display) -> DrawError {
    DrawError::Backend(error.to_string())
}
