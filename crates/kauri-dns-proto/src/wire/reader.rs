//! A bounds-checked cursor over a DNS message, with name decompression that cannot loop.

use crate::error::{ProtoError, Result};
use crate::name::{Name, MAX_LABEL, MAX_NAME};

/// Size of the fixed message header; no compression pointer may point into it.
pub(crate) const HEADER_LEN: usize = 12;

/// Most pointers one name may follow. A name has at most 127 labels and every pointer of
/// a sensible encoding ends a run of at least one label; the bound keeps a message made of
/// pointers to pointers from costing quadratic time.
const MAX_JUMPS: usize = 127;

/// Reads fields from `msg[pos..end]`; names may follow compression pointers anywhere
/// earlier in `msg`. Every read checks its length first and fails with
/// [`ProtoError::Truncated`] instead of panicking.
pub(crate) struct Reader<'a> {
    msg: &'a [u8],
    pos: usize,
    end: usize,
}

impl<'a> Reader<'a> {
    /// A reader over the whole message.
    pub(crate) fn new(msg: &'a [u8]) -> Reader<'a> {
        Reader {
            msg,
            pos: 0,
            end: msg.len(),
        }
    }

    /// A reader over `len` bytes at `start` (record data), still able to follow pointers
    /// into the rest of `msg`.
    pub(crate) fn sub(msg: &'a [u8], start: usize, len: usize) -> Result<Reader<'a>> {
        let end = start.checked_add(len).ok_or(ProtoError::Truncated)?;
        if end > msg.len() {
            return Err(ProtoError::Truncated);
        }
        Ok(Reader {
            msg,
            pos: start,
            end,
        })
    }

    pub(crate) fn pos(&self) -> usize {
        self.pos
    }

    pub(crate) fn remaining(&self) -> usize {
        self.end - self.pos
    }

    pub(crate) fn at_end(&self) -> bool {
        self.pos == self.end
    }

    pub(crate) fn take(&mut self, n: usize) -> Result<&'a [u8]> {
        if n > self.remaining() {
            return Err(ProtoError::Truncated);
        }
        let out = self
            .msg
            .get(self.pos..self.pos + n)
            .ok_or(ProtoError::Truncated)?;
        self.pos += n;
        Ok(out)
    }

    pub(crate) fn rest(&mut self) -> &'a [u8] {
        let out = self.msg.get(self.pos..self.end).unwrap_or_default();
        self.pos = self.end;
        out
    }

    pub(crate) fn u8(&mut self) -> Result<u8> {
        let b = self.take(1)?;
        Ok(b.first().copied().unwrap_or_default())
    }

    pub(crate) fn u16(&mut self) -> Result<u16> {
        let b = self.take(2)?;
        let mut a = [0u8; 2];
        a.copy_from_slice(b);
        Ok(u16::from_be_bytes(a))
    }

    pub(crate) fn u32(&mut self) -> Result<u32> {
        let b = self.take(4)?;
        let mut a = [0u8; 4];
        a.copy_from_slice(b);
        Ok(u32::from_be_bytes(a))
    }

    /// A 48-bit big-endian integer (TSIG's time signed).
    pub(crate) fn u48(&mut self) -> Result<u64> {
        let b = self.take(6)?;
        Ok(b.iter().fold(0u64, |acc, &x| (acc << 8) | u64::from(x)))
    }

    /// A name, following compression pointers. Each pointer must point strictly before
    /// the start of the label run it ends (so every jump moves backwards past everything
    /// read so far and no loop is possible) and not into the header; the name may not
    /// pass 255 bytes.
    pub(crate) fn name(&mut self) -> Result<Name> {
        let mut labels: Vec<Vec<u8>> = Vec::new();
        let mut wire_len = 1usize;
        // Where reading continues, and the bound the next pointer must stay below.
        let mut at = self.pos;
        let mut run_start = self.pos;
        // Until the first jump, reading is limited to this reader's window.
        let mut jumped = false;
        let mut jumps = 0usize;
        loop {
            let limit = if jumped { self.msg.len() } else { self.end };
            if at >= limit {
                return Err(ProtoError::Truncated);
            }
            let len = *self.msg.get(at).ok_or(ProtoError::Truncated)?;
            match len & 0xC0 {
                0x00 => {
                    if len == 0 {
                        at += 1;
                        if !jumped {
                            self.pos = at;
                        }
                        return Name::from_labels(labels);
                    }
                    let len = usize::from(len);
                    debug_assert!(len <= MAX_LABEL);
                    wire_len += 1 + len;
                    if wire_len > MAX_NAME {
                        return Err(ProtoError::NameTooLong);
                    }
                    let start = at + 1;
                    let stop = start + len;
                    if stop > limit {
                        return Err(ProtoError::Truncated);
                    }
                    let label = self.msg.get(start..stop).ok_or(ProtoError::Truncated)?;
                    labels.push(label.to_vec());
                    at = stop;
                }
                0xC0 => {
                    if at + 2 > limit {
                        return Err(ProtoError::Truncated);
                    }
                    let lo = *self.msg.get(at + 1).ok_or(ProtoError::Truncated)?;
                    let target = (usize::from(len & 0x3F) << 8) | usize::from(lo);
                    jumps += 1;
                    if target >= run_start || target < HEADER_LEN || jumps > MAX_JUMPS {
                        return Err(ProtoError::BadPointer);
                    }
                    if !jumped {
                        self.pos = at + 2;
                        jumped = true;
                    }
                    at = target;
                    run_start = target;
                }
                _ => return Err(ProtoError::BadLabel("reserved label type")),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn msg_with(tail: &[u8]) -> Vec<u8> {
        let mut m = vec![0u8; HEADER_LEN];
        m.extend_from_slice(tail);
        m
    }

    #[test]
    fn reads_plain_and_compressed_names() {
        // 12: "a.example" ; 23: "b" + pointer to 14 ("example")
        let m = msg_with(b"\x01a\x07example\x00\x01b\xc0\x0e");
        let mut r = Reader::new(&m);
        r.take(HEADER_LEN).unwrap();
        assert_eq!(r.name().unwrap(), Name::parse("a.example").unwrap());
        assert_eq!(r.name().unwrap(), Name::parse("b.example").unwrap());
        assert!(r.at_end());
    }

    #[test]
    fn rejects_pointer_loops_and_forward_pointers() {
        // A pointer to itself.
        let m = msg_with(b"\xc0\x0c");
        let mut r = Reader::new(&m);
        r.take(HEADER_LEN).unwrap();
        assert_eq!(r.name(), Err(ProtoError::BadPointer));
        // A forward pointer.
        let m = msg_with(b"\xc0\x0e\x00");
        let mut r = Reader::new(&m);
        r.take(HEADER_LEN).unwrap();
        assert_eq!(r.name(), Err(ProtoError::BadPointer));
        // Two pointers pointing at each other: 12 → 14, 14 → 12.
        let m = msg_with(b"\xc0\x0e\xc0\x0c");
        let mut r = Reader::new(&m);
        r.take(HEADER_LEN + 2).unwrap();
        assert_eq!(r.name(), Err(ProtoError::BadPointer));
        // A chain of backward pointers is fine: 16 → 14 → 12, the root.
        let m = msg_with(b"\x00\x00\xc0\x0c\xc0\x0e");
        let mut r = Reader::new(&m);
        r.take(HEADER_LEN + 4).unwrap();
        assert_eq!(r.name(), Ok(Name::root()));
        assert!(r.at_end());
        // A label run that leads back over its own pointer: 12: "\x01a" then 14: ptr → 12.
        // Reading at 14 jumps to 12, reads "a", arrives at 14 again: must not loop.
        let m = msg_with(b"\x01a\xc0\x0c");
        let mut r = Reader::new(&m);
        r.take(HEADER_LEN + 2).unwrap();
        assert_eq!(r.name(), Err(ProtoError::BadPointer));
        // Into the header.
        let m = msg_with(b"\xc0\x00");
        let mut r = Reader::new(&m);
        r.take(HEADER_LEN).unwrap();
        assert_eq!(r.name(), Err(ProtoError::BadPointer));
    }

    #[test]
    fn limits_pointer_chains() {
        // The root at 12, then pointers each pointing at the one before.
        let mut tail = vec![0u8];
        for i in 0..200usize {
            let target = if i == 0 { 12 } else { 13 + 2 * (i - 1) };
            tail.extend_from_slice(&[0xc0 | (target >> 8) as u8, target as u8]);
        }
        let m = msg_with(&tail);
        let ok = |hops: usize| {
            let mut r = Reader::sub(&m, 13 + 2 * (hops - 1), 2).unwrap();
            r.name()
        };
        assert_eq!(ok(MAX_JUMPS), Ok(Name::root()));
        assert_eq!(ok(MAX_JUMPS + 1), Err(ProtoError::BadPointer));
    }

    #[test]
    fn rejects_bad_labels_and_long_names() {
        let m = msg_with(b"\x41a\x00");
        let mut r = Reader::new(&m);
        r.take(HEADER_LEN).unwrap();
        assert!(matches!(r.name(), Err(ProtoError::BadLabel(_))));
        let m = msg_with(b"\x05ab");
        let mut r = Reader::new(&m);
        r.take(HEADER_LEN).unwrap();
        assert_eq!(r.name(), Err(ProtoError::Truncated));
        let mut tail = Vec::new();
        for _ in 0..5 {
            tail.push(63);
            tail.extend_from_slice(&[b'x'; 63]);
        }
        tail.push(0);
        let m = msg_with(&tail);
        let mut r = Reader::new(&m);
        r.take(HEADER_LEN).unwrap();
        assert_eq!(r.name(), Err(ProtoError::NameTooLong));
    }

    #[test]
    fn sub_reader_stays_in_its_window() {
        let m = msg_with(b"\x03abc\x00\x01");
        let mut r = Reader::sub(&m, HEADER_LEN, 3).unwrap();
        assert_eq!(r.name(), Err(ProtoError::Truncated));
        assert!(Reader::sub(&m, HEADER_LEN, 100).is_err());
        let mut r = Reader::sub(&m, HEADER_LEN, 5).unwrap();
        assert_eq!(r.u48(), Err(ProtoError::Truncated));
        assert_eq!(r.u32().unwrap(), 0x0361_6263);
        assert_eq!(r.u8().unwrap(), 0);
        assert!(r.at_end());
        assert_eq!(r.u8(), Err(ProtoError::Truncated));
    }
}
