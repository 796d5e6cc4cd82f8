//! AD's integer time (100-ns intervals since 1601-01-01 UTC, as in `pwdLastSet` and
//! `lockoutTime`) and the expiry and lockout rules that read it.

/// 100-ns intervals per second.
pub const AD_TICKS_PER_SECOND: i64 = 10_000_000;
/// Seconds from 1601-01-01 to 1970-01-01 UTC.
pub const AD_EPOCH_TO_UNIX_SECS: i64 = 11_644_473_600;

/// The AD integer time of a Unix time in seconds (saturating at the ends of `i64`).
pub fn ad_time_from_unix(unix_secs: i64) -> i64 {
    unix_secs
        .saturating_add(AD_EPOCH_TO_UNIX_SECS)
        .saturating_mul(AD_TICKS_PER_SECOND)
}

/// The Unix time in whole seconds (rounded down) of an AD integer time.
pub fn unix_from_ad_time(ad_time: i64) -> i64 {
    ad_time.div_euclid(AD_TICKS_PER_SECOND) - AD_EPOCH_TO_UNIX_SECS
}

/// A duration in seconds as AD ticks, saturating.
pub(crate) fn secs_to_ticks(secs: i64) -> i64 {
    secs.saturating_mul(AD_TICKS_PER_SECOND)
}

/// Whether `pwdLastSet` says the user must set a new password before logging on
/// (0: an administrator asked for it, or no password was ever set).
pub fn must_change_password(pwd_last_set: i64) -> bool {
    pwd_last_set == 0
}

/// Whether a password set at `pwd_last_set` has outlived `max_age_secs` by `now` (both
/// times AD integer times). A `max_age_secs` of 0 or less means passwords never expire;
/// a `pwd_last_set` of 0 is [`must_change_password`], not expiry. MS-SAMR 3.1.5.14.4:
/// the password expires once `pwdLastSet + maxPwdAge` is in the past.
pub fn is_expired(pwd_last_set: i64, now: i64, max_age_secs: i64) -> bool {
    if pwd_last_set == 0 || max_age_secs <= 0 {
        return false;
    }
    now > pwd_last_set.saturating_add(secs_to_ticks(max_age_secs))
}

/// Whether an account locked out at `lockout_time` (AD integer time, 0 = not locked) is
/// still locked at `now`. A `duration_secs` of 0 (or less) keeps it locked until an
/// administrator clears `lockoutTime`, as AD does for a lockoutDuration that is not
/// negative or is 0x8000000000000000 (MS-ADTS 3.1.1.4.5.17); otherwise it is locked
/// through `lockout_time + duration`, that instant included.
pub fn lockout_active(lockout_time: i64, now: i64, duration_secs: i64) -> bool {
    if lockout_time == 0 {
        return false;
    }
    if duration_secs <= 0 {
        return true;
    }
    now <= lockout_time.saturating_add(secs_to_ticks(duration_secs))
}

/// The AD integer time of this moment, to the 100-ns tick the clock gives.
pub fn ad_time_now() -> i64 {
    let since = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap_or_default();
    let secs = i64::try_from(since.as_secs()).unwrap_or(i64::MAX);
    ad_time_from_unix(secs).saturating_add(i64::from(since.subsec_nanos() / 100))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn conversions() {
        assert_eq!(ad_time_from_unix(0), 116_444_736_000_000_000);
        // 2000-01-01T00:00:00Z
        assert_eq!(ad_time_from_unix(946_684_800), 125_911_584_000_000_000);
        assert_eq!(unix_from_ad_time(125_911_584_000_000_000), 946_684_800);
        assert_eq!(unix_from_ad_time(125_911_584_009_999_999), 946_684_800);
        assert_eq!(unix_from_ad_time(0), -AD_EPOCH_TO_UNIX_SECS);
        assert_eq!(ad_time_from_unix(i64::MAX), i64::MAX);
        assert_eq!(
            unix_from_ad_time(ad_time_from_unix(1_700_000_000)),
            1_700_000_000
        );
    }

    #[test]
    fn expiry() {
        let set = ad_time_from_unix(1_700_000_000);
        let day = 86_400;
        assert!(!is_expired(set, set + secs_to_ticks(42 * day), 42 * day));
        assert!(is_expired(set, set + secs_to_ticks(42 * day) + 1, 42 * day));
        assert!(!is_expired(set, i64::MAX, 0));
        assert!(!is_expired(0, i64::MAX, 42 * day));
        assert!(must_change_password(0));
        assert!(!must_change_password(set));
        assert!(!is_expired(i64::MAX - 5, i64::MAX, 42 * day));
    }

    #[test]
    fn lockout() {
        let locked = ad_time_from_unix(1_700_000_000);
        assert!(!lockout_active(0, locked, 1800));
        assert!(lockout_active(locked, locked, 1800));
        assert!(lockout_active(locked, locked + secs_to_ticks(1800), 1800));
        assert!(!lockout_active(
            locked,
            locked + secs_to_ticks(1800) + 1,
            1800
        ));
        assert!(lockout_active(locked, i64::MAX, 0));
    }
}
