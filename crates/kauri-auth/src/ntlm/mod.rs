//! NTLM (MS-NLMP) on the accepting side: the CHALLENGE a server sends, the verification of
//! an NTLMv2 AUTHENTICATE against the account's NT hash, and the session security (signing
//! and sealing with extended session security) that protects the messages after it.
//!
//! [`NtlmServer`] is one exchange. It needs no account database: the caller reads the user
//! and domain from the parsed AUTHENTICATE, finds the account's NT hash, and hands it back
//! to [`NtlmServer::verify`], applying its own account rules (lockout, disabled accounts)
//! around it.

mod client;
mod messages;
mod server;
mod session;

pub use client::NtlmClient;
pub use messages::{Authenticate, AvPairs, ServerNames};
pub use server::{NtlmServer, NtlmSettings, Verified};
pub use session::NtlmSession;

/// The eight bytes every NTLM message starts with.
pub const SIGNATURE: &[u8; 8] = b"NTLMSSP\0";

/// Negotiate flags (MS-NLMP 2.2.2.5) this server reads or sets.
pub mod flags {
    /// Strings are UTF-16LE.
    pub const UNICODE: u32 = 0x0000_0001;
    /// Strings are in the OEM code page.
    pub const OEM: u32 = 0x0000_0002;
    /// The client asks for the server's target name.
    pub const REQUEST_TARGET: u32 = 0x0000_0004;
    /// Message integrity.
    pub const SIGN: u32 = 0x0000_0010;
    /// Message confidentiality.
    pub const SEAL: u32 = 0x0000_0020;
    /// The LAN Manager session key (NTLMv1 only).
    pub const LM_KEY: u32 = 0x0000_0080;
    /// NTLM authentication.
    pub const NTLM: u32 = 0x0000_0200;
    /// An anonymous logon.
    pub const ANONYMOUS: u32 = 0x0000_0800;
    /// A dummy signature when neither SIGN nor SEAL is negotiated.
    pub const ALWAYS_SIGN: u32 = 0x0000_8000;
    /// The target name is a domain.
    pub const TARGET_TYPE_DOMAIN: u32 = 0x0001_0000;
    /// NTLMv2 session security (needed for signing and sealing here).
    pub const EXTENDED_SESSIONSECURITY: u32 = 0x0008_0000;
    /// The client asks for an identify-level token.
    pub const IDENTIFY: u32 = 0x0010_0000;
    /// The CHALLENGE carries target information (AV pairs).
    pub const TARGET_INFO: u32 = 0x0080_0000;
    /// The message carries a version structure.
    pub const VERSION: u32 = 0x0200_0000;
    /// 128-bit session keys.
    pub const N128: u32 = 0x2000_0000;
    /// The session key is exchanged (encrypted with the key exchange key).
    pub const KEY_EXCH: u32 = 0x4000_0000;
    /// 56-bit session keys.
    pub const N56: u32 = 0x8000_0000;
}
