//! How one replayed operation ended, in the words the run's failure table uses.

use std::fmt;

/// Why an operation failed: an LDAP result code's name, a Kerberos error, a timeout, or the
/// network error's kind. Runs count failures by this text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Failure(pub String);

impl Failure {
    /// A failure with this reason.
    pub fn new(reason: String) -> Failure {
        Failure(reason)
    }

    /// A network error, named by its kind (`connection refused`, `timed out`, …).
    pub fn io(e: std::io::Error) -> Failure {
        Failure(e.kind().to_string())
    }

    /// An LDAP client error: the result code's name when the server answered, else the
    /// kind of network trouble.
    pub fn client(e: kauri_ldap_client::ClientError) -> Failure {
        use kauri_ldap_client::ClientError as E;
        match e {
            E::Io(io) => Failure::io(io),
            E::Connect { source, .. } => Failure::io(source),
            E::Timeout { .. } => Failure("timeout".into()),
            E::Closed => Failure("connection closed".into()),
            E::Result { code, .. } => Failure::ldap(code),
            other => {
                let text = other.to_string();
                let short: String = text.chars().take(60).collect();
                Failure(short)
            }
        }
    }

    /// A non-success LDAP result, named as RFC 4511 names it.
    pub fn ldap(code: kauri_ldap_client::proto::ResultCode) -> Failure {
        Failure(kauri_ldap_client::code_name(code).to_string())
    }
}

impl fmt::Display for Failure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}
