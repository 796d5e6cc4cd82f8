//! Kerberos cryptography for Kauri's KDC, GSS acceptor and kpasswd server.
//!
//! Implements the RFC 3961 framework for the three encryption types an
//! Active Directory domain uses today:
//!
//! * aes256-cts-hmac-sha1-96 (18) and aes128-cts-hmac-sha1-96 (17), RFC 3962,
//!   with their checksums hmac-sha1-96-aes256 (16) and hmac-sha1-96-aes128
//!   (15);
//! * arcfour-hmac (23), RFC 4757, with its checksum hmac-md5 (-138).
//!
//! Everything goes through [`Key`]: string-to-key, encryption with an
//! integrity check, keyed checksums, and the RFC 3961 PRF / RFC 6113
//! KRB-FX-CF2 that FAST needs. Key usages are the RFC 4120 numbers; the RC4
//! usage translation of RFC 4757 is applied inside this module.
//!
//! No function panics on any input; malformed input gives a [`CryptoError`].

mod aes_sha1;
mod nfold;
mod random;
mod rc4_hmac;

#[cfg(test)]
mod tests;

use core::fmt;

use subtle::ConstantTimeEq;
use zeroize::{Zeroize, ZeroizeOnDrop, Zeroizing};

use self::aes_sha1::{V128, V256};

/// Default PBKDF2 iteration count of RFC 3962 (used when a principal has no
/// s2kparams, which is always the case in Active Directory).
pub const DEFAULT_PBKDF2_ITERATIONS: u32 = 4096;

/// Largest PBKDF2 iteration count [`Key::from_password_iterations`] accepts.
/// MIT krb5 refuses counts from 2^24 up (and 0, which RFC 3962 defines as
/// 2^32); anything this large is a denial-of-service attempt, not a policy.
pub const MAX_PBKDF2_ITERATIONS: u32 = 0x00ff_ffff;

/// Checksum type number of hmac-sha1-96-aes128 (RFC 3962).
pub const CKSUMTYPE_HMAC_SHA1_96_AES128: i32 = 15;
/// Checksum type number of hmac-sha1-96-aes256 (RFC 3962).
pub const CKSUMTYPE_HMAC_SHA1_96_AES256: i32 = 16;
/// Checksum type number of the RC4 keyed checksum hmac-md5 (RFC 4757 §4,
/// MS-PAC "KERB_CHECKSUM_HMAC_MD5").
pub const CKSUMTYPE_HMAC_MD5: i32 = -138;

/// Kerberos encryption types Kauri supports.
///
/// The derived ordering (`Aes256Sha1 < Aes128Sha1 < Rc4Hmac`) is the order
/// of preference, strongest first, so sorting a list puts the best first.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Enctype {
    /// aes256-cts-hmac-sha1-96, etype 18.
    Aes256Sha1,
    /// aes128-cts-hmac-sha1-96, etype 17.
    Aes128Sha1,
    /// arcfour-hmac (RC4-HMAC, NT-hash keys), etype 23.
    Rc4Hmac,
}

impl Enctype {
    /// Every supported enctype, strongest first, so callers can iterate
    /// when building ETYPE-INFO2 or a keytab.
    pub const ALL: [Enctype; 3] = [Enctype::Aes256Sha1, Enctype::Aes128Sha1, Enctype::Rc4Hmac];

    /// Maps an RFC 3961 etype number from the wire or the directory to an
    /// enctype; `None` for anything Kauri does not implement (DES, 3DES,
    /// RC4-exp, the RFC 8009 AES-SHA2 types, ...).
    pub fn from_number(n: i32) -> Option<Enctype> {
        match n {
            18 => Some(Enctype::Aes256Sha1),
            17 => Some(Enctype::Aes128Sha1),
            23 => Some(Enctype::Rc4Hmac),
            _ => None,
        }
    }

    /// The etype number used on the wire (EncryptedData.etype, ETYPE-INFO2,
    /// keytabs).
    pub fn number(self) -> i32 {
        match self {
            Enctype::Aes256Sha1 => 18,
            Enctype::Aes128Sha1 => 17,
            Enctype::Rc4Hmac => 23,
        }
    }

    /// Key length in bytes (32, 16, 16), for validating stored keys.
    pub fn key_len(self) -> usize {
        match self {
            Enctype::Aes256Sha1 => 32,
            Enctype::Aes128Sha1 | Enctype::Rc4Hmac => 16,
        }
    }

    /// The mandatory keyed checksum type of this enctype (RFC 3961 §4): 16,
    /// 15, or -138. PAC signatures and authenticator checksums use it.
    pub fn checksum_type(self) -> i32 {
        match self {
            Enctype::Aes256Sha1 => CKSUMTYPE_HMAC_SHA1_96_AES256,
            Enctype::Aes128Sha1 => CKSUMTYPE_HMAC_SHA1_96_AES128,
            Enctype::Rc4Hmac => CKSUMTYPE_HMAC_MD5,
        }
    }

    /// MIT krb5's name of the enctype, as used in krb5.conf, kdc.conf and
    /// `ktutil`, for logs and configuration.
    pub fn name(self) -> &'static str {
        match self {
            Enctype::Aes256Sha1 => "aes256-cts-hmac-sha1-96",
            Enctype::Aes128Sha1 => "aes128-cts-hmac-sha1-96",
            Enctype::Rc4Hmac => "arcfour-hmac",
        }
    }

    /// Length of the random confounder prepended to every plaintext (16 for
    /// AES, 8 for RC4); [`Key::encrypt_with_confounder`] requires exactly
    /// this many bytes.
    pub fn confounder_len(self) -> usize {
        match self {
            Enctype::Aes256Sha1 | Enctype::Aes128Sha1 => aes_sha1::BLOCK,
            Enctype::Rc4Hmac => rc4_hmac::CONFOUNDER_LEN,
        }
    }

    /// Bytes that encryption adds to a plaintext (confounder plus integrity
    /// tag: 28 for AES, 24 for RC4), so callers can size buffers and
    /// reject ciphertexts early.
    pub fn ciphertext_overhead(self) -> usize {
        match self {
            Enctype::Aes256Sha1 | Enctype::Aes128Sha1 => aes_sha1::MIN_CIPHERTEXT,
            Enctype::Rc4Hmac => rc4_hmac::MIN_CIPHERTEXT,
        }
    }
}

impl fmt::Display for Enctype {
    /// Displays the MIT name, e.g. `aes256-cts-hmac-sha1-96`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl TryFrom<i32> for Enctype {
    type Error = CryptoError;

    /// Like [`Enctype::from_number`] but with an error that names the
    /// unsupported number, for `?` in request handlers.
    fn try_from(n: i32) -> Result<Self, Self::Error> {
        Enctype::from_number(n).ok_or(CryptoError::UnsupportedEnctype(n))
    }
}

/// Length in bytes of a checksum of the given type, for the checksum types
/// this module computes (15 and 16: 12 bytes; -138: 16 bytes); `None` for
/// anything else. Lets a parser reject a wrongly sized checksum early.
pub fn checksum_len(cksumtype: i32) -> Option<usize> {
    match cksumtype {
        CKSUMTYPE_HMAC_SHA1_96_AES128 | CKSUMTYPE_HMAC_SHA1_96_AES256 => Some(aes_sha1::MAC_LEN),
        CKSUMTYPE_HMAC_MD5 => Some(rc4_hmac::CHECKSUM_LEN),
        _ => None,
    }
}

/// Everything that can go wrong in Kerberos cryptography.
///
/// Integrity failures carry no detail on purpose: a KDC maps both
/// [`CryptoError::IntegrityFailure`] and [`CryptoError::BadChecksum`] to
/// KRB_AP_ERR_BAD_INTEGRITY / KRB_AP_ERR_MODIFIED, and must not tell an
/// attacker more.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum CryptoError {
    /// Key material of the wrong length for its enctype.
    #[error("bad key length for {etype}: expected {expected} bytes, got {got}")]
    BadKeyLength {
        /// The enctype the key was meant for.
        etype: Enctype,
        /// Required length.
        expected: usize,
        /// Supplied length.
        got: usize,
    },
    /// Decryption failed its integrity check: wrong key, wrong key usage,
    /// or a modified ciphertext.
    #[error("integrity check failed (wrong key, wrong key usage, or modified ciphertext)")]
    IntegrityFailure,
    /// A keyed checksum did not verify (wrong key, usage or data, or a
    /// checksum of the wrong length).
    #[error("checksum verification failed")]
    BadChecksum,
    /// The ciphertext cannot even hold a confounder and an integrity tag.
    #[error("ciphertext too short: {got} bytes, need at least {min}")]
    CiphertextTooShort {
        /// Supplied length.
        got: usize,
        /// Minimum length for the enctype.
        min: usize,
    },
    /// An etype number this module does not implement.
    #[error("unsupported encryption type {0}")]
    UnsupportedEnctype(i32),
    /// A checksum type number this module does not implement.
    #[error("unsupported checksum type {0}")]
    UnsupportedChecksumType(i32),
    /// A supported checksum type that does not belong to the key's enctype
    /// (for example hmac-md5 with an AES key).
    #[error("checksum type {cksumtype} cannot be used with an {etype} key")]
    ChecksumTypeMismatch {
        /// The checksum type asked for.
        cksumtype: i32,
        /// The key's enctype.
        etype: Enctype,
    },
    /// A caller-supplied confounder of the wrong length.
    #[error("bad confounder length for {etype}: expected {expected} bytes, got {got}")]
    BadConfounderLength {
        /// The key's enctype.
        etype: Enctype,
        /// Required length.
        expected: usize,
        /// Supplied length.
        got: usize,
    },
    /// A PBKDF2 iteration count of 0 (2^32 per RFC 3962) or above
    /// [`MAX_PBKDF2_ITERATIONS`].
    #[error("unsupported string-to-key iteration count {0}")]
    BadIterationCount(u32),
    /// The operating system's random number generator failed.
    #[error("no randomness available from the operating system")]
    NoRandomness,
    /// A condition the code rules out by construction; seeing it is a bug.
    #[error("internal cryptography error: {0}")]
    Internal(&'static str),
}

/// A Kerberos key: an enctype and its key bytes.
///
/// Clone is cheap (no heap). The bytes are zeroized on drop and never
/// printed: `Debug` shows only the enctype.
#[derive(Clone)]
pub struct Key {
    /// The enctype, which fixes the key length.
    etype: Enctype,
    /// Key bytes; only the first `etype.key_len()` are used, the rest
    /// stay zero.
    bytes: [u8; 32],
}

impl Drop for Key {
    fn drop(&mut self) {
        self.bytes.zeroize();
    }
}

impl ZeroizeOnDrop for Key {}

impl fmt::Debug for Key {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Key")
            .field("etype", &self.etype)
            .finish_non_exhaustive()
    }
}

impl Key {
    /// Wraps stored key bytes (from the directory, a keytab, or a decrypted
    /// EncryptionKey) after checking their length against the enctype.
    pub fn new(etype: Enctype, bytes: &[u8]) -> Result<Key, CryptoError> {
        let expected = etype.key_len();
        if bytes.len() != expected {
            return Err(CryptoError::BadKeyLength {
                etype,
                expected,
                got: bytes.len(),
            });
        }
        let mut key = Key {
            etype,
            bytes: [0u8; 32],
        };
        key.bytes
            .get_mut(..expected)
            .ok_or(CryptoError::Internal("key buffer"))?
            .copy_from_slice(bytes);
        Ok(key)
    }

    /// String-to-key with the default parameters: for AES, PBKDF2-HMAC-SHA1
    /// with 4096 iterations then DK(tkey, "kerberos") (RFC 3962 §4); for
    /// RC4, the NT hash (MD4 of the UTF-16LE password; `salt` is ignored).
    /// Active Directory's salt for users is the upper-case realm followed
    /// by the sAMAccountName, e.g. "KAURI.TESTAdministrator".
    pub fn from_password(etype: Enctype, password: &str, salt: &str) -> Result<Key, CryptoError> {
        Key::from_password_iterations(etype, password, salt, DEFAULT_PBKDF2_ITERATIONS)
    }

    /// String-to-key with an explicit PBKDF2 iteration count (the decoded
    /// s2kparams of RFC 3962). The count must be 1..=[`MAX_PBKDF2_ITERATIONS`];
    /// RC4 has no parameters and ignores it.
    pub fn from_password_iterations(
        etype: Enctype,
        password: &str,
        salt: &str,
        iterations: u32,
    ) -> Result<Key, CryptoError> {
        match etype {
            Enctype::Rc4Hmac => Key::new(etype, &rc4_hmac::nt_hash(password)),
            Enctype::Aes128Sha1 | Enctype::Aes256Sha1 => {
                check_iterations(iterations)?;
                let len = etype.key_len();
                let mut tkey = Zeroizing::new([0u8; 32]);
                let tkey = tkey
                    .get_mut(..len)
                    .ok_or(CryptoError::Internal("s2k buffer"))?;
                aes_sha1::pbkdf2_sha1(password.as_bytes(), salt.as_bytes(), iterations, tkey);
                Key::from_pbkdf2_output(etype, tkey)
            }
        }
    }

    /// The AES256, AES128 and RC4 keys of one password, in that order, as a
    /// password set needs them. PBKDF2 runs once: its first 16 output bytes
    /// are exactly the AES128 tkey, so the AES128 key costs one DK instead
    /// of another 4096 iterations.
    pub fn all_from_password(password: &str, salt: &str) -> Result<[Key; 3], CryptoError> {
        let mut tkey = Zeroizing::new([0u8; 32]);
        aes_sha1::pbkdf2_sha1(
            password.as_bytes(),
            salt.as_bytes(),
            DEFAULT_PBKDF2_ITERATIONS,
            &mut tkey[..],
        );
        let aes256 = Key::from_pbkdf2_output(Enctype::Aes256Sha1, &tkey[..])?;
        let aes128 = Key::from_pbkdf2_output(
            Enctype::Aes128Sha1,
            tkey.get(..16).ok_or(CryptoError::Internal("s2k buffer"))?,
        )?;
        let rc4 = Key::new(Enctype::Rc4Hmac, &rc4_hmac::nt_hash(password))?;
        Ok([aes256, aes128, rc4])
    }

    /// Finishes AES string-to-key from the PBKDF2 output `tkey`.
    fn from_pbkdf2_output(etype: Enctype, tkey: &[u8]) -> Result<Key, CryptoError> {
        let mut key = Key {
            etype,
            bytes: [0u8; 32],
        };
        let out = key
            .bytes
            .get_mut(..etype.key_len())
            .ok_or(CryptoError::Internal("key buffer"))?;
        match etype {
            Enctype::Aes256Sha1 => aes_sha1::key_from_pbkdf2::<V256>(tkey, out)?,
            Enctype::Aes128Sha1 => aes_sha1::key_from_pbkdf2::<V128>(tkey, out)?,
            Enctype::Rc4Hmac => return Err(CryptoError::Internal("PBKDF2 for RC4")),
        }
        Ok(key)
    }

    /// A fresh random key from the operating system's CSPRNG, for session
    /// keys and new service keys (random-to-key is the identity for all
    /// three enctypes).
    pub fn random(etype: Enctype) -> Result<Key, CryptoError> {
        let mut key = Key {
            etype,
            bytes: [0u8; 32],
        };
        let out = key
            .bytes
            .get_mut(..etype.key_len())
            .ok_or(CryptoError::Internal("key buffer"))?;
        random::fill(out)?;
        Ok(key)
    }

    /// The key's enctype.
    pub fn etype(&self) -> Enctype {
        self.etype
    }

    /// The raw key bytes, for storing the key or putting it in an
    /// EncryptionKey; `etype().key_len()` bytes.
    pub fn bytes(&self) -> &[u8] {
        self.bytes.get(..self.etype.key_len()).unwrap_or(&[])
    }

    /// Encrypts `plaintext` for key usage `usage` with a fresh random
    /// confounder, producing the `cipher` field of an EncryptedData. The
    /// plaintext is not padded.
    pub fn encrypt(&self, usage: u32, plaintext: &[u8]) -> Result<Vec<u8>, CryptoError> {
        let mut confounder = [0u8; 16];
        let len = self.etype.confounder_len();
        let conf = confounder
            .get_mut(..len)
            .ok_or(CryptoError::Internal("confounder buffer"))?;
        random::fill(conf)?;
        self.encrypt_with_confounder(usage, plaintext, conf)
    }

    /// Encrypts with a caller-chosen confounder (16 bytes for AES, 8 for
    /// RC4). Deterministic, so test vectors can be reproduced; never use a
    /// fixed confounder in production.
    pub fn encrypt_with_confounder(
        &self,
        usage: u32,
        plaintext: &[u8],
        confounder: &[u8],
    ) -> Result<Vec<u8>, CryptoError> {
        let bad_len = || CryptoError::BadConfounderLength {
            etype: self.etype,
            expected: self.etype.confounder_len(),
            got: confounder.len(),
        };
        match self.etype {
            Enctype::Aes256Sha1 => {
                let conf = confounder.try_into().map_err(|_| bad_len())?;
                aes_sha1::encrypt::<V256>(self.bytes(), usage, conf, plaintext)
            }
            Enctype::Aes128Sha1 => {
                let conf = confounder.try_into().map_err(|_| bad_len())?;
                aes_sha1::encrypt::<V128>(self.bytes(), usage, conf, plaintext)
            }
            Enctype::Rc4Hmac => {
                let conf = confounder.try_into().map_err(|_| bad_len())?;
                rc4_hmac::encrypt(self.bytes(), usage, conf, plaintext)
            }
        }
    }

    /// Decrypts the `cipher` field of an EncryptedData made for key usage
    /// `usage`, checking its integrity tag in constant time, and returns
    /// the plaintext without the confounder. For AES the plaintext may
    /// carry whatever padding the sender added (Kerberos ASN.1 tolerates
    /// it); this module adds none.
    pub fn decrypt(&self, usage: u32, ciphertext: &[u8]) -> Result<Vec<u8>, CryptoError> {
        match self.etype {
            Enctype::Aes256Sha1 => aes_sha1::decrypt::<V256>(self.bytes(), usage, ciphertext),
            Enctype::Aes128Sha1 => aes_sha1::decrypt::<V128>(self.bytes(), usage, ciphertext),
            Enctype::Rc4Hmac => rc4_hmac::decrypt(self.bytes(), usage, ciphertext),
        }
    }

    /// The enctype's mandatory keyed checksum of `data` for key usage
    /// `usage` (type [`Enctype::checksum_type`]): 12 bytes of
    /// hmac-sha1-96 for AES, 16 bytes of hmac-md5 for RC4. Used for PAC
    /// signatures (usage 17), KRB-SAFE, and authenticator checksums.
    pub fn checksum(&self, usage: u32, data: &[u8]) -> Result<Vec<u8>, CryptoError> {
        Ok(match self.etype {
            Enctype::Aes256Sha1 => aes_sha1::checksum::<V256>(self.bytes(), usage, data)?.to_vec(),
            Enctype::Aes128Sha1 => aes_sha1::checksum::<V128>(self.bytes(), usage, data)?.to_vec(),
            Enctype::Rc4Hmac => rc4_hmac::checksum(self.bytes(), usage, data)?.to_vec(),
        })
    }

    /// Verifies a received keyed checksum in constant time. `cksumtype` must
    /// be this key's own checksum type ([`Enctype::checksum_type`]; for an
    /// RC4 key that is hmac-md5, -138); other known types give
    /// [`CryptoError::ChecksumTypeMismatch`], unknown ones
    /// [`CryptoError::UnsupportedChecksumType`], and a wrong value or
    /// length [`CryptoError::BadChecksum`].
    pub fn verify_checksum(
        &self,
        usage: u32,
        data: &[u8],
        cksumtype: i32,
        value: &[u8],
    ) -> Result<(), CryptoError> {
        let expected_len =
            checksum_len(cksumtype).ok_or(CryptoError::UnsupportedChecksumType(cksumtype))?;
        if cksumtype != self.etype.checksum_type() {
            return Err(CryptoError::ChecksumTypeMismatch {
                cksumtype,
                etype: self.etype,
            });
        }
        if value.len() != expected_len {
            return Err(CryptoError::BadChecksum);
        }
        let computed = self.checksum(usage, data)?;
        if bool::from(computed.ct_eq(value)) {
            Ok(())
        } else {
            Err(CryptoError::BadChecksum)
        }
    }

    /// The RFC 3961 pseudo-random function of the enctype: 16 bytes for AES
    /// (RFC 3962 §6), 20 bytes of HMAC-SHA1 for RC4 (as MIT and Heimdal
    /// define it). FAST (RFC 6113) builds its armor and reply keys from it.
    pub fn prf(&self, input: &[u8]) -> Result<Vec<u8>, CryptoError> {
        Ok(match self.etype {
            Enctype::Aes256Sha1 => aes_sha1::prf::<V256>(self.bytes(), input)?.to_vec(),
            Enctype::Aes128Sha1 => aes_sha1::prf::<V128>(self.bytes(), input)?.to_vec(),
            Enctype::Rc4Hmac => rc4_hmac::prf(self.bytes(), input)?.to_vec(),
        })
    }

    /// KRB-FX-CF2 of RFC 6113 §5.1: combines `self` and `other` into a key of
    /// `self`'s enctype as random-to-key(PRF+(self, pepper1) XOR
    /// PRF+(other, pepper2)). FAST uses it for the armor key
    /// ("subkeyarmor"/"ticketarmor") and the strengthened reply key.
    pub fn cf2(&self, other: &Key, pepper1: &[u8], pepper2: &[u8]) -> Result<Key, CryptoError> {
        let len = self.etype.key_len();
        let mut a = Zeroizing::new([0u8; 32]);
        let mut b = Zeroizing::new([0u8; 32]);
        let a = a.get_mut(..len).ok_or(CryptoError::Internal("cf2"))?;
        let b = b.get_mut(..len).ok_or(CryptoError::Internal("cf2"))?;
        self.prf_plus(pepper1, a)?;
        other.prf_plus(pepper2, b)?;
        for (x, y) in a.iter_mut().zip(b.iter()) {
            *x ^= *y;
        }
        Key::new(self.etype, a)
    }

    /// PRF+ of RFC 6113 §5.1: PRF(key, 1 | s) | PRF(key, 2 | s) | ...,
    /// truncated to `out.len()` bytes (at most 255 PRF outputs).
    fn prf_plus(&self, input: &[u8], out: &mut [u8]) -> Result<(), CryptoError> {
        let mut msg = Zeroizing::new(Vec::with_capacity(input.len().saturating_add(1)));
        msg.push(0u8);
        msg.extend_from_slice(input);
        let mut filled = 0usize;
        let mut counter: u8 = 1;
        while filled < out.len() {
            if let Some(first) = msg.first_mut() {
                *first = counter;
            }
            let block = Zeroizing::new(self.prf(&msg)?);
            let take = block.len().min(out.len() - filled);
            out.get_mut(filled..filled + take)
                .ok_or(CryptoError::Internal("prf+"))?
                .copy_from_slice(block.get(..take).ok_or(CryptoError::Internal("prf+"))?);
            filled += take;
            counter = counter
                .checked_add(1)
                .ok_or(CryptoError::Internal("prf+ counter"))?;
        }
        Ok(())
    }
}

/// Rejects PBKDF2 iteration counts outside 1..=[`MAX_PBKDF2_ITERATIONS`].
fn check_iterations(iterations: u32) -> Result<(), CryptoError> {
    if iterations == 0 || iterations > MAX_PBKDF2_ITERATIONS {
        Err(CryptoError::BadIterationCount(iterations))
    } else {
        Ok(())
    }
}
