//! The DNS server of a domain provisioned and served by the `kauri` binary, asked by real,
//! unmodified clients: BIND's `dig` and `nsupdate` (Debian's bind9-dnsutils) and
//! dnspython (through `tests/dns_client.py`, which also sends malformed messages), with
//! records managed by `kauri dns` on the data folder and over LDAP.

mod common;

use std::path::Path;
use std::process::Command;

use common::{fails, json, ok, provision, serve, PASSWORD};

const ZONE: &str = "samdom.example.com";

/// `dig` against the served port; its output.
fn dig(server: &str, args: &[&str]) -> String {
    let (host, port) = server.rsplit_once(':').expect("host:port");
    let out = Command::new("dig")
        .arg(format!("@{host}"))
        .args(["-p", port, "+time=5", "+tries=1"])
        .args(args)
        .output()
        .expect("run dig (bind9-dnsutils)");
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// `dig +short`.
fn short(server: &str, args: &[&str]) -> Vec<String> {
    let mut a = vec!["+short"];
    a.extend_from_slice(args);
    dig(server, &a).lines().map(str::to_string).collect()
}

/// Whether dig's output holds a line with these words (spacing aside).
fn has_line(out: &str, words: &str) -> bool {
    let want: Vec<&str> = words.split_whitespace().collect();
    out.lines()
        .any(|l| l.split_whitespace().collect::<Vec<_>>() == want)
}

/// The status dig reports (NOERROR, NXDOMAIN, REFUSED, …).
fn status(out: &str) -> String {
    out.split("status: ")
        .nth(1)
        .and_then(|s| s.split(',').next())
        .unwrap_or("")
        .to_string()
}

fn kdns(data: &Path, args: &[&str]) -> String {
    let mut a: Vec<&std::ffi::OsStr> = vec!["dns".as_ref(), "-H".as_ref(), data.as_os_str()];
    a.extend(args.iter().map(|s| s.as_ref() as &std::ffi::OsStr));
    ok(&a)
}

#[test]
fn the_locator_records_answer_dig() {
    let dir = tempfile::tempdir().unwrap();
    let data = provision(dir.path(), "d");
    let served = serve(&data);
    let dns = served.dns_addr.clone().expect("the DNS server's address");

    // The DC locator: SRV records with the DC's address as additional data.
    let out = dig(&dns, &["_ldap._tcp.dc._msdcs.samdom.example.com", "SRV"]);
    assert_eq!(status(&out), "NOERROR", "{out}");
    assert!(out.contains("flags: qr aa"), "authoritative: {out}");
    assert!(out.contains("0 100 389 dc1.samdom.example.com."), "{out}");
    assert!(
        has_line(&out, "dc1.samdom.example.com. 900 IN A 127.0.0.1"),
        "glue: {out}"
    );
    for (name, port) in [
        ("_kerberos._tcp.samdom.example.com", "88"),
        ("_kerberos._udp.samdom.example.com", "88"),
        ("_kpasswd._udp.samdom.example.com", "464"),
        ("_ldap._tcp.samdom.example.com", "389"),
        ("_gc._tcp.samdom.example.com", "3268"),
        ("_ldap._tcp.pdc._msdcs.samdom.example.com", "389"),
        ("_ldap._tcp.gc._msdcs.samdom.example.com", "3268"),
        (
            "_ldap._tcp.Default-First-Site-Name._sites.dc._msdcs.samdom.example.com",
            "389",
        ),
        (
            "_kerberos._tcp.Default-First-Site-Name._sites.samdom.example.com",
            "88",
        ),
    ] {
        let got = short(&dns, &[name, "SRV"]);
        assert_eq!(
            got,
            vec![format!("0 100 {port} dc1.samdom.example.com.")],
            "{name}"
        );
    }
    assert_eq!(
        short(&dns, &["dc1.samdom.example.com", "A"]),
        vec!["127.0.0.1"]
    );
    assert_eq!(short(&dns, &["samdom.example.com", "A"]), vec!["127.0.0.1"]);
    assert_eq!(
        short(&dns, &["gc._msdcs.samdom.example.com", "A"]),
        vec!["127.0.0.1"]
    );
    // The NTDS Settings GUID's CNAME, followed to the address.
    let domains = dig(&dns, &["_msdcs.samdom.example.com", "AXFR"]);
    assert!(
        domains.contains("Transfer failed")
            || status(&domains) == "REFUSED"
            || domains.contains("REFUSED"),
        "AXFR is refused by default: {domains}"
    );
    let soa = short(&dns, &["samdom.example.com", "SOA"]);
    assert_eq!(soa.len(), 1, "{soa:?}");
    assert!(
        soa[0].starts_with("dc1.samdom.example.com. hostmaster.samdom.example.com. "),
        "{soa:?}"
    );
    let ns = short(&dns, &["_msdcs.samdom.example.com", "NS"]);
    assert_eq!(ns, vec!["dc1.samdom.example.com."]);

    // NXDOMAIN and NODATA carry the zone's SOA; an empty non-terminal exists.
    let out = dig(&dns, &["nosuch.samdom.example.com", "A"]);
    assert_eq!(status(&out), "NXDOMAIN", "{out}");
    assert!(
        out.contains("AUTHORITY: 1") && out.contains("SOA\tdc1.samdom.example.com."),
        "{out}"
    );
    let out = dig(&dns, &["dc1.samdom.example.com", "MX"]);
    assert_eq!(status(&out), "NOERROR", "{out}");
    assert!(
        out.contains("ANSWER: 0") && out.contains("AUTHORITY: 1"),
        "{out}"
    );
    let out = dig(&dns, &["_tcp.samdom.example.com", "A"]);
    assert_eq!(status(&out), "NOERROR", "an empty non-terminal: {out}");

    // Over TCP, with and without EDNS.
    let out = dig(&dns, &["+tcp", "_ldap._tcp.samdom.example.com", "SRV"]);
    assert!(out.contains("0 100 389 dc1.samdom.example.com."), "{out}");
    let out = dig(&dns, &["+bufsize=1232", "dc1.samdom.example.com", "A"]);
    assert!(
        out.contains("EDNS: version: 0") && out.contains("udp: 1232"),
        "{out}"
    );
    let out = dig(&dns, &["+noedns", "dc1.samdom.example.com", "A"]);
    assert!(!out.contains("OPT PSEUDOSECTION"), "{out}");
    let out = dig(
        &dns,
        &[
            "+edns=1",
            "+noednsnegotiation",
            "dc1.samdom.example.com",
            "A",
        ],
    );
    assert_eq!(status(&out), "BADVERS", "{out}");

    // Knot's kdig, a second parser, over UDP and TCP.
    let (host, port) = dns.rsplit_once(':').unwrap();
    for transport in ["+notcp", "+tcp"] {
        let out = Command::new("kdig")
            .args([&format!("@{host}"), "-p", port, transport, "+short"])
            .args(["_kerberos._tcp.dc._msdcs.samdom.example.com", "SRV"])
            .output()
            .expect("run kdig (knot-dnsutils)");
        let text = String::from_utf8_lossy(&out.stdout);
        assert_eq!(
            text.trim(),
            "0 100 88 dc1.samdom.example.com.",
            "kdig {transport}"
        );
    }

    // Names outside the zones: refused, never resolved for anyone (no open resolver).
    let out = dig(&dns, &["www.example.org", "A"]);
    assert_eq!(status(&out), "REFUSED", "{out}");
}

#[test]
fn kauri_dns_manages_records_that_dig_sees() {
    let dir = tempfile::tempdir().unwrap();
    let data = provision(dir.path(), "d");
    let zones = json(&kdns(&data, &["zonelist", "--json"]));
    let names: Vec<&str> = zones
        .as_array()
        .unwrap()
        .iter()
        .map(|z| z["zone"].as_str().unwrap())
        .collect();
    assert_eq!(
        names,
        vec!["_msdcs.samdom.example.com", "samdom.example.com"]
    );
    for (name, ty, data_) in [
        ("www", "A", "10.1.2.3"),
        ("www", "AAAA", "fd00::3"),
        ("alias", "CNAME", "www.samdom.example.com"),
        ("mail", "MX", "www.samdom.example.com 10"),
        ("note", "TXT", "\"hello world\" second"),
        ("_http._tcp", "SRV", "www.samdom.example.com 8080 1 50"),
        ("*.wild", "A", "10.9.9.9"),
        ("sub", "NS", "ns1.sub.samdom.example.com"),
        ("ns1.sub", "A", "10.5.5.5"),
    ] {
        kdns(&data, &["add", ZONE, name, ty, data_]);
    }
    let err = fails(&[
        "dns".as_ref(),
        "-H".as_ref(),
        data.as_os_str(),
        "add".as_ref(),
        ZONE.as_ref(),
        "www".as_ref(),
        "A".as_ref(),
        "10.1.2.3".as_ref(),
    ]);
    assert!(err.contains("already exists"), "{err}");
    let q = json(&kdns(&data, &["query", ZONE, "www", "ALL", "--json"]));
    assert_eq!(q["records"].as_array().unwrap().len(), 2, "{q}");
    kdns(&data, &["update", ZONE, "www", "A", "10.1.2.3", "10.1.2.4"]);
    let info = json(&kdns(&data, &["zoneinfo", ZONE, "--json"]));
    assert_eq!(info["allow_update"], "secure");
    assert_eq!(info["aging"], false);

    let served = serve(&data);
    let dns = served.dns_addr.clone().unwrap();
    assert_eq!(
        short(&dns, &["www.samdom.example.com", "A"]),
        vec!["10.1.2.4"]
    );
    assert_eq!(
        short(&dns, &["www.samdom.example.com", "AAAA"]),
        vec!["fd00::3"]
    );
    assert_eq!(
        short(&dns, &["alias.samdom.example.com", "A"]),
        vec!["www.samdom.example.com.", "10.1.2.4"],
        "a CNAME is followed within the zone"
    );
    assert_eq!(
        short(&dns, &["mail.samdom.example.com", "MX"]),
        vec!["10 www.samdom.example.com."]
    );
    assert_eq!(
        short(&dns, &["note.samdom.example.com", "TXT"]),
        vec!["\"hello world\" \"second\""]
    );
    assert_eq!(
        short(&dns, &["_http._tcp.samdom.example.com", "SRV"]),
        vec!["1 50 8080 www.samdom.example.com."]
    );
    // A wildcard answers for names below its parent, not for the parent itself.
    assert_eq!(
        short(&dns, &["anything.wild.samdom.example.com", "A"]),
        vec!["10.9.9.9"]
    );
    let out = dig(&dns, &["anything.wild.samdom.example.com", "A"]);
    assert!(
        has_line(&out, "anything.wild.samdom.example.com. 900 IN A 10.9.9.9"),
        "{out}"
    );
    // A delegation: a referral with glue, not authoritative.
    let out = dig(&dns, &["+norecurse", "host.sub.samdom.example.com", "A"]);
    assert_eq!(status(&out), "NOERROR", "{out}");
    assert!(!out.contains("flags: qr aa"), "{out}");
    assert!(
        has_line(
            &out,
            "sub.samdom.example.com. 900 IN NS ns1.sub.samdom.example.com."
        ),
        "{out}"
    );
    assert!(
        has_line(&out, "ns1.sub.samdom.example.com. 900 IN A 10.5.5.5"),
        "{out}"
    );

    // Over LDAP, against the running server: delete a record; the name goes when emptied.
    let url = served.ldaps();
    let ca = served.ca.display().to_string();
    let remote = |args: &[&str]| {
        let mut a = vec![
            "dns",
            "-H",
            &url,
            "-U",
            "SAMDOM\\Administrator",
            "-w",
            PASSWORD,
            "--cacert",
            &ca,
        ];
        a.extend_from_slice(args);
        ok(&a)
    };
    remote(&["delete", ZONE, "www", "AAAA", "fd00::3"]);
    remote(&["delete", ZONE, "note", "TXT", "\"hello world\" second"]);
    assert!(short(&dns, &["www.samdom.example.com", "AAAA"]).is_empty());
    let out = dig(&dns, &["note.samdom.example.com", "TXT"]);
    assert_eq!(
        status(&out),
        "NXDOMAIN",
        "a name without records is gone: {out}"
    );
    let zones = json(&remote(&["zonelist", "--json"]));
    assert_eq!(zones.as_array().unwrap().len(), 2);
    remote(&["zonecreate", "example.net"]);
    assert_eq!(
        short(&dns, &["example.net", "NS"]),
        vec!["dc1.samdom.example.com."]
    );
    remote(&["add", "example.net", "@", "A", "192.0.2.1"]);
    assert_eq!(short(&dns, &["example.net", "A"]), vec!["192.0.2.1"]);
    remote(&["zonedelete", "example.net"]);
    let out = dig(&dns, &["example.net", "A"]);
    assert_eq!(status(&out), "REFUSED", "{out}");
}

#[test]
fn unsigned_updates_follow_the_zone_setting_and_bad_messages_change_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let data = provision(dir.path(), "d");
    let served = serve(&data);
    let dns = served.dns_addr.clone().unwrap();
    let (host, port) = dns.rsplit_once(':').unwrap();
    let nsupdate = |script: &str| {
        use std::io::Write;
        let mut child = Command::new("nsupdate")
            .args(["-t", "5"])
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .expect("run nsupdate (bind9-dnsutils)");
        let text = format!("server {host} {port}\nzone {ZONE}\n{script}\nsend\n");
        child
            .stdin
            .take()
            .unwrap()
            .write_all(text.as_bytes())
            .unwrap();
        let out = child.wait_with_output().unwrap();
        (
            out.status.success(),
            format!(
                "{}{}",
                String::from_utf8_lossy(&out.stdout),
                String::from_utf8_lossy(&out.stderr)
            ),
        )
    };
    // The zone takes secure updates only.
    let (done, out) = nsupdate("update add ws1.samdom.example.com 600 A 10.0.0.51");
    assert!(!done && out.contains("REFUSED"), "{out}");
    assert!(short(&dns, &["ws1.samdom.example.com", "A"]).is_empty());
    let url = served.ldaps();
    let ca = served.ca.display().to_string();
    ok(&[
        "dns",
        "-H",
        &url,
        "-U",
        "SAMDOM\\Administrator",
        "-w",
        PASSWORD,
        "--cacert",
        &ca,
        "aging",
        ZONE,
        "--allow-update",
        "nonsecure",
    ]);
    let (done, out) = nsupdate("update add ws1.samdom.example.com 600 A 10.0.0.51");
    assert!(done, "{out}");
    assert_eq!(
        short(&dns, &["ws1.samdom.example.com", "A"]),
        vec!["10.0.0.51"]
    );
    // Prerequisites: the name must not exist (it does), so nothing changes.
    let (done, out) = nsupdate(
        "prereq nxdomain ws1.samdom.example.com\nupdate add ws1.samdom.example.com 600 A 10.0.0.52",
    );
    assert!(!done && out.contains("YXDOMAIN"), "{out}");
    assert_eq!(
        short(&dns, &["ws1.samdom.example.com", "A"]),
        vec!["10.0.0.51"]
    );
    let (done, out) = nsupdate("prereq yxrrset ws1.samdom.example.com A 10.0.0.51\nupdate delete ws1.samdom.example.com A\nupdate add ws1.samdom.example.com 600 A 10.0.0.53");
    assert!(done, "{out}");
    assert_eq!(
        short(&dns, &["ws1.samdom.example.com", "A"]),
        vec!["10.0.0.53"]
    );
    // The record is dynamic: it has an aging timestamp.
    let q = json(&ok(&[
        "dns",
        "-H",
        &url,
        "-U",
        "SAMDOM\\Administrator",
        "-w",
        PASSWORD,
        "--cacert",
        &ca,
        "query",
        ZONE,
        "ws1",
        "A",
        "--json",
    ]));
    assert_eq!(q["records"][0]["aging"], "dynamic", "{q}");
    // Aging on: a fresh dynamic record is not stale, so scavenging removes nothing.
    let admin = [
        "-H",
        &url,
        "-U",
        "SAMDOM\\Administrator",
        "-w",
        PASSWORD,
        "--cacert",
        &ca,
    ];
    let run = |args: &[&str]| {
        let mut a: Vec<&str> = vec!["dns"];
        a.extend_from_slice(&admin);
        a.extend_from_slice(args);
        json(&ok(&a))
    };
    let aging = run(&[
        "aging",
        ZONE,
        "--aging",
        "on",
        "--no-refresh",
        "24",
        "--json",
    ]);
    assert_eq!(aging["aging"], true, "{aging}");
    assert_eq!(aging["no_refresh_hours"], 24, "{aging}");
    let dry = run(&["scavenge", "--now", "--dry-run", "--json"]);
    assert_eq!(dry["dry_run"], true, "{dry}");
    assert_eq!(dry["removed"].as_array().unwrap().len(), 0, "{dry}");
    let err = common::fails(&[
        "dns",
        "-H",
        &url,
        "-U",
        "SAMDOM\\Administrator",
        "-w",
        PASSWORD,
        "--cacert",
        &ca,
        "scavenge",
    ]);
    assert!(err.contains("--now"), "{err}");
    // The zone's name index follows updates: an empty non-terminal appears with the name
    // below it and goes with it.
    let out = dig(&dns, &["deep.samdom.example.com", "A"]);
    assert_eq!(status(&out), "NXDOMAIN", "{out}");
    let (done, out) = nsupdate("update add a.deep.samdom.example.com 600 A 10.0.0.60");
    assert!(done, "{out}");
    let out = dig(&dns, &["deep.samdom.example.com", "A"]);
    assert_eq!(status(&out), "NOERROR", "an empty non-terminal now: {out}");
    let (done, out) = nsupdate("update delete a.deep.samdom.example.com A");
    assert!(done, "{out}");
    let out = dig(&dns, &["deep.samdom.example.com", "A"]);
    assert_eq!(status(&out), "NXDOMAIN", "{out}");
    // A name outside the zone is NOTZONE.
    let (done, out) = nsupdate("update add ws1.example.org 600 A 10.0.0.51");
    assert!(!done && out.contains("NOTZONE"), "{out}");

    // dnspython: malformed messages, truncation, EDNS; the server answers or stays quiet
    // and keeps serving.
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/dns_client.py");
    let out = Command::new("python3")
        .arg(&script)
        .args([host, port, ZONE])
        .output()
        .expect("run python3");
    assert!(
        out.status.success(),
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(
        short(&dns, &["ws1.samdom.example.com", "A"]),
        vec!["10.0.0.53"]
    );
}

#[test]
fn forwarders_answer_other_names_and_transfers_follow_the_setting() {
    use std::io::BufRead;
    let dir = tempfile::tempdir().unwrap();
    let data = provision(dir.path(), "d");
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/dns_upstream.py");
    let mut upstream = Command::new("python3")
        .arg(&script)
        .stdout(std::process::Stdio::piped())
        .spawn()
        .expect("run python3");
    let mut line = String::new();
    std::io::BufReader::new(upstream.stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    let port = line.trim().to_string();
    let conf = dir.path().join("kauri.toml");
    std::fs::write(
        &conf,
        format!("[dns]\nforwarders = [\"127.0.0.1:{port}\"]\nzone_transfers = [\"127.0.0.0/8\"]\n"),
    )
    .unwrap();
    let served = common::serve_with(&data, &["--config", conf.to_str().unwrap()]);
    let dns = served.dns_addr.clone().unwrap();
    // Recursion asked: the forwarder's answer; not asked: refused.
    let out = dig(&dns, &["www.example.org", "A"]);
    assert_eq!(status(&out), "NOERROR", "{out}");
    assert!(
        has_line(&out, "www.example.org. 300 IN A 192.0.2.44"),
        "{out}"
    );
    let out = dig(&dns, &["missing.example.org", "A"]);
    assert_eq!(status(&out), "NXDOMAIN", "{out}");
    let out = dig(&dns, &["+norecurse", "www.example.org", "A"]);
    assert_eq!(status(&out), "REFUSED", "{out}");
    // The zones are still answered from the directory.
    assert_eq!(
        short(&dns, &["dc1.samdom.example.com", "A"]),
        vec!["127.0.0.1"]
    );
    // A transfer, allowed from loopback: the SOA first and last, every record between.
    let out = dig(&dns, &["samdom.example.com", "AXFR"]);
    let soas = out.lines().filter(|l| l.contains("\tSOA\t")).count();
    assert_eq!(soas, 2, "{out}");
    assert!(out.contains("_ldap._tcp.samdom.example.com."), "{out}");
    let _ = upstream.kill();
    let _ = upstream.wait();
}

#[test]
fn the_rate_limit_drops_what_one_address_asks_past_it() {
    use kauri_dns_proto::wire::Message;
    let dir = tempfile::tempdir().unwrap();
    let data = provision(dir.path(), "d");
    let conf = dir.path().join("kauri.toml");
    std::fs::write(&conf, "[dns]\nrate_limit = 5\n").unwrap();
    let served = common::serve_with(&data, &["--config", conf.to_str().unwrap()]);
    let dns = served.dns_addr.clone().unwrap();
    let socket = std::net::UdpSocket::bind("127.0.0.1:0").unwrap();
    socket.connect(&dns).unwrap();
    socket
        .set_read_timeout(Some(std::time::Duration::from_millis(300)))
        .unwrap();
    let mut q = Message::default();
    q.questions.push(kauri_dns_proto::Question {
        name: kauri_dns_proto::Name::parse("dc1.samdom.example.com").unwrap(),
        qtype: 1,
        qclass: 1,
    });
    for id in 0..40u16 {
        q.header.id = id;
        socket.send(&q.encode()).unwrap();
    }
    let mut answered = 0;
    let mut buf = [0u8; 512];
    while socket.recv(&mut buf).is_ok() {
        answered += 1;
    }
    assert!((5..=10).contains(&answered), "{answered} of 40 answered");
    // A second later the address is answered again.
    std::thread::sleep(std::time::Duration::from_millis(1100));
    assert_eq!(
        short(&dns, &["dc1.samdom.example.com", "A"]),
        vec!["127.0.0.1"]
    );
}
