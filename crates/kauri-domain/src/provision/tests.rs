use std::collections::{HashMap, HashSet};
use std::path::Path;
use std::sync::OnceLock;

use kauri_db::{Dn, Entry};

use super::layout::{dc_pool, rid_pool};
use super::*;
use crate::schema::{ATTRIBUTES_FILE, CLASSES_FILE, DEFAULT_SCHEMA_DIR};
use crate::sid::rid::{self, builtin as b};

fn params() -> ProvisionParams {
    ProvisionParams {
        realm: "SAMDOM.EXAMPLE.COM".into(),
        netbios_domain: "SAMDOM".into(),
        dc_name: "DC1".into(),
        domain_sid: Sid::parse("S-1-5-21-1004336348-1177238915-682003330").unwrap(),
        site: "Default-First-Site-Name".into(),
    }
}

/// Microsoft's published schema, when this machine has it.
fn full() -> Option<&'static Schema> {
    static FULL: OnceLock<Option<Schema>> = OnceLock::new();
    FULL.get_or_init(|| {
        let dir = Path::new(DEFAULT_SCHEMA_DIR);
        if dir.join(ATTRIBUTES_FILE).exists() && dir.join(CLASSES_FILE).exists() {
            Some(Schema::load_dir(dir).unwrap())
        } else {
            eprintln!("{DEFAULT_SCHEMA_DIR} is absent: testing with the built-in schema only");
            None
        }
    })
    .as_ref()
}

fn builtin() -> &'static Schema {
    static BUILTIN: OnceLock<Schema> = OnceLock::new();
    BUILTIN.get_or_init(|| crate::schema::builtin::schema().unwrap())
}

/// The built-in schema and, if present, the full one, each with its tree.
fn cases() -> Vec<(&'static str, &'static Schema, Vec<ProvisionEntry>)> {
    let mut out = vec![("builtin", builtin())];
    if let Some(f) = full() {
        out.push(("full", f));
    }
    out.into_iter()
        .map(|(n, s)| (n, s, entries(&params(), s).unwrap()))
        .collect()
}

fn dn(s: &str) -> Dn {
    Dn::parse(s).unwrap()
}

fn find<'a>(tree: &'a [ProvisionEntry], name: &str) -> &'a Entry {
    let d = dn(name);
    &tree
        .iter()
        .find(|p| p.entry.dn == d)
        .unwrap_or_else(|| panic!("no {name}"))
        .entry
}

fn text(e: &Entry, attr: &str) -> Vec<String> {
    e.get(attr)
        .unwrap_or_default()
        .iter()
        .map(|v| String::from_utf8(v.clone()).unwrap())
        .collect()
}

const DOMAIN: &str = "DC=samdom,DC=example,DC=com";

#[test]
fn domain_dn_from_realm() {
    assert_eq!(domain_dn("SAMDOM.EXAMPLE.COM").to_string(), DOMAIN);
    assert_eq!(domain_dn("corp.").to_string(), "DC=corp");
}

#[test]
fn heads_come_first_and_parents_before_children() {
    for (name, _, tree) in cases() {
        let heads: Vec<String> = tree
            .iter()
            .filter(|p| p.naming_context)
            .map(|p| p.entry.dn.to_string())
            .collect();
        assert_eq!(
            heads,
            [
                DOMAIN.to_string(),
                format!("CN=Configuration,{DOMAIN}"),
                format!("CN=Schema,CN=Configuration,{DOMAIN}")
            ],
            "{name}"
        );
        assert!(tree[0].naming_context);
        let mut seen = HashSet::new();
        for (i, p) in tree.iter().enumerate() {
            if i > 0 {
                let parent = p.entry.dn.parent().unwrap();
                assert!(
                    seen.contains(&parent),
                    "{name}: {} before its parent",
                    p.entry.dn
                );
            }
            assert!(
                seen.insert(p.entry.dn.clone()),
                "{name}: {} twice",
                p.entry.dn
            );
        }
    }
}

#[test]
fn everything_is_defined_and_well_formed() {
    for (name, schema, tree) in cases() {
        for p in &tree {
            let e = &p.entry;
            for (attr, values) in &e.attrs {
                let def = schema
                    .attribute(attr)
                    .unwrap_or_else(|| panic!("{name}: {}: {attr} undefined", e.dn));
                assert!(!values.is_empty(), "{name}: {}: {attr} empty", e.dn);
                assert!(
                    !def.single_valued || values.len() == 1,
                    "{name}: {}: {attr} is single-valued",
                    e.dn
                );
                let syntax = schema.syntax_of(attr);
                for v in values {
                    syntax
                        .normalize(v)
                        .unwrap_or_else(|err| panic!("{name}: {}: {attr}: {err}", e.dn));
                }
            }
            for c in text(e, "objectClass") {
                assert!(schema.class(&c).is_some(), "{name}: {}: class {c}", e.dn);
            }
            for generated in [
                "objectGUID",
                "instanceType",
                "objectCategory",
                "sAMAccountType",
            ] {
                assert!(e.get(generated).is_none(), "{name}: {}: {generated}", e.dn);
            }
        }
    }
}

/// Attributes the write path adds to every new object.
const SUPPLIED: &[&str] = &["objectCategory", "nTSecurityDescriptor", "instanceType"];

#[test]
fn entries_obey_their_classes() {
    for (name, schema, tree) in cases() {
        let classes: HashMap<Dn, Vec<String>> = tree
            .iter()
            .map(|p| (p.entry.dn.clone(), text(&p.entry, "objectClass")))
            .collect();
        for p in &tree {
            let e = &p.entry;
            let chain = &classes[&e.dn];
            let structural = chain.last().unwrap();
            let must = schema.all_must(structural);
            let may = schema.all_may(structural);
            for m in &must {
                if !SUPPLIED.iter().any(|s| s.eq_ignore_ascii_case(m)) {
                    assert!(e.get(m).is_some(), "{name}: {} lacks {m}", e.dn);
                }
            }
            for (attr, _) in &e.attrs {
                assert!(
                    must.iter()
                        .chain(&may)
                        .any(|a| a.eq_ignore_ascii_case(attr)),
                    "{name}: {} may not hold {attr}",
                    e.dn
                );
            }
            if p.naming_context {
                continue;
            }
            let superiors: HashSet<String> = schema
                .superclass_chain(structural)
                .iter()
                .flat_map(|c| c.poss_superiors.iter().chain(&c.system_poss_superiors))
                .map(|s| s.to_ascii_lowercase())
                .collect();
            let parent = &classes[&e.dn.parent().unwrap()];
            assert!(
                parent
                    .iter()
                    .any(|c| superiors.contains(&c.to_ascii_lowercase())),
                "{name}: {} ({structural}) may not live under {parent:?}",
                e.dn
            );
        }
    }
}

#[test]
fn link_targets_come_first() {
    for (name, schema, tree) in cases() {
        let mut seen = HashSet::new();
        for p in &tree {
            seen.insert(p.entry.dn.clone());
            for (attr, values) in &p.entry.attrs {
                let forward = schema
                    .attribute(attr)
                    .and_then(|a| a.link_id)
                    .is_some_and(|l| l % 2 == 0);
                if !forward {
                    continue;
                }
                for v in values {
                    let target = dn(std::str::from_utf8(v).unwrap());
                    assert!(
                        seen.contains(&target),
                        "{name}: {} {attr} names {target}, added later",
                        p.entry.dn
                    );
                }
            }
        }
    }
}

#[test]
fn names_and_account_names_are_unique() {
    for (name, _, tree) in cases() {
        let mut accounts = HashSet::new();
        for p in &tree {
            for a in text(&p.entry, "sAMAccountName") {
                assert!(accounts.insert(a.to_lowercase()), "{name}: {a} twice");
            }
        }
        assert!(accounts.contains("dc1$") && accounts.contains("krbtgt"));
    }
}

#[test]
fn well_known_rids_appear_once() {
    let domain = params().domain_sid;
    let domain_rids = [
        rid::ADMINISTRATOR,
        rid::GUEST,
        rid::KRBTGT,
        rid::ENTERPRISE_READONLY_DOMAIN_CONTROLLERS,
        rid::DOMAIN_ADMINS,
        rid::DOMAIN_USERS,
        rid::DOMAIN_GUESTS,
        rid::DOMAIN_COMPUTERS,
        rid::DOMAIN_CONTROLLERS,
        rid::CERT_PUBLISHERS,
        rid::SCHEMA_ADMINS,
        rid::ENTERPRISE_ADMINS,
        rid::GROUP_POLICY_CREATOR_OWNERS,
        rid::READONLY_DOMAIN_CONTROLLERS,
        rid::CLONEABLE_CONTROLLERS,
        rid::PROTECTED_USERS,
        rid::KEY_ADMINS,
        rid::ENTERPRISE_KEY_ADMINS,
        rid::RAS_AND_IAS_SERVERS,
        rid::ALLOWED_RODC_PASSWORD_REPLICATION,
        rid::DENIED_RODC_PASSWORD_REPLICATION,
        DC_RID,
    ];
    let builtin_rids = [
        b::ADMINISTRATORS,
        b::USERS,
        b::GUESTS,
        b::ACCOUNT_OPERATORS,
        b::SERVER_OPERATORS,
        b::PRINT_OPERATORS,
        b::BACKUP_OPERATORS,
        b::REPLICATOR,
        b::PRE_WINDOWS_2000,
        b::REMOTE_DESKTOP_USERS,
        b::NETWORK_CONFIGURATION_OPERATORS,
        b::INCOMING_FOREST_TRUST_BUILDERS,
        b::PERFORMANCE_MONITOR_USERS,
        b::PERFORMANCE_LOG_USERS,
        b::WINDOWS_AUTHORIZATION_ACCESS,
        b::TERMINAL_SERVER_LICENSE_SERVERS,
        b::DISTRIBUTED_COM_USERS,
        b::IIS_IUSRS,
        b::CRYPTOGRAPHIC_OPERATORS,
        b::EVENT_LOG_READERS,
        b::CERTIFICATE_SERVICE_DCOM_ACCESS,
    ];
    let expected: Vec<Sid> = domain_rids
        .iter()
        .map(|&r| domain.with_rid(r))
        .chain(builtin_rids.iter().map(|&r| Sid::builtin(r)))
        .collect();
    for (name, _, tree) in cases() {
        let mut count: HashMap<Sid, usize> = HashMap::new();
        for p in &tree {
            for v in p.entry.get("objectSid").unwrap_or_default() {
                *count.entry(Sid::from_bytes(v).unwrap()).or_default() += 1;
            }
        }
        for sid in &expected {
            assert_eq!(count.get(sid), Some(&1), "{name}: {sid}");
        }
        let principals = tree
            .iter()
            .filter(|p| p.entry.get("sAMAccountName").is_some())
            .count();
        assert_eq!(principals, expected.len(), "{name}");
        assert_eq!(count.get(&domain), Some(&1), "{name}: the domain");
    }
}

#[test]
fn accounts_groups_and_memberships() {
    let tree = entries(&params(), builtin()).unwrap();
    let users = format!("CN=Users,{DOMAIN}");
    let member_of = |group: &str| -> HashSet<Dn> {
        find(&tree, group)
            .get("member")
            .unwrap_or_default()
            .iter()
            .map(|v| dn(std::str::from_utf8(v).unwrap()))
            .collect()
    };
    let admin = dn(&format!("CN=Administrator,{users}"));
    for g in [
        "Domain Admins",
        "Enterprise Admins",
        "Schema Admins",
        "Group Policy Creator Owners",
    ] {
        assert!(
            member_of(&format!("CN={g},{users}")).contains(&admin),
            "{g}"
        );
    }
    let administrators = member_of(&format!("CN=Administrators,CN=Builtin,{DOMAIN}"));
    assert!(administrators.contains(&admin));
    assert!(administrators.contains(&dn(&format!("CN=Domain Admins,{users}"))));
    assert!(administrators.contains(&dn(&format!("CN=Enterprise Admins,{users}"))));
    let guests = member_of(&format!("CN=Guests,CN=Builtin,{DOMAIN}"));
    assert!(guests.contains(&dn(&format!("CN=Guest,{users}"))));
    assert!(guests.contains(&dn(&format!("CN=Domain Guests,{users}"))));
    assert!(member_of(&format!("CN=Users,CN=Builtin,{DOMAIN}"))
        .contains(&dn(&format!("CN=Domain Users,{users}"))));
    assert!(member_of(&format!("CN=Domain Controllers,{users}")).is_empty());

    let a = find(&tree, &format!("CN=Administrator,{users}"));
    assert_eq!(text(a, "userAccountControl"), ["66048"]);
    assert_eq!(
        text(a, "objectClass"),
        ["top", "person", "organizationalPerson", "user"]
    );
    assert!(a.get("primaryGroupID").is_none());
    assert_eq!(
        text(
            find(&tree, &format!("CN=Guest,{users}")),
            "userAccountControl"
        ),
        ["66082"]
    );
    assert_eq!(
        text(
            find(&tree, &format!("CN=krbtgt,{users}")),
            "userAccountControl"
        ),
        ["514"]
    );
    let group_type = |g: &str| text(find(&tree, &g.replace("{u}", &users)), "groupType");
    assert_eq!(group_type("CN=Domain Users,{u}"), ["-2147483646"]);
    assert_eq!(group_type("CN=Cert Publishers,{u}"), ["-2147483644"]);
    assert_eq!(group_type("CN=Schema Admins,{u}"), ["-2147483640"]);
    assert_eq!(
        group_type(&format!("CN=Replicator,CN=Builtin,{DOMAIN}")),
        ["-2147483643"]
    );

    let dc = find(&tree, &format!("CN=DC1,OU=Domain Controllers,{DOMAIN}"));
    assert_eq!(text(dc, "sAMAccountName"), ["DC1$"]);
    assert_eq!(text(dc, "userAccountControl"), ["532480"]);
    assert_eq!(text(dc, "primaryGroupID"), ["516"]);
    assert_eq!(text(dc, "dNSHostName"), ["dc1.samdom.example.com"]);
    assert_eq!(
        text(dc, "objectClass"),
        ["top", "person", "organizationalPerson", "user", "computer"]
    );
    assert!(text(dc, "servicePrincipalName").contains(&"ldap/dc1.samdom.example.com".to_string()));
}

#[test]
fn domain_head_policy_and_references() {
    let tree = entries(&params(), builtin()).unwrap();
    let d = find(&tree, DOMAIN);
    assert_eq!(text(d, "objectClass"), ["top", "domain", "domainDNS"]);
    assert_eq!(text(d, "dc"), ["samdom"]);
    for (attr, value) in [
        ("minPwdLength", "7"),
        ("pwdProperties", "1"),
        ("pwdHistoryLength", "24"),
        ("minPwdAge", "-864000000000"),
        ("maxPwdAge", "-36288000000000"),
        ("lockoutThreshold", "0"),
        ("lockoutDuration", "-18000000000"),
        ("lockOutObservationWindow", "-18000000000"),
        ("forceLogoff", "-9223372036854775808"),
        ("msDS-Behavior-Version", "7"),
        ("ms-DS-MachineAccountQuota", "10"),
    ] {
        assert_eq!(text(d, attr), [value], "{attr}");
    }
    assert_eq!(
        d.get("objectSid").unwrap()[0],
        params().domain_sid.to_bytes()
    );
    let ntds = format!(
        "CN=NTDS Settings,CN=DC1,CN=Servers,CN=Default-First-Site-Name,CN=Sites,CN=Configuration,{DOMAIN}"
    );
    assert_eq!(text(d, "fSMORoleOwner"), [ntds.as_str()]);
    for holder in [
        format!("CN=Infrastructure,{DOMAIN}"),
        format!("CN=RID Manager$,CN=System,{DOMAIN}"),
        format!("CN=Partitions,CN=Configuration,{DOMAIN}"),
        format!("CN=Schema,CN=Configuration,{DOMAIN}"),
    ] {
        assert_eq!(
            text(find(&tree, &holder), "fSMORoleOwner"),
            [ntds.as_str()],
            "{holder}"
        );
    }
    let wkos = text(d, "wellKnownObjects");
    assert_eq!(wkos.len(), 11);
    assert!(wkos.contains(&format!(
        "B:32:A9D1CA15768811D1ADED00C04FD8D5CD:CN=Users,{DOMAIN}"
    )));
    for v in wkos.iter().chain(&text(d, "otherWellKnownObjects")) {
        let target = v.splitn(4, ':').nth(3).unwrap();
        find(&tree, target);
    }
    let config = find(&tree, &format!("CN=Configuration,{DOMAIN}"));
    for v in text(config, "wellKnownObjects") {
        find(&tree, v.splitn(4, ':').nth(3).unwrap());
    }
    let deleted: Vec<String> = tree
        .iter()
        .filter(|p| {
            p.entry
                .dn
                .rdn()
                .is_some_and(|r| r.avas()[0].value == "Deleted Objects")
        })
        .map(|p| p.entry.dn.parent().unwrap().to_string())
        .collect();
    assert_eq!(
        deleted,
        [DOMAIN.to_string(), format!("CN=Configuration,{DOMAIN}")]
    );
    let ds = find(
        &tree,
        &format!("CN=Directory Service,CN=Windows NT,CN=Services,CN=Configuration,{DOMAIN}"),
    );
    assert_eq!(text(ds, "tombstoneLifetime"), ["180"]);
}

#[test]
fn rid_pools() {
    assert_eq!(dc_pool(), (1599 << 32) | 1100);
    assert_eq!(rid_pool(1, 2) as u64, 0x0000_0002_0000_0001);
    let tree = entries(&params(), builtin()).unwrap();
    let set = find(
        &tree,
        &format!("CN=RID Set,CN=DC1,OU=Domain Controllers,{DOMAIN}"),
    );
    assert_eq!(text(set, "rIDAllocationPool"), [dc_pool().to_string()]);
    assert_eq!(text(set, "rIDNextRID"), ["1100"]);
    let manager = find(&tree, &format!("CN=RID Manager$,CN=System,{DOMAIN}"));
    assert_eq!(
        text(manager, "rIDAvailablePool"),
        [rid_pool(1600, MAX_RID).to_string()]
    );
}

#[test]
fn partitions_and_dsa() {
    let tree = entries(&params(), builtin()).unwrap();
    let cfg = format!("CN=Configuration,{DOMAIN}");
    let domain_ref = find(&tree, &format!("CN=SAMDOM,CN=Partitions,{cfg}"));
    assert_eq!(text(domain_ref, "nCName"), [DOMAIN]);
    assert_eq!(text(domain_ref, "nETBIOSName"), ["SAMDOM"]);
    assert_eq!(text(domain_ref, "systemFlags"), ["3"]);
    assert_eq!(text(domain_ref, "dnsRoot"), ["samdom.example.com"]);
    let schema_ref = find(&tree, &format!("CN=Enterprise Schema,CN=Partitions,{cfg}"));
    assert_eq!(text(schema_ref, "systemFlags"), ["1"]);
    let ntds = find(
        &tree,
        &format!("CN=NTDS Settings,CN=DC1,CN=Servers,CN=Default-First-Site-Name,CN=Sites,{cfg}"),
    );
    assert_eq!(
        text(ntds, "objectClass"),
        ["top", "applicationSettings", "nTDSDSA"]
    );
    assert_eq!(text(ntds, "hasMasterNCs").len(), 3);
    assert_eq!(text(ntds, "msDS-hasMasterNCs").len(), 3);
    assert_eq!(text(ntds, "dMDLocation"), [format!("CN=Schema,{cfg}")]);
    let server = find(
        &tree,
        &format!("CN=DC1,CN=Servers,CN=Default-First-Site-Name,CN=Sites,{cfg}"),
    );
    assert_eq!(
        text(server, "serverReference"),
        [format!("CN=DC1,OU=Domain Controllers,{DOMAIN}")]
    );
    let everyone = find(
        &tree,
        &format!("CN=Everyone,CN=WellKnown Security Principals,{cfg}"),
    );
    assert_eq!(
        everyone.get("objectSid").unwrap()[0],
        Sid::parse("S-1-1-0").unwrap().to_bytes()
    );
    let schema_head = find(&tree, &format!("CN=Schema,{cfg}"));
    assert_eq!(text(schema_head, "objectVersion"), ["88"]);
}

#[test]
fn recycle_bin_guid() {
    assert_eq!(
        crate::schema::builtin::format_guid(&configuration::RECYCLE_BIN_FEATURE),
        "766ddcd8-acd0-445e-f3b9-a7f9b6744f2a"
    );
}

#[test]
fn schema_round_trips_through_the_schema_nc() {
    for (name, schema, tree) in cases() {
        let schema_dn = dn(&format!("CN=Schema,CN=Configuration,{DOMAIN}"));
        let objects = tree
            .iter()
            .filter(|p| p.entry.dn.parent().as_ref() == Some(&schema_dn))
            .count();
        assert_eq!(
            objects,
            schema.attributes().len() + schema.classes().len(),
            "{name}"
        );
        let back = schema_from_entries(tree.iter().map(|p| &p.entry)).unwrap();
        assert_eq!(back.attributes().len(), schema.attributes().len(), "{name}");
        assert_eq!(back.classes().len(), schema.classes().len(), "{name}");
        for a in schema.attributes() {
            assert_eq!(back.attribute(&a.ldap_name), Some(a), "{name}");
        }
        for c in schema.classes() {
            assert_eq!(back.class(&c.ldap_name), Some(c), "{name}");
        }
        let user = find(&tree, &format!("CN=User,{schema_dn}"));
        assert_eq!(
            text(user, "defaultObjectCategory"),
            [format!("CN=Person,{schema_dn}")]
        );
    }
}

#[test]
fn bad_parameters_are_refused() {
    type Change = fn(&mut ProvisionParams);
    let cases: [(&str, Change); 6] = [
        ("realm", |p| p.realm = "samdom..com".into()),
        ("realm", |p| p.realm = "sam dom.com".into()),
        ("NetBIOS", |p| {
            p.netbios_domain = "A-VERY-LONG-NETBIOS-NAME".into()
        }),
        ("DC name", |p| p.dc_name = "dc,1".into()),
        ("site", |p| p.site = String::new()),
        ("SID", |p| p.domain_sid = Sid::builtin(544)),
    ];
    for (what, change) in cases {
        let mut p = params();
        change(&mut p);
        let err = entries(&p, builtin()).unwrap_err();
        assert!(
            matches!(err, ProvisionError::InvalidParam { .. }),
            "{what}: {err}"
        );
        assert!(err.to_string().contains(what), "{err}");
    }
}

#[test]
fn a_schema_lacking_a_class_is_reported() {
    let schema_dn = dn(&format!("CN=Schema,CN=Configuration,{DOMAIN}"));
    let b = builtin();
    let mut objects = Vec::new();
    for a in b.attributes() {
        objects.push(crate::schema::objects::attribute_entry(a, &schema_dn).unwrap());
    }
    for c in b
        .classes()
        .filter(|c| c.ldap_name != "msDS-PasswordSettingsContainer")
    {
        objects.push(crate::schema::objects::class_entry(c, &schema_dn).unwrap());
    }
    let smaller = schema_from_entries(objects.iter()).unwrap();
    let err = entries(&params(), &smaller).unwrap_err();
    assert!(
        matches!(&err, ProvisionError::UnknownClass(c) if c == "msDS-PasswordSettingsContainer"),
        "{err}"
    );
}

#[test]
fn dn_values_name_provisioned_entries() {
    for (name, schema, tree) in cases() {
        let all: HashSet<&Dn> = tree.iter().map(|p| &p.entry.dn).collect();
        for p in &tree {
            for (attr, values) in &p.entry.attrs {
                let is_dn = schema.syntax_of(attr) == kauri_db::Syntax::Dn;
                for v in values {
                    let v = std::str::from_utf8(v).unwrap_or_default();
                    let target = if is_dn {
                        v
                    } else if let Some(rest) = v.strip_prefix("B:32:") {
                        rest.split_once(':').unwrap().1
                    } else {
                        continue;
                    };
                    assert!(
                        all.contains(&dn(target)),
                        "{name}: {} {attr} names {target}, which is not provisioned",
                        p.entry.dn
                    );
                }
            }
        }
    }
}
