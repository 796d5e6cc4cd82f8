//! `kauri bench admin`: the administrator's commands at scale, timed as an administrator
//! runs them (each one a `kauri` process of its own, start-up included).
//!
//! It provisions a domain, loads generated users, groups and memberships with
//! `kauri ldif import`, then times on that folder: `ldif export` (everything, and the
//! writable form), `domain backup offline`, `verify`, `restore`, `reindex`, `dbcheck`,
//! `group stats` and `user list`; then the same backup while the domain is served and
//! eight connections add users, and an online backup pulled from the server.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Instant;

use anyhow::{bail, Context, Result};
use serde::Serialize;

/// The Administrator's password of the benchmark domain.
const PASSWORD: &str = "Bench.Passw0rd.1";
const DOMAIN: &str = "DC=samdom,DC=example,DC=com";

/// Options of the benchmark.
#[derive(Debug, Clone)]
pub struct Options {
    /// Users to load.
    pub users: usize,
    /// Groups to load (members spread over them: 2.5 memberships per user).
    pub groups: usize,
    /// Folder for the domain, archives and files (removed afterwards unless `keep`).
    pub dir: PathBuf,
    /// Keep the folder.
    pub keep: bool,
    /// Progress lines on standard error.
    pub progress: bool,
}

/// One timed command.
#[derive(Debug, Clone, Serialize)]
pub struct Step {
    /// What ran.
    pub name: String,
    /// The command line (after `kauri`).
    pub command: String,
    /// Wall-clock seconds.
    pub seconds: f64,
    /// A size or count that goes with it, in words.
    pub detail: String,
}

/// What the benchmark reports.
#[derive(Debug, Clone, Serialize)]
pub struct Report {
    /// Users loaded.
    pub users: usize,
    /// Groups loaded.
    pub groups: usize,
    /// Memberships loaded.
    pub memberships: usize,
    /// Records in the database after the load.
    pub records: u64,
    /// The steps, in order.
    pub steps: Vec<Step>,
}

fn exe() -> Result<PathBuf> {
    std::env::current_exe().context("finding the kauri executable")
}

/// Runs `kauri args…` and returns its standard output and the seconds it took.
fn timed(args: &[&str]) -> Result<(String, f64)> {
    let t = Instant::now();
    let out = Command::new(exe()?)
        .args(args)
        .stdin(Stdio::null())
        .output()
        .with_context(|| format!("running kauri {}", args.join(" ")))?;
    let secs = t.elapsed().as_secs_f64();
    if !out.status.success() {
        bail!(
            "kauri {} failed: {}",
            args.join(" "),
            String::from_utf8_lossy(&out.stderr)
        );
    }
    Ok((String::from_utf8_lossy(&out.stdout).into_owned(), secs))
}

fn json(text: &str) -> Result<serde_json::Value> {
    serde_json::from_str(text).with_context(|| format!("not JSON: {text}"))
}

fn size(path: &Path) -> u64 {
    std::fs::metadata(path).map(|m| m.len()).unwrap_or(0)
}

fn mib(bytes: u64) -> String {
    format!("{:.1} MiB", bytes as f64 / 1048576.0)
}

/// Writes the load: OUs, users (10 departments of teams of 50), then groups with their
/// members. Returns the memberships written.
fn write_ldif(path: &Path, users: usize, groups: usize) -> Result<usize> {
    let mut out = std::io::BufWriter::with_capacity(1 << 20, std::fs::File::create(path)?);
    let bench = format!("OU=Bench,{DOMAIN}");
    writeln!(
        out,
        "version: 1\n\ndn: {bench}\nobjectClass: organizationalUnit\n"
    )?;
    let depts = 10usize;
    for d in 0..depts {
        writeln!(
            out,
            "dn: OU=Dept{d},{bench}\nobjectClass: organizationalUnit\n"
        )?;
    }
    let team_size = 50usize;
    let teams = users.div_ceil(team_size);
    for t in 0..teams {
        writeln!(
            out,
            "dn: OU=Team{t},OU=Dept{},{bench}\nobjectClass: organizationalUnit\n",
            t % depts
        )?;
    }
    let user_dn = |i: usize| {
        let t = i / team_size;
        format!("CN=User {i},OU=Team{t},OU=Dept{},{bench}", t % depts)
    };
    for i in 0..users {
        writeln!(
            out,
            "dn: {}\nobjectClass: user\nsAMAccountName: user{i}\nuserPrincipalName: user{i}@samdom.example.com\ngivenName: Given{i}\nsn: Family{}\ndisplayName: Given{i} Family{}\nmail: user{i}@example.com\ndepartment: Dept{}\ntitle: Engineer\nemployeeID: E{i:07}\n",
            user_dn(i),
            i % 997,
            i % 997,
            (i / team_size) % depts
        )?;
    }
    // Each user joins 2 or 3 groups: 2.5 memberships per user on average.
    let mut members: Vec<Vec<usize>> = vec![Vec::new(); groups.max(1)];
    let mut memberships = 0;
    for i in 0..users {
        let n = if i % 2 == 0 { 2 } else { 3 };
        for k in 0..n {
            members[(i * 7 + k * 13) % groups.max(1)].push(i);
            memberships += 1;
        }
    }
    for (g, list) in members.iter().enumerate().take(groups) {
        writeln!(
            out,
            "dn: CN=Group {g},{bench}\nobjectClass: group\nsAMAccountName: group{g}"
        )?;
        for m in list {
            writeln!(out, "member: {}", user_dn(*m))?;
        }
        writeln!(out)?;
    }
    out.flush()?;
    Ok(memberships)
}

/// `kauri serve` on free ports of 127.0.0.1, stopped when dropped.
struct Served {
    child: std::process::Child,
    ldaps: String,
}

impl Served {
    fn start(data: &Path) -> Result<Served> {
        use std::io::BufRead;
        let mut child = Command::new(exe()?)
            .arg("serve")
            .arg("--data")
            .arg(data)
            .args(["--listen", "127.0.0.1:0", "--listen-tls", "127.0.0.1:0"])
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .context("starting kauri serve")?;
        let stderr = child.stderr.take().context("the server's output")?;
        let mut lines = std::io::BufReader::new(stderr)
            .lines()
            .map_while(Result::ok);
        let found = lines.by_ref().find_map(|l| {
            l.strip_prefix("kauri: serving ldaps://")
                .map(str::to_string)
        });
        let Some(addr) = found else {
            let _ = child.kill();
            bail!("the server did not start");
        };
        std::thread::spawn(move || lines.for_each(drop));
        Ok(Served {
            child,
            ldaps: format!("ldaps://{addr}"),
        })
    }
}

impl Drop for Served {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Adds users over LDAP on `connections` connections until told to stop.
fn writers(
    addr: String,
    ca: PathBuf,
    connections: usize,
    stop: Arc<AtomicBool>,
    added: Arc<AtomicU64>,
) -> std::thread::JoinHandle<Result<()>> {
    std::thread::spawn(move || {
        let rt = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .enable_all()
            .build()?;
        rt.block_on(async move {
            let mut tasks = Vec::new();
            for c in 0..connections {
                let (addr, ca, stop, added) =
                    (addr.clone(), ca.clone(), stop.clone(), added.clone());
                tasks.push(tokio::spawn(async move {
                    use kauri_ldap_client::{CheckResult, ConnectOptions, LdapClient, TlsOptions};
                    let opts =
                        ConnectOptions::default().with_tls(TlsOptions::default().with_ca_file(ca));
                    let mut client = LdapClient::connect(&addr, &opts).await?;
                    client
                        .simple_bind("SAMDOM\\Administrator", PASSWORD)
                        .await?
                        .check("bind")?;
                    let mut i = 0u64;
                    while !stop.load(Ordering::Relaxed) {
                        let name = format!("live{c}x{i}");
                        let attrs = vec![
                            ("objectClass".to_string(), vec![b"user".to_vec()]),
                            (
                                "sAMAccountName".to_string(),
                                vec![name.clone().into_bytes()],
                            ),
                        ];
                        client
                            .add(&format!("CN={name},OU=Bench,{DOMAIN}"), attrs, Vec::new())
                            .await?
                            .check("add")?;
                        added.fetch_add(1, Ordering::Relaxed);
                        i += 1;
                    }
                    anyhow::Ok(())
                }));
            }
            for t in tasks {
                t.await.context("a writer panicked")??;
            }
            anyhow::Ok(())
        })
    })
}

/// Runs the benchmark.
pub fn run(o: &Options) -> Result<Report> {
    std::fs::create_dir_all(&o.dir)?;
    let work = tempfile::Builder::new()
        .prefix("bench-admin-")
        .tempdir_in(&o.dir)?;
    let report = run_in(o, work.path());
    if o.keep {
        let kept = work.keep();
        eprintln!("kauri: kept {}", kept.display());
    }
    report
}

fn run_in(o: &Options, dir: &Path) -> Result<Report> {
    let say = |what: &str| {
        if o.progress {
            eprintln!("bench admin: {what}");
        }
    };
    let p = |path: &Path| path.display().to_string();
    let data = dir.join("domain");
    let d = p(&data);
    let mut steps = Vec::new();
    let mut step = |name: &str, args: &[&str], detail: String, secs: f64| {
        steps.push(Step {
            name: name.to_string(),
            command: args.join(" "),
            seconds: secs,
            detail,
        });
    };
    say("provisioning");
    let args = [
        "domain",
        "provision",
        "--realm",
        "SAMDOM.EXAMPLE.COM",
        "--domain",
        "SAMDOM",
        "--adminpass",
        PASSWORD,
        "--json",
        "--targetdir",
        &d,
    ];
    let (_, secs) = timed(&args)?;
    step("provision a domain", &args, String::new(), secs);

    say("writing the LDIF of the load");
    let ldif = dir.join("load.ldif");
    let memberships = write_ldif(&ldif, o.users, o.groups)?;
    say(&format!("importing {} users", o.users));
    let args = ["ldif", "import", &p(&ldif), "-H", &d, "--json"];
    let (out, secs) = timed(&args)?;
    let applied = json(&out)?["applied"].as_u64().unwrap_or(0);
    step(
        "ldif import into the new domain (users, groups, memberships)",
        &args,
        format!("{applied} records, {} of LDIF", mib(size(&ldif))),
        secs,
    );
    let (out, _) = timed(&["db", "stats", "-H", &d, "--json"])?;
    let records = json(&out)?["records"].as_u64().unwrap_or(0);

    say("exporting");
    let all = dir.join("all.ldif");
    let args = ["ldif", "export", "-H", &d, "-o", &p(&all)];
    let (_, secs) = timed(&args)?;
    step("ldif export, every entry", &args, mib(size(&all)), secs);
    let writable = dir.join("writable.ldif");
    let args = [
        "ldif",
        "export",
        "-H",
        &d,
        "--writable-only",
        "-o",
        &p(&writable),
    ];
    let (_, secs) = timed(&args)?;
    step(
        "ldif export --writable-only",
        &args,
        mib(size(&writable)),
        secs,
    );

    say("backing up offline");
    let backups = dir.join("backups");
    let args = [
        "domain",
        "backup",
        "offline",
        "-H",
        &d,
        "--targetdir",
        &p(&backups),
        "--json",
    ];
    let (out, secs) = timed(&args)?;
    let b = json(&out)?;
    let archive = b["archive"].as_str().unwrap_or_default().to_string();
    step(
        "domain backup offline",
        &args,
        format!(
            "{} archive, {} dump",
            mib(b["archive_bytes"].as_u64().unwrap_or(0)),
            mib(b["dump_bytes"].as_u64().unwrap_or(0))
        ),
        secs,
    );
    let args = [
        "domain",
        "backup",
        "verify",
        "--backup-file",
        &archive,
        "--json",
    ];
    let (_, secs) = timed(&args)?;
    step("domain backup verify", &args, String::new(), secs);
    say("restoring");
    let restored = dir.join("restored");
    let args = [
        "domain",
        "backup",
        "restore",
        "--backup-file",
        &archive,
        "--targetdir",
        &p(&restored),
        "--newservername",
        "DC2",
        "--json",
    ];
    let (_, secs) = timed(&args)?;
    step(
        "domain backup restore (verify, load, new DC, consistency check)",
        &args,
        format!("{} on disk", mib(size(&restored.join("db/data.mdb")))),
        secs,
    );
    let quick = dir.join("restored-unchecked");
    let args = [
        "domain",
        "backup",
        "restore",
        "--backup-file",
        &archive,
        "--targetdir",
        &p(&quick),
        "--newservername",
        "DC3",
        "--skip-check",
        "--json",
    ];
    let (_, secs) = timed(&args)?;
    step(
        "domain backup restore --skip-check",
        &args,
        String::new(),
        secs,
    );
    say("re-indexing and checking");
    let args = ["reindex", "-H", &d, "--json"];
    let (out, secs) = timed(&args)?;
    let keys = json(&out)?["index_keys"].as_u64().unwrap_or(0);
    step("reindex", &args, format!("{keys} index keys"), secs);
    let args = ["dbcheck", "-H", &d, "--json"];
    let (out, secs) = timed(&args)?;
    if json(&out)?["clean"] != true {
        bail!("dbcheck found problems: {out}");
    }
    step("dbcheck (database and domain)", &args, "clean".into(), secs);
    let args = ["group", "stats", "-H", &d, "--json"];
    let (_, secs) = timed(&args)?;
    step("group stats", &args, format!("{} groups", o.groups), secs);
    let args = ["user", "list", "-H", &d, "--json"];
    let (out, secs) = timed(&args)?;
    let n = json(&out)?.as_array().map_or(0, Vec::len);
    step("user list", &args, format!("{n} users"), secs);

    // While serving: eight connections add users; a backup of each kind meanwhile.
    say("backing up while the server takes writes");
    let served = Served::start(&data)?;
    let stop = Arc::new(AtomicBool::new(false));
    let added = Arc::new(AtomicU64::new(0));
    let w = writers(
        served.ldaps.clone(),
        data.join("tls/ca.pem"),
        8,
        stop.clone(),
        added.clone(),
    );
    std::thread::sleep(std::time::Duration::from_secs(2));
    // The writers' pace alone, for comparison with their pace during the backups.
    let quiet = Instant::now();
    let before = added.load(Ordering::Relaxed);
    std::thread::sleep(std::time::Duration::from_secs(3));
    let alone = added.load(Ordering::Relaxed) - before;
    let secs = quiet.elapsed().as_secs_f64();
    step(
        "8 connections adding users, no backup running",
        &[],
        format!("{:.0} adds/s", alone as f64 / secs),
        secs,
    );
    let live = dir.join("live");
    let before = added.load(Ordering::Relaxed);
    let args = [
        "domain",
        "backup",
        "offline",
        "-H",
        &d,
        "--targetdir",
        &p(&live),
        "--json",
    ];
    let (_, secs) = timed(&args)?;
    let during = added.load(Ordering::Relaxed) - before;
    step(
        "domain backup offline, served, 8 connections adding users",
        &args,
        format!("{:.0} adds/s meanwhile", during as f64 / secs),
        secs,
    );
    let ca = p(&data.join("tls/ca.pem"));
    let before = added.load(Ordering::Relaxed);
    let args = [
        "domain",
        "backup",
        "online",
        "--server",
        &served.ldaps,
        "-U",
        "SAMDOM\\Administrator",
        "-w",
        PASSWORD,
        "--cacert",
        &ca,
        "--targetdir",
        &p(&live),
        "--json",
    ];
    let (_, secs) = timed(&args)?;
    let during = added.load(Ordering::Relaxed) - before;
    step(
        "domain backup online over LDAPS, 8 connections adding users",
        &args,
        format!("{:.0} adds/s meanwhile", during as f64 / secs),
        secs,
    );
    stop.store(true, Ordering::Relaxed);
    w.join()
        .map_err(|_| anyhow::anyhow!("the writers panicked"))??;
    drop(served);
    Ok(Report {
        users: o.users,
        groups: o.groups,
        memberships,
        records,
        steps,
    })
}

/// The report as the Markdown table BENCHMARKS.md holds.
pub fn markdown(reports: &[Report]) -> String {
    let mut s = String::new();
    for r in reports {
        s.push_str(&format!(
            "{} users, {} groups, {} memberships ({} records)\n\n| step | time | detail |\n|---|---|---|\n",
            r.users, r.groups, r.memberships, r.records
        ));
        for st in &r.steps {
            s.push_str(&format!(
                "| {} | {:.2} s | {} |\n",
                st.name, st.seconds, st.detail
            ));
        }
        s.push('\n');
    }
    s
}
