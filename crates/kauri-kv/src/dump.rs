//! Dumps: every table of a store as one byte stream, written from one snapshot and loaded
//! into an empty store of any backend.
//!
//! Backups and transfers between machines need a copy that is consistent (one snapshot),
//! that streams (no second copy of the store on disk while it is written) and that does
//! not depend on the backend that wrote it. A dump is that copy:
//!
//! ```text
//! header  "KAURIDMP" ++ version u32 BE (1) ++ table count u16 BE
//!         ++ per table: name length u8 ++ name (UTF-8)
//! tables  per table, in header order, its pairs in key order:
//!             varint key length (≥ 1) ++ key ++ varint value length ++ value
//!         then varint 0 (keys are never empty, so 0 ends the table)
//! trailer "END!" ++ total pair count u64 BE
//! ```
//!
//! Varints are unsigned LEB128. The trailer makes a truncated dump an error instead of a
//! smaller store. Because every table is written in key order, a load appends each table
//! in sorted batches, the fastest way into a B-tree.

use std::io::{self, Read, Write};
use std::ops::Bound;

use crate::{Backend, Direction, KvError, KvResult, ReadTxn, WriteTxn, MAX_KEY_LEN};

/// The first bytes of every dump.
pub const MAGIC: &[u8; 8] = b"KAURIDMP";
/// The dump format this code writes and reads.
pub const VERSION: u32 = 1;
const TRAILER: &[u8; 4] = b"END!";
/// Pairs a load writes per transaction are bounded by this many bytes of keys and values.
const BATCH_BYTES: usize = 16 << 20;
/// Values longer than this are refused while loading (LMDB's own limit is below 4 GiB).
const MAX_VALUE_LEN: u64 = 1 << 31;
/// A load reads a long key or value this many bytes at a time.
const READ_PIECE: usize = 1 << 20;

/// What a dump held or a load wrote.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct DumpStats {
    /// Pairs per table, in the order of the table list.
    pub per_table: Vec<u64>,
    /// Every pair of every table.
    pub pairs: u64,
    /// Bytes of the dump stream.
    pub bytes: u64,
}

fn dump_error(what: impl std::fmt::Display) -> KvError {
    KvError::Dump(what.to_string())
}

fn io_error(e: io::Error) -> KvError {
    dump_error(format!("I/O: {e}"))
}

/// A writer that counts what passes through it.
struct Counting<W> {
    inner: W,
    bytes: u64,
}

impl<W: Write> Counting<W> {
    fn put(&mut self, b: &[u8]) -> KvResult<()> {
        self.inner.write_all(b).map_err(io_error)?;
        self.bytes += b.len() as u64;
        Ok(())
    }

    fn varint(&mut self, mut n: u64) -> KvResult<()> {
        let mut buf = [0u8; 10];
        let mut i = 0;
        loop {
            let low = (n & 0x7f) as u8;
            n >>= 7;
            if n == 0 {
                buf[i] = low;
                i += 1;
                break;
            }
            buf[i] = low | 0x80;
            i += 1;
        }
        self.put(&buf[..i])
    }
}

/// Writes every table of `snapshot` to `out`. `tables` are the names the store was opened
/// with, in table-id order; the dump records them so a load can check it goes to the same
/// layout.
pub fn write_dump<R: ReadTxn, W: Write>(
    snapshot: &R,
    tables: &[&str],
    out: W,
) -> KvResult<DumpStats> {
    let mut w = Counting {
        inner: out,
        bytes: 0,
    };
    w.put(MAGIC)?;
    w.put(&VERSION.to_be_bytes())?;
    let count = u16::try_from(tables.len()).map_err(|_| dump_error("too many tables"))?;
    w.put(&count.to_be_bytes())?;
    for name in tables {
        let len = u8::try_from(name.len())
            .map_err(|_| dump_error(format!("table name {name:?} is too long")))?;
        w.put(&[len])?;
        w.put(name.as_bytes())?;
    }
    let mut stats = DumpStats::default();
    for table in 0..tables.len() {
        let mut n = 0u64;
        for pair in snapshot.range(
            table,
            Bound::Unbounded,
            Bound::Unbounded,
            Direction::Forward,
        )? {
            let (k, v) = pair?;
            w.varint(k.len() as u64)?;
            w.put(&k)?;
            w.varint(v.len() as u64)?;
            w.put(v)?;
            n += 1;
        }
        w.varint(0)?;
        stats.per_table.push(n);
        stats.pairs += n;
    }
    w.put(TRAILER)?;
    w.put(&stats.pairs.to_be_bytes())?;
    w.inner.flush().map_err(io_error)?;
    stats.bytes = w.bytes;
    Ok(stats)
}

/// A reader that counts what it consumed and reports truncation as a dump error.
struct Source<R> {
    inner: R,
    bytes: u64,
}

impl<R: Read> Source<R> {
    fn exact(&mut self, buf: &mut [u8]) -> KvResult<()> {
        self.inner.read_exact(buf).map_err(|e| {
            if e.kind() == io::ErrorKind::UnexpectedEof {
                dump_error("the dump ends early (truncated)")
            } else {
                io_error(e)
            }
        })?;
        self.bytes += buf.len() as u64;
        Ok(())
    }

    fn byte(&mut self) -> KvResult<u8> {
        let mut b = [0u8; 1];
        self.exact(&mut b)?;
        Ok(b[0])
    }

    fn varint(&mut self) -> KvResult<u64> {
        let mut n = 0u64;
        for shift in (0..70).step_by(7) {
            let b = self.byte()?;
            let bits = u64::from(b & 0x7f);
            if shift == 63 && bits > 1 {
                return Err(dump_error("a length overflows"));
            }
            n |= bits << shift;
            if b & 0x80 == 0 {
                return Ok(n);
            }
        }
        Err(dump_error("a length is longer than 10 bytes"))
    }

    /// Appends `len` bytes read from the stream to `buf`. Memory grows with the bytes
    /// actually read, a piece at a time, never with what a length field claims: a damaged
    /// or hostile dump cannot make a load allocate more than it holds.
    fn append(&mut self, buf: &mut Vec<u8>, len: u64) -> KvResult<()> {
        let mut left = usize::try_from(len).map_err(|_| dump_error("a value is too long"))?;
        while left > 0 {
            let n = left.min(READ_PIECE);
            let start = buf.len();
            buf.resize(start + n, 0);
            self.exact(&mut buf[start..])?;
            left -= n;
        }
        Ok(())
    }
}

/// Reads and checks a dump's header; returns the table names it lists.
fn read_header<R: Read>(src: &mut Source<R>) -> KvResult<Vec<String>> {
    let mut magic = [0u8; 8];
    src.exact(&mut magic)?;
    if &magic != MAGIC {
        return Err(dump_error("not a Kauri dump (wrong magic bytes)"));
    }
    let mut v = [0u8; 4];
    src.exact(&mut v)?;
    let version = u32::from_be_bytes(v);
    if version != VERSION {
        return Err(dump_error(format!(
            "dump format {version} is not supported (this Kauri reads format {VERSION})"
        )));
    }
    let mut c = [0u8; 2];
    src.exact(&mut c)?;
    let mut names = Vec::new();
    for _ in 0..u16::from_be_bytes(c) {
        let len = src.byte()?;
        let mut name = Vec::new();
        src.append(&mut name, u64::from(len))?;
        names.push(String::from_utf8(name).map_err(|_| dump_error("a table name is not UTF-8"))?);
    }
    Ok(names)
}

/// Pairs collected for one append batch: keys and values back to back in one buffer.
#[derive(Default)]
struct Batch {
    data: Vec<u8>,
    /// (key start, key end, value end) per pair.
    spans: Vec<(usize, usize, usize)>,
}

impl Batch {
    fn flush<B: Backend>(&mut self, store: &B, table: usize) -> KvResult<()> {
        if self.spans.is_empty() {
            return Ok(());
        }
        let mut w = store.write()?;
        let data = &self.data;
        let spans = &self.spans;
        w.append_batch(table, spans.len(), &|i| {
            let (k, v, end) = spans[i];
            (&data[k..v], &data[v..end])
        })?;
        w.commit()?;
        self.data.clear();
        self.spans.clear();
        Ok(())
    }
}

/// Loads a dump into `store`, whose tables (`tables`, in table-id order) must be empty and
/// begin with the dump's (a dump made before tables were added loads into the newer layout). Pairs are appended in batches, each in a transaction of its own:
/// a failed load leaves a partial store, so load into a new store and discard it on error.
/// `progress` hears the bytes consumed so far.
pub fn load_dump<B: Backend, R: Read>(
    store: &B,
    tables: &[&str],
    input: R,
    progress: Option<&dyn Fn(u64)>,
) -> KvResult<DumpStats> {
    let mut src = Source {
        inner: input,
        bytes: 0,
    };
    let names = read_header(&mut src)?;
    // A dump of an older layout holds the first tables of a newer one: the tables added
    // since stay empty, and the layer above upgrades the store when it opens it.
    if names.len() > tables.len() || names.iter().zip(tables).any(|(a, b)| a != b) {
        return Err(dump_error(format!(
            "the dump holds the tables {names:?}, the store has {tables:?}"
        )));
    }
    {
        let r = store.read()?;
        for (table, name) in tables.iter().enumerate() {
            let mut it = r.range(
                table,
                Bound::Unbounded,
                Bound::Unbounded,
                Direction::Forward,
            )?;
            if it.next().is_some() {
                return Err(dump_error(format!(
                    "table {name} is not empty: a dump loads into an empty store only"
                )));
            }
        }
    }
    let mut stats = DumpStats::default();
    let mut batch = Batch::default();
    for (table, name) in tables.iter().enumerate().take(names.len()) {
        let mut n = 0u64;
        let mut last_key: Vec<u8> = Vec::new();
        loop {
            let klen = src.varint()?;
            if klen == 0 {
                break;
            }
            if klen > MAX_KEY_LEN as u64 {
                return Err(dump_error(format!(
                    "a key of {klen} bytes is longer than any store accepts"
                )));
            }
            let k = batch.data.len();
            src.append(&mut batch.data, klen)?;
            let key = &batch.data[k..];
            if n > 0 && key <= last_key.as_slice() {
                return Err(dump_error(format!(
                    "the keys of table {name} are out of order"
                )));
            }
            last_key.clear();
            last_key.extend_from_slice(key);
            let vlen = src.varint()?;
            if vlen > MAX_VALUE_LEN {
                return Err(dump_error(format!("a value of {vlen} bytes is too long")));
            }
            let v = batch.data.len();
            src.append(&mut batch.data, vlen)?;
            batch.spans.push((k, v, batch.data.len()));
            n += 1;
            if batch.data.len() >= BATCH_BYTES {
                batch.flush(store, table)?;
                if let Some(p) = progress {
                    p(src.bytes);
                }
            }
        }
        batch.flush(store, table)?;
        stats.per_table.push(n);
        stats.pairs += n;
    }
    // Tables the dump's older layout did not have hold nothing.
    stats.per_table.resize(tables.len(), 0);
    let mut trailer = [0u8; 12];
    src.exact(&mut trailer)?;
    if &trailer[..4] != TRAILER {
        return Err(dump_error("the dump's trailer is missing"));
    }
    let mut count = [0u8; 8];
    count.copy_from_slice(&trailer[4..]);
    let expected = u64::from_be_bytes(count);
    if expected != stats.pairs {
        return Err(dump_error(format!(
            "the dump says it holds {expected} pairs but {} were read",
            stats.pairs
        )));
    }
    if let Some(p) = progress {
        p(src.bytes);
    }
    stats.bytes = src.bytes;
    Ok(stats)
}
