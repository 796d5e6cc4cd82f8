//! The scavenger's schedule: a pass every `scavenging_interval_hours` through the single
//! writer, so it never races a client's change.

use std::sync::Arc;
use std::time::Duration;

use kauri_domain::dns::scavenge::ScavengeReport;
use kauri_ldap::ctx::Ctx;
use kauri_ldap::writer::{Task, Work};
use parking_lot::Mutex;

/// Runs one pass now, through the writer.
pub async fn scavenge_now(
    ctx: &Ctx,
    now_unix: u64,
    dry_run: bool,
) -> Result<ScavengeReport, String> {
    let days = ctx.cfg().dns.tombstone_interval_days;
    let report = Arc::new(Mutex::new(ScavengeReport::default()));
    let out = report.clone();
    let work = Work(Box::new(move |dir, w| {
        *out.lock() = dir.scavenge_dns(w, now_unix, days, dry_run)?;
        Ok(())
    }));
    ctx.writer
        .run_task(Task::Run(work))
        .await
        .map_err(|e| e.to_string())?;
    let r = report.lock().clone();
    Ok(r)
}

/// Scavenges every interval until the server stops (the first pass one interval after
/// the start, as AD's scavenging period).
pub async fn run_periodically(ctx: Arc<Ctx>) {
    let hours = ctx.cfg().dns.scavenging_interval_hours;
    if hours == 0 {
        return;
    }
    let every = Duration::from_secs(u64::from(hours) * 3600);
    loop {
        tokio::time::sleep(every).await;
        let now = kauri_domain::directory::now_secs();
        match scavenge_now(&ctx, now, false).await {
            Ok(r) => tracing::info!(
                zones = r.zones,
                removed = r.records_removed,
                tombstoned = r.tombstoned.len(),
                purged = r.purged.len(),
                "dns: scavenged"
            ),
            Err(e) => tracing::warn!(error = %e, "dns: scavenging failed"),
        }
    }
}
