//! Independent decoder check: PACs produced by this crate are decoded by
//! impacket (tests/impacket_decode.py) and every field is compared with
//! what was encoded. Skips with a note when python3 or impacket is missing.

mod pac_common;
use kauri_auth::krb::pac::*;
use pac_common::*;
use std::collections::BTreeMap;
use std::process::Command;

fn groups_str(g: &[GroupMembership]) -> String {
    g.iter()
        .map(|g| format!("{}:{}", g.relative_id, g.attributes))
        .collect::<Vec<_>>()
        .join(",")
}

/// Runs the script; `None` means "skip".
fn impacket_decode(pac_bytes: &[u8], name: &str) -> Option<BTreeMap<String, String>> {
    let dir = std::env::temp_dir().join(format!("krb-pac-impacket-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join(name);
    std::fs::write(&path, pac_bytes).unwrap();
    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/pac_impacket_decode.py");
    let output = match Command::new("python3").arg(script).arg(&path).output() {
        Ok(o) => o,
        Err(e) => {
            println!("SKIPPED impacket check: cannot run python3: {e}");
            return None;
        }
    };
    let _ = std::fs::remove_file(&path);
    if output.status.code() == Some(3) {
        println!(
            "SKIPPED impacket check: {}",
            String::from_utf8_lossy(&output.stderr).trim()
        );
        return None;
    }
    assert!(
        output.status.success(),
        "impacket failed to decode our PAC:\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let text = String::from_utf8(output.stdout).unwrap();
    let mut map = BTreeMap::new();
    for line in text.lines() {
        let (k, v) = line.split_once('=').unwrap();
        map.insert(k.to_string(), v.to_string());
    }
    Some(map)
}

fn expected_fields(c: &PacContents, pac: &Pac) -> Vec<(String, String)> {
    let li = &c.logon_info;
    let mut e: Vec<(String, String)> = Vec::new();
    let mut put = |k: &str, v: String| e.push((k.to_string(), v));
    put(
        "pac.types",
        pac.buffers()
            .iter()
            .map(|b| b.kind.to_string())
            .collect::<Vec<_>>()
            .join(","),
    );
    put("pac.Version", "0".into());
    for (k, v) in [
        ("LogonTime", li.logon_time),
        ("LogoffTime", li.logoff_time),
        ("KickOffTime", li.kick_off_time),
        ("PasswordLastSet", li.password_last_set),
        ("PasswordCanChange", li.password_can_change),
        ("PasswordMustChange", li.password_must_change),
        ("LastSuccessfulILogon", li.last_successful_i_logon),
        ("LastFailedILogon", li.last_failed_i_logon),
    ] {
        put(&format!("logon.{k}"), v.to_string());
    }
    for (k, v) in [
        ("EffectiveName", &li.effective_name),
        ("FullName", &li.full_name),
        ("LogonScript", &li.logon_script),
        ("ProfilePath", &li.profile_path),
        ("HomeDirectory", &li.home_directory),
        ("HomeDirectoryDrive", &li.home_directory_drive),
        ("LogonServer", &li.logon_server),
        ("LogonDomainName", &li.logon_domain_name),
    ] {
        put(&format!("logon.{k}"), v.clone());
    }
    let mut flags = li.user_flags;
    if !li.extra_sids.is_empty() {
        flags |= LOGON_EXTRA_SIDS;
    }
    if !li.resource_group_ids.is_empty() {
        flags |= LOGON_RESOURCE_GROUPS;
    }
    for (k, v) in [
        ("LogonCount", u32::from(li.logon_count)),
        ("BadPasswordCount", u32::from(li.bad_password_count)),
        ("UserId", li.user_id),
        ("PrimaryGroupId", li.primary_group_id),
        ("GroupCount", li.group_ids.len() as u32),
        ("UserFlags", flags),
        ("UserAccountControl", li.user_account_control),
        ("SubAuthStatus", li.sub_auth_status),
        ("FailedILogonCount", li.failed_i_logon_count),
        ("Reserved3", li.reserved3),
        ("SidCount", li.extra_sids.len() as u32),
        ("ResourceGroupCount", li.resource_group_ids.len() as u32),
    ] {
        put(&format!("logon.{k}"), v.to_string());
    }
    put(
        "logon.UserSessionKey",
        li.user_session_key
            .iter()
            .map(|b| format!("{b:02x}"))
            .collect(),
    );
    put("logon.GroupIds", groups_str(&li.group_ids));
    put(
        "logon.LogonDomainId",
        sid_to_string(li.logon_domain_id.as_ref().unwrap()).unwrap(),
    );
    put(
        "logon.ExtraSids",
        li.extra_sids
            .iter()
            .map(|s| format!("{}:{}", sid_to_string(&s.sid).unwrap(), s.attributes))
            .collect::<Vec<_>>()
            .join(","),
    );
    put(
        "logon.ResourceGroupDomainSid",
        li.resource_group_domain_sid
            .as_ref()
            .map(|s| sid_to_string(s).unwrap())
            .unwrap_or_default(),
    );
    put("logon.ResourceGroupIds", groups_str(&li.resource_group_ids));
    put("client.ClientId", c.client_info.client_id.to_string());
    put("client.Name", c.client_info.name.clone());
    if let Some(u) = &c.upn_dns_info {
        put("upn.Upn", u.upn.clone());
        put("upn.DnsDomainName", u.dns_domain_name.clone());
        let mut f = u.flags & !UPN_DNS_FLAG_EXTENDED;
        if let Some(x) = &u.extension {
            f |= UPN_DNS_FLAG_EXTENDED;
            put("upn.SamName", x.sam_name.clone());
            put("upn.Sid", sid_to_string(&x.sid).unwrap());
        }
        put("upn.Flags", f.to_string());
    }
    if let Some(a) = &c.attributes {
        put("attributes.FlagsLength", "2".into());
        put("attributes.Flags", a.flags.to_string());
    }
    if let Some(r) = &c.requestor {
        put("requestor.Sid", sid_to_string(&r.sid).unwrap());
    }
    for kind in SIGNATURE_BUFFER_TYPES {
        if let Some(s) = pac.signature(kind).unwrap() {
            put(
                &format!("sig{kind}.SignatureType"),
                s.signature_type.to_string(),
            );
            put(
                &format!("sig{kind}.Signature"),
                s.signature.iter().map(|b| format!("{b:02x}")).collect(),
            );
        }
    }
    e
}

fn check(c: &PacContents, service: bool, name: &str) {
    let mut pac = Pac::from_contents(c).unwrap();
    let ticket = fake_ticket_input();
    pac.sign(
        &server_signer(),
        &kdc_signer(),
        service.then_some(&ticket[..]),
    )
    .unwrap();
    let bytes = pac.encode();
    let Some(got) = impacket_decode(&bytes, name) else {
        return;
    };
    let expected = expected_fields(c, &pac);
    for (k, v) in &expected {
        assert_eq!(
            got.get(k),
            Some(v),
            "field {k} differs (impacket vs. encoded)"
        );
    }
    println!("{name}: impacket agrees on {} fields", expected.len());
}

#[test]
fn impacket_decodes_our_tgt_pac() {
    check(&sample_contents(3), false, "tgt.pac");
}

#[test]
fn impacket_decodes_zero_group_non_ascii_pac() {
    let mut c = sample_contents(0);
    c.attributes = None;
    c.requestor = None;
    let li = &mut c.logon_info;
    li.extra_sids.clear();
    li.user_flags = 0;
    li.effective_name = "zoë".into();
    li.full_name = "Zoë Ærøskøbing ユーザー 🦀".into();
    li.logon_script = String::new();
    li.profile_path = String::new();
    li.home_directory = String::new();
    li.home_directory_drive = String::new();
    li.logon_domain_name = "ДОМЕН".into();
    c.client_info.name = "zoë".into();
    c.upn_dns_info = Some(UpnDnsInfo {
        upn: "zoë@example.com".into(),
        dns_domain_name: "EXAMPLE.COM".into(),
        flags: UPN_DNS_FLAG_CONSTRUCTED,
        extension: None,
    });
    check(&c, true, "nonascii.pac");
}

#[test]
fn impacket_decodes_many_groups_extra_sids_and_resource_groups() {
    let mut c = sample_contents(1500);
    let li = &mut c.logon_info;
    li.extra_sids = (0..40)
        .map(|i| SidAndAttributes {
            sid: sid_from_string(&format!("S-1-5-21-11-22-33-{}", 2000 + i)).unwrap(),
            attributes: SE_GROUP_DEFAULT,
        })
        .collect();
    li.resource_group_domain_sid = Some(sid_from_string("S-1-5-21-7-8-9").unwrap());
    li.resource_group_ids = (0..25)
        .map(|i| GroupMembership {
            relative_id: 3000 + i,
            attributes: SE_GROUP_DEFAULT,
        })
        .collect();
    li.logon_count = 65535;
    li.user_session_key = [0; 16];
    li.last_successful_i_logon = filetime_from_unix(1_600_000_000);
    li.failed_i_logon_count = 3;
    check(&c, true, "many.pac");
}
