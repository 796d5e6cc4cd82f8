//! Listening: the plain port (with StartTLS), the LDAPS port, the global catalog ports and
//! the local socket, all under one connection table (`kauri-net`'s admission rules), and
//! one task per connection.

use std::sync::Arc;

use kauri_domain::directory::Directory;
use kauri_domain::schema::SchemaSource;
use kauri_kv::lmdb::LmdbBackend;
use kauri_net::{Admission, Close, Refusal};
use tokio::net::TcpListener;

use crate::config::ServerConfig;
use crate::conn::{self, Accepted, Io, Transport};
use crate::ctx::{Counters, Ctx};
use crate::status::Status;
use crate::tls;
use crate::writer::Writer;

/// Why the server could not start.
#[derive(Debug, thiserror::Error)]
pub enum ServeError {
    /// A listener could not be bound.
    #[error("cannot listen on {addr}: {source}")]
    Listen {
        /// The address.
        addr: String,
        /// Why.
        source: std::io::Error,
    },
    /// TLS could not be set up.
    #[error(transparent)]
    Tls(#[from] tls::TlsError),
    /// The writer thread could not start.
    #[error("cannot start the writer: {0}")]
    Writer(std::io::Error),
}

/// A bound server, ready to accept connections.
pub struct Server {
    ctx: Arc<Ctx>,
    plain: TcpListener,
    secure: Option<TcpListener>,
    metrics: Option<TcpListener>,
    local: Option<tokio::net::UnixListener>,
    cldap: Option<tokio::net::UdpSocket>,
    catalog: Option<TcpListener>,
    catalog_tls: Option<TcpListener>,
}

impl Server {
    /// Binds the listeners and starts the writer.
    pub async fn bind(
        mut cfg: ServerConfig,
        dir: Arc<Directory<LmdbBackend>>,
        schema_source: SchemaSource,
    ) -> Result<Server, ServeError> {
        let given = cfg.clone();
        crate::ctx::settle(&mut cfg, &dir);
        let tls_now = crate::ctx::TlsNow::load(&cfg)?;
        let backlog = u32::try_from(cfg.max_connections)
            .unwrap_or(u32::MAX)
            .max(1024);
        let plain = kauri_net::listen(&cfg.listen, backlog)
            .await
            .map_err(|source| ServeError::Listen {
                addr: cfg.listen.clone(),
                source,
            })?;
        let secure = if cfg.listen_tls.is_empty() {
            None
        } else {
            Some(
                kauri_net::listen(&cfg.listen_tls, backlog)
                    .await
                    .map_err(|source| ServeError::Listen {
                        addr: cfg.listen_tls.clone(),
                        source,
                    })?,
            )
        };
        // Metrics are an aid, not a reason to refuse serving: a busy port is logged.
        let metrics = if cfg.metrics_listen.is_empty() {
            None
        } else {
            match TcpListener::bind(&cfg.metrics_listen).await {
                Ok(l) => Some(l),
                Err(e) => {
                    tracing::warn!(addr = %cfg.metrics_listen, error = %e, "metrics endpoint not started");
                    None
                }
            }
        };
        let local = if cfg.listen_ldapi.as_os_str().is_empty() {
            None
        } else {
            // A socket left by a previous run would make the bind fail.
            let _ = std::fs::remove_file(&cfg.listen_ldapi);
            Some(
                tokio::net::UnixListener::bind(&cfg.listen_ldapi).map_err(|source| {
                    ServeError::Listen {
                        addr: cfg.listen_ldapi.display().to_string(),
                        source,
                    }
                })?,
            )
        };
        // CLDAP answers LDAP pings for a domain, on the LDAP port unless told otherwise.
        let cldap = if cfg.cldap && dir.domain().is_some() {
            let addr = if cfg.listen_cldap.is_empty() {
                plain
                    .local_addr()
                    .map(|a| a.to_string())
                    .unwrap_or_else(|_| cfg.listen.clone())
            } else {
                cfg.listen_cldap.clone()
            };
            Some(
                tokio::net::UdpSocket::bind(&addr)
                    .await
                    .map_err(|source| ServeError::Listen { addr, source })?,
            )
        } else {
            None
        };
        // The global catalog ports, for a domain: a busy port is logged, not fatal (the
        // domain's own ports serve on).
        let mut catalog_listeners = Vec::new();
        for addr in [&cfg.listen_gc, &cfg.listen_gc_tls] {
            let listener = if addr.is_empty() || dir.domain().is_none() {
                None
            } else {
                match kauri_net::listen(addr.as_str(), backlog).await {
                    Ok(l) => Some(l),
                    Err(e) => {
                        tracing::warn!(%addr, error = %e, "global catalog port not served");
                        None
                    }
                }
            };
            catalog_listeners.push(listener);
        }
        let catalog_tls = catalog_listeners.pop().flatten();
        let catalog = catalog_listeners.pop().flatten();
        let writer =
            Writer::start(dir.clone(), cfg.max_commit_batch).map_err(ServeError::Writer)?;
        let status = Status::new(cfg.data.clone());
        let ctx = Arc::new(Ctx {
            admission: Admission::new(cfg.connection_limits()),
            local_admission: Admission::new(cfg.local_connection_limits()),
            admin_dn: kauri_db::Dn::parse(&cfg.admin_dn).ok(),
            cfg: parking_lot::RwLock::new(Arc::new(cfg)),
            given: parking_lot::Mutex::new(given),
            db: dir.db().clone(),
            dir,
            writer,
            tls: parking_lot::RwLock::new(Some(Arc::new(tls_now))),
            catalog_served: catalog.is_some() || catalog_tls.is_some(),
            counters: Counters::default(),
            status,
            subschema: parking_lot::Mutex::new(None),
            schema_source,
            hidden: parking_lot::RwLock::new(None),
            replay: kauri_auth::krb::replay::ReplayCache::default(),
        });
        let server = Server {
            ctx,
            plain,
            secure,
            metrics,
            local,
            cldap,
            catalog,
            catalog_tls,
        };
        server.announce_listeners();
        Ok(server)
    }

    /// Records every bound listener in the status the metrics report.
    fn announce_listeners(&self) {
        let tcp =
            |l: Option<&TcpListener>| l.and_then(|l| l.local_addr().ok()).map(|a| a.to_string());
        let ldapi = self
            .local
            .as_ref()
            .and_then(|l| l.local_addr().ok())
            .and_then(|a| a.as_pathname().map(|p| p.display().to_string()));
        let bound = [
            ("ldap", tcp(Some(&self.plain))),
            ("ldaps", tcp(self.secure.as_ref())),
            ("cldap", self.cldap_addr().map(|a| a.to_string())),
            ("gc", tcp(self.catalog.as_ref())),
            ("gc-tls", tcp(self.catalog_tls.as_ref())),
            ("ldapi", ldapi),
            ("metrics", tcp(self.metrics.as_ref())),
        ];
        for (service, address) in bound {
            if let Some(a) = address {
                self.ctx.status.listening(service, a);
            }
        }
    }

    /// The address of the plain listener (useful when binding port 0).
    pub fn local_addr(&self) -> std::io::Result<std::net::SocketAddr> {
        self.plain.local_addr()
    }

    /// The address of the LDAPS listener, if any.
    pub fn tls_addr(&self) -> Option<std::net::SocketAddr> {
        self.secure.as_ref().and_then(|l| l.local_addr().ok())
    }

    /// The addresses of the global catalog ports (plain, TLS), if served.
    pub fn catalog_addrs(&self) -> (Option<std::net::SocketAddr>, Option<std::net::SocketAddr>) {
        (
            self.catalog.as_ref().and_then(|l| l.local_addr().ok()),
            self.catalog_tls.as_ref().and_then(|l| l.local_addr().ok()),
        )
    }

    /// The address of the CLDAP socket, if any.
    pub fn cldap_addr(&self) -> Option<std::net::SocketAddr> {
        self.cldap.as_ref().and_then(|s| s.local_addr().ok())
    }

    /// The address of the metrics endpoint, if any.
    pub fn metrics_addr(&self) -> Option<std::net::SocketAddr> {
        self.metrics.as_ref().and_then(|l| l.local_addr().ok())
    }

    /// The shared state (counters, writer statistics).
    pub fn ctx(&self) -> Arc<Ctx> {
        self.ctx.clone()
    }

    /// Accepts connections until the task is dropped.
    pub async fn run(self) {
        if let Some(m) = self.metrics {
            tokio::spawn(crate::metrics::serve(m, self.ctx.clone()));
        }
        if let Some(cldap) = self.cldap {
            tokio::spawn(crate::cldap::serve(cldap, self.ctx.clone()));
        }
        if let Some(local) = self.local {
            tokio::spawn(local_loop(local, self.ctx.clone()));
        }
        if self.ctx.dir.domain().is_some() {
            tokio::spawn(collect_tombstones(self.ctx.clone()));
        }
        if let Some(secure) = self.secure {
            tokio::spawn(accept_loop(secure, self.ctx.clone(), true, false));
        }
        if let Some(gc) = self.catalog {
            tokio::spawn(accept_loop(gc, self.ctx.clone(), false, true));
        }
        if let Some(gc) = self.catalog_tls {
            tokio::spawn(accept_loop(gc, self.ctx.clone(), true, true));
        }
        accept_loop(self.plain, self.ctx, false, false).await;
    }
}

/// How often the writer purges tombstones past their lifetime.
const TOMBSTONE_SWEEP: std::time::Duration = std::time::Duration::from_secs(3600);

/// Purges expired tombstones hourly (the first sweep right after start).
async fn collect_tombstones(ctx: Arc<Ctx>) {
    let mut every = tokio::time::interval(TOMBSTONE_SWEEP);
    loop {
        every.tick().await;
        if let Err(e) = ctx
            .writer
            .run_task(crate::writer::Task::CollectTombstones)
            .await
        {
            tracing::warn!(error = %e, "purging tombstones failed");
        }
    }
}

async fn accept_loop(listener: TcpListener, ctx: Arc<Ctx>, tls: bool, catalog: bool) {
    loop {
        let (stream, peer) = match listener.accept().await {
            Ok(s) => s,
            Err(e) => {
                // Out of file descriptors, most likely: wait for connections to end.
                tracing::warn!(error = %e, "accept failed");
                tokio::time::sleep(std::time::Duration::from_millis(50)).await;
                continue;
            }
        };
        let _ = stream.set_nodelay(true);
        let slot = match ctx.admission.admit(Some(peer.ip())) {
            Ok(slot) => slot,
            Err(why) => {
                tracing::debug!(%peer, reason = why.name(), "connection refused");
                // Told at once, so the client fails fast instead of waiting; a TLS port
                // just closes (nothing can be said before a handshake).
                if !tls {
                    tokio::spawn(refuse(stream, why));
                }
                continue;
            }
        };
        let ctx = ctx.clone();
        tokio::spawn(async move {
            let at = std::time::Instant::now();
            let mut channel_binding = None;
            let io: Box<dyn Io> = if tls {
                let Some(tls_now) = ctx.tls() else {
                    return;
                };
                channel_binding = tls_now.channel_binding;
                // The handshake has the time a new connection has for its first request,
                // and gives way like any idle unauthenticated connection.
                let init = ctx.cfg().handshake_timeout();
                tokio::select! {
                    r = tokio::time::timeout(init, tls_now.acceptor.accept(stream)) => match r {
                        Ok(Ok(s)) => Box::new(s),
                        Ok(Err(e)) => {
                            tracing::debug!(%peer, error = %e, "TLS handshake failed");
                            return;
                        }
                        Err(_) => {
                            slot.closed_by(Close::InitTimeout);
                            tracing::debug!(%peer, "TLS handshake timed out");
                            return;
                        }
                    },
                    _ = slot.evicted() => return,
                }
            } else {
                Box::new(stream)
            };
            let transport = if tls { Transport::Tls } else { Transport::Tcp };
            let accepted = Accepted {
                transport,
                peer: peer.to_string(),
                catalog,
                slot,
                at,
                channel_binding,
            };
            conn::serve(io, ctx, accepted).await;
        });
    }
}

/// Tells a client that cannot be served why, with a notice of disconnection, and closes.
async fn refuse(mut stream: tokio::net::TcpStream, why: Refusal) {
    use tokio::io::AsyncWriteExt;
    let notice = kauri_ldap_proto::encode::encode_message(
        &kauri_ldap_proto::controls::notice_of_disconnection(
            kauri_ldap_proto::ResultCode::BUSY,
            why.text(),
        ),
    );
    let _ = tokio::time::timeout(std::time::Duration::from_secs(1), async {
        let _ = stream.write_all(&notice).await;
        let _ = stream.shutdown().await;
    })
    .await;
}

async fn local_loop(listener: tokio::net::UnixListener, ctx: Arc<Ctx>) {
    loop {
        let stream = match listener.accept().await {
            Ok((s, _)) => s,
            Err(e) => {
                tracing::warn!(error = %e, "accept on the local socket failed");
                tokio::time::sleep(std::time::Duration::from_millis(50)).await;
                continue;
            }
        };
        let Ok(cred) = stream.peer_cred() else {
            continue;
        };
        // The local socket has a table of its own, so local administration is never
        // crowded out by network clients.
        let Ok(slot) = ctx.local_admission.admit(None) else {
            continue;
        };
        let ctx = ctx.clone();
        tokio::spawn(async move {
            let accepted = Accepted {
                transport: Transport::Local {
                    uid: cred.uid(),
                    gid: cred.gid(),
                },
                peer: format!("ldapi uid={}", cred.uid()),
                catalog: false,
                slot,
                at: std::time::Instant::now(),
                channel_binding: None,
            };
            conn::serve(Box::new(stream), ctx, accepted).await;
        });
    }
}
