//! The in-memory backend: volatile, for tests and tools that need a throwaway store.
//!
//! The committed state is an `Arc` of per-table `Arc<BTreeMap>`s. A snapshot just clones the
//! outer `Arc`, so it is cheap, `'static` and `Send`, and never sees later commits. The single
//! writer (a mutex serializes writers) works on its own copy of the table list and clones a
//! table only when it first writes to it (copy-on-write through `Arc::make_mut`); `commit`
//! swaps the new list in atomically. Key limits match LMDB's so both backends behave alike.

use std::collections::btree_map;
use std::collections::BTreeMap;
use std::iter::Rev;
use std::ops::Bound;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use parking_lot::{Mutex, MutexGuard, RwLock};

use crate::undo::UndoLog;
use crate::{
    check_key, check_shape, storable_bounds, Backend, BackendInfo, Direction, KvError, KvPair,
    KvResult, ReadTxn, TableId, TableShape, TableSpec, WriteTxn, MAX_KEY_LEN,
};

type Table = Arc<BTreeMap<Vec<u8>, Vec<u8>>>;
type Tables = Arc<Vec<Table>>;

/// A volatile store kept in memory, with the same semantics as the LMDB backend.
#[derive(Debug)]
pub struct MemBackend {
    committed: RwLock<Tables>,
    shapes: Arc<[TableShape]>,
    writer: Mutex<()>,
    write_active: AtomicBool,
}

impl MemBackend {
    /// Creates an empty store with the given tables (addressed by their position).
    pub fn new(tables: &[&str]) -> MemBackend {
        MemBackend::with_shapes(&vec![TableShape::Plain; tables.len()])
    }

    /// Creates an empty store with the given tables and their shapes. The shapes change
    /// nothing in memory, but writes are checked against them as LMDB checks them.
    pub fn new_shaped(tables: &[TableSpec<'_>]) -> MemBackend {
        MemBackend::with_shapes(&tables.iter().map(|t| t.shape).collect::<Vec<_>>())
    }

    fn with_shapes(shapes: &[TableShape]) -> MemBackend {
        MemBackend {
            committed: RwLock::new(Arc::new(vec![Table::default(); shapes.len()])),
            shapes: shapes.into(),
            writer: Mutex::new(()),
            write_active: AtomicBool::new(false),
        }
    }
}

/// A read snapshot of a [`MemBackend`]: the committed state at the time it was taken.
#[derive(Debug, Clone)]
pub struct MemSnapshot {
    tables: Tables,
}

/// The write transaction of a [`MemBackend`].
#[derive(Debug)]
pub struct MemWrite<'e> {
    backend: &'e MemBackend,
    tables: Vec<Table>,
    undo: UndoLog,
    _writer: MutexGuard<'e, ()>,
}

/// Ordered iterator over a table of the in-memory backend.
#[derive(Debug)]
pub enum MemIter<'t> {
    /// Ascending iteration.
    Forward(btree_map::Range<'t, Vec<u8>, Vec<u8>>),
    /// Descending iteration.
    Backward(Rev<btree_map::Range<'t, Vec<u8>, Vec<u8>>>),
    /// Nothing to return.
    Empty,
}

impl<'t> Iterator for MemIter<'t> {
    type Item = KvResult<KvPair<'t>>;

    fn next(&mut self) -> Option<Self::Item> {
        let (k, v) = match self {
            MemIter::Forward(it) => it.next()?,
            MemIter::Backward(it) => it.next()?,
            MemIter::Empty => return None,
        };
        Some(Ok((k.as_slice().into(), v.as_slice())))
    }
}

fn table_of(tables: &[Table], table: TableId) -> KvResult<&BTreeMap<Vec<u8>, Vec<u8>>> {
    tables
        .get(table)
        .map(|t| &**t)
        .ok_or(KvError::NoSuchTable(table))
}

fn get_in<'t>(tables: &'t [Table], table: TableId, key: &[u8]) -> KvResult<Option<&'t [u8]>> {
    check_key(key, MAX_KEY_LEN)?;
    Ok(table_of(tables, table)?.get(key).map(Vec::as_slice))
}

fn range_in<'t>(
    tables: &'t [Table],
    table: TableId,
    lower: Bound<&[u8]>,
    upper: Bound<&[u8]>,
    direction: Direction,
) -> KvResult<MemIter<'t>> {
    let map = table_of(tables, table)?;
    let Some(bounds) = storable_bounds(lower, upper, MAX_KEY_LEN) else {
        return Ok(MemIter::Empty);
    };
    let range = map.range::<[u8], _>(bounds);
    Ok(match direction {
        Direction::Forward => MemIter::Forward(range),
        Direction::Backward => MemIter::Backward(range.rev()),
    })
}

impl ReadTxn for MemSnapshot {
    type Iter<'t> = MemIter<'t>;

    fn get<'t>(&'t self, table: TableId, key: &[u8]) -> KvResult<Option<&'t [u8]>> {
        get_in(&self.tables, table, key)
    }

    fn range<'t>(
        &'t self,
        table: TableId,
        lower: Bound<&[u8]>,
        upper: Bound<&[u8]>,
        direction: Direction,
    ) -> KvResult<MemIter<'t>> {
        range_in(&self.tables, table, lower, upper, direction)
    }
}

impl ReadTxn for MemWrite<'_> {
    type Iter<'t>
        = MemIter<'t>
    where
        Self: 't;

    fn get<'t>(&'t self, table: TableId, key: &[u8]) -> KvResult<Option<&'t [u8]>> {
        get_in(&self.tables, table, key)
    }

    fn range<'t>(
        &'t self,
        table: TableId,
        lower: Bound<&[u8]>,
        upper: Bound<&[u8]>,
        direction: Direction,
    ) -> KvResult<MemIter<'t>> {
        range_in(&self.tables, table, lower, upper, direction)
    }
}

impl MemWrite<'_> {
    /// The working copy of a table, cloned from the committed one on its first write.
    fn table_mut(&mut self, table: TableId) -> KvResult<&mut BTreeMap<Vec<u8>, Vec<u8>>> {
        self.tables
            .get_mut(table)
            .map(Arc::make_mut)
            .ok_or(KvError::NoSuchTable(table))
    }
}

impl WriteTxn for MemWrite<'_> {
    fn put(&mut self, table: TableId, key: &[u8], value: &[u8]) -> KvResult<()> {
        check_key(key, MAX_KEY_LEN)?;
        let shape = *self
            .backend
            .shapes
            .get(table)
            .ok_or(KvError::NoSuchTable(table))?;
        check_shape(shape, table, key, value)?;
        let map = self.table_mut(table)?;
        let old = map.insert(key.to_vec(), value.to_vec());
        self.undo.record(table, key, old);
        Ok(())
    }

    fn delete(&mut self, table: TableId, key: &[u8]) -> KvResult<bool> {
        check_key(key, MAX_KEY_LEN)?;
        if !table_of(&self.tables, table)?.contains_key(key) {
            return Ok(false);
        }
        let old = self.table_mut(table)?.remove(key);
        self.undo.record(table, key, old);
        Ok(true)
    }

    fn clear(&mut self, table: TableId) -> KvResult<()> {
        let slot = self
            .tables
            .get_mut(table)
            .ok_or(KvError::NoSuchTable(table))?;
        let old = std::mem::take(slot);
        if self.undo.active() {
            for (k, v) in old.iter() {
                self.undo.record(table, k, Some(v.clone()));
            }
        }
        Ok(())
    }

    fn begin_nested(&mut self) -> KvResult<()> {
        self.undo.begin();
        Ok(())
    }

    fn commit_nested(&mut self) -> KvResult<()> {
        self.undo.commit()
    }

    fn abort_nested(&mut self) -> KvResult<()> {
        for entry in self.undo.abort()? {
            let map = self.table_mut(entry.table)?;
            match entry.old {
                Some(v) => {
                    map.insert(entry.key, v);
                }
                None => {
                    map.remove(&entry.key);
                }
            }
        }
        Ok(())
    }

    fn nested_depth(&self) -> usize {
        self.undo.depth()
    }

    fn commit(mut self) -> KvResult<()> {
        let tables = std::mem::take(&mut self.tables);
        *self.backend.committed.write() = Arc::new(tables);
        Ok(())
    }

    fn abort(self) {}
}

impl Drop for MemWrite<'_> {
    fn drop(&mut self) {
        self.backend.write_active.store(false, Ordering::Release);
    }
}

impl Backend for MemBackend {
    type Read = MemSnapshot;
    type Write<'e> = MemWrite<'e>;

    fn read(&self) -> KvResult<MemSnapshot> {
        Ok(MemSnapshot {
            tables: self.committed.read().clone(),
        })
    }

    fn write(&self) -> KvResult<MemWrite<'_>> {
        let guard = self.writer.lock();
        self.write_active.store(true, Ordering::Release);
        let tables = (**self.committed.read()).clone();
        Ok(MemWrite {
            backend: self,
            tables,
            undo: UndoLog::default(),
            _writer: guard,
        })
    }

    fn info(&self) -> KvResult<BackendInfo> {
        let tables = self.committed.read().clone();
        let used_bytes = tables
            .iter()
            .flat_map(|t| t.iter())
            .map(|(k, v)| (k.len() + v.len()) as u64)
            .sum();
        Ok(BackendInfo {
            name: "memory",
            size_on_disk: 0,
            map_size: 0,
            used_bytes,
            free_pages: Some(0),
            write_active: self.write_active(),
            resizes: 0,
            snapshot_retakes: 0,
        })
    }

    fn write_active(&self) -> bool {
        self.write_active.load(Ordering::Acquire)
    }
}
