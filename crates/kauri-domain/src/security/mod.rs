//! Windows security descriptors as Active Directory stores and evaluates them: the
//! self-relative binary form of `nTSecurityDescriptor` ([`descriptor`], MS-DTYP 2.4),
//! the SDDL text of `defaultSecurityDescriptor` ([`sddl`], MS-DTYP 2.5.1), the access
//! check that decides what a caller may do with an object ([`check`], MS-DTYP 2.5.3.2
//! and MS-ADTS 5.1.3), the caller's group SIDs it runs against ([`token`]), and the
//! descriptor a new object receives from its class and parent ([`inherit`], MS-ADTS
//! 6.1.3 and MS-DTYP 2.5.3.4).
//!
//! Nothing here panics on any input: malformed bytes or text come back as [`SdError`].

pub mod check;
pub mod descriptor;
pub mod effective;
pub mod inherit;
pub mod rights;
pub mod sddl;
pub mod token;

pub use check::{Access, AccessCheck, ObjectTypeList, OwnerRights};
pub use descriptor::{ace_flags, control, Ace, AceKind, Acl, Guid, Layout, SecurityDescriptor};
pub use inherit::{
    create_descriptor, create_descriptor_with, default_admin_group, default_owner_and_group,
    NamingContext,
};
pub use token::{well_known, Token};

/// Why a security descriptor could not be read, parsed or written.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SdError {
    /// The binary form is malformed; `offset` is the byte where reading stopped.
    #[error("malformed security descriptor at byte {offset}: {what}")]
    Binary {
        /// Byte offset into the descriptor.
        offset: usize,
        /// What was wrong there.
        what: &'static str,
    },
    /// The SDDL text is malformed; `offset` is the byte offset into the text.
    #[error("bad SDDL at offset {offset}: {what}")]
    Sddl {
        /// Byte offset into the SDDL string.
        offset: usize,
        /// What was wrong there.
        what: String,
    },
    /// The descriptor holds something its target form cannot express (an ACL over
    /// 64 KiB, an ACE type SDDL has no letters for, …).
    #[error("security descriptor cannot be written: {0}")]
    Encode(String),
    /// An object type list was built out of order (a level skipped, a second root).
    #[error("bad object type list: {0}")]
    ObjectTypeList(&'static str),
}
