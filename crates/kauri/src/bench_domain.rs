//! `kauri bench domain`: a provisioned AD domain served by Kauri's LDAP server, measured
//! from a compiled client over TCP on 127.0.0.1.
//!
//! A fresh domain (SAMDOM.EXAMPLE.COM, Microsoft's full schema when samba-ad-provision's
//! files are installed) is provisioned in this process and served on its own 2-thread
//! tokio runtime; the client of `kauri bench ldap` runs on another, one request in flight
//! per connection, bound as the domain's Administrator. In order it measures:
//!
//! 1. provisioning (`Directory::provision`, in-process);
//! 2. an Exchange-sized schema extension over LDAP: attributeSchema and classSchema adds,
//!    a `schemaUpdateNow` modify of the root DSE, and an object using the new classes and
//!    attributes, read back and found through an indexed new attribute;
//! 3. adding users over LDAP, each then joining 1–4 of 40 groups in rotation (user `i`
//!    joins groups `i % 40`, `(i + 7) % 40`, … as the Samba team's benchmark did), on one
//!    connection and on several (each run in its own OU with its own groups);
//! 4. the cost of one `member` add as a group grows: the adds right after the group
//!    reaches a hundredth, a tenth and all of its full size, on one connection (the growth
//!    in between runs on several connections and is not measured);
//! 5. simple binds of a user in that group, which is itself nested ten levels deep, and of
//!    a user in no group (their passwords are set in-process as the server itself, since
//!    the server takes passwords only over encrypted connections);
//! 6. tokenGroups of the member, the in-chain rule from the member up through the ten
//!    levels, and the in-chain rule from the big group down to its members.
//!
//! Every response must be a success and every search must return the expected entries;
//! the first failure ends the run with the server's own message.

use std::ops::Range;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::{bail, Context, Result};
use indicatif::{ProgressBar, ProgressStyle};
use kauri_db::{Db, Dn, Filter, Modification, ModifyOp};
use kauri_domain::directory::{Caller, Change as DirChange, Directory, Request};
use kauri_domain::password::{encode_unicode_pwd, SecretKey};
use kauri_domain::provision::ProvisionParams;
use kauri_domain::schema::Schema;
use kauri_domain::sid::Sid;
use kauri_kv::lmdb::{LmdbBackend, LmdbOptions};
use kauri_ldap::ServerConfig;
use kauri_ldap_client::{response_result, LdapClient};
use kauri_ldap_proto::{
    AddRequest, Attribute, Change, ModOp, ModifyRequest, ProtocolOp, SearchScope,
};

use crate::bench_ldap::{
    check, client_runtime, connect, count_entries, num, quantile_us, search_request, start_server,
    unbind,
};

/// The realm every run provisions.
const REALM: &str = "SAMDOM.EXAMPLE.COM";
/// Its DN.
const DOMAIN: &str = "DC=samdom,DC=example,DC=com";
/// The DNS suffix of user principal names.
const UPN_SUFFIX: &str = "samdom.example.com";
/// The Administrator, whom the client binds as.
const ADMIN_DN: &str = "CN=Administrator,CN=Users,DC=samdom,DC=example,DC=com";
/// The Administrator's password.
const ADMIN_PW: &str = "Bench.Adm1n.Passw0rd";
/// The password of the two bind users.
const USER_PW: &str = "Bench.User.Passw0rd1";
/// The OU holding everything the benchmark adds.
const BENCH_OU: &str = "OU=Bench,DC=samdom,DC=example,DC=com";
/// Groups each user run rotates its users through.
const ROTATION_GROUPS: usize = 40;
/// Levels of groups above the big group.
const NESTED_LEVELS: usize = 10;
/// LDAP_MATCHING_RULE_IN_CHAIN.
const IN_CHAIN: &str = "1.2.840.113556.1.4.1941";
/// Runs of the in-chain search that returns the whole big group.
const BIG_SEARCH_RUNS: usize = 3;

/// What to run and how big.
#[derive(Debug, Clone)]
pub struct Options {
    /// Folder for the domain's data folder (removed afterwards).
    pub dir: PathBuf,
    /// Users added in each of the two user runs.
    pub users: usize,
    /// Connections of the concurrent user run and of the group growth.
    pub concurrency: usize,
    /// attributeSchema objects of the schema extension.
    pub attributes: usize,
    /// classSchema objects of the schema extension.
    pub classes: usize,
    /// Members the big group grows to; member adds are timed after a hundredth, a tenth
    /// and all of it.
    pub group_size: usize,
    /// Member adds timed in each window.
    pub window: usize,
    /// Timed binds and searches per lookup.
    pub samples: usize,
    /// Show progress bars on stderr.
    pub progress: bool,
}

impl Options {
    /// The full sizes, or a small run that takes seconds (`quick`).
    pub fn sizes(dir: PathBuf, quick: bool) -> Options {
        if quick {
            Options {
                dir,
                users: 1_000,
                concurrency: 8,
                attributes: 100,
                classes: 20,
                group_size: 2_000,
                window: 100,
                samples: 200,
                progress: false,
            }
        } else {
            Options {
                dir,
                users: 100_000,
                concurrency: 8,
                attributes: 1_000,
                classes: 200,
                group_size: 100_000,
                window: 500,
                samples: 2_000,
                progress: false,
            }
        }
    }
}

/// Latencies of one kind of operation.
#[derive(Debug, Clone, Default, serde::Serialize)]
pub struct Latency {
    /// Operations timed.
    pub samples: usize,
    /// Mean, µs.
    pub mean_us: f64,
    /// Median, µs.
    pub median_us: f64,
    /// 99th percentile, µs.
    pub p99_us: f64,
    /// Largest, µs.
    pub max_us: f64,
}

impl Latency {
    fn of(mut ns: Vec<u64>) -> Latency {
        ns.sort_unstable();
        let n = ns.len();
        Latency {
            samples: n,
            mean_us: ns.iter().sum::<u64>() as f64 / 1e3 / n.max(1) as f64,
            median_us: quantile_us(&ns, 0.5),
            p99_us: quantile_us(&ns, 0.99),
            max_us: ns.last().map_or(0.0, |&v| v as f64 / 1e3),
        }
    }
}

/// Provisioning of the domain.
#[derive(Debug, Clone, serde::Serialize)]
pub struct Provisioning {
    /// Seconds `Directory::provision` took.
    pub seconds: f64,
    /// Entries it wrote.
    pub entries: usize,
    /// Of which attribute and class definitions.
    pub schema_objects: usize,
    /// Which schema it started from.
    pub schema_source: String,
}

/// The schema extension over LDAP.
#[derive(Debug, Clone, serde::Serialize)]
pub struct SchemaExtension {
    /// attributeSchema objects added.
    pub attributes: usize,
    /// classSchema objects added.
    pub classes: usize,
    /// Seconds of the adds.
    pub adds_seconds: f64,
    /// Seconds of the `schemaUpdateNow` modify.
    pub update_now_seconds: f64,
    /// Seconds to add the object using the new classes, read it back and find it.
    pub proof_seconds: f64,
    /// All of it.
    pub total_seconds: f64,
    /// One attributeSchema add.
    pub attribute_add: Latency,
    /// One classSchema add.
    pub class_add: Latency,
}

/// One run of user adds with their group memberships.
#[derive(Debug, Clone, serde::Serialize)]
pub struct UserRun {
    /// Connections, each with one request in flight.
    pub connections: usize,
    /// Users added.
    pub users: usize,
    /// Groups the users rotate through.
    pub groups: usize,
    /// `member` values added.
    pub memberships: u64,
    /// Wall time, seconds.
    pub seconds: f64,
    /// Users per second, their memberships included.
    pub users_per_sec: f64,
    /// Memberships per second.
    pub memberships_per_sec: f64,
    /// LDAP operations (adds and modifies) per second.
    pub ops_per_sec: f64,
    /// One user add.
    pub user_add: Latency,
    /// One `member` add.
    pub member_add: Latency,
}

/// Member adds timed once the group had `members_before` members.
#[derive(Debug, Clone, serde::Serialize)]
pub struct MemberWindow {
    /// Members of the group before the first timed add.
    pub members_before: usize,
    /// One `member` add on one connection.
    pub member_add: Latency,
}

/// The big group's growth.
#[derive(Debug, Clone, serde::Serialize)]
pub struct Growth {
    /// Its DN.
    pub group: String,
    /// Members at the end.
    pub members: usize,
    /// Users added only to fill the group (when the user runs were too small).
    pub filler_users: usize,
    /// Connections of the untimed growth.
    pub grow_connections: usize,
    /// Seconds of the untimed growth.
    pub grow_seconds: f64,
    /// The timed windows.
    pub windows: Vec<MemberWindow>,
}

/// A bind or search repeated on one connection.
#[derive(Debug, Clone, serde::Serialize)]
pub struct Lookup {
    /// What was asked.
    pub what: String,
    /// Entries or values each answer held (checked every time; 0 for binds).
    pub results: usize,
    /// One bind or search.
    pub latency: Latency,
}

/// The binds and searches on the grown domain.
#[derive(Debug, Clone, serde::Serialize)]
pub struct Lookups {
    /// Simple bind of the member of the big group.
    pub bind_member: Lookup,
    /// Simple bind of the user in no group.
    pub bind_no_groups: Lookup,
    /// tokenGroups of the member (base search).
    pub token_groups: Lookup,
    /// `(member:1.2.840.113556.1.4.1941:=<member>)`: the groups the member is in.
    pub in_chain_groups: Lookup,
    /// `(memberOf:1.2.840.113556.1.4.1941:=<big group>)`: everyone in the big group.
    pub in_chain_members: Lookup,
}

/// Everything one run measured.
#[derive(Debug, Clone, serde::Serialize)]
pub struct Report {
    /// The realm provisioned.
    pub realm: String,
    /// How server and client were arranged.
    pub setup: String,
    /// Provisioning.
    pub provisioning: Provisioning,
    /// The schema extension.
    pub schema_extension: SchemaExtension,
    /// The sequential and the concurrent user runs.
    pub user_runs: Vec<UserRun>,
    /// The big group's growth.
    pub growth: Growth,
    /// Binds and searches.
    pub lookups: Lookups,
    /// Records in the database at the end.
    pub records: u64,
    /// Wall time of the whole run, seconds.
    pub total_seconds: f64,
}

/// Runs the benchmark in a fresh data folder below `opts.dir`, removed afterwards.
pub fn run(opts: &Options) -> Result<Report> {
    anyhow::ensure!(opts.users > 0, "--users must be positive");
    anyhow::ensure!(opts.concurrency > 0, "--concurrency must be positive");
    anyhow::ensure!(
        opts.attributes >= 10 && opts.classes >= 2,
        "the schema extension needs at least 10 attributes and 2 classes"
    );
    anyhow::ensure!(opts.group_size >= 100, "--group-size must be at least 100");
    anyhow::ensure!(
        opts.window > 0 && opts.samples > 0,
        "--window and --samples must be positive"
    );
    let data = opts.dir.join(format!("domain-{}", opts.users));
    if data.exists() {
        std::fs::remove_dir_all(&data)
            .with_context(|| format!("removing old {}", data.display()))?;
    }
    std::fs::create_dir_all(&data).with_context(|| format!("creating {}", data.display()))?;
    let result = run_in(opts, &data);
    let _ = std::fs::remove_dir_all(&data);
    result
}

/// A new SAMDOM.EXAMPLE.COM domain in `data` (a 32 GiB map, Microsoft's schema), provisioned
/// in-process with `admin_password`, as the domain benchmarks start from: the directory,
/// what provisioning made, where the schema came from, and how long it took.
pub(crate) fn provision_bench_domain(
    data: &Path,
    admin_password: &str,
) -> Result<(
    Directory<LmdbBackend>,
    kauri_domain::directory::Provisioned,
    kauri_domain::schema::SchemaSource,
    f64,
)> {
    let (schema, source) = Schema::load_default();
    let options = LmdbOptions {
        map_size: 32 << 30,
        ..LmdbOptions::default()
    };
    let db = Db::open_lmdb(&data.join("db"), schema.db_config(), options)
        .with_context(|| format!("creating the database in {}", data.display()))?;
    let key = SecretKey::generate().context("making the secrets key")?;
    let dir = Directory::new(Arc::new(db), schema, Some(key)).context("opening the directory")?;
    let params = ProvisionParams {
        realm: REALM.into(),
        netbios_domain: "SAMDOM".into(),
        dc_name: "DC1".into(),
        domain_sid: Sid::new_domain().context("choosing a domain SID")?,
        site: "Default-First-Site-Name".into(),
    };
    let t = Instant::now();
    let made = dir
        .provision(&params, admin_password, None)
        .context("provisioning")?;
    Ok((dir, made, source, t.elapsed().as_secs_f64()))
}

fn run_in(opts: &Options, data: &Path) -> Result<Report> {
    let started = Instant::now();
    say(opts, "provisioning SAMDOM.EXAMPLE.COM");
    let (dir, made, source, provision_seconds) = provision_bench_domain(data, ADMIN_PW)?;
    let provisioning = Provisioning {
        seconds: provision_seconds,
        entries: made.entries,
        schema_objects: made.schema_objects,
        schema_source: crate::domain::describe(&source),
    };
    let dir = Arc::new(dir);

    let cfg = ServerConfig {
        data: data.to_path_buf(),
        listen: "127.0.0.1:0".into(),
        listen_tls: String::new(),
        metrics_listen: String::new(),
        size_limit: 0,
        ..ServerConfig::default()
    };
    let (server_rt, addr) = start_server(cfg, dir.clone(), source)?;
    let client = Client {
        addr: addr.to_string(),
        opts: opts.clone(),
        dir: dir.clone(),
    };
    let measured = client_runtime()?.block_on(client.measure());
    server_rt.shutdown_timeout(Duration::from_secs(2));
    let (schema_extension, user_runs, growth, lookups) = measured?;
    let records = dir
        .db()
        .read()
        .and_then(|r| r.record_count())
        .context("counting the records")?;
    Ok(Report {
        realm: REALM.into(),
        setup: format!(
            "Kauri server in this process on its own 2-thread tokio runtime, durable commits \
             (fsync); client on another 2-thread runtime over TCP on {addr}, one request in \
             flight per connection, bound as Administrator"
        ),
        provisioning,
        schema_extension,
        user_runs,
        growth,
        lookups,
        records,
        total_seconds: started.elapsed().as_secs_f64(),
    })
}

fn say(opts: &Options, what: &str) {
    if opts.progress {
        eprintln!("domain: {what}");
    }
}

fn progress_bar(opts: &Options, len: usize, what: &str) -> ProgressBar {
    if !opts.progress {
        return ProgressBar::hidden();
    }
    let bar = ProgressBar::new(len as u64);
    bar.set_style(
        ProgressStyle::with_template("{msg} [{bar:40}] {pos}/{len} {per_sec} eta {eta}")
            .unwrap_or_else(|_| ProgressStyle::default_bar()),
    );
    bar.set_message(what.to_string());
    bar
}

fn attr(name: &str, values: &[&str]) -> Attribute {
    Attribute {
        name: name.into(),
        values: values.iter().map(|v| v.as_bytes().to_vec()).collect(),
    }
}

fn add_request(dn: &str, attributes: Vec<Attribute>) -> ProtocolOp {
    ProtocolOp::AddRequest(AddRequest {
        dn: dn.to_string(),
        attributes,
    })
}

fn modify_add(dn: &str, name: &str, value: &str) -> ProtocolOp {
    ProtocolOp::ModifyRequest(ModifyRequest {
        dn: dn.to_string(),
        changes: vec![Change {
            op: ModOp::Add,
            attribute: attr(name, &[value]),
        }],
    })
}

fn nanos(since: Instant) -> u64 {
    u64::try_from(since.elapsed().as_nanos()).unwrap_or(u64::MAX)
}

/// Sends `op`, fails unless it succeeds, and returns how long it took in nanoseconds.
async fn timed(
    conn: &mut LdapClient,
    op: ProtocolOp,
    what: impl FnOnce() -> String,
) -> Result<u64> {
    let t = Instant::now();
    let msg = conn.call(op, Vec::new()).await?;
    let ns = nanos(t);
    let r =
        response_result(&msg.op).with_context(|| format!("unexpected response {:?}", msg.op))?;
    if let Some(e) = check(&what(), r) {
        bail!(e);
    }
    Ok(ns)
}

/// A connection bound as the Administrator.
async fn admin(addr: &str) -> Result<LdapClient> {
    let mut c = connect(addr).await?;
    let r = c.simple_bind(ADMIN_DN, ADMIN_PW).await?;
    if let Some(e) = check("Administrator bind", &r) {
        bail!(e);
    }
    Ok(c)
}

/// Adds a global security group, with one member if given.
async fn add_group(
    conn: &mut LdapClient,
    dn: &str,
    account: &str,
    member: Option<&str>,
) -> Result<()> {
    let mut attrs = vec![
        attr("objectClass", &["group"]),
        attr("sAMAccountName", &[account]),
    ];
    if let Some(m) = member {
        attrs.push(attr("member", &[m]));
    }
    timed(conn, add_request(dn, attrs), || format!("adding {dn}")).await?;
    Ok(())
}

fn base_request(dn: &str, attributes: &[&str]) -> kauri_ldap_proto::SearchRequest {
    let mut req = search_request(dn, Filter::present("objectClass"), attributes);
    req.scope = SearchScope::Base;
    req
}

/// Values of `name` in a base search of `dn`.
async fn read_values(conn: &mut LdapClient, dn: &str, name: &str) -> Result<Vec<Vec<u8>>> {
    let found = conn.search(base_request(dn, &[name]), Vec::new()).await?;
    let (r, entries) = (found.result, found.entries);
    if let Some(e) = check(&format!("reading {name} of {dn}"), &r) {
        bail!(e);
    }
    let [entry] = entries.as_slice() else {
        bail!("a base search of {dn} returned {} entries", entries.len());
    };
    Ok(entry
        .attributes
        .iter()
        .filter(|a| a.name.eq_ignore_ascii_case(name))
        .flat_map(|a| a.values.iter().cloned())
        .collect())
}

/// The syntaxes the new attributes use.
#[derive(Debug, Clone, Copy)]
enum Syntax {
    Unicode,
    Integer,
    Boolean,
    DistinguishedName,
}

/// The `i`th new attribute.
struct NewAttribute {
    i: usize,
    syntax: Syntax,
    single: bool,
    indexed: bool,
}

impl NewAttribute {
    fn nth(i: usize) -> NewAttribute {
        let syntax = match i % 4 {
            0 => Syntax::Unicode,
            1 => Syntax::Integer,
            2 => Syntax::Boolean,
            _ => Syntax::DistinguishedName,
        };
        NewAttribute {
            i,
            syntax,
            single: !i.is_multiple_of(3) || matches!(syntax, Syntax::Boolean),
            indexed: i.is_multiple_of(5),
        }
    }

    fn name(&self) -> String {
        format!("kauriBenchAttr{:04}", self.i)
    }

    fn add(&self) -> ProtocolOp {
        let (syntax, om) = match self.syntax {
            Syntax::Unicode => ("2.5.5.12", "64"),
            Syntax::Integer => ("2.5.5.9", "2"),
            Syntax::Boolean => ("2.5.5.8", "1"),
            Syntax::DistinguishedName => ("2.5.5.1", "127"),
        };
        let dn = format!("CN=kauri-Bench-Attr-{:04},{}", self.i, schema_dn());
        let oid = format!("1.3.6.1.4.1.99999.1.{}", self.i + 1);
        let name = self.name();
        let mut attrs = vec![
            attr("objectClass", &["top", "attributeSchema"]),
            attr("lDAPDisplayName", &[&name]),
            attr("attributeID", &[&oid]),
            attr("attributeSyntax", &[syntax]),
            attr("oMSyntax", &[om]),
            attr(
                "isSingleValued",
                &[if self.single { "TRUE" } else { "FALSE" }],
            ),
        ];
        if self.indexed {
            attrs.push(attr("searchFlags", &["1"]));
        }
        add_request(&dn, attrs)
    }

    /// A value of this attribute for the proof object.
    fn value(&self) -> String {
        match self.syntax {
            Syntax::Unicode => format!("proof-{}", self.i),
            Syntax::Integer => (self.i as i64 * 7).to_string(),
            Syntax::Boolean => "TRUE".into(),
            Syntax::DistinguishedName => BENCH_OU.into(),
        }
    }
}

fn schema_dn() -> String {
    format!("CN=Schema,CN=Configuration,{DOMAIN}")
}

fn class_name(c: usize) -> String {
    format!("kauriBenchClass{c:03}")
}

fn class_attributes(c: usize, attributes: usize) -> Vec<NewAttribute> {
    (0..5)
        .map(|k| NewAttribute::nth((c * 5 + k) % attributes))
        .collect()
}

/// The `c`th new class: even ones structural (possible below containers and OUs), odd
/// ones auxiliary; from class 21 on, those whose number is a multiple of 3 derive from the
/// class 20 before them (of the same kind), the rest from `top`; each may contain 5 of the
/// new attributes.
fn class_add_op(c: usize, attributes: usize) -> ProtocolOp {
    let structural = c.is_multiple_of(2);
    let parent = if c >= 20 && c.is_multiple_of(3) {
        class_name(c - 20)
    } else {
        "top".to_string()
    };
    let dn = format!("CN=kauri-Bench-Class-{c:03},{}", schema_dn());
    let name = class_name(c);
    let oid = format!("1.3.6.1.4.1.99999.2.{}", c + 1);
    let may: Vec<String> = class_attributes(c, attributes)
        .iter()
        .map(NewAttribute::name)
        .collect();
    let may: Vec<&str> = may.iter().map(String::as_str).collect();
    let mut attrs = vec![
        attr("objectClass", &["top", "classSchema"]),
        attr("lDAPDisplayName", &[&name]),
        attr("governsID", &[&oid]),
        attr("subClassOf", &[&parent]),
        attr("objectClassCategory", &[if structural { "1" } else { "3" }]),
        attr("mayContain", &may),
    ];
    if structural {
        attrs.push(attr("possSuperiors", &["container", "organizationalUnit"]));
        if parent == "top" {
            attrs.push(attr("mustContain", &["cn"]));
        }
    }
    add_request(&dn, attrs)
}

/// Users of one run: where they go, how they are named, which groups they join.
struct UserSpec {
    ou: String,
    tag: char,
    groups: Vec<String>,
}

impl UserSpec {
    fn dn(&self, i: usize) -> String {
        format!("CN=bench-{}{i:06},{}", self.tag, self.ou)
    }

    /// The groups user `i` joins: 1–4 of them, 7 apart in the rotation.
    fn groups_of(&self, i: usize) -> impl Iterator<Item = &String> {
        let n = self.groups.len();
        let k = if n == 0 { 0 } else { (1 + i % 4).min(n) };
        (0..k).filter_map(move |j| self.groups.get((i + 7 * j) % n))
    }

    fn memberships(&self, users: usize) -> u64 {
        (0..users).map(|i| self.groups_of(i).count() as u64).sum()
    }

    fn add(&self, i: usize) -> ProtocolOp {
        let account = format!("bench-{}{i:06}", self.tag);
        let upn = format!("{account}@{UPN_SUFFIX}");
        let sn = format!("{}{i:06}", self.tag.to_ascii_uppercase());
        let display = format!("Bench {sn}");
        add_request(
            &self.dn(i),
            vec![
                attr("objectClass", &["user"]),
                attr("sAMAccountName", &[&account]),
                attr("userPrincipalName", &[&upn]),
                attr("givenName", &["Bench"]),
                attr("sn", &[&sn]),
                attr("displayName", &[&display]),
                attr("userAccountControl", &["544"]),
            ],
        )
    }
}

/// What each connection of a fan-out does with index `i`.
#[derive(Clone)]
enum Job {
    /// Add user `i` of the spec, then its memberships.
    Users(Arc<UserSpec>),
    /// Add `pool[i]` to `group`.
    Members {
        group: Arc<str>,
        pool: Arc<Vec<String>>,
    },
}

/// Latencies a fan-out recorded, in nanoseconds.
#[derive(Default)]
struct Samples {
    adds: Vec<u64>,
    members: Vec<u64>,
}

async fn one_job(conn: &mut LdapClient, job: &Job, i: usize, s: &mut Samples) -> Result<()> {
    match job {
        Job::Users(spec) => {
            let dn = spec.dn(i);
            s.adds
                .push(timed(conn, spec.add(i), || format!("adding user {dn}")).await?);
            for g in spec.groups_of(i) {
                s.members.push(
                    timed(conn, modify_add(g, "member", &dn), || {
                        format!("adding {dn} to {g}")
                    })
                    .await?,
                );
            }
        }
        Job::Members { group, pool } => {
            let dn = pool.get(i).context("member pool index")?;
            s.members.push(
                timed(conn, modify_add(group, "member", dn), || {
                    format!("adding {dn} to {group}")
                })
                .await?,
            );
        }
    }
    Ok(())
}

/// One connection pulling indexes until the range is done; a failure stops the others.
async fn worker(
    mut conn: LdapClient,
    job: Job,
    next: Arc<AtomicUsize>,
    end: usize,
    bar: ProgressBar,
) -> Result<Samples> {
    let mut s = Samples::default();
    loop {
        let i = next.fetch_add(1, Ordering::Relaxed);
        if i >= end {
            break;
        }
        if let Err(e) = one_job(&mut conn, &job, i, &mut s).await {
            next.store(end, Ordering::Relaxed);
            return Err(e);
        }
        bar.inc(1);
    }
    unbind(conn).await;
    Ok(s)
}

/// The client side: the server's address, the sizes, and the directory for what only the
/// server itself may do.
struct Client {
    addr: String,
    opts: Options,
    dir: Arc<Directory<LmdbBackend>>,
}

type Measured = (SchemaExtension, Vec<UserRun>, Growth, Lookups);

impl Client {
    /// Runs `job` for every index of `range` on `connections` Administrator connections
    /// (opened before the clock starts); returns the latencies and the wall time.
    async fn fan_out(
        &self,
        connections: usize,
        job: &Job,
        range: Range<usize>,
        bar: &ProgressBar,
    ) -> Result<(Samples, f64)> {
        let mut conns = Vec::with_capacity(connections);
        for _ in 0..connections {
            conns.push(admin(&self.addr).await?);
        }
        let next = Arc::new(AtomicUsize::new(range.start));
        let t = Instant::now();
        let tasks: Vec<_> = conns
            .into_iter()
            .map(|c| tokio::spawn(worker(c, job.clone(), next.clone(), range.end, bar.clone())))
            .collect();
        let mut all = Samples::default();
        let mut failed = None;
        for task in tasks {
            match task.await.context("a client task panicked")? {
                Ok(s) => {
                    all.adds.extend(s.adds);
                    all.members.extend(s.members);
                }
                Err(e) => {
                    failed.get_or_insert(e);
                }
            }
        }
        let seconds = t.elapsed().as_secs_f64();
        match failed {
            Some(e) => Err(e),
            None => Ok((all, seconds)),
        }
    }

    async fn measure(self) -> Result<Measured> {
        let mut conn = admin(&self.addr).await?;
        let ou = |name: &str| format!("OU={name},{BENCH_OU}");
        for dn in [
            BENCH_OU.to_string(),
            ou("Sequential"),
            ou("Concurrent"),
            ou("Filler"),
            ou("Groups"),
        ] {
            timed(
                &mut conn,
                add_request(&dn, vec![attr("objectClass", &["organizationalUnit"])]),
                || format!("adding {dn}"),
            )
            .await?;
        }
        let schema = self
            .schema_extension(&mut conn)
            .await
            .context("schema extension")?;
        let mut runs = Vec::new();
        let mut pool = Vec::new();
        for (label, tag, connections) in [
            ("Sequential", 's', 1),
            ("Concurrent", 'c', self.opts.concurrency),
        ] {
            let (run, spec) = self
                .user_run(&mut conn, &ou(label), tag, connections)
                .await
                .with_context(|| format!("{label} user run"))?;
            pool.extend((0..self.opts.users).map(|i| spec.dn(i)));
            runs.push(run);
        }
        let (growth, member, alone, nests) = self
            .grow(&mut conn, pool, &ou("Filler"), &ou("Groups"))
            .await
            .context("growing the big group")?;
        unbind(conn).await;
        let lookups = self
            .lookups(&growth, &member, &alone, &nests)
            .await
            .context("binds and searches")?;
        Ok((schema, runs, growth, lookups))
    }

    async fn schema_extension(&self, conn: &mut LdapClient) -> Result<SchemaExtension> {
        let (attributes, classes) = (self.opts.attributes, self.opts.classes);
        let bar = progress_bar(&self.opts, attributes + classes, "schema extension");
        let t = Instant::now();
        let mut attribute_add = Vec::with_capacity(attributes);
        for i in 0..attributes {
            let a = NewAttribute::nth(i);
            attribute_add
                .push(timed(conn, a.add(), || format!("adding attribute {}", a.name())).await?);
            bar.inc(1);
        }
        let mut class_add = Vec::with_capacity(classes);
        for c in 0..classes {
            class_add.push(
                timed(conn, class_add_op(c, attributes), || {
                    format!("adding class {}", class_name(c))
                })
                .await?,
            );
            bar.inc(1);
        }
        bar.finish_and_clear();
        let adds_seconds = t.elapsed().as_secs_f64();
        let u = Instant::now();
        timed(conn, modify_add("", "schemaUpdateNow", "1"), || {
            "schemaUpdateNow".to_string()
        })
        .await?;
        let update_now_seconds = u.elapsed().as_secs_f64();
        let p = Instant::now();
        self.schema_proof(conn).await?;
        let proof_seconds = p.elapsed().as_secs_f64();
        let ext = SchemaExtension {
            attributes,
            classes,
            adds_seconds,
            update_now_seconds,
            proof_seconds,
            total_seconds: t.elapsed().as_secs_f64(),
            attribute_add: Latency::of(attribute_add),
            class_add: Latency::of(class_add),
        };
        say(
            &self.opts,
            &format!(
                "schema extension: {attributes} attributes and {classes} classes in {:.2} s",
                ext.total_seconds
            ),
        );
        Ok(ext)
    }

    /// An object of the first new (structural) class with the second (auxiliary) one,
    /// holding a value of each of their attributes: read back whole, and found by the
    /// first (indexed) attribute.
    async fn schema_proof(&self, conn: &mut LdapClient) -> Result<()> {
        let dn = format!("CN=schema-proof,{BENCH_OU}");
        let used: Vec<NewAttribute> = [0, 1]
            .iter()
            .flat_map(|&c| class_attributes(c, self.opts.attributes))
            .collect();
        let classes = [class_name(0), class_name(1)];
        let mut attrs = vec![
            attr("objectClass", &[&classes[0], &classes[1]]),
            attr("cn", &["schema-proof"]),
        ];
        for a in &used {
            attrs.push(attr(&a.name(), &[&a.value()]));
        }
        timed(conn, add_request(&dn, attrs), || {
            format!("adding {dn}, which uses the new classes")
        })
        .await?;
        for a in &used {
            let got = read_values(conn, &dn, &a.name()).await?;
            anyhow::ensure!(
                got == [a.value().into_bytes()],
                "{} of {dn} read back as {:?}",
                a.name(),
                got.iter()
                    .map(|v| String::from_utf8_lossy(v))
                    .collect::<Vec<_>>()
            );
        }
        let first = used.first().context("no attribute used")?;
        let (n, r, _) = count_entries(
            conn,
            search_request(DOMAIN, Filter::eq(&first.name(), first.value()), &["cn"]),
            Vec::new(),
        )
        .await?;
        if let Some(e) = check("searching by a new attribute", &r) {
            bail!(e);
        }
        anyhow::ensure!(n == 1, "searching by {} found {n} entries", first.name());
        Ok(())
    }

    async fn user_run(
        &self,
        conn: &mut LdapClient,
        ou: &str,
        tag: char,
        connections: usize,
    ) -> Result<(UserRun, Arc<UserSpec>)> {
        let mut groups = Vec::with_capacity(ROTATION_GROUPS);
        for g in 0..ROTATION_GROUPS {
            let dn = format!("CN=bench-{tag}-group-{g:02},{ou}");
            add_group(conn, &dn, &format!("bench-{tag}-group-{g:02}"), None).await?;
            groups.push(dn);
        }
        let spec = Arc::new(UserSpec {
            ou: ou.to_string(),
            tag,
            groups,
        });
        let users = self.opts.users;
        let bar = progress_bar(
            &self.opts,
            users,
            &format!("users, {connections} connection(s)"),
        );
        let (s, seconds) = self
            .fan_out(connections, &Job::Users(spec.clone()), 0..users, &bar)
            .await?;
        bar.finish_and_clear();
        let memberships = spec.memberships(users);
        anyhow::ensure!(
            s.adds.len() == users && s.members.len() as u64 == memberships,
            "{} adds and {} member adds completed, {users} and {memberships} expected",
            s.adds.len(),
            s.members.len()
        );
        let seconds = seconds.max(1e-9);
        let run = UserRun {
            connections,
            users,
            groups: ROTATION_GROUPS,
            memberships,
            seconds,
            users_per_sec: users as f64 / seconds,
            memberships_per_sec: memberships as f64 / seconds,
            ops_per_sec: (users as u64 + memberships) as f64 / seconds,
            user_add: Latency::of(s.adds),
            member_add: Latency::of(s.members),
        };
        say(
            &self.opts,
            &format!(
                "{users} users with {memberships} memberships on {connections} connection(s) \
                 in {:.1} s ({:.0} users/s)",
                run.seconds, run.users_per_sec
            ),
        );
        Ok((run, spec))
    }

    /// Adds the two bind users, the big group holding the member and ten groups above it,
    /// then grows the big group from `pool` (filled up with new users when short), timing
    /// the windows. Returns the growth, the member's and the loner's DNs and the nested
    /// groups' DNs.
    async fn grow(
        &self,
        conn: &mut LdapClient,
        mut pool: Vec<String>,
        filler_ou: &str,
        groups_ou: &str,
    ) -> Result<(Growth, String, String, Vec<String>)> {
        let (size, window, c) = (
            self.opts.group_size,
            self.opts.window,
            self.opts.concurrency,
        );
        let targets = [size / 100, size / 10, size];
        // The member starts the group; each target is reached, then a window added.
        let needed = targets.iter().fold(1, |m, &t| m.max(t) + window) - 1;
        let filler_users = needed.saturating_sub(pool.len());
        if filler_users > 0 {
            let spec = Arc::new(UserSpec {
                ou: filler_ou.to_string(),
                tag: 'f',
                groups: Vec::new(),
            });
            let bar = progress_bar(&self.opts, filler_users, "filler users");
            self.fan_out(c, &Job::Users(spec.clone()), 0..filler_users, &bar)
                .await?;
            bar.finish_and_clear();
            pool.extend((0..filler_users).map(|i| spec.dn(i)));
        }

        let member = format!("CN=bench-bind-member,{BENCH_OU}");
        let alone = format!("CN=bench-bind-alone,{BENCH_OU}");
        for (dn, account) in [(&member, "bench-member"), (&alone, "bench-alone")] {
            timed(
                conn,
                add_request(
                    dn,
                    vec![
                        attr("objectClass", &["user"]),
                        attr("sAMAccountName", &[account]),
                        attr("userAccountControl", &["544"]),
                    ],
                ),
                || format!("adding {dn}"),
            )
            .await?;
        }
        let dir = self.dir.clone();
        let dns = [member.clone(), alone.clone()];
        tokio::task::spawn_blocking(move || {
            dns.iter()
                .try_for_each(|dn| set_password(&dir, dn, USER_PW))
        })
        .await
        .context("the password task panicked")??;

        let big = format!("CN=bench-big-group,{groups_ou}");
        add_group(conn, &big, "bench-big-group", Some(&member)).await?;
        let mut nests: Vec<String> = Vec::with_capacity(NESTED_LEVELS);
        for k in 0..NESTED_LEVELS {
            let dn = format!("CN=bench-nest-{k:02},{groups_ou}");
            let below = nests.last().unwrap_or(&big);
            add_group(conn, &dn, &format!("bench-nest-{k:02}"), Some(below)).await?;
            nests.push(dn);
        }

        let job = Job::Members {
            group: Arc::from(big.as_str()),
            pool: Arc::new(pool),
        };
        let bar = progress_bar(&self.opts, needed, "growing the big group");
        let mut members = 1usize;
        let mut grow_seconds = 0.0;
        let mut windows = Vec::with_capacity(targets.len());
        for target in targets {
            if target > members {
                let (_, seconds) = self.fan_out(c, &job, members - 1..target - 1, &bar).await?;
                grow_seconds += seconds;
                members = target;
            }
            let (s, _) = self
                .fan_out(1, &job, members - 1..members - 1 + window, &bar)
                .await?;
            anyhow::ensure!(s.members.len() == window, "a window missed member adds");
            windows.push(MemberWindow {
                members_before: members,
                member_add: Latency::of(s.members),
            });
            members += window;
        }
        bar.finish_and_clear();
        say(&self.opts, &format!("the big group has {members} members"));
        Ok((
            Growth {
                group: big,
                members,
                filler_users,
                grow_connections: c,
                grow_seconds,
                windows,
            },
            member,
            alone,
            nests,
        ))
    }

    async fn lookups(
        &self,
        growth: &Growth,
        member: &str,
        alone: &str,
        nests: &[String],
    ) -> Result<Lookups> {
        let samples = self.opts.samples;
        let warm = (samples / 10).max(1);
        let mut plain = connect(&self.addr).await?;
        let mut binds = Vec::with_capacity(2);
        for dn in [member, alone] {
            let mut ns = Vec::with_capacity(samples);
            for k in 0..warm + samples {
                let t = Instant::now();
                let r = plain.simple_bind(dn, USER_PW).await?;
                let took = nanos(t);
                if let Some(e) = check(&format!("bind as {dn}"), &r) {
                    bail!(e);
                }
                if k >= warm {
                    ns.push(took);
                }
            }
            binds.push(Latency::of(ns));
        }
        unbind(plain).await;
        let [bind_member, bind_no_groups] = <[Latency; 2]>::try_from(binds)
            .map_err(|_| anyhow::anyhow!("two bind measurements expected"))?;

        let mut conn = admin(&self.addr).await?;
        let baseline = read_values(&mut conn, alone, "tokenGroups").await?.len();
        let mut expected = Vec::with_capacity(nests.len() + 1);
        for g in std::iter::once(&growth.group).chain(nests) {
            let sid = read_values(&mut conn, g, "objectSid").await?;
            expected.push(
                sid.into_iter()
                    .next()
                    .with_context(|| format!("{g} has no objectSid"))?,
            );
        }
        let want = baseline + expected.len();
        let mut ns = Vec::with_capacity(samples);
        for k in 0..warm + samples {
            let t = Instant::now();
            let sids = read_values(&mut conn, member, "tokenGroups").await?;
            let took = nanos(t);
            anyhow::ensure!(
                sids.len() == want && expected.iter().all(|s| sids.contains(s)),
                "tokenGroups of {member} holds {} SIDs, {want} expected (the {} of a user in \
                 no group, the big group and {} above it)",
                sids.len(),
                baseline,
                nests.len()
            );
            if k >= warm {
                ns.push(took);
            }
        }
        let token_groups = Lookup {
            what: format!(
                "tokenGroups of the member (base search; {want} SIDs: the big group, {} \
                 nested groups, and the {baseline} of a user in no group)",
                nests.len()
            ),
            results: want,
            latency: Latency::of(ns),
        };

        let groups_filter = format!("(member:{IN_CHAIN}:={member})");
        let groups = nests.len() + 1;
        let in_chain_groups = Lookup {
            what: format!(
                "(member:{IN_CHAIN}:=<the member>) from the domain: the big group and the {} \
                 above it",
                nests.len()
            ),
            results: groups,
            latency: count_search(&mut conn, &groups_filter, groups, warm, samples).await?,
        };
        let members_filter = format!("(memberOf:{IN_CHAIN}:={})", growth.group);
        let in_chain_members = Lookup {
            what: format!(
                "(memberOf:{IN_CHAIN}:=<the big group>) from the domain: all its members, no \
                 attributes"
            ),
            results: growth.members,
            latency: count_search(
                &mut conn,
                &members_filter,
                growth.members,
                0,
                BIG_SEARCH_RUNS,
            )
            .await?,
        };
        unbind(conn).await;
        let lookup = |what: &str, latency: Latency| Lookup {
            what: what.to_string(),
            results: 0,
            latency,
        };
        Ok(Lookups {
            bind_member: lookup(
                &format!(
                    "simple bind of a member of the {}-member group, itself {} levels deep",
                    thousands(growth.members as u64),
                    nests.len()
                ),
                bind_member,
            ),
            bind_no_groups: lookup("simple bind of a user in no group", bind_no_groups),
            token_groups,
            in_chain_groups,
            in_chain_members,
        })
    }
}

/// Times a subtree search of the domain for `filter` returning no attributes, which must
/// find exactly `want` entries each time; the first `warm` runs are not timed.
async fn count_search(
    conn: &mut LdapClient,
    filter: &str,
    want: usize,
    warm: usize,
    samples: usize,
) -> Result<Latency> {
    let parsed = Filter::parse(filter).with_context(|| format!("parsing {filter}"))?;
    let mut ns = Vec::with_capacity(samples);
    for k in 0..warm + samples {
        let t = Instant::now();
        let (n, r, _) = count_entries(
            conn,
            search_request(DOMAIN, parsed.clone(), &["1.1"]),
            Vec::new(),
        )
        .await?;
        let took = nanos(t);
        if let Some(e) = check(filter, &r) {
            bail!(e);
        }
        anyhow::ensure!(
            n as usize == want,
            "{filter} found {n} entries, {want} expected"
        );
        if k >= warm {
            ns.push(took);
        }
    }
    Ok(Latency::of(ns))
}

/// Sets a password as the server itself does for local tools: no encrypted connection
/// needed.
fn set_password(dir: &Directory<LmdbBackend>, dn: &str, password: &str) -> Result<()> {
    let req = Request {
        caller: Caller::System,
        encrypted: true,
        change: DirChange::Modify {
            sd_flags: None,
            dn: Dn::parse(dn).with_context(|| format!("parsing {dn}"))?,
            mods: vec![Modification {
                op: ModifyOp::Replace,
                attr: "unicodePwd".into(),
                values: vec![encode_unicode_pwd(password)],
            }],
            permissive: false,
        },
    };
    let mut w = dir.db().write().context("opening a write transaction")?;
    dir.apply(&mut w, &req)
        .with_context(|| format!("setting the password of {dn}"))?;
    w.commit().context("committing a password")?;
    dir.after_commit().context("after the password commit")?;
    Ok(())
}

/// A duration given in µs, in the unit that suits it.
fn duration(us: f64) -> String {
    if us >= 1e6 {
        format!("{} s", num(us / 1e6))
    } else if us >= 1e4 {
        format!("{} ms", num(us / 1e3))
    } else {
        format!("{} µs", num(us))
    }
}

fn thousands(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::with_capacity(digits.len() + digits.len() / 3);
    for (k, ch) in digits.chars().enumerate() {
        if k > 0 && (digits.len() - k).is_multiple_of(3) {
            out.push(',');
        }
        out.push(ch);
    }
    out
}

/// Renders the reports as the Markdown BENCHMARKS.md holds.
pub fn markdown(reports: &[Report]) -> String {
    let mut s = String::new();
    for r in reports {
        let p = &r.provisioning;
        let x = &r.schema_extension;
        s.push_str(&format!(
            "\n### Domain: {} ({} records at the end)\n\n{}.\nSchema: {}. Whole run: {} s.\n",
            r.realm,
            thousands(r.records),
            r.setup,
            p.schema_source,
            num(r.total_seconds)
        ));
        s.push_str("\n| measure | value |\n|---|---|\n");
        s.push_str(&format!(
            "| provisioning (`Directory::provision`, {} objects, {} of them schema definitions) | {} s |\n",
            thousands(p.entries as u64),
            thousands(p.schema_objects as u64),
            num(p.seconds)
        ));
        s.push_str(&format!(
            "| schema extension over LDAP: {} attributeSchema + {} classSchema adds, schemaUpdateNow, an object using them | {} s |\n",
            thousands(x.attributes as u64),
            thousands(x.classes as u64),
            num(x.total_seconds)
        ));
        s.push_str(&format!(
            "| … of which the adds / schemaUpdateNow / the object, read back and searched | {} s / {} / {} |\n",
            num(x.adds_seconds),
            duration(x.update_now_seconds * 1e6),
            duration(x.proof_seconds * 1e6)
        ));
        s.push_str(&format!(
            "| one attributeSchema add, median / p99 | {} / {} |\n| one classSchema add, median / p99 | {} / {} |\n",
            duration(x.attribute_add.median_us),
            duration(x.attribute_add.p99_us),
            duration(x.class_add.median_us),
            duration(x.class_add.p99_us)
        ));

        s.push_str(
            "\n| users added (each joins 1–4 of 40 groups) | connections | memberships | time | users/s | memberships/s | LDAP ops/s | user add median / p99 | member add median / p99 |\n\
             |---|---|---|---|---|---|---|---|---|\n",
        );
        for u in &r.user_runs {
            s.push_str(&format!(
                "| {} | {} | {} | {} s | {} | {} | {} | {} / {} | {} / {} |\n",
                thousands(u.users as u64),
                u.connections,
                thousands(u.memberships),
                num(u.seconds),
                num(u.users_per_sec),
                num(u.memberships_per_sec),
                num(u.ops_per_sec),
                duration(u.user_add.median_us),
                duration(u.user_add.p99_us),
                duration(u.member_add.median_us),
                duration(u.member_add.p99_us)
            ));
        }

        let g = &r.growth;
        s.push_str(
            "\n| one `member` add, 1 connection, group at | adds timed | median | p99 | mean | max |\n\
             |---|---|---|---|---|---|\n"
        );
        for w in &g.windows {
            s.push_str(&format!(
                "| {} members | {} | {} | {} | {} | {} |\n",
                thousands(w.members_before as u64),
                w.member_add.samples,
                duration(w.member_add.median_us),
                duration(w.member_add.p99_us),
                duration(w.member_add.mean_us),
                duration(w.member_add.max_us)
            ));
        }
        s.push_str(&format!(
            "\nThe group ended with {} members; the untimed growth between the windows took {} s on {} connections{}.\n",
            thousands(g.members as u64),
            num(g.grow_seconds),
            g.grow_connections,
            if g.filler_users > 0 {
                format!(" ({} users added only to fill it)", thousands(g.filler_users as u64))
            } else {
                String::new()
            }
        ));

        let l = &r.lookups;
        s.push_str(
            "\n| lookup, 1 connection | results | timed | median | p99 |\n|---|---|---|---|---|\n",
        );
        for k in [
            &l.bind_member,
            &l.bind_no_groups,
            &l.token_groups,
            &l.in_chain_groups,
            &l.in_chain_members,
        ] {
            s.push_str(&format!(
                "| {} | {} | {} | {} | {} |\n",
                k.what.replace('|', "\\|"),
                if k.results > 0 {
                    thousands(k.results as u64)
                } else {
                    "–".to_string()
                },
                k.latency.samples,
                duration(k.latency.median_us),
                duration(k.latency.p99_us)
            ));
        }
    }
    s
}
