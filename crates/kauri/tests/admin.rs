//! The object-management commands end to end, on a provisioned domain's data folder and
//! on the same domain served over LDAP (StartTLS and LDAPS): the same scenario must give
//! the same answers and the same refusals wherever it runs.

mod common;

use common::{fails, json, kauri, ok, provision, serve, whoami, DOMAIN, PASSWORD};

/// Runs one scenario against a target given by `target` (the -H and credential
/// arguments); `check_bind` tries a password with a real LDAP client.
fn scenario(target: &[String], check_bind: &dyn Fn(&str, &str) -> bool) {
    let run = |args: &[&str]| {
        let mut all: Vec<String> = args.iter().map(|a| a.to_string()).collect();
        all.extend(target.iter().cloned());
        all
    };
    let k = |args: &[&str]| ok(&run(args));
    let k_json = |args: &[&str]| {
        let mut a = run(args);
        a.push("--json".into());
        json(&ok(&a))
    };
    let refused = |args: &[&str]| fails(&run(args));

    // Users: a whole life.
    let added = k_json(&[
        "user",
        "add",
        "kiri",
        "--given-name",
        "Kiri",
        "--surname",
        "Tane",
        "--mail",
        "kiri@example.com",
        "--password",
        "Koru.Passw0rd!",
    ]);
    let kiri_dn = format!("CN=Kiri Tane,CN=Users,{DOMAIN}");
    assert_eq!(added["dn"], kiri_dn);
    assert!(check_bind("kiri@samdom.example.com", "Koru.Passw0rd!"));
    let users = k_json(&["user", "list"]);
    let kiri = users
        .as_array()
        .unwrap()
        .iter()
        .find(|u| u["sAMAccountName"] == "kiri")
        .unwrap()
        .clone();
    assert_eq!(kiri["enabled"], true);
    assert_eq!(kiri["displayName"], "Kiri Tane");
    assert_eq!(kiri["userPrincipalName"], "kiri@samdom.example.com");
    let table = k(&["user", "list"]);
    assert!(
        table
            .lines()
            .any(|l| l.starts_with("kiri ") && l.contains("enabled")),
        "{table}"
    );
    // The same account by UPN, DOMAIN\name and DN; never a secret.
    for name in ["kiri@samdom.example.com", "SAMDOM\\kiri", kiri_dn.as_str()] {
        let shown = k_json(&["user", "show", name]);
        assert_eq!(shown["dn"], kiri_dn, "{name}");
        assert_eq!(shown["mail"][0], "kiri@example.com");
        assert!(
            shown.get("unicodePwd").is_none() && shown.get("supplementalCredentials").is_none()
        );
    }
    // A second account of the same name is refused with AD's result code.
    let dup = refused(&["user", "add", "kiri", "--cn", "Another Kiri"]);
    assert!(dup.contains("LDAP result 68"), "{dup}");

    k(&["user", "disable", "kiri"]);
    assert!(!check_bind("kiri@samdom.example.com", "Koru.Passw0rd!"));
    let shown = k_json(&["user", "show", "kiri", "--attributes", "userAccountControl"]);
    assert_eq!(shown["userAccountControl"][0], "514");
    k(&["user", "enable", "kiri"]);
    k(&[
        "user",
        "set-password",
        "kiri",
        "--newpassword",
        "Second.Passw0rd!",
    ]);
    assert!(check_bind("SAMDOM\\kiri", "Second.Passw0rd!"));
    assert!(!check_bind("SAMDOM\\kiri", "Koru.Passw0rd!"));
    let random = k_json(&["user", "set-password", "kiri", "--random-password"]);
    let generated = random["password"].as_str().unwrap().to_string();
    assert!(check_bind("SAMDOM\\kiri", &generated));
    // A password the policy refuses gets constraintViolation.
    let weak = refused(&["user", "set-password", "kiri", "--newpassword", "abc"]);
    assert!(weak.contains("LDAP result 19"), "{weak}");
    k(&["user", "unlock", "kiri"]);
    k(&["user", "set-expiry", "kiri", "--days", "30"]);
    let expires: i64 = k_json(&["user", "show", "kiri", "--attributes", "accountExpires"])
        ["accountExpires"][0]
        .as_str()
        .unwrap()
        .parse()
        .unwrap();
    assert!(expires > 130_000_000_000_000_000 && expires < i64::MAX);
    k(&["user", "set-expiry", "kiri", "--noexpiry"]);
    // A user without a password is created disabled, and stays so until it has one.
    k(&["user", "add", "nopass"]);
    let refused_enable = refused(&["user", "enable", "nopass"]);
    assert!(
        refused_enable.contains("LDAP result 53"),
        "{refused_enable}"
    );
    k(&[
        "user",
        "add",
        "fresh",
        "--random-password",
        "--must-change-at-next-login",
    ]);
    let fresh = k_json(&["user", "show", "fresh", "--attributes", "pwdLastSet"]);
    assert_eq!(fresh["pwdLastSet"][0], "0");

    // OUs.
    k(&["ou", "add", "OU=Sales", "--description", "the sales team"]);
    k(&["ou", "add", "OU=North,OU=Sales"]);
    let ous = k(&["ou", "list"]);
    assert!(ous.lines().any(|l| l == "OU=North,OU=Sales"), "{ous}");
    k(&["user", "move", "kiri", "OU=North,OU=Sales"]);
    let moved = format!("CN=Kiri Tane,OU=North,OU=Sales,{DOMAIN}");
    assert_eq!(k_json(&["user", "show", "kiri"])["dn"], moved);
    k(&["ou", "rename", "OU=North,OU=Sales", "Northern"]);
    let objects = k_json(&["ou", "list-objects", "OU=Sales", "--recursive"]);
    let dns: Vec<&str> = objects
        .as_array()
        .unwrap()
        .iter()
        .map(|o| o["dn"].as_str().unwrap())
        .collect();
    assert_eq!(
        dns,
        [
            format!("CN=Kiri Tane,OU=Northern,OU=Sales,{DOMAIN}"),
            format!("OU=Northern,OU=Sales,{DOMAIN}")
        ]
    );
    k(&["ou", "add", "OU=Archive"]);
    k(&["ou", "move", "OU=Northern,OU=Sales", "OU=Archive"]);
    assert_eq!(
        k_json(&["user", "show", "kiri"])["dn"],
        format!("CN=Kiri Tane,OU=Northern,OU=Archive,{DOMAIN}")
    );

    // Groups: nesting, members by any name, statistics.
    k(&["group", "add", "Staff", "--description", "everyone"]);
    k(&["group", "add", "Leads"]);
    k(&[
        "group",
        "add",
        "Newsletter",
        "--group-scope",
        "universal",
        "--group-type",
        "distribution",
        "--ou",
        "OU=Sales",
    ]);
    // AD's nesting rules hold: a global group takes no universal group.
    let nested_wrong = refused(&["group", "add-members", "Leads", "Newsletter"]);
    assert!(nested_wrong.contains("LDAP result 53"), "{nested_wrong}");
    k(&["group", "add-members", "Leads", "kiri,fresh"]);
    k(&["group", "add-members", "Staff", "Leads", "nopass"]);
    let direct = k_json(&["group", "list-members", "Staff"]);
    let names: Vec<&str> = direct
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["Leads", "nopass"]);
    let nested = k_json(&["group", "list-members", "Staff", "--recursive"]);
    assert_eq!(nested.as_array().unwrap().len(), 4, "{nested}");
    let again = refused(&["group", "add-members", "Staff", "nopass"]);
    // AD answers a member already there with entryAlreadyExists.
    assert!(again.contains("LDAP result 68"), "{again}");
    let groups = k_json(&["group", "list", "--verbose"]);
    let leads = groups
        .as_array()
        .unwrap()
        .iter()
        .find(|g| g["sAMAccountName"] == "Leads")
        .unwrap();
    assert_eq!(leads["type"], "global security");
    assert_eq!(leads["members"], 2);
    let news = k_json(&["group", "show", "Newsletter"]);
    assert_eq!(news["dn"], format!("CN=Newsletter,OU=Sales,{DOMAIN}"));
    assert_eq!(news["groupType"][0], "8");
    let stats = k_json(&["group", "stats", "--top", "2"]);
    assert!(stats["groups"].as_u64().unwrap() >= 40);
    assert_eq!(stats["largest"].as_array().unwrap().len(), 2);
    assert_eq!(stats["by_type"]["universal distribution"], 1);
    k(&["group", "remove-members", "Leads", "fresh"]);
    assert_eq!(
        k_json(&["group", "list-members", "Leads"])
            .as_array()
            .unwrap()
            .len(),
        1
    );
    k(&["group", "move", "Staff", "OU=Sales"]);
    k(&["group", "delete", "Newsletter"]);
    let gone = refused(&["group", "show", "Newsletter"]);
    assert!(gone.contains("no group named Newsletter"), "{gone}");

    // Computers and contacts.
    let pc = k_json(&["computer", "add", "ws042"]);
    assert_eq!(pc["sAMAccountName"], "WS042$");
    let computers = k_json(&["computer", "list"]);
    assert!(computers
        .as_array()
        .unwrap()
        .iter()
        .any(|c| c["dNSHostName"] == "ws042.samdom.example.com"));
    let shown = k_json(&["computer", "show", "ws042"]);
    assert_eq!(shown["dn"], format!("CN=WS042,CN=Computers,{DOMAIN}"));
    k(&["group", "add-members", "Staff", "WS042$"]);
    k(&["computer", "delete", "ws042.samdom.example.com"]);
    k(&[
        "contact",
        "add",
        "--given-name",
        "Ana",
        "--surname",
        "Silva",
        "--mail",
        "ana@partner.example",
    ]);
    let contacts = k_json(&["contact", "list"]);
    assert_eq!(contacts[0]["cn"], "Ana Silva");
    k(&["group", "add-members", "Staff", "Ana Silva"]);
    k(&["contact", "delete", "Ana Silva"]);
    assert!(k_json(&["contact", "list"]).as_array().unwrap().is_empty());

    // Deleting a non-empty OU needs the subtree flag.
    let busy = refused(&["ou", "delete", "OU=Archive"]);
    assert!(busy.contains("LDAP result 66"), "{busy}");
    k(&["ou", "delete", "OU=Archive", "--force-subtree-delete"]);
    let gone = refused(&["user", "show", "kiri"]);
    assert!(gone.contains("no user named kiri"), "{gone}");
    k(&["user", "delete", "fresh"]);
    k(&["user", "delete", "nopass"]);
    k(&["ou", "delete", "OU=Sales", "--force-subtree-delete"]);
    k(&["group", "delete", "Leads"]);
}

#[test]
fn every_command_on_a_data_folder_next_to_a_running_server() {
    let dir = tempfile::tempdir().unwrap();
    let data = provision(dir.path(), "domain");
    // The server runs on the same folder the whole time; binds go to it.
    let served = serve(&data);
    let url = served.ldap();
    let target = vec!["-H".to_string(), data.display().to_string()];
    scenario(&target, &|user, pw| whoami(&url, user, pw).is_ok());
    // Both saw one consistent database all along.
    let check = ok(&[
        "dbcheck".as_ref(),
        "-H".as_ref(),
        data.as_os_str(),
        "--json".as_ref(),
    ]);
    assert_eq!(json(&check)["clean"], true, "{check}");
}

#[test]
fn every_command_against_a_server_over_starttls_and_ldaps() {
    let dir = tempfile::tempdir().unwrap();
    let data = provision(dir.path(), "domain");
    let served = serve(&data);
    let url = served.ldap();
    let bind = |user: &str, pw: &str| whoami(&url, user, pw).is_ok();
    scenario(&served.as_admin(&served.ldap()), &bind);
    scenario(&served.as_admin(&served.ldaps()), &bind);
}

#[test]
fn remote_targets_refuse_what_they_cannot_trust_or_authenticate() {
    let dir = tempfile::tempdir().unwrap();
    let data = provision(dir.path(), "domain");
    let served = serve(&data);
    let mut wrong = served.as_admin(&served.ldaps());
    wrong[5] = "Wrong.Passw0rd".into();
    let mut args = vec!["user".to_string(), "list".to_string()];
    args.extend(wrong);
    let e = fails(&args);
    assert!(e.contains("LDAP result 49"), "{e}");
    // A server whose certificate the CA given did not sign.
    let other = provision(dir.path(), "other");
    let _second = serve(&other);
    let mut untrusted = served.as_admin(&served.ldaps());
    untrusted[7] = other.join("tls/ca.pem").display().to_string();
    let mut args = vec!["user".to_string(), "list".to_string()];
    args.extend(untrusted.clone());
    let e = fails(&args);
    assert!(e.to_lowercase().contains("certificate"), "{e}");
    // Not a folder, not a URL.
    let e = fails(&["user", "list", "-H", "http://example.com"]);
    assert!(e.contains("ldap://"), "{e}");
    let e = fails(&["user", "list", "-H", "/nonexistent/folder"]);
    assert!(e.contains("not a domain's data folder"), "{e}");
    // samba-tool's NAME%PASSWORD form of -U.
    let ldaps = served.ldaps();
    let user = format!("SAMDOM\\Administrator%{PASSWORD}");
    let ca = served.ca.display().to_string();
    let listed = json(&ok(&[
        "user", "list", "--json", "-H", &ldaps, "-U", &user, "--cacert", &ca,
    ]));
    assert!(listed
        .as_array()
        .unwrap()
        .iter()
        .any(|u| u["sAMAccountName"] == "Administrator"));
}

/// A domain folder whose database is damaged or gone: `dbcheck` and `serve` stop with an
/// error naming the file — no SIGBUS on a truncated map, no new empty database beside the
/// domain's key, nothing written to what is being checked.
#[test]
fn a_damaged_or_missing_domain_database_is_an_error_not_a_new_directory() {
    let dir = tempfile::tempdir().unwrap();
    let data = provision(dir.path(), "damaged");
    let file = data.join("db").join("data.mdb");
    let whole = std::fs::read(&file).unwrap();
    let data_arg = data.to_str().unwrap();
    for (what, bytes) in [
        ("truncated to half", Some(whole[..whole.len() / 2].to_vec())),
        ("cut to 8 KiB", Some(whole[..8192].to_vec())),
        ("emptied", Some(Vec::new())),
        ("removed", None),
    ] {
        match &bytes {
            Some(b) => std::fs::write(&file, b).unwrap(),
            None => std::fs::remove_file(&file).unwrap(),
        }
        for args in [
            vec!["dbcheck", "--data", data_arg],
            vec![
                "serve",
                "--data",
                data_arg,
                "--listen",
                "127.0.0.1:0",
                "--listen-tls",
                "",
            ],
        ] {
            let out = kauri(&args);
            let err = String::from_utf8_lossy(&out.stderr);
            assert_eq!(out.status.code(), Some(1), "{what}, {args:?}: {err}");
            assert!(err.contains("data.mdb"), "{what}, {args:?}: {err}");
        }
        // What was there is left as it was: no new database, nothing rewritten.
        match &bytes {
            Some(b) => assert_eq!(&std::fs::read(&file).unwrap(), b, "{what}"),
            None => assert!(!file.exists(), "{what}: a new database was created"),
        }
    }
    std::fs::write(&file, &whole).unwrap();
    ok(&["dbcheck", "--data", data_arg]);
}

/// SIGTERM, as a service manager stops a service: the server stops accepting, lets the
/// writer commit what it holds, and exits 0; the folder checks clean afterwards.
#[test]
fn sigterm_stops_the_server_cleanly() {
    use std::io::BufRead;
    let dir = tempfile::tempdir().unwrap();
    let data = provision(dir.path(), "stopping");
    /// Kills the server if the test ends before it stopped by itself.
    struct Guard(std::process::Child);
    impl Drop for Guard {
        fn drop(&mut self) {
            let _ = self.0.kill();
            let _ = self.0.wait();
        }
    }
    let mut child = Guard(
        std::process::Command::new(env!("CARGO_BIN_EXE_kauri"))
            .args(["serve", "--data"])
            .arg(&data)
            .args(["--listen", "127.0.0.1:0", "--listen-tls", ""])
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap(),
    );
    let stderr = child.0.stderr.take().unwrap();
    let mut lines = std::io::BufReader::new(stderr)
        .lines()
        .map_while(Result::ok);
    let addr = lines
        .find_map(|l| l.strip_prefix("kauri: serving ldap://").map(str::to_string))
        .expect("the server's address");
    ok(&[
        "user",
        "add",
        "stopper",
        "--password",
        "St0p.Passw0rd!",
        "-H",
        &format!("ldap://{addr}"),
        "-U",
        "SAMDOM\\Administrator",
        "--bind-password",
        PASSWORD,
        "--cacert",
        data.join("tls").join("ca.pem").to_str().unwrap(),
    ]);
    let killed = std::process::Command::new("kill")
        .args(["-TERM", &child.0.id().to_string()])
        .status()
        .unwrap();
    assert!(killed.success());
    let started = std::time::Instant::now();
    let status = loop {
        if let Some(s) = child.0.try_wait().unwrap() {
            break s;
        }
        assert!(
            started.elapsed().as_secs() < 20,
            "still running after SIGTERM"
        );
        std::thread::sleep(std::time::Duration::from_millis(50));
    };
    assert_eq!(status.code(), Some(0), "{status:?}");
    assert!(lines.any(|l| l.contains("stopping")));
    let data_arg = data.to_str().unwrap();
    ok(&["dbcheck", "--data", data_arg]);
    assert!(ok(&["user", "list", "-H", data_arg]).contains("stopper"));
}
