//! Round-trip, robustness and property tests for every message type.

use super::constants::{ad_type, error_code, name_type, padata};
use super::der::{ctx_tag, enc_int, tlv};
use super::gss::{gss_flags, OID_MS_KRB5, TOK_ID_AP_REQ, TOK_ID_KRB_ERROR};
use super::kpasswd::{password_properties, result_code, KPASSWD_VERSION_SET};
use super::*;
use proptest::prelude::*;

/// Runs every decoder over `bytes`; used to check that nothing panics.
pub(super) fn decode_everything(bytes: &[u8]) {
    let _ = KerberosTime::decode(bytes);
    let _ = KerberosFlags::decode(bytes);
    let _ = PrincipalName::decode(bytes);
    let _ = HostAddress::decode(bytes);
    let _ = EncryptedData::decode(bytes);
    let _ = EncryptionKey::decode(bytes);
    let _ = Checksum::decode(bytes);
    let _ = PaData::decode(bytes);
    let _ = AuthorizationData::decode(bytes);
    let _ = LastReq::decode(bytes);
    let _ = TransitedEncoding::decode(bytes);
    let _ = Ticket::decode(bytes);
    let _ = EncTicketPart::decode(bytes);
    let _ = KdcReqBody::decode(bytes);
    let _ = KdcReq::decode(bytes);
    let _ = KdcRep::decode(bytes);
    let _ = EncKdcRepPart::decode(bytes);
    let _ = ApReq::decode(bytes);
    let _ = Authenticator::decode(bytes);
    let _ = ApRep::decode(bytes);
    let _ = EncApRepPart::decode(bytes);
    let _ = KrbError::decode(bytes);
    let _ = KerbErrorData::decode(bytes);
    let _ = KerbExtError::decode(bytes);
    let _ = KrbPriv::decode(bytes);
    let _ = EncKrbPrivPart::decode(bytes);
    let _ = PaEncTsEnc::decode(bytes);
    let _ = EtypeInfo2::decode(bytes);
    let _ = EtypeInfo::decode(bytes);
    let _ = MethodData::decode(bytes);
    let _ = KerbPaPacRequest::decode(bytes);
    let _ = PaPacOptions::decode(bytes);
    let _ = PaForUser::decode(bytes);
    let _ = KerbAdRestrictionList::decode(bytes);
    let _ = PaSupportedEnctypes::decode(bytes);
    let _ = ChangePasswdData::decode(bytes);
    let _ = KpasswdRequest::decode(bytes);
    let _ = KpasswdReply::decode(bytes);
    let _ = KpasswdResult::decode(bytes);
    let _ = AdPolicyInfo::decode(bytes);
    let _ = GssKrb5Token::decode(bytes);
    let _ = GssChecksum::decode(bytes);
    let _ = application_tag(bytes);
}

fn sample_ticket() -> Ticket {
    Ticket::new(
        "EXAMPLE.COM",
        PrincipalName::new(name_type::NT_SRV_INST, &["krbtgt", "EXAMPLE.COM"]),
        EncryptedData {
            etype: 18,
            kvno: Some(3),
            cipher: vec![0xaa; 40],
        },
    )
}

fn sample_body() -> KdcReqBody {
    KdcReqBody {
        kdc_options: KerberosFlags(kdc_options::FORWARDABLE | kdc_options::CANONICALIZE),
        cname: Some(PrincipalName::new(name_type::NT_ENTERPRISE, &["a@b.c"])),
        realm: "EXAMPLE.COM".into(),
        sname: Some(PrincipalName::new(2, &["krbtgt", "EXAMPLE.COM"])),
        from: Some(KerberosTime(1_700_000_000)),
        till: KerberosTime::WINDOWS_NEVER,
        rtime: Some(KerberosTime::WINDOWS_NEVER),
        nonce: 0x8000_0001,
        etype: vec![18, 17, 23, 24, -135],
        addresses: Some(vec![HostAddress {
            addr_type: 20,
            address: b"WS01            ".to_vec(),
        }]),
        enc_authorization_data: Some(EncryptedData {
            etype: 23,
            kvno: None,
            cipher: vec![1, 2, 3],
        }),
        additional_tickets: Some(vec![sample_ticket()]),
        raw: None,
    }
}

/// Clears the raw bytes a decoder keeps, so decoded values compare equal to
/// the values they were encoded from.
fn strip_body(mut b: KdcReqBody) -> KdcReqBody {
    b.raw = None;
    if let Some(t) = b.additional_tickets.as_mut() {
        for t in t.iter_mut() {
            t.raw = None;
        }
    }
    b
}

#[test]
fn kdc_req_round_trip_and_raw_body() {
    for kind in [KdcKind::As, KdcKind::Tgs] {
        let req = KdcReq {
            kind,
            padata: Some(vec![
                PaData::new(
                    padata::PA_PAC_REQUEST,
                    KerbPaPacRequest { include_pac: true }.encode(),
                ),
                PaData::new(padata::PA_PAC_OPTIONS, vec![]),
            ]),
            req_body: sample_body(),
        };
        let e = req.encode();
        assert_eq!(e[0], 0x60 | kind.req_msg_type());
        let d = KdcReq::decode(&e).unwrap();
        assert_eq!(d.req_body.raw, Some(sample_body().encode()));
        assert_eq!(
            d.req_body.additional_tickets.as_ref().unwrap()[0].raw,
            Some(sample_ticket().encode())
        );
        assert_eq!(d.encode(), e);
        let mut d2 = d.clone();
        d2.req_body = strip_body(d2.req_body);
        assert_eq!(d2, req);
        assert_eq!(KdcReq::decode_kind(&e, kind).unwrap().kind, kind);
    }
    // Raw bytes win on encode, so a body with non-minimal DER survives.
    let mut body = sample_body();
    let mut weird = body.encode();
    // Change nonce encoding? Simply prove raw is used verbatim.
    weird.push(0);
    body.raw = Some(weird.clone());
    assert_eq!(body.encode(), weird);
    assert_eq!(body.checksum_bytes(), weird);
    assert_ne!(body.encode_fields(), weird);
}

#[test]
fn nonce_accepts_negative_int32_as_sent_by_some_peers() {
    let mut body = sample_body();
    body.nonce = 7;
    let e = body.encode();
    // Replace the nonce INTEGER 7 with -2 (0xfe) and check it maps to 0xfffffffe.
    let needle = [ctx_tag(7), 3, 2, 1, 7];
    let pos = e.windows(5).position(|w| w == needle).unwrap();
    let mut m = e.clone();
    m[pos + 4] = 0xfe;
    let d = KdcReqBody::decode(&m).unwrap();
    assert_eq!(d.nonce, 0xffff_fffe);
    // Too big even for UInt32.
    let big = enc_int(1 << 33);
    let mut m = e[..pos].to_vec();
    m.extend_from_slice(&tlv(ctx_tag(7), &big));
    m.extend_from_slice(&e[pos + 5..]);
    // Fix the outer SEQUENCE length by re-wrapping the content.
    let content_start = if m[1] & 0x80 != 0 {
        2 + usize::from(m[1] & 0x7f)
    } else {
        2
    };
    let fixed = tlv(0x30, &m[content_start..]);
    assert!(KdcReqBody::decode(&fixed).is_err());
}

#[test]
fn kdc_rep_and_enc_part_round_trip() {
    for kind in [KdcKind::As, KdcKind::Tgs] {
        let rep = KdcRep {
            kind,
            padata: Some(vec![PaData::new(
                padata::PA_ETYPE_INFO2,
                EtypeInfo2(vec![EtypeInfo2Entry {
                    etype: 18,
                    salt: Some("EXAMPLE.COMalice".into()),
                    s2kparams: Some(vec![0, 0, 0x10, 0]),
                }])
                .encode(),
            )]),
            crealm: "EXAMPLE.COM".into(),
            cname: PrincipalName::new(1, &["alice"]),
            ticket: sample_ticket(),
            enc_part: EncryptedData {
                etype: 18,
                kvno: Some(u32::MAX),
                cipher: vec![9; 100],
            },
        };
        let e = rep.encode();
        assert_eq!(e[0], 0x60 | kind.rep_msg_type());
        let mut d = KdcRep::decode(&e).unwrap();
        assert_eq!(d.ticket.raw, Some(sample_ticket().encode()));
        d.ticket.raw = None;
        assert_eq!(d, rep);

        let part = EncKdcRepPart {
            kind,
            key: EncryptionKey {
                keytype: 18,
                keyvalue: vec![7; 32],
            },
            last_req: LastReq(vec![
                LastReqEntry {
                    lr_type: 0,
                    lr_value: KerberosTime::NONE,
                },
                LastReqEntry {
                    lr_type: -6,
                    lr_value: KerberosTime(1_800_000_000),
                },
            ]),
            nonce: 0xdead_beef,
            key_expiration: Some(KerberosTime::WINDOWS_NEVER),
            flags: KerberosFlags(ticket_flags::INITIAL | ticket_flags::PRE_AUTHENT),
            authtime: KerberosTime(1_700_000_000),
            starttime: Some(KerberosTime(1_700_000_001)),
            endtime: KerberosTime(1_700_036_000),
            renew_till: Some(KerberosTime(1_700_600_000)),
            srealm: "EXAMPLE.COM".into(),
            sname: PrincipalName::new(2, &["krbtgt", "EXAMPLE.COM"]),
            caddr: Some(vec![]),
            encrypted_pa_data: Some(vec![PaData::new(
                padata::PA_SUPPORTED_ENCTYPES,
                PaSupportedEnctypes(0x1c).encode(),
            )]),
        };
        let e = part.encode();
        assert_eq!(e[0], 0x60 | kind.enc_part_tag());
        assert_eq!(EncKdcRepPart::decode(&e).unwrap(), part);
    }
}

#[test]
fn ticket_and_enc_ticket_part_round_trip() {
    let t = sample_ticket();
    let e = t.encode();
    assert_eq!(e[0], 0x61);
    let d = Ticket::decode(&e).unwrap();
    assert_eq!(d.raw.as_deref(), Some(e.as_slice()));
    // Changing a field after decode needs raw = None to take effect.
    let mut m = d.clone();
    m.realm = "OTHER".into();
    assert_eq!(m.encode(), e);
    m.raw = None;
    assert_ne!(m.encode(), e);

    let pac_wrapper = AuthorizationData(vec![AuthorizationDataEntry {
        ad_type: ad_type::AD_IF_RELEVANT,
        ad_data: AuthorizationData(vec![AuthorizationDataEntry {
            ad_type: ad_type::AD_WIN2K_PAC,
            ad_data: vec![0; 64],
        }])
        .encode(),
    }]);
    let etp = EncTicketPart {
        flags: KerberosFlags(ticket_flags::FORWARDABLE | ticket_flags::OK_AS_DELEGATE),
        key: EncryptionKey {
            keytype: 17,
            keyvalue: vec![1; 16],
        },
        crealm: "EXAMPLE.COM".into(),
        cname: PrincipalName::new(1, &["alice"]),
        transited: TransitedEncoding::default(),
        authtime: KerberosTime(1),
        starttime: None,
        endtime: KerberosTime(2),
        renew_till: None,
        caddr: Some(vec![HostAddress {
            addr_type: 2,
            address: vec![10, 0, 0, 1],
        }]),
        authorization_data: Some(pac_wrapper),
    };
    let e = etp.encode();
    assert_eq!(e[0], 0x63);
    assert_eq!(EncTicketPart::decode(&e).unwrap(), etp);
}

#[test]
fn ap_messages_round_trip() {
    let ap = ApReq {
        ap_options: KerberosFlags(ap_options::MUTUAL_REQUIRED | ap_options::USE_SESSION_KEY),
        ticket: sample_ticket(),
        authenticator: EncryptedData {
            etype: 23,
            kvno: None,
            cipher: vec![5; 80],
        },
    };
    let e = ap.encode();
    assert_eq!(e[0], 0x6e);
    let mut d = ApReq::decode(&e).unwrap();
    d.ticket.raw = None;
    assert_eq!(d, ap);

    let auth = Authenticator {
        crealm: "EXAMPLE.COM".into(),
        cname: PrincipalName::new(1, &["alice"]),
        cksum: Some(Checksum {
            cksumtype: gss::CKSUMTYPE_GSSAPI,
            checksum: GssChecksum {
                bindings: [3; 16],
                flags: gss_flags::DELEG | gss_flags::MUTUAL,
                delegation: Some((1, vec![0x76, 0x00])),
                exts: vec![0, 0, 0, 1],
            }
            .encode(),
        }),
        cusec: 999_999,
        ctime: KerberosTime(1_700_000_000),
        subkey: Some(EncryptionKey {
            keytype: 18,
            keyvalue: vec![2; 32],
        }),
        seq_number: Some(0),
        authorization_data: Some(AuthorizationData(vec![AuthorizationDataEntry {
            ad_type: ad_type::AD_IF_RELEVANT,
            ad_data: AuthorizationData(vec![AuthorizationDataEntry {
                ad_type: ad_type::KERB_AUTH_DATA_TOKEN_RESTRICTIONS,
                ad_data: KerbAdRestrictionList(vec![KerbAdRestrictionEntry {
                    restriction_type: 0,
                    restriction: vec![0; 40],
                }])
                .encode(),
            }])
            .encode(),
        }])),
    };
    let e = auth.encode();
    assert_eq!(e[0], 0x62);
    let d = Authenticator::decode(&e).unwrap();
    assert_eq!(d, auth);
    let g = GssChecksum::decode(&d.cksum.unwrap().checksum).unwrap();
    assert_eq!(g.delegation, Some((1, vec![0x76, 0x00])));
    assert_eq!(g.exts, vec![0, 0, 0, 1]);

    let rep = ApRep {
        enc_part: EncryptedData {
            etype: 18,
            kvno: None,
            cipher: vec![1; 50],
        },
    };
    assert_eq!(ApRep::decode(&rep.encode()).unwrap(), rep);
    let part = EncApRepPart {
        ctime: KerberosTime(5),
        cusec: 6,
        subkey: None,
        seq_number: Some(u32::MAX),
    };
    assert_eq!(EncApRepPart::decode(&part.encode()).unwrap(), part);
}

#[test]
fn krb_error_and_priv_round_trip() {
    let e = KrbError {
        ctime: Some(KerberosTime(10)),
        cusec: Some(11),
        stime: KerberosTime(12),
        susec: 13,
        error_code: error_code::KDC_ERR_PREAUTH_REQUIRED,
        crealm: Some("EXAMPLE.COM".into()),
        cname: Some(PrincipalName::new(1, &["alice"])),
        realm: "EXAMPLE.COM".into(),
        sname: PrincipalName::new(2, &["krbtgt", "EXAMPLE.COM"]),
        e_text: Some("x".into()),
        e_data: Some(
            MethodData(vec![
                PaData::new(padata::PA_ENC_TIMESTAMP, vec![]),
                PaData::new(
                    padata::PA_ETYPE_INFO,
                    EtypeInfo(vec![EtypeInfoEntry {
                        etype: 23,
                        salt: Some(vec![]),
                    }])
                    .encode(),
                ),
            ])
            .encode(),
        ),
    };
    let b = e.encode();
    assert_eq!(b[0], 0x7e);
    let d = KrbError::decode(&b).unwrap();
    assert_eq!(d, e);
    assert_eq!(d.method_data().unwrap().unwrap().0.len(), 2);
    // A minimal one.
    let m = KrbError {
        error_code: -1,
        ..Default::default()
    };
    assert_eq!(KrbError::decode(&m.encode()).unwrap(), m);

    let p = KrbPriv {
        enc_part: EncryptedData {
            etype: 18,
            kvno: None,
            cipher: vec![4; 20],
        },
    };
    let b = p.encode();
    assert_eq!(b[0], 0x75);
    assert_eq!(KrbPriv::decode(&b).unwrap(), p);
    let part = EncKrbPrivPart {
        user_data: KpasswdResult::text(result_code::SUCCESS, "ok").encode(),
        timestamp: None,
        usec: None,
        seq_number: Some(1),
        s_address: None,
        r_address: None,
    };
    assert_eq!(EncKrbPrivPart::decode(&part.encode()).unwrap(), part);
}

#[test]
fn pa_types_round_trip() {
    let ts = PaEncTsEnc {
        patimestamp: KerberosTime(1_795_723_459),
        pausec: Some(662_618),
    };
    // MIT's trace printed this plaintext for the same timestamp.
    let mit = [
        0x30, 0x1a, 0xa0, 0x11, 0x18, 0x0f, b'2', b'0', b'2', b'6', b'1', b'1', b'2', b'6', b'2',
        b'0', b'0', b'4', b'1', b'9', b'Z', 0xa1, 0x05, 0x02, 0x03, 0x0a, 0x1c, 0x5a,
    ];
    assert_eq!(ts.encode(), mit);
    assert_eq!(PaEncTsEnc::decode(&mit).unwrap(), ts);

    let f = PaForUser {
        user_name: PrincipalName::new(name_type::NT_ENTERPRISE, &["b\u{f6}b@example.com"]),
        user_realm: "EXAMPLE.COM".into(),
        cksum: Checksum {
            cksumtype: -138,
            checksum: vec![0; 16],
        },
        auth_package: "Kerberos".into(),
    };
    assert_eq!(PaForUser::decode(&f.encode()).unwrap(), f);
    let mut expect = 10i32.to_le_bytes().to_vec();
    expect.extend_from_slice("b\u{f6}b@example.comEXAMPLE.COMKerberos".as_bytes());
    assert_eq!(f.checksum_data(), expect);

    let o = PaPacOptions {
        flags: KerberosFlags(pac_options::BRANCH_AWARE),
    };
    assert_eq!(PaPacOptions::decode(&o.encode()).unwrap(), o);
    for b in [true, false] {
        let r = KerbPaPacRequest { include_pac: b };
        assert_eq!(KerbPaPacRequest::decode(&r.encode()).unwrap(), r);
    }
    // BER TRUE as 0x01 is accepted too.
    assert!(
        KerbPaPacRequest::decode(&[0x30, 0x05, 0xa0, 0x03, 0x01, 0x01, 0x01])
            .unwrap()
            .include_pac
    );
    assert!(KerbPaPacRequest::decode(&[0x30, 0x06, 0xa0, 0x04, 0x01, 0x02, 0x01, 0x01]).is_err());

    let i = EtypeInfo2(vec![]);
    assert_eq!(EtypeInfo2::decode(&i.encode()).unwrap(), i);
    assert_eq!(
        PaSupportedEnctypes::decode(&[0x1c, 0, 0, 0]).unwrap().0,
        0x1c
    );
    assert!(PaSupportedEnctypes::decode(&[0x1c, 0, 0]).is_err());
    let r = KerbAdRestrictionEntry {
        restriction_type: 0,
        restriction: vec![1, 2],
    };
    assert_eq!(KerbAdRestrictionEntry::decode(&r.encode()).unwrap(), r);
}

#[test]
fn basic_types_round_trip() {
    let p = PrincipalName::new(name_type::NT_MS_PRINCIPAL, &["DOM\\user"]);
    assert_eq!(PrincipalName::decode(&p.encode()).unwrap(), p);
    assert_eq!(PrincipalName::new(2, &["a", "b"]).to_slash_string(), "a/b");
    let empty = PrincipalName::default();
    assert_eq!(PrincipalName::decode(&empty.encode()).unwrap(), empty);
    let h = HostAddress {
        addr_type: 24,
        address: vec![0; 16],
    };
    assert_eq!(HostAddress::decode(&h.encode()).unwrap(), h);
    for kvno in [None, Some(0), Some(1), Some(0x8000_0000), Some(u32::MAX)] {
        let d = EncryptedData {
            etype: -128,
            kvno,
            cipher: vec![],
        };
        assert_eq!(EncryptedData::decode(&d.encode()).unwrap(), d);
    }
    let k = EncryptionKey {
        keytype: 23,
        keyvalue: vec![0x11; 16],
    };
    assert_eq!(EncryptionKey::decode(&k.encode()).unwrap(), k);
    assert!(
        !format!("{k:?}").contains("17"),
        "key bytes must not be printed"
    );
    let c = Checksum {
        cksumtype: -138,
        checksum: vec![1; 16],
    };
    let e = c.encode();
    // -138 is INTEGER 0xff76.
    assert_eq!(&e[4..8], &[0x02, 0x02, 0xff, 0x76]);
    assert_eq!(Checksum::decode(&e).unwrap(), c);
    let pa = PaData::new(padata::PA_FOR_USER, vec![1]);
    assert_eq!(PaData::decode(&pa.encode()).unwrap(), pa);
    let ad = AuthorizationData(vec![]);
    assert_eq!(AuthorizationData::decode(&ad.encode()).unwrap(), ad);
    let lr = LastReq(vec![LastReqEntry::default()]);
    assert_eq!(LastReq::decode(&lr.encode()).unwrap(), lr);
    let tr = TransitedEncoding {
        tr_type: 1,
        contents: b"EXAMPLE.COM,".to_vec(),
    };
    assert_eq!(TransitedEncoding::decode(&tr.encode()).unwrap(), tr);
    let f = KerberosFlags(u32::MAX);
    assert_eq!(KerberosFlags::decode(&f.encode()).unwrap(), f);
    let ce = ChangePasswdData {
        newpasswd: b"pw".to_vec(),
        targname: None,
        targrealm: None,
    };
    assert_eq!(ChangePasswdData::decode(&ce.encode()).unwrap(), ce);
    assert!(!format!("{ce:?}").contains("pw\""));
}

#[test]
fn kpasswd_framing() {
    let req = KpasswdRequest {
        version: KPASSWD_VERSION_SET,
        ap_req: vec![0x6e, 0x00],
        krb_priv: vec![0x75, 0x00],
    };
    let e = req.encode().unwrap();
    assert_eq!(e, vec![0, 10, 0xff, 0x80, 0, 2, 0x6e, 0, 0x75, 0]);
    assert_eq!(KpasswdRequest::decode(&e).unwrap(), req);
    // Length field mismatch, short AP-REQ, missing parts.
    assert!(KpasswdRequest::decode(&e[..9]).is_err());
    let mut bad = e.clone();
    bad[5] = 20;
    assert!(KpasswdRequest::decode(&bad).is_err());
    assert!(KpasswdRequest::decode(&[0, 6, 0, 1, 0, 0]).is_err());
    assert!(KpasswdRequest::decode(&[0, 8, 0, 1, 0, 2, 1, 2]).is_err());
    assert!(KpasswdRequest::decode(&[]).is_err());
    // Too large to frame.
    let huge = KpasswdRequest {
        version: 1,
        ap_req: vec![0; 70_000],
        krb_priv: vec![0],
    };
    assert!(matches!(huge.encode(), Err(MsgError::TooLarge { .. })));

    // Error reply: empty AP-REP then KRB-ERROR carrying the result.
    let err = KrbError {
        error_code: error_code::KRB_AP_ERR_MODIFIED,
        e_data: Some(KpasswdResult::text(result_code::AUTHERROR, "bad").encode()),
        ..Default::default()
    };
    let rep = KpasswdReply::error(err.encode());
    let e = rep.encode().unwrap();
    assert_eq!(&e[2..6], &[0, 1, 0, 0]);
    let d = KpasswdReply::decode(&e).unwrap();
    assert_eq!(d, rep);
    let back = KrbError::decode(&d.body).unwrap();
    let res = KpasswdResult::decode(back.e_data.as_deref().unwrap()).unwrap();
    assert_eq!(res.code, result_code::AUTHERROR);
    assert_eq!(res.string, b"bad");
    assert_eq!(
        result_code::name(7),
        Some("KRB5_KPASSWD_INITIAL_FLAG_NEEDED")
    );
    assert_eq!(result_code::name(8), None);
    assert!(KpasswdResult::decode(&[4]).is_err());

    let ok = KpasswdReply::new(vec![0x6f, 0], vec![0x75, 0]);
    assert_eq!(KpasswdReply::decode(&ok.encode().unwrap()).unwrap(), ok);
}

#[test]
fn ad_policy_blob() {
    let p = AdPolicyInfo {
        min_length: 7,
        history: 24,
        properties: password_properties::COMPLEX,
        max_age: 42 * 864_000_000_000,
        min_age: 864_000_000_000,
    };
    let b = p.encode();
    assert_eq!(b.len(), 30);
    assert_eq!(&b[..10], &[0, 0, 0, 0, 0, 7, 0, 0, 0, 24]);
    assert_eq!(AdPolicyInfo::decode(&b).unwrap(), p);
    let r = KpasswdResult {
        code: result_code::SOFTERROR,
        string: b.to_vec(),
    };
    assert_eq!(
        KpasswdResult::decode(&r.encode()).unwrap().ad_policy(),
        Some(p)
    );
    let mut bad = b;
    bad[0] = 1;
    assert!(AdPolicyInfo::decode(&bad).is_err());
    assert!(AdPolicyInfo::decode(&b[..29]).is_err());
}

#[test]
fn kerb_ext_error() {
    let e = KerbExtError::new(0xC000_0072);
    assert_eq!(e.encode(), [0x72, 0, 0, 0xc0, 0, 0, 0, 0, 1, 0, 0, 0]);
    assert_eq!(KerbExtError::decode(&e.encode()).unwrap(), e);
    assert!(KerbExtError::decode(&[0; 11]).is_err());
    let d = KerbErrorData {
        data_type: 2,
        data_value: None,
    };
    assert_eq!(KerbErrorData::decode(&d.encode()).unwrap(), d);
    assert_eq!(d.ext_error(), None);
}

#[test]
fn gss_framing() {
    let ap = ApReq {
        ticket: sample_ticket(),
        ..Default::default()
    }
    .encode();
    let t = GssKrb5Token::new(TOK_ID_AP_REQ, ap.clone());
    let e = t.encode();
    assert_eq!(&e[e.len() - ap.len() - 2..e.len() - ap.len()], &[1, 0]);
    assert_eq!(GssKrb5Token::decode(&e).unwrap(), t);
    // Microsoft OID is accepted and remembered.
    let ms = GssKrb5Token {
        mech: GssMech::MsKrb5,
        tok_id: TOK_ID_KRB_ERROR,
        message: KrbError::default().encode(),
    };
    let e = ms.encode();
    assert!(e.windows(OID_MS_KRB5.len()).any(|w| w == OID_MS_KRB5));
    assert_eq!(GssKrb5Token::decode(&e).unwrap(), ms);
    // TOK_ID must match the message.
    let wrong = GssKrb5Token::new(TOK_ID_KRB_ERROR, ap.clone()).encode();
    assert!(GssKrb5Token::decode(&wrong).is_err());
    let unknown = GssKrb5Token::new(0x0404, ap.clone()).encode();
    assert!(GssKrb5Token::decode(&unknown).is_err());
    // Other mechanisms are refused.
    let mut spnego = vec![0x06, 0x06, 0x2b, 0x06, 0x01, 0x05, 0x05, 0x02, 0x01, 0x00];
    spnego.extend_from_slice(&ap);
    assert!(GssKrb5Token::decode(&tlv(0x60, &spnego)).is_err());
    // Trailing bytes after the message are refused.
    let mut c = GssKrb5Token::new(TOK_ID_AP_REQ, ap.clone()).encode()[..].to_vec();
    c.push(0);
    assert!(GssKrb5Token::decode(&c).is_err());
    // Checksum too short, bad Lgth, truncated delegation.
    assert!(GssChecksum::decode(&[0; 23]).is_err());
    let mut g = GssChecksum::default().encode();
    assert_eq!(g.len(), 24);
    g[0] = 15;
    assert!(GssChecksum::decode(&g).is_err());
    let mut g = GssChecksum {
        flags: gss_flags::DELEG,
        delegation: Some((1, vec![1, 2, 3])),
        ..Default::default()
    }
    .encode();
    g.truncate(g.len() - 1);
    assert!(GssChecksum::decode(&g).is_err());
}

#[test]
fn unknown_extension_fields_are_skipped() {
    // PA-ENC-TS-ENC with an extra [5] field after the known ones.
    let ts = PaEncTsEnc {
        patimestamp: KerberosTime(0),
        pausec: Some(1),
    };
    let e = ts.encode();
    let mut content = e[2..].to_vec();
    content.extend_from_slice(&tlv(ctx_tag(5), &enc_int(99)));
    assert_eq!(PaEncTsEnc::decode(&tlv(0x30, &content)).unwrap(), ts);
    // An unknown tag between known ones: KRB-PRIV has no [2].
    let p = KrbPriv::default().encode();
    let inner = &p[2..]; // SEQUENCE inside APPLICATION 21
    let seq_content = &inner[2..];
    // pvno [0] and msg-type [1] are 5 + 5 bytes.
    let mut c = seq_content[..10].to_vec();
    c.extend_from_slice(&tlv(ctx_tag(2), &enc_int(1)));
    c.extend_from_slice(&seq_content[10..]);
    let m = tlv(0x75, &tlv(0x30, &c));
    assert_eq!(KrbPriv::decode(&m).unwrap(), KrbPriv::default());
    // But a non-context element at the end is trailing garbage...
    let mut content = e[2..].to_vec();
    content.extend_from_slice(&enc_int(99));
    assert!(matches!(
        PaEncTsEnc::decode(&tlv(0x30, &content)),
        Err(MsgError::TrailingData { .. })
    ));
    // ...and so is a repeated field.
    let mut content = e[2..].to_vec();
    content.extend_from_slice(&tlv(ctx_tag(1), &enc_int(2)));
    assert!(PaEncTsEnc::decode(&tlv(0x30, &content)).is_err());
}

#[test]
fn wrong_versions_types_and_framing_are_refused() {
    let req = KdcReq {
        kind: KdcKind::As,
        padata: None,
        req_body: sample_body(),
    };
    let e = req.encode();
    // pvno 4 instead of 5: the bytes are A1 03 02 01 05 at the start.
    let pos = e.windows(5).position(|w| w == [0xa1, 3, 2, 1, 5]).unwrap();
    let mut m = e.clone();
    m[pos + 4] = 4;
    let err = KdcReq::decode(&m).unwrap_err();
    assert!(matches!(
        err.root_cause(),
        MsgError::BadVersion { version: 4, .. }
    ));
    assert!(err.to_string().contains("pvno"), "{err}");
    // msg-type 12 inside APPLICATION 10.
    let pos = e.windows(5).position(|w| w == [0xa2, 3, 2, 1, 10]).unwrap();
    let mut m = e.clone();
    m[pos + 4] = 12;
    assert!(matches!(
        KdcReq::decode(&m).unwrap_err().root_cause(),
        MsgError::WrongMessageType { .. }
    ));
    // Another APPLICATION tag altogether.
    let mut m = e.clone();
    m[0] = 0x6b;
    assert!(KdcReq::decode(&m).is_err());
    // Trailing byte after the message.
    let mut m = e.clone();
    m.push(0);
    assert!(matches!(
        KdcReq::decode(&m),
        Err(MsgError::TrailingData { .. })
    ));
    // Indefinite length on the outer tag.
    let mut m = vec![0x6a, 0x80];
    m.extend_from_slice(&e[4..]);
    m.extend_from_slice(&[0, 0]);
    assert!(matches!(
        KdcReq::decode(&m),
        Err(MsgError::BadLength { .. })
    ));
    // Missing required field reports its name.
    let body_without_till = {
        let b = sample_body().encode_fields();
        let pos = b.iter().position(|x| *x == ctx_tag(5)).unwrap();
        let len = usize::from(b[pos + 1]) + 2;
        // The outer length of the sample body is in long form.
        let start = if b[1] & 0x80 != 0 {
            2 + usize::from(b[1] & 0x7f)
        } else {
            2
        };
        let mut c = b[start..pos].to_vec();
        c.extend_from_slice(&b[pos + len..]);
        tlv(0x30, &c)
    };
    let err = KdcReqBody::decode(&body_without_till).unwrap_err();
    assert!(matches!(err, MsgError::MissingField { field: "till", .. }));
    // Invalid UTF-8 in a realm.
    let mut p = PrincipalName::new(1, &["ab"]).encode();
    let n = p.len();
    p[n - 1] = 0xff;
    assert!(PrincipalName::decode(&p).is_err());
    // Microseconds out of range.
    let mut a = EncApRepPart {
        cusec: 999_999,
        ..Default::default()
    }
    .encode();
    let pos = a.windows(3).position(|w| w == [0x0f, 0x42, 0x3f]).unwrap();
    a[pos + 2] = 0x40;
    assert!(EncApRepPart::decode(&a).is_err());
}

#[test]
fn application_tag_dispatch() {
    assert_eq!(application_tag(&KrbError::default().encode()), Some(30));
    assert_eq!(application_tag(&[0x30, 0]), None);
    assert_eq!(application_tag(&[]), None);
    assert_eq!(application_tag(&[0x7f]), None);
}

// ---------------------------------------------------------------------------
// Property tests
// ---------------------------------------------------------------------------

fn any_string() -> impl Strategy<Value = String> {
    "[a-zA-Z0-9./@\\-\u{e4}\u{3b1}]{0,12}"
}

fn any_bytes(max: usize) -> impl Strategy<Value = Vec<u8>> {
    proptest::collection::vec(any::<u8>(), 0..max)
}

fn any_time() -> impl Strategy<Value = KerberosTime> {
    (0i64..=253_402_300_799).prop_map(KerberosTime)
}

fn any_usec() -> impl Strategy<Value = u32> {
    0u32..=999_999
}

fn any_name() -> impl Strategy<Value = PrincipalName> {
    (any::<i32>(), proptest::collection::vec(any_string(), 0..4)).prop_map(
        |(name_type, components)| PrincipalName {
            name_type,
            components,
        },
    )
}

fn any_enc() -> impl Strategy<Value = EncryptedData> {
    (
        any::<i32>(),
        proptest::option::of(any::<u32>()),
        any_bytes(64),
    )
        .prop_map(|(etype, kvno, cipher)| EncryptedData {
            etype,
            kvno,
            cipher,
        })
}

fn any_key() -> impl Strategy<Value = EncryptionKey> {
    (any::<i32>(), any_bytes(40))
        .prop_map(|(keytype, keyvalue)| EncryptionKey { keytype, keyvalue })
}

fn any_addrs() -> impl Strategy<Value = Option<Vec<HostAddress>>> {
    proptest::option::of(proptest::collection::vec(
        (any::<i32>(), any_bytes(17))
            .prop_map(|(addr_type, address)| HostAddress { addr_type, address }),
        0..3,
    ))
}

fn any_padata() -> impl Strategy<Value = Option<Vec<PaData>>> {
    proptest::option::of(proptest::collection::vec(
        (any::<i32>(), any_bytes(30)).prop_map(|(t, v)| PaData::new(t, v)),
        0..4,
    ))
}

fn any_ad() -> impl Strategy<Value = Option<AuthorizationData>> {
    proptest::option::of(
        proptest::collection::vec(
            (any::<i32>(), any_bytes(30))
                .prop_map(|(ad_type, ad_data)| AuthorizationDataEntry { ad_type, ad_data }),
            0..3,
        )
        .prop_map(AuthorizationData),
    )
}

fn any_ticket() -> impl Strategy<Value = Ticket> {
    (any_string(), any_name(), any_enc()).prop_map(|(r, n, e)| Ticket::new(r, n, e))
}

fn any_kind() -> impl Strategy<Value = KdcKind> {
    prop_oneof![Just(KdcKind::As), Just(KdcKind::Tgs)]
}

fn any_body() -> impl Strategy<Value = KdcReqBody> {
    (
        (
            any::<u32>(),
            proptest::option::of(any_name()),
            any_string(),
            proptest::option::of(any_name()),
            proptest::option::of(any_time()),
            any_time(),
            proptest::option::of(any_time()),
        ),
        (
            any::<u32>(),
            proptest::collection::vec(any::<i32>(), 0..8),
            any_addrs(),
            proptest::option::of(any_enc()),
            proptest::option::of(proptest::collection::vec(any_ticket(), 0..2)),
        ),
    )
        .prop_map(
            |(
                (opts, cname, realm, sname, from, till, rtime),
                (nonce, etype, addresses, ead, tickets),
            )| {
                KdcReqBody {
                    kdc_options: KerberosFlags(opts),
                    cname,
                    realm,
                    sname,
                    from,
                    till,
                    rtime,
                    nonce,
                    etype,
                    addresses,
                    enc_authorization_data: ead,
                    additional_tickets: tickets,
                    raw: None,
                }
            },
        )
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn prop_kdc_req(kind in any_kind(), padata in any_padata(), body in any_body()) {
        let req = KdcReq { kind, padata, req_body: body };
        let e = req.encode();
        let d = KdcReq::decode(&e).unwrap();
        prop_assert_eq!(d.encode(), e.clone());
        prop_assert_eq!(d.req_body.raw.clone(), Some(req.req_body.encode()));
        let mut d = d;
        d.req_body = strip_body(d.req_body);
        prop_assert_eq!(d, req);
    }

    #[test]
    fn prop_kdc_rep(kind in any_kind(), padata in any_padata(), crealm in any_string(),
                    cname in any_name(), ticket in any_ticket(), enc in any_enc()) {
        let rep = KdcRep { kind, padata, crealm, cname, ticket, enc_part: enc };
        let e = rep.encode();
        let mut d = KdcRep::decode(&e).unwrap();
        prop_assert_eq!(d.encode(), e);
        d.ticket.raw = None;
        prop_assert_eq!(d, rep);
    }

    #[test]
    fn prop_enc_kdc_rep_part(
        kind in any_kind(), key in any_key(),
        lr in proptest::collection::vec((any::<i32>(), any_time()), 0..3),
        nonce in any::<u32>(), kexp in proptest::option::of(any_time()), flags in any::<u32>(),
        times in (any_time(), proptest::option::of(any_time()), any_time(), proptest::option::of(any_time())),
        srealm in any_string(), sname in any_name(), caddr in any_addrs(), epa in any_padata()
    ) {
        let v = EncKdcRepPart {
            kind, key,
            last_req: LastReq(lr.into_iter().map(|(lr_type, lr_value)| LastReqEntry { lr_type, lr_value }).collect()),
            nonce, key_expiration: kexp, flags: KerberosFlags(flags),
            authtime: times.0, starttime: times.1, endtime: times.2, renew_till: times.3,
            srealm, sname, caddr, encrypted_pa_data: epa,
        };
        prop_assert_eq!(EncKdcRepPart::decode(&v.encode()).unwrap(), v);
    }

    #[test]
    fn prop_enc_ticket_part(
        flags in any::<u32>(), key in any_key(), crealm in any_string(), cname in any_name(),
        tr in (any::<i32>(), any_bytes(20)),
        times in (any_time(), proptest::option::of(any_time()), any_time(), proptest::option::of(any_time())),
        caddr in any_addrs(), ad in any_ad()
    ) {
        let v = EncTicketPart {
            flags: KerberosFlags(flags), key, crealm, cname,
            transited: TransitedEncoding { tr_type: tr.0, contents: tr.1 },
            authtime: times.0, starttime: times.1, endtime: times.2, renew_till: times.3,
            caddr, authorization_data: ad,
        };
        prop_assert_eq!(EncTicketPart::decode(&v.encode()).unwrap(), v);
    }

    #[test]
    fn prop_authenticator_and_ap(
        crealm in any_string(), cname in any_name(),
        cksum in proptest::option::of((any::<i32>(), any_bytes(30))),
        cusec in any_usec(), ctime in any_time(), subkey in proptest::option::of(any_key()),
        seq in proptest::option::of(any::<u32>()), ad in any_ad(),
        opts in any::<u32>(), ticket in any_ticket(), enc in any_enc()
    ) {
        let a = Authenticator {
            crealm, cname,
            cksum: cksum.map(|(cksumtype, checksum)| Checksum { cksumtype, checksum }),
            cusec, ctime, subkey: subkey.clone(), seq_number: seq, authorization_data: ad,
        };
        prop_assert_eq!(Authenticator::decode(&a.encode()).unwrap(), a);
        let ap = ApReq { ap_options: KerberosFlags(opts), ticket, authenticator: enc.clone() };
        let mut d = ApReq::decode(&ap.encode()).unwrap();
        d.ticket.raw = None;
        prop_assert_eq!(d, ap);
        let rep = ApRep { enc_part: enc };
        prop_assert_eq!(ApRep::decode(&rep.encode()).unwrap(), rep);
        let p = EncApRepPart { ctime, cusec, subkey, seq_number: seq };
        prop_assert_eq!(EncApRepPart::decode(&p.encode()).unwrap(), p);
    }

    #[test]
    fn prop_krb_error(
        ctime in proptest::option::of(any_time()), cusec in proptest::option::of(any_usec()),
        stime in any_time(), susec in any_usec(), code in any::<i32>(),
        crealm in proptest::option::of(any_string()), cname in proptest::option::of(any_name()),
        realm in any_string(), sname in any_name(), e_text in proptest::option::of(any_string()),
        e_data in proptest::option::of(any_bytes(40))
    ) {
        let e = KrbError { ctime, cusec, stime, susec, error_code: code, crealm, cname, realm, sname, e_text, e_data };
        prop_assert_eq!(KrbError::decode(&e.encode()).unwrap(), e);
    }

    #[test]
    fn prop_priv_and_kpasswd(
        user_data in any_bytes(60), ts in proptest::option::of(any_time()),
        usec in proptest::option::of(any_usec()), seq in proptest::option::of(any::<u32>()),
        s in any_addrs(), r in any_addrs(),
        pw in any_bytes(30), targ in proptest::option::of(any_name()), trealm in proptest::option::of(any_string()),
        version in any::<u16>(), ap in any_bytes(100), body in any_bytes(100)
    ) {
        let p = EncKrbPrivPart {
            user_data, timestamp: ts, usec, seq_number: seq,
            s_address: s.and_then(|v| v.into_iter().next()),
            r_address: r.and_then(|v| v.into_iter().next()),
        };
        prop_assert_eq!(EncKrbPrivPart::decode(&p.encode()).unwrap(), p);
        let c = ChangePasswdData { newpasswd: pw, targname: targ, targrealm: trealm };
        prop_assert_eq!(ChangePasswdData::decode(&c.encode()).unwrap(), c);
        let rep = KpasswdReply { version, ap_rep: ap.clone(), body: body.clone() };
        prop_assert_eq!(KpasswdReply::decode(&rep.encode().unwrap()).unwrap(), rep);
        if !ap.is_empty() && !body.is_empty() {
            let req = KpasswdRequest { version, ap_req: ap, krb_priv: body };
            prop_assert_eq!(KpasswdRequest::decode(&req.encode().unwrap()).unwrap(), req);
        }
    }

    #[test]
    fn prop_pa_types(
        etype in any::<i32>(), salt in proptest::option::of(any_string()),
        s2k in proptest::option::of(any_bytes(8)), name in any_name(), realm in any_string(),
        ck in any_bytes(20), pkg in any_string(), ts in any_time(), pausec in proptest::option::of(any_usec())
    ) {
        let i = EtypeInfo2(vec![EtypeInfo2Entry { etype, salt, s2kparams: s2k }]);
        prop_assert_eq!(EtypeInfo2::decode(&i.encode()).unwrap(), i);
        let f = PaForUser {
            user_name: name, user_realm: realm,
            cksum: Checksum { cksumtype: etype, checksum: ck }, auth_package: pkg,
        };
        prop_assert_eq!(PaForUser::decode(&f.encode()).unwrap(), f);
        let p = PaEncTsEnc { patimestamp: ts, pausec };
        prop_assert_eq!(PaEncTsEnc::decode(&p.encode()).unwrap(), p);
    }

    #[test]
    fn prop_time_round_trip(t in any_time()) {
        prop_assert_eq!(KerberosTime::decode(&t.encode()).unwrap(), t);
    }

    #[test]
    fn prop_flags_any_length(unused in 0u8..8, bits in any_bytes(8)) {
        let mut content = vec![unused];
        content.extend_from_slice(&bits);
        // Must not panic whatever the input; valid inputs decode.
        let r = KerberosFlags::decode(&tlv(0x03, &content));
        if bits.is_empty() && unused != 0 {
            prop_assert!(r.is_err());
        } else {
            prop_assert!(r.is_ok());
        }
    }

    #[test]
    fn prop_random_bytes_never_panic(bytes in any_bytes(300)) {
        decode_everything(&bytes);
    }

    #[test]
    fn prop_random_tlv_shaped_input_never_panics(
        app in prop_oneof![Just(0x60u8), Just(0x61), Just(0x62), Just(0x63), Just(0x6a), Just(0x6b),
                           Just(0x6c), Just(0x6d), Just(0x6e), Just(0x6f), Just(0x75), Just(0x79),
                           Just(0x7a), Just(0x7b), Just(0x7c), Just(0x7e), Just(0x30)],
        body in any_bytes(200)
    ) {
        decode_everything(&tlv(app, &body));
        decode_everything(&tlv(app, &tlv(0x30, &body)));
    }
}

#[test]
fn gss_flags_constants() {
    assert_eq!(gss_flags::EXTENDED_ERROR, 0x4000);
    assert_eq!(KPASSWD_VERSION_SET, 0xff80);
}
