//! What every replayed conversation shares, learned from the target before the run: the
//! domain's names, real DNs grouped by their signature (so a search recorded against
//! `CN,CN,DC,DC` goes to a real DN of that shape), values for filters, the accounts
//! conversations authenticate as, which services the server offers, and a scratch OU
//! where adds, modifies and deletes land (removed afterwards).

use std::collections::HashMap;
use std::time::Duration;

use anyhow::{Context, Result};
use kauri_auth::krb::crypto::Key;
use kauri_ldap_client::proto::{Control, ResultCode, SearchScope};
use kauri_ldap_client::{search_request, Filter, LdapClient};
use kauri_traffic::random::Rng;
use parking_lot::Mutex;

use super::filter::ValuePool;
use super::outcome::Failure;
use crate::admin::remote::first;

/// An account a conversation authenticates as.
#[derive(Debug, Clone)]
pub struct Account {
    /// sAMAccountName (for NTLM and Kerberos).
    pub sam: String,
    /// What a simple bind names: the DN, else the UPN.
    pub bind_name: String,
    /// The password.
    pub password: String,
}

/// Which of the server's services answered when probed.
#[derive(Debug, Clone, Copy, Default, serde::Serialize)]
pub struct Services {
    /// CLDAP netlogon pings on the LDAP port over UDP.
    pub cldap: bool,
    /// DNS on the DNS port.
    pub dns: bool,
    /// The KDC on the Kerberos port.
    pub kdc: bool,
}

/// The shared context of a replay.
pub struct Ctx {
    /// LDAP `host:port` (CLDAP uses the same port over UDP).
    pub ldap_addr: String,
    /// KDC `host:port`.
    pub kdc_addr: String,
    /// DNS `host:port`.
    pub dns_addr: String,
    /// Kerberos realm (upper case).
    pub realm: String,
    /// DNS domain (lower case).
    pub dns_domain: String,
    /// NetBIOS domain name, for NTLM.
    pub netbios: String,
    /// The domain naming context.
    pub base_dn: String,
    /// The DC's host name (`ldap/<host>` is the service asked for in TGS exchanges).
    pub dc_host: String,
    /// Sampled DNs by signature without the domain's `DC` tail (`CN,CN`, `OU`, empty for
    /// the domain itself).
    pub dns_by_shape: HashMap<String, Vec<String>>,
    /// Sampled attribute values for filters.
    pub values: ValuePool,
    /// Names DNS queries ask for, with their types.
    pub dns_names: Vec<(String, u16)>,
    /// Accounts to authenticate as.
    pub accounts: Vec<Account>,
    /// Services that answered.
    pub services: Services,
    /// The scratch OU for writes, when one could be made.
    pub scratch: Option<String>,
    /// The size limit sent with searches below one level.
    pub size_limit: i32,
    /// How long an operation may take before it counts as timed out.
    pub op_timeout: Duration,
    /// Bind with Kerberos where the recording did (falls back to NTLM).
    pub prefer_kerberos: bool,
    /// Long-term keys derived so far, by account.
    pub keys: Mutex<HashMap<String, Key>>,
}

/// Keeps at most `cap` items of a stream, each equally likely (reservoir sampling).
fn reservoir<T>(v: &mut Vec<T>, seen: u64, cap: usize, item: T, rng: &mut Rng) {
    if v.len() < cap {
        v.push(item);
    } else {
        let j = rng.below(seen) as usize;
        if j < cap {
            v[j] = item;
        }
    }
}

/// The signature of a DN: its RDN attribute types, upper case, comma-joined.
pub fn signature(dn: &str) -> String {
    let Ok(parsed) = kauri_db::Dn::parse(dn) else {
        return String::new();
    };
    parsed
        .rdns()
        .iter()
        .map(|r| {
            r.avas()
                .first()
                .map(|a| a.attr.to_ascii_uppercase())
                .unwrap_or_default()
        })
        .collect::<Vec<_>>()
        .join(",")
}

/// A signature without its trailing `DC` components: what is matched against the target,
/// whose domain may have a different number of labels.
pub fn shape(sig: &str) -> String {
    let mut parts: Vec<&str> = sig.split(',').filter(|p| !p.is_empty()).collect();
    while parts.last() == Some(&"DC") {
        parts.pop();
    }
    parts.join(",")
}

impl Ctx {
    /// A DN of the target with the shape of `sig`: the shape itself, else shorter shapes
    /// (dropping leading components), else the domain.
    pub fn dn_like(&self, sig: &str, rng: &mut Rng) -> String {
        let full = shape(sig);
        let mut parts: Vec<&str> = full.split(',').filter(|p| !p.is_empty()).collect();
        loop {
            let key = parts.join(",");
            if let Some(v) = self.dns_by_shape.get(&key) {
                if !v.is_empty() {
                    return v[rng.below(v.len() as u64) as usize].clone();
                }
            }
            if parts.is_empty() {
                return self.base_dn.clone();
            }
            parts.remove(0);
        }
    }

    /// An account for conversation `n`.
    pub fn account(&self, n: u64) -> Option<&Account> {
        if self.accounts.is_empty() {
            return None;
        }
        self.accounts.get((n % self.accounts.len() as u64) as usize)
    }

    /// The AES key of `account`, derived once per run.
    pub fn key_of(&self, account: &Account) -> Result<Key, Failure> {
        if let Some(k) = self.keys.lock().get(&account.sam) {
            return Ok(k.clone());
        }
        let k = super::krb::user_key(&self.realm, &account.sam, &account.password)?;
        self.keys.lock().insert(account.sam.clone(), k.clone());
        Ok(k)
    }
}

/// What the root DSE and the partitions container say about the domain.
pub struct DomainFacts {
    /// defaultNamingContext.
    pub base_dn: String,
    /// configurationNamingContext.
    pub config_dn: String,
    /// dnsHostName.
    pub dc_host: String,
    /// DNS domain, lower case.
    pub dns_domain: String,
    /// NetBIOS name of the domain.
    pub netbios: String,
}

/// Reads the domain's names from the root DSE (and its NetBIOS name from its crossRef).
pub async fn domain_facts(c: &mut LdapClient) -> Result<DomainFacts> {
    let req = search_request(
        "",
        SearchScope::Base,
        Filter::present("objectClass"),
        &[
            "defaultNamingContext",
            "configurationNamingContext",
            "dnsHostName",
        ],
    );
    let out = c
        .search(req, Vec::new())
        .await
        .context("reading the root DSE")?;
    let e = out
        .entries
        .first()
        .context("the server returned no root DSE")?;
    let base_dn = first(e, "defaultNamingContext")
        .context("the root DSE names no defaultNamingContext: not an AD domain controller")?;
    let config_dn = first(e, "configurationNamingContext").unwrap_or_default();
    let dns_domain = kauri_db::Dn::parse(&base_dn)
        .map(|d| {
            d.rdns()
                .iter()
                .filter_map(|r| r.avas().first())
                .filter(|a| a.attr.eq_ignore_ascii_case("dc"))
                .map(|a| a.value.to_ascii_lowercase())
                .collect::<Vec<_>>()
                .join(".")
        })
        .unwrap_or_default();
    let dc_host = first(e, "dnsHostName").unwrap_or_else(|| format!("dc.{dns_domain}"));
    let mut netbios = dns_domain
        .split('.')
        .next()
        .unwrap_or_default()
        .to_ascii_uppercase();
    if !config_dn.is_empty() {
        let req = search_request(
            &format!("CN=Partitions,{config_dn}"),
            SearchScope::OneLevel,
            Filter::eq("nCName", &base_dn),
            &["nETBIOSName"],
        );
        if let Ok(out) = c.search(req, Vec::new()).await {
            if let Some(n) = out.entries.first().and_then(|e| first(e, "nETBIOSName")) {
                netbios = n;
            }
        }
    }
    Ok(DomainFacts {
        base_dn,
        config_dn,
        dc_host,
        dns_domain,
        netbios,
    })
}

/// Attributes sampled for filter values.
const SAMPLED: &[&str] = &[
    "objectClass",
    "sAMAccountName",
    "userPrincipalName",
    "objectSid",
    "objectGUID",
    "cn",
    "name",
    "dNSHostName",
    "servicePrincipalName",
    "mail",
    "displayName",
    "givenName",
    "sn",
    "distinguishedName",
];

/// DNs per shape, and values per attribute, kept from the sweep.
const DNS_PER_SHAPE: usize = 2_000;
const VALUES_PER_ATTRIBUTE: usize = 4_000;

/// Sweeps the domain (and the configuration partition) once, paged, keeping a uniform
/// sample of DNs per shape and of values per attribute.
pub async fn sample(
    c: &mut LdapClient,
    facts: &DomainFacts,
    rng: &mut Rng,
) -> Result<(HashMap<String, Vec<String>>, ValuePool, u64)> {
    let mut by_shape: HashMap<String, (u64, Vec<String>)> = HashMap::new();
    let mut values: HashMap<String, (u64, Vec<Vec<u8>>)> = HashMap::new();
    let mut total = 0u64;
    for base in [facts.base_dn.as_str(), facts.config_dn.as_str()] {
        if base.is_empty() {
            continue;
        }
        let req = search_request(
            base,
            SearchScope::Subtree,
            Filter::present("objectClass"),
            SAMPLED,
        );
        let done = c
            .search_paged(req, Vec::new(), 1000, |e| {
                total += 1;
                let key = shape(&signature(&e.dn));
                let slot = by_shape.entry(key).or_default();
                slot.0 += 1;
                reservoir(&mut slot.1, slot.0, DNS_PER_SHAPE, e.dn.clone(), rng);
                for a in &e.attributes {
                    let slot = values.entry(a.name.to_ascii_lowercase()).or_default();
                    for v in &a.values {
                        slot.0 += 1;
                        reservoir(&mut slot.1, slot.0, VALUES_PER_ATTRIBUTE, v.clone(), rng);
                    }
                }
                Ok::<(), kauri_ldap_client::ClientError>(())
            })
            .await
            .with_context(|| format!("sampling {base}"))?;
        if done.result.code != ResultCode::SUCCESS {
            anyhow::bail!(
                "sampling {base}: {}",
                kauri_ldap_client::code_name(done.result.code)
            );
        }
    }
    let mut pool = ValuePool::default();
    for (name, (_, vs)) in values {
        for v in vs {
            pool.add(&name, &v, VALUES_PER_ATTRIBUTE);
        }
    }
    Ok((
        by_shape.into_iter().map(|(k, (_, v))| (k, v)).collect(),
        pool,
        total,
    ))
}

/// The DNS names a replayed client asks for: the DC locator's SRV records, the DC's and
/// the domain's addresses, and sampled computers' host names.
pub fn dns_names(facts: &DomainFacts, pool: &ValuePool, rng: &mut Rng) -> Vec<(String, u16)> {
    use super::udp::qtype;
    let d = &facts.dns_domain;
    let mut names = vec![
        (format!("_ldap._tcp.{d}"), qtype::SRV),
        (format!("_ldap._tcp.dc._msdcs.{d}"), qtype::SRV),
        (format!("_kerberos._tcp.{d}"), qtype::SRV),
        (format!("_kerberos._udp.{d}"), qtype::SRV),
        (
            format!("_ldap._tcp.Default-First-Site-Name._sites.dc._msdcs.{d}"),
            qtype::SRV,
        ),
        (facts.dc_host.clone(), qtype::A),
        (d.clone(), qtype::A),
        (d.clone(), qtype::SOA),
    ];
    for _ in 0..32 {
        if let Some(h) = pool.pick("dNSHostName", rng) {
            names.push((String::from_utf8_lossy(h).into_owned(), qtype::A));
        }
    }
    names
}

/// Makes the scratch OU (`OU=kauri-replay-…`) and lets every authenticated user create,
/// change and delete objects below it, so conversations bound as ordinary users can write.
pub async fn make_scratch(c: &mut LdapClient, base_dn: &str, tag: &str) -> Result<String> {
    let dn = format!("OU=kauri-replay-{tag},{base_dn}");
    let r = c
        .add(
            &dn,
            vec![
                ("objectClass".into(), vec![b"organizationalUnit".to_vec()]),
                (
                    "description".into(),
                    vec![b"Scratch objects of a traffic replay; safe to delete".to_vec()],
                ),
            ],
            Vec::new(),
        )
        .await
        .context("adding the scratch OU")?;
    if r.code != ResultCode::SUCCESS && r.code != ResultCode::ENTRY_ALREADY_EXISTS {
        anyhow::bail!(
            "adding the scratch OU {dn}: {}",
            kauri_ldap_client::code_name(r.code)
        );
    }
    let any = kauri_domain::sid::Sid::parse("S-1-5-21-1-2-3").context("a placeholder SID")?;
    let sd = kauri_domain::security::descriptor::SecurityDescriptor::from_sddl(
        "D:(A;CI;GA;;;AU)(A;CI;GA;;;DA)(A;CI;GA;;;SY)",
        &any,
    )
    .context("the scratch OU's descriptor")?
    .to_bytes()
    .context("encoding the scratch OU's descriptor")?;
    // SD flags: the DACL only.
    let flags = Control {
        oid: "1.2.840.113556.1.4.801".into(),
        critical: true,
        value: Some(vec![0x30, 0x03, 0x02, 0x01, 0x04]),
    };
    let r = c
        .modify(
            &dn,
            vec![kauri_ldap_client::change(
                kauri_ldap_client::proto::ModOp::Replace,
                "nTSecurityDescriptor",
                &[sd],
            )],
            vec![flags],
        )
        .await
        .context("opening the scratch OU to authenticated users")?;
    if r.code != ResultCode::SUCCESS {
        anyhow::bail!(
            "opening the scratch OU to authenticated users: {}",
            kauri_ldap_client::code_name(r.code)
        );
    }
    Ok(dn)
}

/// Removes the scratch OU and everything in it (the tree delete control).
pub async fn remove_scratch(c: &mut LdapClient, dn: &str) -> Result<()> {
    let tree = Control {
        oid: "1.2.840.113556.1.4.805".into(),
        critical: true,
        value: None,
    };
    let r = c
        .delete(dn, vec![tree])
        .await
        .context("removing the scratch OU")?;
    if r.code != ResultCode::SUCCESS && r.code != ResultCode::NO_SUCH_OBJECT {
        anyhow::bail!(
            "removing the scratch OU {dn}: {}",
            kauri_ldap_client::code_name(r.code)
        );
    }
    Ok(())
}

/// Checks which datagram and Kerberos services answer, quickly.
pub async fn probe(ctx: &Ctx) -> Services {
    let quick = Duration::from_millis(1500);
    let cldap = async {
        let s = super::udp::socket(&ctx.ldap_addr).await.ok()?;
        tokio::time::timeout(quick, super::udp::cldap_ping(&s, 1, &ctx.dns_domain))
            .await
            .ok()?
            .ok()
    };
    let dns = async {
        let s = super::udp::socket(&ctx.dns_addr).await.ok()?;
        tokio::time::timeout(
            quick,
            super::udp::dns_ask(&s, 7, &ctx.dns_domain, super::udp::qtype::SOA),
        )
        .await
        .ok()?
        .ok()
    };
    let kdc = async {
        tokio::time::timeout(quick, tokio::net::TcpStream::connect(&ctx.kdc_addr))
            .await
            .ok()?
            .ok()
            .map(|_| ())
    };
    let (c, d, k) = tokio::join!(cldap, dns, kdc);
    Services {
        cldap: c.is_some(),
        dns: d.is_some(),
        kdc: k.is_some(),
    }
}
