//! The `kauri` command end to end: a small benchmark run that keeps its database, then the
//! database care commands on it, including a database damaged behind Kauri's back.

use std::process::Command;

fn kauri(args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_kauri"))
        .args(args)
        .output()
        .expect("run kauri")
}

fn json(out: &std::process::Output) -> serde_json::Value {
    serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "not JSON ({e}): {}\n{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        )
    })
}

#[test]
fn bench_then_database_care() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path().to_str().unwrap();
    let out = kauri(&[
        "bench",
        "db",
        "--users",
        "2000",
        "--searches",
        "200",
        "--dir",
        d,
        "--keep",
        "--json",
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let report = json(&out);
    let measures = report[0]["measures"].as_array().unwrap();
    for name in [
        "re-index",
        "equality search",
        "one-level search",
        "subtree search",
        "move an OU",
        "peak memory of a process serving",
    ] {
        assert!(
            measures
                .iter()
                .any(|m| m["name"].as_str().unwrap().starts_with(name)),
            "no {name}"
        );
    }
    let db = format!("{d}/db-2000");

    let stats = json(&kauri(&["db", "stats", "-H", &db, "--json"]));
    assert_eq!(stats["backend"], "lmdb");
    assert!(stats["records"].as_u64().unwrap() > 4000);

    let check = kauri(&["db", "check", "-H", &db, "--json"]);
    assert!(check.status.success());
    assert_eq!(json(&check)["clean"], true);

    let reindex = json(&kauri(&["db", "reindex", "-H", &db, "--json"]));
    assert_eq!(reindex["records"], stats["records"]);

    // Damage an index behind Kauri's back: the check fails with exit code 1, --fix repairs.
    {
        let kv = kauri_kv::lmdb::LmdbBackend::open(
            std::path::Path::new(&db),
            kauri_db::db::TABLES,
            kauri_kv::lmdb::LmdbOptions::default(),
        )
        .unwrap();
        use kauri_kv::{Backend, WriteTxn};
        let mut w = kv.write().unwrap();
        w.put(
            kauri_db::db::T_INDEX,
            &kauri_db::keys::presence_key(1, 999_999),
            &[],
        )
        .unwrap();
        w.commit().unwrap();
    }
    let broken = kauri(&["db", "check", "-H", &db, "--json"]);
    assert_eq!(broken.status.code(), Some(1));
    assert_eq!(json(&broken)["clean"], false);
    let fixed = kauri(&["db", "check", "-H", &db, "--fix", "--json"]);
    assert!(fixed.status.success());
    assert_eq!(json(&fixed)["fixed"], true);

    let missing = kauri(&["db", "stats", "-H", &format!("{d}/nothing-here")]);
    assert!(!missing.status.success());
    assert!(String::from_utf8_lossy(&missing.stderr).contains("no database"));
}
