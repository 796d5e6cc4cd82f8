//! The comparison as plain text: runs side by side in the totals, then one group of rows
//! per kind of operation with a row per run, so that any number of runs fits a terminal.

use std::fmt::Write as _;

use super::{op_cells, totals, Comparison, OP_COLUMNS};

/// Characters `s` takes on a terminal (one per character: labels are mostly ASCII).
fn chars(s: &str) -> usize {
    s.chars().count()
}

/// `s` with control characters (which would break the layout) made spaces.
fn clean(s: &str) -> String {
    s.chars()
        .map(|c| if c.is_control() { ' ' } else { c })
        .collect()
}

pub(super) fn text(cmp: &Comparison) -> String {
    let mut out = String::new();
    let title = clean(&cmp.title());
    let _ = writeln!(out, "{title}");
    let _ = writeln!(out, "{}", "=".repeat(chars(&title)));
    let _ = writeln!(out);

    let labels: Vec<String> = cmp.runs.iter().map(|r| clean(&r.label)).collect();

    // Totals: one column per run.
    let rows = totals(cmp.runs);
    let names: Vec<String> = rows
        .iter()
        .map(|r| {
            if r.detail {
                format!("  failed: {}", clean(&r.name))
            } else {
                r.name.clone()
            }
        })
        .collect();
    let name_w = names.iter().map(|n| chars(n)).max().unwrap_or(0);
    let col_w: Vec<usize> = labels
        .iter()
        .enumerate()
        .map(|(i, l)| {
            rows.iter()
                .map(|r| r.values.get(i).map_or(0, |v| chars(&clean(v))))
                .max()
                .unwrap_or(0)
                .max(chars(l))
        })
        .collect();
    let _ = write!(out, "{:name_w$}", "");
    for (l, w) in labels.iter().zip(&col_w) {
        let _ = write!(out, "  {l:>w$}");
    }
    let _ = writeln!(out);
    for (row, name) in rows.iter().zip(&names) {
        let _ = write!(out, "{name:name_w$}");
        for (v, w) in row.values.iter().zip(&col_w) {
            let _ = write!(out, "  {:>w$}", clean(v));
        }
        let _ = writeln!(out);
    }
    let _ = writeln!(out);

    // Operations: a group of rows per kind, a row per run.
    if cmp.kinds.is_empty() {
        let _ = writeln!(out, "No operations recorded.");
        return out;
    }
    let kinds: Vec<String> = cmp.kinds.iter().map(|k| clean(&k.label)).collect();
    let cells: Vec<Vec<[String; 5]>> = cmp
        .kinds
        .iter()
        .map(|k| k.per_run.iter().map(|op| op_cells(*op)).collect())
        .collect();
    let kind_w = kinds
        .iter()
        .map(|k| chars(k))
        .chain([chars("Operation")])
        .max()
        .unwrap_or(0);
    let run_w = labels
        .iter()
        .map(|l| chars(l))
        .chain([chars("Run")])
        .max()
        .unwrap_or(0);
    let mut widths = OP_COLUMNS.map(chars);
    for kind in &cells {
        for run in kind {
            for (w, c) in widths.iter_mut().zip(run) {
                *w = (*w).max(chars(c));
            }
        }
    }
    let _ = write!(out, "{:kind_w$}  {:run_w$}", "Operation", "Run");
    for (h, w) in OP_COLUMNS.iter().zip(&widths) {
        let _ = write!(out, "  {h:>w$}");
    }
    let _ = writeln!(out);
    for (kind, runs) in kinds.iter().zip(&cells) {
        for (r, run) in runs.iter().enumerate() {
            let name = if r == 0 { kind.as_str() } else { "" };
            let label = labels.get(r).map_or("", String::as_str);
            let mut line = format!("{name:kind_w$}  {label:run_w$}");
            for (c, w) in run.iter().zip(&widths) {
                let _ = write!(line, "  {c:>w$}");
            }
            let _ = writeln!(out, "{}", line.trim_end());
        }
    }
    out
}
