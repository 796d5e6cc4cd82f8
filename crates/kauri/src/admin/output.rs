//! What the commands print: aligned tables and `name: value` records for people, JSON for
//! scripts (`--json`), one shape per command whichever the target.

use serde_json::{json, Map, Value};

use super::target::Found;

/// Prints rows under headers, each column as wide as its widest cell.
pub fn table(headers: &[&str], rows: &[Vec<String>]) {
    let mut widths: Vec<usize> = headers.iter().map(|h| h.chars().count()).collect();
    for row in rows {
        for (w, cell) in widths.iter_mut().zip(row) {
            *w = (*w).max(cell.chars().count());
        }
    }
    let line = |cells: Vec<&str>| {
        let mut out = String::new();
        for (i, (cell, w)) in cells.iter().zip(&widths).enumerate() {
            if i + 1 == cells.len() {
                out.push_str(cell);
            } else {
                out.push_str(&format!("{cell:<w$}  "));
            }
        }
        println!("{}", out.trim_end());
    };
    line(headers.to_vec());
    line(
        widths
            .iter()
            .map(|w| "-".repeat(*w))
            .collect::<Vec<_>>()
            .iter()
            .map(String::as_str)
            .collect(),
    );
    for row in rows {
        line(row.iter().map(String::as_str).collect());
    }
}

/// A value as JSON: text when it is UTF-8, else base64 under `{"base64": …}`.
fn value_json(v: &[u8]) -> Value {
    match std::str::from_utf8(v) {
        Ok(t) if !t.chars().any(|c| c.is_control() && c != '\n' && c != '\t') => json!(t),
        _ => {
            use base64::Engine;
            json!({ "base64": base64::engine::general_purpose::STANDARD.encode(v) })
        }
    }
}

/// An entry as a JSON object: `dn` and each attribute as a list of values.
pub fn entry_json(f: &Found) -> Value {
    let mut m = Map::new();
    m.insert("dn".into(), json!(f.dn));
    for (name, values) in &f.attrs {
        m.insert(
            name.clone(),
            Value::Array(values.iter().map(|v| value_json(v)).collect()),
        );
    }
    Value::Object(m)
}

/// Prints an entry for people: its DN, then `name: value` lines (binary values in hex,
/// SIDs and GUIDs in their text forms).
pub fn print_entry(f: &Found) {
    println!("dn: {}", f.dn);
    for (name, values) in &f.attrs {
        for v in values {
            println!("{name}: {}", readable(name, v));
        }
    }
}

/// A value as people read it.
pub fn readable(name: &str, v: &[u8]) -> String {
    if name.eq_ignore_ascii_case("objectSid") {
        if let Ok(sid) = kauri_domain::sid::Sid::from_bytes(v) {
            return sid.to_string();
        }
    }
    if name.eq_ignore_ascii_case("objectGUID") && v.len() == 16 {
        return guid_text(v);
    }
    match std::str::from_utf8(v) {
        Ok(t) if !t.chars().any(char::is_control) => t.to_string(),
        _ => v.iter().map(|b| format!("{b:02x}")).collect(),
    }
}

/// A GUID in its registry form (the first three fields little-endian, as AD writes it).
pub fn guid_text(g: &[u8]) -> String {
    if g.len() != 16 {
        return g.iter().map(|b| format!("{b:02x}")).collect();
    }
    format!(
        "{:02x}{:02x}{:02x}{:02x}-{:02x}{:02x}-{:02x}{:02x}-{:02x}{:02x}-{}",
        g[3],
        g[2],
        g[1],
        g[0],
        g[5],
        g[4],
        g[7],
        g[6],
        g[8],
        g[9],
        g[10..]
            .iter()
            .map(|b| format!("{b:02x}"))
            .collect::<String>()
    )
}

/// Prints a JSON value on one line of its own (pretty).
pub fn print_json(v: &Value) {
    println!(
        "{}",
        serde_json::to_string_pretty(v).unwrap_or_else(|_| v.to_string())
    );
}

/// What a command that changes something says when it succeeds: a line for people, or
/// `{"ok": true, …}` for scripts.
pub fn done(json_out: bool, message: &str, details: Value) {
    if json_out {
        let mut v = match details {
            Value::Object(m) => m,
            _ => Map::new(),
        };
        v.insert("ok".into(), json!(true));
        v.insert("message".into(), json!(message));
        print_json(&Value::Object(v));
    } else {
        println!("{message}");
    }
}
