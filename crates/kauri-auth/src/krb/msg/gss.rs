//! GSS-API Kerberos framing (RFC 1964 §1.1, RFC 2743 §3.1, RFC 4121 §4.1)
//! used around AP-REQ / AP-REP / KRB-ERROR in LDAP SASL GSSAPI and SPNEGO,
//! plus the authenticator checksum type 0x8003 that carries the GSS flags.

use super::der::{app_tag, check_tag, dec_oid, decode_all, tlv, Reader, TAG_OID};
use super::error::MsgError;

/// DER contents of OID 1.2.840.113554.1.2.2 (Kerberos V5 GSS mechanism).
pub const OID_KRB5: &[u8] = &[0x2a, 0x86, 0x48, 0x86, 0xf7, 0x12, 0x01, 0x02, 0x02];
/// DER contents of OID 1.2.840.48018.1.2.2 (Microsoft's mis-encoded alias of
/// the Kerberos mechanism, offered first by Windows in SPNEGO).
pub const OID_MS_KRB5: &[u8] = &[0x2a, 0x86, 0x48, 0x82, 0xf7, 0x12, 0x01, 0x02, 0x02];

/// TOK_ID of a token carrying an AP-REQ.
pub const TOK_ID_AP_REQ: u16 = 0x0100;
/// TOK_ID of a token carrying an AP-REP.
pub const TOK_ID_AP_REP: u16 = 0x0200;
/// TOK_ID of a token carrying a KRB-ERROR.
pub const TOK_ID_KRB_ERROR: u16 = 0x0300;

/// Which mechanism OID framed (or should frame) a token.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum GssMech {
    /// 1.2.840.113554.1.2.2.
    Krb5,
    /// 1.2.840.48018.1.2.2 (Microsoft).
    MsKrb5,
}

impl GssMech {
    /// The OID contents octets.
    pub fn oid(self) -> &'static [u8] {
        match self {
            GssMech::Krb5 => OID_KRB5,
            GssMech::MsKrb5 => OID_MS_KRB5,
        }
    }
}

/// `InitialContextToken ::= [APPLICATION 0] IMPLICIT SEQUENCE { thisMech MechType,
/// innerContextToken ANY }` where the inner token is a 2-byte TOK_ID followed
/// by a Kerberos message.
///
/// RFC 1964 uses this framing for the first token (AP-REQ) and for the
/// acceptor's AP-REP / KRB-ERROR as well; MIT and Windows both frame their
/// AP-REP this way.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct GssKrb5Token {
    /// Mechanism OID used.
    pub mech: GssMech,
    /// [`TOK_ID_AP_REQ`], [`TOK_ID_AP_REP`] or [`TOK_ID_KRB_ERROR`].
    pub tok_id: u16,
    /// The DER Kerberos message (AP-REQ, AP-REP or KRB-ERROR).
    pub message: Vec<u8>,
}

impl GssKrb5Token {
    /// A token of the standard Kerberos mechanism.
    pub fn new(tok_id: u16, message: Vec<u8>) -> Self {
        GssKrb5Token {
            mech: GssMech::Krb5,
            tok_id,
            message,
        }
    }

    /// Encodes the framed token.
    pub fn encode(&self) -> Vec<u8> {
        let mut content = tlv(TAG_OID, self.mech.oid());
        content.extend_from_slice(&self.tok_id.to_be_bytes());
        content.extend_from_slice(&self.message);
        tlv(app_tag(0), &content)
    }

    /// Decodes a framed token. Accepts both mechanism OIDs, requires one of
    /// the three TOK_IDs, and checks that the message is one DER element
    /// whose APPLICATION tag matches the TOK_ID (14, 15 or 30).
    pub fn decode(bytes: &[u8]) -> Result<Self, MsgError> {
        const WHAT: &str = "GSS InitialContextToken";
        decode_all(bytes, WHAT, |t| {
            check_tag(&t, app_tag(0), WHAT)?;
            let mut r = Reader::new(t.value);
            let oid = dec_oid(r.read_tlv(WHAT)?, WHAT)?;
            let mech = if oid == OID_KRB5 {
                GssMech::Krb5
            } else if oid == OID_MS_KRB5 {
                GssMech::MsKrb5
            } else {
                return Err(MsgError::InvalidValue {
                    what: WHAT,
                    why: "mechanism is not Kerberos V5",
                });
            };
            let rest = r.remaining();
            let (id, message) = match rest {
                [a, b, m @ ..] => (u16::from_be_bytes([*a, *b]), m),
                _ => {
                    return Err(MsgError::Truncated {
                        what: WHAT,
                        need: 2,
                        have: rest.len(),
                    });
                }
            };
            let app = match id {
                TOK_ID_AP_REQ => 14,
                TOK_ID_AP_REP => 15,
                TOK_ID_KRB_ERROR => 30,
                _ => {
                    return Err(MsgError::InvalidValue {
                        what: WHAT,
                        why: "unknown TOK_ID",
                    });
                }
            };
            let mut mr = Reader::new(message);
            let m = mr.expect(app_tag(app), WHAT)?;
            mr.finish(WHAT)?;
            Ok(GssKrb5Token {
                mech,
                tok_id: id,
                message: m.raw.to_vec(),
            })
        })
    }
}

/// Checksum type of the GSS authenticator checksum (RFC 4121 §4.1.1).
pub const CKSUMTYPE_GSSAPI: i32 = 0x8003;

/// GSS context flags found in [`GssChecksum::flags`] (RFC 4121 §4.1.1.1, MS-KILE 3.2.5.2).
pub mod gss_flags {
    /// GSS_C_DELEG_FLAG: a KRB-CRED follows in the checksum.
    pub const DELEG: u32 = 0x01;
    /// GSS_C_MUTUAL_FLAG.
    pub const MUTUAL: u32 = 0x02;
    /// GSS_C_REPLAY_FLAG.
    pub const REPLAY: u32 = 0x04;
    /// GSS_C_SEQUENCE_FLAG.
    pub const SEQUENCE: u32 = 0x08;
    /// GSS_C_CONF_FLAG.
    pub const CONF: u32 = 0x10;
    /// GSS_C_INTEG_FLAG.
    pub const INTEG: u32 = 0x20;
    /// GSS_C_DCE_STYLE (MS-KILE).
    pub const DCE_STYLE: u32 = 0x1000;
    /// GSS_C_IDENTIFY_FLAG (MS-KILE).
    pub const IDENTIFY: u32 = 0x2000;
    /// GSS_C_EXTENDED_ERROR_FLAG (MS-KILE).
    pub const EXTENDED_ERROR: u32 = 0x4000;
}

/// The contents of an authenticator checksum of type 0x8003 (RFC 4121 §4.1.1):
/// `u32 Lgth (=16) | Bnd[16] | u32 Flags | [u16 DlgOpt | u16 Dlen | Deleg] | Exts`,
/// integers little-endian. Tells the acceptor the requested context flags,
/// the channel-binding hash and any delegated credentials.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Default)]
pub struct GssChecksum {
    /// MD5 of the channel bindings, or zeros.
    pub bindings: [u8; 16],
    /// Requested flags ([`gss_flags`]).
    pub flags: u32,
    /// `(DlgOpt, KRB-CRED bytes)` when `flags` has DELEG and they are present.
    pub delegation: Option<(u16, Vec<u8>)>,
    /// Trailing extension bytes, kept raw.
    pub exts: Vec<u8>,
}

impl GssChecksum {
    /// Encodes the checksum contents.
    ///
    /// A delegation whose KRB-CRED exceeds 65535 bytes cannot be expressed;
    /// its length field is then capped, so keep KRB-CRED small.
    pub fn encode(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(24 + self.exts.len());
        out.extend_from_slice(&16u32.to_le_bytes());
        out.extend_from_slice(&self.bindings);
        out.extend_from_slice(&self.flags.to_le_bytes());
        if let Some((opt, cred)) = &self.delegation {
            let len = u16::try_from(cred.len()).unwrap_or(u16::MAX);
            out.extend_from_slice(&opt.to_le_bytes());
            out.extend_from_slice(&len.to_le_bytes());
            out.extend_from_slice(&cred[..usize::from(len)]);
        }
        out.extend_from_slice(&self.exts);
        out
    }

    /// Parses checksum contents (at least 24 bytes, Lgth = 16).
    pub fn decode(bytes: &[u8]) -> Result<Self, MsgError> {
        const WHAT: &str = "GSS checksum";
        if bytes.len() < 24 {
            return Err(MsgError::Truncated {
                what: WHAT,
                need: 24,
                have: bytes.len(),
            });
        }
        let lgth = u32::from_le_bytes([bytes[0], bytes[1], bytes[2], bytes[3]]);
        if lgth != 16 {
            return Err(MsgError::InvalidValue {
                what: WHAT,
                why: "Lgth must be 16",
            });
        }
        let mut bindings = [0u8; 16];
        bindings.copy_from_slice(&bytes[4..20]);
        let flags = u32::from_le_bytes([bytes[20], bytes[21], bytes[22], bytes[23]]);
        let mut rest = &bytes[24..];
        let mut delegation = None;
        if flags & gss_flags::DELEG != 0 && rest.len() >= 4 {
            let opt = u16::from_le_bytes([rest[0], rest[1]]);
            let dlen = usize::from(u16::from_le_bytes([rest[2], rest[3]]));
            let cred = rest.get(4..4 + dlen).ok_or(MsgError::Truncated {
                what: WHAT,
                need: 4 + dlen,
                have: rest.len(),
            })?;
            delegation = Some((opt, cred.to_vec()));
            rest = &rest[4 + dlen..];
        }
        Ok(GssChecksum {
            bindings,
            flags,
            delegation,
            exts: rest.to_vec(),
        })
    }
}
