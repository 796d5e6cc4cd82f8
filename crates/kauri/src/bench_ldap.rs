//! `kauri bench ldap`: the LDAP server under load, measured from a client over TCP.
//!
//! The directory is generated with [`crate::populate`] (seed 42) into a fresh LMDB
//! database, every user gets the same `userPassword` hash of `bench-pw`, and the Kauri
//! server is started in this process on `127.0.0.1:0` with its own 2-thread tokio runtime.
//! The load client runs on a second 2-thread runtime in the same process: one task per
//! connection, each connection a plain-TCP [`LdapClient`], one request in flight per
//! connection (closed loop: send, await the final response, send the next).
//!
//! For each connection count it measures, after a warm-up, equality searches by account
//! name (admin-bound, attributes `cn` and `mail`), simple binds as random users, modifies
//! of `description`, and add+delete pairs, recording every operation's latency; then one
//! paged subtree sweep of the whole directory (page size 1000) on one connection. Every
//! response must be a success and every equality search must find exactly one entry; any
//! failure fails the run.
//!
//! The same client can drive an OpenLDAP `slapd` (see `scripts/slapd-bench/run.sh`), for
//! which `--write-ldif` writes the users-only directory as inetOrgPerson entries.

use std::io::Write;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::{bail, Context, Result};
use kauri_db::{Db, Entry, Filter};
use kauri_domain::directory::Directory;
use kauri_domain::schema::SchemaSource;
use kauri_kv::lmdb::{LmdbBackend, LmdbOptions};
use kauri_ldap::{Server, ServerConfig};
use kauri_ldap_client::{change, ClientError, ConnectOptions, LdapClient};
use kauri_ldap_proto::controls::{ControlValue, PagedResults};
use kauri_ldap_proto::{
    Control, DerefAliases, LdapResult, ModOp, ResultCode, SearchRequest, SearchScope,
};

use crate::populate::{generate, Rng, Shape};
use crate::profile::directory_config;

/// Entries per transaction of the bulk load.
const BULK_CHUNK: usize = 20_000;
/// The password every generated user gets.
const USER_PASSWORD: &str = "bench-pw";
/// The administrator of the in-process Kauri server.
const KAURI_ADMIN_DN: &str = "cn=admin,DC=samdom,DC=example,DC=com";
/// Its password.
const KAURI_ADMIN_PW: &str = "bench-admin-pw";
/// The domain the generator builds.
const DOMAIN: &str = "DC=samdom,DC=example,DC=com";
/// Page size of the paged sweep.
const PAGE_SIZE: i32 = 1000;

/// Which servers to run the client against.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Against {
    /// The Kauri server, started in this process.
    Kauri,
    /// An OpenLDAP slapd already running (`--slapd-uri`).
    Slapd,
    /// Both, each holding the same users-only directory.
    Both,
}

/// Where a running slapd is and how to reach it.
#[derive(Debug, Clone)]
pub struct SlapdTarget {
    /// `ldap://HOST:PORT`.
    pub uri: String,
    /// The DN to bind as for searches and writes.
    pub bind_dn: String,
    /// Its password.
    pub password: String,
    /// The suffix holding the directory.
    pub base: String,
}

/// Options of the benchmark.
#[derive(Debug, Clone)]
pub struct Options {
    /// Users in the directory.
    pub users: usize,
    /// Folder for the Kauri database (removed afterwards).
    pub dir: PathBuf,
    /// Connection counts to run at.
    pub connections: Vec<usize>,
    /// Measured seconds per workload and connection count.
    pub seconds: f64,
    /// Servers to measure.
    pub against: Against,
    /// Generate only the domain, OUs, containers and users (always on with `Both`).
    pub users_only: bool,
    /// The slapd to measure, for `Slapd` and `Both`.
    pub slapd: Option<SlapdTarget>,
    /// Print progress on stderr.
    pub progress: bool,
}

/// One workload at one connection count.
#[derive(Debug, Clone, serde::Serialize)]
pub struct Row {
    /// The workload.
    pub workload: String,
    /// Connections, each with one request in flight.
    pub connections: usize,
    /// Operations completed in the measured window.
    pub ops: u64,
    /// Measured window, in seconds.
    pub seconds: f64,
    /// Throughput.
    pub ops_per_sec: f64,
    /// Mean latency, µs.
    pub mean_us: f64,
    /// Median latency, µs.
    pub median_us: f64,
    /// 95th percentile latency, µs.
    pub p95_us: f64,
    /// Largest latency, µs.
    pub max_us: f64,
}

/// One paged sweep of the whole directory.
#[derive(Debug, Clone, serde::Serialize)]
pub struct Sweep {
    /// The connection count whose runs it followed.
    pub after_connections: usize,
    /// Entries returned.
    pub entries: u64,
    /// Pages requested.
    pub pages: u64,
    /// Total time, seconds.
    pub seconds: f64,
    /// Entries per second.
    pub entries_per_sec: f64,
}

/// Everything measured against one server.
#[derive(Debug, Clone, serde::Serialize)]
pub struct ServerReport {
    /// `kauri` or `slapd`.
    pub server: String,
    /// How server and client were arranged.
    pub setup: String,
    /// Users in the directory.
    pub users: usize,
    /// Entries in the directory.
    pub records: u64,
    /// Whether the directory holds only the domain, OUs, containers and users.
    pub users_only: bool,
    /// Connection counts run.
    pub connections: Vec<usize>,
    /// Measured seconds per row.
    pub seconds: f64,
    /// Warm-up seconds before each row.
    pub warmup_seconds: f64,
    /// Bulk load time of the Kauri database, seconds (absent for slapd).
    pub load_seconds: Option<f64>,
    /// One row per workload and connection count.
    pub rows: Vec<Row>,
    /// One paged sweep per connection count.
    pub sweeps: Vec<Sweep>,
}

/// What the client needs to know about the directory it drives.
#[derive(Debug)]
struct Target {
    addr: String,
    admin_dn: String,
    admin_pw: String,
    base: String,
    /// The attribute holding `userNNNNNN`.
    key_attr: &'static str,
    /// DN of user `i` at index `i`.
    user_dns: Vec<String>,
    records: u64,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Workload {
    Search,
    Bind,
    Modify,
    AddDelete,
}

impl Workload {
    const ALL: [Workload; 4] = [
        Workload::Search,
        Workload::Bind,
        Workload::Modify,
        Workload::AddDelete,
    ];

    fn name(self) -> &'static str {
        match self {
            Workload::Search => "equality search",
            Workload::Bind => "simple bind",
            Workload::Modify => "modify (replace description)",
            Workload::AddDelete => "add + delete",
        }
    }
}

/// Whether an entry belongs in the users-only directory: everything but groups,
/// computers, contacts and the OUs holding contacts.
fn users_only_keeps(e: &Entry) -> bool {
    let classes = e.get("objectClass").unwrap_or(&[]);
    let skip = classes.iter().any(|c| {
        c.eq_ignore_ascii_case(b"group")
            || c.eq_ignore_ascii_case(b"computer")
            || c.eq_ignore_ascii_case(b"contact")
    });
    !skip && !e.dn.to_string().starts_with("OU=Contacts ")
}

/// The account number of a generated user (`userNNNNNN`), if `e` is one.
fn user_index(e: &Entry) -> Option<usize> {
    let sam = e.get("sAMAccountName")?.first()?;
    std::str::from_utf8(sam.strip_prefix(b"user")?)
        .ok()?
        .parse()
        .ok()
}

/// Generates the directory, handing each kept entry to `sink` with its user index.
fn each_entry(
    users: usize,
    users_only: bool,
    mut sink: impl FnMut(Entry, bool, Option<usize>) -> Result<()>,
) -> Result<()> {
    generate(Shape::for_users(users), 42, |e, root| {
        if users_only && !users_only_keeps(&e) {
            return Ok(());
        }
        let idx = user_index(&e);
        sink(e, root, idx)
    })?;
    Ok(())
}

fn hash() -> Result<String> {
    kauri_ldap::auth::hash_password(USER_PASSWORD.as_bytes())
        .map_err(|e| anyhow::anyhow!("no randomness for a password salt: {e}"))
}

fn remember(dns: &mut Vec<String>, idx: usize, dn: String) -> Result<()> {
    anyhow::ensure!(idx == dns.len(), "user {idx} generated out of order");
    dns.push(dn);
    Ok(())
}

/// `kauri bench ldap --write-ldif`: the users-only directory as OpenLDAP entries (domain,
/// OUs, containers as organizationalRole, users as inetOrgPerson with `uid` = the account
/// name and the `{SSHA512}` hash of `bench-pw`). Returns the number of entries.
pub fn write_ldif(path: &Path, users: usize) -> Result<u64> {
    let file =
        std::fs::File::create(path).with_context(|| format!("creating {}", path.display()))?;
    let mut out = std::io::BufWriter::new(file);
    let pw = hash()?;
    let mut n = 0u64;
    each_entry(users, true, |e, _, idx| {
        write_ldif_entry(&mut out, &e, idx.is_some(), &pw)
            .with_context(|| format!("writing {}", path.display()))?;
        n += 1;
        Ok(())
    })?;
    out.flush()
        .with_context(|| format!("writing {}", path.display()))?;
    Ok(n)
}

fn write_ldif_entry(out: &mut impl Write, e: &Entry, user: bool, pw: &str) -> Result<()> {
    let dn = e.dn.to_string();
    let mut lines: Vec<(&str, String)> = Vec::new();
    let first = |a: &str| -> String {
        e.get(a)
            .and_then(|v| v.first())
            .map(|v| String::from_utf8_lossy(v).into_owned())
            .unwrap_or_default()
    };
    let rdn_value = dn
        .split(',')
        .next()
        .and_then(|r| r.split_once('='))
        .map(|(_, v)| v.to_string())
        .unwrap_or_default();
    let classes: Vec<String> = e
        .get("objectClass")
        .unwrap_or(&[])
        .iter()
        .map(|c| String::from_utf8_lossy(c).to_ascii_lowercase())
        .collect();
    if user {
        for oc in ["top", "person", "organizationalPerson", "inetOrgPerson"] {
            lines.push(("objectClass", oc.into()));
        }
        for a in [
            "cn",
            "sn",
            "givenName",
            "displayName",
            "mail",
            "title",
            "telephoneNumber",
            "description",
        ] {
            lines.push((a, first(a)));
        }
        lines.push(("uid", first("sAMAccountName")));
        lines.push(("employeeNumber", first("employeeID")));
        lines.push(("userPassword", pw.to_string()));
    } else if classes.iter().any(|c| c == "domain") {
        lines.push(("objectClass", "top".into()));
        lines.push(("objectClass", "domain".into()));
        lines.push(("dc", rdn_value));
    } else if classes.iter().any(|c| c == "organizationalunit") {
        lines.push(("objectClass", "top".into()));
        lines.push(("objectClass", "organizationalUnit".into()));
        lines.push(("ou", rdn_value));
    } else if classes.iter().any(|c| c == "container") {
        lines.push(("objectClass", "top".into()));
        lines.push(("objectClass", "organizationalRole".into()));
        lines.push(("cn", rdn_value));
    } else {
        bail!("no LDIF mapping for {dn}");
    }
    crate::ldif::write_attr(out, "dn", dn.as_bytes())?;
    for (a, v) in lines {
        crate::ldif::write_attr(out, a, v.as_bytes())?;
    }
    writeln!(out)?;
    Ok(())
}

/// Runs the benchmark against the chosen servers.
pub fn run(opts: &Options) -> Result<Vec<ServerReport>> {
    anyhow::ensure!(opts.seconds > 0.0, "--seconds must be positive");
    anyhow::ensure!(
        !opts.connections.is_empty() && !opts.connections.contains(&0),
        "--connections needs positive counts"
    );
    anyhow::ensure!(opts.users > 0, "--users must be positive");
    let users_only = opts.users_only || opts.against == Against::Both;
    let mut reports = Vec::new();
    if opts.against != Against::Slapd {
        reports.push(run_kauri(opts, users_only)?);
    }
    if opts.against != Against::Kauri {
        let slapd = opts
            .slapd
            .as_ref()
            .context("--against slapd/both needs --slapd-uri and --slapd-password")?;
        anyhow::ensure!(
            !slapd.password.is_empty(),
            "--against slapd/both needs --slapd-password"
        );
        reports.push(run_slapd(opts, slapd)?);
    }
    Ok(reports)
}

/// A 2-thread tokio runtime for a load client, apart from the server's.
pub(crate) fn client_runtime() -> Result<tokio::runtime::Runtime> {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .thread_name("bench-client")
        .enable_all()
        .build()
        .context("starting the client runtime")
}

fn run_kauri(opts: &Options, users_only: bool) -> Result<ServerReport> {
    let suffix = if users_only { "-users-only" } else { "" };
    let dir = opts.dir.join(format!("ldap-{}{suffix}", opts.users));
    if dir.exists() {
        std::fs::remove_dir_all(&dir).with_context(|| format!("removing old {}", dir.display()))?;
    }
    std::fs::create_dir_all(&dir).with_context(|| format!("creating {}", dir.display()))?;
    let result = run_kauri_in(opts, users_only, &dir);
    let _ = std::fs::remove_dir_all(&dir);
    result
}

fn run_kauri_in(opts: &Options, users_only: bool, dir: &Path) -> Result<ServerReport> {
    if opts.progress {
        eprintln!(
            "kauri: loading {} users{} into {}",
            opts.users,
            if users_only { " (users only)" } else { "" },
            dir.display()
        );
    }
    let options = LmdbOptions {
        map_size: 32 << 30,
        replay_limit: 64 << 20,
        ..LmdbOptions::default()
    };
    let db: Db<LmdbBackend> = Db::open_lmdb(&dir.join("db"), directory_config(), options)
        .with_context(|| format!("opening database in {}", dir.display()))?;
    let pw = hash()?;
    let t = Instant::now();
    let mut loader = db.bulk_loader(BULK_CHUNK)?;
    let mut records = 0u64;
    let mut user_dns = Vec::with_capacity(opts.users);
    each_entry(opts.users, users_only, |mut e, root, idx| {
        if let Some(i) = idx {
            remember(&mut user_dns, i, e.dn.to_string())?;
            e.push("userPassword", vec![pw.as_bytes().to_vec()]);
        }
        if root {
            loader.add_root(e)?;
        } else {
            loader.add(e)?;
        }
        records += 1;
        Ok(())
    })?;
    loader.finish()?;
    let load = t.elapsed().as_secs_f64();
    anyhow::ensure!(
        user_dns.len() == opts.users,
        "generated {} users",
        user_dns.len()
    );

    let cfg = ServerConfig {
        data: dir.to_path_buf(),
        listen: "127.0.0.1:0".into(),
        listen_tls: String::new(),
        admin_dn: KAURI_ADMIN_DN.into(),
        admin_password: KAURI_ADMIN_PW.into(),
        size_limit: 0,
        ..ServerConfig::default()
    };
    let (schema, source) = kauri_domain::schema::Schema::load_default();
    let dir = Directory::new(Arc::new(db), schema, None).context("opening the directory")?;
    let (server_rt, addr) = start_server(cfg, Arc::new(dir), source)?;

    let target = Arc::new(Target {
        addr: addr.to_string(),
        admin_dn: KAURI_ADMIN_DN.into(),
        admin_pw: KAURI_ADMIN_PW.into(),
        base: DOMAIN.into(),
        key_attr: "sAMAccountName",
        user_dns,
        records,
    });
    let result = client_runtime()?.block_on(measure(opts, target.clone(), "kauri"));
    server_rt.shutdown_timeout(Duration::from_secs(2));
    let (rows, sweeps) = result?;
    Ok(ServerReport {
        server: "kauri".into(),
        setup: format!(
            "Kauri server in this process on its own 2-thread tokio runtime, load client on \
             another 2-thread runtime, over TCP on {addr}"
        ),
        users: opts.users,
        records: target.records,
        users_only,
        connections: opts.connections.clone(),
        seconds: opts.seconds,
        warmup_seconds: warmup(opts.seconds).as_secs_f64(),
        load_seconds: Some(load),
        rows,
        sweeps,
    })
}

/// Starts the Kauri server for `dir` on a 2-thread runtime of its own; returns the runtime
/// (shut it down when done) and the plain LDAP address.
pub(crate) fn start_server(
    cfg: ServerConfig,
    dir: Arc<Directory<LmdbBackend>>,
    source: SchemaSource,
) -> Result<(tokio::runtime::Runtime, SocketAddr)> {
    let server_rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .thread_name("kauri-server")
        .enable_all()
        .build()
        .context("starting the server runtime")?;
    let server = server_rt
        .block_on(Server::bind(cfg, dir, source))
        .context("starting the Kauri server")?;
    let addr = server
        .local_addr()
        .context("reading the server's address")?;
    server_rt.spawn(server.run());
    Ok((server_rt, addr))
}

fn run_slapd(opts: &Options, slapd: &SlapdTarget) -> Result<ServerReport> {
    let addr = slapd
        .uri
        .strip_prefix("ldap://")
        .with_context(|| format!("--slapd-uri {:?} is not ldap://HOST:PORT", slapd.uri))?
        .trim_end_matches('/')
        .to_string();
    let mut user_dns = Vec::with_capacity(opts.users);
    let mut records = 0u64;
    each_entry(opts.users, true, |e, _, idx| {
        if let Some(i) = idx {
            remember(&mut user_dns, i, e.dn.to_string())?;
        }
        records += 1;
        Ok(())
    })?;
    let target = Arc::new(Target {
        addr: addr.clone(),
        admin_dn: slapd.bind_dn.clone(),
        admin_pw: slapd.password.clone(),
        base: slapd.base.clone(),
        key_attr: "uid",
        user_dns,
        records,
    });
    if opts.progress {
        eprintln!("slapd: measuring {}", slapd.uri);
    }
    let (rows, sweeps) = client_runtime()?.block_on(measure(opts, target.clone(), "slapd"))?;
    Ok(ServerReport {
        server: "slapd".into(),
        setup: format!(
            "OpenLDAP slapd (back_mdb) in its own process at {addr}, load client in this \
             process on a 2-thread tokio runtime"
        ),
        users: opts.users,
        records: target.records,
        users_only: true,
        connections: opts.connections.clone(),
        seconds: opts.seconds,
        warmup_seconds: warmup(opts.seconds).as_secs_f64(),
        load_seconds: None,
        rows,
        sweeps,
    })
}

/// Warm-up before each measured window: a fifth of it, between 0.2 and 1 second.
fn warmup(seconds: f64) -> Duration {
    Duration::from_secs_f64((seconds / 5.0).clamp(0.2, 1.0))
}

async fn measure(
    opts: &Options,
    target: Arc<Target>,
    label: &str,
) -> Result<(Vec<Row>, Vec<Sweep>)> {
    let mut rows = Vec::new();
    let mut sweeps = Vec::new();
    for &n in &opts.connections {
        for w in Workload::ALL {
            let row = run_workload(&target, w, n, opts.seconds)
                .await
                .with_context(|| format!("{label}: {} with {n} connection(s)", w.name()))?;
            if opts.progress {
                eprintln!(
                    "{label}: {} x{n}: {:.0} ops/s, median {:.0} µs",
                    row.workload, row.ops_per_sec, row.median_us
                );
            }
            rows.push(row);
        }
        let sweep = paged_sweep(&target, n)
            .await
            .with_context(|| format!("{label}: paged sweep"))?;
        if opts.progress {
            eprintln!(
                "{label}: paged sweep: {} entries in {:.2} s",
                sweep.entries, sweep.seconds
            );
        }
        sweeps.push(sweep);
    }
    Ok((rows, sweeps))
}

/// Opens a plain client connection to `addr` (`host:port`), Nagle's algorithm off.
pub(crate) async fn connect(addr: &str) -> Result<LdapClient> {
    LdapClient::connect(&format!("ldap://{addr}"), &ConnectOptions::default())
        .await
        .with_context(|| format!("connecting to {addr}"))
}

/// A search counting the entries it returns (without keeping them); returns the count,
/// the result and the controls of the done message.
pub(crate) async fn count_entries(
    conn: &mut LdapClient,
    req: SearchRequest,
    controls: Vec<Control>,
) -> Result<(u64, LdapResult, Vec<Control>)> {
    let mut entries = 0u64;
    let done = conn
        .search_each(req, controls, |_| {
            entries += 1;
            Ok::<_, ClientError>(())
        })
        .await?;
    Ok((entries, done.result, done.controls))
}

/// Says goodbye; the connection is gone either way.
pub(crate) async fn unbind(conn: LdapClient) {
    let _ = conn.unbind().await;
}

/// A subtree search of `base` without limits.
pub(crate) fn search_request(base: &str, filter: Filter, attributes: &[&str]) -> SearchRequest {
    SearchRequest {
        base: base.to_string(),
        scope: SearchScope::Subtree,
        deref: DerefAliases::Never,
        size_limit: 0,
        time_limit: 0,
        types_only: false,
        filter,
        attributes: attributes.iter().map(|a| a.to_string()).collect(),
    }
}

/// Describes `r` unless it is a success.
pub(crate) fn check(what: &str, r: &LdapResult) -> Option<String> {
    (r.code != ResultCode::SUCCESS)
        .then(|| format!("{what}: result code {} ({:?})", r.code.0, r.message))
}

fn random_text(rng: &mut Rng, len: usize) -> String {
    const ALPHABET: &[u8] = b"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
    (0..len)
        .map(|_| char::from(ALPHABET[rng.below(ALPHABET.len())]))
        .collect()
}

/// One operation of a workload; `Some` describes a failed result.
async fn one_op(
    conn: &mut LdapClient,
    w: Workload,
    target: &Target,
    rng: &mut Rng,
    tag: &str,
    seq: u64,
) -> Result<Option<String>> {
    let users = target.user_dns.len();
    let who = rng.below(users);
    Ok(match w {
        Workload::Search => {
            let filter = Filter::eq(target.key_attr, format!("user{who:06}"));
            let (n, r, _) = count_entries(
                conn,
                search_request(&target.base, filter, &["cn", "mail"]),
                Vec::new(),
            )
            .await?;
            check("search", &r).or_else(|| {
                (n != 1).then(|| format!("search for user{who:06} returned {n} entries"))
            })
        }
        Workload::Bind => {
            let dn = target.user_dns.get(who).context("user index")?;
            let r = conn.simple_bind(dn, USER_PASSWORD).await?;
            check("bind", &r)
        }
        Workload::Modify => {
            let dn = target.user_dns.get(who).context("user index")?;
            let description = random_text(rng, 24);
            let r = conn
                .modify(
                    dn,
                    vec![change(ModOp::Replace, "description", &[description])],
                    Vec::new(),
                )
                .await?;
            check("modify", &r)
        }
        Workload::AddDelete => {
            let cn = format!("bench-{tag}-{seq}");
            let dn = format!("cn={cn},{}", target.base);
            let attr = |name: &str, values: &[&str]| {
                let values = values.iter().map(|v| v.as_bytes().to_vec()).collect();
                (name.to_string(), values)
            };
            let r = conn
                .add(
                    &dn,
                    vec![
                        attr("objectClass", &["top", "person"]),
                        attr("cn", &[&cn]),
                        attr("sn", &["Bench"]),
                    ],
                    Vec::new(),
                )
                .await?;
            if let Some(e) = check("add", &r) {
                Some(e)
            } else {
                let r = conn.delete(&dn, Vec::new()).await?;
                check("delete", &r)
            }
        }
    })
}

struct WorkerResult {
    samples: Vec<u64>,
    errors: u64,
    first_error: Option<String>,
    last: Instant,
}

async fn worker(
    mut conn: LdapClient,
    w: Workload,
    target: Arc<Target>,
    tag: String,
    seed: u64,
    warm_end: Instant,
    end: Instant,
) -> Result<WorkerResult> {
    let mut rng = Rng::new(seed);
    let mut samples = Vec::with_capacity(1 << 16);
    let mut errors = 0u64;
    let mut first_error = None;
    let mut seq = 0u64;
    let mut last = Instant::now();
    loop {
        let start = Instant::now();
        if start >= end {
            break;
        }
        seq += 1;
        let failed = one_op(&mut conn, w, &target, &mut rng, &tag, seq).await?;
        last = Instant::now();
        if let Some(e) = failed {
            errors += 1;
            first_error.get_or_insert(e);
        }
        if start >= warm_end {
            samples.push(u64::try_from((last - start).as_nanos()).unwrap_or(u64::MAX));
        }
    }
    unbind(conn).await;
    Ok(WorkerResult {
        samples,
        errors,
        first_error,
        last,
    })
}

async fn run_workload(target: &Arc<Target>, w: Workload, n: usize, seconds: f64) -> Result<Row> {
    // Connections are opened (and bound, where the workload needs it) before the clock.
    let mut conns = Vec::with_capacity(n);
    for _ in 0..n {
        let mut c = connect(&target.addr).await?;
        if w != Workload::Bind {
            let r = c.simple_bind(&target.admin_dn, &target.admin_pw).await?;
            if let Some(e) = check("administrator bind", &r) {
                bail!(e);
            }
        }
        conns.push(c);
    }
    let warm_end = Instant::now() + warmup(seconds);
    let end = warm_end + Duration::from_secs_f64(seconds);
    let mut tasks = Vec::with_capacity(n);
    for (i, c) in conns.into_iter().enumerate() {
        let tag = format!("{n}-{i}");
        let seed = 1 + (n as u64) * 1000 + i as u64;
        tasks.push(tokio::spawn(worker(
            c,
            w,
            target.clone(),
            tag,
            seed,
            warm_end,
            end,
        )));
    }
    let mut samples: Vec<u64> = Vec::new();
    let mut errors = 0u64;
    let mut first_error = None;
    let mut last = warm_end;
    for t in tasks {
        let r = t.await.context("a client task panicked")??;
        samples.extend_from_slice(&r.samples);
        errors += r.errors;
        if first_error.is_none() {
            first_error = r.first_error;
        }
        last = last.max(r.last);
    }
    if errors > 0 {
        bail!(
            "{errors} operation(s) failed; first: {}",
            first_error.unwrap_or_default()
        );
    }
    anyhow::ensure!(!samples.is_empty(), "no operation completed");
    samples.sort_unstable();
    let count = samples.len();
    let us = |ns: u64| ns as f64 / 1e3;
    let pick = |q: f64| quantile_us(&samples, q);
    let window = (last - warm_end).as_secs_f64().max(1e-9);
    Ok(Row {
        workload: w.name().into(),
        connections: n,
        ops: count as u64,
        seconds: window,
        ops_per_sec: count as f64 / window,
        mean_us: us(samples.iter().sum::<u64>()) / count as f64,
        median_us: pick(0.5),
        p95_us: pick(0.95),
        max_us: samples.last().copied().map(us).unwrap_or(0.0),
    })
}

/// The `q` quantile of latencies in nanoseconds, sorted ascending, in µs (0 when empty).
pub(crate) fn quantile_us(sorted: &[u64], q: f64) -> f64 {
    let i = ((q * sorted.len() as f64).ceil() as usize).clamp(1, sorted.len().max(1)) - 1;
    sorted.get(i).map_or(0.0, |&ns| ns as f64 / 1e3)
}

async fn paged_sweep(target: &Target, after_connections: usize) -> Result<Sweep> {
    let mut conn = connect(&target.addr).await?;
    let r = conn.simple_bind(&target.admin_dn, &target.admin_pw).await?;
    if let Some(e) = check("administrator bind", &r) {
        bail!(e);
    }
    let t = Instant::now();
    let mut cookie = Vec::new();
    let mut entries = 0u64;
    let mut pages = 0u64;
    loop {
        let control = PagedResults {
            size: PAGE_SIZE,
            cookie: std::mem::take(&mut cookie),
        }
        .to_control(true);
        let (n, r, controls) = count_entries(
            &mut conn,
            search_request(&target.base, Filter::present("objectClass"), &[]),
            vec![control],
        )
        .await?;
        if let Some(e) = check("paged search", &r) {
            bail!(e);
        }
        entries += n;
        pages += 1;
        cookie = next_page_cookie(&controls)?;
        if cookie.is_empty() {
            break;
        }
    }
    let seconds = t.elapsed().as_secs_f64();
    unbind(conn).await;
    anyhow::ensure!(
        entries == target.records,
        "the paged sweep returned {entries} entries, the directory holds {}",
        target.records
    );
    Ok(Sweep {
        after_connections,
        entries,
        pages,
        seconds,
        entries_per_sec: entries as f64 / seconds.max(1e-9),
    })
}

/// A number with as many decimals as its size deserves.
pub(crate) fn num(v: f64) -> String {
    if v >= 100.0 {
        format!("{v:.0}")
    } else if v >= 10.0 {
        format!("{v:.1}")
    } else {
        format!("{v:.2}")
    }
}

/// Renders the reports as Markdown, one table per server, for BENCHMARKS.md.
pub fn markdown(reports: &[ServerReport]) -> String {
    let mut s = String::new();
    for r in reports {
        s.push_str(&format!(
            "\n### LDAP load: {} ({} users, {} records{})\n\n",
            r.server,
            r.users,
            r.records,
            if r.users_only { ", users only" } else { "" }
        ));
        s.push_str(&format!("{}.\n", r.setup));
        s.push_str(&format!(
            "Closed loop, one request in flight per connection; {} s measured after {} s \
             warm-up per row; connections: {}.\n",
            num(r.seconds),
            num(r.warmup_seconds),
            r.connections
                .iter()
                .map(|c| c.to_string())
                .collect::<Vec<_>>()
                .join(", ")
        ));
        if let Some(l) = r.load_seconds {
            s.push_str(&format!(
                "Bulk load of the {} records: {} s.\n",
                r.records,
                num(l)
            ));
        }
        s.push_str(
            "\n| workload | connections | ops/s | mean µs | median µs | p95 µs | max µs |\n\
             |---|---|---|---|---|---|---|\n",
        );
        for row in &r.rows {
            s.push_str(&format!(
                "| {} | {} | {} | {} | {} | {} | {} |\n",
                row.workload,
                row.connections,
                num(row.ops_per_sec),
                num(row.mean_us),
                num(row.median_us),
                num(row.p95_us),
                num(row.max_us)
            ));
        }
        s.push_str(&format!(
            "\n| paged sweep (page size {PAGE_SIZE}, all attributes, 1 connection) | entries | pages | time | entries/s |\n\
             |---|---|---|---|---|\n"
        ));
        for sw in &r.sweeps {
            s.push_str(&format!(
                "| after the {}-connection runs | {} | {} | {} s | {} |\n",
                sw.after_connections,
                sw.entries,
                sw.pages,
                num(sw.seconds),
                num(sw.entries_per_sec)
            ));
        }
    }
    s
}

/// The cookie of the next page, from a paged search's final controls (empty at the end).
pub(crate) fn next_page_cookie(controls: &[Control]) -> Result<Vec<u8>> {
    let paged = controls
        .iter()
        .find(|c| c.oid == PagedResults::OID)
        .context("a page came back without the paged results control")?;
    Ok(PagedResults::from_control(paged)
        .map_err(|e| anyhow::anyhow!("paged results control: {e}"))?
        .cookie)
}
