//! Turning database errors into LDAP results.

use kauri_db::DbError;
use kauri_ldap_proto::{LdapResult, ResultCode};

/// The LDAP result a client receives for a database error.
pub fn db_result(e: &DbError) -> LdapResult {
    LdapResult::new(ResultCode(e.ldap_result_code()), e.to_string())
}

/// The LDAP result a client receives for a refused or failed directory operation.
pub fn dir_result(e: &kauri_domain::directory::DirError) -> LdapResult {
    use kauri_domain::directory::DirError;
    let text = match e {
        // In AD's words (ERROR_DS_ADMIN_LIMIT_EXCEEDED), which AD-aware clients recognise.
        DirError::Db(DbError::AdminLimitExceeded(m)) => format!(
            "00002024: SvcErr: problem 5008 (ADMIN_LIMIT_EXCEEDED), data 0: the \
             administrative limit for this request was exceeded: {m}"
        ),
        e => e.to_string(),
    };
    let mut r = LdapResult::new(ResultCode(e.ldap_result_code()), text);
    if let kauri_domain::directory::DirError::Referral { url, .. } = e {
        r.referral = vec![url.clone()];
    }
    r
}
