//! Set tables ([`TableShape::Set`]) in LMDB: each key is split into its head, stored once as
//! an LMDB key, and its fixed-width suffix, stored as one of that key's sorted duplicates
//! (`MDB_DUPSORT | MDB_DUPFIXED`). A run of suffixes packs into pages of bare 8-byte items,
//! with no node header and no repeated head, and ids appended in order fill those pages
//! completely (`MDB_APPENDDUP`).
//!
//! The logical order is kept: because no head is a proper prefix of another, comparing two
//! keys head first, then suffix, is the same as comparing them as byte strings. Bounds are
//! mapped onto heads (see [`head_bounds`]) and every key read is checked against the
//! caller's bounds, so a bound that falls inside one head's run is still exact.

use std::borrow::Cow;
use std::ops::Bound;

use heed::types::Bytes;
use heed::{Database, MdbError, PutFlags, RoRange, RoRevRange, RoTxn, RwTxn};

use super::storage;
use crate::{Direction, KvError, KvPair, KvResult};

/// A table's LMDB database, whatever the lifetime heed gives its handle.
type Db<'d> = Database<'d, Bytes, Bytes>;

/// Marks the LMDB database name of a set table.
const SET_MARK: &str = "@set";

/// The LMDB database name of a set table: a store opened with another shape, or by a
/// build that knows no shapes, never mistakes it for a plain table.
pub(crate) fn physical_name(name: &str, suffix: usize) -> String {
    format!("{name}{SET_MARK}{suffix}")
}

/// Whether the LMDB database `stored` holds table `name` as a set (of any suffix width).
pub(crate) fn is_set_form_of(stored: &str, name: &str) -> bool {
    stored
        .strip_prefix(name)
        .and_then(|rest| rest.strip_prefix(SET_MARK))
        .is_some_and(|width| !width.is_empty() && width.bytes().all(|b| b.is_ascii_digit()))
}

/// Splits a key into head and suffix; the caller has checked the key's length.
pub(crate) fn split(key: &[u8], suffix: usize) -> (&[u8], &[u8]) {
    key.split_at(key.len().saturating_sub(suffix))
}

/// A lower and an upper bound, owned.
type OwnedBounds = (Bound<Vec<u8>>, Bound<Vec<u8>>);

/// The head-level bounds that cover the logical `[lower, upper]`.
///
/// A key `h ++ s` is at least `lower` when `h >= lower`, or when `h` is a proper prefix of
/// `lower` and `s` is large enough; only one head can be such a prefix (heads are
/// prefix-free), and it is the greatest head below `lower`. A key is at most `upper` only
/// when `h < upper` (`h == upper` makes every key of that head longer, so greater).
fn head_bounds(
    txn: &RoTxn<'_>,
    db: Db<'_>,
    lower: Bound<&[u8]>,
    upper: Bound<&[u8]>,
) -> KvResult<OwnedBounds> {
    let lo = match lower {
        Bound::Unbounded => Bound::Unbounded,
        Bound::Included(l) | Bound::Excluded(l) => match db.get_lower_than(txn, l) {
            Ok(Some((head, _))) if l.starts_with(head) => Bound::Included(head.to_vec()),
            Ok(_) => Bound::Included(l.to_vec()),
            Err(e) => return Err(storage(e)),
        },
    };
    let hi = match upper {
        Bound::Unbounded => Bound::Unbounded,
        Bound::Included(u) | Bound::Excluded(u) => Bound::Excluded(u.to_vec()),
    };
    Ok((lo, hi))
}

enum Heads<'t> {
    Forward(RoRange<'t, Bytes, Bytes>),
    Backward(RoRevRange<'t, Bytes, Bytes>),
}

/// Ordered iteration over a set table: joins each head with its suffixes and keeps the keys
/// within the caller's bounds.
pub struct SetIter<'t> {
    heads: Heads<'t>,
    /// Put before every key read (a partition's prefix).
    prefix: Vec<u8>,
    lower: Bound<Vec<u8>>,
    upper: Bound<Vec<u8>>,
    suffix: usize,
    done: bool,
}

impl std::fmt::Debug for SetIter<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SetIter")
            .field("suffix", &self.suffix)
            .finish_non_exhaustive()
    }
}

fn below(key: &[u8], lower: &Bound<Vec<u8>>) -> bool {
    match lower {
        Bound::Included(l) => key < l.as_slice(),
        Bound::Excluded(l) => key <= l.as_slice(),
        Bound::Unbounded => false,
    }
}

fn above(key: &[u8], upper: &Bound<Vec<u8>>) -> bool {
    match upper {
        Bound::Included(u) => key > u.as_slice(),
        Bound::Excluded(u) => key >= u.as_slice(),
        Bound::Unbounded => false,
    }
}

impl<'t> SetIter<'t> {
    /// Iterates the keys of a set table within the bounds, which the caller has made
    /// storable.
    pub(crate) fn new(
        txn: &'t RoTxn<'_>,
        db: Db<'_>,
        suffix: usize,
        prefix: &[u8],
        lower: Bound<&[u8]>,
        upper: Bound<&[u8]>,
        direction: Direction,
    ) -> KvResult<SetIter<'t>> {
        let (lo, hi) = head_bounds(txn, db, lower, upper)?;
        let bounds = (
            lo.as_ref().map(Vec::as_slice),
            hi.as_ref().map(Vec::as_slice),
        );
        let heads = match direction {
            Direction::Forward => Heads::Forward(db.range(txn, &bounds).map_err(storage)?),
            Direction::Backward => Heads::Backward(db.rev_range(txn, &bounds).map_err(storage)?),
        };
        Ok(SetIter {
            heads,
            prefix: prefix.to_vec(),
            lower: lower.map(<[u8]>::to_vec),
            upper: upper.map(<[u8]>::to_vec),
            suffix,
            done: false,
        })
    }

    /// The next key in iteration order, within the bounds or not; `None` at the end.
    fn step(&mut self) -> Option<KvResult<Vec<u8>>> {
        let item = match &mut self.heads {
            Heads::Forward(it) => it.next(),
            Heads::Backward(it) => it.next(),
        }?;
        Some(match item {
            Ok((head, tail)) if tail.len() == self.suffix => {
                let mut key = Vec::with_capacity(self.prefix.len() + head.len() + tail.len());
                key.extend_from_slice(&self.prefix);
                key.extend_from_slice(head);
                key.extend_from_slice(tail);
                Ok(key)
            }
            Ok(_) => Err(KvError::Storage(
                "a set table holds an item of the wrong width".into(),
            )),
            Err(e) => Err(storage(e)),
        })
    }
}

impl<'t> Iterator for SetIter<'t> {
    type Item = KvResult<KvPair<'t>>;

    fn next(&mut self) -> Option<Self::Item> {
        let forward = matches!(self.heads, Heads::Forward(_));
        while !self.done {
            let key = match self.step() {
                Some(Ok(k)) => k,
                Some(Err(e)) => {
                    self.done = true;
                    return Some(Err(e));
                }
                None => break,
            };
            // The bounds are the database's own, without the prefix.
            let own = &key[self.prefix.len()..];
            let (skip, end) = if forward {
                (below(own, &self.lower), above(own, &self.upper))
            } else {
                (above(own, &self.upper), below(own, &self.lower))
            };
            if end {
                // Keys come in order: nothing after this one is within the bounds.
                break;
            }
            if !skip {
                return Some(Ok((Cow::Owned(key), &[])));
            }
        }
        self.done = true;
        None
    }
}

/// Whether `key` is in a set table: walks the run of its head up to the suffix.
pub(crate) fn contains(txn: &RoTxn<'_>, db: Db<'_>, key: &[u8], suffix: usize) -> KvResult<bool> {
    let (head, tail) = split(key, suffix);
    let Some(run) = db.get_duplicates(txn, head).map_err(storage)? else {
        return Ok(false);
    };
    for item in run {
        let (_, s) = item.map_err(storage)?;
        match s.cmp(tail) {
            std::cmp::Ordering::Less => continue,
            std::cmp::Ordering::Equal => return Ok(true),
            std::cmp::Ordering::Greater => return Ok(false),
        }
    }
    Ok(false)
}

/// Adds `key` to a set table; returns whether it was already there. The suffix is first
/// offered as the run's new last (`MDB_APPENDDUP`, one search, and pages filled completely
/// when ids arrive in order); LMDB refuses that without a change when it is not greater
/// than the run's last, and it is then put in its place.
pub(crate) fn insert(
    txn: &mut RwTxn<'_>,
    db: Db<'_>,
    key: &[u8],
    suffix: usize,
) -> heed::Result<bool> {
    let (head, tail) = split(key, suffix);
    match db.put_with_flags(txn, PutFlags::APPEND_DUP, head, tail) {
        Ok(()) => return Ok(false),
        Err(heed::Error::Mdb(MdbError::KeyExist)) => {}
        Err(e) => return Err(e),
    }
    match db.put_with_flags(txn, PutFlags::NO_DUP_DATA, head, tail) {
        Ok(()) => Ok(false),
        Err(heed::Error::Mdb(MdbError::KeyExist)) => Ok(true),
        Err(e) => Err(e),
    }
}

/// Removes `key` from a set table; returns whether it was there.
pub(crate) fn remove(
    txn: &mut RwTxn<'_>,
    db: Db<'_>,
    key: &[u8],
    suffix: usize,
) -> heed::Result<bool> {
    let (head, tail) = split(key, suffix);
    db.delete_one_duplicate(txn, head, tail)
}

/// Writes ascending keys through one cursor: past the table's last key a new head is
/// appended (`MDB_APPEND`), and the following suffixes of that head too (`MDB_APPENDDUP`);
/// a key before it is put in its place (`MDB_NODUPDATA`: one already there stays).
pub(crate) fn write_batch<'b>(
    txn: &mut RwTxn<'_>,
    db: Db<'_>,
    suffix: usize,
    n: usize,
    pair: &dyn Fn(usize) -> (&'b [u8], &'b [u8]),
) -> heed::Result<()> {
    let part = |i: usize| split(pair(i).0, suffix);
    super::append_items(
        txn,
        db,
        n,
        &part,
        &|i, prev| {
            let (head, tail) = part(i);
            match prev.map(part) {
                // A later suffix of the head appended last; an earlier one is out of order.
                Some((h, t)) if h == head => (tail > t).then_some(PutFlags::APPEND_DUP),
                _ => Some(PutFlags::APPEND),
            }
        },
        PutFlags::NO_DUP_DATA,
    )
}
