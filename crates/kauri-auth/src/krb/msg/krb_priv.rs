//! KRB-PRIV (APPLICATION 21) and EncKrbPrivPart (APPLICATION 28, RFC 4120 §5.7), the confidential
//! message that carries kpasswd requests and results.

use super::der::{
    dec_octets, dec_u32, dec_usec, enc_int, enc_octets, Der, Res, SeqDecoder, SeqEncoder, Tlv,
};
use super::kdc::check_msg_type;
use super::ticket::dec_vno;
use super::time::KerberosTime;
use super::types::{EncryptedData, HostAddress};

/// APPLICATION tag and msg-type of KRB-PRIV.
pub const KRB_PRIV_TAG: u8 = 21;
/// APPLICATION tag of EncKrbPrivPart.
pub const ENC_KRB_PRIV_PART_TAG: u8 = 28;

/// `KRB-PRIV ::= [APPLICATION 21] SEQUENCE { pvno [0] 5, msg-type [1] 21,
/// enc-part [3] EncryptedData }` (note: there is no `[2]`).
#[derive(Debug, Clone, PartialEq, Eq, Hash, Default)]
pub struct KrbPriv {
    /// `[3]` encrypted EncKrbPrivPart (key usage 13).
    pub enc_part: EncryptedData,
}

impl Der for KrbPriv {
    fn to_der(&self) -> Vec<u8> {
        SeqEncoder::new()
            .field(0, &enc_int(5))
            .field(1, &enc_int(KRB_PRIV_TAG.into()))
            .field(3, &self.enc_part.to_der())
            .finish_app(KRB_PRIV_TAG)
    }
    fn from_tlv(t: Tlv<'_>, _what: &'static str) -> Res<Self> {
        let mut s = SeqDecoder::new_app(t, KRB_PRIV_TAG, "KRB-PRIV")?;
        s.req(0, "pvno", dec_vno)?;
        s.req(1, "msg-type", |t, w| check_msg_type(t, w, KRB_PRIV_TAG))?;
        let enc_part = s.req(3, "enc-part", EncryptedData::from_tlv)?;
        s.finish()?;
        Ok(KrbPriv { enc_part })
    }
}
der_codec!(KrbPriv, "KRB-PRIV");

/// `EncKrbPrivPart ::= [APPLICATION 28] SEQUENCE { user-data [0] OCTET STRING,
/// timestamp [1] OPTIONAL, usec [2] OPTIONAL, seq-number [3] OPTIONAL,
/// s-address [4] HostAddress, r-address [5] HostAddress OPTIONAL }`.
///
/// RFC 4120 makes `s-address` mandatory and strict decoders (impacket's, for
/// one) refuse a part without it, so a server should always fill it. Heimdal
/// declares it OPTIONAL, so decoding here accepts its absence.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Default)]
pub struct EncKrbPrivPart {
    /// `[0]` the application data (kpasswd: request data or result).
    pub user_data: Vec<u8>,
    /// `[1]` sender time.
    pub timestamp: Option<KerberosTime>,
    /// `[2]` sender microseconds.
    pub usec: Option<u32>,
    /// `[3]` sequence number.
    pub seq_number: Option<u32>,
    /// `[4]` sender address.
    pub s_address: Option<HostAddress>,
    /// `[5]` recipient address.
    pub r_address: Option<HostAddress>,
}

impl Der for EncKrbPrivPart {
    fn to_der(&self) -> Vec<u8> {
        SeqEncoder::new()
            .field(0, &enc_octets(&self.user_data))
            .opt(1, self.timestamp.map(|t| t.encode()))
            .opt(2, self.usec.map(|u| enc_int(u.into())))
            .opt(3, self.seq_number.map(|n| enc_int(n.into())))
            .opt(4, self.s_address.as_ref().map(Der::to_der))
            .opt(5, self.r_address.as_ref().map(Der::to_der))
            .finish_app(ENC_KRB_PRIV_PART_TAG)
    }
    fn from_tlv(t: Tlv<'_>, _what: &'static str) -> Res<Self> {
        let mut s = SeqDecoder::new_app(t, ENC_KRB_PRIV_PART_TAG, "EncKrbPrivPart")?;
        let v = EncKrbPrivPart {
            user_data: s.req(0, "user-data", dec_octets)?,
            timestamp: s.opt(1, "timestamp", KerberosTime::from_tlv)?,
            usec: s.opt(2, "usec", dec_usec)?,
            seq_number: s.opt(3, "seq-number", dec_u32)?,
            s_address: s.opt(4, "s-address", HostAddress::from_tlv)?,
            r_address: s.opt(5, "r-address", HostAddress::from_tlv)?,
        };
        s.finish()?;
        Ok(v)
    }
}
der_codec!(EncKrbPrivPart, "EncKrbPrivPart");
