//! `kauri traffic populate` (being written).

use anyhow::Result;
use clap::Args;

/// Options of `kauri traffic populate`.
#[derive(Debug, Args)]
pub struct PopulateArgs {
    /// Users to create.
    #[arg(long, default_value_t = 1000)]
    pub users: usize,
}

/// Populates a domain.
pub fn run(_args: &PopulateArgs) -> Result<()> {
    anyhow::bail!("not built yet")
}
