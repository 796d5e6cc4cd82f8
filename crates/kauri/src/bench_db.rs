//! `kauri bench db`: the directory database's numbers at realistic scale.
//!
//! For each scale it generates an AD-shaped directory (see [`crate::populate`]) into a fresh
//! LMDB database and measures bulk load, re-index, indexed equality searches on one and two
//! threads, one-level and subtree searches of fixed-size OUs, moving an OU of half the
//! users, reading 2 attributes versus all, a `(uSNChanged>=N)` change scan, the size on disk
//! and the peak memory of the process.

use std::ops::ControlFlow;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use anyhow::{Context, Result};
use indicatif::{ProgressBar, ProgressStyle};
use kauri_db::{Db, Dn, Filter, Rdn, Scope, SearchRequest};
use kauri_kv::lmdb::{LmdbBackend, LmdbOptions};
use kauri_kv::Backend;

use crate::populate::{generate, Layout, Rng, Shape};
use crate::profile::directory_config;

/// Entries per transaction of the bulk load.
const BULK_CHUNK: usize = 20_000;

/// One measured number.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub struct Measure {
    /// What was measured.
    pub name: String,
    /// The value.
    pub value: f64,
    /// Its unit.
    pub unit: String,
}

/// All numbers of one scale.
#[derive(Debug, Clone, serde::Serialize)]
pub struct ScaleReport {
    /// Users in the directory.
    pub users: usize,
    /// Records in the directory.
    pub records: u64,
    /// The numbers.
    pub measures: Vec<Measure>,
}

/// Options of the benchmark.
#[derive(Debug, Clone)]
pub struct BenchOptions {
    /// User counts to run at.
    pub scales: Vec<usize>,
    /// Where databases are created (removed afterwards unless `keep`).
    pub dir: PathBuf,
    /// Keep the databases.
    pub keep: bool,
    /// Equality searches per thread count.
    pub searches: usize,
    /// Print progress bars.
    pub progress: bool,
}

fn bar(len: u64, msg: &str, show: bool) -> ProgressBar {
    if !show {
        return ProgressBar::hidden();
    }
    let pb = ProgressBar::new(len);
    pb.set_style(
        ProgressStyle::with_template("{msg:>12} [{bar:40}] {pos}/{len} ({per_sec}, eta {eta})")
            .unwrap_or_else(|_| ProgressStyle::default_bar())
            .progress_chars("=> "),
    );
    pb.set_message(msg.to_string());
    pb
}

fn per_op(total: Duration, n: usize) -> f64 {
    total.as_secs_f64() * 1e6 / n.max(1) as f64
}

/// Peak resident memory of this process, in MiB (VmHWM).
pub fn peak_rss_mib() -> f64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("VmHWM:"))
                .and_then(|l| l.split_whitespace().nth(1))
                .and_then(|kb| kb.parse::<f64>().ok())
        })
        .map(|kb| kb / 1024.0)
        .unwrap_or(0.0)
}

/// Runs the whole benchmark.
pub fn run(opts: &BenchOptions) -> Result<Vec<ScaleReport>> {
    let mut out = Vec::new();
    for &users in &opts.scales {
        let dir = opts.dir.join(format!("db-{users}"));
        if dir.exists() {
            std::fs::remove_dir_all(&dir)
                .with_context(|| format!("removing old {}", dir.display()))?;
        }
        let report = run_scale(users, &dir, opts);
        if !opts.keep {
            let _ = std::fs::remove_dir_all(&dir);
        }
        out.push(report?);
    }
    Ok(out)
}

fn open(dir: &Path) -> Result<Db<LmdbBackend>> {
    let options = LmdbOptions {
        map_size: 32 << 30,
        replay_limit: 64 << 20,
        ..LmdbOptions::default()
    };
    Db::open_lmdb(dir, directory_config(), options)
        .with_context(|| format!("opening database in {}", dir.display()))
}

fn run_scale(users: usize, dir: &Path, opts: &BenchOptions) -> Result<ScaleReport> {
    let db = open(dir)?;
    let shape = Shape::for_users(users);
    let expected = (shape.users + shape.groups + shape.computers + shape.contacts) as u64;
    let mut m: Vec<Measure> = Vec::new();
    let mut push = |name: String, value: f64, unit: &str| {
        m.push(Measure {
            name,
            value,
            unit: unit.to_string(),
        })
    };

    // Bulk load: chunked transactions, index keys written sorted at the end.
    let pb = bar(expected, &format!("load {}k", users / 1000), opts.progress);
    let t = Instant::now();
    let mut loader = db.bulk_loader(BULK_CHUNK)?;
    let mut records = 0u64;
    let layout: Layout = generate(shape, 42, |e, root| {
        if root {
            loader.add_root(e)?;
        } else {
            loader.add(e)?;
        }
        records += 1;
        if records.is_multiple_of(1024) {
            pb.set_position(records);
        }
        Ok(())
    })?;
    loader.finish()?;
    let load = t.elapsed();
    pb.finish_and_clear();
    push(
        format!("bulk load ({records} records)"),
        load.as_secs_f64(),
        "s",
    );
    push(
        "bulk load rate".into(),
        records as f64 / load.as_secs_f64(),
        "records/s",
    );
    push(
        "peak memory of the loading process (VmHWM)".into(),
        peak_rss_mib(),
        "MiB",
    );

    // Re-index.
    let t = Instant::now();
    let stats = db.reindex(None)?;
    let reindex = t.elapsed();
    push(
        format!(
            "re-index ({} records, {} index keys)",
            stats.records, stats.index_keys
        ),
        reindex.as_secs_f64(),
        "s",
    );

    push(
        "peak memory after the re-index too (VmHWM)".into(),
        peak_rss_mib(),
        "MiB",
    );
    drop(db);

    // The read measurements run in a fresh process, so its peak memory is that of a
    // process serving searches from this database, not of the one that loaded it.
    let layout_file = dir.join("layout.json");
    std::fs::write(&layout_file, serde_json::to_vec(&layout)?)?;
    let exe = std::env::current_exe().context("locating the kauri executable")?;
    let out = std::process::Command::new(exe)
        .args(["bench", "db-queries", "--dir"])
        .arg(dir)
        .args([
            "--users",
            &users.to_string(),
            "--searches",
            &opts.searches.to_string(),
        ])
        .output()
        .context("running the query benchmark process")?;
    anyhow::ensure!(
        out.status.success(),
        "query benchmark failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let queries: Vec<Measure> =
        serde_json::from_slice(&out.stdout).context("reading the query benchmark's results")?;
    m.extend(queries);

    let db = open(dir)?;
    let mut push = |name: String, value: f64, unit: &str| {
        m.push(Measure {
            name,
            value,
            unit: unit.to_string(),
        })
    };
    // Moving an OU with half the users below another parent.
    let big = Dn::parse(&layout.big_ou)?;
    let t = Instant::now();
    db.rename(
        &big,
        &Rdn::parse("OU=Big")?,
        false,
        Some(&Dn::parse(&layout.target_ou)?),
    )?;
    let moved = t.elapsed();
    let r = db.read()?;
    let new_base = Dn::parse(&format!("OU=Big,{}", layout.target_ou))?;
    let under = r.search_count(&SearchRequest::new(
        new_base,
        Scope::OneLevel,
        Filter::present("objectClass"),
    ))?;
    anyhow::ensure!(
        under == users / 2,
        "after the move {under} users are below the OU"
    );
    drop(r);
    push(
        format!("move an OU holding {} users", users / 2),
        moved.as_secs_f64() * 1e3,
        "ms",
    );

    let info = db.kv().info()?;
    push(
        "database size on disk".into(),
        info.size_on_disk as f64 / (1 << 20) as f64,
        "MiB",
    );
    Ok(ScaleReport {
        users,
        records,
        measures: m,
    })
}

/// `kauri bench db-queries`: the read measurements on a database built by
/// `kauri bench db`, printed as JSON; run as a separate process by [`run`].
pub fn run_queries(dir: &Path, users: usize, searches: usize) -> Result<Vec<Measure>> {
    let layout: Layout = serde_json::from_slice(
        &std::fs::read(dir.join("layout.json")).context("reading layout.json")?,
    )?;
    let db = open(dir)?;
    let mut m: Vec<Measure> = Vec::new();
    let mut push = |name: String, value: f64, unit: &str| {
        m.push(Measure {
            name,
            value,
            unit: unit.to_string(),
        })
    };
    let domain = Dn::parse(&layout.domain)?;
    // Equality search by an indexed attribute, with DN and two attributes read.
    for threads in [1usize, 2] {
        let n = searches;
        let t = Instant::now();
        std::thread::scope(|s| -> Result<()> {
            let mut handles = Vec::new();
            for th in 0..threads {
                let db = &db;
                let domain = domain.clone();
                handles.push(s.spawn(move || -> Result<usize> {
                    let mut rng = Rng::new(7 + th as u64);
                    let mut found = 0;
                    for _ in 0..n / threads {
                        let who = rng.below(users);
                        let filter = Filter::eq("sAMAccountName", format!("user{who:06}"));
                        found += equality_lookup(db, &domain, filter)?;
                    }
                    Ok(found)
                }));
            }
            let mut found = 0;
            for h in handles {
                found += h
                    .join()
                    .map_err(|_| anyhow::anyhow!("search thread panicked"))??;
            }
            anyhow::ensure!(
                found == n / threads * threads,
                "equality searches found {found} of {n}"
            );
            Ok(())
        })?;
        let el = t.elapsed();
        push(
            format!("equality search (sAMAccountName), {threads} thread(s)"),
            per_op(el, n),
            "µs/search",
        );
        push(
            format!("equality search throughput, {threads} thread(s)"),
            n as f64 / el.as_secs_f64(),
            "searches/s",
        );
    }

    // One-level search of a 50-entry OU and subtree search of a 500-entry OU.
    let mut rng = Rng::new(99);
    let mut timed = |reps: usize,
                     bases: &[String],
                     scope,
                     attrs: &[&str],
                     per_search: usize|
     -> Result<Duration> {
        let t = Instant::now();
        let mut got = 0;
        for _ in 0..reps {
            got += scoped_search(&db, &bases[rng.below(bases.len())], scope, attrs)?;
        }
        let el = t.elapsed();
        anyhow::ensure!(
            got == reps * per_search,
            "{reps} searches returned {got} entries"
        );
        Ok(el)
    };
    let el = timed(2000, &layout.teams, Scope::OneLevel, &["cn", "mail"], 50)?;
    push(
        "one-level search, 50-entry OU (2 attrs)".into(),
        per_op(el, 2000),
        "µs/search",
    );
    let el = timed(
        400,
        &layout.departments,
        Scope::Subtree,
        &["cn", "mail"],
        500,
    )?;
    push(
        "subtree search, 500-entry OU (2 attrs)".into(),
        per_op(el, 400),
        "µs/search",
    );

    // 2 of ~25 attributes versus all of them, over the same 500 entries.
    let two = timed(
        400,
        &layout.departments,
        Scope::Subtree,
        &["cn", "mail"],
        500,
    )?;
    let all = timed(400, &layout.departments, Scope::Subtree, &[], 500)?;
    push(
        "read 2 of ~25 attributes, per entry".into(),
        per_op(two, 400 * 500),
        "µs/entry",
    );
    push(
        "read all ~25 attributes, per entry".into(),
        per_op(all, 400 * 500),
        "µs/entry",
    );

    // (uSNChanged>=N) returning the last 1,000 changes.
    let top = db.highest_committed_usn();
    let since = top.saturating_sub(999);
    let filter = Filter::ge("uSNChanged", since.to_string());
    let reps = 200;
    let t = Instant::now();
    for _ in 0..reps {
        let r = db.read()?;
        let n = r.search_count(&SearchRequest::new(
            domain.clone(),
            Scope::Subtree,
            filter.clone(),
        ))?;
        anyhow::ensure!(n == 1000, "change scan returned {n}");
    }
    push(
        "(uSNChanged>=N), last 1,000 changes".into(),
        per_op(t.elapsed(), reps),
        "µs/search",
    );

    push(
        "peak memory of a process serving these searches (VmHWM)".into(),
        peak_rss_mib(),
        "MiB",
    );
    Ok(m)
}

/// One equality lookup as a client does it: snapshot, search, DN and two attributes.
fn equality_lookup<B: Backend>(db: &Db<B>, base: &Dn, filter: Filter) -> Result<usize> {
    let r = db.read()?;
    let cn = r.attr_id("cn");
    let mail = r.attr_id("mail");
    let mut cache = r.dn_cache();
    let mut n = 0;
    let mut sink = Vec::with_capacity(256);
    r.search(
        &SearchRequest::new(base.clone(), Scope::Subtree, filter),
        |hit| {
            let dn = r.cached_dn(&mut cache, hit.id)?;
            sink.extend_from_slice(dn.as_bytes());
            for a in [cn, mail].into_iter().flatten() {
                if let Some(v) = hit.record.attr(a) {
                    for x in v.values() {
                        sink.extend_from_slice(x.raw);
                    }
                }
            }
            n += 1;
            Ok(ControlFlow::Continue(()))
        },
    )?;
    std::hint::black_box(&sink);
    Ok(n)
}

/// A scoped search that builds each result's DN and copies the asked attributes (all when
/// `attrs` is empty) with their names into a buffer, as an encoder would.
fn scoped_search<B: Backend>(
    db: &Db<B>,
    base: &str,
    scope: Scope,
    attrs: &[&str],
) -> Result<usize> {
    let r = db.read()?;
    let ids: Vec<u32> = attrs.iter().filter_map(|a| r.attr_id(a)).collect();
    let mut cache = r.dn_cache();
    let mut n = 0;
    let mut sink: Vec<u8> = Vec::with_capacity(4096);
    let req = SearchRequest::new(Dn::parse(base)?, scope, Filter::present("objectClass"));
    r.search(&req, |hit| {
        sink.clear();
        let dn = r.cached_dn(&mut cache, hit.id)?;
        sink.extend_from_slice(dn.as_bytes());
        let mut emit = |a: kauri_db::record::AttrView<'_>| {
            if let Some(name) = r.attr_name(a.id) {
                sink.extend_from_slice(name.as_bytes());
            }
            for v in a.values() {
                sink.extend_from_slice(v.raw);
            }
        };
        if ids.is_empty() {
            for a in hit.record.attrs() {
                emit(a);
            }
        } else {
            for id in &ids {
                if let Some(a) = hit.record.attr(*id) {
                    emit(a);
                }
            }
        }
        std::hint::black_box(&sink);
        n += 1;
        Ok(ControlFlow::Continue(()))
    })?;
    Ok(n)
}

/// Renders the reports as Markdown tables (one row per measure) for BENCHMARKS.md.
pub fn markdown(reports: &[ScaleReport]) -> String {
    let mut s = String::new();
    for r in reports {
        s.push_str(&format!(
            "\n### {} users ({} records)\n\n| measure | value |\n|---|---|\n",
            r.users, r.records
        ));
        for m in &r.measures {
            let v = if m.value >= 100.0 {
                format!("{:.0}", m.value)
            } else if m.value >= 10.0 {
                format!("{:.1}", m.value)
            } else {
                format!("{:.2}", m.value)
            };
            s.push_str(&format!("| {} | {} {} |\n", m.name, v, m.unit));
        }
    }
    s
}
