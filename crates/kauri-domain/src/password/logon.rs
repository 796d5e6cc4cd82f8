//! Why a bind was refused. AD answers every refused simple bind with LDAP result 49
//! (invalidCredentials) and tells the reason only in the diagnostic message's
//! `data <code>` part, a Win32 error code in hex that clients parse.

/// The reason a logon (LDAP bind) failed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum LogonFailure {
    /// No such account (ERROR_NO_SUCH_USER, 0x525).
    NoSuchUser,
    /// Wrong password (ERROR_LOGON_FAILURE, 0x52e).
    BadPassword,
    /// The password is past the maximum age (ERROR_PASSWORD_EXPIRED, 0x532).
    PasswordExpired,
    /// The account is disabled (ERROR_ACCOUNT_DISABLED, 0x533).
    AccountDisabled,
    /// The account is past `accountExpires` (ERROR_ACCOUNT_EXPIRED, 0x701).
    AccountExpired,
    /// `pwdLastSet` is 0: the password must be changed first (ERROR_PASSWORD_MUST_CHANGE,
    /// 0x773).
    MustChangePassword,
    /// The account is locked out (ERROR_ACCOUNT_LOCKED_OUT, 0x775).
    AccountLockedOut,
}

impl LogonFailure {
    /// The LDAP result code for every logon failure: invalidCredentials.
    pub const RESULT_CODE: u8 = 49;

    /// The Win32 error code shown after `data` in the diagnostic.
    pub fn data_code(self) -> u32 {
        match self {
            LogonFailure::NoSuchUser => 0x525,
            LogonFailure::BadPassword => 0x52e,
            LogonFailure::PasswordExpired => 0x532,
            LogonFailure::AccountDisabled => 0x533,
            LogonFailure::AccountExpired => 0x701,
            LogonFailure::MustChangePassword => 0x773,
            LogonFailure::AccountLockedOut => 0x775,
        }
    }

    /// The diagnostic message of a simple bind in the shape Windows DCs send, e.g.
    /// `80090308: LdapErr: DSID-0C0903A9, comment: AcceptSecurityContext error, data 52e, v4563`.
    pub fn diagnostic(self) -> String {
        format!(
            "80090308: LdapErr: DSID-0C0903A9, comment: AcceptSecurityContext error, data {:x}, v4563",
            self.data_code()
        )
    }

    /// The diagnostic message of a SASL bind (SEC_E_LOGON_DENIED), e.g.
    /// `8009030C: LdapErr: DSID-0C0904DC, comment: AcceptSecurityContext error, data 52e, v4563`.
    pub fn sasl_diagnostic(self) -> String {
        format!(
            "8009030C: LdapErr: DSID-0C0904DC, comment: AcceptSecurityContext error, data {:x}, v4563",
            self.data_code()
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn diagnostics() {
        assert_eq!(
            LogonFailure::BadPassword.diagnostic(),
            "80090308: LdapErr: DSID-0C0903A9, comment: AcceptSecurityContext error, data 52e, v4563"
        );
        assert_eq!(
            LogonFailure::MustChangePassword.sasl_diagnostic(),
            "8009030C: LdapErr: DSID-0C0904DC, comment: AcceptSecurityContext error, data 773, v4563"
        );
        let codes = [
            (LogonFailure::NoSuchUser, "525"),
            (LogonFailure::BadPassword, "52e"),
            (LogonFailure::PasswordExpired, "532"),
            (LogonFailure::AccountDisabled, "533"),
            (LogonFailure::AccountExpired, "701"),
            (LogonFailure::MustChangePassword, "773"),
            (LogonFailure::AccountLockedOut, "775"),
        ];
        for (failure, code) in codes {
            assert!(
                failure.diagnostic().contains(&format!(", data {code}, ")),
                "{failure:?}"
            );
        }
        assert_eq!(LogonFailure::RESULT_CODE, 49);
    }
}
