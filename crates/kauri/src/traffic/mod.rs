//! `kauri traffic`: build a realistic large domain, turn captures into anonymised
//! summaries, learn a traffic model from them, replay it against any domain controller,
//! and compare the runs in a chart.

use anyhow::Result;
use clap::Subcommand;

pub mod populate;

/// The traffic tools.
#[derive(Debug, Subcommand)]
pub enum TrafficCommand {
    /// Fill a domain with users, computers, groups and OUs that look real, over LDAP or
    /// straight into a stopped data folder.
    Populate(populate::PopulateArgs),
}

/// Runs one traffic command.
pub fn run(what: TrafficCommand) -> Result<()> {
    match what {
        TrafficCommand::Populate(args) => populate::run(&args),
    }
}
