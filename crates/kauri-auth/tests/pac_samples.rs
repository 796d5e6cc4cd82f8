//! Real PACs: a Samba-generated PAC with its RC4 keys (from the Samba torture
//! suite, as shipped in MIT krb5's t_pac.c) and four PACs issued by a Windows
//! Server 2008 KDC for S4U2Self (also from t_pac.c).

mod pac_common;
use kauri_auth::krb::pac::*;
use pac_common::*;

const SAMBA_KDC_KEY: [u8; 16] = [
    0xB2, 0x86, 0x75, 0x71, 0x48, 0xAF, 0x7F, 0xD2, 0x52, 0xC5, 0x36, 0x03, 0xA1, 0x50, 0xB7, 0xE7,
];
const SAMBA_MEMBER_KEY: [u8; 16] = [
    0xD2, 0x17, 0xFA, 0xEA, 0xE5, 0xE6, 0xB5, 0xF9, 0x5C, 0xCC, 0x94, 0x07, 0x7A, 0xB8, 0xA5, 0xFC,
];
const SAMBA_AUTHTIME: i64 = 1_120_440_609;

fn kinds(pac: &Pac) -> Vec<u32> {
    pac.buffers().iter().map(|b| b.kind).collect()
}

#[test]
fn samba_pac_parses_and_decodes() {
    let raw = data("samba_saved_pac.bin");
    let pac = Pac::parse(&raw).unwrap();
    assert_eq!(kinds(&pac), vec![1, 10, 6, 7]);
    assert_eq!(pac.buffer(PAC_LOGON_INFO).unwrap().len(), 472);

    let ci = pac.client_info().unwrap().unwrap();
    assert_eq!(ci.name, "w2003final$");
    assert_eq!(ci.client_id, filetime_from_unix(SAMBA_AUTHTIME));
    assert_eq!(filetime_to_unix(ci.client_id), SAMBA_AUTHTIME);

    let li = pac.logon_info().unwrap().unwrap();
    println!("{li:#?}");
    assert_eq!(li.effective_name, "W2003FINAL$");
    assert_eq!(li.full_name, "");
    assert_eq!(li.user_id, 1005);
    assert_eq!(li.primary_group_id, 516);
    assert_eq!(
        li.group_ids,
        vec![GroupMembership {
            relative_id: 516,
            attributes: 7
        }]
    );
    assert_eq!(li.logon_server, "W2003FINAL");
    assert_eq!(li.logon_domain_name, "WIN2K3THINK");
    assert_eq!(
        sid_to_string(li.logon_domain_id.as_ref().unwrap()).unwrap(),
        "S-1-5-21-3048156945-3961193616-3706469200"
    );
    assert_eq!(li.extra_sids.len(), 1);
    assert_eq!(sid_to_string(&li.extra_sids[0].sid).unwrap(), "S-1-5-9");
    assert_eq!(li.extra_sids[0].attributes, 7);
    assert_eq!(li.user_flags & LOGON_EXTRA_SIDS, LOGON_EXTRA_SIDS);
    assert_eq!(li.logoff_time, FILETIME_NEVER);
    assert_eq!(li.kick_off_time, FILETIME_NEVER);
    assert_eq!(li.password_must_change, FILETIME_NEVER);
    assert!(li.resource_group_domain_sid.is_none());
    assert!(li.resource_group_ids.is_empty());

    // Our encoder reproduces the decoded structure.
    let re = li.encode().unwrap();
    assert_eq!(KerbValidationInfo::decode(&re).unwrap(), li);

    // The container layout is the canonical one: re-encoding is byte-exact.
    assert_eq!(pac.encode(), raw);
    assert_eq!(pac.received_bytes(), Some(&raw[..]));

    let server = pac.signature(PAC_SERVER_CHECKSUM).unwrap().unwrap();
    assert_eq!(server.signature_type, KERB_CHECKSUM_HMAC_MD5);
    assert_eq!(server.signature.len(), 16);
    assert_eq!(
        server.encode().unwrap(),
        pac.buffer(PAC_SERVER_CHECKSUM).unwrap()
    );
}

#[test]
fn samba_pac_signatures_verify_with_real_keys() {
    let raw = data("samba_saved_pac.bin");
    let pac = Pac::parse(&raw).unwrap();
    let member = HmacMd5Signer::new(SAMBA_MEMBER_KEY);
    let kdc = HmacMd5Signer::new(SAMBA_KDC_KEY);
    pac.verify(Some(&member), Some(&kdc), None).unwrap();
    pac.verify(Some(&member), None, None).unwrap();
    pac.verify(None, Some(&kdc), None).unwrap();

    // Wrong keys fail.
    let err = pac.verify(Some(&kdc), None, None).unwrap_err();
    assert!(
        matches!(err, PacError::BadSignature { buffer: 6, .. }),
        "{err}"
    );
    let err = pac.verify(None, Some(&member), None).unwrap_err();
    assert!(
        matches!(err, PacError::BadSignature { buffer: 7, .. }),
        "{err}"
    );
}

#[test]
fn samba_pac_any_flipped_byte_fails_verification() {
    let raw = data("samba_saved_pac.bin");
    let member = HmacMd5Signer::new(SAMBA_MEMBER_KEY);
    let kdc = HmacMd5Signer::new(SAMBA_KDC_KEY);
    for i in 0..raw.len() {
        let mut bad = raw.clone();
        bad[i] ^= 0x01;
        let ok = match Pac::parse(&bad) {
            Ok(pac) => pac.verify(Some(&member), Some(&kdc), None).is_ok(),
            Err(_) => false,
        };
        assert!(!ok, "flipping byte {i} went unnoticed");
    }
}

#[test]
fn samba_pac_resigned_by_us_matches_original_signatures() {
    // Re-signing the same content with the same keys must reproduce the
    // Samba signatures byte for byte: proves our signing input is right.
    let raw = data("samba_saved_pac.bin");
    let mut pac = Pac::parse(&raw).unwrap();
    let member = HmacMd5Signer::new(SAMBA_MEMBER_KEY);
    let kdc = HmacMd5Signer::new(SAMBA_KDC_KEY);
    pac.sign(&member, &kdc, None).unwrap();
    assert_eq!(pac.encode(), raw);
}

#[test]
fn windows_2008_s4u_pacs_parse() {
    let cases = [
        ("win2008_s4u_pac_regular.bin", "w2k8u"),
        ("win2008_s4u_pac_enterprise.bin", "w2k8u@abc"),
        ("win2008_s4u_pac_xrealm.bin", "w2k8u@ACME.COM"),
        ("win2008_s4u_pac_ent_xrealm.bin", "w2k8u@abc@ACME.COM"),
    ];
    for (file, client) in cases {
        let raw = data(file);
        let pac = Pac::parse(&raw).unwrap();
        assert_eq!(kinds(&pac), vec![1, 10, 12, 6, 7], "{file}");
        let ci = pac.client_info().unwrap().unwrap();
        assert_eq!(ci.name, client, "{file}");
        let upn = pac.upn_dns_info().unwrap().unwrap();
        assert_eq!(upn.upn, "w2k8u@abc");
        assert_eq!(upn.dns_domain_name, "ACME.COM");
        assert_eq!(upn.flags, 0);
        assert!(upn.extension.is_none());
        // Windows' UPN_DNS_INFO layout is what our encoder produces.
        assert_eq!(upn.encode().unwrap(), pac.buffer(PAC_UPN_DNS_INFO).unwrap());

        let li = pac.logon_info().unwrap().unwrap();
        assert_eq!(li.effective_name, "w2k8u", "{file}");
        assert!(li.logon_domain_id.is_some());
        let re = li.encode().unwrap();
        assert_eq!(KerbValidationInfo::decode(&re).unwrap(), li);

        let server = pac.signature(PAC_SERVER_CHECKSUM).unwrap().unwrap();
        assert_eq!(server.signature_type, HMAC_SHA1_96_AES256);
        assert_eq!(server.signature.len(), 12);
        let kdc = pac.signature(PAC_PRIVSVR_CHECKSUM).unwrap().unwrap();
        assert_eq!(kdc.signature_type, KERB_CHECKSUM_HMAC_MD5);
        assert_eq!(kdc.signature.len(), 16);
        assert_eq!(pac.encode(), raw, "{file}");
        println!("{file}: {li:?}");
    }
}

#[test]
fn fuzz_regressions_from_mit_are_rejected() {
    for f in ["fuzz1.bin", "fuzz2.bin"] {
        assert!(Pac::parse(&data(f)).is_err(), "{f}");
    }
}

/// The first 0x118 bytes of the annotated PAC in MS-PAC section 3
/// ("Structure Examples"), starting with the AD-IF-RELEVANT wrapper. Only
/// this prefix is used: enough for the PACTYPE header and the fixed part of
/// KERB_VALIDATION_INFO up to UserSessionKey.
const MS_PAC_EXAMPLE_PREFIX: &str = "\
30 82 05 52 30 82 05 4e a0 04 02 02 00 80 a1 82 05 44 04 82 05 40 04 00 00 00 00 00 00 00 01 00
00 00 b0 04 00 00 48 00 00 00 00 00 00 00 0a 00 00 00 12 00 00 00 f8 04 00 00 00 00 00 00 06 00
00 00 14 00 00 00 10 05 00 00 00 00 00 00 07 00 00 00 14 00 00 00 28 05 00 00 00 00 00 00 01 10
08 00 cc cc cc cc a0 04 00 00 00 00 00 00 00 00 02 00 d1 86 66 0f 65 6a c6 01 ff ff ff ff ff ff
ff 7f ff ff ff ff ff ff ff 7f 17 d4 39 fe 78 4a c6 01 17 94 a3 28 42 4b c6 01 17 54 24 97 7a 81
c6 01 08 00 08 00 04 00 02 00 24 00 24 00 08 00 02 00 12 00 12 00 0c 00 02 00 00 00 00 00 10 00
02 00 00 00 00 00 14 00 02 00 00 00 00 00 18 00 02 00 54 10 00 00 97 79 2c 00 01 02 00 00 1a 00
00 00 1c 00 02 00 20 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 16 00 18 00 20 00
02 00 0a 00 0c 00 24 00 02 00 28 00 02 00 00 00 00 00 00 00 00 00 10 00 00 00 00 00 00 00 00";

fn hex(s: &str) -> Vec<u8> {
    s.split_whitespace()
        .map(|b| u8::from_str_radix(b, 16).unwrap())
        .collect()
}

#[test]
fn ms_pac_example_prefix() {
    let dump = hex(MS_PAC_EXAMPLE_PREFIX);
    // AD-IF-RELEVANT { ad-type 128, ad-data OCTET STRING (0x540 bytes) }.
    assert_eq!(
        &dump[0x0e..0x16],
        &[0xa1, 0x82, 0x05, 0x44, 0x04, 0x82, 0x05, 0x40]
    );
    let pac = &dump[0x16..];
    // A prefix is refused, not panicked on.
    assert!(matches!(Pac::parse(pac), Err(PacError::Malformed(_))));

    // Rebuild the example's fields and compare our NDR encoding of the
    // fixed part (through UserSessionKey) with Microsoft's bytes.
    let ms_logon = &pac[0x48..];
    let li = KerbValidationInfo {
        logon_time: 0x01c6_6a65_0f66_86d1,
        logoff_time: FILETIME_NEVER,
        kick_off_time: FILETIME_NEVER,
        password_last_set: 0x01c6_4a78_fe39_d417,
        password_can_change: 0x01c6_4b42_28a3_9417,
        password_must_change: 0x01c6_817a_9724_5417,
        effective_name: "abcd".into(), // 8 bytes
        full_name: "x".repeat(18),     // 0x24 bytes
        logon_script: "y".repeat(9),   // 0x12 bytes
        logon_count: 0x1054,
        bad_password_count: 0,
        user_id: 0x002c_7997,
        primary_group_id: 0x201,
        group_ids: vec![
            GroupMembership {
                relative_id: 513,
                attributes: 7
            };
            26
        ],
        user_flags: 0x20,
        logon_domain_id: Some(sid_from_string("S-1-5-21-1-2-3").unwrap()),
        ..KerbValidationInfo::default()
    };
    let ours = li.encode().unwrap();
    assert_eq!(&ours[..8], &ms_logon[..8], "common header");
    assert_eq!(
        &ours[12..156],
        &ms_logon[12..156],
        "fixed part through UserSessionKey"
    );
}
