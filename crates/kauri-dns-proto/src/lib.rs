//! DNS as Kauri speaks it: the wire format of queries, responses and dynamic updates, and
//! the binary forms in which Active Directory stores zones (MS-DNSP `dnsRecord` and
//! `dnsProperty` values), kept free of any server state so fuzzers and tools use it alone.
//!
//! * [`name`]: absolute names, compared case-insensitively.
//! * [`rdata`]: record types and classes, and typed record data ([`RData`]).
//! * [`text`]: record data in samba-tool's text forms.
//! * [`wire`]: messages (RFC 1035, 2136, 6891): decoding, compression, truncation.
//! * [`tsig`]: TSIG and TKEY records and the bytes a TSIG MAC covers (RFC 8945, 2930, 3645).
//! * [`dnsp`]: the directory's `dnsRecord` and `dnsProperty` blobs (MS-DNSP §2.3.2).
//!
//! Nothing here panics on input: every length is checked and every failure is a
//! [`ProtoError`].

#![warn(missing_docs)]
#![cfg_attr(
    not(test),
    deny(
        clippy::unwrap_used,
        clippy::expect_used,
        clippy::panic,
        clippy::indexing_slicing
    )
)]

pub mod dnsp;
pub mod error;
pub mod name;
pub mod rdata;
pub mod text;
pub mod tsig;
pub mod wire;

#[cfg(test)]
mod test_vectors;

pub use dnsp::{Body, DnsProperty, DnsRecord};
pub use error::{ProtoError, Result};
pub use name::Name;
pub use rdata::{RData, Soa};
pub use tsig::{Tkey, Tsig};
pub use wire::{Decoded, Edns, Header, Message, Question, Record, RecordData};
