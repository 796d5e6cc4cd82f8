//! The attribute syntaxes and indexes the `kauri` tool opens databases with: the common
//! Active Directory attributes, indexed the way AD's `searchFlags` index them.

use kauri_db::{DbConfig, IndexFlags, Syntax};

/// The configuration for an AD-shaped directory.
pub fn directory_config() -> DbConfig {
    let mut cfg = DbConfig::default();
    let s = &mut cfg.schema;
    s.set("objectGUID", Syntax::Guid);
    s.set("objectSid", Syntax::Sid);
    for a in [
        "userAccountControl",
        "instanceType",
        "primaryGroupID",
        "groupType",
        "sAMAccountType",
        "pwdLastSet",
        "accountExpires",
        "badPwdCount",
        "logonCount",
    ] {
        s.set(a, Syntax::Integer);
    }
    for a in ["whenCreated", "whenChanged"] {
        s.set(a, Syntax::GeneralizedTime);
    }
    for a in [
        "member",
        "objectCategory",
        "manager",
        "managedBy",
        "distinguishedName",
    ] {
        s.set(a, Syntax::Dn);
    }
    s.set("telephoneNumber", Syntax::TelephoneNumber);
    s.set("jpegPhoto", Syntax::OctetString);
    let eq = IndexFlags::EQUALITY;
    let sub = IndexFlags::SUBSTRING_INITIAL;
    cfg.index("objectClass", eq | IndexFlags::PRESENCE)
        .index("objectCategory", eq)
        .index("cn", eq | sub)
        .index("name", eq | sub)
        .index("displayName", eq | sub)
        .index("sn", eq | sub)
        .index("givenName", eq | sub)
        .index("mail", eq | sub)
        .index("sAMAccountName", eq | sub | IndexFlags::UNIQUE)
        .index("userPrincipalName", eq | IndexFlags::UNIQUE)
        .index("objectGUID", eq | IndexFlags::UNIQUE)
        .index("objectSid", eq | IndexFlags::UNIQUE)
        .index("member", eq)
        .index("uSNCreated", eq | IndexFlags::ORDERED)
        .index("uSNChanged", eq | IndexFlags::ORDERED)
        .index("whenChanged", IndexFlags::ORDERED)
        .index("employeeID", eq)
        .index("ou", eq);
    cfg
}
