//! Pre-authentication and authorization-data payloads: what goes inside
//! `PaData::value` and `AuthorizationDataEntry::ad_data` (RFC 4120 §5.2.7,
//! MS-KILE, MS-SFU).

use super::der::{
    dec_bool, dec_i32, dec_octets, dec_seq_of, dec_string, dec_usec, enc_bool, enc_int, enc_octets,
    enc_seq_of, enc_string, Der, Res, SeqDecoder, SeqEncoder, Tlv,
};
use super::error::MsgError;
use super::flags::KerberosFlags;
use super::time::KerberosTime;
use super::types::{dec_padata_list, dec_realm, enc_padata_list, Checksum, PaData, PrincipalName};

/// `PA-ENC-TS-ENC ::= SEQUENCE { patimestamp [0] KerberosTime, pausec [1] Microseconds OPTIONAL }`.
///
/// The plaintext of PA-ENC-TIMESTAMP (encrypted with the client's long-term
/// key, key usage 1): the classic password pre-authentication.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Default)]
pub struct PaEncTsEnc {
    /// `[0]` client time.
    pub patimestamp: KerberosTime,
    /// `[1]` microseconds.
    pub pausec: Option<u32>,
}

impl Der for PaEncTsEnc {
    fn to_der(&self) -> Vec<u8> {
        SeqEncoder::new()
            .field(0, &self.patimestamp.encode())
            .opt(1, self.pausec.map(|u| enc_int(u.into())))
            .finish()
    }
    fn from_tlv(t: Tlv<'_>, _what: &'static str) -> Res<Self> {
        let mut s = SeqDecoder::new(t, "PA-ENC-TS-ENC")?;
        let patimestamp = s.req(0, "patimestamp", KerberosTime::from_tlv)?;
        let pausec = s.opt(1, "pausec", dec_usec)?;
        s.finish()?;
        Ok(PaEncTsEnc {
            patimestamp,
            pausec,
        })
    }
}
der_codec!(PaEncTsEnc, "PA-ENC-TS-ENC");

/// `ETYPE-INFO2-ENTRY ::= SEQUENCE { etype [0] Int32, salt [1] KerberosString OPTIONAL,
/// s2kparams [2] OCTET STRING OPTIONAL }` (RFC 4120 §5.2.7.5).
///
/// Tells the client which enctype, salt and string-to-key parameters to use
/// for its password.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Default)]
pub struct EtypeInfo2Entry {
    /// `[0]` encryption type.
    pub etype: i32,
    /// `[1]` salt (AD: `REALMuser` for users, `REALMhostname.fqdn` for computers).
    pub salt: Option<String>,
    /// `[2]` string-to-key parameters (AES: 4-byte big-endian iteration count).
    pub s2kparams: Option<Vec<u8>>,
}

impl Der for EtypeInfo2Entry {
    fn to_der(&self) -> Vec<u8> {
        SeqEncoder::new()
            .field(0, &enc_int(self.etype.into()))
            .opt(1, self.salt.as_deref().map(enc_string))
            .opt(2, self.s2kparams.as_deref().map(enc_octets))
            .finish()
    }
    fn from_tlv(t: Tlv<'_>, _what: &'static str) -> Res<Self> {
        let mut s = SeqDecoder::new(t, "ETYPE-INFO2-ENTRY")?;
        let etype = s.req(0, "etype", dec_i32)?;
        let salt = s.opt(1, "salt", dec_string)?;
        let s2kparams = s.opt(2, "s2kparams", dec_octets)?;
        s.finish()?;
        Ok(EtypeInfo2Entry {
            etype,
            salt,
            s2kparams,
        })
    }
}
der_codec!(EtypeInfo2Entry, "ETYPE-INFO2-ENTRY");

/// `ETYPE-INFO2 ::= SEQUENCE SIZE (1..MAX) OF ETYPE-INFO2-ENTRY`, the value
/// of PA-ETYPE-INFO2 (19). An empty list is accepted on decode.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Default)]
pub struct EtypeInfo2(pub Vec<EtypeInfo2Entry>);

impl Der for EtypeInfo2 {
    fn to_der(&self) -> Vec<u8> {
        enc_seq_of(self.0.iter().map(Der::to_der))
    }
    fn from_tlv(t: Tlv<'_>, what: &'static str) -> Res<Self> {
        dec_seq_of(t, what, |e| EtypeInfo2Entry::from_tlv(e, what)).map(EtypeInfo2)
    }
}
der_codec!(EtypeInfo2, "ETYPE-INFO2");

/// `ETYPE-INFO-ENTRY ::= SEQUENCE { etype [0] Int32, salt [1] OCTET STRING OPTIONAL }`.
///
/// The older hint (PA-ETYPE-INFO, 11) that AD still sends for DES/RC4-era clients.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Default)]
pub struct EtypeInfoEntry {
    /// `[0]` encryption type.
    pub etype: i32,
    /// `[1]` salt bytes.
    pub salt: Option<Vec<u8>>,
}

impl Der for EtypeInfoEntry {
    fn to_der(&self) -> Vec<u8> {
        SeqEncoder::new()
            .field(0, &enc_int(self.etype.into()))
            .opt(1, self.salt.as_deref().map(enc_octets))
            .finish()
    }
    fn from_tlv(t: Tlv<'_>, _what: &'static str) -> Res<Self> {
        let mut s = SeqDecoder::new(t, "ETYPE-INFO-ENTRY")?;
        let etype = s.req(0, "etype", dec_i32)?;
        let salt = s.opt(1, "salt", dec_octets)?;
        s.finish()?;
        Ok(EtypeInfoEntry { etype, salt })
    }
}
der_codec!(EtypeInfoEntry, "ETYPE-INFO-ENTRY");

/// `ETYPE-INFO ::= SEQUENCE OF ETYPE-INFO-ENTRY`, the value of PA-ETYPE-INFO (11).
#[derive(Debug, Clone, PartialEq, Eq, Hash, Default)]
pub struct EtypeInfo(pub Vec<EtypeInfoEntry>);

impl Der for EtypeInfo {
    fn to_der(&self) -> Vec<u8> {
        enc_seq_of(self.0.iter().map(Der::to_der))
    }
    fn from_tlv(t: Tlv<'_>, what: &'static str) -> Res<Self> {
        dec_seq_of(t, what, |e| EtypeInfoEntry::from_tlv(e, what)).map(EtypeInfo)
    }
}
der_codec!(EtypeInfo, "ETYPE-INFO");

/// `METHOD-DATA ::= SEQUENCE OF PA-DATA`: the e-data of
/// KDC_ERR_PREAUTH_REQUIRED (and the encoding of padata lists).
#[derive(Debug, Clone, PartialEq, Eq, Hash, Default)]
pub struct MethodData(pub Vec<PaData>);

impl MethodData {
    /// The first element of type `padata_type`.
    pub fn find(&self, padata_type: i32) -> Option<&PaData> {
        PaData::find(&self.0, padata_type)
    }
}

impl Der for MethodData {
    fn to_der(&self) -> Vec<u8> {
        enc_padata_list(&self.0)
    }
    fn from_tlv(t: Tlv<'_>, what: &'static str) -> Res<Self> {
        dec_padata_list(t, what).map(MethodData)
    }
}
der_codec!(MethodData, "METHOD-DATA");

/// `KERB-PA-PAC-REQUEST ::= SEQUENCE { include-pac [0] BOOLEAN }` (MS-KILE 2.2.3),
/// value of PA-PAC-REQUEST (128).
///
/// Lets a client ask for a ticket with or without a PAC.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct KerbPaPacRequest {
    /// `[0]` whether to include a PAC.
    pub include_pac: bool,
}

impl Der for KerbPaPacRequest {
    fn to_der(&self) -> Vec<u8> {
        SeqEncoder::new()
            .field(0, &enc_bool(self.include_pac))
            .finish()
    }
    fn from_tlv(t: Tlv<'_>, _what: &'static str) -> Res<Self> {
        let mut s = SeqDecoder::new(t, "KERB-PA-PAC-REQUEST")?;
        let include_pac = s.req(0, "include-pac", dec_bool)?;
        s.finish()?;
        Ok(KerbPaPacRequest { include_pac })
    }
}
der_codec!(KerbPaPacRequest, "KERB-PA-PAC-REQUEST");

/// `PA-PAC-OPTIONS ::= SEQUENCE { options [0] PAC-OPTIONS-FLAGS }` (MS-KILE 2.2.10),
/// value of PA-PAC-OPTIONS (167).
///
/// Claims / branch-aware / RBCD requests; bits in [`super::flags::pac_options`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct PaPacOptions {
    /// `[0]` the flags.
    pub flags: KerberosFlags,
}

impl Der for PaPacOptions {
    fn to_der(&self) -> Vec<u8> {
        SeqEncoder::new().field(0, &self.flags.to_der()).finish()
    }
    fn from_tlv(t: Tlv<'_>, _what: &'static str) -> Res<Self> {
        let mut s = SeqDecoder::new(t, "PA-PAC-OPTIONS")?;
        let flags = s.req(0, "options", KerberosFlags::from_tlv)?;
        s.finish()?;
        Ok(PaPacOptions { flags })
    }
}
der_codec!(PaPacOptions, "PA-PAC-OPTIONS");

/// `PA-FOR-USER ::= SEQUENCE { userName [0] PrincipalName, userRealm [1] Realm,
/// cksum [2] Checksum, auth-package [3] KerberosString }` (MS-SFU 2.2.1),
/// value of PA-FOR-USER (129).
///
/// Names the user a service wants a ticket for in S4U2Self. The checksum is
/// keyed with the TGT session key (KERB_CHECKSUM_HMAC_MD5, -138, key usage 17)
/// over [`PaForUser::checksum_data`].
#[derive(Debug, Clone, PartialEq, Eq, Hash, Default)]
pub struct PaForUser {
    /// `[0]` the impersonated user.
    pub user_name: PrincipalName,
    /// `[1]` the user's realm.
    pub user_realm: String,
    /// `[2]` checksum over [`PaForUser::checksum_data`].
    pub cksum: Checksum,
    /// `[3]` always "Kerberos".
    pub auth_package: String,
}

impl PaForUser {
    /// The bytes the checksum covers (MS-SFU 2.2.1): name-type as a 4-byte
    /// little-endian integer, then every name component, the realm and the
    /// auth-package, concatenated as UTF-8 with no separators.
    pub fn checksum_data(&self) -> Vec<u8> {
        let mut out = Vec::new();
        out.extend_from_slice(&self.user_name.name_type.to_le_bytes());
        for c in &self.user_name.components {
            out.extend_from_slice(c.as_bytes());
        }
        out.extend_from_slice(self.user_realm.as_bytes());
        out.extend_from_slice(self.auth_package.as_bytes());
        out
    }
}

impl Der for PaForUser {
    fn to_der(&self) -> Vec<u8> {
        SeqEncoder::new()
            .field(0, &self.user_name.to_der())
            .field(1, &enc_string(&self.user_realm))
            .field(2, &self.cksum.to_der())
            .field(3, &enc_string(&self.auth_package))
            .finish()
    }
    fn from_tlv(t: Tlv<'_>, _what: &'static str) -> Res<Self> {
        let mut s = SeqDecoder::new(t, "PA-FOR-USER")?;
        let v = PaForUser {
            user_name: s.req(0, "userName", PrincipalName::from_tlv)?,
            user_realm: s.req(1, "userRealm", dec_realm)?,
            cksum: s.req(2, "cksum", Checksum::from_tlv)?,
            auth_package: s.req(3, "auth-package", dec_string)?,
        };
        s.finish()?;
        Ok(v)
    }
}
der_codec!(PaForUser, "PA-FOR-USER");

/// `KERB-AD-RESTRICTION-ENTRY ::= SEQUENCE { restriction-type [0] Int32,
/// restriction [1] OCTET STRING }` (MS-KILE 2.2.6).
///
/// Sent by Windows clients in ad-type 141 (KERB-AUTH-DATA-TOKEN-RESTRICTIONS)
/// to carry an LSAP_TOKEN_INFO_INTEGRITY (restriction-type 0); the restriction
/// bytes are opaque here. The ad-data holds a SEQUENCE OF these entries (see
/// [`KerbAdRestrictionList`]).
#[derive(Debug, Clone, PartialEq, Eq, Hash, Default)]
pub struct KerbAdRestrictionEntry {
    /// `[0]` restriction type (0 = LSAP_TOKEN_INFO_INTEGRITY).
    pub restriction_type: i32,
    /// `[1]` restriction bytes.
    pub restriction: Vec<u8>,
}

impl Der for KerbAdRestrictionEntry {
    fn to_der(&self) -> Vec<u8> {
        SeqEncoder::new()
            .field(0, &enc_int(self.restriction_type.into()))
            .field(1, &enc_octets(&self.restriction))
            .finish()
    }
    fn from_tlv(t: Tlv<'_>, _what: &'static str) -> Res<Self> {
        let mut s = SeqDecoder::new(t, "KERB-AD-RESTRICTION-ENTRY")?;
        let restriction_type = s.req(0, "restriction-type", dec_i32)?;
        let restriction = s.req(1, "restriction", dec_octets)?;
        s.finish()?;
        Ok(KerbAdRestrictionEntry {
            restriction_type,
            restriction,
        })
    }
}
der_codec!(KerbAdRestrictionEntry, "KERB-AD-RESTRICTION-ENTRY");

/// SEQUENCE OF KERB-AD-RESTRICTION-ENTRY, the ad-data of ad-type 141.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Default)]
pub struct KerbAdRestrictionList(pub Vec<KerbAdRestrictionEntry>);

impl Der for KerbAdRestrictionList {
    fn to_der(&self) -> Vec<u8> {
        enc_seq_of(self.0.iter().map(Der::to_der))
    }
    fn from_tlv(t: Tlv<'_>, what: &'static str) -> Res<Self> {
        dec_seq_of(t, what, |e| KerbAdRestrictionEntry::from_tlv(e, what))
            .map(KerbAdRestrictionList)
    }
}
der_codec!(KerbAdRestrictionList, "KERB-AD-RESTRICTION-ENTRY list");

/// The value of PA-SUPPORTED-ENCTYPES (165) and of the
/// msDS-SupportedEncryptionTypes bits: a 4-byte little-endian integer, not DER.
///
/// Windows KDCs put it in `encrypted-pa-data` to tell the client which
/// enctypes the service supports.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct PaSupportedEnctypes(pub u32);

impl PaSupportedEnctypes {
    /// The 4 little-endian bytes.
    pub fn encode(&self) -> Vec<u8> {
        self.0.to_le_bytes().to_vec()
    }

    /// Parses exactly 4 bytes.
    pub fn decode(bytes: &[u8]) -> Result<Self, MsgError> {
        let b: [u8; 4] = bytes.try_into().map_err(|_| MsgError::InvalidValue {
            what: "PA-SUPPORTED-ENCTYPES",
            why: "must be exactly 4 bytes",
        })?;
        Ok(PaSupportedEnctypes(u32::from_le_bytes(b)))
    }
}
