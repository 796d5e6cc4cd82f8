//! The domain NC: its head with the domain-wide policy, and the well-known
//! containers below it (MS-ADTS 6.1.1.4), `CN=System` and its contents.

use kauri_db::Dn;

use super::build::{Obj, Tree, DISALLOW_DELETE, PROTECTED};
use super::{cn, Names, ProvisionError, ProvisionParams, BEHAVIOR_VERSION, MAX_RID};
use crate::sid::Sid;

/// The GUID of the Default Domain Policy GPO.
pub const DEFAULT_DOMAIN_POLICY: &str = "31B2F340-016D-11D2-945F-00C04FB984F9";
/// The GUID of the Default Domain Controllers Policy GPO.
pub const DEFAULT_DC_POLICY: &str = "6AC1786C-016F-11D2-945F-00C04FB984F9";

/// Well-known GUIDs of NC containers (MS-ADTS 6.1.1.4), as the hex text of
/// DN-Binary values.
pub(crate) mod wko {
    /// CN=Users.
    pub const USERS: &str = "A9D1CA15768811D1ADED00C04FD8D5CD";
    /// CN=Computers.
    pub const COMPUTERS: &str = "AA312825768811D1ADED00C04FD8D5CD";
    /// CN=System.
    pub const SYSTEM: &str = "AB1D30F3768811D1ADED00C04FD8D5CD";
    /// OU=Domain Controllers.
    pub const DOMAIN_CONTROLLERS: &str = "A361B2FFFFD211D1AA4B00C04FD7D83A";
    /// CN=Infrastructure.
    pub const INFRASTRUCTURE: &str = "2FBAC1870ADE11D297C400C04FD8D5CD";
    /// CN=Deleted Objects (domain and configuration NCs).
    pub const DELETED_OBJECTS: &str = "18E2EA80684F11D2B9AA00C04F79F805";
    /// CN=LostAndFound (CN=LostAndFoundConfig in the configuration NC).
    pub const LOST_AND_FOUND: &str = "AB8153B7768811D1ADED00C04FD8D5CD";
    /// CN=ForeignSecurityPrincipals.
    pub const FOREIGN_SECURITY_PRINCIPALS: &str = "22B70C67D56E4EFB91E9300FCA3DC1AA";
    /// CN=Program Data.
    pub const PROGRAM_DATA: &str = "09460C08AE1E4A4EA0F64AEE7DAA1E5A";
    /// CN=Microsoft,CN=Program Data.
    pub const MICROSOFT_PROGRAM_DATA: &str = "F4BE92A4C777485E878E9421D53087DB";
    /// CN=NTDS Quotas (domain and configuration NCs).
    pub const NTDS_QUOTAS: &str = "6227F0AF1FC2410D8E3BB10615BB5B0F";
    /// CN=Managed Service Accounts (an `otherWellKnownObjects` value).
    pub const MANAGED_SERVICE_ACCOUNTS: &str = "1EB93889E40C45DF9F0C64D23BBB6237";
}

/// A `wellKnownObjects` value: `B:32:<GUID hex>:<DN>` (Object(DN-Binary)).
pub fn well_known(guid_hex: &str, dn: &Dn) -> String {
    format!("B:{}:{guid_hex}:{dn}", guid_hex.len())
}

/// The `gPLink` value linking one GPO.
fn gp_link(names: &Names, guid: &str) -> String {
    format!("[LDAP://CN={{{guid}}},CN=Policies,{};0]", names.system)
}

/// The Deleted Objects container of an NC (MS-ADTS 6.1.1.4.2).
pub fn deleted_objects(tree: &mut Tree, nc: &Dn) -> Result<Dn, ProvisionError> {
    let dn = cn(nc, "Deleted Objects")?;
    tree.add(
        Obj::new(dn.clone(), "container")
            .describe("Default container for deleted objects")
            .boolean("isDeleted", true)
            .advanced(true)
            .critical(PROTECTED),
    )?;
    Ok(dn)
}

/// The NTDS Quotas container of an NC.
pub fn quotas(tree: &mut Tree, nc: &Dn) -> Result<Dn, ProvisionError> {
    let dn = cn(nc, "NTDS Quotas")?;
    tree.add(
        Obj::new(dn.clone(), "msDS-QuotaContainer")
            .describe("Quota specifications container")
            .int("msDS-TombstoneQuotaFactor", 100)
            .critical(DISALLOW_DELETE),
    )?;
    Ok(dn)
}

/// The domain NC head, its containers and `CN=System`.
pub fn domain(
    tree: &mut Tree,
    names: &Names,
    params: &ProvisionParams,
) -> Result<(), ProvisionError> {
    let d = &names.domain;
    let computers = cn(d, "Computers")?;
    let fsp = cn(d, "ForeignSecurityPrincipals")?;
    let deleted = cn(d, "Deleted Objects")?;
    let infrastructure = cn(d, "Infrastructure")?;
    let lost = cn(d, "LostAndFound")?;
    let program_data = cn(d, "Program Data")?;
    let microsoft = cn(&program_data, "Microsoft")?;
    let quotas_dn = cn(d, "NTDS Quotas")?;
    let msa = cn(d, "Managed Service Accounts")?;
    let rid_manager = cn(&names.system, "RID Manager$")?;
    let wkos = [
        (wko::NTDS_QUOTAS, &quotas_dn),
        (wko::MICROSOFT_PROGRAM_DATA, &microsoft),
        (wko::PROGRAM_DATA, &program_data),
        (wko::FOREIGN_SECURITY_PRINCIPALS, &fsp),
        (wko::DELETED_OBJECTS, &deleted),
        (wko::INFRASTRUCTURE, &infrastructure),
        (wko::LOST_AND_FOUND, &lost),
        (wko::SYSTEM, &names.system),
        (wko::DOMAIN_CONTROLLERS, &names.dc_ou),
        (wko::COMPUTERS, &computers),
        (wko::USERS, &names.users),
    ]
    .map(|(g, dn)| well_known(g, dn));
    tree.add_head(
        Obj::new(d.clone(), "domainDNS")
            .sid(&params.domain_sid)
            .int("minPwdLength", 7)
            .int("pwdProperties", 1)
            .int("pwdHistoryLength", 24)
            .int("minPwdAge", -864_000_000_000)
            .int("maxPwdAge", -36_288_000_000_000)
            .int("lockoutThreshold", 0)
            .int("lockoutDuration", -18_000_000_000)
            .int("lockOutObservationWindow", -18_000_000_000)
            .int("forceLogoff", i64::MIN)
            .int("nextRid", i64::from(super::DC_RID))
            .int("nTMixedDomain", 0)
            .int("serverState", 1)
            .int("uASCompat", 1)
            .int("msDS-Behavior-Version", BEHAVIOR_VERSION)
            .int("ms-DS-MachineAccountQuota", 10)
            .texts("wellKnownObjects", &wkos)
            .text(
                "otherWellKnownObjects",
                &well_known(wko::MANAGED_SERVICE_ACCOUNTS, &msa),
            )
            .dn("fSMORoleOwner", &names.ntds)
            .dn("rIDManagerReference", &rid_manager)
            .dn("subRefs", &names.config)
            .text("gPLink", &gp_link(names, DEFAULT_DOMAIN_POLICY))
            .critical(PROTECTED),
    )?;
    let visible_container = |dn: &Dn, description: &str| {
        Obj::new(dn.clone(), "container")
            .describe(description)
            .advanced(false)
            .critical(PROTECTED)
    };
    tree.add(visible_container(
        &names.users,
        "Default container for upgraded user accounts",
    ))?;
    tree.add(visible_container(
        &computers,
        "Default container for upgraded computer accounts",
    ))?;
    tree.add(
        Obj::new(names.dc_ou.clone(), "organizationalUnit")
            .describe("Default container for domain controllers")
            .advanced(false)
            .text("gPLink", &gp_link(names, DEFAULT_DC_POLICY))
            .critical(PROTECTED),
    )?;
    builtin_domain(tree, d)?;
    tree.add(visible_container(
        &fsp,
        "Default container for security identifiers (SIDs) associated with objects from external, trusted domains",
    ))?;
    deleted_objects(tree, d)?;
    tree.add(
        Obj::new(infrastructure, "infrastructureUpdate")
            .dn("fSMORoleOwner", &names.ntds)
            .critical(PROTECTED),
    )?;
    tree.add(
        Obj::new(lost, "lostAndFound")
            .describe("Default container for orphaned objects")
            .critical(PROTECTED),
    )?;
    quotas(tree, d)?;
    tree.add(
        Obj::new(program_data, "container")
            .describe("Default location for storage of application data."),
    )?;
    tree.add(
        Obj::new(microsoft, "container")
            .describe("Default location for storage of Microsoft application data."),
    )?;
    tree.add(
        Obj::new(msa, "container")
            .describe("Default container for managed service accounts")
            .advanced(false),
    )?;
    system(tree, names, &rid_manager)
}

/// `CN=Builtin`: the builtin domain, S-1-5-32, with the fixed account
/// policy AD gives it.
fn builtin_domain(tree: &mut Tree, domain: &Dn) -> Result<(), ProvisionError> {
    let builtin = Sid {
        authority: 5,
        subs: vec![32],
    };
    tree.add(
        Obj::new(cn(domain, "Builtin")?, "builtinDomain")
            .sid(&builtin)
            .int("minPwdLength", 0)
            .int("pwdProperties", 0)
            .int("pwdHistoryLength", 0)
            .int("minPwdAge", 0)
            .int("maxPwdAge", -37_108_517_437_440)
            .int("lockoutThreshold", 0)
            .int("lockoutDuration", -18_000_000_000)
            .int("lockOutObservationWindow", -18_000_000_000)
            .int("forceLogoff", i64::MIN)
            .int("nextRid", 1000)
            .int("serverState", 1)
            .int("uASCompat", 1)
            .advanced(false)
            .critical(PROTECTED),
    )
}

/// `CN=System` and what a DC needs in it: AdminSDHolder, the password
/// settings container, the default GPOs and the RID manager.
fn system(tree: &mut Tree, names: &Names, rid_manager: &Dn) -> Result<(), ProvisionError> {
    let s = &names.system;
    tree.add(
        Obj::new(s.clone(), "container")
            .describe("Builtin system settings")
            .critical(PROTECTED),
    )?;
    tree.add(Obj::new(cn(s, "AdminSDHolder")?, "container").critical(PROTECTED))?;
    tree.add(
        Obj::new(
            cn(s, "Password Settings Container")?,
            "msDS-PasswordSettingsContainer",
        )
        .int("systemFlags", PROTECTED)
        .advanced(true),
    )?;
    let policies = cn(s, "Policies")?;
    tree.add(Obj::new(policies.clone(), "container").critical(PROTECTED))?;
    for (guid, name) in [
        (DEFAULT_DOMAIN_POLICY, "Default Domain Policy"),
        (DEFAULT_DC_POLICY, "Default Domain Controllers Policy"),
    ] {
        let gpo = cn(&policies, &format!("{{{guid}}}"))?;
        let path = format!(
            "\\\\{d}\\sysvol\\{d}\\Policies\\{{{guid}}}",
            d = names.dns_domain
        );
        tree.add(
            Obj::new(gpo.clone(), "groupPolicyContainer")
                .text("displayName", name)
                .int("gPCFunctionalityVersion", 2)
                .text("gPCFileSysPath", &path)
                .int("versionNumber", 0)
                .int("flags", 0)
                .critical(PROTECTED),
        )?;
        for sub in ["User", "Machine"] {
            tree.add(Obj::new(cn(&gpo, sub)?, "container").critical(PROTECTED))?;
        }
    }
    let first_free = DC_POOL_NEXT;
    tree.add(
        Obj::new(rid_manager.clone(), "rIDManager")
            .int("rIDAvailablePool", rid_pool(first_free, MAX_RID))
            .dn("fSMORoleOwner", &names.ntds)
            .critical(PROTECTED),
    )
}

/// The first RID the RID master has not handed out: just after the first
/// DC's pool.
const DC_POOL_NEXT: u32 = super::DC_POOL_LAST + 1;

/// A RID pool as AD stores it in a LargeInteger: the first RID in the low
/// 32 bits, the last in the high 32 bits.
pub fn rid_pool(first: u32, last: u32) -> i64 {
    (i64::from(last) << 32) | i64::from(first)
}

/// The RID pool the first DC starts with.
#[cfg(test)]
pub fn dc_pool() -> i64 {
    rid_pool(crate::sid::rid::FIRST_ALLOCATED, super::DC_POOL_LAST)
}
