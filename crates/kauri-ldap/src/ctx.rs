//! What every connection shares: settings, the database, the writer, TLS, counters.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use kauri_db::Db;
use kauri_kv::lmdb::LmdbBackend;

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
}

impl Counters {
    /// Records a finished request: its kind, whether it succeeded, and how long it took.
    pub fn finish(&self, kind: usize, ok: bool, elapsed: std::time::Duration) {
        let Some(s) = self.finished.get(kind) else {
            return;
        };
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

/// The shared server state.
pub struct Ctx {
    /// Settings.
    pub cfg: ServerConfig,
    /// `cfg.admin_dn` parsed once, for the comparison every simple bind makes.
    pub admin_dn: Option<kauri_db::Dn>,
    /// The directory.
    pub db: Arc<Db<LmdbBackend>>,
    /// The single writer.
    pub writer: Writer,
    /// TLS for StartTLS and LDAPS, when configured.
    pub tls: Option<tokio_rustls::TlsAcceptor>,
    /// Counters.
    pub counters: Counters,
    /// The schema descriptions the subschema entry publishes.
    pub subschema: crate::subschema::Subschema,
    /// The AD schema: attributes a client writes must be defined in it.
    pub schema: Arc<kauri_domain::schema::Schema>,
}

impl Ctx {
    /// The first attribute of a change that the schema does not define, as the
    /// `undefinedAttributeType` result a client receives.
    pub fn undefined_attribute<'a>(
        &self,
        mut names: impl Iterator<Item = &'a str>,
    ) -> Option<kauri_ldap_proto::LdapResult> {
        names
            .find(|n| {
                let base = n.split(';').next().unwrap_or(n);
                self.schema.attribute(base).is_none()
            })
            .map(|n| {
                kauri_ldap_proto::LdapResult::new(
                    kauri_ldap_proto::ResultCode::UNDEFINED_ATTRIBUTE_TYPE,
                    format!("{n}: no such attribute in the schema"),
                )
            })
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
        if !self.cfg.default_naming_context.is_empty() {
            return self.cfg.default_naming_context.clone();
        }
        self.default_among(&self.naming_contexts())
    }

    /// [`Ctx::default_naming_context`] for a caller that has listed the naming contexts.
    pub fn default_among(&self, ncs: &[String]) -> String {
        if !self.cfg.default_naming_context.is_empty() {
            return self.cfg.default_naming_context.clone();
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
