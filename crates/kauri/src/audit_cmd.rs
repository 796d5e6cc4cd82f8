//! `kauri audit`: the audit log read back, filtered, one line per event (or the stored
//! JSON lines), optionally following it as it grows; and `kauri bench audit`: how many
//! events per second the writer sustains into a real file.

use std::collections::VecDeque;
use std::io::Write;
use std::path::PathBuf;
use std::time::{Duration, Instant};

use anyhow::{Context, Result};
use kauri_audit::config::default_log_path;
use kauri_audit::reader::{read, Filter, Follower, LogSet, ReadStats, Record};
use kauri_audit::{AuditConfig, AuditEvent, Auditor, Category, Outcome, Timestamp};

/// How often `--follow` looks for new lines.
const FOLLOW_POLL: Duration = Duration::from_millis(200);

/// `kauri audit`'s options.
#[derive(Debug, clap::Args)]
pub struct AuditOptions {
    /// The data folder whose log to read (its `audit/` folder; /var/lib/kauri for the
    /// service user).
    #[arg(short = 'H', long = "data", default_value_os_t = kauri::paths::default_data())]
    pub data: PathBuf,
    /// The log to read instead: its folder or its current file (for `[audit] path`
    /// elsewhere, or a copy).
    #[arg(long, value_name = "FILE_OR_DIR")]
    pub log: Option<PathBuf>,
    /// Only events by this account: its name, DN, DOMAIN\name, UPN or SID.
    #[arg(long)]
    pub user: Option<String>,
    /// Only events on this object or an object below it.
    #[arg(long)]
    pub dn: Option<String>,
    /// Only these Windows event IDs (repeat for several).
    #[arg(long = "event", value_name = "ID")]
    pub events: Vec<u32>,
    /// Only these categories (repeat for several): authentication, token, change,
    /// password, group, account, audit.
    #[arg(long, value_name = "CATEGORY")]
    pub category: Vec<Category>,
    /// Only failures.
    #[arg(long)]
    pub failures: bool,
    /// From this time: RFC 3339, YYYY-MM-DD (UTC), or that long ago (30m, 1h, 7d).
    #[arg(long, value_name = "TIME")]
    pub since: Option<String>,
    /// Before this time (same forms as --since).
    #[arg(long, value_name = "TIME")]
    pub until: Option<String>,
    /// Keep printing events as they are written (Ctrl-C to stop).
    #[arg(short = 'f', long)]
    pub follow: bool,
    /// Print the events as stored: one JSON object per line.
    #[arg(long)]
    pub json: bool,
    /// Only the last N matching events (with --follow: of those written so far).
    #[arg(short = 'n', long, value_name = "N")]
    pub limit: Option<usize>,
}

impl AuditOptions {
    fn filter(&self) -> Result<Filter> {
        let now = Timestamp::now();
        let time = |s: &Option<String>| -> Result<Option<Timestamp>> {
            s.as_deref()
                .map(|s| Timestamp::parse_filter(s, now))
                .transpose()
                .map_err(Into::into)
        };
        Ok(Filter {
            user: self.user.clone(),
            dn: self.dn.clone(),
            event_ids: self.events.clone(),
            categories: self.category.clone(),
            outcome: self.failures.then_some(Outcome::Failure),
            since: time(&self.since)?,
            until: time(&self.until)?,
        })
    }
}

/// Where output goes: straight out, or into a window of the last N.
struct Printer {
    json: bool,
    window: Option<(usize, VecDeque<Record>)>,
    out: std::io::StdoutLock<'static>,
    error: Option<std::io::Error>,
}

impl Printer {
    fn take(&mut self, r: &Record) -> bool {
        if let Some((n, w)) = &mut self.window {
            if *n == 0 {
                return true;
            }
            if w.len() == *n {
                w.pop_front();
            }
            w.push_back(r.clone());
            return true;
        }
        self.print(r)
    }

    fn print(&mut self, r: &Record) -> bool {
        let res = if self.json {
            writeln!(self.out, "{}", r.line)
        } else {
            writeln!(self.out, "{}", human_line(&r.event))
        };
        match res {
            Ok(()) => true,
            Err(e) => {
                self.error = Some(e);
                false
            }
        }
    }

    /// Prints the window and from now on prints directly.
    fn release(&mut self) -> bool {
        if let Some((_, w)) = self.window.take() {
            for r in &w {
                if !self.print(r) {
                    return false;
                }
            }
        }
        self.flush()
    }

    fn flush(&mut self) -> bool {
        if let Err(e) = self.out.flush() {
            self.error = Some(e);
            return false;
        }
        true
    }

    fn check(&mut self) -> Result<()> {
        match self.error.take() {
            // A bare I/O error: main() ends quietly on a closed pipe.
            Some(e) => Err(e.into()),
            None => Ok(()),
        }
    }
}

/// `kauri audit`.
pub fn run(o: &AuditOptions) -> Result<()> {
    let path = o.log.clone().unwrap_or_else(|| default_log_path(&o.data));
    let set = LogSet::open(&path).context("reading the audit log")?;
    let filter = o.filter()?;
    let mut p = Printer {
        json: o.json,
        window: o.limit.map(|n| (n, VecDeque::new())),
        out: std::io::stdout().lock(),
        error: None,
    };
    if !o.follow {
        let stats = read(&set, &filter, |r| p.take(r))?;
        p.release();
        p.check()?;
        report_skipped(&stats);
        return Ok(());
    }
    let mut stats = ReadStats::default();
    let mut fl = Follower::new(set)?;
    let go_on = fl.history(&filter, &mut stats, &mut |r: &Record| p.take(r))?;
    report_skipped(&stats);
    if !go_on || !p.release() {
        return p.check();
    }
    loop {
        let before = stats.skipped;
        if !fl.poll(&filter, &mut stats, &mut |r: &Record| p.print(r))? {
            break;
        }
        if stats.skipped > before {
            report_skipped(&ReadStats {
                skipped: stats.skipped - before,
                ..stats
            });
        }
        if !p.flush() {
            break;
        }
        std::thread::sleep(FOLLOW_POLL);
    }
    p.check()
}

fn report_skipped(stats: &ReadStats) {
    if stats.skipped > 0 {
        eprintln!(
            "kauri: {} line(s) of the audit log are not events (damaged?); skipped",
            stats.skipped
        );
    }
}

/// One event on one line: time, event ID and its short title (or the category and
/// action), outcome, then who, what, from where.
pub fn human_line(e: &AuditEvent) -> String {
    let what = match e.event_id.and_then(kauri_audit::lookup) {
        Some(info) => format!("{:>4} {:<28}", info.id, info.short),
        None => match e.event_id {
            Some(id) => format!("{id:>4} {:<28}", format!("{}/{}", e.category, e.action)),
            None => format!("   - {:<28}", format!("{}/{}", e.category, e.action)),
        },
    };
    let mut s = format!("{} {what} {:<7}", e.time, e.outcome.as_str());
    let mut field = |name: &str, v: &str| {
        s.push(' ');
        s.push_str(name);
        s.push('=');
        if v.is_empty() || v.contains([' ', '"', '=']) {
            s.push_str(&format!("{v:?}"));
        } else {
            s.push_str(v);
        }
    };
    if let Some(u) = &e.user {
        field("user", u);
    }
    if let Some(dn) = &e.dn {
        field("dn", dn);
    }
    if let Some(m) = &e.member {
        field("member", m);
    }
    if let Some(r) = &e.remote {
        field("from", r);
    }
    if !e.service.is_empty() {
        field("service", &e.service);
    }
    if let Some(m) = &e.mechanism {
        field("mech", m);
    }
    if !e.attributes.is_empty() {
        field("attrs", &e.attributes.join(","));
    }
    if let Some(n) = e.dropped {
        field("dropped", &n.to_string());
    }
    if let Some(c) = e.result_code {
        field("result", &c.to_string());
    }
    if let Some(r) = &e.reason {
        field("reason", r);
    }
    s
}

/// `kauri bench audit`'s measurements, one run.
#[derive(Debug, Clone, serde::Serialize)]
pub struct BenchReport {
    /// How events were offered: `flood` (one thread, as fast as it can, never waiting:
    /// what the log does when overrun) or `paced` (the thread waits whenever the queue
    /// is a quarter full: what the writer sustains without dropping).
    pub run: &'static str,
    /// Events offered to the log.
    pub events: u64,
    /// Events written to the file.
    pub written: u64,
    /// Events dropped (the queue was full).
    pub dropped: u64,
    /// The queue's size (the default's).
    pub buffer_events: usize,
    /// From the first event offered until all were written and synced.
    pub seconds: f64,
    /// Events written per second.
    pub events_per_sec: f64,
    /// Megabytes (10^6 bytes) of log written per second.
    pub mb_per_sec: f64,
    /// Bytes written.
    pub bytes: u64,
    /// Mean bytes per line.
    pub bytes_per_event: f64,
    /// What building and offering one event cost the caller, in nanoseconds (flood
    /// run; in the paced run it includes the waits).
    pub caller_ns_per_event: f64,
    /// Files the log was in at the end (rotated ones included).
    pub files: usize,
    /// `debug` or `release`: which build measured.
    pub build: &'static str,
}

/// The `i`th benchmark event: binds, failed binds, modifies and member adds in turn,
/// with the fields the server fills in.
fn bench_event(i: u64) -> AuditEvent {
    let dn = |i: u64| format!("CN=User {i},OU=Staff,DC=samdom,DC=example,DC=com");
    match i % 4 {
        0 => AuditEvent::logon(Outcome::Success)
            .with_service("ldaps")
            .with_session(i)
            .with_remote("192.0.2.17:50321")
            .with_user(dn(i))
            .with_user_sid(format!(
                "S-1-5-21-3623811015-3361044348-30300820-{}",
                1000 + i
            ))
            .with_mechanism("simple")
            .with_duration(Duration::from_micros(180)),
        1 => AuditEvent::logon(Outcome::Failure)
            .with_service("ldap")
            .with_session(i)
            .with_remote("198.51.100.4:41000")
            .with_user(format!("SAMDOM\\user{i}"))
            .with_mechanism("GSS-SPNEGO/NTLM")
            .with_result_code(49)
            .with_reason("data 52e"),
        2 => AuditEvent::change("modify", Outcome::Success)
            .with_service("ldap")
            .with_session(i)
            .with_user("CN=Administrator,CN=Users,DC=samdom,DC=example,DC=com")
            .with_dn(dn(i))
            .with_attributes(["description", "telephoneNumber"])
            .with_usn(10_000 + i),
        _ => AuditEvent::new(Category::Group, "member_add", Outcome::Success)
            .with_event_id(4728)
            .with_service("ldap")
            .with_session(i)
            .with_user("CN=Administrator,CN=Users,DC=samdom,DC=example,DC=com")
            .with_dn("CN=Staff,OU=Groups,DC=samdom,DC=example,DC=com")
            .with_member(dn(i))
            .with_usn(10_000 + i),
    }
}

/// `kauri bench audit`: `events` events offered into a log in a temporary folder with
/// the default settings, twice: flooding, then paced. The clock stops when the last is
/// written and synced.
pub fn bench(events: u64) -> Result<Vec<BenchReport>> {
    Ok(vec![bench_run(events, false)?, bench_run(events, true)?])
}

fn bench_run(events: u64, paced: bool) -> Result<BenchReport> {
    let tmp = tempfile::tempdir().context("creating a temporary folder")?;
    let cfg = AuditConfig::default();
    let auditor = Auditor::start(&cfg, tmp.path())?;
    let quarter = (cfg.buffer_events as u64 / 4).max(1);
    let start = Instant::now();
    for i in 0..events {
        auditor.log(bench_event(i));
        if paced && (i + 1) % quarter == 0 {
            // Wait until the writer has no more than a quarter of the queue left.
            loop {
                let s = auditor.stats();
                if s.written + s.dropped + quarter > i {
                    break;
                }
                std::thread::sleep(Duration::from_micros(200));
            }
        }
    }
    let offered = start.elapsed();
    auditor.flush();
    let seconds = start.elapsed().as_secs_f64();
    let stats = auditor.stats();
    let files = auditor
        .log_path()
        .map(LogSet::for_file)
        .map(|s| s.files().map(|f| f.len()))
        .transpose()?
        .unwrap_or(0);
    auditor.shutdown();
    Ok(BenchReport {
        run: if paced { "paced" } else { "flood" },
        events,
        written: stats.written,
        dropped: stats.dropped,
        buffer_events: cfg.buffer_events,
        seconds,
        events_per_sec: stats.written as f64 / seconds,
        mb_per_sec: stats.bytes as f64 / 1e6 / seconds,
        bytes: stats.bytes,
        bytes_per_event: stats.bytes as f64 / stats.written.max(1) as f64,
        caller_ns_per_event: offered.as_nanos() as f64 / events.max(1) as f64,
        files,
        build: if cfg!(debug_assertions) {
            "debug"
        } else {
            "release"
        },
    })
}

/// The report as the Markdown table BENCHMARKS.md holds.
pub fn markdown(reports: &[BenchReport]) -> String {
    let mut s = String::from(
        "| run | events | written | dropped | events/s | MB/s | bytes/event | caller ns/event | files | build |\n\
         |---|---|---|---|---|---|---|---|---|---|\n",
    );
    for r in reports {
        s.push_str(&format!(
            "| {} | {} | {} | {} | {:.0} | {:.1} | {:.0} | {:.0} | {} | {} |\n",
            r.run,
            r.events,
            r.written,
            r.dropped,
            r.events_per_sec,
            r.mb_per_sec,
            r.bytes_per_event,
            r.caller_ns_per_event,
            r.files,
            r.build
        ));
    }
    s
}
