//! Helpers shared by the integration tests (included with `mod common;`).
#![allow(dead_code)]

/// Parses space-separated hex, e.g. `"30 0c 02 01"`.
pub fn hex(s: &str) -> Vec<u8> {
    s.split_whitespace()
        .map(|b| u8::from_str_radix(b, 16).unwrap())
        .collect()
}

/// Appends a BER definite length.
pub fn push_len(out: &mut Vec<u8>, len: usize) {
    if len < 0x80 {
        out.push(len as u8);
    } else {
        let bytes = len.to_be_bytes();
        let skip = bytes.iter().take_while(|b| **b == 0).count();
        out.push(0x80 | (bytes.len() - skip) as u8);
        out.extend_from_slice(&bytes[skip..]);
    }
}

/// Size of a one-byte tag plus length header for `len` content bytes.
pub fn header_len(len: usize) -> usize {
    let mut v = Vec::new();
    push_len(&mut v, len);
    1 + v.len()
}

/// A TLV with a one-byte tag.
pub fn tlv(tag: u8, content: &[u8]) -> Vec<u8> {
    let mut out = vec![tag];
    push_len(&mut out, content.len());
    out.extend_from_slice(content);
    out
}

/// `n` nested `not` filters around `(a=*)`, built outside-in without recursion.
pub fn nested(tag: u8, n: usize) -> Vec<u8> {
    let inner: Vec<u8> = if tag == 0xa2 {
        vec![0x87, 0x01, b'a']
    } else {
        Vec::new()
    };
    let mut content_lens = Vec::with_capacity(n);
    let mut len = inner.len();
    for _ in 0..n {
        content_lens.push(len);
        len += header_len(len);
    }
    let mut out = Vec::with_capacity(len);
    for &cl in content_lens.iter().rev() {
        out.push(tag);
        push_len(&mut out, cl);
    }
    out.extend_from_slice(&inner);
    assert_eq!(out.len(), len);
    out
}

/// A SearchRequest message with id `id` around already-encoded filter bytes.
pub fn search_with_filter(id: u8, filter: &[u8]) -> Vec<u8> {
    let mut op = Vec::new();
    op.extend(tlv(0x04, b""));
    op.extend(hex("0a 01 00 0a 01 00 02 01 00 02 01 00 01 01 00"));
    op.extend_from_slice(filter);
    op.extend(hex("30 00"));
    let mut msg = vec![0x02, 0x01, id];
    msg.extend(tlv(0x63, &op));
    tlv(0x30, &msg)
}
