//! Time in the log: microseconds since the Unix epoch, written as RFC 3339 UTC with six
//! fractional digits (`2026-11-27T01:02:03.123456Z`), so lines sort as text and every
//! tool reads them. The workspace has no date crate; the calendar arithmetic here is the
//! proleptic Gregorian one (Howard Hinnant's `days_from_civil`), which is all UTC needs.

use std::fmt;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use serde::{Deserialize, Deserializer, Serialize, Serializer};

use crate::AuditError;

const MICROS_PER_SEC: i64 = 1_000_000;
const SECS_PER_DAY: i64 = 86_400;
/// 0000-01-01T00:00:00Z and 9999-12-31T23:59:59.999999Z: the range four year digits hold.
const MIN_MICROS: i64 = -62_167_219_200 * MICROS_PER_SEC;
const MAX_MICROS: i64 = 253_402_300_800 * MICROS_PER_SEC - 1;

/// A moment, to the microsecond, in UTC: when an event happened, and the bounds of a
/// filter. It serializes as RFC 3339 text so the log stays readable by anything.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct Timestamp(i64);

impl Timestamp {
    /// The current time (the Unix epoch if the clock is set before it).
    pub fn now() -> Timestamp {
        Timestamp::from_system_time(SystemTime::now())
    }

    /// A moment given in microseconds since the Unix epoch, clamped to years 0–9999.
    pub fn from_micros(micros: i64) -> Timestamp {
        Timestamp(micros.clamp(MIN_MICROS, MAX_MICROS))
    }

    /// A moment given as a [`SystemTime`] (file times, the clock).
    pub fn from_system_time(t: SystemTime) -> Timestamp {
        match t.duration_since(UNIX_EPOCH) {
            Ok(d) => Timestamp::from_micros(i64::try_from(d.as_micros()).unwrap_or(MAX_MICROS)),
            Err(e) => Timestamp::from_micros(
                i64::try_from(e.duration().as_micros()).map_or(MIN_MICROS, |m| -m),
            ),
        }
    }

    /// Microseconds since the Unix epoch.
    pub fn micros(self) -> i64 {
        self.0
    }

    /// This moment moved back by `d` (for relative filters like `--since 1h`).
    pub fn minus(self, d: Duration) -> Timestamp {
        let m = i64::try_from(d.as_micros()).unwrap_or(i64::MAX);
        Timestamp::from_micros(self.0.saturating_sub(m))
    }

    /// The RFC 3339 form the log stores: `YYYY-MM-DDTHH:MM:SS.ffffffZ`.
    pub fn to_rfc3339(self) -> String {
        let buf = self.format_buf();
        // Only ASCII digits and separators were written.
        String::from_utf8_lossy(&buf).into_owned()
    }

    fn format_buf(self) -> [u8; 27] {
        let secs = self.0.div_euclid(MICROS_PER_SEC);
        let frac = self.0.rem_euclid(MICROS_PER_SEC);
        let days = secs.div_euclid(SECS_PER_DAY);
        let sod = secs.rem_euclid(SECS_PER_DAY);
        let (y, mo, d) = civil_from_days(days);
        let mut b = *b"0000-00-00T00:00:00.000000Z";
        put_digits(&mut b[0..4], y);
        put_digits(&mut b[5..7], mo);
        put_digits(&mut b[8..10], d);
        put_digits(&mut b[11..13], sod / 3600);
        put_digits(&mut b[14..16], sod / 60 % 60);
        put_digits(&mut b[17..19], sod % 60);
        put_digits(&mut b[20..26], frac);
        b
    }

    /// The compact second-resolution form rotated files are named with:
    /// `YYYYMMDDTHHMMSS`.
    pub fn compact(self) -> String {
        let b = self.format_buf();
        let mut s = String::with_capacity(15);
        for (i, &c) in b[..19].iter().enumerate() {
            if !matches!(i, 4 | 7 | 13 | 16) {
                s.push(char::from(c));
            }
        }
        s
    }

    /// Reads the compact form back (`YYYYMMDDTHHMMSS`).
    pub fn parse_compact(s: &str) -> Option<Timestamp> {
        let b = s.as_bytes();
        if b.len() != 15 || b[8] != b'T' {
            return None;
        }
        let num = |r: std::ops::Range<usize>| -> Option<i64> { digits(b.get(r)?) };
        from_parts(
            num(0..4)?,
            num(4..6)?,
            num(6..8)?,
            num(9..11)?,
            num(11..13)?,
            num(13..15)?,
            0,
        )
    }

    /// Reads RFC 3339 (`2026-11-27T01:02:03.123456Z`, any fraction length, `Z` or a
    /// `±hh:mm` offset, `T` or a space between date and time); `None` when it is not.
    pub fn parse_rfc3339(s: &str) -> Option<Timestamp> {
        let b = s.as_bytes();
        if b.len() < 20 {
            return None;
        }
        if b[4] != b'-' || b[7] != b'-' || !matches!(b[10], b'T' | b't' | b' ') {
            return None;
        }
        if b[13] != b':' || b[16] != b':' {
            return None;
        }
        let y = digits(&b[0..4])?;
        let mo = digits(&b[5..7])?;
        let d = digits(&b[8..10])?;
        let h = digits(&b[11..13])?;
        let mi = digits(&b[14..16])?;
        let sec = digits(&b[17..19])?.min(59); // a leap second counts as :59
        let mut i = 19;
        let mut micros = 0i64;
        if b[i] == b'.' {
            i += 1;
            let start = i;
            while i < b.len() && b[i].is_ascii_digit() {
                if i - start < 6 {
                    micros = micros * 10 + i64::from(b[i] - b'0');
                }
                i += 1;
            }
            let n = i - start;
            if n == 0 {
                return None;
            }
            for _ in n..6 {
                micros *= 10;
            }
        }
        let offset_secs = match b.get(i..)? {
            [b'Z' | b'z'] => 0,
            [sign @ (b'+' | b'-'), oh1, oh2, b':', om1, om2] => {
                let oh = digits(&[*oh1, *oh2])?;
                let om = digits(&[*om1, *om2])?;
                if oh > 23 || om > 59 {
                    return None;
                }
                let o = oh * 3600 + om * 60;
                if *sign == b'-' {
                    -o
                } else {
                    o
                }
            }
            _ => return None,
        };
        let t = from_parts(y, mo, d, h, mi, sec, micros)?;
        Some(Timestamp::from_micros(t.0 - offset_secs * MICROS_PER_SEC))
    }

    /// Reads a date, `YYYY-MM-DD`, as its first moment (UTC).
    pub fn parse_date(s: &str) -> Option<Timestamp> {
        let b = s.as_bytes();
        if b.len() != 10 || b[4] != b'-' || b[7] != b'-' {
            return None;
        }
        from_parts(
            digits(&b[0..4])?,
            digits(&b[5..7])?,
            digits(&b[8..10])?,
            0,
            0,
            0,
            0,
        )
    }

    /// Reads the times people type into a filter: RFC 3339, a date (`YYYY-MM-DD`), a
    /// time relative to `now` (`90s`, `30m`, `1h`, `7d`, `2w`: that long ago), `now`, or
    /// `@SECONDS` since the Unix epoch.
    pub fn parse_filter(s: &str, now: Timestamp) -> Result<Timestamp, AuditError> {
        let t = s.trim();
        let bad = || AuditError::Time(s.to_string());
        if t.eq_ignore_ascii_case("now") {
            return Ok(now);
        }
        if let Some(secs) = t.strip_prefix('@') {
            let secs: i64 = secs.parse().map_err(|_| bad())?;
            return Ok(Timestamp::from_micros(secs.saturating_mul(MICROS_PER_SEC)));
        }
        if let Some(ts) = Timestamp::parse_rfc3339(t).or_else(|| Timestamp::parse_date(t)) {
            return Ok(ts);
        }
        let split = t.find(|c: char| !c.is_ascii_digit()).ok_or_else(bad)?;
        let (n, unit) = t.split_at(split);
        let n: u64 = n.parse().map_err(|_| bad())?;
        let secs = match unit {
            "s" | "sec" => 1,
            "m" | "min" => 60,
            "h" => 3600,
            "d" => 86_400,
            "w" => 7 * 86_400,
            _ => return Err(bad()),
        };
        Ok(now.minus(Duration::from_secs(n.saturating_mul(secs))))
    }
}

impl fmt::Display for Timestamp {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let b = self.format_buf();
        f.write_str(std::str::from_utf8(&b).map_err(|_| fmt::Error)?)
    }
}

impl Serialize for Timestamp {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let b = self.format_buf();
        s.serialize_str(std::str::from_utf8(&b).map_err(serde::ser::Error::custom)?)
    }
}

impl<'de> Deserialize<'de> for Timestamp {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Timestamp, D::Error> {
        struct V;
        impl serde::de::Visitor<'_> for V {
            type Value = Timestamp;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("an RFC 3339 time")
            }
            fn visit_str<E: serde::de::Error>(self, v: &str) -> Result<Timestamp, E> {
                Timestamp::parse_rfc3339(v)
                    .ok_or_else(|| E::custom(format!("not an RFC 3339 time: {v:?}")))
            }
        }
        d.deserialize_str(V)
    }
}

/// Writes `v` as zero-padded decimal into `out` (as many digits as `out` is long).
fn put_digits(out: &mut [u8], mut v: i64) {
    for c in out.iter_mut().rev() {
        // `v` is never negative here: years are clamped to 0..=9999.
        *c = b'0' + u8::try_from(v.rem_euclid(10)).unwrap_or(0);
        v /= 10;
    }
}

/// A run of ASCII digits as a number.
fn digits(b: &[u8]) -> Option<i64> {
    if b.is_empty() || !b.iter().all(u8::is_ascii_digit) {
        return None;
    }
    Some(b.iter().fold(0i64, |n, &c| n * 10 + i64::from(c - b'0')))
}

fn is_leap(y: i64) -> bool {
    y % 4 == 0 && (y % 100 != 0 || y % 400 == 0)
}

fn days_in_month(y: i64, m: i64) -> i64 {
    match m {
        1 | 3 | 5 | 7 | 8 | 10 | 12 => 31,
        4 | 6 | 9 | 11 => 30,
        _ if is_leap(y) => 29,
        _ => 28,
    }
}

/// A checked calendar date and time of day as a timestamp.
fn from_parts(y: i64, mo: i64, d: i64, h: i64, mi: i64, s: i64, micros: i64) -> Option<Timestamp> {
    if !(1..=12).contains(&mo) || d < 1 || d > days_in_month(y, mo) || h > 23 || mi > 59 || s > 59 {
        return None;
    }
    let days = days_from_civil(y, mo, d);
    let secs = days * SECS_PER_DAY + h * 3600 + mi * 60 + s;
    Some(Timestamp::from_micros(secs * MICROS_PER_SEC + micros))
}

/// Days since 1970-01-01 of a proleptic Gregorian date.
fn days_from_civil(y: i64, m: i64, d: i64) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (m + 9) % 12;
    let doy = (153 * mp + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

/// The proleptic Gregorian date of a day count since 1970-01-01.
fn civil_from_days(z: i64) -> (i64, i64, i64) {
    let z = z + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(m <= 2);
    (y, m, d)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formats_known_moments() {
        assert_eq!(
            Timestamp::from_micros(0).to_rfc3339(),
            "1970-01-01T00:00:00.000000Z"
        );
        // date -u -d @1795741323 → 2026-11-27T01:02:03Z
        let t = Timestamp::from_micros(1_795_741_323_123_456);
        assert_eq!(t.to_rfc3339(), "2026-11-27T01:02:03.123456Z");
        assert_eq!(t.to_string(), "2026-11-27T01:02:03.123456Z");
        assert_eq!(t.compact(), "20261127T010203");
        assert_eq!(
            Timestamp::from_micros(951_782_400_000_000).to_rfc3339(),
            "2000-02-29T00:00:00.000000Z"
        );
        assert_eq!(
            Timestamp::from_micros(-1).to_rfc3339(),
            "1969-12-31T23:59:59.999999Z"
        );
    }

    #[test]
    fn round_trips_every_day_for_centuries() {
        // Every day from 1900 to 2400 at an odd time of day, through text and back.
        let start = days_from_civil(1900, 1, 1);
        let end = days_from_civil(2400, 12, 31);
        for day in start..=end {
            let micros = (day * SECS_PER_DAY + 45_296) * MICROS_PER_SEC + 654_321;
            let t = Timestamp::from_micros(micros);
            let s = t.to_rfc3339();
            assert_eq!(Timestamp::parse_rfc3339(&s), Some(t), "{s}");
            let (y, m, d) = civil_from_days(day);
            assert_eq!(days_from_civil(y, m, d), day);
            assert_eq!(
                Timestamp::parse_compact(&t.compact()),
                Some(Timestamp(
                    micros.div_euclid(MICROS_PER_SEC) * MICROS_PER_SEC
                ))
            );
        }
    }

    #[test]
    fn parses_offsets_fractions_and_rejects_nonsense() {
        let z = Timestamp::parse_rfc3339("2026-11-27T01:02:03Z").unwrap();
        assert_eq!(z.micros(), 1_795_741_323_000_000);
        let plus = Timestamp::parse_rfc3339("2026-11-27T03:02:03.5+02:00").unwrap();
        assert_eq!(plus.micros(), 1_795_741_323_500_000);
        let minus = Timestamp::parse_rfc3339("2026-11-26 23:32:03.123456789-01:30").unwrap();
        assert_eq!(minus.micros(), 1_795_741_323_123_456);
        for bad in [
            "",
            "2026-11-27",
            "2026-13-01T00:00:00Z",
            "2026-02-29T00:00:00Z",
            "2026-11-27T24:00:00Z",
            "2026-11-27T01:02:03",
            "2026-11-27T01:02:03.Z",
            "2026-11-27T01:02:03+2:00",
            "2026-11-27T01:02:03Zjunk",
            "2026-11-27T01:0a:03Z",
        ] {
            assert_eq!(Timestamp::parse_rfc3339(bad), None, "{bad}");
        }
        assert!(Timestamp::parse_rfc3339("2024-02-29T00:00:00Z").is_some());
    }

    #[test]
    fn parses_filter_times() {
        let now = Timestamp::from_micros(1_795_741_323_000_000);
        let p = |s: &str| Timestamp::parse_filter(s, now).map(Timestamp::micros);
        assert_eq!(p("now").unwrap(), now.micros());
        assert_eq!(p("30m").unwrap(), now.micros() - 1_800_000_000);
        assert_eq!(p("1h").unwrap(), now.micros() - 3_600_000_000);
        assert_eq!(p("7d").unwrap(), now.micros() - 7 * 86_400_000_000);
        assert_eq!(p("2w").unwrap(), now.micros() - 14 * 86_400_000_000);
        assert_eq!(p("90s").unwrap(), now.micros() - 90_000_000);
        assert_eq!(p("2026-11-27").unwrap(), 1_795_737_600_000_000);
        assert_eq!(p("@1795741323").unwrap(), 1_795_741_323_000_000);
        assert_eq!(p("2026-11-27T01:02:03Z").unwrap(), 1_795_741_323_000_000);
        for bad in ["", "h", "1y", "yesterday", "-1h", "2026-11-31"] {
            assert!(p(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn serde_uses_rfc3339_text() {
        let t = Timestamp::from_micros(1_795_741_323_123_456);
        let j = serde_json::to_string(&t).unwrap();
        assert_eq!(j, "\"2026-11-27T01:02:03.123456Z\"");
        assert_eq!(serde_json::from_str::<Timestamp>(&j).unwrap(), t);
        assert!(serde_json::from_str::<Timestamp>("\"yesterday\"").is_err());
    }
}
