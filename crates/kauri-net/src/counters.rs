//! What happened to a service's connections, for its metrics endpoint.

use std::fmt::Write as _;
use std::sync::atomic::{AtomicU64, Ordering};

use crate::admission::Refusal;

/// The connection rules that close a connection.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Close {
    /// Its first request (or TLS handshake) did not arrive in time.
    InitTimeout,
    /// Silent with nothing in progress for too long.
    IdleTimeout,
    /// A request started but did not arrive whole in time (a slow sender).
    RequestTimeout,
    /// Closed, unauthenticated and idle, to make room for a new connection.
    Evicted,
    /// The client read nothing of what the server had to send for too long.
    WriteTimeout,
}

impl Close {
    /// Every rule.
    pub const ALL: [Close; 5] = [
        Close::InitTimeout,
        Close::IdleTimeout,
        Close::RequestTimeout,
        Close::Evicted,
        Close::WriteTimeout,
    ];

    /// A short name, for logs and metric labels.
    pub fn name(self) -> &'static str {
        match self {
            Close::InitTimeout => "init_timeout",
            Close::IdleTimeout => "idle_timeout",
            Close::RequestTimeout => "request_timeout",
            Close::Evicted => "evicted",
            Close::WriteTimeout => "write_timeout",
        }
    }

    fn index(self) -> usize {
        match self {
            Close::InitTimeout => 0,
            Close::IdleTimeout => 1,
            Close::RequestTimeout => 2,
            Close::Evicted => 3,
            Close::WriteTimeout => 4,
        }
    }
}

/// Counters of one service's connections.
#[derive(Debug, Default)]
pub struct NetCounters {
    accepted: AtomicU64,
    refused: [AtomicU64; Refusal::ALL.len()],
    closed: [AtomicU64; Close::ALL.len()],
}

impl NetCounters {
    /// Counts a connection given a place.
    pub fn count_accepted(&self) {
        self.accepted.fetch_add(1, Ordering::Relaxed);
    }

    /// Counts a connection refused for `why`.
    pub fn count_refused(&self, why: Refusal) {
        if let Some(c) = self.refused.get(why.index()) {
            c.fetch_add(1, Ordering::Relaxed);
        }
    }

    /// Counts a connection closed by `rule`.
    pub fn count_close(&self, rule: Close) {
        if let Some(c) = self.closed.get(rule.index()) {
            c.fetch_add(1, Ordering::Relaxed);
        }
    }

    /// Connections given a place so far.
    pub fn accepted_count(&self) -> u64 {
        self.accepted.load(Ordering::Relaxed)
    }

    /// Connections closed by `rule` so far.
    pub fn closed_count(&self, rule: Close) -> u64 {
        self.closed
            .get(rule.index())
            .map_or(0, |c| c.load(Ordering::Relaxed))
    }

    /// Connections refused for `why` so far.
    pub fn refused_count(&self, why: Refusal) -> u64 {
        self.refused
            .get(why.index())
            .map_or(0, |c| c.load(Ordering::Relaxed))
    }

    /// The counters in Prometheus' text format, labelled with the service's name;
    /// `open` is (all, unauthenticated) connections held now.
    pub fn render(&self, service: &str, open: (usize, usize), out: &mut String) {
        let _ = writeln!(
            out,
            "# HELP kauri_connections_open Connections held now, by service and state."
        );
        let _ = writeln!(out, "# TYPE kauri_connections_open gauge");
        let _ = writeln!(
            out,
            "kauri_connections_open{{service=\"{service}\",state=\"authenticated\"}} {}",
            open.0.saturating_sub(open.1)
        );
        let _ = writeln!(
            out,
            "kauri_connections_open{{service=\"{service}\",state=\"unauthenticated\"}} {}",
            open.1
        );
        let _ = writeln!(
            out,
            "# HELP kauri_connections_accepted_total Connections given a place."
        );
        let _ = writeln!(out, "# TYPE kauri_connections_accepted_total counter");
        let _ = writeln!(
            out,
            "kauri_connections_accepted_total{{service=\"{service}\"}} {}",
            self.accepted_count()
        );
        let _ = writeln!(
            out,
            "# HELP kauri_connections_refused_total Connections refused, by reason (full, or an address at its limit)."
        );
        let _ = writeln!(out, "# TYPE kauri_connections_refused_total counter");
        for r in Refusal::ALL {
            let _ = writeln!(
                out,
                "kauri_connections_refused_total{{service=\"{service}\",reason=\"{}\"}} {}",
                r.name(),
                self.refused_count(r)
            );
        }
        let _ = writeln!(
            out,
            "# HELP kauri_connections_closed_total Connections closed by a connection rule."
        );
        let _ = writeln!(out, "# TYPE kauri_connections_closed_total counter");
        for c in Close::ALL {
            let _ = writeln!(
                out,
                "kauri_connections_closed_total{{service=\"{service}\",rule=\"{}\"}} {}",
                c.name(),
                self.closed_count(c)
            );
        }
    }
}
