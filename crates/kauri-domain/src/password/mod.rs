//! Passwords as an AD domain controller handles them: the quoted UTF-16 `unicodePwd`
//! form clients send ([`decode_unicode_pwd`]), the hashes the DC keeps instead of the
//! password ([`StoredSecrets`]), their encryption at rest ([`SecretKey`]), the domain's
//! password and lockout rules ([`PasswordPolicy`]), and the sub-codes a refused bind
//! reports ([`LogonFailure`]).

mod hashes;
mod logon;
mod policy;
mod seal;
mod secrets;
mod time;
mod unicode_pwd;

use std::path::PathBuf;

pub use hashes::{
    crypt, hash_crypt, nt_hash, random_crypt_salt, verify_crypt, CryptAlgorithm,
    DEFAULT_CRYPT_ROUNDS, MAX_CRYPT_ROUNDS, MIN_CRYPT_ROUNDS,
};
pub use logon::LogonFailure;
pub use policy::{AttributeSource, ComplexityFailure, PasswordPolicy, PolicyViolation};
pub use seal::{SecretKey, KEY_LEN};
pub use secrets::{CryptSchemes, KerberosKeys, PreviousKeys, StoredSecrets};
pub use time::{
    ad_time_from_unix, ad_time_now, is_expired, lockout_active, must_change_password,
    unix_from_ad_time, AD_EPOCH_TO_UNIX_SECS, AD_TICKS_PER_SECOND,
};
pub use unicode_pwd::{decode_unicode_pwd, encode_unicode_pwd};

/// A random password that meets AD's complexity rule (for "generate one for me"
/// requests and demo accounts): 16 random letters and digits, then one of each kind.
pub fn generate_password() -> Result<String, PasswordError> {
    let mut raw = [0u8; 16];
    getrandom::fill(&mut raw).map_err(|e| PasswordError::Random(e.to_string()))?;
    let alphabet = b"ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz23456789";
    let mut p: String = raw
        .iter()
        .map(|b| char::from(alphabet[usize::from(*b) % alphabet.len()]))
        .collect();
    p.push_str("-7aZ");
    Ok(p)
}

/// Why a password value, stored secret, sealed blob, key file or policy attribute was
/// refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PasswordError {
    /// A `unicodePwd` value must be whole UTF-16 code units.
    #[error("unicodePwd value has an odd number of bytes ({0})")]
    OddLength(usize),
    /// A `unicodePwd` value must be the password wrapped in double quotes.
    #[error("unicodePwd value is not enclosed in double quotes")]
    NotQuoted,
    /// A `unicodePwd` value must decode as UTF-16LE (no unpaired surrogates).
    #[error("unicodePwd value is not valid UTF-16LE")]
    BadUtf16,
    /// A password hash scheme name that is not `CryptSHA256` or `CryptSHA512`.
    #[error("unknown password hash scheme {0:?} (CryptSHA256 and CryptSHA512 are known)")]
    UnknownScheme(String),
    /// A crypt setting or hash string is not `$5$`/`$6$` SHA-crypt.
    #[error("bad SHA-crypt setting: {0}")]
    BadCryptSetting(String),
    /// The operating system gave no random bytes (salt, nonce or key).
    #[error("no randomness available: {0}")]
    Random(String),
    /// An encoded value starts with a format version this code does not know.
    #[error("unknown format version {0}")]
    UnknownVersion(u8),
    /// Encoded stored secrets are truncated or malformed.
    #[error("malformed stored secrets: {0}")]
    BadEncoding(&'static str),
    /// The key file could not be created or read, or is unfit for use.
    #[error("key file {}: {reason}", path.display())]
    KeyFile {
        /// The key file's path.
        path: PathBuf,
        /// What is wrong with it.
        reason: String,
    },
    /// A sealed value did not open: wrong key, wrong object, or altered bytes.
    #[error("sealed value does not open (wrong key, wrong object, or altered)")]
    Open,
    /// Sealing failed (the plaintext is beyond the cipher's limits).
    #[error("value could not be sealed")]
    Seal,
    /// The Kerberos keys of a password could not be derived.
    #[error("Kerberos keys: {0}")]
    Kerberos(String),
    /// A password-policy attribute holds a value of the wrong form.
    #[error("attribute {attr}: {value:?} is not a valid value")]
    BadAttribute {
        /// The attribute's name.
        attr: String,
        /// The value as found.
        value: String,
    },
}

/// Fills `buf` from the operating system's random source.
fn random_fill(buf: &mut [u8]) -> Result<(), PasswordError> {
    getrandom::fill(buf).map_err(|e| PasswordError::Random(e.to_string()))
}
