//! `KerberosTime`: GeneralizedTime restricted to `YYYYMMDDHHMMSSZ`.

use super::der::{check_tag, decode_all, tlv, Res, Tlv, TAG_GENERALIZED_TIME};
use super::error::MsgError;

/// A Kerberos timestamp, held as Unix seconds (UTC).
///
/// RFC 4120 §5.2.3 fixes the wire form to `YYYYMMDDHHMMSSZ` with no fractional
/// seconds; sub-second precision travels in separate `Microseconds` fields.
/// Decoding accepts only that form with years 1970..=9999. MIT sends
/// `19700101000000Z` to mean "no time" (for example in `LastReq` entries and
/// `till` in some requests); it decodes to `KerberosTime(0)` =
/// [`KerberosTime::NONE`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct KerberosTime(pub i64);

/// Seconds of 9999-12-31T23:59:59Z, the largest time this module encodes.
const MAX_UNIX: i64 = 253_402_300_799;

impl KerberosTime {
    /// 1970-01-01T00:00:00Z, which MIT uses for "no time / unset".
    pub const NONE: KerberosTime = KerberosTime(0);
    /// 2037-09-13T02:48:05Z, the value Windows clients put in `till` (and
    /// Windows KDCs in some end times) to mean "as late as policy allows".
    pub const WINDOWS_NEVER: KerberosTime = KerberosTime(2_136_422_885);
    /// The largest encodable time, 9999-12-31T23:59:59Z.
    pub const MAX: KerberosTime = KerberosTime(MAX_UNIX);

    /// Unix seconds.
    pub fn unix(self) -> i64 {
        self.0
    }

    /// Encodes as a GeneralizedTime element. Values outside
    /// 1970-01-01..=9999-12-31T23:59:59 are clamped to that range, because the
    /// wire form cannot express them.
    pub fn encode(&self) -> Vec<u8> {
        tlv(TAG_GENERALIZED_TIME, self.to_generalized().as_bytes())
    }

    /// Decodes a GeneralizedTime element, refusing anything but the Z form.
    pub fn decode(bytes: &[u8]) -> Result<Self, MsgError> {
        decode_all(bytes, "KerberosTime", |t| Self::from_tlv(t, "KerberosTime"))
    }

    /// The `YYYYMMDDHHMMSSZ` text of this time (after clamping).
    pub fn to_generalized(&self) -> String {
        let t = self.0.clamp(0, MAX_UNIX);
        let days = t.div_euclid(86_400);
        let secs = t.rem_euclid(86_400);
        let (y, m, d) = civil_from_days(days);
        format!(
            "{:04}{:02}{:02}{:02}{:02}{:02}Z",
            y,
            m,
            d,
            secs / 3600,
            (secs / 60) % 60,
            secs % 60
        )
    }

    /// Parses the `YYYYMMDDHHMMSSZ` text form.
    pub fn parse_generalized(s: &[u8]) -> Result<Self, MsgError> {
        const WHAT: &str = "KerberosTime";
        let bad = |why| MsgError::InvalidValue { what: WHAT, why };
        if s.len() != 15 || s[14] != b'Z' {
            return Err(bad("not of the form YYYYMMDDHHMMSSZ"));
        }
        let mut n = [0i64; 14];
        for (i, c) in s[..14].iter().enumerate() {
            if !c.is_ascii_digit() {
                return Err(bad("non-digit in time"));
            }
            n[i] = i64::from(c - b'0');
        }
        let num = |a: usize, len: usize| n[a..a + len].iter().fold(0i64, |acc, d| acc * 10 + d);
        let (year, month, day) = (num(0, 4), num(4, 2), num(6, 2));
        let (hour, min, sec) = (num(8, 2), num(10, 2), num(12, 2));
        if !(1970..=9999).contains(&year) {
            return Err(bad("year outside 1970..=9999"));
        }
        if !(1..=12).contains(&month) {
            return Err(bad("month out of range"));
        }
        if day < 1 || day > days_in_month(year, month) {
            return Err(bad("day out of range"));
        }
        if hour > 23 || min > 59 || sec > 59 {
            return Err(bad("time of day out of range"));
        }
        let days = days_from_civil(year, month, day);
        Ok(KerberosTime(days * 86_400 + hour * 3600 + min * 60 + sec))
    }

    pub(super) fn from_tlv(t: Tlv<'_>, what: &'static str) -> Res<Self> {
        check_tag(&t, TAG_GENERALIZED_TIME, what)?;
        Self::parse_generalized(t.value)
    }
}

fn is_leap(y: i64) -> bool {
    (y % 4 == 0 && y % 100 != 0) || y % 400 == 0
}

fn days_in_month(y: i64, m: i64) -> i64 {
    match m {
        1 | 3 | 5 | 7 | 8 | 10 | 12 => 31,
        4 | 6 | 9 | 11 => 30,
        _ => {
            if is_leap(y) {
                29
            } else {
                28
            }
        }
    }
}

/// Days since 1970-01-01 of a proleptic Gregorian date (H. Hinnant's algorithm).
fn days_from_civil(y: i64, m: i64, d: i64) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (m + 9) % 12;
    let doy = (153 * mp + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

/// Inverse of [`days_from_civil`].
fn civil_from_days(z: i64) -> (i64, i64, i64) {
    let z = z + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let y = yoe + era * 400;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    (if m <= 2 { y + 1 } else { y }, m, d)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn known_values() {
        let cases = [
            ("19700101000000Z", 0i64),
            ("20261126200419Z", 1_795_723_459),
            ("20370913024805Z", 2_136_422_885),
            ("20000229235959Z", 951_868_799),
            ("99991231235959Z", MAX_UNIX),
        ];
        for (s, v) in cases {
            assert_eq!(
                KerberosTime::parse_generalized(s.as_bytes()),
                Ok(KerberosTime(v)),
                "{s}"
            );
            assert_eq!(KerberosTime(v).to_generalized(), s);
        }
    }

    #[test]
    fn refuses_garbage() {
        for s in [
            "",
            "2026112620041Z",
            "20261126200419",
            "20261126200419+0100",
            "20261126200419.5Z",
            "2026112620041aZ",
            "19691231235959Z",
            "20261326200419Z",
            "20260230200419Z",
            "20250229000000Z",
            "20261126240000Z",
            "20261126236000Z",
            "20261126235960Z",
            "2026-11-26T20:04Z",
            "\u{0}\u{0}\u{0}\u{0}\u{0}\u{0}\u{0}\u{0}\u{0}\u{0}\u{0}\u{0}\u{0}\u{0}Z",
        ] {
            assert!(
                KerberosTime::parse_generalized(s.as_bytes()).is_err(),
                "{s:?}"
            );
        }
        // Non-ASCII bytes.
        assert!(KerberosTime::parse_generalized(&[0xff; 15]).is_err());
    }

    #[test]
    fn clamps_on_encode() {
        assert_eq!(KerberosTime(-5).to_generalized(), "19700101000000Z");
        assert_eq!(KerberosTime(i64::MAX).to_generalized(), "99991231235959Z");
        assert_eq!(KerberosTime(i64::MIN).to_generalized(), "19700101000000Z");
    }

    #[test]
    fn der_round_trip() {
        let t = KerberosTime(1_795_723_459);
        let e = t.encode();
        assert_eq!(e[0], 0x18);
        assert_eq!(e[1], 15);
        assert_eq!(KerberosTime::decode(&e), Ok(t));
    }
}
