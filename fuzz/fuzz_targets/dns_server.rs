//! Messages into the DNS server of a freshly provisioned domain, end to end: decoding,
//! queries answered from the directory, zone transfers, TKEY negotiation and dynamic
//! updates applied through the writer. The first byte picks the transport (bit 0: TCP)
//! and whether the rest is sent as it is or, with bit 1, as the body of an UPDATE of the
//! domain zone (a header and zone section put in front, so the fuzzer reaches the
//! prerequisite and update sections). The zone takes unsigned updates, so they apply.
//!
//! Invariants: every reply decodes and keeps the request's id; a UDP reply fits the
//! request's limit (512 bytes, or its EDNS size up to 1,232); a message that is not a
//! successful UPDATE changes nothing in the directory (its highest USN does not move).

#![no_main]

use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::sync::{Arc, OnceLock};

use kauri_db::Db;
use kauri_dns::server::{Allowed, Dns};
use kauri_dns::tsig::GssKeys;
use kauri_dns::zones::Catalog;
use kauri_dns_proto::dnsp::{self, DnsProperty};
use kauri_dns_proto::wire::{opcode, rcode, Message};
use kauri_domain::directory::{Directory, Request};
use kauri_domain::dns::DnsLayout;
use kauri_domain::password::SecretKey;
use kauri_domain::provision::ProvisionParams;
use kauri_domain::schema::Schema;
use kauri_domain::sid::Sid;
use kauri_kv::lmdb::LmdbOptions;
use kauri_ldap::{Server, ServerConfig};
use libfuzzer_sys::fuzz_target;

const PEER: SocketAddr = SocketAddr::new(IpAddr::V4(Ipv4Addr::new(192, 0, 2, 53)), 53053);

struct World {
    rt: tokio::runtime::Runtime,
    dns: Dns,
    _data: tempfile::TempDir,
}

fn world() -> &'static World {
    static WORLD: OnceLock<World> = OnceLock::new();
    WORLD.get_or_init(|| {
        let data = tempfile::tempdir().expect("a scratch folder");
        let (schema, source) = Schema::load_default();
        let db = Db::open_lmdb(
            &data.path().join("db"),
            schema.db_config(),
            LmdbOptions {
                durable: false,
                ..LmdbOptions::default()
            },
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
        let mut w = dir.db().write().expect("a writer");
        dir.ensure_dns(&mut w, &[IpAddr::V4(Ipv4Addr::LOCALHOST)], 1_800_000_000)
            .expect("the DNS zones");
        w.commit().expect("a commit");
        dir.rediscover().expect("the partitions");
        let info = dir.domain().expect("the domain");
        let layout = DnsLayout::of(&info).expect("a layout");
        // Unsigned updates, so the fuzzer's updates reach the directory.
        let zone = DnsLayout::zone_dn(&layout.domain_container, "samdom.example.com")
            .expect("the zone's DN");
        let mut w = dir.db().write().expect("a writer");
        dir.apply(
            &mut w,
            &Request::system_modify(
                zone,
                vec![kauri_db::Modification {
                    op: kauri_db::ModifyOp::Replace,
                    attr: "dnsProperty".into(),
                    values: vec![
                        DnsProperty::with_u32(dnsp::ZONE_TYPE, 1).encode(),
                        DnsProperty::with_u8(dnsp::ALLOW_UPDATE, 1).encode(),
                        DnsProperty::with_u32(dnsp::AGING_STATE, 1).encode(),
                    ],
                }],
                false,
            ),
        )
        .expect("the zone's settings");
        w.commit().expect("a commit");
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
        let ctx = server.ctx();
        let dns = Dns {
            ctx,
            catalog: Catalog::new(layout),
            forwarder: None,
            transfers: vec![Allowed::Any],
            keys: GssKeys::default(),
        };
        World {
            rt,
            dns,
            _data: data,
        }
    })
}

/// An UPDATE of the domain zone whose sections after the zone section are `body`.
fn update(body: &[u8]) -> Vec<u8> {
    let counts = body.get(..6).unwrap_or(&[0, 0, 0, 0, 0, 0]);
    let mut m = vec![0x12, 0x34, 0x28, 0x00, 0x00, 0x01];
    m.extend_from_slice(counts);
    for label in ["samdom", "example", "com"] {
        m.push(label.len() as u8);
        m.extend_from_slice(label.as_bytes());
    }
    m.extend_from_slice(&[0, 0, 6, 0, 1]);
    m.extend_from_slice(body.get(6..).unwrap_or_default());
    m
}

fuzz_target!(|input: &[u8]| {
    let Some((&mode, rest)) = input.split_first() else {
        return;
    };
    let w = world();
    let udp = mode & 1 == 0;
    let request = if mode & 2 != 0 {
        update(rest)
    } else {
        rest.to_vec()
    };
    let before = w.dns.ctx.db.highest_committed_usn();
    let replies = w.rt.block_on(w.dns.answer(&request, PEER, udp));
    let decoded = Message::decode(&request).ok();
    let mut applied = false;
    for reply in &replies {
        let m = Message::decode(reply).expect("every reply decodes");
        assert_eq!(reply.get(..2), request.get(..2), "the reply keeps the id");
        if udp {
            let limit = decoded
                .as_ref()
                .and_then(|d| d.edns())
                .map_or(512, |e| usize::from(e.udp_size.clamp(512, 1232)));
            assert!(reply.len() <= limit, "{} > {limit}", reply.len());
        }
        let is_update = decoded
            .as_ref()
            .is_some_and(|d| d.header.opcode == opcode::UPDATE);
        applied |= is_update && m.header.rcode == rcode::NOERROR;
    }
    if !applied {
        assert_eq!(
            w.dns.ctx.db.highest_committed_usn(),
            before,
            "only a successful update writes"
        );
    }
});
