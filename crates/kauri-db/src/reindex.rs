//! Re-indexing: the `index`, `tree` and `nodes` tables rebuilt from the records alone.
//!
//! Every record carries its parent id and RDN, so the hierarchy tables are derived data just
//! like the attribute indexes. The records are streamed in id order in batches (never all in
//! memory; the tree keys, some 40 bytes per record, are collected whole and sorted); the keys they produce go into a [`KeySorter`] and are written in key order, so
//! LMDB appends instead of inserting at random places. When
//! the sorter reaches its memory budget it is written out and refilled.

use std::collections::HashMap;
use std::ops::Bound;

use kauri_kv::{Backend, Direction, ReadTxn, WriteTxn};

use crate::config::{IndexFlags, LinkRole};
use crate::db::{Db, T_ENTRIES, T_INDEX, T_LINKS, T_META, T_NODES, T_TREE};
use crate::error::{DbError, DbResult};
use crate::keys::{
    id_key, meta, presence_key, read_u64_be, split_link_key, tree_key, value_key_into, LINK_FORWARD,
};
use crate::read::{self, node_value};
use crate::record::{self, RecordView};
pub use crate::sorter::KeySorter;

/// Records read per batch while streaming.
const BATCH: usize = 4096;

/// Progress reports: `(done, total)` records.
pub type Progress<'a> = &'a dyn Fn(u64, u64);

/// Index keys of one record, as the configuration says they should be.
pub(crate) fn record_index_keys(
    rec: &RecordView<'_>,
    id: u64,
    flags_of: &mut dyn FnMut(u32) -> IndexFlags,
    max_key: usize,
    out: &mut KeySorter,
) {
    let mut key = Vec::with_capacity(64);
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
                value_key_into(&mut key, a.id, &v.norm(), id, max_key);
                out.push(&key);
            }
        }
    }
}

/// Presence keys of linked attributes, derived from the `links` table: one per entry and
/// attribute that has at least one link (forward links under the forward attribute,
/// back links under the back attribute). `want` filters attribute ids (the check works
/// on groups of attributes).
pub(crate) fn link_presence_keys<R: ReadTxn>(
    kv: &R,
    back_of: &HashMap<u32, u32>,
    want: &mut dyn FnMut(u32) -> bool,
    out: &mut KeySorter,
) -> DbResult<()> {
    let mut last: Option<(u8, u64, u32)> = None;
    for item in kv.range(
        T_LINKS,
        Bound::Unbounded,
        Bound::Unbounded,
        Direction::Forward,
    )? {
        let (k, _) = item?;
        let k: &[u8] = &k;
        let Some((kind, from, attr, _)) = split_link_key(k) else {
            continue;
        };
        if last == Some((kind, from, attr)) {
            continue;
        }
        last = Some((kind, from, attr));
        let shown = if kind == LINK_FORWARD {
            Some(attr)
        } else {
            back_of.get(&attr).copied()
        };
        if let Some(a) = shown.filter(|a| want(*a)) {
            out.push(&presence_key(a, from));
        }
    }
    Ok(())
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
        let k: &[u8] = &k;
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
    /// Forward link attribute id → back link attribute id, for every registered pair.
    pub(crate) fn link_back_ids(&self) -> HashMap<u32, u32> {
        let reg = self.registry();
        let mut out = HashMap::new();
        let cfg = self.config();
        for (forward, role) in &cfg.links {
            if let LinkRole::Forward { back: Some(b), .. } = role {
                if let (Some(f), Some(b)) = (
                    reg.id_of_lower(forward),
                    reg.id_of_lower(&b.to_ascii_lowercase()),
                ) {
                    out.insert(f, b);
                }
            }
        }
        out
    }

    /// Index flags by attribute id, for everything registered.
    pub(crate) fn flags_by_id(&self) -> Vec<IndexFlags> {
        let reg = self.registry();
        let mut v = vec![IndexFlags::NONE; reg.max_id() as usize + 1];
        for (id, name) in reg.iter() {
            if let Some(slot) = v.get_mut(id as usize) {
                *slot = self.config().index_of_lower(&name.to_ascii_lowercase());
            }
        }
        v
    }

    /// Rebuilds every index and the hierarchy tables from the records, in one transaction.
    pub fn reindex(&self, progress: Option<Progress<'_>>) -> DbResult<ReindexStats> {
        // A transaction that outgrows the map after a batch write cannot be replayed into
        // the grown map; the map has grown by then, so running it again succeeds.
        let mut attempts = 0;
        loop {
            match self.reindex_once(progress) {
                Err(DbError::Kv(kauri_kv::KvError::MapFull(reason))) if attempts < 3 => {
                    attempts += 1;
                    tracing::info!(%reason, "re-index outgrew the map; running it again");
                }
                other => return other,
            }
        }
    }

    /// Recomputes every stored normalized value under the current attribute syntaxes and
    /// rewrites the records that change (run at open when the syntaxes changed; the
    /// indexes must be rebuilt afterwards). Values that no longer fit their syntax keep
    /// their raw form as normalized form and are counted in the log.
    pub fn renormalize(&self, progress: Option<Progress<'_>>) -> DbResult<u64> {
        let mut w = self.write()?;
        let reg = self.registry();
        let syntax_of: Vec<Option<crate::syntax::Syntax>> = (0..=reg.max_id())
            .map(|id| reg.name_of(id).map(|n| self.config().schema.syntax_of(n)))
            .collect();
        let kv = w.kv();
        let total = count_records(kv)?;
        let (mut done, mut rewritten, mut invalid) = (0u64, 0u64, 0u64);
        let mut last = None;
        loop {
            let mut changed: Vec<([u8; 8], Vec<u8>)> = Vec::new();
            let next = for_each_record(kv, last, BATCH, |id, bytes| {
                done += 1;
                let mut rec = RecordView::parse(bytes)?.to_owned_record()?;
                let mut dirty = false;
                for a in &mut rec.attrs {
                    let Some(Some(syn)) = syntax_of.get(a.id as usize) else {
                        continue;
                    };
                    for v in &mut a.values {
                        let norm = match syn.normalize(&v.raw) {
                            Ok(n) => (n.as_ref() != v.raw.as_slice()).then(|| n.into_owned()),
                            Err(_) => {
                                invalid += 1;
                                None
                            }
                        };
                        if norm != v.norm {
                            v.norm = norm;
                            dirty = true;
                        }
                    }
                }
                if dirty {
                    changed.push((
                        id_key(id),
                        record::with_room(rec.encode(), Some(bytes.len())),
                    ));
                }
                Ok(())
            })?;
            for (k, v) in &changed {
                kv.put(T_ENTRIES, k, v)?;
            }
            rewritten += changed.len() as u64;
            if let Some(p) = progress {
                p(done, total);
            }
            match next {
                Some(l) => last = Some(l),
                None => break,
            }
        }
        if invalid > 0 {
            tracing::warn!(
                invalid,
                "values no longer fit their attribute's syntax; kept as they are"
            );
        }
        kv.put(
            T_META,
            meta::SCHEMA_CONFIG,
            &self.config().schema.fingerprint(),
        )?;
        w.commit()?;
        Ok(rewritten)
    }

    fn reindex_once(&self, progress: Option<Progress<'_>>) -> DbResult<ReindexStats> {
        let mut w = self.write()?;
        let stats = self.rebuild_derived(w.kv(), progress)?;
        w.commit()?;
        Ok(stats)
    }

    /// Rebuilds the index and hierarchy tables inside a write transaction the caller
    /// commits (a re-index, or the repair of a consistency check).
    pub(crate) fn rebuild_derived(
        &self,
        kv: &mut B::Write<'_>,
        progress: Option<Progress<'_>>,
    ) -> DbResult<ReindexStats> {
        let max = self.config().max_index_key_len;
        let flags = self.flags_by_id();
        let mut flags_of = |a: u32| flags.get(a as usize).copied().unwrap_or(IndexFlags::NONE);
        let total = count_records(kv)?;
        kv.clear(T_INDEX)?;
        kv.clear(T_TREE)?;
        kv.clear(T_NODES)?;
        let mut stats = ReindexStats::default();
        let mut index = KeySorter::new(self.config().sort_budget);
        let mut tree: Vec<(Vec<u8>, [u8; 8])> = Vec::new();
        let mut nodes: Vec<([u8; 8], Vec<u8>)> = Vec::with_capacity(BATCH);
        let mut last = None;
        loop {
            nodes.clear();
            let next = for_each_record(kv, last, BATCH, |id, bytes| {
                let rec = RecordView::parse(bytes)?;
                record_index_keys(&rec, id, &mut flags_of, max, &mut index);
                let name = read::name_norm(rec.parent(), rec.rdn())?;
                tree.push((tree_key(rec.parent(), &name, max), id_key(id)));
                nodes.push((id_key(id), node_value(rec.parent(), rec.rdn())));
                Ok(())
            })?;
            kv.append_batch(T_NODES, nodes.len(), &|i| {
                nodes
                    .get(i)
                    .map_or((&[][..], &[][..]), |(k, v)| (&k[..], v.as_slice()))
            })?;
            stats.records += nodes.len() as u64;
            if let Some(p) = progress {
                p(stats.records, total);
            }
            if index.is_full() {
                stats.spills += 1;
                let full = std::mem::replace(&mut index, KeySorter::new(self.config().sort_budget))
                    .finish();
                stats.index_keys += full.len() as u64;
                full.write_into(kv, T_INDEX, &[])?;
            }
            match next {
                Some(l) => last = Some(l),
                None => break,
            }
        }
        link_presence_keys(kv, &self.link_back_ids(), &mut |_| true, &mut index)?;
        let sorted = index.finish();
        stats.index_keys += sorted.len() as u64;
        sorted.write_into(kv, T_INDEX, &[])?;
        tree.sort_unstable();
        kv.append_batch(T_TREE, tree.len(), &|i| {
            tree.get(i)
                .map_or((&[][..], &[][..]), |(k, v)| (k.as_slice(), &v[..]))
        })?;
        kv.put(
            T_META,
            meta::INDEX_CONFIG,
            &self.config().index_fingerprint(),
        )?;
        kv.delete(T_META, meta::BULK_PENDING)?;
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
