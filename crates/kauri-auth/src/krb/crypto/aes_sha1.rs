//! aes128-cts-hmac-sha1-96 and aes256-cts-hmac-sha1-96 (RFC 3962), built on
//! the simplified profile of RFC 3961.
//!
//! Everything here is generic over [`AesVariant`] so the two key sizes share
//! one implementation and still get monomorphised, allocation-free inner
//! loops.

use ::aes::cipher::array::Array;
use ::aes::cipher::consts::U16;
use ::aes::cipher::{
    BlockCipherDecBackend, BlockCipherDecClosure, BlockCipherDecrypt, BlockCipherEncBackend,
    BlockCipherEncClosure, BlockCipherEncrypt, BlockSizeUser, KeyInit,
};
use hmac::{Hmac, Mac};
use sha1::{Digest, Sha1};
use subtle::ConstantTimeEq;
use zeroize::{Zeroize, Zeroizing};

use super::nfold::{nfold, usage_constant, KERBEROS_FOLD_16};
use super::CryptoError;

/// AES block size, which is also the confounder length.
pub(super) const BLOCK: usize = 16;
/// Length of the truncated HMAC-SHA1 (the "-96" in the names).
pub(super) const MAC_LEN: usize = 12;
/// Shortest ciphertext `decrypt` can accept: one confounder block and a MAC.
pub(super) const MIN_CIPHERTEXT: usize = BLOCK + MAC_LEN;

/// Key-derivation tag of RFC 3961 §5.3 for the checksum key Kc.
const TAG_KC: u8 = 0x99;
/// Tag for the encryption key Ke.
const TAG_KE: u8 = 0xAA;
/// Tag for the integrity key Ki.
const TAG_KI: u8 = 0x55;

/// HMAC-SHA1, the integrity and checksum MAC.
type HmacSha1 = Hmac<Sha1>;
/// One AES block as the block cipher API takes it.
type AesBlock = Array<u8, U16>;

/// The two AES key sizes, as types, so the code is written once.
pub(super) trait AesVariant {
    /// Encryption-only cipher (cheaper key schedule than encrypt+decrypt).
    type Enc: BlockCipherEncrypt<BlockSize = U16> + KeyInit;
    /// Decryption-only cipher.
    type Dec: BlockCipherDecrypt<BlockSize = U16> + KeyInit;
    /// Key (and random-to-key seed) length in bytes.
    const KEY_LEN: usize;
}

/// aes128-cts-hmac-sha1-96 (etype 17).
pub(super) struct V128;
/// aes256-cts-hmac-sha1-96 (etype 18).
pub(super) struct V256;

impl AesVariant for V128 {
    type Enc = ::aes::Aes128Enc;
    type Dec = ::aes::Aes128Dec;
    const KEY_LEN: usize = 16;
}

impl AesVariant for V256 {
    type Enc = ::aes::Aes256Enc;
    type Dec = ::aes::Aes256Dec;
    const KEY_LEN: usize = 32;
}

/// Scratch buffer big enough for either key size; zeroized on drop.
type KeyBuf = Zeroizing<[u8; 32]>;

/// The first `KEY_LEN` bytes of a key buffer.
fn key_bytes<V: AesVariant>(buf: &[u8; 32]) -> &[u8] {
    buf.get(..V::KEY_LEN).unwrap_or(buf)
}

/// AES encryption key schedule for `key`.
fn enc_cipher<V: AesVariant>(key: &[u8]) -> Result<V::Enc, CryptoError> {
    V::Enc::new_from_slice(key).map_err(|_| CryptoError::Internal("AES key length"))
}

/// AES decryption key schedule for `key`.
fn dec_cipher<V: AesVariant>(key: &[u8]) -> Result<V::Dec, CryptoError> {
    V::Dec::new_from_slice(key).map_err(|_| CryptoError::Internal("AES key length"))
}

/// HMAC-SHA1 keyed with `key`.
fn hmac_sha1(key: &[u8]) -> Result<HmacSha1, CryptoError> {
    <HmacSha1 as KeyInit>::new_from_slice(key).map_err(|_| CryptoError::Internal("HMAC key"))
}

/// Encrypts one block in place (ECB).
fn encrypt_block<E: BlockCipherEncrypt<BlockSize = U16>>(cipher: &E, block: &mut [u8; 16]) {
    cipher.encrypt_block(block.into());
}

/// `dst ^= src` over the shorter of the two.
fn xor_into(dst: &mut [u8], src: &[u8]) {
    for (d, s) in dst.iter_mut().zip(src) {
        *d ^= *s;
    }
}

/// DK(base, constant) of RFC 3961 §5.1 with an already n-folded constant:
/// encrypt the constant, then keep encrypting the previous output until
/// `KEY_LEN` bytes exist. AES's random-to-key is the identity.
fn derive<V: AesVariant>(base: &V::Enc, folded: [u8; 16]) -> KeyBuf {
    let mut out: KeyBuf = Zeroizing::new([0u8; 32]);
    let mut block = folded;
    if let Some(dst) = out.get_mut(..V::KEY_LEN) {
        for chunk in dst.chunks_mut(BLOCK) {
            encrypt_block(base, &mut block);
            let n = chunk.len();
            if let Some(src) = block.get(..n) {
                chunk.copy_from_slice(src);
            }
        }
    }
    block.zeroize();
    out
}

/// Splits a CTS message longer than one block into the leading whole blocks
/// that are plain CBC, the penultimate block and the final (1 to 16 byte)
/// block.
fn cts_split(data: &mut [u8]) -> Result<(&mut [AesBlock], &mut AesBlock, &mut [u8]), CryptoError> {
    let len = data.len();
    if len <= BLOCK {
        return Err(CryptoError::Internal("CTS split of a single block"));
    }
    // Number of blocks, counting a partial final block, is at least 2.
    let blocks = len.div_ceil(BLOCK);
    let prefix_len = blocks.saturating_sub(2).saturating_mul(BLOCK);
    let (prefix, tail) = data
        .split_at_mut_checked(prefix_len)
        .ok_or(CryptoError::Internal("CTS split"))?;
    let (pen, last) = tail
        .split_at_mut_checked(BLOCK)
        .ok_or(CryptoError::Internal("CTS split"))?;
    let pen = <&mut AesBlock>::try_from(pen).map_err(|_| CryptoError::Internal("CTS split"))?;
    let (prefix, rest) = AesBlock::slice_as_chunks_mut(prefix);
    if !rest.is_empty() || last.is_empty() || last.len() > BLOCK {
        return Err(CryptoError::Internal("CTS split"));
    }
    Ok((prefix, pen, last))
}

/// Encrypt `data` in place with AES-CBC and ciphertext stealing (RFC 3962
/// §5) using a zero IV: the last two blocks of the CBC output are swapped
/// and the final one truncated to the length of the last plaintext block. A
/// one-block message is a single ECB block. Used by `encrypt` and exposed to
/// the tests for the RFC 3962 appendix B vectors.
pub(super) fn cts_encrypt<E: BlockCipherEncrypt<BlockSize = U16>>(
    cipher: &E,
    data: &mut [u8],
) -> Result<(), CryptoError> {
    if data.len() < BLOCK {
        return Err(CryptoError::CiphertextTooShort {
            got: data.len(),
            min: BLOCK,
        });
    }
    if let Ok(block) = <&mut AesBlock>::try_from(&mut *data) {
        cipher.encrypt_block(block);
        return Ok(());
    }
    let (prefix, pen, last) = cts_split(data)?;
    // CBC is serial; running the whole chain inside one backend call keeps
    // the hardware AES path inlined instead of re-entering it per block.
    cipher.encrypt_with_backend(CtsEncrypt { prefix, pen, last });
    Ok(())
}

/// The CBC-CTS encryption loop, run by the block cipher with its backend.
struct CtsEncrypt<'a> {
    /// Blocks before the last two, encrypted with plain CBC.
    prefix: &'a mut [AesBlock],
    /// The penultimate plaintext block; receives the final CBC block.
    pen: &'a mut AesBlock,
    /// The final 1 to 16 plaintext bytes; receive the truncated
    /// penultimate CBC block.
    last: &'a mut [u8],
}

impl BlockSizeUser for CtsEncrypt<'_> {
    type BlockSize = U16;
}

impl BlockCipherEncClosure for CtsEncrypt<'_> {
    #[inline(always)]
    fn call<B: BlockCipherEncBackend<BlockSize = U16>>(self, backend: &B) {
        // Plain CBC over all blocks before the last two.
        let mut iv = AesBlock::default();
        for block in self.prefix.iter_mut() {
            xor_into(block, &iv);
            backend.encrypt_block_inplace(block);
            iv = *block;
        }
        // Penultimate block, then the zero-padded final block chained on it.
        let mut c_pen = iv;
        xor_into(&mut c_pen, self.pen);
        backend.encrypt_block_inplace(&mut c_pen);
        let mut c_last = c_pen;
        xor_into(&mut c_last, self.last);
        backend.encrypt_block_inplace(&mut c_last);
        // Swap: the full final block goes first, the penultimate one is
        // truncated to the final plaintext block's length.
        *self.pen = c_last;
        for (dst, src) in self.last.iter_mut().zip(c_pen.iter()) {
            *dst = *src;
        }
    }
}

/// Inverse of [`cts_encrypt`], in place, zero IV. The CBC part is decrypted
/// several blocks at a time, which CBC decryption allows.
pub(super) fn cts_decrypt<D: BlockCipherDecrypt<BlockSize = U16>>(
    cipher: &D,
    data: &mut [u8],
) -> Result<(), CryptoError> {
    if data.len() < BLOCK {
        return Err(CryptoError::CiphertextTooShort {
            got: data.len(),
            min: BLOCK,
        });
    }
    if let Ok(block) = <&mut AesBlock>::try_from(&mut *data) {
        cipher.decrypt_block(block);
        return Ok(());
    }
    let (prefix, pen, last) = cts_split(data)?;
    cipher.decrypt_with_backend(CtsDecrypt { prefix, pen, last });
    Ok(())
}

/// The CBC-CTS decryption loop, run by the block cipher with its backend.
struct CtsDecrypt<'a> {
    /// Blocks before the last two, decrypted with plain CBC.
    prefix: &'a mut [AesBlock],
    /// On input the stolen final CBC block; on output the penultimate
    /// plaintext block.
    pen: &'a mut AesBlock,
    /// On input the truncated penultimate CBC block; on output the final
    /// plaintext block.
    last: &'a mut [u8],
}

impl BlockSizeUser for CtsDecrypt<'_> {
    type BlockSize = U16;
}

impl BlockCipherDecClosure for CtsDecrypt<'_> {
    #[inline(always)]
    fn call<B: BlockCipherDecBackend<BlockSize = U16>>(self, backend: &B) {
        // CBC-decrypt the leading blocks, as many at once as the backend
        // can. Each batch keeps a copy of its ciphertext: block i's
        // ciphertext is block i + 1's chaining value.
        let mut prev = AesBlock::default();
        let (batches, rest) = Array::<AesBlock, B::ParBlocksSize>::slice_as_chunks_mut(self.prefix);
        for batch in batches.iter_mut() {
            let saved = batch.clone();
            backend.decrypt_par_blocks_inplace(batch);
            for (block, chain) in batch
                .iter_mut()
                .zip(core::iter::once(&prev).chain(saved.iter()))
            {
                xor_into(block, chain);
            }
            if let Some(last) = saved.last() {
                prev = *last;
            }
        }
        for block in rest.iter_mut() {
            let saved = *block;
            backend.decrypt_block_inplace(block);
            xor_into(block, &prev);
            prev = saved;
        }

        // D(stolen block) = zero-padded final plaintext XOR the penultimate
        // CBC block. The first `last.len()` bytes of that CBC block were
        // sent as `last`; its remaining bytes are the tail of D.
        let mut d = *self.pen;
        backend.decrypt_block_inplace(&mut d);
        let mut c_pen = d;
        for (dst, src) in c_pen.iter_mut().zip(self.last.iter()) {
            *dst = *src;
        }
        // Final plaintext block.
        xor_into(self.last, &d);
        // Penultimate plaintext block.
        backend.decrypt_block_inplace(&mut c_pen);
        xor_into(&mut c_pen, &prev);
        *self.pen = c_pen;
        d.zeroize();
        c_pen.zeroize();
    }
}

/// RFC 3961 §5.3 encryption: CTS(Ke, confounder | plaintext) followed by
/// the first 12 bytes of HMAC-SHA1(Ki, confounder | plaintext).
pub(super) fn encrypt<V: AesVariant>(
    key: &[u8],
    usage: u32,
    confounder: &[u8; BLOCK],
    plaintext: &[u8],
) -> Result<Vec<u8>, CryptoError> {
    let total = plaintext
        .len()
        .checked_add(BLOCK + MAC_LEN)
        .ok_or(CryptoError::Internal("message length"))?;

    let base = enc_cipher::<V>(key)?;
    let ke = derive::<V>(&base, usage_constant(usage, TAG_KE));
    let ki = derive::<V>(&base, usage_constant(usage, TAG_KI));
    drop(base);

    let mut out = Vec::with_capacity(total);
    out.extend_from_slice(confounder);
    out.extend_from_slice(plaintext);

    let mut mac = hmac_sha1(key_bytes::<V>(&ki))?;
    mac.update(&out);
    let tag = mac.finalize().into_bytes();

    cts_encrypt(&enc_cipher::<V>(key_bytes::<V>(&ke))?, &mut out)?;
    out.extend_from_slice(tag.get(..MAC_LEN).unwrap_or(&tag));
    Ok(out)
}

/// Inverse of [`encrypt`]: checks the MAC in constant time and returns the
/// plaintext without the confounder.
pub(super) fn decrypt<V: AesVariant>(
    key: &[u8],
    usage: u32,
    ciphertext: &[u8],
) -> Result<Vec<u8>, CryptoError> {
    let body_len = ciphertext
        .len()
        .checked_sub(MAC_LEN)
        .filter(|&n| n >= BLOCK)
        .ok_or(CryptoError::CiphertextTooShort {
            got: ciphertext.len(),
            min: MIN_CIPHERTEXT,
        })?;
    let (body, received_mac) = ciphertext
        .split_at_checked(body_len)
        .ok_or(CryptoError::Internal("ciphertext split"))?;

    let base = enc_cipher::<V>(key)?;
    let ke = derive::<V>(&base, usage_constant(usage, TAG_KE));
    let ki = derive::<V>(&base, usage_constant(usage, TAG_KI));
    drop(base);

    let mut out = body.to_vec();
    cts_decrypt(&dec_cipher::<V>(key_bytes::<V>(&ke))?, &mut out)?;

    let mut mac = hmac_sha1(key_bytes::<V>(&ki))?;
    mac.update(&out);
    let expected = mac.finalize().into_bytes();
    let expected = expected.get(..MAC_LEN).unwrap_or(&[]);
    if !bool::from(expected.ct_eq(received_mac)) {
        out.zeroize();
        return Err(CryptoError::IntegrityFailure);
    }
    // Drop the confounder.
    out.copy_within(BLOCK.., 0);
    out.truncate(body_len - BLOCK);
    Ok(out)
}

/// hmac-sha1-96-aes128/256 (checksum types 15 and 16): the first 12 bytes of
/// HMAC-SHA1(Kc, data) with Kc = DK(key, usage | 0x99).
pub(super) fn checksum<V: AesVariant>(
    key: &[u8],
    usage: u32,
    data: &[u8],
) -> Result<[u8; MAC_LEN], CryptoError> {
    let base = enc_cipher::<V>(key)?;
    let kc = derive::<V>(&base, usage_constant(usage, TAG_KC));
    drop(base);
    let mut mac = hmac_sha1(key_bytes::<V>(&kc))?;
    mac.update(data);
    let full = mac.finalize().into_bytes();
    let mut out = [0u8; MAC_LEN];
    out.copy_from_slice(full.get(..MAC_LEN).unwrap_or(&[0u8; MAC_LEN]));
    Ok(out)
}

/// Second half of RFC 3962 string-to-key: DK(tkey, "kerberos"), where tkey
/// is the PBKDF2 output (random-to-key is the identity for AES). Written
/// into `out`, which must be `KEY_LEN` bytes.
pub(super) fn key_from_pbkdf2<V: AesVariant>(
    tkey: &[u8],
    out: &mut [u8],
) -> Result<(), CryptoError> {
    let base = enc_cipher::<V>(tkey)?;
    let derived = derive::<V>(&base, KERBEROS_FOLD_16);
    let src = key_bytes::<V>(&derived);
    if out.len() != src.len() {
        return Err(CryptoError::Internal("s2k output length"));
    }
    out.copy_from_slice(src);
    Ok(())
}

/// PBKDF2-HMAC-SHA1 of RFC 3962 §4, filling all of `out`.
pub(super) fn pbkdf2_sha1(password: &[u8], salt: &[u8], iterations: u32, out: &mut [u8]) {
    pbkdf2::pbkdf2_hmac::<Sha1>(password, salt, iterations, out);
}

/// RFC 3962 §6 pseudo-random function: the SHA-1 of the input truncated to
/// one block, encrypted with DK(key, "prf"). 16 bytes.
pub(super) fn prf<V: AesVariant>(key: &[u8], input: &[u8]) -> Result<[u8; BLOCK], CryptoError> {
    let mut folded = [0u8; 16];
    nfold(b"prf", &mut folded);
    let base = enc_cipher::<V>(key)?;
    let kp = derive::<V>(&base, folded);
    drop(base);
    let digest = Sha1::digest(input);
    let mut block = [0u8; BLOCK];
    block.copy_from_slice(digest.get(..BLOCK).unwrap_or(&[0u8; BLOCK]));
    encrypt_block(&enc_cipher::<V>(key_bytes::<V>(&kp))?, &mut block);
    Ok(block)
}
