//! Where AD keeps DNS data: the names of the partitions, containers, zones and nodes.

use kauri_db::{Dn, Rdn};

use crate::directory::DomainInfo;
use crate::directory::{DirError, DirResult};

/// The relative name of a zone's apex node, which holds its SOA and NS records.
pub const APEX: &str = "@";

/// The DNs of a domain's DNS partitions and their `CN=MicrosoftDNS` containers.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DnsLayout {
    /// `DC=DomainDnsZones,<domain>`: zones replicated to the domain's DCs.
    pub domain_nc: Dn,
    /// `DC=ForestDnsZones,<forest root>`: zones replicated to every DC of the forest.
    pub forest_nc: Dn,
    /// `CN=MicrosoftDNS,DC=DomainDnsZones,…`.
    pub domain_container: Dn,
    /// `CN=MicrosoftDNS,DC=ForestDnsZones,…`.
    pub forest_container: Dn,
    /// `CN=MicrosoftDNS,CN=System,<domain>`: where Windows 2000 kept zones; read, never
    /// written.
    pub legacy_container: Dn,
    /// The domain's DNS name (`samdom.example.com`).
    pub domain_zone: String,
    /// The forest's `_msdcs` zone (`_msdcs.samdom.example.com`).
    pub msdcs_zone: String,
}

fn rdn(attr: &str, value: &str) -> DirResult<Rdn> {
    Rdn::new(attr, value).map_err(|e| DirError::UnwillingToPerform(format!("{attr}={value}: {e}")))
}

impl DnsLayout {
    /// The layout of a domain that is its own forest root.
    pub fn of(info: &DomainInfo) -> DirResult<DnsLayout> {
        let domain_nc = info.domain_dn.child(rdn("DC", "DomainDnsZones")?);
        let forest_nc = info.domain_dn.child(rdn("DC", "ForestDnsZones")?);
        let ms = rdn("CN", "MicrosoftDNS")?;
        Ok(DnsLayout {
            domain_container: domain_nc.child(ms.clone()),
            forest_container: forest_nc.child(ms.clone()),
            legacy_container: info.domain_dn.child(rdn("CN", "System")?).child(ms),
            domain_nc,
            forest_nc,
            domain_zone: info.dns_name.clone(),
            msdcs_zone: format!("_msdcs.{}", info.dns_name),
        })
    }

    /// The containers zones are found in, the partitions' first.
    pub fn containers(&self) -> [&Dn; 3] {
        [
            &self.domain_container,
            &self.forest_container,
            &self.legacy_container,
        ]
    }

    /// The container a new zone goes to: the forest's partition for `_msdcs` zones and
    /// when asked, the domain's otherwise.
    pub fn container_for(&self, forest_wide: bool) -> &Dn {
        if forest_wide {
            &self.forest_container
        } else {
            &self.domain_container
        }
    }

    /// The DN of a zone in a container.
    pub fn zone_dn(container: &Dn, zone: &str) -> DirResult<Dn> {
        Ok(container.child(rdn("DC", &zone.to_ascii_lowercase())?))
    }

    /// The DN of a node of a zone, by its name relative to the zone (`@` for the apex).
    pub fn node_dn(zone_dn: &Dn, relative: &str) -> DirResult<Dn> {
        Ok(zone_dn.child(rdn("DC", relative)?))
    }

    /// Whether `dn` is in one of the DNS partitions.
    pub fn holds(&self, dn: &Dn) -> bool {
        [&self.domain_nc, &self.forest_nc]
            .into_iter()
            .any(|nc| dn == nc || dn.is_descendant_of(nc))
    }
}
