//! The font charts are drawn with, built into the program so that drawing text needs no
//! system font library: DejaVu Sans 2.37 (Bitstream Vera and Arev licences; see
//! `assets/DejaVuSans.LICENSE`).

use std::sync::OnceLock;

use plotters::style::FontStyle;

use super::ReportError;

/// The family name charts ask for. SVG output names it too, so browsers use their own
/// sans-serif face.
pub(super) const FAMILY: &str = "sans-serif";

/// The font file.
pub(super) static DEJAVU_SANS: &[u8] = include_bytes!("../../assets/DejaVuSans.ttf");

/// Makes [`FAMILY`] available to the drawing library (once per process).
pub(super) fn register() -> Result<(), ReportError> {
    static REGISTERED: OnceLock<bool> = OnceLock::new();
    let ok = *REGISTERED.get_or_init(|| {
        plotters::style::register_font(FAMILY, FontStyle::Normal, DEJAVU_SANS).is_ok()
    });
    if ok {
        Ok(())
    } else {
        Err(ReportError::Font)
    }
}
