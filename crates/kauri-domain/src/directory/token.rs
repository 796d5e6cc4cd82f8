//! What an account's group memberships add up to: its token (tokenGroups — every group
//! it belongs to, transitively, its primary group included) and the password policy
//! that applies to it (the resultant password settings object, or the domain's).

use std::collections::HashSet;

use kauri_kv::Backend;

use super::credentials::policy_from;
use super::error::DirResult;
use super::info::DomainInfo;
use super::view::View;
use super::Directory;
use crate::password::PasswordPolicy;
use crate::sid::Sid;

/// The groups of an account, transitively, with their SIDs: its `memberOf` closure
/// (cycles end the walk) plus its primary group and that group's own closure.
pub fn token_groups<V: View>(v: &V, domain: &DomainInfo, id: u64) -> DirResult<Vec<(u64, Sid)>> {
    let mut start: Vec<u64> = v.links(id, "memberOf")?;
    if let Some(rid) = v.int(id, "primaryGroupID")? {
        let sid = domain.sid.with_rid(u32::try_from(rid).unwrap_or(0));
        start.extend(v.find("objectSid", &sid.to_bytes())?);
    }
    token_walk(id, start, |g| {
        let sid = v
            .values(g, "objectSid")?
            .first()
            .and_then(|b| Sid::from_bytes(b).ok());
        Ok((sid, v.links(g, "memberOf")?))
    })
}

/// The walk behind every token: from the groups `start` (an account's own and primary
/// ones), each group's SID and the groups it belongs to as `group` tells them, until no
/// new group is reached; sorted by SID.
pub(crate) fn token_walk(
    id: u64,
    start: Vec<u64>,
    mut group: impl FnMut(u64) -> DirResult<(Option<Sid>, Vec<u64>)>,
) -> DirResult<Vec<(u64, Sid)>> {
    let mut seen: HashSet<u64> = HashSet::new();
    let mut queue = start;
    let mut out = Vec::new();
    while let Some(g) = queue.pop() {
        if g == id || !seen.insert(g) {
            continue;
        }
        let (sid, member_of) = group(g)?;
        if let Some(sid) = sid {
            out.push((g, sid));
        }
        queue.extend(member_of);
    }
    out.sort_by(|a, b| a.1.cmp(&b.1));
    Ok(out)
}

/// The DN of the domain's Password Settings Container: only settings objects in it apply.
pub(crate) fn pso_container(domain: &DomainInfo) -> Option<kauri_db::Dn> {
    kauri_db::Rdn::parse("CN=System")
        .ok()
        .zip(kauri_db::Rdn::parse("CN=Password Settings Container").ok())
        .map(|(sys, psc)| domain.domain_dn.child(sys).child(psc))
}

/// `groupType` of a global and of a universal security group.
const GLOBAL_SECURITY: u32 = 0x8000_0002;
const UNIVERSAL_SECURITY: u32 = 0x8000_0008;

/// The groups `id` is a member of (with its primary group), as ids.
fn direct_groups<V: View>(v: &V, domain: &DomainInfo, id: u64) -> DirResult<Vec<u64>> {
    let mut out = v.links(id, "memberOf")?;
    if let Some(rid) = v.int(id, "primaryGroupID")? {
        let sid = domain.sid.with_rid(u32::try_from(rid).unwrap_or(0));
        out.extend(v.find("objectSid", &sid.to_bytes())?);
    }
    Ok(out)
}

/// Everything reached from `start` through groups of `group_type` only.
fn closure_of_type<V: View>(
    v: &V,
    domain: &DomainInfo,
    start: u64,
    group_type: u32,
) -> DirResult<HashSet<u64>> {
    let mut seen = HashSet::from([start]);
    let mut queue = vec![start];
    while let Some(cur) = queue.pop() {
        for g in direct_groups(v, domain, cur)? {
            let kind = v.int(g, "groupType")?.map(|t| t as u32);
            if kind == Some(group_type) && seen.insert(g) {
                queue.push(g);
            }
        }
    }
    Ok(seen)
}

/// `tokenGroupsGlobalAndUniversal` (MS-ADTS 3.1.1.4.5.19): the global security groups
/// reached through global groups only, and the universal security groups reached from the
/// account or any of those through universal groups only, with their SIDs.
pub fn token_groups_global_and_universal<V: View>(
    v: &V,
    domain: &DomainInfo,
    id: u64,
) -> DirResult<Vec<(u64, Sid)>> {
    let globals = closure_of_type(v, domain, id, GLOBAL_SECURITY)?;
    let mut all = globals.clone();
    for g in globals {
        all.extend(closure_of_type(v, domain, g, UNIVERSAL_SECURITY)?);
    }
    all.remove(&id);
    let mut out = Vec::new();
    for g in all {
        if let Some(sid) = v
            .values(g, "objectSid")?
            .first()
            .and_then(|b| Sid::from_bytes(b).ok())
        {
            out.push((g, sid));
        }
    }
    out.sort_by(|a, b| a.1.cmp(&b.1));
    Ok(out)
}

/// The password settings object that applies to an account (`msDS-ResultantPSO`): the
/// one applied to the account itself with the lowest precedence, else the lowest among
/// those applied to its groups; ties go to the smaller objectGUID.
pub fn resultant_pso<V: View>(v: &V, domain: &DomainInfo, id: u64) -> DirResult<Option<u64>> {
    resultant_pso_among(v, domain, id, || token_groups(v, domain, id))
}

/// `userAccountControl` bit of an ordinary user account.
const UF_NORMAL_ACCOUNT: i64 = 0x200;

/// [`resultant_pso`] for a caller that may have the account's token already (`groups`
/// is asked for only when no object applies to the account itself). As AD reads it: only
/// ordinary user accounts other than krbtgt have one; only settings objects in the domain's Password
/// Settings Container count; groups count when they are the domain's own (the Builtin
/// groups never apply).
pub(crate) fn resultant_pso_among<V: View>(
    v: &V,
    domain: &DomainInfo,
    id: u64,
    groups: impl FnOnce() -> DirResult<Vec<(u64, Sid)>>,
) -> DirResult<Option<u64>> {
    let uac = v.int(id, "userAccountControl")?.unwrap_or(0);
    if uac & UF_NORMAL_ACCOUNT == 0 {
        return Ok(None);
    }
    // Nor does krbtgt (RID 502), whose password the KDC alone manages.
    let sid = v.values(id, "objectSid")?;
    if sid
        .first()
        .and_then(|b| Sid::from_bytes(b).ok())
        .and_then(|s| s.rid())
        == Some(502)
    {
        return Ok(None);
    }
    let direct = v.links(id, "msDS-PSOApplied")?;
    let candidates = if direct.is_empty() {
        let mut all = Vec::new();
        for (g, sid) in groups()? {
            if sid.domain().as_ref() == Some(&domain.sid) {
                all.extend(v.links(g, "msDS-PSOApplied")?);
            }
        }
        all
    } else {
        direct
    };
    let container = pso_container(domain);
    let in_container = |pso: u64| -> DirResult<bool> {
        let parent = kauri_db::Dn::parse(&v.dn_of(pso)?)
            .ok()
            .and_then(|d| d.parent());
        Ok(parent.is_some() && parent == container)
    };
    let mut kept = Vec::with_capacity(candidates.len());
    for pso in candidates {
        if in_container(pso)? {
            kept.push(pso);
        }
    }
    let candidates = kept;
    let mut best: Option<(i64, Vec<u8>, u64)> = None;
    for pso in candidates {
        let precedence = v
            .int(pso, "msDS-PasswordSettingsPrecedence")?
            .unwrap_or(i64::MAX);
        let guid = v
            .values(pso, "objectGUID")?
            .into_iter()
            .next()
            .unwrap_or_default();
        let better = match &best {
            None => true,
            Some((p, g, _)) => (precedence, &guid) < (*p, g),
        };
        if better {
            best = Some((precedence, guid, pso));
        }
    }
    Ok(best.map(|(_, _, id)| id))
}

/// `msDS-UserPasswordExpiryTimeComputed`: when an account's password expires (AD time),
/// `i64::MAX` for never (passwords that do not expire, smart-card and trust accounts,
/// no maximum age), 0 when it must change at next logon; `None` for non-accounts.
pub fn password_expiry_time<V: View, B: Backend>(
    v: &V,
    dir: &Directory<B>,
    id: u64,
) -> DirResult<Option<i64>> {
    /// DONT_EXPIRE_PASSWD, SMARTCARD_REQUIRED and the trust account kinds.
    const NEVER_EXPIRES: u32 = 0x1_0000 | 0x4_0000 | 0x800 | 0x1000 | 0x2000;
    let Some(uac) = v.int(id, "userAccountControl")? else {
        return Ok(None);
    };
    if (uac as u32) & NEVER_EXPIRES != 0 {
        return Ok(Some(i64::MAX));
    }
    let last = v.int(id, "pwdLastSet")?.unwrap_or(0);
    if last == 0 {
        return Ok(Some(0));
    }
    let policy = resultant_policy(v, dir, id)?;
    if policy.max_age_secs <= 0 {
        return Ok(Some(i64::MAX));
    }
    Ok(Some(
        last.saturating_add(
            policy
                .max_age_secs
                .saturating_mul(crate::password::AD_TICKS_PER_SECOND),
        ),
    ))
}

/// The password policy that applies to an account.
pub fn resultant_policy<V: View, B: Backend>(
    v: &V,
    dir: &Directory<B>,
    id: u64,
) -> DirResult<PasswordPolicy> {
    let Some(domain) = dir.domain() else {
        return Ok(PasswordPolicy::default());
    };
    policy_of(v, dir, resultant_pso(v, &domain, id)?)
}

/// The policy of a resultant settings object, or the domain's when there is none.
pub(crate) fn policy_of<V: View, B: Backend>(
    v: &V,
    dir: &Directory<B>,
    pso: Option<u64>,
) -> DirResult<PasswordPolicy> {
    match pso {
        Some(pso) => policy_from(v, pso, true),
        None => dir.domain_policy(v),
    }
}
