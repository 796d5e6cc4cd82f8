//! Automatic site coverage (MS-ADTS 6.3.2.3, Netlogon's `DsrGetDcSiteCoverageW`): a site
//! with no DC of its own is served by the DCs of the site reached through the cheapest
//! site link, which then register that site's `_sites` records too.

use kauri_db::{Dn, Rdn};

use crate::directory::view::View;
use crate::directory::{DirResult, DomainInfo};

/// A site link's cost when it states none (AD's default).
const DEFAULT_COST: i64 = 100;

fn named(base: &Dn, rdn: &str) -> Option<Dn> {
    Rdn::parse(rdn).ok().map(|r| base.child(r))
}

fn has_class<V: View>(v: &V, id: u64, class: &str) -> DirResult<bool> {
    Ok(v.values(id, "objectClass")?
        .iter()
        .any(|c| c.eq_ignore_ascii_case(class.as_bytes())))
}

/// Whether a site holds a DC: a server object with NTDS Settings below `CN=Servers`.
fn has_dc<V: View>(v: &V, site: &Dn) -> DirResult<bool> {
    let Some(servers) = named(site, "CN=Servers") else {
        return Ok(false);
    };
    let Some(sid) = v.id_of(&servers)? else {
        return Ok(false);
    };
    for server in v.children(sid)? {
        for child in v.children(server)? {
            if has_class(v, child, "nTDSDSA")? {
                return Ok(true);
            }
        }
    }
    Ok(false)
}

/// The names of the sites without a DC that `own` (this DC's site) covers: for each, the
/// DC sites linked to it at the lowest cost, ties going to the first by name.
pub fn covered_sites<V: View>(v: &V, info: &DomainInfo, own: &Dn) -> DirResult<Vec<String>> {
    let Some(sites_dn) = named(&info.config_dn, "CN=Sites") else {
        return Ok(Vec::new());
    };
    let Some(sites_id) = v.id_of(&sites_dn)? else {
        return Ok(Vec::new());
    };
    let mut sites: Vec<(Dn, String, bool)> = Vec::new();
    for id in v.children(sites_id)? {
        if !has_class(v, id, "site")? {
            continue;
        }
        let Ok(dn) = Dn::parse(&v.dn_of(id)?) else {
            continue;
        };
        let name = dn
            .rdn()
            .and_then(|r| r.avas().first().map(|a| a.value.clone()))
            .unwrap_or_default();
        let dc = has_dc(v, &dn)?;
        sites.push((dn, name, dc));
    }
    // Site links: (cost, sites) from every inter-site transport.
    let mut links: Vec<(i64, Vec<Dn>)> = Vec::new();
    if let Some(transports) = named(&sites_dn, "CN=Inter-Site Transports") {
        if let Some(tid) = v.id_of(&transports)? {
            for transport in v.children(tid)? {
                for link in v.children(transport)? {
                    if !has_class(v, link, "siteLink")? {
                        continue;
                    }
                    let cost = v.int(link, "cost")?.unwrap_or(DEFAULT_COST);
                    let members = v
                        .values(link, "siteList")?
                        .iter()
                        .filter_map(|b| std::str::from_utf8(b).ok())
                        .filter_map(|t| Dn::parse(t).ok())
                        .collect();
                    links.push((cost, members));
                }
            }
        }
    }
    let mut covered = Vec::new();
    for (site, name, dc) in &sites {
        if *dc {
            continue;
        }
        // The cheapest link from this site to a site with a DC.
        let mut best: Option<(i64, &str, &Dn)> = None;
        for (cost, members) in &links {
            if !members.contains(site) {
                continue;
            }
            for (other, other_name, other_dc) in &sites {
                if !other_dc || other == site || !members.contains(other) {
                    continue;
                }
                let better = match best {
                    None => true,
                    Some((c, n, _)) => {
                        *cost < c
                            || (*cost == c
                                && other_name.to_ascii_lowercase() < n.to_ascii_lowercase())
                    }
                };
                if better {
                    best = Some((*cost, other_name, other));
                }
            }
        }
        if best.is_some_and(|(_, _, chosen)| chosen == own) {
            covered.push(name.clone());
        }
    }
    Ok(covered)
}
