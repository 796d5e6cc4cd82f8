//! Server settings: one TOML file, every setting with a default, command-line flags on top.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

/// Everything the server can be told. Unknown keys in the file are an error, so a typo
/// never silently falls back to a default.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq)]
#[serde(default, deny_unknown_fields)]
pub struct ServerConfig {
    /// Where the database and the generated TLS pair live.
    pub data: PathBuf,
    /// Plain LDAP listener (StartTLS available on it).
    pub listen: String,
    /// LDAPS listener; empty to disable.
    pub listen_tls: String,
    /// Answer CLDAP (LDAP pings over UDP) when serving a domain.
    pub cldap: bool,
    /// UDP address for CLDAP; empty for the plain listener's address (AD answers CLDAP on
    /// its LDAP port, 389).
    pub listen_cldap: String,
    /// Global catalog listener, when serving a domain (AD's port is 3268); empty, the
    /// default, for none.
    pub listen_gc: String,
    /// Global catalog listener with TLS from the first byte (AD's 3269); empty for none.
    pub listen_gc_tls: String,
    /// Path of the local `ldapi://` socket (SASL EXTERNAL with the peer's Unix
    /// credentials); empty to disable.
    pub listen_ldapi: PathBuf,
    /// TLS certificate chain (PEM); empty to use (and on first start generate) a
    /// self-signed pair in `data/tls/`.
    pub tls_cert: PathBuf,
    /// TLS private key (PEM), with `tls_cert`.
    pub tls_key: PathBuf,
    /// Refuse simple binds with a password on connections that are not encrypted
    /// (strongerAuthRequired), like AD's and Samba's "require strong auth".
    pub require_strong_auth: bool,
    /// Accept password sets and changes (unicodePwd, userPassword, password modify) on
    /// connections that are not encrypted, as Samba does. AD refuses them (unwillingToPerform),
    /// and so does Kauri by default; test labs and Samba's own test suites turn this on.
    pub plain_ldap_passwords: bool,
    /// Whether anonymous clients may search below the root DSE.
    pub anonymous_read: bool,
    /// The administrator's DN (may read and write everything).
    pub admin_dn: String,
    /// The administrator's password (cleartext or `{SSHA}`/`{SSHA256}`/`{SSHA512}` form).
    pub admin_password: String,
    /// The naming context announced as `defaultNamingContext` (empty: the first one).
    pub default_naming_context: String,
    /// Host name announced in the root DSE.
    pub dns_host_name: String,
    /// Largest accepted request, in bytes; larger ones end the connection.
    pub max_pdu: usize,
    /// Connections served at once on the network ports together (LDAP, LDAPS, the global
    /// catalog; AD's MaxConnections). When all are taken, the unauthenticated connection
    /// idle longest is closed for a newcomer; when there is none, the newcomer is told the
    /// server is busy and disconnected. The local `ldapi://` socket has a table of its own
    /// of the same size, so local administration is never crowded out.
    pub max_connections: usize,
    /// Of `max_connections`, how many only authenticated connections may hold (at most
    /// half), so clients that never bind cannot take every place.
    pub reserved_for_authenticated: usize,
    /// Connections from one client address at once (an IPv6 client counts by its /64);
    /// 0, the default, for no limit.
    pub max_connections_per_address: usize,
    /// Connections from one client address that have not authenticated, at once; past it
    /// the address's own longest-idle unauthenticated connection gives way, or the
    /// newcomer is refused. 0 for no limit.
    pub max_unauthenticated_per_address: usize,
    /// Seconds a new connection has to complete its TLS handshake (on LDAPS) and send its
    /// first request (AD's InitRecvTimeout); 0 for only the idle timeout.
    pub init_timeout_secs: u64,
    /// Seconds a request may take to arrive once its first bytes have: a client sending a
    /// byte at a time is disconnected (0 for no limit).
    pub request_timeout_secs: u64,
    /// Seconds a response may wait for the client to read it: a client that asks and never
    /// reads is disconnected (0 for no limit).
    pub write_timeout_secs: u64,
    /// Requests of one connection in progress at once; the server stops reading from a
    /// connection that has this many until one finishes.
    pub max_ops_per_connection: usize,
    /// Seconds a connection may stay silent with nothing in progress (AD's
    /// MaxConnIdleTime).
    pub idle_timeout_secs: u64,
    /// Most entries one search returns (0 = no limit); paged searches count per page.
    pub size_limit: usize,
    /// Longest a search may run, in seconds (0 = no limit).
    pub time_limit_secs: u64,
    /// Paged-search cursors kept per connection; the oldest goes first.
    pub max_paged_cursors: usize,
    /// Seconds an idle paged-search cursor is kept.
    pub paged_cursor_ttl_secs: u64,
    /// Most write requests committed in one transaction.
    pub max_commit_batch: usize,
    /// Values of one attribute returned at once before ranged retrieval
    /// (`member;range=0-1499`) takes over, like AD's MaxValRange.
    pub max_val_range: usize,
    /// Most matches a server-side sorted (or VLV) search may sort.
    pub max_sort_entries: usize,
    /// Address of the Prometheus metrics endpoint (plain HTTP); empty to disable.
    pub metrics_listen: String,
    /// Kerberos KDC address, TCP and UDP, when serving a domain (AD's port is 88); empty
    /// for none. A default address that cannot be bound (port 88 needs privileges) is
    /// reported and skipped; one set in the file is an error.
    pub listen_kdc: String,
    /// Kerberos password-change service (RFC 3244) address, TCP and UDP (AD's port is
    /// 464); empty for none, and skipped like `listen_kdc`.
    pub listen_kpasswd: String,
    /// Longest life of a ticket-granting ticket, in hours (AD's MaxTicketAge).
    pub kerberos_max_ticket_hours: u32,
    /// Longest a ticket may be renewed for, in days (AD's MaxRenewAge).
    pub kerberos_max_renew_days: u32,
    /// Longest life of a service ticket, in minutes (AD's MaxServiceAge).
    pub kerberos_max_service_minutes: u32,
    /// Largest difference between a client's clock and the DC's, in minutes (AD's
    /// MaxClockSkew).
    pub kerberos_max_clock_skew_minutes: u32,
    /// What the server logs (`tracing` filter directives, as in `RUST_LOG`, which
    /// overrides it when set): `warn`, `info`, or `debug` for every request with its
    /// operation, outcome and time.
    pub log: String,
    /// The DNS server (`[dns]` in the file).
    pub dns: DnsConfig,
    /// The audit log (`[audit]` in the file): JSON lines in the data folder's `audit/`.
    pub audit: kauri_audit::AuditConfig,
}

/// The DNS server's settings.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq)]
#[serde(default, deny_unknown_fields)]
pub struct DnsConfig {
    /// Address of the DNS server, UDP and TCP (port 53 in AD); empty for none. A default
    /// address that cannot be bound is reported and skipped; one set in the file is an
    /// error.
    pub listen: String,
    /// The DC's addresses in its A/AAAA and locator records; empty: the addresses the
    /// server listens on (LDAP's, then DNS's), loopback only when nothing else is known.
    pub host_addresses: Vec<String>,
    /// Servers (`address` or `address:port`) that names outside the directory's zones
    /// are forwarded to; empty: such queries are refused (never an open resolver).
    pub forwarders: Vec<String>,
    /// Who may transfer a zone (AXFR): addresses or networks (`10.0.0.0/8`), or `any`;
    /// empty: nobody.
    pub zone_transfers: Vec<String>,
    /// Responses per second one source address may receive over UDP; 0 for no limit.
    pub rate_limit: u32,
    /// Hours between runs of the scavenger (AD's default scavenging period is 7 days).
    pub scavenging_interval_hours: u32,
    /// Days a deleted name is kept as a tombstone before it is purged.
    pub tombstone_interval_days: u32,
}

/// The DNS server's address unless configured.
pub const DEFAULT_DNS: &str = "127.0.0.1:53";

impl Default for DnsConfig {
    fn default() -> Self {
        DnsConfig {
            listen: DEFAULT_DNS.into(),
            host_addresses: Vec::new(),
            forwarders: Vec::new(),
            zone_transfers: Vec::new(),
            rate_limit: 0,
            scavenging_interval_hours: 168,
            tombstone_interval_days: 14,
        }
    }
}

/// The KDC's address unless configured.
pub const DEFAULT_KDC: &str = "127.0.0.1:88";

/// The password-change service's address unless configured.
pub const DEFAULT_KPASSWD: &str = "127.0.0.1:464";

impl Default for ServerConfig {
    fn default() -> Self {
        ServerConfig {
            data: PathBuf::from("kauri-data"),
            listen: "127.0.0.1:3389".into(),
            listen_tls: "127.0.0.1:3636".into(),
            cldap: true,
            listen_cldap: String::new(),
            listen_gc: String::new(),
            listen_gc_tls: String::new(),
            listen_ldapi: PathBuf::new(),
            tls_cert: PathBuf::new(),
            tls_key: PathBuf::new(),
            require_strong_auth: false,
            plain_ldap_passwords: false,
            anonymous_read: false,
            admin_dn: "cn=admin,dc=samdom,dc=example,dc=com".into(),
            admin_password: String::new(),
            default_naming_context: String::new(),
            dns_host_name: "localhost".into(),
            max_pdu: 16 << 20,
            max_connections: 4096,
            reserved_for_authenticated: 256,
            max_connections_per_address: 0,
            max_unauthenticated_per_address: 256,
            init_timeout_secs: 120,
            request_timeout_secs: 120,
            write_timeout_secs: 120,
            max_ops_per_connection: 32,
            idle_timeout_secs: 900,
            size_limit: 100_000,
            time_limit_secs: 600,
            max_paged_cursors: 16,
            paged_cursor_ttl_secs: 600,
            max_commit_batch: 256,
            max_val_range: 1500,
            max_sort_entries: 500_000,
            metrics_listen: "127.0.0.1:9389".into(),
            listen_kdc: DEFAULT_KDC.into(),
            listen_kpasswd: DEFAULT_KPASSWD.into(),
            kerberos_max_ticket_hours: 10,
            kerberos_max_renew_days: 7,
            kerberos_max_service_minutes: 600,
            kerberos_max_clock_skew_minutes: 5,
            log: "info".into(),
            dns: DnsConfig::default(),
            audit: kauri_audit::AuditConfig::default(),
        }
    }
}

/// Settings a running server keeps until it restarts: its listeners, its data folder and
/// what was built from them when it started (the connection tables, the writer, the DNS
/// server, the audit log). A reload leaves them as they were and says so.
pub const RESTART_ONLY: &[&str] = &[
    "data",
    "listen",
    "listen_tls",
    "cldap",
    "listen_cldap",
    "listen_gc",
    "listen_gc_tls",
    "listen_ldapi",
    "admin_dn",
    "dns_host_name",
    "max_connections",
    "reserved_for_authenticated",
    "max_connections_per_address",
    "max_unauthenticated_per_address",
    "max_commit_batch",
    "metrics_listen",
    "listen_kdc",
    "listen_kpasswd",
    "dns",
    "audit",
];

/// The outcome of reading the settings again while serving.
#[derive(Debug, Clone)]
pub struct Reread {
    /// The new settings, with the [`RESTART_ONLY`] ones as they were.
    pub config: ServerConfig,
    /// Settings that changed and take effect now (`dns.forwarders` style names).
    pub applied: Vec<String>,
    /// Settings that changed but wait for a restart.
    pub need_restart: Vec<String>,
}

/// A configuration file that cannot be used.
#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    /// The file could not be read.
    #[error("cannot read {path}: {source}")]
    Read {
        /// The file.
        path: String,
        /// Why.
        source: std::io::Error,
    },
    /// The file is not valid TOML for these settings.
    #[error("invalid configuration in {path}: {message}")]
    Parse {
        /// The file.
        path: String,
        /// The parser's explanation.
        message: String,
    },
}

impl ServerConfig {
    /// Reads a TOML file; settings it leaves out keep their defaults.
    pub fn load(path: &Path) -> Result<ServerConfig, ConfigError> {
        let text = std::fs::read_to_string(path).map_err(|source| ConfigError::Read {
            path: path.display().to_string(),
            source,
        })?;
        ServerConfig::parse(&text).map_err(|message| ConfigError::Parse {
            path: path.display().to_string(),
            message,
        })
    }

    /// Parses TOML text.
    pub fn parse(text: &str) -> Result<ServerConfig, String> {
        toml::from_str(text).map_err(|e| e.to_string())
    }

    /// Takes `new` (the file read again, with the command line on top) in place of these
    /// settings while serving: the [`RESTART_ONLY`] settings keep their values, and what
    /// changed is listed.
    pub fn reread(&self, new: ServerConfig) -> Result<Reread, String> {
        let table = |c: &ServerConfig| match toml::Value::try_from(c) {
            Ok(toml::Value::Table(t)) => Ok(t),
            Ok(_) => Err("the settings are not a table".to_string()),
            Err(e) => Err(e.to_string()),
        };
        let old = table(self)?;
        let mut fresh = table(&new)?;
        let mut need_restart = Vec::new();
        for key in RESTART_ONLY {
            let was = old.get(*key);
            if was != fresh.get(*key) {
                need_restart.push((*key).to_string());
                match was {
                    Some(v) => fresh.insert((*key).to_string(), v.clone()),
                    None => fresh.remove(*key),
                };
            }
        }
        let mut applied = Vec::new();
        changed_keys("", &old, &fresh, &mut applied);
        let config = toml::Value::Table(fresh)
            .try_into()
            .map_err(|e: toml::de::Error| e.to_string())?;
        Ok(Reread {
            config,
            applied,
            need_restart,
        })
    }

    /// The time a TLS handshake has (LDAPS or StartTLS): what a new connection has for its
    /// first request, or the idle timeout when that is 0.
    pub fn handshake_timeout(&self) -> std::time::Duration {
        std::time::Duration::from_secs(match self.init_timeout_secs {
            0 => self.idle_timeout_secs.max(1),
            n => n,
        })
    }

    /// The connection limits of the LDAP network ports.
    pub fn connection_limits(&self) -> kauri_net::Limits {
        kauri_net::Limits {
            max_connections: self.max_connections.max(1),
            reserved_for_authenticated: self.reserved_for_authenticated,
            max_per_address: self.max_connections_per_address,
            max_unauthenticated_per_address: self.max_unauthenticated_per_address,
        }
    }

    /// The connection limits of the local socket: as many places, no reserve and no
    /// address limits (every peer is this host).
    pub fn local_connection_limits(&self) -> kauri_net::Limits {
        kauri_net::Limits {
            max_connections: self.max_connections.max(1),
            reserved_for_authenticated: 0,
            max_per_address: 0,
            max_unauthenticated_per_address: 0,
        }
    }
}

/// Appends to `out` the names (dotted below the top) of the keys whose values differ.
fn changed_keys(prefix: &str, a: &toml::Table, b: &toml::Table, out: &mut Vec<String>) {
    let mut keys: Vec<&String> = a.keys().chain(b.keys()).collect();
    keys.sort();
    keys.dedup();
    for k in keys {
        let name = format!("{prefix}{k}");
        match (a.get(k), b.get(k)) {
            (Some(toml::Value::Table(x)), Some(toml::Value::Table(y))) => {
                changed_keys(&format!("{name}."), x, y, out)
            }
            (x, y) if x != y => out.push(name),
            _ => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_and_overrides() {
        let c = ServerConfig::parse("listen = \"127.0.0.1:1389\"\nsize_limit = 5\n").unwrap();
        assert_eq!(c.listen, "127.0.0.1:1389");
        assert_eq!(c.size_limit, 5);
        assert_eq!(c.max_pdu, ServerConfig::default().max_pdu);
        assert!(ServerConfig::parse("lisen = \"x\"").is_err());
    }

    #[test]
    fn reread_keeps_what_needs_a_restart() {
        let old = ServerConfig::default();
        let new = ServerConfig::parse(
            "listen = \"127.0.0.1:1389\"\nsize_limit = 7\nlog = \"debug\"\n[dns]\nforwarders = [\"192.0.2.1\"]\n",
        )
        .unwrap();
        let r = old.reread(new).unwrap();
        assert_eq!(r.config.size_limit, 7);
        assert_eq!(r.config.log, "debug");
        assert_eq!(r.config.listen, old.listen);
        assert!(r.config.dns.forwarders.is_empty());
        assert_eq!(r.applied, vec!["log".to_string(), "size_limit".to_string()]);
        assert_eq!(
            r.need_restart,
            vec!["listen".to_string(), "dns".to_string()]
        );
        // Nothing changed, nothing listed.
        let same = old.reread(old.clone()).unwrap();
        assert!(same.applied.is_empty() && same.need_restart.is_empty());
        assert_eq!(same.config, old);
    }

    #[test]
    fn restart_only_names_are_settings() {
        let toml::Value::Table(t) = toml::Value::try_from(ServerConfig::default()).unwrap() else {
            panic!("not a table");
        };
        for k in RESTART_ONLY {
            assert!(t.contains_key(*k), "{k} is not a setting");
        }
    }

    /// The packaged settings file lists every setting, each commented one at its default.
    #[test]
    fn the_packaged_file_lists_every_setting_at_its_default() {
        let text = include_str!("../../../packaging/kauri.toml");
        let packaged = ServerConfig::parse(text).expect("the packaged file parses");
        assert_eq!(packaged.data, PathBuf::from("/var/lib/kauri"));
        // Uncomment every `# key = value` line; note the keys set and commented.
        let mut commented = Vec::new();
        let mut listed = Vec::new();
        let mut section = String::new();
        let is_key = |k: &str| k.chars().all(|c| c.is_ascii_lowercase() || c == '_');
        let uncommented: String = text
            .lines()
            .map(|l| {
                if l.starts_with('[') {
                    section = l.trim_matches(|c| c == '[' || c == ']').to_string() + ".";
                }
                let setting = l.strip_prefix("# ").unwrap_or(l);
                if let Some((k, _)) = setting.split_once(" = ").filter(|(k, _)| is_key(k)) {
                    listed.push(format!("{section}{k}"));
                    if setting.len() < l.len() {
                        commented.push(format!("{section}{k}"));
                        return format!("{setting}\n");
                    }
                }
                format!("{l}\n")
            })
            .collect();
        let all = ServerConfig::parse(&uncommented).expect("uncommented, it parses");
        let table = |c: &ServerConfig| match toml::Value::try_from(c).unwrap() {
            toml::Value::Table(t) => t,
            _ => panic!("not a table"),
        };
        let defaults = table(&ServerConfig::default());
        let given = table(&all);
        let get = |t: &toml::Table, key: &str| -> Option<toml::Value> {
            match key.split_once('.') {
                Some((s, k)) => t.get(s)?.as_table()?.get(k).cloned(),
                None => t.get(key).cloned(),
            }
        };
        for key in &commented {
            // Settings without a value by default say what they amount to.
            if key == "audit.journal_socket" {
                continue;
            }
            assert_eq!(get(&given, key), get(&defaults, key), "{key}");
        }
        // Every setting is in the file, commented or set.
        let mut missing = Vec::new();
        for (k, v) in &defaults {
            match v {
                toml::Value::Table(t) => {
                    missing.extend(t.keys().map(|s| format!("{k}.{s}")));
                }
                _ => missing.push(k.clone()),
            }
        }
        missing.retain(|k| !listed.contains(k));
        assert!(
            missing.is_empty(),
            "not in packaging/kauri.toml: {missing:?}"
        );
    }
}
