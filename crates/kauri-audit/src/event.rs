//! One audit record: who did what to which object, from where, and how it ended, as one
//! JSON object per line. Fields that do not apply are left out of the line, not written
//! as `null`, so a line holds what the event says and nothing else. Attribute *names* are
//! recorded, never values: the log must not become a second copy of passwords and
//! personal data.

use std::fmt;
use std::str::FromStr;
use std::time::Duration;

use serde::{Deserialize, Serialize};

use crate::time::Timestamp;

/// What kind of thing happened; the broad selector of `[audit] events` and
/// `kauri audit --category`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Category {
    /// A bind, a Kerberos ticket, an NTLM validation: someone proving who they are.
    Authentication,
    /// The groups a logon's token was built with (4627).
    Token,
    /// A directory object added, modified, renamed or deleted.
    Change,
    /// A password changed or reset.
    Password,
    /// A group created, changed or deleted, or its members changed.
    Group,
    /// A user or computer account created, enabled, disabled, locked, renamed, deleted.
    Account,
    /// The audit log's own records (events it had to drop).
    Audit,
}

impl Category {
    /// Every category, in documentation order.
    pub const ALL: [Category; 7] = [
        Category::Authentication,
        Category::Token,
        Category::Change,
        Category::Password,
        Category::Group,
        Category::Account,
        Category::Audit,
    ];

    /// The name used in the log, the configuration and on the command line.
    pub fn as_str(self) -> &'static str {
        match self {
            Category::Authentication => "authentication",
            Category::Token => "token",
            Category::Change => "change",
            Category::Password => "password",
            Category::Group => "group",
            Category::Account => "account",
            Category::Audit => "audit",
        }
    }
}

impl fmt::Display for Category {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for Category {
    type Err = String;

    /// A category by its name, case-insensitively.
    fn from_str(s: &str) -> Result<Category, String> {
        Category::ALL
            .into_iter()
            .find(|c| c.as_str().eq_ignore_ascii_case(s))
            .ok_or_else(|| {
                let names: Vec<&str> = Category::ALL.iter().map(|c| c.as_str()).collect();
                format!("unknown category {s:?} (one of {})", names.join(", "))
            })
    }
}

/// Whether the attempt succeeded; failures are what an investigation looks for first.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Outcome {
    /// It was done.
    Success,
    /// It was refused or failed.
    Failure,
}

impl Outcome {
    /// `success` or `failure`, as in the log.
    pub fn as_str(self) -> &'static str {
        match self {
            Outcome::Success => "success",
            Outcome::Failure => "failure",
        }
    }

    /// Success when `ok`, else failure: for callers holding a `Result`.
    pub fn from_ok(ok: bool) -> Outcome {
        if ok {
            Outcome::Success
        } else {
            Outcome::Failure
        }
    }
}

impl fmt::Display for Outcome {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// One audit record. Build it with [`AuditEvent::new`] and the `with_*` setters (or set
/// the public fields), then hand it to [`crate::Auditor::log`].
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct AuditEvent {
    /// When it happened (set by [`AuditEvent::new`] to now).
    pub time: Timestamp,
    /// The Windows security event ID (4624, 4728, 5136, …) when one fits.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub event_id: Option<u32>,
    /// The broad kind of event.
    pub category: Category,
    /// What was attempted, in a word: `bind`, `add`, `modify`, `delete`, `rename`,
    /// `password_change`, `password_reset`, `member_add`, `tgt`, …
    pub action: String,
    /// Whether it succeeded.
    pub outcome: Outcome,
    /// The service that saw it: `ldap`, `ldaps`, `gc`, `kdc`, `kpasswd`, `dns`, `cli`, …
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub service: String,
    /// The connection it came in on (a per-process connection number), to tie a bind to
    /// the changes made after it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub session: Option<u64>,
    /// The client's address, `ip:port`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub remote: Option<String>,
    /// Who acted: an account name, UPN or DN (for a failed bind, the name that was tried).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub user: Option<String>,
    /// The actor's SID, when known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub user_sid: Option<String>,
    /// How they authenticated: `simple`, `GSS-SPNEGO/NTLM`, `GSSAPI/Kerberos`,
    /// `EXTERNAL`, …
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mechanism: Option<String>,
    /// The object acted on.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dn: Option<String>,
    /// The SID of the object acted on, when it has one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub target_sid: Option<String>,
    /// For membership events: the member added or removed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub member: Option<String>,
    /// The names of the attributes changed (never their values).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub attributes: Vec<String>,
    /// The USN the change was committed with.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub usn: Option<u64>,
    /// The LDAP result code the client was sent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub result_code: Option<u32>,
    /// Why it failed, in words (AD's `data 52e`, a Kerberos error name, …).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// How long it took, in microseconds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub duration_us: Option<u64>,
    /// For token events: the SIDs of the groups in the token.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub groups: Vec<String>,
    /// For the log's own `dropped` record: how many events were lost since the last one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dropped: Option<u64>,
}

impl AuditEvent {
    /// An event happening now, with nothing but its kind, action and outcome filled in.
    pub fn new(category: Category, action: impl Into<String>, outcome: Outcome) -> AuditEvent {
        AuditEvent {
            time: Timestamp::now(),
            event_id: None,
            category,
            action: action.into(),
            outcome,
            service: String::new(),
            session: None,
            remote: None,
            user: None,
            user_sid: None,
            mechanism: None,
            dn: None,
            target_sid: None,
            member: None,
            attributes: Vec::new(),
            usn: None,
            result_code: None,
            reason: None,
            duration_us: None,
            groups: Vec::new(),
            dropped: None,
        }
    }

    /// A bind (logon) attempt: event 4624 when it succeeded, 4625 when it failed.
    pub fn logon(outcome: Outcome) -> AuditEvent {
        let id = match outcome {
            Outcome::Success => 4624,
            Outcome::Failure => 4625,
        };
        AuditEvent::new(Category::Authentication, "bind", outcome).with_event_id(id)
    }

    /// A directory change (`add`, `modify`, `rename`/`move`, `delete`, `undelete`) with
    /// its 5136-family event ID.
    pub fn change(action: &str, outcome: Outcome) -> AuditEvent {
        let e = AuditEvent::new(Category::Change, action, outcome);
        match crate::events::directory_change_event_id(action) {
            Some(id) => e.with_event_id(id),
            None => e,
        }
    }

    /// Sets the time (for events recorded after the fact).
    pub fn with_time(mut self, t: Timestamp) -> Self {
        self.time = t;
        self
    }

    /// Sets the Windows event ID.
    pub fn with_event_id(mut self, id: u32) -> Self {
        self.event_id = Some(id);
        self
    }

    /// Sets the service (`ldap`, `kdc`, …).
    pub fn with_service(mut self, service: impl Into<String>) -> Self {
        self.service = service.into();
        self
    }

    /// Sets the connection number.
    pub fn with_session(mut self, session: u64) -> Self {
        self.session = Some(session);
        self
    }

    /// Sets the client's address.
    pub fn with_remote(mut self, remote: impl ToString) -> Self {
        self.remote = Some(remote.to_string());
        self
    }

    /// Sets who acted.
    pub fn with_user(mut self, user: impl Into<String>) -> Self {
        self.user = Some(user.into());
        self
    }

    /// Sets the actor's SID.
    pub fn with_user_sid(mut self, sid: impl ToString) -> Self {
        self.user_sid = Some(sid.to_string());
        self
    }

    /// Sets the authentication mechanism.
    pub fn with_mechanism(mut self, mechanism: impl Into<String>) -> Self {
        self.mechanism = Some(mechanism.into());
        self
    }

    /// Sets the target object's DN.
    pub fn with_dn(mut self, dn: impl ToString) -> Self {
        self.dn = Some(dn.to_string());
        self
    }

    /// Sets the target object's SID.
    pub fn with_target_sid(mut self, sid: impl ToString) -> Self {
        self.target_sid = Some(sid.to_string());
        self
    }

    /// Sets the member added to or removed from a group.
    pub fn with_member(mut self, member: impl ToString) -> Self {
        self.member = Some(member.to_string());
        self
    }

    /// Sets the names of the attributes changed.
    pub fn with_attributes<I, S>(mut self, names: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.attributes = names.into_iter().map(Into::into).collect();
        self
    }

    /// Sets the USN of the change.
    pub fn with_usn(mut self, usn: u64) -> Self {
        self.usn = Some(usn);
        self
    }

    /// Sets the LDAP result code.
    pub fn with_result_code(mut self, code: u32) -> Self {
        self.result_code = Some(code);
        self
    }

    /// Sets why it failed.
    pub fn with_reason(mut self, reason: impl Into<String>) -> Self {
        self.reason = Some(reason.into());
        self
    }

    /// Sets how long it took.
    pub fn with_duration(mut self, d: Duration) -> Self {
        self.duration_us = Some(u64::try_from(d.as_micros()).unwrap_or(u64::MAX));
        self
    }

    /// Sets the SIDs of a token's groups.
    pub fn with_groups<I, S>(mut self, sids: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.groups = sids.into_iter().map(Into::into).collect();
        self
    }

    /// Sets the count of dropped events (the log's own record).
    pub fn with_dropped(mut self, n: u64) -> Self {
        self.dropped = Some(n);
        self
    }

    /// The Windows title of the event ID, when the event has a known one.
    pub fn title(&self) -> Option<&'static str> {
        self.event_id.and_then(crate::events::title)
    }

    /// The event as one line of JSON, without the newline: what the log stores.
    pub fn to_json_line(&self) -> String {
        // Serializing plain strings, numbers and enums into a String cannot fail.
        serde_json::to_string(self).unwrap_or_default()
    }

    /// Appends the event's JSON line (without the newline) to `out`.
    pub fn write_json(&self, out: &mut Vec<u8>) -> Result<(), serde_json::Error> {
        serde_json::to_writer(out, self)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn absent_fields_are_left_out() {
        let e = AuditEvent::new(Category::Authentication, "bind", Outcome::Success)
            .with_time(Timestamp::from_micros(1_795_741_323_123_456));
        assert_eq!(
            e.to_json_line(),
            r#"{"time":"2026-11-27T01:02:03.123456Z","category":"authentication","action":"bind","outcome":"success"}"#
        );
    }

    #[test]
    fn every_field_round_trips() {
        let e = AuditEvent::change("modify", Outcome::Failure)
            .with_service("ldaps")
            .with_session(7)
            .with_remote("192.0.2.1:5000")
            .with_user("SAMDOM\\alice")
            .with_user_sid("S-1-5-21-1-2-3-1104")
            .with_mechanism("GSS-SPNEGO/NTLM")
            .with_dn("CN=Bob,CN=Users,DC=samdom,DC=example,DC=com")
            .with_target_sid("S-1-5-21-1-2-3-1105")
            .with_member("CN=Carol,CN=Users,DC=samdom,DC=example,DC=com")
            .with_attributes(["description", "mail"])
            .with_usn(4242)
            .with_result_code(50)
            .with_reason("insufficient access\nrights")
            .with_duration(Duration::from_micros(1234))
            .with_groups(["S-1-5-32-544"])
            .with_dropped(3);
        assert_eq!(e.event_id, Some(5136));
        assert_eq!(e.title(), Some("A directory service object was modified."));
        let line = e.to_json_line();
        assert!(!line.contains('\n'));
        let back: AuditEvent = serde_json::from_str(&line).unwrap();
        assert_eq!(back, e);
    }

    #[test]
    fn logon_picks_4624_or_4625() {
        assert_eq!(AuditEvent::logon(Outcome::Success).event_id, Some(4624));
        assert_eq!(AuditEvent::logon(Outcome::Failure).event_id, Some(4625));
    }

    #[test]
    fn categories_by_name() {
        for c in Category::ALL {
            assert_eq!(c.as_str().parse::<Category>(), Ok(c));
            assert_eq!(serde_json::to_string(&c).unwrap(), format!("\"{c}\""));
        }
        assert_eq!("CHANGE".parse::<Category>(), Ok(Category::Change));
        assert!("nope".parse::<Category>().is_err());
    }
}
