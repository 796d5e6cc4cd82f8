//! Modifying an entry: every attribute checked against the schema and against what the
//! entry's classes allow after the change, principals kept consistent (account types
//! follow `userAccountControl` and `groupType`, names stay unique, groups nest by AD's
//! rules), passwords turned into stored secrets, and `whenChanged` moved.

use std::collections::HashMap;

use kauri_db::syntax::generalized_time;
use kauri_db::{DbWrite, Dn, Modification, ModifyOp};
use kauri_kv::Backend;

use super::add::{
    attribute_def, canonical_times, check_link_targets, check_nesting, check_role_owner,
    check_unique_spns, check_values, check_writable, Attrs,
};
use super::classes::SchemaSnapshot;
use super::credentials::is_password_attr;
use super::error::{DirError, DirResult};
use super::principal::{self, Scope};
use super::view::View;
use super::{is_tombstone, no_such_object, now_secs, Directory, Request};

impl<B: Backend> Directory<B> {
    /// Applies a modify request (see the module docs).
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn modify(
        &self,
        w: &mut DbWrite<'_, B>,
        req: &Request,
        snap: &SchemaSnapshot,
        dn: &Dn,
        mods: &[Modification],
        permissive: bool,
        sd_flags: Option<u32>,
    ) -> DirResult<()> {
        // AD refuses a modify that changes nothing before it looks for the object.
        if mods.is_empty() && !req.caller.is_system() {
            return Err(DirError::UnwillingToPerform(
                "00000057: LdapErr: DSID-0C090C78, comment: a modify request needs at least one \
                 change, data 0, v4563"
                    .into(),
            ));
        }
        let id = w.id_of(dn)?.ok_or_else(|| no_such_object(dn))?;
        // Names come before rights: an attribute the schema does not know is that, for
        // anyone (AD resolves the request's attributes first).
        for m in mods {
            attribute_def(&snap.schema, &m.attr)?;
        }
        if let Some(p) = self.principal(w, &req.caller)? {
            self.check_modify(w, snap, &p, id, mods, sd_flags)?;
        }
        let system = req.caller.is_system();
        // Tombstones are the server's (the collector, bookkeeping).
        if !system && is_tombstone(w, id) {
            return Err(no_such_object(dn));
        }
        let admin = req.caller.is_admin();
        let schema = &snap.schema;
        let current_oc: Vec<String> = w
            .values(id, "objectClass")?
            .iter()
            .map(|v| String::from_utf8_lossy(v).into_owned())
            .collect();
        let mut out: Vec<Modification> = Vec::with_capacity(mods.len() + 2);
        let mut passwords: Vec<Modification> = Vec::new();
        let mut oc = current_oc.clone();
        let mut oc_changed = false;
        let kept = sam_kept_attributes(&current_oc);
        let mut descriptions: Option<usize> = None;
        let rdn_attr = dn
            .rdn()
            .and_then(|r| r.avas().first())
            .map(|a| a.attr.to_ascii_lowercase());
        let mut descriptor_written = false;
        for m in mods {
            let def = attribute_def(schema, &m.attr)?;
            let name = def.ldap_name.clone();
            let lower = name.to_ascii_lowercase();
            let removes =
                m.values.is_empty() && matches!(m.op, ModifyOp::Delete | ModifyOp::Replace);
            if removes && !system && kept.contains(&lower.as_str()) {
                return Err(DirError::UnwillingToPerform(format!(
                    "{name} cannot be removed from a security principal"
                )));
            }
            // SAM objects keep one description through modifies (several are allowed
            // only when the object is created), as AD's SAM answers.
            if lower == "description" && !system && !kept.is_empty() {
                // Counted through the request's own earlier changes.
                let held = match descriptions {
                    Some(n) => n,
                    None => w.values(id, "description")?.len(),
                };
                let too_many = match m.op {
                    ModifyOp::Replace => m.values.len() > 1,
                    ModifyOp::Add => m.values.len() > 1 || held >= 1,
                    _ => false,
                };
                if too_many {
                    return Err(DirError::AttributeOrValueExists(
                        "00002083: a SAM object keeps a single description".into(),
                    ));
                }
                descriptions = Some(match m.op {
                    ModifyOp::Replace => m.values.len(),
                    ModifyOp::Add => held + m.values.len(),
                    ModifyOp::Delete if m.values.is_empty() => 0,
                    ModifyOp::Delete => held.saturating_sub(m.values.len()),
                    ModifyOp::Increment => held,
                });
            }
            if lower == "serviceprincipalname" && m.op != ModifyOp::Delete {
                check_unique_spns(w, &m.values, Some(id))?;
            }
            if lower == "fsmoroleowner" && !system && m.op != ModifyOp::Delete {
                if m.values.is_empty() {
                    return Err(DirError::UnwillingToPerform(
                        "00002084: fSMORoleOwner is cleared by a delete".into(),
                    ));
                }
                check_role_owner(w, &m.values)?;
            }
            if lower == "dsheuristics" && m.op != ModifyOp::Delete {
                for v in &m.values {
                    check_dsheuristics(v)?;
                }
            }
            let names_rdn = rdn_attr.as_deref().is_some_and(|r| {
                r == lower
                    || schema
                        .attribute(r)
                        .is_some_and(|d| d.ldap_name == def.ldap_name)
            });
            if (lower == "name" || names_rdn) && !system {
                return Err(DirError::NotAllowedOnRdn(format!(
                    "00002016: {} is the object's name; rename the object to change it",
                    def.ldap_name
                )));
            }
            if lower == "distinguishedname" && !system {
                // AD: a replace is a constraint violation, an add or delete unwilling.
                let text = "distinguishedName follows the object's name; rename it instead";
                return Err(if m.op == ModifyOp::Replace {
                    DirError::ConstraintViolation(format!("00002037: {text}"))
                } else {
                    DirError::UnwillingToPerform(format!("00002037: {text}"))
                });
            }
            if lower == "instancetype" && !system {
                return Err(DirError::ConstraintViolation(
                    "00002037: instanceType is set when the object is created".into(),
                ));
            }
            if lower == "ntsecuritydescriptor" {
                let value = match (m.op, m.values.as_slice()) {
                    (ModifyOp::Replace | ModifyOp::Add, [v]) => v,
                    (ModifyOp::Add, []) => {
                        return Err(DirError::ConstraintViolation(
                            "0000207D: nTSecurityDescriptor: a descriptor must be given".into(),
                        ))
                    }
                    _ => {
                        return Err(DirError::UnwillingToPerform(
                            "0000207D: nTSecurityDescriptor is replaced by one value; it \
                             cannot be removed"
                                .into(),
                        ))
                    }
                };
                let sd = self.written_descriptor(w, snap, id, value, sd_flags)?;
                descriptor_written = true;
                out.push(Modification {
                    op: ModifyOp::Replace,
                    attr: name,
                    values: vec![sd],
                });
                continue;
            }
            if is_password_attr(&name) {
                passwords.push(Modification {
                    op: m.op,
                    attr: name,
                    values: m.values.clone(),
                });
                continue;
            }
            if lower == "objectclass" {
                apply_names(&mut oc, m)?;
                oc_changed = true;
                continue;
            }
            if admin && !system && (lower == "pwdlastset" || lower == "lockouttime") {
                let current = w.int(id, &def.ldap_name)?;
                out.extend(account_switch(&lower, m, current)?);
                continue;
            }
            if m.op == ModifyOp::Add && m.values.is_empty() && super::access::is_secret(&lower) {
                return Err(DirError::ConstraintViolation(format!(
                    "{}: add needs at least one value",
                    def.ldap_name
                )));
            }
            check_writable(def, system, false)?;
            // Several values for a single-valued attribute: AD's modify answers
            // attributeOrValueExists (an add, and any linked attribute, constraintViolation).
            if def.single_valued
                && m.values.len() > 1
                && m.op != ModifyOp::Delete
                && def.link_id.is_none()
            {
                return Err(DirError::AttributeOrValueExists(format!(
                    "{} is single-valued; {} values given",
                    def.ldap_name,
                    m.values.len()
                )));
            }
            if m.op != ModifyOp::Delete || !m.values.is_empty() {
                check_values(def, &m.values)?;
            }
            if m.op != ModifyOp::Delete && self.db.config().link_of_lower(&lower).is_some() {
                check_link_targets(w, &m.values, system)?;
            }
            out.push(Modification {
                op: m.op,
                attr: name,
                values: canonical_times(def, m.values.clone()),
            });
        }
        let old_set = {
            let refs: Vec<&str> = current_oc.iter().map(String::as_str).collect();
            snap.class_set(&refs)?
        };
        let schema_object = old_set.is("attributeSchema") || old_set.is("classSchema");
        if schema_object && !system {
            let base_schema = w.int(id, "systemFlags")?.unwrap_or(0) & 0x10 != 0;
            check_schema_update(&old_set, dn, mods, base_schema)?;
        }
        // An attribute being renamed: its name before this modify.
        let renamed_from = if schema_object && old_set.is("attributeSchema") {
            w.text(id, "lDAPDisplayName")?
        } else {
            None
        };
        let previous = old_set.clone();
        let set = if oc_changed {
            let refs: Vec<&str> = oc.iter().map(String::as_str).collect();
            let new_set = snap.class_set(&refs)?;
            // AD answers a change of structural class with objectClassViolation.
            if new_set.structural != old_set.structural {
                return Err(DirError::ObjectClassViolation(format!(
                    "00002142: the structural class {} of {dn} cannot change",
                    old_set.structural
                )));
            }
            out.push(Modification {
                op: ModifyOp::Replace,
                attr: "objectClass".into(),
                values: new_set
                    .object_classes
                    .iter()
                    .map(|c| c.as_bytes().to_vec())
                    .collect(),
            });
            new_set
        } else {
            old_set
        };
        // The entry after the change. Values are counted only where the count decides
        // something (single-valued and mandatory attributes): counting the members of a
        // 100,000-member group on every added member would make that add cost O(n).
        let mut counts: HashMap<String, usize> = HashMap::new();
        for m in &out {
            let lower = m.attr.to_ascii_lowercase();
            let def = attribute_def(schema, &lower)?;
            let adds = matches!(m.op, ModifyOp::Add | ModifyOp::Replace) && !m.values.is_empty();
            if adds && !set.allowed.contains(&lower) {
                return Err(DirError::ObjectClassViolation(format!(
                    "0000207D: objectclass_attrs: attribute '{}' is not allowed on an object \
                     of class {}",
                    def.ldap_name, set.structural
                )));
            }
            if !def.single_valued && !set.must.contains(&lower) {
                continue;
            }
            let now = match counts.get(&lower) {
                Some(n) => *n,
                None => w.values(id, &m.attr)?.len(),
            };
            let after = match m.op {
                ModifyOp::Replace => m.values.len(),
                ModifyOp::Add => now + m.values.len(),
                ModifyOp::Delete if m.values.is_empty() => 0,
                ModifyOp::Delete => now.saturating_sub(m.values.len()),
                ModifyOp::Increment => now,
            };
            if after == 0 && set.must.contains(&lower) {
                return Err(DirError::ObjectClassViolation(format!(
                    "00002014: objectclass_attrs: attribute '{}' is mandatory for an object \
                     of class {}",
                    def.ldap_name, set.structural
                )));
            }
            if after > 1 && def.single_valued {
                // Adding to a single value already there is a value that exists, in AD.
                if m.op == ModifyOp::Add && now > 0 {
                    return Err(DirError::AttributeOrValueExists(format!(
                        "00002083: AtrErr: DSID-03151E6D, #1: 0: 00002083: {} is single-valued \
                         and has a value",
                        def.ldap_name
                    )));
                }
                return Err(DirError::ConstraintViolation(format!(
                    "{} is single-valued",
                    def.ldap_name
                )));
            }
            counts.insert(lower, after);
        }
        if oc_changed {
            // Every attribute the entry keeps must still be allowed.
            let stored: Vec<u32> = match w.record(id)? {
                Some(rec) => rec.attrs().map(|a| a.id).collect(),
                None => Vec::new(),
            };
            let mut present: Vec<String> = stored
                .into_iter()
                .filter_map(|aid| w.attribute_name(aid).map(|n| n.to_ascii_lowercase()))
                .collect();
            // Linked attributes are not in the record.
            for name in set.allowed.iter().chain(previous.allowed.iter()) {
                if self.db.config().link_of_lower(name).is_some() && !w.links(id, name)?.is_empty()
                {
                    present.push(name.clone());
                }
            }
            let emptied = |lower: &str| {
                out.iter().any(|m| {
                    m.attr.eq_ignore_ascii_case(lower)
                        && matches!(m.op, ModifyOp::Delete | ModifyOp::Replace)
                        && m.values.is_empty()
                })
            };
            let added = |lower: &str| {
                out.iter().any(|m| {
                    m.attr.eq_ignore_ascii_case(lower)
                        && matches!(m.op, ModifyOp::Add | ModifyOp::Replace)
                        && !m.values.is_empty()
                })
            };
            for lower in &present {
                let kept = counts.get(lower).map_or(!emptied(lower), |n| *n > 0);
                if kept && !set.allowed.contains(lower) && !is_server_kept(lower) {
                    return Err(DirError::ObjectClassViolation(format!(
                        "0000207D: objectclass_attrs: attribute '{lower}' is not allowed on \
                         an object of class {} without the classes removed",
                        set.structural
                    )));
                }
            }
            // A class added brings its mandatory attributes.
            for must in &set.must {
                if must == "ntsecuritydescriptor" || must == "objectclass" {
                    continue;
                }
                let has = (present.contains(must) && !emptied(must)) || added(must);
                if !has {
                    return Err(DirError::ObjectClassViolation(format!(
                        "00002014: objectclass_attrs: attribute '{must}' is mandatory for an \
                         object of class {}",
                        set.structural
                    )));
                }
            }
        }
        // Principals stay consistent.
        if let Some(domain) = self.domain() {
            if set.is("user") || set.is("group") {
                self.principal_changes(w, id, &set, &mut out, system, &domain.sid)?;
            }
        }
        if !passwords.is_empty() && !set.is("user") {
            return Err(DirError::ObjectClassViolation(format!(
                "only accounts have passwords; {dn} is a {}",
                set.structural
            )));
        }
        let password_refs: Vec<&Modification> = passwords.iter().collect();
        let password_mods = self.password_changes(w, req, id, &password_refs)?;
        // Enabling an account (or requiring its password) needs a password to be there.
        let new_uac = out
            .iter()
            .rev()
            .find(|m| m.attr.eq_ignore_ascii_case("userAccountControl") && m.op != ModifyOp::Delete)
            .and_then(|m| m.values.first())
            .and_then(|v| principal::parse_u32_bits(v));
        if let (Some(bits), false) = (new_uac, system) {
            if set.is("user") {
                let has = !password_mods.is_empty()
                    || !w.values(id, super::credentials::SECRETS_ATTR)?.is_empty();
                let before = w
                    .int(id, "userAccountControl")?
                    .map(|v| v as u32)
                    .unwrap_or_default();
                principal::check_password_required(before, bits, has)?;
            }
        }
        out.extend(password_mods);
        if out.is_empty() {
            return Ok(());
        }
        if !out
            .iter()
            .any(|m| m.attr.eq_ignore_ascii_case("whenChanged"))
        {
            out.push(Modification::new(
                ModifyOp::Replace,
                "whenChanged",
                &[&generalized_time(now_secs())],
            ));
        }
        if permissive {
            w.modify_permissive(dn, &out)?;
        } else {
            w.modify(dn, &out)?;
        }
        if schema_object {
            self.update_definition(w, id, dn, renamed_from.as_deref())?;
        }
        if descriptor_written {
            self.propagate_below(w, id)?;
        }
        Ok(())
    }

    /// A changed attributeSchema/classSchema object changes the running schema: its
    /// definition is read back from the transaction and replaces the old one in the
    /// working copy (published after the commit).
    /// `renamed_from` is an attribute's lDAPDisplayName before the modify: a new one
    /// renames it in the schema, in the database's registry and in the classes naming it.
    fn update_definition(
        &self,
        w: &mut DbWrite<'_, B>,
        id: u64,
        dn: &Dn,
        renamed_from: Option<&str>,
    ) -> DirResult<()> {
        let mut entry = kauri_db::Entry::new(dn.clone());
        let ids: Vec<u32> = match w.record(id)? {
            Some(rec) => rec.attrs().map(|a| a.id).collect(),
            None => Vec::new(),
        };
        for aid in ids {
            if let Some(name) = w.attribute_name(aid) {
                let values = w.values(id, &name)?;
                entry.push(&name, values);
            }
        }
        let invalid = |e: crate::schema::SchemaError| {
            DirError::UnwillingToPerform(format!("schema object {dn} refused: {e}"))
        };
        let Some(def) = crate::schema::objects::definition_of(&entry).map_err(invalid)? else {
            return Ok(());
        };
        let mut schema = self.working_schema().schema.clone();
        match def {
            crate::schema::objects::Definition::Attribute(a) => {
                if let Some(old) = renamed_from.filter(|o| *o != a.ldap_name) {
                    schema
                        .rename_attribute(old, &a.ldap_name)
                        .map_err(invalid)?;
                    w.rename_attribute(old, &a.ldap_name)?;
                    self.rename_in_classes(w, old, &a.ldap_name)?;
                }
                schema.update_attribute(a).map_err(invalid)?
            }
            crate::schema::objects::Definition::Class(c) => {
                schema.update_class(c).map_err(invalid)?
            }
        }
        self.extend_schema(w, schema)
    }

    /// Rewrites the stored class definitions that name a renamed attribute.
    fn rename_in_classes(&self, w: &mut DbWrite<'_, B>, old: &str, new: &str) -> DirResult<()> {
        const LISTS: &[&str] = &[
            "mustContain",
            "mayContain",
            "systemMustContain",
            "systemMayContain",
            "rDNAttID",
        ];
        let Some(domain) = self.domain() else {
            return Ok(());
        };
        let Some(schema_id) = w.id_of(&domain.schema_dn)? else {
            return Ok(());
        };
        for class in w.children(schema_id)? {
            let mut mods = Vec::new();
            for list in LISTS {
                let values = w.values(class, list)?;
                if values
                    .iter()
                    .any(|v| v.eq_ignore_ascii_case(old.as_bytes()))
                {
                    let renamed = values
                        .into_iter()
                        .map(|v| {
                            if v.eq_ignore_ascii_case(old.as_bytes()) {
                                new.as_bytes().to_vec()
                            } else {
                                v
                            }
                        })
                        .collect();
                    mods.push(Modification {
                        op: ModifyOp::Replace,
                        attr: (*list).to_string(),
                        values: renamed,
                    });
                }
            }
            if !mods.is_empty() {
                let cdn = Dn::parse(&w.dn_of(class)?)
                    .map_err(|e| DirError::UnwillingToPerform(format!("stored DN: {e}")))?;
                w.modify(&cdn, &mods)?;
            }
        }
        Ok(())
    }

    /// Keeps a principal consistent with a modification: unique names, account types
    /// that follow `userAccountControl` and `groupType`, group nesting.
    fn principal_changes(
        &self,
        w: &mut DbWrite<'_, B>,
        id: u64,
        set: &super::ClassSet,
        out: &mut Vec<Modification>,
        system: bool,
        domain_sid: &crate::sid::Sid,
    ) -> DirResult<()> {
        let mut attrs = Attrs::new();
        let mut touched = false;
        let client_group = out
            .iter()
            .any(|m| m.attr.eq_ignore_ascii_case("primaryGroupID") && m.op != ModifyOp::Delete);
        for m in out.iter() {
            let lower = m.attr.to_ascii_lowercase();
            let relevant = matches!(
                lower.as_str(),
                "samaccountname" | "userprincipalname" | "useraccountcontrol" | "grouptype"
            );
            if relevant && m.op != ModifyOp::Delete {
                attrs.set(&m.attr, m.values.clone());
                touched = true;
            }
        }
        if set.is("computer") {
            rewrite_spns(w, id, out)?;
        }
        // A group changes scope only by way of universal: global and domain local do not
        // turn into each other (AD's rule).
        if let Some(m) = out
            .iter()
            .find(|m| m.attr.eq_ignore_ascii_case("groupType") && m.op != ModifyOp::Delete)
        {
            let new_bits = m.values.first().and_then(|v| principal::parse_u32_bits(v));
            let before = group_scope_of(w, id)?;
            if let (Some(bits), Some(before)) = (new_bits, before) {
                let after = principal::group_scope(bits, system)?;
                if matches!(
                    (before, after),
                    (Scope::Global, Scope::DomainLocal) | (Scope::DomainLocal, Scope::Global)
                ) {
                    return Err(DirError::UnwillingToPerform(
                        "00000057: a global group and a domain local group cannot turn into \
                         each other; change to universal first"
                            .into(),
                    ));
                }
            }
        }
        if touched {
            // Values not changed keep what the entry has, so derived ones stay right.
            for a in ["userAccountControl", "groupType"] {
                if attrs.get(a).is_none() {
                    let v = w.values(id, a)?;
                    if !v.is_empty() {
                        attrs.set(a, v);
                    }
                }
            }
            self.principal_defaults(w, &mut attrs, set, domain_sid, system, Some(id))?;
            for (name, values) in attrs.list.iter() {
                let lower = name.to_ascii_lowercase();
                if matches!(
                    lower.as_str(),
                    "useraccountcontrol"
                        | "grouptype"
                        | "samaccounttype"
                        | "iscriticalsystemobject"
                        | "primarygroupid"
                ) {
                    out.retain(|m| !m.attr.eq_ignore_ascii_case(name));
                    out.push(Modification {
                        op: ModifyOp::Replace,
                        attr: name.clone(),
                        values: values.clone(),
                    });
                }
            }
        }
        // An account that comes to require a smart card gets a random password (AD's
        // answer: the old one must not log on any more).
        if set.is("user") {
            const SMARTCARD_REQUIRED: u32 = 0x4_0000;
            let before = w.int(id, "userAccountControl")?.unwrap_or(0) as u32;
            let after = out
                .iter()
                .rev()
                .find(|m| {
                    m.attr.eq_ignore_ascii_case("userAccountControl") && m.op != ModifyOp::Delete
                })
                .and_then(|m| m.values.first())
                .and_then(|v| principal::parse_u32_bits(v));
            if let Some(after) = after {
                if after & SMARTCARD_REQUIRED != 0 && before & SMARTCARD_REQUIRED == 0 {
                    let keys = self.random_password(w, id)?;
                    out.extend(keys);
                }
            }
        }
        if set.is("group") {
            let added: Vec<Vec<u8>> = out
                .iter()
                .filter(|m| m.attr.eq_ignore_ascii_case("member") && m.op != ModifyOp::Delete)
                .flat_map(|m| m.values.clone())
                .collect();
            if !added.is_empty() {
                let scope = group_scope_of(w, id)?;
                if let Some(scope) = scope {
                    check_nesting(w, scope, &added)?;
                }
            }
        }
        if let Some(m) = out
            .iter()
            .find(|m| m.attr.eq_ignore_ascii_case("primaryGroupID") && m.op != ModifyOp::Delete)
            .filter(|_| client_group)
        {
            let rid: u32 = m
                .values
                .first()
                .and_then(|v| std::str::from_utf8(v).ok())
                .and_then(|t| t.trim().parse().ok())
                .ok_or_else(|| {
                    DirError::InvalidAttributeSyntax("primaryGroupID must be a RID".into())
                })?;
            let sid = domain_sid.with_rid(rid);
            let group = w.find("objectSid", &sid.to_bytes())?.into_iter().next();
            let current = w.int(id, "primaryGroupID")? == Some(i64::from(rid));
            let member = current
                || match group {
                    Some(g) => w.links(id, "memberOf")?.contains(&g),
                    None => false,
                };
            if !member {
                return Err(DirError::UnwillingToPerform(format!(
                    "0000052C: the account must be a member of the group with RID {rid} to \
                     make it its primary group"
                )));
            }
            if let (false, Some(new_group)) = (current, group) {
                self.swap_primary_group(w, id, new_group, domain_sid)?;
            }
        }
        if set.is("group") {
            self.check_primary_members(w, id, out, domain_sid)?;
        }
        Ok(())
    }

    /// A primary group holds its members implicitly: the account leaves the new primary
    /// group's `member` and becomes an explicit member of the old one, as in AD.
    fn swap_primary_group(
        &self,
        w: &mut DbWrite<'_, B>,
        id: u64,
        new_group: u64,
        domain_sid: &crate::sid::Sid,
    ) -> DirResult<()> {
        let account = w.dn_of(id)?;
        let group_dn = |w: &DbWrite<'_, B>, g: u64| -> DirResult<Dn> {
            Dn::parse(&w.dn_of(g)?)
                .map_err(|e| DirError::UnwillingToPerform(format!("stored DN: {e}")))
        };
        let new_dn = group_dn(w, new_group)?;
        w.modify(
            &new_dn,
            &[Modification::new(ModifyOp::Delete, "member", &[&account])],
        )?;
        let old_rid = w
            .int(id, "primaryGroupID")?
            .and_then(|r| u32::try_from(r).ok());
        let old_group = match old_rid {
            Some(rid) => w
                .find("objectSid", &domain_sid.with_rid(rid).to_bytes())?
                .into_iter()
                .next(),
            None => None,
        };
        if let Some(old) = old_group {
            let old_dn = group_dn(w, old)?;
            w.modify_permissive(
                &old_dn,
                &[Modification::new(ModifyOp::Add, "member", &[&account])],
            )?;
        }
        Ok(())
    }

    /// An account is never an explicit member of its own primary group: adding it is
    /// refused as a present value (entryAlreadyExists), as AD does.
    fn check_primary_members(
        &self,
        w: &DbWrite<'_, B>,
        id: u64,
        out: &[Modification],
        domain_sid: &crate::sid::Sid,
    ) -> DirResult<()> {
        let added: Vec<&Vec<u8>> = out
            .iter()
            .filter(|m| m.attr.eq_ignore_ascii_case("member") && m.op != ModifyOp::Delete)
            .flat_map(|m| m.values.iter())
            .collect();
        if added.is_empty() {
            return Ok(());
        }
        let Some(rid) = group_rid(w, id, domain_sid)? else {
            return Ok(());
        };
        // Most groups are nobody's primary group: one index probe spares a lookup per member.
        if w.any_eq("primaryGroupID", rid.to_string().as_bytes())? == Some(false) {
            return Ok(());
        }
        for value in added {
            let Some(dn) = std::str::from_utf8(value)
                .ok()
                .and_then(|t| Dn::parse(t).ok())
            else {
                continue;
            };
            let Some(member) = w.id_of(&dn)? else {
                continue;
            };
            if w.int(member, "primaryGroupID")? == Some(i64::from(rid)) {
                return Err(DirError::EntryAlreadyExists(format!(
                    "00000562: UpdErr: DSID-031A11C4, problem 6005 (ENTRY_EXISTS), data 0: \
                     {dn} is a member through its primary group"
                )));
            }
        }
        Ok(())
    }
}

/// The attributes every account or group keeps once it has them (MS-SAMR's view of
/// the object needs them): removing one is refused.
fn sam_kept_attributes(classes: &[String]) -> &'static [&'static str] {
    const ACCOUNT: &[&str] = &[
        "ntsecuritydescriptor",
        "objectsid",
        "samaccounttype",
        "samaccountname",
        "primarygroupid",
        "useraccountcontrol",
        "accountexpires",
        "badpasswordtime",
        "badpwdcount",
        "codepage",
        "countrycode",
        "lastlogoff",
        "lastlogon",
        "logoncount",
        "pwdlastset",
    ];
    const GROUP: &[&str] = &[
        "ntsecuritydescriptor",
        "objectsid",
        "samaccounttype",
        "samaccountname",
        "grouptype",
    ];
    let is = |c: &str| classes.iter().any(|x| x.eq_ignore_ascii_case(c));
    if is("user") {
        ACCOUNT
    } else if is("group") {
        GROUP
    } else {
        &[]
    }
}

/// The RID of a group of this domain, if it is one.
fn group_rid<B: Backend>(
    w: &DbWrite<'_, B>,
    id: u64,
    domain_sid: &crate::sid::Sid,
) -> DirResult<Option<u32>> {
    let sid = w
        .values(id, "objectSid")?
        .into_iter()
        .next()
        .and_then(|b| crate::sid::Sid::from_bytes(&b).ok());
    Ok(sid
        .filter(|s| s.domain().as_ref() == Some(domain_sid))
        .and_then(|s| s.rid()))
}

/// The host part of an SPN (`class/host[:port][/name]`) and where it starts and ends.
fn spn_host(spn: &str) -> Option<(usize, usize)> {
    let start = spn.find('/')? + 1;
    let len = spn[start..].find([':', '/']).unwrap_or(spn.len() - start);
    Some((start, start + len))
}

/// An account name without its one trailing `$` (a computer's), as SPNs name the host.
fn sam_host(name: &str) -> &str {
    name.strip_suffix('$').unwrap_or(name)
}

/// AD keeps a computer's SPNs naming it when it is renamed: a new dNSHostName or
/// sAMAccountName rewrites the SPNs (as they stand after this modify) whose host is the
/// old name. A change of case only, or a name that was not set, rewrites nothing.
fn rewrite_spns<B: Backend>(
    w: &DbWrite<'_, B>,
    id: u64,
    out: &mut Vec<Modification>,
) -> DirResult<()> {
    let new_value = |attr: &str| {
        out.iter()
            .rev()
            .find(|m| m.attr.eq_ignore_ascii_case(attr) && m.op != ModifyOp::Delete)
            .and_then(|m| m.values.first())
            .map(|v| String::from_utf8_lossy(v).into_owned())
    };
    let mut renames: Vec<(String, String)> = Vec::new();
    if let (Some(old), Some(new)) = (w.text(id, "dNSHostName")?, new_value("dNSHostName")) {
        renames.push((old, new));
    }
    if let (Some(old), Some(new)) = (w.text(id, "sAMAccountName")?, new_value("sAMAccountName")) {
        renames.push((sam_host(&old).to_string(), sam_host(&new).to_string()));
    }
    renames.retain(|(old, new)| !old.is_empty() && !old.eq_ignore_ascii_case(new));
    if renames.is_empty() {
        return Ok(());
    }
    // The SPNs as this modify leaves them.
    let mut spns: Vec<String> = w
        .values(id, "servicePrincipalName")?
        .iter()
        .map(|v| String::from_utf8_lossy(v).into_owned())
        .collect();
    for m in out
        .iter()
        .filter(|m| m.attr.eq_ignore_ascii_case("servicePrincipalName"))
    {
        let given: Vec<String> = m
            .values
            .iter()
            .map(|v| String::from_utf8_lossy(v).into_owned())
            .collect();
        match m.op {
            ModifyOp::Add => spns.extend(given),
            ModifyOp::Replace => spns = given,
            ModifyOp::Delete if given.is_empty() => spns.clear(),
            ModifyOp::Delete => spns.retain(|s| !given.iter().any(|g| g.eq_ignore_ascii_case(s))),
            ModifyOp::Increment => {}
        }
    }
    let mut changed = false;
    for spn in &mut spns {
        let Some((a, b)) = spn_host(spn) else {
            continue;
        };
        if let Some((_, new)) = renames
            .iter()
            .find(|(old, _)| spn[a..b].eq_ignore_ascii_case(old))
        {
            *spn = format!("{}{}{}", &spn[..a], new, &spn[b..]);
            changed = true;
        }
    }
    if changed {
        let mut seen: Vec<String> = Vec::new();
        spns.retain(|s| {
            let fresh = !seen.iter().any(|x| x.eq_ignore_ascii_case(s));
            seen.push(s.clone());
            fresh
        });
        out.retain(|m| !m.attr.eq_ignore_ascii_case("servicePrincipalName"));
        out.push(Modification {
            op: ModifyOp::Replace,
            attr: "servicePrincipalName".into(),
            values: spns.into_iter().map(String::into_bytes).collect(),
        });
    }
    Ok(())
}

/// AD's rule for `dSHeuristics`: from the tenth character on, every tenth one counts the
/// decades (`1` at the 10th, `2` at the 20th, … `9` at the 90th), so that a misaligned
/// value is refused rather than misread.
fn check_dsheuristics(value: &[u8]) -> DirResult<()> {
    for decade in 1..=9u8 {
        let at = usize::from(decade) * 10 - 1;
        match value.get(at) {
            Some(&c) if c == b'0' + decade => {}
            Some(_) => {
                return Err(DirError::ConstraintViolation(format!(
                    "0000200B: dSHeuristics must have {decade} at position {}",
                    at + 1
                )))
            }
            None => break,
        }
    }
    Ok(())
}

/// What a client may change on an existing schema definition: add optional attributes,
/// auxiliary classes and possible superiors to a class; change an attribute's indexing;
/// and the descriptive attributes of either.
fn check_schema_update(
    set: &super::ClassSet,
    dn: &Dn,
    mods: &[Modification],
    base_schema: bool,
) -> DirResult<()> {
    const DESCRIPTIVE: &[&str] = &["description", "admindescription", "admindisplayname"];
    const CLASS_LISTS: &[&str] = &["maycontain", "auxiliaryclass", "posssuperiors"];
    const ATTRIBUTE_FLAGS: &[&str] = &["searchflags", "ismemberofpartialattributeset"];
    for m in mods {
        let lower = m.attr.to_ascii_lowercase();
        let removes = m.values.is_empty() && matches!(m.op, ModifyOp::Delete | ModifyOp::Replace);
        if removes
            && matches!(
                lower.as_str(),
                "ldapdisplayname" | "attributeid" | "governsid"
            )
        {
            return Err(DirError::ObjectClassViolation(format!(
                "{dn}: {} is mandatory for a schema object",
                m.attr
            )));
        }
        // An attribute an administrator defined may take a new name.
        let rename = set.is("attributeSchema")
            && !base_schema
            && lower == "ldapdisplayname"
            && m.op == ModifyOp::Replace
            && m.values.len() == 1;
        let ok = rename
            || DESCRIPTIVE.contains(&lower.as_str())
            || (set.is("classSchema")
                && CLASS_LISTS.contains(&lower.as_str())
                && m.op == ModifyOp::Add)
            || (set.is("attributeSchema")
                && ATTRIBUTE_FLAGS.contains(&lower.as_str())
                && m.op == ModifyOp::Replace);
        if !ok {
            return Err(DirError::UnwillingToPerform(format!(
                "{dn}: {} of an existing schema definition cannot be changed this way \
                 (classes take added mayContain, auxiliaryClass and possSuperiors values; \
                 attributes a new searchFlags)",
                m.attr
            )));
        }
    }
    Ok(())
}

/// Attributes the database keeps on every record whatever its classes say.
fn is_server_kept(lower: &str) -> bool {
    matches!(lower, "usncreated" | "usnchanged")
}

/// The scope of the group `id`, if it has a valid groupType.
fn group_scope_of<B: Backend>(w: &DbWrite<'_, B>, id: u64) -> DirResult<Option<Scope>> {
    w.values(id, "groupType")?
        .first()
        .and_then(|v| principal::parse_u32_bits(v))
        .map(|b| principal::group_scope(b, true))
        .transpose()
}

/// Applies an objectClass modification to the list of class names.
fn apply_names(oc: &mut Vec<String>, m: &Modification) -> DirResult<()> {
    let given: Vec<String> = m
        .values
        .iter()
        .map(|v| String::from_utf8_lossy(v).into_owned())
        .collect();
    let held = |oc: &[String], g: &str| oc.iter().any(|c| c.eq_ignore_ascii_case(g));
    match m.op {
        ModifyOp::Add => {
            if let Some(g) = given.iter().find(|g| held(oc, g)) {
                return Err(DirError::AttributeOrValueExists(format!(
                    "00002083: the object is already of class {g}"
                )));
            }
            oc.extend(given)
        }
        ModifyOp::Replace => *oc = given,
        ModifyOp::Delete => {
            if let Some(g) = given.iter().find(|g| !held(oc, g)) {
                return Err(DirError::NoSuchAttribute(format!(
                    "00002083: the object is not of class {g}"
                )));
            }
            oc.retain(|c| !given.iter().any(|g| g.eq_ignore_ascii_case(c)))
        }
        ModifyOp::Increment => {
            return Err(DirError::ConstraintViolation(
                "objectClass cannot be incremented".into(),
            ))
        }
    }
    Ok(())
}

/// The account switches an administrator sets through server-owned attributes:
/// `pwdLastSet` 0 (must change at next logon) or -1 (now, when it was 0), `lockoutTime` 0
/// (unlock). A
/// delete names the value stored (AD's delete-then-add form of a replace); any other
/// value is refused with AD's ERROR_INVALID_PARAMETER (00000057).
fn account_switch(
    lower: &str,
    m: &Modification,
    current: Option<i64>,
) -> DirResult<Vec<Modification>> {
    let value = m
        .values
        .first()
        .and_then(|v| std::str::from_utf8(v).ok())
        .map(str::trim);
    if m.op == ModifyOp::Delete {
        let matches = match value {
            None => current.is_some(),
            Some(v) => v.parse::<i64>().ok().is_some_and(|v| Some(v) == current),
        };
        if !matches {
            return Err(DirError::NoSuchAttribute(format!(
                "00002085: AtrErr: DSID-03152804, problem 1001 (NO_ATTRIBUTE_OR_VAL): {lower} \
                 does not hold {}",
                value.unwrap_or("a value")
            )));
        }
        return Ok(Vec::new());
    }
    let refuse = || {
        Err(DirError::Other(format!(
            "00000057: SvcErr: problem 5003 (WILL_NOT_PERFORM): {lower}: only {} may be \
             written",
            if lower == "pwdlastset" {
                "0 or -1"
            } else {
                "0"
            }
        )))
    };
    if !matches!(m.op, ModifyOp::Replace | ModifyOp::Add) || m.values.len() > 1 {
        return refuse();
    }
    match (lower, value) {
        ("pwdlastset", Some("0")) => Ok(vec![Modification::new(
            ModifyOp::Replace,
            "pwdLastSet",
            &["0"],
        )]),
        // -1 starts the password's age now when it was expired (0); a running age stays.
        ("pwdlastset", Some("-1")) if current.is_some_and(|c| c != 0) => Ok(Vec::new()),
        ("pwdlastset", Some("-1")) => Ok(vec![Modification::new(
            ModifyOp::Replace,
            "pwdLastSet",
            &[&crate::password::ad_time_now().to_string()],
        )]),
        ("lockouttime", Some("0")) => Ok(vec![
            Modification::new(ModifyOp::Replace, "lockoutTime", &["0"]),
            Modification::new(ModifyOp::Replace, "badPwdCount", &["0"]),
        ]),
        _ => refuse(),
    }
}
