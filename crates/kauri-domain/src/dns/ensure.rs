//! Giving a domain its DNS data: the partitions, the domain and `_msdcs` zones, and the
//! records the DC registers — at provisioning and at every start, so an older domain gains
//! them and a DC whose addresses or sites changed has its records follow.

use std::collections::BTreeMap;
use std::net::IpAddr;

use kauri_db::{Dn, Modification, ModifyOp, Rdn};
use kauri_dns_proto::dnsp::{Body, DnsRecord};
use kauri_dns_proto::{Name, RData, Soa};
use kauri_kv::Backend;

use super::dc_records::{DcIdentity, DcRecord, ZoneKind, DC_RECORD_TTL};
use super::layout::{DnsLayout, APEX};
use super::nodes::{self, default_zone_properties, zone_record};
use crate::directory::view::View;
use crate::directory::{Caller, Change, DirError, DirResult, Directory, Request};
use crate::provision::{dns_partition_entries, DnsPartitions};

/// Time to live of a zone's SOA and NS records.
pub const ZONE_TTL: u32 = 3600;

/// What [`Directory::ensure_dns`] did.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct DnsEnsured {
    /// The DNS partitions were created.
    pub partitions_created: bool,
    /// Zones created.
    pub zones_created: Vec<String>,
    /// Names whose records changed.
    pub nodes_changed: usize,
}

fn bad(e: impl std::fmt::Display) -> DirError {
    DirError::UnwillingToPerform(e.to_string())
}

/// Whether two records hold the same data (TTL, serial and timestamp aside).
fn same_data(a: &DnsRecord, b: &RData) -> bool {
    matches!(&a.body, Body::Record(d) if d == b)
}

impl<B: Backend> Directory<B> {
    /// Creates what the domain's DNS lacks, inside the caller's write transaction: the
    /// DomainDnsZones and ForestDnsZones partitions, the domain zone and the forest's
    /// `_msdcs` zone, the `DNS/<host>` SPN of the DC, and every record the DC registers
    /// with `addresses`. Addresses the DC held before and no longer does are removed from
    /// its names. Records others added are left alone. The caller commits and then
    /// [`Directory::rediscover`]s (new partitions change the domain's naming contexts).
    pub fn ensure_dns(
        &self,
        w: &mut kauri_db::DbWrite<'_, B>,
        addresses: &[IpAddr],
        now_unix: u64,
    ) -> DirResult<DnsEnsured> {
        let mut done = DnsEnsured::default();
        let Some(info) = self.domain() else {
            return Ok(done);
        };
        let (Some(ntds), Some(server)) = (info.ntds_settings.clone(), info.server.clone()) else {
            return Ok(done);
        };
        let layout = DnsLayout::of(&info)?;
        done.partitions_created = self.ensure_partitions(w, &info, &ntds, &layout)?;
        let identity = self.dc_identity(w, &info, &ntds, &server, addresses)?;
        self.ensure_dns_spn(w, &info, &identity.fqdn)?;
        let mut zone_dns = BTreeMap::new();
        for (kind, zone, forest) in [
            (ZoneKind::Domain, layout.domain_zone.clone(), false),
            (ZoneKind::Msdcs, layout.msdcs_zone.clone(), true),
        ] {
            let container = layout.container_for(forest);
            let zone_dn = DnsLayout::zone_dn(container, &zone)?;
            if w.id_of(&zone_dn)?.is_none() {
                self.create_zone(
                    w,
                    container,
                    &zone,
                    &identity.fqdn,
                    &info.dns_name,
                    now_unix,
                )?;
                done.zones_created.push(zone.clone());
            }
            zone_dns.insert(kind, zone_dn);
        }
        // The domain zone delegates `_msdcs` to the DC, as Windows does for a forest root.
        let mut wanted: Vec<DcRecord> = identity.records();
        if let Ok(target) = Name::parse(&identity.fqdn) {
            wanted.push(DcRecord {
                zone: ZoneKind::Domain,
                name: "_msdcs".into(),
                data: RData::Ns(target),
            });
        }
        // Addresses this DC held and no longer does: those of its host name.
        let mut stale = Vec::new();
        if let (Some(host), Some(domain_zone)) =
            (identity.host_label(), zone_dns.get(&ZoneKind::Domain))
        {
            if let Some(n) = nodes::node(w, domain_zone, &host)? {
                for r in n.live() {
                    if let Body::Record(d @ (RData::A(_) | RData::Aaaa(_))) = &r.body {
                        if !wanted
                            .iter()
                            .any(|x| x.name.eq_ignore_ascii_case(&host) && &x.data == d)
                        {
                            stale.push(d.clone());
                        }
                    }
                }
            }
        }
        let mut by_node: BTreeMap<(ZoneKind, String), Vec<RData>> = BTreeMap::new();
        for r in wanted {
            by_node
                .entry((r.zone, r.name.to_ascii_lowercase()))
                .or_default()
                .push(r.data);
        }
        let mut touched = std::collections::BTreeSet::new();
        for ((kind, name), datas) in by_node {
            let Some(zone_dn) = zone_dns.get(&kind) else {
                continue;
            };
            let existing = nodes::node(w, zone_dn, &name)?;
            let mut records: Vec<DnsRecord> = existing
                .as_ref()
                .filter(|n| !n.tombstoned)
                .map(|n| n.records.clone())
                .unwrap_or_default();
            let before = records.clone();
            records.retain(|r| !stale.iter().any(|s| same_data(r, s)));
            for d in datas {
                if !records.iter().any(|r| same_data(r, &d)) {
                    records.push(zone_record(d, DC_RECORD_TTL, 0, 0));
                }
            }
            if existing.is_some() && records == before {
                continue;
            }
            self.write_dns_node(w, zone_dn, &name, records, None, now_unix)?;
            done.nodes_changed += 1;
            touched.insert(kind);
        }
        for kind in touched {
            if let Some(zone_dn) = zone_dns.get(&kind) {
                self.bump_dns_serial(w, zone_dn, now_unix)?;
            }
        }
        Ok(done)
    }

    /// Adds the partitions' entries that are missing; true when the heads were created.
    fn ensure_partitions(
        &self,
        w: &mut kauri_db::DbWrite<'_, B>,
        info: &crate::directory::DomainInfo,
        ntds: &Dn,
        layout: &DnsLayout,
    ) -> DirResult<bool> {
        let created = w.id_of(&layout.domain_nc)?.is_none();
        let guid = || -> DirResult<String> {
            Ok(crate::schema::builtin::format_guid(
                &crate::directory::new_guid()?,
            ))
        };
        let snap = self.schema();
        let entries = dns_partition_entries(
            &snap.schema,
            &DnsPartitions {
                domain: &info.domain_dn,
                config: &info.config_dn,
                ntds,
                dns_name: &info.dns_name,
                cross_ref_names: [guid()?, guid()?],
            },
        )
        .map_err(bad)?;
        let system = Request {
            caller: Caller::System,
            encrypted: true,
            change: Change::Delete {
                dn: Dn::root(),
                tree: false,
            },
        };
        // A crossRef already naming the partition stands for it, whatever its name.
        let partitions = info
            .config_dn
            .child(Rdn::new("CN", "Partitions").map_err(bad)?);
        let mut named = Vec::new();
        if let Some(pid) = w.id_of(&partitions)? {
            for id in w.children(pid)? {
                named.extend(w.values(id, "nCName")?);
            }
        }
        let mut later = Vec::new();
        for mut pe in entries {
            if w.id_of(&pe.entry.dn)?.is_some() {
                continue;
            }
            let names_nc = pe
                .entry
                .get("nCName")
                .and_then(|v| v.first())
                .and_then(|v| std::str::from_utf8(v).ok())
                .and_then(|t| Dn::parse(t).ok());
            if let Some(nc) = names_nc {
                if named
                    .iter()
                    .filter_map(|v| std::str::from_utf8(v).ok().and_then(|t| Dn::parse(t).ok()))
                    .any(|d| d == nc)
                {
                    continue;
                }
            }
            later.extend(self.take_forward_references(w, &mut pe.entry)?);
            let dn = pe.entry.dn.to_string();
            self.add_entry(w, &system, &snap, pe.entry, pe.naming_context)
                .map_err(|e| bad(format!("creating {dn}: {e}")))?;
        }
        self.add_forward_references(w, later)?;
        Ok(created)
    }

    /// A new zone: its `dnsZone` with AD's default settings and its apex with SOA and NS.
    /// The SOA's mailbox is `hostmaster.<domain>` (a mailbox cannot hold `_msdcs`).
    fn create_zone(
        &self,
        w: &mut kauri_db::DbWrite<'_, B>,
        container: &Dn,
        zone: &str,
        primary: &str,
        domain: &str,
        now_unix: u64,
    ) -> DirResult<()> {
        self.create_dns_zone(w, container, zone, default_zone_properties())?;
        let zone_dn = DnsLayout::zone_dn(container, zone)?;
        let mname = Name::parse(primary).map_err(bad)?;
        let rname = Name::parse(&format!("hostmaster.{domain}")).map_err(bad)?;
        let soa = RData::Soa(Soa {
            mname: mname.clone(),
            rname,
            serial: 1,
            refresh: 900,
            retry: 600,
            expire: 86400,
            minimum: 3600,
        });
        let records = vec![
            zone_record(soa, ZONE_TTL, 1, 0),
            zone_record(RData::Ns(mname), ZONE_TTL, 1, 0),
        ];
        self.write_dns_node(w, &zone_dn, APEX, records, None, now_unix)
    }

    /// Adds a `dnsZone` object with `properties` (its apex is the caller's to write).
    pub fn create_dns_zone(
        &self,
        w: &mut kauri_db::DbWrite<'_, B>,
        container: &Dn,
        zone: &str,
        properties: Vec<kauri_dns_proto::dnsp::DnsProperty>,
    ) -> DirResult<Dn> {
        let dn = DnsLayout::zone_dn(container, zone)?;
        let mut entry = kauri_db::Entry::new(dn.clone());
        entry.push("objectClass", vec![b"top".to_vec(), b"dnsZone".to_vec()]);
        entry.push("dc", vec![zone.to_ascii_lowercase().into_bytes()]);
        entry.push(
            "dnsProperty",
            properties.iter().map(|p| p.encode()).collect(),
        );
        entry.push("showInAdvancedViewOnly", vec![b"TRUE".to_vec()]);
        self.apply(
            w,
            &Request {
                caller: Caller::System,
                encrypted: true,
                change: Change::Add(entry),
            },
        )?;
        Ok(dn)
    }

    /// `DNS/<host>` on the DC's account: the name GSS-TSIG clients ask tickets for.
    fn ensure_dns_spn(
        &self,
        w: &mut kauri_db::DbWrite<'_, B>,
        info: &crate::directory::DomainInfo,
        fqdn: &str,
    ) -> DirResult<()> {
        let Some(dc) = &info.dc_computer else {
            return Ok(());
        };
        let Some(id) = w.id_of(dc)? else {
            return Ok(());
        };
        let spn = format!("DNS/{fqdn}");
        let has = w
            .values(id, "servicePrincipalName")?
            .iter()
            .any(|v| v.eq_ignore_ascii_case(spn.as_bytes()));
        if has {
            return Ok(());
        }
        let add = Modification {
            op: ModifyOp::Add,
            attr: "servicePrincipalName".into(),
            values: vec![spn.into_bytes()],
        };
        self.apply(w, &Request::system_modify(dc.clone(), vec![add], true))
    }

    /// What the DC's records are made of, read from its objects.
    fn dc_identity<V: View>(
        &self,
        v: &V,
        info: &crate::directory::DomainInfo,
        ntds: &Dn,
        server: &Dn,
        addresses: &[IpAddr],
    ) -> DirResult<DcIdentity> {
        let guid_of = |dn: &Dn| -> DirResult<String> {
            let Some(id) = v.id_of(dn)? else {
                return Ok(String::new());
            };
            Ok(v.values(id, "objectGUID")?
                .first()
                .and_then(|g| <[u8; 16]>::try_from(g.as_slice()).ok())
                .map(|g| crate::schema::builtin::format_guid(&g))
                .unwrap_or_default())
        };
        let ntds_id = v.id_of(ntds)?;
        let options = match ntds_id {
            Some(id) => v.int(id, "options")?.unwrap_or(0),
            None => 0,
        };
        let fqdn = match v.id_of(server)? {
            Some(id) => v.text(id, "dNSHostName")?,
            None => None,
        };
        let fqdn = match fqdn {
            Some(f) if !f.is_empty() => f.to_ascii_lowercase(),
            _ => {
                let host = server
                    .rdn()
                    .and_then(|r| r.avas().first().map(|a| a.value.clone()))
                    .unwrap_or_default();
                format!("{}.{}", host.to_ascii_lowercase(), info.dns_name)
            }
        };
        let site_dn = server.parent().and_then(|servers| servers.parent());
        let site = site_dn
            .as_ref()
            .and_then(|s| s.rdn())
            .and_then(|r| r.avas().first().map(|a| a.value.clone()))
            .unwrap_or_else(|| "Default-First-Site-Name".into());
        let pdc = v
            .text(info.domain_id, "fSMORoleOwner")?
            .and_then(|t| Dn::parse(&t).ok())
            .is_none_or(|owner| owner == *ntds);
        let covered_sites = match &site_dn {
            Some(own) => super::coverage::covered_sites(v, info, own)?,
            None => Vec::new(),
        };
        Ok(DcIdentity {
            fqdn,
            domain: info.dns_name.clone(),
            ntds_guid: guid_of(ntds)?,
            domain_guid: guid_of(&info.domain_dn)?,
            site,
            covered_sites,
            addresses: addresses.to_vec(),
            global_catalog: options & 1 != 0,
            pdc,
        })
    }
}
