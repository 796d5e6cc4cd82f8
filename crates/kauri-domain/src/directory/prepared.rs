//! Password hashing done before a change reaches the writer. The Kerberos AES keys
//! (PBKDF2, 4,096 rounds) and the crypt forms a domain may keep (thousands of rounds
//! each) are computed on the requesting connection's thread, many connections at once,
//! and left here under a keyed digest of the password and the account's salt; the writer
//! takes them when it stores that password and computes only what it does not find, so
//! the single writer holds its transaction for storing, not for hashing.

use std::collections::HashMap;

use parking_lot::Mutex;
use sha2::{Digest, Sha256};

use super::kerberos::derive_keys;
use crate::password::{CryptSchemes, PasswordError, StoredSecrets};

/// Prepared passwords kept at most: past it the oldest preparations are dropped (the
/// writer then hashes those itself).
const MAX_PREPARED: usize = 4096;

/// See the module documentation.
pub(crate) struct Prepared {
    /// A random key per process, so the digests say nothing about the passwords to
    /// anyone who reads memory without it.
    key: [u8; 32],
    forms: Mutex<Forms>,
}

#[derive(Default)]
struct Forms {
    /// Per password, its preparations not yet taken, oldest first (several accounts set to
    /// the same password each get their own salts).
    by_digest: HashMap<[u8; 32], Vec<(u64, CryptSchemes, StoredSecrets)>>,
    kept: usize,
    next: u64,
}

impl Prepared {
    pub(crate) fn new() -> Prepared {
        let mut key = [0u8; 32];
        // Without randomness the digests are still distinct per password; only the
        // keying is lost.
        let _ = getrandom::fill(&mut key);
        Prepared {
            key,
            forms: Mutex::new(Forms::default()),
        }
    }

    fn digest(&self, password: &str, salt: Option<&str>) -> [u8; 32] {
        let mut h = Sha256::new();
        h.update(self.key);
        match salt {
            Some(salt) => {
                h.update([1]);
                h.update((salt.len() as u64).to_le_bytes());
                h.update(salt.as_bytes());
            }
            None => h.update([0]),
        }
        h.update(password.as_bytes());
        h.finalize().into()
    }

    /// Computes and keeps the secrets of `password` under `schemes`, with Kerberos keys
    /// for `salt` when there is one.
    pub(crate) fn prepare(
        &self,
        password: &str,
        schemes: CryptSchemes,
        salt: Option<&str>,
    ) -> Result<(), PasswordError> {
        let secrets = compute(password, schemes, salt)?;
        let digest = self.digest(password, salt);
        let mut f = self.forms.lock();
        if f.kept >= MAX_PREPARED {
            // Preparations never taken (a change refused before storing its password)
            // go first: the oldest half.
            let mut ages: Vec<u64> = f.by_digest.values().flatten().map(|(n, _, _)| *n).collect();
            ages.sort_unstable();
            let cut = ages.get(ages.len() / 2).copied().unwrap_or(0);
            f.by_digest.retain(|_, list| {
                list.retain(|(n, _, _)| *n >= cut);
                !list.is_empty()
            });
            f.kept = f.by_digest.values().map(Vec::len).sum();
        }
        let n = f.next;
        f.next += 1;
        f.by_digest
            .entry(digest)
            .or_default()
            .push((n, schemes, secrets));
        f.kept += 1;
        Ok(())
    }

    /// The secrets of `password` under `schemes` (with Kerberos keys for `salt`):
    /// prepared ones when there are, computed here otherwise.
    pub(crate) fn secrets(
        &self,
        password: &str,
        schemes: CryptSchemes,
        salt: Option<&str>,
    ) -> Result<StoredSecrets, PasswordError> {
        if schemes == CryptSchemes::default() && salt.is_none() {
            // The NT hash alone costs nothing worth preparing.
            return StoredSecrets::from_password(password, schemes);
        }
        let digest = self.digest(password, salt);
        let found = {
            let mut f = self.forms.lock();
            let taken = f.by_digest.get_mut(&digest).and_then(|list| {
                let i = list.iter().position(|(_, s, _)| *s == schemes)?;
                Some(list.remove(i))
            });
            if taken.is_some() {
                f.kept = f.kept.saturating_sub(1);
                if f.by_digest.get(&digest).is_some_and(Vec::is_empty) {
                    f.by_digest.remove(&digest);
                }
            }
            taken
        };
        match found {
            Some((_, _, secrets)) => Ok(secrets),
            None => compute(password, schemes, salt),
        }
    }
}

/// The secrets of a password: its NT hash, the crypt forms `schemes` asks for, and its
/// Kerberos keys when the account has a salt.
pub(crate) fn compute(
    password: &str,
    schemes: CryptSchemes,
    salt: Option<&str>,
) -> Result<StoredSecrets, PasswordError> {
    let secrets = StoredSecrets::from_password(password, schemes)?;
    match salt {
        Some(salt) => secrets.with_kerberos(derive_keys(password, salt)?),
        None => Ok(secrets),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn prepared_secrets_are_taken_once_and_computed_otherwise() {
        let p = Prepared::new();
        let all = CryptSchemes::ALL;
        p.prepare("Prepared.Passw0rd", all, None).unwrap();
        let a = p.secrets("Prepared.Passw0rd", all, None).unwrap();
        assert!(a.verify("Prepared.Passw0rd") && a.sha512_crypt().starts_with("$6$"));
        // Taken: a second set of the same password gets fresh salts.
        let b = p.secrets("Prepared.Passw0rd", all, None).unwrap();
        assert_ne!(a.sha512_crypt(), b.sha512_crypt());
        // Two accounts set to one password: each takes a preparation of its own.
        p.prepare("Shared.Passw0rd", all, None).unwrap();
        p.prepare("Shared.Passw0rd", all, None).unwrap();
        let x = p.secrets("Shared.Passw0rd", all, None).unwrap();
        let y = p.secrets("Shared.Passw0rd", all, None).unwrap();
        assert_ne!(x.sha512_crypt(), y.sha512_crypt());
        assert_eq!(p.forms.lock().kept, 0);
        // Prepared under other schemes: computed again under the ones in force.
        p.prepare("Other.Passw0rd", CryptSchemes::default(), None)
            .unwrap();
        let c = p.secrets("Other.Passw0rd", all, None).unwrap();
        assert!(c.sha256_crypt().starts_with("$5$"));
    }

    #[test]
    fn kerberos_keys_are_prepared_per_salt() {
        let p = Prepared::new();
        let none = CryptSchemes::default();
        p.prepare("Salted.Passw0rd", none, Some("KAURI.TESTalice"))
            .unwrap();
        // Another account's salt does not take alice's preparation.
        let bob = p
            .secrets("Salted.Passw0rd", none, Some("KAURI.TESTbob"))
            .unwrap();
        assert_eq!(bob.kerberos().unwrap().salt, "KAURI.TESTbob");
        assert_eq!(p.forms.lock().kept, 1);
        let alice = p
            .secrets("Salted.Passw0rd", none, Some("KAURI.TESTalice"))
            .unwrap();
        assert_eq!(alice.kerberos().unwrap().salt, "KAURI.TESTalice");
        assert_ne!(
            alice.kerberos().unwrap().aes256,
            bob.kerberos().unwrap().aes256
        );
        assert_eq!(p.forms.lock().kept, 0);
    }

    #[test]
    fn preparations_are_bounded() {
        let p = Prepared::new();
        for i in 0..(MAX_PREPARED + 10) {
            p.prepare(&format!("pw{i}"), CryptSchemes::default(), None)
                .unwrap();
        }
        let f = p.forms.lock();
        assert!(f.kept <= MAX_PREPARED);
        assert_eq!(f.kept, f.by_digest.values().map(Vec::len).sum::<usize>());
    }
}
