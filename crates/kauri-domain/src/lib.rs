//! Kauri's Active Directory semantics. The schema comes first: [`schema`].

#![cfg_attr(
    not(test),
    deny(clippy::unwrap_used, clippy::expect_used, clippy::panic)
)]

pub mod password;
pub mod schema;
pub mod sid;
