//! How Active Directory stores DNS zones (MS-DNSP §2.3.2): each `dnsNode` object's
//! `dnsRecord` values ([`DnsRecord`]) and each `dnsZone`'s `dnsProperty` values
//! ([`DnsProperty`]). Both must read what Samba and Windows DCs wrote and be written so
//! they read it back: layouts are checked against MS-DNSP and Samba's `dnsp.idl` and
//! `ndr_dnsp.c`, and the tests use values from a Samba-provisioned database.
//!
//! `dnsRecord` layout: DataLength u16 LE, Type u16 LE, Version u8 (5), Rank u8, Flags u16
//! LE, Serial u32 LE, TtlSeconds u32 **big-endian**, Reserved u32, TimeStamp u32 LE
//! (hours since 1601, 0 = static), then DataLength bytes of data:
//!
//! | type | data |
//! |------|------|
//! | 0 (tombstone) | EntombedTime, a FILETIME (u64 LE) |
//! | A / AAAA | the 4 / 16 address bytes |
//! | NS, CNAME, PTR | a DNS_COUNT_NAME |
//! | SOA | serial, refresh, retry, expire, minimum as u32 BE, then the primary server and the administrator's mailbox as DNS_COUNT_NAMEs |
//! | MX | preference u16 BE, DNS_COUNT_NAME |
//! | SRV | priority, weight, port u16 BE, DNS_COUNT_NAME |
//! | TXT | strings, each a length byte and its bytes, to the end of the data |
//! | others | raw bytes, kept as they are |
//!
//! A DNS_COUNT_NAME (MS-DNSP §2.2.2.2.2) is Length (1 byte), LabelCount (1 byte), then
//! each label as a length byte and its bytes, then a zero byte; Length counts everything
//! after LabelCount, the zero included (so it is the name's uncompressed wire length).
//! The root is `01 00 00`, as Samba writes it (its commit a85d257c says Windows stores an
//! MX of `.` the same way).

mod count_name;
mod property;
mod time;

pub use property::*;
pub use time::{filetime_from_unix, hours_since_1601, unix_from_filetime, unix_from_hours};

use std::net::{Ipv4Addr, Ipv6Addr};

use crate::error::{ProtoError, Result};
use crate::rdata::{rtype, RData, Soa};

/// The only `dnsRecord` Version there is.
pub const VERSION: u8 = 5;

/// DNS_RANK_* values of [`DnsRecord::rank`] (MS-DNSP §2.2.2.2.5).
pub mod rank {
    /// A root hint (the `RootDNSServers` zone).
    pub const ROOT_HINT: u8 = 0x08;
    /// Glue outside the zone.
    pub const OUTSIDE_GLUE: u8 = 0x20;
    /// Glue.
    pub const GLUE: u8 = 0x80;
    /// NS glue (the records of a delegation, as `_msdcs` in the domain zone).
    pub const NS_GLUE: u8 = 0x82;
    /// Authoritative zone data.
    pub const ZONE: u8 = 0xF0;
}

/// Size of the fixed `dnsRecord` header.
const HEADER: usize = 24;

/// What a `dnsRecord` value holds: a record, or the tombstone a deleted name keeps.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Body {
    /// A resource record's data.
    Record(RData),
    /// DNS_TYPE_ZERO: the node's records were deleted at this time (a FILETIME).
    Tombstone {
        /// When, in 100 ns ticks since 1601.
        entombed: u64,
    },
}

/// One `dnsRecord` value (MS-DNSP §2.3.2.2).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DnsRecord {
    /// The data (its type is the record's Type).
    pub body: Body,
    /// Always [`VERSION`] (5).
    pub version: u8,
    /// Where the record came from ([`rank`]); zone data is 0xF0.
    pub rank: u8,
    /// Unused by MS-DNSP (0), kept as read.
    pub flags: u16,
    /// The zone's SOA serial when the record was written.
    pub serial: u32,
    /// Time to live, seconds.
    pub ttl: u32,
    /// Hours since 1601-01-01 UTC when a dynamic record was last refreshed; 0 = static.
    pub timestamp: u32,
}

fn bad(reason: &'static str) -> ProtoError {
    ProtoError::BadDnsp(reason)
}

fn be16(b: &[u8]) -> Result<(u16, &[u8])> {
    let (v, rest) = b.split_first_chunk::<2>().ok_or(ProtoError::Truncated)?;
    Ok((u16::from_be_bytes(*v), rest))
}

fn be32(b: &[u8]) -> Result<(u32, &[u8])> {
    let (v, rest) = b.split_first_chunk::<4>().ok_or(ProtoError::Truncated)?;
    Ok((u32::from_be_bytes(*v), rest))
}

fn done<T>(rest: &[u8], v: T) -> Result<T> {
    if rest.is_empty() {
        Ok(v)
    } else {
        Err(bad("record data longer than its content"))
    }
}

fn decode_body(t: u16, d: &[u8]) -> Result<Body> {
    let rd = match t {
        rtype::ZERO => {
            let a: [u8; 8] = d
                .try_into()
                .map_err(|_| bad("tombstone data must be 8 bytes"))?;
            return Ok(Body::Tombstone {
                entombed: u64::from_le_bytes(a),
            });
        }
        rtype::A => {
            let a: [u8; 4] = d.try_into().map_err(|_| bad("A data must be 4 bytes"))?;
            RData::A(Ipv4Addr::from(a))
        }
        rtype::AAAA => {
            let a: [u8; 16] = d
                .try_into()
                .map_err(|_| bad("AAAA data must be 16 bytes"))?;
            RData::Aaaa(Ipv6Addr::from(a))
        }
        rtype::NS | rtype::CNAME | rtype::PTR => {
            let (n, rest) = count_name::read(d)?;
            let rd = match t {
                rtype::NS => RData::Ns(n),
                rtype::CNAME => RData::Cname(n),
                _ => RData::Ptr(n),
            };
            done(rest, rd)?
        }
        rtype::SOA => {
            let (serial, r) = be32(d)?;
            let (refresh, r) = be32(r)?;
            let (retry, r) = be32(r)?;
            let (expire, r) = be32(r)?;
            let (minimum, r) = be32(r)?;
            let (mname, r) = count_name::read(r)?;
            let (rname, r) = count_name::read(r)?;
            done(
                r,
                RData::Soa(Soa {
                    mname,
                    rname,
                    serial,
                    refresh,
                    retry,
                    expire,
                    minimum,
                }),
            )?
        }
        rtype::MX => {
            let (preference, r) = be16(d)?;
            let (exchange, r) = count_name::read(r)?;
            done(
                r,
                RData::Mx {
                    preference,
                    exchange,
                },
            )?
        }
        rtype::SRV => {
            let (priority, r) = be16(d)?;
            let (weight, r) = be16(r)?;
            let (port, r) = be16(r)?;
            let (target, r) = count_name::read(r)?;
            done(
                r,
                RData::Srv {
                    priority,
                    weight,
                    port,
                    target,
                },
            )?
        }
        rtype::TXT => {
            let mut strings = Vec::new();
            let mut r = d;
            while let Some((&n, tail)) = r.split_first() {
                let n = usize::from(n);
                if n > tail.len() {
                    return Err(ProtoError::Truncated);
                }
                let (s, tail) = tail.split_at(n);
                strings.push(s.to_vec());
                r = tail;
            }
            RData::Txt(strings)
        }
        _ => RData::Unknown {
            rtype: t,
            data: d.to_vec(),
        },
    };
    Ok(Body::Record(rd))
}

/// Appends the body's data and returns its type.
fn encode_body(body: &Body, out: &mut Vec<u8>) -> u16 {
    let rd = match body {
        Body::Tombstone { entombed } => {
            out.extend_from_slice(&entombed.to_le_bytes());
            return rtype::ZERO;
        }
        Body::Record(rd) => rd,
    };
    match rd {
        RData::A(ip) => out.extend_from_slice(&ip.octets()),
        RData::Aaaa(ip) => out.extend_from_slice(&ip.octets()),
        RData::Ns(n) | RData::Cname(n) | RData::Ptr(n) => count_name::write(n, out),
        RData::Soa(s) => {
            for v in [s.serial, s.refresh, s.retry, s.expire, s.minimum] {
                out.extend_from_slice(&v.to_be_bytes());
            }
            count_name::write(&s.mname, out);
            count_name::write(&s.rname, out);
        }
        RData::Mx {
            preference,
            exchange,
        } => {
            out.extend_from_slice(&preference.to_be_bytes());
            count_name::write(exchange, out);
        }
        RData::Srv {
            priority,
            weight,
            port,
            target,
        } => {
            for v in [priority, weight, port] {
                out.extend_from_slice(&v.to_be_bytes());
            }
            count_name::write(target, out);
        }
        RData::Txt(strings) => {
            for s in strings {
                if s.is_empty() {
                    out.push(0);
                }
                for piece in s.chunks(255) {
                    out.push(piece.len() as u8);
                    out.extend_from_slice(piece);
                }
            }
        }
        RData::Unknown { data, .. } => out.extend_from_slice(data),
    }
    rd.rtype()
}

impl DnsRecord {
    /// A zone record (version 5, rank zone, flags 0) with `data`, `ttl` and `serial`,
    /// static (timestamp 0).
    pub fn new(data: RData, ttl: u32, serial: u32) -> DnsRecord {
        DnsRecord {
            body: Body::Record(data),
            version: VERSION,
            rank: rank::ZONE,
            flags: 0,
            serial,
            ttl,
            timestamp: 0,
        }
    }

    /// The record type (0 for a tombstone).
    pub fn rtype(&self) -> u16 {
        match &self.body {
            Body::Record(rd) => rd.rtype(),
            Body::Tombstone { .. } => rtype::ZERO,
        }
    }

    /// Whether this is a tombstone.
    pub fn is_tombstone(&self) -> bool {
        matches!(self.body, Body::Tombstone { .. })
    }

    /// Reads a `dnsRecord` value. DataLength must cover exactly the data after the
    /// header, the data must fit its type exactly, and Version must be 5; the Reserved
    /// field (MS-DNSP: 0) is ignored whatever it holds.
    pub fn decode(b: &[u8]) -> Result<DnsRecord> {
        let (head, data) = b
            .split_first_chunk::<HEADER>()
            .ok_or(ProtoError::Truncated)?;
        let [l0, l1, t0, t1, version, rank, f0, f1, s0, s1, s2, s3, ttl0, ttl1, ttl2, ttl3, _, _, _, _, ts0, ts1, ts2, ts3] =
            *head;
        let len = usize::from(u16::from_le_bytes([l0, l1]));
        if version != VERSION {
            return Err(bad("dnsRecord version is not 5"));
        }
        if len > data.len() {
            return Err(ProtoError::Truncated);
        }
        if len < data.len() {
            return Err(ProtoError::TrailingBytes);
        }
        Ok(DnsRecord {
            body: decode_body(u16::from_le_bytes([t0, t1]), data)?,
            version,
            rank,
            flags: u16::from_le_bytes([f0, f1]),
            serial: u32::from_le_bytes([s0, s1, s2, s3]),
            ttl: u32::from_be_bytes([ttl0, ttl1, ttl2, ttl3]),
            timestamp: u32::from_le_bytes([ts0, ts1, ts2, ts3]),
        })
    }

    /// The value as stored, Reserved 0. Data over 65535 bytes (only possible with huge
    /// TXT or unknown data) is cut at 65535 bytes.
    pub fn encode(&self) -> Vec<u8> {
        let mut data = Vec::new();
        let t = encode_body(&self.body, &mut data);
        data.truncate(usize::from(u16::MAX));
        let mut out = Vec::with_capacity(HEADER + data.len());
        out.extend_from_slice(&(data.len() as u16).to_le_bytes());
        out.extend_from_slice(&t.to_le_bytes());
        out.push(self.version);
        out.push(self.rank);
        out.extend_from_slice(&self.flags.to_le_bytes());
        out.extend_from_slice(&self.serial.to_le_bytes());
        out.extend_from_slice(&self.ttl.to_be_bytes());
        out.extend_from_slice(&0u32.to_le_bytes());
        out.extend_from_slice(&self.timestamp.to_le_bytes());
        out.extend_from_slice(&data);
        out
    }
}

#[cfg(test)]
mod tests;
