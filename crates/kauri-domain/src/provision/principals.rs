//! The built-in security principals of a new domain: the Administrator,
//! Guest and krbtgt accounts, the domain's well-known groups in `CN=Users`,
//! the Builtin aliases in `CN=Builtin`, and the foreign security principals
//! those aliases contain — with the descriptions, group types and
//! memberships AD gives them.

use kauri_db::Dn;

use super::build::{Obj, Tree, PROTECTED};
use super::{cn, Names, ProvisionError, ProvisionParams};
use crate::sid::rid::{self, builtin as b};
use crate::sid::Sid;

/// `groupType` of a global security group.
pub const GLOBAL_GROUP: i64 = -2147483646;
/// `groupType` of a domain-local security group.
pub const DOMAIN_LOCAL_GROUP: i64 = -2147483644;
/// `groupType` of a universal security group.
pub const UNIVERSAL_GROUP: i64 = -2147483640;
/// `groupType` of a Builtin alias (builtin-local security group).
pub const BUILTIN_LOCAL_GROUP: i64 = -2147483643;

/// `userAccountControl` NORMAL_ACCOUNT | DONT_EXPIRE_PASSWORD.
const UAC_ADMINISTRATOR: i64 = 0x10200;
/// `userAccountControl` NORMAL_ACCOUNT | DONT_EXPIRE_PASSWORD |
/// PASSWD_NOTREQD | ACCOUNTDISABLE.
const UAC_GUEST: i64 = 0x10222;
/// `userAccountControl` NORMAL_ACCOUNT | ACCOUNTDISABLE.
const UAC_KRBTGT: i64 = 0x202;
/// `accountExpires` meaning "never".
pub const NEVER: i64 = i64::MAX;

/// A member of a built-in group.
#[derive(Clone, Copy)]
enum Member {
    /// An account or group in `CN=Users`, by common name.
    Users(&'static str),
    /// A foreign security principal in `CN=ForeignSecurityPrincipals`, by SID.
    Foreign(&'static str),
}

/// A built-in group.
struct Group {
    rid: u32,
    name: &'static str,
    group_type: i64,
    description: &'static str,
    /// Whether AD protects it through AdminSDHolder (`adminCount` 1).
    protected: bool,
    members: &'static [Member],
}

/// Shorthand for the tables below.
const fn group(
    rid: u32,
    name: &'static str,
    group_type: i64,
    protected: bool,
    description: &'static str,
    members: &'static [Member],
) -> Group {
    Group {
        rid,
        name,
        group_type,
        description,
        protected,
        members,
    }
}

use Member::{Foreign, Users};

/// Foreign security principals the Builtin aliases contain: Interactive,
/// Enterprise Domain Controllers, Authenticated Users, IUSR.
const FOREIGN: [&str; 4] = ["S-1-5-4", "S-1-5-9", "S-1-5-11", "S-1-5-17"];

/// The domain's groups in `CN=Users`; members come before the groups that
/// list them.
#[rustfmt::skip]
const DOMAIN_GROUPS: &[Group] = &[
    group(rid::ENTERPRISE_READONLY_DOMAIN_CONTROLLERS, "Enterprise Read-only Domain Controllers", UNIVERSAL_GROUP, false,
        "Members of this group are Read-Only Domain Controllers in the enterprise", &[]),
    group(rid::DOMAIN_ADMINS, "Domain Admins", GLOBAL_GROUP, true,
        "Designated administrators of the domain", &[Users("Administrator")]),
    group(rid::DOMAIN_USERS, "Domain Users", GLOBAL_GROUP, false, "All domain users", &[]),
    group(rid::DOMAIN_GUESTS, "Domain Guests", GLOBAL_GROUP, false, "All domain guests", &[]),
    group(rid::DOMAIN_COMPUTERS, "Domain Computers", GLOBAL_GROUP, false,
        "All workstations and servers joined to the domain", &[]),
    group(rid::DOMAIN_CONTROLLERS, "Domain Controllers", GLOBAL_GROUP, true,
        "All domain controllers in the domain", &[]),
    group(rid::CERT_PUBLISHERS, "Cert Publishers", DOMAIN_LOCAL_GROUP, false,
        "Members of this group are permitted to publish certificates to the directory", &[]),
    group(rid::SCHEMA_ADMINS, "Schema Admins", UNIVERSAL_GROUP, true,
        "Designated administrators of the schema", &[Users("Administrator")]),
    group(rid::ENTERPRISE_ADMINS, "Enterprise Admins", UNIVERSAL_GROUP, true,
        "Designated administrators of the enterprise", &[Users("Administrator")]),
    group(rid::GROUP_POLICY_CREATOR_OWNERS, "Group Policy Creator Owners", GLOBAL_GROUP, false,
        "Members in this group can modify group policy for the domain", &[Users("Administrator")]),
    group(rid::READONLY_DOMAIN_CONTROLLERS, "Read-only Domain Controllers", GLOBAL_GROUP, true,
        "Members of this group are Read-Only Domain Controllers in the domain", &[]),
    group(rid::CLONEABLE_CONTROLLERS, "Cloneable Domain Controllers", GLOBAL_GROUP, false,
        "Members of this group that are domain controllers may be cloned.", &[]),
    group(rid::PROTECTED_USERS, "Protected Users", GLOBAL_GROUP, false,
        "Members of this group are afforded additional protections against authentication security threats. See http://go.microsoft.com/fwlink/?LinkId=298939 for more information.", &[]),
    group(rid::KEY_ADMINS, "Key Admins", GLOBAL_GROUP, false,
        "Members of this group can perform administrative actions on key objects within the domain.", &[]),
    group(rid::ENTERPRISE_KEY_ADMINS, "Enterprise Key Admins", UNIVERSAL_GROUP, false,
        "Members of this group can perform administrative actions on key objects within the forest.", &[]),
    group(rid::RAS_AND_IAS_SERVERS, "RAS and IAS Servers", DOMAIN_LOCAL_GROUP, false,
        "Servers in this group can access remote access properties of users", &[]),
    group(rid::ALLOWED_RODC_PASSWORD_REPLICATION, "Allowed RODC Password Replication Group", DOMAIN_LOCAL_GROUP, false,
        "Members in this group can have their passwords replicated to all read-only domain controllers in the domain", &[]),
    group(rid::DENIED_RODC_PASSWORD_REPLICATION, "Denied RODC Password Replication Group", DOMAIN_LOCAL_GROUP, false,
        "Members in this group cannot have their passwords replicated to any read-only domain controllers in the domain",
        &[Users("Read-only Domain Controllers"), Users("Group Policy Creator Owners"), Users("Domain Admins"),
          Users("Cert Publishers"), Users("Enterprise Admins"), Users("Schema Admins"),
          Users("Domain Controllers"), Users("krbtgt")]),
];

/// The Builtin aliases in `CN=Builtin`.
#[rustfmt::skip]
const BUILTIN_GROUPS: &[Group] = &[
    group(b::ADMINISTRATORS, "Administrators", BUILTIN_LOCAL_GROUP, true,
        "Administrators have complete and unrestricted access to the computer/domain",
        &[Users("Administrator"), Users("Domain Admins"), Users("Enterprise Admins")]),
    group(b::USERS, "Users", BUILTIN_LOCAL_GROUP, false,
        "Users are prevented from making accidental or intentional system-wide changes and can run most applications",
        &[Users("Domain Users"), Foreign("S-1-5-4"), Foreign("S-1-5-11")]),
    group(b::GUESTS, "Guests", BUILTIN_LOCAL_GROUP, false,
        "Guests have the same access as members of the Users group by default, except for the Guest account which is further restricted",
        &[Users("Guest"), Users("Domain Guests")]),
    group(b::ACCOUNT_OPERATORS, "Account Operators", BUILTIN_LOCAL_GROUP, true,
        "Members can administer domain user and group accounts", &[]),
    group(b::SERVER_OPERATORS, "Server Operators", BUILTIN_LOCAL_GROUP, true,
        "Members can administer domain servers", &[]),
    group(b::PRINT_OPERATORS, "Print Operators", BUILTIN_LOCAL_GROUP, true,
        "Members can administer printers installed on domain controllers", &[]),
    group(b::BACKUP_OPERATORS, "Backup Operators", BUILTIN_LOCAL_GROUP, true,
        "Backup Operators can override security restrictions for the sole purpose of backing up or restoring files", &[]),
    group(b::REPLICATOR, "Replicator", BUILTIN_LOCAL_GROUP, true,
        "Supports file replication in a domain", &[]),
    group(b::PRE_WINDOWS_2000, "Pre-Windows 2000 Compatible Access", BUILTIN_LOCAL_GROUP, false,
        "A backward compatibility group which allows read access on all users and groups in the domain",
        &[Foreign("S-1-5-11")]),
    group(b::REMOTE_DESKTOP_USERS, "Remote Desktop Users", BUILTIN_LOCAL_GROUP, false,
        "Members in this group are granted the right to logon remotely", &[]),
    group(b::NETWORK_CONFIGURATION_OPERATORS, "Network Configuration Operators", BUILTIN_LOCAL_GROUP, false,
        "Members in this group can have some administrative privileges to manage configuration of networking features", &[]),
    group(b::INCOMING_FOREST_TRUST_BUILDERS, "Incoming Forest Trust Builders", BUILTIN_LOCAL_GROUP, false,
        "Members of this group can create incoming, one-way trusts to this forest", &[]),
    group(b::PERFORMANCE_MONITOR_USERS, "Performance Monitor Users", BUILTIN_LOCAL_GROUP, false,
        "Members of this group can access performance counter data locally and remotely", &[]),
    group(b::PERFORMANCE_LOG_USERS, "Performance Log Users", BUILTIN_LOCAL_GROUP, false,
        "Members of this group may schedule logging of performance counters, enable trace providers, and collect event traces both locally and via remote access to this computer", &[]),
    group(b::WINDOWS_AUTHORIZATION_ACCESS, "Windows Authorization Access Group", BUILTIN_LOCAL_GROUP, false,
        "Members of this group have access to the computed tokenGroupsGlobalAndUniversal attribute on User objects",
        &[Foreign("S-1-5-9")]),
    group(b::TERMINAL_SERVER_LICENSE_SERVERS, "Terminal Server License Servers", BUILTIN_LOCAL_GROUP, false,
        "Members of this group can update user accounts in Active Directory with information about license issuance, for the purpose of tracking and reporting TS Per User CAL usage", &[]),
    group(b::DISTRIBUTED_COM_USERS, "Distributed COM Users", BUILTIN_LOCAL_GROUP, false,
        "Members are allowed to launch, activate and use Distributed COM objects on this machine.", &[]),
    group(b::IIS_IUSRS, "IIS_IUSRS", BUILTIN_LOCAL_GROUP, false,
        "Built-in group used by Internet Information Services.", &[Foreign("S-1-5-17")]),
    group(b::CRYPTOGRAPHIC_OPERATORS, "Cryptographic Operators", BUILTIN_LOCAL_GROUP, false,
        "Members are authorized to perform cryptographic operations.", &[]),
    group(b::EVENT_LOG_READERS, "Event Log Readers", BUILTIN_LOCAL_GROUP, false,
        "Members of this group can read event logs from local machine", &[]),
    group(b::CERTIFICATE_SERVICE_DCOM_ACCESS, "Certificate Service DCOM Access", BUILTIN_LOCAL_GROUP, false,
        "Members of this group are allowed to connect to Certification Authorities in the enterprise", &[]),
];

/// Every built-in principal of the domain, members before the groups that
/// contain them.
pub fn add(tree: &mut Tree, names: &Names, params: &ProvisionParams) -> Result<(), ProvisionError> {
    let fsp = cn(&names.domain, "ForeignSecurityPrincipals")?;
    for sid in FOREIGN {
        tree.add(Obj::new(cn(&fsp, sid)?, "foreignSecurityPrincipal").sid(&Sid::parse(sid)?))?;
    }
    users(tree, names, params)?;
    let member_dn = |m: &Member| match m {
        Users(name) => cn(&names.users, name),
        Foreign(sid) => cn(&fsp, sid),
    };
    let domain_sid = &params.domain_sid;
    for g in DOMAIN_GROUPS {
        let members = g.members.iter().map(member_dn).collect::<Result<_, _>>()?;
        tree.add(group_object(
            cn(&names.users, g.name)?,
            g,
            domain_sid.with_rid(g.rid),
            members,
        ))?;
    }
    let builtin = cn(&names.domain, "Builtin")?;
    for g in BUILTIN_GROUPS {
        let members = g.members.iter().map(member_dn).collect::<Result<_, _>>()?;
        tree.add(
            group_object(cn(&builtin, g.name)?, g, Sid::builtin(g.rid), members)
                .int("systemFlags", PROTECTED),
        )?;
    }
    Ok(())
}

/// The object of one built-in group.
fn group_object(dn: Dn, g: &Group, sid: Sid, members: Vec<Dn>) -> Obj {
    let member_refs: Vec<&Dn> = members.iter().collect();
    let mut obj = Obj::new(dn, "group")
        .describe(g.description)
        .text("sAMAccountName", g.name)
        .sid(&sid)
        .int("groupType", g.group_type)
        .boolean("isCriticalSystemObject", true);
    if g.protected {
        obj = obj.int("adminCount", 1);
    }
    if !member_refs.is_empty() {
        obj = obj.dns("member", &member_refs);
    }
    obj
}

/// Administrator, Guest and krbtgt.
fn users(tree: &mut Tree, names: &Names, params: &ProvisionParams) -> Result<(), ProvisionError> {
    let sid = &params.domain_sid;
    let user = |name: &str, rid: u32, uac: i64, description: &str| -> Result<Obj, ProvisionError> {
        Ok(Obj::new(cn(&names.users, name)?, "user")
            .describe(description)
            .text("sAMAccountName", name)
            .sid(&sid.with_rid(rid))
            .int("userAccountControl", uac)
            .boolean("isCriticalSystemObject", true))
    };
    tree.add(
        user(
            "Administrator",
            rid::ADMINISTRATOR,
            UAC_ADMINISTRATOR,
            "Built-in account for administering the computer/domain",
        )?
        .int("adminCount", 1)
        .int("accountExpires", NEVER),
    )?;
    tree.add(
        user(
            "Guest",
            rid::GUEST,
            UAC_GUEST,
            "Built-in account for guest access to the computer/domain",
        )?
        .int("primaryGroupID", i64::from(rid::DOMAIN_GUESTS)),
    )?;
    tree.add(
        user(
            "krbtgt",
            rid::KRBTGT,
            UAC_KRBTGT,
            "Key Distribution Center Service Account",
        )?
        .int("adminCount", 1)
        .int("accountExpires", NEVER)
        .text("servicePrincipalName", "kadmin/changepw")
        .advanced(true),
    )
}
