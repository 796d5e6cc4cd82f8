//! The KDC service: one request in, one reply out. A request is decoded, routed to the AS
//! or TGS exchange, and any refusal becomes a KRB-ERROR with the code a client expects.

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::{SystemTime, UNIX_EPOCH};

use kauri_auth::krb::msg::constants::{error_code, name_type};
use kauri_auth::krb::msg::{
    application_tag, KdcKind, KdcReq, KerbErrorData, KerberosTime, KrbError, PrincipalName,
};
use kauri_ldap::ctx::Ctx;

use crate::transport::Service;
use kauri_auth::krb::replay::ReplayCache;

/// Ticket lifetimes and the clock skew allowed, from the domain's Kerberos policy.
#[derive(Debug, Clone)]
pub struct KdcSettings {
    /// Longest life of a TGT, in seconds.
    pub max_ticket_secs: i64,
    /// Longest renewal period, in seconds.
    pub max_renew_secs: i64,
    /// Longest life of a service ticket, in seconds.
    pub max_service_secs: i64,
    /// Largest clock difference accepted, in seconds.
    pub skew_secs: i64,
}

impl KdcSettings {
    /// The settings of a server configuration.
    pub fn from_config(cfg: &kauri_ldap::config::ServerConfig) -> KdcSettings {
        KdcSettings {
            max_ticket_secs: i64::from(cfg.kerberos_max_ticket_hours.max(1)) * 3600,
            max_renew_secs: i64::from(cfg.kerberos_max_renew_days) * 86_400,
            max_service_secs: i64::from(cfg.kerberos_max_service_minutes.max(10)) * 60,
            skew_secs: i64::from(cfg.kerberos_max_clock_skew_minutes) * 60,
        }
    }
}

/// A refused request: the KRB-ERROR code, a text for people, and AD's extra data.
#[derive(Debug, Clone)]
pub struct Refusal {
    /// The error code.
    pub code: i32,
    /// e-text.
    pub text: String,
    /// e-data (METHOD-DATA, or KERB-ERROR-DATA with an NTSTATUS).
    pub e_data: Option<Vec<u8>>,
    /// The client the error concerns, when known.
    pub cname: Option<PrincipalName>,
}

impl Refusal {
    /// A refusal with a code and text.
    pub fn new(code: i32, text: impl Into<String>) -> Refusal {
        Refusal {
            code,
            text: text.into(),
            e_data: None,
            cname: None,
        }
    }

    /// With AD's NTSTATUS as KERB-ERROR-DATA.
    pub fn with_status(mut self, status: u32) -> Refusal {
        self.e_data = Some(KerbErrorData::extended(status).encode());
        self
    }
}

/// The result of one exchange.
pub type Answer = Result<Vec<u8>, Refusal>;

/// How long an answer is kept for a request sent again (a UDP retransmission, or the TCP
/// retry after KRB_ERR_RESPONSE_TOO_BIG).
const LOOKASIDE_SECS: i64 = 120;
/// Answers kept at most, and their bytes at most.
const LOOKASIDE_MAX: usize = 8192;
const LOOKASIDE_MAX_BYTES: usize = 64 << 20;

/// Recent answers by a digest of their request, so a request that arrives again gets the
/// same answer instead of a replay error (MIT's KDC keeps such a "lookaside" cache too).
#[derive(Default)]
pub struct Lookaside {
    answers: parking_lot::Mutex<Answers>,
}

#[derive(Default)]
struct Answers {
    by_request: std::collections::HashMap<u128, Kept>,
    bytes: usize,
}

/// An answer and when it was given (Unix seconds).
type Kept = (i64, Arc<Vec<u8>>);

impl Lookaside {
    /// The answer given to the same request, if still kept.
    pub fn get(&self, digest: u128, now: i64) -> Option<Arc<Vec<u8>>> {
        let a = self.answers.lock();
        a.by_request
            .get(&digest)
            .filter(|(at, _)| now - at <= LOOKASIDE_SECS)
            .map(|(_, a)| a.clone())
    }

    /// Keeps an answer — unless the request already has one: a copy of it answered at the
    /// same time (and refused as a replay) must not replace the first answer.
    pub fn put(&self, digest: u128, now: i64, answer: Arc<Vec<u8>>) {
        let mut a = self.answers.lock();
        if let Some((at, _)) = a.by_request.get(&digest) {
            if now - at <= LOOKASIDE_SECS {
                return;
            }
        }
        if a.by_request.len() >= LOOKASIDE_MAX || a.bytes + answer.len() > LOOKASIDE_MAX_BYTES {
            a.by_request
                .retain(|_, (at, _)| now - *at <= LOOKASIDE_SECS);
            a.bytes = a.by_request.values().map(|(_, x)| x.len()).sum();
            if a.by_request.len() >= LOOKASIDE_MAX || a.bytes + answer.len() > LOOKASIDE_MAX_BYTES {
                // Still full of fresh answers: the oldest half goes.
                let mut ages: Vec<i64> = a.by_request.values().map(|(at, _)| *at).collect();
                ages.sort_unstable();
                let cut = ages.get(ages.len() / 2).copied().unwrap_or(now);
                a.by_request.retain(|_, (at, _)| *at > cut);
                a.bytes = a.by_request.values().map(|(_, x)| x.len()).sum();
            }
        }
        a.bytes += answer.len();
        if let Some((_, old)) = a.by_request.insert(digest, (now, answer)) {
            a.bytes = a.bytes.saturating_sub(old.len());
        }
    }
}

/// See the module documentation.
pub struct Kdc {
    /// The LDAP server's shared state: the directory and its writer.
    pub ctx: Arc<Ctx>,
    /// Authenticators seen.
    pub replay: ReplayCache,
    /// Recent answers by request.
    pub lookaside: Lookaside,
    /// This DC's host name (the PAC's logon server).
    pub logon_server: String,
}

impl Kdc {
    /// A KDC over the LDAP server's directory and writer.
    pub fn new(ctx: Arc<Ctx>) -> Kdc {
        let logon_server = ctx
            .dir
            .domain()
            .and_then(|d| d.dc_computer.as_ref().map(|dn| dn.to_string()))
            .and_then(|dn| {
                dn.split(',')
                    .next()
                    .and_then(|r| r.split_once('='))
                    .map(|(_, v)| v.to_ascii_uppercase())
            })
            .unwrap_or_else(|| "KAURI".into());
        Kdc {
            ctx,
            replay: ReplayCache::default(),
            lookaside: Lookaside::default(),
            logon_server,
        }
    }

    /// Lifetimes and skew as the settings in force say (a reload changes them).
    pub fn settings(&self) -> KdcSettings {
        KdcSettings::from_config(&self.ctx.cfg())
    }

    /// Our realm, upper case.
    pub fn realm(&self) -> String {
        self.ctx.dir.kdc_realm().unwrap_or_default()
    }

    /// `krbtgt/REALM`.
    pub fn krbtgt_name(&self) -> PrincipalName {
        PrincipalName::new(
            name_type::NT_SRV_INST,
            &["krbtgt".to_string(), self.realm()],
        )
    }

    /// Builds the KRB-ERROR for a refusal.
    pub fn error(&self, r: &Refusal, sname: Option<&PrincipalName>) -> Vec<u8> {
        let (now, usec) = now_usec();
        KrbError {
            ctime: None,
            cusec: None,
            stime: KerberosTime(now),
            susec: usec,
            error_code: r.code,
            crealm: r.cname.as_ref().map(|_| self.realm()),
            cname: r.cname.clone(),
            realm: self.realm(),
            sname: sname.cloned().unwrap_or_else(|| self.krbtgt_name()),
            e_text: (!r.text.is_empty()).then(|| r.text.clone()),
            e_data: r.e_data.clone(),
        }
        .encode()
    }

    /// Answers one request; a request seen moments ago gets the answer it got then.
    pub async fn answer(&self, request: &[u8], peer: SocketAddr) -> Option<Vec<u8>> {
        let key = kauri_auth::krb::replay::digest(request);
        let (now, _) = now_usec();
        if let Some(a) = self.lookaside.get(key, now) {
            return Some(a.as_ref().clone());
        }
        let answer = self.answer_new(request, peer).await?;
        self.lookaside.put(key, now, Arc::new(answer.clone()));
        Some(answer)
    }

    async fn answer_new(&self, request: &[u8], peer: SocketAddr) -> Option<Vec<u8>> {
        let kind = match application_tag(request) {
            Some(10) => KdcKind::As,
            Some(12) => KdcKind::Tgs,
            // Not a KDC request at all: nothing worth answering.
            _ => return None,
        };
        let req = match KdcReq::decode_kind(request, kind) {
            Ok(r) => r,
            Err(e) => {
                let r = Refusal::new(
                    error_code::KRB_ERR_GENERIC,
                    format!("malformed request: {e}"),
                );
                return Some(self.error(&r, None));
            }
        };
        let sname = req.req_body.sname.clone();
        let started = std::time::Instant::now();
        let result = match kind {
            KdcKind::As => self.as_exchange(&req, peer).await,
            KdcKind::Tgs => self.tgs_exchange(&req).await,
        };
        self.audit(kind, &req, &result, peer, started.elapsed());
        Some(match result {
            Ok(reply) => reply,
            Err(r) => {
                tracing::debug!(code = r.code, text = %r.text, "kerberos: refused");
                self.error(&r, sname.as_ref())
            }
        })
    }
}

impl Kdc {
    /// Logs a ticket request as Windows does: 4768 for a TGT (refused ones too, but not
    /// the usual first step asking for pre-authentication), 4771 for failed
    /// pre-authentication (a wrong password), 4769 for a service ticket.
    fn audit(
        &self,
        kind: KdcKind,
        req: &KdcReq,
        result: &Result<Vec<u8>, Refusal>,
        peer: SocketAddr,
        took: std::time::Duration,
    ) {
        use kauri_audit::{AuditEvent, Category, Outcome};
        let auditor = self.ctx.dir.auditor();
        if !auditor.is_enabled() {
            return;
        }
        let name = |p: &Option<PrincipalName>| {
            p.as_ref()
                .map(|n| format!("{}@{}", n.components.join("/"), req.req_body.realm))
        };
        let (id, action) = match (kind, result) {
            (KdcKind::As, Err(r)) if r.code == error_code::KDC_ERR_PREAUTH_REQUIRED => return,
            (KdcKind::As, Err(r)) if r.code == error_code::KDC_ERR_PREAUTH_FAILED => {
                (4771, "preauth")
            }
            (KdcKind::As, _) => (4768, "tgt"),
            (KdcKind::Tgs, _) => (4769, "service_ticket"),
        };
        let mut e = AuditEvent::new(
            Category::Authentication,
            action,
            Outcome::from_ok(result.is_ok()),
        )
        .with_event_id(id)
        .with_service("kdc")
        .with_mechanism("Kerberos")
        .with_remote(peer)
        .with_duration(took);
        if let Some(c) = name(&req.req_body.cname) {
            e = e.with_user(c);
        }
        if let Some(s) = name(&req.req_body.sname) {
            e = e.with_dn(s);
        }
        if let Err(r) = result {
            e = e
                .with_result_code(u32::try_from(r.code).unwrap_or(0))
                .with_reason(r.text.clone());
        }
        auditor.log(e);
    }
}

impl Service for Kdc {
    async fn handle(&self, request: Vec<u8>, peer: SocketAddr, _udp: bool) -> Option<Vec<u8>> {
        self.answer(&request, peer).await
    }

    fn too_big(&self, _request: &[u8]) -> Option<Vec<u8>> {
        Some(self.error(
            &Refusal::new(
                error_code::KRB_ERR_RESPONSE_TOO_BIG,
                "response too big for UDP",
            ),
            None,
        ))
    }

    fn too_long(&self) -> Option<Vec<u8>> {
        Some(self.error(
            &Refusal::new(error_code::KRB_ERR_FIELD_TOOLONG, "request too long"),
            None,
        ))
    }
}

/// Now, in Unix seconds and microseconds.
pub fn now_usec() -> (i64, u32) {
    let d = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap_or_default();
    (
        i64::try_from(d.as_secs()).unwrap_or(i64::MAX),
        d.subsec_micros(),
    )
}

/// Whether two principal names are the same (case-insensitively, as AD compares them).
pub fn same_name(a: &PrincipalName, b: &PrincipalName) -> bool {
    a.components.len() == b.components.len()
        && a.components
            .iter()
            .zip(&b.components)
            .all(|(x, y)| x.eq_ignore_ascii_case(y))
}
