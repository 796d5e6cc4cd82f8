//! Listening: the plain port (with StartTLS) and the LDAPS port, a bound on connections,
//! and one task per connection.

use std::sync::Arc;

use kauri_domain::directory::Directory;
use kauri_domain::schema::SchemaSource;
use kauri_kv::lmdb::LmdbBackend;
use tokio::net::TcpListener;
use tokio::sync::Semaphore;

use crate::config::ServerConfig;
use crate::conn::{self, Io, Transport};
use crate::ctx::{Counters, Ctx};
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
        if dir.domain().is_some() {
            // A domain answers anonymous clients with the root DSE only.
            cfg.anonymous_read = false;
        }
        let tls_config = tls::tls_config(&cfg)?;
        let acceptor = tokio_rustls::TlsAcceptor::from(tls_config);
        let plain = TcpListener::bind(&cfg.listen)
            .await
            .map_err(|source| ServeError::Listen {
                addr: cfg.listen.clone(),
                source,
            })?;
        let secure =
            if cfg.listen_tls.is_empty() {
                None
            } else {
                Some(TcpListener::bind(&cfg.listen_tls).await.map_err(|source| {
                    ServeError::Listen {
                        addr: cfg.listen_tls.clone(),
                        source,
                    }
                })?)
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
                match TcpListener::bind(addr.as_str()).await {
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
        let channel_binding = tls::channel_binding(&cfg);
        let ctx = Arc::new(Ctx {
            admin_dn: kauri_db::Dn::parse(&cfg.admin_dn).ok(),
            cfg,
            db: dir.db().clone(),
            dir,
            writer,
            tls: Some(acceptor),
            channel_binding,
            catalog_served: catalog.is_some() || catalog_tls.is_some(),
            counters: Counters::default(),
            subschema: parking_lot::Mutex::new(None),
            schema_source,
            hidden: parking_lot::RwLock::new(None),
        });
        Ok(Server {
            ctx,
            plain,
            secure,
            metrics,
            local,
            cldap,
            catalog,
            catalog_tls,
        })
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
        let limit = Arc::new(Semaphore::new(self.ctx.cfg.max_connections.max(1)));
        if let Some(m) = self.metrics {
            tokio::spawn(crate::metrics::serve(m, self.ctx.clone()));
        }
        if let Some(cldap) = self.cldap {
            tokio::spawn(crate::cldap::serve(cldap, self.ctx.clone()));
        }
        if let Some(local) = self.local {
            tokio::spawn(local_loop(local, self.ctx.clone(), limit.clone()));
        }
        if self.ctx.dir.domain().is_some() {
            tokio::spawn(collect_tombstones(self.ctx.clone()));
        }
        if let Some(secure) = self.secure {
            let ctx = self.ctx.clone();
            let limit = limit.clone();
            tokio::spawn(accept_loop(secure, ctx, limit, true, false));
        }
        if let Some(gc) = self.catalog {
            tokio::spawn(accept_loop(
                gc,
                self.ctx.clone(),
                limit.clone(),
                false,
                true,
            ));
        }
        if let Some(gc) = self.catalog_tls {
            tokio::spawn(accept_loop(gc, self.ctx.clone(), limit.clone(), true, true));
        }
        accept_loop(self.plain, self.ctx, limit, false, false).await;
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

async fn accept_loop(
    listener: TcpListener,
    ctx: Arc<Ctx>,
    limit: Arc<Semaphore>,
    tls: bool,
    catalog: bool,
) {
    loop {
        let Ok(permit) = limit.clone().acquire_owned().await else {
            return;
        };
        let (stream, peer) = match listener.accept().await {
            Ok(s) => s,
            Err(e) => {
                tracing::warn!(error = %e, "accept failed");
                tokio::time::sleep(std::time::Duration::from_millis(50)).await;
                continue;
            }
        };
        let _ = stream.set_nodelay(true);
        let ctx = ctx.clone();
        tokio::spawn(async move {
            let peer = peer.to_string();
            let io: Box<dyn Io> = if tls {
                let Some(acceptor) = ctx.tls.clone() else {
                    return;
                };
                match acceptor.accept(stream).await {
                    Ok(s) => Box::new(s),
                    Err(e) => {
                        tracing::debug!(%peer, error = %e, "TLS handshake failed");
                        return;
                    }
                }
            } else {
                Box::new(stream)
            };
            let transport = if tls { Transport::Tls } else { Transport::Tcp };
            conn::serve(io, ctx, transport, peer, catalog).await;
            drop(permit);
        });
    }
}

async fn local_loop(listener: tokio::net::UnixListener, ctx: Arc<Ctx>, limit: Arc<Semaphore>) {
    loop {
        let Ok(permit) = limit.clone().acquire_owned().await else {
            return;
        };
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
        let ctx = ctx.clone();
        tokio::spawn(async move {
            let transport = Transport::Local {
                uid: cred.uid(),
                gid: cred.gid(),
            };
            let peer = format!("ldapi uid={}", cred.uid());
            conn::serve(Box::new(stream), ctx, transport, peer, false).await;
            drop(permit);
        });
    }
}
