//! A KDC request as it arrives on the wire (UDP, or a TCP record without its length):
//! dispatch on the APPLICATION tag, AS-REQ or TGS-REQ, then every nested decode the KDC
//! does on it — each PA-DATA value (PA-TGS-REQ's AP-REQ with its ticket and
//! authenticator, PA-ENC-TIMESTAMP, PA-PAC-REQUEST, PA-FOR-USER...), the encrypted
//! parts read as their plaintexts (EncTicketPart, Authenticator, the request's
//! authorization data), and the PAC inside a ticket with every buffer getter. An input
//! that is no KDC-REQ goes straight to those inner decoders. Whatever decodes encodes and
//! decodes to itself.

#![no_main]

use kauri_auth::krb::msg::constants::padata;
use kauri_auth::krb::msg::{application_tag, KdcKind, KdcReq, KdcReqBody, PaData};
use kauri_fuzz::der_roundtrip;
use kauri_fuzz::krb;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let kind = match application_tag(data) {
        Some(10) => Some(KdcKind::As),
        Some(12) => Some(KdcKind::Tgs),
        _ => None,
    };
    let Some(req) = der_roundtrip!(KdcReq, data) else {
        if let Some(kind) = kind {
            assert!(KdcReq::decode_kind(data, kind).is_err());
        }
        // What the KDC decodes after decrypting, straight from the input: the
        // plaintexts of a ticket and an authenticator, authorization data, a PAC, and
        // the PA-DATA values.
        krb::authenticator(data);
        krb::enc_ticket_part(data);
        krb::authorization_data_bytes(data);
        krb::pac(data);
        krb::pa_value(&PaData::new(padata::PA_ENC_TIMESTAMP, data.to_vec()));
        return;
    };
    // Only the two request tags decode, each to its own kind.
    assert_eq!(Some(req.kind), kind, "a KDC-REQ under another tag");
    let other = match req.kind {
        KdcKind::As => KdcKind::Tgs,
        KdcKind::Tgs => KdcKind::As,
    };
    assert_eq!(KdcReq::decode_kind(data, req.kind).as_ref(), Ok(&req));
    assert!(KdcReq::decode_kind(data, other).is_err());

    let body = &req.req_body;
    // The bytes the TGS authenticator's checksum covers are the body as received.
    let sum = body.checksum_bytes();
    if let Some(raw) = &body.raw {
        assert_eq!(&sum, raw);
    }
    let _ = der_roundtrip!(KdcReqBody, &sum);
    let _ = body.encode_fields();
    if let Some(n) = &body.cname {
        let _ = n.to_slash_string();
    }
    if let Some(n) = &body.sname {
        let _ = n.to_slash_string();
    }
    if let Some(ed) = &body.enc_authorization_data {
        krb::authorization_data_bytes(&ed.cipher);
    }
    for t in body.additional_tickets.iter().flatten() {
        krb::ticket(t);
    }
    for pa in req.padata.iter().flatten() {
        let _ = req.find_padata(pa.padata_type);
        krb::pa_value(pa);
    }
});
