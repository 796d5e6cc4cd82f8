//! The object-management commands (`kauri user|group|ou|computer|contact|dns|dsacl …`)
//! and what they share: a [`Target`] that is either a local data folder or a remote
//! server, the entries read back from it, name resolution, and table/JSON output.
//!
//! Every command is written once against [`Target`]: it searches, adds, modifies, deletes
//! and renames by DN with LDAP's semantics, so the local folder and a remote DC answer
//! the same command the same way (and refuse it with the same result codes).

pub mod computer;
pub mod contact;
pub mod dns;
pub mod dsacl;
pub mod group;
pub mod local;
pub mod names;
pub mod ou;
pub mod output;
pub mod remote;
pub mod target;
pub mod user;

pub use target::TargetArgs;

use anyhow::Result;
use serde_json::json;

use names::{find, in_domain, Kind};
use target::Target;

/// `… show NAME`: an object's attributes (all, or those asked for), as a record or JSON.
/// A whole user or computer account also shows its Kerberos key types and key version
/// (never the keys), under `kerberos` in JSON.
pub fn show(
    t: &mut dyn Target,
    kind: Kind,
    name: &str,
    attrs: &[String],
    json_out: bool,
) -> Result<()> {
    let wanted: Vec<&str> = attrs.iter().map(String::as_str).collect();
    let f = find(t, kind, name, &wanted)?;
    let keys = if attrs.is_empty() && matches!(kind, Kind::User | Kind::Computer) {
        Some(crate::kerberos::key_facts(t, &f.dn)?)
    } else {
        None
    };
    if json_out {
        let mut v = output::entry_json(&f);
        if let Some(k) = keys {
            v["kerberos"] = k;
        }
        output::print_json(&v);
    } else {
        output::print_entry(&f);
        if let Some(k) = &keys {
            crate::kerberos::print_key_facts(k);
        }
    }
    Ok(())
}

/// `… delete NAME`: the object becomes a tombstone (with `tree`, its subtree too).
pub fn delete(
    t: &mut dyn Target,
    kind: Kind,
    name: &str,
    tree: bool,
    json_out: bool,
) -> Result<()> {
    let f = find(t, kind, name, &["objectClass"])?;
    t.delete(&f.dn, tree)?;
    output::done(json_out, &format!("Deleted {}", f.dn), json!({"dn": f.dn}));
    Ok(())
}

/// `… move NAME NEW_PARENT`: the object, with its subtree, below another OU or container.
pub fn move_to(
    t: &mut dyn Target,
    kind: Kind,
    name: &str,
    new_parent: &str,
    json_out: bool,
) -> Result<()> {
    let f = find(t, kind, name, &["objectClass"])?;
    let parent = in_domain(t, new_parent);
    let rdn =
        f.dn.split_once(',')
            .map_or(f.dn.as_str(), |(r, _)| r)
            .to_string();
    t.rename(&f.dn, &rdn, Some(&parent))?;
    let new_dn = format!("{rdn},{parent}");
    output::done(
        json_out,
        &format!("Moved {} to {new_dn}", f.dn),
        json!({"dn": f.dn, "new_dn": new_dn}),
    );
    Ok(())
}

/// `userAccountControl` bits the commands set and read (MS-ADTS 2.2.16).
pub mod uac {
    /// The account is disabled.
    pub const ACCOUNTDISABLE: i64 = 0x2;
    /// No password is required.
    pub const PASSWD_NOTREQD: i64 = 0x20;
    /// A normal user account.
    pub const NORMAL_ACCOUNT: i64 = 0x200;
}
