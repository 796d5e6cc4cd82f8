//! The audit trail of changes: every request the directory applies — from LDAP, kpasswd,
//! DNS updates or the local tools alike — becomes a directory-service event (5136/5137/
//! 5139/5141) with who, from where, what (attribute names, never values), the result, the
//! duration and the USN, plus the account and group events Windows logs beside it (4720
//! user created, 4722/4725 enabled/disabled, 4723/4724 password changed/reset, 4726
//! deleted, 4728–4758 group and membership events, 4738/4742 changed, 4741/4743
//! computers). Events wait in the directory until their transaction commits, so the log
//! never shows a change the database does not hold; a commit that fails turns them into
//! failures.

use std::time::Duration;

use kauri_audit::{
    computer_event_id, group_event_id, user_event_id, AccountOp, AuditEvent, Category, GroupOp,
    Outcome,
};
use kauri_db::{DbWrite, Dn, ModifyOp};
use kauri_kv::Backend;

use super::caller::Caller;
use super::error::DirError;
use super::view::View;
use super::{Change, Directory, Request};
use crate::sid::Sid;

/// Where a request came from: the service, the client's address and the connection.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Origin {
    /// `ldap`, `ldaps`, `gc`, `kpasswd`, `dns`, `cli`, … (empty: the server itself).
    pub service: String,
    /// The client's address (`ip:port`).
    pub remote: Option<String>,
    /// The connection's number.
    pub session: Option<u64>,
}

/// `userAccountControl`: the account is disabled.
const UF_ACCOUNTDISABLE: i64 = 0x2;

/// What an object was before a change, as the events need it.
#[derive(Debug, Default, Clone)]
pub(crate) struct Facts {
    dn: String,
    kind: Kind,
    sid: Option<Sid>,
    group_type: Option<i64>,
    uac: Option<i64>,
}

#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
enum Kind {
    #[default]
    Other,
    User,
    Computer,
    Group,
}

fn facts<V: View + ?Sized>(v: &V, id: u64) -> Facts {
    // One decode of the record for the four attributes.
    let [classes, sid, group_type, uac]: [Vec<Vec<u8>>; 4] = v
        .all_values(
            id,
            &[
                "objectClass",
                "objectSid",
                "groupType",
                "userAccountControl",
            ],
        )
        .ok()
        .and_then(|all| all.try_into().ok())
        .unwrap_or_default();
    let is = |c: &str| classes.iter().any(|x| x.eq_ignore_ascii_case(c.as_bytes()));
    let kind = if is("computer") {
        Kind::Computer
    } else if is("user") {
        Kind::User
    } else if is("group") {
        Kind::Group
    } else {
        Kind::Other
    };
    let int = |vals: &[Vec<u8>]| {
        vals.first()
            .and_then(|b| std::str::from_utf8(b).ok()?.trim().parse::<i64>().ok())
    };
    Facts {
        dn: v.dn_of(id).unwrap_or_default(),
        kind,
        sid: sid.first().and_then(|b| Sid::from_bytes(b).ok()),
        group_type: int(&group_type),
        uac: int(&uac),
    }
}

/// The target of a change.
fn target_of(change: &Change) -> Option<&Dn> {
    match change {
        Change::Add(e) => Some(&e.dn),
        Change::Modify { dn, .. }
        | Change::Delete { dn, .. }
        | Change::DeleteTreeStep { dn, .. }
        | Change::Rename { dn, .. } => Some(dn),
    }
}

impl<B: Backend> Directory<B> {
    /// The facts of a change's target before it is applied (`None` when nothing is
    /// audited, or the target does not exist yet).
    pub(crate) fn audit_before(&self, w: &DbWrite<'_, B>, req: &Request) -> Option<Facts> {
        if !self.auditor().is_enabled() {
            return None;
        }
        let dn = target_of(&req.change)?;
        let id = w.id_of(dn).ok().flatten()?;
        Some(facts(w, id))
    }

    /// Queues the events of one applied request until its transaction commits.
    pub(crate) fn audit_change(
        &self,
        w: &DbWrite<'_, B>,
        req: &Request,
        origin: &Origin,
        before: Option<Facts>,
        result: &Result<(), DirError>,
        took: Duration,
    ) {
        if !self.auditor().is_enabled() {
            return;
        }
        let outcome = Outcome::from_ok(result.is_ok());
        let base = |category: Category, action: &str| {
            let mut e = AuditEvent::new(category, action, outcome).with_duration(took);
            if !origin.service.is_empty() {
                e = e.with_service(origin.service.clone());
            }
            if let Some(r) = &origin.remote {
                e = e.with_remote(r);
            }
            if let Some(s) = origin.session {
                e = e.with_session(s);
            }
            match &req.caller {
                Caller::System => e.with_user("SYSTEM"),
                Caller::Anonymous => e.with_user("ANONYMOUS"),
                Caller::Account(a) => {
                    let e = e.with_user(a.dn.clone());
                    match &a.sid {
                        Some(s) => e.with_user_sid(s),
                        None => e,
                    }
                }
            }
        };
        let failed = |mut e: AuditEvent| {
            if let Err(err) = result {
                e = e
                    .with_result_code(err.ldap_result_code())
                    .with_reason(err.to_string());
            } else {
                e = e.with_result_code(0).with_usn(w.current_usn());
            }
            e
        };
        let mut events: Vec<AuditEvent> = Vec::new();
        let (action, dn, attrs): (&str, String, Vec<String>) = match &req.change {
            Change::Add(e) => (
                "add",
                e.dn.to_string(),
                e.attrs.iter().map(|(n, _)| n.clone()).collect(),
            ),
            Change::Modify { dn, mods, .. } => (
                "modify",
                dn.to_string(),
                mods.iter().map(|m| m.attr.clone()).collect(),
            ),
            Change::Delete { dn, .. } | Change::DeleteTreeStep { dn, .. } => {
                ("delete", dn.to_string(), Vec::new())
            }
            Change::Rename {
                dn,
                new_rdn,
                new_parent,
                ..
            } => {
                let to = new_parent
                    .clone()
                    .or_else(|| dn.parent())
                    .unwrap_or_else(Dn::root)
                    .child(new_rdn.clone());
                ("rename", dn.to_string(), vec![format!("newDN={to}")])
            }
        };
        let ds_id = match action {
            "add" => 5137,
            "modify" => 5136,
            "rename" => 5139,
            _ => 5141,
        };
        events.push(failed(
            base(Category::Change, action)
                .with_event_id(ds_id)
                .with_dn(dn.clone())
                .with_attributes(attrs.iter().filter(|a| !a.starts_with("newDN=")).cloned()),
        ));
        // The account and group events, from what the object is.
        let after = if result.is_ok() {
            target_of(&req.change)
                .and_then(|d| w.id_of(d).ok().flatten())
                .map(|id| facts(w, id))
        } else {
            None
        };
        let subject = after.clone().or_else(|| before.clone());
        if let Some(f) = subject {
            let with_target = |e: AuditEvent| {
                let e = e.with_dn(f.dn.clone());
                match &f.sid {
                    Some(s) => e.with_target_sid(s),
                    None => e,
                }
            };
            let account = |op: AccountOp| -> Option<AuditEvent> {
                let id = match f.kind {
                    Kind::User => user_event_id(op),
                    Kind::Computer => computer_event_id(op),
                    _ => return None,
                };
                Some(failed(with_target(
                    base(op.category(), account_action(op)).with_event_id(id),
                )))
            };
            let group = |op: GroupOp, member: Option<&[u8]>| -> Option<AuditEvent> {
                let gt = f.group_type?;
                let id = group_event_id(gt, op)?;
                let e = with_target(base(Category::Group, group_action(op)).with_event_id(id));
                let e = match member {
                    Some(m) => e.with_member(String::from_utf8_lossy(m)),
                    None => e,
                };
                Some(failed(e))
            };
            match (&req.change, f.kind) {
                (Change::Add(_), Kind::User | Kind::Computer) => {
                    events.extend(account(AccountOp::Created));
                }
                (Change::Add(_), Kind::Group) => events.extend(group(GroupOp::Created, None)),
                (Change::Delete { .. } | Change::DeleteTreeStep { .. }, Kind::Group) => {
                    events.extend(group(GroupOp::Deleted, None))
                }
                (Change::Delete { .. } | Change::DeleteTreeStep { .. }, _) => {
                    events.extend(account(AccountOp::Deleted))
                }
                (Change::Modify { mods, .. }, kind) => {
                    let mut other = false;
                    for m in mods {
                        let lower = m.attr.to_ascii_lowercase();
                        match lower.as_str() {
                            "unicodepwd" | "userpassword" | "cleartextpassword" => {
                                let change = mods.iter().any(|x| {
                                    x.op == ModifyOp::Delete
                                        && x.attr.eq_ignore_ascii_case(&m.attr)
                                        && !x.values.is_empty()
                                });
                                if m.op != ModifyOp::Delete {
                                    events.extend(account(if change {
                                        AccountOp::PasswordChanged
                                    } else {
                                        AccountOp::PasswordReset
                                    }));
                                }
                            }
                            "member" if kind == Kind::Group => {
                                let op = match m.op {
                                    ModifyOp::Delete => GroupOp::MemberRemoved,
                                    _ => GroupOp::MemberAdded,
                                };
                                for v in &m.values {
                                    events.extend(group(op, Some(v)));
                                }
                            }
                            "useraccountcontrol" => {
                                let was = before.as_ref().and_then(|b| b.uac);
                                let now = after.as_ref().and_then(|a| a.uac);
                                match (was, now) {
                                    (Some(a), Some(b))
                                        if a & UF_ACCOUNTDISABLE != 0
                                            && b & UF_ACCOUNTDISABLE == 0 =>
                                    {
                                        events.extend(account(AccountOp::Enabled))
                                    }
                                    (Some(a), Some(b))
                                        if a & UF_ACCOUNTDISABLE == 0
                                            && b & UF_ACCOUNTDISABLE != 0 =>
                                    {
                                        events.extend(account(AccountOp::Disabled))
                                    }
                                    _ => {}
                                }
                                other = true;
                            }
                            "lockouttime" => {
                                let zero = m.values.iter().all(|v| v.as_slice() == b"0");
                                if zero {
                                    events.extend(account(AccountOp::Unlocked));
                                }
                                other = true;
                            }
                            _ => other = true,
                        }
                    }
                    if other {
                        match kind {
                            Kind::Group => events.extend(group(GroupOp::Changed, None)),
                            _ => events.extend(account(AccountOp::Changed)),
                        }
                    }
                }
                _ => {}
            }
        }
        self.pending_audit.lock().extend(events);
    }

    /// Queues the event of a password set or changed through Kerberos' password-change
    /// service (4723 a change by the account, 4724 a set), sent when the transaction
    /// commits.
    pub fn audit_kerberos_password(
        &self,
        w: &DbWrite<'_, B>,
        dn: &Dn,
        change: bool,
        result: &Result<(), DirError>,
    ) {
        if !self.auditor().is_enabled() {
            return;
        }
        let f = w
            .id_of(dn)
            .ok()
            .flatten()
            .map(|id| facts(w, id))
            .unwrap_or_default();
        let op = if change {
            AccountOp::PasswordChanged
        } else {
            AccountOp::PasswordReset
        };
        let id = match f.kind {
            Kind::Computer => computer_event_id(op),
            _ => user_event_id(op),
        };
        let mut e = AuditEvent::new(
            op.category(),
            account_action(op),
            Outcome::from_ok(result.is_ok()),
        )
        .with_event_id(id)
        .with_service("kpasswd")
        .with_dn(dn.to_string());
        if let Some(s) = &f.sid {
            e = e.with_target_sid(s);
        }
        e = match result {
            Ok(()) => e.with_result_code(0).with_usn(w.current_usn()),
            Err(err) => e
                .with_result_code(err.ldap_result_code())
                .with_reason(err.to_string()),
        };
        self.pending_audit.lock().push(e);
    }

    /// Sends the events of the committed transaction to the audit log.
    pub(crate) fn audit_committed(&self) {
        let events = std::mem::take(&mut *self.pending_audit.lock());
        let auditor = self.auditor();
        for e in events {
            auditor.log(e);
        }
    }

    /// The transaction did not commit: its changes are logged as failures.
    pub(crate) fn audit_aborted(&self) {
        let events = std::mem::take(&mut *self.pending_audit.lock());
        let auditor = self.auditor();
        for mut e in events {
            if e.outcome == Outcome::Success {
                e.outcome = Outcome::Failure;
                e.reason = Some("the transaction did not commit".into());
                e.usn = None;
            }
            auditor.log(e);
        }
    }
}

fn account_action(op: AccountOp) -> &'static str {
    match op {
        AccountOp::Created => "account_created",
        AccountOp::Changed => "account_changed",
        AccountOp::Deleted => "account_deleted",
        AccountOp::Enabled => "account_enabled",
        AccountOp::Disabled => "account_disabled",
        AccountOp::LockedOut => "account_locked_out",
        AccountOp::Unlocked => "account_unlocked",
        AccountOp::Renamed => "account_renamed",
        AccountOp::PasswordChanged => "password_change",
        AccountOp::PasswordReset => "password_reset",
    }
}

fn group_action(op: GroupOp) -> &'static str {
    match op {
        GroupOp::Created => "group_created",
        GroupOp::Changed => "group_changed",
        GroupOp::Deleted => "group_deleted",
        GroupOp::MemberAdded => "member_add",
        GroupOp::MemberRemoved => "member_remove",
        GroupOp::TypeChanged => "group_type_changed",
    }
}
