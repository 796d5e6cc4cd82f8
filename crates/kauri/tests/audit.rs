//! The audit log end to end: events written by the real writer into real files, read back
//! by the `kauri audit` command with its filters, followed as they are appended (across a
//! rotation), drops recorded in the log itself, and `kauri bench audit`.

use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::time::Duration;

use kauri_audit::{AuditConfig, AuditEvent, Auditor, Category, Outcome, Timestamp};

fn kauri(args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_kauri"))
        .args(args)
        .output()
        .expect("run kauri")
}

fn ok(out: &std::process::Output) -> String {
    assert!(
        out.status.success(),
        "kauri failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout.clone()).unwrap()
}

/// The events of a `--json` run.
fn events(out: &std::process::Output) -> Vec<AuditEvent> {
    ok(out)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l}")))
        .collect()
}

fn users(evs: &[AuditEvent]) -> Vec<String> {
    evs.iter()
        .map(|e| e.user.clone().unwrap_or_default())
        .collect()
}

const SALES: &str = "OU=Sales,DC=samdom,DC=example,DC=com";

/// Writes a small day of events into `<data>/audit/audit.log` through the real writer.
fn write_sample(data: &Path) {
    let a = Auditor::start(&AuditConfig::default(), data).unwrap();
    let old = Timestamp::parse_rfc3339("2020-01-01T12:00:00Z").unwrap();
    a.log(
        AuditEvent::logon(Outcome::Success)
            .with_time(old)
            .with_service("ldap")
            .with_user("old-timer"),
    );
    a.log(
        AuditEvent::logon(Outcome::Success)
            .with_service("ldaps")
            .with_remote("192.0.2.10:50000")
            .with_user("CN=alice,CN=Users,DC=samdom,DC=example,DC=com")
            .with_user_sid("S-1-5-21-1-2-3-1104")
            .with_mechanism("simple"),
    );
    a.log(
        AuditEvent::logon(Outcome::Failure)
            .with_service("ldap")
            .with_remote("198.51.100.7:41000")
            .with_user("SAMDOM\\bob")
            .with_mechanism("GSS-SPNEGO/NTLM")
            .with_result_code(49)
            .with_reason("data 52e"),
    );
    a.log(
        AuditEvent::change("modify", Outcome::Success)
            .with_service("ldap")
            .with_user("alice")
            .with_dn(format!("CN=Carol Jones,{SALES}"))
            .with_attributes(["description", "mail"])
            .with_usn(101),
    );
    a.log(
        AuditEvent::new(Category::Group, "member_add", Outcome::Success)
            .with_event_id(
                kauri_audit::group_event_id(-2_147_483_646, kauri_audit::GroupOp::MemberAdded)
                    .unwrap(),
            )
            .with_service("ldap")
            .with_user("admin")
            .with_dn("CN=Domain Admins,CN=Users,DC=samdom,DC=example,DC=com")
            .with_member(format!("CN=Carol Jones,{SALES}")),
    );
    a.log(
        AuditEvent::change("delete", Outcome::Success)
            .with_service("ldap")
            .with_user("admin")
            .with_dn("CN=Dave,OU=Salesforce,DC=samdom,DC=example,DC=com"),
    );
    a.flush();
}

#[test]
fn written_events_are_read_back_and_filtered() {
    let tmp = tempfile::tempdir().unwrap();
    let data = tmp.path().join("data");
    write_sample(&data);
    let d = data.to_str().unwrap();

    // --json prints the lines exactly as stored.
    let stored = std::fs::read_to_string(data.join("audit/audit.log")).unwrap();
    assert_eq!(ok(&kauri(&["audit", "-H", d, "--json"])), stored);
    assert_eq!(stored.lines().count(), 6);

    // The human form: one line each, with the event's short title, who, what, where.
    let human = ok(&kauri(&["audit", "-H", d]));
    let lines: Vec<&str> = human.lines().collect();
    assert_eq!(lines.len(), 6, "{human}");
    assert!(
        lines[0].starts_with("2020-01-01T12:00:00.000000Z 4624 logon"),
        "{}",
        lines[0]
    );
    assert!(lines[2].contains("4625 logon failed") && lines[2].contains("failure"));
    assert!(
        lines[2].contains("from=198.51.100.7:41000") && lines[2].contains("reason=\"data 52e\"")
    );
    assert!(lines[3].contains("5136 object modified"), "{}", lines[3]);
    assert!(lines[3].contains("attrs=description,mail"));
    assert!(lines[3].contains("dn=\"CN=Carol Jones,OU=Sales,"));
    assert!(
        lines[4].contains("4728 global group member added"),
        "{}",
        lines[4]
    );

    let q = |extra: &[&str]| {
        let mut args = vec!["audit", "-H", d, "--json"];
        args.extend_from_slice(extra);
        users(&events(&kauri(&args)))
    };
    // By user: a DN's name, DOMAIN\name, a SID.
    assert_eq!(
        q(&["--user", "alice"]),
        ["CN=alice,CN=Users,DC=samdom,DC=example,DC=com", "alice"]
    );
    assert_eq!(q(&["--user", "bob"]), ["SAMDOM\\bob"]);
    assert_eq!(
        q(&["--user", "S-1-5-21-1-2-3-1104"]),
        ["CN=alice,CN=Users,DC=samdom,DC=example,DC=com"]
    );
    // By DN: the subtree, case-insensitively, not OU=Salesforce.
    assert_eq!(
        q(&["--dn", "ou=sales,dc=samdom,dc=example,dc=com"]),
        ["alice"]
    );
    // By event id, category, outcome.
    assert_eq!(
        q(&["--event", "4728", "--event", "4625"]),
        ["SAMDOM\\bob", "admin"]
    );
    assert_eq!(q(&["--category", "change"]), ["alice", "admin"]);
    assert_eq!(q(&["--failures"]), ["SAMDOM\\bob"]);
    // By time: absolute, relative, a date.
    assert_eq!(q(&["--until", "2021-01-01"]), ["old-timer"]);
    assert_eq!(
        q(&[
            "--since",
            "2020-01-01T12:00:00Z",
            "--until",
            "2020-01-01T12:00:01Z"
        ]),
        ["old-timer"]
    );
    assert_eq!(q(&["--since", "1h"]).len(), 5);
    assert_eq!(
        q(&["--since", "2021-01-01", "--category", "authentication"]).len(),
        2
    );
    // The last N.
    assert_eq!(q(&["--limit", "2"]), ["admin", "admin"]);
    // The log given by folder or by file.
    let dir = data.join("audit");
    let by_dir = kauri(&["audit", "--log", dir.to_str().unwrap(), "--json"]);
    assert_eq!(ok(&by_dir), stored);
    let file = dir.join("audit.log");
    let by_file = kauri(&["audit", "--log", file.to_str().unwrap(), "--json"]);
    assert_eq!(ok(&by_file), stored);

    // Bad input is an error with a reason.
    let bad = kauri(&["audit", "-H", d, "--since", "yesterday"]);
    assert!(!bad.status.success());
    assert!(String::from_utf8_lossy(&bad.stderr).contains("not a time"));
    let missing = kauri(&["audit", "-H", tmp.path().join("nope").to_str().unwrap()]);
    assert!(!missing.status.success());
    assert!(String::from_utf8_lossy(&missing.stderr).contains("audit log"));
}

#[test]
fn rotation_keeps_keep_files_and_reads_in_order() {
    let tmp = tempfile::tempdir().unwrap();
    let cfg = AuditConfig {
        max_file_bytes: 4_096,
        keep_files: 4,
        ..AuditConfig::default()
    };
    let a = Auditor::start(&cfg, tmp.path()).unwrap();
    for i in 0..1_000u64 {
        a.log(
            AuditEvent::change("modify", Outcome::Success)
                .with_user("admin")
                .with_dn(format!("CN=u{i},{SALES}"))
                .with_usn(i),
        );
        if i % 100 == 0 {
            a.flush();
        }
    }
    a.flush();
    let dir = tmp.path().join("audit");
    let mut names: Vec<String> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    assert_eq!(names.len(), 5, "{names:?}");
    assert!(names.contains(&"audit.log".to_string()));
    for n in &names {
        let len = std::fs::metadata(dir.join(n)).unwrap().len();
        assert!(len < 4_096 + 512, "{n}: {len}");
    }
    let evs = events(&kauri(&["audit", "--log", dir.to_str().unwrap(), "--json"]));
    let usns: Vec<u64> = evs.iter().map(|e| e.usn.unwrap()).collect();
    assert_eq!(*usns.last().unwrap(), 999);
    assert!(usns.windows(2).all(|w| w[1] == w[0] + 1), "{usns:?}");
    assert!(usns.len() > 30 && usns.len() < 1_000);
}

#[test]
fn drops_are_counted_and_reported_in_the_log() {
    let tmp = tempfile::tempdir().unwrap();
    let cfg = AuditConfig {
        buffer_events: 4,
        ..AuditConfig::default()
    };
    let a = Auditor::start(&cfg, tmp.path()).unwrap();
    let sent = 100_000u64;
    for i in 0..sent {
        a.log(
            AuditEvent::logon(Outcome::Success)
                .with_user(format!("user{i}"))
                .with_remote("192.0.2.1:1000"),
        );
    }
    a.flush();
    let s = a.stats();
    assert!(s.dropped > 0, "nothing dropped: {s:?}");
    assert_eq!(s.written + s.dropped, sent);

    let d = tmp.path().to_str().unwrap();
    let reports = events(&kauri(&["audit", "-H", d, "--category", "audit", "--json"]));
    assert!(!reports.is_empty());
    assert!(reports
        .iter()
        .all(|e| e.action == "dropped" && e.outcome == Outcome::Failure));
    assert_eq!(
        reports.iter().map(|e| e.dropped.unwrap()).sum::<u64>(),
        s.dropped
    );
    let logons = events(&kauri(&["audit", "-H", d, "--event", "4624", "--json"]));
    assert_eq!(logons.len() as u64, s.written);
    let human = ok(&kauri(&["audit", "-H", d, "--category", "audit"]));
    assert!(
        human.contains("audit/dropped") && human.contains("dropped="),
        "{human}"
    );
}

#[test]
fn configured_selection_decides_what_is_written() {
    let tmp = tempfile::tempdir().unwrap();
    let cfg: AuditConfig =
        serde_json::from_str(r#"{"events": ["authentication", "!4625"]}"#).unwrap();
    assert!(!cfg.journal, "the journal is off unless asked for");
    let a = Auditor::start(&cfg, tmp.path()).unwrap();
    a.log(AuditEvent::logon(Outcome::Success).with_user("in"));
    a.log(AuditEvent::logon(Outcome::Failure).with_user("out"));
    a.log(AuditEvent::change("add", Outcome::Success).with_user("out"));
    a.log(
        AuditEvent::new(Category::Authentication, "tgt", Outcome::Success)
            .with_event_id(4768)
            .with_user("in too"),
    );
    a.flush();
    let d = tmp.path().to_str().unwrap();
    assert_eq!(
        users(&events(&kauri(&["audit", "-H", d, "--json"]))),
        ["in", "in too"]
    );
}

/// Lines of a child's stdout, as they come.
fn lines_of(child: &mut std::process::Child) -> mpsc::Receiver<String> {
    let out = child.stdout.take().unwrap();
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(out).lines() {
            let Ok(line) = line else { break };
            if tx.send(line).is_err() {
                break;
            }
        }
    });
    rx
}

#[test]
fn follow_sees_events_appended_after_it_started_and_across_rotation() {
    let tmp = tempfile::tempdir().unwrap();
    let cfg = AuditConfig {
        max_file_bytes: 2_000,
        ..AuditConfig::default()
    };
    let a = Auditor::start(&cfg, tmp.path()).unwrap();
    a.log(AuditEvent::logon(Outcome::Success).with_user("before"));
    a.flush();

    let mut child = Command::new(env!("CARGO_BIN_EXE_kauri"))
        .args([
            "audit",
            "-H",
            tmp.path().to_str().unwrap(),
            "--follow",
            "--json",
        ])
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("run kauri audit --follow");
    let rx = lines_of(&mut child);
    let next = |what: &str| -> AuditEvent {
        let line = rx
            .recv_timeout(Duration::from_secs(30))
            .unwrap_or_else(|_| panic!("no line for {what} within 30 s"));
        serde_json::from_str(&line).unwrap()
    };
    assert_eq!(next("history").user.as_deref(), Some("before"));

    a.log(AuditEvent::logon(Outcome::Failure).with_user("after"));
    a.flush();
    assert_eq!(next("an appended event").user.as_deref(), Some("after"));

    // Enough events to rotate the file a few times; every one arrives, in order.
    for i in 0..40u64 {
        a.log(
            AuditEvent::change("modify", Outcome::Success)
                .with_user(format!("r{i}"))
                .with_usn(i),
        );
        a.flush();
        std::thread::sleep(Duration::from_millis(20));
    }
    let rotated = std::fs::read_dir(tmp.path().join("audit")).unwrap().count() - 1;
    assert!(rotated >= 2, "the file did not rotate");
    for i in 0..40u64 {
        assert_eq!(next("an event across rotation").usn, Some(i));
    }
    let _ = child.kill();
    let _ = child.wait();
}

#[test]
fn bench_audit_reports_throughput() {
    let out = kauri(&["bench", "audit", "--events", "20000", "--json"]);
    let v: serde_json::Value = serde_json::from_str(&ok(&out)).unwrap();
    let runs: Vec<&str> = v
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["run"].as_str().unwrap())
        .collect();
    assert_eq!(runs, ["flood", "paced"]);
    for r in v.as_array().unwrap() {
        let n = |k: &str| r[k].as_f64().unwrap_or_else(|| panic!("no {k}: {r}"));
        assert_eq!(n("events"), 20_000.0);
        assert_eq!(n("written") + n("dropped"), 20_000.0);
        assert_eq!(n("buffer_events"), 65_536.0);
        assert!(n("events_per_sec") > 0.0 && n("mb_per_sec") > 0.0);
    }
    // Paced, nothing is dropped.
    assert_eq!(v[1]["dropped"].as_u64(), Some(0));
    let table = ok(&kauri(&["bench", "audit", "--events", "1000"]));
    assert!(
        table.starts_with("| run | events | written | dropped | events/s | MB/s"),
        "{table}"
    );
}
