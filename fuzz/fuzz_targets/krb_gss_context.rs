//! The messages of an LDAP connection after a Kerberos bind (RFC 4121): Wrap tokens
//! into the acceptor's context and its security layer, and MIC tokens, as a client sends
//! them — arbitrary, and made for real with the context's key so that the checks after
//! the cryptography are reached: a Wrap token sealed or signed by the initiator, with any
//! rotation count (RRC) and, sealed, any filler (EC), unwraps to its data; a MIC token
//! verifies. The acceptor's own Wrap tokens open with the key.
//!
//! Input: `mode | key (32 bytes with bit 0, else 16)`, then up to four messages
//! ([`kauri_fuzz::parts`]), each `op | ...`: op & 3 = 0, the rest is a Wrap token; 1, a
//! MIC token over the message itself; 2, `ec (u16 BE) | rrc (u16 BE) | data` made into the
//! initiator's Wrap token (sealed with op bit 2, the sequence number from the input with
//! bit 3); 3, data for a real MIC token, then for the acceptor's own Wrap token.

#![no_main]

use kauri_auth::krb::context::{GssContext, KrbLayer};
use kauri_auth::krb::crypto::{Enctype, Key};
use kauri_auth::SecurityLayer;
use kauri_fuzz::parts;
use libfuzzer_sys::fuzz_target;

/// Key usages of RFC 4121 §2.
const ACCEPTOR_SEAL: u32 = 22;
const INITIATOR_SEAL: u32 = 24;
const INITIATOR_SIGN: u32 = 25;

/// Token flags.
const SENT_BY_ACCEPTOR: u8 = 0x01;
const SEALED: u8 = 0x02;

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

/// The initiator's Wrap token (RFC 4121 §4.2.4): sealed, `data | ec filler bytes |
/// header` encrypted; signed, `data | checksum` with EC the checksum's length. The body
/// is rotated right by `rrc`.
fn initiator_wrap(key: &Key, seq: u64, data: &[u8], seal: bool, ec: u16, rrc: u16) -> Vec<u8> {
    let (mut body, ec) = if seal {
        let mut plain = data.to_vec();
        plain.resize(data.len() + usize::from(ec), 0xec);
        plain.extend_from_slice(&header([0x05, 0x04], SEALED, ec, 0, seq));
        (key.encrypt(INITIATOR_SEAL, &plain).expect("encrypting"), ec)
    } else {
        let mut input = data.to_vec();
        input.extend_from_slice(&header([0x05, 0x04], 0, 0, 0, seq));
        let cksum = key.checksum(INITIATOR_SEAL, &input).expect("a checksum");
        let mut body = data.to_vec();
        body.extend_from_slice(&cksum);
        (body, u16::try_from(cksum.len()).expect("a short checksum"))
    };
    if !body.is_empty() {
        let r = usize::from(rrc) % body.len();
        body.rotate_right(r);
    }
    let mut out = header([0x05, 0x04], if seal { SEALED } else { 0 }, ec, rrc, seq).to_vec();
    out.extend_from_slice(&body);
    out
}

/// The initiator's MIC token over `data` (RFC 4121 §4.2.6.1).
fn initiator_mic(key: &Key, seq: u64, data: &[u8]) -> Vec<u8> {
    let mut h = [0xffu8; 16];
    h[..2].copy_from_slice(&[0x04, 0x04]);
    h[2] = 0;
    h[8..].copy_from_slice(&seq.to_be_bytes());
    let mut input = data.to_vec();
    input.extend_from_slice(&h);
    let mut out = h.to_vec();
    out.extend_from_slice(&key.checksum(INITIATOR_SIGN, &input).expect("a checksum"));
    out
}

fuzz_target!(|data: &[u8]| {
    let Some((&mode, rest)) = data.split_first() else {
        return;
    };
    let etype = if mode & 1 != 0 {
        Enctype::Aes256Sha1
    } else {
        Enctype::Aes128Sha1
    };
    if rest.len() < etype.key_len() {
        return;
    }
    let (key_bytes, rest) = rest.split_at(etype.key_len());
    let key = Key::new(etype, key_bytes).expect("a key");
    let mut ctx = GssContext::new(key.clone(), 7, 0);
    let mut layer = KrbLayer::new(GssContext::new(key.clone(), 0, 0), mode & 2 != 0);
    // The initiator's next sequence number, as the acceptor expects it.
    let mut next = 0u64;
    for msg in parts(rest, 4) {
        let Some((&op, body)) = msg.split_first() else {
            continue;
        };
        match op & 3 {
            0 => {
                if ctx.unwrap(body).is_ok() {
                    next += 1;
                }
                let _ = layer.unwrap(body);
            }
            1 => {
                let _ = ctx.verify_mic(msg, body);
            }
            2 => {
                let (Some(ec), Some(rrc), Some(data)) =
                    (body.get(..2), body.get(2..4), body.get(4..))
                else {
                    continue;
                };
                let ec = u16::from_be_bytes([ec[0], ec[1]]) & 0x3ff;
                let rrc = u16::from_be_bytes([rrc[0], rrc[1]]);
                let seal = op & 4 != 0;
                let seq = if op & 8 != 0 {
                    u64::from(op >> 4)
                } else {
                    next
                };
                let token = initiator_wrap(&key, seq, data, seal, ec, rrc);
                let got = ctx.unwrap(&token);
                if seq == next {
                    let (plain, sealed) = got.expect("a real Wrap token does not unwrap");
                    assert_eq!((plain.as_slice(), sealed), (data, seal));
                    next += 1;
                } else {
                    assert!(got.is_err(), "a Wrap token out of sequence unwrapped");
                }
            }
            _ => {
                let mic = initiator_mic(&key, next, body);
                ctx.verify_mic(body, &mic)
                    .expect("a real MIC token does not verify");
                // (A MIC in sequence consumes its number.)
                next += 1;
                let seal = op & 4 != 0;
                let token = ctx.wrap(body, seal).expect("wrapping");
                assert_eq!(&token[..2], &[0x05, 0x04]);
                assert_eq!(token[2] & SENT_BY_ACCEPTOR, SENT_BY_ACCEPTOR);
                if seal {
                    let plain = key
                        .decrypt(ACCEPTOR_SEAL, &token[16..])
                        .expect("the acceptor's sealed token opens");
                    assert_eq!(&plain[..plain.len() - 16], body);
                } else {
                    assert_eq!(&token[16..16 + body.len()], body);
                }
                let _ = layer.wrap(body);
            }
        }
    }
});
