use std::net::{Ipv4Addr, Ipv6Addr};

use proptest::prelude::*;

use super::*;
use crate::name::Name;
use crate::test_vectors::unhex;

fn n(s: &str) -> Name {
    Name::parse(s).unwrap()
}

/// Decodes, checks the fields, and checks that encoding gives the same bytes.
fn exact(hex: &str) -> DnsRecord {
    let b = unhex(hex);
    let r = DnsRecord::decode(&b).unwrap();
    assert_eq!(r.encode(), b, "{r:?}");
    r
}

// The next vectors are dnsRecord values of a Samba-provisioned domain, from Samba's
// source4/selftest/provisions/multi-dc-samba-master-c596ac6/private/sam.ldb.d/
// DC=DOMAINDNSZONES,DC=SAMDOM,DC=EXAMPLE,DC=COM.ldb.dump (a tdbdump of the
// DomainDnsZones partition: the values were cut out of the packed ldb records).

/// `_ldap._tcp.samdom.example.com` SRV 0 100 389 q-0-0.samdom.example.com.
#[test]
fn samba_srv_record() {
    let r = exact(concat!(
        "2200210005f0000001000000000003840000000000000000",
        "0000006401851a0405712d302d300673616d646f6d076578616d706c6503636f6d00"
    ));
    assert_eq!(
        r,
        DnsRecord {
            body: Body::Record(RData::Srv {
                priority: 0,
                weight: 100,
                port: 389,
                target: n("q-0-0.samdom.example.com")
            }),
            version: 5,
            rank: rank::ZONE,
            flags: 0,
            serial: 1,
            ttl: 900,
            timestamp: 0,
        }
    );
}

/// `samdom.example.com` A 10.9.0.10.
#[test]
fn samba_a_record() {
    let r = exact("0400010005f00000010000000000038400000000000000000a09000a");
    assert_eq!(
        r,
        DnsRecord::new(RData::A(Ipv4Addr::new(10, 9, 0, 10)), 900, 1)
    );
    assert_eq!(r.rtype(), rtype::A);
}

/// The zone's SOA, NS, the `_msdcs` delegation (rank NS glue) and root hints.
#[test]
fn samba_other_records() {
    let soa = exact(concat!(
        "5100060005f000000100000000000e100000000000000000",
        "00000001000003840000025800015180",
        "00000e101a0405712d302d300673616d646f6d076578616d706c6503636f6d00",
        "1f040a686f73746d61737465720673616d646f6d076578616d706c6503636f6d00"
    ));
    assert_eq!(
        soa.body,
        Body::Record(RData::Soa(Soa {
            mname: n("q-0-0.samdom.example.com"),
            rname: n("hostmaster.samdom.example.com"),
            serial: 1,
            refresh: 900,
            retry: 600,
            expire: 86400,
            minimum: 3600,
        }))
    );
    assert_eq!(soa.ttl, 3600);
    let ns = exact("1c00020005f00000010000000000038400000000000000001a0405712d302d300673616d646f6d076578616d706c6503636f6d00");
    assert_eq!(
        ns.body,
        Body::Record(RData::Ns(n("q-0-0.samdom.example.com")))
    );
    let glue = exact("1c00020005820000010000000000038400000000000000001a0405712d302d300673616d646f6d076578616d706c6503636f6d00");
    assert_eq!(glue.rank, rank::NS_GLUE);
    let hint = exact("160002000508000000000000000000000000000000000000140301610c726f6f742d73657276657273036e657400");
    assert_eq!(hint.body, Body::Record(RData::Ns(n("a.root-servers.net"))));
    assert_eq!((hint.rank, hint.ttl, hint.serial), (rank::ROOT_HINT, 0, 0));
    let hint_a = exact("040001000508000000000000000000000000000000000000c6290004");
    assert_eq!(
        hint_a.body,
        Body::Record(RData::A(Ipv4Addr::new(198, 41, 0, 4)))
    );
}

/// An MX whose exchange is the root, from Samba's ndrdump test
/// (python/samba/tests/blackbox/ndrdump.py, test_ndrdump_dnsp_DnssrvRpcRecord:
/// `BQAPAAXwAAC3AAAAAAADhAAAAAAAAAAAAAoBAAA=`): the root is `01 00 00`.
#[test]
fn samba_mx_of_root() {
    let r = exact("05000f0005f00000b7000000000003840000000000000000000a010000");
    assert_eq!(
        r.body,
        Body::Record(RData::Mx {
            preference: 10,
            exchange: Name::root()
        })
    );
    assert_eq!(r.serial, 0xb7);
}

#[test]
fn tombstone_txt_aaaa_unknown() {
    let tomb = DnsRecord {
        body: Body::Tombstone {
            entombed: filetime_from_unix(1_700_000_000),
        },
        version: 5,
        rank: rank::ZONE,
        flags: 0,
        serial: 0,
        ttl: 0,
        timestamp: 0,
    };
    let b = tomb.encode();
    assert_eq!(&b[..4], &[8, 0, 0, 0]);
    assert_eq!(DnsRecord::decode(&b).unwrap(), tomb);
    assert!(tomb.is_tombstone());
    assert_eq!(tomb.rtype(), 0);

    let txt = DnsRecord::new(
        RData::Txt(vec![b"hello world".to_vec(), Vec::new()]),
        900,
        2,
    );
    let b = txt.encode();
    assert_eq!(&b[24..], b"\x0bhello world\x00");
    assert_eq!(DnsRecord::decode(&b).unwrap(), txt);

    let aaaa = DnsRecord::new(RData::Aaaa("fd00::1".parse::<Ipv6Addr>().unwrap()), 900, 2);
    assert_eq!(DnsRecord::decode(&aaaa.encode()).unwrap(), aaaa);

    // HINFO is not typed here: its bytes are kept as they are.
    let hinfo = DnsRecord::new(
        RData::Unknown {
            rtype: 13,
            data: b"\x03x86\x05Linux".to_vec(),
        },
        1,
        1,
    );
    let b = hinfo.encode();
    assert_eq!(DnsRecord::decode(&b).unwrap(), hinfo);
    assert_eq!(DnsRecord::decode(&b).unwrap().encode(), b);
}

#[test]
fn rejects_bad_records() {
    let good = unhex("0400010005f00000010000000000038400000000000000000a09000a");
    assert_eq!(DnsRecord::decode(&good[..23]), Err(ProtoError::Truncated));
    assert_eq!(DnsRecord::decode(&good[..27]), Err(ProtoError::Truncated));
    let mut long = good.clone();
    long.push(0);
    assert_eq!(DnsRecord::decode(&long), Err(ProtoError::TrailingBytes));
    let mut v4 = good.clone();
    v4[4] = 4;
    assert!(DnsRecord::decode(&v4).is_err());
    // A with 5 bytes of data.
    let mut five = good.clone();
    five[0] = 5;
    five.push(1);
    assert!(DnsRecord::decode(&five).is_err());
    // A name that runs past the data.
    let mut ns = unhex("1c00020005f00000010000000000038400000000000000001a0405712d302d300673616d646f6d076578616d706c6503636f6d00");
    ns[0] = 0x1b;
    ns.pop();
    assert!(DnsRecord::decode(&ns).is_err());
    // A tombstone of the wrong size.
    let mut tomb = vec![4, 0, 0, 0, 5, 0xf0];
    tomb.extend_from_slice(&[0; 18]);
    tomb.extend_from_slice(&[1, 2, 3, 4]);
    assert!(DnsRecord::decode(&tomb).is_err());
    // A TXT string running past the data.
    let mut txt = DnsRecord::new(RData::Txt(vec![b"abc".to_vec()]), 1, 1).encode();
    txt[24] = 9;
    assert_eq!(DnsRecord::decode(&txt), Err(ProtoError::Truncated));
}

#[test]
fn reserved_is_ignored_and_written_as_zero() {
    let mut b = unhex("0400010005f00000010000000000038400000000000000000a09000a");
    b[16..20].copy_from_slice(&[1, 2, 3, 4]);
    let r = DnsRecord::decode(&b).unwrap();
    assert_eq!(r.encode()[16..20], [0, 0, 0, 0]);
}

// dnsProperty values written by Samba's provision (same dump as above, the
// samdom.example.com dnsZone): NameLength 0, Flag 0, Version 1, a 4-byte zero Name.

#[test]
fn samba_properties() {
    let cases: [(&str, u32, &[u8]); 5] = [
        (
            "04000000000000000000000001000000010000000100000000000000",
            ZONE_TYPE,
            &[1, 0, 0, 0],
        ),
        (
            "01000000000000000000000001000000020000000200000000",
            ALLOW_UPDATE,
            &[2],
        ),
        (
            "0800000000000000000000000100000008000000000000000000000000000000",
            SECURE_TIME,
            &[0; 8],
        ),
        (
            "0400000000000000000000000100000010000000a800000000000000",
            NOREFRESH_INTERVAL,
            &[168, 0, 0, 0],
        ),
        (
            "04000000000000000000000001000000400000000000000000000000",
            AGING_STATE,
            &[0; 4],
        ),
    ];
    for (hex, id, data) in cases {
        let b = unhex(hex);
        let p = DnsProperty::decode(&b).unwrap();
        assert_eq!(
            p,
            DnsProperty {
                id,
                data: data.to_vec()
            }
        );
        assert_eq!(p.encode(), b);
    }
    let b = unhex("04000000000000000000000001000000010000000100000000000000");
    assert_eq!(
        DnsProperty::decode(&b).unwrap().u32_value(),
        Some(zone_type::PRIMARY)
    );
    assert_eq!(DnsProperty::with_u32(ZONE_TYPE, 1).encode(), b);
    assert_eq!(
        DnsProperty::with_u8(ALLOW_UPDATE, 2).encode(),
        unhex("01000000000000000000000001000000020000000200000000")
    );
    assert_eq!(DnsProperty::with_u8(ALLOW_UPDATE, 2).u8_value(), Some(2));
    assert_eq!(DnsProperty::with_u8(ALLOW_UPDATE, 2).u32_value(), None);
    assert_eq!(DnsProperty::with_u64(SECURE_TIME, 7).u64_value(), Some(7));
    assert_eq!(value_width(ALLOW_UPDATE), Some(1));
    assert_eq!(value_width(SECURE_TIME), Some(8));
    assert_eq!(value_width(NOREFRESH_INTERVAL), Some(4));
    assert_eq!(value_width(MASTER_SERVERS), None);
}

// dnsProperty values from Windows servers, in Samba's source4/torture/ndr/dnsp.c.

#[test]
fn windows_properties() {
    // dnsp_dnsProperty_ip4_array_b64: MASTER_SERVERS 172.31.99.33, 172.31.99.44.
    let b = unhex("0c0000000000000000000000010000008100000002000000ac1f6321ac1f632c00000000");
    let p = DnsProperty::decode(&b).unwrap();
    assert_eq!(p.id, MASTER_SERVERS);
    assert_eq!(
        p.ip4_array(),
        Some(vec![
            Ipv4Addr::new(172, 31, 99, 33),
            Ipv4Addr::new(172, 31, 99, 44)
        ])
    );
    assert_eq!(p.encode(), b);
    assert_eq!(
        DnsProperty::with_ip4_array(MASTER_SERVERS, &p.ip4_array().unwrap()),
        p
    );
    // dnsp_dnsProperty_deleted_by_b64: Windows 2003 left garbage in NameLength and Name.
    let b = unhex(concat!(
        "2600000001eec471000000000100000080000000770032006b0033002d003100390031002e00770032006b",
        "0033002e0062006100730065000000c471ecf3"
    ));
    let p = DnsProperty::decode(&b).unwrap();
    assert_eq!(p.id, DELETED_FROM_HOSTNAME);
    assert_eq!(p.utf16_value().as_deref(), Some("w2k3-191.w2k3.base"));
    let again = p.encode();
    assert_eq!(DnsProperty::decode(&again).unwrap(), p);
    assert_eq!(again[..4], b[..4]);
    assert_eq!(again[8..again.len() - 4], b[8..b.len() - 4]);
    // test_ndrdump_short_dnsProperty: DataLength 0 (the default), NS_SERVERS_DA.
    let b = unhex("000000000000000000000000010000009200000000000000");
    let p = DnsProperty::decode(&b).unwrap();
    assert_eq!(
        p,
        DnsProperty {
            id: AUTO_NS_SERVERS_DA,
            data: Vec::new()
        }
    );
    assert_eq!(p.encode(), b);
}

#[test]
fn rejects_bad_properties() {
    let good = unhex("04000000000000000000000001000000010000000100000000000000");
    assert_eq!(DnsProperty::decode(&good[..19]), Err(ProtoError::Truncated));
    assert_eq!(DnsProperty::decode(&good[..24]), Err(ProtoError::Truncated));
    assert!(DnsProperty::decode(&good[..25]).is_ok());
    let mut long = good.clone();
    long.push(0);
    assert_eq!(DnsProperty::decode(&long), Err(ProtoError::TrailingBytes));
    let mut v2 = good.clone();
    v2[12] = 2;
    assert!(DnsProperty::decode(&v2).is_err());
    let mut huge = good.clone();
    huge[3] = 0xff;
    assert_eq!(DnsProperty::decode(&huge), Err(ProtoError::Truncated));
    assert_eq!(
        DnsProperty {
            id: 0x11,
            data: vec![1, 0, 0, 0]
        }
        .ip4_array(),
        None
    );
    assert_eq!(
        DnsProperty {
            id: 0x11,
            data: vec![0xff; 4]
        }
        .ip4_array(),
        None
    );
    assert_eq!(
        DnsProperty {
            id: 0x80,
            data: vec![1]
        }
        .utf16_value(),
        None
    );
}

fn name() -> impl Strategy<Value = Name> {
    prop::collection::vec(prop::collection::vec(any::<u8>(), 1..20), 0..6)
        .prop_filter_map("too long", |ls| Name::from_labels(ls).ok())
}

fn body() -> impl Strategy<Value = Body> {
    prop_oneof![
        any::<u64>().prop_map(|entombed| Body::Tombstone { entombed }),
        crate::wire::tests::rdata()
            .prop_filter("not a tombstone", |d| d.rtype() != 0)
            .prop_map(Body::Record),
        name().prop_map(|n| Body::Record(RData::Ptr(n))),
        prop::collection::vec(prop::collection::vec(any::<u8>(), 0..255), 0..3)
            .prop_map(|t| Body::Record(RData::Txt(t))),
        (
            any::<u16>().prop_filter("typed", |t| ![0, 1, 2, 5, 6, 12, 15, 16, 28, 33]
                .contains(t)),
            prop::collection::vec(any::<u8>(), 0..40)
        )
            .prop_map(|(rtype, data)| Body::Record(RData::Unknown { rtype, data })),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn records_round_trip(body in body(), rank in any::<u8>(), flags in any::<u16>(),
                          serial in any::<u32>(), ttl in any::<u32>(), timestamp in any::<u32>()) {
        let r = DnsRecord { body, version: 5, rank, flags, serial, ttl, timestamp };
        let b = r.encode();
        let back = DnsRecord::decode(&b).unwrap();
        prop_assert_eq!(&back, &r);
        prop_assert_eq!(back.encode(), b);
    }

    #[test]
    fn properties_round_trip(id in any::<u32>(), data in prop::collection::vec(any::<u8>(), 0..40)) {
        let p = DnsProperty { id, data };
        let b = p.encode();
        prop_assert_eq!(DnsProperty::decode(&b).unwrap(), p);
    }

    #[test]
    fn decoders_never_panic(b in prop::collection::vec(any::<u8>(), 0..80)) {
        if let Ok(r) = DnsRecord::decode(&b) {
            prop_assert_eq!(DnsRecord::decode(&r.encode()).unwrap(), r);
        }
        if let Ok(p) = DnsProperty::decode(&b) {
            prop_assert_eq!(DnsProperty::decode(&p.encode()).unwrap(), p);
        }
    }

    #[test]
    fn timestamps(unix in 0u64..(1u64 << 40)) {
        let h = hours_since_1601(unix);
        prop_assert!(unix_from_hours(h) <= unix);
        prop_assert!(unix - unix_from_hours(h) < 3600);
    }
}
