//! The LDAP ping as LDAP sees it: a root DSE search for `Netlogon` whose filter names the
//! domain looked for (MS-ADTS 6.3.3), over CLDAP or a TCP connection.

use std::net::IpAddr;

use kauri_db::Filter;
use kauri_domain::directory::ping::PingRequest;
use kauri_ldap_proto::{Attribute, SearchResultEntry};

use crate::ctx::Ctx;

/// Whether a search's attribute list asks for the `Netlogon` attribute.
pub fn wants_netlogon(attributes: &[String]) -> bool {
    attributes
        .iter()
        .any(|a| a.eq_ignore_ascii_case("netlogon"))
}

fn le_u32(v: &[u8]) -> Option<u32> {
    Some(u32::from_le_bytes(v.get(..4)?.try_into().ok()?))
}

/// The ping a filter states: an AND of equality terms (or a single one) over `DnsDomain`,
/// `Host`, `DnsHostName`, `User`, `AAC`, `DomainSid`, `DomainGuid` and `NtVer`. Anything
/// else is not a ping (`None`), and a malformed `NtVer` or `AAC` neither.
pub fn ping_request(filter: &Filter) -> Option<PingRequest> {
    let terms: Vec<&Filter> = match filter {
        Filter::And(items) => items.iter().collect(),
        f @ Filter::Equality(..) => vec![f],
        _ => return None,
    };
    let mut req = PingRequest::default();
    for t in terms {
        let Filter::Equality(attr, value) = t else {
            return None;
        };
        let text = || String::from_utf8_lossy(value).into_owned();
        // An empty value states nothing (a ping with `(DnsDomain=)` asks for this DC).
        if value.is_empty() {
            continue;
        }
        match attr.to_ascii_lowercase().as_str() {
            "dnsdomain" => req.dns_domain = Some(text()),
            "host" => req.host = Some(text()),
            "dnshostname" => req.dns_host_name = Some(text()),
            "user" => req.user = Some(text()),
            "aac" => req.aac = Some(le_u32(value)?),
            "domainsid" => req.domain_sid = Some(value.clone()),
            "domainguid" => req.domain_guid = Some(value.clone()),
            "ntver" => req.nt_version = Some(le_u32(value)?),
            _ => {}
        }
    }
    Some(req)
}

/// The root DSE entry of a ping's answer: the `Netlogon` value, and the other attributes
/// the search asks for.
pub fn entry(
    ctx: &Ctx,
    attributes: &[String],
    identity: &crate::auth::Identity,
    netlogon: Vec<u8>,
) -> SearchResultEntry {
    let others: Vec<String> = attributes
        .iter()
        .filter(|a| !a.eq_ignore_ascii_case("netlogon"))
        .cloned()
        .collect();
    let mut entry = if others.is_empty() {
        SearchResultEntry {
            dn: String::new(),
            attributes: Vec::new(),
        }
    } else {
        crate::rootdse::entry(ctx, &others, identity)
    };
    entry.attributes.push(Attribute {
        name: "netlogon".into(),
        values: vec![netlogon],
    });
    entry
}

/// The `Netlogon` value for a search, or `None` when no entry is to be returned.
pub fn answer(
    ctx: &Ctx,
    filter: &Filter,
    client: Option<IpAddr>,
    server: Option<IpAddr>,
) -> Option<Vec<u8>> {
    let req = ping_request(filter)?;
    let served = if ctx.catalog_served {
        kauri_domain::directory::ping::ds_flags::GC
    } else {
        0
    };
    match ctx.dir.ldap_ping(&req, client, server, served) {
        Ok(v) => v,
        Err(e) => {
            tracing::debug!(error = %e, "LDAP ping not answered");
            None
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn filters_become_pings() {
        let f = Filter::And(vec![
            Filter::Equality("DnsDomain".into(), b"samdom.example.com".to_vec()),
            Filter::Equality("NtVer".into(), vec![6, 0, 0, 0]),
        ]);
        let p = ping_request(&f).unwrap();
        assert_eq!(p.dns_domain.as_deref(), Some("samdom.example.com"));
        assert_eq!(p.nt_version, Some(6));
        assert!(ping_request(&Filter::Present("objectClass".into())).is_none());
        let short = Filter::Equality("NtVer".into(), vec![6]);
        assert!(ping_request(&short).is_none());
    }
}
