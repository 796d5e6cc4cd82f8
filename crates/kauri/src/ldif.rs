//! Writing LDIF (RFC 2849): values that are not safe strings go base64-encoded.

use std::io::{self, Write};

use base64::engine::general_purpose::STANDARD as B64;
use base64::Engine;

/// Whether a value can be written as it is (an RFC 2849 SAFE-STRING that does not end in a
/// space): printable ASCII, not starting with a space, colon or `<`.
pub fn is_safe(v: &[u8]) -> bool {
    v.iter().all(|b| (0x20..0x7f).contains(b))
        && !v.starts_with(b" ")
        && !v.starts_with(b":")
        && !v.starts_with(b"<")
        && !v.ends_with(b" ")
}

/// Writes one `name: value` line, or `name:: <base64>` when the value is not safe.
pub fn write_attr(out: &mut impl Write, name: &str, value: &[u8]) -> io::Result<()> {
    if is_safe(value) {
        out.write_all(name.as_bytes())?;
        out.write_all(b": ")?;
        out.write_all(value)?;
        out.write_all(b"\n")
    } else {
        writeln!(out, "{name}:: {}", B64.encode(value))
    }
}

/// Writes a whole entry: its DN, its attributes, and the blank line that ends it.
pub fn write_entry(
    out: &mut impl Write,
    dn: &str,
    attrs: &[(String, Vec<Vec<u8>>)],
) -> io::Result<()> {
    write_attr(out, "dn", dn.as_bytes())?;
    for (name, values) in attrs {
        for v in values {
            write_attr(out, name, v)?;
        }
    }
    out.write_all(b"\n")
}
