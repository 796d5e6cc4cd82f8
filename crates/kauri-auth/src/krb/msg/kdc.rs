//! The KDC exchanges: AS-REQ/TGS-REQ (KDC-REQ), AS-REP/TGS-REP (KDC-REP) and
//! the reply's encrypted part EncASRepPart/EncTGSRepPart (RFC 4120 §5.4).

use super::der::{
    app_tag, dec_i32, dec_i64, dec_seq_of, dec_u32, enc_int, enc_seq_of, enc_string, Der, Res,
    SeqDecoder, SeqEncoder, Tlv,
};
use super::error::MsgError;
use super::flags::KerberosFlags;
use super::ticket::{dec_vno, Ticket};
use super::time::KerberosTime;
use super::types::{
    dec_addresses, dec_padata_list, dec_realm, enc_addresses, enc_padata_list, EncryptedData,
    EncryptionKey, HostAddress, LastReq, PaData, PrincipalName,
};

/// Which KDC exchange a message belongs to.
///
/// Selects the APPLICATION tag and msg-type: AS-REQ 10 / TGS-REQ 12,
/// AS-REP 11 / TGS-REP 13, EncASRepPart 25 / EncTGSRepPart 26.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum KdcKind {
    /// Authentication Service exchange (initial tickets).
    As,
    /// Ticket-Granting Service exchange.
    Tgs,
}

impl KdcKind {
    /// msg-type (and APPLICATION tag) of the request: 10 or 12.
    pub fn req_msg_type(self) -> u8 {
        match self {
            KdcKind::As => 10,
            KdcKind::Tgs => 12,
        }
    }
    /// msg-type (and APPLICATION tag) of the reply: 11 or 13.
    pub fn rep_msg_type(self) -> u8 {
        match self {
            KdcKind::As => 11,
            KdcKind::Tgs => 13,
        }
    }
    /// APPLICATION tag of the reply's encrypted part: 25 or 26.
    pub fn enc_part_tag(self) -> u8 {
        match self {
            KdcKind::As => 25,
            KdcKind::Tgs => 26,
        }
    }
}

/// Reads the outer APPLICATION tag and maps it to a [`KdcKind`].
fn kind_from_tag(t: &Tlv<'_>, as_tag: u8, tgs_tag: u8, what: &'static str) -> Res<KdcKind> {
    if t.tag == app_tag(as_tag) {
        Ok(KdcKind::As)
    } else if t.tag == app_tag(tgs_tag) {
        Ok(KdcKind::Tgs)
    } else {
        Err(MsgError::UnexpectedTag {
            what,
            expected: app_tag(as_tag),
            found: t.tag,
        })
    }
}

/// Reads a msg-type field and checks it against the expected value.
pub(super) fn check_msg_type(t: Tlv<'_>, what: &'static str, expected: u8) -> Res<()> {
    let v = dec_i64(t, what)?;
    if v != i64::from(expected) {
        return Err(MsgError::WrongMessageType {
            what,
            expected: expected.into(),
            found: v,
        });
    }
    Ok(())
}

/// `KDC-REQ-BODY` (RFC 4120 §5.4.1).
///
/// When decoded, [`KdcReqBody::raw`] holds the exact DER of the body as
/// received (the SEQUENCE inside `[4]`, without the context tag): the TGS
/// authenticator checksum and the PA-FOR-USER/FAST checksums are computed
/// over those bytes, not over a re-encoding. `encode()` emits `raw` unchanged
/// when it is `Some`; set it to `None` after changing fields.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Default)]
pub struct KdcReqBody {
    /// `[0]` KDCOptions (see [`super::flags::kdc_options`]).
    pub kdc_options: KerberosFlags,
    /// `[1]` client name (AS-REQ only).
    pub cname: Option<PrincipalName>,
    /// `[2]` realm: the client's realm in AS-REQ, the server's in TGS-REQ.
    pub realm: String,
    /// `[3]` server name (absent only with enc-tkt-in-skey U2U requests).
    pub sname: Option<PrincipalName>,
    /// `[4]` requested start time (postdating).
    pub from: Option<KerberosTime>,
    /// `[5]` requested end time; MIT may send 19700101000000Z for "no limit",
    /// Windows 20370913024805Z.
    pub till: KerberosTime,
    /// `[6]` requested renew-till.
    pub rtime: Option<KerberosTime>,
    /// `[7]` nonce. Negative INTEGERs down to -2^31 are accepted on decode and
    /// mapped to their two's complement, since some peers treat it as Int32.
    pub nonce: u32,
    /// `[8]` encryption types in client preference order.
    pub etype: Vec<i32>,
    /// `[9]` client addresses.
    pub addresses: Option<Vec<HostAddress>>,
    /// `[10]` encrypted AuthorizationData (TGS-REQ).
    pub enc_authorization_data: Option<EncryptedData>,
    /// `[11]` additional tickets (U2U, S4U2Proxy evidence ticket).
    pub additional_tickets: Option<Vec<Ticket>>,
    /// The body exactly as received, if decoded.
    pub raw: Option<Vec<u8>>,
}

impl KdcReqBody {
    /// Encodes the fields, ignoring `raw`.
    pub fn encode_fields(&self) -> Vec<u8> {
        SeqEncoder::new()
            .field(0, &self.kdc_options.to_der())
            .opt(1, self.cname.as_ref().map(Der::to_der))
            .field(2, &enc_string(&self.realm))
            .opt(3, self.sname.as_ref().map(Der::to_der))
            .opt(4, self.from.map(|t| t.encode()))
            .field(5, &self.till.encode())
            .opt(6, self.rtime.map(|t| t.encode()))
            .field(7, &enc_nonce(self.nonce))
            .field(
                8,
                &enc_seq_of(self.etype.iter().map(|e| enc_int((*e).into()))),
            )
            .opt(9, self.addresses.as_deref().map(enc_addresses))
            .opt(10, self.enc_authorization_data.as_ref().map(Der::to_der))
            .opt(
                11,
                self.additional_tickets
                    .as_ref()
                    .map(|v| enc_seq_of(v.iter().map(Der::to_der))),
            )
            .finish()
    }

    /// The bytes a req-body checksum covers: `raw` if decoded, else the
    /// encoding of the fields.
    pub fn checksum_bytes(&self) -> Vec<u8> {
        self.to_der()
    }
}

impl Der for KdcReqBody {
    fn to_der(&self) -> Vec<u8> {
        match &self.raw {
            Some(r) => r.clone(),
            None => self.encode_fields(),
        }
    }
    fn from_tlv(t: Tlv<'_>, _what: &'static str) -> Res<Self> {
        let raw = t.raw.to_vec();
        let mut s = SeqDecoder::new(t, "KDC-REQ-BODY")?;
        let v = KdcReqBody {
            kdc_options: s.req(0, "kdc-options", KerberosFlags::from_tlv)?,
            cname: s.opt(1, "cname", PrincipalName::from_tlv)?,
            realm: s.req(2, "realm", dec_realm)?,
            sname: s.opt(3, "sname", PrincipalName::from_tlv)?,
            from: s.opt(4, "from", KerberosTime::from_tlv)?,
            till: s.req(5, "till", KerberosTime::from_tlv)?,
            rtime: s.opt(6, "rtime", KerberosTime::from_tlv)?,
            nonce: s.req(7, "nonce", dec_u32)?,
            etype: s.req(8, "etype", |t, w| dec_seq_of(t, w, |e| dec_i32(e, w)))?,
            addresses: s.opt(9, "addresses", dec_addresses)?,
            enc_authorization_data: s.opt(10, "enc-authorization-data", EncryptedData::from_tlv)?,
            additional_tickets: s.opt(11, "additional-tickets", |t, w| {
                dec_seq_of(t, w, |e| Ticket::from_tlv(e, w))
            })?,
            raw: Some(raw),
        };
        s.finish()?;
        Ok(v)
    }
}
der_codec!(KdcReqBody, "KDC-REQ-BODY");

/// `AS-REQ ::= [APPLICATION 10] KDC-REQ`, `TGS-REQ ::= [APPLICATION 12] KDC-REQ`.
///
/// `KDC-REQ ::= SEQUENCE { pvno [1] 5, msg-type [2], padata [3] OPTIONAL, req-body [4] }`.
/// pvno must be 5 and msg-type must match the APPLICATION tag.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct KdcReq {
    /// AS or TGS.
    pub kind: KdcKind,
    /// `[3]` pre-authentication data (`None` = field absent).
    pub padata: Option<Vec<PaData>>,
    /// `[4]` request body, with its raw bytes when decoded.
    pub req_body: KdcReqBody,
}

impl KdcReq {
    /// Decodes a KDC-REQ that must be of the given kind.
    pub fn decode_kind(bytes: &[u8], kind: KdcKind) -> Result<Self, MsgError> {
        let r = Self::decode(bytes)?;
        if r.kind != kind {
            return Err(MsgError::WrongMessageType {
                what: "KDC-REQ",
                expected: kind.req_msg_type().into(),
                found: r.kind.req_msg_type().into(),
            });
        }
        Ok(r)
    }

    /// The first PA-DATA of type `padata_type`.
    pub fn find_padata(&self, padata_type: i32) -> Option<&PaData> {
        self.padata
            .as_deref()
            .and_then(|p| PaData::find(p, padata_type))
    }
}

impl Der for KdcReq {
    fn to_der(&self) -> Vec<u8> {
        SeqEncoder::new()
            .field(1, &enc_int(5))
            .field(2, &enc_int(self.kind.req_msg_type().into()))
            .opt(3, self.padata.as_deref().map(enc_padata_list))
            .field(4, &self.req_body.to_der())
            .finish_app(self.kind.req_msg_type())
    }
    fn from_tlv(t: Tlv<'_>, _what: &'static str) -> Res<Self> {
        let kind = kind_from_tag(&t, 10, 12, "KDC-REQ")?;
        let mut s = SeqDecoder::new_app(t, kind.req_msg_type(), "KDC-REQ")?;
        s.req(1, "pvno", dec_vno)?;
        s.req(2, "msg-type", |t, w| {
            check_msg_type(t, w, kind.req_msg_type())
        })?;
        let padata = s.opt(3, "padata", dec_padata_list)?;
        let req_body = s.req(4, "req-body", KdcReqBody::from_tlv)?;
        s.finish()?;
        Ok(KdcReq {
            kind,
            padata,
            req_body,
        })
    }
}
der_codec!(KdcReq, "KDC-REQ");

/// `AS-REP ::= [APPLICATION 11] KDC-REP`, `TGS-REP ::= [APPLICATION 13] KDC-REP`.
///
/// `KDC-REP ::= SEQUENCE { pvno [0] 5, msg-type [1], padata [2] OPTIONAL,
/// crealm [3], cname [4], ticket [5], enc-part [6] }`.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct KdcRep {
    /// AS or TGS.
    pub kind: KdcKind,
    /// `[2]` PA-DATA (e.g. PA-ETYPE-INFO2 in an AS-REP).
    pub padata: Option<Vec<PaData>>,
    /// `[3]` client realm.
    pub crealm: String,
    /// `[4]` client name.
    pub cname: PrincipalName,
    /// `[5]` the issued ticket.
    pub ticket: Ticket,
    /// `[6]` encrypted EncASRepPart / EncTGSRepPart.
    pub enc_part: EncryptedData,
}

impl Der for KdcRep {
    fn to_der(&self) -> Vec<u8> {
        SeqEncoder::new()
            .field(0, &enc_int(5))
            .field(1, &enc_int(self.kind.rep_msg_type().into()))
            .opt(2, self.padata.as_deref().map(enc_padata_list))
            .field(3, &enc_string(&self.crealm))
            .field(4, &self.cname.to_der())
            .field(5, &self.ticket.to_der())
            .field(6, &self.enc_part.to_der())
            .finish_app(self.kind.rep_msg_type())
    }
    fn from_tlv(t: Tlv<'_>, _what: &'static str) -> Res<Self> {
        let kind = kind_from_tag(&t, 11, 13, "KDC-REP")?;
        let mut s = SeqDecoder::new_app(t, kind.rep_msg_type(), "KDC-REP")?;
        s.req(0, "pvno", dec_vno)?;
        s.req(1, "msg-type", |t, w| {
            check_msg_type(t, w, kind.rep_msg_type())
        })?;
        let v = KdcRep {
            kind,
            padata: s.opt(2, "padata", dec_padata_list)?,
            crealm: s.req(3, "crealm", dec_realm)?,
            cname: s.req(4, "cname", PrincipalName::from_tlv)?,
            ticket: s.req(5, "ticket", Ticket::from_tlv)?,
            enc_part: s.req(6, "enc-part", EncryptedData::from_tlv)?,
        };
        s.finish()?;
        Ok(v)
    }
}
der_codec!(KdcRep, "KDC-REP");

/// `EncASRepPart ::= [APPLICATION 25] EncKDCRepPart`,
/// `EncTGSRepPart ::= [APPLICATION 26] EncKDCRepPart` (RFC 4120 §5.4.2).
///
/// The reply's secret half: session key, nonce echo, ticket times. `kind`
/// records the APPLICATION tag; MIT's KDC uses 26 (EncTGSRepPart) in AS-REPs
/// too, and clients generally accept either. Windows uses 25 for AS-REP, and
/// some clients (e.g. impacket) accept only 25 there.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct EncKdcRepPart {
    /// Which APPLICATION tag (25 = As, 26 = Tgs) wraps the part.
    pub kind: KdcKind,
    /// `[0]` session key.
    pub key: EncryptionKey,
    /// `[1]` last-request information.
    pub last_req: LastReq,
    /// `[2]` the request's nonce.
    pub nonce: u32,
    /// `[3]` when the client's key (password) expires.
    pub key_expiration: Option<KerberosTime>,
    /// `[4]` TicketFlags of the issued ticket.
    pub flags: KerberosFlags,
    /// `[5]` authtime.
    pub authtime: KerberosTime,
    /// `[6]` starttime.
    pub starttime: Option<KerberosTime>,
    /// `[7]` endtime.
    pub endtime: KerberosTime,
    /// `[8]` renew-till.
    pub renew_till: Option<KerberosTime>,
    /// `[9]` server realm.
    pub srealm: String,
    /// `[10]` server name.
    pub sname: PrincipalName,
    /// `[11]` client addresses.
    pub caddr: Option<Vec<HostAddress>>,
    /// `[12]` encrypted-pa-data (RFC 6806; PA-REQ-ENC-PA-REP answers,
    /// PA-SUPPORTED-ENCTYPES from Windows).
    pub encrypted_pa_data: Option<Vec<PaData>>,
}

impl Der for EncKdcRepPart {
    fn to_der(&self) -> Vec<u8> {
        SeqEncoder::new()
            .field(0, &self.key.to_der())
            .field(1, &self.last_req.to_der())
            .field(2, &enc_nonce(self.nonce))
            .opt(3, self.key_expiration.map(|t| t.encode()))
            .field(4, &self.flags.to_der())
            .field(5, &self.authtime.encode())
            .opt(6, self.starttime.map(|t| t.encode()))
            .field(7, &self.endtime.encode())
            .opt(8, self.renew_till.map(|t| t.encode()))
            .field(9, &enc_string(&self.srealm))
            .field(10, &self.sname.to_der())
            .opt(11, self.caddr.as_deref().map(enc_addresses))
            .opt(12, self.encrypted_pa_data.as_deref().map(enc_padata_list))
            .finish_app(self.kind.enc_part_tag())
    }
    fn from_tlv(t: Tlv<'_>, _what: &'static str) -> Res<Self> {
        let kind = kind_from_tag(&t, 25, 26, "EncKDCRepPart")?;
        let mut s = SeqDecoder::new_app(t, kind.enc_part_tag(), "EncKDCRepPart")?;
        let v = EncKdcRepPart {
            kind,
            key: s.req(0, "key", EncryptionKey::from_tlv)?,
            last_req: s.req(1, "last-req", LastReq::from_tlv)?,
            nonce: s.req(2, "nonce", dec_u32)?,
            key_expiration: s.opt(3, "key-expiration", KerberosTime::from_tlv)?,
            flags: s.req(4, "flags", KerberosFlags::from_tlv)?,
            authtime: s.req(5, "authtime", KerberosTime::from_tlv)?,
            starttime: s.opt(6, "starttime", KerberosTime::from_tlv)?,
            endtime: s.req(7, "endtime", KerberosTime::from_tlv)?,
            renew_till: s.opt(8, "renew-till", KerberosTime::from_tlv)?,
            srealm: s.req(9, "srealm", dec_realm)?,
            sname: s.req(10, "sname", PrincipalName::from_tlv)?,
            caddr: s.opt(11, "caddr", dec_addresses)?,
            encrypted_pa_data: s.opt(12, "encrypted-pa-data", dec_padata_list)?,
        };
        s.finish()?;
        Ok(v)
    }
}
der_codec!(EncKdcRepPart, "EncKDCRepPart");

/// The APPLICATION tag number of a DER message, e.g. 10 for AS-REQ, 12 for
/// TGS-REQ, 30 for KRB-ERROR; `None` if the first byte is not a constructed
/// APPLICATION tag. Lets a server dispatch before decoding.
pub fn application_tag(bytes: &[u8]) -> Option<u8> {
    match bytes.first() {
        Some(b) if b & 0xe0 == 0x60 && b & 0x1f != 0x1f => Some(b & 0x1f),
        _ => None,
    }
}

/// A nonce as MIT and Heimdal declare it, a signed 32-bit INTEGER: values from 2^31 are
/// written negative (their two's complement), so a client that sent a negative nonce
/// finds the same one echoed — Heimdal refuses a reply whose nonce does not fit an Int32.
fn enc_nonce(n: u32) -> Vec<u8> {
    enc_int(i64::from(n as i32))
}

#[cfg(test)]
mod nonce_tests {
    use super::*;

    #[test]
    fn nonces_from_two_to_the_31_are_written_as_negative_int32() {
        let body = KdcReqBody {
            nonce: 0xdead_beef,
            ..KdcReqBody::default()
        };
        let again = KdcReqBody::decode(&body.encode()).unwrap();
        assert_eq!(again.nonce, 0xdead_beef);
        // Four content bytes, the sign bit set: an Int32.
        let n = enc_nonce(0xdead_beef);
        assert_eq!(n, vec![0x02, 0x04, 0xde, 0xad, 0xbe, 0xef]);
        assert_eq!(enc_nonce(5), vec![0x02, 0x01, 0x05]);
    }
}
