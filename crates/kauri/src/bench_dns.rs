//! `kauri bench dns-scavenge`: what AD's scavenger costs on a large zone. A provisioned
//! domain gets a zone of N names, each with one dynamic A record, a given share of them
//! stale; a dry pass and a real pass are timed through the same code the server's
//! scavenger runs, then the tombstones are purged.

use std::path::PathBuf;
use std::time::Instant;

use anyhow::{Context, Result};
use indicatif::{ProgressBar, ProgressStyle};
use kauri_dns_proto::dnsp::{self, hours_since_1601, DnsProperty};
use kauri_dns_proto::RData;
use kauri_domain::dns::layout::DnsLayout;
use kauri_domain::dns::nodes::zone_record;

/// Names written per transaction.
const CHUNK: usize = 5_000;

/// What to build.
#[derive(Debug, Clone)]
pub struct Options {
    /// The data folder to create (must not exist).
    pub data: PathBuf,
    /// Names in the zone.
    pub records: usize,
    /// Percent of them stale.
    pub stale_percent: u32,
    /// Show progress.
    pub progress: bool,
}

/// What was measured.
#[derive(Debug, Clone, serde::Serialize)]
pub struct Report {
    /// Names (one record each) in the zone.
    pub records: usize,
    /// Seconds to write them.
    pub write_seconds: f64,
    /// Seconds of a dry pass over every zone (nothing written).
    pub dry_run_seconds: f64,
    /// Seconds of the real pass (stale records removed, names tombstoned).
    pub scavenge_seconds: f64,
    /// Records removed.
    pub removed: usize,
    /// Seconds of the pass, 15 days later, that purges the tombstones.
    pub purge_seconds: f64,
    /// Tombstones purged.
    pub purged: usize,
}

/// Builds the zone and times the passes.
pub fn run(o: &Options) -> Result<Report> {
    crate::domain::provision(&crate::domain::ProvisionOptions {
        realm: "SAMDOM.EXAMPLE.COM".into(),
        domain: "SAMDOM".into(),
        adminpass: "Dns.Bench-Passw0rd1".into(),
        targetdir: o.data.clone(),
        schema_dir: None,
        host_name: "DC1".into(),
        site: "Default-First-Site-Name".into(),
        host_ip: vec![std::net::IpAddr::from([127, 0, 0, 1])],
        password_hash_schemes: Vec::new(),
        json: false,
        quiet: true,
    })?;
    let dir = crate::domain::open_domain_directory(&o.data, true)?;
    let info = dir.domain().context("the new folder holds no domain")?;
    let layout = DnsLayout::of(&info)?;
    let zone = DnsLayout::zone_dn(&layout.domain_container, "bench.test")?;
    let now = kauri_domain::directory::now_secs();
    let hours = hours_since_1601(now);
    {
        let mut w = dir.db().write()?;
        let props = vec![
            DnsProperty::with_u32(dnsp::ZONE_TYPE, 1),
            DnsProperty::with_u8(dnsp::ALLOW_UPDATE, 2),
            DnsProperty::with_u32(dnsp::NOREFRESH_INTERVAL, 168),
            DnsProperty::with_u32(dnsp::REFRESH_INTERVAL, 168),
            DnsProperty::with_u32(dnsp::AGING_STATE, 1),
            DnsProperty::with_u32(dnsp::AGING_ENABLED_TIME, hours.saturating_sub(10_000)),
        ];
        dir.create_dns_zone(&mut w, &layout.domain_container, "bench.test", props)?;
        w.commit()?;
    }
    let bar = if o.progress {
        ProgressBar::new(o.records as u64)
    } else {
        ProgressBar::hidden()
    };
    bar.set_style(
        ProgressStyle::with_template("writing names [{bar:40}] {pos}/{len} {per_sec} eta {eta}")
            .unwrap_or_else(|_| ProgressStyle::default_bar()),
    );
    let started = Instant::now();
    let stale_every = if o.stale_percent == 0 {
        usize::MAX
    } else {
        (100 / o.stale_percent.min(100)) as usize
    };
    for chunk in (0..o.records).collect::<Vec<_>>().chunks(CHUNK) {
        let mut w = dir.db().write()?;
        for &i in chunk {
            // Stale ones were last refreshed 400 hours ago (past 168 + 168), the others now.
            let stamp = if i % stale_every == 0 {
                hours - 400
            } else {
                hours
            };
            let ip = std::net::Ipv4Addr::from(0x0a00_0000u32 + i as u32);
            dir.write_dns_node(
                &mut w,
                &zone,
                &format!("host{i}"),
                vec![zone_record(RData::A(ip), 1200, 0, stamp)],
                None,
                now,
            )?;
        }
        w.commit()?;
        bar.inc(chunk.len() as u64);
    }
    bar.finish_and_clear();
    let write_seconds = started.elapsed().as_secs_f64();
    let pass = |at: u64, dry: bool| -> Result<(f64, kauri_domain::dns::scavenge::ScavengeReport)> {
        let t = Instant::now();
        let mut w = dir.db().write()?;
        let r = dir.scavenge_dns(&mut w, at, 14, dry)?;
        w.commit()?;
        Ok((t.elapsed().as_secs_f64(), r))
    };
    let (dry_run_seconds, _) = pass(now, true)?;
    let (scavenge_seconds, r) = pass(now, false)?;
    let (purge_seconds, p) = pass(now + 15 * 86_400, false)?;
    Ok(Report {
        records: o.records,
        write_seconds,
        dry_run_seconds,
        scavenge_seconds,
        removed: r.records_removed,
        purge_seconds,
        purged: p.purged.len(),
    })
}
