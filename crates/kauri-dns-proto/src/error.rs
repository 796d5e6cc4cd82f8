//! What can be wrong with DNS bytes or text, as one error type for the whole crate.

use thiserror::Error;

/// Why a name, record, message or MS-DNSP blob could not be read or built. Every decoder
/// answers one of these instead of panicking, so a server can reply FORMERR (or skip a
/// stored value) and go on.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum ProtoError {
    /// The bytes end before the structure does (a length, count or field runs past them).
    #[error("truncated: the data ends inside a field")]
    Truncated,
    /// A label is empty, longer than 63 bytes, or uses a reserved label type.
    #[error("bad label: {0}")]
    BadLabel(&'static str),
    /// A name is longer than 255 bytes in wire form.
    #[error("name longer than 255 bytes")]
    NameTooLong,
    /// A compression pointer points forward, into the header, or past the data.
    #[error("bad compression pointer")]
    BadPointer,
    /// A record's data does not fit its type.
    #[error("bad {} record data: {reason}", crate::rdata::type_name(*rtype))]
    BadRdata {
        /// The record type.
        rtype: u16,
        /// What is wrong.
        reason: &'static str,
    },
    /// Bytes remain after the last section of a message (or after a blob's content).
    #[error("trailing bytes after the end of the data")]
    TrailingBytes,
    /// Presentation or samba-tool text that does not parse.
    #[error("bad text: {0}")]
    BadText(String),
    /// An OPT record outside the additional section.
    #[error("OPT record outside the additional section")]
    MisplacedOpt,
    /// More than one OPT record (RFC 6891 §6.1.1).
    #[error("more than one OPT record")]
    DuplicateOpt,
    /// A TSIG record that is not the last record of the additional section (RFC 8945 §5.1).
    #[error("TSIG record that is not the last additional record")]
    MisplacedTsig,
    /// A message too short to hold what an operation needs (a header, a TSIG position).
    #[error("message too short for this operation")]
    BadMessage(&'static str),
    /// An MS-DNSP `dnsRecord` or `dnsProperty` blob that breaks its layout.
    #[error("bad MS-DNSP blob: {0}")]
    BadDnsp(&'static str),
}

/// The crate's result type.
pub type Result<T> = std::result::Result<T, ProtoError>;
