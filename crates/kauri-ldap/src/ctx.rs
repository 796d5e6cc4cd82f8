//! What every connection shares: settings, the database, the writer, TLS, counters.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use kauri_db::Db;
use kauri_domain::directory::{Directory, SchemaSnapshot};
use kauri_kv::lmdb::LmdbBackend;
use kauri_ldap_proto::{LdapResult, ResultCode};

use crate::config::ServerConfig;
use crate::writer::Writer;

/// Upper bounds (µs) of the latency histogram buckets; a last bucket catches the rest.
pub const LATENCY_BUCKETS_US: [u64; 12] = [
    100, 250, 500, 1_000, 2_500, 5_000, 10_000, 25_000, 50_000, 100_000, 1_000_000, 10_000_000,
];

/// Names of the operation kinds, in [`Counters::ops`] order.
pub const OP_NAMES: [&str; 10] = [
    "bind", "search", "add", "modify", "delete", "modrdn", "compare", "extended", "abandon",
    "unbind",
];

/// Finished requests of one operation kind: outcomes and a latency histogram.
#[derive(Debug, Default)]
pub struct OpStats {
    /// Requests answered with success (or compareTrue/compareFalse).
    pub ok: AtomicU64,
    /// Requests answered with any other result.
    pub failed: AtomicU64,
    /// Counts per latency bucket (see [`LATENCY_BUCKETS_US`]), plus one for larger.
    pub buckets: [AtomicU64; 13],
    /// Sum of latencies, µs.
    pub sum_us: AtomicU64,
}

/// Operation counters, reported by the metrics endpoint and in tests.
#[derive(Debug, Default)]
pub struct Counters {
    /// Finished requests per operation kind.
    pub finished: [OpStats; 10],
    /// Connections accepted.
    pub connections: AtomicU64,
    /// Connections open now.
    pub open_connections: AtomicU64,
    /// Messages that could not be decoded.
    pub bad_messages: AtomicU64,
    /// CLDAP datagrams answered.
    pub cldap_answered: AtomicU64,
    /// CLDAP datagrams dropped: undecodable, not a root DSE search, or for no domain here.
    pub cldap_dropped: AtomicU64,
    /// Finished requests per second over the last minute, for `kauri status`.
    pub recent: crate::status::PerSecond,
}

impl Counters {
    /// Records a finished request: its kind, whether it succeeded, and how long it took.
    pub fn finish(&self, kind: usize, ok: bool, elapsed: std::time::Duration) {
        let Some(s) = self.finished.get(kind) else {
            return;
        };
        self.recent.record();
        if ok {
            s.ok.fetch_add(1, Ordering::Relaxed);
        } else {
            s.failed.fetch_add(1, Ordering::Relaxed);
        }
        let us = u64::try_from(elapsed.as_micros()).unwrap_or(u64::MAX);
        tracing::debug!(
            op = OP_NAMES.get(kind).copied().unwrap_or("?"),
            ok,
            elapsed_us = us,
            "request finished"
        );
        s.sum_us.fetch_add(us, Ordering::Relaxed);
        let i = LATENCY_BUCKETS_US
            .iter()
            .position(|b| us <= *b)
            .unwrap_or(LATENCY_BUCKETS_US.len());
        if let Some(b) = s.buckets.get(i) {
            b.fetch_add(1, Ordering::Relaxed);
        }
    }
}

/// Hidden attribute names per schema snapshot: (snapshot, for non-administrators, for
/// administrators). The snapshot is held, so it is compared by identity safely.
pub type HiddenCache = Option<(Arc<SchemaSnapshot>, [Arc<Vec<String>>; 4])>;

/// Attributes a global catalog returns although the schema does not put them in the
/// partial attribute set: what names and identifies an object.
const CATALOG_ALWAYS: &[&str] = &[
    "objectClass",
    "objectCategory",
    "distinguishedName",
    "name",
    "cn",
    "objectGUID",
    "objectSid",
    "instanceType",
    "nTSecurityDescriptor",
    "uSNChanged",
    "uSNCreated",
    "whenChanged",
    "whenCreated",
];

/// The shared server state.
pub struct Ctx {
    /// The connection table every LDAP network port shares.
    pub admission: Arc<kauri_net::Admission>,
    /// The connection table of the local socket.
    pub local_admission: Arc<kauri_net::Admission>,
    /// The settings in force (see [`Ctx::cfg`]).
    pub(crate) cfg: parking_lot::RwLock<Arc<ServerConfig>>,
    /// The settings as given (file and command line), before the server's own rules for a
    /// domain: what a reload compares the file read again with.
    pub(crate) given: parking_lot::Mutex<ServerConfig>,
    /// `cfg.admin_dn` parsed once, for the comparison every simple bind makes.
    pub admin_dn: Option<kauri_db::Dn>,
    /// The directory service (schema, domain, validation of every change).
    pub dir: Arc<Directory<LmdbBackend>>,
    /// The database underneath (`dir.db()`).
    pub db: Arc<Db<LmdbBackend>>,
    /// The single writer.
    pub writer: Writer,
    /// The TLS certificate new handshakes use (see [`Ctx::tls`]).
    pub(crate) tls: parking_lot::RwLock<Option<Arc<TlsNow>>>,
    /// Whether a global catalog port is served (LDAP pings announce it).
    pub catalog_served: bool,
    /// Counters.
    pub counters: Counters,
    /// Start time, listeners and last backup, for the metrics and `kauri status`.
    pub status: crate::status::Status,
    /// The subschema entry, rendered for the schema snapshot it was made from.
    pub subschema:
        parking_lot::Mutex<Option<(Arc<SchemaSnapshot>, Arc<crate::subschema::Subschema>)>>,
    /// Where the schema the server started with came from.
    pub schema_source: kauri_domain::schema::SchemaSource,
    /// Names of the attributes hidden from (non-administrators, administrators), for the
    /// schema snapshot they were listed from.
    pub hidden: parking_lot::RwLock<HiddenCache>,
    /// Kerberos authenticators seen by binds (each is accepted once).
    pub replay: kauri_auth::krb::replay::ReplayCache,
}

/// A TLS certificate in force: what StartTLS and LDAPS handshakes use, and the channel
/// binding NTLM logons over a connection that made its handshake with it are checked
/// against. A reload replaces it; connections keep the one they began with.
pub struct TlsNow {
    /// Accepts handshakes with the certificate.
    pub acceptor: tokio_rustls::TlsAcceptor,
    /// The certificate's channel binding (`tls-server-end-point`).
    pub channel_binding: Option<[u8; 16]>,
    /// The certificate file it was read from.
    pub certificate: std::path::PathBuf,
}

impl TlsNow {
    /// Reads the certificate and key the settings name (or the generated pair).
    pub fn load(cfg: &ServerConfig) -> Result<TlsNow, crate::tls::TlsError> {
        let c = crate::tls::load(cfg)?;
        Ok(TlsNow {
            acceptor: tokio_rustls::TlsAcceptor::from(c.config),
            channel_binding: c.channel_binding,
            certificate: c.path,
        })
    }
}

/// What a reload did.
#[derive(Debug, Clone)]
pub struct Reloaded {
    /// Settings that changed and are in force now.
    pub applied: Vec<String>,
    /// Settings that changed but wait for a restart.
    pub need_restart: Vec<String>,
    /// The certificate file read again.
    pub certificate: std::path::PathBuf,
}

/// Why a reload changed nothing.
#[derive(Debug, thiserror::Error)]
pub enum ReloadError {
    /// The new settings could not be taken.
    #[error("{0}")]
    Settings(String),
    /// The TLS certificate or key could not be read.
    #[error(transparent)]
    Tls(#[from] crate::tls::TlsError),
}

/// The server's own rules on the given settings: a domain answers anonymous clients with
/// the root DSE only (unless its dSHeuristics says otherwise), and announces its DC's own
/// name, which clients connect to and check the certificate against, unless the settings
/// name another.
pub fn settle(cfg: &mut ServerConfig, dir: &Directory<LmdbBackend>) {
    if let Some(domain) = dir.domain() {
        cfg.anonymous_read = false;
        if cfg.dns_host_name.is_empty() || cfg.dns_host_name == "localhost" {
            if let Some(host) = domain.dc_computer.as_ref().and_then(|d| {
                d.rdn()
                    .and_then(|r| r.avas().first().map(|a| a.value.clone()))
            }) {
                cfg.dns_host_name = format!("{}.{}", host.to_ascii_lowercase(), domain.dns_name);
            }
        }
    }
}

impl Ctx {
    /// The settings in force now. A reload replaces them whole, so a caller that reads
    /// several settings together should take this once.
    pub fn cfg(&self) -> Arc<ServerConfig> {
        self.cfg.read().clone()
    }

    /// The TLS certificate new handshakes use, when TLS is configured.
    pub fn tls(&self) -> Option<Arc<TlsNow>> {
        self.tls.read().clone()
    }

    /// Takes settings read again (`systemctl reload`, SIGHUP): the TLS certificate and key
    /// are read again, and every setting that can change while serving takes effect for
    /// the requests that follow. Either all of it happens or nothing does.
    pub fn reload(&self, new: ServerConfig) -> Result<Reloaded, ReloadError> {
        let mut given = self.given.lock();
        let reread = given.reread(new).map_err(ReloadError::Settings)?;
        let mut in_force = reread.config.clone();
        settle(&mut in_force, &self.dir);
        let tls = Arc::new(TlsNow::load(&in_force)?);
        let certificate = tls.certificate.clone();
        *given = reread.config;
        *self.cfg.write() = Arc::new(in_force);
        *self.tls.write() = Some(tls);
        Ok(Reloaded {
            applied: reread.applied,
            need_restart: reread.need_restart,
            certificate,
        })
    }

    /// The subschema entry for the current schema (rendered again after a schema change).
    pub fn subschema(&self) -> Arc<crate::subschema::Subschema> {
        let snap = self.dir.schema();
        let mut cached = self.subschema.lock();
        if let Some((s, rendered)) = cached.as_ref() {
            if Arc::ptr_eq(s, &snap) {
                return rendered.clone();
            }
        }
        let rendered = Arc::new(crate::subschema::Subschema::render(
            &snap.schema,
            self.schema_source.clone(),
        ));
        *cached = Some((snap, rendered.clone()));
        rendered
    }

    /// Names of the attributes a caller never sees: secrets, confidential attributes
    /// unless the caller administers, and on a global catalog connection every attribute
    /// outside the partial attribute set (`isMemberOfPartialAttributeSet`).
    pub fn hidden_attributes(&self, admin: bool, catalog: bool) -> Arc<Vec<String>> {
        let snap = self.dir.schema();
        let slot = usize::from(admin) | usize::from(catalog) << 1;
        let pick = |c: &HiddenCache| match c {
            Some((s, lists)) if Arc::ptr_eq(s, &snap) => lists.get(slot).cloned(),
            _ => None,
        };
        if let Some(list) = pick(&self.hidden.read()) {
            return list;
        }
        let mut cached = self.hidden.write();
        if pick(&cached).is_none() {
            let list = |slot: usize| {
                let access = kauri_domain::directory::Access::of_admin(slot & 1 != 0);
                let catalog = slot & 2 != 0;
                // A back link shows where its forward link does (memberOf with member).
                let in_catalog = |a: &kauri_domain::schema::AttributeDef| {
                    a.is_member_of_partial_attribute_set
                        || CATALOG_ALWAYS
                            .iter()
                            .any(|n| n.eq_ignore_ascii_case(&a.ldap_name))
                        || a.link_id.filter(|l| l % 2 == 1).is_some_and(|l| {
                            snap.schema
                                .attribute_by_link_id(l - 1)
                                .is_some_and(|f| f.is_member_of_partial_attribute_set)
                        })
                };
                Arc::new(
                    snap.schema
                        .attributes()
                        .filter(|a| {
                            !access.may_read(&a.ldap_name, Some(a)) || (catalog && !in_catalog(a))
                        })
                        .map(|a| a.ldap_name.clone())
                        .collect::<Vec<_>>(),
                )
            };
            *cached = Some((snap.clone(), [list(0), list(1), list(2), list(3)]));
        }
        pick(&cached).unwrap_or_default()
    }

    /// Whether the built-in read policy's admin view applies to `identity`'s searches: in
    /// a domain every caller's reads are decided by security descriptors (only secrets
    /// stay hidden from everyone), elsewhere administrators read confidential attributes.
    pub fn reads_beyond_policy(&self, identity: &crate::auth::Identity) -> bool {
        identity.is_admin() || self.dir.domain().is_some()
    }

    /// Whether anonymous callers may go beyond the root DSE: configured so, or in a domain
    /// whose dSHeuristics allows anonymous operations (fLDAPBlockAnonOps = '2'), where
    /// descriptors then decide what they see.
    pub fn anonymous_allowed(&self) -> bool {
        if self.cfg().anonymous_read {
            return true;
        }
        self.dir.domain().is_some()
            && self
                .db
                .read()
                .ok()
                .and_then(|r| self.dir.anonymous_allowed(&r).ok())
                .unwrap_or(false)
    }

    /// Parses a DN a client sent (`what` names it in the error: "DN", "base DN", …). A
    /// domain refuses an RDN with an empty value (`CN=`), as AD does, where plain LDAP (RFC
    /// 4514) allows one. Names past the depth and length limits get invalidDNSyntax with
    /// the Windows error that names the condition (ERROR_DS_NAME_TOO_MANY_PARTS,
    /// ERROR_DS_NAME_TOO_LONG).
    pub fn parse_dn(&self, what: &str, text: &str) -> Result<kauri_db::Dn, LdapResult> {
        use kauri_db::dn::DnError;
        let invalid = |text: String| LdapResult::new(ResultCode::INVALID_DN_SYNTAX, text);
        let dn = kauri_db::Dn::parse(text).map_err(|e| match e {
            DnError::TooManyRdns => invalid(format!("0000209B: invalid {what}: {e}")),
            DnError::TooLong(_) => invalid(format!("0000209C: invalid {what}: {e}")),
            e => invalid(format!("invalid {what}: {e}")),
        })?;
        if self.dir.domain().is_some() {
            for rdn in dn.rdns() {
                self.check_rdn(rdn)
                    .map_err(|e| invalid(format!("invalid {what}: {e}")))?;
            }
        }
        Ok(dn)
    }

    /// [`Ctx::parse_dn`]'s rule for one RDN (a rename's new RDN).
    pub fn check_rdn(&self, rdn: &kauri_db::dn::Rdn) -> Result<(), String> {
        if self.dir.domain().is_some() && rdn.avas().iter().any(|a| a.value.is_empty()) {
            return Err(format!("empty value in RDN {}", rdn.norm()));
        }
        Ok(())
    }

    /// The naming contexts stored, as DN texts (empty when the database cannot be read).
    pub fn naming_contexts(&self) -> Vec<String> {
        self.db
            .read()
            .and_then(|r| r.naming_contexts())
            .map(|v| v.into_iter().map(|(_, dn)| dn).collect())
            .unwrap_or_default()
    }

    /// The naming context announced as default: configured, or the first stored one that
    /// is not named below another (the domain rather than its configuration partition).
    pub fn default_naming_context(&self) -> String {
        let cfg = self.cfg();
        if !cfg.default_naming_context.is_empty() {
            return cfg.default_naming_context.clone();
        }
        self.default_among(&self.naming_contexts())
    }

    /// [`Ctx::default_naming_context`] for a caller that has listed the naming contexts.
    pub fn default_among(&self, ncs: &[String]) -> String {
        let cfg = self.cfg();
        if !cfg.default_naming_context.is_empty() {
            return cfg.default_naming_context.clone();
        }
        let dns: Vec<Option<kauri_db::Dn>> =
            ncs.iter().map(|t| kauri_db::Dn::parse(t).ok()).collect();
        let below_another = |d: &kauri_db::Dn| dns.iter().flatten().any(|o| d.is_descendant_of(o));
        ncs.iter()
            .zip(&dns)
            .find(|(_, dn)| !dn.as_ref().is_some_and(below_another))
            .map(|(text, _)| text.clone())
            .unwrap_or_default()
    }
}
