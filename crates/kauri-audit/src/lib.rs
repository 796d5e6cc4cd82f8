//! Kauri's audit log: a machine-readable trace of every authentication and every change,
//! one JSON object per line, each carrying the Windows security event ID an AD
//! administrator already knows (4624 a logon, 4625 a failed one, 4728 a member added to a
//! global group, …), so existing habits and SIEM rules carry over.
//!
//! The log never slows or stops the serving path: [`Auditor::log`] hands the event to one
//! background thread through a bounded queue and returns at once. When the queue is full
//! the event is counted, not waited for, and the writer records how many were lost in the
//! log itself, so a gap is never silent. The writer rotates its files by size and age,
//! keeps a fixed number of them, and can copy every event to the systemd journal.
//!
//! [`reader`] reads the files back (with filters, and following new lines as they are
//! written), which is what `kauri audit` prints.
//!
//! ```no_run
//! use kauri_audit::{AuditConfig, AuditEvent, Auditor, Category, Outcome};
//!
//! let auditor = Auditor::start(&AuditConfig::default(), "kauri-data".as_ref())?;
//! auditor.log(
//!     AuditEvent::new(Category::Authentication, "bind", Outcome::Success)
//!         .with_event_id(4624)
//!         .with_service("ldap")
//!         .with_user("CN=Alice,CN=Users,DC=samdom,DC=example,DC=com")
//!         .with_remote("192.0.2.10:51234")
//!         .with_mechanism("simple"),
//! );
//! # Ok::<(), kauri_audit::AuditError>(())
//! ```

#![deny(missing_docs)]

pub mod config;
pub mod event;
pub mod events;
pub mod journal;
pub mod reader;
pub mod time;
pub mod writer;

pub use config::{AuditConfig, Selection};
pub use event::{AuditEvent, Category, Outcome};
pub use events::{
    computer_event_id, directory_change_event_id, group_event_id, lookup, title, user_event_id,
    AccountOp, EventInfo, GroupOp, EVENTS,
};
pub use reader::{Filter, Follower, LogSet, ReadStats, Record};
pub use time::Timestamp;
pub use writer::{AuditStats, Auditor};

use std::path::PathBuf;

/// Why the audit log could not be started or read: the caller decides whether a DC runs
/// without its audit trail, so every failure is reported rather than swallowed.
#[derive(Debug, thiserror::Error)]
pub enum AuditError {
    /// A file or folder of the log could not be created, opened, read or written.
    #[error("{path}")]
    Io {
        /// The file or folder.
        path: PathBuf,
        /// What the system said.
        #[source]
        source: std::io::Error,
    },
    /// The `[audit]` settings are not usable (an unknown event selector, a zero size).
    #[error("audit configuration: {0}")]
    Config(String),
    /// A time given to a filter is not RFC 3339, a date, or a relative time.
    #[error("not a time: {0:?} (RFC 3339, YYYY-MM-DD, or relative like 30m, 1h, 7d)")]
    Time(String),
    /// The writer thread could not be started.
    #[error("starting the audit writer: {0}")]
    Thread(#[source] std::io::Error),
}

impl AuditError {
    /// An I/O error on `path`.
    pub(crate) fn io(path: impl Into<PathBuf>, source: std::io::Error) -> Self {
        AuditError::Io {
            path: path.into(),
            source,
        }
    }
}
