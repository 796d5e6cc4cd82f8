//! The DNS application partitions (MS-ADTS 6.1.1.5): `DC=DomainDnsZones` and
//! `DC=ForestDnsZones` below the domain's name, each with the containers every naming
//! context has, its `CN=MicrosoftDNS` container and a crossRef in `CN=Partitions`.

use kauri_db::{Dn, Rdn};

use super::build::{Obj, Tree, DISALLOW_DELETE, PROTECTED};
use super::layout::{deleted_objects, quotas, well_known, wko};
use super::{cn, ProvisionEntry, ProvisionError};
use crate::schema::Schema;

/// crossRef `systemFlags` of an application partition: FLAG_CR_NTDS_NC |
/// FLAG_CR_NTDS_NOT_GC_REPLICATED (its objects are not in the global catalog).
const APP_NC_FLAGS: i64 = 1 | 4;

/// What the DNS partitions are made from.
pub struct DnsPartitions<'a> {
    /// The domain NC head.
    pub domain: &'a Dn,
    /// The configuration NC head.
    pub config: &'a Dn,
    /// The DC's `CN=NTDS Settings` (replica location and infrastructure master).
    pub ntds: &'a Dn,
    /// The domain's DNS name.
    pub dns_name: &'a str,
    /// The crossRefs' names: one GUID text per partition, domain first.
    pub cross_ref_names: [String; 2],
}

/// Every entry of both partitions, heads first, in the order to add them.
pub fn dns_partition_entries(
    schema: &Schema,
    p: &DnsPartitions<'_>,
) -> Result<Vec<ProvisionEntry>, ProvisionError> {
    let mut tree = Tree::new(schema);
    let partitions = cn(p.config, "Partitions")?;
    for (label, cr_name) in ["DomainDnsZones", "ForestDnsZones"]
        .into_iter()
        .zip(&p.cross_ref_names)
    {
        let nc = p.domain.child(Rdn::new("DC", label)?);
        let deleted = cn(&nc, "Deleted Objects")?;
        let lost = cn(&nc, "LostAndFound")?;
        let infrastructure = cn(&nc, "Infrastructure")?;
        let ntds_quotas = cn(&nc, "NTDS Quotas")?;
        let wkos = [
            well_known(wko::DELETED_OBJECTS, &deleted),
            well_known(wko::LOST_AND_FOUND, &lost),
            well_known(wko::INFRASTRUCTURE, &infrastructure),
            well_known(wko::NTDS_QUOTAS, &ntds_quotas),
        ];
        tree.add_head(Obj::new(nc.clone(), "domainDNS").texts("wellKnownObjects", &wkos))?;
        deleted_objects(&mut tree, &nc)?;
        tree.add(
            Obj::new(lost, "lostAndFound")
                .describe("Default container for orphaned objects")
                .advanced(true)
                .critical(DISALLOW_DELETE),
        )?;
        tree.add(
            Obj::new(infrastructure, "infrastructureUpdate")
                .dn("fSMORoleOwner", p.ntds)
                .critical(PROTECTED),
        )?;
        quotas(&mut tree, &nc)?;
        tree.add(Obj::new(cn(&nc, "MicrosoftDNS")?, "container").advanced(true))?;
        tree.add(
            Obj::new(cn(&partitions, cr_name)?, "crossRef")
                .dn("nCName", &nc)
                .text("dnsRoot", &format!("{label}.{}", p.dns_name))
                .int("systemFlags", APP_NC_FLAGS)
                .dn("msDS-NC-Replica-Locations", p.ntds),
        )?;
    }
    let mut out = tree.finish();
    super::descriptors::attach(&mut out, p.domain);
    Ok(out)
}
