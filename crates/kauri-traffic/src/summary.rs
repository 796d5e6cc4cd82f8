//! The summary format: one tab-separated line per packet, anonymised. Samba's
//! `traffic_summary.pl` writes it and its learner and replayer read it, so the same lines
//! move between the two tool sets.
//!
//! Columns: timestamp (seconds since the epoch with a fraction), IP protocol (`06` TCP,
//! `11` UDP, or empty), conversation (stream) number, source and destination host ids
//! (small anonymised integers), protocol name, operation code, description, then
//! protocol-specific extras (for LDAP: scope, DN signature, an empty column, the filter
//! without values, requested attributes, an empty column, auth type, SASL mechanism).

use std::fmt;
use std::io::BufRead;

/// Why a summary line could not be read.
#[derive(Debug, thiserror::Error)]
pub enum SummaryError {
    /// Fewer than the eight fixed columns.
    #[error("line {line}: {found} columns, a summary line has at least 8")]
    Columns {
        /// One-based line number.
        line: usize,
        /// Columns found.
        found: usize,
    },
    /// A column that must be a number is not.
    #[error("line {line}: {column} {value:?} is not a number")]
    Number {
        /// One-based line number.
        line: usize,
        /// The column's name.
        column: &'static str,
        /// What was there.
        value: String,
    },
    /// The file could not be read.
    #[error("reading the summary: {0}")]
    Io(#[from] std::io::Error),
}

/// A capture time kept exactly as written (seconds and nanoseconds), so a summary read and
/// written back is unchanged, while arithmetic uses [`Timestamp::as_secs_f64`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct Timestamp {
    /// Whole seconds since the epoch.
    pub secs: i64,
    /// Nanoseconds within the second.
    pub nanos: u32,
}

impl Timestamp {
    /// A time from seconds and nanoseconds (nanoseconds folded into seconds past 10⁹).
    pub fn new(secs: i64, nanos: u32) -> Timestamp {
        Timestamp {
            secs: secs + i64::from(nanos / 1_000_000_000),
            nanos: nanos % 1_000_000_000,
        }
    }

    /// Reads `1487921562.593315000`, `1487921562.5` or `1487921562`.
    pub fn parse(text: &str) -> Option<Timestamp> {
        let (whole, frac) = match text.split_once('.') {
            Some((w, f)) => (w, f),
            None => (text, ""),
        };
        if whole.is_empty() || !whole.bytes().all(|b| b.is_ascii_digit()) {
            return None;
        }
        if !frac.bytes().all(|b| b.is_ascii_digit()) {
            return None;
        }
        let secs: i64 = whole.parse().ok()?;
        let mut nanos: u32 = 0;
        for (i, b) in frac.bytes().enumerate() {
            if i == 9 {
                break;
            }
            nanos = nanos * 10 + u32::from(b - b'0');
        }
        for _ in frac.len().min(9)..9 {
            nanos *= 10;
        }
        Some(Timestamp { secs, nanos })
    }

    /// Seconds since the epoch as a float (microsecond precision at today's dates).
    pub fn as_secs_f64(&self) -> f64 {
        self.secs as f64 + f64::from(self.nanos) / 1e9
    }
}

impl fmt::Display for Timestamp {
    /// Nine decimals, as tshark and Samba's summarizer write them.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}.{:09}", self.secs, self.nanos)
    }
}

/// One packet of a summary.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Packet {
    /// When it was captured.
    pub timestamp: Timestamp,
    /// `06` for TCP, `11` for UDP, empty when unknown.
    pub ip_protocol: String,
    /// The conversation (TCP or UDP stream) number; may be empty.
    pub stream: String,
    /// Anonymised source host id.
    pub src: u32,
    /// Anonymised destination host id.
    pub dest: u32,
    /// Protocol name (`ldap`, `cldap`, `dns`, `kerberos`, `smb`, `dcerpc`, …).
    pub protocol: String,
    /// Operation code as written (`3`, `0x72`, or empty).
    pub opcode: String,
    /// Description (`searchRequest`, `krb-as-req`, …).
    pub desc: String,
    /// Protocol-specific extra columns.
    pub extra: Vec<String>,
}

impl Packet {
    /// Reads one line (without its newline). `line_no` is for the error.
    pub fn parse(line: &str, line_no: usize) -> Result<Packet, SummaryError> {
        let line = line.strip_suffix('\r').unwrap_or(line);
        let fields: Vec<&str> = line.split('\t').collect();
        if fields.len() < 8 {
            return Err(SummaryError::Columns {
                line: line_no,
                found: fields.len(),
            });
        }
        let number = |column: &'static str, value: &str| SummaryError::Number {
            line: line_no,
            column,
            value: value.to_string(),
        };
        let timestamp =
            Timestamp::parse(fields[0]).ok_or_else(|| number("timestamp", fields[0]))?;
        let src = fields[3].parse().map_err(|_| number("source", fields[3]))?;
        let dest = fields[4]
            .parse()
            .map_err(|_| number("destination", fields[4]))?;
        Ok(Packet {
            timestamp,
            ip_protocol: fields[1].to_string(),
            stream: fields[2].to_string(),
            src,
            dest,
            protocol: fields[5].to_string(),
            opcode: fields[6].to_string(),
            desc: fields[7].to_string(),
            extra: fields[8..].iter().map(|s| s.to_string()).collect(),
        })
    }

    /// `protocol:opcode`, the name the model's states and details use.
    pub fn key(&self) -> String {
        format!("{}:{}", self.protocol, self.opcode)
    }
}

impl fmt::Display for Packet {
    /// The summary line, without a newline; extras follow the description tab-joined.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{}\t{}\t{}\t{}\t{}\t{}\t{}\t{}",
            self.timestamp,
            self.ip_protocol,
            self.stream,
            self.src,
            self.dest,
            self.protocol,
            self.opcode,
            self.desc
        )?;
        for e in &self.extra {
            write!(f, "\t{e}")?;
        }
        Ok(())
    }
}

/// Reads every non-empty line of a summary.
pub fn read(input: impl BufRead) -> Result<Vec<Packet>, SummaryError> {
    let mut out = Vec::new();
    for (i, line) in input.lines().enumerate() {
        let line = line?;
        if line.trim().is_empty() {
            continue;
        }
        out.push(Packet::parse(&line, i + 1)?);
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_round_trip() {
        for line in [
            "1487921562.593315000\t06\t3\t5\t1\tldap\t3\tsearchRequest\t2\tDC,DC\t\tcn\t\t\t",
            "1487921562.592126000\t11\t\t3\t1\tdns\t0\tquery",
            "1487921562.880868000\t06\t18\t6\t1\tkerberos\t\t",
        ] {
            let p = Packet::parse(line, 1).unwrap();
            assert_eq!(p.to_string(), line);
        }
        let p = Packet::parse("1.5\t06\t3\t5\t1\tldap\t3\tsearchRequest", 1).unwrap();
        assert_eq!(p.timestamp, Timestamp::new(1, 500_000_000));
        assert_eq!(p.key(), "ldap:3");
    }

    #[test]
    fn bad_lines_are_errors() {
        assert!(Packet::parse("1\t06\t3", 4).is_err());
        assert!(Packet::parse("x\t06\t3\t5\t1\tldap\t3\td", 4).is_err());
        assert!(Packet::parse("1\t06\t3\tfive\t1\tldap\t3\td", 4).is_err());
        assert!(Timestamp::parse("1.2.3").is_none());
        assert!(Timestamp::parse("-1").is_none());
    }
}
