//! Messages from one direction of a TCP conversation: the in-order pieces of the byte
//! stream are buffered until a whole message (as the protocol frames it) is there, so a
//! message split over segments is dissected once, and several in one segment each once.
//!
//! Where bytes are missing (cut by the snap length, or never captured), the message they
//! belong to is dissected from what there is, and the stream stays in step when the
//! message's length is known; otherwise it waits for a segment that starts a message.
//! Buffering is bounded: a message declared larger than [`MAX_BUFFERED`] is dissected
//! from its first bytes and the rest skipped.

use crate::capture::tcp::Piece;

use super::{Framing, Outcome, Record, Session};

/// Most bytes buffered for one message.
pub const MAX_BUFFERED: usize = 16 << 20;
/// How much of an oversized message is kept to dissect its start.
const OVERSIZED_PREFIX: usize = 64 << 10;

/// One direction's message framing.
#[derive(Debug, Default)]
pub struct PduStream {
    buf: Vec<u8>,
    /// Bytes still to drop: the rest of a message already dissected.
    skip: u64,
    /// Lost step: wait for bytes that start a message.
    resync: bool,
}

impl PduStream {
    /// A direction at the start of its stream.
    pub fn new() -> PduStream {
        PduStream::default()
    }

    /// Adds one piece of the stream; returns the outcomes of the messages it completes.
    pub fn feed(&mut self, session: &mut Session, piece: Piece) -> Vec<Outcome> {
        let mut out = Vec::new();
        match piece {
            Piece::Data(bytes) => self.data(session, &bytes, &mut out),
            Piece::Missing(n) => self.missing(session, n, &mut out),
        }
        out
    }

    fn data(&mut self, session: &mut Session, bytes: &[u8], out: &mut Vec<Outcome>) {
        let mut data = bytes;
        if self.skip > 0 {
            let n = self.skip.min(data.len() as u64) as usize;
            data = &data[n..];
            self.skip -= n as u64;
        }
        if data.is_empty() {
            return;
        }
        if self.resync {
            if matches!(session.framing(data), Framing::NotAStart) {
                return;
            }
            self.resync = false;
        }
        self.buf.extend_from_slice(data);
        // Messages are taken from a cursor and the buffer compacted once at the end, so
        // many small messages in one large buffer cost linear time.
        let mut at = 0;
        while at < self.buf.len() {
            let rest = &self.buf[at..];
            match session.framing(rest) {
                Framing::Pdu(n) if n > 0 && n <= rest.len() => {
                    out.extend(session.tcp_pdu(&rest[..n], false));
                    at += n;
                }
                Framing::Pdu(n) if n > MAX_BUFFERED && rest.len() >= OVERSIZED_PREFIX => {
                    out.extend(session.tcp_pdu(rest, true));
                    self.skip = (n - rest.len()) as u64;
                    at = self.buf.len();
                }
                Framing::Pdu(n) if n > 0 => break,
                Framing::NeedMore => break,
                Framing::Pdu(_) | Framing::NotAStart => {
                    if let Some(name) = protocol_name(session) {
                        out.push(Outcome::Record(Record::malformed(name)));
                    }
                    at = self.buf.len();
                    self.resync = true;
                }
            }
        }
        self.buf.drain(..at);
    }

    fn missing(&mut self, session: &mut Session, n: u64, out: &mut Vec<Outcome>) {
        if self.skip > 0 {
            if n <= self.skip {
                self.skip -= n;
                return;
            }
            // The missing run ends past the skipped message: the next start is lost.
            self.skip = 0;
            self.resync = true;
            return;
        }
        if self.buf.is_empty() {
            self.resync = true;
            return;
        }
        match session.framing(&self.buf) {
            Framing::Pdu(len) => {
                out.extend(session.tcp_pdu(&self.buf, true));
                let have = self.buf.len() as u64 + n;
                if len as u64 >= have {
                    self.skip = len as u64 - have;
                } else {
                    self.resync = true;
                }
            }
            Framing::NeedMore | Framing::NotAStart => self.resync = true,
        }
        self.buf.clear();
    }
}

/// The protocol name written for a malformed message of the session's protocol.
fn protocol_name(session: &Session) -> Option<&'static str> {
    use super::App::*;
    Some(match session.app? {
        Ldap => "ldap",
        Cldap => "cldap",
        Dns => "dns",
        Kerberos => "kerberos",
        Smb => "smb",
        Dcerpc => "dcerpc",
        Nbns => "nbns",
        Kpasswd | Nbdgm | Other(_) => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::super::App;
    use super::*;

    #[test]
    fn messages_split_and_joined() {
        let mut session = Session::new(Some(App::Dns));
        let mut s = PduStream::new();
        let q = [0u8, 12, 0, 1, 1, 0, 0, 1, 0, 0, 0, 0, 0, 0];
        // Split over two pieces: one outcome, when the second arrives.
        assert!(s
            .feed(&mut session, Piece::Data(q[..5].to_vec()))
            .is_empty());
        assert_eq!(s.feed(&mut session, Piece::Data(q[5..].to_vec())).len(), 1);
        // Two in one piece.
        let two = [q, q].concat();
        assert_eq!(s.feed(&mut session, Piece::Data(two)).len(), 2);
        // Cut: dissected from what is there, the rest skipped, then in step again.
        assert_eq!(s.feed(&mut session, Piece::Data(q[..6].to_vec())).len(), 0);
        assert_eq!(s.feed(&mut session, Piece::Missing(4)).len(), 1);
        assert_eq!(
            s.feed(&mut session, Piece::Data([&q[10..], &q[..]].concat()))
                .len(),
            1
        );
    }
}
