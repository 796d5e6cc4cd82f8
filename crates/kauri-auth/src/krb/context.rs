//! An established Kerberos GSS-API context on the accepting side (RFC 4121): the Wrap
//! tokens that sign or seal each message after a bind, and the MIC tokens SPNEGO's
//! mechanism-list check uses. Only the RFC 4121 token format is spoken, which every
//! AES session key uses; RC4 session keys (RFC 4757's older tokens) are refused when
//! the context is made.

use subtle::ConstantTimeEq;

use super::crypto::Key;
use crate::error::AuthError;
use crate::layer::SecurityLayer;

/// Key usages of RFC 4121 §2.
const ACCEPTOR_SEAL: u32 = 22;
const ACCEPTOR_SIGN: u32 = 23;
const INITIATOR_SEAL: u32 = 24;
const INITIATOR_SIGN: u32 = 25;

/// Token flags.
const SENT_BY_ACCEPTOR: u8 = 0x01;
const SEALED: u8 = 0x02;
const ACCEPTOR_SUBKEY: u8 = 0x04;

const WHAT: &str = "GSS token";

/// See the module documentation.
pub struct GssContext {
    key: Key,
    send_seq: u64,
    recv_seq: u64,
}

impl std::fmt::Debug for GssContext {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("GssContext")
            .field("etype", &self.key.etype())
            .finish_non_exhaustive()
    }
}

impl GssContext {
    /// A context over `key` (the initiator's subkey, or the ticket's session key), with
    /// the acceptor's and the initiator's first sequence numbers.
    pub fn new(key: Key, send_seq: u64, recv_seq: u64) -> GssContext {
        GssContext {
            key,
            send_seq,
            recv_seq,
        }
    }

    fn header(tok_id: [u8; 2], flags: u8, ec: u16, rrc: u16, seq: u64) -> [u8; 16] {
        let mut h = [0u8; 16];
        h[..2].copy_from_slice(&tok_id);
        h[2] = flags;
        h[3] = 0xff;
        h[4..6].copy_from_slice(&ec.to_be_bytes());
        h[6..8].copy_from_slice(&rrc.to_be_bytes());
        h[8..].copy_from_slice(&seq.to_be_bytes());
        h
    }

    /// A Wrap token for `data`, sealed or only signed.
    pub fn wrap(&mut self, data: &[u8], seal: bool) -> Result<Vec<u8>, AuthError> {
        let seq = self.send_seq;
        self.send_seq = self.send_seq.wrapping_add(1);
        let fail = |e: super::crypto::CryptoError| AuthError::Unsupported(e.to_string());
        if seal {
            let header = Self::header([0x05, 0x04], SENT_BY_ACCEPTOR | SEALED, 0, 0, seq);
            let mut plain = Vec::with_capacity(data.len() + 16);
            plain.extend_from_slice(data);
            plain.extend_from_slice(&header);
            let cipher = self.key.encrypt(ACCEPTOR_SEAL, &plain).map_err(fail)?;
            let mut out = header.to_vec();
            out.extend_from_slice(&cipher);
            Ok(out)
        } else {
            let zeroed = Self::header([0x05, 0x04], SENT_BY_ACCEPTOR, 0, 0, seq);
            let mut input = Vec::with_capacity(data.len() + 16);
            input.extend_from_slice(data);
            input.extend_from_slice(&zeroed);
            let cksum = self.key.checksum(ACCEPTOR_SEAL, &input).map_err(fail)?;
            let ec = u16::try_from(cksum.len()).unwrap_or(0);
            let header = Self::header([0x05, 0x04], SENT_BY_ACCEPTOR, ec, 0, seq);
            let mut out = header.to_vec();
            out.extend_from_slice(data);
            out.extend_from_slice(&cksum);
            Ok(out)
        }
    }

    /// The contents of an initiator's Wrap token, and whether it was sealed.
    pub fn unwrap(&mut self, token: &[u8]) -> Result<(Vec<u8>, bool), AuthError> {
        if token.len() < 16 || token[..2] != [0x05, 0x04] || token[3] != 0xff {
            return Err(AuthError::malformed(WHAT, "not a Wrap token"));
        }
        let flags = token[2];
        if flags & (SENT_BY_ACCEPTOR | ACCEPTOR_SUBKEY) != 0 || flags & !0x07 != 0 {
            return Err(AuthError::malformed(WHAT, "unexpected token flags"));
        }
        let ec = usize::from(u16::from_be_bytes([token[4], token[5]]));
        let rrc = usize::from(u16::from_be_bytes([token[6], token[7]]));
        let mut seq_bytes = [0u8; 8];
        seq_bytes.copy_from_slice(&token[8..16]);
        let seq = u64::from_be_bytes(seq_bytes);
        let mut body = token[16..].to_vec();
        if !body.is_empty() {
            let r = rrc % body.len();
            body.rotate_left(r);
        }
        let sealed = flags & SEALED != 0;
        let data = if sealed {
            let plain = self
                .key
                .decrypt(INITIATOR_SEAL, &body)
                .map_err(|_| AuthError::BadSignature)?;
            if plain.len() < 16 + ec {
                return Err(AuthError::BadSignature);
            }
            let (rest, inner) = plain.split_at(plain.len() - 16);
            // The encrypted copy of the header has RRC 0; everything else must match.
            let mut expect = [0u8; 16];
            expect.copy_from_slice(&token[..16]);
            expect[6] = 0;
            expect[7] = 0;
            if !bool::from(inner.ct_eq(&expect)) {
                return Err(AuthError::BadSignature);
            }
            rest[..rest.len() - ec].to_vec()
        } else {
            if body.len() < ec || ec == 0 {
                return Err(AuthError::BadSignature);
            }
            let (data, cksum) = body.split_at(body.len() - ec);
            let mut input = Vec::with_capacity(data.len() + 16);
            input.extend_from_slice(data);
            input.extend_from_slice(&Self::header([0x05, 0x04], flags, 0, 0, seq));
            self.key
                .verify_checksum(
                    INITIATOR_SEAL,
                    &input,
                    self.key.etype().checksum_type(),
                    cksum,
                )
                .map_err(|_| AuthError::BadSignature)?;
            data.to_vec()
        };
        if seq != self.recv_seq {
            return Err(AuthError::BadSignature);
        }
        self.recv_seq = self.recv_seq.wrapping_add(1);
        Ok((data, sealed))
    }

    /// A MIC token over `data` (it takes the next sequence number, as a Wrap token does).
    pub fn get_mic(&mut self, data: &[u8]) -> Result<Vec<u8>, AuthError> {
        let seq = self.send_seq;
        self.send_seq = self.send_seq.wrapping_add(1);
        let mut header = [0xffu8; 16];
        header[..2].copy_from_slice(&[0x04, 0x04]);
        header[2] = SENT_BY_ACCEPTOR;
        header[8..].copy_from_slice(&seq.to_be_bytes());
        let mut input = data.to_vec();
        input.extend_from_slice(&header);
        let cksum = self
            .key
            .checksum(ACCEPTOR_SIGN, &input)
            .map_err(|e| AuthError::Unsupported(e.to_string()))?;
        let mut out = header.to_vec();
        out.extend_from_slice(&cksum);
        Ok(out)
    }

    /// Checks an initiator's MIC token over `data`.
    pub fn verify_mic(&mut self, data: &[u8], token: &[u8]) -> Result<(), AuthError> {
        if token.len() < 16 || token[..2] != [0x04, 0x04] || token[3..8] != [0xff; 5] {
            return Err(AuthError::malformed(WHAT, "not a MIC token"));
        }
        if token[2] & SENT_BY_ACCEPTOR != 0 {
            return Err(AuthError::malformed(WHAT, "unexpected token flags"));
        }
        let mut input = data.to_vec();
        input.extend_from_slice(&token[..16]);
        self.key
            .verify_checksum(
                INITIATOR_SIGN,
                &input,
                self.key.etype().checksum_type(),
                &token[16..],
            )
            .map_err(|_| AuthError::BadSignature)?;
        let mut seq = [0u8; 8];
        seq.copy_from_slice(&token[8..16]);
        if u64::from_be_bytes(seq) == self.recv_seq {
            self.recv_seq = self.recv_seq.wrapping_add(1);
        }
        Ok(())
    }
}

/// A connection's security layer over a Kerberos context: every message sealed (or only
/// signed) in a Wrap token.
pub struct KrbLayer {
    context: GssContext,
    seal: bool,
}

impl KrbLayer {
    /// The layer a bind negotiated.
    pub fn new(context: GssContext, seal: bool) -> KrbLayer {
        KrbLayer { context, seal }
    }
}

impl SecurityLayer for KrbLayer {
    fn wrap(&mut self, plain: &[u8]) -> Vec<u8> {
        // Encryption with a valid key fails only on impossible lengths; an empty token
        // then ends the connection at the peer.
        self.context.wrap(plain, self.seal).unwrap_or_default()
    }

    fn unwrap(&mut self, token: &[u8]) -> Result<Vec<u8>, AuthError> {
        let (data, sealed) = self.context.unwrap(token)?;
        if self.seal && !sealed {
            return Err(AuthError::BadSignature);
        }
        Ok(data)
    }

    fn sealed(&self) -> bool {
        self.seal
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::krb::crypto::Enctype;

    /// An initiator's view of the same context (the flags and usages mirrored).
    fn initiator_wrap(key: &Key, seq: u64, data: &[u8], seal: bool, rrc: u16) -> Vec<u8> {
        if seal {
            let header = GssContext::header([0x05, 0x04], SEALED, 0, 0, seq);
            let mut plain = data.to_vec();
            plain.extend_from_slice(&header);
            let mut cipher = key.encrypt(INITIATOR_SEAL, &plain).unwrap();
            let r = usize::from(rrc) % cipher.len();
            cipher.rotate_right(r);
            let mut out = GssContext::header([0x05, 0x04], SEALED, 0, rrc, seq).to_vec();
            out.extend_from_slice(&cipher);
            out
        } else {
            let mut input = data.to_vec();
            input.extend_from_slice(&GssContext::header([0x05, 0x04], 0, 0, 0, seq));
            let cksum = key.checksum(INITIATOR_SEAL, &input).unwrap();
            let mut out = GssContext::header([0x05, 0x04], 0, 12, 0, seq).to_vec();
            out.extend_from_slice(data);
            out.extend_from_slice(&cksum);
            out
        }
    }

    #[test]
    fn wrap_tokens_round_trip_and_refuse_tampering() {
        let key = Key::random(Enctype::Aes256Sha1).unwrap();
        let mut acceptor = GssContext::new(key.clone(), 100, 7);
        for (i, seal) in [(0u64, true), (1, false), (2, true)] {
            let t = initiator_wrap(&key, 7 + i, b"hello ldap", seal, if seal { 28 } else { 0 });
            let (data, sealed) = acceptor.unwrap(&t).unwrap();
            assert_eq!((data.as_slice(), sealed), (&b"hello ldap"[..], seal));
        }
        // Replayed: the sequence number is behind.
        let t = initiator_wrap(&key, 9, b"again", true, 0);
        assert!(acceptor.unwrap(&t).is_err());
        let mut t = initiator_wrap(&key, 10, b"bits", false, 0);
        let last = t.len() - 1;
        t[last] ^= 1;
        assert_eq!(acceptor.unwrap(&t), Err(AuthError::BadSignature));
        // The acceptor's own tokens carry its flag and its sequence.
        let out = acceptor.wrap(b"reply", true).unwrap();
        assert_eq!(out[2], SENT_BY_ACCEPTOR | SEALED);
        assert_eq!(&out[8..16], &100u64.to_be_bytes());
        let plain = key.decrypt(ACCEPTOR_SEAL, &out[16..]).unwrap();
        assert_eq!(&plain[..5], b"reply");
        assert!(acceptor.unwrap(&[0u8; 3]).is_err());
    }

    #[test]
    fn mic_tokens_verify() {
        let key = Key::random(Enctype::Aes128Sha1).unwrap();
        let mut acceptor = GssContext::new(key.clone(), 0, 0);
        let mut header = [0xffu8; 16];
        header[..2].copy_from_slice(&[0x04, 0x04]);
        header[2] = 0;
        header[8..].copy_from_slice(&0u64.to_be_bytes());
        let mut input = b"mechlist".to_vec();
        input.extend_from_slice(&header);
        let mut token = header.to_vec();
        token.extend(key.checksum(INITIATOR_SIGN, &input).unwrap());
        acceptor.verify_mic(b"mechlist", &token).unwrap();
        assert!(acceptor.verify_mic(b"mechlisT", &token).is_err());
        let mic = acceptor.get_mic(b"mechlist").unwrap();
        assert_eq!(mic[2], SENT_BY_ACCEPTOR);
    }
}
