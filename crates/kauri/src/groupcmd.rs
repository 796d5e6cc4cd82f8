//! `kauri group …` on a local domain folder: today `group stats`, the numbers that matter
//! for groups at scale.

use std::path::Path;

use anyhow::{bail, Context, Result};
use kauri_domain::directory::stats::group_stats;

/// `kauri group stats`: group count, memberships, mean and median members, the largest
/// groups, groups by kind.
pub fn stats(data: &Path, top: usize, json: bool) -> Result<()> {
    if !crate::domain::is_domain(data) {
        bail!(
            "{} is not a domain folder (no domain.json); `kauri domain provision` makes one",
            data.display()
        );
    }
    let db = crate::domain::open_domain_db(data)?;
    let r = db.read()?;
    let info =
        kauri_domain::directory::DomainInfo::discover(&r)?.context("the folder holds no domain")?;
    let s = group_stats(&r, &info.domain_dn, top)?;
    if json {
        let largest: Vec<serde_json::Value> = s
            .largest
            .iter()
            .map(|(dn, n)| serde_json::json!({"dn": dn, "members": n}))
            .collect();
        println!(
            "{}",
            serde_json::json!({
                "domain": info.domain_dn.to_string(),
                "groups": s.groups,
                "memberships": s.memberships,
                "empty_groups": s.empty,
                "average_members": s.average_members,
                "median_members": s.median_members,
                "largest": largest,
                "by_type": s.by_type,
            })
        );
        return Ok(());
    }
    println!("groups in {}", info.domain_dn);
    println!("  groups                 {}", s.groups);
    println!("  memberships (direct)   {}", s.memberships);
    println!("  empty groups           {}", s.empty);
    println!(
        "  members per group      {:.1} average, {:.1} median",
        s.average_members, s.median_members
    );
    println!();
    println!("  by type");
    for (kind, n) in &s.by_type {
        println!("    {n:>8}  {kind}");
    }
    println!();
    println!("  largest");
    for (dn, n) in &s.largest {
        println!("    {n:>8}  {dn}");
    }
    Ok(())
}
