//! DNS (UDP, or TCP behind a two-byte length) and the NetBIOS name service, which shares
//! its header. Columns after the protocol: the header's response flag as the operation
//! code and its meaning: `0 query` or `1 response`.

use super::{Framing, Outcome, Record};

/// Where the first message in a TCP stream buffer ends.
pub fn framing(buf: &[u8]) -> Framing {
    match buf.get(..2) {
        None => Framing::NeedMore,
        Some(l) => match usize::from(u16::from_be_bytes([l[0], l[1]])) {
            0 => Framing::NotAStart,
            n => Framing::Pdu(2 + n),
        },
    }
}

/// One message's line (`protocol` is `dns` or `nbns`).
pub fn dissect(protocol: &'static str, data: &[u8], cut: bool) -> Outcome {
    // The flags are in bytes 2 and 3; a message shorter than its 12-byte header is
    // malformed unless the capture cut it.
    let Some(flags) = data.get(2) else {
        return Outcome::Record(Record::bad(protocol, cut));
    };
    if data.len() < 12 && !cut {
        return Outcome::Record(Record::malformed(protocol));
    }
    Outcome::Record(if flags & 0x80 == 0 {
        Record::op(protocol, "0", "query")
    } else {
        Record::op(protocol, "1", "response")
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn query_and_response() {
        let q = [0u8, 1, 1, 0, 0, 1, 0, 0, 0, 0, 0, 0];
        assert_eq!(
            dissect("dns", &q, false),
            Outcome::Record(Record::op("dns", "0", "query"))
        );
        let r = [0u8, 1, 0x81, 0x80, 0, 1, 0, 1, 0, 0, 0, 0];
        assert_eq!(
            dissect("nbns", &r, false),
            Outcome::Record(Record::op("nbns", "1", "response"))
        );
        assert!(matches!(
            dissect("dns", &q[..5], false),
            Outcome::Record(r) if r.kind == super::super::RecordKind::Malformed
        ));
        assert_eq!(framing(&[0, 12, 1]), Framing::Pdu(14));
    }
}
