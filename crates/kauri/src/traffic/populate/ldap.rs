//! `kauri traffic populate --server URL`: the plan made over LDAP with plain adds and
//! modifies of standard AD objects, so it fills Kauri, Samba AD and Windows alike.
//!
//! `--concurrency` connections work through one step at a time — OUs (departments, then
//! the OUs below them), users, computers, groups, memberships, DNS names — each taking the
//! next object as soon as its one request in flight is answered. A user's manager goes in
//! with the user (its manager was made earlier; the rare user whose manager is still in
//! flight waits for it). Groups are made empty and filled by modifies of up to
//! [`MEMBERS_PER_CHANGE`] members, so no request is large.
//!
//! A rerun (or a run started again after an interruption) with the same seed finds what
//! it made: an add answered entryAlreadyExists counts as done, and members already there
//! are added again with the permissive-modify control, which makes that no error.

use std::sync::atomic::{AtomicU8, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use anyhow::{bail, Context, Result};
use indicatif::ProgressBar;
use kauri_ldap_client::proto::{controls, Control, ModOp};
use kauri_ldap_client::{change, LdapClient};
use kauri_ldap_proto::{LdapResult, ResultCode};

use super::generate::{Member, Plan};
use super::manifest::Manifest;
use super::report::{progress, Counts, Step, Summary, REFUSALS_QUOTED};
use super::PopulateArgs;
use crate::admin::remote::RemoteTarget;
use crate::admin::target::{Attrs, Credentials, Target};

/// Members added per modify.
pub const MEMBERS_PER_CHANGE: usize = 1000;

/// What became of a user, for the users whose manager it is.
mod state {
    pub const PENDING: u8 = 0;
    pub const EXISTS: u8 = 1;
    pub const MISSING: u8 = 2;
}

/// One unit of work of a step.
#[derive(Debug, Clone, Copy)]
enum Job {
    Ou(usize),
    User(usize),
    Computer(usize),
    Group(usize),
    /// Members `from..to` of a group's member list.
    Members {
        group: usize,
        from: usize,
        to: usize,
    },
    Dns(usize),
}

/// What the connections share.
struct Shared {
    plan: Plan,
    password: String,
    users: Vec<AtomicU8>,
    members: Vec<Vec<Member>>,
    tally: Mutex<Tally>,
    bar: ProgressBar,
}

#[derive(Default)]
struct Tally {
    created: Counts,
    present: Counts,
    refused: u64,
    refusals: Vec<String>,
}

/// How an add or modify ended.
enum Outcome {
    Made,
    There,
    Refused(String),
}

fn outcome(r: &LdapResult, what: &str) -> Outcome {
    match r.code {
        ResultCode::SUCCESS => Outcome::Made,
        ResultCode::ENTRY_ALREADY_EXISTS => Outcome::There,
        c => Outcome::Refused(format!(
            "{what}: {} (LDAP result {}, {})",
            r.message,
            c.0,
            kauri_ldap_client::code_name(c)
        )),
    }
}

impl Shared {
    fn record(&self, outcome: Outcome, count: impl Fn(&mut Counts)) {
        let mut t = self.tally.lock().unwrap_or_else(|e| e.into_inner());
        match outcome {
            Outcome::Made => count(&mut t.created),
            Outcome::There => count(&mut t.present),
            Outcome::Refused(why) => {
                t.refused += 1;
                if t.refusals.len() < REFUSALS_QUOTED {
                    t.refusals.push(why);
                }
            }
        }
    }
}

async fn add(client: &mut LdapClient, dn: &str, attrs: Attrs) -> Result<Outcome> {
    let r = client
        .add(dn, attrs, Vec::new())
        .await
        .with_context(|| format!("adding {dn}"))?;
    Ok(outcome(&r, dn))
}

/// Waits until the user a new user names as manager is settled; whether it exists.
async fn manager_settled(shared: &Shared, manager: usize) -> bool {
    let Some(s) = shared.users.get(manager) else {
        return false;
    };
    loop {
        match s.load(Ordering::Acquire) {
            state::PENDING => tokio::time::sleep(Duration::from_millis(1)).await,
            st => return st == state::EXISTS,
        }
    }
}

async fn run_job(client: &mut LdapClient, shared: &Shared, job: Job) -> Result<()> {
    let plan = &shared.plan;
    match job {
        Job::Ou(i) => {
            let Some(ou) = plan.ous().get(i) else {
                return Ok(());
            };
            let o = add(client, &ou.dn, plan.ou_attrs(ou)).await?;
            shared.record(o, |c| c.ous += 1);
        }
        Job::User(i) => {
            let u = plan.user(i);
            let with_manager = match u.manager {
                Some(m) => manager_settled(shared, m).await,
                None => false,
            };
            let (dn, attrs) = plan.user_entry(u, &shared.password, with_manager);
            let o = add(client, &dn, attrs).await?;
            let st = match o {
                Outcome::Made | Outcome::There => state::EXISTS,
                Outcome::Refused(_) => state::MISSING,
            };
            if let Some(s) = shared.users.get(i) {
                s.store(st, Ordering::Release);
            }
            shared.record(o, |c| c.users += 1);
        }
        Job::Computer(i) => {
            let (dn, attrs) = plan.computer_entry(plan.computer(i));
            let o = add(client, &dn, attrs).await?;
            shared.record(o, |c| c.computers += 1);
        }
        Job::Group(g) => {
            let (dn, attrs) = plan.group_entry(plan.group(g));
            let o = add(client, &dn, attrs).await?;
            shared.record(o, |c| c.groups += 1);
        }
        Job::Members { group, from, to } => {
            let (Some(dn), Some(list)) = (plan.group_dn(group), shared.members.get(group)) else {
                return Ok(());
            };
            let values: Vec<Vec<u8>> = list
                .get(from..to)
                .unwrap_or_default()
                .iter()
                .filter_map(|m| plan.member_dn(*m).map(|d| d.as_bytes().to_vec()))
                .collect();
            let n = values.len() as u64;
            let changes = vec![change(ModOp::Add, "member", &values)];
            let r = client
                .modify(dn, changes.clone(), Vec::new())
                .await
                .with_context(|| format!("adding members to {dn}"))?;
            let o = match r.code {
                ResultCode::SUCCESS => Outcome::Made,
                // Some are members already (AD answers entryAlreadyExists, others
                // attributeOrValueExists): the rest go in, the present ones are no error.
                ResultCode::ENTRY_ALREADY_EXISTS | ResultCode::ATTRIBUTE_OR_VALUE_EXISTS => {
                    let permissive = Control {
                        oid: controls::PERMISSIVE_MODIFY.to_string(),
                        critical: true,
                        value: None,
                    };
                    let again = client
                        .modify(dn, changes, vec![permissive])
                        .await
                        .with_context(|| format!("adding members to {dn}"))?;
                    match outcome(&again, dn) {
                        Outcome::Made => Outcome::There,
                        other => other,
                    }
                }
                _ => outcome(&r, dn),
            };
            shared.record(o, |c| c.memberships += n);
        }
        Job::Dns(i) => {
            let (dn, attrs) = plan.dns_node(&plan.computer(i));
            let o = add(client, &dn, attrs).await?;
            shared.record(o, |c| c.dns_records += 1);
        }
    }
    Ok(())
}

/// Runs one step's jobs on every connection; gives the connections back.
async fn step(
    clients: Vec<LdapClient>,
    shared: &Arc<Shared>,
    jobs: Vec<Job>,
    name: &str,
) -> Result<Vec<LdapClient>> {
    shared.bar.set_message(name.to_string());
    let jobs = Arc::new(jobs);
    let next = Arc::new(AtomicUsize::new(0));
    let mut tasks = Vec::with_capacity(clients.len());
    for mut client in clients {
        let (jobs, next, shared) = (jobs.clone(), next.clone(), shared.clone());
        tasks.push(tokio::spawn(async move {
            loop {
                let k = next.fetch_add(1, Ordering::Relaxed);
                let Some(job) = jobs.get(k).copied() else {
                    break;
                };
                run_job(&mut client, &shared, job).await?;
                shared.bar.inc(1);
            }
            anyhow::Ok(client)
        }));
    }
    let mut back = Vec::with_capacity(tasks.len());
    for t in tasks {
        back.push(t.await.context("a connection's task failed")??);
    }
    Ok(back)
}

/// The credentials with the password read once (from the file or the terminal), for the
/// many connections to share.
fn resolved(creds: &Credentials) -> Result<Credentials> {
    let (user, password) = creds
        .account()?
        .context("give the account to bind as with -U (a DN, a UPN or DOMAIN\\name)")?;
    Ok(Credentials {
        username: Some(user),
        bind_password: Some(password),
        bind_password_file: None,
        cacert: creds.cacert.clone(),
        insecure_tls: creds.insecure_tls,
    })
}

/// Runs `kauri traffic populate --server URL`.
pub fn run(args: &PopulateArgs, url: &str) -> Result<Summary> {
    let started = Instant::now();
    if url.starts_with("ldapi://") {
        bail!("--server takes an ldap:// or ldaps:// URL (fill a local folder with --local)");
    }
    let creds = resolved(&args.credentials)?;
    let (names, dns) = {
        let mut target = RemoteTarget::connect(url, &creds)?;
        let names = target.domain().clone();
        let zone = super::generate::zone_dn(&names);
        let dns = !args.no_dns && target.read(&zone, &["dc"])?.is_some();
        (names, dns)
    };
    let plan = Plan::new(args.shape(), args.seed, names, args.password_users);
    let shape = plan.shape;
    let members: Vec<Vec<Member>> = (0..shape.groups).map(|g| plan.members(g)).collect();

    let tops: Vec<Job> = (0..plan.ous().len())
        .filter(|i| plan.ous().get(*i).is_some_and(|o| o.city.is_none()))
        .map(Job::Ou)
        .collect();
    let below: Vec<Job> = (0..plan.ous().len())
        .filter(|i| plan.ous().get(*i).is_some_and(|o| o.city.is_some()))
        .map(Job::Ou)
        .collect();
    let mut member_jobs = Vec::new();
    for (g, list) in members.iter().enumerate() {
        let mut from = 0;
        while from < list.len() {
            let to = (from + MEMBERS_PER_CHANGE).min(list.len());
            member_jobs.push(Job::Members { group: g, from, to });
            from = to;
        }
    }
    let steps_plan: Vec<(&str, Vec<Job>)> = vec![
        ("OUs", tops),
        ("OUs", below),
        ("users", (0..shape.users).map(Job::User).collect()),
        (
            "computers",
            (0..shape.computers).map(Job::Computer).collect(),
        ),
        ("groups", (0..shape.groups).map(Job::Group).collect()),
        ("memberships", member_jobs),
        (
            "DNS",
            if dns {
                (0..shape.computers).map(Job::Dns).collect()
            } else {
                Vec::new()
            },
        ),
    ];
    let total: usize = steps_plan.iter().map(|(_, j)| j.len()).sum();
    let shared = Arc::new(Shared {
        users: (0..shape.users)
            .map(|_| AtomicU8::new(state::PENDING))
            .collect(),
        members,
        password: args.account_password.clone(),
        tally: Mutex::new(Tally::default()),
        bar: progress(total as u64, args.json),
        plan,
    });

    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .context("starting the client runtime")?;
    let mut steps = Vec::new();
    rt.block_on(async {
        let mut connecting = Vec::new();
        for _ in 0..args.concurrency {
            let (url, creds) = (url.to_string(), creds.clone());
            connecting.push(tokio::spawn(async move {
                crate::admin::remote::connect(&url, &creds).await
            }));
        }
        let mut clients = Vec::with_capacity(connecting.len());
        for c in connecting {
            clients.push(c.await.context("connecting")??);
        }
        let mut since = Instant::now();
        let mut last = "";
        for (name, jobs) in steps_plan {
            if name != last && !last.is_empty() {
                steps.push(Step {
                    name: last.to_string(),
                    seconds: since.elapsed().as_secs_f64(),
                });
                since = Instant::now();
            }
            last = name;
            clients = step(clients, &shared, jobs, name).await?;
        }
        steps.push(Step {
            name: last.to_string(),
            seconds: since.elapsed().as_secs_f64(),
        });
        for c in clients {
            let _ = c.unbind().await;
        }
        anyhow::Ok(())
    })?;
    shared.bar.finish_and_clear();

    let manifest_path = args
        .manifest
        .clone()
        .unwrap_or_else(|| std::path::PathBuf::from("populate.json"));
    let mut manifest = Manifest::of(&shared.plan, &args.account_password);
    manifest.server = Some(url.to_string());
    if let Some(warning) = manifest.differs_from(&manifest_path) {
        eprintln!("warning: {warning}");
    }
    manifest.save(&manifest_path)?;
    let tally = std::mem::take(&mut *shared.tally.lock().unwrap_or_else(|e| e.into_inner()));
    Ok(Summary {
        target: url.to_string(),
        seconds: started.elapsed().as_secs_f64(),
        created: tally.created,
        already_present: tally.present,
        refused: tally.refused,
        refusals: tally.refusals,
        objects_per_second: 0.0,
        memberships_per_second: 0.0,
        password_users: shared.plan.password_users,
        manifest: manifest_path.display().to_string(),
        index_keys: None,
        steps,
    }
    .with_rates())
}
