//! One replayed conversation: a client with its own connections sending its planned
//! packets at their times, one at a time as real clients do, and timing each answer.
//!
//! What each recorded operation becomes:
//! - `ldap:0` bind: a new connection, then a simple bind, or for SASL a GSS-SPNEGO bind:
//!   with Kerberos where the recording used it (the GSSAPI mechanism, or Kerberos packets
//!   earlier in the conversation) and the server has a KDC — the service ticket fetched
//!   once per conversation, untimed, as a ticket cache keeps it — else with NTLM and
//!   sealing, as Windows binds; a SASL bind request without a mechanism is a later step of
//!   the bind before, not a new one;
//! - `ldap:2` unbind: the connection is closed (not timed: it has no answer);
//! - `ldap:3` search: the recorded scope and attributes, at a real DN of the recorded
//!   shape, the filter's values filled from the directory (no filter: a user lookup at the
//!   domain head, else `(objectClass=*)`); a search without a bind first binds simply,
//!   untimed;
//! - `ldap:6/8/10/12` modify/add/delete/rename and `ldap:14` compare, `ldap:23` extended:
//!   on the conversation's own objects in the scratch OU (an object it needs first is
//!   made untimed), compare and "Who am I?" on real entries;
//! - `cldap:3`: a netlogon ping; `dns:0`: a query for a locator, DC or computer name;
//! - `kerberos:10` an AS exchange, `kerberos:12`/`14` a TGS exchange for the DC's LDAP
//!   service (a TGT fetched untimed first); a Kerberos packet of unknown type makes the
//!   conversation prefer Kerberos, as Samba's replay takes it;
//! - server messages (responses) and protocols Kauri does not speak (SMB, DCE/RPC, …) are
//!   skipped, counted by protocol.

use std::collections::HashMap;
use std::time::Duration;

use kauri_ldap_client::proto::{ModOp, ResultCode, SearchScope};
use kauri_ldap_client::{search_request, ConnectOptions, Filter, LdapClient};
use kauri_traffic::plan::{PlannedConversation, PlannedPacket};
use kauri_traffic::random::Rng;
use tokio::net::UdpSocket;
use tokio::time::Instant;

use super::krb::{self, Credential};
use super::outcome::Failure;

/// The value of a step's set-up, or the step failed before its operation was sent.
macro_rules! or_step {
    ($e:expr) => {
        match $e {
            Ok(v) => v,
            Err(f) => return Step::Timed(Duration::ZERO, Err(f)),
        }
    };
}
use super::setup::{Account, Ctx};

/// Latencies and failures of one kind of operation.
#[derive(Debug, Default)]
pub struct Kind {
    /// Seconds each successful operation took.
    pub latencies: Vec<f64>,
    /// Operations that failed.
    pub failed: u64,
}

/// What a conversation (or a whole run, once merged) recorded.
#[derive(Debug, Default)]
pub struct Tally {
    /// By (protocol, op code).
    pub kinds: HashMap<(String, String), Kind>,
    /// Failures by reason.
    pub failures: HashMap<String, u64>,
    /// How late each operation was sent, in seconds.
    pub misses: Vec<f64>,
    /// How late the client woke for operations it had been waiting to send (its own lag).
    pub lags: Vec<f64>,
    /// Planned packets not sent, by protocol.
    pub skipped: HashMap<String, u64>,
    /// Seconds from the run's start to this conversation's last answer.
    pub last_done: f64,
}

impl Tally {
    /// Adds another tally into this one.
    pub fn merge(&mut self, other: Tally) {
        for (k, v) in other.kinds {
            let mine = self.kinds.entry(k).or_default();
            mine.latencies.extend(v.latencies);
            mine.failed += v.failed;
        }
        for (k, v) in other.failures {
            *self.failures.entry(k).or_default() += v;
        }
        self.misses.extend(other.misses);
        self.lags.extend(other.lags);
        for (k, v) in other.skipped {
            *self.skipped.entry(k).or_default() += v;
        }
        self.last_done = self.last_done.max(other.last_done);
    }
}

/// What executing one planned packet came to.
enum Step {
    /// An operation was timed: its latency and outcome.
    Timed(Duration, Result<(), Failure>),
    /// The packet is not a client operation (a response, an unbind).
    NotAnOp,
    /// The packet asks for something this replay cannot send; the label says what.
    Skipped(String),
}

/// A replayed client.
struct Client<'c> {
    ctx: &'c Ctx,
    account: Option<Account>,
    rng: Rng,
    id: u64,
    ldap: Option<LdapClient>,
    bound: bool,
    kerberos: bool,
    tgt: Option<Credential>,
    ldap_ticket: Option<Credential>,
    cldap: Option<UdpSocket>,
    dns: Option<UdpSocket>,
    message_id: i32,
    own: Vec<String>,
    made: u64,
}

/// The OID of the GSSAPI (Kerberos V5) SASL mechanism as summaries name it.
const GSSAPI_OID: &str = "1.2.840.113554.1.2.2";

/// Names RFC 4511 gives LDAP's operations, and the other protocols' descriptions.
pub fn describe(protocol: &str, opcode: &str) -> String {
    let known = match (protocol, opcode) {
        ("ldap" | "cldap", "0") => "bindRequest",
        ("ldap" | "cldap", "2") => "unbindRequest",
        ("ldap" | "cldap", "3") => "searchRequest",
        ("ldap", "6") => "modifyRequest",
        ("ldap", "8") => "addRequest",
        ("ldap", "10") => "delRequest",
        ("ldap", "12") => "modDNRequest",
        ("ldap", "14") => "compareRequest",
        ("ldap", "16") => "abandonRequest",
        ("ldap", "23") => "extendedReq",
        ("dns", "0") => "query",
        ("kerberos", "10") => "krb-as-req",
        ("kerberos", "12") => "krb-tgs-req",
        ("kerberos", "14") => "krb-ap-req",
        _ => "",
    };
    known.to_string()
}

/// Whether a planned packet is a timed operation of this replay (not a response, an
/// unbind, a hint or a SASL bind's later step, which the bind before it carries), for the
/// offered rate.
pub fn is_operation(p: &PlannedPacket) -> bool {
    let op = matches!(
        (p.protocol.as_str(), p.opcode.as_str()),
        ("ldap", "0" | "3" | "6" | "8" | "10" | "12" | "14" | "23")
            | ("cldap", "3")
            | ("dns", "0")
            | ("kerberos", "10" | "12" | "14")
    );
    op && !(p.protocol == "ldap" && p.opcode == "0" && is_sasl_continuation(&p.extra))
}

/// A SASL bind's later steps carry no mechanism: the bind before made them.
fn is_sasl_continuation(extra: &[String]) -> bool {
    extra.get(5).is_some_and(|s| s == "sasl") && extra.get(6).is_none_or(|m| m.is_empty())
}

/// Attributes a modify may change on a scratch contact; others recorded are mapped to
/// `description`.
const WRITABLE: &[&str] = &[
    "description",
    "displayName",
    "givenName",
    "sn",
    "mail",
    "telephoneNumber",
    "title",
    "department",
    "company",
    "info",
    "physicalDeliveryOfficeName",
];

impl<'c> Client<'c> {
    fn next_id(&mut self) -> i32 {
        self.message_id = self.message_id.wrapping_add(1).max(1);
        self.message_id
    }

    async fn connect(&mut self) -> Result<(), Failure> {
        let opts = ConnectOptions::default()
            .with_timeout(Some(self.ctx.op_timeout))
            .with_connect_timeout(Some(self.ctx.op_timeout));
        let c = LdapClient::connect(&format!("ldap://{}", self.ctx.ldap_addr), &opts)
            .await
            .map_err(Failure::client)?;
        self.ldap = Some(c);
        self.bound = false;
        Ok(())
    }

    /// A connection, bound simply as the conversation's account when it is not yet.
    async fn session(&mut self) -> Result<&mut LdapClient, Failure> {
        if self.ldap.as_ref().is_none_or(|c| c.is_closed()) {
            self.connect().await?;
        }
        if !self.bound {
            if let Some(a) = &self.account {
                let (name, pw) = (a.bind_name.clone(), a.password.clone());
                let c = self.ldap.as_mut().ok_or_else(closed)?;
                let r = c
                    .simple_bind(&name, pw.as_bytes())
                    .await
                    .map_err(Failure::client)?;
                if r.code != ResultCode::SUCCESS {
                    return Err(Failure::ldap(r.code));
                }
            }
            self.bound = true;
        }
        self.ldap.as_mut().ok_or_else(closed)
    }

    async fn bind(&mut self, extra: &[String]) -> Step {
        if is_sasl_continuation(extra) {
            return Step::NotAnOp;
        }
        if let Some(c) = self.ldap.take() {
            let _ = c.unbind().await;
        }
        or_step!(self.connect().await);
        let Some(a) = self.account.clone() else {
            return Step::Skipped("ldap bind (no account)".into());
        };
        let simple = extra.get(5).is_some_and(|s| s == "simple");
        // Kerberos where the recording used it (the GSSAPI mechanism, or Kerberos packets
        // earlier in the conversation) and the server has a KDC; NTLM otherwise.
        let kerberos = !simple
            && self.ctx.services.kdc
            && (self.kerberos || extra.get(6).is_some_and(|m| m == GSSAPI_OID));
        let token = if kerberos {
            let cred = or_step!(self.service_ticket(&a).await);
            Some(or_step!(krb::spnego_kerberos_token(
                &self.ctx.realm,
                &a.sam,
                &cred
            )))
        } else {
            None
        };
        let Some(c) = self.ldap.as_mut() else {
            return Step::Timed(Duration::ZERO, Err(closed()));
        };
        let t = Instant::now();
        let r = if simple {
            c.simple_bind(&a.bind_name, a.password.as_bytes()).await
        } else if let Some(token) = token {
            c.sasl_bind("GSS-SPNEGO", Some(token))
                .await
                .map(|r| r.result)
        } else {
            c.ntlm_bind(&a.sam, &self.ctx.netbios, &a.password, true)
                .await
        };
        let out = match r {
            Ok(r) if r.code == ResultCode::SUCCESS => {
                self.bound = true;
                Ok(())
            }
            Ok(r) => Err(Failure::ldap(r.code)),
            Err(e) => Err(Failure::client(e)),
        };
        Step::Timed(t.elapsed(), out)
    }

    /// A ticket for the DC's LDAP service, fetched (untimed) once per conversation, as a
    /// client's ticket cache keeps it.
    async fn service_ticket(&mut self, a: &Account) -> Result<Credential, Failure> {
        if let Some(c) = &self.ldap_ticket {
            return Ok(c.clone());
        }
        let key = self.ctx.key_of(a)?;
        let (kdc, realm) = (&self.ctx.kdc_addr, &self.ctx.realm);
        if self.tgt.is_none() {
            self.tgt = Some(krb::as_exchange(kdc, realm, &a.sam, &key).await?);
        }
        let tgt = self.tgt.as_ref().ok_or_else(closed)?;
        let host = self.ctx.dc_host.clone();
        let c = krb::tgs_exchange(kdc, realm, &a.sam, tgt, &["ldap", &host]).await?;
        self.ldap_ticket = Some(c.clone());
        Ok(c)
    }

    async fn search(&mut self, extra: &[String]) -> Step {
        let get = |i: usize| extra.get(i).map(String::as_str).unwrap_or("");
        let scope = match get(0) {
            "1" => SearchScope::OneLevel,
            "2" => SearchScope::Subtree,
            _ => SearchScope::Base,
        };
        let sig = get(1);
        let base = if sig.is_empty() {
            String::new()
        } else {
            self.ctx.dn_like(sig, &mut self.rng)
        };
        let shape = get(2);
        let text = if !shape.is_empty() {
            super::filter::fill(shape, &self.ctx.values, &mut self.rng)
        } else if scope != SearchScope::Base && super::setup::shape(sig).is_empty() {
            self.ctx
                .values
                .pick("sAMAccountName", &mut self.rng)
                .map(|v| {
                    let mut f = String::from("(&(sAMAccountName=");
                    f.push_str(&String::from_utf8_lossy(v));
                    f.push_str(")(objectClass=user))");
                    f
                })
        } else {
            None
        };
        let filter = text
            .and_then(|t| Filter::parse(&t).ok())
            .unwrap_or_else(|| Filter::present("objectClass"));
        let attrs: Vec<&str> = get(3).split(',').filter(|a| !a.is_empty()).collect();
        let mut req = search_request(&base, scope, filter, &attrs);
        if scope != SearchScope::Base {
            req.size_limit = self.ctx.size_limit;
        }
        let c = or_step!(self.session().await);
        let t = Instant::now();
        let mut n = 0u64;
        let r = c
            .search_each(req, Vec::new(), |_| {
                n += 1;
                Ok::<(), kauri_ldap_client::ClientError>(())
            })
            .await;
        let out = match r {
            Ok(d)
                if d.result.code == ResultCode::SUCCESS
                    || d.result.code == ResultCode::SIZE_LIMIT_EXCEEDED =>
            {
                Ok(())
            }
            Ok(d) => Err(Failure::ldap(d.result.code)),
            Err(e) => Err(Failure::client(e)),
        };
        Step::Timed(t.elapsed(), out)
    }

    /// A new contact in the scratch OU, its DN.
    fn scratch_name(&mut self) -> Option<String> {
        let ou = self.ctx.scratch.as_ref()?;
        self.made += 1;
        Some(format!("CN=c{}-{},{ou}", self.id, self.made))
    }

    async fn add_contact(&mut self, dn: &str) -> Result<(), Failure> {
        let c = self.session().await?;
        let r = c
            .add(
                dn,
                vec![
                    ("objectClass".into(), vec![b"contact".to_vec()]),
                    ("description".into(), vec![b"traffic replay".to_vec()]),
                ],
                Vec::new(),
            )
            .await
            .map_err(Failure::client)?;
        if r.code != ResultCode::SUCCESS {
            return Err(Failure::ldap(r.code));
        }
        Ok(())
    }

    /// One of the conversation's own scratch objects, made (untimed) when it has none.
    async fn own_object(&mut self) -> Result<String, Failure> {
        if let Some(dn) = self.own.last() {
            return Ok(dn.clone());
        }
        let dn = self
            .scratch_name()
            .ok_or_else(|| Failure::new("no scratch OU".into()))?;
        self.add_contact(&dn).await?;
        self.own.push(dn.clone());
        Ok(dn)
    }

    async fn write(&mut self, opcode: &str, extra: &[String]) -> Step {
        if self.ctx.scratch.is_none() {
            return Step::Skipped(format!("ldap:{opcode} (no scratch OU)"));
        }
        match opcode {
            "8" => {
                let Some(dn) = self.scratch_name() else {
                    return Step::Skipped("ldap:8".into());
                };
                or_step!(self.session().await);
                let t = Instant::now();
                let r = self.add_contact(&dn).await;
                if r.is_ok() {
                    self.own.push(dn);
                }
                Step::Timed(t.elapsed(), r)
            }
            "6" => {
                let dn = or_step!(self.own_object().await);
                let recorded = extra.get(3).map(String::as_str).unwrap_or("");
                let attrs: Vec<&str> = recorded
                    .split(',')
                    .map(|a| {
                        WRITABLE
                            .iter()
                            .find(|w| w.eq_ignore_ascii_case(a))
                            .copied()
                            .unwrap_or("description")
                    })
                    .collect();
                let value = format!("replay {}", self.rng.next_u64() % 1_000_000);
                let mut changes = Vec::new();
                for a in attrs {
                    if !changes
                        .iter()
                        .any(|c: &kauri_ldap_client::proto::Change| c.attribute.name == a)
                    {
                        changes.push(kauri_ldap_client::change(
                            ModOp::Replace,
                            a,
                            &[value.as_bytes()],
                        ));
                    }
                }
                let c = or_step!(self.session().await);
                let t = Instant::now();
                let r = c.modify(&dn, changes, Vec::new()).await;
                Step::Timed(t.elapsed(), ldap_outcome(r))
            }
            "10" => {
                let dn = or_step!(self.own_object().await);
                let c = or_step!(self.session().await);
                let t = Instant::now();
                let r = c.delete(&dn, Vec::new()).await;
                let out = ldap_outcome(r);
                let took = t.elapsed();
                self.own.retain(|d| d != &dn);
                Step::Timed(took, out)
            }
            "12" => {
                let dn = or_step!(self.own_object().await);
                self.made += 1;
                let rdn = format!("CN=c{}-{}", self.id, self.made);
                let c = or_step!(self.session().await);
                let t = Instant::now();
                let r = c.modify_dn(&dn, &rdn, true, None, Vec::new()).await;
                let out = ldap_outcome(r);
                let took = t.elapsed();
                if out.is_ok() {
                    if let (Some(last), Some(ou)) = (self.own.last_mut(), &self.ctx.scratch) {
                        *last = format!("{rdn},{ou}");
                    }
                }
                Step::Timed(took, out)
            }
            other => Step::Skipped(format!("ldap:{other}")),
        }
    }

    async fn compare(&mut self) -> Step {
        let dn = self.ctx.dn_like("CN,CN", &mut self.rng);
        let c = or_step!(self.session().await);
        let t = Instant::now();
        let r = c.compare(&dn, "objectClass", "top", Vec::new()).await;
        let out = r.map(|_| ()).map_err(Failure::client);
        Step::Timed(t.elapsed(), out)
    }

    async fn extended(&mut self) -> Step {
        let c = or_step!(self.session().await);
        let t = Instant::now();
        let out = c.who_am_i().await.map(|_| ()).map_err(Failure::client);
        Step::Timed(t.elapsed(), out)
    }

    async fn unbind(&mut self) -> Step {
        if let Some(c) = self.ldap.take() {
            let _ = c.unbind().await;
        }
        self.bound = false;
        Step::NotAnOp
    }

    async fn cldap(&mut self) -> Step {
        if !self.ctx.services.cldap {
            return Step::Skipped("cldap (not answering)".into());
        }
        if self.cldap.is_none() {
            self.cldap = Some(or_step!(super::udp::socket(&self.ctx.ldap_addr).await));
        }
        let id = self.next_id();
        let Some(s) = &self.cldap else {
            return Step::Timed(Duration::ZERO, Err(closed()));
        };
        let t = Instant::now();
        let r = super::udp::cldap_ping(s, id, &self.ctx.dns_domain).await;
        Step::Timed(t.elapsed(), r)
    }

    async fn dns(&mut self) -> Step {
        if !self.ctx.services.dns {
            return Step::Skipped("dns (not answering)".into());
        }
        if self.dns.is_none() {
            self.dns = Some(or_step!(super::udp::socket(&self.ctx.dns_addr).await));
        }
        let names = &self.ctx.dns_names;
        if names.is_empty() {
            return Step::Skipped("dns (no names)".into());
        }
        let (name, qtype) = names[self.rng.below(names.len() as u64) as usize].clone();
        let id = (self.rng.next_u64() & 0xffff) as u16;
        let Some(s) = &self.dns else {
            return Step::Timed(Duration::ZERO, Err(closed()));
        };
        let t = Instant::now();
        let r = super::udp::dns_ask(s, id, &name, qtype).await;
        Step::Timed(t.elapsed(), r)
    }

    async fn kerberos(&mut self, opcode: &str) -> Step {
        if opcode.is_empty() {
            self.kerberos = true;
            return Step::NotAnOp;
        }
        if !matches!(opcode, "10" | "12" | "14") {
            return Step::NotAnOp;
        }
        if !self.ctx.services.kdc {
            return Step::Skipped("kerberos (no KDC)".into());
        }
        let Some(a) = self.account.clone() else {
            return Step::Skipped("kerberos (no account)".into());
        };
        let key = or_step!(self.ctx.key_of(&a));
        let (kdc, realm) = (&self.ctx.kdc_addr, &self.ctx.realm);
        if opcode == "10" {
            let t = Instant::now();
            let r = krb::as_exchange(kdc, realm, &a.sam, &key).await;
            let took = t.elapsed();
            let out = r.map(|c| {
                self.tgt = Some(c);
            });
            return Step::Timed(took, out);
        }
        if self.tgt.is_none() {
            self.tgt = Some(or_step!(krb::as_exchange(kdc, realm, &a.sam, &key).await));
        }
        let Some(tgt) = &self.tgt else {
            return Step::Timed(Duration::ZERO, Err(closed()));
        };
        let host = self.ctx.dc_host.clone();
        let t = Instant::now();
        let r = krb::tgs_exchange(kdc, realm, &a.sam, tgt, &["ldap", &host]).await;
        Step::Timed(t.elapsed(), r.map(|_| ()))
    }

    async fn step(&mut self, protocol: &str, opcode: &str, extra: &[String]) -> Step {
        match (protocol, opcode) {
            ("ldap", "0") => self.bind(extra).await,
            ("ldap", "2") => self.unbind().await,
            ("ldap", "3") => self.search(extra).await,
            ("ldap", "6" | "8" | "10" | "12") => self.write(opcode, extra).await,
            ("ldap", "14") => self.compare().await,
            ("ldap", "23") => self.extended().await,
            ("ldap", _) => Step::NotAnOp,
            ("cldap", "3") => self.cldap().await,
            ("cldap", _) => Step::NotAnOp,
            ("dns", "0") => self.dns().await,
            ("dns", _) => Step::NotAnOp,
            ("kerberos", op) => self.kerberos(op).await,
            (other, _) => Step::Skipped(other.to_string()),
        }
    }
}

fn closed() -> Failure {
    Failure::new("connection closed".into())
}

fn ldap_outcome(
    r: Result<kauri_ldap_client::proto::LdapResult, kauri_ldap_client::ClientError>,
) -> Result<(), Failure> {
    match r {
        Ok(r) if r.code == ResultCode::SUCCESS => Ok(()),
        Ok(r) => Err(Failure::ldap(r.code)),
        Err(e) => Err(Failure::client(e)),
    }
}

/// Runs one conversation from `t0`, stopping at `deadline`; returns what it recorded.
pub async fn run(
    ctx: &Ctx,
    conv: &PlannedConversation,
    account: Option<Account>,
    rng: Rng,
    t0: Instant,
) -> Tally {
    let mut tally = Tally::default();
    let mut client = Client {
        ctx,
        account,
        rng,
        id: conv.id,
        ldap: None,
        bound: false,
        kerberos: ctx.prefer_kerberos,
        tgt: None,
        ldap_ticket: None,
        cldap: None,
        dns: None,
        message_id: 0,
        own: Vec::new(),
        made: 0,
    };
    for p in &conv.packets {
        let due = t0 + Duration::from_secs_f64(p.at.max(0.0));
        let waited = due > Instant::now();
        tokio::time::sleep_until(due).await;
        let late = Instant::now().saturating_duration_since(due).as_secs_f64();
        if waited {
            tally.lags.push(late);
        }
        let step = tokio::time::timeout(
            ctx.op_timeout * 2,
            client.step(&p.protocol, &p.opcode, &p.extra),
        )
        .await
        .unwrap_or_else(|_| Step::Timed(ctx.op_timeout * 2, Err(Failure::new("timeout".into()))));
        match step {
            Step::Timed(took, out) => {
                tally.misses.push(late);
                let kind = tally
                    .kinds
                    .entry((p.protocol.clone(), p.opcode.clone()))
                    .or_default();
                match out {
                    Ok(()) => kind.latencies.push(took.as_secs_f64()),
                    Err(f) => {
                        kind.failed += 1;
                        *tally.failures.entry(f.0).or_default() += 1;
                        // A broken connection is not reused.
                        if client.ldap.as_ref().is_some_and(|c| c.is_closed()) {
                            client.ldap = None;
                            client.bound = false;
                        }
                    }
                }
                tally.last_done = t0.elapsed().as_secs_f64();
            }
            Step::NotAnOp => {}
            Step::Skipped(what) => *tally.skipped.entry(what).or_default() += 1,
        }
    }
    if let Some(c) = client.ldap.take() {
        let _ = c.unbind().await;
    }
    tally
}
