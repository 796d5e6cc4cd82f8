//! The Prometheus metrics endpoint: a plain HTTP listener (on localhost by default) that
//! answers every request with the counters in Prometheus' text format — the build, start
//! time and listeners, requests by operation and outcome (and over the last minute),
//! latency histograms, connections, undecodable messages, unindexed searches, commits and
//! their batch sizes, the highest committed USN, the database file's size and free pages,
//! and the last backup. [`parse`] reads that text back, for `kauri status`.

use std::fmt::Write as _;
use std::sync::atomic::Ordering;
use std::sync::Arc;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpListener;

use kauri_kv::Backend as _;

use crate::ctx::{Ctx, LATENCY_BUCKETS_US, OP_NAMES};
use crate::writer::BATCH_BUCKETS;

/// The metrics text for the current counters.
pub fn render(ctx: &Ctx) -> String {
    let c = &ctx.counters;
    let mut s = String::new();
    let _ = writeln!(
        s,
        "# HELP kauri_build_info The release and the storage format this server writes."
    );
    let _ = writeln!(s, "# TYPE kauri_build_info gauge");
    let _ = writeln!(
        s,
        "kauri_build_info{{version=\"{}\",storage_format=\"{}\"}} 1",
        escape(env!("CARGO_PKG_VERSION")),
        kauri_db::db::STORE_FORMAT
    );
    let _ = writeln!(
        s,
        "# HELP kauri_start_time_seconds When the server started, in Unix seconds."
    );
    let _ = writeln!(s, "# TYPE kauri_start_time_seconds gauge");
    let _ = writeln!(s, "kauri_start_time_seconds {}", ctx.status.started());
    let _ = writeln!(
        s,
        "# HELP kauri_listener_info A bound listener: the service and its address."
    );
    let _ = writeln!(s, "# TYPE kauri_listener_info gauge");
    for l in ctx.status.listeners() {
        let _ = writeln!(
            s,
            "kauri_listener_info{{service=\"{}\",address=\"{}\"}} 1",
            escape(l.service),
            escape(&l.address)
        );
    }
    let _ = writeln!(
        s,
        "# HELP kauri_ldap_requests_total LDAP requests answered, by operation and outcome."
    );
    let _ = writeln!(s, "# TYPE kauri_ldap_requests_total counter");
    for (name, st) in OP_NAMES.iter().zip(&c.finished) {
        let _ = writeln!(
            s,
            "kauri_ldap_requests_total{{op=\"{name}\",outcome=\"success\"}} {}",
            st.ok.load(Ordering::Relaxed)
        );
        let _ = writeln!(
            s,
            "kauri_ldap_requests_total{{op=\"{name}\",outcome=\"error\"}} {}",
            st.failed.load(Ordering::Relaxed)
        );
    }
    let _ = writeln!(s, "# HELP kauri_ldap_request_duration_seconds Time from reading a request to its final response.");
    let _ = writeln!(s, "# TYPE kauri_ldap_request_duration_seconds histogram");
    for (name, st) in OP_NAMES.iter().zip(&c.finished) {
        let mut cumulative = 0u64;
        for (i, bound) in LATENCY_BUCKETS_US.iter().enumerate() {
            cumulative += st.buckets.get(i).map_or(0, |b| b.load(Ordering::Relaxed));
            let _ = writeln!(
                s,
                "kauri_ldap_request_duration_seconds_bucket{{op=\"{name}\",le=\"{}\"}} {cumulative}",
                *bound as f64 / 1e6
            );
        }
        cumulative += st
            .buckets
            .get(LATENCY_BUCKETS_US.len())
            .map_or(0, |b| b.load(Ordering::Relaxed));
        let _ = writeln!(
            s,
            "kauri_ldap_request_duration_seconds_bucket{{op=\"{name}\",le=\"+Inf\"}} {cumulative}"
        );
        let _ = writeln!(
            s,
            "kauri_ldap_request_duration_seconds_sum{{op=\"{name}\"}} {}",
            st.sum_us.load(Ordering::Relaxed) as f64 / 1e6
        );
        let _ = writeln!(
            s,
            "kauri_ldap_request_duration_seconds_count{{op=\"{name}\"}} {cumulative}"
        );
    }
    let gauge = |s: &mut String, name: &str, help: &str, kind: &str, v: u64| {
        let _ = writeln!(s, "# HELP {name} {help}");
        let _ = writeln!(s, "# TYPE {name} {kind}");
        let _ = writeln!(s, "{name} {v}");
    };
    gauge(
        &mut s,
        "kauri_ldap_connections_open",
        "Connections open now.",
        "gauge",
        c.open_connections.load(Ordering::Relaxed),
    );
    gauge(
        &mut s,
        "kauri_ldap_connections_total",
        "Connections accepted.",
        "counter",
        c.connections.load(Ordering::Relaxed),
    );
    gauge(
        &mut s,
        "kauri_ldap_bad_messages_total",
        "Messages that could not be decoded or framed.",
        "counter",
        c.bad_messages.load(Ordering::Relaxed),
    );
    gauge(
        &mut s,
        "kauri_cldap_answered_total",
        "CLDAP datagrams answered.",
        "counter",
        c.cldap_answered.load(Ordering::Relaxed),
    );
    gauge(
        &mut s,
        "kauri_cldap_dropped_total",
        "CLDAP datagrams dropped (malformed, not a root DSE search, or for another domain).",
        "counter",
        c.cldap_dropped.load(Ordering::Relaxed),
    );
    gauge(
        &mut s,
        "kauri_db_unindexed_searches_total",
        "Searches no index could narrow.",
        "counter",
        ctx.db.unindexed_searches(),
    );
    gauge(
        &mut s,
        "kauri_db_highest_committed_usn",
        "The highest committed update sequence number.",
        "gauge",
        ctx.db.highest_committed_usn(),
    );
    ctx.admission
        .counters()
        .render("ldap", ctx.admission.open(), &mut s);
    let w = ctx.writer.stats();
    gauge(
        &mut s,
        "kauri_writer_commits_total",
        "Write transactions committed.",
        "counter",
        w.commits.load(Ordering::Relaxed),
    );
    let _ = writeln!(
        s,
        "# HELP kauri_writer_batch_size Requests per committed write transaction."
    );
    let _ = writeln!(s, "# TYPE kauri_writer_batch_size histogram");
    let mut cumulative = 0u64;
    for (i, bound) in BATCH_BUCKETS.iter().enumerate() {
        cumulative += w
            .batch_buckets
            .get(i)
            .map_or(0, |b| b.load(Ordering::Relaxed));
        let _ = writeln!(
            s,
            "kauri_writer_batch_size_bucket{{le=\"{bound}\"}} {cumulative}"
        );
    }
    cumulative += w
        .batch_buckets
        .get(BATCH_BUCKETS.len())
        .map_or(0, |b| b.load(Ordering::Relaxed));
    let _ = writeln!(
        s,
        "kauri_writer_batch_size_bucket{{le=\"+Inf\"}} {cumulative}"
    );
    let _ = writeln!(
        s,
        "kauri_writer_batch_size_sum {}",
        w.requests.load(Ordering::Relaxed)
    );
    let _ = writeln!(s, "kauri_writer_batch_size_count {cumulative}");
    gauge(
        &mut s,
        "kauri_ldap_requests_last_minute",
        "LDAP requests answered in the last 60 seconds.",
        "gauge",
        c.recent.last_minute(),
    );
    match ctx.db.kv().info() {
        Ok(info) => {
            gauge(
                &mut s,
                "kauri_db_size_bytes",
                "Size of the database file.",
                "gauge",
                info.size_on_disk,
            );
            gauge(
                &mut s,
                "kauri_db_map_size_bytes",
                "How far the database file may grow before its map is enlarged.",
                "gauge",
                info.map_size,
            );
            if let Some(free) = info.free_pages {
                gauge(
                    &mut s,
                    "kauri_db_free_pages",
                    "Pages of the database file free for reuse (LMDB's freelist).",
                    "gauge",
                    free,
                );
            }
        }
        Err(e) => tracing::warn!(error = %e, "database size not reported"),
    }
    gauge(
        &mut s,
        "kauri_last_backup_time_seconds",
        "When the last backup of this data folder completed, in Unix seconds (0: none known).",
        "gauge",
        ctx.status.last_backup().unwrap_or(0),
    );
    s
}

/// A label value as the text format writes it: backslash, double quote and line feed
/// escaped.
fn escape(v: &str) -> String {
    let mut out = String::with_capacity(v.len());
    for ch in v.chars() {
        match ch {
            '\\' => out.push_str("\\\\"),
            '"' => out.push_str("\\\""),
            '\n' => out.push_str("\\n"),
            c => out.push(c),
        }
    }
    out
}

/// Label names and values, in the order written.
pub type Labels = Vec<(String, String)>;

/// One sample of the text format: a metric's name, its labels and its value.
#[derive(Debug, Clone, PartialEq)]
pub struct Sample {
    /// The metric's name, with any `_bucket`/`_sum`/`_count` suffix.
    pub name: String,
    /// Label names and values, in the order written.
    pub labels: Labels,
    /// The value.
    pub value: f64,
}

impl Sample {
    /// The value of label `name`, if the sample has it.
    pub fn label(&self, name: &str) -> Option<&str> {
        self.labels
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.as_str())
    }
}

/// Why metrics text could not be read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("metrics line {line}: {reason}")]
pub struct ParseError {
    /// The line, counted from 1.
    pub line: usize,
    /// What is wrong with it.
    pub reason: String,
}

/// Reads Prometheus' text format (version 0.0.4): every sample, in order; comments
/// (`# HELP`, `# TYPE`) and blank lines are skipped, and a timestamp after the value is
/// ignored.
pub fn parse(text: &str) -> Result<Vec<Sample>, ParseError> {
    let mut out = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        out.push(parse_line(line).map_err(|reason| ParseError {
            line: i + 1,
            reason,
        })?);
    }
    Ok(out)
}

fn parse_line(line: &str) -> Result<Sample, String> {
    let name_end = line
        .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_' || c == ':'))
        .unwrap_or(line.len());
    let name = &line[..name_end];
    if name.is_empty() || name.starts_with(|c: char| c.is_ascii_digit()) {
        return Err("no metric name".into());
    }
    let mut rest = &line[name_end..];
    let mut labels = Vec::new();
    if let Some(inner) = rest.strip_prefix('{') {
        let (parsed, after) = parse_labels(inner)?;
        labels = parsed;
        rest = after;
    }
    let mut fields = rest.split_whitespace();
    let value = fields.next().ok_or("no value")?;
    let value = match value {
        "+Inf" | "Inf" => f64::INFINITY,
        "-Inf" => f64::NEG_INFINITY,
        "NaN" => f64::NAN,
        v => v.parse().map_err(|_| format!("{v:?} is not a number"))?,
    };
    if let Some(ts) = fields.next() {
        ts.parse::<i64>()
            .map_err(|_| format!("{ts:?} is not a timestamp"))?;
    }
    if fields.next().is_some() {
        return Err("text after the timestamp".into());
    }
    Ok(Sample {
        name: name.to_string(),
        labels,
        value,
    })
}

/// Reads `name="value",…}` (after the opening brace); returns the labels and the text after
/// the closing brace.
fn parse_labels(mut s: &str) -> Result<(Labels, &str), String> {
    let mut labels = Vec::new();
    loop {
        s = s.trim_start();
        if let Some(after) = s.strip_prefix('}') {
            return Ok((labels, after));
        }
        let eq = s.find('=').ok_or("a label without a value")?;
        let name = s[..eq].trim();
        if name.is_empty() || !name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') {
            return Err(format!("{name:?} is not a label name"));
        }
        s = s[eq + 1..].trim_start();
        s = s.strip_prefix('"').ok_or("a label value not in quotes")?;
        let mut value = String::new();
        let mut chars = s.char_indices();
        let end = loop {
            match chars.next() {
                None => return Err("a label value without its closing quote".into()),
                Some((i, '"')) => break i,
                Some((_, '\\')) => match chars.next() {
                    Some((_, 'n')) => value.push('\n'),
                    Some((_, c @ ('\\' | '"'))) => value.push(c),
                    _ => return Err("a bad escape in a label value".into()),
                },
                Some((_, c)) => value.push(c),
            }
        };
        labels.push((name.to_string(), value));
        s = s[end + 1..].trim_start();
        if let Some(after) = s.strip_prefix(',') {
            s = after;
        } else if !s.starts_with('}') {
            return Err("labels not separated by commas".into());
        }
    }
}

/// Scrapes answered at once; more are closed unanswered (a scraper comes every few
/// seconds, so anything beyond this is not a scraper).
const MAX_SCRAPES: usize = 16;

/// Serves the metrics on `listener` until the task is dropped.
pub async fn serve(listener: TcpListener, ctx: Arc<Ctx>) {
    let scrapes = Arc::new(tokio::sync::Semaphore::new(MAX_SCRAPES));
    loop {
        let Ok((mut stream, _)) = listener.accept().await else {
            tokio::time::sleep(std::time::Duration::from_millis(50)).await;
            continue;
        };
        let Ok(permit) = scrapes.clone().try_acquire_owned() else {
            continue;
        };
        let ctx = ctx.clone();
        tokio::spawn(async move {
            let _permit = permit;
            // Read the request head (bounded in size and in time); any path gets the
            // metrics.
            let mut buf = [0u8; 4096];
            let mut got = 0;
            let head = async {
                while got < buf.len() {
                    match stream.read(&mut buf[got..]).await {
                        Ok(0) | Err(_) => break,
                        Ok(n) => {
                            got += n;
                            if buf[..got].windows(4).any(|w| w == b"\r\n\r\n") {
                                break;
                            }
                        }
                    }
                }
            };
            let _ = tokio::time::timeout(std::time::Duration::from_secs(5), head).await;
            // Rendering reads the database file's freelist: on a blocking thread.
            let Ok(body) = tokio::task::spawn_blocking(move || render(&ctx)).await else {
                return;
            };
            let head = format!(
                "HTTP/1.1 200 OK\r\ncontent-type: text/plain; version=0.0.4\r\ncontent-length: {}\r\nconnection: close\r\n\r\n",
                body.len()
            );
            // A scraper that does not read loses its place after 5 s too.
            let _ = tokio::time::timeout(std::time::Duration::from_secs(5), async {
                let _ = stream.write_all(head.as_bytes()).await;
                let _ = stream.write_all(body.as_bytes()).await;
                let _ = stream.shutdown().await;
            })
            .await;
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_text_format_reads_back() {
        let text = "# HELP kauri_ldap_connections_open Connections open now.\n\
                    # TYPE kauri_ldap_connections_open gauge\n\
                    kauri_ldap_connections_open 3\n\
                    \n\
                    kauri_build_info{version=\"0.1.0\",storage_format=\"5\"} 1\n\
                    kauri_ldap_request_duration_seconds_bucket{op=\"bind\",le=\"+Inf\"} 12\n\
                    kauri_ldap_request_duration_seconds_sum{op=\"bind\"} 0.0125\n\
                    http_requests_total{method=\"post\", code=\"200\",} 1027 1395066363000\n\
                    weird{v=\"+Inf\"} +Inf\n\
                    kauri_db_highest_committed_usn 9007199254740992\n";
        let samples = parse(text).unwrap();
        assert_eq!(samples.len(), 7);
        assert_eq!(samples[0].name, "kauri_ldap_connections_open");
        assert!(samples[0].labels.is_empty());
        assert_eq!(samples[0].value, 3.0);
        assert_eq!(samples[1].label("version"), Some("0.1.0"));
        assert_eq!(samples[1].label("storage_format"), Some("5"));
        assert_eq!(samples[1].label("nope"), None);
        assert_eq!(samples[2].label("le"), Some("+Inf"));
        assert_eq!(samples[3].value, 0.0125);
        assert_eq!(
            samples[4].labels,
            vec![
                ("method".to_string(), "post".to_string()),
                ("code".to_string(), "200".to_string())
            ]
        );
        assert_eq!(samples[4].value, 1027.0);
        assert_eq!(samples[5].value, f64::INFINITY);
        assert_eq!(samples[6].value as u64, 1 << 53);
    }

    #[test]
    fn label_values_with_quotes_backslashes_and_line_feeds_survive() {
        for value in [
            "/run/kauri/ldapi",
            "a\"b",
            "c:\\dir\\sock",
            "two\nlines",
            "é ☃",
        ] {
            let line = format!(
                "kauri_listener_info{{service=\"ldapi\",address=\"{}\"}} 1",
                escape(value)
            );
            let samples = parse(&line).unwrap();
            assert_eq!(samples[0].label("address"), Some(value), "{line}");
            assert_eq!(samples[0].label("service"), Some("ldapi"));
        }
    }

    #[test]
    fn malformed_lines_are_refused_with_their_number() {
        for (text, why) in [
            ("ok 1\n{x=\"1\"} 2", "no metric name"),
            ("ok 1\n\nm", "no value"),
            ("m one", "is not a number"),
            ("m{a=\"1\" 2", "labels not separated by commas"),
            ("m{a=1} 2", "not in quotes"),
            ("m{a=\"1} 2", "closing quote"),
            ("m{a=\"\\x\"} 2", "bad escape"),
            ("m{=\"1\"} 2", "not a label name"),
            ("m 1 soon", "not a timestamp"),
            ("m 1 2 3", "after the timestamp"),
        ] {
            let e = parse(text).unwrap_err();
            assert!(e.reason.contains(why), "{text:?}: {e}");
            assert_eq!(e.line, text.lines().count(), "{text:?}");
        }
    }
}
