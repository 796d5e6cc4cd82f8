//! Absolute domain names as lists of labels, compared the way DNS compares them.

use std::cmp::Ordering;
use std::fmt;
use std::hash::{Hash, Hasher};
use std::str::FromStr;

use crate::error::{ProtoError, Result};

/// Longest label (RFC 1035 §2.3.4).
pub const MAX_LABEL: usize = 63;
/// Longest name in wire form, length octets and the root's zero included (RFC 1035 §2.3.4).
pub const MAX_NAME: usize = 255;

/// An absolute DNS name: labels from the leftmost to the one under the root, as raw bytes
/// with their case kept (a resolver may send `dC1.SaMdOm…` and wants it echoed back).
/// Equality, hashing and ordering ignore ASCII case, as DNS matching does (RFC 4343).
/// Every `Name` is valid: labels of 1 to 63 bytes, at most 255 bytes in wire form.
#[derive(Clone, Default)]
pub struct Name {
    labels: Vec<Vec<u8>>,
}

impl Name {
    /// The root name `.`, where every absolute name ends.
    pub fn root() -> Name {
        Name { labels: Vec::new() }
    }

    /// Reads presentation form (`dc1.samdom.example.com`, trailing dot optional; `.` or an
    /// empty string is the root). `\.` and `\\` (any `\X`) stand for the character itself,
    /// `\DDD` for the byte of that decimal value. Unescaped whitespace and control
    /// characters are refused, as are empty labels (`a..b`).
    pub fn parse(text: &str) -> Result<Name> {
        if text.is_empty() || text == "." {
            return Ok(Name::root());
        }
        let bytes = text.as_bytes();
        let mut labels = Vec::new();
        let mut label = Vec::new();
        let mut i = 0;
        let mut ended_with_dot = false;
        while let Some(&b) = bytes.get(i) {
            ended_with_dot = false;
            match b {
                b'\\' => {
                    let next = bytes.get(i + 1).ok_or_else(|| {
                        ProtoError::BadText(format!("{text:?} ends in a lone backslash"))
                    })?;
                    if next.is_ascii_digit() {
                        let digits = bytes
                            .get(i + 1..i + 4)
                            .filter(|d| d.iter().all(u8::is_ascii_digit));
                        let d = digits.ok_or_else(|| {
                            ProtoError::BadText(format!("{text:?}: \\DDD needs three digits"))
                        })?;
                        let v = d.iter().fold(0u32, |acc, c| acc * 10 + u32::from(c - b'0'));
                        let v = u8::try_from(v).map_err(|_| {
                            ProtoError::BadText(format!("{text:?}: \\DDD above 255"))
                        })?;
                        label.push(v);
                        i += 4;
                    } else {
                        label.push(*next);
                        i += 2;
                    }
                }
                b'.' => {
                    if label.is_empty() {
                        return Err(ProtoError::BadLabel("empty label"));
                    }
                    labels.push(std::mem::take(&mut label));
                    ended_with_dot = true;
                    i += 1;
                }
                b if b.is_ascii_whitespace() || b.is_ascii_control() => {
                    return Err(ProtoError::BadText(format!(
                        "{text:?}: unescaped whitespace or control character in a name"
                    )));
                }
                b => {
                    label.push(b);
                    i += 1;
                }
            }
        }
        if !ended_with_dot {
            if label.is_empty() {
                return Err(ProtoError::BadLabel("empty label"));
            }
            labels.push(label);
        }
        Name::from_labels(labels)
    }

    /// Builds a name from its labels (leftmost first, no empty root label at the end),
    /// checking the label and name length limits.
    pub fn from_labels(labels: Vec<Vec<u8>>) -> Result<Name> {
        let mut wire = 1usize;
        for l in &labels {
            if l.is_empty() {
                return Err(ProtoError::BadLabel("empty label"));
            }
            if l.len() > MAX_LABEL {
                return Err(ProtoError::BadLabel("label longer than 63 bytes"));
            }
            wire += 1 + l.len();
        }
        if wire > MAX_NAME {
            return Err(ProtoError::NameTooLong);
        }
        Ok(Name { labels })
    }

    /// The labels, leftmost first; empty for the root.
    pub fn labels(&self) -> &[Vec<u8>] {
        &self.labels
    }

    /// Whether this is the root name.
    pub fn is_root(&self) -> bool {
        self.labels.is_empty()
    }

    /// How many labels the name has (0 for the root).
    pub fn len_labels(&self) -> usize {
        self.labels.len()
    }

    /// The length of the uncompressed wire form (length octets and the final zero included).
    pub fn wire_len(&self) -> usize {
        1 + self.labels.iter().map(|l| 1 + l.len()).sum::<usize>()
    }

    /// Whether the name is `zone` or lies below it (ASCII case ignored).
    pub fn is_subdomain_of(&self, zone: &Name) -> bool {
        self.relative_to(zone).is_some()
    }

    /// The labels in front of `zone` (empty at the apex), or `None` when the name is not
    /// in it. The labels keep their case.
    pub fn relative_to(&self, zone: &Name) -> Option<&[Vec<u8>]> {
        let skip = self.labels.len().checked_sub(zone.labels.len())?;
        let (front, tail) = self.labels.split_at(skip);
        let same = tail
            .iter()
            .zip(&zone.labels)
            .all(|(a, b)| a.eq_ignore_ascii_case(b));
        same.then_some(front)
    }

    /// The name relative to `zone` as the directory names a `dnsNode`: `@` for the apex,
    /// otherwise the leading labels in presentation form joined with dots
    /// (`_ldap._tcp.dc`). `None` when the name is not in the zone.
    pub fn relative_text(&self, zone: &Name) -> Option<String> {
        let front = self.relative_to(zone)?;
        if front.is_empty() {
            return Some("@".to_string());
        }
        let mut out = String::new();
        for (i, l) in front.iter().enumerate() {
            if i > 0 {
                out.push('.');
            }
            push_label(&mut out, l);
        }
        Some(out)
    }

    /// The name one label up (`None` for the root).
    pub fn parent(&self) -> Option<Name> {
        let rest = self.labels.get(1..)?;
        Some(Name {
            labels: rest.to_vec(),
        })
    }

    /// The name with `label` in front (checking the length limits).
    pub fn child(&self, label: &[u8]) -> Result<Name> {
        let mut labels = Vec::with_capacity(self.labels.len() + 1);
        labels.push(label.to_vec());
        labels.extend(self.labels.iter().cloned());
        Name::from_labels(labels)
    }

    /// The wildcard that would cover this name's siblings: the first label replaced by
    /// `*` (`a.b.c` → `*.b.c`). `None` for the root.
    pub fn wildcard_of(&self) -> Option<Name> {
        let rest = self.labels.get(1..)?;
        let mut labels = Vec::with_capacity(self.labels.len());
        labels.push(b"*".to_vec());
        labels.extend(rest.iter().cloned());
        // One byte instead of the first label: never longer than `self`.
        Some(Name { labels })
    }

    /// Whether the first label is `*` (RFC 4592).
    pub fn is_wildcard(&self) -> bool {
        self.labels.first().is_some_and(|l| l.as_slice() == b"*")
    }

    /// The same name in ASCII lowercase, as canonical forms (RFC 4034 §6.2) and TSIG use.
    pub fn to_lowercase(&self) -> Name {
        Name {
            labels: self.labels.iter().map(|l| l.to_ascii_lowercase()).collect(),
        }
    }

    /// Presentation form with the trailing dot (`dc1.samdom.example.com.`, `.` for the root),
    /// as zone files write names.
    pub fn to_fqdn_string(&self) -> String {
        if self.is_root() {
            return ".".to_string();
        }
        format!("{self}.")
    }

    /// The uncompressed wire form, case kept.
    pub fn to_wire(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(self.wire_len());
        self.write_uncompressed(&mut out);
        out
    }

    /// The uncompressed wire form in lowercase: the canonical form TSIG digests use.
    pub fn to_canonical_wire(&self) -> Vec<u8> {
        self.to_lowercase().to_wire()
    }

    pub(crate) fn write_uncompressed(&self, out: &mut Vec<u8>) {
        for l in &self.labels {
            // Labels are 1..=63 bytes by construction.
            out.push(l.len() as u8);
            out.extend_from_slice(l);
        }
        out.push(0);
    }
}

/// Appends a label in presentation form: `.` and `\` escaped with a backslash, bytes
/// outside printable ASCII (and the space) as `\DDD`.
pub(crate) fn push_label(out: &mut String, label: &[u8]) {
    for &b in label {
        match b {
            b'.' | b'\\' => {
                out.push('\\');
                out.push(char::from(b));
            }
            0x21..=0x7e => out.push(char::from(b)),
            _ => out.push_str(&format!("\\{b:03}")),
        }
    }
}

impl fmt::Display for Name {
    /// Presentation form without the trailing dot; the root prints as `.`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.is_root() {
            return f.write_str(".");
        }
        let mut out = String::new();
        for (i, l) in self.labels.iter().enumerate() {
            if i > 0 {
                out.push('.');
            }
            push_label(&mut out, l);
        }
        f.write_str(&out)
    }
}

impl fmt::Debug for Name {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Name({})", self.to_fqdn_string())
    }
}

impl FromStr for Name {
    type Err = ProtoError;

    fn from_str(s: &str) -> Result<Name> {
        Name::parse(s)
    }
}

impl PartialEq for Name {
    fn eq(&self, other: &Name) -> bool {
        self.labels.len() == other.labels.len()
            && self
                .labels
                .iter()
                .zip(&other.labels)
                .all(|(a, b)| a.eq_ignore_ascii_case(b))
    }
}

impl Eq for Name {}

impl Hash for Name {
    fn hash<H: Hasher>(&self, state: &mut H) {
        state.write_usize(self.labels.len());
        for l in &self.labels {
            state.write_usize(l.len());
            for b in l {
                state.write_u8(b.to_ascii_lowercase());
            }
        }
    }
}

impl Ord for Name {
    /// DNSSEC's canonical order (RFC 4034 §6.1): label by label from the root, each
    /// compared as lowercase bytes, a shorter label sorting first.
    fn cmp(&self, other: &Name) -> Ordering {
        let mut a = self.labels.iter().rev();
        let mut b = other.labels.iter().rev();
        loop {
            match (a.next(), b.next()) {
                (None, None) => return Ordering::Equal,
                (None, Some(_)) => return Ordering::Less,
                (Some(_), None) => return Ordering::Greater,
                (Some(x), Some(y)) => {
                    let o = x
                        .iter()
                        .map(u8::to_ascii_lowercase)
                        .cmp(y.iter().map(u8::to_ascii_lowercase));
                    if o != Ordering::Equal {
                        return o;
                    }
                }
            }
        }
    }
}

impl PartialOrd for Name {
    fn partial_cmp(&self, other: &Name) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use std::collections::HashSet;

    fn n(s: &str) -> Name {
        Name::parse(s).unwrap()
    }

    #[test]
    fn parses_with_and_without_trailing_dot() {
        assert_eq!(n("dc1.samdom.example.com"), n("dc1.samdom.example.com."));
        assert_eq!(n("dc1.samdom.example.com").len_labels(), 4);
        assert!(n(".").is_root());
        assert!(n("").is_root());
        assert_eq!(Name::root().to_string(), ".");
        assert_eq!(Name::root().to_fqdn_string(), ".");
        assert_eq!(n("a.b").to_fqdn_string(), "a.b.");
    }

    #[test]
    fn escapes_round_trip() {
        let name = n(r"a\.b.c\\d.\000\255x");
        assert_eq!(name.labels()[0], b"a.b");
        assert_eq!(name.labels()[1], b"c\\d");
        assert_eq!(name.labels()[2], b"\x00\xffx");
        assert_eq!(name.to_string(), r"a\.b.c\\d.\000\255x");
        assert_eq!(n(&name.to_string()), name);
        assert_eq!(n(r"\097b"), n("ab"));
        assert_eq!(n("a b".replace(' ', r"\032").as_str()).labels()[0], b"a b");
    }

    #[test]
    fn rejects_bad_text() {
        assert!(matches!(Name::parse("a..b"), Err(ProtoError::BadLabel(_))));
        assert!(matches!(Name::parse(".a"), Err(ProtoError::BadLabel(_))));
        assert!(matches!(Name::parse("a.."), Err(ProtoError::BadLabel(_))));
        assert!(matches!(Name::parse("a\\"), Err(ProtoError::BadText(_))));
        assert!(matches!(Name::parse("a\\25"), Err(ProtoError::BadText(_))));
        assert!(matches!(Name::parse("a\\256"), Err(ProtoError::BadText(_))));
        assert!(matches!(Name::parse("a b"), Err(ProtoError::BadText(_))));
        let long_label = "x".repeat(64);
        assert!(matches!(
            Name::parse(&long_label),
            Err(ProtoError::BadLabel(_))
        ));
        assert!(Name::parse(&"x".repeat(63)).is_ok());
        // 4 × (1 + 63) + 1 = 257 > 255
        let long = vec!["y".repeat(63); 4].join(".");
        assert_eq!(Name::parse(&long), Err(ProtoError::NameTooLong));
        // 3 × 64 + (1 + 61) + 1 = 255: the longest name
        let longest = format!("{}.{}", vec!["y".repeat(63); 3].join("."), "z".repeat(61));
        assert_eq!(n(&longest).wire_len(), 255);
    }

    #[test]
    fn case_insensitive_equality_and_hash() {
        let a = n("DC1.Samdom.Example.COM");
        let b = n("dc1.samdom.example.com");
        assert_eq!(a, b);
        let set: HashSet<Name> = [a.clone()].into_iter().collect();
        assert!(set.contains(&b));
        assert_eq!(a.labels()[0], b"DC1");
        assert_eq!(a.to_lowercase().labels()[0], b"dc1");
        assert_ne!(n("a.b"), n("a.b.c"));
    }

    #[test]
    fn zone_relations() {
        let zone = n("samdom.example.com");
        let srv = n("_ldap._tcp.dc._msdcs.SAMDOM.example.com");
        assert!(srv.is_subdomain_of(&zone));
        assert!(zone.is_subdomain_of(&zone));
        assert!(!n("example.com").is_subdomain_of(&zone));
        assert!(!n("xsamdom.example.com").is_subdomain_of(&zone));
        assert_eq!(
            srv.relative_text(&zone).as_deref(),
            Some("_ldap._tcp.dc._msdcs")
        );
        assert_eq!(zone.relative_text(&zone).as_deref(), Some("@"));
        assert_eq!(n("example.com").relative_text(&zone), None);
        assert_eq!(srv.relative_to(&zone).map(<[_]>::len), Some(4));
        assert!(srv.is_subdomain_of(&Name::root()));
        assert_eq!(
            n(r"a\.b.samdom.example.com")
                .relative_text(&zone)
                .as_deref(),
            Some(r"a\.b")
        );
    }

    #[test]
    fn parent_child_wildcard() {
        let name = n("host.samdom.example.com");
        assert_eq!(name.parent(), Some(n("samdom.example.com")));
        assert_eq!(Name::root().parent(), None);
        assert_eq!(n("com").parent(), Some(Name::root()));
        assert_eq!(n("samdom.example.com").child(b"host").unwrap(), name);
        assert!(n("a").child(b"").is_err());
        assert_eq!(name.wildcard_of(), Some(n("*.samdom.example.com")));
        assert!(name.wildcard_of().unwrap().is_wildcard());
        assert!(!name.is_wildcard());
        assert_eq!(Name::root().wildcard_of(), None);
    }

    #[test]
    fn canonical_order() {
        // RFC 4034 §6.1's example order.
        let ordered = [
            "example",
            "a.example",
            "yljkjljk.a.example",
            "Z.a.example",
            "zABC.a.EXAMPLE",
            "z.example",
            "\\001.z.example",
            "*.z.example",
            "\\200.z.example",
        ];
        let names: Vec<Name> = ordered.iter().map(|s| n(s)).collect();
        let mut sorted = names.clone();
        sorted.sort();
        assert_eq!(sorted, names);
    }

    #[test]
    fn wire_forms() {
        let name = n("Dc1.Samdom");
        assert_eq!(name.to_wire(), b"\x03Dc1\x06Samdom\x00");
        assert_eq!(name.to_canonical_wire(), b"\x03dc1\x06samdom\x00");
        assert_eq!(Name::root().to_wire(), b"\x00");
    }

    proptest! {
        #[test]
        fn display_parse_round_trip(labels in prop::collection::vec(
            prop::collection::vec(any::<u8>(), 1..20), 0..6)) {
            let name = Name::from_labels(labels).unwrap();
            let text = name.to_string();
            let back = Name::parse(&text).unwrap();
            prop_assert_eq!(back.labels(), name.labels());
            let back = Name::parse(&name.to_fqdn_string()).unwrap();
            prop_assert_eq!(back.labels(), name.labels());
        }

        #[test]
        fn parse_never_panics(text in ".{0,80}") {
            let _ = Name::parse(&text);
        }
    }
}
