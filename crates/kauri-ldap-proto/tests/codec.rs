//! Framing: partial input, several messages per buffer, size limits, undecodable frames.

mod common;

use bytes::BytesMut;
use common::hex;
use kauri_ldap_proto::codec::{frame_len, FrameError, LdapCodec, DEFAULT_MAX_MESSAGE};
use kauri_ldap_proto::encode::encode_message;
use kauri_ldap_proto::*;
use tokio_util::codec::{Decoder, Encoder};

fn done(id: i32) -> LdapMessage {
    LdapMessage {
        id,
        op: ProtocolOp::SearchResultDone(LdapResult::success()),
        controls: vec![],
    }
}

#[test]
fn partial_input_waits() {
    let bytes = encode_message(&done(1));
    let mut codec = LdapCodec::default();
    let mut buf = BytesMut::new();
    for (i, b) in bytes.iter().enumerate() {
        buf.extend_from_slice(&[*b]);
        let out = codec.decode(&mut buf).unwrap();
        if i + 1 < bytes.len() {
            assert!(out.is_none(), "byte {i}");
        } else {
            assert_eq!(out.unwrap().unwrap(), done(1));
        }
    }
    assert!(buf.is_empty());
    assert_eq!(codec.decode(&mut buf).unwrap(), None);
}

#[test]
fn two_messages_one_by_one() {
    let mut buf = BytesMut::new();
    let mut codec = LdapCodec::default();
    codec.encode(&done(1), &mut buf).unwrap();
    codec.encode(done(2), &mut buf).unwrap();
    assert_eq!(codec.decode(&mut buf).unwrap().unwrap().unwrap(), done(1));
    assert_eq!(codec.decode(&mut buf).unwrap().unwrap().unwrap(), done(2));
    assert!(codec.decode(&mut buf).unwrap().is_none());
}

#[test]
fn oversized_declared_length() {
    let mut codec = LdapCodec::default();
    let mut buf = BytesMut::from(&hex("30 84 7f ff ff ff 02 01")[..]);
    match codec.decode(&mut buf) {
        Err(FrameError::TooLarge { size, max }) => {
            assert_eq!(size, 0x7fff_ffff + 6);
            assert_eq!(max, DEFAULT_MAX_MESSAGE);
        }
        other => panic!("{other:?}"),
    }
    assert!(buf.capacity() < 1 << 20);
    let mut small = LdapCodec::new(100);
    let mut buf = BytesMut::from(&hex("30 81 ff")[..]);
    assert!(matches!(
        small.decode(&mut buf),
        Err(FrameError::TooLarge {
            size: 258,
            max: 100
        })
    ));
    assert!(matches!(
        frame_len(&hex("30 64"), 100),
        Err(FrameError::TooLarge { .. })
    ));
    assert_eq!(frame_len(&hex("30 62"), 100).unwrap(), None);
}

#[test]
fn incomplete_frame_reserves_declared_size_only() {
    let mut codec = LdapCodec::default();
    let mut buf = BytesMut::from(&hex("30 82 10 00 02 01 01")[..]);
    assert!(codec.decode(&mut buf).unwrap().is_none());
    assert!(buf.capacity() >= 0x1004);
    assert!(buf.capacity() < 0x1004 * 4);
}

#[test]
fn bad_headers_are_frame_errors() {
    assert!(matches!(
        frame_len(&hex("04 00"), 100),
        Err(FrameError::Malformed(_))
    ));
    assert!(matches!(
        frame_len(&hex("30 80 00 00"), 100),
        Err(FrameError::Malformed(_))
    ));
    assert!(matches!(
        frame_len(&hex("30 85 00 00 00 00 01"), 100),
        Err(FrameError::Malformed(_))
    ));
    assert_eq!(frame_len(&[], 100).unwrap(), None);
    assert_eq!(frame_len(&hex("30"), 100).unwrap(), None);
    assert_eq!(frame_len(&hex("30 82 00"), 100).unwrap(), None);
    assert_eq!(
        frame_len(&hex("30 81 03 01 02 03 ff"), 100).unwrap(),
        Some(6)
    );
    let mut codec = LdapCodec::default();
    let mut buf = BytesMut::from(&hex("42 00")[..]);
    assert!(matches!(
        codec.decode(&mut buf),
        Err(FrameError::Malformed(_))
    ));
}

#[test]
fn garbage_frame_is_an_item_error_and_the_stream_continues() {
    let mut codec = LdapCodec::default();
    let mut buf = BytesMut::new();
    // Readable id 7, unreadable operation.
    buf.extend_from_slice(&hex("30 05 02 01 07 ff ff"));
    // Readable id 9 and operation 3 (SearchRequest) with bad content.
    buf.extend_from_slice(&hex("30 06 02 01 09 63 01 00"));
    // No readable id.
    buf.extend_from_slice(&hex("30 02 ff 00"));
    buf.extend_from_slice(&encode_message(&done(10)));
    let e = codec.decode(&mut buf).unwrap().unwrap().unwrap_err();
    assert_eq!((e.id, e.op), (Some(7), None));
    let e = codec.decode(&mut buf).unwrap().unwrap().unwrap_err();
    assert_eq!(
        (e.id, e.op, e.code),
        (Some(9), Some(3), ResultCode::PROTOCOL_ERROR)
    );
    let e = codec.decode(&mut buf).unwrap().unwrap().unwrap_err();
    assert_eq!(e.id, None);
    assert_eq!(codec.decode(&mut buf).unwrap().unwrap().unwrap(), done(10));
    assert!(buf.is_empty());
}

#[test]
fn encoder_matches_encode_message() {
    let m = done(5);
    let mut codec = LdapCodec::new(10);
    let mut buf = BytesMut::new();
    codec.encode(&m, &mut buf).unwrap();
    assert_eq!(&buf[..], &encode_message(&m)[..]);
    assert_eq!(codec.max_message(), 10);
}
