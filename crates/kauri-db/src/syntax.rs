//! Attribute value syntaxes (RFC 4517) and their matching rules.
//!
//! The database stores every attribute value twice: as given, and in a
//! *normalized* form produced by [`Syntax::normalize`]. Indexes hold the
//! normalized form only, so the normalizations here are designed so that:
//!
//! * two values are equal under the syntax's equality rule iff their
//!   normalized forms are byte-equal, and
//! * for syntaxes with an ordering rule ([`Syntax::supports_ordering`]),
//!   value order is the byte (lexicographic) order of normalized forms.
//!
//! Substring assertions are handled by [`Syntax::normalize_substring`]; see
//! its documentation for the matching contract.

use std::borrow::Cow;

/// The value syntaxes known to the directory; each selects how values are
/// validated, compared and ordered.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Syntax {
    /// UTF-8 text compared case-insensitively (caseIgnoreMatch).
    DirectoryString,
    /// UTF-8 text compared case-sensitively, insignificant spaces ignored.
    CaseExactString,
    /// ASCII text compared case-insensitively.
    Ia5String,
    /// Digits and spaces; spaces are insignificant.
    NumericString,
    /// AD's PrintableString: any text (AD does not restrict its alphabet), case-insensitive.
    PrintableString,
    /// Telephone numbers; case, spaces and hyphens are insignificant.
    TelephoneNumber,
    /// Signed 64-bit decimal integers.
    Integer,
    /// `TRUE` or `FALSE`.
    Boolean,
    /// GeneralizedTime timestamps (RFC 4517 section 3.3.13).
    GeneralizedTime,
    /// Two-digit-year UTCTime timestamps (RFC 4517 section 3.3.34).
    UtcTime,
    /// Arbitrary bytes compared exactly.
    OctetString,
    /// Distinguished names, compared by their normalized form.
    Dn,
    /// Object identifiers: numeric OIDs or descriptors.
    Oid,
    /// 16-byte GUIDs in the Windows byte layout (e.g. `objectGUID`).
    Guid,
    /// Windows security identifiers in binary form (e.g. `objectSid`).
    Sid,
}

/// Which component of a substring assertion is being normalized; this
/// decides which edge whitespace is insignificant.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SubstringPosition {
    /// The `initial` component (value must start with it).
    Initial,
    /// One of the `any` components (value must contain it).
    Any,
    /// The `final` component (value must end with it).
    Final,
}

/// A value that does not conform to its syntax.
#[derive(Debug, thiserror::Error, Clone, PartialEq, Eq)]
#[error("invalid {} value: {}", .syntax.name(), .reason)]
pub struct SyntaxError {
    /// The syntax the value was checked against.
    pub syntax: Syntax,
    /// Human-readable explanation of what is wrong.
    pub reason: String,
}

/// Unicode-aware case folding used for every case-insensitive comparison:
/// characters are lowercased (`char::to_lowercase`), runs of whitespace are
/// collapsed to one space and leading/trailing whitespace is removed.
pub fn casefold(s: &str) -> String {
    fold(s, true, true, true)
}

/// [`casefold`] that borrows its input when it is already folded.
pub fn casefold_cow(s: &str) -> Cow<'_, str> {
    match fold_cow(s.as_bytes(), s, true, true, true) {
        Cow::Borrowed(_) => Cow::Borrowed(s),
        Cow::Owned(v) => Cow::Owned(
            String::from_utf8(v)
                .unwrap_or_else(|e| String::from_utf8_lossy(e.as_bytes()).into_owned()),
        ),
    }
}

/// Shared worker for case folding and whitespace collapsing.
fn fold(s: &str, lower: bool, trim_start: bool, trim_end: bool) -> String {
    let mut out = String::with_capacity(s.len());
    let mut pending_space = false;
    let mut seen_any = false;
    for c in s.chars() {
        if c.is_whitespace() {
            pending_space = true;
            continue;
        }
        if pending_space && (seen_any || !trim_start) {
            out.push(' ');
        }
        pending_space = false;
        seen_any = true;
        if lower {
            out.extend(c.to_lowercase());
        } else {
            out.push(c);
        }
    }
    if pending_space && !trim_end && (seen_any || !trim_start) {
        out.push(' ');
    }
    out
}

fn is_ascii_ws(b: u8) -> bool {
    matches!(b, b' ' | b'\t' | b'\n' | 0x0b | 0x0c | b'\r')
}

/// [`fold`] with a fast path for ASCII text: already-normalized input is borrowed without
/// any allocation, other ASCII input is folded byte by byte.
fn fold_cow<'a>(
    raw: &'a [u8],
    s: &str,
    lower: bool,
    trim_start: bool,
    trim_end: bool,
) -> Cow<'a, [u8]> {
    if !s.is_ascii() {
        return cow_from(raw, fold(s, lower, trim_start, trim_end));
    }
    let b = s.as_bytes();
    let edge_ws = |x: Option<&u8>| x.is_some_and(|c| is_ascii_ws(*c));
    let edges_clean = !(trim_start && edge_ws(b.first()) || trim_end && edge_ws(b.last()));
    let clean = edges_clean
        && !b
            .iter()
            .any(|&c| (lower && c.is_ascii_uppercase()) || (is_ascii_ws(c) && c != b' '))
        && !b.windows(2).any(|w| w == b"  ");
    if clean {
        return Cow::Borrowed(raw);
    }
    let mut out = Vec::with_capacity(b.len());
    let mut pending_space = false;
    let mut seen_any = false;
    for &c in b {
        if is_ascii_ws(c) {
            pending_space = true;
            continue;
        }
        if pending_space && (seen_any || !trim_start) {
            out.push(b' ');
        }
        pending_space = false;
        seen_any = true;
        out.push(if lower { c.to_ascii_lowercase() } else { c });
    }
    if pending_space && !trim_end && (seen_any || !trim_start) {
        out.push(b' ');
    }
    if out == raw {
        Cow::Borrowed(raw)
    } else {
        Cow::Owned(out)
    }
}

/// Borrow when the normalized form equals the input, to avoid copies in the
/// common already-normalized case.
fn cow_from(raw: &[u8], norm: String) -> Cow<'_, [u8]> {
    if norm.as_bytes() == raw {
        Cow::Borrowed(raw)
    } else {
        Cow::Owned(norm.into_bytes())
    }
}

/// True if `s` is an RFC 4512 descriptor: `ALPHA *(ALPHA / DIGIT / "-")`.
pub fn is_descriptor(s: &str) -> bool {
    let b = s.as_bytes();
    match b.first() {
        Some(c) if c.is_ascii_alphabetic() => {
            b.iter().all(|&c| c.is_ascii_alphanumeric() || c == b'-')
        }
        _ => false,
    }
}

/// True if `s` is an RFC 4512 numeric OID: `number 1*("." number)` where a
/// number has no leading zeros.
pub(crate) fn is_numeric_oid(s: &str) -> bool {
    let mut parts = 0usize;
    for part in s.split('.') {
        let b = part.as_bytes();
        if b.is_empty() || !b.iter().all(u8::is_ascii_digit) {
            return false;
        }
        if b.len() > 1 && b.first() == Some(&b'0') {
            return false;
        }
        parts += 1;
    }
    parts >= 2
}

/// Order-preserving encoding of a signed 64-bit number in 1 to 9 bytes: small numbers, the
/// common case in a directory (flags, counters, zeros), take one or two.
///
/// A number `v >= 0` needing `n` bytes (0 for zero) is `0x80 + n` and its `n` low bytes
/// big-endian; a negative one is `0x7f - n` and the `n` low bytes of `!m` where `m = -v - 1`
/// needs `n` bytes. Longer magnitudes get larger (non-negative) or smaller (negative) first
/// bytes, and numbers with the same first byte have the same length, so byte order is
/// number order and no encoding is a prefix of another.
fn encode_i64(v: i64) -> Vec<u8> {
    let (m, negative) = if v < 0 {
        (!v as u64, true)
    } else {
        (v as u64, false)
    };
    let n = 8 - (m.leading_zeros() / 8) as usize;
    let mut out = Vec::with_capacity(n + 1);
    if negative {
        out.push(0x7f - n as u8);
        out.extend((!m).to_be_bytes()[8 - n..].iter());
    } else {
        out.push(0x80 + n as u8);
        out.extend(m.to_be_bytes()[8 - n..].iter());
    }
    out
}

const ALL: [Syntax; 15] = [
    Syntax::DirectoryString,
    Syntax::CaseExactString,
    Syntax::Ia5String,
    Syntax::NumericString,
    Syntax::PrintableString,
    Syntax::TelephoneNumber,
    Syntax::Integer,
    Syntax::Boolean,
    Syntax::GeneralizedTime,
    Syntax::UtcTime,
    Syntax::OctetString,
    Syntax::Dn,
    Syntax::Oid,
    Syntax::Guid,
    Syntax::Sid,
];

impl Syntax {
    /// Every syntax, so that callers can enumerate them (e.g. for schema
    /// listings or exhaustive tests).
    pub const ALL: [Syntax; 15] = ALL;

    fn err(&self, reason: impl Into<String>) -> SyntaxError {
        SyntaxError {
            syntax: *self,
            reason: reason.into(),
        }
    }

    fn utf8<'a>(&self, raw: &'a [u8]) -> Result<&'a str, SyntaxError> {
        std::str::from_utf8(raw)
            .map_err(|e| self.err(format!("not valid UTF-8 (at byte {})", e.valid_up_to())))
    }

    /// Validates the character repertoire of a string syntax and returns the
    /// value as text.
    fn check_text<'a>(&self, raw: &'a [u8]) -> Result<&'a str, SyntaxError> {
        let s = self.utf8(raw)?;
        match self {
            Syntax::Ia5String => {
                if let Some(pos) = raw.iter().position(|b| !b.is_ascii()) {
                    return Err(self.err(format!("non-ASCII byte at {pos}")));
                }
            }
            Syntax::NumericString => {
                if let Some(pos) = raw.iter().position(|&b| !(b.is_ascii_digit() || b == b' ')) {
                    return Err(self.err(format!("only digits and spaces allowed (byte {pos})")));
                }
            }
            _ => {}
        }
        Ok(s)
    }

    /// Canonical comparable form of a stored or asserted value; validates the
    /// value. Equality is byte equality of the results and, where ordering
    /// is supported, order is their byte order.
    pub fn normalize<'a>(&self, raw: &'a [u8]) -> Result<Cow<'a, [u8]>, SyntaxError> {
        match self {
            Syntax::DirectoryString | Syntax::PrintableString | Syntax::CaseExactString => {
                if raw.is_empty() {
                    return Err(self.err("empty value"));
                }
                let s = self.check_text(raw)?;
                let lower = *self != Syntax::CaseExactString;
                Ok(fold_cow(raw, s, lower, true, true))
            }
            Syntax::Ia5String => {
                let s = self.check_text(raw)?;
                Ok(fold_cow(raw, s, true, true, true))
            }
            Syntax::NumericString => {
                if raw.is_empty() {
                    return Err(self.err("empty value"));
                }
                self.check_text(raw)?;
                if raw.contains(&b' ') {
                    Ok(Cow::Owned(
                        raw.iter().copied().filter(|&b| b != b' ').collect(),
                    ))
                } else {
                    Ok(Cow::Borrowed(raw))
                }
            }
            Syntax::TelephoneNumber => {
                if raw.is_empty() {
                    return Err(self.err("empty value"));
                }
                let s = self.check_text(raw)?;
                Ok(cow_from(raw, telephone_fold(s)))
            }
            Syntax::Integer => parse_integer(raw)
                .map(|v| Cow::Owned(encode_i64(v)))
                .map_err(|r| self.err(r)),
            Syntax::Boolean => {
                if raw.eq_ignore_ascii_case(b"TRUE") {
                    Ok(cow_from(raw, "TRUE".to_owned()))
                } else if raw.eq_ignore_ascii_case(b"FALSE") {
                    Ok(cow_from(raw, "FALSE".to_owned()))
                } else {
                    Err(self.err("expected TRUE or FALSE"))
                }
            }
            Syntax::GeneralizedTime => parse_generalized_time(raw)
                .map(|us| Cow::Owned(encode_i64(us)))
                .map_err(|r| self.err(r)),
            Syntax::UtcTime => parse_utc_time(raw)
                .map(|us| Cow::Owned(encode_i64(us)))
                .map_err(|r| self.err(r)),
            Syntax::OctetString => Ok(Cow::Borrowed(raw)),
            Syntax::Oid => {
                let s = self
                    .utf8(raw)?
                    .trim_matches(|c: char| c.is_ascii_whitespace());
                if is_numeric_oid(s) || is_descriptor(s) {
                    Ok(cow_from(raw, s.to_ascii_lowercase()))
                } else {
                    Err(self.err("expected a numeric OID or a descriptor"))
                }
            }
            Syntax::Dn => {
                let s = self.utf8(raw)?;
                let dn = crate::dn::Dn::parse(s).map_err(|e| self.err(e.to_string()))?;
                Ok(cow_from(raw, dn.norm().to_owned()))
            }
            Syntax::Guid => normalize_guid(raw).map_err(|r| self.err(r)),
            Syntax::Sid => normalize_sid(raw).map_err(|r| self.err(r)),
        }
    }

    /// Normalized form of one substring-assertion component; errors for
    /// syntaxes without substring matching.
    ///
    /// Contract: a value `v` matches a substring filter iff `normalize(v)`
    /// starts with the normalized `initial`, contains the normalized `any`
    /// components in order (non-overlapping) after it, and ends with the
    /// normalized `final` (not overlapping the earlier parts). For string
    /// syntaxes the component is lowercased (except CaseExactString) and
    /// internal whitespace runs collapse to one space; leading whitespace is
    /// dropped only for `Initial` and trailing whitespace only for `Final`,
    /// because whitespace at an inner edge of a component is significant
    /// (it must meet a space in the value). NumericString drops spaces and
    /// TelephoneNumber drops whitespace and hyphens entirely. As with
    /// RFC 4518 insignificant-space handling, whitespace on both sides of a
    /// wildcard (`"a *"` then `" b"`) counts as two separate spaces.
    pub fn normalize_substring<'a>(
        &self,
        part: &'a [u8],
        position: SubstringPosition,
    ) -> Result<Cow<'a, [u8]>, SyntaxError> {
        if !self.supports_substrings() {
            return Err(self.err("this syntax has no substring matching rule"));
        }
        let s = self.check_text(part)?;
        let norm = match self {
            Syntax::NumericString => s.chars().filter(|&c| c != ' ').collect(),
            Syntax::TelephoneNumber => telephone_fold(s),
            _ => fold(
                s,
                *self != Syntax::CaseExactString,
                position == SubstringPosition::Initial,
                position == SubstringPosition::Final,
            ),
        };
        Ok(cow_from(part, norm))
    }

    /// Whether the syntax has an ordering rule (so `>=`/`<=` filters and
    /// range scans over normalized bytes are meaningful).
    pub fn supports_ordering(&self) -> bool {
        matches!(
            self,
            Syntax::DirectoryString
                | Syntax::CaseExactString
                | Syntax::Ia5String
                | Syntax::NumericString
                | Syntax::PrintableString
                | Syntax::TelephoneNumber
                | Syntax::Integer
                | Syntax::GeneralizedTime
                | Syntax::UtcTime
                | Syntax::OctetString
        )
    }

    /// Whether the syntax has a substring matching rule (so
    /// [`Syntax::normalize_substring`] succeeds).
    pub fn supports_substrings(&self) -> bool {
        matches!(
            self,
            Syntax::DirectoryString
                | Syntax::CaseExactString
                | Syntax::Ia5String
                | Syntax::NumericString
                | Syntax::PrintableString
                | Syntax::TelephoneNumber
        )
    }

    /// Stable short name of the syntax, used in schema files and messages.
    pub fn name(&self) -> &'static str {
        match self {
            Syntax::DirectoryString => "directoryString",
            Syntax::CaseExactString => "caseExactString",
            Syntax::Ia5String => "ia5String",
            Syntax::NumericString => "numericString",
            Syntax::PrintableString => "printableString",
            Syntax::TelephoneNumber => "telephoneNumber",
            Syntax::Integer => "integer",
            Syntax::Boolean => "boolean",
            Syntax::GeneralizedTime => "generalizedTime",
            Syntax::UtcTime => "utcTime",
            Syntax::OctetString => "octetString",
            Syntax::Dn => "dn",
            Syntax::Oid => "oid",
            Syntax::Guid => "guid",
            Syntax::Sid => "sid",
        }
    }

    /// Case-insensitive inverse of [`Syntax::name`], for reading schema files.
    pub fn from_name(name: &str) -> Option<Syntax> {
        ALL.into_iter()
            .find(|s| s.name().eq_ignore_ascii_case(name))
    }

    /// Maps a standard LDAP syntax OID (RFC 4517) to a syntax, for reading
    /// LDAP schema definitions. A trailing length bound such as `{64}` is
    /// ignored.
    pub fn from_ldap_oid(oid: &str) -> Option<Syntax> {
        let oid = oid.trim();
        let oid = match oid.find('{') {
            Some(i) if oid.ends_with('}') => oid.get(..i)?,
            _ => oid,
        };
        let suffix = oid.strip_prefix("1.3.6.1.4.1.1466.115.121.1.")?;
        Some(match suffix {
            "15" => Syntax::DirectoryString,
            "27" => Syntax::Integer,
            "7" => Syntax::Boolean,
            "24" => Syntax::GeneralizedTime,
            "53" => Syntax::UtcTime,
            "40" => Syntax::OctetString,
            "12" => Syntax::Dn,
            "38" => Syntax::Oid,
            "26" => Syntax::Ia5String,
            "36" => Syntax::NumericString,
            "44" => Syntax::PrintableString,
            "50" => Syntax::TelephoneNumber,
            _ => return None,
        })
    }
}

/// Telephone number folding: lowercase, whitespace and hyphens removed.
fn telephone_fold(s: &str) -> String {
    s.chars()
        .filter(|&c| !c.is_whitespace() && c != '-')
        .flat_map(char::to_lowercase)
        .collect()
}

/// Parses an optional sign followed by decimal digits into an `i64`.
fn parse_integer(raw: &[u8]) -> Result<i64, String> {
    let (neg, digits) = match raw.split_first() {
        Some((b'-', rest)) => (true, rest),
        Some((b'+', rest)) => (false, rest),
        Some(_) => (false, raw),
        None => return Err("empty value".into()),
    };
    if digits.is_empty() {
        return Err("no digits".into());
    }
    let mut mag: u64 = 0;
    for &b in digits {
        if !b.is_ascii_digit() {
            return Err(format!("unexpected character {:?}", char::from(b)));
        }
        mag = mag
            .checked_mul(10)
            .and_then(|m| m.checked_add(u64::from(b - b'0')))
            .ok_or("out of 64-bit range")?;
    }
    if neg {
        if mag > 1u64 << 63 {
            return Err("out of 64-bit range".into());
        }
        Ok((mag as i64).wrapping_neg())
    } else {
        i64::try_from(mag).map_err(|_| "out of 64-bit range".into())
    }
}

/// A Unix time in seconds as GeneralizedTime (`YYYYMMDDHHMMSS.0Z`), the form AD writes
/// for whenCreated, whenChanged and the root DSE's currentTime.
pub fn generalized_time(secs: u64) -> String {
    let rem = secs % 86_400;
    let (y, m, d) = civil_from_days((secs / 86_400) as i64);
    format!(
        "{y:04}{m:02}{d:02}{:02}{:02}{:02}.0Z",
        rem / 3600,
        (rem / 60) % 60,
        rem % 60
    )
}

/// The proleptic Gregorian date of a day count since 1970-01-01; the inverse of
/// [`days_from_civil`].
fn civil_from_days(z: i64) -> (i64, u32, u32) {
    let z = z + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let m = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    (yoe + era * 400 + i64::from(m <= 2), m, d)
}

/// Days since 1970-01-01 of a proleptic Gregorian date.
fn days_from_civil(y: i64, m: i64, d: i64) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = if y >= 0 { y } else { y - 399 } / 400;
    let yoe = y - era * 400;
    let mp = if m > 2 { m - 3 } else { m + 9 };
    let doy = (153 * mp + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

fn is_leap(y: i64) -> bool {
    (y % 4 == 0 && y % 100 != 0) || y % 400 == 0
}

fn days_in_month(y: i64, m: i64) -> i64 {
    match m {
        1 | 3 | 5 | 7 | 8 | 10 | 12 => 31,
        4 | 6 | 9 | 11 => 30,
        2 if is_leap(y) => 29,
        _ => 28,
    }
}

/// Byte cursor for the fixed-layout time grammars.
struct Cursor<'a> {
    b: &'a [u8],
    i: usize,
}

impl Cursor<'_> {
    fn peek(&self) -> Option<u8> {
        self.b.get(self.i).copied()
    }
    fn peek_digit(&self) -> bool {
        self.peek().is_some_and(|c| c.is_ascii_digit())
    }
    fn digits(&mut self, n: usize, what: &str) -> Result<i64, String> {
        let mut v = 0i64;
        for _ in 0..n {
            match self.peek() {
                Some(c) if c.is_ascii_digit() => {
                    v = v * 10 + i64::from(c - b'0');
                    self.i += 1;
                }
                _ => return Err(format!("expected two-digit {what} at byte {}", self.i)),
            }
        }
        Ok(v)
    }
    fn ranged(&mut self, n: usize, what: &str, lo: i64, hi: i64) -> Result<i64, String> {
        let v = self.digits(n, what)?;
        if v < lo || v > hi {
            return Err(format!("{what} {v} out of range {lo}-{hi}"));
        }
        Ok(v)
    }
}

/// Combines broken-down UTC-offset time into microseconds since the epoch.
fn to_micros(
    (y, mo, d): (i64, i64, i64),
    (h, mi, s): (i64, i64, i64),
    frac_us: i64,
    offset_s: i64,
) -> i64 {
    let secs = days_from_civil(y, mo, d) * 86_400 + h * 3_600 + mi * 60 + s - offset_s;
    secs * 1_000_000 + frac_us
}

/// Parses a time-zone suffix (`Z`, `+hh[mm]`, `-hh[mm]` or nothing) and
/// returns the offset in seconds east of UTC.
fn parse_zone(c: &mut Cursor<'_>, minutes_required: bool) -> Result<i64, String> {
    let offset = match c.peek() {
        None => 0,
        Some(b'Z') => {
            c.i += 1;
            0
        }
        Some(sign @ (b'+' | b'-')) => {
            c.i += 1;
            let hh = c.ranged(2, "zone hour", 0, 23)?;
            let mm = if minutes_required || c.peek_digit() {
                c.ranged(2, "zone minute", 0, 59)?
            } else {
                0
            };
            let off = hh * 3_600 + mm * 60;
            if sign == b'-' {
                -off
            } else {
                off
            }
        }
        Some(_) => return Err(format!("unexpected character at byte {}", c.i)),
    };
    if c.i != c.b.len() {
        return Err(format!("trailing characters at byte {}", c.i));
    }
    Ok(offset)
}

/// Parses RFC 4517 GeneralizedTime (zone optional, UTC assumed) into
/// microseconds since 1970-01-01T00:00:00Z.
pub fn parse_generalized_time(raw: &[u8]) -> Result<i64, String> {
    let mut c = Cursor { b: raw, i: 0 };
    let y = c.digits(4, "year")?;
    let mo = c.ranged(2, "month", 1, 12)?;
    let d = c.ranged(2, "day", 1, 31)?;
    if d > days_in_month(y, mo) {
        return Err(format!("day {d} out of range for {y:04}-{mo:02}"));
    }
    let h = c.ranged(2, "hour", 0, 23)?;
    let (mut mi, mut s) = (0, 0);
    let mut unit_us: i64 = 3_600_000_000;
    if c.peek_digit() {
        mi = c.ranged(2, "minute", 0, 59)?;
        unit_us = 60_000_000;
        if c.peek_digit() {
            s = c.ranged(2, "second", 0, 60)?;
            unit_us = 1_000_000;
        }
    }
    let mut frac_us = 0i64;
    if matches!(c.peek(), Some(b'.' | b',')) {
        c.i += 1;
        let start = c.i;
        let mut num: u128 = 0;
        let mut den: u128 = 1;
        while c.peek_digit() {
            if c.i - start < 18 {
                num = num * 10 + u128::from(c.peek().unwrap_or(b'0') - b'0');
                den *= 10;
            }
            c.i += 1;
        }
        if c.i == start {
            return Err("fraction without digits".into());
        }
        let us = num * unit_us as u128 / den;
        frac_us = i64::try_from(us).map_err(|_| "fraction out of range".to_string())?;
    }
    let offset = parse_zone(&mut c, false)?;
    Ok(to_micros((y, mo, d), (h, mi, s), frac_us, offset))
}

/// Parses RFC 4517 UTCTime (zone optional, UTC assumed) into microseconds
/// since the epoch; two-digit years 50-99 are 19xx, others 20xx.
fn parse_utc_time(raw: &[u8]) -> Result<i64, String> {
    let mut c = Cursor { b: raw, i: 0 };
    let yy = c.digits(2, "year")?;
    let y = if yy >= 50 { 1900 + yy } else { 2000 + yy };
    let mo = c.ranged(2, "month", 1, 12)?;
    let d = c.ranged(2, "day", 1, 31)?;
    if d > days_in_month(y, mo) {
        return Err(format!("day {d} out of range for {y:04}-{mo:02}"));
    }
    let h = c.ranged(2, "hour", 0, 23)?;
    let mi = c.ranged(2, "minute", 0, 59)?;
    let s = if c.peek_digit() {
        c.ranged(2, "second", 0, 60)?
    } else {
        0
    };
    let offset = parse_zone(&mut c, true)?;
    Ok(to_micros((y, mo, d), (h, mi, s), 0, offset))
}

fn hex_val(b: u8) -> Option<u8> {
    match b {
        b'0'..=b'9' => Some(b - b'0'),
        b'a'..=b'f' => Some(b - b'a' + 10),
        b'A'..=b'F' => Some(b - b'A' + 10),
        _ => None,
    }
}

/// Decodes an even-length hex string into bytes.
pub(crate) fn decode_hex(s: &[u8]) -> Option<Vec<u8>> {
    if !s.len().is_multiple_of(2) {
        return None;
    }
    s.chunks_exact(2)
        .map(|p| match p {
            [a, b] => Some(hex_val(*a)? << 4 | hex_val(*b)?),
            _ => None,
        })
        .collect()
}

/// Accepts 16 raw bytes or the 36-character text form (optionally braced).
fn normalize_guid(raw: &[u8]) -> Result<Cow<'_, [u8]>, String> {
    if raw.len() == 16 {
        return Ok(Cow::Borrowed(raw));
    }
    let text = match raw {
        [b'{', inner @ .., b'}'] => inner,
        _ => raw,
    };
    if text.len() != 36 {
        return Err(format!(
            "expected 16 bytes or xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx, got {} bytes",
            raw.len()
        ));
    }
    let groups: Vec<&[u8]> = text.split(|&b| b == b'-').collect();
    let lens: Vec<usize> = groups.iter().map(|g| g.len()).collect();
    if lens != [8, 4, 4, 4, 12] {
        return Err("malformed GUID text form".into());
    }
    let mut out = Vec::with_capacity(16);
    for (i, g) in groups.iter().enumerate() {
        let mut bytes = decode_hex(g).ok_or("non-hex digit in GUID")?;
        if i < 3 {
            bytes.reverse();
        }
        out.extend_from_slice(&bytes);
    }
    Ok(Cow::Owned(out))
}

/// Text form (`xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx`, lowercase) of a GUID
/// in Windows byte layout; the inverse of GUID text normalization.
pub fn guid_to_string(bytes: &[u8; 16]) -> String {
    let [a0, a1, a2, a3, b0, b1, c0, c1, d0, d1, e0, e1, e2, e3, e4, e5] = *bytes;
    let groups: [&[u8]; 5] = [
        &[a3, a2, a1, a0],
        &[b1, b0],
        &[c1, c0],
        &[d0, d1],
        &[e0, e1, e2, e3, e4, e5],
    ];
    groups
        .iter()
        .map(|g| g.iter().map(|b| format!("{b:02x}")).collect::<String>())
        .collect::<Vec<_>>()
        .join("-")
}

/// Checks the binary SID layout.
fn check_binary_sid(raw: &[u8]) -> Result<(), String> {
    match raw {
        [1, n, ..] if *n <= 15 => {
            if raw.len() == 8 + 4 * usize::from(*n) {
                Ok(())
            } else {
                Err(format!(
                    "binary SID with {n} sub-authorities must be {} bytes",
                    8 + 4 * usize::from(*n)
                ))
            }
        }
        [1, n, ..] => Err(format!("{n} sub-authorities (at most 15)")),
        _ => Err("expected a binary SID (revision 1) or S-1-... text".into()),
    }
}

/// Accepts the binary layout or `S-1-<authority>-<sub>...` text.
fn normalize_sid(raw: &[u8]) -> Result<Cow<'_, [u8]>, String> {
    if matches!(raw.first(), Some(b'S' | b's')) {
        return parse_sid_text(raw).map(Cow::Owned);
    }
    check_binary_sid(raw).map(|()| Cow::Borrowed(raw))
}

/// Binary form of `S-1-<authority>-<sub>...` text; the inverse of [`sid_to_string`].
pub fn parse_sid_text(raw: &[u8]) -> Result<Vec<u8>, String> {
    let s = std::str::from_utf8(raw).map_err(|_| "SID text is not UTF-8".to_string())?;
    let mut parts = s.split('-');
    let _s = parts.next();
    if parts.next() != Some("1") {
        return Err("SID text must start with S-1-".into());
    }
    let auth_text = parts.next().ok_or("missing identifier authority")?;
    let decimal = |t: &str| -> Option<u64> {
        if t.is_empty() || !t.bytes().all(|b| b.is_ascii_digit()) {
            return None;
        }
        t.parse().ok()
    };
    let authority = if let Some(hex) = auth_text
        .strip_prefix("0x")
        .or_else(|| auth_text.strip_prefix("0X"))
    {
        if hex.is_empty() || hex.len() > 12 || !hex.bytes().all(|b| b.is_ascii_hexdigit()) {
            return Err("bad hexadecimal identifier authority".into());
        }
        u64::from_str_radix(hex, 16).map_err(|e| e.to_string())?
    } else {
        decimal(auth_text).ok_or("bad identifier authority")?
    };
    if authority >= 1 << 48 {
        return Err("identifier authority exceeds 48 bits".into());
    }
    let mut subs = Vec::new();
    for p in parts {
        let v = decimal(p)
            .and_then(|v| u32::try_from(v).ok())
            .ok_or("bad sub-authority")?;
        if subs.len() == 15 {
            return Err("more than 15 sub-authorities".into());
        }
        subs.push(v);
    }
    let mut out = Vec::with_capacity(8 + 4 * subs.len());
    out.push(1);
    out.push(subs.len() as u8);
    out.extend_from_slice(authority.to_be_bytes().get(2..).unwrap_or(&[]));
    for v in subs {
        out.extend_from_slice(&v.to_le_bytes());
    }
    Ok(out)
}

/// Text form (`S-1-5-21-...`) of a binary SID, or `None` if the bytes are
/// not a well-formed SID; used to display `objectSid` and similar values.
pub fn sid_to_string(bin: &[u8]) -> Option<String> {
    check_binary_sid(bin).ok()?;
    let mut auth_bytes = [0u8; 8];
    auth_bytes.get_mut(2..)?.copy_from_slice(bin.get(2..8)?);
    let authority = u64::from_be_bytes(auth_bytes);
    let mut s = if authority >= 1 << 32 {
        format!("S-1-0x{authority:012X}")
    } else {
        format!("S-1-{authority}")
    };
    for chunk in bin.get(8..)?.chunks_exact(4) {
        let mut b = [0u8; 4];
        b.copy_from_slice(chunk);
        s.push_str(&format!("-{}", u32::from_le_bytes(b)));
    }
    Some(s)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn generalized_time_from_unix_seconds() {
        assert_eq!(super::generalized_time(0), "19700101000000.0Z");
        assert_eq!(super::generalized_time(951_782_400), "20000229000000.0Z");
        assert_eq!(super::generalized_time(1_600_000_000), "20200913122640.0Z");
    }

    fn n(s: Syntax, v: &str) -> Vec<u8> {
        s.normalize(v.as_bytes()).unwrap().into_owned()
    }

    fn bad(s: Syntax, v: &[u8]) {
        assert!(s.normalize(v).is_err(), "{s:?} accepted {v:?}");
    }

    #[test]
    fn casefold_basics() {
        assert_eq!(casefold("  Hello   WORLD\t "), "hello world");
        assert_eq!(casefold("ÄÖÜ  Straße"), "äöü straße");
        assert_eq!(casefold(""), "");
        assert_eq!(casefold("   "), "");
    }

    #[test]
    fn directory_string() {
        let s = Syntax::DirectoryString;
        assert_eq!(n(s, " John  SMITH "), b"john smith");
        assert!(matches!(s.normalize(b"abc").unwrap(), Cow::Borrowed(_)));
        bad(s, b"");
        bad(s, b"\xff\xfe");
        assert!(n(s, "Apple") < n(s, "banana"));
    }

    #[test]
    fn case_exact_ia5_printable() {
        assert_eq!(n(Syntax::CaseExactString, " A  b "), b"A b");
        assert_eq!(n(Syntax::Ia5String, "FOO@Bar"), b"foo@bar");
        assert_eq!(n(Syntax::Ia5String, ""), b"");
        bad(Syntax::Ia5String, "é".as_bytes());
        assert_eq!(
            n(Syntax::PrintableString, "Hello (World)"),
            b"hello (world)"
        );
        // AD stores any text in a PrintableString attribute (serialNumber takes `"`, `}`,
        // tabs and non-ASCII letters); only invalid UTF-8 is refused.
        assert_eq!(n(Syntax::PrintableString, "a@b\"}"), b"a@b\"}");
        assert_eq!(n(Syntax::PrintableString, "kōkako"), "kōkako".as_bytes());
        bad(Syntax::PrintableString, b"\xff");
        bad(Syntax::PrintableString, b"");
    }

    #[test]
    fn numeric_and_telephone() {
        assert_eq!(n(Syntax::NumericString, "12 34 5"), b"12345");
        bad(Syntax::NumericString, b"12a");
        bad(Syntax::NumericString, b"");
        assert_eq!(
            n(Syntax::TelephoneNumber, "+1 555-123 4567"),
            n(Syntax::TelephoneNumber, "+15551234567")
        );
        assert_eq!(n(Syntax::TelephoneNumber, "Ext 5"), b"ext5");
        bad(Syntax::TelephoneNumber, b"");
    }

    #[test]
    fn integer() {
        let s = Syntax::Integer;
        assert!(n(s, "-5") < n(s, "3"));
        assert!(n(s, "3") < n(s, "10"));
        assert!(n(s, "-10") < n(s, "-5"));
        assert_eq!(n(s, "-0"), n(s, "0"));
        assert_eq!(n(s, "+007"), n(s, "7"));
        assert_eq!(n(s, "9223372036854775807"), encode_i64(i64::MAX));
        assert_eq!(n(s, "-9223372036854775808"), encode_i64(i64::MIN));
        assert!(n(s, "-9223372036854775808") < n(s, "9223372036854775807"));
        assert_eq!(n(s, "0"), [0x80]);
        assert_eq!(n(s, "512"), [0x82, 0x02, 0x00]);
        assert_eq!(n(s, "-1"), [0x7f]);
        assert_eq!(n(s, "-2"), [0x7e, 0xfe]);
        assert_eq!(n(s, "-257"), [0x7d, 0xfe, 0xff]);
        let mut edges: Vec<i64> = vec![i64::MIN, i64::MAX, 0, -1, 1];
        for shift in 0..63 {
            let p = 1i64 << shift;
            edges.extend([p - 1, p, p + 1, -p - 1, -p, -p + 1]);
        }
        edges.sort_unstable();
        edges.dedup();
        let encoded: Vec<Vec<u8>> = edges.iter().map(|&v| encode_i64(v)).collect();
        for (w, pair) in encoded.windows(2).zip(edges.windows(2)) {
            assert!(w[0] < w[1], "{} and {} out of order", pair[0], pair[1]);
            assert!(
                !w[1].starts_with(&w[0]),
                "{} is a prefix of {}",
                pair[0],
                pair[1]
            );
        }
        for v in [
            "",
            "+",
            "-",
            "1a",
            " 1",
            "1 ",
            "9223372036854775808",
            "--1",
            "1.0",
            "-9223372036854775809",
        ] {
            bad(s, v.as_bytes());
        }
        let long = format!("{}1", "0".repeat(10_000));
        assert_eq!(n(s, &long), n(s, "1"));
    }

    #[test]
    fn boolean() {
        assert_eq!(n(Syntax::Boolean, "true"), b"TRUE");
        assert_eq!(n(Syntax::Boolean, "False"), b"FALSE");
        bad(Syntax::Boolean, b"yes");
        bad(Syntax::Boolean, b"");
    }

    fn gt(v: &str) -> i64 {
        parse_generalized_time(v.as_bytes()).unwrap()
    }

    #[test]
    fn generalized_time() {
        let s = Syntax::GeneralizedTime;
        assert_eq!(gt("19700101000000Z"), 0);
        assert_eq!(gt("19700101000001Z"), 1_000_000);
        assert_eq!(gt("19691231235959Z"), -1_000_000);
        assert_eq!(
            gt("20000301000000Z") - gt("20000229000000Z"),
            86_400_000_000
        );
        assert_eq!(gt("20240101000000Z"), 1_704_067_200_000_000);
        // zones
        assert_eq!(gt("20240101010000+0100"), gt("20240101000000Z"));
        assert_eq!(gt("20231231230000-01"), gt("20240101000000Z"));
        assert_eq!(gt("20240101000000"), gt("20240101000000Z"));
        assert!(n(s, "20240101003000+0100") < n(s, "20240101000000Z"));
        // fractions apply to the last unit
        assert_eq!(gt("2024010112.5Z"), gt("20240101123000Z"));
        assert_eq!(gt("202401011230,25Z"), gt("20240101123015Z"));
        assert_eq!(
            gt("20240101123015.123456789Z") - gt("20240101123015Z"),
            123_456
        );
        // ordering across epoch boundary and far years
        assert!(n(s, "19000101000000Z") < n(s, "19700101000000Z"));
        assert!(n(s, "00010101000000Z") < n(s, "99991231235959Z"));
        assert_eq!(gt("20161231235960Z"), gt("20170101000000Z"));
        // leap days
        assert!(s.normalize(b"20000229000000Z").is_ok());
        assert!(s.normalize(b"20240229000000Z").is_ok());
        for v in [
            "19000229000000Z",
            "20230229000000Z",
            "20241301000000Z",
            "20240001000000Z",
            "20240431000000Z",
            "20240101240000Z",
            "20240101006000Z",
            "20240101000061Z",
            "2024010100Q",
            "202401",
            "20240101000000Z ",
            "20240101000000+2400",
            "20240101000000.Z",
            "20240101000000+01:00",
            "",
            "20240101000000+1",
        ] {
            bad(s, v.as_bytes());
        }
    }

    #[test]
    fn utc_time() {
        let s = Syntax::UtcTime;
        assert_eq!(n(s, "700101000000Z"), encode_i64(0));
        assert_eq!(
            n(s, "2401010000Z"),
            n(Syntax::GeneralizedTime, "202401010000Z")
        );
        assert_eq!(
            n(s, "991231235959Z"),
            n(Syntax::GeneralizedTime, "19991231235959Z")
        );
        assert_eq!(n(s, "2401010100+0100"), n(s, "2401010000Z"));
        assert!(n(s, "991231235959Z") < n(s, "000101000000Z"));
        bad(s, b"2401010000+01");
        bad(s, b"24010100Z");
        bad(s, b"240229000000Z".as_slice().get(..0).unwrap_or(b""));
        bad(s, b"230229000000Z");
        assert!(s.normalize(b"240229000000Z").is_ok());
    }

    #[test]
    fn octet_oid_dn() {
        assert_eq!(n(Syntax::OctetString, "AbC"), b"AbC");
        assert!(Syntax::OctetString.normalize(b"\xff\x00").is_ok());
        assert_eq!(n(Syntax::Oid, " 2.5.4.3 "), b"2.5.4.3");
        assert_eq!(n(Syntax::Oid, "commonName"), b"commonname");
        assert_eq!(n(Syntax::Oid, "msDS-Foo"), b"msds-foo");
        for v in ["", "1", "1.", ".1", "1..2", "01.2", "cn_x", "-a", "1a.2"] {
            bad(Syntax::Oid, v.as_bytes());
        }
        assert_eq!(
            n(Syntax::Dn, "CN=Foo Bar, DC=Example,DC=com"),
            n(Syntax::Dn, "cn=foo bar,dc=example,dc=COM")
        );
        bad(Syntax::Dn, b"cn");
        bad(Syntax::Dn, b"\xff");
    }

    #[test]
    fn guid() {
        let text = "6F9619FF-8B86-D011-B42D-00C04FC964FF";
        let bin = n(Syntax::Guid, text);
        assert_eq!(
            bin,
            [
                0xff, 0x19, 0x96, 0x6f, 0x86, 0x8b, 0x11, 0xd0, 0xb4, 0x2d, 0x00, 0xc0, 0x4f, 0xc9,
                0x64, 0xff
            ]
        );
        let arr: [u8; 16] = bin.clone().try_into().unwrap();
        assert_eq!(guid_to_string(&arr), text.to_ascii_lowercase());
        assert_eq!(n(Syntax::Guid, &format!("{{{text}}}")), bin);
        assert_eq!(
            Syntax::Guid.normalize(&bin).unwrap().as_ref(),
            bin.as_slice()
        );
        bad(Syntax::Guid, b"6F9619FF-8B86-D011-B42D-00C04FC964FZ");
        bad(Syntax::Guid, b"6F9619FF8B86-D011-B42D-00C04FC964FF-");
        bad(Syntax::Guid, b"short");
        let arr = [0u8; 16];
        assert_eq!(guid_to_string(&arr), "00000000-0000-0000-0000-000000000000");
        let arr: [u8; 16] = core::array::from_fn(|i| (i * 17) as u8);
        let s = guid_to_string(&arr);
        assert_eq!(n(Syntax::Guid, &s), arr);
    }

    #[test]
    fn sid() {
        let text = "S-1-5-21-3623811015-3361044348-30300820-1013";
        let bin = n(Syntax::Sid, text);
        assert_eq!(bin.len(), 8 + 4 * 5);
        assert_eq!(&bin[..8], &[1, 5, 0, 0, 0, 0, 0, 5]);
        assert_eq!(&bin[24..], &1013u32.to_le_bytes());
        assert_eq!(sid_to_string(&bin).unwrap(), text);
        assert_eq!(
            Syntax::Sid.normalize(&bin).unwrap().as_ref(),
            bin.as_slice()
        );
        let big = n(Syntax::Sid, "S-1-0x123456789ABC-7");
        assert_eq!(sid_to_string(&big).unwrap(), "S-1-0x123456789ABC-7");
        assert_eq!(n(Syntax::Sid, "S-1-5"), [1, 0, 0, 0, 0, 0, 0, 5]);
        assert_eq!(sid_to_string(&[1, 0, 0, 0, 0, 0, 0, 5]).unwrap(), "S-1-5");
        for v in [
            "S-1",
            "S-2-5",
            "S-1-5-x",
            "S-1-5-4294967296",
            "S-1-281474976710656",
            "S-1-0x1234567890ABC",
            "S-1-5-",
            "S-1-5-1-2-3-4-5-6-7-8-9-10-11-12-13-14-15-16",
        ] {
            bad(Syntax::Sid, v.as_bytes());
        }
        bad(Syntax::Sid, &[1, 1, 0, 0, 0, 0, 0, 5]);
        bad(Syntax::Sid, &[2, 0, 0, 0, 0, 0, 0, 5]);
        bad(Syntax::Sid, &[1, 16]);
        bad(Syntax::Sid, b"");
        assert!(sid_to_string(&[1, 1, 0]).is_none());
    }

    #[test]
    fn substrings() {
        use SubstringPosition::*;
        let s = Syntax::DirectoryString;
        let ns = |p: &str, pos| {
            s.normalize_substring(p.as_bytes(), pos)
                .unwrap()
                .into_owned()
        };
        assert_eq!(ns("  Foo  Bar  ", Initial), b"foo bar ");
        assert_eq!(ns("  Foo  Bar  ", Any), b" foo bar ");
        assert_eq!(ns("  Foo  Bar  ", Final), b" foo bar");
        let value = n(s, "  The   Quick Brown  fox ");
        assert!(value.starts_with(&ns("THE ", Initial)));
        assert!(value.ends_with(&ns(" Fox", Final)));
        assert!(value.windows(7).any(|w| w == ns(" quick ", Any).as_slice()));
        assert_eq!(
            Syntax::CaseExactString
                .normalize_substring(b"Ab  C", Any)
                .unwrap()
                .as_ref(),
            b"Ab C"
        );
        assert_eq!(
            Syntax::NumericString
                .normalize_substring(b" 1 2 ", Any)
                .unwrap()
                .as_ref(),
            b"12"
        );
        assert_eq!(
            Syntax::TelephoneNumber
                .normalize_substring(b"555-12", Initial)
                .unwrap()
                .as_ref(),
            b"55512"
        );
        for syn in [
            Syntax::Integer,
            Syntax::Boolean,
            Syntax::GeneralizedTime,
            Syntax::UtcTime,
            Syntax::OctetString,
            Syntax::Dn,
            Syntax::Oid,
            Syntax::Guid,
            Syntax::Sid,
        ] {
            assert!(!syn.supports_substrings());
            assert!(syn.normalize_substring(b"x", Any).is_err());
        }
        assert!(Syntax::Ia5String
            .normalize_substring("é".as_bytes(), Any)
            .is_err());
    }

    #[test]
    fn names_and_oids() {
        for s in Syntax::ALL {
            assert_eq!(Syntax::from_name(s.name()), Some(s));
            assert_eq!(Syntax::from_name(&s.name().to_uppercase()), Some(s));
        }
        assert_eq!(Syntax::from_name("nope"), None);
        let p = "1.3.6.1.4.1.1466.115.121.1.";
        assert_eq!(
            Syntax::from_ldap_oid(&format!("{p}15")),
            Some(Syntax::DirectoryString)
        );
        assert_eq!(
            Syntax::from_ldap_oid(&format!("{p}15{{64}}")),
            Some(Syntax::DirectoryString)
        );
        assert_eq!(
            Syntax::from_ldap_oid(&format!("{p}27")),
            Some(Syntax::Integer)
        );
        assert_eq!(
            Syntax::from_ldap_oid(&format!("{p}50")),
            Some(Syntax::TelephoneNumber)
        );
        assert_eq!(Syntax::from_ldap_oid(&format!("{p}99")), None);
        assert_eq!(Syntax::from_ldap_oid("2.5.4.3"), None);
        assert!(Syntax::Integer.supports_ordering());
        assert!(!Syntax::Boolean.supports_ordering());
    }

    #[test]
    fn error_message() {
        let e = Syntax::Integer.normalize(b"x").unwrap_err();
        assert!(e.to_string().starts_with("invalid integer value: "), "{e}");
    }
}

#[cfg(test)]
mod fold_props {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        #[test]
        fn ascii_fast_path_equals_general_fold(s in "[ a-zA-Z0-9\t\r\n\x0b\x0c.,-]{0,24}", lower: bool, ts: bool, te: bool) {
            let fast = fold_cow(s.as_bytes(), &s, lower, ts, te).into_owned();
            prop_assert_eq!(fast, fold(&s, lower, ts, te).into_bytes());
        }
    }
}
