//! The Kerberos exchanges a replayed client makes: an AS exchange with encrypted-timestamp
//! pre-authentication for a TGT, and a TGS exchange for a service ticket, over TCP as
//! Windows clients send them. Enough of a client to load a KDC the way logons do; the
//! tickets are checked only as far as decrypting the reply.

use std::time::{SystemTime, UNIX_EPOCH};

use kauri_auth::krb::crypto::{Enctype, Key};
use kauri_auth::krb::msg::constants::{name_type, padata};
use kauri_auth::krb::msg::{
    kdc_options, ApReq, Authenticator, Checksum, EncKdcRepPart, EncryptedData, KdcKind, KdcRep,
    KdcReq, KdcReqBody, KerberosFlags, KerberosTime, KrbError, PaData, PaEncTsEnc, PrincipalName,
    Ticket,
};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

use super::outcome::Failure;

/// The largest reply accepted (a TGS reply with a large PAC stays far below it).
const MAX_REPLY: usize = 1 << 20;

/// A ticket and the session key that goes with it.
#[derive(Clone)]
pub struct Credential {
    /// The ticket.
    pub ticket: Ticket,
    /// Its session key.
    pub session: Key,
}

fn now() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_secs() as i64)
        .unwrap_or(0)
}

fn nonce() -> u32 {
    let mut b = [0u8; 4];
    let _ = getrandom::fill(&mut b);
    u32::from_le_bytes(b) & 0x7fff_ffff
}

/// The long-term AES256 key of `user` in `realm` (salt: realm and account name, as AD
/// salts user principals).
pub fn user_key(realm: &str, user: &str, password: &str) -> Result<Key, Failure> {
    Key::from_password(Enctype::Aes256Sha1, password, &format!("{realm}{user}"))
        .map_err(|e| Failure::new(format!("key derivation: {e}")))
}

/// Sends one request to the KDC over TCP and returns the reply's bytes.
async fn exchange(kdc: &str, request: &[u8]) -> Result<Vec<u8>, Failure> {
    let mut s = TcpStream::connect(kdc).await.map_err(Failure::io)?;
    let _ = s.set_nodelay(true);
    let mut framed = Vec::with_capacity(request.len() + 4);
    framed.extend_from_slice(&(request.len() as u32).to_be_bytes());
    framed.extend_from_slice(request);
    s.write_all(&framed).await.map_err(Failure::io)?;
    let mut len = [0u8; 4];
    s.read_exact(&mut len).await.map_err(Failure::io)?;
    let n = u32::from_be_bytes(len) as usize;
    if n > MAX_REPLY {
        return Err(Failure::new("oversized KDC reply".into()));
    }
    let mut reply = vec![0u8; n];
    s.read_exact(&mut reply).await.map_err(Failure::io)?;
    Ok(reply)
}

/// A KRB-ERROR reply as a failure named by its code.
fn refusal(reply: &[u8]) -> Failure {
    match KrbError::decode(reply) {
        Ok(e) => Failure::new(format!("KRB-ERROR {}", e.error_code)),
        Err(_) => Failure::new("undecodable KDC reply".into()),
    }
}

fn session_of(rep: &KdcRep, key: &Key, usage: u32) -> Result<Credential, Failure> {
    let plain = key
        .decrypt(usage, &rep.enc_part.cipher)
        .map_err(|_| Failure::new("KDC reply not decryptable".into()))?;
    let part = EncKdcRepPart::decode(&plain)
        .map_err(|_| Failure::new("KDC reply part undecodable".into()))?;
    let etype = Enctype::from_number(part.key.keytype)
        .ok_or_else(|| Failure::new("unknown session key type".into()))?;
    let session =
        Key::new(etype, &part.key.keyvalue).map_err(|_| Failure::new("bad session key".into()))?;
    Ok(Credential {
        ticket: rep.ticket.clone(),
        session,
    })
}

/// An AS exchange for `user`'s TGT with encrypted-timestamp pre-authentication.
pub async fn as_exchange(
    kdc: &str,
    realm: &str,
    user: &str,
    key: &Key,
) -> Result<Credential, Failure> {
    let ts = PaEncTsEnc {
        patimestamp: KerberosTime(now()),
        pausec: Some(0),
    };
    let cipher = key
        .encrypt(1, &ts.encode())
        .map_err(|e| Failure::new(format!("encrypting the timestamp: {e}")))?;
    let enc = EncryptedData {
        etype: key.etype().number(),
        kvno: None,
        cipher,
    };
    let req = KdcReq {
        kind: KdcKind::As,
        padata: Some(vec![PaData::new(padata::PA_ENC_TIMESTAMP, enc.encode())]),
        req_body: KdcReqBody {
            kdc_options: KerberosFlags(kdc_options::FORWARDABLE | kdc_options::RENEWABLE),
            cname: Some(PrincipalName::new(name_type::NT_PRINCIPAL, &[user])),
            realm: realm.into(),
            sname: Some(PrincipalName::new(
                name_type::NT_SRV_INST,
                &["krbtgt", realm],
            )),
            till: KerberosTime(now() + 36_000),
            rtime: Some(KerberosTime(now() + 604_800)),
            nonce: nonce(),
            etype: vec![18, 17, 23],
            ..KdcReqBody::default()
        },
    }
    .encode();
    let reply = exchange(kdc, &req).await?;
    match KdcRep::decode(&reply) {
        Ok(rep) => session_of(&rep, key, 3),
        Err(_) => Err(refusal(&reply)),
    }
}

/// A TGS exchange for a ticket to `service` (`["ldap", "dc1.example.com"]`).
pub async fn tgs_exchange(
    kdc: &str,
    realm: &str,
    user: &str,
    tgt: &Credential,
    service: &[&str],
) -> Result<Credential, Failure> {
    let body = KdcReqBody {
        kdc_options: KerberosFlags(kdc_options::FORWARDABLE | kdc_options::CANONICALIZE),
        realm: realm.into(),
        sname: Some(PrincipalName::new(name_type::NT_SRV_INST, service)),
        till: KerberosTime(now() + 36_000),
        nonce: nonce(),
        etype: vec![18, 17, 23],
        ..KdcReqBody::default()
    };
    let checksum = tgt
        .session
        .checksum(6, &body.encode())
        .map_err(|e| Failure::new(format!("checksum: {e}")))?;
    let auth = Authenticator {
        crealm: realm.into(),
        cname: PrincipalName::new(name_type::NT_PRINCIPAL, &[user]),
        cksum: Some(Checksum {
            cksumtype: tgt.session.etype().checksum_type(),
            checksum,
        }),
        cusec: 0,
        ctime: KerberosTime(now()),
        ..Authenticator::default()
    };
    let cipher = tgt
        .session
        .encrypt(7, &auth.encode())
        .map_err(|e| Failure::new(format!("encrypting the authenticator: {e}")))?;
    let ap = ApReq {
        ap_options: KerberosFlags(0),
        ticket: tgt.ticket.clone(),
        authenticator: EncryptedData {
            etype: tgt.session.etype().number(),
            kvno: None,
            cipher,
        },
    };
    let req = KdcReq {
        kind: KdcKind::Tgs,
        padata: Some(vec![PaData::new(padata::PA_TGS_REQ, ap.encode())]),
        req_body: body,
    }
    .encode();
    let reply = exchange(kdc, &req).await?;
    match KdcRep::decode(&reply) {
        Ok(rep) => session_of(&rep, &tgt.session, 8),
        Err(_) => Err(refusal(&reply)),
    }
}
