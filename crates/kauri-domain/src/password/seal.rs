//! Encryption at rest for stored secrets: one 32-byte key in a file of its own, and
//! XChaCha20-Poly1305 with a random nonce per value. The associated data names the object
//! a value belongs to (its GUID), so a sealed value copied onto another object does not
//! open there.

use std::fmt;
use std::fs;
use std::io::{Read, Write};
use std::path::Path;

use chacha20poly1305::aead::{Aead, Payload};
use chacha20poly1305::{Key, KeyInit, XChaCha20Poly1305, XNonce};
use zeroize::Zeroize;

use super::{random_fill, PasswordError};

/// Length of a [`SecretKey`] and of its key file, in bytes.
pub const KEY_LEN: usize = 32;
/// The first byte of every sealed value.
const SEAL_VERSION: u8 = 1;
const NONCE_LEN: usize = 24;
const TAG_LEN: usize = 16;

/// The key that seals stored secrets. Prints nothing of itself and wipes itself on drop.
pub struct SecretKey([u8; KEY_LEN]);

impl SecretKey {
    /// A new random key.
    pub fn generate() -> Result<SecretKey, PasswordError> {
        let mut key = [0u8; KEY_LEN];
        random_fill(&mut key)?;
        Ok(SecretKey(key))
    }

    /// A key obtained some other way (a secret store, a test).
    pub fn from_bytes(bytes: [u8; KEY_LEN]) -> SecretKey {
        SecretKey(bytes)
    }

    /// Makes a new random key and writes it to a new file at `path`, readable and
    /// writable by the owner only (mode 0600). Refuses to replace an existing file, so
    /// a key that sealed data is never lost by accident.
    pub fn create(path: impl AsRef<Path>) -> Result<SecretKey, PasswordError> {
        let key = SecretKey::generate()?;
        key.save_new(path)?;
        Ok(key)
    }

    /// The key's bytes, for a backup that must carry it to another machine.
    pub fn to_bytes(&self) -> [u8; KEY_LEN] {
        self.0
    }

    /// Writes this key to a new file at `path` (mode 0600), refusing to replace one: a
    /// restored DC gets the key of the domain it restores this way.
    pub fn save_new(&self, path: impl AsRef<Path>) -> Result<(), PasswordError> {
        let path = path.as_ref();
        let fail = |reason: String| PasswordError::KeyFile {
            path: path.to_path_buf(),
            reason,
        };
        let mut options = fs::OpenOptions::new();
        options.write(true).create_new(true);
        #[cfg(unix)]
        {
            use std::os::unix::fs::OpenOptionsExt;
            options.mode(0o600);
        }
        let mut file = options.open(path).map_err(|e| {
            if e.kind() == std::io::ErrorKind::AlreadyExists {
                fail("already exists; not replacing a key".into())
            } else {
                fail(format!("cannot create: {e}"))
            }
        })?;
        if let Err(e) = file.write_all(&self.0).and_then(|()| file.sync_all()) {
            drop(file);
            // Leave no short key file behind to be loaded later.
            let _ = fs::remove_file(path);
            return Err(fail(format!("cannot write: {e}")));
        }
        Ok(())
    }

    /// Reads the key file at `path`. Refuses a missing file, a file that is not exactly
    /// 32 bytes, and (on Unix) a file that group or others may read or write: such a key
    /// may already be known to someone else, and `chmod 600` fixes it.
    pub fn load(path: impl AsRef<Path>) -> Result<SecretKey, PasswordError> {
        let path = path.as_ref();
        let fail = |reason: String| PasswordError::KeyFile {
            path: path.to_path_buf(),
            reason,
        };
        let file = fs::File::open(path).map_err(|e| {
            if e.kind() == std::io::ErrorKind::NotFound {
                fail("missing".into())
            } else {
                fail(format!("cannot open: {e}"))
            }
        })?;
        let meta = file
            .metadata()
            .map_err(|e| fail(format!("cannot read: {e}")))?;
        if !meta.is_file() {
            return Err(fail("not a regular file".into()));
        }
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = meta.permissions().mode() & 0o777;
            if mode & 0o077 != 0 {
                return Err(fail(format!(
                    "mode {mode:03o} lets group or others at the key; run chmod 600"
                )));
            }
        }
        // Read one byte more than a key, so a longer file is noticed without reading it all.
        let mut bytes = Vec::with_capacity(KEY_LEN + 1);
        let read = file
            .take(KEY_LEN as u64 + 1)
            .read_to_end(&mut bytes)
            .map_err(|e| fail(format!("cannot read: {e}")));
        let result = match read {
            Ok(KEY_LEN) => {
                let mut key = [0u8; KEY_LEN];
                key.copy_from_slice(&bytes);
                Ok(SecretKey(key))
            }
            Ok(n) if n > KEY_LEN => Err(fail(format!(
                "holds more than {KEY_LEN} bytes, a key is {KEY_LEN}"
            ))),
            Ok(n) => Err(fail(format!("holds {n} bytes, a key is {KEY_LEN}"))),
            Err(e) => Err(e),
        };
        bytes.zeroize();
        result
    }

    /// Encrypts `plaintext` for storage on the object named by `associated_data`.
    /// Output: version byte 1 ‖ 24-byte random nonce ‖ ciphertext ‖ 16-byte tag. The
    /// version byte is authenticated along with `associated_data`.
    pub fn seal(&self, plaintext: &[u8], associated_data: &[u8]) -> Result<Vec<u8>, PasswordError> {
        let mut nonce = [0u8; NONCE_LEN];
        random_fill(&mut nonce)?;
        let aad = versioned_aad(associated_data);
        let body = aead_seal(&self.0, &nonce, &aad, plaintext)?;
        let mut out = Vec::with_capacity(1 + NONCE_LEN + body.len());
        out.push(SEAL_VERSION);
        out.extend_from_slice(&nonce);
        out.extend_from_slice(&body);
        Ok(out)
    }

    /// Decrypts what [`seal`](Self::seal) made with this key and the same
    /// `associated_data`; anything else is refused.
    pub fn open(&self, sealed: &[u8], associated_data: &[u8]) -> Result<Vec<u8>, PasswordError> {
        let (&version, rest) = sealed.split_first().ok_or(PasswordError::Open)?;
        if version != SEAL_VERSION {
            return Err(PasswordError::UnknownVersion(version));
        }
        if rest.len() < NONCE_LEN + TAG_LEN {
            return Err(PasswordError::Open);
        }
        let (nonce, body) = rest.split_at(NONCE_LEN);
        let mut n = [0u8; NONCE_LEN];
        n.copy_from_slice(nonce);
        aead_open(&self.0, &n, &versioned_aad(associated_data), body)
    }
}

impl fmt::Debug for SecretKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("SecretKey(..)")
    }
}

impl Drop for SecretKey {
    fn drop(&mut self) {
        self.0.zeroize();
    }
}

fn versioned_aad(associated_data: &[u8]) -> Vec<u8> {
    let mut aad = Vec::with_capacity(1 + associated_data.len());
    aad.push(SEAL_VERSION);
    aad.extend_from_slice(associated_data);
    aad
}

/// XChaCha20-Poly1305: ciphertext ‖ tag.
fn aead_seal(
    key: &[u8; KEY_LEN],
    nonce: &[u8; NONCE_LEN],
    aad: &[u8],
    plaintext: &[u8],
) -> Result<Vec<u8>, PasswordError> {
    XChaCha20Poly1305::new(&Key::from(*key))
        .encrypt(
            &XNonce::from(*nonce),
            Payload {
                msg: plaintext,
                aad,
            },
        )
        .map_err(|_| PasswordError::Seal)
}

fn aead_open(
    key: &[u8; KEY_LEN],
    nonce: &[u8; NONCE_LEN],
    aad: &[u8],
    body: &[u8],
) -> Result<Vec<u8>, PasswordError> {
    XChaCha20Poly1305::new(&Key::from(*key))
        .decrypt(&XNonce::from(*nonce), Payload { msg: body, aad })
        .map_err(|_| PasswordError::Open)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn unhex(s: &str) -> Vec<u8> {
        let s: String = s.split_whitespace().collect();
        (0..s.len())
            .step_by(2)
            .map(|i| u8::from_str_radix(&s[i..i + 2], 16).unwrap())
            .collect()
    }

    #[test]
    fn xchacha_known_answer() {
        // draft-irtf-cfrg-xchacha-03, appendix A.3.1.
        let key: [u8; 32] = std::array::from_fn(|i| 0x80 + i as u8);
        let nonce: [u8; 24] = std::array::from_fn(|i| 0x40 + i as u8);
        let aad = unhex("50515253c0c1c2c3c4c5c6c7");
        let plaintext = b"Ladies and Gentlemen of the class of '99: If I could offer you only one tip for the future, sunscreen would be it.";
        let expected = unhex(
            "bd6d179d3e83d43b9576579493c0e939572a1700252bfaccbed2902c21396cbb
             731c7f1b0b4aa6440bf3a82f4eda7e39ae64c6708c54c216cb96b72e1213b452
             2f8c9ba40db5d945b11b69b982c1bb9e3f3fac2bc369488f76b2383565d3fff9
             21f9664c97637da9768812f615c68b13b52e
             c0875924c1c7987947deafd8780acf49",
        );
        assert_eq!(aead_seal(&key, &nonce, &aad, plaintext).unwrap(), expected);
        assert_eq!(aead_open(&key, &nonce, &aad, &expected).unwrap(), plaintext);
    }

    const GUID_A: [u8; 16] = [0xa1; 16];
    const GUID_B: [u8; 16] = [0xb2; 16];

    #[test]
    fn round_trip() {
        let key = SecretKey::generate().unwrap();
        let sealed = key.seal(b"secret bytes", &GUID_A).unwrap();
        assert_eq!(sealed[0], 1);
        assert_eq!(sealed.len(), 1 + 24 + 12 + 16);
        assert_eq!(key.open(&sealed, &GUID_A).unwrap(), b"secret bytes");
        // Fresh nonce every time.
        assert_ne!(key.seal(b"secret bytes", &GUID_A).unwrap(), sealed);
        let empty = key.seal(b"", &GUID_A).unwrap();
        assert_eq!(key.open(&empty, &GUID_A).unwrap(), b"");
    }

    #[test]
    fn refusals() {
        let key = SecretKey::generate().unwrap();
        let other = SecretKey::generate().unwrap();
        let sealed = key.seal(b"secret bytes", &GUID_A).unwrap();
        assert_eq!(other.open(&sealed, &GUID_A), Err(PasswordError::Open));
        assert_eq!(key.open(&sealed, &GUID_B), Err(PasswordError::Open));
        for i in 1..sealed.len() {
            let mut t = sealed.clone();
            t[i] ^= 0x01;
            assert_eq!(key.open(&t, &GUID_A), Err(PasswordError::Open), "byte {i}");
        }
        let mut t = sealed.clone();
        t[0] = 2;
        assert_eq!(key.open(&t, &GUID_A), Err(PasswordError::UnknownVersion(2)));
        for cut in 0..sealed.len() {
            assert!(key.open(&sealed[..cut], &GUID_A).is_err(), "cut at {cut}");
        }
    }

    #[test]
    fn key_files() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("secrets.key");
        let key = SecretKey::create(&path).unwrap();
        assert_eq!(fs::read(&path).unwrap().len(), KEY_LEN);
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = fs::metadata(&path).unwrap().permissions().mode();
            assert_eq!(mode & 0o777, 0o600);
        }
        let loaded = SecretKey::load(&path).unwrap();
        let sealed = key.seal(b"x", &GUID_A).unwrap();
        assert_eq!(loaded.open(&sealed, &GUID_A).unwrap(), b"x");
        assert_eq!(format!("{loaded:?}"), "SecretKey(..)");

        let err = SecretKey::create(&path).unwrap_err().to_string();
        assert!(err.contains("already exists"), "{err}");
        // The existing key was left alone.
        assert_eq!(
            SecretKey::load(&path)
                .unwrap()
                .open(&sealed, &GUID_A)
                .unwrap(),
            b"x"
        );

        let err = SecretKey::load(dir.path().join("nope"))
            .unwrap_err()
            .to_string();
        assert!(err.contains("missing"), "{err}");

        let short = dir.path().join("short.key");
        write_private(&short, &[1; 31]);
        let err = SecretKey::load(&short).unwrap_err().to_string();
        assert!(err.contains("31 bytes"), "{err}");
        let long = dir.path().join("long.key");
        write_private(&long, &[1; 33]);
        let err = SecretKey::load(&long).unwrap_err().to_string();
        assert!(err.contains("more than 32 bytes"), "{err}");
        let err = SecretKey::load(dir.path()).unwrap_err().to_string();
        assert!(
            err.contains("not a regular file") || err.contains("chmod"),
            "{err}"
        );

        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            fs::set_permissions(&path, fs::Permissions::from_mode(0o644)).unwrap();
            let err = SecretKey::load(&path).unwrap_err().to_string();
            assert!(err.contains("chmod 600"), "{err}");
        }
    }

    fn write_private(path: &Path, bytes: &[u8]) {
        let mut options = fs::OpenOptions::new();
        options.write(true).create_new(true);
        #[cfg(unix)]
        {
            use std::os::unix::fs::OpenOptionsExt;
            options.mode(0o600);
        }
        options.open(path).unwrap().write_all(bytes).unwrap();
    }
}
