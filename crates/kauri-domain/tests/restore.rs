//! What a restore and a lab rename do to a copy of a provisioned domain (in memory): the
//! restored DC replaces the copy's DCs, takes the roles and a RID pool past the margin;
//! the renamed copy names nothing of the old domain and holds no secret.

mod common;

use common::{provisioned, DOMAIN};

use std::ops::ControlFlow;
use std::sync::Arc;

use kauri_db::db::{TABLES, TABLE_SPECS};
use kauri_db::{Db, Dn, Entry, Filter, Modification, ModifyOp, Scope, SearchRequest};
use kauri_domain::directory::{
    view::View, Caller, Change, Directory, RenameSpec, Request, RestoreSpec,
};
use kauri_domain::password::encode_unicode_pwd;
use kauri_domain::sid::Sid;
use kauri_kv::dump::{load_dump, write_dump};
use kauri_kv::mem::MemBackend;
use kauri_kv::{Backend, LmdbBackend, LmdbOptions};

fn dn(s: &str) -> Dn {
    Dn::parse(s).unwrap()
}

fn apply<B: Backend>(dir: &Directory<B>, change: Change) {
    let mut w = dir.db().write().unwrap();
    dir.apply(
        &mut w,
        &Request {
            caller: Caller::System,
            encrypted: true,
            change,
        },
    )
    .unwrap();
    w.commit().unwrap();
}

fn add_user<B: Backend>(dir: &Directory<B>, name: &str) -> String {
    let user = format!("CN={name},CN=Users,{DOMAIN}");
    apply(
        dir,
        Change::Add(
            Entry::new(dn(&user))
                .with("objectClass", &["user"])
                .with("sAMAccountName", &[&name.to_lowercase()])
                .with(
                    "userPrincipalName",
                    &[&format!("{}@samdom.example.com", name.to_lowercase())],
                ),
        ),
    );
    user
}

fn rid_of<B: Backend>(dir: &Directory<B>, entry: &str) -> u32 {
    let r = dir.db().read().unwrap();
    let id = r.lookup(&dn(entry)).unwrap().unwrap();
    let sid = r.values(id, "objectSid").unwrap();
    *Sid::from_bytes(&sid[0]).unwrap().subs.last().unwrap()
}

fn text<B: Backend>(dir: &Directory<B>, entry: &str, attr: &str) -> Vec<String> {
    let r = dir.db().read().unwrap();
    let Some(id) = r.lookup(&dn(entry)).unwrap() else {
        return Vec::new();
    };
    r.values(id, attr)
        .unwrap()
        .into_iter()
        .map(|v| String::from_utf8_lossy(&v).into_owned())
        .collect()
}

fn assert_consistent<B: Backend>(dir: &Directory<B>) {
    let report = dir.db().check(false, None).unwrap();
    assert!(report.is_clean(), "{:?}", report.problems);
    let domain = dir.check_domain().unwrap();
    assert!(domain.problems.is_empty(), "{:?}", domain.problems);
}

/// The directory on an LMDB copy of `dir`, reopened after its invocation id was retired,
/// as the restore command opens it.
fn reopened_with_new_invocation(dir: Directory<MemBackend>) -> (Directory<LmdbBackend>, [u8; 16]) {
    let folder = tempfile::tempdir().unwrap().keep();
    {
        let copy = LmdbBackend::open_shaped(&folder, TABLE_SPECS, LmdbOptions::default()).unwrap();
        let r = dir.db().read().unwrap();
        let mut dump = Vec::new();
        write_dump(r.kv(), TABLES, &mut dump).unwrap();
        load_dump(&copy, TABLES, dump.as_slice(), None).unwrap();
        Db::<LmdbBackend>::retire_invocation(&copy).unwrap();
    }
    let schema = dir.schema().schema.clone();
    let db = Db::open_lmdb_deferred(&folder, schema.db_config(), LmdbOptions::default()).unwrap();
    db.adopt_config(schema.db_config()).unwrap();
    let invocation = db.invocation_id();
    (
        Directory::new(Arc::new(db), schema, None).unwrap(),
        invocation,
    )
}

#[test]
fn a_restored_dc_replaces_the_copied_dcs() {
    let dir = provisioned();
    let before = rid_of(&dir, &add_user(&dir, "Before"));
    assert!((1100..1600).contains(&before));
    let old_invocation = dir.db().invocation_id();

    // What the restore command does to a loaded copy: a new invocation id, then this.
    let (dir, invocation) = reopened_with_new_invocation(dir);
    assert_ne!(invocation, old_invocation);
    let report = dir
        .become_restored_dc(&RestoreSpec {
            dc_name: "dc2".into(),
            site: None,
            rid_margin: 100_000,
        })
        .unwrap();

    let site = format!("CN=Default-First-Site-Name,CN=Sites,CN=Configuration,{DOMAIN}");
    let ntds = format!("CN=NTDS Settings,CN=DC2,CN=Servers,{site}");
    let computer = format!("CN=DC2,OU=Domain Controllers,{DOMAIN}");
    assert_eq!(report.ntds_settings, ntds);
    assert_eq!(report.dc_computer, computer);
    assert_eq!(report.removed_dcs, [format!("CN=DC1,CN=Servers,{site}")]);
    // The RID Manager had handed out up to 1599: the margin comes on top.
    assert_eq!(report.rid_pool, (101_600, 102_099));
    assert_eq!(rid_of(&dir, &computer), 101_600);
    assert_eq!(report.dc_sid, "S-1-5-21-1-2-3-101600");
    assert_eq!(report.roles, 6);

    let info = dir.domain().unwrap();
    assert_eq!(info.ntds_settings.as_ref().unwrap().to_string(), ntds);
    assert_eq!(info.dc_computer.as_ref().unwrap().to_string(), computer);
    for holder in [
        DOMAIN.to_string(),
        format!("CN=RID Manager$,CN=System,{DOMAIN}"),
        format!("CN=Partitions,CN=Configuration,{DOMAIN}"),
        format!("CN=Schema,CN=Configuration,{DOMAIN}"),
    ] {
        assert_eq!(
            text(&dir, &holder, "fSMORoleOwner"),
            [ntds.as_str()],
            "{holder}"
        );
    }
    assert_eq!(
        text(
            &dir,
            &format!("CN=NTDS Site Settings,{site}"),
            "interSiteTopologyGenerator"
        ),
        [ntds.as_str()]
    );
    // The old DC's objects are tombstones; the new DC's settings carry the new identity.
    assert!(text(
        &dir,
        &format!("CN=DC1,OU=Domain Controllers,{DOMAIN}"),
        "cn"
    )
    .is_empty());
    assert!(text(&dir, &format!("CN=DC1,CN=Servers,{site}"), "cn").is_empty());
    let r = dir.db().read().unwrap();
    let id = r.lookup(&dn(&ntds)).unwrap().unwrap();
    assert_eq!(r.values(id, "invocationId").unwrap(), [invocation.to_vec()]);
    assert_eq!(r.retired_invocations().unwrap()[0].0, old_invocation);
    drop(r);

    // New accounts get RIDs from the new DC's pool.
    let after = rid_of(&dir, &add_user(&dir, "After"));
    assert_eq!(after, 101_601);
    assert_consistent(&dir);
}

#[test]
fn a_restored_dc_may_keep_the_old_name() {
    let dir = provisioned();
    Db::<MemBackend>::retire_invocation(dir.db().kv()).unwrap();
    let report = dir
        .become_restored_dc(&RestoreSpec {
            dc_name: "DC1".into(),
            site: None,
            rid_margin: 1000,
        })
        .unwrap();
    assert_eq!(report.rid_pool, (2600, 3099));
    assert_eq!(
        dir.domain()
            .unwrap()
            .dc_computer
            .clone()
            .unwrap()
            .to_string(),
        format!("CN=DC1,OU=Domain Controllers,{DOMAIN}")
    );
    assert_consistent(&dir);
    // A site that does not exist is refused before anything is written.
    let err = dir
        .become_restored_dc(&RestoreSpec {
            dc_name: "DC3".into(),
            site: Some("Nowhere".into()),
            rid_margin: 1000,
        })
        .unwrap_err();
    assert!(err.to_string().contains("Nowhere"), "{err}");
    assert!(dir.domain().unwrap().ntds_settings.is_some());
    assert_consistent(&dir);
}

#[test]
fn a_renamed_copy_names_nothing_of_the_old_domain_and_holds_no_secret() {
    let dir = provisioned();
    let user = add_user(&dir, "Kiri");
    apply(
        &dir,
        Change::Modify {
            sd_flags: None,
            dn: dn(&user),
            mods: vec![Modification {
                op: ModifyOp::Replace,
                attr: "unicodePwd".into(),
                values: vec![encode_unicode_pwd("Koru.Passw0rd!")],
            }],
            permissive: false,
        },
    );
    apply(
        &dir,
        Change::Modify {
            sd_flags: None,
            dn: dn(&format!("CN=Domain Admins,CN=Users,{DOMAIN}")),
            mods: vec![Modification::new(ModifyOp::Add, "member", &[&user])],
            permissive: false,
        },
    );
    assert!(!text(&dir, &user, "supplementalCredentials").is_empty());

    let report = dir
        .rename_domain(&RenameSpec {
            realm: "LAB.EXAMPLE.ORG".into(),
            netbios: "lab".into(),
        })
        .unwrap();
    assert_eq!(report.naming_contexts, 3);
    assert_eq!(report.old_realm, "samdom.example.com");
    assert!(report.secrets_removed >= 2, "{report:?}");

    let info = dir.domain().unwrap();
    let lab = "DC=lab,DC=example,DC=org";
    assert_eq!(info.domain_dn.to_string(), lab);
    assert_eq!(info.dns_name, "lab.example.org");
    assert_eq!(info.netbios, "LAB");
    let user = format!("CN=Kiri,CN=Users,{lab}");
    assert_eq!(
        text(&dir, &user, "userPrincipalName"),
        ["kiri@lab.example.org"]
    );
    assert_eq!(
        text(&dir, &user, "objectCategory"),
        [format!("CN=Person,CN=Schema,CN=Configuration,{lab}")]
    );
    assert_eq!(
        text(&dir, &user, "memberOf"),
        [format!("CN=Domain Admins,CN=Users,{lab}")]
    );
    let cross_ref = format!("CN=LAB,CN=Partitions,CN=Configuration,{lab}");
    assert_eq!(text(&dir, &cross_ref, "nETBIOSName"), ["LAB"]);
    assert_eq!(text(&dir, &cross_ref, "dnsRoot"), ["lab.example.org"]);
    assert_eq!(text(&dir, &cross_ref, "nCName"), [lab]);
    let dc = format!("CN=DC1,OU=Domain Controllers,{lab}");
    assert_eq!(text(&dir, &dc, "dNSHostName"), ["dc1.lab.example.org"]);
    assert!(text(&dir, &dc, "servicePrincipalName")
        .contains(&"HOST/dc1.lab.example.org/LAB".to_string()));

    // No value of any entry, tombstones included, names the old domain or holds a secret.
    let r = dir.db().read().unwrap();
    let mut seen = 0;
    for (_, nc) in r.naming_contexts().unwrap() {
        assert!(!nc.to_ascii_lowercase().contains("samdom"), "{nc}");
        let req = SearchRequest::new(
            dn(&nc),
            Scope::Subtree,
            Filter::parse("(objectClass=*)").unwrap(),
        );
        r.search(&req, |hit| {
            seen += 1;
            let e = r.to_entry(hit.id, dn(&r.dn_string(hit.id).unwrap()), &hit.record);
            assert!(
                !e.dn.to_string().to_ascii_lowercase().contains("samdom"),
                "{}",
                e.dn
            );
            for (name, values) in &e.attrs {
                assert!(
                    !kauri_domain::directory::is_secret(name),
                    "{}: {name} survived",
                    e.dn
                );
                for v in values {
                    let t = String::from_utf8_lossy(v).to_ascii_lowercase();
                    let old_name = t.contains("samdom.example.com")
                        || t.contains("dc=samdom")
                        || t.split('/').any(|part| part == "samdom");
                    assert!(!old_name, "{}: {name}: {t}", e.dn);
                }
            }
            Ok(ControlFlow::Continue(()))
        })
        .unwrap();
    }
    assert!(seen > 1000, "{seen}");
    drop(r);
    assert_consistent(&dir);
}
