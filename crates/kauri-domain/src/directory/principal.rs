//! Security principals: the rules AD applies to users, computers and groups — account
//! types from `userAccountControl` and `groupType`, the `sAMAccountType` derived from
//! them, default primary groups, what a group of each scope may contain, and which names
//! are acceptable as `sAMAccountName`.

use super::error::{DirError, DirResult};
use crate::sid::rid;

/// `userAccountControl` bits (MS-ADTS 2.2.16).
pub mod uac {
    /// The account is disabled.
    pub const ACCOUNTDISABLE: u32 = 0x2;
    /// A home directory is required.
    pub const HOMEDIR_REQUIRED: u32 = 0x8;
    /// Computed: the account is locked out (never stored).
    pub const LOCKOUT: u32 = 0x10;
    /// No password is required.
    pub const PASSWD_NOTREQD: u32 = 0x20;
    /// The user cannot change the password.
    pub const PASSWD_CANT_CHANGE: u32 = 0x40;
    /// Reversible encryption allowed.
    pub const ENCRYPTED_TEXT_PWD_ALLOWED: u32 = 0x80;
    /// A local account of another domain.
    pub const TEMP_DUPLICATE_ACCOUNT: u32 = 0x100;
    /// An ordinary user account.
    pub const NORMAL_ACCOUNT: u32 = 0x200;
    /// A trust account of another domain.
    pub const INTERDOMAIN_TRUST_ACCOUNT: u32 = 0x800;
    /// A member computer.
    pub const WORKSTATION_TRUST_ACCOUNT: u32 = 0x1000;
    /// A domain controller.
    pub const SERVER_TRUST_ACCOUNT: u32 = 0x2000;
    /// The password never expires.
    pub const DONT_EXPIRE_PASSWORD: u32 = 0x10000;
    /// Smart card required.
    pub const SMARTCARD_REQUIRED: u32 = 0x40000;
    /// Trusted for Kerberos delegation.
    pub const TRUSTED_FOR_DELEGATION: u32 = 0x80000;
    /// A read-only domain controller's account (with WORKSTATION_TRUST_ACCOUNT).
    pub const PARTIAL_SECRETS_ACCOUNT: u32 = 0x0400_0000;
    /// Computed: the password has expired (never stored).
    pub const PASSWORD_EXPIRED: u32 = 0x80_0000;
    /// Every account-type bit; exactly one is set on a stored account.
    pub const ACCOUNT_TYPES: u32 = TEMP_DUPLICATE_ACCOUNT
        | NORMAL_ACCOUNT
        | INTERDOMAIN_TRUST_ACCOUNT
        | WORKSTATION_TRUST_ACCOUNT
        | SERVER_TRUST_ACCOUNT;
    /// Bits computed when read, masked off when written.
    pub const COMPUTED: u32 = LOCKOUT | PASSWORD_EXPIRED;
}

/// `groupType` bits (MS-ADTS 2.2.12).
pub mod group_type {
    /// Created by the system (Builtin aliases).
    pub const BUILTIN_LOCAL: u32 = 0x1;
    /// Global scope.
    pub const GLOBAL: u32 = 0x2;
    /// Domain-local scope.
    pub const DOMAIN_LOCAL: u32 = 0x4;
    /// Universal scope.
    pub const UNIVERSAL: u32 = 0x8;
    /// A security group (clear: a distribution group).
    pub const SECURITY: u32 = 0x8000_0000;
    /// Global security group, the default of a new group.
    pub const DEFAULT: u32 = SECURITY | GLOBAL;
}

/// `sAMAccountType` values (MS-ADTS 2.2.15).
pub mod account_type {
    /// Security global or universal group.
    pub const GROUP_OBJECT: u32 = 0x1000_0000;
    /// Distribution global or universal group.
    pub const NON_SECURITY_GROUP_OBJECT: u32 = 0x1000_0001;
    /// Security domain-local group (and Builtin aliases).
    pub const ALIAS_OBJECT: u32 = 0x2000_0000;
    /// Distribution domain-local group.
    pub const NON_SECURITY_ALIAS_OBJECT: u32 = 0x2000_0001;
    /// A user.
    pub const NORMAL_USER_ACCOUNT: u32 = 0x3000_0000;
    /// A computer (member or DC).
    pub const MACHINE_ACCOUNT: u32 = 0x3000_0001;
    /// A trust account.
    pub const TRUST_ACCOUNT: u32 = 0x3000_0002;
}

/// The scope of a group.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scope {
    /// Members from its own domain; member of any group.
    Global,
    /// Members from anywhere; member only of domain-local groups.
    DomainLocal,
    /// Members from the forest; member of universal and domain-local groups.
    Universal,
}

/// Reads an AD integer attribute value (signed decimal; bit fields are 32-bit).
pub fn parse_u32_bits(raw: &[u8]) -> Option<u32> {
    let n: i64 = std::str::from_utf8(raw).ok()?.trim().parse().ok()?;
    // groupType is stored signed (-2147483646); both forms name the same bits.
    u32::try_from(n)
        .ok()
        .or_else(|| i32::try_from(n).ok().map(|v| v as u32))
}

/// The signed decimal form AD stores a 32-bit field in.
pub fn bits_text(bits: u32) -> String {
    (bits as i32).to_string()
}

/// Checks and completes a `userAccountControl` value being stored, with AD's result codes
/// in AD's order (MS-SAMR 3.1.1.8.10): computed bits are dropped; a temporary duplicate
/// account is refused (other); a user object cannot be created as a computer account nor
/// become a domain controller's, and a computer cannot be a trust account
/// (objectClassViolation); only the system creates trust accounts
/// (insufficientAccessRights); an account without a type is a normal account, or when a
/// computer is created, a workstation; two types are refused.
pub fn normalize_uac(value: u32, computer: bool, system: bool, adding: bool) -> DirResult<u32> {
    let mut v = value & !uac::COMPUTED;
    if v & uac::TEMP_DUPLICATE_ACCOUNT != 0 {
        return Err(DirError::Other(format!(
            "00000057: SvcErr: problem 5003 (WILL_NOT_PERFORM): userAccountControl {value:#x}: \
             temporary duplicate accounts are not supported"
        )));
    }
    let machine = uac::WORKSTATION_TRUST_ACCOUNT | uac::SERVER_TRUST_ACCOUNT;
    let not_for_users = if adding {
        machine | uac::PARTIAL_SECRETS_ACCOUNT
    } else {
        uac::SERVER_TRUST_ACCOUNT | uac::PARTIAL_SECRETS_ACCOUNT
    };
    if !computer && v & not_for_users != 0 {
        return Err(DirError::ObjectClassViolation(format!(
            "00002099: userAccountControl {value:#x}: a computer or domain controller account \
             needs an object of class computer"
        )));
    }
    if computer && v & uac::INTERDOMAIN_TRUST_ACCOUNT != 0 {
        return Err(DirError::ObjectClassViolation(format!(
            "00002099: userAccountControl {value:#x}: a computer object cannot be a trust \
             account"
        )));
    }
    if !system && v & uac::INTERDOMAIN_TRUST_ACCOUNT != 0 {
        return Err(DirError::InsufficientAccess(format!(
            "00002098: userAccountControl {value:#x}: trust accounts are created by the domain \
             controller"
        )));
    }
    if v & uac::PARTIAL_SECRETS_ACCOUNT != 0 && v & uac::WORKSTATION_TRUST_ACCOUNT == 0 {
        return Err(DirError::ObjectClassViolation(format!(
            "00002099: userAccountControl {value:#x}: a read-only domain controller account \
             is a workstation trust account"
        )));
    }
    match (v & uac::ACCOUNT_TYPES).count_ones() {
        0 if computer && adding => v |= uac::WORKSTATION_TRUST_ACCOUNT,
        0 => v |= uac::NORMAL_ACCOUNT,
        1 => {}
        _ => {
            return Err(DirError::UnwillingToPerform(format!(
                "00002083: userAccountControl {value:#x} names more than one account type"
            )))
        }
    }
    Ok(v)
}

/// The `isCriticalSystemObject` AD stamps on an account that becomes a computer account:
/// TRUE for domain controllers (read-only ones too), FALSE for workstations; `None`
/// (left as it is) for other accounts.
pub fn critical_for_uac(uac_bits: u32) -> Option<&'static str> {
    if uac_bits & (uac::SERVER_TRUST_ACCOUNT | uac::PARTIAL_SECRETS_ACCOUNT) != 0 {
        Some("TRUE")
    } else if uac_bits & uac::WORKSTATION_TRUST_ACCOUNT != 0 {
        Some("FALSE")
    } else {
        None
    }
}

/// `sAMAccountType` of an account with this `userAccountControl`.
pub fn user_account_type(uac_bits: u32) -> u32 {
    if uac_bits & (uac::WORKSTATION_TRUST_ACCOUNT | uac::SERVER_TRUST_ACCOUNT) != 0 {
        account_type::MACHINE_ACCOUNT
    } else if uac_bits & uac::INTERDOMAIN_TRUST_ACCOUNT != 0 {
        account_type::TRUST_ACCOUNT
    } else {
        account_type::NORMAL_USER_ACCOUNT
    }
}

/// The primary group a new account gets (Domain Users, Domain Computers, Domain
/// Controllers).
pub fn default_primary_group(uac_bits: u32) -> u32 {
    if uac_bits & uac::SERVER_TRUST_ACCOUNT != 0 {
        rid::DOMAIN_CONTROLLERS
    } else if uac_bits & uac::PARTIAL_SECRETS_ACCOUNT != 0 {
        rid::READONLY_DOMAIN_CONTROLLERS
    } else if uac_bits & uac::WORKSTATION_TRUST_ACCOUNT != 0 {
        rid::DOMAIN_COMPUTERS
    } else {
        rid::DOMAIN_USERS
    }
}

/// The scope of a `groupType`, checking that it names exactly one (the Builtin bit only
/// for the system).
pub fn group_scope(bits: u32, system: bool) -> DirResult<Scope> {
    if bits & group_type::BUILTIN_LOCAL != 0 && !system {
        return Err(DirError::UnwillingToPerform(
            "only the system creates Builtin groups".into(),
        ));
    }
    let scopes = bits & (group_type::GLOBAL | group_type::DOMAIN_LOCAL | group_type::UNIVERSAL);
    match scopes {
        group_type::GLOBAL => Ok(Scope::Global),
        group_type::DOMAIN_LOCAL => Ok(Scope::DomainLocal),
        group_type::UNIVERSAL => Ok(Scope::Universal),
        _ => Err(DirError::UnwillingToPerform(format!(
            "groupType {} must name exactly one scope (global, domain local or universal)",
            bits_text(bits)
        ))),
    }
}

/// `sAMAccountType` of a group with this `groupType`.
pub fn group_account_type(bits: u32) -> u32 {
    let security = bits & group_type::SECURITY != 0;
    let local = bits & (group_type::DOMAIN_LOCAL | group_type::BUILTIN_LOCAL) != 0;
    match (local, security) {
        (true, true) => account_type::ALIAS_OBJECT,
        (true, false) => account_type::NON_SECURITY_ALIAS_OBJECT,
        (false, true) => account_type::GROUP_OBJECT,
        (false, false) => account_type::NON_SECURITY_GROUP_OBJECT,
    }
}

/// Whether a group of scope `outer` may hold a group of scope `inner` as a member
/// (within one domain).
pub fn may_nest(outer: Scope, inner: Scope) -> bool {
    match outer {
        Scope::Global => inner == Scope::Global,
        Scope::Universal => inner != Scope::DomainLocal,
        Scope::DomainLocal => true,
    }
}

/// AD refuses to clear PASSWD_NOTREQD of an enabled user account that has no password
/// (0000052D): the account would be usable with an empty one. Computer accounts get their
/// password from the machine that joins.
pub fn check_password_required(before: u32, after: u32, has_password: bool) -> DirResult<()> {
    let cleared = before & uac::PASSWD_NOTREQD != 0 && after & uac::PASSWD_NOTREQD == 0;
    let enabled = after & uac::ACCOUNTDISABLE == 0;
    let normal = after & uac::NORMAL_ACCOUNT != 0;
    if cleared && enabled && normal && !has_password {
        return Err(DirError::UnwillingToPerform(
            "0000052D: SvcErr: DSID-031A12D2, problem 5003 (WILL_NOT_PERFORM), data 0: an \
             enabled account needs a password (set one first, or keep PASSWD_NOTREQD)"
                .into(),
        ));
    }
    Ok(())
}

/// Checks a `sAMAccountName`: not empty, at most 256 characters, none of the characters
/// Windows forbids, not only dots and spaces.
pub fn check_sam_account_name(name: &str) -> DirResult<()> {
    const FORBIDDEN: &[char] = &[
        '"', '/', '\\', '[', ']', ':', ';', '|', '=', ',', '+', '*', '?', '<', '>',
    ];
    let bad = name.is_empty()
        || name.chars().count() > 256
        || name
            .chars()
            .any(|c| FORBIDDEN.contains(&c) || c.is_control())
        || name.chars().all(|c| c == '.' || c == ' ');
    if bad {
        return Err(DirError::ConstraintViolation(format!(
            "sAMAccountName {name:?} is not a valid account name"
        )));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn account_types() {
        assert_eq!(
            normalize_uac(0, false, false, true).unwrap(),
            uac::NORMAL_ACCOUNT
        );
        assert_eq!(
            normalize_uac(0, true, false, true).unwrap(),
            uac::WORKSTATION_TRUST_ACCOUNT
        );
        assert_eq!(
            normalize_uac(0, true, false, false).unwrap(),
            uac::NORMAL_ACCOUNT
        );
        assert_eq!(
            normalize_uac(
                uac::NORMAL_ACCOUNT | uac::LOCKOUT | uac::ACCOUNTDISABLE,
                false,
                false,
                true
            )
            .unwrap(),
            uac::NORMAL_ACCOUNT | uac::ACCOUNTDISABLE
        );
        let two = uac::NORMAL_ACCOUNT | uac::WORKSTATION_TRUST_ACCOUNT;
        assert_eq!(
            normalize_uac(two, true, false, true)
                .unwrap_err()
                .ldap_result_code(),
            53
        );
        let code = |v, computer, adding| {
            normalize_uac(v, computer, false, adding)
                .unwrap_err()
                .ldap_result_code()
        };
        assert_eq!(code(uac::TEMP_DUPLICATE_ACCOUNT, false, true), 80);
        assert_eq!(code(uac::SERVER_TRUST_ACCOUNT, false, false), 65);
        assert_eq!(code(uac::WORKSTATION_TRUST_ACCOUNT, false, true), 65);
        assert!(normalize_uac(uac::WORKSTATION_TRUST_ACCOUNT, false, false, false).is_ok());
        assert_eq!(code(uac::INTERDOMAIN_TRUST_ACCOUNT, true, true), 65);
        assert_eq!(code(uac::INTERDOMAIN_TRUST_ACCOUNT, false, true), 50);
        assert!(normalize_uac(uac::INTERDOMAIN_TRUST_ACCOUNT, false, true, true).is_ok());
        assert_eq!(user_account_type(512), 805_306_368);
        assert_eq!(user_account_type(4096), 805_306_369);
        assert_eq!(user_account_type(532_480), 805_306_369);
        assert_eq!(default_primary_group(4096), 515);
        assert_eq!(default_primary_group(532_480), 516);
        assert_eq!(default_primary_group(66048), 513);
    }

    #[test]
    fn group_types() {
        let global = parse_u32_bits(b"-2147483646").unwrap();
        assert_eq!(global, group_type::DEFAULT);
        assert_eq!(bits_text(global), "-2147483646");
        assert_eq!(group_scope(global, false).unwrap(), Scope::Global);
        assert_eq!(group_account_type(global), 268_435_456);
        assert_eq!(group_account_type(0x4), 536_870_913);
        assert_eq!(
            group_account_type(parse_u32_bits(b"-2147483643").unwrap()),
            536_870_912
        );
        assert!(group_scope(0x8000_0006, false).is_err());
        assert!(group_scope(0x8000_0005, false).is_err());
        assert!(group_scope(0x8000_0005, true).is_ok());
        assert!(may_nest(Scope::Global, Scope::Global));
        assert!(!may_nest(Scope::Global, Scope::Universal));
        assert!(!may_nest(Scope::Universal, Scope::DomainLocal));
        assert!(may_nest(Scope::DomainLocal, Scope::DomainLocal));
    }

    #[test]
    fn account_names() {
        assert!(check_sam_account_name("alice").is_ok());
        assert!(check_sam_account_name("DC1$").is_ok());
        for bad in ["", "a/b", "x*", "...", "a\u{7}"] {
            assert!(check_sam_account_name(bad).is_err(), "{bad:?}");
        }
    }
}
