//! Kerberos V5 message encoding and decoding (RFC 4120 plus the Microsoft,
//! RFC 3244 and GSS-API pieces a KDC, a kpasswd server and a GSS acceptor
//! need). No cryptography here: encrypted parts are opaque bytes in
//! [`EncryptedData`]; decrypt them elsewhere and decode the plaintext with the
//! matching type (e.g. [`EncKdcRepPart`], [`EncTicketPart`], [`Authenticator`]).
//!
//! Every type has `encode(&self) -> Vec<u8>` (DER) and
//! `decode(&[u8]) -> Result<Self, MsgError>`. Decoders are written for
//! hostile input: they never panic, copy only bytes that are present, accept
//! definite lengths of at most four length bytes, refuse trailing bytes after
//! the top-level element and inside EXPLICIT tags, and skip context-tagged
//! fields they do not know (RFC 4120 extensibility). Nesting follows the
//! fixed schema, so decoding depth is bounded.
//!
//! Raw bytes kept on decode: [`KdcReqBody::raw`] (checksummed by the TGS
//! authenticator, PA-FOR-USER and FAST) and [`Ticket::raw`] (tickets are
//! forwarded verbatim). When `raw` is `Some`, `encode()` emits it unchanged.
#![warn(missing_docs)]

/// Generates the public `encode`/`decode` pair of a type from its `Der` impl.
macro_rules! der_codec {
    ($t:ty, $name:literal) => {
        impl $t {
            #[doc = concat!("Encodes this ", $name, " as DER.")]
            pub fn encode(&self) -> Vec<u8> {
                <$t as super::der::Der>::to_der(self)
            }

            #[doc = concat!("Decodes one DER ", $name, ", refusing trailing bytes.")]
            pub fn decode(bytes: &[u8]) -> Result<Self, super::error::MsgError> {
                super::der::decode_all(bytes, $name, |t| {
                    <$t as super::der::Der>::from_tlv(t, $name)
                })
            }
        }
    };
}

mod der;

pub mod ap;
pub mod constants;
pub mod error;
pub mod flags;
pub mod gss;
pub mod kdc;
pub mod kpasswd;
pub mod krb_error;
pub mod krb_priv;
pub mod pa;
pub mod ticket;
pub mod time;
pub mod types;

pub use ap::{ApRep, ApReq, Authenticator, EncApRepPart};
pub use error::MsgError;
pub use flags::{ap_options, flag_bit, kdc_options, pac_options, ticket_flags, KerberosFlags};
pub use gss::{GssChecksum, GssKrb5Token, GssMech};
pub use kdc::{application_tag, EncKdcRepPart, KdcKind, KdcRep, KdcReq, KdcReqBody};
pub use kpasswd::{AdPolicyInfo, ChangePasswdData, KpasswdReply, KpasswdRequest, KpasswdResult};
pub use krb_error::{KerbErrorData, KerbExtError, KrbError};
pub use krb_priv::{EncKrbPrivPart, KrbPriv};
pub use pa::{
    EtypeInfo, EtypeInfo2, EtypeInfo2Entry, EtypeInfoEntry, KerbAdRestrictionEntry,
    KerbAdRestrictionList, KerbPaPacRequest, MethodData, PaEncTsEnc, PaForUser, PaPacOptions,
    PaSupportedEnctypes,
};
pub use ticket::{EncTicketPart, Ticket};
pub use time::KerberosTime;
pub use types::{
    AdIfRelevant, AuthorizationData, AuthorizationDataEntry, Checksum, EncryptedData,
    EncryptionKey, HostAddress, LastReq, LastReqEntry, PaData, PrincipalName, TransitedEncoding,
};

#[cfg(test)]
mod fixture_tests;
#[cfg(test)]
mod tests;
