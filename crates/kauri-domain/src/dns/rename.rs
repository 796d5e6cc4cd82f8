//! DNS data in a renamed lab copy (`kauri domain backup rename`): the zones named after the
//! old realm take the new one, and every name inside a record (targets, name servers, the
//! SOA's names, aliases, PTRs) that ends in the old realm is moved to the new realm, so the
//! lab's DNS points at lab names only.

use kauri_db::{DbWrite, Dn, Modification, ModifyOp, Rdn};
use kauri_dns_proto::dnsp::{Body, DnsRecord};
use kauri_dns_proto::{Name, RData};
use kauri_kv::Backend;

use crate::directory::view::View;
use crate::directory::{DirError, DirResult};

fn unwilling(what: impl std::fmt::Display) -> DirError {
    DirError::UnwillingToPerform(what.to_string())
}

/// `name` with the suffix `old` (whole labels) replaced by `new`.
fn move_name(name: &Name, old: &Name, new: &Name) -> Option<Name> {
    if !name.is_subdomain_of(old) {
        return None;
    }
    let keep = name.labels().len() - old.labels().len();
    let mut labels: Vec<Vec<u8>> = name.labels().iter().take(keep).cloned().collect();
    labels.extend(new.labels().iter().cloned());
    Name::from_labels(labels).ok()
}

/// Moves the names inside a record; whether any moved.
fn move_record(r: &mut DnsRecord, old: &Name, new: &Name) -> bool {
    let Body::Record(data) = &mut r.body else {
        return false;
    };
    let mut moved = false;
    let mut fix = |n: &mut Name| {
        if let Some(m) = move_name(n, old, new) {
            *n = m;
            moved = true;
        }
    };
    match data {
        RData::Ns(n) | RData::Cname(n) | RData::Ptr(n) => fix(n),
        RData::Mx { exchange, .. } => fix(exchange),
        RData::Srv { target, .. } => fix(target),
        RData::Soa(s) => {
            fix(&mut s.mname);
            fix(&mut s.rname);
        }
        _ => {}
    }
    moved
}

/// Renames the zones and moves the record names of a renamed domain, inside the rename's
/// transaction (the naming contexts already moved to `new_domain`). Returns how many
/// objects changed.
pub fn rename_dns<B: Backend>(
    w: &mut DbWrite<'_, B>,
    new_domain: &Dn,
    old_realm: &str,
    new_realm: &str,
) -> DirResult<u64> {
    let old = Name::parse(old_realm).map_err(unwilling)?;
    let new = Name::parse(new_realm).map_err(unwilling)?;
    let rdn = |t: &str| Rdn::parse(t).map_err(|e| unwilling(format!("{t}: {e}")));
    let ms = rdn("CN=MicrosoftDNS")?;
    let containers = [
        new_domain
            .child(rdn("DC=DomainDnsZones")?)
            .child(ms.clone()),
        new_domain
            .child(rdn("DC=ForestDnsZones")?)
            .child(ms.clone()),
        new_domain.child(rdn("CN=System")?).child(ms),
    ];
    let mut changed = 0;
    for container in &containers {
        let Some(cid) = View::id_of(w, container)? else {
            continue;
        };
        for zid in w.children(cid)? {
            for nid in w.children(zid)? {
                let values = View::values(w, nid, "dnsRecord")?;
                let mut any = false;
                let rewritten: Vec<Vec<u8>> = values
                    .iter()
                    .map(|v| {
                        let Ok(mut r) = DnsRecord::decode(v) else {
                            return v.clone();
                        };
                        if move_record(&mut r, &old, &new) {
                            any = true;
                            r.encode()
                        } else {
                            v.clone()
                        }
                    })
                    .collect();
                if any {
                    let dn = Dn::parse(&w.dn_string(nid)?).map_err(unwilling)?;
                    w.modify(
                        &dn,
                        &[Modification {
                            op: ModifyOp::Replace,
                            attr: "dnsRecord".into(),
                            values: rewritten,
                        }],
                    )?;
                    changed += 1;
                }
            }
            let zdn = Dn::parse(&w.dn_string(zid)?).map_err(unwilling)?;
            let Some(zone) = zdn
                .rdn()
                .and_then(|r| r.avas().first().map(|a| a.value.clone()))
            else {
                continue;
            };
            let Some(renamed) = Name::parse(&zone)
                .ok()
                .and_then(|z| move_name(&z, &old, &new))
            else {
                continue;
            };
            let text = renamed.to_string().to_ascii_lowercase();
            let new_rdn = Rdn::new("DC", &text).map_err(unwilling)?;
            w.rename(&zdn, &new_rdn, true, None)?;
            w.modify(
                &zdn.with_rdn(new_rdn),
                &[Modification::new(ModifyOp::Replace, "name", &[&text])],
            )?;
            changed += 1;
        }
    }
    Ok(changed)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_move_by_whole_labels() {
        let old = Name::parse("samdom.example.com").unwrap();
        let new = Name::parse("lab.example.org").unwrap();
        let m = |t: &str| move_name(&Name::parse(t).unwrap(), &old, &new).map(|n| n.to_string());
        assert_eq!(
            m("dc1.samdom.example.com").as_deref(),
            Some("dc1.lab.example.org")
        );
        assert_eq!(
            m("_msdcs.SAMDOM.example.com").as_deref(),
            Some("_msdcs.lab.example.org")
        );
        assert_eq!(m("samdom.example.com").as_deref(), Some("lab.example.org"));
        assert_eq!(m("xsamdom.example.com"), None);
        assert_eq!(m("example.com"), None);
    }
}
