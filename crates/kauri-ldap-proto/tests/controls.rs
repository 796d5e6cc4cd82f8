//! Typed controls and extended operation values.

mod common;

use common::hex;
use kauri_ldap_proto::controls::*;
use kauri_ldap_proto::{Control, ResultCode};
use proptest::prelude::*;

fn rt<T: ControlValue + PartialEq + std::fmt::Debug>(v: T, critical: bool) -> Control {
    let c = v.to_control(critical);
    assert_eq!(c.oid, T::OID);
    assert_eq!(c.critical, critical);
    assert_eq!(T::from_control(&c).unwrap(), v);
    c
}

#[test]
fn oids() {
    assert_eq!(SEARCH_OPTIONS, "1.2.840.113556.1.4.1340");
    assert_eq!(PAGED_RESULTS, "1.2.840.113556.1.4.319");
    assert_eq!(SORT_REQUEST, "1.2.840.113556.1.4.473");
    assert_eq!(SORT_RESPONSE, "1.2.840.113556.1.4.474");
    assert_eq!(VLV_REQUEST, "2.16.840.1.113730.3.4.9");
    assert_eq!(VLV_RESPONSE, "2.16.840.1.113730.3.4.10");
    assert_eq!(DOMAIN_SCOPE, "1.2.840.113556.1.4.1339");
    assert_eq!(SHOW_RECYCLED, "1.2.840.113556.1.4.2064");
    assert_eq!(SHOW_DEACTIVATED_LINK, "1.2.840.113556.1.4.2065");
    assert_eq!(MANAGE_DSA_IT, "2.16.840.1.113730.3.4.2");
    assert_eq!(WHO_AM_I, "1.3.6.1.4.1.4203.1.11.3");
    assert_eq!(PASSWORD_MODIFY, "1.3.6.1.4.1.4203.1.11.1");
    assert_eq!(START_TLS, "1.3.6.1.4.1.1466.20037");
    assert_eq!(NOTICE_OF_DISCONNECTION, "1.3.6.1.4.1.1466.20036");
    assert!(!KNOWN_CONTROLS.contains(&"1.2.840.113556.1.4.1338"));
    let mut sorted = KNOWN_CONTROLS.to_vec();
    sorted.sort();
    sorted.dedup();
    assert_eq!(sorted.len(), KNOWN_CONTROLS.len());
}

#[test]
fn paged_results() {
    let c = rt(
        PagedResults {
            size: 100,
            cookie: vec![],
        },
        true,
    );
    assert_eq!(c.value.unwrap(), hex("30 05 02 01 64 04 00"));
    rt(
        PagedResults {
            size: 0,
            cookie: vec![0, 1, 0xff],
        },
        false,
    );
    let c = Control {
        oid: PAGED_RESULTS.into(),
        critical: true,
        value: None,
    };
    assert_eq!(
        decode_known(&c),
        Err(ControlError::MissingValue { oid: PAGED_RESULTS })
    );
    let c = Control {
        oid: PAGED_RESULTS.into(),
        critical: true,
        value: Some(hex("30 03 02 01 05")),
    };
    assert!(matches!(
        decode_known(&c),
        Err(ControlError::Malformed { .. })
    ));
    let c = Control {
        oid: PAGED_RESULTS.into(),
        critical: true,
        value: Some(hex("30 05 02 01 05 04 00 00")),
    };
    assert!(decode_known(&c).is_err());
    let c = Control {
        oid: PAGED_RESULTS.into(),
        critical: true,
        value: Some(hex("30 09 02 05 01 00 00 00 00 04 00")),
    };
    assert!(decode_known(&c).is_err(), "size beyond i32");
}

#[test]
fn sort() {
    let req = SortRequest {
        keys: vec![
            SortKey {
                attribute: "cn".into(),
                ordering_rule: None,
                reverse: false,
            },
            SortKey {
                attribute: "sn".into(),
                ordering_rule: Some("2.5.13.3".into()),
                reverse: true,
            },
        ],
    };
    let c = rt(req.clone(), false);
    let mut expect = hex("30 19 30 04 04 02 63 6e 30 11 04 02 73 6e 80 08");
    expect.extend(b"2.5.13.3");
    expect.extend(hex("81 01 ff"));
    assert_eq!(c.value.as_deref(), Some(&expect[..]));
    assert_eq!(decode_known(&c), Ok(Known::SortRequest(req)));
    let empty = Control {
        oid: SORT_REQUEST.into(),
        critical: false,
        value: Some(hex("30 00")),
    };
    assert!(decode_known(&empty).is_err());
    rt(
        SortResult {
            code: ResultCode::SUCCESS,
            attribute: None,
        },
        false,
    );
    let c = rt(
        SortResult {
            code: ResultCode::NO_SUCH_ATTRIBUTE,
            attribute: Some("cn".into()),
        },
        false,
    );
    assert_eq!(c.value.unwrap(), hex("30 07 0a 01 10 80 02 63 6e"));
}

#[test]
fn vlv() {
    let req = VlvRequest {
        before: 0,
        after: 19,
        target: VlvTarget::ByOffset {
            offset: 1,
            content_count: 0,
        },
        context_id: None,
    };
    let c = rt(req, true);
    assert_eq!(
        c.value.unwrap(),
        hex("30 0e 02 01 00 02 01 13 a0 06 02 01 01 02 01 00")
    );
    let c = rt(
        VlvRequest {
            before: 5,
            after: 5,
            target: VlvTarget::GreaterOrEqual(b"smith".to_vec()),
            context_id: Some(vec![1, 2]),
        },
        true,
    );
    assert!(matches!(decode_known(&c), Ok(Known::VlvRequest(_))));
    let bad = Control {
        oid: VLV_REQUEST.into(),
        critical: true,
        value: Some(hex("30 08 02 01 00 02 01 00 82 00")),
    };
    assert!(decode_known(&bad).is_err());
    let c = rt(
        VlvResponse {
            target_position: 1,
            content_count: 1000,
            result: ResultCode::SUCCESS,
            context_id: Some(vec![7]),
        },
        false,
    );
    assert_eq!(
        c.value.unwrap(),
        hex("30 0d 02 01 01 02 02 03 e8 0a 01 00 04 01 07")
    );
}

#[test]
fn ad_integer_controls() {
    let c = rt(ExtendedDn { format: 1 }, false);
    assert_eq!(c.value.unwrap(), hex("30 03 02 01 01"));
    let bare = Control {
        oid: EXTENDED_DN.into(),
        critical: false,
        value: None,
    };
    assert_eq!(
        decode_known(&bare),
        Ok(Known::ExtendedDn(ExtendedDn { format: 0 }))
    );
    let c = rt(SearchOptions { flags: 2 }, true);
    assert_eq!(c.oid, "1.2.840.113556.1.4.1340");
    assert_eq!(
        decode_known(&c),
        Ok(Known::SearchOptions(SearchOptions { flags: 2 }))
    );
    let c = rt(SdFlags { flags: 7 }, true);
    assert_eq!(c.value.unwrap(), hex("30 03 02 01 07"));
    // A flag word sent as an unsigned 32-bit value keeps its bits.
    let c = Control {
        oid: SD_FLAGS.into(),
        critical: true,
        value: Some(hex("30 07 02 05 00 80 00 00 04")),
    };
    assert_eq!(
        decode_known(&c),
        Ok(Known::SdFlags(SdFlags {
            flags: 0x8000_0004u32 as i32
        }))
    );
    let c = Control {
        oid: SD_FLAGS.into(),
        critical: true,
        value: Some(hex("04 00")),
    };
    assert!(matches!(
        decode_known(&c),
        Err(ControlError::Malformed { oid: SD_FLAGS, .. })
    ));
    let c = Control {
        oid: SEARCH_OPTIONS.into(),
        critical: true,
        value: None,
    };
    assert!(decode_known(&c).is_err());
    let c = rt(
        Asq {
            source_attribute: "member".into(),
        },
        true,
    );
    assert_eq!(
        decode_known(&c),
        Ok(Known::Asq(Asq {
            source_attribute: "member".into()
        }))
    );
    rt(
        AsqResponse {
            result: ResultCode::SUCCESS,
        },
        false,
    );
}

#[test]
fn value_less_controls() {
    for (oid, k) in [
        (TREE_DELETE, Known::TreeDelete),
        (PERMISSIVE_MODIFY, Known::PermissiveModify),
        (DOMAIN_SCOPE, Known::DomainScope),
        (SHOW_DELETED, Known::ShowDeleted),
        (SHOW_RECYCLED, Known::ShowRecycled),
        (SHOW_DEACTIVATED_LINK, Known::ShowDeactivatedLink),
        (LAZY_COMMIT, Known::LazyCommit),
        (NOTIFICATION, Known::Notification),
        (RANGE_RETRIEVAL_NOERR, Known::RangeRetrievalNoErr),
        (MANAGE_DSA_IT, Known::ManageDsaIt),
    ] {
        let c = Control {
            oid: oid.into(),
            critical: true,
            value: None,
        };
        assert_eq!(decode_known(&c), Ok(k));
    }
    let c = Control {
        oid: "1.2.840.113556.1.4.1338".into(),
        critical: true,
        value: Some(vec![1]),
    };
    assert_eq!(decode_known(&c), Ok(Known::Unknown));
}

#[test]
fn password_modify() {
    let req = PasswordModifyRequest {
        user_identity: Some(b"uid=a".to_vec()),
        old_password: None,
        new_password: Some(b"n".to_vec()),
    };
    let v = req.encode();
    assert_eq!(v, hex("30 0a 80 05 75 69 64 3d 61 82 01 6e"));
    assert_eq!(PasswordModifyRequest::decode(Some(&v)).unwrap(), req);
    assert_eq!(
        PasswordModifyRequest::decode(None).unwrap(),
        PasswordModifyRequest::default()
    );
    assert_eq!(PasswordModifyRequest::default().encode(), hex("30 00"));
    assert!(PasswordModifyRequest::decode(Some(&hex("30 03 82 01 6e 00"))).is_err());
    assert!(
        PasswordModifyRequest::decode(Some(&hex("30 06 82 01 6e 80 01 61"))).is_err(),
        "out of order"
    );
    assert!(!format!("{req:?}").contains("110"));
    let resp = PasswordModifyResponse {
        gen_passwd: Some(b"pw".to_vec()),
    };
    let v = resp.encode().unwrap();
    assert_eq!(v, hex("30 04 80 02 70 77"));
    assert_eq!(PasswordModifyResponse::decode(Some(&v)).unwrap(), resp);
    assert_eq!(PasswordModifyResponse::default().encode(), None);
    assert_eq!(
        PasswordModifyResponse::decode(None).unwrap(),
        PasswordModifyResponse::default()
    );
}

proptest! {
    #[test]
    fn typed_controls_round_trip(
        size in any::<i32>(),
        cookie in prop::collection::vec(any::<u8>(), 0..40),
        before in any::<i32>(),
        after in any::<i32>(),
        flags in any::<i32>(),
        by_offset in any::<bool>(),
        ctx in prop::option::of(prop::collection::vec(any::<u8>(), 0..8)),
        keys in prop::collection::vec(("[a-z]{1,8}", prop::option::of("[0-9.]{1,8}"), any::<bool>()), 1..4),
    ) {
        rt(PagedResults { size, cookie: cookie.clone() }, true);
        rt(SearchOptions { flags }, true);
        rt(SdFlags { flags }, true);
        rt(ExtendedDn { format: flags }, false);
        let target = if by_offset {
            VlvTarget::ByOffset { offset: before, content_count: after }
        } else {
            VlvTarget::GreaterOrEqual(cookie.clone())
        };
        rt(VlvRequest { before, after, target, context_id: ctx.clone() }, true);
        rt(VlvResponse { target_position: before, content_count: after, result: ResultCode(flags as u32), context_id: ctx }, false);
        rt(SortRequest {
            keys: keys.into_iter().map(|(attribute, ordering_rule, reverse)| SortKey { attribute, ordering_rule, reverse }).collect(),
        }, false);
    }

    #[test]
    fn control_values_never_panic(oid in 0usize..KNOWN_CONTROLS.len(), value in prop::option::of(prop::collection::vec(any::<u8>(), 0..64))) {
        let c = Control { oid: KNOWN_CONTROLS[oid].into(), critical: true, value: value.clone() };
        let _ = decode_known(&c);
        let _ = PasswordModifyRequest::decode(value.as_deref());
        let _ = PasswordModifyResponse::decode(value.as_deref());
    }
}
