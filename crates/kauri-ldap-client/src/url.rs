//! LDAP server URLs: `ldap://host[:port]`, `ldaps://host[:port]` and
//! `ldapi://<percent-encoded socket path>`, as OpenLDAP's tools take them with `-H`.
//!
//! Only the part that says where to connect is accepted: an RFC 4516 search part
//! (`/dn?attributes?scope?filter`), user information, fragments and the like are refused
//! with an explanation rather than silently ignored.

use std::fmt;
use std::net::Ipv6Addr;
use std::path::{Path, PathBuf};
use std::str::FromStr;

/// Default port of `ldap://`.
pub const LDAP_PORT: u16 = 389;
/// Default port of `ldaps://`.
pub const LDAPS_PORT: u16 = 636;

/// Where and how to reach an LDAP server, parsed from a URL.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum LdapUrl {
    /// `ldap://host[:port]`: plain TCP (StartTLS may upgrade it).
    Ldap {
        /// Host name or IP address (an IPv6 address without its brackets).
        host: String,
        /// TCP port.
        port: u16,
    },
    /// `ldaps://host[:port]`: TLS from the first byte.
    Ldaps {
        /// Host name or IP address (an IPv6 address without its brackets).
        host: String,
        /// TCP port.
        port: u16,
    },
    /// `ldapi://<path>`: a local Unix socket.
    Ldapi {
        /// The socket's path, decoded.
        path: PathBuf,
    },
}

/// A string that is not an LDAP URL this client can connect to.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("invalid LDAP URL {url:?}: {reason}")]
pub struct UrlError {
    /// The URL as given.
    pub url: String,
    /// What is wrong with it.
    pub reason: String,
}

impl LdapUrl {
    /// Parses `ldap://`, `ldaps://` or `ldapi://` URLs (scheme in any case).
    pub fn parse(url: &str) -> Result<LdapUrl, UrlError> {
        let err = |reason: &str| UrlError {
            url: url.to_string(),
            reason: reason.to_string(),
        };
        let Some((scheme, rest)) = url.split_once("://") else {
            return Err(err(
                "expected ldap://host[:port], ldaps://host[:port] or ldapi://<socket path>",
            ));
        };
        // The authority ends at the first '/', '?' or '#'; only a lone '/' may follow.
        let end = rest.find(['/', '?', '#']).unwrap_or(rest.len());
        let (authority, tail) = rest.split_at(end);
        if !tail.is_empty() && tail != "/" {
            return Err(err(
                "only the server part is accepted; a DN, attributes, scope, filter or \
                 fragment after it is not",
            ));
        }
        match scheme.to_ascii_lowercase().as_str() {
            "ldap" => {
                let (host, port) = host_port(authority, LDAP_PORT).map_err(|r| err(&r))?;
                Ok(LdapUrl::Ldap { host, port })
            }
            "ldaps" => {
                let (host, port) = host_port(authority, LDAPS_PORT).map_err(|r| err(&r))?;
                Ok(LdapUrl::Ldaps { host, port })
            }
            "ldapi" => {
                if authority.is_empty() {
                    return Err(err(
                        "no socket path; percent-encode it, e.g. ldapi://%2Fvar%2Frun%2Fldapi",
                    ));
                }
                let path = percent_decode(authority).map_err(|r| err(&r))?;
                if !path.starts_with('/') {
                    return Err(err("the socket path must be absolute (start with %2F)"));
                }
                Ok(LdapUrl::Ldapi {
                    path: PathBuf::from(path),
                })
            }
            _ => Err(err("the scheme must be ldap, ldaps or ldapi")),
        }
    }

    /// `ldap`, `ldaps` or `ldapi`.
    pub fn scheme(&self) -> &'static str {
        match self {
            LdapUrl::Ldap { .. } => "ldap",
            LdapUrl::Ldaps { .. } => "ldaps",
            LdapUrl::Ldapi { .. } => "ldapi",
        }
    }

    /// The host of a TCP URL (an IPv6 address without brackets).
    pub fn host(&self) -> Option<&str> {
        match self {
            LdapUrl::Ldap { host, .. } | LdapUrl::Ldaps { host, .. } => Some(host),
            LdapUrl::Ldapi { .. } => None,
        }
    }

    /// The port of a TCP URL.
    pub fn port(&self) -> Option<u16> {
        match self {
            LdapUrl::Ldap { port, .. } | LdapUrl::Ldaps { port, .. } => Some(*port),
            LdapUrl::Ldapi { .. } => None,
        }
    }

    /// The socket path of an `ldapi://` URL.
    pub fn socket_path(&self) -> Option<&Path> {
        match self {
            LdapUrl::Ldapi { path } => Some(path),
            _ => None,
        }
    }

    /// Whether the connection starts with a TLS handshake (`ldaps://`).
    pub fn is_tls(&self) -> bool {
        matches!(self, LdapUrl::Ldaps { .. })
    }

    /// `host:port` for messages and socket addresses, IPv6 hosts in brackets.
    pub fn authority(&self) -> String {
        match self {
            LdapUrl::Ldap { host, port } | LdapUrl::Ldaps { host, port } => {
                if host.contains(':') {
                    format!("[{host}]:{port}")
                } else {
                    format!("{host}:{port}")
                }
            }
            LdapUrl::Ldapi { path } => path.display().to_string(),
        }
    }
}

impl FromStr for LdapUrl {
    type Err = UrlError;

    fn from_str(s: &str) -> Result<LdapUrl, UrlError> {
        LdapUrl::parse(s)
    }
}

impl fmt::Display for LdapUrl {
    /// The canonical form: lowercase scheme, explicit port, encoded socket path.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            LdapUrl::Ldapi { path } => {
                write!(f, "ldapi://")?;
                for b in path.to_string_lossy().bytes() {
                    if b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b'_' | b'~') {
                        write!(f, "{}", char::from(b))?;
                    } else {
                        write!(f, "%{b:02X}")?;
                    }
                }
                Ok(())
            }
            _ => write!(f, "{}://{}", self.scheme(), self.authority()),
        }
    }
}

/// Splits `host[:port]` or `[v6]:port`; the port defaults to `default`.
fn host_port(authority: &str, default: u16) -> Result<(String, u16), String> {
    if authority.is_empty() {
        return Err("no host".into());
    }
    if authority.contains('@') {
        return Err("user information (user@host) is not accepted".into());
    }
    let (host, port) = if let Some(inner) = authority.strip_prefix('[') {
        let Some((v6, after)) = inner.split_once(']') else {
            return Err("an IPv6 address opened with '[' is not closed with ']'".into());
        };
        if v6.parse::<Ipv6Addr>().is_err() {
            return Err(format!("{v6:?} is not an IPv6 address"));
        }
        let port = match after {
            "" => None,
            p => Some(
                p.strip_prefix(':')
                    .ok_or_else(|| format!("unexpected {p:?} after the IPv6 address"))?,
            ),
        };
        (v6.to_string(), port)
    } else {
        let mut parts = authority.splitn(2, ':');
        let host = parts.next().unwrap_or_default();
        let port = parts.next();
        if port.is_some_and(|p| p.contains(':')) {
            return Err("an IPv6 address must be written in brackets, e.g. ldap://[::1]".into());
        }
        if host.is_empty() {
            return Err("no host".into());
        }
        if let Some(bad) = host
            .chars()
            .find(|c| !(c.is_ascii_alphanumeric() || matches!(c, '-' | '.' | '_')))
        {
            return Err(format!("{bad:?} is not allowed in a host name"));
        }
        (host.to_string(), port)
    };
    let port = match port {
        None => default,
        Some(p) => match p.parse::<u16>() {
            Ok(n) if n > 0 && p.bytes().all(|b| b.is_ascii_digit()) => n,
            _ => return Err(format!("{p:?} is not a port number (1-65535)")),
        },
    };
    Ok((host, port))
}

/// Decodes `%XX` escapes; the result must be UTF-8.
fn percent_decode(s: &str) -> Result<String, String> {
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while let Some(&b) = bytes.get(i) {
        if b == b'%' {
            let hex = bytes
                .get(i + 1..i + 3)
                .filter(|h| h.iter().all(u8::is_ascii_hexdigit))
                .and_then(|h| std::str::from_utf8(h).ok())
                .and_then(|h| u8::from_str_radix(h, 16).ok())
                .ok_or_else(|| format!("bad percent escape at byte {i}"))?;
            out.push(hex);
            i += 3;
        } else {
            out.push(b);
            i += 1;
        }
    }
    String::from_utf8(out).map_err(|_| "the socket path is not UTF-8".into())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ok(s: &str) -> LdapUrl {
        LdapUrl::parse(s).unwrap_or_else(|e| panic!("{s}: {e}"))
    }

    #[test]
    fn tcp_urls_with_and_without_ports() {
        assert_eq!(
            ok("ldap://dc1.example.com"),
            LdapUrl::Ldap {
                host: "dc1.example.com".into(),
                port: 389
            }
        );
        assert_eq!(
            ok("LDAPS://127.0.0.1:3636/"),
            LdapUrl::Ldaps {
                host: "127.0.0.1".into(),
                port: 3636
            }
        );
        assert_eq!(ok("ldaps://h").port(), Some(636));
        let v6 = ok("ldap://[::1]:1389");
        assert_eq!(v6.host(), Some("::1"));
        assert_eq!(v6.port(), Some(1389));
        assert_eq!(v6.to_string(), "ldap://[::1]:1389");
        assert_eq!(ok("ldaps://[fe80::1]").authority(), "[fe80::1]:636");
    }

    #[test]
    fn ldapi_paths_are_percent_decoded_and_reencoded() {
        let u = ok("ldapi://%2Ftmp%2Fkauri%2fldapi");
        assert_eq!(u.socket_path(), Some(Path::new("/tmp/kauri/ldapi")));
        assert_eq!(u.to_string(), "ldapi://%2Ftmp%2Fkauri%2Fldapi");
        assert_eq!(ok(&u.to_string()), u);
    }

    #[test]
    fn everything_else_is_refused_with_a_reason() {
        for bad in [
            "",
            "127.0.0.1:389",
            "http://example.com",
            "ldap://",
            "ldap://:389",
            "ldap://host:",
            "ldap://host:0",
            "ldap://host:65536",
            "ldap://host:+1",
            "ldap://host:x",
            "ldap://user@host",
            "ldap://::1",
            "ldap://[::1",
            "ldap://[not-v6]:389",
            "ldap://[::1]x",
            "ldap://host/dc=example,dc=com",
            "ldap://host?cn",
            "ldap://ho st",
            "ldapi://",
            "ldapi:///tmp/sock",
            "ldapi://relative",
            "ldapi://%2Ftmp%2",
            "ldapi://%2Ftmp%zz",
            "ldapi://%2Ftmp%+1",
            "ldapi://%2F%FF",
        ] {
            let e = LdapUrl::parse(bad).expect_err(bad);
            assert_eq!(e.url, bad);
            assert!(!e.reason.is_empty());
        }
    }
}
