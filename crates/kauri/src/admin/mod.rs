//! The object-management commands (`kauri user|group|ou|computer|contact …`) and what
//! they share: a [`Target`] that is either a local data folder or a remote server, the
//! entries read back from it, name resolution, and table/JSON output.
//!
//! Every command is written once against [`Target`]: it searches, adds, modifies, deletes
//! and renames by DN with LDAP's semantics, so the local folder and a remote DC answer
//! the same command the same way (and refuse it with the same result codes).

pub mod computer;
pub mod contact;
pub mod group;
pub mod local;
pub mod names;
pub mod ou;
pub mod output;
pub mod remote;
pub mod target;
pub mod user;

pub use target::TargetArgs;

/// `userAccountControl` bits the commands set and read (MS-ADTS 2.2.16).
pub mod uac {
    /// The account is disabled.
    pub const ACCOUNTDISABLE: i64 = 0x2;
    /// No password is required.
    pub const PASSWD_NOTREQD: i64 = 0x20;
    /// A normal user account.
    pub const NORMAL_ACCOUNT: i64 = 0x200;
}
