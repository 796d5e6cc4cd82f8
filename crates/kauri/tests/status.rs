//! `kauri status` against a running domain controller: read from its metrics endpoint and
//! over LDAP with the status extended operation (administrators only), with the same facts
//! either way, and the last backup it reports once one is taken.

mod common;

use std::path::Path;

use common::{fails, json, ok, provision, serve_with, whoami, Served, PASSWORD};
use serde_json::Value;

fn s(p: &Path) -> String {
    p.display().to_string()
}

/// A port of 127.0.0.1 nobody listens on now.
fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// The address a listener of `service` reports, if one does.
fn listener(facts: &Value, service: &str) -> Option<String> {
    facts["listeners"]
        .as_array()
        .unwrap()
        .iter()
        .find(|l| l["service"] == service)
        .map(|l| l["address"].as_str().unwrap().to_string())
}

/// `kauri status -H … --json` as `user`.
fn status_over_ldap(served: &Served, user: &str, password: &str) -> std::process::Output {
    common::kauri(&[
        "status",
        "--json",
        "-H",
        &served.ldap(),
        "-U",
        user,
        "-w",
        password,
        "--cacert",
        &s(&served.ca),
    ])
}

/// What both ways of asking must agree on.
fn check_facts(facts: &Value, served: &Served, metrics: &str) {
    assert_eq!(facts["version"], env!("CARGO_PKG_VERSION"), "{facts:#}");
    assert_eq!(facts["storage_format"], kauri_db::db::STORE_FORMAT);
    assert_eq!(
        listener(facts, "ldap").as_deref(),
        Some(served.addr.as_str())
    );
    assert_eq!(
        listener(facts, "ldaps").as_deref(),
        Some(served.tls_addr.as_str())
    );
    assert_eq!(listener(facts, "gc"), served.gc_addr);
    assert_eq!(listener(facts, "kerberos"), served.kdc_addr);
    assert_eq!(listener(facts, "kpasswd"), served.kpasswd_addr);
    assert_eq!(listener(facts, "dns"), served.dns_addr);
    assert_eq!(listener(facts, "metrics").as_deref(), Some(metrics));
    assert!(listener(facts, "cldap").is_some(), "{facts:#}");
    assert!(facts["highest_usn"].as_u64().unwrap() > 0, "{facts:#}");
    assert!(facts["uptime_seconds"].as_u64().unwrap() < 3600);
    assert!(facts["start_time"].as_str().unwrap().ends_with('Z'));
    let db = &facts["database"];
    let size = db["size_bytes"].as_u64().unwrap();
    assert!(size > 0, "{facts:#}");
    assert!(db["map_size_bytes"].as_u64().unwrap() >= size, "{facts:#}");
    assert!(db["free_pages"].is_u64(), "{facts:#}");
    assert!(facts["connections"]["total"].as_u64().unwrap() >= 1);
}

#[test]
fn status_reads_a_running_server_from_its_metrics_and_over_ldap() {
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
    let metrics = format!("127.0.0.1:{}", free_port());
    let config = dir.path().join("kauri.toml");
    std::fs::write(&config, format!("metrics_listen = \"{metrics}\"\n")).unwrap();
    let served = serve_with(&data, &["--config", &s(&config)]);

    // A few requests: a bind, a "who am I?" and an unbind each.
    for _ in 0..3 {
        whoami(&served.ldap(), "SAMDOM\\Administrator", PASSWORD).unwrap();
    }

    // From the metrics endpoint named in the configuration.
    let local = json(&ok(&["status", "--json", "--config", &s(&config)]));
    check_facts(&local, &served, &metrics);
    let requests = local["ldap_requests_last_minute"].as_u64().unwrap();
    assert!(requests >= 9, "{local:#}");
    let rate = local["operations_per_second"].as_f64().unwrap();
    assert_eq!(rate, (requests as f64 / 60.0 * 10.0).round() / 10.0);
    assert!(local["connections"]["total"].as_u64().unwrap() >= 3);
    assert_eq!(local["last_backup"], Value::Null, "{local:#}");

    // The same for people.
    let table = ok(&["status", "--metrics", &metrics]);
    for line in [
        format!(
            "version            {} (storage format {})",
            env!("CARGO_PKG_VERSION"),
            kauri_db::db::STORE_FORMAT
        ),
        format!("ldap      {}", served.addr),
        "last backup        never".to_string(),
    ] {
        assert!(table.contains(&line), "{line:?} missing from:\n{table}");
    }
    assert!(table.contains(" over the last minute ("), "{table}");

    // Over LDAP (StartTLS), as the Administrator: the same facts.
    let out = status_over_ldap(&served, "SAMDOM\\Administrator", PASSWORD);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let remote = json(&String::from_utf8_lossy(&out.stdout));
    check_facts(&remote, &served, &metrics);
    assert_eq!(remote["listeners"], local["listeners"]);
    assert_eq!(remote["start_time"], local["start_time"]);
    assert!(remote["ldap_requests_last_minute"].as_u64().unwrap() > requests);
    assert!(remote["highest_usn"].as_u64() >= local["highest_usn"].as_u64());

    // Anybody else is refused, as AD refuses: insufficientAccessRights.
    let out = status_over_ldap(&served, "SAMDOM\\kiri", "Koru.Passw0rd!");
    assert!(!out.status.success());
    let e = String::from_utf8_lossy(&out.stderr);
    assert!(e.contains("LDAP result 50"), "{e}");
    assert!(e.contains("INSUFF_ACCESS_RIGHTS"), "{e}");
    assert!(out.stdout.is_empty());

    // The root DSE announces the operation.
    assert!(common::supported_extensions(&served.ldap())
        .contains(kauri_ldap_proto::controls::KAURI_STATUS));

    // An online backup is the last backup from now on.
    let before = std::time::SystemTime::now();
    ok(&[
        "domain",
        "backup",
        "online",
        "--json",
        "--targetdir",
        &s(&dir.path().join("online")),
        "--server",
        &served.ldaps(),
        "-U",
        "SAMDOM\\Administrator",
        "-w",
        PASSWORD,
        "--cacert",
        &s(&served.ca),
    ]);
    let after = json(&ok(&["status", "--json", "--metrics", &metrics]));
    let when = after["last_backup"]
        .as_str()
        .unwrap_or_else(|| panic!("{after:#}"));
    let unix =
        |t: std::time::SystemTime| t.duration_since(std::time::UNIX_EPOCH).unwrap().as_secs();
    let recorded: u64 = std::fs::read_to_string(data.join("last-backup"))
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    assert!(recorded >= unix(before) && recorded <= unix(std::time::SystemTime::now()));
    assert!(
        when.ends_with('Z') && when.len() == "2025-01-01T00:00:00Z".len(),
        "{when}"
    );
    let table = ok(&["status", "--metrics", &metrics]);
    assert!(
        table.contains(&format!("last backup        {when}")),
        "{table}"
    );

    // An offline backup of the stopped server's folder counts as well, after a restart.
    let mut served = served;
    assert!(served.stop().success());
    std::fs::remove_file(data.join("last-backup")).unwrap();
    ok(&[
        "domain",
        "backup",
        "offline",
        "--json",
        "-H",
        &s(&data),
        "--targetdir",
        &s(&dir.path().join("offline")),
    ]);
    let served = serve_with(&data, &["--config", &s(&config)]);
    let restarted = json(&ok(&["status", "--json", "--metrics", &metrics]));
    assert_eq!(
        listener(&restarted, "ldap").as_deref(),
        Some(served.addr.as_str())
    );
    assert!(restarted["last_backup"].is_string(), "{restarted:#}");
}

#[test]
fn a_server_that_is_not_there_is_named() {
    let nobody = format!("127.0.0.1:{}", free_port());
    let e = fails(&["status", "--metrics", &nobody]);
    assert!(
        e.contains(&format!("cannot reach the metrics endpoint at {nobody}")),
        "{e}"
    );
    let url = format!("ldap://{nobody}");
    let e = fails(&[
        "status",
        "-H",
        &url,
        "-U",
        "SAMDOM\\Administrator",
        "-w",
        PASSWORD,
    ]);
    assert!(e.contains(&url), "{e}");
    // A configuration with the endpoint off says so.
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("kauri.toml");
    std::fs::write(&config, "metrics_listen = \"\"\n").unwrap();
    let e = fails(&["status", "--config", &s(&config)]);
    assert!(e.contains("metrics endpoint is off"), "{e}");
}
