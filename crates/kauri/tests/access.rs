//! Access control as clients meet it: a provisioned domain served by the `kauri` binary,
//! and python ldap3 (through `tests/access_matrix.py`) acting as anonymous, an ordinary
//! user, the user on itself, a helpdesk member delegated password resets on one OU, an
//! account operator and a Domain Admin — each allowed and refused case checked with AD's
//! result codes, attribute visibility (confidential attributes, filters on them) and
//! objects hidden by a parent that does not grant list contents — and the audit log the
//! server wrote meanwhile, parsed as JSON: each logon, refusal and change with its event id.

mod common;

use std::path::Path;
use std::process::Command;

use common::{provision, serve_with, PASSWORD};

#[test]
fn the_access_matrix_holds_for_every_kind_of_caller() {
    let dir = tempfile::tempdir().unwrap();
    let data = provision(dir.path(), "domain");
    // The script sets passwords over plain LDAP, as Samba's tests do.
    let conf = dir.path().join("kauri.toml");
    std::fs::write(&conf, "plain_ldap_passwords = true\n").unwrap();
    let served = serve_with(&data, &["--config", conf.to_str().unwrap()]);
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/access_matrix.py");
    let out = Command::new("python3")
        .arg(&script)
        .args([&served.addr, "DC=samdom,DC=example,DC=com", PASSWORD])
        .output()
        .expect("run python3 (python3-ldap3, python3-samba)");
    assert!(
        out.status.success(),
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );

    // Every operation of the matrix is in the audit log, refusals included, with
    // Windows' event ids.
    let log = data.join("audit").join("audit.log");
    let wanted: Vec<(u32, &str, &str, &str)> = vec![
        // (event id, outcome, a piece of the user, a piece of the target DN)
        (4624, "success", "CN=alice", ""),
        (4625, "failure", "CN=alice", ""),
        (4627, "success", "CN=carol", ""),
        (4720, "success", "CN=dave", "CN=dave1"),
        (4726, "success", "CN=dave", "CN=dave1"),
        (4724, "success", "CN=carol", "CN=frank"),
        (4724, "failure", "CN=carol", "CN=bob"),
        (4723, "success", "CN=alice", "CN=alice"),
        (4732, "success", "CN=Administrator", "CN=Account Operators"),
        (4728, "success", "CN=Administrator", "CN=Domain Admins"),
        (4738, "success", "CN=alice", "CN=alice"),
        (5136, "failure", "CN=alice", "CN=bob"),
        (5137, "failure", "CN=alice", "CN=alice2"),
        (5137, "success", "CN=Administrator", "OU=Branch"),
    ];
    let mut events: Vec<serde_json::Value> = Vec::new();
    for _ in 0..50 {
        events = std::fs::read_to_string(&log)
            .unwrap_or_default()
            .lines()
            .map(|l| serde_json::from_str(l).expect("every audit line is JSON"))
            .collect();
        let found = |w: &(u32, &str, &str, &str)| {
            events.iter().any(|e| {
                e["event_id"] == w.0
                    && e["outcome"] == w.1
                    && e["user"].as_str().is_some_and(|u| u.contains(w.2))
                    && (w.3.is_empty() || e["dn"].as_str().is_some_and(|d| d.contains(w.3)))
            })
        };
        if wanted.iter().all(found) {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
    for w in &wanted {
        let hit = events.iter().find(|e| {
            e["event_id"] == w.0
                && e["outcome"] == w.1
                && e["user"].as_str().is_some_and(|u| u.contains(w.2))
                && (w.3.is_empty() || e["dn"].as_str().is_some_and(|d| d.contains(w.3)))
        });
        assert!(
            hit.is_some(),
            "no audit event {w:?} among {} events",
            events.len()
        );
    }
    // A refused write names the attribute (never a value) and AD's result code.
    let refused = events
        .iter()
        .find(|e| {
            e["event_id"] == 5136
                && e["outcome"] == "failure"
                && e["dn"].as_str().is_some_and(|d| d.contains("CN=bob"))
        })
        .unwrap();
    assert_eq!(refused["result_code"], 50);
    assert_eq!(refused["attributes"][0], "description");
    assert!(!events
        .iter()
        .any(|e| e.to_string().contains("Matrix-Pass.1")));
}
