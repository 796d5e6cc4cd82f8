//! The SASL security layer a negotiated mechanism gives a connection.

use crate::error::AuthError;

/// Integrity (and confidentiality) for the messages after a bind that negotiated them.
///
/// A connection's transport stacks TCP, TLS, this layer and the protocol's framing: on the
/// wire every protected message is a 4-byte big-endian length and the token [`wrap`]
/// returns. NTLM implements it now; Kerberos (GSS-API wrap tokens) is another
/// implementation of the same step.
///
/// [`wrap`]: SecurityLayer::wrap
pub trait SecurityLayer: Send + Sync {
    /// Protects one outgoing message.
    fn wrap(&mut self, plain: &[u8]) -> Vec<u8>;
    /// Checks (and decrypts) one incoming token; any failure must end the connection.
    fn unwrap(&mut self, token: &[u8]) -> Result<Vec<u8>, AuthError>;
    /// Whether messages are encrypted, not only signed.
    fn sealed(&self) -> bool;
}
