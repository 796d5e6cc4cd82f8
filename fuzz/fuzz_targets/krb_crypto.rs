//! Kerberos cryptography on attacker bytes: a key of the enctype the first byte picks
//! (AES256, AES128 or RC4; its bytes from the input) decrypting arbitrary ciphertext
//! for an arbitrary key usage, and verifying checksums of arbitrary types and lengths,
//! directly and as a PAC signer — none may panic, and a checksum accepted must be the
//! key's own. Then the properties decryption rests on: what is encrypted (with the
//! input's confounder) decrypts to itself, and not after one changed byte or under
//! another usage; a checksum verifies, and not after one changed byte. The first byte
//! also asks for the PRF, CF2 and string-to-key (with few PBKDF2 iterations).
//!
//! Input: `mode | key bytes | usage (u32 BE) | cksumtype (i32 BE) | flip (u16 BE) | rest`,
//! the rest cut in three ([`kauri_fuzz::parts`]): ciphertext, data, checksum.

#![no_main]

use kauri_auth::krb::crypto::{checksum_len, CryptoError, Enctype, Key};
use kauri_auth::krb::pac::PacSigner;
use kauri_auth::krb::signer::KeySigner;
use kauri_fuzz::parts;
use libfuzzer_sys::fuzz_target;

fn take<'a>(data: &mut &'a [u8], n: usize) -> Option<&'a [u8]> {
    if data.len() < n {
        return None;
    }
    let (a, b) = data.split_at(n);
    *data = b;
    Some(a)
}

fuzz_target!(|data: &[u8]| {
    let mut data = data;
    let Some(&[mode]) = take(&mut data, 1) else {
        return;
    };
    let etype = Enctype::ALL[usize::from(mode & 3) % 3];
    let Some(key_bytes) = take(&mut data, etype.key_len()) else {
        // A key of the wrong length is refused.
        assert!(Key::new(etype, data).is_err());
        return;
    };
    let key = Key::new(etype, key_bytes).expect("a key of the right length");
    assert_eq!(key.bytes(), key_bytes);
    let (Some(usage), Some(cksumtype), Some(flip)) =
        (take(&mut data, 4), take(&mut data, 4), take(&mut data, 2))
    else {
        return;
    };
    let usage = u32::from_be_bytes(usage.try_into().expect("4 bytes"));
    let cksumtype = i32::from_be_bytes(cksumtype.try_into().expect("4 bytes"));
    let flip = usize::from(u16::from_be_bytes(flip.try_into().expect("2 bytes")));
    let p = parts(data, 3);
    let (cipher, plain, value) = (
        p[0],
        p.get(1).copied().unwrap_or(&[]),
        p.get(2).copied().unwrap_or(&[]),
    );

    // Attacker ciphertext and checksums.
    match key.decrypt(usage, cipher) {
        Ok(out) => assert!(out.len() + etype.confounder_len() <= cipher.len()),
        Err(e) => {
            let _ = e.to_string();
        }
    }
    match key.verify_checksum(usage, plain, cksumtype, value) {
        Ok(()) => {
            assert_eq!(
                cksumtype,
                etype.checksum_type(),
                "a foreign checksum type accepted"
            );
            assert_eq!(Some(value.len()), checksum_len(cksumtype));
        }
        Err(e) => {
            let _ = e.to_string();
        }
    }
    let signer = KeySigner(&key);
    let _ = signer.verify(cksumtype, plain, value);

    // Encryption round trip, with the confounder from the input.
    let mut confounder = [0u8; 16];
    for (c, b) in confounder.iter_mut().zip(cipher) {
        *c = *b;
    }
    let confounder = &confounder[..etype.confounder_len()];
    let sealed = key
        .encrypt_with_confounder(usage, plain, confounder)
        .expect("encryption");
    assert_eq!(sealed.len(), plain.len() + etype.ciphertext_overhead());
    assert_eq!(
        key.decrypt(usage, &sealed).as_deref(),
        Ok(plain),
        "round trip"
    );
    let mut bad = sealed.clone();
    let i = flip % bad.len();
    bad[i] ^= 1 << (flip >> 13);
    assert_eq!(
        key.decrypt(usage, &bad),
        Err(CryptoError::IntegrityFailure),
        "a changed ciphertext decrypted"
    );
    // (RC4 maps some usages onto others, RFC 4757 §3: only AES keeps them all apart.)
    let other = usage ^ (1 + (flip as u32 & 0xff));
    if etype != Enctype::Rc4Hmac {
        assert!(
            key.decrypt(other, &sealed).is_err(),
            "decrypted under another usage"
        );
    } else {
        let _ = key.decrypt(other, &sealed);
    }
    assert!(
        key.decrypt(usage, &sealed[..sealed.len() - 1]).is_err(),
        "a shortened ciphertext decrypted"
    );

    // Checksum round trip.
    let sum = key.checksum(usage, plain).expect("a checksum");
    assert_eq!(Some(sum.len()), checksum_len(etype.checksum_type()));
    assert_eq!(
        key.verify_checksum(usage, plain, etype.checksum_type(), &sum),
        Ok(())
    );
    assert_eq!(signer.sign(plain).ok(), key.checksum(17, plain).ok());
    let mut bad = sum.clone();
    let j = flip % bad.len();
    bad[j] ^= 1 << (flip >> 13);
    assert_eq!(
        key.verify_checksum(usage, plain, etype.checksum_type(), &bad),
        Err(CryptoError::BadChecksum)
    );

    if mode & 4 != 0 {
        let prf = key.prf(plain).expect("PRF");
        assert!(!prf.is_empty());
        let k2 = key.cf2(&key, plain, value).expect("CF2");
        assert_eq!(k2.etype(), etype);
    }
    if mode & 8 != 0 {
        // String-to-key of arbitrary text, with 1 to 4 iterations (the default 4096 would
        // make each input slow; the iteration count is a parameter of the same code).
        let password = String::from_utf8_lossy(plain);
        let salt = String::from_utf8_lossy(value);
        let iterations = 1 + (usage & 3);
        let k = Key::from_password_iterations(etype, &password, &salt, iterations)
            .expect("string-to-key");
        assert_eq!(k.bytes().len(), etype.key_len());
        assert!(
            Key::from_password_iterations(etype, &password, &salt, 0).is_err()
                || etype == Enctype::Rc4Hmac
        );
    }
});
