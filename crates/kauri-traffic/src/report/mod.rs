//! Several replay runs compared in one picture: latency per kind of operation (median and
//! 95th percentile, one colour per run) beside the rate each run achieved against the
//! rate it was offered. The same comparison comes as a PNG, as SVG, as a self-contained
//! HTML page (chart and tables) and as plain text for the terminal.
//!
//! Runs need not have replayed the same kinds of operation: the comparison covers every
//! kind any run saw, and a kind a run lacks is left empty for that run.

mod canvas;
mod chart;
mod font;
mod html;
mod table;

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use plotters::prelude::*;

use crate::run::{OpStats, RunReport};

/// The smallest width or height, in pixels, a chart can be drawn at and stay legible.
pub const MIN_SIDE: u32 = 320;
/// The largest width or height, in pixels: bounds the memory a PNG needs while drawn.
pub const MAX_SIDE: u32 = 8192;

/// Why a report could not be made.
#[derive(Debug, thiserror::Error)]
pub enum ReportError {
    /// There was nothing to compare.
    #[error("no runs to report")]
    NoRuns,
    /// The asked image size is too small to draw on or too large to hold in memory.
    #[error("image size {width}x{height} is outside {MIN_SIDE}..={MAX_SIDE} pixels a side")]
    Size {
        /// The asked width.
        width: u32,
        /// The asked height.
        height: u32,
    },
    /// The font built into the program could not be read.
    #[error("the chart font could not be loaded")]
    Font,
    /// The drawing library failed.
    #[error("drawing the chart failed: {0}")]
    Draw(String),
    /// The picture could not be encoded as PNG.
    #[error("encoding the chart as PNG: {0}")]
    Png(#[from] png::EncodingError),
    /// The file could not be written.
    #[error("writing {}: {source}", path.display())]
    Io {
        /// The file being written.
        path: PathBuf,
        /// What went wrong.
        source: std::io::Error,
    },
}

/// Draws the comparison of `runs` into a PNG file of `width` × `height` pixels at `path`,
/// so that a comparison can be attached to an issue or a mail as one picture.
pub fn png(runs: &[RunReport], path: &Path, width: u32, height: u32) -> Result<(), ReportError> {
    let cmp = Comparison::new(runs)?;
    check_size(width, height)?;
    font::register()?;
    let mut pixels = vec![0u8; width as usize * height as usize * 3];
    {
        let root = canvas::Canvas::new(&mut pixels, (width, height))?.into_drawing_area();
        chart::draw(&root, &cmp)?;
        root.present().map_err(draw_error)?;
    }
    let mut encoded = Vec::new();
    {
        let mut encoder = png::Encoder::new(&mut encoded, width, height);
        encoder.set_color(png::ColorType::Rgb);
        encoder.set_depth(png::BitDepth::Eight);
        let mut writer = encoder.write_header()?;
        writer.write_image_data(&pixels)?;
        writer.finish()?;
    }
    std::fs::write(path, encoded).map_err(|source| ReportError::Io {
        path: path.to_path_buf(),
        source,
    })
}

/// Draws the comparison of `runs` as an SVG document (at [`suggested_size`]), for pages
/// that scale the chart with the window.
pub fn svg(runs: &[RunReport]) -> Result<String, ReportError> {
    let cmp = Comparison::new(runs)?;
    font::register()?;
    let size = suggested_size(runs);
    let mut out = String::new();
    {
        let root = SVGBackend::with_string(&mut out, size).into_drawing_area();
        chart::draw(&root, &cmp)?;
        root.present().map_err(draw_error)?;
    }
    Ok(out)
}

/// A self-contained HTML page comparing `runs`: the chart as inline SVG, then a totals
/// table and a table of every kind of operation. It has no scripts and loads nothing, so
/// it can be mailed or archived as one file.
pub fn html(runs: &[RunReport]) -> Result<String, ReportError> {
    let cmp = Comparison::new(runs)?;
    let chart = svg(runs)?;
    Ok(html::page(&cmp, &chart))
}

/// The comparison of `runs` as plain text for the terminal: their totals side by side,
/// then one group of rows per kind of operation with a row per run.
pub fn table(runs: &[RunReport]) -> String {
    match Comparison::new(runs) {
        Ok(cmp) => table::text(&cmp),
        Err(_) => "No runs to report.\n".to_string(),
    }
}

/// A chart size, in pixels, that leaves room for every bar of `runs`: wide enough for
/// labels, and taller the more kinds of operation and runs there are.
pub fn suggested_size(runs: &[RunReport]) -> (u32, u32) {
    let kinds = Comparison::new(runs).map_or(1, |c| c.kinds.len()).min(1000) as u32;
    let per_kind = (runs.len().min(1000) as u32 * 16 + 14).max(30);
    let height = (260 + kinds * per_kind).clamp(600, 2400);
    (1280, height)
}

fn check_size(width: u32, height: u32) -> Result<(), ReportError> {
    let ok = |side: u32| (MIN_SIDE..=MAX_SIDE).contains(&side);
    if ok(width) && ok(height) {
        Ok(())
    } else {
        Err(ReportError::Size { width, height })
    }
}

fn draw_error<E: std::error::Error + Send + Sync>(e: DrawingAreaErrorKind<E>) -> ReportError {
    ReportError::Draw(e.to_string())
}

/// The runs, and the union of their kinds of operation in the order first seen.
struct Comparison<'a> {
    runs: &'a [RunReport],
    kinds: Vec<Kind<'a>>,
}

/// One kind of operation and each run's statistics of it (`None` where a run lacks it).
struct Kind<'a> {
    label: String,
    per_run: Vec<Option<&'a OpStats>>,
}

impl<'a> Comparison<'a> {
    fn new(runs: &'a [RunReport]) -> Result<Comparison<'a>, ReportError> {
        if runs.is_empty() {
            return Err(ReportError::NoRuns);
        }
        let mut index: HashMap<(&str, &str), usize> = HashMap::new();
        let mut opcodes: Vec<&str> = Vec::new();
        let mut kinds: Vec<Kind<'a>> = Vec::new();
        for (r, run) in runs.iter().enumerate() {
            for op in &run.operations {
                let key = (op.protocol.as_str(), op.opcode.as_str());
                let i = *index.entry(key).or_insert_with(|| {
                    opcodes.push(key.1);
                    kinds.push(Kind {
                        label: kind_label(op),
                        per_run: vec![None; runs.len()],
                    });
                    kinds.len() - 1
                });
                if let Some(cell @ None) = kinds.get_mut(i).and_then(|k| k.per_run.get_mut(r)) {
                    *cell = Some(op);
                }
            }
        }
        // Two op codes sharing a description would otherwise read as one kind.
        let mut uses: HashMap<String, usize> = HashMap::new();
        for kind in &kinds {
            *uses.entry(kind.label.clone()).or_default() += 1;
        }
        for (kind, opcode) in kinds.iter_mut().zip(&opcodes) {
            if uses.get(&kind.label).is_some_and(|n| *n > 1) {
                kind.label = format!("{} ({opcode})", kind.label);
            }
        }
        Ok(Comparison { runs, kinds })
    }

    /// The title: the runs' labels against each other, and the rate if they share one.
    fn title(&self) -> String {
        let names: Vec<&str> = self.runs.iter().map(|r| r.label.as_str()).collect();
        let mut title = if names.len() == 1 {
            format!("Replay of {}", names[0])
        } else if names.len() <= 4 {
            names.join(" vs ")
        } else {
            format!("{} replay runs compared", names.len())
        };
        let first = self.runs[0].offered_rate;
        if first > 0.0 && first.is_finite() && self.runs.iter().all(|r| r.offered_rate == first) {
            title.push_str(&format!(" at {} ops/s", rate(first)));
        }
        title
    }
}

/// One row of the totals table: what is measured, and its value in each run.
struct TotalRow {
    name: String,
    /// A breakdown of the row above it (a failure reason).
    detail: bool,
    values: Vec<String>,
}

/// The totals of every run, one row per measure, shared by the HTML and text tables.
fn totals(runs: &[RunReport]) -> Vec<TotalRow> {
    let row = |name: &str, f: &dyn Fn(&RunReport) -> String| TotalRow {
        name: name.to_string(),
        detail: false,
        values: runs.iter().map(f).collect(),
    };
    let mut rows = vec![
        row("Server", &|r| r.server.clone()),
        row("Offered rate (ops/s)", &|r| rate(r.offered_rate)),
        row("Achieved rate (ops/s)", &|r| rate(r.achieved_rate)),
        row("Duration", &|r| seconds(r.duration)),
        row("Successful operations", &|r| thousands(r.successful)),
        row("Failed operations", &|r| thousands(r.failed)),
    ];
    let reasons: std::collections::BTreeSet<&String> =
        runs.iter().flat_map(|r| r.failures.keys()).collect();
    for reason in reasons {
        rows.push(TotalRow {
            name: reason.clone(),
            detail: true,
            values: runs
                .iter()
                .map(|r| thousands(r.failures.get(reason).copied().unwrap_or(0)))
                .collect(),
        });
    }
    rows.extend([
        row("Skipped (service not offered)", &|r| thousands(r.skipped)),
        row("Conversations run / planned", &|r| {
            format!(
                "{} / {}",
                thousands(r.conversations),
                thousands(r.planned_conversations)
            )
        }),
        row("Unfinished conversations", &|r| {
            thousands(r.unfinished_conversations)
        }),
        row("Client CPU", &|r| format!("{:.0}%", r.client_cpu * 100.0)),
        row("95% sleep miss", &|r| seconds(r.p95_sleep_miss)),
        row("Max sleep miss", &|r| seconds(r.max_sleep_miss)),
        row("Client-bound", &|r| {
            if r.client_bound { "yes" } else { "no" }.to_string()
        }),
    ]);
    rows
}

/// The cells of one run's statistics of one kind: count, failed, median, p95, max.
fn op_cells(op: Option<&OpStats>) -> [String; 5] {
    match op {
        Some(op) => [
            thousands(op.count),
            thousands(op.failed),
            seconds(op.median),
            seconds(op.p95),
            seconds(op.max),
        ],
        None => Default::default(),
    }
}

/// Headings of [`op_cells`].
const OP_COLUMNS: [&str; 5] = ["Count", "Failed", "Median", "95%", "Max"];

fn kind_label(op: &OpStats) -> String {
    match (op.protocol.is_empty(), op.description.is_empty()) {
        (false, false) => format!("{} {}", op.protocol, op.description),
        (false, true) => format!("{} op {}", op.protocol, op.opcode),
        (true, false) => op.description.clone(),
        (true, true) => format!("op {}", op.opcode),
    }
}

/// A duration in seconds with three significant digits and a unit (`1.23 ms`).
fn seconds(s: f64) -> String {
    if !s.is_finite() || s < 0.0 {
        return "?".to_string();
    }
    if s == 0.0 {
        return "0".to_string();
    }
    let (v, unit) = if s >= 1.0 {
        (s, "s")
    } else if s >= 1e-3 {
        (s * 1e3, "ms")
    } else if s >= 1e-6 {
        (s * 1e6, "µs")
    } else {
        (s * 1e9, "ns")
    };
    if v >= 99.95 {
        format!("{v:.0} {unit}")
    } else if v >= 9.995 {
        format!("{v:.1} {unit}")
    } else {
        format!("{v:.2} {unit}")
    }
}

/// An operation rate: whole numbers with thousands separators from 100 up (and below 100
/// when whole), one decimal otherwise.
fn rate(r: f64) -> String {
    if !r.is_finite() {
        return "?".to_string();
    }
    if r.abs() >= 99.95 || r == r.round() {
        let sign = if r < 0.0 { "-" } else { "" };
        format!("{sign}{}", thousands(r.abs().round() as u64))
    } else {
        format!("{r:.1}")
    }
}

/// A count with thousands separators (`12,345`).
fn thousands(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::with_capacity(digits.len() + digits.len() / 3);
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formats() {
        assert_eq!(seconds(0.0), "0");
        assert_eq!(seconds(0.001234), "1.23 ms");
        assert_eq!(seconds(0.000_012_34), "12.3 µs");
        assert_eq!(seconds(2.5), "2.50 s");
        assert_eq!(seconds(0.1234), "123 ms");
        assert_eq!(seconds(f64::NAN), "?");
        assert_eq!(rate(5000.0), "5,000");
        assert_eq!(rate(1_234_567.4), "1,234,567");
        assert_eq!(rate(12.34), "12.3");
        assert_eq!(rate(0.0), "0");
        assert_eq!(thousands(999), "999");
        assert_eq!(thousands(1000), "1,000");
    }

    fn stats(protocol: &str, opcode: &str, description: &str) -> OpStats {
        OpStats::from_latencies(protocol, opcode, description, 0, &mut [0.001])
    }

    fn run(label: &str, operations: Vec<OpStats>) -> RunReport {
        RunReport {
            version: crate::run::RUN_FORMAT,
            label: label.into(),
            server: String::new(),
            started: String::new(),
            source: String::new(),
            duration: 1.0,
            offered_rate: 10.0,
            achieved_rate: 10.0,
            planned_conversations: 0,
            planned_operations: 0,
            conversations: 0,
            unfinished_conversations: 0,
            successful: 0,
            failed: 0,
            skipped: 0,
            failures: Default::default(),
            max_sleep_miss: 0.0,
            p95_sleep_miss: 0.0,
            p95_client_lag: 0.0,
            client_cpu: 0.0,
            client_bound: false,
            operations,
        }
    }

    #[test]
    fn kinds_are_the_union_in_first_seen_order() {
        let runs = [
            run(
                "a",
                vec![
                    stats("ldap", "3", "searchRequest"),
                    stats("dns", "0", "query"),
                ],
            ),
            run(
                "b",
                vec![
                    stats("kerberos", "10", "AS-REQ"),
                    stats("ldap", "3", "searchRequest"),
                    stats("ldap", "9", "query"),
                    stats("ldap", "8", "query"),
                    stats("", "7", ""),
                ],
            ),
        ];
        let cmp = Comparison::new(&runs).expect("runs");
        let labels: Vec<&str> = cmp.kinds.iter().map(|k| k.label.as_str()).collect();
        assert_eq!(
            labels,
            [
                "ldap searchRequest",
                "dns query",
                "kerberos AS-REQ",
                "ldap query (9)",
                "ldap query (8)",
                "op 7"
            ]
        );
        let present: Vec<(bool, bool)> = cmp
            .kinds
            .iter()
            .map(|k| (k.per_run[0].is_some(), k.per_run[1].is_some()))
            .collect();
        assert_eq!(present[0], (true, true));
        assert_eq!(present[1], (true, false));
        assert_eq!(present[2], (false, true));
        assert_eq!(cmp.title(), "a vs b at 10 ops/s");
        assert!(Comparison::new(&[]).is_err());
    }

    #[test]
    fn sizes() {
        assert!(check_size(640, 480).is_ok());
        assert!(check_size(10, 480).is_err());
        assert!(check_size(640, MAX_SIDE + 1).is_err());
    }
}
