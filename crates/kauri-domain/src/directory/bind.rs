//! Simple binds against the domain: the account named by DN, by userPrincipalName or by
//! `DOMAIN\sAMAccountName`, its password checked against the stored secrets, and AD's
//! account rules applied — lockout after repeated bad passwords, disabled and expired
//! accounts, expired passwords and passwords that must change — each refused with AD's
//! sub-code. The bookkeeping a bind causes (bad password counts, lockout, the last logon
//! time) comes back as changes for the writer.

use kauri_db::{DbRead, DbWrite, Dn, Modification, ModifyOp};
use kauri_kv::Backend;

use super::bind_facts::token_from;
use super::caller::Account;
use super::error::DirResult;
use super::principal::uac;
use super::token::{policy_of, resultant_policy, resultant_pso_among, token_groups};
use super::view::View;
use super::{now_secs, Directory};
use crate::password::{
    ad_time_from_unix, is_expired, lockout_active, LogonFailure, StoredSecrets, AD_TICKS_PER_SECOND,
};
use crate::sid::{rid, Sid};

/// How often `lastLogonTimestamp` is written at most (AD's default
/// `msDS-LogonTimeSyncInterval`, 14 days, less a margin of up to 5 days).
pub(crate) const LOGON_TIMESTAMP_INTERVAL_SECS: i64 = 9 * 86_400;

/// The outcome of a bind.
#[derive(Debug, Clone)]
pub struct BindOutcome {
    /// The account bound as, or why not.
    pub result: Result<Account, LogonFailure>,
    /// Bookkeeping for the writer, if any.
    pub update: Option<BindUpdate>,
}

/// What a bind leaves to write.
#[derive(Debug, Clone)]
pub enum BindUpdate {
    /// A successful bind's changes (bad-password count cleared, last logon time).
    Success(Dn, Vec<Modification>),
    /// A bad password for this account: counted by the writer against the state it sees
    /// ([`Directory::record_bad_password`]), so concurrent bad binds all count.
    BadPassword(Dn),
}

impl<B: Backend> Directory<B> {
    /// The account a bind name designates: a DN, a userPrincipalName (or
    /// `name@<dns domain>`), or `DOMAIN\name`.
    pub fn resolve_bind_name(&self, r: &DbRead<'_, B>, name: &str) -> DirResult<Option<u64>> {
        let domain = self.domain();
        if let Some((dom, sam)) = name.split_once('\\') {
            let ours = domain.as_ref().is_some_and(|d| {
                dom.eq_ignore_ascii_case(&d.netbios) || dom.eq_ignore_ascii_case(&d.dns_name)
            });
            if !ours {
                return Ok(None);
            }
            return Ok(live(r, r.find("sAMAccountName", sam.as_bytes())?));
        }
        if let Ok(dn) = Dn::parse(name) {
            if !dn.is_root() && name.contains('=') {
                return r.id_of(&dn);
            }
        }
        if name.contains('@') {
            if let Some(id) = live(r, r.find("userPrincipalName", name.as_bytes())?) {
                return Ok(Some(id));
            }
            // The implicit UPN: sAMAccountName@<the domain's DNS name>.
            if let (Some((sam, suffix)), Some(d)) = (name.rsplit_once('@'), domain.as_ref()) {
                if suffix.eq_ignore_ascii_case(&d.dns_name) {
                    return Ok(live(r, r.find("sAMAccountName", sam.as_bytes())?));
                }
            }
        }
        Ok(None)
    }

    /// The domain's Administrator (RID 500) with its token, without a password: what the
    /// local administration tools act as, so a change made on a data folder meets the same
    /// rules (password policy, attributes the server owns) as the same change made by an
    /// administrator over LDAP.
    pub fn local_administrator(&self) -> DirResult<Account> {
        let domain = self
            .domain()
            .ok_or_else(|| super::DirError::UnwillingToPerform("no domain here".into()))?;
        let r = self.db().read()?;
        let sid = domain.sid.with_rid(rid::ADMINISTRATOR);
        let id = r
            .find_eq("objectSid", &sid.to_bytes())?
            .and_then(|ids| ids.first().copied())
            .ok_or_else(|| {
                super::DirError::UnwillingToPerform("the domain has no Administrator".into())
            })?;
        let groups = token_groups(&r, &domain, id)?;
        Ok(Account {
            id,
            dn: r.dn_of(id)?,
            sid: Some(sid),
            groups: groups.into_iter().map(|(_, s)| s).collect(),
            admin: true,
        })
    }

    /// Checks a simple bind (see the module docs).
    pub fn authenticate(&self, name: &str, password: &str) -> DirResult<BindOutcome> {
        self.authenticate_with(name, &mut |secrets| secrets.verify(password))
    }

    /// Checks a logon whose proof of the password is checked by `proves` against the
    /// account's stored secrets (an NTLM response against the NT hash), with the same
    /// account rules, sub-codes and bookkeeping as a simple bind.
    pub fn authenticate_with(
        &self,
        name: &str,
        proves: &mut dyn FnMut(&StoredSecrets) -> bool,
    ) -> DirResult<BindOutcome> {
        let refused = |f: LogonFailure| BindOutcome {
            result: Err(f),
            update: None,
        };
        let Some(domain) = self.domain() else {
            return Ok(refused(LogonFailure::NoSuchUser));
        };
        let r = self.db().read()?;
        let Some(id) = self.resolve_bind_name(&r, name)? else {
            // Unknown accounts get the wrong-password answer, as AD gives them.
            return Ok(refused(LogonFailure::BadPassword));
        };
        // The account's fields come from one read of its record; what only a commit
        // changes (the domain's policy, the groups) from the facts of this snapshot.
        let facts = self.bind_facts(&r, &domain)?;
        let a = facts.attrs;
        let Some(rec) = r.record(id)? else {
            return Ok(refused(LogonFailure::BadPassword));
        };
        let first = |aid: Option<u32>| {
            aid.and_then(|aid| rec.attr(aid))
                .and_then(|at| at.values().next())
                .map(|v| v.raw)
        };
        let int = |aid: Option<u32>| {
            first(aid)
                .and_then(|raw| std::str::from_utf8(raw).ok())
                .and_then(|t| t.trim().parse::<i64>().ok())
        };
        let Some(sealed) = first(a.secrets) else {
            return Ok(refused(LogonFailure::BadPassword));
        };
        let Some(secrets) =
            self.open_secrets(sealed, first(a.object_guid).unwrap_or_default(), id)?
        else {
            return Ok(refused(LogonFailure::BadPassword));
        };
        let dn_text = r.dn_of(id)?;
        let dn = || {
            Dn::parse(&dn_text)
                .map_err(|e| super::DirError::UnwillingToPerform(format!("stored DN: {e}")))
        };
        let now = ad_time_from_unix(now_secs() as i64);
        // The token serves twice: the password policy and the administrator check.
        let groups = token_from(
            &r,
            &domain,
            &facts,
            id,
            r.links(id, "memberOf")?,
            int(a.primary_group_id),
        )?;
        let policy = if facts.psos {
            let pso = resultant_pso_among(&r, &domain, id, || Ok(groups.clone()))?;
            policy_of(&r, self, pso)?
        } else {
            facts.policy.clone()
        };
        let lockout_time = int(a.lockout_time).unwrap_or(0);
        if lockout_time > 0 && lockout_active(lockout_time, now, policy.lockout_duration_secs) {
            return Ok(refused(LogonFailure::AccountLockedOut));
        }
        if !proves(&secrets) {
            return Ok(BindOutcome {
                result: Err(LogonFailure::BadPassword),
                update: Some(BindUpdate::BadPassword(dn()?)),
            });
        }
        let control = int(a.uac).unwrap_or(0) as u32;
        if control & uac::ACCOUNTDISABLE != 0 {
            return Ok(refused(LogonFailure::AccountDisabled));
        }
        let expires = int(a.account_expires).unwrap_or(0);
        if expires > 0 && expires != i64::MAX && expires <= now {
            return Ok(refused(LogonFailure::AccountExpired));
        }
        let last_set = int(a.pwd_last_set).unwrap_or(0);
        if last_set == 0 {
            return Ok(refused(LogonFailure::MustChangePassword));
        }
        if control & uac::DONT_EXPIRE_PASSWORD == 0
            && is_expired(last_set, now, policy.max_age_secs)
        {
            return Ok(refused(LogonFailure::PasswordExpired));
        }
        // Success: who the account is, and what to note.
        let admin = super::caller::is_admin_token(groups.iter().map(|(_, s)| s), &domain.sid);
        let sid = first(a.object_sid).and_then(|b| Sid::from_bytes(b).ok());
        let mut mods = Vec::new();
        if int(a.bad_pwd_count).unwrap_or(0) != 0 {
            mods.push(Modification::new(ModifyOp::Replace, "badPwdCount", &["0"]));
        }
        if lockout_time != 0 {
            mods.push(Modification::new(ModifyOp::Replace, "lockoutTime", &["0"]));
        }
        let last_logon = int(a.last_logon_timestamp).unwrap_or(0);
        if now.saturating_sub(last_logon)
            > LOGON_TIMESTAMP_INTERVAL_SECS.saturating_mul(AD_TICKS_PER_SECOND)
        {
            mods.push(Modification::new(
                ModifyOp::Replace,
                "lastLogonTimestamp",
                &[&now.to_string()],
            ));
        }
        let update = if mods.is_empty() {
            None
        } else {
            Some(BindUpdate::Success(dn()?, mods))
        };
        Ok(BindOutcome {
            result: Ok(Account {
                id,
                dn: dn_text,
                sid,
                groups: groups.into_iter().map(|(_, s)| s).collect(),
                admin,
            }),
            update,
        })
    }

    /// Counts a bad password against an account in the writer's transaction: the count
    /// restarts outside the observation window, and the account locks at the threshold.
    pub fn record_bad_password(&self, w: &mut DbWrite<'_, B>, dn: &Dn) -> DirResult<()> {
        let Some(id) = w.id_of(dn)? else {
            return Ok(());
        };
        let policy = resultant_policy(w, self, id)?;
        let now = ad_time_from_unix(now_secs() as i64);
        let window = policy
            .lockout_window_secs
            .saturating_mul(AD_TICKS_PER_SECOND);
        let last_bad = w.int(id, "badPasswordTime")?.unwrap_or(0);
        let count = w.int(id, "badPwdCount")?.unwrap_or(0);
        let count = if last_bad > 0 && now.saturating_sub(last_bad) <= window {
            count.saturating_add(1)
        } else {
            1
        };
        let mut mods = vec![
            Modification::new(ModifyOp::Replace, "badPwdCount", &[&count.to_string()]),
            Modification::new(ModifyOp::Replace, "badPasswordTime", &[&now.to_string()]),
        ];
        if policy.lockout_threshold > 0 && count >= i64::from(policy.lockout_threshold) {
            mods.push(Modification::new(
                ModifyOp::Replace,
                "lockoutTime",
                &[&now.to_string()],
            ));
        }
        w.modify(dn, &mods)?;
        Ok(())
    }
}

/// The first of `ids` that is not a tombstone.
pub(crate) fn live<B: Backend>(r: &DbRead<'_, B>, ids: Vec<u64>) -> Option<u64> {
    ids.into_iter().find(
        |id| !matches!(r.text(*id, "isDeleted"), Ok(Some(v)) if v.eq_ignore_ascii_case("TRUE")),
    )
}
