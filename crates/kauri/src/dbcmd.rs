//! `kauri db …`: care of a local database — statistics, re-index, consistency check and
//! compaction.

use std::path::Path;

use anyhow::{Context, Result};
use indicatif::{ProgressBar, ProgressStyle};
use kauri_db::check::CheckReport;
use kauri_db::Db;
use kauri_kv::lmdb::{LmdbBackend, LmdbOptions};
use kauri_kv::Backend;

use crate::profile::directory_config;

/// Where a database lives: `dir` is the database itself or the data folder holding it in
/// `db/`. Returns (data folder, database folder).
fn locate(dir: &Path) -> Result<(std::path::PathBuf, std::path::PathBuf)> {
    let (data, db_dir) = if dir.join("db").join("data.mdb").exists() {
        (dir.to_path_buf(), dir.join("db"))
    } else {
        (
            dir.parent().map(Path::to_path_buf).unwrap_or_default(),
            dir.to_path_buf(),
        )
    };
    if !db_dir.join("data.mdb").exists() {
        anyhow::bail!(
            "no database in {} (expected {})",
            dir.display(),
            db_dir.join("data.mdb").display()
        );
    }
    Ok((data, db_dir))
}

/// Opens an existing database folder (refusing to create one by accident). A domain's
/// database opens with the configuration of the schema it stores, never with another.
pub fn open_existing(dir: &Path) -> Result<Db<LmdbBackend>> {
    let (data, db_dir) = locate(dir)?;
    if crate::domain::is_domain(&data) {
        return crate::domain::open_domain_db(&data);
    }
    Db::open_lmdb(&db_dir, directory_config(), LmdbOptions::default())
        .with_context(|| format!("opening the database in {}", db_dir.display()))
}

fn progress_bar(show: bool, what: &str) -> ProgressBar {
    if !show {
        return ProgressBar::hidden();
    }
    let pb = ProgressBar::new(0);
    pb.set_style(
        ProgressStyle::with_template(
            "{msg:>10} [{bar:40}] {pos}/{len} records ({per_sec}, eta {eta})",
        )
        .unwrap_or_else(|_| ProgressStyle::default_bar())
        .progress_chars("=> "),
    );
    pb.set_message(what.to_string());
    pb
}

/// `kauri db reindex`.
pub fn reindex(dir: &Path, json: bool) -> Result<()> {
    let db = open_existing(dir)?;
    let pb = progress_bar(!json, "re-index");
    let t = std::time::Instant::now();
    let progress = |done: u64, total: u64| {
        pb.set_length(total);
        pb.set_position(done);
    };
    let stats = db.reindex(Some(&progress))?;
    pb.finish_and_clear();
    let secs = t.elapsed().as_secs_f64();
    if json {
        println!(
            "{}",
            serde_json::json!({"records": stats.records, "index_keys": stats.index_keys, "seconds": secs})
        );
    } else {
        println!(
            "re-indexed {} records ({} index keys) in {secs:.2} s",
            stats.records, stats.index_keys
        );
    }
    Ok(())
}

/// `kauri db check`; returns whether the database is consistent (after fixing, with `fix`).
/// A domain's folder is also checked as a domain: every object against the schema, and
/// sAMAccountName, objectSid and objectGUID unique.
pub fn check(dir: &Path, fix: bool, json: bool) -> Result<bool> {
    let (data, _) = locate(dir)?;
    let (db, domain) = if crate::domain::is_domain(&data) {
        let (directory, _) = crate::domain::open_directory(&data)?;
        (directory.db().clone(), Some(directory))
    } else {
        (std::sync::Arc::new(open_existing(dir)?), None)
    };
    let pb = progress_bar(!json, "check");
    let progress = |done: u64, total: u64| {
        pb.set_length(total);
        pb.set_position(done);
    };
    let report: CheckReport = db.check(fix, Some(&progress))?;
    pb.finish_and_clear();
    let domain_report = match &domain {
        Some(d) => Some(d.check_domain().context("checking the domain")?),
        None => None,
    };
    let domain_problems: Vec<String> = domain_report
        .iter()
        .flat_map(|r| r.problems.iter().map(|p| format!("{}: {}", p.dn, p.what)))
        .collect();
    let clean = report.is_clean() && domain_problems.is_empty();
    if json {
        let problems: Vec<String> = report.problems.iter().map(|p| p.to_string()).collect();
        println!(
            "{}",
            serde_json::json!({
                "records": report.records,
                "index_keys": report.index_keys,
                "clean": clean,
                "fixed": report.fixed,
                "problems": problems,
                "more_problems": report.more_problems,
                "domain_objects": domain_report.as_ref().map(|r| r.objects),
                "domain_problems": domain_problems,
            })
        );
    } else {
        for p in &report.problems {
            println!("{p}");
        }
        if report.more_problems > 0 {
            println!("… and {} more problems", report.more_problems);
        }
        for p in &domain_problems {
            println!("{p}");
        }
        let state = if clean {
            "consistent"
        } else {
            "NOT consistent"
        };
        let fixed = if report.fixed { " after repair" } else { "" };
        let objects = domain_report
            .as_ref()
            .map(|r| format!(", {} objects against the schema", r.objects))
            .unwrap_or_default();
        println!(
            "checked {} records and {} index keys{objects}: {state}{fixed}",
            report.records, report.index_keys
        );
    }
    Ok(clean)
}

/// `kauri db stats`: records, USN, and what each table and the file hold.
pub fn stats(dir: &Path, json: bool) -> Result<()> {
    let db = open_existing(dir)?;
    let info = db.kv().info()?;
    let (tables, free_pages) = db.kv().table_stats()?;
    let page = info.used_bytes / (tables.iter().map(|t| t.pages).sum::<u64>() + free_pages).max(1);
    let r = db.read()?;
    let records = r.record_count()?;
    let usn = r.usn()?;
    let named: Vec<(&str, &kauri_kv::lmdb::TableStat)> = kauri_db::db::TABLES
        .iter()
        .copied()
        .zip(tables.iter())
        .collect();
    if json {
        let tables: serde_json::Map<String, serde_json::Value> = named
            .iter()
            .map(|(n, t)| {
                (
                    n.to_string(),
                    serde_json::json!({"entries": t.entries, "bytes": t.pages * page}),
                )
            })
            .collect();
        println!(
            "{}",
            serde_json::json!({
                "backend": info.name,
                "records": records,
                "highest_usn": usn,
                "size_on_disk": info.size_on_disk,
                "map_size": info.map_size,
                "used_bytes": info.used_bytes,
                // Free pages, and the pages of the index's id runs kept as sub-databases.
                "free_bytes": free_pages * page,
                // The pages LMDB's freelist holds for reuse (as `mdb_stat -f` counts them).
                "free_pages": info.free_pages,
                "tables": tables,
            })
        );
    } else {
        let m = |b: u64| b as f64 / 1048576.0;
        println!("backend          {}", info.name);
        println!("records          {records}");
        println!("highest USN      {usn}");
        println!("size on disk     {:.1} MiB", m(info.size_on_disk));
        println!("pages in use     {:.1} MiB", m(info.used_bytes));
        println!(
            "other pages      {:.1} MiB (free pages, reused before the file grows, and \
             the index's long id runs)",
            m(free_pages * page)
        );
        if let Some(free) = info.free_pages {
            println!(
                "free pages       {free} ({:.1} MiB, reused before the file grows)",
                m(free * page)
            );
        }
        println!("map size         {:.1} MiB", m(info.map_size));
        println!();
        println!("table            entries      size");
        for (name, t) in &named {
            println!(
                "{name:<12} {:>11}  {:>6.1} MiB",
                t.entries,
                m(t.pages * page)
            );
        }
    }
    Ok(())
}

/// `kauri db compact`: the database file rewritten without its free pages (after an upgrade,
/// a re-index or mass deletions the file keeps its high-water mark; LMDB reuses free pages
/// but never shrinks the file). Opens the database first, so pending upgrades run before.
pub fn compact(dir: &Path, json: bool) -> Result<()> {
    let (_, db_dir) = locate(dir)?;
    drop(open_existing(dir)?);
    let spinner = if json {
        ProgressBar::hidden()
    } else {
        ProgressBar::new_spinner().with_message(format!("compacting {}", db_dir.display()))
    };
    spinner.enable_steady_tick(std::time::Duration::from_millis(120));
    let (before, after) =
        LmdbBackend::compact(&db_dir, kauri_db::db::TABLE_SPECS, LmdbOptions::default())
            .with_context(|| format!("compacting {}", db_dir.display()))?;
    spinner.finish_and_clear();
    if json {
        println!(
            "{}",
            serde_json::json!({"path": db_dir.display().to_string(), "bytes_before": before, "bytes_after": after})
        );
    } else {
        let m = |b: u64| b as f64 / 1048576.0;
        println!(
            "compacted {}: {:.1} MiB -> {:.1} MiB",
            db_dir.display(),
            m(before),
            m(after)
        );
    }
    Ok(())
}
