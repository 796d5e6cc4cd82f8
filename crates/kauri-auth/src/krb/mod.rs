//! Kerberos V5 as a domain controller speaks it, without a transport: the encryption
//! types and checksums (RFC 3961, 3962, 4757), the messages (RFC 4120, RFC 3244, MS-KILE),
//! and the Privilege Attribute Certificate (MS-PAC) that carries a user's groups.

pub mod acceptor;
pub mod context;
pub mod crypto;
pub mod msg;
pub mod pac;
pub mod replay;
pub mod signer;
