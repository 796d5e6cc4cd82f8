//! One LDAP message (a whole PDU, as the framing hands it over): the envelope, every
//! operation, controls and the binary filter inside a search. Whatever decodes must
//! encode and decode again to the same message, and every control and extended value
//! Kauri understands must survive its own round trip too.

#![no_main]

use kauri_ldap_proto::controls::{
    self, Asq, AsqResponse, ControlValue, ExtendedDn, Known, PagedResults, PasswordModifyRequest,
    PasswordModifyResponse, SdFlags, SearchOptions, SortRequest, SortResult, VlvRequest,
    VlvResponse,
};
use kauri_ldap_proto::decode::decode_message;
use kauri_ldap_proto::encode::encode_message;
use kauri_ldap_proto::{Control, ProtocolOp};
use libfuzzer_sys::fuzz_target;

fn again<T: ControlValue + PartialEq + std::fmt::Debug>(v: &T) {
    let back = T::decode_value(v.encode_value().as_deref()).expect("re-encoded value decodes");
    assert_eq!(&back, v);
}

fn control(c: &Control) {
    // Every typed decoder gets every value, whatever its OID says.
    let value = c.value.as_deref();
    let _ = PagedResults::decode_value(value).map(|v| again(&v));
    let _ = SortRequest::decode_value(value).map(|v| again(&v));
    let _ = SortResult::decode_value(value).map(|v| again(&v));
    let _ = VlvRequest::decode_value(value).map(|v| again(&v));
    let _ = VlvResponse::decode_value(value).map(|v| again(&v));
    let _ = ExtendedDn::decode_value(value).map(|v| again(&v));
    let _ = SearchOptions::decode_value(value).map(|v| again(&v));
    let _ = SdFlags::decode_value(value).map(|v| again(&v));
    let _ = Asq::decode_value(value).map(|v| again(&v));
    let _ = AsqResponse::decode_value(value).map(|v| again(&v));
    if let Ok(Known::Unknown) = controls::decode_known(c) {
        assert!(!controls::KNOWN_CONTROLS.contains(&c.oid.as_str()));
    }
}

fn password_modify(value: Option<&[u8]>) {
    if let Ok(r) = PasswordModifyRequest::decode(value) {
        let back = PasswordModifyRequest::decode(Some(&r.encode())).expect("request decodes");
        assert_eq!(back, r);
    }
    if let Ok(r) = PasswordModifyResponse::decode(value) {
        let back = PasswordModifyResponse::decode(r.encode().as_deref()).expect("response");
        assert_eq!(back, r);
    }
}

fuzz_target!(|data: &[u8]| {
    let msg = match decode_message(data) {
        Ok(m) => m,
        Err(e) => {
            // What the server answers with must be printable.
            let _ = e.to_string();
            return;
        }
    };
    for c in &msg.controls {
        control(c);
    }
    match &msg.op {
        ProtocolOp::ExtendedRequest(e) => password_modify(e.value.as_deref()),
        ProtocolOp::ExtendedResponse(e) => password_modify(e.value.as_deref()),
        ProtocolOp::SearchRequest(s) => {
            let _ = s.filter.to_string();
            assert!(s.filter.depth() <= kauri_db::filter::MAX_FILTER_DEPTH);
        }
        _ => {}
    }
    let bytes = encode_message(&msg);
    let back = decode_message(&bytes).expect("a re-encoded message decodes");
    assert_eq!(back, msg);
    assert_eq!(encode_message(&back), bytes, "encoding is deterministic");
});
