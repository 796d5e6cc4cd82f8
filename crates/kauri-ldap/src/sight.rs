//! What one search's caller may see: which objects (the parent must grant list contents)
//! and which of their attributes (read property, per attribute or property set), decided
//! from each object's security descriptor. Decisions come from the directory's cache,
//! keyed by descriptor id and class, and are kept again here per search, so a page of
//! 1,000 users sharing a descriptor costs one lookup, not 1,000 evaluations.

use std::cell::RefCell;
use std::collections::HashMap;
use std::sync::Arc;

use kauri_db::record::RecordView;
use kauri_db::search::Sight;
use kauri_db::{DbError, DbRead, DbResult};
use kauri_domain::directory::acl::{Principal, ReadAccess};
use kauri_domain::directory::{Directory, SchemaSnapshot};
use kauri_kv::lmdb::LmdbBackend;

/// One object's decision, with the attribute ids it hides.
#[derive(Clone)]
struct Decision {
    access: Arc<ReadAccess>,
    hidden_ids: Arc<[u32]>,
}

/// Attribute ids the sight reads from every record, resolved once.
#[derive(Clone, Copy)]
struct Ids {
    object_class: Option<u32>,
    object_sid: Option<u32>,
    instance_type: Option<u32>,
    descriptor: Option<u32>,
}

/// Per-search sight of one principal.
pub struct Sighting {
    ids: Option<Ids>,
    /// Structural class by the last objectClass value of a record.
    classes: HashMap<Vec<u8>, Arc<str>>,
    dir: Arc<Directory<LmdbBackend>>,
    schema: Arc<SchemaSnapshot>,
    principal: Arc<Principal>,
    filter_attrs: Vec<u32>,
    parents: HashMap<u64, bool>,
    by_descriptor: HashMap<(u64, bool), Vec<(String, Decision)>>,
    /// The decision of the record the search tested last (read by the entry encoder).
    last: Option<(u64, Decision)>,
    list_object: Option<bool>,
}

fn err(e: impl std::fmt::Display) -> DbError {
    DbError::Corrupt(format!("access check: {e}"))
}

impl Sighting {
    /// The sight of `principal` for a search whose filter names `filter_attrs`.
    pub fn new(
        dir: Arc<Directory<LmdbBackend>>,
        principal: Arc<Principal>,
        filter_attrs: Vec<u32>,
    ) -> Sighting {
        Sighting {
            ids: None,
            classes: HashMap::new(),
            schema: dir.schema(),
            dir,
            principal,
            filter_attrs,
            parents: HashMap::new(),
            by_descriptor: HashMap::new(),
            last: None,
            list_object: None,
        }
    }

    fn ids(&mut self, snap: &DbRead<'_, LmdbBackend>) -> Ids {
        if let Some(i) = self.ids {
            return i;
        }
        let i = Ids {
            object_class: snap.attr_id("objectClass"),
            object_sid: snap.attr_id("objectSid"),
            instance_type: snap.attr_id("instanceType"),
            descriptor: snap.descriptor_attr_id(),
        };
        self.ids = Some(i);
        i
    }

    /// The structural class of a record, from its stored objectClass values (`top …
    /// structural`, then auxiliary classes): remembered by the last value when that is
    /// the structural class itself, as it is for most objects.
    fn class_of(&mut self, ids: Ids, rec: &RecordView<'_>) -> Arc<str> {
        let Some(a) = ids.object_class.and_then(|a| rec.attr(a)) else {
            return "top".into();
        };
        let values: Vec<&[u8]> = a.values().map(|v| v.raw).collect();
        let Some(last) = values.last() else {
            return "top".into();
        };
        if let Some(c) = self.classes.get(*last) {
            return c.clone();
        }
        for (i, v) in values.iter().enumerate().rev() {
            let name = String::from_utf8_lossy(v);
            if let Some(def) = self.schema.schema.class(&name) {
                if def.object_class_category <= 1 {
                    let class: Arc<str> = def.ldap_name.as_str().into();
                    if i + 1 == values.len() {
                        self.classes.insert(last.to_vec(), class.clone());
                    }
                    return class;
                }
            }
        }
        "top".into()
    }

    /// The decision for a record, `None` when it has no descriptor.
    fn decide(
        &mut self,
        snap: &DbRead<'_, LmdbBackend>,
        rec: &RecordView<'_>,
    ) -> DbResult<Option<Decision>> {
        let ids = self.ids(snap);
        let Some(sd_id) = ids
            .descriptor
            .and_then(|a| rec.attr(a))
            .and_then(|a| a.values().next())
            .and_then(|v| kauri_db::descriptors::id_of_stored(v.raw))
        else {
            return Ok(None);
        };
        let me = ids
            .object_sid
            .and_then(|a| rec.attr(a))
            .and_then(|a| a.values().next())
            .is_some_and(|v| self.principal.sid_bytes.contains(v.raw));
        let class = self.class_of(ids, rec);
        if let Some(list) = self.by_descriptor.get(&(sd_id, me)) {
            if let Some((_, d)) = list.iter().find(|(c, _)| **c == *class) {
                return Ok(Some(d.clone()));
            }
        }
        let Some(sd) = self.dir.parsed_descriptor(snap, sd_id).map_err(err)? else {
            return Ok(None);
        };
        let access = self
            .dir
            .read_access(&self.schema, &self.principal, sd_id, &sd, &class, me)
            .map_err(err)?;
        let hidden_ids = access.hidden_ids(|n| snap.attr_id(n));
        let d = Decision { access, hidden_ids };
        self.by_descriptor
            .entry((sd_id, me))
            .or_default()
            .push((class.to_string(), d.clone()));
        Ok(Some(d))
    }

    /// Whether the parent of record `id` lets the principal see it.
    fn parent_lists(
        &mut self,
        snap: &DbRead<'_, LmdbBackend>,
        id: u64,
        rec: &RecordView<'_>,
    ) -> DbResult<bool> {
        // Naming context heads are always visible.
        let ids = self.ids(snap);
        let head = ids
            .instance_type
            .and_then(|a| rec.attr(a))
            .and_then(|a| a.values().next())
            .and_then(|v| std::str::from_utf8(v.raw).ok()?.trim().parse::<i64>().ok())
            .is_some_and(|t| t & 1 != 0);
        let parent = snap.parent_of(id)?.unwrap_or(0);
        if head || parent == 0 {
            return Ok(true);
        }
        if let Some(v) = self.parents.get(&parent) {
            return Ok(*v);
        }
        let lists = match snap.record(parent)? {
            Some(prec) => match self.decide(snap, &prec)? {
                Some(d) => d.access.lists_children(),
                None => true,
            },
            None => true,
        };
        self.parents.insert(parent, lists);
        Ok(lists)
    }

    /// What the search may see of record `id`: invisible, whole, or with the attributes
    /// its filter names that the principal may not read masked.
    pub fn sight(
        &mut self,
        snap: &DbRead<'_, LmdbBackend>,
        id: u64,
        rec: &RecordView<'_>,
    ) -> DbResult<Sight> {
        self.last = None;
        if !self.parent_lists(snap, id, rec)? {
            // List-object mode: list object on the parent and the object itself.
            let mode = match self.list_object {
                Some(m) => m,
                None => {
                    let m = self.dir.list_object_mode(snap).map_err(err)?;
                    self.list_object = Some(m);
                    m
                }
            };
            if !mode
                || !self
                    .dir
                    .visible(snap, &self.schema, &self.principal, id)
                    .map_err(err)?
            {
                return Ok(Sight::Invisible);
            }
        }
        let Some(d) = self.decide(snap, rec)? else {
            return Ok(Sight::Whole);
        };
        let masks = self
            .filter_attrs
            .iter()
            .any(|a| d.hidden_ids.binary_search(a).is_ok());
        let out = if masks {
            Sight::Partly(d.hidden_ids.clone())
        } else {
            Sight::Whole
        };
        self.last = Some((id, d));
        Ok(out)
    }

    /// The attribute names (lowercased, sorted) record `id` hides from the principal, and
    /// whether its descriptor may be read (READ_CONTROL), from the last [`Sighting::sight`].
    pub fn hidden_of(&self, id: u64) -> Option<(&[String], bool)> {
        self.last.as_ref().filter(|(i, _)| *i == id).map(|(_, d)| {
            (
                d.access.hidden.as_slice(),
                d.access.object & kauri_domain::security::rights::RIGHT_READ_CONTROL != 0,
            )
        })
    }

    /// Whether record `id` (the last one sighted) hides attribute `attr` from the
    /// principal.
    pub fn hides(&self, id: u64, attr: u32) -> bool {
        self.last
            .as_ref()
            .filter(|(i, _)| *i == id)
            .is_some_and(|(_, d)| d.hidden_ids.binary_search(&attr).is_ok())
    }
}

/// A sighting shared by the two callbacks of one cursor advance.
pub type Shared = RefCell<Sighting>;
