//! Backups end to end: taken while a client writes (each holds exactly a prefix of the
//! acknowledged adds), restored into new DCs that serve the same data (and, after a
//! rename, none of the secrets), refused when damaged or foreign, and the domain's
//! consistency check finding and repairing broken indexes and links.

mod common;

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;

use common::{fails, json, ok, provision, serve, whoami, Served, DOMAIN, PASSWORD};
use kauri_ldap_client::{CheckResult, ConnectOptions, LdapClient, TlsOptions};

const WRITER_PREFIX: &str = "w";

fn s(p: &Path) -> String {
    p.display().to_string()
}

/// A command's arguments with `--server` naming the served domain over LDAPS, bound as
/// `who` (user, password) or as the Administrator.
fn on_server(served: &Served, args: &[&str], who: Option<(&str, &str)>) -> Vec<String> {
    let mut all: Vec<String> = args.iter().map(|a| a.to_string()).collect();
    all.push("--server".into());
    all.push(served.ldaps());
    match who {
        Some((user, password)) => {
            all.extend(["-U", user, "-w", password, "--cacert", &s(&served.ca)].map(String::from))
        }
        None => all.extend(served.as_admin(&served.ldaps()).into_iter().skip(2)),
    }
    all
}

/// The one archive a backup command wrote into `dir`.
fn archive_in(dir: &Path) -> PathBuf {
    let found: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.to_string_lossy().ends_with(".tar.zst"))
        .collect();
    assert_eq!(found.len(), 1, "{found:?}");
    found[0].clone()
}

/// The numbers of the writer's users in a domain folder, sorted.
fn written_users(data: &Path) -> Vec<usize> {
    let list = json(&ok(&["user", "list", "--json", "-H", &s(data)]));
    let mut n: Vec<usize> = list
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|u| u["sAMAccountName"].as_str())
        .filter_map(|name| name.strip_prefix(WRITER_PREFIX))
        .filter_map(|n| n.parse().ok())
        .collect();
    n.sort_unstable();
    n
}

/// Adds users w0, w1, … one at a time over LDAP until told to stop; `acked` counts the
/// adds the server has acknowledged.
fn writer(
    served: &Served,
    acked: Arc<AtomicUsize>,
    stop: Arc<AtomicBool>,
) -> std::thread::JoinHandle<()> {
    let url = served.ldaps();
    let ca = served.ca.clone();
    std::thread::spawn(move || {
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        rt.block_on(async {
            let opts = ConnectOptions::default().with_tls(TlsOptions::default().with_ca_file(ca));
            let mut c = LdapClient::connect(&url, &opts).await.unwrap();
            c.simple_bind("SAMDOM\\Administrator", PASSWORD)
                .await
                .unwrap()
                .check("bind")
                .unwrap();
            let mut i = 0;
            while !stop.load(Ordering::SeqCst) {
                let name = format!("{WRITER_PREFIX}{i}");
                let attrs = vec![
                    ("objectClass".to_string(), vec![b"user".to_vec()]),
                    (
                        "sAMAccountName".to_string(),
                        vec![name.clone().into_bytes()],
                    ),
                ];
                c.add(&format!("CN={name},CN=Users,{DOMAIN}"), attrs, Vec::new())
                    .await
                    .unwrap()
                    .check("add")
                    .unwrap();
                i += 1;
                acked.store(i, Ordering::SeqCst);
            }
        });
    })
}

/// Restores `archive` as DC2 in `dir/name`; returns the folder.
fn restore(archive: &Path, dir: &Path, name: &str, extra: &[&str]) -> (PathBuf, serde_json::Value) {
    let target = dir.join(name);
    let mut args = vec![
        "domain".to_string(),
        "backup".into(),
        "restore".into(),
        "--backup-file".into(),
        s(archive),
        "--targetdir".into(),
        s(&target),
        "--newservername".into(),
        "DC2".into(),
        "--json".into(),
    ];
    args.extend(extra.iter().map(|a| a.to_string()));
    let out = json(&ok(&args));
    (target, out)
}

#[test]
fn backups_taken_while_a_client_writes_hold_a_prefix_and_restore_into_serving_dcs() {
    let dir = tempfile::tempdir().unwrap();
    let data = provision(dir.path(), "domain");
    ok(&[
        "user",
        "add",
        "kiri",
        "--password",
        "Koru.Passw0rd!",
        "-H",
        &s(&data),
    ]);
    let served = serve(&data);
    let acked = Arc::new(AtomicUsize::new(0));
    let stop = Arc::new(AtomicBool::new(false));
    let w = writer(&served, acked.clone(), stop.clone());
    while acked.load(Ordering::SeqCst) < 20 {
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
    // Offline, from the folder the server is writing to.
    let before_offline = acked.load(Ordering::SeqCst);
    let offline_dir = dir.path().join("offline");
    let report = json(&ok(&[
        "domain",
        "backup",
        "offline",
        "-H",
        &s(&data),
        "--targetdir",
        &s(&offline_dir),
        "--json",
    ]));
    let after_offline = acked.load(Ordering::SeqCst);
    assert_eq!(report["kind"], "offline");
    assert_eq!(report["secrets"], true);
    // Online, pulled from the server over LDAPS as the Administrator.
    let before_online = acked.load(Ordering::SeqCst);
    let online_dir = dir.path().join("online");
    let args = on_server(
        &served,
        &[
            "domain",
            "backup",
            "online",
            "--targetdir",
            &s(&online_dir),
            "--json",
        ],
        None,
    );
    let report = json(&ok(&args));
    let after_online = acked.load(Ordering::SeqCst);
    assert_eq!(report["kind"], "online");
    stop.store(true, Ordering::SeqCst);
    w.join().unwrap();
    assert!(
        after_online > before_offline,
        "the writer made progress meanwhile"
    );

    for (archive_dir, before, after) in [
        (&offline_dir, before_offline, after_offline),
        (&online_dir, before_online, after_online),
    ] {
        let archive = archive_in(archive_dir);
        let verified = json(&ok(&[
            "domain",
            "backup",
            "verify",
            "--backup-file",
            &s(&archive),
            "--json",
        ]));
        assert_eq!(verified["secrets"], true);
        let name = archive_dir.file_name().unwrap().to_str().unwrap();
        let (restored, out) = restore(&archive, dir.path(), &format!("restored-{name}"), &[]);
        assert_eq!(out["dc_name"], "DC2");
        assert!(out["rid_pool"][0].as_u64().unwrap() > 100_000);
        // Exactly a prefix of the acknowledged adds: all of those before the backup
        // started, none that were not acknowledged by its end, no gap.
        let users = written_users(&restored);
        let k = users.len();
        assert_eq!(users, (0..k).collect::<Vec<_>>(), "{name}: not a prefix");
        assert!(
            k >= before && k <= after + 1,
            "{name}: {k} users, acknowledged {before}..{after}"
        );
        // The restored DC passes the check and serves, passwords included.
        let check = json(&ok(&["dbcheck", "-H", &s(&restored), "--json"]));
        assert_eq!(check["clean"], true, "{check}");
        let dc2 = serve(&restored);
        assert!(
            whoami(&dc2.ldap(), "SAMDOM\\kiri", "Koru.Passw0rd!").is_ok(),
            "{name}: the restored DC does not know kiri's password"
        );
        let dse = std::process::Command::new("ldapsearch")
            .args([
                "-x",
                "-LLL",
                "-H",
                &dc2.ldap(),
                "-b",
                "",
                "-s",
                "base",
                "dsServiceName",
            ])
            .output()
            .unwrap();
        let dse = String::from_utf8_lossy(&dse.stdout);
        assert!(dse.contains("CN=DC2,CN=Servers"), "{dse}");
        // New accounts take RIDs past the margin.
        ok(&[
            "user",
            "add",
            "after",
            "-H",
            &dc2.ldaps(),
            "-U",
            "SAMDOM\\Administrator",
            "-w",
            PASSWORD,
            "--cacert",
            &s(&dc2.ca),
        ]);
        let shown = ok(&[
            "user",
            "show",
            "after",
            "-H",
            &s(&restored),
            "--attributes",
            "objectSid",
        ]);
        let rid: u64 = shown
            .lines()
            .find_map(|l| l.strip_prefix("objectSid: "))
            .and_then(|sid| sid.rsplit('-').next())
            .and_then(|r| r.parse().ok())
            .unwrap();
        assert!(rid > 100_000, "{shown}");
    }
}

#[test]
fn a_renamed_backup_restores_a_lab_domain_without_secrets() {
    let dir = tempfile::tempdir().unwrap();
    let data = provision(dir.path(), "domain");
    let d = s(&data);
    ok(&[
        "user",
        "add",
        "kiri",
        "--password",
        "Koru.Passw0rd!",
        "-H",
        &d,
    ]);
    ok(&["group", "add", "Staff", "-H", &d]);
    ok(&["group", "add-members", "Staff", "kiri", "-H", &d]);
    let served = serve(&data);
    let out_dir = dir.path().join("lab-backup");
    let args = on_server(
        &served,
        &[
            "domain",
            "backup",
            "rename",
            "LAB",
            "LAB.EXAMPLE.ORG",
            "--targetdir",
            &s(&out_dir),
            "--json",
        ],
        None,
    );
    let report = json(&ok(&args));
    assert_eq!(report["kind"], "rename");
    assert_eq!(report["secrets"], false);
    assert_eq!(report["renamed_from"]["realm"], "SAMDOM.EXAMPLE.COM");
    let archive = archive_in(&out_dir);
    let listing = std::process::Command::new("tar")
        .args(["--zstd", "-tf", &s(&archive)])
        .output()
        .unwrap();
    let listing = String::from_utf8_lossy(&listing.stdout);
    assert!(!listing.contains("secrets.key"), "{listing}");

    let (lab, out) = restore(
        &archive,
        dir.path(),
        "lab",
        &["--adminpass", "Lab.Passw0rd.1"],
    );
    assert_eq!(out["realm"], "LAB.EXAMPLE.ORG");
    assert_eq!(
        out["dc_computer"],
        "CN=DC2,OU=Domain Controllers,DC=lab,DC=example,DC=org"
    );
    let labdc = serve(&lab);
    // The lab answers under its new names; no password of production works there.
    assert!(whoami(&labdc.ldap(), "LAB\\Administrator", "Lab.Passw0rd.1").is_ok());
    assert!(whoami(&labdc.ldap(), "LAB\\Administrator", PASSWORD).is_err());
    assert!(whoami(&labdc.ldap(), "kiri@lab.example.org", "Koru.Passw0rd!").is_err());
    let kiri = json(&ok(&["user", "show", "kiri", "-H", &s(&lab), "--json"]));
    assert_eq!(kiri["dn"], "CN=kiri,CN=Users,DC=lab,DC=example,DC=org");
    assert_eq!(kiri["userPrincipalName"][0], "kiri@lab.example.org");
    assert_eq!(
        kiri["memberOf"][0],
        "CN=Staff,CN=Users,DC=lab,DC=example,DC=org"
    );
    let ldif = ok(&["ldif", "export", "-H", &s(&lab)]);
    assert!(ldif.len() > 100_000);
    let lower = ldif.to_ascii_lowercase();
    assert!(!lower.contains("samdom.example.com") && !lower.contains("dc=samdom"));
    // Only the Administrator, given a password by the restore, and the accounts the KDC
    // needs, given new random keys when the lab DC first served, hold password material.
    let mut holders = secret_holders(&lab);
    holders.sort();
    assert_eq!(
        holders,
        [
            "CN=Administrator,CN=Users,DC=lab,DC=example,DC=org",
            "CN=DC2,OU=Domain Controllers,DC=lab,DC=example,DC=org",
            "CN=krbtgt,CN=Users,DC=lab,DC=example,DC=org",
        ]
    );
    let check = json(&ok(&["dbcheck", "-H", &s(&lab), "--json"]));
    assert_eq!(check["clean"], true, "{check}");
    // The production domain is untouched.
    assert!(whoami(&served.ldap(), "SAMDOM\\kiri", "Koru.Passw0rd!").is_ok());
    // The same from the data folder, while it is served; a rename to the same names is
    // refused.
    let local_dir = dir.path().join("lab2-backup");
    let report = json(&ok(&[
        "domain",
        "backup",
        "rename",
        "LAB2",
        "lab2.example.net",
        "-H",
        &d,
        "--targetdir",
        &s(&local_dir),
        "--json",
    ]));
    assert_eq!(report["realm"], "LAB2.EXAMPLE.NET");
    let (lab2, _) = restore(&archive_in(&local_dir), dir.path(), "lab2", &[]);
    let kiri = json(&ok(&["user", "show", "kiri", "-H", &s(&lab2), "--json"]));
    assert_eq!(kiri["dn"], "CN=kiri,CN=Users,DC=lab2,DC=example,DC=net");
    let e = fails(&[
        "domain",
        "backup",
        "rename",
        "SAMDOM",
        "samdom.example.com",
        "-H",
        &d,
        "--targetdir",
        &s(&dir.path().join("same")),
    ]);
    assert!(e.contains("current realm"), "{e}");
}

/// The DNs of the entries that hold sealed password material, read from the database.
fn secret_holders(data: &Path) -> Vec<String> {
    let db = kauri_db::Db::open_lmdb_deferred(
        &data.join("db"),
        kauri_db::DbConfig::default(),
        kauri_kv::LmdbOptions::default(),
    )
    .unwrap();
    let r = db.read().unwrap();
    let mut out = Vec::new();
    for (_, nc) in r.naming_contexts().unwrap() {
        let req = kauri_db::SearchRequest::new(
            kauri_db::Dn::parse(&nc).unwrap(),
            kauri_db::Scope::Subtree,
            kauri_db::Filter::parse("(supplementalCredentials=*)").unwrap(),
        );
        for e in r.search_entries(&req).unwrap() {
            out.push(e.dn.to_string());
        }
    }
    out
}

#[test]
fn damaged_or_foreign_archives_are_refused_and_nothing_is_written() {
    let dir = tempfile::tempdir().unwrap();
    let data = provision(dir.path(), "domain");
    let out_dir = dir.path().join("backups");
    ok(&[
        "domain",
        "backup",
        "offline",
        "-H",
        &s(&data),
        "--targetdir",
        &s(&out_dir),
    ]);
    let good = archive_in(&out_dir);
    let bytes = std::fs::read(&good).unwrap();
    let target = dir.path().join("never");
    let attempt = |archive: &Path| {
        let e = fails(&[
            "domain",
            "backup",
            "restore",
            "--backup-file",
            &s(archive),
            "--targetdir",
            &s(&target),
            "--newservername",
            "DC2",
        ]);
        assert!(
            !target.exists(),
            "the target was created for {}",
            archive.display()
        );
        let leftovers: Vec<_> = std::fs::read_dir(dir.path())
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .filter(|n| n.starts_with(".kauri"))
            .collect();
        assert!(leftovers.is_empty(), "{leftovers:?}");
        let v = fails(&["domain", "backup", "verify", "--backup-file", &s(archive)]);
        assert!(!v.is_empty());
        e
    };
    // One byte changed inside the compressed stream.
    let damaged = dir.path().join("damaged.tar.zst");
    let mut b = bytes.clone();
    let mid = b.len() / 2;
    b[mid] ^= 0x55;
    std::fs::write(&damaged, &b).unwrap();
    let e = attempt(&damaged);
    assert!(e.contains("not a usable Kauri backup"), "{e}");
    // Cut short.
    let cut = dir.path().join("cut.tar.zst");
    std::fs::write(&cut, &bytes[..bytes.len() * 2 / 3]).unwrap();
    let e = attempt(&cut);
    assert!(e.contains("not a usable Kauri backup"), "{e}");
    // Not zstd at all, and a zstd tar of something else.
    let junk = dir.path().join("junk.tar.zst");
    std::fs::write(&junk, b"this is not a backup").unwrap();
    let e = attempt(&junk);
    assert!(e.contains("Kauri backup"), "{e}");
    let foreign_dir = dir.path().join("foreign");
    std::fs::create_dir(&foreign_dir).unwrap();
    std::fs::write(foreign_dir.join("hello.txt"), "hello").unwrap();
    let foreign = dir.path().join("foreign.tar.zst");
    let made = std::process::Command::new("tar")
        .args([
            "--zstd",
            "-cf",
            &s(&foreign),
            "-C",
            &s(&foreign_dir),
            "hello.txt",
        ])
        .status()
        .unwrap();
    assert!(made.success());
    let e = attempt(&foreign);
    assert!(e.contains("not kauri-backup.json"), "{e}");
    // A sound archive restores; a folder that is not empty is never written into.
    let busy = dir.path().join("busy");
    std::fs::create_dir(&busy).unwrap();
    std::fs::write(busy.join("keep.txt"), "mine").unwrap();
    let e = fails(&[
        "domain",
        "backup",
        "restore",
        "--backup-file",
        &s(&good),
        "--targetdir",
        &s(&busy),
        "--newservername",
        "DC2",
    ]);
    assert!(e.contains("not empty"), "{e}");
    assert_eq!(
        std::fs::read_to_string(busy.join("keep.txt")).unwrap(),
        "mine"
    );
    restore(&good, dir.path(), "fine", &[]);
}

#[test]
fn online_backups_are_for_administrators_on_encrypted_connections() {
    let dir = tempfile::tempdir().unwrap();
    let data = provision(dir.path(), "domain");
    ok(&[
        "user",
        "add",
        "kiri",
        "--password",
        "Koru.Passw0rd!",
        "-H",
        &s(&data),
    ]);
    let served = serve(&data);
    let args = on_server(
        &served,
        &[
            "domain",
            "backup",
            "online",
            "--targetdir",
            &s(&dir.path().join("b")),
        ],
        Some(("SAMDOM\\kiri", "Koru.Passw0rd!")),
    );
    let e = fails(&args);
    assert!(e.contains("LDAP result 50"), "{e}");
    // Without TLS the server refuses to send it at all.
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let code = rt.block_on(async {
        let mut c = LdapClient::connect(&served.ldap(), &ConnectOptions::default())
            .await
            .unwrap();
        c.simple_bind("SAMDOM\\Administrator", PASSWORD)
            .await
            .unwrap()
            .check("bind")
            .unwrap();
        let r = c
            .extended(kauri_ldap_proto::controls::KAURI_BACKUP, None, Vec::new())
            .await
            .unwrap();
        r.result.code.0
    });
    assert_eq!(code, 13);
    // The root DSE announces the operation.
    assert!(common::supported_extensions(&served.ldap())
        .contains(kauri_ldap_proto::controls::KAURI_BACKUP));
}

#[test]
fn dbcheck_finds_broken_indexes_and_links_in_a_domain_and_fix_repairs_them() {
    let dir = tempfile::tempdir().unwrap();
    let data = provision(dir.path(), "domain");
    let d = s(&data);
    ok(&["user", "add", "kiri", "-H", &d]);
    ok(&["group", "add", "Staff", "-H", &d]);
    ok(&[
        "group",
        "add-members",
        "Staff",
        "kiri,Administrator",
        "-H",
        &d,
    ]);
    {
        use kauri_kv::{Backend, ReadTxn, WriteTxn};
        let db = kauri_db::Db::open_lmdb_deferred(
            &data.join("db"),
            kauri_db::DbConfig::default(),
            kauri_kv::LmdbOptions::default(),
        )
        .unwrap();
        let r = db.read().unwrap();
        let id = |dn: &str| {
            r.lookup(&kauri_db::Dn::parse(dn).unwrap())
                .unwrap()
                .unwrap()
        };
        let staff = id(&format!("CN=Staff,CN=Users,{DOMAIN}"));
        let kiri = id(&format!("CN=kiri,CN=Users,{DOMAIN}"));
        let member = r.attr_id("member").unwrap();
        drop(r);
        let mut w = db.kv().write().unwrap();
        // kiri loses its back link; an index key points at nothing; one goes missing.
        use kauri_db::keys::{link_key, presence_key, LINK_BACK};
        assert!(w
            .delete(
                kauri_db::db::T_LINKS,
                &link_key(LINK_BACK, kiri, member, staff)
            )
            .unwrap());
        w.put(kauri_db::db::T_INDEX, &presence_key(1, 9_999_999), &[])
            .unwrap();
        let first = w
            .range(
                kauri_db::db::T_INDEX,
                std::ops::Bound::Unbounded,
                std::ops::Bound::Unbounded,
                kauri_kv::Direction::Forward,
            )
            .unwrap()
            .next()
            .unwrap()
            .unwrap()
            .0
            .to_vec();
        w.delete(kauri_db::db::T_INDEX, &first).unwrap();
        w.commit().unwrap();
    }
    let broken = common::kauri(&["dbcheck", "-H", &d, "--json"]);
    assert_eq!(broken.status.code(), Some(1));
    let report = json(&String::from_utf8_lossy(&broken.stdout));
    assert_eq!(report["clean"], false);
    let problems = report["problems"].to_string();
    assert!(
        problems.contains("the other direction is missing"),
        "{problems}"
    );
    assert!(
        problems.contains("index key without a record"),
        "{problems}"
    );
    assert!(problems.contains("index key missing"), "{problems}");
    let fixed = json(&ok(&["dbcheck", "-H", &d, "--fix", "--json"]));
    assert_eq!(fixed["fixed"], true);
    assert_eq!(fixed["clean"], true, "{fixed}");
    let again = json(&ok(&["dbcheck", "-H", &d, "--json"]));
    assert_eq!(again["clean"], true);
    // kiri is Staff again: the forward link was the authority.
    let shown = json(&ok(&["user", "show", "kiri", "-H", &d, "--json"]));
    assert_eq!(shown["memberOf"][0], format!("CN=Staff,CN=Users,{DOMAIN}"));
}
