//! decode(encode(m)) == m for every operation, by example and by property.

mod common;

use kauri_db::filter::{ExtensibleMatch, Filter, SubstringFilter};
use kauri_ldap_proto::decode::{decode_filter, decode_message};
use kauri_ldap_proto::encode::{encode_filter, encode_into, encode_message};
use kauri_ldap_proto::*;
use proptest::prelude::*;

fn text() -> impl Strategy<Value = String> {
    prop_oneof!["[a-zA-Z0-9=,. ;-]{0,24}", ".{0,8}",]
}

fn bytes() -> impl Strategy<Value = Vec<u8>> {
    prop_oneof![
        prop::collection::vec(any::<u8>(), 0..24),
        prop::collection::vec(any::<u8>(), 120..300),
    ]
}

fn opt<T: std::fmt::Debug + Clone + 'static>(
    s: impl Strategy<Value = T> + 'static,
) -> impl Strategy<Value = Option<T>> {
    prop::option::of(s)
}

fn leaf_filter() -> impl Strategy<Value = Filter> {
    prop_oneof![
        (text(), bytes()).prop_map(|(a, v)| Filter::eq(&a, v)),
        (text(), bytes()).prop_map(|(a, v)| Filter::ge(&a, v)),
        (text(), bytes()).prop_map(|(a, v)| Filter::le(&a, v)),
        (text(), bytes()).prop_map(|(a, v)| Filter::approx(&a, v)),
        text().prop_map(|a| Filter::present(&a)),
        (
            text(),
            opt(bytes()),
            prop::collection::vec(bytes(), 0..3),
            opt(bytes())
        )
            .prop_filter("a substring filter has a component", |(_, i, a, f)| {
                i.is_some() || !a.is_empty() || f.is_some()
            })
            .prop_map(|(attr, initial, any, final_)| {
                Filter::Substrings(SubstringFilter {
                    attr,
                    initial,
                    any,
                    final_,
                })
            }),
        (opt(text()), opt(text()), bytes(), any::<bool>())
            .prop_filter("rule or type", |(r, a, _, _)| r.is_some() || a.is_some())
            .prop_map(|(rule, attr, value, dn_attributes)| {
                Filter::Extensible(ExtensibleMatch {
                    rule,
                    attr,
                    value,
                    dn_attributes,
                })
            }),
    ]
}

/// Filters up to depth 5.
fn filter() -> impl Strategy<Value = Filter> {
    leaf_filter().prop_recursive(4, 48, 4, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..4).prop_map(Filter::and),
            prop::collection::vec(inner.clone(), 0..4).prop_map(Filter::or),
            inner.prop_map(Filter::not),
        ]
    })
}

fn attribute() -> impl Strategy<Value = Attribute> {
    (text(), prop::collection::vec(bytes(), 0..4))
        .prop_map(|(name, values)| Attribute { name, values })
}

fn result() -> impl Strategy<Value = LdapResult> {
    (
        any::<u32>(),
        text(),
        text(),
        prop::collection::vec(text(), 0..3),
    )
        .prop_map(|(code, matched_dn, message, referral)| LdapResult {
            code: ResultCode(code),
            matched_dn,
            message,
            referral,
        })
}

fn message_id() -> impl Strategy<Value = MessageId> {
    0..=i32::MAX
}

fn op() -> impl Strategy<Value = ProtocolOp> {
    let bind = (
        any::<i32>(),
        text(),
        prop_oneof![
            bytes().prop_map(BindAuth::Simple),
            (text(), opt(bytes())).prop_map(|(mechanism, credentials)| BindAuth::Sasl {
                mechanism,
                credentials
            }),
        ],
    )
        .prop_map(|(version, name, auth)| {
            ProtocolOp::BindRequest(BindRequest {
                version,
                name,
                auth,
            })
        });
    let search = (
        text(),
        prop_oneof![
            Just(SearchScope::Base),
            Just(SearchScope::OneLevel),
            Just(SearchScope::Subtree),
            Just(SearchScope::Children)
        ],
        prop_oneof![
            Just(DerefAliases::Never),
            Just(DerefAliases::InSearching),
            Just(DerefAliases::FindingBase),
            Just(DerefAliases::Always)
        ],
        0..=i32::MAX,
        0..=i32::MAX,
        any::<bool>(),
        filter(),
        prop::collection::vec(text(), 0..4),
    )
        .prop_map(
            |(base, scope, deref, size_limit, time_limit, types_only, filter, attributes)| {
                ProtocolOp::SearchRequest(SearchRequest {
                    base,
                    scope,
                    deref,
                    size_limit,
                    time_limit,
                    types_only,
                    filter,
                    attributes,
                })
            },
        );
    let mod_op = prop_oneof![
        Just(ModOp::Add),
        Just(ModOp::Delete),
        Just(ModOp::Replace),
        Just(ModOp::Increment)
    ];
    prop_oneof![
        bind,
        (result(), opt(bytes())).prop_map(|(result, server_sasl_creds)| {
            ProtocolOp::BindResponse(BindResponse {
                result,
                server_sasl_creds,
                sicily: None,
            })
        }),
        Just(ProtocolOp::UnbindRequest),
        search,
        (text(), prop::collection::vec(attribute(), 0..4)).prop_map(|(dn, attributes)| {
            ProtocolOp::SearchResultEntry(SearchResultEntry { dn, attributes })
        }),
        result().prop_map(ProtocolOp::SearchResultDone),
        prop::collection::vec(text(), 0..3).prop_map(ProtocolOp::SearchResultReference),
        (text(), prop::collection::vec((mod_op, attribute()), 0..4)).prop_map(|(dn, changes)| {
            ProtocolOp::ModifyRequest(ModifyRequest {
                dn,
                changes: changes
                    .into_iter()
                    .map(|(op, attribute)| Change { op, attribute })
                    .collect(),
            })
        }),
        result().prop_map(ProtocolOp::ModifyResponse),
        (text(), prop::collection::vec(attribute(), 0..4))
            .prop_map(|(dn, attributes)| ProtocolOp::AddRequest(AddRequest { dn, attributes })),
        result().prop_map(ProtocolOp::AddResponse),
        text().prop_map(ProtocolOp::DelRequest),
        result().prop_map(ProtocolOp::DelResponse),
        (text(), text(), any::<bool>(), opt(text())).prop_map(
            |(dn, new_rdn, delete_old_rdn, new_superior)| {
                ProtocolOp::ModifyDnRequest(ModifyDnRequest {
                    dn,
                    new_rdn,
                    delete_old_rdn,
                    new_superior,
                })
            }
        ),
        result().prop_map(ProtocolOp::ModifyDnResponse),
        (text(), text(), bytes()).prop_map(|(dn, attribute, value)| ProtocolOp::CompareRequest(
            CompareRequest {
                dn,
                attribute,
                value
            }
        )),
        result().prop_map(ProtocolOp::CompareResponse),
        message_id().prop_map(ProtocolOp::AbandonRequest),
        (text(), opt(bytes()))
            .prop_map(|(name, value)| ProtocolOp::ExtendedRequest(ExtendedRequest { name, value })),
        (result(), opt(text()), opt(bytes())).prop_map(|(result, name, value)| {
            ProtocolOp::ExtendedResponse(ExtendedResponse {
                result,
                name,
                value,
            })
        }),
        (opt(text()), opt(bytes())).prop_map(|(name, value)| ProtocolOp::IntermediateResponse(
            IntermediateResponse { name, value }
        )),
    ]
}

fn control() -> impl Strategy<Value = Control> {
    (text(), any::<bool>(), opt(bytes())).prop_map(|(oid, critical, value)| Control {
        oid,
        critical,
        value,
    })
}

/// Random messages: every operation, binary values, filters, controls.
pub fn message() -> impl Strategy<Value = LdapMessage> {
    (message_id(), op(), prop::collection::vec(control(), 0..3))
        .prop_map(|(id, op, controls)| LdapMessage { id, op, controls })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn messages_round_trip(m in message()) {
        let bytes = encode_message(&m);
        prop_assert_eq!(decode_message(&bytes), Ok(m.clone()));
        let mut buf = vec![1, 2, 3];
        encode_into(&m, &mut buf);
        prop_assert_eq!(&buf[3..], &bytes[..]);
    }

    #[test]
    fn filters_round_trip(f in filter()) {
        prop_assert!(f.depth() <= 5);
        prop_assert_eq!(decode_filter(&encode_filter(&f)), Ok(f.clone()));
    }
}

#[test]
fn every_op_by_example() {
    let r = LdapResult {
        code: ResultCode::NO_SUCH_OBJECT,
        matched_dn: "dc=x".into(),
        message: "no".into(),
        referral: vec!["ldap://h/dc=x".into()],
    };
    let attrs = vec![
        Attribute {
            name: "objectSid".into(),
            values: vec![vec![1, 5, 0, 0xff]],
        },
        Attribute {
            name: "empty".into(),
            values: vec![],
        },
    ];
    let ops = vec![
        ProtocolOp::BindRequest(BindRequest {
            version: 3,
            name: "cn=a".into(),
            auth: BindAuth::Simple(b"secret".to_vec()),
        }),
        ProtocolOp::BindRequest(BindRequest {
            version: 3,
            name: String::new(),
            auth: BindAuth::Sasl {
                mechanism: "PLAIN".into(),
                credentials: Some(b"\0u\0p".to_vec()),
            },
        }),
        ProtocolOp::BindResponse(BindResponse {
            result: r.clone(),
            server_sasl_creds: None,
            sicily: None,
        }),
        ProtocolOp::UnbindRequest,
        ProtocolOp::SearchRequest(SearchRequest {
            base: "dc=x".into(),
            scope: SearchScope::Children,
            deref: DerefAliases::Always,
            size_limit: 10,
            time_limit: 5,
            types_only: true,
            filter: Filter::parse(
                "(&(objectClass=user)(|(cn=a*b*c)(!(sn~=x)))(uac:1.2.840.113556.1.4.803:=2)(&)(|))",
            )
            .unwrap(),
            attributes: vec!["*".into(), "member;range=0-*".into()],
        }),
        ProtocolOp::SearchResultEntry(SearchResultEntry {
            dn: "cn=é,dc=x".into(),
            attributes: attrs.clone(),
        }),
        ProtocolOp::SearchResultDone(r.clone()),
        ProtocolOp::SearchResultReference(vec!["ldap://a/".into(), "ldap://b/".into()]),
        ProtocolOp::ModifyRequest(ModifyRequest {
            dn: "cn=a".into(),
            changes: vec![
                Change {
                    op: ModOp::Add,
                    attribute: attrs[0].clone(),
                },
                Change {
                    op: ModOp::Delete,
                    attribute: attrs[1].clone(),
                },
                Change {
                    op: ModOp::Replace,
                    attribute: attrs[0].clone(),
                },
                Change {
                    op: ModOp::Increment,
                    attribute: attrs[0].clone(),
                },
            ],
        }),
        ProtocolOp::ModifyResponse(r.clone()),
        ProtocolOp::AddRequest(AddRequest {
            dn: "cn=a".into(),
            attributes: attrs,
        }),
        ProtocolOp::AddResponse(r.clone()),
        ProtocolOp::DelRequest("cn=a".into()),
        ProtocolOp::DelResponse(r.clone()),
        ProtocolOp::ModifyDnRequest(ModifyDnRequest {
            dn: "cn=a".into(),
            new_rdn: "cn=b".into(),
            delete_old_rdn: false,
            new_superior: None,
        }),
        ProtocolOp::ModifyDnResponse(r.clone()),
        ProtocolOp::CompareRequest(CompareRequest {
            dn: "cn=a".into(),
            attribute: "cn".into(),
            value: vec![0xff],
        }),
        ProtocolOp::CompareResponse(LdapResult::new(ResultCode::COMPARE_TRUE, "")),
        ProtocolOp::AbandonRequest(i32::MAX),
        ProtocolOp::ExtendedRequest(ExtendedRequest {
            name: "1.3.6.1.4.1.4203.1.11.3".into(),
            value: None,
        }),
        ProtocolOp::ExtendedResponse(ExtendedResponse {
            result: r.clone(),
            name: Some("1.3.6.1.4.1.4203.1.11.1".into()),
            value: Some(vec![0x30, 0]),
        }),
        ProtocolOp::IntermediateResponse(IntermediateResponse {
            name: Some("1.2".into()),
            value: Some(vec![]),
        }),
        ProtocolOp::IntermediateResponse(IntermediateResponse {
            name: None,
            value: None,
        }),
    ];
    for (i, op) in ops.into_iter().enumerate() {
        let m = LdapMessage {
            id: i as i32,
            op,
            controls: vec![Control {
                oid: "1.2.3".into(),
                critical: i % 2 == 0,
                value: Some(vec![i as u8]),
            }],
        };
        assert_eq!(decode_message(&encode_message(&m)).unwrap(), m, "{m:?}");
    }
}
