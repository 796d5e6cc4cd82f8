//! The records a domain controller registers so clients find it (the DC locator, MS-ADTS
//! 6.3.2.3, and the set Samba's `dns_update_list` holds): its addresses, the `_ldap`,
//! `_kerberos`, `_kpasswd` and `_gc` SRV records of the domain, the `_msdcs` records by
//! role and by site, and the CNAME from its NTDS Settings GUID to its host name.

use std::net::IpAddr;

use kauri_dns_proto::{Name, RData};

/// Time to live of the records a DC registers (Netlogon's default, 600 s on Windows;
/// Samba uses 900).
pub const DC_RECORD_TTL: u32 = 900;

/// Which of the DC's two zones a record belongs to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum ZoneKind {
    /// The domain's zone (`samdom.example.com`), in DomainDnsZones.
    Domain,
    /// The forest's `_msdcs` zone, in ForestDnsZones.
    Msdcs,
}

/// One record of the DC's set.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DcRecord {
    /// The zone.
    pub zone: ZoneKind,
    /// The name relative to the zone (`@` for the apex).
    pub name: String,
    /// The record.
    pub data: RData,
}

/// What the DC's records are made of.
#[derive(Debug, Clone)]
pub struct DcIdentity {
    /// The DC's fully qualified host name (`dc1.samdom.example.com`).
    pub fqdn: String,
    /// The domain's DNS name.
    pub domain: String,
    /// objectGUID of the DC's NTDS Settings, as text (`f1b3…-…`).
    pub ntds_guid: String,
    /// objectGUID of the domain NC head, as text.
    pub domain_guid: String,
    /// The DC's own site.
    pub site: String,
    /// Sites without a DC of their own that this DC covers (automatic site coverage).
    pub covered_sites: Vec<String>,
    /// The DC's addresses.
    pub addresses: Vec<IpAddr>,
    /// Whether the DC is a global catalog.
    pub global_catalog: bool,
    /// Whether the DC holds the PDC emulator role.
    pub pdc: bool,
}

impl DcIdentity {
    /// The DC's host name relative to the domain zone (`dc1`), when it lies in it.
    pub fn host_label(&self) -> Option<String> {
        let fqdn = self.fqdn.to_ascii_lowercase();
        let suffix = format!(".{}", self.domain.to_ascii_lowercase());
        fqdn.strip_suffix(&suffix).map(str::to_string)
    }

    /// Every record of the DC, in a stable order.
    pub fn records(&self) -> Vec<DcRecord> {
        let mut out = Vec::new();
        let Ok(target) = Name::parse(&self.fqdn) else {
            return out;
        };
        let addr = |zone, name: &str, out: &mut Vec<DcRecord>| {
            for a in &self.addresses {
                let data = match a {
                    IpAddr::V4(v4) => RData::A(*v4),
                    IpAddr::V6(v6) => RData::Aaaa(*v6),
                };
                out.push(DcRecord {
                    zone,
                    name: name.to_string(),
                    data,
                });
            }
        };
        let srv = |zone, name: String, port: u16, out: &mut Vec<DcRecord>| {
            out.push(DcRecord {
                zone,
                name,
                data: RData::Srv {
                    priority: 0,
                    weight: 100,
                    port,
                    target: target.clone(),
                },
            });
        };
        use ZoneKind::{Domain, Msdcs};
        // Addresses: the domain's apex, the host, the DNS partitions' names, gc._msdcs.
        addr(Domain, "@", &mut out);
        if let Some(host) = self.host_label() {
            addr(Domain, &host, &mut out);
        }
        addr(Domain, "DomainDnsZones", &mut out);
        addr(Domain, "ForestDnsZones", &mut out);
        // The domain's service records.
        srv(Domain, "_ldap._tcp".into(), 389, &mut out);
        srv(Domain, "_kerberos._tcp".into(), 88, &mut out);
        srv(Domain, "_kerberos._udp".into(), 88, &mut out);
        srv(Domain, "_kpasswd._tcp".into(), 464, &mut out);
        srv(Domain, "_kpasswd._udp".into(), 464, &mut out);
        srv(Domain, "_ldap._tcp.DomainDnsZones".into(), 389, &mut out);
        srv(Domain, "_ldap._tcp.ForestDnsZones".into(), 389, &mut out);
        if self.global_catalog {
            srv(Domain, "_gc._tcp".into(), 3268, &mut out);
        }
        // _msdcs: by GUID, by role.
        out.push(DcRecord {
            zone: Msdcs,
            name: self.ntds_guid.to_ascii_lowercase(),
            data: RData::Cname(target.clone()),
        });
        srv(Msdcs, "_ldap._tcp.dc".into(), 389, &mut out);
        srv(Msdcs, "_kerberos._tcp.dc".into(), 88, &mut out);
        srv(
            Msdcs,
            format!(
                "_ldap._tcp.{}.domains",
                self.domain_guid.to_ascii_lowercase()
            ),
            389,
            &mut out,
        );
        if self.pdc {
            srv(Msdcs, "_ldap._tcp.pdc".into(), 389, &mut out);
        }
        if self.global_catalog {
            srv(Msdcs, "_ldap._tcp.gc".into(), 3268, &mut out);
            addr(Msdcs, "gc", &mut out);
        }
        // Per site: the DC's own and those it covers.
        let mut sites = vec![self.site.clone()];
        for s in &self.covered_sites {
            if !sites.iter().any(|x| x.eq_ignore_ascii_case(s)) {
                sites.push(s.clone());
            }
        }
        for site in &sites {
            srv(Domain, format!("_ldap._tcp.{site}._sites"), 389, &mut out);
            srv(
                Domain,
                format!("_kerberos._tcp.{site}._sites"),
                88,
                &mut out,
            );
            srv(
                Domain,
                format!("_ldap._tcp.{site}._sites.DomainDnsZones"),
                389,
                &mut out,
            );
            srv(
                Domain,
                format!("_ldap._tcp.{site}._sites.ForestDnsZones"),
                389,
                &mut out,
            );
            srv(Msdcs, format!("_ldap._tcp.{site}._sites.dc"), 389, &mut out);
            srv(
                Msdcs,
                format!("_kerberos._tcp.{site}._sites.dc"),
                88,
                &mut out,
            );
            if self.global_catalog {
                srv(Domain, format!("_gc._tcp.{site}._sites"), 3268, &mut out);
                srv(
                    Msdcs,
                    format!("_ldap._tcp.{site}._sites.gc"),
                    3268,
                    &mut out,
                );
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn dc() -> DcIdentity {
        DcIdentity {
            fqdn: "DC1.samdom.example.com".into(),
            domain: "samdom.example.com".into(),
            ntds_guid: "AAAAAAAA-0000-4000-8000-000000000001".into(),
            domain_guid: "bbbbbbbb-0000-4000-8000-000000000002".into(),
            site: "Default-First-Site-Name".into(),
            covered_sites: vec!["Branch".into()],
            addresses: vec!["10.0.0.1".parse().unwrap(), "fd00::1".parse().unwrap()],
            global_catalog: true,
            pdc: true,
        }
    }

    #[test]
    fn the_locator_set() {
        let recs = dc().records();
        let has = |zone, name: &str, rtype: u16| {
            recs.iter()
                .any(|r| r.zone == zone && r.name == name && r.data.rtype() == rtype)
        };
        use kauri_dns_proto::rdata::rtype;
        assert!(has(ZoneKind::Domain, "@", rtype::A));
        assert!(has(ZoneKind::Domain, "@", rtype::AAAA));
        assert!(has(ZoneKind::Domain, "dc1", rtype::A));
        assert!(has(ZoneKind::Domain, "_ldap._tcp", rtype::SRV));
        assert!(has(ZoneKind::Domain, "_kpasswd._udp", rtype::SRV));
        assert!(has(ZoneKind::Domain, "_gc._tcp.Branch._sites", rtype::SRV));
        assert!(has(
            ZoneKind::Msdcs,
            "aaaaaaaa-0000-4000-8000-000000000001",
            rtype::CNAME
        ));
        assert!(has(
            ZoneKind::Msdcs,
            "_ldap._tcp.bbbbbbbb-0000-4000-8000-000000000002.domains",
            rtype::SRV
        ));
        assert!(has(ZoneKind::Msdcs, "_ldap._tcp.pdc", rtype::SRV));
        assert!(has(ZoneKind::Msdcs, "gc", rtype::AAAA));
        assert!(has(
            ZoneKind::Msdcs,
            "_kerberos._tcp.Default-First-Site-Name._sites.dc",
            rtype::SRV
        ));
        let gc_port = recs.iter().find_map(|r| match (&r.name[..], &r.data) {
            ("_ldap._tcp.gc", RData::Srv { port, .. }) => Some(*port),
            _ => None,
        });
        assert_eq!(gc_port, Some(3268));
    }
}
