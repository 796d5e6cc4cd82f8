//! Crash safety of the served database: several clients write over their own connections
//! (adds of users and contacts, description changes, deletes, group membership changes),
//! the server is killed with SIGKILL at a random moment while writes are in flight, and
//! after each kill `kauri dbcheck` must find the folder consistent and the restarted
//! server must hold every write a client heard succeed (a write whose answer the kill cut
//! off may be there or not, whole).
//!
//! `KAURI_CRASH_ROUNDS` sets the number of kills (default 10), `KAURI_CRASH_SEED` repeats a
//! run's choices (the seed is printed; the moments of the kills still vary with timing),
//! `KAURI_CRASH_WRITERS` the number of writing connections (default 4) and
//! `KAURI_CRASH_WINDOW_MS` the longest time the writers run before a kill (default 800).

mod common;

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use common::{connect, kauri, provision, serve, Served, DOMAIN};
use kauri_ldap_client::proto::{ModOp, ResultCode, SearchScope};
use kauri_ldap_client::{change, search_request, Filter, LdapClient};

/// A number from the environment, or `default`.
fn setting(name: &str, default: u64) -> u64 {
    match std::env::var(name) {
        Ok(v) => v
            .trim()
            .parse()
            .unwrap_or_else(|_| panic!("{name}={v:?} is not a number")),
        Err(_) => default,
    }
}

/// A small deterministic random number generator (SplitMix64).
#[derive(Debug)]
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// A number in `0..n` (`n` > 0).
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
}

/// The OU the writers work in.
fn crash_ou() -> String {
    format!("OU=Crash,{DOMAIN}")
}

fn dn_of(cn: &str) -> String {
    format!("CN={cn},{}", crash_ou())
}

/// The group writer `w` changes the membership of.
fn group_of(w: usize) -> String {
    format!("crash-g{w}")
}

/// One write a client sends.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Op {
    /// Adds a user or a contact with a first description.
    Add {
        cn: String,
        user: bool,
        description: String,
    },
    /// Replaces the description.
    Describe { cn: String, description: String },
    /// Deletes the object (it becomes a tombstone; its links go).
    Delete { cn: String },
    /// Adds the object to the writer's group.
    Join { cn: String },
    /// Removes the object from the writer's group.
    Leave { cn: String },
}

impl Op {
    fn target(&self) -> &str {
        match self {
            Op::Add { cn, .. }
            | Op::Describe { cn, .. }
            | Op::Delete { cn }
            | Op::Join { cn }
            | Op::Leave { cn } => cn,
        }
    }
}

/// An object as the acknowledged writes left it.
#[derive(Debug, Clone)]
struct Obj {
    description: String,
    /// The last acknowledged write to it and the round it was acknowledged in.
    last: (Op, usize),
}

/// What one writer has been told succeeded, over every round.
#[derive(Debug)]
struct Writer {
    index: usize,
    rng: Rng,
    /// The next object number (names are never reused, even for adds in doubt).
    seq: u64,
    /// The next description counter.
    counter: u64,
    present: BTreeMap<String, Obj>,
    deleted: BTreeMap<String, usize>,
    members: BTreeSet<String>,
    /// The write whose answer the kill cut off, if any.
    in_flight: Option<Op>,
    /// Writes acknowledged in this round.
    acked: usize,
}

impl Writer {
    fn new(index: usize, seed: u64) -> Writer {
        Writer {
            index,
            rng: Rng(seed ^ (index as u64 + 1).wrapping_mul(0xA24B_AED4_963E_E407)),
            seq: 0,
            counter: 0,
            present: BTreeMap::new(),
            deleted: BTreeMap::new(),
            members: BTreeSet::new(),
            in_flight: None,
            acked: 0,
        }
    }

    fn description(&mut self) -> String {
        self.counter += 1;
        format!("w{} v{}", self.index, self.counter)
    }

    /// The next write: mostly adds and description changes, some deletes and membership
    /// changes.
    fn choose(&mut self) -> Op {
        let n = self.present.len() as u64;
        let roll = self.rng.below(100);
        if n < 3 || roll < 30 {
            self.seq += 1;
            let cn = format!("w{}-{}", self.index, self.seq);
            let description = self.description();
            return Op::Add {
                cn,
                user: roll.is_multiple_of(3),
                description,
            };
        }
        let pick = self.rng.below(n) as usize;
        let cn = self.present.keys().nth(pick).cloned().unwrap_or_default();
        match roll {
            30..=64 => {
                let description = self.description();
                Op::Describe { cn, description }
            }
            65..=77 => Op::Delete { cn },
            _ if self.members.contains(&cn) => Op::Leave { cn },
            _ => Op::Join { cn },
        }
    }

    /// Records a write the server acknowledged.
    fn apply(&mut self, op: Op, round: usize) {
        let last = (op.clone(), round);
        match op {
            Op::Add {
                cn, description, ..
            } => {
                self.present.insert(cn, Obj { description, last });
            }
            Op::Describe { cn, description } => {
                if let Some(o) = self.present.get_mut(&cn) {
                    o.description = description;
                    o.last = last;
                }
            }
            Op::Delete { cn } => {
                self.present.remove(&cn);
                self.members.remove(&cn);
                self.deleted.insert(cn, round);
            }
            Op::Join { cn } => {
                self.members.insert(cn.clone());
                if let Some(o) = self.present.get_mut(&cn) {
                    o.last = last;
                }
            }
            Op::Leave { cn } => {
                self.members.remove(&cn);
                if let Some(o) = self.present.get_mut(&cn) {
                    o.last = last;
                }
            }
        }
    }
}

fn attr(name: &str, value: &str) -> (String, Vec<Vec<u8>>) {
    (name.to_string(), vec![value.as_bytes().to_vec()])
}

/// Sends one write and returns its result.
async fn send(c: &mut LdapClient, w: usize, op: &Op) -> Result<(ResultCode, String), String> {
    let r = match op {
        Op::Add {
            cn,
            user,
            description,
        } => {
            let mut attrs = vec![
                attr("objectClass", if *user { "user" } else { "contact" }),
                attr("description", description),
            ];
            if *user {
                attrs.push(attr("sAMAccountName", cn));
            }
            c.add(&dn_of(cn), attrs, Vec::new()).await
        }
        Op::Describe { cn, description } => {
            let ch = change(ModOp::Replace, "description", &[description]);
            c.modify(&dn_of(cn), vec![ch], Vec::new()).await
        }
        Op::Delete { cn } => c.delete(&dn_of(cn), Vec::new()).await,
        Op::Join { cn } | Op::Leave { cn } => {
            let how = if matches!(op, Op::Join { .. }) {
                ModOp::Add
            } else {
                ModOp::Delete
            };
            let ch = change(how, "member", &[dn_of(cn)]);
            c.modify(&dn_of(&group_of(w)), vec![ch], Vec::new()).await
        }
    };
    r.map(|r| (r.code, r.message)).map_err(|e| e.to_string())
}

/// Writes until the connection breaks: every success goes into the model, the write the
/// break cut off is kept as in flight. A refusal is an error. `writing` counts the writers
/// that have had a write acknowledged in this round.
async fn write_until_killed(
    url: String,
    mut w: Writer,
    round: usize,
    writing: Arc<AtomicUsize>,
) -> Result<Writer, String> {
    let mut c = connect(&url).await;
    w.acked = 0;
    w.in_flight = None;
    loop {
        let op = w.choose();
        match send(&mut c, w.index, &op).await {
            Ok((ResultCode::SUCCESS, _)) => {
                w.apply(op, round);
                w.acked += 1;
                if w.acked == 1 {
                    writing.fetch_add(1, Ordering::SeqCst);
                }
            }
            Ok((code, message)) => {
                return Err(format!(
                    "writer {} was refused {op:?} before the kill: {code:?} {message}",
                    w.index
                ))
            }
            Err(_) => {
                w.in_flight = Some(op);
                return Ok(w);
            }
        }
    }
}

/// What the restarted server holds below the OU: each object's description, and each
/// writer group's members.
struct Found {
    descriptions: BTreeMap<String, Option<String>>,
    members: BTreeMap<String, BTreeSet<String>>,
}

fn first_rdn_value(dn: &str) -> String {
    let rdn = dn.split(',').next().unwrap_or_default();
    rdn.split_once('=')
        .map_or(rdn, |(_, v)| v)
        .to_ascii_lowercase()
}

async fn read_back(url: &str) -> Found {
    let mut c = connect(url).await;
    let req = search_request(
        &crash_ou(),
        SearchScope::OneLevel,
        Filter::parse("(objectClass=*)").unwrap(),
        &["description", "member"],
    );
    let out = c.search(req, Vec::new()).await.expect("search the OU");
    assert_eq!(out.result.code, ResultCode::SUCCESS, "{:?}", out.result);
    let mut found = Found {
        descriptions: BTreeMap::new(),
        members: BTreeMap::new(),
    };
    for e in out.entries {
        let cn = first_rdn_value(&e.dn);
        let values = |name: &str| -> Vec<String> {
            e.attributes
                .iter()
                .filter(|a| a.name.eq_ignore_ascii_case(name))
                .flat_map(|a| a.values.iter())
                .map(|v| String::from_utf8_lossy(v).into_owned())
                .collect()
        };
        if cn.starts_with("crash-g") {
            let members = values("member")
                .iter()
                .map(|d| first_rdn_value(d))
                .collect();
            found.members.insert(cn, members);
        } else {
            found
                .descriptions
                .insert(cn, values("description").into_iter().next());
        }
    }
    found
}

/// Checks one writer's acknowledged writes against what the server holds, settles the
/// write that was in flight from what is there, and returns the problems.
fn check_writer(w: &mut Writer, found: &Found, round: usize) -> Vec<String> {
    let mut problems = Vec::new();
    let mut lost = |what: String| problems.push(format!("writer {}: {what}", w.index));
    let in_flight = w.in_flight.take();
    let doubt = in_flight.as_ref().map(Op::target).unwrap_or_default();
    // Acknowledged objects are there with their acknowledged description, or the one in
    // flight; the in-flight delete may have happened.
    let mut gone = None;
    for (cn, obj) in w.present.iter_mut() {
        let (op, acked_in) = &obj.last;
        match found.descriptions.get(cn) {
            None if cn == doubt && matches!(in_flight, Some(Op::Delete { .. })) => {
                gone = Some(cn.clone());
            }
            None => lost(format!(
                "CN={cn} is missing; its last acknowledged write was {op:?} in round {acked_in}"
            )),
            Some(d) if d.as_deref() == Some(obj.description.as_str()) => {}
            Some(d) => match &in_flight {
                Some(Op::Describe { cn: c, description }) if c == cn && d.as_ref() == Some(description) => {
                    obj.description = description.clone();
                }
                _ => lost(format!(
                    "CN={cn} has description {d:?}, acknowledged {:?} (last acknowledged write {op:?} in round {acked_in})",
                    obj.description
                )),
            },
        }
    }
    if let Some(cn) = gone {
        w.present.remove(&cn);
        w.members.remove(&cn);
        w.deleted.insert(cn, round);
    }
    for (cn, acked_in) in &w.deleted {
        if found.descriptions.contains_key(cn) {
            lost(format!(
                "CN={cn} is back; it was deleted in round {acked_in}"
            ));
        }
    }
    let prefix = format!("w{}-", w.index);
    for (cn, d) in &found.descriptions {
        if !cn.starts_with(&prefix) || w.present.contains_key(cn) || w.deleted.contains_key(cn) {
            continue;
        }
        match &in_flight {
            Some(
                op @ Op::Add {
                    cn: c, description, ..
                },
            ) if c == cn => {
                if d.as_ref() != Some(description) {
                    lost(format!(
                        "CN={cn}, added by the write in flight, has description {d:?} instead of {description:?}"
                    ));
                }
                let obj = Obj {
                    description: description.clone(),
                    last: (op.clone(), round),
                };
                w.present.insert(cn.clone(), obj);
            }
            _ => lost(format!("CN={cn} is there though no add of it was sent")),
        }
    }
    // The group holds the acknowledged members, or those after the change in flight.
    let group = group_of(w.index);
    let got = found.members.get(&group).cloned().unwrap_or_default();
    if got != w.members {
        let mut after = w.members.clone();
        match &in_flight {
            Some(Op::Join { cn }) => {
                after.insert(cn.clone());
            }
            Some(Op::Leave { cn }) => {
                after.remove(cn);
            }
            _ => {}
        }
        if got == after {
            w.members = after;
        } else {
            let missing: Vec<_> = w.members.difference(&got).collect();
            let extra: Vec<_> = got.difference(&w.members).collect();
            lost(format!(
                "CN={group} lacks the acknowledged members {missing:?}, has the members {extra:?} whose removal was acknowledged or that were never added (in flight: {in_flight:?})"
            ));
        }
    }
    problems
}

/// `kauri dbcheck --json` on the folder: the records it checked when it finds the folder
/// consistent, else what it said.
fn dbcheck(data: &Path) -> Result<u64, String> {
    let out = kauri(&[
        "dbcheck".as_ref(),
        "--json".as_ref(),
        "-H".as_ref(),
        data.as_os_str(),
    ]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    let report: serde_json::Value = serde_json::from_str(&stdout).unwrap_or_default();
    if out.status.success() && report["clean"] == true {
        Ok(report["records"].as_u64().unwrap_or_default())
    } else {
        Err(format!(
            "dbcheck ({}): {stdout}{}",
            out.status,
            String::from_utf8_lossy(&out.stderr)
        ))
    }
}

/// Creates the OU and one group per writer.
async fn setup(url: &str, writers: usize) {
    let mut c = connect(url).await;
    let r = c
        .add(
            &crash_ou(),
            vec![attr("objectClass", "organizationalUnit")],
            Vec::new(),
        )
        .await
        .unwrap();
    assert_eq!(r.code, ResultCode::SUCCESS, "{r:?}");
    for w in 0..writers {
        let g = group_of(w);
        let attrs = vec![attr("objectClass", "group"), attr("sAMAccountName", &g)];
        let r = c.add(&dn_of(&g), attrs, Vec::new()).await.unwrap();
        assert_eq!(r.code, ResultCode::SUCCESS, "{r:?}");
    }
}

#[test]
fn acknowledged_writes_survive_kill_9_and_leave_a_consistent_database() {
    let rounds = setting("KAURI_CRASH_ROUNDS", 10) as usize;
    let writers = setting("KAURI_CRASH_WRITERS", 4).max(1) as usize;
    let window = setting("KAURI_CRASH_WINDOW_MS", 800).max(1);
    let seed = setting(
        "KAURI_CRASH_SEED",
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(1, |d| d.as_nanos() as u64),
    );
    println!(
        "crash test: seed {seed} (KAURI_CRASH_SEED={seed}), {rounds} rounds, {writers} writers"
    );
    let started = Instant::now();
    let dir = tempfile::tempdir().unwrap();
    let data = provision(dir.path(), "domain");
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let mut served = serve(&data);
    rt.block_on(setup(&served.ldap(), writers));
    let mut kills = Rng(seed);
    let mut model: Vec<Writer> = (0..writers).map(|i| Writer::new(i, seed)).collect();
    let mut total = 0;
    for round in 1..=rounds {
        let fail = |served: &Served, what: String| -> ! {
            panic!(
                "round {round} of {rounds}, seed {seed} (KAURI_CRASH_SEED={seed} repeats the choices):\n{what}\nthe server logged:\n{}",
                served.log_tail()
            )
        };
        let delay = Duration::from_millis(kills.below(window));
        let writing = Arc::new(AtomicUsize::new(0));
        let url = served.ldap();
        let outcome = rt.block_on(async {
            let tasks: Vec<_> = std::mem::take(&mut model)
                .into_iter()
                .map(|w| tokio::spawn(write_until_killed(url.clone(), w, round, writing.clone())))
                .collect();
            // Every writer connected and writing, then the kill at a random moment.
            let deadline = Instant::now() + Duration::from_secs(120);
            while writing.load(Ordering::SeqCst) < writers && Instant::now() < deadline {
                tokio::time::sleep(Duration::from_millis(2)).await;
            }
            tokio::time::sleep(delay).await;
            let running = served.running();
            served.kill();
            let mut back = Vec::new();
            for t in tasks {
                back.push(t.await.map_err(|e| e.to_string()).and_then(|r| r));
            }
            (running, back)
        });
        let (running, back) = outcome;
        if !running {
            fail(
                &served,
                "the server had stopped by itself before the kill".into(),
            );
        }
        for w in back {
            match w {
                Ok(w) => model.push(w),
                Err(e) => fail(&served, e),
            }
        }
        let acked_now: usize = model.iter().map(|w| w.acked).sum();
        total += acked_now;
        let in_flight = model.iter().filter(|w| w.in_flight.is_some()).count();
        // The folder as the kill left it, before any server opens it again.
        let records = match dbcheck(&data) {
            Ok(n) => n,
            Err(e) => fail(
                &served,
                format!("the database is not consistent after the kill: {e}"),
            ),
        };
        served = serve(&data);
        let found = rt.block_on(read_back(&served.ldap()));
        let problems: Vec<String> = model
            .iter_mut()
            .flat_map(|w| check_writer(w, &found, round))
            .collect();
        if !problems.is_empty() {
            fail(
                &served,
                format!(
                    "acknowledged writes lost to the kill {} ms after every writer's first success:\n{}",
                    delay.as_millis(),
                    problems.join("\n")
                ),
            );
        }
        println!(
            "round {round}/{rounds}: killed {} ms after every writer's first success, {acked_now} writes acknowledged, {in_flight} in flight; dbcheck clean ({records} records), all there after the restart",
            delay.as_millis()
        );
    }
    let records = served_stop_and_check(&mut served, &data);
    println!(
        "crash test: {rounds} kills, {total} acknowledged writes, none lost; {records} records consistent; {:.1} s",
        started.elapsed().as_secs_f64()
    );
}

/// Stops the server cleanly and checks the folder once more.
fn served_stop_and_check(served: &mut Served, data: &Path) -> u64 {
    let status = served.stop();
    assert!(
        status.success(),
        "kauri serve ended with {status} on SIGTERM"
    );
    dbcheck(data).unwrap_or_else(|e| panic!("after the last round: {e}"))
}
