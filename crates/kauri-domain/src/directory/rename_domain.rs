//! Renaming a copy of a domain for a lab: `kauri domain backup rename` runs this on the
//! copy it pulled, so the lab domain cannot be mistaken for production.
//!
//! What changes, in one transaction:
//! - the naming contexts: the domain NC and every NC named below it (configuration,
//!   schema) take the new domain DN; entries below follow by themselves, since DNs are
//!   computed from the hierarchy, and links name ids, not DNs;
//! - every stored DN value that names something in those NCs (DN, DN-Binary and
//!   DN-String syntaxes: `objectCategory`, `defaultObjectCategory`, `wellKnownObjects`,
//!   `fSMORoleOwner`, `nCName`, `lastKnownParent`, …);
//! - the realm in DNS names and principal names (`dnsRoot`, `dNSHostName`,
//!   `servicePrincipalName`, `userPrincipalName`, `msDS-AdditionalDnsHostName`) and the
//!   NetBIOS name (`nETBIOSName`, the domain's crossRef name, SPN components);
//! - the DNS zones named after the realm, and the names inside DNS records;
//! - every secret (password hashes, password history, trust secrets) is removed: a lab
//!   copy carries no credential of production. The domain SID stays, as Samba's rename
//!   keeps it.

use std::ops::ControlFlow;

use kauri_db::{Dn, Filter, Modification, ModifyOp, Rdn, Scope, SearchRequest};
use kauri_kv::Backend;

use super::error::{DirError, DirResult};
use super::{is_secret, Directory};
use crate::provision;

/// The new names.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RenameSpec {
    /// The new DNS realm, e.g. `LAB.EXAMPLE.ORG`.
    pub realm: String,
    /// The new NetBIOS domain name, e.g. `LAB`.
    pub netbios: String,
}

/// What a rename changed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RenameReport {
    /// The realm before, lowercase.
    pub old_realm: String,
    /// The NetBIOS name before.
    pub old_netbios: String,
    /// The domain DN before.
    pub old_domain_dn: String,
    /// The domain DN after.
    pub new_domain_dn: String,
    /// Naming contexts renamed.
    pub naming_contexts: usize,
    /// Entries whose stored values changed.
    pub entries_changed: u64,
    /// Values rewritten.
    pub values_rewritten: u64,
    /// Secret attributes removed.
    pub secrets_removed: u64,
}

/// How a stored value names things, for the rewrite.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Kind {
    /// A DN, or a DN with binary or string data in front (`B:n:hex:DN`, `S:n:text:DN`).
    Dn,
    /// A DNS name or a principal name carrying the realm.
    DnsName,
    /// A service principal name: realm and NetBIOS name as components.
    Spn,
    /// Group policy links: `[LDAP://<DN>;<options>]`, one after the other.
    GpLink,
}

const DNS_ATTRIBUTES: &[&str] = &[
    "dnsRoot",
    "dNSHostName",
    "userPrincipalName",
    "msDS-AdditionalDnsHostName",
    "gPCFileSysPath",
];

fn unwilling(what: impl std::fmt::Display) -> DirError {
    DirError::UnwillingToPerform(what.to_string())
}

/// `dn` with the suffix `old` replaced by `new`, when `dn` is `old` or below it.
fn move_dn(dn: &Dn, old: &Dn, new: &Dn) -> Option<Dn> {
    if dn != old && !dn.is_descendant_of(old) {
        return None;
    }
    let keep = dn.rdns().len() - old.rdns().len();
    let mut rdns: Vec<Rdn> = dn.rdns()[..keep].to_vec();
    rdns.extend(new.rdns().iter().cloned());
    Some(Dn::from_rdns(rdns))
}

/// A DN value (with its `B:`/`S:` prefix, if any) moved from `old` to `new`.
fn rewrite_dn_value(value: &str, old: &Dn, new: &Dn) -> Option<String> {
    let (prefix, dn_text) = match value.get(..2) {
        Some("B:" | "S:") => {
            // B:<count>:<data>:<DN> — the DN starts after the third colon.
            let mut colons = value.match_indices(':').map(|(i, _)| i);
            let third = colons.nth(2)?;
            (&value[..=third], &value[third + 1..])
        }
        _ => ("", value),
    };
    let dn = Dn::parse(dn_text).ok()?;
    let moved = move_dn(&dn, old, new)?;
    Some(format!("{prefix}{moved}"))
}

/// `value` with the DNS suffix `old` (a whole label sequence) replaced by `new`.
fn rewrite_realm(value: &str, old: &str, new: &str) -> Option<String> {
    let lower = value.to_ascii_lowercase();
    let mut out = String::with_capacity(value.len());
    let mut changed = false;
    let mut from = 0;
    while let Some(pos) = lower[from..].find(old).map(|p| p + from) {
        let end = pos + old.len();
        let starts = pos == 0 || matches!(lower.as_bytes()[pos - 1], b'.' | b'@' | b'/' | b'\\');
        let ends = end == lower.len() || matches!(lower.as_bytes()[end], b'/' | b':' | b'\\');
        out.push_str(&value[from..pos]);
        if starts && ends {
            out.push_str(new);
            changed = true;
        } else {
            out.push_str(&value[pos..end]);
        }
        from = end;
    }
    out.push_str(&value[from..]);
    changed.then_some(out)
}

/// Group policy links with the DNs they name moved.
fn rewrite_gp_link(value: &str, old: &Dn, new: &Dn) -> Option<String> {
    let mut out = String::with_capacity(value.len());
    let mut changed = false;
    for link in value.split_inclusive(']') {
        let moved = link
            .find("://")
            .zip(link.rfind(';'))
            .filter(|(start, end)| start + 3 < *end)
            .and_then(|(start, end)| {
                let dn = rewrite_dn_value(&link[start + 3..end], old, new)?;
                Some(format!("{}{dn}{}", &link[..start + 3], &link[end..]))
            });
        match moved {
            Some(m) => {
                changed = true;
                out.push_str(&m);
            }
            None => out.push_str(link),
        }
    }
    changed.then_some(out)
}

/// An SPN with the realm and the NetBIOS domain name component replaced.
fn rewrite_spn(value: &str, spec: &Names) -> Option<String> {
    let realm = rewrite_realm(value, &spec.old_realm, &spec.new_realm);
    let text = realm.as_deref().unwrap_or(value);
    let mut changed = realm.is_some();
    let parts: Vec<String> = text
        .split('/')
        .map(|p| {
            if p.eq_ignore_ascii_case(&spec.old_netbios) {
                changed = true;
                spec.new_netbios.clone()
            } else {
                p.to_string()
            }
        })
        .collect();
    changed.then(|| parts.join("/"))
}

/// The old and new names a rename moves between.
struct Names {
    old_dn: Dn,
    new_dn: Dn,
    old_realm: String,
    new_realm: String,
    old_netbios: String,
    new_netbios: String,
}

impl Names {
    fn rewrite(&self, kind: Kind, value: &[u8]) -> Option<Vec<u8>> {
        let text = std::str::from_utf8(value).ok()?;
        let new = match kind {
            Kind::Dn => rewrite_dn_value(text, &self.old_dn, &self.new_dn),
            Kind::DnsName => rewrite_realm(text, &self.old_realm, &self.new_realm),
            Kind::Spn => rewrite_spn(text, self),
            Kind::GpLink => rewrite_gp_link(text, &self.old_dn, &self.new_dn),
        }?;
        Some(new.into_bytes())
    }
}

impl<B: Backend> Directory<B> {
    /// Renames this directory's domain (see the module documentation) in one transaction.
    /// Meant for a copy: nothing else may use the database meanwhile.
    pub fn rename_domain(&self, spec: &RenameSpec) -> DirResult<RenameReport> {
        let info = self
            .domain()
            .ok_or_else(|| unwilling("the copy holds no domain"))?;
        let new_realm = spec.realm.to_ascii_lowercase();
        let new_netbios = spec.netbios.to_ascii_uppercase();
        provision::check_names(&new_realm, &new_netbios)
            .map_err(|e| unwilling(format!("the new names: {e}")))?;
        if new_realm == info.dns_name {
            return Err(unwilling("the new realm is the domain's current realm"));
        }
        if new_netbios.eq_ignore_ascii_case(&info.netbios) {
            return Err(unwilling(
                "the new NetBIOS name is the domain's current NetBIOS name",
            ));
        }
        let names = Names {
            old_dn: info.domain_dn.clone(),
            new_dn: provision::domain_dn(&new_realm),
            old_realm: info.dns_name.clone(),
            new_realm,
            old_netbios: info.netbios.clone(),
            new_netbios,
        };
        let schema = self.schema();
        // Attribute ids of the copy, classified once.
        let r = self.db.read()?;
        let kind_of = |name: &str| -> Option<Kind> {
            let def = schema.schema.attribute(name)?;
            if def.link_id.is_some() {
                return None;
            }
            if matches!(
                def.attribute_syntax.as_str(),
                "2.5.5.1" | "2.5.5.7" | "2.5.5.14"
            ) {
                return Some(Kind::Dn);
            }
            if def.ldap_name.eq_ignore_ascii_case("servicePrincipalName") {
                return Some(Kind::Spn);
            }
            if def.ldap_name.eq_ignore_ascii_case("gPLink") {
                return Some(Kind::GpLink);
            }
            DNS_ATTRIBUTES
                .iter()
                .any(|a| a.eq_ignore_ascii_case(&def.ldap_name))
                .then_some(Kind::DnsName)
        };
        // Every record of every naming context, tombstones included: the changes each needs.
        let ncs = r.naming_contexts()?;
        let mut changes: Vec<(u64, Vec<Modification>)> = Vec::new();
        let (mut values_rewritten, mut secrets_removed) = (0u64, 0u64);
        let everything =
            Filter::parse("(objectClass=*)").map_err(|e| unwilling(format!("filter: {e}")))?;
        for (_, nc_text) in &ncs {
            let nc = Dn::parse(nc_text).map_err(|e| unwilling(format!("{nc_text}: {e}")))?;
            let req = SearchRequest::new(nc, Scope::Subtree, everything.clone());
            r.search(&req, |hit| {
                let mut mods = Vec::new();
                for a in hit.record.attrs() {
                    let Some(name) = r.attr_name(a.id) else {
                        continue;
                    };
                    if is_secret(&name) {
                        secrets_removed += 1;
                        mods.push(Modification {
                            op: ModifyOp::Delete,
                            attr: name.to_string(),
                            values: Vec::new(),
                        });
                        continue;
                    }
                    let Some(kind) = kind_of(&name) else {
                        continue;
                    };
                    let mut changed = false;
                    let values: Vec<Vec<u8>> = a
                        .values()
                        .map(|v| match names.rewrite(kind, v.raw) {
                            Some(new) => {
                                changed = true;
                                values_rewritten += 1;
                                new
                            }
                            None => v.raw.to_vec(),
                        })
                        .collect();
                    if changed {
                        mods.push(Modification {
                            op: ModifyOp::Replace,
                            attr: name.to_string(),
                            values,
                        });
                    }
                }
                if !mods.is_empty() {
                    changes.push((hit.id, mods));
                }
                Ok(ControlFlow::Continue(()))
            })?;
        }
        // The domain's crossRef: its NetBIOS name and its own name.
        let partitions = info.config_dn.child(
            Rdn::parse("CN=Partitions").map_err(|e| unwilling(format!("CN=Partitions: {e}")))?,
        );
        let mut cross_ref = None;
        let req = SearchRequest::new(
            partitions,
            Scope::OneLevel,
            Filter::parse("(&(objectClass=crossRef)(nETBIOSName=*))")
                .map_err(|e| unwilling(format!("filter: {e}")))?,
        );
        for e in r.search_entries(&req)? {
            let names_domain = e
                .get("nCName")
                .and_then(|v| v.first())
                .and_then(|v| std::str::from_utf8(v).ok())
                .and_then(|t| Dn::parse(t).ok())
                .is_some_and(|d| d == info.domain_dn);
            if names_domain {
                cross_ref = Some(e.dn);
            }
        }
        drop(r);

        let mut w = self.db.write()?;
        let mut renamed = 0;
        for (_, nc_text) in &ncs {
            let nc = Dn::parse(nc_text).map_err(|e| unwilling(format!("{nc_text}: {e}")))?;
            if let Some(new) = move_dn(&nc, &names.old_dn, &names.new_dn) {
                w.rename_naming_context(&nc, &new)?;
                renamed += 1;
            }
        }
        let mut entries_changed = changes.len() as u64;
        for (id, mods) in changes {
            let dn =
                Dn::parse(&w.dn_string(id)?).map_err(|e| unwilling(format!("record {id}: {e}")))?;
            w.modify(&dn, &mods)?;
        }
        // DNS: zones named after the realm, and the names inside records.
        entries_changed += crate::dns::rename::rename_dns(
            &mut w,
            &names.new_dn,
            &names.old_realm,
            &names.new_realm,
        )?;
        // The domain object's own name, and its crossRef's.
        let first_label = names.new_realm.split('.').next().unwrap_or_default();
        w.modify(
            &names.new_dn,
            &[Modification::new(ModifyOp::Replace, "name", &[first_label])],
        )?;
        if let Some(old) = cross_ref {
            let moved = move_dn(&old, &names.old_dn, &names.new_dn).unwrap_or(old);
            w.modify(
                &moved,
                &[Modification::new(
                    ModifyOp::Replace,
                    "nETBIOSName",
                    &[&names.new_netbios],
                )],
            )?;
            let rdn = Rdn::new("CN", &names.new_netbios)
                .map_err(|e| unwilling(format!("CN={}: {e}", names.new_netbios)))?;
            w.rename(&moved, &rdn, true, None)?;
            let renamed_ref = moved.with_rdn(rdn);
            w.modify(
                &renamed_ref,
                &[Modification::new(
                    ModifyOp::Replace,
                    "name",
                    &[&names.new_netbios],
                )],
            )?;
        }
        w.commit()?;
        self.rediscover()?;
        Ok(RenameReport {
            old_realm: names.old_realm,
            old_netbios: names.old_netbios,
            old_domain_dn: names.old_dn.to_string(),
            new_domain_dn: names.new_dn.to_string(),
            naming_contexts: renamed,
            entries_changed,
            values_rewritten,
            secrets_removed,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn realms_are_replaced_as_whole_suffixes() {
        let old = "samdom.example.com";
        let new = "lab.example.org";
        assert_eq!(
            rewrite_realm("dc1.samdom.example.com", old, new).as_deref(),
            Some("dc1.lab.example.org")
        );
        assert_eq!(
            rewrite_realm("Kiri@SAMDOM.EXAMPLE.COM", old, new).as_deref(),
            Some("Kiri@lab.example.org")
        );
        assert_eq!(rewrite_realm("dc1.notsamdom.example.com", old, new), None);
        assert_eq!(
            rewrite_realm("dc1.samdom.example.community", old, new),
            None
        );
        let names = Names {
            old_dn: Dn::parse("DC=samdom,DC=example,DC=com").unwrap(),
            new_dn: Dn::parse("DC=lab,DC=example,DC=org").unwrap(),
            old_realm: old.into(),
            new_realm: new.into(),
            old_netbios: "SAMDOM".into(),
            new_netbios: "LAB".into(),
        };
        assert_eq!(
            rewrite_spn("HOST/dc1.samdom.example.com/SAMDOM", &names).as_deref(),
            Some("HOST/dc1.lab.example.org/LAB")
        );
        assert_eq!(
            rewrite_spn("ldap/dc1.samdom.example.com/samdom.example.com", &names).as_deref(),
            Some("ldap/dc1.lab.example.org/lab.example.org")
        );
        assert_eq!(rewrite_spn("HOST/DC1", &names), None);
    }

    #[test]
    fn dn_values_move_with_their_prefixes() {
        let old = Dn::parse("DC=samdom,DC=example,DC=com").unwrap();
        let new = Dn::parse("DC=lab,DC=example,DC=org").unwrap();
        assert_eq!(
            rewrite_dn_value(
                "CN=Person,CN=Schema,CN=Configuration,DC=samdom,DC=example,DC=com",
                &old,
                &new
            )
            .as_deref(),
            Some("CN=Person,CN=Schema,CN=Configuration,DC=lab,DC=example,DC=org")
        );
        assert_eq!(
            rewrite_dn_value(
                "B:32:A9D1CA15768811D1ADED00C04FD8D5CD:CN=Users,DC=samdom,DC=example,DC=com",
                &old,
                &new
            )
            .as_deref(),
            Some("B:32:A9D1CA15768811D1ADED00C04FD8D5CD:CN=Users,DC=lab,DC=example,DC=org")
        );
        assert_eq!(
            rewrite_dn_value("CN=x,DC=other,DC=example,DC=com", &old, &new),
            None
        );
        assert_eq!(rewrite_dn_value("not a dn", &old, &new), None);
        assert_eq!(
            rewrite_gp_link(
                "[LDAP://cn={31B2},cn=policies,cn=system,DC=samdom,DC=example,DC=com;0][LDAP://cn=x,DC=other;2]",
                &old,
                &new
            )
            .as_deref(),
            Some("[LDAP://cn={31B2},cn=policies,cn=system,DC=lab,DC=example,DC=org;0][LDAP://cn=x,DC=other;2]")
        );
        assert_eq!(
            rewrite_realm(
                r"\\samdom.example.com\sysvol\samdom.example.com\Policies",
                "samdom.example.com",
                "lab.example.org"
            )
            .as_deref(),
            Some(r"\\lab.example.org\sysvol\lab.example.org\Policies")
        );
    }
}
