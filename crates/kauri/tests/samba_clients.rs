//! Samba's own tools against a domain provisioned and served by the `kauri` binary, run
//! unmodified with a simple bind: smbtorture's LDAP tests from Debian's samba-testsuite
//! (the schema read through paged searches of the Schema NC, server-side sort, a search
//! nested inside another on one connection, modifies of every naming context's head), and
//! `samba-tool` managing users, groups and computers over `ldap://`.

mod common;

use std::process::Command;

use common::{provision, serve, Served, PASSWORD};
use kauri_domain::security::SecurityDescriptor;
use kauri_domain::sid::Sid;

const ADMIN: &str = "CN=Administrator,CN=Users,DC=samdom,DC=example,DC=com";
const TESTS: [&str; 4] = [
    "ldap.schema",
    "ldap.sort",
    "ldap.nested-search",
    "ldap.uptodatevector",
];

/// A provisioned domain served on free ports, and a Samba client configuration that
/// trusts the server's own authority (its certificate names localhost): its folder, the
/// server, and the `host:port` of plain LDAP and of LDAPS.
fn serve_domain() -> (tempfile::TempDir, Served, String, String) {
    let dir = tempfile::tempdir().unwrap();
    let data = provision(dir.path(), "domain");
    let server = serve(&data);
    let conf = dir.path().join("client.conf");
    std::fs::write(
        &conf,
        format!(
            "[global]\n\tworkgroup = SAMDOM\n\trealm = SAMDOM.EXAMPLE.COM\n\ttls cafile = {}\n\ttls verify peer = ca_only\n",
            server.ca.display()
        ),
    )
    .unwrap();
    let (addr, tls_addr) = (server.addr.clone(), server.tls_addr.clone());
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
        String::from_utf8_lossy(&bind.stdout).contains("u:SAMDOM\\alice"),
        "{}",
        String::from_utf8_lossy(&bind.stderr)
    );
    tls(&["group", "removemembers", "Domain Admins", "alice"]);
    tls(&["user", "delete", "alice"]);
    assert!(!tls(&["user", "list"]).lines().any(|l| l == "alice"));
}

/// `samba-tool` as administrators run it, `-U user%password`: SASL GSS-SPNEGO with NTLM,
/// the connection sealed (Samba's default) or signed, and password changes allowed on the
/// sealed plain connection as AD allows them (the server refuses them on plain LDAP).
#[test]
fn samba_tool_dsacl_reads_and_writes_descriptors_that_round_trip() {
    let (dir, _server, addr, _) = serve_domain();
    let conf = dir.path().join("client.conf");
    let dsacl = |args: &[&str]| {
        let o = Command::new("samba-tool")
            .arg("dsacl")
            .args(args)
            .arg("-H")
            .arg(format!("ldap://{addr}"))
            .arg("-s")
            .arg(&conf)
            .arg(format!("--simple-bind-dn={ADMIN}"))
            .arg(format!("--password={PASSWORD}"))
            .output()
            .unwrap_or_else(|e| panic!("cannot run samba-tool: {e}"));
        let text = String::from_utf8_lossy(&o.stdout).to_string();
        assert!(
            o.status.success(),
            "samba-tool dsacl {args:?}: {text}{}",
            String::from_utf8_lossy(&o.stderr)
        );
        text
    };
    let sddl_of = |dn: &str| -> String {
        let out = dsacl(&["get", &format!("--objectdn={dn}")]);
        out.lines()
            .find(|l| l.starts_with("O:"))
            .unwrap_or_else(|| panic!("no descriptor in {out}"))
            .to_string()
    };
    let users = "CN=Users,DC=samdom,DC=example,DC=com";
    let guest = "CN=Guest,CN=Users,DC=samdom,DC=example,DC=com";
    let before = sddl_of(users);
    assert!(before.starts_with("O:DAG:DAD:AI("), "{before}");
    // A delegation: reset passwords of the users below, granted to a helpdesk SID.
    let ace = "(OA;CI;CR;00299570-246d-11d0-a768-00aa006e0529;bf967aba-0de6-11d0-a285-00aa003049e2;S-1-5-21-1-2-3-2000)";
    dsacl(&[
        "set",
        &format!("--objectdn={users}"),
        &format!("--sddl={ace}"),
    ]);
    let after = sddl_of(users);
    assert!(after.contains(ace), "{after}");
    // The rest of the descriptor is as it was.
    assert_eq!(after.replacen(ace, "", 1), before);
    // The children inherit it at once.
    let inherited = ace.replacen("OA;CI;", "OA;CIID;", 1);
    assert!(sddl_of(guest).contains(&inherited));
    // Read back and written unchanged, a descriptor stays byte for byte the same.
    dsacl(&[
        "set",
        &format!("--objectdn={users}"),
        &format!("--sddl={ace}"),
    ]);
    assert_eq!(sddl_of(users), after);

    // As AD: `*` leaves the descriptor out unless the SD flags control is sent; named, it
    // comes whole.
    let search = |attrs: &[&str]| -> String {
        let mut c = Command::new("ldapsearch");
        c.args(["-x", "-LLL", "-o", "ldif-wrap=no", "-H"])
            .arg(format!("ldap://{addr}"))
            .args(["-D", ADMIN, "-w", PASSWORD, "-s", "base", "-b", guest]);
        let o = c.arg("(objectClass=*)").args(attrs).output().unwrap();
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        String::from_utf8_lossy(&o.stdout).to_string()
    };
    let sd_value = |ldif: &str| -> Option<Vec<u8>> {
        use base64::Engine;
        ldif.lines()
            .find_map(|l| l.strip_prefix("nTSecurityDescriptor:: "))
            .map(|b| base64::engine::general_purpose::STANDARD.decode(b).unwrap())
    };
    assert!(sd_value(&search(&["*"])).is_none());
    let whole = sd_value(&search(&["nTSecurityDescriptor"])).unwrap();
    let sid = Sid::parse("S-1-5-21-1-2-3").unwrap();
    let sd = SecurityDescriptor::from_bytes(&whole).unwrap();
    assert!(sd.owner.is_some() && sd.dacl.is_some());
    // With flags 4 (30 03 02 01 04: SEQUENCE { INTEGER 4 }, sent by python ldap3), `*`
    // brings the DACL alone.
    let script = format!(
        "import ldap3, base64\n\
         s = ldap3.Server('{addr}')\n\
         c = ldap3.Connection(s, user='{ADMIN}', password='{PASSWORD}', auto_bind=True)\n\
         c.search('{guest}', '(objectClass=*)', search_scope=ldap3.BASE, attributes=['*'],\n\
             controls=[('1.2.840.113556.1.4.801', True, b'\\x30\\x03\\x02\\x01\\x04')])\n\
         print(base64.b64encode(c.entries[0]['nTSecurityDescriptor'].raw_values[0]).decode())\n"
    );
    let o = Command::new("python3")
        .arg("-c")
        .arg(&script)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let part = {
        use base64::Engine;
        base64::engine::general_purpose::STANDARD
            .decode(String::from_utf8_lossy(&o.stdout).trim())
            .unwrap()
    };
    let part = SecurityDescriptor::from_bytes(&part).unwrap();
    assert!(part.owner.is_none() && part.group.is_none() && part.sacl.is_none());
    assert_eq!(
        part.dacl.map(|d| d.aces.len()),
        sd.dacl.as_ref().map(|d| d.aces.len())
    );
    assert!(sd.to_sddl(&sid).unwrap().contains(&inherited));
}

#[test]
fn samba_tool_binds_with_ntlm_and_seals_or_signs() {
    let (dir, _server, addr, _) = serve_domain();
    let conf = dir.path().join("client.conf");
    let url = format!("ldap://{addr}");
    let tool_with = |wrapping: &str, args: &[&str]| {
        let o = Command::new("samba-tool")
            .args(args)
            .arg("-H")
            .arg(&url)
            .arg("-s")
            .arg(&conf)
            .arg(format!("-UAdministrator%{PASSWORD}"))
            .arg(format!("--option=client ldap sasl wrapping = {wrapping}"))
            .output()
            .unwrap_or_else(|e| panic!("cannot run samba-tool (install samba-common-bin): {e}"));
        let text = String::from_utf8_lossy(&o.stdout).to_string();
        let err = String::from_utf8_lossy(&o.stderr).to_string();
        (o.status.success(), text, err)
    };
    let tool = |wrapping: &str, args: &[&str]| {
        let (ok, text, err) = tool_with(wrapping, args);
        assert!(ok, "samba-tool {args:?} ({wrapping}): {text}{err}");
        text
    };
    for wrapping in ["seal", "sign"] {
        let users = tool(wrapping, &["user", "list"]);
        assert!(users.lines().any(|l| l == "Administrator"), "{users}");
    }
    tool("seal", &["user", "create", "bob", "B0b.Passw0rd.1"]);
    tool("seal", &["group", "addmembers", "Domain Admins", "bob"]);
    assert!(tool("sign", &["group", "listmembers", "Domain Admins"])
        .lines()
        .any(|l| l == "bob"));
    tool(
        "seal",
        &["user", "setpassword", "bob", "--newpassword=B0b.Passw0rd.2"],
    );
    tool("seal", &["user", "disable", "bob"]);
    let shown = tool("sign", &["user", "show", "bob"]);
    assert!(shown.contains("userAccountControl: 514"), "{shown}");
    tool("seal", &["user", "enable", "bob"]);
    tool(
        "seal",
        &[
            "domain",
            "passwordsettings",
            "pso",
            "create",
            "pso1",
            "1",
            "--min-pwd-length=10",
        ],
    );
    tool(
        "seal",
        &["domain", "passwordsettings", "pso", "apply", "pso1", "bob"],
    );
    assert!(tool(
        "seal",
        &["domain", "passwordsettings", "pso", "show-user", "bob"]
    )
    .contains("pso1"));
    assert!(tool(
        "seal",
        &["domain", "passwordsettings", "pso", "show", "pso1"]
    )
    .contains("Minimum password length: 10"));
    // The domain's own settings, read and changed.
    assert!(tool("seal", &["domain", "passwordsettings", "show"]).contains("Password complexity"));
    tool(
        "seal",
        &["domain", "passwordsettings", "set", "--min-pwd-length=9"],
    );
    assert!(tool("sign", &["domain", "passwordsettings", "show"])
        .contains("Minimum password length: 9"));
    // Groups, OUs and computers.
    tool("seal", &["group", "add", "Crew"]);
    assert!(tool("sign", &["group", "list"])
        .lines()
        .any(|l| l == "Crew"));
    tool("seal", &["group", "addmembers", "Crew", "bob"]);
    tool("seal", &["group", "removemembers", "Crew", "bob"]);
    assert!(!tool("sign", &["group", "listmembers", "Crew"])
        .lines()
        .any(|l| l == "bob"));
    tool("seal", &["ou", "create", "OU=Fleet"]);
    assert!(tool("sign", &["ou", "list"])
        .lines()
        .any(|l| l == "OU=Fleet"));
    tool("seal", &["computer", "create", "ship1"]);
    assert!(tool("sign", &["computer", "list"])
        .lines()
        .any(|l| l == "ship1$"));
    tool("seal", &["computer", "delete", "ship1"]);
    tool("seal", &["ou", "delete", "OU=Fleet"]);
    tool("seal", &["group", "delete", "Crew"]);
    // Password hashes never leave the server, even to an administrator on a sealed
    // connection (`samba-tool user getpassword` reads them from a local database only).
    let secrets = Command::new("ldbsearch")
        .args(["-H", &url, "--configfile"])
        .arg(&conf)
        .arg(format!("-UAdministrator%{PASSWORD}"))
        .args(["-b", "DC=samdom,DC=example,DC=com", "(sAMAccountName=bob)"])
        .args([
            "unicodePwd",
            "supplementalCredentials",
            "dBCSPwd",
            "sAMAccountName",
        ])
        .output()
        .expect("run ldbsearch");
    let text = String::from_utf8_lossy(&secrets.stdout);
    assert!(text.contains("sAMAccountName: bob"), "{text}");
    for secret in ["unicodePwd", "supplementalCredentials", "dBCSPwd"] {
        assert!(!text.contains(secret), "{secret} read: {text}");
    }
    // The new user binds with NTLM too; a wrong password is AD's 52e.
    let bob = |pass: &str| {
        Command::new("samba-tool")
            .args(["user", "list", "-H", &url, "-s"])
            .arg(&conf)
            .arg(format!("-Ubob%{pass}"))
            .output()
            .unwrap()
    };
    assert!(bob("B0b.Passw0rd.2").status.success());
    let wrong = bob("wrong-password");
    assert!(!wrong.status.success());
    assert!(
        String::from_utf8_lossy(&wrong.stderr).contains("data 52e"),
        "{}",
        String::from_utf8_lossy(&wrong.stderr)
    );
    tool("seal", &["user", "delete", "bob"]);
}

/// The LDAP ping as Samba's smbtorture checks it over LDAP (its CLDAP tests need port 389
/// and run in scripts/samba-conformance), the same ping over CLDAP on the LDAP port, and
/// CLDAP never answering with more than a few times what it was sent.
#[test]
fn ldap_pings_answer_smbtorture_and_cldap_does_not_amplify() {
    use kauri_ldap_proto::decode::decode_message;
    use kauri_ldap_proto::encode::encode_message;
    use kauri_ldap_proto::{DerefAliases, LdapMessage, ProtocolOp, SearchRequest, SearchScope};

    let (dir, _server, addr, _) = serve_domain();
    let conf = dir.path().join("client.conf");
    let tests = ["ldap.netlogon-tcp"];
    let o = Command::new("smbtorture")
        .arg(format!("//{addr}/_none_"))
        .arg("-s")
        .arg(&conf)
        .args(tests)
        .output()
        .unwrap_or_else(|e| panic!("cannot run smbtorture (install samba-testsuite): {e}"));
    let out = String::from_utf8_lossy(&o.stdout);
    for t in tests {
        let name = t.trim_start_matches("ldap.");
        assert!(
            out.lines().any(|l| l == format!("success: {name}")),
            "{t}: {out}{}",
            String::from_utf8_lossy(&o.stderr)
        );
    }
    let root_dse = |filter: kauri_db::Filter, attributes: &[&str]| {
        encode_message(&LdapMessage {
            id: 9,
            op: ProtocolOp::SearchRequest(SearchRequest {
                base: String::new(),
                scope: SearchScope::Base,
                deref: DerefAliases::Never,
                size_limit: 0,
                time_limit: 0,
                types_only: false,
                filter,
                attributes: attributes.iter().map(|a| a.to_string()).collect(),
            }),
            controls: Vec::new(),
        })
    };
    let sock = std::net::UdpSocket::bind("127.0.0.1:0").unwrap();
    sock.set_read_timeout(Some(std::time::Duration::from_millis(500)))
        .unwrap();
    let mut buf = [0u8; 65536];
    // The first message of a datagram (an answer holds the entry, then the done message).
    let first = |d: &[u8]| {
        let len = kauri_ldap_proto::codec::frame_len(d, d.len())
            .unwrap()
            .unwrap();
        decode_message(&d[..len]).unwrap()
    };
    // A ping for the domain, extended response asked for: LOGON_SAM_LOGON_RESPONSE_EX (23)
    // naming the domain.
    let ping = root_dse(
        kauri_db::Filter::And(vec![
            kauri_db::Filter::Equality("DnsDomain".into(), b"samdom.example.com".to_vec()),
            kauri_db::Filter::Equality("NtVer".into(), vec![6, 0, 0, 0]),
        ]),
        &["Netlogon"],
    );
    sock.send_to(&ping, &addr).unwrap();
    let n = sock.recv(&mut buf).expect("an answer to the ping");
    let ProtocolOp::SearchResultEntry(e) = first(&buf[..n]).op else {
        panic!("no entry for the ping");
    };
    let blob = &e.attributes[0].values[0];
    assert_eq!(&blob[..2], &23u16.to_le_bytes());
    assert!(blob.windows(6).any(|w| w == b"samdom"), "{blob:?}");
    // A ping for another domain: the done message alone.
    let other = root_dse(
        kauri_db::Filter::Equality("DnsDomain".into(), b"other.example".to_vec()),
        &["Netlogon"],
    );
    sock.send_to(&other, &addr).unwrap();
    let n = sock.recv(&mut buf).expect("an answer to the ping");
    assert!(matches!(
        first(&buf[..n]).op,
        ProtocolOp::SearchResultDone(_)
    ));
    // The whole root DSE asked for over UDP: an answer within four times the request.
    let request = root_dse(kauri_db::Filter::Present("objectClass".into()), &[]);
    sock.send_to(&request, &addr).unwrap();
    let n = sock.recv(&mut buf).expect("a CLDAP answer");
    assert!(n <= 4 * request.len(), "{n} bytes for {}", request.len());
    let entry = first(&buf[..n]);
    assert!(
        matches!(entry.op, ProtocolOp::SearchResultEntry(_)),
        "{entry:?}"
    );
    // Garbage gets no answer at all.
    sock.send_to(b"\x30\x05garbage", &addr).unwrap();
    assert!(sock.recv(&mut buf).is_err());
}

/// The global catalog with OpenLDAP's ldapsearch: the whole forest from the empty base,
/// only the partial attribute set, and no writes.
#[test]
fn global_catalog_serves_the_forest_read_only() {
    let (_dir, server, addr, _) = serve_domain();
    let gc = server.gc_addr.clone().expect("a global catalog port");
    let search = |at: &str, base: &str, filter: &str, attrs: &[&str]| {
        let o = Command::new("ldapsearch")
            .args([
                "-x",
                "-LLL",
                "-o",
                "ldif-wrap=no",
                "-H",
                &format!("ldap://{at}"),
            ])
            .args(["-D", ADMIN, "-w", PASSWORD, "-b", base, filter])
            .args(attrs)
            .output()
            .expect("run ldapsearch (install ldap-utils)");
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        String::from_utf8_lossy(&o.stdout).to_string()
    };
    // From the empty base: the domain's users and the configuration's objects alike.
    let admin = search(
        &gc,
        "",
        "(sAMAccountName=Administrator)",
        &["sAMAccountName", "adminCount"],
    );
    assert!(
        admin.contains("dn: CN=Administrator,CN=Users,DC=samdom"),
        "{admin}"
    );
    assert!(admin.contains("sAMAccountName: Administrator"), "{admin}");
    // adminCount is outside the partial attribute set: the domain port shows it, the GC not.
    assert!(!admin.contains("adminCount"), "{admin}");
    let full = search(
        &addr,
        "DC=samdom,DC=example,DC=com",
        "(sAMAccountName=Administrator)",
        &["adminCount"],
    );
    assert!(full.contains("adminCount: 1"), "{full}");
    let partitions = search(&gc, "", "(objectClass=crossRef)", &["1.1"]);
    assert!(
        partitions.contains("CN=Partitions,CN=Configuration"),
        "{partitions}"
    );
    // Group memberships travel with the partial set (member is in it, memberOf follows).
    let member_of = search(&gc, "", "(sAMAccountName=Administrator)", &["memberOf"]);
    assert!(
        member_of.contains("memberOf: CN=Domain Admins"),
        "{member_of}"
    );
    let ready = search(
        &gc,
        "",
        "(objectClass=*)",
        &["-s", "base", "isGlobalCatalogReady"],
    );
    assert!(ready.contains("isGlobalCatalogReady: TRUE"), "{ready}");
    // Writes go to the domain port.
    let mut modify = Command::new("ldapmodify")
        .args([
            "-x",
            "-H",
            &format!("ldap://{gc}"),
            "-D",
            ADMIN,
            "-w",
            PASSWORD,
        ])
        .stdin(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .stdout(std::process::Stdio::null())
        .spawn()
        .unwrap();
    use std::io::Write;
    modify
        .stdin
        .take()
        .unwrap()
        .write_all(
            format!("dn: {ADMIN}\nchangetype: modify\nreplace: description\ndescription: x\n")
                .as_bytes(),
        )
        .unwrap();
    let o = modify.wait_with_output().unwrap();
    assert!(!o.status.success());
    assert!(
        String::from_utf8_lossy(&o.stderr).contains("(53)"),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
}

/// Samba's ldb tools and python bindings over NTLM, unmodified: `ldbsearch` with Samba's
/// control strings, and `samba.samdb.SamDB` adding, changing, reading and deleting.
#[test]
fn ldbsearch_and_python_samdb_work_over_ntlm() {
    let (dir, _server, addr, _) = serve_domain();
    let conf = dir.path().join("client.conf");
    let url = format!("ldap://{addr}");
    let creds = format!("-UAdministrator%{PASSWORD}");
    let ldbsearch = |controls: &[&str]| {
        let mut c = Command::new("ldbsearch");
        c.args(["-H", &url, "--configfile"]).arg(&conf).arg(&creds);
        c.args(["-b", "CN=Users,DC=samdom,DC=example,DC=com"]);
        for ctl in controls {
            c.arg(format!("--controls={ctl}"));
        }
        let o = c
            .args(["(objectClass=user)", "cn"])
            .output()
            .unwrap_or_else(|e| panic!("cannot run ldbsearch (install ldb-tools): {e}"));
        let text = String::from_utf8_lossy(&o.stdout).to_string();
        assert!(
            o.status.success(),
            "{controls:?}: {text}{}",
            String::from_utf8_lossy(&o.stderr)
        );
        text
    };
    let count = |t: &str| t.lines().filter(|l| l.starts_with("dn: ")).count();
    // Administrator, Guest, krbtgt.
    for controls in [
        &["paged_results:1:1"][..],
        &["server_sort:1:0:cn"],
        &["extended_dn:1:1"],
        &["show_deleted:1"],
        &["search_options:1:2"],
    ] {
        assert_eq!(count(&ldbsearch(controls)), 3, "{controls:?}");
    }
    let extended = ldbsearch(&["extended_dn:1:1"]);
    assert!(extended.contains("dn: <GUID="), "{extended}");
    let window = ldbsearch(&["server_sort:1:0:cn", "vlv:1:0:1:1:0"]);
    assert_eq!(count(&window), 2, "{window}");
    let script = format!(
        r#"
from samba.samdb import SamDB
from samba.param import LoadParm
from samba.credentials import Credentials
lp = LoadParm()
lp.load("{conf}")
c = Credentials()
c.guess(lp)
c.set_username("Administrator")
c.set_password("{PASSWORD}")
s = SamDB("{url}", credentials=c, lp=lp)
dn = "CN=pyuser,CN=Users," + str(s.domain_dn())
s.add({{"dn": dn, "objectClass": "user", "sAMAccountName": "pyuser"}})
s.modify_ldif("dn: " + dn + "\nchangetype: modify\nreplace: description\ndescription: from python\n")
assert str(s.search(dn, attrs=["description"])[0]["description"][0]) == "from python"
s.delete(dn)
assert len(s.search(s.domain_dn(), expression="(sAMAccountName=pyuser)")) == 0
print("ok")
"#,
        conf = conf.display()
    );
    let o = Command::new("/usr/bin/python3")
        .args(["-c", &script])
        .output()
        .expect("run python3 with Debian's python3-samba");
    assert!(
        String::from_utf8_lossy(&o.stdout).contains("ok"),
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    );
}
