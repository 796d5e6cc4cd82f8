//! `kauri bench ldap` end to end on a small directory: every workload is reported at every
//! connection count with no failed operation, and the slapd LDIF holds the same entries.

use std::process::Command;

fn kauri(args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_kauri"))
        .args(args)
        .output()
        .expect("run kauri")
}

#[test]
fn small_ldap_bench_reports_every_workload() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path().to_str().unwrap();
    let out = kauri(&[
        "bench",
        "ldap",
        "--users",
        "2000",
        "--seconds",
        "0.5",
        "--connections",
        "1,2",
        "--against",
        "kauri",
        "--dir",
        d,
        "--json",
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let reports = v.as_array().unwrap();
    assert_eq!(reports.len(), 1);
    let r = &reports[0];
    assert_eq!(r["server"], "kauri");
    let records = r["records"].as_u64().unwrap();
    assert!(records > 2000);
    let rows = r["rows"].as_array().unwrap();
    for workload in [
        "equality search",
        "simple bind",
        "modify (replace description)",
        "add + delete",
    ] {
        for conns in [1, 2] {
            let row = rows
                .iter()
                .find(|x| x["workload"] == workload && x["connections"] == conns)
                .unwrap_or_else(|| panic!("no row for {workload} x{conns}"));
            assert!(row["ops"].as_u64().unwrap() > 0, "{row}");
            assert!(row["ops_per_sec"].as_f64().unwrap() > 0.0, "{row}");
            assert!(row["p95_us"].as_f64().unwrap() <= row["max_us"].as_f64().unwrap());
        }
    }
    let sweeps = r["sweeps"].as_array().unwrap();
    assert_eq!(sweeps.len(), 2);
    for s in sweeps {
        assert_eq!(s["entries"].as_u64().unwrap(), records);
    }
    // The database folder is removed afterwards.
    assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
}

#[test]
fn ldif_holds_the_users_only_directory() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("data.ldif");
    let out = kauri(&[
        "bench",
        "ldap",
        "--users",
        "2000",
        "--write-ldif",
        file.to_str().unwrap(),
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = std::fs::read_to_string(&file).unwrap();
    assert_eq!(text.matches("\ndn: ").count() + 1, 2032);
    assert_eq!(text.matches("objectClass: inetOrgPerson\n").count(), 2000);
    assert!(text.contains("\nuid: user001999\n"));
    assert!(text.contains("\nuserPassword: {SSHA512}"));
    assert!(!text.contains("group"));
}
