//! CLDAP datagrams from anyone (UDP: the sender may be forged) into the answer of a
//! provisioned domain's DC: the LDAP ping and root DSE reads. Nothing may panic, and no
//! answer may be more than four times its datagram.

#![no_main]

use std::net::{IpAddr, Ipv4Addr};
use std::sync::{Arc, OnceLock};

use kauri_db::Db;
use kauri_domain::directory::Directory;
use kauri_domain::password::SecretKey;
use kauri_domain::provision::ProvisionParams;
use kauri_domain::schema::Schema;
use kauri_domain::sid::Sid;
use kauri_kv::lmdb::LmdbOptions;
use kauri_ldap::cldap::{answer, AMPLIFICATION};
use kauri_ldap::ctx::Ctx;
use kauri_ldap::{Server, ServerConfig};
use libfuzzer_sys::fuzz_target;

/// A DC of a freshly provisioned domain, made once per fuzzing process. Its folder is
/// removed as soon as the server is up: the open database needs no path.
fn ctx() -> &'static Arc<Ctx> {
    static CTX: OnceLock<Arc<Ctx>> = OnceLock::new();
    CTX.get_or_init(|| {
        let data = tempfile::tempdir().expect("a scratch folder");
        let (schema, source) = Schema::load_default();
        let db = Db::open_lmdb(
            &data.path().join("db"),
            schema.db_config(),
            LmdbOptions::default(),
        )
        .expect("a database");
        let dir = Directory::new(
            Arc::new(db),
            schema,
            Some(SecretKey::generate().expect("a key")),
        )
        .expect("a directory");
        dir.provision(
            &ProvisionParams {
                realm: "SAMDOM.EXAMPLE.COM".into(),
                netbios_domain: "SAMDOM".into(),
                dc_name: "DC1".into(),
                domain_sid: Sid::new_domain().expect("a SID"),
                site: "Default-First-Site-Name".into(),
            },
            "Adm1n.Passw0rd",
            None,
        )
        .expect("a domain");
        let cfg = ServerConfig {
            data: data.path().to_path_buf(),
            listen: "127.0.0.1:0".into(),
            listen_tls: String::new(),
            ..ServerConfig::default()
        };
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .expect("a runtime");
        let server = rt
            .block_on(Server::bind(cfg, Arc::new(dir), source))
            .expect("a server");
        server.ctx()
    })
}

const CLIENT: IpAddr = IpAddr::V4(Ipv4Addr::new(192, 0, 2, 7));
const SERVER: IpAddr = IpAddr::V4(Ipv4Addr::new(192, 0, 2, 1));

fuzz_target!(|data: &[u8]| {
    let ctx = ctx();
    let server = (data.len() % 2 == 1).then_some(SERVER);
    if let Some(reply) = answer(ctx, data, CLIENT, server) {
        assert!(
            reply.len() <= AMPLIFICATION * data.len(),
            "an amplified answer"
        );
    }
});
