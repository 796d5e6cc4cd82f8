//! The primitives NTLM is built from: MD4, MD5, HMAC-MD5 and RC4.

use hmac::{Hmac, KeyInit, Mac};
use md4::Md4;
use md5::{Digest, Md5};
use rc4::{Rc4, StreamCipher};

/// MD4 of the UTF-16LE form of a password: the NT hash (NTOWFv1).
pub fn nt_hash(password: &str) -> [u8; 16] {
    let mut h = Md4::new();
    for unit in password.encode_utf16() {
        h.update(unit.to_le_bytes());
    }
    h.finalize().into()
}

/// MD5 of the concatenation of `parts`.
pub fn md5(parts: &[&[u8]]) -> [u8; 16] {
    let mut h = Md5::new();
    for p in parts {
        h.update(p);
    }
    h.finalize().into()
}

/// HMAC-MD5 keyed with `key` over the concatenation of `parts`.
pub fn hmac_md5(key: &[u8], parts: &[&[u8]]) -> [u8; 16] {
    // HMAC takes keys of any length; the error branch cannot happen.
    let Ok(mut m) = <Hmac<Md5> as KeyInit>::new_from_slice(key) else {
        return [0; 16];
    };
    for p in parts {
        m.update(p);
    }
    m.finalize().into_bytes().into()
}

/// An RC4 keystream with a 16-byte key that continues from message to message (NTLM's
/// connection-oriented sealing handles).
pub struct Rc4Stream(Rc4);

impl Rc4Stream {
    /// A stream keyed with `key`.
    pub fn new(key: &[u8; 16]) -> Rc4Stream {
        // Any key of 1 to 256 bytes is accepted; 16 always is.
        match <Rc4 as KeyInit>::new_from_slice(key) {
            Ok(c) => Rc4Stream(c),
            Err(_) => unreachable!("RC4 takes 16-byte keys"),
        }
    }

    /// Encrypts or decrypts `data` in place, advancing the stream.
    pub fn apply(&mut self, data: &mut [u8]) {
        self.0.apply_keystream(data);
    }
}

/// One-shot RC4 of `data` under `key` (the exchanged session key).
pub fn rc4_once(key: &[u8; 16], data: &[u8]) -> Vec<u8> {
    let mut out = data.to_vec();
    Rc4Stream::new(key).apply(&mut out);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hex(b: &[u8]) -> String {
        b.iter().map(|x| format!("{x:02x}")).collect()
    }

    #[test]
    fn known_answers() {
        // RFC 1321, RFC 2202 (HMAC-MD5 test case 2), RFC 6229 (RC4, 128-bit key 0102…10).
        assert_eq!(hex(&md5(&[b"abc"])), "900150983cd24fb0d6963f7d28e17f72");
        assert_eq!(
            hex(&hmac_md5(b"Jefe", &[b"what do ya want ", b"for nothing?"])),
            "750c783e6ab0b503eaa86e310a5db738"
        );
        let key: [u8; 16] = core::array::from_fn(|i| i as u8 + 1);
        assert_eq!(
            hex(&rc4_once(&key, &[0; 16])),
            "9ac7cc9a609d1ef7b2932899cde41b97"
        );
        assert_eq!(
            hex(&nt_hash("Password")),
            "a4f49c406510bdcab6824ee7c30fd852"
        );
    }
}
