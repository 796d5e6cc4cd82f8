//! `kauri traffic`: build a realistic large domain, turn captures into anonymised
//! summaries, learn a traffic model from them, replay it against any domain controller,
//! and compare the runs in a chart.

use std::io::Write;
use std::path::PathBuf;

use anyhow::{bail, Context, Result};
use clap::{Args, Subcommand};
use kauri_traffic::run::RunReport;

pub mod populate;
pub mod replay;

/// The traffic tools.
#[derive(Debug, Subcommand)]
pub enum TrafficCommand {
    /// Fill a domain with users, computers, groups and OUs that look real, over LDAP or
    /// straight into a stopped data folder.
    Populate(populate::PopulateArgs),
    /// Turn a capture (pcap, pcapng, or tshark's PDML) into Samba's anonymised summary,
    /// one line per packet, on standard output.
    Summarize(SummarizeArgs),
    /// Learn a traffic model (Samba's format, version 2) from summaries.
    Learn(LearnArgs),
    /// Replay a model or a summary against a domain controller and report the latency of
    /// every kind of operation.
    Replay(Box<replay::ReplayArgs>),
    /// Compare replay runs (`replay -o RUN.json`) in a chart and a table.
    Report(ReportArgs),
}

/// Options of `kauri traffic summarize`.
#[derive(Debug, Args)]
pub struct SummarizeArgs {
    /// The capture: pcap or pcapng (`tcpdump -w`, `dumpcap`), or PDML (`tshark -T pdml`).
    pub capture: PathBuf,
    /// Where to write the summary [default: standard output].
    #[arg(short = 'o', long)]
    pub output: Option<PathBuf>,
    /// Print what was read (frames, summarised, truncated, …) as JSON on standard error.
    #[arg(long)]
    pub json: bool,
}

/// Options of `kauri traffic learn`.
#[derive(Debug, Args)]
pub struct LearnArgs {
    /// Summaries to learn from (several make one model).
    #[arg(required = true)]
    pub summaries: Vec<PathBuf>,
    /// Where to write the model [default: standard output].
    #[arg(short = 'o', long)]
    pub output: Option<PathBuf>,
    /// Keep the operations only Kauri's replayer sends (LDAP modify, add, delete, rename,
    /// compare, extended; explicit Kerberos AS/TGS exchanges). Without it the model is
    /// the one Samba's learner makes; Samba's replayer skips the extra states.
    #[arg(long)]
    pub all_operations: bool,
}

/// Options of `kauri traffic report`.
#[derive(Debug, Args)]
pub struct ReportArgs {
    /// Runs written by `kauri traffic replay -o`.
    #[arg(required = true)]
    pub runs: Vec<PathBuf>,
    /// Write the chart as PNG here.
    #[arg(short = 'o', long)]
    pub output: Option<PathBuf>,
    /// Write a self-contained HTML page (chart and tables) here.
    #[arg(long)]
    pub html: Option<PathBuf>,
    /// Write the chart as SVG here.
    #[arg(long)]
    pub svg: Option<PathBuf>,
    /// The PNG's size in pixels, `WIDTHxHEIGHT` [default: fitted to the runs].
    #[arg(long)]
    pub size: Option<String>,
    /// Print the runs as one JSON array instead of the table.
    #[arg(long)]
    pub json: bool,
}

/// Runs one traffic command.
pub fn run(what: TrafficCommand) -> Result<()> {
    match what {
        TrafficCommand::Populate(args) => populate::run(&args),
        TrafficCommand::Summarize(args) => summarize(&args),
        TrafficCommand::Learn(args) => learn(&args),
        TrafficCommand::Replay(args) => replay::run(&args),
        TrafficCommand::Report(args) => report(&args),
    }
}

fn summarize(a: &SummarizeArgs) -> Result<()> {
    let bytes =
        std::fs::read(&a.capture).with_context(|| format!("reading {}", a.capture.display()))?;
    let looks_xml = bytes
        .iter()
        .find(|b| !b.is_ascii_whitespace())
        .is_some_and(|b| *b == b'<');
    let summary = if looks_xml {
        kauri_traffic::summarize::summarize_pdml(bytes.as_slice())
    } else {
        kauri_traffic::summarize::summarize_capture(&bytes)
    }
    .with_context(|| format!("summarizing {}", a.capture.display()))?;
    let mut text = String::new();
    for p in &summary.packets {
        text.push_str(&p.to_string());
        text.push('\n');
    }
    match &a.output {
        Some(p) => std::fs::write(p, text).with_context(|| format!("writing {}", p.display()))?,
        None => std::io::stdout().lock().write_all(text.as_bytes())?,
    }
    if a.json {
        eprintln!("{}", serde_json::to_string(&summary.stats)?);
    } else {
        eprintln!("kauri: {}", summary.stats);
    }
    Ok(())
}

fn learn(a: &LearnArgs) -> Result<()> {
    let mut summaries = Vec::with_capacity(a.summaries.len());
    for p in &a.summaries {
        let f = std::fs::File::open(p).with_context(|| format!("opening {}", p.display()))?;
        let packets = kauri_traffic::summary::read(std::io::BufReader::new(f))
            .with_context(|| format!("reading the summary {}", p.display()))?;
        summaries.push(packets);
    }
    let operations = if a.all_operations {
        kauri_traffic::model::Operations::Kauri
    } else {
        kauri_traffic::model::Operations::Samba
    };
    let model =
        kauri_traffic::learn::learn_with(&summaries, operations).context("learning the model")?;
    let json = model.to_json().context("writing the model")?;
    match &a.output {
        Some(p) => std::fs::write(p, json).with_context(|| format!("writing {}", p.display()))?,
        None => std::io::stdout().lock().write_all(json.as_bytes())?,
    }
    Ok(())
}

fn report(a: &ReportArgs) -> Result<()> {
    let mut runs = Vec::with_capacity(a.runs.len());
    for p in &a.runs {
        let text =
            std::fs::read_to_string(p).with_context(|| format!("reading {}", p.display()))?;
        let run: RunReport = serde_json::from_str(&text).with_context(|| {
            format!(
                "{} is not a replay run (kauri traffic replay -o)",
                p.display()
            )
        })?;
        runs.push(run);
    }
    let (width, height) = match &a.size {
        Some(s) => {
            let (w, h) = s
                .split_once(['x', 'X'])
                .with_context(|| format!("--size {s:?}: give WIDTHxHEIGHT"))?;
            let w: u32 = w.trim().parse().with_context(|| format!("--size {s:?}"))?;
            let h: u32 = h.trim().parse().with_context(|| format!("--size {s:?}"))?;
            if !(200..=10_000).contains(&w) || !(200..=10_000).contains(&h) {
                bail!("--size {s:?}: each side between 200 and 10000 pixels");
            }
            (w, h)
        }
        None => kauri_traffic::report::suggested_size(&runs),
    };
    if let Some(p) = &a.output {
        kauri_traffic::report::png(&runs, p, width, height)
            .with_context(|| format!("drawing {}", p.display()))?;
    }
    if let Some(p) = &a.svg {
        let svg = kauri_traffic::report::svg(&runs).context("drawing the chart")?;
        std::fs::write(p, svg).with_context(|| format!("writing {}", p.display()))?;
    }
    if let Some(p) = &a.html {
        let html = kauri_traffic::report::html(&runs).context("writing the page")?;
        std::fs::write(p, html).with_context(|| format!("writing {}", p.display()))?;
    }
    if a.json {
        println!("{}", serde_json::to_string_pretty(&runs)?);
    } else {
        print!("{}", kauri_traffic::report::table(&runs));
    }
    Ok(())
}
