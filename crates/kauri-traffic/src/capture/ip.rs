//! IPv4 and IPv6 headers (with IPv6 extension headers), the addresses quoted inside ICMP
//! error messages, and UDP headers.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

use super::link::Network;

/// IP protocol number of TCP.
pub const TCP: u8 = 6;
/// IP protocol number of UDP.
pub const UDP: u8 = 17;
const ICMP: u8 = 1;
const ICMPV6: u8 = 58;

/// Why an IP header could not be read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum IpError {
    /// Fewer bytes than the header needs.
    #[error("the IP header is cut short")]
    Short,
    /// A version, header length or total length that cannot be.
    #[error("invalid IP header: {0}")]
    Invalid(&'static str),
}

/// Where a fragment belongs in its datagram.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Fragment {
    /// The datagram's identification.
    pub id: u32,
    /// Byte offset of this fragment's payload in the datagram's payload.
    pub offset: usize,
    /// Whether more fragments follow.
    pub more: bool,
}

/// An IP packet's header facts and payload.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct IpPacket<'a> {
    /// Source address.
    pub src: IpAddr,
    /// Destination address.
    pub dst: IpAddr,
    /// The payload's protocol (after any IPv6 extension headers).
    pub protocol: u8,
    /// The captured payload (fewer bytes than declared when the frame was cut).
    pub payload: &'a [u8],
    /// The payload length the header declares.
    pub payload_len: usize,
    /// Set when the packet is a fragment of a larger datagram.
    pub fragment: Option<Fragment>,
}

impl IpPacket<'_> {
    /// Whether the capture holds fewer payload bytes than the header declares.
    pub fn is_cut(&self) -> bool {
        self.payload.len() < self.payload_len
    }
}

/// Reads the IP header of a network-layer packet.
pub fn parse(net: Network<'_>) -> Result<IpPacket<'_>, IpError> {
    match net {
        Network::Ipv4(d) => ipv4(d),
        Network::Ipv6(d) => ipv6(d),
    }
}

fn ipv4(d: &[u8]) -> Result<IpPacket<'_>, IpError> {
    if d.len() < 20 {
        return Err(IpError::Short);
    }
    if d[0] >> 4 != 4 {
        return Err(IpError::Invalid("version is not 4"));
    }
    let header = usize::from(d[0] & 0x0f) * 4;
    if header < 20 {
        return Err(IpError::Invalid("header length below 20"));
    }
    if d.len() < header {
        return Err(IpError::Short);
    }
    let mut total = usize::from(u16::from_be_bytes([d[2], d[3]]));
    if total == 0 {
        // Segmentation offload leaves the length zero; the frame is the packet.
        total = d.len();
    }
    if total < header {
        return Err(IpError::Invalid("total length below the header length"));
    }
    let flags_offset = u16::from_be_bytes([d[6], d[7]]);
    let more = flags_offset & 0x2000 != 0;
    let offset = usize::from(flags_offset & 0x1fff) * 8;
    let fragment = (more || offset > 0).then_some(Fragment {
        id: u32::from(u16::from_be_bytes([d[4], d[5]])),
        offset,
        more,
    });
    let end = total.min(d.len());
    Ok(IpPacket {
        src: IpAddr::V4(Ipv4Addr::new(d[12], d[13], d[14], d[15])),
        dst: IpAddr::V4(Ipv4Addr::new(d[16], d[17], d[18], d[19])),
        protocol: d[9],
        payload: &d[header..end],
        payload_len: total - header,
        fragment,
    })
}

fn addr6(d: &[u8], at: usize) -> Option<IpAddr> {
    let b: [u8; 16] = d.get(at..at + 16)?.try_into().ok()?;
    Some(IpAddr::V6(Ipv6Addr::from(b)))
}

fn ipv6(d: &[u8]) -> Result<IpPacket<'_>, IpError> {
    if d.len() < 40 {
        return Err(IpError::Short);
    }
    if d[0] >> 4 != 6 {
        return Err(IpError::Invalid("version is not 6"));
    }
    let (src, dst) = match (addr6(d, 8), addr6(d, 24)) {
        (Some(s), Some(t)) => (s, t),
        _ => return Err(IpError::Short),
    };
    let mut declared = usize::from(u16::from_be_bytes([d[4], d[5]]));
    if declared == 0 {
        declared = d.len() - 40;
    }
    let mut next = d[6];
    let mut at = 40;
    let mut fragment = None;
    // Extension headers: hop-by-hop, routing, fragment, destination options, AH.
    for _ in 0..8 {
        match next {
            0 | 43 | 60 | 51 | 44 => {}
            _ => break,
        }
        let h = d.get(at..at + 8).ok_or(IpError::Short)?;
        let len = match next {
            44 => {
                let fo = u16::from_be_bytes([h[2], h[3]]);
                fragment = Some(Fragment {
                    id: u32::from_be_bytes([h[4], h[5], h[6], h[7]]),
                    offset: usize::from(fo & 0xfff8),
                    more: fo & 1 != 0,
                });
                8
            }
            51 => (usize::from(h[1]) + 2) * 4,
            _ => (usize::from(h[1]) + 1) * 8,
        };
        next = h[0];
        at += len;
    }
    let end = (40 + declared).min(d.len());
    if at > end {
        return Err(IpError::Invalid("extension headers run past the packet"));
    }
    if fragment.is_some_and(|f| !f.more && f.offset == 0) {
        // An atomic fragment: a whole datagram.
        fragment = None;
    }
    Ok(IpPacket {
        src,
        dst,
        protocol: next,
        payload: &d[at..end],
        payload_len: (40 + declared).saturating_sub(at),
        fragment,
    })
}

/// The source and destination of the packet an ICMP or ICMPv6 error message quotes
/// (destination unreachable, time exceeded, …), as a dissector names them too.
pub fn quoted_addresses(packet: &IpPacket<'_>) -> Option<(IpAddr, IpAddr)> {
    let p = packet.payload;
    match packet.protocol {
        ICMP if matches!(p.first()?, 3 | 4 | 5 | 11 | 12) => {
            let inner = p.get(8..)?;
            if inner.len() < 20 || inner[0] >> 4 != 4 {
                return None;
            }
            Some((
                IpAddr::V4(Ipv4Addr::new(inner[12], inner[13], inner[14], inner[15])),
                IpAddr::V4(Ipv4Addr::new(inner[16], inner[17], inner[18], inner[19])),
            ))
        }
        ICMPV6 if matches!(p.first()?, 1..=4) => {
            let inner = p.get(8..)?;
            if inner.first()? >> 4 != 6 {
                return None;
            }
            Some((addr6(inner, 8)?, addr6(inner, 24)?))
        }
        _ => None,
    }
}

/// A UDP header and payload.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Udp<'a> {
    /// Source port.
    pub src_port: u16,
    /// Destination port.
    pub dst_port: u16,
    /// The captured payload.
    pub payload: &'a [u8],
    /// The payload length the header declares.
    pub payload_len: usize,
}

/// Reads a UDP header (`None` when fewer than eight bytes were captured).
pub fn udp(data: &[u8]) -> Option<Udp<'_>> {
    let h = data.get(..8)?;
    let len = usize::from(u16::from_be_bytes([h[4], h[5]]));
    // A zero or too small length (jumbograms, offload) means "the rest of the packet".
    let declared = if len < 8 { data.len() - 8 } else { len - 8 };
    let end = (8 + declared).min(data.len());
    Some(Udp {
        src_port: u16::from_be_bytes([h[0], h[1]]),
        dst_port: u16::from_be_bytes([h[2], h[3]]),
        payload: &data[8..end],
        payload_len: declared,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ipv4_and_ipv6_headers() {
        let mut v4 = vec![
            0x45, 0, 0, 24, 0, 7, 0x20, 0, 64, 17, 0, 0, 10, 0, 0, 1, 10, 0, 0, 2,
        ];
        v4.extend_from_slice(&[1, 2, 3]);
        let p = parse(Network::Ipv4(&v4)).unwrap();
        assert_eq!(p.protocol, UDP);
        assert_eq!(p.payload, &[1, 2, 3]);
        assert!(p.is_cut());
        assert_eq!(
            p.fragment,
            Some(Fragment {
                id: 7,
                offset: 0,
                more: true
            })
        );
        let mut v6 = vec![0x60, 0, 0, 0, 0, 10, 60, 64];
        v6.extend_from_slice(&[0; 32]);
        v6.extend_from_slice(&[6, 0, 0, 0, 0, 0, 0, 0, 9, 9]);
        let p = parse(Network::Ipv6(&v6)).unwrap();
        assert_eq!(p.protocol, TCP);
        assert_eq!(p.payload, &[9, 9]);
        assert!(parse(Network::Ipv4(&v4[..10])).is_err());
    }
}
