//! The security descriptor of every object: the one a new object receives (its class's
//! default, what the client supplied, and what its parent passes down), the one each
//! object below a changed or moved object has afterwards (propagation), and the one every
//! object of a database made before descriptors existed gets on first start.
//!
//! Descriptors are stored once per distinct value and records hold their ids
//! ([`kauri_db::descriptors`]). An id names an immutable value, so the parsed form of a
//! descriptor and the result of inheriting from it are cached by id for good: at 100,000
//! users a handful of ids cover the directory, and neither computing a new user's
//! descriptor nor an access check parses anything after the first time.

use std::collections::HashMap;
use std::sync::Arc;

use kauri_db::{DbWrite, Dn, Modification, ModifyOp};
use kauri_kv::Backend;
use parking_lot::Mutex;

use super::caller::Caller;
use super::classes::SchemaSnapshot;
use super::error::{DirError, DirResult};
use super::info::DomainInfo;
use super::view::View;
use super::Directory;
use crate::security::{
    create_descriptor_with, default_owner_and_group, Guid, NamingContext, SecurityDescriptor, Token,
};
use crate::sid::Sid;

/// A stored descriptor: its id and parsed form.
type Stored = (u64, Arc<SecurityDescriptor>);

/// The attribute that holds an object's descriptor.
pub const SD_ATTR: &str = "nTSecurityDescriptor";

/// The most inheritance results kept; past it the memo starts again.
const MEMO_LIMIT: usize = 4096;

/// What a descriptor was computed from, besides the parent's descriptor and the class.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
enum Creator {
    /// The class's default with this owner and group (a new object).
    Default { owner: Sid, group: Sid },
    /// The object's own stored descriptor (propagation keeps its explicit part).
    Stored(u64),
}

#[derive(Debug, Clone, PartialEq, Eq, Hash)]
struct MemoKey {
    parent: u64,
    creator: Creator,
    class: String,
}

/// Parsed descriptors by id, class defaults by class, and inheritance results.
#[derive(Default)]
pub(crate) struct DescriptorCache {
    parsed: Mutex<HashMap<u64, Arc<SecurityDescriptor>>>,
    defaults: Mutex<HashMap<String, Option<Arc<SecurityDescriptor>>>>,
    memo: Mutex<HashMap<MemoKey, Arc<Vec<u8>>>>,
}

impl DescriptorCache {
    /// Forgets what depends on the schema (class defaults), after a schema change.
    pub(crate) fn schema_changed(&self) {
        self.defaults.lock().clear();
        self.memo.lock().clear();
    }
}

/// Which naming context kind `dn` lies in, for the default administrators group.
fn nc_kind(domain: &DomainInfo, dn: &Dn) -> NamingContext {
    let nc = domain.nc_of(dn);
    if *nc == domain.schema_dn {
        NamingContext::Schema
    } else if *nc == domain.config_dn {
        NamingContext::Configuration
    } else if *nc == domain.domain_dn {
        NamingContext::Domain
    } else {
        NamingContext::Application
    }
}

/// A token standing for the server itself when it creates objects: it holds every
/// administrators group, so each naming context's default group owns what it creates.
fn system_token(domain: &Sid) -> Token {
    use crate::sid::rid;
    Token::new(
        crate::security::well_known::system(),
        [
            domain.with_rid(rid::DOMAIN_ADMINS),
            domain.with_rid(rid::ENTERPRISE_ADMINS),
            domain.with_rid(rid::SCHEMA_ADMINS),
        ],
    )
}

impl<B: Backend> Directory<B> {
    /// The parsed descriptor stored under `sd_id`.
    pub fn parsed_descriptor<V: View + ?Sized>(
        &self,
        v: &V,
        sd_id: u64,
    ) -> DirResult<Option<Arc<SecurityDescriptor>>> {
        if let Some(sd) = self.descriptors.parsed.lock().get(&sd_id) {
            return Ok(Some(sd.clone()));
        }
        let Some(bytes) = v.descriptor_bytes(sd_id)? else {
            return Ok(None);
        };
        let sd =
            Arc::new(SecurityDescriptor::from_bytes(&bytes).map_err(|e| {
                DirError::Other(format!("stored security descriptor {sd_id}: {e}"))
            })?);
        let mut parsed = self.descriptors.parsed.lock();
        if parsed.len() >= MEMO_LIMIT {
            parsed.clear();
        }
        parsed.insert(sd_id, sd.clone());
        Ok(Some(sd))
    }

    /// The class default of `class`, parsed once per schema.
    fn class_default(
        &self,
        snap: &SchemaSnapshot,
        class: &str,
        domain: &Sid,
    ) -> DirResult<Option<Arc<SecurityDescriptor>>> {
        let key = class.to_ascii_lowercase();
        if let Some(d) = self.descriptors.defaults.lock().get(&key) {
            return Ok(d.clone());
        }
        let parsed = match snap
            .schema
            .class(class)
            .and_then(|c| c.default_security_descriptor.as_deref())
        {
            Some(text) => Some(Arc::new(
                SecurityDescriptor::from_sddl(text, domain).map_err(|e| {
                    DirError::Other(format!("defaultSecurityDescriptor of {class}: {e}"))
                })?,
            )),
            None => None,
        };
        self.descriptors.defaults.lock().insert(key, parsed.clone());
        Ok(parsed)
    }

    /// The owner and group a new object in `dn` gets from its creator (MS-ADTS 6.1.3.7).
    fn creator_owner_group<V: View + ?Sized>(
        &self,
        v: &V,
        caller: &Caller,
        domain: &DomainInfo,
        dn: &Dn,
    ) -> DirResult<(Sid, Sid)> {
        let nc = nc_kind(domain, dn);
        let token = match caller {
            Caller::Account(a) => match &a.sid {
                Some(sid) => Token::new(sid.clone(), a.groups.iter().cloned()),
                None => system_token(&domain.sid),
            },
            _ => system_token(&domain.sid),
        };
        let primary = match caller {
            Caller::Account(a) if a.id != 0 => v
                .int(a.id, "primaryGroupID")?
                .and_then(|r| u32::try_from(r).ok())
                .map(|r| domain.sid.with_rid(r)),
            _ => None,
        };
        Ok(default_owner_and_group(
            &token,
            nc,
            &domain.sid,
            &domain.sid,
            primary.as_ref(),
        ))
    }

    /// The descriptor of a new object `dn` of structural class `class`, created by
    /// `caller` below the object `parent` (`None` for a naming context head), from the
    /// descriptor the client `supplied` or else the class default. The bytes are what
    /// the object stores.
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn new_descriptor<V: View + ?Sized>(
        &self,
        v: &V,
        snap: &SchemaSnapshot,
        caller: &Caller,
        dn: &Dn,
        class: &str,
        parent: Option<u64>,
        supplied: Option<&SecurityDescriptor>,
    ) -> DirResult<Vec<u8>> {
        let Some(domain) = self.domain() else {
            return Err(DirError::Other("descriptors need a domain".into()));
        };
        let parent_sd = match parent {
            Some(p) => self.object_descriptor(v, p)?,
            None => None,
        };
        let guid = class_guid(snap, class);
        let (owner, group) = self.creator_owner_group(v, caller, &domain, dn)?;
        if let Some(creator) = supplied {
            let sd = create_descriptor_with(
                parent_sd.as_ref().map(|(_, sd)| sd.as_ref()),
                Some(creator),
                &owner,
                &group,
                &[guid],
                true,
            );
            return sd.to_bytes().map_err(|e| DirError::Other(e.to_string()));
        }
        let key = MemoKey {
            parent: parent_sd.as_ref().map_or(0, |(id, _)| *id),
            creator: Creator::Default {
                owner: owner.clone(),
                group: group.clone(),
            },
            class: class.to_ascii_lowercase(),
        };
        if let Some(done) = self.descriptors.memo.lock().get(&key) {
            return Ok(done.as_ref().clone());
        }
        let default = self.class_default(snap, class, &domain.sid)?;
        let sd = create_descriptor_with(
            parent_sd.as_ref().map(|(_, sd)| sd.as_ref()),
            default.as_deref(),
            &owner,
            &group,
            &[guid],
            true,
        );
        let bytes = sd.to_bytes().map_err(|e| DirError::Other(e.to_string()))?;
        self.remember(key, &bytes);
        Ok(bytes)
    }

    fn remember(&self, key: MemoKey, bytes: &[u8]) {
        let mut memo = self.descriptors.memo.lock();
        if memo.len() >= MEMO_LIMIT {
            memo.clear();
        }
        memo.insert(key, Arc::new(bytes.to_vec()));
    }

    /// An object's descriptor id and parsed descriptor.
    pub fn object_descriptor<V: View + ?Sized>(
        &self,
        v: &V,
        id: u64,
    ) -> DirResult<Option<(u64, Arc<SecurityDescriptor>)>> {
        let Some(sd_id) = v.descriptor_id_of(id)? else {
            return Ok(None);
        };
        Ok(self.parsed_descriptor(v, sd_id)?.map(|sd| (sd_id, sd)))
    }

    /// What object `id` (of structural class `class`) has once it inherits from the
    /// parent descriptor `parent` again, keeping its explicit ACEs, owner and group;
    /// `None` when that is what it has.
    fn reinherited<V: View + ?Sized>(
        &self,
        v: &V,
        snap: &SchemaSnapshot,
        id: u64,
        class: &str,
        parent: Option<&(u64, Arc<SecurityDescriptor>)>,
    ) -> DirResult<Option<Vec<u8>>> {
        let Some((own_id, own)) = self.object_descriptor(v, id)? else {
            return Ok(None);
        };
        let key = MemoKey {
            parent: parent.map_or(0, |(p, _)| *p),
            creator: Creator::Stored(own_id),
            class: class.to_ascii_lowercase(),
        };
        let cached = self.descriptors.memo.lock().get(&key).cloned();
        let bytes = match cached {
            Some(b) => b.as_ref().clone(),
            None => {
                let owner = own
                    .owner
                    .clone()
                    .unwrap_or_else(crate::security::well_known::system);
                let group = own.group.clone().unwrap_or_else(|| owner.clone());
                let sd = create_descriptor_with(
                    parent.map(|(_, sd)| sd.as_ref()),
                    Some(&own),
                    &owner,
                    &group,
                    &[class_guid(snap, class)],
                    true,
                );
                let bytes = sd.to_bytes().map_err(|e| DirError::Other(e.to_string()))?;
                self.remember(key, &bytes);
                bytes
            }
        };
        let same = v.descriptor_bytes(own_id)?.is_some_and(|b| b == bytes);
        Ok((!same).then_some(bytes))
    }

    /// The descriptor object `id` stores after a client writes `value` to it: the parts
    /// the SD flags name (every part without the control) come from the value, the
    /// others stay; inherited ACEs the value carries are dropped and those the parent
    /// passes down put back (MS-ADTS 6.1.3.3). A value that names no owner (or group)
    /// keeps the current one.
    pub(crate) fn written_descriptor(
        &self,
        w: &DbWrite<'_, B>,
        snap: &SchemaSnapshot,
        id: u64,
        value: &[u8],
        sd_flags: Option<u32>,
    ) -> DirResult<Vec<u8>> {
        use crate::security::descriptor::{control, sd_flags as part};
        let given = SecurityDescriptor::from_bytes(value).map_err(|e| {
            DirError::ConstraintViolation(format!("0000057D: nTSecurityDescriptor: {e}"))
        })?;
        let flags = sd_flags
            .filter(|f| *f & part::ALL != 0)
            .unwrap_or(part::ALL);
        let current = self.object_descriptor(w, id)?.map(|(_, sd)| sd);
        let mut merged = current.as_deref().cloned().unwrap_or_default();
        if flags & part::OWNER != 0 && given.owner.is_some() {
            merged.owner = given.owner.clone();
        }
        if flags & part::GROUP != 0 && given.group.is_some() {
            merged.group = given.group.clone();
        }
        const DACL_BITS: u16 = control::SE_DACL_PRESENT
            | control::SE_DACL_PROTECTED
            | control::SE_DACL_AUTO_INHERITED
            | control::SE_DACL_DEFAULTED;
        const SACL_BITS: u16 = control::SE_SACL_PRESENT
            | control::SE_SACL_PROTECTED
            | control::SE_SACL_AUTO_INHERITED
            | control::SE_SACL_DEFAULTED;
        if flags & part::DACL != 0 {
            merged.dacl = given.dacl.clone();
            merged.control = (merged.control & !DACL_BITS) | (given.control & DACL_BITS);
        }
        if flags & part::SACL != 0 {
            merged.sacl = given.sacl.clone();
            merged.control = (merged.control & !SACL_BITS) | (given.control & SACL_BITS);
        }
        let owner = merged
            .owner
            .clone()
            .unwrap_or_else(crate::security::well_known::system);
        let group = merged.group.clone().unwrap_or_else(|| owner.clone());
        let parent = match w.parent_id(id)? {
            Some(p) if p != 0 => self.object_descriptor(w, p)?,
            _ => None,
        };
        let class = structural_class(w, snap, id)?;
        let sd = create_descriptor_with(
            parent.as_ref().map(|(_, sd)| sd.as_ref()),
            Some(&merged),
            &owner,
            &group,
            &[class_guid(snap, &class)],
            true,
        );
        sd.to_bytes().map_err(|e| DirError::Other(e.to_string()))
    }

    /// Re-inherits the descriptors below object `root` after its descriptor changed (or
    /// it moved): each object whose descriptor changes is rewritten and its own children
    /// follow; a subtree whose top keeps its descriptor is left alone. Returns how many
    /// objects were rewritten.
    pub(crate) fn propagate_below(&self, w: &mut DbWrite<'_, B>, root: u64) -> DirResult<u64> {
        let snap = self.working_schema();
        let mut rewritten = 0u64;
        let mut stack: Vec<(u64, Option<Stored>)> = Vec::new();
        stack.push((root, self.object_descriptor(w, root)?));
        while let Some((parent, parent_sd)) = stack.pop() {
            for child in w.children(parent)? {
                let class = structural_class(w, &snap, child)?;
                if let Some(bytes) =
                    self.reinherited(w, &snap, child, &class, parent_sd.as_ref())?
                {
                    write_descriptor(w, child, bytes)?;
                    rewritten += 1;
                    stack.push((child, self.object_descriptor(w, child)?));
                }
            }
        }
        Ok(rewritten)
    }

    /// Gives object `id` the descriptor its (new) parent passes down, then its subtree:
    /// what a move does. Returns how many objects were rewritten.
    pub(crate) fn reinherit_moved(&self, w: &mut DbWrite<'_, B>, id: u64) -> DirResult<u64> {
        let snap = self.working_schema();
        let parent = w.parent_id(id)?;
        let parent_sd = match parent {
            Some(p) if p != 0 => self.object_descriptor(w, p)?,
            _ => None,
        };
        let class = structural_class(w, &snap, id)?;
        let Some(bytes) = self.reinherited(w, &snap, id, &class, parent_sd.as_ref())? else {
            return Ok(0);
        };
        write_descriptor(w, id, bytes)?;
        Ok(1 + self.propagate_below(w, id)?)
    }

    /// Gives every object without a descriptor the one it would have had if it had been
    /// created by the server under its parent: what a database made before descriptors
    /// existed needs once, top down from each naming context. Returns how many objects
    /// received one.
    pub fn ensure_descriptors(
        &self,
        w: &mut DbWrite<'_, B>,
        progress: Option<&dyn Fn(u64)>,
    ) -> DirResult<u64> {
        if self.domain().is_none() {
            return Ok(0);
        }
        let snap = self.working_schema();
        let mut given = 0u64;
        let mut seen = 0u64;
        let heads: Vec<u64> = w.naming_contexts()?.into_iter().map(|(id, _)| id).collect();
        // Every object since descriptors exist is created with one, so a database whose
        // naming context heads have theirs needs nothing.
        let mut missing = false;
        for h in &heads {
            missing |= w.descriptor_id_of(*h)?.is_none();
        }
        if !missing {
            return Ok(0);
        }
        let mut stack: Vec<(u64, Option<u64>)> = heads.into_iter().map(|h| (h, None)).collect();
        while let Some((id, parent)) = stack.pop() {
            seen += 1;
            if seen.is_multiple_of(4096) {
                if let Some(p) = progress {
                    p(seen);
                }
            }
            if w.descriptor_id_of(id)?.is_none() {
                let class = structural_class(w, &snap, id)?;
                let dn = Dn::parse(&w.dn_of(id)?)
                    .map_err(|e| DirError::Other(format!("stored DN of {id}: {e}")))?;
                // The objects AD provisions with descriptors of their own get those.
                let explicit = match self.domain() {
                    Some(d) => crate::provision::descriptors::explicit_sddl(&dn, &d.domain_dn)
                        .and_then(|t| SecurityDescriptor::from_sddl(&t, &d.sid).ok()),
                    None => None,
                };
                let bytes = self.new_descriptor(
                    w,
                    &snap,
                    &Caller::System,
                    &dn,
                    &class,
                    parent,
                    explicit.as_ref(),
                )?;
                write_descriptor(w, id, bytes)?;
                given += 1;
            }
            for child in w.children(id)? {
                stack.push((child, Some(id)));
            }
        }
        Ok(given)
    }
}

/// Stores `bytes` as object `id`'s descriptor.
fn write_descriptor<B: Backend>(w: &mut DbWrite<'_, B>, id: u64, bytes: Vec<u8>) -> DirResult<()> {
    let m = Modification {
        op: ModifyOp::Replace,
        attr: SD_ATTR.to_string(),
        values: vec![bytes],
    };
    w.modify_by_id(id, &[m])?;
    Ok(())
}

/// The schemaIDGUID of a class (zeros when the schema has none).
fn class_guid(snap: &SchemaSnapshot, class: &str) -> Guid {
    snap.schema
        .class(class)
        .and_then(|c| c.schema_id_guid)
        .unwrap_or([0; 16])
}

/// The most specific structural class of a stored object.
pub(crate) fn structural_class<V: View + ?Sized>(
    v: &V,
    snap: &SchemaSnapshot,
    id: u64,
) -> DirResult<String> {
    let classes = v.values(id, "objectClass")?;
    let mut best: Option<String> = None;
    for c in classes.iter().rev() {
        let name = String::from_utf8_lossy(c);
        if let Some(def) = snap.schema.class(&name) {
            if def.object_class_category == 1 || def.object_class_category == 0 {
                best = Some(def.ldap_name.clone());
                break;
            }
        }
    }
    Ok(best.unwrap_or_else(|| "top".into()))
}
