//! Re-indexing: the `index`, `tree` and `nodes` tables rebuilt from the records alone.
//!
//! Every record carries its parent id and RDN, so the hierarchy tables are derived data just
//! like the attribute indexes. The records are streamed in id order in batches (never all in
//! memory); the keys they produce go into a [`KeySorter`], an arena of keys sorted in one go
//! and written in key order, so LMDB appends instead of inserting at random places. When
//! the sorter reaches its memory budget it is written out and refilled.

use std::ops::Bound;

use kauri_kv::{Backend, Direction, ReadTxn, TableId, WriteTxn};

use crate::config::IndexFlags;
use crate::db::{Db, T_ENTRIES, T_INDEX, T_META, T_NODES, T_TREE};
use crate::error::{DbError, DbResult};
use crate::keys::{
    id_key, index_key_attr, meta, presence_key, read_id_suffix, read_u64_be, tree_key, value_key,
    TERM_CUT, TERM_FULL,
};
use crate::read::{self, node_value};
use crate::record::RecordView;

/// Records read per batch while streaming.
const BATCH: usize = 4096;

/// Progress reports: `(done, total)` records.
pub type Progress<'a> = &'a dyn Fn(u64, u64);

/// An arena of byte keys that are sorted once and then written in order.
///
/// Each key is remembered as its first 16 bytes (as a big-endian integer, so most
/// comparisons are one integer compare), its offset and its length; large sorts use both
/// cores.
#[derive(Debug, Default)]
pub struct KeySorter {
    data: Vec<u8>,
    keys: Vec<(u128, u32, u32)>,
    budget: usize,
}

fn head16(k: &[u8]) -> u128 {
    let mut b = [0u8; 16];
    let n = k.len().min(16);
    b[..n].copy_from_slice(&k[..n]);
    u128::from_be_bytes(b)
}

fn key_in<'d>(data: &'d [u8], e: &(u128, u32, u32)) -> &'d [u8] {
    let s = e.1 as usize;
    data.get(s..s + e.2 as usize).unwrap_or(&[])
}

fn cmp_entries(data: &[u8], a: &(u128, u32, u32), b: &(u128, u32, u32)) -> std::cmp::Ordering {
    a.0.cmp(&b.0)
        .then_with(|| key_in(data, a).cmp(key_in(data, b)))
}

impl KeySorter {
    /// A sorter that reports itself full past `budget` bytes.
    pub fn new(budget: usize) -> KeySorter {
        KeySorter {
            data: Vec::new(),
            keys: Vec::new(),
            budget: budget.min(u32::MAX as usize / 2),
        }
    }

    /// Adds a key.
    pub fn push(&mut self, key: &[u8]) {
        let start = self.data.len() as u32;
        self.data.extend_from_slice(key);
        self.keys.push((head16(key), start, key.len() as u32));
    }

    /// Number of keys held.
    pub fn len(&self) -> usize {
        self.keys.len()
    }

    /// Whether no key is held.
    pub fn is_empty(&self) -> bool {
        self.keys.is_empty()
    }

    /// Whether the memory budget is used up.
    pub fn is_full(&self) -> bool {
        self.data.len() + self.keys.len() * 16 >= self.budget
    }

    fn key(&self, e: &(u128, u32, u32)) -> &[u8] {
        key_in(&self.data, e)
    }

    /// Sorts the keys and removes duplicates.
    pub fn sort(&mut self) {
        let mut keys = std::mem::take(&mut self.keys);
        let data = &self.data;
        if keys.len() < 200_000 {
            keys.sort_unstable_by(|a, b| cmp_entries(data, a, b));
        } else {
            let mid = keys.len() / 2;
            let (left, right) = keys.split_at_mut(mid);
            std::thread::scope(|s| {
                s.spawn(|| left.sort_unstable_by(|a, b| cmp_entries(data, a, b)));
                right.sort_unstable_by(|a, b| cmp_entries(data, a, b));
            });
            let mut merged = Vec::with_capacity(keys.len());
            let (mut i, mut j) = (0, mid);
            while i < mid && j < keys.len() {
                if cmp_entries(data, &keys[j], &keys[i]).is_lt() {
                    merged.push(keys[j]);
                    j += 1;
                } else {
                    merged.push(keys[i]);
                    i += 1;
                }
            }
            merged.extend_from_slice(&keys[i..mid]);
            merged.extend_from_slice(&keys[j..]);
            keys = merged;
        }
        keys.dedup_by(|a, b| a.0 == b.0 && key_in(data, a) == key_in(data, b));
        self.keys = keys;
    }

    /// The keys in their current order (sorted after [`KeySorter::sort`]).
    pub fn iter(&self) -> impl Iterator<Item = &[u8]> {
        self.keys.iter().map(|e| self.key(e))
    }

    /// Sorts and writes every key with an empty value, appending when the keys all come
    /// after what the table holds. For attributes in `unique`, two records sharing a
    /// value (in the batch or against the table) are a constraint violation.
    pub fn write_into<W: WriteTxn>(
        mut self,
        kv: &mut W,
        table: TableId,
        unique: &[u32],
        max_key: usize,
    ) -> DbResult<()> {
        self.sort();
        if !unique.is_empty() {
            self.check_unique(kv, table, unique, max_key)?;
        }
        let last = match kv
            .range(
                table,
                Bound::Unbounded,
                Bound::Unbounded,
                Direction::Backward,
            )?
            .next()
        {
            Some(kv) => Some(kv?.0.to_vec()),
            None => None,
        };
        let appendable = match (&last, self.keys.first()) {
            (Some(l), Some(first)) => self.key(first) > l.as_slice(),
            _ => true,
        };
        for e in &self.keys {
            let k = self.key(e);
            if appendable {
                kv.append(table, k, &[])?;
            } else {
                kv.put(table, k, &[])?;
            }
        }
        Ok(())
    }

    fn check_unique<W: WriteTxn>(
        &self,
        kv: &W,
        table: TableId,
        unique: &[u32],
        _max_key: usize,
    ) -> DbResult<()> {
        let mut prev: Option<&[u8]> = None;
        for k in self.iter() {
            let Some(attr) = index_key_attr(k) else {
                continue;
            };
            if k.first() != Some(&crate::keys::KIND_VALUE) || !unique.contains(&attr) {
                prev = None;
                continue;
            }
            let Some(value_part) = k.get(..k.len().saturating_sub(8)) else {
                continue;
            };
            if value_part.ends_with(&TERM_CUT) {
                continue;
            }
            if prev == Some(value_part) {
                return Err(DbError::ConstraintViolation(format!(
                    "attribute {attr}: a value is used by two entries"
                )));
            }
            let id = read_id_suffix(k);
            for other in kv.prefix(table, value_part, Direction::Forward)? {
                let (ok, _) = other?;
                if read_id_suffix(ok) != id {
                    return Err(DbError::ConstraintViolation(format!(
                        "attribute {attr}: a value is used by two entries"
                    )));
                }
            }
            prev = Some(value_part);
        }
        let _ = TERM_FULL;
        Ok(())
    }
}

/// Index keys of one record, as the configuration says they should be.
pub(crate) fn record_index_keys(
    rec: &RecordView<'_>,
    id: u64,
    flags_of: &mut dyn FnMut(u32) -> IndexFlags,
    max_key: usize,
    out: &mut KeySorter,
) {
    for a in rec.attrs() {
        let flags = flags_of(a.id);
        if flags == IndexFlags::NONE || a.count == 0 {
            continue;
        }
        if flags.contains(IndexFlags::PRESENCE) {
            out.push(&presence_key(a.id, id));
        }
        if flags.has_value_keys() {
            for v in a.values() {
                out.push(&value_key(a.id, v.norm, id, max_key));
            }
        }
    }
}

/// What a re-index did.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ReindexStats {
    /// Records read.
    pub records: u64,
    /// Index keys written.
    pub index_keys: u64,
    /// Times the sort buffer was written out before the end.
    pub spills: u64,
}

/// Streams records in id order in batches, calling `f` with each.
pub(crate) fn for_each_record<R: ReadTxn>(
    kv: &R,
    start_after: Option<u64>,
    limit: usize,
    mut f: impl FnMut(u64, &[u8]) -> DbResult<()>,
) -> DbResult<Option<u64>> {
    let from = start_after.map(|l| id_key(l.saturating_add(1)));
    let lo = match &from {
        Some(k) => Bound::Included(k.as_slice()),
        None => Bound::Unbounded,
    };
    let mut last = None;
    for (n, item) in kv
        .range(T_ENTRIES, lo, Bound::Unbounded, Direction::Forward)?
        .enumerate()
    {
        if n >= limit {
            break;
        }
        let (k, v) = item?;
        let id = read_u64_be(k).ok_or_else(|| DbError::corrupt("entry key is not an id"))?;
        f(id, v)?;
        last = Some(id);
    }
    Ok(last)
}

/// Counts the records (for progress totals).
pub(crate) fn count_records<R: ReadTxn>(kv: &R) -> DbResult<u64> {
    let mut n = 0u64;
    for item in kv.range(
        T_ENTRIES,
        Bound::Unbounded,
        Bound::Unbounded,
        Direction::Forward,
    )? {
        item?;
        n += 1;
    }
    Ok(n)
}

impl<B: Backend> Db<B> {
    /// Index flags by attribute id, for everything registered.
    pub(crate) fn flags_by_id(&self) -> Vec<IndexFlags> {
        let reg = self.registry();
        let mut v = vec![IndexFlags::NONE; reg.max_id() as usize + 1];
        for (id, name) in reg.iter() {
            if let Some(slot) = v.get_mut(id as usize) {
                *slot = self.cfg.index_of_lower(&name.to_ascii_lowercase());
            }
        }
        v
    }

    /// Rebuilds every index and the hierarchy tables from the records, in one transaction.
    pub fn reindex(&self, progress: Option<Progress<'_>>) -> DbResult<ReindexStats> {
        let mut w = self.write()?;
        let max = self.cfg.max_index_key_len;
        let flags = self.flags_by_id();
        let mut flags_of = |a: u32| flags.get(a as usize).copied().unwrap_or(IndexFlags::NONE);
        let kv = w.kv();
        let total = count_records(kv)?;
        kv.clear(T_INDEX)?;
        kv.clear(T_TREE)?;
        kv.clear(T_NODES)?;
        let mut stats = ReindexStats::default();
        let mut index = KeySorter::new(self.cfg.sort_budget);
        let mut tree: Vec<(Vec<u8>, u64)> = Vec::new();
        let mut nodes: Vec<(u64, Vec<u8>)> = Vec::with_capacity(BATCH);
        let mut last = None;
        loop {
            nodes.clear();
            let next = for_each_record(kv, last, BATCH, |id, bytes| {
                let rec = RecordView::parse(bytes)?;
                record_index_keys(&rec, id, &mut flags_of, max, &mut index);
                let name = read::name_norm(rec.parent(), rec.rdn())?;
                tree.push((tree_key(rec.parent(), &name, max), id));
                nodes.push((id, node_value(rec.parent(), rec.rdn())));
                Ok(())
            })?;
            for (id, v) in &nodes {
                kv.append(T_NODES, &id_key(*id), v)?;
            }
            stats.records += nodes.len() as u64;
            if let Some(p) = progress {
                p(stats.records, total);
            }
            if index.is_full() {
                stats.index_keys += index.len() as u64;
                stats.spills += 1;
                std::mem::replace(&mut index, KeySorter::new(self.cfg.sort_budget)).write_into(
                    kv,
                    T_INDEX,
                    &[],
                    max,
                )?;
            }
            match next {
                Some(l) => last = Some(l),
                None => break,
            }
        }
        stats.index_keys += index.len() as u64;
        index.write_into(kv, T_INDEX, &[], max)?;
        tree.sort_unstable();
        for (k, id) in &tree {
            kv.append(T_TREE, k, &id_key(*id))?;
        }
        kv.put(T_META, meta::INDEX_CONFIG, &self.cfg.index_fingerprint())?;
        w.commit()?;
        Ok(stats)
    }
}

/// Re-exported for the consistency check: a record's tree key and node value.
pub(crate) fn hierarchy_of(rec: &RecordView<'_>, max: usize) -> Result<(Vec<u8>, Vec<u8>), String> {
    let name = read::name_norm(rec.parent(), rec.rdn()).map_err(|e| e.to_string())?;
    Ok((
        tree_key(rec.parent(), &name, max),
        node_value(rec.parent(), rec.rdn()),
    ))
}

/// Used by the check to confirm a parent exists.
pub(crate) fn exists<R: ReadTxn>(kv: &R, id: u64) -> DbResult<bool> {
    Ok(read::record(kv, id)?.is_some())
}
