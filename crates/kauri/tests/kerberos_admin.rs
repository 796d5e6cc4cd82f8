//! The Kerberos administration commands end to end, checked with MIT's own tools:
//! `kauri domain exportkeytab` writes keytabs `klist -k` reads and `kinit -k` logs on
//! with against the served KDC; `kauri domain krbtgt rotate` keeps live tickets working
//! through one rotation and not through two; `kauri user show` tells key types and key
//! versions, never keys; a restore rotates krbtgt twice, so tickets issued before it die.

mod common;

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use common::{fails, json, ok, provision, serve, Served, PASSWORD};

const REALM: &str = "SAMDOM.EXAMPLE.COM";
const ALICE_PASSWORD: &str = "Koru.Passw0rd!";

fn s(p: &Path) -> String {
    p.display().to_string()
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// Adds the user `name` with a password to a data folder.
fn add_user(data: &Path, name: &str, password: &str) {
    ok(&["user", "add", name, "--password", password, "-H", &s(data)]);
}

/// Runs `kauri domain exportkeytab FILE -H DATA ARGS… --json`; returns its report.
fn export(data: &Path, file: &Path, args: &[&str]) -> serde_json::Value {
    let mut all = vec![
        "domain".to_string(),
        "exportkeytab".into(),
        s(file),
        "-H".into(),
        s(data),
        "--json".into(),
    ];
    all.extend(args.iter().map(|a| a.to_string()));
    json(&ok(&all))
}

/// The same, expected to fail; returns the error.
fn export_fails(data: &Path, file: &Path, args: &[&str]) -> String {
    let mut all = vec![
        "domain".to_string(),
        "exportkeytab".into(),
        s(file),
        "-H".into(),
        s(data),
    ];
    all.extend(args.iter().map(|a| a.to_string()));
    fails(&all)
}

/// One key as `klist -k -t -e -K` lists it.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Listed {
    kvno: u32,
    principal: String,
    enctype: String,
    key: String,
}

/// What MIT's `klist -k -t -e -K` reads from a keytab.
fn klist_keytab(file: &Path) -> Vec<Listed> {
    let out = Command::new("klist")
        .args(["-k", "-t", "-e", "-K"])
        .arg(file)
        .env("LC_ALL", "C")
        .output()
        .expect("run klist (install krb5-user)");
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "klist -k {}: {text}{}",
        file.display(),
        String::from_utf8_lossy(&out.stderr)
    );
    // "   2 11/26/26 20:28:15 alice@REALM (aes256-cts-hmac-sha1-96)  (0x4d2d…)"
    text.lines()
        .filter_map(|l| {
            let f: Vec<&str> = l.split_whitespace().collect();
            let kvno = f.first()?.parse().ok()?;
            let [_, _, _, principal, enctype, key] = f.as_slice() else {
                panic!("unexpected klist line: {l}");
            };
            let enctype = enctype.trim_matches(|c| c == '(' || c == ')');
            Some(Listed {
                kvno,
                principal: principal.to_string(),
                enctype: enctype
                    .strip_prefix("DEPRECATED:")
                    .unwrap_or(enctype)
                    .to_string(),
                key: key
                    .trim_matches(|c| c == '(' || c == ')')
                    .trim_start_matches("0x")
                    .to_string(),
            })
        })
        .collect()
}

const TYPES: [&str; 3] = [
    "aes256-cts-hmac-sha1-96",
    "aes128-cts-hmac-sha1-96",
    "arcfour-hmac",
];

/// An MIT client environment pointed at a served KDC: its krb5.conf and a ticket cache.
struct Client {
    conf: PathBuf,
    cache: PathBuf,
}

impl Client {
    fn new(dir: &Path, name: &str, served: &Served) -> Client {
        let kdc = served.kdc_addr.as_deref().expect("the KDC's address");
        let conf = dir.join(format!("{name}-krb5.conf"));
        std::fs::write(
            &conf,
            format!(
                "[libdefaults]\n    default_realm = {REALM}\n    dns_lookup_kdc = false\n    \
                 dns_lookup_realm = false\n    rdns = false\n    dns_canonicalize_hostname = \
                 false\n[realms]\n    {REALM} = {{\n        kdc = {kdc}\n    }}\n"
            ),
        )
        .unwrap();
        Client {
            conf,
            cache: dir.join(format!("{name}-ccache")),
        }
    }

    /// The same ticket cache, with the KDC of another server.
    fn pointed_at(&self, dir: &Path, name: &str, served: &Served) -> Client {
        Client {
            cache: self.cache.clone(),
            ..Client::new(dir, name, served)
        }
    }

    /// Runs an MIT tool with this environment; `input` goes to its standard input.
    fn run(&self, tool: &str, args: &[&str], input: Option<&str>) -> Output {
        use std::io::Write;
        let mut child = Command::new(tool)
            .args(args)
            .env("KRB5_CONFIG", &self.conf)
            .env("KRB5CCNAME", format!("FILE:{}", self.cache.display()))
            .env("KRB5RCACHETYPE", "none")
            .env("LC_ALL", "C")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap_or_else(|e| panic!("run {tool} (install krb5-user): {e}"));
        let mut stdin = child.stdin.take().unwrap();
        if let Some(text) = input {
            stdin.write_all(format!("{text}\n").as_bytes()).unwrap();
        }
        drop(stdin);
        child.wait_with_output().unwrap()
    }

    /// Runs a tool that must succeed; returns its output (both streams).
    fn ok(&self, tool: &str, args: &[&str], input: Option<&str>) -> String {
        let o = self.run(tool, args, input);
        let text = format!(
            "{}{}",
            String::from_utf8_lossy(&o.stdout),
            String::from_utf8_lossy(&o.stderr)
        );
        assert!(o.status.success(), "{tool} {args:?} failed: {text}");
        text
    }

    /// Runs a tool that must fail; returns its error output.
    fn fails(&self, tool: &str, args: &[&str], input: Option<&str>) -> String {
        let o = self.run(tool, args, input);
        assert!(
            !o.status.success(),
            "{tool} {args:?} should have failed: {}",
            String::from_utf8_lossy(&o.stdout)
        );
        String::from_utf8_lossy(&o.stderr).into_owned()
    }

    /// `kinit` with a password.
    fn kinit(&self, principal: &str, password: &str) {
        self.ok("kinit", &[principal], Some(password));
    }
}

/// The `kerberos` facts `user show --json` (or `computer show`) gives.
fn key_facts(kind: &str, name: &str, target: &[String]) -> serde_json::Value {
    let mut args = vec![
        kind.to_string(),
        "show".into(),
        name.into(),
        "--json".into(),
    ];
    args.extend(target.iter().cloned());
    let shown = json(&ok(&args));
    shown["kerberos"].clone()
}

fn local(data: &Path) -> Vec<String> {
    vec!["-H".into(), s(data)]
}

fn krbtgt_kvno(data: &Path) -> u64 {
    key_facts("user", "krbtgt", &local(data))["kvno"]
        .as_u64()
        .unwrap()
}

#[test]
fn exportkeytab_writes_keytabs_that_mit_klist_reads() {
    let dir = tempfile::tempdir().unwrap();
    let data = provision(dir.path(), "domain");
    add_user(&data, "alice", ALICE_PASSWORD);
    let alice_kvno = key_facts("user", "alice", &local(&data))["kvno"]
        .as_u64()
        .unwrap();

    // One user: three keys, the RC4 one being the password's NT hash.
    let file = dir.path().join("alice.keytab");
    let report = export(&data, &file, &["--principal", "alice@SAMDOM.EXAMPLE.COM"]);
    assert_eq!(report["keys"], 3, "{report}");
    assert_eq!(
        report["principals"][0]["principal"],
        "alice@SAMDOM.EXAMPLE.COM"
    );
    assert_eq!(
        report["principals"][0]["account"],
        format!("CN=alice,CN=Users,{}", common::DOMAIN)
    );
    assert_eq!(report["principals"][0]["kvno"], alice_kvno);
    use std::os::unix::fs::PermissionsExt;
    let mode = std::fs::metadata(&file).unwrap().permissions().mode();
    assert_eq!(mode & 0o777, 0o600, "{mode:o}");
    let listed = klist_keytab(&file);
    assert_eq!(listed.len(), 3, "{listed:?}");
    for (l, t) in listed.iter().zip(TYPES) {
        assert_eq!(l.principal, "alice@SAMDOM.EXAMPLE.COM");
        assert_eq!(l.kvno as u64, alice_kvno);
        assert_eq!(l.enctype, t);
    }
    let nt = kauri_domain::password::nt_hash(ALICE_PASSWORD);
    assert_eq!(listed[2].key, hex(&nt));
    assert_eq!(listed[0].key.len(), 64);
    assert_eq!(listed[1].key.len(), 32);
    // The realm may be left out, and is written as the KDC names it.
    let short = dir.path().join("short.keytab");
    export(&data, &short, &["--principal", "alice"]);
    assert_eq!(klist_keytab(&short), listed);

    // An existing file is never replaced without --force, and is left as it was.
    let before = std::fs::read(&file).unwrap();
    let err = export_fails(&data, &file, &["--principal", "alice"]);
    assert!(err.contains("--force") && err.contains("--append"), "{err}");
    assert_eq!(std::fs::read(&file).unwrap(), before);

    // Without --principal: this DC's account by name and by every SPN.
    let dc_file = dir.path().join("dc.keytab");
    let report = export(&data, &dc_file, &[]);
    let dc = json(&ok(&["computer", "show", "DC1", "-H", &s(&data), "--json"]));
    let dc_kvno = dc["kerberos"]["kvno"].as_u64().unwrap();
    let mut wanted: Vec<String> = dc["servicePrincipalName"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| format!("{}@{REALM}", v.as_str().unwrap()))
        .collect();
    assert!(wanted.len() >= 4, "{dc}");
    wanted.push(format!("DC1$@{REALM}"));
    wanted.sort();
    let listed = klist_keytab(&dc_file);
    let mut got: Vec<String> = listed.iter().map(|l| l.principal.clone()).collect();
    got.dedup();
    got.sort();
    assert_eq!(got, wanted);
    assert_eq!(listed.len(), 3 * wanted.len());
    assert_eq!(report["keys"], 3 * wanted.len());
    assert!(listed.iter().all(|l| l.kvno as u64 == dc_kvno));
    // Every name carries the one account's keys.
    for t in TYPES {
        let keys: Vec<&Listed> = listed.iter().filter(|l| l.enctype == t).collect();
        assert_eq!(keys.len(), wanted.len());
        assert!(keys.iter().all(|l| l.key == keys[0].key), "{t}");
        assert!(keys[0].key.chars().any(|c| c != '0'), "{t}");
    }

    // --append adds to a keytab; a key of the same name, version and type is replaced.
    let report = export(
        &data,
        &file,
        &["--append", "--principal", "HOST/dc1.samdom.example.com"],
    );
    assert_eq!(report["kept"], 3, "{report}");
    assert_eq!(klist_keytab(&file).len(), 6);
    let report = export(&data, &file, &["--append", "--principal", "alice"]);
    assert_eq!(report["kept"], 3, "{report}");
    let listed = klist_keytab(&file);
    assert_eq!(listed.len(), 6);
    assert_eq!(
        listed
            .iter()
            .filter(|l| l.principal == "alice@SAMDOM.EXAMPLE.COM")
            .count(),
        3
    );
    // --force replaces the file whole.
    export(&data, &file, &["--force", "--principal", "alice"]);
    assert_eq!(klist_keytab(&file).len(), 3);

    // Refusals, and no file left behind by them.
    let none = dir.path().join("none.keytab");
    for (principal, says) in [
        ("krbtgt", "never exported"),
        (
            "krbtgt/SAMDOM.EXAMPLE.COM@SAMDOM.EXAMPLE.COM",
            "never exported",
        ),
        ("kadmin/changepw", "never exported"),
        ("nobody@SAMDOM.EXAMPLE.COM", "no account has this name"),
        ("alice@OTHER.EXAMPLE.ORG", "not this domain's realm"),
        ("a//b", "empty components"),
    ] {
        let err = export_fails(&data, &none, &["--principal", principal]);
        assert!(err.contains(says), "{principal}: {err}");
        assert!(!none.exists());
    }
    ok(&["user", "add", "carol", "-H", &s(&data)]);
    let err = export_fails(&data, &none, &["--principal", "carol"]);
    assert!(err.contains("no password"), "{err}");
    assert!(!none.exists());
    // Adding to what is no keytab is refused, and the file kept.
    let notes = dir.path().join("notes.txt");
    std::fs::write(&notes, "not a keytab").unwrap();
    let err = export_fails(&data, &notes, &["--append", "--principal", "alice"]);
    assert!(err.contains("not a keytab"), "{err}");
    assert_eq!(std::fs::read_to_string(&notes).unwrap(), "not a keytab");
}

#[test]
fn exported_keytabs_log_on_and_accept_tickets_at_the_served_kdc() {
    let dir = tempfile::tempdir().unwrap();
    let data = provision(dir.path(), "domain");
    add_user(&data, "alice", ALICE_PASSWORD);
    let served = serve(&data);
    // Exported from the data folder while the server runs.
    let alice = dir.path().join("alice.keytab");
    export(&data, &alice, &["--principal", "alice@SAMDOM.EXAMPLE.COM"]);
    let dc = dir.path().join("dc.keytab");
    export(&data, &dc, &[]);
    let c = Client::new(dir.path(), "c", &served);

    // kinit with the user's keytab, no password.
    c.ok(
        "kinit",
        &["-k", "-t", &s(&alice), "alice@SAMDOM.EXAMPLE.COM"],
        None,
    );
    let tickets = c.ok("klist", &[], None);
    assert!(
        tickets.contains("Default principal: alice@SAMDOM.EXAMPLE.COM")
            && tickets.contains("krbtgt/SAMDOM.EXAMPLE.COM@SAMDOM.EXAMPLE.COM"),
        "{tickets}"
    );
    // Service tickets the KDC issues to the DC's SPNs decrypt with the DC keytab.
    for spn in [
        "HOST/dc1.samdom.example.com",
        "ldap/dc1.samdom.example.com",
        "cifs/dc1.samdom.example.com",
    ] {
        let out = c.ok("kvno", &["-k", &s(&dc), spn], None);
        assert!(out.contains("keytab entry valid"), "{spn}: {out}");
    }
    // The DC's account itself logs on with it.
    let dc_client = Client {
        cache: dir.path().join("dc-ccache"),
        conf: c.conf.clone(),
    };
    dc_client.ok(
        "kinit",
        &["-k", "-t", &s(&dc), "DC1$@SAMDOM.EXAMPLE.COM"],
        None,
    );

    // A new password makes the keytab stale (new kvno, new keys); a new export works.
    ok(&[
        "user",
        "set-password",
        "alice",
        "--newpassword",
        "Another.Passw0rd!",
        "-H",
        &s(&data),
    ]);
    c.fails(
        "kinit",
        &["-k", "-t", &s(&alice), "alice@SAMDOM.EXAMPLE.COM"],
        None,
    );
    export(&data, &alice, &["--force", "--principal", "alice"]);
    c.ok(
        "kinit",
        &["-k", "-t", &s(&alice), "alice@SAMDOM.EXAMPLE.COM"],
        None,
    );
}

#[test]
fn a_krbtgt_rotation_keeps_live_tickets_working_and_a_second_one_ends_them() {
    let dir = tempfile::tempdir().unwrap();
    let data = provision(dir.path(), "domain");
    add_user(&data, "alice", ALICE_PASSWORD);
    let served = serve(&data);
    let c = Client::new(dir.path(), "c", &served);
    c.kinit("alice@SAMDOM.EXAMPLE.COM", ALICE_PASSWORD);
    c.ok("kvno", &["HOST/dc1.samdom.example.com"], None);
    let k = krbtgt_kvno(&data);

    // First rotation, beside the running server: the TGT still gets service tickets.
    let rotated = json(&ok(&[
        "domain",
        "krbtgt",
        "rotate",
        "-H",
        &s(&data),
        "--json",
    ]));
    assert_eq!(rotated["kvno"], k + 1, "{rotated}");
    assert_eq!(rotated["previous_kvno"], k, "{rotated}");
    assert_eq!(
        rotated["dn"],
        format!("CN=krbtgt,CN=Users,{}", common::DOMAIN)
    );
    let facts = key_facts("user", "krbtgt", &local(&data));
    assert_eq!(facts["kvno"], k + 1);
    assert_eq!(facts["previous"]["kvno"], k, "{facts}");
    assert_eq!(facts["previous"]["key_types"].as_array().unwrap().len(), 3);
    c.ok("kvno", &["ldap/dc1.samdom.example.com"], None);

    // Second rotation: that TGT's keys are gone, and the KDC says so.
    let said = ok(&["domain", "krbtgt", "rotate", "-H", &s(&data)]);
    assert!(said.contains(&format!("now kvno {}", k + 2)), "{said}");
    assert!(
        said.contains(&format!("kvno {} keep working", k + 1)),
        "{said}"
    );
    let err = c.fails("kvno", &["cifs/dc1.samdom.example.com"], None);
    assert!(err.contains("Key version"), "{err}");
    // A new logon gets a TGT under the new keys, which works.
    c.kinit("alice@SAMDOM.EXAMPLE.COM", ALICE_PASSWORD);
    c.ok("kvno", &["cifs/dc1.samdom.example.com"], None);
    drop(served);
}

#[test]
fn user_show_tells_key_types_and_versions_never_keys() {
    let dir = tempfile::tempdir().unwrap();
    let data = provision(dir.path(), "domain");
    add_user(&data, "alice", ALICE_PASSWORD);
    let d = s(&data);

    let shown = json(&ok(&["user", "show", "alice", "-H", &d, "--json"]));
    let facts = &shown["kerberos"];
    let kvno = facts["kvno"].as_u64().unwrap();
    assert!(kvno >= 1);
    assert_eq!(
        shown["msDS-KeyVersionNumber"][0].as_str().unwrap(),
        kvno.to_string()
    );
    assert_eq!(facts["key_types"], serde_json::json!(TYPES));
    assert_eq!(facts["salt"], "SAMDOM.EXAMPLE.COMalice");
    assert!(facts.get("previous").is_none(), "{facts}");
    let text = ok(&["user", "show", "alice", "-H", &d]);
    assert!(
        text.contains(&format!(
            "Kerberos keys: aes256-cts-hmac-sha1-96, aes128-cts-hmac-sha1-96, arcfour-hmac (kvno {kvno})"
        )),
        "{text}"
    );
    // None of the keys appears, in either form.
    let keytab = dir.path().join("alice.keytab");
    export(&data, &keytab, &["--principal", "alice"]);
    let json_text = ok(&["user", "show", "alice", "-H", &d, "--json"]).to_ascii_lowercase();
    for l in klist_keytab(&keytab) {
        assert!(!json_text.contains(&l.key) && !text.to_ascii_lowercase().contains(&l.key));
    }
    // A new password: the next kvno, the previous keys kept.
    ok(&[
        "user",
        "set-password",
        "alice",
        "--newpassword",
        "Another.Passw0rd!",
        "-H",
        &d,
    ]);
    let facts = key_facts("user", "alice", &local(&data));
    assert_eq!(facts["kvno"], kvno + 1);
    assert_eq!(facts["previous"]["kvno"], kvno);
    // Asking for some attributes shows those only.
    let some = json(&ok(&[
        "user",
        "show",
        "alice",
        "--attributes",
        "mail",
        "-H",
        &d,
        "--json",
    ]));
    assert!(some.get("kerberos").is_none(), "{some}");
    // Computers too; an account without a password has no keys.
    let dc = key_facts("computer", "DC1", &local(&data));
    assert_eq!(dc["key_types"], serde_json::json!(TYPES));
    assert_eq!(dc["salt"], "SAMDOM.EXAMPLE.COMhostdc1.samdom.example.com");
    ok(&["user", "add", "carol", "-H", &d]);
    assert_eq!(
        key_facts("user", "carol", &local(&data))["key_types"],
        serde_json::json!([])
    );
    assert!(ok(&["user", "show", "carol", "-H", &d]).contains("Kerberos keys: none (no password)"));

    // Over LDAP the keys cannot be read: the key version only.
    let served = serve(&data);
    let remote = served.as_admin(&served.ldaps());
    let facts = key_facts("user", "alice", &remote);
    assert_eq!(facts["kvno"], kvno + 1, "{facts}");
    assert!(facts["key_types"].is_null(), "{facts}");
    let mut args: Vec<String> = ["user", "show", "alice"].map(String::from).to_vec();
    args.extend(remote.iter().cloned());
    let text = ok(&args);
    assert!(
        text.contains(&format!("Kerberos key version: {}", kvno + 1)),
        "{text}"
    );
    assert!(!text.contains("Kerberos keys:"), "{text}");
}

/// The storage-format-3 domain kept for the upgrade test: its users' passwords were set
/// before Kauri derived AES keys.
const FORMAT3: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/format3-domain");

/// Unpacks that domain into a fresh data folder.
fn unpack_format3(dir: &Path) -> PathBuf {
    let data = dir.join("old");
    std::fs::create_dir_all(data.join("db")).unwrap();
    for f in ["domain.json", "secrets.key"] {
        std::fs::copy(Path::new(FORMAT3).join(f), data.join(f)).unwrap();
    }
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(
        data.join("secrets.key"),
        std::fs::Permissions::from_mode(0o600),
    )
    .unwrap();
    let packed = std::fs::File::open(Path::new(FORMAT3).join("db/data.mdb.zst")).unwrap();
    let mut out = std::fs::File::create(data.join("db/data.mdb")).unwrap();
    zstd::stream::copy_decode(packed, &mut out).unwrap();
    data
}

#[test]
fn an_account_whose_password_predates_aes_keys_has_rc4_only_until_it_changes() {
    let dir = tempfile::tempdir().unwrap();
    let data = unpack_format3(dir.path());
    let d = s(&data);
    let facts = key_facts("user", "ann", &local(&data));
    assert_eq!(facts["key_types"], serde_json::json!(["arcfour-hmac"]));
    assert!(
        facts["note"]
            .as_str()
            .unwrap()
            .contains("next password change"),
        "{facts}"
    );
    let text = ok(&["user", "show", "ann", "-H", &d]);
    let line = text
        .lines()
        .find(|l| l.starts_with("Kerberos keys: "))
        .unwrap_or_else(|| panic!("{text}"));
    assert!(
        line.starts_with("Kerberos keys: arcfour-hmac (kvno ")
            && line.contains("AES keys come with its next password change"),
        "{line}"
    );
    // Its keytab holds the RC4 key alone, and the report says why.
    let keytab = dir.path().join("ann.keytab");
    let report = export(&data, &keytab, &["--principal", "ann@FIXTURE.EXAMPLE.TEST"]);
    assert_eq!(report["keys"], 1, "{report}");
    assert_eq!(
        report["rc4_only"][0],
        "CN=ann,CN=Users,DC=fixture,DC=example,DC=test"
    );
    let listed = klist_keytab(&keytab);
    assert_eq!(listed.len(), 1);
    assert_eq!(listed[0].enctype, "arcfour-hmac");
    assert_eq!(
        listed[0].key,
        hex(&kauri_domain::password::nt_hash("Kauri.Fixture.Pw1!"))
    );
    // A new password brings the AES keys.
    ok(&[
        "user",
        "set-password",
        "ann",
        "--newpassword",
        "Fresh.Passw0rd.2",
        "-H",
        &d,
    ]);
    let facts = key_facts("user", "ann", &local(&data));
    assert_eq!(facts["key_types"], serde_json::json!(TYPES));
    assert!(facts.get("note").is_none(), "{facts}");
    assert_eq!(
        facts["previous"]["key_types"],
        serde_json::json!(["arcfour-hmac"])
    );
}

#[test]
fn a_restore_rotates_krbtgt_twice_so_tickets_from_before_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let data = provision(dir.path(), "domain");
    add_user(&data, "alice", ALICE_PASSWORD);
    let k = krbtgt_kvno(&data);
    let mut dc1 = serve(&data);
    let old = Client::new(dir.path(), "old", &dc1);
    old.kinit("alice@SAMDOM.EXAMPLE.COM", ALICE_PASSWORD);
    old.ok("kvno", &["HOST/dc1.samdom.example.com"], None);

    // A backup taken while the TGT is live, restored as a new DC.
    let backups = dir.path().join("backups");
    ok(&[
        "domain",
        "backup",
        "offline",
        "-H",
        &s(&data),
        "--targetdir",
        &s(&backups),
        "--json",
    ]);
    dc1.stop();
    let archive = std::fs::read_dir(&backups)
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| p.to_string_lossy().ends_with(".tar.zst"))
        .unwrap();
    let restored = dir.path().join("restored");
    let out = json(&ok(&[
        "domain",
        "backup",
        "restore",
        "--backup-file",
        &s(&archive),
        "--targetdir",
        &s(&restored),
        "--newservername",
        "DC2",
        "--json",
    ]));
    assert_eq!(out["krbtgt_rotated"]["times"], 2, "{out}");
    assert_eq!(out["krbtgt_rotated"]["kvno"], k + 2, "{out}");
    assert_eq!(
        out["krbtgt_rotated"]["dn"],
        format!("CN=krbtgt,CN=Users,{}", common::DOMAIN)
    );
    assert_eq!(krbtgt_kvno(&restored), k + 2);
    // People are told too.
    let said = ok(&[
        "domain",
        "backup",
        "restore",
        "--backup-file",
        &s(&archive),
        "--targetdir",
        &s(&dir.path().join("restored-again")),
        "--newservername",
        "DC3",
    ]);
    assert!(
        said.contains(&format!("keys rotated 2 times (now kvno {})", k + 2))
            && said.contains("tickets issued before the restore are refused"),
        "{said}"
    );

    // The restored DC refuses the TGT from before; a new logon there works.
    let dc2 = serve(&restored);
    let spn = "HOST/dc2.samdom.example.com";
    let before = old.pointed_at(dir.path(), "before", &dc2);
    let err = before.fails("kvno", &[spn], None);
    assert!(err.contains("Key version"), "{err}");
    let fresh = Client::new(dir.path(), "fresh", &dc2);
    fresh.kinit("alice@SAMDOM.EXAMPLE.COM", ALICE_PASSWORD);
    let out = fresh.ok("kvno", &[spn], None);
    assert!(out.contains(spn), "{out}");
    // The Administrator's password came through the backup unchanged.
    fresh.kinit("Administrator@SAMDOM.EXAMPLE.COM", PASSWORD);
}
