//! Kauri's directory database.
//!
//! This crate knows LDAP data but not Active Directory: distinguished names ([`dn`]), value
//! syntaxes ([`syntax`]), search filters ([`filter`]), and a database ([`Db`]) that stores
//! entries as records keyed by a stable 64-bit id, keeps the hierarchy as its own structure,
//! maintains attribute indexes, plans and runs searches, and stamps every change with an
//! update sequence number (USN). The attribute → syntax map and the index configuration
//! come from the caller ([`DbConfig`]).
//!
//! The on-disk layout is described in `docs/storage-format.md` and beside the code that
//! writes each structure ([`keys`], [`record`]).

#![cfg_attr(
    not(test),
    deny(clippy::unwrap_used, clippy::expect_used, clippy::panic)
)]

pub mod bulk;
pub mod check;
pub mod config;
pub mod db;
pub mod dn;
pub mod entry;
pub mod error;
pub mod eval;
pub mod filter;
pub mod keys;
pub mod plan;
pub mod read;
pub mod record;
pub mod registry;
pub mod reindex;
pub mod search;
pub mod sorter;
pub mod syntax;
pub mod write;

pub use config::{DbConfig, IndexFlags, SchemaMap};
pub use db::Db;
pub use dn::{Dn, Rdn};
pub use entry::{Entry, Modification, ModifyOp};
pub use error::{DbError, DbResult};
pub use filter::Filter;
pub use read::DbRead;
pub use search::{Scope, SearchRequest};
pub use syntax::Syntax;
pub use write::DbWrite;
