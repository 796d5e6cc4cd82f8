//! The client/server exchange: AP-REQ (APPLICATION 14), Authenticator (2),
//! AP-REP (15) and EncAPRepPart (27) (RFC 4120 §5.5). Used inside PA-TGS-REQ, kpasswd and
//! GSS-API/SPNEGO.

use super::der::{dec_u32, dec_usec, enc_int, enc_string, Der, Res, SeqDecoder, SeqEncoder, Tlv};
use super::flags::KerberosFlags;
use super::kdc::check_msg_type;
use super::ticket::{dec_vno, Ticket};
use super::time::KerberosTime;
use super::types::{
    dec_realm, AuthorizationData, Checksum, EncryptedData, EncryptionKey, PrincipalName,
};

/// APPLICATION tag and msg-type of AP-REQ.
pub const AP_REQ_TAG: u8 = 14;
/// APPLICATION tag and msg-type of AP-REP.
pub const AP_REP_TAG: u8 = 15;
/// APPLICATION tag of Authenticator.
pub const AUTHENTICATOR_TAG: u8 = 2;
/// APPLICATION tag of EncAPRepPart.
pub const ENC_AP_REP_PART_TAG: u8 = 27;

/// `AP-REQ ::= [APPLICATION 14] SEQUENCE { pvno [0] 5, msg-type [1] 14,
/// ap-options [2] APOptions, ticket [3] Ticket, authenticator [4] EncryptedData }`.
///
/// Presents a ticket plus a fresh authenticator to a service (or to the TGS
/// inside PA-TGS-REQ). The ticket keeps its raw bytes when decoded.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Default)]
pub struct ApReq {
    /// `[2]` APOptions (see [`super::flags::ap_options`]).
    pub ap_options: KerberosFlags,
    /// `[3]` the service ticket.
    pub ticket: Ticket,
    /// `[4]` encrypted Authenticator.
    pub authenticator: EncryptedData,
}

impl Der for ApReq {
    fn to_der(&self) -> Vec<u8> {
        SeqEncoder::new()
            .field(0, &enc_int(5))
            .field(1, &enc_int(AP_REQ_TAG.into()))
            .field(2, &self.ap_options.to_der())
            .field(3, &self.ticket.to_der())
            .field(4, &self.authenticator.to_der())
            .finish_app(AP_REQ_TAG)
    }
    fn from_tlv(t: Tlv<'_>, _what: &'static str) -> Res<Self> {
        let mut s = SeqDecoder::new_app(t, AP_REQ_TAG, "AP-REQ")?;
        s.req(0, "pvno", dec_vno)?;
        s.req(1, "msg-type", |t, w| check_msg_type(t, w, AP_REQ_TAG))?;
        let v = ApReq {
            ap_options: s.req(2, "ap-options", KerberosFlags::from_tlv)?,
            ticket: s.req(3, "ticket", Ticket::from_tlv)?,
            authenticator: s.req(4, "authenticator", EncryptedData::from_tlv)?,
        };
        s.finish()?;
        Ok(v)
    }
}
der_codec!(ApReq, "AP-REQ");

/// `Authenticator ::= [APPLICATION 2] SEQUENCE { authenticator-vno [0] 5,
/// crealm [1], cname [2], cksum [3] OPTIONAL, cusec [4], ctime [5],
/// subkey [6] OPTIONAL, seq-number [7] OPTIONAL, authorization-data [8] OPTIONAL }`.
///
/// Proves the client holds the session key right now. In a TGS-REQ, `cksum`
/// covers the raw req-body bytes; in GSS-API it is the 0x8003 checksum
/// (see [`super::gss::GssChecksum`]).
#[derive(Debug, Clone, PartialEq, Eq, Hash, Default)]
pub struct Authenticator {
    /// `[1]` client realm.
    pub crealm: String,
    /// `[2]` client name.
    pub cname: PrincipalName,
    /// `[3]` checksum.
    pub cksum: Option<Checksum>,
    /// `[4]` microseconds of ctime.
    pub cusec: u32,
    /// `[5]` client time.
    pub ctime: KerberosTime,
    /// `[6]` sub-session key.
    pub subkey: Option<EncryptionKey>,
    /// `[7]` initial sequence number (negative wire values accepted).
    pub seq_number: Option<u32>,
    /// `[8]` authorization data (e.g. AD-IF-RELEVANT with KERB-AD-RESTRICTION-ENTRY).
    pub authorization_data: Option<AuthorizationData>,
}

impl Der for Authenticator {
    fn to_der(&self) -> Vec<u8> {
        SeqEncoder::new()
            .field(0, &enc_int(5))
            .field(1, &enc_string(&self.crealm))
            .field(2, &self.cname.to_der())
            .opt(3, self.cksum.as_ref().map(Der::to_der))
            .field(4, &enc_int(self.cusec.into()))
            .field(5, &self.ctime.encode())
            .opt(6, self.subkey.as_ref().map(Der::to_der))
            .opt(7, self.seq_number.map(|n| enc_int(n.into())))
            .opt(8, self.authorization_data.as_ref().map(Der::to_der))
            .finish_app(AUTHENTICATOR_TAG)
    }
    fn from_tlv(t: Tlv<'_>, _what: &'static str) -> Res<Self> {
        let mut s = SeqDecoder::new_app(t, AUTHENTICATOR_TAG, "Authenticator")?;
        s.req(0, "authenticator-vno", dec_vno)?;
        let v = Authenticator {
            crealm: s.req(1, "crealm", dec_realm)?,
            cname: s.req(2, "cname", PrincipalName::from_tlv)?,
            cksum: s.opt(3, "cksum", Checksum::from_tlv)?,
            cusec: s.req(4, "cusec", dec_usec)?,
            ctime: s.req(5, "ctime", KerberosTime::from_tlv)?,
            subkey: s.opt(6, "subkey", EncryptionKey::from_tlv)?,
            seq_number: s.opt(7, "seq-number", dec_u32)?,
            authorization_data: s.opt(8, "authorization-data", AuthorizationData::from_tlv)?,
        };
        s.finish()?;
        Ok(v)
    }
}
der_codec!(Authenticator, "Authenticator");

/// `AP-REP ::= [APPLICATION 15] SEQUENCE { pvno [0] 5, msg-type [1] 15, enc-part [2] EncryptedData }`.
///
/// The service's answer for mutual authentication (GSS, kpasswd).
#[derive(Debug, Clone, PartialEq, Eq, Hash, Default)]
pub struct ApRep {
    /// `[2]` encrypted EncAPRepPart.
    pub enc_part: EncryptedData,
}

impl Der for ApRep {
    fn to_der(&self) -> Vec<u8> {
        SeqEncoder::new()
            .field(0, &enc_int(5))
            .field(1, &enc_int(AP_REP_TAG.into()))
            .field(2, &self.enc_part.to_der())
            .finish_app(AP_REP_TAG)
    }
    fn from_tlv(t: Tlv<'_>, _what: &'static str) -> Res<Self> {
        let mut s = SeqDecoder::new_app(t, AP_REP_TAG, "AP-REP")?;
        s.req(0, "pvno", dec_vno)?;
        s.req(1, "msg-type", |t, w| check_msg_type(t, w, AP_REP_TAG))?;
        let enc_part = s.req(2, "enc-part", EncryptedData::from_tlv)?;
        s.finish()?;
        Ok(ApRep { enc_part })
    }
}
der_codec!(ApRep, "AP-REP");

/// `EncAPRepPart ::= [APPLICATION 27] SEQUENCE { ctime [0], cusec [1],
/// subkey [2] OPTIONAL, seq-number [3] OPTIONAL }`.
///
/// Echoes the authenticator's time and may carry the acceptor's subkey and
/// sequence number.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Default)]
pub struct EncApRepPart {
    /// `[0]` the authenticator's ctime.
    pub ctime: KerberosTime,
    /// `[1]` the authenticator's cusec.
    pub cusec: u32,
    /// `[2]` acceptor subkey.
    pub subkey: Option<EncryptionKey>,
    /// `[3]` acceptor initial sequence number.
    pub seq_number: Option<u32>,
}

impl Der for EncApRepPart {
    fn to_der(&self) -> Vec<u8> {
        SeqEncoder::new()
            .field(0, &self.ctime.encode())
            .field(1, &enc_int(self.cusec.into()))
            .opt(2, self.subkey.as_ref().map(Der::to_der))
            .opt(3, self.seq_number.map(|n| enc_int(n.into())))
            .finish_app(ENC_AP_REP_PART_TAG)
    }
    fn from_tlv(t: Tlv<'_>, _what: &'static str) -> Res<Self> {
        let mut s = SeqDecoder::new_app(t, ENC_AP_REP_PART_TAG, "EncAPRepPart")?;
        let v = EncApRepPart {
            ctime: s.req(0, "ctime", KerberosTime::from_tlv)?,
            cusec: s.req(1, "cusec", dec_usec)?,
            subkey: s.opt(2, "subkey", EncryptionKey::from_tlv)?,
            seq_number: s.opt(3, "seq-number", dec_u32)?,
        };
        s.finish()?;
        Ok(v)
    }
}
der_codec!(EncApRepPart, "EncAPRepPart");
