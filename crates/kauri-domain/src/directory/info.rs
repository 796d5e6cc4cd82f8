//! What the directory knows about the domain it serves, found in the data itself: the
//! naming contexts, the domain SID, the names, and this DC's objects.

use kauri_db::{DbRead, Dn, Filter, Scope, SearchRequest};
use kauri_kv::Backend;

use super::error::DirResult;
use super::view::View;
use crate::sid::Sid;

/// The domain a directory serves.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DomainInfo {
    /// `DC=samdom,DC=example,DC=com`.
    pub domain_dn: Dn,
    /// Record id of the domain object.
    pub domain_id: u64,
    /// The domain SID (every principal's objectSid extends it).
    pub sid: Sid,
    /// DNS name of the domain, lowercase (`samdom.example.com`).
    pub dns_name: String,
    /// NetBIOS name of the domain (`SAMDOM`).
    pub netbios: String,
    /// `CN=Configuration,…`.
    pub config_dn: Dn,
    /// `CN=Schema,CN=Configuration,…`.
    pub schema_dn: Dn,
    /// This DC's `CN=NTDS Settings` object, if provisioned.
    pub ntds_settings: Option<Dn>,
    /// This DC's server object in its site.
    pub server: Option<Dn>,
    /// This DC's computer account.
    pub dc_computer: Option<Dn>,
    /// The object holding this DC's RID counter (`rIDNextRID`): its RID Set, or the
    /// domain object (`nextRid`) when there is none.
    pub rid_counter: (Dn, &'static str),
    /// The application partitions this DC holds (DomainDnsZones, ForestDnsZones): naming
    /// contexts besides the domain, configuration and schema.
    pub app_ncs: Vec<Dn>,
}

/// The DNS name a DN's `DC=` components spell (`DC=samdom,DC=example,DC=com` →
/// `samdom.example.com`), the host a referral to it names; `None` without any.
pub fn dc_host(dn: &Dn) -> Option<String> {
    let labels: Vec<&str> = dn
        .rdns()
        .iter()
        .filter_map(|r| match r.avas() {
            [a] if a.attr.eq_ignore_ascii_case("dc") => Some(a.value.as_str()),
            _ => None,
        })
        .collect();
    (!labels.is_empty()).then(|| labels.join("."))
}

impl DomainInfo {
    /// Finds the domain in a database: the naming context whose head is a `domainDNS`.
    pub fn discover<B: Backend>(r: &DbRead<'_, B>) -> DirResult<Option<DomainInfo>> {
        let mut domain = None;
        let ncs = r.naming_contexts()?;
        for (id, text) in &ncs {
            let (id, text) = (*id, text);
            let classes = r.values(id, "objectClass")?;
            // Application partitions are domainDNS objects too, without a SID.
            let has_sid = !r.values(id, "objectSid")?.is_empty();
            if has_sid && classes.iter().any(|c| c.eq_ignore_ascii_case(b"domainDNS")) {
                if let Ok(dn) = Dn::parse(text) {
                    domain = Some((id, dn));
                    break;
                }
            }
        }
        let Some((domain_id, domain_dn)) = domain else {
            return Ok(None);
        };
        let Some(sid) = r
            .values(domain_id, "objectSid")?
            .first()
            .and_then(|v| Sid::from_bytes(v).ok())
        else {
            return Ok(None);
        };
        let child = |base: &Dn, rdn: &str| -> Option<Dn> {
            kauri_db::Rdn::parse(rdn).ok().map(|r| base.child(r))
        };
        let config_dn = child(&domain_dn, "CN=Configuration").unwrap_or_else(Dn::root);
        let schema_dn = child(&config_dn, "CN=Schema").unwrap_or_else(Dn::root);
        let dns_from_dn = domain_dn
            .rdns()
            .iter()
            .filter_map(|r| r.avas().first().map(|a| a.value.to_ascii_lowercase()))
            .collect::<Vec<_>>()
            .join(".");
        let mut dns_name = dns_from_dn.clone();
        let mut netbios = dns_from_dn
            .split('.')
            .next()
            .unwrap_or_default()
            .to_ascii_uppercase();
        // The crossRef of the domain names both.
        if let Some(partitions) = child(&config_dn, "CN=Partitions") {
            let req = SearchRequest::new(
                partitions,
                Scope::OneLevel,
                Filter::parse("(objectClass=crossRef)").unwrap_or(Filter::And(Vec::new())),
            );
            for e in r.search_entries(&req).unwrap_or_default() {
                let names_domain = e
                    .get("nCName")
                    .and_then(|v| v.first())
                    .and_then(|v| std::str::from_utf8(v).ok())
                    .and_then(|t| Dn::parse(t).ok())
                    .is_some_and(|d| d == domain_dn);
                if !names_domain {
                    continue;
                }
                if let Some(n) = e.get("nETBIOSName").and_then(|v| v.first()) {
                    netbios = String::from_utf8_lossy(n).into_owned();
                }
                if let Some(n) = e.get("dnsRoot").and_then(|v| v.first()) {
                    dns_name = String::from_utf8_lossy(n).to_ascii_lowercase();
                }
            }
        }
        let mut ntds_settings = None;
        let mut server = None;
        let mut dc_computer = None;
        if r.lookup(&config_dn)?.is_some() {
            let req = SearchRequest::new(
                config_dn.clone(),
                Scope::Subtree,
                // A DC removed by a restore leaves a tombstone of its NTDS Settings.
                Filter::parse("(&(objectClass=nTDSDSA)(!(isDeleted=TRUE)))")
                    .unwrap_or(Filter::And(Vec::new())),
            );
            if let Some(e) = r.search_entries(&req)?.into_iter().next() {
                server = e.dn.parent();
                ntds_settings = Some(e.dn);
            }
            if let Some(s) = &server {
                if let Some(id) = r.id_of(s)? {
                    dc_computer = r
                        .text(id, "serverReference")?
                        .and_then(|t| Dn::parse(&t).ok());
                }
            }
        }
        let rid_set = dc_computer
            .as_ref()
            .and_then(|c| child(c, "CN=RID Set"))
            .filter(|d| matches!(r.lookup(d), Ok(Some(_))));
        let rid_counter = match rid_set {
            Some(d) => (d, "rIDNextRID"),
            None => (domain_dn.clone(), "nextRid"),
        };
        let app_ncs = ncs
            .iter()
            .filter_map(|(_, t)| Dn::parse(t).ok())
            .filter(|d| *d != domain_dn && *d != config_dn && *d != schema_dn)
            .collect();
        Ok(Some(DomainInfo {
            app_ncs,
            domain_dn,
            domain_id,
            sid,
            dns_name,
            netbios,
            config_dn,
            schema_dn,
            ntds_settings,
            server,
            dc_computer,
            rid_counter,
        }))
    }

    /// Whether `dn` heads one of the naming contexts this DC holds.
    pub fn is_nc_head(&self, dn: &Dn) -> bool {
        [&self.domain_dn, &self.config_dn, &self.schema_dn]
            .into_iter()
            .chain(&self.app_ncs)
            .any(|nc| nc == dn)
    }

    /// The naming context holding `dn`.
    pub fn nc_of(&self, dn: &Dn) -> &Dn {
        if let Some(app) = self
            .app_ncs
            .iter()
            .find(|nc| dn == *nc || dn.is_descendant_of(nc))
        {
            app
        } else if dn == &self.schema_dn || dn.is_descendant_of(&self.schema_dn) {
            &self.schema_dn
        } else if dn == &self.config_dn || dn.is_descendant_of(&self.config_dn) {
            &self.config_dn
        } else {
            &self.domain_dn
        }
    }

    /// Whether `dn` lies in one of the naming contexts this DC holds (a head included).
    pub fn holds(&self, dn: &Dn) -> bool {
        self.naming_contexts()
            .any(|nc| dn == nc || dn.is_descendant_of(nc))
    }

    /// The heads of the naming contexts this DC holds.
    fn naming_contexts(&self) -> impl Iterator<Item = &Dn> {
        [&self.domain_dn, &self.config_dn, &self.schema_dn]
            .into_iter()
            .chain(&self.app_ncs)
    }

    /// Whether the parent of `dn` lies in a naming context this DC holds (`dn` is below
    /// a head): where a new entry may be added.
    pub fn holds_parent_of(&self, dn: &Dn) -> bool {
        self.naming_contexts().any(|nc| dn.is_descendant_of(nc))
    }

    /// `CN=Deleted Objects` of the naming context holding `dn`.
    pub fn deleted_objects_of(&self, dn: &Dn) -> Option<Dn> {
        kauri_db::Rdn::parse("CN=Deleted Objects")
            .ok()
            .map(|r| self.nc_of(dn).child(r))
    }
}
