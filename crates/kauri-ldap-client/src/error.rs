//! What can go wrong talking to a server, and turning a non-success result into an error.
//!
//! A response with a non-success result code is data, not an error: the client returns it
//! as it came. [`CheckResult::check`] turns one into a [`ClientError::Result`] where the
//! caller only wants to go on after success.

use std::time::Duration;

use kauri_ldap_proto::{BindResponse, ExtendedResponse, LdapResult, ResultCode};

use crate::url::UrlError;

/// Why an operation could not be carried out (or, through [`CheckResult::check`], did not
/// succeed).
#[derive(Debug, thiserror::Error)]
pub enum ClientError {
    /// The URL could not be parsed.
    #[error(transparent)]
    Url(#[from] UrlError),
    /// The connection could not be opened.
    #[error("cannot connect to {addr}: {source}")]
    Connect {
        /// The address tried (`host:port` or the socket path).
        addr: String,
        /// Why.
        source: std::io::Error,
    },
    /// TLS could not be set up or its handshake failed (untrusted or mismatched
    /// certificate, unreadable CA file, …).
    #[error("TLS: {0}")]
    Tls(String),
    /// Reading or writing the connection failed; the connection is unusable after it.
    #[error("I/O error on the LDAP connection: {0}")]
    Io(#[from] std::io::Error),
    /// The server closed the connection, or the client did (after unbind or a fatal error).
    #[error("the LDAP connection is closed")]
    Closed,
    /// A response could not be decoded.
    #[error("undecodable response: {0}")]
    Decode(String),
    /// The server did not answer in time.
    #[error("{op}: no answer within {after:?}")]
    Timeout {
        /// What was waited for.
        op: String,
        /// The limit that passed.
        after: Duration,
    },
    /// A result other than success, from [`CheckResult::check`] (or an operation whose
    /// only useful outcome is success, such as StartTLS).
    #[error("{op} failed: {} ({}){}{}", code_name(*code), code.0,
        if message.is_empty() { String::new() } else { format!(": {message}") },
        if matched_dn.is_empty() { String::new() } else { format!(" (matched {matched_dn:?})") })]
    Result {
        /// The operation, as the caller named it.
        op: String,
        /// The result code.
        code: ResultCode,
        /// The server's diagnostic message.
        message: String,
        /// The matched DN, when the server gave one.
        matched_dn: String,
    },
    /// An unsolicited notification (message id 0), e.g. a notice of disconnection.
    #[error("the server sent an unsolicited notification{}: {} ({}){}",
        oid.as_deref().map(|o| format!(" {o}")).unwrap_or_default(), code_name(*code), code.0,
        if message.is_empty() { String::new() } else { format!(": {message}") })]
    Unsolicited {
        /// The notification's OID (`1.3.6.1.4.1.1466.20036` for a notice of
        /// disconnection).
        oid: Option<String>,
        /// Its result code.
        code: ResultCode,
        /// Its diagnostic message.
        message: String,
    },
    /// The server answered with something the request does not allow.
    #[error("protocol error: {0}")]
    Protocol(String),
    /// The client refused a request it cannot send in its state (StartTLS on an
    /// encrypted connection, a page size of 0, …).
    #[error("invalid request: {0}")]
    Invalid(String),
}

/// Responses that carry an [`LdapResult`], to turn a non-success one into an error.
pub trait CheckResult: Sized {
    /// The result inside.
    fn ldap_result(&self) -> &LdapResult;

    /// `self` if the result code is success (0), otherwise a [`ClientError::Result`] naming
    /// `op`.
    fn check(self, op: &str) -> Result<Self, ClientError> {
        let r = self.ldap_result();
        if r.code == ResultCode::SUCCESS {
            Ok(self)
        } else {
            Err(ClientError::Result {
                op: op.to_string(),
                code: r.code,
                message: r.message.clone(),
                matched_dn: r.matched_dn.clone(),
            })
        }
    }
}

impl CheckResult for LdapResult {
    fn ldap_result(&self) -> &LdapResult {
        self
    }
}

impl CheckResult for BindResponse {
    fn ldap_result(&self) -> &LdapResult {
        &self.result
    }
}

impl CheckResult for ExtendedResponse {
    fn ldap_result(&self) -> &LdapResult {
        &self.result
    }
}

/// The RFC 4511 name of a result code (AD's where it adds codes), `unknown` for others.
pub fn code_name(code: ResultCode) -> &'static str {
    match code.0 {
        0 => "success",
        1 => "operationsError",
        2 => "protocolError",
        3 => "timeLimitExceeded",
        4 => "sizeLimitExceeded",
        5 => "compareFalse",
        6 => "compareTrue",
        7 => "authMethodNotSupported",
        8 => "strongerAuthRequired",
        10 => "referral",
        11 => "adminLimitExceeded",
        12 => "unavailableCriticalExtension",
        13 => "confidentialityRequired",
        14 => "saslBindInProgress",
        16 => "noSuchAttribute",
        17 => "undefinedAttributeType",
        18 => "inappropriateMatching",
        19 => "constraintViolation",
        20 => "attributeOrValueExists",
        21 => "invalidAttributeSyntax",
        32 => "noSuchObject",
        33 => "aliasProblem",
        34 => "invalidDNSyntax",
        36 => "aliasDereferencingProblem",
        48 => "inappropriateAuthentication",
        49 => "invalidCredentials",
        50 => "insufficientAccessRights",
        51 => "busy",
        52 => "unavailable",
        53 => "unwillingToPerform",
        54 => "loopDetect",
        64 => "namingViolation",
        65 => "objectClassViolation",
        66 => "notAllowedOnNonLeaf",
        67 => "notAllowedOnRDN",
        68 => "entryAlreadyExists",
        69 => "objectClassModsProhibited",
        71 => "affectsMultipleDSAs",
        80 => "other",
        118 => "canceled",
        119 => "noSuchOperation",
        120 => "tooLate",
        121 => "cannotCancel",
        122 => "assertionFailed",
        123 => "authorizationDenied",
        _ => "unknown",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn check_passes_success_and_names_failures() {
        assert!(LdapResult::success().check("add").is_ok());
        let mut r = LdapResult::new(ResultCode::ENTRY_ALREADY_EXISTS, "entry exists");
        r.matched_dn = "dc=example,dc=com".into();
        let e = r.check("adding cn=x").unwrap_err();
        assert_eq!(
            e.to_string(),
            "adding cn=x failed: entryAlreadyExists (68): entry exists \
             (matched \"dc=example,dc=com\")"
        );
        let e = LdapResult::new(ResultCode(4711), "")
            .check("x")
            .unwrap_err();
        assert_eq!(e.to_string(), "x failed: unknown (4711)");
    }
}
