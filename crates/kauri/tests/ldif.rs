//! `kauri ldif import` and `export` end to end: a domain's writable content carried into a
//! new domain, change records of every kind, refusals reported by line (stopping or going
//! on), and the same import and export against a server.

mod common;

use std::path::Path;

use common::{fails, json, ok, provision, serve, DOMAIN};

/// `kauri ldif import --continue-on-error` into the domain at `data`, which must refuse
/// something; its JSON report.
fn import_refusing_some(file: &Path, data: &str) -> serde_json::Value {
    let out = common::kauri(&[
        "ldif",
        "import",
        &s(file),
        "-H",
        data,
        "--continue-on-error",
        "--json",
    ]);
    assert!(!out.status.success());
    json(&String::from_utf8_lossy(&out.stdout))
}

fn s(p: &Path) -> String {
    p.display().to_string()
}

#[test]
fn a_writable_export_imports_into_a_new_domain() {
    let dir = tempfile::tempdir().unwrap();
    let a = provision(dir.path(), "a");
    let b = provision(dir.path(), "b");
    let (a_s, b_s) = (s(&a), s(&b));
    ok(&["ou", "add", "OU=Sales", "-H", &a_s]);
    ok(&[
        "user",
        "add",
        "kiri",
        "--given-name",
        "Kiri",
        "--ou",
        "OU=Sales",
        "-H",
        &a_s,
    ]);
    ok(&["user", "add", "tama", "--ou", "OU=Sales", "-H", &a_s]);
    ok(&["group", "add", "Sellers", "--ou", "OU=Sales", "-H", &a_s]);
    // The group was created after its members' OU but holds them: the links come last.
    ok(&["group", "add-members", "Sellers", "kiri,tama", "-H", &a_s]);
    let file = dir.path().join("sales.ldif");
    ok(&[
        "ldif",
        "export",
        "-H",
        &a_s,
        "--writable-only",
        "--base",
        &format!("OU=Sales,{DOMAIN}"),
        "-o",
        &s(&file),
    ]);
    let text = std::fs::read_to_string(&file).unwrap();
    assert!(text.contains("changetype: add") && text.contains("changetype: modify"));
    for hidden in [
        "objectGUID",
        "objectSid",
        "whenCreated",
        "uSNChanged",
        "memberOf",
    ] {
        assert!(
            !text.contains(&format!("\n{hidden}:")),
            "{hidden} exported:\n{text}"
        );
    }
    let report = json(&ok(&["ldif", "import", &s(&file), "-H", &b_s, "--json"]));
    assert_eq!(report["applied"], 5, "{report}");
    assert_eq!(report["refused"], 0);
    let members = json(&ok(&[
        "group",
        "list-members",
        "Sellers",
        "-H",
        &b_s,
        "--json",
    ]));
    assert_eq!(members.as_array().unwrap().len(), 2);
    let kiri = json(&ok(&["user", "show", "kiri", "-H", &b_s, "--json"]));
    assert_eq!(kiri["givenName"][0], "Kiri");
    // A new SID, of domain b.
    let a_sid = json(&ok(&["user", "show", "kiri", "-H", &a_s, "--json"]))["objectSid"].clone();
    assert_ne!(kiri["objectSid"], a_sid);
    // The full export keeps everything but secrets, parents first.
    let all = ok(&["ldif", "export", "-H", &a_s]);
    let pos = |needle: &str| {
        all.find(needle)
            .unwrap_or_else(|| panic!("{needle} missing"))
    };
    assert!(
        pos(&format!("dn: OU=Sales,{DOMAIN}")) < pos(&format!("dn: CN=Kiri,OU=Sales,{DOMAIN}"))
    );
    assert!(all.contains("\nobjectGUID:: "));
    assert!(!all.contains("\nsupplementalCredentials:") && !all.contains("\nunicodePwd:"));
}

#[test]
fn change_records_apply_and_refusals_are_reported_by_line() {
    let dir = tempfile::tempdir().unwrap();
    let data = provision(dir.path(), "d");
    let d = s(&data);
    let changes = format!(
        "version: 1

# people
dn: CN=Ana,CN=Users,{DOMAIN}
changetype: add
objectClass: user
sAMAccountName: ana
description:: IHN0YXJ0cyB3aXRoIGEgc3BhY2U=

dn: CN=Ana,CN=Users,{DOMAIN}
changetype: modify
replace: title
title: Engineer
-
add: mail
mail: ana@example.com
-

dn: CN=Ana,CN=Users,{DOMAIN}
changetype: add
objectClass: user
sAMAccountName: ana2

dn: CN=Bo,CN=Users,{DOMAIN}
changetype: add
objectClass: user
sAMAccountName: bo

dn: CN=Bo,CN=Users,{DOMAIN}
changetype: moddn
newrdn: CN=Bob
deleteoldrdn: 1
newsuperior: CN=Computers,{DOMAIN}

dn: CN=Bob,CN=Computers,{DOMAIN}
changetype: delete
"
    );
    let file = dir.path().join("changes.ldif");
    std::fs::write(&file, changes).unwrap();
    // Stopping at the first refusal (an entry that exists): everything before it is in,
    // nothing after it.
    let e = fails(&["ldif", "import", &s(&file), "-H", &d]);
    assert!(e.contains("line 19") && e.contains("LDAP result 68"), "{e}");
    let ana = json(&ok(&["user", "show", "ana", "-H", &d, "--json"]));
    assert_eq!(ana["title"][0], "Engineer");
    assert_eq!(ana["description"][0], " starts with a space");
    assert!(fails(&["user", "show", "bo", "-H", &d]).contains("no user named bo"));
    // Going on: the refusals are listed, the rest applied (the first records again refused).
    let report = import_refusing_some(&file, &d);
    assert_eq!(report["applied"], 3, "{report}");
    let lines: Vec<u64> = report["failures"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["line"].as_u64().unwrap())
        .collect();
    assert_eq!(lines, [4, 10, 19]);
    // Bob was renamed, moved and deleted.
    assert!(fails(&["user", "show", "bo", "-H", &d]).contains("no user named"));
    // A file that is not LDIF stops before anything is written.
    let bad = dir.path().join("bad.ldif");
    std::fs::write(&bad, format!("dn: CN=Cy,CN=Users,{DOMAIN}\nno colon\n")).unwrap();
    let e = fails(&["ldif", "import", &s(&bad), "-H", &d]);
    assert!(e.contains("line 2"), "{e}");
}

#[test]
fn import_and_export_against_a_server() {
    let dir = tempfile::tempdir().unwrap();
    let data = provision(dir.path(), "d");
    let served = serve(&data);
    let admin = served.as_admin(&served.ldaps());
    let mut text = String::from("version: 1\n\n");
    text.push_str(&format!(
        "dn: OU=Imported,{DOMAIN}\nobjectClass: organizationalUnit\n\n"
    ));
    for i in 0..300 {
        text.push_str(&format!(
            "dn: CN=Person {i},OU=Imported,{DOMAIN}\nobjectClass: user\nsAMAccountName: person{i}\n\n"
        ));
    }
    text.push_str(&format!(
        "dn: CN=Everyone,OU=Imported,{DOMAIN}\nobjectClass: group\n"
    ));
    for i in 0..300 {
        text.push_str(&format!("member: CN=Person {i},OU=Imported,{DOMAIN}\n"));
    }
    let file = dir.path().join("people.ldif");
    std::fs::write(&file, text).unwrap();
    let mut args: Vec<String> = ["ldif", "import", &s(&file), "--json", "--continue-on-error"]
        .iter()
        .map(|a| a.to_string())
        .collect();
    args.extend(admin.clone());
    let report = json(&ok(&args));
    assert_eq!(report["applied"], 302, "{report}");
    // Export over LDAP: paged, parents before children, ranged members read whole.
    let mut args: Vec<String> = ["ldif", "export", "--base", &format!("OU=Imported,{DOMAIN}")]
        .iter()
        .map(|a| a.to_string())
        .collect();
    args.extend(admin);
    let out = ok(&args);
    assert_eq!(
        out.matches("\ndn: ").count() + usize::from(out.starts_with("dn: ")),
        302
    );
    assert!(out.starts_with(&format!("dn: OU=Imported,{DOMAIN}")));
    assert_eq!(out.matches("\nmember: ").count(), 300);
    assert!(!out.contains("unicodePwd") && !out.contains("supplementalCredentials"));
}

/// A record too large for one operation goes as an add and modifies that add the rest;
/// when its add is refused, going on past errors does not apply the rest to the object of
/// that name that was already there, and the records after it are still applied.
#[test]
fn the_rest_of_a_refused_large_record_is_not_applied() {
    let dir = tempfile::tempdir().unwrap();
    let data = provision(dir.path(), "d");
    let d = s(&data);
    let mut text = format!(
        "dn: CN=Kept,CN=Users,{DOMAIN}\nchangetype: add\nobjectClass: contact\n\n\
         dn: CN=Kept,CN=Users,{DOMAIN}\nchangetype: add\nobjectClass: contact\n"
    );
    for i in 0..5_010 {
        text.push_str(&format!("url: https://example.com/{i}\n"));
    }
    text.push_str(&format!(
        "\ndn: CN=After,CN=Users,{DOMAIN}\nchangetype: add\nobjectClass: contact\n"
    ));
    let file = dir.path().join("large.ldif");
    std::fs::write(&file, text).unwrap();
    let report = import_refusing_some(&file, &d);
    assert_eq!(report["applied"], 2, "{report}");
    assert_eq!(report["refused"], 1, "{report}");
    let export = |cn: &str| {
        let base = format!("CN={cn},CN=Users,{DOMAIN}");
        ok(&["ldif", "export", "-H", &d, "--base", &base])
    };
    let kept = export("Kept");
    assert!(!kept.contains("\nurl:"), "{kept}");
    let export = export("After");
    assert!(export.contains("dn: CN=After"), "{export}");
}
