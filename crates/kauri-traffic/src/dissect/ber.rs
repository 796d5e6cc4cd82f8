//! A forgiving BER reader for summaries: definite lengths only (LDAP and Kerberos use no
//! other), contents borrowed, and an element whose declared length runs past the bytes
//! at hand is returned with what there is and marked `cut`, so a message cut short by the
//! snap length still shows its leading fields.

/// Universal class.
pub const UNIVERSAL: u8 = 0;
/// Application class.
pub const APPLICATION: u8 = 1;
/// Context-specific class.
pub const CONTEXT: u8 = 2;

/// One element.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Tlv<'a> {
    /// Class bits (0 universal, 1 application, 2 context, 3 private).
    pub class: u8,
    /// Constructed rather than primitive.
    pub constructed: bool,
    /// Tag number.
    pub tag: u32,
    /// The content bytes at hand.
    pub content: &'a [u8],
    /// Whether the declared length runs past the bytes at hand.
    pub cut: bool,
}

impl Tlv<'_> {
    /// Whether the element has this class and tag number.
    pub fn is(&self, class: u8, tag: u32) -> bool {
        self.class == class && self.tag == tag
    }

    /// The content as a BER INTEGER or ENUMERATED.
    pub fn integer(&self) -> Option<i64> {
        integer(self.content)
    }
}

/// Why the next element could not be read at all.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BerError {
    /// The identifier or length octets are incomplete.
    Short,
    /// Indefinite or oversized length, or an oversized tag number.
    Invalid,
}

/// Reads the identifier and length octets: (class, constructed, tag, header size,
/// declared content length).
pub fn header(data: &[u8]) -> Result<(u8, bool, u32, usize, usize), BerError> {
    let first = *data.first().ok_or(BerError::Short)?;
    let class = first >> 6;
    let constructed = first & 0x20 != 0;
    let mut tag = u32::from(first & 0x1f);
    let mut pos = 1;
    if tag == 0x1f {
        tag = 0;
        loop {
            let b = *data.get(pos).ok_or(BerError::Short)?;
            pos += 1;
            if pos > 5 {
                return Err(BerError::Invalid);
            }
            tag = (tag << 7) | u32::from(b & 0x7f);
            if b & 0x80 == 0 {
                break;
            }
        }
    }
    let l = *data.get(pos).ok_or(BerError::Short)?;
    pos += 1;
    let len = if l < 0x80 {
        usize::from(l)
    } else {
        let n = usize::from(l & 0x7f);
        if n == 0 || n > 4 {
            return Err(BerError::Invalid);
        }
        let bytes = data.get(pos..pos + n).ok_or(BerError::Short)?;
        pos += n;
        bytes
            .iter()
            .fold(0usize, |acc, b| (acc << 8) | usize::from(*b))
    };
    Ok((class, constructed, tag, pos, len))
}

/// Reads the elements of a byte string one after another.
#[derive(Debug, Clone, Copy)]
pub struct Ber<'a> {
    data: &'a [u8],
}

impl<'a> Ber<'a> {
    /// Elements from these bytes.
    pub fn new(data: &'a [u8]) -> Ber<'a> {
        Ber { data }
    }

    /// Whether every byte has been read.
    pub fn is_empty(&self) -> bool {
        self.data.is_empty()
    }

    /// The next element, `None` at the end.
    pub fn next_tlv(&mut self) -> Option<Result<Tlv<'a>, BerError>> {
        if self.data.is_empty() {
            return None;
        }
        let (class, constructed, tag, hdr, len) = match header(self.data) {
            Ok(h) => h,
            Err(e) => {
                self.data = &[];
                return Some(Err(e));
            }
        };
        let rest = &self.data[hdr..];
        let (content, cut) = if len > rest.len() {
            (rest, true)
        } else {
            (&rest[..len], false)
        };
        self.data = &rest[content.len()..];
        Some(Ok(Tlv {
            class,
            constructed,
            tag,
            content,
            cut,
        }))
    }
}

/// A BER INTEGER or ENUMERATED (at most eight octets).
pub fn integer(content: &[u8]) -> Option<i64> {
    if content.is_empty() || content.len() > 8 {
        return None;
    }
    let mut v: i64 = if content[0] & 0x80 != 0 { -1 } else { 0 };
    for b in content {
        v = (v << 8) | i64::from(*b);
    }
    Some(v)
}

/// An OBJECT IDENTIFIER in dotted form.
pub fn oid(content: &[u8]) -> Option<String> {
    let mut arcs: Vec<u64> = Vec::new();
    let mut v: u64 = 0;
    for (i, b) in content.iter().enumerate() {
        if v > (u64::MAX >> 7) {
            return None;
        }
        v = (v << 7) | u64::from(b & 0x7f);
        if b & 0x80 == 0 {
            if arcs.is_empty() {
                let first = (v / 40).min(2);
                arcs.push(first);
                arcs.push(v - first * 40);
            } else {
                arcs.push(v);
            }
            v = 0;
        } else if i == content.len() - 1 {
            return None;
        }
    }
    if arcs.is_empty() {
        return None;
    }
    Some(
        arcs.iter()
            .map(u64::to_string)
            .collect::<Vec<_>>()
            .join("."),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn elements_and_values() {
        let mut r = Ber::new(&[0x02, 0x01, 0xff, 0x30, 0x05, 0x04, 0x01]);
        let a = r.next_tlv().unwrap().unwrap();
        assert_eq!(a.integer(), Some(-1));
        let b = r.next_tlv().unwrap().unwrap();
        assert!(b.cut && b.constructed && b.tag == 16);
        assert!(r.next_tlv().is_none());
        assert_eq!(
            oid(&[0x2b, 0x06, 0x01, 0x05, 0x05, 0x02]).as_deref(),
            Some("1.3.6.1.5.5.2")
        );
        assert_eq!(
            oid(&[0x2a, 0x86, 0x48, 0x86, 0xf7, 0x12, 0x01, 0x02, 0x02]).as_deref(),
            Some("1.2.840.113554.1.2.2")
        );
        assert_eq!(header(&[0x30, 0x80]), Err(BerError::Invalid));
        assert_eq!(header(&[0x30, 0x82, 1]), Err(BerError::Short));
    }
}
