//! Why an authentication exchange failed.

use thiserror::Error;

/// An authentication exchange or a protected message that cannot be accepted.
#[derive(Debug, Error, Clone, PartialEq, Eq)]
pub enum AuthError {
    /// A token that does not parse: truncated, wrong signature or message type, fields
    /// pointing outside the message.
    #[error("malformed {what}: {why}")]
    Malformed {
        /// The token kind (`NTLM AUTHENTICATE`, `SPNEGO token`, …).
        what: &'static str,
        /// What is wrong with it.
        why: String,
    },
    /// A well-formed token that asks for something this server does not do.
    #[error("{0}")]
    Unsupported(String),
    /// The credentials do not prove the account's password (or the MIC does not match).
    #[error("the logon failed: {0}")]
    LogonFailure(String),
    /// A token that arrives when the exchange does not expect it.
    #[error("unexpected {0} at this point of the exchange")]
    OutOfSequence(&'static str),
    /// A protected message whose signature does not verify: altered, replayed or
    /// reordered.
    #[error("a protected message failed its integrity check")]
    BadSignature,
}

impl AuthError {
    pub(crate) fn malformed(what: &'static str, why: impl Into<String>) -> AuthError {
        AuthError::Malformed {
            what,
            why: why.into(),
        }
    }
}
