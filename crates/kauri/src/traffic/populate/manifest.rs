//! What a populate run leaves for the replayer (`kauri traffic replay
//! --users-from-populate`): the domain it filled, the seed and counts it was made from, and
//! the accounts that can sign in with the known password.

use std::path::Path;

use anyhow::{Context, Result};
use serde::{Deserialize, Serialize};

use super::generate::{Plan, Shape};

/// The manifest's format version (raised when a field changes meaning).
pub const MANIFEST_VERSION: u32 = 1;

/// The JSON file `kauri traffic populate` writes (`<data>/populate.json` with `--local`,
/// `./populate.json` with `--server`, or `--manifest PATH`):
///
/// - `version`: [`MANIFEST_VERSION`];
/// - `realm`: the domain's DNS name in capitals (`SAMDOM.EXAMPLE.COM`), the Kerberos realm;
/// - `dns_name`: the same in lower case, the suffix of every UPN;
/// - `base_dn`: the domain's DN (`DC=samdom,DC=example,DC=com`);
/// - `netbios_domain`: the NetBIOS domain name (`SAMDOM`), for `SAMDOM\name` binds;
/// - `server`: the LDAP URL filled, when it was a server; `data`: the data folder, when it
///   was one;
/// - `seed` and `counts` (users, computers, groups, ous): what the domain was made from; the
///   same seed and counts make the same objects again;
/// - `password`: the known password;
/// - `accounts`: every account that has it, each with `sam_account_name`, `dn` and `upn`,
///   in the order they were made.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Manifest {
    /// The manifest's format version.
    pub version: u32,
    /// The Kerberos realm (the DNS name in capitals).
    pub realm: String,
    /// The domain's DNS name.
    pub dns_name: String,
    /// The domain's DN.
    pub base_dn: String,
    /// The NetBIOS domain name.
    pub netbios_domain: String,
    /// The server that was filled (an ldap:// or ldaps:// URL).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub server: Option<String>,
    /// The data folder that was filled.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub data: Option<String>,
    /// The seed the domain was made from.
    pub seed: u64,
    /// How many of each kind of object were asked for.
    pub counts: Shape,
    /// The password of every account in `accounts`.
    pub password: String,
    /// The accounts that have the known password.
    pub accounts: Vec<Account>,
}

/// An account with the known password.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Account {
    /// Its `sAMAccountName` (bind as `NETBIOS\name`).
    pub sam_account_name: String,
    /// Its DN.
    pub dn: String,
    /// Its `userPrincipalName`.
    pub upn: String,
}

impl Manifest {
    /// The manifest of a plan whose accounts have `password`.
    pub fn of(plan: &Plan, password: &str) -> Manifest {
        let accounts = (0..plan.password_users)
            .map(|i| {
                let u = plan.user(i);
                Account {
                    sam_account_name: u.sam,
                    dn: u.dn,
                    upn: u.upn,
                }
            })
            .collect();
        Manifest {
            version: MANIFEST_VERSION,
            realm: plan.domain.dns_name.to_ascii_uppercase(),
            dns_name: plan.domain.dns_name.clone(),
            base_dn: plan.domain.dn.clone(),
            netbios_domain: plan.domain.netbios.clone(),
            server: None,
            data: None,
            seed: plan.seed,
            counts: plan.shape,
            password: password.to_string(),
            accounts,
        }
    }

    /// Writes the manifest (readable by its owner only: it holds a password).
    pub fn save(&self, path: &Path) -> Result<()> {
        let text = serde_json::to_string_pretty(self)?;
        let tmp = path.with_extension("json.tmp");
        {
            use std::io::Write;
            let mut opts = std::fs::OpenOptions::new();
            opts.write(true).create(true).truncate(true);
            #[cfg(unix)]
            {
                use std::os::unix::fs::OpenOptionsExt;
                opts.mode(0o600);
            }
            let mut f = opts
                .open(&tmp)
                .with_context(|| format!("writing {}", tmp.display()))?;
            f.write_all(text.as_bytes())
                .and_then(|()| f.write_all(b"\n"))
                .with_context(|| format!("writing {}", tmp.display()))?;
        }
        std::fs::rename(&tmp, path).with_context(|| format!("writing {}", path.display()))
    }

    /// Reads a manifest.
    pub fn load(path: &Path) -> Result<Manifest> {
        let text = std::fs::read(path).with_context(|| format!("reading {}", path.display()))?;
        serde_json::from_slice(&text).with_context(|| format!("parsing {}", path.display()))
    }

    /// A warning when the manifest at `path` was written for another domain shape than
    /// this one (its objects are not the ones this run makes or finds).
    pub fn differs_from(&self, path: &Path) -> Option<String> {
        let old = Manifest::load(path).ok()?;
        (old.seed != self.seed || old.counts != self.counts || old.base_dn != self.base_dn).then(
            || {
                format!(
                    "{} was written by a run with seed {} and {} users, {} computers, {} \
                     groups, {} OUs; it is replaced by this run's (seed {})",
                    path.display(),
                    old.seed,
                    old.counts.users,
                    old.counts.computers,
                    old.counts.groups,
                    old.counts.ous,
                    self.seed
                )
            },
        )
    }
}
