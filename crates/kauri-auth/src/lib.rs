//! Authentication protocols, independent of the transport that carries them.
//!
//! [`ntlm`] verifies NTLM (MS-NLMP) logons against an account's NT hash and gives the
//! session keys that sign and seal what follows; [`spnego`] reads and writes the SPNEGO
//! tokens (RFC 4178, MS-SPNG) that carry NTLM (and, later, Kerberos) inside LDAP's
//! GSS-SPNEGO SASL mechanism; [`layer::SecurityLayer`] is what a connection asks of any
//! negotiated mechanism once the bind is over: wrap outgoing messages, unwrap incoming ones.
//! Nothing here knows LDAP, so NETLOGON or SMB can use the same verifier.

pub mod binding;
pub mod crypto;
mod der;
pub mod error;
pub mod krb;
pub mod layer;
pub mod ntlm;
pub mod spnego;

pub use error::AuthError;
pub use layer::SecurityLayer;
