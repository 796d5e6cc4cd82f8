//! `kauri bench auth`: what NTLM and CLDAP cost, measured from a client over TCP and UDP on
//! 127.0.0.1 against a provisioned domain with many users.
//!
//! A fresh domain is provisioned in this process and `--users` users are added in-process
//! (no passwords; the binds are the Administrator's). The server runs on its own 2-thread
//! runtime, the client on another, one request in flight per connection. In order:
//!
//! 1. a connection's whole life, connect + bind + one base search + unbind, with a simple
//!    bind and with a sealed NTLM bind (GSS-SPNEGO), at each connection count;
//! 2. a paged subtree search of every user (page size 1000, `cn` and `sAMAccountName`) on
//!    one connection, plain and sealed: the cost per entry of sealing;
//! 3. CLDAP netlogon pings (the extended response), one datagram in flight per socket.
//!
//! Every response must be a success (and every ping answered), or the run fails.

use std::net::UdpSocket;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::{bail, Context, Result};
use kauri_db::{Db, Dn, Entry, Filter};
use kauri_domain::directory::{Caller, Change, Directory, Request};
use kauri_domain::password::SecretKey;
use kauri_domain::provision::ProvisionParams;
use kauri_domain::schema::Schema;
use kauri_domain::sid::Sid;
use kauri_kv::lmdb::LmdbOptions;
use kauri_ldap::ServerConfig;
use kauri_ldap_client::{search_request, ConnectOptions, LdapClient};
use kauri_ldap_proto::controls::{ControlValue, PagedResults};
use kauri_ldap_proto::{ResultCode, SearchScope};

use crate::bench_ldap::{client_runtime, start_server};

const DOMAIN: &str = "DC=samdom,DC=example,DC=com";
const ADMIN_PW: &str = "Bench.Passw0rd!1";
/// Users added per transaction.
const CHUNK: usize = 5_000;

/// What to run.
#[derive(Debug, Clone)]
pub struct Options {
    /// Folder for the benchmark domain (removed afterwards).
    pub dir: PathBuf,
    /// Users in the domain.
    pub users: usize,
    /// Measured seconds per workload and connection count.
    pub seconds: f64,
    /// Connection (or socket) counts.
    pub connections: Vec<usize>,
    /// Progress on stderr.
    pub progress: bool,
}

/// One workload at one connection count.
#[derive(Debug, Clone, serde::Serialize)]
pub struct Row {
    /// The workload.
    pub workload: String,
    /// Connections (or UDP sockets), each with one request in flight.
    pub connections: usize,
    /// Operations completed.
    pub ops: u64,
    /// Measured window, seconds.
    pub seconds: f64,
    /// Throughput.
    pub ops_per_sec: f64,
    /// Mean latency, µs.
    pub mean_us: f64,
}

/// One sweep of every user.
#[derive(Debug, Clone, serde::Serialize)]
pub struct Sweep {
    /// `plain` or `sealed`.
    pub connection: String,
    /// Entries read.
    pub entries: u64,
    /// Seconds.
    pub seconds: f64,
    /// µs per entry.
    pub us_per_entry: f64,
}

/// The whole run.
#[derive(Debug, Clone, serde::Serialize)]
pub struct Report {
    /// Users in the domain.
    pub users: usize,
    /// How it ran.
    pub setup: String,
    /// Connection lives and CLDAP pings.
    pub rows: Vec<Row>,
    /// Sweeps, plain and sealed.
    pub sweeps: Vec<Sweep>,
    /// What each stored form of a password costs to compute, once per password set.
    pub password_forms: Vec<PasswordForm>,
}

/// The cost of one stored form of a password.
#[derive(Debug, Clone, serde::Serialize)]
pub struct PasswordForm {
    /// The form: `NT hash`, or the crypt scheme's name.
    pub form: String,
    /// Passwords hashed.
    pub passwords: u64,
    /// CPU time per password on one thread, µs.
    pub us_per_password: f64,
}

/// Times each stored form of a password on this thread: the NT hash every set computes,
/// and the crypt forms `password_hash_schemes` may add.
fn password_forms() -> Result<Vec<PasswordForm>> {
    use kauri_domain::password::{hash_crypt, nt_hash, CryptAlgorithm, DEFAULT_CRYPT_ROUNDS};
    let time = |form: &str, n: u64, f: &dyn Fn(&str) -> Result<()>| -> Result<PasswordForm> {
        let started = Instant::now();
        for i in 0..n {
            f(&format!("Passw0rd.{i}"))?;
        }
        Ok(PasswordForm {
            form: form.into(),
            passwords: n,
            us_per_password: started.elapsed().as_secs_f64() * 1e6 / n as f64,
        })
    };
    Ok(vec![
        time("NT hash (always)", 100_000, &|p| {
            std::hint::black_box(nt_hash(p));
            Ok(())
        })?,
        time("CryptSHA256 (5,000 rounds)", 300, &|p| {
            hash_crypt(p, CryptAlgorithm::Sha256, DEFAULT_CRYPT_ROUNDS)?;
            Ok(())
        })?,
        time("CryptSHA512 (5,000 rounds)", 300, &|p| {
            hash_crypt(p, CryptAlgorithm::Sha512, DEFAULT_CRYPT_ROUNDS)?;
            Ok(())
        })?,
    ])
}

fn say(opts: &Options, what: &str) {
    if opts.progress {
        eprintln!("bench auth: {what}");
    }
}

/// Runs the benchmark in a fresh folder under `opts.dir`.
pub fn run(opts: &Options) -> Result<Report> {
    let data = opts.dir.join(format!("auth-{}", opts.users));
    if data.exists() {
        std::fs::remove_dir_all(&data).with_context(|| format!("clearing {}", data.display()))?;
    }
    std::fs::create_dir_all(&data).with_context(|| format!("creating {}", data.display()))?;
    let out = run_in(opts, &data);
    let _ = std::fs::remove_dir_all(&data);
    out
}

fn run_in(opts: &Options, data: &Path) -> Result<Report> {
    let (schema, source) = Schema::load_default();
    let options = LmdbOptions {
        map_size: 32 << 30,
        ..LmdbOptions::default()
    };
    let db = Db::open_lmdb(&data.join("db"), schema.db_config(), options)
        .with_context(|| format!("creating the database in {}", data.display()))?;
    let key = SecretKey::generate().context("making the secrets key")?;
    let dir = Directory::new(Arc::new(db), schema, Some(key)).context("opening the directory")?;
    say(opts, "provisioning SAMDOM.EXAMPLE.COM");
    dir.provision(
        &ProvisionParams {
            realm: "SAMDOM.EXAMPLE.COM".into(),
            netbios_domain: "SAMDOM".into(),
            dc_name: "DC1".into(),
            domain_sid: Sid::new_domain().context("choosing a domain SID")?,
            site: "Default-First-Site-Name".into(),
        },
        ADMIN_PW,
        None,
    )
    .context("provisioning")?;
    say(opts, &format!("adding {} users", opts.users));
    add_users(&dir, opts.users)?;
    let cfg = ServerConfig {
        data: data.to_path_buf(),
        listen: "127.0.0.1:0".into(),
        listen_tls: String::new(),
        metrics_listen: String::new(),
        size_limit: 0,
        ..ServerConfig::default()
    };
    let dir = Arc::new(dir);
    let (server_rt, addr) = start_server(cfg, dir, source)?;
    let addr = addr.to_string();
    let measured =
        client_runtime()?
            .block_on(measure(opts, &addr))
            .and_then(|(mut rows, sweeps)| {
                for &n in &opts.connections {
                    say(opts, &format!("CLDAP pings on {n} sockets"));
                    rows.push(pings(&addr, n, opts.seconds)?);
                }
                Ok((rows, sweeps))
            });
    server_rt.shutdown_timeout(Duration::from_secs(2));
    let (rows, sweeps) = measured?;
    say(opts, "timing each stored form of a password");
    let password_forms = password_forms()?;
    Ok(Report {
        users: opts.users,
        setup: format!(
            "Kauri server in this process on its own 2-thread tokio runtime; client on \
             another 2-thread runtime over TCP and UDP on {addr}, one request in flight per \
             connection; NTLM binds are NTLMv2 with a sealed GSS-SPNEGO session"
        ),
        rows,
        sweeps,
        password_forms,
    })
}

fn add_users(dir: &Directory<kauri_kv::lmdb::LmdbBackend>, users: usize) -> Result<()> {
    let ou = format!("OU=Bench,{DOMAIN}");
    let mut pending =
        vec![Entry::new(Dn::parse(&ou)?).with("objectClass", &["organizationalUnit"])];
    for i in 0..users {
        let name = format!("bench{i:06}");
        pending.push(
            Entry::new(Dn::parse(&format!("CN={name},{ou}"))?)
                .with("objectClass", &["user"])
                .with("sAMAccountName", &[&name]),
        );
        if pending.len() >= CHUNK || i + 1 == users {
            let mut w = dir.db().write().context("opening a write transaction")?;
            for e in pending.drain(..) {
                let req = Request {
                    caller: Caller::System,
                    encrypted: true,
                    change: Change::Add(e),
                };
                dir.apply(&mut w, &req).context("adding a user")?;
            }
            w.commit().context("committing users")?;
        }
    }
    Ok(())
}

/// A connection's life: connect, bind (simple or NTLM), one base search, unbind.
async fn life(addr: &str, ntlm: bool) -> Result<()> {
    let mut c = LdapClient::connect(&format!("ldap://{addr}"), &ConnectOptions::default()).await?;
    let r = if ntlm {
        c.ntlm_bind("Administrator", "SAMDOM", ADMIN_PW, true)
            .await?
    } else {
        c.simple_bind("SAMDOM\\Administrator", ADMIN_PW).await?
    };
    if r.code != ResultCode::SUCCESS {
        bail!("bind refused: {r:?}");
    }
    let found = c
        .search(
            search_request(
                DOMAIN,
                SearchScope::Base,
                Filter::parse("(objectClass=*)")?,
                &["name"],
            ),
            Vec::new(),
        )
        .await?;
    if found.entries.len() != 1 {
        bail!("the base search found {} entries", found.entries.len());
    }
    c.unbind().await?;
    Ok(())
}

async fn lives(addr: &str, ntlm: bool, connections: usize, seconds: f64) -> Result<Row> {
    let deadline = Instant::now() + Duration::from_secs_f64(seconds);
    let mut tasks = Vec::new();
    for _ in 0..connections {
        let addr = addr.to_string();
        tasks.push(tokio::spawn(async move {
            let mut n = 0u64;
            let mut busy = Duration::ZERO;
            while Instant::now() < deadline {
                let t = Instant::now();
                life(&addr, ntlm).await?;
                busy += t.elapsed();
                n += 1;
            }
            Ok::<_, anyhow::Error>((n, busy))
        }));
    }
    let started = Instant::now();
    let (mut ops, mut busy) = (0u64, Duration::ZERO);
    for t in tasks {
        let (n, b) = t.await.context("a client task")??;
        ops += n;
        busy += b;
    }
    let secs = started.elapsed().as_secs_f64();
    Ok(Row {
        workload: if ntlm {
            "connect + sealed NTLM bind + search".into()
        } else {
            "connect + simple bind + search".into()
        },
        connections,
        ops,
        seconds: secs,
        ops_per_sec: ops as f64 / secs,
        mean_us: busy.as_secs_f64() * 1e6 / ops.max(1) as f64,
    })
}

async fn sweep(addr: &str, sealed: bool, users: usize) -> Result<Sweep> {
    let mut c = LdapClient::connect(&format!("ldap://{addr}"), &ConnectOptions::default()).await?;
    let r = if sealed {
        c.ntlm_bind("Administrator", "SAMDOM", ADMIN_PW, true)
            .await?
    } else {
        c.simple_bind("SAMDOM\\Administrator", ADMIN_PW).await?
    };
    if r.code != ResultCode::SUCCESS {
        bail!("bind refused: {r:?}");
    }
    let t = Instant::now();
    let mut entries = 0u64;
    let mut cookie = Vec::new();
    loop {
        let paged = PagedResults {
            size: 1000,
            cookie: cookie.clone(),
        }
        .to_control(true);
        let found = c
            .search(
                search_request(
                    &format!("OU=Bench,{DOMAIN}"),
                    SearchScope::OneLevel,
                    Filter::parse("(objectClass=user)")?,
                    &["cn", "sAMAccountName"],
                ),
                vec![paged],
            )
            .await?;
        entries += found.entries.len() as u64;
        if found.result.code != ResultCode::SUCCESS {
            bail!("the sweep failed: {:?}", found.result);
        }
        cookie = found
            .controls
            .iter()
            .find(|c| c.oid == PagedResults::OID)
            .and_then(|c| PagedResults::from_control(c).ok())
            .map(|p| p.cookie)
            .unwrap_or_default();
        if cookie.is_empty() {
            break;
        }
    }
    let secs = t.elapsed().as_secs_f64();
    if entries != users as u64 {
        bail!("the sweep read {entries} of {users} users");
    }
    Ok(Sweep {
        connection: if sealed {
            "sealed (NTLM)".into()
        } else {
            "plain".into()
        },
        entries,
        seconds: secs,
        us_per_entry: secs * 1e6 / entries.max(1) as f64,
    })
}

async fn measure(opts: &Options, addr: &str) -> Result<(Vec<Row>, Vec<Sweep>)> {
    let mut rows = Vec::new();
    for &n in &opts.connections {
        for ntlm in [false, true] {
            say(
                opts,
                &format!(
                    "connection lives, {} binds, {n} connections",
                    if ntlm { "NTLM" } else { "simple" }
                ),
            );
            rows.push(lives(addr, ntlm, n, opts.seconds).await?);
        }
    }
    let mut sweeps = Vec::new();
    for sealed in [false, true, false, true] {
        say(
            opts,
            &format!(
                "sweep of every user, {}",
                if sealed { "sealed" } else { "plain" }
            ),
        );
        sweeps.push(sweep(addr, sealed, opts.users).await?);
    }
    Ok((rows, sweeps))
}

/// CLDAP netlogon pings from `sockets` UDP sockets, each waiting for its answer.
fn pings(addr: &str, sockets: usize, seconds: f64) -> Result<Row> {
    let ping = crate::traffic::replay::udp::netlogon_ping(1, "samdom.example.com");
    let deadline = Instant::now() + Duration::from_secs_f64(seconds);
    let started = Instant::now();
    let threads: Vec<_> = (0..sockets)
        .map(|_| {
            let (addr, ping) = (addr.to_string(), ping.clone());
            std::thread::spawn(move || -> Result<(u64, Duration)> {
                let s = UdpSocket::bind("127.0.0.1:0")?;
                s.set_read_timeout(Some(Duration::from_secs(2)))?;
                s.connect(&addr)?;
                let mut buf = [0u8; 2048];
                let (mut n, mut busy) = (0u64, Duration::ZERO);
                while Instant::now() < deadline {
                    let t = Instant::now();
                    s.send(&ping)?;
                    let got = s.recv(&mut buf).context("a ping went unanswered")?;
                    if got < 20 {
                        bail!("a {got}-byte answer to a ping");
                    }
                    busy += t.elapsed();
                    n += 1;
                }
                Ok((n, busy))
            })
        })
        .collect();
    let (mut ops, mut busy) = (0u64, Duration::ZERO);
    for t in threads {
        let (n, b) = t
            .join()
            .map_err(|_| anyhow::anyhow!("a ping thread failed"))??;
        ops += n;
        busy += b;
    }
    let secs = started.elapsed().as_secs_f64();
    Ok(Row {
        workload: "CLDAP netlogon ping".into(),
        connections: sockets,
        ops,
        seconds: secs,
        ops_per_sec: ops as f64 / secs,
        mean_us: busy.as_secs_f64() * 1e6 / ops.max(1) as f64,
    })
}

/// The report as Markdown tables.
pub fn markdown(reports: &[Report]) -> String {
    let mut s = String::new();
    for r in reports {
        s.push_str(&format!(
            "### NTLM, sealing and CLDAP, {} users\n\n{}\n\n",
            r.users, r.setup
        ));
        s.push_str("| workload | connections | ops/s | mean latency |\n|---|---|---|---|\n");
        for row in &r.rows {
            s.push_str(&format!(
                "| {} | {} | {:.0} | {:.0} µs |\n",
                row.workload, row.connections, row.ops_per_sec, row.mean_us
            ));
        }
        s.push_str(
            "\n| sweep of every user | entries | seconds | µs per entry |\n|---|---|---|---|\n",
        );
        for w in &r.sweeps {
            s.push_str(&format!(
                "| {} | {} | {:.2} | {:.2} |\n",
                w.connection, w.entries, w.seconds, w.us_per_entry
            ));
        }
        s.push_str(
            "\n| stored form of a password | passwords | µs per password set |\n|---|---|---|\n",
        );
        for f in &r.password_forms {
            s.push_str(&format!(
                "| {} | {} | {:.1} |\n",
                f.form, f.passwords, f.us_per_password
            ));
        }
        s.push('\n');
    }
    s
}
