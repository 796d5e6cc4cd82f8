//! Schema tests: the published Windows Server 2016 schema files load, the
//! built-in table agrees with them, and the derived artefacts (database
//! configuration, subschema values) are right.
//!
//! Tests that need the files fail with an explanation when Debian's
//! `samba-ad-provision` package is not installed; the built-in tests run
//! everywhere.

use std::collections::BTreeSet;
use std::path::Path;
use std::sync::OnceLock;

use kauri_db::{IndexFlags, Syntax};
use kauri_domain::schema::rfc4512::{
    attribute_type, dit_content_rule, object_class, parse_attribute_type, parse_object_class,
};
use kauri_domain::schema::syntax::{kauri_syntax, ldap_syntax_oid};
use kauri_domain::schema::{
    AttributeDef, ClassDef, Schema, SchemaError, SchemaSource, DEFAULT_SCHEMA_DIR,
};

fn imported() -> &'static Schema {
    static S: OnceLock<Schema> = OnceLock::new();
    S.get_or_init(|| {
        let dir = Path::new(DEFAULT_SCHEMA_DIR);
        assert!(
            dir.is_dir(),
            "{DEFAULT_SCHEMA_DIR} is missing: install Debian's samba-ad-provision package \
             (apt-get install samba-ad-provision) to run the schema import tests"
        );
        Schema::load_dir(dir).unwrap_or_else(|e| panic!("loading {DEFAULT_SCHEMA_DIR}: {e}"))
    })
}

fn builtin() -> &'static Schema {
    static S: OnceLock<Schema> = OnceLock::new();
    S.get_or_init(|| kauri_domain::schema::builtin::schema().expect("built-in table parses"))
}

fn set(v: &[String]) -> BTreeSet<String> {
    v.iter().map(|s| s.to_ascii_lowercase()).collect()
}

#[test]
fn package_files_load_completely() {
    let s = imported();
    assert_eq!(s.attributes().len(), 1498);
    assert_eq!(s.classes().len(), 269);
    let (d, source) = Schema::load_default();
    assert_eq!(source, SchemaSource::Files(DEFAULT_SCHEMA_DIR.into()));
    assert_eq!(d.attributes().len(), 1498);
}

#[test]
fn spot_checks() {
    let s = imported();
    let sam = s.attribute("samaccountname").unwrap();
    assert_eq!(sam.ldap_name, "sAMAccountName");
    assert_eq!(sam.cn, "SAM-Account-Name");
    assert_eq!(sam.attribute_id, "1.2.840.113556.1.4.221");
    assert_eq!(sam.attribute_syntax, "2.5.5.12");
    assert!(sam.single_valued);
    assert_ne!(sam.search_flags & kauri_domain::schema::FATTINDEX, 0);
    assert_eq!(
        s.attribute_by_oid("1.2.840.113556.1.4.221")
            .unwrap()
            .ldap_name,
        "sAMAccountName"
    );

    assert_eq!(s.attribute("member").unwrap().link_id, Some(2));
    assert_eq!(s.attribute("memberOf").unwrap().link_id, Some(3));
    assert_eq!(s.back_link_of("member").unwrap().ldap_name, "memberOf");
    assert!(s.back_link_of("memberOf").is_none());
    assert_eq!(s.forward_link_of("memberOf").unwrap().ldap_name, "member");

    let user = s.class("USER").unwrap();
    assert_eq!(user.governs_id, "1.2.840.113556.1.5.9");
    assert_eq!(user.sub_class_of, "organizationalPerson");
    assert_eq!(user.object_class_category, 1);
    assert_eq!(
        user.default_object_category.as_deref(),
        Some("CN=Person,CN=Schema,CN=Configuration,DC=X")
    );
    assert_eq!(
        s.class_by_oid("1.2.840.113556.1.5.9").unwrap().ldap_name,
        "user"
    );

    assert_eq!(s.syntax_of("objectGUID"), Syntax::Guid);
    assert_eq!(s.syntax_of("objectSid"), Syntax::Sid);
    assert_eq!(s.syntax_of("whenCreated"), Syntax::GeneralizedTime);
    assert_eq!(s.syntax_of("member"), Syntax::Dn);
    assert_eq!(s.syntax_of("pwdLastSet"), Syntax::Integer);
    assert_eq!(s.syntax_of("invocationId"), Syntax::Guid);
    assert_eq!(s.syntax_of("mSMQDigests"), Syntax::OctetString);
    assert_eq!(s.syntax_of("nTSecurityDescriptor"), Syntax::OctetString);
    assert_eq!(s.syntax_of("associatedDomain"), Syntax::Ia5String);
    assert_eq!(
        s.attribute("associatedDomain")
            .unwrap()
            .admin_description
            .as_deref(),
        Some(
            "The associatedDomain attribute type specifies a DNS domain which is associated \
             with an object."
        )
    );
    let guid = s.attribute("objectGUID").unwrap().schema_id_guid.unwrap();
    assert_eq!(
        kauri_domain::schema::builtin::format_guid(&guid),
        "bf9679e7-0de6-11d0-a285-00aa003049e2"
    );
}

#[test]
fn guid_rule_selects_exactly_these() {
    let s = imported();
    let mut guids: Vec<&str> = s
        .attributes()
        .filter(|a| kauri_syntax(a) == Syntax::Guid)
        .map(|a| a.ldap_name.as_str())
        .collect();
    guids.sort_by_key(|n| n.to_ascii_lowercase());
    assert_eq!(
        guids,
        [
            "attributeSecurityGUID",
            "fRSReplicaSetGUID",
            "fRSVersionGUID",
            "invocationId",
            "msDFS-GenerationGUIDv2",
            "msDFS-LinkIdentityGUIDv2",
            "msDFS-NamespaceIdentityGUIDv2",
            "msDFSR-ContentSetGuid",
            "msDFSR-ReplicationGroupGuid",
            "msDS-AzObjectGuid",
            "msDS-OptionalFeatureGUID",
            "netbootGUID",
            "objectGUID",
            "parentGUID",
            "pKTGuid",
            "schemaIDGUID",
            "siteGUID",
        ]
    );
}

#[test]
fn class_structure() {
    let s = imported();
    let chain: Vec<&str> = s
        .superclass_chain("user")
        .iter()
        .map(|c| c.ldap_name.as_str())
        .collect();
    assert_eq!(chain, ["user", "organizationalPerson", "person", "top"]);
    assert_eq!(
        s.superclass_chain("top")
            .iter()
            .map(|c| c.ldap_name.as_str())
            .collect::<Vec<_>>(),
        ["top"]
    );
    assert!(s.superclass_chain("noSuchClass").is_empty());

    // The files: top's systemMustContain is objectClass, objectCategory,
    // nTSecurityDescriptor and instanceType; person adds cn; the system
    // auxiliary class securityPrincipal adds objectSid and sAMAccountName.
    let must: BTreeSet<&str> = s.all_must("user").into_iter().collect();
    assert_eq!(
        must,
        BTreeSet::from([
            "objectClass",
            "objectCategory",
            "nTSecurityDescriptor",
            "instanceType",
            "cn",
            "objectSid",
            "sAMAccountName",
        ])
    );
    let may = s.all_may("user");
    for a in [
        "userPrincipalName",
        "memberOf",
        "mail",
        "unicodePwd",
        "sn",
        "pwdLastSet",
    ] {
        assert!(may.contains(&a), "{a} should be optional for user");
    }
    // From the auxiliary class securityPrincipal (objectSid is mandatory there).
    assert!(s.all_must("group").contains(&"objectSid"));
    assert!(s.all_must("group").contains(&"sAMAccountName"));
    assert!(
        !may.contains(&"cn"),
        "mandatory attributes are not repeated"
    );
    let closure: Vec<&str> = s
        .class_closure("user")
        .iter()
        .map(|c| c.ldap_name.as_str())
        .collect();
    assert!(closure.contains(&"securityPrincipal") && closure.contains(&"mailRecipient"));
}

#[test]
fn linked_pairs() {
    let s = imported();
    for name in ["member", "memberOf"] {
        let (f, b) = s.linked_pair(name).unwrap();
        assert_eq!(
            (f.ldap_name.as_str(), b.ldap_name.as_str()),
            ("member", "memberOf")
        );
    }
    let (f, b) = s.linked_pair("directReports").unwrap();
    assert_eq!(
        (f.ldap_name.as_str(), b.ldap_name.as_str()),
        ("manager", "directReports")
    );
    let (f, b) = s.linked_pair("msDS-PSOAppliesTo").unwrap();
    assert_eq!(b.ldap_name, "msDS-PSOApplied");
    assert_eq!(f.link_id.unwrap() + 1, b.link_id.unwrap());
    assert!(s.linked_pair("cn").is_none());
    for a in s.attributes() {
        if let Some(l) = a.link_id {
            assert!(l >= 0, "{}", a.ldap_name);
            if l % 2 == 1 {
                assert!(s.forward_link_of(&a.ldap_name).is_some(), "{}", a.ldap_name);
            }
        }
    }
}

fn compare_attribute(b: &AttributeDef, i: &AttributeDef) {
    let n = &b.ldap_name;
    assert_eq!(b.ldap_name, i.ldap_name);
    assert_eq!(b.cn, i.cn, "{n}");
    assert_eq!(b.attribute_id, i.attribute_id, "{n}");
    assert_eq!(b.attribute_syntax, i.attribute_syntax, "{n}");
    assert_eq!(b.om_syntax, i.om_syntax, "{n}");
    assert_eq!(b.om_object_class, i.om_object_class, "{n}");
    assert_eq!(b.single_valued, i.single_valued, "{n}");
    assert_eq!(b.link_id, i.link_id, "{n}");
    assert_eq!(b.search_flags, i.search_flags, "{n}");
    assert_eq!(b.system_only, i.system_only, "{n}");
    assert_eq!(b.system_flags, i.system_flags, "{n}");
    assert_eq!(b.range_lower, i.range_lower, "{n}");
    assert_eq!(b.range_upper, i.range_upper, "{n}");
    assert_eq!(b.schema_id_guid, i.schema_id_guid, "{n}");
    assert_eq!(b.attribute_security_guid, i.attribute_security_guid, "{n}");
    assert_eq!(
        b.is_member_of_partial_attribute_set, i.is_member_of_partial_attribute_set,
        "{n}"
    );
    assert_eq!(
        b.show_in_advanced_view_only, i.show_in_advanced_view_only,
        "{n}"
    );
}

fn compare_class(b: &ClassDef, i: &ClassDef) {
    let n = &b.ldap_name;
    assert_eq!(b.ldap_name, i.ldap_name);
    assert_eq!(b.cn, i.cn, "{n}");
    assert_eq!(b.governs_id, i.governs_id, "{n}");
    assert_eq!(b.sub_class_of, i.sub_class_of, "{n}");
    assert_eq!(b.object_class_category, i.object_class_category, "{n}");
    assert_eq!(b.rdn_att_id, i.rdn_att_id, "{n}");
    assert_eq!(set(&b.must_contain), set(&i.must_contain), "{n}");
    assert_eq!(set(&b.may_contain), set(&i.may_contain), "{n}");
    assert_eq!(
        set(&b.system_must_contain),
        set(&i.system_must_contain),
        "{n}"
    );
    assert_eq!(
        set(&b.system_may_contain),
        set(&i.system_may_contain),
        "{n}"
    );
    assert_eq!(set(&b.auxiliary_class), set(&i.auxiliary_class), "{n}");
    assert_eq!(
        set(&b.system_auxiliary_class),
        set(&i.system_auxiliary_class),
        "{n}"
    );
    assert_eq!(set(&b.poss_superiors), set(&i.poss_superiors), "{n}");
    assert_eq!(
        set(&b.system_poss_superiors),
        set(&i.system_poss_superiors),
        "{n}"
    );
    assert_eq!(b.default_object_category, i.default_object_category, "{n}");
    assert_eq!(
        b.default_security_descriptor, i.default_security_descriptor,
        "{n}"
    );
    assert_eq!(b.system_only, i.system_only, "{n}");
    assert_eq!(b.schema_id_guid, i.schema_id_guid, "{n}");
    assert_eq!(b.default_hiding_value, i.default_hiding_value, "{n}");
    assert_eq!(b.system_flags, i.system_flags, "{n}");
}

#[test]
fn builtin_equals_imported() {
    let (b, i) = (builtin(), imported());
    for a in b.attributes() {
        let other = i
            .attribute(&a.ldap_name)
            .unwrap_or_else(|| panic!("{} is not in the published schema", a.ldap_name));
        compare_attribute(a, other);
    }
    for c in b.classes() {
        let other = i
            .class(&c.ldap_name)
            .unwrap_or_else(|| panic!("{} is not in the published schema", c.ldap_name));
        compare_class(c, other);
    }
}

#[test]
fn builtin_covers_provisioning() {
    let b = builtin();
    for c in [
        "top",
        "person",
        "organizationalPerson",
        "user",
        "computer",
        "group",
        "organizationalUnit",
        "container",
        "domain",
        "domainDNS",
        "builtinDomain",
        "foreignSecurityPrincipal",
        "contact",
        "msDS-PasswordSettings",
        "msDS-PasswordSettingsContainer",
        "attributeSchema",
        "classSchema",
        "dMD",
        "configuration",
        "crossRef",
        "crossRefContainer",
        "site",
        "sitesContainer",
        "serversContainer",
        "server",
        "nTDSDSA",
        "rIDManager",
        "rIDSet",
        "lostAndFound",
        "infrastructureUpdate",
        "subSchema",
        "securityPrincipal",
        "samDomain",
        "dnsZone",
        "dnsNode",
        "dnsZoneScope",
        "dnsZoneScopeContainer",
    ] {
        assert!(b.class(c).is_some(), "built-in class {c} missing");
    }
    for a in [
        "cn",
        "name",
        "objectClass",
        "objectCategory",
        "objectGUID",
        "objectSid",
        "distinguishedName",
        "instanceType",
        "whenCreated",
        "whenChanged",
        "uSNCreated",
        "uSNChanged",
        "nTSecurityDescriptor",
        "sAMAccountName",
        "sAMAccountType",
        "userAccountControl",
        "userPrincipalName",
        "unicodePwd",
        "userPassword",
        "pwdLastSet",
        "accountExpires",
        "primaryGroupID",
        "groupType",
        "member",
        "memberOf",
        "manager",
        "directReports",
        "managedBy",
        "managedObjects",
        "description",
        "displayName",
        "givenName",
        "sn",
        "mail",
        "telephoneNumber",
        "isDeleted",
        "lastKnownParent",
        "objectVersion",
        "lDAPDisplayName",
        "attributeID",
        "attributeSyntax",
        "oMSyntax",
        "isSingleValued",
        "linkID",
        "searchFlags",
        "systemOnly",
        "governsID",
        "subClassOf",
        "mustContain",
        "mayContain",
        "systemMustContain",
        "systemMayContain",
        "possSuperiors",
        "systemPossSuperiors",
        "objectClassCategory",
        "defaultObjectCategory",
        "defaultSecurityDescriptor",
        "msDS-PSOAppliesTo",
        "msDS-PSOApplied",
        "msDS-PasswordSettingsPrecedence",
        "msDS-MaximumPasswordAge",
        "msDS-MinimumPasswordLength",
        "minPwdLength",
        "pwdHistoryLength",
        "maxPwdAge",
        "minPwdAge",
        "lockoutThreshold",
        "lockoutDuration",
        "lockOutObservationWindow",
        "pwdProperties",
        "rIDAvailablePool",
        "rIDAllocationPool",
        "rIDPreviousAllocationPool",
        "rIDNextRID",
        "rIDUsedPool",
        "rIDSetReferences",
        "rIDManagerReference",
        "fSMORoleOwner",
        "invocationId",
        "dNSHostName",
        "serverReference",
        "nCName",
        "dnsRoot",
        "nETBIOSName",
        "systemFlags",
        "tombstoneLifetime",
        "dnsRecord",
        "dnsProperty",
        "dNSTombstoned",
        "dnsAllowDynamic",
        "dnsAllowXFR",
        "dnsNotifySecondaries",
        "dnsSecureSecondaries",
        "servicePrincipalName",
        "employeeID",
        "employeeType",
    ] {
        assert!(b.attribute(a).is_some(), "built-in attribute {a} missing");
    }
    // Every mandatory attribute of every built-in class is defined.
    for c in b.classes() {
        for a in b.all_must(&c.ldap_name) {
            assert!(
                b.attribute(a).is_some(),
                "{}: must {a} undefined",
                c.ldap_name
            );
        }
    }
    // Every built-in back link has its forward link (forward links may lack
    // a back link, e.g. msDS-NC-Replica-Locations).
    for a in b
        .attributes()
        .filter(|a| a.link_id.is_some_and(|l| l % 2 == 1))
    {
        assert!(b.linked_pair(&a.ldap_name).is_some(), "{}", a.ldap_name);
    }
    let chain: Vec<&str> = b
        .superclass_chain("user")
        .iter()
        .map(|c| c.ldap_name.as_str())
        .collect();
    assert_eq!(chain, ["user", "organizationalPerson", "person", "top"]);
    assert_eq!(b.syntax_of("objectGUID"), Syntax::Guid);
    assert_eq!(b.back_link_of("member").unwrap().ldap_name, "memberOf");
    assert!(b
        .db_config()
        .index_of_lower("objectguid")
        .contains(IndexFlags::UNIQUE));
    // The infallible constructor yields the same built-in set, not its empty fallback.
    assert!(Schema::builtin().attribute("member").is_some());
}

fn new_attribute(name: &str, oid: &str, link: Option<i32>) -> AttributeDef {
    AttributeDef {
        ldap_name: name.into(),
        cn: name.into(),
        attribute_id: oid.into(),
        attribute_syntax: if link.is_some() {
            "2.5.5.1"
        } else {
            "2.5.5.12"
        }
        .into(),
        om_syntax: if link.is_some() { 127 } else { 64 },
        om_object_class: link.map(|_| kauri_domain::schema::syntax::OM_CLASS_DS_DN.to_vec()),
        single_valued: false,
        link_id: link,
        search_flags: 1,
        system_only: false,
        system_flags: 0,
        range_lower: None,
        range_upper: None,
        schema_id_guid: None,
        attribute_security_guid: None,
        is_member_of_partial_attribute_set: false,
        show_in_advanced_view_only: true,
        is_defunct: false,
        admin_description: None,
        int_id: None,
    }
}

fn new_class(name: &str, oid: &str, sup: &str, may: &[&str]) -> ClassDef {
    ClassDef {
        ldap_name: name.into(),
        cn: name.into(),
        governs_id: oid.into(),
        sub_class_of: sup.into(),
        object_class_category: 1,
        rdn_att_id: Some("cn".into()),
        must_contain: vec![],
        may_contain: may.iter().map(|s| s.to_string()).collect(),
        system_must_contain: vec![],
        system_may_contain: vec![],
        auxiliary_class: vec![],
        system_auxiliary_class: vec![],
        poss_superiors: vec!["organizationalUnit".into()],
        system_poss_superiors: vec![],
        default_object_category: None,
        default_security_descriptor: None,
        system_only: false,
        schema_id_guid: None,
        default_hiding_value: false,
        system_flags: 0,
    }
}

fn extend(mut s: Schema) {
    s.add_attribute(new_attribute("kauriColour", "1.3.6.1.4.1.99999.1.1", None))
        .unwrap();
    s.add_attribute(new_attribute(
        "kauriOwner",
        "1.3.6.1.4.1.99999.1.2",
        Some(30000),
    ))
    .unwrap();
    s.add_attribute(new_attribute(
        "kauriOwned",
        "1.3.6.1.4.1.99999.1.3",
        Some(30001),
    ))
    .unwrap();
    assert_eq!(
        s.back_link_of("kauriowner").unwrap().ldap_name,
        "kauriOwned"
    );

    let dup = |r: Result<(), SchemaError>| matches!(r, Err(SchemaError::Duplicate { .. }));
    assert!(dup(s.add_attribute(new_attribute(
        "KAURICOLOUR",
        "1.3.6.1.4.1.99999.1.9",
        None
    ))));
    assert!(dup(s.add_attribute(new_attribute(
        "other",
        "1.3.6.1.4.1.99999.1.1",
        None
    ))));
    assert!(dup(s.add_attribute(new_attribute(
        "other",
        "1.2.840.113556.1.5.9",
        None
    ))));
    assert!(dup(s.add_attribute(new_attribute(
        "user",
        "1.3.6.1.4.1.99999.1.8",
        None
    ))));
    assert!(dup(s.add_attribute(new_attribute(
        "other",
        "1.3.6.1.4.1.99999.1.9",
        Some(2)
    ))));
    assert!(matches!(
        s.add_attribute(new_attribute(
            "orphan",
            "1.3.6.1.4.1.99999.1.10",
            Some(30003)
        )),
        Err(SchemaError::Invalid { .. })
    ));
    let mut bad = new_attribute("badSyntax", "1.3.6.1.4.1.99999.1.11", None);
    bad.om_syntax = 4;
    assert!(matches!(
        s.add_attribute(bad),
        Err(SchemaError::Invalid { .. })
    ));
    assert!(matches!(
        s.add_attribute(new_attribute("bad name", "1.3.6.1.4.1.99999.1.12", None)),
        Err(SchemaError::Invalid { .. })
    ));

    s.add_class(new_class(
        "kauriWidget",
        "1.3.6.1.4.1.99999.2.1",
        "top",
        &["kauriColour"],
    ))
    .unwrap();
    assert!(s.all_may("kauriWidget").contains(&"kauriColour"));
    assert!(s.all_must("kauriWidget").contains(&"objectClass"));
    assert!(dup(s.add_class(new_class(
        "kauriWidget",
        "1.3.6.1.4.1.99999.2.2",
        "top",
        &[]
    ))));
    assert!(dup(s.add_class(new_class(
        "kauriGadget",
        "1.3.6.1.4.1.99999.2.1",
        "top",
        &[]
    ))));
    assert!(dup(s.add_class(new_class(
        "cn",
        "1.3.6.1.4.1.99999.2.3",
        "top",
        &[]
    ))));
    assert!(matches!(
        s.add_class(new_class(
            "kauriGadget",
            "1.3.6.1.4.1.99999.2.4",
            "noSuchClass",
            &[]
        )),
        Err(SchemaError::UnknownReference { .. })
    ));
    assert!(matches!(
        s.add_class(new_class(
            "kauriGadget",
            "1.3.6.1.4.1.99999.2.4",
            "top",
            &["noSuchAttr"]
        )),
        Err(SchemaError::UnknownReference { .. })
    ));
    let cfg = s.db_config();
    assert!(cfg
        .index_of_lower("kauricolour")
        .contains(IndexFlags::EQUALITY));
    assert_eq!(cfg.schema.syntax_of("kauriOwner"), Syntax::Dn);
}

#[test]
fn run_time_extension() {
    extend(imported().clone());
}

#[test]
fn run_time_extension_of_builtin() {
    extend(builtin().clone());
}

#[test]
fn db_config_from_schema() {
    let cfg = imported().db_config();
    let idx = |n: &str| cfg.index_of_lower(&n.to_ascii_lowercase());
    assert_eq!(cfg.schema.syntax_of("objectGUID"), Syntax::Guid);
    assert_eq!(cfg.schema.syntax_of("OBJECTSID"), Syntax::Sid);
    assert_eq!(cfg.schema.syntax_of("whenChanged"), Syntax::GeneralizedTime);
    assert_eq!(cfg.schema.syntax_of("uSNChanged"), Syntax::Integer);
    assert_eq!(
        cfg.schema.syntax_of("notAnAttribute"),
        Syntax::DirectoryString
    );
    assert!(idx("objectClass").contains(IndexFlags::EQUALITY | IndexFlags::PRESENCE));
    assert!(idx("objectGUID").contains(IndexFlags::EQUALITY | IndexFlags::UNIQUE));
    assert!(idx("objectSid").contains(IndexFlags::EQUALITY));
    assert!(idx("sAMAccountName").contains(IndexFlags::EQUALITY | IndexFlags::SUBSTRING_INITIAL));
    assert!(idx("userPrincipalName").contains(IndexFlags::EQUALITY));
    assert!(idx("uSNChanged").contains(IndexFlags::EQUALITY | IndexFlags::ORDERED));
    assert!(idx("uSNCreated").contains(IndexFlags::EQUALITY | IndexFlags::ORDERED));
    // As in AD, whose searchFlags for whenChanged are 0: every change would move its key.
    assert_eq!(idx("whenChanged"), IndexFlags::NONE);
    assert_eq!(
        cfg.link_of_lower("member"),
        Some(&kauri_db::config::LinkRole::Forward {
            back: Some("memberOf".to_string()),
            reference: false,
        })
    );
    // DN values AD does not pair as links are references; objectCategory stays a value.
    assert_eq!(
        cfg.link_of_lower("fsmoroleowner"),
        Some(&kauri_db::config::LinkRole::Forward {
            back: None,
            reference: true,
        })
    );
    assert_eq!(cfg.link_of_lower("objectcategory"), None);
    assert_eq!(
        cfg.link_of_lower("directreports"),
        Some(&kauri_db::config::LinkRole::Back {
            forward: "manager".to_string()
        })
    );
    // displayName: fATTINDEX | fANR (searchFlags 5) in the published schema; presence is
    // answered from its value keys.
    assert!(idx("displayName").contains(IndexFlags::EQUALITY | IndexFlags::SUBSTRING_INITIAL));
    assert!(!idx("displayName").contains(IndexFlags::PRESENCE));
    // Unindexed attributes get no index.
    assert_eq!(idx("description"), IndexFlags::NONE);
    assert_eq!(
        cfg.usn_attributes,
        Some(("uSNCreated".to_string(), "uSNChanged".to_string()))
    );
}

#[test]
fn subschema_round_trips() {
    let s = imported();
    for a in s.attributes() {
        let text = attribute_type(a);
        let d = parse_attribute_type(&text).unwrap_or_else(|e| panic!("{text}: {e}"));
        assert_eq!(d.oid, a.attribute_id, "{text}");
        assert_eq!(d.names, std::slice::from_ref(&a.ldap_name), "{text}");
        assert_eq!(d.syntax.as_deref(), Some(ldap_syntax_oid(a)), "{text}");
        assert_eq!(d.single_value, a.single_valued, "{text}");
        assert_eq!(d.no_user_modification, a.system_only, "{text}");
    }
    for c in s.classes() {
        let text = object_class(c);
        let d = parse_object_class(&text).unwrap_or_else(|e| panic!("{text}: {e}"));
        assert_eq!(d.oid, c.governs_id);
        let mut must = c.system_must_contain.clone();
        must.extend(c.must_contain.iter().cloned());
        assert_eq!(d.must, must, "{text}");
        let mut may = c.system_may_contain.clone();
        may.extend(c.may_contain.iter().cloned());
        assert_eq!(d.may, may, "{text}");
    }
    let user = object_class(s.class("user").unwrap());
    assert!(
        user.starts_with(
            "( 1.2.840.113556.1.5.9 NAME 'user' SUP organizationalPerson STRUCTURAL MAY ( "
        ),
        "{user}"
    );
    assert!(object_class(s.class("top").unwrap()).starts_with(
        "( 2.5.6.0 NAME 'top' ABSTRACT MUST ( objectClass $ objectCategory $ nTSecurityDescriptor $ instanceType ) MAY ( "
    ));
    assert!(object_class(s.class("person").unwrap())
        .starts_with("( 2.5.6.6 NAME 'person' SUP top MUST cn MAY ( "));
    assert_eq!(
        attribute_type(s.attribute("sAMAccountName").unwrap()),
        "( 1.2.840.113556.1.4.221 NAME 'sAMAccountName' SYNTAX '1.3.6.1.4.1.1466.115.121.1.15' SINGLE-VALUE )"
    );
    assert_eq!(
        attribute_type(s.attribute("objectGUID").unwrap()),
        "( 1.2.840.113556.1.4.2 NAME 'objectGUID' SYNTAX '1.3.6.1.4.1.1466.115.121.1.40' SINGLE-VALUE NO-USER-MODIFICATION )"
    );
    let rule = dit_content_rule(s.class("user").unwrap()).unwrap();
    assert!(
        rule.contains("AUX ( ") && rule.contains("securityPrincipal"),
        "{rule}"
    );
    assert!(dit_content_rule(s.class("top").unwrap()).is_none());
}

#[test]
fn malformed_files_are_reported_with_location() {
    let dir = std::env::temp_dir().join(format!("kauri-schema-test-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let attrs = "dn: CN=A,CN=Schema,CN=Configuration,DC=X\r\nchangetype: add\r\nobjectClass: attributeSchema\r\nlDAPDisplayName: a\r\nattributeID: 1.2.3.4\r\nattributeSyntax: 2.5.5.12\r\noMSyntax: 64\r\nisSingleValued: maybe\r\n";
    std::fs::write(dir.join(kauri_domain::schema::ATTRIBUTES_FILE), attrs).unwrap();
    std::fs::write(dir.join(kauri_domain::schema::CLASSES_FILE), "").unwrap();
    let e = Schema::load_dir(&dir).unwrap_err().to_string();
    assert!(
        e.starts_with("AD_DS_Attributes__Windows_Server_2016.ldf:8:"),
        "{e}"
    );

    let twice = format!("{attrs}\r\n{attrs}").replace("maybe", "TRUE");
    std::fs::write(dir.join(kauri_domain::schema::ATTRIBUTES_FILE), twice).unwrap();
    let e = Schema::load_dir(&dir).unwrap_err().to_string();
    assert!(
        e.starts_with("AD_DS_Attributes__Windows_Server_2016.ldf:10:"),
        "{e}"
    );
    assert!(e.contains("already used"), "{e}");

    std::fs::write(
        dir.join(kauri_domain::schema::ATTRIBUTES_FILE),
        attrs.replace("maybe", "TRUE"),
    )
    .unwrap();
    std::fs::remove_file(dir.join(kauri_domain::schema::CLASSES_FILE)).unwrap();
    let e = Schema::load_dir(&dir).unwrap_err().to_string();
    assert!(e.contains("AD_DS_Classes__Windows_Server_2016.ldf"), "{e}");
    std::fs::remove_dir_all(&dir).unwrap();
}
