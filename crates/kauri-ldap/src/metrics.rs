//! The Prometheus metrics endpoint: a plain HTTP listener (on localhost by default) that
//! answers every request with the counters in Prometheus' text format — requests by
//! operation and outcome, latency histograms, connections, undecodable messages, unindexed
//! searches, commits and their batch sizes, and the highest committed USN.

use std::fmt::Write as _;
use std::sync::atomic::Ordering;
use std::sync::Arc;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpListener;

use crate::ctx::{Ctx, LATENCY_BUCKETS_US, OP_NAMES};
use crate::writer::BATCH_BUCKETS;

/// The metrics text for the current counters.
pub fn render(ctx: &Ctx) -> String {
    let c = &ctx.counters;
    let mut s = String::new();
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
    s
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
            let body = render(&ctx);
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
