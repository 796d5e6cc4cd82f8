//! The LMDB backend: durable, memory-mapped, readers never block the writer.
//!
//! # Map growth
//!
//! LMDB maps the database file into memory with a fixed size and never grows that map by
//! itself: a write that needs a page beyond it fails with `MDB_MAP_FULL`. The map may only be
//! resized while *no* transaction of this process is open, because every open transaction
//! holds pointers into the old mapping.
//!
//! This backend makes growth invisible to callers with a **resize gate**, an
//! `RwLock<()>` shared by the whole store. Every snapshot and the write transaction hold a
//! read guard of it for their whole life (owned `Arc` guards, so snapshots stay `'static` and
//! `Send`). Resizing takes the gate in write mode, which waits until every snapshot has been
//! dropped and keeps new ones from starting meanwhile.
//!
//! The write transaction keeps a **replay log**: an owned copy of every put, append, delete
//! and clear it performed, as long as the log stays under [`LmdbOptions::replay_limit`] bytes.
//! When an LMDB call reports `MDB_MAP_FULL`, the call that hit it aborts the LMDB transaction,
//! releases its own gate guard, takes the gate in write mode, grows the map (at least doubling
//! it), begins a fresh LMDB transaction, replays the log and retries the failed operation. The
//! caller just sees its call succeed. The map is also grown ahead of time when a write
//! transaction starts and more than 60 % of it is in use, if no snapshot is open at that
//! moment. When the log had to be dropped for size, the transaction fails with
//! [`KvError::MapFull`] (the map is still grown, so retrying the transaction works).
//!
//! A thread that holds a snapshot while its own write transaction needs to grow the map
//! would wait for itself: the growth then gives up after a minute with [`KvError::MapFull`].
//! Drop snapshots before writing large amounts of data. For the same reason, a thread that
//! already holds a snapshot and asks for another while a resize is waiting blocks until that
//! resize gives up; prefer passing one snapshot around.
//!
//! Another process may grow the map as well; transactions that begin after that report
//! `MDB_MAP_RESIZED`, and the new size is adopted under the gate the same way.
//!
//! # Nested transactions
//!
//! Nested transactions are savepoints over an undo log (see the crate's `undo` module); the
//! compensating writes of an aborted nested transaction go through the normal write path, so
//! the replay log always describes the transaction's true state.

use std::fs;
use std::ops::Bound;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

use heed::types::Bytes;
use heed::{
    CommitOrAbort, CommitToken, CompactionOption, Database, DatabaseFlags, Env, EnvFlags,
    EnvOpenOptions, MdbError, OnCommit, PutFlags, RoRange, RoRevRange, RoTxn, RwTxn, WithoutTls,
};
use parking_lot::lock_api::ArcRwLockReadGuard;
use parking_lot::{Mutex, MutexGuard, RawRwLock, RwLock};

use crate::undo::UndoLog;
use crate::{
    check_key, check_shape, storable_bounds, Backend, BackendInfo, Direction, KvError, KvPair,
    KvResult, ReadTxn, TableId, TableShape, TableSpec, WriteTxn, MAX_KEY_LEN,
};

mod freelist;
mod lock;
mod parts;
mod set;
pub use parts::PartIter;
pub use set::SetIter;

type Db = Database<'static, Bytes, Bytes>;

/// One opened table: its LMDB database, its shape, and its partitions if it has any.
#[derive(Clone)]
struct Tbl {
    db: Db,
    shape: TableShape,
    parts: Option<parts::Parts<'static>>,
}

impl Tbl {
    /// The width of a set table's suffix; `None` for a plain table.
    fn set_suffix(&self) -> Option<usize> {
        match self.shape {
            TableShape::Plain => None,
            TableShape::Set { suffix, .. } => Some(suffix),
        }
    }
}
type GateGuard = ArcRwLockReadGuard<RawRwLock, ()>;

/// Map sizes are kept a multiple of this, which covers every OS page size LMDB supports.
const MAP_GRANULE: usize = 64 * 1024;
/// How long growth waits for open snapshots to be dropped before giving up.
const GROW_TIMEOUT: Duration = Duration::from_secs(60);
/// How long a starting write transaction waits for snapshots before skipping early growth.
const EARLY_GROW_TIMEOUT: Duration = Duration::from_millis(10);
/// Grow ahead of time once this share (in percent) of the map is used.
const EARLY_GROW_PERCENT: usize = 60;
/// Upper bound on grow-and-replay rounds for a single operation.
const MAX_GROW_ROUNDS: usize = 16;
/// Bookkeeping bytes counted per replay-log entry on top of its key and value.
const LOG_ENTRY_OVERHEAD: usize = 32;

/// Settings for [`LmdbBackend::open`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LmdbOptions {
    /// Initial map size in bytes (default 1 GiB). The map grows on demand, so this only
    /// avoids early resizes; an existing larger store keeps its size.
    pub map_size: usize,
    /// Maximum number of snapshots open at once across all processes (default 1024).
    pub max_readers: u32,
    /// Whether a commit waits for the data to reach the disk (default `true`). `false`
    /// (`MDB_NOSYNC`) is for benchmarks and bulk loads, which call [`LmdbBackend::sync`] at
    /// the end; a crash may then lose the last commits but never corrupts the store.
    pub durable: bool,
    /// Largest replay log, in bytes, a write transaction keeps to survive a map resize
    /// (default 512 MiB). A larger transaction that fills the map fails with
    /// [`KvError::MapFull`].
    pub replay_limit: usize,
}

impl Default for LmdbOptions {
    fn default() -> Self {
        LmdbOptions {
            map_size: 1 << 30,
            max_readers: 1024,
            durable: true,
            replay_limit: 512 << 20,
        }
    }
}

/// What one table holds, in entries and in pages.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TableStat {
    /// Key-value pairs.
    pub entries: u64,
    /// Pages (branch, leaf and overflow).
    pub pages: u64,
}

/// A store in an LMDB environment: one named LMDB database per table.
pub struct LmdbBackend {
    env: Env<WithoutTls>,
    dbs: Arc<[Tbl]>,
    gate: Arc<RwLock<()>>,
    writer: Mutex<()>,
    write_active: AtomicBool,
    resizes: AtomicU64,
    /// Id of the last transaction this process committed: a snapshot begun after that
    /// commit must not be older (see [`Backend::read`] for [`LmdbBackend`]).
    committed_txnid: AtomicU64,
    retakes: AtomicU64,
    page_size: usize,
    replay_limit: usize,
    path: PathBuf,
    /// The shared hold on `kauri.lock`, for as long as the store is open.
    _lock: Option<lock::StoreLock>,
}

impl std::fmt::Debug for LmdbBackend {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LmdbBackend")
            .field("path", &self.path)
            .field("tables", &self.dbs.len())
            .finish_non_exhaustive()
    }
}

/// Collects the databases created at open so heed can hand them back as `'static` handles.
struct OpenedDbs<'e>(Vec<Database<'e, Bytes, Bytes>>);

impl OnCommit for OpenedDbs<'_> {
    type Committed = Vec<Db>;

    fn on_commit(self, token: &CommitToken) -> Vec<Db> {
        self.0.into_iter().map(|db| db.on_commit(token)).collect()
    }
}

fn storage(e: heed::Error) -> KvError {
    KvError::Storage(e.to_string())
}

fn is_map_full(e: &heed::Error) -> bool {
    matches!(e, heed::Error::Mdb(MdbError::MapFull))
}

fn is_map_resized(e: &heed::Error) -> bool {
    matches!(e, heed::Error::Mdb(MdbError::MapResized))
}

/// Below this many free bytes on the store's file system, an I/O error of a write is taken
/// for a write the full disk cut short.
const DISK_FULL_BELOW: u64 = 1 << 20;

/// Bytes an unprivileged user may still write on the file system holding `path` (the root
/// user may have a little more, in blocks reserved for it).
#[cfg(unix)]
#[allow(clippy::useless_conversion)] // the field types differ between platforms
fn free_bytes(path: &Path) -> Option<u64> {
    use std::os::unix::ffi::OsStrExt;
    let path = std::ffi::CString::new(path.as_os_str().as_bytes()).ok()?;
    let mut st = std::mem::MaybeUninit::<libc::statvfs>::zeroed();
    // SAFETY: `path` is NUL-terminated and `st` is writable memory of the type statvfs fills.
    if unsafe { libc::statvfs(path.as_ptr(), st.as_mut_ptr()) } != 0 {
        return None;
    }
    // SAFETY: statvfs succeeded, so it filled `st` (which started zeroed anyway).
    let st = unsafe { st.assume_init() };
    Some(u64::from(st.f_bavail).saturating_mul(u64::from(st.f_frsize)))
}

#[cfg(not(unix))]
fn free_bytes(_path: &Path) -> Option<u64> {
    None
}

/// The error of a write to the store in `dir`. LMDB reports a write the kernel cut short as
/// `EIO`, which is what a full disk usually does to it (the first pages fit, the rest do
/// not): such an error on a file system with next to nothing free is reported as the full
/// disk it is.
fn write_error(e: heed::Error, dir: &Path) -> KvError {
    explain_write_error(e, free_bytes(dir))
}

/// [`write_error`] with the free bytes known (`None`: unknown).
fn explain_write_error(e: heed::Error, free: Option<u64>) -> KvError {
    let eio = matches!(&e, heed::Error::Io(io) if io.raw_os_error() == Some(libc::EIO));
    match free {
        Some(free) if eio && free < DISK_FULL_BELOW => KvError::Storage(format!(
            "No space left on device: a write to the database file was cut short \
             ({free} bytes free on its file system; LMDB reported: {e})"
        )),
        _ => storage(e),
    }
}

/// Gives the lock file its blocks. LMDB creates `lock.mdb` with `ftruncate`, so it is sparse,
/// and writes its reader table through a shared writable map of it: the first snapshot
/// that needs a page of the table no block backs yet, when the disk is full, kills the
/// process with SIGBUS. `fallocate` (mode 0: only holes get blocks, no byte and not the
/// length change) goes through LMDB's own descriptor, found in `/proc/self/fd`, because
/// closing another descriptor of the file would drop the `fcntl` locks LMDB holds on it.
/// Returns whether the descriptor was found.
#[cfg(target_os = "linux")]
fn reserve_lock_file(dir: &Path) -> std::io::Result<bool> {
    use std::os::unix::fs::MetadataExt;
    let lock = fs::metadata(dir.join("lock.mdb"))?;
    for entry in fs::read_dir("/proc/self/fd")? {
        let entry = entry?;
        let Some(fd) = entry
            .file_name()
            .to_str()
            .and_then(|n| n.parse::<i32>().ok())
        else {
            continue;
        };
        // `metadata` follows the link to the open file, without opening it.
        let Ok(m) = fs::metadata(entry.path()) else {
            continue;
        };
        if m.dev() != lock.dev() || m.ino() != lock.ino() {
            continue;
        }
        let len = libc::off_t::try_from(m.len()).unwrap_or(libc::off_t::MAX);
        // SAFETY: `fd` is the descriptor the open environment keeps on the lock file for its
        // whole life; mode 0 only allocates blocks for holes.
        if unsafe { libc::fallocate(fd, 0, 0, len) } != 0 {
            return Err(std::io::Error::last_os_error());
        }
        return Ok(true);
    }
    Ok(false)
}

#[cfg(not(target_os = "linux"))]
fn reserve_lock_file(_dir: &Path) -> std::io::Result<bool> {
    Ok(true)
}

fn round_up(n: usize, to: usize) -> usize {
    n.div_ceil(to).saturating_mul(to)
}

/// LMDB's meta page magic.
const MDB_MAGIC: u32 = 0xBEEF_C0DE;

/// Checks an existing `data.mdb` against its own meta pages (LMDB's layout: two meta pages at
/// the start, each holding the page size in the free-space tree's `md_pad`, the last page in
/// use and a transaction id; the newer one is current): the file must be at least as long as
/// the pages the current meta page says are used. A missing file is a new store and passes.
fn check_data_file(path: &Path) -> Result<(), String> {
    use std::io::Read;
    let Ok(meta) = fs::metadata(path) else {
        return Ok(());
    };
    let len = meta.len();
    if len == 0 {
        return Err(format!(
            "{} is empty: a database file is never empty; restore it from a backup",
            path.display()
        ));
    }
    let mut head = vec![0u8; 16 * 1024];
    let mut f = fs::File::open(path).map_err(|e| format!("{}: {e}", path.display()))?;
    let mut got = 0;
    while got < head.len() {
        match f.read(&mut head[got..]) {
            Ok(0) => break,
            Ok(n) => got += n,
            Err(e) => return Err(format!("{}: {e}", path.display())),
        }
    }
    head.truncate(got);
    let u32_at = |b: &[u8], at: usize| {
        b.get(at..at + 4)
            .map(|s| u32::from_le_bytes([s[0], s[1], s[2], s[3]]))
    };
    let u64_at = |b: &[u8], at: usize| {
        b.get(at..at + 8).map(|s| {
            let mut a = [0u8; 8];
            a.copy_from_slice(s);
            u64::from_le_bytes(a)
        })
    };
    // The meta structure follows the 16-byte page header: magic, version, address,
    // map size, the two database records (48 bytes each), the last page, the txn id.
    let meta_at = |page: usize| -> Option<(u64, u64, u64)> {
        let m = page + 16;
        if u32_at(&head, m)? != MDB_MAGIC {
            return None;
        }
        let psize = u64::from(u32_at(&head, m + 24)?);
        let last_pg = u64_at(&head, m + 24 + 96)?;
        let txnid = u64_at(&head, m + 24 + 104)?;
        Some((psize, last_pg, txnid))
    };
    let Some((psize, _, _)) = meta_at(0) else {
        return Err(format!(
            "{} is not an LMDB database (no meta page at its start)",
            path.display()
        ));
    };
    if !(512..=65536).contains(&psize) {
        return Err(format!("{}: implausible page size {psize}", path.display()));
    }
    let second = usize::try_from(psize).unwrap_or(usize::MAX);
    let current = match meta_at(second) {
        Some(b) if b.2 > meta_at(0).map_or(0, |a| a.2) => b,
        _ => meta_at(0).unwrap_or((psize, 0, 0)),
    };
    let needed = current.1.saturating_add(1).saturating_mul(psize);
    if len < needed {
        return Err(format!(
            "{} is truncated: {len} bytes where its meta page says {needed} are in use; \
             restore it from a backup",
            path.display()
        ));
    }
    Ok(())
}

/// The error of opening (or compacting) the store in `dir`.
fn open_error(dir: &Path, reason: String) -> KvError {
    KvError::Open {
        path: dir.display().to_string(),
        reason,
    }
}

/// Why the tables could not be opened.
enum OpenFail {
    Heed(heed::Error),
    Layout(String),
}

impl From<heed::Error> for OpenFail {
    fn from(e: heed::Error) -> OpenFail {
        OpenFail::Heed(e)
    }
}

/// Creates or opens every table in its declared shape, converting plain tables that are
/// now declared sets.
fn create_tables<'e>(
    opener: &heed::DatabaseOpener<'e, WithoutTls>,
    wtxn: &mut RwTxn<'e>,
    tables: &[TableSpec<'_>],
) -> Result<Vec<Database<'e, Bytes, Bytes>>, OpenFail> {
    let mut stored = Vec::new();
    if let Some(main) = opener.open_database::<Bytes, Bytes>(wtxn, None)? {
        for item in main.iter(wtxn)? {
            let (name, _) = item?;
            stored.push(String::from_utf8_lossy(name).into_owned());
        }
    }
    let mut dbs = Vec::with_capacity(tables.len());
    for spec in tables {
        let as_set = stored.iter().find(|n| set::is_set_form_of(n, spec.name));
        match spec.shape {
            TableShape::Plain => {
                if let Some(found) = as_set {
                    return Err(OpenFail::Layout(format!(
                        "table {} is stored as a set ({found}) and cannot be opened as a \
                         plain table",
                        spec.name
                    )));
                }
                dbs.push(opener.create_database::<Bytes, Bytes>(wtxn, Some(spec.name))?);
            }
            TableShape::Set { suffix, partitions } => {
                let name = set::physical_name(spec.name, suffix);
                if let Some(found) = as_set.filter(|n| **n != name) {
                    return Err(OpenFail::Layout(format!(
                        "table {} is stored as {found}, not as {name}",
                        spec.name
                    )));
                }
                let map_name = parts::map_name(&name);
                if !partitions.any() && stored.contains(&map_name) {
                    return Err(OpenFail::Layout(format!(
                        "table {} is stored in partitions ({map_name}) and cannot be opened \
                         as one set",
                        spec.name
                    )));
                }
                let set_db = |wtxn: &mut RwTxn<'e>, name: &str| {
                    opener
                        .database_options()
                        .types::<Bytes, Bytes>()
                        .name(name)
                        .flags(DatabaseFlags::DUP_SORT | DatabaseFlags::DUP_FIXED)
                        .create(wtxn)
                };
                let db = set_db(wtxn, &name)?;
                if stored.iter().any(|n| n == spec.name) {
                    if let Some(plain) =
                        opener.open_database::<Bytes, Bytes>(wtxn, Some(spec.name))?
                    {
                        convert_to_set(wtxn, spec.name, plain, db, suffix)?;
                    }
                }
                dbs.push(db);
                if partitions.any() {
                    if partitions.count > 256 || partitions.prefix + 1 >= MAX_KEY_LEN {
                        return Err(OpenFail::Layout(format!(
                            "table {}: at most 256 partitions, by a prefix shorter than {} \
                             bytes",
                            spec.name,
                            MAX_KEY_LEN - 1
                        )));
                    }
                    let map = opener.create_database::<Bytes, Bytes>(wtxn, Some(&map_name))?;
                    let mut trees = Vec::with_capacity(partitions.count);
                    for n in 0..partitions.count {
                        trees.push(set_db(wtxn, &parts::part_name(&name, n))?);
                    }
                    let p = parts::Parts {
                        prefix: partitions.prefix,
                        map,
                        trees: trees.clone().into(),
                        known: Default::default(),
                    };
                    let started = std::time::Instant::now();
                    let moved = match parts::map_state(wtxn, &p)? {
                        parts::MapState::Split => 0,
                        parts::MapState::Unsplit => parts::convert(wtxn, db, &p, suffix)?,
                        parts::MapState::Mismatch(why) => {
                            return Err(OpenFail::Layout(format!(
                                "table {} cannot be opened as declared: {why}",
                                spec.name
                            )))
                        }
                    };
                    if moved > 0 {
                        tracing::info!(
                            table = spec.name,
                            keys = moved,
                            seconds = started.elapsed().as_secs_f64(),
                            "stored a table in partitions"
                        );
                    }
                    dbs.push(map);
                    dbs.extend(trees);
                }
            }
        }
    }
    Ok(dbs)
}

/// Moves the keys of a plain table into its set form and drops the plain table.
fn convert_to_set<'e>(
    wtxn: &mut RwTxn<'e>,
    name: &str,
    plain: Database<'e, Bytes, Bytes>,
    set: Database<'e, Bytes, Bytes>,
    suffix: usize,
) -> Result<(), OpenFail> {
    const CHUNK: usize = 1 << 16;
    if !plain.is_empty(wtxn)? && !set.is_empty(wtxn)? {
        return Err(OpenFail::Layout(format!(
            "table {name} holds keys both as a plain table and as a set"
        )));
    }
    let started = std::time::Instant::now();
    let mut moved = 0usize;
    let mut after: Option<Vec<u8>> = None;
    loop {
        let mut chunk: Vec<Vec<u8>> = Vec::with_capacity(CHUNK);
        let from = match &after {
            Some(k) => Bound::Excluded(k.as_slice()),
            None => Bound::Unbounded,
        };
        for item in plain.range(wtxn, &(from, Bound::Unbounded))? {
            let (key, value) = item?;
            if key.len() <= suffix || !value.is_empty() {
                return Err(OpenFail::Layout(format!(
                    "table {name} holds a key that does not fit a set of {suffix}-byte ids"
                )));
            }
            chunk.push(key.to_vec());
            if chunk.len() == CHUNK {
                break;
            }
        }
        let Some(last) = chunk.last() else { break };
        after = Some(last.clone());
        let empty: &[u8] = &[];
        set::write_batch(wtxn, set, suffix, chunk.len(), &|i| {
            (chunk[i].as_slice(), empty)
        })?;
        moved += chunk.len();
    }
    // SAFETY: the handle is consumed here and no other handle of this table exists.
    unsafe { plain.remove(wtxn)? };
    tracing::info!(
        table = name,
        keys = moved,
        seconds = started.elapsed().as_secs_f64(),
        "stored a table as sets of ids"
    );
    Ok(())
}

impl LmdbBackend {
    /// Opens (creating it if needed) the store in `dir` with the given plain tables.
    pub fn open(dir: &Path, tables: &[&str], options: LmdbOptions) -> KvResult<LmdbBackend> {
        let specs: Vec<TableSpec> = tables.iter().map(|name| TableSpec::plain(name)).collect();
        LmdbBackend::open_shaped(dir, &specs, options)
    }

    /// Opens (creating it if needed) the store in `dir` with the given tables and shapes.
    /// A table stored plain by an earlier layout and now declared a set is converted here,
    /// in the same transaction that opens it; a set table opened as a plain one is refused.
    pub fn open_shaped(
        dir: &Path,
        tables: &[TableSpec<'_>],
        options: LmdbOptions,
    ) -> KvResult<LmdbBackend> {
        let open_err = |reason: String| open_error(dir, reason);
        fs::create_dir_all(dir).map_err(|e| open_err(e.to_string()))?;
        let held = lock::try_lock(dir, lock::Mode::Shared)
            .map_err(|e| open_err(format!("kauri.lock: {e}")))?
            .ok_or_else(|| open_err("the store is being compacted by another process".into()))?;
        LmdbBackend::open_locked(dir, tables, options, Some(held))
    }

    /// Whether another process has the store in `dir` open (a running server): the lock
    /// every opening holds shared cannot be taken exclusively. Checked, then released.
    pub fn open_elsewhere(dir: &Path) -> KvResult<bool> {
        fs::create_dir_all(dir).map_err(|e| open_error(dir, e.to_string()))?;
        let held = lock::try_lock(dir, lock::Mode::Exclusive)
            .map_err(|e| open_error(dir, format!("kauri.lock: {e}")))?;
        Ok(held.is_none())
    }

    /// Rewrites the store's file without its free pages, as AD's offline defragmentation
    /// does: a compacted copy is written beside `data.mdb` and renamed over it. The store
    /// must be closed everywhere (a running server refuses it); returns the file's size
    /// before and after, in bytes.
    pub fn compact(
        dir: &Path,
        tables: &[TableSpec<'_>],
        options: LmdbOptions,
    ) -> KvResult<(u64, u64)> {
        let open_err = |reason: String| open_error(dir, reason);
        let data = dir.join("data.mdb");
        let before = fs::metadata(&data)
            .map_err(|e| open_err(format!("data.mdb: {e}")))?
            .len();
        let _exclusive = lock::try_lock(dir, lock::Mode::Exclusive)
            .map_err(|e| open_err(format!("kauri.lock: {e}")))?
            .ok_or_else(|| {
                open_err(
                    "the store is open in another process (a running server?); stop it \
                     before compacting"
                        .into(),
                )
            })?;
        let scratch = dir.join("compact.tmp");
        let io = |e: std::io::Error| KvError::Storage(format!("compacting: {e}"));
        if scratch.exists() {
            fs::remove_dir_all(&scratch).map_err(io)?;
        }
        {
            let store = LmdbBackend::open_locked(dir, tables, options, None)?;
            store.copy_to(&scratch, true)?;
        }
        let copy = scratch.join("data.mdb");
        fs::File::open(&copy)
            .and_then(|f| f.sync_all())
            .map_err(io)?;
        fs::rename(&copy, &data).map_err(io)?;
        fs::File::open(dir).and_then(|d| d.sync_all()).map_err(io)?;
        fs::remove_dir_all(&scratch).map_err(io)?;
        // LMDB's lock file describes the old file's readers; no process has it open now.
        match fs::remove_file(dir.join("lock.mdb")) {
            Err(e) if e.kind() != std::io::ErrorKind::NotFound => return Err(io(e)),
            _ => {}
        }
        let after = fs::metadata(&data).map_err(io)?.len();
        tracing::info!(before, after, path = %dir.display(), "compacted the store");
        Ok((before, after))
    }

    fn open_locked(
        dir: &Path,
        tables: &[TableSpec<'_>],
        options: LmdbOptions,
        held: Option<lock::StoreLock>,
    ) -> KvResult<LmdbBackend> {
        let open_err = |reason: String| open_error(dir, reason);
        // A damaged file must be refused before LMDB maps it: reading past the end of a
        // truncated map kills the process with SIGBUS.
        check_data_file(&dir.join("data.mdb")).map_err(open_err)?;
        // Room for a plain table and its set form side by side while one is converted, and
        // for the map and partitions of partitioned tables.
        let partition_dbs: usize = tables
            .iter()
            .map(|t| match t.shape {
                TableShape::Set { partitions, .. } if partitions.any() => partitions.count + 1,
                _ => 0,
            })
            .sum();
        let max_dbs = u32::try_from(tables.len().saturating_mul(2) + partition_dbs)
            .map_err(|_| open_err("too many tables".into()))?
            .saturating_add(1);
        let mut env_options = EnvOpenOptions::new().read_txn_without_tls();
        env_options
            .map_size(round_up(options.map_size.max(MAP_GRANULE), MAP_GRANULE))
            .max_readers(options.max_readers)
            .max_dbs(max_dbs);
        if !options.durable {
            // SAFETY: MDB_NOSYNC only skips the fsync at commit; it keeps the store consistent
            // (a crash can lose the latest commits, never corrupt older ones).
            unsafe {
                env_options.flags(EnvFlags::NO_SYNC);
            }
        }
        // SAFETY: the file is only accessed through LMDB, whose lock file coordinates every
        // process; heed refuses to open the same environment twice in this process.
        let env = unsafe { env_options.open(dir) }.map_err(|e| open_err(e.to_string()))?;
        match reserve_lock_file(dir) {
            Ok(true) => {}
            Ok(false) => tracing::warn!(
                path = %dir.display(),
                "LMDB's lock file descriptor was not found; its space is not reserved"
            ),
            Err(e) if e.kind() == std::io::ErrorKind::StorageFull => tracing::warn!(
                path = %dir.display(),
                "no space to reserve LMDB's lock file: with the disk full, a burst of \
                 snapshots can stop the process"
            ),
            Err(e) => tracing::debug!(error = %e, "LMDB's lock file space is not reserved"),
        }
        let stale = env
            .clear_stale_readers()
            .map_err(|e| open_err(e.to_string()))?;
        if stale > 0 {
            tracing::info!(stale, path = %dir.display(), "cleared stale LMDB readers");
        }
        let page_size = env.unnamed_database_stat().page_size as usize;

        let mut created = None;
        for _ in 0..MAX_GROW_ROUNDS {
            let wtxn = env.write_txn().map_err(|e| open_err(e.to_string()))?;
            let result = env.create_databases_and_commit(wtxn, |opener, wtxn| {
                create_tables(opener, wtxn, tables)
                    .map(|dbs| CommitOrAbort::<_, ()>::Commit(OpenedDbs(dbs)))
            });
            match result {
                Ok(CommitOrAbort::Commit(dbs)) => {
                    created = Some(dbs);
                    break;
                }
                Ok(CommitOrAbort::Abort(())) => {
                    return Err(open_err("table creation aborted".into()))
                }
                Err(OpenFail::Heed(e)) if is_map_full(&e) => {
                    let size = round_up(env.info().map_size.saturating_mul(2), MAP_GRANULE);
                    // SAFETY: the environment was just opened and no transaction of it is open.
                    unsafe { env.resize(size) }.map_err(|e| open_err(e.to_string()))?;
                }
                Err(OpenFail::Heed(e)) => return Err(open_err(e.to_string())),
                Err(OpenFail::Layout(reason)) => return Err(open_err(reason)),
            }
        }
        let dbs = created.ok_or_else(|| open_err("map too small to create the tables".into()))?;
        // The handles come back in the order `create_tables` made them: each table's own,
        // then a partitioned table's map and partitions.
        let mut handles = dbs.into_iter();
        let mut dbs: Vec<Tbl> = Vec::with_capacity(tables.len());
        for spec in tables {
            let missing = || open_err("a table's database was not created".into());
            let db = handles.next().ok_or_else(missing)?;
            let parts = match spec.shape {
                TableShape::Set { partitions, .. } if partitions.any() => {
                    let map = handles.next().ok_or_else(missing)?;
                    let trees: Vec<Db> = handles.by_ref().take(partitions.count).collect();
                    if trees.len() != partitions.count {
                        return Err(missing());
                    }
                    Some(parts::Parts {
                        prefix: partitions.prefix,
                        map,
                        trees: trees.into(),
                        known: Default::default(),
                    })
                }
                _ => None,
            };
            dbs.push(Tbl {
                db,
                shape: spec.shape,
                parts,
            });
        }

        Ok(LmdbBackend {
            env,
            dbs: dbs.into(),
            gate: Arc::new(RwLock::new(())),
            writer: Mutex::new(()),
            write_active: AtomicBool::new(false),
            resizes: AtomicU64::new(0),
            committed_txnid: AtomicU64::new(0),
            retakes: AtomicU64::new(0),
            page_size,
            replay_limit: options.replay_limit,
            path: dir.to_path_buf(),
            _lock: held,
        })
    }

    /// The directory the store lives in.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Writes a consistent copy of the store into `dest_dir` (created if missing) while it
    /// stays in use, for backups. `compact` leaves out free pages, which is slower but gives
    /// a smaller file.
    pub fn copy_to(&self, dest_dir: &Path, compact: bool) -> KvResult<()> {
        fs::create_dir_all(dest_dir).map_err(|e| KvError::Storage(e.to_string()))?;
        let option = if compact {
            CompactionOption::Enabled
        } else {
            CompactionOption::Disabled
        };
        // The copy runs inside a read transaction of its own, which the gate must protect.
        let _gate = self.gate.read_arc();
        self.env
            .copy_to_path(dest_dir.join("data.mdb"), option)
            .map_err(storage)?;
        Ok(())
    }

    /// Entries and pages of each table, and the pages of the file no table's main tree
    /// uses (free pages LMDB reuses, its two meta pages and its catalogue, and the
    /// sub-databases that hold a set table's long runs), for `db stats`.
    pub fn table_stats(&self) -> KvResult<(Vec<TableStat>, u64)> {
        let _gate = self.gate.read_arc();
        let txn = self.env.read_txn().map_err(storage)?;
        let mut out = Vec::with_capacity(self.dbs.len());
        let mut pages = 0u64;
        for table in self.dbs.iter() {
            // A set table's long runs live in sub-databases LMDB does not count here: their
            // pages show up with the pages no table uses.
            let st = table.db.stat(&txn).map_err(storage)?;
            let mut p = (st.branch_pages + st.leaf_pages + st.overflow_pages) as u64;
            let mut entries = st.entries as u64;
            if let Some(parts) = &table.parts {
                for (i, db) in parts.databases().enumerate() {
                    let st = db.stat(&txn).map_err(storage)?;
                    p += (st.branch_pages + st.leaf_pages + st.overflow_pages) as u64;
                    // The first is the map, whose entries are not the table's.
                    if i > 0 {
                        entries += st.entries as u64;
                    }
                }
            }
            pages += p;
            out.push(TableStat { entries, pages: p });
        }
        let used = self.used_bytes() as u64 / self.page_size.max(1) as u64;
        Ok((out, used.saturating_sub(pages)))
    }

    /// The freelist as of the newest commit (see `freelist`): the pages it lists and the
    /// pages it occupies. Read under a snapshot, which keeps those pages as they are; taken
    /// again (three times at most) when a commit rewrote the meta page while it was read.
    fn freelist(&self) -> KvResult<freelist::FreeList> {
        let mut why = String::new();
        for _ in 0..3 {
            let snapshot = self.read()?;
            let file = self.env.try_clone_inner_file().map_err(storage)?;
            let len = file
                .metadata()
                .map_err(|e| KvError::Storage(e.to_string()))?
                .len();
            match freelist::count(&file, self.page_size, len, snapshot.txn.id() as u64) {
                Ok(f) => return Ok(f),
                Err(e) => why = e,
            }
        }
        Err(KvError::Storage(format!("reading LMDB's freelist: {why}")))
    }

    /// Flushes committed data to disk; needed only for stores opened with `durable: false`.
    pub fn sync(&self) -> KvResult<()> {
        self.env.force_sync().map_err(storage)
    }

    fn db(&self, table: TableId) -> KvResult<Tbl> {
        self.dbs
            .get(table)
            .cloned()
            .ok_or(KvError::NoSuchTable(table))
    }

    fn used_bytes(&self) -> usize {
        self.env
            .info()
            .last_page_number
            .saturating_add(1)
            .saturating_mul(self.page_size)
    }

    /// Grows the map so that `needed` more bytes fit. The caller must hold no gate guard.
    fn grow(&self, needed: usize, timeout: Duration) -> KvResult<()> {
        let _exclusive = self.gate.try_write_for(timeout).ok_or_else(|| {
            KvError::MapFull(format!(
                "snapshots stayed open for {} s while the map needed to grow",
                timeout.as_secs()
            ))
        })?;
        self.resize_locked(needed)
    }

    /// Resizes the map; the gate must be held in write mode.
    fn resize_locked(&self, needed: usize) -> KvResult<()> {
        let info = self.env.info();
        let used = self.used_bytes();
        let wanted = info
            .map_size
            .saturating_mul(2)
            .max(used.saturating_add(needed.saturating_mul(2)));
        let new_size = round_up(wanted, MAP_GRANULE);
        // SAFETY: the gate is held in write mode, so no snapshot and no write transaction of
        // this process is open (each holds a read guard of the gate for its whole life).
        unsafe { self.env.resize(new_size) }.map_err(|e| {
            KvError::MapFull(format!("cannot grow the map to {new_size} bytes: {e}"))
        })?;
        self.resizes.fetch_add(1, Ordering::Relaxed);
        tracing::info!(
            old = info.map_size,
            new = new_size,
            used,
            path = %self.path.display(),
            "grew the LMDB map"
        );
        Ok(())
    }

    /// Adopts a map size set by another process (`MDB_MAP_RESIZED`). The caller must hold no
    /// gate guard.
    fn adopt_map_size(&self) -> KvResult<()> {
        let _exclusive = self.gate.try_write_for(GROW_TIMEOUT).ok_or_else(|| {
            KvError::Storage("snapshots stayed open while adopting a new map size".into())
        })?;
        // SAFETY: the gate is held in write mode, so no transaction of this process is open;
        // a size of 0 makes LMDB adopt the size recorded by the other process.
        unsafe { self.env.resize(0) }.map_err(storage)
    }

    /// Grows the map ahead of time when most of it is in use and nobody reads right now.
    fn grow_early(&self) {
        let map_size = self.env.info().map_size;
        if self.used_bytes().saturating_mul(100) <= map_size.saturating_mul(EARLY_GROW_PERCENT) {
            return;
        }
        if let Some(_exclusive) = self.gate.try_write_for(EARLY_GROW_TIMEOUT) {
            if let Err(e) = self.resize_locked(0) {
                tracing::warn!(error = %e, "could not grow the LMDB map ahead of time");
            }
        }
    }

    /// Begins an LMDB write transaction under a gate guard, adopting a map resized by another
    /// process if needed.
    fn begin_rw(&self) -> KvResult<(GateGuard, RwTxn<'_>)> {
        let mut tries = 0;
        loop {
            let gate = self.gate.read_arc();
            match self.env.write_txn() {
                Ok(txn) => return Ok((gate, txn)),
                Err(e) if is_map_resized(&e) && tries < 3 => {
                    tries += 1;
                    drop(gate);
                    self.adopt_map_size()?;
                }
                Err(e) => return Err(storage(e)),
            }
        }
    }
}

/// A read snapshot of an [`LmdbBackend`].
pub struct LmdbSnapshot {
    // Field order matters: the transaction must end before the gate guard is released.
    txn: RoTxn<'static, WithoutTls>,
    dbs: Arc<[Tbl]>,
    _gate: GateGuard,
}

impl std::fmt::Debug for LmdbSnapshot {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LmdbSnapshot")
            .field("txn_id", &self.txn.id())
            .finish()
    }
}

/// Ordered iterator over an LMDB table, borrowing keys and values from the map.
pub enum LmdbIter<'t> {
    /// Ascending iteration.
    Forward(RoRange<'t, Bytes, Bytes>),
    /// Descending iteration.
    Backward(RoRevRange<'t, Bytes, Bytes>),
    /// Iteration over a set table, either way.
    Set(Box<SetIter<'t>>),
    /// Iteration over a partitioned set table, either way.
    Parts(Box<PartIter<'t>>),
    /// Exhausted, or nothing to return.
    Empty,
}

impl std::fmt::Debug for LmdbIter<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            LmdbIter::Forward(_) => "LmdbIter::Forward",
            LmdbIter::Backward(_) => "LmdbIter::Backward",
            LmdbIter::Set(_) => "LmdbIter::Set",
            LmdbIter::Parts(_) => "LmdbIter::Parts",
            LmdbIter::Empty => "LmdbIter::Empty",
        })
    }
}

impl<'t> Iterator for LmdbIter<'t> {
    type Item = KvResult<KvPair<'t>>;

    fn next(&mut self) -> Option<Self::Item> {
        let item = match self {
            LmdbIter::Forward(it) => it.next(),
            LmdbIter::Backward(it) => it.next(),
            LmdbIter::Set(it) => return it.next(),
            LmdbIter::Parts(it) => return it.next(),
            LmdbIter::Empty => None,
        };
        match item {
            Some(Ok((k, v))) => Some(Ok((k.into(), v))),
            Some(Err(e)) => {
                *self = LmdbIter::Empty;
                Some(Err(storage(e)))
            }
            None => {
                *self = LmdbIter::Empty;
                None
            }
        }
    }
}

/// `committed`: `txn` is a snapshot (not the writer's open transaction).
fn get_in<'t>(
    txn: &'t RoTxn<'_>,
    table: &Tbl,
    key: &[u8],
    committed: bool,
) -> KvResult<Option<&'t [u8]>> {
    check_key(key, MAX_KEY_LEN)?;
    let found = match (table.set_suffix(), &table.parts) {
        (None, _) => return table.db.get(txn, key).map_err(storage),
        (Some(suffix), _) if key.len() <= suffix => false,
        (Some(suffix), None) => set::contains(txn, table.db, key, suffix)?,
        (Some(suffix), Some(p)) => parts::contains(txn, table.db, p, key, suffix, committed)?,
    };
    Ok(found.then_some(&[][..]))
}

fn range_in<'t>(
    txn: &'t RoTxn<'_>,
    table: &Tbl,
    lower: Bound<&[u8]>,
    upper: Bound<&[u8]>,
    direction: Direction,
    committed: bool,
) -> KvResult<LmdbIter<'t>> {
    let Some(bounds) = storable_bounds(lower, upper, MAX_KEY_LEN) else {
        return Ok(LmdbIter::Empty);
    };
    let db = table.db;
    if let (Some(suffix), Some(p)) = (table.set_suffix(), &table.parts) {
        let (lo, hi) = bounds;
        if let Some(it) = parts::single_partition(txn, p, suffix, lo, hi, direction, committed)? {
            return Ok(LmdbIter::Set(Box::new(it)));
        }
        return Ok(LmdbIter::Parts(Box::new(PartIter::new(
            txn, db, p, suffix, bounds.0, bounds.1, direction,
        )?)));
    }
    if let Some(suffix) = table.set_suffix() {
        return Ok(LmdbIter::Set(Box::new(SetIter::new(
            txn,
            db,
            suffix,
            &[],
            bounds.0,
            bounds.1,
            direction,
        )?)));
    }
    Ok(match direction {
        Direction::Forward => LmdbIter::Forward(db.range(txn, &bounds).map_err(storage)?),
        Direction::Backward => LmdbIter::Backward(db.rev_range(txn, &bounds).map_err(storage)?),
    })
}

impl ReadTxn for LmdbSnapshot {
    type Iter<'t> = LmdbIter<'t>;

    fn get<'t>(&'t self, table: TableId, key: &[u8]) -> KvResult<Option<&'t [u8]>> {
        let tbl = self.dbs.get(table).ok_or(KvError::NoSuchTable(table))?;
        get_in(&self.txn, tbl, key, true)
    }

    fn range<'t>(
        &'t self,
        table: TableId,
        lower: Bound<&[u8]>,
        upper: Bound<&[u8]>,
        direction: Direction,
    ) -> KvResult<LmdbIter<'t>> {
        let tbl = self.dbs.get(table).ok_or(KvError::NoSuchTable(table))?;
        range_in(&self.txn, tbl, lower, upper, direction, true)
    }
}

/// One write as the caller made it, borrowed.
#[derive(Clone, Copy)]
enum Op<'a> {
    Put(TableId, &'a [u8], &'a [u8]),
    Append(TableId, &'a [u8], &'a [u8]),
    Delete(TableId, &'a [u8]),
    Clear(TableId),
}

/// One entry of the replay log, owned.
enum LogOp {
    Put(TableId, Vec<u8>, Vec<u8>),
    Append(TableId, Vec<u8>, Vec<u8>),
    Delete(TableId, Vec<u8>),
    Clear(TableId),
}

impl Op<'_> {
    fn table(self) -> TableId {
        match self {
            Op::Put(t, ..) | Op::Append(t, ..) | Op::Delete(t, _) | Op::Clear(t) => t,
        }
    }

    fn size(self) -> usize {
        LOG_ENTRY_OVERHEAD
            + match self {
                Op::Put(_, k, v) | Op::Append(_, k, v) => k.len() + v.len(),
                Op::Delete(_, k) => k.len(),
                Op::Clear(_) => 0,
            }
    }

    fn to_owned(self) -> LogOp {
        match self {
            Op::Put(t, k, v) => LogOp::Put(t, k.to_vec(), v.to_vec()),
            Op::Append(t, k, v) => LogOp::Append(t, k.to_vec(), v.to_vec()),
            Op::Delete(t, k) => LogOp::Delete(t, k.to_vec()),
            Op::Clear(t) => LogOp::Clear(t),
        }
    }
}

impl LogOp {
    fn borrow(&self) -> Op<'_> {
        match self {
            LogOp::Put(t, k, v) => Op::Put(*t, k, v),
            LogOp::Append(t, k, v) => Op::Append(*t, k, v),
            LogOp::Delete(t, k) => Op::Delete(*t, k),
            LogOp::Clear(t) => Op::Clear(*t),
        }
    }
}

/// Applies one write to an LMDB transaction; returns whether a deleted key existed (in a
/// set table: whether the key written or deleted existed).
fn apply(txn: &mut RwTxn<'_>, dbs: &[Tbl], op: Op<'_>) -> heed::Result<bool> {
    let Some(table) = dbs.get(op.table()) else {
        return Ok(false);
    };
    let db = table.db;
    if let (Some(suffix), Some(p)) = (table.set_suffix(), &table.parts) {
        return match op {
            Op::Put(_, k, _) | Op::Append(_, k, _) => parts::write(txn, db, p, k, suffix, true),
            Op::Delete(_, k) => parts::write(txn, db, p, k, suffix, false),
            Op::Clear(_) => parts::clear(txn, db, p).map(|()| true),
        };
    }
    if let Some(suffix) = table.set_suffix() {
        return match op {
            Op::Put(_, k, _) | Op::Append(_, k, _) => set::insert(txn, db, k, suffix),
            Op::Delete(_, k) => set::remove(txn, db, k, suffix),
            Op::Clear(_) => db.clear(txn).map(|()| true),
        };
    }
    match op {
        Op::Put(_, k, v) => db.put(txn, k, v).map(|()| true),
        Op::Append(_, k, v) => match db.put_with_flags(txn, PutFlags::APPEND, k, v) {
            Err(heed::Error::Mdb(MdbError::KeyExist)) => db.put(txn, k, v).map(|()| true),
            other => other.map(|()| true),
        },
        Op::Delete(_, k) => db.delete(txn, k),
        Op::Clear(_) => db.clear(txn).map(|()| true),
    }
}

/// The write transaction of an [`LmdbBackend`].
pub struct LmdbWrite<'e> {
    backend: &'e LmdbBackend,
    txn: Option<RwTxn<'e>>,
    gate: Option<GateGuard>,
    log: Vec<LogOp>,
    log_bytes: usize,
    log_truncated: bool,
    undo: UndoLog,
    failed: Option<String>,
    _writer: MutexGuard<'e, ()>,
}

impl std::fmt::Debug for LmdbWrite<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LmdbWrite")
            .field("log_entries", &self.log.len())
            .field("log_bytes", &self.log_bytes)
            .field("nested_depth", &self.undo.depth())
            .field("failed", &self.failed)
            .finish_non_exhaustive()
    }
}

impl<'e> LmdbWrite<'e> {
    fn txn(&self) -> KvResult<&RwTxn<'e>> {
        match (&self.txn, &self.failed) {
            (Some(txn), None) => Ok(txn),
            (_, Some(reason)) => Err(KvError::MapFull(reason.clone())),
            (None, None) => Err(KvError::Storage("the write transaction is closed".into())),
        }
    }

    /// Runs one write, growing the map and replaying the log when it is full, then logs it.
    fn exec(&mut self, op: Op<'_>) -> KvResult<bool> {
        let mut rounds = 0;
        let result = loop {
            self.txn()?;
            let Some(txn) = self.txn.as_mut() else {
                return Err(KvError::Storage("the write transaction is closed".into()));
            };
            match apply(txn, &self.backend.dbs, op) {
                Ok(r) => break r,
                Err(e) if is_map_full(&e) && rounds < MAX_GROW_ROUNDS => {
                    rounds += 1;
                    self.recover(op.size())?;
                }
                Err(e) if is_map_full(&e) => {
                    return Err(self.fail(KvError::MapFull(format!(
                        "the map is still full after {rounds} resizes"
                    ))));
                }
                Err(e) => return Err(write_error(e, &self.backend.path)),
            }
        };
        self.log(op);
        Ok(result)
    }

    fn log(&mut self, op: Op<'_>) {
        if self.log_truncated {
            return;
        }
        self.log_bytes = self.log_bytes.saturating_add(op.size());
        if self.log_bytes > self.backend.replay_limit {
            self.log_truncated = true;
            self.log = Vec::new();
            tracing::debug!(
                limit = self.backend.replay_limit,
                "write transaction exceeded the replay limit; it cannot survive a map resize"
            );
        } else {
            self.log.push(op.to_owned());
        }
    }

    /// Marks the transaction as failed: every later call reports `err`'s reason.
    fn fail(&mut self, err: KvError) -> KvError {
        self.txn = None;
        self.gate = None;
        let reason = match &err {
            KvError::MapFull(r) => r.clone(),
            other => other.to_string(),
        };
        self.failed = Some(reason);
        err
    }

    /// After `MDB_MAP_FULL`: grows the map and rebuilds the transaction from the replay log.
    fn recover(&mut self, needed: usize) -> KvResult<()> {
        match self.grow_and_replay(needed) {
            Ok(()) => Ok(()),
            Err(e) => Err(self.fail(e)),
        }
    }

    fn grow_and_replay(&mut self, needed: usize) -> KvResult<()> {
        let backend = self.backend;
        for _ in 0..MAX_GROW_ROUNDS {
            // LMDB requires a transaction that hit MDB_MAP_FULL to be aborted; the gate guard
            // goes too, or the resize would wait for this very transaction.
            self.txn = None;
            self.gate = None;
            if self.log_truncated {
                // Grow anyway so that running the transaction again succeeds.
                if let Err(e) = backend.grow(needed, GROW_TIMEOUT) {
                    tracing::warn!(error = %e, "could not grow the LMDB map");
                }
                return Err(KvError::MapFull(format!(
                    "the write transaction filled the map after writing more than the \
                     {}-byte replay limit, so it could not be replayed after growing the \
                     map; it was aborted and must be run again",
                    backend.replay_limit
                )));
            }
            backend.grow(self.log_bytes.saturating_add(needed), GROW_TIMEOUT)?;
            let (gate, mut txn) = backend.begin_rw()?;
            self.gate = Some(gate);
            let mut replayed = Ok(());
            for op in &self.log {
                if let Err(e) = apply(&mut txn, &backend.dbs, op.borrow()) {
                    replayed = Err(e);
                    break;
                }
            }
            match replayed {
                Ok(()) => {
                    self.txn = Some(txn);
                    return Ok(());
                }
                Err(e) if is_map_full(&e) => continue,
                Err(e) => return Err(storage(e)),
            }
        }
        Err(KvError::MapFull(
            "the map is still too small after repeated resizes".into(),
        ))
    }

    fn check_table(&self, table: TableId) -> KvResult<Tbl> {
        self.backend.db(table)
    }

    /// A put or an append (`op`, which writes `key` and `value` into `table`), with what
    /// the undo log needs: the previous value read first, or, in a set table, whether the
    /// key was there as the write itself reports it.
    fn store(&mut self, table: TableId, key: &[u8], value: &[u8], op: Op<'_>) -> KvResult<()> {
        check_key(key, MAX_KEY_LEN)?;
        let tbl = self.check_table(table)?;
        check_shape(tbl.shape, table, key, value)?;
        if tbl.set_suffix().is_some() {
            let existed = self.exec(op)?;
            if self.undo.active() {
                self.undo.record(table, key, existed.then(Vec::new));
            }
            return Ok(());
        }
        if self.undo.active() {
            let old = self.current(tbl.db, key)?;
            self.undo.record(table, key, old);
        }
        self.exec(op).map(|_| ())
    }

    /// The current value of `key`, owned, for the undo log.
    fn current(&self, db: Db, key: &[u8]) -> KvResult<Option<Vec<u8>>> {
        Ok(db
            .get(self.txn()?, key)
            .map_err(storage)?
            .map(<[u8]>::to_vec))
    }
}

impl ReadTxn for LmdbWrite<'_> {
    type Iter<'t>
        = LmdbIter<'t>
    where
        Self: 't;

    fn get<'t>(&'t self, table: TableId, key: &[u8]) -> KvResult<Option<&'t [u8]>> {
        let db = self.check_table(table)?;
        get_in(self.txn()?, &db, key, false)
    }

    fn range<'t>(
        &'t self,
        table: TableId,
        lower: Bound<&[u8]>,
        upper: Bound<&[u8]>,
        direction: Direction,
    ) -> KvResult<LmdbIter<'t>> {
        let db = self.check_table(table)?;
        range_in(self.txn()?, &db, lower, upper, direction, false)
    }
}

/// Appends a batch through one cursor; keys out of order are put in their place.
fn write_batch<'b>(
    txn: &mut RwTxn<'_>,
    db: Db,
    n: usize,
    pair: &dyn Fn(usize) -> (&'b [u8], &'b [u8]),
) -> heed::Result<()> {
    append_items(
        txn,
        db,
        n,
        pair,
        &|_, _| Some(PutFlags::APPEND),
        PutFlags::empty(),
    )
}

/// Writes items `0..n` in order through one cursor: `item(i)` is what LMDB stores for item
/// `i`, and `flags(i, prev)` how it is appended after `prev`, the item written last when
/// it is the table's last (`None` when it cannot be appended). An item before the table's
/// last, or one LMDB refuses to append, is put in its place through the same cursor with
/// `place` (a set passes `NO_DUP_DATA`: an item already there is left as it is). The
/// cursor stays where it wrote, so LMDB finds the next place in the same page without
/// searching from the root when it can.
pub(crate) fn append_items<'b>(
    txn: &mut RwTxn<'_>,
    db: Database<'_, Bytes, Bytes>,
    n: usize,
    item: &dyn Fn(usize) -> (&'b [u8], &'b [u8]),
    flags: &dyn Fn(usize, Option<usize>) -> Option<PutFlags>,
    place: PutFlags,
) -> heed::Result<()> {
    // Appending only works past the table's last item; items before it (sorted input
    // meets them first) are placed instead of failing an append each.
    let last = db.last(txn)?.map(|(k, v)| (k.to_vec(), v.to_vec()));
    let beyond_last = |i: usize| {
        last.as_ref()
            .is_none_or(|(lk, lv)| item(i) > (lk.as_slice(), lv.as_slice()))
    };
    let mut cursor = db.iter_mut(txn)?;
    let mut prev = None;
    let mut appending = false;
    for i in 0..n {
        appending = appending || beyond_last(i);
        let (k, v) = item(i);
        let appended = match appending.then(|| flags(i, prev)).flatten() {
            // SAFETY: no reference obtained through this cursor or transaction is held
            // while it writes; `k` and `v` belong to the caller.
            Some(f) => match unsafe { cursor.put_current_with_options::<Bytes>(f, k, v) } {
                Ok(()) => true,
                Err(heed::Error::Mdb(MdbError::KeyExist)) => false,
                Err(e) => return Err(e),
            },
            None => false,
        };
        if !appended {
            // SAFETY: as above.
            match unsafe { cursor.put_current_with_options::<Bytes>(place, k, v) } {
                Ok(()) | Err(heed::Error::Mdb(MdbError::KeyExist)) => {}
                Err(e) => return Err(e),
            }
        }
        // Past the table's last item, the item just written is the new last.
        prev = appending.then_some(i);
    }
    Ok(())
}

impl WriteTxn for LmdbWrite<'_> {
    fn append_batch<'b>(
        &mut self,
        table: TableId,
        n: usize,
        pair: &dyn Fn(usize) -> (&'b [u8], &'b [u8]),
    ) -> KvResult<()> {
        if self.undo.depth() > 0 || n < 256 {
            for i in 0..n {
                let (k, v) = pair(i);
                self.append(table, k, v)?;
            }
            return Ok(());
        }
        let tbl = self.check_table(table)?;
        let mut bytes = 0usize;
        for i in 0..n {
            let (k, v) = pair(i);
            check_key(k, MAX_KEY_LEN)?;
            check_shape(tbl.shape, table, k, v)?;
            bytes = bytes.saturating_add(k.len() + v.len() + 16);
        }
        let mut rounds = 0;
        loop {
            self.txn()?;
            let Some(txn) = self.txn.as_mut() else {
                return Err(KvError::Storage("the write transaction is closed".into()));
            };
            let written = match (tbl.set_suffix(), &tbl.parts) {
                (None, _) => write_batch(txn, tbl.db, n, pair),
                (Some(suffix), None) => set::write_batch(txn, tbl.db, suffix, n, pair),
                (Some(suffix), Some(p)) => parts::write_batch(txn, tbl.db, p, suffix, n, pair),
            };
            match written {
                Ok(()) => break,
                Err(e) if is_map_full(&e) && rounds < MAX_GROW_ROUNDS => {
                    rounds += 1;
                    self.recover(bytes)?;
                }
                Err(e) if is_map_full(&e) => {
                    return Err(self.fail(KvError::MapFull(format!(
                        "the map is still full after {rounds} resizes"
                    ))));
                }
                Err(e) => return Err(write_error(e, &self.backend.path)),
            }
        }
        // The batch's bytes stay with the caller, so the replay log cannot reproduce it.
        self.log_truncated = true;
        self.log = Vec::new();
        Ok(())
    }

    fn put(&mut self, table: TableId, key: &[u8], value: &[u8]) -> KvResult<()> {
        self.store(table, key, value, Op::Put(table, key, value))
    }

    fn append(&mut self, table: TableId, key: &[u8], value: &[u8]) -> KvResult<()> {
        self.store(table, key, value, Op::Append(table, key, value))
    }

    fn delete(&mut self, table: TableId, key: &[u8]) -> KvResult<bool> {
        check_key(key, MAX_KEY_LEN)?;
        let tbl = self.check_table(table)?;
        if let Some(suffix) = tbl.set_suffix() {
            if key.len() <= suffix {
                return Ok(false);
            }
            let existed = self.exec(Op::Delete(table, key))?;
            if existed && self.undo.active() {
                self.undo.record(table, key, Some(Vec::new()));
            }
            return Ok(existed);
        }
        let db = tbl.db;
        if self.undo.active() {
            let Some(old) = self.current(db, key)? else {
                return Ok(false);
            };
            self.undo.record(table, key, Some(old));
        }
        self.exec(Op::Delete(table, key))
    }

    fn clear(&mut self, table: TableId) -> KvResult<()> {
        self.check_table(table)?;
        if self.undo.active() {
            let mut old = Vec::new();
            for pair in self.range(
                table,
                Bound::Unbounded,
                Bound::Unbounded,
                Direction::Forward,
            )? {
                let (k, v) = pair?;
                old.push((k.into_owned(), v.to_vec()));
            }
            for (k, v) in old {
                self.undo.record(table, &k, Some(v));
            }
        }
        self.exec(Op::Clear(table)).map(|_| ())
    }

    fn begin_nested(&mut self) -> KvResult<()> {
        self.txn()?;
        self.undo.begin();
        Ok(())
    }

    fn commit_nested(&mut self) -> KvResult<()> {
        self.undo.commit()
    }

    fn abort_nested(&mut self) -> KvResult<()> {
        for entry in self.undo.abort()? {
            match &entry.old {
                Some(v) => self.exec(Op::Put(entry.table, &entry.key, v))?,
                None => self.exec(Op::Delete(entry.table, &entry.key))?,
            };
        }
        Ok(())
    }

    fn nested_depth(&self) -> usize {
        self.undo.depth()
    }

    fn commit(mut self) -> KvResult<()> {
        let mut rounds = 0;
        loop {
            self.txn()?;
            let Some(txn) = self.txn.take() else {
                return Err(KvError::Storage("the write transaction is closed".into()));
            };
            let id = txn.id() as u64;
            match txn.commit() {
                Ok(()) => {
                    // A commit without changes writes nothing and keeps the previous id.
                    let newest = self.backend.env.info().last_txn_id as u64;
                    self.backend
                        .committed_txnid
                        .fetch_max(id.min(newest), Ordering::AcqRel);
                    return Ok(());
                }
                Err(e) if is_map_full(&e) && rounds < MAX_GROW_ROUNDS => {
                    rounds += 1;
                    self.recover(0)?;
                }
                Err(e) => return Err(self.fail(write_error(e, &self.backend.path))),
            }
        }
    }

    fn abort(self) {}
}

impl Drop for LmdbWrite<'_> {
    fn drop(&mut self) {
        // Abort the LMDB transaction before releasing the gate, then let the next writer in.
        self.txn = None;
        self.gate = None;
        self.backend.write_active.store(false, Ordering::Release);
    }
}

impl Backend for LmdbBackend {
    type Read = LmdbSnapshot;
    type Write<'e> = LmdbWrite<'e>;

    fn read(&self) -> KvResult<LmdbSnapshot> {
        let mut tries = 0;
        let mut stale = 0;
        // LMDB lets a reader that is preempted between reading the current transaction id
        // and the matching meta page register one id and read the state of a transaction
        // two commits later (the writer reused that meta page meanwhile); the next snapshot
        // may then come out older than this one. Such a snapshot is recognised (the newest
        // meta page is already two transactions past its id) and taken again, as is one
        // older than the last commit this process completed before it began, so snapshots
        // never go back in time.
        let floor = self.committed_txnid.load(Ordering::Acquire);
        loop {
            let gate = self.gate.read_arc();
            match self.env.clone().static_read_txn() {
                Ok(txn)
                    if stale < 1000 && {
                        let id = txn.id();
                        (id as u64) < floor || self.env.info().last_txn_id >= id.saturating_add(2)
                    } =>
                {
                    stale += 1;
                    self.retakes.fetch_add(1, Ordering::Relaxed);
                    drop(txn);
                    drop(gate);
                    std::thread::yield_now();
                }
                Ok(txn) => {
                    return Ok(LmdbSnapshot {
                        txn,
                        dbs: self.dbs.clone(),
                        _gate: gate,
                    })
                }
                Err(e) if is_map_resized(&e) && tries < 3 => {
                    tries += 1;
                    drop(gate);
                    self.adopt_map_size()?;
                }
                Err(e) => return Err(storage(e)),
            }
        }
    }

    fn write(&self) -> KvResult<LmdbWrite<'_>> {
        // The writer lock comes first: waiting for it while holding a gate guard could keep
        // the current writer from growing the map.
        let writer = self.writer.lock();
        self.grow_early();
        let (gate, txn) = self.begin_rw()?;
        self.write_active.store(true, Ordering::Release);
        Ok(LmdbWrite {
            backend: self,
            txn: Some(txn),
            gate: Some(gate),
            log: Vec::new(),
            log_bytes: 0,
            log_truncated: false,
            undo: UndoLog::default(),
            failed: None,
            _writer: writer,
        })
    }

    fn info(&self) -> KvResult<BackendInfo> {
        let info = self.env.info();
        Ok(BackendInfo {
            name: "lmdb",
            size_on_disk: self.env.real_disk_size().map_err(storage)?,
            map_size: info.map_size as u64,
            used_bytes: self.used_bytes() as u64,
            free_pages: match self.freelist() {
                Ok(f) => Some(f.listed),
                Err(e) => {
                    tracing::warn!(error = %e, "free pages not counted");
                    None
                }
            },
            write_active: self.write_active(),
            resizes: self.resizes.load(Ordering::Relaxed),
            snapshot_retakes: self.retakes.load(Ordering::Relaxed),
        })
    }

    fn write_active(&self) -> bool {
        self.write_active.load(Ordering::Acquire)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn os_error(code: i32) -> heed::Error {
        heed::Error::Io(std::io::Error::from_raw_os_error(code))
    }

    #[test]
    fn a_write_cut_short_on_a_full_disk_is_reported_as_the_full_disk() {
        let full = explain_write_error(os_error(5), Some(4096)).to_string();
        assert!(
            full.starts_with("storage error: No space left on device: "),
            "{full}"
        );
        assert!(full.contains("4096 bytes free"), "{full}");
        assert!(full.contains("Input/output error (os error 5)"), "{full}");
        // An I/O error with room on the disk, or room unknown, stays what it is.
        for free in [Some(DISK_FULL_BELOW), None] {
            let e = explain_write_error(os_error(5), free).to_string();
            assert_eq!(e, "storage error: Input/output error (os error 5)");
        }
        // The kernel's own ENOSPC already says so.
        let e = explain_write_error(os_error(28), Some(0)).to_string();
        assert_eq!(e, "storage error: No space left on device (os error 28)");
    }

    /// LMDB's own audit (`mdb_audit`): every page up to the last is a meta page, a page
    /// of a tree, or listed free.
    fn assert_every_page_accounted(b: &LmdbBackend) -> freelist::FreeList {
        let f = b.freelist().unwrap();
        let (tables, _) = b.table_stats().unwrap();
        let main = b.env.unnamed_database_stat();
        let main = (main.branch_pages + main.leaf_pages + main.overflow_pages) as u64;
        let tables: u64 = tables.iter().map(|t| t.pages).sum();
        assert_eq!(
            f.listed + f.tree + 2 + main + tables,
            f.last_page + 1,
            "{f:?}, main {main}, tables {tables}"
        );
        assert_eq!(b.info().unwrap().free_pages, Some(f.listed));
        f
    }

    #[test]
    fn free_pages_are_what_the_freelist_lists() {
        let dir = tempfile::tempdir().unwrap();
        let b = LmdbBackend::open(dir.path(), &["a", "b"], LmdbOptions::default()).unwrap();
        assert_every_page_accounted(&b);
        let value = vec![7u8; 500];
        let mut w = b.write().unwrap();
        for i in 0..5_000u32 {
            w.put(0, &i.to_be_bytes(), &value).unwrap();
            w.put(1, &i.to_be_bytes(), &value[..50]).unwrap();
        }
        w.commit().unwrap();
        assert_every_page_accounted(&b);
        // Deleting most of a table frees hundreds of pages in one transaction: a record
        // too long for a page, on overflow pages.
        let mut w = b.write().unwrap();
        for i in 0..4_500u32 {
            w.delete(0, &i.to_be_bytes()).unwrap();
        }
        w.commit().unwrap();
        let after_delete = assert_every_page_accounted(&b);
        assert!(after_delete.listed > 500, "{after_delete:?}");
        // Many small commits while a snapshot keeps their freed pages from reuse: many
        // records, a freelist tree of several leaves under a branch page.
        let pinned = b.read().unwrap();
        for round in 0..400u32 {
            let mut w = b.write().unwrap();
            w.put(1, &(round * 11).to_be_bytes(), &value[..60]).unwrap();
            w.commit().unwrap();
        }
        let busy = assert_every_page_accounted(&b);
        assert!(busy.tree > 2, "{busy:?}");
        drop(pinned);
    }

    #[cfg(unix)]
    #[test]
    fn free_bytes_reads_the_file_system() {
        let dir = tempfile::tempdir().unwrap();
        assert!(free_bytes(dir.path()).is_some_and(|f| f > 0));
        assert_eq!(free_bytes(&dir.path().join("missing")), None);
    }
}
