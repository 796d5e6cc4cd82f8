//! What a populate run says: a progress bar while it works (with rate and ETA), and a
//! summary at the end of what it made, what was there already, what was refused, and how
//! fast it went.

use std::io::IsTerminal;

use anyhow::Result;
use indicatif::{ProgressBar, ProgressStyle};
use serde::Serialize;

/// How many objects of each kind.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct Counts {
    /// Organizational units.
    pub ous: u64,
    /// Users.
    pub users: u64,
    /// Computers.
    pub computers: u64,
    /// Groups.
    pub groups: u64,
    /// Group memberships (users, computers and groups in groups).
    pub memberships: u64,
    /// DNS names of computers.
    pub dns_records: u64,
}

impl Counts {
    /// Objects (not memberships).
    pub fn objects(&self) -> u64 {
        self.ous + self.users + self.computers + self.groups + self.dns_records
    }

    fn line(&self) -> String {
        format!(
            "{} OUs, {} users, {} computers, {} groups, {} memberships, {} DNS records",
            self.ous, self.users, self.computers, self.groups, self.memberships, self.dns_records
        )
    }
}

/// The time one step of a run took.
#[derive(Debug, Clone, Serialize)]
pub struct Step {
    /// What the step did.
    pub name: String,
    /// Seconds it took.
    pub seconds: f64,
}

/// The summary of a run.
#[derive(Debug, Clone, Serialize)]
pub struct Summary {
    /// `local` or the server's URL.
    pub target: String,
    /// Seconds from start to end.
    pub seconds: f64,
    /// What this run made.
    pub created: Counts,
    /// What it found made already (a rerun, or a run cut short and started again).
    pub already_present: Counts,
    /// Changes the directory refused.
    pub refused: u64,
    /// The first refusals, as the directory worded them.
    pub refusals: Vec<String>,
    /// Objects made per second.
    pub objects_per_second: f64,
    /// Memberships made per second.
    pub memberships_per_second: f64,
    /// Users that have the known password.
    pub password_users: usize,
    /// Where the manifest went.
    pub manifest: String,
    /// Index keys the bulk load sorted and wrote (--local; a key met twice, such as a
    /// group member's `memberOf` presence, counts twice).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub index_keys: Option<u64>,
    /// The steps of the run and their times.
    pub steps: Vec<Step>,
}

/// How many refusals a summary quotes.
pub const REFUSALS_QUOTED: usize = 10;

impl Summary {
    /// Prints the summary, as JSON or as text; a run with refusals fails afterwards.
    pub fn print(&self, json: bool) -> Result<()> {
        if json {
            println!("{}", serde_json::to_string_pretty(self)?);
        } else {
            println!("Populated {} in {:.2} s", self.target, self.seconds);
            println!("  made:            {}", self.created.line());
            if self.already_present != Counts::default() {
                println!("  already present: {}", self.already_present.line());
            }
            println!(
                "  rate:            {:.0} objects/s, {:.0} memberships/s",
                self.objects_per_second, self.memberships_per_second
            );
            println!(
                "  password:        {} users have the known password (manifest: {})",
                self.password_users, self.manifest
            );
            if let Some(k) = self.index_keys {
                println!("  index keys:      {k} sorted");
            }
            for s in &self.steps {
                println!("  {:<16} {:.2} s", format!("{}:", s.name), s.seconds);
            }
        }
        if self.refused > 0 {
            for r in &self.refusals {
                eprintln!("refused: {r}");
            }
            anyhow::bail!("{} changes were refused", self.refused);
        }
        Ok(())
    }

    /// Fills in the rates from the counts and the time.
    pub fn with_rates(mut self) -> Summary {
        let s = self.seconds.max(1e-9);
        self.objects_per_second = self.created.objects() as f64 / s;
        self.memberships_per_second = self.created.memberships as f64 / s;
        self
    }
}

/// A progress bar on standard error (hidden with `--json` or when standard error is not a
/// terminal), counting `total` steps with the rate and the time left.
pub fn progress(total: u64, json: bool) -> ProgressBar {
    if json || !std::io::stderr().is_terminal() {
        return ProgressBar::hidden();
    }
    let bar = ProgressBar::new(total);
    bar.set_style(
        ProgressStyle::with_template(
            "{msg:<12} [{bar:32}] {human_pos}/{human_len} {rate:>9} ETA {eta}",
        )
        .unwrap_or_else(|_| ProgressStyle::default_bar())
        .with_key(
            "rate",
            |state: &indicatif::ProgressState, w: &mut dyn std::fmt::Write| {
                let _ = write!(w, "{:.0}/s", state.per_sec());
            },
        )
        .progress_chars("=> "),
    );
    bar
}
