//! Tests against real encodings captured from MIT krb5 1.20 (kinit, kvno,
//! kpasswd, libgssapi_krb5) and produced by impacket. See
//! `testdata/README.md` for how each file was made.

use super::constants::{ad_type, error_code, etype, name_type, padata};
use super::der::{app_tag, ctx_tag, Reader};
use super::gss::{gss_flags, GssChecksum, CKSUMTYPE_GSSAPI, TOK_ID_AP_REP, TOK_ID_AP_REQ};
use super::kpasswd::{result_code, KPASSWD_VERSION_CHANGE, KPASSWD_VERSION_SET};
use super::*;

macro_rules! fx {
    ($name:literal) => {
        include_bytes!(concat!("testdata/", $name)).as_slice()
    };
}

/// Checks that `bytes` decodes and re-encodes to exactly the same bytes.
fn exact<T, D, E>(bytes: &[u8], dec: D, enc: E) -> T
where
    D: Fn(&[u8]) -> Result<T, MsgError>,
    E: Fn(&T) -> Vec<u8>,
{
    let v = match dec(bytes) {
        Ok(v) => v,
        Err(e) => panic!("decode failed: {e}"),
    };
    assert_eq!(enc(&v), bytes, "re-encoding differs");
    v
}

/// Locates the contents of field `[n]` in the SEQUENCE inside an
/// `[APPLICATION app]` element, independently of the decoder under test.
fn field_slice(msg: &[u8], app: u8, n: u8) -> &[u8] {
    let mut r = Reader::new(msg);
    let outer = r.expect(app_tag(app), "t").unwrap();
    let mut r = Reader::new(outer.value);
    let seq = r.read_tlv("t").unwrap();
    let mut r = Reader::new(seq.value);
    while !r.is_empty() {
        let f = r.read_tlv("t").unwrap();
        if f.tag == ctx_tag(n) {
            return f.value;
        }
    }
    panic!("field not found");
}

fn krbtgt() -> PrincipalName {
    PrincipalName::new(name_type::NT_SRV_INST, &["krbtgt", "TEST.REALM"])
}

fn user() -> PrincipalName {
    PrincipalName::new(name_type::NT_PRINCIPAL, &["user"])
}

fn t(s: &str) -> KerberosTime {
    KerberosTime::parse_generalized(s.as_bytes()).unwrap()
}

fn padata_types(p: &Option<Vec<PaData>>) -> Vec<i32> {
    p.as_deref()
        .unwrap_or(&[])
        .iter()
        .map(|p| p.padata_type)
        .collect()
}

#[test]
fn mit_as_req_initial() {
    let bytes = fx!("as_req_initial.der");
    let r = exact(bytes, KdcReq::decode, KdcReq::encode);
    assert_eq!(r.kind, KdcKind::As);
    assert_eq!(
        padata_types(&r.padata),
        vec![padata::PA_AS_FRESHNESS, padata::PA_REQ_ENC_PA_REP]
    );
    let b = &r.req_body;
    // kinit -f -r 1d.
    assert_eq!(
        b.kdc_options.0,
        kdc_options::FORWARDABLE | kdc_options::RENEWABLE
    );
    assert_eq!(b.cname, Some(user()));
    assert_eq!(b.realm, "TEST.REALM");
    assert_eq!(b.sname, Some(krbtgt()));
    assert_eq!(b.from, None);
    assert_eq!(b.till, t("20261127200424Z"));
    assert_eq!(b.rtime, Some(t("20261127200424Z")));
    assert_eq!(b.nonce, 936_029_565);
    assert_eq!(b.etype, vec![18, 17, 20, 19, 16, 23, 25, 26]);
    assert_eq!(b.addresses, None);
    // The kept body is exactly the slice inside [4], and DER re-encoding of
    // the fields reproduces it.
    assert_eq!(b.raw.as_deref(), Some(field_slice(bytes, 10, 4)));
    assert_eq!(b.encode_fields(), field_slice(bytes, 10, 4));
    assert_eq!(application_tag(bytes), Some(10));
    assert!(KdcReq::decode_kind(bytes, KdcKind::Tgs).is_err());
}

#[test]
fn mit_krb_error_preauth_required() {
    let bytes = fx!("krb_error_preauth_required.der");
    let e = exact(bytes, KrbError::decode, KrbError::encode);
    assert_eq!(e.error_code, error_code::KDC_ERR_PREAUTH_REQUIRED);
    assert_eq!(e.stime, t("20261126200424Z"));
    assert_eq!(e.susec, 999_851);
    assert_eq!(e.ctime, None);
    assert_eq!(e.crealm.as_deref(), Some("TEST.REALM"));
    assert_eq!(e.cname, Some(user()));
    assert_eq!(e.sname, krbtgt());
    assert_eq!(e.e_text.as_deref(), Some("NEEDED_PREAUTH"));
    let md = e.method_data().unwrap().unwrap();
    assert_eq!(
        md.0.iter().map(|p| p.padata_type).collect::<Vec<_>>(),
        vec![
            padata::PA_FX_FAST,
            padata::PA_ETYPE_INFO2,
            padata::PA_ENC_TIMESTAMP,
            padata::PA_FX_COOKIE
        ]
    );
    assert_eq!(md.find(padata::PA_FX_COOKIE).unwrap().value, b"MIT");
    let info = EtypeInfo2::decode(&md.find(padata::PA_ETYPE_INFO2).unwrap().value).unwrap();
    assert_eq!(
        info.0,
        vec![EtypeInfo2Entry {
            etype: etype::AES256_CTS_HMAC_SHA1_96,
            salt: Some("TEST.REALMuser".into()),
            s2kparams: None
        }]
    );
    assert_eq!(md.encode(), e.e_data.clone().unwrap());
}

#[test]
fn mit_as_req_with_encrypted_timestamp() {
    let bytes = fx!("as_req_enc_ts.der");
    let r = exact(bytes, KdcReq::decode, KdcReq::encode);
    assert_eq!(
        padata_types(&r.padata),
        vec![
            padata::PA_FX_COOKIE,
            padata::PA_ENC_TIMESTAMP,
            padata::PA_AS_FRESHNESS,
            padata::PA_REQ_ENC_PA_REP
        ]
    );
    let ts = r.find_padata(padata::PA_ENC_TIMESTAMP).unwrap();
    let ed = EncryptedData::decode(&ts.value).unwrap();
    assert_eq!(ed.etype, etype::AES256_CTS_HMAC_SHA1_96);
    assert_eq!(ed.kvno, None);
    assert_eq!(ed.cipher.len(), 56);
    assert_eq!(r.req_body.nonce, 1_111_281_026);
    assert_eq!(r.req_body.raw.as_deref(), Some(field_slice(bytes, 10, 4)));

    // Its plaintext, decrypted with the user's key.
    let p = exact(
        fx!("pa_enc_ts_enc.der"),
        PaEncTsEnc::decode,
        PaEncTsEnc::encode,
    );
    assert_eq!(p.patimestamp, t("20261126200424Z"));
    assert_eq!(p.pausec, Some(999_853));
}

#[test]
fn mit_as_rep_and_its_parts() {
    let bytes = fx!("as_rep.der");
    let rep = exact(bytes, KdcRep::decode, KdcRep::encode);
    assert_eq!(rep.kind, KdcKind::As);
    assert_eq!(rep.crealm, "TEST.REALM");
    assert_eq!(rep.cname, user());
    assert_eq!(padata_types(&rep.padata), vec![padata::PA_ETYPE_INFO2]);
    let tk = &rep.ticket;
    assert_eq!(tk.realm, "TEST.REALM");
    assert_eq!(tk.sname, krbtgt());
    assert_eq!(tk.enc_part.etype, 18);
    assert_eq!(tk.enc_part.kvno, Some(2));
    // Ticket raw bytes are the [5] contents, and re-encoding reproduces them.
    assert_eq!(tk.raw.as_deref(), Some(field_slice(bytes, 11, 5)));
    assert_eq!(tk.encode_fields(), field_slice(bytes, 11, 5));
    assert_eq!(rep.enc_part.kvno, None);

    // MIT seals the AS reply part as EncTGSRepPart [26].
    let part = exact(
        fx!("enc_as_rep_part_mit.der"),
        EncKdcRepPart::decode,
        EncKdcRepPart::encode,
    );
    assert_eq!(part.kind, KdcKind::Tgs);
    assert_eq!(part.nonce, 1_111_281_026);
    assert_eq!(
        part.last_req.0,
        vec![LastReqEntry {
            lr_type: 0,
            lr_value: KerberosTime::NONE
        }]
    );
    assert_eq!(
        part.flags.0,
        ticket_flags::FORWARDABLE
            | ticket_flags::RENEWABLE
            | ticket_flags::INITIAL
            | ticket_flags::PRE_AUTHENT
            | ticket_flags::ENC_PA_REP
    );
    assert_eq!(part.authtime, t("20261126200424Z"));
    assert_eq!(part.starttime, None);
    assert_eq!(part.endtime, t("20261127060424Z"));
    assert_eq!(part.renew_till, Some(t("20261127200424Z")));
    assert_eq!(part.key_expiration, None);
    assert_eq!(part.sname, krbtgt());
    assert_eq!(
        padata_types(&part.encrypted_pa_data),
        vec![padata::PA_REQ_ENC_PA_REP, padata::PA_FX_FAST]
    );
    let ck = Checksum::decode(&part.encrypted_pa_data.as_ref().unwrap()[0].value).unwrap();
    assert_eq!(ck.cksumtype, 16);
    // Re-tagging as EncASRepPart only changes the APPLICATION byte.
    let mut as25 = part.clone();
    as25.kind = KdcKind::As;
    let e25 = as25.encode();
    assert_eq!(e25[0], 0x79);
    assert_eq!(&e25[1..], &fx!("enc_as_rep_part_mit.der")[1..]);

    // The TGT's plaintext, decrypted with the krbtgt key.
    let etp = exact(
        fx!("enc_ticket_part_tgt.der"),
        EncTicketPart::decode,
        EncTicketPart::encode,
    );
    assert_eq!(etp.key, part.key);
    assert_eq!(etp.flags, part.flags);
    assert_eq!(etp.cname, user());
    assert_eq!(
        etp.transited,
        TransitedEncoding {
            tr_type: 1,
            contents: vec![]
        }
    );
    let ad = etp.authorization_data.as_ref().unwrap();
    let relevant = ad.find(ad_type::AD_IF_RELEVANT).unwrap();
    let inner = AdIfRelevant::decode(&relevant.ad_data).unwrap();
    let pac = inner.find(ad_type::AD_WIN2K_PAC).unwrap();
    // PAC header: cBuffers (u32 LE), version 0.
    assert_eq!(&pac.ad_data[4..8], &[0, 0, 0, 0]);
}

#[test]
fn mit_fast_tgs_req() {
    let bytes = fx!("tgs_req_mit_fast.der");
    let r = exact(bytes, KdcReq::decode, KdcReq::encode);
    assert_eq!(r.kind, KdcKind::Tgs);
    assert_eq!(
        padata_types(&r.padata),
        vec![padata::PA_TGS_REQ, padata::PA_FX_FAST]
    );
    assert_eq!(r.req_body.raw.as_deref(), Some(field_slice(bytes, 12, 4)));
    assert_eq!(
        r.req_body.sname,
        Some(PrincipalName::new(1, &["host", "svc.test.realm"]))
    );
    let ap = ApReq::decode(&r.find_padata(padata::PA_TGS_REQ).unwrap().value).unwrap();
    assert_eq!(ap.ap_options, KerberosFlags::EMPTY);
    assert_eq!(ap.ticket.sname, krbtgt());
    assert_eq!(ap.authenticator.etype, 18);
    // The TGS authenticator (decrypted with the TGT session key).
    let a = exact(
        fx!("authenticator_mit_fast_tgs.der"),
        Authenticator::decode,
        Authenticator::encode,
    );
    assert_eq!(a.cksum.as_ref().unwrap().cksumtype, 16);
    assert_eq!(a.cksum.as_ref().unwrap().checksum.len(), 12);
    assert_eq!(a.subkey.as_ref().unwrap().keytype, 18);
    assert_eq!(a.cusec, 8179);
    assert_eq!(a.seq_number, None);
}

#[test]
fn impacket_tgs_req_and_mit_tgs_rep() {
    let bytes = fx!("tgs_req_impacket.der");
    let r = exact(bytes, KdcReq::decode, KdcReq::encode);
    assert_eq!(
        padata_types(&r.padata),
        vec![padata::PA_TGS_REQ, padata::PA_PAC_REQUEST]
    );
    let pac_req =
        KerbPaPacRequest::decode(&r.find_padata(padata::PA_PAC_REQUEST).unwrap().value).unwrap();
    assert!(pac_req.include_pac);
    let b = &r.req_body;
    assert_eq!(
        b.kdc_options.0,
        kdc_options::FORWARDABLE
            | kdc_options::RENEWABLE
            | kdc_options::CANONICALIZE
            | kdc_options::RENEWABLE_OK
    );
    assert_eq!(b.cname, None);
    assert_eq!(b.nonce, 35_461_573);
    assert_eq!(b.etype, vec![18, 17, 23]);
    assert_eq!(b.raw.as_deref(), Some(field_slice(bytes, 12, 4)));
    assert_eq!(b.checksum_bytes(), field_slice(bytes, 12, 4));
    let ap = ApReq::decode(&r.padata.as_ref().unwrap()[0].value).unwrap();
    assert_eq!(ap.ticket.enc_part.kvno, Some(2));
    let a = exact(
        fx!("authenticator_tgs_req.der"),
        Authenticator::decode,
        Authenticator::encode,
    );
    assert_eq!(a.seq_number, Some(12345));
    assert_eq!(a.subkey, None);

    let rep = exact(fx!("tgs_rep.der"), KdcRep::decode, KdcRep::encode);
    assert_eq!(rep.kind, KdcKind::Tgs);
    assert_eq!(rep.padata, None);
    assert_eq!(
        rep.ticket.sname,
        PrincipalName::new(name_type::NT_SRV_INST, &["host", "svc.test.realm"])
    );
    let part = exact(
        fx!("enc_tgs_rep_part.der"),
        EncKdcRepPart::decode,
        EncKdcRepPart::encode,
    );
    assert_eq!(part.kind, KdcKind::Tgs);
    assert_eq!(part.nonce, b.nonce);
    assert_eq!(part.starttime, Some(t("20261126200553Z")));
    assert_eq!(
        part.flags.0,
        ticket_flags::RENEWABLE
            | ticket_flags::PRE_AUTHENT
            | ticket_flags::TRANSITED_POLICY_CHECKED
            | ticket_flags::ENC_PA_REP
    );
    let etp = exact(
        fx!("enc_ticket_part_svc.der"),
        EncTicketPart::decode,
        EncTicketPart::encode,
    );
    assert_eq!(etp.key, part.key);
    assert_eq!(etp.authtime, part.authtime);
}

#[test]
fn mit_krb_error_bad_integrity() {
    let e = exact(
        fx!("krb_error_tgs_bad_integrity.der"),
        KrbError::decode,
        KrbError::encode,
    );
    assert_eq!(e.error_code, error_code::KRB_AP_ERR_BAD_INTEGRITY);
    assert_eq!(e.e_text.as_deref(), Some("PROCESS_TGS"));
    assert_eq!(e.e_data, None);
    assert!(e.method_data().is_none());
    assert_eq!(
        error_code::name(e.error_code),
        Some("KRB_AP_ERR_BAD_INTEGRITY")
    );
}

#[test]
fn mit_kpasswd_change_request_and_soft_error_reply() {
    let bytes = fx!("kpasswd_req_change_mit.bin");
    let req = KpasswdRequest::decode(bytes).unwrap();
    assert_eq!(req.version, KPASSWD_VERSION_CHANGE);
    assert_eq!(req.encode().unwrap(), bytes);
    let ap = exact(&req.ap_req, ApReq::decode, ApReq::encode);
    assert_eq!(
        ap.ticket.sname,
        PrincipalName::new(name_type::NT_PRINCIPAL, &["kadmin", "changepw"])
    );
    let kp = exact(&req.krb_priv, KrbPriv::decode, KrbPriv::encode);
    assert_eq!(kp.enc_part.etype, 18);
    let a = exact(
        fx!("authenticator_kpasswd.der"),
        Authenticator::decode,
        Authenticator::encode,
    );
    assert!(a.subkey.is_some());
    assert_eq!(a.cksum, None);
    // Version 1: the user-data is the bare new password.
    let p = exact(
        fx!("enc_krb_priv_part_chpw.der"),
        EncKrbPrivPart::decode,
        EncKrbPrivPart::encode,
    );
    assert_eq!(p.user_data, b"short");
    assert_eq!(
        p.s_address,
        Some(HostAddress {
            addr_type: 2,
            address: vec![127, 0, 0, 1]
        })
    );
    assert_eq!(p.timestamp, None);

    let bytes = fx!("kpasswd_rep_soft_error_mit.bin");
    let rep = KpasswdReply::decode(bytes).unwrap();
    assert_eq!(rep.version, 1);
    assert_eq!(rep.encode().unwrap(), bytes);
    exact(&rep.ap_rep, ApRep::decode, ApRep::encode);
    exact(&rep.body, KrbPriv::decode, KrbPriv::encode);
    let ep = exact(
        fx!("enc_ap_rep_part.der"),
        EncApRepPart::decode,
        EncApRepPart::encode,
    );
    assert_eq!(ep.ctime, a.ctime);
    assert_eq!(ep.cusec, a.cusec);
    assert_eq!(ep.seq_number, Some(321_559_374));
    let res_part = exact(
        fx!("enc_krb_priv_part_result.der"),
        EncKrbPrivPart::decode,
        EncKrbPrivPart::encode,
    );
    assert_eq!(res_part.seq_number, Some(321_559_374));
    let res = KpasswdResult::decode(&res_part.user_data).unwrap();
    assert_eq!(res.code, result_code::SOFTERROR);
    assert!(res.string.starts_with(b"New password is too short."));
    assert_eq!(res.ad_policy(), None);
    assert_eq!(res.encode(), res_part.user_data);
}

#[test]
fn impacket_set_password_request_and_mit_reply() {
    let bytes = fx!("kpasswd_req_set_impacket.bin");
    let req = KpasswdRequest::decode(bytes).unwrap();
    assert_eq!(req.version, KPASSWD_VERSION_SET);
    assert_eq!(req.encode().unwrap(), bytes);
    exact(&req.ap_req, ApReq::decode, ApReq::encode);
    exact(&req.krb_priv, KrbPriv::decode, KrbPriv::encode);

    let bytes = fx!("kpasswd_rep_access_denied_mit.bin");
    let rep = KpasswdReply::decode(bytes).unwrap();
    assert_eq!(rep.version, 1);
    assert_eq!(rep.encode().unwrap(), bytes);
    exact(&rep.ap_rep, ApRep::decode, ApRep::encode);
    exact(&rep.body, KrbPriv::decode, KrbPriv::encode);

    let c = exact(
        fx!("impacket_change_passwd_data.der"),
        ChangePasswdData::decode,
        ChangePasswdData::encode,
    );
    assert_eq!(c.newpasswd, "N3w-p\u{e4}ssword".as_bytes());
    assert_eq!(c.targname, Some(PrincipalName::new(1, &["alice"])));
    assert_eq!(c.targrealm.as_deref(), Some("EXAMPLE.COM"));
}

#[test]
fn mit_gss_tokens() {
    let bytes = fx!("gss_initial_token_ap_req_mit.bin");
    let tok = exact(bytes, GssKrb5Token::decode, GssKrb5Token::encode);
    assert_eq!(tok.mech, GssMech::Krb5);
    assert_eq!(tok.tok_id, TOK_ID_AP_REQ);
    let ap = ApReq::decode(&tok.message).unwrap();
    assert_eq!(ap.ap_options.0, ap_options::MUTUAL_REQUIRED);
    assert_eq!(
        ap.ticket.sname,
        PrincipalName::new(name_type::NT_SRV_HST, &["host", "svc.test.realm"])
    );
    let a = exact(
        fx!("gss_authenticator_mit.der"),
        Authenticator::decode,
        Authenticator::encode,
    );
    let ck = a.cksum.unwrap();
    assert_eq!(ck.cksumtype, CKSUMTYPE_GSSAPI);
    let g = GssChecksum::decode(&ck.checksum).unwrap();
    assert_eq!(g.bindings, [0u8; 16]);
    assert_eq!(
        g.flags,
        gss_flags::MUTUAL | gss_flags::CONF | gss_flags::INTEG | 0x100
    );
    assert_eq!(g.delegation, None);
    assert_eq!(g.encode(), ck.checksum);
    assert_eq!(a.seq_number, Some(282_498_639));

    let bytes = fx!("gss_token_ap_rep_mit.bin");
    let tok = exact(bytes, GssKrb5Token::decode, GssKrb5Token::encode);
    assert_eq!(tok.tok_id, TOK_ID_AP_REP);
    exact(&tok.message, ApRep::decode, ApRep::encode);
}

#[test]
fn impacket_pa_and_error_payloads() {
    let p = exact(
        fx!("impacket_pa_for_user.der"),
        PaForUser::decode,
        PaForUser::encode,
    );
    assert_eq!(p.user_name, PrincipalName::new(1, &["alice"]));
    assert_eq!(p.user_realm, "EXAMPLE.COM");
    assert_eq!(p.cksum.cksumtype, -138);
    assert_eq!(p.auth_package, "Kerberos");
    // impacket's getST builds the S4U checksum input the same way.
    assert_eq!(
        p.checksum_data(),
        fx!("impacket_pa_for_user_cksum_data.bin")
    );

    let o = exact(
        fx!("impacket_pa_pac_options.der"),
        PaPacOptions::decode,
        PaPacOptions::encode,
    );
    assert_eq!(
        o.flags.0,
        pac_options::CLAIMS | pac_options::RESOURCE_BASED_CONSTRAINED_DELEGATION
    );

    let r = exact(
        fx!("impacket_pa_pac_request_false.der"),
        KerbPaPacRequest::decode,
        KerbPaPacRequest::encode,
    );
    assert!(!r.include_pac);

    let ed = exact(
        fx!("impacket_kerb_error_data.der"),
        KerbErrorData::decode,
        KerbErrorData::encode,
    );
    assert_eq!(ed, KerbErrorData::extended(0xC000_0234));
    assert_eq!(
        ed.ext_error(),
        Some(KerbExtError {
            status: 0xC000_0234,
            reserved: 0,
            flags: 1
        })
    );

    let info = exact(
        fx!("impacket_etype_info2.der"),
        EtypeInfo2::decode,
        EtypeInfo2::encode,
    );
    assert_eq!(info.0[0].s2kparams.as_deref(), Some(&[0, 0, 0x10, 0][..]));
    assert_eq!(info.0[1].salt, None);

    let k = exact(
        fx!("impacket_enc_krb_priv_part.der"),
        EncKrbPrivPart::decode,
        EncKrbPrivPart::encode,
    );
    assert_eq!(k.timestamp, Some(t("20240229235959Z")));
    assert_eq!(k.usec, Some(999_999));
    assert_eq!(k.seq_number, Some(u32::MAX));
    assert_eq!(k.r_address.as_ref().unwrap().addr_type, 20);

    let e = exact(
        fx!("impacket_krb_error_full.der"),
        KrbError::decode,
        KrbError::encode,
    );
    assert_eq!(e.ctime, Some(t("20240101000000Z")));
    assert_eq!(e.cusec, Some(5));
    assert_eq!(e.error_code, error_code::KDC_ERR_CLIENT_REVOKED);
    let ked = e.kerb_error_data().unwrap().unwrap();
    assert_eq!(ked.ext_error().unwrap().status, 0xC000_0234);
}

/// Every prefix of every fixture must fail cleanly (no panic), and so must
/// every single-byte corruption; none may be accepted as the full message
/// except where the schema really allows it.
#[test]
fn truncations_and_corruptions_never_panic() {
    let all: &[&[u8]] = &[
        fx!("as_req_initial.der"),
        fx!("as_req_enc_ts.der"),
        fx!("as_rep.der"),
        fx!("krb_error_preauth_required.der"),
        fx!("tgs_req_mit_fast.der"),
        fx!("tgs_req_impacket.der"),
        fx!("tgs_rep.der"),
        fx!("enc_as_rep_part_mit.der"),
        fx!("enc_ticket_part_tgt.der"),
        fx!("authenticator_mit_fast_tgs.der"),
        fx!("enc_krb_priv_part_result.der"),
        fx!("enc_ap_rep_part.der"),
        fx!("kpasswd_req_change_mit.bin"),
        fx!("kpasswd_rep_soft_error_mit.bin"),
        fx!("gss_initial_token_ap_req_mit.bin"),
        fx!("impacket_pa_for_user.der"),
        fx!("impacket_krb_error_full.der"),
    ];
    for bytes in all {
        for cut in 0..bytes.len() {
            let p = &bytes[..cut];
            assert!(KdcReq::decode(p).is_err());
            assert!(KdcRep::decode(p).is_err());
            assert!(KrbError::decode(p).is_err());
            assert!(EncKdcRepPart::decode(p).is_err());
            assert!(EncTicketPart::decode(p).is_err());
            assert!(Authenticator::decode(p).is_err());
            assert!(EncKrbPrivPart::decode(p).is_err());
            assert!(EncApRepPart::decode(p).is_err());
            assert!(GssKrb5Token::decode(p).is_err());
            assert!(PaForUser::decode(p).is_err());
            let _ = KpasswdRequest::decode(p);
        }
        for i in 0..bytes.len() {
            for v in [0x00u8, 0x01, 0x1f, 0x30, 0x7f, 0x80, 0x84, 0xa0, 0xff] {
                let mut m = bytes.to_vec();
                m[i] = v;
                super::tests::decode_everything(&m);
            }
        }
    }
}
