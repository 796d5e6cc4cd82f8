//! Kauri's LDAPv3 server.
//!
//! [`server::Server`] binds the plain and LDAPS listeners; each connection runs in
//! [`conn`]; searches stream from [`search`]; every change goes through the group-commit
//! [`writer`]. Settings come from [`config::ServerConfig`].

#![cfg_attr(
    not(test),
    deny(clippy::unwrap_used, clippy::expect_used, clippy::panic)
)]

pub mod auth;
mod backup;
pub mod cldap;
pub mod config;
pub mod conn;
pub mod ctx;
pub mod extdn;
pub mod krb_accept;
pub mod metrics;
pub mod netlogon;
pub mod result;
pub mod rootdse;
pub mod search;
pub mod server;
mod sight;
pub mod status;
pub mod subschema;
pub mod tls;
pub mod writer;

pub use config::ServerConfig;
pub use ctx::Ctx;
pub use server::Server;
