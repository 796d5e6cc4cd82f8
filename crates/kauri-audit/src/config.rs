//! The `[audit]` settings: where the log goes, when it rotates, how much of it is kept,
//! whether the journal gets a copy, and which events are recorded. Every setting has a
//! default, and unknown keys are an error, like the server's other settings.
//!
//! ```toml
//! [audit]
//! max_file_bytes = 67108864
//! keep_files = 30
//! journal = true
//! events = ["authentication", "change", "!4769"]
//! ```

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::event::{AuditEvent, Category};
use crate::AuditError;

/// The systemd journal's native socket.
pub const JOURNAL_SOCKET: &str = "/run/systemd/journal/socket";

/// How the audit log is kept; embedded in the server's configuration as `[audit]`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct AuditConfig {
    /// Record events at all (default true).
    pub enabled: bool,
    /// Write them to files (default true).
    pub file: bool,
    /// The current log file; rotated files go beside it (default: `<data>/audit/audit.log`).
    pub path: Option<PathBuf>,
    /// Rotate when the file passes this size (default 64 MiB).
    pub max_file_bytes: u64,
    /// Rotate when the file was begun this many hours ago; 0 never (default 24).
    pub max_file_age_hours: u64,
    /// Rotated files kept; older ones are deleted; 0 keeps them all (default 30).
    pub keep_files: usize,
    /// Send every event to the systemd journal too (default false).
    pub journal: bool,
    /// The journal's socket (default: `/run/systemd/journal/socket`).
    pub journal_socket: Option<PathBuf>,
    /// Events queued for the writer before new ones are dropped (and counted) rather
    /// than waited for (default 65536).
    pub buffer_events: usize,
    /// Which events to record: empty for all; otherwise category names
    /// (`authentication`, `change`, …) and event IDs (`4624`), a leading `!` excluding.
    /// With only exclusions, everything else is recorded.
    pub events: Vec<String>,
}

impl Default for AuditConfig {
    fn default() -> Self {
        AuditConfig {
            enabled: true,
            file: true,
            path: None,
            max_file_bytes: 64 * 1024 * 1024,
            max_file_age_hours: 24,
            keep_files: 30,
            journal: false,
            journal_socket: None,
            buffer_events: 65_536,
            events: Vec::new(),
        }
    }
}

impl AuditConfig {
    /// The current log file: `path`, or `<data_dir>/audit/audit.log`.
    pub fn log_path(&self, data_dir: &Path) -> PathBuf {
        match &self.path {
            Some(p) => p.clone(),
            None => default_log_path(data_dir),
        }
    }

    /// The journal socket to send to.
    pub fn journal_socket_path(&self) -> PathBuf {
        self.journal_socket
            .clone()
            .unwrap_or_else(|| PathBuf::from(JOURNAL_SOCKET))
    }

    /// Checks the settings a writer cannot work without, and compiles `events`.
    pub fn validate(&self) -> Result<Selection, AuditError> {
        if self.buffer_events == 0 {
            return Err(AuditError::Config(
                "buffer_events must be at least 1".into(),
            ));
        }
        if self.max_file_bytes == 0 {
            return Err(AuditError::Config(
                "max_file_bytes must be at least 1".into(),
            ));
        }
        Selection::parse(&self.events)
    }

    /// Whether `events` selects this event. Unknown selectors are ignored here;
    /// [`AuditConfig::validate`] reports them.
    pub fn wants(&self, event: &AuditEvent) -> bool {
        Selection::parse_lenient(&self.events).wants(event)
    }
}

/// The default log file of a data folder: `<data>/audit/audit.log`.
pub fn default_log_path(data_dir: &Path) -> PathBuf {
    data_dir.join("audit").join("audit.log")
}

/// One `events` entry.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Selector {
    Category(Category),
    Id(u32),
}

impl Selector {
    fn parse(s: &str) -> Result<Selector, String> {
        let s = s.trim();
        if let Ok(id) = s.parse::<u32>() {
            return Ok(Selector::Id(id));
        }
        s.parse::<Category>().map(Selector::Category)
    }

    fn matches(self, e: &AuditEvent) -> bool {
        match self {
            Selector::Category(c) => e.category == c,
            Selector::Id(id) => e.event_id == Some(id),
        }
    }
}

/// `events` compiled once, so the serving path tests an event without parsing strings.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Selection {
    include: Vec<Selector>,
    exclude: Vec<Selector>,
}

impl Selection {
    /// Compiles `events` entries; an entry that is neither a category nor a number is an
    /// error, so a typo does not silently record everything (or nothing).
    pub fn parse<S: AsRef<str>>(entries: &[S]) -> Result<Selection, AuditError> {
        let mut sel = Selection::default();
        for raw in entries {
            let raw = raw.as_ref();
            let (neg, body) = match raw.trim().strip_prefix('!') {
                Some(rest) => (true, rest),
                None => (false, raw),
            };
            let s = Selector::parse(body)
                .map_err(|e| AuditError::Config(format!("events entry {raw:?}: {e}")))?;
            if neg {
                sel.exclude.push(s);
            } else {
                sel.include.push(s);
            }
        }
        Ok(sel)
    }

    fn parse_lenient<S: AsRef<str>>(entries: &[S]) -> Selection {
        let mut sel = Selection::default();
        for raw in entries {
            let raw = raw.as_ref().trim();
            match raw.strip_prefix('!') {
                Some(rest) => sel.exclude.extend(Selector::parse(rest).ok()),
                None => sel.include.extend(Selector::parse(raw).ok()),
            }
        }
        sel
    }

    /// Whether the event is recorded: it matches an inclusion (or there are none) and no
    /// exclusion.
    pub fn wants(&self, e: &AuditEvent) -> bool {
        (self.include.is_empty() || self.include.iter().any(|s| s.matches(e)))
            && !self.exclude.iter().any(|s| s.matches(e))
    }

    /// Whether every event is recorded (nothing to test).
    pub fn is_all(&self) -> bool {
        self.include.is_empty() && self.exclude.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::event::Outcome;

    #[derive(Deserialize)]
    struct ServerFile {
        #[allow(dead_code)]
        listen: String,
        #[serde(default)]
        audit: AuditConfig,
    }

    #[test]
    fn defaults() {
        let c = AuditConfig::default();
        assert!(c.enabled && c.file && !c.journal);
        assert_eq!(c.max_file_bytes, 64 << 20);
        assert_eq!(c.max_file_age_hours, 24);
        assert_eq!(c.keep_files, 30);
        assert_eq!(c.buffer_events, 65_536);
        assert_eq!(
            c.log_path(Path::new("/srv/kauri")),
            PathBuf::from("/srv/kauri/audit/audit.log")
        );
        assert_eq!(
            c.journal_socket_path(),
            PathBuf::from("/run/systemd/journal/socket")
        );
    }

    #[test]
    fn embeds_as_a_toml_table() {
        let f: ServerFile = toml::from_str(
            "listen = \"x\"\n[audit]\nkeep_files = 3\njournal = true\nevents = [\"authentication\", \"!4625\"]\n",
        )
        .unwrap();
        assert_eq!(f.audit.keep_files, 3);
        assert!(f.audit.journal && f.audit.enabled);
        assert_eq!(f.audit.events, ["authentication", "!4625"]);
        let f: ServerFile = toml::from_str("listen = \"x\"\n").unwrap();
        assert_eq!(f.audit, AuditConfig::default());
        let typo = toml::from_str::<ServerFile>("listen = \"x\"\n[audit]\nkeep_file = 3\n");
        assert!(typo.is_err());
    }

    #[test]
    fn event_selection() {
        let c = AuditConfig {
            events: vec!["authentication".into(), "!4625".into()],
            ..AuditConfig::default()
        };
        assert!(c.validate().is_ok());
        assert!(c.wants(&AuditEvent::logon(Outcome::Success)));
        assert!(!c.wants(&AuditEvent::logon(Outcome::Failure)));
        assert!(!c.wants(&AuditEvent::change("modify", Outcome::Success)));
        // An authentication event without an ID is still an authentication event.
        assert!(c.wants(&AuditEvent::new(
            Category::Authentication,
            "tgt",
            Outcome::Success
        )));

        let only_excl = AuditConfig {
            events: vec!["!change".into()],
            ..AuditConfig::default()
        };
        assert!(only_excl.wants(&AuditEvent::logon(Outcome::Failure)));
        assert!(!only_excl.wants(&AuditEvent::change("add", Outcome::Success)));

        let ids = Selection::parse(&["4728", "4732"]).unwrap();
        assert!(ids.wants(
            &AuditEvent::new(Category::Group, "member_add", Outcome::Success).with_event_id(4728)
        ));
        assert!(!ids.wants(&AuditEvent::logon(Outcome::Success)));

        assert!(AuditConfig::default().validate().unwrap().is_all());
        let bad = AuditConfig {
            events: vec!["authentcation".into()],
            ..AuditConfig::default()
        };
        assert!(matches!(bad.validate(), Err(AuditError::Config(_))));
        let zero = AuditConfig {
            buffer_events: 0,
            ..AuditConfig::default()
        };
        assert!(zero.validate().is_err());
    }
}
