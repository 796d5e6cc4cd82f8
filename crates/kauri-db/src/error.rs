//! The database's error type. Each variant corresponds to one LDAP result code, so the
//! protocol layer can answer a client without guessing.

use kauri_kv::KvError;

/// Everything a database operation can fail with.
#[derive(Debug, thiserror::Error)]
pub enum DbError {
    /// The named entry (or the parent of an entry being added) does not exist.
    #[error("no such object: {0}")]
    NoSuchObject(String),
    /// An entry with that DN exists already.
    #[error("entry already exists: {0}")]
    EntryAlreadyExists(String),
    /// The entry has children and a subtree operation was not asked for.
    #[error("operation not allowed on non-leaf entry: {0}")]
    NotAllowedOnNonLeaf(String),
    /// A value being added is present already (or given twice).
    #[error("attribute or value exists: {0}")]
    AttributeOrValueExists(String),
    /// A value or attribute being deleted is absent.
    #[error("no such attribute: {0}")]
    NoSuchAttribute(String),
    /// The DN text does not parse.
    #[error("invalid DN syntax: {0}")]
    InvalidDnSyntax(String),
    /// A value does not conform to its attribute's syntax.
    #[error("invalid attribute syntax: {0}")]
    InvalidAttributeSyntax(String),
    /// A value breaks a constraint (uniqueness, empty value list, …).
    #[error("constraint violation: {0}")]
    ConstraintViolation(String),
    /// The change would remove or alter an RDN value of the entry.
    #[error("not allowed on RDN: {0}")]
    NotAllowedOnRdn(String),
    /// The request is understood but refused (e.g. moving an entry below itself).
    #[error("unwilling to perform: {0}")]
    UnwillingToPerform(String),
    /// The filter text does not parse.
    #[error("bad search filter: {0}")]
    BadFilter(String),
    /// The database cannot serve the request right now (e.g. a commit failed).
    #[error("unavailable: {0}")]
    Unavailable(String),
    /// A change goes past a limit on how much one entry or one operation may hold (AD's
    /// adminLimitExceeded).
    #[error("administrative limit exceeded: {0}")]
    AdminLimitExceeded(String),
    /// A search returned more entries than its size limit.
    #[error("size limit exceeded")]
    SizeLimitExceeded,
    /// A search ran past its time limit.
    #[error("time limit exceeded")]
    TimeLimitExceeded,
    /// Stored data does not decode: the database is damaged.
    #[error("database corruption: {0}")]
    Corrupt(String),
    /// The database was written by a newer (or unknown) format version.
    #[error(
        "unsupported database format version {found} (this build reads versions up to \
         {supported}); nothing was changed"
    )]
    UnsupportedFormat {
        /// Version found on disk.
        found: u32,
        /// Version this build understands.
        supported: u32,
    },
    /// The key-value layer failed.
    #[error(transparent)]
    Kv(#[from] KvError),
}

/// Result type of this crate.
pub type DbResult<T> = Result<T, DbError>;

impl DbError {
    /// The LDAP result code (RFC 4511 section 4.1.9) a client should receive.
    pub fn ldap_result_code(&self) -> u32 {
        match self {
            DbError::NoSuchObject(_) => 32,
            DbError::EntryAlreadyExists(_) => 68,
            DbError::NotAllowedOnNonLeaf(_) => 66,
            DbError::AttributeOrValueExists(_) => 20,
            DbError::NoSuchAttribute(_) => 16,
            DbError::InvalidDnSyntax(_) => 34,
            DbError::InvalidAttributeSyntax(_) => 21,
            DbError::ConstraintViolation(_) => 19,
            DbError::NotAllowedOnRdn(_) => 67,
            DbError::UnwillingToPerform(_) => 53,
            DbError::Unavailable(_) => 52,
            DbError::BadFilter(_) => 87,
            DbError::SizeLimitExceeded => 4,
            DbError::AdminLimitExceeded(_) => 11,
            DbError::TimeLimitExceeded => 3,
            DbError::Corrupt(_) | DbError::UnsupportedFormat { .. } | DbError::Kv(_) => 80,
        }
    }

    /// A short corruption error, for decoders.
    pub(crate) fn corrupt(what: impl Into<String>) -> DbError {
        DbError::Corrupt(what.into())
    }
}
