//! A minimal NDR20 (MS-RPCE 2.2.6 "type serialization version 1") writer and
//! reader, little-endian only, covering what the PAC's NDR-encoded buffers
//! need: primitive integers with natural alignment, unique pointers with
//! referent ids, conformant and conformant-varying arrays, and the 16-byte
//! common + private header that wraps every serialized top-level type.
//!
//! Alignment is computed relative to the start of the NDR stream, i.e. the
//! first byte after the 16-byte headers. Because those headers are 16 bytes
//! long, the writer can keep the headers in its own buffer and align on the
//! absolute position without changing the result.

use super::PacError;

/// Length of the common header (8 bytes) plus the private header (8 bytes).
pub(super) const TYPE_SERIALIZATION_HEADER_LEN: usize = 16;

/// First referent id handed out for a non-null unique pointer; Windows and
/// Samba both start at 0x00020000 and step by 4.
const FIRST_REFERENT_ID: u32 = 0x0002_0000;

/// Builds one type-serialization-1 blob.
///
/// The writer reserves room for the headers up front so that finishing the
/// blob never copies the (possibly megabytes long) body.
pub(super) struct NdrWriter {
    buf: Vec<u8>,
    next_referent: u32,
}

impl NdrWriter {
    /// Starts a blob, reserving `body_capacity` bytes for the NDR stream.
    pub(super) fn new(body_capacity: usize) -> Self {
        let mut buf =
            Vec::with_capacity(body_capacity.saturating_add(TYPE_SERIALIZATION_HEADER_LEN + 8));
        buf.resize(TYPE_SERIALIZATION_HEADER_LEN, 0);
        NdrWriter {
            buf,
            next_referent: FIRST_REFERENT_ID,
        }
    }

    /// Pads with zero bytes up to a multiple of `n` (a power of two).
    pub(super) fn align(&mut self, n: usize) {
        let rem = self.buf.len() % n;
        if rem != 0 {
            let new_len = self.buf.len() + (n - rem);
            self.buf.resize(new_len, 0);
        }
    }

    /// Writes a `u16` at 2-byte alignment.
    pub(super) fn u16(&mut self, v: u16) {
        self.align(2);
        self.buf.extend_from_slice(&v.to_le_bytes());
    }

    /// Writes a `u32` at 4-byte alignment.
    pub(super) fn u32(&mut self, v: u32) {
        self.align(4);
        self.buf.extend_from_slice(&v.to_le_bytes());
    }

    /// Writes a FILETIME (a struct of two `u32`s, low part first).
    pub(super) fn filetime(&mut self, v: u64) {
        self.u32(v as u32);
        self.u32((v >> 32) as u32);
    }

    /// Writes unaligned raw bytes (byte arrays have alignment 1).
    pub(super) fn bytes(&mut self, b: &[u8]) {
        self.buf.extend_from_slice(b);
    }

    /// Writes a unique pointer: a fresh referent id if `present`, else 0.
    pub(super) fn pointer(&mut self, present: bool) {
        if present {
            let id = self.next_referent;
            self.next_referent = self.next_referent.wrapping_add(4);
            self.u32(id);
        } else {
            self.u32(0);
        }
    }

    /// Writes the deferred body of a conformant-varying `u16` array (the
    /// buffer of an RPC_UNICODE_STRING): max count, offset 0, actual count,
    /// then the code units.
    pub(super) fn conformant_varying_u16(&mut self, units: &[u16]) {
        let n = units.len() as u32;
        self.u32(n);
        self.u32(0);
        self.u32(n);
        self.buf.reserve(units.len() * 2);
        for u in units {
            self.buf.extend_from_slice(&u.to_le_bytes());
        }
    }

    /// Writes an RPC_SID as the referent of a pointer: it is a conformant
    /// structure, so the conformance (sub-authority count) comes first.
    /// `sid` must already be validated.
    pub(super) fn rpc_sid(&mut self, sid: &[u8]) {
        let count = sid.get(1).copied().unwrap_or(0);
        self.u32(u32::from(count));
        self.bytes(sid);
    }

    /// Finishes the blob: pads the stream to a multiple of 8 and fills in the
    /// common header (version 1, little-endian, header length 8, filler
    /// 0xcccccccc) and the private header (object length, zero filler).
    pub(super) fn finish(mut self) -> Result<Vec<u8>, PacError> {
        self.align(8);
        let object_len = u32::try_from(self.buf.len() - TYPE_SERIALIZATION_HEADER_LEN)
            .map_err(|_| PacError::TooLarge("NDR object exceeds 4 GiB"))?;
        let mut header = [0u8; TYPE_SERIALIZATION_HEADER_LEN];
        header[0] = 1; // version
        header[1] = 0x10; // little-endian, ASCII
        header[2..4].copy_from_slice(&8u16.to_le_bytes());
        header[4..8].copy_from_slice(&0xcccc_ccccu32.to_le_bytes());
        header[8..12].copy_from_slice(&object_len.to_le_bytes());
        self.buf[..TYPE_SERIALIZATION_HEADER_LEN].copy_from_slice(&header);
        Ok(self.buf)
    }
}

/// Validates the type-serialization-1 headers and returns the NDR stream
/// (the object buffer) they describe.
pub(super) fn type_serialization1_body(data: &[u8]) -> Result<&[u8], PacError> {
    let header = data
        .get(..TYPE_SERIALIZATION_HEADER_LEN)
        .ok_or(PacError::Truncated("NDR type serialization header"))?;
    if header[0] != 1 {
        return Err(PacError::Malformed(
            "NDR type serialization version is not 1",
        ));
    }
    if header[1] != 0x10 {
        return Err(PacError::Unsupported("NDR data that is not little-endian"));
    }
    if u16::from_le_bytes([header[2], header[3]]) != 8 {
        return Err(PacError::Malformed("NDR common header length is not 8"));
    }
    let object_len = u32::from_le_bytes([header[8], header[9], header[10], header[11]]) as usize;
    let rest = &data[TYPE_SERIALIZATION_HEADER_LEN..];
    rest.get(..object_len)
        .ok_or(PacError::Truncated("NDR object buffer"))
}

/// Reads an NDR stream. Every read is bounds-checked and returns
/// [`PacError::Truncated`] instead of panicking.
pub(super) struct NdrReader<'a> {
    data: &'a [u8],
    pos: usize,
}

impl<'a> NdrReader<'a> {
    /// Reads from the start of an NDR stream.
    pub(super) fn new(data: &'a [u8]) -> Self {
        NdrReader { data, pos: 0 }
    }

    /// Bytes left after the current position.
    pub(super) fn remaining(&self) -> usize {
        self.data.len().saturating_sub(self.pos)
    }

    /// Skips padding up to a multiple of `n` (a power of two).
    pub(super) fn align(&mut self, n: usize) -> Result<(), PacError> {
        let rem = self.pos % n;
        if rem != 0 {
            let pad = n - rem;
            if pad > self.remaining() {
                return Err(PacError::Truncated("NDR alignment padding"));
            }
            self.pos += pad;
        }
        Ok(())
    }

    /// Takes `n` raw bytes.
    pub(super) fn bytes(&mut self, n: usize, what: &'static str) -> Result<&'a [u8], PacError> {
        if n > self.remaining() {
            return Err(PacError::Truncated(what));
        }
        let out = &self.data[self.pos..self.pos + n];
        self.pos += n;
        Ok(out)
    }

    /// Reads a `u16` at 2-byte alignment.
    pub(super) fn u16(&mut self, what: &'static str) -> Result<u16, PacError> {
        self.align(2)?;
        let b = self.bytes(2, what)?;
        Ok(u16::from_le_bytes([b[0], b[1]]))
    }

    /// Reads a `u32` at 4-byte alignment.
    pub(super) fn u32(&mut self, what: &'static str) -> Result<u32, PacError> {
        self.align(4)?;
        let b = self.bytes(4, what)?;
        Ok(u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
    }

    /// Reads a FILETIME (two `u32`s, low part first).
    pub(super) fn filetime(&mut self, what: &'static str) -> Result<u64, PacError> {
        let low = self.u32(what)?;
        let high = self.u32(what)?;
        Ok(u64::from(low) | (u64::from(high) << 32))
    }

    /// Reads a unique pointer; returns whether it is non-null.
    pub(super) fn pointer(&mut self, what: &'static str) -> Result<bool, PacError> {
        Ok(self.u32(what)? != 0)
    }

    /// Reads the conformance of a conformant array and checks that it matches
    /// the count field that accompanies the pointer, and that at least
    /// `count * elem_size` bytes remain, so the caller can allocate safely.
    pub(super) fn conformant_count(
        &mut self,
        expected: u32,
        elem_size: usize,
        what: &'static str,
    ) -> Result<usize, PacError> {
        let max_count = self.u32(what)?;
        if max_count != expected {
            return Err(PacError::Malformed(what));
        }
        let n = max_count as usize;
        let need = n.checked_mul(elem_size).ok_or(PacError::Truncated(what))?;
        if need > self.remaining() {
            return Err(PacError::Truncated(what));
        }
        Ok(n)
    }

    /// Reads the deferred buffer of an RPC_UNICODE_STRING whose header said
    /// `length` bytes, and decodes it as UTF-16LE.
    pub(super) fn conformant_varying_string(
        &mut self,
        length: u16,
        what: &'static str,
    ) -> Result<String, PacError> {
        let max_count = self.u32(what)?;
        let offset = self.u32(what)?;
        let actual = self.u32(what)?;
        if offset != 0 || actual > max_count || u64::from(actual) * 2 != u64::from(length) {
            return Err(PacError::Malformed(what));
        }
        let raw = self.bytes(usize::from(length), what)?;
        utf16le_to_string(raw, what)
    }

    /// Reads the referent of an RPC_SID pointer (conformance, then the SID
    /// in its binary form) and returns the binary SID.
    pub(super) fn rpc_sid(&mut self, what: &'static str) -> Result<Vec<u8>, PacError> {
        let conformance = self.u32(what)?;
        let head = self.bytes(8, what)?;
        let count = head[1];
        if u32::from(count) != conformance {
            return Err(PacError::Malformed(what));
        }
        let tail = self.bytes(usize::from(count) * 4, what)?;
        let mut sid = Vec::with_capacity(8 + tail.len());
        sid.extend_from_slice(head);
        sid.extend_from_slice(tail);
        super::sid::validate_sid(&sid)?;
        Ok(sid)
    }
}

/// Decodes UTF-16LE bytes strictly (unpaired surrogates are an error: names
/// in a PAC drive authorization decisions, so they are not repaired).
pub(super) fn utf16le_to_string(raw: &[u8], what: &'static str) -> Result<String, PacError> {
    if !raw.len().is_multiple_of(2) {
        return Err(PacError::Malformed(what));
    }
    let units = raw
        .chunks_exact(2)
        .map(|c| u16::from_le_bytes([c[0], c[1]]));
    char::decode_utf16(units)
        .collect::<Result<String, _>>()
        .map_err(|_| PacError::InvalidUtf16(what))
}

/// Encodes a string as UTF-16LE bytes.
pub(super) fn string_to_utf16le(s: &str) -> Vec<u8> {
    let mut out = Vec::with_capacity(s.len() * 2);
    for u in s.encode_utf16() {
        out.extend_from_slice(&u.to_le_bytes());
    }
    out
}
