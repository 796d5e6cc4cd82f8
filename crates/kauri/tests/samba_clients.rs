//! Samba's own tools against a domain provisioned and served by the `kauri` binary, run
//! unmodified with a simple bind: smbtorture's LDAP tests from Debian's samba-testsuite
//! (the schema read through paged searches of the Schema NC, server-side sort, a search
//! nested inside another on one connection, modifies of every naming context's head), and
//! `samba-tool` managing users, groups and computers over `ldap://`.

use std::io::BufRead;
use std::process::{Command, Stdio};

const ADMIN: &str = "CN=Administrator,CN=Users,DC=samdom,DC=example,DC=com";
const PASSWORD: &str = "Torture.Passw0rd";
const TESTS: [&str; 4] = [
    "ldap.schema",
    "ldap.sort",
    "ldap.nested-search",
    "ldap.uptodatevector",
];

/// Kills the server when the test ends, even when it fails.
struct KillOnDrop(std::process::Child);

impl Drop for KillOnDrop {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// A provisioned domain served on free ports: its folder, the server, and the `host:port`
/// of plain LDAP and of LDAPS.
fn serve_domain() -> (tempfile::TempDir, KillOnDrop, String, String) {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("domain");
    let provision = Command::new(env!("CARGO_BIN_EXE_kauri"))
        .args(["domain", "provision", "--realm", "SAMDOM.EXAMPLE.COM"])
        .args(["--domain", "SAMDOM", "--adminpass", PASSWORD, "--json"])
        .arg("--targetdir")
        .arg(&data)
        .output()
        .unwrap();
    assert!(
        provision.status.success(),
        "{}",
        String::from_utf8_lossy(&provision.stderr)
    );
    let mut server = KillOnDrop(
        Command::new(env!("CARGO_BIN_EXE_kauri"))
            .arg("serve")
            .arg("--data")
            .arg(&data)
            .args(["--listen", "127.0.0.1:0", "--listen-tls", "127.0.0.1:0"])
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap(),
    );
    let stderr = server.0.stderr.take().unwrap();
    let mut lines = std::io::BufReader::new(stderr)
        .lines()
        .map_while(Result::ok);
    let addr = lines
        .by_ref()
        .find_map(|l| l.strip_prefix("kauri: serving ldap://").map(str::to_string))
        .expect("the server's address");
    let tls_addr = lines
        .by_ref()
        .find_map(|l| {
            l.strip_prefix("kauri: serving ldaps://")
                .map(str::to_string)
        })
        .expect("the server's LDAPS address");
    // Keep draining what the server logs, so it never writes into a closed pipe.
    std::thread::spawn(move || lines.for_each(drop));
    let conf = dir.path().join("client.conf");
    // The server's own authority vouches for it; the certificate names localhost.
    let ca = data.join("tls").join("ca.pem");
    std::fs::write(
        &conf,
        format!(
            "[global]\n\tworkgroup = SAMDOM\n\trealm = SAMDOM.EXAMPLE.COM\n\ttls cafile = {}\n\ttls verify peer = ca_only\n",
            ca.display()
        ),
    )
    .unwrap();
    (dir, server, addr, tls_addr)
}

#[test]
fn smbtorture_ldap_tests_pass_against_a_provisioned_domain() {
    let (dir, _server, addr, _) = serve_domain();
    let conf = dir.path().join("client.conf");
    let o = Command::new("smbtorture")
        .arg(format!("//{addr}/_none_"))
        .arg("-s")
        .arg(&conf)
        .arg(format!("--simple-bind-dn={ADMIN}"))
        .arg(format!("--password={PASSWORD}"))
        .arg("--maximum-runtime=120")
        .args(TESTS)
        .output()
        .unwrap_or_else(|e| panic!("cannot run smbtorture (install samba-testsuite): {e}"));
    let out = String::from_utf8_lossy(&o.stdout);
    let report = || format!("{out}{}", String::from_utf8_lossy(&o.stderr));
    assert!(o.status.success(), "{}", report());
    // smbtorture's exit code alone is not proof (ldap.schema reports success even when it
    // cannot bind): every test must say success, and the schema must have been read.
    for t in TESTS {
        let name = t.trim_start_matches("ldap.");
        assert!(
            out.lines().any(|l| l == format!("success: {name}")),
            "{t}: {}",
            report()
        );
    }
    for filter in ["attributeSchema", "classSchema"] {
        let count = out
            .lines()
            .find_map(|l| {
                l.strip_prefix(&format!("filter[(objectClass={filter})] count["))
                    .and_then(|r| r.trim_end_matches(']').parse::<usize>().ok())
            })
            .unwrap_or(0);
        assert!(count > 100, "{filter}: {count} read\n{}", report());
    }
}

#[test]
fn samba_tool_manages_the_domain_over_ldap() {
    let (dir, _server, addr, tls_addr) = serve_domain();
    let conf = dir.path().join("client.conf");
    let tool_at = |url: &str, args: &[&str]| {
        let o = Command::new("samba-tool")
            .args(args)
            .arg("-H")
            .arg(url)
            .arg("-s")
            .arg(&conf)
            .arg(format!("--simple-bind-dn={ADMIN}"))
            .arg(format!("--password={PASSWORD}"))
            .output()
            .unwrap_or_else(|e| panic!("cannot run samba-tool (install samba-common-bin): {e}"));
        let text = String::from_utf8_lossy(&o.stdout).to_string();
        assert!(
            o.status.success(),
            "samba-tool {args:?}: {text}{}",
            String::from_utf8_lossy(&o.stderr)
        );
        text
    };
    let plain = format!("ldap://{addr}");
    let tool = |args: &[&str]| tool_at(&plain, args);
    let users = tool(&["user", "list"]);
    assert!(users.lines().any(|l| l == "Administrator"), "{users}");
    assert!(tool(&["group", "listmembers", "Domain Admins"])
        .lines()
        .any(|l| l == "Administrator"));
    let shown = tool(&["user", "show", "Administrator"]);
    assert!(shown.contains("objectSid: S-1-5-21-"), "{shown}");
    assert!(tool(&["domain", "level", "show"]).contains("Domain function level"));
    // Groups, computers and OUs, created through the well-known containers.
    tool(&["group", "add", "Sales"]);
    tool(&["computer", "create", "ws01"]);
    tool(&["ou", "create", "OU=Branch"]);
    assert!(tool(&["group", "list"]).lines().any(|l| l == "Sales"));
    assert!(tool(&["computer", "list"]).lines().any(|l| l == "ws01$"));
    tool(&["group", "addmembers", "Sales", "ws01$"]);
    assert!(tool(&["group", "listmembers", "Sales"])
        .lines()
        .any(|l| l == "ws01$"));
    tool(&["group", "removemembers", "Sales", "ws01$"]);
    tool(&["group", "delete", "Sales"]);
    assert!(!tool(&["group", "list"]).lines().any(|l| l == "Sales"));
    // Passwords travel over TLS only: a user's whole life over ldaps://.
    let secure = format!("ldaps://{tls_addr}");
    let tls = |args: &[&str]| tool_at(&secure, args);
    tls(&[
        "user",
        "create",
        "alice",
        "Al1ce.Passw0rd",
        "--given-name=Alice",
    ]);
    tls(&["group", "addmembers", "Domain Admins", "alice"]);
    assert!(tls(&["group", "listmembers", "Domain Admins"])
        .lines()
        .any(|l| l == "alice"));
    tls(&["user", "disable", "alice"]);
    tls(&["user", "enable", "alice"]);
    tls(&[
        "user",
        "setpassword",
        "alice",
        "--newpassword=N3w.Passw0rd.x",
    ]);
    let bind = Command::new("ldapwhoami")
        .args([
            "-x",
            "-H",
            &plain,
            "-D",
            "SAMDOM\\alice",
            "-w",
            "N3w.Passw0rd.x",
        ])
        .output()
        .unwrap();
    assert!(
        String::from_utf8_lossy(&bind.stdout).contains("dn:CN=Alice,CN=Users,"),
        "{}",
        String::from_utf8_lossy(&bind.stderr)
    );
    tls(&["group", "removemembers", "Domain Admins", "alice"]);
    tls(&["user", "delete", "alice"]);
    assert!(!tls(&["user", "list"]).lines().any(|l| l == "alice"));
}
