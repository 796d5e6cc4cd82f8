//! Kauri's traffic tools, the parts that need no directory: a capture becomes an anonymised
//! *summary* (one line per packet, Samba's format), summaries teach a *model* (Samba's
//! model format version 2), a model or summary becomes a *plan* of conversations to
//! replay, and replay runs become *reports* compared in one chart.
//!
//! Samba's traffic tools read and write the same summary and model files, so captures,
//! summaries and models move between the two tool sets. The replaying itself, which talks
//! to a domain controller, lives in the `kauri` binary.

#![deny(missing_docs)]

pub mod capture;
pub mod dissect;
pub mod learn;
pub mod model;
pub mod pdml;
pub mod plan;
pub mod random;
pub mod report;
pub mod run;
pub mod summarize;
pub mod summary;
