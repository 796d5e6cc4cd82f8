//! The DNS server of an AD domain controller: authoritative for the zones stored in the
//! directory (MS-DNSP's objects and records), with the DC locator records clients find
//! the domain by, secure dynamic updates (GSS-TSIG with the domain's Kerberos), and AD's
//! aging and scavenging of stale records.

pub mod answer;
pub mod forward;
pub mod scavenge;
pub mod server;
pub mod transport;
pub mod tsig;
pub mod update;
pub mod zones;

use std::net::SocketAddr;
use std::sync::Arc;

use kauri_domain::dns::DnsLayout;
use kauri_ldap::ctx::Ctx;

pub use server::Dns;

/// Starts the DNS server beside an LDAP server, on the configured address (UDP and TCP),
/// when it serves a domain; with the scavenger. A default address (port 53 needs
/// privileges) is skipped with a warning when it cannot be bound; an address set in the
/// configuration is an error. Returns the addresses listened on.
pub async fn start(ctx: Arc<Ctx>) -> std::io::Result<Vec<SocketAddr>> {
    let cfg = &ctx.cfg().dns;
    let Some(domain) = ctx.dir.domain() else {
        return Ok(Vec::new());
    };
    if cfg.listen.is_empty() {
        return Ok(Vec::new());
    }
    let layout =
        DnsLayout::of(&domain).map_err(|e| std::io::Error::other(format!("DNS layout: {e}")))?;
    let forwarder =
        forward::Forwarder::from_config(&cfg.forwarders).map_err(std::io::Error::other)?;
    let mut transfers = Vec::new();
    for t in &cfg.zone_transfers {
        transfers.push(server::Allowed::parse(t).ok_or_else(|| {
            std::io::Error::other(format!(
                "zone_transfers: '{t}' is not an address, network or 'any'"
            ))
        })?);
    }
    let listeners = match transport::Listeners::bind(std::slice::from_ref(&cfg.listen)).await {
        Ok(l) => l,
        Err(e) if cfg.listen == kauri_ldap::config::DEFAULT_DNS => {
            tracing::warn!(error = %e, address = %cfg.listen, "DNS not started");
            eprintln!(
                "kauri: no DNS: cannot listen on {} ({e}); set [dns] listen in the configuration",
                cfg.listen
            );
            return Ok(Vec::new());
        }
        Err(e) => {
            return Err(std::io::Error::new(
                e.kind(),
                format!("cannot listen on {} for DNS: {e}", cfg.listen),
            ))
        }
    };
    let addrs = listeners.local_addrs();
    for a in &addrs {
        ctx.status.listening("dns", a);
    }
    let dns = Arc::new(Dns {
        ctx: ctx.clone(),
        catalog: zones::Catalog::new(layout),
        forwarder,
        transfers,
        keys: tsig::GssKeys::default(),
    });
    tokio::spawn(listeners.run(dns, ctx.cfg().max_connections, cfg.rate_limit));
    tokio::spawn(scavenge::run_periodically(ctx.clone()));
    Ok(addrs)
}
