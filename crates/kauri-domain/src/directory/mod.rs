//! The directory service: every change a client asks for passes through here on its way
//! to the database, and leaves validated against the schema, completed with what the
//! server assigns (GUIDs, SIDs, times, account types), checked against the access policy,
//! and with AD's side effects (links, tombstones, password hashes) in the same
//! transaction.
//!
//! A [`Directory`] holds the database, the schema as an immutable snapshot (replaced
//! whole after a schema change commits, never re-read per request) and what it knows
//! about the domain it serves ([`DomainInfo`]).

mod access;
pub mod acl;
mod add;
pub mod audit;
mod bind;
mod bind_facts;
pub mod bulk;
mod check;
pub mod classes;
mod credentials;
mod delete;
pub mod descriptors;
pub mod error;
mod info;
pub mod kdc;
pub mod kerberos;
pub mod kerberos_keys;
pub mod metadata;
mod modify;
pub mod ping;
mod prepared;
pub mod principal;
pub mod rename_domain;
pub mod restore;
mod setup;
pub mod stats;
mod store;
mod token;
pub mod view;

use std::sync::Arc;

use kauri_db::{Db, DbWrite, Dn, Entry, Modification, Rdn};
use kauri_kv::Backend;
use parking_lot::{Mutex, RwLock};

pub use access::{is_secret, Access};
pub use add::writable_on_add;
pub use audit::Origin;
pub use bind::{BindOutcome, BindUpdate};
pub use caller::{is_admin_token, Account, Caller};
pub use check::{DomainCheck, DomainProblem};
pub use classes::{ClassSet, SchemaSnapshot};
pub use credentials::PasswordToPrepare;
pub use error::{DirError, DirResult};
pub use info::{dc_host, DomainInfo};
pub use rename_domain::{RenameReport, RenameSpec};
pub use restore::{RestoreReport, RestoreSpec, DEFAULT_RID_MARGIN};
pub use setup::{check_admin_password, stored_schema, Provisioned};
pub use token::{
    password_expiry_time, resultant_policy, resultant_pso, token_groups,
    token_groups_global_and_universal,
};

use crate::password::{CryptSchemes, SecretKey};
use crate::schema::Schema;

mod caller;

/// Objects one step of a tree delete removes when the client set no limit: a step holds
/// the writer for tens of milliseconds, and a tree of any size goes in as many steps as it
/// needs.
pub const TREE_DELETE_STEP: usize = 1_000;

/// How far one step of a tree delete goes ([`Change::DeleteTreeStep`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TreeStep {
    /// The most objects the step deletes.
    pub max: usize,
}

/// One change a client (or the server itself) asks for.
#[derive(Debug, Clone)]
pub enum Change {
    /// Add an entry.
    Add(Entry),
    /// Modify an entry; `permissive` is the permissive-modify control.
    Modify {
        /// The entry.
        dn: Dn,
        /// The changes, all or nothing.
        mods: Vec<Modification>,
        /// Adding a present or deleting an absent value is not an error.
        permissive: bool,
        /// The SD flags control: which parts of `nTSecurityDescriptor` a value written
        /// replaces (every part when `None`).
        sd_flags: Option<u32>,
    },
    /// Delete an entry (leaving a tombstone in a domain); `tree` is the tree-delete
    /// control.
    Delete {
        /// The entry.
        dn: Dn,
        /// Delete everything below it too.
        tree: bool,
    },
    /// One step of a tree delete in a domain: at most `step.max` objects of the subtree,
    /// the deepest first, the named entry last. When objects remain the step still
    /// commits and answers [`DirError::TreeDeleteNotFinished`], so a large tree is deleted
    /// in steps that each hold the writer briefly. [`Directory::check_tree_delete`] comes
    /// first, outside the writer.
    DeleteTreeStep {
        /// The root of the subtree.
        dn: Dn,
        /// How far this step goes.
        step: TreeStep,
    },
    /// Rename and/or move an entry.
    Rename {
        /// The entry.
        dn: Dn,
        /// Its new RDN.
        new_rdn: Rdn,
        /// Remove the old RDN values.
        delete_old_rdn: bool,
        /// The new parent, for a move.
        new_parent: Option<Dn>,
    },
}

/// A change with what the policy needs to know about how it arrived.
#[derive(Debug, Clone)]
pub struct Request {
    /// Who asks.
    pub caller: Caller,
    /// Whether the connection is encrypted (TLS, or the local socket): passwords travel
    /// only over such connections.
    pub encrypted: bool,
    /// What to change.
    pub change: Change,
}

impl Request {
    /// A modify the server makes on its own behalf (a bind's bookkeeping, values
    /// provisioning adds once their targets exist): the system as caller, on a trusted
    /// channel.
    pub fn system_modify(dn: Dn, mods: Vec<Modification>, permissive: bool) -> Request {
        Request {
            caller: Caller::System,
            encrypted: true,
            change: Change::Modify {
                dn,
                mods,
                permissive,
                sd_flags: None,
            },
        }
    }
}

/// The directory service over one database.
pub struct Directory<B: Backend> {
    db: Arc<Db<B>>,
    schema: RwLock<Arc<SchemaSnapshot>>,
    /// The schema as extended by changes not yet committed (the writer's working copy),
    /// with the database configuration it calls for.
    pending: Mutex<Option<Pending>>,
    domain: RwLock<Option<Arc<DomainInfo>>>,
    key: Option<SecretKey>,
    /// What binds read that only a commit changes, for the latest snapshot USN seen.
    bind_facts: Mutex<Option<Arc<bind_facts::BindFacts>>>,
    /// The crypt forms kept beside each new password's NT hash.
    crypt_schemes: RwLock<CryptSchemes>,
    /// Password hashes computed before their changes reached the writer.
    prepared: prepared::Prepared,
    /// Parsed security descriptors and inheritance results.
    descriptors: descriptors::DescriptorCache,
    /// Access decisions.
    acl: acl::AclCache,
    /// Where audit events go (nowhere until a server sets it).
    auditor: RwLock<kauri_audit::Auditor>,
    /// Events of the open transaction, sent when it commits.
    pending_audit: Mutex<Vec<kauri_audit::AuditEvent>>,
}

impl<B: Backend> Directory<B> {
    /// A directory over `db`, validating against `schema`. The domain (if the database
    /// holds one) is discovered from the data; `key` seals password hashes.
    pub fn new(db: Arc<Db<B>>, schema: Schema, key: Option<SecretKey>) -> DirResult<Directory<B>> {
        let dir = Directory {
            db,
            schema: RwLock::new(Arc::new(SchemaSnapshot::new(schema))),
            pending: Mutex::new(None),
            domain: RwLock::new(None),
            key,
            bind_facts: Mutex::new(None),
            crypt_schemes: RwLock::new(CryptSchemes::default()),
            prepared: prepared::Prepared::new(),
            descriptors: descriptors::DescriptorCache::default(),
            acl: acl::AclCache::default(),
            auditor: RwLock::new(kauri_audit::Auditor::disabled()),
            pending_audit: Mutex::new(Vec::new()),
        };
        dir.rediscover()?;
        Ok(dir)
    }

    /// Sets the crypt forms kept beside each password set from now on (none by default;
    /// see [`CryptSchemes`]).
    pub fn set_crypt_schemes(&self, schemes: CryptSchemes) {
        *self.crypt_schemes.write() = schemes;
    }

    /// The crypt forms kept beside each new password.
    pub fn crypt_schemes(&self) -> CryptSchemes {
        *self.crypt_schemes.read()
    }

    /// The database.
    pub fn db(&self) -> &Arc<Db<B>> {
        &self.db
    }

    /// The schema snapshot requests validate against now.
    pub fn schema(&self) -> Arc<SchemaSnapshot> {
        self.schema.read().clone()
    }

    /// The domain this directory serves, if it holds one.
    pub fn domain(&self) -> Option<Arc<DomainInfo>> {
        self.domain.read().clone()
    }

    /// The key that seals password hashes.
    pub fn secret_key(&self) -> Option<&SecretKey> {
        self.key.as_ref()
    }

    /// Looks at the data again for the domain (after provisioning).
    pub fn rediscover(&self) -> DirResult<()> {
        let snap = self.db.read()?;
        *self.domain.write() = DomainInfo::discover(&snap)?.map(Arc::new);
        Ok(())
    }

    /// Sends audit events to `auditor` from now on.
    pub fn set_auditor(&self, auditor: kauri_audit::Auditor) {
        *self.auditor.write() = auditor;
    }

    /// Where audit events go (a disabled auditor when none was set).
    pub fn auditor(&self) -> kauri_audit::Auditor {
        self.auditor.read().clone()
    }

    /// [`Directory::apply`] for a request that came from `origin`, audited: its events
    /// are sent when the transaction commits ([`Directory::after_commit`]). The server's
    /// own bookkeeping (the system, from nowhere) is not audited.
    pub fn apply_from(
        &self,
        w: &mut DbWrite<'_, B>,
        req: &Request,
        origin: &audit::Origin,
    ) -> DirResult<()> {
        let audited = !(req.caller.is_system() && origin.service.is_empty());
        let before = if audited {
            self.audit_before(w, req)
        } else {
            None
        };
        let started = std::time::Instant::now();
        let result = self.apply(w, req);
        if audited {
            self.audit_change(w, req, origin, before, &result, started.elapsed());
        }
        result
    }

    /// Applies one request inside the writer's transaction, in a nested transaction of
    /// its own: on error nothing of it remains.
    pub fn apply(&self, w: &mut DbWrite<'_, B>, req: &Request) -> DirResult<()> {
        w.begin_nested()?;
        let pending_before = self.pending.lock().clone();
        match self.apply_inner(w, req) {
            Ok(()) => {
                w.commit_nested()?;
                Ok(())
            }
            // A tree delete step keeps what it deleted.
            Err(e @ DirError::TreeDeleteNotFinished(_)) => {
                w.commit_nested()?;
                Err(e)
            }
            Err(e) => {
                w.abort_nested()?;
                *self.pending.lock() = pending_before;
                // The change is gone; the wrong password it carried still counts.
                if let DirError::WrongPassword { dn, .. } = &e {
                    self.record_bad_password(w, dn)?;
                }
                Err(e)
            }
        }
    }

    fn apply_inner(&self, w: &mut DbWrite<'_, B>, req: &Request) -> DirResult<()> {
        let snap = self.working_schema();
        let plain = self.domain().is_none();
        match &req.change {
            Change::Add(e) if plain => self.add_plain(w, req, &snap, e),
            Change::Add(e) => self.add(w, req, &snap, e.clone()).map(|_| ()),
            Change::Modify {
                dn,
                mods,
                permissive,
                ..
            } if plain => self.modify_plain(w, req, &snap, dn, mods, *permissive),
            Change::Modify {
                dn,
                mods,
                permissive,
                sd_flags,
            } => self.modify(w, req, &snap, dn, mods, *permissive, *sd_flags),
            // Deletes and renames take the plain path themselves when there is no domain.
            Change::Delete { dn, tree } => self.delete(w, req, dn, *tree, None),
            Change::DeleteTreeStep { dn, step } => self.delete(w, req, dn, true, Some(*step)),
            Change::Rename {
                dn,
                new_rdn,
                delete_old_rdn,
                new_parent,
            } => self.rename(
                w,
                req,
                &snap,
                dn,
                new_rdn,
                *delete_old_rdn,
                new_parent.as_ref(),
            ),
        }
    }

    /// An add to a directory without a domain (a plain LDAP directory): attributes must
    /// exist in the schema and are stored under their schema names (whatever the client
    /// called them: an OID, another case, `;binary`), the caller must administer, and the
    /// database's own rules apply.
    fn add_plain(
        &self,
        w: &mut DbWrite<'_, B>,
        req: &Request,
        snap: &SchemaSnapshot,
        e: &Entry,
    ) -> DirResult<()> {
        Access::of(&req.caller).may_change_tree()?;
        let mut entry = Entry::new(e.dn.clone());
        for (name, values) in &e.attrs {
            entry.push(&plain_attribute_def(snap, name)?.ldap_name, values.clone());
        }
        w.add(entry)?;
        Ok(())
    }

    /// A modify of a directory without a domain (see [`Directory::add_plain`]).
    fn modify_plain(
        &self,
        w: &mut DbWrite<'_, B>,
        req: &Request,
        snap: &SchemaSnapshot,
        dn: &Dn,
        mods: &[Modification],
        permissive: bool,
    ) -> DirResult<()> {
        if !req.caller.is_admin() {
            return Err(DirError::InsufficientAccess(
                "only an administrator may change the directory".into(),
            ));
        }
        let mut named = Vec::with_capacity(mods.len());
        for m in mods {
            named.push(Modification {
                op: m.op,
                attr: plain_attribute_def(snap, &m.attr)?.ldap_name.clone(),
                values: m.values.clone(),
            });
        }
        if permissive {
            w.modify_permissive(dn, &named)?;
        } else {
            w.modify(dn, &named)?;
        }
        Ok(())
    }

    /// The schema changes validate against: the published snapshot, or the working copy
    /// when earlier changes of this transaction extended it.
    pub(crate) fn working_schema(&self) -> Arc<SchemaSnapshot> {
        match self.pending.lock().as_ref() {
            Some(p) => p.snap.clone(),
            None => self.schema(),
        }
    }

    /// Called by the writer after a commit: publishes schema definitions the committed
    /// changes added (a new snapshot, and a database configuration that knows the new
    /// attributes' syntaxes, indexes and links).
    pub fn after_commit(&self) -> DirResult<()> {
        self.audit_committed();
        let Some(p) = self.pending.lock().take() else {
            return Ok(());
        };
        self.db.replace_config_stored((*p.config).clone())?;
        *self.schema.write() = p.snap;
        self.descriptors.schema_changed();
        self.acl.schema_changed();
        Ok(())
    }

    /// Called by the writer when a commit failed: schema definitions of the lost changes
    /// are forgotten.
    pub fn after_abort(&self) {
        self.pending.lock().take();
        self.audit_aborted();
    }

    /// Forces the published schema to include everything committed (the root DSE's
    /// `schemaUpdateNow`).
    pub fn schema_update_now(&self) -> DirResult<()> {
        self.after_commit()
    }
}

/// A schema extended by uncommitted changes, and the database configuration derived from
/// it (computed once, used for the fingerprints stored with the change and after commit;
/// shared, since every request of a batch saves the pending state to restore on failure).
#[derive(Clone)]
struct Pending {
    snap: Arc<SchemaSnapshot>,
    config: Arc<kauri_db::DbConfig>,
}

/// AD's noSuchObject for a name that resolves to nothing (or to what the caller may not
/// see).
pub(crate) fn no_such_object(what: &dyn std::fmt::Display) -> DirError {
    DirError::NoSuchObject(format!(
        "0000208D: NameErr: DSID-03100213, problem 2001 (NO_OBJECT): {what}"
    ))
}

/// Whether a record is a tombstone.
pub(crate) fn is_tombstone<V: view::View>(v: &V, id: u64) -> bool {
    matches!(v.text(id, "isDeleted"), Ok(Some(t)) if t.eq_ignore_ascii_case("TRUE"))
}

/// Whether the parent `pid` is one of a class set's possible superiors.
pub(crate) fn may_live_below<V: view::View>(v: &V, pid: u64, set: &ClassSet) -> DirResult<bool> {
    Ok(v.values(pid, "objectClass")?.iter().any(|c| {
        set.poss_superiors
            .contains(&String::from_utf8_lossy(c).to_ascii_lowercase())
    }))
}

/// Now, in Unix seconds.
pub fn now_secs() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0)
}

/// Sixteen random bytes: a new objectGUID (RFC 4122 version 4 layout).
pub fn new_guid() -> DirResult<[u8; 16]> {
    let mut g = [0u8; 16];
    getrandom::fill(&mut g)
        .map_err(|e| DirError::UnwillingToPerform(format!("no randomness for a GUID: {e}")))?;
    g[7] = (g[7] & 0x0f) | 0x40;
    g[8] = (g[8] & 0x3f) | 0x80;
    Ok(g)
}

/// An attribute's definition for a directory without a domain: an unknown one is
/// undefinedAttributeType, as RFC 4511 has it (a domain answers noSuchAttribute, as AD).
fn plain_attribute_def<'s>(
    snap: &'s SchemaSnapshot,
    name: &str,
) -> DirResult<&'s crate::schema::AttributeDef> {
    add::attribute_def(&snap.schema, name).map_err(|e| match e {
        DirError::NoSuchAttribute(m) => DirError::UndefinedAttributeType(m),
        other => other,
    })
}
