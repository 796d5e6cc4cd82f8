//! A message buffer that compresses names against those written before.

use std::collections::HashMap;

use crate::name::Name;

/// Compression pointers carry 14 bits of offset.
const MAX_POINTER: usize = 0x3FFF;

/// Appends big-endian fields and names to a message. A name written where compression is
/// allowed is replaced, from the first label whose suffix was seen before, by a pointer to
/// it; suffixes match byte for byte (case included), so decoding gives back exactly the
/// names that were written.
pub(crate) struct Writer {
    buf: Vec<u8>,
    compress: bool,
    seen: HashMap<Vec<Vec<u8>>, u16>,
}

impl Writer {
    /// A writer; `compress` false writes every name in full (for size comparisons).
    pub(crate) fn new(compress: bool) -> Writer {
        Writer {
            buf: Vec::with_capacity(512),
            compress,
            seen: HashMap::new(),
        }
    }

    pub(crate) fn len(&self) -> usize {
        self.buf.len()
    }

    pub(crate) fn into_bytes(self) -> Vec<u8> {
        self.buf
    }

    /// Drops everything from `mark` on, with the names remembered there.
    pub(crate) fn rewind(&mut self, mark: usize) {
        self.buf.truncate(mark);
        self.seen.retain(|_, off| usize::from(*off) < mark);
    }

    pub(crate) fn u8(&mut self, v: u8) {
        self.buf.push(v);
    }

    pub(crate) fn u16(&mut self, v: u16) {
        self.buf.extend_from_slice(&v.to_be_bytes());
    }

    pub(crate) fn u32(&mut self, v: u32) {
        self.buf.extend_from_slice(&v.to_be_bytes());
    }

    /// The low 48 bits of `v`, big-endian.
    pub(crate) fn u48(&mut self, v: u64) {
        self.buf.extend_from_slice(&v.to_be_bytes()[2..]);
    }

    pub(crate) fn bytes(&mut self, b: &[u8]) {
        self.buf.extend_from_slice(b);
    }

    /// Overwrites a u16 written earlier (a count or a length).
    pub(crate) fn patch_u16(&mut self, at: usize, v: u16) {
        if let Some(slot) = self.buf.get_mut(at..at + 2) {
            slot.copy_from_slice(&v.to_be_bytes());
        }
    }

    /// Writes a name: compressed when `compressible` (and the writer compresses), and then
    /// also remembered so later names can point at it; otherwise in full and not
    /// remembered (RFC 3597 §4: only well-known types' data may be compressed).
    pub(crate) fn name(&mut self, name: &Name, compressible: bool) {
        let labels = name.labels();
        let use_table = compressible && self.compress;
        for i in 0..labels.len() {
            let suffix = labels.get(i..).unwrap_or_default();
            if use_table {
                if let Some(&off) = self.seen.get(suffix) {
                    self.u16(0xC000 | off);
                    return;
                }
                let here = self.buf.len();
                if here <= MAX_POINTER {
                    self.seen.insert(suffix.to_vec(), here as u16);
                }
            }
            if let Some(label) = labels.get(i) {
                // 1..=63 bytes by construction of `Name`.
                self.buf.push(label.len() as u8);
                self.buf.extend_from_slice(label);
            }
        }
        self.buf.push(0);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn compresses_repeated_suffixes() {
        let mut w = Writer::new(true);
        w.bytes(&[0; 12]);
        w.name(&Name::parse("a.example.com").unwrap(), true);
        w.name(&Name::parse("b.example.com").unwrap(), true);
        w.name(&Name::parse("example.com").unwrap(), true);
        // Different case: written in full so it decodes as written.
        w.name(&Name::parse("EXAMPLE.com").unwrap(), true);
        // Not compressible: in full, and not remembered.
        w.name(&Name::parse("c.example.org").unwrap(), false);
        w.name(&Name::parse("example.org").unwrap(), true);
        let b = w.into_bytes();
        let tail = &b[12..];
        let expect: &[u8] = b"\x01a\x07example\x03com\x00\
            \x01b\xc0\x0e\
            \xc0\x0e\
            \x07EXAMPLE\xc0\x16\
            \x01c\x07example\x03org\x00\
            \x07example\x03org\x00";
        assert_eq!(tail, expect);
    }

    #[test]
    fn rewind_forgets_names() {
        let mut w = Writer::new(true);
        w.bytes(&[0; 12]);
        let mark = w.len();
        w.name(&Name::parse("a.example").unwrap(), true);
        w.rewind(mark);
        w.name(&Name::parse("example").unwrap(), true);
        assert_eq!(&w.into_bytes()[12..], b"\x07example\x00");
    }
}
