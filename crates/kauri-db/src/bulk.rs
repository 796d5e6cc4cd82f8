//! Loading many entries fast, in bounded memory (the `slapadd -q` of Kauri).
//!
//! A [`BulkLoader`] adds entries in bulk mode (see [`DbWrite::defer_indexes`]) and commits
//! every `chunk` entries, carrying the collected index keys from one transaction to the
//! next, so neither the key-value layer's dirty pages nor its replay log grow with the size
//! of the load. [`BulkLoader::finish`] checks uniqueness and writes the index keys, sorted,
//! in further transactions. While a load is under way `meta` holds `bulk_pending`: entries
//! already committed have no index keys yet, and a database opened with the marker (a load
//! cut short by an error or a crash) re-indexes itself. A load is therefore not atomic: an
//! error leaves the entries of the chunks committed before it, fully indexed after the next
//! open.
//!
//! A caller that resolved names itself (a bulk load validated against its own view of the
//! directory) adds [`Placed`] entries: parent and link targets given as ids, nothing looked
//! up, and the keys that would land at scattered places — names under their parents, link
//! back keys — written in key order when a chunk commits, so each committed chunk still
//! holds whole names and links.

use std::sync::mpsc;

use kauri_kv::{Backend, WriteTxn};

use crate::db::{Db, T_INDEX, T_META};
use crate::entry::Entry;
use crate::error::{DbError, DbResult};
use crate::keys::meta;
use crate::sorter::{KeyBatch, SortedKeys, WRITE_CHUNK};
use crate::write::append::PlacedKeys;
use crate::write::DbWrite;
pub use crate::write::Placed;

/// Index keys written per transaction by [`BulkLoader::finish`].
const KEYS_PER_TXN: usize = 1 << 20;

/// What a bulk load did.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct BulkStats {
    /// Entries added.
    pub entries: u64,
    /// Index keys written.
    pub index_keys: u64,
    /// Transactions committed.
    pub commits: u64,
}

/// Adds entries in chunked bulk transactions; see the module docs.
pub struct BulkLoader<'d, B: Backend> {
    db: &'d Db<B>,
    w: Option<DbWrite<'d, B>>,
    chunk: usize,
    in_chunk: usize,
    stats: BulkStats,
    placed: PlacedKeys,
    /// Entries the caller said the load holds, until the sorter is sized from them.
    expected: Option<u64>,
}

impl<B: Backend> Db<B> {
    /// Starts a bulk load that commits every `chunk` entries.
    pub fn bulk_loader(&self, chunk: usize) -> DbResult<BulkLoader<'_, B>> {
        let mut w = self.write()?;
        w.kv().put(T_META, meta::BULK_PENDING, b"1")?;
        w.defer_indexes();
        Ok(BulkLoader {
            db: self,
            w: Some(w),
            chunk: chunk.max(1),
            in_chunk: 0,
            stats: BulkStats::default(),
            placed: PlacedKeys::default(),
            expected: None,
        })
    }
}

impl<'d, B: Backend> BulkLoader<'d, B> {
    fn txn_mut(&mut self) -> DbResult<&mut DbWrite<'d, B>> {
        self.w
            .as_mut()
            .ok_or_else(|| DbError::UnwillingToPerform("the bulk load has ended".into()))
    }

    /// Says how many entries the load will add in all: at its first commit the key sorter
    /// makes room for them at once, from the keys per entry seen so far.
    pub fn expect(&mut self, entries: u64) {
        self.expected = Some(entries);
    }

    /// Whether an entry failed in the database, which ends the load: it can no longer add
    /// entries or finish.
    pub fn failed(&self) -> bool {
        self.w.as_ref().is_none_or(DbWrite::is_poisoned)
    }

    /// Adds an entry below an existing parent.
    pub fn add(&mut self, entry: Entry) -> DbResult<u64> {
        let id = self.txn_mut()?.add(entry)?;
        self.added()?;
        Ok(id)
    }

    /// Adds an entry whose parent and link targets the caller resolved (see [`Placed`]):
    /// nothing is looked up by name, and its name and link back keys are written in order
    /// when the chunk commits.
    pub fn add_placed(&mut self, placed: Placed) -> DbResult<u64> {
        let BulkLoader {
            w, placed: keys, ..
        } = self;
        let id = w
            .as_mut()
            .ok_or_else(|| DbError::UnwillingToPerform("the bulk load has ended".into()))?
            .add_placed(placed, keys)?;
        self.added()?;
        Ok(id)
    }

    /// Adds the head of a naming context.
    pub fn add_root(&mut self, entry: Entry) -> DbResult<u64> {
        let id = self.txn_mut()?.add_root(entry)?;
        self.added()?;
        Ok(id)
    }

    /// Adds the head of a naming context even below an existing entry (see
    /// [`DbWrite::add_naming_context`]).
    pub fn add_naming_context(&mut self, entry: Entry) -> DbResult<u64> {
        let id = self.txn_mut()?.add_naming_context(entry)?;
        self.added()?;
        Ok(id)
    }

    fn added(&mut self) -> DbResult<()> {
        self.stats.entries += 1;
        self.in_chunk += 1;
        if self.in_chunk >= self.chunk {
            self.in_chunk = 0;
            let mut w = self
                .w
                .take()
                .ok_or_else(|| DbError::UnwillingToPerform("the bulk load has ended".into()))?;
            self.placed.write(w.kv())?;
            let mut keys = w.take_deferred();
            w.commit()?;
            self.stats.commits += 1;
            if let (Some(total), Some(k)) = (self.expected.take(), keys.as_mut()) {
                k.reserve_scaled(total as f64 / self.stats.entries as f64);
            }
            let mut next = self.db.write()?;
            match keys {
                Some(k) => next.set_deferred(k),
                None => next.defer_indexes(),
            }
            self.w = Some(next);
        }
        Ok(())
    }

    /// Commits the last entries, writes every index key in order, and clears the
    /// `bulk_pending` marker.
    pub fn finish(mut self) -> DbResult<BulkStats> {
        let mut w = self
            .w
            .take()
            .ok_or_else(|| DbError::UnwillingToPerform("the bulk load has ended".into()))?;
        if w.is_poisoned() {
            return Err(DbError::UnwillingToPerform(
                "an entry of this bulk load failed; it was not finished".into(),
            ));
        }
        self.placed.write(w.kv())?;
        let keys = w.take_deferred();
        let unique = w.unique_attrs();
        w.commit()?;
        self.stats.commits += 1;
        let mut w = self.db.write()?;
        if let Some(keys) = keys {
            let sorted = keys.finish();
            sorted.check_unique(w.kv(), T_INDEX, &unique)?;
            self.stats.index_keys = sorted.len() as u64;
            let (last, commits) = write_sorted(self.db, w, &sorted)?;
            self.stats.commits += commits;
            w = last;
        }
        w.kv().delete(T_META, meta::BULK_PENDING)?;
        w.commit()?;
        self.stats.commits += 1;
        Ok(self.stats)
    }
}

/// Writes sorted index keys from transaction `w` on, committing every [`KEYS_PER_TXN`];
/// returns the open last transaction and the number of commits. One thread reads the
/// keys out of the sorter in batches while this one writes them: the writing is LMDB's
/// single writer, the reading is not, and they take about as long.
fn write_sorted<'d, B: Backend>(
    db: &'d Db<B>,
    w: DbWrite<'d, B>,
    sorted: &SortedKeys,
) -> DbResult<(DbWrite<'d, B>, u64)> {
    let (to_write, full) = mpsc::sync_channel::<KeyBatch>(2);
    let (to_refill, spent) = mpsc::channel::<KeyBatch>();
    std::thread::scope(|s| {
        let reader = s.spawn(move || -> DbResult<()> {
            let mut batch = KeyBatch::default();
            sorted.for_each(|k| {
                batch.push(k);
                if batch.len() >= WRITE_CHUNK {
                    let next = spent.try_recv().unwrap_or_default();
                    // A writer that stopped has its own error to report.
                    to_write
                        .send(std::mem::replace(&mut batch, next))
                        .map_err(|_| DbError::UnwillingToPerform("index writing stopped".into()))?;
                }
                Ok(())
            })?;
            let _ = to_write.send(batch);
            Ok(())
        });
        let written = (move || -> DbResult<(DbWrite<'d, B>, u64)> {
            let (mut cur, mut commits, mut in_txn) = (w, 0u64, 0usize);
            for mut batch in full {
                in_txn += batch.len();
                batch.write(cur.kv(), T_INDEX, true)?;
                let _ = to_refill.send(batch);
                if in_txn >= KEYS_PER_TXN {
                    in_txn = 0;
                    cur.commit()?;
                    commits += 1;
                    cur = db.write()?;
                }
            }
            Ok((cur, commits))
        })();
        let read = reader
            .join()
            .map_err(|_| DbError::UnwillingToPerform("the index key reader failed".into()))?;
        let done = written?;
        read.map(|()| done)
    })
}
