//! Dynamic updates (RFC 2136): the zone named, the prerequisites checked and the changes
//! applied in one writer transaction, so an update is whole or absent. Who may update
//! follows the zone's `fAllowUpdate` (none, unsecure, secure only) and the name's owner:
//! a name created through a secure update belongs to its creator, and only the creator
//! or an administrator may change it.

use std::collections::BTreeMap;
use std::sync::Arc;

use kauri_dns_proto::dnsp::{hours_since_1601, Body, DnsRecord};
use kauri_dns_proto::rdata::{class, rtype};
use kauri_dns_proto::wire::{rcode, Message, RecordData};
use kauri_dns_proto::{Name, RData};
use kauri_domain::directory::{Account, DirError};
use kauri_domain::dns::layout::APEX;
use kauri_domain::dns::nodes::{self, allow_update, zone_record, ZoneInfo};
use kauri_kv::lmdb::LmdbBackend;
use kauri_ldap::writer::{Task, Work};
use parking_lot::Mutex;

use crate::zones::Zone;

/// Who sent an update, when it was signed.
#[derive(Debug, Clone)]
pub struct Requester {
    /// The account and token the GSS-TSIG context was made for.
    pub account: Account,
}

/// One change to one name.
#[derive(Debug, Clone)]
enum Change {
    /// Add a record (or refresh an equal one).
    Add(RData, u32),
    /// Delete every record of a type (`ANY`: all but the apex's SOA and NS).
    DeleteType(u16),
    /// Delete one record.
    Delete(RData),
}

/// A prerequisite (RFC 2136 §2.4).
#[derive(Debug, Clone)]
enum Prereq {
    /// An RRset of the type exists (any value); `ANY`: the name is in use.
    Exists(Name, u16),
    /// No RRset of the type; `ANY`: the name is not in use.
    Absent(Name, u16),
    /// The RRset equals these records exactly.
    Equals(Name, u16, Vec<RData>),
}

/// An update checked for form, ready to run against the directory.
#[derive(Debug, Clone)]
struct Plan {
    zone: ZoneInfo,
    zone_name: Name,
    prereqs: Vec<Prereq>,
    changes: Vec<(Name, Change)>,
}

/// Reads the prerequisite and update sections (RFC 2136 §3.2, §3.4.1); an error is the
/// response code to answer with.
fn plan(msg: &Message, zone: &Zone) -> Result<Plan, u8> {
    let zclass = class::IN;
    let mut prereqs = Vec::new();
    let mut equals: BTreeMap<(String, u16), (Name, Vec<RData>)> = BTreeMap::new();
    for r in &msg.answers {
        if !r.name.is_subdomain_of(&zone.name) {
            return Err(rcode::NOTZONE);
        }
        match (r.class, &r.data) {
            (class::ANY, RecordData::Empty) if r.ttl == 0 => {
                prereqs.push(Prereq::Exists(r.name.clone(), r.rtype))
            }
            (class::NONE, RecordData::Empty) if r.ttl == 0 => {
                prereqs.push(Prereq::Absent(r.name.clone(), r.rtype))
            }
            (c, RecordData::Data(d)) if c == zclass && r.ttl == 0 => {
                equals
                    .entry((r.name.to_string().to_ascii_lowercase(), r.rtype))
                    .or_insert_with(|| (r.name.clone(), Vec::new()))
                    .1
                    .push(d.clone());
            }
            _ => return Err(rcode::FORMERR),
        }
    }
    for ((_, t), (name, datas)) in equals {
        prereqs.push(Prereq::Equals(name, t, datas));
    }
    let mut changes = Vec::new();
    for r in &msg.authority {
        if !r.name.is_subdomain_of(&zone.name) {
            return Err(rcode::NOTZONE);
        }
        let meta = matches!(
            r.rtype,
            rtype::AXFR | rtype::IXFR | rtype::TKEY | rtype::TSIG | rtype::OPT
        );
        match (r.class, &r.data) {
            (c, RecordData::Data(d)) if c == zclass && !meta && r.rtype != rtype::ANY => {
                changes.push((r.name.clone(), Change::Add(d.clone(), r.ttl)))
            }
            (class::ANY, RecordData::Empty) if r.ttl == 0 && !meta => {
                changes.push((r.name.clone(), Change::DeleteType(r.rtype)))
            }
            (class::NONE, RecordData::Data(d)) if r.ttl == 0 && !meta => {
                changes.push((r.name.clone(), Change::Delete(d.clone())))
            }
            _ => return Err(rcode::FORMERR),
        }
    }
    Ok(Plan {
        zone: zone.info.clone(),
        zone_name: zone.name.clone(),
        prereqs,
        changes,
    })
}

/// The live records of a name, as the transaction sees them.
fn live_records<V: kauri_domain::directory::view::View>(
    v: &V,
    zone: &ZoneInfo,
    relative: &str,
) -> Result<Vec<DnsRecord>, DirError> {
    Ok(match nodes::records_in(v, zone.id, relative)? {
        Some((records, false)) => records
            .into_iter()
            .filter(|r| matches!(r.body, Body::Record(_)))
            .collect(),
        _ => Vec::new(),
    })
}

fn data_of(r: &DnsRecord) -> Option<&RData> {
    match &r.body {
        Body::Record(d) => Some(d),
        Body::Tombstone { .. } => None,
    }
}

/// What an update changed, for the zone's name index: the names written (and whether they
/// hold records now) and the zone's serial before and after.
#[derive(Debug, Default, Clone)]
struct Applied {
    names: Vec<(String, bool)>,
    serial: Option<(u32, u32)>,
}

/// Runs a plan inside the writer's transaction: the response code, and what changed.
#[allow(clippy::too_many_lines)]
fn run(
    dir: &kauri_domain::directory::Directory<LmdbBackend>,
    w: &mut kauri_db::DbWrite<'_, LmdbBackend>,
    plan: &Plan,
    requester: Option<&Requester>,
    now_unix: u64,
    applied: &mut Applied,
) -> Result<u8, DirError> {
    // Prerequisites, on the state this transaction sees.
    for p in &plan.prereqs {
        let (name, t) = match p {
            Prereq::Exists(n, t) | Prereq::Absent(n, t) | Prereq::Equals(n, t, _) => (n, *t),
        };
        let Some(rel) = name.relative_text(&plan.zone_name) else {
            return Ok(rcode::NOTZONE);
        };
        let recs = live_records(w, &plan.zone, &rel)?;
        let of_type: Vec<&RData> = recs
            .iter()
            .filter_map(data_of)
            .filter(|d| t == rtype::ANY || d.rtype() == t)
            .collect();
        match p {
            Prereq::Exists(_, rtype::ANY) if of_type.is_empty() => return Ok(rcode::NXDOMAIN),
            Prereq::Exists(_, _) if of_type.is_empty() => return Ok(rcode::NXRRSET),
            Prereq::Absent(_, rtype::ANY) if !of_type.is_empty() => return Ok(rcode::YXDOMAIN),
            Prereq::Absent(_, _) if !of_type.is_empty() => return Ok(rcode::YXRRSET),
            Prereq::Equals(_, _, want) => {
                let same = want.len() == of_type.len()
                    && want.iter().all(|d| of_type.contains(&d))
                    && of_type.iter().all(|d| want.contains(d));
                if !same {
                    return Ok(rcode::NXRRSET);
                }
            }
            _ => {}
        }
    }
    // The changes, name by name.
    let mut by_name: BTreeMap<String, (String, Vec<&Change>)> = BTreeMap::new();
    for (name, change) in &plan.changes {
        let Some(rel) = name.relative_text(&plan.zone_name) else {
            return Ok(rcode::NOTZONE);
        };
        by_name
            .entry(rel.to_ascii_lowercase())
            .or_insert_with(|| (rel.clone(), Vec::new()))
            .1
            .push(change);
    }
    let secure = plan.zone.allow_update() == allow_update::SECURE;
    let now_hours = hours_since_1601(now_unix);
    let no_refresh = plan.zone.no_refresh_hours();
    let mut changed = false;
    for (_, (rel, changes)) in by_name {
        let node = nodes::node(w, &plan.zone.dn, &rel)?;
        // Ownership: a live name belongs to its owner, or to administrators when it has
        // none (the server's own records, an administrator's).
        if secure {
            let Some(req) = requester else {
                return Ok(rcode::REFUSED);
            };
            if let Some(n) = node.as_ref().filter(|n| !n.tombstoned) {
                let theirs = req.account.sid.is_some() && n.owner == req.account.sid;
                if !theirs && !req.account.admin {
                    tracing::info!(name = %rel, by = %req.account.dn, "dns: update refused, the name has another owner");
                    return Ok(rcode::REFUSED);
                }
            }
        }
        let mut records: Vec<DnsRecord> = node
            .as_ref()
            .filter(|n| !n.tombstoned)
            .map(|n| n.live().cloned().collect())
            .unwrap_or_default();
        let before = records.clone();
        for c in changes {
            apply_change(&mut records, c, rel == APEX, now_hours, no_refresh);
        }
        if records == before {
            continue;
        }
        let owner = requester.and_then(|r| r.account.sid.clone());
        let live = !records.is_empty();
        dir.write_dns_node(w, &plan.zone.dn, &rel, records, owner.as_ref(), now_unix)?;
        applied.names.push((rel, live));
        changed = true;
    }
    if changed {
        applied.serial = dir.bump_dns_serial(w, &plan.zone.dn, now_unix)?;
    }
    Ok(rcode::NOERROR)
}

/// Applies one change to a name's records (RFC 2136 §3.4.2), with AD's aging: a record
/// added or re-added gets the current hour as its timestamp, refreshed only once the
/// no-refresh interval has passed; a static record (timestamp 0) stays static.
fn apply_change(
    records: &mut Vec<DnsRecord>,
    c: &Change,
    apex: bool,
    now_hours: u32,
    no_refresh: u32,
) {
    match c {
        Change::Add(d, ttl) => {
            let has_cname = records
                .iter()
                .any(|r| matches!(data_of(r), Some(RData::Cname(_))));
            let has_other = records
                .iter()
                .any(|r| !matches!(data_of(r), Some(RData::Cname(_))));
            match d {
                // A CNAME cannot join other data, nor other data a CNAME.
                RData::Cname(_) if has_other => return,
                RData::Cname(_) => records.retain(|r| !matches!(data_of(r), Some(RData::Cname(_)))),
                _ if has_cname => return,
                RData::Soa(new) => {
                    for r in records.iter_mut() {
                        if let Body::Record(RData::Soa(old)) = &mut r.body {
                            if serial_newer(new.serial, old.serial) {
                                *old = new.clone();
                            }
                        }
                    }
                    return;
                }
                _ => {}
            }
            if let Some(r) = records.iter_mut().find(|r| data_of(r) == Some(d)) {
                r.ttl = *ttl;
                if r.timestamp != 0 && now_hours >= r.timestamp.saturating_add(no_refresh) {
                    r.timestamp = now_hours;
                }
            } else {
                records.push(zone_record(d.clone(), *ttl, 0, now_hours));
            }
        }
        Change::DeleteType(t) => records.retain(|r| {
            let Some(d) = data_of(r) else { return false };
            let protected = apex && matches!(d.rtype(), rtype::SOA | rtype::NS);
            protected || (*t != rtype::ANY && d.rtype() != *t)
        }),
        Change::Delete(d) => {
            if apex && d.rtype() == rtype::SOA {
                return;
            }
            let last_ns = apex
                && d.rtype() == rtype::NS
                && records
                    .iter()
                    .filter(|r| matches!(data_of(r), Some(RData::Ns(_))))
                    .count()
                    <= 1;
            if !last_ns {
                records.retain(|r| data_of(r) != Some(d));
            }
        }
    }
}

/// RFC 1982 serial number arithmetic: whether `a` is later than `b`.
fn serial_newer(a: u32, b: u32) -> bool {
    a != b && a.wrapping_sub(b) < 0x8000_0000
}

/// Checks an update's form, then runs it in the writer; the response code.
pub async fn update(
    ctx: &kauri_ldap::ctx::Ctx,
    catalog: &crate::zones::Catalog,
    msg: &Message,
    zone: &Zone,
    requester: Option<Requester>,
    now_unix: u64,
) -> u8 {
    match zone.info.allow_update() {
        allow_update::NONE => return rcode::REFUSED,
        allow_update::SECURE if requester.is_none() => return rcode::REFUSED,
        _ => {}
    }
    let plan = match plan(msg, zone) {
        Ok(p) => p,
        Err(code) => return code,
    };
    let outcome = Arc::new(Mutex::new((rcode::SERVFAIL, Applied::default())));
    let out = outcome.clone();
    let work = Work(Box::new(move |dir, w| {
        let mut applied = Applied::default();
        let code = run(dir, w, &plan, requester.as_ref(), now_unix, &mut applied)?;
        *out.lock() = (code, applied);
        if code == rcode::NOERROR {
            Ok(())
        } else {
            // Nothing of a refused update stays.
            Err(DirError::UnwillingToPerform(format!(
                "dns update refused ({code})"
            )))
        }
    }));
    match ctx.writer.run_task(Task::Run(work)).await {
        Ok(()) => {
            // The zone's name index follows the update instead of being rebuilt.
            let (_, applied) = std::mem::take(&mut *outcome.lock());
            if let Some((before, after)) = applied.serial {
                catalog.patch(zone.info.id, before, after, &applied.names);
            }
            rcode::NOERROR
        }
        Err(e) => {
            let code = outcome.lock().0;
            if code == rcode::SERVFAIL {
                tracing::warn!(error = %e, "dns: update failed");
            }
            code
        }
    }
}

/// The zone an update names (its zone section: one SOA question).
pub fn zone_question(msg: &Message) -> Result<&Name, u8> {
    match msg.questions.as_slice() {
        [q] if q.qtype == rtype::SOA && (q.qclass == class::IN) => Ok(&q.name),
        _ => Err(rcode::FORMERR),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn serial_arithmetic() {
        assert!(serial_newer(2, 1));
        assert!(serial_newer(0, u32::MAX));
        assert!(!serial_newer(1, 1));
        assert!(!serial_newer(1, 2));
    }

    #[test]
    fn refresh_waits_for_the_no_refresh_interval() {
        let a = RData::A("10.0.0.1".parse().unwrap());
        let mut recs = vec![];
        apply_change(&mut recs, &Change::Add(a.clone(), 600), false, 1000, 168);
        assert_eq!(recs[0].timestamp, 1000);
        apply_change(&mut recs, &Change::Add(a.clone(), 600), false, 1100, 168);
        assert_eq!(recs[0].timestamp, 1000, "within the no-refresh interval");
        apply_change(&mut recs, &Change::Add(a.clone(), 600), false, 1168, 168);
        assert_eq!(recs[0].timestamp, 1168);
        let mut fixed = vec![zone_record(a.clone(), 600, 0, 0)];
        apply_change(&mut fixed, &Change::Add(a, 600), false, 5000, 168);
        assert_eq!(fixed[0].timestamp, 0, "static records stay static");
    }

    #[test]
    fn cname_and_apex_rules() {
        let t = Name::parse("x.example.com").unwrap();
        let mut recs = vec![zone_record(RData::A("10.0.0.1".parse().unwrap()), 60, 0, 0)];
        apply_change(&mut recs, &Change::Add(RData::Cname(t), 60), false, 1, 1);
        assert_eq!(recs.len(), 1);
        let ns = RData::Ns(Name::parse("dc1.example.com").unwrap());
        let mut apex = vec![zone_record(ns.clone(), 60, 0, 0)];
        apply_change(&mut apex, &Change::Delete(ns.clone()), true, 1, 1);
        assert_eq!(apex.len(), 1, "the last NS of the apex stays");
        apply_change(&mut apex, &Change::DeleteType(rtype::ANY), true, 1, 1);
        assert_eq!(apex.len(), 1);
    }
}
