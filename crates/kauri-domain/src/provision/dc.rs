//! The domain controller's own objects: its computer account with its RID
//! Set in the domain NC, and its `nTDSDSA` object (`CN=NTDS Settings`) in
//! the configuration NC.

use super::build::{
    Obj, Tree, CONFIG_ALLOW_LIMITED_MOVE, CONFIG_ALLOW_RENAME, DISALLOW_MOVE_ON_DELETE,
};
use super::layout::rid_pool;
use super::principals::NEVER;
use super::{cn, DcSpec, Names, ProvisionError, ProvisionParams, BEHAVIOR_VERSION};
use crate::sid::rid;

/// `userAccountControl` SERVER_TRUST_ACCOUNT | TRUSTED_FOR_DELEGATION.
const UAC_DC: i64 = 0x82000;
/// `msDS-SupportedEncryptionTypes` RC4-HMAC | AES128 | AES256.
const DC_ENCTYPES: i64 = 0x1C;
/// `options` of an nTDSDSA: NTDSDSA_OPT_IS_GC.
const IS_GC: i64 = 1;

/// The DC's computer account and its RID Set.
pub fn account(
    tree: &mut Tree,
    names: &Names,
    params: &ProvisionParams,
    spec: &DcSpec,
) -> Result<(), ProvisionError> {
    let rid_set = cn(&names.dc, "RID Set")?;
    let fqdn = &names.dc_fqdn;
    let host = names.dc_name.to_ascii_uppercase();
    let realm = &names.dns_domain;
    let netbios = &names.netbios;
    let spns = [
        format!("HOST/{fqdn}"),
        format!("HOST/{host}"),
        format!("HOST/{fqdn}/{realm}"),
        format!("HOST/{fqdn}/{netbios}"),
        format!("ldap/{fqdn}"),
        format!("ldap/{host}"),
        format!("ldap/{fqdn}/{realm}"),
        format!("ldap/{fqdn}/{netbios}"),
        format!("GC/{fqdn}/{realm}"),
        format!("RestrictedKrbHost/{fqdn}"),
        format!("RestrictedKrbHost/{host}"),
    ];
    tree.add(
        Obj::new(names.dc.clone(), "computer")
            .text("sAMAccountName", &format!("{host}$"))
            .sid(&params.domain_sid.with_rid(spec.rid))
            .int("userAccountControl", UAC_DC)
            .int("primaryGroupID", i64::from(rid::DOMAIN_CONTROLLERS))
            .int("accountExpires", NEVER)
            .text("dNSHostName", fqdn)
            .text("operatingSystem", "Kauri")
            .text("operatingSystemVersion", env!("CARGO_PKG_VERSION"))
            .texts("servicePrincipalName", &spns)
            .int("msDS-SupportedEncryptionTypes", DC_ENCTYPES)
            .dn("rIDSetReferences", &rid_set)
            .boolean("isCriticalSystemObject", true),
    )?;
    let pool = rid_pool(spec.pool_first, spec.pool_last);
    tree.add(
        Obj::new(rid_set, "rIDSet")
            .int("rIDAllocationPool", pool)
            .int("rIDPreviousAllocationPool", pool)
            .int("rIDUsedPool", 0)
            .int("rIDNextRID", i64::from(spec.pool_first)),
    )
}

/// The DC's server object in its site and its `CN=NTDS Settings`, which
/// hosts all three naming contexts and holds every FSMO role. Added after
/// the NC heads, which its linked attributes name.
pub fn settings(tree: &mut Tree, names: &Names) -> Result<(), ProvisionError> {
    tree.add(
        Obj::new(names.server.clone(), "server")
            .text("dNSHostName", &names.dc_fqdn)
            .dn("serverReference", &names.dc)
            .int(
                "systemFlags",
                CONFIG_ALLOW_RENAME | CONFIG_ALLOW_LIMITED_MOVE | DISALLOW_MOVE_ON_DELETE,
            ),
    )?;
    let ncs = [&names.config, &names.schema, &names.domain];
    tree.add(
        Obj::new(names.ntds.clone(), "nTDSDSA")
            .int("options", IS_GC)
            .int("msDS-Behavior-Version", BEHAVIOR_VERSION)
            .dn("dMDLocation", &names.schema)
            .dns("hasMasterNCs", &ncs)
            .dns("msDS-hasMasterNCs", &ncs)
            .dn("msDS-HasDomainNCs", &names.domain)
            .int("systemFlags", DISALLOW_MOVE_ON_DELETE),
    )
}
