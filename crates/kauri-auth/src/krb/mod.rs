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

use crypto::{Enctype, Key};
use msg::EncryptionKey;

/// The key a message carries (a session key or a subkey), when its type is one Kauri
/// speaks and its length fits.
pub fn key_of(k: &EncryptionKey) -> Option<Key> {
    Enctype::from_number(k.keytype).and_then(|e| Key::new(e, &k.keyvalue).ok())
}

/// A key as a message carries it.
pub fn encryption_key(k: &Key) -> EncryptionKey {
    EncryptionKey {
        keytype: k.etype().number(),
        keyvalue: k.bytes().to_vec(),
    }
}
