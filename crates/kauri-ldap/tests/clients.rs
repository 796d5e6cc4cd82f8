//! The real server on a free 127.0.0.1 port, driven by real, unmodified clients: OpenLDAP's
//! ldap-utils (`ldapsearch`, `ldapadd`, `ldapmodify`, `ldapdelete`, `ldapmodrdn`,
//! `ldapcompare`, `ldapwhoami`, `ldappasswd`) and python `ldap3`, plus raw bytes for what no
//! well-behaved client sends.

use std::io::{Read, Write};
use std::net::TcpStream;
use std::path::Path;
use std::process::{Command, Output};
use std::time::Duration;

mod common;

use common::{start, Running, ADMIN, BASE, PW};

fn run(cmd: &str, args: &[&str], stdin: Option<&str>, env: &[(&str, &Path)]) -> Output {
    let mut c = Command::new(cmd);
    c.args(args).env("LDAPTLS_REQCERT", "demand");
    for (k, v) in env {
        c.env(k, v);
    }
    c.stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped());
    let mut child = c
        .spawn()
        .unwrap_or_else(|e| panic!("cannot run {cmd} (install ldap-utils): {e}"));
    if let Some(text) = stdin {
        child
            .stdin
            .take()
            .unwrap()
            .write_all(text.as_bytes())
            .unwrap();
    }
    drop(child.stdin.take());
    child.wait_with_output().unwrap()
}

/// Runs a python script with the given interpreter; fails the test unless it prints "ok".
fn python(interpreter: &str, script: &str, what: &str) {
    let o = Command::new(interpreter)
        .args(["-c", script])
        .output()
        .unwrap_or_else(|e| panic!("{interpreter}: {e}"));
    assert!(
        o.status.success() && String::from_utf8_lossy(&o.stdout).contains("ok"),
        "{what}: {}",
        text(&o)
    );
}

fn text(o: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

fn admin<'a>(s: &'a Running, extra: &[&'a str]) -> Vec<String> {
    let mut v: Vec<String> = vec![
        "-x".into(),
        "-H".into(),
        s.uri(),
        "-D".into(),
        ADMIN.into(),
        "-w".into(),
        PW.into(),
    ];
    v.extend(extra.iter().map(|x| x.to_string()));
    v
}

fn ldap(cmd: &str, args: &[String], stdin: Option<&str>) -> Output {
    let a: Vec<&str> = args.iter().map(String::as_str).collect();
    run(cmd, &a, stdin, &[])
}

#[test]
fn ldap_utils_every_operation() {
    let s = start(|_| {});
    // Root DSE, anonymously.
    let o = run(
        "ldapsearch",
        &["-x", "-H", &s.uri(), "-b", "", "-s", "base", "+", "*"],
        None,
        &[],
    );
    let t = text(&o);
    assert!(o.status.success(), "{t}");
    assert!(t.contains(&format!("namingContexts: {BASE}")), "{t}");
    assert!(
        t.contains("supportedControl: 1.2.840.113556.1.4.319"),
        "{t}"
    );
    assert!(t.contains("supportedLDAPVersion: 3"), "{t}");
    assert!(
        t.contains("serverName: CN=localhost,CN=Servers,CN=Default-First-Site-Name"),
        "{t}"
    );
    assert!(t.contains("highestCommittedUSN: "), "{t}");
    // Below the root DSE, anonymous clients get nothing; the administrator gets entries.
    let o = run(
        "ldapsearch",
        &["-x", "-H", &s.uri(), "-b", BASE, "(uid=user3)"],
        None,
        &[],
    );
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    let o = ldap(
        "ldapsearch",
        &admin(&s, &["-b", BASE, "(uid=user3)", "uid"]),
        None,
    );
    assert!(text(&o).contains("uid: user3"), "{}", text(&o));
    // Wrong password: invalidCredentials.
    let o = run(
        "ldapwhoami",
        &["-x", "-H", &s.uri(), "-D", ADMIN, "-w", "nope"],
        None,
        &[],
    );
    assert_eq!(o.status.code(), Some(49), "{}", text(&o));
    // A user binds with the password stored in userPassword.
    let user = format!("cn=User 3,ou=People,{BASE}");
    let o = run(
        "ldapwhoami",
        &["-x", "-H", &s.uri(), "-D", &user, "-w", "user-pw"],
        None,
        &[],
    );
    assert!(text(&o).contains(&format!("dn:{user}")), "{}", text(&o));

    // Add, duplicate, missing parent, bad DN.
    let new = format!("dn: cn=New,ou=People,{BASE}\nobjectClass: person\ncn: New\nuid: new\n\n");
    let o = ldap("ldapadd", &admin(&s, &[]), Some(&new));
    assert!(o.status.success(), "{}", text(&o));
    let o = ldap("ldapadd", &admin(&s, &[]), Some(&new));
    assert_eq!(o.status.code(), Some(68), "{}", text(&o));
    let o = ldap(
        "ldapadd",
        &admin(&s, &[]),
        Some(&format!("dn: cn=X,ou=Nowhere,{BASE}\ncn: X\n\n")),
    );
    assert_eq!(o.status.code(), Some(32), "{}", text(&o));
    let o = ldap(
        "ldapadd",
        &admin(&s, &[]),
        Some("dn: cn=X,,dc=x\ncn: X\n\n"),
    );
    assert_eq!(o.status.code(), Some(34), "{}", text(&o));
    // Users may not write.
    let o = run(
        "ldapadd",
        &["-x", "-H", &s.uri(), "-D", &user, "-w", "user-pw"],
        Some(&new.replace("cn=New", "cn=New2")),
        &[],
    );
    assert_eq!(o.status.code(), Some(50), "{}", text(&o));

    // Modify: add and replace; deleting an absent value is noSuchAttribute.
    let m = format!("dn: cn=New,ou=People,{BASE}\nchangetype: modify\nadd: mail\nmail: new@example.com\n-\nreplace: description\ndescription: fresh\n\n");
    let o = ldap("ldapmodify", &admin(&s, &[]), Some(&m));
    assert!(o.status.success(), "{}", text(&o));
    let m = format!("dn: cn=New,ou=People,{BASE}\nchangetype: modify\ndelete: mail\nmail: other@example.com\n\n");
    let o = ldap("ldapmodify", &admin(&s, &[]), Some(&m));
    assert_eq!(o.status.code(), Some(16), "{}", text(&o));
    // ...and with the permissive-modify control it is not an error.
    let o = ldap(
        "ldapmodify",
        &admin(&s, &["-e", "1.2.840.113556.1.4.1413"]),
        Some(&m),
    );
    assert!(o.status.success(), "{}", text(&o));

    // Compare.
    let o = ldap(
        "ldapcompare",
        &admin(
            &s,
            &[&format!("cn=New,ou=People,{BASE}"), "mail:NEW@example.com"],
        ),
        None,
    );
    assert_eq!(o.status.code(), Some(6), "{}", text(&o));
    let o = ldap(
        "ldapcompare",
        &admin(
            &s,
            &[&format!("cn=New,ou=People,{BASE}"), "mail:x@example.com"],
        ),
        None,
    );
    assert_eq!(o.status.code(), Some(5), "{}", text(&o));

    // Rename and move.
    let o = ldap(
        "ldapmodrdn",
        &admin(&s, &["-r", &format!("cn=New,ou=People,{BASE}"), "cn=Newer"]),
        None,
    );
    assert!(o.status.success(), "{}", text(&o));
    let o = ldap(
        "ldapmodrdn",
        &admin(
            &s,
            &[
                "-r",
                "-s",
                BASE,
                &format!("cn=Newer,ou=People,{BASE}"),
                "cn=Newer",
            ],
        ),
        None,
    );
    assert!(o.status.success(), "{}", text(&o));
    let o = ldap(
        "ldapsearch",
        &admin(&s, &["-b", &format!("cn=Newer,{BASE}"), "-s", "base", "cn"]),
        None,
    );
    assert!(
        text(&o).contains("cn: Newer") && !text(&o).contains("cn: New\n"),
        "{}",
        text(&o)
    );

    // Delete: non-leaf refused, tree delete control deletes the subtree.
    let o = ldap(
        "ldapdelete",
        &admin(&s, &[&format!("ou=People,{BASE}")]),
        None,
    );
    assert_eq!(o.status.code(), Some(66), "{}", text(&o));
    let o = ldap(
        "ldapdelete",
        &admin(
            &s,
            &[
                "-e",
                "!1.2.840.113556.1.4.805",
                &format!("ou=People,{BASE}"),
            ],
        ),
        None,
    );
    assert!(o.status.success(), "{}", text(&o));
    let o = ldap(
        "ldapsearch",
        &admin(&s, &["-b", BASE, "(objectClass=person)", "dn"]),
        None,
    );
    assert_eq!(text(&o).matches("\ndn: ").count(), 1, "{}", text(&o));

    // Unknown critical control: unavailableCriticalExtension; non-critical: ignored.
    let o = ldap(
        "ldapsearch",
        &admin(&s, &["-e", "!1.2.3.4.5", "-b", BASE, "(cn=*)"]),
        None,
    );
    assert_eq!(o.status.code(), Some(12), "{}", text(&o));
    let o = ldap(
        "ldapsearch",
        &admin(&s, &["-e", "1.2.3.4.5", "-b", BASE, "-s", "base"]),
        None,
    );
    assert!(o.status.success(), "{}", text(&o));
    // A bad filter never reaches the server (ldapsearch refuses it), a bad base DN does.
    let o = ldap("ldapsearch", &admin(&s, &["-b", "cn=,,x", "(cn=*)"]), None);
    assert_eq!(o.status.code(), Some(34), "{}", text(&o));

    // Who am I, over LDAPS and after StartTLS, trusting the generated authority.
    let ca = s.ca();
    let env = [("LDAPTLS_CACERT", ca.as_path())];
    let o = run(
        "ldapwhoami",
        &["-x", "-H", &s.tls_uri(), "-D", ADMIN, "-w", PW],
        None,
        &env,
    );
    assert!(text(&o).contains(&format!("dn:{ADMIN}")), "{}", text(&o));
    let o = run(
        "ldapwhoami",
        &["-ZZ", "-x", "-H", &s.uri(), "-D", ADMIN, "-w", PW],
        None,
        &env,
    );
    assert!(text(&o).contains(&format!("dn:{ADMIN}")), "{}", text(&o));
}

#[test]
fn paged_results_sweep_everything_without_duplicates() {
    let s = start(|c| c.size_limit = 5);
    // Unpaged: the server's size limit applies.
    let o = ldap(
        "ldapsearch",
        &admin(&s, &["-b", BASE, "(objectClass=*)", "dn"]),
        None,
    );
    assert_eq!(o.status.code(), Some(4), "{}", text(&o));
    // Paged: every entry comes, page by page.
    let o = ldap(
        "ldapsearch",
        &admin(
            &s,
            &["-E", "pr=4/noprompt", "-b", BASE, "(objectClass=*)", "dn"],
        ),
        None,
    );
    let t = text(&o);
    assert!(o.status.success(), "{t}");
    let mut dns: Vec<&str> = t.lines().filter(|l| l.starts_with("dn: ")).collect();
    assert_eq!(dns.len(), 14, "{t}");
    dns.sort();
    dns.dedup();
    assert_eq!(dns.len(), 14);
}

#[test]
fn strong_auth_can_be_required() {
    let s = start(|c| c.require_strong_auth = true);
    let o = run(
        "ldapwhoami",
        &["-x", "-H", &s.uri(), "-D", ADMIN, "-w", PW],
        None,
        &[],
    );
    assert_eq!(o.status.code(), Some(8), "{}", text(&o));
    let ca = s.ca();
    let o = run(
        "ldapwhoami",
        &["-ZZ", "-x", "-H", &s.uri(), "-D", ADMIN, "-w", PW],
        None,
        &[("LDAPTLS_CACERT", ca.as_path())],
    );
    assert!(o.status.success(), "{}", text(&o));
}

fn read_until_closed(mut sock: TcpStream) -> Vec<u8> {
    sock.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
    let mut got = Vec::new();
    let _ = sock.read_to_end(&mut got);
    got
}

#[test]
fn hostile_bytes_close_one_connection_and_nothing_else() {
    let s = start(|c| c.max_pdu = 4096);
    let addr = format!("127.0.0.1:{}", s.port);
    // Garbage that does not frame: notice of disconnection, then close.
    let mut g = TcpStream::connect(&addr).unwrap();
    g.write_all(b"\x01\x02garbage").unwrap();
    let got = read_until_closed(g);
    assert!(
        got.windows(22).any(|w| w == b"1.3.6.1.4.1.1466.20036"),
        "{got:?}"
    );
    // A message announcing more than the PDU limit: the same, without buffering it.
    let mut big = TcpStream::connect(&addr).unwrap();
    big.write_all(&[0x30, 0x84, 0x7f, 0xff, 0xff, 0xff])
        .unwrap();
    let got = read_until_closed(big);
    assert!(
        got.windows(22).any(|w| w == b"1.3.6.1.4.1.1466.20036"),
        "{got:?}"
    );
    // An anonymous bind under message id 0, which RFC 4511 reserves for the
    // server's notifications: a notice of disconnection, not an answer.
    let mut zero = TcpStream::connect(&addr).unwrap();
    zero.write_all(&[
        0x30, 0x0c, 0x02, 0x01, 0x00, 0x60, 0x07, 0x02, 0x01, 0x03, 0x04, 0x00, 0x80, 0x00,
    ])
    .unwrap();
    let got = read_until_closed(zero);
    assert!(
        got.windows(22).any(|w| w == b"1.3.6.1.4.1.1466.20036"),
        "{got:?}"
    );
    // A search whose own length claims 2 GiB inside a small message: the search's done
    // message with protocolError, under its id.
    let mut absurd = TcpStream::connect(&addr).unwrap();
    absurd
        .write_all(&[
            0x30, 0x09, 0x02, 0x01, 0x05, 0x63, 0x84, 0x7f, 0xff, 0xff, 0xff,
        ])
        .unwrap();
    absurd
        .set_read_timeout(Some(Duration::from_secs(5)))
        .unwrap();
    let mut buf = [0u8; 64];
    let n = absurd.read(&mut buf).unwrap();
    assert!(n > 8 && buf[4] == 0x05 && buf[5] == 0x65, "{:?}", &buf[..n]);
    // A message that frames but does not decode: protocolError under its id, and the
    // connection keeps working.
    let mut bad = TcpStream::connect(&addr).unwrap();
    bad.write_all(&[0x30, 0x06, 0x02, 0x01, 0x07, 0x63, 0x01, 0xff])
        .unwrap();
    bad.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
    let mut buf = [0u8; 64];
    let n = bad.read(&mut buf).unwrap();
    assert!(n > 8 && buf[4] == 0x07 && buf[5] == 0x65, "{:?}", &buf[..n]);
    assert!(
        buf[..n].windows(3).any(|w| w == [0x0a, 0x01, 0x02]),
        "protocolError: {:?}",
        &buf[..n]
    );
    // A search whose filter does not decode (an empty extensibleMatch): protocolError.
    let mut bad_filter = TcpStream::connect(&addr).unwrap();
    let mut m = vec![0x30, 0x1a, 0x02, 0x01, 0x09, 0x63, 0x15];
    m.extend_from_slice(&[
        0x04, 0x00, 0x0a, 0x01, 0x00, 0x0a, 0x01, 0x00, 0x02, 0x01, 0x00, 0x02, 0x01, 0x00,
    ]);
    m.extend_from_slice(&[0x01, 0x01, 0x00, 0xa9, 0x00, 0x30, 0x00]);
    bad_filter.write_all(&m).unwrap();
    bad_filter
        .set_read_timeout(Some(Duration::from_secs(5)))
        .unwrap();
    let n = bad_filter.read(&mut buf).unwrap();
    assert!(n > 8 && buf[4] == 0x09 && buf[5] == 0x65, "{:?}", &buf[..n]);
    assert!(
        buf[..n].windows(3).any(|w| w == [0x0a, 0x01, 0x02]),
        "protocolError: {:?}",
        &buf[..n]
    );
    // Everyone else is still served.
    let o = ldap("ldapsearch", &admin(&s, &["-b", BASE, "-s", "base"]), None);
    assert!(o.status.success(), "{}", text(&o));
}

#[test]
fn python_ldap3_binary_filters_and_paging() {
    let s = start(|_| {});
    let script = format!(
        r#"
import ldap3, sys
from ldap3.utils.conv import escape_bytes
server = ldap3.Server("127.0.0.1", port={port}, get_info=ldap3.NONE)
c = ldap3.Connection(server, user="{admin}", password="{pw}", auto_bind=True)
sid = bytes([1, 5, 0, 0, 0, 0, 0, 5, 21, 0, 0, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 0xe8, 3, 0, 0])
assert c.add("cn=Sid Holder,{base}", ["person"], {{"cn": "Sid Holder", "objectSid": sid}}), c.result
assert c.search("{base}", "(objectSid=" + escape_bytes(sid) + ")", attributes=["cn"]), c.result
assert len(c.entries) == 1 and c.entries[0].cn.value == "Sid Holder", c.entries
entries = list(c.extend.standard.paged_search("{base}", "(objectClass=*)", attributes=["cn"], paged_size=3, generator=True))
dns = [e["dn"] for e in entries if e["type"] == "searchResEntry"]
assert len(dns) == 15 and len(set(dns)) == 15, dns
assert c.modify("cn=Sid Holder,{base}", {{"description": [(ldap3.MODIFY_REPLACE, ["has a SID"])]}}), c.result
assert c.delete("cn=Sid Holder,{base}"), c.result
print("ok")
"#,
        port = s.port,
        admin = ADMIN,
        pw = PW,
        base = BASE
    );
    python("python3", &script, "python ldap3 (pip install ldap3)");
}

#[test]
fn sort_vlv_ranged_retrieval_and_extended_dn() {
    let s = start(|c| c.max_val_range = 5);
    // Server-side sort, descending by uid.
    let o = ldap(
        "ldapsearch",
        &admin(
            &s,
            &[
                "-E",
                "!sss=-uid",
                "-b",
                &format!("ou=People,{BASE}"),
                "-s",
                "one",
                "(uid=*)",
                "uid",
            ],
        ),
        None,
    );
    let t = text(&o);
    assert!(o.status.success(), "{t}");
    let uids: Vec<&str> = t.lines().filter_map(|l| l.strip_prefix("uid: ")).collect();
    let mut want = uids.clone();
    want.sort();
    want.reverse();
    assert_eq!(uids.len(), 12);
    assert_eq!(uids, want);
    assert!(t.contains("sortResult: (0) Success"), "{t}");
    // VLV (ldapsearch's VLV mode is interactive, so python ldap3 sends the raw controls):
    // 1 before and 2 after the 4th entry of the list sorted by uid; VLV without sort is
    // refused (unwillingToPerform: clients such as ldap3 know only RFC 4511's codes, not
    // sortControlMissing).
    let script = format!(
        r#"
import ldap3
c = ldap3.Connection(ldap3.Server("127.0.0.1", port={port}, get_info=ldap3.NONE), user="{admin}", password="{pw}", auto_bind=True)
sort = ("1.2.840.113556.1.4.473", True, bytes.fromhex("3007300504037569 64".replace(" ", "")))
vlv = ("2.16.840.1.113730.3.4.9", True, bytes.fromhex("300e020101020102a006020104020100"))
c.search("ou=People,{base}", "(uid=*)", search_scope=ldap3.LEVEL, attributes=["uid"], controls=[sort, vlv])
assert c.result["result"] == 0, c.result
print(",".join(e.uid.value for e in c.entries))
c.search("ou=People,{base}", "(uid=*)", search_scope=ldap3.LEVEL, attributes=["uid"], controls=[vlv])
print(c.result["result"])
"#,
        port = s.port,
        admin = ADMIN,
        pw = PW,
        base = BASE
    );
    let o = Command::new("python3")
        .args(["-c", &script])
        .output()
        .expect("python3");
    let t = text(&o);
    assert!(o.status.success(), "{t}");
    let mut all: Vec<String> = (0..12).map(|i| format!("user{i}")).collect();
    all.sort();
    let mut lines = String::from_utf8_lossy(&o.stdout)
        .lines()
        .map(str::to_string)
        .collect::<Vec<_>>()
        .into_iter();
    assert_eq!(lines.next().unwrap_or_default(), all[2..6].join(","), "{t}");
    assert_eq!(lines.next().unwrap_or_default(), "53", "{t}");

    // Ranged retrieval of a 12-value attribute with MaxValRange 5.
    let members: String = (0..12)
        .map(|i| format!("member: cn=User {i},ou=People,{BASE}\n"))
        .collect();
    let group = format!("dn: cn=Big,{BASE}\nobjectClass: group\ncn: Big\n{members}\n");
    let o = ldap("ldapadd", &admin(&s, &[]), Some(&group));
    assert!(o.status.success(), "{}", text(&o));
    let o = ldap(
        "ldapsearch",
        &admin(
            &s,
            &[
                "-b",
                &format!("cn=Big,{BASE}"),
                "-s",
                "base",
                "(objectClass=*)",
                "member",
            ],
        ),
        None,
    );
    let t = text(&o);
    assert!(t.contains("member;range=0-4: "), "{t}");
    assert_eq!(t.matches("member;range=0-4: ").count(), 5, "{t}");
    let o = ldap(
        "ldapsearch",
        &admin(
            &s,
            &[
                "-b",
                &format!("cn=Big,{BASE}"),
                "-s",
                "base",
                "(objectClass=*)",
                "member;range=10-*",
            ],
        ),
        None,
    );
    let t = text(&o);
    assert_eq!(t.matches("member;range=10-*: ").count(), 2, "{t}");

    // Extended DN (string form) shows the GUID and SID before the DN.
    let m = format!(
        "dn: cn=User 1,ou=People,{BASE}\nchangetype: modify\nadd: objectGUID\nobjectGUID:: AAECAwQFBgcICQoLDA0ODw==\n-\nadd: objectSid\nobjectSid: S-1-5-21-1-2-3-1001\n\n"
    );
    let o = ldap("ldapmodify", &admin(&s, &[]), Some(&m));
    assert!(o.status.success(), "{}", text(&o));
    let o = ldap(
        "ldapsearch",
        &admin(
            &s,
            &[
                "-E",
                "1.2.840.113556.1.4.529=::MAMCAQE=",
                "-b",
                BASE,
                "(uid=user1)",
                "dn",
            ],
        ),
        None,
    );
    let t = text(&o);
    use base64::Engine;
    let b64: String = t
        .split("dn:: ")
        .nth(1)
        .unwrap_or_default()
        .split("\n\n")
        .next()
        .unwrap_or_default()
        .lines()
        .map(str::trim)
        .collect();
    let dn = String::from_utf8(
        base64::engine::general_purpose::STANDARD
            .decode(b64)
            .unwrap(),
    )
    .unwrap();
    assert!(
        dn.starts_with(
            "<GUID=03020100-0504-0706-0809-0a0b0c0d0e0f>;<SID=S-1-5-21-1-2-3-1001>;cn=User 1"
        ),
        "{dn}"
    );
}

#[test]
fn metrics_endpoint_counts_what_happened() {
    let s = start(|_| {});
    let o = ldap(
        "ldapsearch",
        &admin(&s, &["-b", BASE, "(uid=user1)", "uid"]),
        None,
    );
    assert!(o.status.success(), "{}", text(&o));
    let o = ldap(
        "ldapadd",
        &admin(&s, &[]),
        Some(&format!("dn: cn=M,{BASE}\ncn: M\n\n")),
    );
    assert!(o.status.success(), "{}", text(&o));
    let o = ldap("ldapwhoami", &admin(&s, &[]), None);
    assert!(o.status.success(), "{}", text(&o));
    let mut sock = TcpStream::connect(("127.0.0.1", s.metrics_port)).unwrap();
    sock.write_all(b"GET /metrics HTTP/1.1\r\nhost: x\r\n\r\n")
        .unwrap();
    let body = String::from_utf8(read_until_closed(sock)).unwrap();
    assert!(body.starts_with("HTTP/1.1 200"), "{body}");
    for needle in [
        "kauri_ldap_requests_total{op=\"search\",outcome=\"success\"} 1",
        "kauri_ldap_requests_total{op=\"add\",outcome=\"success\"} 1",
        "kauri_ldap_requests_total{op=\"extended\",outcome=\"success\"} 1",
        "kauri_ldap_requests_total{op=\"bind\",outcome=\"success\"} 3",
        "kauri_ldap_request_duration_seconds_bucket{op=\"search\",le=\"+Inf\"} 1",
        "kauri_writer_commits_total 1",
        "kauri_writer_batch_size_bucket{le=\"1\"} 1",
        "kauri_ldap_connections_total 3",
        "\nkauri_db_unindexed_searches_total ",
    ] {
        assert!(body.contains(needle), "missing {needle}:\n{body}");
    }
}

#[test]
fn python_ldap_the_openldap_binding() {
    let s = start(|_| {});
    let script = format!(
        r#"
import ldap
from ldap.controls import SimplePagedResultsControl
c = ldap.initialize("ldap://127.0.0.1:{port}")
c.protocol_version = 3
c.simple_bind_s("{admin}", "{pw}")
c.add_s("cn=PyLdap,{base}", [("objectClass", [b"person"]), ("cn", [b"PyLdap"]), ("sn", [b"Ldap"])])
try:
    c.add_s("cn=PyLdap,{base}", [("objectClass", [b"person"]), ("cn", [b"PyLdap"])])
    raise SystemExit("duplicate add succeeded")
except ldap.ALREADY_EXISTS:
    pass
page = SimplePagedResultsControl(True, size=4, cookie=b"")
dns = []
while True:
    msgid = c.search_ext("{base}", ldap.SCOPE_SUBTREE, "(objectClass=*)", ["cn"], serverctrls=[page])
    _, data, _, ctrls = c.result3(msgid)
    dns += [dn for dn, _ in data]
    cookie = [x for x in ctrls if x.controlType == SimplePagedResultsControl.controlType][0].cookie
    if not cookie:
        break
    page.cookie = cookie
assert len(dns) == len(set(dns)) == 15, dns
c.modify_s("cn=PyLdap,{base}", [(ldap.MOD_REPLACE, "description", [b"set"])])
assert c.compare_s("cn=PyLdap,{base}", "description", b"SET")
c.rename_s("cn=PyLdap,{base}", "cn=PyLdap2")
c.delete_s("cn=PyLdap2,{base}")
assert c.whoami_s() == "dn:{admin}"
print("ok")
"#,
        port = s.port,
        admin = ADMIN,
        pw = PW,
        base = BASE
    );
    // Debian's python3-ldap installs for the system interpreter.
    python(
        "/usr/bin/python3",
        &script,
        "python-ldap (apt-get install python3-ldap)",
    );
}

#[test]
fn go_ldap_client() {
    let s = start(|_| {});
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/go-client");
    let bin = s.data.path().join("go-client");
    let o = Command::new("go")
        .args(["build", "-o"])
        .arg(&bin)
        .arg(".")
        .current_dir(&dir)
        .output()
        .expect("the go toolchain");
    assert!(o.status.success(), "go build: {}", text(&o));
    let ca = s.ca();
    let o = Command::new(&bin)
        .args([s.uri().as_str(), ADMIN, PW, BASE])
        .arg(&ca)
        .output()
        .unwrap();
    assert!(
        o.status.success() && String::from_utf8_lossy(&o.stdout).contains("ok"),
        "go-ldap: {}",
        text(&o)
    );
}

#[test]
fn idle_connections_are_closed_with_a_notice() {
    let s = start(|c| c.idle_timeout_secs = 1);
    let sock = TcpStream::connect(("127.0.0.1", s.port)).unwrap();
    let started = std::time::Instant::now();
    let got = read_until_closed(sock);
    assert!(
        got.windows(22).any(|w| w == b"1.3.6.1.4.1.1466.20036"),
        "{got:?}"
    );
    assert!(started.elapsed() < Duration::from_secs(4));
}

#[test]
fn pipelined_requests_and_abandon_on_one_connection() {
    let s = start(|_| {});
    let script = format!(
        r#"
import ldap
c = ldap.initialize("ldap://127.0.0.1:{port}")
c.simple_bind_s("{admin}", "{pw}")
m1 = c.search_ext("{base}", ldap.SCOPE_SUBTREE, "(objectClass=*)", ["cn"])
m2 = c.search_ext("{base}", ldap.SCOPE_SUBTREE, "(uid=user1)", ["uid"])
m3 = c.compare_ext("cn=User 2,ou=People,{base}", "uid", b"user2")
_, two, _, _ = c.result3(m2)
_, one, _, _ = c.result3(m1)
assert len(one) == 14 and len(two) == 1, (len(one), len(two))
try:
    c.result3(m3)
    raise SystemExit("compare did not report its outcome")
except ldap.COMPARE_TRUE:
    pass
m4 = c.search_ext("{base}", ldap.SCOPE_SUBTREE, "(objectClass=*)", ["cn"])
c.abandon(m4)
assert c.whoami_s() == "dn:{admin}"
print("ok")
"#,
        port = s.port,
        admin = ADMIN,
        pw = PW,
        base = BASE
    );
    python("/usr/bin/python3", &script, "{}");
}

#[test]
fn tls_certificate_and_key_from_files() {
    let first = start(|_| {});
    let cert = first.data.path().join("tls/cert.pem");
    let key = first.data.path().join("tls/key.pem");
    let second = start(|c| {
        c.tls_cert = cert.clone();
        c.tls_key = key.clone();
    });
    assert!(
        !second.data.path().join("tls").exists(),
        "a pair was generated although files were given"
    );
    let ca = first.ca();
    let o = run(
        "ldapwhoami",
        &["-x", "-H", &second.tls_uri(), "-D", ADMIN, "-w", PW],
        None,
        &[("LDAPTLS_CACERT", ca.as_path())],
    );
    assert!(text(&o).contains(&format!("dn:{ADMIN}")), "{}", text(&o));
}

#[test]
fn sasl_external_on_the_local_socket_and_sasl_plain() {
    let socket_dir = tempfile::tempdir().unwrap();
    let socket = socket_dir.path().join("ldapi");
    let sock = socket.clone();
    let s = start(move |c| c.listen_ldapi = sock);
    let uri = format!(
        "ldapi://{}",
        socket.display().to_string().replace('/', "%2F")
    );
    // EXTERNAL: this test runs as the server's own user, so it administers.
    let o = run(
        "ldapwhoami",
        &["-Q", "-Y", "EXTERNAL", "-H", &uri],
        None,
        &[],
    );
    let t = text(&o);
    assert!(o.status.success(), "{t}");
    assert!(t.contains("cn=peercred,cn=external,cn=auth"), "{t}");
    let o = run(
        "ldapadd",
        &["-Q", "-Y", "EXTERNAL", "-H", &uri],
        Some(&format!("dn: cn=Local,{BASE}\ncn: Local\n\n")),
        &[],
    );
    assert!(o.status.success(), "{}", text(&o));
    // EXTERNAL is refused over TCP.
    let o = run(
        "ldapwhoami",
        &["-Q", "-Y", "EXTERNAL", "-H", &s.uri()],
        None,
        &[],
    );
    assert!(!o.status.success(), "{}", text(&o));
    // PLAIN, with python ldap3.
    let script = format!(
        r#"
import ldap3
server = ldap3.Server("127.0.0.1", port={port}, get_info=ldap3.NONE)
c = ldap3.Connection(server, authentication=ldap3.SASL, sasl_mechanism=ldap3.PLAIN, sasl_credentials=(None, "dn:{admin}", "{pw}"))
assert c.bind(), c.result
assert c.extend.standard.who_am_i() == "dn:{admin}"
bad = ldap3.Connection(server, authentication=ldap3.SASL, sasl_mechanism=ldap3.PLAIN, sasl_credentials=(None, "dn:{admin}", "wrong"))
assert not bad.bind() and bad.result["result"] == 49, bad.result
print("ok")
"#,
        port = s.port,
        admin = ADMIN,
        pw = PW
    );
    python("python3", &script, "{}");
}

#[test]
fn ldappasswd_admin_reset_and_self_change() {
    let s = start(|_| {});
    let user = format!("cn=User 5,ou=People,{BASE}");
    // The administrator sets a password.
    let o = ldap("ldappasswd", &admin(&s, &["-s", "reset-pw", &user]), None);
    assert!(o.status.success(), "{}", text(&o));
    let o = run(
        "ldapwhoami",
        &["-x", "-H", &s.uri(), "-D", &user, "-w", "reset-pw"],
        None,
        &[],
    );
    assert!(text(&o).contains(&format!("dn:{user}")), "{}", text(&o));
    // The user changes it, proving the old one; a wrong old password is refused.
    let o = run(
        "ldappasswd",
        &[
            "-x",
            "-H",
            &s.uri(),
            "-D",
            &user,
            "-w",
            "reset-pw",
            "-a",
            "wrong",
            "-s",
            "mine",
        ],
        None,
        &[],
    );
    assert!(!o.status.success(), "{}", text(&o));
    let o = run(
        "ldappasswd",
        &[
            "-x",
            "-H",
            &s.uri(),
            "-D",
            &user,
            "-w",
            "reset-pw",
            "-a",
            "reset-pw",
            "-s",
            "mine",
        ],
        None,
        &[],
    );
    assert!(o.status.success(), "{}", text(&o));
    let o = run(
        "ldapwhoami",
        &["-x", "-H", &s.uri(), "-D", &user, "-w", "mine"],
        None,
        &[],
    );
    assert!(o.status.success(), "{}", text(&o));
    // Without a new password the server generates one and returns it.
    let o = ldap("ldappasswd", &admin(&s, &[&user]), None);
    let t = text(&o);
    assert!(o.status.success() && t.contains("New password: "), "{t}");
    let generated = t
        .split("New password: ")
        .nth(1)
        .unwrap_or_default()
        .trim()
        .to_string();
    let o = run(
        "ldapwhoami",
        &["-x", "-H", &s.uri(), "-D", &user, "-w", &generated],
        None,
        &[],
    );
    assert!(o.status.success(), "{}", text(&o));
}

#[test]
fn subschema_is_published_and_python_ldap3_reads_it() {
    let s = start(|_| {});
    let dse = run(
        "ldapsearch",
        &[
            "-x",
            "-o",
            "ldif-wrap=no",
            "-H",
            &s.uri(),
            "-b",
            "",
            "-s",
            "base",
            "subschemaSubentry",
        ],
        None,
        &[],
    );
    let subschema = format!("CN=Aggregate,CN=Schema,CN=Configuration,{BASE}");
    assert!(
        text(&dse).contains(&format!("subschemaSubentry: {subschema}")),
        "{}",
        text(&dse)
    );
    let o = run(
        "ldapsearch",
        &[
            "-x",
            "-o",
            "ldif-wrap=no",
            "-H",
            &s.uri(),
            "-b",
            &subschema,
            "-s",
            "base",
            "(objectClass=*)",
            "attributeTypes",
            "objectClasses",
        ],
        None,
        &[],
    );
    let t = text(&o);
    assert!(o.status.success(), "{t}");
    assert!(
        t.contains("attributeTypes: ( 1.2.840.113556.1.4.221 NAME 'sAMAccountName'"),
        "{t}"
    );
    assert!(
        t.contains("objectClasses: ( 1.2.840.113556.1.5.9 NAME 'user'"),
        "{t}"
    );
    // A generic client parses the whole schema from it.
    let script = format!(
        r#"
import ldap3
server = ldap3.Server("127.0.0.1", port={port}, get_info=ldap3.ALL)
c = ldap3.Connection(server, user="{admin}", password="{pw}", auto_bind=True)
assert server.schema is not None, "no schema read"
at = server.schema.attribute_types
assert "sAMAccountName" in at and at["sAMAccountName"].single_value, at.get("sAMAccountName")
assert "member" in at and "user" in server.schema.object_classes
assert len(at) > 200, len(at)
print("ok")
"#,
        port = s.port,
        admin = ADMIN,
        pw = PW
    );
    python("python3", &script, "python ldap3 reading the schema");
}

#[test]
fn unknown_attributes_and_accepted_ad_controls() {
    let s = start(|_| {});
    let o = ldap(
        "ldapadd",
        &admin(&s, &[]),
        Some(&format!(
            "dn: cn=Odd,{BASE}\nobjectClass: person\ncn: Odd\nnoSuchAttributeAnywhere: x\n\n"
        )),
    );
    assert_eq!(o.status.code(), Some(17), "{}", text(&o));
    let o = ldap(
        "ldapmodify",
        &admin(&s, &[]),
        Some(&format!("dn: cn=User 1,ou=People,{BASE}\nchangetype: modify\nreplace: notInTheSchema\nnotInTheSchema: y\n\n")),
    );
    assert_eq!(o.status.code(), Some(17), "{}", text(&o));
    // Attribute options do not hide the attribute from the schema check.
    let o = ldap(
        "ldapmodify",
        &admin(&s, &[]),
        Some(&format!("dn: cn=User 1,ou=People,{BASE}\nchangetype: modify\nreplace: description;lang-en\ndescription;lang-en: hello\n\n")),
    );
    assert!(o.status.success(), "{}", text(&o));
    // Domain scope, search options (SERVER_SEARCH_FLAG_DOMAIN_SCOPE) and show deleted are
    // accepted even when critical.
    for control in [
        "!1.2.840.113556.1.4.1339",
        "!1.2.840.113556.1.4.1340=::MAMCAQE=",
        "!1.2.840.113556.1.4.417",
    ] {
        let o = ldap(
            "ldapsearch",
            &admin(&s, &["-E", control, "-b", BASE, "(uid=user2)", "uid"]),
            None,
        );
        assert!(
            o.status.success() && text(&o).contains("uid: user2"),
            "{control}: {}",
            text(&o)
        );
    }
}
