//! `kauri ou …`: organizational units — add, delete, list, move, rename, and the objects
//! they hold.

use anyhow::Result;
use serde_json::json;

use super::names::{find, in_domain, rdn_value, Kind};
use super::output::{done, print_json, table};
use super::target::{Scope, Target};

/// The OU commands.
#[derive(Debug, Clone, clap::Subcommand)]
pub enum OuCommand {
    /// Create an OU.
    #[command(alias = "create")]
    Add {
        /// Its DN, relative to the domain (OU=Sales) or whole.
        dn: String,
        /// Description.
        #[arg(long)]
        description: Option<String>,
    },
    /// Delete an OU.
    Delete {
        /// Its DN, relative to the domain or whole.
        dn: String,
        /// Delete everything below it too.
        #[arg(long)]
        force_subtree_delete: bool,
    },
    /// List the domain's OUs.
    List {
        /// Print whole DNs.
        #[arg(long)]
        full_dn: bool,
    },
    /// Move an OU below another OU or container.
    Move {
        /// Its DN, relative to the domain or whole.
        dn: String,
        /// The new parent, relative to the domain or whole.
        new_parent: String,
    },
    /// Rename an OU.
    Rename {
        /// Its DN, relative to the domain or whole.
        dn: String,
        /// The new name (e.g. Marketing, or OU=Marketing).
        new_name: String,
    },
    /// List the objects in an OU.
    #[command(alias = "listobjects")]
    ListObjects {
        /// Its DN, relative to the domain or whole.
        dn: String,
        /// Everything below it, not only its children.
        #[arg(long)]
        recursive: bool,
        /// Print whole DNs.
        #[arg(long)]
        full_dn: bool,
    },
}

/// The part of a DN before the domain's, for people.
fn relative(dn: &str, domain: &str) -> String {
    let lower = dn.to_ascii_lowercase();
    let suffix = format!(",{}", domain.to_ascii_lowercase());
    match lower.strip_suffix(&suffix) {
        Some(head) => dn[..head.len()].to_string(),
        None => dn.to_string(),
    }
}

/// Runs an OU command.
pub fn run(t: &mut dyn Target, cmd: &OuCommand, json_out: bool) -> Result<()> {
    let domain = t.domain().dn.clone();
    match cmd {
        OuCommand::Add { dn, description } => {
            let dn = in_domain(t, dn);
            let mut attrs = vec![(
                "objectClass".to_string(),
                vec![b"organizationalUnit".to_vec()],
            )];
            if let Some(d) = description {
                attrs.push(("description".into(), vec![d.as_bytes().to_vec()]));
            }
            t.add(&dn, attrs)?;
            done(json_out, &format!("Added OU {dn}"), json!({"dn": dn}));
        }
        OuCommand::Delete {
            dn,
            force_subtree_delete,
        } => super::delete(t, Kind::Ou, dn, *force_subtree_delete, json_out)?,
        OuCommand::List { full_dn } => {
            let mut ous = t.search_all(
                &domain,
                Scope::Sub,
                Kind::Ou.filter(),
                &["ou", "description"],
            )?;
            ous.sort_by_key(|f| f.dn.to_lowercase());
            if json_out {
                let list: Vec<_> = ous
                    .iter()
                    .map(|f| json!({"dn": f.dn, "description": f.text("description")}))
                    .collect();
                print_json(&json!(list));
            } else {
                for f in &ous {
                    println!(
                        "{}",
                        if *full_dn {
                            f.dn.clone()
                        } else {
                            relative(&f.dn, &domain)
                        }
                    );
                }
            }
        }
        OuCommand::Move { dn, new_parent } => {
            super::move_to(t, Kind::Ou, dn, new_parent, json_out)?
        }
        OuCommand::Rename { dn, new_name } => {
            let f = find(t, Kind::Ou, dn, &["ou"])?;
            let name = new_name
                .strip_prefix("OU=")
                .or_else(|| new_name.strip_prefix("ou="))
                .unwrap_or(new_name);
            let rdn = format!("OU={}", rdn_value(name));
            t.rename(&f.dn, &rdn, None)?;
            let parent = f.dn.split_once(',').map_or("", |(_, p)| p);
            let new_dn = format!("{rdn},{parent}");
            done(
                json_out,
                &format!("Renamed {} to {new_dn}", f.dn),
                json!({"dn": f.dn, "new_dn": new_dn}),
            );
        }
        OuCommand::ListObjects {
            dn,
            recursive,
            full_dn,
        } => {
            let f = find(t, Kind::Ou, dn, &["ou"])?;
            let scope = if *recursive { Scope::Sub } else { Scope::One };
            let mut found = t.search_all(&f.dn, scope, "(objectClass=*)", &["objectClass"])?;
            found.retain(|o| o.dn != f.dn);
            found.sort_by_key(|o| o.dn.to_lowercase());
            let class = |o: &super::target::Found| {
                o.texts("objectClass").last().cloned().unwrap_or_default()
            };
            if json_out {
                let list: Vec<_> = found
                    .iter()
                    .map(|o| json!({"dn": o.dn, "objectClass": class(o)}))
                    .collect();
                print_json(&json!(list));
            } else {
                let rows: Vec<Vec<String>> = found
                    .iter()
                    .map(|o| {
                        vec![
                            class(o),
                            if *full_dn {
                                o.dn.clone()
                            } else {
                                relative(&o.dn, &domain)
                            },
                        ]
                    })
                    .collect();
                table(&["CLASS", "DN"], &rows);
            }
        }
    }
    Ok(())
}
