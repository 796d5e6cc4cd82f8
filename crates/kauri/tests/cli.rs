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
    // The freelist's pages are counted (a benchmark's deletes and rewrites leave some).
    assert!(stats["free_pages"].is_u64(), "{stats}");

    let check = kauri(&["db", "check", "-H", &db, "--json"]);
    assert!(check.status.success());
    assert_eq!(json(&check)["clean"], true);

    let reindex = json(&kauri(&["db", "reindex", "-H", &db, "--json"]));
    assert_eq!(reindex["records"], stats["records"]);

    // Damage an index behind Kauri's back: the check fails with exit code 1, --fix repairs.
    {
        let kv = kauri_kv::lmdb::LmdbBackend::open_shaped(
            std::path::Path::new(&db),
            kauri_db::db::TABLE_SPECS,
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

/// Kills a server child when the test ends, even when it fails.
struct KillOnDrop(std::process::Child);

impl Drop for KillOnDrop {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// Reads the child's standard output until `stop` appears in a line; returns the lines.
fn read_until(child: &mut std::process::Child, stop: &str) -> Vec<String> {
    use std::io::BufRead;
    let out = child.stdout.as_mut().expect("piped stdout");
    let mut lines = Vec::new();
    for line in std::io::BufReader::new(out).lines() {
        let line = line.expect("read stdout");
        let done = line.contains(stop);
        lines.push(line);
        if done {
            break;
        }
    }
    lines
}

#[test]
fn demo_serves_what_it_prints_and_reuses_its_data() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("kauri-data");
    let data = data.to_str().unwrap();
    let start = || {
        Command::new(env!("CARGO_BIN_EXE_kauri"))
            .args([
                "demo",
                "--data",
                data,
                "--listen",
                "127.0.0.1:0",
                "--listen-tls",
                "127.0.0.1:0",
            ])
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::null())
            .spawn()
            .expect("start kauri demo")
    };
    let mut child = KillOnDrop(start());
    let lines = read_until(&mut child.0, "ldapwhoami");
    assert!(lines.iter().any(|l| l.contains("(created)")), "{lines:?}");
    // Run the printed commands exactly as a newcomer would paste them.
    for cmd in lines
        .iter()
        .filter(|l| l.trim_start().starts_with("ldapsearch") || l.contains("ldapwhoami"))
    {
        let o = Command::new("sh")
            .args(["-c", cmd.trim()])
            .output()
            .unwrap();
        assert!(
            o.status.success(),
            "{cmd}: {}",
            String::from_utf8_lossy(&o.stderr)
        );
        let text = String::from_utf8_lossy(&o.stdout);
        assert!(
            text.contains("CN=Aroha Ngata,OU=Demo,DC=samdom") || text.contains("cn=peercred"),
            "{cmd}: {text}"
        );
    }
    drop(child);
    let mut again = KillOnDrop(start());
    let lines = read_until(&mut again.0, "ldapwhoami");
    assert!(lines.iter().any(|l| l.contains("(reused)")), "{lines:?}");
    // The root DSE names the configuration and schema partitions.
    let url = lines
        .iter()
        .flat_map(|l| l.split_whitespace())
        .find(|w| w.starts_with("ldap://"))
        .expect("a printed ldap:// URL")
        .trim_matches('\'');
    let o = Command::new("ldapsearch")
        .args(["-x", "-LLL", "-H", url, "-b", "", "-s", "base"])
        .args(["configurationNamingContext", "schemaNamingContext"])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(
        text.contains("configurationNamingContext: CN=Configuration,DC=samdom")
            && text.contains("schemaNamingContext: CN=Schema,CN=Configuration,DC=samdom"),
        "{text}"
    );
    drop(again);
}

#[test]
fn serve_reads_its_configuration_file_and_flags_override_it() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    let config = dir.path().join("kauri.toml");
    // Find a free port for the flag, and put a different (unused) one in the file.
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    std::fs::write(
        &config,
        format!(
            "listen = \"127.0.0.1:1\"\nlisten_tls = \"\"\nmetrics_listen = \"\"\nanonymous_read = true\nadmin_dn = \"cn=root,dc=x\"\nadmin_password = \"pw\"\ndata = \"{}\"\n",
            dir.path().join("unused").display()
        ),
    )
    .unwrap();
    let child = Command::new(env!("CARGO_BIN_EXE_kauri"))
        .arg("serve")
        .arg("--config")
        .arg(&config)
        .arg("--data")
        .arg(&data)
        .args(["--listen", &format!("127.0.0.1:{port}")])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .map(KillOnDrop)
        .unwrap();
    let mut ok = false;
    for _ in 0..50 {
        let o = Command::new("ldapwhoami")
            .args([
                "-x",
                "-H",
                &format!("ldap://127.0.0.1:{port}"),
                "-D",
                "cn=root,dc=x",
                "-w",
                "pw",
            ])
            .output()
            .unwrap();
        if o.status.success() {
            assert!(String::from_utf8_lossy(&o.stdout).contains("dn:cn=root,dc=x"));
            ok = true;
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
    drop(child);
    assert!(
        ok,
        "the server did not answer on the port given by --listen"
    );
    assert!(
        data.join("db").join("data.mdb").exists(),
        "--data was not used"
    );
    assert!(
        !dir.path().join("unused").exists(),
        "the file's data folder was used"
    );

    let bad = dir.path().join("bad.toml");
    std::fs::write(&bad, "lisen = \"x\"\n").unwrap();
    let o = kauri(&["serve", "--config", bad.to_str().unwrap()]);
    assert!(!o.status.success());
    assert!(
        String::from_utf8_lossy(&o.stderr).contains("unknown field"),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
}

#[test]
fn a_provisioned_domain_passes_its_own_check_and_refuses_a_second_provision() {
    let dir = tempfile::tempdir().unwrap();
    let target = dir.path().join("corp");
    let target = target.to_str().unwrap();
    let provision = |pass: &str| {
        kauri(&[
            "domain",
            "provision",
            "--realm",
            "CORP.EXAMPLE.ORG",
            "--domain",
            "CORP",
            "--adminpass",
            pass,
            "--targetdir",
            target,
            "--json",
        ])
    };
    // A weak password is refused before anything is written.
    let weak = provision("short");
    assert!(!weak.status.success());
    assert!(!std::path::Path::new(target).exists());
    let made = provision("Corp.Passw0rd");
    assert!(
        made.status.success(),
        "{}",
        String::from_utf8_lossy(&made.stderr)
    );
    let report = json(&made);
    assert_eq!(report["domain_dn"], "DC=corp,DC=example,DC=org");
    assert!(report["entries"].as_u64().unwrap() > 400);
    // The data folder and its database both open with the domain's own schema: the
    // check finds nothing to repair, twice.
    for (command, path) in [
        ("db check", target.to_string()),
        ("db check", format!("{target}/db")),
        ("dbcheck", target.to_string()),
    ] {
        let mut args: Vec<&str> = command.split(' ').collect();
        args.extend(["-H", &path, "--json"]);
        let check = kauri(&args);
        assert!(
            check.status.success(),
            "{}",
            String::from_utf8_lossy(&check.stderr)
        );
        assert_eq!(json(&check)["clean"], true);
    }
    // Group statistics of the new domain: the well-known groups and their memberships.
    let stats = kauri(&["group", "stats", "-H", target, "--top", "3", "--json"]);
    assert!(
        stats.status.success(),
        "{}",
        String::from_utf8_lossy(&stats.stderr)
    );
    let stats = json(&stats);
    assert!(stats["groups"].as_u64().unwrap() >= 30, "{stats}");
    assert!(stats["memberships"].as_u64().unwrap() >= 10, "{stats}");
    assert_eq!(stats["largest"].as_array().unwrap().len(), 3);
    assert!(
        stats["by_type"]["global security"].as_u64().unwrap() >= 10,
        "{stats}"
    );
    assert!(
        stats["by_type"]["builtin local security"].as_u64().unwrap() >= 10,
        "{stats}"
    );
    let administrators = stats["largest"].as_array().unwrap().iter().any(|g| {
        g["dn"]
            .as_str()
            .unwrap()
            .starts_with("CN=Administrators,CN=Builtin")
    });
    assert!(administrators, "{stats}");
    // LDIF out of the domain: a subtree with its links as DNs and without secrets, the
    // matches of a filter, everything into a file (parents before children).
    let users = kauri(&[
        "ldif",
        "export",
        "-H",
        target,
        "--base",
        "CN=Users,DC=corp,DC=example,DC=org",
    ]);
    assert!(
        users.status.success(),
        "{}",
        String::from_utf8_lossy(&users.stderr)
    );
    let text = String::from_utf8_lossy(&users.stdout);
    assert!(
        text.starts_with("dn: CN=Users,DC=corp,DC=example,DC=org\n"),
        "{text}"
    );
    assert!(text.contains("dn: CN=Administrator,CN=Users,DC=corp,DC=example,DC=org\n"));
    assert!(text.contains("memberOf: CN=Domain Admins,CN=Users,DC=corp,DC=example,DC=org\n"));
    assert!(!text.lines().any(|l| l
        .to_ascii_lowercase()
        .starts_with("supplementalcredentials")));
    let one = kauri(&[
        "ldif",
        "export",
        "-H",
        target,
        "--filter",
        "(sAMAccountName=krbtgt)",
    ]);
    let text = String::from_utf8_lossy(&one.stdout);
    assert_eq!(
        text.lines().filter(|l| l.starts_with("dn: ")).count(),
        1,
        "{text}"
    );
    let file = dir.path().join("all.ldif");
    let all = kauri(&["ldif", "export", "-H", target, "-o", file.to_str().unwrap()]);
    assert!(
        all.status.success(),
        "{}",
        String::from_utf8_lossy(&all.stderr)
    );
    let text = std::fs::read_to_string(&file).unwrap();
    let dns: Vec<&str> = text
        .lines()
        .filter_map(|l| l.strip_prefix("dn: "))
        .collect();
    assert_eq!(dns.len() as u64, report["entries"].as_u64().unwrap());
    let position = |dn: &str| dns.iter().position(|d| *d == dn).unwrap();
    assert!(
        position("CN=Users,DC=corp,DC=example,DC=org")
            < position("CN=Administrator,CN=Users,DC=corp,DC=example,DC=org")
    );
    let again = provision("Corp.Passw0rd");
    assert!(!again.status.success());
    assert!(String::from_utf8_lossy(&again.stderr).contains("already holds a directory"));
}
