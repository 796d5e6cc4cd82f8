//! One DNS message in, its answer out: queries answered from the directory's zones (or
//! forwarded, or refused), zone transfers where allowed, dynamic updates and GSS-TSIG key
//! negotiation handed to their modules. Whatever arrives, the server answers with a DNS
//! error or stays silent; it never fails on a message.

use std::net::{IpAddr, SocketAddr};
use std::sync::Arc;

use kauri_db::DbRead;
use kauri_dns_proto::rdata::{class, rtype};
use kauri_dns_proto::wire::{opcode, peek_header, rcode, Edns, Header, Message};
use kauri_domain::directory::{now_secs, DirError, DirResult};
use kauri_kv::lmdb::LmdbBackend;
use kauri_ldap::ctx::Ctx;

use crate::answer::{self, Answer};
use crate::forward::Forwarder;
use crate::transport::Service;
use crate::tsig::{self, GssKeys, Verified};
use crate::update::{self, Requester};
use crate::zones::{zone_of, Catalog};

/// The largest UDP reply offered through EDNS (RFC 9715 / DNS Flag Day 2020).
pub const MAX_EDNS_UDP: u16 = 1232;

/// The DNS server.
pub struct Dns {
    /// The server's shared state.
    pub ctx: Arc<Ctx>,
    /// The zones.
    pub catalog: Catalog,
    /// Where names outside the zones go, when anywhere.
    pub forwarder: Option<Forwarder>,
    /// Who may transfer zones.
    pub transfers: Vec<Allowed>,
    /// GSS-TSIG contexts.
    pub keys: GssKeys,
}

/// An address or network allowed something.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Allowed {
    /// Everyone.
    Any,
    /// An address and prefix length.
    Net(IpAddr, u8),
}

impl Allowed {
    /// Parses `any`, an address, or `address/prefix`.
    pub fn parse(text: &str) -> Option<Allowed> {
        let t = text.trim();
        if t.eq_ignore_ascii_case("any") {
            return Some(Allowed::Any);
        }
        let (addr, len) = match t.split_once('/') {
            Some((a, l)) => (a.parse::<IpAddr>().ok()?, l.parse::<u8>().ok()?),
            None => {
                let a = t.parse::<IpAddr>().ok()?;
                (a, if a.is_ipv4() { 32 } else { 128 })
            }
        };
        let max = if addr.is_ipv4() { 32 } else { 128 };
        (len <= max).then_some(Allowed::Net(addr, len))
    }

    /// Whether `ip` is allowed.
    pub fn allows(&self, ip: IpAddr) -> bool {
        let ip = match ip {
            IpAddr::V6(v6) => v6.to_ipv4_mapped().map(IpAddr::V4).unwrap_or(ip),
            v4 => v4,
        };
        match (self, ip) {
            (Allowed::Any, _) => true,
            (Allowed::Net(IpAddr::V4(n), len), IpAddr::V4(a)) => {
                let mask = u32::MAX.checked_shl(32 - u32::from(*len)).unwrap_or(0);
                u32::from(*n) & mask == u32::from(a) & mask
            }
            (Allowed::Net(IpAddr::V6(n), len), IpAddr::V6(a)) => {
                let mask = u128::MAX.checked_shl(128 - u32::from(*len)).unwrap_or(0);
                u128::from(*n) & mask == u128::from(a) & mask
            }
            _ => false,
        }
    }
}

/// A reply carrying only a header: FORMERR for a message that does not decode.
pub fn error_reply(header: &Header, code: u8) -> Vec<u8> {
    let mut m = Message::default();
    m.header.id = header.id;
    m.header.opcode = header.opcode;
    m.header.qr = true;
    m.header.rd = header.rd;
    m.header.rcode = code;
    m.encode()
}

/// The largest reply a UDP request allows: 512 bytes, or its EDNS buffer size (at most
/// what the server offers).
fn udp_limit(req: &Message) -> usize {
    match req.edns() {
        Some(e) => usize::from(e.udp_size.clamp(512, MAX_EDNS_UDP)),
        None => 512,
    }
}

impl Dns {
    /// The answer to one message (see [`Service::handle`]).
    pub async fn answer(&self, request: &[u8], peer: SocketAddr, udp: bool) -> Vec<Vec<u8>> {
        let req = match Message::decode_with_offsets(request) {
            Ok(d) => d,
            Err(e) => {
                tracing::debug!(peer = %peer, error = %e, "dns: malformed message");
                return match peek_header(request) {
                    Some(h) if !h.qr => vec![error_reply(&h, rcode::FORMERR)],
                    _ => Vec::new(),
                };
            }
        };
        let msg = req.message;
        if msg.header.qr {
            return Vec::new();
        }
        let max = if udp {
            udp_limit(&msg)
        } else {
            usize::from(u16::MAX)
        };
        let handled = match msg.header.opcode {
            opcode::QUERY => self.query(&msg, peer, udp).await,
            opcode::UPDATE => self.update(&msg, request, req.tsig_start, peer).await,
            _ => {
                let mut m = Message::response_to(&msg);
                m.header.rcode = rcode::NOTIMP;
                Reply::One(m)
            }
        };
        let mut reply = match handled {
            Reply::One(m) => m,
            Reply::Many(all) => return all,
            Reply::Raw(bytes) => return vec![bytes],
        };
        if let Some(e) = msg.edns() {
            let mut ours = Edns {
                udp_size: MAX_EDNS_UDP,
                ext_rcode: 0,
                version: 0,
                dnssec_ok: false,
                options: Vec::new(),
            };
            if e.version > 0 {
                // BADVERS is 16: its high bits go in the OPT record.
                ours.ext_rcode = 1;
                reply.header.rcode = 0;
                reply.answers.clear();
                reply.authority.clear();
                reply.additional.clear();
            }
            reply.set_edns(Some(ours));
        }
        vec![reply.encode_limited(max)]
    }

    /// Reads the zones in one snapshot of the directory.
    fn with_zones<T>(
        &self,
        f: impl FnOnce(&DbRead<'_, LmdbBackend>, u64) -> DirResult<T>,
    ) -> DirResult<T> {
        let usn = self.ctx.db.highest_committed_usn();
        let snap = self.ctx.db.read().map_err(DirError::from)?;
        f(&snap, usn)
    }

    async fn query(&self, msg: &Message, peer: SocketAddr, udp: bool) -> Reply {
        let mut reply = Message::response_to(msg);
        let [q] = msg.questions.as_slice() else {
            reply.header.rcode = rcode::FORMERR;
            return Reply::One(reply);
        };
        if q.qclass != class::IN && q.qclass != class::ANY {
            reply.header.rcode = rcode::REFUSED;
            return Reply::One(reply);
        }
        match q.qtype {
            rtype::TKEY => return self.tkey(msg, peer).await,
            rtype::AXFR | rtype::IXFR => return self.transfer(msg, peer, udp),
            _ => {}
        }
        let found = self
            .with_zones(|snap, usn| answer::resolve(snap, &self.catalog, usn, &q.name, q.qtype));
        match found {
            Ok(Some(a)) => fill(&mut reply, a),
            Ok(None) => {
                if let (Some(f), true) = (&self.forwarder, msg.header.rd) {
                    if let Some(bytes) = f.forward(msg).await {
                        return Reply::Raw(bytes);
                    }
                    reply.header.rcode = rcode::SERVFAIL;
                } else {
                    reply.header.rcode = rcode::REFUSED;
                }
            }
            Err(e) => {
                tracing::warn!(error = %e, name = %q.name, "dns: lookup failed");
                reply.header.rcode = rcode::SERVFAIL;
            }
        }
        reply.header.ra = self.forwarder.is_some();
        Reply::One(reply)
    }

    /// A zone transfer: refused unless the peer is allowed, and only over TCP.
    fn transfer(&self, msg: &Message, peer: SocketAddr, udp: bool) -> Reply {
        let mut reply = Message::response_to(msg);
        let allowed = self.transfers.iter().any(|a| a.allows(peer.ip()));
        let Some(q) = msg.questions.first() else {
            reply.header.rcode = rcode::FORMERR;
            return Reply::One(reply);
        };
        if !allowed || udp {
            reply.header.rcode = rcode::REFUSED;
            return Reply::One(reply);
        }
        let records = self.with_zones(|snap, usn| {
            let zones = self.catalog.zones(snap, usn)?;
            match zone_of(&zones, &q.name) {
                Some(z) if z.name == q.name => answer::zone_records(snap, z).map(Some),
                _ => Ok(None),
            }
        });
        let records = match records {
            Ok(Some(r)) if !r.is_empty() => r,
            Ok(_) => {
                reply.header.rcode = rcode::NOTAUTH;
                return Reply::One(reply);
            }
            Err(e) => {
                tracing::warn!(error = %e, "dns: zone transfer failed");
                reply.header.rcode = rcode::SERVFAIL;
                return Reply::One(reply);
            }
        };
        // The SOA opens and closes the transfer; records go in messages of bounded size.
        let soa = records.first().cloned();
        let mut all = records;
        all.extend(soa);
        let mut messages = Vec::new();
        let mut current = Message::response_to(msg);
        current.header.aa = true;
        for r in all {
            current.answers.push(r);
            if current.answers.len() >= 100 {
                messages.push(current.encode());
                current = Message::response_to(msg);
                current.header.aa = true;
                current.questions.clear();
            }
        }
        if !current.answers.is_empty() {
            messages.push(current.encode());
        }
        tracing::info!(zone = %q.name, peer = %peer, messages = messages.len(), "dns: zone transferred");
        Reply::Many(messages)
    }
}

impl Dns {
    /// A TKEY query: GSS-TSIG negotiation with the Kerberos acceptor.
    async fn tkey(&self, msg: &Message, peer: SocketAddr) -> Reply {
        let ctx = self.ctx.clone();
        let accept = move |token: &[u8]| accept_token(&ctx, token);
        let done = tsig::negotiate(&self.keys, msg, accept);
        tracing::debug!(peer = %peer, made = done.key.is_some(), "dns: TKEY");
        match done.key {
            Some((name, key)) => Reply::Raw(tsig::sign(
                &key,
                &name,
                None,
                msg.header.id,
                done.reply.encode(),
            )),
            None => Reply::One(done.reply),
        }
    }

    /// A dynamic update, signed or not.
    async fn update(
        &self,
        msg: &Message,
        raw: &[u8],
        tsig_start: Option<usize>,
        peer: SocketAddr,
    ) -> Reply {
        let mut reply = Message::response_to(msg);
        let signed = match tsig::verify(&self.keys, msg, raw, tsig_start) {
            Verified::Unsigned => None,
            Verified::Signed { key, name, tsig } => Some((key, name, tsig)),
            Verified::Failed { name, error } => {
                // AD refuses such an update outright, unsigned (RFC 8945 would answer
                // NOTAUTH with the TSIG error; Windows and Samba answer REFUSED).
                tracing::info!(peer = %peer, key = %name, error, "dns: update with a bad signature");
                reply.header.rcode = rcode::REFUSED;
                return Reply::One(reply);
            }
        };
        let code = match update::zone_question(msg) {
            Err(code) => code,
            Ok(zone_name) => {
                let zones = self.with_zones(|snap, usn| self.catalog.zones(snap, usn));
                match zones {
                    Err(e) => {
                        tracing::warn!(error = %e, "dns: update failed");
                        rcode::SERVFAIL
                    }
                    Ok(zones) => match zones.iter().find(|z| z.name == *zone_name) {
                        None => rcode::NOTAUTH,
                        Some(zone) => {
                            let requester = signed.as_ref().map(|(k, _, _)| Requester {
                                account: k.lock().account.clone(),
                            });
                            let code = update::update(
                                &self.ctx,
                                &self.catalog,
                                msg,
                                zone,
                                requester,
                                now_secs(),
                            )
                            .await;
                            tracing::info!(peer = %peer, zone = %zone.name, rcode = code, signed = signed.is_some(), "dns: update");
                            code
                        }
                    },
                }
            }
        };
        reply.header.rcode = code;
        match signed {
            Some((key, name, t)) => Reply::Raw(tsig::sign(
                &key,
                &name,
                Some(&t.mac),
                msg.header.id,
                reply.encode(),
            )),
            None => Reply::One(reply),
        }
    }
}

/// Accepts a TKEY's GSS token: SPNEGO carrying Kerberos (answered with a NegTokenResp
/// holding the AP-REP and the mechanism-list MIC), or a bare Kerberos token.
fn accept_token(
    ctx: &Ctx,
    token: &[u8],
) -> Result<
    (
        kauri_auth::krb::acceptor::Accepted,
        kauri_domain::directory::Account,
        Vec<u8>,
    ),
    String,
> {
    use kauri_ldap::krb_accept::accept_for_dc;
    if let Some(init) = kauri_auth::spnego::kerberos_init(token) {
        let (mut accepted, account) = accept_for_dc(ctx, &init.token).map_err(|e| e.to_string())?;
        let our_mic = kauri_ldap::krb_accept::mech_list_mic(
            &mut accepted,
            init.mech_list.as_deref(),
            init.mic.as_deref(),
            init.first_choice,
        )
        .map_err(|e| e.to_string())?;
        let out = kauri_auth::spnego::kerberos_response(
            &init.mech,
            accepted.reply.as_deref(),
            our_mic.as_deref(),
        );
        return Ok((accepted, account, out));
    }
    let (accepted, account) = accept_for_dc(ctx, token).map_err(|e| e.to_string())?;
    let out = accepted.reply.clone().unwrap_or_default();
    Ok((accepted, account, out))
}

/// What a handler answers.
pub enum Reply {
    /// One message, EDNS and size limits still to apply.
    One(Message),
    /// Finished messages (a zone transfer).
    Many(Vec<Vec<u8>>),
    /// A finished message (a forwarded answer, a signed reply).
    Raw(Vec<u8>),
}

fn fill(reply: &mut Message, a: Answer) {
    reply.header.aa = a.authoritative;
    reply.header.rcode = a.rcode;
    reply.answers = a.answers;
    reply.authority = a.authority;
    reply.additional = a.additional;
}

impl Service for Dns {
    async fn handle(&self, request: Vec<u8>, peer: SocketAddr, udp: bool) -> Vec<Vec<u8>> {
        self.answer(&request, peer, udp).await
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn allowed_networks() {
        let n = Allowed::parse("10.1.0.0/16").unwrap();
        assert!(n.allows("10.1.2.3".parse().unwrap()));
        assert!(!n.allows("10.2.0.1".parse().unwrap()));
        assert!(n.allows("::ffff:10.1.0.9".parse().unwrap()));
        assert!(Allowed::parse("any")
            .unwrap()
            .allows("::1".parse().unwrap()));
        assert!(Allowed::parse("10.0.0.0/33").is_none());
        assert!(Allowed::parse("127.0.0.1")
            .unwrap()
            .allows("127.0.0.1".parse().unwrap()));
    }
}
