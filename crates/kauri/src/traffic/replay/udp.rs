//! The datagram exchanges a replayed client makes: CLDAP netlogon pings (how a Windows
//! machine finds its DC) and DNS queries (how it finds the DC's name in the first place).

use std::time::Duration;

use kauri_ldap_client::proto::{
    decode::decode_message, encode::encode_message, DerefAliases, LdapMessage, ProtocolOp,
    SearchRequest, SearchScope,
};
use kauri_ldap_client::Filter;
use tokio::net::UdpSocket;

use super::outcome::Failure;

/// How long a datagram waits for its answer (answers to other requests included).
pub const UDP_TIMEOUT: Duration = Duration::from_secs(5);

/// A connected UDP socket of one conversation for one service.
pub async fn socket(server: &str) -> Result<UdpSocket, Failure> {
    let bind = if server.starts_with('[') {
        "[::]:0"
    } else {
        "0.0.0.0:0"
    };
    let s = UdpSocket::bind(bind).await.map_err(Failure::io)?;
    s.connect(server).await.map_err(Failure::io)?;
    Ok(s)
}

/// The netlogon ping a Windows client sends (`(&(DnsDomain=…)(NtVer=…))`, attribute
/// `Netlogon`), as bytes.
pub fn netlogon_ping(id: i32, realm: &str) -> Vec<u8> {
    encode_message(&LdapMessage {
        id,
        op: ProtocolOp::SearchRequest(SearchRequest {
            base: String::new(),
            scope: SearchScope::Base,
            deref: DerefAliases::Never,
            size_limit: 0,
            time_limit: 0,
            types_only: false,
            filter: Filter::And(vec![
                Filter::Equality("DnsDomain".into(), realm.to_ascii_lowercase().into_bytes()),
                Filter::Equality("NtVer".into(), vec![6, 0, 0, 0]),
            ]),
            attributes: vec!["Netlogon".into()],
        }),
        controls: Vec::new(),
    })
}

/// Sends a netlogon ping and waits for the entry that answers it.
pub async fn cldap_ping(s: &UdpSocket, id: i32, realm: &str) -> Result<(), Failure> {
    s.send(&netlogon_ping(id, realm))
        .await
        .map_err(Failure::io)?;
    let mut buf = vec![0u8; 4096];
    let deadline = tokio::time::Instant::now() + UDP_TIMEOUT;
    loop {
        let n = tokio::time::timeout_at(deadline, s.recv(&mut buf))
            .await
            .map_err(|_| Failure::new("timeout".into()))?
            .map_err(Failure::io)?;
        // A CLDAP answer is the entry and the done message back to back; the first
        // message tells.
        let first = kauri_ldap_client::proto::codec::frame_len(&buf[..n], 1 << 16)
            .ok()
            .flatten()
            .unwrap_or(n);
        let msg = decode_message(&buf[..first.min(n)])
            .map_err(|_| Failure::new("undecodable CLDAP answer".into()))?;
        if msg.id != id {
            continue;
        }
        return match msg.op {
            ProtocolOp::SearchResultEntry(_) => Ok(()),
            ProtocolOp::SearchResultDone(r) => Err(Failure::ldap(r.code)),
            _ => Err(Failure::new("unexpected CLDAP answer".into())),
        };
    }
}

/// DNS record types a client asks for.
pub mod qtype {
    /// An IPv4 address.
    pub const A: u16 = 1;
    /// A service location.
    pub const SRV: u16 = 33;
    /// The zone's start of authority.
    pub const SOA: u16 = 6;
}

/// A standard query for `name` of `qtype`, recursion desired as stub resolvers ask.
pub fn dns_query(id: u16, name: &str, qtype: u16) -> Vec<u8> {
    let mut q = Vec::with_capacity(name.len() + 18);
    q.extend_from_slice(&id.to_be_bytes());
    q.extend_from_slice(&[0x01, 0x00, 0, 1, 0, 0, 0, 0, 0, 0]);
    for label in name.trim_end_matches('.').split('.') {
        let l = &label.as_bytes()[..label.len().min(63)];
        q.push(l.len() as u8);
        q.extend_from_slice(l);
    }
    q.push(0);
    q.extend_from_slice(&qtype.to_be_bytes());
    q.extend_from_slice(&1u16.to_be_bytes());
    q
}

/// Sends a query and waits for its answer: NOERROR and NXDOMAIN are answers, SERVFAIL,
/// REFUSED and the rest are failures.
pub async fn dns_ask(s: &UdpSocket, id: u16, name: &str, qtype: u16) -> Result<(), Failure> {
    s.send(&dns_query(id, name, qtype))
        .await
        .map_err(Failure::io)?;
    let mut buf = vec![0u8; 4096];
    let deadline = tokio::time::Instant::now() + UDP_TIMEOUT;
    loop {
        let n = tokio::time::timeout_at(deadline, s.recv(&mut buf))
            .await
            .map_err(|_| Failure::new("timeout".into()))?
            .map_err(Failure::io)?;
        if n < 12 || u16::from_be_bytes([buf[0], buf[1]]) != id {
            continue;
        }
        return match buf[3] & 0x0f {
            0 | 3 => Ok(()),
            2 => Err(Failure::new("SERVFAIL".into())),
            5 => Err(Failure::new("REFUSED".into())),
            other => Err(Failure::new(format!("DNS rcode {other}"))),
        };
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn query_bytes() {
        let q = dns_query(0x1234, "dc1.example.com.", qtype::A);
        assert_eq!(&q[..4], &[0x12, 0x34, 0x01, 0x00]);
        assert_eq!(&q[12..16], b"\x03dc1");
        assert_eq!(&q[q.len() - 5..], &[0, 0, 1, 0, 1]);
        let ping = netlogon_ping(7, "EXAMPLE.COM");
        let m = decode_message(&ping).unwrap();
        assert_eq!(m.id, 7);
    }
}
