//! Turning a copy of a domain's database into a new, authoritative domain controller: what
//! `kauri domain backup restore` does once the copy is loaded.
//!
//! The copy still describes the DCs it was taken from. A restored DC must not be confused
//! with them: it gets a computer account, server object and `CN=NTDS Settings` of its own
//! (its invocation id is the database's new one), takes every FSMO role, and the DCs of the
//! copy are removed (their objects become tombstones), so nothing in the restored domain
//! expects to replicate with them. The RID Manager's available pool moves forward by a
//! margin before the new DC takes its pool, because the old DCs may have handed out RIDs
//! after the copy was taken: Microsoft's forest recovery guide raises it by 100,000.

use kauri_db::{DbWrite, Dn, Filter, Modification, ModifyOp, Scope, SearchRequest};
use kauri_kv::Backend;

use super::error::{DirError, DirResult};
use super::view::View;
use super::{Caller, Change, Directory, Request};
use crate::provision::{self, DcSpec, ProvisionParams};

/// What the restored DC is to be.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RestoreSpec {
    /// Its host name (NetBIOS form, e.g. `DC2`).
    pub dc_name: String,
    /// The site to place it in; by default the site of the copy's first DC, else
    /// `Default-First-Site-Name`.
    pub site: Option<String>,
    /// How far the RID Manager's available pool moves forward.
    pub rid_margin: u32,
}

/// The margin Microsoft's forest recovery guide raises the available RID pool by.
pub const DEFAULT_RID_MARGIN: u32 = 100_000;

/// What a restore changed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RestoreReport {
    /// The new DC's computer account.
    pub dc_computer: String,
    /// The new DC's `CN=NTDS Settings`.
    pub ntds_settings: String,
    /// The new DC's SID.
    pub dc_sid: String,
    /// The server objects of the DCs removed.
    pub removed_dcs: Vec<String>,
    /// The RID pool the new DC starts with (first, last).
    pub rid_pool: (u32, u32),
    /// The first RID the RID Manager will hand out next.
    pub next_available_rid: u32,
    /// Objects whose `fSMORoleOwner` now names the new DC.
    pub roles: usize,
}

/// A DC found in the copy: its server object and computer account.
struct OldDc {
    server: Dn,
    computer: Option<Dn>,
    /// Its DNS host name, whose records go with it.
    host: Option<String>,
    /// Its NTDS Settings' objectGUID, named by its `_msdcs` CNAME.
    ntds_guid: Option<String>,
}

fn unwilling(what: impl std::fmt::Display) -> DirError {
    DirError::UnwillingToPerform(what.to_string())
}

fn cn(value: &str) -> DirResult<kauri_db::Rdn> {
    kauri_db::Rdn::new("CN", value).map_err(|e| unwilling(format!("CN={value}: {e}")))
}

fn filter(text: &str) -> DirResult<Filter> {
    Filter::parse(text).map_err(|e| unwilling(format!("{text}: {e}")))
}

impl<B: Backend> Directory<B> {
    /// Makes this directory, a loaded copy of a domain, the database of a new DC (see the
    /// module documentation), in one transaction. The database must already carry its new
    /// invocation id ([`kauri_db::Db::retire_invocation`]).
    pub fn become_restored_dc(&self, spec: &RestoreSpec) -> DirResult<RestoreReport> {
        let info = self
            .domain()
            .ok_or_else(|| unwilling("the copy holds no domain"))?;
        let snap = self.schema();
        // What the copy holds, read before the transaction.
        let (old_dcs, role_holders, site) = {
            let r = self.db.read()?;
            let live = "(!(isDeleted=TRUE))";
            let mut old_dcs = Vec::new();
            let req = SearchRequest::new(
                info.config_dn.clone(),
                Scope::Subtree,
                filter(&format!("(&(objectClass=server)(serverReference=*){live})"))?,
            );
            for e in r.search_entries(&req)? {
                let computer = e
                    .get("serverReference")
                    .and_then(|v| v.first())
                    .and_then(|v| std::str::from_utf8(v).ok())
                    .and_then(|t| Dn::parse(t).ok());
                // The server's dNSHostName, else its computer's, else its name in the
                // domain.
                let mut host = e
                    .get("dNSHostName")
                    .and_then(|v| v.first())
                    .map(|v| String::from_utf8_lossy(v).to_ascii_lowercase());
                if host.is_none() {
                    if let Some(id) = computer.as_ref().map(|c| r.id_of(c)).transpose()?.flatten() {
                        host = r.text(id, "dNSHostName")?.map(|t| t.to_ascii_lowercase());
                    }
                }
                if host.is_none() {
                    host =
                        e.dn.rdn()
                            .and_then(|r| r.avas().first().map(|a| a.value.to_ascii_lowercase()))
                            .map(|n| format!("{n}.{}", info.dns_name));
                }
                let ntds_guid = match r.id_of(&e.dn.child(cn("NTDS Settings")?))? {
                    Some(id) => r
                        .values(id, "objectGUID")?
                        .first()
                        .and_then(|g| <[u8; 16]>::try_from(g.as_slice()).ok())
                        .map(|g| crate::schema::builtin::format_guid(&g)),
                    None => None,
                };
                old_dcs.push(OldDc {
                    server: e.dn,
                    computer,
                    host,
                    ntds_guid,
                });
            }
            // Where AD keeps its roles: the domain (PDC emulator), its RID Manager and
            // Infrastructure objects, the Partitions container (domain naming), the
            // Schema NC head, and each site's NTDS Site Settings (topology generator).
            let mut places = vec![
                (info.domain_dn.clone(), Scope::Base),
                (info.domain_dn.child(cn("Infrastructure")?), Scope::Base),
                (info.config_dn.child(cn("Partitions")?), Scope::Base),
                (info.schema_dn.clone(), Scope::Base),
                (info.config_dn.child(cn("Sites")?), Scope::Subtree),
            ];
            if let Some(m) = r
                .text(info.domain_id, "rIDManagerReference")?
                .and_then(|t| Dn::parse(&t).ok())
            {
                places.push((m, Scope::Base));
            }
            let mut holders = Vec::new();
            for (base, scope) in places {
                if r.lookup(&base)?.is_none() {
                    continue;
                }
                let wanted = if scope == Scope::Base {
                    "(|(fSMORoleOwner=*)(interSiteTopologyGenerator=*))"
                } else {
                    "(objectClass=nTDSSiteSettings)"
                };
                let req = SearchRequest::new(base, scope, filter(wanted)?);
                for e in r.search_entries(&req)? {
                    for attr in ["fSMORoleOwner", "interSiteTopologyGenerator"] {
                        if e.get(attr).is_some() {
                            holders.push((e.dn.clone(), attr));
                        }
                    }
                }
            }
            // The site of the first old DC: its server object is CN=<dc>,CN=Servers,CN=<site>,…
            let old_site = old_dcs
                .first()
                .and_then(|d| d.server.parent())
                .and_then(|servers| servers.parent())
                .and_then(|site| {
                    site.rdn()
                        .and_then(|r| r.avas().first().map(|a| a.value.clone()))
                });
            let site = match &spec.site {
                Some(s) => s.clone(),
                None => old_site.unwrap_or_else(|| "Default-First-Site-Name".to_string()),
            };
            (old_dcs, holders, site)
        };
        let params = ProvisionParams {
            realm: info.dns_name.to_ascii_uppercase(),
            netbios_domain: info.netbios.clone(),
            dc_name: spec.dc_name.to_ascii_uppercase(),
            domain_sid: info.sid.clone(),
            site: site.clone(),
        };
        let system = Request {
            caller: Caller::System,
            encrypted: true,
            change: Change::Delete {
                dn: Dn::root(),
                tree: false,
            },
        };
        let apply = |w: &mut DbWrite<'_, B>, change: Change| -> DirResult<()> {
            self.apply(
                w,
                &Request {
                    change,
                    ..system.clone()
                },
            )
        };
        let mut w = self.db.write()?;
        // The old DCs go first, so the new one may take the name of one of them.
        let mut removed = Vec::new();
        for dc in &old_dcs {
            apply(
                &mut w,
                Change::Delete {
                    dn: dc.server.clone(),
                    tree: true,
                },
            )?;
            if let Some(c) = &dc.computer {
                if w.id_of(c)?.is_some() {
                    apply(
                        &mut w,
                        Change::Delete {
                            dn: c.clone(),
                            tree: true,
                        },
                    )?;
                }
            }
            removed.push(dc.server.to_string());
        }
        // Their DNS records go too; the new DC registers its own when it first serves.
        let new_host = format!("{}.{}", params.dc_name, info.dns_name).to_ascii_lowercase();
        let now = super::now_secs();
        for dc in &old_dcs {
            if let Some(host) = &dc.host {
                self.forget_dns_dc(&mut w, host, dc.ntds_guid.as_deref(), &new_host, now)?;
            }
        }
        // Move the RID Manager's pool past what the old DCs may have handed out since.
        let manager = w
            .text(info.domain_id, "rIDManagerReference")?
            .and_then(|t| Dn::parse(&t).ok())
            .ok_or_else(|| unwilling("the domain names no RID Manager"))?;
        let mid = w
            .id_of(&manager)?
            .ok_or_else(|| unwilling(format!("the RID Manager {manager} is missing")))?;
        let available = w
            .int(mid, "rIDAvailablePool")?
            .ok_or_else(|| unwilling("the RID Manager has no rIDAvailablePool"))?
            as u64;
        let first = (available as u32)
            .checked_add(spec.rid_margin)
            .ok_or_else(|| unwilling("the domain's RID space is exhausted"))?;
        let max = (available >> 32) as u32;
        if first > max {
            return Err(unwilling("the domain's RID space is exhausted"));
        }
        let raised = ((u64::from(max) << 32) | u64::from(first)) as i64;
        w.modify(
            &manager,
            &[Modification::new(
                ModifyOp::Replace,
                "rIDAvailablePool",
                &[&raised.to_string()],
            )],
        )?;
        let (pool_first, pool_last) = self.take_rid_block(&mut w, &info)?;
        // The new DC's account takes the pool's first RID; its RID Set hands out the rest.
        let dc_spec = DcSpec {
            rid: pool_first,
            pool_first: pool_first + 1,
            pool_last,
        };
        let entries = provision::dc_entries(&params, &snap.schema, &dc_spec)
            .map_err(|e| unwilling(format!("the new DC's objects: {e}")))?;
        let mut computer = None;
        let mut ntds = None;
        let mut later = Vec::new();
        for mut pe in entries {
            super::setup::stamp_invocation(&mut pe.entry, self.db.invocation_id());
            later.extend(self.take_forward_references(&w, &mut pe.entry)?);
            let dn = pe.entry.dn.clone();
            let classes = pe.entry.get("objectClass").unwrap_or_default();
            if classes.iter().any(|c| c.eq_ignore_ascii_case(b"computer")) {
                computer = Some(dn.clone());
            }
            if classes.iter().any(|c| c.eq_ignore_ascii_case(b"nTDSDSA")) {
                ntds = Some(dn.clone());
            }
            self.add_entry(&mut w, &system, &snap, pe.entry, false)
                .map_err(|e| match e {
                    DirError::NoSuchObject(m) => {
                        unwilling(format!("{dn}: {m} (does the site {site} exist?)"))
                    }
                    other => other,
                })?;
        }
        self.add_forward_references(&mut w, later)?;
        let (Some(computer), Some(ntds)) = (computer, ntds) else {
            return Err(unwilling("the new DC's objects are incomplete"));
        };
        // Every role the old DCs held is the new DC's.
        let ntds_text = ntds.to_string();
        for (holder, attr) in &role_holders {
            apply(
                &mut w,
                Change::Modify {
                    sd_flags: None,
                    dn: holder.clone(),
                    mods: vec![Modification::new(ModifyOp::Replace, attr, &[&ntds_text])],
                    permissive: false,
                },
            )?;
        }
        w.commit()?;
        self.rediscover()?;
        Ok(RestoreReport {
            dc_computer: computer.to_string(),
            ntds_settings: ntds_text,
            dc_sid: info.sid.with_rid(pool_first).to_string(),
            removed_dcs: removed,
            rid_pool: (pool_first, pool_last),
            next_available_rid: pool_last + 1,
            roles: role_holders.len(),
        })
    }
}
