//! Creating a domain in an empty directory (provisioning), and starting a directory from
//! the schema stored in its Schema naming context.

use std::sync::Arc;

use kauri_db::config::LinkRole;
use kauri_db::{Db, DbWrite, Dn, Entry, Filter, Modification, ModifyOp, Rdn, Scope, SearchRequest};
use kauri_kv::Backend;

use super::error::{DirError, DirResult};
use super::info::DomainInfo;
use super::view::View;
use super::{Caller, Change, Directory, Request};
use crate::password::encode_unicode_pwd;
use crate::provision::{self, ProvisionParams};
use crate::schema::Schema;

/// What provisioning made.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Provisioned {
    /// Entries written.
    pub entries: usize,
    /// Attribute and class definitions in the Schema NC.
    pub schema_objects: usize,
    /// The domain's DN.
    pub domain_dn: String,
    /// The domain SID.
    pub domain_sid: String,
    /// The Administrator's DN.
    pub administrator: String,
}

impl DomainInfo {
    /// What provisioning `params` will create, known before anything is written.
    pub fn planned(params: &ProvisionParams) -> DirResult<DomainInfo> {
        let domain_dn = provision::domain_dn(&params.realm);
        let rdn =
            |t: &str| Rdn::parse(t).map_err(|e| DirError::UnwillingToPerform(format!("{t}: {e}")));
        let config_dn = domain_dn.child(rdn("CN=Configuration")?);
        let schema_dn = config_dn.child(rdn("CN=Schema")?);
        let dc = domain_dn.child(rdn("OU=Domain Controllers")?).child(
            Rdn::new("CN", &params.dc_name).map_err(|e| {
                DirError::UnwillingToPerform(format!("DC name {}: {e}", params.dc_name))
            })?,
        );
        let server =
            config_dn
                .child(rdn("CN=Sites")?)
                .child(Rdn::new("CN", &params.site).map_err(|e| {
                    DirError::UnwillingToPerform(format!("site {}: {e}", params.site))
                })?)
                .child(rdn("CN=Servers")?)
                .child(Rdn::new("CN", &params.dc_name).map_err(|e| {
                    DirError::UnwillingToPerform(format!("DC name {}: {e}", params.dc_name))
                })?);
        Ok(DomainInfo {
            domain_dn,
            domain_id: 0,
            sid: params.domain_sid.clone(),
            dns_name: params.realm.to_ascii_lowercase(),
            netbios: params.netbios_domain.to_ascii_uppercase(),
            config_dn,
            schema_dn,
            ntds_settings: Some(server.child(rdn("CN=NTDS Settings")?)),
            server: Some(server),
            rid_counter: (dc.child(rdn("CN=RID Set")?), "rIDNextRID"),
            app_ncs: Vec::new(),
            dc_computer: Some(dc),
        })
    }
}

impl<B: Backend> Directory<B> {
    /// Provisions a new forest in this (empty) directory, in one transaction: every
    /// entry passes through the same validation as a client's add, as the server.
    pub fn provision(
        &self,
        params: &ProvisionParams,
        admin_password: &str,
        progress: Option<&dyn Fn(u64, u64)>,
    ) -> DirResult<Provisioned> {
        if self.db.read()?.record_count()? > 0 {
            return Err(DirError::UnwillingToPerform(
                "the directory is not empty; provision into a new target directory".into(),
            ));
        }
        check_admin_password(admin_password)?;
        let snap = self.schema();
        let entries = provision::entries(params, &snap.schema)
            .map_err(|e| DirError::UnwillingToPerform(format!("provisioning: {e}")))?;
        let planned = DomainInfo::planned(params)?;
        *self.domain.write() = Some(Arc::new(planned.clone()));
        let made =
            self.provision_entries(params, admin_password, progress, &planned, entries, &snap);
        if made.is_err() {
            // Nothing was committed: forget the planned domain and any pending schema.
            self.pending.lock().take();
            let _ = self.rediscover();
        }
        made
    }

    fn provision_entries(
        &self,
        _params: &ProvisionParams,
        admin_password: &str,
        progress: Option<&dyn Fn(u64, u64)>,
        planned: &DomainInfo,
        entries: Vec<provision::ProvisionEntry>,
        snap: &super::SchemaSnapshot,
    ) -> DirResult<Provisioned> {
        let total = entries.len() as u64;
        let system = Request {
            caller: Caller::System,
            encrypted: true,
            change: Change::Delete {
                dn: Dn::root(),
                tree: false,
            },
        };
        let mut w = self.db.write()?;
        let mut schema_objects = 0;
        let mut later = Vec::new();
        for (i, mut pe) in entries.into_iter().enumerate() {
            stamp_invocation(&mut pe.entry, self.db.invocation_id());
            later.extend(self.take_forward_references(&w, &mut pe.entry)?);
            let is_schema_object = pe.entry.dn.parent().as_ref() == Some(&planned.schema_dn);
            if is_schema_object {
                schema_objects += 1;
            }
            let dn = pe.entry.dn.to_string();
            self.add_entry(&mut w, &system, snap, pe.entry, pe.naming_context)
                .map_err(|e| DirError::UnwillingToPerform(format!("provisioning {dn}: {e}")))?;
            if let Some(p) = progress {
                if i % 64 == 0 || i as u64 + 1 == total {
                    p(i as u64 + 1, total);
                }
            }
        }
        self.add_forward_references(&mut w, later)?;
        // Definitions added through schema objects are the schema itself here.
        self.pending.lock().take();
        let admin = planned
            .domain_dn
            .child(Rdn::parse("CN=Users").map_err(|e| DirError::UnwillingToPerform(e.to_string()))?)
            .child(
                Rdn::parse("CN=Administrator")
                    .map_err(|e| DirError::UnwillingToPerform(e.to_string()))?,
            );
        let set_password = Request::system_modify(
            admin.clone(),
            vec![Modification {
                op: ModifyOp::Replace,
                attr: "unicodePwd".into(),
                values: vec![encode_unicode_pwd(admin_password)],
            }],
            false,
        );
        self.apply(&mut w, &set_password)?;
        w.commit()?;
        self.rediscover()?;
        // krbtgt and the DC's own account get their keys once the domain is known.
        let mut w = self.db.write()?;
        self.ensure_kerberos_keys(&mut w)?;
        w.commit()?;
        Ok(Provisioned {
            entries: total as usize,
            schema_objects,
            domain_dn: planned.domain_dn.to_string(),
            domain_sid: planned.sid.to_string(),
            administrator: admin.to_string(),
        })
    }
}

impl<B: Backend> Directory<B> {
    /// Takes out of an entry about to be added the values of linked attributes that name
    /// entries not added yet (a naming context's `fSMORoleOwner` names the DC's NTDS
    /// Settings, which comes later in tree order), to be added by
    /// [`Directory::add_forward_references`] once every entry exists.
    pub(crate) fn take_forward_references(
        &self,
        w: &DbWrite<'_, B>,
        entry: &mut Entry,
    ) -> DirResult<Option<(Dn, Vec<Modification>)>> {
        let cfg = self.db.config();
        let mut mods = Vec::new();
        for (attr, values) in &mut entry.attrs {
            if !matches!(
                cfg.link_of_lower(&attr.to_ascii_lowercase()),
                Some(LinkRole::Forward { .. })
            ) {
                continue;
            }
            let mut missing = Vec::new();
            let mut kept = Vec::new();
            for v in std::mem::take(values) {
                let target = std::str::from_utf8(&v).ok().and_then(|t| Dn::parse(t).ok());
                let exists = match target {
                    Some(t) if t != entry.dn => w.id_of(&t)?.is_some(),
                    _ => false,
                };
                if exists {
                    kept.push(v);
                } else {
                    missing.push(v);
                }
            }
            *values = kept;
            if !missing.is_empty() {
                mods.push(Modification {
                    op: ModifyOp::Add,
                    attr: attr.clone(),
                    values: missing,
                });
            }
        }
        entry.attrs.retain(|(_, v)| !v.is_empty());
        Ok((!mods.is_empty()).then(|| (entry.dn.clone(), mods)))
    }

    /// Adds, as the system, the values [`Directory::take_forward_references`] held back.
    pub(crate) fn add_forward_references(
        &self,
        w: &mut DbWrite<'_, B>,
        later: Vec<(Dn, Vec<Modification>)>,
    ) -> DirResult<()> {
        for (dn, mods) in later {
            self.apply(w, &Request::system_modify(dn, mods, false))?;
        }
        Ok(())
    }
}

/// Gives a DC's `CN=NTDS Settings` the invocation id of the database it runs on.
pub(crate) fn stamp_invocation(entry: &mut kauri_db::Entry, invocation: [u8; 16]) {
    let is_dsa = entry
        .get("objectClass")
        .is_some_and(|c| c.iter().any(|v| v.eq_ignore_ascii_case(b"nTDSDSA")));
    if is_dsa && entry.get("invocationId").is_none() {
        entry.push("invocationId", vec![invocation.to_vec()]);
    }
}

/// Whether a new domain's Administrator password meets the policy the domain starts with.
pub fn check_admin_password(password: &str) -> DirResult<()> {
    crate::password::PasswordPolicy::default()
        .check_new_password(password, "Administrator", "", None)
        .map_err(|v| DirError::ConstraintViolation(format!("the administrator password: {v}")))
}

/// The schema stored in a database's Schema naming context, if it has a domain.
pub fn stored_schema<B: Backend>(db: &Db<B>) -> DirResult<Option<Schema>> {
    let r = db.read()?;
    let Some(info) = DomainInfo::discover(&r)? else {
        return Ok(None);
    };
    let req = SearchRequest::new(
        info.schema_dn.clone(),
        Scope::OneLevel,
        Filter::parse("(|(objectClass=attributeSchema)(objectClass=classSchema))")
            .map_err(|e| DirError::UnwillingToPerform(e.to_string()))?,
    );
    let entries = r.search_entries(&req)?;
    if entries.is_empty() {
        return Ok(None);
    }
    Schema::load_entries(entries.iter())
        .map(Some)
        .map_err(|e| DirError::UnwillingToPerform(format!("the stored schema: {e}")))
}
