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
//!
//! ```
//! use kauri_db::{Db, DbConfig, Dn, Entry, Filter, IndexFlags, Scope, SearchRequest};
//!
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let mut cfg = DbConfig::default();
//! cfg.index("cn", IndexFlags::EQUALITY | IndexFlags::SUBSTRING_INITIAL);
//! let db = Db::in_memory(cfg)?;
//! db.add_root(Entry::new(Dn::parse("dc=example,dc=com")?).with("objectClass", &["domain"]))?;
//! db.add(Entry::new(Dn::parse("cn=Alice,dc=example,dc=com")?).with("objectClass", &["person"]))?;
//!
//! let r = db.read()?;
//! let req = SearchRequest::new(Dn::parse("dc=example,dc=com")?, Scope::Subtree, Filter::parse("(cn=ali*)")?);
//! assert!(r.explain(&req)?.used.iter().any(|u| u.starts_with("sub(cn)")));
//! let found = r.search_entries(&req)?;
//! assert_eq!(found[0].dn.to_string(), "cn=Alice,dc=example,dc=com");
//! # Ok(())
//! # }
//! ```

#![cfg_attr(
    not(test),
    deny(clippy::unwrap_used, clippy::expect_used, clippy::panic)
)]

pub mod ascii;
pub mod bulk;
pub mod check;
pub mod config;
pub mod db;
pub mod descriptors;
pub mod dn;
pub mod entry;
pub mod error;
pub mod eval;
pub mod filter;
pub mod keys;
pub mod plan;
pub mod quick_hash;
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
