//! The password-change service's input (RFC 3244, without the TCP length prefix): the
//! request framing, then its AP-REQ (ticket and authenticator) and KRB-PRIV, whose
//! encrypted part is read as the EncKrbPrivPart it decrypts to, and the user data as
//! ChangePasswdData (version 0xff80) or a bare password (version 1). The same bytes are
//! also read as a reply, as a client reads one: AP-REP or KRB-ERROR, the KRB-PRIV's
//! result and AD's policy blob. Whatever decodes encodes and decodes to itself.

#![no_main]

use kauri_auth::krb::msg::kpasswd::{KPASSWD_VERSION_CHANGE, KPASSWD_VERSION_SET};
use kauri_auth::krb::msg::{
    AdPolicyInfo, ChangePasswdData, KpasswdReply, KpasswdRequest, KpasswdResult,
};
use kauri_fuzz::der_roundtrip;
use kauri_fuzz::krb;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Ok(req) = KpasswdRequest::decode(data) {
        assert_eq!(req.encode().as_deref(), Ok(data), "kpasswd request framing");
        let _ = krb::ap_req(&req.ap_req);
        if let Some(user_data) = krb::krb_priv(&req.krb_priv) {
            match req.version {
                KPASSWD_VERSION_SET => {
                    if let Some(c) = der_roundtrip!(ChangePasswdData, &user_data) {
                        let _ = format!("{c:?}");
                        if let Some(n) = &c.targname {
                            let _ = n.to_slash_string();
                        }
                    }
                }
                KPASSWD_VERSION_CHANGE => {
                    let _ = String::from_utf8_lossy(&user_data);
                }
                _ => {}
            }
        }
    }
    if let Ok(rep) = KpasswdReply::decode(data) {
        assert_eq!(rep.encode().as_deref(), Ok(data), "kpasswd reply framing");
        if !rep.ap_rep.is_empty() {
            krb::ap_rep(&rep.ap_rep);
        }
        if let Some(user_data) = krb::krb_priv(&rep.body) {
            result(&user_data);
        }
        krb::krb_error(&rep.body);
        if let Some(e) = kauri_auth::krb::msg::KrbError::decode(&rep.body)
            .ok()
            .and_then(|e| e.e_data)
        {
            result(&e);
        }
    }
});

/// A result code and string, and AD's policy blob in it.
fn result(bytes: &[u8]) {
    let Ok(r) = KpasswdResult::decode(bytes) else {
        return;
    };
    assert_eq!(r.encode(), bytes, "kpasswd result");
    if let Some(p) = r.ad_policy() {
        assert_eq!(&p.encode()[..], &r.string[..], "AD policy blob");
        assert_eq!(AdPolicyInfo::decode(&p.encode()), Ok(p));
    }
}
