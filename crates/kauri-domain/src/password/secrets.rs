//! What the directory keeps of a user's password: the NT hash, two SHA-crypt strings and
//! the NT hashes of earlier passwords, in a compact versioned binary form meant to be
//! sealed with [`super::SecretKey`] before it is stored.

use std::fmt;

use subtle::{Choice, ConstantTimeEq};
use zeroize::Zeroize;

use super::hashes::{hash_crypt, nt_hash, CryptAlgorithm, DEFAULT_CRYPT_ROUNDS};
use super::PasswordError;

/// The first byte of [`StoredSecrets::encode`]'s output.
const FORMAT_VERSION: u8 = 1;

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
        })
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

    /// The binary form: version byte 1, the NT hash, the SHA-512 and SHA-256 crypt
    /// strings each with a little-endian u16 length, then a little-endian u32 count of
    /// history hashes and the hashes.
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
        out
    }

    /// Reads [`encode`](Self::encode)'s form, refusing unknown versions, truncation and
    /// trailing bytes.
    pub fn decode(bytes: &[u8]) -> Result<StoredSecrets, PasswordError> {
        let mut r = Reader(bytes);
        let version = r.u8()?;
        if version != FORMAT_VERSION {
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
        if !r.0.is_empty() {
            return Err(PasswordError::BadEncoding("trailing bytes"));
        }
        Ok(StoredSecrets {
            nt_hash,
            sha512_crypt,
            sha256_crypt,
            history,
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
        assert_eq!(bytes[0], 1);
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
        other[0] = 2;
        assert_eq!(
            StoredSecrets::decode(&other),
            Err(PasswordError::UnknownVersion(2))
        );
        // A forged history count is refused without allocating for it.
        let forged = StoredSecrets::from_parts([7; 16], String::new(), String::new(), vec![])
            .unwrap()
            .encode();
        let mut forged = forged[..forged.len() - 4].to_vec();
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
