//! CLDAP datagrams from anyone: arbitrary bytes, and well-formed root DSE searches with
//! arbitrary filter terms and attributes, into the CLDAP answer of a provisioned domain.
//! Nothing may panic, and no answer may exceed four times its datagram.
//! `KAURI_FUZZ_CASES` sets the number of inputs per property.

use std::net::{IpAddr, Ipv4Addr};
use std::sync::{Arc, OnceLock};

use kauri_db::{Db, Filter};
use kauri_domain::directory::Directory;
use kauri_domain::password::SecretKey;
use kauri_domain::provision::ProvisionParams;
use kauri_domain::schema::Schema;
use kauri_domain::sid::Sid;
use kauri_kv::lmdb::LmdbOptions;
use kauri_ldap::ctx::Ctx;
use kauri_ldap::{Server, ServerConfig};
use kauri_ldap_proto::encode::encode_message;
use kauri_ldap_proto::{DerefAliases, LdapMessage, ProtocolOp, SearchRequest, SearchScope};
use proptest::prelude::*;

fn cases() -> u32 {
    std::env::var("KAURI_FUZZ_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(5_000)
}

fn ctx() -> &'static (Arc<Ctx>, tempfile::TempDir) {
    static CTX: OnceLock<(Arc<Ctx>, tempfile::TempDir)> = OnceLock::new();
    CTX.get_or_init(|| {
        let data = tempfile::tempdir().unwrap();
        let (schema, source) = Schema::load_default();
        let db = Db::open_lmdb(
            &data.path().join("db"),
            schema.db_config(),
            LmdbOptions::default(),
        )
        .unwrap();
        let dir =
            Directory::new(Arc::new(db), schema, Some(SecretKey::generate().unwrap())).unwrap();
        dir.provision(
            &ProvisionParams {
                realm: "SAMDOM.EXAMPLE.COM".into(),
                netbios_domain: "SAMDOM".into(),
                dc_name: "DC1".into(),
                domain_sid: Sid::new_domain().unwrap(),
                site: "Default-First-Site-Name".into(),
            },
            "Adm1n.Passw0rd",
            None,
        )
        .unwrap();
        let cfg = ServerConfig {
            data: data.path().to_path_buf(),
            listen: "127.0.0.1:0".into(),
            listen_tls: String::new(),
            ..ServerConfig::default()
        };
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        let server = rt
            .block_on(Server::bind(cfg, Arc::new(dir), source))
            .unwrap();
        (server.ctx(), data)
    })
}

const TERMS: &[&str] = &[
    "DnsDomain",
    "Host",
    "DnsHostName",
    "User",
    "AAC",
    "DomainSid",
    "DomainGuid",
    "NtVer",
    "objectClass",
];

fn term() -> impl Strategy<Value = Filter> {
    (
        prop::sample::select(TERMS),
        prop::collection::vec(any::<u8>(), 0..24),
    )
        .prop_map(|(name, value)| Filter::Equality(name.to_string(), value))
}

fn search() -> impl Strategy<Value = Vec<u8>> {
    (
        prop::collection::vec(term(), 0..6),
        prop::collection::vec(
            prop::sample::select(vec!["netlogon", "*", "currentTime", "dnsHostName", "1.1"]),
            0..3,
        ),
        any::<bool>(),
    )
        .prop_map(|(terms, attrs, and)| {
            let filter = if and || terms.len() != 1 {
                Filter::And(terms)
            } else {
                terms.into_iter().next().unwrap_or(Filter::And(Vec::new()))
            };
            encode_message(&LdapMessage {
                id: 1,
                op: ProtocolOp::SearchRequest(SearchRequest {
                    base: String::new(),
                    scope: SearchScope::Base,
                    deref: DerefAliases::Never,
                    size_limit: 0,
                    time_limit: 0,
                    types_only: false,
                    filter,
                    attributes: attrs.into_iter().map(str::to_string).collect(),
                }),
                controls: Vec::new(),
            })
        })
}

const CLIENT: IpAddr = IpAddr::V4(Ipv4Addr::LOCALHOST);

proptest! {
    #![proptest_config(ProptestConfig::with_cases(cases()))]

    #[test]
    fn arbitrary_datagrams(bytes in prop::collection::vec(any::<u8>(), 0..300)) {
        let (ctx, _) = ctx();
        if let Some(reply) = kauri_ldap::cldap::answer(ctx, &bytes, CLIENT, None) {
            prop_assert!(reply.len() <= 4 * bytes.len());
        }
    }

    #[test]
    fn arbitrary_pings(datagram in search()) {
        let (ctx, _) = ctx();
        if let Some(reply) = kauri_ldap::cldap::answer(ctx, &datagram, CLIENT, None) {
            prop_assert!(reply.len() <= 4 * datagram.len());
        }
    }
}
