//! Requests into the KDC and the password-change service of a freshly provisioned
//! domain, end to end: decoding, the directory lookups, pre-authentication, ticket and
//! PAC checks, issuing, and the KRB-ERROR of every refusal. The first byte picks how the
//! rest is used:
//!
//! * `0`: a KDC request as it arrives. The KDC answers exactly the AS-REQs and TGS-REQs
//!   (by APPLICATION tag), with a KRB-ERROR or a reply of the same exchange.
//! * `1`: a KDC-REQ sent as an AS-REQ with a fresh PA-ENC-TIMESTAMP under the
//!   Administrator's key (AES256, AES128 or RC4 by bits 2-3), so the fuzzer reaches
//!   issuing; an AS-REP must open with that key and carry the request's nonce.
//! * `2`: a KDC-REQ sent as a TGS-REQ with a PA-TGS-REQ made of the Administrator's real
//!   TGT and a fresh authenticator whose checksum covers the request body (a subkey with
//!   bit 2; the TGT also as an additional ticket with bit 3); a TGS-REP must open with
//!   the session key or subkey and carry the request's nonce.
//! * `3`: a password-change request as it arrives; with bit 2, the rest is
//!   `version (u16 BE) | user data`, sent under a real kadmin/changepw ticket and a
//!   KRB-PRIV that decrypts (no other account's password is ever set: a target name
//!   other than the Administrator's is dropped). Every reply's framing decodes.
//!
//! The domain is provisioned once per process, and each input gets a KDC of its own over
//! it (empty replay and lookaside caches); a run of many inputs changes the domain only
//! as logons do (last-logon times, bad-password counts: the domain has no lockout).

#![no_main]

use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::sync::{Arc, OnceLock};

use kauri_auth::krb::crypto::{Enctype, Key};
use kauri_auth::krb::msg::constants::{error_code, name_type, padata};
use kauri_auth::krb::msg::flags::{kdc_options, KerberosFlags};
use kauri_auth::krb::msg::{
    application_tag, ApReq, Authenticator, ChangePasswdData, Checksum, EncKdcRepPart,
    EncKrbPrivPart, EncryptedData, EncryptionKey, EtypeInfo2, KdcKind, KdcRep, KdcReq, KdcReqBody,
    KerberosTime, KpasswdReply, KpasswdRequest, KpasswdResult, KrbError, KrbPriv, MethodData,
    PaData, PaEncTsEnc, PrincipalName, Ticket,
};
use kauri_db::Db;
use kauri_domain::directory::Directory;
use kauri_domain::password::SecretKey;
use kauri_domain::provision::ProvisionParams;
use kauri_domain::schema::Schema;
use kauri_domain::sid::Sid;
use kauri_kdc::kpasswd::Kpasswd;
use kauri_kdc::{Kdc, Service};
use kauri_kv::lmdb::LmdbOptions;
use kauri_ldap::ctx::Ctx;
use kauri_ldap::{Server, ServerConfig};
use libfuzzer_sys::fuzz_target;

const REALM: &str = "SAMDOM.EXAMPLE.COM";
const ADMIN: &str = "Administrator";
const ADMIN_PASSWORD: &str = "Adm1n.Passw0rd";
const PEER: SocketAddr = SocketAddr::new(IpAddr::V4(Ipv4Addr::new(192, 0, 2, 7)), 50088);

// Key usages (RFC 4120 §7.5.1).
const USAGE_PA_ENC_TS: u32 = 1;
const USAGE_AS_REP: u32 = 3;
const USAGE_TGS_REQ_CKSUM: u32 = 6;
const USAGE_TGS_REQ_AUTH: u32 = 7;
const USAGE_TGS_REP_SESSION: u32 = 8;
const USAGE_TGS_REP_SUBKEY: u32 = 9;
const USAGE_AP_REQ_AUTH: u32 = 11;
const USAGE_KRB_PRIV: u32 = 13;

/// A ticket and its session key.
struct Creds {
    ticket: Ticket,
    session: Key,
    cname: PrincipalName,
    crealm: String,
}

/// The provisioned DC and what the structured modes need.
struct World {
    rt: tokio::runtime::Runtime,
    ctx: Arc<Ctx>,
    /// The Administrator's AES256, AES128 and RC4 keys.
    admin_keys: Vec<Key>,
    tgt: Creds,
    changepw: Creds,
}

fn now() -> (i64, u32) {
    let d = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .expect("a clock after 1970");
    (d.as_secs() as i64, d.subsec_micros())
}

fn admin() -> PrincipalName {
    PrincipalName::new(name_type::NT_PRINCIPAL, &[ADMIN])
}

fn as_req(sname: PrincipalName, padata: Vec<PaData>) -> KdcReq {
    let (t, _) = now();
    KdcReq {
        kind: KdcKind::As,
        padata: Some(padata),
        req_body: KdcReqBody {
            kdc_options: KerberosFlags(kdc_options::FORWARDABLE | kdc_options::RENEWABLE),
            cname: Some(admin()),
            realm: REALM.into(),
            sname: Some(sname),
            from: None,
            till: KerberosTime(t + 86_400),
            rtime: Some(KerberosTime(t + 7 * 86_400)),
            nonce: 0x1234_5678,
            etype: vec![18, 17, 23],
            addresses: None,
            enc_authorization_data: None,
            additional_tickets: None,
            raw: None,
        },
    }
}

/// A fresh PA-ENC-TIMESTAMP under `key`.
fn enc_timestamp(key: &Key) -> PaData {
    let (t, usec) = now();
    let ts = PaEncTsEnc {
        patimestamp: KerberosTime(t),
        pausec: Some(usec),
    };
    let ed = EncryptedData {
        etype: key.etype().number(),
        kvno: None,
        cipher: key
            .encrypt(USAGE_PA_ENC_TS, &ts.encode())
            .expect("encrypting"),
    };
    PaData::new(padata::PA_ENC_TIMESTAMP, ed.encode())
}

/// Logs the Administrator on for `sname`.
fn logon(rt: &tokio::runtime::Runtime, kdc: &Kdc, key: &Key, sname: PrincipalName) -> Creds {
    let req = as_req(sname, vec![enc_timestamp(key)]);
    let rep = rt
        .block_on(kdc.answer(&req.encode(), PEER))
        .expect("an answer");
    let rep = match KdcRep::decode(&rep) {
        Ok(r) => r,
        Err(_) => panic!("logon refused: {:?}", KrbError::decode(&rep)),
    };
    let plain = key
        .decrypt(USAGE_AS_REP, &rep.enc_part.cipher)
        .expect("the AS-REP opens");
    let part = EncKdcRepPart::decode(&plain).expect("EncASRepPart");
    let etype = Enctype::from_number(part.key.keytype).expect("a session key type");
    Creds {
        ticket: rep.ticket,
        session: Key::new(etype, &part.key.keyvalue).expect("a session key"),
        cname: rep.cname,
        crealm: rep.crealm,
    }
}

fn world() -> &'static World {
    static WORLD: OnceLock<World> = OnceLock::new();
    WORLD.get_or_init(|| {
        let data = tempfile::tempdir().expect("a scratch folder");
        let (schema, source) = Schema::load_default();
        let db = Db::open_lmdb(
            &data.path().join("db"),
            schema.db_config(),
            // Commits need not reach the disk: the domain lives as long as the process.
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
                realm: REALM.into(),
                netbios_domain: "SAMDOM".into(),
                dc_name: "DC1".into(),
                domain_sid: Sid::new_domain().expect("a SID"),
                site: "Default-First-Site-Name".into(),
            },
            ADMIN_PASSWORD,
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
        let ctx = server.ctx();
        let kdc = Kdc::new(ctx.clone());

        // The Administrator's salts, from the KDC's PREAUTH_REQUIRED.
        let krbtgt = PrincipalName::new(name_type::NT_SRV_INST, &["krbtgt", REALM]);
        let first = rt
            .block_on(kdc.answer(&as_req(krbtgt.clone(), Vec::new()).encode(), PEER))
            .expect("an answer");
        let err = KrbError::decode(&first).expect("a KRB-ERROR");
        assert_eq!(err.error_code, error_code::KDC_ERR_PREAUTH_REQUIRED);
        let methods =
            MethodData::decode(err.e_data.as_deref().expect("e-data")).expect("METHOD-DATA");
        let info = EtypeInfo2::decode(
            &methods
                .find(padata::PA_ETYPE_INFO2)
                .expect("ETYPE-INFO2")
                .value,
        )
        .expect("ETYPE-INFO2");
        let admin_keys: Vec<Key> = Enctype::ALL
            .iter()
            .map(|&e| {
                let salt = info
                    .0
                    .iter()
                    .find(|i| i.etype == e.number())
                    .and_then(|i| i.salt.clone())
                    .unwrap_or_default();
                Key::from_password(e, ADMIN_PASSWORD, &salt).expect("a key")
            })
            .collect();
        let tgt = logon(&rt, &kdc, &admin_keys[0], krbtgt);
        let changepw = logon(
            &rt,
            &kdc,
            &admin_keys[0],
            PrincipalName::new(name_type::NT_SRV_INST, &["kadmin", "changepw"]),
        );
        World {
            rt,
            ctx,
            admin_keys,
            tgt,
            changepw,
        }
    })
}

/// A reply of the KDC: a KRB-ERROR or a reply of the request's exchange.
fn check_reply(reply: &[u8], kind: KdcKind) -> Option<KdcRep> {
    if let Ok(e) = KrbError::decode(reply) {
        let _ = e.method_data();
        let _ = e.kerb_error_data();
        return None;
    }
    let rep = KdcRep::decode(reply).expect("a KDC answer that is neither KRB-ERROR nor KDC-REP");
    assert_eq!(rep.kind, kind, "a reply of the other exchange");
    Some(rep)
}

/// An authenticator for `creds`, encrypted for `usage`, with a checksum over `body` when
/// given.
fn ap_req(creds: &Creds, usage: u32, body: Option<&[u8]>, subkey: Option<&Key>) -> ApReq {
    let (t, usec) = now();
    let s = &creds.session;
    let auth = Authenticator {
        crealm: creds.crealm.clone(),
        cname: creds.cname.clone(),
        cksum: body.map(|b| Checksum {
            cksumtype: s.etype().checksum_type(),
            checksum: s.checksum(USAGE_TGS_REQ_CKSUM, b).expect("a checksum"),
        }),
        cusec: usec,
        ctime: KerberosTime(t),
        subkey: subkey.map(|k| EncryptionKey {
            keytype: k.etype().number(),
            keyvalue: k.bytes().to_vec(),
        }),
        seq_number: Some(usec),
        authorization_data: None,
    };
    ApReq {
        ap_options: KerberosFlags::EMPTY,
        ticket: creds.ticket.clone(),
        authenticator: EncryptedData {
            etype: s.etype().number(),
            kvno: None,
            cipher: s.encrypt(usage, &auth.encode()).expect("encrypting"),
        },
    }
}

fn kdc_raw(w: &World, s: &Services, data: &[u8]) {
    let reply = w.rt.block_on(s.kdc.answer(data, PEER));
    let kind = match application_tag(data) {
        Some(10) => KdcKind::As,
        Some(12) => KdcKind::Tgs,
        _ => {
            assert!(reply.is_none(), "an answer to something not a KDC request");
            return;
        }
    };
    let reply = reply.expect("no answer to a KDC request");
    check_reply(&reply, kind);
}

fn kdc_as(w: &World, s: &Services, mode: u8, data: &[u8]) {
    let Ok(mut req) = KdcReq::decode(data) else {
        return;
    };
    req.kind = KdcKind::As;
    let key = &w.admin_keys[usize::from((mode >> 2) & 3) % 3];
    let mut pas: Vec<PaData> = req.padata.take().unwrap_or_default();
    pas.retain(|p| p.padata_type != padata::PA_ENC_TIMESTAMP);
    pas.insert(0, enc_timestamp(key));
    req.padata = Some(pas);
    let reply =
        w.rt.block_on(s.kdc.answer(&req.encode(), PEER))
            .expect("an answer");
    if let Some(rep) = check_reply(&reply, KdcKind::As) {
        let plain = key
            .decrypt(USAGE_AS_REP, &rep.enc_part.cipher)
            .expect("an AS-REP that the client's key does not open");
        let part = EncKdcRepPart::decode(&plain).expect("EncASRepPart");
        assert_eq!(part.nonce, req.req_body.nonce, "the AS-REP's nonce");
    }
}

fn kdc_tgs(w: &World, s: &Services, mode: u8, data: &[u8]) {
    let Ok(mut req) = KdcReq::decode(data) else {
        return;
    };
    req.kind = KdcKind::Tgs;
    if mode & 8 != 0 {
        req.req_body.raw = None;
        req.req_body
            .additional_tickets
            .get_or_insert_with(Vec::new)
            .push(w.tgt.ticket.clone());
    }
    let subkey = (mode & 4 != 0).then(|| Key::random(w.tgt.session.etype()).expect("a key"));
    let body = req.req_body.checksum_bytes();
    let ap = ap_req(&w.tgt, USAGE_TGS_REQ_AUTH, Some(&body), subkey.as_ref());
    let mut pas: Vec<PaData> = req.padata.take().unwrap_or_default();
    pas.retain(|p| p.padata_type != padata::PA_TGS_REQ);
    pas.insert(0, PaData::new(padata::PA_TGS_REQ, ap.encode()));
    req.padata = Some(pas);
    let reply =
        w.rt.block_on(s.kdc.answer(&req.encode(), PEER))
            .expect("an answer");
    if let Some(rep) = check_reply(&reply, KdcKind::Tgs) {
        let plain = match &subkey {
            Some(k) => k.decrypt(USAGE_TGS_REP_SUBKEY, &rep.enc_part.cipher),
            None => w
                .tgt
                .session
                .decrypt(USAGE_TGS_REP_SESSION, &rep.enc_part.cipher),
        }
        .expect("a TGS-REP that the client's key does not open");
        let part = EncKdcRepPart::decode(&plain).expect("EncTGSRepPart");
        assert_eq!(part.nonce, req.req_body.nonce, "the TGS-REP's nonce");
    }
}

fn kpasswd(w: &World, s: &Services, mode: u8, data: &[u8]) {
    let mut subkey = None;
    let request = if mode & 4 == 0 {
        data.to_vec()
    } else {
        let [a, b, rest @ ..] = data else {
            return;
        };
        let version = u16::from_be_bytes([*a, *b]);
        let mut user_data = rest.to_vec();
        if let Ok(mut c) = ChangePasswdData::decode(rest) {
            // Only the Administrator's own password: another account's (krbtgt's) would
            // change the domain under the next inputs.
            if c.targname.as_ref().is_some_and(|n| {
                n.components.len() != 1 || !n.components[0].eq_ignore_ascii_case(ADMIN)
            }) {
                c.targname = None;
                user_data = c.encode();
            }
        }
        let key = subkey.insert(Key::random(w.changepw.session.etype()).expect("a key"));
        let ap = ap_req(&w.changepw, USAGE_AP_REQ_AUTH, None, Some(key));
        let (t, usec) = now();
        let part = EncKrbPrivPart {
            user_data,
            timestamp: Some(KerberosTime(t)),
            usec: Some(usec),
            seq_number: Some(usec),
            s_address: None,
            r_address: None,
        };
        let krb_priv = KrbPriv {
            enc_part: EncryptedData {
                etype: key.etype().number(),
                kvno: None,
                cipher: key
                    .encrypt(USAGE_KRB_PRIV, &part.encode())
                    .expect("encrypting"),
            },
        };
        let Ok(req) = (KpasswdRequest {
            version,
            ap_req: ap.encode(),
            krb_priv: krb_priv.encode(),
        })
        .encode() else {
            return;
        };
        req
    };
    let Some(reply) = w.rt.block_on(s.kpasswd.handle(request, PEER, false)) else {
        return;
    };
    let reply = KpasswdReply::decode(&reply).expect("a kpasswd reply that does not decode");
    if reply.ap_rep.is_empty() {
        let e = KrbError::decode(&reply.body).expect("a kpasswd error that is no KRB-ERROR");
        KpasswdResult::decode(e.e_data.as_deref().unwrap_or_default())
            .expect("a kpasswd error without a result");
    } else if let Some(key) = &subkey {
        // The result is sealed with the request's subkey.
        let p = KrbPriv::decode(&reply.body).expect("a kpasswd reply's KRB-PRIV");
        let plain = key
            .decrypt(USAGE_KRB_PRIV, &p.enc_part.cipher)
            .expect("a kpasswd result that the subkey does not open");
        let part = EncKrbPrivPart::decode(&plain).expect("EncKrbPrivPart");
        KpasswdResult::decode(&part.user_data).expect("a kpasswd result");
    }
}

/// The KDC and the password-change service of one input, over the shared domain: their
/// replay and lookaside caches start empty, so that an input's answer does not depend on
/// the inputs before it (and what they keep is freed with them, as libFuzzer's leak
/// check wants).
struct Services {
    kdc: Arc<Kdc>,
    kpasswd: Kpasswd,
}

fn services(w: &World) -> Services {
    let kdc = Arc::new(Kdc::new(w.ctx.clone()));
    Services {
        kpasswd: Kpasswd {
            kdc: kdc.clone(),
            local: SocketAddr::new(IpAddr::V4(Ipv4Addr::new(192, 0, 2, 1)), 464),
            lookaside: Default::default(),
        },
        kdc,
    }
}

fuzz_target!(|data: &[u8]| {
    let Some((&mode, rest)) = data.split_first() else {
        return;
    };
    let w = world();
    let s = services(w);
    match mode & 3 {
        0 => kdc_raw(w, &s, rest),
        1 => kdc_as(w, &s, mode, rest),
        2 => kdc_tgs(w, &s, mode, rest),
        _ => kpasswd(w, &s, mode, rest),
    }
});
