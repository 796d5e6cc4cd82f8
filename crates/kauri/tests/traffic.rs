//! The traffic tools end to end with the `kauri` binary: the bundled capture summarized to
//! the bundled summary exactly, a model learned from it equal to the bundled one, replays
//! of the model and of a summary with writes against a real server (every operation
//! answered, the scratch OU gone afterwards), as the populated domain's users, and the runs
//! compared in a PNG and an HTML page.

mod common;

use std::path::{Path, PathBuf};

use common::{json, kauri, ok, provision, serve, PASSWORD};

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn bundled(name: &str) -> PathBuf {
    repo().join("examples/traffic").join(name)
}

fn replay_args(served: &common::Served, source: &Path, extra: &[&str]) -> Vec<String> {
    let port = |a: &Option<String>| {
        a.as_deref()
            .and_then(|a| a.rsplit(':').next())
            .expect("the service's address")
            .to_string()
    };
    let ldap_port = served.addr.rsplit(':').next().expect("a port").to_string();
    let mut args: Vec<String> = vec![
        "traffic".into(),
        "replay".into(),
        source.display().to_string(),
        "--server".into(),
        "127.0.0.1".into(),
        "--ldap-port".into(),
        ldap_port,
        "--kdc-port".into(),
        port(&served.kdc_addr),
        "--dns-port".into(),
        port(&served.dns_addr),
        "-U".into(),
        "SAMDOM\\Administrator".into(),
        "--bind-password".into(),
        PASSWORD.into(),
        "--cacert".into(),
        served.ca.display().to_string(),
        "--json".into(),
    ];
    args.extend(extra.iter().map(|s| s.to_string()));
    args
}

/// Operations of a run by `protocol:opcode`: (count, failed).
fn kinds(run: &serde_json::Value) -> Vec<(String, u64, u64)> {
    run["operations"]
        .as_array()
        .expect("operations")
        .iter()
        .map(|o| {
            (
                format!(
                    "{}:{}",
                    o["protocol"].as_str().unwrap_or_default(),
                    o["opcode"].as_str().unwrap_or_default()
                ),
                o["count"].as_u64().unwrap_or(0),
                o["failed"].as_u64().unwrap_or(0),
            )
        })
        .collect()
}

#[test]
fn a_summary_with_writes_replays_without_a_failure_and_cleans_up() {
    let dir = tempfile::tempdir().unwrap();
    let data = provision(dir.path(), "domain");
    let served = serve(&data);
    let summary = repo().join("crates/kauri/tests/data/traffic-writes.summary");
    let out_file = dir.path().join("writes.json");
    let csv = dir.path().join("writes.csv");
    let args = replay_args(
        &served,
        &summary,
        &[
            "--duration",
            "5s",
            "-o",
            out_file.to_str().unwrap(),
            "--csv",
            csv.to_str().unwrap(),
            "--label",
            "writes",
        ],
    );
    let run = json(&ok(&args));
    assert_eq!(run["failed"], 0, "{run:#}");
    let got = kinds(&run);
    for wanted in [
        "ldap:0",
        "ldap:3",
        "ldap:6",
        "ldap:8",
        "ldap:10",
        "ldap:12",
        "ldap:14",
        "ldap:23",
        "cldap:3",
        "dns:0",
        "kerberos:10",
        "kerberos:12",
    ] {
        let row = got.iter().find(|(k, _, _)| k == wanted);
        assert!(
            row.is_some_and(|(_, n, f)| *n > 0 && *f == 0),
            "{wanted} missing or failed: {got:?}"
        );
    }
    // Binds: one simple, one NTLM per recorded conversation… three conversations' worth.
    assert_eq!(got.iter().find(|k| k.0 == "ldap:0").map(|k| k.1), Some(6));
    let saved: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&out_file).unwrap()).unwrap();
    assert_eq!(saved["label"], "writes");
    assert_eq!(saved["successful"], run["successful"]);
    let csv_text = std::fs::read_to_string(&csv).unwrap();
    assert!(csv_text.starts_with("label,protocol,opcode"), "{csv_text}");
    assert!(csv_text.contains("writes,ldap,8,addRequest"), "{csv_text}");

    // The scratch OU and what conversations left in it are gone.
    let left = ok(&[
        "ldif",
        "export",
        "-H",
        data.to_str().unwrap(),
        "--base",
        "DC=samdom,DC=example,DC=com",
        "--filter",
        "(&(|(objectClass=organizationalUnit)(objectClass=contact))(!(isDeleted=TRUE)))",
    ]);
    assert!(
        !left.contains("kauri-replay-"),
        "the scratch OU was left behind:\n{left}"
    );
    // …as tombstones, like any deleted object.
    let gone = ok(&[
        "ldif",
        "export",
        "-H",
        data.to_str().unwrap(),
        "--filter",
        "(&(objectClass=organizationalUnit)(isDeleted=TRUE))",
    ]);
    assert!(gone.contains("kauri-replay-"), "{gone}");
}

#[test]
fn bad_inputs_are_refused_clearly() {
    let dir = tempfile::tempdir().unwrap();
    let junk = dir.path().join("junk.model");
    std::fs::write(&junk, "{\"version\": 1}").unwrap();
    let out = kauri(&[
        "traffic",
        "replay",
        junk.to_str().unwrap(),
        "--server",
        "127.0.0.1",
        "-U",
        "a",
        "-w",
        "b",
    ]);
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("version"), "{err}");
    let out = kauri(&["traffic", "replay", "/nonexistent", "--server", "x"]);
    assert!(!out.status.success());
    let out = kauri(&[
        "traffic",
        "replay",
        junk.to_str().unwrap(),
        "--server",
        "x",
        "--duration",
        "soon",
    ]);
    assert!(!out.status.success());
}

#[test]
fn the_bundled_sample_summarizes_learns_replays_and_charts() {
    let dir = tempfile::tempdir().unwrap();
    let summary = dir.path().join("demo.summary");
    let model = dir.path().join("demo.model");
    ok(&[
        "traffic".as_ref(),
        "summarize".as_ref(),
        bundled("demo.pcapng").as_os_str(),
        "-o".as_ref(),
        summary.as_os_str(),
    ]);
    assert_eq!(
        std::fs::read_to_string(&summary).unwrap(),
        std::fs::read_to_string(bundled("demo.summary")).unwrap()
    );
    ok(&[
        "traffic".as_ref(),
        "learn".as_ref(),
        summary.as_os_str(),
        "-o".as_ref(),
        model.as_os_str(),
    ]);
    assert_eq!(
        std::fs::read_to_string(&model).unwrap(),
        std::fs::read_to_string(bundled("demo.model")).unwrap()
    );

    let data = provision(dir.path(), "domain");
    let served = serve(&data);
    let mut runs = Vec::new();
    for (rate, label) in [("100", "kauri 100/s"), ("300", "kauri 300/s")] {
        let out = dir.path().join(format!("run-{rate}.json"));
        let args = replay_args(
            &served,
            &model,
            &[
                "--duration",
                "3s",
                "--target-ops",
                rate,
                "--label",
                label,
                "-o",
                out.to_str().unwrap(),
            ],
        );
        let run = json(&ok(&args));
        assert_eq!(run["failed"], 0, "{run:#}");
        assert!(run["successful"].as_u64().unwrap() > 0, "{run:#}");
        assert_eq!(run["client_bound"], false, "{run:#}");
        let got = kinds(&run);
        assert!(got.iter().any(|k| k.0 == "ldap:3"), "{got:?}");
        runs.push(out);
    }
    // The recorded summary as it was: Kerberos exchanges, a Kerberos (GSSAPI) bind and an
    // NTLM one, simple binds, searches, CLDAP and DNS, every one answered.
    let args = replay_args(&served, &bundled("demo.summary"), &["--duration", "3s"]);
    let run = json(&ok(&args));
    assert_eq!(run["failed"], 0, "{run:#}");
    let got = kinds(&run);
    for wanted in [
        "kerberos:10",
        "kerberos:14",
        "ldap:0",
        "ldap:3",
        "cldap:3",
        "dns:0",
    ] {
        assert!(
            got.iter().any(|k| k.0 == wanted && k.1 > 0),
            "{wanted}: {got:?}"
        );
    }

    let png = dir.path().join("report.png");
    let html = dir.path().join("report.html");
    let table = ok(&[
        "traffic".as_ref(),
        "report".as_ref(),
        runs[0].as_os_str(),
        runs[1].as_os_str(),
        "-o".as_ref(),
        png.as_os_str(),
        "--html".as_ref(),
        html.as_os_str(),
    ]);
    assert!(
        table.contains("kauri 100/s") && table.contains("searchRequest"),
        "{table}"
    );
    let bytes = std::fs::read(&png).unwrap();
    assert_eq!(&bytes[..8], b"\x89PNG\r\n\x1a\n");
    let page = std::fs::read_to_string(&html).unwrap();
    assert!(
        page.contains("kauri 300/s") && page.contains("<svg"),
        "{page}"
    );
}
