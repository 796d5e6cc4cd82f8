//! Validating many new entries for a bulk load (`kauri traffic populate --local`): every
//! entry goes through the same validation and completion as an LDAP add — names and values
//! against the schema, object classes completed, SIDs from the RID pool, unique account
//! names, UPNs and SPNs, link targets, group nesting, security descriptors, passwords —
//! and comes out [`Placed`]: complete, with its parent and link targets resolved to the
//! record ids the database will give them, for [`kauri_db::bulk::BulkLoader::add_placed`].
//!
//! An add reads the directory as it is plus the entries validated before it: what is
//! stored comes from a snapshot, what this load validated comes from memory (each entry's
//! name, parent, object classes, the other few attributes adds read of their neighbours,
//! and the values adds look entries up by). Nothing is written until the loader stores the
//! placed entries, in the same order, possibly on another thread. RIDs are taken from the
//! pool at the start, all at once. The load validates with caches of its own (descriptors,
//! prepared passwords): the descriptor ids it gives entries not stored yet mean nothing to
//! any other directory.

use std::cell::RefCell;
use std::collections::VecDeque;
use std::ops::RangeInclusive;
use std::sync::Arc;

use kauri_db::bulk::Placed;
use kauri_db::quick_hash::QuickMap;
use kauri_db::read::StoredValues;
use kauri_db::{DbConfig, DbRead, Dn, Entry, Syntax};
use kauri_kv::Backend;

use super::caller::Caller;
use super::classes::SchemaSnapshot;
use super::descriptors::SD_ATTR;
use super::error::{DirError, DirResult};
use super::store::AddStore;
use super::view::{id_of_dn_value, View};
use super::{no_such_object, Change, Directory, Request};
use crate::password::SecretKey;
use crate::schema::objects::has_class;
use crate::schema::Schema;

/// The attributes adds look entries up by, whose values a load keeps for the entries it
/// validated.
const FOUND_BY_VALUE: &[&str] = &[
    "sAMAccountName",
    "userPrincipalName",
    "servicePrincipalName",
    "objectSid",
];

/// The attributes adds read of other entries (a parent's classes, a member's group type,
/// a link target's deletion), kept for the entries of a load.
const KEPT: &[&str] = &[
    "objectClass",
    "isDeleted",
    "groupType",
    "sAMAccountName",
    "userAccountControl",
    "primaryGroupID",
    "objectSid",
    "objectCategory",
];

/// Normalized values and the entries of the load that hold them.
type Holders = QuickMap<Vec<u8>, Vec<u64>>;

/// Values of stored entries read during the load, by (entry, attribute).
type StoredAttrs = QuickMap<(u64, String), Vec<Vec<u8>>>;

/// Descriptor ids given to the descriptors of entries not stored yet: far above any the
/// database hands out.
const FIRST_PENDING_DESCRIPTOR: u64 = 1 << 62;

/// A bulk load's validation under way; see the module docs.
pub struct BulkAdd<B: Backend> {
    dir: Arc<Directory<B>>,
    req: Request,
    snap: Arc<SchemaSnapshot>,
    cfg: Arc<DbConfig>,
    batch: Batch,
}

/// What the load validated so far.
struct Batch {
    first_id: u64,
    next_id: u64,
    entries: Vec<Known>,
    by_dn: QuickMap<String, u64>,
    /// The same entries by their DN as written (DN values mostly repeat it exactly).
    by_text: QuickMap<Arc<str>, u64>,
    /// Per attribute of [`FOUND_BY_VALUE`]: its syntax, and normalized value → ids.
    found: Vec<(Syntax, Holders)>,
    /// Per attribute of [`FOUND_BY_VALUE`]: the values stored before the load.
    stored: Vec<Option<StoredValues>>,
    /// Attributes of stored entries read by adds (stored entries do not change during the
    /// load).
    stored_attrs: RefCell<StoredAttrs>,
    /// Whether each attribute name met is a forward link.
    forward_links: QuickMap<String, bool>,
    descriptors: Vec<Vec<u8>>,
    descriptor_ids: QuickMap<Vec<u8>, u64>,
    rids: VecDeque<RangeInclusive<u32>>,
    placed: Option<Placed>,
    /// Stored entries that are parents of entries of the load, by normalized DN.
    stored_parents: RefCell<QuickMap<String, Option<u64>>>,
    /// The naming contexts, by normalized DN: the only entries not found below their
    /// parent.
    naming_contexts: QuickMap<String, u64>,
}

/// An entry of the load, as other adds read it.
struct Known {
    dn: Arc<str>,
    parent: u64,
    kept: Vec<(usize, Vec<Vec<u8>>)>,
    descriptor: Option<u64>,
}

impl<B: Backend> Directory<B> {
    /// Starts validating entries for a bulk load, added as `caller`, taking `rids` RIDs
    /// now for the security principals among them (an entry that needs one more is
    /// refused). No other change may reach the database until the placed entries are
    /// stored: their record ids are counted from the next one now.
    pub fn bulk_add(&self, caller: Caller, rids: u32) -> DirResult<BulkAdd<B>> {
        let taken = if rids == 0 {
            Vec::new()
        } else {
            let mut w = self.db().write()?;
            let taken = self.take_rids(&mut w, rids)?;
            w.commit()?;
            taken
        };
        let (next_id, naming_contexts, stored) = {
            let r = self.db().read()?;
            let stored = FOUND_BY_VALUE
                .iter()
                .map(|a| r.stored_values(a))
                .collect::<Result<Vec<_>, _>>()?;
            let mut ncs = QuickMap::default();
            for (id, text) in r.naming_contexts()? {
                if let Ok(dn) = Dn::parse(&text) {
                    ncs.insert(dn.norm().to_string(), id);
                }
            }
            (r.next_record_id()?, ncs, stored)
        };
        let key = self
            .secret_key()
            .map(|k| SecretKey::from_bytes(k.to_bytes()));
        let dir = Directory::new(self.db().clone(), self.schema().schema.clone(), key)?;
        dir.set_crypt_schemes(self.crypt_schemes());
        let cfg = self.db().config();
        let found = FOUND_BY_VALUE
            .iter()
            .map(|a| (cfg.schema.syntax_of(a), QuickMap::default()))
            .collect();
        Ok(BulkAdd {
            snap: dir.working_schema(),
            dir: Arc::new(dir),
            req: Request {
                caller,
                // A local load is as private as the local socket.
                encrypted: true,
                // Not read: each entry is given to the add itself.
                change: Change::Add(Entry::new(Dn::root())),
            },
            cfg,
            batch: Batch {
                first_id: next_id,
                next_id,
                entries: Vec::new(),
                by_dn: QuickMap::default(),
                by_text: QuickMap::default(),
                found,
                descriptors: Vec::new(),
                descriptor_ids: QuickMap::default(),
                rids: taken.into(),
                placed: None,
                stored_parents: RefCell::new(QuickMap::default()),
                naming_contexts,
                stored,
                stored_attrs: RefCell::new(QuickMap::default()),
                forward_links: QuickMap::default(),
            },
        })
    }
}

impl<B: Backend> BulkAdd<B> {
    /// The directory the load validates with: hash the passwords of entries ahead with
    /// its [`Directory::prepare_passwords`] (on any thread) to keep that off the adds.
    pub fn directory(&self) -> Arc<Directory<B>> {
        self.dir.clone()
    }

    /// Validates and completes `entries` in order, each seeing the ones before it: per
    /// entry, the placed entry to store, or the reason the directory refused it (nothing
    /// of it counts). `Err` ends the load.
    pub fn add_batch(&mut self, entries: Vec<Entry>) -> DirResult<Vec<Result<Placed, DirError>>> {
        let mut out = Vec::with_capacity(entries.len());
        self.add_tagged(entries.into_iter().map(|e| ((), e)), &mut out)?;
        Ok(out.into_iter().map(|((), r)| r).collect())
    }

    /// [`BulkAdd::add_batch`] for entries that carry a tag of the caller's, appending each
    /// result with its tag to `out` (a buffer the caller may reuse from batch to batch).
    pub fn add_tagged<T>(
        &mut self,
        entries: impl IntoIterator<Item = (T, Entry)>,
        out: &mut Vec<(T, Result<Placed, DirError>)>,
    ) -> DirResult<()> {
        let snap = self.dir.db().read()?;
        for (tag, entry) in entries {
            let mut view = Overlay {
                snap: &snap,
                batch: &mut self.batch,
                cfg: &self.cfg,
            };
            let added = self.dir.add(&mut view, &self.req, &self.snap, entry);
            let placed = self.batch.placed.take();
            match (added, placed) {
                (Ok(_), Some(p)) => out.push((tag, Ok(p))),
                (Err(e), None) => out.push((tag, Err(e))),
                (Ok(_), None) => {
                    return Err(DirError::UnwillingToPerform(
                        "an entry of the bulk load was not placed".into(),
                    ))
                }
                // Placed, then refused: the ids of the entries after it would be off.
                (Err(e), Some(_)) => return Err(e),
            }
        }
        Ok(())
    }

    /// Makes room for `entries` more entries, so the load's maps do not grow step by step.
    pub fn reserve(&mut self, entries: usize) {
        let b = &mut self.batch;
        b.entries.reserve(entries);
        b.by_dn.reserve(entries);
        b.by_text.reserve(entries);
        for (_, map) in &mut b.found {
            map.reserve(entries);
        }
    }

    /// RIDs taken at the start and not handed out yet.
    pub fn rids_left(&self) -> u64 {
        self.batch
            .rids
            .iter()
            .map(|r| u64::from(r.end() - r.start()) + 1)
            .sum()
    }
}

/// The directory as an add of the load sees it: the snapshot, and the entries validated.
struct Overlay<'a, 'r, B: Backend> {
    snap: &'a DbRead<'r, B>,
    batch: &'a mut Batch,
    cfg: &'a DbConfig,
}

impl<B: Backend> Overlay<'_, '_, B> {
    fn known(&self, id: u64) -> Option<&Known> {
        let i = id.checked_sub(self.batch.first_id)?;
        self.batch.entries.get(usize::try_from(i).ok()?)
    }

    /// The id of the parent of `dn`, whose normalized form is `parent_norm`: an entry of the
    /// load, or a stored one (looked up once).
    fn parent_norm_id(&self, dn: &Dn, parent_norm: &str) -> DirResult<Option<u64>> {
        if let Some(id) = self.batch.by_dn.get(parent_norm) {
            return Ok(Some(*id));
        }
        if let Some(id) = self.batch.stored_parents.borrow().get(parent_norm) {
            return Ok(*id);
        }
        let id = match dn.parent() {
            Some(p) => self.snap.id_of(&p)?,
            None => None,
        };
        self.batch
            .stored_parents
            .borrow_mut()
            .insert(parent_norm.to_string(), id);
        Ok(id)
    }

    /// The normalized form of the parent of `dn` (`None` for a naming context head).
    fn parent_norm(dn: &Dn) -> Option<&str> {
        let rdn = dn.rdn()?;
        dn.norm().get(rdn.norm().len() + 1..)
    }

    /// An entry of the load named by a DN value written as its DN was (no parsing).
    fn by_text(&self, value: &[u8]) -> Option<u64> {
        let text = std::str::from_utf8(value).ok()?;
        self.batch.by_text.get(text).copied()
    }

    fn slot(attr: &str) -> Option<usize> {
        FOUND_BY_VALUE
            .iter()
            .position(|a| a.eq_ignore_ascii_case(attr))
    }

    fn not_kept(attr: &str) -> DirError {
        DirError::UnwillingToPerform(format!(
            "a bulk load does not read {attr} of the entries it has not stored yet"
        ))
    }

    fn descriptor_id(&mut self, bytes: &[u8]) -> u64 {
        if let Some(id) = self.batch.descriptor_ids.get(bytes) {
            return *id;
        }
        let id = FIRST_PENDING_DESCRIPTOR + self.batch.descriptors.len() as u64;
        self.batch.descriptors.push(bytes.to_vec());
        self.batch.descriptor_ids.insert(bytes.to_vec(), id);
        id
    }

    fn resolve(&self, attr: &str, values: &[Vec<u8>]) -> DirResult<Vec<u64>> {
        let mut ids = Vec::with_capacity(values.len());
        for v in values {
            if let Some(id) = self.by_text(v) {
                ids.push(id);
                continue;
            }
            let dn = std::str::from_utf8(v)
                .ok()
                .and_then(|t| Dn::parse(t).ok())
                .ok_or_else(|| {
                    DirError::InvalidDnSyntax(format!(
                        "{attr}: {} is not a DN",
                        String::from_utf8_lossy(v)
                    ))
                })?;
            ids.push(self.id_of(&dn)?.ok_or_else(|| no_such_object(&dn))?);
        }
        Ok(ids)
    }
}

impl<B: Backend> AddStore<B> for Overlay<'_, '_, B> {
    fn put_entry(&mut self, entry: Entry, naming_context: bool) -> DirResult<u64> {
        if naming_context
            || has_class(&entry, "attributeSchema")
            || has_class(&entry, "classSchema")
        {
            return Err(DirError::UnwillingToPerform(
                "naming contexts and schema objects are added one at a time, not by a bulk \
                 load"
                    .into(),
            ));
        }
        let Entry { dn, attrs } = entry;
        let parent = self.parent_of(&dn)?.ok_or_else(|| {
            no_such_object(&format_args!(
                "parent {}",
                dn.parent().unwrap_or_else(Dn::root)
            ))
        })?;
        let mut rest = Vec::with_capacity(attrs.len());
        let mut links = Vec::new();
        let mut kept = Vec::new();
        let mut descriptor = None;
        let mut found: Vec<(usize, Vec<u8>)> = Vec::new();
        for (name, values) in attrs {
            let forward = match self.batch.forward_links.get(name.as_str()) {
                Some(f) => *f,
                None => {
                    let f = matches!(
                        self.cfg.link_of(&name),
                        Some(kauri_db::config::LinkRole::Forward { .. })
                    );
                    self.batch.forward_links.insert(name.clone(), f);
                    f
                }
            };
            if forward {
                let ids = self.resolve(&name, &values)?;
                links.push((name, ids));
                continue;
            }
            if let Some(k) = KEPT.iter().position(|a| a.eq_ignore_ascii_case(&name)) {
                kept.push((k, values.clone()));
            }
            if let Some(slot) = Self::slot(&name) {
                if let Some((syntax, _)) = self.batch.found.get(slot) {
                    for v in &values {
                        let norm = syntax.normalize(v).map_err(|e| {
                            DirError::InvalidAttributeSyntax(format!("{name}: {e}"))
                        })?;
                        found.push((slot, norm.into_owned()));
                    }
                }
            }
            if name.eq_ignore_ascii_case(SD_ATTR) {
                if let Some(v) = values.first() {
                    descriptor = Some(self.descriptor_id(v));
                }
            }
            rest.push((name, values));
        }
        let id = self.batch.next_id;
        self.batch.next_id += 1;
        for (slot, norm) in found {
            if let Some((_, map)) = self.batch.found.get_mut(slot) {
                map.entry(norm).or_default().push(id);
            }
        }
        let norm = dn.norm().to_string();
        let text: Arc<str> = dn.to_string().into();
        self.batch.by_text.insert(text.clone(), id);
        self.batch.entries.push(Known {
            dn: text,
            parent,
            kept,
            descriptor,
        });
        self.batch.by_dn.insert(norm, id);
        self.batch.placed = Some(Placed {
            entry: Entry { dn, attrs: rest },
            parent,
            links,
            id,
        });
        Ok(id)
    }

    fn new_rid(&mut self, _dir: &Directory<B>) -> DirResult<u32> {
        let exhausted = || {
            DirError::UnwillingToPerform(
                "the RIDs this bulk load took at its start are used up".into(),
            )
        };
        let range = self.batch.rids.front_mut().ok_or_else(exhausted)?;
        let rid = *range.start();
        if rid == *range.end() {
            self.batch.rids.pop_front();
        } else {
            *range = rid + 1..=*range.end();
        }
        Ok(rid)
    }

    fn schema_extended(&mut self, _dir: &Directory<B>, _schema: Schema) -> DirResult<()> {
        Err(DirError::UnwillingToPerform(
            "schema objects are added one at a time, not by a bulk load".into(),
        ))
    }
}

impl<B: Backend> View for Overlay<'_, '_, B> {
    fn id_of(&self, dn: &Dn) -> DirResult<Option<u64>> {
        if let Some(id) = self.batch.by_dn.get(dn.norm()) {
            return Ok(Some(*id));
        }
        if let Some(id) = self.batch.naming_contexts.get(dn.norm()) {
            return Ok(Some(*id));
        }
        let (Some(rdn), Some(parent_norm)) = (dn.rdn(), Self::parent_norm(dn)) else {
            return self.snap.id_of(dn);
        };
        // Every child of an entry of the load is one of its entries too.
        if self.batch.by_dn.contains_key(parent_norm) {
            return Ok(None);
        }
        match self.parent_norm_id(dn, parent_norm)? {
            Some(pid) => self.snap.child_of(pid, rdn),
            None => Ok(None),
        }
    }

    fn id_of_value(&self, value: &[u8]) -> DirResult<Option<u64>> {
        match self.by_text(value) {
            Some(id) => Ok(Some(id)),
            None => id_of_dn_value(self, value),
        }
    }

    fn parent_of(&self, dn: &Dn) -> DirResult<Option<u64>> {
        match Self::parent_norm(dn) {
            Some(parent_norm) => self.parent_norm_id(dn, parent_norm),
            None => Ok(None),
        }
    }

    fn values(&self, id: u64, attr: &str) -> DirResult<Vec<Vec<u8>>> {
        let Some(k) = self.known(id) else {
            // Links of stored entries change as the load's links to them are stored.
            if self.cfg.link_of(attr).is_some() {
                return self.snap.values(id, attr);
            }
            let key = (id, attr.to_string());
            if let Some(v) = self.batch.stored_attrs.borrow().get(&key) {
                return Ok(v.clone());
            }
            let v = self.snap.values(id, attr)?;
            self.batch.stored_attrs.borrow_mut().insert(key, v.clone());
            return Ok(v);
        };
        let slot = KEPT
            .iter()
            .position(|a| a.eq_ignore_ascii_case(attr))
            .ok_or_else(|| Self::not_kept(attr))?;
        Ok(k.kept
            .iter()
            .find(|(s, _)| *s == slot)
            .map(|(_, v)| v.clone())
            .unwrap_or_default())
    }

    fn dn_of(&self, id: u64) -> DirResult<String> {
        match self.known(id) {
            Some(k) => Ok(k.dn.to_string()),
            None => self.snap.dn_of(id),
        }
    }

    fn links(&self, id: u64, attr: &str) -> DirResult<Vec<u64>> {
        match self.known(id) {
            Some(_) => Err(Self::not_kept(attr)),
            None => self.snap.links(id, attr),
        }
    }

    fn find(&self, attr: &str, value: &[u8]) -> DirResult<Vec<u64>> {
        let slot = Self::slot(attr);
        let stored = match slot.and_then(|s| self.batch.stored.get(s)) {
            Some(Some(values)) => values.may_hold(value),
            _ => true,
        };
        let mut out = if stored {
            self.snap.find(attr, value)?
        } else {
            Vec::new()
        };
        if let Some((syntax, map)) = slot.and_then(|s| self.batch.found.get(s)) {
            if let Ok(norm) = syntax.normalize(value) {
                if let Some(ids) = map.get(norm.as_ref()) {
                    out.extend(ids);
                }
            }
        }
        Ok(out)
    }

    fn children(&self, id: u64) -> DirResult<Vec<u64>> {
        match self.known(id) {
            Some(_) => Err(Self::not_kept("the children")),
            None => View::children(self.snap, id),
        }
    }

    fn descriptor_id_of(&self, id: u64) -> DirResult<Option<u64>> {
        match self.known(id) {
            Some(k) => Ok(k.descriptor),
            None => self.snap.descriptor_id_of(id),
        }
    }

    fn descriptor_bytes(&self, sd_id: u64) -> DirResult<Option<Vec<u8>>> {
        match sd_id.checked_sub(FIRST_PENDING_DESCRIPTOR) {
            Some(i) => Ok(usize::try_from(i)
                .ok()
                .and_then(|i| self.batch.descriptors.get(i))
                .cloned()),
            None => self.snap.descriptor_bytes(sd_id),
        }
    }

    fn parent_id(&self, id: u64) -> DirResult<Option<u64>> {
        match self.known(id) {
            Some(k) => Ok(Some(k.parent)),
            None => self.snap.parent_id(id),
        }
    }
}
