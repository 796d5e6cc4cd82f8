//! Link layers: finding the IP packet inside a frame. Ethernet (with any 802.1Q/802.1ad
//! tags), Linux cooked captures (SLL and SLL2), raw IP and the BSD loopback headers are
//! understood; anything else, and any frame that does not carry IPv4 or IPv6 (ARP, LLC,
//! …), has no network layer for a summary.

use super::LinkType;

/// The network-layer packet a frame carries.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Network<'a> {
    /// An IPv4 packet (header first).
    Ipv4(&'a [u8]),
    /// An IPv6 packet (header first).
    Ipv6(&'a [u8]),
}

const ETHERTYPE_IPV4: u16 = 0x0800;
const ETHERTYPE_IPV6: u16 = 0x86dd;

fn be16(data: &[u8], at: usize) -> Option<u16> {
    super::u16_at(data, at, true)
}

/// The IP packet in a frame of the given link type, if there is one.
pub fn network(link: LinkType, data: &[u8]) -> Option<Network<'_>> {
    match link {
        LinkType::ETHERNET => ethernet(data),
        LinkType::NULL => {
            // The family is in the capturing host's byte order; family numbers are small,
            // so the order that gives a small number is the right one.
            let le = super::u32_at(data, 0, false)?;
            let family = if le > 0xffff {
                super::u32_at(data, 0, true)?
            } else {
                le
            };
            by_family(family, data.get(4..)?)
        }
        LinkType::LOOP => by_family(super::u32_at(data, 0, true)?, data.get(4..)?),
        LinkType::RAW | LinkType::RAW_BSD12 | LinkType::RAW_BSD14 => by_version(data),
        LinkType::IPV4 => Some(Network::Ipv4(data)),
        LinkType::IPV6 => Some(Network::Ipv6(data)),
        LinkType::LINUX_SLL => by_ethertype(be16(data, 14)?, data.get(16..)?),
        LinkType::LINUX_SLL2 => by_ethertype(be16(data, 0)?, data.get(20..)?),
        _ => None,
    }
}

fn ethernet(data: &[u8]) -> Option<Network<'_>> {
    let mut at = 12;
    let mut ethertype = be16(data, at)?;
    // Up to four stacked VLAN tags.
    for _ in 0..4 {
        if !matches!(ethertype, 0x8100 | 0x88a8 | 0x9100) {
            break;
        }
        at += 4;
        ethertype = be16(data, at)?;
    }
    by_ethertype(ethertype, data.get(at + 2..)?)
}

fn by_ethertype(ethertype: u16, rest: &[u8]) -> Option<Network<'_>> {
    match ethertype {
        ETHERTYPE_IPV4 => Some(Network::Ipv4(rest)),
        ETHERTYPE_IPV6 => Some(Network::Ipv6(rest)),
        _ => None,
    }
}

fn by_family(family: u32, rest: &[u8]) -> Option<Network<'_>> {
    match family {
        2 => Some(Network::Ipv4(rest)),
        // AF_INET6 on the BSDs, macOS and Linux respectively.
        24 | 28 | 30 | 10 => Some(Network::Ipv6(rest)),
        _ => None,
    }
}

fn by_version(data: &[u8]) -> Option<Network<'_>> {
    match data.first()? >> 4 {
        4 => Some(Network::Ipv4(data)),
        6 => Some(Network::Ipv6(data)),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn link_layers_find_ip() {
        let ip = [0x45u8, 0, 0, 20];
        let mut eth = vec![0u8; 12];
        eth.extend_from_slice(&[0x81, 0x00, 0, 5, 0x08, 0x00]);
        eth.extend_from_slice(&ip);
        assert_eq!(network(LinkType::ETHERNET, &eth), Some(Network::Ipv4(&ip)));
        let mut null = 2u32.to_le_bytes().to_vec();
        null.extend_from_slice(&ip);
        assert_eq!(network(LinkType::NULL, &null), Some(Network::Ipv4(&ip)));
        let mut null_be = 30u32.to_be_bytes().to_vec();
        null_be.extend_from_slice(&ip);
        assert_eq!(network(LinkType::NULL, &null_be), Some(Network::Ipv6(&ip)));
        let mut sll = vec![0u8; 14];
        sll.extend_from_slice(&[0x86, 0xdd]);
        sll.extend_from_slice(&ip);
        assert_eq!(network(LinkType::LINUX_SLL, &sll), Some(Network::Ipv6(&ip)));
        let mut sll2 = vec![0x08, 0x00];
        sll2.extend_from_slice(&[0u8; 18]);
        sll2.extend_from_slice(&ip);
        assert_eq!(
            network(LinkType::LINUX_SLL2, &sll2),
            Some(Network::Ipv4(&ip))
        );
        assert_eq!(network(LinkType::RAW, &ip), Some(Network::Ipv4(&ip)));
        assert_eq!(network(LinkType::ETHERNET, &[0u8; 5]), None);
        assert_eq!(network(LinkType(147), &ip), None);
    }
}
