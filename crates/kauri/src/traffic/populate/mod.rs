//! `kauri traffic populate`: fills a domain with users, computers, groups and OUs that look
//! like a real domain's ([`generate`]), over LDAP against any domain controller
//! ([`ldap`]) or straight into a stopped data folder through a validated bulk load
//! ([`local`]); the same seed makes the same domain, and a rerun skips what is there. It
//! writes a [`manifest::Manifest`] naming the accounts that have the known password, for
//! the replayer.

pub mod generate;
pub mod ldap;
pub mod local;
pub mod manifest;
pub mod report;

use std::path::PathBuf;

use anyhow::{bail, Result};
use clap::Args;

use crate::admin::target::Credentials;
use generate::Shape;

/// The password populated accounts get unless `--account-password` says otherwise.
pub const DEFAULT_ACCOUNT_PASSWORD: &str = "P0pulate!Traffic";

/// Options of `kauri traffic populate`.
#[derive(Debug, Args)]
#[command(group(clap::ArgGroup::new("target").required(true).args(["server", "local"])))]
pub struct PopulateArgs {
    /// Fill this server over LDAP: ldaps://host[:port], or ldap://host[:port] with
    /// StartTLS (passwords travel only over an encrypted connection).
    #[arg(long, value_name = "URL")]
    pub server: Option<String>,
    /// Fill this stopped domain's data folder directly, through a bulk load validated as
    /// LDAP adds are.
    #[arg(long, value_name = "DATA")]
    pub local: Option<PathBuf>,
    /// Who to bind as on the server, and how to trust it.
    #[command(flatten)]
    pub credentials: Credentials,
    /// User accounts to make.
    #[arg(long, default_value_t = 1000)]
    pub users: usize,
    /// Computer accounts to make (each with SPNs and, where the domain has DNS, a DNS
    /// record).
    #[arg(long, default_value_t = 1000)]
    pub computers: usize,
    /// Groups to make.
    #[arg(long, default_value_t = 100)]
    pub groups: usize,
    /// Organizational units to spread them over.
    #[arg(long, default_value_t = 200)]
    pub ous: usize,
    /// LDAP connections at once, one request in flight on each (--server).
    #[arg(long, default_value_t = 8)]
    pub concurrency: usize,
    /// The seed: the same seed and counts make the same domain.
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// How many users get the known password (the first ones), or `all`. Every password
    /// costs a Kerberos key derivation (about a millisecond), so not all by default.
    #[arg(long, default_value = "1000", value_parser = parse_password_users)]
    pub password_users: usize,
    /// The known password of those users.
    #[arg(long, default_value = DEFAULT_ACCOUNT_PASSWORD)]
    pub account_password: String,
    /// Where to write the manifest for the replayer [default: <data>/populate.json with
    /// --local, ./populate.json with --server].
    #[arg(long, value_name = "PATH")]
    pub manifest: Option<PathBuf>,
    /// Leave computers without DNS records.
    #[arg(long)]
    pub no_dns: bool,
    /// Print a JSON summary (counts made and already present, seconds, rates) instead of
    /// text, and no progress bar.
    #[arg(long)]
    pub json: bool,
}

/// `--password-users`: a number or `all`.
fn parse_password_users(text: &str) -> Result<usize, String> {
    if text.eq_ignore_ascii_case("all") {
        return Ok(usize::MAX);
    }
    text.parse()
        .map_err(|_| format!("{text:?} is neither a number nor `all`"))
}

impl PopulateArgs {
    /// The counts asked for.
    pub fn shape(&self) -> Shape {
        Shape {
            users: self.users,
            computers: self.computers,
            groups: self.groups,
            ous: self.ous,
        }
    }
}

/// Populates a domain.
pub fn run(args: &PopulateArgs) -> Result<()> {
    if args.concurrency == 0 {
        bail!("--concurrency must be at least 1");
    }
    let summary = match (&args.server, &args.local) {
        (Some(url), None) => ldap::run(args, url)?,
        (None, Some(data)) => local::run(args, data)?,
        _ => bail!("give exactly one of --server URL and --local DATA"),
    };
    summary.print(args.json)
}
