//! Accepting a Kerberos GSS-API context (RFC 4121 §4, RFC 4120 §3.2.3): the client's
//! AP-REQ in its InitialContextToken is checked against the service's key — ticket,
//! times, authenticator, replay, the 0x8003 checksum with the GSS flags — its PAC's
//! server signature verified, and the AP-REP that proves the server to the client made.

use super::context::GssContext;
use super::crypto::{Enctype, Key};
use super::msg::constants::ad_type;
use super::msg::gss::{CKSUMTYPE_GSSAPI, TOK_ID_AP_REP, TOK_ID_AP_REQ};
use super::msg::{
    ap_options, ApRep, ApReq, Authenticator, AuthorizationData, EncApRepPart, EncTicketPart,
    EncryptedData, GssChecksum, GssKrb5Token, PrincipalName, Ticket,
};
use super::pac::Pac;
use super::replay::{digest, ReplayCache};
use super::signer::KeySigner;
use crate::error::AuthError;

/// Key usages (RFC 4120 §7.5.1).
const USAGE_TICKET: u32 = 2;
const USAGE_AP_REQ_AUTHENTICATOR: u32 = 11;
const USAGE_AP_REP: u32 = 12;

const WHAT: &str = "Kerberos AP-REQ";

/// A context the acceptor agreed to.
#[derive(Debug)]
pub struct Accepted {
    /// The client principal.
    pub client: PrincipalName,
    /// The client's realm.
    pub crealm: String,
    /// The ticket's authtime (Unix seconds).
    pub authtime: i64,
    /// The ticket's PAC, its server signature verified.
    pub pac: Option<Pac>,
    /// The GSS flags the client asked for (integrity, confidentiality, mutual…).
    pub gss_flags: u32,
    /// The context, for the messages that follow.
    pub context: GssContext,
    /// The AP-REP token to send back (mutual authentication), GSS-framed.
    pub reply: Option<Vec<u8>>,
}

/// The PAC in a ticket's authorization data (AD-IF-RELEVANT → AD-WIN2K-PAC), if any.
pub fn ticket_pac(part: &EncTicketPart) -> Option<Vec<u8>> {
    let ad = part.authorization_data.as_ref()?;
    ad.0.iter()
        .filter(|e| e.ad_type == ad_type::AD_IF_RELEVANT)
        .filter_map(|e| AuthorizationData::decode(&e.ad_data).ok())
        .find_map(|inner| inner.find(ad_type::AD_WIN2K_PAC).map(|p| p.ad_data.clone()))
}

fn bad(why: &str) -> AuthError {
    AuthError::LogonFailure(why.to_string())
}

/// Accepts a client's initial token. `service_key` gives the key the ticket was sealed
/// with (by its service name, encryption type and key version) or says why there is none.
pub fn accept(
    token: &[u8],
    service_key: &dyn Fn(&Ticket) -> Result<Key, AuthError>,
    now: i64,
    skew: i64,
    replay: &ReplayCache,
) -> Result<Accepted, AuthError> {
    let gss = GssKrb5Token::decode(token).map_err(|e| AuthError::malformed(WHAT, e.to_string()))?;
    if gss.tok_id != TOK_ID_AP_REQ {
        return Err(AuthError::malformed(WHAT, "not an AP-REQ token"));
    }
    let ap = ApReq::decode(&gss.message).map_err(|e| AuthError::malformed(WHAT, e.to_string()))?;
    let key = service_key(&ap.ticket)?;
    let plain = key
        .decrypt(USAGE_TICKET, &ap.ticket.enc_part.cipher)
        .map_err(|_| bad("the ticket does not decrypt with this service's key"))?;
    let part = EncTicketPart::decode(&plain).map_err(|_| bad("the ticket does not decode"))?;
    if part.endtime.0 < now - skew {
        return Err(bad("the ticket has expired"));
    }
    if part.starttime.unwrap_or(part.authtime).0 > now + skew {
        return Err(bad("the ticket is not yet valid"));
    }
    let session = super::key_of(&part.key).ok_or_else(|| bad("the session key is unusable"))?;
    let auth_plain = session
        .decrypt(USAGE_AP_REQ_AUTHENTICATOR, &ap.authenticator.cipher)
        .map_err(|_| bad("the authenticator does not decrypt"))?;
    let auth =
        Authenticator::decode(&auth_plain).map_err(|_| bad("the authenticator does not decode"))?;
    let same = auth.cname.components.len() == part.cname.components.len()
        && auth
            .cname
            .components
            .iter()
            .zip(&part.cname.components)
            .all(|(a, b)| a.eq_ignore_ascii_case(b))
        && auth.crealm.eq_ignore_ascii_case(&part.crealm);
    if !same {
        return Err(bad("the authenticator is not the ticket's client"));
    }
    if (auth.ctime.0 - now).abs() > skew {
        return Err(bad("clock skew too great"));
    }
    if !replay.insert(digest(&ap.authenticator.cipher), auth.ctime.0 + skew, now) {
        return Err(bad("the authenticator was replayed"));
    }
    let gss_flags = match &auth.cksum {
        Some(c) if c.cksumtype == CKSUMTYPE_GSSAPI => {
            GssChecksum::decode(&c.checksum)
                .map_err(|e| AuthError::malformed(WHAT, e.to_string()))?
                .flags
        }
        _ => 0,
    };
    let pac = match ticket_pac(&part) {
        Some(bytes) => {
            let pac = Pac::parse(&bytes).map_err(|e| bad(&format!("the PAC: {e}")))?;
            pac.verify(Some(&KeySigner(&key)), None, None)
                .map_err(|e| bad(&format!("the PAC: {e}")))?;
            if let Ok(Some(info)) = pac.client_info() {
                let name = part.cname.components.join("/");
                if !info.matches_ticket(part.authtime.0, &name) {
                    return Err(bad("the PAC is not the ticket's"));
                }
            }
            Some(pac)
        }
        None => None,
    };
    let ctx_key = match &auth.subkey {
        Some(k) => super::key_of(k).ok_or_else(|| bad("the subkey is unusable"))?,
        None => session.clone(),
    };
    if ctx_key.etype() == Enctype::Rc4Hmac {
        return Err(AuthError::Unsupported(
            "GSS contexts with RC4 keys are not supported; use AES".into(),
        ));
    }
    let mut our_seq = [0u8; 4];
    getrandom::fill(&mut our_seq).map_err(|e| AuthError::Unsupported(e.to_string()))?;
    let our_seq = u32::from_be_bytes(our_seq) & 0x3fff_ffff;
    let mutual = ap.ap_options.contains(ap_options::MUTUAL_REQUIRED)
        || gss_flags & super::msg::gss::gss_flags::MUTUAL != 0;
    let reply = if mutual {
        let rep = EncApRepPart {
            ctime: auth.ctime,
            cusec: auth.cusec,
            subkey: None,
            seq_number: Some(our_seq),
        };
        let cipher = session
            .encrypt(USAGE_AP_REP, &rep.encode())
            .map_err(|e| AuthError::Unsupported(e.to_string()))?;
        let ap_rep = ApRep {
            enc_part: EncryptedData {
                etype: session.etype().number(),
                kvno: None,
                cipher,
            },
        };
        let mut t = GssKrb5Token::new(TOK_ID_AP_REP, ap_rep.encode());
        t.mech = gss.mech;
        Some(t.encode())
    } else {
        None
    };
    Ok(Accepted {
        client: part.cname.clone(),
        crealm: part.crealm.clone(),
        authtime: part.authtime.0,
        pac,
        gss_flags,
        context: GssContext::new(
            ctx_key,
            u64::from(our_seq),
            u64::from(auth.seq_number.unwrap_or(0)),
        ),
        reply,
    })
}
