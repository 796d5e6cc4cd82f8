//! Kerberos change/set password protocol (RFC 3244, MS-KILE and the
//! older MIT/Microsoft "version 1" change-password protocol).
//!
//! The framing is not DER: a request is
//! `u16 message length | u16 version | u16 AP-REQ length | AP-REQ | KRB-PRIV`,
//! a reply is `u16 message length | u16 version (1) | u16 AP-REP length |
//! AP-REP | KRB-PRIV`, or with an AP-REP length of 0 followed by a KRB-ERROR.
//! All integers are big-endian and the message length counts the whole message.
//! Over TCP the message is additionally preceded by the usual 4-byte length.

use super::der::{dec_octets, enc_octets, enc_string, Der, Res, SeqDecoder, SeqEncoder, Tlv};
use super::error::MsgError;
use super::types::{dec_realm, PrincipalName};

/// Request version 1: the old change-password protocol; the KRB-PRIV
/// user-data is the new password itself (MIT `kpasswd` sends this).
pub const KPASSWD_VERSION_CHANGE: u16 = 0x0001;
/// Request version 0xff80: RFC 3244 set/change password; the KRB-PRIV
/// user-data is a DER [`ChangePasswdData`].
pub const KPASSWD_VERSION_SET: u16 = 0xff80;
/// Version number that replies carry (RFC 3244 §2), whatever the request's.
pub const KPASSWD_REPLY_VERSION: u16 = 0x0001;

/// Result codes carried in the first two bytes of a kpasswd result
/// (RFC 3244 §2, MS-KILE).
pub mod result_code {
    /// Request succeeded.
    pub const SUCCESS: u16 = 0;
    /// Request fails due to being malformed.
    pub const MALFORMED: u16 = 1;
    /// Request fails due to "hard" error in processing the request.
    pub const HARDERROR: u16 = 2;
    /// Request fails due to an error in authentication processing.
    pub const AUTHERROR: u16 = 3;
    /// Request fails due to a "soft" error (e.g. password policy).
    pub const SOFTERROR: u16 = 4;
    /// Requestor not authorized.
    pub const ACCESSDENIED: u16 = 5;
    /// Protocol version unsupported.
    pub const BAD_VERSION: u16 = 6;
    /// Initial flag required (the ticket was not from an AS exchange).
    pub const INITIAL_FLAG_NEEDED: u16 = 7;

    /// The RFC name of a result code.
    pub fn name(code: u16) -> Option<&'static str> {
        Some(match code {
            SUCCESS => "KRB5_KPASSWD_SUCCESS",
            MALFORMED => "KRB5_KPASSWD_MALFORMED",
            HARDERROR => "KRB5_KPASSWD_HARDERROR",
            AUTHERROR => "KRB5_KPASSWD_AUTHERROR",
            SOFTERROR => "KRB5_KPASSWD_SOFTERROR",
            ACCESSDENIED => "KRB5_KPASSWD_ACCESSDENIED",
            BAD_VERSION => "KRB5_KPASSWD_BAD_VERSION",
            INITIAL_FLAG_NEEDED => "KRB5_KPASSWD_INITIAL_FLAG_NEEDED",
            _ => return None,
        })
    }
}

/// `ChangePasswdData ::= SEQUENCE { newpasswd [0] OCTET STRING,
/// targname [1] PrincipalName OPTIONAL, targrealm [2] Realm OPTIONAL }` (RFC 3244).
///
/// The user-data of a version-0xff80 request. Without `targname` it changes
/// the caller's own password; with it, it sets someone else's (needs rights).
#[derive(Clone, PartialEq, Eq, Hash, Default)]
pub struct ChangePasswdData {
    /// `[0]` the new password (UTF-8 in practice).
    pub newpasswd: Vec<u8>,
    /// `[1]` target principal.
    pub targname: Option<PrincipalName>,
    /// `[2]` target realm.
    pub targrealm: Option<String>,
}

impl std::fmt::Debug for ChangePasswdData {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ChangePasswdData")
            .field(
                "newpasswd",
                &format_args!("<{} bytes>", self.newpasswd.len()),
            )
            .field("targname", &self.targname)
            .field("targrealm", &self.targrealm)
            .finish()
    }
}

impl Der for ChangePasswdData {
    fn to_der(&self) -> Vec<u8> {
        SeqEncoder::new()
            .field(0, &enc_octets(&self.newpasswd))
            .opt(1, self.targname.as_ref().map(Der::to_der))
            .opt(2, self.targrealm.as_deref().map(enc_string))
            .finish()
    }
    fn from_tlv(t: Tlv<'_>, _what: &'static str) -> Res<Self> {
        let mut s = SeqDecoder::new(t, "ChangePasswdData")?;
        let newpasswd = s.req(0, "newpasswd", dec_octets)?;
        let targname = s.opt(1, "targname", PrincipalName::from_tlv)?;
        let targrealm = s.opt(2, "targrealm", dec_realm)?;
        s.finish()?;
        Ok(ChangePasswdData {
            newpasswd,
            targname,
            targrealm,
        })
    }
}
der_codec!(ChangePasswdData, "ChangePasswdData");

/// Splits `u16 len | u16 version | u16 inner len | inner | rest` and checks lengths.
fn split_frame<'a>(bytes: &'a [u8], what: &'static str) -> Res<(u16, &'a [u8], &'a [u8])> {
    if bytes.len() < 6 {
        return Err(MsgError::Truncated {
            what,
            need: 6,
            have: bytes.len(),
        });
    }
    let be = |i: usize| u16::from_be_bytes([bytes[i], bytes[i + 1]]);
    let (total, version, inner_len) = (usize::from(be(0)), be(2), usize::from(be(4)));
    if total != bytes.len() {
        return Err(MsgError::BadLength {
            what,
            why: "message length field does not match the message size",
        });
    }
    let inner = bytes.get(6..6 + inner_len).ok_or(MsgError::Truncated {
        what,
        need: 6 + inner_len,
        have: bytes.len(),
    })?;
    let rest = bytes.get(6 + inner_len..).unwrap_or(&[]);
    Ok((version, inner, rest))
}

/// Builds `u16 len | u16 version | u16 inner len | inner | rest`.
fn join_frame(version: u16, inner: &[u8], rest: &[u8], what: &'static str) -> Res<Vec<u8>> {
    let total = 6 + inner.len() + rest.len();
    let total16 = u16::try_from(total).map_err(|_| MsgError::TooLarge { what, len: total })?;
    let inner16 = u16::try_from(inner.len()).map_err(|_| MsgError::TooLarge {
        what,
        len: inner.len(),
    })?;
    let mut out = Vec::with_capacity(total);
    out.extend_from_slice(&total16.to_be_bytes());
    out.extend_from_slice(&version.to_be_bytes());
    out.extend_from_slice(&inner16.to_be_bytes());
    out.extend_from_slice(inner);
    out.extend_from_slice(rest);
    Ok(out)
}

/// A kpasswd request, split into its raw parts.
///
/// The AP-REQ and KRB-PRIV stay raw bytes: the server decodes the AP-REQ
/// with [`super::ap::ApReq::decode`], checks it, then decrypts the KRB-PRIV.
/// The version is not checked here, so that the server can answer an
/// unknown one with [`result_code::BAD_VERSION`].
#[derive(Debug, Clone, PartialEq, Eq, Hash, Default)]
pub struct KpasswdRequest {
    /// Protocol version ([`KPASSWD_VERSION_CHANGE`] or [`KPASSWD_VERSION_SET`]).
    pub version: u16,
    /// The AP-REQ (DER).
    pub ap_req: Vec<u8>,
    /// The KRB-PRIV (DER) holding the password data.
    pub krb_priv: Vec<u8>,
}

impl KpasswdRequest {
    /// Parses the framing of one request (without the TCP 4-byte prefix).
    /// Refuses a length field that disagrees with the input size, an empty
    /// AP-REQ or an empty KRB-PRIV.
    pub fn decode(bytes: &[u8]) -> Result<Self, MsgError> {
        const WHAT: &str = "kpasswd request";
        let (version, ap_req, krb_priv) = split_frame(bytes, WHAT)?;
        if ap_req.is_empty() || krb_priv.is_empty() {
            return Err(MsgError::InvalidValue {
                what: WHAT,
                why: "AP-REQ and KRB-PRIV must both be present",
            });
        }
        Ok(KpasswdRequest {
            version,
            ap_req: ap_req.to_vec(),
            krb_priv: krb_priv.to_vec(),
        })
    }

    /// Builds the framing; fails if the message would exceed 65535 bytes.
    pub fn encode(&self) -> Result<Vec<u8>, MsgError> {
        join_frame(
            self.version,
            &self.ap_req,
            &self.krb_priv,
            "kpasswd request",
        )
    }
}

/// A kpasswd reply: an AP-REP and a KRB-PRIV, or (when the request could not
/// be authenticated) an empty AP-REP and a KRB-ERROR.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Default)]
pub struct KpasswdReply {
    /// Version field; [`KPASSWD_REPLY_VERSION`] (1) in practice.
    pub version: u16,
    /// The AP-REP (DER), empty when `body` is a KRB-ERROR.
    pub ap_rep: Vec<u8>,
    /// KRB-PRIV with the result, or KRB-ERROR whose e-data is the result.
    pub body: Vec<u8>,
}

impl KpasswdReply {
    /// A successful-path reply (AP-REP + KRB-PRIV) with version 1.
    pub fn new(ap_rep: Vec<u8>, krb_priv: Vec<u8>) -> Self {
        KpasswdReply {
            version: KPASSWD_REPLY_VERSION,
            ap_rep,
            body: krb_priv,
        }
    }

    /// An error reply: no AP-REP, a KRB-ERROR (whose e-data should be a
    /// [`KpasswdResult`]), version 1.
    pub fn error(krb_error: Vec<u8>) -> Self {
        KpasswdReply {
            version: KPASSWD_REPLY_VERSION,
            ap_rep: Vec::new(),
            body: krb_error,
        }
    }

    /// Builds the framing; fails if the message would exceed 65535 bytes.
    pub fn encode(&self) -> Result<Vec<u8>, MsgError> {
        join_frame(self.version, &self.ap_rep, &self.body, "kpasswd reply")
    }

    /// Parses the framing of one reply (without the TCP 4-byte prefix).
    pub fn decode(bytes: &[u8]) -> Result<Self, MsgError> {
        let (version, ap_rep, body) = split_frame(bytes, "kpasswd reply")?;
        Ok(KpasswdReply {
            version,
            ap_rep: ap_rep.to_vec(),
            body: body.to_vec(),
        })
    }
}

/// A kpasswd result: `u16` result code (big-endian) followed by the result
/// string. Sent as the KRB-PRIV user-data, or as the KRB-ERROR e-data.
///
/// The string is UTF-8 text from MIT; AD sends, with
/// [`result_code::SOFTERROR`], a 30-byte binary [`AdPolicyInfo`] instead.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Default)]
pub struct KpasswdResult {
    /// One of [`result_code`].
    pub code: u16,
    /// Result string (text, or an AD policy blob).
    pub string: Vec<u8>,
}

impl KpasswdResult {
    /// A result with a text message.
    pub fn text(code: u16, message: &str) -> Self {
        KpasswdResult {
            code,
            string: message.as_bytes().to_vec(),
        }
    }

    /// The code followed by the string.
    pub fn encode(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(2 + self.string.len());
        out.extend_from_slice(&self.code.to_be_bytes());
        out.extend_from_slice(&self.string);
        out
    }

    /// Parses at least two bytes.
    pub fn decode(bytes: &[u8]) -> Result<Self, MsgError> {
        match bytes {
            [a, b, rest @ ..] => Ok(KpasswdResult {
                code: u16::from_be_bytes([*a, *b]),
                string: rest.to_vec(),
            }),
            _ => Err(MsgError::Truncated {
                what: "kpasswd result",
                need: 2,
                have: bytes.len(),
            }),
        }
    }

    /// The string as an AD policy blob, if it is one.
    pub fn ad_policy(&self) -> Option<AdPolicyInfo> {
        AdPolicyInfo::decode(&self.string).ok()
    }
}

/// Bits of [`AdPolicyInfo::properties`] (the domain's pwdProperties).
pub mod password_properties {
    /// DOMAIN_PASSWORD_COMPLEX.
    pub const COMPLEX: u32 = 0x01;
    /// DOMAIN_PASSWORD_NO_ANON_CHANGE.
    pub const NO_ANON_CHANGE: u32 = 0x02;
    /// DOMAIN_PASSWORD_NO_CLEAR_CHANGE.
    pub const NO_CLEAR_CHANGE: u32 = 0x04;
    /// DOMAIN_LOCKOUT_ADMINS.
    pub const LOCKOUT_ADMINS: u32 = 0x08;
    /// DOMAIN_PASSWORD_STORE_CLEARTEXT.
    pub const STORE_CLEARTEXT: u32 = 0x10;
    /// DOMAIN_REFUSE_PASSWORD_CHANGE.
    pub const REFUSE_PASSWORD_CHANGE: u32 = 0x20;
}

/// The 30-byte password-policy blob that AD returns as the result string of a
/// soft error, so that clients can explain the policy (MIT's
/// `krb5_chpw_message` and Windows both render it).
///
/// Layout, all big-endian: `u16 0`, `u32 min_length`, `u32 history`,
/// `u32 properties`, `u64 max_age`, `u64 min_age`; ages are positive counts
/// of 100 ns (MIT divides them by 864,000,000,000 to print days).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct AdPolicyInfo {
    /// Minimum password length.
    pub min_length: u32,
    /// Password history length.
    pub history: u32,
    /// pwdProperties bits ([`password_properties`]).
    pub properties: u32,
    /// Maximum password age, 100 ns units.
    pub max_age: u64,
    /// Minimum password age, 100 ns units.
    pub min_age: u64,
}

impl AdPolicyInfo {
    /// Encoded size.
    pub const LEN: usize = 30;

    /// The 30 bytes.
    pub fn encode(&self) -> [u8; 30] {
        let mut out = [0u8; 30];
        out[2..6].copy_from_slice(&self.min_length.to_be_bytes());
        out[6..10].copy_from_slice(&self.history.to_be_bytes());
        out[10..14].copy_from_slice(&self.properties.to_be_bytes());
        out[14..22].copy_from_slice(&self.max_age.to_be_bytes());
        out[22..30].copy_from_slice(&self.min_age.to_be_bytes());
        out
    }

    /// Parses exactly 30 bytes starting with two zero bytes.
    pub fn decode(bytes: &[u8]) -> Result<Self, MsgError> {
        let b: &[u8; 30] = bytes.try_into().map_err(|_| MsgError::InvalidValue {
            what: "AD policy info",
            why: "must be exactly 30 bytes",
        })?;
        if b[0] != 0 || b[1] != 0 {
            return Err(MsgError::InvalidValue {
                what: "AD policy info",
                why: "must start with 0x0000",
            });
        }
        let u32_at = |i: usize| u32::from_be_bytes([b[i], b[i + 1], b[i + 2], b[i + 3]]);
        let u64_at = |i: usize| {
            let mut a = [0u8; 8];
            a.copy_from_slice(&b[i..i + 8]);
            u64::from_be_bytes(a)
        };
        Ok(AdPolicyInfo {
            min_length: u32_at(2),
            history: u32_at(6),
            properties: u32_at(10),
            max_age: u64_at(14),
            min_age: u64_at(22),
        })
    }
}
