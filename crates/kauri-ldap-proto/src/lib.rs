//! LDAPv3 messages (RFC 4511) and their BER encoding, owned by Kauri.
//!
//! Why a codec of our own: AD clients send binary assertion values (`(objectSid=\01\05…)`)
//! that must survive decoding as bytes, messages can be megabytes (a `member` list), every
//! control AD clients use must be decoded with its criticality, and a message that cannot
//! be decoded must still be answered (with its message id when the envelope is readable)
//! instead of dropping the connection.
//!
//! * [`types`]: the message types.
//! * [`ber`]: BER primitives (tags, lengths, integers, strings) with strict bounds.
//! * [`decode`] / [`encode`]: messages from and to BER.
//! * [`controls`]: the controls Kauri understands, decoded and encoded.
//! * [`codec`]: framing for tokio (`Decoder`/`Encoder`) with a message size limit.

#![cfg_attr(
    not(test),
    deny(clippy::unwrap_used, clippy::expect_used, clippy::panic)
)]

pub mod ber;
pub mod codec;
pub mod controls;
pub mod decode;
pub mod encode;
pub mod types;

pub use types::*;
