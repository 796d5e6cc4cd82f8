//! `kauri bench domain` end to end at a tiny size: every section is reported, every count
//! is the one the run asked for, and the data folder is removed afterwards.

use std::process::Command;

#[test]
fn tiny_domain_bench_reports_every_section() {
    let dir = tempfile::tempdir().unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_kauri"))
        .args([
            "bench",
            "domain",
            "--quick",
            "--json",
            "--users",
            "60",
            "--concurrency",
            "3",
            "--attributes",
            "20",
            "--classes",
            "4",
            "--group-size",
            "200",
            "--window",
            "10",
            "--samples",
            "10",
            "--dir",
        ])
        .arg(dir.path())
        .output()
        .expect("run kauri");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let reports = v.as_array().unwrap();
    assert_eq!(reports.len(), 1);
    let r = &reports[0];
    assert_eq!(r["realm"], "SAMDOM.EXAMPLE.COM");

    let p = &r["provisioning"];
    assert!(p["entries"].as_u64().unwrap() > p["schema_objects"].as_u64().unwrap());
    assert!(p["schema_objects"].as_u64().unwrap() > 0);

    let x = &r["schema_extension"];
    assert_eq!(x["attributes"], 20);
    assert_eq!(x["classes"], 4);
    assert_eq!(x["attribute_add"]["samples"], 20);
    assert_eq!(x["class_add"]["samples"], 4);

    // Users 0..60 join 1, 2, 3, 4 groups in turn: 15 × 10 memberships.
    let runs = r["user_runs"].as_array().unwrap();
    assert_eq!(runs.len(), 2);
    for (run, conns) in runs.iter().zip([1, 3]) {
        assert_eq!(run["connections"], conns);
        assert_eq!(run["users"], 60);
        assert_eq!(run["groups"], 40);
        assert_eq!(run["memberships"], 150);
        assert_eq!(run["user_add"]["samples"], 60);
        assert_eq!(run["member_add"]["samples"], 150);
    }

    // The member, then windows of 10 at 2, 20 and 200 members: 209 added, 120 of them
    // users of the two runs and 89 fillers.
    let g = &r["growth"];
    assert_eq!(g["members"], 210);
    assert_eq!(g["filler_users"], 89);
    let windows: Vec<u64> = g["windows"]
        .as_array()
        .unwrap()
        .iter()
        .map(|w| {
            assert_eq!(w["member_add"]["samples"], 10);
            w["members_before"].as_u64().unwrap()
        })
        .collect();
    assert_eq!(windows, [2, 20, 200]);

    let l = &r["lookups"];
    for k in [
        "bind_member",
        "bind_no_groups",
        "token_groups",
        "in_chain_groups",
    ] {
        assert_eq!(l[k]["latency"]["samples"], 10, "{k}");
        let lat = &l[k]["latency"];
        assert!(lat["median_us"].as_f64().unwrap() <= lat["p99_us"].as_f64().unwrap());
    }
    assert_eq!(l["in_chain_groups"]["results"], 11);
    assert!(l["token_groups"]["results"].as_u64().unwrap() > 11);
    assert_eq!(l["in_chain_members"]["results"], 210);
    assert_eq!(l["in_chain_members"]["latency"]["samples"], 3);

    assert!(r["records"].as_u64().unwrap() > 2_000);
    assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
}
