//! Samba's own LDAP tests from Debian's samba-testsuite, run unmodified with a simple bind
//! against a domain provisioned and served by the `kauri` binary: the schema read through
//! paged searches of the Schema NC, server-side sort, a search nested inside another on
//! one connection, and modifies of every naming context's head.

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

#[test]
fn smbtorture_ldap_tests_pass_against_a_provisioned_domain() {
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
            .args(["--listen", "127.0.0.1:0", "--listen-tls", ""])
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
    // Keep draining what the server logs, so it never writes into a closed pipe.
    std::thread::spawn(move || lines.for_each(drop));
    let conf = dir.path().join("client.conf");
    std::fs::write(
        &conf,
        "[global]\n\tworkgroup = SAMDOM\n\trealm = SAMDOM.EXAMPLE.COM\n",
    )
    .unwrap();
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
