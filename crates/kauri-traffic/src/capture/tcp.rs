//! TCP headers and the in-order byte stream of one direction of a connection.
//!
//! [`Reassembler`] turns segments as captured (retransmitted, overlapping, out of order,
//! cut by the snap length) into the stream's bytes in order, as [`Piece`]s: runs of bytes,
//! and the number of bytes known to be missing where a segment was cut or lost. Segments
//! that arrive ahead of a hole are held back until it fills, within a bound
//! ([`MAX_HELD_BYTES`], [`MAX_HELD_SEGMENTS`]); past it the hole is given up as missing.

use std::collections::BTreeMap;

/// FIN flag.
pub const FIN: u8 = 0x01;
/// SYN flag.
pub const SYN: u8 = 0x02;
/// RST flag.
pub const RST: u8 = 0x04;
/// ACK flag.
pub const ACK: u8 = 0x10;

/// Most bytes held back ahead of a hole, per direction.
pub const MAX_HELD_BYTES: usize = 4 << 20;
/// Most segments held back ahead of a hole, per direction.
pub const MAX_HELD_SEGMENTS: usize = 512;

/// A TCP header and payload.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Tcp<'a> {
    /// Source port.
    pub src_port: u16,
    /// Destination port.
    pub dst_port: u16,
    /// Sequence number.
    pub seq: u32,
    /// Flags (FIN, SYN, RST, PSH, ACK, …).
    pub flags: u8,
    /// The captured payload.
    pub payload: &'a [u8],
    /// The payload length the IP header implies.
    pub payload_len: usize,
}

/// Reads a TCP header from an IP payload of `declared` bytes (of which `data` were
/// captured). `None` when the header itself is incomplete or invalid.
pub fn parse(data: &[u8], declared: usize) -> Option<Tcp<'_>> {
    let h = data.get(..20)?;
    let header = usize::from(h[12] >> 4) * 4;
    if header < 20 {
        return None;
    }
    let payload = data.get(header..)?;
    Some(Tcp {
        src_port: u16::from_be_bytes([h[0], h[1]]),
        dst_port: u16::from_be_bytes([h[2], h[3]]),
        seq: u32::from_be_bytes([h[4], h[5], h[6], h[7]]),
        flags: h[13],
        payload,
        payload_len: declared.saturating_sub(header).max(payload.len()),
    })
}

/// A piece of one direction's byte stream, in order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Piece {
    /// Bytes that follow the previous piece.
    Data(Vec<u8>),
    /// This many bytes of the stream were not captured.
    Missing(u64),
}

/// Puts one direction's segments in order.
#[derive(Debug, Default)]
pub struct Reassembler {
    /// Sequence number of stream offset 0.
    base: Option<u32>,
    /// Stream offset of the next byte expected.
    next: u64,
    /// Segments ahead of a hole: offset → (captured bytes, declared length).
    held: BTreeMap<u64, (Vec<u8>, usize)>,
    held_bytes: usize,
}

impl Reassembler {
    /// A direction that has seen nothing yet.
    pub fn new() -> Reassembler {
        Reassembler::default()
    }

    /// The stream offset of a sequence number, or `None` when it lies before the start.
    fn offset(&self, seq: u32) -> Option<u64> {
        let base = self.base?;
        let next_seq = base.wrapping_add(self.next as u32);
        let delta = i64::from(seq.wrapping_sub(next_seq) as i32);
        u64::try_from(self.next as i64 + delta).ok()
    }

    /// Adds a segment; returns the pieces of the stream it makes available, in order.
    pub fn push(&mut self, seg: &Tcp<'_>) -> Vec<Piece> {
        let mut seq = seg.seq;
        if seg.flags & SYN != 0 {
            seq = seq.wrapping_add(1);
            if self.base != Some(seq) {
                *self = Reassembler::new();
                self.base = Some(seq);
            }
        }
        if self.base.is_none() {
            self.base = Some(seq);
        }
        let mut out = Vec::new();
        if seg.payload_len == 0 {
            return out;
        }
        let Some(off) = self.offset(seq) else {
            return out;
        };
        if off > self.next {
            if !self.held.contains_key(&off) {
                self.held_bytes += seg.payload.len();
                self.held
                    .insert(off, (seg.payload.to_vec(), seg.payload_len));
            }
            if self.held.len() <= MAX_HELD_SEGMENTS && self.held_bytes <= MAX_HELD_BYTES {
                return out;
            }
            // Too much waits on the hole: give it up.
            let first = self.held.keys().next().copied().unwrap_or(off);
            out.push(Piece::Missing(first - self.next));
            self.next = first;
            self.drain(&mut out);
            return out;
        }
        self.deliver(off, seg.payload, seg.payload_len, &mut out);
        self.drain(&mut out);
        out
    }

    /// Appends the part of a segment beyond `self.next`.
    fn deliver(&mut self, off: u64, data: &[u8], declared: usize, out: &mut Vec<Piece>) {
        let end = off + declared as u64;
        if end <= self.next || off > self.next {
            return;
        }
        let skip = self.next - off;
        let captured_end = off + data.len() as u64;
        if captured_end > self.next {
            out.push(Piece::Data(data[skip as usize..].to_vec()));
            self.next = captured_end;
        }
        if end > self.next {
            out.push(Piece::Missing(end - self.next));
            self.next = end;
        }
    }

    /// Delivers held segments that the stream has reached.
    fn drain(&mut self, out: &mut Vec<Piece>) {
        while let Some((&off, _)) = self.held.first_key_value() {
            if off > self.next {
                break;
            }
            if let Some((data, declared)) = self.held.remove(&off) {
                self.held_bytes -= data.len();
                self.deliver(off, &data, declared, out);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn seg(seq: u32, flags: u8, payload: &[u8], declared: usize) -> Tcp<'_> {
        Tcp {
            src_port: 1,
            dst_port: 2,
            seq,
            flags,
            payload,
            payload_len: declared,
        }
    }

    #[test]
    fn segments_come_out_in_order() {
        let mut r = Reassembler::new();
        assert!(r.push(&seg(99, SYN, &[], 0)).is_empty());
        assert_eq!(
            r.push(&seg(100, ACK, b"ab", 2)),
            [Piece::Data(b"ab".to_vec())]
        );
        // Ahead of a hole: held back.
        assert!(r.push(&seg(104, ACK, b"ef", 2)).is_empty());
        // A retransmission overlapping what was seen.
        assert_eq!(
            r.push(&seg(101, ACK, b"bcd", 3)),
            [Piece::Data(b"cd".to_vec()), Piece::Data(b"ef".to_vec())]
        );
        // Cut by the snap length: two bytes missing.
        assert_eq!(
            r.push(&seg(106, ACK, b"g", 3)),
            [Piece::Data(b"g".to_vec()), Piece::Missing(2)]
        );
        assert!(r.push(&seg(100, ACK, b"ab", 2)).is_empty());
    }

    #[test]
    fn sequence_numbers_wrap() {
        let mut r = Reassembler::new();
        assert_eq!(
            r.push(&seg(u32::MAX - 1, ACK, b"abcd", 4)),
            [Piece::Data(b"abcd".to_vec())]
        );
        assert_eq!(r.push(&seg(2, ACK, b"e", 1)), [Piece::Data(b"e".to_vec())]);
    }
}
