//! What every bind reads that only a commit can change — the domain's password policy,
//! whether any fine-grained password policy exists, the attribute ids of an account's
//! fields, and each group's SID and memberships — kept for one snapshot USN. Two snapshots
//! with the same USN hold the same data, so a bind on a snapshot of the cached USN reads
//! only the account's own record and links; the first bind after a commit rebuilds it.

use std::collections::HashMap;
use std::sync::Arc;

use kauri_db::DbRead;
use kauri_kv::Backend;
use parking_lot::Mutex;

use super::error::DirResult;
use super::info::DomainInfo;
use super::token::{pso_container, token_walk};
use super::view::View;
use super::Directory;
use crate::password::PasswordPolicy;
use crate::sid::Sid;

/// Groups remembered per USN at most; past it, groups are read each time.
const MAX_GROUPS: usize = 100_000;

/// The stored attribute ids of the account fields a bind reads (absent when no record
/// has the attribute yet).
#[derive(Debug, Clone, Copy)]
pub(crate) struct AccountAttrs {
    pub uac: Option<u32>,
    pub lockout_time: Option<u32>,
    pub account_expires: Option<u32>,
    pub pwd_last_set: Option<u32>,
    pub bad_pwd_count: Option<u32>,
    pub last_logon_timestamp: Option<u32>,
    pub object_sid: Option<u32>,
    pub object_guid: Option<u32>,
    pub primary_group_id: Option<u32>,
    pub secrets: Option<u32>,
}

/// A group as a token needs it.
#[derive(Debug)]
pub(crate) struct GroupFacts {
    pub sid: Option<Sid>,
    pub member_of: Vec<u64>,
}

/// See the module documentation.
pub(crate) struct BindFacts {
    usn: u64,
    /// The domain's own password policy.
    pub policy: PasswordPolicy,
    /// Whether the Password Settings Container holds anything: when it is empty no
    /// account has a resultant settings object.
    pub psos: bool,
    pub attrs: AccountAttrs,
    groups: Mutex<HashMap<u64, Arc<GroupFacts>>>,
    primary: Mutex<HashMap<u32, Vec<u64>>>,
}

impl BindFacts {
    fn build<B: Backend>(
        dir: &Directory<B>,
        r: &DbRead<'_, B>,
        domain: &DomainInfo,
        usn: u64,
    ) -> DirResult<BindFacts> {
        let container = pso_container(domain);
        let psos = match container
            .as_ref()
            .map(|c| r.id_of(c))
            .transpose()?
            .flatten()
        {
            Some(id) => !View::children(r, id)?.is_empty(),
            None => false,
        };
        let id = |name: &str| r.stored_attr_id(name);
        Ok(BindFacts {
            usn,
            policy: dir.domain_policy(r)?,
            psos,
            attrs: AccountAttrs {
                uac: id("userAccountControl"),
                lockout_time: id("lockoutTime"),
                account_expires: id("accountExpires"),
                pwd_last_set: id("pwdLastSet"),
                bad_pwd_count: id("badPwdCount"),
                last_logon_timestamp: id("lastLogonTimestamp"),
                object_sid: id("objectSid"),
                object_guid: id("objectGUID"),
                primary_group_id: id("primaryGroupID"),
                secrets: id(super::credentials::SECRETS_ATTR),
            },
            groups: Mutex::new(HashMap::new()),
            primary: Mutex::new(HashMap::new()),
        })
    }

    /// A group's SID and the groups it is a member of.
    pub fn group<B: Backend>(&self, r: &DbRead<'_, B>, id: u64) -> DirResult<Arc<GroupFacts>> {
        if let Some(g) = self.groups.lock().get(&id) {
            return Ok(g.clone());
        }
        let sid = match self.attrs.object_sid {
            Some(aid) => r
                .record(id)?
                .and_then(|rec| {
                    rec.attr(aid)
                        .and_then(|a| a.values().next().map(|v| Sid::from_bytes(v.raw)))
                })
                .and_then(Result::ok),
            None => None,
        };
        let g = Arc::new(GroupFacts {
            sid,
            member_of: r.links(id, "memberOf")?,
        });
        let mut groups = self.groups.lock();
        if groups.len() < MAX_GROUPS {
            groups.insert(id, g.clone());
        }
        Ok(g)
    }

    /// The ids of the group whose RID in the domain is `rid` (an account's primary group).
    pub fn primary_group<B: Backend>(
        &self,
        r: &DbRead<'_, B>,
        domain: &DomainInfo,
        rid: u32,
    ) -> DirResult<Vec<u64>> {
        if let Some(ids) = self.primary.lock().get(&rid) {
            return Ok(ids.clone());
        }
        let ids = r.find("objectSid", &domain.sid.with_rid(rid).to_bytes())?;
        let mut primary = self.primary.lock();
        if primary.len() < MAX_GROUPS {
            primary.insert(rid, ids.clone());
        }
        Ok(ids)
    }
}

impl<B: Backend> Directory<B> {
    /// The bind facts of the snapshot `r` (see the module documentation).
    pub(crate) fn bind_facts(
        &self,
        r: &DbRead<'_, B>,
        domain: &DomainInfo,
    ) -> DirResult<Arc<BindFacts>> {
        let usn = r.usn()?;
        if let Some(f) = self.bind_facts.lock().as_ref() {
            if f.usn == usn {
                return Ok(f.clone());
            }
        }
        let facts = Arc::new(BindFacts::build(self, r, domain, usn)?);
        let mut cached = self.bind_facts.lock();
        // A snapshot older than the cached one does not replace it.
        if cached.as_ref().is_none_or(|f| f.usn < usn) {
            *cached = Some(facts.clone());
        }
        Ok(facts)
    }
}

/// The groups of an account, transitively, with their SIDs (what
/// [`super::token::token_groups`] computes), from the account's own `memberOf` and primary
/// group and the groups' cached facts.
pub(crate) fn token_from<B: Backend>(
    r: &DbRead<'_, B>,
    domain: &DomainInfo,
    facts: &BindFacts,
    id: u64,
    member_of: Vec<u64>,
    primary_rid: Option<i64>,
) -> DirResult<Vec<(u64, Sid)>> {
    let mut queue = member_of;
    if let Some(rid) = primary_rid {
        queue.extend(facts.primary_group(r, domain, u32::try_from(rid).unwrap_or(0))?);
    }
    token_walk(id, queue, |g| {
        let facts = facts.group(r, g)?;
        Ok((facts.sid.clone(), facts.member_of.clone()))
    })
}
