//! A client's first GSS-API token as an LDAP SASL bind brings it (GSSAPI, or GSS-SPNEGO
//! carrying Kerberos): the InitialContextToken framing (either mechanism OID), the
//! AP-REQ, AP-REP or KRB-ERROR inside with their nested parts, the authenticator and
//! its 0x8003 checksum; SPNEGO's NegTokenInit (`spnego::kerberos_init`, and the NTLMSSP
//! acceptor); and the Kerberos acceptor (`acceptor::accept`) twice: on the token as it
//! is, and on the token sealed for real — the ticket's and the authenticator's
//! ciphertexts are read as their plaintexts (as a seed carries them), the PAC in the
//! ticket signed again, then encrypted under the service's key and the ticket's session
//! key, so the fuzzer drives every check after decryption. A context accepted that way
//! answers with an AP-REP that opens with the session key, and reads the input as a Wrap
//! and a MIC token. A token that decodes encodes and decodes to itself.

#![no_main]

use kauri_auth::error::AuthError;
use kauri_auth::krb::acceptor::{accept, ticket_pac};
use kauri_auth::krb::crypto::{Enctype, Key};
use kauri_auth::krb::msg::constants::ad_type;
use kauri_auth::krb::msg::gss::{TOK_ID_AP_REP, TOK_ID_AP_REQ, TOK_ID_KRB_ERROR};
use kauri_auth::krb::msg::{
    ApRep, ApReq, Authenticator, AuthorizationData, EncApRepPart, EncTicketPart, EncryptedData,
    GssKrb5Token, Ticket,
};
use kauri_auth::krb::pac::Pac;
use kauri_auth::krb::replay::ReplayCache;
use kauri_auth::krb::signer::KeySigner;
use kauri_auth::spnego::{kerberos_init, SpnegoServer};
use kauri_fuzz::{krb, names, settings};
use libfuzzer_sys::fuzz_target;

/// The service's key (the DC's own, for a bind) and the krbtgt key that signs PACs.
const SERVICE_KEY: [u8; 32] = [0x42; 32];
const KDC_KEY: [u8; 32] = [0x24; 32];

const USAGE_TICKET: u32 = 2;
const USAGE_AP_REQ_AUTH: u32 = 11;
const USAGE_AP_REP: u32 = 12;
const SKEW: i64 = 300;

fn service_key() -> Key {
    Key::new(Enctype::Aes256Sha1, &SERVICE_KEY).expect("a key")
}

fn lookup(_t: &Ticket) -> Result<Key, AuthError> {
    Ok(service_key())
}

/// The decoders on a GSS token, then the acceptor on it as it is and sealed for real.
fn token(data: &[u8], depth: usize) {
    if let Some(init) = kerberos_init(data) {
        let _ = (init.first_choice, &init.mech, &init.mech_list, &init.mic);
        if depth == 0 {
            token(&init.token, 1);
        }
    }
    let Ok(t) = GssKrb5Token::decode(data) else {
        // The checksum contents and an authenticator straight from the input.
        krb::gss_checksum(data);
        krb::authenticator(data);
        return;
    };
    assert_eq!(
        GssKrb5Token::decode(&t.encode()).as_ref(),
        Ok(&t),
        "GSS token changed through encode and decode"
    );
    let _ = t.mech.oid();
    match t.tok_id {
        TOK_ID_AP_REQ => {
            if let Some(ap) = krb::ap_req(&t.message) {
                let _ = accept(data, &lookup, 0, SKEW, &ReplayCache::default());
                sealed(&t, ap);
            }
        }
        TOK_ID_AP_REP => krb::ap_rep(&t.message),
        TOK_ID_KRB_ERROR => krb::krb_error(&t.message),
        other => panic!("a token with TOK_ID {other:#06x} decoded"),
    }
}

/// Signs the first PAC of the ticket's authorization data again, with the service's key
/// (and the KDC's), so that the acceptor's check of the server signature passes.
fn resign(part: &mut EncTicketPart) {
    let Some(pac) = ticket_pac(part) else {
        return;
    };
    let Ok(mut pac) = Pac::parse(&pac) else {
        return;
    };
    let (service, kdc) = (
        service_key(),
        Key::new(Enctype::Aes256Sha1, &KDC_KEY).expect("a key"),
    );
    if pac
        .sign(&KeySigner(&service), &KeySigner(&kdc), None)
        .is_err()
    {
        return;
    }
    let signed = pac.encode();
    let Some(ad) = &mut part.authorization_data else {
        return;
    };
    for e in &mut ad.0 {
        if e.ad_type != ad_type::AD_IF_RELEVANT {
            continue;
        }
        let Ok(mut inner) = AuthorizationData::decode(&e.ad_data) else {
            continue;
        };
        if let Some(p) = inner
            .0
            .iter_mut()
            .find(|p| p.ad_type == ad_type::AD_WIN2K_PAC)
        {
            p.ad_data = signed;
            e.ad_data = inner.encode();
            return;
        }
    }
}

/// The AP-REQ of `t` with its plaintexts encrypted as a KDC and a client would have.
fn sealed(t: &GssKrb5Token, ap: ApReq) {
    let Ok(mut part) = EncTicketPart::decode(&ap.ticket.enc_part.cipher) else {
        return;
    };
    let Some(session) =
        Enctype::from_number(part.key.keytype).and_then(|e| Key::new(e, &part.key.keyvalue).ok())
    else {
        return;
    };
    resign(&mut part);
    let service = service_key();
    let mut ticket = ap.ticket.clone();
    ticket.raw = None;
    ticket.enc_part = EncryptedData {
        etype: service.etype().number(),
        kvno: ap.ticket.enc_part.kvno,
        cipher: service
            .encrypt(USAGE_TICKET, &part.encode())
            .expect("encrypting"),
    };
    let auth_plain = &ap.authenticator.cipher;
    let auth = Authenticator::decode(auth_plain).ok();
    let now = auth.as_ref().map_or(part.authtime.0, |a| a.ctime.0);
    let ap2 = ApReq {
        ap_options: ap.ap_options,
        ticket,
        authenticator: EncryptedData {
            etype: session.etype().number(),
            kvno: None,
            cipher: session
                .encrypt(USAGE_AP_REQ_AUTH, auth_plain)
                .expect("encrypting"),
        },
    };
    let mut t2 = GssKrb5Token::new(TOK_ID_AP_REQ, ap2.encode());
    t2.mech = t.mech;
    let bytes = t2.encode();
    let accepted = match accept(&bytes, &lookup, now, SKEW, &ReplayCache::default()) {
        Ok(a) => a,
        Err(e) => {
            let _ = e.to_string();
            return;
        }
    };
    let auth = auth.expect("an accepted authenticator decodes");
    assert_eq!(accepted.client, part.cname);
    assert_eq!(accepted.authtime, part.authtime.0);
    assert_eq!(accepted.pac.is_some(), ticket_pac(&part).is_some());
    if let Some(reply) = &accepted.reply {
        let t = GssKrb5Token::decode(reply).expect("the AP-REP token decodes");
        assert_eq!(t.tok_id, TOK_ID_AP_REP);
        let rep = ApRep::decode(&t.message).expect("the AP-REP decodes");
        let plain = session
            .decrypt(USAGE_AP_REP, &rep.enc_part.cipher)
            .expect("the AP-REP opens with the session key");
        let rep = EncApRepPart::decode(&plain).expect("EncAPRepPart");
        assert_eq!((rep.ctime, rep.cusec), (auth.ctime, auth.cusec));
    }
    let mut context = accepted.context;
    let _ = context.unwrap(t2.message.as_slice());
    let _ = context.verify_mic(&bytes, &t2.message);
}

fuzz_target!(|data: &[u8]| {
    token(data, 0);
    if let Ok(mut server) = SpnegoServer::new(names(), settings(false)) {
        if let Err(e) = server.step(data) {
            let _ = e.to_string();
        }
    }
});
