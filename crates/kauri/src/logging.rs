//! Where Kauri's log goes. Started by systemd with its output on the journal, every event
//! is sent to the journal over its native protocol, with the event's fields as journal
//! fields (`KAURI_OP=bind`, `KAURI_PEER=…`, `KAURI_ELAPSED_US=…`) that `journalctl` can
//! select on; otherwise events are written to standard error. What is logged is a filter
//! (`RUST_LOG`'s syntax) that the server's `log` setting replaces, also while serving.

use std::fmt::Write as _;
use std::io::IsTerminal as _;
use std::os::unix::net::UnixDatagram;
use std::path::Path;
use std::sync::OnceLock;

use tracing::field::{Field, Visit};
use tracing::{Event, Level, Subscriber};
use tracing_subscriber::layer::{Context, SubscriberExt};
use tracing_subscriber::util::SubscriberInitExt;
use tracing_subscriber::{reload, EnvFilter, Layer, Registry};

/// The filter's handle, to replace it from the settings.
static FILTER: OnceLock<reload::Handle<EnvFilter, Registry>> = OnceLock::new();

/// Whether the filter came from `RUST_LOG`, which then wins over the settings.
static FROM_ENV: OnceLock<bool> = OnceLock::new();

/// Starts logging for the whole process: to the journal when standard error is the
/// journal's stream (systemd says so in `JOURNAL_STREAM`), to standard error otherwise.
/// Commands log warnings only unless `RUST_LOG` says more.
pub fn init() {
    let (filter, from_env) = match EnvFilter::try_from_default_env() {
        Ok(f) => (f, true),
        Err(_) => (EnvFilter::new("warn"), false),
    };
    let _ = FROM_ENV.set(from_env);
    let (filter, handle) = reload::Layer::new(filter);
    let _ = FILTER.set(handle);
    let registry = tracing_subscriber::registry().with(filter);
    let journal = stderr_is_journal()
        .then(|| JournalLayer::connect(Path::new(kauri_audit::config::JOURNAL_SOCKET)).ok())
        .flatten();
    match journal {
        Some(j) => registry.with(j).init(),
        None => registry
            .with(
                tracing_subscriber::fmt::layer()
                    .with_writer(std::io::stderr)
                    .with_ansi(std::io::stderr().is_terminal()),
            )
            .init(),
    }
}

/// Replaces the filter with the `log` setting's directives, unless `RUST_LOG` chose it.
pub fn set_filter(directives: &str) -> Result<(), String> {
    if FROM_ENV.get().copied().unwrap_or(false) {
        return Ok(());
    }
    let filter =
        EnvFilter::try_new(directives).map_err(|e| format!("log = \"{directives}\": {e}"))?;
    match FILTER.get() {
        Some(h) => h.reload(filter).map_err(|e| e.to_string()),
        None => Ok(()),
    }
}

/// Checks a `log` setting without applying it.
pub fn check_filter(directives: &str) -> Result<(), String> {
    EnvFilter::try_new(directives)
        .map(|_| ())
        .map_err(|e| format!("log = \"{directives}\": {e}"))
}

/// Whether standard error is the journal stream systemd connected it to: `JOURNAL_STREAM`
/// holds that stream's device and inode, which must be standard error's (a child whose
/// output was redirected elsewhere inherits the variable but not the stream).
fn stderr_is_journal() -> bool {
    let Ok(v) = std::env::var("JOURNAL_STREAM") else {
        return false;
    };
    let Some((dev, ino)) = v.split_once(':') else {
        return false;
    };
    let (Ok(dev), Ok(ino)) = (dev.parse::<u64>(), ino.parse::<u64>()) else {
        return false;
    };
    // SAFETY: fstat writes the one struct passed; fd 2 is only inspected.
    let mut st: libc::stat = unsafe { std::mem::zeroed() };
    if unsafe { libc::fstat(2, &mut st) } != 0 {
        return false;
    }
    st.st_dev as u64 == dev && st.st_ino as u64 == ino
}

/// Sends each event to the journal as one datagram of fields.
pub struct JournalLayer {
    socket: UnixDatagram,
}

impl JournalLayer {
    /// Connects to the journal's socket (`path`: the journal's, or a test's).
    pub fn connect(path: &Path) -> std::io::Result<JournalLayer> {
        let socket = UnixDatagram::unbound()?;
        socket.connect(path)?;
        Ok(JournalLayer { socket })
    }
}

/// The journal's priority of a level (syslog's numbers).
fn priority(level: &Level) -> &'static [u8] {
    match *level {
        Level::ERROR => b"3",
        Level::WARN => b"4",
        Level::INFO => b"6",
        Level::DEBUG | Level::TRACE => b"7",
    }
}

/// An event's message and fields as text.
#[derive(Default)]
struct Fields {
    message: String,
    fields: Vec<(String, String)>,
}

impl Visit for Fields {
    fn record_str(&mut self, field: &Field, value: &str) {
        if field.name() == "message" {
            self.message.push_str(value);
        } else {
            self.fields
                .push((field.name().to_string(), value.to_string()));
        }
    }

    fn record_debug(&mut self, field: &Field, value: &dyn std::fmt::Debug) {
        let text = format!("{value:?}");
        if field.name() == "message" {
            self.message.push_str(&text);
        } else {
            self.fields.push((field.name().to_string(), text));
        }
    }
}

/// A field's journal name: `KAURI_` and the name upper-cased, anything but letters and
/// digits made `_` (the journal accepts nothing else).
fn journal_name(name: &str) -> String {
    let mut out = String::with_capacity(name.len() + 6);
    out.push_str("KAURI_");
    for c in name.chars() {
        out.push(if c.is_ascii_alphanumeric() {
            c.to_ascii_uppercase()
        } else {
            '_'
        });
    }
    out
}

/// An event as one line of text: its message, then its fields as `name=value`.
fn text(message: &str, fields: &[(String, String)]) -> String {
    let mut text = message.to_string();
    for (k, v) in fields {
        let gap = if text.is_empty() { "" } else { " " };
        let _ = write!(text, "{gap}{k}={v}");
    }
    text
}

/// The journal entry of an event: `MESSAGE` (its [`text`], as standard error would show
/// it), `PRIORITY`, `SYSLOG_IDENTIFIER`, the code's place, and each field on its own.
pub fn entry(
    level: &Level,
    target: &str,
    file: Option<&str>,
    line: Option<u32>,
    message: &str,
    fields: &[(String, String)],
) -> Vec<u8> {
    use kauri_audit::journal::field;
    let text = text(message, fields);
    let mut out = Vec::with_capacity(256);
    field(&mut out, "MESSAGE", text.as_bytes());
    field(&mut out, "PRIORITY", priority(level));
    field(&mut out, "SYSLOG_IDENTIFIER", b"kauri");
    field(&mut out, "KAURI_TARGET", target.as_bytes());
    if let Some(f) = file {
        field(&mut out, "CODE_FILE", f.as_bytes());
    }
    if let Some(l) = line {
        field(&mut out, "CODE_LINE", l.to_string().as_bytes());
    }
    for (k, v) in fields {
        field(&mut out, &journal_name(k), v.as_bytes());
    }
    out
}

impl<S: Subscriber> Layer<S> for JournalLayer {
    fn on_event(&self, event: &Event<'_>, _ctx: Context<'_, S>) {
        let mut f = Fields::default();
        event.record(&mut f);
        let meta = event.metadata();
        let datagram = entry(
            meta.level(),
            meta.target(),
            meta.file(),
            meta.line(),
            &f.message,
            &f.fields,
        );
        if self.socket.send(&datagram).is_err() {
            // journald restarting, or an entry larger than a datagram: standard error
            // still reaches the journal, without the fields.
            eprintln!("{} {}", meta.level(), text(&f.message, &f.fields));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn events_reach_the_journal_with_their_fields() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("journal.socket");
        let journal = UnixDatagram::bind(&path).unwrap();
        let layer = JournalLayer::connect(&path).unwrap();
        let subscriber = tracing_subscriber::registry().with(layer);
        tracing::subscriber::with_default(subscriber, || {
            tracing::warn!(
                op = "bind",
                code = 49u32,
                peer = "192.0.2.7:5000",
                "request refused"
            );
        });
        let mut buf = vec![0u8; 65536];
        let n = journal.recv(&mut buf).unwrap();
        let fields = kauri_audit::journal::decode(&buf[..n]).unwrap();
        let get = |k: &str| {
            fields
                .iter()
                .find(|(n, _)| n == k)
                .map(|(_, v)| String::from_utf8_lossy(v).into_owned())
        };
        assert_eq!(
            get("MESSAGE").as_deref(),
            Some("request refused op=bind code=49 peer=192.0.2.7:5000")
        );
        assert_eq!(get("PRIORITY").as_deref(), Some("4"));
        assert_eq!(get("SYSLOG_IDENTIFIER").as_deref(), Some("kauri"));
        assert_eq!(get("KAURI_OP").as_deref(), Some("bind"));
        assert_eq!(get("KAURI_CODE").as_deref(), Some("49"));
        assert_eq!(get("KAURI_PEER").as_deref(), Some("192.0.2.7:5000"));
        assert!(get("CODE_LINE").is_some());

        // An event with fields only: the message is the fields.
        let layer = JournalLayer::connect(&path).unwrap();
        tracing::subscriber::with_default(tracing_subscriber::registry().with(layer), || {
            tracing::debug!(op = "search", code = 0u32);
        });
        let n = journal.recv(&mut buf).unwrap();
        let fields = kauri_audit::journal::decode(&buf[..n]).unwrap();
        let message = fields.iter().find(|(n, _)| n == "MESSAGE").unwrap();
        assert_eq!(message.1, b"op=search code=0");
    }

    #[test]
    fn field_names_are_what_the_journal_accepts() {
        assert_eq!(journal_name("elapsed_us"), "KAURI_ELAPSED_US");
        assert_eq!(journal_name("a.b-c"), "KAURI_A_B_C");
    }

    #[test]
    fn a_stream_that_is_not_standard_error_is_not_the_journal() {
        // Only this test reads or sets the variable.
        std::env::set_var("JOURNAL_STREAM", "1:1");
        assert!(!stderr_is_journal());
        std::env::set_var("JOURNAL_STREAM", "junk");
        assert!(!stderr_is_journal());
        std::env::remove_var("JOURNAL_STREAM");
    }
}
