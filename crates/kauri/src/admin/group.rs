//! `kauri group …`: groups — add, delete, show, list, members (direct and nested), move,
//! and the statistics that matter at scale.

use anyhow::{bail, Result};
use kauri_db::{Modification, ModifyOp};
use kauri_domain::directory::principal::parse_u32_bits;
use kauri_domain::directory::stats::summarize;
use serde_json::json;

use super::names::{container, escape, find, rdn_value, Kind};
use super::output::{done, print_json, table};
use super::target::{Found, Scope, Target};

/// `groupType` bits (MS-ADTS 2.2.12).
mod bits {
    pub const GLOBAL: i64 = 0x2;
    pub const DOMAIN_LOCAL: i64 = 0x4;
    pub const UNIVERSAL: i64 = 0x8;
    pub const SECURITY: i64 = 0x8000_0000;
}

/// A group's scope.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum GroupScope {
    /// Members from this domain; usable across the forest.
    Global,
    /// Members from anywhere; usable in this domain.
    #[value(name = "domain", alias = "domainlocal")]
    DomainLocal,
    /// Members from anywhere; usable anywhere.
    Universal,
}

/// Whether a group controls access or only distributes mail.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum GroupKind {
    /// A security group.
    Security,
    /// A distribution list.
    Distribution,
}

/// The group commands.
#[derive(Debug, Clone, clap::Subcommand)]
pub enum GroupCommand {
    /// Create a group.
    #[command(alias = "create")]
    Add {
        /// The group's name (sAMAccountName and CN).
        name: String,
        /// Its scope.
        #[arg(long, value_enum, default_value_t = GroupScope::Global)]
        group_scope: GroupScope,
        /// Security group or distribution list.
        #[arg(long, value_enum, default_value_t = GroupKind::Security)]
        group_type: GroupKind,
        /// Description.
        #[arg(long)]
        description: Option<String>,
        /// E-mail address.
        #[arg(long, alias = "mail-address")]
        mail: Option<String>,
        /// Where to create it (relative to the domain, e.g. OU=Sales) [default: CN=Users].
        #[arg(long, alias = "groupou")]
        ou: Option<String>,
    },
    /// Delete a group (it becomes a tombstone; its members stay).
    Delete {
        /// sAMAccountName, CN or DN.
        name: String,
    },
    /// Show a group's attributes.
    Show {
        /// sAMAccountName, CN or DN.
        name: String,
        /// Only these attributes (comma-separated).
        #[arg(long, value_delimiter = ',')]
        attributes: Vec<String>,
    },
    /// List groups.
    List {
        /// Also show type and direct member count.
        #[arg(short, long)]
        verbose: bool,
        /// Print DNs instead of names.
        #[arg(long)]
        full_dn: bool,
    },
    /// Add members (users, computers, groups, contacts) to a group.
    #[command(alias = "addmembers")]
    AddMembers {
        /// The group: sAMAccountName, CN or DN.
        group: String,
        /// The members (names or DNs; several, or comma-separated).
        #[arg(required = true, value_delimiter = ',')]
        members: Vec<String>,
    },
    /// Remove members from a group.
    #[command(alias = "removemembers")]
    RemoveMembers {
        /// The group: sAMAccountName, CN or DN.
        group: String,
        /// The members (names or DNs; several, or comma-separated).
        #[arg(required = true, value_delimiter = ',')]
        members: Vec<String>,
    },
    /// List a group's members.
    #[command(alias = "listmembers")]
    ListMembers {
        /// The group: sAMAccountName, CN or DN.
        group: String,
        /// Include the members of nested groups.
        #[arg(long)]
        recursive: bool,
        /// Print DNs instead of names.
        #[arg(long)]
        full_dn: bool,
    },
    /// Move a group to another OU or container.
    Move {
        /// The group: sAMAccountName, CN or DN.
        group: String,
        /// The new parent (relative to the domain, e.g. OU=Sales, or a whole DN).
        new_parent: String,
    },
    /// Group count, memberships, members per group, the largest groups, groups by type.
    Stats {
        /// How many of the largest groups to list.
        #[arg(long, default_value_t = 10)]
        top: usize,
    },
}

fn text_attr(name: &str, value: &str) -> (String, Vec<Vec<u8>>) {
    (name.to_string(), vec![value.as_bytes().to_vec()])
}

/// A group's type in words ("global security", …).
fn describe_type(f: &Found) -> String {
    let Some(t) = f.int("groupType") else {
        return "unknown".into();
    };
    let scope = if t & bits::GLOBAL != 0 {
        "global"
    } else if t & bits::DOMAIN_LOCAL != 0 {
        "domain local"
    } else if t & bits::UNIVERSAL != 0 {
        "universal"
    } else {
        "builtin local"
    };
    let kind = if t & bits::SECURITY != 0 {
        "security"
    } else {
        "distribution"
    };
    format!("{scope} {kind}")
}

/// The name people know an object by.
fn short_name(f: &Found) -> String {
    f.text("sAMAccountName")
        .or_else(|| f.text("cn"))
        .unwrap_or_else(|| f.dn.clone())
}

/// Resolves member names to DNs.
fn member_dns(t: &mut dyn Target, members: &[String]) -> Result<Vec<String>> {
    let mut out = Vec::with_capacity(members.len());
    for m in members.iter().map(|m| m.trim()).filter(|m| !m.is_empty()) {
        out.push(find(t, Kind::Member, m, &["sAMAccountName"])?.dn);
    }
    if out.is_empty() {
        bail!("no members given");
    }
    Ok(out)
}

/// Runs a group command.
pub fn run(t: &mut dyn Target, cmd: &GroupCommand, json_out: bool) -> Result<()> {
    match cmd {
        GroupCommand::Add {
            name,
            group_scope,
            group_type,
            description,
            mail,
            ou,
        } => {
            let parent = container(t, ou.as_deref(), "CN=Users");
            let dn = format!("CN={},{parent}", rdn_value(name));
            let mut value = match group_scope {
                GroupScope::Global => bits::GLOBAL,
                GroupScope::DomainLocal => bits::DOMAIN_LOCAL,
                GroupScope::Universal => bits::UNIVERSAL,
            };
            if *group_type == GroupKind::Security {
                value |= bits::SECURITY;
            }
            // groupType is a signed 32-bit integer.
            let signed = value as u32 as i32;
            let mut attrs = vec![
                text_attr("objectClass", "group"),
                text_attr("sAMAccountName", name),
                text_attr("groupType", &signed.to_string()),
            ];
            if let Some(d) = description {
                attrs.push(text_attr("description", d));
            }
            if let Some(m) = mail {
                attrs.push(text_attr("mail", m));
            }
            t.add(&dn, attrs)?;
            done(
                json_out,
                &format!("Added group {name} ({dn})"),
                json!({"dn": dn}),
            );
            Ok(())
        }
        GroupCommand::Delete { name } => super::delete(t, Kind::Group, name, false, json_out),
        GroupCommand::Show { name, attributes } => {
            super::show(t, Kind::Group, name, attributes, json_out)
        }
        GroupCommand::List { verbose, full_dn } => {
            let domain = t.domain().dn.clone();
            let mut attrs = vec!["sAMAccountName", "cn", "groupType", "description"];
            if *verbose {
                attrs.push("member");
            }
            let mut groups = t.search_all(&domain, Scope::Sub, Kind::Group.filter(), &attrs)?;
            groups.sort_by_key(|f| short_name(f).to_lowercase());
            if json_out {
                let list: Vec<_> = groups
                    .iter()
                    .map(|f| {
                        let mut v = json!({
                            "dn": f.dn,
                            "sAMAccountName": f.text("sAMAccountName"),
                            "type": describe_type(f),
                            "description": f.text("description"),
                        });
                        if *verbose {
                            v["members"] = json!(f.bytes("member").len());
                        }
                        v
                    })
                    .collect();
                print_json(&json!(list));
            } else if *full_dn {
                for f in &groups {
                    println!("{}", f.dn);
                }
            } else if *verbose {
                let rows: Vec<Vec<String>> = groups
                    .iter()
                    .map(|f| {
                        vec![
                            short_name(f),
                            describe_type(f),
                            f.bytes("member").len().to_string(),
                            f.text("description").unwrap_or_default(),
                        ]
                    })
                    .collect();
                table(&["NAME", "TYPE", "MEMBERS", "DESCRIPTION"], &rows);
            } else {
                for f in &groups {
                    println!("{}", short_name(f));
                }
            }
            Ok(())
        }
        GroupCommand::AddMembers { group, members }
        | GroupCommand::RemoveMembers { group, members } => {
            let adding = matches!(cmd, GroupCommand::AddMembers { .. });
            let g = find(t, Kind::Group, group, &["sAMAccountName"])?;
            let dns = member_dns(t, members)?;
            t.modify(
                &g.dn,
                vec![Modification {
                    op: if adding {
                        ModifyOp::Add
                    } else {
                        ModifyOp::Delete
                    },
                    attr: "member".into(),
                    values: dns.iter().map(|d| d.as_bytes().to_vec()).collect(),
                }],
            )?;
            let verb = if adding { "Added" } else { "Removed" };
            let prep = if adding { "to" } else { "from" };
            done(
                json_out,
                &format!("{verb} {} member(s) {prep} {}", dns.len(), g.dn),
                json!({"group": g.dn, "members": dns}),
            );
            Ok(())
        }
        GroupCommand::ListMembers {
            group,
            recursive,
            full_dn,
        } => {
            let g = find(t, Kind::Group, group, &["sAMAccountName"])?;
            let domain = t.domain().dn.clone();
            let rule = if *recursive {
                ":1.2.840.113556.1.4.1941:"
            } else {
                ""
            };
            let filter = format!("(memberOf{rule}={})", escape(&g.dn));
            let mut members = t.search_all(
                &domain,
                Scope::Sub,
                &filter,
                &["sAMAccountName", "cn", "objectClass"],
            )?;
            members.sort_by_key(|f| short_name(f).to_lowercase());
            if json_out {
                let list: Vec<_> = members
                    .iter()
                    .map(|f| json!({"dn": f.dn, "name": short_name(f)}))
                    .collect();
                print_json(&json!(list));
            } else {
                for f in &members {
                    println!(
                        "{}",
                        if *full_dn {
                            f.dn.clone()
                        } else {
                            short_name(f)
                        }
                    );
                }
            }
            Ok(())
        }
        GroupCommand::Move { group, new_parent } => {
            super::move_to(t, Kind::Group, group, new_parent, json_out)
        }
        GroupCommand::Stats { top } => stats(t, *top, json_out),
    }
}

/// `group stats`: from the link table on a local folder, from `member` values remotely.
fn stats(t: &mut dyn Target, top: usize, json_out: bool) -> Result<()> {
    let domain = t.domain().dn.clone();
    let s = match t.as_local() {
        Some(local) => {
            let dir = local.directory().clone();
            let r = dir.db().read()?;
            let base = kauri_db::Dn::parse(&domain)?;
            kauri_domain::directory::stats::group_stats(&r, &base, top)?
        }
        None => {
            let mut counts = Vec::new();
            t.search(
                &domain,
                Scope::Sub,
                Kind::Group.filter(),
                &["member", "groupType"],
                &mut |f| {
                    let bits = f.bytes("groupType").first().and_then(|v| parse_u32_bits(v));
                    counts.push((f.bytes("member").len() as u64, f.dn, bits));
                    Ok(())
                },
            )?;
            let (mut s, largest) = summarize(counts, top);
            s.largest = largest;
            s
        }
    };
    if json_out {
        let largest: Vec<_> = s
            .largest
            .iter()
            .map(|(dn, n)| json!({"dn": dn, "members": n}))
            .collect();
        print_json(&json!({
            "domain": domain,
            "groups": s.groups,
            "memberships": s.memberships,
            "empty_groups": s.empty,
            "average_members": s.average_members,
            "median_members": s.median_members,
            "largest": largest,
            "by_type": s.by_type,
        }));
        return Ok(());
    }
    println!("groups in {domain}");
    println!("  groups                 {}", s.groups);
    println!("  memberships (direct)   {}", s.memberships);
    println!("  empty groups           {}", s.empty);
    println!(
        "  members per group      {:.1} average, {:.1} median",
        s.average_members, s.median_members
    );
    println!();
    println!("  by type");
    for (kind, n) in &s.by_type {
        println!("    {n:>8}  {kind}");
    }
    println!();
    println!("  largest");
    for (dn, n) in &s.largest {
        println!("    {n:>8}  {dn}");
    }
    Ok(())
}
