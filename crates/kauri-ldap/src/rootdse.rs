//! The root DSE: what a client reads (base search on the empty DN) to learn what this
//! server is, which naming contexts it holds and which controls and extensions it supports.

use crate::auth::Identity;
use std::time::{SystemTime, UNIX_EPOCH};

use kauri_ldap_proto::controls as ctl;
use kauri_ldap_proto::{Attribute, SearchResultEntry};

use crate::ctx::Ctx;

/// Controls this server implements (advertised in `supportedControl`).
pub const SUPPORTED_CONTROLS: &[&str] = &[
    ctl::PAGED_RESULTS,
    ctl::SORT_REQUEST,
    ctl::VLV_REQUEST,
    ctl::TREE_DELETE,
    ctl::TREE_DELETE_EX,
    ctl::PERMISSIVE_MODIFY,
    ctl::DOMAIN_SCOPE,
    ctl::SEARCH_OPTIONS,
    ctl::SHOW_DELETED,
    // Without the recycle bin, recycled objects are the tombstones show-deleted shows,
    // and no link value is kept deactivated, so there is none more to reveal.
    ctl::SHOW_RECYCLED,
    ctl::SHOW_DEACTIVATED_LINK,
    ctl::EXTENDED_DN,
    ctl::ASQ,
];

/// AD capabilities announced by a domain controller (`supportedCapabilities`): Active
/// Directory, its Windows Server 2003, integrity, 2008, 2008 R2 and 2012 feature sets.
pub const AD_CAPABILITIES: &[&str] = &[
    "1.2.840.113556.1.4.800",
    "1.2.840.113556.1.4.1670",
    "1.2.840.113556.1.4.1791",
    "1.2.840.113556.1.4.1935",
    "1.2.840.113556.1.4.2080",
    "1.2.840.113556.1.4.2237",
];

/// Extended operations this server implements.
pub const SUPPORTED_EXTENSIONS: &[&str] = &[
    ctl::START_TLS,
    ctl::WHO_AM_I,
    ctl::PASSWORD_MODIFY,
    ctl::KAURI_BACKUP,
    ctl::KAURI_STATUS,
];

fn gentime_now() -> String {
    let secs = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0);
    kauri_db::syntax::generalized_time(secs)
}

/// The root DSE entry, with the attributes asked for (all when none or `*`/`+` is asked).
pub fn entry(ctx: &Ctx, requested: &[String], identity: &Identity) -> SearchResultEntry {
    let mut attrs: Vec<(&str, Vec<Vec<u8>>)> = Vec::new();
    let mut ncs = ctx.naming_contexts();
    let default_nc = ctx.default_among(&ncs);
    // AD lists the domain first, then the configuration and the schema partitions.
    let rank = |nc: &String| {
        let lower = nc.to_ascii_lowercase();
        let default = default_nc.to_ascii_lowercase();
        if lower == default {
            0
        } else if lower == format!("cn=configuration,{default}") {
            1
        } else if lower == format!("cn=schema,cn=configuration,{default}") {
            2
        } else {
            3
        }
    };
    ncs.sort_by_key(rank);
    let b = |s: &str| s.as_bytes().to_vec();
    attrs.push(("objectClass", vec![b("top")]));
    if !ncs.is_empty() {
        attrs.push(("namingContexts", ncs.iter().map(|n| b(n)).collect()));
    }
    if !default_nc.is_empty() {
        attrs.push(("defaultNamingContext", vec![b(&default_nc)]));
        attrs.push(("rootDomainNamingContext", vec![b(&default_nc)]));
        let lower: Vec<String> = ncs.iter().map(|n| n.to_ascii_lowercase()).collect();
        let config = format!("CN=Configuration,{default_nc}");
        if lower.contains(&config.to_ascii_lowercase()) {
            attrs.push(("configurationNamingContext", vec![b(&config)]));
            let schema = format!("CN=Schema,{config}");
            if lower.contains(&schema.to_ascii_lowercase()) {
                attrs.push(("schemaNamingContext", vec![b(&schema)]));
            }
        }
    }
    attrs.push((
        "subschemaSubentry",
        vec![b(&crate::subschema::Subschema::dn(&default_nc))],
    ));
    attrs.push(("supportedLDAPVersion", vec![b("3")]));
    attrs.push((
        "supportedControl",
        SUPPORTED_CONTROLS.iter().map(|c| b(c)).collect(),
    ));
    attrs.push((
        "supportedExtension",
        SUPPORTED_EXTENSIONS.iter().map(|c| b(c)).collect(),
    ));
    // AD's list: GSSAPI (Kerberos) and GSS-SPNEGO (Kerberos or NTLM) need a domain.
    let mut sasl = Vec::new();
    if ctx.dir.domain().is_some() {
        sasl.push(b("GSSAPI"));
        sasl.push(b("GSS-SPNEGO"));
    }
    sasl.push(b("PLAIN"));
    if !ctx.cfg().listen_ldapi.as_os_str().is_empty() {
        sasl.push(b("EXTERNAL"));
    }
    attrs.push(("supportedSASLMechanisms", sasl));
    if let Some(domain) = ctx.dir.domain() {
        // What AD clients read to learn the domain and this DC (MS-ADTS 3.1.1.3.2).
        let dc_host = domain
            .dc_computer
            .as_ref()
            .and_then(|d| {
                d.rdn()
                    .and_then(|r| r.avas().first().map(|a| a.value.clone()))
            })
            .unwrap_or_else(|| "dc".into());
        let fqdn = format!("{}.{}", dc_host.to_ascii_lowercase(), domain.dns_name);
        attrs.push(("dnsHostName", vec![b(&fqdn)]));
        if let Some(server) = &domain.server {
            attrs.push(("serverName", vec![b(&server.to_string())]));
        }
        if let Some(ntds) = &domain.ntds_settings {
            attrs.push(("dsServiceName", vec![b(&ntds.to_string())]));
        }
        attrs.push((
            "ldapServiceName",
            vec![b(&format!(
                "{}:{}$@{}",
                domain.dns_name,
                dc_host.to_ascii_lowercase(),
                domain.dns_name.to_ascii_uppercase()
            ))],
        ));
        let level = kauri_domain::provision::BEHAVIOR_VERSION.to_string();
        attrs.push(("domainFunctionality", vec![b(&level)]));
        attrs.push(("forestFunctionality", vec![b(&level)]));
        attrs.push(("domainControllerFunctionality", vec![b(&level)]));
        attrs.push(("isGlobalCatalogReady", vec![b("TRUE")]));
        attrs.push((
            "supportedCapabilities",
            AD_CAPABILITIES.iter().map(|c| b(c)).collect(),
        ));
        attrs.push((
            "supportedLDAPPolicies",
            [
                "MaxPageSize",
                "MaxValRange",
                "MaxResultSetSize",
                "MaxConnections",
            ]
            .iter()
            .map(|c| b(c))
            .collect(),
        ));
    } else {
        attrs.push(("dnsHostName", vec![b(&ctx.cfg().dns_host_name)]));
    }
    if !default_nc.is_empty() && ctx.dir.domain().is_none() {
        // AD's server object lives in the first site of the forest's configuration.
        let cfg = ctx.cfg();
        let host = cfg.dns_host_name.split('.').next().unwrap_or("localhost");
        attrs.push((
            "serverName",
            vec![b(&format!(
                "CN={host},CN=Servers,CN=Default-First-Site-Name,CN=Sites,CN=Configuration,{default_nc}"
            ))],
        ));
    }
    attrs.push((
        "highestCommittedUSN",
        vec![b(&ctx.db.highest_committed_usn().to_string())],
    ));
    attrs.push(("currentTime", vec![b(&gentime_now())]));
    attrs.push(("isSynchronized", vec![b("TRUE")]));
    attrs.push(("vendorName", vec![b("Kauri")]));
    attrs.push(("vendorVersion", vec![b(env!("CARGO_PKG_VERSION"))]));
    // The caller's own token, when asked for by name (MS-ADTS 3.1.1.3.2): its SID, its
    // groups, and the well-known SIDs of a network logon.
    if requested
        .iter()
        .any(|r| r.eq_ignore_ascii_case("tokenGroups"))
    {
        if let Identity::Account(a) = identity {
            let mut sids: Vec<Vec<u8>> = a.sid.iter().map(|s| s.to_bytes()).collect();
            sids.extend(a.groups.iter().map(|s| s.to_bytes()));
            let snap = ctx.db.read().ok();
            let domain = ctx.dir.domain();
            for well_known in ["S-1-1-0", "S-1-5-2", "S-1-5-11"] {
                let Ok(sid) = kauri_domain::sid::Sid::parse(well_known) else {
                    continue;
                };
                // The groups the well-known identity is a member of (through its foreign
                // security principal, e.g. Pre-Windows 2000 Compatible Access).
                if let (Some(snap), Some(domain)) = (&snap, &domain) {
                    let holders = snap.find_eq("objectSid", &sid.to_bytes()).ok().flatten();
                    for fsp in holders.unwrap_or_default() {
                        if let Ok(groups) = kauri_domain::directory::token_groups(snap, domain, fsp)
                        {
                            sids.extend(groups.into_iter().map(|(_, s)| s.to_bytes()));
                        }
                    }
                }
                sids.push(sid.to_bytes());
            }
            let mut seen = std::collections::HashSet::new();
            sids.retain(|s| seen.insert(s.clone()));
            attrs.push(("tokenGroups", sids));
        }
    }
    let all = requested.is_empty() || requested.iter().any(|r| r == "*" || r == "+");
    let attributes = attrs
        .into_iter()
        .filter(|(n, _)| all || requested.iter().any(|r| r.eq_ignore_ascii_case(n)))
        .map(|(n, values)| Attribute {
            name: n.to_string(),
            values,
        })
        .collect();
    SearchResultEntry {
        dn: String::new(),
        attributes,
    }
}
