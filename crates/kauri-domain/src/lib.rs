//! Kauri's Active Directory semantics: the [`schema`], [`provision`]ing a new forest's
//! initial objects from it, security identifiers ([`sid`]), [`password`]s, and the
//! [`directory`] service every change passes through.

#![cfg_attr(
    not(test),
    deny(clippy::unwrap_used, clippy::expect_used, clippy::panic)
)]

pub mod directory;
pub mod dns;
pub mod password;
pub mod provision;
pub mod schema;
pub mod security;
pub mod sid;
