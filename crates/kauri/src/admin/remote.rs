//! A server as a [`Target`]: the commands over LDAP, always encrypted (StartTLS on
//! `ldap://`, TLS from the first byte on `ldaps://`, the local socket on `ldapi://`), as
//! the account given with `-U`.
//!
//! Searches are paged (so any size limit of the server is no limit here) and attributes
//! the server sends in ranges (`member;range=0-1499`) are read whole, so a command sees
//! the same entries it would see in a local folder.

use anyhow::{bail, Context, Result};
use kauri_db::{Filter, Modification, ModifyOp};
use kauri_ldap_client::proto::{
    controls as ctl, AddRequest, Attribute, Control, ModOp, ModifyDnRequest, ModifyRequest,
    ProtocolOp, SearchScope,
};
use kauri_ldap_client::{change, search_request, ConnectOptions, LdapClient, LdapUrl, TlsOptions};
use kauri_ldap_proto::LdapResult;

use super::target::{
    Attrs, Credentials, DomainNames, Found, Op, OpResult, Refused, Scope, Target, SD_ATTR,
};

/// Entries per page of a search.
const PAGE: u32 = 1000;

/// A connection to a server, bound and ready for the commands.
pub struct RemoteTarget {
    rt: tokio::runtime::Runtime,
    client: LdapClient,
    names: DomainNames,
}

/// A runtime for one client connection on this thread.
pub fn runtime() -> Result<tokio::runtime::Runtime> {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .context("starting the client runtime")
}

/// A non-success result as the error the commands report.
pub fn refused(r: &LdapResult) -> anyhow::Error {
    Refused {
        code: r.code.0,
        message: r.message.clone(),
    }
    .into()
}

fn check(r: LdapResult) -> OpResult {
    if r.code.0 == 0 {
        Ok(())
    } else {
        Err(refused(&r))
    }
}

/// Connects to `url`, makes the connection private (StartTLS on `ldap://`) and binds as
/// the credentials say: what every remote command and the online backup start with.
pub async fn connect(url: &str, creds: &Credentials) -> Result<LdapClient> {
    let parsed = LdapUrl::parse(url).map_err(|e| anyhow::anyhow!("{e}"))?;
    let mut tls = TlsOptions::default().with_insecure(creds.insecure_tls);
    if let Some(ca) = &creds.cacert {
        tls = tls.with_ca_file(ca.clone());
    }
    let opts = ConnectOptions::default().with_tls(tls);
    let mut client = LdapClient::connect_url(&parsed, &opts)
        .await
        .with_context(|| format!("connecting to {url}"))?;
    if matches!(parsed, LdapUrl::Ldap { .. }) {
        client
            .start_tls()
            .await
            .with_context(|| format!("StartTLS with {url} (use ldaps:// or a CA with --cacert)"))?;
    }
    match (creds.account()?, &parsed) {
        (None, LdapUrl::Ldapi { .. }) => check(client.sasl_external().await?)
            .context("binding with SASL EXTERNAL on the local socket")?,
        (None, _) => bail!("give the account to bind as with -U (a DN, a UPN or DOMAIN\\name)"),
        (Some((user, password)), _) => {
            check(client.simple_bind(&user, password.as_bytes()).await?)
                .with_context(|| format!("binding to {url} as {user}"))?;
        }
    }
    Ok(client)
}

/// The first value of an attribute of an entry the server sent.
pub(crate) fn first(e: &kauri_ldap_client::proto::SearchResultEntry, name: &str) -> Option<String> {
    e.attributes
        .iter()
        .find(|a| a.name.eq_ignore_ascii_case(name))
        .and_then(|a| a.values.first())
        .map(|v| String::from_utf8_lossy(v).into_owned())
}

impl RemoteTarget {
    /// Connects and binds (see [`connect`]), then learns the domain from the root DSE.
    pub fn connect(url: &str, creds: &Credentials) -> Result<RemoteTarget> {
        let rt = runtime()?;
        let mut client = rt.block_on(connect(url, creds))?;
        let names = rt.block_on(async {
            let root = search_request(
                "",
                SearchScope::Base,
                Filter::Present("objectClass".into()),
                &["defaultNamingContext", "configurationNamingContext"],
            );
            let found = client.search(root, Vec::new()).await?;
            let dse = found
                .entries
                .first()
                .context("the server sent no root DSE")?;
            let domain = first(dse, "defaultNamingContext")
                .context("the server names no default naming context: not a domain")?;
            let config = first(dse, "configurationNamingContext")
                .unwrap_or_else(|| format!("CN=Configuration,{domain}"));
            let dns_name = kauri_db::Dn::parse(&domain)
                .map(|d| {
                    d.rdns()
                        .iter()
                        .filter_map(|r| r.avas().first().map(|a| a.value.to_ascii_lowercase()))
                        .collect::<Vec<_>>()
                        .join(".")
                })
                .unwrap_or_default();
            let mut netbios = dns_name
                .split('.')
                .next()
                .unwrap_or_default()
                .to_ascii_uppercase();
            let refs = search_request(
                &format!("CN=Partitions,{config}"),
                SearchScope::OneLevel,
                Filter::parse(&format!(
                    "(&(objectClass=crossRef)(nCName={}))",
                    super::names::escape(&domain)
                ))
                .map_err(|e| anyhow::anyhow!("{e}"))?,
                &["nETBIOSName"],
            );
            if let Ok(found) = client.search(refs, Vec::new()).await {
                if let Some(n) = found.entries.first().and_then(|e| first(e, "nETBIOSName")) {
                    netbios = n;
                }
            }
            anyhow::Ok(DomainNames {
                dn: domain,
                dns_name,
                netbios,
            })
        })?;
        Ok(RemoteTarget { rt, client, names })
    }
}

/// Values sent in ranges collected under the attribute's own name; returns the
/// attributes still to be read further: (name, next first index).
fn merge_ranges(attrs: Vec<kauri_ldap_client::proto::Attribute>) -> (Attrs, Vec<(String, u64)>) {
    let mut out: Attrs = Vec::new();
    let mut more = Vec::new();
    for a in attrs {
        let (name, range) = match a.name.split_once(";range=") {
            Some((n, r)) => (n.to_string(), Some(r.to_string())),
            None => (a.name.clone(), None),
        };
        if let Some(r) = range {
            // `low-high`, or `low-*` for the last piece.
            if let Some((_, high)) = r.split_once('-') {
                if let Ok(h) = high.parse::<u64>() {
                    more.push((name.clone(), h + 1));
                }
            }
        }
        match out.iter_mut().find(|(n, _)| n.eq_ignore_ascii_case(&name)) {
            Some((_, v)) => v.extend(a.values),
            None => out.push((name, a.values)),
        }
    }
    (out, more)
}

/// The changes of a modify request.
fn changes(mods: Vec<Modification>) -> Vec<kauri_ldap_client::proto::Change> {
    mods.into_iter()
        .map(|m| {
            let op = match m.op {
                ModifyOp::Add => ModOp::Add,
                ModifyOp::Delete => ModOp::Delete,
                ModifyOp::Replace => ModOp::Replace,
                ModifyOp::Increment => ModOp::Increment,
            };
            change(op, &m.attr, &m.values)
        })
        .collect()
}

/// The SD flags control (LDAP_SERVER_SD_FLAGS_OID), critical: a server that ignored it
/// would read or replace the whole descriptor.
fn sd_flags_control(flags: u32) -> Control {
    use kauri_ldap_client::proto::controls::ControlValue as _;
    ctl::SdFlags {
        flags: i32::try_from(flags & 0xF).unwrap_or(0),
    }
    .to_control(true)
}

/// The tree-delete control when asked for.
fn controls_for_delete(tree: bool) -> Vec<Control> {
    if tree {
        vec![Control {
            oid: ctl::TREE_DELETE.to_string(),
            critical: true,
            value: None,
        }]
    } else {
        Vec::new()
    }
}

/// A change as a request on the wire.
fn request(op: Op) -> ProtocolOp {
    match op {
        Op::Add { dn, attrs } => ProtocolOp::AddRequest(AddRequest {
            dn,
            attributes: attrs
                .into_iter()
                .map(|(name, values)| Attribute { name, values })
                .collect(),
        }),
        Op::Modify { dn, mods } => ProtocolOp::ModifyRequest(ModifyRequest {
            dn,
            changes: changes(mods),
        }),
        Op::Delete { dn, .. } => ProtocolOp::DelRequest(dn),
        Op::Rename {
            dn,
            new_rdn,
            delete_old_rdn,
            new_parent,
        } => ProtocolOp::ModifyDnRequest(ModifyDnRequest {
            dn,
            new_rdn,
            delete_old_rdn,
            new_superior: new_parent,
        }),
    }
}

/// A response as the result of the change it answers.
fn answer(msg: kauri_ldap_client::proto::LdapMessage) -> OpResult {
    match kauri_ldap_client::response_result(&msg.op) {
        Some(r) => check(r.clone()),
        None => Err(anyhow::anyhow!("unexpected response {:?}", msg.op)),
    }
}

impl Target for RemoteTarget {
    fn domain(&self) -> &DomainNames {
        &self.names
    }

    fn search(
        &mut self,
        base: &str,
        scope: Scope,
        filter: &str,
        attrs: &[&str],
        each: &mut dyn FnMut(Found) -> Result<()>,
    ) -> OpResult {
        let parsed = Filter::parse(&super::local::with_parens(filter)).map_err(|e| Refused {
            code: 87,
            message: format!("bad filter {filter:?}: {e}"),
        })?;
        let scope = match scope {
            Scope::Base => SearchScope::Base,
            Scope::One => SearchScope::OneLevel,
            Scope::Sub => SearchScope::Subtree,
        };
        let req = search_request(base, scope, parsed, attrs);
        let RemoteTarget { rt, client, .. } = self;
        rt.block_on(async {
            // Entries whose ranged attributes need more reads wait until the page is done:
            // the connection carries one operation at a time.
            let mut pending: Vec<(Found, Vec<(String, u64)>)> = Vec::new();
            let mut failed: Option<anyhow::Error> = None;
            let done = client
                .search_paged(req, Vec::new(), PAGE, |e| {
                    if failed.is_some() {
                        return Ok(());
                    }
                    let (attrs, more) = merge_ranges(e.attributes);
                    let found = Found { dn: e.dn, attrs };
                    if more.is_empty() {
                        if let Err(err) = each(found) {
                            failed = Some(err);
                        }
                    } else {
                        pending.push((found, more));
                    }
                    Ok::<_, kauri_ldap_client::ClientError>(())
                })
                .await?;
            check(done.result)?;
            if let Some(e) = failed {
                return Err(e);
            }
            for (mut found, mut more) in pending {
                while let Some((name, from)) = more.pop() {
                    let ranged = format!("{name};range={from}-*");
                    let req = search_request(
                        &found.dn,
                        SearchScope::Base,
                        Filter::Present("objectClass".into()),
                        &[ranged.as_str()],
                    );
                    let got = client.search(req, Vec::new()).await?;
                    check(got.result)?;
                    for e in got.entries {
                        let (attrs, next) = merge_ranges(e.attributes);
                        for (n, values) in attrs {
                            match found
                                .attrs
                                .iter_mut()
                                .find(|(a, _)| a.eq_ignore_ascii_case(&n))
                            {
                                Some((_, v)) => v.extend(values),
                                None => found.attrs.push((n, values)),
                            }
                        }
                        more.extend(next);
                    }
                }
                each(found)?;
            }
            Ok(())
        })
    }

    fn add(&mut self, dn: &str, attrs: Attrs) -> OpResult {
        let r = self.rt.block_on(self.client.add(dn, attrs, Vec::new()))?;
        check(r)
    }

    fn modify(&mut self, dn: &str, mods: Vec<Modification>) -> OpResult {
        let r = self
            .rt
            .block_on(self.client.modify(dn, changes(mods), Vec::new()))?;
        check(r)
    }

    fn delete(&mut self, dn: &str, tree: bool) -> OpResult {
        let r = self
            .rt
            .block_on(self.client.delete(dn, controls_for_delete(tree)))?;
        check(r)
    }

    fn rename_with(
        &mut self,
        dn: &str,
        new_rdn: &str,
        delete_old_rdn: bool,
        new_parent: Option<&str>,
    ) -> OpResult {
        let r = self.rt.block_on(self.client.modify_dn(
            dn,
            new_rdn,
            delete_old_rdn,
            new_parent,
            Vec::new(),
        ))?;
        check(r)
    }

    /// A base search that sends the SD flags control.
    fn read_descriptor(&mut self, dn: &str, flags: u32) -> OpResult<Option<Vec<u8>>> {
        let req = search_request(
            dn,
            SearchScope::Base,
            Filter::Present("objectClass".into()),
            &[SD_ATTR],
        );
        let got = self
            .rt
            .block_on(self.client.search(req, vec![sd_flags_control(flags)]))?;
        check(got.result)?;
        let entry = got.entries.into_iter().next().ok_or_else(|| Refused {
            code: 32,
            message: format!("no such object: {dn}"),
        })?;
        Ok(entry
            .attributes
            .into_iter()
            .find(|a| a.name.eq_ignore_ascii_case(SD_ATTR))
            .and_then(|a| a.values.into_iter().next()))
    }

    /// A modify replacing `nTSecurityDescriptor`, with the SD flags control.
    fn write_descriptor(&mut self, dn: &str, value: Vec<u8>, flags: u32) -> OpResult {
        let r = self.rt.block_on(self.client.modify(
            dn,
            vec![change(ModOp::Replace, SD_ATTR, &[value])],
            vec![sd_flags_control(flags)],
        ))?;
        check(r)
    }

    /// Pipelined: up to 64 requests in flight, answered in order. With `stop_at_error`
    /// the changes go one at a time instead, since the server would apply the ones
    /// already sent after a failure.
    fn apply_batch(&mut self, ops: Vec<Op>, stop_at_error: bool) -> Result<Vec<OpResult>> {
        const WINDOW: usize = 64;
        if stop_at_error {
            let mut out = Vec::with_capacity(ops.len());
            for op in ops {
                let r = self.apply(op);
                let failed = r.is_err();
                out.push(r);
                if failed {
                    break;
                }
            }
            return Ok(out);
        }
        let RemoteTarget { rt, client, .. } = self;
        rt.block_on(async {
            let mut out = Vec::with_capacity(ops.len());
            let mut in_flight = std::collections::VecDeque::new();
            for op in ops {
                if in_flight.len() == WINDOW {
                    if let Some(id) = in_flight.pop_front() {
                        out.push(answer(client.recv(id).await?));
                    }
                }
                let tree = matches!(op, Op::Delete { tree: true, .. });
                in_flight.push_back(client.send(request(op), controls_for_delete(tree)).await?);
            }
            while let Some(id) = in_flight.pop_front() {
                out.push(answer(client.recv(id).await?));
            }
            Ok(out)
        })
    }
}
