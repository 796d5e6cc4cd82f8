use std::net::{Ipv4Addr, Ipv6Addr};

use proptest::prelude::*;

use super::*;
use crate::error::ProtoError;
use crate::rdata::{class, Soa};
use crate::test_vectors::*;

fn n(s: &str) -> Name {
    Name::parse(s).unwrap()
}

fn rec(name: &str, data: RData, ttl: u32) -> Record {
    Record {
        name: n(name),
        rtype: data.rtype(),
        class: class::IN,
        ttl,
        data: RecordData::Data(data),
    }
}

/// Decodes, checks that encoding gives the same message back, and returns it.
fn round_trip(bytes: &[u8]) -> Decoded {
    let d = Message::decode_with_offsets(bytes).unwrap();
    let again = Message::decode(&d.message.encode()).unwrap();
    assert_eq!(again, d.message);
    d
}

#[test]
fn dig_srv_query() {
    let d = round_trip(&unhex(DIG_SRV_QUERY));
    let m = &d.message;
    assert_eq!(d.tsig_start, None);
    assert_eq!(m.header.id, 0xbdb2);
    assert!(m.header.rd && m.header.ad && !m.header.qr);
    assert_eq!(m.header.opcode, opcode::QUERY);
    assert_eq!(
        m.questions,
        vec![Question {
            name: n("_ldap._tcp.dc._msdcs.samdom.example.com"),
            qtype: rtype::SRV,
            qclass: class::IN
        }]
    );
    let e = m.edns().unwrap();
    assert_eq!(e.udp_size, 1232);
    assert_eq!((e.version, e.ext_rcode, e.dnssec_ok), (0, 0, false));
    assert_eq!(e.options.len(), 1);
    assert_eq!(e.options[0].0, 10);
    assert_eq!(e.options[0].1.len(), 8);
    // A query has nothing to compress: encoding gives the same bytes.
    assert_eq!(m.encode(), unhex(DIG_SRV_QUERY));
}

#[test]
fn dig_query_without_edns() {
    let d = round_trip(&unhex(DIG_A_NOEDNS));
    assert_eq!(d.message.edns(), None);
    assert_eq!(d.message.questions[0].qtype, rtype::A);
    assert_eq!(d.message.encode(), unhex(DIG_A_NOEDNS));
}

#[test]
fn nsupdate_signed_update() {
    let raw = unhex(NSUPDATE_SIGNED);
    let d = round_trip(&raw);
    let m = &d.message;
    assert_eq!(m.header.opcode, opcode::UPDATE);
    assert_eq!(d.tsig_start, Some(147));
    assert_eq!(m.questions[0].name, n("samdom.example.com"));
    assert_eq!(m.questions[0].qtype, rtype::SOA);
    assert!(m.answers.is_empty());
    // update delete old… A: class ANY, TTL 0, no data.
    assert_eq!(
        m.authority[0],
        Record {
            name: n("old.samdom.example.com"),
            rtype: rtype::A,
            class: class::ANY,
            ttl: 0,
            data: RecordData::Empty
        }
    );
    assert_eq!(
        m.authority[1],
        rec(
            "host1.samdom.example.com",
            RData::A(Ipv4Addr::new(10, 0, 0, 21)),
            3600
        )
    );
    assert_eq!(
        m.authority[2],
        rec(
            "_ldap._tcp.samdom.example.com",
            RData::Srv {
                priority: 0,
                weight: 100,
                port: 389,
                target: n("host1.samdom.example.com")
            },
            900
        )
    );
    let tsig_rec = &m.additional[0];
    assert_eq!(tsig_rec.name, n("kauri-key"));
    assert_eq!((tsig_rec.class, tsig_rec.ttl), (class::ANY, 0));
    let RecordData::Tsig(t) = &tsig_rec.data else {
        panic!("not a TSIG")
    };
    assert_eq!(t.algorithm, n("hmac-sha256"));
    assert_eq!(t.time_signed, 0x6b08bb22);
    assert_eq!(t.fudge, 300);
    assert_eq!(t.mac.len(), 32);
    assert_eq!(t.original_id, 0x491e);
    assert_eq!((t.error, t.other.len()), (0, 0));
}

#[test]
fn nsupdate_prerequisites() {
    let d = round_trip(&unhex(NSUPDATE_PREREQ));
    let m = &d.message;
    assert_eq!(m.header.opcode, opcode::UPDATE);
    // prereq nxdomain: class NONE, type ANY; yxrrset: class ANY, type A.
    assert_eq!(
        (m.answers[0].class, m.answers[0].rtype),
        (class::NONE, rtype::ANY)
    );
    assert_eq!(m.answers[0].data, RecordData::Empty);
    assert_eq!(
        (m.answers[1].class, m.answers[1].rtype),
        (class::ANY, rtype::A)
    );
    assert_eq!(
        m.authority[0].data,
        RecordData::Data(RData::Txt(vec![
            b"hello world".to_vec(),
            b"second".to_vec()
        ]))
    );
    // update delete … A 10.0.0.9: class NONE with data.
    assert_eq!(m.authority[1].class, class::NONE);
    assert_eq!(
        m.authority[1].data,
        RecordData::Data(RData::A(Ipv4Addr::new(10, 0, 0, 9)))
    );
}

#[test]
fn tkey_query() {
    let d = round_trip(&unhex(TKEY_QUERY));
    let m = &d.message;
    assert_eq!(m.questions[0].qtype, rtype::TKEY);
    assert_eq!(m.questions[0].qclass, class::ANY);
    let RecordData::Tkey(t) = &m.additional[0].data else {
        panic!("not a TKEY")
    };
    assert_eq!(
        m.additional[0].name,
        n("3953903012.sig-dc1.samdom.example.com")
    );
    assert_eq!(t.algorithm, n("gss-tsig"));
    assert_eq!(t.mode, crate::tsig::TKEY_MODE_GSSAPI);
    assert_eq!((t.inception, t.expiration), (1_700_000_000, 1_700_086_400));
    assert_eq!(t.key[0], 0x60);
    assert!(t.other.is_empty());
}

#[test]
fn srv_response_with_pointers_into_srv_data() {
    let d = round_trip(&unhex(SRV_RESPONSE));
    let m = &d.message;
    assert!(m.header.qr);
    assert_eq!(m.answers.len(), 2);
    assert_eq!(
        m.authority[0].data,
        RecordData::Data(RData::Ns(n("dc1.samdom.example.com")))
    );
    assert_eq!(
        m.additional[0],
        rec(
            "dc1.samdom.example.com",
            RData::A(Ipv4Addr::new(10, 0, 0, 1)),
            900
        )
    );
    assert_eq!(
        m.additional[1].data,
        RecordData::Data(RData::Aaaa("fd00::1".parse::<Ipv6Addr>().unwrap()))
    );
    assert_eq!(m.edns().unwrap().udp_size, 8192);
}

#[test]
fn rejects_malformed_messages() {
    let good = unhex(DIG_A_NOEDNS);
    // Short header.
    assert_eq!(Message::decode(&good[..11]), Err(ProtoError::Truncated));
    // Truncated question.
    assert_eq!(
        Message::decode(&good[..good.len() - 1]),
        Err(ProtoError::Truncated)
    );
    // Trailing garbage.
    let mut long = good.clone();
    long.push(0);
    assert_eq!(Message::decode(&long), Err(ProtoError::TrailingBytes));
    // A huge count with a short buffer fails before allocating anything.
    let mut huge = good.clone();
    huge[4] = 0xff;
    huge[5] = 0xff;
    huge[6] = 0xff;
    huge[7] = 0xff;
    assert_eq!(Message::decode(&huge), Err(ProtoError::Truncated));
    // A question name pointing at itself.
    let mut looped = good[..12].to_vec();
    looped.extend_from_slice(&[0xc0, 0x0c, 0, 1, 0, 1]);
    assert_eq!(Message::decode(&looped), Err(ProtoError::BadPointer));
    // A record whose RDLENGTH runs past the end.
    let mut m = Message::default();
    m.answers.push(rec("a", RData::A(Ipv4Addr::LOCALHOST), 1));
    let mut b = m.encode();
    let len = b.len();
    b[len - 5] = 9;
    assert_eq!(Message::decode(&b), Err(ProtoError::Truncated));
    // A record whose data is longer than its type allows.
    let mut b = m.encode();
    b[len - 5] = 3;
    b.pop();
    assert!(matches!(
        Message::decode(&b),
        Err(ProtoError::BadRdata { rtype: 1, .. })
    ));
    // Reserved label types.
    let mut b = good.clone();
    b[12] = 0x43;
    assert!(matches!(Message::decode(&b), Err(ProtoError::BadLabel(_))));
}

fn opt_record(udp: u16) -> Record {
    Record {
        name: Name::root(),
        rtype: rtype::OPT,
        class: udp,
        ttl: 0,
        data: RecordData::Opt(vec![]),
    }
}

fn tsig_record() -> Record {
    Record {
        name: n("key"),
        rtype: rtype::TSIG,
        class: class::ANY,
        ttl: 0,
        data: RecordData::Tsig(crate::tsig::Tsig {
            algorithm: n("gss-tsig"),
            time_signed: 1,
            fudge: 300,
            mac: vec![1, 2, 3],
            original_id: 7,
            error: 0,
            other: vec![],
        }),
    }
}

#[test]
fn opt_and_tsig_placement() {
    let mut m = Message::default();
    m.answers.push(opt_record(512));
    assert_eq!(Message::decode(&m.encode()), Err(ProtoError::MisplacedOpt));
    let m = Message {
        additional: vec![opt_record(512), opt_record(1232)],
        ..Message::default()
    };
    assert_eq!(Message::decode(&m.encode()), Err(ProtoError::DuplicateOpt));
    let mut m = Message::default();
    let mut not_root = opt_record(512);
    not_root.name = n("x");
    m.additional.push(not_root);
    assert!(matches!(
        Message::decode(&m.encode()),
        Err(ProtoError::BadRdata { rtype: 41, .. })
    ));
    let m = Message {
        additional: vec![tsig_record(), opt_record(512)],
        ..Message::default()
    };
    assert_eq!(Message::decode(&m.encode()), Err(ProtoError::MisplacedTsig));
    let mut m = Message::default();
    m.answers.push(tsig_record());
    assert_eq!(Message::decode(&m.encode()), Err(ProtoError::MisplacedTsig));
    let m = Message {
        additional: vec![opt_record(512), tsig_record()],
        ..Message::default()
    };
    let d = Message::decode_with_offsets(&m.encode()).unwrap();
    assert_eq!(d.message, m);
    assert_eq!(d.tsig_start, Some(12 + 11));
    // A TSIG without data.
    let mut m = Message::default();
    let mut empty = tsig_record();
    empty.data = RecordData::Empty;
    m.additional.push(empty);
    assert!(Message::decode(&m.encode()).is_err());
}

#[test]
fn edns_helpers() {
    let mut m = Message::default();
    m.additional.push(tsig_record());
    let e = Edns {
        udp_size: 4096,
        ext_rcode: 1,
        version: 0,
        dnssec_ok: true,
        options: vec![(10, vec![1; 8])],
    };
    m.set_edns(Some(e.clone()));
    assert_eq!(m.additional[0].rtype, rtype::OPT);
    assert_eq!(m.additional[1].rtype, rtype::TSIG);
    assert_eq!(m.edns(), Some(e.clone()));
    assert_eq!(Message::decode(&m.encode()).unwrap().edns(), Some(e));
    m.set_rcode(16);
    assert_eq!(m.header.rcode, 0);
    assert_eq!(m.rcode(), 16);
    m.set_rcode(u16::from(rcode::NXDOMAIN));
    assert_eq!(m.rcode(), 3);
    m.set_edns(Some(Edns {
        udp_size: 512,
        ..Edns::default()
    }));
    assert_eq!(m.additional.len(), 2);
    assert_eq!(m.edns().unwrap().udp_size, 512);
    m.set_edns(None);
    assert_eq!(m.edns(), None);
    assert_eq!(m.additional.len(), 1);
    let mut plain = Message::default();
    plain.set_edns(Some(Edns::default()));
    assert_eq!(plain.additional.len(), 1);
}

#[test]
fn response_and_peek() {
    let req = Message::decode(&unhex(DIG_SRV_QUERY)).unwrap();
    let resp = Message::response_to(&req);
    assert_eq!(resp.header.id, req.header.id);
    assert!(resp.header.qr && resp.header.rd && !resp.header.ad);
    assert_eq!(resp.questions, req.questions);
    assert!(resp.additional.is_empty());
    let mut junk = unhex(DIG_SRV_QUERY)[..14].to_vec();
    junk[2] |= 0x28; // opcode 5
    let h = peek_header(&junk).unwrap();
    assert_eq!(h.id, 0xbdb2);
    assert_eq!(h.opcode, opcode::UPDATE);
    assert!(Message::decode(&junk).is_err());
    assert_eq!(peek_header(&junk[..11]), None);
    assert!(peek_header(&junk[..12]).is_some());
}

#[test]
fn header_flags_round_trip() {
    for bits in 0..=0xFFFFu16 {
        let h = Header::from_parts(1, bits);
        // Z (bit 6) is not kept.
        assert_eq!(h.flags(), bits & !0x0040);
    }
}

fn repetitive_answer() -> Message {
    let mut m = Message::default();
    m.header.qr = true;
    m.questions.push(Question {
        name: n("_ldap._tcp.samdom.example.com"),
        qtype: rtype::SRV,
        qclass: class::IN,
    });
    for i in 0..20 {
        m.answers.push(rec(
            "_ldap._tcp.samdom.example.com",
            RData::Srv {
                priority: 0,
                weight: 100,
                port: 389,
                target: n(&format!("dc{i}.samdom.example.com")),
            },
            900,
        ));
    }
    m.authority.push(rec(
        "samdom.example.com",
        RData::Ns(n("dc1.samdom.example.com")),
        3600,
    ));
    m.authority.push(rec(
        "samdom.example.com",
        RData::Soa(Soa {
            mname: n("dc1.samdom.example.com"),
            rname: n("hostmaster.samdom.example.com"),
            serial: 5,
            refresh: 900,
            retry: 600,
            expire: 86400,
            minimum: 3600,
        }),
        3600,
    ));
    m.authority.push(rec(
        "samdom.example.com",
        RData::Mx {
            preference: 1,
            exchange: n("MAIL.samdom.example.com"),
        },
        1,
    ));
    m.authority.push(rec(
        "x.samdom.example.com",
        RData::Cname(n("y.samdom.example.com")),
        1,
    ));
    for i in 0..20 {
        m.additional.push(rec(
            &format!("dc{i}.samdom.example.com"),
            RData::A(Ipv4Addr::new(10, 0, 0, i)),
            900,
        ));
    }
    m.set_edns(Some(Edns {
        udp_size: 1232,
        ..Edns::default()
    }));
    m
}

#[test]
fn compression_shrinks_and_round_trips() {
    let m = repetitive_answer();
    let compressed = m.encode();
    let plain = m.encode_with(false);
    assert!(
        compressed.len() * 4 < plain.len() * 3,
        "{} vs {}",
        compressed.len(),
        plain.len()
    );
    assert_eq!(Message::decode(&compressed).unwrap(), m);
    assert_eq!(Message::decode(&plain).unwrap(), m);
    // Case survives compression: the decoded message encodes to the same bytes.
    assert_eq!(Message::decode(&compressed).unwrap().encode(), compressed);
    // SRV targets are never compressed: each target's labels appear in full.
    let dc7 = b"\x03dc7\x06samdom\x07example\x03com\x00";
    assert!(compressed.windows(dc7.len()).any(|w| w == dc7));
}

#[test]
fn encode_limited_truncates() {
    let m = repetitive_answer();
    let full = m.encode();
    assert!(full.len() > 512);
    assert_eq!(m.encode_limited(full.len()), full);
    // Dropping the additional records (but not OPT) is enough: no TC.
    let no_glue = {
        let mut x = m.clone();
        x.additional.retain(|r| r.rtype == rtype::OPT);
        x.encode()
    };
    let out = m.encode_limited(no_glue.len());
    assert_eq!(out, no_glue);
    let d = Message::decode(&out).unwrap();
    assert!(!d.header.tc);
    assert!(d.edns().is_some());
    // Tighter: TC, OPT kept, and the one SRV RRset does not fit whole, so it goes.
    let out = m.encode_limited(512);
    assert!(out.len() <= 512);
    let d = Message::decode(&out).unwrap();
    assert!(d.header.tc);
    assert!(d.authority.is_empty());
    assert!(d.answers.is_empty());
    assert_eq!(d.questions, m.questions);
    assert_eq!(d.additional.len(), 1);
    assert_eq!(d.edns().unwrap().udp_size, 1232);
    // Many RRsets: as many whole ones as fit stay, in order.
    let mut many = Message::default();
    for i in 0..40u8 {
        many.answers.push(rec(
            &format!("h{i}.example"),
            RData::A(Ipv4Addr::new(10, 0, 0, i)),
            1,
        ));
        many.answers.push(rec(
            &format!("h{i}.example"),
            RData::A(Ipv4Addr::new(10, 0, 1, i)),
            1,
        ));
    }
    let out = many.encode_limited(512);
    assert!(out.len() <= 512);
    let d = Message::decode(&out).unwrap();
    assert!(d.header.tc);
    assert!(
        d.answers.len() > 10 && d.answers.len().is_multiple_of(2),
        "{}",
        d.answers.len()
    );
    assert_eq!(d.answers[..], many.answers[..d.answers.len()]);
    // With one RRset of several records, a partial RRset is not kept.
    let mut one_set = Message::default();
    for i in 0..30 {
        one_set
            .answers
            .push(rec("a.example", RData::A(Ipv4Addr::new(10, 0, 0, i)), 1));
    }
    let out = one_set.encode_limited(100);
    let d = Message::decode(&out).unwrap();
    assert!(d.header.tc && d.answers.is_empty());
    // Tiny limits still hold.
    for max in [0, 5, 12, 20, 40, 60, 100] {
        let out = m.encode_limited(max);
        assert!(out.len() <= max, "{max}: {}", out.len());
        if max >= 12 {
            assert!(Message::decode(&out).unwrap().header.tc);
        }
    }
    // A TSIG record stays last when additional records are dropped.
    let mut signed = m.clone();
    signed.additional.push(tsig_record());
    let out = signed.encode_limited(512);
    let d = Message::decode_with_offsets(&out).unwrap();
    assert!(d.tsig_start.is_some());
}

#[test]
fn oversized_data_is_left_out() {
    let mut m = Message::default();
    m.answers.push(Record {
        name: n("big"),
        rtype: 99,
        class: class::IN,
        ttl: 0,
        data: RecordData::Data(RData::Unknown {
            rtype: 99,
            data: vec![0; 70_000],
        }),
    });
    m.answers.push(rec("big", RData::A(Ipv4Addr::LOCALHOST), 1));
    let d = Message::decode(&m.encode()).unwrap();
    assert_eq!(d.answers.len(), 1);
    assert_eq!(d.answers[0].name, n("big"));
}

// ---------------------------------------------------------------- proptest round trips

fn label() -> impl Strategy<Value = Vec<u8>> {
    prop_oneof![
        3 => "[a-zA-Z0-9_-]{1,10}".prop_map(String::into_bytes),
        1 => prop::collection::vec(any::<u8>(), 1..8),
    ]
}

fn name() -> impl Strategy<Value = Name> {
    // Few distinct suffixes so compression has work to do.
    let suffix = prop_oneof![
        Just(vec![
            b"samdom".to_vec(),
            b"example".to_vec(),
            b"com".to_vec()
        ]),
        Just(vec![
            b"SAMDOM".to_vec(),
            b"example".to_vec(),
            b"com".to_vec()
        ]),
        Just(vec![b"org".to_vec()]),
        Just(vec![]),
    ];
    (prop::collection::vec(label(), 0..4), suffix).prop_map(|(mut front, tail)| {
        front.extend(tail);
        Name::from_labels(front).unwrap()
    })
}

const TYPED: [u16; 12] = [1, 2, 5, 6, 12, 15, 16, 28, 33, 41, 249, 250];

pub(crate) fn rdata() -> impl Strategy<Value = RData> {
    prop_oneof![
        any::<[u8; 4]>().prop_map(|a| RData::A(Ipv4Addr::from(a))),
        any::<[u8; 16]>().prop_map(|a| RData::Aaaa(Ipv6Addr::from(a))),
        name().prop_map(RData::Ns),
        name().prop_map(RData::Cname),
        name().prop_map(RData::Ptr),
        (name(), name(), any::<[u32; 5]>()).prop_map(|(mname, rname, v)| RData::Soa(Soa {
            mname,
            rname,
            serial: v[0],
            refresh: v[1],
            retry: v[2],
            expire: v[3],
            minimum: v[4],
        })),
        (any::<u16>(), name()).prop_map(|(preference, exchange)| RData::Mx {
            preference,
            exchange
        }),
        prop::collection::vec(prop::collection::vec(any::<u8>(), 0..40), 1..4).prop_map(RData::Txt),
        (any::<(u16, u16, u16)>(), name()).prop_map(|((priority, weight, port), target)| {
            RData::Srv {
                priority,
                weight,
                port,
                target,
            }
        }),
        (
            any::<u16>().prop_filter("typed", |t| !TYPED.contains(t)),
            prop::collection::vec(any::<u8>(), 1..30)
        )
            .prop_map(|(rtype, data)| RData::Unknown { rtype, data }),
    ]
}

fn plain_record() -> impl Strategy<Value = Record> {
    let data = prop_oneof![
        6 => rdata().prop_map(|d| (d.rtype(), RecordData::Data(d))),
        1 => any::<u16>().prop_filter("typed", |t| ![41, 249, 250].contains(t)).prop_map(|t| (t, RecordData::Empty)),
        1 => (name(), any::<(u32, u32, u16, u16)>(), prop::collection::vec(any::<u8>(), 0..20), prop::collection::vec(any::<u8>(), 0..4))
            .prop_map(|(algorithm, (inception, expiration, mode, error), key, other)| {
                (rtype::TKEY, RecordData::Tkey(crate::tsig::Tkey { algorithm, inception, expiration, mode, error, key, other }))
            }),
    ];
    (name(), data, any::<u16>(), any::<u32>()).prop_map(|(name, (rtype, data), class, ttl)| {
        Record {
            name,
            rtype,
            class,
            ttl,
            data,
        }
    })
}

fn opt() -> impl Strategy<Value = Record> {
    (
        any::<u16>(),
        any::<u32>(),
        prop::collection::vec(
            (any::<u16>(), prop::collection::vec(any::<u8>(), 0..10)),
            0..3,
        ),
    )
        .prop_map(|(class, ttl, o)| Record {
            name: Name::root(),
            rtype: rtype::OPT,
            class,
            ttl,
            data: RecordData::Opt(o),
        })
}

fn tsig() -> impl Strategy<Value = Record> {
    (
        name(),
        name(),
        0u64..(1 << 48),
        any::<(u16, u16, u16)>(),
        prop::collection::vec(any::<u8>(), 0..40),
        prop::collection::vec(any::<u8>(), 0..8),
        any::<u32>(),
    )
        .prop_map(
            |(key, algorithm, time_signed, (fudge, original_id, error), mac, other, ttl)| Record {
                name: key,
                rtype: rtype::TSIG,
                class: class::ANY,
                ttl,
                data: RecordData::Tsig(crate::tsig::Tsig {
                    algorithm,
                    time_signed,
                    fudge,
                    mac,
                    original_id,
                    error,
                    other,
                }),
            },
        )
}

fn message() -> impl Strategy<Value = Message> {
    let header = (any::<u16>(), any::<u16>()).prop_map(|(id, flags)| Header::from_parts(id, flags));
    let question =
        (name(), any::<u16>(), any::<u16>()).prop_map(|(name, qtype, qclass)| Question {
            name,
            qtype,
            qclass,
        });
    (
        header,
        prop::collection::vec(question, 0..3),
        prop::collection::vec(plain_record(), 0..6),
        prop::collection::vec(plain_record(), 0..4),
        prop::collection::vec(plain_record(), 0..4),
        prop::option::of(opt()),
        prop::option::of(tsig()),
    )
        .prop_map(
            |(header, questions, answers, authority, mut additional, opt, tsig)| {
                if let Some(o) = opt {
                    additional.insert(additional.len() / 2, o);
                }
                if let Some(t) = tsig {
                    additional.push(t);
                }
                Message {
                    header,
                    questions,
                    answers,
                    authority,
                    additional,
                }
            },
        )
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn messages_round_trip(m in message()) {
        let bytes = m.encode();
        let d = Message::decode_with_offsets(&bytes).unwrap();
        prop_assert_eq!(&d.message, &m);
        prop_assert_eq!(d.tsig_start.is_some(), m.additional.last().is_some_and(|r| r.rtype == rtype::TSIG));
        // Byte for byte, case included.
        prop_assert_eq!(d.message.encode(), bytes.clone());
        prop_assert!(bytes.len() <= m.encode_with(false).len());
        prop_assert_eq!(Message::decode(&m.encode_with(false)).unwrap(), m.clone());
        for max in [0usize, 12, 64, 512] {
            let out = m.encode_limited(max);
            prop_assert!(out.len() <= max);
            if !out.is_empty() {
                prop_assert!(Message::decode(&out).is_ok());
            }
        }
    }

    #[test]
    fn decode_never_panics(bytes in prop::collection::vec(any::<u8>(), 0..200)) {
        if let Ok(d) = Message::decode_with_offsets(&bytes) {
            prop_assert_eq!(Message::decode(&d.message.encode()).unwrap(), d.message);
        }
    }

    #[test]
    fn mutated_real_packets_never_panic(
        which in 0usize..6,
        edits in prop::collection::vec((any::<prop::sample::Index>(), any::<u8>()), 1..4),
    ) {
        let mut bytes = unhex([DIG_SRV_QUERY, DIG_A_NOEDNS, NSUPDATE_SIGNED, NSUPDATE_PREREQ, TKEY_QUERY, SRV_RESPONSE][which]);
        for (i, b) in edits {
            let at = i.index(bytes.len());
            bytes[at] = b;
        }
        if let Ok(d) = Message::decode_with_offsets(&bytes) {
            prop_assert_eq!(Message::decode(&d.message.encode()).unwrap(), d.message);
        }
    }
}
