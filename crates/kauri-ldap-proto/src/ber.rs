//! BER primitives restricted to what LDAP needs (RFC 4511 section 5.1): definite lengths
//! only, primitive strings only.
//!
//! [`Reader`] reads elements from a byte slice; every read checks bounds against the slice
//! and returns a [`BerError`] instead of panicking, and nothing is allocated from declared
//! lengths (contents are borrowed). [`Writer`] appends elements to one `Vec<u8>`, writing
//! minimal definite lengths by back-patching the length of constructed elements.

use std::fmt;

/// Why BER input could not be read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum BerError {
    /// The input ended before the element did.
    #[error("unexpected end of data")]
    Truncated,
    /// Indefinite lengths (`0x80`) are forbidden by LDAP.
    #[error("indefinite length is not allowed in LDAP")]
    IndefiniteLength,
    /// The long-form length uses more than four length octets.
    #[error("length field of {0} octets is too long")]
    LengthTooLong(usize),
    /// A multi-byte tag number does not fit in 28 bits or is not minimal.
    #[error("invalid or too large tag number")]
    BadTag,
    /// An element had another tag than the one required here.
    #[error("expected {expected}, found {found}")]
    UnexpectedTag {
        /// The tag required here.
        expected: Tag,
        /// The tag found.
        found: Tag,
    },
    /// An INTEGER or ENUMERATED was empty or longer than 8 significant octets.
    #[error("invalid INTEGER encoding")]
    BadInteger,
    /// A BOOLEAN whose content is not exactly one octet.
    #[error("invalid BOOLEAN encoding")]
    BadBoolean,
    /// A NULL with content.
    #[error("invalid NULL encoding")]
    BadNull,
    /// Bytes left over after the last expected element of a sequence or frame.
    #[error("{0} unexpected bytes after the last element")]
    TrailingData(usize),
}

/// The class bits of a tag.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Class {
    /// Universal (INTEGER, SEQUENCE, …).
    Universal,
    /// Application (LDAP operations).
    Application,
    /// Context-specific (`[n]` tags inside a structure).
    Context,
    /// Private (unused by LDAP; read so it can be refused with a clear error).
    Private,
}

/// A decoded identifier octet sequence: class, primitive/constructed and tag number.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Tag {
    /// Tag class.
    pub class: Class,
    /// Constructed (contains elements) rather than primitive.
    pub constructed: bool,
    /// Tag number.
    pub number: u32,
}

impl Tag {
    /// UNIVERSAL 1.
    pub const BOOLEAN: Tag = Tag::new(Class::Universal, false, 1);
    /// UNIVERSAL 2.
    pub const INTEGER: Tag = Tag::new(Class::Universal, false, 2);
    /// UNIVERSAL 4.
    pub const OCTET_STRING: Tag = Tag::new(Class::Universal, false, 4);
    /// UNIVERSAL 5.
    pub const NULL: Tag = Tag::new(Class::Universal, false, 5);
    /// UNIVERSAL 10.
    pub const ENUMERATED: Tag = Tag::new(Class::Universal, false, 10);
    /// UNIVERSAL 16, constructed.
    pub const SEQUENCE: Tag = Tag::new(Class::Universal, true, 16);
    /// UNIVERSAL 17, constructed.
    pub const SET: Tag = Tag::new(Class::Universal, true, 17);

    /// A tag from its parts.
    pub const fn new(class: Class, constructed: bool, number: u32) -> Tag {
        Tag {
            class,
            constructed,
            number,
        }
    }

    /// `[APPLICATION n]` constructed (most LDAP operations).
    pub const fn app(number: u32) -> Tag {
        Tag::new(Class::Application, true, number)
    }

    /// `[APPLICATION n]` primitive (DelRequest, UnbindRequest, AbandonRequest).
    pub const fn app_primitive(number: u32) -> Tag {
        Tag::new(Class::Application, false, number)
    }

    /// `[n]` constructed.
    pub const fn context(number: u32) -> Tag {
        Tag::new(Class::Context, true, number)
    }

    /// `[n]` primitive.
    pub const fn context_primitive(number: u32) -> Tag {
        Tag::new(Class::Context, false, number)
    }
}

impl fmt::Display for Tag {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let class = match self.class {
            Class::Universal => "UNIVERSAL ",
            Class::Application => "APPLICATION ",
            Class::Context => "",
            Class::Private => "PRIVATE ",
        };
        let form = if self.constructed {
            "constructed"
        } else {
            "primitive"
        };
        write!(f, "[{class}{}] {form}", self.number)
    }
}

/// Reads BER elements from a borrowed slice.
#[derive(Debug, Clone)]
pub struct Reader<'a> {
    data: &'a [u8],
}

/// Parses one identifier and length; returns (tag, header size, content size), with the
/// content size checked against the available bytes.
fn parse_header(data: &[u8]) -> Result<(Tag, usize, usize), BerError> {
    let (tag, mut pos) = parse_tag(data)?;
    let first = *data.get(pos).ok_or(BerError::Truncated)?;
    pos += 1;
    let len = if first < 0x80 {
        usize::from(first)
    } else if first == 0x80 {
        return Err(BerError::IndefiniteLength);
    } else {
        let n = usize::from(first & 0x7f);
        if n > 4 {
            return Err(BerError::LengthTooLong(n));
        }
        let bytes = data.get(pos..pos + n).ok_or(BerError::Truncated)?;
        pos += n;
        bytes
            .iter()
            .fold(0usize, |acc, b| (acc << 8) | usize::from(*b))
    };
    if data.len() - pos < len {
        return Err(BerError::Truncated);
    }
    Ok((tag, pos, len))
}

/// Parses identifier octets; returns the tag and the number of octets used.
fn parse_tag(data: &[u8]) -> Result<(Tag, usize), BerError> {
    let first = *data.first().ok_or(BerError::Truncated)?;
    let class = match first >> 6 {
        0 => Class::Universal,
        1 => Class::Application,
        2 => Class::Context,
        _ => Class::Private,
    };
    let constructed = first & 0x20 != 0;
    let low = u32::from(first & 0x1f);
    if low != 0x1f {
        return Ok((Tag::new(class, constructed, low), 1));
    }
    let mut number: u32 = 0;
    for i in 1..=4 {
        let b = *data.get(i).ok_or(BerError::Truncated)?;
        if i == 1 && b == 0x80 {
            return Err(BerError::BadTag);
        }
        number = (number << 7) | u32::from(b & 0x7f);
        if b & 0x80 == 0 {
            return Ok((Tag::new(class, constructed, number), i + 1));
        }
    }
    Err(BerError::BadTag)
}

/// Decodes INTEGER/ENUMERATED content (two's complement, big-endian) into an `i64`.
///
/// Redundant leading octets are tolerated; more than 8 significant octets are refused.
pub fn parse_integer(content: &[u8]) -> Result<i64, BerError> {
    let mut c = content;
    if c.is_empty() {
        return Err(BerError::BadInteger);
    }
    while let [a, b, ..] = c {
        let redundant = (*a == 0 && b & 0x80 == 0) || (*a == 0xff && b & 0x80 != 0);
        if !redundant {
            break;
        }
        c = c.get(1..).unwrap_or_default();
    }
    if c.len() > 8 {
        return Err(BerError::BadInteger);
    }
    let negative = c.first().is_some_and(|b| b & 0x80 != 0);
    let init: i64 = if negative { -1 } else { 0 };
    Ok(c.iter().fold(init, |acc, b| (acc << 8) | i64::from(*b)))
}

/// Decodes BOOLEAN content: one octet, any non-zero value is true.
pub fn parse_boolean(content: &[u8]) -> Result<bool, BerError> {
    match content {
        [b] => Ok(*b != 0),
        _ => Err(BerError::BadBoolean),
    }
}

impl<'a> Reader<'a> {
    /// A reader over `data` (the content of a constructed element, or a whole frame).
    pub fn new(data: &'a [u8]) -> Reader<'a> {
        Reader { data }
    }

    /// Whether every element has been read.
    pub fn is_empty(&self) -> bool {
        self.data.is_empty()
    }

    /// The bytes not read yet.
    pub fn remaining(&self) -> &'a [u8] {
        self.data
    }

    /// The tag of the next element, without consuming it (`None` at the end or when the
    /// identifier is unreadable; the next read then reports the error).
    pub fn peek_tag(&self) -> Option<Tag> {
        parse_tag(self.data).ok().map(|(t, _)| t)
    }

    /// Reads the next element of any tag; returns its tag and content.
    pub fn read_any(&mut self) -> Result<(Tag, &'a [u8]), BerError> {
        let (tag, hdr, len) = parse_header(self.data)?;
        let content = self.data.get(hdr..hdr + len).ok_or(BerError::Truncated)?;
        self.data = self.data.get(hdr + len..).unwrap_or_default();
        Ok((tag, content))
    }

    /// Reads the next element, which must have tag `tag`; returns its content.
    pub fn read_tagged(&mut self, tag: Tag) -> Result<&'a [u8], BerError> {
        let (found, content) = self.read_any()?;
        if found != tag {
            return Err(BerError::UnexpectedTag {
                expected: tag,
                found,
            });
        }
        Ok(content)
    }

    /// Reads the next element if it has tag `tag`.
    pub fn read_optional(&mut self, tag: Tag) -> Result<Option<&'a [u8]>, BerError> {
        if self.peek_tag() == Some(tag) {
            self.read_tagged(tag).map(Some)
        } else {
            Ok(None)
        }
    }

    /// Skips one element of any tag (for elements this reader does not understand).
    pub fn skip(&mut self) -> Result<(), BerError> {
        self.read_any().map(|_| ())
    }

    /// Reads a constructed element with tag `tag` and returns a reader over its content.
    pub fn constructed(&mut self, tag: Tag) -> Result<Reader<'a>, BerError> {
        self.read_tagged(tag).map(Reader::new)
    }

    /// Reads a SEQUENCE and returns a reader over its elements.
    pub fn sequence(&mut self) -> Result<Reader<'a>, BerError> {
        self.constructed(Tag::SEQUENCE)
    }

    /// Reads an element with tag `tag` holding an integer.
    pub fn integer_tagged(&mut self, tag: Tag) -> Result<i64, BerError> {
        parse_integer(self.read_tagged(tag)?)
    }

    /// Reads an INTEGER.
    pub fn integer(&mut self) -> Result<i64, BerError> {
        self.integer_tagged(Tag::INTEGER)
    }

    /// Reads an ENUMERATED.
    pub fn enumerated(&mut self) -> Result<i64, BerError> {
        self.integer_tagged(Tag::ENUMERATED)
    }

    /// Reads an element with tag `tag` holding a boolean.
    pub fn boolean_tagged(&mut self, tag: Tag) -> Result<bool, BerError> {
        parse_boolean(self.read_tagged(tag)?)
    }

    /// Reads a BOOLEAN.
    pub fn boolean(&mut self) -> Result<bool, BerError> {
        self.boolean_tagged(Tag::BOOLEAN)
    }

    /// Reads an OCTET STRING (primitive form only, as LDAP requires).
    pub fn octet_string(&mut self) -> Result<&'a [u8], BerError> {
        self.read_tagged(Tag::OCTET_STRING)
    }

    /// Reads a NULL.
    pub fn null(&mut self) -> Result<(), BerError> {
        if self.read_tagged(Tag::NULL)?.is_empty() {
            Ok(())
        } else {
            Err(BerError::BadNull)
        }
    }

    /// Checks that everything was read.
    pub fn finish(self) -> Result<(), BerError> {
        if self.data.is_empty() {
            Ok(())
        } else {
            Err(BerError::TrailingData(self.data.len()))
        }
    }
}

/// Position of a constructed element's length placeholder, returned by
/// [`Writer::start`] and consumed by [`Writer::end`].
#[derive(Debug)]
#[must_use = "a started element must be ended"]
pub struct Mark(usize);

/// Appends BER elements to a `Vec<u8>`, with minimal definite lengths.
#[derive(Debug)]
pub struct Writer<'a> {
    buf: &'a mut Vec<u8>,
}

/// Encodes a definite length into `out`; returns the number of octets used.
fn encode_length(len: usize, out: &mut [u8; 9]) -> usize {
    if len < 0x80 {
        out[0] = len as u8;
        return 1;
    }
    let bytes = len.to_be_bytes();
    let skip = bytes.iter().take_while(|b| **b == 0).count();
    let significant = bytes.get(skip..).unwrap_or_default();
    out[0] = 0x80 | significant.len() as u8;
    for (o, b) in out.iter_mut().skip(1).zip(significant) {
        *o = *b;
    }
    significant.len() + 1
}

impl<'a> Writer<'a> {
    /// A writer appending to `buf`.
    pub fn new(buf: &'a mut Vec<u8>) -> Writer<'a> {
        Writer { buf }
    }

    /// Writes identifier octets.
    pub fn tag(&mut self, tag: Tag) {
        let class: u8 = match tag.class {
            Class::Universal => 0,
            Class::Application => 0x40,
            Class::Context => 0x80,
            Class::Private => 0xc0,
        };
        let form = if tag.constructed { 0x20 } else { 0 };
        if tag.number < 0x1f {
            self.buf.push(class | form | tag.number as u8);
            return;
        }
        self.buf.push(class | form | 0x1f);
        let n = tag.number;
        let groups = (32 - n.leading_zeros()).div_ceil(7);
        for i in (0..groups).rev() {
            let more = if i == 0 { 0 } else { 0x80 };
            self.buf.push(((n >> (7 * i)) & 0x7f) as u8 | more);
        }
    }

    fn length(&mut self, len: usize) {
        let mut out = [0u8; 9];
        let n = encode_length(len, &mut out);
        self.buf.extend_from_slice(out.get(..n).unwrap_or_default());
    }

    /// Starts a constructed element; write its children, then call [`Writer::end`].
    pub fn start(&mut self, tag: Tag) -> Mark {
        self.tag(tag);
        let pos = self.buf.len();
        self.buf.push(0);
        Mark(pos)
    }

    /// Ends the element started with `mark`, patching in its length. Marks must be ended
    /// innermost first.
    pub fn end(&mut self, mark: Mark) {
        let pos = mark.0;
        let len = self.buf.len().saturating_sub(pos + 1);
        let mut out = [0u8; 9];
        let n = encode_length(len, &mut out);
        if n == 1 {
            if let Some(b) = self.buf.get_mut(pos) {
                *b = out[0];
            }
        } else if pos < self.buf.len() {
            let header = out.get(..n).unwrap_or_default();
            self.buf.splice(pos..pos + 1, header.iter().copied());
        }
    }

    /// Writes a constructed element whose children `f` writes.
    pub fn constructed(&mut self, tag: Tag, f: impl FnOnce(&mut Writer<'_>)) {
        let mark = self.start(tag);
        f(self);
        self.end(mark);
    }

    /// Writes a SEQUENCE whose children `f` writes.
    pub fn sequence(&mut self, f: impl FnOnce(&mut Writer<'_>)) {
        self.constructed(Tag::SEQUENCE, f);
    }

    /// Writes a primitive element with the given content.
    pub fn primitive(&mut self, tag: Tag, content: &[u8]) {
        self.tag(tag);
        self.length(content.len());
        self.buf.extend_from_slice(content);
    }

    /// Writes an OCTET STRING.
    pub fn octet_string(&mut self, content: &[u8]) {
        self.primitive(Tag::OCTET_STRING, content);
    }

    /// Writes an integer in minimal two's complement under tag `tag`.
    pub fn integer_tagged(&mut self, tag: Tag, value: i64) {
        let bytes = value.to_be_bytes();
        let mut c: &[u8] = &bytes;
        while let [a, b, ..] = c {
            let redundant = (*a == 0 && b & 0x80 == 0) || (*a == 0xff && b & 0x80 != 0);
            if !redundant {
                break;
            }
            c = c.get(1..).unwrap_or_default();
        }
        self.primitive(tag, c);
    }

    /// Writes an INTEGER.
    pub fn integer(&mut self, value: i64) {
        self.integer_tagged(Tag::INTEGER, value);
    }

    /// Writes an ENUMERATED.
    pub fn enumerated(&mut self, value: i64) {
        self.integer_tagged(Tag::ENUMERATED, value);
    }

    /// Writes a boolean under tag `tag` (TRUE as `0xff`).
    pub fn boolean_tagged(&mut self, tag: Tag, value: bool) {
        self.primitive(tag, &[if value { 0xff } else { 0 }]);
    }

    /// Writes a BOOLEAN.
    pub fn boolean(&mut self, value: bool) {
        self.boolean_tagged(Tag::BOOLEAN, value);
    }

    /// Appends already-encoded bytes.
    pub fn raw(&mut self, bytes: &[u8]) {
        self.buf.extend_from_slice(bytes);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn enc(f: impl FnOnce(&mut Writer<'_>)) -> Vec<u8> {
        let mut v = Vec::new();
        f(&mut Writer::new(&mut v));
        v
    }

    #[test]
    fn integers() {
        for (n, bytes) in [
            (0i64, vec![0x02, 1, 0]),
            (127, vec![0x02, 1, 0x7f]),
            (128, vec![0x02, 2, 0, 0x80]),
            (256, vec![0x02, 2, 1, 0]),
            (-1, vec![0x02, 1, 0xff]),
            (-128, vec![0x02, 1, 0x80]),
            (-129, vec![0x02, 2, 0xff, 0x7f]),
            (
                i64::MAX,
                vec![0x02, 8, 0x7f, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff],
            ),
            (i64::MIN, vec![0x02, 8, 0x80, 0, 0, 0, 0, 0, 0, 0]),
        ] {
            assert_eq!(enc(|w| w.integer(n)), bytes, "{n}");
            assert_eq!(Reader::new(&bytes).integer(), Ok(n));
        }
        assert_eq!(parse_integer(&[0, 0, 5]), Ok(5));
        assert_eq!(parse_integer(&[0xff, 0xff]), Ok(-1));
        assert_eq!(parse_integer(&[]), Err(BerError::BadInteger));
        assert_eq!(parse_integer(&[1; 9]), Err(BerError::BadInteger));
        assert_eq!(
            parse_integer(&[0, 0x80, 0, 0, 0, 0, 0, 0, 0]),
            Err(BerError::BadInteger)
        );
    }

    #[test]
    fn lengths() {
        for len in [0usize, 1, 127, 128, 255, 256, 65535, 65536, 1 << 20] {
            let content = vec![7u8; len];
            let v = enc(|w| w.octet_string(&content));
            let mut r = Reader::new(&v);
            assert_eq!(r.octet_string().unwrap(), &content[..]);
            assert!(r.is_empty());
            let v2 = enc(|w| w.sequence(|w| w.raw(&content)));
            assert_eq!(v, {
                let mut x = v2.clone();
                x[0] = 0x04;
                x
            });
        }
        assert_eq!(enc(|w| w.octet_string(&[1; 128]))[..3], [0x04, 0x81, 0x80]);
        assert_eq!(enc(|w| w.octet_string(&[1; 256]))[..4], [0x04, 0x82, 1, 0]);
    }

    #[test]
    fn bad_headers() {
        assert_eq!(
            Reader::new(&[0x30, 0x80, 0, 0]).skip(),
            Err(BerError::IndefiniteLength)
        );
        assert_eq!(
            Reader::new(&[0x04, 0x85, 0, 0, 0, 0, 1, 0]).skip(),
            Err(BerError::LengthTooLong(5))
        );
        assert_eq!(
            Reader::new(&[0x04, 0x05, 1]).skip(),
            Err(BerError::Truncated)
        );
        assert_eq!(
            Reader::new(&[0x04, 0x84, 0xff, 0xff, 0xff, 0xff]).skip(),
            Err(BerError::Truncated)
        );
        assert_eq!(Reader::new(&[0x04]).skip(), Err(BerError::Truncated));
        assert_eq!(Reader::new(&[]).skip(), Err(BerError::Truncated));
        assert_eq!(
            Reader::new(&[0x1f, 0x80, 1, 0]).skip(),
            Err(BerError::BadTag)
        );
        assert_eq!(
            Reader::new(&[0x1f, 0xff, 0xff, 0xff, 0xff, 1, 0]).skip(),
            Err(BerError::BadTag)
        );
        assert_eq!(
            Reader::new(&[0x01, 0x02, 1, 1]).boolean(),
            Err(BerError::BadBoolean)
        );
        assert_eq!(Reader::new(&[0x01, 0x01, 7]).boolean(), Ok(true));
        assert_eq!(Reader::new(&[0x01, 0x01, 0]).boolean(), Ok(false));
        assert!(matches!(
            Reader::new(&[0x02, 1, 0]).octet_string(),
            Err(BerError::UnexpectedTag { .. })
        ));
        assert_eq!(Reader::new(&[0x05, 0]).null(), Ok(()));
        assert_eq!(Reader::new(&[0x05, 1, 0]).null(), Err(BerError::BadNull));
    }

    #[test]
    fn multibyte_tags() {
        for n in [30u32, 31, 127, 128, 1000, 0x0fff_ffff] {
            let tag = Tag::context_primitive(n);
            let v = enc(|w| w.primitive(tag, b"x"));
            let mut r = Reader::new(&v);
            assert_eq!(r.peek_tag(), Some(tag));
            assert_eq!(r.read_tagged(tag).unwrap(), b"x");
            r.finish().unwrap();
        }
        assert_eq!(
            enc(|w| w.primitive(Tag::context_primitive(31), b""))[..2],
            [0x9f, 0x1f]
        );
        assert_eq!(
            enc(|w| w.primitive(Tag::app(200), b""))[..3],
            [0x7f, 0x81, 0x48]
        );
    }

    #[test]
    fn nested_and_trailing() {
        let v = enc(|w| {
            w.sequence(|w| {
                w.integer(5);
                w.constructed(Tag::context(3), |w| w.octet_string(&[0; 300]));
                w.boolean(true);
            })
        });
        let mut r = Reader::new(&v);
        let mut s = r.sequence().unwrap();
        assert_eq!(s.integer().unwrap(), 5);
        let mut c = s.constructed(Tag::context(3)).unwrap();
        assert_eq!(c.octet_string().unwrap().len(), 300);
        c.finish().unwrap();
        assert!(s.boolean().unwrap());
        s.finish().unwrap();
        r.finish().unwrap();
        let mut extra = v.clone();
        extra.push(0);
        let mut r = Reader::new(&extra);
        r.skip().unwrap();
        assert_eq!(r.finish(), Err(BerError::TrailingData(1)));
    }
}
