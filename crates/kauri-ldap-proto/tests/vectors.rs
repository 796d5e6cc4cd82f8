//! Byte-exact vectors written by hand from the RFC 4511 ASN.1.

mod common;

use common::{hex, tlv};
use kauri_db::filter::{ExtensibleMatch, Filter, SubstringFilter};
use kauri_ldap_proto::decode::{decode_filter, decode_message};
use kauri_ldap_proto::encode::{encode_filter, encode_message};
use kauri_ldap_proto::*;

fn both(bytes: &[u8], msg: &LdapMessage) {
    assert_eq!(&decode_message(bytes).unwrap(), msg);
    assert_eq!(encode_message(msg), bytes);
}

#[test]
fn anonymous_simple_bind() {
    let msg = LdapMessage {
        id: 1,
        op: ProtocolOp::BindRequest(BindRequest {
            version: 3,
            name: String::new(),
            auth: BindAuth::Simple(Vec::new()),
        }),
        controls: vec![],
    };
    both(&hex("30 0c 02 01 01 60 07 02 01 03 04 00 80 00"), &msg);
}

#[test]
fn sasl_bind_and_response() {
    let msg = LdapMessage {
        id: 2,
        op: ProtocolOp::BindRequest(BindRequest {
            version: 3,
            name: String::new(),
            auth: BindAuth::Sasl {
                mechanism: "EXTERNAL".into(),
                credentials: None,
            },
        }),
        controls: vec![],
    };
    let mut b = hex("02 01 03 04 00");
    b.extend(tlv(0xa3, &tlv(0x04, b"EXTERNAL")));
    let mut m = hex("02 01 02");
    m.extend(tlv(0x60, &b));
    both(&tlv(0x30, &m), &msg);

    let resp = LdapMessage {
        id: 2,
        op: ProtocolOp::BindResponse(BindResponse {
            result: LdapResult::new(ResultCode::SASL_BIND_IN_PROGRESS, ""),
            server_sasl_creds: Some(vec![0xab, 0xcd]),
            sicily: None,
        }),
        controls: vec![],
    };
    both(
        &hex("30 10 02 01 02 61 0b 0a 01 0e 04 00 04 00 87 02 ab cd"),
        &resp,
    );
}

#[test]
fn search_object_class_present() {
    let msg = LdapMessage {
        id: 2,
        op: ProtocolOp::SearchRequest(SearchRequest {
            base: "dc=example,dc=com".into(),
            scope: SearchScope::Subtree,
            deref: DerefAliases::Never,
            size_limit: 0,
            time_limit: 0,
            types_only: false,
            filter: Filter::present("objectClass"),
            attributes: vec![],
        }),
        controls: vec![],
    };
    let mut bytes = hex("30 36 02 01 02 63 31 04 11");
    bytes.extend(b"dc=example,dc=com");
    bytes.extend(hex("0a 01 02 0a 01 00 02 01 00 02 01 00 01 01 00 87 0b"));
    bytes.extend(b"objectClass");
    bytes.extend(hex("30 00"));
    both(&bytes, &msg);
}

#[test]
fn search_result_done_success() {
    let msg = LdapMessage {
        id: 2,
        op: ProtocolOp::SearchResultDone(LdapResult::success()),
        controls: vec![],
    };
    both(&hex("30 0c 02 01 02 65 07 0a 01 00 04 00 04 00"), &msg);
}

#[test]
fn equality_with_binary_value() {
    let f = Filter::eq("objectSid", [0x01, 0x05, 0xff, 0x00]);
    let mut bytes = hex("a3 11 04 09");
    bytes.extend(b"objectSid");
    bytes.extend(hex("04 04 01 05 ff 00"));
    assert_eq!(encode_filter(&f), bytes);
    assert_eq!(decode_filter(&bytes).unwrap(), f);
    let msg = common::search_with_filter(9, &bytes);
    match decode_message(&msg).unwrap().op {
        ProtocolOp::SearchRequest(s) => assert_eq!(s.filter, f),
        other => panic!("{other:?}"),
    }
}

#[test]
fn filter_choices() {
    let sub = Filter::Substrings(SubstringFilter {
        attr: "cn".into(),
        initial: Some(b"a".to_vec()),
        any: vec![b"b".to_vec()],
        final_: Some(b"c".to_vec()),
    });
    assert_eq!(
        encode_filter(&sub),
        hex("a4 0f 04 02 63 6e 30 09 80 01 61 81 01 62 82 01 63")
    );
    let ext = Filter::Extensible(ExtensibleMatch {
        rule: Some("2.5.13.5".into()),
        attr: Some("cn".into()),
        value: b"v".to_vec(),
        dn_attributes: true,
    });
    let mut e = hex("a9 14 81 08");
    e.extend(b"2.5.13.5");
    e.extend(hex("82 02 63 6e 83 01 76 84 01 ff"));
    assert_eq!(encode_filter(&ext), e);
    assert_eq!(decode_filter(&e).unwrap(), ext);
    // dnAttributes FALSE may be sent explicitly.
    let explicit = hex("a9 0a 82 02 63 6e 83 01 76 84 01 00");
    assert!(matches!(
        decode_filter(&explicit).unwrap(),
        Filter::Extensible(ExtensibleMatch {
            dn_attributes: false,
            rule: None,
            ..
        })
    ));
    // Neither rule nor type.
    assert!(decode_filter(&hex("a9 03 83 01 76")).is_err());
    // RFC 4526 absolute true / false.
    assert_eq!(encode_filter(&Filter::and(vec![])), hex("a0 00"));
    assert_eq!(decode_filter(&hex("a0 00")).unwrap(), Filter::and(vec![]));
    assert_eq!(decode_filter(&hex("a1 00")).unwrap(), Filter::or(vec![]));
    let cmp = Filter::and(vec![
        Filter::ge("n", "1"),
        Filter::not(Filter::le("n", "9")),
        Filter::approx("sn", "x"),
    ]);
    assert_eq!(
        encode_filter(&cmp),
        hex("a0 1b a5 06 04 01 6e 04 01 31 a2 08 a6 06 04 01 6e 04 01 39 a8 07 04 02 73 6e 04 01 78")
    );
    assert_eq!(decode_filter(&encode_filter(&cmp)).unwrap(), cmp);
}

#[test]
fn substring_order_rules() {
    let ok = hex("a4 0a 04 01 78 30 05 81 01 61 82 00");
    assert!(decode_filter(&ok).is_ok());
    // initial after any
    assert!(decode_filter(&hex("a4 0b 04 01 78 30 06 81 01 61 80 01 62")).is_err());
    // two initials
    assert!(decode_filter(&hex("a4 0b 04 01 78 30 06 80 01 61 80 01 62")).is_err());
    // something after final
    assert!(decode_filter(&hex("a4 0b 04 01 78 30 06 82 01 61 81 01 62")).is_err());
    // two finals
    assert!(decode_filter(&hex("a4 0b 04 01 78 30 06 82 01 61 82 01 62")).is_err());
    // no components: AD matches nothing with it (absolute false)
    assert_eq!(
        decode_filter(&hex("a4 05 04 01 78 30 00")).unwrap(),
        Filter::Or(Vec::new())
    );
    // unknown component
    assert!(decode_filter(&hex("a4 08 04 01 78 30 03 83 01 61")).is_err());
}

#[test]
fn other_requests() {
    both(
        &hex("30 05 02 01 03 42 00"),
        &LdapMessage {
            id: 3,
            op: ProtocolOp::UnbindRequest,
            controls: vec![],
        },
    );
    both(
        &hex("30 06 02 01 04 50 01 02"),
        &LdapMessage {
            id: 4,
            op: ProtocolOp::AbandonRequest(2),
            controls: vec![],
        },
    );
    both(
        &hex("30 0a 02 01 05 4a 05 63 6e 3d 61 62"),
        &LdapMessage {
            id: 5,
            op: ProtocolOp::DelRequest("cn=ab".into()),
            controls: vec![],
        },
    );
    // ModifyDN with newSuperior [0].
    let mut m = hex("02 01 06");
    let mut body = tlv(0x04, b"cn=a,dc=x");
    body.extend(tlv(0x04, b"cn=b"));
    body.extend(hex("01 01 ff"));
    body.extend(tlv(0x80, b"ou=y,dc=x"));
    m.extend(tlv(0x6c, &body));
    both(
        &tlv(0x30, &m),
        &LdapMessage {
            id: 6,
            op: ProtocolOp::ModifyDnRequest(ModifyDnRequest {
                dn: "cn=a,dc=x".into(),
                new_rdn: "cn=b".into(),
                delete_old_rdn: true,
                new_superior: Some("ou=y,dc=x".into()),
            }),
            controls: vec![],
        },
    );
    // Modify: increment (RFC 4525) of a counter.
    let mut body = tlv(0x04, b"cn=a");
    let mut attr = tlv(0x04, b"n");
    attr.extend(tlv(0x31, &tlv(0x04, b"1")));
    let mut change = hex("0a 01 03");
    change.extend(tlv(0x30, &attr));
    body.extend(tlv(0x30, &tlv(0x30, &change)));
    let mut m = hex("02 01 07");
    m.extend(tlv(0x66, &body));
    both(
        &tlv(0x30, &m),
        &LdapMessage {
            id: 7,
            op: ProtocolOp::ModifyRequest(ModifyRequest {
                dn: "cn=a".into(),
                changes: vec![Change {
                    op: ModOp::Increment,
                    attribute: Attribute {
                        name: "n".into(),
                        values: vec![b"1".to_vec()],
                    },
                }],
            }),
            controls: vec![],
        },
    );
}

#[test]
fn extended_response_and_notice() {
    let notice =
        kauri_ldap_proto::controls::notice_of_disconnection(ResultCode::PROTOCOL_ERROR, "");
    let mut body = hex("0a 01 02 04 00 04 00");
    body.extend(tlv(0x8a, b"1.3.6.1.4.1.1466.20036"));
    let mut m = hex("02 01 00");
    m.extend(tlv(0x78, &body));
    both(&tlv(0x30, &m), &notice);
    // responseValue [11]
    let msg = LdapMessage {
        id: 8,
        op: ProtocolOp::ExtendedResponse(ExtendedResponse {
            result: LdapResult::success(),
            name: None,
            value: Some(b"u:x".to_vec()),
        }),
        controls: vec![],
    };
    both(
        &hex("30 11 02 01 08 78 0c 0a 01 00 04 00 04 00 8b 03 75 3a 78"),
        &msg,
    );
}

#[test]
fn controls_and_long_lengths() {
    let paged = Control {
        oid: "1.2.840.113556.1.4.319".into(),
        critical: true,
        value: Some(hex("30 05 02 01 64 04 00")),
    };
    let msg = LdapMessage {
        id: 1,
        op: ProtocolOp::DelRequest("x".into()),
        controls: vec![
            paged,
            Control {
                oid: "1.2".into(),
                critical: false,
                value: None,
            },
        ],
    };
    let mut c1 = tlv(0x04, b"1.2.840.113556.1.4.319");
    c1.extend(hex("01 01 ff"));
    c1.extend(tlv(0x04, &hex("30 05 02 01 64 04 00")));
    let mut ctrls = tlv(0x30, &c1);
    ctrls.extend(tlv(0x30, &tlv(0x04, b"1.2")));
    let mut m = hex("02 01 01 4a 01 78");
    m.extend(tlv(0xa0, &ctrls));
    both(&tlv(0x30, &m), &msg);

    // An explicit criticality FALSE is accepted; any non-zero octet is TRUE.
    let mut c = tlv(0x04, b"1.2");
    c.extend(hex("01 01 01"));
    let mut m = hex("02 01 01 4a 01 78");
    m.extend(tlv(0xa0, &tlv(0x30, &c)));
    assert!(decode_message(&tlv(0x30, &m)).unwrap().controls[0].critical);

    // Long-form lengths on an entry with a large value.
    let entry = LdapMessage {
        id: 300,
        op: ProtocolOp::SearchResultEntry(SearchResultEntry {
            dn: "cn=x".into(),
            attributes: vec![Attribute {
                name: "photo".into(),
                values: vec![vec![0xee; 300]],
            }],
        }),
        controls: vec![],
    };
    let bytes = encode_message(&entry);
    assert_eq!(&bytes[..8], &hex("30 82 01 51 02 02 01 2c")[..]);
    assert_eq!(decode_message(&bytes).unwrap(), entry);
}

#[test]
fn errors_keep_id_and_op() {
    // Non-UTF-8 DN in a delete request.
    let e = decode_message(&hex("30 07 02 01 05 4a 02 ff fe")).unwrap_err();
    assert_eq!(
        (e.id, e.op, e.code),
        (Some(5), Some(10), ResultCode::INVALID_DN_SYNTAX)
    );
    // Non-UTF-8 attribute description in a compare.
    let e = decode_message(&hex(
        "30 11 02 01 06 6e 0c 04 01 78 30 07 04 02 ff ff 04 01 61",
    ))
    .unwrap_err();
    assert_eq!(
        (e.id, e.op, e.code),
        (Some(6), Some(14), ResultCode::PROTOCOL_ERROR)
    );
    // Bad scope in a search.
    let e = decode_message(&hex(
        "30 1b 02 01 07 63 16 04 00 0a 01 09 0a 01 00 02 01 00 02 01 00 01 01 00 87 01 61 30 00",
    ))
    .unwrap_err();
    assert_eq!((e.id, e.op), (Some(7), Some(3)));
    assert!(e.to_string().contains("scope"), "{e}");
    // Message id out of range.
    let e = decode_message(&hex("30 0a 02 05 00 80 00 00 00 50 01 01")).unwrap_err();
    assert_eq!(e.id, None);
    let e = decode_message(&hex("30 06 02 01 ff 50 01 01")).unwrap_err();
    assert_eq!(e.id, None);
    assert!(decode_message(&hex("30 08 02 04 7f ff ff ff 42 00")).is_ok());
    // Trailing garbage in the frame, inside the message, and in the op.
    let e = decode_message(&hex("30 05 02 01 03 42 00 00")).unwrap_err();
    assert_eq!(e.id, Some(3));
    assert!(decode_message(&hex("30 07 02 01 03 42 00 05 00")).is_err());
    assert!(decode_message(&hex("30 07 02 01 04 50 02 00 02")).is_ok());
    // Indefinite length inside.
    assert!(decode_message(&hex("30 07 02 01 03 60 80 00 00")).is_err());
    // Unknown operation.
    let e = decode_message(&hex("30 05 02 01 03 5e 00")).unwrap_err();
    assert_eq!((e.id, e.op), (Some(3), Some(30)));
    // Constructed OCTET STRING is refused (here the matched DN of a delete response).
    let e = decode_message(&hex("30 0e 02 01 05 6b 09 0a 01 00 24 02 04 00 04 00")).unwrap_err();
    assert_eq!((e.id, e.op), (Some(5), Some(11)));
    assert!(e.to_string().contains("constructed"), "{e}");
    assert!(decode_message(&[]).is_err());
}
