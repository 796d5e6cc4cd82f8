//! Classic libpcap files: a 24-byte file header, then records of a 16-byte header and the
//! captured bytes. The magic number gives the byte order and the timestamp unit
//! (microseconds, or nanoseconds for `a1b23c4d`); Alexey Kuznetsov's "modified" variant
//! (`a1b2cd34`) adds eight bytes to each record header.

use super::{u32_at, CaptureError, Frame, LinkType};
use crate::summary::Timestamp;

const MAGIC_MICROS: u32 = 0xa1b2_c3d4;
const MAGIC_NANOS: u32 = 0xa1b2_3c4d;
const MAGIC_MODIFIED: u32 = 0xa1b2_cd34;
const FILE_HEADER: usize = 24;

/// Whether the bytes start with a libpcap magic number, in either byte order.
pub fn is_pcap(bytes: &[u8]) -> bool {
    magic(bytes).is_some()
}

/// (big-endian, nanosecond timestamps, modified record header) from the magic number.
fn magic(bytes: &[u8]) -> Option<(bool, bool, bool)> {
    for big in [true, false] {
        match u32_at(bytes, 0, big)? {
            MAGIC_MICROS => return Some((big, false, false)),
            MAGIC_NANOS => return Some((big, true, false)),
            MAGIC_MODIFIED => return Some((big, false, true)),
            _ => {}
        }
    }
    None
}

/// Reads the records of one libpcap file.
#[derive(Debug)]
pub struct Reader<'a> {
    data: &'a [u8],
    pos: usize,
    big_endian: bool,
    nanos: bool,
    record_header: usize,
    link: LinkType,
}

impl<'a> Reader<'a> {
    /// Reads the file header.
    pub fn open(data: &'a [u8]) -> Result<Reader<'a>, CaptureError> {
        let Some((big_endian, nanos, modified)) = magic(data) else {
            return Err(CaptureError::NotACapture(
                data.iter().take(4).copied().collect(),
            ));
        };
        if data.len() < FILE_HEADER {
            return Err(CaptureError::CutOff {
                what: "the pcap file header",
                offset: 0,
            });
        }
        let major = super::u16_at(data, 4, big_endian).unwrap_or(0);
        if major != 2 {
            return Err(CaptureError::Corrupt {
                what: "the pcap file header",
                offset: 0,
                reason: format!("version {major}, expected 2"),
            });
        }
        // The link type is the low 16 bits; the upper bits may carry FCS information.
        let link = u32_at(data, 20, big_endian).unwrap_or(0);
        Ok(Reader {
            data,
            pos: FILE_HEADER,
            big_endian,
            nanos,
            record_header: if modified { 24 } else { 16 },
            link: LinkType((link & 0xffff) as u16),
        })
    }

    /// The next frame, `None` at the end, or why the rest cannot be read.
    pub fn next_frame(&mut self) -> Result<Option<Frame<'a>>, CaptureError> {
        let start = self.pos;
        let rest = &self.data[start.min(self.data.len())..];
        if rest.is_empty() {
            return Ok(None);
        }
        if rest.len() < self.record_header {
            return Err(CaptureError::CutOff {
                what: "a record header",
                offset: start,
            });
        }
        let field = |at| u32_at(rest, at, self.big_endian).unwrap_or(0);
        let (secs, frac, incl, orig) = (field(0), field(4), field(8), field(12));
        let incl = incl as usize;
        let body = self.record_header;
        if rest.len() - body < incl {
            return Err(CaptureError::CutOff {
                what: "a record's data",
                offset: start,
            });
        }
        let nanos = if self.nanos {
            frac
        } else {
            // A corrupt microsecond field is folded into seconds by Timestamp::new.
            frac.saturating_mul(1000)
        };
        self.pos = start + body + incl;
        Ok(Some(Frame {
            timestamp: Timestamp::new(i64::from(secs), nanos),
            link: self.link,
            data: &rest[body..body + incl],
            orig_len: orig.max(incl as u32),
        }))
    }
}
