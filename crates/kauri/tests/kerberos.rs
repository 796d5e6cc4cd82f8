//! The KDC and the password-change service of a domain provisioned and served by the
//! `kauri` binary, driven by real, unmodified clients: MIT Kerberos's `kinit`, `kvno`,
//! `klist`, `kpasswd` and `ktutil` (Debian's krb5-user) over TCP and UDP, and impacket's
//! Kerberos client (through `tests/kerberos_impacket.py`), whose service ticket is
//! decrypted and its PAC read. Each test writes its own krb5.conf pointing at the served
//! ports, and creates its accounts over LDAPS as the Administrator.

mod common;

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use base64::Engine;
use common::{json, ok, provision, serve, whoami, Served, DOMAIN};

/// The realm every test domain serves.
const REALM: &str = "SAMDOM.EXAMPLE.COM";
/// How long one client command may take before the test gives up on it.
const COMMAND_TIMEOUT: Duration = Duration::from_secs(60);
/// The text MIT prints for a refused pre-authentication (KDC_ERR_PREAUTH_FAILED).
const PASSWORD_INCORRECT: &str = "Password incorrect";
/// The text MIT prints for KDC_ERR_CLIENT_REVOKED (disabled or locked-out accounts).
const REVOKED: &str = "Client's credentials have been revoked";

/// A provisioned domain served on free ports, with what the tests need to reach it.
struct Realm {
    dir: tempfile::TempDir,
    server: Served,
    /// `host:port` of the KDC.
    kdc: String,
    /// `host:port` of the password-change service.
    kpasswd: String,
    /// Numbers the clients and LDIF files of this realm.
    next: AtomicUsize,
}

/// What a client command did: whether it succeeded, what it printed (standard output,
/// then standard error) and the KRB5_TRACE it wrote.
struct Run {
    ok: bool,
    out: String,
    trace: String,
}

impl std::fmt::Display for Run {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "exit ok: {}\n--- output ---\n{}\n--- KRB5_TRACE ---\n{}",
            self.ok, self.out, self.trace
        )
    }
}

/// One MIT client configuration: its krb5.conf, credential cache and trace file.
struct Client {
    conf: PathBuf,
    ccache: PathBuf,
    dir: PathBuf,
}

impl Realm {
    /// Provisions SAMDOM.EXAMPLE.COM and serves it with its KDC and kpasswd service.
    fn new() -> Realm {
        let dir = tempfile::tempdir().unwrap();
        let data = provision(dir.path(), "domain");
        let server = serve(&data);
        let kdc = server
            .kdc_addr
            .clone()
            .expect("the server announced no KDC");
        let kpasswd = server
            .kpasswd_addr
            .clone()
            .expect("the server announced no password-change service");
        Realm {
            dir,
            server,
            kdc,
            kpasswd,
            next: AtomicUsize::new(0),
        }
    }

    /// A path in the realm's folder that no other caller gets.
    fn fresh_path(&self, stem: &str) -> PathBuf {
        let n = self.next.fetch_add(1, Ordering::Relaxed);
        self.dir.path().join(format!("{stem}{n}"))
    }

    /// A client whose krb5.conf points at this realm's KDC and kpasswd service; `udp`
    /// lets it try UDP first for every message (else it always uses TCP).
    fn client(&self, udp: bool) -> Client {
        let dir = self.fresh_path("client");
        std::fs::create_dir_all(&dir).unwrap();
        let conf = dir.join("krb5.conf");
        let limit = if udp { 32700 } else { 1 };
        std::fs::write(
            &conf,
            format!(
                "[libdefaults]\n\
                 \tdefault_realm = {REALM}\n\
                 \tdns_lookup_kdc = false\n\
                 \tdns_lookup_realm = false\n\
                 \trdns = false\n\
                 \tdns_canonicalize_hostname = false\n\
                 \tudp_preference_limit = {limit}\n\
                 \t# MIT announces that clients will refuse RC4 without this.\n\
                 \tallow_rc4 = true\n\
                 [realms]\n\
                 \t{REALM} = {{\n\
                 \t\tkdc = {kdc}\n\
                 \t\tkpasswd_server = {kpasswd}\n\
                 \t}}\n\
                 [domain_realm]\n\
                 \t.samdom.example.com = {REALM}\n\
                 \tsamdom.example.com = {REALM}\n",
                kdc = self.kdc,
                kpasswd = self.kpasswd,
            ),
        )
        .unwrap();
        Client {
            conf,
            ccache: dir.join("ccache"),
            dir,
        }
    }

    /// The arguments that make a `kauri` command act on this server as the Administrator.
    fn admin(&self) -> Vec<String> {
        self.server.as_admin(&self.server.ldaps())
    }

    /// Runs `kauri` with these arguments as the Administrator; its standard output.
    fn kauri(&self, args: &[&str]) -> String {
        let mut all: Vec<String> = args.iter().map(|a| a.to_string()).collect();
        all.extend(self.admin());
        ok(&all)
    }

    /// Creates an enabled user with a password (its UPN is `name@samdom.example.com`).
    fn add_user(&self, name: &str, password: &str) {
        self.kauri(&["user", "add", name, "--password", password]);
    }

    /// Applies LDIF change records over LDAPS as the Administrator.
    fn ldif(&self, text: &str) {
        let file = self.fresh_path("changes.ldif");
        std::fs::write(&file, text).unwrap();
        let out = json(&self.kauri(&["ldif", "import", file.to_str().unwrap(), "--json"]));
        assert_eq!(out["refused"], 0, "LDIF refused: {out}\n{text}");
    }

    /// Replaces attributes of the domain object (the default password and lockout policy).
    fn set_domain(&self, values: &[(&str, &str)]) {
        let mut text = format!("dn: {DOMAIN}\nchangetype: modify\n");
        for (attr, value) in values {
            text.push_str(&format!("replace: {attr}\n{attr}: {value}\n-\n"));
        }
        self.ldif(&text);
    }

    /// The first value of one of a user's attributes, read over LDAPS.
    fn user_attr(&self, user: &str, attr: &str) -> Option<String> {
        let shown = json(&self.kauri(&["user", "show", user, "--attributes", attr, "--json"]));
        shown[attr][0].as_str().map(str::to_string)
    }

    /// The objectSid of a user or group, as raw bytes.
    fn sid(&self, kind: &str, name: &str) -> Vec<u8> {
        let shown = json(&self.kauri(&[kind, "show", name, "--attributes", "objectSid", "--json"]));
        let b64 = shown["objectSid"][0]["base64"]
            .as_str()
            .unwrap_or_else(|| panic!("no objectSid for {kind} {name}: {shown}"));
        base64::engine::general_purpose::STANDARD
            .decode(b64)
            .unwrap()
    }

    /// The port of a `host:port` address.
    fn port(addr: &str) -> &str {
        addr.rsplit(':').next().unwrap()
    }
}

/// A SID's relative identifier (its last sub-authority).
fn rid(sid: &[u8]) -> u32 {
    u32::from_le_bytes(sid[sid.len() - 4..].try_into().unwrap())
}

/// A binary SID in its S-1-… form, without its last `drop` sub-authorities.
fn sid_string(sid: &[u8], drop: usize) -> String {
    let count = usize::from(sid[1]) - drop;
    let authority = sid[2..8].iter().fold(0u64, |a, b| (a << 8) | u64::from(*b));
    let mut s = format!("S-{}-{authority}", sid[0]);
    for i in 0..count {
        let at = 8 + 4 * i;
        s.push_str(&format!(
            "-{}",
            u32::from_le_bytes(sid[at..at + 4].try_into().unwrap())
        ));
    }
    s
}

/// Runs a command with a deadline, its output going to files (so nothing can block on a
/// full pipe); kills it if it outlives the deadline.
fn run_with_timeout(mut cmd: Command, stdin: &str, dir: &Path, what: &str) -> (bool, String) {
    let out_path = dir.join("out");
    let out_file = std::fs::File::create(&out_path).unwrap();
    let err_file = out_file.try_clone().unwrap();
    let mut child = cmd
        .stdin(Stdio::piped())
        .stdout(Stdio::from(out_file))
        .stderr(Stdio::from(err_file))
        .spawn()
        .unwrap_or_else(|e| panic!("cannot run {what} (install krb5-user): {e}"));
    {
        use std::io::Write;
        let mut input = child.stdin.take().unwrap();
        // A client that stops reading early (it failed) closes its end: not our error.
        let _ = input.write_all(stdin.as_bytes());
    }
    let deadline = Instant::now() + COMMAND_TIMEOUT;
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        if Instant::now() >= deadline {
            let _ = child.kill();
            let _ = child.wait();
            panic!(
                "{what} did not finish within {COMMAND_TIMEOUT:?}; it printed:\n{}",
                std::fs::read_to_string(&out_path).unwrap_or_default()
            );
        }
        std::thread::sleep(Duration::from_millis(10));
    };
    let out = std::fs::read_to_string(&out_path).unwrap_or_default();
    (status.success(), out)
}

impl Client {
    /// Runs an MIT tool with this configuration and credential cache, `stdin` fed to its
    /// prompts, tracing to a fresh file.
    fn run(&self, program: &str, args: &[&str], stdin: &str) -> Run {
        let trace = self.dir.join("trace");
        let _ = std::fs::remove_file(&trace);
        let mut cmd = Command::new(program);
        cmd.args(args)
            .env("KRB5_CONFIG", &self.conf)
            .env("KRB5CCNAME", format!("FILE:{}", self.ccache.display()))
            .env("KRB5_TRACE", &trace)
            .env("LC_ALL", "C")
            .env_remove("KRB5_KTNAME")
            .env_remove("KRB5_CLIENT_KTNAME");
        let what = format!("{program} {args:?}");
        let (ok, out) = run_with_timeout(cmd, stdin, &self.dir, &what);
        Run {
            ok,
            out,
            trace: std::fs::read_to_string(&trace).unwrap_or_default(),
        }
    }

    /// `kinit` with the password on standard input (and any more lines after it).
    fn kinit(&self, principal: &[&str], input: &str) -> Run {
        self.run("kinit", principal, &format!("{input}\n"))
    }

    /// `kinit` that must succeed.
    fn kinit_ok(&self, principal: &[&str], password: &str) -> Run {
        let r = self.kinit(principal, password);
        assert!(r.ok, "kinit {principal:?} failed:\n{r}");
        r
    }

    /// `kinit` that must fail with `message`.
    fn kinit_fails(&self, principal: &[&str], password: &str, message: &str) -> Run {
        let r = self.kinit(principal, password);
        assert!(
            !r.ok && r.out.contains(message),
            "kinit {principal:?} should have failed with {message:?}:\n{r}"
        );
        r
    }

    /// `kvno` for one service, which must succeed.
    fn kvno_ok(&self, args: &[&str]) -> Run {
        let r = self.run("kvno", args, "");
        assert!(r.ok, "kvno {args:?} failed:\n{r}");
        r
    }

    /// `klist -e`: the cache's tickets with their encryption types.
    fn klist(&self) -> String {
        let r = self.run("klist", &["-e"], "");
        assert!(r.ok, "klist failed:\n{r}");
        r.out
    }

    /// Forgets every ticket.
    fn kdestroy(&self) {
        let _ = std::fs::remove_file(&self.ccache);
    }
}

/// The `Etype (skey, tkt): …` of the ticket for `service` in `klist -e` output.
fn etypes_of(klist: &str, service: &str) -> String {
    let lines: Vec<&str> = klist.lines().collect();
    let at = lines
        .iter()
        .position(|l| l.split_whitespace().nth(4) == Some(service))
        .unwrap_or_else(|| panic!("no ticket for {service} in:\n{klist}"));
    lines[at..]
        .iter()
        .take(3)
        .find_map(|l| l.split_once("Etype (skey, tkt): ").map(|(_, e)| e.trim()))
        .unwrap_or_else(|| panic!("no etypes for {service} in:\n{klist}"))
        .to_string()
}

/// The ticket-granting ticket's principal.
fn krbtgt() -> String {
    format!("krbtgt/{REALM}@{REALM}")
}

/// A user gets a TGT by sAMAccountName and by UPN (an enterprise name, canonicalized on
/// request), AES256 for both its session key and its ticket, all over TCP; the TGT buys
/// service tickets for the DC's LDAP service and for `cifs/`, which AD's sPNMappings
/// resolve to the DC's `host/` SPN, and is renewed; a service and a client that do not
/// exist are refused with MIT's "not found in Kerberos database".
#[test]
fn kinit_by_name_and_upn_gets_aes_tickets_and_service_tickets() {
    let realm = Realm::new();
    realm.add_user("alice", "Al1ce.Passw0rd");
    let c = realm.client(false);

    let r = c.kinit_ok(&["-r", "2d", "alice"], "Al1ce.Passw0rd");
    assert!(
        r.trace.contains("Sending TCP request") && !r.trace.contains("UDP request"),
        "TCP only was configured:\n{r}"
    );
    let list = c.klist();
    assert!(
        list.contains(&format!("Default principal: alice@{REALM}")),
        "{list}"
    );
    assert_eq!(
        etypes_of(&list, &krbtgt()),
        "aes256-cts-hmac-sha1-96, aes256-cts-hmac-sha1-96",
        "{list}"
    );

    for service in ["ldap/dc1.samdom.example.com", "cifs/dc1.samdom.example.com"] {
        let r = c.kvno_ok(&[service]);
        assert!(
            r.out.contains(&format!("{service}@{REALM}: kvno = ")),
            "{r}"
        );
        let list = c.klist();
        assert!(
            etypes_of(&list, &format!("{service}@{REALM}")).ends_with("aes256-cts-hmac-sha1-96"),
            "{list}"
        );
    }
    let r = c.run("kvno", &["nosuch/service"], "");
    assert!(
        !r.ok && r.out.contains("not found in Kerberos database"),
        "a service that does not exist:\n{r}"
    );

    // The TGT is renewable and renews (a TGS exchange with the RENEW option).
    let r = c.run("kinit", &["-R"], "");
    assert!(r.ok, "kinit -R:\n{r}");
    assert!(c.klist().contains(&krbtgt()));

    // By UPN, as an enterprise name: the client name stays as asked…
    c.kdestroy();
    c.kinit_ok(&["-E", "alice@samdom.example.com"], "Al1ce.Passw0rd");
    let list = c.klist();
    assert!(
        list.contains(&format!(
            "Default principal: alice\\@samdom.example.com@{REALM}"
        )),
        "{list}"
    );
    assert_eq!(
        etypes_of(&list, &krbtgt()),
        "aes256-cts-hmac-sha1-96, aes256-cts-hmac-sha1-96",
        "{list}"
    );
    c.kvno_ok(&["ldap/dc1.samdom.example.com"]);
    // …and with canonicalization it becomes the account's name.
    c.kdestroy();
    c.kinit_ok(&["-C", "-E", "alice@samdom.example.com"], "Al1ce.Passw0rd");
    let list = c.klist();
    assert!(
        list.contains(&format!("Default principal: alice@{REALM}")),
        "{list}"
    );

    // A client that does not exist.
    c.kdestroy();
    c.kinit_fails(
        &["nosuchuser"],
        "whatever",
        "not found in Kerberos database",
    );

    // The audit log holds the ticket requests: alice's TGT (4768), and the refused
    // request for an unknown client.
    let log = realm
        .dir
        .path()
        .join("domain")
        .join("audit")
        .join("audit.log");
    let has = |id: u32, outcome: &str, user: &str| {
        std::fs::read_to_string(&log)
            .unwrap_or_default()
            .lines()
            .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
            .any(|e| {
                e["event_id"] == id
                    && e["outcome"] == outcome
                    && e["service"] == "kdc"
                    && e["user"].as_str().is_some_and(|u| u.starts_with(user))
            })
    };
    let deadline = Instant::now() + Duration::from_secs(5);
    while !(has(4768, "success", "alice@") && has(4768, "failure", "nosuchuser@")
        || Instant::now() > deadline)
    {
        std::thread::sleep(Duration::from_millis(50));
    }
    assert!(
        has(4768, "success", "alice@"),
        "no 4768 for alice in {log:?}"
    );
    assert!(
        has(4768, "failure", "nosuchuser@"),
        "no refused 4768 in {log:?}"
    );
}

/// The user's LDIF for `count` groups it is a member of.
fn many_groups_ldif(user_dn: &str, count: usize) -> String {
    (0..count)
        .map(|i| {
            format!(
                "dn: CN=bulk{i:03},CN=Users,{DOMAIN}\nchangetype: add\nobjectClass: group\n\
                 member: {user_dn}\n\n"
            )
        })
        .collect()
}

/// A realm with a user in 200 groups, whose PAC makes every reply too big for a datagram.
fn realm_with_a_user_in_many_groups() -> Realm {
    let realm = Realm::new();
    realm.add_user("many", "M4ny.Passw0rd");
    realm.ldif(&many_groups_ldif(
        &format!("CN=many,CN=Users,{DOMAIN}"),
        200,
    ));
    realm
}

/// Over UDP the KDC answers datagrams (the pre-authentication request is answered from
/// the datagram socket); a user in 200 groups, whose AS-REP is far larger than AD's
/// 1465-byte datagram limit, gets KRB_ERR_RESPONSE_TOO_BIG, MIT retries over TCP and
/// gets its TGT, and a service ticket is obtained the same way.
#[test]
fn udp_is_answered_and_big_replies_fall_back_to_tcp() {
    let realm = realm_with_a_user_in_many_groups();
    let c = realm.client(true);
    let r = c.kinit_ok(&["many"], "M4ny.Passw0rd");
    let dgram = format!("from dgram {}", realm.kdc);
    assert!(
        r.trace.contains("Sending initial UDP request") && r.trace.contains(&dgram),
        "the KDC should answer over UDP:\n{r}"
    );
    assert!(
        r.trace.contains("Response too big for UDP, retry with TCP")
            && r.trace.contains("retrying with TCP")
            && r.trace.contains(&format!("from stream {}", realm.kdc)),
        "the AS-REP should have been refused over UDP and fetched over TCP:\n{r}"
    );
    assert!(c.klist().contains(&krbtgt()));
    let r = c.kvno_ok(&["ldap/dc1.samdom.example.com"]);
    assert!(
        r.trace.contains("Sending initial UDP request") && r.trace.contains("retrying with TCP"),
        "{r}"
    );
    assert!(c
        .klist()
        .contains(&format!("ldap/dc1.samdom.example.com@{REALM}")));
}

/// When the KDC answers a TGS-REQ over UDP with KRB_ERR_RESPONSE_TOO_BIG, the client
/// sends the very same request again over TCP (RFC 4120 §7.2.1), and the KDC must answer
/// it — not refuse it as a replay of the authenticator it saw in the datagram. (MIT only
/// gets its ticket because it then builds a new request with referrals off; other
/// clients fail.)
#[test]
fn tcp_retry_after_response_too_big_is_not_a_replay() {
    let realm = realm_with_a_user_in_many_groups();
    let c = realm.client(true);
    c.kinit_ok(&["many"], "M4ny.Passw0rd");
    let r = c.kvno_ok(&["cifs/dc1.samdom.example.com"]);
    assert!(r.trace.contains("retrying with TCP"), "{r}");
    assert!(
        !r.trace.contains("Request is a replay"),
        "the retry over TCP was refused as a replay:\n{r}"
    );
}

/// A wrong password is refused as pre-authentication failed and counts in badPwdCount,
/// which a good logon clears; with a lockout threshold of 3, three bad kinits lock the
/// account, after which the right password is refused (KDC_ERR_CLIENT_REVOKED) by the
/// KDC and by an LDAP simple bind (AD's 775: the lockout is shared), until an
/// administrator unlocks it.
#[test]
fn bad_passwords_count_and_lock_the_account_out() {
    let realm = Realm::new();
    realm.add_user("bob", "B0b.Passw0rd");
    let bad_count = || realm.user_attr("bob", "badPwdCount").unwrap_or_default();
    let c = realm.client(false);
    assert_eq!(bad_count(), "0");

    c.kinit_fails(&["bob"], "Wrong.Passw0rd", PASSWORD_INCORRECT);
    assert_eq!(bad_count(), "1", "a bad kinit counts");
    c.kinit_ok(&["bob"], "B0b.Passw0rd");
    assert_eq!(bad_count(), "0", "a good kinit clears the count");

    realm.set_domain(&[("lockoutThreshold", "3")]);
    for i in 1..=3 {
        c.kinit_fails(&["bob"], "Wrong.Passw0rd", PASSWORD_INCORRECT);
        assert_eq!(bad_count(), i.to_string());
    }
    let locked_at: i64 = realm
        .user_attr("bob", "lockoutTime")
        .and_then(|v| v.parse().ok())
        .unwrap_or(0);
    assert!(locked_at > 0, "three bad kinits should lock the account");
    c.kinit_fails(&["bob"], "B0b.Passw0rd", REVOKED);
    let bind = whoami(&realm.server.ldap(), "SAMDOM\\bob", "B0b.Passw0rd");
    assert!(
        matches!(&bind, Err(e) if e.contains("data 775")),
        "an LDAP bind to a locked account: {bind:?}"
    );

    realm.kauri(&["user", "unlock", "bob"]);
    c.kinit_ok(&["bob"], "B0b.Passw0rd");
}

/// A disabled account (userAccountControl 514) is refused with the right password
/// (KDC_ERR_CLIENT_REVOKED), and logs on again once enabled.
#[test]
fn a_disabled_account_is_revoked() {
    let realm = Realm::new();
    realm.add_user("carol", "C4rol.Passw0rd");
    realm.kauri(&["user", "disable", "carol"]);
    assert_eq!(
        realm.user_attr("carol", "userAccountControl").as_deref(),
        Some("514")
    );
    let c = realm.client(false);
    c.kinit_fails(&["carol"], "C4rol.Passw0rd", REVOKED);
    realm.kauri(&["user", "enable", "carol"]);
    c.kinit_ok(&["carol"], "C4rol.Passw0rd");
}

/// An account that must change its password (pwdLastSet 0) gets KDC_ERR_KEY_EXPIRED:
/// kinit says the password expired, gets a kadmin/changepw ticket with the old password
/// and changes it through the kpasswd service (the default one-day minimum age does not
/// apply to a forced change), then logs on with the new one; afterwards the new password
/// works and the old one does not.
#[test]
fn a_password_that_must_change_is_changed_by_kinit() {
    let realm = Realm::new();
    realm.kauri(&[
        "user",
        "add",
        "dave",
        "--password",
        "D4ve.Passw0rd",
        "--must-change-at-next-login",
    ]);
    assert_eq!(realm.user_attr("dave", "pwdLastSet").as_deref(), Some("0"));
    let c = realm.client(false);
    let r = c.kinit(
        &["dave"],
        "D4ve.Passw0rd\nN3w.D4ve.Passw0rd\nN3w.D4ve.Passw0rd",
    );
    assert!(
        r.ok && r.out.contains("Password expired"),
        "kinit should have changed the expired password:\n{r}"
    );
    assert!(
        r.trace.contains("getting changepw ticket")
            && r.trace
                .contains(&format!("Sending TCP request to stream {}", realm.kpasswd)),
        "the change should go through the kpasswd service:\n{r}"
    );
    assert!(c.klist().contains(&krbtgt()));
    let last_set: i64 = realm
        .user_attr("dave", "pwdLastSet")
        .and_then(|v| v.parse().ok())
        .unwrap_or(0);
    assert!(last_set > 0, "pwdLastSet should be set by the change");

    let fresh = realm.client(false);
    fresh.kinit_ok(&["dave"], "N3w.D4ve.Passw0rd");
    fresh.kdestroy();
    fresh.kinit_fails(&["dave"], "D4ve.Passw0rd", PASSWORD_INCORRECT);
}

/// `kpasswd` against the password-change service: with the default one-day minimum age
/// a change is refused, and MIT turns AD's policy blob into its reasons; with minPwdAge 0
/// a too-short password is refused with the policy's minimum length, a good one is
/// accepted, and kinit then takes the new password and refuses the old one.
#[test]
fn kpasswd_applies_the_policy_and_changes_the_password() {
    let realm = Realm::new();
    realm.add_user("erin", "Er1n.Passw0rd");
    let c = realm.client(false);
    let kpasswd =
        |old: &str, new: &str| c.run("kpasswd", &["erin"], &format!("{old}\n{new}\n{new}\n"));

    let r = kpasswd("Er1n.Passw0rd", "An0ther.Passw0rd");
    assert!(
        !r.ok
            && r.out.contains("Password change rejected")
            && r.out.contains("can only be changed once a day"),
        "the default minimum age should refuse the change:\n{r}"
    );

    realm.set_domain(&[("minPwdAge", "0")]);
    let r = kpasswd("Er1n.Passw0rd", "x1");
    assert!(
        !r.ok
            && r.out.contains("Password change rejected")
            && r.out.contains("at least 7 characters"),
        "a too-short password should be refused with the policy's reason:\n{r}"
    );
    let r = kpasswd("Er1n.Passw0rd", "N3w.Er1n.Passw0rd");
    assert!(r.ok && r.out.contains("Password changed"), "{r}");
    assert!(
        r.trace
            .contains(&format!("Sending TCP request to stream {}", realm.kpasswd)),
        "{r}"
    );

    let fresh = realm.client(false);
    fresh.kinit_ok(&["erin"], "N3w.Er1n.Passw0rd");
    fresh.kdestroy();
    fresh.kinit_fails(&["erin"], "Er1n.Passw0rd", PASSWORD_INCORRECT);
}

/// A service account limited to RC4 (msDS-SupportedEncryptionTypes 4) gets RC4 tickets
/// and RC4 session keys, the ticket decrypts with a keytab made from its password, and
/// the service gets a TGT with that keytab under its SPN; a service account without the attribute gets AD's default since 2022, RC4 tickets
/// with AES session keys.
#[test]
fn an_rc4_only_service_gets_rc4_tickets() {
    let realm = Realm::new();
    realm.add_user("alice", "Al1ce.Passw0rd");
    realm.add_user("rc4svc", "Rc4.Svc.Passw0rd");
    realm.add_user("plainsvc", "Pl4in.Svc.Passw0rd");
    realm.ldif(&format!(
        "dn: CN=rc4svc,CN=Users,{DOMAIN}\nchangetype: modify\n\
         add: servicePrincipalName\nservicePrincipalName: http/rc4svc.samdom.example.com\n-\n\
         replace: msDS-SupportedEncryptionTypes\nmsDS-SupportedEncryptionTypes: 4\n-\n\n\
         dn: CN=plainsvc,CN=Users,{DOMAIN}\nchangetype: modify\n\
         add: servicePrincipalName\nservicePrincipalName: http/plain.samdom.example.com\n-\n"
    ));
    let c = realm.client(false);
    c.kinit_ok(&["alice"], "Al1ce.Passw0rd");

    let spn = "http/rc4svc.samdom.example.com";
    c.kvno_ok(&[spn]);
    let list = c.klist();
    let etypes = etypes_of(&list, &format!("{spn}@{REALM}"));
    let (skey, tkt) = etypes.split_once(", ").unwrap();
    assert!(tkt.ends_with("arcfour-hmac"), "{list}");
    assert!(skey.ends_with("arcfour-hmac"), "{list}");
    // The ticket decrypts with the key of the account's password.
    let keytab = c.dir.join("rc4.keytab");
    let kt = c.run(
        "ktutil",
        &[],
        &format!(
            "addent -password -p {spn} -k 1 -e arcfour-hmac\nRc4.Svc.Passw0rd\nwkt {}\nquit\n",
            keytab.display()
        ),
    );
    assert!(kt.ok && keytab.exists(), "ktutil:\n{kt}");
    let r = c.kvno_ok(&["-k", keytab.to_str().unwrap(), spn]);
    assert!(r.out.contains("keytab entry valid"), "{r}");
    // The service logs on with that keytab, by its SPN, as services do.
    let svc = realm.client(false);
    let r = svc.run("kinit", &["-k", "-t", keytab.to_str().unwrap(), spn], "");
    assert!(r.ok, "kinit -k as {spn}:\n{r}");
    assert!(
        svc.klist()
            .contains(&format!("Default principal: {spn}@{REALM}")),
        "{r}"
    );

    let spn = "http/plain.samdom.example.com";
    c.kvno_ok(&[spn]);
    let list = c.klist();
    let etypes = etypes_of(&list, &format!("{spn}@{REALM}"));
    let (skey, tkt) = etypes.split_once(", ").unwrap();
    assert!(tkt.ends_with("arcfour-hmac"), "{list}");
    assert_eq!(skey, "aes256-cts-hmac-sha1-96", "{list}");
}

/// The facts impacket gathered, or `None` when impacket (or python3) is missing.
fn impacket(realm: &Realm, args: &[&str]) -> Option<serde_json::Value> {
    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/kerberos_impacket.py");
    let dir = realm.fresh_path("impacket");
    std::fs::create_dir_all(&dir).unwrap();
    let out = Command::new("python3")
        .arg(script)
        .arg("127.0.0.1")
        .arg(Realm::port(&realm.kdc))
        .arg(REALM)
        .args(args)
        .current_dir(&dir)
        .stdin(Stdio::null())
        .output();
    let out = match out {
        Ok(o) => o,
        Err(e) => {
            eprintln!("skipped: cannot run python3 ({e}); CI installs impacket with pip");
            return None;
        }
    };
    if out.status.code() == Some(3) {
        eprintln!(
            "skipped: {}(pip install impacket)",
            String::from_utf8_lossy(&out.stderr)
        );
        return None;
    }
    assert!(
        out.status.success(),
        "the impacket script failed:\n{}{}\nthe server logged:\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr),
        realm.server.log_tail()
    );
    Some(json(&String::from_utf8_lossy(&out.stdout)))
}

/// A realm for impacket: alice in `webusers`, itself in `outer`, and a service account
/// `websvc` with SPN http/web.samdom.example.com and AES keys for its tickets.
fn impacket_realm() -> Realm {
    let realm = Realm::new();
    realm.add_user("alice", "Al1ce.Passw0rd");
    realm.add_user("websvc", "W3b.Svc.Passw0rd");
    realm.ldif(&format!(
        "dn: CN=websvc,CN=Users,{DOMAIN}\nchangetype: modify\n\
         add: servicePrincipalName\nservicePrincipalName: http/web.samdom.example.com\n-\n\
         replace: msDS-SupportedEncryptionTypes\nmsDS-SupportedEncryptionTypes: 24\n-\n"
    ));
    realm.kauri(&["group", "add", "webusers"]);
    realm.kauri(&["group", "add", "outer"]);
    realm.kauri(&["group", "add-members", "webusers", "alice"]);
    realm.kauri(&["group", "add-members", "outer", "webusers"]);
    realm
}

/// The arguments of the impacket script for [`impacket_realm`].
const IMPACKET_ARGS: [&str; 5] = [
    "alice",
    "Al1ce.Passw0rd",
    "http/web.samdom.example.com",
    "websvc",
    "W3b.Svc.Passw0rd",
];

/// impacket's Kerberos client: a TGT with the password (AES256 reply) and with the NT
/// hash alone (`getTGT.py -hashes`: RC4 reply); service tickets for the DC's LDAP service
/// (from both TGTs) and for a user service account, whose ticket decrypts with that
/// account's AES key and carries a PAC: the user's RID, primary group 513, its group
/// and the group that group is nested in, logon domain SAMDOM and the domain's SID, the
/// UPN and DNS domain, every signature HMAC-SHA1-96-AES256 (16), and a server signature
/// that verifies with the service's key. Clocks an hour apart are refused with
/// KRB_AP_ERR_SKEW in the AS exchange (without counting as a bad password) and in the
/// TGS exchange, and a TGS-REQ sent twice does not buy a second ticket. (The TGS-REQs
/// carry the body checksum MIT and Heimdal send; impacket's own request, without one, is
/// the next test.)
#[test]
fn impacket_tickets_carry_the_users_pac() {
    let realm = impacket_realm();
    let Some(got) = impacket(&realm, &IMPACKET_ARGS) else {
        return;
    };
    let alice = realm.sid("user", "alice");
    let webusers = rid(&realm.sid("group", "webusers"));
    let outer = rid(&realm.sid("group", "outer"));

    assert_eq!(got["as_aes_etype"], 18, "{got}");
    assert_eq!(got["as_aes_ticket_etype"], 18, "{got}");
    assert_eq!(got["as_rc4_etype"], 23, "{got}");
    assert_eq!(
        got["ldap_ticket_sname"], "ldap/dc1.samdom.example.com",
        "{got}"
    );
    assert_eq!(
        got["ldap_ticket_sname_rc4_tgt"], "ldap/dc1.samdom.example.com",
        "{got}"
    );
    assert_eq!(got["service_ticket_etype"], 18, "{got}");
    assert_eq!(got["ticket_cname"], "alice", "{got}");

    assert_eq!(got["user_rid"], rid(&alice), "{got}");
    assert_eq!(got["primary_group"], 513, "{got}");
    let groups: Vec<u64> = got["group_rids"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(serde_json::Value::as_u64)
        .collect();
    for want in [513, u64::from(webusers), u64::from(outer)] {
        assert!(groups.contains(&want), "group {want} missing: {got}");
    }
    assert_eq!(got["logon_domain"], "SAMDOM", "{got}");
    assert_eq!(got["effective_name"], "alice", "{got}");
    assert_eq!(got["logon_domain_sid"], sid_string(&alice, 1), "{got}");
    assert_eq!(got["upn"], "alice@samdom.example.com", "{got}");
    assert_eq!(got["dns_domain"], REALM, "{got}");
    let sigs = got["signature_types"].as_object().unwrap();
    for kind in ["6", "7"] {
        assert!(sigs.contains_key(kind), "signature {kind} missing: {got}");
    }
    for (kind, t) in sigs {
        assert_eq!(t, 16, "signature {kind}: {got}");
    }
    assert_eq!(got["server_signature_valid"], true, "{got}");

    const KRB_AP_ERR_SKEW: u64 = 37;
    const KRB_AP_ERR_REPEAT: u64 = 34;
    assert_eq!(got["as_skew_error"], KRB_AP_ERR_SKEW, "{got}");
    assert_eq!(got["tgs_skew_error"], KRB_AP_ERR_SKEW, "{got}");
    assert_eq!(
        realm.user_attr("alice", "badPwdCount").as_deref(),
        Some("0"),
        "a skewed clock is no bad password"
    );
    assert!(
        got["replay"] == KRB_AP_ERR_REPEAT || got["replay"] == "same reply",
        "a TGS-REQ replayed: {got}"
    );
}

/// impacket's own TGS-REQ (what getST.py and every impacket tool sends) has no checksum
/// in its authenticator; Windows DCs answer it, so an AD-compatible KDC must too.
#[test]
fn impacket_stock_tgs_request_is_answered() {
    let realm = impacket_realm();
    let Some(got) = impacket(&realm, &IMPACKET_ARGS) else {
        return;
    };
    assert_eq!(
        got["stock_tgs"], "ldap/dc1.samdom.example.com",
        "impacket's getKerberosTGS failed: {got}"
    );
}
