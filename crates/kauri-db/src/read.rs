//! Reading: DN ↔ id resolution through the hierarchy, DNs built from the `nodes` table,
//! records read in place, and the read snapshot type [`DbRead`].
//!
//! The free functions here take any key-value view, so the write transaction (which reads
//! its own uncommitted state) and read snapshots share one implementation.

use std::collections::HashMap;
use std::sync::Arc;

use kauri_kv::{Backend, Direction, ReadTxn};

use crate::config::IndexFlags;
use crate::config::{DbConfig, LinkRole};
use crate::db::{Db, T_ENTRIES, T_INDEX, T_LINKS, T_META, T_NODES, T_TREE};
use crate::dn::{Dn, Rdn};
use crate::entry::Entry;
use crate::error::{DbError, DbResult};
use crate::eval::{AttrNames, AttrResolver, LinkMatch};
use crate::keys::{
    id_key, link_entry_prefix, link_key, link_prefix, meta, presence_key, read_id_suffix,
    read_u64_be, split_link_key, tree_key, value_prefix, LINK_BACK, LINK_FORWARD, TERM_CUT,
};
use crate::record::RecordView;
use crate::registry::{self, Registry};

/// The longest normalized name a naming context may have, in bytes. Names below the root
/// are tried as naming contexts suffix by suffix; stopping at this length keeps resolving a
/// name linear in its length however many RDNs it has.
pub const MAX_NAMING_CONTEXT_LEN: usize = 4096;

/// Resolves a DN to its record id. Naming contexts (entries added with
/// [`crate::DbWrite::add_root`]) sit below the root keyed by their whole normalized DN, so
/// the walk tries the suffixes of `dn` from the shortest (up to
/// [`MAX_NAMING_CONTEXT_LEN`]), and from each naming context it finds follows one `tree`
/// lookup per remaining RDN. The root (empty) DN resolves to 0.
pub fn lookup<R: ReadTxn>(kv: &R, dn: &Dn, max_key: usize) -> DbResult<Option<u64>> {
    let rdns = dn.rdns();
    let n = rdns.len();
    if n == 0 {
        return Ok(Some(0));
    }
    // The normalized DN is the RDNs' normalized forms joined by ',': the suffix of the
    // last k RDNs is a tail of it.
    let norm = dn.norm();
    let mut start = norm.len();
    for k in 1..=n {
        let Some(r) = rdns.get(n - k) else { break };
        start = start.saturating_sub(r.norm().len() + usize::from(k > 1));
        let Some(suffix) = norm.get(start..) else {
            break;
        };
        if suffix.len() > MAX_NAMING_CONTEXT_LEN {
            break;
        }
        let Some(v) = kv.get(T_TREE, &tree_key(0, suffix, max_key))? else {
            continue;
        };
        let mut id =
            Some(read_u64_be(v).ok_or_else(|| DbError::corrupt("tree value is not an id"))?);
        for rdn in rdns.iter().take(n - k).rev() {
            let Some(parent) = id else { break };
            id = match kv.get(T_TREE, &tree_key(parent, rdn.norm(), max_key))? {
                Some(v) => Some(
                    read_u64_be(v).ok_or_else(|| DbError::corrupt("tree value is not an id"))?,
                ),
                None => None,
            };
        }
        // A shorter naming context that does not hold the entry may sit above a longer
        // one that does (e.g. `DC=com` and `DC=example,DC=com`): keep looking.
        if id.is_some() {
            return Ok(id);
        }
    }
    Ok(None)
}

/// The id of the child of `parent` named `rdn`: one key read, the step [`lookup`] takes
/// per level, for callers that hold the parent's id already.
pub fn child_lookup<R: ReadTxn>(
    kv: &R,
    parent: u64,
    rdn: &Rdn,
    max_key: usize,
) -> DbResult<Option<u64>> {
    match kv.get(T_TREE, &tree_key(parent, rdn.norm(), max_key))? {
        Some(v) => {
            Ok(Some(read_u64_be(v).ok_or_else(|| {
                DbError::corrupt("tree value is not an id")
            })?))
        }
        None => Ok(None),
    }
}

/// The normalized name a record is keyed by in `tree`: its RDN, or for a naming context
/// (parent 0) its whole DN.
pub fn name_norm(parent: u64, text: &str) -> DbResult<String> {
    let norm = if parent == 0 {
        Dn::parse(text).map(|d| d.norm().to_string())
    } else {
        Rdn::parse(text).map(|r| r.norm().to_string())
    };
    norm.map_err(|e| DbError::corrupt(format!("stored name {text:?} does not parse: {e}")))
}

/// The parent id and RDN text of a record, from the `nodes` table.
pub fn node<R: ReadTxn>(kv: &R, id: u64) -> DbResult<Option<(u64, &str)>> {
    match kv.get(T_NODES, &id_key(id))? {
        None => Ok(None),
        Some(v) => {
            let parent = read_u64_be(v).ok_or_else(|| DbError::corrupt("node value too short"))?;
            let rdn = v
                .get(8..)
                .and_then(|b| std::str::from_utf8(b).ok())
                .ok_or_else(|| DbError::corrupt("node RDN is not UTF-8"))?;
            Ok(Some((parent, rdn)))
        }
    }
}

/// Encodes a `nodes` value.
pub fn node_value(parent: u64, rdn: &str) -> Vec<u8> {
    let mut v = Vec::with_capacity(8 + rdn.len());
    v.extend_from_slice(&parent.to_be_bytes());
    v.extend_from_slice(rdn.as_bytes());
    v
}

/// The DN text of a record, built by walking up the `nodes` table.
pub fn dn_string<R: ReadTxn>(kv: &R, id: u64) -> DbResult<String> {
    let mut parts: Vec<&str> = Vec::new();
    let mut cur = id;
    let mut guard = 0;
    while cur != 0 {
        let (parent, rdn) =
            node(kv, cur)?.ok_or_else(|| DbError::corrupt(format!("record {cur} has no node")))?;
        parts.push(rdn);
        cur = parent;
        guard += 1;
        if guard > 10_000 {
            return Err(DbError::corrupt("hierarchy loop"));
        }
    }
    Ok(parts.join(","))
}

/// Whether `ancestor` is a strict ancestor of `id` (0, the root, is everyone's ancestor).
pub fn is_ancestor<R: ReadTxn>(kv: &R, ancestor: u64, id: u64) -> DbResult<bool> {
    if id == 0 {
        return Ok(false);
    }
    if ancestor == 0 {
        return Ok(true);
    }
    let mut cur = id;
    let mut guard = 0;
    while cur != 0 {
        let Some((parent, _)) = node(kv, cur)? else {
            return Ok(false);
        };
        if parent == ancestor {
            return Ok(true);
        }
        cur = parent;
        guard += 1;
        if guard > 10_000 {
            return Err(DbError::corrupt("hierarchy loop"));
        }
    }
    Ok(false)
}

/// The ids of the children of a record, in RDN-key order.
pub fn children<R: ReadTxn>(kv: &R, parent: u64) -> DbResult<Vec<u64>> {
    let mut out = Vec::new();
    for_each_child(kv, parent, |id| {
        out.push(id);
        true
    })?;
    Ok(out)
}

/// Calls `f` with each child id until it returns false.
pub fn for_each_child<R: ReadTxn>(
    kv: &R,
    parent: u64,
    mut f: impl FnMut(u64) -> bool,
) -> DbResult<()> {
    for kv in kv.prefix(T_TREE, &parent.to_be_bytes(), Direction::Forward)? {
        let (_, v) = kv?;
        let id = read_u64_be(v).ok_or_else(|| DbError::corrupt("tree value is not an id"))?;
        if !f(id) {
            break;
        }
    }
    Ok(())
}

/// Whether a record has at least one child.
pub fn has_children<R: ReadTxn>(kv: &R, id: u64) -> DbResult<bool> {
    let mut any = false;
    for_each_child(kv, id, |_| {
        any = true;
        false
    })?;
    Ok(any)
}

/// A record read in place.
pub fn record<R: ReadTxn>(kv: &R, id: u64) -> DbResult<Option<RecordView<'_>>> {
    match kv.get(T_ENTRIES, &id_key(id))? {
        None => Ok(None),
        Some(bytes) => Ok(Some(RecordView::parse(bytes)?)),
    }
}

/// The attribute id of a lowercased name: from the in-memory registry, or from `meta` when
/// the registration is newer than the in-memory copy.
pub fn resolve_attr<R: ReadTxn>(kv: &R, reg: &Registry, lower: &str) -> Option<u32> {
    if let Some(id) = reg.id_of_lower(lower) {
        return Some(id);
    }
    let v = kv.get(T_META, &registry::name_key(lower)).ok()??;
    Some(u32::from_be_bytes(v.get(..4)?.try_into().ok()?))
}

/// The name of an attribute id, with the same fallback as [`resolve_attr`].
pub fn attr_name<R: ReadTxn>(kv: &R, reg: &Registry, id: u32) -> Option<Arc<str>> {
    if let Some(n) = reg.name_of(id) {
        return Some(n.clone());
    }
    let v = kv.get(T_META, &registry::id_key(id)).ok()??;
    std::str::from_utf8(v).ok().map(Arc::from)
}

/// The ids one entry reaches through the links of one (forward) attribute in one
/// direction, in id order: the targets of its forward links (`member` of a group), or the
/// sources of the links that point at it (`memberOf` of a member).
pub fn link_ids<R: ReadTxn>(kv: &R, kind: u8, from: u64, attr: u32) -> DbResult<Vec<u64>> {
    let mut out = Vec::new();
    for item in kv.prefix(T_LINKS, &link_prefix(kind, from, attr), Direction::Forward)? {
        let (k, _) = item?;
        let k: &[u8] = &k;
        out.push(read_id_suffix(k).ok_or_else(|| DbError::corrupt("malformed link key"))?);
    }
    Ok(out)
}

/// Every link of one entry in one direction, as (forward attribute, other entry), in key
/// order (grouped by attribute).
pub fn entry_links<R: ReadTxn>(kv: &R, kind: u8, id: u64) -> DbResult<Vec<(u32, u64)>> {
    let mut out = Vec::new();
    for item in kv.prefix(T_LINKS, &link_entry_prefix(kind, id), Direction::Forward)? {
        let (k, _) = item?;
        let k: &[u8] = &k;
        let (_, _, attr, other) =
            split_link_key(k).ok_or_else(|| DbError::corrupt("malformed link key"))?;
        out.push((attr, other));
    }
    Ok(out)
}

/// The records holding `value` in attribute `lower` (id `attr`, `None` when never
/// stored), read from its equality index with truncated keys re-checked; `None` when the
/// attribute has no equality index.
pub fn find_eq<R: ReadTxn>(
    kv: &R,
    cfg: &DbConfig,
    attr: Option<u32>,
    lower: &str,
    value: &[u8],
) -> DbResult<Option<Vec<u64>>> {
    eq_ids(kv, cfg, attr, lower, value, usize::MAX)
}

/// Whether any record holds `value` in attribute `lower`, from its equality index without
/// listing the holders; `None` when the attribute has no equality index.
pub fn any_eq<R: ReadTxn>(
    kv: &R,
    cfg: &DbConfig,
    attr: Option<u32>,
    lower: &str,
    value: &[u8],
) -> DbResult<Option<bool>> {
    Ok(eq_ids(kv, cfg, attr, lower, value, 1)?.map(|ids| !ids.is_empty()))
}

/// Up to `limit` records holding `value` in attribute `lower` (see [`find_eq`]).
fn eq_ids<R: ReadTxn>(
    kv: &R,
    cfg: &DbConfig,
    attr: Option<u32>,
    lower: &str,
    value: &[u8],
    limit: usize,
) -> DbResult<Option<Vec<u64>>> {
    let flags = cfg.index_of_lower(lower);
    if !(flags.contains(IndexFlags::EQUALITY) || flags.contains(IndexFlags::UNIQUE)) {
        return Ok(None);
    }
    let Some(aid) = attr else {
        return Ok(Some(Vec::new()));
    };
    let Ok(norm) = cfg.schema.syntax_of_lower(lower).normalize(value) else {
        return Ok(Some(Vec::new()));
    };
    let prefix = value_prefix(aid, &norm, cfg.max_index_key_len);
    let cut = prefix.ends_with(&TERM_CUT);
    let mut out = Vec::new();
    for item in kv.prefix(T_INDEX, &prefix, Direction::Forward)? {
        if out.len() >= limit {
            break;
        }
        let (k, _) = item?;
        let k: &[u8] = &k;
        let id = read_id_suffix(k).ok_or_else(|| DbError::corrupt("index key without id"))?;
        // A truncated key only names a candidate: the record says whether it holds the value.
        let holds = !cut
            || matches!(record(kv, id), Ok(Some(rec)) if rec
                .attr(aid)
                .is_some_and(|a| a.values().any(|v| v.norm_eq(&norm))));
        if holds {
            out.push(id);
        }
    }
    Ok(Some(out))
}

/// Builds DN strings for many records of one search, remembering the DNs of parents so
/// that siblings share the walk up the tree.
#[derive(Debug, Default)]
pub struct DnCache {
    parents: HashMap<u64, String>,
}

impl DnCache {
    /// The DN text of `id`.
    pub fn dn<R: ReadTxn>(&mut self, kv: &R, id: u64) -> DbResult<String> {
        let (parent, rdn) =
            node(kv, id)?.ok_or_else(|| DbError::corrupt(format!("record {id} has no node")))?;
        if parent == 0 {
            return Ok(rdn.to_string());
        }
        if self.parents.len() > 100_000 {
            self.parents.clear();
        }
        let p = match self.parents.entry(parent) {
            std::collections::hash_map::Entry::Occupied(e) => e.into_mut(),
            std::collections::hash_map::Entry::Vacant(e) => e.insert(dn_string(kv, parent)?),
        };
        let mut s = String::with_capacity(rdn.len() + 1 + p.len());
        s.push_str(rdn);
        s.push(',');
        s.push_str(p);
        Ok(s)
    }
}

/// A read snapshot of the database.
pub struct DbRead<'d, B: Backend> {
    pub(crate) db: &'d Db<B>,
    pub(crate) cfg: Arc<DbConfig>,
    pub(crate) kv: B::Read,
    pub(crate) reg: Arc<Registry>,
}

impl<'d, B: Backend> DbRead<'d, B> {
    pub(crate) fn new(db: &'d Db<B>) -> DbResult<DbRead<'d, B>> {
        let reg = db.registry();
        let kv = db.kv.read()?;
        Ok(DbRead {
            db,
            cfg: db.config(),
            kv,
            reg,
        })
    }

    /// The key-value snapshot underneath.
    pub fn kv(&self) -> &B::Read {
        &self.kv
    }

    /// The database this snapshot reads.
    pub fn db(&self) -> &'d Db<B> {
        self.db
    }

    /// The id the next record added after this snapshot gets (ids are handed out in
    /// order, so a bulk load can name its entries before it stores them).
    pub fn next_record_id(&self) -> DbResult<u64> {
        self.kv
            .get(T_META, meta::NEXT_ID)?
            .and_then(read_u64_be)
            .ok_or_else(|| DbError::corrupt("meta next_id missing"))
    }

    /// The highest USN committed in this snapshot.
    pub fn usn(&self) -> DbResult<u64> {
        Ok(self
            .kv
            .get(T_META, meta::USN)?
            .and_then(read_u64_be)
            .unwrap_or(0))
    }

    /// The invocation ids this database had before its current one, with the highest USN
    /// each reached, oldest first (see [`Db::retire_invocation`]).
    pub fn retired_invocations(&self) -> DbResult<Vec<([u8; 16], u64)>> {
        let raw = self
            .kv
            .get(T_META, meta::RETIRED_INVOCATIONS)?
            .unwrap_or_default();
        if raw.len() % 24 != 0 {
            return Err(DbError::corrupt("retired invocation ids unreadable"));
        }
        Ok(raw
            .chunks_exact(24)
            .filter_map(|c| {
                let id: [u8; 16] = c[..16].try_into().ok()?;
                Some((id, read_u64_be(&c[16..])?))
            })
            .collect())
    }

    /// The id of an entry, `Some(0)` for the root DN.
    pub fn lookup(&self, dn: &Dn) -> DbResult<Option<u64>> {
        lookup(&self.kv, dn, self.cfg.max_index_key_len)
    }

    /// The id of the child of `parent` named `rdn`, in one key read.
    pub fn child_id(&self, parent: u64, rdn: &Rdn) -> DbResult<Option<u64>> {
        child_lookup(&self.kv, parent, rdn, self.cfg.max_index_key_len)
    }

    /// The DN text of a record.
    pub fn dn_string(&self, id: u64) -> DbResult<String> {
        dn_string(&self.kv, id)
    }

    /// The RDN text of a record (one key read, where its DN walks up every level).
    pub fn rdn_string(&self, id: u64) -> DbResult<Option<String>> {
        Ok(node(&self.kv, id)?.map(|(_, rdn)| rdn.to_string()))
    }

    /// A record read in place.
    pub fn record(&self, id: u64) -> DbResult<Option<RecordView<'_>>> {
        record(&self.kv, id)
    }

    /// How many records the database holds, counted without decoding any.
    pub fn record_count(&self) -> DbResult<u64> {
        crate::reindex::count_records(&self.kv)
    }

    /// The parent id of a record (0 for a naming context head).
    pub fn parent_of(&self, id: u64) -> DbResult<Option<u64>> {
        Ok(node(&self.kv, id)?.map(|(p, _)| p))
    }

    /// The naming contexts (entries added with `add_root`): their ids and DN texts.
    pub fn naming_contexts(&self) -> DbResult<Vec<(u64, String)>> {
        let mut out = Vec::new();
        for id in children(&self.kv, 0)? {
            if let Some((_, name)) = node(&self.kv, id)? {
                out.push((id, name.to_string()));
            }
        }
        Ok(out)
    }

    /// The ids of a record's children.
    pub fn children(&self, id: u64) -> DbResult<Vec<u64>> {
        children(&self.kv, id)
    }

    /// The id of an attribute name.
    pub fn attr_id(&self, name: &str) -> Option<u32> {
        resolve_attr(&self.kv, &self.reg, &name.to_ascii_lowercase())
    }

    /// The id of an attribute name, if it was ever stored (the write transaction's
    /// method of the same name, for code that reads through either).
    pub fn stored_attr_id(&self, name: &str) -> Option<u32> {
        self.attr_id(name)
    }

    /// The ids a linked attribute (by name) of `id` names, in id order; `None` when the
    /// attribute is not linked (the write transaction's method of the same name).
    pub fn linked_ids_by_name(&self, id: u64, attr: &str) -> DbResult<Option<Vec<u64>>> {
        match self.attr_id(attr) {
            Some(a) => self.linked_ids(id, a),
            None => Ok(self.cfg.link_of(attr).map(|_| Vec::new())),
        }
    }

    /// The name of an attribute id.
    pub fn attr_name(&self, id: u32) -> Option<Arc<str>> {
        attr_name(&self.kv, &self.reg, id)
    }

    /// The whole entry at `dn` as an owned [`Entry`] (attribute names as first registered,
    /// raw values), or `None`.
    pub fn entry(&self, dn: &Dn) -> DbResult<Option<Entry>> {
        match self.lookup(dn)? {
            Some(id) if id != 0 => self.entry_by_id(id),
            _ => Ok(None),
        }
    }

    /// The whole entry with this id.
    pub fn entry_by_id(&self, id: u64) -> DbResult<Option<Entry>> {
        let Some(rec) = self.record(id)? else {
            return Ok(None);
        };
        let dn = Dn::parse(&self.dn_string(id)?)
            .map_err(|e| DbError::corrupt(format!("stored DN does not parse: {e}")))?;
        Ok(Some(self.to_entry(id, dn, &rec)))
    }

    /// Materializes a record with its DN into an owned entry, linked attributes
    /// included (their values are the DNs of the entries linked to, as they are named now).
    pub fn to_entry(&self, id: u64, dn: Dn, rec: &RecordView<'_>) -> Entry {
        let mut e = Entry::new(dn);
        let name_of = |id: u32| {
            self.attr_name(id)
                .map(|n| n.to_string())
                .unwrap_or_else(|| format!("attr{id}"))
        };
        let descriptor_attr = self.descriptor_attr_id();
        for a in rec.attrs() {
            let values = if Some(a.id) == descriptor_attr {
                a.values()
                    .filter_map(|v| self.stored_descriptor(v.raw).map(<[u8]>::to_vec))
                    .collect()
            } else {
                a.values().map(|v| v.raw.to_vec()).collect()
            };
            e.attrs.push((name_of(a.id), values));
        }
        {
            let mut cache = DnCache::default();
            for (attr, ids) in self.link_values(id).unwrap_or_default() {
                let values = ids
                    .into_iter()
                    .filter_map(|t| cache.dn(&self.kv, t).ok())
                    .map(String::into_bytes)
                    .collect();
                e.attrs.push((name_of(attr), values));
            }
        }
        e
    }

    /// The id of the attribute whose values live in the descriptors table, if any.
    pub fn descriptor_attr_id(&self) -> Option<u32> {
        let name = self.cfg.descriptor_attribute.as_deref()?;
        self.attr_id(name)
    }

    /// The descriptor a record's stored value (its id) names.
    pub fn stored_descriptor(&self, stored: &[u8]) -> Option<&[u8]> {
        let id = crate::descriptors::id_of_stored(stored)?;
        crate::descriptors::get(&self.kv, id).ok().flatten()
    }

    /// The descriptor stored under `id`.
    pub fn descriptor(&self, id: u64) -> DbResult<Option<&[u8]>> {
        crate::descriptors::get(&self.kv, id)
    }

    /// The id under which an attribute's links are keyed (the forward attribute's), the
    /// direction to read, and whether the attribute is linked at all.
    pub fn link_key_attr(&self, attr: u32) -> Option<(u8, u32)> {
        let name = self.attr_name(attr)?.to_ascii_lowercase();
        match self.cfg.link_of_lower(&name)? {
            LinkRole::Forward { .. } => Some((LINK_FORWARD, attr)),
            LinkRole::Back { forward } => Some((LINK_BACK, self.attr_id(forward)?)),
        }
    }

    /// Whether `id`'s linked attribute `attr` names `target`, and whether it names
    /// anything at all, with two key reads however many values it has; `None` when `attr`
    /// is not linked.
    pub fn link_exists(&self, id: u64, attr: u32, target: u64) -> DbResult<Option<(bool, bool)>> {
        let Some((kind, key_attr)) = self.link_key_attr(attr) else {
            return Ok(None);
        };
        let found = self
            .kv
            .get(T_LINKS, &link_key(kind, id, key_attr, target))?
            .is_some();
        let any = found || self.has_links(kind, id, key_attr)?;
        Ok(Some((found, any)))
    }

    /// Whether `id` has any link keyed under `key_attr` in direction `kind`: one seek into
    /// the entry's own run.
    fn has_links(&self, kind: u8, id: u64, key_attr: u32) -> DbResult<bool> {
        Ok(self
            .kv
            .prefix(
                T_LINKS,
                &link_prefix(kind, id, key_attr),
                Direction::Forward,
            )?
            .next()
            .transpose()?
            .is_some())
    }

    /// The attribute id a link keyed under `forward` shows as, read in direction `kind`
    /// (the back link's id for back links; `None` when the pair has no back link).
    fn shown_attr(&self, kind: u8, forward: u32) -> Option<u32> {
        if kind == LINK_FORWARD {
            return Some(forward);
        }
        let name = self.attr_name(forward)?.to_ascii_lowercase();
        match self.cfg.link_of_lower(&name)? {
            LinkRole::Forward { back: Some(b), .. } => self.attr_id(b),
            _ => None,
        }
    }

    /// Every linked attribute of an entry with the ids it links to (forward links under
    /// their own attribute id, back links under the back attribute's id): two prefix reads
    /// whatever the number of attributes.
    pub fn link_values(&self, id: u64) -> DbResult<Vec<(u32, Vec<u64>)>> {
        let mut out: Vec<(u32, Vec<u64>)> = Vec::new();
        for kind in [LINK_FORWARD, LINK_BACK] {
            let mut runs: Vec<(u32, Vec<u64>)> = Vec::new();
            for (attr, other) in entry_links(&self.kv, kind, id)? {
                match runs.last_mut() {
                    Some((a, ids)) if *a == attr => ids.push(other),
                    _ => runs.push((attr, vec![other])),
                }
            }
            for (forward, ids) in runs {
                if let Some(shown) = self.shown_attr(kind, forward) {
                    out.push((shown, ids));
                }
            }
        }
        Ok(out)
    }

    /// The forward links of `id` through the one-way references, each reference attribute
    /// with the newest replication stamp among its values: what replication metadata shows
    /// for an attribute AD keeps as a plain DN value.
    pub fn reference_stamps(&self, id: u64) -> DbResult<Vec<(u32, crate::record::Stamp)>> {
        use std::ops::Bound;
        // One seek per linked attribute of the entry: a group's member links, however many,
        // are skipped, not walked.
        let end = link_entry_prefix(LINK_FORWARD, id.saturating_add(1));
        let mut from = link_entry_prefix(LINK_FORWARD, id).to_vec();
        let mut out: Vec<(u32, crate::record::Stamp)> = Vec::new();
        loop {
            let next = self
                .kv
                .range(
                    T_LINKS,
                    Bound::Included(from.as_slice()),
                    Bound::Excluded(end.as_slice()),
                    Direction::Forward,
                )?
                .next()
                .transpose()?;
            let Some((k, _)) = next else {
                break;
            };
            let (_, _, attr, _) =
                split_link_key(&k).ok_or_else(|| DbError::corrupt("malformed link key"))?;
            let reference = self.attr_name(attr).is_some_and(|n| {
                matches!(
                    self.cfg.link_of(&n),
                    Some(LinkRole::Forward {
                        reference: true,
                        ..
                    })
                )
            });
            if reference {
                let mut newest: Option<crate::record::Stamp> = None;
                for item in self.kv.prefix(
                    T_LINKS,
                    &link_prefix(LINK_FORWARD, id, attr),
                    Direction::Forward,
                )? {
                    let (_, v) = item?;
                    let stamp = crate::record::get_stamp(v, &mut 0)?;
                    if newest
                        .as_ref()
                        .is_none_or(|n| stamp.local_usn > n.local_usn)
                    {
                        newest = Some(stamp);
                    }
                }
                if let Some(stamp) = newest {
                    out.push((attr, stamp));
                }
            }
            match attr.checked_add(1) {
                Some(a) => from = link_prefix(LINK_FORWARD, id, a).to_vec(),
                None => break,
            }
        }
        Ok(out)
    }

    /// How many entries `id` links to through attribute `attr` (forward or back), counted
    /// on the link keys without building the list; `None` when `attr` is not linked.
    pub fn linked_count(&self, id: u64, attr: u32) -> DbResult<Option<u64>> {
        let Some((kind, key_attr)) = self.link_key_attr(attr) else {
            return Ok(None);
        };
        let mut n = 0;
        for item in self.kv.prefix(
            T_LINKS,
            &link_prefix(kind, id, key_attr),
            Direction::Forward,
        )? {
            item?;
            n += 1;
        }
        Ok(Some(n))
    }

    /// The records holding `value` in `attr`, from its equality index (`None` when the
    /// attribute has no equality index).
    pub fn find_eq(&self, attr: &str, value: &[u8]) -> DbResult<Option<Vec<u64>>> {
        let lower = attr.to_ascii_lowercase();
        find_eq(&self.kv, &self.cfg, self.attr_id(&lower), &lower, value)
    }

    /// The ids linked from `id` through attribute `attr` (forward or back), or `None`
    /// when `attr` is not a linked attribute.
    pub fn linked_ids(&self, id: u64, attr: u32) -> DbResult<Option<Vec<u64>>> {
        match self.link_key_attr(attr) {
            Some((kind, key_attr)) => link_ids(&self.kv, kind, id, key_attr).map(Some),
            None => Ok(None),
        }
    }

    /// The entries reached from `start` by following attribute `attr` (forward or back)
    /// again and again, each once; cycles end the walk. `start` itself is included only
    /// when a cycle leads back to it. This is AD's LDAP_MATCHING_RULE_IN_CHAIN and the
    /// walk behind tokenGroups.
    pub fn link_closure(&self, start: u64, attr: u32) -> DbResult<Vec<u64>> {
        match self.link_key_attr(attr) {
            Some((kind, key_attr)) => closure(&self.kv, kind, key_attr, start),
            None => Ok(Vec::new()),
        }
    }
}

/// The values an attribute's equality index holds, as a set: for callers that test many
/// values against what is stored, one index scan instead of one lookup per value (a bulk
/// load's uniqueness rules). A value it does not hold is held by no record; one it holds
/// is looked up with [`DbRead::find_eq`] for the holders.
#[derive(Debug, Clone)]
pub struct StoredValues {
    attr: Option<u32>,
    syntax: crate::syntax::Syntax,
    max_key_len: usize,
    prefixes: std::collections::HashSet<Vec<u8>>,
}

impl StoredValues {
    /// Whether some record may hold `value` (always true for a value the syntax refuses,
    /// so the caller asks the index).
    pub fn may_hold(&self, value: &[u8]) -> bool {
        let Some(aid) = self.attr else {
            return false;
        };
        match self.syntax.normalize(value) {
            Ok(norm) => self
                .prefixes
                .contains(&value_prefix(aid, &norm, self.max_key_len)),
            Err(_) => true,
        }
    }
}

impl<B: Backend> DbRead<'_, B> {
    /// The values the equality index of `attr` holds (see [`StoredValues`]); `None` when
    /// the attribute has no equality index.
    pub fn stored_values(&self, attr: &str) -> DbResult<Option<StoredValues>> {
        let lower = attr.to_ascii_lowercase();
        let flags = self.cfg.index_of_lower(&lower);
        if !(flags.contains(IndexFlags::EQUALITY) || flags.contains(IndexFlags::UNIQUE)) {
            return Ok(None);
        }
        let aid = self.attr_id(&lower);
        let mut prefixes = std::collections::HashSet::new();
        if let Some(aid) = aid {
            for item in
                self.kv
                    .prefix(T_INDEX, &crate::keys::value_head(aid), Direction::Forward)?
            {
                let (k, _) = item?;
                let k: &[u8] = &k;
                if let Some(p) = k.get(..k.len().saturating_sub(8)) {
                    prefixes.insert(p.to_vec());
                }
            }
        }
        Ok(Some(StoredValues {
            attr: aid,
            syntax: self.cfg.schema.syntax_of_lower(&lower),
            max_key_len: self.cfg.max_index_key_len,
            prefixes,
        }))
    }
}

impl<B: Backend> AttrResolver for DbRead<'_, B> {
    fn resolve(&self, lower: &str) -> Option<u32> {
        resolve_attr(&self.kv, &self.reg, lower)
    }

    fn link_match(&self, lower: &str, value: &[u8], chain: bool) -> LinkMatch {
        let Some(role) = self.cfg.link_of_lower(lower) else {
            return LinkMatch::NotLinked;
        };
        let Some(dn) = std::str::from_utf8(value)
            .ok()
            .and_then(|t| Dn::parse(t).ok())
        else {
            return LinkMatch::BadValue;
        };
        let target = match self.lookup(&dn) {
            Ok(Some(id)) if id != 0 => id,
            _ => return LinkMatch::Ids(Vec::new()),
        };
        // Entries whose `member` holds X are X's `memberOf` targets, and the other way
        // round: an assertion walks the opposite direction of the attribute it names.
        let (kind, forward) = match role {
            LinkRole::Forward { .. } => (LINK_BACK, self.attr_id(lower)),
            LinkRole::Back { forward } => (LINK_FORWARD, self.attr_id(forward)),
        };
        let Some(forward) = forward else {
            return LinkMatch::Ids(Vec::new());
        };
        let ids = if chain {
            closure(&self.kv, kind, forward, target)
        } else {
            link_ids(&self.kv, kind, target, forward)
        };
        ids.map(LinkMatch::Ids).unwrap_or(LinkMatch::BadValue)
    }

    fn is_linked(&self, lower: &str) -> bool {
        self.cfg.link_of_lower(lower).is_some()
    }

    fn entry_id(&self, dn: &[u8]) -> Option<u64> {
        let dn = Dn::parse(std::str::from_utf8(dn).ok()?).ok()?;
        self.lookup(&dn).ok()?.filter(|id| *id != 0)
    }
}

/// Every id reached from `start` by following links of `attr` in direction `kind`, each
/// once, sorted; `start` only if a cycle leads back to it.
pub fn closure<R: ReadTxn>(kv: &R, kind: u8, attr: u32, start: u64) -> DbResult<Vec<u64>> {
    let mut seen = std::collections::HashSet::new();
    let mut queue = vec![start];
    let mut out = Vec::new();
    while let Some(cur) = queue.pop() {
        for next in link_ids(kv, kind, cur, attr)? {
            if seen.insert(next) {
                out.push(next);
                queue.push(next);
            }
        }
    }
    out.sort_unstable();
    Ok(out)
}

impl<B: Backend> AttrNames for DbRead<'_, B> {
    fn name_lower(&self, id: u32) -> Option<String> {
        self.attr_name(id).map(|n| n.to_ascii_lowercase())
    }

    fn has_presence(&self, attr: u32, id: u64) -> bool {
        // The entry's own run of links says it in one seek; the presence key would sit in
        // the long id run of the attribute's presence set.
        match self.link_key_attr(attr) {
            Some((kind, key_attr)) => matches!(self.has_links(kind, id, key_attr), Ok(true)),
            None => matches!(self.kv.get(T_INDEX, &presence_key(attr, id)), Ok(Some(_))),
        }
    }
}
