//! Authoritative answers from the directory's zones (RFC 1034 §4.3.2 with RFC 4592's
//! wildcards and RFC 2308's negative answers): the records of a name, CNAME chains across
//! the served zones, referrals below a delegation with their glue, NXDOMAIN and NODATA
//! with the zone's SOA, and the addresses of SRV, MX and NS targets as additional data.

use kauri_dns_proto::dnsp::{Body, DnsRecord};
use kauri_dns_proto::rdata::{class, rtype};
use kauri_dns_proto::wire::{rcode, Record, RecordData};
use kauri_dns_proto::{Name, RData};
use kauri_domain::directory::view::View;
use kauri_domain::directory::DirResult;
use kauri_domain::dns::layout::APEX;
use kauri_domain::dns::nodes;

use crate::zones::{zone_of, Catalog, Zone};

/// The DS type (RFC 4034), answered by the parent side of a delegation.
const DS: u16 = 43;

/// CNAMEs followed at most in one answer.
const MAX_CHAIN: usize = 8;

/// What the server says about a question.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Answer {
    /// The response code.
    pub rcode: u8,
    /// Whether the answer is authoritative.
    pub authoritative: bool,
    /// The answer section.
    pub answers: Vec<Record>,
    /// The authority section.
    pub authority: Vec<Record>,
    /// The additional section.
    pub additional: Vec<Record>,
}

/// The wire record of a stored one, owned by `owner`.
pub fn wire_record(owner: &Name, data: &RData, ttl: u32) -> Record {
    Record {
        name: owner.clone(),
        rtype: data.rtype(),
        class: class::IN,
        ttl,
        data: RecordData::Data(data.clone()),
    }
}

/// The live records of a node (none for a tombstone), with their TTLs.
fn live(records: Vec<DnsRecord>, tombstoned: bool) -> Vec<(RData, u32)> {
    if tombstoned {
        return Vec::new();
    }
    records
        .into_iter()
        .filter_map(|r| match r.body {
            Body::Record(d) => Some((d, r.ttl)),
            Body::Tombstone { .. } => None,
        })
        .collect()
}

/// A served name's node, when it holds live records.
fn read_node<V: View>(v: &V, zone: &Zone, relative: &str) -> DirResult<Option<Vec<(RData, u32)>>> {
    let Some((records, tombstoned)) = nodes::records_in(v, zone.info.id, relative)? else {
        return Ok(None);
    };
    let live = live(records, tombstoned);
    Ok((!live.is_empty()).then_some(live))
}

/// The zone's SOA record, for the authority section of a negative answer (its TTL is
/// the lesser of the record's and the SOA minimum, RFC 2308 §3).
fn soa_record<V: View>(v: &V, zone: &Zone) -> DirResult<Option<Record>> {
    let Some(apex) = read_node(v, zone, APEX)? else {
        return Ok(None);
    };
    Ok(apex.iter().find_map(|(d, ttl)| match d {
        RData::Soa(s) => Some(wire_record(&zone.name, d, (*ttl).min(s.minimum))),
        _ => None,
    }))
}

/// The name `relative` to the zone, as the directory names its node.
fn relative_of(name: &Name, zone: &Zone) -> Option<String> {
    name.relative_text(&zone.name)
}

/// Answers `qname`/`qtype` from the zones, or `None` when no served zone holds the name
/// (the caller forwards or refuses it).
pub fn resolve<V: View>(
    v: &V,
    catalog: &Catalog,
    usn: u64,
    qname: &Name,
    qtype: u16,
) -> DirResult<Option<Answer>> {
    let zones = catalog.zones(v, usn)?;
    let Some(first) = zone_of(&zones, qname) else {
        return Ok(None);
    };
    let mut out = Answer {
        authoritative: true,
        ..Answer::default()
    };
    let mut name = qname.clone();
    let mut zone = first;
    for _ in 0..MAX_CHAIN {
        match step(v, catalog, zone, &name, qtype, &mut out)? {
            Step::Done => break,
            Step::Follow(target) => match zone_of(&zones, &target) {
                Some(z) => {
                    zone = z;
                    name = target;
                }
                // A target outside the served zones is the client's to resolve.
                None => break,
            },
        }
    }
    additional(v, &zones, &mut out)?;
    Ok(Some(out))
}

enum Step {
    Done,
    Follow(Name),
}

fn step<V: View>(
    v: &V,
    catalog: &Catalog,
    zone: &Zone,
    name: &Name,
    qtype: u16,
    out: &mut Answer,
) -> DirResult<Step> {
    let Some(rel) = relative_of(name, zone) else {
        return Ok(Step::Done);
    };
    // A delegation at or above the name (below the apex) makes this a referral. The
    // name's own node, read on the way, is kept for the answer.
    let mut own = None;
    if rel != APEX {
        let zone_depth = zone.name.labels().len();
        let depth = name.labels().len();
        for d in (zone_depth + 1)..=depth {
            let Some(cut) = ancestor(name, d) else {
                continue;
            };
            let Some(cut_rel) = relative_of(&cut, zone) else {
                continue;
            };
            let found = read_node(v, zone, &cut_rel)?;
            let ns: Vec<Record> = found
                .iter()
                .flatten()
                .filter(|(d, _)| matches!(d, RData::Ns(_)))
                .map(|(d, ttl)| wire_record(&cut, d, *ttl))
                .collect();
            if d == depth {
                own = Some(found);
            }
            if ns.is_empty() || (d == depth && qtype == DS) {
                continue;
            }
            out.authoritative = !out.answers.is_empty() && out.authoritative;
            out.authority.extend(ns);
            return Ok(Step::Done);
        }
    }
    let records = match own {
        Some(found) => found,
        None => read_node(v, zone, &rel)?,
    };
    if let Some(records) = records {
        return answer_from(name, &records, qtype, zone, v, out);
    }
    let index = catalog.index(v, zone)?;
    if index.has_below(&rel) {
        // An empty non-terminal: the name exists, with no records.
        negative(v, zone, out, false)?;
        return Ok(Step::Done);
    }
    // A wildcard at the closest encloser answers for names below it (RFC 4592).
    let mut encloser = name.parent();
    while let Some(e) = encloser {
        if !e.is_subdomain_of(&zone.name) {
            break;
        }
        let e_rel = relative_of(&e, zone).unwrap_or_else(|| APEX.into());
        if index.exists(&e_rel) {
            let wild = if e_rel == APEX {
                "*".to_string()
            } else {
                format!("*.{e_rel}")
            };
            if let Some(records) = read_node(v, zone, &wild)? {
                return answer_from(name, &records, qtype, zone, v, out);
            }
            break;
        }
        encloser = e.parent();
    }
    negative(v, zone, out, true)?;
    Ok(Step::Done)
}

/// The first `depth` labels from the root of `name` (its ancestor of that depth).
fn ancestor(name: &Name, depth: usize) -> Option<Name> {
    let labels = name.labels();
    let skip = labels.len().checked_sub(depth)?;
    Name::from_labels(labels.get(skip..)?.to_vec()).ok()
}

fn answer_from<V: View>(
    name: &Name,
    records: &[(RData, u32)],
    qtype: u16,
    zone: &Zone,
    v: &V,
    out: &mut Answer,
) -> DirResult<Step> {
    if qtype != rtype::CNAME && qtype != rtype::ANY {
        if let Some((cname @ RData::Cname(target), ttl)) =
            records.iter().find(|(d, _)| matches!(d, RData::Cname(_)))
        {
            if out.answers.iter().any(|r| r.name == *name) {
                // A loop: stop where it closes.
                return Ok(Step::Done);
            }
            out.answers.push(wire_record(name, cname, *ttl));
            return Ok(Step::Follow(target.clone()));
        }
    }
    let matching: Vec<_> = records
        .iter()
        .filter(|(d, _)| qtype == rtype::ANY || d.rtype() == qtype)
        .collect();
    if matching.is_empty() {
        negative(v, zone, out, false)?;
        return Ok(Step::Done);
    }
    for (d, ttl) in matching {
        out.answers.push(wire_record(name, d, *ttl));
    }
    Ok(Step::Done)
}

/// NXDOMAIN (`missing`) or NODATA, with the SOA of the zone (a CNAME chain ending at a
/// missing name is NXDOMAIN too, RFC 6604).
fn negative<V: View>(v: &V, zone: &Zone, out: &mut Answer, missing: bool) -> DirResult<()> {
    if missing {
        out.rcode = rcode::NXDOMAIN;
    }
    if let Some(soa) = soa_record(v, zone)? {
        out.authority.push(soa);
    }
    Ok(())
}

/// Addresses of the names SRV, MX and NS records point to, when the server holds them.
fn additional<V: View>(v: &V, zones: &[Zone], out: &mut Answer) -> DirResult<()> {
    let mut targets: Vec<Name> = Vec::new();
    for r in out.answers.iter().chain(&out.authority) {
        let t = match &r.data {
            RecordData::Data(RData::Srv { target, .. }) => target,
            RecordData::Data(RData::Mx { exchange, .. }) => exchange,
            RecordData::Data(RData::Ns(n)) => n,
            _ => continue,
        };
        if !targets.contains(t) {
            targets.push(t.clone());
        }
    }
    for t in targets {
        let Some(zone) = zone_of(zones, &t) else {
            continue;
        };
        let Some(rel) = relative_of(&t, zone) else {
            continue;
        };
        if let Some(records) = read_node(v, zone, &rel)? {
            for (d, ttl) in records {
                if matches!(d, RData::A(_) | RData::Aaaa(_)) {
                    out.additional.push(wire_record(&t, &d, ttl));
                }
            }
        }
    }
    Ok(())
}

/// Every record of a zone for a transfer (AXFR, RFC 5936): the SOA first, then each
/// name's records.
pub fn zone_records<V: View>(v: &V, zone: &Zone) -> DirResult<Vec<Record>> {
    let mut out = Vec::new();
    let Some(soa) = soa_record(v, zone)? else {
        return Ok(out);
    };
    out.push(soa);
    for (rel, id) in nodes::node_names(v, &zone.info)? {
        let (records, tombstoned) = nodes::records_by_id(v, id)?;
        if tombstoned {
            continue;
        }
        let owner = if rel == APEX {
            zone.name.clone()
        } else {
            match Name::parse(&format!("{rel}.{}", zone.name)) {
                Ok(n) => n,
                Err(_) => continue,
            }
        };
        for (d, ttl) in live(records, false) {
            if rel == APEX && matches!(d, RData::Soa(_)) {
                continue;
            }
            out.push(wire_record(&owner, &d, ttl));
        }
    }
    Ok(out)
}
