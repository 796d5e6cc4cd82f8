//! `kauri ldif export` and `kauri ldif import`: LDIF (RFC 2849) out of and into a data
//! folder or a server, streamed, with a progress bar.
//!
//! Export from a data folder reads one snapshot and walks the hierarchy, parents before
//! children; from a server it pages through searches and holds back an entry until its
//! parent is written. Secrets are never written. `--writable-only` keeps only what an
//! administrator may write on an add and writes change records: the entries first, then
//! their links (`member`, `manager`, …) as modifies, so an import into another domain
//! finds every entry a link names.
//!
//! Import applies records in batches: in one transaction per batch on a data folder, each
//! record in a nested transaction of its own; pipelined over LDAP.

use std::collections::{HashMap, HashSet};
use std::io::{BufRead, BufReader, BufWriter, Read, Write};
use std::ops::ControlFlow;
use std::path::{Path, PathBuf};

use anyhow::{bail, Context, Result};
use kauri_db::{Dn, Filter, Modification, ModifyOp, Scope, SearchRequest};
use kauri_domain::directory::{is_secret, writable_on_add};
use kauri_domain::schema::Schema;
use serde_json::json;

use crate::admin::target::{self, Op, OpResult, TargetArgs};
use crate::ldif_read::{LdifReader, ModOp, Record};

/// What to export and where.
#[derive(Debug, Clone, clap::Args)]
pub struct ExportOptions {
    #[command(flatten)]
    pub target: TargetArgs,
    /// Only this subtree (every naming context when absent).
    #[arg(long)]
    pub base: Option<String>,
    /// Only the entries matching this filter (all when absent).
    #[arg(long)]
    pub filter: Option<String>,
    /// Only what an administrator may write, as change records: entries, then links.
    #[arg(long)]
    pub writable_only: bool,
    /// Write to this file instead of standard output.
    #[arg(long, short = 'o')]
    pub output: Option<PathBuf>,
}

/// What to import.
#[derive(Debug, Clone, clap::Args)]
pub struct ImportOptions {
    /// The LDIF file ("-" for standard input).
    pub file: PathBuf,
    #[command(flatten)]
    pub target: TargetArgs,
    /// Go on after a record is refused (and report every refusal).
    #[arg(short = 'c', long)]
    pub continue_on_error: bool,
    /// Records per transaction (data folder) or per pipeline (server).
    #[arg(long, default_value_t = 1000)]
    pub batch: usize,
    /// Print the result as JSON.
    #[arg(long)]
    pub json: bool,
}

/// Whether a DN value names a tombstone (its RDN value carries AD's `\nDEL:` mark).
fn names_tombstone(value: &[u8]) -> bool {
    std::str::from_utf8(value)
        .ok()
        .and_then(|t| kauri_db::Dn::parse(t).ok())
        .and_then(|dn| dn.rdn().cloned())
        .is_some_and(|rdn| rdn.avas().iter().any(|a| a.value.contains("\nDEL:")))
}

fn is_url(t: &TargetArgs) -> bool {
    t.url.contains("://")
}

fn sink(output: Option<&Path>) -> Result<BufWriter<Box<dyn Write>>> {
    let w: Box<dyn Write> = match output {
        Some(path) => Box::new(
            std::fs::File::create(path).with_context(|| format!("creating {}", path.display()))?,
        ),
        None => Box::new(std::io::stdout().lock()),
    };
    Ok(BufWriter::with_capacity(1 << 20, w))
}

fn entries_bar(show: bool, total: u64) -> indicatif::ProgressBar {
    if !show {
        return indicatif::ProgressBar::hidden();
    }
    let b = indicatif::ProgressBar::new(total);
    b.set_style(
        indicatif::ProgressStyle::with_template(
            "export [{bar:40}] {pos}/{len} entries ({per_sec})",
        )
        .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar()),
    );
    b
}

/// Writes entries as LDIF: content records, or (writable only) add records now and the
/// entries' links as modify records at the end.
struct Writer<'s> {
    out: BufWriter<Box<dyn Write>>,
    writable: Option<&'s Schema>,
    links: Vec<(String, String, Vec<Vec<u8>>)>,
    written: u64,
}

impl Writer<'_> {
    fn entry(&mut self, dn: &str, attrs: Vec<(String, Vec<Vec<u8>>)>) -> Result<()> {
        let Some(schema) = self.writable else {
            let attrs: Vec<_> = attrs.into_iter().filter(|(n, _)| !is_secret(n)).collect();
            crate::ldif::write_entry(&mut self.out, dn, &attrs)?;
            self.written += 1;
            return Ok(());
        };
        if attrs.iter().any(|(n, v)| {
            n.eq_ignore_ascii_case("isDeleted") && v.iter().any(|x| x.eq_ignore_ascii_case(b"TRUE"))
        }) {
            return Ok(());
        }
        let mut kept = vec![("changetype".to_string(), vec![b"add".to_vec()])];
        for (name, values) in attrs {
            if values.is_empty() || !writable_on_add(schema, &name) {
                continue;
            }
            let forward_link = schema
                .attribute(&name)
                .is_some_and(|d| d.link_id.is_some_and(|l| l % 2 == 0) || d.is_reference());
            if forward_link {
                // A reference to a deleted object names its tombstone, which is not exported.
                let values: Vec<Vec<u8>> =
                    values.into_iter().filter(|v| !names_tombstone(v)).collect();
                if !values.is_empty() {
                    self.links.push((dn.to_string(), name, values));
                }
            } else {
                kept.push((name, values));
            }
        }
        crate::ldif::write_entry(&mut self.out, dn, &kept)?;
        self.written += 1;
        Ok(())
    }

    fn finish(mut self) -> Result<u64> {
        for (dn, attr, values) in std::mem::take(&mut self.links) {
            crate::ldif::write_attr(&mut self.out, "dn", dn.as_bytes())?;
            crate::ldif::write_attr(&mut self.out, "changetype", b"modify")?;
            crate::ldif::write_attr(&mut self.out, "add", attr.as_bytes())?;
            for v in &values {
                crate::ldif::write_attr(&mut self.out, &attr, v)?;
            }
            self.out.write_all(b"-\n\n")?;
        }
        self.out.flush()?;
        Ok(self.written)
    }
}

/// `kauri ldif export`; returns the number of entries written.
pub fn export(o: &ExportOptions) -> Result<u64> {
    if is_url(&o.target) {
        return export_remote(o);
    }
    let data = PathBuf::from(&o.target.url);
    let (db, schema) = if o.writable_only {
        if !crate::domain::is_domain(&data) {
            bail!(
                "--writable-only needs a domain's data folder (its schema says what is writable)"
            );
        }
        let dir = crate::domain::open_domain_directory(&data, false)?;
        (dir.db().clone(), Some(dir.schema()))
    } else {
        (
            std::sync::Arc::new(crate::dbcmd::open_existing(&data)?),
            None,
        )
    };
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
    let bar = entries_bar(o.output.is_some(), r.record_count()?);
    let mut w = Writer {
        out: sink(o.output.as_deref())?,
        writable: schema.as_ref().map(|s| &s.schema),
        links: Vec::new(),
        written: 0,
    };
    let mut write = |id: u64| -> Result<()> {
        let Some(entry) = r.entry_by_id(id)? else {
            return Ok(());
        };
        w.entry(&entry.dn.to_string(), entry.attrs)?;
        bar.inc(1);
        Ok(())
    };
    for base in bases {
        let Some(root) = r.lookup(&base)?.filter(|id| *id != 0) else {
            bail!("no entry {base}");
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
    w.finish()
}

/// A DN's normalized form, for matching parents and children.
fn norm(dn: &str) -> String {
    Dn::parse(dn)
        .map(|d| d.norm().to_string())
        .unwrap_or_else(|_| dn.to_ascii_lowercase())
}

/// Export from a server: paged searches; an entry whose parent is in the export but not
/// yet written waits for it.
fn export_remote(o: &ExportOptions) -> Result<u64> {
    if o.writable_only {
        bail!("--writable-only reads the schema of a data folder; export from the folder, or without it");
    }
    let mut t = target::open(&o.target)?;
    let bases = match &o.base {
        Some(b) => vec![b.clone()],
        None => {
            let dse = t.read("", &["namingContexts"])?.context("no root DSE")?;
            dse.texts("namingContexts")
        }
    };
    let filter = o.filter.clone().unwrap_or_else(|| "(objectClass=*)".into());
    let bar = entries_bar(o.output.is_some(), 0);
    let mut w = Writer {
        out: sink(o.output.as_deref())?,
        writable: None,
        links: Vec::new(),
        written: 0,
    };
    for base in bases {
        let base_norm = norm(&base);
        let mut written: HashSet<String> = HashSet::new();
        let mut waiting: HashMap<String, Vec<crate::admin::target::Found>> = HashMap::new();
        t.search(&base, target::Scope::Sub, &filter, &["*"], &mut |f| {
            let me = norm(&f.dn);
            let parent = me
                .split_once(',')
                .map(|(_, p)| p.to_string())
                .unwrap_or_default();
            let ready = me == base_norm || written.contains(&parent) || o.filter.is_some();
            if !ready {
                waiting.entry(parent).or_default().push(f);
                return Ok(());
            }
            // Write it, then everything that waited for it (and for those, …).
            let mut queue = vec![(me, f)];
            while let Some((key, entry)) = queue.pop() {
                w.entry(&entry.dn, entry.attrs)?;
                bar.inc(1);
                if let Some(children) = waiting.remove(&key) {
                    queue.extend(children.into_iter().map(|c| (norm(&c.dn), c)));
                }
                written.insert(key);
            }
            Ok(())
        })?;
        // What never met its parent (a parent the filter or the server hid) goes last.
        for (_, rest) in waiting {
            for entry in rest {
                w.entry(&entry.dn, entry.attrs)?;
            }
        }
    }
    bar.finish_and_clear();
    w.finish()
}

/// Where the export went, for the message after it.
pub fn describe(output: Option<&Path>) -> String {
    output.map_or_else(|| "standard output".into(), |p| p.display().to_string())
}

/// Counts bytes read, for the progress bar.
struct Counted<R> {
    inner: R,
    read: std::rc::Rc<std::cell::Cell<u64>>,
}

impl<R: Read> Read for Counted<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = self.inner.read(buf)?;
        self.read.set(self.read.get() + n as u64);
        Ok(n)
    }
}

/// A record as a change for the target.
fn to_op(record: Record) -> Result<Op> {
    Ok(match record {
        Record::Content { dn, attrs, .. } | Record::Add { dn, attrs, .. } => Op::Add { dn, attrs },
        Record::Delete { dn, controls } => Op::Delete {
            dn,
            tree: controls
                .iter()
                .any(|c| c.oid == kauri_ldap_proto::controls::TREE_DELETE),
        },
        Record::Modify { dn, mods, .. } => Op::Modify {
            dn,
            mods: mods
                .into_iter()
                .map(|m| Modification {
                    op: match m.op {
                        ModOp::Add => ModifyOp::Add,
                        ModOp::Delete => ModifyOp::Delete,
                        ModOp::Replace => ModifyOp::Replace,
                        ModOp::Increment => ModifyOp::Increment,
                    },
                    attr: m.attr,
                    values: m.values,
                })
                .collect(),
        },
        Record::ModDn {
            dn,
            new_rdn,
            delete_old_rdn,
            new_superior,
            ..
        } => Op::Rename {
            dn,
            new_rdn,
            delete_old_rdn,
            new_parent: new_superior,
        },
    })
}

/// Splits an operation that writes more values than a server takes at once (its limit on
/// linked values per operation: a group of 100,000 members is one LDIF record) into an
/// operation within the limit and modifies that add the rest, in order. The parts are
/// applied one after the other, not as one.
fn split_large(op: Op, chunk: usize) -> Vec<Op> {
    let chunk = chunk.max(1);
    match op {
        Op::Add { dn, mut attrs } => {
            let total: usize = attrs.iter().map(|(_, v)| v.len()).sum();
            if total <= chunk {
                return vec![Op::Add { dn, attrs }];
            }
            // The small attributes go whole into the add; the large ones as far as room is
            // left, and the rest of their values after.
            let mut order: Vec<usize> = (0..attrs.len()).collect();
            order.sort_by_key(|&i| attrs.get(i).map_or(0, |(_, v)| v.len()));
            let mut room = chunk;
            let mut rest: Vec<(String, Vec<Vec<u8>>)> = Vec::new();
            for i in order {
                let Some((name, values)) = attrs.get_mut(i) else {
                    continue;
                };
                let keep = values.len().min(room.max(1));
                room = room.saturating_sub(keep);
                if keep < values.len() {
                    rest.push((name.clone(), values.split_off(keep)));
                }
            }
            let mut out = vec![Op::Add {
                dn: dn.clone(),
                attrs,
            }];
            for (name, values) in rest {
                for part in values.chunks(chunk) {
                    out.push(Op::Modify {
                        dn: dn.clone(),
                        mods: vec![Modification {
                            op: ModifyOp::Add,
                            attr: name.clone(),
                            values: part.to_vec(),
                        }],
                    });
                }
            }
            out
        }
        Op::Modify { dn, mods } => {
            let total: usize = mods.iter().map(|m| m.values.len()).sum();
            if total <= chunk {
                return vec![Op::Modify { dn, mods }];
            }
            let mut out = Vec::new();
            let mut current: Vec<Modification> = Vec::new();
            let mut room = chunk;
            for m in mods {
                let mut values = m.values;
                let mut op = m.op;
                loop {
                    if room == 0 {
                        out.push(std::mem::take(&mut current));
                        room = chunk;
                    }
                    let take = values.len().min(room);
                    let tail = values.split_off(take);
                    room -= take;
                    current.push(Modification {
                        op,
                        attr: m.attr.clone(),
                        values,
                    });
                    if tail.is_empty() {
                        break;
                    }
                    values = tail;
                    // What a replace leaves out is added after it.
                    if op == ModifyOp::Replace {
                        op = ModifyOp::Add;
                    }
                }
            }
            if !current.is_empty() {
                out.push(current);
            }
            out.into_iter()
                .map(|mods| Op::Modify {
                    dn: dn.clone(),
                    mods,
                })
                .collect()
        }
        other => vec![other],
    }
}

/// A record read and not yet applied: its line, its DN and the operations it became.
type Pending = (usize, String, Vec<Op>);

/// Applies a batch of records, each split into one or more operations; returns each
/// record's outcome (`None` when it was not tried). Without `continue_on_error` the batch
/// stops at the first failure. With it, every record is tried, but the parts of a split
/// record stop at their first failure: the rest of a record whose add failed is not applied
/// to whatever object may be there.
fn apply_records(
    t: &mut dyn target::Target,
    batch: Vec<Pending>,
    continue_on_error: bool,
) -> Result<Vec<(usize, String, Option<OpResult>)>> {
    let mut out: Vec<(usize, String, Option<OpResult>)> = Vec::with_capacity(batch.len());
    // Runs of records, each run applied with one call: (records, stop at the first error).
    let mut runs: Vec<(Vec<Pending>, bool)> = Vec::new();
    for record in batch {
        let split = record.2.len() > 1;
        let stop_at_error = !continue_on_error || split;
        match runs.last_mut() {
            Some((run, stop)) if *stop == stop_at_error && !(continue_on_error && split) => {
                run.push(record)
            }
            _ => runs.push((vec![record], stop_at_error)),
        }
    }
    let mut stopped = false;
    for (run, stop_at_error) in runs {
        if stopped {
            out.extend(run.into_iter().map(|(line, dn, _)| (line, dn, None)));
            continue;
        }
        let mut shape = Vec::with_capacity(run.len());
        let mut ops = Vec::new();
        for (line, dn, parts) in run {
            shape.push((line, dn, parts.len()));
            ops.extend(parts);
        }
        let mut results = t.apply_batch(ops, stop_at_error)?.into_iter();
        for (line, dn, parts) in shape {
            // A record split into several operations succeeds when they all do.
            let mut r: Option<OpResult> = None;
            for part in results.by_ref().take(parts) {
                r = match r {
                    None | Some(Ok(())) => Some(part),
                    failed => failed,
                };
            }
            if r.as_ref().is_some_and(|r| r.is_err()) && !continue_on_error {
                stopped = true;
            }
            out.push((line, dn, r));
        }
    }
    Ok(out)
}

/// `kauri ldif import`.
pub fn import(o: &ImportOptions) -> Result<()> {
    let started = std::time::Instant::now();
    let (input, size): (Box<dyn Read>, u64) = if o.file.as_os_str() == "-" {
        (Box::new(std::io::stdin().lock()), 0)
    } else {
        let f = std::fs::File::open(&o.file)
            .with_context(|| format!("opening {}", o.file.display()))?;
        let size = f.metadata().map(|m| m.len()).unwrap_or(0);
        (Box::new(f), size)
    };
    let read = std::rc::Rc::new(std::cell::Cell::new(0u64));
    let reader: Box<dyn BufRead> = Box::new(BufReader::with_capacity(
        1 << 20,
        Counted {
            inner: input,
            read: read.clone(),
        },
    ));
    let mut records = LdifReader::new(reader);
    let mut t = target::open(&o.target)?;
    let bar = if o.json || size == 0 {
        indicatif::ProgressBar::hidden()
    } else {
        let b = indicatif::ProgressBar::new(size);
        b.set_style(
            indicatif::ProgressStyle::with_template(
                "import [{bar:40}] {bytes}/{total_bytes} ({msg}, eta {eta})",
            )
            .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar()),
        );
        b
    };
    let (mut applied, mut refused) = (0u64, 0u64);
    let mut failures: Vec<serde_json::Value> = Vec::new();
    let mut stop = false;
    while !stop {
        // Per record: its line, its DN, and the operations it became.
        let mut batch: Vec<Pending> = Vec::with_capacity(o.batch.max(1));
        for _ in 0..o.batch.max(1) {
            match records.next() {
                None => {
                    stop = true;
                    break;
                }
                Some(record) => {
                    let record = record.context("reading the LDIF")?;
                    let op = to_op(record)?;
                    let dn = match &op {
                        Op::Add { dn, .. }
                        | Op::Modify { dn, .. }
                        | Op::Delete { dn, .. }
                        | Op::Rename { dn, .. } => dn.clone(),
                    };
                    let parts = split_large(op, kauri_db::config::MAX_LINK_CHANGES);
                    batch.push((records.last_record_line(), dn, parts));
                }
            }
        }
        if batch.is_empty() {
            break;
        }
        let outcomes = apply_records(t.as_mut(), batch, o.continue_on_error)?;
        for (line, dn, outcome) in &outcomes {
            // Not tried: the import stopped at an earlier failure.
            let Some(r) = outcome else { break };
            match r {
                Ok(()) => applied += 1,
                Err(e) => {
                    refused += 1;
                    let message = format!("{e:#}");
                    if !o.json {
                        bar.suspend(|| eprintln!("line {line}: {dn}: {message}"));
                    }
                    failures.push(json!({"line": line, "dn": dn, "error": message}));
                    if !o.continue_on_error {
                        stop = true;
                    }
                }
            }
        }
        bar.set_position(read.get());
        bar.set_message(format!("{applied} records"));
    }
    bar.finish_and_clear();
    let seconds = started.elapsed().as_secs_f64();
    if o.json {
        crate::admin::output::print_json(&json!({
            "applied": applied,
            "refused": refused,
            "failures": failures,
            "seconds": seconds,
        }));
    } else {
        println!(
            "imported {applied} records{} in {seconds:.2} s",
            if refused > 0 {
                format!(", {refused} refused")
            } else {
                String::new()
            }
        );
    }
    if refused > 0 {
        bail!(
            "{refused} record(s) refused{}",
            if o.continue_on_error {
                ""
            } else {
                "; the import stopped at the first (records before it are in, none after)"
            }
        );
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn values(n: usize, prefix: &str) -> Vec<Vec<u8>> {
        (0..n)
            .map(|i| format!("{prefix}{i}").into_bytes())
            .collect()
    }

    #[test]
    fn large_records_are_split_in_order() {
        let op = Op::Add {
            dn: "CN=G".into(),
            attrs: vec![
                ("member".into(), values(25, "m")),
                ("objectClass".into(), values(2, "c")),
                ("cn".into(), values(1, "G")),
            ],
        };
        let parts = split_large(op, 10);
        assert_eq!(parts.len(), 3);
        let mut members = Vec::new();
        match &parts[0] {
            Op::Add { attrs, .. } => {
                // The small attributes whole, the member list as far as room is left.
                assert_eq!(attrs[1].1.len(), 2);
                assert_eq!(attrs[2].1.len(), 1);
                assert_eq!(attrs[0].1.len(), 7);
                members.extend(attrs[0].1.clone());
            }
            other => panic!("{other:?}"),
        }
        for p in &parts[1..] {
            let Op::Modify { mods, .. } = p else {
                panic!("{p:?}")
            };
            assert_eq!(mods.len(), 1);
            assert_eq!(mods[0].op, ModifyOp::Add);
            assert!(mods[0].values.len() <= 10);
            members.extend(mods[0].values.clone());
        }
        assert_eq!(members, values(25, "m"));

        // A replace keeps its meaning: the first part replaces, the rest adds.
        let op = Op::Modify {
            dn: "CN=G".into(),
            mods: vec![
                Modification {
                    op: ModifyOp::Replace,
                    attr: "member".into(),
                    values: values(12, "m"),
                },
                Modification {
                    op: ModifyOp::Delete,
                    attr: "description".into(),
                    values: Vec::new(),
                },
            ],
        };
        let parts = split_large(op, 5);
        let flat: Vec<(ModifyOp, String, usize)> = parts
            .iter()
            .flat_map(|p| match p {
                Op::Modify { mods, .. } => mods
                    .iter()
                    .map(|m| (m.op, m.attr.clone(), m.values.len()))
                    .collect::<Vec<_>>(),
                other => panic!("{other:?}"),
            })
            .collect();
        assert_eq!(
            flat,
            vec![
                (ModifyOp::Replace, "member".into(), 5),
                (ModifyOp::Add, "member".into(), 5),
                (ModifyOp::Add, "member".into(), 2),
                (ModifyOp::Delete, "description".into(), 0),
            ]
        );
        // Small operations are left alone.
        let small = Op::Delete {
            dn: "CN=G".into(),
            tree: false,
        };
        assert_eq!(split_large(small, 5).len(), 1);
    }
}
