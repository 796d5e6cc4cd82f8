//! GSS-TSIG (RFC 3645): a client negotiates a security context in TKEY queries (mode 3,
//! the GSS token in the key data: SPNEGO carrying Kerberos, or Kerberos alone), then signs
//! its updates with TSIG records whose MAC is a GSS MIC over RFC 8945's digest input; the
//! server verifies with the context and signs its answers the same way. Both the IETF
//! algorithm name `gss-tsig` and Microsoft's older `gss.microsoft.com` are accepted.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::{Duration, Instant};

use kauri_auth::krb::context::GssContext;
use kauri_dns_proto::rdata::{class, rtype};
use kauri_dns_proto::tsig::{self as ptsig, Tkey, Tsig, GSS_MICROSOFT, GSS_TSIG};
use kauri_dns_proto::wire::{rcode, Message, Record, RecordData};
use kauri_dns_proto::Name;
use kauri_domain::directory::{now_secs, Account};
use parking_lot::Mutex;

/// How long a negotiated context may sign (Windows keeps them for hours; BIND asks for
/// one hour at most).
const KEY_LIFETIME: Duration = Duration::from_secs(3600);

/// Contexts kept at most; past it the oldest are dropped.
const MAX_KEYS: usize = 10_000;

/// TSIG's allowed clock difference when the client states none (RFC 8945 §10: 300 s).
const FUDGE: u16 = 300;

/// TKEY mode 3: GSS-API negotiation.
const MODE_GSSAPI: u16 = 3;

/// TSIG/TKEY error codes (RFC 8945 §5.3, RFC 2930 §2.6).
pub mod error {
    /// The MAC did not verify.
    pub const BADSIG: u16 = 16;
    /// The key is unknown.
    pub const BADKEY: u16 = 17;
    /// The time is outside the fudge.
    pub const BADTIME: u16 = 18;
    /// The TKEY mode is not supported.
    pub const BADMODE: u16 = 19;
    /// The algorithm is not supported.
    pub const BADALG: u16 = 21;
}

/// A negotiated context and who it belongs to.
pub struct GssKey {
    /// The context (sequence numbers move with each MIC).
    pub context: GssContext,
    /// The account the client authenticated as.
    pub account: Account,
    /// The algorithm name the client negotiated with.
    pub algorithm: Name,
    /// The client digests the key name as written rather than in canonical form.
    pub name_as_written: bool,
    created: Instant,
}

/// The contexts negotiated so far, by key name.
#[derive(Default)]
pub struct GssKeys {
    keys: Mutex<HashMap<Name, Arc<Mutex<GssKey>>>>,
}

impl GssKeys {
    fn insert(&self, name: &Name, key: GssKey) {
        let mut keys = self.keys.lock();
        keys.retain(|_, k| k.lock().created.elapsed() < KEY_LIFETIME);
        if keys.len() >= MAX_KEYS {
            let oldest = keys
                .iter()
                .min_by_key(|(_, k)| k.lock().created)
                .map(|(n, _)| n.clone());
            if let Some(n) = oldest {
                keys.remove(&n);
            }
        }
        keys.insert(name.clone(), Arc::new(Mutex::new(key)));
    }

    fn get(&self, name: &Name) -> Option<Arc<Mutex<GssKey>>> {
        let k = self.keys.lock().get(name).cloned()?;
        let fresh = k.lock().created.elapsed() < KEY_LIFETIME;
        fresh.then_some(k)
    }
}

fn is_gss(algorithm: &Name) -> bool {
    let gss = |t: &str| Name::parse(t).is_ok_and(|n| n == *algorithm);
    gss(GSS_TSIG) || gss(GSS_MICROSOFT)
}

/// Puts the key name as written in a digest input whose canonical (lowercase) form of it
/// starts at `at` (both have the same length); false when they are the same bytes.
fn with_name_as_written(digest: &mut [u8], at: usize, name: &Name) -> bool {
    let written = name.to_wire();
    match digest.get_mut(at..at + written.len()) {
        Some(slot) if *slot != written[..] => {
            slot.copy_from_slice(&written);
            true
        }
        _ => false,
    }
}

/// What verifying a request's TSIG found.
pub enum Verified {
    /// The request carries no TSIG.
    Unsigned,
    /// Signed by a known context: who, and what the response's MAC must cover.
    Signed {
        /// The context.
        key: Arc<Mutex<GssKey>>,
        /// The key name.
        name: Name,
        /// The request's TSIG.
        tsig: Tsig,
    },
    /// The TSIG does not verify: the update is refused, unsigned.
    Failed {
        /// The key name.
        name: Name,
        /// Why: BADKEY, BADSIG or BADTIME.
        error: u16,
    },
}

/// The TSIG record of a decoded message (the last additional record) and its owner name.
fn tsig_of(msg: &Message) -> Option<(Name, Tsig)> {
    match msg.additional.last() {
        Some(Record {
            name,
            data: RecordData::Tsig(t),
            ..
        }) => Some((name.clone(), t.clone())),
        _ => None,
    }
}

/// Verifies the TSIG of a request, when it has one.
pub fn verify(keys: &GssKeys, msg: &Message, raw: &[u8], tsig_start: Option<usize>) -> Verified {
    let (Some((name, tsig)), Some(start)) = (tsig_of(msg), tsig_start) else {
        return Verified::Unsigned;
    };
    let fail = |error| Verified::Failed {
        name: name.clone(),
        error,
    };
    if !is_gss(&tsig.algorithm) {
        return fail(error::BADKEY);
    }
    let Some(key) = keys.get(&name) else {
        return fail(error::BADKEY);
    };
    let Ok(mut digest) = ptsig::request_digest_input(raw, start, &name, &tsig) else {
        return fail(error::BADSIG);
    };
    {
        let mut k = key.lock();
        // RFC 8945 digests the key name in canonical (lowercase) form; BIND and Samba as
        // written. Either is taken, and the answer is signed the same way.
        if k.context.verify_mic(&digest, &tsig.mac).is_ok() {
            k.name_as_written = false;
        } else if with_name_as_written(&mut digest, start, &name)
            && k.context.verify_mic(&digest, &tsig.mac).is_ok()
        {
            k.name_as_written = true;
        } else {
            return fail(error::BADSIG);
        }
    }
    let now = now_secs();
    let fudge = u64::from(tsig.fudge);
    if now.abs_diff(tsig.time_signed) > fudge {
        return fail(error::BADTIME);
    }
    Verified::Signed { key, name, tsig }
}

/// Signs a finished response with the context a request was signed with (the MAC covers
/// the request's MAC with its length, then the response, then the TSIG variables).
pub fn sign(
    key: &Mutex<GssKey>,
    name: &Name,
    request_mac: Option<&[u8]>,
    id: u16,
    mut response: Vec<u8>,
) -> Vec<u8> {
    let mut k = key.lock();
    let mut tsig = Tsig {
        algorithm: k.algorithm.clone(),
        time_signed: now_secs(),
        fudge: FUDGE,
        mac: Vec::new(),
        original_id: id,
        error: 0,
        other: Vec::new(),
    };
    // Windows leaves the request MAC's length out for gss.microsoft.com (and so does this
    // server); an unsigned request (a TKEY query) has no request MAC at all.
    let microsoft = Name::parse(GSS_MICROSOFT).is_ok_and(|n| n == k.algorithm);
    let (mut digest, name_at) = match request_mac {
        Some(mac) if !microsoft => (
            ptsig::response_digest_input(mac, &response, name, &tsig),
            2 + mac.len() + response.len(),
        ),
        other => {
            let mac = other.unwrap_or_default();
            let mut d = ptsig::response_digest_input(mac, &response, name, &tsig);
            d.drain(..2);
            (d, mac.len() + response.len())
        }
    };
    if k.name_as_written {
        with_name_as_written(&mut digest, name_at, name);
    }
    match k.context.get_mic(&digest) {
        Ok(mic) => {
            tsig.mac = mic;
            if ptsig::append_tsig(&mut response, name, &tsig).is_err() {
                tracing::warn!("dns: could not sign a response");
            }
        }
        Err(e) => tracing::warn!(error = %e, "dns: could not sign a response"),
    }
    response
}

/// The TKEY record of a query (answer or additional section, as clients differ).
fn tkey_of(msg: &Message) -> Option<(Name, Tkey)> {
    msg.additional
        .iter()
        .chain(&msg.answers)
        .find_map(|r| match &r.data {
            RecordData::Tkey(t) => Some((r.name.clone(), t.clone())),
            _ => None,
        })
}

/// The outcome of a TKEY query.
pub struct Negotiated {
    /// The response message (unsigned).
    pub reply: Message,
    /// Set when a context was made: the response must be signed with it.
    pub key: Option<(Name, Arc<Mutex<GssKey>>)>,
}

/// Answers a TKEY query: accepts the client's token with `accept` and, when the context
/// is made, stores it under the key name and answers with the server's token.
pub fn negotiate(
    keys: &GssKeys,
    msg: &Message,
    accept: impl FnOnce(
        &[u8],
    ) -> Result<(kauri_auth::krb::acceptor::Accepted, Account, Vec<u8>), String>,
) -> Negotiated {
    let mut reply = Message::response_to(msg);
    let Some((name, tkey)) = tkey_of(msg) else {
        reply.header.rcode = rcode::FORMERR;
        return Negotiated { reply, key: None };
    };
    let mut answer = Tkey {
        algorithm: tkey.algorithm.clone(),
        inception: tkey.inception,
        expiration: tkey.expiration,
        mode: tkey.mode,
        error: 0,
        key: Vec::new(),
        other: Vec::new(),
    };
    let respond = |mut reply: Message, answer: Tkey| {
        reply.answers.push(Record {
            name: name.clone(),
            rtype: rtype::TKEY,
            class: class::ANY,
            ttl: 0,
            data: RecordData::Tkey(answer),
        });
        reply
    };
    if tkey.mode != MODE_GSSAPI {
        answer.error = error::BADMODE;
        return Negotiated {
            reply: respond(reply, answer),
            key: None,
        };
    }
    if !is_gss(&tkey.algorithm) {
        answer.error = error::BADALG;
        return Negotiated {
            reply: respond(reply, answer),
            key: None,
        };
    }
    match accept(&tkey.key) {
        Ok((accepted, account, token)) => {
            tracing::info!(key = %name, account = %account.dn, "dns: GSS-TSIG context made");
            answer.key = token;
            let now = u32::try_from(now_secs()).unwrap_or(u32::MAX);
            answer.inception = now;
            answer.expiration = now.saturating_add(KEY_LIFETIME.as_secs() as u32);
            keys.insert(
                &name,
                GssKey {
                    context: accepted.context,
                    account,
                    algorithm: tkey.algorithm.clone(),
                    name_as_written: false,
                    created: Instant::now(),
                },
            );
            let key = keys.get(&name).map(|k| (name.clone(), k));
            Negotiated {
                reply: respond(reply, answer),
                key,
            }
        }
        Err(why) => {
            tracing::info!(key = %name, error = %why, "dns: GSS-TSIG negotiation refused");
            answer.error = error::BADKEY;
            Negotiated {
                reply: respond(reply, answer),
                key: None,
            }
        }
    }
}
