//! Distinguished names (RFC 4514).
//!
//! A [`Dn`] is a sequence of [`Rdn`]s, leaf first (the order of the string
//! form). Each RDN holds one or more attribute value assertions ([`Ava`]s).
//! Parsing is liberal in what it accepts (RFC 4514 section 3): whitespace
//! around separators, `;` as an RDN separator, `OID.` prefixed types, quoted
//! values and `#hex` BER values. Formatting produces the strict RFC 4514
//! form.
//!
//! Every DN and RDN carries a normalized string, computed once, that is used
//! for equality and hashing: AVAs within an RDN are sorted by lowercased
//! attribute type (then value), each written `type=value` with the type
//! lowercased and the value case-folded with [`casefold`] and escaped, AVAs
//! joined by `+`, RDNs joined by `,`. Because values are escaped the form is
//! unambiguous. Names compare case-insensitively, as in Active Directory.

use std::fmt;
use std::hash::{Hash, Hasher};
use std::str::FromStr;

use crate::syntax::{casefold, decode_hex, is_descriptor, is_numeric_oid};

/// One `type=value` pair of an RDN, as written by the client.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Ava {
    /// Attribute type as given (a descriptor such as `cn` or a numeric OID).
    pub attr: String,
    /// The value with all escaping removed.
    pub value: String,
}

/// A relative distinguished name: the naming attribute(s) of one entry.
#[derive(Debug, Clone)]
pub struct Rdn {
    avas: Vec<Ava>,
    norm: String,
}

/// A distinguished name: the full path of an entry, leaf RDN first.
#[derive(Debug, Clone)]
pub struct Dn {
    rdns: Vec<Rdn>,
    norm: String,
}

/// Why a DN or RDN could not be parsed or built.
#[derive(Debug, thiserror::Error, Clone, PartialEq, Eq)]
pub enum DnError {
    /// The parser needed a particular token at this byte offset.
    #[error("invalid DN syntax at byte {pos}: expected {expected}")]
    Expected {
        /// Byte offset in the input.
        pos: usize,
        /// What was expected there.
        expected: &'static str,
    },
    /// A backslash not followed by a special character or two hex digits.
    #[error("invalid DN syntax at byte {pos}: bad escape sequence")]
    BadEscape {
        /// Byte offset of the backslash.
        pos: usize,
    },
    /// Hex escapes in a value produced bytes that are not UTF-8.
    #[error("invalid DN value at byte {pos}: escaped bytes are not valid UTF-8")]
    InvalidUtf8 {
        /// Byte offset where the value starts.
        pos: usize,
    },
    /// A quoted value without its closing quote.
    #[error("invalid DN syntax at byte {pos}: unterminated quoted value")]
    UnterminatedQuote {
        /// Byte offset of the opening quote.
        pos: usize,
    },
    /// An attribute type that is neither a descriptor nor a numeric OID.
    #[error("invalid attribute type {0:?}: expected a descriptor or numeric OID")]
    InvalidAttributeType(String),
    /// An RDN built from no AVAs.
    #[error("an RDN needs at least one attribute value assertion")]
    EmptyRdn,
    /// A single RDN was required but the input names several.
    #[error("invalid RDN at byte {pos}: more than one RDN given")]
    MultipleRdns {
        /// Byte offset of the RDN separator.
        pos: usize,
    },
    /// More RDNs than [`MAX_DN_RDNS`]: no directory tree is that deep, and resolving such a
    /// name must not cost more than a real one.
    #[error("the name has too many parts: more than {MAX_DN_RDNS} RDNs")]
    TooManyRdns,
    /// Longer than [`MAX_DN_LEN`] bytes of text.
    #[error("the name is too long: {0} bytes where at most {MAX_DN_LEN} are accepted")]
    TooLong(usize),
}

/// The most RDNs a DN may have. Active Directory limits each RDN to 255 characters and a
/// request to its MaxReceiveBuffer; a depth cap keeps every name's handling (parsing,
/// resolving through the hierarchy, building parents) bounded by a small constant.
pub const MAX_DN_RDNS: usize = 255;

/// The longest DN text accepted, in bytes (255 RDNs of AD's longest RDN fit, escaped).
pub const MAX_DN_LEN: usize = 256 << 10;

/// Strips the legacy `OID.` prefix from an attribute type.
fn strip_oid_prefix(t: &str) -> &str {
    match t.get(..4) {
        Some(p) if p.eq_ignore_ascii_case("oid.") => t.get(4..).unwrap_or(t),
        _ => t,
    }
}

/// Validates an attribute type and returns it without any `OID.` prefix.
fn check_attr(attr: &str) -> Result<&str, DnError> {
    let t = strip_oid_prefix(attr);
    if is_descriptor(t) || is_numeric_oid(t) {
        Ok(t)
    } else {
        Err(DnError::InvalidAttributeType(attr.to_owned()))
    }
}

/// Writes `v` escaped per RFC 4514 section 2.4. Leading or trailing ASCII
/// whitespace other than space is hex-escaped too, since the parser treats
/// it as insignificant.
fn escape_value(v: &str, out: &mut String) {
    for (i, c) in v.char_indices() {
        let first = i == 0;
        let last = i + c.len_utf8() == v.len();
        match c {
            ',' | '+' | '"' | '\\' | '<' | '>' | ';' | '=' => {
                out.push('\\');
                out.push(c);
            }
            '\0' => out.push_str("\\00"),
            ' ' if first || last => out.push_str("\\ "),
            '#' if first => out.push_str("\\#"),
            c if c.is_control() => {
                // Control characters (AD's tombstone names hold a line feed) as \XX.
                let mut buf = [0u8; 4];
                for b in c.encode_utf8(&mut buf).bytes() {
                    out.push_str(&format!("\\{b:02X}"));
                }
            }
            c if (first || last) && c.is_ascii_whitespace() => {
                out.push_str(&format!("\\{:02x}", u32::from(c)));
            }
            c => out.push(c),
        }
    }
}

impl Ava {
    /// The AVA's contribution to the normalized RDN string.
    fn norm_parts(&self) -> (String, String) {
        let attr = strip_oid_prefix(&self.attr).to_ascii_lowercase();
        let mut value = String::new();
        escape_value(&casefold(&self.value), &mut value);
        (attr, value)
    }
}

impl Rdn {
    /// Builds an RDN from already-validated AVAs.
    fn build(avas: Vec<Ava>) -> Rdn {
        if let [one] = avas.as_slice() {
            let attr = strip_oid_prefix(&one.attr);
            let value = crate::syntax::casefold_cow(&one.value);
            let mut norm = String::with_capacity(attr.len() + 1 + value.len() + 4);
            norm.extend(attr.chars().map(|c| c.to_ascii_lowercase()));
            norm.push('=');
            escape_value(&value, &mut norm);
            return Rdn { avas, norm };
        }
        let mut parts: Vec<(String, String)> = avas.iter().map(Ava::norm_parts).collect();
        parts.sort();
        let mut norm = String::new();
        for (i, (a, v)) in parts.iter().enumerate() {
            if i > 0 {
                norm.push('+');
            }
            norm.push_str(a);
            norm.push('=');
            norm.push_str(v);
        }
        Rdn { avas, norm }
    }

    /// Parses the string form of a single RDN such as `cn=John+uid=jd`.
    pub fn parse(s: &str) -> Result<Rdn, DnError> {
        let mut p = Parser::new(s);
        let rdn = p.rdn()?;
        match p.peek() {
            None => Ok(rdn),
            Some(b',' | b';') => Err(DnError::MultipleRdns { pos: p.i }),
            Some(_) => Err(DnError::Expected {
                pos: p.i,
                expected: "'+' or end of RDN",
            }),
        }
    }

    /// Builds a single-valued RDN from an attribute type and an unescaped
    /// value, validating the type.
    pub fn new(attr: &str, value: &str) -> Result<Rdn, DnError> {
        let attr = check_attr(attr)?;
        Ok(Rdn::build(vec![Ava {
            attr: attr.to_owned(),
            value: value.to_owned(),
        }]))
    }

    /// Builds a (possibly multi-valued) RDN from AVAs, validating each type;
    /// needed when constructing names programmatically.
    pub fn from_avas(avas: Vec<Ava>) -> Result<Rdn, DnError> {
        if avas.is_empty() {
            return Err(DnError::EmptyRdn);
        }
        let avas = avas
            .into_iter()
            .map(|a| {
                let attr = check_attr(&a.attr)?.to_owned();
                Ok(Ava {
                    attr,
                    value: a.value,
                })
            })
            .collect::<Result<Vec<_>, DnError>>()?;
        Ok(Rdn::build(avas))
    }

    /// The AVAs in the order given.
    pub fn avas(&self) -> &[Ava] {
        &self.avas
    }

    /// The normalized form used for comparison and index keys.
    pub fn norm(&self) -> &str {
        &self.norm
    }
}

impl PartialEq for Rdn {
    fn eq(&self, other: &Rdn) -> bool {
        self.norm == other.norm
    }
}

impl Eq for Rdn {}

impl Hash for Rdn {
    fn hash<H: Hasher>(&self, state: &mut H) {
        self.norm.hash(state);
    }
}

impl fmt::Display for Rdn {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut s = String::new();
        for (i, ava) in self.avas.iter().enumerate() {
            if i > 0 {
                s.push('+');
            }
            s.push_str(&ava.attr);
            s.push('=');
            escape_value(&ava.value, &mut s);
        }
        f.write_str(&s)
    }
}

impl FromStr for Rdn {
    type Err = DnError;
    fn from_str(s: &str) -> Result<Rdn, DnError> {
        Rdn::parse(s)
    }
}

impl Dn {
    /// Parses an RFC 4514 string; an empty or whitespace-only string is the
    /// root DN.
    pub fn parse(s: &str) -> Result<Dn, DnError> {
        if s.len() > MAX_DN_LEN {
            return Err(DnError::TooLong(s.len()));
        }
        let mut p = Parser::new(s);
        p.skip_ws();
        if p.peek().is_none() {
            return Ok(Dn::root());
        }
        let mut rdns = Vec::new();
        loop {
            if rdns.len() == MAX_DN_RDNS {
                return Err(DnError::TooManyRdns);
            }
            rdns.push(p.rdn()?);
            match p.peek() {
                None => break,
                Some(b',' | b';') => p.i += 1,
                Some(_) => {
                    return Err(DnError::Expected {
                        pos: p.i,
                        expected: "',', '+' or end of DN",
                    })
                }
            }
        }
        Ok(Dn::from_rdns(rdns))
    }

    /// The empty DN naming the root DSE.
    pub fn root() -> Dn {
        Dn {
            rdns: Vec::new(),
            norm: String::new(),
        }
    }

    /// Whether this is the empty (root) DN.
    pub fn is_root(&self) -> bool {
        self.rdns.is_empty()
    }

    /// Assembles a DN from RDNs, leaf first.
    pub fn from_rdns(rdns: Vec<Rdn>) -> Dn {
        let mut norm = String::new();
        for (i, r) in rdns.iter().enumerate() {
            if i > 0 {
                norm.push(',');
            }
            norm.push_str(&r.norm);
        }
        Dn { rdns, norm }
    }

    /// The RDNs, leaf first.
    pub fn rdns(&self) -> &[Rdn] {
        &self.rdns
    }

    /// The leaf RDN, or `None` for the root DN.
    pub fn rdn(&self) -> Option<&Rdn> {
        self.rdns.first()
    }

    /// Number of RDNs (the depth below the root).
    pub fn len(&self) -> usize {
        self.rdns.len()
    }

    /// Same as [`Dn::is_root`]; provided alongside [`Dn::len`].
    pub fn is_empty(&self) -> bool {
        self.rdns.is_empty()
    }

    /// The DN of the parent entry; `None` for the root DN.
    pub fn parent(&self) -> Option<Dn> {
        let rest = self.rdns.get(1..)?;
        Some(Dn::from_rdns(rest.to_vec()))
    }

    /// The normalized string, used for equality, hashing and index keys.
    pub fn norm(&self) -> &str {
        &self.norm
    }

    /// The DN of a child entry named `rdn` below this one.
    pub fn child(&self, rdn: Rdn) -> Dn {
        let mut rdns = Vec::with_capacity(self.rdns.len() + 1);
        rdns.push(rdn);
        rdns.extend(self.rdns.iter().cloned());
        Dn::from_rdns(rdns)
    }

    /// Whether `other` lies strictly below this DN; the root DN is an
    /// ancestor of every non-root DN.
    pub fn is_ancestor_of(&self, other: &Dn) -> bool {
        self.rdns.len() < other.rdns.len()
            && self
                .rdns
                .iter()
                .rev()
                .zip(other.rdns.iter().rev())
                .all(|(a, b)| a == b)
    }

    /// Whether this DN lies strictly below `other`.
    pub fn is_descendant_of(&self, other: &Dn) -> bool {
        other.is_ancestor_of(self)
    }

    /// Whether `other` is an immediate child of this DN.
    pub fn is_parent_of(&self, other: &Dn) -> bool {
        other.rdns.len() == self.rdns.len() + 1 && self.is_ancestor_of(other)
    }

    /// The DN after renaming the leaf to `rdn` (same parent). For the root
    /// DN, which has no leaf, this is the single-RDN DN `rdn`.
    pub fn with_rdn(&self, rdn: Rdn) -> Dn {
        let mut rdns = Vec::with_capacity(self.rdns.len().max(1));
        rdns.push(rdn);
        rdns.extend(self.rdns.iter().skip(1).cloned());
        Dn::from_rdns(rdns)
    }

    /// Moves a name between subtrees: if this DN is `old_base` or below it,
    /// returns the same relative path below `new_base`; otherwise `None`.
    pub fn rebase(&self, old_base: &Dn, new_base: &Dn) -> Option<Dn> {
        if self != old_base && !old_base.is_ancestor_of(self) {
            return None;
        }
        let keep = self.rdns.len().checked_sub(old_base.rdns.len())?;
        let mut rdns = self.rdns.get(..keep)?.to_vec();
        rdns.extend(new_base.rdns.iter().cloned());
        Some(Dn::from_rdns(rdns))
    }
}

impl PartialEq for Dn {
    fn eq(&self, other: &Dn) -> bool {
        self.norm == other.norm
    }
}

impl Eq for Dn {}

impl Hash for Dn {
    fn hash<H: Hasher>(&self, state: &mut H) {
        self.norm.hash(state);
    }
}

impl fmt::Display for Dn {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, r) in self.rdns.iter().enumerate() {
            if i > 0 {
                f.write_str(",")?;
            }
            fmt::Display::fmt(r, f)?;
        }
        Ok(())
    }
}

impl FromStr for Dn {
    type Err = DnError;
    fn from_str(s: &str) -> Result<Dn, DnError> {
        Dn::parse(s)
    }
}

fn is_hex(b: u8) -> bool {
    b.is_ascii_hexdigit()
}

fn hex_digit(b: u8) -> u8 {
    match b {
        b'0'..=b'9' => b - b'0',
        b'a'..=b'f' => b - b'a' + 10,
        b'A'..=b'F' => b - b'A' + 10,
        _ => 0,
    }
}

/// Decodes a BER-encoded string type (OCTET STRING, UTF8String,
/// PrintableString, IA5String) whose content is UTF-8.
fn ber_string(b: &[u8]) -> Option<String> {
    let (&tag, rest) = b.split_first()?;
    if !matches!(tag, 0x04 | 0x0c | 0x13 | 0x16) {
        return None;
    }
    let (&l0, rest) = rest.split_first()?;
    let (len, content) = if l0 < 0x80 {
        (usize::from(l0), rest)
    } else {
        let n = usize::from(l0 & 0x7f);
        if n == 0 || n > 4 {
            return None;
        }
        let len = rest
            .get(..n)?
            .iter()
            .fold(0usize, |a, &x| a << 8 | usize::from(x));
        (len, rest.get(n..)?)
    };
    if content.len() != len {
        return None;
    }
    String::from_utf8(content.to_vec()).ok()
}

/// Single-pass DN parser over the input bytes.
struct Parser<'a> {
    s: &'a [u8],
    i: usize,
}

impl<'a> Parser<'a> {
    fn new(s: &'a str) -> Parser<'a> {
        Parser {
            s: s.as_bytes(),
            i: 0,
        }
    }

    fn peek(&self) -> Option<u8> {
        self.s.get(self.i).copied()
    }

    fn skip_ws(&mut self) {
        while self.peek().is_some_and(|c| c.is_ascii_whitespace()) {
            self.i += 1;
        }
    }

    /// Parses one RDN and the whitespace after it.
    fn rdn(&mut self) -> Result<Rdn, DnError> {
        let mut avas = Vec::new();
        loop {
            avas.push(self.ava()?);
            self.skip_ws();
            if self.peek() == Some(b'+') {
                self.i += 1;
            } else {
                break;
            }
        }
        Ok(Rdn::build(avas))
    }

    fn ava(&mut self) -> Result<Ava, DnError> {
        self.skip_ws();
        let attr = self.attr_type()?;
        self.skip_ws();
        if self.peek() != Some(b'=') {
            return Err(DnError::Expected {
                pos: self.i,
                expected: "'='",
            });
        }
        self.i += 1;
        self.skip_ws();
        let value = match self.peek() {
            Some(b'#') => self.hex_value()?,
            Some(b'"') => self.quoted_value()?,
            _ => self.string_value()?,
        };
        Ok(Ava { attr, value })
    }

    fn attr_type(&mut self) -> Result<String, DnError> {
        let start = self.i;
        while self
            .peek()
            .is_some_and(|c| c.is_ascii_alphanumeric() || c == b'-' || c == b'.')
        {
            self.i += 1;
        }
        let raw = self.s.get(start..self.i).unwrap_or_default();
        if raw.is_empty() {
            return Err(DnError::Expected {
                pos: start,
                expected: "an attribute type",
            });
        }
        let text = String::from_utf8_lossy(raw);
        Ok(check_attr(&text)?.to_owned())
    }

    /// Handles a backslash escape, appending the byte it denotes.
    fn escape(&mut self, out: &mut Vec<u8>) -> Result<(), DnError> {
        let pos = self.i;
        let a = self.s.get(pos + 1).copied();
        let b = self.s.get(pos + 2).copied();
        match (a, b) {
            (Some(h), Some(l)) if is_hex(h) && is_hex(l) => {
                out.push(hex_digit(h) << 4 | hex_digit(l));
                self.i += 3;
            }
            (Some(c), _) if b" \"#+,;<=>\\".contains(&c) => {
                out.push(c);
                self.i += 2;
            }
            _ => return Err(DnError::BadEscape { pos }),
        }
        Ok(())
    }

    fn string_value(&mut self) -> Result<String, DnError> {
        let start = self.i;
        let mut out = Vec::new();
        let mut keep = 0;
        while let Some(c) = self.peek() {
            match c {
                b',' | b'+' | b';' => break,
                b'\\' => {
                    self.escape(&mut out)?;
                    keep = out.len();
                }
                c => {
                    out.push(c);
                    self.i += 1;
                    if !c.is_ascii_whitespace() {
                        keep = out.len();
                    }
                }
            }
        }
        out.truncate(keep);
        String::from_utf8(out).map_err(|_| DnError::InvalidUtf8 { pos: start })
    }

    fn quoted_value(&mut self) -> Result<String, DnError> {
        let start = self.i;
        self.i += 1;
        let mut out = Vec::new();
        loop {
            match self.peek() {
                None => return Err(DnError::UnterminatedQuote { pos: start }),
                Some(b'"') => {
                    self.i += 1;
                    break;
                }
                Some(b'\\') => self.escape(&mut out)?,
                Some(c) => {
                    out.push(c);
                    self.i += 1;
                }
            }
        }
        String::from_utf8(out).map_err(|_| DnError::InvalidUtf8 { pos: start })
    }

    fn hex_value(&mut self) -> Result<String, DnError> {
        let start = self.i;
        self.i += 1;
        while self.peek().is_some_and(is_hex) {
            self.i += 1;
        }
        let hex = self.s.get(start + 1..self.i).unwrap_or_default();
        let bytes = match decode_hex(hex) {
            Some(b) if !b.is_empty() => b,
            _ => {
                return Err(DnError::Expected {
                    pos: self.i,
                    expected: "hex pairs after '#'",
                })
            }
        };
        if let Some(v) = ber_string(&bytes) {
            return Ok(v);
        }
        let literal = self.s.get(start..self.i).unwrap_or_default();
        Ok(String::from_utf8_lossy(literal).into_owned())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn dn(s: &str) -> Dn {
        Dn::parse(s).unwrap()
    }

    fn vals(d: &Dn) -> Vec<(String, String)> {
        d.rdns()
            .iter()
            .flat_map(|r| r.avas().iter().map(|a| (a.attr.clone(), a.value.clone())))
            .collect()
    }

    #[test]
    fn root() {
        assert!(dn("").is_root());
        assert!(dn("   ").is_root());
        assert_eq!(dn(""), Dn::root());
        assert_eq!(Dn::root().to_string(), "");
        assert_eq!(Dn::root().norm(), "");
        assert!(Dn::root().parent().is_none());
        assert!(Dn::root().rdn().is_none());
        assert!(Dn::root().is_empty());
    }

    #[test]
    fn simple_and_norm() {
        let d = dn("CN=John Smith,OU=People, DC=Example ,DC=COM");
        assert_eq!(d.len(), 4);
        assert_eq!(d.norm(), "cn=john smith,ou=people,dc=example,dc=com");
        assert_eq!(d.to_string(), "CN=John Smith,OU=People,DC=Example,DC=COM");
        assert_eq!(d, dn("cn=john   smith,ou=people,dc=example,dc=com"));
        assert_eq!(d.rdn().unwrap().avas()[0].attr, "CN");
        assert_eq!(
            vals(&dn(" cn = a ; ou = b ")),
            [("cn".into(), "a".into()), ("ou".into(), "b".into())]
        );
    }

    #[test]
    fn case_insensitive_hash() {
        use std::collections::HashSet;
        let mut set = HashSet::new();
        set.insert(dn("CN=Ärger,DC=X"));
        assert!(set.contains(&dn("cn=ärger,dc=x")));
        assert!(set.contains(&"cn=ÄRGER , dc=x".parse::<Dn>().unwrap()));
    }

    #[test]
    fn escaping() {
        let d = dn(r"cn=Smith\, John,dc=com");
        assert_eq!(d.rdn().unwrap().avas()[0].value, "Smith, John");
        assert_eq!(d.to_string(), r"cn=Smith\, John,dc=com");
        assert_eq!(d.norm(), r"cn=smith\, john,dc=com");
        assert_ne!(d, dn("cn=Smith,cn=John,dc=com"));
        let d = dn(r"cn=\2C\2b\22\5C\3C\3E\3B\3d");
        assert_eq!(d.rdn().unwrap().avas()[0].value, ",+\"\\<>;=");
        assert_eq!(d.to_string(), r#"cn=\,\+\"\\\<\>\;\="#);
        let d = dn(r"cn=\ lead\#x trail\ ");
        assert_eq!(d.rdn().unwrap().avas()[0].value, " lead#x trail ");
        assert_eq!(d.to_string(), r"cn=\ lead#x trail\ ");
        let d = dn(r"cn=\#hash");
        assert_eq!(d.rdn().unwrap().avas()[0].value, "#hash");
        assert_eq!(d.to_string(), r"cn=\#hash");
        let d = dn(r"cn=\C3\A4rger");
        assert_eq!(d.rdn().unwrap().avas()[0].value, "ärger");
        assert_eq!(d.to_string(), "cn=ärger");
        let d = dn(r"cn=a\00b");
        assert_eq!(d.rdn().unwrap().avas()[0].value, "a\0b");
        assert_eq!(d.to_string(), r"cn=a\00b");
        let r = Rdn::new("cn", "\ttab\n").unwrap();
        assert_eq!(r.to_string(), r"cn=\09tab\0A");
        assert_eq!(Rdn::parse(&r.to_string()).unwrap().avas(), r.avas());
        assert_eq!(dn("cn=  a  b  ").rdn().unwrap().avas()[0].value, "a  b");
    }

    #[test]
    fn quoted_and_hex() {
        let d = dn(r#"cn="Smith, John \"JJ\"" , dc=com"#);
        assert_eq!(d.rdn().unwrap().avas()[0].value, "Smith, John \"JJ\"");
        assert_eq!(d, dn(r#"cn=Smith\, John \"JJ\",dc=com"#));
        // UTF8String "ab"
        let d = dn("cn=#0C026162,dc=com");
        assert_eq!(d.rdn().unwrap().avas()[0].value, "ab");
        assert_eq!(d, dn("cn=AB,dc=com"));
        // OCTET STRING with long-form length
        assert_eq!(dn("cn=#0481026162").rdn().unwrap().avas()[0].value, "ab");
        // INTEGER: kept literally
        let d = dn("cn=#020101");
        assert_eq!(d.rdn().unwrap().avas()[0].value, "#020101");
        assert_eq!(d.to_string(), r"cn=\#020101");
        assert_eq!(dn(&d.to_string()), d);
        // length mismatch: kept literally
        assert_eq!(dn("cn=#0C0361").rdn().unwrap().avas()[0].value, "#0C0361");
        assert!(Dn::parse("cn=#").is_err());
        assert!(Dn::parse("cn=#abc").is_err());
        assert!(Dn::parse("cn=#zz").is_err());
        assert!(Dn::parse(r#"cn="abc"#).is_err());
        assert!(Dn::parse(r#"cn="abc"x"#).is_err());
    }

    #[test]
    fn multi_valued() {
        let d = dn("cn=John+uid=jd,dc=com");
        let r = d.rdn().unwrap();
        assert_eq!(r.avas().len(), 2);
        assert_eq!(r.norm(), "cn=john+uid=jd");
        assert_eq!(d, dn("UID=JD + CN=john,dc=com"));
        assert_eq!(d.to_string(), "cn=John+uid=jd,dc=com");
        let r2 = Rdn::parse("uid=jd+cn=John").unwrap();
        assert_eq!(&r2, r);
        assert_eq!(r2.to_string(), "uid=jd+cn=John");
        let built = Rdn::from_avas(vec![
            Ava {
                attr: "uid".into(),
                value: "jd".into(),
            },
            Ava {
                attr: "cn".into(),
                value: "John".into(),
            },
        ])
        .unwrap();
        assert_eq!(&built, r);
        assert_eq!(Rdn::from_avas(vec![]).unwrap_err(), DnError::EmptyRdn);
    }

    #[test]
    fn attribute_types() {
        let d = dn("2.5.4.3=x,OID.0.9.2342.19200300.100.1.25=com,msDS-Foo-1=y");
        assert_eq!(vals(&d)[0].0, "2.5.4.3");
        assert_eq!(vals(&d)[1].0, "0.9.2342.19200300.100.1.25");
        assert_eq!(
            d.norm(),
            "2.5.4.3=x,0.9.2342.19200300.100.1.25=com,msds-foo-1=y"
        );
        assert!(Rdn::new("cn", "x").is_ok());
        assert!(Rdn::new("OID.2.5.4.3", "x").is_ok());
        for bad in ["", "1cn", "c_n", "-cn", "1", "1..2", "01.2", "cn x"] {
            assert!(Rdn::new(bad, "x").is_err(), "{bad}");
        }
        assert!(matches!(
            Dn::parse("1cn=x"),
            Err(DnError::InvalidAttributeType(_))
        ));
    }

    #[test]
    fn empty_values() {
        let d = dn("cn=,dc=com");
        assert_eq!(vals(&d)[0].1, "");
        assert_eq!(d.to_string(), "cn=,dc=com");
        let d = dn("cn=+sn=,dc=");
        assert_eq!(d.to_string(), "cn=+sn=,dc=");
        assert_eq!(d.len(), 2);
    }

    #[test]
    fn errors() {
        assert_eq!(
            Dn::parse("cn=a,dcx").unwrap_err(),
            DnError::Expected {
                pos: 8,
                expected: "'='"
            }
        );
        assert_eq!(
            Dn::parse("cn=a,dcx").unwrap_err().to_string(),
            "invalid DN syntax at byte 8: expected '='"
        );
        assert!(matches!(
            Dn::parse("cn=a,"),
            Err(DnError::Expected { pos: 5, .. })
        ));
        assert!(matches!(
            Dn::parse(",cn=a"),
            Err(DnError::Expected { pos: 0, .. })
        ));
        assert!(matches!(
            Dn::parse("cn=a,,dc=b"),
            Err(DnError::Expected { .. })
        ));
        assert!(matches!(Dn::parse("cn=a+"), Err(DnError::Expected { .. })));
        assert_eq!(
            Dn::parse(r"cn=a\x").unwrap_err(),
            DnError::BadEscape { pos: 4 }
        );
        assert!(matches!(
            Dn::parse(r"cn=a\4"),
            Err(DnError::BadEscape { .. })
        ));
        assert!(matches!(
            Dn::parse(r"cn=a\"),
            Err(DnError::BadEscape { .. })
        ));
        assert_eq!(
            Dn::parse(r"cn=\ff").unwrap_err(),
            DnError::InvalidUtf8 { pos: 3 }
        );
        assert!(matches!(Dn::parse("=a"), Err(DnError::Expected { .. })));
        assert!(matches!(
            Rdn::parse("cn=a,dc=b"),
            Err(DnError::MultipleRdns { pos: 4 })
        ));
        assert!(Rdn::parse("").is_err());
    }

    #[test]
    fn hierarchy() {
        let com = dn("dc=com");
        let ex = dn("dc=example,dc=com");
        let user = dn("cn=u,ou=people,dc=example,dc=com");
        let root = Dn::root();
        assert!(root.is_ancestor_of(&com));
        assert!(!root.is_ancestor_of(&root));
        assert!(com.is_ancestor_of(&user));
        assert!(ex.is_ancestor_of(&user));
        assert!(!ex.is_ancestor_of(&ex));
        assert!(!user.is_ancestor_of(&ex));
        assert!(user.is_descendant_of(&ex));
        assert!(!user.is_descendant_of(&user));
        assert!(!dn("dc=other,dc=com").is_ancestor_of(&user));
        assert!(!dn("dc=example").is_ancestor_of(&user));
        assert!(com.is_parent_of(&ex));
        assert!(!com.is_parent_of(&user));
        assert!(root.is_parent_of(&com));
        assert_eq!(user.parent().unwrap(), dn("ou=people,dc=example,dc=com"));
        assert_eq!(com.parent().unwrap(), root);
        assert_eq!(
            ex.child(Rdn::new("ou", "x").unwrap()),
            dn("ou=x,dc=example,dc=com")
        );
        assert_eq!(root.child(Rdn::new("dc", "com").unwrap()), com);
        assert_eq!(
            user.with_rdn(Rdn::parse("cn=v").unwrap()),
            dn("cn=v,ou=people,dc=example,dc=com")
        );
        assert_eq!(root.with_rdn(Rdn::parse("dc=com").unwrap()), com);
        let newbase = dn("ou=archive,dc=example,dc=com");
        assert_eq!(
            user.rebase(&dn("ou=people,dc=example,dc=com"), &newbase)
                .unwrap(),
            dn("cn=u,ou=archive,dc=example,dc=com")
        );
        assert_eq!(ex.rebase(&ex, &newbase).unwrap(), newbase);
        assert_eq!(
            user.rebase(&root, &com).unwrap(),
            dn("cn=u,ou=people,dc=example,dc=com,dc=com")
        );
        assert!(com.rebase(&ex, &newbase).is_none());
        assert_eq!(user.rebase(&ex, &root).unwrap(), dn("cn=u,ou=people"));
    }

    #[test]
    fn long_input_is_linear() {
        let s = "cn=a,".repeat(MAX_DN_RDNS - 1) + "dc=com";
        let d = dn(&s);
        assert_eq!(d.len(), MAX_DN_RDNS);
        let s = format!("cn={}", r"\,".repeat(100_000));
        assert_eq!(vals(&dn(&s))[0].1.len(), 100_000);
        let s = format!("cn=a{}", " ".repeat(100_000));
        assert_eq!(vals(&dn(&s))[0].1, "a");
    }

    #[test]
    fn depth_and_length_are_capped() {
        let deep = "cn=a,".repeat(MAX_DN_RDNS) + "dc=com";
        assert_eq!(Dn::parse(&deep), Err(DnError::TooManyRdns));
        let deeper = "cn=a,".repeat(50_000) + "dc=com";
        assert_eq!(Dn::parse(&deeper), Err(DnError::TooManyRdns));
        let long = format!("cn={}", "x".repeat(MAX_DN_LEN));
        assert!(matches!(Dn::parse(&long), Err(DnError::TooLong(_))));
    }
}
