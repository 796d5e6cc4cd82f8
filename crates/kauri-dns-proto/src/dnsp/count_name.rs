//! MS-DNSP's DNS_COUNT_NAME (§2.2.2.2.2), the name form inside `dnsRecord` data.
//!
//! Layout: `Length` (1 byte), `LabelCount` (1 byte), then `RawName`: each label as a
//! length byte and its bytes, and a terminating zero byte. `Length` counts all of
//! `RawName`, the terminating zero included (MS-DNSP: "the length, in bytes, of the string
//! stored in the RawName member, including null termination"; Samba's
//! `ndr_push_dnsp_name` writes `strlen(name) + 2` for a name without trailing dot, the same
//! count), so `Length` equals the name's uncompressed wire length. The root name is
//! written as Samba writes `""` (Length 1, LabelCount 0, RawName `00`: bytes `01 00 00`),
//! which Samba's commit a85d257c says matches what Windows stores for an MX of `.`;
//! MS-DNSP's "empty string" form (Length 0, no RawName) is refused, as Samba's
//! `ndr_pull_dnsp_name` also refuses it (it always reads the terminating zero).
//!
//! Reading is strict so that what decodes writes back byte for byte: `Length` must match
//! the labels exactly (Samba tolerates pad bytes after the terminator; neither Samba nor
//! Windows writes any), `LabelCount` must match, and the terminator must be zero.

use crate::error::{ProtoError, Result};
use crate::name::Name;

fn bad(reason: &'static str) -> ProtoError {
    ProtoError::BadDnsp(reason)
}

/// Reads a DNS_COUNT_NAME at the front of `data`; returns it and the bytes after it.
pub(crate) fn read(data: &[u8]) -> Result<(Name, &[u8])> {
    let (&len, rest) = data.split_first().ok_or(ProtoError::Truncated)?;
    let (&count, rest) = rest.split_first().ok_or(ProtoError::Truncated)?;
    let len = usize::from(len);
    if len == 0 {
        return Err(bad("DNS_COUNT_NAME without its terminating zero"));
    }
    if len > rest.len() {
        return Err(ProtoError::Truncated);
    }
    let (raw, after) = rest.split_at(len);
    let mut labels = Vec::with_capacity(usize::from(count));
    let mut at = raw;
    for _ in 0..count {
        let (&n, tail) = at
            .split_first()
            .ok_or(bad("DNS_COUNT_NAME labels overrun its length"))?;
        let n = usize::from(n);
        if n == 0 {
            return Err(bad("empty label in a DNS_COUNT_NAME"));
        }
        if n > tail.len() {
            return Err(bad("DNS_COUNT_NAME labels overrun its length"));
        }
        let (label, tail) = tail.split_at(n);
        labels.push(label.to_vec());
        at = tail;
    }
    match at {
        [0] => {}
        [] => return Err(bad("DNS_COUNT_NAME labels overrun its length")),
        [0, ..] => return Err(bad("DNS_COUNT_NAME length beyond its labels")),
        _ => return Err(bad("DNS_COUNT_NAME label count below its labels")),
    }
    Ok((Name::from_labels(labels)?, after))
}

/// Appends `name` as a DNS_COUNT_NAME.
pub(crate) fn write(name: &Name, out: &mut Vec<u8>) {
    // A `Name` is at most 255 bytes in wire form, with at most 127 labels.
    out.push(name.wire_len() as u8);
    out.push(name.len_labels() as u8);
    name.write_uncompressed(out);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn layout() {
        let mut out = Vec::new();
        write(&Name::parse("q-0-0.samdom.example.com").unwrap(), &mut out);
        // From a Samba-provisioned dnsRecord (see dnsp::tests::samba_srv_record).
        assert_eq!(out, b"\x1a\x04\x05q-0-0\x06samdom\x07example\x03com\x00");
        let (name, rest) = read(&out).unwrap();
        assert_eq!(name, Name::parse("q-0-0.samdom.example.com").unwrap());
        assert!(rest.is_empty());
        let mut root = Vec::new();
        write(&Name::root(), &mut root);
        assert_eq!(root, [1, 0, 0]);
        assert_eq!(read(&[1, 0, 0, 9]).unwrap(), (Name::root(), &[9u8][..]));
    }

    #[test]
    fn strict() {
        assert!(read(&[0, 0]).is_err());
        assert!(read(&[2, 1, 0]).is_err());
        assert!(read(&[3, 1, 1, b'a']).is_err());
        assert!(read(&[4, 1, 1, b'a', 0, 0]).is_err());
        assert!(read(&[4, 1, 1, b'a', 0, 0]).is_err());
        assert!(read(&[5, 1, 1, b'a', 1, b'b', 0]).is_err());
        assert!(read(&[3, 2, 1, b'a', 0]).is_err());
        assert!(read(&[3, 1, 1, b'a', 7]).is_err());
        assert!(read(&[2, 1, 0, 0]).is_err());
        assert_eq!(read(&[9, 1, 1]), Err(ProtoError::Truncated));
        assert_eq!(read(&[9]), Err(ProtoError::Truncated));
    }
}
