//! `kauri traffic replay`: many concurrent conversations, each a client with its own
//! connections, sending what a model (or a recorded summary) plans at its times against
//! any domain controller, then the table of latencies per operation the Samba team reads,
//! with the offered and achieved rates above it and a verdict on whether the client or the
//! server set the pace.

mod conversation;
mod filter;
mod krb;
mod outcome;
mod setup;
pub(crate) mod udp;

use std::collections::{BTreeMap, HashMap};
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use anyhow::{bail, Context, Result};
use clap::Args;
use kauri_traffic::plan::{self, Plan, PlanOptions};
use kauri_traffic::random::Rng;
use kauri_traffic::run::{OpStats, RunReport, RUN_FORMAT};
use parking_lot::Mutex;

use crate::admin::target::Credentials;
use conversation::Tally;
use setup::{Account, Ctx};

/// Options of `kauri traffic replay`.
#[derive(Debug, Args)]
pub struct ReplayArgs {
    /// A model (JSON, Samba's version 2) or a summary (one packet per line) to replay.
    pub source: PathBuf,
    /// The domain controller: a host name or address (IPv6 in brackets).
    #[arg(long)]
    pub server: String,
    /// Its LDAP port (CLDAP pings go to the same port over UDP).
    #[arg(long, default_value_t = 389)]
    pub ldap_port: u16,
    /// Its Kerberos KDC port.
    #[arg(long, default_value_t = 88)]
    pub kdc_port: u16,
    /// Its DNS port.
    #[arg(long, default_value_t = 53)]
    pub dns_port: u16,
    #[command(flatten)]
    pub credentials: Credentials,
    /// How long to generate traffic for (`60s`, `2m`, `500ms`).
    #[arg(long, default_value = "60s", value_parser = parse_duration)]
    pub duration: Duration,
    /// Multiply the learned conversation rate by this factor.
    #[arg(long, conflicts_with = "target_ops")]
    pub scale: Option<f64>,
    /// Aim for this many operations a second instead (binds, searches, writes, pings,
    /// queries, Kerberos exchanges; not unbinds or the later steps of a SASL bind).
    #[arg(long)]
    pub target_ops: Option<f64>,
    /// Replay each conversation faster (or slower, below 1) than recorded.
    #[arg(long, default_value_t = 1.0)]
    pub replay_rate: f64,
    /// The chance (0 to 1) that a conversation waits instead of ending where the model
    /// would end it.
    #[arg(long, default_value_t = 0.0)]
    pub conversation_persistence: f64,
    /// Also send DNS queries at this rate (per second), as Samba's `--dns-rate`: a model's
    /// DNS counts plan none of their own.
    #[arg(long, default_value_t = 0.0)]
    pub dns_rate: f64,
    /// Authenticate as the accounts `kauri traffic populate` made, from its manifest
    /// (default `populate.json`). Without it every conversation is the -U account.
    #[arg(long, num_args = 0..=1, default_missing_value = "populate.json")]
    pub users_from_populate: Option<PathBuf>,
    /// Bind with Kerberos (GSS-SPNEGO) wherever a SASL bind is recorded, not only where
    /// the recording used Kerberos.
    #[arg(long)]
    pub prefer_kerberos: bool,
    /// Only read: skip recorded adds, modifies, deletes and renames (no scratch OU).
    #[arg(long)]
    pub read_only: bool,
    /// The seed of every random choice (same seed, same plan and choices).
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// A name for this run in reports (default: server and offered rate).
    #[arg(long)]
    pub label: Option<String>,
    /// Size limit sent with one-level and subtree searches.
    #[arg(long, default_value_t = 1000)]
    pub size_limit: i32,
    /// How long one operation may take before it counts as failed.
    #[arg(long, default_value = "10s", value_parser = parse_duration)]
    pub op_timeout: Duration,
    /// How long to wait for conversations still running at the end.
    #[arg(long, default_value = "10s", value_parser = parse_duration)]
    pub latency_timeout: Duration,
    /// Worker threads (default: one per core).
    #[arg(long)]
    pub threads: Option<usize>,
    /// Write the run as JSON to this file (what `kauri traffic report` reads).
    #[arg(short = 'o', long)]
    pub output: Option<PathBuf>,
    /// Write the per-operation table as CSV to this file.
    #[arg(long)]
    pub csv: Option<PathBuf>,
    /// Print the run as JSON instead of the table.
    #[arg(long)]
    pub json: bool,
}

/// Reads `60s`, `2m`, `500ms`, `1h` or a bare number of seconds.
pub fn parse_duration(s: &str) -> Result<Duration, String> {
    let s = s.trim();
    let (num, unit) = match s.find(|c: char| c.is_ascii_alphabetic()) {
        Some(i) => (&s[..i], &s[i..]),
        None => (s, "s"),
    };
    let n: f64 = num
        .trim()
        .parse()
        .map_err(|_| format!("{s:?} is not a duration (60s, 2m, 500ms)"))?;
    let secs = match unit {
        "ms" => n / 1000.0,
        "s" => n,
        "m" | "min" => n * 60.0,
        "h" => n * 3600.0,
        other => return Err(format!("unknown unit {other:?} (ms, s, m, h)")),
    };
    if !secs.is_finite() || secs < 0.0 {
        return Err(format!("{s:?} is not a duration"));
    }
    Ok(Duration::from_secs_f64(secs))
}

/// The accounts of a populated domain, from its manifest.
fn manifest_accounts(path: &std::path::Path) -> Result<Vec<Account>> {
    let text =
        std::fs::read_to_string(path).with_context(|| format!("reading {}", path.display()))?;
    let v: serde_json::Value = serde_json::from_str(&text)
        .with_context(|| format!("{} is not a populate manifest (JSON)", path.display()))?;
    let password = v
        .get("password")
        .and_then(|p| p.as_str())
        .context("the manifest names no password")?
        .to_string();
    let accounts = v
        .get("accounts")
        .and_then(|a| a.as_array())
        .context("the manifest lists no accounts")?;
    let mut out = Vec::new();
    for a in accounts {
        let sam = a
            .get("sam_account_name")
            .or_else(|| a.get("sam"))
            .and_then(|s| s.as_str());
        let dn = a.get("dn").and_then(|s| s.as_str());
        let upn = a.get("upn").and_then(|s| s.as_str());
        if let Some(sam) = sam {
            out.push(Account {
                sam: sam.to_string(),
                bind_name: dn.or(upn).unwrap_or(sam).to_string(),
                password: password.clone(),
            });
        }
    }
    if out.is_empty() {
        bail!("{} lists no accounts with a password", path.display());
    }
    Ok(out)
}

/// The -U account as a conversation account (`DOMAIN\name`, a UPN or a DN).
fn admin_account(name: &str, password: &str) -> Account {
    let sam = if let Some((_, n)) = name.split_once('\\') {
        n.to_string()
    } else if let Some((n, _)) = name.split_once('@') {
        n.to_string()
    } else if let Ok(dn) = kauri_db::Dn::parse(name) {
        dn.rdn()
            .and_then(|r| r.avas().first().map(|a| a.value.clone()))
            .unwrap_or_else(|| name.to_string())
    } else {
        name.to_string()
    };
    Account {
        sam,
        bind_name: name.to_string(),
        password: password.to_string(),
    }
}

/// Loads the plan from a model or a summary.
fn make_plan(a: &ReplayArgs) -> Result<(Plan, String)> {
    let text = std::fs::read_to_string(&a.source)
        .with_context(|| format!("reading {}", a.source.display()))?;
    let opts = PlanOptions {
        duration: a.duration.as_secs_f64(),
        scale: a.scale,
        target_rate: a.target_ops,
        replay_rate: a.replay_rate,
        persistence: a.conversation_persistence,
        seed: a.seed,
    };
    let name = a.source.display().to_string();
    let (mut plan, name) = if text.trim_start().starts_with('{') {
        let model = kauri_traffic::model::Model::parse(&text)
            .with_context(|| format!("reading the model {name}"))?;
        let mut p = plan::plan_from_model(&model, &opts).context("planning from the model")?;
        // A model's rate counts packets (unbinds, SASL steps, Kerberos hints too);
        // --target-ops asks for operations, so plan again at the rate that gives them.
        let ops = operations(&p);
        if let (Some(target), true) = (a.target_ops, ops > 0) {
            let per_packet = ops as f64 / p.packets.max(1) as f64;
            if per_packet < 1.0 {
                let opts = PlanOptions {
                    target_rate: Some(target / per_packet),
                    ..opts
                };
                p = plan::plan_from_model(&model, &opts).context("planning from the model")?;
            }
        }
        (p, name)
    } else {
        let packets = kauri_traffic::summary::read(text.as_bytes())
            .with_context(|| format!("reading the summary {name}"))?;
        let p = plan::plan_from_summary(&packets, &opts).context("planning from the summary")?;
        (p, name)
    };
    if a.dns_rate > 0.0 {
        plan::add_dns_queries(&mut plan, a.dns_rate, a.seed).context("planning DNS queries")?;
    }
    Ok((plan, name))
}

/// The timed operations a plan holds.
fn operations(plan: &Plan) -> usize {
    plan.conversations
        .iter()
        .flat_map(|c| &c.packets)
        .filter(|p| conversation::is_operation(p))
        .count()
}

fn cpu_seconds() -> f64 {
    // SAFETY: getrusage only writes the struct it is given.
    let mut u: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: RUSAGE_SELF with a valid pointer.
    if unsafe { libc::getrusage(libc::RUSAGE_SELF, &mut u) } != 0 {
        return 0.0;
    }
    let t = |tv: libc::timeval| tv.tv_sec as f64 + tv.tv_usec as f64 / 1e6;
    t(u.ru_utime) + t(u.ru_stime)
}

/// Runs `kauri traffic replay`.
pub fn run(a: &ReplayArgs) -> Result<()> {
    if a.scale.is_some_and(|s| !(s > 0.0 && s.is_finite())) {
        bail!("--scale must be a positive number");
    }
    if a.target_ops.is_some_and(|s| !(s > 0.0 && s.is_finite())) {
        bail!("--target-ops must be a positive number");
    }
    if !(0.0..=1.0).contains(&a.conversation_persistence) {
        bail!("--conversation-persistence is a chance between 0 and 1");
    }
    let (plan, source) = make_plan(a)?;
    let threads = a
        .threads
        .unwrap_or_else(|| std::thread::available_parallelism().map_or(2, |n| n.get()))
        .max(1);
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(threads)
        .enable_all()
        .build()
        .context("starting the replay's runtime")?;
    let report = rt.block_on(replay(a, plan, source, threads))?;
    if let Some(p) = &a.output {
        let json = serde_json::to_string_pretty(&report)?;
        std::fs::write(p, json + "\n").with_context(|| format!("writing {}", p.display()))?;
    }
    if let Some(p) = &a.csv {
        std::fs::write(p, report.csv()).with_context(|| format!("writing {}", p.display()))?;
    }
    if a.json {
        println!("{}", serde_json::to_string_pretty(&report)?);
    } else {
        print!("{}", report.table());
    }
    Ok(())
}

async fn replay(a: &ReplayArgs, plan: Plan, source: String, threads: usize) -> Result<RunReport> {
    let host = a.server.trim();
    let addr = |port: u16| format!("{host}:{port}");
    let url = format!("ldap://{}", addr(a.ldap_port));
    let say = |s: &str| {
        if !a.json {
            eprintln!("{s}");
        }
    };
    let mut rng = Rng::new(a.seed);
    let (user, password) = match a.credentials.account()? {
        Some(x) => x,
        None => bail!("give an account that can read the domain with -U (and its password)"),
    };
    let mut admin = crate::admin::remote::connect(&url, &a.credentials).await?;
    let facts = setup::domain_facts(&mut admin).await?;
    say(&format!(
        "replaying {source} against {url} ({}), {} conversations, {} packets planned over {:.0} s",
        facts.dns_domain,
        plan.conversations.len(),
        plan.packets,
        plan.duration
    ));
    let sampling = std::time::Instant::now();
    let (dns_by_shape, values, swept) = setup::sample(&mut admin, &facts, &mut rng).await?;
    say(&format!(
        "sampled {swept} entries in {:.1} s: {} DN shapes, {} filter values",
        sampling.elapsed().as_secs_f64(),
        dns_by_shape.len(),
        values.len()
    ));
    let mut accounts = match &a.users_from_populate {
        Some(p) => manifest_accounts(p)?,
        None => vec![admin_account(&user, &password)],
    };
    // A simple bind names a DN, a UPN or DOMAIN\name; a bare account name is made the last.
    for acct in &mut accounts {
        if !acct.bind_name.contains(['=', '@', '\\']) {
            acct.bind_name = format!("{}\\{}", facts.netbios, acct.bind_name);
        }
    }
    let scratch = if a.read_only {
        None
    } else {
        let tag = format!("{}-{}", a.seed, std::process::id());
        Some(setup::make_scratch(&mut admin, &facts.base_dn, &tag).await?)
    };
    let dns_names = setup::dns_names(&facts, &values, &mut rng);
    let mut ctx = Ctx {
        ldap_addr: addr(a.ldap_port),
        kdc_addr: addr(a.kdc_port),
        dns_addr: addr(a.dns_port),
        realm: facts.dns_domain.to_ascii_uppercase(),
        dns_domain: facts.dns_domain.clone(),
        netbios: facts.netbios.clone(),
        base_dn: facts.base_dn.clone(),
        dc_host: facts.dc_host.clone(),
        dns_by_shape,
        values,
        dns_names,
        accounts,
        services: Default::default(),
        scratch: scratch.clone(),
        size_limit: a.size_limit,
        op_timeout: a.op_timeout,
        prefer_kerberos: a.prefer_kerberos,
        keys: Mutex::new(HashMap::new()),
    };
    ctx.services = setup::probe(&ctx).await;
    say(&format!(
        "services: CLDAP {}, DNS {}, KDC {}; {} account(s)",
        yes(ctx.services.cldap),
        yes(ctx.services.dns),
        yes(ctx.services.kdc),
        ctx.accounts.len()
    ));
    let ctx = Arc::new(ctx);

    let planned_conversations = plan.conversations.len() as u64;
    let planned_ops = operations(&plan);
    let planned_operations = plan.packets;
    let cpu0 = cpu_seconds();
    let t0 = tokio::time::Instant::now() + Duration::from_millis(200);
    let wall0 = std::time::Instant::now();
    let total = Arc::new(Mutex::new(Tally::default()));
    let mut handles = Vec::with_capacity(plan.conversations.len());
    let mut convs = plan.conversations;
    convs.sort_by(|x, y| x.start.total_cmp(&y.start));
    let started = kauri_audit::time::Timestamp::now().to_rfc3339();
    for conv in convs {
        let start = t0 + Duration::from_secs_f64(conv.start.max(0.0));
        tokio::time::sleep_until(start).await;
        let ctx = ctx.clone();
        let total = total.clone();
        let account = ctx.account(conv.id).cloned();
        let crng = rng.fork(conv.id);
        handles.push(tokio::spawn(async move {
            let t = conversation::run(&ctx, &conv, account, crng, t0).await;
            total.lock().merge(t);
        }));
    }
    let end = t0 + Duration::from_secs_f64(plan.duration) + a.latency_timeout;
    let mut unfinished = 0u64;
    for h in handles {
        match tokio::time::timeout_at(end, h).await {
            Ok(_) => {}
            Err(_) => unfinished += 1,
        }
    }
    let wall = wall0.elapsed().as_secs_f64().max(1e-6);
    let cpu = (cpu_seconds() - cpu0).max(0.0);
    if let Some(dn) = &scratch {
        if let Err(e) = setup::remove_scratch(&mut admin, dn).await {
            eprintln!("kauri: {e:#}");
        }
    }
    let _ = admin.unbind().await;

    let mut tally = std::mem::take(&mut *total.lock());
    let duration = tally.last_done.max(plan.duration).max(1e-6);
    let mut operations: Vec<OpStats> = tally
        .kinds
        .iter_mut()
        .map(|((p, o), k)| {
            let desc = conversation::describe(p, o);
            OpStats::from_latencies(p, o, &desc, k.failed, &mut k.latencies)
        })
        .collect();
    operations.sort_by(|x, y| {
        (
            x.protocol.as_str(),
            x.opcode.parse::<i64>().unwrap_or(i64::MAX),
        )
            .cmp(&(
                y.protocol.as_str(),
                y.opcode.parse::<i64>().unwrap_or(i64::MAX),
            ))
    });
    let successful: u64 = operations.iter().map(|o| o.count - o.failed).sum();
    let failed: u64 = operations.iter().map(|o| o.failed).sum();
    let sent = successful + failed;
    let p95_miss = percentile(&mut tally.misses, 0.95);
    let max_miss = tally.misses.last().copied().unwrap_or(0.0);
    let p95_lag = percentile(&mut tally.lags, 0.95);
    let client_cpu = cpu / (wall * threads as f64);
    // Late wake-ups with a mostly idle client mean the machine is busy (a server on the
    // same cores), not that the client is the limit.
    let client_bound = client_cpu > 0.85 || (p95_lag > 0.005 && client_cpu > 0.5);
    if p95_lag > 0.005 && !client_bound {
        say(&format!(
            "the replayer woke late (95% client lag {:.1} ms) with its own CPU at {:.0} %: \
             the machine is busy, is the server on the same cores?",
            p95_lag * 1000.0,
            client_cpu * 100.0
        ));
    }
    let skipped: u64 = tally.skipped.values().sum();
    let mut failures: BTreeMap<String, u64> = tally.failures.into_iter().collect();
    for (what, n) in &tally.skipped {
        say(&format!("skipped {n} planned packet(s): {what}"));
    }
    failures.retain(|_, n| *n > 0);
    let offered_rate = planned_ops as f64 / plan.duration.max(1e-6);
    let _ = sent;
    let achieved_rate = successful as f64 / duration;
    let label = a
        .label
        .clone()
        .unwrap_or_else(|| format!("{host} {:.0}/s", offered_rate));
    Ok(RunReport {
        version: RUN_FORMAT,
        label,
        server: url,
        started,
        source,
        duration,
        offered_rate,
        achieved_rate,
        planned_conversations,
        planned_operations,
        conversations: planned_conversations - unfinished,
        unfinished_conversations: unfinished,
        successful,
        failed,
        skipped,
        failures,
        max_sleep_miss: max_miss,
        p95_sleep_miss: p95_miss,
        p95_client_lag: p95_lag,
        client_cpu,
        client_bound,
        operations,
    })
}

/// The `q` quantile of `v` (sorted in place); 0 when empty.
fn percentile(v: &mut [f64], q: f64) -> f64 {
    v.sort_by(f64::total_cmp);
    if v.is_empty() {
        return 0.0;
    }
    let i = ((q * v.len() as f64).ceil() as usize).clamp(1, v.len()) - 1;
    v[i]
}

fn yes(b: bool) -> &'static str {
    if b {
        "yes"
    } else {
        "no"
    }
}
