//! The database handle: opening (and creating) a store, handing out read snapshots and the
//! write transaction, and the counters other layers report.

use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use kauri_kv::lmdb::{LmdbBackend, LmdbOptions};
use kauri_kv::mem::MemBackend;
use kauri_kv::{Backend, ReadTxn, TableId, TableSpec, WriteTxn};

use crate::config::DbConfig;
use crate::entry::{Entry, Modification};
use crate::error::{DbError, DbResult};
use crate::keys::{meta, read_u64_be};
use crate::read::DbRead;
use crate::registry::Registry;
use crate::write::DbWrite;
use crate::{Dn, Rdn};

/// The tables a directory database needs, in [`TableId`] order, by name (dumps name them).
pub const TABLES: &[&str] = &[
    "meta",
    "entries",
    "nodes",
    "tree",
    "index",
    "links",
    "descriptors",
];
/// The same tables with their shapes; a backend is opened with these. `index` is a set of
/// keys ending in a record id, which LMDB stores as one key per value with its ids as
/// sorted duplicates, split by kind and attribute (the first [`INDEX_PARTITION_PREFIX`]
/// bytes of a key) into a tree per attribute.
pub const TABLE_SPECS: &[TableSpec<'static>] = &[
    TableSpec::plain("meta"),
    TableSpec::plain("entries"),
    TableSpec::plain("nodes"),
    TableSpec::plain("tree"),
    TableSpec::partitioned_set("index", 8, INDEX_PARTITION_PREFIX, INDEX_PARTITIONS),
    TableSpec::plain("links"),
    TableSpec::plain("descriptors"),
];

/// The bytes of an index key that name its kind and attribute ([`crate::keys`]).
pub const INDEX_PARTITION_PREFIX: usize = 5;
/// Attributes whose value keys get a tree of their own; later ones share the main tree.
/// Forty covers what a domain indexes with values (about thirty in a provisioned domain
/// with users and groups) and keeps LMDB's catalogue of trees within one page, which every
/// commit rewrites.
pub const INDEX_PARTITIONS: usize = 40;

/// The storage format this build writes (`meta` `format`): the layout as a whole. The
/// record's own version byte is [`crate::record::FORMAT_VERSION`].
///
/// - 2: linked attributes in the `links` table.
/// - 3: `index` is a set table (ids as sorted duplicates of their value key in LMDB);
///   records of version 3; integers and times normalized in 1 to 9 bytes.
/// - 4: `index` value keys split into a tree per attribute (partitions of the set table).
/// - 5: the `descriptors` table ([`crate::descriptors`]): the descriptor attribute's
///   values stored once each, records holding their ids.
pub const STORE_FORMAT: u32 = 5;
/// The oldest storage format this build upgrades on open.
pub const OLDEST_UPGRADABLE_FORMAT: u32 = 2;
/// `meta` table: format version, counters, attribute registry.
pub const T_META: TableId = 0;
/// `entries` table: id → record.
pub const T_ENTRIES: TableId = 1;
/// `nodes` table: id → parent id and RDN text.
pub const T_NODES: TableId = 2;
/// `tree` table: parent id + RDN key → child id.
pub const T_TREE: TableId = 3;
/// `index` table: attribute index keys.
pub const T_INDEX: TableId = 4;
/// `links` table: linked attributes, one key per link and direction.
pub const T_LINKS: TableId = 5;
/// `descriptors` table: values stored once, referred to by id ([`crate::descriptors`]).
pub const T_DESCRIPTORS: TableId = 6;

/// Brings a store from storage format `from` to `from + 1`, inside the transaction that
/// opens it. Each step is recorded here for good: a store of any older supported format
/// passes through every step after its own.
fn upgrade_step<W: WriteTxn>(w: &mut W, from: u32) -> DbResult<()> {
    match from {
        // 2 → 3: `index` became a set table. Its keys are the same; the key-value layer
        // moved them into the set form when it opened the table with `TABLE_SPECS`. The
        // records and integer forms follow through the syntax fingerprint: the open that
        // runs this step normalizes every record again (rewriting it in version 3) and
        // re-indexes.
        2 => {}
        // 3 → 4: the key-value layer split `index` into partitions when it opened the
        // table; the format number keeps builds that know only one tree from opening it.
        3 => {}
        // 4 → 5: the key-value layer created the empty `descriptors` table; a store of
        // format 4 holds no descriptor attribute values (the layer above computes them).
        4 => {}
        other => {
            return Err(DbError::UnsupportedFormat {
                found: other,
                supported: STORE_FORMAT,
            })
        }
    }
    w.put(T_META, meta::FORMAT, &(from + 1).to_be_bytes())?;
    tracing::info!(from, to = from + 1, "upgraded the storage format");
    Ok(())
}

/// The USN attributes are integers whatever the caller's syntax map says.
pub(crate) fn with_usn_syntaxes(cfg: &mut DbConfig) {
    if let Some((created, changed)) = cfg.usn_attributes.clone() {
        cfg.schema.set(&created, crate::syntax::Syntax::Integer);
        cfg.schema.set(&changed, crate::syntax::Syntax::Integer);
    }
}

/// A directory database on some key-value backend.
pub struct Db<B: Backend> {
    pub(crate) kv: B,
    pub(crate) cfg: parking_lot::RwLock<Arc<DbConfig>>,
    pub(crate) registry: parking_lot::RwLock<Arc<Registry>>,
    pub(crate) highest_usn: AtomicU64,
    pub(crate) unindexed: AtomicU64,
    pub(crate) invocation: [u8; 16],
}

impl Db<LmdbBackend> {
    /// Opens (creating if needed) an LMDB-backed database in `dir`.
    pub fn open_lmdb(dir: &Path, cfg: DbConfig, options: LmdbOptions) -> DbResult<Db<LmdbBackend>> {
        let kv = LmdbBackend::open_shaped(dir, TABLE_SPECS, options)?;
        Db::open(kv, cfg)
    }

    /// [`Db::open_deferred`] on an LMDB database in `dir`.
    pub fn open_lmdb_deferred(
        dir: &Path,
        cfg: DbConfig,
        options: LmdbOptions,
    ) -> DbResult<Db<LmdbBackend>> {
        let kv = LmdbBackend::open_shaped(dir, TABLE_SPECS, options)?;
        Db::open_deferred(kv, cfg)
    }
}

impl Db<MemBackend> {
    /// A fresh in-memory database (tests, tools).
    pub fn in_memory(cfg: DbConfig) -> DbResult<Db<MemBackend>> {
        Db::open(MemBackend::new_shaped(TABLE_SPECS), cfg)
    }
}

impl<B: Backend> Db<B> {
    /// Opens a database on a backend opened with [`TABLES`], initializing an empty store
    /// and re-indexing when the index configuration changed since the last open.
    pub fn open(kv: B, cfg: DbConfig) -> DbResult<Db<B>> {
        let db = Db::open_deferred(kv, cfg)?;
        db.bring_up_to_date()?;
        Ok(db)
    }

    /// Opens a database without comparing its stored forms and indexes with `cfg` yet:
    /// for a caller that learns the real configuration from the data itself (AD's schema
    /// lives in the directory) and hands it over with [`Db::adopt_config`] before use.
    pub fn open_deferred(kv: B, mut cfg: DbConfig) -> DbResult<Db<B>> {
        cfg.max_index_key_len = cfg.max_index_key_len.min(kv.max_key_len());
        with_usn_syntaxes(&mut cfg);
        let mut w = kv.write()?;
        let format = w.get(T_META, meta::FORMAT)?.map(|v| v.to_vec());
        let invocation: [u8; 16] = match format {
            None => {
                let mut inv = [0u8; 16];
                getrandom::fill(&mut inv).map_err(|e| {
                    DbError::Corrupt(format!("no randomness for the invocation id: {e}"))
                })?;
                w.put(T_META, meta::FORMAT, &STORE_FORMAT.to_be_bytes())?;
                w.put(T_META, meta::USN, &0u64.to_be_bytes())?;
                w.put(T_META, meta::NEXT_ID, &1u64.to_be_bytes())?;
                w.put(T_META, meta::NEXT_ATTR, &1u32.to_be_bytes())?;
                w.put(T_META, meta::INVOCATION, &inv)?;
                w.put(T_META, meta::INDEX_CONFIG, &cfg.index_fingerprint())?;
                w.put(T_META, meta::SCHEMA_CONFIG, &cfg.schema.fingerprint())?;
                inv
            }
            Some(v) => {
                let found = v
                    .get(..4)
                    .and_then(|b| b.try_into().ok())
                    .map(u32::from_be_bytes)
                    .ok_or_else(|| DbError::corrupt("format version unreadable"))?;
                if !(OLDEST_UPGRADABLE_FORMAT..=STORE_FORMAT).contains(&found) {
                    return Err(DbError::UnsupportedFormat {
                        found,
                        supported: STORE_FORMAT,
                    });
                }
                for from in found..STORE_FORMAT {
                    upgrade_step(&mut w, from)?;
                }
                w.get(T_META, meta::INVOCATION)?
                    .and_then(|b| b.try_into().ok())
                    .ok_or_else(|| DbError::corrupt("invocation id unreadable"))?
            }
        };
        let registry = Registry::load(&w, T_META)?;
        let usn = w.get(T_META, meta::USN)?.and_then(read_u64_be).unwrap_or(0);
        w.commit()?;
        Ok(Db {
            kv,
            cfg: parking_lot::RwLock::new(Arc::new(cfg)),
            registry: parking_lot::RwLock::new(Arc::new(registry)),
            highest_usn: AtomicU64::new(usn),
            unindexed: AtomicU64::new(0),
            invocation,
        })
    }

    /// Takes `cfg` as the configuration of a database opened with [`Db::open_deferred`],
    /// renormalizing and re-indexing only when what is stored was made under another.
    pub fn adopt_config(&self, mut cfg: DbConfig) -> DbResult<()> {
        let old = self.config();
        cfg.max_index_key_len = old.max_index_key_len;
        with_usn_syntaxes(&mut cfg);
        *self.cfg.write() = Arc::new(cfg);
        self.bring_up_to_date()
    }

    /// Compares the stored fingerprints with the configuration, renormalizing and
    /// re-indexing when they differ (or a bulk load was cut short).
    fn bring_up_to_date(&self) -> DbResult<()> {
        let cfg = self.config();
        let (needs_renormalize, needs_reindex) = {
            let r = self.kv.read()?;
            let schema_changed =
                r.get(T_META, meta::SCHEMA_CONFIG)? != Some(cfg.schema.fingerprint().as_slice());
            let index_changed =
                r.get(T_META, meta::INDEX_CONFIG)? != Some(cfg.index_fingerprint().as_slice());
            let bulk = r.get(T_META, meta::BULK_PENDING)?.is_some();
            (schema_changed, schema_changed || index_changed || bulk)
        };
        if needs_renormalize {
            tracing::info!(
                "attribute syntaxes changed since the last open; normalizing values again"
            );
            self.renormalize(None)?;
        }
        if needs_reindex {
            self.move_record_values_to_links()?;
            tracing::info!("index configuration changed or a bulk load was cut short; re-indexing");
            self.reindex(None)?;
        }
        Ok(())
    }

    /// Stores as links the values records still hold for attributes that became linked
    /// (see `DbWrite::move_record_values_to_links`), in its own transaction.
    fn move_record_values_to_links(&self) -> DbResult<()> {
        let mut w = self.write()?;
        if w.move_record_values_to_links()? > 0 {
            w.commit()?;
        }
        Ok(())
    }

    /// A read snapshot: consistent for its whole life, never blocked by the writer.
    pub fn read(&self) -> DbResult<DbRead<'_, B>> {
        DbRead::new(self)
    }

    /// The write transaction (waits for any other writer).
    pub fn write(&self) -> DbResult<DbWrite<'_, B>> {
        DbWrite::new(self)
    }

    /// The highest USN this process has committed (no store read: what another process
    /// committed is not seen). A cheap "has anything changed here" for caches.
    pub fn local_usn(&self) -> u64 {
        self.highest_usn.load(Ordering::Acquire)
    }

    /// The highest USN whose transaction has committed. It is raised only after the commit,
    /// so a reader never sees a USN before the data it covers; what another process (an
    /// admin tool on the same folder) committed is read from the store.
    pub fn highest_committed_usn(&self) -> u64 {
        let ours = self.highest_usn.load(Ordering::Acquire);
        let stored = self.kv.read().ok().and_then(|r| {
            r.get(T_META, meta::USN)
                .ok()
                .flatten()
                .and_then(read_u64_be)
        });
        stored.unwrap_or(0).max(ours)
    }

    /// How many searches ran without an index to narrow them.
    pub fn unindexed_searches(&self) -> u64 {
        self.unindexed.load(Ordering::Relaxed)
    }

    /// The configuration in force.
    pub fn config(&self) -> Arc<DbConfig> {
        self.cfg.read().clone()
    }

    /// Replaces the configuration while the database is open (a schema extension adds
    /// attributes, syntaxes, indexes and link pairs). Snapshots and transactions already
    /// open keep the configuration they started with. Attributes that already hold values
    /// and whose syntax, index flags or link role change get their stored forms and keys
    /// rebuilt (renormalize and re-index); new attributes cost nothing. Call it from the
    /// thread that writes, between transactions.
    pub fn replace_config(&self, cfg: DbConfig) -> DbResult<()> {
        self.replace_config_with(cfg, false)
    }

    /// [`Db::replace_config`] after the transaction that needed the new configuration
    /// stored its fingerprints itself (`DbWrite::store_config_fingerprints`): nothing more
    /// is written unless values must be rebuilt.
    pub fn replace_config_stored(&self, cfg: DbConfig) -> DbResult<()> {
        self.replace_config_with(cfg, true)
    }

    fn replace_config_with(&self, mut cfg: DbConfig, stored: bool) -> DbResult<()> {
        let old = self.config();
        cfg.max_index_key_len = old.max_index_key_len;
        with_usn_syntaxes(&mut cfg);
        let reg = self.registry();
        let (mut renormalize, mut reindex) = (false, false);
        for (_, name) in reg.iter() {
            let lower = name.to_ascii_lowercase();
            if old.schema.syntax_of_lower(&lower) != cfg.schema.syntax_of_lower(&lower) {
                renormalize = true;
            }
            if old.index_of_lower(&lower) != cfg.index_of_lower(&lower)
                || old.link_of_lower(&lower) != cfg.link_of_lower(&lower)
            {
                reindex = true;
            }
        }
        let fingerprints = (!stored).then(|| (cfg.index_fingerprint(), cfg.schema.fingerprint()));
        *self.cfg.write() = Arc::new(cfg);
        if renormalize {
            self.renormalize(None)?;
        }
        if reindex {
            self.move_record_values_to_links()?;
        }
        if renormalize || reindex {
            self.reindex(None)?;
            return Ok(());
        }
        let Some((fingerprint, schema_print)) = fingerprints else {
            return Ok(());
        };
        let stored = {
            let r = self.kv.read()?;
            r.get(T_META, meta::INDEX_CONFIG)? == Some(fingerprint.as_slice())
                && r.get(T_META, meta::SCHEMA_CONFIG)? == Some(schema_print.as_slice())
        };
        if !stored {
            let mut w = self.kv.write()?;
            w.put(T_META, meta::INDEX_CONFIG, &fingerprint)?;
            w.put(T_META, meta::SCHEMA_CONFIG, &schema_print)?;
            w.commit()?;
        }
        Ok(())
    }

    /// The key-value backend (for stats and backups).
    pub fn kv(&self) -> &B {
        &self.kv
    }

    /// This database's invocation id.
    pub fn invocation_id(&self) -> [u8; 16] {
        self.invocation
    }

    /// Gives the store under a database a new invocation id, keeping the old one with the
    /// highest USN it reached (AD's up-to-dateness cursor for it). A restored database must
    /// not originate changes under the identity of the one it was copied from, which may
    /// have gone on writing after the copy. Call it before the store is opened as a
    /// [`Db`], which reads the invocation id once. Returns (old id, new id).
    pub fn retire_invocation(kv: &B) -> DbResult<([u8; 16], [u8; 16])> {
        let mut w = kv.write()?;
        let old: [u8; 16] = w
            .get(T_META, meta::INVOCATION)?
            .and_then(|b| b.try_into().ok())
            .ok_or_else(|| DbError::corrupt("invocation id unreadable"))?;
        let usn = w.get(T_META, meta::USN)?.and_then(read_u64_be).unwrap_or(0);
        let mut retired = w
            .get(T_META, meta::RETIRED_INVOCATIONS)?
            .map(<[u8]>::to_vec)
            .unwrap_or_default();
        retired.extend_from_slice(&old);
        retired.extend_from_slice(&usn.to_be_bytes());
        let mut new = [0u8; 16];
        getrandom::fill(&mut new)
            .map_err(|e| DbError::Corrupt(format!("no randomness for the invocation id: {e}")))?;
        w.put(T_META, meta::RETIRED_INVOCATIONS, &retired)?;
        w.put(T_META, meta::INVOCATION, &new)?;
        w.commit()?;
        Ok((old, new))
    }

    pub(crate) fn registry(&self) -> Arc<Registry> {
        self.registry.read().clone()
    }

    /// Adds one entry in its own transaction; returns its id.
    pub fn add(&self, entry: Entry) -> DbResult<u64> {
        let mut w = self.write()?;
        let id = w.add(entry)?;
        w.commit()?;
        Ok(id)
    }

    /// Adds the head of a naming context in its own transaction (see
    /// [`DbWrite::add_root`]).
    pub fn add_root(&self, entry: Entry) -> DbResult<u64> {
        let mut w = self.write()?;
        let id = w.add_root(entry)?;
        w.commit()?;
        Ok(id)
    }

    /// Modifies one entry in its own transaction.
    pub fn modify(&self, dn: &Dn, mods: &[Modification]) -> DbResult<()> {
        let mut w = self.write()?;
        w.modify(dn, mods)?;
        w.commit()?;
        Ok(())
    }

    /// Deletes one entry (and, with `subtree`, everything below it) in its own transaction;
    /// returns how many entries went.
    pub fn delete(&self, dn: &Dn, subtree: bool) -> DbResult<usize> {
        let mut w = self.write()?;
        let n = w.delete(dn, subtree)?;
        w.commit()?;
        Ok(n)
    }

    /// Renames and/or moves one entry (with its subtree) in its own transaction.
    pub fn rename(
        &self,
        dn: &Dn,
        new_rdn: &Rdn,
        delete_old_rdn: bool,
        new_parent: Option<&Dn>,
    ) -> DbResult<()> {
        let mut w = self.write()?;
        w.rename(dn, new_rdn, delete_old_rdn, new_parent)?;
        w.commit()?;
        Ok(())
    }
}
