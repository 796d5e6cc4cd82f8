//! Deleting and renaming. In a domain a deleted object becomes a tombstone the AD way:
//! its links removed, most attributes stripped (those whose `searchFlags` say
//! preserve-on-delete stay), `isDeleted` set, `lastKnownParent` kept, renamed to
//! `<name>\0ADEL:<GUID>` and moved to `CN=Deleted Objects` of its naming context, where
//! the collector purges it after the tombstone lifetime.

use kauri_db::syntax::{generalized_time, guid_to_string};
use kauri_db::{DbWrite, Dn, Modification, ModifyOp, Rdn};
use kauri_kv::Backend;

use super::access::Access;
use super::add::{attribute_def, canonical_rdn, check_values};
use super::classes::SchemaSnapshot;
use super::error::{DirError, DirResult};
use super::info::DomainInfo;
use super::view::View;
use super::{is_tombstone, may_live_below, no_such_object, now_secs, Directory, Request, TreeStep};
use crate::schema::FPRESERVEONDELETE;
use crate::sid::Sid;

/// `systemFlags` bit: the object cannot be deleted.
const FLAG_DISALLOW_DELETE: u32 = 0x8000_0000;
/// `systemFlags` bit: a deleted object stays below its parent instead of moving to
/// Deleted Objects.
pub(crate) const FLAG_DISALLOW_MOVE_ON_DELETE: u32 = 0x0200_0000;
/// `systemFlags` bit: a configuration object may be renamed.
pub(crate) const FLAG_CONFIG_ALLOW_RENAME: u32 = 0x4000_0000;
/// `systemFlags` bit: a configuration object may move within its parent's kind.
pub(crate) const FLAG_CONFIG_ALLOW_LIMITED_MOVE: u32 = 0x1000_0000;
/// `systemFlags` bit: a configuration object may move anywhere in its partition.
const FLAG_CONFIG_ALLOW_MOVE: u32 = 0x2000_0000;
/// `systemFlags` bit: a schema object the base schema defines (never renamed).
const FLAG_SCHEMA_BASE_OBJECT: u32 = 0x10;
/// `systemFlags` bit: the object cannot be renamed.
const FLAG_DOMAIN_DISALLOW_RENAME: u32 = 0x0800_0000;
/// `systemFlags` bit: the object cannot be moved.
const FLAG_DOMAIN_DISALLOW_MOVE: u32 = 0x0400_0000;

/// The value of a new RDN's first AVA.
fn new_rdn_value(rdn: &Rdn) -> String {
    rdn.avas()
        .first()
        .map(|a| a.value.clone())
        .unwrap_or_default()
}
/// Days a tombstone is kept when the forest does not say (MS-ADTS 6.1.1.2.4.1.3).
pub const DEFAULT_TOMBSTONE_LIFETIME_DAYS: u64 = 180;

/// Attributes a tombstone keeps whatever their searchFlags (MS-ADTS 3.1.1.5.5.1.1).
const KEPT_ON_DELETE: &[&str] = &[
    "attributeid",
    "attributesyntax",
    "dnreferenceupdate",
    "dnshostname",
    "flatname",
    "governsid",
    "grouptype",
    "instancetype",
    "ldapdisplayname",
    "legacyexchangedn",
    "ms-ds-creatorsid",
    "msmqownerid",
    "ncname",
    "objectclass",
    "objectguid",
    "objectsid",
    "omsyntax",
    "proxiedobjectname",
    "name",
    "ntsecuritydescriptor",
    "samaccountname",
    "securityidentifier",
    "sidhistory",
    "subclassof",
    "systemflags",
    "trustpartner",
    "trustdirection",
    "trusttype",
    "trustattributes",
    "useraccountcontrol",
    "usnchanged",
    "usncreated",
    "whencreated",
    "whenchanged",
    "isdeleted",
    "lastknownparent",
    "cn",
];

impl<B: Backend> Directory<B> {
    /// Deletes an entry (with `tree`, its subtree): tombstones in a domain, plain removal
    /// otherwise. With `step`, a tree delete goes as far as the step allows, the deepest
    /// objects first, and answers [`DirError::TreeDeleteNotFinished`] when objects remain
    /// (the entry itself goes last). A plain tree delete checks the whole subtree for
    /// critical system objects before deleting anything; a step checks what it deletes
    /// (the whole subtree was checked by [`Directory::check_tree_delete`]).
    pub(crate) fn delete(
        &self,
        w: &mut DbWrite<'_, B>,
        req: &Request,
        dn: &Dn,
        tree: bool,
        step: Option<TreeStep>,
    ) -> DirResult<()> {
        let Some(domain) = self.domain() else {
            Access::of(&req.caller).may_change_tree()?;
            w.delete(dn, tree)?;
            return Ok(());
        };
        let id = w.id_of(dn)?.ok_or_else(|| no_such_object(dn))?;
        if !req.caller.is_system() && is_tombstone(w, id) {
            return Err(no_such_object(dn));
        }
        if let Some(p) = self.principal(w, &req.caller)? {
            let snap = self.working_schema();
            self.check_delete(w, &snap, &p, id, tree)?;
        }
        if !req.caller.is_system() {
            self.check_deletable(w, &domain, id, dn)?;
        }
        if !tree && w.has_children(id)? {
            return Err(DirError::Db(kauri_db::DbError::NotAllowedOnNonLeaf(
                format!(
                    "00002015: SvcErr: DSID-031A11E9, problem 5003 (WILL_NOT_PERFORM): {dn} has \
                 children"
                ),
            )));
        }
        let guard = tree && !req.caller.is_system();
        let (victims, finished) = match step {
            Some(s) => deepest_first(w, id, s.max.max(1))?,
            None => {
                if guard {
                    refuse_critical_below(w, id)?;
                }
                let mut order = live_subtree(w, id)?;
                // Children first, so each moves out of a parent that still exists.
                order.reverse();
                (order, true)
            }
        };
        let snap = self.schema();
        for &victim in &victims {
            // A step checks what it deletes: the subtree may have changed since
            // [`Directory::check_tree_delete`] looked at it.
            if step.is_some() && guard {
                refuse_critical(w, victim)?;
            }
            self.tombstone(w, &snap, &domain, victim, req.caller.is_system())?;
        }
        if !finished {
            return Err(DirError::TreeDeleteNotFinished(format!(
                "000020CD: SvcErr: problem 5008 (ADMIN_LIMIT_EXCEEDED), data 0: the tree \
                 delete is not finished: {} objects were deleted below {dn}, and more remain",
                victims.len()
            )));
        }
        Ok(())
    }

    /// What AD never lets a client delete (MS-ADTS 3.1.1.5.5.3): this DC's NTDS Settings
    /// and RID Set, the cross-references of the domain, configuration and schema, objects
    /// whose systemFlags forbid it, naming-context heads, and the domain's well-known
    /// principals (RID below 1000).
    fn check_deletable(
        &self,
        w: &DbWrite<'_, B>,
        domain: &DomainInfo,
        id: u64,
        dn: &Dn,
    ) -> DirResult<()> {
        let refuse = |why: &str| {
            Err(DirError::UnwillingToPerform(format!(
                "000020CE: SvcErr: problem 5003 (WILL_NOT_PERFORM): {dn} {why}"
            )))
        };
        if domain.ntds_settings.as_ref() == Some(dn) {
            return refuse("is this domain controller's NTDS Settings object");
        }
        if let Some(computer) = &domain.dc_computer {
            if let Some(cid) = w.id_of(computer)? {
                let rid_set = w.text(cid, "rIDSetReferences")?;
                if rid_set.is_some_and(|r| Dn::parse(&r).is_ok_and(|r| r == *dn)) {
                    return refuse("is this domain controller's RID Set");
                }
            }
        }
        let classes = w.values(id, "objectClass")?;
        if classes.iter().any(|c| c.eq_ignore_ascii_case(b"crossRef")) {
            let nc = w.text(id, "nCName")?.and_then(|t| Dn::parse(&t).ok());
            if let Some(nc) = nc {
                if nc == domain.schema_dn {
                    return refuse("is the schema's cross-reference");
                }
                if nc == domain.domain_dn || nc == domain.config_dn {
                    return Err(DirError::NotAllowedOnNonLeaf(format!(
                        "00002015: SvcErr: problem 5003 (WILL_NOT_PERFORM): {dn} is the \
                         cross-reference of a naming context this domain controller holds"
                    )));
                }
            }
        }
        let flags = w.int(id, "systemFlags")?.map(|f| f as u32).unwrap_or(0);
        let is_head = domain.is_nc_head(dn);
        if flags & FLAG_DISALLOW_DELETE != 0 || is_head {
            return refuse("is a system object that cannot be deleted");
        }
        // The domain's own principals: the well-known ones (RID below 1000) stay; a group
        // stays while an account holds it as primary group.
        let rid = w
            .values(id, "objectSid")?
            .into_iter()
            .next()
            .and_then(|b| Sid::from_bytes(&b).ok())
            .filter(|s| s.domain().as_ref() == Some(&domain.sid))
            .and_then(|s| s.rid());
        if let Some(rid) = rid {
            if rid < 1000 {
                return Err(DirError::Other(format!(
                    "000020CE: SvcErr: problem 5003 (WILL_NOT_PERFORM): {dn} is a well-known \
                     security principal of the domain and cannot be deleted"
                )));
            }
            let is_group = classes.iter().any(|c| c.eq_ignore_ascii_case(b"group"));
            let holders = w.find("primaryGroupID", rid.to_string().as_bytes())?;
            if is_group && holders.iter().any(|h| !is_tombstone(w, *h)) {
                return Err(DirError::EntryAlreadyExists(format!(
                    "00000562: UpdErr: problem 6005 (ENTRY_EXISTS): {dn} is the primary group \
                     of an account; give the account another primary group first"
                )));
            }
        }
        Ok(())
    }

    /// Turns one object into a tombstone.
    fn tombstone(
        &self,
        w: &mut DbWrite<'_, B>,
        snap: &SchemaSnapshot,
        domain: &DomainInfo,
        id: u64,
        system: bool,
    ) -> DirResult<()> {
        let dn = Dn::parse(&w.dn_of(id)?)
            .map_err(|e| DirError::UnwillingToPerform(format!("stored DN: {e}")))?;
        if w.text(id, "isDeleted")?
            .is_some_and(|v| v.eq_ignore_ascii_case("TRUE"))
        {
            return Err(DirError::UnwillingToPerform(format!(
                "{dn} is already deleted"
            )));
        }
        let flags = w
            .int(id, "systemFlags")?
            .map(|f| f as u32)
            .unwrap_or_default();
        let is_head = domain.is_nc_head(&dn);
        if !system && (flags & FLAG_DISALLOW_DELETE != 0 || is_head) {
            return Err(DirError::UnwillingToPerform(format!(
                "000020CE: SvcErr: problem 5003 (WILL_NOT_PERFORM): {dn} is a system object \
                 that cannot be deleted"
            )));
        }
        let graveyard = domain
            .deleted_objects_of(&dn)
            .ok_or_else(|| DirError::UnwillingToPerform("no Deleted Objects container".into()))?;
        let stays = flags & FLAG_DISALLOW_MOVE_ON_DELETE != 0;
        if dn == graveyard {
            return Err(DirError::UnwillingToPerform(
                "the Deleted Objects container cannot be deleted".into(),
            ));
        }
        if w.id_of(&graveyard)?.is_none() {
            // A naming context without a Deleted Objects container: remove outright.
            w.delete(&dn, false)?;
            return Ok(());
        }
        let parent = dn.parent().unwrap_or_else(Dn::root);
        let guid = w
            .values(id, "objectGUID")?
            .into_iter()
            .next()
            .and_then(|g| <[u8; 16]>::try_from(g.as_slice()).ok());
        // Links go first: a tombstone is in no group and has no members. As in AD, the
        // groups that lose the member keep their uSNChanged: the delete is the change.
        w.remove_all_links(id, true)?;
        let names: Vec<String> = match w.record(id)? {
            Some(rec) => rec.attrs().map(|a| a.id).collect::<Vec<u32>>(),
            None => Vec::new(),
        }
        .into_iter()
        .filter_map(|a| w.attribute_name(a))
        .collect();
        let rdn_attrs: Vec<String> = dn
            .rdn()
            .map(|r| {
                r.avas()
                    .iter()
                    .map(|a| a.attr.to_ascii_lowercase())
                    .collect()
            })
            .unwrap_or_default();
        let mut mods = Vec::new();
        for name in names {
            let lower = name.to_ascii_lowercase();
            // The naming attribute changes with the rename below.
            if KEPT_ON_DELETE.contains(&lower.as_str()) || rdn_attrs.contains(&lower) {
                continue;
            }
            let preserve = attribute_def(&snap.schema, &name)
                .map(|d| d.search_flags & FPRESERVEONDELETE != 0)
                .unwrap_or(false);
            if !preserve {
                mods.push(Modification {
                    op: ModifyOp::Delete,
                    attr: name,
                    values: Vec::new(),
                });
            }
        }
        let now = generalized_time(now_secs());
        mods.push(Modification::new(ModifyOp::Replace, "isDeleted", &["TRUE"]));
        mods.push(Modification::new(
            ModifyOp::Replace,
            "lastKnownParent",
            &[&parent.to_string()],
        ));
        mods.push(Modification::new(ModifyOp::Replace, "whenChanged", &[&now]));
        w.modify(&dn, &mods)?;
        // The name: `<value>\nDEL:<guid>`, below CN=Deleted Objects.
        let rdn = dn
            .rdn()
            .cloned()
            .ok_or_else(|| DirError::UnwillingToPerform("cannot delete the root".into()))?;
        let (attr, value) = rdn
            .avas()
            .first()
            .map(|a| (a.attr.clone(), a.value.clone()))
            .unwrap_or_default();
        let guid_text = guid.map(|g| guid_to_string(&g)).unwrap_or_default();
        let mangled = format!("{value}\nDEL:{guid_text}");
        let new_rdn = Rdn::new(&attr, &mangled)
            .map_err(|e| DirError::UnwillingToPerform(format!("tombstone name: {e}")))?;
        // Sites and servers keep their place (their children may still be there).
        let home = if stays { parent.clone() } else { graveyard };
        w.rename(&dn, &new_rdn, true, Some(&home))?;
        let new_dn = home.child(new_rdn);
        w.modify(
            &new_dn,
            &[Modification::new(ModifyOp::Replace, "name", &[&mangled])],
        )?;
        Ok(())
    }

    /// Renames or moves an entry: the naming attribute of its class, a parent its class
    /// may live below, `name` and `whenChanged` following.
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn rename(
        &self,
        w: &mut DbWrite<'_, B>,
        req: &Request,
        snap: &SchemaSnapshot,
        dn: &Dn,
        new_rdn: &Rdn,
        delete_old_rdn: bool,
        new_parent: Option<&Dn>,
    ) -> DirResult<()> {
        let Some(domain) = self.domain() else {
            Access::of(&req.caller).may_change_tree()?;
            w.rename(dn, new_rdn, delete_old_rdn, new_parent)?;
            return Ok(());
        };
        let id = w.id_of(dn)?.ok_or_else(|| no_such_object(dn))?;
        let system = req.caller.is_system();
        if !system {
            self.check_movable(w, &domain, id, dn, new_rdn, new_parent)?;
        }
        if let Some(p) = self.principal(w, &req.caller)? {
            let rdn_attr = dn
                .rdn()
                .and_then(|r| r.avas().first())
                .map(|a| a.attr.clone())
                .unwrap_or_default();
            // A new parent that does not exist is refused below, as before any check.
            let moved_to = match new_parent {
                Some(np) if Some(np) != dn.parent().as_ref() => w.id_of(np)?,
                _ => None,
            };
            self.check_rename(w, snap, &p, id, &rdn_attr, moved_to)?;
        }
        let classes: Vec<String> = w
            .values(id, "objectClass")?
            .iter()
            .map(|v| String::from_utf8_lossy(v).into_owned())
            .collect();
        let refs: Vec<&str> = classes.iter().map(String::as_str).collect();
        let set = snap.class_set(&refs)?;
        let rdn_attr = new_rdn
            .avas()
            .first()
            .map(|a| a.attr.clone())
            .unwrap_or_default();
        let def = attribute_def(&snap.schema, &rdn_attr)?;
        // A rename cannot change the naming attribute (unwillingToPerform, where an add
        // with the wrong one is a naming violation).
        if def.ldap_name.to_ascii_lowercase() != set.rdn_attr && !req.caller.is_system() {
            return Err(DirError::UnwillingToPerform(format!(
                "00002073: objects of class {} are named by {}",
                set.structural, set.rdn_attr
            )));
        }
        if set.is("subnet") && !req.caller.is_system() {
            let name = new_rdn.avas().first().map(|a| a.value.as_str());
            super::add::check_subnet_name(name.unwrap_or_default())?;
        }
        let target_parent = match new_parent {
            Some(p) => p.clone(),
            None => dn.parent().unwrap_or_else(Dn::root),
        };
        if let Some(p) = new_parent {
            if domain.deleted_objects_of(p).as_ref() == Some(p) && !req.caller.is_system() {
                return Err(DirError::UnwillingToPerform(
                    "objects are moved to Deleted Objects by deleting them".into(),
                ));
            }
            // AD answers a move below a missing parent with `other`.
            let pid = w.id_of(p)?.ok_or_else(|| {
                DirError::Other(format!(
                    "00002089: UpdErr: DSID-031B0CE7, problem 5012 (DIR_ERROR), data 2: new \
                     parent {p} does not exist"
                ))
            })?;
            if !system && is_tombstone(w, pid) {
                return Err(no_such_object(&format_args!("new parent {p}")));
            }
            if !system && !may_live_below(w, pid, &set)? {
                return Err(DirError::NamingViolation(format!(
                    "00002099: NameErr: problem 2005 (NAMING_VIOLATION): an object of class {} \
                     cannot be moved below {p}",
                    set.structural
                )));
            }
        }
        // AD's naming attributes are single-valued: the old RDN value always goes.
        let delete_old_rdn = delete_old_rdn || def.single_valued;
        check_values(def, &[new_rdn_value(new_rdn).into_bytes()])?;
        let new_rdn = &canonical_rdn(&snap.schema, new_rdn);
        w.rename(dn, new_rdn, delete_old_rdn, new_parent)?;
        let new_dn = target_parent.child(new_rdn.clone());
        let name = new_rdn_value(new_rdn);
        w.modify(
            &new_dn,
            &[
                Modification::new(ModifyOp::Replace, "name", &[&name]),
                Modification::new(
                    ModifyOp::Replace,
                    "whenChanged",
                    &[&generalized_time(now_secs())],
                ),
            ],
        )?;
        // A moved object inherits from its new parent, and its subtree after it.
        if new_parent.is_some_and(|p| Some(p) != dn.parent().as_ref()) {
            self.reinherit_moved(w, id)?;
        }
        Ok(())
    }

    /// What a client may not rename or move: naming-context heads, Deleted Objects
    /// containers, tombstones, objects whose systemFlags forbid it, and moves to another
    /// naming context.
    fn check_movable(
        &self,
        w: &DbWrite<'_, B>,
        domain: &DomainInfo,
        id: u64,
        dn: &Dn,
        new_rdn: &Rdn,
        new_parent: Option<&Dn>,
    ) -> DirResult<()> {
        let refuse = |why: &str| {
            Err(DirError::UnwillingToPerform(format!(
                "00002089: SvcErr: problem 5003 (WILL_NOT_PERFORM): {dn} {why}"
            )))
        };
        if is_tombstone(w, id) {
            return Err(no_such_object(dn));
        }
        if domain.is_nc_head(dn) {
            // A destination above every naming context held has no parent object here
            // (AD's DIR_ERROR); anywhere else the head just does not move.
            let target = new_parent.cloned().or_else(|| dn.parent());
            if !target.as_ref().is_some_and(|t| domain.holds(t)) {
                return Err(DirError::Other(format!(
                    "00002089: UpdErr: DSID-031B0CE7, problem 5012 (DIR_ERROR), data 2: no \
                     parent object for {new_rdn} above the naming contexts held here"
                )));
            }
            return refuse("is the head of a naming context");
        }
        if domain.deleted_objects_of(dn).as_ref() == Some(dn) {
            return refuse("is a Deleted Objects container");
        }
        let flags = w.int(id, "systemFlags")?.map(|f| f as u32).unwrap_or(0);
        let moved = new_parent.is_some_and(|p| dn.parent().as_ref() != Some(p));
        // As AD judges it: a new parent makes a move, whatever the name; otherwise a
        // new name makes a rename.
        let renamed = !moved && dn.rdn() != Some(new_rdn);
        // What lives below CN=System stays below it.
        let system_dn = Rdn::parse("CN=System")
            .ok()
            .map(|r| domain.domain_dn.child(r));
        if let (Some(sys), Some(p)) = (&system_dn, new_parent) {
            if dn.is_descendant_of(sys) && !(p == sys || p.is_descendant_of(sys)) {
                return Err(DirError::Other(format!(
                    "00002089: {dn} is below CN=System and has to stay there"
                )));
            }
        }
        let classes = w.values(id, "objectClass")?;
        if classes
            .iter()
            .any(|c| c.eq_ignore_ascii_case(b"secret") || c.eq_ignore_ascii_case(b"trustedDomain"))
        {
            return refuse("is an LSA object");
        }
        if renamed && flags & FLAG_DOMAIN_DISALLOW_RENAME != 0 {
            return refuse("is a system object that cannot be renamed");
        }
        let nc = domain.nc_of(dn);
        // The schema and configuration partitions allow only what an object's systemFlags
        // grant (none by default).
        if nc == &domain.schema_dn {
            if moved {
                return refuse("is a schema object and cannot be moved");
            }
            if renamed && flags & FLAG_SCHEMA_BASE_OBJECT != 0 {
                return refuse("is part of the base schema and cannot be renamed");
            }
        } else if nc == &domain.config_dn {
            if let (true, Some(p)) = (moved, new_parent) {
                // A limited move keeps the object's great-grandparent (a server moving
                // between sites).
                let up3 = dn
                    .parent()
                    .and_then(|x| x.parent())
                    .and_then(|x| x.parent());
                let limited = flags & FLAG_CONFIG_ALLOW_LIMITED_MOVE != 0
                    && up3.is_some()
                    && up3 == p.parent().and_then(|x| x.parent());
                if flags & FLAG_CONFIG_ALLOW_MOVE == 0 && !limited {
                    return refuse("is a configuration object whose systemFlags forbid moving");
                }
            }
            if renamed && flags & FLAG_CONFIG_ALLOW_RENAME == 0 {
                return refuse("is a configuration object whose systemFlags forbid renaming");
            }
        }
        if let Some(p) = new_parent {
            if moved && flags & FLAG_DOMAIN_DISALLOW_MOVE != 0 {
                return refuse("is a system object that cannot be moved");
            }
            if domain.nc_of(p) != domain.nc_of(dn) {
                return Err(DirError::AffectsMultipleDsas(format!(
                    "00002091: {dn} cannot move to another naming context"
                )));
            }
        }
        Ok(())
    }

    /// Purges tombstones older than the forest's tombstone lifetime; returns how many.
    /// Runs as the server, in the writer's transaction.
    pub fn collect_tombstones(&self, w: &mut DbWrite<'_, B>) -> DirResult<usize> {
        let Some(domain) = self.domain() else {
            return Ok(0);
        };
        let lifetime_days = Rdn::parse("CN=Directory Service")
            .ok()
            .zip(Rdn::parse("CN=Windows NT").ok())
            .zip(Rdn::parse("CN=Services").ok())
            .map(|((ds, nt), services)| domain.config_dn.child(services).child(nt).child(ds))
            .and_then(|dn| w.id_of(&dn).ok().flatten())
            .and_then(|id| w.int(id, "tombstoneLifetime").ok().flatten())
            .and_then(|d| u64::try_from(d).ok())
            .filter(|d| *d > 0)
            .unwrap_or(DEFAULT_TOMBSTONE_LIFETIME_DAYS);
        let cutoff = now_secs().saturating_sub(lifetime_days * 86_400);
        let cutoff_text = generalized_time(cutoff);
        let mut purged = 0;
        for nc in [&domain.domain_dn, &domain.config_dn] {
            let Some(graveyard) = domain.deleted_objects_of(nc) else {
                continue;
            };
            let Some(gid) = w.id_of(&graveyard)? else {
                continue;
            };
            for child in w.children(gid)? {
                let changed = w.text(child, "whenChanged")?.unwrap_or_default();
                // GeneralizedTime texts of one form order as their times.
                if !changed.is_empty() && changed < cutoff_text {
                    let dn = Dn::parse(&w.dn_of(child)?)
                        .map_err(|e| DirError::UnwillingToPerform(format!("stored DN: {e}")))?;
                    w.delete(&dn, true)?;
                    purged += 1;
                }
            }
        }
        Ok(purged)
    }
}

impl<B: Backend> Directory<B> {
    /// Refuses, before the first step of a stepwise tree delete, a subtree that holds a
    /// critical system object, as AD refuses the whole tree delete. It reads a snapshot,
    /// outside the writer, so checking a large tree holds up no other write; each step
    /// checks again what it deletes.
    pub fn check_tree_delete(&self, dn: &Dn) -> DirResult<()> {
        if self.domain().is_none() {
            return Ok(());
        }
        let r = self.db().read()?;
        match r.id_of(dn)? {
            Some(id) => refuse_critical_below(&r, id),
            // The step answers noSuchObject.
            None => Ok(()),
        }
    }
}

/// The live objects of the subtree at `root` (tombstones kept in place below a deleted
/// site or server are deleted already), parents before their children.
fn live_subtree<V: View>(v: &V, root: u64) -> DirResult<Vec<u64>> {
    let mut order = vec![root];
    let mut i = 0;
    while let Some(&cur) = order.get(i) {
        let live = v
            .children(cur)?
            .into_iter()
            .filter(|c| !is_tombstone(v, *c));
        order.extend(live);
        i += 1;
    }
    Ok(order)
}

/// AD's refusal to tree-delete a critical system object.
fn refuse_critical<V: View>(v: &V, victim: u64) -> DirResult<()> {
    if v.text(victim, "isCriticalSystemObject")?
        .is_some_and(|t| t.eq_ignore_ascii_case("TRUE"))
    {
        return Err(DirError::UnwillingToPerform(format!(
            "000020CE: SvcErr: problem 5003 (WILL_NOT_PERFORM): {} is a critical system \
             object and cannot be removed by a tree delete",
            v.dn_of(victim)?
        )));
    }
    Ok(())
}

/// [`refuse_critical`] for every live object of a subtree.
fn refuse_critical_below<V: View>(v: &V, root: u64) -> DirResult<()> {
    for id in live_subtree(v, root)? {
        refuse_critical(v, id)?;
    }
    Ok(())
}

/// At most `max` live objects of the subtree at `root`, children before their parents (a
/// depth-first walk in post-order that stops as soon as it has `max`), and whether that is
/// the whole subtree (then `root` is the last).
fn deepest_first<B: Backend>(
    w: &DbWrite<'_, B>,
    root: u64,
    max: usize,
) -> DirResult<(Vec<u64>, bool)> {
    let mut out = Vec::new();
    // Each frame: an object and its children not visited yet (tombstones are skipped as
    // they come up, so a wide container costs a scan of its child ids, not their records).
    let mut stack: Vec<(u64, std::vec::IntoIter<u64>)> =
        vec![(root, w.children(root)?.into_iter())];
    while let Some((id, children)) = stack.last_mut() {
        let id = *id;
        match children.find(|c| !is_tombstone(w, *c)) {
            Some(child) => {
                let grandchildren = w.children(child)?.into_iter();
                stack.push((child, grandchildren));
            }
            None => {
                stack.pop();
                out.push(id);
                if out.len() >= max {
                    return Ok((out, stack.is_empty()));
                }
            }
        }
    }
    Ok((out, true))
}
