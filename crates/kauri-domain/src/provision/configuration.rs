//! The configuration NC: its head and well-known containers, the directory
//! service settings (tombstone lifetime, LDAP policy, optional features),
//! the well-known security principals, the site topology, and the
//! partitions container with one crossRef per naming context.

use super::build::{
    Obj, Tree, CONFIG_ALLOW_RENAME, DISALLOW_DELETE, DISALLOW_MOVE_ON_DELETE, PROTECTED,
};
use super::layout::{deleted_objects, quotas, well_known, wko};
use super::{cn, Names, ProvisionError, BEHAVIOR_VERSION};
use crate::sid::Sid;

/// Days a tombstone is kept before the garbage collector removes it.
pub const TOMBSTONE_LIFETIME_DAYS: i64 = 180;

/// `msDS-OptionalFeatureGUID` of the Recycle Bin feature,
/// 766ddcd8-acd0-445e-f3b9-a7f9b6744f2a, in Windows byte order.
pub const RECYCLE_BIN_FEATURE: [u8; 16] = [
    0xd8, 0xdc, 0x6d, 0x76, 0xd0, 0xac, 0x5e, 0x44, 0xf3, 0xb9, 0xa7, 0xf9, 0xb6, 0x74, 0x4f, 0x2a,
];

/// The LDAP policy defaults of the Default Query Policy (MS-ADTS 3.1.1.3.4.6).
const LDAP_ADMIN_LIMITS: &[&str] = &[
    "MaxValRange=1500",
    "MaxReceiveBuffer=10485760",
    "MaxDatagramRecv=4096",
    "MaxPoolThreads=4",
    "MaxResultSetSize=262144",
    "MaxTempTableSize=10000",
    "MaxQueryDuration=120",
    "MaxPageSize=1000",
    "MaxNotificationPerConn=5",
    "InitRecvTimeout=120",
    "MaxConnections=5000",
    "MaxConnIdleTime=900",
];

/// The well-known security principals (MS-DTYP 2.4.2.4) the configuration
/// NC lists by name.
const WELL_KNOWN_PRINCIPALS: &[(&str, &str)] = &[
    ("Anonymous Logon", "S-1-5-7"),
    ("Authenticated Users", "S-1-5-11"),
    ("Batch", "S-1-5-3"),
    ("Creator Group", "S-1-3-1"),
    ("Creator Owner", "S-1-3-0"),
    ("Dialup", "S-1-5-1"),
    ("Digest Authentication", "S-1-5-64-21"),
    ("Enterprise Domain Controllers", "S-1-5-9"),
    ("Everyone", "S-1-1-0"),
    ("Interactive", "S-1-5-4"),
    ("IUSR", "S-1-5-17"),
    ("Local Service", "S-1-5-19"),
    ("Network", "S-1-5-2"),
    ("Network Service", "S-1-5-20"),
    ("NTLM Authentication", "S-1-5-64-10"),
    ("Other Organization", "S-1-5-1000"),
    ("Owner Rights", "S-1-3-4"),
    ("Proxy", "S-1-5-8"),
    ("Remote Interactive Logon", "S-1-5-14"),
    ("Restricted", "S-1-5-12"),
    ("SChannel Authentication", "S-1-5-64-14"),
    ("Self", "S-1-5-10"),
    ("Service", "S-1-5-6"),
    ("System", "S-1-5-18"),
    ("Terminal Server User", "S-1-5-13"),
    ("This Organization", "S-1-5-15"),
];

/// The configuration NC head, then the schema NC head (which the DC's
/// nTDSDSA object links to, so it must exist first).
pub fn heads(tree: &mut Tree, names: &Names) -> Result<(), ProvisionError> {
    let c = &names.config;
    let wkos = [
        well_known(wko::DELETED_OBJECTS, &cn(c, "Deleted Objects")?),
        well_known(wko::LOST_AND_FOUND, &cn(c, "LostAndFoundConfig")?),
        well_known(wko::NTDS_QUOTAS, &cn(c, "NTDS Quotas")?),
    ];
    tree.add_head(
        Obj::new(c.clone(), "configuration")
            .texts("wellKnownObjects", &wkos)
            .dn("subRefs", &names.schema),
    )?;
    super::schema_objects::head(tree, names)
}

/// The configuration NC's containers, services, principals and sites.
pub fn add(tree: &mut Tree, names: &Names) -> Result<(), ProvisionError> {
    let c = &names.config;
    deleted_objects(tree, c)?;
    tree.add(Obj::new(cn(c, "LostAndFoundConfig")?, "lostAndFound").critical(DISALLOW_DELETE))?;
    quotas(tree, c)?;
    tree.add(Obj::new(cn(c, "Extended-Rights")?, "container").int("systemFlags", DISALLOW_DELETE))?;
    tree.add(Obj::new(cn(c, "DisplaySpecifiers")?, "container"))?;
    let wksp = cn(c, "WellKnown Security Principals")?;
    tree.add(Obj::new(wksp.clone(), "container").int("systemFlags", DISALLOW_DELETE))?;
    for (name, sid) in WELL_KNOWN_PRINCIPALS {
        tree.add(Obj::new(cn(&wksp, name)?, "foreignSecurityPrincipal").sid(&Sid::parse(sid)?))?;
    }
    services(tree, names)?;
    sites(tree, names)
}

/// `CN=Services` down to the directory service settings.
fn services(tree: &mut Tree, names: &Names) -> Result<(), ProvisionError> {
    let services = cn(&names.config, "Services")?;
    tree.add(Obj::new(services.clone(), "container").int("systemFlags", DISALLOW_DELETE))?;
    let windows_nt = cn(&services, "Windows NT")?;
    tree.add(Obj::new(windows_nt.clone(), "container"))?;
    let ds = cn(&windows_nt, "Directory Service")?;
    tree.add(
        Obj::new(ds.clone(), "nTDSService").int("tombstoneLifetime", TOMBSTONE_LIFETIME_DAYS),
    )?;
    let policies = cn(&ds, "Query-Policies")?;
    tree.add(Obj::new(policies.clone(), "container"))?;
    tree.add(
        Obj::new(cn(&policies, "Default Query Policy")?, "queryPolicy")
            .texts("lDAPAdminLimits", LDAP_ADMIN_LIMITS),
    )?;
    let features = cn(&ds, "Optional Features")?;
    tree.add(Obj::new(features.clone(), "container").int("systemFlags", PROTECTED))?;
    tree.add(
        Obj::new(
            cn(&features, "Recycle Bin Feature")?,
            "msDS-OptionalFeature",
        )
        .raw(
            "msDS-OptionalFeatureGUID",
            vec![RECYCLE_BIN_FEATURE.to_vec()],
        )
        .int("msDS-OptionalFeatureFlags", 1)
        .int("msDS-RequiredForestBehaviorVersion", 4)
        .int("systemFlags", PROTECTED),
    )
}

/// `CN=Sites` with the DC's site, the IP transport and its default site
/// link, and the subnets container. The DC's server object is added later
/// ([`super::dc::settings`]).
fn sites(tree: &mut Tree, names: &Names) -> Result<(), ProvisionError> {
    let sites = cn(&names.config, "Sites")?;
    tree.add(
        Obj::new(sites.clone(), "sitesContainer")
            .int("systemFlags", DISALLOW_DELETE | DISALLOW_MOVE_ON_DELETE),
    )?;
    tree.add(
        Obj::new(names.site.clone(), "site")
            .int("systemFlags", CONFIG_ALLOW_RENAME | DISALLOW_MOVE_ON_DELETE),
    )?;
    tree.add(
        Obj::new(cn(&names.site, "NTDS Site Settings")?, "nTDSSiteSettings")
            .dn("interSiteTopologyGenerator", &names.ntds),
    )?;
    tree.add(
        Obj::new(cn(&names.site, "Servers")?, "serversContainer")
            .int("systemFlags", DISALLOW_MOVE_ON_DELETE),
    )?;
    let transports = cn(&sites, "Inter-Site Transports")?;
    tree.add(
        Obj::new(transports.clone(), "interSiteTransportContainer")
            .int("systemFlags", DISALLOW_DELETE),
    )?;
    let ip = cn(&transports, "IP")?;
    tree.add(
        Obj::new(ip.clone(), "interSiteTransport")
            .text("transportDLLName", "ismip.dll")
            .text("transportAddressAttribute", "dNSHostName")
            .int("systemFlags", DISALLOW_DELETE),
    )?;
    tree.add(
        Obj::new(cn(&ip, "DEFAULTIPSITELINK")?, "siteLink")
            .int("cost", 100)
            .int("replInterval", 180)
            .dn("siteList", &names.site)
            .advanced(true)
            .int("systemFlags", CONFIG_ALLOW_RENAME),
    )?;
    tree.add(
        Obj::new(cn(&sites, "Subnets")?, "subnetContainer").int("systemFlags", DISALLOW_DELETE),
    )
}

/// `CN=Partitions`: the forest's functional level, the domain naming FSMO
/// role, and a crossRef for each NC.
pub fn partitions(tree: &mut Tree, names: &Names) -> Result<(), ProvisionError> {
    let partitions = cn(&names.config, "Partitions")?;
    tree.add(
        Obj::new(partitions.clone(), "crossRefContainer")
            .int("msDS-Behavior-Version", BEHAVIOR_VERSION)
            .dn("fSMORoleOwner", &names.ntds)
            .advanced(true)
            .int("systemFlags", DISALLOW_DELETE),
    )?;
    /// FLAG_CR_NTDS_NC.
    const NTDS_NC: i64 = 1;
    /// FLAG_CR_NTDS_DOMAIN.
    const NTDS_DOMAIN: i64 = 2;
    let cross_ref = |name: &str, nc| -> Result<Obj, ProvisionError> {
        Ok(Obj::new(cn(&partitions, name)?, "crossRef")
            .dn("nCName", nc)
            .text("dnsRoot", &names.dns_domain))
    };
    tree.add(cross_ref("Enterprise Configuration", &names.config)?.int("systemFlags", NTDS_NC))?;
    tree.add(cross_ref("Enterprise Schema", &names.schema)?.int("systemFlags", NTDS_NC))?;
    tree.add(
        cross_ref(&names.netbios, &names.domain)?
            .text("nETBIOSName", &names.netbios)
            .int("nTMixedDomain", 0)
            .int("msDS-Behavior-Version", BEHAVIOR_VERSION)
            .int("systemFlags", NTDS_NC | NTDS_DOMAIN),
    )
}
