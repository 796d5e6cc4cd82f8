//! Domains made by earlier storage formats (kept in `tests/data/format2-domain`,
//! `format3-domain` and `format5-domain`, the last the format this build writes) open with
//! this build, are upgraded in place when older, pass the consistency check and serve their
//! users; a database of a newer format than this build knows is refused and left as it was.

mod common;

use std::path::{Path, PathBuf};

use common::{fails, json, ok, serve, whoami};
use kauri_db::db::{STORE_FORMAT, TABLE_SPECS, T_META};
use kauri_kv::{Backend, ReadTxn, WriteTxn};

const FORMAT2: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/format2-domain");
const FORMAT3: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/format3-domain");
const FORMAT5: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/format5-domain");
const USER_PASSWORD: &str = "Kauri.Fixture.Pw1!";

/// Unpacks the fixture into a fresh data folder.
fn unpack(dir: &Path, fixture: &str) -> PathBuf {
    let data = dir.join("data");
    std::fs::create_dir_all(data.join("db")).unwrap();
    for f in ["domain.json", "secrets.key"] {
        std::fs::copy(Path::new(fixture).join(f), data.join(f)).unwrap();
    }
    // Git keeps no file modes beyond the executable bit; the key must be private again.
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(
        data.join("secrets.key"),
        std::fs::Permissions::from_mode(0o600),
    )
    .unwrap();
    let packed = std::fs::File::open(Path::new(fixture).join("db/data.mdb.zst")).unwrap();
    let mut out = std::fs::File::create(data.join("db/data.mdb")).unwrap();
    zstd::stream::copy_decode(packed, &mut out).unwrap();
    data
}

fn stored_format(db: &Path) -> u32 {
    let kv = kauri_kv::LmdbBackend::open_shaped(db, TABLE_SPECS, Default::default()).unwrap();
    let r = kv.read().unwrap();
    let v = r.get(T_META, b"format").unwrap().unwrap();
    u32::from_be_bytes(v.try_into().unwrap())
}

#[test]
fn a_format_2_domain_is_upgraded_on_first_open() {
    upgraded_on_first_open(FORMAT2, 2, 1899);
}

#[test]
fn a_format_3_domain_is_upgraded_on_first_open() {
    upgraded_on_first_open(FORMAT3, 3, 1899);
}

#[test]
fn a_format_5_domain_opens_and_is_upgraded_when_the_format_moves_on() {
    upgraded_on_first_open(FORMAT5, 5, 1944);
}

/// Opens a domain kept in an earlier (or this build's) storage format with this build: it
/// is upgraded when older, clean, smaller after compaction when it was rewritten, and
/// serves its users, groups and OUs as before.
fn upgraded_on_first_open(fixture: &str, format: u32, records: u64) {
    let dir = tempfile::tempdir().unwrap();
    let data = unpack(dir.path(), fixture);
    let d = data.to_str().unwrap();
    assert_eq!(stored_format(&data.join("db")), format);

    let check = json(&ok(&["dbcheck", "--data", d, "--json"]));
    assert_eq!(check["clean"], true, "{check}");
    assert_eq!(check["records"], records, "{check}");
    assert_eq!(stored_format(&data.join("db")), STORE_FORMAT);

    // An upgrade rewrote records and indexes; compaction gives the freed pages back.
    let compacted = json(&ok(&["db", "compact", "-H", d, "--json"]));
    let (before, after) = (
        compacted["bytes_before"].as_u64().unwrap(),
        compacted["bytes_after"].as_u64().unwrap(),
    );
    if format < STORE_FORMAT {
        assert!(after < before, "{compacted}");
    }
    let check = json(&ok(&["dbcheck", "--data", d, "--json"]));
    assert_eq!(check["clean"], true, "{check}");

    // Searches through the upgraded indexes: equality, presence, links and the hierarchy.
    let members = json(&ok(&[
        "group",
        "list-members",
        "-H",
        d,
        "Testers",
        "--json",
    ]));
    let names: Vec<&str> = members
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["ann", "bob"]);
    let users = json(&ok(&["user", "list", "-H", d, "--json"]));
    let mut names: Vec<&str> = users
        .as_array()
        .unwrap()
        .iter()
        .map(|u| u["sAMAccountName"].as_str().unwrap())
        .collect();
    names.sort_unstable();
    assert_eq!(
        names,
        ["Administrator", "Guest", "ann", "bob", "cai", "krbtgt"]
    );
    let cai = json(&ok(&["user", "show", "-H", d, "cai", "--json"]));
    assert!(
        cai.to_string()
            .contains("OU=Lab,DC=fixture,DC=example,DC=test"),
        "{cai}"
    );

    // Writes after the upgrade, then the same checks again, served over LDAP.
    ok(&["user", "add", "-H", d, "dee", "--password", USER_PASSWORD]);
    ok(&["group", "add-members", "-H", d, "Testers", "dee,cai"]);
    ok(&["group", "remove-members", "-H", d, "Testers", "ann"]);
    let check = json(&ok(&["dbcheck", "--data", d, "--json"]));
    assert_eq!(check["clean"], true, "{check}");

    let mut server = serve(&data);
    let url = server.ldap();
    // Not while the server has the database open.
    let size = std::fs::metadata(data.join("db/data.mdb")).unwrap().len();
    let err = fails(&["db", "compact", "-H", d]);
    assert!(err.contains("open in another process"), "{err}");
    assert_eq!(
        std::fs::metadata(data.join("db/data.mdb")).unwrap().len(),
        size
    );
    for user in ["ann", "cai", "dee"] {
        let upn = format!("{user}@fixture.example.test");
        let who = whoami(&url, &upn, USER_PASSWORD).unwrap();
        assert!(who.to_ascii_lowercase().contains(user), "{who}");
    }
    // Every object got its security descriptor (storage format 5), those of the objects
    // added after the upgrade inheriting from their parents.
    for dn in [
        "DC=fixture,DC=example,DC=test",
        "CN=Users,DC=fixture,DC=example,DC=test",
    ] {
        let sddl = ok(&["dsacl", "show", "-H", d, dn, "--sddl"]);
        assert!(sddl.trim_start().starts_with("O:"), "{dn}: {sddl}");
    }
    let dee = json(&ok(&["user", "show", "-H", d, "dee", "--json"]));
    let dee_dn = dee["dn"].as_str().unwrap_or_default().to_string();
    let sddl = ok(&["dsacl", "show", "-H", d, &dee_dn, "--sddl"]);
    assert!(sddl.contains("ID;"), "inherited ACEs on {dee_dn}: {sddl}");
    assert!(whoami(&url, "bob@fixture.example.test", "wrong").is_err());
    server.stop();
}

#[test]
fn a_newer_format_is_refused_and_left_unchanged() {
    let dir = tempfile::tempdir().unwrap();
    let data = unpack(dir.path(), FORMAT3);
    let db = data.join("db");
    {
        let kv = kauri_kv::LmdbBackend::open_shaped(&db, TABLE_SPECS, Default::default()).unwrap();
        let mut w = kv.write().unwrap();
        w.put(T_META, b"format", &(STORE_FORMAT + 1).to_be_bytes())
            .unwrap();
        w.commit().unwrap();
    }
    let before = std::fs::read(db.join("data.mdb")).unwrap();
    let err = fails(&["dbcheck", "--data", data.to_str().unwrap()]);
    assert!(
        err.contains(&format!(
            "unsupported database format version {}",
            STORE_FORMAT + 1
        )),
        "{err}"
    );
    assert!(std::fs::read(db.join("data.mdb")).unwrap() == before);
}
