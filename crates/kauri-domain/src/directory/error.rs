//! What a directory operation can fail with: each variant is one LDAP result code, with
//! the text a client sees as the diagnostic message.

use kauri_db::DbError;

/// A refused or failed directory operation.
#[derive(Debug, thiserror::Error)]
pub enum DirError {
    /// The database refused or failed (its own result codes).
    #[error(transparent)]
    Db(#[from] DbError),
    /// An attribute the schema does not define (17).
    #[error("{0}")]
    UndefinedAttributeType(String),
    /// Object classes and attributes that do not fit together (65).
    #[error("{0}")]
    ObjectClassViolation(String),
    /// A value breaks a rule of its attribute or of the domain (19).
    #[error("{0}")]
    ConstraintViolation(String),
    /// A value does not fit its syntax (21).
    #[error("{0}")]
    InvalidAttributeSyntax(String),
    /// A name breaks the naming rules: wrong RDN attribute, parent not allowed (64).
    #[error("{0}")]
    NamingViolation(String),
    /// The caller may not do this (50).
    #[error("{0}")]
    InsufficientAccess(String),
    /// The server will not do this (53).
    #[error("{0}")]
    UnwillingToPerform(String),
    /// The name or a unique value is taken (68).
    #[error("{0}")]
    EntryAlreadyExists(String),
    /// The named object does not exist (32).
    #[error("{0}")]
    NoSuchObject(String),
    /// A change to the structural object class (69).
    #[error("{0}")]
    ObjectClassModsProhibited(String),
    /// A value to delete is absent (16).
    #[error("{0}")]
    NoSuchAttribute(String),
    /// A value to add is present (20).
    #[error("{0}")]
    AttributeOrValueExists(String),
    /// The operation needs a leaf, or would orphan what depends on the object (66).
    #[error("{0}")]
    NotAllowedOnNonLeaf(String),
    /// AD's catch-all refusal, e.g. deleting a well-known principal (80).
    #[error("{0}")]
    Other(String),
    /// A modify of the naming attribute or `name`, which only a rename changes (67).
    #[error("{0}")]
    NotAllowedOnRdn(String),
    /// A move to another naming context, which AD does only across domains (71).
    #[error("{0}")]
    AffectsMultipleDsas(String),
    /// A name that cannot be, e.g. a naming attribute stated unlike the DN (34).
    #[error("{0}")]
    InvalidDnSyntax(String),
    /// A name above every naming context this DC holds: a referral to the server that
    /// holds it (10), with its URL.
    #[error("{message}")]
    Referral {
        /// What the client reads.
        message: String,
        /// Where to ask instead.
        url: String,
    },
    /// A tree delete step deleted what it could and objects remain (11, AD's
    /// ERROR_DS_TREE_DELETE_NOT_FINISHED); what it deleted stays deleted.
    #[error("{0}")]
    TreeDeleteNotFinished(String),
    /// A password change gave the wrong old password (19); it counts as a bad password
    /// for the account's lockout.
    #[error("{message}")]
    WrongPassword {
        /// The account.
        dn: kauri_db::Dn,
        /// What the client reads.
        message: String,
    },
}

impl DirError {
    /// The LDAP result code a client receives.
    pub fn ldap_result_code(&self) -> u32 {
        match self {
            DirError::Db(e) => e.ldap_result_code(),
            DirError::UndefinedAttributeType(_) => 17,
            DirError::ObjectClassViolation(_) => 65,
            DirError::ConstraintViolation(_) => 19,
            DirError::InvalidAttributeSyntax(_) => 21,
            DirError::NamingViolation(_) => 64,
            DirError::InsufficientAccess(_) => 50,
            DirError::UnwillingToPerform(_) => 53,
            DirError::EntryAlreadyExists(_) => 68,
            DirError::NoSuchObject(_) => 32,
            DirError::ObjectClassModsProhibited(_) => 69,
            DirError::NoSuchAttribute(_) => 16,
            DirError::AttributeOrValueExists(_) => 20,
            DirError::NotAllowedOnNonLeaf(_) => 66,
            DirError::Other(_) => 80,
            DirError::InvalidDnSyntax(_) => 34,
            DirError::AffectsMultipleDsas(_) => 71,
            DirError::NotAllowedOnRdn(_) => 67,
            DirError::WrongPassword { .. } => 19,
            DirError::TreeDeleteNotFinished(_) => 11,
            DirError::Referral { .. } => 10,
        }
    }
}

/// Result of a directory operation.
pub type DirResult<T> = Result<T, DirError>;
