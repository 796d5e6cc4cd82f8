//! Who may do what in a domain, decided as AD decides it: from each object's security
//! descriptor, evaluated for the caller's token (MS-ADTS 5.1.3). The checks every
//! operation makes live here — reading an object and its attributes, creating and
//! deleting children, writing attributes, renaming and moving, control access rights —
//! and so does the cache that keeps them cheap: a decision depends only on the
//! descriptor (an id naming immutable bytes), the object's class, whether the object is
//! the caller itself, and the token, so it is computed once per such combination.
//!
//! The server itself ([`Caller::System`]) is not checked; a directory without a domain
//! keeps the built-in policy of `access.rs`.

use std::collections::HashMap;
use std::sync::Arc;

use kauri_kv::Backend;
use parking_lot::Mutex;

use super::caller::Caller;
use super::classes::SchemaSnapshot;
use super::error::{DirError, DirResult};
use super::view::View;
use super::Directory;
use crate::schema::FCONFIDENTIAL;
use crate::security::rights::{
    ACCESS_SYSTEM_SECURITY, RIGHT_DELETE, RIGHT_DS_CONTROL_ACCESS, RIGHT_DS_CREATE_CHILD,
    RIGHT_DS_DELETE_CHILD, RIGHT_DS_DELETE_TREE, RIGHT_DS_LIST_CONTENTS, RIGHT_DS_LIST_OBJECT,
    RIGHT_DS_READ_PROPERTY, RIGHT_DS_SELF, RIGHT_DS_WRITE_PROPERTY, RIGHT_READ_CONTROL,
    RIGHT_WRITE_DAC, RIGHT_WRITE_OWNER,
};
use crate::security::{well_known, AccessCheck, Guid, ObjectTypeList, SecurityDescriptor, Token};
use crate::sid::Sid;

/// Control access rights and validated writes the server checks (their rightsGuid).
pub mod extended {
    use crate::security::Guid;

    const fn g(s: &[u8; 36]) -> Guid {
        // A GUID in its text form, in the byte order objects store (little-endian fields).
        const fn hex(c: u8) -> u8 {
            match c {
                b'0'..=b'9' => c - b'0',
                b'a'..=b'f' => c - b'a' + 10,
                b'A'..=b'F' => c - b'A' + 10,
                _ => 0,
            }
        }
        const fn byte(s: &[u8; 36], at: usize) -> u8 {
            hex(s[at]) << 4 | hex(s[at + 1])
        }
        [
            byte(s, 6),
            byte(s, 4),
            byte(s, 2),
            byte(s, 0),
            byte(s, 11),
            byte(s, 9),
            byte(s, 16),
            byte(s, 14),
            byte(s, 19),
            byte(s, 21),
            byte(s, 24),
            byte(s, 26),
            byte(s, 28),
            byte(s, 30),
            byte(s, 32),
            byte(s, 34),
        ]
    }

    /// User-Change-Password: change one's password knowing the old one.
    pub const CHANGE_PASSWORD: Guid = g(b"ab721a53-1e2f-11d0-9819-00aa0040529b");
    /// User-Force-Change-Password: reset a password without knowing it.
    pub const RESET_PASSWORD: Guid = g(b"00299570-246d-11d0-a768-00aa006e0529");
    /// Validated-SPN (the servicePrincipalName attribute's GUID too).
    pub const VALIDATED_SPN: Guid = g(b"f3a64788-5306-11d1-a9c5-0000f80367c1");
    /// Validated-DNS-Host-Name (dNSHostName's GUID, and a property set's).
    pub const VALIDATED_DNS_HOST_NAME: Guid = g(b"72e39547-7b18-11d1-adef-00c04fd8d5cd");
    /// Self-Membership: add or remove oneself from a group (member's GUID).
    pub const SELF_MEMBERSHIP: Guid = g(b"bf9679c0-0de6-11d0-a285-00aa003049e2");
    /// Reanimate-Tombstones.
    pub const REANIMATE_TOMBSTONES: Guid = g(b"45ec5156-db7e-47bb-b53f-dbeb2d03c40f");
}

/// AD's text for a refused operation (ERROR_DS_INSUFF_ACCESS_RIGHTS).
pub(crate) fn insufficient(what: &str) -> DirError {
    DirError::InsufficientAccess(format!(
        "00002098: SecErr: DSID-03150BC1, problem 4003 (INSUFF_ACCESS_RIGHTS), data 0: {what}"
    ))
}

/// AD's text for a refused descriptor write (ERROR_ACCESS_DENIED).
pub(crate) fn access_denied(what: &str) -> DirError {
    DirError::InsufficientAccess(format!(
        "00000005: SecErr: DSID-03152870, problem 4003 (INSUFF_ACCESS_RIGHTS), data 0: {what}"
    ))
}

/// Privileges that change what the directory allows, held through Administrators
/// (SeSecurityPrivilege, SeRestorePrivilege, SeTakeOwnershipPrivilege) and through
/// Backup or Server Operators (SeRestorePrivilege).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Privileges {
    /// SeSecurityPrivilege: read and write SACLs.
    pub security: bool,
    /// SeRestorePrivilege: set any owner.
    pub restore: bool,
    /// SeTakeOwnershipPrivilege: WRITE_OWNER on every object.
    pub take_ownership: bool,
}

/// Whom an access check is for: the token, privileges, and the account itself.
#[derive(Debug, Clone)]
pub struct Principal {
    /// A number no other token gets (decisions are cached by it).
    pub id: u64,
    /// The token's SIDs in their binary form, to tell whether it holds an object's
    /// stored `objectSid` (PRINCIPAL_SELF) without decoding it.
    pub sid_bytes: std::collections::HashSet<Vec<u8>>,
    /// The SIDs the descriptors are evaluated against.
    pub token: Token,
    /// Privileges the token carries.
    pub privileges: Privileges,
    /// The record id of the account (Self-Membership lets it add or remove itself).
    pub account: Option<u64>,
}

impl Principal {
    /// Whether PRINCIPAL_SELF (S-1-5-10) stands for this caller on an object whose SID is
    /// `object_sid`: the token holds that SID — the caller's own account, a group it is a
    /// member of, a well-known principal it is (MS-DTYP 2.5.3.2: SELF is replaced by the
    /// object's SID).
    pub fn is_self(&self, object_sid: Option<&Sid>) -> bool {
        object_sid.is_some_and(|s| self.token.contains(s))
    }

    /// An access check where PRINCIPAL_SELF applies when `me`.
    fn check(&self, me: bool) -> AccessCheck<'_> {
        AccessCheck::new(&self.token).with_self(me.then(|| self.token.user()))
    }
}

/// The principal cache's key of an account's token inputs.
fn token_key(user: &Sid, groups: &[Sid], account: Option<u64>) -> u64 {
    use std::hash::{Hash, Hasher};
    let mut h = std::collections::hash_map::DefaultHasher::new();
    user.hash(&mut h);
    groups.hash(&mut h);
    account.hash(&mut h);
    h.finish()
}

/// The SID of a stored object, if it has one.
fn object_sid<V: View + ?Sized>(v: &V, id: u64) -> DirResult<Option<Sid>> {
    Ok(v.values(id, "objectSid")?
        .first()
        .and_then(|b| Sid::from_bytes(b).ok()))
}

/// What a reader may do with one object.
#[derive(Debug)]
pub struct ReadAccess {
    /// Rights granted on the object as a whole (list, read, read control, …).
    pub object: u32,
    /// Lowercased names of the attributes the reader may not read here (secrets apart,
    /// which nobody reads).
    pub hidden: Vec<String>,
    /// `hidden` as the database's attribute ids, once every name had one.
    hidden_ids: std::sync::OnceLock<Arc<[u32]>>,
}

impl ReadAccess {
    /// The hidden attributes as the database's attribute ids (sorted), resolved by
    /// `id_of`. Kept once every name resolved: ids never change, but an attribute never
    /// stored yet has none, and must be looked up again when it gets one.
    pub fn hidden_ids(&self, id_of: impl Fn(&str) -> Option<u32>) -> Arc<[u32]> {
        if let Some(ids) = self.hidden_ids.get() {
            return ids.clone();
        }
        let mut all = true;
        let mut ids: Vec<u32> = Vec::with_capacity(self.hidden.len());
        for n in &self.hidden {
            match id_of(n) {
                Some(i) => ids.push(i),
                None => all = false,
            }
        }
        ids.sort_unstable();
        let ids: Arc<[u32]> = ids.into();
        if all {
            let _ = self.hidden_ids.set(ids.clone());
        }
        ids
    }

    /// Whether the reader may list the object's children.
    pub fn lists_children(&self) -> bool {
        self.object & RIGHT_DS_LIST_CONTENTS != 0
    }

    /// Whether the object, as a parent, lets the reader see a child in list-object mode.
    pub fn lists_object(&self) -> bool {
        self.object & RIGHT_DS_LIST_OBJECT != 0
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Hash)]
struct ReadKey {
    sd: u64,
    me: bool,
    token: u64,
}

/// Decisions for one (descriptor, self, token), by class (usually one).
type ReadsByClass = Vec<(String, Arc<ReadAccess>)>;

/// The object type list of a class: the class, its attributes' property sets, and its
/// attributes, with where each attribute sits in the list.
#[derive(Debug)]
struct ClassTypes {
    list: ObjectTypeList,
    /// (lowercased name, node index, confidential).
    attrs: Vec<(String, usize, bool)>,
}

/// Tokens built, for the USN the well-known memberships were read at.
struct PrincipalState {
    usn: u64,
    well_known: Arc<Vec<Sid>>,
    /// By a hash of (user, groups, account): the inputs, to compare, and the principal.
    by_hash: HashMap<u64, Vec<PrincipalEntry>>,
}

type PrincipalEntry = (Sid, Vec<Sid>, Option<u64>, Arc<Principal>);

/// Decisions, the class object type lists they are made with, and tokens.
#[derive(Default)]
pub(crate) struct AclCache {
    reads: Mutex<HashMap<ReadKey, ReadsByClass>>,
    classes: Mutex<HashMap<String, Arc<ClassTypes>>>,
    principals: Mutex<Option<PrincipalState>>,
    next_token: std::sync::atomic::AtomicU64,
}

/// Entries kept before the cache starts again.
const CACHE_LIMIT: usize = 16_384;

impl AclCache {
    /// Forgets the class lists (after a schema change).
    pub(crate) fn schema_changed(&self) {
        self.classes.lock().clear();
        self.reads.lock().clear();
    }
}

fn guid_of_class(snap: &SchemaSnapshot, class: &str) -> Guid {
    snap.schema
        .class(class)
        .and_then(|c| c.schema_id_guid)
        .unwrap_or([0; 16])
}

impl<B: Backend> Directory<B> {
    /// The principal a caller is checked as; `None` for the server itself and for the
    /// configured administrator of a directory without accounts (nothing is checked).
    pub fn principal<V: View + ?Sized>(
        &self,
        v: &V,
        caller: &Caller,
    ) -> DirResult<Option<Arc<Principal>>> {
        if self.domain().is_none() {
            return Ok(None);
        }
        let anonymous = well_known::anonymous();
        let (user, groups, account): (&Sid, &[Sid], Option<u64>) = match caller {
            Caller::System => return Ok(None),
            Caller::Anonymous => (&anonymous, &[], None),
            Caller::Account(a) => match &a.sid {
                Some(sid) => (sid, a.groups.as_slice(), Some(a.id)),
                None if a.admin => return Ok(None),
                None => (&anonymous, &[], None),
            },
        };
        // A token depends on the account's SIDs and on the groups the well-known
        // principals belong to, which only a commit changes: both are cached, the latter
        // for the last USN this server committed.
        if let Some(found) = self.cached_principal_of(user, groups, account) {
            return Ok(Some(found));
        }
        let usn = self.db.local_usn();
        let hash = token_key(user, groups, account);
        let well_known = {
            let cached = self
                .acl
                .principals
                .lock()
                .as_ref()
                .filter(|s| s.usn == usn)
                .map(|s| s.well_known.clone());
            match cached {
                Some(w) => w,
                None => Arc::new(well_known_memberships(v)?),
            }
        };
        let mut sids: Vec<Sid> = groups.to_vec();
        if *user != anonymous {
            // What every network logon adds (MS-ADTS 5.1.3.1; Samba's session tokens),
            // and the built-in groups those belong to (Pre-Windows 2000 Compatible Access
            // holds Authenticated Users).
            sids.extend([
                well_known::world(),
                Sid::nt_authority(&[2]),
                well_known::authenticated_users(),
                Sid::nt_authority(&[15]),
            ]);
            sids.extend(well_known.iter().cloned());
        }
        let token = Token::new(user.clone(), sids);
        let admins = token.contains(&Sid::builtin(544));
        let operators = token.contains(&Sid::builtin(551)) || token.contains(&Sid::builtin(549));
        let principal = Arc::new(Principal {
            sid_bytes: token.sids().iter().map(Sid::to_bytes).collect(),
            id: self
                .acl
                .next_token
                .fetch_add(1, std::sync::atomic::Ordering::Relaxed),
            privileges: Privileges {
                security: admins,
                restore: admins || operators,
                take_ownership: admins,
            },
            token,
            account,
        });
        let mut cache = self.acl.principals.lock();
        if cache.as_ref().is_none_or(|s| s.usn != usn) {
            *cache = Some(PrincipalState {
                usn,
                well_known,
                by_hash: HashMap::new(),
            });
        }
        if let Some(state) = cache.as_mut() {
            if state.by_hash.len() >= CACHE_LIMIT {
                state.by_hash.clear();
            }
            state.by_hash.entry(hash).or_default().push((
                user.clone(),
                groups.to_vec(),
                account,
                principal.clone(),
            ));
        }
        Ok(Some(principal))
    }

    /// [`Directory::principal`] of an account with SID `user`, group SIDs `groups` and
    /// record id `account` when the cache holds it: no view, no copy of the caller.
    pub fn cached_principal_of(
        &self,
        user: &Sid,
        groups: &[Sid],
        account: Option<u64>,
    ) -> Option<Arc<Principal>> {
        self.domain()?;
        let hash = token_key(user, groups, account);
        let usn = self.db.local_usn();
        let cache = self.acl.principals.lock();
        let state = cache.as_ref().filter(|s| s.usn == usn)?;
        state
            .by_hash
            .get(&hash)?
            .iter()
            .find(|(u, g, a, _)| u == user && g == groups && *a == account)
            .map(|e| e.3.clone())
    }

    fn class_types(&self, snap: &SchemaSnapshot, class: &str) -> DirResult<Arc<ClassTypes>> {
        let key = class.to_ascii_lowercase();
        if let Some(t) = self.acl.classes.lock().get(&key) {
            return Ok(t.clone());
        }
        let set = snap.class_set(&[class])?;
        let mut list = ObjectTypeList::new(guid_of_class(snap, class));
        let mut by_set: HashMap<Guid, Vec<(String, Guid, bool)>> = HashMap::new();
        let mut alone: Vec<(String, Guid, bool)> = Vec::new();
        let mut names: Vec<&String> = set.allowed.iter().collect();
        names.sort();
        for name in names {
            let Some(def) = snap.schema.attribute(name) else {
                continue;
            };
            let Some(guid) = def.schema_id_guid else {
                continue;
            };
            let item = (name.clone(), guid, def.search_flags & FCONFIDENTIAL != 0);
            match def.attribute_security_guid {
                Some(ps) => by_set.entry(ps).or_default().push(item),
                None => alone.push(item),
            }
        }
        let mut attrs = Vec::new();
        let mut sets: Vec<_> = by_set.into_iter().collect();
        sets.sort_by_key(|a| a.0);
        for (ps, members) in sets {
            list.push(1, ps)
                .map_err(|e| DirError::Other(e.to_string()))?;
            for (name, guid, conf) in members {
                let at = list
                    .push(2, guid)
                    .map_err(|e| DirError::Other(e.to_string()))?;
                attrs.push((name, at, conf));
            }
        }
        for (name, guid, conf) in alone {
            let at = list
                .push(1, guid)
                .map_err(|e| DirError::Other(e.to_string()))?;
            attrs.push((name, at, conf));
        }
        let types = Arc::new(ClassTypes { list, attrs });
        let mut classes = self.acl.classes.lock();
        if classes.len() >= CACHE_LIMIT {
            classes.clear();
        }
        classes.insert(key, types.clone());
        Ok(types)
    }

    /// What `p` may read of an object of structural class `class` whose descriptor is
    /// `sd` (stored as `sd_id`); `me` when the object is the caller's own.
    pub fn read_access(
        &self,
        snap: &SchemaSnapshot,
        p: &Principal,
        sd_id: u64,
        sd: &SecurityDescriptor,
        class: &str,
        me: bool,
    ) -> DirResult<Arc<ReadAccess>> {
        let key = ReadKey {
            sd: sd_id,
            me,
            token: p.id,
        };
        if let Some(found) = self.acl.reads.lock().get(&key).and_then(|list| {
            list.iter()
                .find(|(c, _)| c.eq_ignore_ascii_case(class))
                .map(|(_, a)| a.clone())
        }) {
            return Ok(found);
        }
        let types = self.class_types(snap, class)?;
        let check = AccessCheck::new(&p.token).with_self(me.then(|| p.token.user()));
        let desired = RIGHT_DS_READ_PROPERTY
            | RIGHT_DS_CONTROL_ACCESS
            | RIGHT_DS_LIST_CONTENTS
            | RIGHT_DS_LIST_OBJECT
            | RIGHT_READ_CONTROL;
        let result = check.evaluate(sd, desired, &types.list);
        let granted = result.granted_list();
        let mut hidden = Vec::new();
        for (name, at, confidential) in &types.attrs {
            let g = granted.get(*at).copied().unwrap_or(0);
            let need = if *confidential {
                RIGHT_DS_READ_PROPERTY | RIGHT_DS_CONTROL_ACCESS
            } else {
                RIGHT_DS_READ_PROPERTY
            };
            if g & need != need {
                hidden.push(name.clone());
            }
        }
        hidden.sort();
        let access = Arc::new(ReadAccess {
            object: result.granted(),
            hidden,
            hidden_ids: std::sync::OnceLock::new(),
        });
        let mut reads = self.acl.reads.lock();
        if reads.len() >= CACHE_LIMIT {
            reads.clear();
        }
        reads
            .entry(key)
            .or_default()
            .push((class.to_string(), access.clone()));
        Ok(access)
    }

    /// [`Directory::read_access`] of a stored object, `None` when it has no descriptor
    /// (nothing to check it against: it reads as the whole object).
    pub fn read_access_of<V: View + ?Sized>(
        &self,
        v: &V,
        snap: &SchemaSnapshot,
        p: &Principal,
        id: u64,
    ) -> DirResult<Option<Arc<ReadAccess>>> {
        let Some((sd_id, sd)) = self.object_descriptor(v, id)? else {
            return Ok(None);
        };
        let class = super::descriptors::structural_class(v, snap, id)?;
        let me = p.is_self(object_sid(v, id)?.as_ref());
        self.read_access(snap, p, sd_id, &sd, &class, me).map(Some)
    }

    /// Whether `p` sees object `id` (MS-ADTS 5.1.3.3.6): naming context heads always;
    /// others when the parent grants list contents, or in list-object mode list object
    /// on both the parent and the object.
    pub fn visible<V: View + ?Sized>(
        &self,
        v: &V,
        snap: &SchemaSnapshot,
        p: &Principal,
        id: u64,
    ) -> DirResult<bool> {
        let parent = v.parent_id(id)?.unwrap_or(0);
        if parent == 0 || v.int(id, "instanceType")?.unwrap_or(0) & 1 != 0 {
            return Ok(true);
        }
        let Some(pa) = self.read_access_of(v, snap, p, parent)? else {
            return Ok(true);
        };
        if pa.lists_children() {
            return Ok(true);
        }
        if pa.lists_object() && self.list_object_mode(v)? {
            return Ok(self
                .read_access_of(v, snap, p, id)?
                .is_none_or(|a| a.lists_object()));
        }
        Ok(false)
    }

    /// Whether dSHeuristics turns on list-object mode (its third character is '1').
    pub fn list_object_mode<V: View + ?Sized>(&self, v: &V) -> DirResult<bool> {
        Ok(self
            .ds_heuristics(v)?
            .is_some_and(|h| h.as_bytes().get(2) == Some(&b'1')))
    }

    /// Whether dSHeuristics lets anonymous callers do more than read the root DSE (its
    /// seventh character is '2', fLDAPBlockAnonOps off).
    pub fn anonymous_allowed<V: View + ?Sized>(&self, v: &V) -> DirResult<bool> {
        Ok(self
            .ds_heuristics(v)?
            .is_some_and(|h| h.as_bytes().get(6) == Some(&b'2')))
    }

    /// The forest's dSHeuristics (CN=Directory Service,CN=Windows NT,CN=Services in the
    /// configuration), read where it is stored.
    pub fn ds_heuristics<V: View + ?Sized>(&self, v: &V) -> DirResult<Option<String>> {
        let Some(domain) = self.domain() else {
            return Ok(None);
        };
        let mut dn = domain.config_dn.clone();
        for rdn in ["CN=Services", "CN=Windows NT", "CN=Directory Service"] {
            let r = kauri_db::Rdn::parse(rdn).map_err(|e| DirError::Other(e.to_string()))?;
            dn = dn.child(r);
        }
        match v.id_of(&dn)? {
            Some(id) => v.text(id, "dSHeuristics"),
            None => Ok(None),
        }
    }

    /// The rights `p` holds on object `id` among `desired`, for the object's class
    /// (`class_guid`) or, when `object_type` is given, for that property, property set,
    /// class of child, or control access right.
    fn rights_on<V: View + ?Sized>(
        &self,
        v: &V,
        p: &Principal,
        id: u64,
        desired: u32,
        class_guid: Guid,
        object_type: Option<Guid>,
    ) -> DirResult<u32> {
        let Some((_, sd)) = self.object_descriptor(v, id)? else {
            return Ok(desired);
        };
        let check = p.check(p.is_self(object_sid(v, id)?.as_ref()));
        Ok(match object_type {
            None => check.granted_for_class(&sd, desired, &class_guid),
            Some(t) => {
                let mut list = ObjectTypeList::new(class_guid);
                list.add(t);
                check
                    .evaluate(&sd, desired, &list)
                    .granted_for(&t)
                    .unwrap_or(0)
            }
        })
    }

    /// The rights among `desired` (create or delete child) `p` holds on `parent` for
    /// children of class `child_class`.
    fn child_rights<V: View + ?Sized>(
        &self,
        v: &V,
        snap: &SchemaSnapshot,
        p: &Principal,
        parent: u64,
        desired: u32,
        child_class: Guid,
    ) -> DirResult<u32> {
        let parent_class = super::descriptors::structural_class(v, snap, parent)?;
        self.rights_on(
            v,
            p,
            parent,
            desired,
            guid_of_class(snap, &parent_class),
            Some(child_class),
        )
    }

    /// Create child: RIGHT_DS_CREATE_CHILD on `parent` for the new object's class.
    pub(crate) fn check_create<V: View + ?Sized>(
        &self,
        v: &V,
        snap: &SchemaSnapshot,
        p: &Principal,
        parent: u64,
        class: &str,
    ) -> DirResult<()> {
        let class_guid = guid_of_class(snap, class);
        let got = self.child_rights(v, snap, p, parent, RIGHT_DS_CREATE_CHILD, class_guid)?;
        if got & RIGHT_DS_CREATE_CHILD == 0 {
            return Err(insufficient(&format!(
                "no right to create an object of class {class} here"
            )));
        }
        Ok(())
    }

    /// Delete: DELETE on the object, or DELETE_CHILD on its parent for its class; a tree
    /// delete needs DELETE_TREE on the object.
    pub(crate) fn check_delete<V: View + ?Sized>(
        &self,
        v: &V,
        snap: &SchemaSnapshot,
        p: &Principal,
        id: u64,
        tree: bool,
    ) -> DirResult<()> {
        let class = super::descriptors::structural_class(v, snap, id)?;
        let class_guid = guid_of_class(snap, &class);
        if tree {
            let got = self.rights_on(v, p, id, RIGHT_DS_DELETE_TREE, class_guid, None)?;
            if got & RIGHT_DS_DELETE_TREE != 0 {
                return Ok(());
            }
            return Err(insufficient("no right to delete this tree"));
        }
        if self.rights_on(v, p, id, RIGHT_DELETE, class_guid, None)? & RIGHT_DELETE != 0 {
            return Ok(());
        }
        self.check_delete_child(v, snap, p, id, class_guid)
    }

    fn check_delete_child<V: View + ?Sized>(
        &self,
        v: &V,
        snap: &SchemaSnapshot,
        p: &Principal,
        id: u64,
        class_guid: Guid,
    ) -> DirResult<()> {
        let parent = v.parent_id(id)?.unwrap_or(0);
        if parent != 0 {
            let got = self.child_rights(v, snap, p, parent, RIGHT_DS_DELETE_CHILD, class_guid)?;
            if got & RIGHT_DS_DELETE_CHILD != 0 {
                return Ok(());
            }
        }
        Err(insufficient("no right to delete this object"))
    }

    /// Rename or move (MS-ADTS 3.1.1.5.4.1.1): WRITE_PROPERTY on `name` and on the RDN
    /// attribute; a move also CREATE_CHILD on the new parent and DELETE on the object or
    /// DELETE_CHILD on the old parent.
    pub(crate) fn check_rename<V: View + ?Sized>(
        &self,
        v: &V,
        snap: &SchemaSnapshot,
        p: &Principal,
        id: u64,
        rdn_attr: &str,
        new_parent: Option<u64>,
    ) -> DirResult<()> {
        let class = super::descriptors::structural_class(v, snap, id)?;
        let class_guid = guid_of_class(snap, &class);
        for attr in ["name", rdn_attr] {
            if let Some(guid) = snap.schema.attribute(attr).and_then(|d| d.schema_id_guid) {
                let got =
                    self.rights_on(v, p, id, RIGHT_DS_WRITE_PROPERTY, class_guid, Some(guid))?;
                if got & RIGHT_DS_WRITE_PROPERTY == 0 {
                    return Err(insufficient(&format!("no right to write {attr}")));
                }
            }
        }
        if let Some(np) = new_parent {
            self.check_create(v, snap, p, np, &class)?;
            if self.rights_on(v, p, id, RIGHT_DELETE, class_guid, None)? & RIGHT_DELETE == 0 {
                self.check_delete_child(v, snap, p, id, class_guid)?;
            }
        }
        Ok(())
    }

    /// The rules on a descriptor given with an add (MS-ADTS 6.1.3.5): its owner is the
    /// caller unless the caller may restore (SeRestorePrivilege), and a SACL needs
    /// SeSecurityPrivilege.
    pub(crate) fn check_supplied_descriptor(
        &self,
        p: &Principal,
        supplied: Option<&[Vec<u8>]>,
    ) -> DirResult<()> {
        let Some(sd) = supplied
            .and_then(|v| v.first())
            .and_then(|b| SecurityDescriptor::from_bytes(b).ok())
        else {
            return Ok(());
        };
        if sd.owner.as_ref().is_some_and(|o| o != p.token.user()) && !p.privileges.restore {
            return Err(DirError::ConstraintViolation(
                "0000051B: AtrErr: DSID-030F22B2, #1: the owner must be the caller".into(),
            ));
        }
        if sd.sacl.is_some() && !p.privileges.security {
            return Err(DirError::ConstraintViolation(
                "00000522: a SACL needs SeSecurityPrivilege".into(),
            ));
        }
        Ok(())
    }

    /// Whether `p` holds control access right `right` on object `id`.
    pub(crate) fn has_control_access<V: View + ?Sized>(
        &self,
        v: &V,
        snap: &SchemaSnapshot,
        p: &Principal,
        id: u64,
        right: Guid,
    ) -> DirResult<bool> {
        let class = super::descriptors::structural_class(v, snap, id)?;
        let got = self.rights_on(
            v,
            p,
            id,
            RIGHT_DS_CONTROL_ACCESS,
            guid_of_class(snap, &class),
            Some(right),
        )?;
        Ok(got & RIGHT_DS_CONTROL_ACCESS != 0)
    }

    /// Which of `attrs` (lowercased names) `p` may not write on object `id`, and for each
    /// refused one whether a validated write (RIGHT_DS_SELF on the attribute's GUID)
    /// stands in: (name, validated write granted).
    pub(crate) fn unwritable<V: View + ?Sized>(
        &self,
        v: &V,
        snap: &SchemaSnapshot,
        p: &Principal,
        id: u64,
        attrs: &[String],
    ) -> DirResult<Vec<(String, bool)>> {
        let Some((_, sd)) = self.object_descriptor(v, id)? else {
            return Ok(Vec::new());
        };
        let class = super::descriptors::structural_class(v, snap, id)?;
        let types = self.class_types(snap, &class)?;
        let result = p.check(p.is_self(object_sid(v, id)?.as_ref())).evaluate(
            &sd,
            RIGHT_DS_WRITE_PROPERTY | RIGHT_DS_SELF,
            &types.list,
        );
        let granted = result.granted_list();
        let object = result.granted();
        let mut out = Vec::new();
        for name in attrs {
            let g = match types.attrs.iter().find(|(n, _, _)| n == name) {
                Some((_, at, _)) => granted.get(*at).copied().unwrap_or(0),
                // Not among the class's attributes (the schema refuses it later): the
                // object-level grant decides.
                None => object,
            };
            if g & RIGHT_DS_WRITE_PROPERTY == 0 {
                out.push((name.clone(), g & RIGHT_DS_SELF != 0));
            }
        }
        Ok(out)
    }

    /// The rights needed to write the parts `flags` of object `id`'s descriptor with
    /// `owner` as the new owner, if they are not held: WRITE_OWNER for owner or group,
    /// WRITE_DAC for the DACL, SeSecurityPrivilege for the SACL; an owner other than the
    /// caller needs SeRestorePrivilege (constraintViolation otherwise).
    pub(crate) fn check_descriptor_write<V: View + ?Sized>(
        &self,
        v: &V,
        p: &Principal,
        id: u64,
        flags: u32,
        owner: Option<&Sid>,
    ) -> DirResult<()> {
        use crate::security::descriptor::sd_flags;
        if let Some(o) = owner.filter(|_| flags & sd_flags::OWNER != 0) {
            if o != p.token.user() && !p.privileges.restore {
                return Err(DirError::ConstraintViolation(
                    "0000051B: AtrErr: DSID-030F22B2, #1: the owner must be the caller".into(),
                ));
            }
        }
        let Some((_, sd)) = self.object_descriptor(v, id)? else {
            return Ok(());
        };
        let got = p.check(p.is_self(object_sid(v, id)?.as_ref())).granted(
            &sd,
            RIGHT_WRITE_OWNER | RIGHT_WRITE_DAC | ACCESS_SYSTEM_SECURITY,
        );
        let owner_ok = got & RIGHT_WRITE_OWNER != 0 || p.privileges.take_ownership;
        if flags & (sd_flags::OWNER | sd_flags::GROUP) != 0 && !owner_ok {
            return Err(access_denied("no right to change the owner"));
        }
        if flags & sd_flags::DACL != 0 && got & RIGHT_WRITE_DAC == 0 {
            return Err(access_denied("no right to change the permissions"));
        }
        if flags & sd_flags::SACL != 0 && !p.privileges.security {
            return Err(access_denied(
                "changing the audit settings needs SeSecurityPrivilege",
            ));
        }
        Ok(())
    }
}

impl<B: Backend> Directory<B> {
    /// The access check of a modify of object `id` (MS-ADTS 3.1.1.5.3.1): WRITE_PROPERTY
    /// on every attribute changed, or for servicePrincipalName, dNSHostName and member the
    /// validated write with its value rules; a descriptor write the rights of the parts it
    /// replaces. Password rights are checked by the password code (a change needs
    /// User-Change-Password, a reset User-Force-Change-Password).
    pub(crate) fn check_modify(
        &self,
        w: &kauri_db::DbWrite<'_, B>,
        snap: &SchemaSnapshot,
        p: &Principal,
        id: u64,
        mods: &[kauri_db::Modification],
        sd_flags: Option<u32>,
    ) -> DirResult<()> {
        let mut names: Vec<String> = Vec::new();
        for m in mods {
            let Some(def) = snap.schema.attribute(&m.attr) else {
                continue;
            };
            let lower = def.ldap_name.to_ascii_lowercase();
            // Passwords: the rights depend on whether the request is a change or a reset,
            // which the password code decides (and checks) once the shape is valid.
            if super::credentials::is_password_attr(&lower) || super::access::is_secret(&lower) {
                continue;
            }
            if lower == "ntsecuritydescriptor" {
                use crate::security::descriptor::sd_flags as part;
                let flags = sd_flags.filter(|f| f & part::ALL != 0).unwrap_or(part::ALL);
                let owner = m
                    .values
                    .first()
                    .and_then(|v| SecurityDescriptor::from_bytes(v).ok())
                    .and_then(|sd| sd.owner);
                self.check_descriptor_write(w, p, id, flags, owner.as_ref())?;
                continue;
            }
            if !names.contains(&lower) {
                names.push(lower);
            }
        }
        for (name, validated) in self.unwritable(w, snap, p, id, &names)? {
            if !validated {
                return Err(insufficient(&format!("no right to write {name}")));
            }
            let changes: Vec<&kauri_db::Modification> = mods
                .iter()
                .filter(|m| m.attr.eq_ignore_ascii_case(&name))
                .collect();
            match name.as_str() {
                "serviceprincipalname" => validated_spns(w, id, &changes)?,
                "dnshostname" => validated_dns_host_name(w, self, id, &changes)?,
                "member" => validated_self_membership(w, p, &changes)?,
                _ => return Err(insufficient(&format!("no right to write {name}"))),
            }
        }
        Ok(())
    }
}

/// The account name without its trailing `$`, lowercased.
fn host_of_account<V: View + ?Sized>(v: &V, id: u64) -> DirResult<String> {
    let sam = v.text(id, "sAMAccountName")?.unwrap_or_default();
    Ok(sam.trim_end_matches('$').to_ascii_lowercase())
}

/// Validated-SPN (MS-ADTS 3.1.1.5.3.1.1.4): every SPN added names the computer itself
/// (its dNSHostName, additional host names, or account name) as host; removals pass.
fn validated_spns<V: View + ?Sized>(
    v: &V,
    id: u64,
    changes: &[&kauri_db::Modification],
) -> DirResult<()> {
    let mut hosts: Vec<String> = v
        .values(id, "dNSHostName")?
        .into_iter()
        .chain(v.values(id, "msDS-AdditionalDnsHostName")?)
        .map(|h| String::from_utf8_lossy(&h).to_ascii_lowercase())
        .collect();
    hosts.push(host_of_account(v, id)?);
    for m in changes {
        if m.op == kauri_db::ModifyOp::Delete {
            continue;
        }
        for value in &m.values {
            let text = String::from_utf8_lossy(value).to_ascii_lowercase();
            let host = text
                .split('/')
                .nth(1)
                .map(|h| h.split(':').next().unwrap_or(h))
                .unwrap_or("");
            if !hosts.iter().any(|h| h == host) {
                return Err(DirError::ConstraintViolation(format!(
                    "0000202F: the service principal name {text} does not name this computer"
                )));
            }
        }
    }
    Ok(())
}

/// Validated-DNS-Host-Name: the name is `<account name>.<the domain's DNS name>`.
fn validated_dns_host_name<B: Backend, V: View + ?Sized>(
    v: &V,
    dir: &Directory<B>,
    id: u64,
    changes: &[&kauri_db::Modification],
) -> DirResult<()> {
    let domain = dir
        .domain()
        .map(|d| d.dns_name.to_ascii_lowercase())
        .unwrap_or_default();
    let want = format!("{}.{domain}", host_of_account(v, id)?);
    for m in changes {
        if m.op == kauri_db::ModifyOp::Delete {
            continue;
        }
        for value in &m.values {
            if !String::from_utf8_lossy(value).eq_ignore_ascii_case(&want) {
                return Err(DirError::ConstraintViolation(format!(
                    "0000202F: dNSHostName must be {want}"
                )));
            }
        }
    }
    Ok(())
}

/// Self-Membership: the only member added or removed is the caller.
fn validated_self_membership<V: View + ?Sized>(
    v: &V,
    p: &Principal,
    changes: &[&kauri_db::Modification],
) -> DirResult<()> {
    for m in changes {
        if m.values.is_empty() || m.op == kauri_db::ModifyOp::Replace {
            return Err(insufficient("only oneself may be added or removed"));
        }
        for value in &m.values {
            let target = std::str::from_utf8(value)
                .ok()
                .and_then(|t| kauri_db::Dn::parse(t).ok())
                .map(|dn| v.id_of(&dn))
                .transpose()?
                .flatten();
            if target.is_none() || target != p.account {
                return Err(insufficient("only oneself may be added or removed"));
            }
        }
    }
    Ok(())
}

/// The groups the well-known principals of a network logon (Everyone, Authenticated
/// Users) are members of, through their foreign security principal objects.
fn well_known_memberships<V: View + ?Sized>(v: &V) -> DirResult<Vec<Sid>> {
    let mut out = Vec::new();
    for sid in [well_known::authenticated_users(), well_known::world()] {
        for fsp in v.find("objectSid", &sid.to_bytes())? {
            let groups = super::token::token_walk(fsp, v.links(fsp, "memberOf")?, |g| {
                let sid = v
                    .values(g, "objectSid")?
                    .first()
                    .and_then(|b| Sid::from_bytes(b).ok());
                Ok((sid, v.links(g, "memberOf")?))
            })?;
            out.extend(groups.into_iter().map(|(_, s)| s));
        }
    }
    Ok(out)
}
