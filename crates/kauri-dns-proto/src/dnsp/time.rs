//! The clocks MS-DNSP stores: record timestamps in hours since 1601 (aging and
//! scavenging) and tombstone times as FILETIME (100 ns ticks since 1601).

/// Seconds from 1601-01-01 to 1970-01-01 (UTC).
const EPOCH_DIFF: u64 = 11_644_473_600;

/// A `dnsRecord` TimeStamp for a Unix time: whole hours since 1601-01-01 UTC (0 means a
/// static record, so real times are never 0). Saturates past the year 490,000 or so.
pub fn hours_since_1601(unix_secs: u64) -> u32 {
    let hours = unix_secs.saturating_add(EPOCH_DIFF) / 3600;
    u32::try_from(hours).unwrap_or(u32::MAX)
}

/// The Unix time at the start of a TimeStamp's hour (0 for hours before 1970).
pub fn unix_from_hours(hours: u32) -> u64 {
    (u64::from(hours) * 3600).saturating_sub(EPOCH_DIFF)
}

/// A FILETIME (the tombstone's `EntombedTime`) for a Unix time. Saturates.
pub fn filetime_from_unix(unix_secs: u64) -> u64 {
    unix_secs
        .saturating_add(EPOCH_DIFF)
        .saturating_mul(10_000_000)
}

/// The Unix time of a FILETIME (0 before 1970).
pub fn unix_from_filetime(filetime: u64) -> u64 {
    (filetime / 10_000_000).saturating_sub(EPOCH_DIFF)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn known_values() {
        // 1970-01-01 is 369 years (89 leap days) after 1601-01-01: 134774 days.
        assert_eq!(hours_since_1601(0), 134_774 * 24);
        assert_eq!(unix_from_hours(134_774 * 24), 0);
        assert_eq!(unix_from_hours(0), 0);
        // 2024-01-01T00:00:00Z = 1704067200.
        let h = hours_since_1601(1_704_067_200);
        assert_eq!(unix_from_hours(h), 1_704_067_200);
        assert_eq!(hours_since_1601(1_704_067_200 + 3599), h);
        assert_eq!(filetime_from_unix(0), 116_444_736_000_000_000);
        assert_eq!(
            unix_from_filetime(filetime_from_unix(1_704_067_200)),
            1_704_067_200
        );
        assert_eq!(hours_since_1601(u64::MAX), u32::MAX);
        assert_eq!(filetime_from_unix(u64::MAX), u64::MAX);
    }
}
