//! Connectionless LDAP (CLDAP, RFC 1798 as AD uses it): one search request per UDP
//! datagram, answered in one datagram holding the entry and the search's done message.
//! AD's clients send LDAP pings this way to find a domain controller (MS-ADTS 6.3.3), and
//! read root DSE attributes.
//!
//! UDP lets anyone forge the sender, so an answer never exceeds [`AMPLIFICATION`] times
//! the size of its request: a root DSE read that would is answered with the attributes
//! that fit. Datagrams that are not a base search of the root DSE are dropped and counted.

use std::net::{IpAddr, SocketAddr};
use std::sync::atomic::Ordering;
use std::sync::Arc;

use kauri_ldap_proto::decode::decode_message;
use kauri_ldap_proto::encode::encode_message;
use kauri_ldap_proto::{LdapMessage, LdapResult, ProtocolOp, SearchResultEntry, SearchScope};
use tokio::net::UdpSocket;

use crate::auth::Identity;
use crate::ctx::Ctx;

/// How many times its request's size an answer may be.
pub const AMPLIFICATION: usize = 4;

/// The largest datagram read; a ping is a few hundred bytes.
const MAX_DATAGRAM: usize = 4096;

/// The answer to one datagram, or `None` to stay silent.
pub fn answer(
    ctx: &Ctx,
    datagram: &[u8],
    client: IpAddr,
    server: Option<IpAddr>,
) -> Option<Vec<u8>> {
    let msg = decode_message(datagram).ok()?;
    let ProtocolOp::SearchRequest(req) = msg.op else {
        return None;
    };
    if !req.base.is_empty() || req.scope != SearchScope::Base {
        return None;
    }
    let budget = datagram.len().saturating_mul(AMPLIFICATION);
    let reply = |op: ProtocolOp| {
        encode_message(&LdapMessage {
            id: msg.id,
            op,
            controls: Vec::new(),
        })
    };
    let done = reply(ProtocolOp::SearchResultDone(LdapResult::success()));
    // A ping for a domain this DC does not serve gets the done message alone.
    let entry = if crate::netlogon::wants_netlogon(&req.attributes) {
        crate::netlogon::answer(ctx, &req.filter, Some(client), server)
            .map(|blob| crate::netlogon::entry(ctx, &req.attributes, &Identity::Anonymous, blob))
    } else {
        Some(crate::rootdse::entry(
            ctx,
            &req.attributes,
            &Identity::Anonymous,
        ))
    };
    // Keep the netlogon value and as many of the other attributes as fit; a ping whose
    // answer alone does not fit gets none.
    let Some(mut e) = entry else {
        tracing::debug!(filter = ?req.filter, "CLDAP ping for no domain served here");
        return (done.len() <= budget).then_some(done);
    };
    loop {
        let mut out = reply(ProtocolOp::SearchResultEntry(e.clone()));
        if out.len() + done.len() <= budget {
            out.extend_from_slice(&done);
            return Some(out);
        }
        if !trim(&mut e) {
            tracing::debug!(
                request = datagram.len(),
                answer = out.len(),
                "CLDAP answer larger than the amplification limit allows"
            );
            return None;
        }
    }
}

/// Drops the largest attribute other than `netlogon`; false when none is left.
fn trim(e: &mut SearchResultEntry) -> bool {
    let size = |a: &kauri_ldap_proto::Attribute| a.values.iter().map(Vec::len).sum::<usize>();
    let largest = e
        .attributes
        .iter()
        .enumerate()
        .filter(|(_, a)| !a.name.eq_ignore_ascii_case("netlogon"))
        .max_by_key(|(_, a)| size(a))
        .map(|(i, _)| i);
    match largest {
        Some(i) => {
            e.attributes.remove(i);
            true
        }
        None => false,
    }
}

/// Serves CLDAP on `socket` until the task is dropped.
pub async fn serve(socket: UdpSocket, ctx: Arc<Ctx>) {
    let server = socket
        .local_addr()
        .ok()
        .map(|a| a.ip())
        .filter(|ip| !ip.is_unspecified());
    let mut buf = vec![0u8; MAX_DATAGRAM];
    loop {
        let (n, peer): (usize, SocketAddr) = match socket.recv_from(&mut buf).await {
            Ok(r) => r,
            Err(e) => {
                tracing::debug!(error = %e, "CLDAP receive failed");
                continue;
            }
        };
        let Some(datagram) = buf.get(..n) else {
            continue;
        };
        match answer(&ctx, datagram, peer.ip(), server) {
            Some(reply) => {
                ctx.counters.cldap_answered.fetch_add(1, Ordering::Relaxed);
                if let Err(e) = socket.send_to(&reply, peer).await {
                    tracing::debug!(%peer, error = %e, "CLDAP reply not sent");
                }
            }
            None => {
                ctx.counters.cldap_dropped.fetch_add(1, Ordering::Relaxed);
            }
        }
    }
}
