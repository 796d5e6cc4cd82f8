//! `kauri ldif export` on a local data folder: entries as LDIF, streamed from one read
//! snapshot, parents before children, linked attributes with the DNs they name, secrets
//! never written.

use std::io::{BufWriter, Write};
use std::ops::ControlFlow;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result};
use kauri_db::{Dn, Filter, Scope, SearchRequest};
use kauri_domain::directory::is_secret;

/// What to export and where.
#[derive(Debug, Clone, clap::Args)]
pub struct ExportOptions {
    /// The data folder (or its database folder).
    #[arg(short = 'H', long = "data")]
    pub data: PathBuf,
    /// Only this subtree (every naming context when absent).
    #[arg(long)]
    pub base: Option<String>,
    /// Only the entries matching this filter (all when absent).
    #[arg(long)]
    pub filter: Option<String>,
    /// Write to this file instead of standard output.
    #[arg(long, short = 'o')]
    pub output: Option<PathBuf>,
}

/// `kauri ldif export`; returns the number of entries written.
pub fn export(o: &ExportOptions) -> Result<u64> {
    let db = crate::dbcmd::open_existing(&o.data)?;
    let r = db.read()?;
    let bases: Vec<Dn> = match &o.base {
        Some(b) => vec![Dn::parse(b).with_context(|| format!("--base {b}"))?],
        None => r
            .naming_contexts()?
            .into_iter()
            .filter_map(|(_, dn)| Dn::parse(&dn).ok())
            .collect(),
    };
    let filter = match &o.filter {
        Some(f) => Some(Filter::parse(f).with_context(|| format!("--filter {f}"))?),
        None => None,
    };
    let sink: Box<dyn Write> = match &o.output {
        Some(path) => Box::new(
            std::fs::File::create(path).with_context(|| format!("creating {}", path.display()))?,
        ),
        None => Box::new(std::io::stdout().lock()),
    };
    let mut out = BufWriter::new(sink);
    let bar = if o.output.is_some() {
        let b = indicatif::ProgressBar::new(r.record_count()?);
        b.set_style(
            indicatif::ProgressStyle::with_template("export [{bar:40}] {pos}/{len} entries")
                .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar()),
        );
        b
    } else {
        indicatif::ProgressBar::hidden()
    };
    let mut written = 0u64;
    let mut write = |id: u64| -> Result<()> {
        let Some(entry) = r.entry_by_id(id)? else {
            return Ok(());
        };
        let attrs: Vec<(String, Vec<Vec<u8>>)> = entry
            .attrs
            .into_iter()
            .filter(|(name, _)| !is_secret(name))
            .collect();
        crate::ldif::write_entry(&mut out, &entry.dn.to_string(), &attrs)?;
        written += 1;
        bar.inc(1);
        Ok(())
    };
    for base in bases {
        let Some(root) = r.lookup(&base)?.filter(|id| *id != 0) else {
            anyhow::bail!("no entry {base}");
        };
        match &filter {
            // The whole subtree, parents before children, as an import needs them.
            None => {
                let mut stack = vec![root];
                while let Some(id) = stack.pop() {
                    write(id)?;
                    let mut children = r.children(id)?;
                    children.reverse();
                    stack.extend(children);
                }
            }
            Some(f) => {
                let req = SearchRequest::new(base.clone(), Scope::Subtree, f.clone());
                let mut ids = Vec::new();
                r.search(&req, |hit| {
                    ids.push(hit.id);
                    Ok(ControlFlow::Continue(()))
                })?;
                for id in ids {
                    write(id)?;
                }
            }
        }
    }
    bar.finish_and_clear();
    out.flush()?;
    Ok(written)
}

/// Where the export went, for the message after it.
pub fn describe(output: Option<&Path>) -> String {
    output.map_or_else(|| "standard output".into(), |p| p.display().to_string())
}
