//! The write transaction and the four write operations: add, modify, delete and rename.
//!
//! Each operation runs in its own nested transaction, so a failed operation leaves no
//! trace while the operations before it in the same transaction stay. Each successful
//! operation takes the next USN; the transaction's highest USN becomes visible with its
//! commit. Changes stamp the attributes they touch with replication metadata (see
//! [`crate::record::Stamp`]).

use std::collections::{BTreeSet, HashMap};
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::{SystemTime, UNIX_EPOCH};

use kauri_kv::{Backend, Direction, ReadTxn, WriteTxn};

pub(crate) mod append;
mod links;
mod values;

pub use append::Placed;

/// The forward links of a new entry: each attribute with the ids it links to.
type NewLinks = Vec<(links::LinkAttr, Vec<u64>)>;

use values::Seen;

use crate::config::{DbConfig, IndexFlags, LinkRole};
use crate::db::{Db, T_ENTRIES, T_INDEX, T_META, T_NODES, T_TREE};
use crate::dn::{Dn, Rdn};
use crate::entry::{Entry, Modification, ModifyOp};
use crate::error::{DbError, DbResult};
use crate::keys::{
    id_key, meta, presence_key, read_id_suffix, read_u64_be, tree_key, value_key, value_key_into,
    value_prefix, LINK_FORWARD, TERM_CUT,
};
use crate::quick_hash::QuickMap;
use crate::read::{self, node_value};
use crate::record::{self, OwnedRecord, OwnedValue, RecordView, Stamp};
use crate::registry::{self, Registry};
use crate::sorter::KeySorter;
use crate::syntax::Syntax;

/// Longest attribute description accepted.
pub const MAX_ATTR_NAME: usize = 200;

/// Where an added entry is placed in the hierarchy.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum AddKind {
    /// Below its parent, which must exist.
    Child,
    /// Below its parent if that exists, otherwise as a naming context.
    Root,
    /// As a naming context, whether or not its parent exists.
    NamingContext,
}

#[derive(Debug, Clone, Copy)]
struct Saved {
    added: usize,
    removed: usize,
    next_attr: u32,
    next_id: u64,
    usn: u64,
}

/// The write transaction of a database.
pub struct DbWrite<'d, B: Backend> {
    db: &'d Db<B>,
    cfg: Arc<DbConfig>,
    kv: B::Write<'d>,
    reg: Arc<Registry>,
    added: Vec<(u32, String)>,
    added_by_name: HashMap<String, u32>,
    /// Lowercased names given up by renamed attributes (see `rename_attribute`).
    removed_names: Vec<String>,
    flags_cache: Vec<Option<IndexFlags>>,
    // Attribute names as entries spell them: schema names, a bounded few per transaction.
    given_ids: QuickMap<String, u32>,
    given_syntax: QuickMap<String, Syntax>,
    dn_norms: HashMap<Vec<u8>, Option<Vec<u8>>>,
    usn_ids: Option<(u32, u32)>,
    next_attr: u32,
    next_id: u64,
    usn: u64,
    start_usn: u64,
    /// The counters as the transaction found them: only those that moved are written back,
    /// so a commit dirties no page it does not have to.
    start_next: (u32, u64),
    saved: Vec<Saved>,
    now: u64,
    deferred: Option<KeySorter>,
    poisoned: Option<String>,
    /// The descriptor stored last and its id: neighbouring entries mostly share theirs.
    last_descriptor: Option<(Vec<u8>, u64)>,
}

fn back_link_refused(name: &str, forward: &str) -> DbError {
    DbError::UnwillingToPerform(format!(
        "{name} is computed from {forward} on other entries and cannot be written"
    ))
}

fn check_attr_name(name: &str) -> DbResult<()> {
    let ok = !name.is_empty()
        && name.len() <= MAX_ATTR_NAME
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b';' || b == b'.' || b == b'_');
    if ok {
        Ok(())
    } else {
        Err(DbError::InvalidAttributeSyntax(format!(
            "invalid attribute description {name:?}"
        )))
    }
}

impl<'d, B: Backend> DbWrite<'d, B> {
    pub(crate) fn new(db: &'d Db<B>) -> DbResult<DbWrite<'d, B>> {
        let kv = db.kv.write()?;
        let get_u64 = |k: &[u8]| -> DbResult<u64> {
            kv.get(T_META, k)?.and_then(read_u64_be).ok_or_else(|| {
                DbError::corrupt(format!("meta {} missing", String::from_utf8_lossy(k)))
            })
        };
        let next_id = get_u64(meta::NEXT_ID)?;
        let usn = get_u64(meta::USN)?;
        let next_attr = kv
            .get(T_META, meta::NEXT_ATTR)?
            .and_then(|v| v.get(..4).and_then(|b| b.try_into().ok()))
            .map(u32::from_be_bytes)
            .ok_or_else(|| DbError::corrupt("meta next_attr missing"))?;
        let now = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map(|d| d.as_secs())
            .unwrap_or(0);
        Ok(DbWrite {
            cfg: db.config(),
            reg: db.registry(),
            db,
            kv,
            added: Vec::new(),
            added_by_name: HashMap::new(),
            removed_names: Vec::new(),
            flags_cache: Vec::new(),
            given_ids: QuickMap::default(),
            given_syntax: QuickMap::default(),
            dn_norms: HashMap::new(),
            usn_ids: None,
            next_attr,
            next_id,
            usn,
            start_usn: usn,
            start_next: (next_attr, next_id),
            saved: Vec::new(),
            now,
            deferred: None,
            poisoned: None,
            last_descriptor: None,
        })
    }

    /// The key-value transaction underneath (for layers that keep tables of their own).
    pub fn kv(&mut self) -> &mut B::Write<'d> {
        &mut self.kv
    }

    /// Raises the record id and USN counters to at least these values (the repair of
    /// counters a consistency check found behind the data); written at commit.
    pub(crate) fn raise_counters(&mut self, next_id: u64, usn: u64) {
        self.next_id = self.next_id.max(next_id);
        self.usn = self.usn.max(usn);
    }

    /// The USN the last operation took (the transaction's highest so far).
    pub fn current_usn(&self) -> u64 {
        self.usn
    }

    // ----- nested transactions -------------------------------------------------------

    /// Opens a nested transaction (for callers that group several requests into one
    /// commit); pair with [`DbWrite::commit_nested`] or [`DbWrite::abort_nested`].
    pub fn begin_nested(&mut self) -> DbResult<()> {
        self.flush_deferred()?;
        self.kv.begin_nested()?;
        self.saved.push(Saved {
            added: self.added.len(),
            removed: self.removed_names.len(),
            next_attr: self.next_attr,
            next_id: self.next_id,
            usn: self.usn,
        });
        Ok(())
    }

    /// Keeps the innermost nested transaction's changes.
    pub fn commit_nested(&mut self) -> DbResult<()> {
        self.kv.commit_nested()?;
        self.saved.pop();
        Ok(())
    }

    /// Rolls back the innermost nested transaction's changes, and only those.
    pub fn abort_nested(&mut self) -> DbResult<()> {
        self.kv.abort_nested()?;
        // It may have been stored by what was rolled back.
        self.last_descriptor = None;
        if let Some(s) = self.saved.pop() {
            for (_, name) in self.added.drain(s.added..) {
                self.added_by_name.remove(&name.to_ascii_lowercase());
            }
            self.removed_names.truncate(s.removed);
            self.next_attr = s.next_attr;
            self.given_ids.retain(|_, id| *id < s.next_attr);
            if self
                .usn_ids
                .is_some_and(|(a, b)| a >= s.next_attr || b >= s.next_attr)
            {
                self.usn_ids = None;
            }
            self.next_id = s.next_id;
            self.usn = s.usn;
        }
        Ok(())
    }

    fn op<R>(&mut self, f: impl FnOnce(&mut Self) -> DbResult<R>) -> DbResult<R> {
        if let Some(reason) = &self.poisoned {
            return Err(DbError::UnwillingToPerform(format!(
                "the transaction cannot continue after a failed bulk operation: {reason}"
            )));
        }
        if self.deferred.is_some() {
            // Bulk mode: the whole transaction is all-or-nothing.
            let r = f(self);
            if let Err(e) = &r {
                self.poisoned = Some(e.to_string());
            }
            return r;
        }
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

    /// Makes every change durable, then publishes the new USN and attribute registrations.
    /// Returns the highest USN of the transaction.
    pub fn commit(mut self) -> DbResult<u64> {
        if let Some(reason) = self.poisoned.take() {
            return Err(DbError::UnwillingToPerform(format!(
                "not committed: an operation of this bulk transaction failed: {reason}"
            )));
        }
        self.flush_deferred()?;
        if self.next_id != self.start_next.1 {
            self.kv
                .put(T_META, meta::NEXT_ID, &self.next_id.to_be_bytes())?;
        }
        if self.next_attr != self.start_next.0 {
            self.kv
                .put(T_META, meta::NEXT_ATTR, &self.next_attr.to_be_bytes())?;
        }
        if self.usn != self.start_usn {
            self.kv.put(T_META, meta::USN, &self.usn.to_be_bytes())?;
        }
        let DbWrite {
            db,
            kv,
            added,
            removed_names,
            usn,
            ..
        } = self;
        kv.commit()?;
        if !added.is_empty() {
            let mut g = db.registry.write();
            let mut r = (**g).clone();
            for lower in &removed_names {
                r.remove_name(lower);
            }
            for (id, name) in &added {
                r.insert(*id, name);
            }
            *g = Arc::new(r);
        }
        db.highest_usn.fetch_max(usn, Ordering::AcqRel);
        Ok(usn)
    }

    /// Throws every change away.
    pub fn abort(self) {
        self.kv.abort();
    }

    // ----- attribute registry ---------------------------------------------------------

    fn find_attr(&self, lower: &str) -> Option<u32> {
        if let Some(id) = self.added_by_name.get(lower) {
            return Some(*id);
        }
        if self.removed_names.iter().any(|n| n == lower) {
            return None;
        }
        read::resolve_attr(&self.kv, &self.reg, lower)
    }

    /// The id of an attribute, registering it if it was never stored.
    fn attr_id(&mut self, name: &str) -> DbResult<u32> {
        if let Some(id) = self.given_ids.get(name) {
            return Ok(*id);
        }
        check_attr_name(name)?;
        let lower = name.to_ascii_lowercase();
        if let Some(id) = self.find_attr(&lower) {
            self.given_ids.insert(name.to_string(), id);
            return Ok(id);
        }
        let id = self.next_attr;
        self.next_attr = id
            .checked_add(1)
            .ok_or_else(|| DbError::UnwillingToPerform("attribute ids exhausted".into()))?;
        self.kv
            .put(T_META, &registry::name_key(&lower), &id.to_be_bytes())?;
        self.kv
            .put(T_META, &registry::id_key(id), name.as_bytes())?;
        self.added.push((id, name.to_string()));
        self.added_by_name.insert(lower, id);
        self.given_ids.insert(name.to_string(), id);
        Ok(id)
    }

    /// Gives a stored attribute a new name (a schema attribute's lDAPDisplayName changed):
    /// the records and index keys hold its id, so only the registry changes.
    pub fn rename_attribute(&mut self, old: &str, new: &str) -> DbResult<()> {
        check_attr_name(new)?;
        let old_lower = old.to_ascii_lowercase();
        let new_lower = new.to_ascii_lowercase();
        let Some(id) = self.find_attr(&old_lower) else {
            return Ok(());
        };
        if old_lower != new_lower && self.find_attr(&new_lower).is_some() {
            return Err(DbError::UnwillingToPerform(format!(
                "attribute name {new} is already in use"
            )));
        }
        self.kv.delete(T_META, &registry::name_key(&old_lower))?;
        self.kv
            .put(T_META, &registry::name_key(&new_lower), &id.to_be_bytes())?;
        self.kv.put(T_META, &registry::id_key(id), new.as_bytes())?;
        self.added_by_name.remove(&old_lower);
        self.added_by_name.insert(new_lower, id);
        self.given_ids.retain(|n, _| !n.eq_ignore_ascii_case(old));
        self.removed_names.push(old_lower);
        self.added.push((id, new.to_string()));
        if let Some(slot) = self.flags_cache.get_mut(id as usize) {
            *slot = None;
        }
        Ok(())
    }

    fn attr_lower_name(&self, id: u32) -> Option<String> {
        if let Some((_, n)) = self.added.iter().rev().find(|(i, _)| *i == id) {
            return Some(n.to_ascii_lowercase());
        }
        read::attr_name(&self.kv, &self.reg, id).map(|n| n.to_ascii_lowercase())
    }

    fn flags(&mut self, id: u32) -> IndexFlags {
        if let Some(Some(f)) = self.flags_cache.get(id as usize) {
            return *f;
        }
        let f = self
            .attr_lower_name(id)
            .map(|n| self.cfg.index_of_lower(&n))
            .unwrap_or(IndexFlags::NONE);
        let idx = id as usize;
        if self.flags_cache.len() <= idx {
            self.flags_cache.resize(idx + 1, None);
        }
        if let Some(slot) = self.flags_cache.get_mut(idx) {
            *slot = Some(f);
        }
        f
    }

    fn syntax(&mut self, name: &str) -> Syntax {
        if let Some(s) = self.given_syntax.get(name) {
            return *s;
        }
        let s = self.cfg.schema.syntax_of(name);
        self.given_syntax.insert(name.to_string(), s);
        s
    }

    fn is_descriptor_attr(&self, name: &str) -> bool {
        self.cfg
            .descriptor_attribute
            .as_ref()
            .is_some_and(|d| d.eq_ignore_ascii_case(name))
    }

    /// The descriptor stored under `id` ([`crate::descriptors`]).
    pub fn descriptor(&self, id: u64) -> DbResult<Option<&[u8]>> {
        crate::descriptors::get(&self.kv, id)
    }

    /// Forgets the descriptor remembered as stored (descriptors are about to be removed).
    pub(crate) fn forget_last_descriptor(&mut self) {
        self.last_descriptor = None;
    }

    /// The id of a descriptor, stored now if it was not.
    pub fn intern_descriptor(&mut self, value: &[u8]) -> DbResult<u64> {
        crate::descriptors::intern(&mut self.kv, value)
    }

    fn is_usn_attr(&self, name: &str) -> bool {
        self.cfg
            .usn_attributes
            .as_ref()
            .is_some_and(|(c, m)| c.eq_ignore_ascii_case(name) || m.eq_ignore_ascii_case(name))
    }

    /// Normalizes values; two values with the same normalized form are an error.
    fn normalize(&mut self, attr: &str, values: Vec<Vec<u8>>) -> DbResult<Vec<OwnedValue>> {
        let values = if self.is_descriptor_attr(attr) {
            // Stored once in the descriptors table; the record holds the id.
            let mut ids = Vec::with_capacity(values.len());
            for v in values {
                let id = match &self.last_descriptor {
                    Some((last, id)) if *last == v => *id,
                    _ => {
                        let id = crate::descriptors::intern(&mut self.kv, &v)?;
                        self.last_descriptor = Some((v, id));
                        id
                    }
                };
                ids.push(id.to_be_bytes().to_vec());
            }
            ids
        } else {
            values
        };
        let syn = self.syntax(attr);
        let mut out: Vec<OwnedValue> = Vec::with_capacity(values.len());
        let mut seen = Seen::default();
        for raw in values {
            // DN values repeat a lot (objectCategory, member) and cost a parse each.
            let cached = if syn == Syntax::Dn {
                self.dn_norms.get(&raw).cloned()
            } else {
                None
            };
            let norm = match cached {
                Some(n) => n,
                None => {
                    let n = syn
                        .normalize(&raw)
                        .map_err(|e| DbError::InvalidAttributeSyntax(format!("{attr}: {e}")))?;
                    let n = (n.as_ref() != raw.as_slice()).then(|| n.into_owned());
                    if syn == Syntax::Dn {
                        if self.dn_norms.len() >= 4096 {
                            self.dn_norms.clear();
                        }
                        self.dn_norms.insert(raw.clone(), n.clone());
                    }
                    n
                }
            };
            let v = OwnedValue { raw, norm };
            if seen.contains(&out, v.norm()) {
                return Err(DbError::AttributeOrValueExists(format!(
                    "{attr}: value {:?} given twice",
                    String::from_utf8_lossy(&v.raw)
                )));
            }
            seen.added(v.norm());
            out.push(v);
        }
        Ok(out)
    }

    /// Refuses a record that would hold more values than
    /// [`DbConfig::max_entry_values`] (links not counted), unless it holds no more than
    /// `before` (a change that shrinks an old oversized record is let through).
    fn check_value_count(&self, rec: &OwnedRecord, before: usize) -> DbResult<()> {
        let max = self.cfg.max_entry_values;
        let n = values::count(rec);
        if max != 0 && n > max && n > before {
            return Err(DbError::AdminLimitExceeded(format!(
                "an entry may hold at most {max} values outside its links; this change \
                 would leave {n}"
            )));
        }
        Ok(())
    }

    /// Counts `n` more link values written by the current operation, refusing the
    /// operation once they pass [`DbConfig::max_link_changes`].
    fn count_links(&self, total: &mut usize, n: usize) -> DbResult<()> {
        *total += n;
        let max = self.cfg.max_link_changes;
        if max != 0 && *total > max {
            return Err(DbError::AdminLimitExceeded(format!(
                "at most {max} linked values may be written in one operation"
            )));
        }
        Ok(())
    }

    fn next_usn(&mut self) -> u64 {
        self.usn += 1;
        self.usn
    }

    fn stamp(&self, prev: Stamp, usn: u64) -> Stamp {
        Stamp {
            version: prev.version + 1,
            local_usn: usn,
            orig_usn: usn,
            orig_time: self.now,
            orig_invocation: 0,
        }
    }

    fn set_usn_attr(
        &mut self,
        rec: &mut OwnedRecord,
        which: usize,
        usn: u64,
    ) -> DbResult<Option<u32>> {
        let ids = match self.usn_ids {
            Some(ids) => ids,
            None => {
                let Some((c, m)) = self.cfg.usn_attributes.as_ref() else {
                    return Ok(None);
                };
                let (c, m) = (c.clone(), m.clone());
                let ids = (self.attr_id(&c)?, self.attr_id(&m)?);
                self.usn_ids = Some(ids);
                ids
            }
        };
        let id = if which == 0 { ids.0 } else { ids.1 };
        let raw = usn.to_string().into_bytes();
        let norm = Syntax::Integer
            .normalize(&raw)
            .map_err(|e| DbError::InvalidAttributeSyntax(e.to_string()))?
            .into_owned();
        let stamp = self.stamp(rec.attr(id).map(|a| a.stamp).unwrap_or_default(), usn);
        let a = rec.attr_entry(id);
        a.values = vec![OwnedValue {
            raw,
            norm: Some(norm),
        }];
        a.stamp = stamp;
        Ok(Some(id))
    }

    // ----- index maintenance -------------------------------------------------------------

    fn attr_keys(&mut self, attr: u32, values: &[OwnedValue], id: u64, out: &mut Vec<Vec<u8>>) {
        let flags = self.flags(attr);
        if values.is_empty() {
            return;
        }
        if flags.contains(IndexFlags::PRESENCE) {
            out.push(presence_key(attr, id).to_vec());
        }
        if flags.has_value_keys() {
            let max = self.cfg.max_index_key_len;
            for v in values {
                out.push(value_key(attr, v.norm(), id, max));
            }
        }
    }

    fn check_unique(&mut self, attr: u32, v: &OwnedValue, id: u64) -> DbResult<()> {
        let max = self.cfg.max_index_key_len;
        let prefix = value_prefix(attr, v.norm(), max);
        let cut = prefix.ends_with(&TERM_CUT);
        let mut others = Vec::new();
        for kv in self.kv.prefix(T_INDEX, &prefix, Direction::Forward)? {
            let (k, _) = kv?;
            let k: &[u8] = &k;
            let other =
                read_id_suffix(k).ok_or_else(|| DbError::corrupt("index key without id"))?;
            if other != id {
                others.push(other);
            }
        }
        for other in others {
            let clash = if cut {
                match read::record(&self.kv, other)? {
                    Some(rec) => rec
                        .attr(attr)
                        .is_some_and(|a| a.values().any(|x| x.norm_eq(v.norm()))),
                    None => false,
                }
            } else {
                true
            };
            if clash {
                let name = self.attr_lower_name(attr).unwrap_or_default();
                return Err(DbError::ConstraintViolation(format!(
                    "{name}: value {:?} is already used by another entry",
                    String::from_utf8_lossy(&v.raw)
                )));
            }
        }
        Ok(())
    }

    /// Writes one new index key, or collects it in bulk mode (writing the collection out
    /// when it reaches its memory budget).
    fn insert_key(&mut self, k: &[u8]) -> DbResult<()> {
        match &mut self.deferred {
            None => Ok(self.kv.put(T_INDEX, k, &[])?),
            Some(sorter) => {
                sorter.push(k);
                if sorter.is_full() {
                    self.flush_deferred()?;
                    self.defer_indexes();
                }
                Ok(())
            }
        }
    }

    pub(crate) fn unique_attrs(&mut self) -> Vec<u32> {
        (0..self.next_attr)
            .filter(|a| self.flags(*a).contains(IndexFlags::UNIQUE))
            .collect()
    }

    /// Applies the index difference of the given attributes between two versions of a
    /// record (`None` = the record does not exist on that side).
    fn update_indexes(
        &mut self,
        id: u64,
        old: Option<&OwnedRecord>,
        new: Option<&OwnedRecord>,
        attrs: &BTreeSet<u32>,
    ) -> DbResult<()> {
        let max = self.cfg.max_index_key_len;
        let mut key = Vec::with_capacity(64);
        for &a in attrs {
            let flags = self.flags(a);
            if flags == IndexFlags::NONE {
                continue;
            }
            let old_vals = old
                .and_then(|r| r.attr(a))
                .map(|x| x.values.as_slice())
                .unwrap_or(&[]);
            let new_vals = new
                .and_then(|r| r.attr(a))
                .map(|x| x.values.as_slice())
                .unwrap_or(&[]);
            if old_vals.is_empty() {
                // Pure insert (every add): no difference to compute.
                if flags.contains(IndexFlags::UNIQUE) && self.deferred.is_none() {
                    for v in new_vals {
                        self.check_unique(a, v, id)?;
                    }
                }
                if flags.contains(IndexFlags::PRESENCE) && !new_vals.is_empty() {
                    self.insert_key(&presence_key(a, id))?;
                }
                if flags.has_value_keys() {
                    for v in new_vals {
                        value_key_into(&mut key, a, v.norm(), id, max);
                        self.insert_key(&key)?;
                    }
                }
                continue;
            }
            let mut old_keys = Vec::new();
            let mut new_keys = Vec::new();
            self.attr_keys(a, old_vals, id, &mut old_keys);
            self.attr_keys(a, new_vals, id, &mut new_keys);
            for k in values::keys_not_in(&old_keys, &new_keys) {
                self.kv.delete(T_INDEX, k)?;
            }
            if flags.contains(IndexFlags::UNIQUE) && self.deferred.is_none() {
                let mut seen = Seen::default();
                for v in new_vals {
                    if !seen.contains(old_vals, v.norm()) {
                        self.check_unique(a, v, id)?;
                    }
                }
            }
            for k in values::keys_not_in(&new_keys, &old_keys) {
                self.insert_key(k)?;
            }
        }
        Ok(())
    }

    fn load(&self, id: u64) -> DbResult<OwnedRecord> {
        Ok(self.load_stored(id)?.0)
    }

    /// A record and the size it is stored with (its room to grow included), which a
    /// rewrite keeps when the new form fits.
    fn load_stored(&self, id: u64) -> DbResult<(OwnedRecord, usize)> {
        let bytes = self
            .kv
            .get(T_ENTRIES, &id_key(id))?
            .ok_or_else(|| DbError::corrupt(format!("record {id} missing")))?;
        Ok((RecordView::parse(bytes)?.to_owned_record()?, bytes.len()))
    }

    fn resolve(&self, dn: &Dn) -> DbResult<u64> {
        match read::lookup(&self.kv, dn, self.cfg.max_index_key_len)? {
            Some(id) if id != 0 => Ok(id),
            _ => Err(DbError::NoSuchObject(dn.to_string())),
        }
    }

    // ----- reads inside the transaction ----------------------------------------------------

    /// The id of an entry as this transaction sees it.
    pub fn lookup(&self, dn: &Dn) -> DbResult<Option<u64>> {
        read::lookup(&self.kv, dn, self.cfg.max_index_key_len)
    }

    /// The id of the child of `parent` named `rdn`, as this transaction sees it.
    pub fn child_id(&self, parent: u64, rdn: &crate::Rdn) -> DbResult<Option<u64>> {
        read::child_lookup(&self.kv, parent, rdn, self.cfg.max_index_key_len)
    }

    /// A record as this transaction sees it.
    pub fn record(&self, id: u64) -> DbResult<Option<RecordView<'_>>> {
        read::record(&self.kv, id)
    }

    /// Records in this transaction the fingerprints of a configuration the caller will
    /// hand to [`Db::replace_config`] after the commit (a schema extension), so that the
    /// stored fingerprints change atomically with the data that needs them and the
    /// replacement writes nothing more.
    pub fn store_config_fingerprints(&mut self, cfg: &crate::DbConfig) -> DbResult<()> {
        let mut cfg = cfg.clone();
        cfg.max_index_key_len = self.cfg.max_index_key_len;
        crate::db::with_usn_syntaxes(&mut cfg);
        self.kv
            .put(T_META, meta::INDEX_CONFIG, &cfg.index_fingerprint())?;
        self.kv
            .put(T_META, meta::SCHEMA_CONFIG, &cfg.schema.fingerprint())?;
        Ok(())
    }

    /// Whether a record has children, as this transaction sees it.
    pub fn has_children(&self, id: u64) -> DbResult<bool> {
        read::has_children(&self.kv, id)
    }

    /// The children of a record as this transaction sees them.
    pub fn children(&self, id: u64) -> DbResult<Vec<u64>> {
        read::children(&self.kv, id)
    }

    /// The DN of a record as this transaction sees it.
    pub fn dn_string(&self, id: u64) -> DbResult<String> {
        read::dn_string(&self.kv, id)
    }

    /// The parent id of a record (0 for a naming context head) as this transaction sees
    /// it.
    pub fn parent_of(&self, id: u64) -> DbResult<Option<u64>> {
        Ok(read::node(&self.kv, id)?.map(|(p, _)| p))
    }

    /// The naming contexts (ids and DN texts) as this transaction sees them.
    pub fn naming_contexts(&self) -> DbResult<Vec<(u64, String)>> {
        let mut out = Vec::new();
        for id in read::children(&self.kv, 0)? {
            if let Some((_, name)) = read::node(&self.kv, id)? {
                out.push((id, name.to_string()));
            }
        }
        Ok(out)
    }

    /// The RDN text of a record as this transaction sees it (one key read).
    pub fn rdn_string(&self, id: u64) -> DbResult<Option<String>> {
        Ok(read::node(&self.kv, id)?.map(|(_, rdn)| rdn.to_string()))
    }

    /// The name of an attribute id (as first registered).
    pub fn attribute_name(&self, id: u32) -> Option<String> {
        if let Some((_, n)) = self.added.iter().rev().find(|(i, _)| *i == id) {
            return Some(n.clone());
        }
        read::attr_name(&self.kv, &self.reg, id).map(|n| n.to_string())
    }

    /// The id of an attribute name, if it was ever stored.
    pub fn stored_attr_id(&self, name: &str) -> Option<u32> {
        self.find_attr(&name.to_ascii_lowercase())
    }

    /// The records holding `value` in `attr`, as this transaction sees them: read from
    /// the attribute's equality index (candidates of a truncated key re-checked), or
    /// `None` when the attribute has no equality index. For uniqueness rules of the layer
    /// above (AD's sAMAccountName, userPrincipalName).
    pub fn find_eq(&self, attr: &str, value: &[u8]) -> DbResult<Option<Vec<u64>>> {
        let lower = attr.to_ascii_lowercase();
        read::find_eq(&self.kv, &self.cfg, self.find_attr(&lower), &lower, value)
    }

    /// Whether any record holds `value` in `attr`, as this transaction sees them, without
    /// listing them; `None` when the attribute has no equality index.
    pub fn any_eq(&self, attr: &str, value: &[u8]) -> DbResult<Option<bool>> {
        let lower = attr.to_ascii_lowercase();
        read::any_eq(&self.kv, &self.cfg, self.find_attr(&lower), &lower, value)
    }

    // ----- add ---------------------------------------------------------------------------------

    /// Adds an entry below an existing parent; returns its new id.
    pub fn add(&mut self, entry: Entry) -> DbResult<u64> {
        self.op(|w| w.add_inner(entry, AddKind::Child))
    }

    /// Adds the head of a naming context: an entry whose parent need not exist (if it
    /// does, this is an ordinary add). Entries below it are then added with
    /// [`DbWrite::add`].
    pub fn add_root(&mut self, entry: Entry) -> DbResult<u64> {
        self.op(|w| w.add_inner(entry, AddKind::Root))
    }

    /// Adds the head of a naming context even when its parent entry exists: AD's
    /// configuration partition is named below the domain's DN yet is a partition of its
    /// own, which a subtree search of the domain does not enter.
    pub fn add_naming_context(&mut self, entry: Entry) -> DbResult<u64> {
        self.op(|w| w.add_inner(entry, AddKind::NamingContext))
    }

    fn add_inner(&mut self, entry: Entry, kind: AddKind) -> DbResult<u64> {
        let Entry { dn, attrs } = entry;
        let Some(rdn) = dn.rdn().cloned() else {
            return Err(DbError::UnwillingToPerform(
                "cannot add an entry with an empty DN".into(),
            ));
        };
        let max = self.cfg.max_index_key_len;
        let parent_dn = dn.parent().unwrap_or_else(Dn::root);
        let parent_id = match kind {
            AddKind::NamingContext => Some(0),
            _ => read::lookup(&self.kv, &parent_dn, max)?,
        };
        let (parent, name_text, name_norm) = match parent_id {
            Some(0) => (0, dn.to_string(), dn.norm().to_string()),
            Some(p) => (p, rdn.to_string(), rdn.norm().to_string()),
            None if kind == AddKind::Root => (0, dn.to_string(), dn.norm().to_string()),
            None => {
                return Err(DbError::NoSuchObject(format!(
                    "parent {parent_dn} of {dn} does not exist"
                )))
            }
        };
        if parent == 0 && name_norm.len() > read::MAX_NAMING_CONTEXT_LEN {
            return Err(DbError::UnwillingToPerform(format!(
                "a naming context's name may not exceed {} bytes",
                read::MAX_NAMING_CONTEXT_LEN
            )));
        }
        let tkey = tree_key(parent, &name_norm, max);
        // The name may be taken under this parent, or reachable another way (a naming
        // context of the same DN above or below an existing one).
        if self.kv.get(T_TREE, &tkey)?.is_some() || read::lookup(&self.kv, &dn, max)?.is_some() {
            return Err(DbError::EntryAlreadyExists(dn.to_string()));
        }
        let usn = self.next_usn();
        let (rec, new_links) = self.build_record(parent, name_text, &rdn, attrs, usn, true)?;
        let id = self.store_new_record(&rec)?;
        self.kv.put(T_TREE, &tkey, &id_key(id))?;
        for (la, targets) in new_links {
            for t in targets {
                self.add_link(id, la, t, usn)?;
            }
        }
        Ok(id)
    }

    /// Gives a new record the next id and stores it: record, node and index keys (its name
    /// under its parent and its links are the caller's).
    fn store_new_record(&mut self, rec: &OwnedRecord) -> DbResult<u64> {
        let id = self.next_id;
        self.next_id += 1;
        let all: BTreeSet<u32> = rec.attrs.iter().map(|a| a.id).collect();
        self.update_indexes(id, None, Some(rec), &all)?;
        self.kv.append(
            T_ENTRIES,
            &id_key(id),
            &record::with_room(rec.encode(), None),
        )?;
        self.kv
            .append(T_NODES, &id_key(id), &node_value(rec.parent, &rec.rdn))?;
        Ok(id)
    }

    /// The record of a new entry from its attributes, stamped with `usn`, and its forward
    /// links (resolved from DN values when `resolve_links`, refused otherwise).
    fn build_record(
        &mut self,
        parent: u64,
        name_text: String,
        rdn: &Rdn,
        attrs: Vec<(String, Vec<Vec<u8>>)>,
        usn: u64,
        resolve_links: bool,
    ) -> DbResult<(OwnedRecord, NewLinks)> {
        let mut rec = OwnedRecord {
            parent,
            rdn: name_text,
            attrs: Vec::new(),
        };
        let mut new_links = Vec::new();
        let mut link_values = 0;
        for (name, values) in attrs {
            if self.is_usn_attr(&name) {
                continue;
            }
            // The name is checked when it is first met (by `attr_id`), before anything
            // else can be said of its values.
            if values.is_empty() {
                check_attr_name(&name)?;
                return Err(DbError::ConstraintViolation(format!(
                    "{name}: an attribute needs at least one value"
                )));
            }
            match self.link_role(&name) {
                Some(LinkRole::Forward { .. }) if !resolve_links => {
                    return Err(DbError::UnwillingToPerform(format!(
                        "{name}: the links of an entry placed in bulk are given as ids"
                    )))
                }
                Some(LinkRole::Forward { back, .. }) => {
                    self.count_links(&mut link_values, values.len())?;
                    let targets = self.link_targets(&name, &values)?;
                    new_links.push((self.link_attr(&name, back.as_deref())?, targets));
                    continue;
                }
                Some(LinkRole::Back { forward }) => return Err(back_link_refused(&name, &forward)),
                None => {}
            }
            let id = self.attr_id(&name)?;
            let vals = self.normalize(&name, values)?;
            let a = rec.attr_entry(id);
            if a.values.is_empty() {
                a.values = vals;
                continue;
            }
            // The same attribute named twice (in another case, or by OID).
            let mut seen = Seen::default();
            for v in vals {
                if seen.contains(&a.values, v.norm()) {
                    return Err(DbError::AttributeOrValueExists(format!(
                        "{name}: value given twice"
                    )));
                }
                seen.added(v.norm());
                a.values.push(v);
            }
        }
        self.ensure_rdn_values(&mut rec, rdn)?;
        for a in &mut rec.attrs {
            a.stamp = Stamp {
                version: 1,
                local_usn: usn,
                orig_usn: usn,
                orig_time: self.now,
                orig_invocation: 0,
            };
        }
        self.set_usn_attr(&mut rec, 0, usn)?;
        self.set_usn_attr(&mut rec, 1, usn)?;
        self.check_value_count(&rec, 0)?;
        Ok((rec, new_links))
    }

    /// Makes sure every AVA of the RDN is among the entry's values (adding it if not).
    fn ensure_rdn_values(&mut self, rec: &mut OwnedRecord, rdn: &Rdn) -> DbResult<BTreeSet<u32>> {
        let mut touched = BTreeSet::new();
        for ava in rdn.avas() {
            let vals = self.normalize(&ava.attr, vec![ava.value.as_bytes().to_vec()])?;
            let id = self.attr_id(&ava.attr)?;
            let a = rec.attr_entry(id);
            for v in vals {
                if !a.values.iter().any(|o| o.norm() == v.norm()) {
                    a.values.push(v);
                    touched.insert(id);
                }
            }
        }
        Ok(touched)
    }

    // ----- modify ------------------------------------------------------------------------------

    /// Applies modifications to one entry with LDAP semantics: adding a present value or
    /// deleting an absent one is an error.
    pub fn modify(&mut self, dn: &Dn, mods: &[Modification]) -> DbResult<()> {
        self.flush_deferred()?;
        self.op(|w| w.modify_inner(dn, mods, false))
    }

    /// Like [`DbWrite::modify`], but adding a present value or deleting an absent one is
    /// quietly skipped (the permissive-modify control).
    pub fn modify_permissive(&mut self, dn: &Dn, mods: &[Modification]) -> DbResult<()> {
        self.flush_deferred()?;
        self.op(|w| w.modify_inner(dn, mods, true))
    }

    /// [`DbWrite::modify`] of the entry with record id `id`: for passes over many
    /// entries (descriptor propagation) that know ids, not DNs.
    pub fn modify_by_id(&mut self, id: u64, mods: &[Modification]) -> DbResult<()> {
        self.flush_deferred()?;
        let dn = Dn::parse(&read::dn_string(&self.kv, id)?)
            .map_err(|e| DbError::corrupt(format!("stored DN of {id}: {e}")))?;
        self.op(|w| w.modify_id(id, &dn, mods, false))
    }

    fn modify_inner(&mut self, dn: &Dn, mods: &[Modification], permissive: bool) -> DbResult<()> {
        let id = self.resolve(dn)?;
        self.modify_id(id, dn, mods, permissive)
    }

    fn modify_id(
        &mut self,
        id: u64,
        dn: &Dn,
        mods: &[Modification],
        permissive: bool,
    ) -> DbResult<()> {
        let (old, stored) = self.load_stored(id)?;
        let mut new = old.clone();
        let mut touched = BTreeSet::new();
        let mut links_changed = false;
        let mut link_values = 0;
        for m in mods {
            check_attr_name(&m.attr)?;
            match self.link_role(&m.attr) {
                Some(LinkRole::Forward { back, .. }) => {
                    self.count_links(&mut link_values, m.values.len())?;
                    links_changed |= self.modify_links(id, m, back.as_deref(), permissive)?;
                    continue;
                }
                Some(LinkRole::Back { forward }) => {
                    return Err(back_link_refused(&m.attr, &forward))
                }
                None => {}
            }
            if self.is_usn_attr(&m.attr) {
                return Err(DbError::UnwillingToPerform(format!(
                    "{} is maintained by the database",
                    m.attr
                )));
            }
            let vals = match m.op {
                ModifyOp::Increment => Vec::new(),
                _ => self.normalize(&m.attr, m.values.clone())?,
            };
            let aid = match m.op {
                ModifyOp::Delete => match self.find_attr(&m.attr.to_ascii_lowercase()) {
                    Some(a) => a,
                    None if permissive => continue,
                    None => {
                        return Err(DbError::NoSuchAttribute(format!("{}: not present", m.attr)))
                    }
                },
                _ => self.attr_id(&m.attr)?,
            };
            touched.insert(aid);
            let a = new.attr_entry(aid);
            match m.op {
                ModifyOp::Add => {
                    if vals.is_empty() {
                        return Err(DbError::ConstraintViolation(format!(
                            "{}: add needs at least one value",
                            m.attr
                        )));
                    }
                    let mut seen = Seen::default();
                    for v in vals {
                        if seen.contains(&a.values, v.norm()) {
                            if permissive {
                                continue;
                            }
                            return Err(DbError::AttributeOrValueExists(format!(
                                "{}: value {:?} exists",
                                m.attr,
                                String::from_utf8_lossy(&v.raw)
                            )));
                        }
                        seen.added(v.norm());
                        a.values.push(v);
                    }
                }
                ModifyOp::Delete => {
                    if vals.is_empty() {
                        if a.values.is_empty() && !permissive {
                            return Err(DbError::NoSuchAttribute(format!(
                                "{}: not present",
                                m.attr
                            )));
                        }
                        a.values.clear();
                    } else {
                        let missing = values::remove_all(&mut a.values, &vals);
                        if let (Some(first), false) = (missing.first(), permissive) {
                            let raw = vals
                                .iter()
                                .find(|v| v.norm() == first.as_slice())
                                .map_or(first.as_slice(), |v| v.raw.as_slice());
                            return Err(DbError::NoSuchAttribute(format!(
                                "{}: value {:?} not present",
                                m.attr,
                                String::from_utf8_lossy(raw)
                            )));
                        }
                    }
                }
                ModifyOp::Replace => a.values = vals,
                ModifyOp::Increment => {
                    let delta = m
                        .values
                        .first()
                        .and_then(|v| std::str::from_utf8(v).ok())
                        .and_then(|s| s.trim().parse::<i64>().ok())
                        .ok_or_else(|| {
                            DbError::InvalidAttributeSyntax(format!(
                                "{}: increment needs one integer",
                                m.attr
                            ))
                        })?;
                    let [cur] = a.values.as_slice() else {
                        return Err(DbError::ConstraintViolation(format!(
                            "{}: increment needs exactly one value present",
                            m.attr
                        )));
                    };
                    let now = std::str::from_utf8(&cur.raw)
                        .ok()
                        .and_then(|s| s.trim().parse::<i64>().ok())
                        .ok_or_else(|| {
                            DbError::ConstraintViolation(format!(
                                "{}: the present value is not an integer",
                                m.attr
                            ))
                        })?;
                    let next = now.checked_add(delta).ok_or_else(|| {
                        DbError::ConstraintViolation(format!("{}: increment overflows", m.attr))
                    })?;
                    let attr = m.attr.clone();
                    let vals = self.normalize(&attr, vec![next.to_string().into_bytes()])?;
                    new.attr_entry(aid).values = vals;
                }
            }
        }
        // The RDN's values must survive the change.
        if let Some(rdn) = dn.rdn() {
            for ava in rdn.avas() {
                let Some(aid) = self.find_attr(&ava.attr.to_ascii_lowercase()) else {
                    continue;
                };
                let norm = self.normalize(&ava.attr, vec![ava.value.as_bytes().to_vec()])?;
                let still = new.attr(aid).is_some_and(|a| {
                    norm.iter()
                        .all(|n| a.values.iter().any(|v| v.norm() == n.norm()))
                });
                if !still {
                    return Err(DbError::NotAllowedOnRdn(format!(
                        "{}: the RDN value cannot be removed",
                        ava.attr
                    )));
                }
            }
        }
        new.drop_empty();
        self.finish_change(id, &old, stored, new, touched, links_changed)
    }

    /// One modification of a forward link attribute; returns whether a link changed.
    /// Link stamps take the USN the entry's change is about to take.
    fn modify_links(
        &mut self,
        id: u64,
        m: &Modification,
        back: Option<&str>,
        permissive: bool,
    ) -> DbResult<bool> {
        let la = self.link_attr(&m.attr, back)?;
        let usn = self.usn + 1;
        let mut changed = false;
        match m.op {
            ModifyOp::Add => {
                if m.values.is_empty() {
                    return Err(DbError::ConstraintViolation(format!(
                        "{}: add needs at least one value",
                        m.attr
                    )));
                }
                for t in self.link_targets(&m.attr, &m.values)? {
                    if self.add_link(id, la, t, usn)? {
                        changed = true;
                    } else if !permissive {
                        // AD's answer for a link that exists (ERROR_MEMBER_IN_ALIAS).
                        return Err(DbError::EntryAlreadyExists(format!(
                            "00000562: UpdErr: DSID-031A11C4, problem 6005 (ENTRY_EXISTS), \
                             data 0: {}: {} is already a value",
                            m.attr,
                            read::dn_string(&self.kv, t)?
                        )));
                    }
                }
            }
            ModifyOp::Delete if m.values.is_empty() => {
                let present = self.linked(LINK_FORWARD, id, la.forward)?;
                if present.is_empty() && !permissive {
                    return Err(DbError::NoSuchAttribute(format!("{}: not present", m.attr)));
                }
                for t in present {
                    changed |= self.remove_link(id, la, t)?;
                }
            }
            ModifyOp::Delete => {
                // AD's answer for a link that is not there (ERROR_MEMBER_NOT_IN_ALIAS),
                // whether its target exists or not.
                let absent = |what: String| {
                    DbError::UnwillingToPerform(format!(
                        "00000561: SvcErr: DSID-031A1021, problem 5003 (WILL_NOT_PERFORM), \
                         data 0: {}: {what} is not a value",
                        m.attr
                    ))
                };
                let targets = match self.link_targets(&m.attr, &m.values) {
                    Err(DbError::NoSuchObject(_)) if !permissive => {
                        return Err(absent("a DN that names no object".into()))
                    }
                    other => other?,
                };
                for t in targets {
                    if self.remove_link(id, la, t)? {
                        changed = true;
                    } else if !permissive {
                        return Err(absent(read::dn_string(&self.kv, t)?));
                    }
                }
            }
            ModifyOp::Replace => {
                let want = self.link_targets(&m.attr, &m.values)?;
                let present = self.linked(LINK_FORWARD, id, la.forward)?;
                let wanted: std::collections::HashSet<u64> = want.iter().copied().collect();
                for t in &present {
                    if !wanted.contains(t) {
                        changed |= self.remove_link(id, la, *t)?;
                    }
                }
                for t in want {
                    if present.binary_search(&t).is_err() {
                        changed |= self.add_link(id, la, t, usn)?;
                    }
                }
            }
            ModifyOp::Increment => {
                return Err(DbError::ConstraintViolation(format!(
                    "{}: a DN cannot be incremented",
                    m.attr
                )))
            }
        }
        Ok(changed)
    }

    /// Stamps the attributes that really changed, sets the changed-USN, updates indexes
    /// and stores the record. A change that changes nothing writes nothing, unless
    /// `links_changed` says a linked attribute of the entry changed (which moves its
    /// changed-USN too).
    fn finish_change(
        &mut self,
        id: u64,
        old: &OwnedRecord,
        stored: usize,
        mut new: OwnedRecord,
        touched: BTreeSet<u32>,
        links_changed: bool,
    ) -> DbResult<()> {
        let changed: BTreeSet<u32> = touched
            .into_iter()
            .filter(|a| old.attr(*a).map(|x| &x.values) != new.attr(*a).map(|x| &x.values))
            .collect();
        if changed.is_empty() && !links_changed && old.parent == new.parent && old.rdn == new.rdn {
            return Ok(());
        }
        self.check_value_count(&new, values::count(old))?;
        let usn = self.next_usn();
        for &a in &changed {
            let prev = old.attr(a).map(|x| x.stamp).unwrap_or_default();
            let stamp = self.stamp(prev, usn);
            if let Some(x) = new.attr_mut(a) {
                x.stamp = stamp;
            }
        }
        let mut all = changed;
        if let Some(a) = self.set_usn_attr(&mut new, 1, usn)? {
            all.insert(a);
        }
        self.update_indexes(id, Some(old), Some(&new), &all)?;
        self.put_record(id, &new, stored)
    }

    /// Rewrites a record stored with `stored` bytes, keeping that size when the new form
    /// still fits it.
    pub(crate) fn put_record(&mut self, id: u64, rec: &OwnedRecord, stored: usize) -> DbResult<()> {
        let bytes = record::with_room(rec.encode(), Some(stored));
        Ok(self.kv.put(T_ENTRIES, &id_key(id), &bytes)?)
    }

    // ----- delete ------------------------------------------------------------------------------

    /// Deletes an entry; with `subtree`, everything below it too (otherwise an entry with
    /// children is refused). Returns the number of entries removed.
    pub fn delete(&mut self, dn: &Dn, subtree: bool) -> DbResult<usize> {
        self.flush_deferred()?;
        self.op(|w| w.delete_inner(dn, subtree))
    }

    fn delete_inner(&mut self, dn: &Dn, subtree: bool) -> DbResult<usize> {
        let id = self.resolve(dn)?;
        let mut order = vec![id];
        if read::has_children(&self.kv, id)? {
            if !subtree {
                return Err(DbError::NotAllowedOnNonLeaf(dn.to_string()));
            }
            // Pre-order: parents before children; removed in reverse.
            let mut i = 0;
            while let Some(&cur) = order.get(i) {
                order.extend(read::children(&self.kv, cur)?);
                i += 1;
            }
        }
        self.next_usn();
        let mut sources = BTreeSet::new();
        for &victim in order.iter().rev() {
            sources.extend(self.remove_all_links(victim, false)?);
            self.remove_record(victim)?;
        }
        let gone: std::collections::HashSet<u64> = order.iter().copied().collect();
        for src in sources {
            if !gone.contains(&src) {
                self.touch(src)?;
            }
        }
        Ok(order.len())
    }

    /// Moves an entry's changed-USN because one of its linked values went away with
    /// another entry.
    pub fn touch(&mut self, id: u64) -> DbResult<()> {
        let (old, stored) = self.load_stored(id)?;
        let new = old.clone();
        self.finish_change(id, &old, stored, new, BTreeSet::new(), true)
    }

    fn remove_record(&mut self, id: u64) -> DbResult<()> {
        let rec = self.load(id)?;
        let all: BTreeSet<u32> = rec.attrs.iter().map(|a| a.id).collect();
        self.update_indexes(id, Some(&rec), None, &all)?;
        let name = read::name_norm(rec.parent, &rec.rdn)?;
        self.kv.delete(
            T_TREE,
            &tree_key(rec.parent, &name, self.cfg.max_index_key_len),
        )?;
        self.kv.delete(T_NODES, &id_key(id))?;
        self.kv.delete(T_ENTRIES, &id_key(id))?;
        Ok(())
    }

    // ----- rename / move -----------------------------------------------------------------------

    /// Renames an entry and/or moves it below another parent. Entries below it move with it
    /// without being rewritten: their DNs are computed from the hierarchy.
    pub fn rename(
        &mut self,
        dn: &Dn,
        new_rdn: &Rdn,
        delete_old_rdn: bool,
        new_parent: Option<&Dn>,
    ) -> DbResult<()> {
        self.flush_deferred()?;
        self.op(|w| w.rename_inner(dn, new_rdn, delete_old_rdn, new_parent))
    }

    fn rename_inner(
        &mut self,
        dn: &Dn,
        new_rdn: &Rdn,
        delete_old_rdn: bool,
        new_parent: Option<&Dn>,
    ) -> DbResult<()> {
        let max = self.cfg.max_index_key_len;
        let id = self.resolve(dn)?;
        let (old, stored) = self.load_stored(id)?;
        let old_rdn = dn
            .rdn()
            .cloned()
            .ok_or_else(|| DbError::UnwillingToPerform("cannot rename the root".into()))?;
        let parent = match new_parent {
            None => old.parent,
            Some(p) => {
                let pid = read::lookup(&self.kv, p, max)?.ok_or_else(|| {
                    DbError::NoSuchObject(format!("new parent {p} does not exist"))
                })?;
                if pid == id || read::is_ancestor(&self.kv, id, pid)? {
                    return Err(DbError::UnwillingToPerform(format!(
                        "cannot move {dn} below itself"
                    )));
                }
                if pid == 0 || old.parent == 0 {
                    return Err(DbError::UnwillingToPerform(
                        "naming contexts cannot be moved".into(),
                    ));
                }
                pid
            }
        };
        let (name_text, name_norm) = if parent == 0 {
            let new_dn = dn.with_rdn(new_rdn.clone());
            (new_dn.to_string(), new_dn.norm().to_string())
        } else {
            (new_rdn.to_string(), new_rdn.norm().to_string())
        };
        let new_key = tree_key(parent, &name_norm, max);
        let target = match new_parent {
            Some(p) => p.child(new_rdn.clone()),
            None => dn.with_rdn(new_rdn.clone()),
        };
        if target.len() > crate::dn::MAX_DN_RDNS {
            return Err(DbError::UnwillingToPerform(format!(
                "the new name would have more than {} RDNs",
                crate::dn::MAX_DN_RDNS
            )));
        }
        let taken_here = match self.kv.get(T_TREE, &new_key)? {
            Some(other) => read_u64_be(other) != Some(id),
            None => false,
        };
        // The name may also be a naming context named below the new parent.
        let taken =
            taken_here || read::lookup(&self.kv, &target, max)?.is_some_and(|other| other != id);
        if taken {
            return Err(DbError::EntryAlreadyExists(target.to_string()));
        }
        let old_norm = read::name_norm(old.parent, &old.rdn)?;
        self.kv
            .delete(T_TREE, &tree_key(old.parent, &old_norm, max))?;
        self.kv.put(T_TREE, &new_key, &id_key(id))?;
        self.kv
            .put(T_NODES, &id_key(id), &node_value(parent, &name_text))?;
        let mut new = old.clone();
        new.parent = parent;
        new.rdn = name_text;
        let mut touched = self.ensure_rdn_values(&mut new, new_rdn)?;
        if delete_old_rdn {
            self.drop_old_rdn_values(&mut new, &old_rdn, new_rdn, &mut touched)?;
        }
        self.finish_change(id, &old, stored, new, touched, false)
    }

    /// Removes the values of `old_rdn` that `new_rdn` does not keep.
    fn drop_old_rdn_values(
        &mut self,
        new: &mut OwnedRecord,
        old_rdn: &Rdn,
        new_rdn: &Rdn,
        touched: &mut BTreeSet<u32>,
    ) -> DbResult<()> {
        for ava in old_rdn.avas() {
            let norm = self.normalize(&ava.attr, vec![ava.value.as_bytes().to_vec()])?;
            let in_new = new_rdn.avas().iter().any(|n| {
                n.attr.eq_ignore_ascii_case(&ava.attr)
                    && self
                        .normalize(&n.attr, vec![n.value.as_bytes().to_vec()])
                        .is_ok_and(|x| {
                            x.first().map(|y| y.norm().to_vec())
                                == norm.first().map(|y| y.norm().to_vec())
                        })
            });
            if in_new {
                continue;
            }
            let Some(aid) = self.find_attr(&ava.attr.to_ascii_lowercase()) else {
                continue;
            };
            if let Some(a) = new.attr_mut(aid) {
                a.values
                    .retain(|v| !norm.iter().any(|n| n.norm() == v.norm()));
                touched.insert(aid);
            }
        }
        new.drop_empty();
        Ok(())
    }

    /// Gives a naming context a new DN, whatever number of its RDNs change (a domain
    /// rename: `DC=samdom,DC=example,DC=com` becomes `DC=lab,DC=example,DC=org`). Entries
    /// below it follow without being rewritten, as in any rename; the head's own RDN
    /// values change as with `delete_old_rdn`. Naming contexts named below it (AD's
    /// configuration partition) are separate naming contexts and are renamed separately.
    pub fn rename_naming_context(&mut self, dn: &Dn, new_dn: &Dn) -> DbResult<()> {
        self.flush_deferred()?;
        self.op(|w| w.rename_nc_inner(dn, new_dn))
    }

    fn rename_nc_inner(&mut self, dn: &Dn, new_dn: &Dn) -> DbResult<()> {
        let max = self.cfg.max_index_key_len;
        let id = self.resolve(dn)?;
        let (old, stored) = self.load_stored(id)?;
        if old.parent != 0 {
            return Err(DbError::UnwillingToPerform(format!(
                "{dn} is not a naming context"
            )));
        }
        let (Some(old_rdn), Some(new_rdn)) = (dn.rdn().cloned(), new_dn.rdn().cloned()) else {
            return Err(DbError::UnwillingToPerform(
                "the root cannot be renamed".into(),
            ));
        };
        let new_key = tree_key(0, new_dn.norm(), max);
        if let Some(other) = self.kv.get(T_TREE, &new_key)? {
            if read_u64_be(other) != Some(id) {
                return Err(DbError::EntryAlreadyExists(new_dn.to_string()));
            }
        }
        let old_norm = read::name_norm(0, &old.rdn)?;
        self.kv.delete(T_TREE, &tree_key(0, &old_norm, max))?;
        self.kv.put(T_TREE, &new_key, &id_key(id))?;
        let text = new_dn.to_string();
        self.kv.put(T_NODES, &id_key(id), &node_value(0, &text))?;
        let mut new = old.clone();
        new.rdn = text;
        let mut touched = self.ensure_rdn_values(&mut new, &new_rdn)?;
        self.drop_old_rdn_values(&mut new, &old_rdn, &new_rdn, &mut touched)?;
        self.finish_change(id, &old, stored, new, touched, false)
    }

    // ----- bulk loading ------------------------------------------------------------------------

    /// Switches the transaction to bulk mode: the index keys of adds are collected and
    /// written sorted at commit, which is much faster for large loads. In bulk mode
    /// operations are not individually rolled back: after a failed operation the
    /// transaction refuses further operations and its commit. Uniqueness is checked when
    /// the keys are written, for values short enough to be indexed whole (longer unique
    /// values are not checked in bulk mode). A modify, delete, rename or nested
    /// transaction writes the collected keys and ends bulk mode for the rest of the
    /// transaction.
    pub fn defer_indexes(&mut self) {
        if self.deferred.is_none() {
            self.deferred = Some(KeySorter::new(self.cfg.sort_budget));
        }
    }

    /// Takes the collected bulk-mode keys out without writing them (the chunked bulk
    /// loader carries them from one transaction to the next).
    pub(crate) fn take_deferred(&mut self) -> Option<KeySorter> {
        self.deferred.take()
    }

    /// Hands collected bulk-mode keys to this transaction (see `take_deferred`).
    pub(crate) fn set_deferred(&mut self, sorter: KeySorter) {
        self.deferred = Some(sorter);
    }

    /// Whether an operation of this bulk transaction failed.
    pub(crate) fn is_poisoned(&self) -> bool {
        self.poisoned.is_some()
    }

    fn flush_deferred(&mut self) -> DbResult<()> {
        if let Some(sorter) = self.deferred.take() {
            let unique = self.unique_attrs();
            if let Err(e) = sorter.finish().write_into(&mut self.kv, T_INDEX, &unique) {
                self.poisoned = Some(e.to_string());
                return Err(e);
            }
        }
        Ok(())
    }
}
