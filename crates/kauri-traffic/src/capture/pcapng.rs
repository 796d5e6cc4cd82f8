//! pcapng files: a sequence of blocks (type, total length, body, total length again). A
//! Section Header Block sets the byte order and forgets the interfaces of any earlier
//! section; Interface Description Blocks give each interface's link type and timestamp
//! unit; Enhanced, Simple and (obsolete) Packet Blocks carry frames. Other blocks (name
//! resolution, statistics, secrets, custom) are skipped.

use super::{u16_at, u32_at, u64_at, CaptureError, Frame, LinkType};
use crate::summary::Timestamp;

const SHB: u32 = 0x0a0d_0d0a;
const IDB: u32 = 1;
const PB: u32 = 2;
const SPB: u32 = 3;
const EPB: u32 = 6;
const BYTE_ORDER_MAGIC: u32 = 0x1a2b_3c4d;

/// Whether the bytes start with a Section Header Block.
pub fn is_pcapng(bytes: &[u8]) -> bool {
    u32_at(bytes, 0, false) == Some(SHB)
}

/// How an interface counts time: ticks of 10^-n or of 2^-n seconds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Resolution {
    Decimal(u8),
    Binary(u8),
}

#[derive(Debug, Clone)]
struct Interface {
    link: LinkType,
    resolution: Resolution,
    /// Seconds added to every timestamp (`if_tsoffset`).
    offset: i64,
}

/// Reads the blocks of a pcapng file.
#[derive(Debug)]
pub struct Reader<'a> {
    data: &'a [u8],
    pos: usize,
    big_endian: bool,
    interfaces: Vec<Interface>,
}

impl<'a> Reader<'a> {
    /// Checks that the file starts with a readable Section Header Block.
    pub fn open(data: &'a [u8]) -> Result<Reader<'a>, CaptureError> {
        if !is_pcapng(data) {
            return Err(CaptureError::NotACapture(
                data.iter().take(4).copied().collect(),
            ));
        }
        let mut reader = Reader {
            data,
            pos: 0,
            big_endian: false,
            interfaces: Vec::new(),
        };
        // Validate the first section header now so a non-capture fails at open.
        let (kind, body, total) = reader.block()?;
        reader.section(body)?;
        debug_assert_eq!(kind, SHB);
        reader.pos = total;
        Ok(reader)
    }

    /// The block at `self.pos`: (type, body, end offset). Reads the byte order first when
    /// the block is a section header.
    fn block(&mut self) -> Result<(u32, &'a [u8], usize), CaptureError> {
        let start = self.pos;
        let data: &'a [u8] = self.data;
        let rest = &data[start..];
        if rest.len() < 12 {
            return Err(CaptureError::CutOff {
                what: "a block header",
                offset: start,
            });
        }
        let kind = u32_at(rest, 0, self.big_endian).unwrap_or(0);
        if kind == SHB {
            self.big_endian = match (u32_at(rest, 8, false), u32_at(rest, 8, true)) {
                (Some(BYTE_ORDER_MAGIC), _) => false,
                (_, Some(BYTE_ORDER_MAGIC)) => true,
                _ => {
                    return Err(CaptureError::Corrupt {
                        what: "a section header",
                        offset: start,
                        reason: "no byte-order magic".into(),
                    })
                }
            };
        }
        let total = u32_at(rest, 4, self.big_endian).unwrap_or(0) as usize;
        if total < 12 || !total.is_multiple_of(4) {
            return Err(CaptureError::Corrupt {
                what: "a block",
                offset: start,
                reason: format!("total length {total}"),
            });
        }
        if total > rest.len() {
            return Err(CaptureError::CutOff {
                what: "a block",
                offset: start,
            });
        }
        if u32_at(rest, total - 4, self.big_endian) != Some(total as u32) {
            return Err(CaptureError::Corrupt {
                what: "a block",
                offset: start,
                reason: "the trailing length differs from the leading one".into(),
            });
        }
        Ok((kind, &rest[8..total - 4], start + total))
    }

    /// Starts a section: checks the version and forgets the previous interfaces.
    fn section(&mut self, body: &[u8]) -> Result<(), CaptureError> {
        let major = u16_at(body, 4, self.big_endian);
        if major != Some(1) {
            return Err(CaptureError::Corrupt {
                what: "a section header",
                offset: self.pos,
                reason: format!("version {major:?}, expected 1"),
            });
        }
        self.interfaces.clear();
        Ok(())
    }

    /// Reads an interface description.
    fn interface(&mut self, body: &[u8]) -> Result<(), CaptureError> {
        let corrupt = |reason: &str| CaptureError::Corrupt {
            what: "an interface description",
            offset: self.pos,
            reason: reason.into(),
        };
        let link = u16_at(body, 0, self.big_endian).ok_or_else(|| corrupt("too short"))?;
        if body.len() < 8 {
            return Err(corrupt("too short"));
        }
        let mut iface = Interface {
            link: LinkType(link),
            resolution: Resolution::Decimal(6),
            offset: 0,
        };
        let mut at = 8;
        while let (Some(code), Some(len)) = (
            u16_at(body, at, self.big_endian),
            u16_at(body, at + 2, self.big_endian),
        ) {
            let len = usize::from(len);
            let value = body
                .get(at + 4..at + 4 + len)
                .ok_or_else(|| corrupt("an option runs past the block"))?;
            match code {
                0 => break,
                9 if len == 1 => {
                    let v = value[0];
                    iface.resolution = if v & 0x80 == 0 {
                        Resolution::Decimal(v)
                    } else {
                        Resolution::Binary(v & 0x7f)
                    };
                }
                14 if len == 8 => {
                    iface.offset = u64_at(value, 0, self.big_endian).unwrap_or(0) as i64;
                }
                _ => {}
            }
            at += 4 + len.div_ceil(4) * 4;
        }
        match iface.resolution {
            Resolution::Decimal(n) if n > 19 => {
                return Err(corrupt("timestamp unit below 1e-19 s"))
            }
            Resolution::Binary(n) if n > 63 => return Err(corrupt("timestamp unit below 2^-63 s")),
            _ => {}
        }
        self.interfaces.push(iface);
        Ok(())
    }

    /// The interface a packet block names.
    fn iface(&self, id: usize) -> Result<&Interface, CaptureError> {
        self.interfaces
            .get(id)
            .ok_or_else(|| CaptureError::Corrupt {
                what: "a packet block",
                offset: self.pos,
                reason: format!("interface {id} was not described"),
            })
    }

    /// The next frame, `None` at the end, or why the rest cannot be read.
    pub fn next_frame(&mut self) -> Result<Option<Frame<'a>>, CaptureError> {
        loop {
            if self.pos >= self.data.len() {
                return Ok(None);
            }
            let (kind, body, end) = self.block()?;
            let frame = match kind {
                SHB => {
                    self.section(body)?;
                    None
                }
                IDB => {
                    self.interface(body)?;
                    None
                }
                EPB => Some(self.enhanced(body, 20, false)?),
                PB => Some(self.enhanced(body, 20, true)?),
                SPB => Some(self.simple(body)?),
                _ => None,
            };
            self.pos = end;
            if frame.is_some() {
                return Ok(frame);
            }
        }
    }

    /// An Enhanced Packet Block, or the obsolete Packet Block (16-bit interface id).
    fn enhanced(
        &self,
        body: &'a [u8],
        header: usize,
        obsolete: bool,
    ) -> Result<Frame<'a>, CaptureError> {
        let be = self.big_endian;
        let corrupt = |reason: String| CaptureError::Corrupt {
            what: "a packet block",
            offset: self.pos,
            reason,
        };
        if body.len() < header {
            return Err(corrupt("too short".into()));
        }
        let id = if obsolete {
            usize::from(u16_at(body, 0, be).unwrap_or(0))
        } else {
            u32_at(body, 0, be).unwrap_or(0) as usize
        };
        let iface = self.iface(id)?;
        let hi = u32_at(body, 4, be).unwrap_or(0);
        let lo = u32_at(body, 8, be).unwrap_or(0);
        let caplen = u32_at(body, 12, be).unwrap_or(0) as usize;
        let orig = u32_at(body, 16, be).unwrap_or(0);
        let data = body
            .get(header..)
            .and_then(|d| d.get(..caplen))
            .ok_or_else(|| corrupt(format!("captured length {caplen} runs past the block")))?;
        Ok(Frame {
            timestamp: ticks_to_time(iface, (u64::from(hi) << 32) | u64::from(lo)),
            link: iface.link,
            data,
            orig_len: orig.max(caplen as u32),
        })
    }

    /// A Simple Packet Block: interface 0, no timestamp (the epoch is used).
    fn simple(&self, body: &'a [u8]) -> Result<Frame<'a>, CaptureError> {
        let iface = self.iface(0)?;
        let orig = u32_at(body, 0, self.big_endian).ok_or_else(|| CaptureError::Corrupt {
            what: "a simple packet block",
            offset: self.pos,
            reason: "too short".into(),
        })?;
        let rest = &body[4..];
        let caplen = (orig as usize).min(rest.len());
        Ok(Frame {
            timestamp: Timestamp::default(),
            link: iface.link,
            data: &rest[..caplen],
            orig_len: orig,
        })
    }
}

/// Converts an interface's ticks into seconds and nanoseconds.
fn ticks_to_time(iface: &Interface, ticks: u64) -> Timestamp {
    let (secs, nanos) = match iface.resolution {
        Resolution::Decimal(n) => {
            let unit = 10u64.pow(u32::from(n));
            let frac = ticks % unit;
            let nanos = if n <= 9 {
                frac * 10u64.pow(9 - u32::from(n))
            } else {
                frac / 10u64.pow(u32::from(n) - 9)
            };
            (ticks / unit, nanos)
        }
        Resolution::Binary(n) => {
            let frac = ticks & ((1u64 << n) - 1);
            let nanos = ((u128::from(frac) * 1_000_000_000) >> n) as u64;
            (ticks >> n, nanos)
        }
    };
    let secs = i64::try_from(secs)
        .unwrap_or(i64::MAX)
        .saturating_add(iface.offset);
    Timestamp::new(secs, nanos as u32)
}
