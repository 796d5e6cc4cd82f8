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

/// DER: a tag and its content with a definite length.
fn der(tag: u8, content: &[u8]) -> Vec<u8> {
    let mut out = vec![tag];
    let n = content.len();
    if n < 0x80 {
        out.push(n as u8);
    } else {
        let bytes = n.to_be_bytes();
        let skip = bytes.iter().take_while(|b| **b == 0).count();
        out.push(0x80 | (bytes.len() - skip) as u8);
        out.extend_from_slice(&bytes[skip..]);
    }
    out.extend_from_slice(content);
    out
}

/// The SPNEGO OID (1.3.6.1.5.5.2) and Kerberos V5's (1.2.840.113554.1.2.2), as DER.
const OID_SPNEGO: &[u8] = &[0x2b, 0x06, 0x01, 0x05, 0x05, 0x02];
const OID_KRB5: &[u8] = &[0x2a, 0x86, 0x48, 0x86, 0xf7, 0x12, 0x01, 0x02, 0x02];

/// The first (and only) token of a GSS-SPNEGO bind with Kerberos, as Windows sends it:
/// a NegTokenInit offering Kerberos with an AP-REQ for `service` (mutual authentication,
/// neither signing nor sealing asked for, so the connection stays plain after the bind).
pub fn spnego_kerberos_token(
    realm: &str,
    user: &str,
    service: &Credential,
) -> Result<Vec<u8>, Failure> {
    use kauri_auth::krb::msg::constants::cksumtype;
    use kauri_auth::krb::msg::gss::{gss_flags, GssChecksum, TOK_ID_AP_REQ};
    use kauri_auth::krb::msg::{ap_options, GssKrb5Token};
    let flags = GssChecksum {
        flags: gss_flags::MUTUAL,
        ..GssChecksum::default()
    };
    let auth = Authenticator {
        crealm: realm.into(),
        cname: PrincipalName::new(name_type::NT_PRINCIPAL, &[user]),
        cksum: Some(Checksum {
            cksumtype: cksumtype::GSSAPI,
            checksum: flags.encode(),
        }),
        cusec: 0,
        ctime: KerberosTime(now()),
        seq_number: Some(nonce()),
        ..Authenticator::default()
    };
    let cipher = service
        .session
        .encrypt(11, &auth.encode())
        .map_err(|e| Failure::new(format!("encrypting the authenticator: {e}")))?;
    let ap = ApReq {
        ap_options: KerberosFlags(ap_options::MUTUAL_REQUIRED),
        ticket: service.ticket.clone(),
        authenticator: EncryptedData {
            etype: service.session.etype().number(),
            kvno: None,
            cipher,
        },
    };
    let gss = GssKrb5Token::new(TOK_ID_AP_REQ, ap.encode()).encode();
    // NegTokenInit ::= SEQUENCE { mechTypes [0] MechTypeList, mechToken [2] OCTET STRING }
    let mech_types = der(0xa0, &der(0x30, &der(0x06, OID_KRB5)));
    let mech_token = der(0xa2, &der(0x04, &gss));
    let init = der(0xa0, &der(0x30, &[mech_types, mech_token].concat()));
    Ok(der(0x60, &[der(0x06, OID_SPNEGO), init].concat()))
}

#[cfg(test)]
mod tests {
    use super::der;

    #[test]
    fn der_lengths() {
        assert_eq!(der(0x04, &[1, 2]), vec![0x04, 2, 1, 2]);
        let long = der(0x04, &[0u8; 300]);
        assert_eq!(&long[..4], &[0x04, 0x82, 0x01, 0x2c]);
        assert_eq!(long.len(), 304);
    }
}
