//! Framing of LDAP messages on a byte stream, for tokio.
//!
//! Only the outer TLV header is inspected to split frames: a header that is not a
//! definite-length SEQUENCE, or that declares more than the configured maximum, is a
//! [`FrameError`] (the stream cannot be resynchronised, so the server sends a notice of
//! disconnection and closes). A frame that is split correctly but does not decode is
//! yielded as an `Err` item, so the server can answer it and carry on.

use bytes::BytesMut;
use tokio_util::codec::{Decoder, Encoder};

use crate::decode::{decode_message, DecodeError};
use crate::encode::encode_into;
use crate::types::LdapMessage;

/// Default largest accepted message: 16 MiB.
pub const DEFAULT_MAX_MESSAGE: usize = 16 * 1024 * 1024;

/// A byte stream that cannot be split into LDAP messages; the connection must close.
#[derive(Debug, thiserror::Error)]
pub enum FrameError {
    /// Reading or writing the socket failed.
    #[error("I/O error: {0}")]
    Io(#[from] std::io::Error),
    /// The declared message size exceeds the limit.
    #[error("message of {size} bytes exceeds the limit of {max} bytes")]
    TooLarge {
        /// Declared size of the whole message, header included.
        size: usize,
        /// The limit.
        max: usize,
    },
    /// The outer header is not a definite-length SEQUENCE.
    #[error("malformed message framing: {0}")]
    Malformed(String),
}

/// Reads the outer header; returns the total frame size once the header is complete.
fn declared_len(buf: &[u8], max: usize) -> Result<Option<usize>, FrameError> {
    let Some(&tag) = buf.first() else {
        return Ok(None);
    };
    if tag != 0x30 {
        return Err(FrameError::Malformed(format!(
            "expected a SEQUENCE (0x30), found tag byte {tag:#04x}"
        )));
    }
    let Some(&first) = buf.get(1) else {
        return Ok(None);
    };
    let (header, len) = if first < 0x80 {
        (2usize, usize::from(first))
    } else if first == 0x80 {
        return Err(FrameError::Malformed("indefinite length".into()));
    } else {
        let n = usize::from(first & 0x7f);
        if n > 4 {
            return Err(FrameError::Malformed(format!("length field of {n} octets")));
        }
        let Some(bytes) = buf.get(2..2 + n) else {
            return Ok(None);
        };
        let len = bytes.iter().fold(0u64, |acc, b| (acc << 8) | u64::from(*b));
        (2 + n, usize::try_from(len).unwrap_or(usize::MAX))
    };
    let size = header.saturating_add(len);
    if size > max {
        return Err(FrameError::TooLarge { size, max });
    }
    Ok(Some(size))
}

/// The size of the first complete message in `buf`, `None` if more bytes are needed, or
/// an error if the stream cannot be framed (see [`FrameError`]).
pub fn frame_len(buf: &[u8], max: usize) -> Result<Option<usize>, FrameError> {
    Ok(declared_len(buf, max)?.filter(|size| buf.len() >= *size))
}

/// tokio codec for LDAP messages with a message size limit.
#[derive(Debug, Clone)]
pub struct LdapCodec {
    max_message: usize,
    scratch: Vec<u8>,
}

impl LdapCodec {
    /// A codec refusing messages larger than `max_message` bytes.
    pub fn new(max_message: usize) -> LdapCodec {
        LdapCodec {
            max_message,
            scratch: Vec::new(),
        }
    }

    /// The configured limit.
    pub fn max_message(&self) -> usize {
        self.max_message
    }
}

impl Default for LdapCodec {
    fn default() -> LdapCodec {
        LdapCodec::new(DEFAULT_MAX_MESSAGE)
    }
}

impl Decoder for LdapCodec {
    type Item = Result<LdapMessage, DecodeError>;
    type Error = FrameError;

    fn decode(&mut self, src: &mut BytesMut) -> Result<Option<Self::Item>, FrameError> {
        match declared_len(src, self.max_message)? {
            Some(size) if src.len() >= size => {
                let frame = src.split_to(size);
                Ok(Some(decode_message(&frame)))
            }
            Some(size) => {
                src.reserve(size - src.len());
                Ok(None)
            }
            None => Ok(None),
        }
    }
}

/// Encoded messages larger than this are not kept as the reusable scratch buffer.
const SCRATCH_KEEP: usize = 1024 * 1024;

impl Encoder<&LdapMessage> for LdapCodec {
    type Error = FrameError;

    fn encode(&mut self, msg: &LdapMessage, dst: &mut BytesMut) -> Result<(), FrameError> {
        self.scratch.clear();
        encode_into(msg, &mut self.scratch);
        dst.extend_from_slice(&self.scratch);
        if self.scratch.capacity() > SCRATCH_KEEP {
            self.scratch = Vec::new();
        }
        Ok(())
    }
}

impl Encoder<LdapMessage> for LdapCodec {
    type Error = FrameError;

    fn encode(&mut self, msg: LdapMessage, dst: &mut BytesMut) -> Result<(), FrameError> {
        <Self as Encoder<&LdapMessage>>::encode(self, &msg, dst)
    }
}

/// A SASL security layer under LDAP's framing (RFC 4422 section 3.7): after a bind that
/// negotiated one, every message travels as a 4-byte big-endian length and the layer's
/// token. Servers and clients stack it between the socket and [`LdapCodec`].
pub struct SaslFraming {
    layer: Box<dyn kauri_auth::SecurityLayer>,
    /// Unwrapped bytes waiting to be framed as LDAP messages.
    plain: BytesMut,
    max: usize,
}

impl SaslFraming {
    /// Framing through `layer` for tokens up to `max` bytes.
    pub fn new(layer: Box<dyn kauri_auth::SecurityLayer>, max: usize) -> SaslFraming {
        SaslFraming {
            layer,
            plain: BytesMut::new(),
            max,
        }
    }

    /// Whether the layer encrypts, not only signs.
    pub fn sealed(&self) -> bool {
        self.layer.sealed()
    }

    /// The next LDAP message from `src`, unwrapping tokens as they complete. A token that
    /// fails its check is a [`FrameError`]: the connection must close.
    pub fn decode(
        &mut self,
        ldap: &mut LdapCodec,
        src: &mut BytesMut,
    ) -> Result<Option<Result<LdapMessage, DecodeError>>, FrameError> {
        loop {
            if let Some(item) = ldap.decode(&mut self.plain)? {
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
            let plain = self
                .layer
                .unwrap(&frame[4..])
                .map_err(|e| FrameError::Malformed(format!("SASL security layer: {e}")))?;
            self.plain.extend_from_slice(&plain);
        }
    }

    /// Whether unwrapped bytes of an incomplete LDAP message wait for the next SASL
    /// buffer.
    pub fn has_pending(&self) -> bool {
        !self.plain.is_empty()
    }

    /// Wraps one encoded message into `dst`.
    pub fn wrap_into(&mut self, message: &[u8], dst: &mut BytesMut) {
        let token = self.layer.wrap(message);
        dst.extend_from_slice(&(token.len() as u32).to_be_bytes());
        dst.extend_from_slice(&token);
    }
}
