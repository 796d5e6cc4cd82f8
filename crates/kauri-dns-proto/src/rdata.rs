//! Record types and classes, and the data of the record types a domain controller serves
//! (A, AAAA, NS, CNAME, PTR, SOA, MX, TXT, SRV), in DNS wire form and zone-file text.
//! Other types are kept as raw bytes.

use std::fmt;
use std::net::{Ipv4Addr, Ipv6Addr};

use crate::error::{ProtoError, Result};
use crate::name::Name;
use crate::wire::reader::Reader;
use crate::wire::writer::Writer;

/// Record type numbers (IANA "Resource Record (RR) TYPEs").
pub mod rtype {
    /// DNS_TYPE_ZERO: MS-DNSP's tombstone of a deleted name; never on the wire.
    pub const ZERO: u16 = 0;
    /// IPv4 address.
    pub const A: u16 = 1;
    /// Name server of a zone or delegation.
    pub const NS: u16 = 2;
    /// Alias.
    pub const CNAME: u16 = 5;
    /// Start of authority.
    pub const SOA: u16 = 6;
    /// Reverse-lookup pointer.
    pub const PTR: u16 = 12;
    /// Host information (RFC 8482 uses it to answer ANY minimally).
    pub const HINFO: u16 = 13;
    /// Mail exchanger.
    pub const MX: u16 = 15;
    /// Text strings.
    pub const TXT: u16 = 16;
    /// IPv6 address.
    pub const AAAA: u16 = 28;
    /// Service location (RFC 2782), how AD clients find DCs.
    pub const SRV: u16 = 33;
    /// Delegation name (RFC 6672).
    pub const DNAME: u16 = 39;
    /// EDNS pseudo-record (RFC 6891).
    pub const OPT: u16 = 41;
    /// Delegation signer (RFC 4034): answered from the parent side of a cut.
    pub const DS: u16 = 43;
    /// DNSSEC signature.
    pub const RRSIG: u16 = 46;
    /// DNSSEC authenticated denial.
    pub const NSEC: u16 = 47;
    /// DNSSEC zone key.
    pub const DNSKEY: u16 = 48;
    /// Transaction key establishment (RFC 2930), GSS-TSIG's negotiation.
    pub const TKEY: u16 = 249;
    /// Transaction signature (RFC 8945).
    pub const TSIG: u16 = 250;
    /// Incremental zone transfer.
    pub const IXFR: u16 = 251;
    /// Full zone transfer.
    pub const AXFR: u16 = 252;
    /// Any type (query only).
    pub const ANY: u16 = 255;
}

/// Record class numbers.
pub mod class {
    /// The Internet class: all real data.
    pub const IN: u16 = 1;
    /// RFC 2136: "delete this RR" / "RRset does not exist".
    pub const NONE: u16 = 254;
    /// RFC 2136: "delete the RRset / name" / "exists"; also TSIG's and TKEY's class.
    pub const ANY: u16 = 255;
}

const TYPE_NAMES: &[(u16, &str)] = &[
    (rtype::A, "A"),
    (rtype::NS, "NS"),
    (rtype::CNAME, "CNAME"),
    (rtype::SOA, "SOA"),
    (rtype::PTR, "PTR"),
    (rtype::HINFO, "HINFO"),
    (rtype::MX, "MX"),
    (rtype::TXT, "TXT"),
    (rtype::AAAA, "AAAA"),
    (rtype::SRV, "SRV"),
    (rtype::DNAME, "DNAME"),
    (rtype::OPT, "OPT"),
    (rtype::DS, "DS"),
    (rtype::RRSIG, "RRSIG"),
    (rtype::NSEC, "NSEC"),
    (rtype::DNSKEY, "DNSKEY"),
    (rtype::TKEY, "TKEY"),
    (rtype::TSIG, "TSIG"),
    (rtype::IXFR, "IXFR"),
    (rtype::AXFR, "AXFR"),
    (rtype::ANY, "ANY"),
];

/// The mnemonic of a type for logs and text (`SRV`), or RFC 3597's `TYPE123`.
pub fn type_name(t: u16) -> String {
    TYPE_NAMES
        .iter()
        .find(|(v, _)| *v == t)
        .map(|(_, n)| (*n).to_string())
        .unwrap_or_else(|| format!("TYPE{t}"))
}

/// The type a mnemonic names, case ignored; also accepts RFC 3597's `TYPEnnn`.
pub fn type_from_name(name: &str) -> Option<u16> {
    if let Some((v, _)) = TYPE_NAMES
        .iter()
        .find(|(_, n)| n.eq_ignore_ascii_case(name))
    {
        return Some(*v);
    }
    let digits = name
        .get(..4)
        .filter(|p| p.eq_ignore_ascii_case("TYPE"))
        .and(name.get(4..))?;
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    digits.parse().ok()
}

/// An SOA record's data (RFC 1035 §3.3.13): the zone's primary server, its contact, and
/// the timers secondaries and negative caches use.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Soa {
    /// Primary name server.
    pub mname: Name,
    /// Responsible person's mailbox, first `.` standing for `@`.
    pub rname: Name,
    /// Zone serial.
    pub serial: u32,
    /// Secondary refresh interval, seconds.
    pub refresh: u32,
    /// Secondary retry interval, seconds.
    pub retry: u32,
    /// When secondaries stop answering without a refresh, seconds.
    pub expire: u32,
    /// Negative-caching TTL (RFC 2308), seconds.
    pub minimum: u32,
}

/// The data of one record, typed for what a DC serves and raw for everything else, shared
/// by the wire format and the directory's `dnsRecord` blobs.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum RData {
    /// IPv4 address.
    A(Ipv4Addr),
    /// IPv6 address.
    Aaaa(Ipv6Addr),
    /// Name server.
    Ns(Name),
    /// Canonical name of an alias.
    Cname(Name),
    /// Reverse pointer.
    Ptr(Name),
    /// Start of authority.
    Soa(Soa),
    /// Mail exchanger.
    Mx {
        /// Lower is preferred.
        preference: u16,
        /// The mail server.
        exchange: Name,
    },
    /// Character strings, each at most 255 bytes (longer ones are cut into 255-byte
    /// pieces when written).
    Txt(Vec<Vec<u8>>),
    /// Service location (RFC 2782).
    Srv {
        /// Lower is tried first.
        priority: u16,
        /// Share among equal priorities.
        weight: u16,
        /// Service port.
        port: u16,
        /// Host offering the service.
        target: Name,
    },
    /// Any other type, its data as raw bytes (names inside it are never compressed).
    /// Meant for types without a variant above; an `Unknown` of a typed type is written
    /// as is and reads back typed.
    Unknown {
        /// The record type.
        rtype: u16,
        /// The record data.
        data: Vec<u8>,
    },
}

impl RData {
    /// The record type of this data.
    pub fn rtype(&self) -> u16 {
        match self {
            RData::A(_) => rtype::A,
            RData::Aaaa(_) => rtype::AAAA,
            RData::Ns(_) => rtype::NS,
            RData::Cname(_) => rtype::CNAME,
            RData::Ptr(_) => rtype::PTR,
            RData::Soa(_) => rtype::SOA,
            RData::Mx { .. } => rtype::MX,
            RData::Txt(_) => rtype::TXT,
            RData::Srv { .. } => rtype::SRV,
            RData::Unknown { rtype, .. } => *rtype,
        }
    }

    /// Reads the `len` bytes of record data at `start` in `msg` as type `rtype`. Names in
    /// NS, CNAME, PTR, SOA, MX and SRV data may be compression pointers into the rest of
    /// `msg` (RFC 3597 §4 asks receivers to accept them); the data must fill `len`
    /// exactly.
    pub fn decode_wire(rtype: u16, msg: &[u8], start: usize, len: usize) -> Result<RData> {
        let mut r = Reader::sub(msg, start, len)?;
        let bad = |reason| ProtoError::BadRdata { rtype, reason };
        let data = match rtype {
            rtype::A => {
                let b = r.take(4).map_err(|_| bad("A data must be 4 bytes"))?;
                let mut a = [0u8; 4];
                a.copy_from_slice(b);
                RData::A(Ipv4Addr::from(a))
            }
            rtype::AAAA => {
                let b = r.take(16).map_err(|_| bad("AAAA data must be 16 bytes"))?;
                let mut a = [0u8; 16];
                a.copy_from_slice(b);
                RData::Aaaa(Ipv6Addr::from(a))
            }
            rtype::NS => RData::Ns(r.name()?),
            rtype::CNAME => RData::Cname(r.name()?),
            rtype::PTR => RData::Ptr(r.name()?),
            rtype::SOA => RData::Soa(Soa {
                mname: r.name()?,
                rname: r.name()?,
                serial: r.u32()?,
                refresh: r.u32()?,
                retry: r.u32()?,
                expire: r.u32()?,
                minimum: r.u32()?,
            }),
            rtype::MX => RData::Mx {
                preference: r.u16()?,
                exchange: r.name()?,
            },
            rtype::TXT => {
                let mut strings = Vec::new();
                while !r.at_end() {
                    let n = r.u8()?;
                    strings.push(r.take(usize::from(n))?.to_vec());
                }
                RData::Txt(strings)
            }
            rtype::SRV => RData::Srv {
                priority: r.u16()?,
                weight: r.u16()?,
                port: r.u16()?,
                target: r.name()?,
            },
            _ => RData::Unknown {
                rtype,
                data: r.rest().to_vec(),
            },
        };
        if !r.at_end() {
            return Err(bad("data longer than its content"));
        }
        Ok(data)
    }

    /// The uncompressed wire form of the data (names keep their case).
    pub fn to_wire(&self) -> Vec<u8> {
        let mut w = Writer::new(false);
        self.write_wire(&mut w);
        w.into_bytes()
    }

    /// Writes the data into a message; names are compressed only in NS, CNAME, PTR, SOA
    /// and MX data (RFC 3597 §4), never in SRV (RFC 2782) or unknown types.
    pub(crate) fn write_wire(&self, w: &mut Writer) {
        match self {
            RData::A(ip) => w.bytes(&ip.octets()),
            RData::Aaaa(ip) => w.bytes(&ip.octets()),
            RData::Ns(n) | RData::Cname(n) | RData::Ptr(n) => w.name(n, true),
            RData::Soa(s) => {
                w.name(&s.mname, true);
                w.name(&s.rname, true);
                for v in [s.serial, s.refresh, s.retry, s.expire, s.minimum] {
                    w.u32(v);
                }
            }
            RData::Mx {
                preference,
                exchange,
            } => {
                w.u16(*preference);
                w.name(exchange, true);
            }
            RData::Txt(strings) => {
                for s in strings {
                    if s.is_empty() {
                        w.u8(0);
                    }
                    for piece in s.chunks(255) {
                        w.u8(piece.len() as u8);
                        w.bytes(piece);
                    }
                }
            }
            RData::Srv {
                priority,
                weight,
                port,
                target,
            } => {
                w.u16(*priority);
                w.u16(*weight);
                w.u16(*port);
                w.name(target, false);
            }
            RData::Unknown { data, .. } => w.bytes(data),
        }
    }
}

/// Appends a character string in zone-file form: quoted, `"` and `\` escaped, bytes
/// outside printable ASCII as `\DDD`.
pub(crate) fn push_quoted(out: &mut String, s: &[u8]) {
    out.push('"');
    for &b in s {
        match b {
            b'"' | b'\\' => {
                out.push('\\');
                out.push(char::from(b));
            }
            0x20..=0x7e => out.push(char::from(b)),
            _ => out.push_str(&format!("\\{b:03}")),
        }
    }
    out.push('"');
}

/// Lowercase hex of `data`.
pub(crate) fn hex(data: &[u8]) -> String {
    data.iter().map(|b| format!("{b:02x}")).collect()
}

impl fmt::Display for RData {
    /// The data in zone-file presentation form (names with their trailing dot), e.g.
    /// `0 100 389 dc1.samdom.example.com.` for SRV, quoted strings for TXT and RFC 3597's
    /// `\# len hex` for unknown types.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            RData::A(ip) => write!(f, "{ip}"),
            RData::Aaaa(ip) => write!(f, "{ip}"),
            RData::Ns(n) | RData::Cname(n) | RData::Ptr(n) => f.write_str(&n.to_fqdn_string()),
            RData::Soa(s) => write!(
                f,
                "{} {} {} {} {} {} {}",
                s.mname.to_fqdn_string(),
                s.rname.to_fqdn_string(),
                s.serial,
                s.refresh,
                s.retry,
                s.expire,
                s.minimum
            ),
            RData::Mx {
                preference,
                exchange,
            } => {
                write!(f, "{preference} {}", exchange.to_fqdn_string())
            }
            RData::Txt(strings) => {
                let mut out = String::new();
                for (i, s) in strings.iter().enumerate() {
                    if i > 0 {
                        out.push(' ');
                    }
                    push_quoted(&mut out, s);
                }
                f.write_str(&out)
            }
            RData::Srv {
                priority,
                weight,
                port,
                target,
            } => {
                write!(f, "{priority} {weight} {port} {}", target.to_fqdn_string())
            }
            RData::Unknown { data, .. } => {
                if data.is_empty() {
                    f.write_str("\\# 0")
                } else {
                    write!(f, "\\# {} {}", data.len(), hex(data))
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn n(s: &str) -> Name {
        Name::parse(s).unwrap()
    }

    #[test]
    fn type_names() {
        assert_eq!(type_name(rtype::SRV), "SRV");
        assert_eq!(type_name(123), "TYPE123");
        assert_eq!(type_from_name("srv"), Some(33));
        assert_eq!(type_from_name("Aaaa"), Some(28));
        assert_eq!(type_from_name("TYPE123"), Some(123));
        assert_eq!(type_from_name("type65535"), Some(65535));
        assert_eq!(type_from_name("TYPE65536"), None);
        assert_eq!(type_from_name("TYPE"), None);
        assert_eq!(type_from_name("TYPE+1"), None);
        assert_eq!(type_from_name("NOPE"), None);
        assert_eq!(type_from_name("é"), None);
    }

    #[test]
    fn presentation() {
        let srv = RData::Srv {
            priority: 0,
            weight: 100,
            port: 389,
            target: n("dc1.samdom.example.com"),
        };
        assert_eq!(srv.to_string(), "0 100 389 dc1.samdom.example.com.");
        let txt = RData::Txt(vec![b"hello world".to_vec(), b"q\"b\\s\x01".to_vec()]);
        assert_eq!(txt.to_string(), r#""hello world" "q\"b\\s\001""#);
        let unk = RData::Unknown {
            rtype: 99,
            data: vec![10, 0, 0, 1],
        };
        assert_eq!(unk.to_string(), r"\# 4 0a000001");
        let soa = RData::Soa(Soa {
            mname: n("dc1.samdom.example.com"),
            rname: n("hostmaster.samdom.example.com"),
            serial: 1,
            refresh: 900,
            retry: 600,
            expire: 86400,
            minimum: 3600,
        });
        assert_eq!(
            soa.to_string(),
            "dc1.samdom.example.com. hostmaster.samdom.example.com. 1 900 600 86400 3600"
        );
        let mx = RData::Mx {
            preference: 10,
            exchange: n("mail.samdom.example.com"),
        };
        assert_eq!(mx.to_string(), "10 mail.samdom.example.com.");
        assert_eq!(
            RData::A("10.0.0.1".parse().unwrap()).to_string(),
            "10.0.0.1"
        );
        assert_eq!(RData::Ptr(Name::root()).to_string(), ".");
    }

    #[test]
    fn wire_round_trips_and_checks_lengths() {
        let cases = vec![
            RData::A("10.0.0.1".parse().unwrap()),
            RData::Aaaa("fd00::1".parse().unwrap()),
            RData::Ns(n("dc1.samdom.example.com")),
            RData::Mx {
                preference: 10,
                exchange: n("mx.example"),
            },
            RData::Txt(vec![b"a".to_vec(), Vec::new()]),
            RData::Srv {
                priority: 1,
                weight: 2,
                port: 3,
                target: n("t.example"),
            },
            RData::Unknown {
                rtype: 99,
                data: vec![1, 2, 3],
            },
        ];
        for rd in cases {
            let wire = rd.to_wire();
            assert_eq!(
                RData::decode_wire(rd.rtype(), &wire, 0, wire.len()).unwrap(),
                rd
            );
        }
        assert!(matches!(
            RData::decode_wire(rtype::A, &[1, 2, 3], 0, 3),
            Err(ProtoError::BadRdata { rtype: 1, .. })
        ));
        assert!(matches!(
            RData::decode_wire(rtype::A, &[1, 2, 3, 4, 5], 0, 5),
            Err(ProtoError::BadRdata { rtype: 1, .. })
        ));
        assert!(RData::decode_wire(rtype::TXT, &[5, b'a'], 0, 2).is_err());
        assert!(RData::decode_wire(rtype::A, &[1, 2, 3, 4], 2, 4).is_err());
        assert!(RData::decode_wire(rtype::MX, &[0, 1, 0, 9], 0, 4).is_err());
    }

    #[test]
    fn long_txt_strings_are_cut() {
        let rd = RData::Txt(vec![vec![b'x'; 300]]);
        let wire = rd.to_wire();
        assert_eq!(wire.len(), 302);
        assert_eq!(wire[0], 255);
        assert_eq!(wire[256], 45);
    }
}
