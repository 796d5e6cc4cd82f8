//! The record of one replay run: what was offered, what was achieved, and the latency of
//! every kind of operation. `kauri traffic replay --json` writes it, `kauri traffic report`
//! reads several and compares them.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use serde::{Deserialize, Serialize};

/// The format version written in [`RunReport::version`].
pub const RUN_FORMAT: u32 = 1;

/// One replay run.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct RunReport {
    /// [`RUN_FORMAT`].
    pub version: u32,
    /// A short name for charts and tables (`kauri 5000/s`); defaults to the server and rate.
    pub label: String,
    /// The server replayed against (`ldap://host:port` or a host name).
    pub server: String,
    /// When the run started (RFC 3339, UTC).
    pub started: String,
    /// What was replayed (a model or summary file name).
    pub source: String,
    /// Seconds from the first to the last operation sent.
    pub duration: f64,
    /// The rate the plan asked for, operations per second.
    pub offered_rate: f64,
    /// Operations that succeeded per second of the run.
    pub achieved_rate: f64,
    /// Conversations planned.
    pub planned_conversations: u64,
    /// Operations (packets) planned.
    pub planned_operations: u64,
    /// Conversations that ran.
    pub conversations: u64,
    /// Conversations still running when the run's time was up.
    pub unfinished_conversations: u64,
    /// Operations that succeeded.
    pub successful: u64,
    /// Operations that failed.
    pub failed: u64,
    /// Planned operations skipped because the server does not offer their service.
    pub skipped: u64,
    /// Failures counted by reason (`invalidCredentials`, `timeout`, `connection refused`, …).
    pub failures: BTreeMap<String, u64>,
    /// The largest delay, in seconds, between when an operation was due and when it was sent.
    pub max_sleep_miss: f64,
    /// The 95th percentile of that delay, in seconds.
    pub p95_sleep_miss: f64,
    /// The 95th percentile, in seconds, of how late the client woke for an operation it
    /// was waiting to send: its own scheduling lag, apart from waits for the server.
    #[serde(default)]
    pub p95_client_lag: f64,
    /// The share of the client's CPU time the replayer used (1.0 = every core busy).
    pub client_cpu: f64,
    /// True when the client, not the server, limited the rate: the client's cores were
    /// saturated, or it woke late for operations it was waiting to send while busy itself.
    /// (Operations sent late because the one before waited for the server are the server's
    /// doing; late wake-ups of an idle client, the machine's.)
    pub client_bound: bool,
    /// Latencies per (protocol, op code), in table order.
    pub operations: Vec<OpStats>,
}

/// Latency statistics of one kind of operation, in seconds.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct OpStats {
    /// `ldap`, `cldap`, `dns`, `kerberos`.
    pub protocol: String,
    /// The operation code as in the summary (`3` for an LDAP search).
    pub opcode: String,
    /// `searchRequest`, `bindRequest`, …
    pub description: String,
    /// Operations sent.
    pub count: u64,
    /// Of which failed.
    pub failed: u64,
    /// Mean latency.
    pub mean: f64,
    /// Median latency.
    pub median: f64,
    /// 95th percentile.
    pub p95: f64,
    /// 99th percentile.
    pub p99: f64,
    /// Smallest latency.
    pub min: f64,
    /// Largest latency.
    pub max: f64,
}

impl OpStats {
    /// Statistics of `latencies` (seconds, any order; only successful operations).
    pub fn from_latencies(
        protocol: &str,
        opcode: &str,
        description: &str,
        failed: u64,
        latencies: &mut [f64],
    ) -> OpStats {
        latencies.sort_by(f64::total_cmp);
        let n = latencies.len();
        let pick = |q: f64| -> f64 {
            if n == 0 {
                return 0.0;
            }
            let i = ((q * n as f64).ceil() as usize).clamp(1, n) - 1;
            latencies[i]
        };
        let mean = if n == 0 {
            0.0
        } else {
            latencies.iter().sum::<f64>() / n as f64
        };
        OpStats {
            protocol: protocol.to_string(),
            opcode: opcode.to_string(),
            description: description.to_string(),
            count: n as u64 + failed,
            failed,
            mean,
            median: pick(0.5),
            p95: pick(0.95),
            p99: pick(0.99),
            min: latencies.first().copied().unwrap_or(0.0),
            max: latencies.last().copied().unwrap_or(0.0),
        }
    }
}

impl RunReport {
    /// The text the Samba team reads: totals, then one row per operation
    /// (`Protocol  Op Code  Description  Count  Failed  Mean  Median  95%  Range  Max`).
    pub fn table(&self) -> String {
        let mut s = String::new();
        let secs = self.duration.max(1e-9);
        let _ = writeln!(s, "Server                      {}", self.server);
        let _ = writeln!(s, "Replayed                    {}", self.source);
        let _ = writeln!(s, "Total conversations:        {:10}", self.conversations);
        let _ = writeln!(
            s,
            "Successful operations:      {:10} ({:.3} per second)",
            self.successful,
            self.successful as f64 / secs
        );
        let _ = writeln!(
            s,
            "Failed operations:          {:10} ({:.3} per second)",
            self.failed,
            self.failed as f64 / secs
        );
        let _ = writeln!(
            s,
            "Offered rate:               {:10.1} operations per second",
            self.offered_rate
        );
        let _ = writeln!(
            s,
            "Achieved rate:              {:10.1} operations per second",
            self.achieved_rate
        );
        for (reason, n) in &self.failures {
            let _ = writeln!(s, "  failed: {reason:<26} {n:10}");
        }
        if self.skipped > 0 {
            let _ = writeln!(s, "Skipped (service not offered): {:7}", self.skipped);
        }
        let _ = writeln!(
            s,
            "Max sleep miss:             {:10.6} s",
            self.max_sleep_miss
        );
        let _ = writeln!(
            s,
            "95% sleep miss:             {:10.6} s",
            self.p95_sleep_miss
        );
        let _ = writeln!(
            s,
            "95% client lag:             {:10.6} s",
            self.p95_client_lag
        );
        let _ = writeln!(
            s,
            "Planned conversations:      {:10}",
            self.planned_conversations
        );
        let _ = writeln!(
            s,
            "Planned packets:            {:10}",
            self.planned_operations
        );
        let _ = writeln!(
            s,
            "Unfinished conversations:   {:10}",
            self.unfinished_conversations
        );
        let _ = writeln!(
            s,
            "Client CPU:                 {:9.0} %",
            self.client_cpu * 100.0
        );
        if self.client_bound {
            let _ = writeln!(
                s,
                "NOTE: the client limited this run (busy cores or late wake-ups); the server may do more."
            );
        }
        let _ = writeln!(s);
        let _ = writeln!(
            s,
            "{:<10}{:>8}  {:<28}{:>9}{:>8}{:>10}{:>10}{:>10}{:>10}{:>10}",
            "Protocol",
            "Op Code",
            "Description",
            "Count",
            "Failed",
            "Mean",
            "Median",
            "95%",
            "Range",
            "Max"
        );
        for op in &self.operations {
            let _ = writeln!(
                s,
                "{:<10}{:>8}  {:<28}{:>9}{:>8}{:>10.6}{:>10.6}{:>10.6}{:>10.6}{:>10.6}",
                op.protocol,
                op.opcode,
                op.description,
                op.count,
                op.failed,
                op.mean,
                op.median,
                op.p95,
                op.max - op.min,
                op.max
            );
        }
        s
    }

    /// One CSV row per operation kind, with the run's label first (a header line included).
    pub fn csv(&self) -> String {
        let mut s = String::from(
            "label,protocol,opcode,description,count,failed,mean,median,p95,p99,min,max\n",
        );
        for op in &self.operations {
            let _ = writeln!(
                s,
                "{},{},{},{},{},{},{:.6},{:.6},{:.6},{:.6},{:.6},{:.6}",
                csv_field(&self.label),
                csv_field(&op.protocol),
                csv_field(&op.opcode),
                csv_field(&op.description),
                op.count,
                op.failed,
                op.mean,
                op.median,
                op.p95,
                op.p99,
                op.min,
                op.max
            );
        }
        s
    }
}

fn csv_field(s: &str) -> String {
    if s.contains([',', '"', '\n']) {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s.to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn percentiles() {
        let mut l: Vec<f64> = (1..=100).map(|i| i as f64 / 1000.0).collect();
        let s = OpStats::from_latencies("ldap", "3", "searchRequest", 2, &mut l);
        assert_eq!(s.count, 102);
        assert_eq!(s.median, 0.050);
        assert_eq!(s.p95, 0.095);
        assert_eq!(s.max, 0.1);
        assert!((s.mean - 0.0505).abs() < 1e-9);
        let e = OpStats::from_latencies("dns", "0", "query", 1, &mut []);
        assert_eq!((e.count, e.median), (1, 0.0));
    }

    #[test]
    fn csv_quotes() {
        assert_eq!(csv_field("a,b"), "\"a,b\"");
        assert_eq!(csv_field("plain"), "plain");
    }
}
