//! NTLM session security with extended session security (MS-NLMP 3.4): a signing key and a
//! sealing key per direction, connection-oriented RC4 streams and sequence numbers.

use subtle::ConstantTimeEq;
use zeroize::Zeroize;

use super::flags::{KEY_EXCH, N128, N56, SEAL, SIGN};
use crate::crypto::{hmac_md5, md5, Rc4Stream};
use crate::error::AuthError;
use crate::layer::SecurityLayer;

const CLIENT_SIGN: &[u8] = b"session key to client-to-server signing key magic constant\0";
const SERVER_SIGN: &[u8] = b"session key to server-to-client signing key magic constant\0";
const CLIENT_SEAL: &[u8] = b"session key to client-to-server sealing key magic constant\0";
const SERVER_SEAL: &[u8] = b"session key to server-to-client sealing key magic constant\0";

/// Length of an NTLM signature: version (4), checksum (8), sequence number (4).
pub const SIGNATURE_LEN: usize = 16;

/// One direction's keys and state.
struct Direction {
    sign_key: [u8; 16],
    seal_key: [u8; 16],
    seal: Rc4Stream,
    seq: u32,
}

/// The server's side of an authenticated NTLM session.
pub struct NtlmSession {
    flags: u32,
    session_key: [u8; 16],
    /// Server to client.
    send: Direction,
    /// Client to server.
    recv: Direction,
}

impl Drop for NtlmSession {
    fn drop(&mut self) {
        self.session_key.zeroize();
        self.send.sign_key.zeroize();
        self.recv.sign_key.zeroize();
        self.send.seal_key.zeroize();
        self.recv.seal_key.zeroize();
    }
}

fn seal_key(exported: &[u8; 16], flags: u32, magic: &[u8]) -> [u8; 16] {
    let len = if flags & N128 != 0 {
        16
    } else if flags & N56 != 0 {
        7
    } else {
        5
    };
    md5(&[&exported[..len], magic])
}

impl NtlmSession {
    /// The session keyed by the exported session key, with the negotiated flags.
    pub fn new(exported: &[u8; 16], flags: u32) -> NtlmSession {
        let direction = |sign: &[u8], seal: &[u8]| {
            let seal_key = seal_key(exported, flags, seal);
            Direction {
                sign_key: md5(&[exported, sign]),
                seal_key,
                seal: Rc4Stream::new(&seal_key),
                seq: 0,
            }
        };
        NtlmSession {
            flags,
            session_key: *exported,
            send: direction(SERVER_SIGN, SERVER_SEAL),
            recv: direction(CLIENT_SIGN, CLIENT_SEAL),
        }
    }

    /// The client's side of the same session: the directions swapped.
    pub fn client(exported: &[u8; 16], flags: u32) -> NtlmSession {
        let mut s = NtlmSession::new(exported, flags);
        std::mem::swap(&mut s.send, &mut s.recv);
        s
    }

    /// Restarts both RC4 streams from their keys, sequence numbers unchanged: SPNEGO's
    /// mechListMIC leaves the stream where it found it, so the first protected message
    /// uses the same key state (MS-SPNG 3.3.5.1).
    pub fn restart_streams(&mut self) {
        self.send.seal = Rc4Stream::new(&self.send.seal_key);
        self.recv.seal = Rc4Stream::new(&self.recv.seal_key);
    }

    /// The negotiated flags.
    pub fn flags(&self) -> u32 {
        self.flags
    }

    /// The exported session key (what protocols above derive their keys from).
    pub fn session_key(&self) -> &[u8; 16] {
        &self.session_key
    }

    /// Whether the client asked for signing or sealing of what follows the bind.
    pub fn protects_messages(&self) -> bool {
        self.flags & (SIGN | SEAL) != 0
    }

    fn signature(flags: u32, dir: &mut Direction, plain: &[u8]) -> [u8; SIGNATURE_LEN] {
        let seq = dir.seq.to_le_bytes();
        dir.seq = dir.seq.wrapping_add(1);
        let mac = hmac_md5(&dir.sign_key, &[&seq, plain]);
        let mut checksum = [0u8; 8];
        checksum.copy_from_slice(&mac[..8]);
        if flags & KEY_EXCH != 0 {
            dir.seal.apply(&mut checksum);
        }
        let mut sig = [0u8; SIGNATURE_LEN];
        sig[0] = 1;
        sig[4..12].copy_from_slice(&checksum);
        sig[12..].copy_from_slice(&seq);
        sig
    }

    /// Signs an outgoing message (SPNEGO's mechListMIC, or a signed-only wrap).
    pub fn sign(&mut self, plain: &[u8]) -> [u8; SIGNATURE_LEN] {
        NtlmSession::signature(self.flags, &mut self.send, plain)
    }

    /// Checks the signature of an incoming message.
    pub fn verify(&mut self, plain: &[u8], sig: &[u8]) -> Result<(), AuthError> {
        let want = NtlmSession::signature(self.flags, &mut self.recv, plain);
        if sig.len() == SIGNATURE_LEN && bool::from(want.ct_eq(sig)) {
            Ok(())
        } else {
            Err(AuthError::BadSignature)
        }
    }
}

impl SecurityLayer for NtlmSession {
    fn wrap(&mut self, plain: &[u8]) -> Vec<u8> {
        let mut out = Vec::with_capacity(SIGNATURE_LEN + plain.len());
        out.extend_from_slice(&[0; SIGNATURE_LEN]);
        out.extend_from_slice(plain);
        let sig = if self.flags & SEAL != 0 {
            // The data goes through the stream first, then the checksum (MS-NLMP 3.4.3).
            let mac_input = plain;
            let seq = self.send.seq.to_le_bytes();
            self.send.seq = self.send.seq.wrapping_add(1);
            let mac = hmac_md5(&self.send.sign_key, &[&seq, mac_input]);
            self.send.seal.apply(&mut out[SIGNATURE_LEN..]);
            let mut checksum = [0u8; 8];
            checksum.copy_from_slice(&mac[..8]);
            if self.flags & KEY_EXCH != 0 {
                self.send.seal.apply(&mut checksum);
            }
            let mut sig = [0u8; SIGNATURE_LEN];
            sig[0] = 1;
            sig[4..12].copy_from_slice(&checksum);
            sig[12..].copy_from_slice(&seq);
            sig
        } else {
            self.sign(plain)
        };
        out[..SIGNATURE_LEN].copy_from_slice(&sig);
        out
    }

    fn unwrap(&mut self, token: &[u8]) -> Result<Vec<u8>, AuthError> {
        if token.len() < SIGNATURE_LEN {
            return Err(AuthError::BadSignature);
        }
        let (sig, body) = token.split_at(SIGNATURE_LEN);
        let mut plain = body.to_vec();
        if self.flags & SEAL != 0 {
            self.recv.seal.apply(&mut plain);
        }
        self.verify(&plain, sig)?;
        Ok(plain)
    }

    fn sealed(&self) -> bool {
        self.flags & SEAL != 0
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ntlm::flags::*;

    #[test]
    fn wrapped_messages_round_trip_and_refuse_tampering_and_replay() {
        let key = [7u8; 16];
        for flags in [
            SIGN | EXTENDED_SESSIONSECURITY | N128 | KEY_EXCH,
            SIGN | SEAL | EXTENDED_SESSIONSECURITY | N128 | KEY_EXCH,
            SIGN | SEAL | EXTENDED_SESSIONSECURITY | N56,
        ] {
            let mut server = NtlmSession::new(&key, flags);
            let mut client = NtlmSession::client(&key, flags);
            for msg in [&b"first"[..], b"second message", b""] {
                let token = client.wrap(msg);
                if flags & SEAL != 0 && !msg.is_empty() {
                    assert_ne!(&token[SIGNATURE_LEN..], msg);
                }
                assert_eq!(server.unwrap(&token).unwrap(), msg);
                let back = server.wrap(msg);
                assert_eq!(client.unwrap(&back).unwrap(), msg);
            }
            // Tampered.
            let mut token = client.wrap(b"payload");
            let last = token.len() - 1;
            token[last] ^= 1;
            assert_eq!(server.unwrap(&token), Err(AuthError::BadSignature));
            // Replayed (a fresh pair, the same message twice).
            let mut server = NtlmSession::new(&key, flags);
            let mut client = NtlmSession::client(&key, flags);
            let token = client.wrap(b"payload");
            assert!(server.unwrap(&token).is_ok());
            assert_eq!(server.unwrap(&token), Err(AuthError::BadSignature));
        }
    }
}
