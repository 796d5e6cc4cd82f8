//! The KDC against requests no ordinary client sends: wrong realms, bad pre-authentication,
//! replayed and skewed authenticators, tickets for unknown key versions, TGTs whose PAC
//! was altered or removed, and garbage. Requests are built here with Kauri's own message
//! and crypto code and answered by a KDC over a provisioned domain, with the krbtgt keys
//! read from the directory to forge what a client cannot.

use std::net::SocketAddr;
use std::sync::{Arc, OnceLock};

use kauri_auth::krb::crypto::{Enctype, Key};
use kauri_auth::krb::msg::constants::{ad_type, error_code, name_type, padata};
use kauri_auth::krb::msg::{
    kdc_options, ApReq, Authenticator, AuthorizationData, AuthorizationDataEntry, EncKdcRepPart,
    EncTicketPart, EncryptedData, KdcKind, KdcRep, KdcReq, KdcReqBody, KerberosFlags, KerberosTime,
    KrbError, PaData, PaEncTsEnc, PrincipalName, Ticket,
};
use kauri_db::Db;
use kauri_domain::directory::Directory;
use kauri_domain::password::SecretKey;
use kauri_domain::provision::ProvisionParams;
use kauri_domain::schema::Schema;
use kauri_domain::sid::Sid;
use kauri_kdc::Kdc;
use kauri_kv::lmdb::LmdbOptions;
use kauri_ldap::ctx::Ctx;
use kauri_ldap::server::Server;
use kauri_ldap::ServerConfig;

const REALM: &str = "SAMDOM.EXAMPLE.COM";
const PASSWORD: &str = "Adm1n.Passw0rd";

struct World {
    rt: tokio::runtime::Runtime,
    kdc: Arc<Kdc>,
    _ctx: Arc<Ctx>,
    _data: tempfile::TempDir,
}

fn world() -> &'static World {
    static W: OnceLock<World> = OnceLock::new();
    W.get_or_init(|| {
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
                realm: REALM.into(),
                netbios_domain: "SAMDOM".into(),
                dc_name: "DC1".into(),
                domain_sid: Sid::new_domain().unwrap(),
                site: "Default-First-Site-Name".into(),
            },
            PASSWORD,
            None,
        )
        .unwrap();
        let cfg = ServerConfig {
            data: data.path().to_path_buf(),
            listen: "127.0.0.1:0".into(),
            listen_tls: String::new(),
            metrics_listen: String::new(),
            ..ServerConfig::default()
        };
        let rt = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .enable_all()
            .build()
            .unwrap();
        let server = rt
            .block_on(Server::bind(cfg, Arc::new(dir), source))
            .unwrap();
        let ctx = server.ctx();
        let kdc = Arc::new(Kdc::new(ctx.clone()));
        World {
            rt,
            kdc,
            _ctx: ctx,
            _data: data,
        }
    })
}

fn peer() -> SocketAddr {
    "127.0.0.1:40000".parse().unwrap()
}

fn ask(bytes: &[u8]) -> Vec<u8> {
    let w = world();
    w.rt.block_on(w.kdc.answer(bytes, peer()))
        .expect("an answer")
}

fn now() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs() as i64
}

fn nonce() -> u32 {
    let mut b = [0u8; 4];
    getrandom::fill(&mut b).unwrap();
    u32::from_be_bytes(b) & 0x7fff_ffff
}

fn krbtgt_name() -> PrincipalName {
    PrincipalName::new(name_type::NT_SRV_INST, &["krbtgt", REALM])
}

fn error_text(reply: &[u8]) -> String {
    KrbError::decode(reply)
        .map(|e| format!("{} {:?}", e.error_code, e.e_text))
        .unwrap_or_default()
}

fn error_code_of(reply: &[u8]) -> Option<i32> {
    KrbError::decode(reply).ok().map(|e| e.error_code)
}

fn admin_key() -> Key {
    Key::from_password(
        Enctype::Aes256Sha1,
        PASSWORD,
        &format!("{REALM}Administrator"),
    )
    .unwrap()
}

fn as_req(realm: &str, key: &Key) -> Vec<u8> {
    as_req_for("Administrator", realm, key, &["krbtgt", realm])
}

fn as_req_for(user: &str, realm: &str, key: &Key, sname: &[&str]) -> Vec<u8> {
    let ts = PaEncTsEnc {
        patimestamp: KerberosTime(now()),
        pausec: Some(0),
    };
    let enc = EncryptedData {
        etype: key.etype().number(),
        kvno: None,
        cipher: key.encrypt(1, &ts.encode()).unwrap(),
    };
    KdcReq {
        kind: KdcKind::As,
        padata: Some(vec![PaData::new(padata::PA_ENC_TIMESTAMP, enc.encode())]),
        req_body: KdcReqBody {
            kdc_options: KerberosFlags(kdc_options::FORWARDABLE | kdc_options::RENEWABLE),
            cname: Some(PrincipalName::new(name_type::NT_PRINCIPAL, &[user])),
            realm: realm.into(),
            sname: Some(PrincipalName::new(name_type::NT_SRV_INST, sname)),
            till: KerberosTime(now() + 3600),
            rtime: Some(KerberosTime(now() + 86_400)),
            nonce: nonce(),
            etype: vec![18, 17, 23],
            ..KdcReqBody::default()
        },
    }
    .encode()
}

/// A TGT for the Administrator and its session key.
fn tgt() -> (Ticket, Key) {
    ticket_by_as("Administrator", &admin_key(), &["krbtgt", REALM])
}

/// A ticket from an AS exchange for `user` to `sname`, and its session key.
fn ticket_by_as(user: &str, key: &Key, sname: &[&str]) -> (Ticket, Key) {
    let reply = ask(&as_req_for(user, REALM, key, sname));
    let rep = KdcRep::decode(&reply).unwrap_or_else(|e| panic!("{e}: {}", error_text(&reply)));
    let part = EncKdcRepPart::decode(&key.decrypt(3, &rep.enc_part.cipher).unwrap()).unwrap();
    let session = Key::new(
        Enctype::from_number(part.key.keytype).unwrap(),
        &part.key.keyvalue,
    )
    .unwrap();
    (rep.ticket, session)
}

/// krbtgt's current AES256 key, read from the directory.
fn krbtgt_key() -> (Key, u32) {
    let w = world();
    let dir = &w.kdc.ctx.dir;
    let r = dir.db().read().unwrap();
    let domain = dir.domain().unwrap();
    let id = dir.kdc_krbtgt(&r, &domain).unwrap().unwrap();
    let acct = dir.kdc_account(&r, id).unwrap().unwrap();
    let k = kauri_kdc::keys::ticket_key(&acct).unwrap();
    (k.key, k.kvno)
}

/// A TGS-REQ for `sname` with `ticket`, an authenticator of time `ctime` (with a checksum
/// over the body when `checksum`).
fn tgs_req(ticket: &Ticket, session: &Key, ctime: i64, checksum: bool, sname: &[&str]) -> Vec<u8> {
    tgs_req_as("Administrator", ticket, session, ctime, checksum, sname)
}

/// The same for the TGT of `client`.
fn tgs_req_as(
    client: &str,
    ticket: &Ticket,
    session: &Key,
    ctime: i64,
    checksum: bool,
    sname: &[&str],
) -> Vec<u8> {
    let body = KdcReqBody {
        kdc_options: KerberosFlags(kdc_options::FORWARDABLE),
        realm: REALM.into(),
        sname: Some(PrincipalName::new(name_type::NT_SRV_INST, sname)),
        till: KerberosTime(now() + 3600),
        nonce: nonce(),
        etype: vec![18, 17],
        ..KdcReqBody::default()
    };
    let cksum = checksum.then(|| kauri_auth::krb::msg::Checksum {
        cksumtype: session.etype().checksum_type(),
        checksum: session.checksum(6, &body.encode()).unwrap(),
    });
    let auth = Authenticator {
        crealm: REALM.into(),
        cname: PrincipalName::new(name_type::NT_PRINCIPAL, &[client]),
        cksum,
        cusec: 0,
        ctime: KerberosTime(ctime),
        ..Authenticator::default()
    };
    tgs_with(ticket, session, &auth, body)
}

fn tgs_with(ticket: &Ticket, session: &Key, auth: &Authenticator, body: KdcReqBody) -> Vec<u8> {
    let ap = ApReq {
        ap_options: KerberosFlags(0),
        ticket: ticket.clone(),
        authenticator: EncryptedData {
            etype: session.etype().number(),
            kvno: None,
            cipher: session.encrypt(7, &auth.encode()).unwrap(),
        },
    };
    KdcReq {
        kind: KdcKind::Tgs,
        padata: Some(vec![PaData::new(padata::PA_TGS_REQ, ap.encode())]),
        req_body: body,
    }
    .encode()
}

const LDAP: [&str; 2] = ["ldap", "dc1.samdom.example.com"];

#[test]
fn a_good_tgt_gets_a_service_ticket() {
    let (t, s) = tgt();
    let reply = ask(&tgs_req(&t, &s, now(), true, &LDAP));
    assert!(
        KdcRep::decode(&reply).is_ok(),
        "{:?}",
        error_code_of(&reply)
    );
}

#[test]
fn a_foreign_realm_is_refused() {
    let reply = ask(&as_req("OTHER.EXAMPLE.ORG", &admin_key()));
    assert_eq!(error_code_of(&reply), Some(error_code::KDC_ERR_WRONG_REALM));
}

#[test]
fn a_wrong_key_fails_pre_authentication() {
    let wrong = Key::from_password(
        Enctype::Aes256Sha1,
        "Not.The.Passw0rd",
        &format!("{REALM}Administrator"),
    )
    .unwrap();
    let reply = ask(&as_req(REALM, &wrong));
    assert_eq!(
        error_code_of(&reply),
        Some(error_code::KDC_ERR_PREAUTH_FAILED)
    );
}

#[test]
fn a_replayed_authenticator_is_refused() {
    let (t, s) = tgt();
    let auth = Authenticator {
        crealm: REALM.into(),
        cname: PrincipalName::new(name_type::NT_PRINCIPAL, &["Administrator"]),
        cusec: 7,
        ctime: KerberosTime(now()),
        ..Authenticator::default()
    };
    let body = |n: u32| KdcReqBody {
        realm: REALM.into(),
        sname: Some(PrincipalName::new(name_type::NT_SRV_INST, &LDAP)),
        till: KerberosTime(now() + 3600),
        nonce: n,
        etype: vec![18],
        ..KdcReqBody::default()
    };
    // One authenticator, encrypted once, in two requests that differ elsewhere.
    let first = tgs_with(&t, &s, &auth, body(1));
    let ap_bytes = KdcReq::decode_kind(&first, KdcKind::Tgs)
        .unwrap()
        .padata
        .unwrap()[0]
        .value
        .clone();
    let second = KdcReq {
        kind: KdcKind::Tgs,
        padata: Some(vec![PaData::new(padata::PA_TGS_REQ, ap_bytes)]),
        req_body: body(2),
    }
    .encode();
    assert!(KdcRep::decode(&ask(&first)).is_ok());
    assert_eq!(
        error_code_of(&ask(&second)),
        Some(error_code::KRB_AP_ERR_REPEAT)
    );
}

#[test]
fn a_skewed_authenticator_is_refused() {
    let (t, s) = tgt();
    let reply = ask(&tgs_req(&t, &s, now() - 3600, true, &LDAP));
    assert_eq!(error_code_of(&reply), Some(error_code::KRB_AP_ERR_SKEW));
}

#[test]
fn a_body_that_does_not_match_its_checksum_is_refused() {
    let (t, s) = tgt();
    let good = tgs_req(&t, &s, now(), true, &LDAP);
    let mut req = KdcReq::decode_kind(&good, KdcKind::Tgs).unwrap();
    req.req_body.raw = None;
    req.req_body.nonce ^= 1;
    let reply = ask(&req.encode());
    assert_eq!(error_code_of(&reply), Some(error_code::KRB_AP_ERR_MODIFIED));
}

#[test]
fn a_ticket_of_an_unknown_key_version_is_refused() {
    let (mut t, s) = tgt();
    t.raw = None;
    t.enc_part.kvno = Some(t.enc_part.kvno.unwrap_or(0) + 40);
    let reply = ask(&tgs_req(&t, &s, now(), true, &LDAP));
    assert_eq!(
        error_code_of(&reply),
        Some(error_code::KRB_AP_ERR_BADKEYVER)
    );
}

/// The TGT opened with krbtgt's key, changed by `f`, and sealed again.
fn forged(f: impl FnOnce(&mut EncTicketPart)) -> (Ticket, Key) {
    let (t, s) = tgt();
    let (key, kvno) = krbtgt_key();
    let mut part = EncTicketPart::decode(&key.decrypt(2, &t.enc_part.cipher).unwrap()).unwrap();
    f(&mut part);
    let ticket = Ticket::new(
        REALM,
        krbtgt_name(),
        EncryptedData {
            etype: key.etype().number(),
            kvno: Some(kvno),
            cipher: key.encrypt(2, &part.encode()).unwrap(),
        },
    );
    (ticket, s)
}

#[test]
fn a_tgt_whose_pac_was_altered_is_refused() {
    let (t, s) = forged(|part| {
        let ad = part.authorization_data.as_mut().unwrap();
        let outer = &mut ad.0[0];
        let mut inner = AuthorizationData::decode(&outer.ad_data).unwrap();
        let pac = &mut inner.0[0].ad_data;
        // A byte inside the logon information (the user's groups, names, RIDs).
        let at = pac.len() / 3;
        pac[at] ^= 0x01;
        outer.ad_data = inner.encode();
    });
    let reply = ask(&tgs_req(&t, &s, now(), true, &LDAP));
    assert_eq!(error_code_of(&reply), Some(error_code::KRB_AP_ERR_MODIFIED));
}

#[test]
fn a_tgt_without_a_pac_is_refused() {
    let (t, s) = forged(|part| part.authorization_data = None);
    let reply = ask(&tgs_req(&t, &s, now(), true, &LDAP));
    assert_eq!(error_code_of(&reply), Some(error_code::KDC_ERR_TGT_REVOKED));
    // A PAC element of the wrong kind is no PAC either.
    let (t, s) = forged(|part| {
        part.authorization_data = Some(AuthorizationData(vec![AuthorizationDataEntry {
            ad_type: ad_type::AD_IF_RELEVANT,
            ad_data: AuthorizationData(vec![AuthorizationDataEntry {
                ad_type: 141,
                ad_data: vec![0x30, 0x00],
            }])
            .encode(),
        }]))
    });
    let reply = ask(&tgs_req(&t, &s, now(), true, &LDAP));
    assert_eq!(error_code_of(&reply), Some(error_code::KDC_ERR_TGT_REVOKED));
}

#[test]
fn garbage_never_gets_a_ticket() {
    let w = world();
    for bytes in [
        &b""[..],
        &b"\x6a\x03\x02\x01\x05"[..],
        &b"\x6c\x82\xff\xff"[..],
        &[0x6a; 64][..],
    ] {
        match w.rt.block_on(w.kdc.answer(bytes, peer())) {
            None => {}
            Some(reply) => assert!(KrbError::decode(&reply).is_ok(), "{bytes:?}"),
        }
    }
}

/// A ticket from a TGS exchange and its session key.
fn ticket_by_tgs(tgt: &Ticket, session: &Key, sname: &[&str]) -> (Ticket, Key) {
    let reply = ask(&tgs_req(tgt, session, now(), true, sname));
    let rep = KdcRep::decode(&reply).unwrap_or_else(|e| panic!("{e}: {:?}", error_code_of(&reply)));
    let part = EncKdcRepPart::decode(&session.decrypt(8, &rep.enc_part.cipher).unwrap()).unwrap();
    let key = Key::new(
        Enctype::from_number(part.key.keytype).unwrap(),
        &part.key.keyvalue,
    )
    .unwrap();
    (rep.ticket, key)
}

/// `ticket` under another (unprotected, outer) service name.
fn renamed(ticket: &Ticket, sname: &[&str]) -> Ticket {
    Ticket::new(
        REALM,
        PrincipalName::new(name_type::NT_SRV_INST, sname),
        ticket.enc_part.clone(),
    )
}

#[test]
fn a_password_change_ticket_renamed_to_krbtgt_is_no_tgt() {
    let (t, s) = ticket_by_as("Administrator", &admin_key(), &["kadmin", "changepw"]);
    let reply = ask(&tgs_req(
        &renamed(&t, &["krbtgt", REALM]),
        &s,
        now(),
        true,
        &LDAP,
    ));
    assert_eq!(error_code_of(&reply), Some(error_code::KDC_ERR_TGT_REVOKED));
}

/// Adds a user with `password` through the directory; its DN.
fn add_user(name: &str, password: &str) -> kauri_db::Dn {
    use kauri_domain::directory::{Caller, Change, Request};
    let w = world();
    let dir = &w.kdc.ctx.dir;
    let dn =
        kauri_db::Dn::parse(&format!("CN={name},CN=Users,DC=samdom,DC=example,DC=com")).unwrap();
    let mut e = kauri_db::Entry::new(dn.clone())
        .with("objectClass", &["user"])
        .with("sAMAccountName", &[name])
        .with("userAccountControl", &["512"]);
    e.push(
        "unicodePwd",
        vec![kauri_domain::password::encode_unicode_pwd(password)],
    );
    let mut tx = dir.db().write().unwrap();
    dir.apply(
        &mut tx,
        &Request {
            caller: Caller::System,
            encrypted: true,
            change: Change::Add(e),
        },
    )
    .unwrap();
    tx.commit().unwrap();
    dir.after_commit().unwrap();
    dn
}

#[test]
fn a_deleted_accounts_tgt_gets_nothing_more() {
    use kauri_domain::directory::{Caller, Change, Request};
    let pw = "Gone.Passw0rd!1";
    let dn = add_user("leaver", pw);
    let key = Key::from_password(Enctype::Aes256Sha1, pw, &format!("{REALM}leaver")).unwrap();
    let (t, s) = ticket_by_as("leaver", &key, &["krbtgt", REALM]);
    let ok = ask(&tgs_req_as("leaver", &t, &s, now(), true, &LDAP));
    assert!(KdcRep::decode(&ok).is_ok(), "{}", error_text(&ok));
    let dir = &world().kdc.ctx.dir;
    let mut tx = dir.db().write().unwrap();
    dir.apply(
        &mut tx,
        &Request {
            caller: Caller::System,
            encrypted: true,
            change: Change::Delete { dn, tree: false },
        },
    )
    .unwrap();
    tx.commit().unwrap();
    dir.after_commit().unwrap();
    let reply = ask(&tgs_req_as("leaver", &t, &s, now(), true, &LDAP));
    assert_eq!(
        error_code_of(&reply),
        Some(error_code::KDC_ERR_CLIENT_REVOKED)
    );
}

/// Sends a kpasswd request (version `version`, `user_data` sealed with a fresh subkey) with
/// `ticket`; the result code, from the KRB-PRIV or the KRB-ERROR.
fn kpasswd(ticket: &Ticket, session: &Key, version: u16, user_data: Vec<u8>) -> u16 {
    use kauri_auth::krb::msg::{
        EncKrbPrivPart, EncryptionKey, HostAddress, KpasswdReply, KpasswdRequest, KpasswdResult,
        KrbPriv,
    };
    use kauri_kdc::Service;
    let subkey = Key::random(Enctype::Aes256Sha1).unwrap();
    let auth = Authenticator {
        crealm: REALM.into(),
        cname: PrincipalName::new(name_type::NT_PRINCIPAL, &["Administrator"]),
        cusec: 0,
        ctime: KerberosTime(now()),
        subkey: Some(EncryptionKey {
            keytype: subkey.etype().number(),
            keyvalue: subkey.bytes().to_vec(),
        }),
        seq_number: Some(1),
        ..Authenticator::default()
    };
    let ap = ApReq {
        ap_options: KerberosFlags(0),
        ticket: ticket.clone(),
        authenticator: EncryptedData {
            etype: session.etype().number(),
            kvno: None,
            cipher: session.encrypt(11, &auth.encode()).unwrap(),
        },
    };
    let part = EncKrbPrivPart {
        user_data,
        seq_number: Some(1),
        s_address: Some(HostAddress {
            addr_type: 2,
            address: vec![127, 0, 0, 1],
        }),
        ..EncKrbPrivPart::default()
    };
    let krb_priv = KrbPriv {
        enc_part: EncryptedData {
            etype: subkey.etype().number(),
            kvno: None,
            cipher: subkey.encrypt(13, &part.encode()).unwrap(),
        },
    };
    let request = KpasswdRequest {
        version,
        ap_req: ap.encode(),
        krb_priv: krb_priv.encode(),
    }
    .encode()
    .unwrap();
    let w = world();
    let service = kauri_kdc::kpasswd::Kpasswd {
        kdc: w.kdc.clone(),
        local: peer(),
        lookaside: kauri_kdc::kdc::Lookaside::default(),
    };
    let reply =
        w.rt.block_on(service.handle(request, peer(), false))
            .unwrap();
    let reply = KpasswdReply::decode(&reply).unwrap();
    let result = if reply.ap_rep.is_empty() {
        KrbError::decode(&reply.body).unwrap().e_data.unwrap()
    } else {
        let p = KrbPriv::decode(&reply.body).unwrap();
        EncKrbPrivPart::decode(&subkey.decrypt(13, &p.enc_part.cipher).unwrap())
            .unwrap()
            .user_data
    };
    KpasswdResult::decode(&result).unwrap().code
}

#[test]
fn kpasswd_sets_ones_own_password_only_with_an_initial_ticket() {
    use kauri_auth::krb::msg::ChangePasswdData;
    let (t, s) = tgt();
    // A password-change ticket from the TGS is not from a logon that proved the password.
    let (cp, cps) = ticket_by_tgs(&t, &s, &["kadmin", "changepw"]);
    let own = ChangePasswdData {
        newpasswd: b"Taken.Over.Passw0rd!".to_vec(),
        targname: None,
        targrealm: None,
    }
    .encode();
    assert_eq!(kpasswd(&cp, &cps, 0xff80, own.clone()), 7);
    assert_eq!(kpasswd(&cp, &cps, 1, b"Taken.Over.Passw0rd!".to_vec()), 7);
    // A TGT renamed to kadmin/changepw is no password-change ticket.
    assert_eq!(
        kpasswd(&renamed(&t, &["kadmin", "changepw"]), &s, 0xff80, own),
        3
    );
    // The password is unchanged: the Administrator still logs on with it.
    assert!(KdcRep::decode(&ask(&as_req(REALM, &admin_key()))).is_ok());
}
