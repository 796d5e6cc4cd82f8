//! `Ticket` [APPLICATION 1] and its decrypted form `EncTicketPart` [APPLICATION 3].

use super::der::{dec_i64, enc_int, enc_string, Der, Res, SeqDecoder, SeqEncoder, Tlv};
use super::error::MsgError;
use super::flags::KerberosFlags;
use super::time::KerberosTime;
use super::types::{
    dec_addresses, dec_realm, enc_addresses, AuthorizationData, EncryptedData, EncryptionKey,
    HostAddress, PrincipalName, TransitedEncoding,
};

/// Application tag of `Ticket`.
pub const TICKET_TAG: u8 = 1;
/// Application tag of `EncTicketPart`.
pub const ENC_TICKET_PART_TAG: u8 = 3;

/// `Ticket ::= [APPLICATION 1] SEQUENCE { tkt-vno [0] 5, realm [1], sname [2], enc-part [3] }`.
///
/// Decoding keeps the exact bytes received in [`Ticket::raw`], because a
/// ticket is passed along verbatim (into replies, additional-tickets, S4U2Proxy
/// evidence) and its encrypted part is bound to nothing but itself.
/// `encode()` emits `raw` unchanged when it is `Some`; set it to `None` after
/// changing any field (or build tickets with [`Ticket::new`]) to have the
/// fields encoded instead.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Default)]
pub struct Ticket {
    /// Realm of the service (the issuing realm).
    pub realm: String,
    /// Service principal.
    pub sname: PrincipalName,
    /// Encrypted `EncTicketPart`.
    pub enc_part: EncryptedData,
    /// The `[APPLICATION 1]` element exactly as received, if decoded.
    pub raw: Option<Vec<u8>>,
}

impl Ticket {
    /// A ticket built from fields (no raw bytes).
    pub fn new(realm: impl Into<String>, sname: PrincipalName, enc_part: EncryptedData) -> Self {
        Ticket {
            realm: realm.into(),
            sname,
            enc_part,
            raw: None,
        }
    }

    /// Encodes the fields, ignoring `raw`.
    pub fn encode_fields(&self) -> Vec<u8> {
        SeqEncoder::new()
            .field(0, &enc_int(5))
            .field(1, &enc_string(&self.realm))
            .field(2, &self.sname.to_der())
            .field(3, &self.enc_part.to_der())
            .finish_app(TICKET_TAG)
    }
}

/// Checks a version field that must be 5.
pub(super) fn dec_vno(t: Tlv<'_>, what: &'static str) -> Res<()> {
    let v = dec_i64(t, what)?;
    if v != 5 {
        return Err(MsgError::BadVersion { what, version: v });
    }
    Ok(())
}

impl Der for Ticket {
    fn to_der(&self) -> Vec<u8> {
        match &self.raw {
            Some(r) => r.clone(),
            None => self.encode_fields(),
        }
    }
    fn from_tlv(t: Tlv<'_>, _what: &'static str) -> Res<Self> {
        let raw = t.raw.to_vec();
        let mut s = SeqDecoder::new_app(t, TICKET_TAG, "Ticket")?;
        s.req(0, "tkt-vno", dec_vno)?;
        let realm = s.req(1, "realm", dec_realm)?;
        let sname = s.req(2, "sname", PrincipalName::from_tlv)?;
        let enc_part = s.req(3, "enc-part", EncryptedData::from_tlv)?;
        s.finish()?;
        Ok(Ticket {
            realm,
            sname,
            enc_part,
            raw: Some(raw),
        })
    }
}
der_codec!(Ticket, "Ticket");

/// `EncTicketPart ::= [APPLICATION 3] SEQUENCE { ... }` (RFC 4120 §5.3).
///
/// What the KDC seals into a ticket with the service key, and what an
/// acceptor (or the TGS, for a TGT) reads after decrypting `Ticket.enc_part`.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Default)]
pub struct EncTicketPart {
    /// `[0]` TicketFlags.
    pub flags: KerberosFlags,
    /// `[1]` session key.
    pub key: EncryptionKey,
    /// `[2]` client realm.
    pub crealm: String,
    /// `[3]` client name.
    pub cname: PrincipalName,
    /// `[4]` transited realms.
    pub transited: TransitedEncoding,
    /// `[5]` time of initial authentication.
    pub authtime: KerberosTime,
    /// `[6]` start time, if different from authtime.
    pub starttime: Option<KerberosTime>,
    /// `[7]` expiry.
    pub endtime: KerberosTime,
    /// `[8]` renewal limit.
    pub renew_till: Option<KerberosTime>,
    /// `[9]` client addresses (HostAddresses).
    pub caddr: Option<Vec<HostAddress>>,
    /// `[10]` authorization data (the PAC lives here inside AD-IF-RELEVANT).
    pub authorization_data: Option<AuthorizationData>,
}

impl Der for EncTicketPart {
    fn to_der(&self) -> Vec<u8> {
        SeqEncoder::new()
            .field(0, &self.flags.to_der())
            .field(1, &self.key.to_der())
            .field(2, &enc_string(&self.crealm))
            .field(3, &self.cname.to_der())
            .field(4, &self.transited.to_der())
            .field(5, &self.authtime.encode())
            .opt(6, self.starttime.map(|t| t.encode()))
            .field(7, &self.endtime.encode())
            .opt(8, self.renew_till.map(|t| t.encode()))
            .opt(9, self.caddr.as_deref().map(enc_addresses))
            .opt(10, self.authorization_data.as_ref().map(Der::to_der))
            .finish_app(ENC_TICKET_PART_TAG)
    }
    fn from_tlv(t: Tlv<'_>, _what: &'static str) -> Res<Self> {
        let mut s = SeqDecoder::new_app(t, ENC_TICKET_PART_TAG, "EncTicketPart")?;
        let v = EncTicketPart {
            flags: s.req(0, "flags", KerberosFlags::from_tlv)?,
            key: s.req(1, "key", EncryptionKey::from_tlv)?,
            crealm: s.req(2, "crealm", dec_realm)?,
            cname: s.req(3, "cname", PrincipalName::from_tlv)?,
            transited: s.req(4, "transited", TransitedEncoding::from_tlv)?,
            authtime: s.req(5, "authtime", KerberosTime::from_tlv)?,
            starttime: s.opt(6, "starttime", KerberosTime::from_tlv)?,
            endtime: s.req(7, "endtime", KerberosTime::from_tlv)?,
            renew_till: s.opt(8, "renew-till", KerberosTime::from_tlv)?,
            caddr: s.opt(9, "caddr", dec_addresses)?,
            authorization_data: s.opt(10, "authorization-data", AuthorizationData::from_tlv)?,
        };
        s.finish()?;
        Ok(v)
    }
}
der_codec!(EncTicketPart, "EncTicketPart");
