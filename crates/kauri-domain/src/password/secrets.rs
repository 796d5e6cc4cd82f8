//! What the directory keeps of a user's password: the NT hash, two SHA-crypt strings, the
//! NT hashes of earlier passwords, and the Kerberos AES keys of the current and the
//! previous password, in a compact versioned binary form meant to be sealed with
//! [`super::SecretKey`] before it is stored.

use std::fmt;

use subtle::{Choice, ConstantTimeEq};
use zeroize::Zeroize;

use super::hashes::{hash_crypt, nt_hash, CryptAlgorithm, DEFAULT_CRYPT_ROUNDS};
use super::PasswordError;

/// The first byte of [`StoredSecrets::encode`]'s output: 2 since the Kerberos keys; 1
/// (without them) is still read.
const FORMAT_VERSION: u8 = 2;

/// The Kerberos AES keys (RFC 3962) of one password, with the salt they were derived
/// with. AD derives them whenever a password is set and keeps the salt beside them
/// (`Primary:Kerberos-Newer-Keys`), so a later rename does not change the keys a client
/// must compute; the RC4 key is the NT hash and is not repeated here.
#[derive(Clone, PartialEq, Eq)]
pub struct KerberosKeys {
    /// The salt the keys were derived with (`REALM` + account name for users).
    pub salt: String,
    /// aes256-cts-hmac-sha1-96 (etype 18).
    pub aes256: [u8; 32],
    /// aes128-cts-hmac-sha1-96 (etype 17).
    pub aes128: [u8; 16],
}

impl fmt::Debug for KerberosKeys {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("KerberosKeys")
            .field("salt", &self.salt)
            .finish_non_exhaustive()
    }
}

impl Drop for KerberosKeys {
    fn drop(&mut self) {
        self.aes256.zeroize();
        self.aes128.zeroize();
    }
}

/// The keys of the password before the current one, kept so that tickets issued under it
/// stay usable until they expire (AD's "OldCredentials"; krbtgt rotation relies on it).
#[derive(Clone, PartialEq, Eq)]
pub struct PreviousKeys {
    /// The previous password's NT hash (its RC4 key).
    pub nt_hash: [u8; 16],
    /// Its AES keys, when it had them.
    pub kerberos: Option<KerberosKeys>,
}

impl fmt::Debug for PreviousKeys {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("PreviousKeys")
            .field("kerberos", &self.kerberos)
            .finish_non_exhaustive()
    }
}

impl Drop for PreviousKeys {
    fn drop(&mut self) {
        self.nt_hash.zeroize();
    }
}

/// The one-way forms of an account's password and its recent predecessors.
///
/// Holds password equivalents (the NT hash is enough to authenticate with NTLM), so it
/// prints nothing secret and wipes itself when dropped.
#[derive(Clone, PartialEq, Eq)]
pub struct StoredSecrets {
    nt_hash: [u8; 16],
    sha512_crypt: String,
    sha256_crypt: String,
    history: Vec<[u8; 16]>,
    kerberos: Option<KerberosKeys>,
    previous: Option<PreviousKeys>,
}

/// The crypt forms of a password kept beside its NT hash, for clients that verify
/// passwords themselves from `userPassword`-style hashes (Samba's "password hash
/// userPassword schemes"). None by default: nothing reads them, and each costs
/// milliseconds of CPU (5,000 rounds) on every password set.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct CryptSchemes {
    /// `CryptSHA256`: the SHA-256 crypt form (`$5$`).
    pub sha256: bool,
    /// `CryptSHA512`: the SHA-512 crypt form (`$6$`).
    pub sha512: bool,
}

impl CryptSchemes {
    /// Both forms.
    pub const ALL: CryptSchemes = CryptSchemes {
        sha256: true,
        sha512: true,
    };

    /// The schemes named (Samba's names, `CryptSHA256` and `CryptSHA512`, in any case).
    pub fn parse<S: AsRef<str>>(names: &[S]) -> Result<CryptSchemes, PasswordError> {
        let mut out = CryptSchemes::default();
        for name in names {
            match name.as_ref().to_ascii_lowercase().as_str() {
                "cryptsha256" => out.sha256 = true,
                "cryptsha512" => out.sha512 = true,
                _ => return Err(PasswordError::UnknownScheme(name.as_ref().to_string())),
            }
        }
        Ok(out)
    }
}

impl StoredSecrets {
    /// The secrets for a newly set password, with no history: its NT hash and the crypt
    /// forms `schemes` asks for.
    pub fn from_password(
        password: &str,
        schemes: CryptSchemes,
    ) -> Result<StoredSecrets, PasswordError> {
        let crypt = |yes: bool, alg| -> Result<String, PasswordError> {
            if yes {
                hash_crypt(password, alg, DEFAULT_CRYPT_ROUNDS)
            } else {
                Ok(String::new())
            }
        };
        Ok(StoredSecrets {
            nt_hash: nt_hash(password),
            sha512_crypt: crypt(schemes.sha512, CryptAlgorithm::Sha512)?,
            sha256_crypt: crypt(schemes.sha256, CryptAlgorithm::Sha256)?,
            history: Vec::new(),
            kerberos: None,
            previous: None,
        })
    }

    /// Secrets assembled from known parts, as when accounts are imported from another
    /// directory that kept only some of them (a crypt string may be empty).
    pub fn from_parts(
        nt_hash: [u8; 16],
        sha512_crypt: String,
        sha256_crypt: String,
        history: Vec<[u8; 16]>,
    ) -> Result<StoredSecrets, PasswordError> {
        if sha512_crypt.len() > usize::from(u16::MAX) || sha256_crypt.len() > usize::from(u16::MAX)
        {
            return Err(PasswordError::BadEncoding("crypt string too long"));
        }
        if u32::try_from(history.len()).is_err() {
            return Err(PasswordError::BadEncoding("history too long"));
        }
        Ok(StoredSecrets {
            nt_hash,
            sha512_crypt,
            sha256_crypt,
            history,
            kerberos: None,
            previous: None,
        })
    }

    /// These secrets with the Kerberos AES keys of the same password.
    pub fn with_kerberos(mut self, keys: KerberosKeys) -> Result<StoredSecrets, PasswordError> {
        if keys.salt.len() > usize::from(u16::MAX) {
            return Err(PasswordError::BadEncoding("salt too long"));
        }
        self.kerberos = Some(keys);
        Ok(self)
    }

    /// The current password's Kerberos AES keys; `None` for a password set before Kauri
    /// derived them (such an account has only RC4 until its next password change).
    pub fn kerberos(&self) -> Option<&KerberosKeys> {
        self.kerberos.as_ref()
    }

    /// The keys of the password before this one, when there was one.
    pub fn previous(&self) -> Option<&PreviousKeys> {
        self.previous.as_ref()
    }

    /// The current password's NT hash (what NTLM and RC4 Kerberos keys derive from).
    pub fn nt_hash(&self) -> &[u8; 16] {
        &self.nt_hash
    }

    /// The current password as a `$6$` SHA-512-crypt string (empty if unknown).
    pub fn sha512_crypt(&self) -> &str {
        &self.sha512_crypt
    }

    /// The current password as a `$5$` SHA-256-crypt string (empty if unknown).
    pub fn sha256_crypt(&self) -> &str {
        &self.sha256_crypt
    }

    /// NT hashes of earlier passwords, newest first (the current one not included).
    pub fn history(&self) -> &[[u8; 16]] {
        &self.history
    }

    /// Whether `password` is the current password (NT hashes compared in constant time).
    pub fn verify(&self, password: &str) -> bool {
        nt_hash(password).ct_eq(&self.nt_hash).into()
    }

    /// The secrets after a change to `password`: the current NT hash moves to the front of
    /// the history, which keeps `history_length - 1` entries so that, with the new
    /// password, `history_length` passwords are remembered (AD's `pwdHistoryLength`).
    pub fn with_new_password(
        &self,
        password: &str,
        history_length: u32,
        schemes: CryptSchemes,
    ) -> Result<StoredSecrets, PasswordError> {
        let next = StoredSecrets::from_password(password, schemes)?;
        Ok(self.followed_by(next, history_length))
    }

    /// `next` (the secrets of a new password, computed beforehand) with this one's NT hash
    /// and history carried into its history, as [`StoredSecrets::with_new_password`].
    pub fn followed_by(&self, mut next: StoredSecrets, history_length: u32) -> StoredSecrets {
        let keep = usize::try_from(history_length.saturating_sub(1)).unwrap_or(usize::MAX);
        next.history = std::iter::once(self.nt_hash)
            .chain(self.history.iter().copied())
            .take(keep)
            .collect();
        next.previous = Some(PreviousKeys {
            nt_hash: self.nt_hash,
            kerberos: self.kerberos.clone(),
        });
        next
    }

    /// Whether `password` is the current password or any remembered earlier one.
    pub fn in_history(&self, password: &str) -> bool {
        self.in_recent(password, usize::MAX)
    }

    /// Whether `password` is among the `count` most recent passwords, the current one
    /// first. Every candidate is compared, so timing tells nothing about which matched.
    pub fn in_recent(&self, password: &str, count: usize) -> bool {
        let candidate = nt_hash(password);
        let found = std::iter::once(&self.nt_hash)
            .chain(&self.history)
            .take(count)
            .fold(Choice::from(0), |acc, h| acc | candidate.ct_eq(h));
        found.into()
    }

    /// The binary form: version byte 2, the NT hash, the SHA-512 and SHA-256 crypt
    /// strings each with a little-endian u16 length, a little-endian u32 count of history
    /// hashes and the hashes (version 1 ends here); then a flags byte (1: current AES
    /// keys follow, 2: previous keys follow, 4: the previous keys include AES keys), the
    /// current AES keys (salt with a u16 length, AES256, AES128), and the previous NT hash
    /// and AES keys in the same form.
    pub fn encode(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(
            1 + 16
                + 4
                + self.sha512_crypt.len()
                + self.sha256_crypt.len()
                + 4
                + 16 * self.history.len(),
        );
        out.push(FORMAT_VERSION);
        out.extend_from_slice(&self.nt_hash);
        for s in [&self.sha512_crypt, &self.sha256_crypt] {
            // Lengths are bounded by the constructors and by `decode`.
            let len = u16::try_from(s.len()).unwrap_or(u16::MAX);
            out.extend_from_slice(&len.to_le_bytes());
            out.extend_from_slice(&s.as_bytes()[..usize::from(len)]);
        }
        let count = u32::try_from(self.history.len()).unwrap_or(u32::MAX);
        out.extend_from_slice(&count.to_le_bytes());
        for h in self.history.iter().take(count as usize) {
            out.extend_from_slice(h);
        }
        let prev_krb = self.previous.as_ref().and_then(|p| p.kerberos.as_ref());
        let flags = u8::from(self.kerberos.is_some())
            | (u8::from(self.previous.is_some()) << 1)
            | (u8::from(prev_krb.is_some()) << 2);
        out.push(flags);
        let put_keys = |out: &mut Vec<u8>, k: &KerberosKeys| {
            let len = u16::try_from(k.salt.len()).unwrap_or(u16::MAX);
            out.extend_from_slice(&len.to_le_bytes());
            out.extend_from_slice(&k.salt.as_bytes()[..usize::from(len)]);
            out.extend_from_slice(&k.aes256);
            out.extend_from_slice(&k.aes128);
        };
        if let Some(k) = &self.kerberos {
            put_keys(&mut out, k);
        }
        if let Some(p) = &self.previous {
            out.extend_from_slice(&p.nt_hash);
            if let Some(k) = &p.kerberos {
                put_keys(&mut out, k);
            }
        }
        out
    }

    /// Reads [`encode`](Self::encode)'s form, refusing unknown versions, truncation and
    /// trailing bytes.
    pub fn decode(bytes: &[u8]) -> Result<StoredSecrets, PasswordError> {
        let mut r = Reader(bytes);
        let version = r.u8()?;
        if version != FORMAT_VERSION && version != 1 {
            return Err(PasswordError::UnknownVersion(version));
        }
        let nt_hash = r.hash()?;
        let sha512_crypt = r.string()?;
        let sha256_crypt = r.string()?;
        let count = usize::try_from(r.u32()?).unwrap_or(usize::MAX);
        // Check the length before allocating, so a forged count cannot ask for gigabytes.
        if r.0.len() / 16 < count {
            return Err(PasswordError::BadEncoding("truncated history"));
        }
        let mut history = Vec::with_capacity(count);
        for _ in 0..count {
            history.push(r.hash()?);
        }
        let (mut kerberos, mut previous) = (None, None);
        if version >= 2 {
            let flags = r.u8()?;
            if flags & !7 != 0 || (flags & 4 != 0 && flags & 2 == 0) {
                return Err(PasswordError::BadEncoding("unknown key flags"));
            }
            if flags & 1 != 0 {
                kerberos = Some(r.keys()?);
            }
            if flags & 2 != 0 {
                let nt_hash = r.hash()?;
                let kerberos = if flags & 4 != 0 {
                    Some(r.keys()?)
                } else {
                    None
                };
                previous = Some(PreviousKeys { nt_hash, kerberos });
            }
        }
        if !r.0.is_empty() {
            return Err(PasswordError::BadEncoding("trailing bytes"));
        }
        Ok(StoredSecrets {
            nt_hash,
            sha512_crypt,
            sha256_crypt,
            history,
            kerberos,
            previous,
        })
    }
}

impl fmt::Debug for StoredSecrets {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("StoredSecrets")
            .field("history_len", &self.history.len())
            .finish_non_exhaustive()
    }
}

impl Drop for StoredSecrets {
    fn drop(&mut self) {
        self.nt_hash.zeroize();
        self.sha512_crypt.zeroize();
        self.sha256_crypt.zeroize();
        for h in &mut self.history {
            h.zeroize();
        }
    }
}

/// A cursor over encoded secrets that fails instead of reading past the end.
struct Reader<'a>(&'a [u8]);

impl<'a> Reader<'a> {
    fn take(&mut self, n: usize) -> Result<&'a [u8], PasswordError> {
        if self.0.len() < n {
            return Err(PasswordError::BadEncoding("truncated"));
        }
        let (head, rest) = self.0.split_at(n);
        self.0 = rest;
        Ok(head)
    }

    fn u8(&mut self) -> Result<u8, PasswordError> {
        Ok(self.take(1)?[0])
    }

    fn u16(&mut self) -> Result<u16, PasswordError> {
        let b = self.take(2)?;
        Ok(u16::from_le_bytes([b[0], b[1]]))
    }

    fn u32(&mut self) -> Result<u32, PasswordError> {
        let b = self.take(4)?;
        Ok(u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
    }

    fn hash(&mut self) -> Result<[u8; 16], PasswordError> {
        let mut h = [0u8; 16];
        h.copy_from_slice(self.take(16)?);
        Ok(h)
    }

    fn keys(&mut self) -> Result<KerberosKeys, PasswordError> {
        let salt = self.string()?;
        let mut aes256 = [0u8; 32];
        aes256.copy_from_slice(self.take(32)?);
        let mut aes128 = [0u8; 16];
        aes128.copy_from_slice(self.take(16)?);
        Ok(KerberosKeys {
            salt,
            aes256,
            aes128,
        })
    }

    fn string(&mut self) -> Result<String, PasswordError> {
        let len = self.u16()?;
        let bytes = self.take(usize::from(len))?;
        String::from_utf8(bytes.to_vec())
            .map_err(|_| PasswordError::BadEncoding("crypt string is not UTF-8"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::password::verify_crypt;
    use proptest::prelude::*;

    #[test]
    fn from_password_and_verify() {
        let s = StoredSecrets::from_password("Sommer2024!", CryptSchemes::ALL).unwrap();
        assert!(s.verify("Sommer2024!"));
        assert!(!s.verify("sommer2024!"));
        assert_eq!(s.nt_hash(), &nt_hash("Sommer2024!"));
        assert!(s.sha512_crypt().starts_with("$6$rounds=5000$"));
        assert!(s.sha256_crypt().starts_with("$5$rounds=5000$"));
        assert!(verify_crypt("Sommer2024!", s.sha512_crypt()));
        assert!(verify_crypt("Sommer2024!", s.sha256_crypt()));
        assert!(s.history().is_empty());
        assert!(!format!("{s:?}").contains("$6$"));
    }

    #[test]
    fn history_moves_and_truncates() {
        let s1 = StoredSecrets::from_password("One1!", CryptSchemes::ALL).unwrap();
        let s2 = s1.with_new_password("Two2!", 3, CryptSchemes::ALL).unwrap();
        let s3 = s2
            .with_new_password("Three3!", 3, CryptSchemes::ALL)
            .unwrap();
        let s4 = s3
            .with_new_password("Four4!", 3, CryptSchemes::ALL)
            .unwrap();
        assert_eq!(s2.history(), &[nt_hash("One1!")]);
        assert_eq!(s3.history(), &[nt_hash("Two2!"), nt_hash("One1!")]);
        // Three remembered: the current one and two before it.
        assert_eq!(s4.history(), &[nt_hash("Three3!"), nt_hash("Two2!")]);
        assert!(s4.verify("Four4!"));
        assert!(s4.in_history("Four4!"));
        assert!(s4.in_history("Two2!"));
        assert!(!s4.in_history("One1!"));
        assert!(s4.in_recent("Three3!", 2));
        assert!(!s4.in_recent("Two2!", 2));
        assert!(!s4.in_recent("Four4!", 0));
        // A history length of 0 or 1 keeps nothing.
        assert!(s4
            .with_new_password("Five5!", 1, CryptSchemes::ALL)
            .unwrap()
            .history()
            .is_empty());
        assert!(s4
            .with_new_password("Five5!", 0, CryptSchemes::ALL)
            .unwrap()
            .history()
            .is_empty());
    }

    #[test]
    fn encoding_round_trip_and_errors() {
        let s = StoredSecrets::from_password("Pa55word!", CryptSchemes::ALL)
            .unwrap()
            .with_new_password("Next1!", 24, CryptSchemes::ALL)
            .unwrap();
        let bytes = s.encode();
        assert_eq!(bytes[0], 2);
        assert_eq!(StoredSecrets::decode(&bytes).unwrap(), s);
        for cut in 0..bytes.len() {
            assert!(
                StoredSecrets::decode(&bytes[..cut]).is_err(),
                "cut at {cut}"
            );
        }
        let mut longer = bytes.clone();
        longer.push(0);
        assert_eq!(
            StoredSecrets::decode(&longer),
            Err(PasswordError::BadEncoding("trailing bytes"))
        );
        let mut other = bytes.clone();
        other[0] = 3;
        assert_eq!(
            StoredSecrets::decode(&other),
            Err(PasswordError::UnknownVersion(3))
        );
        // A forged history count is refused without allocating for it.
        let forged = StoredSecrets::from_parts([7; 16], String::new(), String::new(), vec![])
            .unwrap()
            .encode();
        let mut forged = forged[..forged.len() - 5].to_vec();
        forged.extend_from_slice(&u32::MAX.to_le_bytes());
        assert!(StoredSecrets::decode(&forged).is_err());
    }

    #[test]
    fn imported_parts() {
        let s =
            StoredSecrets::from_parts(nt_hash("x"), String::new(), String::new(), vec![[1; 16]])
                .unwrap();
        assert!(s.verify("x"));
        assert_eq!(StoredSecrets::decode(&s.encode()).unwrap(), s);
        assert!(
            StoredSecrets::from_parts([0; 16], "a".repeat(70_000), String::new(), vec![]).is_err()
        );
    }

    fn keys(salt: &str, seed: u8) -> KerberosKeys {
        KerberosKeys {
            salt: salt.to_string(),
            aes256: [seed; 32],
            aes128: [seed.wrapping_add(1); 16],
        }
    }

    #[test]
    fn kerberos_keys_round_trip_and_roll_over() {
        let s1 = StoredSecrets::from_password("One1!", CryptSchemes::default())
            .unwrap()
            .with_kerberos(keys("KAURI.TESTalice", 1))
            .unwrap();
        assert_eq!(s1.kerberos().unwrap().salt, "KAURI.TESTalice");
        assert!(s1.previous().is_none());
        assert_eq!(StoredSecrets::decode(&s1.encode()).unwrap(), s1);
        // The next password: the current keys become the previous ones, even without a
        // history to keep.
        let next = StoredSecrets::from_password("Two2!", CryptSchemes::default())
            .unwrap()
            .with_kerberos(keys("KAURI.TESTalice", 9))
            .unwrap();
        let s2 = s1.followed_by(next, 0);
        let prev = s2.previous().unwrap();
        assert_eq!(prev.nt_hash, nt_hash("One1!"));
        assert_eq!(prev.kerberos.as_ref().unwrap().aes256, [1; 32]);
        assert_eq!(s2.kerberos().unwrap().aes256, [9; 32]);
        let bytes = s2.encode();
        assert_eq!(StoredSecrets::decode(&bytes).unwrap(), s2);
        for cut in 0..bytes.len() {
            assert!(
                StoredSecrets::decode(&bytes[..cut]).is_err(),
                "cut at {cut}"
            );
        }
        // Previous keys without AES keys (a password set before they were derived).
        let old = StoredSecrets::from_password("Old1!", CryptSchemes::default()).unwrap();
        let s3 = old.followed_by(s2.clone(), 5);
        assert!(s3.previous().unwrap().kerberos.is_none());
        assert_eq!(StoredSecrets::decode(&s3.encode()).unwrap(), s3);
        assert!(!format!("{s3:?}").contains("[9,"));
    }

    #[test]
    fn version_one_is_read_without_keys() {
        // Version 1: no flags byte, no keys.
        let mut v1 = vec![1u8];
        v1.extend_from_slice(&nt_hash("Legacy1!"));
        v1.extend_from_slice(&[0, 0, 0, 0, 1, 0, 0, 0]);
        v1.extend_from_slice(&[5; 16]);
        let s = StoredSecrets::decode(&v1).unwrap();
        assert!(s.verify("Legacy1!"));
        assert_eq!(s.history(), &[[5; 16]]);
        assert!(s.kerberos().is_none() && s.previous().is_none());
        // Written back, it is version 2.
        assert_eq!(s.encode()[0], 2);
    }

    proptest! {
        #[test]
        fn decode_never_panics(bytes in proptest::collection::vec(any::<u8>(), 0..256)) {
            let _ = StoredSecrets::decode(&bytes);
        }

        #[test]
        fn decode_never_panics_past_the_version(
            mut bytes in proptest::collection::vec(any::<u8>(), 1..256),
        ) {
            bytes[0] = FORMAT_VERSION;
            if let Ok(s) = StoredSecrets::decode(&bytes) {
                prop_assert_eq!(s.encode(), bytes);
            }
        }

        #[test]
        fn parts_round_trip(
            nt in any::<[u8; 16]>(),
            a in "[ -~]{0,120}",
            b in "[ -~]{0,120}",
            history in proptest::collection::vec(any::<[u8; 16]>(), 0..30),
        ) {
            let s = StoredSecrets::from_parts(nt, a, b, history).unwrap();
            prop_assert_eq!(StoredSecrets::decode(&s.encode()).unwrap(), s);
        }
    }
}
