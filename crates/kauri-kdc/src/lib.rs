//! Kerberos for the domain: a KDC (RFC 4120 with Microsoft's extensions, MS-KILE) whose
//! principals, keys and groups are the directory's own accounts, and the password-change
//! service (RFC 3244) that applies the directory's password rules.
//!
//! A request is answered from one read snapshot of the directory; what a logon changes
//! (bad-password counts, lockout, the last logon time, a new password) goes to the same
//! single writer as LDAP's changes, so both protocols count toward one lockout.

mod as_req;
pub mod issue;
pub mod kdc;
pub use kauri_domain::directory::kerberos_keys as keys;
pub mod kpasswd;
pub mod pac_build;
mod tgs_req;
pub mod transport;

pub use kdc::{Kdc, KdcSettings};
pub use transport::{Listeners, Service};

use std::net::SocketAddr;
use std::sync::Arc;

use kauri_ldap::ctx::Ctx;

/// Where the KDC and the password-change service listen.
#[derive(Debug, Clone, Default)]
pub struct Started {
    /// The KDC's addresses (TCP and UDP on each).
    pub kdc: Vec<SocketAddr>,
    /// The password-change service's addresses.
    pub kpasswd: Vec<SocketAddr>,
}

/// Starts the KDC and the password-change service beside an LDAP server, on the
/// configured addresses (TCP and UDP), when it serves a domain. A default address (ports
/// 88 and 464 need privileges) is skipped with a warning when it cannot be bound; an
/// address set in the configuration is an error.
pub async fn start(ctx: Arc<Ctx>) -> std::io::Result<Started> {
    let mut started = Started::default();
    let cfg = ctx.cfg();
    if ctx.dir.domain().is_none() || cfg.listen_kdc.is_empty() {
        return Ok(started);
    }
    let Some(l) = bind(&cfg.listen_kdc, kauri_ldap::config::DEFAULT_KDC, "Kerberos").await? else {
        return Ok(started);
    };
    started.kdc = l.local_addrs();
    for a in &started.kdc {
        ctx.status.listening("kerberos", a);
    }
    let kdc = Arc::new(Kdc::new(ctx.clone()));
    tokio::spawn(l.run(kdc.clone(), cfg.max_connections));
    if cfg.listen_kpasswd.is_empty() {
        return Ok(started);
    }
    let Some(pl) = bind(
        &cfg.listen_kpasswd,
        kauri_ldap::config::DEFAULT_KPASSWD,
        "Kerberos password changes",
    )
    .await?
    else {
        return Ok(started);
    };
    started.kpasswd = pl.local_addrs();
    for a in &started.kpasswd {
        ctx.status.listening("kpasswd", a);
    }
    if let Some(local) = started.kpasswd.first().copied() {
        let service = Arc::new(kpasswd::Kpasswd {
            kdc,
            local,
            lookaside: kdc::Lookaside::default(),
        });
        tokio::spawn(pl.run(service, cfg.max_connections));
    }
    Ok(started)
}

/// Binds `addr`; a failure on the default address is reported and skipped.
async fn bind(addr: &str, default: &str, what: &str) -> std::io::Result<Option<Listeners>> {
    match Listeners::bind(&[addr.to_string()]).await {
        Ok(l) => Ok(Some(l)),
        Err(e) if addr == default => {
            tracing::warn!(error = %e, address = %addr, "{what} not started");
            eprintln!(
                "kauri: no {what}: cannot listen on {addr} ({e}); set it in the configuration"
            );
            Ok(None)
        }
        Err(e) => Err(std::io::Error::new(
            e.kind(),
            format!("cannot listen on {addr} for {what}: {e}"),
        )),
    }
}
