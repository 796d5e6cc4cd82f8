//! `kauri traffic populate --local DATA`: the plan goes straight into a stopped domain's
//! data folder through [`kauri_domain::directory::bulk`], which validates and completes
//! every entry as an LDAP add does (schema, SIDs from the RID pool, unique names, UPNs and
//! SPNs, link targets, nesting, descriptors, passwords) and loads them in one pass whose
//! index keys are written sorted at the end.
//!
//! Two threads pass the entries along: one builds, validates and completes them, the other
//! stores them. The known passwords of the first users are hashed on every core before the
//! load (the Kerberos keys are the expensive part of a password), any others batch by
//! batch ahead of their validation. Entries go parents first, users before the groups that
//! hold them, nested groups before the groups they are nested in, so every link names an
//! entry validated before it.

use std::path::Path;
use std::sync::mpsc;
use std::time::Instant;

use anyhow::{bail, Context, Result};
use kauri_db::bulk::{BulkLoader, Placed};
use kauri_db::{Dn, Entry, Modification, ModifyOp};
use kauri_domain::directory::bulk::BulkAdd;
use kauri_domain::directory::{Caller, Change, DirError, Directory, Request};
use kauri_kv::lmdb::LmdbBackend;

use super::generate::Plan;
use super::manifest::Manifest;
use super::report::{progress, Counts, Step, Summary, REFUSALS_QUOTED};
use super::PopulateArgs;
use crate::admin::target::Attrs;

/// Entries per committed chunk of the bulk load.
const CHUNK: usize = 50_000;
/// Memory for sorting the load's index keys (about 200 bytes a user).
const SORT_BUDGET: usize = 1 << 30;
/// Entries the building thread hands over at a time, at most (a twentieth of a small
/// load, so the two threads work at once from the start).
const BATCH: usize = 1_000;
/// Users whose passwords are hashed before the load starts (the directory keeps up to
/// 4,096 prepared passwords).
const PREPARED_AHEAD: usize = 4_000;
/// Members added to an existing group per change.
const MEMBERS_PER_CHANGE: usize = 5_000;

/// The kinds of object, in the order they are loaded.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Ou,
    User,
    Computer,
    Group,
    Dns,
}

/// Which planned objects the folder holds already.
struct Present {
    ous: Vec<bool>,
    users: Vec<bool>,
    computers: Vec<bool>,
    groups: Vec<bool>,
    dns: Vec<bool>,
}

impl Present {
    fn of(&self, kind: Kind) -> &[bool] {
        match kind {
            Kind::Ou => &self.ous,
            Kind::User => &self.users,
            Kind::Computer => &self.computers,
            Kind::Group => &self.groups,
            Kind::Dns => &self.dns,
        }
    }

    fn count(&self, kind: Kind) -> u64 {
        self.of(kind).iter().filter(|p| **p).count() as u64
    }
}

/// One object to load: its kind, its index and the entry.
type Item = (Kind, usize, Entry);

/// One object validated: its kind and index, and the entry to store or the reason it was
/// refused.
type Checked = ((Kind, usize), Result<Placed, DirError>);

/// Refuses a folder another process has open (a running server would serve a database
/// whose index keys are missing until the load ends).
fn ensure_stopped(data: &Path) -> Result<()> {
    if LmdbBackend::open_elsewhere(&data.join("db"))? {
        bail!(
            "{} is in use by another process (a running server?); stop it first, or \
             populate the server with --server",
            data.display()
        );
    }
    Ok(())
}

fn entry(dn: &str, attrs: Attrs) -> Result<Entry> {
    let mut e = Entry::new(Dn::parse(dn).map_err(|e| anyhow::anyhow!("generated DN {dn}: {e}"))?);
    e.attrs = attrs;
    Ok(e)
}

/// Whether the folder holds each planned object: looked up one by one for a kind whose
/// first object (in load order) is there, assumed absent otherwise (a load cut short
/// leaves a prefix of the order; an object there anyway is refused as existing and
/// counted as present).
fn present(dir: &Directory<LmdbBackend>, plan: &Plan, dns: bool) -> Result<Present> {
    let r = dir.db().read()?;
    let exists = |dn: &str| -> Result<bool> {
        let dn = Dn::parse(dn).map_err(|e| anyhow::anyhow!("generated DN {dn}: {e}"))?;
        Ok(r.lookup(&dn)?.is_some_and(|id| id != 0))
    };
    let scan = |n: usize, first: usize, dn_of: &dyn Fn(usize) -> String| -> Result<Vec<bool>> {
        if n == 0 || !exists(&dn_of(first))? {
            return Ok(vec![false; n]);
        }
        (0..n).map(|i| exists(&dn_of(i))).collect()
    };
    let shape = plan.shape;
    let ous: Vec<String> = plan.ous().iter().map(|o| o.dn.clone()).collect();
    let dn_at = |list: &dyn Fn(usize) -> Option<String>, i: usize| list(i).unwrap_or_default();
    let user = |i: usize| plan.user_dn(i).map(str::to_string);
    let computer = |i: usize| plan.computer_dn(i).map(str::to_string);
    let group = |i: usize| plan.group_dn(i).map(str::to_string);
    let dns_node = |i: usize| plan.dns_node(&plan.computer(i)).0;
    Ok(Present {
        ous: scan(ous.len(), 0, &|i| ous.get(i).cloned().unwrap_or_default())?,
        users: scan(shape.users, 0, &|i| dn_at(&user, i))?,
        computers: scan(shape.computers, 0, &|i| dn_at(&computer, i))?,
        groups: scan(shape.groups, shape.groups.saturating_sub(1), &|i| {
            dn_at(&group, i)
        })?,
        dns: if dns {
            scan(shape.computers, 0, &dns_node)?
        } else {
            Vec::new()
        },
    })
}

/// Builds every object not present yet, in load order, handing them over in batches
/// (`sink` empties the batch, which is then filled again); hashes the known passwords of
/// each batch before handing it over.
fn build(
    dir: &Directory<LmdbBackend>,
    plan: &Plan,
    present: &Present,
    password: &str,
    prepared_below: usize,
    mut sink: impl FnMut(&mut Vec<Item>) -> Result<bool>,
) -> Result<()> {
    let size = (plan.shape.users + plan.shape.computers * 2 + plan.shape.groups)
        .div_ceil(20)
        .clamp(16, BATCH);
    let mut batch: Vec<Item> = Vec::with_capacity(size);
    let mut passwords = Vec::new();
    let mut flush = |batch: &mut Vec<Item>, passwords: &mut Vec<_>| -> Result<bool> {
        dir.prepare_passwords(passwords);
        passwords.clear();
        sink(batch)
    };
    let push = |kind: Kind, i: usize, e: Entry, batch: &mut Vec<Item>| {
        batch.push((kind, i, e));
    };
    let missing = |kind: Kind, i: usize| !present.of(kind).get(i).copied().unwrap_or(false);
    for (i, ou) in plan.ous().iter().enumerate() {
        if missing(Kind::Ou, i) {
            push(Kind::Ou, i, entry(&ou.dn, plan.ou_attrs(ou))?, &mut batch);
        }
    }
    for i in 0..plan.shape.users {
        if !missing(Kind::User, i) {
            continue;
        }
        let u = plan.user(i);
        let has_password = u.password;
        let (dn, attrs) = plan.user_entry(u, password, true);
        let e = entry(&dn, attrs)?;
        if has_password && i >= prepared_below {
            passwords.extend(dir.passwords_to_prepare(&Change::Add(e.clone())));
        }
        push(Kind::User, i, e, &mut batch);
        if batch.len() >= size && !flush(&mut batch, &mut passwords)? {
            return Ok(());
        }
    }
    for c in 0..plan.shape.computers {
        if missing(Kind::Computer, c) {
            let (dn, attrs) = plan.computer_entry(plan.computer(c));
            push(Kind::Computer, c, entry(&dn, attrs)?, &mut batch);
            if batch.len() >= size && !flush(&mut batch, &mut passwords)? {
                return Ok(());
            }
        }
    }
    // Nested groups have higher numbers than the groups they are in: last first.
    for g in (0..plan.shape.groups).rev() {
        if !missing(Kind::Group, g) {
            continue;
        }
        let (dn, mut attrs) = plan.group_entry(plan.group(g));
        let members: Vec<Vec<u8>> = plan
            .members(g)
            .into_iter()
            .filter_map(|m| plan.member_dn(m).map(|d| d.as_bytes().to_vec()))
            .collect();
        if !members.is_empty() {
            attrs.push(("member".to_string(), members));
        }
        push(Kind::Group, g, entry(&dn, attrs)?, &mut batch);
        if batch.len() >= size && !flush(&mut batch, &mut passwords)? {
            return Ok(());
        }
    }
    for c in 0..present.dns.len() {
        if missing(Kind::Dns, c) {
            let (dn, attrs) = plan.dns_node(&plan.computer(c));
            push(Kind::Dns, c, entry(&dn, attrs)?, &mut batch);
            if batch.len() >= size && !flush(&mut batch, &mut passwords)? {
                return Ok(());
            }
        }
    }
    if !batch.is_empty() {
        flush(&mut batch, &mut passwords)?;
    }
    Ok(())
}

/// Hashes the known password of the first users to be made ahead, on every core (as many
/// as the directory keeps prepared); returns the index of the first user not done.
fn prepare_passwords(
    dir: &Directory<LmdbBackend>,
    plan: &Plan,
    present: &Present,
    password: &str,
) -> Result<usize> {
    let upto = plan.password_users.min(PREPARED_AHEAD);
    let mut todo = Vec::new();
    for i in 0..upto {
        if present.users.get(i).copied().unwrap_or(false) {
            continue;
        }
        let (dn, attrs) = plan.user_entry(plan.user(i), password, false);
        let e = entry(&dn, attrs)?;
        todo.extend(dir.passwords_to_prepare(&Change::Add(e)));
    }
    let threads = std::thread::available_parallelism().map_or(2, |n| n.get());
    let per = todo.len().div_ceil(threads).max(1);
    std::thread::scope(|s| {
        for part in todo.chunks(per) {
            s.spawn(move || dir.prepare_passwords(part));
        }
    });
    Ok(upto)
}

/// What a load did.
#[derive(Default)]
struct Loaded {
    created: Counts,
    present: Counts,
    refused: u64,
    refusals: Vec<String>,
}

impl Loaded {
    fn count(counts: &mut Counts, kind: Kind) {
        match kind {
            Kind::Ou => counts.ous += 1,
            Kind::User => counts.users += 1,
            Kind::Computer => counts.computers += 1,
            Kind::Group => counts.groups += 1,
            Kind::Dns => counts.dns_records += 1,
        }
    }

    fn refuse(&mut self, what: String) {
        self.refused += 1;
        if self.refusals.len() < REFUSALS_QUOTED {
            self.refusals.push(what);
        }
    }
}

/// Builds, validates and stores every object not present yet: this thread stores, a
/// second one builds and validates (in order, each entry seeing the ones before it). The
/// batch buffers go back to the second thread empty, to be filled again.
#[allow(clippy::too_many_arguments)]
fn load(
    bulk: &mut BulkAdd<LmdbBackend>,
    loader: &mut BulkLoader<'_, LmdbBackend>,
    plan: &Plan,
    present: &Present,
    password: &str,
    prepared_below: usize,
    bar: &indicatif::ProgressBar,
    mut done: Loaded,
) -> Result<Loaded> {
    let validator = bulk.directory();
    let (to_store, checked) = mpsc::sync_channel::<Vec<Checked>>(4);
    let (to_free, freed) = mpsc::channel::<Vec<Checked>>();
    std::thread::scope(|s| {
        let checker = s.spawn(move || -> Result<()> {
            // Buffers come back empty from the storing thread, to be filled again: no
            // large allocation in the steady state.
            let mut buffers: Vec<Vec<Checked>> = Vec::new();
            build(
                &validator,
                plan,
                present,
                password,
                prepared_below,
                |batch| {
                    while let Ok(spent) = freed.try_recv() {
                        buffers.push(spent);
                    }
                    let mut out = buffers
                        .pop()
                        .unwrap_or_else(|| Vec::with_capacity(batch.len()));
                    bulk.add_tagged(batch.drain(..).map(|(kind, i, e)| ((kind, i), e)), &mut out)?;
                    Ok(to_store.send(out).is_ok())
                },
            )
        });
        let stored = (|| -> Result<()> {
            for mut batch in checked {
                for ((kind, i), r) in batch.drain(..) {
                    match r {
                        Ok(placed) => {
                            loader.add_placed(placed)?;
                            Loaded::count(&mut done.created, kind);
                            if kind == Kind::Group {
                                done.created.memberships += plan.members(i).len() as u64;
                            }
                        }
                        Err(DirError::EntryAlreadyExists(_)) => {
                            Loaded::count(&mut done.present, kind)
                        }
                        Err(e) => done.refuse(format!("{}: {e}", dn_of(plan, kind, i))),
                    }
                    bar.inc(1);
                }
                // Back to the thread that fills them, while it runs.
                let _ = to_free.send(batch);
            }
            Ok(())
        })();
        let checked = checker
            .join()
            .map_err(|_| anyhow::anyhow!("the thread validating entries failed"))?;
        stored.and(checked)
    })?;
    Ok(done)
}

/// The DN of planned object `i` of `kind`.
fn dn_of(plan: &Plan, kind: Kind, i: usize) -> String {
    match kind {
        Kind::Ou => plan.ous().get(i).map(|o| o.dn.clone()),
        Kind::User => plan.user_dn(i).map(str::to_string),
        Kind::Computer => plan.computer_dn(i).map(str::to_string),
        Kind::Group => plan.group_dn(i).map(str::to_string),
        Kind::Dns => Some(plan.dns_node(&plan.computer(i)).0),
    }
    .unwrap_or_default()
}

/// Runs `kauri traffic populate --local DATA`.
pub fn run(args: &PopulateArgs, data: &Path) -> Result<Summary> {
    let started = Instant::now();
    let mut steps = Vec::new();
    let mut step = |name: &str, since: &mut Instant| {
        steps.push(Step {
            name: name.to_string(),
            seconds: since.elapsed().as_secs_f64(),
        });
        *since = Instant::now();
    };
    let mut since = Instant::now();
    if !crate::domain::is_domain(data) {
        bail!(
            "{} is not a domain's data folder (no domain.json)",
            data.display()
        );
    }
    ensure_stopped(data)?;
    let (dir, names, caller) = crate::admin::local::open_as_administrator(data)?;
    let plan = Plan::new(args.shape(), args.seed, names, args.password_users);
    let dns = !args.no_dns && {
        let r = dir.db().read()?;
        let zone = Dn::parse(plan.zone_dn()).map_err(|e| anyhow::anyhow!("zone DN: {e}"))?;
        r.lookup(&zone)?.is_some()
    };
    let present = present(&dir, &plan, dns)?;
    step("plan", &mut since);

    // The load holds the folder alone: a group's members go in with it, however many
    // (the limit per change keeps one client from holding a server's writer), and its
    // index keys are sorted in memory in one go.
    let mut cfg = (*dir.db().config()).clone();
    let (link_limit, sort_budget) = (cfg.max_link_changes, cfg.sort_budget);
    cfg.max_link_changes = 0;
    cfg.sort_budget = cfg.sort_budget.max(SORT_BUDGET);
    dir.db().replace_config_stored(cfg.clone())?;

    let missing = |kind: Kind, n: usize| n as u64 - present.count(kind);
    let principals = missing(Kind::User, plan.shape.users)
        + missing(Kind::Computer, plan.shape.computers)
        + missing(Kind::Group, plan.shape.groups);
    let total = plan.ous().len() as u64
        + (plan.shape.users + plan.shape.groups + plan.shape.computers) as u64
        + present.dns.len() as u64;
    let bar = progress(total, args.json);
    bar.set_message("loading");
    let mut done = Loaded::default();
    let mut already = 0;
    for kind in [Kind::Ou, Kind::User, Kind::Computer, Kind::Group, Kind::Dns] {
        let n = present.count(kind);
        already += n;
        for _ in 0..n {
            Loaded::count(&mut done.present, kind);
        }
        bar.inc(n);
    }
    let rids = u32::try_from(principals).context("too many accounts for the RID space")?;
    let mut bulk = dir.bulk_add(caller.clone(), rids)?;
    bulk.reserve(usize::try_from(total).unwrap_or(0));
    let prepared_below =
        prepare_passwords(&bulk.directory(), &plan, &present, &args.account_password)?;
    step("passwords", &mut since);
    let mut loader = dir.db().bulk_loader(CHUNK)?;
    loader.expect(total.saturating_sub(already));
    let mut done = load(
        &mut bulk,
        &mut loader,
        &plan,
        &present,
        &args.account_password,
        prepared_below,
        &bar,
        done,
    )?;
    step("load", &mut since);
    bar.set_message("indexing");
    // The load's view of the directory is freed beside the index writing, not after it.
    let stats = std::thread::scope(|s| {
        s.spawn(move || drop(bulk));
        loader.finish()
    })
    .context("writing the index keys")?;
    step("index", &mut since);
    bar.finish_and_clear();

    // Groups made by an earlier run with fewer users get the members this plan adds.
    let topped = top_up_groups(&dir, &caller, &plan, &present, &mut done)?;
    if topped {
        step("members", &mut since);
    }
    cfg.max_link_changes = link_limit;
    cfg.sort_budget = sort_budget;
    dir.db().replace_config_stored(cfg)?;

    let manifest_path = args
        .manifest
        .clone()
        .unwrap_or_else(|| data.join("populate.json"));
    let mut manifest = Manifest::of(&plan, &args.account_password);
    manifest.data = Some(data.display().to_string());
    if let Some(warning) = manifest.differs_from(&manifest_path) {
        eprintln!("warning: {warning}");
    }
    manifest.save(&manifest_path)?;
    Ok(Summary {
        target: data.display().to_string(),
        seconds: started.elapsed().as_secs_f64(),
        created: done.created,
        already_present: done.present,
        refused: done.refused,
        refusals: done.refusals,
        objects_per_second: 0.0,
        memberships_per_second: 0.0,
        password_users: plan.password_users,
        manifest: manifest_path.display().to_string(),
        index_keys: Some(stats.index_keys),
        steps,
    }
    .with_rates())
}

/// Adds to groups that were there before this run the members the plan gives them and
/// they lack (through the directory, as the Administrator, a change per
/// [`MEMBERS_PER_CHANGE`] members); returns whether any group was examined.
fn top_up_groups(
    dir: &Directory<LmdbBackend>,
    caller: &Caller,
    plan: &Plan,
    present: &Present,
    done: &mut Loaded,
) -> Result<bool> {
    let existing: Vec<usize> = (0..plan.shape.groups)
        .filter(|g| present.groups.get(*g).copied().unwrap_or(false))
        .collect();
    if existing.is_empty() {
        return Ok(false);
    }
    for g in existing {
        let Some(dn_text) = plan.group_dn(g) else {
            continue;
        };
        let dn = Dn::parse(dn_text).map_err(|e| anyhow::anyhow!("{dn_text}: {e}"))?;
        let have: std::collections::HashSet<String> = {
            let r = dir.db().read()?;
            let Some(id) = r.lookup(&dn)?.filter(|id| *id != 0) else {
                continue;
            };
            use kauri_domain::directory::view::View;
            r.values(id, "member")?
                .into_iter()
                .filter_map(|v| Dn::parse(&String::from_utf8_lossy(&v)).ok())
                .map(|d| d.norm().to_string())
                .collect()
        };
        let mut missing = Vec::new();
        for m in plan.members(g) {
            let Some(text) = plan.member_dn(m) else {
                continue;
            };
            let norm = Dn::parse(text).map(|d| d.norm().to_string()).ok();
            if norm.is_some_and(|n| have.contains(&n)) {
                done.present.memberships += 1;
            } else {
                missing.push(text.as_bytes().to_vec());
            }
        }
        for part in missing.chunks(MEMBERS_PER_CHANGE) {
            let mut w = dir.db().write()?;
            let r = dir.apply(
                &mut w,
                &Request {
                    caller: caller.clone(),
                    encrypted: true,
                    change: Change::Modify {
                        dn: dn.clone(),
                        mods: vec![Modification {
                            op: ModifyOp::Add,
                            attr: "member".into(),
                            values: part.to_vec(),
                        }],
                        permissive: true,
                        sd_flags: None,
                    },
                },
            );
            w.commit()?;
            match r {
                Ok(()) => done.created.memberships += part.len() as u64,
                Err(e) => done.refuse(format!("members of {dn}: {e}")),
            }
        }
    }
    Ok(true)
}
