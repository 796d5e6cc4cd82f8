//! Kauri's Active Directory semantics. The schema comes first: [`schema`];
//! [`provision`] builds a new forest's initial objects from it.

#![cfg_attr(
    not(test),
    deny(clippy::unwrap_used, clippy::expect_used, clippy::panic)
)]

pub mod provision;
pub mod schema;
pub mod sid;
