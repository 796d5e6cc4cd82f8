//! `kauri computer …`: computer accounts — add, delete, show, list.

use anyhow::Result;
use serde_json::json;

use super::names::{container, rdn_value, Kind};
use super::output::{done, print_json, table};
use super::target::{Scope, Target};
use super::user::is_disabled;

/// The computer commands.
#[derive(Debug, Clone, clap::Subcommand)]
pub enum ComputerCommand {
    /// Create a computer account (a workstation or member server).
    #[command(alias = "create")]
    Add {
        /// The host name (NetBIOS form, e.g. WS042).
        name: String,
        /// Its DNS name [default: name.realm].
        #[arg(long)]
        dns_host_name: Option<String>,
        /// Description.
        #[arg(long)]
        description: Option<String>,
        /// Where to create it (relative to the domain) [default: CN=Computers].
        #[arg(long, alias = "computerou")]
        ou: Option<String>,
    },
    /// Delete a computer account.
    Delete {
        /// Host name, sAMAccountName (NAME$), DNS name or DN.
        name: String,
    },
    /// Show a computer's attributes.
    Show {
        /// Host name, sAMAccountName (NAME$), DNS name or DN.
        name: String,
        /// Only these attributes (comma-separated).
        #[arg(long, value_delimiter = ',')]
        attributes: Vec<String>,
    },
    /// List computer accounts (domain controllers included).
    List {
        /// Print DNs instead of a table.
        #[arg(long)]
        full_dn: bool,
    },
}

/// Runs a computer command.
pub fn run(t: &mut dyn Target, cmd: &ComputerCommand, json_out: bool) -> Result<()> {
    match cmd {
        ComputerCommand::Add {
            name,
            dns_host_name,
            description,
            ou,
        } => {
            let host = name.trim_end_matches('$').to_ascii_uppercase();
            let realm = t.domain().dns_name.clone();
            let fqdn = dns_host_name
                .clone()
                .unwrap_or_else(|| format!("{}.{realm}", host.to_ascii_lowercase()));
            let parent = container(t, ou.as_deref(), "CN=Computers");
            let dn = format!("CN={},{parent}", rdn_value(&host));
            let spns: Vec<Vec<u8>> = [
                format!("HOST/{host}"),
                format!("HOST/{fqdn}"),
                format!("RestrictedKrbHost/{host}"),
                format!("RestrictedKrbHost/{fqdn}"),
            ]
            .into_iter()
            .map(String::into_bytes)
            .collect();
            let mut attrs = vec![
                ("objectClass".to_string(), vec![b"computer".to_vec()]),
                (
                    "sAMAccountName".into(),
                    vec![format!("{host}$").into_bytes()],
                ),
                ("dNSHostName".into(), vec![fqdn.clone().into_bytes()]),
                ("servicePrincipalName".into(), spns),
            ];
            if let Some(d) = description {
                attrs.push(("description".into(), vec![d.as_bytes().to_vec()]));
            }
            t.add(&dn, attrs)?;
            done(
                json_out,
                &format!("Added computer {host} ({dn})"),
                json!({"dn": dn, "sAMAccountName": format!("{host}$"), "dNSHostName": fqdn}),
            );
        }
        ComputerCommand::Delete { name } => super::delete(t, Kind::Computer, name, true, json_out)?,
        ComputerCommand::Show { name, attributes } => {
            super::show(t, Kind::Computer, name, attributes, json_out)?
        }
        ComputerCommand::List { full_dn } => {
            let domain = t.domain().dn.clone();
            let mut list = t.search_all(
                &domain,
                Scope::Sub,
                Kind::Computer.filter(),
                &[
                    "sAMAccountName",
                    "dNSHostName",
                    "userAccountControl",
                    "operatingSystem",
                ],
            )?;
            list.sort_by_key(|f| f.text("sAMAccountName").unwrap_or_default().to_lowercase());
            if json_out {
                let v: Vec<_> = list
                    .iter()
                    .map(|f| {
                        json!({
                            "dn": f.dn,
                            "sAMAccountName": f.text("sAMAccountName"),
                            "dNSHostName": f.text("dNSHostName"),
                            "enabled": !is_disabled(f),
                        })
                    })
                    .collect();
                print_json(&json!(v));
            } else if *full_dn {
                for f in &list {
                    println!("{}", f.dn);
                }
            } else {
                let rows: Vec<Vec<String>> = list
                    .iter()
                    .map(|f| {
                        vec![
                            f.text("sAMAccountName").unwrap_or_default(),
                            f.text("dNSHostName").unwrap_or_default(),
                            if is_disabled(f) {
                                "disabled"
                            } else {
                                "enabled"
                            }
                            .to_string(),
                            f.text("operatingSystem").unwrap_or_default(),
                        ]
                    })
                    .collect();
                table(&["NAME", "DNS NAME", "STATE", "OS"], &rows);
            }
        }
    }
    Ok(())
}
