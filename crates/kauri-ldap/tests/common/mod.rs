//! What the LDAP server's tests share: a directory with a few people, served by the real
//! server on free ports of 127.0.0.1.

#![allow(dead_code)]

use std::path::PathBuf;
use std::sync::Arc;

use kauri_db::{Db, DbConfig, Dn, Entry, IndexFlags, Syntax};
use kauri_kv::lmdb::LmdbOptions;
use kauri_ldap::{Server, ServerConfig};

pub const BASE: &str = "dc=samdom,dc=example,dc=com";
pub const ADMIN: &str = "cn=admin,dc=samdom,dc=example,dc=com";
pub const PW: &str = "Admin-Pa55";

pub struct Running {
    pub port: u16,
    pub tls_port: u16,
    pub metrics_port: u16,
    pub data: tempfile::TempDir,
    _rt: tokio::runtime::Runtime,
}

impl Running {
    pub fn uri(&self) -> String {
        format!("ldap://127.0.0.1:{}", self.port)
    }
    pub fn tls_uri(&self) -> String {
        format!("ldaps://127.0.0.1:{}", self.tls_port)
    }
    pub fn ca(&self) -> PathBuf {
        self.data.path().join("tls/ca.pem")
    }
}

pub fn db_config() -> DbConfig {
    let mut cfg = DbConfig::default();
    cfg.schema
        .set("objectSid", Syntax::Sid)
        .set("objectGUID", Syntax::Guid)
        .set("member", Syntax::Dn);
    cfg.index("cn", IndexFlags::EQUALITY | IndexFlags::SUBSTRING_INITIAL)
        .index("uid", IndexFlags::EQUALITY | IndexFlags::UNIQUE)
        .index("objectSid", IndexFlags::EQUALITY);
    cfg
}

pub fn start(tune: impl FnOnce(&mut ServerConfig)) -> Running {
    let data = tempfile::tempdir().unwrap();
    let db = Db::open_lmdb(&data.path().join("db"), db_config(), LmdbOptions::default()).unwrap();
    let hashed = kauri_ldap::auth::hash_password(b"user-pw").unwrap();
    db.add_root(Entry::new(Dn::parse(BASE).unwrap()).with("objectClass", &["top", "domain"]))
        .unwrap();
    db.add(
        Entry::new(Dn::parse(&format!("ou=People,{BASE}")).unwrap())
            .with("objectClass", &["organizationalUnit"]),
    )
    .unwrap();
    for i in 0..12 {
        db.add(
            Entry::new(Dn::parse(&format!("cn=User {i},ou=People,{BASE}")).unwrap())
                .with("objectClass", &["top", "person"])
                .with("uid", &[&format!("user{i}")])
                .with("userPassword", &[&hashed]),
        )
        .unwrap();
    }
    let mut cfg = ServerConfig {
        data: data.path().to_path_buf(),
        listen: "127.0.0.1:0".into(),
        listen_tls: "127.0.0.1:0".into(),
        metrics_listen: "127.0.0.1:0".into(),
        admin_dn: ADMIN.into(),
        admin_password: PW.into(),
        ..ServerConfig::default()
    };
    tune(&mut cfg);
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let (schema, source) = kauri_domain::schema::Schema::load_default();
    let dir = kauri_domain::directory::Directory::new(Arc::new(db), schema, None).unwrap();
    let server = rt
        .block_on(Server::bind(cfg, Arc::new(dir), source))
        .unwrap();
    let port = server.local_addr().unwrap().port();
    let tls_port = server.tls_addr().unwrap().port();
    let metrics_port = server.metrics_addr().unwrap().port();
    rt.spawn(server.run());
    Running {
        port,
        tls_port,
        metrics_port,
        data,
        _rt: rt,
    }
}
