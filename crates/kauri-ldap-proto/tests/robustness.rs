//! Hostile input: random bytes, mutated messages and very deep filters never panic or
//! overflow the stack.

mod common;

use bytes::BytesMut;
use common::{nested, search_with_filter};
use kauri_db::filter::{Filter, MAX_FILTER_DEPTH};
use kauri_ldap_proto::codec::LdapCodec;
use kauri_ldap_proto::decode::{decode_filter, decode_message};
use kauri_ldap_proto::encode::{encode_filter, encode_message};
use kauri_ldap_proto::*;
use proptest::prelude::*;
use tokio_util::codec::Decoder;

/// Feeds `data` to a codec in chunks; stops at the first framing error.
fn drive_codec(data: &[u8], chunk: usize) {
    let mut codec = LdapCodec::new(1 << 16);
    let mut buf = BytesMut::new();
    for piece in data.chunks(chunk.max(1)) {
        buf.extend_from_slice(piece);
        loop {
            match codec.decode(&mut buf) {
                Ok(Some(_)) => continue,
                Ok(None) => break,
                Err(_) => return,
            }
        }
    }
}

fn sample_messages() -> Vec<Vec<u8>> {
    let search = LdapMessage {
        id: 7,
        op: ProtocolOp::SearchRequest(SearchRequest {
            base: "dc=example,dc=com".into(),
            scope: SearchScope::Subtree,
            deref: DerefAliases::Never,
            size_limit: 0,
            time_limit: 0,
            types_only: false,
            filter: Filter::parse(
                r"(&(objectSid=\01\05\ff)(|(cn=a*b*c)(!(sn~=x)))(x:dn:1.2:=y)(&)(|)(n>=1)(n<=2)(cn=*))",
            )
            .unwrap(),
            attributes: vec!["cn".into()],
        }),
        controls: vec![Control { oid: "1.2.840.113556.1.4.319".into(), critical: true, value: Some(vec![0x30, 5, 2, 1, 5, 4, 0]) }],
    };
    let entry = LdapMessage {
        id: 8,
        op: ProtocolOp::SearchResultEntry(SearchResultEntry {
            dn: "cn=x".into(),
            attributes: vec![Attribute {
                name: "v".into(),
                values: vec![vec![1; 200], vec![2]],
            }],
        }),
        controls: vec![],
    };
    let bind = LdapMessage {
        id: 1,
        op: ProtocolOp::BindRequest(BindRequest {
            version: 3,
            name: "cn=a".into(),
            auth: BindAuth::Sasl {
                mechanism: "X".into(),
                credentials: Some(vec![9]),
            },
        }),
        controls: vec![],
    };
    let modify = LdapMessage {
        id: 2,
        op: ProtocolOp::ModifyDnRequest(ModifyDnRequest {
            dn: "cn=a".into(),
            new_rdn: "cn=b".into(),
            delete_old_rdn: true,
            new_superior: Some("dc=y".into()),
        }),
        controls: vec![],
    };
    [search, entry, bind, modify]
        .iter()
        .map(encode_message)
        .collect()
}

#[derive(Debug, Clone)]
enum Mutation {
    Set(usize, u8),
    Flip(usize, u8),
    Insert(usize, u8),
    Remove(usize),
    Truncate(usize),
}

fn mutation() -> impl Strategy<Value = Mutation> {
    prop_oneof![
        (any::<usize>(), any::<u8>()).prop_map(|(i, b)| Mutation::Set(i, b)),
        (any::<usize>(), 0u8..8).prop_map(|(i, b)| Mutation::Flip(i, b)),
        (any::<usize>(), any::<u8>()).prop_map(|(i, b)| Mutation::Insert(i, b)),
        any::<usize>().prop_map(Mutation::Remove),
        any::<usize>().prop_map(Mutation::Truncate),
    ]
}

fn apply(data: &mut Vec<u8>, m: &Mutation) {
    if data.is_empty() {
        return;
    }
    let n = data.len();
    match *m {
        Mutation::Set(i, b) => data[i % n] = b,
        Mutation::Flip(i, bit) => data[i % n] ^= 1 << bit,
        Mutation::Insert(i, b) => data.insert(i % (n + 1), b),
        Mutation::Remove(i) => {
            data.remove(i % n);
        }
        Mutation::Truncate(i) => data.truncate(i % n),
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2000))]

    #[test]
    fn random_bytes_never_panic(data in prop::collection::vec(any::<u8>(), 0..256), chunk in 1usize..40) {
        let _ = decode_message(&data);
        let _ = decode_filter(&data);
        drive_codec(&data, chunk);
        let mut framed = vec![0x30];
        common::push_len(&mut framed, data.len());
        framed.extend_from_slice(&data);
        let _ = decode_message(&framed);
        drive_codec(&framed, chunk);
    }

    #[test]
    fn mutations_never_panic(
        which in 0usize..4,
        muts in prop::collection::vec(mutation(), 1..6),
        chunk in 1usize..64,
    ) {
        let mut data = sample_messages().swap_remove(which);
        for m in &muts {
            apply(&mut data, m);
        }
        if let Ok(msg) = decode_message(&data) {
            // Whatever decodes must re-encode to something that decodes the same.
            prop_assert_eq!(decode_message(&encode_message(&msg)), Ok(msg));
        }
        let mut stream = data.clone();
        stream.extend_from_slice(&data);
        drive_codec(&stream, chunk);
    }
}

#[test]
fn depth_limit_is_exact() {
    // 99 nots around an item: depth 100, accepted.
    let ok = nested(0xa2, MAX_FILTER_DEPTH - 1);
    let f = decode_filter(&ok).unwrap();
    assert_eq!(f.depth(), MAX_FILTER_DEPTH);
    assert_eq!(encode_filter(&f), ok);
    // 100 nots: depth 101, refused.
    assert!(decode_filter(&nested(0xa2, MAX_FILTER_DEPTH)).is_err());
    // Nested empty ands: 100 levels accepted, 101 refused.
    assert_eq!(
        decode_filter(&nested(0xa0, MAX_FILTER_DEPTH))
            .unwrap()
            .depth(),
        MAX_FILTER_DEPTH
    );
    assert!(decode_filter(&nested(0xa0, MAX_FILTER_DEPTH + 1)).is_err());
    assert!(decode_filter(&nested(0xa1, MAX_FILTER_DEPTH + 1)).is_err());
}

#[test]
fn very_deep_filters_are_refused_without_overflow() {
    let deep = nested(0xa2, 100_000);
    let msg = search_with_filter(42, &deep);
    let e = decode_message(&msg).unwrap_err();
    assert_eq!(
        (e.id, e.op, e.code),
        (Some(42), Some(3), ResultCode::PROTOCOL_ERROR)
    );
    assert!(e.reason.contains("deeper"), "{e}");

    let mut codec = LdapCodec::default();
    let mut buf = BytesMut::from(&msg[..]);
    let item = codec.decode(&mut buf).unwrap().unwrap();
    assert_eq!(item.unwrap_err().id, Some(42));
    assert!(buf.is_empty());

    let ands = nested(0xa0, 100_000);
    assert!(decode_filter(&ands).is_err());
}

#[test]
fn very_deep_filter_values_encode_iteratively() {
    let mut f = Filter::present("a");
    for _ in 0..100_000 {
        f = Filter::not(f);
    }
    assert_eq!(encode_filter(&f), nested(0xa2, 100_000));
    while let Filter::Not(inner) = f {
        f = *inner;
    }
}
