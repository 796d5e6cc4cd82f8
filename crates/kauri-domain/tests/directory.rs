//! The directory service on a provisioned domain (in memory): provisioning, schema
//! validation with AD's result codes, principals, links, tombstones, passwords and
//! password policies, the access policy, and schema extension.

mod common;

use common::provisioned_with;

use kauri_db::{Dn, Entry, Modification, ModifyOp};
use kauri_domain::directory::{
    resultant_pso, token_groups, view::View, Account, BindUpdate, Caller, Change, Directory,
    Request,
};
use kauri_domain::password::encode_unicode_pwd;
use kauri_domain::schema::Schema;
use kauri_domain::sid::Sid;
use kauri_kv::mem::MemBackend;

const DOMAIN: &str = "DC=samdom,DC=example,DC=com";
const PASSWORD: &str = "Passw0rd.Admin";

fn full() -> Directory<MemBackend> {
    provisioned_with(Schema::load_default().0)
}

fn admin() -> Caller {
    Caller::System
}

fn dn(s: &str) -> Dn {
    Dn::parse(s).unwrap()
}

fn run(
    dir: &Directory<MemBackend>,
    caller: Caller,
    encrypted: bool,
    change: Change,
) -> Result<(), u32> {
    let mut w = dir.db().write().unwrap();
    let r = dir.apply(
        &mut w,
        &Request {
            caller,
            encrypted,
            change,
        },
    );
    w.commit().unwrap();
    dir.after_commit().unwrap();
    r.map_err(|e| {
        eprintln!("refused: {e}");
        e.ldap_result_code()
    })
}

fn add(dir: &Directory<MemBackend>, caller: Caller, e: Entry) -> Result<(), u32> {
    run(dir, caller, true, Change::Add(e))
}

fn modify(
    dir: &Directory<MemBackend>,
    caller: Caller,
    d: &str,
    mods: Vec<Modification>,
) -> Result<(), u32> {
    run(
        dir,
        caller,
        true,
        Change::Modify {
            sd_flags: None,
            dn: dn(d),
            mods,
            permissive: false,
        },
    )
}

fn user(name: &str) -> Entry {
    Entry::new(dn(&format!("CN={name},CN=Users,{DOMAIN}")))
        .with("objectClass", &["user"])
        .with("sAMAccountName", &[&name.to_lowercase()])
}

fn group(name: &str, group_type: &str) -> Entry {
    Entry::new(dn(&format!("CN={name},CN=Users,{DOMAIN}")))
        .with("objectClass", &["group"])
        .with("groupType", &[group_type])
}

fn text(dir: &Directory<MemBackend>, d: &str, attr: &str) -> Option<String> {
    let r = dir.db().read().unwrap();
    let id = r.lookup(&dn(d)).unwrap()?;
    r.text(id, attr).unwrap()
}

fn id_of(dir: &Directory<MemBackend>, d: &str) -> u64 {
    dir.db().read().unwrap().lookup(&dn(d)).unwrap().unwrap()
}

/// The caller an account is after a bind: its SID and its token's groups.
fn account(dir: &Directory<MemBackend>, d: &str) -> Caller {
    let id = id_of(dir, d);
    let r = dir.db().read().unwrap();
    let sid = r
        .values(id, "objectSid")
        .unwrap()
        .first()
        .map(|b| Sid::from_bytes(b).unwrap());
    let domain = dir.domain().unwrap();
    let groups: Vec<Sid> = token_groups(&r, &domain, id)
        .unwrap()
        .into_iter()
        .map(|(_, s)| s)
        .collect();
    let admin = kauri_domain::directory::is_admin_token(&groups, &domain.sid);
    Caller::Account(Account {
        id,
        dn: d.to_string(),
        sid,
        groups,
        admin,
    })
}

#[test]
fn provisioning_builds_a_domain() {
    for dir in [full(), provisioned_with(Schema::builtin())] {
        let info = dir.domain().expect("a domain");
        assert_eq!(info.domain_dn, dn(DOMAIN));
        assert_eq!(info.netbios, "SAMDOM");
        assert_eq!(info.dns_name, "samdom.example.com");
        assert!(info.ntds_settings.is_some());
        let r = dir.db().read().unwrap();
        let admin = r
            .lookup(&dn(&format!("CN=Administrator,CN=Users,{DOMAIN}")))
            .unwrap()
            .unwrap();
        let sid = Sid::from_bytes(&r.values(admin, "objectSid").unwrap()[0]).unwrap();
        assert_eq!(sid.to_string(), "S-1-5-21-1-2-3-500");
        assert_eq!(
            r.text(admin, "sAMAccountType").unwrap().as_deref(),
            Some("805306368")
        );
        let secrets = dir.stored_secrets(&r, admin).unwrap().expect("a password");
        assert!(secrets.verify(PASSWORD));
        assert!(!secrets.verify("wrong"));
        // Administrator's token: Domain Admins and friends, Domain Users by primary group.
        let token: Vec<u32> = token_groups(&r, &info, admin)
            .unwrap()
            .iter()
            .filter_map(|(_, s)| s.rid())
            .collect();
        for rid in [512, 513, 518, 519, 520, 544] {
            assert!(token.contains(&rid), "{rid} in {token:?}");
        }
        // Every object has its GUID and category.
        let guest = r
            .lookup(&dn(&format!("CN=Guest,CN=Users,{DOMAIN}")))
            .unwrap()
            .unwrap();
        assert_eq!(r.values(guest, "objectGUID").unwrap()[0].len(), 16);
        assert!(r
            .text(guest, "objectCategory")
            .unwrap()
            .unwrap()
            .starts_with("CN=Person,CN=Schema,CN=Configuration,DC=samdom"));
    }
}

/// The objects `kauri traffic populate` writes (an OU, a user with its HR attributes and
/// manager, a computer with its SPNs, a managed mail-enabled group) are accepted on the
/// built-in schema, explicitly chosen.
#[test]
fn the_builtin_schema_takes_what_populate_writes() {
    let dir = provisioned_with(kauri_domain::schema::builtin::schema().unwrap());
    let ou = format!("OU=Staff,{DOMAIN}");
    add(
        &dir,
        admin(),
        Entry::new(dn(&ou))
            .with("objectClass", &["top", "organizationalUnit"])
            .with("ou", &["Staff"])
            .with("description", &["Staff in Auckland"]),
    )
    .unwrap();
    let boss = format!("CN=Ann Lee 0,{ou}");
    let person = |d: &str, sam: &str, n: &str| {
        Entry::new(dn(d))
            .with(
                "objectClass",
                &["top", "person", "organizationalPerson", "user"],
            )
            .with("sAMAccountName", &[sam])
            .with("userPrincipalName", &[&format!("{sam}@samdom.example.com")])
            .with("givenName", &["Ann"])
            .with("sn", &["Lee"])
            .with("initials", &["A"])
            .with("displayName", &["Ann Lee"])
            .with("mail", &[&format!("ann.lee{n}@samdom.example.com")])
            .with("title", &["Engineer"])
            .with("department", &["Operations"])
            .with("company", &["Kauri Populate Ltd"])
            .with("physicalDeliveryOfficeName", &["Auckland"])
            .with("streetAddress", &["1 Queen Street"])
            .with("telephoneNumber", &["+64 9 123 4567"])
            .with("mobile", &["+64 21 1234 5678"])
            .with("employeeID", &[&format!("E000000{n}")])
            .with("employeeType", &["Staff"])
            .with("description", &["Engineer, Operations, Auckland"])
            .with("userAccountControl", &["544"])
    };
    add(&dir, admin(), person(&boss, "alee0", "0")).unwrap();
    let worker = format!("CN=Ann Lee 1,{ou}");
    add(
        &dir,
        admin(),
        person(&worker, "alee1", "1").with("manager", &[&boss]),
    )
    .unwrap();
    assert_eq!(
        text(&dir, &worker, "employeeID").as_deref(),
        Some("E0000001")
    );
    assert_eq!(
        text(&dir, &worker, "employeeType").as_deref(),
        Some("Staff")
    );
    let r = dir.db().read().unwrap();
    let reports = View::links(&r, id_of(&dir, &boss), "directReports").unwrap();
    assert_eq!(reports, [id_of(&dir, &worker)]);
    drop(r);
    let ws = format!("CN=WS000001,{ou}");
    add(
        &dir,
        admin(),
        Entry::new(dn(&ws))
            .with(
                "objectClass",
                &["top", "person", "organizationalPerson", "user", "computer"],
            )
            .with("sAMAccountName", &["WS000001$"])
            .with("dNSHostName", &["ws000001.samdom.example.com"])
            .with(
                "servicePrincipalName",
                &["HOST/WS000001", "HOST/ws000001.samdom.example.com"],
            )
            .with("operatingSystem", &["Windows 11 Enterprise"])
            .with("operatingSystemVersion", &["10.0 (22631)"])
            .with("userAccountControl", &["4128"]),
    )
    .unwrap();
    add(
        &dir,
        admin(),
        group("Operations Readers 3", "8")
            .with("sAMAccountName", &["operations-readers-3"])
            .with("mail", &["operations-readers-3@samdom.example.com"])
            .with("managedBy", &[&boss])
            .with("member", &[&worker, &ws]),
    )
    .unwrap();
}

#[test]
fn users_get_what_the_server_assigns() {
    let dir = full();
    add(&dir, admin(), user("alice")).unwrap();
    let d = format!("CN=alice,CN=Users,{DOMAIN}");
    let r = dir.db().read().unwrap();
    let id = r.lookup(&dn(&d)).unwrap().unwrap();
    let classes: Vec<String> = r
        .values(id, "objectClass")
        .unwrap()
        .iter()
        .map(|v| String::from_utf8_lossy(v).into_owned())
        .collect();
    assert_eq!(classes, ["top", "person", "organizationalPerson", "user"]);
    let sid = Sid::from_bytes(&r.values(id, "objectSid").unwrap()[0]).unwrap();
    assert_eq!(sid.rid(), Some(1100));
    assert_eq!(
        r.text(id, "primaryGroupID").unwrap().as_deref(),
        Some("513")
    );
    assert_eq!(
        r.text(id, "userAccountControl").unwrap().as_deref(),
        Some("546")
    );
    assert_eq!(
        r.text(id, "sAMAccountType").unwrap().as_deref(),
        Some("805306368")
    );
    assert_eq!(r.text(id, "instanceType").unwrap().as_deref(), Some("4"));
    assert_eq!(r.text(id, "name").unwrap().as_deref(), Some("alice"));
    assert!(r.text(id, "whenCreated").unwrap().unwrap().ends_with(".0Z"));
    drop(r);
    // The next principal gets the next RID; a refused add gives its RID back.
    assert_eq!(add(&dir, admin(), user("alice")), Err(68));
    add(&dir, admin(), group("staff", "-2147483646")).unwrap();
    let g = format!("CN=staff,CN=Users,{DOMAIN}");
    let r = dir.db().read().unwrap();
    let gid = r.lookup(&dn(&g)).unwrap().unwrap();
    let sid = Sid::from_bytes(&r.values(gid, "objectSid").unwrap()[0]).unwrap();
    assert_eq!(sid.rid(), Some(1101));
    assert_eq!(
        r.text(gid, "sAMAccountType").unwrap().as_deref(),
        Some("268435456")
    );
    assert!(r
        .text(gid, "sAMAccountName")
        .unwrap()
        .unwrap()
        .starts_with('$'));
}

#[test]
fn schema_rules_give_ads_result_codes() {
    let dir = full();
    let base = format!("CN=Users,{DOMAIN}");
    // Unknown attribute: noSuchAttribute, as AD answers.
    assert_eq!(
        add(&dir, admin(), user("a1").with("noSuchAttr", &["x"])),
        Err(16)
    );
    // Not allowed by the classes.
    assert_eq!(add(&dir, admin(), user("a2").with("dc", &["x"])), Err(65));
    // Single-valued with two values.
    assert_eq!(
        add(&dir, admin(), user("a3").with("displayName", &["x", "y"])),
        Err(19)
    );
    // Syntax.
    assert_eq!(
        add(&dir, admin(), user("a4").with("logonHours", &[])),
        Err(19)
    );
    assert_eq!(
        add(
            &dir,
            admin_account(&dir),
            user("a5").with("badPwdCount", &["1"])
        ),
        Err(53)
    );
    assert_eq!(
        add(&dir, admin(), user("a5").with("badPwdCount", &["x"])),
        Err(21)
    );
    assert_eq!(
        add(
            &dir,
            admin(),
            user("a6")
                .with("employeeID", &["x"])
                .with("userAccountControl", &["abc"])
        ),
        Err(21)
    );
    // System-only and server-owned attributes.
    assert_eq!(
        add(
            &dir,
            admin_account(&dir),
            user("a7").with("objectGUID", &["0123456789abcdef"])
        ),
        Err(53)
    );
    // Missing mandatory attribute.
    let pso = Entry::new(dn(&format!(
        "CN=pso,CN=Password Settings Container,CN=System,{DOMAIN}"
    )))
    .with("objectClass", &["msDS-PasswordSettings"]);
    assert_eq!(add(&dir, admin(), pso), Err(65));
    // Naming: the wrong RDN attribute, a parent the class may not live below.
    let wrong_rdn = Entry::new(dn(&format!("OU=x,{base}"))).with("objectClass", &["user"]);
    assert_eq!(add(&dir, admin_account(&dir), wrong_rdn), Err(64));
    add(&dir, admin(), user("parent")).unwrap();
    let below_user = Entry::new(dn(&format!("OU=child,CN=parent,{base}")))
        .with("objectClass", &["organizationalUnit"]);
    assert_eq!(add(&dir, admin_account(&dir), below_user), Err(64));
    // Unknown class, two structural chains.
    let bad_class = Entry::new(dn(&format!("CN=b,{base}"))).with("objectClass", &["nosuch"]);
    assert_eq!(add(&dir, admin(), bad_class), Err(16));
    // A user principal name is unique in the forest.
    add(
        &dir,
        admin(),
        user("u1").with("userPrincipalName", &["u@samdom.example.com"]),
    )
    .unwrap();
    assert_eq!(
        add(
            &dir,
            admin(),
            user("u2").with("userPrincipalName", &["U@samdom.example.com"])
        ),
        Err(19)
    );
    // The structural class cannot change.
    let d = format!("CN=u1,{base}");
    assert_eq!(
        modify(
            &dir,
            admin(),
            &d,
            vec![Modification::new(
                ModifyOp::Replace,
                "objectClass",
                &["group"]
            )]
        ),
        Err(65)
    );
    // Deleting a mandatory attribute.
    assert_eq!(
        modify(
            &dir,
            admin(),
            &d,
            vec![Modification::new(ModifyOp::Delete, "objectSid", &[])]
        ),
        Err(65)
    );
}

fn admin_account(dir: &Directory<MemBackend>) -> Caller {
    account(dir, &format!("CN=Administrator,CN=Users,{DOMAIN}"))
}

#[test]
fn account_control_and_groups() {
    let dir = full();
    add(&dir, admin(), user("bob")).unwrap();
    let bob = format!("CN=bob,CN=Users,{DOMAIN}");
    modify(
        &dir,
        admin(),
        &bob,
        vec![Modification::new(
            ModifyOp::Replace,
            "userAccountControl",
            &["4096"],
        )],
    )
    .unwrap();
    assert_eq!(
        text(&dir, &bob, "sAMAccountType").as_deref(),
        Some("805306369")
    );
    // A workstation account moves from Domain Users to Domain Computers, as in AD.
    assert_eq!(text(&dir, &bob, "primaryGroupID").as_deref(), Some("515"));
    assert_eq!(
        modify(
            &dir,
            admin(),
            &bob,
            vec![Modification::new(
                ModifyOp::Replace,
                "userAccountControl",
                &["4608"]
            )]
        ),
        Err(53)
    );
    // Nesting: a global group holds global groups, not universal ones.
    add(&dir, admin(), group("g1", "-2147483646")).unwrap();
    add(&dir, admin(), group("g2", "-2147483646")).unwrap();
    add(&dir, admin(), group("u", "-2147483640")).unwrap();
    let g = |n: &str| format!("CN={n},CN=Users,{DOMAIN}");
    modify(
        &dir,
        admin(),
        &g("g1"),
        vec![Modification::new(
            ModifyOp::Add,
            "member",
            &[&g("g2"), &bob],
        )],
    )
    .unwrap();
    assert_eq!(
        modify(
            &dir,
            admin(),
            &g("g1"),
            vec![Modification::new(ModifyOp::Add, "member", &[&g("u")])]
        ),
        Err(53)
    );
    modify(
        &dir,
        admin(),
        &g("u"),
        vec![Modification::new(ModifyOp::Add, "member", &[&g("g1")])],
    )
    .unwrap();
    // memberOf is computed, never written: unwillingToPerform, as in AD.
    assert_eq!(
        modify(
            &dir,
            admin_account(&dir),
            &bob,
            vec![Modification::new(ModifyOp::Add, "memberOf", &[&g("g2")])]
        ),
        Err(53)
    );
    // Bob's token: g1, u (through g1), Domain Computers (primary group).
    let r = dir.db().read().unwrap();
    let info = dir.domain().unwrap();
    let token: Vec<u64> = token_groups(&r, &info, id_of(&dir, &bob))
        .unwrap()
        .into_iter()
        .map(|(id, _)| id)
        .collect();
    assert!(token.contains(&id_of(&dir, &g("g1"))));
    assert!(token.contains(&id_of(&dir, &g("u"))));
    assert!(token.contains(&id_of(
        &dir,
        &format!("CN=Domain Computers,CN=Users,{DOMAIN}")
    )));
    assert!(!token.contains(&id_of(&dir, &g("g2"))));
    drop(r);
    // The primary group must be a group the account belongs to.
    let g1_rid = {
        let r = dir.db().read().unwrap();
        Sid::from_bytes(&r.values(id_of(&dir, &g("g1")), "objectSid").unwrap()[0])
            .unwrap()
            .rid()
            .unwrap()
    };
    modify(
        &dir,
        admin(),
        &bob,
        vec![Modification::new(
            ModifyOp::Replace,
            "primaryGroupID",
            &[&g1_rid.to_string()],
        )],
    )
    .unwrap();
    assert_eq!(
        modify(
            &dir,
            admin(),
            &bob,
            vec![Modification::new(
                ModifyOp::Replace,
                "primaryGroupID",
                &["512"]
            )]
        ),
        Err(53)
    );
}

#[test]
fn deleting_leaves_a_tombstone() {
    let dir = full();
    add(
        &dir,
        admin(),
        user("carol").with("description", &["gone soon"]),
    )
    .unwrap();
    add(&dir, admin(), group("team", "-2147483646")).unwrap();
    let carol = format!("CN=carol,CN=Users,{DOMAIN}");
    let team = format!("CN=team,CN=Users,{DOMAIN}");
    modify(
        &dir,
        admin(),
        &team,
        vec![Modification::new(ModifyOp::Add, "member", &[&carol])],
    )
    .unwrap();
    let id = id_of(&dir, &carol);
    run(
        &dir,
        admin(),
        true,
        Change::Delete {
            dn: dn(&carol),
            tree: false,
        },
    )
    .unwrap();
    let r = dir.db().read().unwrap();
    assert!(r.lookup(&dn(&carol)).unwrap().is_none());
    let tomb = r.dn_string(id).unwrap();
    assert!(tomb.contains("\\0ADEL:"), "{tomb}");
    assert!(
        tomb.ends_with(&format!("CN=Deleted Objects,{DOMAIN}")),
        "{tomb}"
    );
    assert_eq!(r.text(id, "isDeleted").unwrap().as_deref(), Some("TRUE"));
    assert_eq!(
        r.text(id, "lastKnownParent").unwrap().as_deref(),
        Some(format!("CN=Users,{DOMAIN}").as_str())
    );
    assert!(r.text(id, "description").unwrap().is_none(), "stripped");
    assert!(r.values(id, "objectSid").unwrap().len() == 1, "kept");
    assert!(r.links(id_of(&dir, &team), "member").unwrap().is_empty());
    drop(r);
    // The account name is free again; a tree delete tombstones a whole subtree.
    add(&dir, admin(), user("carol")).unwrap();
    let ou = format!("OU=Lab,{DOMAIN}");
    add(
        &dir,
        admin(),
        Entry::new(dn(&ou)).with("objectClass", &["organizationalUnit"]),
    )
    .unwrap();
    add(
        &dir,
        admin(),
        Entry::new(dn(&format!("CN=x,{ou}"))).with("objectClass", &["user"]),
    )
    .unwrap();
    assert_eq!(
        run(
            &dir,
            admin(),
            true,
            Change::Delete {
                dn: dn(&ou),
                tree: false
            }
        ),
        Err(66)
    );
    run(
        &dir,
        admin(),
        true,
        Change::Delete {
            dn: dn(&ou),
            tree: true,
        },
    )
    .unwrap();
    assert!(dir.db().read().unwrap().lookup(&dn(&ou)).unwrap().is_none());
    // System objects stay.
    assert_eq!(
        run(
            &dir,
            admin_account(&dir),
            true,
            Change::Delete {
                dn: dn(DOMAIN),
                tree: true
            }
        ),
        Err(53)
    );
    // The collector leaves young tombstones alone and purges those past the lifetime.
    let mut w = dir.db().write().unwrap();
    assert_eq!(dir.collect_tombstones(&mut w).unwrap(), 0);
    w.commit().unwrap();
    let tomb = dir.db().read().unwrap().dn_string(id).unwrap();
    run(
        &dir,
        Caller::System,
        true,
        Change::Modify {
            sd_flags: None,
            dn: dn(&tomb),
            mods: vec![Modification::new(
                ModifyOp::Replace,
                "whenChanged",
                &["20000101000000.0Z"],
            )],
            permissive: false,
        },
    )
    .unwrap();
    let mut w = dir.db().write().unwrap();
    assert_eq!(dir.collect_tombstones(&mut w).unwrap(), 1);
    w.commit().unwrap();
    assert!(dir.db().read().unwrap().record(id).unwrap().is_none());
}

#[test]
fn passwords_and_policies() {
    let dir = full();
    add(&dir, admin(), user("dave")).unwrap();
    let dave = format!("CN=dave,CN=Users,{DOMAIN}");
    let set = |pw: &str| {
        vec![Modification {
            op: ModifyOp::Replace,
            attr: "unicodePwd".into(),
            values: vec![encode_unicode_pwd(pw)],
        }]
    };
    // Only over an encrypted connection; the domain policy applies.
    assert_eq!(
        run(
            &dir,
            admin_account(&dir),
            false,
            Change::Modify {
                sd_flags: None,
                dn: dn(&dave),
                mods: set("Str0ng.Pass"),
                permissive: false
            }
        ),
        Err(53)
    );
    assert_eq!(
        modify(&dir, admin_account(&dir), &dave, set("short")),
        Err(19)
    );
    assert_eq!(
        modify(&dir, admin_account(&dir), &dave, set("alllowercaseletters")),
        Err(19)
    );
    modify(&dir, admin_account(&dir), &dave, set("Str0ng.Pass")).unwrap();
    let r = dir.db().read().unwrap();
    let id = r.lookup(&dn(&dave)).unwrap().unwrap();
    let secrets = dir.stored_secrets(&r, id).unwrap().unwrap();
    assert!(secrets.verify("Str0ng.Pass"));
    // Only the NT hash by default; the crypt forms when configured.
    assert!(secrets.sha512_crypt().is_empty() && secrets.sha256_crypt().is_empty());
    drop(r);
    dir.set_crypt_schemes(kauri_domain::password::CryptSchemes::parse(&["CryptSHA512"]).unwrap());
    modify(&dir, admin_account(&dir), &dave, set("Str0nger.Pass")).unwrap();
    let r = dir.db().read().unwrap();
    let secrets = dir.stored_secrets(&r, id).unwrap().unwrap();
    assert!(secrets.verify("Str0nger.Pass") && secrets.in_history("Str0ng.Pass"));
    assert!(secrets.sha512_crypt().starts_with("$6$") && secrets.sha256_crypt().is_empty());
    assert!(kauri_domain::password::CryptSchemes::parse(&["CryptMD5"]).is_err());
    dir.set_crypt_schemes(Default::default());
    drop(r);
    modify(&dir, admin_account(&dir), &dave, set("Str0ng.Pass")).unwrap();
    let r = dir.db().read().unwrap();
    assert!(
        r.values(id, "unicodePwd").unwrap().is_empty(),
        "never stored as given"
    );
    drop(r);
    // A change by the account itself: the old password must be right, history counts.
    let change = |old: &str, new: &str| {
        vec![
            Modification {
                op: ModifyOp::Delete,
                attr: "unicodePwd".into(),
                values: vec![encode_unicode_pwd(old)],
            },
            Modification {
                op: ModifyOp::Add,
                attr: "unicodePwd".into(),
                values: vec![encode_unicode_pwd(new)],
            },
        ]
    };
    // The domain's minimum age (1 day) stops an immediate change: relax it first.
    modify(
        &dir,
        admin(),
        DOMAIN,
        vec![Modification::new(ModifyOp::Replace, "minPwdAge", &["0"])],
    )
    .unwrap();
    assert_eq!(
        modify(
            &dir,
            account(&dir, &dave),
            &dave,
            change("Wr0ng.Pass", "An0ther.Pass")
        ),
        Err(19)
    );
    // A wrong old password counts towards lockout, like a bad bind.
    assert_eq!(text(&dir, &dave, "badPwdCount").as_deref(), Some("1"));
    modify(
        &dir,
        account(&dir, &dave),
        &dave,
        change("Str0ng.Pass", "An0ther.Pass"),
    )
    .unwrap();
    assert_eq!(
        modify(
            &dir,
            account(&dir, &dave),
            &dave,
            change("An0ther.Pass", "Str0ng.Pass")
        ),
        Err(19)
    );
    // An account may not replace its password or change anything else.
    assert_eq!(
        modify(&dir, account(&dir, &dave), &dave, set("Th1rd.Pass")),
        Err(50)
    );
    assert_eq!(
        modify(
            &dir,
            account(&dir, &dave),
            &dave,
            vec![Modification::new(ModifyOp::Replace, "description", &["x"])]
        ),
        Err(50)
    );
    assert_eq!(add(&dir, account(&dir, &dave), user("eve")), Err(50));
    // A fine-grained policy applied to a group of Dave's wins over the domain's.
    add(&dir, admin(), group("strict", "-2147483646")).unwrap();
    let strict = format!("CN=strict,CN=Users,{DOMAIN}");
    modify(
        &dir,
        admin(),
        &strict,
        vec![Modification::new(ModifyOp::Add, "member", &[&dave])],
    )
    .unwrap();
    let pso = |name: &str, precedence: &str, min: &str, applies: &str| {
        Entry::new(dn(&format!(
            "CN={name},CN=Password Settings Container,CN=System,{DOMAIN}"
        )))
        .with("objectClass", &["msDS-PasswordSettings"])
        .with("msDS-PasswordSettingsPrecedence", &[precedence])
        .with("msDS-PasswordReversibleEncryptionEnabled", &["FALSE"])
        .with("msDS-PasswordHistoryLength", &["0"])
        .with("msDS-PasswordComplexityEnabled", &["FALSE"])
        .with("msDS-MinimumPasswordLength", &[min])
        .with("msDS-MinimumPasswordAge", &["0"])
        .with("msDS-MaximumPasswordAge", &["-36288000000000"])
        .with("msDS-LockoutThreshold", &["0"])
        .with("msDS-LockoutObservationWindow", &["-18000000000"])
        .with("msDS-LockoutDuration", &["-18000000000"])
        .with("msDS-PSOAppliesTo", &[applies])
    };
    add(&dir, admin(), pso("long", "10", "20", &strict)).unwrap();
    add(&dir, admin(), pso("longer", "20", "30", &strict)).unwrap();
    let r = dir.db().read().unwrap();
    let info = dir.domain().unwrap();
    let applied = resultant_pso(&r, &info, id_of(&dir, &dave)).unwrap();
    assert_eq!(
        applied,
        Some(id_of(
            &dir,
            &format!("CN=long,CN=Password Settings Container,CN=System,{DOMAIN}")
        ))
    );
    drop(r);
    assert_eq!(
        modify(&dir, admin_account(&dir), &dave, set("Sh0rt.but.ok")),
        Err(19)
    );
    modify(
        &dir,
        admin_account(&dir),
        &dave,
        set("nineteen chars and one"),
    )
    .unwrap();
    // One applied to the account itself wins over group ones, whatever the precedence.
    add(&dir, admin(), pso("own", "99", "4", &dave)).unwrap();
    modify(&dir, admin_account(&dir), &dave, set("tiny")).unwrap();
}

#[test]
fn schema_extension_at_run_time() {
    let dir = full();
    let schema_dn = format!("CN=Schema,CN=Configuration,{DOMAIN}");
    let attr = Entry::new(dn(&format!("CN=kauri-Test-Level,{schema_dn}")))
        .with("objectClass", &["attributeSchema"])
        .with("lDAPDisplayName", &["kauriTestLevel"])
        .with("attributeID", &["1.3.6.1.4.1.99999.1.1"])
        .with("attributeSyntax", &["2.5.5.9"])
        .with("oMSyntax", &["2"])
        .with("isSingleValued", &["TRUE"])
        .with("searchFlags", &["1"]);
    add(&dir, admin(), attr).unwrap();
    let class = Entry::new(dn(&format!("CN=kauri-Test-Thing,{schema_dn}")))
        .with("objectClass", &["classSchema"])
        .with("lDAPDisplayName", &["kauriTestThing"])
        .with("governsID", &["1.3.6.1.4.1.99999.2.1"])
        .with("subClassOf", &["top"])
        .with("objectClassCategory", &["1"])
        .with("rDNAttID", &["cn"])
        .with("mayContain", &["kauriTestLevel"])
        .with("possSuperiors", &["container"]);
    add(&dir, admin(), class).unwrap();
    assert!(dir.schema().schema.attribute("kauriTestLevel").is_some());
    let thing = Entry::new(dn(&format!("CN=t1,CN=Users,{DOMAIN}")))
        .with("objectClass", &["kauriTestThing"])
        .with("kauriTestLevel", &["12"]);
    add(&dir, admin(), thing).unwrap();
    // The new attribute has its syntax and index.
    let thing2 = Entry::new(dn(&format!("CN=t2,CN=Users,{DOMAIN}")))
        .with("objectClass", &["kauriTestThing"])
        .with("kauriTestLevel", &["twelve"]);
    assert_eq!(add(&dir, admin(), thing2), Err(21));
    let r = dir.db().read().unwrap();
    assert_eq!(
        r.find_eq("kauriTestLevel", b"12").unwrap().map(|v| v.len()),
        Some(1)
    );
    // A definition that clashes is refused.
    drop(r);
    let dup = Entry::new(dn(&format!("CN=kauri-Dup,{schema_dn}")))
        .with("objectClass", &["attributeSchema"])
        .with("lDAPDisplayName", &["kauriTestLevel"])
        .with("attributeID", &["1.3.6.1.4.1.99999.1.2"])
        .with("attributeSyntax", &["2.5.5.9"])
        .with("isSingleValued", &["TRUE"])
        .with("oMSyntax", &["2"]);
    assert_eq!(add(&dir, admin(), dup), Err(53));
}

#[test]
fn binds_and_account_rules() {
    let dir = full();
    let pw = |p: &str| {
        vec![Modification {
            op: ModifyOp::Replace,
            attr: "unicodePwd".into(),
            values: vec![encode_unicode_pwd(p)],
        }]
    };
    add(
        &dir,
        admin(),
        user("frank").with("userPrincipalName", &["frank@corp.example"]),
    )
    .unwrap();
    let frank = format!("CN=frank,CN=Users,{DOMAIN}");
    modify(&dir, admin(), &frank, pw("Fr4nk.Secret")).unwrap();
    let code = |name: &str, p: &str| -> Result<Account, u32> {
        let out = dir.authenticate(name, p).unwrap();
        match out.update {
            Some(BindUpdate::Success(d, mods)) => run(
                &dir,
                Caller::System,
                true,
                Change::Modify {
                    sd_flags: None,
                    dn: d,
                    mods,
                    permissive: false,
                },
            )
            .unwrap(),
            Some(BindUpdate::BadPassword(d)) => {
                let mut w = dir.db().write().unwrap();
                dir.record_bad_password(&mut w, &d).unwrap();
                w.commit().unwrap();
            }
            None => {}
        }
        match out.result {
            Ok(a) => Ok(a),
            Err(f) => Err(f.data_code()),
        }
    };
    // New accounts are disabled until enabled.
    assert_eq!(code(&frank, "Fr4nk.Secret").unwrap_err(), 0x533);
    modify(
        &dir,
        admin(),
        &frank,
        vec![Modification::new(
            ModifyOp::Replace,
            "userAccountControl",
            &["512"],
        )],
    )
    .unwrap();
    for name in [
        frank.as_str(),
        "SAMDOM\\frank",
        "frank@corp.example",
        "frank@samdom.example.com",
    ] {
        let a = code(name, "Fr4nk.Secret").unwrap_or_else(|e| panic!("{name}: {e:x}"));
        assert_eq!(a.dn.to_lowercase(), frank.to_lowercase());
        assert!(!a.admin);
    }
    assert_eq!(code("OTHERDOM\\frank", "Fr4nk.Secret").unwrap_err(), 0x52e);
    assert_eq!(code("nobody@samdom.example.com", "x").unwrap_err(), 0x52e);
    // Must change at next logon.
    modify(
        &dir,
        admin_account(&dir),
        &frank,
        vec![Modification::new(ModifyOp::Replace, "pwdLastSet", &["0"])],
    )
    .unwrap();
    assert_eq!(code(&frank, "Fr4nk.Secret").unwrap_err(), 0x773);
    modify(
        &dir,
        admin_account(&dir),
        &frank,
        vec![Modification::new(ModifyOp::Replace, "pwdLastSet", &["-1"])],
    )
    .unwrap();
    // Expired account.
    modify(
        &dir,
        admin(),
        &frank,
        vec![Modification::new(
            ModifyOp::Replace,
            "accountExpires",
            &["1"],
        )],
    )
    .unwrap();
    assert_eq!(code(&frank, "Fr4nk.Secret").unwrap_err(), 0x701);
    modify(
        &dir,
        admin(),
        &frank,
        vec![Modification::new(
            ModifyOp::Replace,
            "accountExpires",
            &["0"],
        )],
    )
    .unwrap();
    // Lockout after three bad passwords; an administrator unlocks.
    modify(
        &dir,
        admin(),
        DOMAIN,
        vec![Modification::new(
            ModifyOp::Replace,
            "lockoutThreshold",
            &["3"],
        )],
    )
    .unwrap();
    for _ in 0..3 {
        assert_eq!(code(&frank, "bad").unwrap_err(), 0x52e);
    }
    assert_eq!(text(&dir, &frank, "badPwdCount").as_deref(), Some("3"));
    assert_eq!(code(&frank, "Fr4nk.Secret").unwrap_err(), 0x775);
    modify(
        &dir,
        admin_account(&dir),
        &frank,
        vec![Modification::new(ModifyOp::Replace, "lockoutTime", &["0"])],
    )
    .unwrap();
    code(&frank, "Fr4nk.Secret").unwrap();
    assert_eq!(text(&dir, &frank, "badPwdCount").as_deref(), Some("0"));
    assert!(text(&dir, &frank, "lastLogonTimestamp").is_some());
    // Administrator's token makes it an administrator.
    let a = code(&format!("CN=Administrator,CN=Users,{DOMAIN}"), PASSWORD).unwrap();
    assert!(a.admin);
}

#[test]
fn rid_pool_refills_from_the_rid_manager() {
    let dir = full();
    let mut w = dir.db().write().unwrap();
    for i in 0..520 {
        let req = Request {
            caller: Caller::System,
            encrypted: true,
            change: Change::Add(user(&format!("pool{i}"))),
        };
        dir.apply(&mut w, &req).unwrap();
    }
    w.commit().unwrap();
    let r = dir.db().read().unwrap();
    let rid_of = |name: &str| {
        let id = r
            .lookup(&dn(&format!("CN={name},CN=Users,{DOMAIN}")))
            .unwrap()
            .unwrap();
        Sid::from_bytes(&r.values(id, "objectSid").unwrap()[0])
            .unwrap()
            .rid()
            .unwrap()
    };
    // The DC's first pool is 1100–1599; the next block starts where the manager's
    // available pool did (1600).
    assert_eq!(rid_of("pool0"), 1100);
    assert_eq!(rid_of("pool499"), 1599);
    assert_eq!(rid_of("pool500"), 1600);
    assert_eq!(rid_of("pool519"), 1619);
    let manager = r
        .lookup(&dn(&format!("CN=RID Manager$,CN=System,{DOMAIN}")))
        .unwrap()
        .unwrap();
    let available = r.int(manager, "rIDAvailablePool").unwrap().unwrap() as u64;
    assert_eq!(available as u32, 2100);
}

#[test]
fn the_domain_check_finds_schema_violations_and_duplicates() {
    let dir = full();
    let clean = dir.check_domain().unwrap();
    assert!(clean.problems.is_empty(), "{:?}", clean.problems);
    assert!(clean.objects > 1800);
    add(&dir, admin(), user("dup1")).unwrap();
    // Written behind the directory service's back, straight into the database: a user
    // without its mandatory attributes, holding an attribute its classes do not allow and
    // dup1's account name.
    dir.db()
        .add(
            Entry::new(dn(&format!("CN=raw,CN=Users,{DOMAIN}")))
                .with(
                    "objectClass",
                    &["top", "person", "organizationalPerson", "user"],
                )
                .with("sAMAccountName", &["dup1"])
                .with("dc", &["x"]),
        )
        .unwrap();
    let report = dir.check_domain().unwrap();
    let about_raw: Vec<&str> = report
        .problems
        .iter()
        .filter(|p| p.dn.starts_with("CN=raw,"))
        .map(|p| p.what.as_str())
        .collect();
    assert!(
        about_raw
            .iter()
            .any(|w| w.contains("mandatory attribute objectsid")),
        "{about_raw:?}"
    );
    assert!(
        about_raw
            .iter()
            .any(|w| w.contains("attribute dc is not allowed")),
        "{about_raw:?}"
    );
    assert!(
        about_raw
            .iter()
            .any(|w| w.contains("sAMAccountName also held by CN=dup1")),
        "{about_raw:?}"
    );
}
