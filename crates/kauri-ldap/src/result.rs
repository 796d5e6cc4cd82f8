//! Turning database errors into LDAP results.

use kauri_db::DbError;
use kauri_ldap_proto::{LdapResult, ResultCode};

/// The LDAP result a client receives for a database error.
pub fn db_result(e: &DbError) -> LdapResult {
    LdapResult::new(ResultCode(e.ldap_result_code()), e.to_string())
}

/// The LDAP result a client receives for a refused or failed directory operation.
pub fn dir_result(e: &kauri_domain::directory::DirError) -> LdapResult {
    let mut r = LdapResult::new(ResultCode(e.ldap_result_code()), e.to_string());
    if let kauri_domain::directory::DirError::Referral { url, .. } = e {
        r.referral = vec![url.clone()];
    }
    r
}
