//! A small DER reader and writer, just big enough for Kerberos.
//!
//! Kerberos (RFC 4120 §5) is written in ASN.1 with EXPLICIT context tags and
//! is exchanged in DER. This module knows single-byte identifiers only
//! (Kerberos never uses tag numbers above 30), definite lengths of up to four
//! length bytes, and the handful of universal types Kerberos needs.
//!
//! The reader never allocates: it hands out slices of the input after
//! checking that the announced length is actually present. Callers copy those
//! slices into owned values, so every allocation is bounded by the input size.

use super::error::MsgError;

/// Result alias used throughout the module.
pub(super) type Res<T> = Result<T, MsgError>;

/// Universal tag: BOOLEAN.
pub(super) const TAG_BOOLEAN: u8 = 0x01;
/// Universal tag: INTEGER.
pub(super) const TAG_INTEGER: u8 = 0x02;
/// Universal tag: BIT STRING (primitive).
pub(super) const TAG_BIT_STRING: u8 = 0x03;
/// Universal tag: OCTET STRING (primitive).
pub(super) const TAG_OCTET_STRING: u8 = 0x04;
/// Universal tag: OBJECT IDENTIFIER.
pub(super) const TAG_OID: u8 = 0x06;
/// Universal tag: GeneralizedTime.
pub(super) const TAG_GENERALIZED_TIME: u8 = 0x18;
/// Universal tag: GeneralString.
pub(super) const TAG_GENERAL_STRING: u8 = 0x1b;
/// Universal tag: SEQUENCE / SEQUENCE OF (constructed).
pub(super) const TAG_SEQUENCE: u8 = 0x30;

/// A type with a DER form; the public `encode`/`decode` pair of every
/// message type is generated from this (see `der_codec!`).
pub(super) trait Der: Sized {
    /// The complete DER element.
    fn to_der(&self) -> Vec<u8>;
    /// Decodes from an element already split off the input; `what` names
    /// the field being read, for error messages.
    fn from_tlv(t: Tlv<'_>, what: &'static str) -> Res<Self>;
}

/// Identifier octet of a constructed `[APPLICATION n]` tag.
pub(super) const fn app_tag(n: u8) -> u8 {
    0x60 | (n & 0x1f)
}

/// Identifier octet of a constructed context tag `[n]`.
pub(super) const fn ctx_tag(n: u8) -> u8 {
    0xa0 | (n & 0x1f)
}

/// One tag-length-value element borrowed from the input.
#[derive(Debug, Clone, Copy)]
pub(super) struct Tlv<'a> {
    /// The identifier octet.
    pub tag: u8,
    /// The contents octets.
    pub value: &'a [u8],
    /// The whole element: identifier, length and contents.
    pub raw: &'a [u8],
}

/// A cursor over DER input.
#[derive(Debug, Clone)]
pub(super) struct Reader<'a> {
    data: &'a [u8],
    pos: usize,
}

impl<'a> Reader<'a> {
    /// Starts reading at the beginning of `data`.
    pub fn new(data: &'a [u8]) -> Self {
        Reader { data, pos: 0 }
    }

    /// Bytes not yet consumed.
    pub fn remaining(&self) -> &'a [u8] {
        self.data.get(self.pos..).unwrap_or(&[])
    }

    /// True when all input has been consumed.
    pub fn is_empty(&self) -> bool {
        self.remaining().is_empty()
    }

    /// The identifier octet of the next element, if any.
    pub fn peek_tag(&self) -> Option<u8> {
        self.remaining().first().copied()
    }

    /// Reads one complete element, checking that its contents are present.
    pub fn read_tlv(&mut self, what: &'static str) -> Res<Tlv<'a>> {
        let rest = self.remaining();
        let (tag, value, used) = parse_header(rest, what)?;
        let raw = rest.get(..used).ok_or(MsgError::Truncated {
            what,
            need: used,
            have: rest.len(),
        })?;
        self.pos += used;
        Ok(Tlv { tag, value, raw })
    }

    /// Reads one element and checks its identifier octet.
    pub fn expect(&mut self, tag: u8, what: &'static str) -> Res<Tlv<'a>> {
        let t = self.read_tlv(what)?;
        if t.tag != tag {
            return Err(MsgError::UnexpectedTag {
                what,
                expected: tag,
                found: t.tag,
            });
        }
        Ok(t)
    }

    /// Fails if anything is left.
    pub fn finish(&self, what: &'static str) -> Res<()> {
        let len = self.remaining().len();
        if len != 0 {
            return Err(MsgError::TrailingData { what, len });
        }
        Ok(())
    }
}

/// Parses identifier and length at the start of `input`.
///
/// Returns the identifier, the contents slice and the total element size.
fn parse_header<'a>(input: &'a [u8], what: &'static str) -> Res<(u8, &'a [u8], usize)> {
    let tag = *input.first().ok_or(MsgError::Truncated {
        what,
        need: 1,
        have: 0,
    })?;
    if tag & 0x1f == 0x1f {
        return Err(MsgError::UnsupportedTag { what });
    }
    let first = *input.get(1).ok_or(MsgError::Truncated {
        what,
        need: 2,
        have: input.len(),
    })?;
    let (len, hdr) = if first < 0x80 {
        (usize::from(first), 2usize)
    } else if first == 0x80 {
        return Err(MsgError::BadLength {
            what,
            why: "indefinite length is not allowed in DER",
        });
    } else {
        let n = usize::from(first & 0x7f);
        if n > 4 {
            return Err(MsgError::BadLength {
                what,
                why: "length field longer than four bytes",
            });
        }
        let bytes = input.get(2..2 + n).ok_or(MsgError::Truncated {
            what,
            need: 2 + n,
            have: input.len(),
        })?;
        let mut len: usize = 0;
        for b in bytes {
            len = (len << 8) | usize::from(*b);
        }
        (len, 2 + n)
    };
    let end = hdr.checked_add(len).ok_or(MsgError::BadLength {
        what,
        why: "length overflows",
    })?;
    let value = input.get(hdr..end).ok_or(MsgError::Truncated {
        what,
        need: end,
        have: input.len(),
    })?;
    Ok((tag, value, end))
}

/// Decodes exactly one element from `bytes` with `f`, refusing trailing bytes.
pub(super) fn decode_all<T>(
    bytes: &[u8],
    what: &'static str,
    f: impl FnOnce(Tlv<'_>) -> Res<T>,
) -> Res<T> {
    let mut r = Reader::new(bytes);
    let t = r.read_tlv(what)?;
    r.finish(what)?;
    f(t)
}

/// Checks the identifier octet of an element.
pub(super) fn check_tag(t: &Tlv<'_>, tag: u8, what: &'static str) -> Res<()> {
    if t.tag != tag {
        return Err(MsgError::UnexpectedTag {
            what,
            expected: tag,
            found: t.tag,
        });
    }
    Ok(())
}

/// Unwraps an element that must contain exactly one inner element (an
/// EXPLICIT tag or an APPLICATION wrapper) and returns the inner element.
pub(super) fn unwrap_explicit<'a>(t: Tlv<'a>, tag: u8, what: &'static str) -> Res<Tlv<'a>> {
    check_tag(&t, tag, what)?;
    let mut r = Reader::new(t.value);
    let inner = r.read_tlv(what)?;
    r.finish(what)?;
    Ok(inner)
}

// ---------------------------------------------------------------------------
// Primitive decoders
// ---------------------------------------------------------------------------

/// Decodes an INTEGER that must fit in an `i64`.
///
/// Non-minimal encodings (redundant leading 0x00/0xff) are accepted, as BER
/// peers sometimes send them, but the value must fit in 64 bits.
pub(super) fn dec_i64(t: Tlv<'_>, what: &'static str) -> Res<i64> {
    check_tag(&t, TAG_INTEGER, what)?;
    let v = t.value;
    let first = *v.first().ok_or(MsgError::InvalidValue {
        what,
        why: "empty INTEGER",
    })?;
    let negative = first & 0x80 != 0;
    // Strip redundant sign-extension bytes.
    let pad = if negative { 0xff } else { 0x00 };
    let mut start = 0;
    while start + 1 < v.len() && v[start] == pad && (v[start + 1] & 0x80 != 0) == negative {
        start += 1;
    }
    let digits = &v[start..];
    if digits.len() > 8 {
        return Err(MsgError::IntegerOutOfRange { what });
    }
    let mut acc: i64 = if negative { -1 } else { 0 };
    for b in digits {
        acc = (acc << 8) | i64::from(*b);
    }
    Ok(acc)
}

/// Decodes an `Int32` (INTEGER (-2147483648..2147483647)).
pub(super) fn dec_i32(t: Tlv<'_>, what: &'static str) -> Res<i32> {
    let v = dec_i64(t, what)?;
    i32::try_from(v).map_err(|_| MsgError::IntegerOutOfRange { what })
}

/// Decodes a `UInt32` (INTEGER (0..4294967295)).
///
/// Also accepts negative values down to -2^31 and maps them to their two's
/// complement `u32`, because MIT, Heimdal and Windows declare nonces,
/// sequence numbers and kvnos as signed 32-bit and may send them negative.
pub(super) fn dec_u32(t: Tlv<'_>, what: &'static str) -> Res<u32> {
    let v = dec_i64(t, what)?;
    if let Ok(u) = u32::try_from(v) {
        return Ok(u);
    }
    if let Ok(i) = i32::try_from(v) {
        return Ok(i as u32);
    }
    Err(MsgError::IntegerOutOfRange { what })
}

/// Decodes `Microseconds` (INTEGER (0..999999)).
pub(super) fn dec_usec(t: Tlv<'_>, what: &'static str) -> Res<u32> {
    let v = dec_i64(t, what)?;
    if !(0..=999_999).contains(&v) {
        return Err(MsgError::IntegerOutOfRange { what });
    }
    Ok(v as u32)
}

/// Decodes a BOOLEAN (any non-zero octet is TRUE, as BER allows).
pub(super) fn dec_bool(t: Tlv<'_>, what: &'static str) -> Res<bool> {
    check_tag(&t, TAG_BOOLEAN, what)?;
    match t.value {
        [b] => Ok(*b != 0),
        _ => Err(MsgError::InvalidValue {
            what,
            why: "BOOLEAN must have exactly one contents octet",
        }),
    }
}

/// Decodes a primitive OCTET STRING.
pub(super) fn dec_octets(t: Tlv<'_>, what: &'static str) -> Res<Vec<u8>> {
    check_tag(&t, TAG_OCTET_STRING, what)?;
    Ok(t.value.to_vec())
}

/// Decodes a `KerberosString` (GeneralString restricted to UTF-8 here).
pub(super) fn dec_string(t: Tlv<'_>, what: &'static str) -> Res<String> {
    check_tag(&t, TAG_GENERAL_STRING, what)?;
    match std::str::from_utf8(t.value) {
        Ok(s) => Ok(s.to_owned()),
        Err(_) => Err(MsgError::InvalidValue {
            what,
            why: "KerberosString is not valid UTF-8",
        }),
    }
}

/// Decodes a `KerberosFlags` BIT STRING into a `u32` with RFC bit 0 as the
/// most significant bit.
///
/// Any length is accepted: bits past 32 are ignored, missing bits are zero,
/// and bits marked unused are cleared.
pub(super) fn dec_flags(t: Tlv<'_>, what: &'static str) -> Res<u32> {
    check_tag(&t, TAG_BIT_STRING, what)?;
    let (unused, bits) = match t.value.split_first() {
        Some((u, b)) => (*u, b),
        None => {
            return Err(MsgError::InvalidValue {
                what,
                why: "BIT STRING without unused-bits octet",
            });
        }
    };
    if unused > 7 || (bits.is_empty() && unused != 0) {
        return Err(MsgError::InvalidValue {
            what,
            why: "bad unused-bits count in BIT STRING",
        });
    }
    let mut out: u32 = 0;
    for (i, b) in bits.iter().take(4).enumerate() {
        let mut byte = *b;
        if i + 1 == bits.len() {
            // Clear the bits the sender marked unused.
            byte &= 0xffu8 << unused;
        }
        out |= u32::from(byte) << (24 - 8 * i);
    }
    Ok(out)
}

/// Decodes an OBJECT IDENTIFIER and returns its contents octets.
pub(super) fn dec_oid<'a>(t: Tlv<'a>, what: &'static str) -> Res<&'a [u8]> {
    check_tag(&t, TAG_OID, what)?;
    Ok(t.value)
}

/// Decodes a SEQUENCE OF with `f` applied to each element.
///
/// The vector grows one decoded element at a time; each element consumes at
/// least two input bytes, so memory stays proportional to the input.
pub(super) fn dec_seq_of<'a, T>(
    t: Tlv<'a>,
    what: &'static str,
    mut f: impl FnMut(Tlv<'a>) -> Res<T>,
) -> Res<Vec<T>> {
    check_tag(&t, TAG_SEQUENCE, what)?;
    let mut r = Reader::new(t.value);
    let mut out = Vec::new();
    while !r.is_empty() {
        let e = r.read_tlv(what)?;
        out.push(f(e)?);
    }
    Ok(out)
}

/// Walks the fields of a SEQUENCE whose components carry EXPLICIT context
/// tags in increasing order, as every Kerberos SEQUENCE does.
///
/// Unknown context-tagged fields (tag numbers that the schema does not know,
/// for example extensions added after RFC 4120) are skipped. Anything else
/// that does not fit the schema (wrong tag class, repeated or out-of-order
/// fields, leftover non-context elements) is an error.
pub(super) struct SeqDecoder<'a> {
    r: Reader<'a>,
    ty: &'static str,
    last: Option<u8>,
}

impl<'a> SeqDecoder<'a> {
    /// Starts on a SEQUENCE element (checks the universal SEQUENCE tag).
    pub fn new(t: Tlv<'a>, ty: &'static str) -> Res<Self> {
        check_tag(&t, TAG_SEQUENCE, ty)?;
        Ok(SeqDecoder {
            r: Reader::new(t.value),
            ty,
            last: None,
        })
    }

    /// Starts on an `[APPLICATION n] SEQUENCE` element.
    pub fn new_app(t: Tlv<'a>, app: u8, ty: &'static str) -> Res<Self> {
        let inner = unwrap_explicit(t, app_tag(app), ty)?;
        Self::new(inner, ty)
    }

    /// Returns the inner element of field `[n]`, or `None` if it is absent.
    fn take(&mut self, n: u8) -> Res<Option<Tlv<'a>>> {
        loop {
            let tag = match self.r.peek_tag() {
                None => return Ok(None),
                Some(t) => t,
            };
            if tag & 0xc0 != 0x80 {
                return Err(MsgError::UnexpectedTag {
                    what: self.ty,
                    expected: ctx_tag(n),
                    found: tag,
                });
            }
            let k = tag & 0x1f;
            if self.last.is_some_and(|last| k <= last) {
                return Err(MsgError::FieldOrder {
                    ty: self.ty,
                    tag: k,
                });
            }
            if k > n {
                return Ok(None);
            }
            let t = self.r.read_tlv(self.ty)?;
            self.last = Some(k);
            if k < n {
                // A field this schema does not know: skip it.
                continue;
            }
            let inner = unwrap_explicit(t, ctx_tag(n), self.ty)?;
            return Ok(Some(inner));
        }
    }

    /// Decodes optional field `[n]` with `f`.
    pub fn opt<T>(
        &mut self,
        n: u8,
        field: &'static str,
        f: impl FnOnce(Tlv<'a>, &'static str) -> Res<T>,
    ) -> Res<Option<T>> {
        let ty = self.ty;
        let wrap = |e: MsgError| MsgError::InField {
            ty,
            field,
            source: Box::new(e),
        };
        match self.take(n).map_err(wrap)? {
            None => Ok(None),
            Some(t) => f(t, field).map(Some).map_err(wrap),
        }
    }

    /// Decodes required field `[n]` with `f`.
    pub fn req<T>(
        &mut self,
        n: u8,
        field: &'static str,
        f: impl FnOnce(Tlv<'a>, &'static str) -> Res<T>,
    ) -> Res<T> {
        match self.opt(n, field, f)? {
            Some(v) => Ok(v),
            None => Err(MsgError::MissingField {
                ty: self.ty,
                field,
                tag: n,
            }),
        }
    }

    /// Ends the SEQUENCE: skips trailing unknown context-tagged fields and
    /// refuses anything else.
    pub fn finish(mut self) -> Res<()> {
        while let Some(tag) = self.r.peek_tag() {
            let k = tag & 0x1f;
            let known_after = self.last.is_none_or(|l| k > l);
            if tag & 0xc0 != 0x80 || !known_after {
                return Err(MsgError::TrailingData {
                    what: self.ty,
                    len: self.r.remaining().len(),
                });
            }
            let _ = self.r.read_tlv(self.ty)?;
            self.last = Some(k);
        }
        Ok(())
    }
}

// ---------------------------------------------------------------------------
// Writer
// ---------------------------------------------------------------------------

/// Appends a DER length to `out` (short form below 128, else minimal long form).
fn push_len(out: &mut Vec<u8>, len: usize) {
    if len < 0x80 {
        out.push(len as u8);
        return;
    }
    let bytes = len.to_be_bytes();
    let skip = bytes.iter().take_while(|b| **b == 0).count();
    let sig = &bytes[skip..];
    out.push(0x80 | sig.len() as u8);
    out.extend_from_slice(sig);
}

/// Encodes one element from its identifier and contents.
pub(super) fn tlv(tag: u8, content: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(content.len() + 6);
    out.push(tag);
    push_len(&mut out, content.len());
    out.extend_from_slice(content);
    out
}

/// Encodes an INTEGER in minimal two's complement form.
pub(super) fn enc_int(v: i64) -> Vec<u8> {
    let bytes = v.to_be_bytes();
    let mut start = 0;
    while start < 7 {
        let b = bytes[start];
        let next_high = bytes[start + 1] & 0x80 != 0;
        if (b == 0x00 && !next_high) || (b == 0xff && next_high) {
            start += 1;
        } else {
            break;
        }
    }
    tlv(TAG_INTEGER, &bytes[start..])
}

/// Encodes a BOOLEAN the DER way (TRUE is 0xff).
pub(super) fn enc_bool(v: bool) -> Vec<u8> {
    tlv(TAG_BOOLEAN, &[if v { 0xff } else { 0x00 }])
}

/// Encodes an OCTET STRING.
pub(super) fn enc_octets(v: &[u8]) -> Vec<u8> {
    tlv(TAG_OCTET_STRING, v)
}

/// Encodes a `KerberosString` as a GeneralString holding UTF-8.
pub(super) fn enc_string(v: &str) -> Vec<u8> {
    tlv(TAG_GENERAL_STRING, v.as_bytes())
}

/// Encodes `KerberosFlags` as a 32-bit BIT STRING with no unused bits, the
/// form MIT and Windows both send.
pub(super) fn enc_flags(v: u32) -> Vec<u8> {
    let b = v.to_be_bytes();
    tlv(TAG_BIT_STRING, &[0, b[0], b[1], b[2], b[3]])
}

/// Encodes a SEQUENCE OF from already-encoded elements.
pub(super) fn enc_seq_of<I>(items: I) -> Vec<u8>
where
    I: IntoIterator<Item = Vec<u8>>,
{
    let mut content = Vec::new();
    for i in items {
        content.extend_from_slice(&i);
    }
    tlv(TAG_SEQUENCE, &content)
}

/// Builds a SEQUENCE of EXPLICIT context-tagged fields.
#[derive(Default)]
pub(super) struct SeqEncoder {
    content: Vec<u8>,
}

impl SeqEncoder {
    /// An empty SEQUENCE.
    pub fn new() -> Self {
        SeqEncoder::default()
    }

    /// Appends field `[n]` holding the already-encoded element `inner`.
    pub fn field(&mut self, n: u8, inner: &[u8]) -> &mut Self {
        self.content.push(ctx_tag(n));
        push_len(&mut self.content, inner.len());
        self.content.extend_from_slice(inner);
        self
    }

    /// Appends field `[n]` if `inner` is present.
    pub fn opt(&mut self, n: u8, inner: Option<Vec<u8>>) -> &mut Self {
        if let Some(i) = inner {
            self.field(n, &i);
        }
        self
    }

    /// Finishes as a universal SEQUENCE.
    pub fn finish(&self) -> Vec<u8> {
        tlv(TAG_SEQUENCE, &self.content)
    }

    /// Finishes as `[APPLICATION n] SEQUENCE`.
    pub fn finish_app(&self, n: u8) -> Vec<u8> {
        tlv(app_tag(n), &self.finish())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn int_tlv(bytes: &[u8]) -> Vec<u8> {
        tlv(TAG_INTEGER, bytes)
    }

    fn dec_int_bytes(b: &[u8]) -> Res<i64> {
        decode_all(b, "t", |t| dec_i64(t, "t"))
    }

    #[test]
    fn integers_minimal_encoding() {
        assert_eq!(enc_int(0), vec![0x02, 0x01, 0x00]);
        assert_eq!(enc_int(127), vec![0x02, 0x01, 0x7f]);
        assert_eq!(enc_int(128), vec![0x02, 0x02, 0x00, 0x80]);
        assert_eq!(enc_int(-1), vec![0x02, 0x01, 0xff]);
        assert_eq!(enc_int(-128), vec![0x02, 0x01, 0x80]);
        assert_eq!(enc_int(-129), vec![0x02, 0x02, 0xff, 0x7f]);
        assert_eq!(enc_int(-138), vec![0x02, 0x02, 0xff, 0x76]);
        assert_eq!(
            enc_int(0xffff_ffff),
            vec![0x02, 0x05, 0x00, 0xff, 0xff, 0xff, 0xff]
        );
        assert_eq!(enc_int(i64::MIN)[1], 8);
        for v in [
            0i64,
            1,
            -1,
            127,
            128,
            255,
            256,
            -128,
            -129,
            65535,
            i64::from(i32::MIN),
            i64::from(u32::MAX),
            i64::MAX,
            i64::MIN,
        ] {
            assert_eq!(dec_int_bytes(&enc_int(v)), Ok(v), "value {v}");
        }
    }

    #[test]
    fn integers_lenient_and_bounded() {
        // Non-minimal but valid BER.
        assert_eq!(dec_int_bytes(&int_tlv(&[0x00, 0x00, 0x05])), Ok(5));
        assert_eq!(dec_int_bytes(&int_tlv(&[0xff, 0xff, 0x80])), Ok(-128));
        // Too big for i64.
        assert!(dec_int_bytes(&int_tlv(&[0x01; 9])).is_err());
        assert!(dec_int_bytes(&int_tlv(&[])).is_err());
        // Nine bytes that reduce to eight are fine...
        assert_eq!(
            dec_int_bytes(&int_tlv(&[
                0, 0, 0x7f, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff
            ])),
            Ok(i64::MAX)
        );
        // ...but 2^64-1 does not fit.
        assert_eq!(
            dec_int_bytes(&int_tlv(&[
                0, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff
            ])),
            Err(MsgError::IntegerOutOfRange { what: "t" })
        );
    }

    #[test]
    fn uint32_accepts_negative_int32() {
        let t = enc_int(-1);
        assert_eq!(decode_all(&t, "n", |t| dec_u32(t, "n")), Ok(u32::MAX));
        let t = enc_int(i64::from(u32::MAX) + 1);
        assert!(decode_all(&t, "n", |t| dec_u32(t, "n")).is_err());
        let t = enc_int(i64::from(i32::MIN) - 1);
        assert!(decode_all(&t, "n", |t| dec_u32(t, "n")).is_err());
    }

    #[test]
    fn lengths() {
        // Indefinite.
        assert!(matches!(
            Reader::new(&[0x30, 0x80, 0x00, 0x00]).read_tlv("x"),
            Err(MsgError::BadLength { .. })
        ));
        // Five length bytes.
        assert!(matches!(
            Reader::new(&[0x04, 0x85, 0, 0, 0, 0, 1, 0]).read_tlv("x"),
            Err(MsgError::BadLength { .. })
        ));
        // Announces more than present.
        assert!(matches!(
            Reader::new(&[0x04, 0x84, 0xff, 0xff, 0xff, 0xff, 0]).read_tlv("x"),
            Err(MsgError::Truncated { .. })
        ));
        // Long form lengths round trip.
        for n in [0usize, 1, 127, 128, 255, 256, 65535, 65536] {
            let v = vec![7u8; n];
            let e = enc_octets(&v);
            assert_eq!(decode_all(&e, "x", |t| dec_octets(t, "x")), Ok(v));
        }
        // High tag number form.
        assert!(matches!(
            Reader::new(&[0x1f, 0x01, 0x00]).read_tlv("x"),
            Err(MsgError::UnsupportedTag { .. })
        ));
        assert!(Reader::new(&[]).read_tlv("x").is_err());
        assert!(Reader::new(&[0x04]).read_tlv("x").is_err());
        assert!(Reader::new(&[0x04, 0x82, 0x01]).read_tlv("x").is_err());
    }

    #[test]
    fn flags_bit_numbering_and_lengths() {
        assert_eq!(
            enc_flags(0x4081_0010),
            vec![3, 5, 0, 0x40, 0x81, 0x00, 0x10]
        );
        let d = |b: &[u8]| decode_all(&tlv(TAG_BIT_STRING, b), "f", |t| dec_flags(t, "f"));
        assert_eq!(d(&[0, 0x40, 0x81, 0, 0x10]), Ok(0x4081_0010));
        // Short: only 8 bits present.
        assert_eq!(d(&[0, 0x50]), Ok(0x5000_0000));
        // Short with unused bits that are set (cleared on decode).
        assert_eq!(d(&[4, 0x5f]), Ok(0x5000_0000));
        // Longer than 32 bits: extra ignored.
        assert_eq!(d(&[0, 1, 2, 3, 4, 5, 6]), Ok(0x0102_0304));
        // Empty bit string.
        assert_eq!(d(&[0]), Ok(0));
        assert!(d(&[]).is_err());
        assert!(d(&[1]).is_err());
        assert!(d(&[8, 0]).is_err());
    }

    #[test]
    fn seq_decoder_skips_unknown_and_refuses_garbage() {
        // SEQUENCE { [0] INT 1, [2] INT 9 (unknown), [3] INT 3, [7] INT 7 (unknown ext) }
        let mut s = SeqEncoder::new();
        s.field(0, &enc_int(1))
            .field(2, &enc_int(9))
            .field(3, &enc_int(3))
            .field(7, &enc_int(7));
        let bytes = s.finish();
        let r = decode_all(&bytes, "T", |t| {
            let mut d = SeqDecoder::new(t, "T")?;
            let a = d.req(0, "a", dec_i64)?;
            let b = d.opt(1, "b", dec_i64)?;
            let c = d.req(3, "c", dec_i64)?;
            d.finish()?;
            Ok((a, b, c))
        });
        assert_eq!(r, Ok((1, None, 3)));

        // Out of order.
        let mut s = SeqEncoder::new();
        s.field(3, &enc_int(3)).field(0, &enc_int(1));
        let bytes = s.finish();
        let r = decode_all(&bytes, "T", |t| {
            let mut d = SeqDecoder::new(t, "T")?;
            let _ = d.opt(0, "a", dec_i64)?;
            let _ = d.opt(3, "c", dec_i64)?;
            d.finish()
        });
        assert!(r.is_err());

        // Trailing non-context garbage.
        let mut content = SeqEncoder::new().field(0, &enc_int(1)).finish();
        content.truncate(content.len()); // keep
        let mut inner = content[2..].to_vec();
        inner.extend_from_slice(&enc_int(5));
        let bytes = tlv(TAG_SEQUENCE, &inner);
        let r = decode_all(&bytes, "T", |t| {
            let mut d = SeqDecoder::new(t, "T")?;
            let _ = d.req(0, "a", dec_i64)?;
            d.finish()
        });
        assert!(matches!(r, Err(MsgError::TrailingData { .. })));

        // Explicit tag holding two elements.
        let mut two = enc_int(1);
        two.extend_from_slice(&enc_int(2));
        let bytes = tlv(TAG_SEQUENCE, &tlv(ctx_tag(0), &two));
        let r = decode_all(&bytes, "T", |t| {
            let mut d = SeqDecoder::new(t, "T")?;
            d.req(0, "a", dec_i64)
        });
        assert!(r.is_err());

        // Missing required field names the field.
        let bytes = SeqEncoder::new().finish();
        let r = decode_all(&bytes, "T", |t| {
            let mut d = SeqDecoder::new(t, "T")?;
            d.req(0, "a", dec_i64)
        });
        assert_eq!(
            r,
            Err(MsgError::MissingField {
                ty: "T",
                field: "a",
                tag: 0
            })
        );
    }

    #[test]
    fn decode_all_refuses_trailing_bytes() {
        let mut b = enc_int(5);
        b.push(0);
        assert!(matches!(
            dec_int_bytes(&b),
            Err(MsgError::TrailingData { .. })
        ));
    }

    #[test]
    fn strings_must_be_utf8() {
        let b = tlv(TAG_GENERAL_STRING, &[0xff, 0xfe]);
        assert!(decode_all(&b, "s", |t| dec_string(t, "s")).is_err());
        let b = enc_string("gr\u{fc}n");
        assert_eq!(
            decode_all(&b, "s", |t| dec_string(t, "s")),
            Ok("gr\u{fc}n".to_string())
        );
    }
}
