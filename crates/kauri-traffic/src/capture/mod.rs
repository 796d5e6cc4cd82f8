//! Reading packet captures: libpcap and pcapng files, their link layers, IPv4 and IPv6
//! (with fragment reassembly), UDP and TCP headers, and TCP stream reassembly.
//!
//! The file formats are read by this crate's own strict reader rather than a general
//! capture library. A summary needs only the two record layouts of libpcap and four block
//! types of pcapng, read from bytes already in memory; reading them here lets every frame
//! borrow its bytes from the input (nothing is copied or allocated per frame), checks every
//! declared length against the bytes that remain *before* using it, and stops at a cut-off
//! or corrupt tail with the frames read so far plus the reason, which is what a summary of
//! a damaged capture wants. It also keeps the parser-combinator dependency tree of the
//! crates.io readers out of the build, and the fuzz target covers every line of it.

pub mod defrag;
pub mod ip;
pub mod link;
pub mod pcap;
pub mod pcapng;
pub mod tcp;

use crate::summary::Timestamp;

/// A libpcap link-layer header type (`LINKTYPE_*`), which says how a frame's bytes begin.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct LinkType(pub u16);

impl LinkType {
    /// BSD loopback: a four-byte address family in the capturing host's byte order.
    pub const NULL: LinkType = LinkType(0);
    /// Ethernet II (and 802.1Q-tagged Ethernet).
    pub const ETHERNET: LinkType = LinkType(1);
    /// Raw IP as some BSDs numbered it.
    pub const RAW_BSD12: LinkType = LinkType(12);
    /// Raw IP as other BSDs numbered it.
    pub const RAW_BSD14: LinkType = LinkType(14);
    /// Raw IPv4 or IPv6, told apart by the version nibble.
    pub const RAW: LinkType = LinkType(101);
    /// OpenBSD loopback: the address family in network byte order.
    pub const LOOP: LinkType = LinkType(108);
    /// Linux "cooked" capture, version 1 (`tcpdump -i any`).
    pub const LINUX_SLL: LinkType = LinkType(113);
    /// Raw IPv4 only.
    pub const IPV4: LinkType = LinkType(228);
    /// Raw IPv6 only.
    pub const IPV6: LinkType = LinkType(229);
    /// Linux "cooked" capture, version 2.
    pub const LINUX_SLL2: LinkType = LinkType(276);
}

/// One captured frame, borrowed from the capture's bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Frame<'a> {
    /// When it was captured.
    pub timestamp: Timestamp,
    /// How its bytes begin.
    pub link: LinkType,
    /// The captured bytes (possibly fewer than were on the wire).
    pub data: &'a [u8],
    /// How many bytes the frame had on the wire.
    pub orig_len: u32,
}

impl Frame<'_> {
    /// Whether the snap length cut the frame short, so its last protocol may be incomplete.
    pub fn is_truncated(&self) -> bool {
        (self.data.len() as u64) < u64::from(self.orig_len)
    }
}

/// Why a capture could not be read, or why reading stopped before its end.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum CaptureError {
    /// The first bytes are neither a libpcap nor a pcapng magic number.
    #[error("not a pcap or pcapng capture (it starts with {0:02x?})")]
    NotACapture(Vec<u8>),
    /// The file ends inside a header, record or block.
    #[error("the capture is cut off inside {what} at byte {offset}")]
    CutOff {
        /// What was being read.
        what: &'static str,
        /// Where it starts in the file.
        offset: usize,
    },
    /// A header, record or block contradicts itself or the format.
    #[error("corrupt {what} at byte {offset}: {reason}")]
    Corrupt {
        /// What was being read.
        what: &'static str,
        /// Where it starts in the file.
        offset: usize,
        /// What is wrong with it.
        reason: String,
    },
}

/// Which of the two file formats a capture is in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    /// Classic libpcap (microsecond or nanosecond timestamps, either byte order).
    Pcap,
    /// pcapng (one or more sections, any number of interfaces).
    Pcapng,
}

#[derive(Debug)]
enum Inner<'a> {
    Pcap(pcap::Reader<'a>),
    Pcapng(pcapng::Reader<'a>),
}

/// The frames of a capture, in file order. After an error (a cut-off or corrupt tail) the
/// iteration ends: everything before it has been yielded.
#[derive(Debug)]
pub struct Capture<'a> {
    inner: Inner<'a>,
    done: bool,
}

impl<'a> Capture<'a> {
    /// Recognises the format by its magic number and reads the file header.
    pub fn open(bytes: &'a [u8]) -> Result<Capture<'a>, CaptureError> {
        let inner = if pcap::is_pcap(bytes) {
            Inner::Pcap(pcap::Reader::open(bytes)?)
        } else if pcapng::is_pcapng(bytes) {
            Inner::Pcapng(pcapng::Reader::open(bytes)?)
        } else {
            return Err(CaptureError::NotACapture(
                bytes.iter().take(4).copied().collect(),
            ));
        };
        Ok(Capture { inner, done: false })
    }

    /// The file's format.
    pub fn format(&self) -> Format {
        match self.inner {
            Inner::Pcap(_) => Format::Pcap,
            Inner::Pcapng(_) => Format::Pcapng,
        }
    }
}

impl<'a> Iterator for Capture<'a> {
    type Item = Result<Frame<'a>, CaptureError>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.done {
            return None;
        }
        let item = match &mut self.inner {
            Inner::Pcap(r) => r.next_frame(),
            Inner::Pcapng(r) => r.next_frame(),
        };
        match item {
            Ok(Some(frame)) => Some(Ok(frame)),
            Ok(None) => {
                self.done = true;
                None
            }
            Err(e) => {
                self.done = true;
                Some(Err(e))
            }
        }
    }
}

/// Reads a `u16` at `at` in the given byte order, if the bytes are there.
pub(crate) fn u16_at(data: &[u8], at: usize, big_endian: bool) -> Option<u16> {
    let b: [u8; 2] = data.get(at..at.checked_add(2)?)?.try_into().ok()?;
    Some(if big_endian {
        u16::from_be_bytes(b)
    } else {
        u16::from_le_bytes(b)
    })
}

/// Reads a `u32` at `at` in the given byte order, if the bytes are there.
pub(crate) fn u32_at(data: &[u8], at: usize, big_endian: bool) -> Option<u32> {
    let b: [u8; 4] = data.get(at..at.checked_add(4)?)?.try_into().ok()?;
    Some(if big_endian {
        u32::from_be_bytes(b)
    } else {
        u32::from_le_bytes(b)
    })
}

/// Reads a `u64` at `at` in the given byte order, if the bytes are there.
pub(crate) fn u64_at(data: &[u8], at: usize, big_endian: bool) -> Option<u64> {
    let b: [u8; 8] = data.get(at..at.checked_add(8)?)?.try_into().ok()?;
    Some(if big_endian {
        u64::from_be_bytes(b)
    } else {
        u64::from_le_bytes(b)
    })
}
