//! `kauri status`: a running server's version, uptime, listeners, connections, load,
//! database and last backup, read from its metrics — over HTTP from the metrics endpoint
//! (this machine's server by default), or over LDAP with the status extended operation
//! (`-H`, as an administrator), which answers with the same text.

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream, ToSocketAddrs};
use std::path::PathBuf;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use anyhow::{bail, Context, Result};
use kauri_ldap::metrics::Sample;
use kauri_ldap_client::proto::controls as ctl;
use serde::Serialize;

use crate::admin::target::Credentials;

/// How long connecting to and reading from the metrics endpoint may take.
const HTTP_TIMEOUT: Duration = Duration::from_secs(10);
/// Largest metrics answer read (a server's is a few tens of KiB).
const MAX_ANSWER: u64 = 16 << 20;

/// Options of `kauri status`.
#[derive(Debug, Clone, clap::Args)]
pub struct StatusOptions {
    /// The server's configuration file (TOML), for its metrics address (`metrics_listen`);
    /// /etc/kauri/kauri.toml where the package is installed.
    #[arg(long, conflicts_with = "url")]
    pub config: Option<PathBuf>,
    /// The metrics endpoint to read, host:port [default: `metrics_listen`, 127.0.0.1:9389].
    #[arg(long, conflicts_with = "url")]
    pub metrics: Option<String>,
    /// Ask a server over LDAP instead, as an administrator: ldap://host[:port] (StartTLS
    /// is used), ldaps://host[:port] or ldapi://<socket path, %2F for />.
    #[arg(short = 'H', long = "url")]
    pub url: Option<String>,
    #[command(flatten)]
    pub credentials: Credentials,
    /// Print the facts as JSON.
    #[arg(long)]
    pub json: bool,
}

/// A listener, as reported.
#[derive(Debug, Serialize)]
struct Listener {
    service: String,
    address: String,
}

/// Connections to the LDAP ports.
#[derive(Debug, Serialize)]
struct Connections {
    open: Option<u64>,
    total: Option<u64>,
}

/// The database file.
#[derive(Debug, Serialize)]
struct Database {
    size_bytes: Option<u64>,
    map_size_bytes: Option<u64>,
    free_pages: Option<u64>,
}

/// What `kauri status` reports (absent facts, from a server that does not report them,
/// are null).
#[derive(Debug, Serialize)]
struct Facts {
    version: String,
    storage_format: u64,
    start_time: Option<String>,
    uptime_seconds: Option<u64>,
    listeners: Vec<Listener>,
    connections: Connections,
    ldap_requests_last_minute: Option<u64>,
    operations_per_second: Option<f64>,
    database: Database,
    highest_usn: Option<u64>,
    last_backup: Option<String>,
}

/// `kauri status`.
pub fn run(o: &StatusOptions) -> Result<()> {
    let (text, source) = match &o.url {
        Some(url) => (ask_over_ldap(url, &o.credentials)?, url.clone()),
        None => {
            let addr = match &o.metrics {
                Some(a) => a.clone(),
                None => metrics_address(o.config.as_ref())?,
            };
            (scrape(&addr)?, format!("the metrics endpoint at {addr}"))
        }
    };
    let samples = kauri_ldap::metrics::parse(&text).with_context(|| format!("reading {source}"))?;
    let facts = facts(&samples, unix_now())
        .with_context(|| format!("{source} does not answer like a Kauri server"))?;
    if o.json {
        println!("{}", serde_json::to_string_pretty(&facts)?);
    } else {
        print!("{}", table(&facts));
    }
    Ok(())
}

/// The metrics address of the configuration: the file given, else the packaged one where
/// the package is installed, else the default.
fn metrics_address(config: Option<&PathBuf>) -> Result<String> {
    let packaged = PathBuf::from(kauri::paths::PACKAGED_CONFIG);
    let file = config
        .cloned()
        .or_else(|| packaged.exists().then_some(packaged));
    let cfg = match file {
        Some(path) => kauri_ldap::ServerConfig::load(&path)?,
        None => kauri_ldap::ServerConfig::default(),
    };
    if cfg.metrics_listen.is_empty() {
        bail!(
            "the metrics endpoint is off in this configuration (metrics_listen = \"\"): \
             give --metrics ADDR, or ask the server with -H ldap://…"
        );
    }
    Ok(cfg.metrics_listen)
}

/// Where to connect for a listening address: an unspecified one (`0.0.0.0`, `[::]`) is
/// reached on loopback.
fn reachable(a: SocketAddr) -> SocketAddr {
    match a {
        SocketAddr::V4(v4) if v4.ip().is_unspecified() => {
            SocketAddr::from(([127, 0, 0, 1], v4.port()))
        }
        SocketAddr::V6(v6) if v6.ip().is_unspecified() => {
            SocketAddr::from((std::net::Ipv6Addr::LOCALHOST, v6.port()))
        }
        a => a,
    }
}

/// The metrics text of the endpoint at `addr` (HTTP/1.0 GET).
fn scrape(addr: &str) -> Result<String> {
    let unreachable = || {
        format!(
            "cannot reach the metrics endpoint at {addr} (is kauri serve running, with \
             metrics_listen there? or ask it with -H ldap://…)"
        )
    };
    let targets: Vec<SocketAddr> = addr
        .to_socket_addrs()
        .with_context(unreachable)?
        .map(reachable)
        .collect();
    let mut stream = None;
    let mut last_error = std::io::Error::other("the address resolves to nothing");
    for t in targets {
        match TcpStream::connect_timeout(&t, HTTP_TIMEOUT) {
            Ok(s) => {
                stream = Some(s);
                break;
            }
            Err(e) => last_error = e,
        }
    }
    let mut stream = stream.ok_or(last_error).with_context(unreachable)?;
    let answer = (|| -> std::io::Result<Vec<u8>> {
        stream.set_read_timeout(Some(HTTP_TIMEOUT))?;
        stream.set_write_timeout(Some(HTTP_TIMEOUT))?;
        stream.write_all(
            format!("GET /metrics HTTP/1.0\r\nHost: {addr}\r\nAccept: text/plain\r\n\r\n")
                .as_bytes(),
        )?;
        let mut answer = Vec::new();
        stream.take(MAX_ANSWER).read_to_end(&mut answer)?;
        Ok(answer)
    })()
    .with_context(|| format!("reading the metrics endpoint at {addr}"))?;
    let text = String::from_utf8(answer)
        .with_context(|| format!("the metrics endpoint at {addr} answered with non-text"))?;
    let Some((head, body)) = text.split_once("\r\n\r\n") else {
        bail!("the metrics endpoint at {addr} did not answer in HTTP");
    };
    let status = head.lines().next().unwrap_or_default();
    if status.split_whitespace().nth(1) != Some("200") {
        bail!("the metrics endpoint at {addr} answered {status:?}");
    }
    Ok(body.to_string())
}

/// The metrics text of the server at `url`, with the status extended operation.
fn ask_over_ldap(url: &str, credentials: &Credentials) -> Result<String> {
    let rt = crate::admin::remote::runtime()?;
    rt.block_on(async {
        let mut client = crate::admin::remote::connect(url, credentials).await?;
        let response = client
            .extended(ctl::KAURI_STATUS, None, Vec::new())
            .await
            .with_context(|| format!("asking {url} for its status"))?;
        if response.result.code.0 != 0 {
            return Err(crate::admin::remote::refused(&response.result)
                .context(format!("the status of {url}")));
        }
        String::from_utf8(response.value.unwrap_or_default())
            .with_context(|| format!("the status from {url} is not text"))
    })
}

fn unix_now() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
}

/// A Unix time as RFC 3339 in UTC, to the second.
fn rfc3339(secs: u64) -> String {
    let micros = i64::try_from(secs)
        .unwrap_or(i64::MAX / 1_000_000)
        .saturating_mul(1_000_000);
    let text = kauri_audit::Timestamp::from_micros(micros).to_rfc3339();
    match text.strip_suffix(".000000Z") {
        Some(whole) => format!("{whole}Z"),
        None => text,
    }
}

/// The facts in the samples; `now` (Unix seconds) gives the uptime.
fn facts(samples: &[Sample], now: u64) -> Result<Facts> {
    let one = |name: &str| {
        samples
            .iter()
            .find(|s| s.name == name && s.value.is_finite() && s.value >= 0.0)
            .map(|s| s.value as u64)
    };
    let build = samples
        .iter()
        .find(|s| s.name == "kauri_build_info")
        .context("no kauri_build_info")?;
    let version = build.label("version").context("no version")?.to_string();
    let storage_format = build
        .label("storage_format")
        .and_then(|f| f.parse().ok())
        .context("no storage format")?;
    let started = one("kauri_start_time_seconds").filter(|t| *t > 0);
    let requests = one("kauri_ldap_requests_last_minute");
    Ok(Facts {
        version,
        storage_format,
        start_time: started.map(rfc3339),
        uptime_seconds: started.map(|t| now.saturating_sub(t)),
        listeners: samples
            .iter()
            .filter(|s| s.name == "kauri_listener_info")
            .map(|s| Listener {
                service: s.label("service").unwrap_or_default().to_string(),
                address: s.label("address").unwrap_or_default().to_string(),
            })
            .collect(),
        connections: Connections {
            open: one("kauri_ldap_connections_open"),
            total: one("kauri_ldap_connections_total"),
        },
        ldap_requests_last_minute: requests,
        operations_per_second: requests.map(|n| (n as f64 / 60.0 * 10.0).round() / 10.0),
        database: Database {
            size_bytes: one("kauri_db_size_bytes"),
            map_size_bytes: one("kauri_db_map_size_bytes"),
            free_pages: one("kauri_db_free_pages"),
        },
        highest_usn: one("kauri_db_highest_committed_usn"),
        last_backup: one("kauri_last_backup_time_seconds")
            .filter(|t| *t > 0)
            .map(rfc3339),
    })
}

/// A duration in seconds as days, hours, minutes and seconds (`3d 4h 5m 6s`).
fn duration(secs: u64) -> String {
    let (d, h, m, s) = (secs / 86_400, secs / 3_600 % 24, secs / 60 % 60, secs % 60);
    match (d, h, m) {
        (0, 0, 0) => format!("{s}s"),
        (0, 0, _) => format!("{m}m {s}s"),
        (0, _, _) => format!("{h}h {m}m {s}s"),
        _ => format!("{d}d {h}h {m}m {s}s"),
    }
}

/// The facts as a table for people.
fn table(f: &Facts) -> String {
    use std::fmt::Write as _;
    let unknown = || "unknown".to_string();
    let mib = |b: u64| format!("{:.1} MiB", b as f64 / 1_048_576.0);
    let mut out = String::new();
    let mut row = |name: &str, value: String| {
        let _ = writeln!(out, "{name:<18} {value}");
    };
    row(
        "version",
        format!("{} (storage format {})", f.version, f.storage_format),
    );
    row(
        "uptime",
        match (f.uptime_seconds, &f.start_time) {
            (Some(up), Some(at)) => format!("{} (since {at})", duration(up)),
            _ => unknown(),
        },
    );
    if f.listeners.is_empty() {
        row("listening", "nothing reported".into());
    }
    for (i, l) in f.listeners.iter().enumerate() {
        row(
            if i == 0 { "listening" } else { "" },
            format!("{:<9} {}", l.service, l.address),
        );
    }
    row(
        "connections",
        match (f.connections.open, f.connections.total) {
            (Some(open), Some(total)) => format!("{open} open, {total} since start"),
            _ => unknown(),
        },
    );
    row(
        "operations/s",
        match (f.operations_per_second, f.ldap_requests_last_minute) {
            (Some(rate), Some(n)) => {
                format!("{rate:.1} over the last minute ({n} LDAP requests)")
            }
            _ => unknown(),
        },
    );
    let db = &f.database;
    row(
        "database",
        match (db.size_bytes, db.map_size_bytes, db.free_pages) {
            (Some(size), Some(map), Some(free)) => {
                format!("{} on disk, map {}, {free} free pages", mib(size), mib(map))
            }
            _ => unknown(),
        },
    );
    row(
        "highest USN",
        f.highest_usn.map_or_else(unknown, |u| u.to_string()),
    );
    row(
        "last backup",
        f.last_backup.clone().unwrap_or_else(|| "never".into()),
    );
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn facts_come_from_the_samples() {
        let text = "kauri_build_info{version=\"0.1.0\",storage_format=\"5\"} 1\n\
                    kauri_start_time_seconds 1700000000\n\
                    kauri_listener_info{service=\"ldap\",address=\"127.0.0.1:389\"} 1\n\
                    kauri_listener_info{service=\"ldapi\",address=\"/run/kauri/ldapi\"} 1\n\
                    kauri_ldap_connections_open 2\n\
                    kauri_ldap_connections_total 40\n\
                    kauri_ldap_requests_last_minute 95\n\
                    kauri_db_size_bytes 1048576\n\
                    kauri_db_map_size_bytes 1073741824\n\
                    kauri_db_free_pages 12\n\
                    kauri_db_highest_committed_usn 4321\n\
                    kauri_last_backup_time_seconds 0\n";
        let samples = kauri_ldap::metrics::parse(text).unwrap();
        let f = facts(&samples, 1_700_090_061).unwrap();
        assert_eq!(f.version, "0.1.0");
        assert_eq!(f.storage_format, 5);
        assert_eq!(f.start_time.as_deref(), Some("2023-11-14T22:13:20Z"));
        assert_eq!(f.uptime_seconds, Some(90_061));
        assert_eq!(f.listeners.len(), 2);
        assert_eq!(f.listeners[1].address, "/run/kauri/ldapi");
        assert_eq!(f.operations_per_second, Some(1.6));
        assert_eq!(f.highest_usn, Some(4321));
        assert_eq!(f.last_backup, None);
        let t = table(&f);
        assert!(
            t.contains("uptime             1d 1h 1m 1s (since 2023-11-14T22:13:20Z)"),
            "{t}"
        );
        assert!(
            t.contains("1.6 over the last minute (95 LDAP requests)"),
            "{t}"
        );
        assert!(
            t.contains("1.0 MiB on disk, map 1024.0 MiB, 12 free pages"),
            "{t}"
        );
        assert!(t.contains("last backup        never"), "{t}");
        let json = serde_json::to_value(&f).unwrap();
        assert_eq!(json["database"]["free_pages"], 12);
        assert_eq!(json["operations_per_second"], 1.6);
        // Something else's metrics are not a Kauri server's.
        let other = kauri_ldap::metrics::parse("process_start_time_seconds 1\n").unwrap();
        assert!(facts(&other, 0).is_err());
    }
}
