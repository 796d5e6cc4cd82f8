//! The comparison chart, drawn on any plotters backend: a title, a legend naming the runs
//! by colour, latency per kind of operation on a log axis (left) and achieved against
//! offered rate (right).

use std::ops::Range;

use plotters::coord::ranged1d::{DefaultFormatting, KeyPointHint};
use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

use super::font::FAMILY;
use super::{draw_error, rate, seconds, Comparison, ReportError};

/// Run colours, in run order: the Okabe–Ito palette, distinguishable with the common
/// kinds of colour blindness.
const PALETTE: [RGBColor; 8] = [
    RGBColor(0, 114, 178),
    RGBColor(213, 94, 0),
    RGBColor(0, 158, 115),
    RGBColor(204, 121, 167),
    RGBColor(230, 159, 0),
    RGBColor(86, 180, 233),
    RGBColor(110, 110, 110),
    RGBColor(150, 110, 40),
];
const INK: RGBColor = RGBColor(33, 33, 33);
const MUTED: RGBColor = RGBColor(105, 105, 105);
const WARN: RGBColor = RGBColor(180, 40, 30);
const GRID: RGBColor = RGBColor(205, 205, 205);
const GRID_LIGHT: RGBColor = RGBColor(236, 236, 236);

/// The colour of run `i`.
pub(super) fn colour(i: usize) -> RGBColor {
    PALETTE[i % PALETTE.len()]
}

/// `c` mixed with white, for the 95th-percentile part of a bar.
fn tint(c: RGBColor, white: f64) -> RGBColor {
    let mix = |v: u8| (v as f64 + (255.0 - v as f64) * white).round() as u8;
    RGBColor(mix(c.0), mix(c.1), mix(c.2))
}

fn style(px: f64, colour: RGBColor) -> TextStyle<'static> {
    TextStyle {
        font: (FAMILY, px).into_font(),
        color: colour.to_backend_color(),
        pos: Pos::default(),
    }
}

fn anchored(px: f64, colour: RGBColor, h: HPos, v: VPos) -> TextStyle<'static> {
    style(px, colour).pos(Pos::new(h, v))
}

/// The width `text` takes in `style`, in pixels.
fn width(text: &str, style: &TextStyle) -> f64 {
    match style.font.box_size(text) {
        Ok((w, _)) => w as f64,
        Err(_) => text.chars().count() as f64 * style.font.get_size() * 0.6,
    }
}

/// `text` without control characters, shortened with an ellipsis to fit `max` pixels.
fn fit(text: &str, style: &TextStyle, max: f64) -> String {
    let chars: Vec<char> = text
        .chars()
        .map(|c| if c.is_control() { ' ' } else { c })
        .collect();
    let whole: String = chars.iter().collect();
    if width(&whole, style) <= max {
        return whole;
    }
    let shortened = |keep: usize| -> String {
        let mut s: String = chars[..keep].iter().collect();
        s.truncate(s.trim_end().len());
        s.push('…');
        s
    };
    let (mut ok, mut too_long) = (0usize, chars.len());
    while too_long - ok > 1 {
        let mid = (ok + too_long) / 2;
        if width(&shortened(mid), style) <= max {
            ok = mid;
        } else {
            too_long = mid;
        }
    }
    if ok == 0 {
        String::new()
    } else {
        shortened(ok)
    }
}

/// Draws the whole chart on `root`.
pub(super) fn draw<DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>,
    cmp: &Comparison,
) -> Result<(), ReportError> {
    let (w, h) = root.dim_in_pixel();
    let s = (w as f64 / 1280.0).min(h as f64 / 560.0).clamp(0.7, 2.5);
    root.fill(&WHITE).map_err(draw_error)?;

    let margin = 16.0 * s;
    let title = anchored(26.0 * s, INK, HPos::Center, VPos::Top);
    let text = fit(&cmp.title(), &title, w as f64 - 2.0 * margin);
    root.draw(&Text::new(text, ((w / 2) as i32, margin as i32), title))
        .map_err(draw_error)?;
    let legend_top = margin + 26.0 * s * 1.35;
    let legend_bottom = legend(root, cmp, s, legend_top)?;

    let (_, body) = root.split_vertically(legend_bottom.ceil() as u32 + (6.0 * s) as u32);
    let (left, right) = body.split_horizontally((w as f64 * 0.66) as u32);
    latency(&left, cmp, s)?;
    rates(&right, cmp, s)?;
    Ok(())
}

/// The legend: one coloured swatch and label per run, wrapped onto as many centred lines
/// as needed. Returns where it ends.
fn legend<DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>,
    cmp: &Comparison,
    s: f64,
    top: f64,
) -> Result<f64, ReportError> {
    let (w, _) = root.dim_in_pixel();
    let px = 16.0 * s;
    let label_style = anchored(px, INK, HPos::Left, VPos::Center);
    let swatch = 14.0 * s;
    let gap = 6.0 * s;
    let spacing = 26.0 * s;
    let line_height = px * 1.6;
    let max_line = w as f64 - 32.0 * s;

    let items: Vec<(usize, String, f64)> = cmp
        .runs
        .iter()
        .enumerate()
        .map(|(i, run)| {
            let mut label = run.label.clone();
            if run.client_bound {
                label.push_str(" (client-bound)");
            }
            let label = fit(&label, &label_style, max_line - swatch - gap);
            let item_w = swatch + gap + width(&label, &label_style);
            (i, label, item_w)
        })
        .collect();

    let mut lines: Vec<Vec<&(usize, String, f64)>> = vec![Vec::new()];
    let mut used = 0.0;
    for item in &items {
        let need = if used > 0.0 { spacing + item.2 } else { item.2 };
        if used > 0.0 && used + need > max_line {
            lines.push(Vec::new());
            used = 0.0;
        }
        used += if used > 0.0 { spacing + item.2 } else { item.2 };
        if let Some(line) = lines.last_mut() {
            line.push(item);
        }
    }

    let mut y = top + line_height / 2.0;
    for line in &lines {
        let total: f64 =
            line.iter().map(|i| i.2).sum::<f64>() + spacing * line.len().saturating_sub(1) as f64;
        let mut x = (w as f64 - total) / 2.0;
        for (i, label, item_w) in line {
            let c = colour(*i);
            root.draw(&Rectangle::new(
                [
                    (x as i32, (y - swatch / 2.0) as i32),
                    ((x + swatch) as i32, (y + swatch / 2.0) as i32),
                ],
                c.filled(),
            ))
            .map_err(draw_error)?;
            let warn = cmp.runs[*i].client_bound;
            root.draw(&Text::new(
                label.clone(),
                ((x + swatch + gap) as i32, y as i32),
                label_style.color(if warn { &WARN } else { &INK }),
            ))
            .map_err(draw_error)?;
            x += item_w + spacing;
        }
        y += line_height;
    }
    Ok(y - line_height / 2.0)
}

/// A linear axis of bands (kinds of operation, runs) whose ticks sit at given points,
/// the band centres, and whose labels the chart names.
struct Bands {
    range: Range<f64>,
    ticks: Vec<f64>,
}

impl Ranged for Bands {
    type FormatOption = DefaultFormatting;
    type ValueType = f64;

    fn map(&self, value: &f64, limit: (i32, i32)) -> i32 {
        let span = self.range.end - self.range.start;
        if span == 0.0 {
            return (limit.0 + limit.1) / 2;
        }
        let frac = (value - self.range.start) / span;
        limit.0 + (frac * (limit.1 - limit.0) as f64).round() as i32
    }

    fn key_points<Hint: KeyPointHint>(&self, hint: Hint) -> Vec<f64> {
        if hint.weight().allow_light_points() {
            Vec::new()
        } else {
            self.ticks.clone()
        }
    }

    fn range(&self) -> Range<f64> {
        self.range.clone()
    }
}

/// The lowest decade at or below `v`.
fn decade_floor(v: f64) -> f64 {
    10f64.powf(v.log10().floor())
}

/// `v` rounded up to a round number (1, 1.2, 1.5, 2, 2.5, 3, 4, 5, 6 or 8 times a power
/// of ten).
fn nice_ceil(v: f64) -> f64 {
    if v <= 0.0 || !v.is_finite() {
        return 1.0;
    }
    let d = decade_floor(v);
    [1.0, 1.2, 1.5, 2.0, 2.5, 3.0, 4.0, 5.0, 6.0, 8.0, 10.0]
        .iter()
        .map(|m| m * d)
        .find(|c| *c >= v * (1.0 - 1e-9))
        .unwrap_or(10.0 * d)
}

/// A tick on the seconds axis, without trailing zeros (`10 µs`, `1 ms`).
fn tick_seconds(v: f64) -> String {
    let text = seconds(v);
    match text.split_once(' ') {
        Some((number, unit)) if number.contains('.') => {
            let number = number.trim_end_matches('0').trim_end_matches('.');
            format!("{number} {unit}")
        }
        _ => text,
    }
}

/// A tick on the rate axis: whole numbers with thousands separators.
fn tick_rate(v: f64) -> String {
    if v.is_finite() && v >= 0.0 && v == v.round() {
        super::thousands(v as u64)
    } else {
        rate(v)
    }
}

/// A latency worth drawing on a log axis: finite and above zero.
fn positive(v: f64) -> Option<f64> {
    (v.is_finite() && v > 0.0).then_some(v)
}

/// One run's bar for one kind of operation.
struct Bar {
    kind: usize,
    run: usize,
    median: Option<f64>,
    p95: Option<f64>,
    note: String,
}

fn bars(cmp: &Comparison) -> Vec<Bar> {
    let mut out = Vec::new();
    for (k, kind) in cmp.kinds.iter().enumerate() {
        for (r, op) in kind.per_run.iter().enumerate() {
            let Some(op) = op else { continue };
            let median = positive(op.median);
            let p95 = positive(op.p95);
            let mut note = match (median, p95) {
                (Some(m), Some(p)) => format!("{} · {}", seconds(m), seconds(p)),
                (Some(m), None) => seconds(m),
                (None, Some(p)) => format!("p95 {}", seconds(p)),
                (None, None) if op.count > 0 && op.failed >= op.count => {
                    format!("all {} failed", op.count)
                }
                (None, None) => "no latency".to_string(),
            };
            if op.failed > 0 && op.failed < op.count {
                note.push_str(&format!(" · {} failed", op.failed));
            }
            out.push(Bar {
                kind: k,
                run: r,
                median,
                p95,
                note,
            });
        }
    }
    out
}

/// Latency per kind of operation: a solid bar to the median, a pale one on to the 95th
/// percentile, one bar per run within each kind's band, on a log axis of seconds.
fn latency<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    cmp: &Comparison,
    s: f64,
) -> Result<(), ReportError> {
    let (aw, ah) = area.dim_in_pixel();
    let caption = "Latency per operation: median (solid) and 95th percentile (pale)";
    let caption_style = style(17.0 * s, INK);
    let caption = fit(caption, &caption_style, aw as f64 - 20.0 * s);
    let n = cmp.kinds.len();
    if n == 0 {
        area.draw(&Text::new(
            "No operations recorded",
            ((aw / 2) as i32, (ah / 2) as i32),
            anchored(16.0 * s, MUTED, HPos::Center, VPos::Center),
        ))
        .map_err(draw_error)?;
        return Ok(());
    }
    let runs = cmp.runs.len();
    let bars = bars(cmp);

    let label_style = style(14.0 * s, INK);
    let max_label = aw as f64 * 0.32;
    let labels: Vec<String> = cmp
        .kinds
        .iter()
        .map(|k| fit(&k.label, &label_style, max_label))
        .collect();
    let label_area = labels
        .iter()
        .map(|l| width(l, &label_style))
        .fold(0.0, f64::max)
        + 14.0 * s;

    // Bar geometry in band units (each kind has a band of height 1).
    let pad = 0.12;
    let slot = (1.0 - 2.0 * pad) / runs as f64;
    let bar_h = slot * if runs > 1 { 0.84 } else { 0.7 };
    let caption_h = 17.0 * s * 1.6;
    let x_area = 46.0 * s;
    let plot_h = (ah as f64 - caption_h - x_area - 20.0 * s).max(1.0);
    let plot_w = (aw as f64 - label_area - 10.0 * s - 24.0 * s).max(1.0);
    let bar_px = plot_h / n as f64 * bar_h;
    let note_px = (bar_px * 0.85).min(12.5 * s);
    let note_style = anchored(note_px, MUTED, HPos::Left, VPos::Center);
    let show_notes = note_px >= 8.0;

    // The axis spans every median and 95th percentile, with room left of the shortest
    // bar and right of the longest for its note.
    let values: Vec<f64> = bars
        .iter()
        .flat_map(|b| [b.median, b.p95])
        .flatten()
        .collect();
    let (min_v, max_v) = match (
        values.iter().copied().reduce(f64::min),
        values.iter().copied().reduce(f64::max),
    ) {
        (Some(a), Some(b)) => (a.max(1e-9), b.min(1e5)),
        _ => (1e-4, 1e-1),
    };
    let mut lo = decade_floor(min_v);
    if min_v / lo < 2.0 {
        lo /= 10.0;
    }
    // A bar ending at `end` leaves room for a note `f` of the plot wide when
    // ln(hi / end) >= f * ln(hi / lo), that is ln hi >= (ln end - f ln lo) / (1 - f).
    let least = (max_v * 1.2).max(lo * 10.0);
    let mut hi = least;
    if show_notes {
        for b in &bars {
            let end = b.p95.or(b.median).unwrap_or(lo).max(lo);
            let f = (width(&b.note, &note_style) + 10.0 * s) / plot_w;
            if f < 0.6 {
                let need = ((end.ln() - f * lo.ln()) / (1.0 - f)).exp();
                if need.is_finite() {
                    hi = hi.max(need);
                }
            }
        }
        hi = hi.min(least * 1000.0);
    }

    // Decades carry the labels; when there are too many to label, every few of them
    // does and the rest become light lines, as do 2..9 times each decade while they fit.
    let count = (hi / lo).log10().floor().max(0.0) as i32 + 1;
    let room = (plot_w / (72.0 * s)).floor().max(2.0) as i32;
    let step = ((count + room - 1) / room).max(1);
    let mut decades = Vec::new();
    let mut minors = Vec::new();
    for i in 0..count {
        let d = lo * 10f64.powi(i);
        if i % step == 0 {
            decades.push(d);
        } else {
            minors.push(d);
        }
        if step == 1 {
            minors.extend((2..10).map(|m| d * m as f64).filter(|v| *v < hi));
        }
    }
    let centres: Vec<f64> = (0..n).map(|i| i as f64 + 0.5).collect();
    let x_axis = (lo..hi)
        .log_scale()
        .with_key_points(decades)
        .with_light_points(minors);
    let y_axis = Bands {
        range: 0.0..n as f64,
        ticks: centres,
    };

    let mut chart = ChartBuilder::on(area)
        .caption(caption, caption_style)
        .margin(10.0 * s)
        .margin_right(24.0 * s)
        .x_label_area_size(x_area)
        .y_label_area_size(label_area)
        .build_cartesian_2d(x_axis, y_axis)
        .map_err(draw_error)?;

    let x_fmt = |v: &f64| tick_seconds(*v);
    let y_fmt = |v: &f64| {
        let band = v.floor().max(0.0) as usize;
        n.checked_sub(band + 1)
            .and_then(|i| labels.get(i))
            .cloned()
            .unwrap_or_default()
    };
    chart
        .configure_mesh()
        .disable_y_mesh()
        .bold_line_style(GRID)
        .light_line_style(GRID_LIGHT)
        .axis_style(MUTED)
        .label_style(style(14.0 * s, INK))
        .x_label_formatter(&x_fmt)
        .y_label_formatter(&y_fmt)
        .x_desc("latency (log scale)")
        .axis_desc_style(style(14.0 * s, MUTED))
        .draw()
        .map_err(draw_error)?;

    let plot = chart.plotting_area();
    for band in 1..n {
        let y = band as f64;
        plot.draw(&PathElement::new(vec![(lo, y), (hi, y)], GRID))
            .map_err(draw_error)?;
    }
    for bar in &bars {
        let top = (n - bar.kind) as f64 - pad - slot * bar.run as f64;
        let (y0, y1) = (top - bar_h, top);
        let mid = (y0 + y1) / 2.0;
        let c = colour(bar.run);
        if let Some(p) = bar.p95 {
            plot.draw(&Rectangle::new([(lo, y0), (p, y1)], tint(c, 0.62).filled()))
                .map_err(draw_error)?;
        }
        if let Some(m) = bar.median {
            plot.draw(&Rectangle::new([(lo, y0), (m, y1)], c.filled()))
                .map_err(draw_error)?;
        }
        if show_notes {
            let end = bar.p95.or(bar.median).unwrap_or(lo).max(lo);
            let colour = if bar.median.is_none() && bar.p95.is_none() {
                WARN
            } else {
                MUTED
            };
            plot.draw(
                &(EmptyElement::at((end, mid))
                    + Text::new(
                        bar.note.clone(),
                        ((5.0 * s) as i32, 0),
                        note_style.color(&colour),
                    )),
            )
            .map_err(draw_error)?;
        }
    }
    Ok(())
}

/// Achieved rate (solid bar) against offered rate (outline) per run.
fn rates<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    cmp: &Comparison,
    s: f64,
) -> Result<(), ReportError> {
    let (aw, _) = area.dim_in_pixel();
    let runs = cmp.runs.len();
    let caption_style = style(17.0 * s, INK);
    let caption = fit(
        "Rate: achieved (solid), offered (outline)",
        &caption_style,
        aw as f64 - 20.0 * s,
    );
    let finite = |v: f64| if v.is_finite() { v.max(0.0) } else { 0.0 };
    let top = cmp
        .runs
        .iter()
        .map(|r| finite(r.offered_rate).max(finite(r.achieved_rate)))
        .fold(0.0, f64::max);
    let y_max = nice_ceil(top * 1.15);

    let label_style = style(13.0 * s, INK);
    let y_label_area = ["0.0", &tick_rate(y_max)]
        .iter()
        .map(|t| width(t, &label_style))
        .fold(0.0, f64::max)
        + 16.0 * s;
    let plot_w = (aw as f64 - y_label_area - 40.0 * s).max(1.0);
    let slot_px = plot_w / runs as f64;
    let labels: Vec<String> = cmp
        .runs
        .iter()
        .map(|r| fit(&r.label, &label_style, slot_px - 6.0 * s))
        .collect();

    let x_axis = Bands {
        range: -0.5..runs as f64 - 0.5,
        ticks: (0..runs).map(|i| i as f64).collect(),
    };
    let mut chart = ChartBuilder::on(area)
        .caption(caption, caption_style)
        .margin(10.0 * s)
        .margin_right(20.0 * s)
        .x_label_area_size(46.0 * s)
        .y_label_area_size(y_label_area + 8.0 * s)
        .build_cartesian_2d(x_axis, 0.0..y_max)
        .map_err(draw_error)?;

    let x_fmt = |v: &f64| {
        let i = v.round().max(0.0) as usize;
        labels.get(i).cloned().unwrap_or_default()
    };
    let y_fmt = |v: &f64| tick_rate(*v);
    chart
        .configure_mesh()
        .disable_x_mesh()
        .bold_line_style(GRID)
        .light_line_style(GRID_LIGHT)
        .axis_style(MUTED)
        .y_labels(6)
        .y_max_light_lines(1)
        .label_style(label_style.clone())
        .x_label_formatter(&x_fmt)
        .y_label_formatter(&y_fmt)
        .y_desc("operations per second")
        .axis_desc_style(style(14.0 * s, MUTED))
        .draw()
        .map_err(draw_error)?;

    let plot = chart.plotting_area();
    // Bars a third of their slot wide, but no wider than 90 pixels (at 1280 wide).
    let half = 0.32f64.min(45.0 * s / slot_px.max(1.0));
    let note_px = (13.0 * s).min(slot_px / 7.0).max(8.0);
    for (i, run) in cmp.runs.iter().enumerate() {
        let x = i as f64;
        let c = colour(i);
        let achieved = finite(run.achieved_rate);
        let offered = finite(run.offered_rate);
        plot.draw(&Rectangle::new(
            [(x - half, 0.0), (x + half, achieved)],
            c.filled(),
        ))
        .map_err(draw_error)?;
        if offered > 0.0 {
            plot.draw(&Rectangle::new(
                [(x - half, 0.0), (x + half, offered)],
                c.stroke_width((2.0 * s).round().max(1.0) as u32),
            ))
            .map_err(draw_error)?;
            plot.draw(&PathElement::new(
                vec![(x - half * 1.2, offered), (x + half * 1.2, offered)],
                INK.stroke_width((2.0 * s).round().max(1.0) as u32),
            ))
            .map_err(draw_error)?;
        }

        // Each note with a shorter form for narrow slots.
        let mut notes = vec![(format!("{}/s", rate(achieved)), None, INK)];
        if offered > 0.0 {
            let share = achieved / offered * 100.0;
            notes.push((
                format!("{share:.0}% of {}", rate(offered)),
                Some(format!("{share:.0}%")),
                MUTED,
            ));
        }
        if run.client_bound {
            notes.push(("client-bound".to_string(), None, WARN));
        }
        let line = note_px * 1.3;
        let base = achieved.max(offered);
        for (j, (note, short, colour)) in notes.iter().enumerate() {
            let dy = -(4.0 * s) - line * (notes.len() - 1 - j) as f64;
            let note_style = anchored(note_px, *colour, HPos::Center, VPos::Bottom);
            let mut text = fit(note, &note_style, slot_px - 4.0);
            if let (true, Some(short)) = (&text != note, short) {
                text = fit(short, &note_style, slot_px - 4.0);
            }
            plot.draw(&(EmptyElement::at((x, base)) + Text::new(text, (0, dy as i32), note_style)))
                .map_err(draw_error)?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nice_numbers() {
        assert_eq!(nice_ceil(4300.0), 5000.0);
        assert_eq!(nice_ceil(5750.0), 6000.0);
        assert_eq!(nice_ceil(8100.0), 10000.0);
        assert_eq!(tick_seconds(1e-5), "10 µs");
        assert_eq!(tick_seconds(0.001), "1 ms");
        assert_eq!(tick_seconds(0.0025), "2.5 ms");
        assert_eq!(tick_rate(0.0), "0");
        assert_eq!(tick_rate(6000.0), "6,000");
        assert_eq!(nice_ceil(0.0), 1.0);
        assert_eq!(decade_floor(0.0042), 0.001);
        assert_eq!(tint(RGBColor(0, 0, 0), 0.5), RGBColor(128, 128, 128));
    }
}
