//! A byte stream of LDAP messages as a connection reads it: the framing that splits it
//! (size limit, definite lengths), delivered in arbitrary pieces, plain or under a SASL
//! security layer (RFC 4422 3.7: a 4-byte length and a token per message). The first
//! byte picks the layer and how the stream is cut; NTLM sessions use a fixed key, so
//! their tokens fail their check, as forged ones must.

#![no_main]

use bytes::BytesMut;
use kauri_auth::ntlm::{flags, NtlmSession};
use kauri_ldap_proto::codec::{frame_len, FrameError, LdapCodec, SaslFraming};
use kauri_ldap_proto::encode::encode_message;
use libfuzzer_sys::fuzz_target;
use tokio_util::codec::Decoder;

/// Small enough that the fuzzer meets the limit.
const MAX: usize = 1 << 16;

enum Framing {
    Plain,
    Sasl(SaslFraming),
}

fuzz_target!(|data: &[u8]| {
    let Some((&mode, stream)) = data.split_first() else {
        return;
    };
    let mut framing = match mode & 3 {
        0 => Framing::Plain,
        1 => Framing::Sasl(SaslFraming::new(Box::new(kauri_fuzz::PlainLayer), MAX)),
        n => {
            let seal = if n == 3 { flags::SEAL } else { 0 };
            let f = flags::SIGN | flags::EXTENDED_SESSIONSECURITY | flags::N128 | seal;
            Framing::Sasl(SaslFraming::new(
                Box::new(NtlmSession::new(&[7; 16], f)),
                MAX,
            ))
        }
    };
    // Pieces of 1 to 32 bytes, or the whole stream at once.
    let piece = match usize::from(mode >> 2) {
        0 => stream.len().max(1),
        n => n.min(32),
    };
    let mut codec = LdapCodec::new(MAX);
    let mut buf = BytesMut::new();
    let mut messages = 0usize;
    for chunk in stream.chunks(piece) {
        buf.extend_from_slice(chunk);
        loop {
            match &mut framing {
                Framing::Plain => {
                    // What `frame_len` says of the buffer is what the decoder does with it.
                    let said = frame_len(&buf, MAX);
                    let before = buf.len();
                    let got = codec.decode(&mut buf);
                    match (&said, &got) {
                        (Ok(Some(n)), Ok(Some(_))) => assert_eq!(before - buf.len(), *n),
                        (Ok(None), Ok(None)) => {}
                        (Err(_), Err(_)) => {}
                        _ => panic!("frame_len {said:?} and the decoder {got:?} disagree"),
                    }
                    match got {
                        Ok(Some(item)) => {
                            messages += 1;
                            if let Ok(m) = item {
                                let _ = encode_message(&m);
                            }
                        }
                        Ok(None) => break,
                        Err(e) => return check_error(&e),
                    }
                }
                Framing::Sasl(sasl) => match sasl.decode(&mut codec, &mut buf) {
                    Ok(Some(_)) => messages += 1,
                    Ok(None) => break,
                    Err(e) => return check_error(&e),
                },
            }
            assert!(messages <= stream.len(), "more messages than bytes");
        }
    }
});

fn check_error(e: &FrameError) {
    let _ = e.to_string();
}
