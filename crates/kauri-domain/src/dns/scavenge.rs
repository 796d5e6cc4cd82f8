//! Aging and scavenging as AD does it (MS-DNSP §3.1.1, Samba's
//! `scavenge_dns_records.c`): in a zone with aging on, a dynamic record not refreshed for
//! the no-refresh plus the refresh interval is stale and removed; a name left without
//! records becomes a tombstone; tombstones older than the tombstone interval are purged.
//! Static records (timestamp 0) are never touched.

use kauri_dns_proto::dnsp::{hours_since_1601, Body};
use kauri_kv::Backend;

use super::layout::DnsLayout;
use super::nodes::{self, ZoneInfo};
use crate::directory::{DirResult, Directory};

/// What a scavenging pass did (or, dry, would do).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ScavengeReport {
    /// Zones looked at.
    pub zones: usize,
    /// Nodes looked at.
    pub nodes: usize,
    /// Stale records removed.
    pub records_removed: usize,
    /// Names tombstoned (left without records).
    pub tombstoned: Vec<String>,
    /// Tombstones purged.
    pub purged: Vec<String>,
}

/// Whether a dynamic record is stale at `now_hours` in a zone.
pub fn is_stale(timestamp: u32, zone: &ZoneInfo, now_hours: u32) -> bool {
    if timestamp == 0 || !zone.aging() {
        return false;
    }
    let window = zone.no_refresh_hours().saturating_add(zone.refresh_hours());
    // A zone whose aging was just turned on gives every record a refresh interval first.
    let enabled = zone.aging_enabled_hours();
    if enabled != 0 && now_hours < enabled.saturating_add(zone.refresh_hours()) {
        return false;
    }
    timestamp.saturating_add(window) < now_hours
}

impl<B: Backend> Directory<B> {
    /// One scavenging pass over every zone, inside the caller's write transaction (a dry
    /// run changes nothing and reports what it would do).
    pub fn scavenge_dns(
        &self,
        w: &mut kauri_db::DbWrite<'_, B>,
        now_unix: u64,
        tombstone_days: u32,
        dry_run: bool,
    ) -> DirResult<ScavengeReport> {
        let mut report = ScavengeReport::default();
        let Some(info) = self.domain() else {
            return Ok(report);
        };
        let layout = DnsLayout::of(&info)?;
        let now_hours = hours_since_1601(now_unix);
        let purge_before = kauri_dns_proto::dnsp::filetime_from_unix(
            now_unix.saturating_sub(u64::from(tombstone_days) * 86_400),
        );
        for zone in nodes::zones(w, &layout)? {
            report.zones += 1;
            let mut changed = false;
            for (rel, id) in nodes::node_names(w, &zone)? {
                report.nodes += 1;
                let (records, tombstoned) = nodes::records_by_id(w, id)?;
                if tombstoned {
                    let old = records.iter().any(|r| {
                        matches!(r.body, Body::Tombstone { entombed } if entombed < purge_before)
                    });
                    if old {
                        report.purged.push(format!("{rel}.{}", zone.name));
                        if !dry_run {
                            self.delete_dns_node(w, &DnsLayout::node_dn(&zone.dn, &rel)?)?;
                        }
                    }
                    continue;
                }
                let before = records.len();
                let kept: Vec<_> = records
                    .into_iter()
                    .filter(|r| !is_stale(r.timestamp, &zone, now_hours))
                    .collect();
                let removed = before - kept.len();
                if removed == 0 {
                    continue;
                }
                report.records_removed += removed;
                if kept.is_empty() {
                    report.tombstoned.push(format!("{rel}.{}", zone.name));
                }
                if !dry_run {
                    self.write_dns_node(w, &zone.dn, &rel, kept, None, now_unix)?;
                    changed = true;
                }
            }
            if changed {
                self.bump_dns_serial(w, &zone.dn, now_unix)?;
            }
        }
        Ok(report)
    }
}
