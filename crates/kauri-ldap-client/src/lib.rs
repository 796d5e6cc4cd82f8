//! An async LDAPv3 client on Kauri's own codec, for the admin tool and the traffic tools.
//!
//! * [`url`]: `ldap://`, `ldaps://` and `ldapi://` URLs.
//! * [`tls`]: which certificates to trust (a CA file, `LDAPTLS_CACERT`, the system's
//!   roots, or none for labs).
//! * [`client`]: [`LdapClient`], one connection: bind, search (collected, streamed or
//!   paged), add, modify, delete, modify DN, compare, extended operations (streamed
//!   intermediate responses too), StartTLS, and raw `send`/`recv` for pipelining.
//! * [`request`]: one-line constructors for search requests and changes.
//! * [`error`]: [`ClientError`], and [`CheckResult`] to turn a non-success result into one.
//!
//! ```no_run
//! # async fn demo() -> Result<(), kauri_ldap_client::ClientError> {
//! use kauri_ldap_client::{search_request, CheckResult, ConnectOptions, Filter, LdapClient};
//! use kauri_ldap_client::proto::SearchScope;
//!
//! let mut c = LdapClient::connect("ldap://127.0.0.1:3389", &ConnectOptions::default()).await?;
//! c.start_tls().await?;
//! c.simple_bind("cn=admin,dc=samdom,dc=example,dc=com", "secret").await?.check("bind")?;
//! let req = search_request("dc=samdom,dc=example,dc=com", SearchScope::Subtree,
//!     Filter::eq("objectClass", "user"), &["sAMAccountName"]);
//! let _done = c.search_paged(req, Vec::new(), 500, |entry| {
//!     println!("{}", entry.dn);
//!     Ok::<_, kauri_ldap_client::ClientError>(())
//! }).await?.check("search")?;
//! c.unbind().await
//! # }
//! ```

#![cfg_attr(
    not(test),
    deny(clippy::unwrap_used, clippy::expect_used, clippy::panic)
)]
#![warn(missing_docs)]

pub mod client;
pub mod codec;
pub mod error;
pub mod request;
pub mod tls;
mod transport;
pub mod url;

pub use client::{
    response_result, ConnectOptions, LdapClient, PasswordModified, SearchDone, SearchOutcome,
    WhoAmI,
};
pub use error::{code_name, CheckResult, ClientError};
pub use kauri_db::Filter;
pub use kauri_ldap_proto as proto;
pub use request::{change, search_request};
pub use tls::TlsOptions;
pub use url::{LdapUrl, UrlError};
