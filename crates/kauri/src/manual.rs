//! `kauri man` and `kauri completions`: manual pages and shell completions made from the
//! command's own definition, so they never disagree with `--help`. The Debian package
//! installs both; a source build can make them with these two commands.

use std::path::{Path, PathBuf};

use anyhow::{Context, Result};

/// Writes a manual page (section 1, roff) for `cmd` and for each of its subcommands into
/// `dir`: `kauri.1`, `kauri-serve.1`, `kauri-db-reindex.1`, …; returns the files written.
pub fn write_pages(mut cmd: clap::Command, dir: &Path) -> Result<Vec<PathBuf>> {
    std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
    // Building names each subcommand after its path (`kauri-db-reindex`), as its page.
    cmd.build();
    let mut written = Vec::new();
    write_tree(&cmd, dir, &mut written)?;
    Ok(written)
}

fn write_tree(cmd: &clap::Command, dir: &Path, written: &mut Vec<PathBuf>) -> Result<()> {
    let name = cmd
        .get_display_name()
        .unwrap_or_else(|| cmd.get_name())
        .to_string();
    let path = dir.join(format!("{name}.1"));
    let mut page = Vec::new();
    clap_mangen::Man::new(cmd.clone())
        .render(&mut page)
        .with_context(|| format!("rendering the page of {name}"))?;
    std::fs::write(&path, page).with_context(|| format!("writing {}", path.display()))?;
    written.push(path);
    for sub in cmd.get_subcommands() {
        if sub.is_hide_set() || sub.get_name() == "help" {
            continue;
        }
        write_tree(sub, dir, written)?;
    }
    Ok(())
}

/// Writes the completion script of `shell` for `cmd` to `out`. The script is made in
/// memory first: the generator panics on a failed write (a closed pipe), `out` does not.
pub fn completions(
    mut cmd: clap::Command,
    shell: clap_complete::Shell,
    out: &mut dyn std::io::Write,
) -> std::io::Result<()> {
    let name = cmd.get_name().to_string();
    let mut script = Vec::new();
    clap_complete::generate(shell, &mut cmd, name, &mut script);
    out.write_all(&script)
}
