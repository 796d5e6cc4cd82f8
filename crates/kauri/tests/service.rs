//! What a service manager and an administrator's shell get from the command: readiness and
//! stopping notices over systemd's notify socket, the version with the storage format,
//! manual pages and shell completions.

mod common;

use std::os::unix::net::UnixDatagram;
use std::time::Duration;

use common::{ok, provision, serve_with_env, whoami, PASSWORD};

/// The next notice the server sent to `sock` (at most a minute away).
fn notice(sock: &UnixDatagram) -> String {
    sock.set_read_timeout(Some(Duration::from_secs(60)))
        .unwrap();
    let mut buf = [0u8; 1024];
    let n = sock.recv(&mut buf).expect("a notice from the server");
    String::from_utf8_lossy(&buf[..n]).into_owned()
}

#[test]
fn the_server_tells_its_service_manager_when_it_is_ready_and_when_it_stops() {
    let dir = tempfile::tempdir().unwrap();
    let data = provision(dir.path(), "data");
    let path = dir.path().join("notify.sock");
    let sock = UnixDatagram::bind(&path).unwrap();
    let mut served = serve_with_env(&data, &[], &[("NOTIFY_SOCKET", path.as_os_str())]);
    let ready = notice(&sock);
    assert_eq!(
        ready,
        format!(
            "READY=1\nSTATUS=serving SAMDOM.EXAMPLE.COM at ldap://{}",
            served.addr
        )
    );
    // Ready means served: the Administrator binds at once.
    let who = whoami(&served.ldap(), "Administrator@samdom.example.com", PASSWORD).unwrap();
    assert!(who.contains("Administrator"), "{who}");
    let status = served.stop();
    assert!(status.success(), "{status:?}\n{}", served.log_tail());
    assert!(notice(&sock).starts_with("STOPPING=1\n"));
}

#[test]
fn version_names_the_storage_format() {
    let out = ok(&["--version"]);
    assert_eq!(
        out.trim(),
        format!(
            "kauri {} (storage format {})",
            env!("CARGO_PKG_VERSION"),
            kauri_db::db::STORE_FORMAT
        )
    );
}

#[test]
fn manual_pages_for_the_command_and_its_subcommands() {
    let dir = tempfile::tempdir().unwrap();
    let man = dir.path().join("man1");
    let out: serde_json::Value =
        serde_json::from_str(&ok(&["man".as_ref(), man.as_os_str(), "--json".as_ref()])).unwrap();
    let pages = out["pages"].as_array().unwrap();
    for name in [
        "kauri.1",
        "kauri-serve.1",
        "kauri-db-reindex.1",
        "kauri-traffic-populate.1",
    ] {
        let page = man.join(name);
        assert!(
            pages.iter().any(|p| p.as_str() == page.to_str()),
            "{name} not listed in {out}"
        );
        let text = std::fs::read_to_string(&page).unwrap();
        let title = name.trim_end_matches(".1");
        assert!(text.contains(&format!(".TH {title} 1")), "{name}: {text}");
    }
    // The `help` pseudo-command gets no page; every page listed exists.
    assert!(!man.join("kauri-help.1").exists());
    assert_eq!(std::fs::read_dir(&man).unwrap().count(), pages.len());
}

#[test]
fn completions_for_each_shell() {
    let bash = ok(&["completions", "bash"]);
    assert!(
        bash.contains("_kauri()") && bash.contains("complete -F _kauri"),
        "{bash}"
    );
    assert!(bash.contains("reindex"));
    let zsh = ok(&["completions", "zsh"]);
    assert!(zsh.starts_with("#compdef kauri"));
    let fish = ok(&["completions", "fish"]);
    assert!(fish.contains("complete -c kauri"));
    // A shell the generator does not know is a usage error.
    let out = common::kauri(&["completions", "tcsh"]);
    assert_eq!(out.status.code(), Some(2));
}

/// The SHA-256 fingerprint of the certificate an LDAPS port presents.
fn certificate_of(addr: &str) -> String {
    let out = std::process::Command::new("sh")
        .arg("-c")
        .arg(format!(
            "openssl s_client -connect {addr} </dev/null 2>/dev/null | openssl x509 -noout -fingerprint -sha256"
        ))
        .output()
        .expect("run openssl");
    let text = String::from_utf8_lossy(&out.stdout).trim().to_string();
    assert!(
        text.contains("Fingerprint="),
        "no certificate from {addr}: {text}"
    );
    text
}

/// `ldapsearch` as the Administrator for every user: its exit code (4 when the size limit
/// cut the answer short).
fn search_users(url: &str) -> Option<i32> {
    std::process::Command::new("ldapsearch")
        .args([
            "-x",
            "-H",
            url,
            "-D",
            "Administrator@samdom.example.com",
            "-w",
            PASSWORD,
        ])
        .args([
            "-b",
            "DC=samdom,DC=example,DC=com",
            "(objectClass=user)",
            "cn",
        ])
        .output()
        .expect("run ldapsearch (install ldap-utils)")
        .status
        .code()
}

#[test]
fn a_hangup_reads_the_settings_and_the_certificate_again() {
    let dir = tempfile::tempdir().unwrap();
    let data = provision(dir.path(), "data");
    let config = dir.path().join("kauri.toml");
    std::fs::write(&config, "size_limit = 1000\nmetrics_listen = \"\"\n").unwrap();
    let path = dir.path().join("notify.sock");
    let sock = UnixDatagram::bind(&path).unwrap();
    let mut served = serve_with_env(
        &data,
        &["--config", config.to_str().unwrap()],
        &[("NOTIFY_SOCKET", path.as_os_str())],
    );
    assert!(notice(&sock).starts_with("READY=1\n"));
    assert_eq!(search_users(&served.ldap()), Some(0));
    let before = certificate_of(&served.tls_addr);

    // A smaller size limit, a metrics address (which waits for a restart), and a new
    // certificate: the generated pair is made again when its files are gone.
    std::fs::write(
        &config,
        "size_limit = 2\nmetrics_listen = \"127.0.0.1:0\"\n",
    )
    .unwrap();
    std::fs::remove_file(data.join("tls").join("cert.pem")).unwrap();
    std::fs::remove_file(data.join("tls").join("key.pem")).unwrap();
    served.signal("HUP");
    assert!(notice(&sock).starts_with("RELOADING=1\nMONOTONIC_USEC="));
    let ready = notice(&sock);
    assert!(
        ready.starts_with("READY=1\nSTATUS=reloaded; certificate "),
        "{ready}"
    );
    assert!(ready.contains("in force now: size_limit;"), "{ready}");
    assert!(
        ready.ends_with("changed but kept until a restart: metrics_listen"),
        "{ready}"
    );
    assert_eq!(
        search_users(&served.ldap()),
        Some(4),
        "{}",
        served.log_tail()
    );
    assert_ne!(certificate_of(&served.tls_addr), before);

    // A file that cannot be used changes nothing, and the server serves on.
    std::fs::write(&config, "size_limit = \"many\"\n").unwrap();
    served.signal("HUP");
    assert!(notice(&sock).starts_with("RELOADING=1\n"));
    let refused = notice(&sock);
    assert!(
        refused.starts_with("READY=1\nSTATUS=reload refused, nothing changed: "),
        "{refused}"
    );
    assert_eq!(search_users(&served.ldap()), Some(4));
    let status = served.stop();
    assert!(status.success(), "{status:?}\n{}", served.log_tail());
}
