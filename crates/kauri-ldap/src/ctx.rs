//! What every connection shares: settings, the database, the writer, TLS, counters.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use kauri_db::Db;
use kauri_kv::lmdb::LmdbBackend;

use crate::config::ServerConfig;
use crate::writer::Writer;

/// Operation counters, reported by the metrics endpoint and in tests.
#[derive(Debug, Default)]
pub struct Counters {
    /// Connections accepted.
    pub connections: AtomicU64,
    /// Connections open now.
    pub open_connections: AtomicU64,
    /// Requests received, by kind: bind, search, add, modify, delete, modrdn, compare,
    /// extended, abandon, unbind.
    pub ops: [AtomicU64; 10],
    /// Responses with a result code other than success (or compare true/false).
    pub errors: AtomicU64,
    /// Messages that could not be decoded.
    pub bad_messages: AtomicU64,
}

impl Counters {
    /// Counts one request of a kind (index as in [`Counters::ops`]).
    pub fn op(&self, kind: usize) {
        if let Some(c) = self.ops.get(kind) {
            c.fetch_add(1, Ordering::Relaxed);
        }
    }
}

/// The shared server state.
pub struct Ctx {
    /// Settings.
    pub cfg: ServerConfig,
    /// The directory.
    pub db: Arc<Db<LmdbBackend>>,
    /// The single writer.
    pub writer: Writer,
    /// TLS for StartTLS and LDAPS, when configured.
    pub tls: Option<tokio_rustls::TlsAcceptor>,
    /// Counters.
    pub counters: Counters,
}
