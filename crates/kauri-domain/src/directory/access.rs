//! The built-in policy of a directory that is not a domain (a plain LDAP directory, which
//! has no security descriptors), and the attributes nobody reads anywhere. In a domain,
//! descriptors decide (`acl.rs`); only [`is_secret`] applies there too. The LDAP layer asks
//! here what an identity may read (the hidden attributes of searches, compares and sorts)
//! and applies the anonymous rule at the protocol level.
//!
//! - Anonymous callers read the root DSE and nothing else.
//! - Authenticated accounts read the directory, except secrets and confidential
//!   attributes, and may change their own password.
//! - Administrators (and the server itself) do everything else.
//! - Secrets are never returned to anyone.

use kauri_db::Modification;

use super::caller::Caller;
use super::error::{DirError, DirResult};
use crate::schema::{AttributeDef, FCONFIDENTIAL};

/// Attributes that hold password material: written (through password changes), never
/// read, by anyone.
const SECRETS: &[&str] = &[
    "unicodepwd",
    "dbcspwd",
    "ntpwdhistory",
    "lmpwdhistory",
    "supplementalcredentials",
    "userpassword",
    "priorvalue",
    "currentvalue",
    "trustauthincoming",
    "trustauthoutgoing",
    "initialauthincoming",
    "initialauthoutgoing",
    "msds-executescriptpassword",
];

/// Whether an attribute holds secrets (never returned, never matched by filters).
pub fn is_secret(name: &str) -> bool {
    let base = name.split(';').next().unwrap_or(name);
    SECRETS.iter().any(|s| s.eq_ignore_ascii_case(base))
}

/// The policy's answers for one caller.
#[derive(Debug, Clone, Copy)]
pub struct Access<'a> {
    caller: &'a Caller,
}

/// The caller an administrator or a plain account stands for, when only that is known.
static ADMIN: Caller = Caller::System;
static NOT_ADMIN: Caller = Caller::Anonymous;

impl<'a> Access<'a> {
    /// The policy as it applies to `caller`.
    pub fn of(caller: &'a Caller) -> Access<'a> {
        Access { caller }
    }

    /// The read policy for an administrator or not (what a search needs to know).
    pub fn of_admin(admin: bool) -> Access<'static> {
        Access {
            caller: if admin { &ADMIN } else { &NOT_ADMIN },
        }
    }

    /// Whether the caller may see values of this attribute.
    pub fn may_read(&self, name: &str, def: Option<&AttributeDef>) -> bool {
        if is_secret(name) {
            return false;
        }
        let confidential = def.is_some_and(|d| d.search_flags & FCONFIDENTIAL != 0);
        !confidential || self.caller.is_admin()
    }

    /// Whether the caller may add, delete or rename entries.
    pub fn may_change_tree(&self) -> DirResult<()> {
        if self.caller.is_admin() {
            Ok(())
        } else {
            Err(self.refused())
        }
    }

    /// Whether the caller may apply `mods` to entry `target`: administrators anything,
    /// an account only a change of its own password.
    pub fn may_modify(&self, target: u64, mods: &[Modification]) -> DirResult<()> {
        if self.caller.is_admin() {
            return Ok(());
        }
        let own = self.caller.account_id() == Some(target);
        // Password material (a hash attribute too, which the write path then refuses as
        // AD does) in a delete-and-add of one's own.
        let password_only = !mods.is_empty()
            && mods.iter().all(|m| {
                (super::credentials::is_password_attr(&m.attr) || is_secret(&m.attr))
                    && matches!(m.op, kauri_db::ModifyOp::Delete | kauri_db::ModifyOp::Add)
            });
        if own && password_only {
            Ok(())
        } else {
            Err(self.refused())
        }
    }

    fn refused(&self) -> DirError {
        DirError::InsufficientAccess(
            "00002098: SecErr: DSID-03150BC1, problem 4003 (INSUFF_ACCESS_RIGHTS), data 0".into(),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::directory::caller::Account;
    use kauri_db::ModifyOp;

    fn account(id: u64, admin: bool) -> Caller {
        Caller::Account(Account {
            id,
            dn: format!("cn=u{id}"),
            sid: None,
            groups: Vec::new(),
            admin,
        })
    }

    #[test]
    fn policy() {
        let anon = Caller::Anonymous;
        assert_eq!(
            Access::of(&anon)
                .may_change_tree()
                .unwrap_err()
                .ldap_result_code(),
            50
        );
        let user = account(7, false);
        let a = Access::of(&user);
        assert!(a.may_change_tree().is_err());
        let change_own = vec![
            Modification::new(ModifyOp::Delete, "unicodePwd", &["old"]),
            Modification::new(ModifyOp::Add, "unicodePwd", &["new"]),
        ];
        assert!(a.may_modify(7, &change_own).is_ok());
        assert!(a.may_modify(8, &change_own).is_err());
        let replace = vec![Modification::new(ModifyOp::Replace, "unicodePwd", &["x"])];
        assert!(a.may_modify(7, &replace).is_err());
        let other = vec![Modification::new(ModifyOp::Replace, "description", &["x"])];
        assert!(a.may_modify(7, &other).is_err());
        let admin = account(1, true);
        assert!(Access::of(&admin).may_modify(8, &other).is_ok());
        assert!(!Access::of(&admin).may_read("unicodePwd", None));
        assert!(!Access::of(&Caller::System).may_read("supplementalCredentials;x", None));
        assert!(Access::of(&user).may_read("cn", None));
    }
}
