//! The single error type returned by every decoder in this module.
//!
//! Decoders face the network, so every failure is reported as a value (never
//! a panic) that says what was being read and why it was refused.

/// Why a Kerberos message could not be decoded.
///
/// Every variant names the ASN.1 type (and, where known, the field) that was
/// being read, so that a KDC can log a precise reason and map the failure to
/// a KRB-ERROR code (usually `KRB_ERR_GENERIC`, or `KRB_AP_ERR_BADVERSION` /
/// `KRB_AP_ERR_MSG_TYPE` for [`MsgError::BadVersion`] /
/// [`MsgError::WrongMessageType`]).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum MsgError {
    /// The input ended before a complete tag, length or value could be read.
    #[error("{what}: truncated input (need {need} bytes, {have} available)")]
    Truncated {
        /// What was being read.
        what: &'static str,
        /// Bytes needed.
        need: usize,
        /// Bytes that were left.
        have: usize,
    },
    /// A tag other than the one the schema requires was found.
    #[error("{what}: expected tag 0x{expected:02x}, found 0x{found:02x}")]
    UnexpectedTag {
        /// What was being read.
        what: &'static str,
        /// The identifier octet the schema requires.
        expected: u8,
        /// The identifier octet found in the input.
        found: u8,
    },
    /// A length field is indefinite, longer than four bytes, or otherwise bad.
    #[error("{what}: bad length: {why}")]
    BadLength {
        /// What was being read.
        what: &'static str,
        /// Why the length was refused.
        why: &'static str,
    },
    /// A high-tag-number identifier (tag >= 31) was found; Kerberos never uses one.
    #[error("{what}: unsupported multi-byte tag")]
    UnsupportedTag {
        /// What was being read.
        what: &'static str,
    },
    /// A field that the schema marks as required is absent.
    #[error("{ty}: missing required field {field} [{tag}]")]
    MissingField {
        /// ASN.1 type of the SEQUENCE.
        ty: &'static str,
        /// Field name.
        field: &'static str,
        /// Context tag number of the field.
        tag: u8,
    },
    /// Context-tagged fields are out of order or repeated.
    #[error("{ty}: field [{tag}] out of order or repeated")]
    FieldOrder {
        /// ASN.1 type of the SEQUENCE.
        ty: &'static str,
        /// Context tag number found.
        tag: u8,
    },
    /// Bytes follow a complete value where the schema allows nothing more.
    #[error("{what}: {len} bytes of trailing data")]
    TrailingData {
        /// What was being read.
        what: &'static str,
        /// Number of unexpected bytes.
        len: usize,
    },
    /// A value is syntactically present but not acceptable.
    #[error("{what}: invalid value: {why}")]
    InvalidValue {
        /// What was being read.
        what: &'static str,
        /// Why the value was refused.
        why: &'static str,
    },
    /// An INTEGER does not fit the range its type allows.
    #[error("{what}: integer out of range")]
    IntegerOutOfRange {
        /// What was being read.
        what: &'static str,
    },
    /// A protocol version number (pvno, tkt-vno, authenticator-vno, kpasswd
    /// version) is not the one this module understands.
    #[error("{what}: unsupported version {version}")]
    BadVersion {
        /// Which version field.
        what: &'static str,
        /// The version found.
        version: i64,
    },
    /// The msg-type field disagrees with the APPLICATION tag or is not the
    /// message that was asked for.
    #[error("{what}: message type {found}, expected {expected}")]
    WrongMessageType {
        /// Which message was being read.
        what: &'static str,
        /// The message type expected.
        expected: i64,
        /// The message type found.
        found: i64,
    },
    /// A framed (non-DER) structure could not be built because a part is too large.
    #[error("{what}: too large to encode ({len} bytes)")]
    TooLarge {
        /// What was being encoded.
        what: &'static str,
        /// Size of the offending part.
        len: usize,
    },
    /// An error inside a field, with the path of the enclosing SEQUENCE.
    #[error("{ty}.{field}: {source}")]
    InField {
        /// ASN.1 type of the enclosing SEQUENCE.
        ty: &'static str,
        /// Field name in that SEQUENCE.
        field: &'static str,
        /// The underlying error.
        #[source]
        source: Box<MsgError>,
    },
}

impl MsgError {
    /// The innermost error, stripped of the field path; useful to match on
    /// the kind of failure (for example [`MsgError::BadVersion`]).
    pub fn root_cause(&self) -> &MsgError {
        let mut e = self;
        while let MsgError::InField { source, .. } = e {
            e = source;
        }
        e
    }
}
