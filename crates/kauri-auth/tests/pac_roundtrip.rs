//! Encode/decode round trips of every buffer type and of the container.

mod pac_common;
use kauri_auth::krb::pac::*;
use pac_common::*;
use std::time::Instant;

#[test]
fn logon_info_zero_groups() {
    let li = sample_logon_info(0, vec![]);
    let enc = li.encode().unwrap();
    // Type serialization header: version 1, little-endian, length 8, filler.
    assert_eq!(&enc[..8], &[0x01, 0x10, 0x08, 0x00, 0xcc, 0xcc, 0xcc, 0xcc]);
    let object_len = u32::from_le_bytes(enc[8..12].try_into().unwrap()) as usize;
    assert_eq!(object_len, enc.len() - 16);
    assert_eq!(object_len % 8, 0);
    assert_eq!(&enc[12..16], &[0, 0, 0, 0]);
    // Top-level referent id.
    assert_eq!(&enc[16..20], &[0x00, 0x00, 0x02, 0x00]);
    let dec = KerbValidationInfo::decode(&enc).unwrap();
    assert_eq!(dec, li);
    assert!(dec.group_ids.is_empty());
}

#[test]
fn logon_info_many_groups_extra_sids_and_resource_groups() {
    let extra: Vec<SidAndAttributes> = (0..50)
        .map(|i| SidAndAttributes {
            sid: sid_from_string(&format!("S-1-5-21-1-2-3-{}", 5000 + i)).unwrap(),
            attributes: SE_GROUP_DEFAULT | 0x2000_0000,
        })
        .chain(std::iter::once(SidAndAttributes {
            sid: sid_from_string("S-1-18-1").unwrap(),
            attributes: SE_GROUP_DEFAULT,
        }))
        .collect();
    let mut li = sample_logon_info(1000, extra);
    li.resource_group_domain_sid = Some(sid_from_string("S-1-5-21-9-9-9").unwrap());
    li.resource_group_ids = vec![
        GroupMembership {
            relative_id: 1234,
            attributes: SE_GROUP_DEFAULT,
        },
        GroupMembership {
            relative_id: 5678,
            attributes: SE_GROUP_DEFAULT,
        },
    ];
    li.user_flags |= LOGON_RESOURCE_GROUPS;
    let dec = KerbValidationInfo::decode(&li.encode().unwrap()).unwrap();
    assert_eq!(dec, li);
    assert_eq!(dec.group_ids.len(), 1000);
    assert_eq!(dec.extra_sids.len(), 51);
}

#[test]
fn logon_info_sets_flags_for_extra_sids_and_resource_groups() {
    let mut li = sample_logon_info(3, vec![]);
    li.user_flags = 0;
    li.extra_sids.push(SidAndAttributes {
        sid: sid_from_string("S-1-5-21-1-2-3-4").unwrap(),
        attributes: 7,
    });
    li.resource_group_domain_sid = Some(sid_from_string("S-1-5-21-1-2-3").unwrap());
    li.resource_group_ids.push(GroupMembership {
        relative_id: 4,
        attributes: 7,
    });
    let dec = KerbValidationInfo::decode(&li.encode().unwrap()).unwrap();
    assert_eq!(dec.user_flags, LOGON_EXTRA_SIDS | LOGON_RESOURCE_GROUPS);

    // Resource groups without a domain SID are refused.
    li.resource_group_domain_sid = None;
    assert!(matches!(li.encode(), Err(PacError::InvalidArgument(_))));
}

#[test]
fn logon_info_empty_and_non_ascii_strings() {
    let mut li = KerbValidationInfo {
        logon_domain_id: Some(domain_sid()),
        ..KerbValidationInfo::default()
    };
    let dec = KerbValidationInfo::decode(&li.encode().unwrap()).unwrap();
    assert_eq!(dec, li);
    assert_eq!(dec.effective_name, "");

    li.effective_name = "Ærøskøbing-ユーザー".into();
    li.full_name = "Zoë 🦀 Ünïcødé".into(); // includes a surrogate pair
    li.logon_script = "x".into(); // odd lengths exercise alignment
    li.home_directory_drive = "Ж:".into();
    li.logon_domain_name = "ДОМЕН".into();
    let dec = KerbValidationInfo::decode(&li.encode().unwrap()).unwrap();
    assert_eq!(dec, li);

    li.full_name = "x".repeat(32768);
    assert!(matches!(li.encode(), Err(PacError::TooLarge(_))));
    li.full_name = "x".repeat(32767);
    assert_eq!(
        KerbValidationInfo::decode(&li.encode().unwrap()).unwrap(),
        li
    );
}

#[test]
fn logon_info_rejects_bad_sids() {
    let mut li = sample_logon_info(1, vec![]);
    li.logon_domain_id = Some(vec![1, 2, 0, 0, 0, 0, 0, 5]);
    assert!(matches!(li.encode(), Err(PacError::InvalidSid(_))));
}

#[test]
fn logon_info_100k_groups_encodes_fast() {
    let li = sample_logon_info(100_000, vec![]);
    let t = Instant::now();
    let enc = li.encode().unwrap();
    let enc_time = t.elapsed();
    let t = Instant::now();
    let dec = KerbValidationInfo::decode(&enc).unwrap();
    let dec_time = t.elapsed();
    println!(
        "100,000 groups: {} bytes, encode {:?}, decode {:?}",
        enc.len(),
        enc_time,
        dec_time
    );
    assert_eq!(dec.group_ids.len(), 100_000);
    assert_eq!(dec, li);

    let mut contents = sample_contents(100_000);
    contents.logon_info = li;
    let t = Instant::now();
    let mut pac = Pac::from_contents(&contents).unwrap();
    pac.sign(&server_signer(), &kdc_signer(), Some(&fake_ticket_input()))
        .unwrap();
    let bytes = pac.encode();
    println!(
        "100,000-group PAC built, signed and encoded in {:?} ({} bytes)",
        t.elapsed(),
        bytes.len()
    );
    let parsed = Pac::parse(&bytes).unwrap();
    parsed
        .verify(
            Some(&server_signer()),
            Some(&kdc_signer()),
            Some(&fake_ticket_input()),
        )
        .unwrap();
}

#[test]
fn client_info_round_trip() {
    for name in ["alice", "", "Ålice@EXAMPLE.COM", "ユーザー🦀"] {
        let ci = ClientInfo {
            client_id: filetime_from_unix(1_700_000_001),
            name: name.into(),
        };
        let enc = ci.encode().unwrap();
        assert_eq!(enc.len(), 10 + name.encode_utf16().count() * 2);
        assert_eq!(ClientInfo::decode(&enc).unwrap(), ci);
    }
    assert!(ClientInfo::decode(&[0; 9]).is_err());
    // NameLength larger than the buffer.
    let mut bad = vec![0u8; 12];
    bad[8] = 4;
    assert!(ClientInfo::decode(&bad).is_err());
}

#[test]
fn upn_dns_info_round_trips() {
    let plain = UpnDnsInfo {
        upn: "alice@example.com".into(),
        dns_domain_name: "EXAMPLE.COM".into(),
        flags: UPN_DNS_FLAG_CONSTRUCTED,
        extension: None,
    };
    let enc = plain.encode().unwrap();
    assert_eq!(u16::from_le_bytes([enc[2], enc[3]]), 16); // header padded to 8
    assert_eq!(UpnDnsInfo::decode(&enc).unwrap(), plain);

    let ext = UpnDnsInfo {
        upn: "zoë@example.com".into(),
        dns_domain_name: "EXAMPLE.COM".into(),
        flags: 0,
        extension: Some(UpnDnsExtension {
            sam_name: "zoë".into(),
            sid: sid_with_rid(&domain_sid(), 1105).unwrap(),
        }),
    };
    let enc = ext.encode().unwrap();
    let dec = UpnDnsInfo::decode(&enc).unwrap();
    assert_eq!(dec.flags, UPN_DNS_FLAG_EXTENDED);
    assert_eq!(dec.extension, ext.extension);
    assert_eq!(dec.upn, ext.upn);
    // Every field starts on an 8-byte boundary.
    for at in [2usize, 6, 14, 18] {
        assert_eq!(u16::from_le_bytes([enc[at], enc[at + 1]]) % 8, 0);
    }
    // Out-of-range offset.
    let mut bad = enc.clone();
    bad[2] = 0xf0;
    assert!(UpnDnsInfo::decode(&bad).is_err());
}

#[test]
fn attributes_and_requestor_round_trip() {
    for flags in [0, PAC_WAS_REQUESTED, PAC_WAS_GIVEN_IMPLICITLY] {
        let a = PacAttributes { flags };
        let enc = a.encode().unwrap();
        assert_eq!(
            enc,
            [&2u32.to_le_bytes()[..], &flags.to_le_bytes()[..]].concat()
        );
        assert_eq!(PacAttributes::decode(&enc).unwrap(), a);
    }
    // A flag beyond the two defined ones widens FlagsLength, so it survives a decode.
    let wide = PacAttributes { flags: 0x3c5c };
    assert_eq!(
        PacAttributes::decode(&wide.encode().unwrap()).unwrap(),
        wide
    );
    assert!(PacAttributes::decode(&[2, 0, 0, 0]).is_err());
    assert!(PacAttributes::decode(&[0xff, 0xff, 0xff, 0xff, 0, 0, 0, 0]).is_err());

    let r = PacRequestor {
        sid: sid_with_rid(&domain_sid(), 1104).unwrap(),
    };
    let enc = r.encode().unwrap();
    assert_eq!(enc.len(), 28);
    assert_eq!(PacRequestor::decode(&enc).unwrap(), r);
    assert!(PacRequestor::decode(&enc[..27]).is_err());
}

#[test]
fn signature_data_round_trip() {
    for (t, len) in [
        (KERB_CHECKSUM_HMAC_MD5, 16),
        (HMAC_SHA1_96_AES256, 12),
        (HMAC_SHA1_96_AES128, 12),
    ] {
        let s = PacSignatureData {
            signature_type: t,
            signature: (0..len as u8).collect(),
            rodc_identifier: None,
        };
        let enc = s.encode().unwrap();
        assert_eq!(enc.len(), 4 + len);
        assert_eq!(&enc[..4], &t.to_le_bytes());
        assert_eq!(PacSignatureData::decode(&enc).unwrap(), s);
        let rodc = PacSignatureData {
            rodc_identifier: Some(0x1234),
            ..s.clone()
        };
        assert_eq!(
            PacSignatureData::decode(&rodc.encode().unwrap()).unwrap(),
            rodc
        );
        assert!(PacSignatureData::decode(&enc[..enc.len() - 1]).is_err());
        assert_eq!(
            PacSignatureData::placeholder(t).unwrap().signature,
            vec![0; len]
        );
    }
    assert!(PacSignatureData::placeholder(7).is_err());
}

#[test]
fn sid_string_helpers() {
    for s in [
        "S-1-5-21-3623811015-3361044348-30300820-1013",
        "S-1-18-1",
        "S-1-0",
        "S-1-0x123456789ABC-1",
    ] {
        let b = sid_from_string(s).unwrap();
        validate_sid(&b).unwrap();
        assert_eq!(sid_to_string(&b).unwrap(), s);
    }
    assert_eq!(
        sid_from_string("S-1-5-32-544").unwrap(),
        vec![1, 2, 0, 0, 0, 0, 0, 5, 32, 0, 0, 0, 0x20, 2, 0, 0]
    );
    assert!(sid_from_string("S-1-5-1-2-3-4-5-6-7-8-9-10-11-12-13-14-15-16").is_err());
    assert!(sid_from_string("S-2-5").is_err());
    assert!(sid_from_string("S-1-5-x").is_err());
    assert!(sid_to_string(&[1, 1, 0, 0, 0, 0, 0, 5]).is_err());
}

#[test]
fn container_round_trip_and_alignment() {
    let pac = Pac::new_unsigned(
        &sample_contents(5),
        KERB_CHECKSUM_HMAC_MD5,
        HMAC_SHA1_96_AES256,
        true,
    )
    .unwrap();
    let kinds: Vec<u32> = pac.buffers().iter().map(|b| b.kind).collect();
    assert_eq!(kinds, vec![1, 10, 12, 17, 18, 6, 7, 16, 19]);
    assert_eq!(pac.buffer(PAC_SERVER_CHECKSUM).unwrap().len(), 20);
    assert_eq!(pac.buffer(PAC_PRIVSVR_CHECKSUM).unwrap().len(), 16);
    let enc = pac.encode();
    assert_eq!(enc.len() % 8, 0);
    let parsed = Pac::parse(&enc).unwrap();
    assert_eq!(parsed, pac);
    for i in 0..kinds.len() {
        let off = u64::from_le_bytes(enc[16 + 16 * i..24 + 16 * i].try_into().unwrap());
        assert_eq!(off % 8, 0);
    }
    let c = sample_contents(5);
    assert_eq!(parsed.logon_info().unwrap().unwrap(), c.logon_info);
    assert_eq!(parsed.client_info().unwrap().unwrap(), c.client_info);
    assert_eq!(
        parsed.upn_dns_info().unwrap().unwrap(),
        c.upn_dns_info.unwrap()
    );
    assert_eq!(
        parsed.attributes_info().unwrap().unwrap(),
        c.attributes.unwrap()
    );
    assert_eq!(parsed.requestor().unwrap().unwrap(), c.requestor.unwrap());
    let kdc = parsed.signature(PAC_PRIVSVR_CHECKSUM).unwrap().unwrap();
    assert_eq!(kdc.signature_type, HMAC_SHA1_96_AES256);
    assert_eq!(kdc.signature, vec![0; 12]);
}

#[test]
fn container_buffer_editing() {
    let mut pac = Pac::new();
    pac.set_buffer(PAC_CLIENT_INFO, vec![1, 2, 3]);
    pac.set_buffer(PAC_LOGON_INFO, vec![4]);
    pac.set_buffer(PAC_CLIENT_INFO, vec![5]);
    assert_eq!(pac.buffers().len(), 2);
    assert_eq!(pac.buffer(PAC_CLIENT_INFO), Some(&[5u8][..]));
    assert_eq!(pac.remove_buffer(PAC_LOGON_INFO), Some(vec![4]));
    assert_eq!(pac.buffer(PAC_LOGON_INFO), None);
    let enc = pac.encode();
    assert_eq!(enc.len(), 8 + 16 + 8);
    assert_eq!(Pac::parse(&enc).unwrap(), pac);
}

#[test]
fn client_info_matches_ticket() {
    let ci = ClientInfo {
        client_id: filetime_from_unix(1_700_000_000),
        name: "alice".into(),
    };
    assert!(ci.matches_ticket(1_700_000_000, "alice"));
    assert!(!ci.matches_ticket(1_700_000_001, "alice"));
    assert!(!ci.matches_ticket(1_700_000_000, "Alice"));
    assert_eq!(filetime_to_unix(filetime_from_unix(-5)), -5);
    assert_eq!(filetime_from_unix(i64::MIN), 0);
}
