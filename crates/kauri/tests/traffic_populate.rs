//! `kauri traffic populate`: straight into a data folder and over LDAP, the same seed
//! makes the same domain, group sizes follow a power law, a rerun finds everything made,
//! a run with fewer users is extended to the full one, and the populated accounts sign in
//! with the known password.

mod common;

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use common::{json, ok, provision, serve, DOMAIN, PASSWORD};

const SHAPE: [&str; 8] = [
    "--users",
    "300",
    "--computers",
    "60",
    "--groups",
    "30",
    "--ous",
    "10",
];

/// What the tests compare of a domain: every DN below the domain's populated OUs and
/// every group's members, each in lower case.
#[derive(Debug, PartialEq, Eq)]
struct Shape {
    dns: BTreeSet<String>,
    members: BTreeMap<String, BTreeSet<String>>,
}

/// The entries of an LDIF export as (DN, attributes), long lines unfolded.
fn ldif_entries(text: &str) -> Vec<(String, Vec<(String, String)>)> {
    let mut out = Vec::new();
    for block in text.split("\n\n") {
        let mut lines: Vec<String> = Vec::new();
        for line in block.lines() {
            match (line.strip_prefix(' '), lines.last_mut()) {
                (Some(more), Some(last)) => last.push_str(more),
                _ => lines.push(line.to_string()),
            }
        }
        let mut dn = None;
        let mut attrs = Vec::new();
        for l in lines {
            let Some((name, value)) = l.split_once(": ") else {
                continue;
            };
            if name == "dn" {
                dn = Some(value.to_string());
            } else {
                attrs.push((name.to_string(), value.to_string()));
            }
        }
        if let Some(dn) = dn {
            out.push((dn, attrs));
        }
    }
    out
}

/// The populated part of a data folder (everything below OUs other than the domain
/// controllers', and the computers' DNS names).
fn shape_of(data: &Path) -> Shape {
    let file = data.with_extension("ldif");
    ok(&[
        "ldif".as_ref(),
        "export".as_ref(),
        "-H".as_ref(),
        data.as_os_str(),
        "--base".as_ref(),
        DOMAIN.as_ref(),
        "-o".as_ref(),
        file.as_os_str(),
    ]);
    let text = std::fs::read_to_string(&file).expect("read the export");
    let mut shape = Shape {
        dns: BTreeSet::new(),
        members: BTreeMap::new(),
    };
    for (dn, attrs) in ldif_entries(&text) {
        if !dn.contains("OU=") || dn.contains("OU=Domain Controllers") {
            continue;
        }
        let dn = dn.to_lowercase();
        let is_group = attrs
            .iter()
            .any(|(n, v)| n == "objectClass" && v.eq_ignore_ascii_case("group"));
        if is_group {
            let members = attrs
                .iter()
                .filter(|(n, _)| n == "member")
                .map(|(_, v)| v.to_lowercase())
                .collect();
            shape.members.insert(dn.clone(), members);
        }
        shape.dns.insert(dn);
    }
    shape
}

fn populate_local(data: &Path, extra: &[&str]) -> serde_json::Value {
    let mut args: Vec<&std::ffi::OsStr> = vec![
        "traffic".as_ref(),
        "populate".as_ref(),
        "--local".as_ref(),
        data.as_os_str(),
        "--json".as_ref(),
    ];
    args.extend(SHAPE.iter().map(std::ffi::OsStr::new));
    args.extend(extra.iter().map(std::ffi::OsStr::new));
    json(&ok(&args))
}

#[test]
fn local_populate_is_valid_repeatable_and_resumable() {
    let dir = tempfile::tempdir().unwrap();
    let a = provision(dir.path(), "a");
    let b = provision(dir.path(), "b");

    let made = populate_local(&a, &["--seed", "7", "--password-users", "20"]);
    assert_eq!(made["created"]["users"], 300);
    assert_eq!(made["created"]["computers"], 60);
    assert_eq!(made["created"]["groups"], 30);
    assert_eq!(made["created"]["ous"], 10);
    assert_eq!(made["created"]["dns_records"], 60);
    assert_eq!(made["refused"], 0);
    assert_eq!(made["password_users"], 20);
    let check = json(&ok(&["dbcheck", "-H", a.to_str().unwrap(), "--json"]));
    assert_eq!(check["clean"], true, "{check}");

    // The manifest names the accounts with the known password.
    let manifest: serde_json::Value =
        serde_json::from_slice(&std::fs::read(a.join("populate.json")).unwrap()).unwrap();
    assert_eq!(manifest["version"], 1);
    assert_eq!(manifest["realm"], "SAMDOM.EXAMPLE.COM");
    assert_eq!(manifest["netbios_domain"], "SAMDOM");
    assert_eq!(manifest["base_dn"], DOMAIN);
    assert_eq!(manifest["seed"], 7);
    assert_eq!(manifest["accounts"].as_array().unwrap().len(), 20);

    // The same seed makes the same domain in another folder (another domain SID).
    populate_local(&b, &["--seed", "7", "--password-users", "20"]);
    let shape = shape_of(&a);
    assert_eq!(shape, shape_of(&b));
    assert_eq!(shape.members.len(), 30);

    // Group sizes follow a power law: one group holds every user, the biggest others
    // are much bigger than the median.
    let mut sizes: Vec<usize> = shape.members.values().map(BTreeSet::len).collect();
    sizes.sort_unstable();
    assert_eq!(sizes[sizes.len() - 1], 300, "{sizes:?}");
    let median = sizes[sizes.len() / 2];
    assert!(sizes[sizes.len() - 2] >= 5 * median.max(1), "{sizes:?}");
    // Some groups hold groups.
    let groups: BTreeSet<&String> = shape.members.keys().collect();
    assert!(shape
        .members
        .values()
        .any(|m| m.iter().any(|d| groups.contains(d))));

    // A rerun finds everything and changes nothing.
    let before = std::fs::read_to_string(a.with_extension("ldif")).unwrap();
    let again = populate_local(&a, &["--seed", "7", "--password-users", "20"]);
    for kind in ["ous", "users", "computers", "groups", "dns_records"] {
        assert_eq!(again["created"][kind], 0, "{again}");
        assert_eq!(
            again["already_present"][kind], made["created"][kind],
            "{again}"
        );
    }
    shape_of(&a);
    let after = std::fs::read_to_string(a.with_extension("ldif")).unwrap();
    assert_eq!(before, after);

    // Another seed makes another domain.
    let c = provision(dir.path(), "c");
    populate_local(&c, &["--seed", "8"]);
    assert_ne!(shape_of(&c).dns, shape.dns);
}

#[test]
fn populate_over_ldap_resumes_and_its_accounts_sign_in() {
    let dir = tempfile::tempdir().unwrap();
    let served_data = provision(dir.path(), "served");
    let server = serve(&served_data);
    let url = server.ldaps();
    let manifest = dir.path().join("populate.json");
    let run = |users: &str| {
        let mut args: Vec<String> = vec![
            "traffic".into(),
            "populate".into(),
            "--server".into(),
            url.clone(),
            "-U".into(),
            "SAMDOM\\Administrator".into(),
            "--bind-password".into(),
            PASSWORD.into(),
            "--cacert".into(),
            server.ca.display().to_string(),
            "--concurrency".into(),
            "4".into(),
            "--seed".into(),
            "3".into(),
            "--password-users".into(),
            "10".into(),
            "--manifest".into(),
            manifest.display().to_string(),
            "--json".into(),
        ];
        args.extend(SHAPE.iter().map(|a| a.to_string()));
        if let Some(i) = args.iter().position(|a| a == "300") {
            args[i] = users.to_string();
        }
        json(&ok(&args))
    };
    // A run cut short (here: fewer users), then the whole run: it finds what the first
    // made and adds the rest.
    let first = run("150");
    assert_eq!(first["created"]["users"], 150);
    assert_eq!(first["refused"], 0);
    let second = run("300");
    assert_eq!(second["already_present"]["users"], 150, "{second}");
    assert_eq!(second["created"]["users"], 150, "{second}");
    assert_eq!(second["already_present"]["groups"], 30, "{second}");
    assert_eq!(second["already_present"]["computers"], 60, "{second}");
    assert_eq!(second["refused"], 0, "{second}");

    // A populated account signs in with the known password (over LDAPS, with the
    // project's own client) and reads itself.
    let m: serde_json::Value = serde_json::from_slice(&std::fs::read(&manifest).unwrap()).unwrap();
    let account = &m["accounts"][3];
    let sam = account["sam_account_name"].as_str().unwrap();
    let shown = json(&ok(&[
        "user",
        "show",
        sam,
        "-H",
        &url,
        "-U",
        account["upn"].as_str().unwrap(),
        "--bind-password",
        m["password"].as_str().unwrap(),
        "--cacert",
        &server.ca.display().to_string(),
        "--json",
    ]));
    assert_eq!(shown["dn"], account["dn"], "{shown}");
    drop(server);

    // What the server holds is what a local run of the same seed makes.
    let local = provision(dir.path(), "local");
    populate_local(&local, &["--seed", "3", "--password-users", "10"]);
    assert_eq!(shape_of(&served_data), shape_of(&local));
}
