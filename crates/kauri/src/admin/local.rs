//! A data folder as a [`Target`]: changes go through the directory service as the
//! domain's Administrator, each in its own durable transaction.
//!
//! Safe next to a running server on the same folder: LMDB's lock file serializes this
//! process's write transactions with the server's writer, readers of both see committed
//! states only, and every counter (record ids, USNs, RIDs, attribute ids) is read inside
//! the transaction that advances it, never cached across transactions.

use std::ops::ControlFlow;
use std::path::Path;
use std::sync::Arc;

use anyhow::{bail, Context, Result};
use kauri_db::{DbRead, Dn, Entry, Filter, Modification, Rdn, SearchRequest};
use kauri_domain::directory::{
    is_secret, Caller, Change, DirError, Directory, Request, TreeStep, TREE_DELETE_STEP,
};
use kauri_kv::lmdb::LmdbBackend;

use super::target::{Attrs, DomainNames, Found, Op, OpResult, Refused, Scope, Target};

/// A domain's data folder opened for the commands.
pub struct LocalTarget {
    dir: Arc<Directory<LmdbBackend>>,
    names: DomainNames,
    caller: Caller,
}

fn refused(e: DirError) -> anyhow::Error {
    Refused {
        code: e.ldap_result_code(),
        message: e.to_string(),
    }
    .into()
}

fn parse_dn(text: &str) -> OpResult<Dn> {
    Dn::parse(text).map_err(|e| {
        Refused {
            code: 34,
            message: format!("invalid DN {text:?}: {e}"),
        }
        .into()
    })
}

/// A provisioned domain's data folder opened for changes made locally: the directory
/// (descriptors brought up to date first, as new objects inherit from their parents'), the
/// domain's names, and its Administrator, as whom changes are made so the same rules hold
/// as over LDAP.
pub(crate) fn open_as_administrator(
    data: &Path,
) -> Result<(Arc<Directory<LmdbBackend>>, DomainNames, Caller)> {
    let dir = crate::domain::open_domain_directory(data, true)?;
    crate::domain::ensure_descriptors(&dir)?;
    let info = dir
        .domain()
        .with_context(|| format!("{} holds no domain", data.display()))?;
    let names = DomainNames {
        dn: info.domain_dn.to_string(),
        dns_name: info.dns_name.clone(),
        netbios: info.netbios.clone(),
    };
    let caller = Caller::Account(
        dir.local_administrator()
            .context("finding the domain's Administrator")?,
    );
    Ok((dir, names, caller))
}

impl LocalTarget {
    /// Opens a provisioned domain's data folder.
    pub fn open(data: &Path) -> Result<LocalTarget> {
        if !crate::domain::is_domain(data) {
            bail!(
                "{} is not a domain's data folder (no domain.json); pass -H with a data \
                 folder or an ldap[s]:// URL",
                data.display()
            );
        }
        let (dir, names, caller) = open_as_administrator(data)?;
        Ok(LocalTarget { dir, names, caller })
    }

    /// The directory underneath (for commands that read the database directly).
    pub fn directory(&self) -> &Arc<Directory<LmdbBackend>> {
        &self.dir
    }

    fn apply(&mut self, change: Change) -> OpResult {
        self.apply_one(change)?.map_err(refused)
    }

    /// One change in a transaction of its own, with the directory's answer as it is. A
    /// refused change still commits: a wrong password counts, as on the server, and a
    /// tree delete step keeps what it deleted.
    fn apply_one(&mut self, change: Change) -> anyhow::Result<Result<(), DirError>> {
        let mut w = self.dir.db().write()?;
        let r = self.dir.apply(
            &mut w,
            &Request {
                caller: self.caller.clone(),
                encrypted: true,
                change,
            },
        );
        w.commit()?;
        // An unfinished tree delete's step committed what it deleted.
        if matches!(r, Ok(()) | Err(DirError::TreeDeleteNotFinished(_))) {
            self.dir.after_commit()?;
        }
        Ok(r)
    }
}

/// The entry a hit stands for: the attributes asked for (linked ones as DNs), never a
/// secret.
fn found(
    r: &DbRead<'_, LmdbBackend>,
    id: u64,
    rec: &kauri_db::record::RecordView<'_>,
    attrs: &[&str],
) -> Result<Found> {
    let dn_text = r.dn_string(id)?;
    let dn = Dn::parse(&dn_text).with_context(|| format!("stored DN {dn_text}"))?;
    let entry = r.to_entry(id, dn, rec);
    let wanted = |name: &str| {
        attrs.is_empty()
            || attrs.contains(&"*")
            || attrs.iter().any(|a| a.eq_ignore_ascii_case(name))
    };
    Ok(Found {
        dn: dn_text,
        attrs: entry
            .attrs
            .into_iter()
            .filter(|(n, v)| !is_secret(n) && wanted(n) && !v.is_empty())
            .collect(),
    })
}

impl Target for LocalTarget {
    fn domain(&self) -> &DomainNames {
        &self.names
    }

    fn as_local(&self) -> Option<&LocalTarget> {
        Some(self)
    }

    fn search(
        &mut self,
        base: &str,
        scope: Scope,
        filter: &str,
        attrs: &[&str],
        each: &mut dyn FnMut(Found) -> Result<()>,
    ) -> OpResult {
        let base = parse_dn(base)?;
        let filter = Filter::parse(&format!("(&{}(!(isDeleted=TRUE)))", with_parens(filter)))
            .map_err(|e| Refused {
                code: 87,
                message: format!("bad filter {filter:?}: {e}"),
            })?;
        let scope = match scope {
            Scope::Base => kauri_db::Scope::Base,
            Scope::One => kauri_db::Scope::OneLevel,
            Scope::Sub => kauri_db::Scope::Subtree,
        };
        let r = self.dir.db().read()?;
        if r.lookup(&base)?.is_none() {
            return Err(Refused {
                code: 32,
                message: format!("no such object: {base}"),
            }
            .into());
        }
        let mut failed = None;
        r.search(&SearchRequest::new(base, scope, filter), |hit| match found(
            &r,
            hit.id,
            &hit.record,
            attrs,
        )
        .and_then(&mut *each)
        {
            Ok(()) => Ok(ControlFlow::Continue(())),
            Err(e) => {
                failed = Some(e);
                Ok(ControlFlow::Break(()))
            }
        })?;
        match failed {
            Some(e) => Err(e),
            None => Ok(()),
        }
    }

    fn add(&mut self, dn: &str, attrs: Attrs) -> OpResult {
        let change = to_change(Op::Add {
            dn: dn.to_string(),
            attrs,
        })?;
        self.apply(change)
    }

    fn modify(&mut self, dn: &str, mods: Vec<Modification>) -> OpResult {
        let change = to_change(Op::Modify {
            dn: dn.to_string(),
            mods,
        })?;
        self.apply(change)
    }

    fn delete(&mut self, dn: &str, tree: bool) -> OpResult {
        if tree && self.dir.domain().is_some() {
            // In steps, each its own transaction, so a server writing the same folder
            // waits for a step, not for the whole tree.
            let dn = parse_dn(dn)?;
            if !self.caller.is_system() {
                self.dir.check_tree_delete(&dn).map_err(refused)?;
            }
            let step = TreeStep {
                max: TREE_DELETE_STEP,
            };
            loop {
                match self.apply_one(Change::DeleteTreeStep {
                    dn: dn.clone(),
                    step,
                })? {
                    Ok(()) => return Ok(()),
                    Err(DirError::TreeDeleteNotFinished(_)) => {}
                    Err(e) => return Err(refused(e)),
                }
            }
        }
        let change = to_change(Op::Delete {
            dn: dn.to_string(),
            tree,
        })?;
        self.apply(change)
    }

    fn rename_with(
        &mut self,
        dn: &str,
        new_rdn: &str,
        delete_old_rdn: bool,
        new_parent: Option<&str>,
    ) -> OpResult {
        let change = to_change(Op::Rename {
            dn: dn.to_string(),
            new_rdn: new_rdn.to_string(),
            delete_old_rdn,
            new_parent: new_parent.map(str::to_string),
        })?;
        self.apply(change)
    }

    /// Through the directory service with `sd_flags` set, as the server applies a
    /// modify that carries the SD flags control.
    fn write_descriptor(&mut self, dn: &str, value: Vec<u8>, flags: u32) -> OpResult {
        self.apply(Change::Modify {
            sd_flags: Some(flags),
            dn: parse_dn(dn)?,
            mods: vec![Modification {
                op: kauri_db::ModifyOp::Replace,
                attr: super::target::SD_ATTR.to_string(),
                values: vec![value],
            }],
            permissive: false,
        })
    }

    /// Computed as the server computes the constructed attribute (a local search
    /// returns stored attributes only).
    fn token_groups(&mut self, dn: &str) -> OpResult<Vec<Vec<u8>>> {
        let parsed = parse_dn(dn)?;
        let domain = self
            .dir
            .domain()
            .context("the data folder holds no domain")?;
        let r = self.dir.db().read()?;
        let id = r
            .lookup(&parsed)?
            .filter(|id| *id != 0)
            .ok_or_else(|| Refused {
                code: 32,
                message: format!("no such object: {dn}"),
            })?;
        let groups = kauri_domain::directory::token_groups(&r, &domain, id).map_err(refused)?;
        Ok(groups.into_iter().map(|(_, sid)| sid.to_bytes()).collect())
    }

    /// Every change in one transaction, each in a nested one of its own: one fsync for
    /// the batch, and a refused change leaves nothing behind.
    fn apply_batch(&mut self, ops: Vec<Op>, stop_at_error: bool) -> Result<Vec<OpResult>> {
        let mut w = self.dir.db().write()?;
        let mut out = Vec::with_capacity(ops.len());
        for op in ops {
            let r = to_change(op).and_then(|change| {
                self.dir
                    .apply(
                        &mut w,
                        &Request {
                            caller: self.caller.clone(),
                            encrypted: true,
                            change,
                        },
                    )
                    .map_err(refused)
            });
            let failed = r.is_err();
            out.push(r);
            if failed && stop_at_error {
                break;
            }
        }
        w.commit()?;
        self.dir.after_commit()?;
        Ok(out)
    }
}

/// A change as the directory service takes it.
fn to_change(op: Op) -> OpResult<Change> {
    Ok(match op {
        Op::Add { dn, attrs } => {
            let mut e = Entry::new(parse_dn(&dn)?);
            for (name, values) in attrs {
                e.push(&name, values);
            }
            Change::Add(e)
        }
        Op::Modify { dn, mods } => Change::Modify {
            sd_flags: None,
            dn: parse_dn(&dn)?,
            mods,
            permissive: false,
        },
        Op::Delete { dn, tree } => Change::Delete {
            dn: parse_dn(&dn)?,
            tree,
        },
        Op::Rename {
            dn,
            new_rdn,
            delete_old_rdn,
            new_parent,
        } => Change::Rename {
            dn: parse_dn(&dn)?,
            new_rdn: Rdn::parse(&new_rdn).map_err(|e| Refused {
                code: 34,
                message: format!("invalid RDN {new_rdn:?}: {e}"),
            })?,
            delete_old_rdn,
            new_parent: new_parent.as_deref().map(parse_dn).transpose()?,
        },
    })
}

/// A filter with its outer parentheses (LDAP tools accept `cn=x` for `(cn=x)`).
pub fn with_parens(filter: &str) -> String {
    let f = filter.trim();
    if f.starts_with('(') {
        f.to_string()
    } else {
        format!("({f})")
    }
}
