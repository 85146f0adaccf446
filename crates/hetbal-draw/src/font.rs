//! The bundled font (DejaVu Sans, Bitstream Vera license: see
//! `assets/DejaVuSans-LICENSE.txt`), registered with plotters once per process.

use std::sync::OnceLock;

use plotters::style::{register_font, FontStyle};

use crate::DrawError;

/// The font's bytes.
const FONT_BYTES: &[u8] = include_bytes!("../assets/DejaVuSans.ttf");

/// The family under which the bundled font is registered, and that the SVG names.
pub(crate) const FONT: &str = "sans-serif";

/// Registers the bundled font with plotters (once per process) and returns the
/// family to draw text with.
///
/// # Errors
/// [`DrawError::Font`] if the bundled font cannot be read; every later call
/// returns the outcome of the first one.
///
/// # Example
/// ```
/// assert_eq!(hetbal_draw::bundled_font(), Ok("sans-serif"));
/// ```
pub fn bundled_font() -> Result<&'static str, DrawError> {
    static REGISTERED: OnceLock<Result<(), DrawError>> = OnceLock::new();
    REGISTERED
        .get_or_init(|| {
            register_font(FONT, FontStyle::Normal, FONT_BYTES).map_err(|_| DrawError::Font)
        })
        .clone()?;
    Ok(FONT)
}
