//! Kauri's key-value layer.
//!
//! Everything above this crate stores bytes through one small trait family:
//!
//! * [`Backend`]: an opened store with a fixed list of named tables. It hands out read
//!   snapshots ([`Backend::read`]) and the single write transaction ([`Backend::write`]).
//! * [`ReadTxn`]: zero-copy `get` and ordered range / prefix iteration, forwards and
//!   backwards, over one consistent snapshot that lives as long as the value.
//! * [`WriteTxn`]: a read view of its own uncommitted writes plus `put`, `delete`,
//!   `clear`, nested transactions (a failed inner step rolls back alone) and
//!   `commit` / `abort` (dropping a write transaction aborts it).
//!
//! Two backends implement it, and both pass the conformance suite in `tests/`:
//! [`lmdb::LmdbBackend`] (the default, durable, memory-mapped) and [`mem::MemBackend`]
//! (volatile, for tests).
//!
//! Keys are limited to [`Backend::max_key_len`] bytes (511 for LMDB, the same for the
//! in-memory backend so both behave alike); a longer key gets [`KvError::KeyTooLong`] and
//! never reaches the storage engine. Callers that need longer logical keys hash or
//! truncate them themselves.

#![cfg_attr(
    not(test),
    deny(clippy::unwrap_used, clippy::expect_used, clippy::panic)
)]
#![warn(missing_docs)]

pub mod dump;
pub mod lmdb;
pub mod mem;
mod undo;

pub use lmdb::{LmdbBackend, LmdbOptions};
pub use mem::MemBackend;

use std::borrow::Cow;
use std::ops::Bound;

/// Position of a table in the list given when a backend is opened. Tables are addressed by
/// this number on every call so that no lookup by name happens on the hot path.
pub type TableId = usize;

/// The largest key any backend accepts (LMDB's compiled-in limit).
pub const MAX_KEY_LEN: usize = 511;

/// Direction of an ordered iteration.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Direction {
    /// Ascending key order.
    Forward,
    /// Descending key order.
    Backward,
}

/// Errors of the key-value layer. Every backend reports the same variants for the same
/// misuse, so code above can be tested against either.
#[derive(Debug, thiserror::Error)]
pub enum KvError {
    /// The key is longer than the backend accepts; nothing was written.
    #[error("key of {len} bytes is longer than the {max}-byte limit")]
    KeyTooLong {
        /// Length of the refused key.
        len: usize,
        /// The backend's limit.
        max: usize,
    },
    /// Empty keys are not storable (LMDB refuses them).
    #[error("empty keys are not allowed")]
    EmptyKey,
    /// A table number outside the list the backend was opened with.
    #[error("no table number {0}")]
    NoSuchTable(TableId),
    /// `commit_nested`/`abort_nested` without a matching `begin_nested`.
    #[error("no nested transaction is open")]
    NoNestedTxn,
    /// The store could not grow to hold the transaction (disk full, address space, or a
    /// transaction too large to replay after a resize).
    #[error("the database map is full and could not grow: {0}")]
    MapFull(String),
    /// A write that breaks the rules of its table's [`TableShape`]; nothing was written.
    #[error("table {table}: {reason}")]
    Shape {
        /// The table written to.
        table: TableId,
        /// The rule broken.
        reason: &'static str,
    },
    /// An I/O or engine error with the backend's own explanation.
    #[error("storage error: {0}")]
    Storage(String),
    /// A dump could not be written or read: damaged, truncated, of another format, or
    /// for another layout (see [`dump`]).
    #[error("dump: {0}")]
    Dump(String),
    /// Opening the store failed.
    #[error("cannot open store at {path}: {reason}")]
    Open {
        /// Where the store was looked for.
        path: String,
        /// What went wrong.
        reason: String,
    },
}

/// Result type of this crate.
pub type KvResult<T> = Result<T, KvError>;

/// A key as an iteration yields it: borrowed from the snapshot, or put together when the
/// backend keeps the key in two parts (a [`TableShape::Set`] table in LMDB).
pub type KvKey<'t> = Cow<'t, [u8]>;

/// One key-value pair read from a snapshot.
pub type KvPair<'t> = (KvKey<'t>, &'t [u8]);

/// What a table's keys look like, declared when a store is opened, so that a backend may
/// store the table more compactly. Every shape reads and writes the same way through the
/// traits; only the physical layout differs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TableShape {
    /// Any keys, any values.
    Plain,
    /// A set of keys, each a *head* followed by a fixed-width *suffix* (a record id): every
    /// value is empty, every key is longer than `suffix`, and no head is a proper prefix of
    /// another head. LMDB keeps each head once, with its suffixes as a sorted run of
    /// fixed-size duplicates (`MDB_DUPSORT | MDB_DUPFIXED`), as OpenLDAP's back-mdb keeps
    /// its id lists: the ids of a common value pack densely instead of each repeating the
    /// value in a half-full page. A `get` in such a table may walk the run of its head.
    Set {
        /// Width of the suffix in bytes.
        suffix: usize,
        /// How the backend may split the table by key prefix.
        partitions: Partitions,
    },
}

/// A set table split by the first bytes of its keys: LMDB keeps the keys of each prefix it
/// meets (up to `count` prefixes) in a B-tree of their own, without the prefix. An index
/// keyed by attribute then grows like one tree per attribute, as OpenLDAP's back-mdb keeps
/// it: values that arrive in ascending order (USNs, times, SIDs, generated names) append at
/// the end of their own tree and fill its pages, where in a shared tree each one lands in
/// the middle and splits pages in half. Keys whose head is no longer than the prefix, and
/// prefixes past `count`, stay in the table's main tree. Reads and writes are unchanged.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Partitions {
    /// Bytes of a key's head that choose its partition (0: the table is not split).
    pub prefix: usize,
    /// Most partitions the table may have.
    pub count: usize,
}

impl Partitions {
    /// Not split.
    pub const NONE: Partitions = Partitions {
        prefix: 0,
        count: 0,
    };

    /// Whether the table is split at all.
    pub const fn any(self) -> bool {
        self.prefix > 0 && self.count > 0
    }
}

/// A table's name and shape, as a store is opened with them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TableSpec<'a> {
    /// The table's name (also its name in dumps).
    pub name: &'a str,
    /// How its keys are shaped.
    pub shape: TableShape,
}

impl<'a> TableSpec<'a> {
    /// A table without a particular shape.
    pub const fn plain(name: &'a str) -> TableSpec<'a> {
        TableSpec {
            name,
            shape: TableShape::Plain,
        }
    }

    /// A set of keys ending in a `suffix`-byte id (see [`TableShape::Set`]).
    pub const fn set(name: &'a str, suffix: usize) -> TableSpec<'a> {
        TableSpec {
            name,
            shape: TableShape::Set {
                suffix,
                partitions: Partitions::NONE,
            },
        }
    }

    /// A set table split into up to `count` partitions by the first `prefix` bytes of its
    /// keys (see [`Partitions`]).
    pub const fn partitioned_set(
        name: &'a str,
        suffix: usize,
        prefix: usize,
        count: usize,
    ) -> TableSpec<'a> {
        TableSpec {
            name,
            shape: TableShape::Set {
                suffix,
                partitions: Partitions { prefix, count },
            },
        }
    }
}

/// Checks a write to a table of the given shape against the shape's rules.
pub(crate) fn check_shape(
    shape: TableShape,
    table: TableId,
    key: &[u8],
    value: &[u8],
) -> KvResult<()> {
    match shape {
        TableShape::Plain => Ok(()),
        TableShape::Set { suffix, .. } if key.len() <= suffix => Err(KvError::Shape {
            table,
            reason: "a key of a set table must be longer than its suffix",
        }),
        TableShape::Set { .. } if !value.is_empty() => Err(KvError::Shape {
            table,
            reason: "a set table holds empty values only",
        }),
        TableShape::Set { .. } => Ok(()),
    }
}

/// Facts about an opened store, for `db stats` style reporting.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BackendInfo {
    /// Backend name: `"lmdb"` or `"memory"`.
    pub name: &'static str,
    /// Bytes the store occupies on disk (0 for the in-memory backend).
    pub size_on_disk: u64,
    /// Current map size for LMDB (how far the file may grow before a resize).
    pub map_size: u64,
    /// Bytes actually used by pages (LMDB) or by keys and values (memory).
    pub used_bytes: u64,
    /// Pages LMDB's freelist holds for reuse (0 for the in-memory backend): room the file
    /// has before it grows, and what `kauri db compact` would give back. `None` when the
    /// freelist could not be read (the reason is logged), so the rest is still reported.
    pub free_pages: Option<u64>,
    /// Whether a write transaction is open right now.
    pub write_active: bool,
    /// Number of times the map was grown since open.
    pub resizes: u64,
    /// Snapshots taken again because the first attempt could have been older than an
    /// earlier one (LMDB; see `docs/kv-layer.md`).
    pub snapshot_retakes: u64,
}

/// A read view: a consistent snapshot (for [`Backend::Read`]) or a write transaction's view
/// of its own uncommitted state (for [`Backend::Write`]).
pub trait ReadTxn {
    /// Ordered iterator over a key range, borrowing from the view.
    type Iter<'t>: Iterator<Item = KvResult<KvPair<'t>>>
    where
        Self: 't;

    /// Fetches the value stored under `key`, borrowed from the view without copying.
    fn get<'t>(&'t self, table: TableId, key: &[u8]) -> KvResult<Option<&'t [u8]>>;

    /// Iterates the keys within the bounds in the given direction.
    fn range<'t>(
        &'t self,
        table: TableId,
        lower: Bound<&[u8]>,
        upper: Bound<&[u8]>,
        direction: Direction,
    ) -> KvResult<Self::Iter<'t>>;

    /// Iterates the keys that start with `prefix` in the given direction.
    fn prefix<'t>(
        &'t self,
        table: TableId,
        prefix: &[u8],
        direction: Direction,
    ) -> KvResult<Self::Iter<'t>> {
        match prefix_successor(prefix) {
            Some(end) => self.range(
                table,
                Bound::Included(prefix),
                Bound::Excluded(&end),
                direction,
            ),
            None => self.range(table, Bound::Included(prefix), Bound::Unbounded, direction),
        }
    }
}

/// The single write transaction of a store. Changes become visible to new snapshots, and
/// durable, only at [`WriteTxn::commit`]. Dropping it without committing aborts it.
pub trait WriteTxn: ReadTxn {
    /// Stores `value` under `key`, replacing any previous value.
    fn put(&mut self, table: TableId, key: &[u8], value: &[u8]) -> KvResult<()>;

    /// Stores a pair whose key the caller knows to be greater than every key in the table
    /// (bulk loads). Backends may use a faster path; a key out of order is still stored
    /// correctly, just without the speed-up.
    fn append(&mut self, table: TableId, key: &[u8], value: &[u8]) -> KvResult<()> {
        self.put(table, key, value)
    }

    /// Stores `n` pairs whose keys ascend and all come after every key of the table (bulk
    /// loads and re-index). `pair(i)` gives the i-th pair and may be asked again for the
    /// same `i` (a backend may restart the batch, e.g. after growing its map). A backend may
    /// use a faster path; keys out of order are still stored correctly. After a batch, an
    /// LMDB transaction can no longer be replayed into a grown map, so a later `MapFull`
    /// in the same transaction is reported instead of absorbed.
    fn append_batch<'b>(
        &mut self,
        table: TableId,
        n: usize,
        pair: &dyn Fn(usize) -> (&'b [u8], &'b [u8]),
    ) -> KvResult<()> {
        for i in 0..n {
            let (k, v) = pair(i);
            self.append(table, k, v)?;
        }
        Ok(())
    }

    /// Removes `key`; returns whether it was present.
    fn delete(&mut self, table: TableId, key: &[u8]) -> KvResult<bool>;

    /// Removes every key of a table.
    fn clear(&mut self, table: TableId) -> KvResult<()>;

    /// Opens a nested transaction: until the matching [`WriteTxn::commit_nested`] or
    /// [`WriteTxn::abort_nested`], changes can be rolled back without touching the ones
    /// made before. Nested transactions nest to any depth.
    fn begin_nested(&mut self) -> KvResult<()>;

    /// Keeps the changes of the innermost nested transaction as part of its parent.
    fn commit_nested(&mut self) -> KvResult<()>;

    /// Rolls back the changes of the innermost nested transaction, and only those.
    fn abort_nested(&mut self) -> KvResult<()>;

    /// How many nested transactions are open (0 = only the outer one).
    fn nested_depth(&self) -> usize;

    /// Makes every change durable and visible to new snapshots.
    fn commit(self) -> KvResult<()>;

    /// Throws every change away (the same as dropping the transaction).
    fn abort(self);

    /// Runs `f` in a nested transaction: its changes are kept when it returns `Ok` and
    /// rolled back alone when it returns `Err`.
    fn nested<R, E>(&mut self, f: impl FnOnce(&mut Self) -> Result<R, E>) -> Result<R, E>
    where
        Self: Sized,
        E: From<KvError>,
    {
        self.begin_nested()?;
        match f(self) {
            Ok(r) => {
                self.commit_nested()?;
                Ok(r)
            }
            Err(e) => {
                self.abort_nested()?;
                Err(e)
            }
        }
    }
}

/// An opened store. Readers run in parallel on their own snapshots; writers are serialized
/// (a second [`Backend::write`] waits until the first transaction ends).
pub trait Backend: Send + Sync + 'static {
    /// A read snapshot. It owns what it needs, so it can move between threads and outlive
    /// the borrow that created it; it sees one committed state for its whole life.
    type Read: ReadTxn + Send + 'static;
    /// The write transaction.
    type Write<'e>: WriteTxn
    where
        Self: 'e;

    /// Opens a snapshot of the last committed state.
    fn read(&self) -> KvResult<Self::Read>;

    /// Starts the write transaction, waiting for any other writer to finish.
    fn write(&self) -> KvResult<Self::Write<'_>>;

    /// The longest key this backend accepts.
    fn max_key_len(&self) -> usize {
        MAX_KEY_LEN
    }

    /// Backend name, size on disk and map usage.
    fn info(&self) -> KvResult<BackendInfo>;

    /// Whether a write transaction is open right now.
    fn write_active(&self) -> bool;
}

/// The smallest byte string greater than every string starting with `prefix`, or `None` when
/// no such string exists (the prefix is empty or all `0xff`).
pub fn prefix_successor(prefix: &[u8]) -> Option<Vec<u8>> {
    let mut end = prefix.to_vec();
    while let Some(last) = end.pop() {
        if last < 0xff {
            end.push(last + 1);
            return Some(end);
        }
    }
    None
}

/// Checks a key against the limits every backend shares.
pub fn check_key(key: &[u8], max: usize) -> KvResult<()> {
    if key.is_empty() {
        return Err(KvError::EmptyKey);
    }
    if key.len() > max {
        return Err(KvError::KeyTooLong {
            len: key.len(),
            max,
        });
    }
    Ok(())
}

/// A lower and an upper iteration bound.
pub(crate) type Bounds<'a> = (Bound<&'a [u8]>, Bound<&'a [u8]>);

/// Rewrites iteration bounds into ones the storage engine can seek to (LMDB refuses empty and
/// over-long keys even as search keys) without changing which storable keys they select.
/// Returns `None` when no storable key can fall within the bounds.
pub(crate) fn storable_bounds<'a>(
    lower: Bound<&'a [u8]>,
    upper: Bound<&'a [u8]>,
    max: usize,
) -> Option<Bounds<'a>> {
    let lower = match lower {
        Bound::Included(k) | Bound::Excluded(k) if k.is_empty() => Bound::Unbounded,
        // A storable key (at most `max` bytes) is >= k exactly when it is > k[..max].
        Bound::Included(k) | Bound::Excluded(k) if k.len() > max => Bound::Excluded(&k[..max]),
        other => other,
    };
    let upper = match upper {
        Bound::Included(k) | Bound::Excluded(k) if k.is_empty() => return None,
        // A storable key is <= k exactly when it is <= k[..max].
        Bound::Included(k) | Bound::Excluded(k) if k.len() > max => Bound::Included(&k[..max]),
        other => other,
    };
    let empty = match (lower, upper) {
        (Bound::Included(l), Bound::Included(u)) => l > u,
        (Bound::Included(l) | Bound::Excluded(l), Bound::Included(u) | Bound::Excluded(u)) => {
            l >= u
        }
        _ => false,
    };
    (!empty).then_some((lower, upper))
}
