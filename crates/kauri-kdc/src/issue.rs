//! Sealing a ticket: the PAC placed in its authorization data and signed in MS-PAC's
//! order (the ticket signature over the ticket with a one-byte placeholder where the PAC
//! goes, then the full-PAC, server and KDC signatures), and the ticket part encrypted
//! with the service's key.

use kauri_auth::krb::crypto::Key;
use kauri_auth::krb::msg::constants::{ad_type, error_code};
use kauri_auth::krb::msg::{
    AuthorizationData, AuthorizationDataEntry, EncTicketPart, EncryptedData, PrincipalName, Ticket,
};
use kauri_auth::krb::pac::Pac;
use kauri_auth::krb::signer::KeySigner;

use crate::kdc::Refusal;
use crate::keys::LongTermKey;

/// Key usage of a ticket's encrypted part (RFC 4120 §7.5.1).
pub const USAGE_TICKET: u32 = 2;

/// The authorization data that carries `pac_bytes`: AD-IF-RELEVANT holding
/// AD-WIN2K-PAC.
fn pac_ad(pac_bytes: Vec<u8>) -> AuthorizationData {
    let inner = AuthorizationData(vec![AuthorizationDataEntry {
        ad_type: ad_type::AD_WIN2K_PAC,
        ad_data: pac_bytes,
    }]);
    AuthorizationData(vec![AuthorizationDataEntry {
        ad_type: ad_type::AD_IF_RELEVANT,
        ad_data: inner.encode(),
    }])
}

pub use kauri_auth::krb::acceptor::ticket_pac as find_pac;

/// Signs `pac` into `part` and encrypts the ticket for the service. `service_ticket`
/// asks for the ticket and full-PAC signatures (every ticket but those to krbtgt and
/// kadmin/changepw).
pub fn seal_ticket(
    mut part: EncTicketPart,
    pac: Option<Pac>,
    service_key: &LongTermKey,
    krbtgt_key: &Key,
    service_ticket: bool,
    realm: &str,
    sname: &PrincipalName,
) -> Result<Ticket, Refusal> {
    let internal = |e: String| Refusal::new(error_code::KRB_ERR_GENERIC, e);
    if let Some(mut pac) = pac {
        let server = KeySigner(&service_key.key);
        let kdc = KeySigner(krbtgt_key);
        pac.add_signature_placeholders(
            service_key.key.etype().checksum_type(),
            krbtgt_key.etype().checksum_type(),
            service_ticket,
        )
        .map_err(|e| internal(format!("PAC: {e}")))?;
        if service_ticket {
            part.authorization_data = Some(pac_ad(vec![0]));
            let input = part.encode();
            pac.sign(&server, &kdc, Some(&input))
        } else {
            pac.sign(&server, &kdc, None)
        }
        .map_err(|e| internal(format!("signing the PAC: {e}")))?;
        part.authorization_data = Some(pac_ad(pac.encode()));
    }
    let cipher = service_key
        .key
        .encrypt(USAGE_TICKET, &part.encode())
        .map_err(|e| internal(format!("sealing the ticket: {e}")))?;
    Ok(Ticket::new(
        realm,
        sname.clone(),
        EncryptedData {
            etype: service_key.key.etype().number(),
            kvno: Some(service_key.kvno),
            cipher,
        },
    ))
}
