//! The record format: how one entry is stored in the `entries` table.
//!
//! Record version 3 (all integers little-endian unless said otherwise; `varint` is
//! unsigned LEB128):
//!
//! ```text
//! offset 0   u8      magic 0x4b ('K')
//! offset 1   u8      record version (3)
//! offset 2   u8      flags: bit 0 (DIR_NARROW) = directory entries of 4 bytes
//! offset 3   varint  parent id (0 = a naming context, below the root DN)
//!            varint  name length, then the name: the RDN text as given (UTF-8), or the
//!                    whole DN text for a naming context
//!            varint  n = number of attributes
//!            n × 4   attribute directory, sorted by attribute id, when DIR_NARROW:
//!                      u16 attribute id, u16 offset of the attribute in the value area
//!         or n × 8   otherwise: u32 attribute id, u32 offset
//!            varint  value area length, then the value area
//!            stamps  the record's common stamp, then a bitmap of ceil(n / 8) bytes
//!                    (bit i % 8 of byte i / 8 set: attribute i has its own stamp), then
//!                    the own stamp of each attribute whose bit is set, in directory order
//! ```
//!
//! Zero bytes may follow the stamps: room left for the record to grow in place
//! ([`with_room`]); readers ignore them.
//!
//! A stamp in a version-3 record is `varint (version << 1 | L)`, `varint local USN`, then,
//! when `L` is 0, `varint originating USN`; then `varint originating time` (Unix seconds);
//! then, when `L` is 0, `varint originating invocation`. `L` = 1 says the change was made
//! here (originating USN = local USN, invocation 0), which is every change until
//! replication exists.
//!
//! Version 2, still read, had a `u64 BE` parent, the 8-byte directory always and one stamp
//! byte per attribute (0 = common stamp, 1 = own stamp follows). Version 1 kept linked
//! attributes in records.
//!
//! At its offset, an attribute holds `varint count`, `u8 flags` and its values back to
//! back as `varint len, raw bytes`; when the flag [`ATTR_HAS_NORM`] is set, each raw value
//! is followed by `varint tag`: 0, the normalized form equals the raw value; 1, it is the
//! raw value with ASCII letters lowercased (a name, a DN); `t >= 2`, `t - 2` bytes of
//! normalized form follow. (Version 2 had no tag 1: `t > 0` meant `t - 1` bytes.) Normalized forms are computed once,
//! at write time, so the read path compares bytes and never case-folds stored data.
//!
//! The fixed-size directory lets a reader find one attribute by binary search and decode
//! only the attributes it needs; values are slices of the stored bytes (zero-copy).
//!
//! A future format raises the version byte; readers refuse versions they do not know
//! ([`crate::DbError::UnsupportedFormat`]), and the database-wide version lives in `meta`.

use std::borrow::Cow;

use crate::error::{DbError, DbResult};
use crate::keys::{get_varint, put_varint};

/// Magic byte that starts every record.
pub const MAGIC: u8 = 0x4b;
/// The record version this build writes.
pub const FORMAT_VERSION: u8 = 3;
/// The oldest record version this build reads.
pub const OLDEST_READ_VERSION: u8 = 2;
/// Record flag: the directory's entries are a `u16` id and a `u16` offset.
pub const DIR_NARROW: u8 = 1;
/// Directory flag: values carry their normalized forms.
pub const ATTR_HAS_NORM: u8 = 1;

const HEADER_FIXED: usize = 3;
const DIR_WIDE: usize = 8;
const DIR_SHORT: usize = 4;

/// Replication metadata of one attribute (AD's replPropertyMetaData), kept from the first
/// format version so that replication never needs every record rewritten.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Stamp {
    /// Number of originating changes of this attribute.
    pub version: u64,
    /// USN of the last local write of this attribute.
    pub local_usn: u64,
    /// USN at the originating database of the last change.
    pub orig_usn: u64,
    /// Time of the originating change, Unix seconds.
    pub orig_time: u64,
    /// Which database made the originating change: 0 = this database; other values are
    /// reserved for the invocation table replication will keep.
    pub orig_invocation: u64,
}

/// One owned value: raw bytes as given and, when it differs, the normalized form.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OwnedValue {
    /// The value as the client gave it.
    pub raw: Vec<u8>,
    /// The normalized form, when different from `raw`.
    pub norm: Option<Vec<u8>>,
}

impl OwnedValue {
    /// The normalized form (borrowing `raw` when they are equal).
    pub fn norm(&self) -> &[u8] {
        self.norm.as_deref().unwrap_or(&self.raw)
    }
}

/// One owned attribute of a record.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OwnedAttr {
    /// Attribute id from the registry.
    pub id: u32,
    /// Values in stored order.
    pub values: Vec<OwnedValue>,
    /// Replication metadata.
    pub stamp: Stamp,
}

/// A decoded, editable record: what write operations work on.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct OwnedRecord {
    /// Parent record id (0 for entries directly below the root DN).
    pub parent: u64,
    /// The entry's RDN text as given.
    pub rdn: String,
    /// Attributes sorted by id.
    pub attrs: Vec<OwnedAttr>,
}

impl OwnedRecord {
    /// The attribute with this id.
    pub fn attr(&self, id: u32) -> Option<&OwnedAttr> {
        self.attrs
            .binary_search_by_key(&id, |a| a.id)
            .ok()
            .and_then(|i| self.attrs.get(i))
    }

    /// The attribute with this id, mutable.
    pub fn attr_mut(&mut self, id: u32) -> Option<&mut OwnedAttr> {
        match self.attrs.binary_search_by_key(&id, |a| a.id) {
            Ok(i) => self.attrs.get_mut(i),
            Err(_) => None,
        }
    }

    /// The attribute with this id, created empty if missing.
    pub fn attr_entry(&mut self, id: u32) -> &mut OwnedAttr {
        let i = match self.attrs.binary_search_by_key(&id, |a| a.id) {
            Ok(i) => i,
            Err(i) => {
                self.attrs.insert(
                    i,
                    OwnedAttr {
                        id,
                        values: Vec::new(),
                        stamp: Stamp::default(),
                    },
                );
                i
            }
        };
        &mut self.attrs[i]
    }

    /// Removes attributes left without values.
    pub fn drop_empty(&mut self) {
        self.attrs.retain(|a| !a.values.is_empty());
    }

    /// Serializes the record (record version 3).
    pub fn encode(&self) -> Vec<u8> {
        let mut area = Vec::new();
        let mut offsets = Vec::with_capacity(self.attrs.len());
        for a in &self.attrs {
            let has_norm = a.values.iter().any(|v| v.norm.is_some());
            offsets.push(area.len());
            put_varint(&mut area, a.values.len() as u64);
            area.push(if has_norm { ATTR_HAS_NORM } else { 0 });
            for v in &a.values {
                put_varint(&mut area, v.raw.len() as u64);
                area.extend_from_slice(&v.raw);
                if has_norm {
                    match &v.norm {
                        Some(n) if is_ascii_lower_of(n, &v.raw) => area.push(1),
                        Some(n) => {
                            put_varint(&mut area, n.len() as u64 + 2);
                            area.extend_from_slice(n);
                        }
                        None => area.push(0),
                    }
                }
            }
        }
        // Offsets only grow, so the last one decides whether 16 bits hold them all.
        let narrow = self.attrs.iter().all(|a| a.id <= u32::from(u16::MAX))
            && offsets.last().is_none_or(|&o| o <= usize::from(u16::MAX));
        let common = self.common_stamp();
        let n = self.attrs.len();
        let mut out = Vec::with_capacity(
            HEADER_FIXED + 30 + self.rdn.len() + n * DIR_WIDE + area.len() + n / 8 + 24,
        );
        out.push(MAGIC);
        out.push(FORMAT_VERSION);
        out.push(if narrow { DIR_NARROW } else { 0 });
        put_varint(&mut out, self.parent);
        put_varint(&mut out, self.rdn.len() as u64);
        out.extend_from_slice(self.rdn.as_bytes());
        put_varint(&mut out, n as u64);
        for (a, &offset) in self.attrs.iter().zip(&offsets) {
            if narrow {
                out.extend_from_slice(&(a.id as u16).to_le_bytes());
                out.extend_from_slice(&(offset as u16).to_le_bytes());
            } else {
                out.extend_from_slice(&a.id.to_le_bytes());
                out.extend_from_slice(&(offset as u32).to_le_bytes());
            }
        }
        put_varint(&mut out, area.len() as u64);
        out.extend_from_slice(&area);
        put_record_stamp(&mut out, &common);
        let mut own = vec![0u8; n.div_ceil(8)];
        for (i, a) in self.attrs.iter().enumerate() {
            if a.stamp != common {
                own[i / 8] |= 1 << (i % 8);
            }
        }
        out.extend_from_slice(&own);
        for a in self.attrs.iter().filter(|a| a.stamp != common) {
            put_record_stamp(&mut out, &a.stamp);
        }
        out
    }

    /// The stamp most attributes share (the one written once).
    fn common_stamp(&self) -> Stamp {
        let mut best = (0usize, Stamp::default());
        for (i, a) in self.attrs.iter().enumerate() {
            if self.attrs[..i].iter().any(|b| b.stamp == a.stamp) {
                continue;
            }
            let n = self.attrs[i..]
                .iter()
                .filter(|b| b.stamp == a.stamp)
                .count();
            if n > best.0 {
                best = (n, a.stamp);
            }
        }
        best.1
    }
}

/// The bytes to store for an encoded record: followed by zeros, room for the record to grow
/// in place. A record written for the first time (`stored` is `None`), or one that outgrew
/// its room, gets an eighth of its size; a rewritten record that still fits keeps the size
/// it had, so LMDB overwrites it where it is instead of moving it, and a page packed full by
/// a bulk of adds is not split when its records gain a value (a first logon writes
/// `lastLogonTimestamp` into every user).
pub fn with_room(mut encoded: Vec<u8>, stored: Option<usize>) -> Vec<u8> {
    let len = encoded.len();
    let fresh = len + len / 8;
    let target = match stored {
        // Keep the old size unless the record has shrunk far below it.
        Some(old) if old >= len && old <= fresh + len / 8 => old,
        _ => fresh,
    };
    encoded.resize(target, 0);
    encoded
}

pub(crate) fn put_stamp(out: &mut Vec<u8>, s: &Stamp) {
    for v in [
        s.version,
        s.local_usn,
        s.orig_usn,
        s.orig_time,
        s.orig_invocation,
    ] {
        put_varint(out, v);
    }
}

/// `version << 1 | local` as a varint of up to 65 bits (ten bytes at most).
fn put_stamp_head(out: &mut Vec<u8>, version: u64, local: bool) {
    let mut v = u128::from(version) << 1 | u128::from(local);
    while v >= 0x80 {
        out.push((v as u8 & 0x7f) | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

/// Reads what [`put_stamp_head`] wrote: the version and the local flag.
fn get_stamp_head(bytes: &[u8], pos: &mut usize) -> Option<(u64, bool)> {
    let mut v: u128 = 0;
    for shift in (0..70).step_by(7) {
        let b = *bytes.get(*pos)?;
        *pos += 1;
        v |= u128::from(b & 0x7f) << shift;
        if b & 0x80 == 0 {
            return Some((u64::try_from(v >> 1).ok()?, v & 1 == 1));
        }
    }
    None
}

/// A stamp in a version-3 record: a change made here drops the originating USN (equal to
/// the local one) and the invocation (0).
fn put_record_stamp(out: &mut Vec<u8>, s: &Stamp) {
    if s.orig_usn == s.local_usn && s.orig_invocation == 0 {
        put_stamp_head(out, s.version, true);
        put_varint(out, s.local_usn);
        put_varint(out, s.orig_time);
    } else {
        put_stamp_head(out, s.version, false);
        put_varint(out, s.local_usn);
        put_varint(out, s.orig_usn);
        put_varint(out, s.orig_time);
        put_varint(out, s.orig_invocation);
    }
}

fn get_record_stamp(bytes: &[u8], pos: &mut usize) -> DbResult<Stamp> {
    let truncated = || DbError::corrupt("record stamps truncated");
    let (version, local) = get_stamp_head(bytes, pos).ok_or_else(truncated)?;
    let mut next = || get_varint(bytes, pos).ok_or_else(truncated);
    let local_usn = next()?;
    if local {
        let orig_time = next()?;
        return Ok(Stamp {
            version,
            local_usn,
            orig_usn: local_usn,
            orig_time,
            orig_invocation: 0,
        });
    }
    let orig_usn = next()?;
    let orig_time = next()?;
    let orig_invocation = next()?;
    Ok(Stamp {
        version,
        local_usn,
        orig_usn,
        orig_time,
        orig_invocation,
    })
}

pub(crate) fn get_stamp(bytes: &[u8], pos: &mut usize) -> DbResult<Stamp> {
    let mut f = [0u64; 5];
    for slot in &mut f {
        *slot =
            get_varint(bytes, pos).ok_or_else(|| DbError::corrupt("record stamps truncated"))?;
    }
    Ok(Stamp {
        version: f[0],
        local_usn: f[1],
        orig_usn: f[2],
        orig_time: f[3],
        orig_invocation: f[4],
    })
}

/// A record read in place: header parsed, attributes decoded on demand.
#[derive(Debug, Clone, Copy)]
pub struct RecordView<'a> {
    bytes: &'a [u8],
    version: u8,
    /// Bytes per directory entry: 4 or 8.
    entry: usize,
    parent: u64,
    rdn: &'a str,
    dir: &'a [u8],
    area: &'a [u8],
    stamps_at: usize,
}

/// One attribute of a [`RecordView`].
#[derive(Debug, Clone, Copy)]
pub struct AttrView<'a> {
    /// Attribute id.
    pub id: u32,
    /// Number of values.
    pub count: u32,
    has_norm: bool,
    /// The record's version, which decides how normalized forms are tagged.
    version: u8,
    data: &'a [u8],
}

/// How a value's normalized form is kept.
#[derive(Debug, Clone, Copy)]
enum NormForm<'a> {
    /// These bytes (the raw value itself when normalization changes nothing).
    Bytes(&'a [u8]),
    /// The raw value with its ASCII letters lowercased.
    AsciiLower,
}

/// One value of an [`AttrView`]: the raw bytes, borrowed, and the normalized form, borrowed
/// or (for a value stored as "the raw value lowercased") derived when asked for.
#[derive(Debug, Clone, Copy)]
pub struct ValueView<'a> {
    /// As the client gave it.
    pub raw: &'a [u8],
    form: NormForm<'a>,
}

impl<'a> ValueView<'a> {
    /// A value whose normalized form is given.
    pub fn new(raw: &'a [u8], norm: &'a [u8]) -> ValueView<'a> {
        ValueView {
            raw,
            form: NormForm::Bytes(norm),
        }
    }

    /// The normalized form (equal to `raw` when normalization changes nothing).
    pub fn norm(&self) -> Cow<'a, [u8]> {
        match self.form {
            NormForm::Bytes(b) => Cow::Borrowed(b),
            NormForm::AsciiLower => Cow::Owned(self.raw.to_ascii_lowercase()),
        }
    }

    /// Whether the normalized form is `other`, without building it.
    pub fn norm_eq(&self, other: &[u8]) -> bool {
        self.norm_cmp(other).is_eq()
    }

    /// The normalized form compared with `other`, without building it.
    pub fn norm_cmp(&self, other: &[u8]) -> std::cmp::Ordering {
        match self.form {
            NormForm::Bytes(b) => b.cmp(other),
            NormForm::AsciiLower => self
                .raw
                .iter()
                .map(u8::to_ascii_lowercase)
                .cmp(other.iter().copied()),
        }
    }
}

impl PartialEq for ValueView<'_> {
    fn eq(&self, other: &Self) -> bool {
        self.raw == other.raw && self.norm() == other.norm()
    }
}

impl Eq for ValueView<'_> {}

/// Whether `norm` is `raw` with its ASCII letters lowercased (and differs from it).
fn is_ascii_lower_of(norm: &[u8], raw: &[u8]) -> bool {
    norm.len() == raw.len()
        && norm != raw
        && raw
            .iter()
            .zip(norm)
            .all(|(r, n)| r.to_ascii_lowercase() == *n)
}

impl<'a> RecordView<'a> {
    /// Parses the header and directory of a stored record.
    pub fn parse(bytes: &'a [u8]) -> DbResult<RecordView<'a>> {
        let head = bytes
            .get(..HEADER_FIXED)
            .ok_or_else(|| DbError::corrupt("record shorter than its header"))?;
        if head[0] != MAGIC {
            return Err(DbError::corrupt("record magic byte missing"));
        }
        let version = head[1];
        if !(OLDEST_READ_VERSION..=FORMAT_VERSION).contains(&version) {
            return Err(DbError::UnsupportedFormat {
                found: u32::from(version),
                supported: u32::from(FORMAT_VERSION),
            });
        }
        let bad = || DbError::corrupt("record header truncated");
        let mut pos = HEADER_FIXED;
        let (parent, entry) = if version == 2 {
            let p = bytes.get(3..11).ok_or_else(bad)?;
            pos = 11;
            (
                u64::from_be_bytes(p.try_into().map_err(|_| bad())?),
                DIR_WIDE,
            )
        } else {
            let parent = get_varint(bytes, &mut pos).ok_or_else(bad)?;
            let narrow = head[2] & DIR_NARROW != 0;
            (parent, if narrow { DIR_SHORT } else { DIR_WIDE })
        };
        let rdn_len = get_varint(bytes, &mut pos).ok_or_else(bad)? as usize;
        let rdn_bytes = bytes
            .get(pos..pos.saturating_add(rdn_len))
            .ok_or_else(bad)?;
        let rdn = std::str::from_utf8(rdn_bytes)
            .map_err(|_| DbError::corrupt("record RDN is not UTF-8"))?;
        pos += rdn_len;
        let n = get_varint(bytes, &mut pos).ok_or_else(bad)? as usize;
        let dir_len = n.checked_mul(entry).ok_or_else(bad)?;
        let dir = bytes
            .get(pos..pos.saturating_add(dir_len))
            .ok_or_else(bad)?;
        pos += dir_len;
        let area_len = get_varint(bytes, &mut pos).ok_or_else(bad)? as usize;
        let area = bytes
            .get(pos..pos.saturating_add(area_len))
            .ok_or_else(bad)?;
        pos += area_len;
        Ok(RecordView {
            bytes,
            version,
            entry,
            parent,
            rdn,
            dir,
            area,
            stamps_at: pos,
        })
    }

    /// Parent record id.
    pub fn parent(&self) -> u64 {
        self.parent
    }

    /// The RDN text as stored.
    pub fn rdn(&self) -> &'a str {
        self.rdn
    }

    /// Number of attributes.
    pub fn len(&self) -> usize {
        self.dir.len() / self.entry
    }

    /// Whether the record has no attributes.
    pub fn is_empty(&self) -> bool {
        self.dir.is_empty()
    }

    /// The attribute id of directory entry `i`.
    fn id_at(&self, i: usize) -> Option<u32> {
        let at = i.checked_mul(self.entry)?;
        let half = self.entry / 2;
        let e = self.dir.get(at..at.checked_add(half)?)?;
        Some(match e.len() {
            2 => u32::from(u16::from_le_bytes(e.try_into().ok()?)),
            _ => u32::from_le_bytes(e.try_into().ok()?),
        })
    }

    /// The offset in the value area of directory entry `i`.
    fn offset(&self, i: usize) -> Option<usize> {
        let half = self.entry / 2;
        let at = i.checked_mul(self.entry)?.checked_add(half)?;
        let e = self.dir.get(at..at.checked_add(half)?)?;
        Some(match e.len() {
            2 => usize::from(u16::from_le_bytes(e.try_into().ok()?)),
            _ => u32::from_le_bytes(e.try_into().ok()?) as usize,
        })
    }

    /// Directory entry `i`. An attribute's data ends where the next one's starts (the
    /// encoder writes them back to back, in directory order), so damaged offsets can never
    /// make two attributes read the same bytes: decoding a record stays linear in its size.
    fn dir_entry(&self, i: usize) -> Option<AttrView<'a>> {
        let id = self.id_at(i)?;
        let offset = self.offset(i)?;
        let end = match self.offset(i + 1) {
            Some(next) => next,
            None => self.area.len(),
        };
        let data = self.area.get(offset..end)?;
        let mut pos = 0;
        let count = u32::try_from(get_varint(data, &mut pos)?).ok()?;
        let flags = *data.get(pos)?;
        Some(AttrView {
            id,
            count,
            has_norm: flags & ATTR_HAS_NORM != 0,
            version: self.version,
            data: data.get(pos + 1..)?,
        })
    }

    /// The attribute with this id, found by binary search over the directory.
    pub fn attr(&self, id: u32) -> Option<AttrView<'a>> {
        let (mut lo, mut hi) = (0usize, self.len());
        while lo < hi {
            let mid = (lo + hi) / 2;
            match self.id_at(mid)?.cmp(&id) {
                std::cmp::Ordering::Less => lo = mid + 1,
                std::cmp::Ordering::Greater => hi = mid,
                std::cmp::Ordering::Equal => return self.dir_entry(mid),
            }
        }
        None
    }

    /// Every attribute in id order.
    pub fn attrs(&self) -> impl Iterator<Item = AttrView<'a>> + '_ {
        (0..self.len()).filter_map(move |i| self.dir_entry(i))
    }

    /// The replication stamps, in directory order.
    pub fn stamps(&self) -> DbResult<Vec<Stamp>> {
        let mut pos = self.stamps_at;
        let n = self.len();
        let mut out = Vec::with_capacity(n);
        if self.version >= 3 {
            let common = get_record_stamp(self.bytes, &mut pos)?;
            let own = self
                .bytes
                .get(pos..pos.saturating_add(n.div_ceil(8)))
                .ok_or_else(|| DbError::corrupt("record stamps truncated"))?;
            pos += own.len();
            for i in 0..n {
                out.push(if own[i / 8] & (1 << (i % 8)) != 0 {
                    get_record_stamp(self.bytes, &mut pos)?
                } else {
                    common
                });
            }
            return Ok(out);
        }
        let common = get_stamp(self.bytes, &mut pos)?;
        for _ in 0..n {
            let tag = *self
                .bytes
                .get(pos)
                .ok_or_else(|| DbError::corrupt("record stamps truncated"))?;
            pos += 1;
            out.push(match tag {
                0 => common,
                1 => get_stamp(self.bytes, &mut pos)?,
                _ => return Err(DbError::corrupt("record stamp tag unknown")),
            });
        }
        Ok(out)
    }

    /// Decodes the whole record into its owned, editable form, checking every length.
    pub fn to_owned_record(&self) -> DbResult<OwnedRecord> {
        let stamps = self.stamps()?;
        let mut attrs = Vec::with_capacity(self.len());
        for (i, stamp) in stamps.into_iter().enumerate() {
            let a = self
                .dir_entry(i)
                .ok_or_else(|| DbError::corrupt("attribute directory entry out of range"))?;
            let values = a
                .values_checked()?
                .into_iter()
                .map(|v| {
                    let norm = v.norm();
                    OwnedValue {
                        raw: v.raw.to_vec(),
                        norm: (*norm != *v.raw).then(|| norm.into_owned()),
                    }
                })
                .collect();
            attrs.push(OwnedAttr {
                id: a.id,
                values,
                stamp,
            });
        }
        if attrs.windows(2).any(|w| w[0].id >= w[1].id) {
            return Err(DbError::corrupt("attribute directory not sorted"));
        }
        Ok(OwnedRecord {
            parent: self.parent,
            rdn: self.rdn.to_string(),
            attrs,
        })
    }
}

impl<'a> AttrView<'a> {
    /// The values, decoded lazily from the stored bytes. Stops early on damaged data
    /// ([`AttrView::values_checked`] reports it).
    pub fn values(&self) -> ValueIter<'a> {
        ValueIter {
            data: self.data,
            pos: 0,
            left: self.count,
            has_norm: self.has_norm,
            version: self.version,
        }
    }

    /// All values, or a corruption error if the stored bytes do not hold `count` values.
    pub fn values_checked(&self) -> DbResult<Vec<ValueView<'a>>> {
        let v: Vec<ValueView<'a>> = self.values().collect();
        if v.len() != self.count as usize {
            return Err(DbError::corrupt(format!(
                "attribute {} holds {} readable values of {}",
                self.id,
                v.len(),
                self.count
            )));
        }
        Ok(v)
    }
}

/// Iterator over the values of one attribute.
#[derive(Debug, Clone)]
pub struct ValueIter<'a> {
    data: &'a [u8],
    pos: usize,
    left: u32,
    has_norm: bool,
    version: u8,
}

impl<'a> Iterator for ValueIter<'a> {
    type Item = ValueView<'a>;

    fn next(&mut self) -> Option<ValueView<'a>> {
        if self.left == 0 {
            return None;
        }
        let len = get_varint(self.data, &mut self.pos)? as usize;
        let raw = self.data.get(self.pos..self.pos.checked_add(len)?)?;
        self.pos += len;
        let mut form = NormForm::Bytes(raw);
        if self.has_norm {
            let tag = get_varint(self.data, &mut self.pos)? as usize;
            // Version 3 reserves tag 1 for "lowercased"; its byte counts start at 2.
            let (lowered, first_len_tag) = if self.version >= 3 { (1, 2) } else { (0, 1) };
            if tag == lowered && lowered > 0 {
                form = NormForm::AsciiLower;
            } else if tag >= first_len_tag {
                let nlen = tag - first_len_tag;
                form = NormForm::Bytes(self.data.get(self.pos..self.pos.checked_add(nlen)?)?);
                self.pos += nlen;
            }
        }
        self.left -= 1;
        Some(ValueView { raw, form })
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        (0, Some(self.left as usize))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> OwnedRecord {
        OwnedRecord {
            parent: 42,
            rdn: "CN=Alice Smith".into(),
            attrs: vec![
                OwnedAttr {
                    id: 1,
                    values: vec![
                        OwnedValue {
                            raw: b"top".to_vec(),
                            norm: None,
                        },
                        OwnedValue {
                            raw: b"person".to_vec(),
                            norm: None,
                        },
                    ],
                    stamp: Stamp {
                        version: 1,
                        local_usn: 7,
                        orig_usn: 7,
                        orig_time: 1_700_000_000,
                        orig_invocation: 0,
                    },
                },
                OwnedAttr {
                    id: 5,
                    values: vec![OwnedValue {
                        raw: b"Alice Smith".to_vec(),
                        norm: Some(b"alice smith".to_vec()),
                    }],
                    stamp: Stamp::default(),
                },
                OwnedAttr {
                    id: 9,
                    values: vec![OwnedValue {
                        raw: vec![0, 1, 2, 255],
                        norm: None,
                    }],
                    stamp: Stamp::default(),
                },
            ],
        }
    }

    #[test]
    fn round_trip() {
        let r = sample();
        let bytes = r.encode();
        let v = RecordView::parse(&bytes).unwrap();
        assert_eq!(v.parent(), 42);
        assert_eq!(v.rdn(), "CN=Alice Smith");
        assert_eq!(v.len(), 3);
        let cn = v.attr(5).unwrap();
        let vals: Vec<_> = cn.values().collect();
        assert_eq!(vals[0].raw, b"Alice Smith");
        assert_eq!(vals[0].norm(), &b"alice smith"[..]);
        assert!(v.attr(4).is_none());
        assert_eq!(v.attr(1).unwrap().values().count(), 2);
        assert_eq!(v.to_owned_record().unwrap(), r);
    }

    #[test]
    fn room_to_grow_is_kept_and_ignored_by_readers() {
        let r = sample();
        let plain = r.encode();
        let first = with_room(plain.clone(), None);
        assert_eq!(first.len(), plain.len() + plain.len() / 8);
        assert_eq!(
            RecordView::parse(&first)
                .unwrap()
                .to_owned_record()
                .unwrap(),
            r
        );
        // A rewrite that still fits keeps the stored size; one that does not gets new room.
        assert_eq!(
            with_room(plain.clone(), Some(first.len())).len(),
            first.len()
        );
        let mut bigger = r.clone();
        bigger.attrs[0].values.push(OwnedValue {
            raw: vec![b'x'; first.len()],
            norm: None,
        });
        let grown = with_room(bigger.encode(), Some(first.len()));
        assert!(grown.len() > first.len());
        assert_eq!(
            RecordView::parse(&grown)
                .unwrap()
                .to_owned_record()
                .unwrap(),
            bigger
        );
        // A record that shrank far below its old size gives the space back.
        assert!(with_room(plain.clone(), Some(plain.len() * 4)).len() < plain.len() * 2);
    }

    #[test]
    fn stamps_made_elsewhere_keep_every_field() {
        let mut r = sample();
        r.attrs[1].stamp = Stamp {
            version: 9,
            local_usn: 40,
            orig_usn: 3_000_000_000,
            orig_time: 1_800_000_000,
            orig_invocation: 5,
        };
        r.attrs[0].stamp = Stamp {
            version: u64::MAX,
            local_usn: 7,
            orig_usn: 7,
            orig_time: 1,
            orig_invocation: 0,
        };
        r.attrs[2].stamp = Stamp {
            version: 2,
            local_usn: 41,
            orig_usn: 41,
            orig_time: 1_800_000_001,
            orig_invocation: 0,
        };
        let bytes = r.encode();
        let v = RecordView::parse(&bytes).unwrap();
        assert_eq!(v.to_owned_record().unwrap(), r);
        assert_eq!(
            v.stamps().unwrap(),
            r.attrs.iter().map(|a| a.stamp).collect::<Vec<_>>()
        );
    }

    #[test]
    fn attributes_never_read_each_others_bytes() {
        // A damaged directory whose entries all point at the same data: each attribute
        // ends where the next begins, so the shared bytes are read once, not once per
        // entry (which made a 64 KiB record decode into gigabytes of values).
        const N: u32 = 1000;
        const M: usize = 10_000;
        let mut area = Vec::new();
        put_varint(&mut area, M as u64);
        area.push(0);
        area.resize(area.len() + M, 0);
        // A version-2 record, which this build still reads.
        let mut b = vec![MAGIC, 2, 0];
        b.extend_from_slice(&0u64.to_be_bytes());
        put_varint(&mut b, 1);
        b.push(b'x');
        put_varint(&mut b, u64::from(N));
        for id in 0..N {
            b.extend_from_slice(&id.to_le_bytes());
            b.extend_from_slice(&0u32.to_le_bytes());
        }
        put_varint(&mut b, area.len() as u64);
        b.extend_from_slice(&area);
        put_stamp(&mut b, &Stamp::default());
        b.extend(std::iter::repeat_n(0u8, N as usize));
        let v = RecordView::parse(&b).unwrap();
        let values: usize = v.attrs().map(|a| a.values().count()).sum();
        assert_eq!(values, M);
        assert!(v.to_owned_record().is_err());
    }

    #[test]
    fn damaged_records_are_errors_not_panics() {
        let bytes = sample().encode();
        for cut in 0..bytes.len() {
            if let Ok(v) = RecordView::parse(&bytes[..cut]) {
                let _ = v.to_owned_record();
                for a in v.attrs() {
                    let _ = a.values().count();
                }
            }
        }
        let mut wrong = bytes.clone();
        wrong[1] = 9;
        assert!(matches!(
            RecordView::parse(&wrong),
            Err(DbError::UnsupportedFormat { .. })
        ));
    }
}
