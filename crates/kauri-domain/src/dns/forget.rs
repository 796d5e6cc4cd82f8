//! Removing a DC from DNS (a restore replaces the copied DCs with a new one): its
//! locator records, its name servers, its `_msdcs` CNAME and the addresses it held on the
//! domain's shared names; the zones' SOA names the new DC instead.

use std::net::IpAddr;

use kauri_dns_proto::dnsp::{Body, DnsRecord};
use kauri_dns_proto::{Name, RData};
use kauri_kv::Backend;

use super::layout::{DnsLayout, APEX};
use super::nodes;
use crate::directory::{DirError, DirResult, Directory};

/// Names the DC's addresses also stand under (the domain's and the partitions' names, and
/// the global catalog's).
const SHARED: &[&str] = &[APEX, "DomainDnsZones", "ForestDnsZones", "gc"];

impl<B: Backend> Directory<B> {
    /// Removes the DC `host` (its NTDS Settings GUID `ntds_guid`) from every zone, in the
    /// caller's transaction; SOA records naming it name `successor` instead.
    pub fn forget_dns_dc(
        &self,
        w: &mut kauri_db::DbWrite<'_, B>,
        host: &str,
        ntds_guid: Option<&str>,
        successor: &str,
        now_unix: u64,
    ) -> DirResult<()> {
        let Some(info) = self.domain() else {
            return Ok(());
        };
        let bad = |e: kauri_dns_proto::ProtoError| DirError::UnwillingToPerform(e.to_string());
        let old = Name::parse(host).map_err(bad)?;
        let new = Name::parse(successor).map_err(bad)?;
        let layout = DnsLayout::of(&info)?;
        let zones = nodes::zones(w, &layout)?;
        // The DC's own addresses, from its host name's records.
        let mut addresses: Vec<IpAddr> = Vec::new();
        for z in &zones {
            if let Some(rel) = old.relative_text(&Name::parse(&z.name).map_err(bad)?) {
                if let Some(n) = nodes::node(w, &z.dn, &rel)? {
                    for r in n.live() {
                        match &r.body {
                            Body::Record(RData::A(a)) => addresses.push(IpAddr::V4(*a)),
                            Body::Record(RData::Aaaa(a)) => addresses.push(IpAddr::V6(*a)),
                            _ => {}
                        }
                    }
                }
            }
        }
        for z in &zones {
            let zone_name = Name::parse(&z.name).map_err(bad)?;
            let host_rel = old.relative_text(&zone_name);
            let mut changed = false;
            for (rel, id) in nodes::node_names(w, z)? {
                let Ok(dn) = kauri_db::Dn::parse(&w.dn_string(id)?) else {
                    continue;
                };
                let node = nodes::node_by_id(w, id, dn)?;
                if node.tombstoned {
                    continue;
                }
                let is_host = host_rel
                    .as_deref()
                    .is_some_and(|h| h.eq_ignore_ascii_case(&rel));
                let is_cname = ntds_guid.is_some_and(|g| g.eq_ignore_ascii_case(&rel));
                let shared = SHARED.iter().any(|s| s.eq_ignore_ascii_case(&rel));
                let mut records: Vec<DnsRecord> = Vec::new();
                for mut r in node.records.clone() {
                    let keep = match &mut r.body {
                        Body::Record(RData::Srv { target, .. }) => *target != old,
                        Body::Record(RData::Ns(n)) => {
                            if *n == old {
                                *n = new.clone();
                            }
                            true
                        }
                        Body::Record(RData::Soa(s)) => {
                            if s.mname == old {
                                s.mname = new.clone();
                            }
                            true
                        }
                        Body::Record(RData::A(a)) => {
                            !(is_host || shared && addresses.contains(&IpAddr::V4(*a)))
                        }
                        Body::Record(RData::Aaaa(a)) => {
                            !(is_host || shared && addresses.contains(&IpAddr::V6(*a)))
                        }
                        Body::Record(RData::Cname(_)) => !is_cname,
                        _ => true,
                    };
                    if keep && !records.contains(&r) {
                        records.push(r);
                    }
                }
                if records != node.records {
                    self.write_dns_node(w, &z.dn, &rel, records, None, now_unix)?;
                    changed = true;
                }
            }
            if changed {
                self.bump_dns_serial(w, &z.dn, now_unix)?;
            }
        }
        Ok(())
    }
}
