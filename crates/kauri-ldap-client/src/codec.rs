//! The client connection's framing: LDAP messages, inside a SASL security layer once a
//! bind negotiated one (each message a 4-byte length and the layer's token).

use bytes::BytesMut;
use kauri_auth::SecurityLayer;
use kauri_ldap_proto::codec::{FrameError, LdapCodec};
use kauri_ldap_proto::decode::DecodeError;
use kauri_ldap_proto::LdapMessage;
use tokio_util::codec::{Decoder, Encoder};

/// LDAP framing with an optional SASL security layer under it.
pub struct ClientCodec {
    ldap: LdapCodec,
    layer: Option<Box<dyn SecurityLayer>>,
    plain: BytesMut,
    max: usize,
}

impl ClientCodec {
    /// Framing for messages up to `max` bytes, no security layer yet.
    pub fn new(max: usize) -> ClientCodec {
        ClientCodec {
            ldap: LdapCodec::new(max),
            layer: None,
            plain: BytesMut::new(),
            max,
        }
    }

    /// Protects every message from now on.
    pub fn set_layer(&mut self, layer: Box<dyn SecurityLayer>) {
        self.layer = Some(layer);
    }

    /// Whether a security layer protects the connection.
    pub fn has_layer(&self) -> bool {
        self.layer.is_some()
    }
}

impl Decoder for ClientCodec {
    type Item = Result<LdapMessage, DecodeError>;
    type Error = FrameError;

    fn decode(&mut self, src: &mut BytesMut) -> Result<Option<Self::Item>, FrameError> {
        let Some(layer) = self.layer.as_mut() else {
            return self.ldap.decode(src);
        };
        loop {
            if let Some(item) = self.ldap.decode(&mut self.plain)? {
                return Ok(Some(item));
            }
            let Some(head) = src.get(..4) else {
                return Ok(None);
            };
            let len = u32::from_be_bytes([head[0], head[1], head[2], head[3]]) as usize;
            if len > self.max {
                return Err(FrameError::TooLarge {
                    size: len,
                    max: self.max,
                });
            }
            if src.len() < 4 + len {
                src.reserve(4 + len - src.len());
                return Ok(None);
            }
            let frame = src.split_to(4 + len);
            let plain = layer
                .unwrap(&frame[4..])
                .map_err(|e| FrameError::Malformed(format!("SASL security layer: {e}")))?;
            self.plain.extend_from_slice(&plain);
        }
    }
}

impl Encoder<LdapMessage> for ClientCodec {
    type Error = FrameError;

    fn encode(&mut self, msg: LdapMessage, dst: &mut BytesMut) -> Result<(), FrameError> {
        match self.layer.as_mut() {
            None => self.ldap.encode(msg, dst),
            Some(layer) => {
                let mut plain = BytesMut::new();
                self.ldap.encode(msg, &mut plain)?;
                let token = layer.wrap(&plain);
                dst.extend_from_slice(&(token.len() as u32).to_be_bytes());
                dst.extend_from_slice(&token);
                Ok(())
            }
        }
    }
}
