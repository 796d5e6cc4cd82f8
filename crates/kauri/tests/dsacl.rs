//! `kauri dsacl` end to end, on a provisioned domain's data folder and on the same kind
//! of domain served over LDAPS: showing a descriptor (table, SDDL, JSON), adding an ACE
//! that the objects below inherit at once, removing it again, changing the owner, and
//! the effective rights of a user on its own object, of a helpdesk member granted
//! Reset-Password through a group, and of the Administrator. Where `samba-tool` is
//! installed, it must read back the descriptor `kauri dsacl set` wrote.

mod common;

use std::process::Command;

use common::{fails, json, ok, provision, serve, DOMAIN, PASSWORD};
use kauri_domain::security::SecurityDescriptor;
use kauri_domain::sid::Sid;
use serde_json::Value;

/// User-Force-Change-Password ("Reset password").
const RESET: &str = "00299570-246d-11d0-a768-00aa006e0529";
/// The user class.
const USER_CLASS: &str = "bf967aba-0de6-11d0-a285-00aa003049e2";

/// The commands of one scenario, with the target's arguments appended.
struct Run {
    target: Vec<String>,
}

impl Run {
    fn args(&self, args: &[&str]) -> Vec<String> {
        let mut all: Vec<String> = args.iter().map(|a| a.to_string()).collect();
        all.extend(self.target.iter().cloned());
        all
    }

    fn ok(&self, args: &[&str]) -> String {
        ok(&self.args(args))
    }

    fn json(&self, args: &[&str]) -> Value {
        let mut a = self.args(args);
        a.push("--json".into());
        json(&ok(&a))
    }

    fn fails(&self, args: &[&str]) -> String {
        fails(&self.args(args))
    }

    fn sddl(&self, dn: &str) -> String {
        self.ok(&["dsacl", "show", dn, "--sddl"]).trim().to_string()
    }

    /// Whether `name` holds the extended right `right` on `dn`.
    fn granted(&self, dn: &str, name: &str, right: &str) -> bool {
        let v = self.json(&["dsacl", "show", dn, "--effective-for", name]);
        v["extended_rights"]
            .as_array()
            .unwrap()
            .iter()
            .find(|r| r["name"] == right)
            .unwrap_or_else(|| panic!("no {right} in {v}"))["granted"]
            .as_bool()
            .unwrap()
    }
}

/// The SID of a group, from `group show --json` (objectSid comes as base64).
fn group_sid(run: &Run, name: &str) -> Sid {
    use base64::Engine;
    let v = run.json(&["group", "show", name]);
    let b64 = v["objectSid"][0]["base64"].as_str().unwrap();
    let bytes = base64::engine::general_purpose::STANDARD
        .decode(b64)
        .unwrap();
    Sid::from_bytes(&bytes).unwrap()
}

/// The domain's SID, from the Administrator's.
fn domain_sid(run: &Run) -> Sid {
    let v = run.json(&["dsacl", "show", &format!("CN=Users,{DOMAIN}")]);
    let owner = v["owner"]["sid"].as_str().unwrap();
    assert_eq!(v["owner"]["name"], "SAMDOM\\Domain Admins", "{v}");
    Sid::parse(owner.strip_suffix("-512").unwrap()).unwrap()
}

fn scenario(run: &Run) {
    let ou = format!("OU=Delegated,{DOMAIN}");
    let child_ou = format!("OU=Child,{ou}");
    let tane = format!("CN=tane,{ou}");
    run.ok(&["ou", "add", "OU=Delegated"]);
    run.ok(&["ou", "add", "OU=Child,OU=Delegated"]);
    run.ok(&[
        "user",
        "add",
        "tane",
        "--password",
        "Koru.Passw0rd!",
        "--ou",
        "OU=Delegated",
    ]);
    run.ok(&["user", "add", "aroha", "--password", "Huia.Passw0rd!"]);
    run.ok(&["group", "add", "Helpdesk"]);
    run.ok(&["group", "add-members", "Helpdesk", "aroha"]);
    let dom = domain_sid(run);
    let helpdesk = group_sid(run, "Helpdesk");

    // The table: owner and group by name, one row per ACE with trustees by name, rights
    // in words, object types by their schema names.
    let table = run.ok(&["dsacl", "show", "OU=Delegated"]);
    assert!(
        table.starts_with(&format!("Descriptor of {ou}\n")),
        "{table}"
    );
    assert!(
        table.contains("Owner: SAMDOM\\Domain Admins (S-1-5-21-"),
        "{table}"
    );
    assert!(table.contains("DACL: "), "{table}");
    let lines: Vec<&str> = table.lines().collect();
    assert!(
        lines.iter().any(|l| l.starts_with("TYPE ")
            && l.contains("TRUSTEE")
            && l.contains("RIGHTS")
            && l.contains("OBJECT TYPE")
            && l.contains("APPLIES TO")),
        "{table}"
    );
    assert!(
        lines.iter().any(|l| l.starts_with("allow  explicit")
            && l.contains("NT AUTHORITY\\Authenticated Users")
            && l.contains("list contents, read property, list object, read permissions")),
        "{table}"
    );
    assert!(
        lines
            .iter()
            .any(|l| l.contains("BUILTIN\\Account Operators")
                && l.contains("create child, delete child")
                && l.contains("user (class)")),
        "{table}"
    );
    assert!(
        lines.iter().any(|l| l.contains("inherited")
            && l.contains("(property set)")
            && l.contains("descendant user objects")),
        "{table}"
    );

    // SDDL alone, with the domain's aliases, as samba-tool prints it.
    let before = run.sddl("OU=Delegated");
    assert!(before.starts_with("O:DAG:DAD:AI("), "{before}");
    SecurityDescriptor::from_sddl(&before, &dom).unwrap();
    assert_eq!(
        run.json(&["dsacl", "show", "OU=Delegated", "--sddl"])["sddl"],
        before.as_str()
    );

    // JSON: the same descriptor, structured.
    let v = run.json(&["dsacl", "show", "OU=Delegated"]);
    assert_eq!(v["dn"], ou.as_str());
    assert_eq!(v["sddl"], before.as_str());
    assert_eq!(v["owner"]["name"], "SAMDOM\\Domain Admins");
    assert_eq!(v["group"]["sid"], format!("{dom}-512"));
    assert!(v["sacl"].is_null());
    let aces = v["dacl"]["aces"].as_array().unwrap();
    assert!(v["dacl"]["flags"]
        .as_array()
        .unwrap()
        .contains(&"auto-inherited".into()));
    let ao_user = aces
        .iter()
        .find(|a| a["trustee"]["sid"] == "S-1-5-32-548" && a["object_type"]["guid"] == USER_CLASS)
        .unwrap_or_else(|| panic!("no Account Operators ACE for users in {v}"));
    assert_eq!(ao_user["object_type"]["name"], "user (class)");
    assert_eq!(ao_user["rights"], serde_json::json!(["CC", "DC"]));
    assert_eq!(ao_user["inherited"], false);
    assert_eq!(
        ao_user["sddl"],
        format!("(OA;;CCDC;{USER_CLASS};;AO)").as_str()
    );
    // The SACL only when asked for (the Administrator may read it).
    let with_sacl = run.json(&["dsacl", "show", "OU=Delegated", "--sacl"]);
    assert!(
        with_sacl["sacl"]["aces"].as_array().is_some(),
        "{with_sacl}"
    );
    assert!(with_sacl["sddl"].as_str().unwrap().contains("S:"));

    // Effective rights of a plain user on its own object: PRINCIPAL SELF and Everyone
    // grant Change-Password, nothing grants Reset-Password.
    let own = run.json(&["dsacl", "show", &tane, "--effective-for", "tane"]);
    assert_eq!(own["self"], true, "{own}");
    assert_eq!(own["class"], "user");
    let token: Vec<&str> = own["token"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["sid"].as_str().unwrap())
        .collect();
    for sid in ["S-1-1-0", "S-1-5-11", "S-1-5-2", "S-1-5-15"] {
        assert!(token.contains(&sid), "{sid} missing from {token:?}");
    }
    assert!(token.contains(&format!("{dom}-513").as_str()), "{token:?}");
    assert!(run.granted(&tane, "tane", "User-Change-Password"));
    assert!(!run.granted(&tane, "tane", "User-Force-Change-Password"));
    let sets = own["property_sets"].as_array().unwrap();
    let personal = sets
        .iter()
        .find(|s| s["name"] == "Personal-Information")
        .unwrap();
    assert_eq!(personal["write"], true, "{own}");
    // The table says the same.
    let text = run.ok(&["dsacl", "show", &tane, "--effective-for", "SAMDOM\\tane"]);
    assert!(text.contains("(user, itself)"), "{text}");
    assert!(
        text.lines()
            .any(|l| l.starts_with("User-Change-Password ") && l.ends_with("yes")),
        "{text}"
    );
    assert!(
        text.lines()
            .any(|l| l.starts_with("User-Force-Change-Password ") && l.ends_with("no")),
        "{text}"
    );
    // Another user on it: PRINCIPAL SELF no longer counts.
    let other = run.json(&["dsacl", "show", &tane, "--effective-for", "aroha"]);
    assert_eq!(other["self"], false);
    let personal = other["property_sets"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["name"] == "Personal-Information")
        .unwrap()
        .clone();
    assert_eq!(personal["write"], false, "{other}");
    assert!(!run.granted(&tane, "aroha", "User-Force-Change-Password"));
    // The Administrator (Domain Admins: full control) may reset it.
    assert!(run.granted(&tane, "Administrator", "User-Force-Change-Password"));
    let admin = run.json(&["dsacl", "show", &tane, "--effective-for", "Administrator"]);
    assert_eq!(
        admin["object"]["rights"],
        serde_json::json!([
            "CC", "DC", "LC", "SW", "RP", "WP", "DT", "LO", "CR", "SD", "RC", "WD", "WO"
        ])
    );

    // Delegate Reset-Password on the users below the OU to the helpdesk group.
    let ace = format!("(OA;CI;CR;{RESET};{USER_CLASS};{helpdesk})");
    let set = run.json(&["dsacl", "set", "OU=Delegated", "--sddl", &ace]);
    assert_eq!(set["old"], before.as_str());
    assert_eq!(set["added"], serde_json::json!([ace]));
    assert_eq!(set["sd_flags"], 4);
    let after = run.sddl("OU=Delegated");
    assert_eq!(set["new"], after.as_str());
    // First among the explicit ACEs, the rest as it was.
    assert!(after.starts_with(&format!("O:DAG:DAD:AI{ace}")), "{after}");
    assert_eq!(after.replacen(&ace, "", 1), before);
    // Inherited at once: the user below gets it marked ID, the OU below keeps it for
    // its own users (inherit-only, as it is not a user).
    let on_user = ace.replacen("OA;CI;", "OA;CIID;", 1);
    assert!(run.sddl(&tane).contains(&on_user), "{}", run.sddl(&tane));
    let on_ou = ace.replacen("OA;CI;", "OA;CIIOID;", 1);
    assert!(
        run.sddl(&child_ou).contains(&on_ou),
        "{}",
        run.sddl(&child_ou)
    );
    // The table names it.
    let table = run.ok(&["dsacl", "show", "OU=Delegated"]);
    assert!(
        table.lines().any(|l| l.contains("SAMDOM\\Helpdesk")
            && l.contains("User-Force-Change-Password (extended right)")
            && l.contains("this object and descendant user objects")),
        "{table}"
    );
    // Now the helpdesk member may reset tane's password (through tokenGroups).
    assert!(run.granted(&tane, "aroha", "User-Force-Change-Password"));
    assert!(!run.granted(&tane, "tane", "User-Force-Change-Password"));
    // Set again: already there, nothing written.
    let again = run.json(&["dsacl", "set", "OU=Delegated", "--sddl", &ace]);
    assert_eq!(again["skipped"], serde_json::json!([ace]));
    assert_eq!(again["sd_flags"], 0);
    assert_eq!(run.sddl("OU=Delegated"), after);

    // The owner alone (SD flags 1): the DACL stays.
    let owned = run.json(&["dsacl", "set", "OU=Delegated", "--owner", "BA"]);
    assert_eq!(owned["sd_flags"], 1);
    let now = run.sddl("OU=Delegated");
    assert_eq!(now, after.replacen("O:DA", "O:BA", 1));
    run.ok(&["dsacl", "set", "OU=Delegated", "--owner", "Domain Admins"]);
    assert_eq!(run.sddl("OU=Delegated"), after);

    // Bad input is refused with the place of the mistake, and nothing changes.
    let err = run.fails(&["dsacl", "set", "OU=Delegated", "--sddl", "(A;;QQ;;;AU)"]);
    assert!(err.contains("bad SDDL at offset 4"), "{err}");
    let err = run.fails(&["dsacl", "set", "OU=Delegated", "--sddl", "(A;ID;RP;;;AU)"]);
    assert!(err.contains("inherited"), "{err}");
    assert_eq!(run.sddl("OU=Delegated"), after);

    // Delete removes it here and below; an ACE that is not there is reported.
    let deleted = run.json(&[
        "dsacl",
        "delete",
        "OU=Delegated",
        "--sddl",
        &format!("{ace}(A;;RP;;;BG)"),
    ]);
    assert_eq!(deleted["removed"], serde_json::json!([ace]));
    assert_eq!(deleted["not_found"], serde_json::json!(["(A;;RP;;;BG)"]));
    assert_eq!(run.sddl("OU=Delegated"), before);
    assert!(!run.sddl(&tane).contains(&on_user));
    assert!(!run.sddl(&child_ou).contains(&on_ou));
    assert!(!run.granted(&tane, "aroha", "User-Force-Change-Password"));

    // Replacing the explicit ACEs: protected, the OU below keeps only what it is given;
    // unprotected again (--sddl-replace alone takes --sddl's ACEs), it inherits again.
    let replaced = run.json(&[
        "dsacl",
        "set",
        &child_ou,
        "--sddl-replace",
        "D:P(A;;GA;;;DA)(A;;LCRPLORC;;;AU)",
    ]);
    assert_eq!(replaced["sd_flags"], 4);
    assert_eq!(
        run.sddl(&child_ou),
        "O:DAG:DAD:PAI(A;;CCDCLCSWRPWPDTLOCRSDRCWDWO;;;DA)(A;;LCRPLORC;;;AU)"
    );
    run.ok(&[
        "dsacl",
        "set",
        &child_ou,
        "--sddl",
        "(A;;LCRPLORC;;;AU)",
        "--sddl-replace",
    ]);
    let reinherited = run.sddl(&child_ou);
    assert!(
        reinherited.starts_with("O:DAG:DAD:AI(A;;LCRPLORC;;;AU)(") && reinherited.contains("ID;"),
        "{reinherited}"
    );
}

#[test]
fn dsacl_on_a_data_folder() {
    let dir = tempfile::tempdir().unwrap();
    let data = provision(dir.path(), "domain");
    scenario(&Run {
        target: vec!["-H".into(), data.display().to_string()],
    });
}

#[test]
fn dsacl_against_a_server_and_samba_tool_reads_what_it_wrote() {
    let dir = tempfile::tempdir().unwrap();
    let data = provision(dir.path(), "domain");
    let served = serve(&data);
    let run = Run {
        target: served.as_admin(&served.ldaps()),
    };
    scenario(&run);

    // samba-tool, where installed, reads the descriptor kauri wrote.
    if Command::new("samba-tool")
        .arg("--version")
        .output()
        .is_err()
    {
        eprintln!("samba-tool is not installed: cross-check skipped");
        return;
    }
    let dom = domain_sid(&run);
    let ace = "(A;CI;RPWP;;;S-1-5-21-1-2-3-4444)";
    run.ok(&["dsacl", "set", "OU=Delegated", "--sddl", ace]);
    // samba-tool reads the whole descriptor, the SACL too.
    let ours = run
        .ok(&["dsacl", "show", "OU=Delegated", "--sddl", "--sacl"])
        .trim()
        .to_string();
    let conf = dir.path().join("client.conf");
    std::fs::write(
        &conf,
        format!(
            "[global]\n\tworkgroup = SAMDOM\n\trealm = SAMDOM.EXAMPLE.COM\n\ttls cafile = {}\n",
            served.ca.display()
        ),
    )
    .unwrap();
    let o = Command::new("samba-tool")
        .args(["dsacl", "get"])
        .arg(format!("--objectdn=OU=Delegated,{DOMAIN}"))
        .arg("-H")
        .arg(served.ldap())
        .arg("-s")
        .arg(&conf)
        .arg(format!(
            "--simple-bind-dn=CN=Administrator,CN=Users,{DOMAIN}"
        ))
        .arg(format!("--password={PASSWORD}"))
        .output()
        .unwrap();
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(
        o.status.success(),
        "samba-tool dsacl get: {out}{}",
        String::from_utf8_lossy(&o.stderr)
    );
    let theirs = out
        .lines()
        .find(|l| l.starts_with("O:"))
        .unwrap_or_else(|| panic!("no descriptor in {out}"));
    assert!(theirs.contains(ace), "{theirs}");
    // Samba prints rights in another order; parsed, the two are the same descriptor.
    assert_eq!(
        SecurityDescriptor::from_sddl(theirs, &dom).unwrap(),
        SecurityDescriptor::from_sddl(&ours, &dom).unwrap()
    );
}
