//! Simple-bind password checks against the configured administrator and entries'
//! `userPassword` values, and the hashed form new passwords are stored in.
//!
//! Stored forms understood: `{SSHA512}`, `{SSHA256}`, `{SSHA}` (salted SHA-2/SHA-1 as
//! OpenLDAP writes them: base64 of digest ++ salt), `{SHA}`, and cleartext. Comparisons of
//! digests are constant-time.

use base64::engine::general_purpose::STANDARD as B64;
use base64::Engine;
use sha1::Sha1;
use sha2::{Digest, Sha256, Sha512};

/// Who a connection is bound as.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Identity {
    /// Not bound (or bound anonymously).
    Anonymous,
    /// The configured administrator.
    Admin(String),
    /// An entry of the directory, by DN as stored.
    User(String),
    /// An account of the domain, with its token.
    Account(kauri_domain::directory::Account),
}

impl Identity {
    /// The caller the directory service checks this identity as.
    pub fn caller(&self, ctx: &crate::ctx::Ctx) -> kauri_domain::directory::Caller {
        use kauri_domain::directory::{Account, Caller};
        match self {
            Identity::Anonymous => Caller::Anonymous,
            Identity::Account(a) => Caller::Account(a.clone()),
            Identity::Admin(dn) => Caller::Account(Account {
                id: 0,
                dn: dn.clone(),
                sid: None,
                groups: Vec::new(),
                admin: true,
            }),
            Identity::User(dn) => Caller::Account(Account {
                id: kauri_db::Dn::parse(dn)
                    .ok()
                    .and_then(|d| ctx.db.read().ok()?.lookup(&d).ok()?)
                    .unwrap_or(0),
                dn: dn.clone(),
                sid: None,
                groups: Vec::new(),
                admin: false,
            }),
        }
    }

    /// The authzId Who-am-I reports (`dn:<dn>`, empty for anonymous).
    pub fn authz_id(&self) -> String {
        match self {
            Identity::Anonymous => String::new(),
            Identity::Admin(dn) | Identity::User(dn) => format!("dn:{dn}"),
            Identity::Account(a) => format!("dn:{}", a.dn),
        }
    }

    /// Whether this identity administers the directory.
    pub fn is_admin(&self) -> bool {
        match self {
            Identity::Admin(_) => true,
            Identity::Account(a) => a.admin,
            _ => false,
        }
    }
}

fn ct_eq(a: &[u8], b: &[u8]) -> bool {
    if a.len() != b.len() {
        return false;
    }
    a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

fn salted<D: Digest>(b64: &str, password: &[u8], digest_len: usize) -> bool {
    let Ok(raw) = B64.decode(b64.trim()) else {
        return false;
    };
    if raw.len() < digest_len {
        return false;
    }
    let (digest, salt) = raw.split_at(digest_len);
    let mut h = D::new();
    h.update(password);
    h.update(salt);
    ct_eq(&h.finalize(), digest)
}

/// Whether `password` matches a stored password value.
pub fn verify(stored: &[u8], password: &[u8]) -> bool {
    let Ok(text) = std::str::from_utf8(stored) else {
        return ct_eq(stored, password);
    };
    let upper_prefix = |p: &str| text.len() >= p.len() && text[..p.len()].eq_ignore_ascii_case(p);
    if upper_prefix("{SSHA512}") {
        salted::<Sha512>(&text[9..], password, 64)
    } else if upper_prefix("{SSHA256}") {
        salted::<Sha256>(&text[9..], password, 32)
    } else if upper_prefix("{SSHA}") {
        salted::<Sha1>(&text[6..], password, 20)
    } else if upper_prefix("{SHA}") {
        B64.decode(text[5..].trim())
            .is_ok_and(|d| ct_eq(&Sha1::digest(password), &d))
    } else if text.starts_with('{') && text.contains('}') {
        false
    } else {
        ct_eq(stored, password)
    }
}

/// The `{SSHA512}` form of a new password, with a random 16-byte salt.
pub fn hash_password(password: &[u8]) -> Result<String, getrandom::Error> {
    let mut salt = [0u8; 16];
    getrandom::fill(&mut salt)?;
    let mut h = Sha512::new();
    h.update(password);
    h.update(salt);
    let mut raw = h.finalize().to_vec();
    raw.extend_from_slice(&salt);
    Ok(format!("{{SSHA512}}{}", B64.encode(raw)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn forms() {
        let h = hash_password(b"secret").unwrap();
        assert!(verify(h.as_bytes(), b"secret"));
        assert!(!verify(h.as_bytes(), b"Secret"));
        assert!(verify(b"plain", b"plain"));
        assert!(!verify(b"plain", b"plain2"));
        // {SSHA} of "secret" with salt "salt": sha1("secretsalt") ++ "salt"
        let mut raw = Sha1::digest(b"secretsalt").to_vec();
        raw.extend_from_slice(b"salt");
        let ssha = format!("{{SSHA}}{}", B64.encode(raw));
        assert!(verify(ssha.as_bytes(), b"secret"));
        assert!(!verify(b"{CRYPT}abc", b"{CRYPT}abc"));
        assert!(!verify(b"{SSHA}!!!", b"x"));
    }
}
