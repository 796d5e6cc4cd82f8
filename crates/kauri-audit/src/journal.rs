//! A copy of each event for the systemd journal, over its native protocol (one datagram
//! of `FIELD=value` lines per entry, see systemd's "Native Journal Protocol"), written
//! here rather than through libsystemd so Kauri links nothing it does not need. A value
//! holding a newline goes in the binary form: the name, a newline, the length as 64-bit
//! little-endian, the bytes, a newline.

use std::os::unix::net::UnixDatagram;
use std::path::PathBuf;

use crate::event::{AuditEvent, Outcome};

/// The journal sink of the writer thread. When the socket is missing or refuses an
/// entry, a warning is logged once and the file log carries on alone.
pub(crate) struct Journal {
    socket: Option<UnixDatagram>,
    path: PathBuf,
    warned: bool,
    buf: Vec<u8>,
}

impl Journal {
    /// Connects to the journal's socket; a missing journal is a warning, not an error.
    pub(crate) fn connect(path: PathBuf) -> Journal {
        let mut j = Journal {
            socket: None,
            path,
            warned: false,
            buf: Vec::with_capacity(1024),
        };
        match UnixDatagram::unbound().and_then(|s| s.connect(&j.path).map(|()| s)) {
            Ok(s) => j.socket = Some(s),
            Err(e) => j.warn(&e),
        }
        j
    }

    fn warn(&mut self, e: &std::io::Error) {
        if !self.warned {
            self.warned = true;
            tracing::warn!(
                socket = %self.path.display(),
                "audit events are not sent to the systemd journal: {e}"
            );
        }
    }

    /// Sends one event; `line` is its JSON form, which becomes the MESSAGE.
    pub(crate) fn send(&mut self, event: &AuditEvent, line: &[u8]) {
        let Some(socket) = &self.socket else {
            return;
        };
        self.buf.clear();
        encode(&mut self.buf, event, line);
        if let Err(e) = socket.send(&self.buf) {
            // journald restarted, or the entry is larger than a datagram may be.
            self.warn(&e);
        }
    }
}

/// The journal entry of an event.
pub(crate) fn encode(out: &mut Vec<u8>, event: &AuditEvent, line: &[u8]) {
    field(out, "MESSAGE", line);
    let priority: &[u8] = match event.outcome {
        Outcome::Success => b"5", // notice
        Outcome::Failure => b"4", // warning
    };
    field(out, "PRIORITY", priority);
    field(out, "SYSLOG_IDENTIFIER", b"kauri");
    if let Some(id) = event.event_id {
        field(out, "KAURI_EVENT_ID", id.to_string().as_bytes());
    }
    field(out, "KAURI_CATEGORY", event.category.as_str().as_bytes());
    field(out, "KAURI_ACTION", event.action.as_bytes());
    field(out, "KAURI_OUTCOME", event.outcome.as_str().as_bytes());
    if let Some(u) = &event.user {
        field(out, "KAURI_USER", u.as_bytes());
    }
    if let Some(dn) = &event.dn {
        field(out, "KAURI_DN", dn.as_bytes());
    }
    if let Some(r) = &event.remote {
        field(out, "KAURI_REMOTE", r.as_bytes());
    }
}

/// Appends one field of a journal entry (`NAME=value`, or the length-prefixed form when
/// the value holds a newline). `name` must be upper-case letters, digits and `_`.
pub fn field(out: &mut Vec<u8>, name: &str, value: &[u8]) {
    out.extend_from_slice(name.as_bytes());
    if value.contains(&b'\n') {
        out.push(b'\n');
        out.extend_from_slice(&(value.len() as u64).to_le_bytes());
        out.extend_from_slice(value);
    } else {
        out.push(b'=');
        out.extend_from_slice(value);
    }
    out.push(b'\n');
}

/// Reads an entry back into (name, value) pairs: for tests, and to check the encoding.
pub fn decode(mut b: &[u8]) -> Option<Vec<(String, Vec<u8>)>> {
    let mut fields = Vec::new();
    while !b.is_empty() {
        let nl = b.iter().position(|&c| c == b'\n')?;
        let line = &b[..nl];
        if let Some(eq) = line.iter().position(|&c| c == b'=') {
            fields.push((
                String::from_utf8(line[..eq].to_vec()).ok()?,
                line[eq + 1..].to_vec(),
            ));
            b = &b[nl + 1..];
        } else {
            let name = String::from_utf8(line.to_vec()).ok()?;
            let rest = &b[nl + 1..];
            let len = u64::from_le_bytes(rest.get(..8)?.try_into().ok()?) as usize;
            let value = rest.get(8..8 + len)?.to_vec();
            if rest.get(8 + len) != Some(&b'\n') {
                return None;
            }
            fields.push((name, value));
            b = &rest[9 + len..];
        }
    }
    Some(fields)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::event::Category;

    #[test]
    fn plain_and_binary_fields() {
        let e = AuditEvent::logon(Outcome::Failure)
            .with_user("alice")
            .with_dn("CN=a\nb,DC=x");
        let line = e.to_json_line();
        let mut out = Vec::new();
        encode(&mut out, &e, line.as_bytes());
        let f = decode(&out).unwrap();
        let get = |n: &str| f.iter().find(|(k, _)| k == n).map(|(_, v)| v.clone());
        assert_eq!(get("MESSAGE").unwrap(), line.as_bytes());
        assert_eq!(get("PRIORITY").unwrap(), b"4");
        assert_eq!(get("SYSLOG_IDENTIFIER").unwrap(), b"kauri");
        assert_eq!(get("KAURI_EVENT_ID").unwrap(), b"4625");
        assert_eq!(get("KAURI_CATEGORY").unwrap(), b"authentication");
        assert_eq!(get("KAURI_DN").unwrap(), b"CN=a\nb,DC=x");
        // The DN went in the length-prefixed form.
        assert!(out.windows(9).any(|w| w == b"KAURI_DN\n"));

        let ok = AuditEvent::new(Category::Change, "add", Outcome::Success);
        let mut out = Vec::new();
        encode(&mut out, &ok, b"{}");
        let f = decode(&out).unwrap();
        assert!(f.iter().any(|(k, v)| k == "PRIORITY" && v == b"5"));
        assert!(!f.iter().any(|(k, _)| k == "KAURI_EVENT_ID"));
    }
}
