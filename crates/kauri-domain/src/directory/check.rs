//! The domain's own consistency check, beside the database's: every object against the
//! schema (its classes form one chain, its mandatory attributes are there, its other
//! attributes are allowed) and the values AD keeps unique (sAMAccountName, objectSid,
//! objectGUID) unique. Read-only, on one snapshot.

use std::collections::HashMap;
use std::ops::ControlFlow;

use kauri_db::{DbRead, Filter, Scope, SearchRequest};
use kauri_kv::Backend;

use super::error::DirResult;
use super::{is_tombstone, Directory};

/// One thing wrong with the domain's data.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DomainProblem {
    /// The object (for duplicates: the second one found).
    pub dn: String,
    /// What is wrong.
    pub what: String,
}

/// What the domain check found.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct DomainCheck {
    /// Objects examined.
    pub objects: u64,
    /// Problems found (the first 10,000).
    pub problems: Vec<DomainProblem>,
}

/// Attributes every record carries whatever its classes say.
const ALWAYS: &[&str] = &["usncreated", "usnchanged"];

impl<B: Backend> Directory<B> {
    /// Checks every object of every naming context (see the module docs).
    pub fn check_domain(&self) -> DirResult<DomainCheck> {
        let snap = self.schema();
        let r = self.db().read()?;
        let mut out = DomainCheck::default();
        // objectGUID is unique everywhere; objectSid and sAMAccountName within a naming
        // context (the configuration's well-known principals share SIDs with the domain's
        // foreign security principals, as in AD).
        let mut unique: HashMap<(String, &'static str, Vec<u8>), String> = HashMap::new();
        let all = Filter::Present("objectClass".into());
        for (_, nc) in r.naming_contexts()? {
            let Ok(base) = kauri_db::Dn::parse(&nc) else {
                continue;
            };
            let req = SearchRequest::new(base, Scope::Subtree, all.clone());
            let mut dns = r.dn_cache();
            r.search(&req, |hit| {
                out.objects += 1;
                let dn = r.cached_dn(&mut dns, hit.id)?;
                let mut problems = Vec::new();
                self.check_object(&r, &snap, hit.id, &mut problems);
                if !is_tombstone(&r, hit.id) {
                    for attr in ["sAMAccountName", "objectSid", "objectGUID"] {
                        let Some(aid) = r.attr_id(attr) else { continue };
                        let Some(a) = hit.record.attr(aid) else {
                            continue;
                        };
                        let scope = if attr == "objectGUID" {
                            ""
                        } else {
                            nc.as_str()
                        };
                        for v in a.values() {
                            let key = (scope.to_string(), attr, v.norm().into_owned());
                            if let Some(first) = unique.get(&key) {
                                problems.push(format!("{attr} also held by {first}"));
                            } else {
                                unique.insert(key, dn.clone());
                            }
                        }
                    }
                }
                for what in problems {
                    if out.problems.len() < 10_000 {
                        out.problems.push(DomainProblem {
                            dn: dn.clone(),
                            what,
                        });
                    }
                }
                Ok(ControlFlow::Continue(()))
            })?;
        }
        Ok(out)
    }

    /// One object against the schema.
    fn check_object(
        &self,
        r: &DbRead<'_, B>,
        snap: &super::SchemaSnapshot,
        id: u64,
        problems: &mut Vec<String>,
    ) {
        let Ok(Some(rec)) = r.record(id) else {
            return;
        };
        let classes: Vec<String> = r
            .attr_id("objectClass")
            .and_then(|a| rec.attr(a))
            .map(|a| {
                a.values()
                    .map(|v| String::from_utf8_lossy(v.raw).into_owned())
                    .collect()
            })
            .unwrap_or_default();
        let refs: Vec<&str> = classes.iter().map(String::as_str).collect();
        let set = match snap.class_set(&refs) {
            Ok(s) => s,
            Err(e) => {
                problems.push(format!("object classes: {e}"));
                return;
            }
        };
        // Tombstones keep what deletion leaves, not what their classes require.
        if is_tombstone(r, id) {
            return;
        }
        let mut present: Vec<String> = rec
            .attrs()
            .filter_map(|a| r.attr_name(a.id).map(|n| n.to_ascii_lowercase()))
            .collect();
        if let Ok(links) = r.link_values(id) {
            for (attr, _) in links {
                if let Some(n) = r.attr_name(attr) {
                    present.push(n.to_ascii_lowercase());
                }
            }
        }
        for must in &set.must {
            if must != "ntsecuritydescriptor" && !present.contains(must) {
                problems.push(format!(
                    "mandatory attribute {must} of class {} is missing",
                    set.structural
                ));
            }
        }
        for name in &present {
            let computed_back_link = matches!(
                self.db().config().link_of_lower(name),
                Some(kauri_db::config::LinkRole::Back { .. })
            );
            if !set.allowed.contains(name)
                && !ALWAYS.contains(&name.as_str())
                && !computed_back_link
            {
                problems.push(format!(
                    "attribute {name} is not allowed on class {}",
                    set.structural
                ));
            }
        }
    }
}
