//! Shared fixtures for the database tests: a configuration with a few syntaxes and
//! indexes, and constructors for both backends.
#![allow(dead_code)]

use kauri_db::{Db, DbConfig, Dn, Entry, IndexFlags, Syntax};
use kauri_kv::lmdb::{LmdbBackend, LmdbOptions};
use kauri_kv::mem::MemBackend;

pub fn config() -> DbConfig {
    let mut cfg = DbConfig::default();
    cfg.schema
        .set("employeeNumber", Syntax::Integer)
        .set("enabled", Syntax::Boolean)
        .set("created", Syntax::GeneralizedTime)
        .set("blob", Syntax::OctetString)
        .set("objectGUID", Syntax::Guid)
        .set("manager", Syntax::Dn)
        .set("code", Syntax::CaseExactString);
    cfg.index(
        "cn",
        IndexFlags::EQUALITY | IndexFlags::SUBSTRING_INITIAL | IndexFlags::PRESENCE,
    )
    .index("uid", IndexFlags::EQUALITY | IndexFlags::UNIQUE)
    .index("objectGUID", IndexFlags::EQUALITY | IndexFlags::UNIQUE)
    .index("employeeNumber", IndexFlags::EQUALITY | IndexFlags::ORDERED)
    .index("created", IndexFlags::ORDERED)
    .index("mail", IndexFlags::EQUALITY | IndexFlags::PRESENCE)
    .index("enabled", IndexFlags::EQUALITY);
    cfg.link("member", Some("memberOf")).link("seeAlso", None);
    cfg
}

pub struct Lmdb {
    pub db: Db<LmdbBackend>,
    pub dir: tempfile::TempDir,
}

pub fn lmdb_with(cfg: DbConfig) -> Lmdb {
    let dir = tempfile::tempdir().unwrap();
    let opts = LmdbOptions {
        map_size: 1 << 20,
        durable: false,
        ..LmdbOptions::default()
    };
    let db = Db::open_lmdb(dir.path(), cfg, opts).unwrap();
    Lmdb { db, dir }
}

pub fn mem_with(cfg: DbConfig) -> Db<MemBackend> {
    Db::in_memory(cfg).unwrap()
}

pub fn dn(s: &str) -> Dn {
    Dn::parse(s).unwrap()
}

pub fn ou(name: &str, parent: &str) -> Entry {
    let d = if parent.is_empty() {
        format!("ou={name}")
    } else {
        format!("ou={name},{parent}")
    };
    Entry::new(dn(&d))
        .with("objectClass", &["top", "organizationalUnit"])
        .with("ou", &[name])
}

pub fn user(cn: &str, parent: &str, n: i64) -> Entry {
    Entry::new(dn(&format!("cn={cn},{parent}")))
        .with("objectClass", &["top", "person", "user"])
        .with("cn", &[cn])
        .with("uid", &[&cn.to_lowercase().replace(' ', ".")])
        .with("employeeNumber", &[&n.to_string()])
        .with(
            "mail",
            &[&format!(
                "{}@example.com",
                cn.to_lowercase().replace(' ', ".")
            )],
        )
}

/// Runs a generic test function against both backends.
#[macro_export]
macro_rules! both_backends {
    ($name:ident) => {
        paste_mod!($name);
    };
}

/// Implementation detail of `both_backends!`.
#[macro_export]
macro_rules! paste_mod {
    ($name:ident) => {
        mod $name {
            #[test]
            fn memory() {
                let db = super::common::mem_with(super::common::config());
                super::$name(&db);
            }
            #[test]
            fn lmdb() {
                let l = super::common::lmdb_with(super::common::config());
                super::$name(&l.db);
            }
        }
    };
}
