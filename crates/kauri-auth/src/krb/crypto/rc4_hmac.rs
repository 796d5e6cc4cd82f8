//! arcfour-hmac (etype 23, RFC 4757) and its keyed checksum hmac-md5
//! (checksum type -138). Only the non-exportable variant exists here.

use hmac::{Hmac, KeyInit, Mac};
use md4::Md4;
use md5::{Digest, Md5};
use rc4::{Rc4, StreamCipher};
use sha1::Sha1;
use subtle::ConstantTimeEq;
use zeroize::{Zeroize, Zeroizing};

use super::CryptoError;

/// Length of the HMAC-MD5 checksum that leads every ciphertext.
pub(super) const CHECKSUM_LEN: usize = 16;
/// Length of the confounder.
pub(super) const CONFOUNDER_LEN: usize = 8;
/// Shortest ciphertext `decrypt` can accept.
pub(super) const MIN_CIPHERTEXT: usize = CHECKSUM_LEN + CONFOUNDER_LEN;

/// HMAC-MD5, RC4-HMAC's MAC and key-derivation function.
type HmacMd5 = Hmac<Md5>;

/// RFC 4757 §3 maps two RFC 4120 key usages to the numbers Windows uses:
/// 3 (AS-REP encrypted part) becomes 8 and 23 (GSS wrap token signing)
/// becomes 13. Everything else, including 9 (TGS-REP encrypted with a
/// subkey; the RFC's table said 8, its erratum and every implementation say
/// 9), is used as is.
pub(super) fn ms_usage(usage: u32) -> u32 {
    match usage {
        3 => 8,
        23 => 13,
        other => other,
    }
}

/// HMAC-MD5 of the concatenation of `parts`.
fn hmac_md5_parts(key: &[u8], parts: &[&[u8]]) -> Result<[u8; 16], CryptoError> {
    let mut mac =
        <HmacMd5 as KeyInit>::new_from_slice(key).map_err(|_| CryptoError::Internal("HMAC key"))?;
    for p in parts {
        mac.update(p);
    }
    let tag = mac.finalize().into_bytes();
    let mut out = [0u8; 16];
    out.copy_from_slice(&tag);
    Ok(out)
}

/// NT hash: MD4 of the UTF-16LE password. This is the RC4-HMAC key (the
/// salt is not used).
pub(super) fn nt_hash(password: &str) -> [u8; 16] {
    let mut hasher = Md4::new();
    // Feed code units in batches from a stack buffer so no heap copy of the
    // password is made.
    let mut buf = [0u8; 64];
    let mut filled = 0;
    for unit in password.encode_utf16() {
        if let Some(dst) = buf.get_mut(filled..filled + 2) {
            dst.copy_from_slice(&unit.to_le_bytes());
        }
        filled += 2;
        if filled == buf.len() {
            hasher.update(buf);
            filled = 0;
        }
    }
    hasher.update(buf.get(..filled).unwrap_or(&[]));
    buf.zeroize();
    let digest = hasher.finalize();
    let mut out = [0u8; 16];
    out.copy_from_slice(&digest);
    out
}

/// RFC 4757 §5 encryption: checksum = HMAC-MD5(K1, confounder | plaintext)
/// with K1 = HMAC-MD5(key, ms_usage as little-endian u32); the data is
/// RC4-encrypted with K3 = HMAC-MD5(K1, checksum); output is
/// checksum | RC4(confounder | plaintext).
pub(super) fn encrypt(
    key: &[u8],
    usage: u32,
    confounder: &[u8; CONFOUNDER_LEN],
    plaintext: &[u8],
) -> Result<Vec<u8>, CryptoError> {
    let total = plaintext
        .len()
        .checked_add(MIN_CIPHERTEXT)
        .ok_or(CryptoError::Internal("message length"))?;
    let k1 = Zeroizing::new(hmac_md5_parts(key, &[&ms_usage(usage).to_le_bytes()])?);
    let cksum = hmac_md5_parts(&*k1, &[confounder, plaintext])?;
    let k3 = Zeroizing::new(hmac_md5_parts(&*k1, &[&cksum])?);

    let mut out = Vec::with_capacity(total);
    out.extend_from_slice(&cksum);
    out.extend_from_slice(confounder);
    out.extend_from_slice(plaintext);
    let mut rc4 =
        <Rc4 as KeyInit>::new_from_slice(&*k3).map_err(|_| CryptoError::Internal("RC4 key"))?;
    rc4.apply_keystream(out.get_mut(CHECKSUM_LEN..).unwrap_or(&mut []));
    Ok(out)
}

/// Inverse of [`encrypt`] with a constant-time checksum comparison. As MIT
/// and impacket do, a failure with usage 9 is retried with usage 8 for peers
/// that followed the RFC's original table.
pub(super) fn decrypt(key: &[u8], usage: u32, ciphertext: &[u8]) -> Result<Vec<u8>, CryptoError> {
    if ciphertext.len() < MIN_CIPHERTEXT {
        return Err(CryptoError::CiphertextTooShort {
            got: ciphertext.len(),
            min: MIN_CIPHERTEXT,
        });
    }
    match decrypt_ms(key, ms_usage(usage), ciphertext) {
        Err(CryptoError::IntegrityFailure) if usage == 9 => decrypt_ms(key, 8, ciphertext),
        other => other,
    }
}

/// One decryption attempt with an already translated usage number.
fn decrypt_ms(key: &[u8], ms_usage: u32, ciphertext: &[u8]) -> Result<Vec<u8>, CryptoError> {
    let too_short = CryptoError::CiphertextTooShort {
        got: ciphertext.len(),
        min: MIN_CIPHERTEXT,
    };
    let (cksum, body) = ciphertext.split_at_checked(CHECKSUM_LEN).ok_or(too_short)?;
    let plain_len = body.len().checked_sub(CONFOUNDER_LEN).ok_or(too_short)?;
    let k1 = Zeroizing::new(hmac_md5_parts(key, &[&ms_usage.to_le_bytes()])?);
    let k3 = Zeroizing::new(hmac_md5_parts(&*k1, &[cksum])?);
    let mut out = body.to_vec();
    let mut rc4 =
        <Rc4 as KeyInit>::new_from_slice(&*k3).map_err(|_| CryptoError::Internal("RC4 key"))?;
    rc4.apply_keystream(&mut out);
    let expected = hmac_md5_parts(&*k1, &[&out])?;
    if !bool::from(expected.ct_eq(cksum)) {
        out.zeroize();
        return Err(CryptoError::IntegrityFailure);
    }
    out.copy_within(CONFOUNDER_LEN.., 0);
    out.truncate(plain_len);
    Ok(out)
}

/// The hmac-md5 keyed checksum (type -138) of RFC 4757 §4, also the PAC
/// signature algorithm for RC4 keys in MS-PAC: Ksign = HMAC-MD5(key,
/// "signaturekey\0"), tmp = MD5(ms_usage as little-endian u32 | data),
/// checksum = HMAC-MD5(Ksign, tmp). The usage is translated like for
/// encryption (MIT does; it only matters for usages 3 and 23).
pub(super) fn checksum(key: &[u8], usage: u32, data: &[u8]) -> Result<[u8; 16], CryptoError> {
    let ksign = Zeroizing::new(hmac_md5_parts(key, &[b"signaturekey\0"])?);
    let mut md5 = Md5::new();
    md5.update(ms_usage(usage).to_le_bytes());
    md5.update(data);
    let tmp = md5.finalize();
    hmac_md5_parts(&*ksign, &[&tmp])
}

/// The RC4-HMAC pseudo-random function as MIT krb5 and Heimdal implement
/// it (and impacket agrees): HMAC-SHA1(key, input), 20 bytes. Needed for
/// KRB-FX-CF2 (FAST) with RC4 keys.
pub(super) fn prf(key: &[u8], input: &[u8]) -> Result<[u8; 20], CryptoError> {
    let mut mac = <Hmac<Sha1> as KeyInit>::new_from_slice(key)
        .map_err(|_| CryptoError::Internal("HMAC key"))?;
    mac.update(input);
    let tag = mac.finalize().into_bytes();
    let mut out = [0u8; 20];
    out.copy_from_slice(&tag);
    Ok(out)
}
