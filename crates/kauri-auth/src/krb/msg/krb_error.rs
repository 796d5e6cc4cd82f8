//! KRB-ERROR (APPLICATION 30, RFC 4120 §5.9.1) and the Microsoft error data that AD
//! puts in its e-data (MS-KILE 2.2.1 KERB-ERROR-DATA, 2.2.2 KERB-EXT-ERROR).

use super::der::{
    dec_i32, dec_octets, dec_string, dec_usec, enc_int, enc_octets, enc_string, Der, Res,
    SeqDecoder, SeqEncoder, Tlv,
};
use super::error::MsgError;
use super::kdc::check_msg_type;
use super::pa::MethodData;
use super::ticket::dec_vno;
use super::time::KerberosTime;
use super::types::{dec_realm, PrincipalName};

/// APPLICATION tag and msg-type of KRB-ERROR.
pub const KRB_ERROR_TAG: u8 = 30;

/// `KRB-ERROR ::= [APPLICATION 30] SEQUENCE { pvno [0] 5, msg-type [1] 30,
/// ctime [2] OPTIONAL, cusec [3] OPTIONAL, stime [4], susec [5],
/// error-code [6] Int32, crealm [7] OPTIONAL, cname [8] OPTIONAL, realm [9],
/// sname [10], e-text [11] OPTIONAL, e-data [12] OPTIONAL }`.
///
/// What a KDC, kpasswd server or acceptor sends instead of a reply.
/// `e_data` is opaque: for KDC_ERR_PREAUTH_REQUIRED and friends it is a
/// METHOD-DATA ([`KrbError::method_data`]); AD sends a KERB-ERROR-DATA with an
/// NTSTATUS for others ([`KrbError::kerb_error_data`]); kpasswd puts its
/// result code and string there.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Default)]
pub struct KrbError {
    /// `[2]` client time, echoed from the request.
    pub ctime: Option<KerberosTime>,
    /// `[3]` client microseconds.
    pub cusec: Option<u32>,
    /// `[4]` server time.
    pub stime: KerberosTime,
    /// `[5]` server microseconds.
    pub susec: u32,
    /// `[6]` error code, one of [`super::constants::error_code`].
    pub error_code: i32,
    /// `[7]` client realm.
    pub crealm: Option<String>,
    /// `[8]` client name.
    pub cname: Option<PrincipalName>,
    /// `[9]` realm of the server.
    pub realm: String,
    /// `[10]` server name.
    pub sname: PrincipalName,
    /// `[11]` human-readable text.
    pub e_text: Option<String>,
    /// `[12]` additional data, opaque here.
    pub e_data: Option<Vec<u8>>,
}

impl KrbError {
    /// Decodes `e_data` as METHOD-DATA (the hint list sent with
    /// KDC_ERR_PREAUTH_REQUIRED / KDC_ERR_PREAUTH_FAILED).
    pub fn method_data(&self) -> Option<Result<MethodData, MsgError>> {
        self.e_data.as_deref().map(MethodData::decode)
    }

    /// Decodes `e_data` as KERB-ERROR-DATA (AD's NTSTATUS carrier).
    pub fn kerb_error_data(&self) -> Option<Result<KerbErrorData, MsgError>> {
        self.e_data.as_deref().map(KerbErrorData::decode)
    }
}

impl Der for KrbError {
    fn to_der(&self) -> Vec<u8> {
        SeqEncoder::new()
            .field(0, &enc_int(5))
            .field(1, &enc_int(KRB_ERROR_TAG.into()))
            .opt(2, self.ctime.map(|t| t.encode()))
            .opt(3, self.cusec.map(|u| enc_int(u.into())))
            .field(4, &self.stime.encode())
            .field(5, &enc_int(self.susec.into()))
            .field(6, &enc_int(self.error_code.into()))
            .opt(7, self.crealm.as_deref().map(enc_string))
            .opt(8, self.cname.as_ref().map(Der::to_der))
            .field(9, &enc_string(&self.realm))
            .field(10, &self.sname.to_der())
            .opt(11, self.e_text.as_deref().map(enc_string))
            .opt(12, self.e_data.as_deref().map(enc_octets))
            .finish_app(KRB_ERROR_TAG)
    }
    fn from_tlv(t: Tlv<'_>, _what: &'static str) -> Res<Self> {
        let mut s = SeqDecoder::new_app(t, KRB_ERROR_TAG, "KRB-ERROR")?;
        s.req(0, "pvno", dec_vno)?;
        s.req(1, "msg-type", |t, w| check_msg_type(t, w, KRB_ERROR_TAG))?;
        let v = KrbError {
            ctime: s.opt(2, "ctime", KerberosTime::from_tlv)?,
            cusec: s.opt(3, "cusec", dec_usec)?,
            stime: s.req(4, "stime", KerberosTime::from_tlv)?,
            susec: s.req(5, "susec", dec_usec)?,
            error_code: s.req(6, "error-code", dec_i32)?,
            crealm: s.opt(7, "crealm", dec_realm)?,
            cname: s.opt(8, "cname", PrincipalName::from_tlv)?,
            realm: s.req(9, "realm", dec_realm)?,
            sname: s.req(10, "sname", PrincipalName::from_tlv)?,
            e_text: s.opt(11, "e-text", dec_string)?,
            e_data: s.opt(12, "e-data", dec_octets)?,
        };
        s.finish()?;
        Ok(v)
    }
}
der_codec!(KrbError, "KRB-ERROR");

/// KERB-ERROR-DATA data-type: KERB_AP_ERR_TYPE_SKEW_RECOVERY (MS-KILE 2.2.1).
pub const KERB_AP_ERR_TYPE_SKEW_RECOVERY: i32 = 2;
/// KERB-ERROR-DATA data-type: KERB_ERR_TYPE_EXTENDED, data-value is a
/// [`KerbExtError`] (MS-KILE 2.2.1).
pub const KERB_ERR_TYPE_EXTENDED: i32 = 3;

/// `KERB-ERROR-DATA ::= SEQUENCE { data-type [1] INTEGER, data-value [2] OCTET STRING OPTIONAL }`
/// (MS-KILE 2.2.1).
///
/// AD's e-data for errors that carry a Windows status; Windows clients use
/// the NTSTATUS inside to show precise messages (account locked, password
/// expired, logon hours...).
#[derive(Debug, Clone, PartialEq, Eq, Hash, Default)]
pub struct KerbErrorData {
    /// `[1]` data type ([`KERB_ERR_TYPE_EXTENDED`] = 3 for an NTSTATUS).
    pub data_type: i32,
    /// `[2]` data value ([`KerbExtError`] bytes for type 3).
    pub data_value: Option<Vec<u8>>,
}

impl KerbErrorData {
    /// The usual AD form: type 3 wrapping a KERB-EXT-ERROR with `status`.
    pub fn extended(status: u32) -> Self {
        KerbErrorData {
            data_type: KERB_ERR_TYPE_EXTENDED,
            data_value: Some(KerbExtError::new(status).encode().to_vec()),
        }
    }

    /// The KERB-EXT-ERROR inside, if this is type 3 with a well-formed value.
    pub fn ext_error(&self) -> Option<KerbExtError> {
        if self.data_type != KERB_ERR_TYPE_EXTENDED {
            return None;
        }
        self.data_value
            .as_deref()
            .and_then(|v| KerbExtError::decode(v).ok())
    }
}

impl Der for KerbErrorData {
    fn to_der(&self) -> Vec<u8> {
        SeqEncoder::new()
            .field(1, &enc_int(self.data_type.into()))
            .opt(2, self.data_value.as_deref().map(enc_octets))
            .finish()
    }
    fn from_tlv(t: Tlv<'_>, _what: &'static str) -> Res<Self> {
        let mut s = SeqDecoder::new(t, "KERB-ERROR-DATA")?;
        let data_type = s.req(1, "data-type", dec_i32)?;
        let data_value = s.opt(2, "data-value", dec_octets)?;
        s.finish()?;
        Ok(KerbErrorData {
            data_type,
            data_value,
        })
    }
}
der_codec!(KerbErrorData, "KERB-ERROR-DATA");

/// `KERB-EXT-ERROR` (MS-KILE 2.2.2): 12 bytes, little-endian
/// `{ status: NTSTATUS, reserved: u32, flags: u32 }`. Not DER.
///
/// `flags` is 1 when `status` is meaningful. `reserved` should be 0 but is
/// kept as received.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct KerbExtError {
    /// The NTSTATUS (e.g. 0xC0000234 STATUS_ACCOUNT_LOCKED_OUT).
    pub status: u32,
    /// Reserved.
    pub reserved: u32,
    /// Flags; 1 = status is valid.
    pub flags: u32,
}

impl KerbExtError {
    /// Encoded size in bytes.
    pub const LEN: usize = 12;

    /// A valid-status error (`reserved` 0, `flags` 1).
    pub fn new(status: u32) -> Self {
        KerbExtError {
            status,
            reserved: 0,
            flags: 1,
        }
    }

    /// The 12 little-endian bytes.
    pub fn encode(&self) -> [u8; 12] {
        let mut out = [0u8; 12];
        out[0..4].copy_from_slice(&self.status.to_le_bytes());
        out[4..8].copy_from_slice(&self.reserved.to_le_bytes());
        out[8..12].copy_from_slice(&self.flags.to_le_bytes());
        out
    }

    /// Parses exactly 12 bytes.
    pub fn decode(bytes: &[u8]) -> Result<Self, MsgError> {
        let b: &[u8; 12] = bytes.try_into().map_err(|_| MsgError::InvalidValue {
            what: "KERB-EXT-ERROR",
            why: "must be exactly 12 bytes",
        })?;
        let word = |i: usize| u32::from_le_bytes([b[i], b[i + 1], b[i + 2], b[i + 3]]);
        Ok(KerbExtError {
            status: word(0),
            reserved: word(4),
            flags: word(8),
        })
    }
}
