//! The comparison as one self-contained HTML page: inline CSS, the chart as inline SVG,
//! and the tables; no scripts and nothing fetched, so the file can be mailed or archived.

use std::fmt::Write as _;

use super::chart::colour;
use super::{op_cells, totals, Comparison, OP_COLUMNS};

const STYLE: &str = r#"
:root { color-scheme: light; }
body { font-family: system-ui, -apple-system, "Segoe UI", "DejaVu Sans", sans-serif;
  color: #212121; background: #fff; max-width: 1320px; margin: 2rem auto; padding: 0 1rem;
  line-height: 1.4; }
h1 { font-size: 1.6rem; margin: 0 0 .3rem; }
h2 { font-size: 1.15rem; margin: 2rem 0 .6rem; padding-bottom: .25rem;
  border-bottom: 1px solid #ddd; }
p.sub { color: #555; margin: 0 0 1rem; }
figure { margin: 1rem 0; }
figure svg { display: block; width: 100%; height: auto; }
figcaption { color: #555; font-size: .9rem; }
.scroll { overflow-x: auto; }
table { border-collapse: collapse; font-size: .9rem; }
th, td { padding: .3rem .5rem; border-bottom: 1px solid #eee; text-align: left;
  white-space: nowrap; }
thead th { border-bottom: 2px solid #ccc; vertical-align: bottom; }
th.n, td.n { text-align: right; font-variant-numeric: tabular-nums; }
th.run { text-align: center; }
.group { border-left: 1px solid #ddd; }
td.missing { background: #f7f7f7; }
tr.detail td:first-child { padding-left: 1.8rem; color: #555; }
tbody tr:hover { background: #f3f7fb; }
.swatch { display: inline-block; width: .8em; height: .8em; margin-right: .4em;
  border-radius: 2px; vertical-align: -.05em; }
.warn { color: #b4281e; font-weight: 600; }
footer { margin: 2rem 0 1rem; color: #777; font-size: .85rem; }
"#;

/// `s` safe in HTML text and attribute values.
fn esc(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c if c.is_control() && c != '\n' && c != '\t' => out.push(' '),
            c => out.push(c),
        }
    }
    out
}

/// A run's colour swatch and label.
fn run_heading(i: usize, label: &str) -> String {
    let c = colour(i);
    format!(
        r#"<span class="swatch" style="background:#{:02x}{:02x}{:02x}"></span>{}"#,
        c.0,
        c.1,
        c.2,
        esc(label)
    )
}

pub(super) fn page(cmp: &Comparison, svg: &str) -> String {
    let mut h = String::new();
    let title = esc(&cmp.title());
    let _ = writeln!(h, "<!DOCTYPE html>");
    let _ = writeln!(h, r#"<html lang="en">"#);
    let _ = writeln!(h, r#"<head><meta charset="utf-8">"#);
    let _ = writeln!(
        h,
        r#"<meta name="viewport" content="width=device-width, initial-scale=1">"#
    );
    let _ = writeln!(h, "<title>{title}</title>");
    let _ = writeln!(h, "<style>{STYLE}</style>\n</head>\n<body>");
    let _ = writeln!(h, "<h1>{title}</h1>");
    let _ = writeln!(
        h,
        r#"<p class="sub">Replay runs compared: {} run{}, {} kind{} of operation.</p>"#,
        cmp.runs.len(),
        if cmp.runs.len() == 1 { "" } else { "s" },
        cmp.kinds.len(),
        if cmp.kinds.len() == 1 { "" } else { "s" },
    );

    // The runs.
    let _ = writeln!(h, "<h2>Runs</h2>");
    let _ = writeln!(h, r#"<div class="scroll"><table class="runs">"#);
    let _ = writeln!(
        h,
        "<thead><tr><th>Run</th><th>Server</th><th>Replayed</th><th>Started</th>\
         <th class=\"n\">Duration</th></tr></thead><tbody>"
    );
    for (i, run) in cmp.runs.iter().enumerate() {
        let _ = writeln!(
            h,
            r#"<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td class="n">{}</td></tr>"#,
            run_heading(i, &run.label),
            esc(&run.server),
            esc(&run.source),
            esc(&run.started),
            esc(&super::seconds(run.duration)),
        );
    }
    let _ = writeln!(h, "</tbody></table></div>");

    // The chart.
    let _ = writeln!(h, "<figure>\n{svg}");
    let _ = writeln!(
        h,
        "<figcaption>Left: latency per kind of operation, solid to the median and pale on \
         to the 95th percentile (log scale). Right: the rate each run achieved (solid) \
         against the rate it was offered (outline).</figcaption>\n</figure>"
    );

    // Totals.
    let _ = writeln!(h, "<h2>Totals</h2>");
    let _ = writeln!(h, r#"<div class="scroll"><table class="totals">"#);
    let _ = write!(h, "<thead><tr><th></th>");
    for (i, run) in cmp.runs.iter().enumerate() {
        let _ = write!(h, r#"<th class="n">{}</th>"#, run_heading(i, &run.label));
    }
    let _ = writeln!(h, "</tr></thead><tbody>");
    for row in totals(cmp.runs) {
        let class = if row.detail { r#" class="detail""# } else { "" };
        let name = if row.detail {
            format!("failed: {}", esc(&row.name))
        } else {
            esc(&row.name)
        };
        let _ = write!(h, "<tr{class}><td>{name}</td>");
        let warn = row.name == "Client-bound";
        for v in &row.values {
            let cls = if warn && v == "yes" { "n warn" } else { "n" };
            let _ = write!(h, r#"<td class="{cls}">{}</td>"#, esc(v));
        }
        let _ = writeln!(h, "</tr>");
    }
    let _ = writeln!(h, "</tbody></table></div>");

    // Operations.
    let _ = writeln!(h, "<h2>Operations</h2>");
    if cmp.kinds.is_empty() {
        let _ = writeln!(h, "<p>No operations recorded.</p>");
    } else {
        let _ = writeln!(h, r#"<div class="scroll"><table class="ops">"#);
        let _ = write!(h, r#"<thead><tr><th rowspan="2">Operation</th>"#);
        for (i, run) in cmp.runs.iter().enumerate() {
            let _ = write!(
                h,
                r#"<th class="run group" colspan="{}">{}</th>"#,
                OP_COLUMNS.len(),
                run_heading(i, &run.label)
            );
        }
        let _ = write!(h, "</tr>\n<tr>");
        for _ in cmp.runs {
            for (j, c) in OP_COLUMNS.iter().enumerate() {
                let cls = if j == 0 { "n group" } else { "n" };
                let _ = write!(h, r#"<th class="{cls}">{c}</th>"#);
            }
        }
        let _ = writeln!(h, "</tr></thead><tbody>");
        for kind in &cmp.kinds {
            let _ = write!(h, "<tr><td>{}</td>", esc(&kind.label));
            for op in &kind.per_run {
                let missing = if op.is_none() { " missing" } else { "" };
                for (j, cell) in op_cells(*op).iter().enumerate() {
                    let group = if j == 0 { " group" } else { "" };
                    let _ = write!(h, r#"<td class="n{group}{missing}">{}</td>"#, esc(cell));
                }
            }
            let _ = writeln!(h, "</tr>");
        }
        let _ = writeln!(h, "</tbody></table></div>");
    }
    let _ = writeln!(h, "<footer>Made by kauri traffic report.</footer>");
    let _ = writeln!(h, "</body>\n</html>");
    h
}
