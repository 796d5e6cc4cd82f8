//! `kauri bench access`: what security descriptors and access checks cost.
//!
//! A fresh domain (SAMDOM.EXAMPLE.COM) is provisioned in this process in a temporary
//! folder; `--users` users go into `OU=Staff` through [`Directory::apply`] as the server
//! itself, many to a transaction (the path `kauri ldif import` takes on a data folder, so
//! every user gets its SID and its computed security descriptor), with one ordinary
//! account, `reader`, whose password is set in-process. The domain is then served by
//! Kauri's LDAP server on 127.0.0.1 on its own 2-thread runtime, with a configured
//! administrator DN (`admin_dn`), and driven by the `bench ldap` client on another. It
//! measures:
//!
//! 1. the database: its size, its records, the distinct descriptors and their bytes, and
//!    what a copy of its descriptor in every record would take instead;
//! 2. equality searches `(sAMAccountName=userK)` for random K, subtree from the domain,
//!    asking for `cn mail sAMAccountName`, on 1 and 8 connections, bound as `reader`
//!    (every object and attribute checked against its descriptor) and as the configured
//!    administrator DN (no checks: what the built-in policy cost), in alternating windows;
//! 3. paged sweeps of every user (`(objectClass=user)`, page size 1000, `cn
//!    sAMAccountName`) as each, three apiece, alternating; both must see the same entries;
//! 4. re-propagation: one modify of `OU=Staff`'s nTSecurityDescriptor (SD flags 4, the
//!    DACL) adding an inheritable ACE, timed from opening the write transaction to the end
//!    of its commit, with the number of records whose descriptor changed; then a user
//!    below must hold the ACE, marked inherited.
//!
//! Every answer is checked: a failed result, a wrong count, or an entry without the
//! attributes asked for fails the run. The audit log's cost is `kauri bench audit`.

use std::collections::HashMap;
use std::ops::Bound;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::{bail, Context, Result};
use kauri_db::record::RecordView;
use kauri_db::{DbRead, Dn, Entry, Filter, Modification, ModifyOp};
use kauri_domain::directory::acl::extended::RESET_PASSWORD;
use kauri_domain::directory::{Caller, Change, Directory, Request};
use kauri_domain::password::encode_unicode_pwd;
use kauri_domain::security::{ace_flags, Acl, SecurityDescriptor};
use kauri_domain::sid::Sid;
use kauri_kv::lmdb::LmdbBackend;
use kauri_kv::{Backend, Direction, ReadTxn};
use kauri_ldap::ServerConfig;
use kauri_ldap_client::{ClientError, LdapClient};
use kauri_ldap_proto::controls::{ControlValue, PagedResults};
use kauri_ldap_proto::SearchResultEntry;

use crate::bench_ldap::{
    check, client_runtime, connect, num, quantile_us, search_request, start_server, unbind,
};
use crate::populate::Rng;

/// Its DN.
const DOMAIN: &str = "DC=samdom,DC=example,DC=com";
/// The DNS suffix of the users' mail and principal names.
const MAIL_SUFFIX: &str = "samdom.example.com";
/// The OU holding the users.
const STAFF_OU: &str = "OU=Staff,DC=samdom,DC=example,DC=com";
/// The ordinary account the checked searches bind as.
const READER_DN: &str = "CN=reader,CN=Users,DC=samdom,DC=example,DC=com";
/// Its password.
const READER_PW: &str = "Bench.Reader.Passw0rd1";
/// The Administrator's password (provisioning wants one; nobody binds as it).
const ADMINISTRATOR_PW: &str = "Bench.Adm1n.Passw0rd";
/// The server's configured administrator DN (not an object of the directory).
const CONFIG_ADMIN_DN: &str = "CN=bench-admin,DC=samdom,DC=example,DC=com";
/// Its password.
const CONFIG_ADMIN_PW: &str = "bench-admin-pw";
/// Page size of the sweeps.
const PAGE_SIZE: i32 = 1000;
/// Sweeps per identity (the two alternate).
const SWEEPS: usize = 3;
/// The ACE re-propagation adds to OU=Staff: Reset-Password on user objects below, for
/// a SID of no account.
const PROPAGATED_ACE: &str = "(OA;CI;CR;00299570-246d-11d0-a768-00aa006e0529;\
                              bf967aba-0de6-11d0-a285-00aa003049e2;S-1-5-21-1-2-3-4000)";
/// The trustee of that ACE.
const PROPAGATED_SID: &str = "S-1-5-21-1-2-3-4000";

/// What to run and how big.
#[derive(Debug, Clone)]
pub struct Options {
    /// Folder the temporary data folder goes in (removed afterwards).
    pub dir: PathBuf,
    /// Users in OU=Staff.
    pub users: usize,
    /// Measured seconds of each search window.
    pub seconds: f64,
    /// Windows per identity and connection count (identities alternate).
    pub rounds: usize,
    /// Connection counts of the searches.
    pub connections: Vec<usize>,
    /// Users added per transaction.
    pub batch: usize,
    /// Progress lines on stderr.
    pub progress: bool,
}

/// Whom the client binds as.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Who {
    /// `reader`, an ordinary account: every object and attribute checked.
    Reader,
    /// The configured administrator DN: no checks.
    ConfigAdmin,
}

impl Who {
    fn label(self) -> &'static str {
        match self {
            Who::Reader => "reader",
            Who::ConfigAdmin => "admin DN",
        }
    }

    fn credentials(self) -> (&'static str, &'static str) {
        match self {
            Who::Reader => (READER_DN, READER_PW),
            Who::ConfigAdmin => (CONFIG_ADMIN_DN, CONFIG_ADMIN_PW),
        }
    }
}

/// Provisioning and loading.
#[derive(Debug, Clone, serde::Serialize)]
pub struct Setup {
    /// Seconds of `Directory::provision`.
    pub provision_seconds: f64,
    /// Objects provisioning wrote.
    pub provisioned_objects: usize,
    /// Users added to OU=Staff.
    pub users: usize,
    /// Users per transaction.
    pub batch: usize,
    /// Seconds to add OU=Staff, the users and `reader` (with its password).
    pub load_seconds: f64,
    /// Users added per second.
    pub users_per_sec: f64,
    /// The arrangement of server and client.
    pub arrangement: String,
}

/// The database after loading.
#[derive(Debug, Clone, serde::Serialize)]
pub struct Database {
    /// Records.
    pub records: u64,
    /// Records holding a descriptor id.
    pub records_with_descriptor: u64,
    /// Users below OU=Staff without one (must be 0).
    pub staff_without_descriptor: u64,
    /// Size of the LMDB file.
    pub file_bytes: u64,
    /// Bytes of the pages in use (the file up to its last page).
    pub used_bytes: u64,
    /// Bytes of the records themselves (the `entries` table's values), with 8-byte ids.
    pub record_bytes: u64,
    /// The same with a copy of its descriptor in every record instead of the id.
    pub record_bytes_with_copies: u64,
    /// Bytes of the `entries` table's pages.
    pub entries_table_bytes: u64,
    /// Bytes of the `index` table's pages.
    pub index_table_bytes: u64,
    /// Bytes of the `descriptors` table's pages.
    pub descriptors_table_bytes: u64,
    /// Distinct descriptors stored.
    pub distinct_descriptors: u64,
    /// Their bytes together.
    pub distinct_descriptor_bytes: u64,
    /// The largest.
    pub largest_descriptor_bytes: u64,
    /// Records of the most shared descriptor.
    pub most_shared: u64,
    /// The bytes of every record's descriptor: what a copy in each record would take.
    pub per_record_copy_bytes: u64,
    /// The 8-byte ids the records hold instead.
    pub id_bytes: u64,
    /// An estimate of the database with a copy in every record: pages in use, less the
    /// ids and the descriptors table, plus the copies.
    pub estimated_with_copies_bytes: u64,
    /// An estimate of the database without descriptors: pages in use, less the ids and
    /// the descriptors table.
    pub estimated_without_bytes: u64,
}

/// Equality searches of one identity at one connection count, all its windows pooled.
#[derive(Debug, Clone, serde::Serialize)]
pub struct SearchRow {
    /// `reader` or `admin DN`.
    pub identity: String,
    /// Connections, one request in flight each.
    pub connections: usize,
    /// Windows pooled.
    pub windows: usize,
    /// Searches completed in the measured windows (each verified).
    pub ops: u64,
    /// Measured seconds, all windows.
    pub seconds: f64,
    /// Searches per second.
    pub ops_per_sec: f64,
    /// Each window's searches per second.
    pub window_ops_per_sec: Vec<f64>,
    /// Mean, µs.
    pub mean_us: f64,
    /// Median, µs.
    pub median_us: f64,
    /// 99th percentile, µs.
    pub p99_us: f64,
    /// CPU time of the server's threads per search, µs (0 where `/proc` does not tell).
    pub server_cpu_us: f64,
}

/// Reader against administrator DN at one connection count.
#[derive(Debug, Clone, serde::Serialize)]
pub struct Slowdown {
    /// Connections.
    pub connections: usize,
    /// Throughput lost by the reader, percent of the administrator's.
    pub throughput_percent: f64,
    /// Median latency added, percent.
    pub median_percent: f64,
    /// 99th percentile latency added, percent.
    pub p99_percent: f64,
    /// Server CPU time added per search, µs.
    pub server_cpu_us: f64,
    /// The same, percent.
    pub server_cpu_percent: f64,
}

/// One paged sweep of every user.
#[derive(Debug, Clone, serde::Serialize)]
pub struct Sweep {
    /// Who swept.
    pub identity: String,
    /// Entries returned.
    pub entries: u64,
    /// Of which below OU=Staff.
    pub staff_entries: u64,
    /// Pages.
    pub pages: u64,
    /// Seconds, the median of the sweeps.
    pub seconds: f64,
    /// Each sweep's seconds.
    pub all_seconds: Vec<f64>,
    /// Entries per second, by the median.
    pub entries_per_sec: f64,
}

/// The descriptor change on OU=Staff and its propagation.
#[derive(Debug, Clone, serde::Serialize)]
pub struct Repropagation {
    /// The ACE added.
    pub ace: String,
    /// Seconds from opening the write transaction to the end of the commit.
    pub seconds: f64,
    /// Records whose descriptor changed.
    pub records_rewritten: u64,
    /// Records rewritten per second.
    pub records_per_sec: f64,
    /// Distinct descriptors before and after.
    pub distinct_before: u64,
    /// After (unused ones stay until a sweep).
    pub distinct_after: u64,
    /// The user checked for the inherited ACE.
    pub checked_user: String,
    /// Whether a search as `reader` still finds that user afterwards.
    pub reader_still_finds: bool,
}

/// Everything one run measured.
#[derive(Debug, Clone, serde::Serialize)]
pub struct Report {
    /// Provisioning and loading.
    pub setup: Setup,
    /// The database.
    pub database: Database,
    /// Measured seconds of each search window.
    pub window_seconds: f64,
    /// Equality searches.
    pub searches: Vec<SearchRow>,
    /// Reader against administrator DN.
    pub slowdowns: Vec<Slowdown>,
    /// The paged sweeps (administrator DN, then reader), medians of three each.
    pub sweeps: Vec<Sweep>,
    /// Sweep time the reader adds, percent.
    pub sweep_slowdown_percent: f64,
    /// The descriptor change.
    pub repropagation: Repropagation,
    /// Wall time of the whole run, seconds.
    pub total_seconds: f64,
}

/// Runs the benchmark in a new folder below `opts.dir`, removed afterwards.
pub fn run(opts: &Options) -> Result<Report> {
    anyhow::ensure!(opts.users >= 2, "--users must be at least 2");
    anyhow::ensure!(opts.seconds > 0.0, "--seconds must be positive");
    anyhow::ensure!(opts.rounds > 0, "--rounds must be positive");
    anyhow::ensure!(opts.batch > 0, "--batch must be positive");
    anyhow::ensure!(
        !opts.connections.is_empty() && !opts.connections.contains(&0),
        "--connections needs positive counts"
    );
    let data = opts.dir.join(format!(
        "kauri-bench-access-{}-{}",
        opts.users,
        std::process::id()
    ));
    if data.exists() {
        std::fs::remove_dir_all(&data)
            .with_context(|| format!("removing old {}", data.display()))?;
    }
    std::fs::create_dir_all(&data).with_context(|| format!("creating {}", data.display()))?;
    let result = run_in(opts, &data);
    let _ = std::fs::remove_dir_all(&data);
    result
}

fn say(opts: &Options, what: &str) {
    if opts.progress {
        eprintln!("access: {what}");
    }
}

fn run_in(opts: &Options, data: &Path) -> Result<Report> {
    let started = Instant::now();
    say(opts, "provisioning SAMDOM.EXAMPLE.COM");
    let (dir, made, source, provision_seconds) =
        crate::bench_domain::provision_bench_domain(data, ADMINISTRATOR_PW)?;

    say(opts, &format!("adding {} users to {STAFF_OU}", opts.users));
    let t = Instant::now();
    load(&dir, opts)?;
    let load_seconds = t.elapsed().as_secs_f64();
    say(
        opts,
        &format!(
            "{} users in {load_seconds:.1} s ({:.0}/s)",
            opts.users,
            opts.users as f64 / load_seconds
        ),
    );
    let database = database(&dir, opts.users)?;
    say(
        opts,
        &format!(
            "{} records, {} distinct descriptors ({} bytes); copies would take {} bytes",
            database.records,
            database.distinct_descriptors,
            database.distinct_descriptor_bytes,
            database.per_record_copy_bytes
        ),
    );

    let dir = Arc::new(dir);
    let cfg = ServerConfig {
        data: data.to_path_buf(),
        listen: "127.0.0.1:0".into(),
        listen_tls: String::new(),
        metrics_listen: String::new(),
        admin_dn: CONFIG_ADMIN_DN.into(),
        admin_password: CONFIG_ADMIN_PW.into(),
        size_limit: 0,
        ..ServerConfig::default()
    };
    let (server_rt, addr) = start_server(cfg, dir.clone(), source)?;
    let addr = addr.to_string();
    let client_rt = client_runtime()?;
    let measured = client_rt.block_on(measure(opts, &addr));
    let measured = match measured {
        Ok(m) => m,
        Err(e) => {
            server_rt.shutdown_timeout(Duration::from_secs(2));
            return Err(e);
        }
    };
    let (searches, sweeps) = measured;

    say(opts, "adding an inheritable ACE to OU=Staff");
    let repropagation = repropagate(&dir, opts.users).and_then(|mut r| {
        let user = r.checked_user.clone();
        let k = user
            .strip_prefix("user")
            .and_then(|n| n.parse::<usize>().ok())
            .context("checked user name")?;
        client_rt.block_on(async {
            let mut conn = bound(&addr, Who::Reader).await?;
            search_one(&mut conn, k).await?;
            unbind(conn).await;
            anyhow::Ok(())
        })?;
        r.reader_still_finds = true;
        Ok(r)
    });
    server_rt.shutdown_timeout(Duration::from_secs(2));
    let repropagation = repropagation?;

    let mut slowdowns = Vec::new();
    for &n in &opts.connections {
        let find = |who: Who| {
            searches
                .iter()
                .find(|r| r.connections == n && r.identity == who.label())
        };
        if let (Some(a), Some(r)) = (find(Who::ConfigAdmin), find(Who::Reader)) {
            slowdowns.push(Slowdown {
                connections: n,
                throughput_percent: (1.0 - r.ops_per_sec / a.ops_per_sec) * 100.0,
                median_percent: (r.median_us / a.median_us - 1.0) * 100.0,
                p99_percent: (r.p99_us / a.p99_us - 1.0) * 100.0,
                server_cpu_us: r.server_cpu_us - a.server_cpu_us,
                server_cpu_percent: (r.server_cpu_us / a.server_cpu_us.max(1e-9) - 1.0) * 100.0,
            });
        }
    }
    let sweep_slowdown_percent = match sweeps.as_slice() {
        [a, r] => (r.seconds / a.seconds - 1.0) * 100.0,
        _ => 0.0,
    };
    Ok(Report {
        setup: Setup {
            provision_seconds,
            provisioned_objects: made.entries,
            users: opts.users,
            batch: opts.batch,
            load_seconds,
            users_per_sec: opts.users as f64 / load_seconds.max(1e-9),
            arrangement: format!(
                "Kauri server in this process on its own 2-thread tokio runtime; client on \
                 another 2-thread runtime over TCP on {addr}, one request in flight per \
                 connection"
            ),
        },
        database,
        window_seconds: opts.seconds,
        searches,
        slowdowns,
        sweeps,
        sweep_slowdown_percent,
        repropagation,
        total_seconds: started.elapsed().as_secs_f64(),
    })
}

fn user_name(k: usize) -> String {
    format!("user{k:06}")
}

fn user_dn(k: usize) -> String {
    format!("CN={},{STAFF_OU}", user_name(k))
}

fn user_entry(k: usize) -> Result<Entry> {
    let name = user_name(k);
    let mut e = Entry::new(Dn::parse(&user_dn(k)).context("a user DN")?);
    let text = |s: &str| vec![s.as_bytes().to_vec()];
    e.push("objectClass", text("user"));
    e.push("sAMAccountName", text(&name));
    e.push("userPrincipalName", text(&format!("{name}@{MAIL_SUFFIX}")));
    e.push("mail", text(&format!("{name}@{MAIL_SUFFIX}")));
    e.push("givenName", text("Bench"));
    e.push("sn", text(&format!("User{k:06}")));
    e.push("displayName", text(&format!("Bench User{k:06}")));
    // Enabled, no password required: nobody binds as these users.
    e.push("userAccountControl", text("544"));
    Ok(e)
}

fn system(change: Change) -> Request {
    Request {
        caller: Caller::System,
        encrypted: true,
        change,
    }
}

/// Applies `changes` in one transaction, failing on the first refusal.
fn apply_all(dir: &Directory<LmdbBackend>, changes: Vec<(String, Change)>) -> Result<()> {
    let mut w = dir.db().write().context("opening a write transaction")?;
    for (what, change) in changes {
        dir.apply(&mut w, &system(change))
            .with_context(|| what.clone())?;
    }
    w.commit().context("committing")?;
    dir.after_commit().context("after the commit")?;
    Ok(())
}

/// OU=Staff, its users in batches, and `reader` with its password.
fn load(dir: &Directory<LmdbBackend>, opts: &Options) -> Result<()> {
    let mut ou = Entry::new(Dn::parse(STAFF_OU).context("the OU's DN")?);
    ou.push("objectClass", vec![b"organizationalUnit".to_vec()]);
    apply_all(dir, vec![(format!("adding {STAFF_OU}"), Change::Add(ou))])?;
    let mut k = 0;
    while k < opts.users {
        let end = (k + opts.batch).min(opts.users);
        let mut changes = Vec::with_capacity(end - k);
        for i in k..end {
            changes.push((
                format!("adding {}", user_dn(i)),
                Change::Add(user_entry(i)?),
            ));
        }
        apply_all(dir, changes)?;
        k = end;
    }
    let reader = Dn::parse(READER_DN).context("the reader's DN")?;
    let mut e = Entry::new(reader.clone());
    e.push("objectClass", vec![b"user".to_vec()]);
    e.push("sAMAccountName", vec![b"reader".to_vec()]);
    e.push("userAccountControl", vec![b"544".to_vec()]);
    let replace = |attr: &str, value: Vec<u8>| Modification {
        op: ModifyOp::Replace,
        attr: attr.into(),
        values: vec![value],
    };
    apply_all(
        dir,
        vec![
            (format!("adding {READER_DN}"), Change::Add(e)),
            (
                format!("setting the password of {READER_DN}"),
                Change::Modify {
                    dn: reader,
                    mods: vec![
                        replace("unicodePwd", encode_unicode_pwd(READER_PW)),
                        // A normal account from now on: the password is required.
                        replace("userAccountControl", b"512".to_vec()),
                    ],
                    permissive: false,
                    sd_flags: None,
                },
            ),
        ],
    )
}

/// Each record's id and the descriptor id it holds, in id order.
type DescriptorIds = Vec<(u64, Option<u64>)>;

/// [`DescriptorIds`] of every record, and the records' bytes.
fn descriptor_ids(r: &DbRead<'_, LmdbBackend>) -> Result<(DescriptorIds, u64)> {
    let attr = r.descriptor_attr_id();
    let mut out = Vec::new();
    let mut bytes = 0u64;
    for item in r.kv().range(
        kauri_db::db::T_ENTRIES,
        Bound::Unbounded,
        Bound::Unbounded,
        Direction::Forward,
    )? {
        let (k, v) = item?;
        let k: &[u8] = &k;
        let id = u64::from_be_bytes(
            k.try_into()
                .map_err(|_| anyhow::anyhow!("an entries key of {} bytes", k.len()))?,
        );
        bytes += v.len() as u64;
        let rec = RecordView::parse(v)?;
        let sd = attr
            .and_then(|a| rec.attr(a))
            .and_then(|a| a.values().next())
            .and_then(|v| kauri_db::descriptors::id_of_stored(v.raw));
        out.push((id, sd));
    }
    Ok((out, bytes))
}

fn database(dir: &Directory<LmdbBackend>, users: usize) -> Result<Database> {
    let kv = dir.db().kv();
    let info = kv.info()?;
    let (tables, free_pages) = kv.table_stats()?;
    let pages: u64 = tables.iter().map(|t| t.pages).sum::<u64>() + free_pages;
    let page = info.used_bytes / pages.max(1);
    let table_bytes = |t: usize| tables.get(t).map_or(0, |s| s.pages * page);
    let r = dir.db().read()?;
    let mut lengths = HashMap::new();
    for id in kauri_db::descriptors::all_ids(r.kv())? {
        let len = r.descriptor(id)?.map_or(0, |b| b.len() as u64);
        lengths.insert(id, len);
    }
    let (ids, record_bytes) = descriptor_ids(&r)?;
    let records = r.record_count()?;
    anyhow::ensure!(
        ids.len() as u64 == records,
        "the entries table holds {} records, the count says {records}",
        ids.len()
    );
    let mut uses: HashMap<u64, u64> = HashMap::new();
    let mut copies = 0u64;
    let mut with = 0u64;
    for (_, sd) in &ids {
        if let Some(sd) = sd {
            with += 1;
            *uses.entry(*sd).or_default() += 1;
            copies += lengths
                .get(sd)
                .copied()
                .with_context(|| format!("descriptor {sd} is not stored"))?;
        }
    }
    let staff = r
        .lookup(&Dn::parse(STAFF_OU)?)?
        .context("OU=Staff is missing")?;
    let mut staff_without = 0u64;
    let by_id: HashMap<u64, Option<u64>> = ids.iter().copied().collect();
    let children = r.children(staff)?;
    anyhow::ensure!(
        children.len() == users,
        "OU=Staff holds {} objects, {users} users were added",
        children.len()
    );
    for c in children {
        if by_id.get(&c).copied().flatten().is_none() {
            staff_without += 1;
        }
    }
    anyhow::ensure!(
        staff_without == 0,
        "{staff_without} users of OU=Staff have no security descriptor"
    );
    let distinct_bytes: u64 = lengths.values().sum();
    let descriptors_table = table_bytes(kauri_db::db::T_DESCRIPTORS);
    let id_bytes = with * 8;
    let without = info
        .used_bytes
        .saturating_sub(id_bytes)
        .saturating_sub(descriptors_table);
    Ok(Database {
        records,
        records_with_descriptor: with,
        staff_without_descriptor: staff_without,
        file_bytes: info.size_on_disk,
        used_bytes: info.used_bytes,
        record_bytes,
        record_bytes_with_copies: record_bytes - id_bytes + copies,
        entries_table_bytes: table_bytes(kauri_db::db::T_ENTRIES),
        index_table_bytes: table_bytes(kauri_db::db::T_INDEX),
        descriptors_table_bytes: descriptors_table,
        distinct_descriptors: lengths.len() as u64,
        distinct_descriptor_bytes: distinct_bytes,
        largest_descriptor_bytes: lengths.values().copied().max().unwrap_or(0),
        most_shared: uses.values().copied().max().unwrap_or(0),
        per_record_copy_bytes: copies,
        id_bytes,
        estimated_with_copies_bytes: without + copies,
        estimated_without_bytes: without,
    })
}

/// A connection bound as `who`.
async fn bound(addr: &str, who: Who) -> Result<LdapClient> {
    let (dn, pw) = who.credentials();
    let mut c = connect(addr).await?;
    let r = c.simple_bind(dn, pw).await?;
    if let Some(e) = check(&format!("bind as {dn}"), &r) {
        bail!(e);
    }
    Ok(c)
}

/// The values of `name` in an entry.
fn values<'e>(e: &'e SearchResultEntry, name: &str) -> Vec<&'e [u8]> {
    e.attributes
        .iter()
        .filter(|a| a.name.eq_ignore_ascii_case(name))
        .flat_map(|a| a.values.iter().map(Vec::as_slice))
        .collect()
}

/// What is wrong with the entry a search for user `name` returned, if anything.
fn user_problem(e: &SearchResultEntry, name: &str) -> Option<String> {
    let mail = format!("{name}@{MAIL_SUFFIX}");
    for (attr, want) in [
        ("cn", name),
        ("sAMAccountName", name),
        ("mail", mail.as_str()),
    ] {
        let got = values(e, attr);
        if got != [want.as_bytes()] {
            return Some(format!(
                "{} came back with {attr} {:?}, {want:?} expected",
                e.dn,
                got.iter()
                    .map(|v| String::from_utf8_lossy(v))
                    .collect::<Vec<_>>()
            ));
        }
    }
    None
}

/// One verified equality search for user `k`.
async fn search_one(conn: &mut LdapClient, k: usize) -> Result<()> {
    let name = user_name(k);
    let mut found = 0u32;
    let mut problem = None;
    let done = conn
        .search_each(
            search_request(
                DOMAIN,
                Filter::eq("sAMAccountName", &name),
                &["cn", "mail", "sAMAccountName"],
            ),
            Vec::new(),
            |e| {
                found += 1;
                if problem.is_none() {
                    problem = user_problem(&e, &name);
                }
                Ok::<_, ClientError>(())
            },
        )
        .await?;
    if let Some(e) = check(&format!("search for {name}"), &done.result) {
        bail!(e);
    }
    anyhow::ensure!(found == 1, "the search for {name} found {found} entries");
    if let Some(p) = problem {
        bail!(p);
    }
    Ok(())
}

struct Worked {
    samples: Vec<u64>,
    last: Instant,
}

async fn search_worker(
    mut conn: LdapClient,
    users: usize,
    seed: u64,
    warm_end: Instant,
    end: Instant,
) -> Result<Worked> {
    let mut rng = Rng::new(seed);
    let mut samples = Vec::with_capacity(1 << 16);
    let mut last = Instant::now();
    loop {
        let start = Instant::now();
        if start >= end {
            break;
        }
        search_one(&mut conn, rng.below(users)).await?;
        last = Instant::now();
        if start >= warm_end {
            samples.push(u64::try_from((last - start).as_nanos()).unwrap_or(u64::MAX));
        }
    }
    unbind(conn).await;
    Ok(Worked { samples, last })
}

/// CPU time the server's threads (the runtime named `kauri-server`) have used so far, in
/// nanoseconds, from each thread's `/proc/self/task/*/schedstat`; 0 where unavailable.
fn server_cpu_ns() -> u64 {
    let Ok(tasks) = std::fs::read_dir("/proc/self/task") else {
        return 0;
    };
    let mut total = 0;
    for t in tasks.flatten() {
        let path = t.path();
        let comm = std::fs::read_to_string(path.join("comm")).unwrap_or_default();
        if comm.trim_end() != "kauri-server" {
            continue;
        }
        if let Ok(stat) = std::fs::read_to_string(path.join("schedstat")) {
            total += stat
                .split_whitespace()
                .next()
                .and_then(|v| v.parse::<u64>().ok())
                .unwrap_or(0);
        }
    }
    total
}

/// Warm-up before each window: a fifth of it, between 0.2 and 1 second.
fn warmup(seconds: f64) -> Duration {
    Duration::from_secs_f64((seconds / 5.0).clamp(0.2, 1.0))
}

/// One window of searches on `n` connections bound as `who`: the latencies, the measured
/// seconds and the server's CPU nanoseconds in them.
async fn search_window(
    addr: &str,
    who: Who,
    n: usize,
    users: usize,
    seconds: f64,
    seed: u64,
) -> Result<(Vec<u64>, f64, u64)> {
    let mut conns = Vec::with_capacity(n);
    for _ in 0..n {
        conns.push(bound(addr, who).await?);
    }
    let warm_end = Instant::now() + warmup(seconds);
    let end = warm_end + Duration::from_secs_f64(seconds);
    let tasks: Vec<_> = conns
        .into_iter()
        .enumerate()
        .map(|(i, c)| {
            tokio::spawn(search_worker(
                c,
                users,
                seed.wrapping_mul(1000) + i as u64 + 1,
                warm_end,
                end,
            ))
        })
        .collect();
    tokio::time::sleep_until(warm_end.into()).await;
    let cpu_start = server_cpu_ns();
    let mut samples = Vec::new();
    let mut last = warm_end;
    let mut failed = None;
    for t in tasks {
        match t.await.context("a client task panicked")? {
            Ok(w) => {
                samples.extend(w.samples);
                last = last.max(w.last);
            }
            Err(e) => {
                failed.get_or_insert(e);
            }
        }
    }
    if let Some(e) = failed {
        return Err(e.context(format!("searching as {} on {n} connection(s)", who.label())));
    }
    let cpu = server_cpu_ns().saturating_sub(cpu_start);
    anyhow::ensure!(!samples.is_empty(), "no search completed");
    Ok((samples, (last - warm_end).as_secs_f64().max(1e-9), cpu))
}

/// Every user by pages as `who`.
async fn sweep(addr: &str, who: Who) -> Result<Sweep> {
    let mut conn = bound(addr, who).await?;
    let staff_suffix = format!(",{}", STAFF_OU.to_ascii_lowercase());
    let t = Instant::now();
    let mut cookie = Vec::new();
    let (mut entries, mut staff, mut pages) = (0u64, 0u64, 0u64);
    let mut problem = None;
    loop {
        let control = PagedResults {
            size: PAGE_SIZE,
            cookie: std::mem::take(&mut cookie),
        }
        .to_control(true);
        let done = conn
            .search_each(
                search_request(
                    DOMAIN,
                    Filter::eq("objectClass", "user"),
                    &["cn", "sAMAccountName"],
                ),
                vec![control],
                |e| {
                    entries += 1;
                    if e.dn.to_ascii_lowercase().ends_with(&staff_suffix) {
                        staff += 1;
                    }
                    if problem.is_none()
                        && (values(&e, "cn").len() != 1 || values(&e, "sAMAccountName").len() != 1)
                    {
                        problem = Some(format!(
                            "{} came back without its cn or sAMAccountName",
                            e.dn
                        ));
                    }
                    Ok::<_, ClientError>(())
                },
            )
            .await?;
        if let Some(e) = check("paged sweep", &done.result) {
            bail!(e);
        }
        pages += 1;
        cookie = crate::bench_ldap::next_page_cookie(&done.controls)?;
        if cookie.is_empty() {
            break;
        }
    }
    let seconds = t.elapsed().as_secs_f64();
    unbind(conn).await;
    if let Some(p) = problem {
        bail!("sweep as {}: {p}", who.label());
    }
    Ok(Sweep {
        identity: who.label().into(),
        entries,
        staff_entries: staff,
        pages,
        seconds,
        all_seconds: vec![seconds],
        entries_per_sec: entries as f64 / seconds.max(1e-9),
    })
}

/// One identity's windows at one connection count.
struct Pooled {
    who: Who,
    samples: Vec<u64>,
    seconds: f64,
    per_window: Vec<f64>,
    cpu_ns: u64,
}

async fn measure(opts: &Options, addr: &str) -> Result<(Vec<SearchRow>, Vec<Sweep>)> {
    // Each identity first proves it gets what it asked for.
    for who in [Who::ConfigAdmin, Who::Reader] {
        let mut c = bound(addr, who).await?;
        search_one(&mut c, 0)
            .await
            .with_context(|| format!("a first search as {}", who.label()))?;
        search_one(&mut c, opts.users - 1).await?;
        unbind(c).await;
    }
    let mut rows = Vec::new();
    for &n in &opts.connections {
        let mut pooled: Vec<Pooled> = [Who::ConfigAdmin, Who::Reader]
            .into_iter()
            .map(|who| Pooled {
                who,
                samples: Vec::new(),
                seconds: 0.0,
                per_window: Vec::new(),
                cpu_ns: 0,
            })
            .collect();
        for round in 0..opts.rounds {
            // Alternate which identity goes first.
            let order: [usize; 2] = if round % 2 == 0 { [0, 1] } else { [1, 0] };
            for i in order {
                let who = pooled[i].who;
                let seed = (n * 100 + round * 2 + i) as u64;
                let (samples, secs, cpu) =
                    search_window(addr, who, n, opts.users, opts.seconds, seed).await?;
                say(
                    opts,
                    &format!(
                        "search as {} x{n}, window {}: {:.0} ops/s, server CPU {:.1} µs per search",
                        who.label(),
                        round + 1,
                        samples.len() as f64 / secs,
                        cpu as f64 / 1e3 / samples.len().max(1) as f64
                    ),
                );
                let p = &mut pooled[i];
                p.per_window.push(samples.len() as f64 / secs);
                p.samples.extend(samples);
                p.seconds += secs;
                p.cpu_ns += cpu;
            }
        }
        for p in pooled {
            let Pooled {
                who,
                mut samples,
                seconds: secs,
                per_window,
                cpu_ns,
            } = p;
            samples.sort_unstable();
            let count = samples.len();
            rows.push(SearchRow {
                identity: who.label().into(),
                connections: n,
                windows: opts.rounds,
                ops: count as u64,
                seconds: secs,
                ops_per_sec: count as f64 / secs,
                window_ops_per_sec: per_window,
                mean_us: samples.iter().sum::<u64>() as f64 / 1e3 / count.max(1) as f64,
                median_us: quantile_us(&samples, 0.5),
                p99_us: quantile_us(&samples, 0.99),
                server_cpu_us: cpu_ns as f64 / 1e3 / count.max(1) as f64,
            });
        }
    }
    let mut sweeps: Vec<Sweep> = Vec::new();
    for round in 0..SWEEPS {
        let order = if round % 2 == 0 {
            [Who::ConfigAdmin, Who::Reader]
        } else {
            [Who::Reader, Who::ConfigAdmin]
        };
        for who in order {
            let s = sweep(addr, who).await?;
            say(
                opts,
                &format!(
                    "sweep as {}: {} entries in {:.2} s",
                    s.identity, s.entries, s.seconds
                ),
            );
            match sweeps.iter_mut().find(|k| k.identity == s.identity) {
                Some(k) => {
                    anyhow::ensure!(
                        k.entries == s.entries && k.pages == s.pages,
                        "sweeps as {} returned {} and {} entries",
                        s.identity,
                        k.entries,
                        s.entries
                    );
                    k.all_seconds.push(s.seconds);
                }
                None => sweeps.push(s),
            }
        }
    }
    sweeps.sort_by_key(|s| s.identity != Who::ConfigAdmin.label());
    for s in &mut sweeps {
        let mut t = s.all_seconds.clone();
        t.sort_by(f64::total_cmp);
        s.seconds = t[t.len() / 2];
        s.entries_per_sec = s.entries as f64 / s.seconds.max(1e-9);
    }
    let (a, r) = (&sweeps[0], &sweeps[1]);
    anyhow::ensure!(
        a.entries == r.entries,
        "the sweep returned {} entries to the administrator DN and {} to reader",
        a.entries,
        r.entries
    );
    anyhow::ensure!(
        a.staff_entries == opts.users as u64 && r.staff_entries == opts.users as u64,
        "the sweeps found {} and {} users below OU=Staff, {} expected",
        a.staff_entries,
        r.staff_entries,
        opts.users
    );
    Ok((rows, sweeps))
}

/// Adds the inheritable ACE to OU=Staff in-process with SD flags 4, timed; counts the
/// records whose descriptor changed and checks a user below holds it, inherited.
fn repropagate(dir: &Directory<LmdbBackend>, users: usize) -> Result<Repropagation> {
    let domain = dir.domain().context("the directory serves no domain")?;
    let staff = Dn::parse(STAFF_OU)?;
    let (before, value, distinct_before) = {
        let r = dir.db().read()?;
        let ou = r.lookup(&staff)?.context("OU=Staff is missing")?;
        let e = r.entry_by_id(ou)?.context("OU=Staff has no record")?;
        let bytes = e
            .get("nTSecurityDescriptor")
            .and_then(|v| v.first())
            .context("OU=Staff has no nTSecurityDescriptor")?;
        let mut sd = SecurityDescriptor::from_bytes(bytes)
            .map_err(|e| anyhow::anyhow!("OU=Staff's descriptor: {e}"))?;
        let added = SecurityDescriptor::from_sddl(&format!("D:{PROPAGATED_ACE}"), &domain.sid)
            .map_err(|e| anyhow::anyhow!("{PROPAGATED_ACE}: {e}"))?;
        let ace = added
            .dacl
            .and_then(|d| d.aces.into_iter().next())
            .context("the ACE parsed to nothing")?;
        let dacl = sd.dacl.get_or_insert_with(|| Acl::new(Vec::new()));
        // Explicit ACEs come before inherited ones.
        let at = dacl
            .aces
            .iter()
            .position(|a| a.is_inherited())
            .unwrap_or(dacl.aces.len());
        dacl.aces.insert(at, ace);
        dacl.revision = Acl::revision_for(&dacl.aces);
        let value = sd
            .to_bytes()
            .map_err(|e| anyhow::anyhow!("encoding the descriptor: {e}"))?;
        let distinct = kauri_db::descriptors::all_ids(r.kv())?.len() as u64;
        (descriptor_ids(&r)?.0, value, distinct)
    };
    let req = system(Change::Modify {
        dn: staff.clone(),
        mods: vec![Modification {
            op: ModifyOp::Replace,
            attr: "nTSecurityDescriptor".into(),
            values: vec![value],
        }],
        permissive: false,
        sd_flags: Some(4),
    });
    let t = Instant::now();
    let mut w = dir.db().write().context("opening a write transaction")?;
    dir.apply(&mut w, &req)
        .context("writing OU=Staff's descriptor")?;
    w.commit().context("committing the descriptor")?;
    dir.after_commit()?;
    let seconds = t.elapsed().as_secs_f64();

    let r = dir.db().read()?;
    let (after, _) = descriptor_ids(&r)?;
    let old: HashMap<u64, Option<u64>> = before.into_iter().collect();
    let rewritten = after
        .iter()
        .filter(|(id, sd)| old.get(id) != Some(sd))
        .count() as u64;
    anyhow::ensure!(
        rewritten == users as u64 + 1,
        "{rewritten} records got a new descriptor; OU=Staff and its {users} users expected"
    );
    let trustee = Sid::parse(PROPAGATED_SID).map_err(|e| anyhow::anyhow!("{e}"))?;
    let holds = |dn: &str, inherited: bool| -> Result<()> {
        let id = r
            .lookup(&Dn::parse(dn)?)?
            .with_context(|| format!("{dn} is missing"))?;
        let e = r.entry_by_id(id)?.context("no record")?;
        let bytes = e
            .get("nTSecurityDescriptor")
            .and_then(|v| v.first())
            .with_context(|| format!("{dn} has no nTSecurityDescriptor"))?;
        let sd = SecurityDescriptor::from_bytes(bytes)
            .map_err(|e| anyhow::anyhow!("{dn}'s descriptor: {e}"))?;
        let found = sd.dacl.iter().flat_map(|d| d.aces.iter()).any(|a| {
            a.sid == trustee
                && a.object_type == Some(RESET_PASSWORD)
                && (a.flags & ace_flags::INHERITED != 0) == inherited
        });
        anyhow::ensure!(
            found,
            "{dn} does not hold the new ACE{}",
            if inherited { " as inherited" } else { "" }
        );
        Ok(())
    };
    holds(STAFF_OU, false)?;
    let k = users / 2;
    holds(&user_dn(k), true)?;
    let distinct_after = kauri_db::descriptors::all_ids(r.kv())?.len() as u64;
    Ok(Repropagation {
        ace: PROPAGATED_ACE.to_string(),
        seconds,
        records_rewritten: rewritten,
        records_per_sec: rewritten as f64 / seconds.max(1e-9),
        distinct_before,
        distinct_after,
        checked_user: user_name(k),
        reader_still_finds: false,
    })
}

fn thousands(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::with_capacity(digits.len() + digits.len() / 3);
    for (k, ch) in digits.chars().enumerate() {
        if k > 0 && (digits.len() - k).is_multiple_of(3) {
            out.push(',');
        }
        out.push(ch);
    }
    out
}

fn mib(bytes: u64) -> String {
    format!("{} MiB", num(bytes as f64 / 1048576.0))
}

fn us(v: f64) -> String {
    if v >= 1e4 {
        format!("{} ms", num(v / 1e3))
    } else {
        format!("{} µs", num(v))
    }
}

/// A rate: grouped digits from 1,000 on.
fn rate(v: f64) -> String {
    if v >= 1000.0 {
        thousands(v.round() as u64)
    } else {
        num(v)
    }
}

fn signed(p: f64) -> String {
    format!("{}{:.1} %", if p > 0.0 { "+" } else { "" }, p)
}

/// Renders the reports as the Markdown BENCHMARKS.md holds.
pub fn markdown(reports: &[Report]) -> String {
    let mut s = String::new();
    for r in reports {
        let (su, d) = (&r.setup, &r.database);
        s.push_str(&format!(
            "\n### Access checks at {} users ({} records)\n\n{}. Whole run: {} s.\n",
            thousands(su.users as u64),
            thousands(d.records),
            su.arrangement,
            num(r.total_seconds)
        ));
        s.push_str("\n| setup | value |\n|---|---|\n");
        s.push_str(&format!(
            "| provisioning ({} objects) | {} s |\n",
            thousands(su.provisioned_objects as u64),
            num(su.provision_seconds)
        ));
        s.push_str(&format!(
            "| {} users into OU=Staff through `Directory::apply`, {} per transaction, and `reader` | {} s ({} users/s) |\n",
            thousands(su.users as u64),
            thousands(su.batch as u64),
            num(su.load_seconds),
            rate(su.users_per_sec)
        ));

        s.push_str("\n| database | value |\n|---|---|\n");
        s.push_str(&format!(
            "| records / of which holding a descriptor id | {} / {} |\n",
            thousands(d.records),
            thousands(d.records_with_descriptor)
        ));
        s.push_str(&format!(
            "| the records' own bytes: with 8-byte ids (measured) / with a copy each (computed) | {} / {} |\n",
            mib(d.record_bytes),
            mib(d.record_bytes_with_copies)
        ));
        s.push_str(&format!(
            "| LMDB file / pages in use | {} / {} |\n",
            mib(d.file_bytes),
            mib(d.used_bytes)
        ));
        s.push_str(&format!(
            "| `entries` / `index` / `descriptors` tables | {} / {} / {} |\n",
            mib(d.entries_table_bytes),
            mib(d.index_table_bytes),
            mib(d.descriptors_table_bytes)
        ));
        s.push_str(&format!(
            "| distinct descriptors, their bytes (largest) | {}, {} bytes ({} bytes) |\n",
            thousands(d.distinct_descriptors),
            thousands(d.distinct_descriptor_bytes),
            thousands(d.largest_descriptor_bytes)
        ));
        s.push_str(&format!(
            "| records sharing the most common descriptor | {} |\n",
            thousands(d.most_shared)
        ));
        s.push_str(&format!(
            "| a copy in every record would take (Σ each record's descriptor) | {} (the ids: {}) |\n",
            mib(d.per_record_copy_bytes),
            mib(d.id_bytes)
        ));
        s.push_str(&format!(
            "| database without descriptors / with ids (measured) / with copies (estimates) | {} / {} / {} |\n",
            mib(d.estimated_without_bytes),
            mib(d.used_bytes),
            mib(d.estimated_with_copies_bytes)
        ));

        s.push_str(&format!(
            "\n| `(sAMAccountName=userK)`, `cn mail sAMAccountName` | connections | ops/s | median | p99 | server CPU per search | windows of {} s, ops/s |\n\
             |---|---|---|---|---|---|---|\n",
            num(r.window_seconds)
        ));
        for row in &r.searches {
            s.push_str(&format!(
                "| {} | {} | {} | {} | {} | {} | {} |\n",
                match row.identity.as_str() {
                    "reader" => "bound as `reader` (checked)",
                    _ => "bound as the admin DN (no checks)",
                },
                row.connections,
                rate(row.ops_per_sec),
                us(row.median_us),
                us(row.p99_us),
                us(row.server_cpu_us),
                row.window_ops_per_sec
                    .iter()
                    .map(|v| rate(*v))
                    .collect::<Vec<_>>()
                    .join(", ")
            ));
        }
        s.push_str(
            "\n| reader against admin DN | throughput | median | p99 | server CPU per search |\n\
             |---|---|---|---|---|\n",
        );
        for sl in &r.slowdowns {
            s.push_str(&format!(
                "| {} connection(s) | {} | {} | {} | {} ({}{} µs) |\n",
                sl.connections,
                signed(-sl.throughput_percent),
                signed(sl.median_percent),
                signed(sl.p99_percent),
                signed(sl.server_cpu_percent),
                if sl.server_cpu_us > 0.0 { "+" } else { "" },
                num(sl.server_cpu_us)
            ));
        }

        s.push_str(&format!(
            "\n| paged sweep, `(objectClass=user)`, page size {PAGE_SIZE}, `cn sAMAccountName` | entries | pages | median time (each) | entries/s |\n\
             |---|---|---|---|---|\n"
        ));
        for sw in &r.sweeps {
            s.push_str(&format!(
                "| as {} | {} | {} | {} s ({}) | {} |\n",
                sw.identity,
                thousands(sw.entries),
                sw.pages,
                num(sw.seconds),
                sw.all_seconds
                    .iter()
                    .map(|v| num(*v))
                    .collect::<Vec<_>>()
                    .join(", "),
                rate(sw.entries_per_sec)
            ));
        }
        s.push_str(&format!(
            "\nThe reader's sweep took {} against the admin DN's (medians).\n",
            signed(r.sweep_slowdown_percent)
        ));

        let p = &r.repropagation;
        s.push_str("\n| re-propagation | value |\n|---|---|\n");
        s.push_str(&format!(
            "| modify of OU=Staff's nTSecurityDescriptor (SD flags 4) adding `{}`, commit included | {} s |\n",
            p.ace,
            num(p.seconds)
        ));
        s.push_str(&format!(
            "| records whose descriptor changed | {} ({} records/s) |\n",
            thousands(p.records_rewritten),
            rate(p.records_per_sec)
        ));
        s.push_str(&format!(
            "| distinct descriptors before / after | {} / {} |\n",
            p.distinct_before, p.distinct_after
        ));
        s.push_str(&format!(
            "| {} holds the ACE, inherited; `reader` still finds it | {} |\n",
            p.checked_user,
            if p.reader_still_finds { "yes" } else { "no" }
        ));
        s.push_str("\nThe audit log's cost: `kauri bench audit`.\n");
    }
    s
}
