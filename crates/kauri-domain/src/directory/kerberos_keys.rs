//! An account's long-term keys as Kerberos uses them, and the choice of encryption
//! types: which key answers a client, which encrypts a ticket, which kind of session key
//! a ticket gets — following the account's `msDS-SupportedEncryptionTypes` as AD does.

use super::kdc::KdcAccount;
use kauri_auth::krb::crypto::{Enctype, Key};

/// msDS-SupportedEncryptionTypes bits (MS-KILE 2.2.7).
pub mod bits {
    /// RC4-HMAC.
    pub const RC4: u32 = 0x4;
    /// AES128-CTS-HMAC-SHA1-96.
    pub const AES128: u32 = 0x8;
    /// AES256-CTS-HMAC-SHA1-96.
    pub const AES256: u32 = 0x10;
    /// AES session keys even where tickets use RC4.
    pub const AES_SK: u32 = 0x20;
}

/// AD's default for accounts without msDS-SupportedEncryptionTypes (its
/// DefaultDomainSupportedEncTypes since 2022): RC4 tickets with AES session keys.
pub const DEFAULT_SUPPORTED: u32 = bits::RC4 | bits::AES_SK;

/// Our preference among encryption types, strongest first.
pub const PREFERENCE: [Enctype; 3] = [Enctype::Aes256Sha1, Enctype::Aes128Sha1, Enctype::Rc4Hmac];

/// The bit of an encryption type in msDS-SupportedEncryptionTypes.
pub fn bit(e: Enctype) -> u32 {
    match e {
        Enctype::Aes256Sha1 => bits::AES256,
        Enctype::Aes128Sha1 => bits::AES128,
        Enctype::Rc4Hmac => bits::RC4,
    }
}

/// One long-term key with the salt a client derives it with.
#[derive(Clone)]
pub struct LongTermKey {
    /// The key.
    pub key: Key,
    /// The salt (empty for RC4, which has none).
    pub salt: String,
    /// The key version number.
    pub kvno: u32,
}

/// The current keys of an account, strongest first: AES keys when the password was set
/// since Kauri derives them, and always the RC4 key (the NT hash).
pub fn current_keys(acct: &KdcAccount) -> Vec<LongTermKey> {
    let Some(s) = &acct.secrets else {
        return Vec::new();
    };
    let mut out = Vec::new();
    if let Some(k) = s.kerberos() {
        if let Ok(key) = Key::new(Enctype::Aes256Sha1, &k.aes256) {
            out.push(LongTermKey {
                key,
                salt: k.salt.clone(),
                kvno: acct.kvno,
            });
        }
        if let Ok(key) = Key::new(Enctype::Aes128Sha1, &k.aes128) {
            out.push(LongTermKey {
                key,
                salt: k.salt.clone(),
                kvno: acct.kvno,
            });
        }
    }
    if let Ok(key) = Key::new(Enctype::Rc4Hmac, s.nt_hash()) {
        out.push(LongTermKey {
            key,
            salt: String::new(),
            kvno: acct.kvno,
        });
    }
    out
}

/// The keys of the password before the current one (kvno one less), for tickets issued
/// under it.
pub fn previous_keys(acct: &KdcAccount) -> Vec<LongTermKey> {
    let Some(p) = acct.secrets.as_ref().and_then(|s| s.previous()) else {
        return Vec::new();
    };
    let kvno = acct.kvno.saturating_sub(1);
    let mut out = Vec::new();
    if let Some(k) = &p.kerberos {
        for (e, bytes) in [
            (Enctype::Aes256Sha1, &k.aes256[..]),
            (Enctype::Aes128Sha1, &k.aes128[..]),
        ] {
            if let Ok(key) = Key::new(e, bytes) {
                out.push(LongTermKey {
                    key,
                    salt: k.salt.clone(),
                    kvno,
                });
            }
        }
    }
    if let Ok(key) = Key::new(Enctype::Rc4Hmac, &p.nt_hash) {
        out.push(LongTermKey {
            key,
            salt: String::new(),
            kvno,
        });
    }
    out
}

/// The account's supported encryption types, AD's default when unset. krbtgt takes every
/// type Kauri has (a DC's account sets the attribute at provisioning).
pub fn supported(acct: &KdcAccount) -> u32 {
    match acct.supported_enctypes {
        Some(v) if v & (bits::RC4 | bits::AES128 | bits::AES256) != 0 => v,
        _ if acct.is_krbtgt => bits::RC4 | bits::AES128 | bits::AES256,
        _ => DEFAULT_SUPPORTED,
    }
}

/// The key a ticket for this service is encrypted with: its strongest key among the
/// types it supports (krbtgt: its strongest key).
pub fn ticket_key(acct: &KdcAccount) -> Option<LongTermKey> {
    let allowed = supported(acct);
    let keys = current_keys(acct);
    // None when the account allows no type it has a key for (an AES-only account whose
    // password predates AES keys): KDC_ERR_ETYPE_NOSUPP, never a quiet RC4 downgrade.
    keys.iter()
        .find(|k| allowed & bit(k.key.etype()) != 0)
        .cloned()
}

/// The session key type for a ticket to `service`: the first type in the client's list
/// (its preference) that Kauri has and the service accepts for session keys.
pub fn session_etype(client_etypes: &[i32], service: &KdcAccount) -> Option<Enctype> {
    let s = supported(service);
    let mut ok = s & (bits::RC4 | bits::AES128 | bits::AES256);
    if s & bits::AES_SK != 0 {
        ok |= bits::AES128 | bits::AES256;
    }
    client_etypes
        .iter()
        .filter_map(|n| Enctype::from_number(*n))
        .find(|e| ok & bit(*e) != 0)
}

/// The client's keys a reply may be encrypted with, in the client's order of preference:
/// only types the client listed and (when the account restricts them) the account allows.
pub fn client_keys(acct: &KdcAccount, client_etypes: &[i32]) -> Vec<LongTermKey> {
    let keys = current_keys(acct);
    let allowed = match acct.supported_enctypes {
        Some(v) if v & (bits::RC4 | bits::AES128 | bits::AES256) != 0 => v,
        _ => u32::MAX,
    };
    client_etypes
        .iter()
        .filter_map(|n| Enctype::from_number(*n))
        .filter(|e| allowed & bit(*e) != 0)
        .filter_map(|e| keys.iter().find(|k| k.key.etype() == e).cloned())
        .collect()
}

/// The key of a ticket's encryption type and version (`None`: any version) among an
/// account's current and previous keys; `Err(true)` when no key has that version (an
/// unknown kvno, KRB_AP_ERR_BADKEYVER), `Err(false)` when none has that type.
pub fn key_for(acct: &KdcAccount, etype: i32, kvno: Option<u32>) -> Result<LongTermKey, bool> {
    let mut version_known = false;
    for k in current_keys(acct).into_iter().chain(previous_keys(acct)) {
        if kvno.is_some_and(|v| v != k.kvno) {
            continue;
        }
        version_known = true;
        if k.key.etype().number() == etype {
            return Ok(k);
        }
    }
    Err(!version_known)
}
