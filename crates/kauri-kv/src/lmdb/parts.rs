//! Partitioned set tables ([`crate::Partitions`]) in LMDB: the keys of each prefix the
//! table meets get a set database of their own (`<main>@p<nn>`, the prefix left out of its
//! keys), up to the partition count; short heads and later prefixes stay in the main set
//! database. Which prefix has which partition is recorded in `<main>@map` (prefix → one
//! byte), in the same transaction as the prefix's first key, and never changes; readers
//! look it up in their own snapshot and remember only committed assignments, so every
//! process agrees. The map also records the settings (prefix length and partition count)
//! the table was split with; a store is never opened with others.
//!
//! The partition databases exist from the moment the table is opened (heed creates
//! databases only in a transaction of their own), which keeps every later transaction an
//! ordinary one: assigning a partition is one `put` into the map.
//!
//! Invariant: a key whose head is longer than the prefix lives in its prefix's partition
//! when the prefix has one, and in the main database otherwise. A prefix gets a partition
//! only while the main database holds no such key of it; opening a store whose main
//! database predates the partitions moves its keys once (recorded by [`converted_mark`]).

use std::cmp::Ordering;
use std::collections::HashMap;
use std::ops::Bound;
use std::sync::Arc;

use parking_lot::RwLock;

use heed::types::Bytes;
use heed::{Database, RoTxn, RwTxn};

use super::set::{self, SetIter};
use super::storage;
use crate::{Direction, KvError, KvPair, KvResult};

/// A database handle of any lifetime heed gives it.
type Db<'d> = Database<'d, Bytes, Bytes>;

/// The partitions of one table.
#[derive(Clone)]
pub(crate) struct Parts<'d> {
    /// Bytes of a head that choose the partition.
    pub prefix: usize,
    /// Prefix → partition number; also holds the conversion mark.
    pub map: Db<'d>,
    /// The partition databases, by number.
    pub trees: Arc<[Db<'d>]>,
    /// Assignments read from committed snapshots. A committed assignment never changes, and
    /// a snapshot older than it finds that partition without keys of the prefix, so every
    /// transaction may use them; assignments of the writer's open transaction stay out
    /// until they are read back committed.
    pub known: Arc<RwLock<HashMap<Box<[u8]>, u8>>>,
}

/// The LMDB name of a partitioned table's map.
pub(crate) fn map_name(main: &str) -> String {
    format!("{main}@map")
}

/// The LMDB name of partition `n`.
pub(crate) fn part_name(main: &str, n: usize) -> String {
    format!("{main}@p{n:02}")
}

/// The map key that says the main database's keys were moved into partitions: one byte
/// longer than any assignment's key, so never mistaken for one. Its value is
/// [`settings`].
pub(crate) fn converted_mark(prefix: usize) -> Vec<u8> {
    vec![0xff; prefix + 1]
}

/// The settings a table was split with, as the mark keeps them: prefix length and
/// partition count, `u32` big-endian each.
fn settings(prefix: usize, count: usize) -> [u8; 8] {
    let mut v = [0u8; 8];
    v[..4].copy_from_slice(&u32::try_from(prefix).unwrap_or(u32::MAX).to_be_bytes());
    v[4..].copy_from_slice(&u32::try_from(count).unwrap_or(u32::MAX).to_be_bytes());
    v
}

/// Whether a table's map fits the settings it is opened with.
pub(crate) enum MapState {
    /// Split with these settings.
    Split,
    /// Not split yet (an empty map).
    Unsplit,
    /// Split with other settings, or the map is damaged: the reason.
    Mismatch(String),
}

/// Reads what the map says about the table's split.
pub(crate) fn map_state(txn: &RoTxn<'_>, parts: &Parts<'_>) -> heed::Result<MapState> {
    let want = settings(parts.prefix, parts.trees.len());
    match parts.map.get(txn, &converted_mark(parts.prefix))? {
        Some(v) if v == want => Ok(MapState::Split),
        Some(_) => Ok(MapState::Mismatch(
            "it is split into partitions with another partition count".into(),
        )),
        None if parts.map.is_empty(txn)? => Ok(MapState::Unsplit),
        None => Ok(MapState::Mismatch(
            "it is split into partitions by a prefix of another length".into(),
        )),
    }
}

/// Where a key lives, and the key as stored there.
pub(crate) enum Route<'d, 'k> {
    /// The main database, the whole key.
    Main(&'k [u8]),
    /// A partition (its number and database), the key without its prefix.
    Part(usize, Db<'d>, &'k [u8]),
}

impl<'d> Parts<'d> {
    /// The partition assigned to prefix `x`, if any; `committed` says that `txn` is a
    /// snapshot, whose assignments may be remembered.
    fn assigned(
        &self,
        txn: &RoTxn<'_>,
        x: &[u8],
        committed: bool,
    ) -> heed::Result<Option<(usize, Db<'d>)>> {
        let known = self.known.read().get(x).copied();
        let n = match known {
            Some(n) => Some(n),
            None => {
                let n = self.map.get(txn, x)?.and_then(|v| v.first().copied());
                if n.is_some_and(|n| usize::from(n) >= self.trees.len()) {
                    // The settings were checked at open: only damage leads here.
                    return Err(heed::Error::Mdb(heed::MdbError::Corrupted));
                }
                if let (Some(n), true) = (n, committed) {
                    self.known.write().insert(x.into(), n);
                }
                n
            }
        };
        Ok(n.map(usize::from)
            .and_then(|n| self.trees.get(n).map(|db| (n, *db))))
    }

    /// Where `key` is, for reads and deletes.
    pub fn route_read<'k>(
        &self,
        txn: &RoTxn<'_>,
        key: &'k [u8],
        suffix: usize,
        committed: bool,
    ) -> heed::Result<Route<'d, 'k>> {
        if key.len().saturating_sub(suffix) <= self.prefix {
            return Ok(Route::Main(key));
        }
        Ok(match self.assigned(txn, &key[..self.prefix], committed)? {
            Some((n, db)) => Route::Part(n, db, &key[self.prefix..]),
            None => Route::Main(key),
        })
    }

    /// Where `key` goes, assigning its prefix the next free partition when it has none.
    pub fn route_write<'k>(
        &self,
        txn: &mut RwTxn<'_>,
        main: Db<'_>,
        key: &'k [u8],
        suffix: usize,
    ) -> heed::Result<Route<'d, 'k>> {
        if key.len().saturating_sub(suffix) <= self.prefix {
            return Ok(Route::Main(key));
        }
        let x = &key[..self.prefix];
        let found = match self.assigned(txn, x, false)? {
            Some(found) => Some(found),
            None if main_holds(txn, main, x, self.prefix)? => None,
            None => self.assign(txn, x)?,
        };
        Ok(match found {
            Some((n, db)) => Route::Part(n, db, &key[self.prefix..]),
            None => Route::Main(key),
        })
    }

    /// Gives prefix `x` the next free partition, if one is left: partitions are numbered
    /// in the order prefixes get them, so the map's assignments count the used ones.
    fn assign(&self, txn: &mut RwTxn<'_>, x: &[u8]) -> heed::Result<Option<(usize, Db<'d>)>> {
        let mark = self.map.get(txn, &converted_mark(self.prefix))?.is_some();
        let used = usize::try_from(self.map.len(txn)?)
            .unwrap_or(usize::MAX)
            .saturating_sub(usize::from(mark));
        let Some(db) = self.trees.get(used).copied() else {
            return Ok(None);
        };
        let Ok(number) = u8::try_from(used) else {
            return Ok(None);
        };
        self.map.put(txn, x, &[number])?;
        Ok(Some((used, db)))
    }

    /// The assigned prefixes whose keys may fall within the bounds, in key order.
    fn candidates(
        &self,
        txn: &RoTxn<'_>,
        lower: Bound<&[u8]>,
        upper: Bound<&[u8]>,
    ) -> KvResult<Vec<(Vec<u8>, Db<'d>)>> {
        let p = self.prefix;
        let point = |b: Bound<&[u8]>| match b {
            Bound::Included(k) | Bound::Excluded(k) if k.len() >= p => Some(k[..p].to_vec()),
            _ => None,
        };
        if let (Some(lo), Some(hi)) = (point(lower), point(upper)) {
            if lo == hi {
                return Ok(self
                    .assigned(txn, &lo, false)
                    .map_err(storage)?
                    .map(|(_, db)| vec![(lo, db)])
                    .unwrap_or_default());
            }
        }
        let mut out = Vec::new();
        for item in self.map.iter(txn).map_err(storage)? {
            let (x, n) = item.map_err(storage)?;
            if x.len() != p {
                continue;
            }
            let tree = n
                .first()
                .and_then(|n| self.trees.get(usize::from(*n)).copied());
            let Some(db) = tree else {
                return Err(KvError::Storage(
                    "a partition map names a partition that does not exist".into(),
                ));
            };
            out.push((x.to_vec(), db));
        }
        Ok(out)
    }

    /// Every database of the table besides the main one.
    pub fn databases(&self) -> impl Iterator<Item = Db<'d>> + '_ {
        std::iter::once(self.map).chain(self.trees.iter().copied())
    }
}

/// Whether the main database holds a head longer than `prefix` bytes that starts with `x`.
fn main_holds(txn: &RoTxn<'_>, main: Db<'_>, x: &[u8], prefix: usize) -> heed::Result<bool> {
    for item in main.prefix_iter(txn, x)?.move_between_keys() {
        let (head, _) = item?;
        if head.len() > prefix {
            return Ok(true);
        }
    }
    Ok(false)
}

/// A lower and an upper bound, borrowed.
type Bounds<'b> = (Bound<&'b [u8]>, Bound<&'b [u8]>);

/// The bounds, inside the partition of prefix `x`, of the keys within `[lower, upper]`;
/// `None` when no key of that prefix can lie within them. Keys of the partition are `x`
/// followed by at least one byte.
fn local_bounds<'b>(
    x: &[u8],
    lower: Bound<&'b [u8]>,
    upper: Bound<&'b [u8]>,
) -> Option<Bounds<'b>> {
    let p = x.len();
    let lo = match lower {
        Bound::Unbounded => Bound::Unbounded,
        Bound::Included(l) | Bound::Excluded(l) => {
            let n = l.len().min(p);
            match x[..n].cmp(&l[..n]) {
                Ordering::Greater => Bound::Unbounded,
                Ordering::Less => return None,
                // `l` is `x` or a prefix of it: every key of `x` is longer, so greater.
                Ordering::Equal if l.len() <= p => Bound::Unbounded,
                Ordering::Equal => match lower {
                    Bound::Included(_) => Bound::Included(&l[p..]),
                    _ => Bound::Excluded(&l[p..]),
                },
            }
        }
    };
    let hi = match upper {
        Bound::Unbounded => Bound::Unbounded,
        Bound::Included(u) | Bound::Excluded(u) => {
            let n = u.len().min(p);
            match x[..n].cmp(&u[..n]) {
                Ordering::Less => Bound::Unbounded,
                Ordering::Greater => return None,
                Ordering::Equal if u.len() <= p => return None,
                Ordering::Equal => match upper {
                    Bound::Included(_) => Bound::Included(&u[p..]),
                    _ => Bound::Excluded(&u[p..]),
                },
            }
        }
    };
    Some((lo, hi))
}

/// Whether `key` is in the table.
pub(crate) fn contains(
    txn: &RoTxn<'_>,
    main: Db<'_>,
    parts: &Parts<'_>,
    key: &[u8],
    suffix: usize,
    committed: bool,
) -> KvResult<bool> {
    match parts
        .route_read(txn, key, suffix, committed)
        .map_err(storage)?
    {
        Route::Main(k) => set::contains(txn, main, k, suffix),
        Route::Part(_, db, k) => set::contains(txn, db, k, suffix),
    }
}

/// Adds `key` (`add`) or removes it; returns whether it was there.
pub(crate) fn write(
    txn: &mut RwTxn<'_>,
    main: Db<'_>,
    parts: &Parts<'_>,
    key: &[u8],
    suffix: usize,
    add: bool,
) -> heed::Result<bool> {
    let (db, k) = match if add {
        parts.route_write(txn, main, key, suffix)?
    } else {
        parts.route_read(txn, key, suffix, false)?
    } {
        Route::Main(k) => (main, k),
        Route::Part(_, db, k) => (db, k),
    };
    if add {
        set::insert(txn, db, k, suffix)
    } else {
        set::remove(txn, db, k, suffix)
    }
}

/// Empties the table's keys (the map stays: assignments never change).
pub(crate) fn clear(txn: &mut RwTxn<'_>, main: Db<'_>, parts: &Parts<'_>) -> heed::Result<()> {
    main.clear(txn)?;
    for db in parts.trees.iter() {
        db.clear(txn)?;
    }
    Ok(())
}

/// Writes ascending keys, each run of one destination through one cursor
/// ([`set::write_batch`]).
pub(crate) fn write_batch<'b>(
    txn: &mut RwTxn<'_>,
    main: Db<'_>,
    parts: &Parts<'_>,
    suffix: usize,
    n: usize,
    pair: &dyn Fn(usize) -> (&'b [u8], &'b [u8]),
) -> heed::Result<()> {
    let dest = destinations(txn, parts, suffix, n, &|i| pair(i).0, &mut |txn, key| {
        Ok(match parts.route_write(txn, main, key, suffix)? {
            Route::Main(_) => None,
            Route::Part(n, ..) => Some(n),
        })
    })?;
    write_runs(txn, main, parts, suffix, n, &|i| pair(i).0, &|i| dest[i])
}

/// Decides the partition of a key's prefix (`None`: the main database).
type Router<'r> = dyn FnMut(&mut RwTxn<'_>, &[u8]) -> heed::Result<Option<usize>> + 'r;

/// Where each of `n` ascending keys goes: a partition number, or `None` for the main
/// database. Keys with a short head go to the main database; `route` decides for the first
/// key of each prefix, and the keys after it with that prefix, which come together, follow.
fn destinations<'b>(
    txn: &mut RwTxn<'_>,
    parts: &Parts<'_>,
    suffix: usize,
    n: usize,
    key: &dyn Fn(usize) -> &'b [u8],
    route: &mut Router<'_>,
) -> heed::Result<Vec<Option<usize>>> {
    let mut dest = Vec::with_capacity(n);
    let mut last: Option<(&[u8], Option<usize>)> = None;
    for i in 0..n {
        let k = key(i);
        if k.len().saturating_sub(suffix) <= parts.prefix {
            dest.push(None);
            continue;
        }
        let d = match last {
            Some((x, d)) if k.starts_with(x) => d,
            _ => {
                let d = route(txn, k)?;
                last = Some((&k[..parts.prefix], d));
                d
            }
        };
        dest.push(d);
    }
    Ok(dest)
}

/// Writes `n` ascending keys to the destinations [`destinations`] gave them, each run of
/// one destination through one cursor ([`set::write_batch`]).
fn write_runs<'b>(
    txn: &mut RwTxn<'_>,
    main: Db<'_>,
    parts: &Parts<'_>,
    suffix: usize,
    n: usize,
    key: &dyn Fn(usize) -> &'b [u8],
    dest: &dyn Fn(usize) -> Option<usize>,
) -> heed::Result<()> {
    let empty: &[u8] = &[];
    let mut start = 0;
    while start < n {
        let d = dest(start);
        let mut end = start + 1;
        while end < n && dest(end) == d {
            end += 1;
        }
        let (db, cut) = match d.and_then(|n| parts.trees.get(n)) {
            Some(db) => (*db, parts.prefix),
            None => (main, 0),
        };
        set::write_batch(txn, db, suffix, end - start, &|i| {
            (&key(start + i)[cut..], empty)
        })?;
        start = end;
    }
    Ok(())
}

/// Moves the keys of the main database that belong in partitions there, once: for a map
/// that [`map_state`] found unsplit. Returns how many keys moved.
pub(crate) fn convert(
    txn: &mut RwTxn<'_>,
    main: Db<'_>,
    parts: &Parts<'_>,
    suffix: usize,
) -> heed::Result<usize> {
    const CHUNK: usize = 1 << 16;
    let mut keep: Vec<Vec<u8>> = Vec::new();
    let mut moved = 0usize;
    let mut after: Option<Vec<u8>> = None;
    // The main database is read in chunks and emptied at the end. Its keys stay in place
    // meanwhile, so a prefix is assigned without the usual check that the main database
    // holds none of its keys.
    loop {
        // Whole heads per chunk: the next chunk starts after the last head read.
        let mut chunk: Vec<Vec<u8>> = Vec::with_capacity(CHUNK);
        let mut last_head: Option<Vec<u8>> = None;
        {
            let from = match &after {
                Some(h) => Bound::Excluded(h.as_slice()),
                None => Bound::Unbounded,
            };
            for item in main.range(txn, &(from, Bound::Unbounded))? {
                let (head, tail) = item?;
                if last_head.as_deref() != Some(head) {
                    if chunk.len() >= CHUNK {
                        break;
                    }
                    last_head = Some(head.to_vec());
                }
                let mut key = Vec::with_capacity(head.len() + tail.len());
                key.extend_from_slice(head);
                key.extend_from_slice(tail);
                chunk.push(key);
            }
        }
        if chunk.is_empty() {
            break;
        }
        after = last_head;
        let dest = destinations(
            txn,
            parts,
            suffix,
            chunk.len(),
            &|i| &chunk[i],
            &mut |txn, key| {
                let x = &key[..parts.prefix];
                let found = match parts.assigned(txn, x, false)? {
                    Some(found) => Some(found),
                    None => parts.assign(txn, x)?,
                };
                Ok(found.map(|(n, _)| n))
            },
        )?;
        // Keys read in order keep each prefix's keys together: the moved ones are runs.
        let to_move: Vec<usize> = (0..chunk.len()).filter(|&i| dest[i].is_some()).collect();
        write_runs(
            txn,
            main,
            parts,
            suffix,
            to_move.len(),
            &|j| &chunk[to_move[j]],
            &|j| dest[to_move[j]],
        )?;
        moved += to_move.len();
        keep.extend(
            chunk
                .into_iter()
                .zip(dest)
                .filter(|(_, d)| d.is_none())
                .map(|(k, _)| k),
        );
    }
    if moved > 0 {
        main.clear(txn)?;
        let empty: &[u8] = &[];
        set::write_batch(txn, main, suffix, keep.len(), &|i| {
            (keep[i].as_slice(), empty)
        })?;
    }
    let done = settings(parts.prefix, parts.trees.len());
    parts.map.put(txn, &converted_mark(parts.prefix), &done)?;
    Ok(moved)
}

/// The iteration of a range that lies inside one prefix's partition alone, when it can be
/// read from that partition without the main database: both bounds start with the same
/// assigned prefix, and the partition holds a head. Then no key of the main database is
/// within the bounds — every key between them starts with the prefix; heads longer than
/// the prefix that start with it live in the partition; and the partition's heads are
/// longer than the prefix, so no head equal to it or to a part of it exists (heads are
/// prefix-free). The equality and prefix scans of an index take this path.
pub(crate) fn single_partition<'t>(
    txn: &'t RoTxn<'_>,
    parts: &Parts<'_>,
    suffix: usize,
    lower: Bound<&[u8]>,
    upper: Bound<&[u8]>,
    direction: Direction,
    committed: bool,
) -> KvResult<Option<SetIter<'t>>> {
    let p = parts.prefix;
    let (Bound::Included(lo) | Bound::Excluded(lo)) = lower else {
        return Ok(None);
    };
    let (Bound::Included(hi) | Bound::Excluded(hi)) = upper else {
        return Ok(None);
    };
    if lo.len() < p || hi.len() < p || lo[..p] != hi[..p] {
        return Ok(None);
    }
    let x = &lo[..p];
    let Some((_, db)) = parts.assigned(txn, x, committed).map_err(storage)? else {
        return Ok(None);
    };
    if db.is_empty(txn).map_err(storage)? {
        return Ok(None);
    }
    Ok(match local_bounds(x, lower, upper) {
        Some((l, h)) => Some(SetIter::new(txn, db, suffix, x, l, h, direction)?),
        None => None,
    })
}

/// Ordered iteration over a partitioned set table: the main database's keys and the
/// partitions' keys (given back their prefix) merged into one order.
pub struct PartIter<'t> {
    main: SetIter<'t>,
    main_next: Option<KvResult<KvPair<'t>>>,
    main_done: bool,
    parts: std::collections::VecDeque<SetIter<'t>>,
    part_next: Option<KvResult<KvPair<'t>>>,
    forward: bool,
    /// After an error nothing more is read.
    failed: bool,
}

impl std::fmt::Debug for PartIter<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PartIter")
            .field("partitions", &self.parts.len())
            .finish_non_exhaustive()
    }
}

impl<'t> PartIter<'t> {
    /// Iterates the keys within the bounds, which the caller has made storable.
    pub(crate) fn new(
        txn: &'t RoTxn<'_>,
        main: Db<'_>,
        parts: &Parts<'_>,
        suffix: usize,
        lower: Bound<&[u8]>,
        upper: Bound<&[u8]>,
        direction: Direction,
    ) -> KvResult<PartIter<'t>> {
        let main_iter = SetIter::new(txn, main, suffix, &[], lower, upper, direction)?;
        let mut its = std::collections::VecDeque::new();
        for (x, db) in parts.candidates(txn, lower, upper)? {
            if let Some((lo, hi)) = local_bounds(&x, lower, upper) {
                its.push_back(SetIter::new(txn, db, suffix, &x, lo, hi, direction)?);
            }
        }
        let forward = direction == Direction::Forward;
        if !forward {
            its = its.into_iter().rev().collect();
        }
        Ok(PartIter {
            main: main_iter,
            main_next: None,
            main_done: false,
            parts: its,
            part_next: None,
            forward,
            failed: false,
        })
    }
}

impl<'t> Iterator for PartIter<'t> {
    type Item = KvResult<KvPair<'t>>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.failed {
            return None;
        }
        while self.part_next.is_none() {
            let Some(front) = self.parts.front_mut() else {
                break;
            };
            match front.next() {
                Some(item) => self.part_next = Some(item),
                None => {
                    self.parts.pop_front();
                }
            }
        }
        if self.main_next.is_none() && !self.main_done {
            self.main_next = self.main.next();
            self.main_done = self.main_next.is_none();
        }
        let take_main = match (&self.main_next, &self.part_next) {
            (None, None) => return None,
            (Some(Err(_)), _) | (Some(_), None) => true,
            (None, Some(_)) | (_, Some(Err(_))) => false,
            (Some(Ok((m, _))), Some(Ok((p, _)))) => (m < p) == self.forward,
        };
        let item = if take_main {
            self.main_next.take()
        } else {
            self.part_next.take()
        };
        self.failed = matches!(item, Some(Err(_)));
        item
    }
}
