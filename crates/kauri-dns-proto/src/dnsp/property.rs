//! MS-DNSP §2.3.2.1 `dnsProperty`: one zone setting of a `dnsZone` object.
//!
//! Layout (all little-endian): DataLength u32, NameLength u32, Flag u32, Version u32
//! (1), Id u32, Data (DataLength bytes), Name. MS-DNSP calls NameLength and Name unused
//! ("MUST be ignored"), shows Name as one byte; every value seen in practice has a 4-byte
//! Name: Samba's IDL reads and writes a `uint32 name`, Samba-provisioned zones carry
//! NameLength 0 and Name 0, and the Windows values in Samba's tests
//! (`source4/torture/ndr/dnsp.c`) end in 4 bytes too, Windows 2003 leaving garbage in
//! NameLength and Name. So values are written as Samba writes them (NameLength 0, Flag 0,
//! Version 1, Name 4 zero bytes), since Samba refuses a value without its 4-byte Name,
//! and read accepting any NameLength, Flag and a Name of 1 to 4 bytes of any content.
//! A DataLength of 0 means "the default" for the Id (MS-DNSP §2.3.2.1.1).

use std::net::Ipv4Addr;

use crate::error::{ProtoError, Result};

/// DSPROPERTY_ZONE_TYPE: u32, DNS_ZONE_TYPE_* ([`zone_type`]).
pub const ZONE_TYPE: u32 = 0x01;
/// DSPROPERTY_ZONE_ALLOW_UPDATE: 1 byte, 0 none, 1 unsecure and secure, 2 secure only.
pub const ALLOW_UPDATE: u32 = 0x02;
/// DSPROPERTY_ZONE_SECURE_TIME: 8 bytes, a FILETIME.
pub const SECURE_TIME: u32 = 0x08;
/// DSPROPERTY_ZONE_NOREFRESH_INTERVAL: u32 hours (default 168).
pub const NOREFRESH_INTERVAL: u32 = 0x10;
/// DSPROPERTY_ZONE_SCAVENGING_SERVERS: IP4_ARRAY (u32 count, then IPv4 addresses).
pub const SCAVENGING_SERVERS: u32 = 0x11;
/// DSPROPERTY_ZONE_AGING_ENABLED_TIME: u32 hours since 1601 before the next scavenging.
pub const AGING_ENABLED_TIME: u32 = 0x12;
/// DSPROPERTY_ZONE_REFRESH_INTERVAL: u32 hours (default 168).
pub const REFRESH_INTERVAL: u32 = 0x20;
/// DSPROPERTY_ZONE_AGING_STATE: u32 boolean.
pub const AGING_STATE: u32 = 0x40;
/// DSPROPERTY_ZONE_DELETED_FROM_HOSTNAME: NUL-terminated UTF-16LE host name.
pub const DELETED_FROM_HOSTNAME: u32 = 0x80;
/// DSPROPERTY_ZONE_MASTER_SERVERS: IP4_ARRAY.
pub const MASTER_SERVERS: u32 = 0x81;
/// DSPROPERTY_ZONE_AUTO_NS_SERVERS: IP4_ARRAY.
pub const AUTO_NS_SERVERS: u32 = 0x82;
/// DSPROPERTY_ZONE_DCPROMO_CONVERT: 1 byte, DCPROMO_CONVERT_* (0 none, 1 domain, 2 forest).
pub const DCPROMO_CONVERT: u32 = 0x83;
/// DSPROPERTY_ZONE_SCAVENGING_SERVERS_DA: DNS_ADDR_ARRAY.
pub const SCAVENGING_SERVERS_DA: u32 = 0x90;
/// DSPROPERTY_ZONE_MASTER_SERVERS_DA: DNS_ADDR_ARRAY.
pub const MASTER_SERVERS_DA: u32 = 0x91;
/// DSPROPERTY_ZONE_NS_SERVERS_DA: DNS_ADDR_ARRAY.
pub const AUTO_NS_SERVERS_DA: u32 = 0x92;
/// DSPROPERTY_ZONE_NODE_DBFLAGS: u32 DNS_RPC_FLAG_* bits.
pub const NODE_DBFLAGS: u32 = 0x100;

/// DNS_ZONE_TYPE_* values of [`ZONE_TYPE`].
pub mod zone_type {
    /// The cache (root hints) zone.
    pub const CACHE: u32 = 0;
    /// A primary zone: what AD-integrated zones are.
    pub const PRIMARY: u32 = 1;
    /// A secondary zone.
    pub const SECONDARY: u32 = 2;
    /// A stub zone.
    pub const STUB: u32 = 3;
    /// A conditional forwarder.
    pub const FORWARDER: u32 = 4;
}

/// The fixed width of an Id's data, for the Ids that have one.
pub fn value_width(id: u32) -> Option<usize> {
    match id {
        ALLOW_UPDATE | DCPROMO_CONVERT => Some(1),
        ZONE_TYPE | NOREFRESH_INTERVAL | REFRESH_INTERVAL | AGING_STATE | AGING_ENABLED_TIME
        | NODE_DBFLAGS => Some(4),
        SECURE_TIME => Some(8),
        _ => None,
    }
}

const HEADER: usize = 20;
/// The Name field as Samba and Windows write it.
const NAME: [u8; 4] = [0; 4];

/// One `dnsProperty` value: an Id and its data, kept as bytes (see the accessors).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct DnsProperty {
    /// Which setting ([`ZONE_TYPE`], [`ALLOW_UPDATE`], …).
    pub id: u32,
    /// Its data; empty means the setting's default.
    pub data: Vec<u8>,
}

fn le32(b: &[u8], at: usize) -> Result<u32> {
    let s = b.get(at..at + 4).ok_or(ProtoError::Truncated)?;
    let mut a = [0u8; 4];
    a.copy_from_slice(s);
    Ok(u32::from_le_bytes(a))
}

impl DnsProperty {
    /// Reads a `dnsProperty` value (see the module documentation for what is tolerated).
    pub fn decode(b: &[u8]) -> Result<DnsProperty> {
        let len = le32(b, 0)? as usize;
        let version = le32(b, 12)?;
        if version != 1 {
            return Err(ProtoError::BadDnsp("dnsProperty version is not 1"));
        }
        let id = le32(b, 16)?;
        let rest = b.get(HEADER..).ok_or(ProtoError::Truncated)?;
        if len > rest.len() {
            return Err(ProtoError::Truncated);
        }
        let (data, name) = rest.split_at(len);
        match name.len() {
            0 => return Err(ProtoError::Truncated),
            1..=4 => {}
            _ => return Err(ProtoError::TrailingBytes),
        }
        Ok(DnsProperty {
            id,
            data: data.to_vec(),
        })
    }

    /// The value as Samba writes it: NameLength 0, Flag 0, Version 1, a 4-byte zero Name.
    pub fn encode(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(HEADER + self.data.len() + NAME.len());
        let len = u32::try_from(self.data.len()).unwrap_or(u32::MAX);
        out.extend_from_slice(&len.to_le_bytes());
        out.extend_from_slice(&0u32.to_le_bytes());
        out.extend_from_slice(&0u32.to_le_bytes());
        out.extend_from_slice(&1u32.to_le_bytes());
        out.extend_from_slice(&self.id.to_le_bytes());
        out.extend_from_slice(self.data.get(..len as usize).unwrap_or(&self.data));
        out.extend_from_slice(&NAME);
        out
    }

    /// A property holding a u32 (ZONE_TYPE, the intervals, AGING_STATE, …).
    pub fn with_u32(id: u32, v: u32) -> DnsProperty {
        DnsProperty {
            id,
            data: v.to_le_bytes().to_vec(),
        }
    }

    /// A property holding one byte (ALLOW_UPDATE, DCPROMO_CONVERT).
    pub fn with_u8(id: u32, v: u8) -> DnsProperty {
        DnsProperty { id, data: vec![v] }
    }

    /// A property holding a u64 (SECURE_TIME, a FILETIME).
    pub fn with_u64(id: u32, v: u64) -> DnsProperty {
        DnsProperty {
            id,
            data: v.to_le_bytes().to_vec(),
        }
    }

    /// A property holding an IP4_ARRAY (SCAVENGING_SERVERS, MASTER_SERVERS,
    /// AUTO_NS_SERVERS): a u32 count, then the addresses in network order.
    pub fn with_ip4_array(id: u32, addrs: &[Ipv4Addr]) -> DnsProperty {
        let mut data = Vec::with_capacity(4 + 4 * addrs.len());
        data.extend_from_slice(&u32::try_from(addrs.len()).unwrap_or(u32::MAX).to_le_bytes());
        for a in addrs {
            data.extend_from_slice(&a.octets());
        }
        DnsProperty { id, data }
    }

    /// The data as a u32, when it is exactly 4 bytes.
    pub fn u32_value(&self) -> Option<u32> {
        let a: [u8; 4] = self.data.as_slice().try_into().ok()?;
        Some(u32::from_le_bytes(a))
    }

    /// The data as one byte, when it is exactly 1 byte.
    pub fn u8_value(&self) -> Option<u8> {
        match self.data.as_slice() {
            [b] => Some(*b),
            _ => None,
        }
    }

    /// The data as a u64, when it is exactly 8 bytes.
    pub fn u64_value(&self) -> Option<u64> {
        let a: [u8; 8] = self.data.as_slice().try_into().ok()?;
        Some(u64::from_le_bytes(a))
    }

    /// The data as an IP4_ARRAY, when it is one.
    pub fn ip4_array(&self) -> Option<Vec<Ipv4Addr>> {
        let (count, rest) = self.data.split_first_chunk::<4>()?;
        let count = u32::from_le_bytes(*count) as usize;
        if rest.len() != count.checked_mul(4)? {
            return None;
        }
        Some(
            rest.chunks_exact(4)
                .filter_map(|c| <[u8; 4]>::try_from(c).ok().map(Ipv4Addr::from))
                .collect(),
        )
    }

    /// The data as a NUL-terminated UTF-16LE string (DELETED_FROM_HOSTNAME).
    pub fn utf16_value(&self) -> Option<String> {
        if !self.data.len().is_multiple_of(2) {
            return None;
        }
        let units: Vec<u16> = self
            .data
            .chunks_exact(2)
            .filter_map(|c| <[u8; 2]>::try_from(c).ok().map(u16::from_le_bytes))
            .take_while(|&u| u != 0)
            .collect();
        String::from_utf16(&units).ok()
    }
}
