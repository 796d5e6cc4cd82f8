//! `kauri contact …`: contacts (people outside the domain, for address lists and groups).

use anyhow::Result;
use serde_json::json;

use super::names::{container, rdn_value, Kind};
use super::output::{done, print_json, table};
use super::target::{Scope, Target};

/// The contact commands.
#[derive(Debug, Clone, clap::Subcommand)]
pub enum ContactCommand {
    /// Create a contact.
    #[command(alias = "create")]
    Add {
        /// The contact's name (its CN) [default: given name and surname].
        name: Option<String>,
        /// Given name.
        #[arg(long)]
        given_name: Option<String>,
        /// Surname.
        #[arg(long)]
        surname: Option<String>,
        /// Display name [default: the name].
        #[arg(long)]
        display_name: Option<String>,
        /// E-mail address.
        #[arg(long, alias = "mail-address")]
        mail: Option<String>,
        /// Telephone number.
        #[arg(long)]
        telephone_number: Option<String>,
        /// Description.
        #[arg(long)]
        description: Option<String>,
        /// Where to create it (relative to the domain) [default: CN=Users].
        #[arg(long)]
        ou: Option<String>,
    },
    /// Delete a contact.
    Delete {
        /// Its CN, display name or DN.
        name: String,
    },
    /// Show a contact's attributes.
    Show {
        /// Its CN, display name or DN.
        name: String,
    },
    /// List contacts.
    List {
        /// Print DNs instead of a table.
        #[arg(long)]
        full_dn: bool,
    },
}

/// Runs a contact command.
pub fn run(t: &mut dyn Target, cmd: &ContactCommand, json_out: bool) -> Result<()> {
    match cmd {
        ContactCommand::Add {
            name,
            given_name,
            surname,
            display_name,
            mail,
            telephone_number,
            description,
            ou,
        } => {
            let full = match (given_name, surname) {
                (Some(g), Some(s)) => Some(format!("{g} {s}")),
                (Some(g), None) => Some(g.clone()),
                (None, Some(s)) => Some(s.clone()),
                (None, None) => None,
            };
            let Some(cn) = name.clone().or_else(|| full.clone()) else {
                anyhow::bail!("give the contact a name, or a given name or surname");
            };
            let parent = container(t, ou.as_deref(), "CN=Users");
            let dn = format!("CN={},{parent}", rdn_value(&cn));
            let mut attrs = vec![("objectClass".to_string(), vec![b"contact".to_vec()])];
            let display = display_name.clone().or(full).unwrap_or_else(|| cn.clone());
            for (attr, value) in [
                ("givenName", given_name.as_ref()),
                ("sn", surname.as_ref()),
                ("displayName", Some(&display)),
                ("mail", mail.as_ref()),
                ("telephoneNumber", telephone_number.as_ref()),
                ("description", description.as_ref()),
            ] {
                if let Some(v) = value {
                    attrs.push((attr.to_string(), vec![v.as_bytes().to_vec()]));
                }
            }
            t.add(&dn, attrs)?;
            done(
                json_out,
                &format!("Added contact {cn} ({dn})"),
                json!({"dn": dn}),
            );
        }
        ContactCommand::Delete { name } => super::delete(t, Kind::Contact, name, false, json_out)?,
        ContactCommand::Show { name } => super::show(t, Kind::Contact, name, &[], json_out)?,
        ContactCommand::List { full_dn } => {
            let domain = t.domain().dn.clone();
            let mut list = t.search_all(
                &domain,
                Scope::Sub,
                Kind::Contact.filter(),
                &["cn", "displayName", "mail"],
            )?;
            list.sort_by_key(|f| f.text("cn").unwrap_or_default().to_lowercase());
            if json_out {
                let v: Vec<_> = list
                    .iter()
                    .map(|f| {
                        json!({"dn": f.dn, "cn": f.text("cn"), "displayName": f.text("displayName"), "mail": f.text("mail")})
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
                            f.text("cn").unwrap_or_default(),
                            f.text("displayName").unwrap_or_default(),
                            f.text("mail").unwrap_or_default(),
                        ]
                    })
                    .collect();
                table(&["NAME", "DISPLAY NAME", "MAIL"], &rows);
            }
        }
    }
    Ok(())
}
