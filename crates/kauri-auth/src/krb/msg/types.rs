//! The small building blocks of RFC 4120 §5.2 that every message reuses.

use super::der::{
    dec_i32, dec_octets, dec_seq_of, dec_string, dec_u32, enc_int, enc_octets, enc_seq_of,
    enc_string, Der, Res, SeqDecoder, SeqEncoder, Tlv,
};
use super::time::KerberosTime;

/// `PrincipalName ::= SEQUENCE { name-type [0] Int32, name-string [1] SEQUENCE OF KerberosString }`.
///
/// Names clients and services; the realm travels separately. Components are
/// UTF-8 strings (AD uses UTF-8 in GeneralString).
#[derive(Debug, Clone, PartialEq, Eq, Hash, Default)]
pub struct PrincipalName {
    /// Name type, one of [`super::constants::name_type`].
    pub name_type: i32,
    /// Name components, e.g. `["host", "svc.example.com"]`.
    pub components: Vec<String>,
}

impl PrincipalName {
    /// Builds a name from a type and string components.
    pub fn new<S: AsRef<str>>(name_type: i32, components: &[S]) -> Self {
        PrincipalName {
            name_type,
            components: components.iter().map(|c| c.as_ref().to_owned()).collect(),
        }
    }

    /// The components joined with `/` (no escaping, no realm); for logs and lookups.
    pub fn to_slash_string(&self) -> String {
        self.components.join("/")
    }
}

impl Der for PrincipalName {
    fn to_der(&self) -> Vec<u8> {
        SeqEncoder::new()
            .field(0, &enc_int(self.name_type.into()))
            .field(
                1,
                &enc_seq_of(self.components.iter().map(|c| enc_string(c))),
            )
            .finish()
    }
    fn from_tlv(t: Tlv<'_>, _what: &'static str) -> Res<Self> {
        let mut s = SeqDecoder::new(t, "PrincipalName")?;
        let name_type = s.req(0, "name-type", dec_i32)?;
        let components = s.req(1, "name-string", |t, w| {
            dec_seq_of(t, w, |e| dec_string(e, w))
        })?;
        s.finish()?;
        Ok(PrincipalName {
            name_type,
            components,
        })
    }
}
der_codec!(PrincipalName, "PrincipalName");

/// `HostAddress ::= SEQUENCE { addr-type [0] Int32, address [1] OCTET STRING }`.
///
/// Client addresses in requests and tickets (usually absent today; NetBIOS
/// addresses, type 20, are still sent by some Windows clients).
#[derive(Debug, Clone, PartialEq, Eq, Hash, Default)]
pub struct HostAddress {
    /// Address type, one of [`super::constants::addr_type`].
    pub addr_type: i32,
    /// Raw address bytes.
    pub address: Vec<u8>,
}

impl Der for HostAddress {
    fn to_der(&self) -> Vec<u8> {
        SeqEncoder::new()
            .field(0, &enc_int(self.addr_type.into()))
            .field(1, &enc_octets(&self.address))
            .finish()
    }
    fn from_tlv(t: Tlv<'_>, _what: &'static str) -> Res<Self> {
        let mut s = SeqDecoder::new(t, "HostAddress")?;
        let addr_type = s.req(0, "addr-type", dec_i32)?;
        let address = s.req(1, "address", dec_octets)?;
        s.finish()?;
        Ok(HostAddress { addr_type, address })
    }
}
der_codec!(HostAddress, "HostAddress");

/// `EncryptedData ::= SEQUENCE { etype [0] Int32, kvno [1] UInt32 OPTIONAL, cipher [2] OCTET STRING }`.
///
/// An encrypted part; this module never decrypts, it only carries the bytes.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Default)]
pub struct EncryptedData {
    /// Encryption type, one of [`super::constants::etype`].
    pub etype: i32,
    /// Key version number of the key used (negative wire values are mapped
    /// to their `u32` two's complement; Windows RODCs use the high bits).
    pub kvno: Option<u32>,
    /// Ciphertext.
    pub cipher: Vec<u8>,
}

impl Der for EncryptedData {
    fn to_der(&self) -> Vec<u8> {
        SeqEncoder::new()
            .field(0, &enc_int(self.etype.into()))
            .opt(1, self.kvno.map(|k| enc_int(k.into())))
            .field(2, &enc_octets(&self.cipher))
            .finish()
    }
    fn from_tlv(t: Tlv<'_>, _what: &'static str) -> Res<Self> {
        let mut s = SeqDecoder::new(t, "EncryptedData")?;
        let etype = s.req(0, "etype", dec_i32)?;
        let kvno = s.opt(1, "kvno", dec_u32)?;
        let cipher = s.req(2, "cipher", dec_octets)?;
        s.finish()?;
        Ok(EncryptedData {
            etype,
            kvno,
            cipher,
        })
    }
}
der_codec!(EncryptedData, "EncryptedData");

/// `EncryptionKey ::= SEQUENCE { keytype [0] Int32, keyvalue [1] OCTET STRING }`.
///
/// Session keys and subkeys inside decrypted parts. `Debug` does not print
/// the key bytes so that keys do not end up in logs.
#[derive(Clone, PartialEq, Eq, Hash, Default)]
pub struct EncryptionKey {
    /// Key (encryption) type, one of [`super::constants::etype`].
    pub keytype: i32,
    /// Raw key bytes.
    pub keyvalue: Vec<u8>,
}

impl std::fmt::Debug for EncryptionKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("EncryptionKey")
            .field("keytype", &self.keytype)
            .field("keyvalue", &format_args!("<{} bytes>", self.keyvalue.len()))
            .finish()
    }
}

impl Der for EncryptionKey {
    fn to_der(&self) -> Vec<u8> {
        SeqEncoder::new()
            .field(0, &enc_int(self.keytype.into()))
            .field(1, &enc_octets(&self.keyvalue))
            .finish()
    }
    fn from_tlv(t: Tlv<'_>, _what: &'static str) -> Res<Self> {
        let mut s = SeqDecoder::new(t, "EncryptionKey")?;
        let keytype = s.req(0, "keytype", dec_i32)?;
        let keyvalue = s.req(1, "keyvalue", dec_octets)?;
        s.finish()?;
        Ok(EncryptionKey { keytype, keyvalue })
    }
}
der_codec!(EncryptionKey, "EncryptionKey");

/// `Checksum ::= SEQUENCE { cksumtype [0] Int32, checksum [1] OCTET STRING }`.
///
/// Authenticator checksums, PA-FOR-USER checksums, PAC-independent MACs.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Default)]
pub struct Checksum {
    /// Checksum type, one of [`super::constants::cksumtype`] (e.g. -138 HMAC-MD5).
    pub cksumtype: i32,
    /// Checksum bytes.
    pub checksum: Vec<u8>,
}

impl Der for Checksum {
    fn to_der(&self) -> Vec<u8> {
        SeqEncoder::new()
            .field(0, &enc_int(self.cksumtype.into()))
            .field(1, &enc_octets(&self.checksum))
            .finish()
    }
    fn from_tlv(t: Tlv<'_>, _what: &'static str) -> Res<Self> {
        let mut s = SeqDecoder::new(t, "Checksum")?;
        let cksumtype = s.req(0, "cksumtype", dec_i32)?;
        let checksum = s.req(1, "checksum", dec_octets)?;
        s.finish()?;
        Ok(Checksum {
            cksumtype,
            checksum,
        })
    }
}
der_codec!(Checksum, "Checksum");

/// `PA-DATA ::= SEQUENCE { padata-type [1] Int32, padata-value [2] OCTET STRING }`.
///
/// Pre-authentication data in requests, replies and KRB-ERROR e-data. Note
/// that the tags start at 1. The value is opaque here; decode it with the
/// type matching `padata_type` (see [`super::pa`]).
#[derive(Debug, Clone, PartialEq, Eq, Hash, Default)]
pub struct PaData {
    /// PA type, one of [`super::constants::padata`].
    pub padata_type: i32,
    /// The (usually DER-encoded) value.
    pub value: Vec<u8>,
}

impl PaData {
    /// Builds a PA-DATA element.
    pub fn new(padata_type: i32, value: Vec<u8>) -> Self {
        PaData { padata_type, value }
    }

    /// The first element of `list` with type `padata_type`.
    pub fn find(list: &[PaData], padata_type: i32) -> Option<&PaData> {
        list.iter().find(|p| p.padata_type == padata_type)
    }
}

impl Der for PaData {
    fn to_der(&self) -> Vec<u8> {
        SeqEncoder::new()
            .field(1, &enc_int(self.padata_type.into()))
            .field(2, &enc_octets(&self.value))
            .finish()
    }
    fn from_tlv(t: Tlv<'_>, _what: &'static str) -> Res<Self> {
        let mut s = SeqDecoder::new(t, "PA-DATA")?;
        let padata_type = s.req(1, "padata-type", dec_i32)?;
        let value = s.req(2, "padata-value", dec_octets)?;
        s.finish()?;
        Ok(PaData { padata_type, value })
    }
}
der_codec!(PaData, "PA-DATA");

/// One element of `AuthorizationData`: `SEQUENCE { ad-type [0] Int32, ad-data [1] OCTET STRING }`.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Default)]
pub struct AuthorizationDataEntry {
    /// AD type, one of [`super::constants::ad_type`] (128 = PAC).
    pub ad_type: i32,
    /// The element's data, opaque here.
    pub ad_data: Vec<u8>,
}

impl Der for AuthorizationDataEntry {
    fn to_der(&self) -> Vec<u8> {
        SeqEncoder::new()
            .field(0, &enc_int(self.ad_type.into()))
            .field(1, &enc_octets(&self.ad_data))
            .finish()
    }
    fn from_tlv(t: Tlv<'_>, _what: &'static str) -> Res<Self> {
        let mut s = SeqDecoder::new(t, "AuthorizationData")?;
        let ad_type = s.req(0, "ad-type", dec_i32)?;
        let ad_data = s.req(1, "ad-data", dec_octets)?;
        s.finish()?;
        Ok(AuthorizationDataEntry { ad_type, ad_data })
    }
}
der_codec!(AuthorizationDataEntry, "AuthorizationData element");

/// `AuthorizationData ::= SEQUENCE OF { ad-type, ad-data }`.
///
/// Carried in tickets and authenticators; also the contents of an
/// AD-IF-RELEVANT element (which is how the PAC is wrapped). Nested
/// containers are not decoded automatically: call
/// [`AuthorizationData::decode`] on an entry's `ad_data` when its type says
/// so, which keeps decoding depth under the caller's control.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Default)]
pub struct AuthorizationData(pub Vec<AuthorizationDataEntry>);

/// `AD-IF-RELEVANT ::= AuthorizationData` (RFC 4120 §5.2.6.1).
pub type AdIfRelevant = AuthorizationData;

impl AuthorizationData {
    /// The first element with type `ad_type`.
    pub fn find(&self, ad_type: i32) -> Option<&AuthorizationDataEntry> {
        self.0.iter().find(|e| e.ad_type == ad_type)
    }
}

impl Der for AuthorizationData {
    fn to_der(&self) -> Vec<u8> {
        enc_seq_of(self.0.iter().map(Der::to_der))
    }
    fn from_tlv(t: Tlv<'_>, what: &'static str) -> Res<Self> {
        dec_seq_of(t, what, |e| AuthorizationDataEntry::from_tlv(e, what)).map(AuthorizationData)
    }
}
der_codec!(AuthorizationData, "AuthorizationData");

/// One `LastReq` element: `SEQUENCE { lr-type [0] Int32, lr-value [1] KerberosTime }`.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Default)]
pub struct LastReqEntry {
    /// What the time refers to (RFC 4120 §5.4.2; 0 = no information).
    pub lr_type: i32,
    /// The time; MIT sends 19700101000000Z with type 0.
    pub lr_value: KerberosTime,
}

impl Der for LastReqEntry {
    fn to_der(&self) -> Vec<u8> {
        SeqEncoder::new()
            .field(0, &enc_int(self.lr_type.into()))
            .field(1, &self.lr_value.encode())
            .finish()
    }
    fn from_tlv(t: Tlv<'_>, _what: &'static str) -> Res<Self> {
        let mut s = SeqDecoder::new(t, "LastReq")?;
        let lr_type = s.req(0, "lr-type", dec_i32)?;
        let lr_value = s.req(1, "lr-value", KerberosTime::from_tlv)?;
        s.finish()?;
        Ok(LastReqEntry { lr_type, lr_value })
    }
}
der_codec!(LastReqEntry, "LastReq element");

/// `LastReq ::= SEQUENCE OF { lr-type, lr-value }`, in the KDC reply's
/// encrypted part. RFC 4120 requires it; a KDC with nothing to say sends one
/// entry `{ 0, 19700101000000Z }` like MIT, or an empty sequence.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Default)]
pub struct LastReq(pub Vec<LastReqEntry>);

impl Der for LastReq {
    fn to_der(&self) -> Vec<u8> {
        enc_seq_of(self.0.iter().map(Der::to_der))
    }
    fn from_tlv(t: Tlv<'_>, what: &'static str) -> Res<Self> {
        dec_seq_of(t, what, |e| LastReqEntry::from_tlv(e, what)).map(LastReq)
    }
}
der_codec!(LastReq, "LastReq");

/// `TransitedEncoding ::= SEQUENCE { tr-type [0] Int32, contents [1] OCTET STRING }`.
///
/// The realms a cross-realm ticket passed through (type 1 =
/// DOMAIN-X500-COMPRESS; empty contents for a local ticket).
#[derive(Debug, Clone, PartialEq, Eq, Hash, Default)]
pub struct TransitedEncoding {
    /// Encoding type (1 = DOMAIN-X500-COMPRESS).
    pub tr_type: i32,
    /// Encoded realm list.
    pub contents: Vec<u8>,
}

impl Der for TransitedEncoding {
    fn to_der(&self) -> Vec<u8> {
        SeqEncoder::new()
            .field(0, &enc_int(self.tr_type.into()))
            .field(1, &enc_octets(&self.contents))
            .finish()
    }
    fn from_tlv(t: Tlv<'_>, _what: &'static str) -> Res<Self> {
        let mut s = SeqDecoder::new(t, "TransitedEncoding")?;
        let tr_type = s.req(0, "tr-type", dec_i32)?;
        let contents = s.req(1, "contents", dec_octets)?;
        s.finish()?;
        Ok(TransitedEncoding { tr_type, contents })
    }
}
der_codec!(TransitedEncoding, "TransitedEncoding");

/// Decodes `HostAddresses` (SEQUENCE OF HostAddress).
pub(super) fn dec_addresses(t: Tlv<'_>, what: &'static str) -> Res<Vec<HostAddress>> {
    dec_seq_of(t, what, |e| HostAddress::from_tlv(e, what))
}

/// Encodes `HostAddresses`.
pub(super) fn enc_addresses(a: &[HostAddress]) -> Vec<u8> {
    enc_seq_of(a.iter().map(Der::to_der))
}

/// Decodes `SEQUENCE OF PA-DATA` (METHOD-DATA, padata fields).
pub(super) fn dec_padata_list(t: Tlv<'_>, what: &'static str) -> Res<Vec<PaData>> {
    dec_seq_of(t, what, |e| PaData::from_tlv(e, what))
}

/// Encodes `SEQUENCE OF PA-DATA`.
pub(super) fn enc_padata_list(a: &[PaData]) -> Vec<u8> {
    enc_seq_of(a.iter().map(Der::to_der))
}

/// Decodes a `Realm` / `KerberosString` field.
pub(super) fn dec_realm(t: Tlv<'_>, what: &'static str) -> Res<String> {
    dec_string(t, what)
}
