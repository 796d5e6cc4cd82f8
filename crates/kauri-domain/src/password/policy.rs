//! The domain's password and lockout rules, read from the domain object or from a
//! fine-grained password settings object (PSO), and the checks a new password must pass.

use std::collections::{BTreeMap, HashMap};

use super::secrets::StoredSecrets;
use super::time::{secs_to_ticks, AD_TICKS_PER_SECOND};
use super::PasswordError;

/// `pwdProperties` bit: passwords must meet the complexity rules.
const DOMAIN_PASSWORD_COMPLEX: i64 = 0x1;

/// Read access to an entry's attributes, so policies can be built from however the
/// caller keeps entries. Returns the first value as text; names match case-insensitively.
pub trait AttributeSource {
    /// The value of `attr`, if the entry has one.
    fn get(&self, attr: &str) -> Option<&str>;
}

impl<S: AttributeSource + ?Sized> AttributeSource for &S {
    fn get(&self, attr: &str) -> Option<&str> {
        (**self).get(attr)
    }
}

impl AttributeSource for [(&str, &str)] {
    fn get(&self, attr: &str) -> Option<&str> {
        self.iter()
            .find(|(name, _)| name.eq_ignore_ascii_case(attr))
            .map(|(_, value)| *value)
    }
}

impl<const N: usize> AttributeSource for [(&str, &str); N] {
    fn get(&self, attr: &str) -> Option<&str> {
        AttributeSource::get(self.as_slice(), attr)
    }
}

impl AttributeSource for HashMap<String, String> {
    fn get(&self, attr: &str) -> Option<&str> {
        match HashMap::get(self, attr) {
            Some(v) => Some(v),
            None => self
                .iter()
                .find(|(name, _)| name.eq_ignore_ascii_case(attr))
                .map(|(_, v)| v.as_str()),
        }
    }
}

impl AttributeSource for BTreeMap<String, String> {
    fn get(&self, attr: &str) -> Option<&str> {
        match BTreeMap::get(self, attr) {
            Some(v) => Some(v),
            None => self
                .iter()
                .find(|(name, _)| name.eq_ignore_ascii_case(attr))
                .map(|(_, v)| v.as_str()),
        }
    }
}

/// The rules for passwords and lockout that apply to an account. Durations are in
/// seconds and positive; 0 has the special meanings noted per field.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PasswordPolicy {
    /// Fewest characters (Unicode scalar values) a new password may have.
    pub min_length: u32,
    /// Whether new passwords must meet Windows' complexity rules.
    pub complexity: bool,
    /// How many passwords, the current one included, a new one must differ from.
    pub history_length: u32,
    /// How long a user must keep a password before changing it (0: no wait).
    pub min_age_secs: i64,
    /// How long a password lasts (0: forever).
    pub max_age_secs: i64,
    /// Failed logons that lock the account (0: never lock).
    pub lockout_threshold: u32,
    /// How long a lockout lasts (0: until an administrator unlocks the account).
    pub lockout_duration_secs: i64,
    /// How long failed logons are counted towards the threshold.
    pub lockout_window_secs: i64,
}

impl Default for PasswordPolicy {
    /// AD's Default Domain Policy: 7 characters, complexity on, 24 remembered passwords,
    /// 1 day minimum and 42 days maximum age, no lockout (30 minutes duration and window
    /// should a threshold be set).
    fn default() -> Self {
        PasswordPolicy {
            min_length: 7,
            complexity: true,
            history_length: 24,
            min_age_secs: 86_400,
            max_age_secs: 42 * 86_400,
            lockout_threshold: 0,
            lockout_duration_secs: 30 * 60,
            lockout_window_secs: 30 * 60,
        }
    }
}

/// Attribute names for the two places a policy comes from.
struct Names {
    min_length: &'static str,
    history_length: &'static str,
    min_age: &'static str,
    max_age: &'static str,
    lockout_threshold: &'static str,
    lockout_duration: &'static str,
    lockout_window: &'static str,
}

const DOMAIN: Names = Names {
    min_length: "minPwdLength",
    history_length: "pwdHistoryLength",
    min_age: "minPwdAge",
    max_age: "maxPwdAge",
    lockout_threshold: "lockoutThreshold",
    lockout_duration: "lockoutDuration",
    lockout_window: "lockOutObservationWindow",
};

const PSO: Names = Names {
    min_length: "msDS-MinimumPasswordLength",
    history_length: "msDS-PasswordHistoryLength",
    min_age: "msDS-MinimumPasswordAge",
    max_age: "msDS-MaximumPasswordAge",
    lockout_threshold: "msDS-LockoutThreshold",
    lockout_duration: "msDS-LockoutDuration",
    lockout_window: "msDS-LockoutObservationWindow",
};

fn bad_attr(attr: &str, value: &str) -> PasswordError {
    PasswordError::BadAttribute {
        attr: attr.to_owned(),
        value: value.to_owned(),
    }
}

fn int(src: &(impl AttributeSource + ?Sized), attr: &str) -> Result<Option<i64>, PasswordError> {
    src.get(attr)
        .map(|v| v.trim().parse::<i64>().map_err(|_| bad_attr(attr, v)))
        .transpose()
}

fn count(
    src: &(impl AttributeSource + ?Sized),
    attr: &str,
    default: u32,
) -> Result<u32, PasswordError> {
    match int(src, attr)? {
        Some(n) => u32::try_from(n).map_err(|_| bad_attr(attr, &n.to_string())),
        None => Ok(default),
    }
}

/// Seconds in an AD interval (negative 100-ns ticks), by magnitude.
fn interval_secs(ticks: i64) -> i64 {
    i64::try_from(ticks.unsigned_abs() / AD_TICKS_PER_SECOND.unsigned_abs()).unwrap_or(i64::MAX)
}

/// `maxPwdAge`: 0 and 0x8000000000000000 both mean "never expires".
fn max_age_secs(ticks: i64) -> i64 {
    if ticks == 0 || ticks == i64::MIN {
        0
    } else {
        interval_secs(ticks)
    }
}

/// `lockoutDuration`: a value that is not negative, or is 0x8000000000000000, locks
/// until an administrator unlocks (MS-ADTS 3.1.1.4.5.17).
fn lockout_duration_secs(ticks: i64) -> i64 {
    if ticks >= 0 || ticks == i64::MIN {
        0
    } else {
        interval_secs(ticks).max(1)
    }
}

impl PasswordPolicy {
    /// The policy the domain object states: `minPwdLength`, `pwdProperties` (bit 0x1,
    /// DOMAIN_PASSWORD_COMPLEX), `pwdHistoryLength`, `minPwdAge`, `maxPwdAge`,
    /// `lockoutThreshold`, `lockoutDuration` and `lockOutObservationWindow`, durations
    /// in AD's negative 100-ns form. An absent attribute keeps [`Default`]'s value.
    pub fn from_domain_attributes(
        src: &(impl AttributeSource + ?Sized),
    ) -> Result<PasswordPolicy, PasswordError> {
        let mut policy = PasswordPolicy::read(src, &DOMAIN)?;
        if let Some(props) = int(src, "pwdProperties")? {
            policy.complexity = props & DOMAIN_PASSWORD_COMPLEX != 0;
        }
        Ok(policy)
    }

    /// The policy a fine-grained password settings object (`msDS-PasswordSettings`)
    /// states. `msDS-PasswordReversibleEncryptionEnabled` is ignored: no reversible form
    /// is ever kept. An absent attribute keeps [`Default`]'s value.
    pub fn from_password_settings(
        src: &(impl AttributeSource + ?Sized),
    ) -> Result<PasswordPolicy, PasswordError> {
        let mut policy = PasswordPolicy::read(src, &PSO)?;
        let attr = "msDS-PasswordComplexityEnabled";
        if let Some(v) = src.get(attr) {
            policy.complexity = match v.trim() {
                t if t.eq_ignore_ascii_case("TRUE") => true,
                t if t.eq_ignore_ascii_case("FALSE") => false,
                _ => return Err(bad_attr(attr, v)),
            };
        }
        Ok(policy)
    }

    fn read(
        src: &(impl AttributeSource + ?Sized),
        names: &Names,
    ) -> Result<PasswordPolicy, PasswordError> {
        let d = PasswordPolicy::default();
        Ok(PasswordPolicy {
            min_length: count(src, names.min_length, d.min_length)?,
            complexity: d.complexity,
            history_length: count(src, names.history_length, d.history_length)?,
            min_age_secs: int(src, names.min_age)?.map_or(d.min_age_secs, interval_secs),
            max_age_secs: int(src, names.max_age)?.map_or(d.max_age_secs, max_age_secs),
            lockout_threshold: count(src, names.lockout_threshold, d.lockout_threshold)?,
            lockout_duration_secs: int(src, names.lockout_duration)?
                .map_or(d.lockout_duration_secs, lockout_duration_secs),
            lockout_window_secs: int(src, names.lockout_window)?
                .map_or(d.lockout_window_secs, interval_secs),
        })
    }

    /// The domain object's attributes stating this policy, for provisioning. "Never"
    /// (a zero maximum age or lockout duration) is written as 0x8000000000000000.
    pub fn to_domain_attributes(&self) -> Vec<(&'static str, String)> {
        let interval = |secs: i64| secs_to_ticks(secs).saturating_neg().to_string();
        let never_or = |secs: i64| {
            if secs <= 0 {
                i64::MIN.to_string()
            } else {
                interval(secs)
            }
        };
        vec![
            ("minPwdLength", self.min_length.to_string()),
            ("pwdProperties", i64::from(self.complexity).to_string()),
            ("pwdHistoryLength", self.history_length.to_string()),
            ("minPwdAge", interval(self.min_age_secs)),
            ("maxPwdAge", never_or(self.max_age_secs)),
            ("lockoutThreshold", self.lockout_threshold.to_string()),
            ("lockoutDuration", never_or(self.lockout_duration_secs)),
            (
                "lockOutObservationWindow",
                interval(self.lockout_window_secs),
            ),
        ]
    }

    /// Checks a new password against length, complexity and history, in that order, as
    /// AD does on a password set or change. Length counts Unicode characters (scalar
    /// values; a character outside the BMP counts once, where Windows counts two UTF-16
    /// units). `display_name` is empty when the account has none. Pass `secrets: None` to
    /// skip the history check, as AD does for an administrator's reset.
    pub fn check_new_password(
        &self,
        password: &str,
        sam_account_name: &str,
        display_name: &str,
        secrets: Option<&StoredSecrets>,
    ) -> Result<(), PolicyViolation> {
        if password.chars().count() < usize::try_from(self.min_length).unwrap_or(usize::MAX) {
            return Err(PolicyViolation::TooShort {
                min_length: self.min_length,
            });
        }
        if self.complexity {
            if let Some(failure) = complexity_failure(password, sam_account_name, display_name) {
                return Err(PolicyViolation::NotComplex(failure));
            }
        }
        if let Some(s) = secrets {
            let n = usize::try_from(self.history_length).unwrap_or(usize::MAX);
            if n > 0 && s.in_recent(password, n) {
                return Err(PolicyViolation::InHistory {
                    history_length: self.history_length,
                });
            }
        }
        Ok(())
    }

    /// Checks that a user's own change comes at least the minimum age after the last
    /// set (`pwd_last_set`, `now`: AD integer times). Not applied to administrator resets.
    pub fn check_min_age(&self, pwd_last_set: i64, now: i64) -> Result<(), PolicyViolation> {
        if self.min_age_secs > 0
            && pwd_last_set != 0
            && now < pwd_last_set.saturating_add(secs_to_ticks(self.min_age_secs))
        {
            return Err(PolicyViolation::TooYoung {
                min_age_secs: self.min_age_secs,
            });
        }
        Ok(())
    }
}

/// Which of Windows' complexity rules a password broke.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum ComplexityFailure {
    /// It contains the account's `sAMAccountName` (checked when that is 3+ characters).
    #[error("it contains the account name")]
    ContainsAccountName,
    /// It contains a 3+ character part of the account's `displayName`.
    #[error("it contains part of the user's display name")]
    ContainsDisplayName,
    /// It has characters of fewer than three of the five kinds.
    #[error(
        "it uses {found} of the five kinds of character (upper case, lower case, digits, \
         symbols, other letters); three are needed"
    )]
    TooFewKinds {
        /// How many kinds it has.
        found: u8,
    },
}

/// Why a new password was refused. Displays a reason for people; [`diagnostic`]
/// gives the text AD puts in the LDAP result.
///
/// [`diagnostic`]: PolicyViolation::diagnostic
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum PolicyViolation {
    /// Shorter than the minimum length.
    #[error("the password must have at least {min_length} characters")]
    TooShort {
        /// The policy's minimum length.
        min_length: u32,
    },
    /// Not complex enough.
    #[error("the password does not meet the complexity requirements: {0}")]
    NotComplex(ComplexityFailure),
    /// The same as a remembered password.
    #[error("the password is the same as one of the last {history_length} passwords")]
    InHistory {
        /// The policy's history length.
        history_length: u32,
    },
    /// Changed again before the minimum age passed.
    #[error("the password was changed less than {min_age_secs} seconds ago")]
    TooYoung {
        /// The policy's minimum age.
        min_age_secs: i64,
    },
}

impl PolicyViolation {
    /// The LDAP result code AD answers with: constraintViolation.
    pub const RESULT_CODE: u8 = 19;

    /// The LDAP diagnostic message, in the form Samba's AD DC gives (WERR_PASSWORD_RESTRICTION,
    /// 0x52D), which clients match on.
    pub fn diagnostic(&self) -> String {
        let detail = match self {
            PolicyViolation::TooShort { min_length } => format!(
                "the password is too short. It should be equal or longer than {min_length} characters!"
            ),
            PolicyViolation::NotComplex(_) => {
                "the password does not meet the complexity criteria!".to_owned()
            }
            PolicyViolation::InHistory { .. } => {
                "the password was already used (in history)!".to_owned()
            }
            PolicyViolation::TooYoung { .. } => "password is too young to change!".to_owned(),
        };
        format!("0000052D: Constraint violation - check_password_restrictions: {detail}")
    }
}

/// Characters that split a display name into the tokens the complexity rule looks for.
fn is_display_name_delimiter(c: char) -> bool {
    matches!(c, ',' | '.' | '-' | '_' | '#' | '\t' | ' ')
}

/// Windows' "Password must meet complexity requirements": no account name, no display
/// name token of 3+ characters (both case-insensitive), and three of five kinds of
/// character: upper case letters, lower case letters, the digits 0-9, the ASCII symbols
/// (`~!@#$%^&*_-+=`|\(){}[]:;"'<>,.?/`), and letters that are neither upper nor lower
/// case (as in Asian scripts). Spaces and non-ASCII symbols such as currency signs count
/// as none of the kinds.
fn complexity_failure(
    password: &str,
    sam_account_name: &str,
    display_name: &str,
) -> Option<ComplexityFailure> {
    let folded = password.to_lowercase();
    if sam_account_name.chars().count() > 2 && folded.contains(&sam_account_name.to_lowercase()) {
        return Some(ComplexityFailure::ContainsAccountName);
    }
    if display_name
        .split(is_display_name_delimiter)
        .filter(|token| token.chars().count() >= 3)
        .any(|token| folded.contains(&token.to_lowercase()))
    {
        return Some(ComplexityFailure::ContainsDisplayName);
    }
    let mut kinds = [false; 5];
    for c in password.chars() {
        if c.is_uppercase() {
            kinds[0] = true;
        } else if c.is_lowercase() {
            kinds[1] = true;
        } else if c.is_ascii_digit() {
            kinds[2] = true;
        } else if c.is_ascii_punctuation() {
            kinds[3] = true;
        } else if c.is_alphabetic() {
            kinds[4] = true;
        }
    }
    let found = kinds.iter().filter(|k| **k).count() as u8;
    (found < 3).then_some(ComplexityFailure::TooFewKinds { found })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::password::time::ad_time_from_unix;
    use crate::password::CryptSchemes;

    /// The domain object's values as Samba provisions them (and Windows ships them).
    const DOMAIN_DEFAULTS: [(&str, &str); 8] = [
        ("minPwdLength", "7"),
        ("pwdProperties", "1"),
        ("pwdHistoryLength", "24"),
        ("minPwdAge", "-864000000000"),
        ("maxPwdAge", "-37108517437440"),
        ("lockoutThreshold", "0"),
        ("lockoutDuration", "-18000000000"),
        ("lockOutObservationWindow", "-18000000000"),
    ];

    #[test]
    fn domain_attributes() {
        let p = PasswordPolicy::from_domain_attributes(&DOMAIN_DEFAULTS).unwrap();
        // -37108517437440 is Windows' "42 days" (-(8640 << 32) ticks, a little over).
        assert_eq!(
            p,
            PasswordPolicy {
                max_age_secs: 3_710_851,
                ..PasswordPolicy::default()
            }
        );
        let p = PasswordPolicy::from_domain_attributes(&[
            ("MINPWDLENGTH", "12"),
            ("pwdProperties", "0"),
            ("maxPwdAge", "-9223372036854775808"),
            ("lockoutThreshold", "5"),
            ("lockoutDuration", "-9223372036854775808"),
            ("lockOutObservationWindow", "-6000000000"),
        ])
        .unwrap();
        assert_eq!(p.min_length, 12);
        assert!(!p.complexity);
        assert_eq!(p.max_age_secs, 0);
        assert_eq!(p.lockout_threshold, 5);
        assert_eq!(p.lockout_duration_secs, 0);
        assert_eq!(p.lockout_window_secs, 600);
        assert_eq!(p.history_length, 24);
        // pwdProperties bits other than 0x1 do not turn complexity on.
        let p = PasswordPolicy::from_domain_attributes(&[("pwdProperties", "16")]).unwrap();
        assert!(!p.complexity);
        assert_eq!(
            PasswordPolicy::from_domain_attributes(&[("maxPwdAge", "0")])
                .unwrap()
                .max_age_secs,
            0
        );
        assert_eq!(
            PasswordPolicy::from_domain_attributes(&[("lockoutDuration", "0")])
                .unwrap()
                .lockout_duration_secs,
            0
        );
        for bad in [
            ("minPwdLength", "-1"),
            ("minPwdLength", "seven"),
            ("maxPwdAge", ""),
        ] {
            assert!(
                PasswordPolicy::from_domain_attributes(&[bad]).is_err(),
                "{bad:?}"
            );
        }
        let map: HashMap<String, String> = [("minpwdlength".to_owned(), "9".to_owned())].into();
        assert_eq!(
            PasswordPolicy::from_domain_attributes(&map)
                .unwrap()
                .min_length,
            9
        );
    }

    #[test]
    fn domain_attributes_round_trip() {
        let attrs = PasswordPolicy::default().to_domain_attributes();
        let pairs: Vec<(&str, &str)> = attrs.iter().map(|(a, v)| (*a, v.as_str())).collect();
        assert_eq!(
            PasswordPolicy::from_domain_attributes(pairs.as_slice()).unwrap(),
            PasswordPolicy::default()
        );
        let never = PasswordPolicy {
            max_age_secs: 0,
            lockout_duration_secs: 0,
            ..PasswordPolicy::default()
        };
        let attrs = never.to_domain_attributes();
        assert!(attrs.contains(&("maxPwdAge", "-9223372036854775808".to_owned())));
        assert!(attrs.contains(&("minPwdAge", "-864000000000".to_owned())));
        let pairs: Vec<(&str, &str)> = attrs.iter().map(|(a, v)| (*a, v.as_str())).collect();
        assert_eq!(
            PasswordPolicy::from_domain_attributes(pairs.as_slice()).unwrap(),
            never
        );
    }

    #[test]
    fn password_settings_object() {
        let p = PasswordPolicy::from_password_settings(&[
            ("msDS-MinimumPasswordLength", "14"),
            ("msDS-PasswordComplexityEnabled", "FALSE"),
            ("msDS-PasswordHistoryLength", "5"),
            ("msDS-MinimumPasswordAge", "0"),
            ("msDS-MaximumPasswordAge", "-25920000000000"),
            ("msDS-LockoutThreshold", "3"),
            ("msDS-LockoutDuration", "-36000000000"),
            ("msDS-LockoutObservationWindow", "-36000000000"),
            ("msDS-PasswordReversibleEncryptionEnabled", "TRUE"),
            ("msDS-PasswordSettingsPrecedence", "10"),
        ])
        .unwrap();
        assert_eq!(
            p,
            PasswordPolicy {
                min_length: 14,
                complexity: false,
                history_length: 5,
                min_age_secs: 0,
                max_age_secs: 30 * 86_400,
                lockout_threshold: 3,
                lockout_duration_secs: 3600,
                lockout_window_secs: 3600,
            }
        );
        assert!(
            PasswordPolicy::from_password_settings(&[("msDS-PasswordComplexityEnabled", "true")])
                .unwrap()
                .complexity
        );
        assert!(PasswordPolicy::from_password_settings(&[(
            "msDS-PasswordComplexityEnabled",
            "yes"
        )])
        .is_err());
    }

    #[test]
    fn length() {
        let p = PasswordPolicy::default();
        assert_eq!(
            p.check_new_password("Ab1!x", "jdoe", "", None),
            Err(PolicyViolation::TooShort { min_length: 7 })
        );
        assert_eq!(p.check_new_password("Ab1!xyz", "jdoe", "", None), Ok(()));
        // Characters, not bytes or UTF-16 units.
        assert_eq!(p.check_new_password("Äb1!xyz", "jdoe", "", None), Ok(()));
        let p = PasswordPolicy {
            complexity: false,
            ..p
        };
        assert_eq!(
            p.check_new_password("🔑🔑🔑🔑🔑🔑🔑", "jdoe", "", None),
            Ok(())
        );
    }

    #[test]
    fn complexity() {
        let p = PasswordPolicy::default();
        let check = |pw: &str| p.check_new_password(pw, "jdoe", "Doe, John A.", None);
        let kinds = |found| {
            Err(PolicyViolation::NotComplex(
                ComplexityFailure::TooFewKinds { found },
            ))
        };
        assert_eq!(check("Password1"), Ok(()));
        assert_eq!(check("password"), kinds(1));
        assert_eq!(check("password1"), kinds(2));
        assert_eq!(check("password1!"), Ok(()));
        assert_eq!(check("PASSWORD!"), kinds(2));
        // Spaces and non-ASCII symbols are no kind at all.
        assert_eq!(check("pass word €"), kinds(1));
        // Accented and Greek letters have case.
        assert_eq!(check("ÉCOLEécole"), kinds(2));
        assert_eq!(check("ÉCOLEécole7"), Ok(()));
        assert_eq!(check("ΑΒΓδεζ1"), Ok(()));
        // Letters without case are the fifth kind.
        assert_eq!(check("密码密码密Aa"), Ok(()));
        assert_eq!(check("密码密码123"), kinds(2));
        assert_eq!(
            check("xJDoe!2024"),
            Err(PolicyViolation::NotComplex(
                ComplexityFailure::ContainsAccountName
            ))
        );
        assert_eq!(
            check("Secret!john7"),
            Err(PolicyViolation::NotComplex(
                ComplexityFailure::ContainsDisplayName
            ))
        );
        assert_eq!(
            check("Secret!DOE7x"),
            Err(PolicyViolation::NotComplex(
                ComplexityFailure::ContainsDisplayName
            ))
        );
        // "A" is under three characters and is ignored.
        assert_eq!(check("Secret!A7x"), Ok(()));
        // A two-character account name is not checked.
        assert_eq!(p.check_new_password("Xab!2024", "ab", "", None), Ok(()));
        // Other delimiters: # _ - . and tab.
        for name in [
            "Mary#Smith",
            "Mary_Smith",
            "Mary-Smith",
            "Mary.Smith",
            "Mary\tSmith",
        ] {
            assert_eq!(
                p.check_new_password("xx!SMITH9", "msmith", name, None),
                Err(PolicyViolation::NotComplex(
                    ComplexityFailure::ContainsDisplayName
                )),
                "{name}"
            );
        }
        // Complexity off: only length counts.
        let off = PasswordPolicy {
            complexity: false,
            ..PasswordPolicy::default()
        };
        assert_eq!(off.check_new_password("jdoejdoe", "jdoe", "", None), Ok(()));
    }

    #[test]
    fn history() {
        let s = StoredSecrets::from_password("First!111", CryptSchemes::ALL)
            .unwrap()
            .with_new_password("Second!22", 24, CryptSchemes::ALL)
            .unwrap()
            .with_new_password("Third!333", 24, CryptSchemes::ALL)
            .unwrap();
        let with = |n: u32| PasswordPolicy {
            history_length: n,
            ..PasswordPolicy::default()
        };
        let check = |n: u32, pw: &str| with(n).check_new_password(pw, "jdoe", "", Some(&s));
        let refused = |n: u32| Err(PolicyViolation::InHistory { history_length: n });
        assert_eq!(check(24, "First!111"), refused(24));
        assert_eq!(check(24, "Third!333"), refused(24));
        assert_eq!(check(24, "Fourth!44"), Ok(()));
        assert_eq!(check(2, "Second!22"), refused(2));
        assert_eq!(check(2, "First!111"), Ok(()));
        assert_eq!(check(1, "Third!333"), refused(1));
        assert_eq!(check(1, "Second!22"), Ok(()));
        assert_eq!(check(0, "Third!333"), Ok(()));
        // An administrator's reset skips history.
        assert_eq!(
            with(24).check_new_password("Third!333", "jdoe", "", None),
            Ok(())
        );
    }

    #[test]
    fn min_age() {
        let p = PasswordPolicy::default();
        let set = ad_time_from_unix(1_700_000_000);
        assert_eq!(
            p.check_min_age(set, set + secs_to_ticks(3600)),
            Err(PolicyViolation::TooYoung {
                min_age_secs: 86_400
            })
        );
        assert_eq!(p.check_min_age(set, set + secs_to_ticks(86_400)), Ok(()));
        assert_eq!(p.check_min_age(0, set), Ok(()));
        let none = PasswordPolicy {
            min_age_secs: 0,
            ..p
        };
        assert_eq!(none.check_min_age(set, set), Ok(()));
    }

    #[test]
    fn diagnostics() {
        let prefix = "0000052D: Constraint violation - check_password_restrictions: ";
        let cases = [
            (
                PolicyViolation::TooShort { min_length: 7 },
                "the password is too short. It should be equal or longer than 7 characters!",
            ),
            (
                PolicyViolation::NotComplex(ComplexityFailure::ContainsAccountName),
                "the password does not meet the complexity criteria!",
            ),
            (
                PolicyViolation::InHistory { history_length: 24 },
                "the password was already used (in history)!",
            ),
            (
                PolicyViolation::TooYoung { min_age_secs: 1 },
                "password is too young to change!",
            ),
        ];
        for (v, text) in cases {
            assert_eq!(v.diagnostic(), format!("{prefix}{text}"));
            assert!(!v.to_string().is_empty());
        }
        assert_eq!(PolicyViolation::RESULT_CODE, 19);
        assert_eq!(
            PolicyViolation::NotComplex(ComplexityFailure::TooFewKinds { found: 2 }).to_string(),
            "the password does not meet the complexity requirements: it uses 2 of the five kinds \
             of character (upper case, lower case, digits, symbols, other letters); three are needed"
        );
    }
}
