//! Who is asking: the identity an operation runs as, decided at bind time and carried by
//! every request, so the access policy never looks anything up twice.

use crate::sid::Sid;

/// The identity of a request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Caller {
    /// The server itself (provisioning, the tombstone collector, local tools): no checks
    /// but the schema's.
    System,
    /// Nobody has bound.
    Anonymous,
    /// A bound account of the directory.
    Account(Account),
}

/// A bound account: its entry and the SIDs of its token.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Account {
    /// Record id of the account's entry.
    pub id: u64,
    /// The entry's DN at bind time.
    pub dn: String,
    /// The account's own SID.
    pub sid: Option<Sid>,
    /// Every group SID of the account, transitively, the primary group included.
    pub groups: Vec<Sid>,
    /// Whether the token holds Domain Admins, Enterprise Admins or Administrators.
    pub admin: bool,
}

/// Whether a token administers the domain `domain`: it holds Administrators, or the
/// domain's Domain Admins or Enterprise Admins. Binds of every kind and the password-change
/// service decide it the same way.
pub fn is_admin_token<'a>(groups: impl IntoIterator<Item = &'a Sid>, domain: &Sid) -> bool {
    let administrators = Sid::builtin(crate::sid::rid::builtin::ADMINISTRATORS);
    let admin_rids = [
        crate::sid::rid::DOMAIN_ADMINS,
        crate::sid::rid::ENTERPRISE_ADMINS,
    ];
    groups.into_iter().any(|s| {
        *s == administrators
            || (s.domain().as_ref() == Some(domain)
                && s.rid().is_some_and(|r| admin_rids.contains(&r)))
    })
}

impl Caller {
    /// Whether the caller administers the directory.
    pub fn is_admin(&self) -> bool {
        match self {
            Caller::System => true,
            Caller::Anonymous => false,
            Caller::Account(a) => a.admin,
        }
    }

    /// Whether the caller is the server itself.
    pub fn is_system(&self) -> bool {
        matches!(self, Caller::System)
    }

    /// The record id of the bound account, if any.
    pub fn account_id(&self) -> Option<u64> {
        match self {
            Caller::Account(a) => Some(a.id),
            _ => None,
        }
    }
}
