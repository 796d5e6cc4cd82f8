//! LDAP search filters (RFC 4515 string form, RFC 4526 absolute true/false).
//!
//! [`Filter`] is the value form used by the query planner and evaluator. It
//! can be parsed from the string representation (as sent by tools and used
//! in configuration), built with the constructor helpers, and printed back
//! with `Display`; `Filter::parse(&f.to_string()) == Ok(f)` holds for every
//! filter that has a string form (see [`Filter`] for the exceptions).
//!
//! Assertion values are raw bytes: `\XX` escapes may produce arbitrary,
//! non-UTF-8 data such as binary SIDs.
//!
//! Nesting is limited to [`MAX_FILTER_DEPTH`] when parsing. `Display`,
//! [`Filter::depth`] and [`Filter::attributes`] use explicit stacks, so they
//! are safe on arbitrarily deep values; the derived `Clone`, `PartialEq`,
//! `Debug` and `Drop` recurse, so code building filters from untrusted input
//! by other means (e.g. a BER decoder) must enforce the same depth limit.

use std::collections::HashSet;
use std::fmt::{self, Write as _};
use std::str::FromStr;

use crate::syntax::{is_descriptor, is_numeric_oid};

/// Deepest nesting accepted by [`Filter::parse`], counted as
/// [`Filter::depth`] does; bounds recursion on hostile input.
pub const MAX_FILTER_DEPTH: usize = 100;

/// A search filter.
///
/// Not every value has a string form: a [`SubstringFilter`] with no
/// non-empty component prints as a presence test, empty `any` components or
/// `Some(empty)` initial/final parts do not survive a round trip, an
/// [`ExtensibleMatch`] needs an attribute or a rule, and a rule named `dn`
/// without the `dn_attributes` flag reads back as the flag.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Filter {
    /// All sub-filters must match; empty is absolute true.
    And(Vec<Filter>),
    /// At least one sub-filter must match; empty is absolute false.
    Or(Vec<Filter>),
    /// Negation.
    Not(Box<Filter>),
    /// `(attr=value)`.
    Equality(String, Vec<u8>),
    /// `(attr=initial*any*final)`.
    Substrings(SubstringFilter),
    /// `(attr>=value)`.
    GreaterOrEqual(String, Vec<u8>),
    /// `(attr<=value)`.
    LessOrEqual(String, Vec<u8>),
    /// `(attr=*)`.
    Present(String),
    /// `(attr~=value)`.
    Approx(String, Vec<u8>),
    /// `(attr:dn:rule:=value)` and its variants.
    Extensible(ExtensibleMatch),
}

/// The parts of a substring assertion.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SubstringFilter {
    /// Attribute description.
    pub attr: String,
    /// Required prefix, if any.
    pub initial: Option<Vec<u8>>,
    /// Required inner pieces, in order.
    pub any: Vec<Vec<u8>>,
    /// Required suffix, if any.
    pub final_: Option<Vec<u8>>,
}

/// An extensible match assertion (RFC 4511 section 4.5.1.7.7).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ExtensibleMatch {
    /// Matching rule OID or name; required when `attr` is absent.
    pub rule: Option<String>,
    /// Attribute description, if given.
    pub attr: Option<String>,
    /// Assertion value.
    pub value: Vec<u8>,
    /// Whether attributes of the entry's DN also take part (`:dn`).
    pub dn_attributes: bool,
}

/// Why a filter string could not be parsed; every variant carries the byte
/// offset of the problem.
#[derive(Debug, thiserror::Error, Clone, PartialEq, Eq)]
pub enum FilterError {
    /// The input was empty.
    #[error("bad filter at byte 0: empty filter")]
    Empty,
    /// Input ended inside a parenthesised filter, or an extra `)` followed.
    #[error("bad filter at byte {0}: unbalanced parenthesis")]
    UnbalancedParen(usize),
    /// A filter was required but something other than `(` was found.
    #[error("bad filter at byte {0}: expected '('")]
    ExpectedOpen(usize),
    /// A filter was complete but `)` did not follow.
    #[error("bad filter at byte {0}: expected ')'")]
    ExpectedClose(usize),
    /// A backslash not followed by two hex digits.
    #[error("bad filter at byte {0}: invalid escape (expected '\\' and two hex digits)")]
    BadEscape(usize),
    /// No filter operator after the attribute description.
    #[error("bad filter at byte {0}: expected '=', '~=', '>=', '<=' or ':='")]
    MissingEquals(usize),
    /// The attribute description is not a descriptor/OID with options.
    #[error("bad filter at byte {0}: invalid attribute description")]
    BadAttribute(usize),
    /// The matching rule is not a descriptor or numeric OID.
    #[error("bad filter at byte {0}: invalid matching rule")]
    BadMatchingRule(usize),
    /// An extensible match names neither an attribute nor a rule.
    #[error("bad filter at byte {0}: extensible match without attribute needs a matching rule")]
    MissingRule(usize),
    /// Two adjacent `*` wildcards.
    #[error("bad filter at byte {0}: empty substring between '*' wildcards")]
    EmptySubstring(usize),
    /// A `*` in a value of an operator that takes no wildcards.
    #[error("bad filter at byte {0}: unescaped '*' where no wildcard is allowed")]
    UnexpectedWildcard(usize),
    /// A character that must be escaped (`(` or NUL) appeared in a value.
    #[error("bad filter at byte {0}: character must be escaped in a value")]
    UnescapedChar(usize),
    /// Characters after the complete filter.
    #[error("bad filter at byte {0}: trailing characters after filter")]
    TrailingGarbage(usize),
    /// Nesting deeper than [`MAX_FILTER_DEPTH`].
    #[error("bad filter at byte {0}: nesting deeper than 100 levels")]
    TooDeep(usize),
}

impl FilterError {
    /// Byte offset of the problem in the input, for callers that point at it.
    pub fn position(&self) -> usize {
        match *self {
            FilterError::Empty => 0,
            FilterError::UnbalancedParen(p)
            | FilterError::ExpectedOpen(p)
            | FilterError::ExpectedClose(p)
            | FilterError::BadEscape(p)
            | FilterError::MissingEquals(p)
            | FilterError::BadAttribute(p)
            | FilterError::BadMatchingRule(p)
            | FilterError::MissingRule(p)
            | FilterError::EmptySubstring(p)
            | FilterError::UnexpectedWildcard(p)
            | FilterError::UnescapedChar(p)
            | FilterError::TrailingGarbage(p)
            | FilterError::TooDeep(p) => p,
        }
    }

    fn map_pos(self, f: impl Fn(usize) -> usize) -> FilterError {
        use FilterError::*;
        match self {
            Empty => Empty,
            UnbalancedParen(p) => UnbalancedParen(f(p)),
            ExpectedOpen(p) => ExpectedOpen(f(p)),
            ExpectedClose(p) => ExpectedClose(f(p)),
            BadEscape(p) => BadEscape(f(p)),
            MissingEquals(p) => MissingEquals(f(p)),
            BadAttribute(p) => BadAttribute(f(p)),
            BadMatchingRule(p) => BadMatchingRule(f(p)),
            MissingRule(p) => MissingRule(f(p)),
            EmptySubstring(p) => EmptySubstring(f(p)),
            UnexpectedWildcard(p) => UnexpectedWildcard(f(p)),
            UnescapedChar(p) => UnescapedChar(f(p)),
            TrailingGarbage(p) => TrailingGarbage(f(p)),
            TooDeep(p) => TooDeep(f(p)),
        }
    }
}

/// True for an attribute description: descriptor or numeric OID followed
/// by `;option`s made of letters, digits and hyphens.
fn is_attr_description(s: &str) -> bool {
    let mut parts = s.split(';');
    let base = parts.next().unwrap_or("");
    (is_descriptor(base) || is_numeric_oid(base))
        && parts.all(|o| !o.is_empty() && o.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-'))
}

fn hex_digit(b: u8) -> Option<u8> {
    match b {
        b'0'..=b'9' => Some(b - b'0'),
        b'a'..=b'f' => Some(b - b'a' + 10),
        b'A'..=b'F' => Some(b - b'A' + 10),
        _ => None,
    }
}

/// Recursive-descent parser over the filter bytes.
struct Parser<'a> {
    s: &'a [u8],
    i: usize,
}

impl Parser<'_> {
    fn peek(&self) -> Option<u8> {
        self.s.get(self.i).copied()
    }

    fn filter(&mut self, depth: usize) -> Result<Filter, FilterError> {
        if depth > MAX_FILTER_DEPTH {
            return Err(FilterError::TooDeep(self.i));
        }
        match self.peek() {
            Some(b'(') => self.i += 1,
            None => return Err(FilterError::UnbalancedParen(self.i)),
            Some(_) => return Err(FilterError::ExpectedOpen(self.i)),
        }
        let f = match self.peek() {
            Some(b'&') => {
                self.i += 1;
                Filter::And(self.list(depth)?)
            }
            Some(b'|') => {
                self.i += 1;
                Filter::Or(self.list(depth)?)
            }
            Some(b'!') => {
                self.i += 1;
                Filter::Not(Box::new(self.filter(depth + 1)?))
            }
            _ => self.item()?,
        };
        match self.peek() {
            Some(b')') => {
                self.i += 1;
                Ok(f)
            }
            None => Err(FilterError::UnbalancedParen(self.i)),
            Some(_) => Err(FilterError::ExpectedClose(self.i)),
        }
    }

    fn list(&mut self, depth: usize) -> Result<Vec<Filter>, FilterError> {
        let mut v = Vec::new();
        while self.peek() == Some(b'(') {
            v.push(self.filter(depth + 1)?);
        }
        Ok(v)
    }

    /// Scans a run of attribute-description characters.
    fn token(&mut self, extra: &[u8]) -> String {
        let start = self.i;
        while self.peek().is_some_and(|c| {
            c.is_ascii_alphanumeric() || c == b'-' || c == b'.' || extra.contains(&c)
        }) {
            self.i += 1;
        }
        String::from_utf8_lossy(self.s.get(start..self.i).unwrap_or_default()).into_owned()
    }

    fn item(&mut self) -> Result<Filter, FilterError> {
        let start = self.i;
        let attr = self.token(b";");
        if !attr.is_empty() && !is_attr_description(&attr) {
            return Err(FilterError::BadAttribute(start));
        }
        let op = self.peek();
        if op == Some(b':') {
            return self.extensible(attr, start);
        }
        let two = matches!(op, Some(b'~' | b'>' | b'<'));
        let eq_at = if two { self.i + 1 } else { self.i };
        if self.s.get(eq_at) != Some(&b'=') {
            return Err(if attr.is_empty() {
                FilterError::BadAttribute(start)
            } else {
                FilterError::MissingEquals(self.i)
            });
        }
        if attr.is_empty() {
            return Err(FilterError::BadAttribute(start));
        }
        self.i = eq_at + 1;
        match op {
            Some(b'~') => Ok(Filter::Approx(attr, self.plain_value()?)),
            Some(b'>') => Ok(Filter::GreaterOrEqual(attr, self.plain_value()?)),
            Some(b'<') => Ok(Filter::LessOrEqual(attr, self.plain_value()?)),
            _ => self.equality_or_substrings(attr),
        }
    }

    fn extensible(&mut self, attr: String, start: usize) -> Result<Filter, FilterError> {
        self.i += 1;
        let mut dn_attributes = false;
        let mut tok_start = self.i;
        let mut tok = self.token(b"");
        if tok.eq_ignore_ascii_case("dn") && self.peek() == Some(b':') {
            dn_attributes = true;
            self.i += 1;
            tok_start = self.i;
            tok = self.token(b"");
        }
        let rule = if tok.is_empty() {
            None
        } else {
            if !(is_descriptor(&tok) || is_numeric_oid(&tok)) {
                return Err(FilterError::BadMatchingRule(tok_start));
            }
            if self.peek() != Some(b':') {
                return Err(FilterError::MissingEquals(self.i));
            }
            self.i += 1;
            Some(tok)
        };
        if self.peek() != Some(b'=') {
            return Err(FilterError::MissingEquals(self.i));
        }
        self.i += 1;
        if attr.is_empty() && rule.is_none() {
            return Err(FilterError::MissingRule(start));
        }
        Ok(Filter::Extensible(ExtensibleMatch {
            rule,
            attr: (!attr.is_empty()).then_some(attr),
            value: self.plain_value()?,
            dn_attributes,
        }))
    }

    /// Reads a value up to `)` or end of input, splitting it at unescaped
    /// `*`; returns the pieces and the offsets of the wildcards.
    fn value(&mut self, allow_star: bool) -> Result<(Vec<Vec<u8>>, Vec<usize>), FilterError> {
        let mut segs: Vec<Vec<u8>> = Vec::new();
        let mut stars = Vec::new();
        let mut cur = Vec::new();
        while let Some(c) = self.peek() {
            match c {
                b')' => break,
                b'(' | 0 => return Err(FilterError::UnescapedChar(self.i)),
                b'*' => {
                    if !allow_star {
                        return Err(FilterError::UnexpectedWildcard(self.i));
                    }
                    stars.push(self.i);
                    segs.push(std::mem::take(&mut cur));
                    self.i += 1;
                }
                b'\\' => {
                    let hi = self.s.get(self.i + 1).copied().and_then(hex_digit);
                    let lo = self.s.get(self.i + 2).copied().and_then(hex_digit);
                    match (hi, lo) {
                        (Some(h), Some(l)) => {
                            cur.push(h << 4 | l);
                            self.i += 3;
                        }
                        _ => return Err(FilterError::BadEscape(self.i)),
                    }
                }
                c => {
                    cur.push(c);
                    self.i += 1;
                }
            }
        }
        segs.push(cur);
        Ok((segs, stars))
    }

    fn plain_value(&mut self) -> Result<Vec<u8>, FilterError> {
        let (mut segs, _) = self.value(false)?;
        Ok(segs.pop().unwrap_or_default())
    }

    fn equality_or_substrings(&mut self, attr: String) -> Result<Filter, FilterError> {
        let (mut segs, stars) = self.value(true)?;
        if segs.len() == 1 {
            return Ok(Filter::Equality(attr, segs.pop().unwrap_or_default()));
        }
        if segs.len() == 2 && segs.iter().all(Vec::is_empty) {
            return Ok(Filter::Present(attr));
        }
        let final_ = segs.pop().filter(|v| !v.is_empty());
        let mut it = segs.into_iter();
        let initial = it.next().filter(|v| !v.is_empty());
        let mut any = Vec::new();
        for (k, seg) in it.enumerate() {
            if seg.is_empty() {
                return Err(FilterError::EmptySubstring(
                    stars.get(k + 1).copied().unwrap_or_default(),
                ));
            }
            any.push(seg);
        }
        Ok(Filter::Substrings(SubstringFilter {
            attr,
            initial,
            any,
            final_,
        }))
    }
}

fn parse_bytes(s: &[u8]) -> Result<Filter, FilterError> {
    let mut p = Parser { s, i: 0 };
    let f = p.filter(1)?;
    let end = p.i;
    while p.peek().is_some_and(|c| c.is_ascii_whitespace()) {
        p.i += 1;
    }
    match s.get(end) {
        _ if p.i == s.len() => Ok(f),
        Some(b')') => Err(FilterError::UnbalancedParen(end)),
        _ => Err(FilterError::TrailingGarbage(end)),
    }
}

/// Writes an assertion value, escaping `*`, `(`, `)`, `\`, ASCII control
/// characters (including NUL, for readable logs) and every byte that is not
/// part of valid UTF-8.
fn write_value(out: &mut String, v: &[u8]) -> fmt::Result {
    for chunk in v.utf8_chunks() {
        for c in chunk.valid().chars() {
            match c {
                '*' | '(' | ')' | '\\' => write!(out, "\\{:02x}", u32::from(c))?,
                c if c.is_ascii_control() => write!(out, "\\{:02x}", u32::from(c))?,
                c => out.push(c),
            }
        }
        for b in chunk.invalid() {
            write!(out, "\\{b:02x}")?;
        }
    }
    Ok(())
}

/// Writes a non-composite filter.
fn write_item(out: &mut String, f: &Filter) -> fmt::Result {
    out.push('(');
    match f {
        Filter::Equality(a, v) => {
            out.push_str(a);
            out.push('=');
            write_value(out, v)?;
        }
        Filter::GreaterOrEqual(a, v) => {
            out.push_str(a);
            out.push_str(">=");
            write_value(out, v)?;
        }
        Filter::LessOrEqual(a, v) => {
            out.push_str(a);
            out.push_str("<=");
            write_value(out, v)?;
        }
        Filter::Approx(a, v) => {
            out.push_str(a);
            out.push_str("~=");
            write_value(out, v)?;
        }
        Filter::Present(a) => {
            out.push_str(a);
            out.push_str("=*");
        }
        Filter::Substrings(s) => {
            out.push_str(&s.attr);
            out.push('=');
            if let Some(i) = &s.initial {
                write_value(out, i)?;
            }
            out.push('*');
            for a in &s.any {
                write_value(out, a)?;
                out.push('*');
            }
            if let Some(fi) = &s.final_ {
                write_value(out, fi)?;
            }
        }
        Filter::Extensible(e) => {
            if let Some(a) = &e.attr {
                out.push_str(a);
            }
            if e.dn_attributes {
                out.push_str(":dn");
            }
            if let Some(r) = &e.rule {
                out.push(':');
                out.push_str(r);
            }
            out.push_str(":=");
            write_value(out, &e.value)?;
        }
        Filter::And(_) | Filter::Or(_) | Filter::Not(_) => {}
    }
    out.push(')');
    Ok(())
}

impl Filter {
    /// Parses the RFC 4515 string form. A bare item without enclosing
    /// parentheses (`cn=foo`) is accepted as `ldapsearch` does; whitespace
    /// after the final `)` is ignored.
    pub fn parse(s: &str) -> Result<Filter, FilterError> {
        if s.trim().is_empty() {
            return Err(FilterError::Empty);
        }
        if s.starts_with('(') {
            parse_bytes(s.as_bytes())
        } else {
            let wrapped = format!("({s})");
            parse_bytes(wrapped.as_bytes())
                .map_err(|e| e.map_pos(|p| p.saturating_sub(1).min(s.len())))
        }
    }

    /// Builds `(attr=value)`.
    pub fn eq(attr: &str, value: impl AsRef<[u8]>) -> Filter {
        Filter::Equality(attr.to_owned(), value.as_ref().to_vec())
    }

    /// Builds `(attr=*)`.
    pub fn present(attr: &str) -> Filter {
        Filter::Present(attr.to_owned())
    }

    /// Builds `(&...)`.
    pub fn and(v: Vec<Filter>) -> Filter {
        Filter::And(v)
    }

    /// Builds `(|...)`.
    pub fn or(v: Vec<Filter>) -> Filter {
        Filter::Or(v)
    }

    /// Builds `(!f)`.
    #[allow(clippy::should_implement_trait)]
    pub fn not(f: Filter) -> Filter {
        Filter::Not(Box::new(f))
    }

    /// Builds `(attr>=value)`.
    pub fn ge(attr: &str, value: impl AsRef<[u8]>) -> Filter {
        Filter::GreaterOrEqual(attr.to_owned(), value.as_ref().to_vec())
    }

    /// Builds `(attr<=value)`.
    pub fn le(attr: &str, value: impl AsRef<[u8]>) -> Filter {
        Filter::LessOrEqual(attr.to_owned(), value.as_ref().to_vec())
    }

    /// Builds `(attr~=value)`.
    pub fn approx(attr: &str, value: impl AsRef<[u8]>) -> Filter {
        Filter::Approx(attr.to_owned(), value.as_ref().to_vec())
    }

    /// Every attribute named in the filter, in order of first appearance
    /// and without case-insensitive duplicates, so planners can pick
    /// indexes.
    pub fn attributes(&self) -> Vec<&str> {
        let mut seen = HashSet::new();
        let mut out = Vec::new();
        let mut stack = vec![self];
        while let Some(f) = stack.pop() {
            let attr = match f {
                Filter::And(v) | Filter::Or(v) => {
                    stack.extend(v.iter().rev());
                    None
                }
                Filter::Not(b) => {
                    stack.push(b);
                    None
                }
                Filter::Equality(a, _)
                | Filter::GreaterOrEqual(a, _)
                | Filter::LessOrEqual(a, _)
                | Filter::Approx(a, _)
                | Filter::Present(a) => Some(a.as_str()),
                Filter::Substrings(s) => Some(s.attr.as_str()),
                Filter::Extensible(e) => e.attr.as_deref(),
            };
            if let Some(a) = attr {
                if seen.insert(a.to_ascii_lowercase()) {
                    out.push(a);
                }
            }
        }
        out
    }

    /// Nesting depth: 1 for an item or an empty `&`/`|`, plus one per
    /// enclosing `&`, `|` or `!`.
    pub fn depth(&self) -> usize {
        let mut max = 0;
        let mut stack = vec![(self, 1usize)];
        while let Some((f, d)) = stack.pop() {
            max = max.max(d);
            match f {
                Filter::And(v) | Filter::Or(v) => stack.extend(v.iter().map(|c| (c, d + 1))),
                Filter::Not(b) => stack.push((b, d + 1)),
                _ => {}
            }
        }
        max
    }
}

impl fmt::Display for Filter {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        enum Step<'a> {
            Node(&'a Filter),
            Close,
        }
        let mut out = String::new();
        let mut stack = vec![Step::Node(self)];
        while let Some(step) = stack.pop() {
            match step {
                Step::Close => out.push(')'),
                Step::Node(Filter::And(v)) | Step::Node(Filter::Or(v)) => {
                    out.push_str(if matches!(step, Step::Node(Filter::And(_))) {
                        "(&"
                    } else {
                        "(|"
                    });
                    stack.push(Step::Close);
                    stack.extend(v.iter().rev().map(Step::Node));
                }
                Step::Node(Filter::Not(b)) => {
                    out.push_str("(!");
                    stack.push(Step::Close);
                    stack.push(Step::Node(b));
                }
                Step::Node(item) => write_item(&mut out, item)?,
            }
        }
        f.write_str(&out)
    }
}

impl FromStr for Filter {
    type Err = FilterError;
    fn from_str(s: &str) -> Result<Filter, FilterError> {
        Filter::parse(s)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p(s: &str) -> Filter {
        Filter::parse(s).unwrap()
    }

    fn e(s: &str) -> FilterError {
        Filter::parse(s).unwrap_err()
    }

    fn rt(s: &str) {
        let f = p(s);
        assert_eq!(p(&f.to_string()), f, "{s}");
    }

    #[test]
    fn simple_items() {
        assert_eq!(p("(cn=foo)"), Filter::eq("cn", "foo"));
        assert_eq!(p("(cn=)"), Filter::eq("cn", ""));
        assert_eq!(p("(cn=*)"), Filter::present("cn"));
        assert_eq!(p("(age>=10)"), Filter::ge("age", "10"));
        assert_eq!(p("(age<=10)"), Filter::le("age", "10"));
        assert_eq!(p("(cn~=smith)"), Filter::approx("cn", "smith"));
        assert_eq!(p("(cn= a b )"), Filter::eq("cn", " a b "));
        assert_eq!(p("(cn;lang-en;x=é)"), Filter::eq("cn;lang-en;x", "é"));
        assert_eq!(p("(2.5.4.3=x)"), Filter::eq("2.5.4.3", "x"));
        assert_eq!(p("(cn=a=b)"), Filter::eq("cn", "a=b"));
        assert_eq!(p("(objectClass=user)  "), Filter::eq("objectClass", "user"));
        for s in ["(cn=foo)", "(cn=*)", "(a>=1)", "(a<=1)", "(a~=1)", "(cn=)"] {
            assert_eq!(p(s).to_string(), s);
        }
    }

    #[test]
    fn bare_items() {
        assert_eq!(p("cn=foo"), Filter::eq("cn", "foo"));
        assert_eq!(p("cn=foo "), Filter::eq("cn", "foo "));
        assert_eq!(p("cn=*"), Filter::present("cn"));
        assert_eq!(
            p("&(a=1)(b=2)"),
            Filter::and(vec![Filter::eq("a", "1"), Filter::eq("b", "2")])
        );
        assert_eq!(e("cn"), FilterError::MissingEquals(2));
        assert_eq!(e("cn=a)b"), FilterError::TrailingGarbage(5));
    }

    #[test]
    fn escapes_and_binary() {
        let f = p(r"(objectSid=\01\05\00\00\00\00\00\05\15\00\00\00\ff)");
        let v = vec![1, 5, 0, 0, 0, 0, 0, 5, 0x15, 0, 0, 0, 0xff];
        assert_eq!(f, Filter::eq("objectSid", &v));
        assert_eq!(
            f.to_string(),
            r"(objectSid=\01\05\00\00\00\00\00\05\15\00\00\00\ff)"
        );
        assert_eq!(p(r"(cn=\2a\28\29\5c\00)"), Filter::eq("cn", b"*()\\\0"));
        assert_eq!(
            Filter::eq("cn", b"*()\\\0").to_string(),
            r"(cn=\2a\28\29\5c\00)"
        );
        assert_eq!(p(r"(cn=\C3\A4)"), Filter::eq("cn", "ä"));
        assert_eq!(Filter::eq("cn", "ä").to_string(), "(cn=ä)");
        assert_eq!(Filter::eq("cn", b"\xc3").to_string(), r"(cn=\c3)");
        rt(r"(cn=\c3\28x\29)");
    }

    #[test]
    fn substrings() {
        let s = |i: Option<&str>, a: &[&str], f: Option<&str>| {
            Filter::Substrings(SubstringFilter {
                attr: "cn".into(),
                initial: i.map(|x| x.as_bytes().to_vec()),
                any: a.iter().map(|x| x.as_bytes().to_vec()).collect(),
                final_: f.map(|x| x.as_bytes().to_vec()),
            })
        };
        assert_eq!(p("(cn=a*b*c)"), s(Some("a"), &["b"], Some("c")));
        assert_eq!(p("(cn=*a*)"), s(None, &["a"], None));
        assert_eq!(p("(cn=a*)"), s(Some("a"), &[], None));
        assert_eq!(p("(cn=*a)"), s(None, &[], Some("a")));
        assert_eq!(p("(cn=a*b*c*d)"), s(Some("a"), &["b", "c"], Some("d")));
        assert_eq!(p(r"(cn=\2a*x)"), s(Some("*"), &[], Some("x")));
        for t in [
            "(cn=a*b*c)",
            "(cn=*a*)",
            "(cn=a*)",
            "(cn=*a)",
            "(cn=a*b*c*d)",
        ] {
            assert_eq!(p(t).to_string(), t);
        }
        assert_eq!(e("(cn=**)"), FilterError::EmptySubstring(5));
        assert_eq!(e("(cn=a**b)"), FilterError::EmptySubstring(6));
        assert_eq!(e("(cn=***)"), FilterError::EmptySubstring(5));
    }

    #[test]
    fn composites() {
        let f = p("(&(objectClass=user)(|(cn=a)(!(sn=b)))(&)(|))");
        assert_eq!(
            f,
            Filter::and(vec![
                Filter::eq("objectClass", "user"),
                Filter::or(vec![
                    Filter::eq("cn", "a"),
                    Filter::not(Filter::eq("sn", "b"))
                ]),
                Filter::and(vec![]),
                Filter::or(vec![]),
            ])
        );
        assert_eq!(
            f.to_string(),
            "(&(objectClass=user)(|(cn=a)(!(sn=b)))(&)(|))"
        );
        assert_eq!(f.depth(), 4);
        assert_eq!(f.attributes(), vec!["objectClass", "cn", "sn"]);
        assert_eq!(p("(&(CN=a)(cn=b))").attributes(), vec!["CN"]);
        assert_eq!(p("(a=b)").depth(), 1);
        assert_eq!(p("(&)").depth(), 1);
    }

    #[test]
    fn extensible() {
        let x = |attr: Option<&str>, rule: Option<&str>, dn: bool| {
            Filter::Extensible(ExtensibleMatch {
                rule: rule.map(Into::into),
                attr: attr.map(Into::into),
                value: b"v".to_vec(),
                dn_attributes: dn,
            })
        };
        assert_eq!(
            p("(cn:dn:2.5.13.5:=v)"),
            x(Some("cn"), Some("2.5.13.5"), true)
        );
        assert_eq!(
            p("(cn:caseExactMatch:=v)"),
            x(Some("cn"), Some("caseExactMatch"), false)
        );
        assert_eq!(p("(cn:=v)"), x(Some("cn"), None, false));
        assert_eq!(p("(cn:DN:=v)"), x(Some("cn"), None, true));
        assert_eq!(p("(:dn:2.5.13.5:=v)"), x(None, Some("2.5.13.5"), true));
        assert_eq!(p("(:2.5.13.5:=v)"), x(None, Some("2.5.13.5"), false));
        assert_eq!(
            p("(userAccountControl:1.2.840.113556.1.4.803:=2)").attributes(),
            vec!["userAccountControl"]
        );
        for t in [
            "(cn:dn:2.5.13.5:=v)",
            "(cn:=v)",
            "(:dn:2.5.13.5:=v)",
            "(:1.2:=v)",
            "(cn:dn:=v)",
        ] {
            assert_eq!(p(t).to_string(), t);
        }
        assert_eq!(e("(:=v)"), FilterError::MissingRule(1));
        assert_eq!(e("(:dn:=v)"), FilterError::MissingRule(1));
        assert_eq!(e("(cn:1..2:=v)"), FilterError::BadMatchingRule(4));
        assert_eq!(e("(cn:rule=v)"), FilterError::MissingEquals(8));
        assert_eq!(e("(cn:dn=v)"), FilterError::MissingEquals(6));
        assert_eq!(e("(cn:=a*b)"), FilterError::UnexpectedWildcard(6));
    }

    #[test]
    fn errors() {
        assert_eq!(e(""), FilterError::Empty);
        assert_eq!(e("  "), FilterError::Empty);
        assert_eq!(e("(cn=a"), FilterError::UnbalancedParen(5));
        assert_eq!(e("(&(cn=a)"), FilterError::UnbalancedParen(8));
        assert_eq!(e("(cn=a))"), FilterError::UnbalancedParen(6));
        assert_eq!(
            e("(&(a=b)(cn=a))))").to_string(),
            "bad filter at byte 14: unbalanced parenthesis"
        );
        assert_eq!(e("(cn=a)x"), FilterError::TrailingGarbage(6));
        assert_eq!(e("(cn=a) x"), FilterError::TrailingGarbage(6));
        assert_eq!(e(r"(cn=\4)"), FilterError::BadEscape(4));
        assert_eq!(e(r"(cn=\zz)"), FilterError::BadEscape(4));
        assert_eq!(e(r"(cn=a\)"), FilterError::BadEscape(5));
        assert_eq!(e(r"(cn=\2)"), FilterError::BadEscape(4));
        assert_eq!(e("(cn)"), FilterError::MissingEquals(3));
        assert_eq!(e("(cn =a)"), FilterError::MissingEquals(3));
        assert_eq!(e("(cn!=a)"), FilterError::MissingEquals(3));
        assert_eq!(e("(=a)"), FilterError::BadAttribute(1));
        assert_eq!(e("()"), FilterError::BadAttribute(1));
        assert_eq!(e("(1cn=a)"), FilterError::BadAttribute(1));
        assert_eq!(e("(cn;=a)"), FilterError::BadAttribute(1));
        assert_eq!(e("(c_n=a)"), FilterError::MissingEquals(2));
        assert_eq!(e("(a>=1*)"), FilterError::UnexpectedWildcard(5));
        assert_eq!(e("(cn=a(b)"), FilterError::UnescapedChar(5));
        assert_eq!(e("(cn=a\0)"), FilterError::UnescapedChar(5));
        assert_eq!(e("(&x)"), FilterError::ExpectedClose(2));
        assert_eq!(e("(!)"), FilterError::ExpectedOpen(2));
        assert_eq!(e("(!(a=b)(c=d))"), FilterError::ExpectedClose(7));
        assert_eq!(e(" (cn=a)"), FilterError::BadAttribute(0));
    }

    #[test]
    fn depth_limit() {
        let ok = "(!".repeat(MAX_FILTER_DEPTH - 1) + "(a=b)" + &")".repeat(MAX_FILTER_DEPTH - 1);
        assert_eq!(p(&ok).depth(), MAX_FILTER_DEPTH);
        let deep = "(&".repeat(MAX_FILTER_DEPTH) + &")".repeat(MAX_FILTER_DEPTH);
        assert_eq!(p(&deep).depth(), MAX_FILTER_DEPTH);
        let too = "(!".repeat(MAX_FILTER_DEPTH) + "(a=b)" + &")".repeat(MAX_FILTER_DEPTH);
        assert!(matches!(e(&too), FilterError::TooDeep(_)));
        let huge = "(&".repeat(1_000_000);
        assert!(matches!(e(&huge), FilterError::TooDeep(_)));
    }

    #[test]
    fn deep_built_values_display() {
        let mut f = Filter::present("a");
        for _ in 0..100_000 {
            f = Filter::not(f);
        }
        assert_eq!(f.depth(), 100_001);
        assert_eq!(f.to_string().len(), 100_000 * 3 + 5);
        assert_eq!(f.attributes(), vec!["a"]);
        // Unwind iteratively so the test itself does not overflow on drop.
        while let Filter::Not(inner) = f {
            f = *inner;
        }
    }

    #[test]
    fn wide_filters_are_linear() {
        let s = format!("(|{})", "(cn=a)".repeat(100_000));
        let f = p(&s);
        assert_eq!(f.attributes(), vec!["cn"]);
        assert_eq!(f.to_string(), s);
        let s = format!("(cn={})", "a*".repeat(100_000));
        assert!(matches!(p(&s), Filter::Substrings(_)));
    }
}
