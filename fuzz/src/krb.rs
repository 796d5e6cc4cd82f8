//! What the Kerberos targets share: every nested decode a KDC, a password-change service
//! or a GSS acceptor does on a message, with the property that whatever decodes encodes
//! and decodes again to the same value.
//!
//! Encrypted parts cannot be forged by a fuzzer, so their ciphertext is also decoded as
//! if it were the plaintext (a ticket's `enc-part` as an EncTicketPart, an AP-REQ's
//! authenticator as an Authenticator, and so on): the plaintext decoders see
//! attacker-shaped bytes in the place they would have them after decryption, and a seed
//! can carry a real plaintext there.

use kauri_auth::krb::crypto::{Enctype, Key};
use kauri_auth::krb::msg::constants::{ad_type, padata};
use kauri_auth::krb::msg::gss::CKSUMTYPE_GSSAPI;
use kauri_auth::krb::msg::{
    ApRep, ApReq, Authenticator, AuthorizationData, Checksum, EncApRepPart, EncKdcRepPart,
    EncKrbPrivPart, EncTicketPart, EncryptedData, EtypeInfo, EtypeInfo2, GssChecksum,
    KerbAdRestrictionList, KerbErrorData, KerbPaPacRequest, KrbError, KrbPriv, MethodData, PaData,
    PaEncTsEnc, PaForUser, PaPacOptions, PaSupportedEnctypes, Ticket,
};
use kauri_auth::krb::pac::{
    ClientInfo, KerbValidationInfo, Pac, PacAttributes, PacRequestor, PacSignatureData, TicketKind,
    UpnDnsInfo, LOGON_EXTRA_SIDS, LOGON_RESOURCE_GROUPS, SIGNATURE_BUFFER_TYPES,
};
use kauri_auth::krb::signer::KeySigner;

/// Decodes `$bytes` as `$t`; when that works, checks that the value encodes and decodes
/// back to itself, and gives it.
#[macro_export]
macro_rules! der_roundtrip {
    ($t:ty, $bytes:expr) => {{
        match <$t>::decode($bytes) {
            Ok(v) => {
                let enc = v.encode();
                match <$t>::decode(&enc) {
                    Ok(again) => assert_eq!(
                        again,
                        v,
                        concat!(stringify!($t), " changed through encode and decode")
                    ),
                    Err(e) => panic!(
                        "{} does not decode its own encoding: {e}\n  value: {v:?}\n  encoding: {enc:02x?}",
                        stringify!($t)
                    ),
                }
                Some(v)
            }
            Err(e) => {
                let _ = e.to_string();
                None
            }
        }
    }};
}

/// How deep nested authorization data (AD-IF-RELEVANT in AD-IF-RELEVANT...) is followed.
const AD_DEPTH: usize = 4;

/// A decoded PAC-bearing or not authorization-data list: every element, AD-IF-RELEVANT
/// opened (as the KDC's `find_pac` does), AD-WIN2K-PAC parsed, restrictions decoded.
pub fn authorization_data(ad: &AuthorizationData, depth: usize) {
    let _ = ad.find(ad_type::AD_WIN2K_PAC);
    for e in &ad.0 {
        match e.ad_type {
            ad_type::AD_IF_RELEVANT if depth < AD_DEPTH => {
                if let Some(inner) = der_roundtrip!(AuthorizationData, &e.ad_data) {
                    authorization_data(&inner, depth + 1);
                }
            }
            ad_type::AD_WIN2K_PAC => pac(&e.ad_data),
            ad_type::KERB_AUTH_DATA_TOKEN_RESTRICTIONS => {
                let _ = der_roundtrip!(KerbAdRestrictionList, &e.ad_data);
            }
            _ => {}
        }
    }
}

/// Authorization data as bytes (a ticket's, an authenticator's, a request's
/// enc-authorization-data after decryption).
pub fn authorization_data_bytes(bytes: &[u8]) {
    if let Some(ad) = der_roundtrip!(AuthorizationData, bytes) {
        authorization_data(&ad, 0);
    }
}

/// Fixed keys to verify PAC signatures with: never the right ones, but the checks run.
fn signers() -> [Key; 2] {
    [
        Key::new(Enctype::Aes256Sha1, &[0x5a; 32]).expect("an AES256 key"),
        Key::new(Enctype::Rc4Hmac, &[0xa5; 16]).expect("an RC4 key"),
    ]
}

/// A PAC as a ticket carries it: the container, every buffer getter, every decoder on
/// every buffer, signature verification, and reissuing. A PAC that parses encodes to one
/// that parses to the same buffers.
pub fn pac(bytes: &[u8]) {
    let pac = match Pac::parse(bytes) {
        Ok(p) => p,
        Err(e) => {
            let _ = e.to_string();
            return;
        }
    };
    let _ = pac.received_bytes();
    if let Ok(Some(mut v)) = pac.logon_info() {
        if let Ok(enc) = v.encode() {
            let again = KerbValidationInfo::decode(&enc).expect("KERB_VALIDATION_INFO re-decodes");
            // (encode sets the flags that announce the lists it writes.)
            if !v.extra_sids.is_empty() {
                v.user_flags |= LOGON_EXTRA_SIDS;
            }
            if !v.resource_group_ids.is_empty() {
                v.user_flags |= LOGON_RESOURCE_GROUPS;
            }
            assert_eq!(
                again, v,
                "KERB_VALIDATION_INFO changed through encode and decode"
            );
        }
    }
    if let Ok(Some(v)) = pac.client_info() {
        let _ = v.matches_ticket(0, "alice");
        if let Ok(enc) = v.encode() {
            assert_eq!(
                ClientInfo::decode(&enc).as_ref(),
                Ok(&v),
                "PAC_CLIENT_INFO roundtrip"
            );
        }
    }
    if let Ok(Some(v)) = pac.upn_dns_info() {
        if let Ok(enc) = v.encode() {
            assert_eq!(
                UpnDnsInfo::decode(&enc).as_ref(),
                Ok(&v),
                "UPN_DNS_INFO roundtrip"
            );
        }
    }
    if let Ok(Some(v)) = pac.attributes_info() {
        if let Ok(enc) = v.encode() {
            assert_eq!(
                PacAttributes::decode(&enc),
                Ok(v),
                "PAC_ATTRIBUTES_INFO roundtrip"
            );
        }
    }
    if let Ok(Some(v)) = pac.requestor() {
        if let Ok(enc) = v.encode() {
            assert_eq!(
                PacRequestor::decode(&enc).as_ref(),
                Ok(&v),
                "PAC_REQUESTOR roundtrip"
            );
        }
    }
    for kind in SIGNATURE_BUFFER_TYPES {
        if let Ok(Some(v)) = pac.signature(kind) {
            if let Ok(enc) = v.encode() {
                assert_eq!(
                    PacSignatureData::decode(&enc).as_ref(),
                    Ok(&v),
                    "PAC_SIGNATURE_DATA roundtrip"
                );
            }
        }
    }
    // Every buffer through every decoder, whatever its type says.
    for b in pac.buffers() {
        let d = &b.data;
        let _ = KerbValidationInfo::decode(d);
        let _ = ClientInfo::decode(d);
        let _ = UpnDnsInfo::decode(d);
        let _ = PacAttributes::decode(d);
        let _ = PacRequestor::decode(d);
        let _ = PacSignatureData::decode(d);
    }
    let _ = pac.has_ticket_signature();
    for key in &signers() {
        let s = KeySigner(key);
        let _ = pac.verify(Some(&s), Some(&s), None);
        let _ = pac.verify(Some(&s), Some(&s), Some(b"ticket"));
        let _ = pac.verify(None, Some(&s), None);
        let _ = pac.verify(Some(&s), None, None);
    }
    let enc = pac.encode();
    let again = Pac::parse(&enc).expect("an encoded PAC parses");
    assert_eq!(again.buffers().len(), pac.buffers().len());
    for (a, b) in again.buffers().iter().zip(pac.buffers()) {
        assert_eq!(
            (a.kind, &a.data),
            (b.kind, &b.data),
            "a PAC buffer changed through encode"
        );
    }
    // Signed again with known keys, it verifies with them (as a TGS signs the PAC it
    // copies, and checks it on the next request).
    let [aes, rc4] = signers();
    let (server, kdc) = (KeySigner(&aes), KeySigner(&rc4));
    for ticket_input in [None, Some(&b"ticket"[..])] {
        let mut signed = pac.clone();
        match signed.sign(&server, &kdc, ticket_input) {
            Ok(()) => {
                let again = Pac::parse(&signed.encode()).expect("a signed PAC parses");
                if let Err(e) = again.verify(Some(&server), Some(&kdc), ticket_input) {
                    panic!("a PAC just signed does not verify: {e}");
                }
            }
            Err(e) => {
                let _ = e.to_string();
            }
        }
    }
    for kind in [TicketKind::Tgt, TicketKind::Service] {
        let r = pac.reissue(kind);
        if !r.buffers().is_empty() {
            Pac::parse(&r.encode()).expect("a reissued PAC parses");
        }
    }
}

/// A checksum in an authenticator: the GSS one (0x8003) is decoded, and whatever decodes
/// encodes to the same bytes.
pub fn checksum(c: &Checksum) {
    if c.cksumtype == CKSUMTYPE_GSSAPI {
        gss_checksum(&c.checksum);
    }
}

/// The contents of a 0x8003 checksum.
pub fn gss_checksum(bytes: &[u8]) {
    if let Ok(g) = GssChecksum::decode(bytes) {
        assert_eq!(
            g.encode(),
            bytes,
            "GSS checksum changed through decode and encode"
        );
    }
}

/// An authenticator as the KDC or an acceptor reads it after decryption.
pub fn authenticator(bytes: &[u8]) {
    let Some(a) = der_roundtrip!(Authenticator, bytes) else {
        return;
    };
    let _ = a.cname.to_slash_string();
    if let Some(c) = &a.cksum {
        checksum(c);
    }
    if let Some(ad) = &a.authorization_data {
        authorization_data(ad, 0);
    }
}

/// A ticket's decrypted part.
pub fn enc_ticket_part(bytes: &[u8]) {
    let Some(p) = der_roundtrip!(EncTicketPart, bytes) else {
        return;
    };
    let _ = p.cname.to_slash_string();
    if let Some(ad) = &p.authorization_data {
        authorization_data(ad, 0);
    }
}

/// A ticket: its encrypted part as an EncTicketPart.
pub fn ticket(t: &Ticket) {
    let _ = t.encode_fields();
    let _ = t.sname.to_slash_string();
    enc_ticket_part(&t.enc_part.cipher);
}

/// An AP-REQ: the ticket and the authenticator (its ciphertext read as plaintext).
pub fn ap_req(bytes: &[u8]) -> Option<ApReq> {
    let ap = der_roundtrip!(ApReq, bytes)?;
    ticket(&ap.ticket);
    authenticator(&ap.authenticator.cipher);
    Some(ap)
}

/// An AP-REP and its encrypted part.
pub fn ap_rep(bytes: &[u8]) {
    if let Some(rep) = der_roundtrip!(ApRep, bytes) {
        let _ = der_roundtrip!(EncApRepPart, &rep.enc_part.cipher);
    }
}

/// A KRB-ERROR and the e-data a client reads from it.
pub fn krb_error(bytes: &[u8]) {
    let Some(e) = der_roundtrip!(KrbError, bytes) else {
        return;
    };
    if let Some(Ok(m)) = e.method_data() {
        for pa in &m.0 {
            pa_value(pa);
        }
    }
    if let Some(Ok(d)) = e.kerb_error_data() {
        let _ = d.ext_error();
    }
    if let Some(data) = &e.e_data {
        let _ = der_roundtrip!(KerbErrorData, data);
    }
}

/// A PA-DATA value through the decoder its type selects, then through all the others
/// (cheap, and a fuzzer need not find the type first).
pub fn pa_value(pa: &PaData) {
    let v = &pa.value;
    match pa.padata_type {
        padata::PA_TGS_REQ => {
            let _ = ap_req(v);
        }
        padata::PA_ENC_TIMESTAMP => {
            if let Some(ed) = der_roundtrip!(EncryptedData, v) {
                let _ = der_roundtrip!(PaEncTsEnc, &ed.cipher);
            }
        }
        padata::PA_FOR_USER => {
            if let Some(p) = der_roundtrip!(PaForUser, v) {
                let _ = p.checksum_data();
                let _ = p.user_name.to_slash_string();
            }
        }
        _ => {}
    }
    let _ = der_roundtrip!(EncryptedData, v);
    let _ = der_roundtrip!(PaEncTsEnc, v);
    let _ = der_roundtrip!(KerbPaPacRequest, v);
    let _ = der_roundtrip!(PaPacOptions, v);
    let _ = der_roundtrip!(EtypeInfo2, v);
    let _ = der_roundtrip!(EtypeInfo, v);
    let _ = der_roundtrip!(MethodData, v);
    if let Ok(s) = PaSupportedEnctypes::decode(v) {
        assert_eq!(s.encode(), *v);
    }
    if pa.padata_type != padata::PA_TGS_REQ {
        let _ = ap_req(v);
    }
    if pa.padata_type != padata::PA_FOR_USER {
        if let Some(p) = der_roundtrip!(PaForUser, v) {
            let _ = p.checksum_data();
        }
    }
}

/// A KDC reply's encrypted part (either tag), as a client would read it.
pub fn enc_kdc_rep_part(bytes: &[u8]) {
    if let Some(p) = der_roundtrip!(EncKdcRepPart, bytes) {
        if let Some(pas) = &p.encrypted_pa_data {
            for pa in pas {
                pa_value(pa);
            }
        }
    }
}

/// A KRB-PRIV and its encrypted part; gives the user data.
pub fn krb_priv(bytes: &[u8]) -> Option<Vec<u8>> {
    let p = der_roundtrip!(KrbPriv, bytes)?;
    let part = der_roundtrip!(EncKrbPrivPart, &p.enc_part.cipher)?;
    Some(part.user_data)
}
