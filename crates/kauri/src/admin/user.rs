//! `kauri user …`: user accounts — add, delete, show, list, passwords, enable, disable,
//! unlock, move and expiry.

use anyhow::{bail, Context, Result};
use kauri_db::{Modification, ModifyOp};
use kauri_domain::password::{ad_time_from_unix, encode_unicode_pwd, generate_password};
use serde_json::json;

use super::names::{self, container, find, rdn_value, Kind};
use super::output::{done, print_json, table};
use super::target::{Found, Scope, Target};
use super::uac;

/// The user commands.
#[derive(Debug, Clone, clap::Subcommand)]
pub enum UserCommand {
    /// Create a user (disabled until it has a password).
    #[command(alias = "create")]
    Add(Box<AddUser>),
    /// Delete a user (it becomes a tombstone).
    Delete {
        /// sAMAccountName, UPN, DOMAIN\name or DN.
        name: String,
    },
    /// Show a user's attributes.
    Show {
        /// sAMAccountName, UPN, DOMAIN\name or DN.
        name: String,
        /// Only these attributes (comma-separated).
        #[arg(long, value_delimiter = ',')]
        attributes: Vec<String>,
    },
    /// List users.
    List {
        /// Only below this OU (relative to the domain or a whole DN).
        #[arg(long)]
        ou: Option<String>,
        /// Print DNs instead of a table.
        #[arg(long)]
        full_dn: bool,
    },
    /// Set a user's password.
    #[command(alias = "setpassword")]
    SetPassword {
        /// sAMAccountName, UPN, DOMAIN\name or DN.
        name: String,
        /// The new password (asked for when neither this nor --random-password is given).
        #[arg(long)]
        newpassword: Option<String>,
        /// Generate a password and print it.
        #[arg(long, conflicts_with = "newpassword")]
        random_password: bool,
        /// The user must choose a new password at the next logon.
        #[arg(long)]
        must_change_at_next_login: bool,
    },
    /// Enable a user's account.
    Enable {
        /// sAMAccountName, UPN, DOMAIN\name or DN.
        name: String,
    },
    /// Disable a user's account.
    Disable {
        /// sAMAccountName, UPN, DOMAIN\name or DN.
        name: String,
    },
    /// Unlock an account locked out by bad passwords.
    Unlock {
        /// sAMAccountName, UPN, DOMAIN\name or DN.
        name: String,
    },
    /// Move a user to another OU or container.
    Move {
        /// sAMAccountName, UPN, DOMAIN\name or DN.
        name: String,
        /// The new parent (relative to the domain, e.g. OU=Sales, or a whole DN).
        new_parent: String,
    },
    /// Set when the account expires.
    #[command(alias = "setexpiry")]
    SetExpiry {
        /// sAMAccountName, UPN, DOMAIN\name or DN.
        name: String,
        /// Expires this many days from now.
        #[arg(long, conflicts_with_all = ["date", "noexpiry"])]
        days: Option<u32>,
        /// Expires at the start of this day (YYYY-MM-DD, UTC).
        #[arg(long, conflicts_with = "noexpiry")]
        date: Option<String>,
        /// Never expires.
        #[arg(long)]
        noexpiry: bool,
    },
}

/// Options of `kauri user add`.
#[derive(Debug, Clone, clap::Args)]
pub struct AddUser {
    /// The account name (sAMAccountName).
    pub name: String,
    /// The password (or use --random-password; without either the account stays disabled).
    #[arg(long)]
    pub password: Option<String>,
    /// Generate a password and print it.
    #[arg(long, conflicts_with = "password")]
    pub random_password: bool,
    /// The user must choose a new password at the first logon.
    #[arg(long)]
    pub must_change_at_next_login: bool,
    /// Given name.
    #[arg(long)]
    pub given_name: Option<String>,
    /// Surname.
    #[arg(long)]
    pub surname: Option<String>,
    /// Initials.
    #[arg(long)]
    pub initials: Option<String>,
    /// Display name [default: given name and surname].
    #[arg(long)]
    pub display_name: Option<String>,
    /// E-mail address.
    #[arg(long, alias = "mail-address")]
    pub mail: Option<String>,
    /// User principal name [default: name@realm].
    #[arg(long)]
    pub upn: Option<String>,
    /// Description.
    #[arg(long)]
    pub description: Option<String>,
    /// Department.
    #[arg(long)]
    pub department: Option<String>,
    /// Company.
    #[arg(long)]
    pub company: Option<String>,
    /// Job title.
    #[arg(long)]
    pub job_title: Option<String>,
    /// Telephone number.
    #[arg(long)]
    pub telephone_number: Option<String>,
    /// The common name [default: given name and surname, else the account name].
    #[arg(long)]
    pub cn: Option<String>,
    /// Where to create it (relative to the domain, e.g. OU=Sales) [default: CN=Users].
    #[arg(long, alias = "userou")]
    pub ou: Option<String>,
    /// Leave the account disabled even with a password.
    #[arg(long)]
    pub disabled: bool,
}

/// The attributes `user show` and `user list` read.
const LIST_ATTRS: &[&str] = &[
    "sAMAccountName",
    "displayName",
    "mail",
    "userAccountControl",
    "userPrincipalName",
    "lockoutTime",
];

/// Attribute values as an add wants them.
fn text_attr(name: &str, value: &str) -> (String, Vec<Vec<u8>>) {
    (name.to_string(), vec![value.as_bytes().to_vec()])
}

/// Whether an account's userAccountControl says it is disabled.
pub fn is_disabled(f: &Found) -> bool {
    f.int("userAccountControl")
        .is_some_and(|u| u & uac::ACCOUNTDISABLE != 0)
}

/// A new password: given, generated, or asked for twice on the terminal.
fn new_password(given: Option<&str>, random: bool) -> Result<(String, bool)> {
    if let Some(p) = given {
        return Ok((p.to_string(), false));
    }
    if random {
        return Ok((
            generate_password().map_err(|e| anyhow::anyhow!("generating a password: {e}"))?,
            true,
        ));
    }
    let first = rpassword::prompt_password("New password: ").context("reading the password")?;
    let again = rpassword::prompt_password("Retype it: ").context("reading the password")?;
    if first != again {
        bail!("the two passwords differ");
    }
    Ok((first, false))
}

/// Flips the disabled bit of an account's userAccountControl.
fn set_disabled(t: &mut dyn Target, kind: Kind, name: &str, disabled: bool) -> Result<Found> {
    let f = find(t, kind, name, &["userAccountControl"])?;
    let current = f.int("userAccountControl").unwrap_or(uac::NORMAL_ACCOUNT);
    // An enabled account needs a password: enabling also clears PASSWD_NOTREQD, which
    // accounts created without a password carry, so the server refuses to enable one that
    // still has none.
    let wanted = if disabled {
        current | uac::ACCOUNTDISABLE
    } else {
        current & !(uac::ACCOUNTDISABLE | uac::PASSWD_NOTREQD)
    };
    if wanted != current {
        t.replace(&f.dn, "userAccountControl", &[&wanted.to_string()])?;
    }
    Ok(f)
}

/// `pwdLastSet: 0`, which makes the account change its password at the next logon.
fn must_change(t: &mut dyn Target, dn: &str) -> Result<()> {
    t.replace(dn, "pwdLastSet", &["0"])
}

/// Seconds since 1970 for a `YYYY-MM-DD` date (midnight UTC).
fn date_secs(date: &str) -> Result<i64> {
    let parts: Vec<&str> = date.split('-').collect();
    let [y, m, d] = parts.as_slice() else {
        bail!("{date}: expected YYYY-MM-DD");
    };
    let gt = format!("{y:0>4}{m:0>2}{d:0>2}000000Z");
    kauri_db::syntax::parse_generalized_time(gt.as_bytes())
        .map(|micros| micros / 1_000_000)
        .map_err(|e| anyhow::anyhow!("{date}: {e}"))
}

/// Runs a user command.
pub fn run(t: &mut dyn Target, cmd: &UserCommand, json_out: bool) -> Result<()> {
    match cmd {
        UserCommand::Add(a) => add(t, a, json_out),
        UserCommand::Delete { name } => super::delete(t, Kind::User, name, false, json_out),
        UserCommand::Show { name, attributes } => {
            super::show(t, Kind::User, name, attributes, json_out)
        }
        UserCommand::List { ou, full_dn } => {
            let base = match ou {
                Some(o) => names::in_domain(t, o),
                None => t.domain().dn.clone(),
            };
            let mut users = t.search_all(&base, Scope::Sub, Kind::User.filter(), LIST_ATTRS)?;
            users.sort_by_key(|f| f.text("sAMAccountName").unwrap_or_default().to_lowercase());
            if json_out {
                let list: Vec<_> = users
                    .iter()
                    .map(|f| {
                        json!({
                            "dn": f.dn,
                            "sAMAccountName": f.text("sAMAccountName"),
                            "userPrincipalName": f.text("userPrincipalName"),
                            "displayName": f.text("displayName"),
                            "mail": f.text("mail"),
                            "enabled": !is_disabled(f),
                        })
                    })
                    .collect();
                print_json(&json!(list));
            } else if *full_dn {
                for f in &users {
                    println!("{}", f.dn);
                }
            } else {
                let rows: Vec<Vec<String>> = users
                    .iter()
                    .map(|f| {
                        vec![
                            f.text("sAMAccountName").unwrap_or_default(),
                            if is_disabled(f) {
                                "disabled"
                            } else {
                                "enabled"
                            }
                            .to_string(),
                            f.text("displayName").unwrap_or_default(),
                            f.text("mail").unwrap_or_default(),
                        ]
                    })
                    .collect();
                table(&["NAME", "STATE", "DISPLAY NAME", "MAIL"], &rows);
            }
            Ok(())
        }
        UserCommand::SetPassword {
            name,
            newpassword,
            random_password,
            must_change_at_next_login,
        } => {
            let f = find(t, Kind::User, name, &["sAMAccountName"])?;
            let (password, generated) = new_password(newpassword.as_deref(), *random_password)?;
            t.modify(
                &f.dn,
                vec![Modification {
                    op: ModifyOp::Replace,
                    attr: "unicodePwd".into(),
                    values: vec![encode_unicode_pwd(&password)],
                }],
            )?;
            if *must_change_at_next_login {
                must_change(t, &f.dn)?;
            }
            let shown = generated.then_some(password.as_str());
            let mut message = format!("Changed the password of {}", f.dn);
            if let Some(p) = shown {
                message.push_str(&format!("\nNew password: {p}"));
            }
            done(json_out, &message, json!({"dn": f.dn, "password": shown}));
            Ok(())
        }
        UserCommand::Enable { name } => {
            let f = set_disabled(t, Kind::User, name, false)?;
            done(json_out, &format!("Enabled {}", f.dn), json!({"dn": f.dn}));
            Ok(())
        }
        UserCommand::Disable { name } => {
            let f = set_disabled(t, Kind::User, name, true)?;
            done(json_out, &format!("Disabled {}", f.dn), json!({"dn": f.dn}));
            Ok(())
        }
        UserCommand::Unlock { name } => {
            let f = find(t, Kind::User, name, &["lockoutTime"])?;
            t.replace(&f.dn, "lockoutTime", &["0"])?;
            done(json_out, &format!("Unlocked {}", f.dn), json!({"dn": f.dn}));
            Ok(())
        }
        UserCommand::Move { name, new_parent } => {
            super::move_to(t, Kind::User, name, new_parent, json_out)
        }
        UserCommand::SetExpiry {
            name,
            days,
            date,
            noexpiry,
        } => {
            let f = find(t, Kind::User, name, &["accountExpires"])?;
            let now = std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map(|d| d.as_secs() as i64)
                .unwrap_or(0);
            let (value, when) = match (days, date, noexpiry) {
                (_, _, true) => (i64::MAX, "never".to_string()),
                (Some(d), _, _) => {
                    let at = now + i64::from(*d) * 86_400;
                    (
                        ad_time_from_unix(at),
                        kauri_db::syntax::generalized_time(at as u64),
                    )
                }
                (None, Some(d), _) => {
                    let at = date_secs(d)?;
                    (ad_time_from_unix(at), d.clone())
                }
                (None, None, false) => bail!("give --days, --date or --noexpiry"),
            };
            t.replace(&f.dn, "accountExpires", &[&value.to_string()])?;
            done(
                json_out,
                &format!("{} expires: {when}", f.dn),
                json!({"dn": f.dn, "accountExpires": value}),
            );
            Ok(())
        }
    }
}

fn add(t: &mut dyn Target, a: &AddUser, json_out: bool) -> Result<()> {
    let realm = t.domain().dns_name.clone();
    let full_name = match (&a.given_name, &a.surname) {
        (Some(g), Some(s)) => Some(format!("{g} {s}")),
        (Some(g), None) => Some(g.clone()),
        (None, Some(s)) => Some(s.clone()),
        (None, None) => None,
    };
    let cn =
        a.cn.clone()
            .or_else(|| full_name.clone())
            .unwrap_or_else(|| a.name.clone());
    let parent = container(t, a.ou.as_deref(), "CN=Users");
    let dn = format!("CN={},{parent}", rdn_value(&cn));
    let mut attrs = vec![
        text_attr("objectClass", "user"),
        text_attr("sAMAccountName", &a.name),
        text_attr(
            "userPrincipalName",
            &a.upn
                .clone()
                .unwrap_or_else(|| format!("{}@{realm}", a.name)),
        ),
    ];
    let optional = [
        ("givenName", &a.given_name),
        ("sn", &a.surname),
        ("initials", &a.initials),
        ("displayName", &a.display_name.clone().or(full_name)),
        ("mail", &a.mail),
        ("description", &a.description),
        ("department", &a.department),
        ("company", &a.company),
        ("title", &a.job_title),
        ("telephoneNumber", &a.telephone_number),
    ];
    for (name, value) in optional {
        if let Some(v) = value {
            attrs.push(text_attr(name, v));
        }
    }
    let password = match (&a.password, a.random_password) {
        (None, false) => None,
        (given, random) => Some(new_password(given.as_deref(), random)?),
    };
    if let Some((p, _)) = &password {
        attrs.push(("unicodePwd".into(), vec![encode_unicode_pwd(p)]));
        let control = if a.disabled {
            uac::NORMAL_ACCOUNT | uac::ACCOUNTDISABLE
        } else {
            uac::NORMAL_ACCOUNT
        };
        attrs.push(text_attr("userAccountControl", &control.to_string()));
    }
    t.add(&dn, attrs)?;
    if a.must_change_at_next_login {
        must_change(t, &dn)?;
    }
    let generated = password
        .as_ref()
        .filter(|(_, generated)| *generated)
        .map(|(p, _)| p.clone());
    let mut message = format!("Added user {} ({dn})", a.name);
    if password.is_none() {
        message.push_str("\nIt is disabled until it has a password (kauri user set-password, then kauri user enable).");
    }
    if let Some(p) = &generated {
        message.push_str(&format!("\nPassword: {p}"));
    }
    done(
        json_out,
        &message,
        json!({"dn": dn, "sAMAccountName": a.name, "password": generated}),
    );
    Ok(())
}
