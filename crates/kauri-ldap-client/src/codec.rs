//! The client connection's framing: LDAP messages, inside a SASL security layer once a
//! bind negotiated one (each message a 4-byte length and the layer's token).

use bytes::BytesMut;
use kauri_auth::SecurityLayer;
use kauri_ldap_proto::codec::{FrameError, LdapCodec, SaslFraming};
use kauri_ldap_proto::decode::DecodeError;
use kauri_ldap_proto::LdapMessage;
use tokio_util::codec::{Decoder, Encoder};

/// LDAP framing with an optional SASL security layer under it.
pub struct ClientCodec {
    ldap: LdapCodec,
    sasl: Option<SaslFraming>,
    max: usize,
}

impl ClientCodec {
    /// Framing for messages up to `max` bytes, no security layer yet.
    pub fn new(max: usize) -> ClientCodec {
        ClientCodec {
            ldap: LdapCodec::new(max),
            sasl: None,
            max,
        }
    }

    /// Protects every message from now on.
    pub fn set_layer(&mut self, layer: Box<dyn SecurityLayer>) {
        self.sasl = Some(SaslFraming::new(layer, self.max));
    }

    /// Whether a security layer protects the connection.
    pub fn has_layer(&self) -> bool {
        self.sasl.is_some()
    }
}

impl Decoder for ClientCodec {
    type Item = Result<LdapMessage, DecodeError>;
    type Error = FrameError;

    fn decode(&mut self, src: &mut BytesMut) -> Result<Option<Self::Item>, FrameError> {
        match self.sasl.as_mut() {
            Some(sasl) => sasl.decode(&mut self.ldap, src),
            None => self.ldap.decode(src),
        }
    }
}

impl Encoder<LdapMessage> for ClientCodec {
    type Error = FrameError;

    fn encode(&mut self, msg: LdapMessage, dst: &mut BytesMut) -> Result<(), FrameError> {
        match self.sasl.as_mut() {
            None => self.ldap.encode(msg, dst),
            Some(sasl) => {
                let mut plain = BytesMut::new();
                self.ldap.encode(msg, &mut plain)?;
                sasl.wrap_into(&plain, dst);
                Ok(())
            }
        }
    }
}
