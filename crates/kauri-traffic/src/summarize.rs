//! Captures into summaries: `kauri traffic summarize CAPTURE` reads a pcap or pcapng file
//! ([`summarize_capture`]) or tshark's PDML ([`summarize_pdml`]) and writes one anonymised
//! [`Packet`] line per application message, in Samba's summary format.
//!
//! Host ids are small integers given to IP addresses in the order they first appear (the
//! source of a packet before its destination, every IP packet counting, summarised or
//! not). Stream numbers count TCP connections and UDP conversations separately, from 0,
//! in the order their first packet appears, as protocol analysers number them; a SYN with
//! a new initial sequence number on a known address and port pair starts a new TCP
//! stream. The IP protocol column is the IPv4 protocol number in hex (`06`, `11`), empty
//! for IPv6, as in the reference summaries.
//!
//! A capture read here gives one line per application message, timed by the frame that
//! completes it: TCP streams are reassembled, so a message split over segments gives one
//! line, and several messages in one segment give one line each. (tshark's PDML, as
//! Samba's summarizer reads it, gives one line per frame, from the frame's last message.)
//!
//! A damaged capture is summarised as far as it can be read: the statistics say how many
//! frames were cut short, how many messages were malformed, and why reading stopped.

use std::borrow::Cow;
use std::collections::{BTreeMap, HashMap};
use std::fmt;
use std::hash::Hash;
use std::io::BufRead;
use std::net::IpAddr;

use serde::{Deserialize, Serialize};

use crate::capture::defrag::Defragmenter;
use crate::capture::ip::{self, IpPacket};
use crate::capture::link::{self, Network};
use crate::capture::tcp::{self, Piece, Reassembler};
use crate::capture::{Capture, CaptureError, Frame};
use crate::dissect::stream::PduStream;
use crate::dissect::{app_for_ports, App, Outcome, RecordKind, Session, Transport};
use crate::pdml::PdmlError;
use crate::summary::{Packet, Timestamp};

/// A capture's summary: its lines and what happened to its frames.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Summary {
    /// The summary lines, in capture order.
    pub packets: Vec<Packet>,
    /// Counts of frames read, summarised and skipped.
    pub stats: CaptureStats,
}

/// What happened to a capture's frames, so the user sees how much of it the summary
/// covers. Every frame is either `summarised` or `ignored`; the other counts overlap them.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct CaptureStats {
    /// Frames (or PDML packets) read.
    pub frames: u64,
    /// Frames that gave at least one summary line.
    pub summarised: u64,
    /// Summary lines written (a frame may carry several messages).
    pub lines: u64,
    /// Frames that gave no line: not IP, neither TCP nor UDP, no payload, a protocol the
    /// summary does not list, or a segment of a message completed in a later frame.
    pub ignored: u64,
    /// Of the ignored frames, those with no IPv4 or IPv6 packet.
    pub not_ip: u64,
    /// Frames cut short by the capture's snap length, plus one when the file itself ends
    /// inside a record.
    pub truncated: u64,
    /// Lines for messages that are not valid for their protocol.
    pub malformed: u64,
    /// Lines for messages whose content is encrypted (`*** Unknown ***`).
    pub unreadable: u64,
    /// Messages of protocols the summary does not list, by protocol.
    pub other_protocols: BTreeMap<String, u64>,
    /// Why reading stopped before the end of the input, if it did.
    pub stopped_early: Option<String>,
}

impl fmt::Display for CaptureStats {
    /// `read 120 frames, 80 summarised (85 lines), 40 ignored, 2 truncated, 0 malformed`,
    /// then the unreadable count and the reason reading stopped, when there are any.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "read {} frames, {} summarised ({} lines), {} ignored, {} truncated, {} malformed",
            self.frames, self.summarised, self.lines, self.ignored, self.truncated, self.malformed
        )?;
        if self.unreadable > 0 {
            write!(f, ", {} unreadable", self.unreadable)?;
        }
        if let Some(why) = &self.stopped_early {
            write!(f, "; stopped early: {why}")?;
        }
        Ok(())
    }
}

/// Why no summary could be made at all.
#[derive(Debug, thiserror::Error)]
pub enum SummarizeError {
    /// The input is not a readable pcap or pcapng capture.
    #[error("{0}")]
    Capture(#[from] CaptureError),
    /// The input is not readable PDML.
    #[error("{0}")]
    Pdml(#[from] PdmlError),
}

/// Gives each address a small integer, 1, 2, 3, … in order of first appearance.
#[derive(Debug, Clone)]
pub struct HostIds<K> {
    ids: HashMap<K, u32>,
}

impl<K> Default for HostIds<K> {
    fn default() -> Self {
        HostIds {
            ids: HashMap::new(),
        }
    }
}

impl<K: Hash + Eq> HostIds<K> {
    /// No addresses seen yet.
    pub fn new() -> HostIds<K> {
        HostIds::default()
    }

    /// The id of an address, given now if it is new.
    pub fn id(&mut self, key: K) -> u32 {
        let next = self.ids.len() as u32 + 1;
        *self.ids.entry(key).or_insert(next)
    }
}

/// Summarises a pcap or pcapng capture held in memory. Both byte orders, microsecond and
/// nanosecond pcap, and any pcapng timestamp resolution are read. A capture cut off or
/// corrupt part way gives the lines read so far, with `stats.stopped_early` set.
pub fn summarize_capture(bytes: &[u8]) -> Result<Summary, SummarizeError> {
    let capture = Capture::open(bytes)?;
    let mut driver = Driver::default();
    for item in capture {
        match item {
            Ok(frame) => driver.frame(&frame),
            Err(e) => {
                if matches!(e, CaptureError::CutOff { .. }) {
                    driver.summary.stats.truncated += 1;
                }
                driver.summary.stats.stopped_early = Some(e.to_string());
            }
        }
    }
    Ok(driver.summary)
}

/// Summarises tshark's PDML (`tshark -r CAPTURE -T pdml`), as Samba's summarizer does.
pub fn summarize_pdml(reader: impl BufRead) -> Result<Summary, SummarizeError> {
    Ok(crate::pdml::summarize(reader)?)
}

type Endpoint = (IpAddr, u16);

/// A conversation's key: its two endpoints, lower first.
fn conversation(a: Endpoint, b: Endpoint) -> (Endpoint, Endpoint) {
    if a <= b {
        (a, b)
    } else {
        (b, a)
    }
}

/// One TCP connection.
#[derive(Debug)]
struct TcpConversation {
    stream: u64,
    session: Session,
    directions: [(Reassembler, PduStream); 2],
    /// The initial sequence number of each direction's SYN.
    syn: [Option<u32>; 2],
    /// A FIN or RST was seen.
    closing: bool,
}

impl TcpConversation {
    fn new(stream: u64, app: Option<App>) -> TcpConversation {
        TcpConversation {
            stream,
            session: Session::new(app),
            directions: [
                (Reassembler::new(), PduStream::new()),
                (Reassembler::new(), PduStream::new()),
            ],
            syn: [None, None],
            closing: false,
        }
    }
}

/// The columns every line of one frame shares.
struct LineHead {
    timestamp: Timestamp,
    ip_protocol: String,
    src: u32,
    dest: u32,
}

#[derive(Debug, Default)]
struct Driver {
    summary: Summary,
    hosts: HostIds<IpAddr>,
    defrag: Defragmenter,
    tcp: HashMap<(Endpoint, Endpoint), TcpConversation>,
    next_tcp: u64,
    udp: HashMap<(Endpoint, Endpoint), (u64, Session)>,
    next_udp: u64,
}

impl Driver {
    fn frame(&mut self, frame: &Frame<'_>) {
        let stats = &mut self.summary.stats;
        stats.frames += 1;
        if frame.is_truncated() {
            stats.truncated += 1;
        }
        let Some(net) = link::network(frame.link, frame.data) else {
            stats.not_ip += 1;
            stats.ignored += 1;
            return;
        };
        let Ok(mut packet) = ip::parse(net) else {
            stats.ignored += 1;
            return;
        };
        let mut src = self.hosts.id(packet.src);
        let mut dest = self.hosts.id(packet.dst);
        let mut ipv4 = matches!(net, Network::Ipv4(_));
        let mut ip_protocol = packet.protocol;
        if let Some((a, b)) = ip::quoted_addresses(&packet) {
            self.hosts.id(a);
            self.hosts.id(b);
        }
        // IP in IP: the inner packet is the one summarised.
        if matches!(packet.protocol, 4 | 41) && packet.fragment.is_none() {
            let inner = if packet.protocol == 4 {
                Network::Ipv4(packet.payload)
            } else {
                Network::Ipv6(packet.payload)
            };
            if let Ok(p) = ip::parse(inner) {
                src = self.hosts.id(p.src);
                dest = self.hosts.id(p.dst);
                if packet.protocol == 4 {
                    // An inner IPv4 header's protocol field is the last one shown.
                    ipv4 = true;
                    ip_protocol = p.protocol;
                }
                packet = p;
            }
        }
        let head = LineHead {
            timestamp: frame.timestamp,
            ip_protocol: if ipv4 {
                format!("{ip_protocol:02x}")
            } else {
                String::new()
            },
            src,
            dest,
        };
        let (payload, declared): (Cow<'_, [u8]>, usize) = match packet.fragment {
            None => (Cow::Borrowed(packet.payload), packet.payload_len),
            Some(frag) => match self.defrag.add(
                packet.src,
                packet.dst,
                packet.protocol,
                frag,
                packet.payload,
                packet.payload_len,
            ) {
                Some(whole) => {
                    let n = whole.len();
                    (Cow::Owned(whole), n)
                }
                None => {
                    self.summary.stats.ignored += 1;
                    return;
                }
            },
        };
        let outcomes = match packet.protocol {
            ip::TCP => self.tcp_segment(&packet, &payload, declared),
            ip::UDP => self.udp_datagram(&packet, &payload),
            _ => None,
        };
        match outcomes {
            Some((stream, outcomes)) => self.emit(&head, stream, outcomes),
            None => self.summary.stats.ignored += 1,
        }
    }

    fn udp_datagram(
        &mut self,
        packet: &IpPacket<'_>,
        payload: &[u8],
    ) -> Option<(u64, Vec<Outcome>)> {
        let u = ip::udp(payload)?;
        let key = conversation((packet.src, u.src_port), (packet.dst, u.dst_port));
        let next = &mut self.next_udp;
        let (stream, session) = self.udp.entry(key).or_insert_with(|| {
            let s = *next;
            *next += 1;
            (
                s,
                Session::new(app_for_ports(Transport::Udp, u.src_port, u.dst_port)),
            )
        });
        if u.payload_len == 0 {
            return Some((*stream, Vec::new()));
        }
        let cut = u.payload.len() < u.payload_len;
        Some((*stream, session.datagram(u.payload, cut)))
    }

    fn tcp_segment(
        &mut self,
        packet: &IpPacket<'_>,
        payload: &[u8],
        declared: usize,
    ) -> Option<(u64, Vec<Outcome>)> {
        let seg = tcp::parse(payload, declared)?;
        let from = (packet.src, seg.src_port);
        let key = conversation(from, (packet.dst, seg.dst_port));
        let dir = usize::from(key.0 != from);
        let opening = seg.flags & tcp::SYN != 0 && seg.flags & tcp::ACK == 0;
        let reused = self.tcp.get(&key).is_some_and(|c| {
            opening
                && match c.syn[dir] {
                    Some(isn) => isn != seg.seq,
                    None => c.closing,
                }
        });
        if reused || !self.tcp.contains_key(&key) {
            let app = app_for_ports(Transport::Tcp, seg.src_port, seg.dst_port);
            self.tcp
                .insert(key, TcpConversation::new(self.next_tcp, app));
            self.next_tcp += 1;
        }
        let conv = self.tcp.get_mut(&key)?;
        if opening {
            conv.syn[dir] = Some(seg.seq);
        }
        if seg.flags & (tcp::FIN | tcp::RST) != 0 {
            conv.closing = true;
        }
        let (reassembler, stream) = &mut conv.directions[dir];
        let pieces = reassembler.push(&seg);
        let mut outcomes = Vec::new();
        if conv.session.frames_tcp() {
            for piece in pieces {
                outcomes.extend(stream.feed(&mut conv.session, piece));
            }
        } else if let (Some(App::Other(name)), false) = (conv.session.app, pieces.is_empty()) {
            if pieces.iter().any(|p| matches!(p, Piece::Data(_))) {
                outcomes.push(Outcome::Ignored(name));
            }
        }
        Some((conv.stream, outcomes))
    }

    fn emit(&mut self, head: &LineHead, stream: u64, outcomes: Vec<Outcome>) {
        let stats = &mut self.summary.stats;
        let mut lines = 0;
        for outcome in outcomes {
            match outcome {
                Outcome::Record(r) => {
                    match r.kind {
                        RecordKind::Malformed => stats.malformed += 1,
                        RecordKind::Unreadable => stats.unreadable += 1,
                        RecordKind::Decoded => {}
                    }
                    self.summary.packets.push(Packet {
                        timestamp: head.timestamp,
                        ip_protocol: head.ip_protocol.clone(),
                        stream: stream.to_string(),
                        src: head.src,
                        dest: head.dest,
                        protocol: r.protocol.to_string(),
                        opcode: r.opcode,
                        desc: r.desc,
                        extra: r.extra,
                    });
                    lines += 1;
                }
                Outcome::Ignored(name) => {
                    *stats.other_protocols.entry(name.to_string()).or_default() += 1;
                }
            }
        }
        if lines > 0 {
            stats.summarised += 1;
            stats.lines += lines;
        } else {
            stats.ignored += 1;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn host_ids_in_order_of_appearance() {
        let mut h = HostIds::new();
        assert_eq!(h.id("b"), 1);
        assert_eq!(h.id("a"), 2);
        assert_eq!(h.id("b"), 1);
    }

    #[test]
    fn stats_line() {
        let s = CaptureStats {
            frames: 3,
            summarised: 1,
            lines: 2,
            ignored: 2,
            truncated: 1,
            stopped_early: Some("cut".into()),
            ..CaptureStats::default()
        };
        assert_eq!(
            s.to_string(),
            "read 3 frames, 1 summarised (2 lines), 2 ignored, 1 truncated, 0 malformed; stopped early: cut"
        );
    }

    #[test]
    fn not_a_capture() {
        assert!(summarize_capture(b"hello world").is_err());
    }
}
