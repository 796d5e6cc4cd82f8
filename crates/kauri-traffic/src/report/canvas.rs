//! The pixel canvas PNG charts are drawn on: plotters' bitmap backend, with text set
//! glyph by glyph on a common baseline (side bearings and kerning kept) from the built-in
//! font, so small labels stay crisp and even.

use ab_glyph::{point, Font, FontRef, PxScale, ScaleFont};
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, VPos};
use plotters_backend::{
    BackendColor, BackendCoord, BackendStyle, BackendTextStyle, DrawingErrorKind,
};

use super::font::DEJAVU_SANS;
use super::ReportError;

type BitmapError = <BitMapBackend<'static> as DrawingBackend>::ErrorType;

/// A [`BitMapBackend`] that draws text itself.
pub(super) struct Canvas<'a> {
    inner: BitMapBackend<'a>,
    font: FontRef<'static>,
}

impl<'a> Canvas<'a> {
    /// A canvas of `size` pixels over `buffer` (RGB, three bytes a pixel).
    pub(super) fn new(buffer: &'a mut [u8], size: (u32, u32)) -> Result<Self, ReportError> {
        let font = FontRef::try_from_slice(DEJAVU_SANS).map_err(|_| ReportError::Font)?;
        Ok(Canvas {
            inner: BitMapBackend::with_buffer(buffer, size),
            font,
        })
    }
}

impl DrawingBackend for Canvas<'_> {
    type ErrorType = BitmapError;

    fn get_size(&self) -> (u32, u32) {
        self.inner.get_size()
    }

    fn ensure_prepared(&mut self) -> Result<(), DrawingErrorKind<BitmapError>> {
        self.inner.ensure_prepared()
    }

    fn present(&mut self) -> Result<(), DrawingErrorKind<BitmapError>> {
        self.inner.present()
    }

    fn draw_pixel(
        &mut self,
        point: BackendCoord,
        color: BackendColor,
    ) -> Result<(), DrawingErrorKind<BitmapError>> {
        self.inner.draw_pixel(point, color)
    }

    fn draw_line<S: BackendStyle>(
        &mut self,
        from: BackendCoord,
        to: BackendCoord,
        style: &S,
    ) -> Result<(), DrawingErrorKind<BitmapError>> {
        self.inner.draw_line(from, to, style)
    }

    fn draw_rect<S: BackendStyle>(
        &mut self,
        upper_left: BackendCoord,
        bottom_right: BackendCoord,
        style: &S,
        fill: bool,
    ) -> Result<(), DrawingErrorKind<BitmapError>> {
        self.inner.draw_rect(upper_left, bottom_right, style, fill)
    }

    fn draw_path<S: BackendStyle, I: IntoIterator<Item = BackendCoord>>(
        &mut self,
        path: I,
        style: &S,
    ) -> Result<(), DrawingErrorKind<BitmapError>> {
        self.inner.draw_path(path, style)
    }

    fn draw_circle<S: BackendStyle>(
        &mut self,
        center: BackendCoord,
        radius: u32,
        style: &S,
        fill: bool,
    ) -> Result<(), DrawingErrorKind<BitmapError>> {
        self.inner.draw_circle(center, radius, style, fill)
    }

    fn fill_polygon<S: BackendStyle, I: IntoIterator<Item = BackendCoord>>(
        &mut self,
        vert: I,
        style: &S,
    ) -> Result<(), DrawingErrorKind<BitmapError>> {
        self.inner.fill_polygon(vert, style)
    }

    fn blit_bitmap(
        &mut self,
        pos: BackendCoord,
        size: (u32, u32),
        src: &[u8],
    ) -> Result<(), DrawingErrorKind<BitmapError>> {
        self.inner.blit_bitmap(pos, size, src)
    }

    fn draw_text<S: BackendTextStyle>(
        &mut self,
        text: &str,
        style: &S,
        pos: BackendCoord,
    ) -> Result<(), DrawingErrorKind<BitmapError>> {
        let color = style.color();
        if color.alpha == 0.0 || style.size() <= 0.0 {
            return Ok(());
        }
        let scale = PxScale::from(style.size() as f32);
        let font = self.font.as_scaled(scale);

        // Glyphs along a baseline at y = 0, starting at x = 0.
        let mut glyphs = Vec::new();
        let mut caret = 0.0f32;
        let mut previous = None;
        for c in text.chars().filter(|c| !c.is_control()) {
            let id = font.glyph_id(c);
            if let Some(p) = previous {
                caret += font.kern(p, id);
            }
            glyphs.push((id, caret));
            caret += font.h_advance(id);
            previous = Some(id);
        }

        let anchor = style.anchor();
        let dx = match anchor.h_pos {
            HPos::Left => 0.0,
            HPos::Center => -caret / 2.0,
            HPos::Right => -caret,
        };
        let baseline = match anchor.v_pos {
            VPos::Top => font.ascent(),
            VPos::Center => (font.ascent() + font.descent()) / 2.0,
            VPos::Bottom => font.descent(),
        };

        let transform = style.transform();
        let mut pixels = Vec::new();
        for (id, x) in glyphs {
            let glyph = id.with_scale_and_position(scale, point(x + dx, baseline));
            let Some(outline) = font.outline_glyph(glyph) else {
                continue;
            };
            let bounds = outline.px_bounds();
            outline.draw(|gx, gy, coverage| {
                if coverage > 0.0 {
                    let x = bounds.min.x as i32 + gx as i32;
                    let y = bounds.min.y as i32 + gy as i32;
                    let (x, y) = transform.transform(x, y);
                    pixels.push(((pos.0 + x, pos.1 + y), coverage.min(1.0)));
                }
            });
        }
        for (at, coverage) in pixels {
            self.inner.draw_pixel(at, color.mix(coverage as f64))?;
        }
        Ok(())
    }
}
